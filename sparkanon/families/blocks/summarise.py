"""Stage ``summarise``: one row per class with what it publishes and its metric terms.

Classes never span blocks (reconciled rows join their target block), so grouping by
block keeps each class whole with far fewer UDF calls than grouping by class. The
function holds a block's classes as one :class:`~sparkanon.metrics.registry.ClassBatch`
and asks the publisher what they publish and every metric for its per-class terms, each
computed for all the block's classes at once.

Two ways to run it. When the cluster stage leaves no row for reconciliation (the usual
case), the per-block step summarises its own classes as it forms them
(:func:`with_class_values`): every row leaves the step carrying the quasi-identifiers
its class publishes, and one row per class (``_head``) its metric terms, so the summary
table is a filter of the clustered rows and publishing renames columns, with no second
grouping of the rows by block, no join on class and no Python pass over the rows
(:func:`summaries_of_heads`, :meth:`~sparkanon.publications.Publisher.publish_carried`). When
reconciliation moves rows into other blocks' classes, those classes change after the
step, and :func:`summarise_classes` groups the placed rows by block again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.attributes.schema import BLOCK, CLASS, LEVEL, RID, SENS, Schema
from sparkanon.engine.base import BatchFn, Columns, Engine, Table
from sparkanon.metrics.registry import ClassBatch, Metric, block_term_columns, term_columns
from sparkanon.publications import Publisher
from sparkanon.stages._common import StageTimer, with_columns


def summary_columns(publisher: Publisher, metrics: Sequence[Metric]) -> list[tuple[str, str]]:
    """Schema of the per-class summary table."""
    return [(CLASS, "long")] + publisher.class_columns() + term_columns(metrics)


def class_batch(
    block: pd.DataFrame, schema: Schema, entropy_base: float
) -> tuple[np.ndarray, ClassBatch]:
    """Every class of one block's rows as one :class:`ClassBatch`, with the class ids.

    The rows are taken in row-id order: a class's sums (centroids, metric terms) are
    floating-point sums whose last bits depend on the order of their terms, and Spark
    delivers a group's rows in the order its shuffle fetched them, which differs between
    a local run and a cluster (a centroid one ulp apart publishes another value).
    """
    if RID in block.columns:
        block = block.iloc[np.argsort(block[RID].to_numpy(), kind="stable")]
    return ClassBatch.of_rows(
        kinds=schema.kinds,
        codes=[block[c].to_numpy() for c in schema.code_columns],
        classes=block[CLASS].to_numpy(dtype=np.int64),
        sens=block[SENS].to_numpy(dtype=np.int64),
        levels=block[LEVEL].to_numpy(dtype=np.int64),
        sensitive=schema.sensitive,
        entropy_base=entropy_base,
    )


def summary_reads(schema: Schema) -> list[str]:
    """The columns :func:`make_summary_fn`'s function reads, besides ``_class``."""
    return [RID, *schema.code_columns, SENS, LEVEL]


def make_summary_fn(
    schema: Schema, entropy_base: float, publisher: Publisher, metrics: Sequence[Metric]
) -> BatchFn:
    """Summarise every class of one block at once: its published values and metric terms.

    The function reads ``_class`` and :func:`summary_reads` of the rows (``_rid`` when
    present).
    """
    columns = [n for n, _ in summary_columns(publisher, metrics)]

    def summarise(block: pd.DataFrame) -> pd.DataFrame:
        ids, batch = class_batch(block, schema, entropy_base)
        out: dict[str, object] = {CLASS: ids}
        out.update(publisher.block_values(batch))
        out.update(block_term_columns(metrics, batch))
        return pd.DataFrame(out, columns=columns)

    return summarise


def summarise_classes(
    engine: Engine, placed: Table, summarise: BatchFn, columns: Columns, timer: StageTimer
) -> Table:
    """The per-class summary table, cached (materialised inside the stage's timer).

    Args:
        engine: the engine.
        placed: the rows with their block and class.
        summarise: :func:`make_summary_fn`'s function, applied to each block's rows.
        columns: its output, :func:`summary_columns`.
        timer: the run's stage timer.
    """
    with timer.stage("summarise"):
        return engine.persist(
            engine.map_groups(placed, BLOCK, summarise, columns), materialize=True
        )


