"""Stages ``cluster`` and ``reconcile`` of a relational-transaction job (Gong et al. 2016).

As for micro-aggregation (:mod:`sparkanon.per_block.cluster`), rows are routed to their top
block natively and one ``applyInPandas`` group cuts its rows down to blocks of at most
``max_block_rows`` records on the relational quasi-identifiers (Mondrian-style median
cuts, :func:`sparkanon.algorithms.cuts.plan_local`); APA or PAA then runs on each
block's sets. Every block is an independent (k,l)-diverse publication: its TBuckets hold
at least ``k`` records and its groups pass the frequency test, so the union of the blocks
is (k,l)-diverse too (a TBucket of the union is a union of TBuckets of at least ``k``
records each; groups never span blocks).

Records a block suppresses (a set that cannot reach ``k`` records, an Anatomize
leftover) are **reconciled** in two rounds (:func:`reconcile_rt`): the leftovers of
neighbouring blocks form chunks of at least ``chunk_rows`` records that run the same
algorithm, one task each; what the chunks still suppress forms one last block (id
:data:`RECONCILE_BLOCK`); what that suppresses is suppressed for good and counted per
reason. Only the leftover rows move.

Each published record carries its global group id (``block << CLASS_SHIFT | local
group``), its generalized set (:data:`GSET`, its packed node ids) and the number
of its items and their NCP sum (He and Naughton 2009) for the information-loss metric.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from sparkanon.algorithms import ALGORITHMS
from sparkanon.algorithms.transaction._result import KEPT, REASONS, RTResult
from sparkanon.attributes.itemsets import ItemSets, ItemTree, covering_nodes
from sparkanon.attributes.schema import BLOCK, CLASS, RID, Schema
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.per_block.cluster import block_stats, global_class, plan_leaves
from sparkanon.per_block.plan import TopPlan, TreeCuts, route
from sparkanon.stages._common import MAX_STAT_ROWS, StageTimer, log
from sparkanon.stages.items import ITEMS, decode_sets, pack_item_sets

GSET = "_gset"
"""Column (``binary``): the record's published set, node ids packed as int32."""
REASON = "_reason"
"""Column: why the record is suppressed (``REASONS`` of ``algorithms.transaction._result``)."""
N_ITEMS = "_nitems"
"""Column: the record's number of (original) items."""
ITEM_LOSS = "_iloss"
"""Column: the sum over the record's items of the NCP of the published node covering it."""
RECONCILE_BLOCK = 0
"""Block id of the reconciliation block (tree nodes are numbered from 1)."""

PARTITION_RECORDS = 50_000
"""Records per partition of the cluster and reconcile stages' grouped rows (about 30 MiB of
baskets of 126 items): Spark's default 8 shuffle partitions would put 1.25M records of a
10M-record input, several hundred MiB, in one task."""


def group_partitions(records: int) -> int:
    """How many partitions the blocks of ``records`` records are spread over."""
    return max(1, math.ceil(records / PARTITION_RECORDS))


def item_losses(sets: ItemSets, generalized: ItemSets, tree: ItemTree) -> np.ndarray:
    """Per record, the NCP summed over its items of the published node covering each.

    He and Naughton (2009, section 2): a generalized item ``u`` costs
    ``|leaves(u)| / |I|`` (0 for an item published as itself) for every original item it
    stands for; a record's published nodes are disjoint subtrees, so each item has one
    (:func:`~sparkanon.attributes.itemsets.covering_nodes`).

    Args:
        sets: the original sets (leaf ids).
        generalized: the published sets (node ids), record for record.
        tree: the taxonomy.

    Returns:
        float64 per record (0 for a record publishing nothing).
    """
    covering = covering_nodes(sets, generalized, tree)
    found = covering >= 0
    record = np.repeat(np.arange(len(sets), dtype=np.int64), sets.sizes())
    return np.bincount(
        record[found], weights=tree.item_ncp(covering[found]), minlength=len(sets)
    ).astype(np.float64)


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
    result: RTResult = ALGORITHMS[algorithm].implementation(sets, tree, k, l)
    group = global_class(np.full(len(rows), block, dtype=np.int64), result.group)
    kept = result.group >= 0
    loss = item_losses(sets, result.generalized, tree)
    gsets = pack_item_sets(result.generalized)
    gsets[~kept] = b""
    out = rows.assign(
        **{
            BLOCK: np.full(len(rows), block, dtype=np.int64),
            CLASS: group,
            GSET: gsets,
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
    part: TreeCuts,
    infeasible: frozenset[int],
) -> BatchFn:
    """Cut one top block to leaves and run APA or PAA on each (infeasible leaves wait)."""

    def cluster(top: pd.DataFrame) -> pd.DataFrame:
        leaf, bad = plan_leaves(top, schema, part, infeasible)
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
            GSET: np.full(len(rows), b"", dtype=object),
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
        (GSET, "binary"),
        (REASON, "long"),
        (N_ITEMS, "long"),
        (ITEM_LOSS, "double"),
    ]


