"""Compiled (numba) MDAV on one block, label for label the numpy path's.

:meth:`~sparkanon.algorithms.blocks.mdav.Mdav.cluster_reference` (the numpy path, the
reference) forms
``n / k`` classes one after the other; each step gathers the remaining rows' codes,
computes a centroid and three distance arrays attribute by attribute and re-packs the
remaining rows, about 60 small numpy calls for two classes. At 10,000 rows and
``k = 10`` that is 500 sequential steps whose fixed cost dominates. This module runs the
whole loop in one compiled call, :func:`mdav_kernel`, on arrays kept between steps:

* the remaining rows' codes, compacted in place (row order kept) after each class, so
  every pass reads contiguous memory and no step gathers;
* per discrete attribute, the remaining rows' counts per code, updated by the class
  just formed (exact integers), from which each step's centroid code is read;
* the distances to the farthest row ``r``, which the numpy path computes twice (for
  ``r``'s class, then for ``s``, the remaining row farthest from ``r``): once here,
  compacted with the rows.

**Same labels as the numpy path.** Every distance is the same float: attributes are
summed in schema order from ``0.0``, each term ``weight * distance`` as
:meth:`Block.distances_to_row` computes it; a continuous centroid is the mean in numpy's
order (pairwise summation of the remaining codes in row order,
:func:`~sparkanon.algorithms.blocks._slie_kernel._pairwise_sum`, then one division, as
``np.mean``); discrete centroids follow :meth:`OrdinalKind.centroids`,
:meth:`CategoricalKind.centroids` and :meth:`NominalKind.centroids` on integer counts and
integer costs, exact in any order. Ties go to the lowest position among the remaining
rows (block order, which is row-id order): the first farthest row, and the ``k``
nearest by ``(distance, position)`` as :func:`sparkanon.algorithms.blocks.mdav.smallest` takes
them, the anchor always first.

Supported kinds: those of :func:`sparkanon.algorithms.blocks._slie_kernel.pack` with
``extended=True`` except :class:`~sparkanon.attributes.semantic.SemanticKind`
(:class:`~sparkanon.attributes.kinds.VectorNominalKind` compares and centres as
:class:`~sparkanon.attributes.kinds.NominalKind` does in MDAV). :func:`cluster` returns
``None`` for any other schema and the caller uses the numpy path; so does
``SPARKANON_NO_JIT=1`` (:func:`enabled`). Compiled once per process, cached on disk
(``cache=True``).
"""

from __future__ import annotations

import math

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.algorithms._jit import compiled
from sparkanon.algorithms.blocks._slie_kernel import (
    CATEGORICAL,
    CONTINUOUS,
    NOMINAL,
    ORDINAL_MEDIAN,
    SEMANTIC,
    VECTOR_NOMINAL,
    _pairwise_sum,
    _rows,
    enabled,
    pack,
)

__all__ = ["cluster", "enabled", "mdav_kernel"]

_compiled = compiled()
"""How every function of this module is compiled: nopython, cached on disk."""


def cluster(block: Block, k: int) -> np.ndarray | None:
    """MDAV on one block (as :meth:`Mdav.cluster`); ``None`` if a kind is not supported.

    Args:
        block: the block's rows, in row-id order.
        k: the class size.

    Returns:
        A class label ``0..m-1`` per row, all ``-1`` when the block has fewer than
        ``k`` rows; ``None`` when the schema holds a kind the kernel does not know.
    """
    packed = pack(block, extended=True)
    if packed is None or (packed.kind == SEMANTIC).any():
        return None
    n = block.n
    labels = np.full(n, -1, dtype=np.int64)
    if n < k:
        return labels
    kind = np.where(packed.kind == VECTOR_NOMINAL, NOMINAL, packed.kind).astype(np.int64)
    xf, xi = _rows(block, packed)
    hist = np.zeros((len(kind), packed.matrix.shape[1]))
    for a in np.flatnonzero(kind != CONTINUOUS):
        hist[a, : packed.size[a]] = np.bincount(xi[a], minlength=packed.size[a])
    mdav_kernel(
        kind, packed.weight, packed.size, np.ascontiguousarray(packed.matrix.transpose(0, 2, 1)),
        packed.cost.astype(np.float64),
        xf, xi, hist, int(k), labels, np.arange(n), np.empty((3, n)), np.empty(len(kind)),
        np.zeros(n, dtype=np.bool_),
    )  # fmt: skip
    return labels


# -- compiled --------------------------------------------------------------------------


