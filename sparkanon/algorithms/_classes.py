"""The per-class statistics every algorithm keeps: one mergeable accumulator.

:class:`ClassStats` holds, for each class of a block: its size, the rows of each
sensitive value and level, and per quasi-identifier the members' codes and, for the
histogram kinds (:class:`~sparkanon.attributes.kinds.DiscreteKind`), a histogram of
codes. Classes can be
added, grown, shrunk, merged and retired; every statistic a clustering algorithm scores
a candidate by is computed for all classes at once, optionally with rows added:

* InfoLoss (seed 000 eq. 20; seed 003 eq. 12): :meth:`ClassStats.losses`, split into
  its histogram part (:meth:`ClassStats.hist_losses`, cheap, a lower bound) and the
  rest (:meth:`ClassStats.member_losses`);
* the sensitive entropy Ent (seed 003 eq. 14): :meth:`ClassStats.entropies`;
* the level entropy HEC (seed 000 eq. 2): :meth:`ClassStats.hec_with_level`;
* NCP (Xu et al. 2006): :meth:`ClassStats.ncp`, from each attribute's range.

Two accumulators merge by adding histograms and counts and concatenating members, as
Spark's partial aggregations combine before a shuffle. MAA-SLIE and GPKC (leftover
placement), MAA-SAE (the formed classes ``Q``), (K,L) clustering (its classes under
reassignment) and the repair step all use this one class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.attributes.kinds import ContinuousKind, DiscreteKind, Kind
from sparkanon.metrics.entropy import class_level_entropy, sensitive_entropy
from sparkanon.models import ClassSummaries


def _pair_ncp_table(kind: DiscreteKind) -> np.ndarray:
    """``kind.ncp`` of every ``(lo, hi)`` code pair, built once per kind object.

    Every :class:`ClassStats` (each block, each repair and placement) asks for it, and
    building it costs ``V^2 / 2`` calls (35 ms of a 62 ms MAA-SLIE block on Adult), so
    it is kept on the (frozen, immutable) kind itself.
    """
    table = kind.__dict__.get("_pair_ncp_table")
    if table is None:
        size = kind.n_bins
        table = np.zeros((size, size))
        for a in range(size):
            for b in range(a + 1, size):
                table[a, b] = table[b, a] = kind.ncp(np.array([a, b]))
        table.setflags(write=False)
        object.__setattr__(kind, "_pair_ncp_table", table)  # a cache, not state
    return table


class RangeNcp:
    """NCP of one attribute from a set's lowest and highest code, vectorised.

    Every kind here has an NCP that depends only on the set's extreme codes
    (:meth:`~sparkanon.attributes.kinds.Kind.ncp`); a discrete kind's NCP of every
    ``(lo, hi)`` pair is tabulated once, a continuous kind's is ``hi - lo``.
    """

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.table: np.ndarray | None = (
            _pair_ncp_table(kind) if isinstance(kind, DiscreteKind) else None
        )

    def of_range(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """NCP of sets whose lowest and highest codes are ``lo`` and ``hi``."""
        if self.table is not None:
            return self.table[np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)]
        if isinstance(self.kind, ContinuousKind):
            return np.clip(np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float), 0.0, 1.0)
        lo, hi = np.broadcast_arrays(np.asarray(lo), np.asarray(hi))
        return np.array([self.kind.ncp(np.array([a, b])) for a, b in zip(lo, hi, strict=True)])


class ClassStats:
    """Per-class statistics of a block's classes (see the module docstring).

    Args:
        block: the block whose kinds and sensitive domain the classes use.
        capacity: initial number of class slots (grown as needed).
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
            self.members[a][c] = np.concatenate(
                [self.members[a][c], np.asarray(codes[a], dtype=self.dtypes[a])]
            )
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
            self.members[a][c] = np.delete(own, hit)
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
        """``Ent(Gk ∪ X)`` (seed 003 eq. 14) for every class ``Gk`` of ``ids``."""
        counts = self.sens_counts[ids] + np.bincount(sens, minlength=self.n_values)[None, :]
        return sensitive_entropy(counts)

    def hec_with_level(self, ids: np.ndarray, level: int) -> np.ndarray:
        """HEC (seed 000 eq. 2) of every class of ``ids`` after adding a row of this level."""
        counts = self.level_counts[ids].copy()
        counts[:, level] += 1.0
        weights = self.block.weights
        return class_level_entropy(counts, weights, self.block.ctx.entropy_base)

    # -- NCP ----------------------------------------------------------------------------

    def ncp(self, ids: np.ndarray, row: Sequence[float] | None = None) -> np.ndarray:
        """NCP (weighted) of every class of ``ids``, with one row added when given."""
        total = np.zeros(len(ids))
        for a, (kind, ncp) in enumerate(zip(self.kinds, self._ncp, strict=True)):
            lo = np.array([self.members[a][c].min() for c in ids], dtype=self.dtypes[a])
            hi = np.array([self.members[a][c].max() for c in ids], dtype=self.dtypes[a])
            if row is not None:
                lo, hi = np.minimum(lo, row[a]), np.maximum(hi, row[a])
            total += kind.weight * ncp.of_range(lo, hi)
        return total

    def ncp_without(self, c: int, row: Sequence[float]) -> float:
        """NCP (weighted) of class ``c`` without one member equal to ``row``."""
        total = np.zeros(1)
        for a, (kind, ncp) in enumerate(zip(self.kinds, self._ncp, strict=True)):
            own = self.members[a][c]
            rest = np.delete(own, int(np.flatnonzero(own == row[a])[0]))
            total += kind.weight * ncp.of_range(rest.min(keepdims=True), rest.max(keepdims=True))
        return float(total[0])

    # -- models -------------------------------------------------------------------------

    def summaries(self, ids: np.ndarray) -> ClassSummaries:
        """The classes' :class:`~sparkanon.models.ClassSummaries`, for the privacy models."""
        counts = np.rint(self.sens_counts[ids]).astype(np.int64)
        return ClassSummaries(self.size[ids].copy(), counts, self.level_of)
