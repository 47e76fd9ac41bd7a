"""Stages ``cluster`` and ``reconcile`` of a relational-transaction job (seed 002).

As for micro-aggregation (:mod:`sparkanon.stages.cluster`), rows are routed to their top
block natively and one ``applyInPandas`` group cuts its rows down to blocks of at most
``max_block_rows`` records on the relational quasi-identifiers (Mondrian-style median
cuts, :func:`sparkanon.algorithms.partition.plan_local`); APA or PAA then runs on each
block's sets. Every block is an independent (k,l)-diverse publication: its TBuckets hold
at least ``k`` records and its groups pass the frequency test, so the union of the blocks
is (k,l)-diverse too (a TBucket of the union is a union of TBuckets of at least ``k``
records each; groups never span blocks).

Records a block suppresses (a set that cannot reach ``k`` records, an Anatomize
leftover) are **reconciled**: all of them, from every block, form one more block (id
:data:`RECONCILE_BLOCK`) that runs the same algorithm; what it still suppresses is
suppressed for good and counted per reason. Only the leftover rows move.

Each published record carries its global group id (``block << CLASS_SHIFT | local
group``), its generalized set (:data:`GSET`, the text of its node ids) and the number
of its items and their NCP sum (He and Naughton 2009) for the information-loss metric.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from sparkanon.algorithms.partition import BlockTree, plan_local
from sparkanon.algorithms.transaction._result import KEPT, REASONS, RTResult
from sparkanon.algorithms.transaction.apa import apa
from sparkanon.algorithms.transaction.paa import paa
from sparkanon.attributes.itemsets import ItemSets, ItemTree
from sparkanon.attributes.schema import BLOCK, CLASS, RID, Schema
from sparkanon.engine.base import Engine, Table
from sparkanon.stages._common import StageTimer, log, one_row
from sparkanon.stages.cluster import global_class
from sparkanon.stages.items import ITEMS, decode_sets
from sparkanon.stages.partition import Partitioning, route

GSET = "_gset"
"""Column: the record's published generalized set, node ids joined by spaces."""
REASON = "_reason"
"""Column: why the record is suppressed (``REASONS`` of ``algorithms.transaction._result``)."""
N_ITEMS = "_nitems"
"""Column: the record's number of (original) items."""
ITEM_LOSS = "_iloss"
"""Column: the sum over the record's items of the NCP of the published node covering it."""
RECONCILE_BLOCK = 0
"""Block id of the reconciliation block (tree nodes are numbered from 1)."""

RT_ALGORITHMS: dict[str, Callable[[ItemSets, ItemTree, int, int], RTResult]] = {
    "apa": apa,
    "paa": paa,
}
"""The per-block function of each relational-transaction algorithm."""


def item_losses(sets: ItemSets, generalized: ItemSets, tree: ItemTree) -> np.ndarray:
    """Per record, the NCP summed over its items of the published node covering each.

    He and Naughton (2009, section 2): a generalized item ``u`` costs
    ``|leaves(u)| / |I|`` (0 for an item published as itself) for every original item it
    stands for. A record's published nodes are disjoint subtrees, so each item has one.

    Args:
        sets: the original sets (leaf ids).
        generalized: the published sets (node ids), record for record.
        tree: the taxonomy.

    Returns:
        float64 per record.
    """
    out = np.zeros(len(sets), dtype=np.float64)
    for i in range(len(sets)):
        items, nodes = sets.row(i), generalized.row(i)
        if items.size == 0 or nodes.size == 0:
            continue
        lo, hi = tree.leaf_lo[nodes], tree.leaf_hi[nodes]
        order = np.argsort(lo, kind="stable")
        at = np.searchsorted(lo[order], items, side="right") - 1
        covering = nodes[order][at]
        ok = (at >= 0) & (items <= hi[order][np.maximum(at, 0)])
        out[i] = float(np.sum(tree.item_ncp(covering[ok])))
    return out


def run_block(
    frame: pd.DataFrame,
    tree: ItemTree,
    algorithm: str,
    k: int,
    l: int,  # noqa: E741 (the paper's name)
    block: int,
) -> pd.DataFrame:
    """APA or PAA on one block's rows; add the group, published set, reason and loss columns.

    Rows are taken in row-id order, so the result does not depend on how the engine
    ordered them.
    """
    order = np.argsort(frame[RID].to_numpy(), kind="stable")
    rows = frame.iloc[order]
    sets = decode_sets(rows[ITEMS])
    result = RT_ALGORITHMS[algorithm](sets, tree, k, l)
    group = global_class(np.full(len(rows), block, dtype=np.int64), result.group)
    gsets = [" ".join(map(str, result.generalized.row(i))) for i in range(len(rows))]
    loss = item_losses(sets, result.generalized, tree)
    kept = result.group >= 0
    out = rows.assign(
        **{
            BLOCK: np.full(len(rows), block, dtype=np.int64),
            CLASS: group,
            GSET: np.where(kept, np.asarray(gsets, dtype=object), ""),
            REASON: result.suppressed_reason.astype(np.int64),
            N_ITEMS: sets.sizes().astype(np.int64),
            ITEM_LOSS: np.where(kept, loss, 0.0),
        }
    )
    return out