HEAD = "_head"
"""Column of the clustered rows: 1 on one row of each class (the one holding its terms)."""


def carried_columns(publisher: Publisher, metrics: Sequence[Metric]) -> list[tuple[str, str]]:
    """The columns :func:`with_class_values` adds to a block's rows."""
    return publisher.class_value_columns() + term_columns(metrics) + [(HEAD, "long")]


def _filler(column_type: str, n: int) -> np.ndarray:
    """Values of a column for rows without a class (never published nor summed)."""
    if column_type == "double":
        return np.full(n, np.nan)
    if column_type == "long":
        return np.zeros(n, dtype=np.int64)
    return np.full(n, None, dtype=object)


def _per_row(
    values: Any, at: np.ndarray, placed: np.ndarray, column_type: str, index: pd.Index
) -> Any:
    """Each row's value of its class (``values[at]``), neutral where a row has none.

    Dates and timestamps keep their pandas type (a missing one is ``NaT``).
    """
    if column_type in ("double", "long", "string"):
        taken = np.asarray(values)[at]
        if placed.all():
            return taken
        return np.where(placed, taken, _filler(column_type, len(at)))
    taken = pd.Series(values).take(at)
    taken.index = index
    return taken.where(pd.Series(placed, index=index))


def with_class_values(
    rows: pd.DataFrame,
    added: dict[str, np.ndarray],
    summarise: BatchFn,
    reads: Sequence[str],
    publisher: Publisher,
    metrics: Sequence[Metric],
) -> pd.DataFrame:
    """A block's rows with ``added``, what their class publishes, its terms and ``_head``.

    Args:
        rows: the rows of one or more whole blocks.
        added: the columns the per-block step gives them, among them ``_class`` (``-1``:
            no class); they are added here with the rest, so the rows are copied once.
        summarise: :func:`make_summary_fn`'s function (one row per class).
        reads: the columns it reads besides ``_class`` (:func:`summary_reads`); only
            those of the placed rows are handed to it.
        publisher: the publisher (its published quasi-identifiers, prefixed).
        metrics: the metrics (their term columns).

    Returns:
        ``rows`` with ``added`` and :func:`carried_columns`: every row with a class carries
        the quasi-identifiers its class publishes (:meth:`Publisher.published_values`, once
        per class) and its class's terms; ``_head`` is 1 on the first row of each class,
        so the heads are the summary table. Rows without a class get neutral values and
        ``_head`` 0.
    """
    classes = np.asarray(added[CLASS], dtype=np.int64)
    placed = classes >= 0
    extra = carried_columns(publisher, metrics)
    head = np.zeros(len(rows), dtype=np.int64)
    if not placed.any():
        values = {name: _filler(t, len(rows)) for name, t in extra[:-1]}
        return with_columns(rows, {**added, **values, HEAD: head})
    every = placed.all()
    inputs = {c: rows[c].to_numpy() for c in reads if c in rows.columns}
    inputs[CLASS] = classes
    summary = summarise(
        pd.DataFrame(inputs if every else {c: v[placed] for c, v in inputs.items()})
    )
    ids = summary[CLASS].to_numpy(dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    at = order[np.searchsorted(ids, classes, sorter=order).clip(0, len(ids) - 1)]
    published = publisher.published_values(summary)
    source = [published[c] for c, _ in publisher.qi_columns()]
    source += [summary[c].to_numpy() for c, _ in term_columns(metrics)]
    values = {
        name: _per_row(column, at, placed, column_type, rows.index)
        for (name, column_type), column in zip(extra[:-1], source, strict=True)
    }
    _, first = np.unique(np.where(placed, classes, -1), return_index=True)
    head[first] = 1
    head[~placed] = 0
    return with_columns(rows, {**added, **values, HEAD: head})


def summaries_of_heads(
    engine: Engine, clustered: Table, metrics: Sequence[Metric], timer: StageTimer
) -> Table:
    """The per-class summary table from rows that carry it (:func:`with_class_values`).

    Only the metric terms are kept: the published values travel with the rows.
    """
    with timer.stage("summarise"):
        heads = engine.where(clustered, HEAD, "==", 1)
        columns = [CLASS] + [c for c, _ in term_columns(metrics)]
        return engine.persist(engine.select(heads, columns), materialize=True)
