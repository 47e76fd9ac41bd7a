"""Stage ``reconcile``: rows no block could place join the nearest feasible block's classes.

The block centres (one row per block) come to the driver; the rows do not: each
waiting row picks its nearest centre in a batch function, then a cogroup hands every
receiving block its own rows and the rows sent to it, and the block's algorithm places
them by its leftover rule (:meth:`sparkanon.algorithms.BlockAlgorithm.place`). Adding
rows to classes of a monotonic model keeps them satisfied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from sparkanon.algorithms import BlockContext, place_rows
from sparkanon.attributes.schema import BLOCK, CLASS, RID, Schema
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import InternalError
from sparkanon.stages._common import MAX_STAT_ROWS, StageTimer, log
from sparkanon.stages.cluster import CLASS_SHIFT, INFEASIBLE, REPAIRS, global_class


def make_centre_fn(schema: Schema) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Centroid codes of one block's placed rows: the block's centre for reconciliation."""

    def centre(block: pd.DataFrame) -> pd.DataFrame:
        # Row-id order: a centroid's float sum must not depend on the shuffle's order.
        block = block.iloc[np.argsort(block[RID].to_numpy(), kind="stable")]
        out = {BLOCK: [int(block[BLOCK].iloc[0])]}
        for c, kind in zip(schema.code_columns, schema.kinds, strict=True):
            out[c] = [kind.centroid(block[c].to_numpy())]
        return pd.DataFrame(out)

    return centre


def make_nearest_block_fn(
    schema: Schema, centres: pd.DataFrame, columns: Sequence[str]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Add ``_target``: the feasible block whose centre is nearest (eq. 18 distance)."""
    blocks = centres[BLOCK].to_numpy(dtype=np.int64)
    order = np.argsort(blocks)
    blocks = blocks[order]
    centre_codes = [centres[c].to_numpy()[order] for c in schema.code_columns]

    def nearest(batch: pd.DataFrame) -> pd.DataFrame:
        dist = np.zeros((len(batch), len(blocks)))
        for c, kind, cc in zip(schema.code_columns, schema.kinds, centre_codes, strict=True):
            codes = batch[c].to_numpy()
            for j, centre in enumerate(cc):
                dist[:, j] += kind.weight * kind.distance_to(codes, centre)
        out = batch[list(columns)].copy()
        out["_target"] = blocks[np.argmin(dist, axis=1)] if len(blocks) else -1
        return out

    return nearest


def make_reconcile_fn(
    ctx: BlockContext, algorithm: str, seed: int, columns: Sequence[str]
) -> Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]:
    """Place rows sent to a block into that block's classes (its leftover rule)."""

    def reconcile(placed: pd.DataFrame, incoming: pd.DataFrame) -> pd.DataFrame:
        target = int(incoming["_target"].iloc[0])
        out = incoming[list(columns)].copy()
        if len(placed) == 0:
            out[CLASS] = -1
            return out
        local_of = placed[CLASS].to_numpy() & ((1 << CLASS_SHIFT) - 1)
        labels = place_rows(placed, local_of, incoming, ctx, algorithm, seed, target)
        out[BLOCK] = target
        out[CLASS] = global_class(np.full(len(out), target), labels)
        return out

    return reconcile


def _send_to_nearest(
    engine: Engine,
    clustered: Table,
    placed: Table,
    schema: Schema,
    ctx: BlockContext,
    algorithm: str,
    seed: int,
) -> tuple[Table, int]:
    """Send rows no block could place to the nearest feasible block's classes.

    The block centres (one row per block) come to the driver; the rows do not:
    each waiting row picks its nearest centre in a batch function, then a
    cogroup hands every receiving block its own rows and the rows sent to it.

    Returns:
        The placed rows including the reconciled ones, and the number of rows
        that still have no class (suppressed).
    """
    clustered_cols = engine.schema_of(clustered)
    enc_cols = [(c, t) for c, t in clustered_cols if c not in (BLOCK, CLASS)]
    col_names = [c for c, _ in enc_cols]
    code_cols = [(c, t) for c, t in enc_cols if c in schema.code_columns]
    centres = engine.collect_small(
        engine.map_groups(placed, BLOCK, make_centre_fn(schema), [(BLOCK, "long")] + code_cols),
        MAX_STAT_ROWS,
    )
    if len(centres) == 0:
        raise InternalError("no block could form a class although the input is feasible")
    waiting = engine.map_batches(
        engine.where(clustered, CLASS, "<", 0),
        make_nearest_block_fn(schema, centres, col_names),
        enc_cols + [("_target", "long")],
    )
    moved = engine.persist(
        engine.cogroup(
            placed,
            BLOCK,
            waiting,
            "_target",
            make_reconcile_fn(ctx, algorithm, seed, col_names),
            clustered_cols,
        )
    )
    still = engine.count(engine.where(moved, CLASS, "<", 0))
    return engine.union(placed, engine.where(moved, CLASS, ">=", 0)), still


def reconcile_rows(
    engine: Engine,
    clustered: Table,
    unplaced: int,
    ctx: BlockContext,
    algorithm: str,
    seed: int,
    timer: StageTimer,
) -> tuple[Table, int, int]:
    """Place the rows the cluster stage left over.

    Returns:
        The placed rows (encoded columns, ``_block``, ``_class``), the rows
        reconciled into other blocks and the rows still without a class (suppressed).
    """
    columns = [c for c, _ in engine.schema_of(clustered) if c not in (INFEASIBLE, REPAIRS)]
    rows = engine.select(clustered, columns)
    placed = engine.where(rows, CLASS, ">=", 0)
    with timer.stage("reconcile"):
        if not unplaced:
            return placed, 0, 0
        placed, still = _send_to_nearest(engine, rows, placed, ctx.schema, ctx, algorithm, seed)
        timer.note(rows=unplaced, placed=unplaced - still, suppressed=still)
        log.info(
            "reconcile: %d rows placed in other blocks, %d suppressed", unplaced - still, still
        )
    return placed, unplaced - still, still