def make_rt_cluster_fn(
    schema: Schema,
    tree: ItemTree,
    algorithm: str,
    k: int,
    l: int,  # noqa: E741 (the paper's name)
    part: Partitioning,
    infeasible: frozenset[int],
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Cut one top block to leaves and run APA or PAA on each (infeasible leaves wait)."""

    def cluster(top: pd.DataFrame) -> pd.DataFrame:
        root = int(top[BLOCK].iloc[0])
        if root in infeasible:
            leaf, bad = np.full(len(top), root, dtype=np.int64), {root}
        else:
            leaf, bad = plan_local(
                schema.kinds,
                part.bins(top, schema),
                part.sensitive(top),
                part.n_values,
                part.policy,
                part.feasible,
                root=root,
            )
        parts = []
        for block in np.unique(leaf):
            rows = top.iloc[np.flatnonzero(leaf == block)]
            if int(block) in bad:  # too few records for one group: reconciled
                parts.append(waiting(rows, int(block)))
            else:
                parts.append(run_block(rows, tree, algorithm, k, l, int(block)))
        return pd.concat(parts, ignore_index=True)

    return cluster


def waiting(rows: pd.DataFrame, block: int) -> pd.DataFrame:
    """Rows of an infeasible leaf: no group yet, sent to reconciliation (reason 1)."""
    sets = decode_sets(rows[ITEMS])
    return rows.assign(
        **{
            BLOCK: np.full(len(rows), block, dtype=np.int64),
            CLASS: np.full(len(rows), -1, dtype=np.int64),
            GSET: "",
            REASON: np.full(len(rows), 1, dtype=np.int64),
            N_ITEMS: sets.sizes().astype(np.int64),
            ITEM_LOSS: 0.0,
        }
    )


def rt_columns(enc_cols: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The encoded columns plus what the cluster stage adds."""
    return enc_cols + [
        (BLOCK, "long"),
        (CLASS, "long"),
        (GSET, "string"),
        (REASON, "long"),
        (N_ITEMS, "long"),
        (ITEM_LOSS, "double"),
    ]


def cluster_rt(
    engine: Engine,
    encoded: Table,
    enc_cols: list[tuple[str, str]],
    tree: BlockTree,
    infeasible: set[int],
    part: Partitioning,
    schema: Schema,
    items: ItemTree,
    algorithm: str,
    k: int,
    l: int,  # noqa: E741 (the paper's name)
    timer: StageTimer,
) -> tuple[Table, dict]:
    """Run the algorithm on every block; cache the rows with their group and published set.

    Returns:
        The rows (:func:`rt_columns`) and block statistics: ``blocks``, ``min`` and
        ``max`` rows, ``infeasible`` leaves and ``unplaced`` records.
    """
    columns = rt_columns(enc_cols)
    with timer.stage("cluster"):
        routed = route(engine, encoded, schema, part, tree)
        fn = make_rt_cluster_fn(schema, items, algorithm, k, l, part, frozenset(infeasible))
        clustered = engine.persist(engine.map_groups(routed, BLOCK, fn, columns), materialize=True)
        per_block = engine.aggregate(clustered, [BLOCK], {"n": ("count", BLOCK)})
        stats = one_row(
            engine,
            per_block,
            {"blocks": ("count", "n"), "min": ("min", "n"), "max": ("max", "n")},
        )
        stats["infeasible"] = len(infeasible)
        stats["unplaced"] = engine.count(engine.where(clustered, CLASS, "<", 0))
        log.info(
            "cluster: %d blocks, %d records left for reconciliation",
            stats["blocks"],
            stats["unplaced"],
        )
    return clustered, stats


def reconcile_rt(
    engine: Engine,
    clustered: Table,
    enc_cols: list[tuple[str, str]],
    items: ItemTree,
    algorithm: str,
    k: int,
    l: int,  # noqa: E741 (the paper's name)
    unplaced: int,
    timer: StageTimer,
) -> tuple[Table, dict[str, int]]:
    """Run the algorithm once more on every record the blocks suppressed, as one block.

    Returns:
        All rows (placed ones with their group; still suppressed ones with ``_class
        = -1`` and their reason) and the records suppressed per reason.
    """
    columns = rt_columns(enc_cols)
    with timer.stage("reconcile"):
        if unplaced == 0:
            return clustered, {name: 0 for code, name in REASONS.items() if code != KEPT}
        placed = engine.where(clustered, CLASS, ">=", 0)
        leftover = engine.select(engine.where(clustered, CLASS, "<", 0), [c for c, _ in enc_cols])

        def again(rows: pd.DataFrame) -> pd.DataFrame:
            return run_block(rows, items, algorithm, k, l, RECONCILE_BLOCK)

        # One group holds every leftover: key them all to the reconciliation block.
        keyed = engine.map_batches(
            leftover,
            lambda b: b.assign(**{BLOCK: np.full(len(b), RECONCILE_BLOCK, dtype=np.int64)}),
            enc_cols + [(BLOCK, "long")],
        )
        redone = engine.map_groups(keyed, BLOCK, again, columns)
        combined = engine.persist(engine.union(placed, redone), materialize=True)
        reasons = engine.collect_small(
            engine.aggregate(
                engine.where(combined, CLASS, "<", 0), [REASON], {"n": ("count", REASON)}
            ),
            len(REASONS),
        )
        counts = {int(r): int(n) for r, n in zip(reasons[REASON], reasons["n"], strict=True)}
        by_name = {name: counts.get(code, 0) for code, name in REASONS.items() if code != KEPT}
        log.info(
            "reconcile: %d records re-run together, %d suppressed",
            unplaced,
            sum(by_name.values()),
        )
    return combined, by_name