class RTRun(NamedTuple):
    """What every block of a relational-transaction job runs.

    Attributes:
        schema: the encoded schema (the relational quasi-identifiers).
        items: the item taxonomy.
        algorithm: ``apa`` or ``paa``.
        k: TBuckets' fewest records.
        l: the fewest TBuckets of a group.
    """

    schema: Schema
    items: ItemTree
    algorithm: str
    k: int
    l: int  # noqa: E741 (the paper's name)


def cluster_rt(
    engine: Engine,
    encoded: Table,
    enc_cols: list[tuple[str, str]],
    plan: TopPlan,
    rt: RTRun,
    timer: StageTimer,
    records: int | None = None,
) -> tuple[Table, dict]:
    """Run the algorithm on every block; cache the rows with their group and published set.

    ``records`` (the usable records) sizes the partitions (:func:`group_partitions`);
    ``None`` leaves them to the engine.

    Returns:
        The rows (:func:`rt_columns`) and block statistics: ``blocks``, ``min`` and
        ``max`` rows, ``infeasible`` leaves and ``unplaced`` records.
    """
    schema, items, algorithm, k, l = rt  # noqa: E741
    columns = rt_columns(enc_cols)
    with timer.stage("cluster"):
        routed = route(engine, encoded, schema, plan.part, plan.tree)
        infeasible = frozenset(plan.infeasible)
        fn = make_rt_cluster_fn(schema, items, algorithm, k, l, plan.part, infeasible)
        partitions = None if records is None else group_partitions(records)
        clustered = engine.persist(
            engine.map_groups(routed, BLOCK, fn, columns, partitions), materialize=True, disk=True
        )
        stats = block_stats(engine, clustered, timer, {}, "records")
        stats["infeasible"] = len(infeasible)
    return clustered, stats


def block_order_key(block: int) -> tuple[int, int]:
    """A sort key putting tree leaves in left-to-right order (neighbours on the QIs together).

    Heap ids: the root is 1 and the children of ``b`` are ``2b`` and ``2b + 1``; a leaf's
    path from the root, left-aligned to a common depth, orders leaves as an in-order walk.
    """
    depth = int(block).bit_length() - 1
    path = int(block) - (1 << depth)
    return path << (62 - depth), depth


def reconcile_chunks(leftovers: dict[int, int], target: int) -> dict[int, int]:
    """Group the blocks' leftover records into chunks of at least ``target`` records.

    Blocks are walked left to right on the tree (:func:`block_order_key`), so a chunk
    gathers the leftovers of neighbouring blocks; a chunk closes once it holds ``target``
    records, and a short last chunk joins the one before it.

    Args:
        leftovers: records left over per block.
        target: the fewest records per chunk.

    Returns:
        block -> chunk number (``1, 2, ...``).
    """
    chunk, held, out = 1, 0, {}
    for block in sorted(leftovers, key=block_order_key):
        out[block] = chunk
        held += leftovers[block]
        if held >= target:
            chunk, held = chunk + 1, 0
    if held and chunk > 1:  # the last chunk is short: fold it into the previous one
        out = {b: (c - 1 if c == chunk else c) for b, c in out.items()}
    return out


