"""Compiled (numba) per-block clustering of MAA-SLIE, label for label the numpy path's.

:class:`sparkanon.algorithms.blocks.maa_slie.MaaSlie` spends most of a block in fixed Python
cost per step (many small numpy calls). This module runs the same steps in two
compiled loops:

* :func:`form_classes_kernel`: steps 5-20 of Shi et al. 2024, Algorithm 1 (the farthest
  row starts a class, the diversity loop with the admissibility rule, filling to ``k`` by
  largest PSI, the break rule), with per-class incremental statistics: a
  histogram and, for categorical attributes, a cost vector ``h @ C`` per discrete
  attribute, the members' codes for continuous attributes, level counts;
* :func:`place_kernel`: steps 23-28 (each row, in the given order, joins the class
  of largest PSI after the addition), for :meth:`MaaSlie.cluster` and
  :meth:`MaaSlie.place_into` alike.

Step 4 (the central tuple, once per block) stays with the numpy rule
:meth:`sparkanon.algorithms._block.Block.central_row`: it is one vectorised pass,
and calling the very same code keeps the first reference point identical.

**Same labels as the numpy path.** Every decision compares scores on the grid of
:func:`sparkanon.metrics.entropy.quantise` (absolute, ``2**-30``) and breaks ties by
the lowest row position (block order, which is row-id order) or the lowest class
id, as the numpy path does. The kernel also repeats the numpy path's arithmetic
where it can: distances are summed over the attributes in schema order; continuous
losses use numpy's pairwise summation (:func:`_pairwise_sum`, the order of
``np.add.reduce`` on a contiguous array), sequential sums where numpy reduces over
a non-contiguous axis or uses ``np.bincount``; ordinal and categorical centroids
are computed from integer counts and integer costs, exact in any order. What may
still differ by a few units in the last place (discrete losses, which numpy sums
with ``einsum``, and the logarithms of HEC) is absorbed by the quantisation.

Supported kinds: :class:`~sparkanon.attributes.kinds.ContinuousKind` (and the date and
timestamp kinds, :func:`sparkanon.attributes.dates.continuous_arithmetic`),
:class:`~sparkanon.attributes.kinds.OrdinalKind` (``mean_frequency`` and
``median``), :class:`~sparkanon.attributes.kinds.CategoricalKind` and
:class:`~sparkanon.attributes.kinds.NominalKind` (exact types; subclasses such as
the vector nominal kind and the semantic kinds are not): :func:`pack` returns
``None`` for any other schema and the caller uses the numpy path. (``pack(block,
extended=True)`` also packs :class:`~sparkanon.attributes.kinds.VectorNominalKind` and
:class:`~sparkanon.attributes.semantic.SemanticKind`, for the MAA-SAE kernel of
:mod:`sparkanon.algorithms.blocks._sae_kernel`, which reuses this module's helpers.)

``SPARKANON_NO_JIT=1`` in the environment forces the numpy path (:func:`enabled`).
The functions are compiled once per process and cached on disk (``cache=True``);
Spark's Python workers are long-lived (``spark.python.worker.reuse``), so a worker
compiles or loads them once and reuses them for every block it clusters.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.algorithms._jit import compiled
from sparkanon.attributes.dates import continuous_arithmetic
from sparkanon.attributes.kinds import (
    CategoricalKind,
    NominalKind,
    OrdinalKind,
    VectorNominalKind,
)
from sparkanon.attributes.semantic import SemanticKind
from sparkanon.metrics.entropy import QUANTUM, ZERO_LOSS

NO_JIT_ENV = "SPARKANON_NO_JIT"
"""Environment variable: ``1`` forces the numpy path (tests, debugging)."""

CONTINUOUS, ORDINAL_MEAN, ORDINAL_MEDIAN, CATEGORICAL, NOMINAL = 0, 1, 2, 3, 4
"""Kind codes of the packed schema."""
VECTOR_NOMINAL, SEMANTIC = 5, 6
"""Kind codes :func:`pack` gives only with ``extended=True`` (the MAA-SAE kernel,
:mod:`sparkanon.algorithms.blocks._sae_kernel`): :class:`VectorNominalKind` and
:class:`SemanticKind`. This module's kernels never see them."""

_compiled = compiled()
"""How every function of this module is compiled: nopython, cached on disk."""


def enabled() -> bool:
    """Whether the compiled path may be used (``SPARKANON_NO_JIT`` is not ``1``)."""
    return os.environ.get(NO_JIT_ENV, "").strip().lower() not in ("1", "true", "yes")


