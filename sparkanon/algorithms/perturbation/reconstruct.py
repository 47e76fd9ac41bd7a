"""Reconstruction of an attribute's distribution from its perturbed values (Aggarwal 2015, 20.2.1).

Each published value is ``z = x + y`` with ``y`` drawn from a public noise distribution
``Y``, independent of ``x``. The engine aggregates the published values into a histogram
over ``m`` *z-bins*; the driver reconstructs the distribution of ``X`` over ``k`` *x-bins*
from those ``m`` counts alone. Everything here is pure numpy on bins (no row-level data).

**The kernel.** Both numeric methods run one fixed-point update over an ``m x k`` kernel
``K[j, i]``, read as ``P(Z in z-bin j | X in x-bin i)``:

* :func:`transition_from_pdf` - the discretization of Agrawal and Srikant 2000 (the
  textbook's eq. 20.5 "evaluated at the midpoints"): ``X`` sits at the midpoint ``a_i`` of
  its bin and ``K[j, i] = f_Y(zmid_j - a_i) * width_j`` (a one-point Riemann sum of the
  noise density over z-bin ``j``).
* :func:`transition_from_intervals` - the kernel of Agrawal and Aggarwal 2001: ``X``
  uniform within its bin and ``K[j, i] = P(Z in z-bin j | X in x-bin i)`` from the noise's
  interval probability ``P(lo <= Y < hi)``, averaged over ``sub_points`` points of the x-bin.

**Lost mass.** A column of ``K`` sums to ``coverage_i <= 1``: the probability that a value
of x-bin ``i`` lands inside the z range at all. Whatever falls outside the z edges is lost,
so the z edges should cover the x range widened by the noise's support (uniform noise) or
by far quantiles (Gaussian noise, e.g. +-6 sigma); :func:`covering_z_edges` builds such
edges. The update divides by ``coverage_i`` (the exact update for observations restricted
to the z range); with full coverage that is literally eq. 20.5. An x-bin with zero coverage
cannot be reconstructed and is a :class:`ValueError`; counts in a z-bin that no x-bin can
reach (an all-zero kernel row) are left out and reported as ``dropped``.

**The update** (start uniform over the x-bins), with ``n_j`` the count of z-bin ``j`` and
``N = sum_j n_j``::

    f_new(a_i) = (1 / N) * sum_j n_j * K[j, i] * f(a_i) / sum_l K[j, l] * f(a_l)

then (only when some coverage is below 1) ``f_new(a_i) / coverage_i`` renormalised to sum
1. ``f`` are the probabilities of the x-bins (the density times the bin width).

* :func:`bayes` - Agrawal and Srikant 2000 as the textbook states it: stopped by a
  chi-square comparison of successive estimates or by the mean change of the density.
* :func:`em` - Agrawal and Aggarwal 2001: the same fixed point over the interval kernel,
  stopped when the log-likelihood gain per observation falls below the tolerance.
* :func:`categorical_ibu` / :func:`categorical_inversion` - categorical attributes under
  randomized response / PRAM: the iterative Bayesian update (Agrawal, Srikant and Thomas
  2005; "IBU" in Kairouz, Bonawitz and Ramage 2016) over the transition matrix, and the
  matrix-inversion estimate with :func:`project_to_simplex`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

STOP_CHI_SQUARE = "chi_square"
STOP_CHANGE = "change_below_tolerance"
STOP_LIKELIHOOD = "likelihood_gain_below_tolerance"
STOP_MAX = "max_iterations"

DEFAULT_SUB_POINTS = 32
DEFAULT_SIGNIFICANCE = 0.05
DEFAULT_MAX_ITERATIONS = 5_000


@dataclass(frozen=True, eq=False)
class Reconstruction:
    """A reconstructed distribution over bins and how its iteration ended.

    Attributes:
        edges: the ``k + 1`` bin edges of X (``0 .. k`` for a categorical attribute).
        probabilities: the ``k`` bin probabilities (non-negative, sum 1).
        iterations: how many updates were applied.
        stopped_by: ``"chi_square"``, ``"change_below_tolerance"``,
            ``"likelihood_gain_below_tolerance"`` or ``"max_iterations"``.
        method: ``"bayes"``, ``"em"`` or ``"categorical_ibu"``.
        log_likelihood: ``sum_j n_j log(P(z-bin j) / P(in the z range))`` of the counts
            under the result (the multinomial log-likelihood without its constant).
        statistic: the last value of the stopping statistic (chi-square statistic, density
            change, log-likelihood gain per observation, or L1 change for IBU).
        dropped: observations in z-bins the kernel gives probability 0 (left out).
    """

    edges: np.ndarray
    probabilities: np.ndarray
    iterations: int
    stopped_by: str
    method: str
    log_likelihood: float = float("nan")
    statistic: float = float("nan")
    dropped: int = 0


# ----------------------------------------------------------------------------- kernels


def _check_edges(edges: np.ndarray, name: str) -> np.ndarray:
    """Validated strictly increasing finite edges (at least one bin)."""
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or e.size < 2:
        raise ValueError(f"{name}: need at least 2 edges, got shape {e.shape}")
    if not np.all(np.isfinite(e)) or np.any(np.diff(e) <= 0):
        raise ValueError(f"{name}: edges must be finite and strictly increasing")
    return e


def _midpoints(edges: np.ndarray) -> np.ndarray:
    """Midpoints of the bins of ``edges``."""
    return (edges[:-1] + edges[1:]) / 2.0


def _cap_columns(kernel: np.ndarray) -> np.ndarray:
    """Scale down any column summing above 1 (discretization overshoot) to sum exactly 1."""
    sums = kernel.sum(axis=0)
    return kernel / np.maximum(sums, 1.0)[None, :]


def _checked_values(values: object, shape: tuple[int, ...], what: str) -> np.ndarray:
    """The noise callable's output as a finite non-negative array of ``shape``."""
    v = np.asarray(values, dtype=np.float64)
    if v.shape != shape:
        raise ValueError(f"{what} returned shape {v.shape}, expected {shape} (must be vectorized)")
    if not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError(f"{what} returned negative or non-finite values")
    return v


