"""The covariance compatibility measure of Aggarwal and Yu 2004.

How well a synthetic data set keeps the original's second-order structure: the Pearson
correlation coefficient between the entries of the original's and of the synthetic's
covariance matrices (1 when one is an increasing linear function of the other).

**Which entries.** The upper triangle with the diagonal (``i <= j``): the distinct
pairwise covariances of a symmetric matrix, each once. Using all ``d^2`` entries would
count every off-diagonal covariance twice and the variances once, weighting the measure
towards the pairs for no reason; dropping the diagonal would ignore the variances, which
the synthetic generation is meant to keep too. Aggarwal and Yu describe the measure on the
pairwise entries of the two matrices; the distinct pairs are our reading.
"""

from __future__ import annotations

import numpy as np


def covariance_compatibility(original: np.ndarray, synthetic: np.ndarray) -> float:
    """Pearson correlation between the upper-triangle (with diagonal) covariance entries.

    Args:
        original: The ``(d, d)`` covariance matrix of the original data.
        synthetic: The ``(d, d)`` covariance matrix of the synthetic data.

    Returns:
        The correlation in [-1, 1], or NaN when either set of entries is constant (e.g.
        ``d = 1``, a single entry): the correlation is undefined there.

    Raises:
        ValueError: If the matrices are not square of the same shape or not finite.
    """
    a = np.asarray(original, dtype=np.float64)
    b = np.asarray(synthetic, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape != b.shape:
        raise ValueError(
            f"expected two square covariance matrices of one shape, got {a.shape} and {b.shape}"
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("covariance matrices must be finite")
    rows, cols = np.triu_indices(a.shape[0])
    x = a[rows, cols] - a[rows, cols].mean()
    y = b[rows, cols] - b[rows, cols].mean()
    sxx = float(x @ x)
    syy = float(y @ y)
    if sxx == 0.0 or syy == 0.0:
        return float("nan")
    return float(np.clip((x @ y) / np.sqrt(sxx * syy), -1.0, 1.0))


def correlation_compatibility(original: np.ndarray, synthetic: np.ndarray) -> float:
    """The measure over the off-diagonal entries after standardizing by the original's scale.

    Both matrices divided by ``sigma_i sigma_j`` (``sigma`` the original's standard
    deviations; a zero one taken as 1), then the Pearson correlation of their strictly
    upper-triangle entries: how well the synthetic data keeps the *associations* between
    attributes. :func:`covariance_compatibility` over raw entries is near 1 whenever one
    attribute's variance dwarfs the others (Adult's fnlwgt: a release with no association
    at all scores 1.0 to six digits), and over standardized entries the ``d`` diagonal
    ones still outweigh the associations; this reading has no such floor.

    Args:
        original: The ``(d, d)`` covariance matrix of the original data (``d >= 3``).
        synthetic: The ``(d, d)`` covariance matrix of the synthetic data.

    Returns:
        The correlation in [-1, 1], or NaN when there are fewer than two off-diagonal
        entries or either set is constant.
    """
    a = np.asarray(original, dtype=np.float64)
    b = np.asarray(synthetic, dtype=np.float64)
    covariance_compatibility(a, b)  # the same shape and finiteness checks
    sigma = np.sqrt(np.clip(np.diag(a), 0.0, None))
    sigma = np.where(sigma > 0, sigma, 1.0)
    scale = np.outer(sigma, sigma)
    rows, cols = np.triu_indices(a.shape[0], 1)
    if len(rows) < 2:
        return float("nan")
    x = (a / scale)[rows, cols]
    y = (b / scale)[rows, cols]
    x, y = x - x.mean(), y - y.mean()
    sxx, syy = float(x @ x), float(y @ y)
    if sxx == 0.0 or syy == 0.0:
        return float("nan")
    return float(np.clip((x @ y) / np.sqrt(sxx * syy), -1.0, 1.0))