class PackedSchema(NamedTuple):
    """A schema's quasi-identifiers as arrays for the kernels (a namedtuple: numba takes it).

    Attributes:
        kind: kind code of each attribute (``CONTINUOUS`` ... ``NOMINAL``).
        weight: each attribute's weight (eq. 18).
        size: number of codes ``V`` of each discrete attribute (0 for continuous).
        matrix: ``(A, Vmax, Vmax)`` distance matrices, zero-padded.
        cost: ``(A, Vmax, Vmax)`` integer medoid costs of categorical attributes
            (``rint(matrix * taxonomy.height)``, as :meth:`CategoricalKind.centroids`).
        digits: digits per code of each semantic attribute (0 for the others).
        level_weight: ``(A, Lmax)`` normalised level weights ``w_i`` of each semantic
            attribute (:attr:`SemanticKind._weights`), zero-padded.
        power: ``(A, Lmax + 1)`` ``10**(length - i)``, ``i = 0..length``, of each
            semantic attribute (``code // power[i]`` is its first ``i`` digits).
        by_prefix: ``(A, Lmax + 1)`` normalised leaf distance by common prefix length
            (:attr:`SemanticKind.by_prefix`).
        offset: where each discrete attribute's codes start in one flat histogram of
            all of them (``size[a]`` entries each; the MAA-SAE kernel's layout).
    """

    kind: np.ndarray
    weight: np.ndarray
    size: np.ndarray
    matrix: np.ndarray
    cost: np.ndarray
    digits: np.ndarray
    level_weight: np.ndarray
    power: np.ndarray
    by_prefix: np.ndarray
    offset: np.ndarray


class _Psi(NamedTuple):
    """How a class is scored: PSI's weights (eq. 21), HEC's (eq. 2) and the grid."""

    level_w: np.ndarray
    log_base: float
    w1: float
    w2: float
    scale: float
    quantum: float
    zero_loss: float


def _kind_code(kind: object, extended: bool) -> int | None:
    """The kind code of one attribute, ``None`` if not supported (exact types only)."""
    t = type(kind)
    if continuous_arithmetic(kind):
        return CONTINUOUS
    if t is OrdinalKind and kind.rule in ("mean_frequency", "median"):
        return ORDINAL_MEAN if kind.rule == "mean_frequency" else ORDINAL_MEDIAN
    if t is CategoricalKind:
        return CATEGORICAL
    if t is NominalKind:
        return NOMINAL
    if extended and t is VectorNominalKind:
        return VECTOR_NOMINAL
    if extended and t is SemanticKind:
        return SEMANTIC
    return None


def pack(block: Block, extended: bool = False) -> PackedSchema | None:
    """The block's schema as arrays, or ``None`` when a kind is not supported.

    Args:
        block: the block whose kinds are packed.
        extended: also accept :class:`VectorNominalKind` and :class:`SemanticKind`
            (:data:`VECTOR_NOMINAL`, :data:`SEMANTIC`), which only the MAA-SAE kernel
            scores; this module's kernels call it without.
    """
    kinds = block.kinds
    codes = []
    for kind in kinds:
        code = _kind_code(kind, extended)
        if code is None:
            return None
        if code not in (CONTINUOUS, SEMANTIC) and kind.size < 1:
            return None
        codes.append(code)
    a = len(kinds)
    discrete = [c not in (CONTINUOUS, SEMANTIC) for c in codes]
    sizes = np.array([k.size if d else 0 for d, k in zip(discrete, kinds, strict=True)], np.int64)
    vmax = max(int(sizes.max(initial=0)), 1)
    matrix = np.zeros((a, vmax, vmax))
    cost = np.zeros((a, vmax, vmax), dtype=np.int64)
    digits = np.array(
        [k.length if c == SEMANTIC else 0 for c, k in zip(codes, kinds, strict=True)], np.int64
    )
    lmax = max(int(digits.max(initial=0)), 1)
    level_weight = np.zeros((a, lmax))
    power = np.ones((a, lmax + 1), dtype=np.int64)
    by_prefix = np.zeros((a, lmax + 1))
    for i, (c, kind) in enumerate(zip(codes, kinds, strict=True)):
        if c == SEMANTIC:
            length = kind.length
            level_weight[i, :length] = kind._weights
            power[i, : length + 1] = kind._powers
            by_prefix[i, : length + 1] = kind.by_prefix
        if c in (CONTINUOUS, SEMANTIC):
            continue
        v = kind.size
        matrix[i, :v, :v] = kind.matrix
        if c == CATEGORICAL:
            height = kind.taxonomy.height if kind.taxonomy is not None else 1
            cost[i, :v, :v] = np.rint(kind.matrix * height).astype(np.int64)
    return PackedSchema(
        kind=np.array(codes, dtype=np.int64),
        weight=np.array([float(k.weight) for k in kinds]),
        size=sizes,
        matrix=matrix,
        cost=cost,
        digits=digits,
        level_weight=level_weight,
        power=power,
        by_prefix=by_prefix,
        offset=np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64),
    )


