"""Compiled (numba) (K,L) clustering, label for label the numpy path's.

:class:`sparkanon.algorithms.blocks.kl_cluster.KLCluster` spends a block in a few numpy calls
per step of its row loops (growing a class by least NCP growth, the diversity swaps,
the centroid of the free rows per class, the leftovers and the reassignment rounds),
each over all the free rows or all the classes. This module runs those loops compiled:

* :func:`cluster_kernel`: steps 2-6 and 8-10 (anchor, growth to ``K`` rows, diversity
  swaps, rounds of one class per sensitive-value cluster), step 11 (leftovers) and
  steps 12-13 (reassignment) of the module docstring of
  :mod:`~sparkanon.algorithms.blocks.kl_cluster`;
* :func:`place_kernel`: rows of another block join, in row order, the class whose
  information loss grows least (:meth:`KLCluster.place_into`).

Steps 1 and 2 of section 4.1 (the reference matrix and the improved k-means over the
sensitive values, a few values per block) stay with the numpy functions, which both
paths call, so both start from the same value clusters.

**Same labels as the numpy path.** The kernels repeat its arithmetic operation for
operation: NCP sums over the attributes in schema order from 0, a continuous range's
NCP is ``min(max(hi - lo, 0), 1)``, a discrete one's is read from the same
:func:`~sparkanon.attributes.ranges.pair_ncp_table`; tuple distances (eq. 18) sum the
weighted per-attribute distances in schema order; a continuous centroid is numpy's
pairwise sum (:func:`~sparkanon.algorithms.blocks._slie_kernel._pairwise_sum`) over the free
rows in row order divided by their number, a discrete one is computed from integer
counts (:func:`~sparkanon.algorithms.blocks._slie_kernel._grown_centre`, exact in any order).
NCP growths are compared after ``rint(x / EPS) * EPS`` (numpy's ``np.round``), and
every tie goes where the numpy path's ``lexsort`` sends it (see each function).

Supported kinds are those of :func:`sparkanon.algorithms.blocks._slie_kernel.pack` (continuous,
date and timestamp, ordinal, categorical, nominal; exact types): any other schema uses
the numpy path, as does ``SPARKANON_NO_JIT=1`` (:func:`enabled`). Every function takes
one type per argument (float64 / int64 arrays, named tuples of them), so numba
compiles each once; ``cache=True`` keeps the machine code on disk.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.algorithms._jit import compiled
from sparkanon.algorithms.blocks._slie_kernel import (
    CATEGORICAL,
    CONTINUOUS,
    _grown_centre,
    _pairwise_sum,
    pack,
)
from sparkanon.algorithms.blocks._slie_kernel import enabled as enabled
from sparkanon.attributes.ranges import pair_ncp_table

__all__ = ["cluster", "enabled", "place"]


_compiled = compiled(error_model="numpy")
"""How the entry points are compiled: nopython, cached on disk, numpy's error model (no
``ZeroDivisionError`` paths; no division here can be by zero)."""
_inner = compiled(error_model="numpy", no_cpython_wrapper=True)
"""How the functions only the kernels call are compiled: as :data:`_compiled`, without
the wrapper that unboxes Python arguments (for named tuples of arrays that wrapper
costs several times the compile time of a small function)."""

_NO_ROW = np.int64(-1)
""""No row / class yet". numba types a literal ``-1`` as its own type, and a variable
that starts at a literal and is reassigned can reach a call with that type while the
types are being inferred, which compiles the callee a second time; a numpy scalar is
plain ``int64``. (``tests/algorithms/blocks/test_kl_kernel.py`` checks every function compiles
once.)"""
_ZERO = np.int64(0)
"""0 as plain ``int64`` (see :data:`_NO_ROW`)."""
_YES, _NO = np.bool_(True), np.bool_(False)
"""Flags as plain ``bool`` (see :data:`_NO_ROW`)."""
_IN, _OUT = np.int64(1), np.int64(-1)
"""A row given back to the free rows, taken out of them (see :data:`_NO_ROW`)."""


class _Attrs(NamedTuple):
    """The quasi-identifiers as the kernels read them (from :func:`pack`).

    Kind code, weight, number of codes ``V`` (discrete), distance matrices and integer
    medoid costs ``(A, Vmax, Vmax)`` (as :class:`~sparkanon.algorithms.blocks._slie_kernel.
    PackedSchema`), and each discrete attribute's NCP of every ``(lo, hi)`` pair
    (:func:`pair_ncp_table`).
    """

    kind: np.ndarray
    weight: np.ndarray
    size: np.ndarray
    matrix: np.ndarray
    cost: np.ndarray
    ncp: np.ndarray


class _Target(NamedTuple):
    """The (K, L) target (with the levels ``h`` of :func:`native_target`), rounds, tie grid."""

    k: int
    p: int
    h: int
    rounds: int
    eps: float


class _Rows(NamedTuple):
    """The block's rows.

    Codes ``(A, n)`` (float64; discrete codes are exact), sensitive values, levels and
    each row's sensitive-value cluster (step 2).
    """

    x: np.ndarray
    sens: np.ndarray
    level: np.ndarray
    cluster: np.ndarray


class _Pool(NamedTuple):
    """The free rows and their counts.

    Mask; rows per sensitive value and level; ``[rows, distinct values, distinct
    levels]``; rows per value cluster; per discrete attribute rows per code; scratch for
    a continuous mean and a categorical cost vector.
    """

    free: np.ndarray
    by_value: np.ndarray
    by_level: np.ndarray
    counts: np.ndarray
    by_cluster: np.ndarray
    hist: np.ndarray
    buf: np.ndarray
    cvec: np.ndarray


class _Growing(NamedTuple):
    """The class being formed.

    ``members[:count[0]]``, ``count[1]`` distinct values, rows per value, each
    attribute's range; the anchor's codes and the free rows' centroid.
    """

    members: np.ndarray
    count: np.ndarray
    by_value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    anchor: np.ndarray
    centre: np.ndarray


class _Classes(NamedTuple):
    """The formed classes ``0..count[0]-1``.

    Ranges ``(C, A)``, size, NCP, rows per value, distinct values, members as a doubly
    linked list of rows (``head``, ``nxt``, ``prv``; block rows only), and the mask of
    the classes a row may join.
    """

    lo: np.ndarray
    hi: np.ndarray
    size: np.ndarray
    ncp: np.ndarray
    by_value: np.ndarray
    distinct: np.ndarray
    head: np.ndarray
    nxt: np.ndarray
    prv: np.ndarray
    allowed: np.ndarray
    count: np.ndarray


# -- the numpy side: packing a block --------------------------------------------------


def _attrs(block: Block) -> _Attrs | None:
    """The block's quasi-identifiers for the kernels, ``None`` if a kind is not supported."""
    packed = pack(block)
    if packed is None:
        return None
    vmax = packed.matrix.shape[1]
    tables = np.zeros((len(block.kinds), vmax, vmax))
    for a, kind in enumerate(block.kinds):
        if packed.kind[a] != CONTINUOUS:
            tables[a, : kind.size, : kind.size] = pair_ncp_table(kind)
    return _Attrs(
        kind=packed.kind,
        weight=packed.weight,
        size=packed.size,
        matrix=packed.matrix,
        cost=packed.cost,
        ncp=tables,
    )