RECONCILE_BASE = 1 << 40
"""Block ids of the reconciliation chunks start here (far above every tree leaf id)."""


def reconcile_rt(
    engine: Engine,
    clustered: Table,
    enc_cols: list[tuple[str, str]],
    rt: RTRun,
    unplaced: int,
    chunk_rows: int,
    timer: StageTimer,
) -> tuple[Table, dict[str, int], dict[str, int]]:
    """Run the algorithm again on the records the blocks suppressed, in two rounds.

    Round one gathers the leftovers of neighbouring blocks into chunks of at least
    ``chunk_rows`` records (:func:`reconcile_chunks`), one task each, so the work is spread
    and stays local on the quasi-identifiers; round two runs what the chunks still
    suppress as one block (:data:`RECONCILE_BLOCK`). Each chunk, like each block, is a
    (k,l)-diverse publication of its own.

    Returns:
        All rows (placed ones with their group; still suppressed ones with ``_class
        = -1`` and their reason), the records suppressed per reason, and the counts of
        the two rounds: ``chunks`` and ``last_block_records``.
    """
    _, items, algorithm, k, l = rt  # noqa: E741
    columns = rt_columns(enc_cols)
    names = [c for c, _ in enc_cols]
    with timer.stage("reconcile"):
        if unplaced == 0:
            none = {name: 0 for code, name in REASONS.items() if code != KEPT}
            return clustered, none, {"chunks": 0, "last_block_records": 0}
        waiting_rows = engine.where(clustered, CLASS, "<", 0)
        per_block = engine.collect_small(
            engine.aggregate(waiting_rows, [BLOCK], {"n": ("count", BLOCK)}), MAX_STAT_ROWS
        )
        counts = {int(b): int(n) for b, n in zip(per_block[BLOCK], per_block["n"], strict=True)}
        chunk_of = reconcile_chunks(counts, chunk_rows)

        def to_chunk(batch: pd.DataFrame) -> pd.DataFrame:
            chunk = batch[BLOCK].map(chunk_of).to_numpy(dtype=np.int64)
            return batch[names].assign(**{BLOCK: RECONCILE_BASE + chunk})

        def again(rows: pd.DataFrame) -> pd.DataFrame:
            return run_block(rows, items, algorithm, k, l, int(rows[BLOCK].iloc[0]))

        keyed = engine.map_batches(waiting_rows, to_chunk, enc_cols + [(BLOCK, "long")])
        spread = group_partitions(unplaced)
        first = engine.persist(
            engine.map_groups(keyed, BLOCK, again, columns, spread), materialize=True, disk=True
        )
        still = engine.count(engine.where(first, CLASS, "<", 0))
        second = first
        n_chunks = len(set(chunk_of.values()))
        rerun = still if n_chunks > 1 else 0
        if rerun:
            final = engine.map_batches(
                engine.where(first, CLASS, "<", 0),
                lambda b: b[names].assign(**{BLOCK: np.int64(RECONCILE_BLOCK)}),
                enc_cols + [(BLOCK, "long")],
            )
            second = engine.union(
                engine.where(first, CLASS, ">=", 0),
                engine.map_groups(final, BLOCK, again, columns),
            )
        combined = engine.persist(
            engine.union(engine.where(clustered, CLASS, ">=", 0), second),
            materialize=True,
            disk=True,
        )
        engine.unpersist(first)
        reasons = engine.collect_small(
            engine.aggregate(
                engine.where(combined, CLASS, "<", 0), [REASON], {"n": ("count", REASON)}
            ),
            len(REASONS),
        )
        by_code = {int(r): int(n) for r, n in zip(reasons[REASON], reasons["n"], strict=True)}
        by_name = {name: by_code.get(code, 0) for code, name in REASONS.items() if code != KEPT}
        timer.note(rows=unplaced, chunks=n_chunks, suppressed=sum(by_name.values()))
        log.info(
            "reconcile: %d records in %d chunks, %d re-run together, %d suppressed",
            unplaced,
            n_chunks,
            rerun,
            sum(by_name.values()),
        )
    return combined, by_name, {"chunks": n_chunks, "last_block_records": rerun}