def transition_from_pdf(
    x_edges: np.ndarray,
    z_edges: np.ndarray,
    noise_pdf: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """The midpoint kernel of Agrawal and Srikant 2000 (Aggarwal 2015, eq. 20.5 discretized).

    ``K[j, i] = noise_pdf(zmid_j - a_i) * width_j`` with ``a_i`` the midpoint of x-bin
    ``i`` and ``zmid_j``, ``width_j`` the midpoint and width of z-bin ``j``: the density of
    ``Z`` at ``zmid_j`` given ``X = a_i``, integrated over z-bin ``j`` by one midpoint
    point. Normalisation: a column that sums above 1 (the Riemann sum overshooting) is
    scaled to sum exactly 1; a column below 1 is kept, its deficit read as the mass that
    lands outside the z range (and as the discretization's undershoot when the z range
    covers the support). A noise density with jumps (uniform noise) should not have a jump
    exactly on a difference ``zmid_j - a_i``: offset the grids or use
    :func:`transition_from_intervals`.

    Args:
        x_edges: the ``k + 1`` edges of the x-bins.
        z_edges: the ``m + 1`` edges of the z-bins.
        noise_pdf: the noise density, vectorized: an array of offsets to an array of
            densities of the same shape.

    Returns:
        The ``m x k`` kernel, columns summing to at most 1.
    """
    x = _check_edges(x_edges, "x_edges")
    z = _check_edges(z_edges, "z_edges")
    offsets = _midpoints(z)[:, None] - _midpoints(x)[None, :]
    density = _checked_values(noise_pdf(offsets), offsets.shape, "noise_pdf")
    return _cap_columns(density * np.diff(z)[:, None])


def transition_from_intervals(
    x_edges: np.ndarray,
    z_edges: np.ndarray,
    noise_interval_probability: Callable[[np.ndarray, np.ndarray], np.ndarray],
    sub_points: int = DEFAULT_SUB_POINTS,
) -> np.ndarray:
    """The interval kernel of Agrawal and Aggarwal 2001: ``P(Z in z-bin j | X in x-bin i)``.

    ``X`` is uniform within its bin ``[l_i, u_i)``, so
    ``K[j, i] = (1 / (u_i - l_i)) * integral_{l_i}^{u_i} P(c_j - x <= Y < d_j - x) dx`` for
    z-bin ``[c_j, d_j)``. The integral is the midpoint rule over ``sub_points`` equally
    spaced points of the x-bin (default 32); the integrand is the noise's exact interval
    probability, so the only error is the quadrature's (zero where the integrand is linear
    in ``x``, as for uniform noise away from its two corners; ``O(sub_points^-2)`` for a
    smooth CDF). Columns sum to at most 1 (a float overshoot is scaled back to 1); the
    deficit is the mass that lands outside the z range.

    Args:
        x_edges: the ``k + 1`` edges of the x-bins.
        z_edges: the ``m + 1`` edges of the z-bins.
        noise_interval_probability: ``P(lo <= Y < hi)``, vectorized over two broadcast
            arrays ``lo`` and ``hi`` of the same shape.
        sub_points: quadrature points per x-bin (at least 1).

    Returns:
        The ``m x k`` kernel, columns summing to at most 1.
    """
    x = _check_edges(x_edges, "x_edges")
    z = _check_edges(z_edges, "z_edges")
    if sub_points < 1:
        raise ValueError(f"sub_points must be >= 1, got {sub_points}")
    fractions = (np.arange(sub_points) + 0.5) / sub_points
    points = x[:-1, None] + np.diff(x)[:, None] * fractions[None, :]  # k x S
    lo = z[:-1, None, None] - points[None, :, :]  # m x k x S
    hi = z[1:, None, None] - points[None, :, :]
    prob = _checked_values(
        noise_interval_probability(lo, hi), lo.shape, "noise_interval_probability"
    )
    return _cap_columns(prob.mean(axis=2))


def covering_z_edges(x_edges: np.ndarray, noise_low: float, noise_high: float) -> np.ndarray:
    """Z edges of the x-bins' width covering ``[x_min + noise_low, x_max + noise_high]``.

    The x edges are kept as z edges and extended on each side by whole bins of the first
    (last) x-bin's width until the widened range is covered, so no x value loses mass to
    noise inside ``[noise_low, noise_high]`` (the support of uniform noise, or far quantiles
    of Gaussian noise).

    Args:
        x_edges: the edges of the x-bins.
        noise_low: the lowest noise value to cover (<= 0).
        noise_high: the highest noise value to cover (>= 0).

    Returns:
        The z edges.
    """
    x = _check_edges(x_edges, "x_edges")
    if not (noise_low <= 0 <= noise_high):
        raise ValueError(f"need noise_low <= 0 <= noise_high, got {noise_low}, {noise_high}")
    w_lo, w_hi = x[1] - x[0], x[-1] - x[-2]
    n_lo = math.ceil(-noise_low / w_lo - 1e-9) if noise_low < 0 else 0
    n_hi = math.ceil(noise_high / w_hi - 1e-9) if noise_high > 0 else 0
    below = x[0] - w_lo * np.arange(n_lo, 0, -1)
    above = x[-1] + w_hi * np.arange(1, n_hi + 1)
    return np.concatenate([below, x, above])


# ----------------------------------------------------------------------------- the update


def _check_problem(
    counts: np.ndarray, kernel: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Validated counts and kernel, with unreachable z-bins dropped.

    Returns:
        ``(counts, kernel, coverage, dropped)``: the counts and kernel rows of reachable
        z-bins, the column sums of the full kernel, and how many observations were dropped.
    """
    n = np.asarray(counts, dtype=np.float64)
    K = np.asarray(kernel, dtype=np.float64)
    if K.ndim != 2:
        raise ValueError(f"kernel must be 2-D (z-bins x x-bins), got shape {K.shape}")
    if n.ndim != 1 or n.size != K.shape[0]:
        raise ValueError(f"counts: need {K.shape[0]} counts (one per kernel row), got {n.shape}")
    if not np.all(np.isfinite(n)) or np.any(n < 0):
        raise ValueError("counts must be finite and non-negative")
    if not np.all(np.isfinite(K)) or np.any(K < 0):
        raise ValueError("kernel must be finite and non-negative")
    coverage = K.sum(axis=0)
    if np.any(coverage > 1 + 1e-9):
        raise ValueError("kernel columns must sum to at most 1 (P(Z in z-bin | X in x-bin))")
    empty = np.flatnonzero(coverage <= 0)
    if empty.size:
        raise ValueError(
            f"x-bin {int(empty[0])} has no probability of landing in the z range: widen z_edges"
        )
    reachable = K.sum(axis=1) > 0
    dropped = int(round(n[~reachable].sum()))
    n, K = n[reachable], K[reachable]
    if n.sum() <= 0:
        raise ValueError("no observations in a z-bin the kernel can reach")
    return n, K, np.minimum(coverage, 1.0), dropped


def update(
    probabilities: np.ndarray, counts: np.ndarray, kernel: np.ndarray, coverage: np.ndarray
) -> np.ndarray:
    """One fixed-point update (eq. 20.5 discretized, with the lost-mass correction).

    ``f_new_i ∝ (f_i / coverage_i) * sum_j n_j K[j, i] / sum_l K[j, l] f_l``, normalised to
    sum 1; with full coverage the normaliser is ``1 / N`` (the textbook's form).

    Args:
        probabilities: the current ``k`` probabilities.
        counts: the ``m`` counts of reachable z-bins.
        kernel: their ``m x k`` kernel rows.
        coverage: the ``k`` column sums of the kernel.

    Returns:
        The updated probabilities.
    """
    predicted = kernel @ probabilities
    ratio = np.divide(counts, predicted, out=np.zeros_like(counts), where=predicted > 0)
    new = probabilities * (kernel.T @ ratio) / coverage
    return new / new.sum()


def log_likelihood(counts: np.ndarray, kernel: np.ndarray, probabilities: np.ndarray) -> float:
    """``sum_j n_j log(P(z-bin j) / P(Z in the z range))`` under ``probabilities``.

    The multinomial log-likelihood of the histogram restricted to the z range (without its
    constant); terms of empty bins are 0.

    Args:
        counts: the ``m`` counts.
        kernel: the ``m x k`` kernel.
        probabilities: the ``k`` x-bin probabilities.

    Returns:
        The log-likelihood (``-inf`` when an observed bin has probability 0).
    """
    n = np.asarray(counts, dtype=np.float64)
    predicted = np.asarray(kernel, dtype=np.float64) @ probabilities
    inside = predicted.sum()
    seen = n > 0
    with np.errstate(divide="ignore"):
        return float(np.sum(n[seen] * np.log(predicted[seen] / inside)))


def regularized_lower_gamma(a: float, x: float) -> float:
    """``P(a, x)``, the regularized lower incomplete gamma function (series / continued fraction).

    The series for ``x < a + 1``, Lentz's continued fraction for the upper function
    otherwise (Press et al., Numerical Recipes, 6.2), to relative precision 1e-14.

    Args:
        a: the shape (> 0).
        x: the argument (>= 0).

    Returns:
        ``P(a, x)`` in ``[0, 1]``.
    """
    if x <= 0:
        return 0.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(10_000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return min(1.0, total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return max(0.0, 1.0 - math.exp(log_front) * h)


def chi_square_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile of the chi-square distribution with ``df`` degrees of freedom.

    Bisection (to 1e-10 relative) on the CDF ``P(df / 2, x / 2)``; no scipy needed.

    Args:
        probability: in ``(0, 1)``.
        df: degrees of freedom (>= 1).

    Returns:
        ``x`` with ``P(chi2_df <= x) = probability``.
    """
    if not 0 < probability < 1 or df < 1:
        raise ValueError(f"need 0 < probability < 1 and df >= 1, got {probability}, {df}")
    lo, hi = 0.0, float(df) + 10.0 * math.sqrt(2.0 * df) + 50.0
    while regularized_lower_gamma(df / 2, hi / 2) < probability:
        hi *= 2
    while hi - lo > 1e-10 * max(1.0, hi):
        mid = (lo + hi) / 2
        if regularized_lower_gamma(df / 2, mid / 2) < probability:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def chi_square_statistic(old: np.ndarray, new: np.ndarray, n: float) -> float:
    """Pearson's statistic of ``n * new`` against the expected ``n * old`` (bins with old > 0).

    Args:
        old: the previous probabilities.
        new: the updated probabilities.
        n: the number of observations.

    Returns:
        ``sum_i n (new_i - old_i)^2 / old_i``.
    """
    held = old > 0
    return float(n * np.sum((new[held] - old[held]) ** 2 / old[held]))


def density_change(old: np.ndarray, new: np.ndarray, edges: np.ndarray) -> float:
    """Mean absolute change of the density at the midpoints, in units of the uniform density.

    ``mean_i |new_i - old_i| / width_i`` times the range ``edges[-1] - edges[0]``: scale
    free; with equal widths it is ``sum_i |new_i - old_i|`` (twice the L1 distance).

    Args:
        old: the previous probabilities.
        new: the updated probabilities.
        edges: the bin edges.

    Returns:
        The change.
    """
    widths = np.diff(edges)
    return float(np.mean(np.abs(new - old) / widths) * (edges[-1] - edges[0]))


def _iterate(
    step: Callable[[np.ndarray], tuple[np.ndarray, float]],
    k: int,
    threshold: float,
    max_iterations: int,
) -> tuple[np.ndarray, int, bool, float]:
    """Apply ``step`` from the uniform distribution until its statistic is below ``threshold``.

    Args:
        step: one update, returning the new probabilities and the stopping statistic.
        k: the number of bins.
        threshold: stop once the statistic is below it.
        max_iterations: the cap on updates (>= 1).

    Returns:
        ``(probabilities, iterations, converged, last statistic)``.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
    f = np.full(k, 1.0 / k)
    statistic = float("nan")
    iterations = 0
    while iterations < max_iterations:
        f, statistic = step(f)
        iterations += 1
        if statistic < threshold:
            return f, iterations, True, statistic
    return f, iterations, False, statistic


def bayes(
    z_counts: np.ndarray,
    kernel: np.ndarray,
    x_edges: np.ndarray,
    tolerance: float | None = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    stop: Literal["chi_square", "change"] = "chi_square",
    significance: float = DEFAULT_SIGNIFICANCE,
) -> Reconstruction:
    """The iterative Bayes reconstruction (Agrawal and Srikant 2000; Aggarwal 2015, eq. 20.5).

    Starts from the uniform distribution over the x-bins and applies :func:`update` until
    the stopping rule holds or ``max_iterations`` updates were applied. The textbook stops
    "when the distribution no longer changes significantly", by a chi-square test or by the
    mean change of the density at the midpoints; our readings:

    * ``stop="chi_square"`` (as Agrawal and Srikant 2000 implement it): Pearson's statistic
      of the new estimate's expected counts ``N f_new`` against ``N f_old``
      (:func:`chi_square_statistic`) falls below ``tolerance`` (default 0.01, "1% of the
      threshold") times the critical value of the chi-square test at ``significance``
      (default 0.05) with ``k - 1`` degrees of freedom.
    * ``stop="change"``: :func:`density_change` (mean absolute change of the density at the
      midpoints, relative to the uniform density) falls below ``tolerance`` (default 1e-3).

    Neither rule is proven to stop at the optimum (the textbook says as much); :func:`em`
    is the provably convergent variant.

    Args:
        z_counts: the ``m`` counts of the z-bins.
        kernel: the ``m x k`` kernel (typically :func:`transition_from_pdf`).
        x_edges: the ``k + 1`` x edges (carried into the result; the change rule uses the
            widths).
        tolerance: see above (``None``: the rule's default).
        max_iterations: the cap on updates.
        stop: ``"chi_square"`` or ``"change"``.
        significance: the chi-square test's level.

    Returns:
        The reconstruction, ``method="bayes"``.
    """
    if stop not in ("chi_square", "change"):
        raise ValueError(f"stop must be 'chi_square' or 'change', got {stop!r}")
    edges = _check_edges(x_edges, "x_edges")
    n, K, coverage, dropped = _check_problem(z_counts, kernel)
    if K.shape[1] != edges.size - 1:
        raise ValueError(f"kernel has {K.shape[1]} columns but x_edges {edges.size - 1} bins")
    k = K.shape[1]
    if stop == "chi_square":
        tol = 0.01 if tolerance is None else tolerance
        threshold = tol * chi_square_quantile(1 - significance, max(k - 1, 1))
    else:
        threshold = 1e-3 if tolerance is None else tolerance
    total = float(n.sum())

    def step(f: np.ndarray) -> tuple[np.ndarray, float]:
        new = update(f, n, K, coverage)
        if stop == "chi_square":
            return new, chi_square_statistic(f, new, total)
        return new, density_change(f, new, edges)

    f, iterations, converged, statistic = _iterate(step, k, threshold, max_iterations)
    stopped = (STOP_CHI_SQUARE if stop == "chi_square" else STOP_CHANGE) if converged else STOP_MAX
    return _result(edges, f, iterations, stopped, "bayes", n, K, statistic, dropped)


def em(
    z_counts: np.ndarray,
    kernel: np.ndarray,
    x_edges: np.ndarray,
    tolerance: float = 1e-7,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
) -> Reconstruction:
    """EM reconstruction (Agrawal and Aggarwal 2001) over the interval kernel.

    The histogram is a multinomial sample of ``Z`` restricted to the z range; the missing
    data are the x-bins the observations came from. The E-step gives each z-bin's posterior
    over the x-bins, ``K[j, i] f_i / sum_l K[j, l] f_l``; the M-step sets ``f_i`` to the
    expected share of observations from x-bin ``i``, divided by ``coverage_i`` for the mass
    that lands outside the z range (the EM of a truncated sample, Shepp and Vardi 1982):
    exactly :func:`update`. Why it converges: each step is an EM step, so the
    log-likelihood (:func:`log_likelihood`) never decreases; it is bounded above by 0, so
    the gains go to 0 and the rule below stops. Maximising it over the simplex is
    maximising the Poisson likelihood ``sum_j n_j log (K l)_j - sum_i coverage_i l_i`` over
    unnormalised ``l >= 0`` (the scale profiles out), which is concave, and this update is
    its ML-EM (Shepp and Vardi 1982), which converges to a maximiser (Vardi, Shepp and
    Kaufman 1985); with full coverage it is the multinomial EM whose convergence to the MLE
    Agrawal and Aggarwal 2001 prove.

    How it differs from :func:`bayes`: the same fixed-point form, but (1) the kernel is the
    interval probability with ``X`` uniform in its bin (:func:`transition_from_intervals`),
    not the noise density at the bin midpoints, and (2) it stops when the log-likelihood
    gain per observation, ``(L_new - L_old) / N``, falls below ``tolerance`` (default 1e-7),
    not by comparing successive estimates.

    Args:
        z_counts: the ``m`` counts of the z-bins.
        kernel: the ``m x k`` kernel (typically :func:`transition_from_intervals`).
        x_edges: the ``k + 1`` x edges (carried into the result).
        tolerance: the log-likelihood gain per observation to stop below.
        max_iterations: the cap on updates.

    Returns:
        The reconstruction, ``method="em"``.
    """
    edges = _check_edges(x_edges, "x_edges")
    n, K, coverage, dropped = _check_problem(z_counts, kernel)
    if K.shape[1] != edges.size - 1:
        raise ValueError(f"kernel has {K.shape[1]} columns but x_edges {edges.size - 1} bins")
    k = K.shape[1]
    total = float(n.sum())

    def step(f: np.ndarray) -> tuple[np.ndarray, float]:
        new = update(f, n, K, coverage)
        return new, (log_likelihood(n, K, new) - log_likelihood(n, K, f)) / total

    f, iterations, converged, statistic = _iterate(step, k, tolerance, max_iterations)
    stopped = STOP_LIKELIHOOD if converged else STOP_MAX
    return _result(edges, f, iterations, stopped, "em", n, K, statistic, dropped)


def _result(
    edges: np.ndarray,
    f: np.ndarray,
    iterations: int,
    stopped: str,
    method: str,
    n: np.ndarray,
    K: np.ndarray,
    statistic: float,
    dropped: int,
) -> Reconstruction:
    """A :class:`Reconstruction` with read-only arrays."""
    probabilities = np.clip(f, 0.0, None)
    probabilities = probabilities / probabilities.sum()
    edges = edges.copy()
    probabilities.setflags(write=False)
    edges.setflags(write=False)
    return Reconstruction(
        edges=edges,
        probabilities=probabilities,
        iterations=iterations,
        stopped_by=stopped,
        method=method,
        log_likelihood=log_likelihood(n, K, probabilities),
        statistic=float(statistic),
        dropped=dropped,
    )


# ----------------------------------------------------------------------------- categorical


def _check_matrix(observed_counts: np.ndarray, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validated counts and row-stochastic transition matrix (true x published)."""
    M = np.asarray(matrix, dtype=np.float64)
    n = np.asarray(observed_counts, dtype=np.float64)
    if M.ndim != 2:
        raise ValueError(f"matrix must be 2-D (true x published), got shape {M.shape}")
    if not np.all(np.isfinite(M)) or np.any(M < 0):
        raise ValueError("matrix must be finite and non-negative")
    if not np.allclose(M.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("matrix rows must sum to 1 (matrix[i, j] = P(published j | true i))")
    if n.ndim != 1 or n.size != M.shape[1]:
        raise ValueError(f"observed_counts: need {M.shape[1]} counts, got shape {n.shape}")
    if not np.all(np.isfinite(n)) or np.any(n < 0) or n.sum() <= 0:
        raise ValueError("observed_counts must be finite, non-negative and not all 0")
    return n, M


def categorical_ibu(
    observed_counts: np.ndarray,
    matrix: np.ndarray,
    tolerance: float = 1e-10,
    max_iterations: int = 100_000,
) -> Reconstruction:
    """The iterative Bayesian update for a randomized categorical attribute.

    ``matrix[i, j] = P(published j | true i)`` (rows sum to 1). Starting uniform,
    ``p_new_i = sum_j (n_j / N) * M[i, j] p_i / sum_l M[l, j] p_l`` (the numeric update
    with kernel ``M^T``, whose columns sum to 1): Agrawal, Srikant and Thomas 2005's
    reconstruction for randomized categories, "IBU" in Kairouz, Bonawitz and Ramage 2016.
    It is EM for the multinomial likelihood, so it converges to a maximum-likelihood
    estimate on the simplex. Stops when the L1 change ``sum_i |p_new_i - p_i|`` falls
    below ``tolerance`` (default 1e-10), or after ``max_iterations`` updates.

    Args:
        observed_counts: the counts of the published categories.
        matrix: the ``k x m`` transition matrix.
        tolerance: the L1 change to stop below.
        max_iterations: the cap on updates.

    Returns:
        The reconstruction over codes ``0 .. k - 1`` (``edges = 0 .. k``),
        ``method="categorical_ibu"``.
    """
    n, M = _check_matrix(observed_counts, matrix)
    n, K, coverage, dropped = _check_problem(n, M.T)
    k = K.shape[1]

    def step(f: np.ndarray) -> tuple[np.ndarray, float]:
        new = update(f, n, K, coverage)
        return new, float(np.abs(new - f).sum())

    f, iterations, converged, statistic = _iterate(step, k, tolerance, max_iterations)
    stopped = STOP_CHANGE if converged else STOP_MAX
    edges = np.arange(k + 1, dtype=np.float64)
    return _result(edges, f, iterations, stopped, "categorical_ibu", n, K, statistic, dropped)


def categorical_inversion(observed_counts: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """The matrix-inversion estimate: solve ``M^T p = n / N`` (unclipped).

    The unbiased estimate of the true distribution; it sums to 1 (rows of ``M`` sum to 1)
    but may have negative entries; :func:`project_to_simplex` maps it to a distribution.

    Args:
        observed_counts: the counts of the ``k`` published categories.
        matrix: the square ``k x k`` transition matrix, ``P(published j | true i)``.

    Returns:
        The ``k`` estimates.
    """
    n, M = _check_matrix(observed_counts, matrix)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"inversion needs a square matrix, got shape {M.shape}")
    if np.linalg.cond(M) > 1e12:
        raise ValueError("matrix is singular: the inversion estimate is undefined")
    return np.linalg.solve(M.T, n / n.sum())


def project_to_simplex(v: np.ndarray) -> np.ndarray:
    """The Euclidean projection of ``v`` onto the probability simplex.

    ``argmin_p ||p - v||_2`` over ``p >= 0, sum p = 1``: ``p_i = max(v_i - theta, 0)``
    with ``theta`` found by sorting (Held, Wolfe and Crowder 1974; Duchi et al. 2008).

    Args:
        v: any finite vector.

    Returns:
        The projection.
    """
    x = np.asarray(v, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("project_to_simplex needs a non-empty finite vector")
    u = np.sort(x)[::-1]
    cumulative = np.cumsum(u) - 1.0
    index = np.arange(1, x.size + 1)
    rho = np.flatnonzero(u - cumulative / index > 0)[-1]
    theta = cumulative[rho] / (rho + 1)
    return np.maximum(x - theta, 0.0)


def l1_distance(p: np.ndarray, q: np.ndarray) -> float:
    """The total variation distance ``1/2 sum_i |p_i - q_i|``.

    Args:
        p: a distribution over bins.
        q: another over the same bins.

    Returns:
        The distance, in ``[0, 1]`` for distributions.
    """
    a, b = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} and {b.shape}")
    return float(0.5 * np.abs(a - b).sum())
