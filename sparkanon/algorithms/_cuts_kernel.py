"""Compiled (numba) node loop of :func:`sparkanon.algorithms.cuts.plan_local`, ``range`` rule.

Mondrian's leaves are its classes, so :func:`~sparkanon.algorithms.cuts.plan_local` on the
``range`` rule visits a node per two classes, each a dozen small numpy calls (the spans,
the histogram, the median cut, the sides, the model test): about 0.2 ms a node, half of
Mondrian's ``cluster`` stage. :func:`plan_range` runs the whole depth-first loop in one
compiled call, :func:`plan_range_kernel`, on the rows' ranked bins
(:class:`~sparkanon.algorithms.cuts.RankedBins`): each node's rows are a slice of one
permutation, partitioned in place (stably) at each cut.

**Design: the model test compiled only for count models.** The model test of the numpy
path is a Python callable (``ModelSet.satisfied``). The kernel applies it only when the
test is a :class:`~sparkanon.algorithms.cuts.ModelTest` whose models are all plain count
models (k-anonymity, p-sensitive k-anonymity, (H,p,k)-anonymity, distinct l-diversity:
:meth:`~sparkanon.algorithms.cuts.ModelTest.bounds`), whose conjunction is exactly
``size >= k``, ``distinct values >= p`` and ``distinct levels >= h``; for any other model
(entropy or recursive l-diversity, t-closeness, a custom callable), the ``spread`` rule
and ``SPARKANON_NO_JIT=1`` (:func:`enabled`) the caller runs the numpy path. (A level-by-level
loop calling the Python test once per level would keep every model but pay a Python
round trip per level and per attribute tried; the count models are those of every
bundled Mondrian config.)

**Same leaves as the numpy path.** Every choice is the numpy path's, on the same numbers:

* attributes in decreasing normalised range, ties to the lower index: a continuous
  attribute's range is ``(hi - lo) / resolution`` (the same IEEE division as
  :func:`~sparkanon.algorithms.cuts.normalized_range`); a discrete attribute's is read
  from a ``V x V`` table filled by calling ``normalized_range`` itself (:func:`tables`);
* the cut of an attribute is the candidate, among those leaving ``min_side`` rows on each
  side whose both sides pass the test, of least ``(|left - rows / 2|, cut)``: the first
  of :func:`~sparkanon.algorithms.cuts.median_cut`'s order that passes; candidates are
  the node's present bins but the last (kinds with the default ``cut_candidates``), or the
  kind's own ``cut_candidates(lo, hi)`` read from a table filled by calling it;
* histograms are exact integer counts (dense over the node's rank span when it is
  narrow, else from the sorted ranks), so the sides' counts are those of ``_sides``.

Supported kinds: :class:`~sparkanon.attributes.kinds.ContinuousKind` (and subclasses)
with the default ``cut_candidates``, and :class:`~sparkanon.attributes.kinds.DiscreteKind`
of at most :data:`TABLE_MAX` codes. :func:`plan_range` returns ``None`` for any other
schema. Compiled once per process, cached on disk (``cache=True``); one monomorphic
signature (int64 and float64 arrays, int64 scalars).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sparkanon.algorithms._jit import compiled
from sparkanon.algorithms.blocks._slie_kernel import enabled
from sparkanon.algorithms.cuts import MAX_DEPTH, CutPolicy, RankedBins, normalized_range
from sparkanon.attributes.kinds import ContinuousKind, DiscreteKind, Kind

__all__ = ["enabled", "plan_range", "plan_range_kernel", "tables"]

TABLE_MAX = 128
"""Largest discrete domain the kernel takes (its ``V x V`` tables are filled in Python)."""
DENSE_FACTOR = 4
"""A node's histogram is counted densely over its rank span when the span times the
sensitive domain is at most this many times its rows (plus :data:`DENSE_SLACK`)."""
DENSE_SLACK = 1024
STACK = 4 * MAX_DEPTH + 8
"""Depth-first stack size: at most one pending sibling per level below the root."""

_compiled = compiled(error_model="numpy")
"""How every function of this module is compiled: nopython, cached on disk."""


class KindTables:
    """One discrete kind's normalised ranges and allowed cuts for every bin pair.

    Attributes:
        width: ``(V * V,)``: ``normalized_range(kind, lo, hi)`` at ``lo * V + hi``.
        any_cut: ``(V * V,)``: 1 where ``cut_candidates(lo, hi)`` is ``None`` (any bin).
        cuts: the candidates of every pair, concatenated in pair order.
        count: ``(V * V,)``: how many candidates each pair has.
    """

    def __init__(self, kind: DiscreteKind, resolution: int) -> None:
        v = kind.size
        self.width = np.zeros(v * v, dtype=np.float64)
        self.any_cut = np.zeros(v * v, dtype=np.int64)
        self.count = np.zeros(v * v, dtype=np.int64)
        cuts: list[int] = []
        for lo in range(v):
            for hi in range(lo + 1, v):
                t = lo * v + hi
                self.width[t] = normalized_range(kind, lo, hi, resolution)
                found = kind.cut_candidates(lo, hi)
                if found is None:
                    self.any_cut[t] = 1
                else:
                    cuts.extend(int(c) for c in found)
                    self.count[t] = len(found)
        self.cuts = np.asarray(cuts, dtype=np.int64)


_TABLES: dict[tuple[int, int], tuple[Kind, KindTables]] = {}
"""Tables per ``(id(kind), resolution)``; the kind is kept so that its id stays its own."""
_TABLES_MAX = 64


def _kind_tables(kind: DiscreteKind, resolution: int) -> KindTables:
    """The (memoised) tables of one discrete kind."""
    key = (id(kind), resolution)
    hit = _TABLES.get(key)
    if hit is not None and hit[0] is kind:
        return hit[1]
    if len(_TABLES) >= _TABLES_MAX:
        _TABLES.clear()
    made = KindTables(kind, resolution)
    _TABLES[key] = (kind, made)
    return made


def _default_cuts(kind: Kind) -> bool:
    """Whether the kind allows any bin as a cut (the base ``cut_candidates``)."""
    return type(kind).cut_candidates is Kind.cut_candidates


def tables(kinds: Sequence[Kind], ranked: RankedBins, resolution: int) -> tuple | None:
    """The kernel's per-attribute arrays, or ``None`` when a kind is not supported.

    Args:
        kinds: the quasi-identifier kinds.
        ranked: the rows' ranked bins (their present bins are checked against the tables).
        resolution: the continuous grid.

    Returns:
        ``(kind code, table offset, table side, width, any_cut, cut start, cuts)``:
        kind code 0 (continuous formula) or 1 (tables); the tables of every discrete
        attribute concatenated (``cut start`` has one more entry than the tables).
    """
    n_attr = len(kinds)
    code = np.zeros(n_attr, dtype=np.int64)
    offset = np.zeros(n_attr, dtype=np.int64)
    side = np.zeros(n_attr, dtype=np.int64)
    width, any_cut, count, cuts = [], [], [], []
    at = 0
    for a, kind in enumerate(kinds):
        if isinstance(kind, ContinuousKind):
            if not _default_cuts(kind):
                return None
            continue
        if not isinstance(kind, DiscreteKind) or not 0 < kind.size <= TABLE_MAX:
            return None
        present = ranked.present[a]
        if present.size and (present[0] < 0 or present[-1] >= kind.size):
            return None
        made = _kind_tables(kind, resolution)
        code[a], offset[a], side[a] = 1, at, kind.size
        width.append(made.width)
        any_cut.append(made.any_cut)
        count.append(made.count)
        cuts.append(made.cuts)
        at += kind.size * kind.size
    counts = np.concatenate(count) if count else np.zeros(0, dtype=np.int64)
    start = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    return (
        code,
        offset,
        side,
        np.concatenate(width) if width else np.zeros(0, dtype=np.float64),
        np.concatenate(any_cut) if any_cut else np.zeros(0, dtype=np.int64),
        start,
        np.concatenate(cuts) if cuts else np.zeros(0, dtype=np.int64),
    )


def plan_range(
    kinds: Sequence[Kind],
    ranked: RankedBins,
    sens: np.ndarray,
    n_values: int,
    policy: CutPolicy,
    bounds: tuple[int, int, int],
    level_of: np.ndarray | None,
    root: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``range`` rule's leaves of one node's rows, or ``None`` for an unsupported schema.

    Args:
        kinds: the quasi-identifier kinds.
        ranked: the rows' ranked bins.
        sens: the rows' sensitive codes (zeros when ``n_values`` is 1).
        n_values: the sensitive domain size.
        policy: the cut rule (``range``).
        bounds: ``(k, p, h)`` of the count models (:meth:`ModelTest.bounds`).
        level_of: the level of each sensitive code (needed when ``h > 0``).
        root: the node's id.

    Returns:
        ``(leaf of each row, splits)``, ``splits`` an ``(m, 3)`` array of
        ``(node, attribute, cut)``.
    """
    packed = tables(kinds, ranked, policy.resolution)
    if packed is None:
        return None
    code, offset, side, width, any_cut, start, cuts = packed
    present = (
        np.concatenate(ranked.present) if ranked.present else np.zeros(0, dtype=np.int64)
    ).astype(np.int64)
    pstart = np.zeros(len(ranked.present) + 1, dtype=np.int64)
    np.cumsum([p.size for p in ranked.present], out=pstart[1:])
    k, p, h = bounds
    levels = np.zeros(max(n_values, 1), dtype=np.int64) if level_of is None else level_of
    levels = np.ascontiguousarray(levels, dtype=np.int64)
    leaf, splits = plan_range_kernel(
        np.ascontiguousarray(ranked.ranks, dtype=np.int64),
        present,
        pstart,
        np.ascontiguousarray(sens, dtype=np.int64),
        int(max(n_values, 1)),
        code,
        offset,
        side,
        width,
        any_cut,
        start,
        cuts,
        int(policy.resolution),
        int(policy.min_side),
        int(policy.stop_rows),
        int(root),
        int(1 << (MAX_DEPTH - 1)),
        int(k),
        int(p),
        int(h),
        levels,
        int(levels.max()) + 1 if levels.size else 1,
    )
    return leaf, splits.reshape(-1, 3)


