"""Mondrian-style partitioning: one mechanism for blocking and for the Mondrian algorithm.

A partition is a binary tree of cuts. Node ids are heap numbers: the root is 1 and
the children of node ``b`` are ``2b`` (blocking bins ``<= cut``) and ``2b + 1``. A
cut is decided from the node's *statistics* only: for every quasi-identifier, the
rows per blocking bin and sensitive value (:class:`NodeHistogram`). The same decision
function, :func:`decide`, runs

* on Spark, level by level, on histograms aggregated over the cluster
  (:mod:`sparkanon.per_block.plan`), for the top of the tree, and
* in pandas on a block's own rows (:func:`plan_local`), for the rest of the tree,

so the tree does not depend on where a node was cut: a job that cuts the top on Spark
gives the same tree as one machine cutting the whole table (``partitioning.task_rows``
only moves the boundary).

Two cut rules (:class:`CutPolicy`):

* ``spread`` (blocking before micro-aggregation, LeFevre-style median cuts on the
  attribute of largest *spread*: mean distance to the block's centroid,
  :func:`attribute_spread`): the attribute of largest spread is cut at the allowed
  cut closest to its median that leaves ``min_side`` rows on each side; if a side then
  fails the model, that attribute is excluded and the next one is tried. With
  ``infeasible: reconcile`` a cut whose one side fails is kept and that side becomes a
  final, *infeasible* leaf (its rows go to cross-block reconciliation).
* ``range`` (Mondrian, LeFevre, DeWitt, Ramakrishnan 2006): attributes in decreasing
  normalised range (:func:`normalized_range`); on each, the allowed cut closest to the
  median such that both sides hold ``min_side`` rows and satisfy the model (a monotonic
  model: the strict multidimensional partitioning); the first attribute with such a cut
  wins.

Categorical cuts fall only between the child subtrees of the node's lowest common
ancestor (a binary split among the children: cutting a node into all its children is
reached by successive cuts), continuous attributes are cut on a grid of bins
(:func:`grid_bins`: 1,024 for blocking, 2^20 for Mondrian).

:func:`plan_local` on the ``range`` rule runs compiled (numba,
:mod:`sparkanon.algorithms._cuts_kernel`) when the model test is a :class:`ModelTest`
of count models only (k, p-sensitive, (H,p,k), distinct l): their conjunction is
``size >= k``, ``distinct >= p``, ``levels >= h``, which the kernel applies exactly;
any other model, the ``spread`` rule, an unsupported kind or ``SPARKANON_NO_JIT=1``
take the numpy path (``plan_local(..., compiled=False)``), which gives the same leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from sparkanon.attributes.kinds import CONTINUOUS_BINS, ContinuousKind, DiscreteKind, Kind
from sparkanon.models import ClassSummaries, ModelSet
from sparkanon.models.k_anonymity import HPKAnonymity, KAnonymity, PSensitiveKAnonymity
from sparkanon.models.l_diversity import DistinctLDiversity

MAX_DEPTH = 40
"""Deepest allowed node; keeps ``block << 20 | class`` inside int64."""
FINE_BINS = 1 << 20
"""Grid of continuous attributes under the ``range`` rule (Mondrian cuts near exact values)."""

Feasible = Callable[[np.ndarray], np.ndarray]
"""Whether each candidate class, given as a row of sensitive value counts, can be published."""


class ModelTest:
    """The models' test on candidate classes' sensitive counts (a :data:`Feasible`).

    Calling it is ``models.satisfied`` on the counts' class summaries. Its
    :attr:`bounds` let the compiled ``range`` loop apply the same test itself when every
    model only bounds counts.

    Args:
        models: the models every class must satisfy.
        level_of: the sensitivity level of each sensitive code (``None``: no levels).
        sensitive: whether the counts are split by sensitive value (``False``: one
            column of sizes, for models that do not read the sensitive attribute).
    """

    def __init__(
        self, models: ModelSet, level_of: np.ndarray | None = None, sensitive: bool = True
    ) -> None:
        self.models, self.level_of, self.sensitive = models, level_of, sensitive

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        """Whether each row of sensitive counts is a class every model accepts."""
        sizes = counts.sum(axis=1)
        if not self.sensitive:
            return self.models.satisfied(
                ClassSummaries(sizes, np.zeros((len(counts), 0), np.int64))
            )
        return self.models.satisfied(ClassSummaries(sizes, counts, self.level_of))

    @property
    def bounds(self) -> tuple[int, int, int] | None:
        """``(k, p, h)`` of count models, else ``None``.

        The bounds when the models' conjunction is exactly ``size >= k``, ``distinct
        values >= p`` and ``distinct levels >= h`` (0: no bound). Only exact types count
        (a subclass may test otherwise); ``p`` and ``h`` need the counts split by
        sensitive value, ``h`` the levels.
        """
        k = p = h = 0
        for model in self.models:
            kind = type(model)
            if kind is KAnonymity:
                k = max(k, model.k)
            elif kind is PSensitiveKAnonymity:
                k, p = max(k, model.k), max(p, model.p)
            elif kind is HPKAnonymity:
                k, p, h = max(k, model.k), max(p, model.p), max(h, model.h)
            elif kind is DistinctLDiversity:
                p = max(p, model.l)
            else:
                return None
        if (p or h) and not self.sensitive:
            return None
        if h and self.level_of is None:
            return None
        return k, p, h


@dataclass
class BlockTree:
    """The cuts made so far: ``splits[node] = (attribute index, cut bin)``."""

    splits: dict[int, tuple[int, int]] = field(default_factory=dict)

    def split(self, node: int, attribute: int, cut: int) -> None:
        """Cut leaf ``node`` on ``attribute``: bins ``<= cut`` go left."""
        self.splits[node] = (attribute, cut)

    def assign(self, bins: np.ndarray) -> np.ndarray:
        """Leaf of each row.

        Args:
            bins: ``(n_attributes, n_rows)`` blocking bins.

        Returns:
            The node id of each row's leaf.
        """
        n = bins.shape[1] if bins.ndim == 2 else 0
        node = np.ones(n, dtype=np.int64)
        if not self.splits or n == 0:
            return node
        keys = np.array(sorted(self.splits), dtype=np.int64)
        attrs = np.array([self.splits[k][0] for k in keys], dtype=np.int64)
        cuts = np.array([self.splits[k][1] for k in keys], dtype=np.int64)
        rows = np.arange(n)
        for _ in range(MAX_DEPTH + 1):
            idx = np.clip(np.searchsorted(keys, node), 0, len(keys) - 1)
            internal = keys[idx] == node
            if not internal.any():
                break
            i = idx[internal]
            right = bins[attrs[i], rows[internal]] > cuts[i]
            node[internal] = 2 * node[internal] + right
        return node


@dataclass(frozen=True)
class CutPolicy:
    """How nodes are cut.

    Attributes:
        rule: ``spread`` (blocking) or ``range`` (Mondrian), see the module docstring.
        min_side: rows each side of a cut must keep (the model's minimal class size).
        stop_rows: a node of at most this many rows is not cut (``max_block_rows``
            for blocking; 0 cuts while a cut is allowed).
        infeasible: ``merge`` (a cut whose side fails the model is not made) or
            ``reconcile`` (``spread`` only: kept when the other side passes; the
            failing side becomes an infeasible leaf).
    """

    rule: Literal["spread", "range"] = "spread"
    min_side: int = 1
    stop_rows: int = 0
    infeasible: Literal["merge", "reconcile"] = "merge"

    @property
    def resolution(self) -> int:
        """Grid of continuous attributes: :data:`CONTINUOUS_BINS` or :data:`FINE_BINS`."""
        return FINE_BINS if self.rule == "range" else CONTINUOUS_BINS


def grid_bins(kind: Kind, codes: np.ndarray, resolution: int = CONTINUOUS_BINS) -> np.ndarray:
    """Cut bins of one attribute: ``kind.bins``; continuous codes on a finer grid if asked."""
    if isinstance(kind, ContinuousKind) and resolution != CONTINUOUS_BINS:
        b = np.floor(np.asarray(codes, dtype=float) * resolution).astype(np.int64)
        return np.clip(b, 0, resolution - 1)
    return kind.bins(codes)


@dataclass(frozen=True)
class BinRule:
    """One attribute's cut bin as plain arithmetic on its code, for engines to compute natively.

    ``scale``: ``clip(floor(code * factor), 0, factor - 1)`` (continuous codes in
    ``[0, 1]``); ``divide``: ``code // factor`` (semantic codes: their leading digits);
    ``identity``: the code itself (discrete kinds). Equal to :func:`grid_bins` on every
    code (:func:`bin_rule` is tested against it).
    """

    op: Literal["scale", "divide", "identity"]
    factor: int = 1

    def apply(self, codes: np.ndarray) -> np.ndarray:
        """The bins of ``codes`` (numpy)."""
        if self.op == "scale":
            b = np.floor(np.asarray(codes, dtype=float) * self.factor).astype(np.int64)
            return np.clip(b, 0, self.factor - 1)
        if self.op == "divide":
            return np.asarray(codes, dtype=np.int64) // self.factor
        return np.asarray(codes, dtype=np.int64)


def bin_rule(kind: Kind, resolution: int = CONTINUOUS_BINS) -> BinRule | None:
    """The :class:`BinRule` of one attribute, or ``None`` for a kind with another bin function."""
    if isinstance(kind, ContinuousKind):
        return BinRule("scale", resolution)
    if isinstance(kind, DiscreteKind):
        return BinRule("identity")
    divisor = getattr(kind, "bin_divisor", None)
    return BinRule("divide", int(divisor)) if divisor is not None else None


def bins_matrix(
    kinds: Sequence[Kind], codes: Sequence[np.ndarray], resolution: int = CONTINUOUS_BINS
) -> np.ndarray:
    """Cut bins of every quasi-identifier, shape ``(n_attributes, n_rows)``."""
    n = len(codes[0]) if len(codes) else 0
    if not len(kinds):
        return np.zeros((0, n), dtype=np.int64)
    return np.vstack([grid_bins(k, c, resolution) for k, c in zip(kinds, codes, strict=True)])


@dataclass(frozen=True)
class NodeHistogram:
    """Rows of one node per bin of one attribute, split by sensitive value.

    Attributes:
        bins: the bins present, ascending.
        counts: ``(len(bins), V)`` rows per bin and sensitive value code (``V = 1``
            when the model does not look at the sensitive attribute).
    """

    bins: np.ndarray
    counts: np.ndarray

    @property
    def per_bin(self) -> np.ndarray:
        """Rows per bin."""
        return self.counts.sum(axis=1)

    @classmethod
    def of(cls, bins: np.ndarray, sens: np.ndarray, n_values: int) -> NodeHistogram:
        """The histogram of one attribute's bins and the rows' sensitive codes."""
        present, inverse = np.unique(bins, return_inverse=True)
        flat = np.bincount(inverse * n_values + sens, minlength=len(present) * n_values)
        return cls(present.astype(np.int64), flat.reshape(len(present), n_values).astype(np.int64))


def node_histograms(bins: np.ndarray, sens: np.ndarray, n_values: int) -> list[NodeHistogram]:
    """:class:`NodeHistogram` of every attribute of one node's rows."""
    return [NodeHistogram.of(bins[a], sens, n_values) for a in range(bins.shape[0])]


DENSE_FACTOR = 4
"""A node's histogram is counted densely over its rank span when the span times the
sensitive domain is at most this many times its rows (plus :data:`DENSE_SLACK`); else by
sorting its ranks."""
DENSE_SLACK = 1024


@dataclass(frozen=True)
class RankedBins:
    """The cut bins of a set of rows, each attribute's bins ranked once for all its nodes.

    Attributes:
        present: per attribute, the distinct bins of the rows, ascending.
        ranks: ``(n_attributes, n_rows)``: the position of each row's bin in ``present``.
    """

    present: list[np.ndarray]
    ranks: np.ndarray

    @classmethod
    def of(cls, bins: np.ndarray) -> RankedBins:
        """Rank ``(n_attributes, n_rows)`` bins (one sort per attribute)."""
        present, ranks = [], np.zeros(bins.shape, dtype=np.int64)
        for a in range(bins.shape[0]):
            values, inverse = np.unique(bins[a], return_inverse=True)
            present.append(values.astype(np.int64))
            ranks[a] = inverse.reshape(-1)
        return cls(present, ranks)


class NodeHistograms(Sequence[NodeHistogram]):
    """One node's :class:`NodeHistogram` of every attribute, each counted when first read.

    Equal, attribute by attribute, to :func:`node_histograms` of the node's rows; built
    from :class:`RankedBins` (no sort per node when the node's bins are few), and the
    range rule ranks attributes by their bin span (:meth:`span`) without counting them.

    Args:
        ranked: the ranked bins of all the rows.
        idx: the node's rows (positions in ``ranked``).
        sens: the sensitive codes of all the rows.
        n_values: the sensitive domain size.
    """

    def __init__(self, ranked: RankedBins, idx: np.ndarray, sens: np.ndarray, n_values: int):
        self._ranked, self._idx, self._n_values = ranked, idx, n_values
        self._sens = sens[idx]
        self._ranks: dict[int, np.ndarray] = {}
        self._hists: dict[int, NodeHistogram] = {}

    @property
    def rows(self) -> int:
        """Rows of the node."""
        return int(self._idx.size)

    def __len__(self) -> int:
        return len(self._ranked.present)

    def _node_ranks(self, a: int) -> np.ndarray:
        if a not in self._ranks:
            self._ranks[a] = self._ranked.ranks[a, self._idx]
        return self._ranks[a]

    def span(self, a: int) -> tuple[int, int]:
        """The lowest and highest bin of attribute ``a`` in the node."""
        ranks = self._node_ranks(a)
        present = self._ranked.present[a]
        return int(present[ranks.min()]), int(present[ranks.max()])

    def __getitem__(self, a: int) -> NodeHistogram:  # type: ignore[override]
        if a not in self._hists:
            self._hists[a] = self._count(a)
        return self._hists[a]

    def _count(self, a: int) -> NodeHistogram:
        ranks, v = self._node_ranks(a), self._n_values
        low = int(ranks.min())
        width = int(ranks.max()) - low + 1
        if width * v > DENSE_FACTOR * ranks.size + DENSE_SLACK:
            held, inverse = np.unique(ranks, return_inverse=True)
            flat = np.bincount(inverse * v + self._sens, minlength=len(held) * v)
            counts = flat.reshape(len(held), v).astype(np.int64)
            return NodeHistogram(self._ranked.present[a][held], counts)
        flat = np.bincount((ranks - low) * v + self._sens, minlength=width * v)
        counts = flat.reshape(width, v).astype(np.int64)
        held = counts.any(axis=1)
        return NodeHistogram(self._ranked.present[a][low : low + width][held], counts[held])


def _node_rows(hists: Sequence[NodeHistogram]) -> int:
    """Rows of the node the histograms describe."""
    if isinstance(hists, NodeHistograms):
        return hists.rows
    return int(hists[0].counts.sum()) if hists else 0


def _span(hists: Sequence[NodeHistogram], a: int) -> tuple[int, int]:
    """Lowest and highest bin of attribute ``a`` (without counting a lazy histogram)."""
    if isinstance(hists, NodeHistograms):
        return hists.span(a)
    return int(hists[a].bins[0]), int(hists[a].bins[-1])


def attribute_spread(kind: Kind, bins: np.ndarray, counts: np.ndarray) -> float:
    """How spread out a node is on one attribute: weighted mean distance to its centroid.

    This is the attribute's share of the node's information loss per row (Shi et al. 2024
    eq. 19-20 with the whole node as one class). Blocking cuts the attribute of
    largest spread: a normalised *range* (classic Mondrian) ranks an attribute with a
    few outliers, or a long declared order, as wide as one spread over its whole domain.

    Args:
        kind: the attribute's kind.
        bins: the bins present, ascending.
        counts: rows per bin.

    Returns:
        The spread, 0 for a node with one value.
    """
    counts = np.asarray(counts, dtype=float)
    total = counts.sum()
    if total <= 0:
        return 0.0
    if isinstance(kind, DiscreteKind):
        hist = np.zeros(kind.size)
        hist[bins] = counts
        return kind.weight * float(kind.losses(hist[None, :])[0]) / total
    if not isinstance(kind, ContinuousKind):
        # Any other kind (semantic codes): mean distance to the medoid bin, with
        # the kind's own distance between bins (at most a few thousand bins).
        return kind.weight * float((kind.bin_distances(bins) @ counts).min()) / total
    centres = (bins + 0.5) / CONTINUOUS_BINS
    mean = float((centres * counts).sum() / total)
    return kind.weight * float((np.abs(centres - mean) * counts).sum() / total)


def normalized_range(kind: Kind, lo: int, hi: int, resolution: int) -> float:
    """Width of a node on one attribute as a share of the attribute's domain (Mondrian's rule).

    Continuous: the bin span over the grid; ordinal: ranks spanned over ``V - 1``;
    categorical: leaves under the lowest common ancestor over all leaves (NCP, Xu et
    al. 2006); nominal: 1 for several values; semantic: the normalised distance of the
    common prefix.

    Args:
        kind: the attribute's kind.
        lo: lowest bin in the node.
        hi: highest bin in the node.
        resolution: the continuous grid.

    Returns:
        The width in ``[0, 1]``; 0 when the node holds one bin.
    """
    if lo == hi:
        return 0.0
    if isinstance(kind, ContinuousKind):
        return (hi - lo) / resolution
    if isinstance(kind, DiscreteKind):
        return float(kind.ncp(np.array([lo, hi])))
    return float(kind.bin_span(lo, hi))


def median_cut(
    kind: Kind, bins: np.ndarray, per_bin: np.ndarray, min_side: int
) -> tuple[np.ndarray, np.ndarray]:
    """Allowed cuts of one attribute, ordered from the median outwards.

    Args:
        kind: the attribute's kind (gives the allowed cuts).
        bins: the bins present, ascending.
        per_bin: rows per bin.
        min_side: rows each side must keep.

    Returns:
        ``(cuts, left)``: candidate cut bins (left side ``<= cut``) leaving at least
        ``min_side`` rows on both sides, closest to half the rows first (ties to the
        lower cut), and the rows left of each.
    """
    lo, hi = int(bins[0]), int(bins[-1])
    candidates = kind.cut_candidates(lo, hi)
    # Any bin is allowed: a cut anywhere in [b_i, b_i+1) between two present bins
    # leaves the same rows on each side, so the present bins (but the last) stand for
    # them all, and the lowest cut of equal score is the present bin itself.
    cands = bins[:-1] if candidates is None else np.asarray(candidates, dtype=np.int64)
    if cands.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    cum = np.cumsum(per_bin)
    total = int(cum[-1])
    pos = np.searchsorted(bins, cands, side="right")
    left = np.where(pos > 0, cum[np.clip(pos - 1, 0, None)], 0)
    ok = (left >= min_side) & (total - left >= min_side)
    cands, left = cands[ok], left[ok]
    order = np.lexsort((cands, np.abs(left - total / 2.0)))
    return cands[order], left[order]


@dataclass(frozen=True)
class Decision:
    """A node's cut: the attribute, the cut bin, and whether each side passes the model."""

    attr: int
    cut: int
    left_size: int
    right_size: int
    left_ok: bool = True
    right_ok: bool = True


def _sides(hist: NodeHistogram, cuts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sensitive counts left and right of each cut, ``(len(cuts), V)`` each."""
    cum = np.cumsum(hist.counts, axis=0)
    pos = np.searchsorted(hist.bins, cuts, side="right") - 1
    left = np.where((pos >= 0)[:, None], cum[np.clip(pos, 0, None)], 0)
    return left, cum[-1][None, :] - left


def decide(
    kinds: Sequence[Kind],
    hists: Sequence[NodeHistogram],
    policy: CutPolicy,
    feasible: Feasible,
) -> Decision | None:
    """The cut of one node from its statistics, or ``None`` when it is not cut.

    Args:
        kinds: the quasi-identifier kinds.
        hists: the node's histogram of every attribute.
        policy: the cut rule.
        feasible: the model's test on candidate sides' sensitive counts.

    Returns:
        The decision (see the module docstring for both rules).
    """
    size = _node_rows(hists)
    if size <= policy.stop_rows:
        return None
    if policy.rule == "spread":
        return _decide_spread(kinds, hists, policy, feasible)
    return _decide_range(kinds, hists, policy, feasible)


def _ranked(
    kinds: Sequence[Kind],
    hists: Sequence[NodeHistogram],
    score: Callable[[Kind, NodeHistogram], float],
) -> list[int]:
    """Attributes holding more than one bin with a positive score, highest first (ties by index)."""
    ranked = []
    for a, (kind, hist) in enumerate(zip(kinds, hists, strict=True)):
        if len(hist.bins) < 2:
            continue
        value = score(kind, hist)
        if value > 0:
            ranked.append((-value, a))
    return [a for _, a in sorted(ranked)]


def _decide_spread(
    kinds: Sequence[Kind], hists: Sequence[NodeHistogram], policy: CutPolicy, feasible: Feasible
) -> Decision | None:
    def spread(kind: Kind, hist: NodeHistogram) -> float:
        return attribute_spread(kind, hist.bins, hist.per_bin)

    for a in _ranked(kinds, hists, spread):
        hist = hists[a]
        cuts, left = median_cut(kinds[a], hist.bins, hist.per_bin, policy.min_side)
        if cuts.size == 0:
            continue
        cut = cuts[:1]
        lc, rc = _sides(hist, cut)
        ok = feasible(np.vstack([lc, rc]))
        left_ok, right_ok = bool(ok[0]), bool(ok[1])
        total = int(hist.counts.sum())
        if (left_ok and right_ok) or (policy.infeasible == "reconcile" and (left_ok or right_ok)):
            return Decision(a, int(cut[0]), int(left[0]), total - int(left[0]), left_ok, right_ok)
    return None


def _decide_range(
    kinds: Sequence[Kind], hists: Sequence[NodeHistogram], policy: CutPolicy, feasible: Feasible
) -> Decision | None:
    ranked = []
    for a, kind in enumerate(kinds):
        lo, hi = _span(hists, a)
        width = normalized_range(kind, lo, hi, policy.resolution) if lo < hi else 0.0
        if width > 0:
            ranked.append((-width, a))
    for _, a in sorted(ranked):
        hist = hists[a]
        cuts, left = median_cut(kinds[a], hist.bins, hist.per_bin, policy.min_side)
        if cuts.size == 0:
            continue
        lc, rc = _sides(hist, cuts)
        ok = feasible(lc) & feasible(rc)
        if ok.any():
            i = int(np.argmax(ok))
            total = int(hist.counts.sum())
            return Decision(a, int(cuts[i]), int(left[i]), total - int(left[i]))
    return None


def split_by_position(
    node: int,
    idx: np.ndarray,
    sens: np.ndarray,
    n_values: int,
    policy: CutPolicy,
    feasible: Feasible,
) -> list[tuple[int, np.ndarray]]:
    """Blocks of at most ``stop_rows`` rows from a node no cut can divide (``spread`` only).

    A node of identical quasi-identifiers (generated data holds tens of thousands of
    them) has no cut, and a per-block algorithm is quadratic in its rows. Blocks are
    units of work, not classes, so such a node is dealt into ``m = ceil(n / stop_rows)``
    blocks: its rows sorted by sensitive value, then position, and dealt round-robin,
    so every block gets a proportional share of every sensitive value. When a block
    would fail the model, ``m`` is halved until none does (``m = 1``: not split).

    Args:
        node: the node's id; its blocks are its descendants ``node * 2^d + j``
            (``d`` levels below it), so they stay unique in the heap numbering.
        idx: the node's rows (positions in the caller's arrays, in row order).
        sens: sensitive value codes of all the caller's rows.
        n_values: the sensitive domain size (1 when the model ignores it).
        policy: the cut rule (its ``stop_rows``).
        feasible: the model's test on each block's sensitive counts.

    Returns:
        ``(block id, rows)`` of each block, or an empty list when the node is not split.
    """
    if policy.stop_rows <= 0 or idx.size <= policy.stop_rows:
        return []
    order = idx[np.lexsort((idx, sens[idx]))]
    m = -(-idx.size // policy.stop_rows)
    while m >= 2:
        depth = int(m - 1).bit_length()
        if node >= 1 << (MAX_DEPTH - 1 - depth):
            return []
        chunks = [order[j::m] for j in range(m)]
        counts = np.vstack([np.bincount(sens[c], minlength=n_values) for c in chunks])
        sizes_ok = counts.sum(axis=1) >= policy.min_side
        if sizes_ok.all() and feasible(counts).all():
            return [((node << depth) + j, np.sort(c)) for j, c in enumerate(chunks)]
        m //= 2
    return []


def plan_local(
    kinds: Sequence[Kind],
    bins: np.ndarray,
    sens: np.ndarray,
    n_values: int,
    policy: CutPolicy,
    feasible: Feasible,
    root: int = 1,
    tree: BlockTree | None = None,
    deal: bool = True,
    compiled: bool = True,
) -> tuple[np.ndarray, set[int]]:
    """Cut one node's rows down to leaves with :func:`decide`.

    Compiled (:mod:`sparkanon.algorithms._cuts_kernel`) on the ``range`` rule with a
    :class:`ModelTest` of count models, else in numpy node by node (the reference of
    the compiled loop); the same leaves.

    Args:
        kinds: the quasi-identifier kinds.
        bins: ``(n_attributes, n_rows)`` cut bins of the node's rows.
        sens: the rows' sensitive value codes (zeros when the model ignores them).
        n_values: the sensitive domain size (1 when ignored).
        policy: the cut rule.
        feasible: the model's test on candidate sides.
        root: the node's id (its descendants keep heap numbers under it).
        tree: when given, every cut made is recorded in it.
        deal: whether a node no cut can divide is dealt into blocks by position
            (:func:`split_by_position`; ``spread`` rule only). Such blocks are not
            cuts of the tree, so planning the tree's top does not deal.
        compiled: whether the compiled loop may run; ``False``: the numpy path.

    Returns:
        ``(leaf of each row, infeasible leaves)``.
    """
    if compiled and policy.rule == "range" and isinstance(feasible, ModelTest):
        leaf = _plan_compiled(kinds, bins, sens, n_values, policy, feasible, root, tree)
        if leaf is not None:
            return leaf, set()
    leaf = np.full(bins.shape[1], root, dtype=np.int64)
    infeasible: set[int] = set()
    stack = [(root, np.arange(bins.shape[1]))]
    ranked = RankedBins.of(bins)
    while stack:
        node, idx = stack.pop()
        if idx.size <= policy.stop_rows or node >= 1 << (MAX_DEPTH - 1):
            continue
        hists = NodeHistograms(ranked, idx, sens, n_values)
        decision = decide(kinds, hists, policy, feasible)
        if decision is None:
            if deal and policy.rule == "spread":
                for child, rows in split_by_position(node, idx, sens, n_values, policy, feasible):
                    leaf[rows] = child
            continue
        if tree is not None:
            tree.split(node, decision.attr, decision.cut)
        right = bins[decision.attr, idx] > decision.cut
        for child, rows, ok in (
            (2 * node, idx[~right], decision.left_ok),
            (2 * node + 1, idx[right], decision.right_ok),
        ):
            leaf[rows] = child
            if ok:
                stack.append((child, rows))
            else:
                infeasible.add(child)
    return leaf, infeasible


def _plan_compiled(
    kinds: Sequence[Kind],
    bins: np.ndarray,
    sens: np.ndarray,
    n_values: int,
    policy: CutPolicy,
    test: ModelTest,
    root: int,
    tree: BlockTree | None,
) -> np.ndarray | None:
    """The ``range`` rule's leaves from the compiled loop, or ``None`` (numpy path).

    ``None`` when numba is missing or disabled, the models are not count models, or a
    kind is not supported. The range rule makes no infeasible leaf.
    """
    bounds = test.bounds
    if bounds is None or bins.shape[1] == 0:
        return None
    from sparkanon.algorithms._base import compiled_kernel  # noqa: PLC0415 (import cycle)

    kernel = compiled_kernel("_cuts_kernel")
    if kernel is None:
        return None
    level_of = None if test.level_of is None else np.asarray(test.level_of, dtype=np.int64)
    if bounds[2] and (level_of is None or level_of.size != n_values):
        return None
    out = kernel.plan_range(
        kinds, RankedBins.of(bins), sens, n_values, policy, bounds, level_of, root
    )
    if out is None:
        return None
    leaf, splits = out
    if tree is not None:
        for node, attr, cut in splits.tolist():
            tree.split(node, attr, cut)
    return leaf


def settle_leaves(
    tree: BlockTree,
    counts: dict[int, np.ndarray],
    policy: CutPolicy,
    feasible: Feasible,
) -> tuple[BlockTree, set[int]]:
    """Check a proposed tree's leaves on exact counts; undo the cuts the model rejects.

    A tree planned on a sample only proposes cuts: the exact rows per leaf and
    sensitive value decide. Bottom-up, a leaf that fails the model (or holds fewer
    than ``min_side`` rows) is resolved at its parent: with ``infeasible: reconcile``
    (``spread`` rule) and a sibling subtree that passes, it stays as an *infeasible*
    leaf (its rows go to reconciliation), as :func:`decide` would have kept the cut;
    otherwise the parent's cut is undone and the parent, holding both sides' rows,
    is checked in turn.

    Args:
        tree: the proposed cuts (not modified).
        counts: exact rows per sensitive value of every leaf that holds rows.
        policy: the cut rule (``min_side``, ``infeasible``).
        feasible: the model's test on sensitive counts.

    Returns:
        The settled tree and its infeasible leaves.
    """
    splits = dict(tree.splits)
    n_values = len(next(iter(counts.values()))) if counts else 1
    zero = np.zeros(n_values, dtype=np.int64)

    def total(node: int) -> np.ndarray:
        # Counts are per leaf of the proposal; a node whose cuts were undone holds
        # all the leaves under it.
        out = zero.copy()
        for leaf, c in counts.items():
            if _is_under(leaf, node):
                out += np.asarray(c, dtype=np.int64)
        return out

    def passes(node: int) -> bool:
        c = total(node)
        return int(c.sum()) >= policy.min_side and bool(feasible(c[None, :])[0])

    infeasible: set[int] = set()
    reconcile = policy.rule == "spread" and policy.infeasible == "reconcile"

    def undo(node: int) -> None:
        for below in [n for n in splits if _is_under(n, node)]:
            del splits[below]
        for leaf in [n for n in infeasible if _is_under(n, node)]:
            infeasible.discard(leaf)

    changed = True
    while changed:
        changed = False
        for node in sorted(splits, reverse=True):  # deepest cuts first
            if node not in splits:
                continue
            sides = (2 * node, 2 * node + 1)
            bad = [c for c in sides if c not in splits and c not in infeasible and not passes(c)]
            if not bad:
                continue
            if reconcile and len(bad) == 1 and passes(sides[0] + sides[1] - bad[0]):
                infeasible.add(bad[0])
                continue
            undo(node)
            changed = True
    return BlockTree(splits), infeasible


def _is_under(node: int, ancestor: int) -> bool:
    """Whether heap node ``node`` is ``ancestor`` or one of its descendants."""
    while node > ancestor:
        node //= 2
    return node == ancestor
