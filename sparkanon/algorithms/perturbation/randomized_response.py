"""Randomized response / PRAM for categorical attributes (Aggarwal 2015, section 20.2).

**The matrix.** A transition matrix ``P`` has one row per true value and one column per
published value: ``P[i, j]`` is the probability that a row whose true code is ``i`` is
published as ``j``, so every row sums to 1. This is the orientation of sdcMicro's ``pram``
(Templ, Kowarik and Meindl; its ``pd`` argument is the minimum of the diagonal, the
probability of keeping a value, and its generated matrix has row sums 1) and of Warner's
1965 randomized response ("Randomized response: a survey technique for eliminating evasive
answer bias", JASA): with ``k = 2`` the respondent reports the true membership with
probability ``p`` and the other one with ``1 - p``, i.e. ``pram_matrix(2, p)``.

:func:`pram_matrix` builds the matrix of one *retention* probability ``r``: ``P[i, i] = r``
and the rest spread evenly, ``P[i, j] = (1 - r) / (k - 1)``; with ``r = e^eps / (e^eps + k
- 1)`` this is the k-ary randomized response of local differential privacy (k-RR).
sdcMicro's default is different on two counts this module does not follow: it draws each
diagonal entry at random in ``[pd, 1]`` and then makes the matrix *invariant* (Gouweleeuw
et al. 1998: the expected published frequencies equal the observed ones), which ties the
matrix to the data; here the matrix depends on ``k`` and ``r`` only, so it can be published
before any data is read and its epsilon does not depend on the data.

**Local DP.** A matrix satisfies ``eps``-local differential privacy for
``eps = max_j ln(max_i P[i, j] / min_i P[i, j])``: the largest ratio of two entries of a
column (two true values giving the same published one). :func:`ldp_epsilon` computes it;
a column with a 0 and a non-zero entry gives ``inf`` (that output rules some true values
out), an all-zero column (never published) gives nothing. For :func:`pram_matrix` it is
``ln(r (k - 1) / (1 - r))`` when ``r >= 1/k``, the inverse of :func:`retention_for_epsilon`.

**Randomizing.** :func:`randomize` replaces each code by the inverse-CDF draw of its row of
``P`` with one uniform per row from the run's secret key (lane 0 of the attribute's
stream, :meth:`~sparkanon.randomness.RunKey.uniforms`), so a row's published code depends
only on the key, the stream, its row counter and its code. Without the key nobody can tell
which rows kept their value: the epsilon above holds against a reader who knows the code,
the config (its ``seed`` plays no part) and the rows' positions.
"""

from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sparkanon.randomness import RunKey

_BELOW_ONE = np.nextafter(1.0, 0.0)
ROW_SUM_TOLERANCE = 1e-9
"""How far a transition matrix's row sums may be from 1 (rounding of published matrices)."""


def _check_k(k: int) -> int:
    """The number of categories as an int >= 2.

    Args:
        k: The value.

    Returns:
        ``k``.

    Raises:
        ValueError: If it is not an integer >= 2.
    """
    if isinstance(k, (bool, np.bool_)):
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    try:
        value = operator.index(k)
    except TypeError:
        raise ValueError(f"k must be an integer >= 2, got {k!r}") from None
    if value < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    return value


def pram_matrix(k: int, retention: float) -> np.ndarray:
    """The k x k PRAM matrix keeping a value with probability ``retention``.

    Row ``i`` is the distribution of the published code given the true code ``i``:
    ``P[i, i] = retention`` and ``P[i, j] = (1 - retention) / (k - 1)`` for ``j != i``
    (Warner 1965 for ``k = 2``; sdcMicro's ``pram`` orientation, without its random
    diagonal and invariance step; see the module docstring). A retention below ``1/k``
    is allowed (the other values become likelier than the true one).

    Args:
        k: The number of categories (>= 2).
        retention: The probability of publishing the true value, in (0, 1].

    Returns:
        A float64 (k, k) array whose rows sum to 1.

    Raises:
        ValueError: If ``k < 2`` or ``retention`` is not in (0, 1].
    """
    k = _check_k(k)
    r = float(retention)
    if not 0.0 < r <= 1.0:
        raise ValueError(f"retention must be in (0, 1], got {retention!r}")
    matrix = np.full((k, k), (1.0 - r) / (k - 1), dtype=np.float64)
    np.fill_diagonal(matrix, r)
    return matrix


def retention_for_epsilon(k: int, epsilon: float) -> float:
    """The k-RR retention of a local-DP epsilon: ``e^eps / (e^eps + k - 1)``.

    Computed as ``1 / (1 + (k - 1) e^-eps)`` (no overflow for a large epsilon); ``eps = 0``
    gives ``1/k`` (the published value says nothing), ``eps = inf`` gives 1.

    Args:
        k: The number of categories (>= 2).
        epsilon: The epsilon, >= 0 (``inf`` allowed).

    Returns:
        The retention for :func:`pram_matrix`.

    Raises:
        ValueError: If ``k < 2`` or ``epsilon`` is negative or NaN.
    """
    k = _check_k(k)
    eps = float(epsilon)
    if math.isnan(eps) or eps < 0.0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    return 1.0 / (1.0 + (k - 1) * math.exp(-eps))


