"""Synthetic records from a group's statistics, and their per-group check (Aggarwal 2015, 20.3.1.4).

Aggarwal and Yu 2004 model a group as uniform and independent along the eigenvectors of
its covariance, with variance along each equal to its eigenvalue, centred on the group
mean. :func:`synthetic_records` draws independent records from that model (the paper's
draws, not centred afterwards); :func:`mean_tolerance` and :func:`covariance_tolerance`
bound how far the records' mean and covariance may stray from the group's, and
:func:`check_group` verifies both.

**What the records keep.** Each group's mean and covariance in expectation only: the
records' mean is the group's plus the mean of ``n`` independent keyed draws (standard
deviation ``sqrt(lambda_j / n)`` along axis ``j``), so no group's exact mean, total or
covariance is published, and neither is any record that dominates its group's totals (a
group of one large value among zeros: ``n * mean`` of its records is off the large value by
about that value). The whole release keeps the input's mean and covariance in expectation.

**Randomness.** The coordinates are keyed by the run's secret key (an object with the
``uniforms(stream, counters, lane)`` method of :class:`sparkanon.randomness.RunKey`):
stream :data:`~sparkanon.randomness.streams.SYNTHESIS_AXES` (static) or
:data:`~sparkanon.randomness.streams.SYNTHESIS_STREAM_AXES` (the stream), counter = the
group id, lane = ``(offset + r) * d + j`` for record ``r`` and axis ``j``. Without the key
the draws cannot be regenerated, so a group's statistics cannot be solved from its records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from sparkanon.algorithms.condensation.group_stats import GroupStats
from sparkanon.randomness.streams import SYNTHESIS_AXES


class Keyed(Protocol):
    """The run key's interface the draws use (:class:`sparkanon.randomness.RunKey`)."""

    def uniforms(self, stream: int, counters: np.ndarray, lane: int | np.ndarray = 0) -> np.ndarray:
        """Uniforms on (0, 1), one per counter."""
        ...

    def words(self, stream: int, counters: np.ndarray, lane: int | np.ndarray = 0) -> np.ndarray:
        """64 pseudorandom bits per counter."""
        ...


@dataclass(frozen=True)
class GroupDraws:
    """Where a group's synthetic draws come from: a key's stream, the group, its first record.

    Record ``r``'s coordinate ``j`` (of ``d``) is ``key.uniforms(stream, group_id,
    lane=(offset + r) d + j)``: the records are a function of ``(key, stream, group_id,
    offset)``.

    Attributes:
        key: The run key (secret: without it the records cannot be regenerated).
        group_id: The group's id (the counter; any int64).
        offset: The first record number; a group released more than once passes the
            number of records it already released, so its releases draw fresh records.
        stream: The key's stream (static or streaming condensation).
    """

    key: Keyed
    group_id: int
    offset: int = 0
    stream: int = SYNTHESIS_AXES

    def uniforms(self, count: int, d: int) -> np.ndarray:
        """``(count, d)`` uniforms on (0, 1): record ``r``, axis ``j`` at ``(offset + r) d + j``.

        Raises:
            ValueError: If ``(offset + count) * d`` reaches ``2**32`` (the lanes' range).
        """
        lanes = (np.arange(count, dtype=np.int64)[:, None] + int(self.offset)) * d + np.arange(d)
        counters = np.full(lanes.shape, int(self.group_id), dtype=np.int64)
        return self.key.uniforms(self.stream, counters, lanes)


MEAN_RTOL = 1e-9
"""The relative float tolerance added to :func:`mean_tolerance` by :func:`check_group`."""

COVARIANCE_RTOL = 1e-12
"""The relative float tolerance added to :func:`covariance_tolerance` by :func:`check_group`."""