@_compiled
def _heapsort(keys):  # noqa: ANN001, ANN202
    """Sort int64 keys in place (a small loop: numba's own sort costs seconds to compile)."""
    n = keys.size
    for step in range(n // 2 + n - 1):
        if step < n // 2:  # build the max-heap
            root, end = n // 2 - 1 - step, n
        else:  # move the largest key behind the heap
            end = n - 1 - (step - n // 2)
            keys[0], keys[end] = keys[end], keys[0]
            root = 0
        while True:  # sift keys[root] down keys[:end]
            child = 2 * root + 1
            if child >= end:
                break
            if child + 1 < end and keys[child + 1] > keys[child]:
                child += 1
            if keys[root] >= keys[child]:
                break
            keys[root], keys[child] = keys[child], keys[root]
            root = child


@_compiled
def _histogram(order, lo_i, hi_i, ranks_a, sens, n_values, lo_r, hi_r):  # noqa: ANN001, ANN202
    """One node's histogram on one attribute: present ranks (ascending), flat counts.

    Returns ``(ranks, counts)``, ``counts[j * V + v]`` the rows of the ``j``-th present
    rank and sensitive code ``v``; dense over the rank span when it is narrow, else
    from the sorted ``rank * V + code`` keys.
    """
    m = hi_i - lo_i
    span = hi_r - lo_r + 1
    if span * n_values <= DENSE_FACTOR * m + DENSE_SLACK:
        keys = np.zeros(span * n_values, dtype=np.int64)
        for i in range(lo_i, hi_i):
            row = order[i]
            keys[(ranks_a[row] - lo_r) * n_values + sens[row]] += 1
        held = np.empty(span, dtype=np.int64)
        j = 0
        for r in range(span):
            for v in range(n_values):
                if keys[r * n_values + v] > 0:
                    keys[j * n_values : (j + 1) * n_values] = keys[
                        r * n_values : (r + 1) * n_values
                    ]
                    held[j] = lo_r + r
                    j += 1
                    break
        return held[:j], keys[: j * n_values]
    keys = np.empty(m, dtype=np.int64)
    for i in range(m):
        row = order[lo_i + i]
        keys[i] = ranks_a[row] * n_values + sens[row]
    _heapsort(keys)
    held = np.empty(m, dtype=np.int64)
    counts = np.zeros(m * n_values, dtype=np.int64)
    j = -1
    last = -1
    for i in range(m):
        r = keys[i] // n_values
        if r != last:
            j += 1
            held[j] = r
            last = r
        counts[j * n_values + keys[i] - r * n_values] += 1
    return held[: j + 1], counts[: (j + 1) * n_values]


@_compiled
def _best_cut(bins, cum, min_side, cands, any_cut, k, p, h, level_of, seen):  # noqa: ANN001, ANN202
    """The first cut of ``median_cut``'s order whose both sides pass, or ``(-1, -1)``.

    ``bins``: the node's present bins, ascending; ``cum``: flat cumulative counts
    (``cum[j * V + v]``: rows of code ``v`` in bins ``<= bins[j]``). A side passes the
    count models when it holds ``k`` rows, ``p`` distinct codes and ``h`` distinct
    levels. Returns ``(cut bin, rows left of it)``.
    """
    nb = bins.size
    n_values = cum.size // nb
    last = (nb - 1) * n_values
    total = 0
    for v in range(n_values):
        total += cum[last + v]
    half = total / 2.0
    best_cut = -1
    best_left = -1
    best_score = np.inf
    n_cands = nb - 1 if any_cut else cands.size
    for i in range(n_cands):
        if any_cut:
            cut = bins[i]
            pos = i + 1
        else:  # pos: how many present bins are <= cut (searchsorted, side right)
            cut = cands[i]
            pos, hi = 0, nb
            while pos < hi:
                mid = (pos + hi) // 2
                if bins[mid] <= cut:
                    pos = mid + 1
                else:
                    hi = mid
        at = (pos - 1) * n_values
        left = 0
        if pos > 0:
            for v in range(n_values):
                left += cum[at + v]
        if left < min_side or total - left < min_side:
            continue
        score = abs(left - half)
        if score > best_score or (score == best_score and cut >= best_cut):
            continue
        passes = True
        for side in range(2):
            size = left if side == 0 else total - left
            distinct = 0
            for v in range(n_values):
                c = cum[at + v] if pos > 0 else 0
                if side == 1:
                    c = cum[last + v] - c
                if c > 0:
                    distinct += 1
            held = 0
            if h > 0:
                seen[:] = 0
                for v in range(n_values):
                    c = cum[at + v] if pos > 0 else 0
                    if side == 1:
                        c = cum[last + v] - c
                    if c > 0 and seen[level_of[v]] == 0:
                        seen[level_of[v]] = 1
                        held += 1
            if size < k or distinct < p or held < h:
                passes = False
                break
        if passes:
            best_cut, best_left, best_score = cut, left, score
    return best_cut, best_left


@_compiled
def plan_range_kernel(  # noqa: ANN201, PLR0913, PLR0915
    ranks,  # noqa: ANN001
    present,  # noqa: ANN001
    pstart,  # noqa: ANN001
    sens,  # noqa: ANN001
    n_values,  # noqa: ANN001
    code,  # noqa: ANN001
    offset,  # noqa: ANN001
    side,  # noqa: ANN001
    width_tab,  # noqa: ANN001
    any_tab,  # noqa: ANN001
    cstart,  # noqa: ANN001
    cflat,  # noqa: ANN001
    resolution,  # noqa: ANN001
    min_side,  # noqa: ANN001
    stop_rows,  # noqa: ANN001
    root,  # noqa: ANN001
    max_node,  # noqa: ANN001
    k,  # noqa: ANN001
    p,  # noqa: ANN001
    h,  # noqa: ANN001
    level_of,  # noqa: ANN001
    n_levels,  # noqa: ANN001
):
    """The depth-first ``range``-rule loop (see the module docstring); leaves and splits."""
    n_attr, n = ranks.shape
    leaf = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        leaf[i] = root
        order[i] = i
    buf = np.empty(n, dtype=np.int64)
    seen = np.zeros(max(n_levels, 1), dtype=np.int64)
    splits = np.empty(3 * max(n, 1), dtype=np.int64)
    n_splits = 0
    st_node = np.empty(STACK, dtype=np.int64)
    st_lo = np.empty(STACK, dtype=np.int64)
    st_hi = np.empty(STACK, dtype=np.int64)
    top = 0
    st_node[0], st_lo[0], st_hi[0] = root, 0, n
    top = 1
    lo_r = np.empty(n_attr, dtype=np.int64)
    hi_r = np.empty(n_attr, dtype=np.int64)
    widths = np.empty(n_attr, dtype=np.float64)
    ranked = np.empty(n_attr, dtype=np.int64)
    while top > 0:
        top -= 1
        node, a_i, b_i = st_node[top], st_lo[top], st_hi[top]
        m = b_i - a_i
        if m <= stop_rows or node >= max_node or m == 0:
            continue
        # Attributes with a positive normalised range, widest first (ties: lower index).
        n_ranked = 0
        for a in range(n_attr):
            lo = ranks[a, order[a_i]]
            hi = lo
            for i in range(a_i + 1, b_i):
                r = ranks[a, order[i]]
                if r < lo:
                    lo = r
                elif r > hi:
                    hi = r
            lo_r[a], hi_r[a] = lo, hi
            blo, bhi = present[pstart[a] + lo], present[pstart[a] + hi]
            w = 0.0
            if blo < bhi:
                if code[a] == 0:
                    w = (bhi - blo) / resolution
                else:
                    w = width_tab[offset[a] + blo * side[a] + bhi]
            if w > 0:
                j = n_ranked
                while j > 0 and widths[ranked[j - 1]] < w:
                    ranked[j] = ranked[j - 1]
                    j -= 1
                ranked[j] = a
                widths[a] = w
                n_ranked += 1
        cut_attr = -1
        cut_bin = -1
        for t in range(n_ranked):
            a = ranked[t]
            held, counts = _histogram(order, a_i, b_i, ranks[a], sens, n_values, lo_r[a], hi_r[a])
            bins = np.empty(held.size, dtype=np.int64)
            for j in range(held.size):
                bins[j] = present[pstart[a] + held[j]]
            for j in range(n_values, counts.size):
                counts[j] += counts[j - n_values]
            any_cut = True
            cands = cflat[0:0]
            if code[a] == 1:
                pair = offset[a] + bins[0] * side[a] + bins[bins.size - 1]
                any_cut = any_tab[pair] == 1
                if not any_cut:
                    cands = cflat[cstart[pair] : cstart[pair + 1]]
            cut, left = _best_cut(bins, counts, min_side, cands, any_cut, k, p, h, level_of, seen)
            if left >= 0:
                cut_attr, cut_bin = a, cut
                break
        if cut_attr < 0:
            continue
        if 3 * n_splits == splits.size:
            grown = np.empty(2 * splits.size, dtype=np.int64)
            grown[: splits.size] = splits
            splits = grown
        splits[3 * n_splits] = node
        splits[3 * n_splits + 1] = cut_attr
        splits[3 * n_splits + 2] = cut_bin
        n_splits += 1
        # Stable partition of the node's rows: bins <= cut left, the others right.
        n_left = 0
        for i in range(a_i, b_i):
            row = order[i]
            if present[pstart[cut_attr] + ranks[cut_attr, row]] <= cut_bin:
                buf[a_i + n_left] = row
                n_left += 1
        j = a_i + n_left
        for i in range(a_i, b_i):
            row = order[i]
            if present[pstart[cut_attr] + ranks[cut_attr, row]] > cut_bin:
                buf[j] = row
                j += 1
        mid = a_i + n_left
        for i in range(a_i, b_i):
            order[i] = buf[i]
            leaf[buf[i]] = 2 * node if i < mid else 2 * node + 1
        st_node[top], st_lo[top], st_hi[top] = 2 * node, a_i, mid
        st_node[top + 1], st_lo[top + 1], st_hi[top + 1] = 2 * node + 1, mid, b_i
        top += 2
    return leaf, splits[: 3 * n_splits].copy()