def _rows(block: Block, packed: PackedSchema) -> tuple[np.ndarray, np.ndarray]:
    """``(continuous codes, discrete codes)`` of a block, each ``(A, n)``."""
    a, n = len(block.kinds), block.n
    xf = np.zeros((a, n))
    xi = np.zeros((a, n), dtype=np.int64)
    for i, codes in enumerate(block.codes):
        if packed.kind[i] == CONTINUOUS:
            xf[i] = np.asarray(codes, dtype=float)
        else:
            xi[i] = np.asarray(codes, dtype=np.int64)
    return xf, xi


def _distinct(
    packed: PackedSchema, xf: np.ndarray, xi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(index, values)``: each row's code index per attribute and the continuous codes.

    ``index[a, r]`` is the discrete code, or for a continuous attribute the position of
    the row's code among its distinct codes ``values[a]`` (a row's loss depends only
    on its codes, so the kernel scores each distinct code once per step).
    """
    index = xi.copy()
    uniques = []
    for a in np.flatnonzero(packed.kind == CONTINUOUS):
        distinct, inverse = np.unique(xf[a], return_inverse=True)
        index[a] = inverse.reshape(-1)
        uniques.append((a, distinct))
    values = np.zeros((len(packed.kind), max([1] + [len(d) for _, d in uniques])))
    for a, distinct in uniques:
        values[a, : len(distinct)] = distinct
    return index, values


def _scoring(block: Block) -> _Psi:
    """Level weights, ``log(base)`` (as the numpy path computes it), ``(w1, w2)``, the grid."""
    w1, w2 = block.ctx.psi_weights
    return _Psi(
        level_w=np.asarray(block.weights, dtype=float),
        log_base=float(np.log(block.ctx.entropy_base)),
        w1=float(w1),
        w2=float(w2),
        scale=1.0 / QUANTUM,
        quantum=QUANTUM,
        zero_loss=ZERO_LOSS,
    )


def cluster(block: Block, rng: np.random.Generator) -> np.ndarray | None:
    """MAA-SLIE on one block (as :meth:`GreedyAlgorithm.cluster`); ``None`` if unsupported.

    Args:
        block: the block's rows, in row-id order.
        rng: the block's generator (used for the leftovers' order exactly as the
            numpy path uses it).

    Returns:
        A class label per row (``-1`` only when the block formed no class), or
        ``None`` when a kind is not supported.
    """
    packed = pack(block)
    if packed is None:
        return None
    n = block.n
    everything = np.arange(n)
    if not block.can_host_class(everything):
        return np.full(n, -1, dtype=np.int64)
    central = block.central_row(everything)
    xf, xi = _rows(block, packed)
    psi = _scoring(block)
    model = block.ctx.model
    index, values = _distinct(packed, xf, xi)
    level = block.level.astype(np.int64)
    labels, n_classes = form_classes_kernel(
        packed, psi, xf, xi, index, values, block.sens.astype(np.int64), level,
        len(block.ctx.schema.sensitive.values), int(model.k), int(model.p), int(model.h),
        int(central),
    )  # fmt: skip
    leftovers = np.flatnonzero(labels < 0)
    if n_classes == 0 or leftovers.size == 0:
        return labels
    order = rng.permutation(leftovers)
    labels[order] = place_kernel(
        packed, psi, xf, xi, level, labels, int(n_classes), xf, xi, level, order.astype(np.int64)
    )
    return labels


def place(
    block: Block, labels: np.ndarray, n_classes: int, extra: Block, rng: np.random.Generator
) -> np.ndarray | None:
    """Rows of ``extra`` join ``block``'s classes (as :meth:`GreedyAlgorithm.place_into`).

    Args:
        block: the clustered rows.
        labels: their labels (``-1`` rows are in no class).
        n_classes: the number of classes (``0..n_classes-1``).
        extra: the rows to place.
        rng: the generator for the placement order.

    Returns:
        A class label per row of ``extra``, or ``None`` when a kind is not supported.
    """
    packed = pack(block)
    if packed is None:
        return None
    order = rng.permutation(extra.n)
    xf, xi = _rows(block, packed)
    xf2, xi2 = _rows(extra, packed)
    out = np.empty(extra.n, dtype=np.int64)
    out[order] = place_kernel(
        packed, _scoring(block), xf, xi, block.level.astype(np.int64),
        np.asarray(labels, dtype=np.int64), int(n_classes), xf2, xi2,
        extra.level.astype(np.int64), order.astype(np.int64),
    )  # fmt: skip
    return out


# -- compiled helpers ---------------------------------------------------------------


@_compiled
def _quantise(x: float, scale: float) -> float:  # pragma: no cover - compiled
    """:func:`sparkanon.metrics.entropy.quantise`, the same operations in the same order."""
    return np.floor(x * scale + 0.5) / scale


@_compiled
def _block_sum(a: np.ndarray, lo: int, n: int) -> float:  # pragma: no cover - compiled
    """``a[lo:lo+n].sum()`` for ``n <= 128`` in numpy's order (unrolled by 8)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@_compiled