def eigen_axes(covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A covariance's eigenvalues (descending, clipped at 0) and unit eigenvectors.

    ``np.linalg.eigh`` of the symmetrised matrix; the order is reversed to descending and
    negative eigenvalues (float error on a singular covariance) become 0. Sign convention:
    each eigenvector's component of largest absolute value (the first such, on a tie) is
    positive, so the result does not depend on the LAPACK build's signs. Eigenvectors of a
    repeated eigenvalue are not unique (any rotation within their space is one): they are
    reproducible on one platform, not necessarily across builds.

    Args:
        covariance: A ``(d, d)`` symmetric matrix.

    Returns:
        ``(eigenvalues, vectors)``: ``(d,)`` descending non-negative values and a
        ``(d, d)`` orthonormal matrix whose column ``j`` belongs to eigenvalue ``j``.

    Raises:
        ValueError: If the matrix is not square or not finite.
    """
    c = np.asarray(covariance, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] != c.shape[1]:
        raise ValueError(f"covariance must be a square matrix, got shape {c.shape}")
    if not np.all(np.isfinite(c)):
        raise ValueError("covariance must be finite")
    values, vectors = np.linalg.eigh((c + c.T) / 2.0)
    values = np.clip(values[::-1], 0.0, None)
    vectors = vectors[:, ::-1].copy()
    lead = np.argmax(np.abs(vectors), axis=0)
    signs = np.where(vectors[lead, np.arange(vectors.shape[1])] < 0.0, -1.0, 1.0)
    return values, vectors * signs


def _half_widths(eigenvalues: np.ndarray) -> np.ndarray:
    """``a_j = sqrt(3 lambda_j)``: the half-width of a uniform of variance ``lambda_j``.

    Args:
        eigenvalues: Non-negative eigenvalues.

    Returns:
        The half-widths.
    """
    return np.sqrt(3.0 * np.clip(np.asarray(eigenvalues, dtype=np.float64), 0.0, None))


def _check_bound_arguments(n: int, alpha: float) -> None:
    """Check the arguments of a Hoeffding bound: ``n >= 1`` records, ``alpha`` in (0, 1).

    Raises:
        ValueError: If ``n < 1`` or ``alpha`` is not in (0, 1).
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def axis_draws(eigenvalues: np.ndarray, count: int, draws: GroupDraws) -> np.ndarray:
    """Independent uniform coordinates along the eigen-axes (:func:`synthetic_records`' draws).

    ``z_rj = a_j (2 u_rj - 1)`` with ``a_j = sqrt(3 lambda_j)`` (uniform on ``[-a_j, a_j]``,
    mean 0, variance ``lambda_j``) and ``u_rj`` the group's uniforms
    (:meth:`GroupDraws.uniforms`).

    Args:
        eigenvalues: ``(d,)`` non-negative eigenvalues.
        count: The number of records ``n`` (non-negative).
        draws: Where the group's draws come from.

    Returns:
        A ``(count, d)`` array.

    Raises:
        ValueError: If ``(offset + count) * d`` reaches ``2**32`` (the lanes' range).
    """
    a = _half_widths(eigenvalues)
    return a * (2.0 * draws.uniforms(count, a.size) - 1.0)


def synthetic_records(stats: GroupStats, count: int, draws: GroupDraws) -> np.ndarray:
    """``count`` synthetic records of a group (Aggarwal and Yu 2004's static generation).

    With ``lambda, P = eigen_axes(stats.covariance())``: coordinates ``z`` along each
    eigenvector independent and uniform on ``[-sqrt(3 lambda_j), sqrt(3 lambda_j)]``
    (variance ``lambda_j``; :func:`axis_draws`), then ``mean + z P^T``.

    The records are not centred: their mean is the group's only in expectation (off it by
    ``sqrt(lambda_j / n)`` along axis ``j``, one standard deviation), so the group's exact
    mean and totals are not published. Their population covariance has expectation
    ``lambda_j (n - 1) / n`` along axis ``j``; about the group's mean, ``lambda_j``.
    ``count`` may differ from ``stats.count`` (the ``alpha * k`` option); ``count = 0``
    gives an empty array.

    Args:
        stats: The group's statistics (non-empty).
        count: The number of records to draw.
        draws: Where the group's draws come from (its key, stream, id and first record).

    Returns:
        A float64 ``(count, d)`` array.

    Raises:
        ValueError: On an empty group or a negative count or offset.
    """
    if count < 0 or draws.offset < 0:
        raise ValueError(f"count and offset must be non-negative, got {count} and {draws.offset}")
    mean = stats.mean()
    values, vectors = eigen_axes(stats.covariance())
    z = axis_draws(values, count, draws)
    return mean + z @ vectors.T


def keyed_order(
    key: Keyed, stream: int, groups: np.ndarray, offsets: np.ndarray | None = None
) -> np.ndarray:
    """A keyed permutation of synthetic records, so their order says nothing of their groups.

    Records are sorted by ``key.words(stream, group, lane=offset + r)``, ``r`` the record's
    index among its group's (in the given order): without the key the order is random.

    Args:
        key: The run key.
        stream: The key's stream of this order.
        groups: ``(n,)`` each record's group id, a group's records contiguous.
        offsets: ``(n,)`` the first record number of each record's group (default 0).

    Returns:
        An int64 ``(n,)`` permutation.
    """
    g = np.asarray(groups, dtype=np.int64)
    if not len(g):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    rank = np.arange(len(g)) - np.repeat(starts, np.diff(np.r_[starts, len(g)]))
    lanes = rank + (0 if offsets is None else np.asarray(offsets, dtype=np.int64))
    words = key.words(stream, g, lanes.astype(np.int64))
    return np.argsort(words, kind="stable").astype(np.int64)


def mean_tolerance(eigenvalues: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """A per-axis bound on the records' mean offset, valid with probability ``1 - alpha``.

    Along axis ``j`` the offset is the mean of ``n`` independent draws uniform on
    ``[-a_j, a_j]`` (``a_j = sqrt(3 lambda_j)``); Hoeffding's inequality with width
    ``2 a_j`` gives ``|zbar_j| <= a_j sqrt(2 ln(2 / alpha) / n)``.

    Args:
        eigenvalues: ``(d,)`` non-negative eigenvalues.
        n: The number of synthetic records (at least 1).
        alpha: The per-axis failure probability, in (0, 1).

    Returns:
        A ``(d,)`` array of non-negative bounds (0 on an axis of eigenvalue 0).

    Raises:
        ValueError: If ``n < 1`` or ``alpha`` is not in (0, 1).
    """
    _check_bound_arguments(n, alpha)
    return _half_widths(eigenvalues) * math.sqrt(2.0 * math.log(2.0 / alpha) / n)


def covariance_tolerance(eigenvalues: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """A per-entry bound on ``|S - diag(lambda)|``, valid with probability at least ``1 - alpha``.

    ``S`` is the population covariance of :func:`synthetic_records`' ``n`` records in the
    eigenbasis, ``S = (1/n) sum_r z_r z_r^T - zbar zbar^T`` for the draws ``z``. With
    ``a_j = sqrt(3 lambda_j)``, independent ``z_rj`` uniform on ``[-a_j, a_j]`` and
    Hoeffding's inequality (``P(|mean - E| >= t) <= 2 exp(-2 n t^2 / width^2)`` for i.i.d.
    terms in an interval of that width):

    * diagonal: ``S_jj - lambda_j = (mean(z_j^2) - lambda_j) - zbar_j^2``; ``z^2`` lies in
      ``[0, a_j^2]`` with mean ``lambda_j``, ``z`` in ``[-a_j, a_j]``. Giving each event
      ``alpha / 2`` with ``L = ln(4 / alpha)``:
      ``|S_jj - lambda_j| <= a_j^2 (sqrt(L / (2n)) + 2 L / n)``.
    * off-diagonal ``j != l``: ``S_jl = mean(z_j z_l) - zbar_j zbar_l``; ``z_j z_l`` lies in
      ``[-a_j a_l, a_j a_l]`` with mean 0. Giving each of the three events ``alpha / 3``
      with ``L = ln(6 / alpha)``: ``|S_jl| <= a_j a_l (sqrt(2 L / n) + 2 L / n)``.

    The bound shrinks like ``1 / sqrt(n)``; an axis with ``lambda = 0`` gets 0 (its draws
    are exactly 0). It is a union bound per entry, not a joint one over the matrix.

    Args:
        eigenvalues: ``(d,)`` non-negative eigenvalues.
        n: The number of synthetic records (at least 1).
        alpha: The per-entry failure probability, in (0, 1).

    Returns:
        A ``(d, d)`` symmetric matrix of non-negative bounds.

    Raises:
        ValueError: If ``n < 1`` or ``alpha`` is not in (0, 1).
    """
    _check_bound_arguments(n, alpha)
    a = _half_widths(eigenvalues)
    l_diag = math.log(4.0 / alpha)
    l_off = math.log(6.0 / alpha)
    off = np.outer(a, a) * (math.sqrt(2.0 * l_off / n) + 2.0 * l_off / n)
    diag = a * a * (math.sqrt(l_diag / (2.0 * n)) + 2.0 * l_diag / n)
    np.fill_diagonal(off, diag)
    return off


@dataclass(frozen=True)
class GroupCheck:
    """The result of :func:`check_group`.

    Attributes:
        mean_ok: The records' mean is within :func:`mean_tolerance` of the group's on every
            eigen-axis.
        covariance_ok: Every eigenbasis covariance entry is within its bound.
        mean_ratio: The largest ``|mean offset| / bound`` over the axes (<= 1 passes).
        covariance_ratio: The largest ``|S - diag(lambda)| / bound`` over the entries
            (<= 1 passes; 0 when every deviation and bound is 0).
    """

    mean_ok: bool
    covariance_ok: bool
    mean_ratio: float
    covariance_ratio: float

    @property
    def ok(self) -> bool:
        """Both tests pass."""
        return self.mean_ok and self.covariance_ok


def _ratio(deviation: np.ndarray, bound: np.ndarray) -> float:
    """The largest ``deviation / bound`` (0/0 counts as 0, x/0 as infinity).

    Args:
        deviation: Non-negative deviations.
        bound: Non-negative bounds of the same shape.

    Returns:
        The largest ratio.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(deviation == 0.0, 0.0, deviation / bound)
    return float(np.max(r)) if r.size else 0.0


def check_group(original: GroupStats, synthetic: np.ndarray, alpha: float) -> GroupCheck:
    """Verify a group's synthetic records against its statistics.

    With ``mu`` the group's mean, ``lambda, P`` its :func:`eigen_axes` and
    ``a = sqrt(max lambda)`` (its largest standard deviation):

    * mean: per axis ``j``, ``|(P^T (mean(synthetic) - mu))_j| <= mean_tolerance(lambda, n,
      alpha)_j + MEAN_RTOL * (max |mu| + a)`` (the second term, 1e-9 relative to the scale
      of the data, covers float rounding; an axis of eigenvalue 0 must match to it);
    * covariance: with ``S = P^T C P`` and ``C`` the records' population covariance
      (computed two-pass, about their own mean, so no cancellation), per entry
      ``|S - diag(lambda)| <= covariance_tolerance(lambda, n, alpha)
      + COVARIANCE_RTOL * (max |mu| + a) * a`` (the second term, 1e-12 relative, covers the
      rounding of records stored as ``mu + deviation``: about ``eps * |mu|`` per value).

    Args:
        original: The group's statistics (non-empty).
        synthetic: ``(n, d)`` synthetic records, ``n >= 1``.
        alpha: The per-entry failure probability of the mean and covariance bounds.

    Returns:
        The :class:`GroupCheck`.

    Raises:
        ValueError: On an empty group, no records or mismatched widths.
    """
    x = np.asarray(synthetic, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != original.d:
        raise ValueError(f"synthetic must have shape (n, {original.d}), got {x.shape}")
    n = x.shape[0]
    if n < 1:
        raise ValueError("no synthetic records to check")
    mu = original.mean()
    values, vectors = eigen_axes(original.covariance())
    a = math.sqrt(float(values[0]))
    got_mean = x.mean(axis=0)
    mean_tol = mean_tolerance(values, n, alpha) + MEAN_RTOL * (float(np.max(np.abs(mu))) + a)
    mean_ratio = _ratio(np.abs(vectors.T @ (got_mean - mu)), mean_tol)
    dev = x - got_mean
    s = vectors.T @ ((dev.T @ dev) / n) @ vectors
    float_tol = COVARIANCE_RTOL * (float(np.max(np.abs(mu))) + a) * a
    bound = covariance_tolerance(values, n, alpha) + float_tol
    cov_ratio = _ratio(np.abs(s - np.diag(values)), bound)
    return GroupCheck(mean_ratio <= 1.0, cov_ratio <= 1.0, mean_ratio, cov_ratio)
