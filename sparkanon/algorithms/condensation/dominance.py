"""The p% dominance rule on a group's sums, and the merging of groups that fail it.

A condensation group is summarised by its first- and second-order sums (``Sum(i)``,
``Sum(i, j)``; Aggarwal 2015, eqs 20.6/20.7). For an attribute of non-negative magnitudes
(an amount, a count) the sums ``Sum(i) = sum_r x_ri`` and ``Sum(i, i) = sum_r x_ri^2`` are
magnitude-table cells, and the sensitivity rules of statistical disclosure control apply to
them (Hundepool et al., "Statistical Disclosure Control", Wiley 2012, section 4.2.2, the
rules tau-Argus and sdcMicro apply to magnitude tables).

**The p% rule.** A cell of non-negative contributions ``x_1 >= x_2 >= ... >= x_n`` is
sensitive when the respondents other than the two largest contribute less than ``p``
percent of the largest:

    ``T - x_1 - x_2 < (p / 100) x_1``,   ``T = sum_r x_r``,

i.e. the second largest respondent, who knows its own contribution, could estimate the
largest from the total as ``T - x_2`` to within ``p`` percent. It implies the weaker
reading ``T - x_1 >= (p / 100) x_1`` (no one record derivable from the total alone by
anyone). A cell whose contributions are all 0 is not sensitive; a cell of one record is.

**Suppression, then merging.** Groups are merged within a block (the records the caller
passes), so a record that dominates the block's own cells cannot be protected by any
merge: :func:`dominant_records` finds those (the largest contribution of a failing cell,
repeatedly, until the block's cells pass), and the caller suppresses them. Then
:func:`merge_dominant` merges every group with a sensitive cell, or under ``k`` records
after the suppression, into the group of nearest centroid (in a distance space the caller
gives), one merge at a time. Merging only adds contributions, so a group's remainder grows
by the other group's whole total; and the block's cells pass, so the merging ends with
every group passing, at worst as one group.

Pure numpy: the stage (:mod:`sparkanon.families.synthesis.condense`) applies it per block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

P_PERCENT = 10.0
"""The default ``p`` of the p% rule (percent)."""


def contributions(values: np.ndarray) -> np.ndarray:
    """Each record's contributions to the checked sums: ``x_i`` then ``x_i^2`` per column.

    Args:
        values: ``(n, m)`` non-negative magnitudes (the checked attributes' values).

    Returns:
        A float64 ``(n, 2m)`` array.

    Raises:
        ValueError: On a negative or non-finite value.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"values must be a matrix, got shape {x.shape}")
    if x.size and (not np.all(np.isfinite(x)) or float(x.min()) < 0.0):
        raise ValueError("the p% rule applies to finite non-negative magnitudes")
    return np.concatenate([x, x * x], axis=1)


def sensitive(
    totals: np.ndarray, largest: np.ndarray, second: np.ndarray, p: float = P_PERCENT
) -> np.ndarray:
    """Which cells fail the p% rule, from their totals and two largest contributions.

    Args:
        totals: Per cell, the sum of its non-negative contributions (any shape).
        largest: Per cell, its largest contribution (same shape).
        second: Per cell, its second largest contribution (0 for a cell of one record).
        p: The rule's percentage (positive).

    Returns:
        A boolean array: ``totals - largest - second < p / 100 * largest``.

    Raises:
        ValueError: If ``p`` is not positive.
    """
    if not p > 0.0:
        raise ValueError(f"p must be positive, got {p!r}")
    t = np.asarray(totals, dtype=np.float64)
    big = np.asarray(largest, dtype=np.float64)
    return (t - big - np.asarray(second, dtype=np.float64)) < (p / 100.0) * big


def group_cells(index: np.ndarray, cells: np.ndarray, groups: int) -> tuple[np.ndarray, ...]:
    """Per group and cell: the total, the largest and the second largest contribution.

    Args:
        index: ``(n,)`` each record's group position in ``[0, groups)``.
        cells: ``(n, c)`` non-negative contributions.
        groups: The number of groups.

    Returns:
        ``(totals, largest, second)``, each ``(groups, c)``.
    """
    idx = np.asarray(index, dtype=np.int64)
    c = np.asarray(cells, dtype=np.float64).reshape(len(idx), -1)
    total = np.zeros((groups, c.shape[1]))
    np.add.at(total, idx, c)
    largest = np.zeros((groups, c.shape[1]))
    second = np.zeros((groups, c.shape[1]))
    for j in range(c.shape[1]):
        order = np.lexsort((c[:, j], idx))
        last = np.r_[idx[order][1:] != idx[order][:-1], True] if len(idx) else np.zeros(0, bool)
        top = order[last]
        largest[idx[top], j] = c[top, j]
        before = np.flatnonzero(last)[:] - 1
        has = (before >= 0) & (idx[order][np.maximum(before, 0)] == idx[top])
        second[idx[top][has], j] = c[order[before[has]], j]
    return total, largest, second