def _codes(block: Block) -> np.ndarray:
    """``(A, n)`` float64: every attribute's codes (discrete codes are exact small integers)."""
    x = np.zeros((len(block.kinds), block.n))
    for a, codes in enumerate(block.codes):
        x[a] = np.asarray(codes, dtype=float)
    return x


def _classes(x: np.ndarray, capacity: int, n_values: int) -> _Classes:
    cap = max(capacity, 1)
    n_attrs, n = x.shape
    return _Classes(
        lo=np.zeros((cap, n_attrs)),
        hi=np.zeros((cap, n_attrs)),
        size=np.zeros(cap, dtype=np.int64),
        ncp=np.zeros(cap),
        by_value=np.zeros((cap, n_values), dtype=np.int64),
        distinct=np.zeros(cap, dtype=np.int64),
        head=np.full(cap, -1, dtype=np.int64),
        nxt=np.full(max(n, 1), -1, dtype=np.int64),
        prv=np.full(max(n, 1), -1, dtype=np.int64),
        allowed=np.ones(cap, dtype=np.bool_),
        count=np.zeros(1, dtype=np.int64),
    )


def _pool(attrs: _Attrs, rows: _Rows, n_values: int, n_levels: int, g: int) -> _Pool:
    """Every row free."""
    by_value = np.bincount(rows.sens, minlength=n_values).astype(np.int64)
    by_level = np.bincount(rows.level, minlength=n_levels).astype(np.int64)
    vmax = attrs.matrix.shape[1]
    hist = np.zeros((len(attrs.kind), vmax), dtype=np.int64)
    for a in np.flatnonzero(attrs.kind != CONTINUOUS):
        hist[a] = np.bincount(rows.x[a].astype(np.int64), minlength=vmax)[:vmax]
    n = rows.sens.shape[0]
    counts = [n, np.count_nonzero(by_value), np.count_nonzero(by_level)]
    return _Pool(
        free=np.ones(n, dtype=np.bool_),
        by_value=by_value,
        by_level=by_level,
        counts=np.array(counts, dtype=np.int64),
        by_cluster=np.bincount(rows.cluster, minlength=g).astype(np.int64),
        hist=hist,
        buf=np.zeros(max(n, 1)),
        cvec=np.zeros(vmax, dtype=np.int64),
    )


