"""Stage ``reconcile``: rows no block could place join the nearest feasible block's classes.

The block centres (one row per block) come to the driver; the rows do not: each
waiting row picks its nearest centre in a batch function, then a cogroup hands every
receiving block its own rows and the rows sent to it, and the block's algorithm places
them by its leftover rule (:meth:`sparkanon.algorithms.BlockAlgorithm.place`). Adding
rows to classes of a monotonic model keeps them satisfied.

Rows that still find no class are suppressed, except under a model that compares each
class with the whole published table (t-closeness): suppressing them would change the
distribution every class was built against, so they form one residual class instead,
which absorbs whole classes until it satisfies every model
(:func:`sparkanon.algorithms.repair.residual_absorption`; only per-class counts reach
the driver).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sparkanon.algorithms import BlockContext, place_rows
from sparkanon.algorithms.repair import residual_absorption
from sparkanon.attributes.schema import BLOCK, CLASS, RID, SENS, Schema
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.errors import InternalError
from sparkanon.models import ModelSet
from sparkanon.per_block.cluster import CLASS_SHIFT, INFEASIBLE, REPAIRS, BlockRun, global_class
from sparkanon.stages._common import MAX_STAT_ROWS, StageTimer, log


def make_centre_fn(schema: Schema) -> BatchFn:
    """Centroid codes of one block's placed rows: the block's centre for reconciliation."""

    def centre(block: pd.DataFrame) -> pd.DataFrame:
        # Row-id order: a centroid's float sum must not depend on the shuffle's order.
        block = block.iloc[np.argsort(block[RID].to_numpy(), kind="stable")]
        out = {BLOCK: [int(block[BLOCK].iloc[0])]}
        for c, kind in zip(schema.code_columns, schema.kinds, strict=True):
            out[c] = [kind.centroid(block[c].to_numpy())]
        return pd.DataFrame(out)

    return centre


def make_nearest_block_fn(schema: Schema, centres: pd.DataFrame, columns: Sequence[str]) -> BatchFn:
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
) -> tuple[Table, Table, int]:
    """Send rows no block could place to the nearest feasible block's classes.

    The block centres (one row per block) come to the driver; the rows do not:
    each waiting row picks its nearest centre in a batch function, then a
    cogroup hands every receiving block its own rows and the rows sent to it.

    Returns:
        The placed rows including the reconciled ones, the rows that still have
        no class, and their number.
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
    left = engine.where(moved, CLASS, "<", 0)
    still = engine.count(left)
    return engine.union(placed, engine.where(moved, CLASS, ">=", 0)), left, still


RESIDUAL_BLOCK = 1 << 40
"""Block id of the residual class (above any block id the partitioning gives)."""
RESIDUAL_CLASS = RESIDUAL_BLOCK << CLASS_SHIFT
"""Global class id of the residual class."""


def class_value_counts(
    engine: Engine, placed: Table, n_values: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-class sensitive counts of the placed rows: class ids ``(m,)`` and ``(m, V)`` counts."""
    pairs = engine.collect_small(
        engine.aggregate(placed, [CLASS, SENS], {"n": ("count", SENS)}), 16 * MAX_STAT_ROWS
    )
    ids, index = np.unique(pairs[CLASS].to_numpy(dtype=np.int64), return_inverse=True)
    counts = np.zeros((len(ids), n_values), dtype=np.int64)
    np.add.at(counts, (index, pairs[SENS].to_numpy(dtype=np.int64)), pairs["n"].to_numpy(np.int64))
    return ids, counts


def make_relabel_fn(absorbed: np.ndarray) -> BatchFn:
    """Move the rows of the absorbed classes and the classless rows into the residual class."""
    absorbed = np.sort(np.asarray(absorbed, dtype=np.int64))

    def relabel(batch: pd.DataFrame) -> pd.DataFrame:
        cls = batch[CLASS].to_numpy(dtype=np.int64)
        move = (cls < 0) | np.isin(cls, absorbed)
        out = batch.copy()
        out[BLOCK] = np.where(move, RESIDUAL_BLOCK, batch[BLOCK].to_numpy(dtype=np.int64))
        out[CLASS] = np.where(move, RESIDUAL_CLASS, cls)
        return out

    return relabel


def absorb_unplaced(
    engine: Engine,
    placed: Table,
    left: Table,
    schema: Schema,
    models: ModelSet,
) -> tuple[Table, int]:
    """Place the classless rows in one residual class that absorbs classes until it holds.

    Args:
        engine: the engine.
        placed: the placed rows.
        left: the rows no class took (same columns).
        schema: the encoded schema.
        models: the models bound to the input's (= the published) distribution.

    Returns:
        Every row, the classless ones and those of the absorbed classes in the
        residual class; the number of classes absorbed.
    """
    n_values = len(schema.sensitive.values)
    ids, counts = class_value_counts(engine, placed, n_values)
    _, residual = class_value_counts(engine, left, n_values)
    try:
        taken = residual_absorption(
            counts, residual.sum(axis=0), models, schema.sensitive.declared_level_of
        )
    except ValueError as exc:
        raise InternalError(f"{exc} although the input is feasible") from exc
    every = engine.union(placed, left)
    relabelled = engine.map_batches(every, make_relabel_fn(ids[taken]), engine.schema_of(placed))
    return relabelled, len(taken)


def avoids_suppression(models: ModelSet) -> bool:
    """Whether rows no class takes go to a residual class rather than being suppressed."""
    return models.compares_with_table


@dataclass(frozen=True)
class Reconciled:
    """What reconciliation did.

    Attributes:
        reconciled: rows placed into classes of other blocks.
        unplaced: rows left without a class (suppressed).
        residual_rows: rows that found no class and went into the residual class
            (models comparing with the whole table only; then ``unplaced`` is 0).
        residual_absorbed: classes the residual class absorbed.
    """

    reconciled: int = 0
    unplaced: int = 0
    residual_rows: int = 0
    residual_absorbed: int = 0


def reconcile_rows(
    engine: Engine, clustered: Table, unplaced: int, run: BlockRun, timer: StageTimer
) -> tuple[Table, Reconciled]:
    """Place the rows the cluster stage left over.

    Returns:
        The placed rows (encoded columns, ``_block``, ``_class``) and what
        reconciliation did (see :class:`Reconciled`).
    """
    ctx, algorithm, seed = run
    columns = [c for c, _ in engine.schema_of(clustered) if c not in (INFEASIBLE, REPAIRS)]
    rows = engine.select(clustered, columns)
    placed = engine.where(rows, CLASS, ">=", 0)
    with timer.stage("reconcile"):
        if not unplaced:
            return placed, Reconciled()
        placed, left, still = _send_to_nearest(
            engine, rows, placed, ctx.schema, ctx, algorithm, seed
        )
        models = ctx.models
        if still and models is not None and avoids_suppression(models):
            placed, absorbed = absorb_unplaced(engine, placed, left, ctx.schema, models)
            timer.note(rows=unplaced, placed=unplaced - still, residual=still, absorbed=absorbed)
            log.info(
                "reconcile: %d rows placed in other blocks, %d in the residual class, which "
                "absorbed %d classes (nothing suppressed: %s compares every class with the "
                "published table)",
                unplaced - still,
                still,
                absorbed,
                ", ".join(m.name for m in models if m.compares_with_table),
            )
            return placed, Reconciled(unplaced - still, 0, still, absorbed)
        timer.note(rows=unplaced, placed=unplaced - still, suppressed=still)
        log.info(
            "reconcile: %d rows placed in other blocks, %d suppressed", unplaced - still, still
        )
    return placed, Reconciled(unplaced - still, still)
