"""The per-class statistics every algorithm keeps: one mergeable accumulator.

:class:`ClassStats` holds, for each class of a block: its size, the rows of each
sensitive value and level, and per quasi-identifier the members' codes and, for the
histogram kinds (:class:`~sparkanon.attributes.kinds.DiscreteKind`), a histogram of
codes. Classes can be
added, grown, shrunk, merged and retired; every statistic a clustering algorithm scores
a candidate by is computed for all classes at once, optionally with rows added:

* InfoLoss (Shi et al. 2024, eq. 20; Yang et al. 2014, eq. 12): :meth:`ClassStats.losses`,
  split into its histogram part (:meth:`ClassStats.hist_losses`, cheap, a lower bound) and the
  rest (:meth:`ClassStats.member_losses`);
* the sensitive entropy Ent (Yang et al. 2014, eq. 14): :meth:`ClassStats.entropies`;
* the level entropy HEC (Shi et al. 2024, eq. 2): :meth:`ClassStats.hec_with_level`;
* NCP (Xu et al. 2006): :meth:`ClassStats.ncp`, from each attribute's range: every
  class's lowest and highest code per attribute are kept as arrays (:attr:`ClassStats.lo`,
  :attr:`ClassStats.hi`), updated as rows are added, removed and merged, so the NCP of
  all classes is a few array operations.

Two accumulators merge by adding histograms and counts, concatenating members and
taking the wider range, as Spark's partial aggregations combine before a shuffle.
MAA-SLIE and GPKC (leftover placement), MAA-SAE (the formed classes ``Q``), (K,L)
clustering (its classes under reassignment) and the repair step all use this one class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.attributes.kinds import DiscreteKind
from sparkanon.attributes.ranges import RangeNcp
from sparkanon.metrics.entropy import class_level_entropy, sensitive_entropy
from sparkanon.models import ClassSummaries


def _extremes(dtype: np.dtype) -> tuple[float | int, float | int]:
    """The ``(lo, hi)`` of an empty class: above and below every code of this dtype.

    Taking the minimum (maximum) of it and a code gives the code, so adding rows needs
    no special case for an empty class.
    """
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.max, info.min
    return np.inf, -np.inf


class ClassStats:
    """Per-class statistics of a block's classes (see the module docstring).

    Args:
        block: the block whose kinds and sensitive domain the classes use.
        capacity: initial number of class slots (grown as needed).

    Attributes:
        lo: per attribute, each class slot's lowest code in :attr:`members`, kept as
            rows are added, removed and merged (the largest value of the codes' dtype
            when the slot holds none, e.g. a retired class).
        hi: per attribute, each class slot's highest code in :attr:`members` (the
            smallest value of the dtype when it holds none).
    """

    def __init__(self, block: Block, capacity: int = 16) -> None:
        self.block = block
        self.kinds = block.kinds
        sensitive = block.ctx.schema.sensitive
        self.n_values = len(sensitive.values)
        self.n_levels = sensitive.n_levels
        self.level_of = sensitive.declared_level_of
        cap = max(capacity, 1)
        self.hists: list[np.ndarray | None] = [
            np.zeros((cap, kind.size)) if isinstance(kind, DiscreteKind) else None
            for kind in self.kinds
        ]
        self.members: list[list[np.ndarray]] = [[] for _ in self.kinds]
        self.dtypes = [codes.dtype for codes in block.codes]
        self._empty = [_extremes(dtype) for dtype in self.dtypes]
        self.lo = [np.full(cap, lo, self.dtypes[a]) for a, (lo, _) in enumerate(self._empty)]
        self.hi = [np.full(cap, hi, self.dtypes[a]) for a, (_, hi) in enumerate(self._empty)]
        self.sens_counts = np.zeros((cap, self.n_values))
        self.level_counts = np.zeros((cap, self.n_levels))
        self.size = np.zeros(cap, dtype=np.int64)
        self.alive = np.zeros(cap, dtype=bool)
        self.loss = np.zeros(cap)
        self.m = 0
        self._ncp = [RangeNcp(kind) for kind in self.kinds]

    @classmethod
    def from_labels(cls, block: Block, labels: np.ndarray, n_classes: int) -> ClassStats:
        """The classes ``0..n_classes-1`` of a labelled block (``-1`` rows are in none).

        Each class's members are in block order; :attr:`loss` holds each class's InfoLoss.
        """
        stats = cls(block, capacity=n_classes)
        labels = np.asarray(labels, dtype=np.int64)
        for c in range(n_classes):
            rows = np.flatnonzero(labels == c)
            stats.add_class(
                [codes[rows] for codes in block.codes], block.sens[rows], block.level[rows]
            )
        stats.loss[: stats.m] = stats.losses(np.arange(stats.m))
        return stats

    # -- mutation -------------------------------------------------------------------

    def _grow(self) -> None:
        cap = 2 * len(self.alive)
        for a, h in enumerate(self.hists):
            if h is not None:
                self.hists[a] = np.vstack([h, np.zeros_like(h)])
        self.sens_counts = np.vstack([self.sens_counts, np.zeros_like(self.sens_counts)])
        self.level_counts = np.vstack([self.level_counts, np.zeros_like(self.level_counts)])
        extra = cap - len(self.alive)
        self.size = np.concatenate([self.size, np.zeros(extra, dtype=np.int64)])
        self.alive = np.concatenate([self.alive, np.zeros(extra, dtype=bool)])
        self.loss = np.concatenate([self.loss, np.zeros(extra)])
        for a, (lo_empty, hi_empty) in enumerate(self._empty):
            self.lo[a] = np.concatenate([self.lo[a], np.full(extra, lo_empty, self.dtypes[a])])
            self.hi[a] = np.concatenate([self.hi[a], np.full(extra, hi_empty, self.dtypes[a])])

    def add_class(self, codes: Sequence[np.ndarray], sens: np.ndarray, levels: np.ndarray) -> int:
        """Add a class with these rows (codes per attribute, sensitive codes, levels); its id."""
        if self.m == len(self.alive):
            self._grow()
        cid = self.m
        self.m += 1
        self.alive[cid] = True
        for a in range(len(self.kinds)):
            self.members[a].append(np.empty(0, dtype=self.dtypes[a]))
        self.add_rows(cid, codes, sens, levels)
        return cid

    def add_rows(
        self, c: int, codes: Sequence[np.ndarray], sens: np.ndarray, levels: np.ndarray
    ) -> None:
        """Add rows to class ``c`` (members keep their order: old ones first)."""
        for a, kind in enumerate(self.kinds):
            h = self.hists[a]
            if h is not None:
                assert isinstance(kind, DiscreteKind)
                h[c] += kind.histogram(codes[a])
            added = np.asarray(codes[a], dtype=self.dtypes[a])
            self.members[a][c] = np.concatenate([self.members[a][c], added])
            if added.size:
                self.lo[a][c] = np.minimum(self.lo[a][c], added.min())
                self.hi[a][c] = np.maximum(self.hi[a][c], added.max())
        self.sens_counts[c] += np.bincount(sens, minlength=self.n_values)
        self.level_counts[c] += np.bincount(levels, minlength=self.n_levels)
        self.size[c] += len(sens)

    def remove_row(self, c: int, codes: Sequence[float], sens: int, level: int) -> None:
        """Take one row with these codes out of class ``c`` (the first member equal to it)."""
        for a in range(len(self.kinds)):
            h = self.hists[a]
            if h is not None:
                h[c, int(codes[a])] -= 1.0
            own = self.members[a][c]
            hit = int(np.flatnonzero(own == codes[a])[0])
            rest = self.members[a][c] = np.delete(own, hit)
            if own[hit] == self.lo[a][c] or own[hit] == self.hi[a][c]:
                self._set_range(a, c, rest)
        self.sens_counts[c, sens] -= 1.0
        self.level_counts[c, level] -= 1.0
        self.size[c] -= 1

    def merge(self, into: int, other: int) -> None:
        """Merge class ``other`` into class ``into``; ``other`` is retired."""
        for a in range(len(self.kinds)):
            h = self.hists[a]
            if h is not None:
                h[into] += h[other]
            self.members[a][into] = np.concatenate([self.members[a][into], self.members[a][other]])
            self.lo[a][into] = np.minimum(self.lo[a][into], self.lo[a][other])
            self.hi[a][into] = np.maximum(self.hi[a][into], self.hi[a][other])
        self.sens_counts[into] += self.sens_counts[other]
        self.level_counts[into] += self.level_counts[other]
        self.size[into] += self.size[other]
        self.retire(other)

    def retire(self, c: int) -> None:
        """Take class ``c`` out of the live classes (its id is never reused)."""
        self.alive[c] = False
        for a in range(len(self.kinds)):
            if self.hists[a] is None:
                self.members[a][c] = np.empty(0, dtype=self.dtypes[a])
                self._set_range(a, c, self.members[a][c])

    def _set_range(self, a: int, c: int, members: np.ndarray) -> None:
        """Set class ``c``'s range on attribute ``a`` to that of ``members`` (may be empty)."""
        if members.size:
            self.lo[a][c], self.hi[a][c] = members.min(), members.max()
        else:
            self.lo[a][c], self.hi[a][c] = self._empty[a]

    def ids(self) -> np.ndarray:
        """Ids of the live classes, in the order they were added."""
        return np.flatnonzero(self.alive[: self.m])

    # -- InfoLoss (eq. 20) ------------------------------------------------------------

    def hist_losses(self, ids: np.ndarray, codes: Sequence[np.ndarray]) -> np.ndarray:
        """Weighted loss of ``Gk ∪ X`` on the histogram kinds only, for every class of ``ids``."""
        losses = np.zeros(len(ids))
        for a, kind in enumerate(self.kinds):
            h = self.hists[a]
            if h is not None:
                assert isinstance(kind, DiscreteKind)
                losses += kind.weight * kind.losses(h[ids] + kind.histogram(codes[a])[None, :])
        return losses

    def member_losses(self, ids: np.ndarray, codes: Sequence[np.ndarray]) -> np.ndarray:
        """Weighted loss of ``Gk ∪ X`` on the other kinds (``kind.losses_of``), per class."""
        losses = np.zeros(len(ids))
        for a, kind in enumerate(self.kinds):
            if self.hists[a] is None:
                stored = self.members[a]
                losses += kind.weight * kind.losses_of([stored[c] for c in ids], codes[a])
        return losses

    def losses(self, ids: np.ndarray, codes: Sequence[np.ndarray] | None = None) -> np.ndarray:
        """InfoLoss of every class of ``ids``, with the rows ``codes`` added when given.

        The attributes are summed in schema order.
        """
        total = np.zeros(len(ids))
        for a, kind in enumerate(self.kinds):
            h = self.hists[a]
            if h is not None:
                assert isinstance(kind, DiscreteKind)
                grown = h[ids] if codes is None else h[ids] + kind.histogram(codes[a])[None, :]
                total += kind.weight * kind.losses(grown)
            else:
                extra = None if codes is None else codes[a]
                total += kind.weight * kind.losses_of([self.members[a][c] for c in ids], extra)
        return total

    # -- entropies ----------------------------------------------------------------------

    def entropies(self, ids: np.ndarray, sens: np.ndarray) -> np.ndarray:
        """``Ent(Gk ∪ X)`` (Yang et al. 2014, eq. 14) for every class ``Gk`` of ``ids``."""
        counts = self.sens_counts[ids] + np.bincount(sens, minlength=self.n_values)[None, :]
        return sensitive_entropy(counts)

    def hec_with_level(self, ids: np.ndarray, level: int) -> np.ndarray:
        """HEC (Shi et al. 2024, eq. 2) of every class of ``ids`` plus one row of this level."""
        counts = self.level_counts[ids].copy()
        counts[:, level] += 1.0
        weights = self.block.weights
        return class_level_entropy(counts, weights, self.block.ctx.entropy_base)

    # -- NCP ----------------------------------------------------------------------------

    def ncp(self, ids: np.ndarray, row: Sequence[float] | None = None) -> np.ndarray:
        """NCP (weighted) of every class of ``ids``, with one row added when given.

        Every class of ``ids`` must hold a row (or have ``row`` added).
        """
        total = np.zeros(len(ids))
        for a, (kind, ncp) in enumerate(zip(self.kinds, self._ncp, strict=True)):
            lo, hi = self.lo[a][ids], self.hi[a][ids]
            if row is not None:
                lo, hi = np.minimum(lo, row[a]), np.maximum(hi, row[a])
            total += kind.weight * ncp.of_range(lo, hi)
        return total

    def ncp_without(self, c: int, row: Sequence[float]) -> float:
        """NCP (weighted) of class ``c`` without one member equal to ``row``.

        The row must be a member. On an attribute the range stays unless the row's code
        is an end of it held by no other member; then the other members give it.
        """
        total = np.zeros(1)
        for a, (kind, ncp) in enumerate(zip(self.kinds, self._ncp, strict=True)):
            lo, hi = self.lo[a][c : c + 1], self.hi[a][c : c + 1]
            if row[a] == lo[0] or row[a] == hi[0]:
                own = self.members[a][c]
                same = own == row[a]
                if np.count_nonzero(same) < 2:
                    rest = own[~same]
                    lo, hi = rest.min(keepdims=True), rest.max(keepdims=True)
            total += kind.weight * ncp.of_range(lo, hi)
        return float(total[0])

    # -- models -------------------------------------------------------------------------

    def summaries(self, ids: np.ndarray) -> ClassSummaries:
        """The classes' :class:`~sparkanon.models.ClassSummaries`, for the privacy models."""
        counts = np.rint(self.sens_counts[ids]).astype(np.int64)
        return ClassSummaries(self.size[ids].copy(), counts, self.level_of)
