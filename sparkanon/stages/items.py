"""The set-valued sensitive attribute: parsing, profiling and encoding (seed 002's RT data).

A record's set arrives in one of three layouts (``sensitive.layout``):

* ``delimited``: a string of items joined by ``sensitive.separator`` (CSV);
* ``array``: an ``array<string>`` column (Parquet, ORC);
* ``long``: a separate table with one row per (record, item), joined to the input by a
  key (:func:`join_long_items`; the join gives the ``array`` layout).

Decided behaviours, each tested:

* items are trimmed; an empty item (``a||b``, a trailing separator) is no item;
* an empty string or an empty array is the **empty set** (the record holds no item), a
  value of its own; so is a null of the ``delimited`` layout (Spark's CSV reader reads
  an empty field as null) and a record without any item row in the ``long`` layout; a
  missing-value token other than the empty string (``input.missing_values``, e.g.
  ``?``), or a null array, is a **missing** set: the record is dropped and counted with
  the rows holding a missing value (``input.on_missing``);
* an item listed twice in one set counts once (seed 002 section 2: the items of a
  transaction do not repeat); the job reports how many such duplicates it removed;
* an item absent from the taxonomy fails the job naming the column and the item,
  unless ``sensitive.on_unknown_item: drop`` removes it from its set (counted; a set
  left with no item is the empty set).

Encoded, a set is the text of its sorted, distinct leaf ids joined by spaces
(:func:`sparkanon.attributes.itemsets.set_key`), in the column :data:`ITEMS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sparkanon.attributes.itemsets import ItemSets

ITEMS = "_items"
"""Encoded column: a record's leaf ids, sorted, distinct, joined by spaces."""

ITEM_STATS = ("item", "item_unknown", "empty_sets", "duplicate_items", "set_items")
"""Statistics the profile adds for the set column (see :func:`item_stats`)."""


@dataclass(frozen=True)
class ItemsSpec:
    """How to read the set column.

    Attributes:
        column: the set column.
        layout: ``delimited`` or ``array`` (the ``long`` layout arrives as an array).
        separator: the item separator of the ``delimited`` layout.
        known: the taxonomy's leaves; ``None`` when the taxonomy is generated over
            the items the data holds (every item is known).
        missing_tokens: tokens that make a whole set missing (the empty string is
            never one: it is the empty set).
        empty_when_null: a null is the empty set: the ``delimited`` layout (Spark's CSV
            reader turns an empty field into a null, so an empty string and a null
            cannot be told apart) and the ``long`` layout (no item rows).
    """

    column: str
    layout: str
    separator: str
    known: frozenset[str] | None
    missing_tokens: frozenset[str]
    empty_when_null: bool = False


def set_missing(values: pd.Series, spec: ItemsSpec) -> np.ndarray:
    """Whether each record's set is missing (null, or a missing token of the delimited layout).

    A null is the empty set instead when ``spec.empty_when_null`` (the delimited and long
    layouts).
    """
    if spec.empty_when_null:
        missing = np.zeros(len(values), dtype=bool)
    else:
        missing = values.isna().to_numpy(dtype=bool)
    if spec.layout == "delimited" and spec.missing_tokens:
        text = values.astype("string").str.strip()
        missing |= text.isin(list(spec.missing_tokens)).to_numpy(dtype=bool, na_value=False)
    return missing


def exploded_items(values: pd.Series, spec: ItemsSpec) -> tuple[np.ndarray, np.ndarray]:
    """Every (record position, trimmed item) of non-missing sets, empty items left out.

    Args:
        values: the set column of records whose set is not missing (nulls of the
            ``long`` layout count as empty sets).
        spec: the layout.

    Returns:
        ``(record, item)``: the position of the record in ``values`` and the item,
        one entry per item occurrence (duplicates kept), in record order.
    """
    positions = pd.Series(values.to_numpy(), index=np.arange(len(values)), dtype=object)
    if spec.layout == "delimited":
        lists = positions.fillna("").astype(str).str.split(spec.separator, regex=False)
    else:
        lists = positions.map(lambda v: [] if v is None or _is_nan(v) else list(v))
    flat = lists.explode()
    flat = flat[flat.notna()]
    items = flat.astype(str).str.strip()
    keep = (items != "").to_numpy(dtype=bool)
    return flat.index.to_numpy(dtype=np.int64)[keep], items.to_numpy(dtype=object)[keep]


def _is_nan(v: object) -> bool:
    return isinstance(v, float) and np.isnan(v)