def _growing(n: int, n_attrs: int, n_values: int) -> _Growing:
    return _Growing(
        members=np.zeros(max(n, 1), dtype=np.int64),
        count=np.zeros(2, dtype=np.int64),
        by_value=np.zeros(n_values, dtype=np.int64),
        lo=np.zeros(n_attrs),
        hi=np.zeros(n_attrs),
        anchor=np.zeros(n_attrs),
        centre=np.zeros(n_attrs),
    )


def cluster(
    block: Block, row_cluster: np.ndarray, n_clusters: int, eps: float
) -> np.ndarray | None:
    """Steps 2-13 of (K,L) clustering on one block; ``None`` if a kind is not supported.

    Args:
        block: the block's rows, in row-id order; it can host a class.
        row_cluster: the sensitive-value cluster ``0..n_clusters-1`` of each row (step 2).
        n_clusters: the number of value clusters.
        eps: NCP changes below this are ties (:data:`~sparkanon.algorithms.blocks.kl_cluster.EPS`).

    Returns:
        A class label per row, or ``None`` when a kind is not supported.
    """
    attrs = _attrs(block)
    if attrs is None:
        return None
    model = block.ctx.model
    n_values = len(block.ctx.schema.sensitive.values)
    x = _codes(block)
    rows = _Rows(
        x=x,
        sens=block.sens.astype(np.int64),
        level=block.level.astype(np.int64),
        cluster=np.asarray(row_cluster, dtype=np.int64).copy(),
    )
    target = _Target(
        k=int(model.k), p=int(model.p), h=int(model.h),
        rounds=int(block.ctx.max_iterations), eps=float(eps),
    )  # fmt: skip
    return cluster_kernel(
        attrs, rows,
        _pool(attrs, rows, n_values, int(block.n_levels), int(n_clusters)),
        _growing(block.n, x.shape[0], n_values),
        _classes(x, block.n // max(int(model.k), 1) + 1, n_values), target,
    )  # fmt: skip


def place(
    block: Block, labels: np.ndarray, n_classes: int, extra: Block, eps: float
) -> np.ndarray | None:
    """Rows of ``extra`` join ``block``'s classes (:meth:`KLCluster.place_into`).

    Args:
        block: the clustered rows.
        labels: their labels ``0..n_classes-1`` (``-1`` rows are in no class).
        n_classes: the number of classes, each holding a row.
        extra: the rows to place, in row order.
        eps: NCP changes below this are ties.

    Returns:
        A class label per row of ``extra``, or ``None`` when a kind is not supported.
    """
    attrs = _attrs(block)
    if attrs is None:
        return None
    x = _codes(block)
    n_values = len(block.ctx.schema.sensitive.values)
    return place_kernel(
        attrs, x, block.sens.astype(np.int64),
        np.asarray(labels, dtype=np.int64).copy(), _codes(extra), extra.sens.astype(np.int64),
        _classes(x, int(n_classes), n_values), float(eps),
    )  # fmt: skip


# -- compiled helpers: NCP, distances, centroids ---------------------------------------


@_inner
def _attr_ncp(kind: int, table: np.ndarray, lo: float, hi: float) -> float:  # pragma: no cover
    """:meth:`RangeNcp.of_range` of one attribute: ``clip(hi - lo, 0, 1)`` or the table."""
    if kind == CONTINUOUS:
        return min(max(hi - lo, 0.0), 1.0)
    return table[int(lo), int(hi)]


@_inner
def _ncp(attrs: _Attrs, lo: np.ndarray, hi: np.ndarray) -> float:  # pragma: no cover - compiled
    """Weighted NCP of the ranges ``lo``, ``hi`` (``(A,)``), as :meth:`ClassStats.ncp`.

    The attributes are summed in schema order from 0.
    """
    total = 0.0
    for a in range(attrs.kind.shape[0]):
        total += attrs.weight[a] * _attr_ncp(attrs.kind[a], attrs.ncp[a], lo[a], hi[a])
    return total


@_inner
def _ncp_with(
    attrs: _Attrs, lo: np.ndarray, hi: np.ndarray, x: np.ndarray, r: int
) -> float:  # pragma: no cover - compiled
    """:func:`_ncp` of the ranges widened by row ``r`` of ``x`` (``ncp_with_each``)."""
    total = 0.0
    for a in range(attrs.kind.shape[0]):
        low, high = min(lo[a], x[a, r]), max(hi[a], x[a, r])
        total += attrs.weight[a] * _attr_ncp(attrs.kind[a], attrs.ncp[a], low, high)
    return total


@_inner
def _distance(
    attrs: _Attrs, x: np.ndarray, r: int, point: np.ndarray
) -> float:  # pragma: no cover - compiled
    """Tuple distance (eq. 18, weighted) of row ``r`` to a point (``distances_to_point``)."""
    total = 0.0
    for a in range(attrs.kind.shape[0]):
        if attrs.kind[a] == CONTINUOUS:
            dist = abs(x[a, r] - point[a])
        else:
            dist = attrs.matrix[a, int(x[a, r]), int(point[a])]
        total += attrs.weight[a] * dist
    return total


@_inner
def _free_centroid(
    attrs: _Attrs, x: np.ndarray, pool: _Pool, point: np.ndarray
) -> None:  # pragma: no cover - compiled
    """:meth:`Block.centroid_of` the free rows, into ``point``.

    A continuous code is their mean: numpy's pairwise sum of their codes in row order
    over their number. A discrete one is the kind's centroid of the free rows' counts
    ``hist``, by :func:`_grown_centre` of ``hist - e_v`` with a row of code ``v`` added
    (``v`` the lowest code present), which is ``hist`` itself.
    """
    kind, size, cost = attrs.kind, attrs.size, attrs.cost
    hist, buf, cvec = pool.hist, pool.buf, pool.cvec
    n_free = pool.counts[0]
    for a in range(kind.shape[0]):
        if kind[a] == CONTINUOUS:
            m = 0
            for r in range(pool.free.shape[0]):
                if pool.free[r]:
                    buf[m] = x[a, r]
                    m += 1
            # (lo = 0 as MAA-SLIE's kernel calls it: one compiled version for both)
            point[a] = _pairwise_sum(buf, 0, n_free) / n_free
            continue
        v = _ZERO
        while hist[a, v] == 0:
            v += 1
        hist[a, v] -= 1
        cvec[:] = 0
        if kind[a] == CATEGORICAL:
            for w in range(size[a]):
                for u in range(size[a]):
                    cvec[u] += hist[a, w] * cost[a, w, u]
        point[a] = float(_grown_centre(kind[a], hist[a], cvec, cost[a], size[a], v))
        hist[a, v] += 1


# -- compiled: forming classes (steps 2-6, 8-10) -------------------------------------


@_inner
def _move_row(
    r: int, step: int, attrs: _Attrs, rows: _Rows, pool: _Pool
) -> None:  # pragma: no cover - compiled
    """Take row ``r`` out of the free rows (``step = -1``) or give it back (``+1``)."""
    pool.free[r] = step > 0
    counts = pool.counts
    counts[0] += step
    s, lv = rows.sens[r], rows.level[r]
    pool.by_value[s] += step
    if pool.by_value[s] == (1 if step > 0 else 0):
        counts[1] += step
    pool.by_level[lv] += step
    if pool.by_level[lv] == (1 if step > 0 else 0):
        counts[2] += step
    pool.by_cluster[rows.cluster[r]] += step
    for a in range(attrs.kind.shape[0]):
        if attrs.kind[a] != CONTINUOUS:
            pool.hist[a, int(rows.x[a, r])] += step


@_inner
def _join(
    r: int, attrs: _Attrs, rows: _Rows, pool: _Pool, grow: _Growing
) -> None:  # pragma: no cover - compiled
    """Free row ``r`` joins the class being formed."""
    g = grow.count[0]
    grow.members[g] = r
    grow.count[0] = g + 1
    s = rows.sens[r]
    if grow.by_value[s] == 0:
        grow.count[1] += 1
    grow.by_value[s] += 1
    for a in range(attrs.kind.shape[0]):
        v = rows.x[a, r]
        if g == 0 or v < grow.lo[a]:
            grow.lo[a] = v
        if g == 0 or v > grow.hi[a]:
            grow.hi[a] = v
    _move_row(r, _OUT, attrs, rows, pool)


@_inner
def _leave(
    t: int, attrs: _Attrs, rows: _Rows, pool: _Pool, grow: _Growing
) -> None:  # pragma: no cover - compiled
    """Member ``members[t]`` (of a repeated value) goes back to the free rows."""
    r = grow.members[t]
    g = grow.count[0] - 1
    for i in range(t, g):
        grow.members[i] = grow.members[i + 1]
    grow.count[0] = g
    grow.by_value[rows.sens[r]] -= 1
    for a in range(attrs.kind.shape[0]):
        lo = rows.x[a, grow.members[0]]
        hi = lo
        for i in range(1, g):
            v = rows.x[a, grow.members[i]]
            lo = min(lo, v)
            hi = max(hi, v)
        grow.lo[a] = lo
        grow.hi[a] = hi
    _move_row(r, _IN, attrs, rows, pool)


@_inner
def _best_row(
    j: int, own_cluster: bool, missing: bool, attrs: _Attrs,
    rows: _Rows, pool: _Pool, grow: _Growing, eps: float,
) -> int:  # pragma: no cover - compiled  # fmt: skip
    """``_Growing.best``: the candidate row to join the class; ``-1`` if there is none.

    Least NCP after joining (``rint(ncp / EPS) * EPS``), then nearest the anchor, then
    the lowest row.

    Candidates are the free rows, only those of value cluster ``j`` with ``own_cluster``,
    only those whose sensitive value the class lacks with ``missing``. Distances are
    computed for rows tied on NCP only, as the numpy path does (each row's is its own).
    """
    x = rows.x
    best = _NO_ROW
    best_key = 0.0
    best_near = -1.0
    for r in range(pool.free.shape[0]):
        if not pool.free[r]:
            continue
        if own_cluster and rows.cluster[r] != j:
            continue
        if missing and grow.by_value[rows.sens[r]] > 0:
            continue
        key = np.rint(_ncp_with(attrs, grow.lo, grow.hi, x, r) / eps) * eps
        if best < 0 or key < best_key:
            best, best_key, best_near = r, key, -1.0
        elif key == best_key:
            if best_near < 0.0:
                best_near = _distance(attrs, x, best, grow.anchor)
            near = _distance(attrs, x, r, grow.anchor)
            if near < best_near:
                best, best_near = r, near
    return best


@_inner
def _swap_out(
    attrs: _Attrs, rows: _Rows, grow: _Growing, eps: float
) -> int:  # pragma: no cover - compiled
    """The position in ``members`` of the member to swap out (steps 8-10), ``-1`` if none.

    Among the members of a repeated value: the least NCP without it (on the grid), then
    the farthest from the anchor, then the highest row (``lexsort((-m, -near, after))``).
    Without member ``t`` an attribute's lowest code is the second lowest of the class if
    ``t`` holds the lowest, else the lowest (``_Growing.ncp_without_each``).
    """
    x = rows.x
    g = grow.count[0]
    n_attrs = attrs.kind.shape[0]
    low = np.empty((n_attrs, 2))
    high = np.empty((n_attrs, 2))
    for a in range(n_attrs):
        # The two lowest and the two highest codes (ranked[0], ranked[1], ranked[-1], ranked[-2]).
        lo0, lo1, hi0, hi1 = np.inf, np.inf, -np.inf, -np.inf
        for i in range(g):
            v = x[a, grow.members[i]]
            if v < lo0:
                lo0, lo1 = v, lo0
            elif v < lo1:
                lo1 = v
            if v > hi0:
                hi0, hi1 = v, hi0
            elif v > hi1:
                hi1 = v
        low[a, 0], low[a, 1], high[a, 0], high[a, 1] = lo0, lo1, hi0, hi1
    best = _NO_ROW
    best_row = _NO_ROW
    best_key = 0.0
    best_near = 0.0
    for t in range(g):
        r = grow.members[t]
        if grow.by_value[rows.sens[r]] < 2:
            continue
        total = 0.0
        for a in range(n_attrs):
            v = x[a, r]
            lo = low[a, 1] if v == low[a, 0] else low[a, 0]
            hi = high[a, 1] if v == high[a, 0] else high[a, 0]
            total += attrs.weight[a] * _attr_ncp(attrs.kind[a], attrs.ncp[a], lo, hi)
        key = np.rint(total / eps) * eps
        near = _distance(attrs, x, r, grow.anchor)
        if (
            best < 0
            or key < best_key
            or (key == best_key and (near > best_near or (near == best_near and r > best_row)))
        ):
            best, best_row, best_key, best_near = t, r, key, near
    return best


@_inner
def _form(
    j: int, attrs: _Attrs, rows: _Rows, pool: _Pool,
    grow: _Growing, target: _Target,
) -> bool:  # pragma: no cover - compiled  # fmt: skip
    """``KLCluster._form``: one class from value cluster ``j`` into ``grow``.

    ``False`` (its rows free again) if no free row supplies a missing value.

    The anchor is the free row of cluster ``j`` farthest from the free rows' centroid
    (lowest row on ties); the class grows to ``K`` rows with free rows of cluster ``j``
    while there are any (any free row after), then swaps rows in until it holds ``L``
    values.
    """
    x = rows.x
    _free_centroid(attrs, x, pool, grow.centre)
    anchor = _NO_ROW
    far = 0.0
    for r in range(pool.free.shape[0]):
        if pool.free[r] and rows.cluster[r] == j:
            d = _distance(attrs, x, r, grow.centre)
            if anchor < 0 or d > far:
                anchor, far = r, d
    for a in range(attrs.kind.shape[0]):
        grow.anchor[a] = x[a, anchor]
    grow.count[:] = 0
    grow.by_value[:] = 0
    _join(anchor, attrs, rows, pool, grow)
    eps = target.eps
    while grow.count[0] < target.k:
        best = _best_row(j, pool.by_cluster[j] > 0, _NO, attrs, rows, pool, grow, eps)
        _join(best, attrs, rows, pool, grow)
    while grow.count[1] < target.p:
        best = _best_row(j, _NO, _YES, attrs, rows, pool, grow, eps)
        if best < 0:
            for i in range(grow.count[0]):
                _move_row(grow.members[i], _IN, attrs, rows, pool)
            return False
        _join(best, attrs, rows, pool, grow)
        if grow.count[0] > target.k:
            out = _swap_out(attrs, rows, grow, eps)
            if out >= 0:
                _leave(out, attrs, rows, pool, grow)
    return True


# -- compiled: the formed classes (step 11, steps 12-13, placement) ---------------------


@_inner
def _class_add(
    c: int, r: int, link: bool, attrs: _Attrs, classes: _Classes,
    x: np.ndarray, sens: np.ndarray,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """Row ``r`` of ``x`` joins class ``c`` (``link``: a block row, kept in the member list)."""
    first = classes.size[c] == 0
    lo, hi = classes.lo[c], classes.hi[c]
    for a in range(attrs.kind.shape[0]):
        v = x[a, r]
        if first or v < lo[a]:
            lo[a] = v
        if first or v > hi[a]:
            hi[a] = v
    classes.size[c] += 1
    s = sens[r]
    if classes.by_value[c, s] == 0:
        classes.distinct[c] += 1
    classes.by_value[c, s] += 1
    classes.ncp[c] = _ncp(attrs, lo, hi)
    if link:
        head = classes.head[c]
        classes.nxt[r] = head
        classes.prv[r] = -1
        if head >= 0:
            classes.prv[head] = r
        classes.head[c] = r


@_inner
def _class_range(
    c: int, skip: int, attrs: _Attrs, classes: _Classes, x: np.ndarray,
    lo: np.ndarray, hi: np.ndarray,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """Into ``lo``, ``hi``: the range of class ``c``'s members other than row ``skip``."""
    for a in range(attrs.kind.shape[0]):
        low, high = np.inf, -np.inf
        q = classes.head[c]
        while q >= 0:
            if q != skip:
                low = min(low, x[a, q])
                high = max(high, x[a, q])
            q = classes.nxt[q]
        lo[a], hi[a] = low, high


@_inner
def _class_remove(
    c: int, r: int, attrs: _Attrs, classes: _Classes,
    x: np.ndarray, sens: np.ndarray,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """Block row ``r`` leaves class ``c`` (which keeps a row); its range is recomputed."""
    _class_range(c, r, attrs, classes, x, classes.lo[c], classes.hi[c])
    nxt, prv = classes.nxt[r], classes.prv[r]
    if prv >= 0:
        classes.nxt[prv] = nxt
    else:
        classes.head[c] = nxt
    if nxt >= 0:
        classes.prv[nxt] = prv
    classes.size[c] -= 1
    s = sens[r]
    classes.by_value[c, s] -= 1
    if classes.by_value[c, s] == 0:
        classes.distinct[c] -= 1
    classes.ncp[c] = _ncp(attrs, classes.lo[c], classes.hi[c])


@_inner
def _best_class(
    r: int, attrs: _Attrs, classes: _Classes, x: np.ndarray,
    eps: float,
) -> tuple[int, float]:  # pragma: no cover - compiled  # fmt: skip
    """``_KLClasses.best_class``: ``(class, growth)`` for row ``r`` of ``x``.

    The allowed class whose ``|G| NCP(G)`` grows least when the row joins (on the grid),
    then the smaller, then the lower label (``lexsort((ids, size, growth))``), with its
    growth off the grid; ``(-1, 0)`` if none is allowed.
    """
    best = _NO_ROW
    best_key = 0.0
    best_growth = 0.0
    for c in range(classes.count[0]):
        if not classes.allowed[c]:
            continue
        size = classes.size[c]
        grown = _ncp_with(attrs, classes.lo[c], classes.hi[c], x, r)
        growth = (size + 1) * grown - size * classes.ncp[c]
        key = np.rint(growth / eps) * eps
        if best < 0 or key < best_key or (key == best_key and size < classes.size[best]):
            best, best_key, best_growth = c, key, growth
    return best, best_growth


@_inner
def _leftovers(
    attrs: _Attrs, rows: _Rows, pool: _Pool, classes: _Classes,
    labels: np.ndarray, target: _Target,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """Step 11: each free row, in row order, joins the class of least loss growth.

    Among the classes below ``2K - 1`` rows, or, when none is, among the smallest.
    """
    m = classes.count[0]
    for r in range(pool.free.shape[0]):
        if not pool.free[r]:
            continue
        smallest = classes.size[0]
        room = False
        for c in range(m):
            smallest = min(smallest, classes.size[c])
            room = room or classes.size[c] < 2 * target.k - 1
        for c in range(m):
            if room:
                classes.allowed[c] = classes.size[c] < 2 * target.k - 1
            else:
                classes.allowed[c] = classes.size[c] == smallest
        c, _ = _best_class(r, attrs, classes, rows.x, target.eps)
        _class_add(c, r, _YES, attrs, classes, rows.x, rows.sens)
        labels[r] = c


@_inner
def _refine(
    attrs: _Attrs, rows: _Rows, classes: _Classes,
    labels: np.ndarray, target: _Target,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """Steps 12-13 (``KLCluster._refine``): rows move while the total loss drops.

    In row order, a row moves to the class where the total loss drops most, if its class
    keeps ``K`` rows and ``L`` values and the receiving class stays below ``2K`` rows;
    until no row moves, at most ``rounds`` rounds.
    """
    m = classes.count[0]
    if m < 2:
        return
    x, sens = rows.x, rows.sens
    n_attrs = attrs.kind.shape[0]
    lo, hi = np.empty(n_attrs), np.empty(n_attrs)
    for _ in range(target.rounds):
        moved = False
        for i in range(labels.shape[0]):
            source = labels[i]
            size = classes.size[source]
            if size - 1 < target.k:
                continue
            left = classes.distinct[source] - (1 if classes.by_value[source, sens[i]] == 1 else 0)
            if left < target.p:
                continue
            _class_range(source, i, attrs, classes, x, lo, hi)
            shrink = (size - 1) * _ncp(attrs, lo, hi) - size * classes.ncp[source]
            any_allowed = False
            for c in range(m):
                classes.allowed[c] = classes.size[c] + 1 <= 2 * target.k - 1 and c != source
                any_allowed = any_allowed or classes.allowed[c]
            if not any_allowed:
                continue
            dest, growth = _best_class(i, attrs, classes, x, target.eps)
            if shrink + growth < -1e-9:
                _class_remove(source, i, attrs, classes, x, sens)
                _class_add(dest, i, _YES, attrs, classes, x, sens)
                labels[i] = dest
                moved = True
        if not moved:
            return


# -- compiled entry points --------------------------------------------------------------


@_compiled
def cluster_kernel(
    attrs: _Attrs, rows: _Rows, pool: _Pool, grow: _Growing,
    classes: _Classes, target: _Target,
) -> np.ndarray:  # pragma: no cover - compiled  # fmt: skip
    """Steps 2-13 (``KLCluster.cluster`` after step 2's value clusters).

    Classes are formed in rounds, one per value cluster with free rows, while the free
    rows can host a class; then the leftovers (step 11) and the reassignment rounds.

    Args:
        attrs: the quasi-identifiers.
        rows: the block's rows.
        pool: the free rows (all, with their counts).
        grow: the class being formed (scratch).
        classes: empty classes, room for every class the block can form.
        target: ``K``, ``L``, ``h``, rounds, the tie grid.

    Returns:
        A class label per row (all ``-1`` if no class could be formed).
    """
    n = pool.free.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    n_clusters = pool.by_cluster.shape[0]
    m = 0
    stuck = False
    counts = pool.counts
    k, p, h = target.k, target.p, target.h
    # Block.can_host_class of the free rows: K rows, L values, h levels.
    while not stuck and counts[0] >= k and counts[1] >= p and counts[2] >= h:
        for j in range(n_clusters):
            if not (counts[0] >= k and counts[1] >= p and counts[2] >= h):
                break
            if pool.by_cluster[j] == 0:
                continue
            if not _form(j, attrs, rows, pool, grow, target):
                stuck = True
                break
            for i in range(grow.count[0]):
                labels[grow.members[i]] = m
            m += 1
    if m == 0:
        return labels
    classes.count[0] = m
    for r in range(n):
        if labels[r] >= 0:
            _class_add(labels[r], r, _YES, attrs, classes, rows.x, rows.sens)
    _leftovers(attrs, rows, pool, classes, labels, target)
    _refine(attrs, rows, classes, labels, target)
    return labels


@_compiled
def place_kernel(
    attrs: _Attrs, x: np.ndarray, sens: np.ndarray,
    labels: np.ndarray, x_new: np.ndarray, sens_new: np.ndarray, classes: _Classes,
    eps: float,
) -> np.ndarray:  # pragma: no cover - compiled  # fmt: skip
    """Each new row, in row order, joins the class whose loss grows least (``place_into``).

    Args:
        attrs: the quasi-identifiers.
        x: the clustered rows' codes ``(A, n)``.
        sens: their sensitive values.
        labels: their classes ``0..C-1`` (``-1``: none), every class holding a row.
        x_new: the new rows' codes ``(A, n_new)``.
        sens_new: their sensitive values.
        classes: ``C`` empty classes.
        eps: the tie grid.

    Returns:
        The class of each new row.
    """
    classes.count[0] = classes.size.shape[0]
    for r in range(labels.shape[0]):
        if labels[r] >= 0:
            _class_add(labels[r], r, _YES, attrs, classes, x, sens)
    out = np.empty(x_new.shape[1], dtype=np.int64)
    for r in range(x_new.shape[1]):
        c, _ = _best_class(r, attrs, classes, x_new, eps)
        _class_add(c, r, _NO, attrs, classes, x_new, sens_new)
        out[r] = c
    return out
