"""Sensitive-value entropies, the privacy safety index and the papers' quality metrics.

Shi, Zhang and Dong (2024): level entropy (eq. 1), class level entropy
HEC (eq. 2), privacy safety index PSI (eq. 21), entropy privacy protection EPP
(eq. 22), information loss rate R_IL (eq. 23).

Yang, Wang and Zhang (2014): class entropy Ent (eq. 14, base 2), AVG-IL
(eq. 17-18), AVG-Ent (eq. 19) and CAVG (eq. 20).
"""

from __future__ import annotations

import numpy as np


def sensitive_level_entropy(share: np.ndarray | float, base: float = 10.0) -> np.ndarray:
    """Level entropy ``H(l_i) = -p log_b p`` (Shi et al. 2024, eq. 1; the paper's "lg" is base 10).

    Args:
        share: ``p_{l_i}``, the share of a class's rows in level ``l_i``.
        base: logarithm base.

    Returns:
        The entropy term, 0 where the share is 0.
    """
    p = np.asarray(share, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = -p * np.log(p) / np.log(base)
    return np.where(p > 0, term, 0.0)


def class_level_entropy(
    level_counts: np.ndarray, weights: np.ndarray, base: float = 10.0
) -> np.ndarray:
    """Class level entropy ``HEC = sum_i w_i H(l_i)`` (Shi et al. 2024, eq. 2).

    Args:
        level_counts: rows per level, shape ``(L,)`` for one class or ``(m, L)``
            for ``m`` classes.
        weights: ``w_i`` per level, shape ``(L,)``.
        base: logarithm base of eq. 1.

    Returns:
        HEC of the class (a scalar array) or of each class.
    """
    counts = np.asarray(level_counts, dtype=float)
    total = counts.sum(axis=-1, keepdims=True)
    shares = counts / np.where(total > 0, total, 1.0)
    return (sensitive_level_entropy(shares, base) * weights).sum(axis=-1)


def privacy_safety_index(
    hec: np.ndarray, info_loss: np.ndarray, w1: float, w2: float
) -> np.ndarray:
    """Privacy safety index ``PSI = w1 HEC + w2 / InfoLoss`` (Shi et al. 2024, eq. 21).

    The paper leaves ``InfoLoss = 0`` undefined (a class of identical
    quasi-identifiers). We take ``w2 / 0 = +inf`` when ``w2 > 0``: a class that
    loses nothing is the safest choice; :func:`best_by_psi` breaks ties between
    such classes by HEC. When ``w2 = 0`` the loss term is dropped.

    Args:
        hec: HEC of each candidate class.
        info_loss: InfoLoss of each candidate class.
        w1: weight of the entropy term.
        w2: weight of the inverse-loss term (``w1 + w2 = 1``).

    Returns:
        PSI of each candidate.
    """
    hec = np.asarray(hec, dtype=float)
    il = np.asarray(info_loss, dtype=float)
    if w2 == 0:
        return w1 * hec
    with np.errstate(divide="ignore"):
        inv = np.where(il > 0, 1.0 / np.where(il > 0, il, 1.0), np.inf)
    return w1 * hec + w2 * inv


ZERO_LOSS = 1e-12
"""Losses at or below this are treated as zero (floating-point noise of equal centroids)."""

QUANTUM = 2.0**-30
"""The grid every greedy decision of MAA-SLIE compares scores on (:func:`quantise`)."""


def quantise(x: np.ndarray | float) -> np.ndarray:
    """Round scores to the nearest multiple of :data:`QUANTUM` (``2**-30``), halves up.

    Every argmax/argmin decision of MAA-SLIE (the central and the farthest row, the
    row or class of largest PSI) compares quantised scores and gives ties to the
    lowest row position or class id, so two computations of the same score that
    differ only in rounding (another summation order, a compiled loop instead of
    numpy, see :mod:`sparkanon.algorithms.blocks._slie_kernel`) take the same decision.

    Why an absolute ``2**-30`` grid: distances, InfoLoss and HEC are sums of
    non-negative terms of magnitude ``1e-3`` to ``1e2`` whose rounding error is
    absolute (a few units of ``1e-16`` to ``1e-14``), so a relative grid would be
    too fine for small losses. ``2**-30`` (about ``9.3e-10``) is five orders of
    magnitude above that noise, below any difference that means something (codes are
    normalised to ``[0, 1]``), and a power of two: ``x * 2**30`` is exact, dyadic
    values such as ``0.5`` lie on the grid, and a tie between two equal rationals
    of small denominator ``q`` (the usual exact tie: ordinal steps ``1/(V-1)``,
    taxonomy levels, ages over their range) lies at least ``QUANTUM / (2 q')`` from a
    rounding boundary (``q'`` the odd part of ``q``), far above the noise.
    ``floor(x * 2**30 + 0.5) / 2**30`` uses only exactly rounded operations, so
    numpy and the compiled kernel quantise identically.

    Args:
        x: scores (any shape).

    Returns:
        The quantised scores, as floats.
    """
    scale = 1.0 / QUANTUM
    return np.floor(np.asarray(x, dtype=float) * scale + 0.5) / scale


def best_by_psi(hec: np.ndarray, info_loss: np.ndarray, w1: float, w2: float) -> int:
    """Index of the candidate of largest PSI (eq. 21), deterministic on ties.

    Candidates with zero loss (``InfoLoss <= ZERO_LOSS``, PSI infinite) win; among
    them the largest HEC, then the lowest index. Otherwise the largest PSI, then
    the lowest index. Scores are compared on the :func:`quantise` grid: HEC and
    InfoLoss are quantised first (a non-zero loss that rounds to 0 counts as one
    :data:`QUANTUM`), PSI ``= w1 HEC + w2 / InfoLoss`` is computed from them
    (:func:`privacy_safety_index`) and quantised again.
    """
    hec_q = quantise(hec)
    il = np.asarray(info_loss, dtype=float)
    if w2 > 0:
        zero = np.flatnonzero(il <= ZERO_LOSS)
        if zero.size:
            return int(zero[np.argmax(hec_q[zero])])
        il = np.maximum(quantise(il), QUANTUM)
    return int(np.argmax(quantise(privacy_safety_index(hec_q, il, w1, w2))))


def information_loss_rate(total_info_loss: float, n_rows: int) -> float:
    """R_IL: summed InfoLoss of all classes over the number of rows (Shi et al. 2024, eq. 23)."""
    return float(total_info_loss) / n_rows if n_rows else 0.0


def sensitive_entropy(value_counts: np.ndarray) -> np.ndarray:
    """Entropy of the sensitive values of a class, base 2 (Yang et al. 2014, eq. 14).

    Args:
        value_counts: rows per sensitive value, ``(S,)`` or ``(m, S)``.

    Returns:
        ``-sum p_i log2 p_i`` of the class or of each class.
    """
    counts = np.asarray(value_counts, dtype=float)
    total = counts.sum(axis=-1, keepdims=True)
    p = counts / np.where(total > 0, total, 1.0)
    return sensitive_level_entropy(p, base=2.0).sum(axis=-1)


def normalized_average_class_size(n_rows: int, n_classes: int, k: int) -> float:
    """CAVG = (total records / number of classes) / k (Yang et al. 2014, eq. 20, LeFevre et al.)."""
    return (n_rows / n_classes) / k if n_classes else 0.0


def entropy_increment(ent_before: np.ndarray | float, ent_after: np.ndarray | float) -> np.ndarray:
    """Sensitive entropy increment ``EA(G, G') = Ent(G') - Ent(G)`` (Yang et al. 2014, eq. 15).

    Args:
        ent_before: ``Ent(G)`` (eq. 14), a scalar or one per candidate.
        ent_after: ``Ent(G')`` of each candidate grown class ``G'``.

    Returns:
        The increment of each candidate (negative when ``G'`` is less even than ``G``).
    """
    return np.asarray(ent_after, dtype=float) - np.asarray(ent_before, dtype=float)


def information_loss_increment(
    loss_before: np.ndarray | float, loss_after: np.ndarray | float
) -> np.ndarray:
    """Incremental information loss ``ILA(G, G') = IL(G') - IL(G)`` (Yang et al. 2014, eq. 13).

    Args:
        loss_before: ``IL(G)`` (eq. 12), a scalar or one per candidate.
        loss_after: ``IL(G')`` of each candidate grown class ``G'``.

    Returns:
        The increment of each candidate.
    """
    return np.asarray(loss_after, dtype=float) - np.asarray(loss_before, dtype=float)


ZERO_ENTROPY = 1e-12
"""Entropy increments of at most this size are treated as zero (floating-point noise)."""


def anonymous_protection_factor(ea: np.ndarray | float, ila: np.ndarray | float) -> np.ndarray:
    """Anonymous protection factor ``APF(G, G') = EA / ILA`` (Yang et al. 2014, eq. 16), vectorised.

    The paper leaves ``ILA = 0`` undefined (a candidate that adds no loss). As for
    PSI (:func:`privacy_safety_index`, ``w2 / 0 = +inf``) a loss-free candidate
    is taken as the extreme of its sign: ``+inf`` when ``EA > 0`` (it ranks above
    every candidate with ``ILA > 0``), ``0`` when ``EA = 0`` and ``-inf`` when
    ``EA < 0``. An increment at or below :data:`ZERO_LOSS` counts as zero; this
    includes a negative ``ILA``, which centroid rules that do not minimise the
    loss (medoid, rounded ordinal mean) can produce: the candidate loses nothing,
    as :func:`best_by_psi` treats such losses. ``|EA| <= ZERO_ENTROPY`` counts as
    ``EA = 0``.

    Args:
        ea: entropy increment of each candidate (eq. 15).
        ila: information loss increment of each candidate (eq. 13).

    Returns:
        APF of each candidate (never NaN).
    """
    ea, ila = np.broadcast_arrays(np.asarray(ea, dtype=float), np.asarray(ila, dtype=float))
    zero = ila <= ZERO_LOSS
    at_zero = np.where(ea > ZERO_ENTROPY, np.inf, np.where(ea < -ZERO_ENTROPY, -np.inf, 0.0))
    return np.where(zero, at_zero, ea / np.where(zero, 1.0, ila))


def best_by_apf(ea: np.ndarray, ila: np.ndarray) -> int:
    """Index of the candidate of largest APF (eq. 16), deterministic on ties.

    Ties (including several ``+inf`` loss-free candidates) go to the larger
    ``EA``, then to the lowest index.

    Args:
        ea: entropy increment of each candidate (eq. 15), non-empty.
        ila: information loss increment of each candidate (eq. 13).

    Returns:
        The index of the best candidate.
    """
    ea = np.asarray(ea, dtype=float)
    apf = anonymous_protection_factor(ea, ila)
    # lexsort: the last key is the primary one; a stable sort keeps the lowest index first.
    return int(np.lexsort((-ea, -apf))[0])