def _pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:  # pragma: no cover - compiled
    """``a[lo:lo+n].sum()`` in numpy's order (``np.add.reduce`` on a contiguous array).

    numpy sums blocks of at most 128 items unrolled by 8 (:func:`_block_sum`) and
    splits longer runs in two halves (the first a multiple of 8) recursively; the
    recursion is unrolled here onto an explicit stack (numba's on-disk cache does not
    handle recursive functions).
    """
    if n <= 128:
        return _block_sum(a, lo, n)
    los = np.empty(64, dtype=np.int64)
    ns = np.empty(64, dtype=np.int64)
    stage = np.zeros(64, dtype=np.int64)
    values = np.empty(64)
    sp = 0
    vp = 0
    los[0] = lo
    ns[0] = n
    while sp >= 0:
        m = ns[sp]
        if m <= 128:
            values[vp] = _block_sum(a, los[sp], m)
            vp += 1
            sp -= 1
            continue
        half = m // 2
        half -= half % 8
        if stage[sp] == 0:
            stage[sp] = 1
            los[sp + 1], ns[sp + 1], stage[sp + 1] = los[sp], half, 0
            sp += 1
        elif stage[sp] == 1:
            stage[sp] = 2
            los[sp + 1], ns[sp + 1], stage[sp + 1] = los[sp] + half, m - half, 0
            sp += 1
        else:
            values[vp - 2] = values[vp - 2] + values[vp - 1]
            vp -= 1
            sp -= 1
    return values[0]


@_compiled
def _hec(
    counts: np.ndarray, extra: int, level_w: np.ndarray, log_base: float, buf: np.ndarray
) -> float:  # pragma: no cover - compiled
    """HEC (eq. 2) of a class with level counts ``counts`` plus one row of level ``extra``.

    As :func:`sparkanon.metrics.entropy.class_level_entropy`: shares over the
    total, ``-p log p / log b`` (0 where ``p = 0``) times the level weight, summed
    over the levels in numpy's order.
    """
    n_levels = counts.shape[0]
    total = 1.0
    for i in range(n_levels):
        total += counts[i]
    for i in range(n_levels):
        c = counts[i] + (1 if i == extra else 0)
        p = c / total
        term = 0.0
        if p > 0:
            term = -p * np.log(p) / log_base
        buf[i] = term * level_w[i]
    return _pairwise_sum(buf, 0, n_levels)


@_compiled
def _grown_centre(
    kind: int, hist: np.ndarray, cvec: np.ndarray, cost: np.ndarray, size: int, v: int
) -> int:  # pragma: no cover - compiled
    """Centroid code of the class ``hist + e_v`` of one discrete attribute.

    Reproduces each kind's ``centroids``: the centre mean frequency rule and the
    lower median (:class:`OrdinalKind`), the medoid from the cost vector
    ``cvec = hist @ C`` plus ``C[v]`` (:class:`CategoricalKind`), the mode
    (:class:`NominalKind`); ties to the lowest code.
    """
    if kind == ORDINAL_MEAN:
        total = 1
        ranked = v
        for u in range(size):
            total += hist[u]
            ranked += u * hist[u]
        mean = float(ranked) / float(total)
        below = 0
        above = 0
        for u in range(size):
            h = hist[u] + (1 if u == v else 0)
            if h > 0:
                if u < mean:
                    below += h
                elif u > mean:
                    above += h
        if below < above:
            centre = np.ceil(mean)
        elif below > above:
            centre = np.floor(mean)
        else:
            centre = np.floor(mean + 0.5)
        c = int(centre)
        if c < 0:
            c = 0
        if c > size - 1:
            c = size - 1
        return c
    if kind == ORDINAL_MEDIAN:
        total = 1
        for u in range(size):
            total += hist[u]
        half = np.ceil(total / 2.0)
        if half < 1.0:
            half = 1.0
        cum = 0
        for u in range(size):
            cum += hist[u] + (1 if u == v else 0)
            if cum >= half:
                return u
        return 0
    if kind == CATEGORICAL:
        best = -1
        best_cost = 0
        for u in range(size):
            if hist[u] > 0 or u == v:
                c = cvec[u] + cost[v, u]
                if best < 0 or c < best_cost:
                    best = u
                    best_cost = c
        return best
    # NOMINAL: the mode
    best = 0
    best_count = -1
    for u in range(size):
        h = hist[u] + (1 if u == v else 0)
        if h > best_count:
            best = u
            best_count = h
    return best


