"""Stages ``publish`` and ``verify`` of a relational-transaction job: the RT and TT tables.

Gong et al. 2016 (section 3.2, Table 4) publishes two tables joined by the group id, the lossy
decomposition of Anatomy (Xiao and Tao 2006; Gong et al. 2016, definition 5):

* ``rt``: the exact relational quasi-identifiers, the ``keep`` columns and ``group_id``
  (no row id: the tables join on the group, and a row number would be the record's
  position in the input);
* ``tt``: ``group_id``, the published (generalized) set, its items' labels joined by
  the input's separator, and ``count``, the records of the group carrying it.

The published ``group_id`` is a random per-release id: the job's group number under the
run key's keyed permutation of the 64-bit integers (:func:`published_group_ids`, stream
:data:`~sparkanon.randomness.streams.RELEASE_IDS`), one-to-one, so distinct groups keep
distinct ids while the ids tell nothing of the groups' numbering (which follows the
blocks, hence the input). Both tables are written in a keyed row order
(:func:`~sparkanon.stages.publish.staged`) under the temporary output and read back;
verification then checks the bytes that will be committed, with aggregations only
(:func:`verify_rt`):

1. every TBucket (all TT rows of one published set, over every group) holds at least
   ``k`` records (definition 8 (1));
2. in every group the most frequent published set occurs at most ``|G| / l`` times,
   i.e. ``max count * l <= |G|`` in integers (definition 8 (2), the frequency reading);
3. the RT table has, for every group, as many records as the group's TT counts sum to,
   and no RT record names a group TT lacks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sparkanon.attributes.dates import TemporalFormat, date_values, timestamp_values
from sparkanon.attributes.itemsets import ItemTree
from sparkanon.attributes.schema import CLASS, RID
from sparkanon.attributes.text import trimmed_text
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.families.transaction.cluster import GSET
from sparkanon.models.kl_diversity import KLDiversity
from sparkanon.publications import Publication
from sparkanon.publications.kept import KeptColumns, join_kept
from sparkanon.randomness import RunKey
from sparkanon.randomness.streams import RELEASE_IDS
from sparkanon.stages._common import StageTimer, one_row
from sparkanon.stages.items import decode_sets
from sparkanon.stages.publish import staged

RT_TABLE = "rt"
"""The relational table's name (``<output>/rt``)."""
TT_TABLE = "tt"
"""The transaction table's name (``<output>/tt``)."""
GROUP_ID = "group_id"
"""RT and TT column: the group."""
COUNT = "count"
"""TT column: records of the group carrying the set."""
RT_KIND_TYPES = {"continuous": "double", "date": "date", "timestamp": "timestamp"}
"""Published RT type of a quasi-identifier kind (``string`` for the kinds not listed)."""


def rt_column_types(
    passthrough_types: Sequence[tuple[str, str]], kinds: Mapping[str, str]
) -> list[tuple[str, str]]:
    """The published types of RT's exact columns: one type per kind, whatever the input format.

    A CSV input reads every column as text where Parquet keeps its numbers, so the input
    type would make one column a string in one run and a number in another. A continuous
    quasi-identifier is published as ``double``, any other quasi-identifier as
    ``string``; a ``keep`` column (no kind) keeps its input type.

    Args:
        passthrough_types: the exact columns with their input types.
        kinds: the kind of every quasi-identifier.
    """
    out = []
    for column, dtype in passthrough_types:
        kind = kinds.get(column)
        out.append((column, dtype if kind is None else RT_KIND_TYPES.get(kind, "string")))
    return out


def published_values(values: pd.Series, dtype: str, reader: TemporalFormat | None = None) -> Any:
    """An exact column's values in its published type (:func:`rt_column_types`).

    ``double``: the numbers (text is trimmed and parsed; the profile has checked it is
    numeric); ``date`` and ``timestamp``: the values read by the column's ``reader`` (its
    format and zone) as dates and UTC instants, whatever the input held (text, dates,
    datetimes); ``string``: the trimmed text (how the job read the value); any other type
    is the input's own, kept as it is.
    """
    if dtype == "double":
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            return values.to_numpy(dtype=float, na_value=np.nan)
        numbers = pd.to_numeric(trimmed_text(values), errors="raise").astype("Float64")
        return numbers.to_numpy(dtype=float, na_value=np.nan)
    if dtype in ("date", "timestamp"):
        reader = reader or TemporalFormat(dtype == "date")
        epoch, invalid = reader.parse(values)
        if dtype == "date":
            return np.where(invalid, None, date_values(epoch))
        return pd.Series(timestamp_values(epoch)).where(~invalid, pd.NaT)
    if dtype == "string":
        return trimmed_text(values).to_numpy(dtype=object, na_value=None)
    return values.to_numpy()