@_compiled
def _discrete_centre(
    kind: int, hist: np.ndarray, size: int, cost: np.ndarray
) -> float:  # pragma: no cover - compiled
    """One discrete attribute's centroid code of the remaining rows (``kind.centroids``).

    Args:
        kind: the attribute's kind code.
        hist: the remaining rows' counts per code.
        size: the number of codes ``V``.
        cost: the ``(Vmax, Vmax)`` integer medoid costs (categorical).
    """
    if kind == NOMINAL:
        best = 0
        for v in range(1, size):
            if hist[v] > hist[best]:
                best = v
        return float(best)
    if kind == CATEGORICAL:
        best = -1
        best_cost = 0.0
        for v in range(size):
            if hist[v] == 0:
                continue
            c = 0.0
            for u in range(size):
                c += hist[u] * cost[u, v]
            if best < 0 or c < best_cost:
                best, best_cost = v, c
        return float(best)
    total = 0.0
    for v in range(size):
        total += hist[v]
    if kind == ORDINAL_MEDIAN:
        half = float(math.ceil(total / 2.0))
        if half < 1.0:
            half = 1.0
        cum = 0.0
        for v in range(size):
            cum += hist[v]
            if cum >= half:
                return float(v)
        return 0.0
    weighted = 0.0
    for v in range(size):
        weighted += hist[v] * v
    mean = weighted / total
    below = 0.0
    above = 0.0
    for v in range(size):
        if v < mean:
            below += hist[v]
        elif v > mean:
            above += hist[v]
    if below < above:
        centre = math.ceil(mean)
    elif below > above:
        centre = math.floor(mean)
    else:
        centre = math.floor(mean + 0.5)
    if centre < 0:
        return 0.0
    return float(centre) if centre < size else float(size - 1)


