"""Compiled (numba) per-block clustering of MAA-SAE and MAA-MINIL, label for label the numpy path's.

:class:`sparkanon.algorithms.blocks.maa_sae.MaaSae`
(and :class:`~sparkanon.algorithms.blocks.maa_sae.MaaMinil`)
spends most of a block in fixed Python cost per growth step (a dozen small numpy calls,
about 2 ms a step). This module runs the same steps compiled:

* :func:`_grow_kernel`: steps 6-22 for one class (``MaaSae._grow`` with
  ``MaaSae._merge_scores``): the best free row ``t'`` (step 8 / 15), the best formed
  class ``G'`` (9 / 16), their comparison (10 / 17), the break rule, then
  ``Q = Q ∪ {G}``;
* :func:`_place_kernel`: steps 24-29 (``MaaSae._place``), for :meth:`MaaSae.cluster`'s
  leftovers and :meth:`MaaSae.place_into` alike.

Both find the best formed class for ``G`` (``G'``, and a leftover's class) with
:func:`_best_class`.

The start rows (step 5) and the leftover order (25) are drawn in Python with the
block's generator, exactly as the numpy path draws them: :func:`cluster` calls
:func:`_grow_kernel` once per class with the drawn index into the free rows.

**Same labels as the numpy path (ties).** Both paths take every decision on the same
keys: each class's InfoLoss ``IL`` (eq. 12) and entropy ``Ent`` (eq. 14) is put on the
grid of :func:`sparkanon.metrics.entropy.quantise` (absolute, ``2**-30``) *before* the
increments are taken, so ``EA = q(Ent(G')) - q(Ent(G))`` and ``ILA = q(IL(G')) - q(IL(G))``
are exact differences of grid values, and ``APF = EA / ILA`` (eq. 16,
:func:`~sparkanon.metrics.entropy.anonymous_protection_factor`) is one correctly rounded
division of them: numpy and the kernel compute bit-identical keys from them. Candidates
are compared by :func:`sparkanon.algorithms.blocks.maa_sae.apf_keys` (MAA-MINIL: smallest
``ILA``, then larger ``EA``), ties to the lowest row (block order, which is row-id order)
or the earliest formed class, and a full tie between ``t'`` and ``G'`` merges.

The kernel also repeats the numpy path's arithmetic where it can, so that the values
it quantises are the very same floats: attributes are summed in schema order (the
histogram kinds first, then the others, where numpy adds
``ClassStats.hist_losses + ClassStats.member_losses``); continuous sums in numpy's order
(pairwise, :func:`~sparkanon.algorithms.blocks._slie_kernel._pairwise_sum`, for ``np.sum`` /
``np.mean`` of a contiguous array and for a single candidate's
``losses_with_each``; sequential for several candidates, where numpy reduces over
axis 0, and for ``np.bincount``); the vector nominal loss from integer counts (exact);
the semantic loss as :meth:`SemanticKind.summed_distances` accumulates it, level by
level, with the same medoid rule (the tie tolerance of ``SemanticKind._medoid`` for a
class's own loss, the plain minimum of ``losses_of`` and ``losses_with_each``); entropy
terms ``-p log2 p`` from a table computed once by numpy's own
:func:`~sparkanon.metrics.entropy.sensitive_level_entropy` (:func:`_terms`, classes of
up to :data:`TERMS_CAP` rows), summed pairwise. What may still differ in the last place
(the losses of ordinal, categorical and indicator nominal attributes, which numpy sums
with ``einsum``; ``np.log`` beyond the table) is absorbed by the quantisation.

Pruning is exact, as ``MaaSae.may_beat`` is in the numpy path, and goes further. A
loss is a sum of non-negative weighted terms, so leaving terms out gives a lower bound
``low`` of ``ILA`` on the grid, and every ranking key is non-increasing in ``ILA`` for a
fixed ``EA`` (except the literal ratio of an entropy loss, never pruned;
:func:`_out_of_reach`): a candidate whose key at ``ILA = low`` cannot reach the
reference is dropped. A class of ``Q`` is scored in three stages (histogram kinds,
then continuous, then semantic ones) and dropped as soon as it can rank neither at or
above ``t'`` (whose comparison alone decides a merge) nor strictly above the best class
so far (ties go to the class formed first); a candidate row's semantic loss, the
costly one, is computed only if the row could still rank strictly above the best row
so far.

Speed: the namedtuples are read once per kernel call and the hot helpers take plain
arrays and are not inlined; a namedtuple passed to a function, or an array bound to a
new name (which is what inlining does to arguments), costs atomic reference counts at
every call. Division uses numpy's error model (no ``ZeroDivisionError`` paths; every
division here has a non-zero divisor).

Supported kinds: those of :func:`sparkanon.algorithms.blocks._slie_kernel.pack` with
``extended=True``: :class:`~sparkanon.attributes.kinds.ContinuousKind`,
:class:`~sparkanon.attributes.kinds.OrdinalKind`,
:class:`~sparkanon.attributes.kinds.CategoricalKind`,
:class:`~sparkanon.attributes.kinds.NominalKind`,
:class:`~sparkanon.attributes.kinds.VectorNominalKind` and
:class:`~sparkanon.attributes.semantic.SemanticKind` (exact types). For any other
schema :func:`cluster` and :func:`place` return ``None`` (before drawing from the
generator) and the caller uses the numpy path; so does ``SPARKANON_NO_JIT=1``
(:func:`~sparkanon.algorithms.blocks._slie_kernel.enabled`). The functions are compiled once
and cached on disk (``cache=True``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.algorithms._jit import compiled
from sparkanon.algorithms.blocks._slie_kernel import (
    CATEGORICAL,
    CONTINUOUS,
    NO_JIT_ENV,
    SEMANTIC,
    VECTOR_NOMINAL,
    PackedSchema,
    _grown_centre,
    _grown_loss,
    _pairwise_sum,
    _quantise,
    _take,
    enabled,
    pack,
)
from sparkanon.attributes.semantic import TIE_TOLERANCE
from sparkanon.metrics.entropy import QUANTUM, ZERO_ENTROPY, ZERO_LOSS, sensitive_level_entropy

__all__ = ["NO_JIT_ENV", "TERMS_CAP", "cluster", "enabled", "place"]

TERMS_CAP = 512
"""Entropy terms of classes of up to this many rows come from the table :func:`_terms`."""

_compiled = compiled(error_model="numpy")
"""How every function of this module is compiled: nopython, cached on disk, numpy's
error model for division (no ``ZeroDivisionError`` paths; see Speed above)."""


class _Rows(NamedTuple):
    """Every row the kernels see (the block's, then any rows to place), by slot.

    ``xf``/``xi`` hold the continuous / the other codes ``(A, S)``; ``prefix[a, s, i-1]``
    is a semantic code's first ``i`` digits; ``index[r, a]`` (block rows only) a row's
    code, or the position of its continuous or semantic code among the block's distinct
    ones (the memo of a growth step).
    """

    xf: np.ndarray
    xi: np.ndarray
    prefix: np.ndarray
    index: np.ndarray
    sens: np.ndarray
    level: np.ndarray


class _Rule(NamedTuple):
    """The target, the ranking rule and the constants of the numpy path.

    Scalars only: the small comparison helpers take it in their inner loops, and an
    array field would be reference-counted at every call.
    """

    k: int
    p: int
    h: int
    minil: bool
    literal_rule: bool
    scale: float
    zero_loss: float
    zero_entropy: float
    tie_tolerance: float
    log_base: float


class _Classes(NamedTuple):
    """The formed classes ``Q`` in slots (a merged class's slot is reused).

    ``live[:count[0]]`` are the live slots in the order the classes were formed. Per
    slot: size, rows per sensitive value, the flat histogram and categorical cost
    vector ``hist @ C`` of the discrete attributes, the sum of squared counts of each
    vector nominal attribute, the sequential sum of each continuous attribute's codes,
    the members as a linked list of row slots (``head``, ``tail``, ``nxt``) in member
    order, and per semantic attribute ``a`` a second list in code order (``shead[c, a]``,
    ``snxt[a]``).
    """

    size: np.ndarray
    sens: np.ndarray
    hist: np.ndarray
    cvec: np.ndarray
    sq: np.ndarray
    total: np.ndarray
    head: np.ndarray
    tail: np.ndarray
    nxt: np.ndarray
    shead: np.ndarray
    snxt: np.ndarray
    live: np.ndarray
    count: np.ndarray


class _Pool(NamedTuple):
    """The free rows: mask, free rows per value and level, ``[rows, values, levels]``."""

    free: np.ndarray
    sens: np.ndarray
    level: np.ndarray
    counts: np.ndarray


class _Work(NamedTuple):
    """The growing class ``G`` (its rows and statistics) and scratch buffers.

    ``ordered[a, :g]``: ``G``'s rows in the order of their codes of semantic attribute ``a``.
    """

    members: np.ndarray
    ordered: np.ndarray
    sens: np.ndarray
    hist: np.ndarray
    cvec: np.ndarray
    sq: np.ndarray
    total: np.ndarray
    inside: np.ndarray
    ev: np.ndarray
    memo: np.ndarray
    stamp: np.ndarray
    step: np.ndarray
    fbuf: np.ndarray
    slots: np.ndarray
    cp: np.ndarray
    shared: np.ndarray
    hbuf: np.ndarray
    cbuf: np.ndarray
    zero: np.ndarray
    table: np.ndarray


# -- Python side ------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _terms() -> np.ndarray:
    """``terms[N, c]``: ``-p log2 p`` at ``p = c / N`` (0 at ``p = 0``), ``N, c <= TERMS_CAP``.

    Computed by :func:`~sparkanon.metrics.entropy.sensitive_level_entropy`, the very
    function behind :func:`~sparkanon.metrics.entropy.sensitive_entropy`, on the same
    shares ``c / N``, so the kernel's entropy terms are numpy's bit for bit.
    """
    n = np.arange(TERMS_CAP + 1, dtype=float)
    shares = n[None, :] / np.where(n > 0, n, 1.0)[:, None]
    table = np.asarray(sensitive_level_entropy(shares, base=2.0), dtype=float)
    table.setflags(write=False)
    return table


def _rows(packed: PackedSchema, blocks: list[Block]) -> _Rows:
    """The rows of ``blocks`` one after the other (the first block's get a memo index)."""
    a = len(packed.kind)
    n = sum(b.n for b in blocks)
    lmax = packed.level_weight.shape[1]
    xf = np.zeros((a, n))
    xi = np.zeros((a, n), dtype=np.int64)
    prefix = np.zeros((a, n, lmax), dtype=np.int64)
    index = np.zeros((blocks[0].n, a), dtype=np.int64)
    for i, kind in enumerate(packed.kind):
        column = np.concatenate([np.asarray(b.codes[i]) for b in blocks])
        own = column[: blocks[0].n]
        if kind == CONTINUOUS:
            xf[i] = column.astype(float)
            index[:, i] = np.unique(own.astype(float), return_inverse=True)[1].reshape(-1)
        else:
            xi[i] = column.astype(np.int64)
            if kind == SEMANTIC:
                index[:, i] = np.unique(own.astype(np.int64), return_inverse=True)[1].reshape(-1)
                for d in range(1, int(packed.digits[i]) + 1):
                    prefix[i, :, d - 1] = xi[i] // packed.power[i, d]
            else:
                index[:, i] = xi[i, : blocks[0].n]
    sens = np.concatenate([b.sens for b in blocks]).astype(np.int64)
    level = np.concatenate([b.level for b in blocks]).astype(np.int64)
    return _Rows(xf=xf, xi=xi, prefix=prefix, index=index, sens=sens, level=level)


def _rule(block: Block, minil: bool) -> _Rule:
    model = block.ctx.model
    return _Rule(
        k=int(model.k),
        p=int(model.p),
        h=int(model.h),
        minil=bool(minil),
        literal_rule=block.ctx.apf_rule == "literal",
        scale=1.0 / QUANTUM,
        zero_loss=float(ZERO_LOSS),
        zero_entropy=float(ZERO_ENTROPY),
        tie_tolerance=float(TIE_TOLERANCE),
        log_base=float(np.log(2.0)),
    )


def _classes(capacity: int, n_values: int, width: int, n_attrs: int, slots: int) -> _Classes:
    cap = max(capacity, 1)
    return _Classes(
        size=np.zeros(cap, dtype=np.int64),
        sens=np.zeros((cap, n_values), dtype=np.int64),
        hist=np.zeros((cap, width), dtype=np.int64),
        cvec=np.zeros((cap, width), dtype=np.int64),
        sq=np.zeros((cap, n_attrs), dtype=np.int64),
        total=np.zeros((cap, n_attrs)),
        head=np.full(cap, -1, dtype=np.int64),
        tail=np.full(cap, -1, dtype=np.int64),
        nxt=np.full(max(slots, 1), -1, dtype=np.int64),
        shead=np.full((cap, n_attrs), -1, dtype=np.int64),
        snxt=np.full((n_attrs, max(slots, 1)), -1, dtype=np.int64),
        live=np.zeros(cap, dtype=np.int64),
        count=np.zeros(1, dtype=np.int64),
    )


def _work(attrs: PackedSchema, rows: _Rows, n_values: int) -> _Work:
    n_attrs = len(attrs.kind)
    slots = max(rows.sens.shape[0], 1)
    width = _width(attrs)
    distinct = int(rows.index.max(initial=0)) + 1
    memo_width = max(distinct, int(attrs.size.max(initial=0)), 1)
    vmax = max(attrs.matrix.shape[1], 1)
    return _Work(
        members=np.zeros(slots, dtype=np.int64),
        ordered=np.zeros((n_attrs, slots), dtype=np.int64),
        sens=np.zeros(n_values, dtype=np.int64),
        hist=np.zeros(width, dtype=np.int64),
        cvec=np.zeros(width, dtype=np.int64),
        sq=np.zeros(n_attrs, dtype=np.int64),
        total=np.zeros(n_attrs),
        inside=np.zeros((n_attrs, slots)),
        ev=np.zeros(n_values),
        memo=np.zeros((n_attrs, memo_width)),
        stamp=np.full((n_attrs, memo_width), -1, dtype=np.int64),
        step=np.zeros(1, dtype=np.int64),
        fbuf=np.zeros(max(slots, n_values, 1)),
        slots=np.zeros(slots, dtype=np.int64),
        cp=np.zeros(slots, dtype=np.int64),
        shared=np.zeros(attrs.by_prefix.shape[1] + 1, dtype=np.int64),
        hbuf=np.zeros(vmax, dtype=np.int64),
        cbuf=np.zeros(vmax, dtype=np.int64),
        zero=np.zeros(n_values, dtype=np.int64),
        table=_terms(),
    )


def _width(attrs: PackedSchema) -> int:
    """Entries of a class's flat histogram (at least 1)."""
    return max(int(attrs.offset[-1] + attrs.size[-1]) if len(attrs.kind) else 0, 1)


def cluster(block: Block, rng: np.random.Generator, minil: bool) -> np.ndarray | None:
    """MAA-SAE (``minil=False``) or MAA-MINIL on one block, as ``MaaSae.cluster``.

    Args:
        block: the block's rows, in row-id order.
        rng: the block's generator, drawn from exactly as the numpy path draws (the
            start row of each class, then the leftovers' order).
        minil: MAA-MINIL's choice rule (smallest ``ILA``) instead of the APF rule
            ``block.ctx.apf_rule``.

    Returns:
        A class label per row (classes in the order they entered ``Q``; all ``-1``
        when the block cannot host a class), or ``None`` when a kind is not supported
        (the generator is then untouched).
    """
    attrs = pack(block, extended=True)
    if attrs is None:
        return None
    n = block.n
    if not block.can_host_class(np.arange(n)):
        return np.full(n, -1, dtype=np.int64)
    rows = _rows(attrs, [block])
    rule = _rule(block, minil)
    n_values = len(block.ctx.schema.sensitive.values)
    classes = _classes(n // max(rule.k, 1) + 1, n_values, _width(attrs), len(attrs.kind), n)
    pool = _Pool(
        free=np.ones(n, dtype=np.bool_),
        sens=np.bincount(rows.sens, minlength=n_values).astype(np.int64),
        level=np.bincount(rows.level, minlength=block.n_levels).astype(np.int64),
        counts=np.zeros(3, dtype=np.int64),
    )
    pool.counts[:] = [n, np.count_nonzero(pool.sens), np.count_nonzero(pool.level)]
    work = _work(attrs, rows, n_values)
    counts = pool.counts
    while counts[0] >= rule.k and counts[1] >= rule.p and counts[2] >= rule.h:
        draw = int(rng.integers(int(counts[0])))
        if _grow_kernel(attrs, rows, rule, classes, pool, work, draw):
            break  # the break rule
    leftovers = np.flatnonzero(pool.free)
    if leftovers.size and classes.count[0]:
        order = rng.permutation(leftovers)
        _place_kernel(attrs, rows, rule, classes, work, order.astype(np.int64))
    return _labels_kernel(classes, n)


def place(
    block: Block,
    labels: np.ndarray,
    extra: Block,
    rng: np.random.Generator,
    minil: bool,
) -> np.ndarray | None:
    """Rows of ``extra`` join ``block``'s classes by the leftover rule (``MaaSae.place_into``).

    Args:
        block: the clustered rows.
        labels: their labels (``-1`` rows are in no class).
        extra: the rows to place.
        rng: the generator for the placement order.
        minil: MAA-MINIL's choice rule.

    Returns:
        A label of ``labels`` per row of ``extra`` (all ``-1`` without a class), or
        ``None`` when a kind is not supported (the generator is then untouched).
    """
    attrs = pack(block, extended=True)
    if attrs is None:
        return None
    labels = np.asarray(labels, dtype=np.int64)
    present, dense = np.unique(labels[labels >= 0], return_inverse=True)
    if present.size == 0:  # no class to join (BlockAlgorithm.place answers so too)
        return np.full(extra.n, -1, dtype=np.int64)
    position = np.full(block.n, -1, dtype=np.int64)
    position[labels >= 0] = dense.reshape(-1)
    order = rng.permutation(extra.n)
    rows = _rows(attrs, [block, extra])
    rule = _rule(block, minil)
    n_values = len(block.ctx.schema.sensitive.values)
    slots = block.n + extra.n
    classes = _classes(len(present), n_values, _width(attrs), len(attrs.kind), slots)
    _init_classes_kernel(attrs, rows, classes, position, len(present))
    work = _work(attrs, rows, n_values)
    chosen = _place_kernel(attrs, rows, rule, classes, work, (block.n + order).astype(np.int64))
    out = np.empty(extra.n, dtype=np.int64)
    out[order] = present[chosen]
    return out


# -- compiled: keys -------------------------------------------------------------------


@_compiled
def _apf(ea: float, ila: float, rule: _Rule) -> float:  # pragma: no cover - compiled
    """:func:`~sparkanon.metrics.entropy.anonymous_protection_factor` of one candidate."""
    if ila <= rule.zero_loss:
        if ea > rule.zero_entropy:
            return np.inf
        if ea < -rule.zero_entropy:
            return -np.inf
        return 0.0
    return ea / ila


@_compiled
def _compare(
    ea1: float, ila1: float, ea2: float, ila2: float, rule: _Rule
) -> int:  # pragma: no cover - compiled
    """``1`` if candidate 1 ranks above candidate 2, ``-1`` below, ``0`` on a full tie.

    MAA-SAE: :func:`~sparkanon.algorithms.blocks.maa_sae.apf_keys` under ``literal`` or
    ``gain_then_loss``; MAA-MINIL: the smaller ``ILA``; then the larger ``EA``.
    """
    if rule.minil:
        if ila1 != ila2:
            return 1 if ila1 < ila2 else -1
    elif rule.literal_rule:
        k1 = _apf(ea1, ila1, rule)
        k2 = _apf(ea2, ila2, rule)
        if k1 != k2:
            return 1 if k1 > k2 else -1
    else:
        g1 = ea1 > rule.zero_entropy
        g2 = ea2 > rule.zero_entropy
        if g1 != g2:
            return 1 if g1 else -1
        if g1:
            k1 = _apf(ea1, ila1, rule)
            k2 = _apf(ea2, ila2, rule)
        else:
            k1 = -(ila1 if ila1 > rule.zero_loss else 0.0)
            k2 = -(ila2 if ila2 > rule.zero_loss else 0.0)
        if k1 != k2:
            return 1 if k1 > k2 else -1
    if ea1 != ea2:
        return 1 if ea1 > ea2 else -1
    return 0


@_compiled
def _out_of_reach(
    ea: float, low: float, ea_ref: float, ila_ref: float, rule: _Rule, strict: bool
) -> bool:  # pragma: no cover - compiled
    """Whether a candidate with this ``EA`` and ``ILA >= low`` cannot rank at or above a reference.

    ``strict``: cannot rank strictly above it. Every ranking key is non-increasing in
    ``ILA`` for a fixed ``EA`` (:func:`_compare`; the division is correctly rounded, so
    monotonic), except the literal ratio (``literal``) of a candidate that loses entropy,
    which grows towards 0 with ``ILA``: that one is never out of reach. So the candidate
    ranks at most as the key at ``ILA = low``, and the pruning is exact (the role of
    ``MaaSae.may_beat`` in the numpy path, here also against the best so far).
    """
    if rule.literal_rule and not rule.minil and ea < -rule.zero_entropy:
        return False
    order = _compare(ea, low, ea_ref, ila_ref, rule)
    return order < 0 or (strict and order == 0)


@_compiled
def _dropped(
    ea: float,
    low: float,
    has_row: bool,
    ea_t: float,
    ila_t: float,
    has_class: bool,
    ea_j: float,
    ila_j: float,
    rule: _Rule,
) -> bool:  # pragma: no cover - compiled
    """Whether a class of ``Q`` with ``ILA >= low`` cannot change the step's decision.

    It matters only if it can rank at or above ``t'`` (when there is one: then ``G'``
    merges) and strictly above the best class so far (``G'`` is the first best).
    """
    if has_row and _out_of_reach(ea, low, ea_t, ila_t, rule, False):
        return True
    return has_class and _out_of_reach(ea, low, ea_j, ila_j, rule, True)


# -- compiled: entropies and losses -------------------------------------------------------


@_compiled
def _entropy(
    a: np.ndarray, b: np.ndarray, extra: int, table: np.ndarray, log_base: float, buf: np.ndarray
) -> float:  # pragma: no cover - compiled
    """``Ent`` (eq. 14) of the counts ``a + b`` plus one row of value ``extra`` (-1: none).

    As :func:`~sparkanon.metrics.entropy.sensitive_entropy`: shares over the total,
    ``-p log2 p`` per value (from the table :func:`_terms` when the total allows, else
    with ``log_base = log(2)``), summed pairwise.
    """
    nv = a.shape[0]
    total = 0
    for v in range(nv):
        total += a[v] + b[v]
    if extra >= 0:
        total += 1
    cap = table.shape[0] - 1
    denominator = float(total) if total > 0 else 1.0
    for v in range(nv):
        c = a[v] + b[v] + (1 if v == extra else 0)
        if total <= cap:
            buf[v] = table[total, c]
        else:
            share = c / denominator
            buf[v] = -share * np.log(share) / log_base if share > 0 else 0.0
    return _pairwise_sum(buf, 0, nv)


@_compiled
def _common_prefix(
    prefix: np.ndarray, a: int, r: int, s: int, digits: int
) -> int:  # pragma: no cover - compiled
    """Digits shared by the semantic codes of slots ``r`` and ``s`` (``common_prefix``)."""
    c = 0
    while c < digits and prefix[a, r, c] == prefix[a, s, c]:
        c += 1
    return c


@_compiled
def _vector_loss(n: int, sq: int) -> float:  # pragma: no cover - compiled
    """``VectorNominalKind.losses`` of ``n`` rows whose squared counts sum to ``sq``."""
    size = float(n)
    return 0.5 * (size - float(sq) / (size if n > 0 else 1.0))


@_compiled
def _centre(
    kind: int,
    hist: np.ndarray,
    cvec: np.ndarray,
    cost: np.ndarray,
    size: int,
    hbuf: np.ndarray,
    cbuf: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Centroid code (``kind.centroids``) of the non-empty class of histogram ``hist``.

    :func:`~sparkanon.algorithms.blocks._slie_kernel._grown_centre` scores a class plus one
    row; the class is written as itself minus one of its rows (of code ``v``) plus that
    row, exactly in integers.
    """
    v = 0
    while hist[v] == 0:
        v += 1
    for u in range(size):
        hbuf[u] = hist[u]
        cbuf[u] = cvec[u] - (cost[v, u] if kind == CATEGORICAL else 0)
    hbuf[v] -= 1
    return _grown_centre(kind, hbuf, cbuf, cost, size, v)


@_compiled
def _semantic_inside(
    prefix: np.ndarray,
    level_weight: np.ndarray,
    digits: int,
    a: int,
    members: np.ndarray,
    g: int,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``out[a, j]``: summed distance of member ``j``'s code to the ``g`` members (eq. 10's ``D``).

    As :meth:`SemanticKind.summed_distances`: ``sum_i w_i (g - P[i])`` level by level,
    ``P[i]`` the members sharing the first ``i`` digits.
    """
    for j in range(g):
        total = 0.0
        for i in range(1, digits + 1):
            sharing = 0
            for m in range(g):
                if prefix[a, members[j], i - 1] == prefix[a, members[m], i - 1]:
                    sharing += 1
            total += level_weight[a, i - 1] * (g - sharing)
        out[a, j] = total


@_compiled
def _group_loss(
    attrs: PackedSchema, rows: _Rows, rule: _Rule, work: _Work, g: int
) -> float:  # pragma: no cover - compiled
    """``Block.loss`` (eq. 12) of ``G`` (``work.members[:g]``), attributes in schema order.

    Also leaves in ``work.total`` each continuous attribute's ``members.sum()`` and in
    ``work.inside`` each semantic attribute's summed distances, for the step's candidates.
    """
    kind, weight, offset, size = attrs.kind, attrs.weight, attrs.offset, attrs.size
    xf, xi = rows.xf, rows.xi
    members, buf, inside, g_total = work.members, work.fbuf, work.inside, work.total
    total = 0.0
    for a in range(kind.shape[0]):
        k = kind[a]
        if k == CONTINUOUS:
            for j in range(g):
                buf[j] = xf[a, members[j]]
            s = _pairwise_sum(buf, 0, g)
            g_total[a] = s
            mean = s / g
            for j in range(g):
                buf[j] = abs(xf[a, members[j]] - mean)
            loss = _pairwise_sum(buf, 0, g)
        elif k == VECTOR_NOMINAL:
            loss = _vector_loss(g, work.sq[a])
        elif k == SEMANTIC:
            _semantic_inside(
                rows.prefix, attrs.level_weight, attrs.digits[a], a, members, g, inside
            )
            best = inside[a, 0]
            for j in range(1, g):
                best = min(best, inside[a, j])
            # SemanticKind._medoid: the lowest code within the tie tolerance of the least.
            bound = best + rule.tie_tolerance * max(best, 1.0)
            pick = -1
            for j in range(g):
                if inside[a, j] <= bound and (pick < 0 or xi[a, members[j]] < xi[a, members[pick]]):
                    pick = j
            loss = inside[a, pick]
        else:
            lo = offset[a]
            width = size[a]
            centre = _centre(
                k, work.hist[lo : lo + width], work.cvec[lo : lo + width], attrs.cost[a],
                width, work.hbuf, work.cbuf,
            )  # fmt: skip
            matrix = attrs.matrix
            for j in range(g):
                buf[j] = matrix[a, xi[a, members[j]], centre]
            loss = _pairwise_sum(buf, 0, g)
        total += weight[a] * loss
    return total


@_compiled
def _continuous_with_row(
    xf: np.ndarray, a: int, members: np.ndarray, g: int, total: float, r: int
) -> float:  # pragma: no cover - compiled
    """``ContinuousKind.losses_with_each`` of ``G + r`` among several candidates.

    ``total`` is ``members.sum()``; numpy sums the members' distances over axis 0 of a
    ``members x candidates`` array, sequentially.
    """
    x = xf[a, r]
    mean = (total + x) / (g + 1)
    inside = 0.0
    for j in range(g):
        inside += abs(xf[a, members[j]] - mean)
    return inside + abs(x - mean)


@_compiled
def _semantic_with_row(
    prefix: np.ndarray,
    a: int,
    members: np.ndarray,
    g: int,
    r: int,
    digits: int,
    level_weight: np.ndarray,
    by_prefix: np.ndarray,
    inside: np.ndarray,
    shared: np.ndarray,
    cp: np.ndarray,
) -> float:  # pragma: no cover - compiled
    """``SemanticKind.losses_with_each`` of ``G + r``: the least summed distance.

    The candidate as medoid (``sum_i w_i (g - P[i])``, level by level), or a member
    value ``s`` at its summed distance ``inside[a, j]`` plus ``d(s, r)``: numpy's
    minimum over prefix levels of ``min M_s + by_prefix[i]`` is attained at each
    member's own common prefix, the float sums being monotonic.
    """
    for i in range(digits + 1):
        shared[i] = 0
    for j in range(g):
        m = members[j]
        c = 0
        while c < digits and prefix[a, m, c] == prefix[a, r, c]:
            c += 1
        cp[j] = c
        shared[c] += 1
    # P[i] = members sharing at least i digits, for i = digits..1.
    for i in range(digits - 1, 0, -1):
        shared[i] += shared[i + 1]
    best = 0.0
    for i in range(1, digits + 1):
        best += level_weight[a, i - 1] * (g - shared[i])
    for j in range(g):
        best = min(best, inside[a, j] + by_prefix[a, cp[j]])
    return best


@_compiled
def _other_with_row(
    kind: int,
    a: int,
    g: int,
    r: int,
    xf: np.ndarray,
    xi: np.ndarray,
    members: np.ndarray,
    total: float,
    g_hist: np.ndarray,
    g_cvec: np.ndarray,
    offset: np.ndarray,
    size: np.ndarray,
    matrix: np.ndarray,
    cost: np.ndarray,
    fbuf: np.ndarray,
) -> float:  # pragma: no cover - compiled
    """``losses_with_each`` of ``G + r`` on the other attributes.

    A discrete (histogram) attribute, or a continuous one when ``r`` is the step's only
    candidate (numpy then sums pairwise).
    """
    if kind == CONTINUOUS:
        x = xf[a, r]
        mean = (total + x) / (g + 1)
        for j in range(g):
            fbuf[j] = abs(xf[a, members[j]] - mean)
        return _pairwise_sum(fbuf, 0, g) + abs(x - mean)
    lo = offset[a]
    width = size[a]
    return _grown_loss(
        kind, g_hist[lo : lo + width], g_cvec[lo : lo + width], matrix[a], cost[a], width,
        xi[a, r],
    )  # fmt: skip


@_compiled
def _hist_part(
    c: int,
    g: int,
    kind: np.ndarray,
    weight: np.ndarray,
    offset: np.ndarray,
    size: np.ndarray,
    matrix: np.ndarray,
    cost: np.ndarray,
    xi: np.ndarray,
    members: np.ndarray,
    c_hist: np.ndarray,
    c_cvec: np.ndarray,
    c_sq: np.ndarray,
    c_size: np.ndarray,
    g_hist: np.ndarray,
    g_cvec: np.ndarray,
    g_sq: np.ndarray,
    hbuf: np.ndarray,
    cbuf: np.ndarray,
) -> float:  # pragma: no cover - compiled
    """``ClassStats.hist_losses``: weighted loss of class ``c`` ∪ ``G`` on the discrete kinds."""
    total = 0.0
    for a in range(kind.shape[0]):
        k = kind[a]
        if k == CONTINUOUS or k == SEMANTIC:
            continue
        lo = offset[a]
        width = size[a]
        if k == VECTOR_NOMINAL:
            cross = 0
            for j in range(g):
                cross += c_hist[c, lo + xi[a, members[j]]]
            loss = _vector_loss(c_size[c] + g, c_sq[c, a] + 2 * cross + g_sq[a])
        else:
            # The union, written as itself minus one row of code v plus that row.
            v = xi[a, members[g - 1]]
            for u in range(width):
                hbuf[u] = c_hist[c, lo + u] + g_hist[lo + u]
                cbuf[u] = c_cvec[c, lo + u] + g_cvec[lo + u]
                if k == CATEGORICAL:
                    cbuf[u] -= cost[a, v, u]
            hbuf[v] -= 1
            loss = _grown_loss(k, hbuf[:width], cbuf[:width], matrix[a], cost[a], width, v)
        total += weight[a] * loss
    return total


@_compiled
def _semantic_union(
    c: int,
    g: int,
    a: int,
    digits: int,
    level_weight: np.ndarray,
    xi: np.ndarray,
    prefix: np.ndarray,
    ordered: np.ndarray,
    shead: np.ndarray,
    snxt: np.ndarray,
    slots: np.ndarray,
    cp: np.ndarray,
    cost: np.ndarray,
) -> float:  # pragma: no cover - compiled
    """``SemanticKind.losses_of`` of class ``c`` with ``G``'s codes added (least summed distance).

    The union's codes in code order (the class's sorted list merged with ``G``'s,
    ``ordered[a]``); per prefix level the runs of codes sharing it (``P_s[i]``) give
    ``cost += w_i (N - run)``, level by level as numpy accumulates it; the least cost.
    """
    m = 0
    q = shead[c, a]
    j = 0
    while q >= 0 or j < g:
        if j >= g or (q >= 0 and xi[a, q] <= xi[a, ordered[a, j]]):
            slots[m] = q
            q = snxt[a, q]
        else:
            slots[m] = ordered[a, j]
            j += 1
        m += 1
    # cp[j]: digits shared by the j-th code in code order and the one before it.
    for j in range(1, m):
        cp[j] = _common_prefix(prefix, a, slots[j - 1], slots[j], digits)
    for j in range(m):
        cost[j] = 0.0
    for i in range(1, digits + 1):
        w = level_weight[a, i - 1]
        start = 0
        while start < m:
            end = start + 1
            while end < m and cp[end] >= i:
                end += 1
            value = w * (m - (end - start))
            for j in range(start, end):
                cost[j] += value
            start = end
    best = cost[0]
    for j in range(1, m):
        best = min(best, cost[j])
    return best


@_compiled
def _member_terms(
    c: int,
    g: int,
    semantic: bool,
    kind: np.ndarray,
    weight: np.ndarray,
    digits: np.ndarray,
    level_weight: np.ndarray,
    xf: np.ndarray,
    xi: np.ndarray,
    prefix: np.ndarray,
    members: np.ndarray,
    ordered: np.ndarray,
    c_total: np.ndarray,
    c_size: np.ndarray,
    head: np.ndarray,
    nxt: np.ndarray,
    shead: np.ndarray,
    snxt: np.ndarray,
    slots: np.ndarray,
    cp: np.ndarray,
    fbuf: np.ndarray,
) -> float:  # pragma: no cover - compiled
    """``ClassStats.member_losses`` of class ``c`` ∪ ``G``: the weighted loss on the other kinds.

    Continuous attributes always (``ContinuousKind.losses_of``, whose ``np.bincount``
    sums the members, then ``G``'s codes, sequentially), semantic ones only with
    ``semantic``. Returns their sum in schema order, the semantic terms counted as 0
    without ``semantic``: a lower bound of the full sum (adding non-negative terms is
    monotonic), equal to it with.
    """
    n = c_size[c] + g
    total = 0.0
    for a in range(kind.shape[0]):
        k = kind[a]
        if k == CONTINUOUS:
            s = c_total[c, a]
            for j in range(g):
                s += xf[a, members[j]]
            mean = s / max(n, 1)
            loss = 0.0
            q = head[c]
            while q >= 0:
                loss += abs(xf[a, q] - mean)
                q = nxt[q]
            for j in range(g):
                loss += abs(xf[a, members[j]] - mean)
        elif k == SEMANTIC and semantic:
            loss = _semantic_union(
                c, g, a, digits[a], level_weight, xi, prefix, ordered, shead,
                snxt, slots, cp, fbuf,
            )  # fmt: skip
        else:
            continue  # a histogram kind, or a semantic one left out
        total += weight[a] * loss
    return total


# -- compiled: the growing class and the formed ones --------------------------------------


@_compiled
def _group_clear(attrs: PackedSchema, work: _Work) -> None:  # pragma: no cover - compiled
    """``G`` becomes empty."""
    work.sens[:] = 0
    work.hist[:] = 0
    work.cvec[:] = 0
    work.sq[:] = 0


@_compiled
def _group_add(
    attrs: PackedSchema, rows: _Rows, work: _Work, g: int, r: int
) -> int:  # pragma: no cover - compiled
    """Row ``r`` joins ``G`` (``g`` rows so far); returns ``g + 1``."""
    kind, offset, size, cost = attrs.kind, attrs.offset, attrs.size, attrs.cost
    xi = rows.xi
    ordered, hist, cvec, sq = work.ordered, work.hist, work.cvec, work.sq
    work.members[g] = r
    work.sens[rows.sens[r]] += 1
    for a in range(kind.shape[0]):
        k = kind[a]
        if k == SEMANTIC:
            j = g  # insertion into the code order, after equal codes
            while j > 0 and xi[a, ordered[a, j - 1]] > xi[a, r]:
                ordered[a, j] = ordered[a, j - 1]
                j -= 1
            ordered[a, j] = r
            continue
        if k == CONTINUOUS:
            continue
        lo = offset[a]
        v = xi[a, r]
        if k == VECTOR_NOMINAL:
            sq[a] += 2 * hist[lo + v] + 1
        hist[lo + v] += 1
        if k == CATEGORICAL:
            for u in range(size[a]):
                cvec[lo + u] += cost[a, v, u]
    return g + 1


@_compiled
def _class_add(
    attrs: PackedSchema, rows: _Rows, classes: _Classes, c: int, r: int
) -> None:  # pragma: no cover - compiled
    """Row ``r`` joins class ``c`` as its last member (``ClassStats.add_rows``)."""
    kind, offset, size, cost = attrs.kind, attrs.offset, attrs.size, attrs.cost
    xf, xi = rows.xf, rows.xi
    hist, cvec, sq, total = classes.hist, classes.cvec, classes.sq, classes.total
    shead, snxt, nxt = classes.shead, classes.snxt, classes.nxt
    classes.size[c] += 1
    classes.sens[c, rows.sens[r]] += 1
    for a in range(kind.shape[0]):
        k = kind[a]
        if k == CONTINUOUS:
            total[c, a] += xf[a, r]
            continue
        if k == SEMANTIC:
            # Into the code-ordered list, after equal codes.
            code = xi[a, r]
            q = shead[c, a]
            if q < 0 or xi[a, q] > code:
                snxt[a, r] = q
                shead[c, a] = r
            else:
                while snxt[a, q] >= 0 and xi[a, snxt[a, q]] <= code:
                    q = snxt[a, q]
                snxt[a, r] = snxt[a, q]
                snxt[a, q] = r
            continue
        lo = offset[a]
        v = xi[a, r]
        if k == VECTOR_NOMINAL:
            sq[c, a] += 2 * hist[c, lo + v] + 1
        hist[c, lo + v] += 1
        if k == CATEGORICAL:
            for u in range(size[a]):
                cvec[c, lo + u] += cost[a, v, u]
    nxt[r] = -1
    if classes.head[c] < 0:
        classes.head[c] = r
    else:
        nxt[classes.tail[c]] = r
    classes.tail[c] = r


@_compiled
def _class_clear(classes: _Classes, c: int) -> None:  # pragma: no cover - compiled
    """Slot ``c`` holds no class."""
    classes.size[c] = 0
    classes.sens[c, :] = 0
    classes.hist[c, :] = 0
    classes.cvec[c, :] = 0
    classes.sq[c, :] = 0
    classes.total[c, :] = 0.0
    classes.head[c] = -1
    classes.tail[c] = -1
    classes.shead[c, :] = -1


@_compiled
def _init_classes_kernel(
    attrs: PackedSchema, rows: _Rows, classes: _Classes, position: np.ndarray, m: int
) -> None:  # pragma: no cover - compiled
    """The classes ``0..m-1`` of a labelled block: row ``r`` joins class ``position[r]``.

    Members in block order, as ``MaaSae.place_into`` builds them.
    """
    for c in range(m):
        _class_clear(classes, c)
        classes.live[c] = c
    classes.count[0] = m
    for r in range(position.shape[0]):
        if position[r] >= 0:
            _class_add(attrs, rows, classes, position[r], r)


@_compiled
def _labels_kernel(classes: _Classes, n: int) -> np.ndarray:  # pragma: no cover - compiled
    """Label of each of the first ``n`` rows: its class's position in ``Q``, else ``-1``."""
    labels = np.full(n, -1, dtype=np.int64)
    for pos in range(classes.count[0]):
        q = classes.head[classes.live[pos]]
        while q >= 0:
            if q < n:
                labels[q] = pos
            q = classes.nxt[q]
    return labels


# -- compiled: the best class of Q for G (steps 9 / 16 and 26) ----------------------------


@_compiled
def _best_class(
    attrs: PackedSchema,
    rows: _Rows,
    rule: _Rule,
    classes: _Classes,
    work: _Work,
    g: int,
    loss: float,
    ent: float,
    has_row: bool,
    ea_t: float,
    ila_t: float,
    staged: bool,
) -> tuple[int, float, float]:  # pragma: no cover - compiled
    """The class ``G'`` of ``Q`` that ranks first merged with ``G`` (steps 9 / 16 and 26).

    ``EA = q(Ent(G ∪ Gk)) - ent`` and ``ILA = q(IL(G ∪ Gk)) - loss`` for each class
    ``Gk`` of ``Q``, ranked by :func:`_compare`; ties go to the class formed first.
    ``IL(G ∪ Gk)`` is scored in stages, each a lower bound of the next: the histogram
    kinds, then (with ``staged``) the continuous ones alone, then with the semantic ones.
    A class is dropped at the first stage where it can rank neither at or above ``t'``
    (``has_row``: the candidate row's ``(ea_t, ila_t)``, whose comparison decides a
    merge) nor strictly above the best class so far.

    Args:
        attrs: the packed schema.
        rows: every row (slots).
        rule: ranking rule and constants.
        classes: ``Q``.
        work: ``G`` (``work.members[:g]``) and scratch buffers.
        g: the rows of ``G``.
        loss: ``q(IL(G))``.
        ent: ``q(Ent(G))``.
        has_row: whether there is a candidate row ``t'``.
        ea_t: ``t'``'s ``EA``.
        ila_t: ``t'``'s ``ILA``.
        staged: score the continuous kinds before the semantic ones (worth it only
            when the schema has semantic attributes).

    Returns:
        ``(position in Q, EA, ILA)`` of ``G'``; position ``-1`` when no class ranks.
    """
    kind, weight, offset, size = attrs.kind, attrs.weight, attrs.offset, attrs.size
    digits, level_weight, matrix, cost = attrs.digits, attrs.level_weight, attrs.matrix, attrs.cost
    xf, xi, prefix = rows.xf, rows.xi, rows.prefix
    members, g_sens, g_hist, g_cvec, g_sq = work.members, work.sens, work.hist, work.cvec, work.sq
    ordered, fbuf, table = work.ordered, work.fbuf, work.table
    cp, slots, hbuf, cbuf = work.cp, work.slots, work.hbuf, work.cbuf
    c_size, c_sens, c_hist = classes.size, classes.sens, classes.hist
    c_cvec, c_sq, c_total = classes.cvec, classes.sq, classes.total
    head, nxt, shead, snxt = classes.head, classes.nxt, classes.shead, classes.snxt
    live = classes.live
    pick = -1
    ea_j = 0.0
    ila_j = 0.0
    for pos in range(classes.count[0]):
        c = live[pos]
        e = _entropy(c_sens[c], g_sens, -1, table, rule.log_base, fbuf)
        ea = _quantise(e, rule.scale) - ent
        hist = _hist_part(
            c, g, kind, weight, offset, size, matrix, cost, xi, members, c_hist, c_cvec, c_sq,
            c_size, g_hist, g_cvec, g_sq, hbuf, cbuf,
        )  # fmt: skip
        low = _quantise(hist, rule.scale) - loss
        if _dropped(ea, low, has_row, ea_t, ila_t, pick >= 0, ea_j, ila_j, rule):
            continue
        if staged:
            member = _member_terms(
                c, g, False, kind, weight, digits, level_weight, xf, xi, prefix, members,
                ordered, c_total, c_size, head, nxt, shead, snxt, slots, cp, fbuf,
            )  # fmt: skip
            low = _quantise(hist + member, rule.scale) - loss
            if _dropped(ea, low, has_row, ea_t, ila_t, pick >= 0, ea_j, ila_j, rule):
                continue
        member = _member_terms(
            c, g, True, kind, weight, digits, level_weight, xf, xi, prefix, members,
            ordered, c_total, c_size, head, nxt, shead, snxt, slots, cp, fbuf,
        )  # fmt: skip
        ila = _quantise(hist + member, rule.scale) - loss
        if pick < 0 or _compare(ea, ila, ea_j, ila_j, rule) > 0:
            pick = pos
            ea_j = ea
            ila_j = ila
    return pick, ea_j, ila_j


# -- compiled: steps 6-22 ------------------------------------------------------------------


@_compiled
def _grow_kernel(
    attrs: PackedSchema,
    rows: _Rows,
    rule: _Rule,
    classes: _Classes,
    pool: _Pool,
    work: _Work,
    draw: int,
) -> int:  # pragma: no cover - compiled
    """Steps 5-22: grow one class from the ``draw``-th free row and add it to ``Q``.

    Args:
        attrs: the packed schema.
        rows: the block's rows.
        rule: target, ranking rule and constants.
        classes: ``Q`` (updated).
        pool: the free rows (updated).
        work: ``G`` and scratch buffers.
        draw: index of the start row among the free rows (``rng.integers(free rows)``).

    Returns:
        ``0`` when a class was formed, ``1`` under the break rule (``G``'s rows are
        free again).
    """
    # Every array the loops read, out of the namedtuples once (a namedtuple's array
    # read inside a loop or a branch costs an atomic reference count each time).
    kind, weight, offset, size = attrs.kind, attrs.weight, attrs.offset, attrs.size
    digits, level_weight, by_prefix = attrs.digits, attrs.level_weight, attrs.by_prefix
    matrix, cost = attrs.matrix, attrs.cost
    xf, xi, prefix, index, sens = rows.xf, rows.xi, rows.prefix, rows.index, rows.sens
    free = pool.free
    members, g_sens, g_hist, g_cvec, g_sq = work.members, work.sens, work.hist, work.cvec, work.sq
    g_total, inside, ev, shared, cp = work.total, work.inside, work.ev, work.shared, work.cp
    memo, stamp, fbuf, table, zero = work.memo, work.stamp, work.fbuf, work.table, work.zero
    head, nxt, live = classes.head, classes.nxt, classes.live
    n = free.shape[0]
    n_attrs = kind.shape[0]
    has_semantic = False
    for a in range(n_attrs):
        if kind[a] == SEMANTIC:
            has_semantic = True
    start = -1
    seen = 0
    for r in range(n):
        if free[r]:
            if seen == draw:
                start = r
                break
            seen += 1
    _take(start, True, free, sens, rows.level, pool.sens, pool.level, pool.counts)
    _group_clear(attrs, work)
    g = _group_add(attrs, rows, work, 0, start)
    distinct = 1
    while g < rule.k:
        admissible = distinct < rule.p  # steps 7-13: only values new to G
        n_cand = 0
        for r in range(n):
            if free[r] and not (admissible and g_sens[sens[r]] > 0):
                n_cand += 1
        n_live = classes.count[0]
        if n_cand == 0 and n_live == 0:
            for j in range(g):  # break rule (unreachable from step 4's pool)
                _take(
                    members[j], False, free, sens, rows.level, pool.sens, pool.level,
                    pool.counts,
                )  # fmt: skip
            return 1
        loss_g = _quantise(_group_loss(attrs, rows, rule, work, g), rule.scale)
        ent_g = _quantise(_entropy(g_sens, zero, -1, table, rule.log_base, fbuf), rule.scale)
        best = -1
        ea_t = 0.0
        ila_t = 0.0
        if n_cand > 0:  # steps 8 / 15: t'
            for v in range(ev.shape[0]):
                e = _entropy(g_sens, zero, v, table, rule.log_base, fbuf)
                ev[v] = _quantise(e, rule.scale) - ent_g
            work.step[0] += 1
            step = work.step[0]
            single = n_cand == 1
            for r in range(n):
                if not free[r] or (admissible and g_sens[sens[r]] > 0):
                    continue
                ea = ev[sens[r]]
                # The losses in schema order; a semantic one not yet scored this step
                # counts as 0 first (a lower bound), and is scored only if the row
                # could still beat the best so far (ties go to the earlier row).
                total = 0.0
                pending = False
                rescored = False
                dropped = False
                a = 0
                while a < n_attrs:
                    u = index[r, a]
                    k = kind[a]
                    if stamp[a, u] != step:
                        if k == SEMANTIC and best >= 0 and not rescored:
                            pending = True
                        else:
                            stamp[a, u] = step
                            if k == CONTINUOUS and not single:
                                loss = _continuous_with_row(xf, a, members, g, g_total[a], r)
                            elif k == SEMANTIC:
                                loss = _semantic_with_row(
                                    prefix, a, members, g, r, digits[a], level_weight,
                                    by_prefix, inside, shared, cp,
                                )  # fmt: skip
                            elif k == VECTOR_NOMINAL:
                                v = g_sq[a] + 2 * g_hist[offset[a] + xi[a, r]] + 1
                                loss = _vector_loss(g + 1, v)
                            else:
                                loss = _other_with_row(
                                    k, a, g, r, xf, xi, members, g_total[a], g_hist, g_cvec,
                                    offset, size, matrix, cost, fbuf,
                                )  # fmt: skip
                            memo[a, u] = loss
                    if stamp[a, u] == step:
                        total += weight[a] * memo[a, u]
                    a += 1
                    if a == n_attrs and pending and not rescored:
                        low = _quantise(total, rule.scale) - loss_g
                        if _out_of_reach(ea, low, ea_t, ila_t, rule, True):
                            dropped = True
                            break
                        rescored = True
                        total = 0.0
                        a = 0
                if dropped:
                    continue
                ila = _quantise(total, rule.scale) - loss_g
                if best < 0 or _compare(ea, ila, ea_t, ila_t, rule) > 0:
                    best = r
                    ea_t = ea
                    ila_t = ila
        # steps 9 / 16: G'
        pick, ea_j, ila_j = _best_class(
            attrs, rows, rule, classes, work, g, loss_g, ent_g, best >= 0, ea_t, ila_t,
            has_semantic,
        )  # fmt: skip
        if best >= 0 and (pick < 0 or _compare(ea_t, ila_t, ea_j, ila_j, rule) > 0):
            # steps 11 / 18: t' joins G
            _take(best, True, free, sens, rows.level, pool.sens, pool.level, pool.counts)
            if g_sens[sens[best]] == 0:
                distinct += 1
            g = _group_add(attrs, rows, work, g, best)
        else:
            # steps 12 / 19: G' leaves Q and merges into G (G then has k rows)
            c = live[pick]
            q = head[c]
            while q >= 0:
                members[g] = q
                g += 1
                q = nxt[q]
            for pos in range(pick, n_live - 1):
                live[pos] = live[pos + 1]
            classes.count[0] = n_live - 1
            _class_clear(classes, c)
    # Step 22: Q = Q ∪ {G}, in a free slot, members in G's order.
    slot = 0
    while head[slot] >= 0:
        slot += 1
    _class_clear(classes, slot)
    for j in range(g):
        _class_add(attrs, rows, classes, slot, members[j])
    live[classes.count[0]] = slot
    classes.count[0] += 1
    return 0


# -- compiled: steps 24-29 -----------------------------------------------------------------


@_compiled
def _place_kernel(
    attrs: PackedSchema, rows: _Rows, rule: _Rule, classes: _Classes, work: _Work, order: np.ndarray
) -> np.ndarray:  # pragma: no cover - compiled
    """Steps 24-29: each row of ``order`` joins the best class ``Gk`` by ``({t}, {t} ∪ Gk)``.

    ``EA = q(Ent(Gk + t)) - q(Ent({t}))`` and ``ILA = q(IL(Gk + t)) - q(IL({t}))``, as
    ``MaaSae._place``; ties to the class formed first.

    Args:
        attrs: the packed schema.
        rows: every row (slots).
        rule: ranking rule and constants.
        classes: ``Q`` (rows are added to it).
        work: scratch; ``G`` holds the row being placed.
        order: the slots of the rows to place, in placement order.

    Returns:
        For each row of ``order``, the position in ``Q`` of the class it joined.
    """
    g_sens, fbuf, table, zero = work.sens, work.fbuf, work.table, work.zero
    live = classes.live
    chosen = np.empty(order.shape[0], dtype=np.int64)
    for t in range(order.shape[0]):
        r = order[t]
        _group_clear(attrs, work)
        _group_add(attrs, rows, work, 0, r)
        loss_t = _quantise(_group_loss(attrs, rows, rule, work, 1), rule.scale)
        ent_t = _quantise(_entropy(g_sens, zero, -1, table, rule.log_base, fbuf), rule.scale)
        pick = _best_class(
            attrs, rows, rule, classes, work, 1, loss_t, ent_t, False, 0.0, 0.0, False
        )[0]
        chosen[t] = pick
        _class_add(attrs, rows, classes, live[pick], r)
    return chosen