def item_stats(values: pd.Series, spec: ItemsSpec) -> list[tuple[str, str | None, int]]:
    """Per batch statistics of the set column, mergeable by summing ``n``.

    Args:
        values: the set column of the usable records (no missing set).
        spec: the layout and the known items.

    Returns:
        ``(stat, value, n)`` rows: ``item`` (records holding the item, once per
        record), ``item_unknown`` (records holding an item absent from the
        taxonomy), ``empty_sets`` (records whose set is empty, before dropping
        unknown items), ``duplicate_items`` (repeated occurrences removed) and
        ``set_items`` (distinct items over all records).
    """
    record, items = exploded_items(values, spec)
    frame = pd.DataFrame({"r": record, "i": items})
    distinct = frame.drop_duplicates()
    out: list[tuple[str, str | None, int]] = []
    counts = distinct["i"].value_counts()
    for item, n in counts.items():
        known = spec.known is None or item in spec.known
        out.append(("item" if known else "item_unknown", str(item), int(n)))
    holding = np.zeros(len(values), dtype=bool)
    holding[record] = True
    out.append(("empty_sets", None, int((~holding).sum())))
    out.append(("duplicate_items", None, int(len(frame) - len(distinct))))
    out.append(("set_items", None, int(len(distinct))))
    return out


def make_set_encoder(
    codes: Mapping[str, int], spec: ItemsSpec
) -> Callable[[pd.Series], np.ndarray]:
    """A function from a batch's set column to the encoded text of each record's leaf ids.

    Args:
        codes: item -> leaf id (items absent from it are dropped: the profile
            already failed the job on them unless ``on_unknown_item: drop``).
        spec: the layout.

    Returns:
        ``encode(values) -> array of str``: each record's sorted, distinct leaf ids
        joined by spaces (``""`` for the empty set).
    """
    table = pd.Series(codes, dtype=np.int64)

    def encode(values: pd.Series) -> np.ndarray:
        record, items = exploded_items(values, spec)
        ids = pd.Series(items).map(table).to_numpy(dtype=float, na_value=np.nan)
        known = ~np.isnan(ids)
        pairs = pd.DataFrame({"r": record[known], "i": ids[known].astype(np.int64)})
        pairs = pairs.drop_duplicates().sort_values(["r", "i"], kind="stable")
        out = np.full(len(values), "", dtype=object)
        if len(pairs):
            joined = pairs["i"].astype(str).groupby(pairs["r"].to_numpy(), sort=True).agg(" ".join)
            out[joined.index.to_numpy(dtype=np.int64)] = joined.to_numpy(dtype=object)
        return out

    return encode


def decode_sets(encoded: pd.Series) -> ItemSets:
    """The :class:`ItemSets` of an encoded column (the text of space-joined ids)."""
    text = encoded.fillna("").astype(str).to_numpy(dtype=object)
    rows = [np.array(t.split(), dtype=np.int64) if t else np.zeros(0, np.int64) for t in text]
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    nodes = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    return ItemSets(offsets=offsets, nodes=nodes)


@dataclass(frozen=True)
class ItemProfile:
    """What the profile learned about the set column of the usable records.

    Attributes:
        records_per_item: records holding each known item.
        unknown: records holding each item absent from the taxonomy.
        empty_sets: records whose set is empty (before dropping unknown items).
        duplicate_items: repeated occurrences removed from sets.
        set_items: distinct items summed over all records.
    """

    records_per_item: dict[str, int]
    unknown: dict[str, int]
    empty_sets: int
    duplicate_items: int
    set_items: int

    @classmethod
    def of(cls, stats: pd.DataFrame, column: str) -> ItemProfile:
        """From the merged profile statistics (``stat``, ``column``, ``value``, ``n``)."""
        mine = stats[stats["column"] == column]

        def per_value(stat: str) -> dict[str, int]:
            rows = mine[mine["stat"] == stat]
            return {str(v): int(n) for v, n in zip(rows["value"], rows["n"], strict=True)}

        def total(stat: str) -> int:
            return int(mine.loc[mine["stat"] == stat, "n"].sum())

        return cls(
            records_per_item=per_value("item"),
            unknown=per_value("item_unknown"),
            empty_sets=total("empty_sets"),
            duplicate_items=total("duplicate_items"),
            set_items=total("set_items"),
        )

    def describe(self) -> dict[str, int]:
        """Counts for ``metrics.json`` (no item is named)."""
        return {
            "distinct_items": len(self.records_per_item),
            "items_in_sets": self.set_items,
            "empty_sets": self.empty_sets,
            "duplicate_items_removed": self.duplicate_items,
            "unknown_item_occurrences_dropped": sum(self.unknown.values()),
        }
