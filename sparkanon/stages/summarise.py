"""Stage ``summarise``: one row per class with what it publishes and its metric terms.

Classes never span blocks (reconciled rows join their target block), so grouping by
block keeps each class whole with far fewer UDF calls than grouping by class. The
function holds a block's classes as one :class:`~sparkanon.metrics.registry.ClassBatch`
and asks the publisher what they publish and every metric for its per-class terms, each
computed for all the block's classes at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from sparkanon.attributes.schema import BLOCK, CLASS, LEVEL, RID, SENS, Schema
from sparkanon.engine.base import Engine, Table
from sparkanon.metrics.registry import ClassBatch, Metric, block_term_columns, term_columns
from sparkanon.publications import Publisher
from sparkanon.stages._common import StageTimer


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


def make_summary_fn(
    schema: Schema, entropy_base: float, publisher: Publisher, metrics: Sequence[Metric]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Summarise every class of one block at once: its published values and metric terms."""
    columns = [n for n, _ in summary_columns(publisher, metrics)]

    def summarise(block: pd.DataFrame) -> pd.DataFrame:
        ids, batch = class_batch(block, schema, entropy_base)
        out: dict[str, object] = {CLASS: ids}
        out.update(publisher.block_values(batch))
        out.update(block_term_columns(metrics, batch))
        return pd.DataFrame(out, columns=columns)

    return summarise


def summarise_classes(
    engine: Engine,
    placed: Table,
    schema: Schema,
    entropy_base: float,
    publisher: Publisher,
    metrics: Sequence[Metric],
    timer: StageTimer,
) -> Table:
    """The per-class summary table, cached (materialised inside the stage's timer)."""
    with timer.stage("summarise"):
        return engine.persist(
            engine.map_groups(
                placed,
                BLOCK,
                make_summary_fn(schema, entropy_base, publisher, metrics),
                summary_columns(publisher, metrics),
            ),
            materialize=True,
        )