def published_group_ids(key: RunKey, groups: np.ndarray) -> np.ndarray:
    """The published ids of the job's group numbers: a keyed permutation of the 64-bit integers.

    One-to-one (:meth:`RunKey.permute`), so RT and TT, each mapping its own rows, agree
    on every group's id and no two groups share one.
    """
    return key.permute(RELEASE_IDS, np.asarray(groups, dtype=np.int64))


def make_rt_rows_fn(
    columns: Sequence[tuple[str, str]],
    key: RunKey,
    readers: Mapping[str, TemporalFormat] | None = None,
) -> BatchFn:
    """Published RT rows from placed rows: the row id (internal), exact columns, group id.

    The row id (``_rid``) only joins the kept columns and is dropped before the write.

    Args:
        columns: the exact columns with their published types (:func:`rt_column_types`).
        key: the run key (the published group ids, :func:`published_group_ids`).
        readers: how each date and timestamp column's values are read.
    """
    readers = dict(readers or {})

    def rows(batch: pd.DataFrame) -> pd.DataFrame:
        out: dict[str, Any] = {RID: batch[RID].to_numpy(dtype=np.int64)}
        for c, dtype in columns:
            out[c] = published_values(batch[c], dtype, readers.get(c))
        out[GROUP_ID] = published_group_ids(key, batch[CLASS].to_numpy(dtype=np.int64))
        return pd.DataFrame(out)

    return rows


def make_tt_rows_fn(tree: ItemTree, set_column: str, sep: str, key: RunKey) -> BatchFn:
    """TT rows from ``(group, packed node ids, count)``: the set's node labels joined by ``sep``.

    Vectorised: the labels are taken and joined by pyarrow, no Python loop over rows. The
    group is published by its id (:func:`published_group_ids` under ``key``).
    """
    labels = pa.array(list(tree.labels), type=pa.string())

    def rows(batch: pd.DataFrame) -> pd.DataFrame:
        sets = decode_sets(batch[GSET])
        offsets = pa.array(sets.offsets.astype(np.int32), type=pa.int32())
        named = pa.ListArray.from_arrays(offsets, labels.take(pa.array(sets.nodes)))
        text = pc.binary_join(named, sep).to_numpy(zero_copy_only=False)
        return pd.DataFrame(
            {
                GROUP_ID: published_group_ids(key, batch[CLASS].to_numpy(dtype=np.int64)),
                set_column: np.asarray(text, dtype=object),
                COUNT: batch[COUNT].to_numpy(dtype=np.int64),
            }
        )

    return rows


def publish_rt(
    engine: Engine,
    placed: Table,
    passthrough_types: Sequence[tuple[str, str]],
    tree: ItemTree,
    set_column: str,
    sep: str,
    timer: StageTimer,
    tmp_path: str | None,
    fmt: str,
    key: RunKey,
    kept: KeptColumns | None = None,
    readers: Mapping[str, TemporalFormat] | None = None,
) -> Publication:
    """The RT and TT tables of the placed records, in keyed order, written and read back.

    Args:
        engine: the engine.
        placed: the records with a group (``_class >= 0``) and their published set.
        passthrough_types: the exact columns RT publishes, with their published types
            (:func:`rt_column_types`).
        tree: the item taxonomy (labels of the published nodes).
        set_column: the set column's name, reused in TT.
        sep: the separator joining a published set's labels.
        timer: the stage timer.
        tmp_path: the temporary output (``None``: kept in memory).
        fmt: ``parquet`` or ``csv``.
        key: the run key: the published group ids and the tables' row order.
        kept: the kept columns, joined to RT by the row id after its batch function
            (placed before ``group_id``).
        readers: how each date and timestamp quasi-identifier's values are read.
    """
    with timer.stage("publish"):
        names = [c for c, _ in passthrough_types]
        rt_cols = [(RID, "long"), *passthrough_types, (GROUP_ID, "long")]
        rows = engine.map_batches(
            engine.select(placed, [RID, *names, CLASS]),
            make_rt_rows_fn(passthrough_types, key, readers),
            rt_cols,
        )
        kept = kept or KeptColumns()
        joined = join_kept(engine, rows, kept, RID, [*names, GROUP_ID])
        rt = engine.select(joined, [*names, *kept.names, GROUP_ID])
        tally = engine.aggregate(placed, [CLASS, GSET], {COUNT: ("count", RID)})
        tt_cols = [(GROUP_ID, "long"), (set_column, "string"), (COUNT, "long")]
        tt = engine.map_batches(tally, make_tt_rows_fn(tree, set_column, sep, key), tt_cols)
        publication = Publication(
            tables={RT_TABLE: rt, TT_TABLE: tt},
            class_table=RT_TABLE,
            class_key=[GROUP_ID],
            sensitive=set_column,
        )
        return staged(engine, publication, tmp_path, fmt, key)


