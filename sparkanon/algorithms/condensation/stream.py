"""Dynamic condensation over a stream, pure (Aggarwal 2015, section 20.3.1.4; Aggarwal and Yu 2004).

State: a list of groups, each with its :class:`~.group_stats.GroupStats`, its stable id,
the number of its records already represented by released synthetic records, the batch
it was created in and the batch of its last release. Per micro-batch:

1. :func:`assign_records`: each record (in the given, deterministic order) joins the group
   with the nearest centroid; a group reaching ``2k`` records splits (:func:`~.split.split_group`)
   into two children of ``k`` with new ids.
2. :func:`due_for_release`: the groups whose pending records (``count - released``) should
   be released now; the caller draws ``pending`` synthetic records per such group
   (:func:`~.synthesize.synthetic_records` with ``offset = released``), then
   :func:`mark_released`.

**Differencing.** A group's release is drawn from its statistics after its new records
joined; an attacker who could read two successive releases of one group exactly would get
the sum of the records between them (``n2 m2 - n1 m1``). With ``least = k``
(:func:`due_for_release`) a group releases only once at least ``k`` records are pending,
so any such difference covers at least ``k`` records (a k-anonymous group's total, never
one record); the caller publishes no group or batch id and keyed (not exact) records.

**Distance.** Euclidean over ``values / scale``: ``scale`` is a positive per-column vector
fixed for the stream, e.g. the first batch's per-column standard deviation (a column of
zero deviation needs a positive stand-in such as 1), so that no column dominates by its
units. Ties go to the earlier group position.

**Age.** A group's age at batch ``b`` is ``b - last_release``: the number of batches since
its last release. A group never released counts from the batch its lineage started (the
creation batch of a first-batch group); split children inherit the parent's
``last_release``, so a split never restarts the wait of records still pending.

**Splits and released records.** A parent of ``n`` records of which ``r`` are released
gives ``r // 2`` released to the first child (``n // 2`` records) and ``r - r // 2`` to the
second (``n - n // 2``): the counts and the released counts are kept, and
``released <= count`` holds in each child.

Every group holds ``k`` to ``2k - 1`` records once started by :func:`initial_groups`
(static groups are ``k..2k-1``, groups only grow, and a ``2k`` group splits into two of
``k``), so every released group satisfies k-anonymity's group size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from sparkanon.algorithms._base import compiled_kernel
from sparkanon.algorithms.condensation.group_stats import GroupStats, _as_matrix, _as_shift
from sparkanon.algorithms.condensation.split import split_group
from sparkanon.algorithms.condensation.static import scaled, static_groups


@dataclass
class StreamGroups:
    """The groups of a stream (parallel lists, one entry per group position).

    Attributes:
        stats: Each group's statistics (all about one shift).
        released: Records of the group already represented by released synthetic records.
        born: The batch index the group was created in.
        ids: Stable group ids; split children get new ids from a counter.
        last_release: The batch index of the group's last release (or its lineage's
            start if never released); filled from ``born`` when left empty.
    """

    stats: list[GroupStats]
    released: list[int]
    born: list[int]
    ids: list[int]
    last_release: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Fill ``last_release`` and check the lists are parallel.

        Raises:
            ValueError: If the lists differ in length or ``released`` exceeds a count.
        """
        if not self.last_release and self.stats:
            self.last_release = list(self.born)
        sizes = {
            len(self.stats),
            len(self.released),
            len(self.born),
            len(self.ids),
            len(self.last_release),
        }
        if len(sizes) != 1:
            raise ValueError("stats, released, born, ids and last_release must be parallel")
        for s, r in zip(self.stats, self.released, strict=True):
            if not 0 <= r <= s.count:
                raise ValueError(f"released must be in [0, count], got {r} of {s.count}")

    def pending(self) -> np.ndarray:
        """Each group's records not yet released (``count - released``).

        Returns:
            An int64 array, one per group position.
        """
        return np.array(
            [s.count - r for s, r in zip(self.stats, self.released, strict=True)], dtype=np.int64
        )


