"""The set-valued sensitive attribute: parsing, profiling and encoding (Gong et al. 2016's RT data).

A record's set arrives in one of three layouts (``sensitive.layout``):

* ``delimited``: a string of items joined by ``sensitive.separator`` (CSV);
* ``array``: an ``array<string>`` column (Parquet, ORC);
* ``long``: a separate table with one row per (record, item), joined to the input by a
  key (:func:`join_long_items`; the join gives the ``array`` layout).

Decided behaviours, each tested:

* items are trimmed; an empty item (``a||b``, a trailing separator) is no item, nor is a
  null element of an ``array``;
* an empty string or an empty array is the **empty set** (the record holds no item), a
  value of its own; so is a null of the ``delimited`` layout (Spark's CSV reader reads
  an empty field as null) and a record without any item row in the ``long`` layout; a
  missing-value token other than the empty string (``input.missing_values``, e.g.
  ``?``), or a null array, is a **missing** set: the record is dropped and counted with
  the rows holding a missing value (``input.on_missing``);
* an item listed twice in one set counts once (Gong et al. 2016, section 2: the items of a
  transaction do not repeat); the job reports how many such duplicates it removed;
* an item absent from the taxonomy (or an inner node of it: items are its leaves) fails
  the job naming the column and the item, unless ``sensitive.on_unknown_item: drop``
  removes it from its set (counted); a record whose every item was removed is
  suppressed (``suppressed_unknown_items``), never published as the empty set, which
  would state that the record holds no item.

Encoded, a set is its sorted, distinct leaf ids packed as little-endian int32 bytes
(:func:`pack_sets`, a ``binary`` column :data:`ITEMS`): one buffer per record, decoded
for a whole block by one ``frombuffer`` (:func:`decode_sets`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sparkanon.attributes.itemsets import ItemSets, distinct_pairs

ITEMS = "_items"
"""Encoded column (``binary``): a record's leaf ids, sorted, distinct, packed int32."""

ITEM_STATS = (
    "item",
    "item_unknown",
    "empty_sets",
    "emptied_sets",
    "duplicate_items",
    "set_items",
)
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


