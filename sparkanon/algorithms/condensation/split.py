"""Dynamic condensation: split a group along its principal eigenvector (eqs 20.8/20.9).

Aggarwal 2015, section 20.3.1.4.

The original records are gone in a stream, so a group that reaches ``2k`` records is split
under the condensation model (uniform and independent along each eigenvector): along the
principal eigenvector ``V`` (eigenvalue ``lambda_max``) the uniform's range is
``R = sqrt(12 lambda_max)`` (eq 20.8: a uniform's variance is its range squared over 12);
cutting it in half gives two uniforms of range ``R / 2`` whose means lie ``R / 4`` either
side of the parent's mean and whose variance is ``lambda_max / 4``. The other axes are
unchanged, so both children have covariance ``C = P Sigma P^T`` (eq 20.9) with ``Sigma``
the parent's eigenvalues after replacing ``lambda_max`` by ``lambda_max / 4``. Exercise 6:
the means are ``mu +- (R / 4) V = mu +- (sqrt(3 lambda_max) / 2) V``.
"""

from __future__ import annotations

import numpy as np

from sparkanon.algorithms.condensation.group_stats import GroupStats
from sparkanon.algorithms.condensation.synthesize import eigen_axes


def split_group(stats: GroupStats) -> tuple[GroupStats, GroupStats]:
    """Split a group in two along its principal eigenvector (eqs 20.8/20.9).

    ``lambda, P = eigen_axes(stats.covariance())``, ``V = P[:, 0]``,
    ``R = sqrt(12 lambda_0)``; the children have means ``mu + (R/4) V`` (first) and
    ``mu - (R/4) V`` (second), both covariance ``P diag(lambda_0 / 4, lambda_1, ...) P^T``,
    counts ``n // 2`` (first) and ``n - n // 2`` (second), and their sums are rebuilt with
    :meth:`GroupStats.from_moments` about the parent's shift. The order is fixed by
    :func:`eigen_axes`' sign convention (``V``'s largest component is positive).

    For an even ``n`` (the dynamic algorithm splits at exactly ``2k``) the children's pooled
    mean and pooled covariance are the parent's (between-children variance
    ``(R/4)^2 = 3 lambda_0 / 4`` plus within ``lambda_0 / 4``). For an odd ``n`` the pooled
    mean moves by ``-(R/4) V / n`` (the second child has one more record).

    Args:
        stats: The parent's statistics (at least 2 records).

    Returns:
        ``(plus_child, minus_child)``.

    Raises:
        ValueError: If the group has fewer than 2 records.
    """
    n = stats.count
    if n < 2:
        raise ValueError(f"a group needs at least 2 records to split, got {n}")
    mu = stats.mean()
    values, vectors = eigen_axes(stats.covariance())
    v = vectors[:, 0]
    offset = np.sqrt(12.0 * values[0]) / 4.0 * v
    child_values = values.copy()
    child_values[0] = values[0] / 4.0
    cov = (vectors * child_values) @ vectors.T
    first = GroupStats.from_moments(n // 2, mu + offset, cov, stats.shift)
    second = GroupStats.from_moments(n - n // 2, mu - offset, cov, stats.shift)
    return first, second