def _check_scale(scale: np.ndarray, d: int) -> np.ndarray:
    """The distance scale as a positive finite ``(d,)`` vector.

    Args:
        scale: The per-column scale.
        d: The number of attributes.

    Returns:
        A float64 vector.

    Raises:
        ValueError: On a wrong shape or a non-positive or non-finite entry.
    """
    s = np.asarray(scale, dtype=np.float64).reshape(-1)
    if s.shape != (d,) or not np.all(np.isfinite(s)) or np.any(s <= 0.0):
        raise ValueError(f"scale must be {d} positive finite numbers")
    return s


def initial_groups(
    values: np.ndarray,
    k: int,
    seed: int,
    scale: np.ndarray,
    *,
    shift: np.ndarray | None = None,
    batch_index: int = 0,
    first_id: int = 0,
) -> tuple[StreamGroups, np.ndarray, int]:
    """Seed the stream's groups from a first batch with :func:`~.static.static_groups`.

    Args:
        values: ``(n, d)`` records, ``n >= k``.
        k: The group size.
        seed: The job's seed (the static grouping's picks, which protect nothing:
            :mod:`~.static`).
        scale: ``(d,)`` positive distance scale (the one :func:`assign_records` will use).
        shift: The per-column origin of the statistics (default zeros).
        batch_index: The batch index of this first batch.
        first_id: The first group id.

    Returns:
        ``(groups, record_ids, next_id)``: the groups (none released), each record's group
        id and the next free id.

    Raises:
        ValueError: If ``n < k`` or on bad input.
    """
    x = _as_matrix(values)
    if x.shape[0] == 0:
        raise ValueError(f"no records to start groups of k={k}")
    labels = static_groups(x, k, seed, scale=_check_scale(scale, x.shape[1]))
    s = _as_shift(shift, x.shape[1])
    n_groups = int(labels.max()) + 1
    stats = [GroupStats.of(x[labels == g], s) for g in range(n_groups)]
    ids = [first_id + g for g in range(n_groups)]
    groups = StreamGroups(stats, [0] * n_groups, [batch_index] * n_groups, ids)
    return groups, labels + first_id, first_id + n_groups


