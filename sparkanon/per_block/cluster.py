"""Stage ``cluster``: per top block, the rest of the tree, then the algorithm on every leaf.

Rows are routed to their top block natively (:func:`sparkanon.per_block.plan.route`)
and grouped by it; one ``applyInPandas`` group cuts its rows down to blocks of at most
``max_block_rows`` with the same decision function as the top of the tree
(:func:`sparkanon.algorithms.cuts.plan_local`) and runs the per-block algorithm
on each leaf. Rows a leaf cannot place (an infeasible leaf, or what the algorithm
leaves over) get class ``-1`` and go to reconciliation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from sparkanon.algorithms import BlockContext, cluster_block_counted
from sparkanon.algorithms.cuts import plan_local
from sparkanon.attributes.schema import BLOCK, CLASS, Schema
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.per_block.plan import TopPlan, TreeCuts, route
from sparkanon.stages._common import StageTimer, log, one_row, with_columns

INFEASIBLE = "_inf"
"""Column of the clustered rows: 1 when the row's leaf cannot host a class."""
REPAIRS = "_rep"
"""Column of the clustered rows: repair merges in the row's leaf (the same on all its rows)."""

CLASS_SHIFT = 20
"""A global class id is ``block << CLASS_SHIFT | local class``."""


def global_class(block: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Global class id of local labels (``-1`` stays ``-1``)."""
    return np.where(local >= 0, (block.astype(np.int64) << CLASS_SHIFT) | local, -1)


def plan_leaves(
    top: pd.DataFrame, schema: Schema, part: TreeCuts, infeasible: frozenset[int]
) -> tuple[np.ndarray, set[int]]:
    """Cut one top block's rows down to leaves (the rest of the tree, on its own rows).

    Args:
        top: the rows of one top block (column ``_block``).
        schema: the encoded schema.
        part: the cut rule.
        infeasible: top blocks already known to be infeasible (kept whole).

    Returns:
        Each row's leaf, and the leaves that cannot host a class.
    """
    root = int(top[BLOCK].iloc[0])
    if root in infeasible:
        return np.full(len(top), root, dtype=np.int64), {root}
    leaf, bad = plan_local(
        schema.kinds,
        part.bins(top, schema),
        part.sensitive(top),
        part.n_values,
        part.policy,
        part.feasible,
        root=root,
    )
    return leaf, set(bad)


def make_cluster_fn(
    ctx: BlockContext,
    algorithm: str,
    seed: int,
    part: TreeCuts,
    infeasible: frozenset[int],
    finish: Callable[[pd.DataFrame, dict[str, np.ndarray]], pd.DataFrame] | None = None,
) -> BatchFn:
    """Cut one top block to leaves and cluster each; add ``_block``, ``_class``, ``_inf``, ``_rep``.

    Args:
        ctx: the algorithm context.
        algorithm: registered algorithm name.
        seed: the job seed.
        part: the cut rule (with ``stop_rows = max_block_rows``).
        infeasible: top blocks already known to be infeasible.
        finish: builds the rows that leave the step from a top block's rows and the
            columns the step adds (the per-block family's
            :func:`~sparkanon.families.blocks.summarise.with_class_values`); without it the rows
            are the top block's with those columns.
    """
    schema = ctx.schema

    def cluster(top: pd.DataFrame) -> pd.DataFrame:
        leaf, bad = plan_leaves(top, schema, part, infeasible)
        classes = np.full(len(top), -1, dtype=np.int64)
        repairs = np.zeros(len(top), dtype=np.int64)
        for block in np.unique(leaf):
            if int(block) in bad:
                continue
            rows = np.flatnonzero(leaf == block)
            local, merges = cluster_block_counted(top.iloc[rows], ctx, algorithm, seed, int(block))
            classes[rows] = global_class(np.full(rows.size, block), local)
            repairs[rows] = merges
        added = {
            BLOCK: leaf,
            CLASS: classes,
            INFEASIBLE: np.isin(leaf, list(bad)).astype(np.int64),
            REPAIRS: repairs,
        }
        return with_columns(top, added) if finish is None else finish(top, added)

    return cluster


class BlockRun(NamedTuple):
    """What every block runs: the algorithm's context, the algorithm's name, the job seed."""

    ctx: BlockContext
    algorithm: str
    seed: int


class Finish(NamedTuple):
    """What the per-block step adds to its rows before they leave it.

    Attributes:
        fn: the function of a top block's rows and the step's added columns (``_block``,
            ``_class``, ``_inf``, ``_rep``, by name) that returns the rows with them and
            its own.
        columns: the columns it adds besides the step's.
    """

    fn: Callable[[pd.DataFrame, dict[str, np.ndarray]], pd.DataFrame]
    columns: list[tuple[str, str]]


def cluster_rows(
    engine: Engine,
    encoded: Table,
    plan: TopPlan,
    run: BlockRun,
    timer: StageTimer,
    finish: Finish | None = None,
) -> tuple[Table, dict]:
    """Cluster every top block; cache the rows with their leaf and class.

    Args:
        engine: the engine.
        encoded: the encoded rows.
        plan: the top of the tree.
        run: what every block runs.
        timer: the stage timer.
        finish: what the step adds to its rows (``finish.columns``) after clustering.

    Returns:
        The clustered rows (encoded columns, ``_block``, ``_class``, ``_inf``, ``_rep``,
        then ``finish.columns``) and the block statistics: ``blocks``, ``min``/``max``
        rows, ``infeasible`` leaves, ``repairs`` (merges of the repair step) and
        ``unplaced`` rows.
    """
    ctx, tree, part = run.ctx, plan.tree, plan.part
    clustered_cols = engine.schema_of(encoded) + [
        (BLOCK, "long"),
        (CLASS, "long"),
        (INFEASIBLE, "long"),
        (REPAIRS, "long"),
    ]
    clustered_cols += finish.columns if finish else []
    with timer.stage("cluster"):
        routed = route(engine, encoded, ctx.schema, part, tree)
        clustered = engine.persist(
            engine.map_groups(
                routed,
                BLOCK,
                make_cluster_fn(
                    ctx,
                    run.algorithm,
                    run.seed,
                    part,
                    frozenset(plan.infeasible),
                    finish.fn if finish else None,
                ),
                clustered_cols,
            ),
            materialize=True,
        )
        stats = block_stats(
            engine, clustered, timer, {"infeasible": INFEASIBLE, "repairs": REPAIRS}, "rows"
        )
    return clustered, stats


def block_stats(
    engine: Engine,
    clustered: Table,
    timer: StageTimer,
    flags: Mapping[str, str],
    unit: str,
) -> dict[str, Any]:
    """What the driver learns of the clustered blocks: counts per block, summed, and the rest.

    Args:
        engine: the engine.
        clustered: the rows with their ``_block`` and ``_class`` (``-1``: no class yet).
        timer: the stage timer (notes the blocks and the rows left).
        flags: report key -> a column constant within a block; the report sums it over
            the blocks (e.g. infeasible leaves, repair merges).
        unit: what a row is called in the log (``rows``, ``records``).

    Returns:
        ``blocks``, ``min`` and ``max`` rows a block, each key of ``flags``, and
        ``unplaced``: the rows left for reconciliation.
    """
    per_block = engine.aggregate(
        clustered,
        [BLOCK],
        {"n": ("count", BLOCK)} | {key: ("max", column) for key, column in flags.items()},
    )
    summary = {"blocks": ("count", "n"), "min": ("min", "n"), "max": ("max", "n")}
    stats = one_row(engine, per_block, summary | {key: ("sum", key) for key in flags})
    stats["unplaced"] = engine.count(engine.where(clustered, CLASS, "<", 0))
    timer.note(blocks=stats["blocks"], unplaced=stats["unplaced"])
    log.info(
        "cluster: %d blocks, %d %s left for reconciliation",
        stats["blocks"],
        stats["unplaced"],
        unit,
    )
    return stats
