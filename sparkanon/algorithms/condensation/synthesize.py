"""Synthetic records from a group's statistics, and their per-group check (Aggarwal 2015, 20.3.1.4).

Aggarwal and Yu 2004 model a group as uniform and independent along the eigenvectors of
its covariance, with variance along each equal to its eigenvalue, centred on the group
mean. :func:`synthetic_records` draws from that model, then centres the draws so the
records' mean is the group's mean exactly; :func:`covariance_tolerance` bounds how far the
records' covariance may stray from the eigenvalues, and :func:`check_group` verifies both.

**Randomness.** Coordinates come from
:func:`~sparkanon.algorithms.perturbation.noise.counter_uniforms` on lane
:data:`SYNTHESIS_LANE` (3; perturbation uses lanes 0, 1 and 2), stream = the group id,
row id = ``(offset + r) * d + j`` for record ``r`` and axis ``j``: a pure function of
``(seed, group id, offset, r, j)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sparkanon.algorithms.condensation.group_stats import GroupStats
from sparkanon.algorithms.perturbation.noise import counter_uniforms

SYNTHESIS_LANE = 3
"""The counter_uniforms lane of the synthetic coordinates (perturbation uses 0, 1, 2)."""

MEAN_RTOL = 1e-9
"""The relative float tolerance of :func:`check_group`'s mean test (see its docstring)."""

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


def axis_draws(eigenvalues: np.ndarray, count: int, seed: int, group_id: int, offset: int = 0):
    """Centred uniform coordinates along the eigen-axes (the draws of :func:`synthetic_records`).

    ``z_rj = a_j (2 u_rj - 1)`` with ``a_j = sqrt(3 lambda_j)`` (uniform on ``[-a_j, a_j]``,
    variance ``lambda_j``) and ``u_rj`` the counter uniform of row id ``(offset + r) d + j``,
    then each column minus its mean.

    Args:
        eigenvalues: ``(d,)`` non-negative eigenvalues.
        count: The number of records ``n`` (non-negative).
        seed: The job's seed.
        group_id: The group's id (the counter stream).
        offset: The first record number (e.g. the records the group already released).

    Returns:
        A ``(count, d)`` array whose columns sum to 0 (to float precision).
    """
    a = _half_widths(eigenvalues)
    d = a.size
    ids = (np.arange(count, dtype=np.int64)[:, None] + int(offset)) * d + np.arange(d)
    u = counter_uniforms(seed, group_id, ids, lane=SYNTHESIS_LANE)
    z = a * (2.0 * u - 1.0)
    if count:
        z -= z.mean(axis=0)
    return z


def synthetic_records(
    stats: GroupStats, count: int, seed: int, group_id: int, *, offset: int = 0
) -> np.ndarray:
    """``count`` synthetic records of a group (Aggarwal and Yu 2004's static generation).

    With ``lambda, P = eigen_axes(stats.covariance())``: coordinates ``z`` along each
    eigenvector uniform on ``[-sqrt(3 lambda_j), sqrt(3 lambda_j)]`` (variance
    ``lambda_j``; :func:`axis_draws`), centred per axis, then ``mean + z P^T``.

    Centring makes each axis' draws sum to 0, so the records' mean equals the group's
    mean to float precision (the release check requires it). It is a deviation from the
    paper's independent draws: the coordinates are no longer independent (they sum to 0)
    and no longer bounded by ``a_j`` (by ``2 a_j``), and the expected *population*
    variance of the records along axis ``j`` is ``lambda_j (n - 1) / n`` rather than
    ``lambda_j`` (the sample variance, over ``n - 1``, is unbiased for ``lambda_j``).
    ``count`` may differ from ``stats.count`` (the ``alpha * k`` option); ``count = 1``
    gives the mean itself, ``count = 0`` an empty array.

    Args:
        stats: The group's statistics (non-empty).
        count: The number of records to draw.
        seed: The job's seed.
        group_id: The group's id (the counter stream): records are reproducible from
            ``(seed, group_id, offset)``.
        offset: The first record number; a group released more than once should pass
            the number of records it already released, so its releases differ.

    Returns:
        A float64 ``(count, d)`` array.

    Raises:
        ValueError: On an empty group or a negative count or offset.
    """
    if count < 0 or offset < 0:
        raise ValueError(f"count and offset must be non-negative, got {count} and {offset}")
    mean = stats.mean()
    values, vectors = eigen_axes(stats.covariance())
    z = axis_draws(values, count, seed, group_id, offset)
    return mean + z @ vectors.T


def covariance_tolerance(eigenvalues: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """A per-entry bound on ``|S - diag(lambda)|``, valid with probability at least ``1 - alpha``.

    ``S`` is the population covariance of :func:`synthetic_records`' ``n`` records in the
    eigenbasis, ``S = (1/n) sum_r z_r z_r^T - zbar zbar^T`` for the *uncentred* draws
    ``z`` (centring does not change it). With ``a_j = sqrt(3 lambda_j)``, independent
    ``z_rj`` uniform on ``[-a_j, a_j]`` and Hoeffding's inequality
    (``P(|mean - E| >= t) <= 2 exp(-2 n t^2 / width^2)`` for i.i.d. terms in an interval
    of that width):

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
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
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
        mean_ok: The records' mean equals the group's within the float tolerance.
        covariance_ok: Every eigenbasis covariance entry is within its bound.
        mean_ratio: The largest ``|mean error| / tolerance`` over the columns (<= 1 passes).
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

    * mean: per column ``|mean(synthetic) - mu| <= MEAN_RTOL * (|mu| + a)`` (1e-9 relative
      to the scale of the data: the mean is exact up to float rounding);
    * covariance: with ``S = P^T C P`` and ``C`` the records' population covariance
      (computed two-pass, about their own mean, so no cancellation), per entry
      ``|S - diag(lambda)| <= covariance_tolerance(lambda, n, alpha)
      + COVARIANCE_RTOL * (max |mu| + a) * a`` (the second term, 1e-12 relative, covers the
      rounding of records stored as ``mu + deviation``: about ``eps * |mu|`` per value).

    Args:
        original: The group's statistics (non-empty).
        synthetic: ``(n, d)`` synthetic records, ``n >= 1``.
        alpha: The per-entry failure probability of the covariance bound.

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
    mean_tol = MEAN_RTOL * (np.abs(mu) + a)
    mean_ratio = _ratio(np.abs(got_mean - mu), mean_tol)
    dev = x - got_mean
    s = vectors.T @ ((dev.T @ dev) / n) @ vectors
    float_tol = COVARIANCE_RTOL * (float(np.max(np.abs(mu))) + a) * a
    bound = covariance_tolerance(values, n, alpha) + float_tol
    cov_ratio = _ratio(np.abs(s - np.diag(values)), bound)
    return GroupCheck(mean_ratio <= 1.0, cov_ratio <= 1.0, mean_ratio, cov_ratio)