def assign_records(
    groups: StreamGroups,
    values: np.ndarray,
    k: int,
    scale: np.ndarray,
    next_id: int,
    *,
    batch_index: int | None = None,
) -> tuple[StreamGroups, np.ndarray, int, int]:
    """Records join the nearest group one at a time; a group reaching ``2k`` splits.

    For each record in order: the group position with the smallest Euclidean distance
    between ``record / scale`` and ``centroid / scale`` (the earliest on a tie) gets it;
    when that group's count reaches ``2k`` it is replaced by :func:`~.split.split_group`'s
    first child (at its position, id ``next_id``) and the second child is appended
    (id ``next_id + 1``). Centroids are kept in an array, updated per record.

    Args:
        groups: The current groups (at least one; not modified).
        values: ``(n, d)`` records in a deterministic order.
        k: The group size (a group splits at ``2k``).
        scale: ``(d,)`` positive per-column distance scale.
        next_id: The next free group id.
        batch_index: The current batch, recorded as split children's ``born``; when
            ``None`` a child inherits its parent's ``born``.

    Returns:
        ``(groups, record_ids, next_id, splits)``: the new groups, the id of the group
        each record joined (that group may have split later in the batch), the next
        free id and the number of splits.

    Raises:
        ValueError: If there are no groups, ``k < 1``, or on mismatched widths or shifts.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not groups.stats:
        raise ValueError("no groups to assign records to (start them with initial_groups)")
    d = groups.stats[0].d
    shift = groups.stats[0].shift
    for s in groups.stats:
        if s.d != d or not np.array_equal(s.shift, shift):
            raise ValueError("all groups must have the same width and shift")
    x = _as_matrix(values, d)
    sc = _check_scale(scale, d)
    y = x - shift
    xs = scaled(x, sc)
    kernel = compiled_kernel("condensation._assign_kernel")
    if kernel is not None and x.shape[0]:
        return _assign_compiled(kernel, groups, xs, y, k, sc, next_id, batch_index)
    counts = np.array([s.count for s in groups.stats], dtype=np.int64)
    sums = np.array([s.sums for s in groups.stats])
    prods = np.array([s.products for s in groups.stats])
    cent = (shift + sums / counts[:, None]) / sc
    released = list(groups.released)
    born = list(groups.born)
    ids = list(groups.ids)
    last = list(groups.last_release)
    record_ids = np.empty(x.shape[0], dtype=np.int64)
    splits = 0
    for r in range(x.shape[0]):
        g = int(np.argmin(_squared_distances(cent, xs[r])))
        record_ids[r] = ids[g]
        counts[g] += 1
        sums[g] += y[r]
        prods[g] += np.outer(y[r], y[r])
        if counts[g] < 2 * k:
            cent[g] = (shift + sums[g] / counts[g]) / sc
            continue
        first, second = split_group(GroupStats(int(counts[g]), sums[g], prods[g], shift))
        child_born = born[g] if batch_index is None else batch_index
        rel = released[g]
        counts[g], sums[g], prods[g] = first.count, first.sums, first.products
        counts = np.append(counts, second.count)
        sums = np.vstack([sums, second.sums[None, :]])
        prods = np.concatenate([prods, second.products[None, :, :]])
        cent[g] = first.mean() / sc
        cent = np.vstack([cent, (second.mean() / sc)[None, :]])
        released[g] = rel // 2
        released.append(rel - rel // 2)
        born[g] = child_born
        born.append(child_born)
        last.append(last[g])
        ids[g] = next_id
        ids.append(next_id + 1)
        next_id += 2
        splits += 1
    stats = [GroupStats(int(c), s, p, shift) for c, s, p in zip(counts, sums, prods, strict=True)]
    return StreamGroups(stats, released, born, ids, last), record_ids, next_id, splits


def _squared_distances(cent: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each centroid's squared distance to ``x``, summed over the columns in order.

    The order is the compiled path's (:mod:`._assign_kernel`), so both find the same
    nearest group, ties included.
    """
    diff = cent - x
    out = diff[:, 0] * diff[:, 0]
    for j in range(1, diff.shape[1]):
        out += diff[:, j] * diff[:, j]
    return out


def _grown(array: np.ndarray, rows: int) -> np.ndarray:
    """``array`` with room for at least ``rows`` rows (doubling; the new rows zero)."""
    if rows <= array.shape[0]:
        return array
    out = np.zeros((max(rows, 2 * array.shape[0]), *array.shape[1:]), dtype=array.dtype)
    out[: array.shape[0]] = array
    return out


def _sort_axis(cent: np.ndarray) -> int:
    """The coordinate the compiled search sorts centroids by: the widest interquartile range.

    Any coordinate gives the same result; one the centroids spread along prunes most.
    The interquartile range, not the variance: a column that is mostly one value with
    rare far outliers (Adult's capital-gain) has a large variance and prunes nothing.
    """
    if cent.shape[0] < 2:
        return 0
    q1, q3 = np.percentile(cent, [25, 75], axis=0)
    return int(np.argmax(q3 - q1))


