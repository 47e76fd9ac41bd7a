"""Stage ``summarise``: one row per class with what it publishes and its metric terms.

Classes never span blocks (reconciled rows join their target block), so grouping by
block keeps each class whole with far fewer UDF calls than grouping by class. For each
class the function builds a :class:`~sparkanon.metrics.registry.ClassView` and asks the
publisher what the class publishes and every metric for its per-class terms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from sparkanon.attributes.schema import BLOCK, CLASS, LEVEL, SENS, Schema
from sparkanon.engine.base import Engine, Table
from sparkanon.metrics.registry import ClassView, Metric, class_term_row, term_columns
from sparkanon.publications import Publisher
from sparkanon.stages._common import StageTimer


def summary_columns(publisher: Publisher, metrics: Sequence[Metric]) -> list[tuple[str, str]]:
    """Schema of the per-class summary table."""
    return [(CLASS, "long")] + publisher.class_columns() + term_columns(metrics)


def class_views(
    block: pd.DataFrame, schema: Schema, entropy_base: float
) -> list[tuple[int, ClassView]]:
    """Every class of one block's rows, with its id."""
    codes = [block[c].to_numpy() for c in schema.code_columns]
    sens = block[SENS].to_numpy(dtype=np.int64)
    levels = block[LEVEL].to_numpy(dtype=np.int64)
    classes = block[CLASS].to_numpy(dtype=np.int64)
    order = np.argsort(classes, kind="stable")
    bounds = np.flatnonzero(np.diff(classes[order])) + 1
    views = []
    for idx in np.split(order, bounds):
        if idx.size == 0:
            continue
        view = ClassView(
            kinds=schema.kinds,
            codes=[c[idx] for c in codes],
            sens=sens[idx],
            levels=levels[idx],
            sensitive=schema.sensitive,
            entropy_base=entropy_base,
        )
        views.append((int(classes[idx[0]]), view))
    return views


def make_summary_fn(
    schema: Schema, entropy_base: float, publisher: Publisher, metrics: Sequence[Metric]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Summarise every class of one block: its published values and metric terms."""
    columns = [n for n, _ in summary_columns(publisher, metrics)]

    def summarise(block: pd.DataFrame) -> pd.DataFrame:
        rows = []
        for class_id, view in class_views(block, schema, entropy_base):
            row = {CLASS: class_id}
            row.update(publisher.class_values(view))
            row.update(class_term_row(metrics, view))
            rows.append(row)
        return pd.DataFrame(rows, columns=columns)

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
