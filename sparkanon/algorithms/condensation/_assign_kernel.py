"""Compiled (numba) nearest-centroid assignment of dynamic condensation (as the numpy path).

:func:`~sparkanon.algorithms.condensation.stream.assign_records` compares every record
with every group's centroid: with ``G`` groups a record costs ``O(G d)``, and ``G`` grows
with the records seen (about one group per ``1.5 k`` records). This module finds the same
nearest group without looking at most of them:

* the centroids are kept sorted by one coordinate (``axis``, the one whose centroids
  spread most, by interquartile range, when the batch starts); a record's search starts
  where its own value of that coordinate would sit and walks outwards both ways;
* a walk stops once the squared difference on ``axis`` alone exceeds the best squared
  distance found: every centroid further out is at least that far (the distance is a
  sum of non-negative squares that includes that term, and float rounding of such a sum
  never goes below one of its terms);
* a distance's sum stops early once it exceeds the best (same argument).

The squared distance is summed over the columns in order, ``((c_0 - x_0)^2 + (c_1 - x_1)^2)
+ ...``, as the numpy path does, and ties go to the lowest group position, as
``np.argmin`` does: both paths pick the same group for every record, so they give the
same groups bit for bit (tests/algorithms/condensation/test_condensation_stream.py compares them).
The sums, products and centroids are updated with the numpy path's operations.

Splits are left to the caller: :func:`assign_until_split` returns at the record that
brings a group to ``2k``; the caller splits it (an eigen-decomposition in numpy), places
the children with :func:`move` and :func:`insert`, and calls it again from the next
record.

``SPARKANON_NO_JIT=1`` in the environment forces the numpy path (:func:`enabled`).
"""

from __future__ import annotations

import os

import numpy as np

from sparkanon.algorithms._jit import compiled

NO_JIT_ENV = "SPARKANON_NO_JIT"
"""Environment variable: ``1`` forces the numpy path (tests, debugging)."""

_compiled = compiled()


def enabled() -> bool:
    """Whether the compiled path may be used (``SPARKANON_NO_JIT`` is not ``1``)."""
    return os.environ.get(NO_JIT_ENV, "").strip().lower() not in ("1", "true", "yes")


@_compiled
def _distance(cent: np.ndarray, g: int, x: np.ndarray, best: float) -> float:
    """Squared distance of centroid ``g`` to ``x`` (columns in order); early out above ``best``."""
    s = 0.0
    for j in range(x.shape[0]):
        t = cent[g, j] - x[j]
        s += t * t
        if s > best:
            return s
    return s


@_compiled
def nearest(
    cent: np.ndarray, n: int, key: np.ndarray, order: np.ndarray, x: np.ndarray, axis: int
) -> int:
    """The position of the nearest of the first ``n`` centroids (lowest position on a tie).

    Args:
        cent: centroids (capacity rows, the first ``n`` in use).
        n: groups in use.
        key: ``cent[order[i], axis]``, ascending in ``i``.
        order: group positions sorted by their ``axis`` coordinate.
        x: the record (scaled).
        axis: the sorted coordinate.
    """
    xa = x[axis]
    start = np.searchsorted(key[:n], xa)
    best = np.inf
    found = -1
    i = start
    while i < n:
        t = key[i] - xa
        if t * t > best:
            break
        g = order[i]
        s = _distance(cent, g, x, best)
        if s < best or (s == best and g < found):
            best, found = s, g
        i += 1
    i = start - 1
    while i >= 0:
        t = key[i] - xa
        if t * t > best:
            break
        g = order[i]
        s = _distance(cent, g, x, best)
        if s < best or (s == best and g < found):
            best, found = s, g
        i -= 1
    return found


@_compiled
def move(
    key: np.ndarray, order: np.ndarray, where: np.ndarray, n: int, g: int, value: float
) -> None:
    """Give group ``g`` the sort value ``value`` and move it to its sorted place."""
    p = where[g]
    key[p] = value
    while p > 0 and key[p - 1] > value:
        key[p], key[p - 1] = key[p - 1], key[p]
        order[p], order[p - 1] = order[p - 1], order[p]
        where[order[p]] = p
        p -= 1
    while p < n - 1 and key[p + 1] < value:
        key[p], key[p + 1] = key[p + 1], key[p]
        order[p], order[p + 1] = order[p + 1], order[p]
        where[order[p]] = p
        p += 1
    where[g] = p


@_compiled
def insert(
    key: np.ndarray, order: np.ndarray, where: np.ndarray, n: int, g: int, value: float
) -> None:
    """Add group ``g`` as the ``n``-th sorted entry (``n`` counts it) at its sorted place."""
    order[n - 1] = g
    where[g] = n - 1
    move(key, order, where, n, g, value)


@_compiled
def assign_until_split(
    xs: np.ndarray,
    y: np.ndarray,
    start: int,
    limit: int,
    counts: np.ndarray,
    sums: np.ndarray,
    prods: np.ndarray,
    cent: np.ndarray,
    n: int,
    key: np.ndarray,
    order: np.ndarray,
    where: np.ndarray,
    ids: np.ndarray,
    record_ids: np.ndarray,
    shift: np.ndarray,
    sc: np.ndarray,
    axis: int,
) -> tuple[int, int]:
    """Records from ``start`` join their nearest group until one reaches ``limit`` records.

    Returns:
        ``(r, g)``: the record that brought group position ``g`` to ``limit`` (its sums
        include it; its centroid is not updated), or ``(len(xs), -1)`` when none did.
    """
    d = xs.shape[1]
    for r in range(start, xs.shape[0]):
        g = nearest(cent, n, key, order, xs[r], axis)
        record_ids[r] = ids[g]
        counts[g] += 1
        for i in range(d):
            sums[g, i] += y[r, i]
        for i in range(d):
            for j in range(d):
                prods[g, i, j] += y[r, i] * y[r, j]
        if counts[g] >= limit:
            return r, g
        for j in range(d):
            cent[g, j] = (shift[j] + sums[g, j] / counts[g]) / sc[j]
        move(key, order, where, n, g, cent[g, axis])
    return xs.shape[0], -1