def dominant_records(cells: np.ndarray, p: float = P_PERCENT) -> np.ndarray:
    """The records whose contributions make the cells of all ``cells`` together fail.

    While a cell (a column) of the remaining records fails the p% rule, its largest
    contributor is taken out (the first on a tie; every failing column's at each step).

    Args:
        cells: ``(n, c)`` non-negative contributions (:func:`contributions`).
        p: The rule's percentage.

    Returns:
        A boolean ``(n,)`` mask of the records taken out.
    """
    c = np.asarray(cells, dtype=np.float64)
    c = c.reshape(len(c), -1)
    out = np.zeros(len(c), dtype=bool)
    while True:
        left = np.flatnonzero(~out)
        if not len(left) or not c.shape[1]:
            return out
        rest = c[left]
        top = np.sort(rest, axis=0)[::-1]
        second = top[1] if len(top) > 1 else np.zeros(c.shape[1])
        failing = np.flatnonzero(sensitive(rest.sum(axis=0), top[0], second, p))
        if not len(failing):
            return out
        out[left[np.argmax(rest[:, failing], axis=0)]] = True


@dataclass(frozen=True)
class Merged:
    """The result of :func:`merge_dominant`.

    Attributes:
        labels: each record's group label after merging (a merged group takes the smaller
            of the two labels).
        merges: the number of merges made.
        dominant: the groups that still fail (only when a single group is left).
    """

    labels: np.ndarray
    merges: int
    dominant: int


def merge_dominant(
    labels: np.ndarray,
    cells: np.ndarray,
    positions: np.ndarray,
    p: float = P_PERCENT,
    k: int = 1,
) -> Merged:
    """Merge groups failing the p% rule (or under ``k`` records) into their nearest group.

    At each step the failing group of smallest label merges with the group whose centroid
    (mean of ``positions``) is nearest to its own (squared Euclidean; ties to the smaller
    label); the merged group keeps the smaller label. Stops when no group fails or one
    group is left.

    Args:
        labels: ``(n,)`` non-negative integer group labels.
        cells: ``(n, c)`` non-negative contributions (:func:`contributions`).
        positions: ``(n, d)`` the records in the distance space.
        p: The rule's percentage.
        k: The fewest records a group may hold (a smaller one fails too).

    Returns:
        The :class:`Merged` labels and counts.

    Raises:
        ValueError: On mismatched lengths.
    """
    lab = np.asarray(labels, dtype=np.int64)
    c = np.asarray(cells, dtype=np.float64).reshape(len(lab), -1)
    pos = np.asarray(positions, dtype=np.float64).reshape(len(lab), -1)
    if len(c) != len(lab) or len(pos) != len(lab):
        raise ValueError("labels, cells and positions must have one row per record")
    if not len(lab):
        return Merged(lab.copy(), 0, 0)
    ids, index = np.unique(lab, return_inverse=True)
    g = len(ids)
    count = np.bincount(index, minlength=g).astype(np.float64)
    where = np.zeros((g, pos.shape[1]))
    np.add.at(where, index, pos)
    total, largest, second = group_cells(index, c, g)
    alive = np.ones(g, dtype=bool)
    target = np.arange(g)
    merges = 0
    while True:
        failing = alive & (sensitive(total, largest, second, p).any(axis=1) | (count < k))
        if not failing.any() or alive.sum() < 2:
            break
        a = int(np.flatnonzero(failing)[0])
        cent = where / count[:, None]
        dist = ((cent - cent[a]) ** 2).sum(axis=1)
        dist[~alive] = np.inf
        dist[a] = np.inf
        b = int(np.argmin(dist))
        keep, gone = min(a, b), max(a, b)
        count[keep] += count[gone]
        where[keep] += where[gone]
        total[keep] += total[gone]
        low = np.minimum(largest[keep], largest[gone])
        second[keep] = np.maximum(low, np.maximum(second[keep], second[gone]))
        largest[keep] = np.maximum(largest[keep], largest[gone])
        alive[gone] = False
        target[target == gone] = keep
        merges += 1
    bad = sensitive(total, largest, second, p).any(axis=1) | (count < k)
    dominant = int((alive & bad).sum())
    return Merged(ids[target[index]], merges, dominant)
