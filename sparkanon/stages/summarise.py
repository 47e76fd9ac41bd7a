"""Stage ``summarise``: one row per class with its size, diversity, centroid and losses.

Classes never span blocks (reconciled rows join their target block), so grouping by
block keeps each class whole with far fewer UDF calls than grouping by class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from sparkanon.attributes.kinds import Kind
from sparkanon.attributes.schema import BLOCK, CLASS, LEVEL, SENS, Schema, SensitiveLevels
from sparkanon.engine.base import Engine, Table
from sparkanon.metrics.entropy import class_level_entropy, sensitive_entropy
from sparkanon.metrics.ncp import class_ncp
from sparkanon.stages._common import StageTimer


def generalized_column(i: int) -> str:
    """Name of the summary column holding quasi-identifier ``i``'s generalized value."""
    return f"_g{i}"


def summary_columns(schema: Schema, generalized: bool = False) -> list[tuple[str, str]]:
    """Schema of the per-class summary table.

    Args:
        schema: the encoded schema.
        generalized: also hold each class's generalized values (``_g{i}``,
            strings) for ``output.publish: generalized``.
    """
    cols = [(CLASS, "long"), ("size", "long"), ("n_values", "long"), ("n_levels", "long")]
    cols += [("hec", "double"), ("ent", "double"), ("loss", "double")]
    cols += [(c, k.code_type) for c, k in zip(schema.code_columns, schema.kinds, strict=True)]
    cols += [("ncp", "double")]
    if generalized:
        cols += [(generalized_column(i), "string") for i in range(len(schema.kinds))]
    return cols


def class_summary(
    codes: list[np.ndarray],
    kinds: Sequence[Kind],
    sens: np.ndarray,
    levels: np.ndarray,
    sensitive: SensitiveLevels,
    base: float,
) -> dict:
    """Centroid, InfoLoss (eq. 20), HEC (eq. 2) and Ent (seed 003 eq. 14) of one class.

    Each attribute's loss is ``kind.loss`` (the distance of the rows to the
    centroid for most kinds, the distance to the class's mean vector for
    vector nominal attributes, seed 003 eq. 6-7).
    """
    row: dict = {"size": len(sens)}
    row["n_values"] = len(np.unique(sens))
    row["n_levels"] = len(np.unique(levels))
    row["hec"] = float(
        class_level_entropy(
            np.bincount(levels, minlength=sensitive.n_levels), sensitive.weights, base
        )
    )
    row["ent"] = float(sensitive_entropy(np.bincount(sens, minlength=len(sensitive.values))))
    loss = 0.0
    centroids = []
    for kind, c in zip(kinds, codes, strict=True):
        centroids.append(kind.centroid(c))
        loss += kind.weight * kind.loss(c)
    row["loss"] = loss
    row["centroids"] = centroids
    return row


def make_summary_fn(
    schema: Schema, base: float, generalized: bool = False
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Summarise every class of one block: size, diversity, HEC, Ent, InfoLoss, centroid codes.

    Also the class's NCP (Xu et al. 2006, :func:`sparkanon.metrics.ncp.class_ncp`)
    and, when ``generalized``, its generalized value of every quasi-identifier
    (:meth:`~sparkanon.attributes.kinds.Kind.generalized`).

    Classes never span blocks (reconciled rows join their target block), so
    grouping by block keeps each class whole with far fewer UDF calls than
    grouping by class.
    """

    def summarise(block: pd.DataFrame) -> pd.DataFrame:
        rows = []
        codes = [block[c].to_numpy() for c in schema.code_columns]
        sens = block[SENS].to_numpy(dtype=np.int64)
        levels = block[LEVEL].to_numpy(dtype=np.int64)
        classes = block[CLASS].to_numpy(dtype=np.int64)
        order = np.argsort(classes, kind="stable")
        bounds = np.flatnonzero(np.diff(classes[order])) + 1
        for idx in np.split(order, bounds):
            if idx.size == 0:
                continue
            class_codes = [c[idx] for c in codes]
            s = class_summary(
                class_codes,
                schema.kinds,
                sens[idx],
                levels[idx],
                schema.sensitive,
                base,
            )
            row = {CLASS: int(classes[idx[0]])}
            row.update({k: v for k, v in s.items() if k != "centroids"})
            for c, centre in zip(schema.code_columns, s["centroids"], strict=True):
                row[c] = centre
            row["ncp"] = class_ncp(schema.kinds, class_codes)
            if generalized:
                for i, (kind, c) in enumerate(zip(schema.kinds, class_codes, strict=True)):
                    row[generalized_column(i)] = kind.generalized(c)
            rows.append(row)
        return pd.DataFrame(rows, columns=[n for n, _ in summary_columns(schema, generalized)])

    return summarise


def summarise_classes(
    engine: Engine,
    placed: Table,
    schema: Schema,
    entropy_base: float,
    generalized: bool,
    timer: StageTimer,
) -> Table:
    """The per-class summary table, cached (materialised inside the stage's timer)."""
    with timer.stage("summarise"):
        return engine.persist(
            engine.map_groups(
                placed,
                BLOCK,
                make_summary_fn(schema, entropy_base, generalized),
                summary_columns(schema, generalized),
            ),
            materialize=True,
        )