def item_occurrences(
    values: pd.Series, spec: ItemsSpec
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Every item occurrence of non-missing sets as ``(record, label)``, empty items left out.

    Vectorised with pyarrow: the column's lists are flattened and dictionary-encoded
    once; trimming and the empty-item test then run on the distinct strings only (a
    batch of 10,000 baskets holds 1.26M occurrences of 299 categories), never per
    occurrence.

    Args:
        values: the set column of records whose set is not missing (nulls of the
            ``delimited`` and ``long`` layouts count as empty sets).
        spec: the layout.

    Returns:
        ``(record, label, labels)``: per occurrence (duplicates kept, record order) the
        record's position in ``values`` and the index of its trimmed item in
        ``labels``, the distinct trimmed items (none empty).
    """
    lists = _item_lists(values, spec)
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False)
    record = np.repeat(np.arange(len(values), dtype=np.int64), lengths.astype(np.int64))
    flat = pc.dictionary_encode(pc.list_flatten(lists))
    raw = flat.indices
    if raw.null_count:  # a null item is no item
        raw = pc.fill_null(raw, -1)
    trimmed = pc.dictionary_encode(pc.utf8_trim_whitespace(flat.dictionary))
    labels: list[str] = trimmed.dictionary.to_pylist()
    label_of_raw = trimmed.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    if "" in labels:  # an empty item is no item: drop it, renumber the others
        empty = labels.index("")
        label_of_raw = np.where(
            label_of_raw == empty, -1, label_of_raw - (label_of_raw > empty)
        ).astype(np.int32)
        labels.pop(empty)
    # Index -1 (a null item) takes the appended -1.
    label = np.append(label_of_raw, np.int32(-1))[raw.to_numpy(zero_copy_only=False)]
    if label.size and int(label.min()) < 0:
        keep = label >= 0
        record, label = record[keep], label[keep]
    return record, label.astype(np.int64), labels


def _item_lists(values: pd.Series, spec: ItemsSpec) -> pa.ListArray:
    """The set column as a pyarrow list array of strings (a null is an empty list)."""
    if spec.layout == "delimited":
        text = pa.array(values.to_numpy(dtype=object), type=pa.string(), from_pandas=True)
        return pc.split_pattern(pc.fill_null(text, ""), spec.separator)
    raw = [None if _is_nan(v) else v for v in values.to_numpy(dtype=object)]
    lists = pa.array(raw, type=pa.list_(pa.string()), from_pandas=True)
    if lists.null_count:
        lists = pc.if_else(pc.is_null(lists), pa.scalar([], type=lists.type), lists)
    return lists


def _is_nan(v: object) -> bool:
    return isinstance(v, float) and np.isnan(v)


def pack_sets(record: np.ndarray, ids: np.ndarray, n: int) -> np.ndarray:
    """Each record's sorted, distinct ids packed as little-endian int32 bytes.

    Args:
        record: the record of each id (positions ``0 .. n-1``).
        ids: the ids (leaf or node ids), any order, repeats allowed.
        n: the number of records.

    Returns:
        An object array of ``n`` ``bytes`` (``b""`` for the empty set).
    """
    record, ids = distinct_pairs(record, ids, n)
    counts = np.bincount(record, minlength=n)
    ends = np.cumsum(counts) * 4
    starts = ends - counts * 4
    return _slices(ids.astype("<i4").tobytes(), starts, ends)


def _slices(buffer: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``buffer[starts[i]:ends[i]]`` for every ``i``, as an object array of bytes."""
    out = np.empty(len(starts), dtype=object)
    out[:] = [buffer[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    return out


def item_stats(values: pd.Series, spec: ItemsSpec) -> list[tuple[str, str | None, int]]:
    """Per batch statistics of the set column, mergeable by summing ``n``.

    Every count but ``item_unknown`` is taken after the unknown items are removed, so
    it describes the sets the job publishes.

    Args:
        values: the set column of the usable records (no missing set).
        spec: the layout and the known items.

    Returns:
        ``(stat, value, n)`` rows: ``item`` (records holding the item, once per
        record), ``item_unknown`` (records holding an item absent from the
        taxonomy), ``empty_sets`` (records whose set is empty in the input),
        ``emptied_sets`` (records whose every item is unknown: suppressed when
        unknown items are dropped), ``duplicate_items`` (repeated occurrences of
        known items removed) and ``set_items`` (distinct known items over all records).
    """
    record, label, labels = item_occurrences(values, spec)
    n = len(values)
    known_label = np.array([spec.known is None or item in spec.known for item in labels], bool)
    pair_record, pair_label = distinct_pairs(record, label, n)
    out: list[tuple[str, str | None, int]] = []
    per_item = np.bincount(pair_label, minlength=len(labels))
    for item, known, count in zip(labels, known_label.tolist(), per_item.tolist(), strict=True):
        if count:
            out.append(("item" if known else "item_unknown", str(item), int(count)))
    holding = np.bincount(pair_record, minlength=n) > 0
    known_pair = known_label[pair_label]
    known_occurrences = int(known_label[label].sum())
    known_pairs = int(known_pair.sum())
    out.append(("empty_sets", None, int((~holding).sum())))
    out.append(("emptied_sets", None, int(emptied_records(pair_record, known_pair, n).sum())))
    out.append(("duplicate_items", None, known_occurrences - known_pairs))
    out.append(("set_items", None, known_pairs))
    return out


def emptied_records(record: np.ndarray, known: np.ndarray, n: int) -> np.ndarray:
    """Whether each of ``n`` records holds items but none of them known.

    Args:
        record: the record of each item occurrence.
        known: whether each occurrence's item is known.
        n: the number of records.
    """
    holding = np.bincount(record, minlength=n) > 0
    holding_known = np.bincount(record[known], minlength=n) > 0
    return holding & ~holding_known


SEPARATOR_GUESSES = (",", ";", "|", "/", ":", "\t", " ")
"""Separators an unknown item is tried against when the configured one may be wrong."""


def separator_guess(item: str, separator: str, known: frozenset[str]) -> str | None:
    """Another separator splitting ``item`` into known items only, or ``None``.

    An unknown item that is several known items joined by another character is a
    sign that ``sensitive.separator`` is wrong (every set then reads as one item).
    """
    for guess in SEPARATOR_GUESSES:
        if guess == separator or guess not in item:
            continue
        parts = [part.strip() for part in item.split(guess)]
        parts = [part for part in parts if part]
        if len(parts) > 1 and all(part in known for part in parts):
            return guess
    return None


def separator_hint(
    unknown: Sequence[str], spec: ItemsSpec, any_known: bool, limit: int = 100
) -> str:
    """A hint that ``sensitive.separator`` may be wrong, or ``""``.

    Given when an unknown item splits into known items at another separator
    (:func:`separator_guess`, tried on the first ``limit`` unknown items), or when no
    item of the data is known at all; only for the ``delimited`` layout.

    Args:
        unknown: the distinct unknown items.
        spec: the layout, the separator and the known items.
        any_known: whether the data holds any known item.
        limit: unknown items tried.
    """
    if spec.layout != "delimited" or spec.known is None:
        return ""
    sep = spec.separator
    for item in sorted(unknown)[:limit]:
        guess = separator_guess(item, sep, spec.known)
        if guess is not None:
            return (
                f"; {item!r} splits at {guess!r} into items of the taxonomy: is "
                f"sensitive.separator ({sep!r}) the separator of the data?"
            )
    if not any_known:
        return (
            f"; no item of the data is in the taxonomy: is sensitive.separator ({sep!r}) the "
            "separator of the data?"
        )
    return ""


def make_set_encoder(
    codes: Mapping[str, int], spec: ItemsSpec
) -> Callable[[pd.Series], tuple[np.ndarray, np.ndarray]]:
    """A function from a batch's set column to each record's packed leaf ids.

    Args:
        codes: item -> leaf id (items absent from it are dropped: the profile
            already failed the job on them unless ``on_unknown_item: drop``).
        spec: the layout.

    Returns:
        ``encode(values) -> (packed, emptied)``: each record's sorted, distinct leaf
        ids (:func:`pack_sets`), and whether the record held items but none known
        (:func:`emptied_records`: the record is suppressed, not published empty).
    """

    def encode(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        record, label, labels = item_occurrences(values, spec)
        leaf_of_label = np.array([codes.get(item, -1) for item in labels], dtype=np.int64)
        leaf = leaf_of_label[label]
        known = leaf >= 0
        packed = pack_sets(record[known], leaf[known], len(values))
        return packed, emptied_records(record, known, len(values))

    return encode


def decode_sets(encoded: pd.Series) -> ItemSets:
    """The :class:`ItemSets` of a packed column (:func:`pack_sets`)."""
    blobs = [b"" if v is None else bytes(v) for v in encoded.to_numpy(dtype=object)]
    lengths = np.fromiter((len(b) // 4 for b in blobs), dtype=np.int64, count=len(blobs))
    offsets = np.zeros(len(blobs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    nodes = np.frombuffer(b"".join(blobs), dtype="<i4").astype(np.int64)
    return ItemSets(offsets=offsets, nodes=nodes)


def pack_item_sets(sets: ItemSets) -> np.ndarray:
    """:func:`pack_sets` of an :class:`ItemSets` (already sorted and distinct per record)."""
    bounds = sets.offsets * 4
    return _slices(sets.nodes.astype("<i4").tobytes(), bounds[:-1], bounds[1:])


@dataclass(frozen=True)
class ItemProfile:
    """What the profile learned about the set column of the usable records.

    Attributes:
        records_per_item: records holding each known item.
        unknown: records holding each item absent from the taxonomy.
        empty_sets: records whose set is empty in the input.
        emptied_sets: records whose every item is absent from the taxonomy (suppressed
            when such items are dropped).
        duplicate_items: repeated occurrences of known items removed from sets.
        set_items: distinct known items summed over all records.
    """

    records_per_item: dict[str, int]
    unknown: dict[str, int]
    empty_sets: int
    emptied_sets: int
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
            emptied_sets=total("emptied_sets"),
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