@_compiled
def _distances(
    kind: np.ndarray,
    weight: np.ndarray,
    to_code: np.ndarray,
    cf: np.ndarray,
    ci: np.ndarray,
    point: np.ndarray,
    m: int,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``out[:m]``: each remaining row's tuple distance (eq. 18) to the record ``point``.

    Summed over the attributes in schema order from ``0.0``, as
    :meth:`Block.distances_to_point` adds ``kind.weight * kind.distance_to``.
    """
    for i in range(m):
        out[i] = 0.0
    for a in range(kind.shape[0]):
        w = weight[a]
        if kind[a] == CONTINUOUS:
            col = cf[a]
            p = point[a]
            for i in range(m):
                out[i] += w * abs(col[i] - p)
        else:
            column = to_code[a, int(point[a])]
            codes = ci[a]
            for i in range(m):
                out[i] += w * column[codes[i]]


@_compiled
def _argmax(d: np.ndarray, m: int) -> int:  # pragma: no cover - compiled
    """The first position of the largest of ``d[:m]``."""
    best = 0
    for i in range(1, m):
        if d[i] > d[best]:
            best = i
    return best


@_compiled
def _kth_smallest(buf: np.ndarray, m: int, j: int) -> float:  # pragma: no cover - compiled
    """The ``j``-th smallest (0-based) of ``buf[:m]``, reordering ``buf`` (quickselect).

    Three-way partitioning, so the many equal distances of a block cost no more than
    distinct ones (``np.partition`` would do, but compiles for seconds).
    """
    lo, hi = 0, m - 1
    while lo < hi:
        pivot = buf[(lo + hi) // 2]
        lt, i, gt = lo, lo, hi
        while i <= gt:
            x = buf[i]
            if x < pivot:
                buf[i] = buf[lt]
                buf[lt] = x
                lt += 1
                i += 1
            elif x > pivot:
                buf[i] = buf[gt]
                buf[gt] = x
                gt -= 1
            else:
                i += 1
        if j < lt:
            hi = lt - 1
        elif j > gt:
            lo = gt + 1
        else:
            return pivot
    return buf[lo]


@_compiled
def _nearest(
    d: np.ndarray, m: int, anchor: int, k: int, taken: np.ndarray, buf: np.ndarray
) -> None:  # pragma: no cover - compiled
    """Mark in ``taken`` the anchor and its ``k - 1`` nearest by ``(d, position)``.

    As :func:`sparkanon.algorithms.blocks.mdav.smallest` on ``d`` with ``d[anchor] = -1``: the
    ``k``-th smallest value is the threshold; every row below it and the first rows
    at it (lowest positions) are taken. ``buf`` is scratch space of ``m`` values.
    Requires ``k < m``.
    """
    for i in range(m):
        taken[i] = False
        buf[i] = d[i]
    taken[anchor] = True
    if k == 1:
        return
    buf[anchor] = -1.0
    threshold = _kth_smallest(buf, m, k - 1)
    need = k - 1
    for i in range(m):
        if i != anchor and d[i] < threshold:
            taken[i] = True
            need -= 1
    for i in range(m):
        if need == 0:
            break
        if i != anchor and d[i] == threshold:
            taken[i] = True
            need -= 1


@_compiled
def _close(
    kind: np.ndarray,
    cf: np.ndarray,
    ci: np.ndarray,
    hist: np.ndarray,
    rows: np.ndarray,
    keep: np.ndarray,
    m: int,
    taken: np.ndarray,
    labels: np.ndarray,
    label: int,
) -> int:  # pragma: no cover - compiled
    """Label the taken rows, take them out of the counts and compact the rest in place.

    ``rows``, the codes ``cf`` / ``ci`` and the distances ``keep`` of the remaining
    rows keep their order. Returns the number of rows left.
    """
    for i in range(m):
        if taken[i]:
            labels[rows[i]] = label
    for a in range(kind.shape[0]):
        if kind[a] == CONTINUOUS:
            col = cf[a]
            j = 0
            for i in range(m):
                if not taken[i]:
                    col[j] = col[i]
                    j += 1
        else:
            codes = ci[a]
            h = hist[a]
            j = 0
            for i in range(m):
                if taken[i]:
                    h[codes[i]] -= 1.0
                else:
                    codes[j] = codes[i]
                    j += 1
    j = 0
    for i in range(m):
        if not taken[i]:
            rows[j] = rows[i]
            keep[j] = keep[i]
            j += 1
    return j


@_compiled
def mdav_kernel(
    kind: np.ndarray,
    weight: np.ndarray,
    size: np.ndarray,
    to_code: np.ndarray,
    cost: np.ndarray,
    cf: np.ndarray,
    ci: np.ndarray,
    hist: np.ndarray,
    k: int,
    labels: np.ndarray,
    rows: np.ndarray,
    work: np.ndarray,
    point: np.ndarray,
    taken: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """MDAV's labels of one block of ``n >= k`` rows (module docstring; :meth:`Mdav.cluster`).

    Each step takes one class around an anchor: in turn the remaining row farthest
    from the remaining rows' centroid (``r``) and the remaining row farthest from the
    previous anchor (``s``), while at least ``2k`` rows remain; the rest is the last
    class. The caller allocates every array (so that nothing here compiles numpy's
    allocators).

    Args:
        kind: kind code per attribute (``CONTINUOUS`` ... ``NOMINAL``).
        weight: each attribute's weight.
        size: codes per discrete attribute.
        to_code: ``(A, Vmax, Vmax)`` distance matrices, transposed: ``to_code[a, c]`` is
            the distance of every code to code ``c`` (a contiguous row).
        cost: ``(A, Vmax, Vmax)`` integer categorical medoid costs, as floats.
        cf: ``(A, n)`` continuous codes (overwritten: the remaining rows, compacted).
        ci: ``(A, n)`` discrete codes (overwritten likewise).
        hist: ``(A, Vmax)`` counts per code of each discrete attribute (updated).
        k: the class size.
        labels: ``n`` labels, written.
        rows: ``0..n-1`` (overwritten: the remaining rows' positions, compacted).
        work: ``(3, n)`` scratch: distances to the anchor and to the centroid, and a
            selection buffer.
        point: ``A`` scratch: the record compared with.
        taken: ``n`` booleans, scratch.
    """
    a_count, n = cf.shape
    to_anchor = work[0]
    to_centre = work[1]
    scratch = work[2]
    zero = np.int64(0)  # not the literal 0: numba would compile callees for it as well
    m = n
    label = zero
    anchor = zero
    while m >= 2 * k:
        if label % 2 == 0:  # r: the farthest from the centroid
            for a in range(a_count):
                if kind[a] == CONTINUOUS:
                    point[a] = _pairwise_sum(cf[a], zero, m) / m
                else:
                    point[a] = _discrete_centre(kind[a], hist[a], size[a], cost[a])
            _distances(kind, weight, to_code, cf, ci, point, m, to_centre)
            anchor = _argmax(to_centre, m)
        else:  # s: the farthest from r (distances kept from r's step, compacted)
            anchor = _argmax(to_anchor, m)
        for a in range(a_count):
            point[a] = cf[a, anchor] if kind[a] == CONTINUOUS else float(ci[a, anchor])
        _distances(kind, weight, to_code, cf, ci, point, m, to_anchor)
        _nearest(to_anchor, m, anchor, k, taken, scratch)
        m = _close(kind, cf, ci, hist, rows, to_anchor, m, taken, labels, label)
        label += 1
    for i in range(m):
        labels[rows[i]] = label