def check_transition_matrix(matrix: np.ndarray) -> np.ndarray:
    """A transition matrix validated: 2-D, finite, non-negative, rows summing to 1.

    Args:
        matrix: Rows = true codes, columns = published codes.

    Returns:
        The matrix as a float64 array.

    Raises:
        ValueError: Naming the first bad row or entry.
    """
    p = np.asarray(matrix, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] < 1 or p.shape[1] < 1:
        raise ValueError(f"a transition matrix must be a non-empty 2-D array, got shape {p.shape}")
    bad = ~np.isfinite(p) | (p < 0.0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"transition matrix entry [{i}, {j}] must be finite and >= 0")
    sums = p.sum(axis=1)
    off = np.abs(sums - 1.0) > ROW_SUM_TOLERANCE
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise ValueError(f"transition matrix row {i} sums to {sums[i]!r}, not 1")
    return p


def ldp_epsilon(matrix: np.ndarray) -> float:
    """The local-DP epsilon of a transition matrix: ``max_j ln(max_i P[i,j] / min_i P[i,j])``.

    A column with a 0 and a non-zero entry gives ``inf``; an all-zero column is skipped.

    Args:
        matrix: Rows = true codes (summing to 1), columns = published codes.

    Returns:
        The epsilon (>= 0, possibly ``inf``).

    Raises:
        ValueError: If ``matrix`` is not a valid transition matrix.
    """
    p = check_transition_matrix(matrix)
    high = p.max(axis=0)
    low = p.min(axis=0)
    used = high > 0.0
    if (low[used] == 0.0).any():
        return math.inf
    return float(np.max(np.log(high[used] / low[used]), initial=0.0))


def _row_cdfs(p: np.ndarray) -> np.ndarray:
    """Each row's cumulative distribution, exactly 1 from its last non-zero column on.

    Pinning the tail to 1 keeps rounding from ever selecting a trailing zero-probability
    column (``u < 1`` always finds a column at or before the last non-zero one).

    Args:
        p: A validated transition matrix.

    Returns:
        A float64 array of ``p``'s shape, each row non-decreasing, ending in 1.
    """
    cum = np.cumsum(p, axis=1) / p.sum(axis=1, keepdims=True)
    n_cols = p.shape[1]
    last = n_cols - 1 - np.argmax(p[:, ::-1] > 0.0, axis=1)
    cum[np.arange(n_cols)[None, :] >= last[:, None]] = 1.0
    return cum


def randomize(
    codes: np.ndarray, matrix: np.ndarray, key: RunKey, stream: int, counters: np.ndarray
) -> np.ndarray:
    """Publish each code as a draw from its row of ``matrix`` (PRAM / randomized response).

    The published code of a row is the smallest ``j`` with ``u < C[code, j]``, ``C`` the
    row's cumulative sum and ``u`` the key's uniform of the row (lane 0 of ``stream``, at
    most the float below 1):
    a zero-probability column is never drawn, and with the identity matrix every code is
    kept. Rows are grouped by code (one ``searchsorted`` per code), so memory stays linear
    in the rows whatever ``k``.

    Args:
        codes: Integer codes in ``[0, matrix.shape[0])`` (any shape).
        matrix: The transition matrix (rows = true codes, rows summing to 1).
        key: The run's secret key.
        stream: The attribute's stream.
        counters: Integer row counters (the rows' internal ids), the shape of ``codes``.

    Returns:
        An int64 array of the shape of ``codes``, values in ``[0, matrix.shape[1])``.

    Raises:
        ValueError: On a bad matrix, non-integer codes, a code out of range or counters of
            another shape.
    """
    p = check_transition_matrix(matrix)
    codes = np.asarray(codes)
    ids = np.asarray(counters)
    if codes.dtype.kind not in "iu":
        raise ValueError(f"codes must be an integer array, got dtype {codes.dtype}")
    if ids.shape != codes.shape:
        raise ValueError(f"counters have shape {ids.shape}, codes {codes.shape}")
    flat = codes.ravel().astype(np.int64)
    n_true = p.shape[0]
    if flat.size and (flat.min() < 0 or flat.max() >= n_true):
        bad = flat[(flat < 0) | (flat >= n_true)][0]
        raise ValueError(f"code {bad} is outside [0, {n_true})")
    # The key's uniforms lie in (0, 1); kept below 1 also when a caller's are not, so u
    # always finds a column.
    u = np.minimum(key.uniforms(stream, ids, lane=0).ravel(), _BELOW_ONE)
    cum = _row_cdfs(p)
    out = np.empty(flat.size, dtype=np.int64)
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(n_true + 1))
    for code in range(n_true):
        start, end = bounds[code], bounds[code + 1]
        if start == end:
            continue
        rows = order[start:end]
        out[rows] = np.searchsorted(cum[code], u[rows], side="right")
    return out.reshape(codes.shape)