@_compiled
def _grown_loss(
    kind: int,
    hist: np.ndarray,
    cvec: np.ndarray,
    matrix: np.ndarray,
    cost: np.ndarray,
    size: int,
    v: int,
) -> float:  # pragma: no cover - compiled
    """InfoLoss (eq. 20, unweighted) of the class ``hist + e_v`` on one discrete attribute."""
    centre = _grown_centre(kind, hist, cvec, cost, size, v)
    loss = 0.0
    for u in range(size):
        h = hist[u] + (1 if u == v else 0)
        if h > 0:
            loss += h * matrix[u, centre]
    return loss


@_compiled
def _loss_key(loss: float, scale: float, quantum: float) -> float:  # pragma: no cover - compiled
    """A non-zero InfoLoss on the grid, at least one quantum (as ``best_by_psi``)."""
    q = _quantise(loss, scale)
    return quantum if q < quantum else q


@_compiled
def _psi_key(
    hec_q: float, loss_q: float, w1: float, w2: float, scale: float
) -> float:  # pragma: no cover - compiled
    """Quantised PSI from quantised HEC and InfoLoss, as ``best_by_psi`` computes it.

    For a fixed ``hec_q`` it does not increase with ``loss_q`` (every operation is
    monotonic), which lets :func:`_best_candidate` skip rows that cannot win.
    """
    if w2 > 0:
        return _quantise(w1 * hec_q + w2 * (1.0 / loss_q), scale)
    return _quantise(w1 * hec_q, scale)


# -- class formation (steps 5-20) ----------------------------------------------------


@_compiled
def _count_row(
    s: int, lv: int, by_value: np.ndarray, by_level: np.ndarray, distinct: np.ndarray, at: int
) -> None:  # pragma: no cover - compiled
    """One more row of sensitive value ``s`` and level ``lv`` in a set of rows.

    ``by_value`` and ``by_level`` count the set's rows per value and per level;
    ``distinct[at]`` and ``distinct[at + 1]`` count the values and the levels it holds.
    """
    if by_value[s] == 0:
        distinct[at] += 1
    by_value[s] += 1
    if by_level[lv] == 0:
        distinct[at + 1] += 1
    by_level[lv] += 1