def _assign_compiled(
    kernel: ModuleType,
    groups: StreamGroups,
    xs: np.ndarray,
    y: np.ndarray,
    k: int,
    sc: np.ndarray,
    next_id: int,
    batch_index: int | None,
) -> tuple[StreamGroups, np.ndarray, int, int]:
    """:func:`assign_records` with the compiled nearest-centroid search (same result).

    The centroids are kept sorted by the coordinate they spread most along when the batch
    starts (:func:`_sort_axis`); the kernel assigns records until a group reaches ``2k``,
    this function splits it as the numpy path does and places the children in the sorted
    order.
    """
    shift = groups.stats[0].shift
    n = len(groups.stats)
    d = xs.shape[1]
    counts = np.array([s.count for s in groups.stats], dtype=np.int64)
    sums = np.array([s.sums for s in groups.stats], dtype=np.float64).reshape(n, d)
    prods = np.array([s.products for s in groups.stats], dtype=np.float64).reshape(n, d, d)
    cent = (shift + sums / counts[:, None]) / sc
    ids = np.asarray(groups.ids, dtype=np.int64)
    axis = _sort_axis(cent)
    order = np.argsort(cent[:, axis], kind="stable").astype(np.int64)
    key = cent[order, axis].copy()
    where = np.empty(n, dtype=np.int64)
    where[order] = np.arange(n, dtype=np.int64)
    released = list(groups.released)
    born = list(groups.born)
    last = list(groups.last_release)
    record_ids = np.empty(xs.shape[0], dtype=np.int64)
    splits, r = 0, 0
    while True:
        r, g = kernel.assign_until_split(
            xs, y, r, 2 * k, counts, sums, prods, cent, n, key, order, where, ids,
            record_ids, shift, sc, axis,
        )  # fmt: skip
        if g < 0:
            break
        first, second = split_group(GroupStats(int(counts[g]), sums[g], prods[g], shift))
        counts, sums, prods, cent, ids, key, order, where = (
            _grown(a, n + 1) for a in (counts, sums, prods, cent, ids, key, order, where)
        )
        counts[g], sums[g], prods[g] = first.count, first.sums, first.products
        cent[g] = first.mean() / sc
        kernel.move(key, order, where, n, g, cent[g, axis])
        counts[n], sums[n], prods[n] = second.count, second.sums, second.products
        cent[n] = second.mean() / sc
        n += 1
        kernel.insert(key, order, where, n, n - 1, cent[n - 1, axis])
        child_born = born[g] if batch_index is None else batch_index
        rel = released[g]
        released[g] = rel // 2
        released.append(rel - rel // 2)
        born[g] = child_born
        born.append(child_born)
        last.append(last[g])
        ids[g], ids[n - 1] = next_id, next_id + 1
        next_id += 2
        splits += 1
        r += 1
    stats = [GroupStats(int(counts[i]), sums[i].copy(), prods[i].copy(), shift) for i in range(n)]
    return (
        StreamGroups(stats, released, born, ids[:n].tolist(), last),
        record_ids,
        next_id,
        splits,
    )


def due_for_release(
    groups: StreamGroups, batch_index: int, min_pending: int, max_age: int, *, least: int = 1
) -> list[int]:
    """The group positions whose pending records are to be released at this batch.

    A position is due when ``pending >= least`` and either ``pending >= min_pending`` or
    its age ``batch_index - last_release >= max_age`` (see the module docstring). A stream
    passes ``least = k``: no release stands for fewer than ``k`` new records, so the
    difference of two releases of a group never isolates fewer than ``k`` records.

    Args:
        groups: The groups.
        batch_index: The current batch.
        min_pending: The pending count that triggers a release (at least 1).
        max_age: The age, in batches, that triggers a release of the pending records
            (at least 0).
        least: The fewest pending records a release may stand for (at least 1).

    Returns:
        The due positions, ascending.

    Raises:
        ValueError: If ``min_pending < 1``, ``least < 1`` or ``max_age < 0``.
    """
    if min_pending < 1:
        raise ValueError(f"min_pending must be at least 1, got {min_pending}")
    if least < 1:
        raise ValueError(f"least must be at least 1, got {least}")
    if max_age < 0:
        raise ValueError(f"max_age must be non-negative, got {max_age}")
    pending = groups.pending()
    age = batch_index - np.asarray(groups.last_release, dtype=np.int64)
    due = (pending >= least) & ((pending >= min_pending) | (age >= max_age))
    return np.flatnonzero(due).tolist()


def mark_released(groups: StreamGroups, positions: list[int], batch_index: int) -> StreamGroups:
    """The groups after releasing every pending record of the given positions.

    Args:
        groups: The groups (not modified).
        positions: The released positions (e.g. :func:`due_for_release`'s).
        batch_index: The current batch (the new ``last_release``).

    Returns:
        New groups with ``released = count`` and ``last_release = batch_index`` there.
    """
    released = list(groups.released)
    last = list(groups.last_release)
    for p in positions:
        released[p] = groups.stats[p].count
        last[p] = batch_index
    return StreamGroups(list(groups.stats), released, list(groups.born), list(groups.ids), last)
