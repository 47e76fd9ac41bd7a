"""Dynamic condensation's step: what one micro-batch does to the groups (pure pandas/numpy).

Aggarwal and Yu 2004's dynamic algorithm (Aggarwal 2015, section 20.3.1.4, eqs 20.8-20.9)
over :mod:`sparkanon.engine.streaming`: the groups' statistics are the stream's state, kept
as opaque bytes (``np.savez``) in Spark's state store; the step

1. parses the batch's records (the configured numeric attributes; a record with a value
   that is not a number is counted as suppressed, never assigned);
2. assigns them, in record-id order, to the nearest group by centroid (Euclidean over the
   values divided by the initial batch's per-column standard deviation), splitting a
   group that reaches ``2k`` records along its principal eigenvector
   (:func:`~sparkanon.algorithms.condensation.stream.assign_records`);
3. releases the groups with at least ``k`` pending records (not yet represented by
   released synthetic records) that reach ``release_pending`` or whose last release is
   ``release_age`` batches old: as many synthetic records as pending, drawn from the
   group's current statistics
   (:func:`~sparkanon.algorithms.condensation.synthesize.synthetic_records`, keyed by the
   run's secret key, the group id and the group's released count, so a replayed batch of
   the same run draws the same records and a later release new ones), written in a keyed
   order, with no group or batch id: the difference of two releases of a group covers at
   least ``k`` records, and no one without the key can tell which records are a group's;
4. checks every release before it leaves the step: the group holds at least ``k``
   records and releases at least ``k``, the synthetic mean and covariance lie within
   their bounds (:func:`~sparkanon.algorithms.condensation.synthesize.check_group`); a
   failure raises, so the batch fails and nothing of it is committed (the sink and the
   state move together).

The key must be the same over the runs of one checkpoint for a replayed batch to publish
what the failed attempt would have (``--key-file``); a stream restarted with a new key
publishes the replayed batch's records with other draws, which the sink never held.

The first groups come from an initial static batch (Aggarwal and Yu's static grouping,
:func:`~sparkanon.algorithms.condensation.stream.initial_groups`), as the paper describes.
Accounting, kept in the state and checked every batch: records seen (initial + streamed)
= records in groups + suppressed; released <= count per group.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sparkanon.algorithms.condensation.group_stats import GroupStats
from sparkanon.algorithms.condensation.stream import (
    StreamGroups,
    assign_records,
    due_for_release,
    initial_groups,
    mark_released,
)
from sparkanon.algorithms.condensation.synthesize import (
    GroupDraws,
    Keyed,
    check_group,
    keyed_order,
    synthetic_records,
)
from sparkanon.errors import InternalError, PrivacyViolationError
from sparkanon.randomness.streams import SYNTHESIS_STREAM_AXES, SYNTHESIS_STREAM_ORDER


@dataclass
class StreamState:
    """The stream's state for one key.

    Attributes:
        groups: the groups.
        next_id: the next free group id.
        batch: batches processed (0: only the initial batch).
        scale: the distance scale (initial batch's per-column standard deviation).
        seen: records seen, initial batch included.
        suppressed: records not assigned (a value that is not a number).
    """

    groups: StreamGroups
    next_id: int
    batch: int
    scale: np.ndarray
    seen: int
    suppressed: int

    def to_bytes(self) -> bytes:
        """The state as ``np.savez`` bytes (flat statistics, one row per group)."""
        g = self.groups
        d = len(self.scale)
        flat = np.stack([s.to_flat() for s in g.stats]) if g.stats else np.zeros((0, 1))
        shift = g.stats[0].shift if g.stats else np.zeros(d)
        buffer = io.BytesIO()
        np.savez(
            buffer,
            flat=flat,
            shift=np.asarray(shift, dtype=np.float64),
            released=np.asarray(g.released, dtype=np.int64),
            born=np.asarray(g.born, dtype=np.int64),
            ids=np.asarray(g.ids, dtype=np.int64),
            last_release=np.asarray(g.last_release, dtype=np.int64),
            scalars=np.array([self.next_id, self.batch, self.seen, self.suppressed], np.int64),
            scale=np.asarray(self.scale, dtype=np.float64),
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> StreamState:
        """The state :meth:`to_bytes` wrote."""
        z = np.load(io.BytesIO(data))
        scale = z["scale"]
        d = len(scale)
        shift = z["shift"]  # read once: each z[...] reads the entry from the archive anew
        stats = [GroupStats.from_flat(row, d, shift) for row in z["flat"]]
        groups = StreamGroups(
            stats,
            z["released"].tolist(),
            z["born"].tolist(),
            z["ids"].tolist(),
            z["last_release"].tolist(),
        )
        next_id, batch, seen, suppressed = (int(v) for v in z["scalars"])
        return cls(groups, next_id, batch, scale, seen, suppressed)

    def accounted(self) -> bool:
        """Records seen = records in groups + suppressed, and released <= count."""
        counts = [s.count for s in self.groups.stats]
        fine = all(r <= c for r, c in zip(self.groups.released, counts, strict=True))
        return fine and sum(counts) + self.suppressed == self.seen


def numeric_values(rows: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The records' values as floats, and which records hold a value that is no number."""
    values = (
        np.column_stack(
            [pd.to_numeric(rows[c], errors="coerce").to_numpy(dtype=np.float64) for c in columns]
        )
        if len(columns)
        else np.zeros((len(rows), 0))
    )
    bad = ~np.isfinite(values).all(axis=1)
    return values, bad


def initial_state(values: np.ndarray, k: int, seed: int) -> StreamState:
    """The groups of the initial static batch (numeric values, every record a number).

    The distance scale is the batch's per-column standard deviation (1 for a constant
    column), the statistics' origin its per-column mean (against cancellation).

    Raises:
        ValueError: fewer than ``k`` records.
    """
    scale = values.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    groups, _, next_id = initial_groups(values, k, seed, scale, shift=values.mean(axis=0))
    return StreamState(groups, next_id, 0, scale, len(values), 0)


def release(
    state: StreamState,
    positions: Sequence[int],
    k: int,
    key: Keyed,
    alpha: float,
    columns: Sequence[str],
) -> pd.DataFrame:
    """Synthetic records of the due groups, each checked against its group, keyed order.

    Raises:
        PrivacyViolationError: a group under ``k`` records or releasing fewer than ``k``,
            or a release off its statistics.
    """
    frames, groups, offsets = [], [], []
    for p in positions:
        stats = state.groups.stats[p]
        done = state.groups.released[p]
        pending = stats.count - done
        gid = state.groups.ids[p]
        if stats.count < k or pending < k:
            raise PrivacyViolationError(
                f"a stream group of {stats.count} records would release {pending} new "
                f"records; both must be at least k={k}"
            )
        draws = GroupDraws(key, gid, offset=done, stream=SYNTHESIS_STREAM_AXES)
        records = synthetic_records(stats, pending, draws)
        check = check_group(stats, records, alpha)
        if not check.ok:
            raise PrivacyViolationError(
                f"stream group {gid}: synthetic records off the group's statistics "
                f"(mean ratio {check.mean_ratio:.3g}, "
                f"covariance ratio {check.covariance_ratio:.3g})"
            )
        frames.append(records)
        groups.append(np.full(pending, gid, dtype=np.int64))
        offsets.append(np.full(pending, done, dtype=np.int64))
    if not frames:
        return pd.DataFrame({c: np.zeros(0) for c in columns})
    order = keyed_order(
        key, SYNTHESIS_STREAM_ORDER, np.concatenate(groups), np.concatenate(offsets)
    )
    return pd.DataFrame(np.concatenate(frames)[order], columns=list(columns))


@dataclass(frozen=True)
class StreamStep:
    """The step :func:`sparkanon.engine.streaming.run_stateful_stream` calls per batch.

    Attributes:
        columns: the condensed numeric attributes.
        k: the group size (also the fewest pending records a release stands for).
        key: the run key (the synthetic draws and their order).
        release_pending: release a group once this many of its records are pending.
        release_age: ... or once its last release is this many batches old (and at least
            ``k`` records are pending).
        alpha: the per-entry significance of the mean and covariance checks.
    """

    columns: tuple[str, ...]
    k: int
    key: Keyed
    release_pending: int
    release_age: int
    alpha: float

    def __call__(
        self, key: object, state: bytes | None, rows: pd.DataFrame
    ) -> tuple[bytes, pd.DataFrame]:
        """One batch of one key: assign, split, release, check (module docstring)."""
        if state is None:
            raise InternalError(f"stream key {key!r} has no initial state")
        current = StreamState.from_bytes(state)
        values, bad = numeric_values(rows, self.columns)
        batch = current.batch + 1
        groups, _, next_id, _ = assign_records(
            current.groups, values[~bad], self.k, current.scale, current.next_id,
            batch_index=batch,
        )  # fmt: skip
        due = due_for_release(groups, batch, self.release_pending, self.release_age, least=self.k)
        updated = StreamState(
            groups,
            next_id,
            batch,
            current.scale,
            current.seen + len(rows),
            current.suppressed + int(bad.sum()),
        )
        out = release(updated, due, self.k, self.key, self.alpha, self.columns)
        updated.groups = mark_released(groups, due, batch)
        if not updated.accounted():
            raise InternalError(f"stream key {key!r}: record accounting broke at batch {batch}")
        return updated.to_bytes(), out


def summary(state: StreamState) -> dict[str, int]:
    """Counts of a state: records seen, in groups, released, pending, suppressed; groups."""
    counts = [s.count for s in state.groups.stats]
    released = sum(state.groups.released)
    return {
        "batches": state.batch,
        "records_seen": state.seen,
        "records_in_groups": sum(counts),
        "records_released": released,
        "records_pending": sum(counts) - released,
        "records_suppressed": state.suppressed,
        "groups": len(counts),
        "smallest_group": min(counts) if counts else 0,
    }