@_compiled
def _take(
    r: int,
    take: bool,
    free: np.ndarray,
    sens: np.ndarray,
    level: np.ndarray,
    free_sens: np.ndarray,
    free_level: np.ndarray,
    pool: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Take row ``r`` out of the free pool (``take``) or return it to the pool.

    ``pool`` holds ``[free rows, distinct free values, distinct free levels]``.
    """
    s, lv = sens[r], level[r]
    free[r] = not take
    if take:
        pool[0] -= 1
        free_sens[s] -= 1
        if free_sens[s] == 0:
            pool[1] -= 1
        free_level[lv] -= 1
        if free_level[lv] == 0:
            pool[2] -= 1
    else:
        pool[0] += 1
        _count_row(s, lv, free_sens, free_level, pool, 1)


@_compiled
def _best_candidate(
    admissible_only: bool,
    schema: PackedSchema,
    psi: _Psi,
    xf: np.ndarray,
    index: np.ndarray,
    values: np.ndarray,
    sens: np.ndarray,
    level: np.ndarray,
    free: np.ndarray,
    members: np.ndarray,
    g: int,
    hist: np.ndarray,
    cvec: np.ndarray,
    class_sens: np.ndarray,
    class_level: np.ndarray,
    n_class_levels: int,
    h: int,
    memo: np.ndarray,
    stamp: np.ndarray,
    step: int,
    sums: np.ndarray,
    buf: np.ndarray,
    hec_q: np.ndarray,
    level_best: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """The free row that maximises PSI of ``members + row`` (``MaaSlie._best``); -1 if none.

    With ``admissible_only`` only rows whose sensitive value is new to the class
    count, and while the class has fewer than ``h`` levels only rows of a new level
    (``MaaSlie._admissible``). Candidates are scanned in block order and a later
    one must beat the best so far strictly, so ties go to the lowest row.

    A row's InfoLoss depends only on its code of each attribute, so each attribute's
    loss is computed once per code and step (``memo``, valid where ``stamp == step``;
    ``index`` holds each row's discrete code or the index of its continuous code in
    ``values``). A row whose quantised loss is no smaller than that of an earlier row
    of its level cannot have a larger PSI (:func:`_psi_key`) and is skipped.

    The members' part of a continuous loss is summed in member order, as numpy's
    ``sum(axis=0)`` over a ``members x candidates`` array does; with a single
    candidate numpy sums pairwise instead, but then there is nothing to compare.
    """
    kind, weight, size = schema.kind, schema.weight, schema.size
    matrix, cost, level_w = schema.matrix, schema.cost, psi.level_w
    log_base, w1, w2, scale = psi.log_base, psi.w1, psi.w2, psi.scale
    quantum, zero_loss = psi.quantum, psi.zero_loss
    n = free.shape[0]
    n_attrs = kind.shape[0]
    n_levels = level_w.shape[0]
    for a in range(n_attrs):
        if kind[a] == CONTINUOUS:
            for j in range(g):
                buf[j] = xf[a, members[j]]
            sums[a] = _pairwise_sum(buf, 0, g)
    for lv in range(n_levels):
        hec_q[lv] = _quantise(_hec(class_level, lv, level_w, log_base, buf), scale)
        level_best[lv] = np.inf
    best_zero = -1
    zero_key = 0.0
    best = -1
    best_key = 0.0
    for r in range(n):
        if not free[r]:
            continue
        lv = level[r]
        if admissible_only:
            if class_sens[sens[r]] > 0:
                continue
            if n_class_levels < h and class_level[lv] > 0:
                continue
        total = 0.0
        for a in range(n_attrs):
            u = index[a, r]
            if stamp[a, u] != step:
                stamp[a, u] = step
                if kind[a] == CONTINUOUS:
                    # ContinuousKind.losses_with_each, in numpy's order.
                    x = values[a, u]
                    mean = (sums[a] + x) / (g + 1)
                    inside = 0.0
                    for j in range(g):
                        inside += abs(xf[a, members[j]] - mean)
                    memo[a, u] = inside + abs(x - mean)
                else:
                    memo[a, u] = _grown_loss(
                        kind[a], hist[a], cvec[a], matrix[a], cost[a], size[a], u
                    )
            total += weight[a] * memo[a, u]
        hq = hec_q[lv]
        if w2 > 0 and total <= zero_loss:
            if best_zero < 0 or hq > zero_key:
                best_zero = r
                zero_key = hq
        elif best_zero < 0:
            loss_q = _loss_key(total, scale, quantum) if w2 > 0 else 0.0
            if loss_q >= level_best[lv]:
                continue  # an earlier row of this level has a PSI at least as large
            level_best[lv] = loss_q
            key = _psi_key(hq, loss_q, w1, w2, scale)
            if best < 0 or key > best_key:
                best = r
                best_key = key
    if best_zero >= 0:
        return best_zero
    return best


@_compiled
def _join(
    r: int,
    schema: PackedSchema,
    xi: np.ndarray,
    sens: np.ndarray,
    level: np.ndarray,
    hist: np.ndarray,
    cvec: np.ndarray,
    class_sens: np.ndarray,
    class_level: np.ndarray,
    counts: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Add row ``r`` to the growing class; ``counts`` is ``[distinct values, distinct levels]``."""
    kind, size, cost = schema.kind, schema.size, schema.cost
    for a in range(kind.shape[0]):
        if kind[a] != CONTINUOUS:
            v = xi[a, r]
            hist[a, v] += 1
            if kind[a] == CATEGORICAL:
                for u in range(size[a]):
                    cvec[a, u] += cost[a, v, u]
    _count_row(sens[r], level[r], class_sens, class_level, counts, 0)


@_compiled
def form_classes_kernel(
    schema: PackedSchema,
    psi: _Psi,
    xf: np.ndarray,
    xi: np.ndarray,
    index: np.ndarray,
    values: np.ndarray,
    sens: np.ndarray,
    level: np.ndarray,
    n_values: int,
    k: int,
    p: int,
    h: int,
    central: int,
) -> tuple[np.ndarray, int]:  # pragma: no cover - compiled
    """Steps 5-20 (``GreedyAlgorithm.form_classes`` with ``MaaSlie.grow``).

    Args:
        schema: the packed schema.
        psi: the scoring constants.
        xf: continuous codes ``(A, n)``.
        xi: discrete codes ``(A, n)``.
        index: per attribute and row, the discrete code or the index of the
            continuous code in ``values``.
        values: the distinct codes of each continuous attribute ``(A, U)``.
        sens: sensitive value code per row.
        level: sensitivity level per row.
        n_values: number of sensitive values.
        k: class size of the target.
        p: distinct sensitive values of the target.
        h: distinct levels of the target.
        central: the block's central row (the first reference point).

    Returns:
        ``(labels, n_classes)``: a class per row, ``-1`` for rows left over.
    """
    kind, weight, matrix = schema.kind, schema.weight, schema.matrix
    n = sens.shape[0]
    n_attrs = kind.shape[0]
    n_levels = psi.level_w.shape[0]
    vmax = matrix.shape[1]
    labels = np.full(n, -1, dtype=np.int64)
    free = np.ones(n, dtype=np.bool_)
    free_sens = np.zeros(n_values, dtype=np.int64)
    free_level = np.zeros(n_levels, dtype=np.int64)
    pool = np.zeros(3, dtype=np.int64)
    pool[0] = n
    for r in range(n):
        _count_row(sens[r], level[r], free_sens, free_level, pool, 1)
    members = np.zeros(max(k, 1), dtype=np.int64)
    hist = np.zeros((n_attrs, vmax), dtype=np.int64)
    cvec = np.zeros((n_attrs, vmax), dtype=np.int64)
    class_sens = np.zeros(n_values, dtype=np.int64)
    class_level = np.zeros(n_levels, dtype=np.int64)
    counts = np.zeros(2, dtype=np.int64)
    width = max(vmax, values.shape[1])
    memo = np.zeros((n_attrs, width))
    stamp = np.full((n_attrs, width), -1, dtype=np.int64)
    step = 0
    sums = np.zeros(n_attrs)
    buf = np.zeros(max(k, n_levels, 1))
    hec_q = np.zeros(n_levels)
    level_best = np.zeros(n_levels)
    n_classes = 0
    reference = central
    while pool[0] >= k and pool[1] >= p and pool[2] >= h:
        # Steps 6-7: the free row farthest from the reference (lowest row on ties).
        start = -1
        start_key = 0.0
        for r in range(n):
            if not free[r]:
                continue
            d = 0.0
            for a in range(n_attrs):
                if kind[a] == CONTINUOUS:
                    dist = abs(xf[a, r] - xf[a, reference])
                else:
                    dist = matrix[a, xi[a, r], xi[a, reference]]
                d += weight[a] * dist
            key = _quantise(d, psi.scale)
            if start < 0 or key > start_key:
                start = r
                start_key = key
        reference = start
        hist[:, :] = 0
        cvec[:, :] = 0
        class_sens[:] = 0
        class_level[:] = 0
        counts[:] = 0
        members[0] = start
        g = 1
        _take(start, True, free, sens, level, free_sens, free_level, pool)
        _join(start, schema, xi, sens, level, hist, cvec, class_sens, class_level, counts)
        ok = True
        while g < k:
            # Steps 9-15, the diversity loop, while the class has fewer than p values
            # (only admissible rows; none left: the break rule); then steps 18-19, fill
            # to k. A diversity step adds a new value, so with p <= k the loop reaches
            # p values before k rows, and filling never lowers the count of values.
            step += 1
            best = _best_candidate(
                counts[0] < p, schema, psi, xf, index, values, sens, level, free, members, g,
                hist, cvec, class_sens, class_level, counts[1], h, memo, stamp, step, sums,
                buf, hec_q, level_best,
            )  # fmt: skip
            if best < 0:
                ok = False
                break
            members[g] = best
            g += 1
            _take(best, True, free, sens, level, free_sens, free_level, pool)
            _join(best, schema, xi, sens, level, hist, cvec, class_sens, class_level, counts)
        if not ok:
            # Break rule: the class's rows return to the pool; formation ends.
            for j in range(g):
                _take(members[j], False, free, sens, level, free_sens, free_level, pool)
            break
        for j in range(g):
            labels[members[j]] = n_classes
        n_classes += 1
    return labels, n_classes


# -- leftover placement (steps 23-28) ------------------------------------------------


@_compiled
def place_kernel(
    schema: PackedSchema,
    psi: _Psi,
    xf: np.ndarray,
    xi: np.ndarray,
    level: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    xf_new: np.ndarray,
    xi_new: np.ndarray,
    level_new: np.ndarray,
    order: np.ndarray,
) -> np.ndarray:  # pragma: no cover - compiled
    """Steps 23-28 (``GreedyAlgorithm._place`` with ``MaaSlie.choose_class``).

    The classes are the rows of ``labels >= 0`` (members in block order, as
    ``ClassStats.from_labels``); each row ``order[t]`` of the new rows joins, in
    turn, the class of largest PSI after the addition (lowest class id on ties).

    Args:
        schema: the packed schema.
        psi: the scoring constants.
        xf: continuous codes of the clustered rows ``(A, n)``.
        xi: discrete codes of the clustered rows.
        level: levels of the clustered rows.
        labels: class of each clustered row, ``-1`` for none.
        n_classes: number of classes.
        xf_new: continuous codes of the rows to place.
        xi_new: discrete codes of the rows to place.
        level_new: levels of the rows to place.
        order: the rows to place (indices into the new rows), in placement order.

    Returns:
        The class chosen for each entry of ``order``.
    """
    kind, weight, size, matrix = schema.kind, schema.weight, schema.size, schema.matrix
    cost, level_w, log_base = schema.cost, psi.level_w, psi.log_base
    w1, w2, scale, quantum, zero_loss = psi.w1, psi.w2, psi.scale, psi.quantum, psi.zero_loss
    n_attrs = kind.shape[0]
    n_levels = level_w.shape[0]
    vmax = matrix.shape[1]
    n_old = labels.shape[0]
    n_slots = n_old + order.shape[0]
    hist = np.zeros((n_classes, n_attrs, vmax), dtype=np.int64)
    cvec = np.zeros((n_classes, n_attrs, vmax), dtype=np.int64)
    class_level = np.zeros((n_classes, n_levels), dtype=np.int64)
    class_size = np.zeros(n_classes, dtype=np.int64)
    # Continuous members of each class, as a linked list of slots in insertion order.
    values = np.zeros((n_attrs, n_slots))
    head = np.full(n_classes, -1, dtype=np.int64)
    tail = np.full(n_classes, -1, dtype=np.int64)
    nxt = np.full(n_slots, -1, dtype=np.int64)
    buf = np.zeros(max(n_levels, 1))
    chosen = np.empty(order.shape[0], dtype=np.int64)
    slot = 0
    for step in range(n_old + order.shape[0]):
        if step < n_old:
            r = step
            c = labels[r]
            if c < 0:
                continue
            src_f, src_i, lv = xf, xi, level[r]
        else:
            r = order[step - n_old]
            src_f, src_i, lv = xf_new, xi_new, level_new[r]
            # Choose the class: largest quantised PSI, zero loss first (best_by_psi).
            best_zero = -1
            zero_key = 0.0
            best = -1
            best_key = 0.0
            for cc in range(n_classes):
                total = 0.0
                for a in range(n_attrs):
                    if kind[a] == CONTINUOUS:
                        x = src_f[a, r]
                        s = 0.0
                        q = head[cc]
                        while q >= 0:
                            s += values[a, q]
                            q = nxt[q]
                        s += x
                        mean = s / (class_size[cc] + 1)
                        loss = 0.0
                        q = head[cc]
                        while q >= 0:
                            loss += abs(values[a, q] - mean)
                            q = nxt[q]
                        loss += abs(x - mean)
                    else:
                        loss = _grown_loss(
                            kind[a], hist[cc, a], cvec[cc, a], matrix[a], cost[a],
                            size[a], src_i[a, r],
                        )  # fmt: skip
                    total += weight[a] * loss
                hq = _quantise(_hec(class_level[cc], lv, level_w, log_base, buf), scale)
                if w2 > 0 and total <= zero_loss:
                    if best_zero < 0 or hq > zero_key:
                        best_zero = cc
                        zero_key = hq
                elif best_zero < 0:
                    key = _psi_key(hq, _loss_key(total, scale, quantum), w1, w2, scale)
                    if best < 0 or key > best_key:
                        best = cc
                        best_key = key
            c = best_zero if best_zero >= 0 else best
            chosen[step - n_old] = c
        # Add the row to class c.
        for a in range(n_attrs):
            if kind[a] == CONTINUOUS:
                values[a, slot] = src_f[a, r]
            else:
                v = src_i[a, r]
                hist[c, a, v] += 1
                if kind[a] == CATEGORICAL:
                    for u in range(size[a]):
                        cvec[c, a, u] += cost[a, v, u]
        if head[c] < 0:
            head[c] = slot
        else:
            nxt[tail[c]] = slot
        tail[c] = slot
        slot += 1
        class_level[c, lv] += 1
        class_size[c] += 1
    return chosen
