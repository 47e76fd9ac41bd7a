"""Aggarwal and Yu's 2004 static grouping for condensation (Aggarwal 2015, exercise 20.5).

Repeat while at least ``k`` records remain: pick a remaining record at random and form a
group of it and its ``k - 1`` nearest remaining records. The fewer than ``k`` records left
then join the group whose centroid is nearest. Every group has ``k`` to ``2k - 1`` records
(at most ``k - 1`` leftovers can join one group).

**Our readings.** The random pick ``t`` (``t = 0, 1, ...``) is the remaining record at
position ``floor(u_t * m_t)`` among the ``m_t`` remaining records in input order, ``u_t``
the counter uniform of ``(seed, stream 0, row id t, lane STATIC_LANE)``. Distances are
Euclidean over ``values / scale`` (``scale`` a positive per-column vector, default 1:
raw values). Ties among the nearest go to the earlier record (a stable sort), ties between
centroids to the earlier group. The leftovers join the nearest centroid of the groups as
formed (centroids are not updated as leftovers join). Groups are labelled ``0, 1, ...`` in
order of formation. Cost: ``O(n^2 d / k)`` (one distance pass over the remaining records
per group), meant for a block or a stream's first batch, not a whole table.

**Why the job's seed, not the run key.** The picks decide which records share a group,
and nothing of a group is published that its membership would unlock: no group id, and
its synthetic records are keyed by the run's secret key. Knowing the picks (the seed is in
the config) tells an attacker which positions of the input started groups, a function of
the input they do not hold; so the grouping stays reproducible from the config.
"""

from __future__ import annotations

import numpy as np

from sparkanon.algorithms.condensation.group_stats import _as_matrix
from sparkanon.algorithms.perturbation.noise import counter_uniforms

STATIC_LANE = 4
"""The counter_uniforms lane of the static grouping's picks (stream 0)."""


def scaled(values: np.ndarray, scale: np.ndarray | None) -> np.ndarray:
    """Records divided by a per-column positive scale (the distance space).

    Args:
        values: ``(n, d)`` records.
        scale: ``(d,)`` positive finite scales, or ``None`` for 1.

    Returns:
        A float64 ``(n, d)`` array.

    Raises:
        ValueError: On a non-finite input or a scale of the wrong shape or not positive.
    """
    x = _as_matrix(values)
    if scale is None:
        return x
    s = np.asarray(scale, dtype=np.float64).reshape(-1)
    if s.shape != (x.shape[1],) or not np.all(np.isfinite(s)) or np.any(s <= 0.0):
        raise ValueError(f"scale must be {x.shape[1]} positive finite numbers")
    return x / s


def static_groups(
    values: np.ndarray, k: int, seed: int, *, scale: np.ndarray | None = None
) -> np.ndarray:
    """Aggarwal and Yu's static condensation groups (see the module docstring).

    Args:
        values: ``(n, d)`` records (finite).
        k: The group size (at least 1).
        seed: The job's seed (the random picks).
        scale: Optional ``(d,)`` positive per-column scale of the distance.

    Returns:
        An int64 ``(n,)`` array: each record's group label (``0..n // k - 1``).

    Raises:
        ValueError: If ``k < 1``, or ``0 < n < k`` (no group of ``k`` can be formed).
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    x = scaled(values, scale)
    n = x.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return labels
    if n < k:
        raise ValueError(f"{n} records cannot form a group of k={k}")
    remaining = np.arange(n)
    centroids = []
    step = 0
    while remaining.size >= k:
        u = counter_uniforms(seed, 0, np.array([step], dtype=np.int64), lane=STATIC_LANE)[0]
        pick = int(u * remaining.size)
        start_row = remaining[pick]
        others = np.delete(remaining, pick)
        dist = np.sum((x[others] - x[start_row]) ** 2, axis=1)
        nearest = others[np.argsort(dist, kind="stable")[: k - 1]]
        members = np.concatenate([[start_row], nearest])
        labels[members] = step
        centroids.append(x[members].mean(axis=0))
        remaining = remaining[labels[remaining] < 0]
        step += 1
    if remaining.size:
        cents = np.asarray(centroids)
        d2 = ((x[remaining][:, None, :] - cents[None, :, :]) ** 2).sum(axis=2)
        labels[remaining] = np.argmin(d2, axis=1)
    return labels