def verify_rt(
    engine: Engine,
    publication: Publication,
    set_column: str,
    model: KLDiversity,
) -> dict[str, Any]:
    """Check the committed bytes against (k,l)-diversity with aggregations only.

    The verdicts are the model's own tests (:meth:`KLDiversity.buckets_satisfied` per
    TBucket, :meth:`KLDiversity.groups_satisfied` per group), run on the aggregates.

    Returns:
        ``rows`` (RT records), ``groups``, ``tbuckets``, ``violations`` (the sum of
        the three kinds below), ``small_tbuckets`` (fewer than ``k`` records),
        ``frequent_groups`` (a set above ``|G| / l``), ``inconsistent_groups`` (RT and
        TT disagree on the group's size), ``min_tbucket`` and ``max_frequency_ratio``.
    """
    rt, tt = publication.tables[RT_TABLE], publication.tables[TT_TABLE]
    # CSV tables read back as text: counts become numbers, ids stay as read (both tables).
    tt_types = dict(engine.schema_of(tt))

    def numeric_counts(batch: pd.DataFrame) -> pd.DataFrame:
        return batch.assign(**{COUNT: pd.to_numeric(batch[COUNT]).astype(np.int64)})

    if tt_types[COUNT] != "long":  # Parquet keeps the counts' type: no pass over TT for it
        tt = engine.map_batches(tt, numeric_counts, [*tt_types.items()][:2] + [(COUNT, "long")])
    buckets = engine.aggregate(tt, [set_column], {"n": ("sum", COUNT)})
    bucket_row = one_row(engine, buckets, {"tbuckets": ("count", "n"), "min_tbucket": ("min", "n")})

    def judge_buckets(batch: pd.DataFrame) -> pd.DataFrame:
        ok = model.buckets_satisfied(batch["n"].to_numpy(dtype=np.int64))
        return pd.DataFrame({"small": (~ok).astype(np.int64)})

    small_row = one_row(
        engine,
        engine.map_batches(buckets, judge_buckets, [("small", "long")]),
        {"small": ("sum", "small")},
    )
    small = int(small_row["small"])
    groups = engine.aggregate(tt, [GROUP_ID], {"size": ("sum", COUNT), "top": ("max", COUNT)})
    rt_sizes = engine.aggregate(rt, [GROUP_ID], {"rt_size": ("count", GROUP_ID)})
    joined = engine.join(groups, rt_sizes, [GROUP_ID], how="outer")

    def judge(batch: pd.DataFrame) -> pd.DataFrame:
        size = batch["size"].to_numpy(dtype=float, na_value=np.nan)
        top = batch["top"].to_numpy(dtype=float, na_value=np.nan)
        rt_size = batch["rt_size"].to_numpy(dtype=float, na_value=np.nan)
        # A group TT lacks has no size: as an empty group, it fails the frequency test.
        ok = model.groups_satisfied(np.nan_to_num(size, nan=0.0), np.nan_to_num(top, nan=0.0))
        frequent = ~ok
        inconsistent = ~(rt_size == size)
        ratio = np.where(size > 0, top / np.where(size > 0, size, 1), np.nan)
        return pd.DataFrame(
            {
                "frequent": frequent.astype(np.int64),
                "inconsistent": inconsistent.astype(np.int64),
                "ratio": ratio,
            }
        )

    judged = engine.map_batches(
        joined, judge, [("frequent", "long"), ("inconsistent", "long"), ("ratio", "double")]
    )
    group_row = one_row(
        engine,
        judged,
        {
            "groups": ("count", "frequent"),
            "frequent_groups": ("sum", "frequent"),
            "inconsistent_groups": ("sum", "inconsistent"),
            "max_frequency_ratio": ("max", "ratio"),
        },
    )
    rows = engine.count(rt)
    frequent = int(group_row["frequent_groups"])
    inconsistent = int(group_row["inconsistent_groups"])
    return {
        "rows": rows,
        "groups": int(group_row["groups"]),
        "tbuckets": int(bucket_row["tbuckets"]),
        "min_tbucket": bucket_row["min_tbucket"],
        "max_frequency_ratio": group_row["max_frequency_ratio"],
        "small_tbuckets": small,
        "frequent_groups": frequent,
        "inconsistent_groups": inconsistent,
        "violations": small + frequent + inconsistent,
    }
