"""(K,L)-anonymity clustering (Chai and Feng 2015): sensitive values clustered first, then records.

After Chai and Feng, *Efficient (K,L)-anonymous privacy protection based on
clustering*, Computer Engineering 41(1), 2015 (Chai and Feng 2015). (K,L)-anonymity
(definition 5) asks every equivalence class for at least ``K`` rows and ``L``
distinct sensitive values: it is p-sensitive k-anonymity with ``p = L``
(``model: {name: p_sensitive, k: K, p: L}``; ``model.name: k`` is ``L = 1``).
The paper's equations were lost in transcription; every reading below is ours
and stands in ``docs/method.md`` too.

**Step 1, reference matrix J (definition 6).** For each sensitive value ``a``
present in the block and each quasi-identifier ``q``, ``J[a][q]`` is the
distribution of ``q`` among the rows holding ``a`` ("the probability with which
a quasi-identifier influences a sensitive value"): a normalised histogram of
the codes (discrete kinds) or of the blocking bins coarsened to
:data:`REFERENCE_BINS` equal-width bins (other kinds; 1,024 bins of a few
rows each would make every pair of values look maximally apart). J is computed
per block, from the block's rows: the algorithm stays a pure function of its
block and the block runner is unchanged. The distance ``DIS(a, b)`` between
two sensitive values (the paper's eq. 2) is the mean, weighted by the attribute
weights, over the quasi-identifiers of the total variation distance
``1/2 sum |J[a][q] - J[b][q]|`` between their distributions, in [0, 1].

**Step 2, improved k-means over the ``M`` present values (section 4.1).**
``G = ceil(M / L)`` clusters, threshold ``T = ceil(M / G)`` values per cluster.
The farthest pair of values are the first two centres; each centre takes the
unassigned values nearest to it until its cluster holds ``T`` values; each
further centre is the unassigned value farthest from the existing clusters
(largest distance to the nearest cluster centroid). Then, until no value moves
(at most ``algorithm.max_iterations`` rounds), centroids are the mean
distribution vectors of their clusters and values are reassigned to the nearest
centroid, still at most ``T`` per cluster (value-centroid pairs taken in order
of distance), so a cluster keeps about ``L`` values. Ties go to the lowest
index, so the clustering is deterministic.

**Step 3, (K,L) clustering of records (section 4.2).** The information loss of
a class is ``|G| NCP(G)`` (NCP of Xu et al. 2006 with the attribute weights;
its sum over classes is GCP's numerator), and "least information loss" means
least growth of it. Classes are formed in rounds, one class per sensitive-value
cluster per round (steps 2-6), while the free rows can still host a class
(``K`` rows, ``L`` values):

* the class of value cluster ``j`` starts from the free row holding a value of
  cluster ``j`` that is farthest (eq. 18 tuple distance) from the centroid of
  the free rows (outliers first, as in farthest-first anchoring), ties to the
  lowest row;
* it grows to ``K`` rows with the free rows of cluster ``j`` (step 4: "the
  records of the same cluster"), each time the row of least NCP growth, ties to
  the row nearest the class's first row, then to the lowest row; if cluster
  ``j`` has no free row left, with any free row;
* steps 8-10 (diversity): while it holds fewer than ``L`` values, the free row
  of least NCP growth among those whose value the class lacks joins it, and
  the member of a repeated value whose removal leaves the least NCP goes back
  to the pool (a swap), so the class keeps ``K`` rows. A free row with a missing
  value always exists because the free rows held ``L`` values when the class
  started.

Step 11: the rows left over (fewer than ``K``, or fewer than ``L`` values) join
the class whose information loss grows least, in row order (ties to the smaller
class, then the lower label), among the classes that still have fewer than
``2K - 1`` rows, or, once none has, among the smallest classes: the paper's
classes hold ``K`` to ``2K`` rows, and without that bound one class can absorb
hundreds of leftover rows that share a few sensitive values.

Steps 12-13 ("update the centroids until they no longer change"): generalized
classes have no centroid, so we read the loop as local reassignment: in row
order, a row moves to the class where the total information loss drops most,
if its class keeps ``K`` rows and ``L`` values and the receiving class stays
below ``2K`` rows (the paper's class sizes lie between ``K`` and ``2K``); rounds
repeat until no row moves, at most ``algorithm.max_iterations`` rounds.

A block that cannot host a class returns every row at ``-1``; otherwise every
row is placed (the first class of a block can always be formed). Rows of other
blocks (:meth:`KLCluster.place`) join, in row order, the class whose
information loss grows least.
**Ties.** NCP (growth) values are compared after ``np.round(x / EPS) * EPS``
(:data:`EPS`); distances to the anchor or to the free rows' centroid exactly. The
swap of steps 8-10 sends back the member of least NCP without it, then the one
farthest from the anchor, then the highest row.

Two implementations give the same labels: the numpy code below (the reference,
used for kinds the kernel does not pack and with ``SPARKANON_NO_JIT=1``) and the
compiled kernel of :mod:`sparkanon.algorithms.blocks._kl_kernel` (steps 2-13 after the
value clusters, and :meth:`KLCluster.place_into`), used when numba is installed.
Steps 1-2 (the reference matrix and the k-means over a block's few sensitive
values) are numpy in both.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from sparkanon.algorithms._base import BlockAlgorithm, Leftovers, compiled_kernel
from sparkanon.algorithms._block import Block
from sparkanon.algorithms._classes import ClassStats
from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.attributes.kinds import (
    Kind,
)
from sparkanon.attributes.ranges import RangeNcp
from sparkanon.models.base import Int

REFERENCE_BINS = 16
"""Distribution bins of a non-histogram quasi-identifier in the reference matrix."""
EPS = 1e-12
"""Loss changes smaller than this are ties (floating-point noise)."""


# ---------------------------------------------------------------------------
# Step 1: reference matrix and distances between sensitive values
# ---------------------------------------------------------------------------


def reference_profiles(
    kinds: tuple[Kind, ...] | list[Kind], codes: list[np.ndarray], value_index: np.ndarray, m: int
) -> list[np.ndarray]:
    """The reference matrix J: per quasi-identifier, one distribution per sensitive value.

    Args:
        kinds: the quasi-identifier kinds.
        codes: the rows' codes of each quasi-identifier.
        value_index: each row's sensitive value as an index ``0..m-1``.
        m: number of sensitive values (every index must hold a row).

    Returns:
        One ``m x bins`` matrix per quasi-identifier whose rows sum to 1.
    """
    profiles = []
    for kind, c in zip(kinds, codes, strict=True):
        if kind.discrete:
            bins, n_bins = np.asarray(c, dtype=np.int64), kind.n_bins
        else:
            n_bins = min(kind.n_bins, REFERENCE_BINS)
            bins = kind.bins(c) * n_bins // kind.n_bins
        hist = np.zeros((m, n_bins))
        np.add.at(hist, (value_index, bins), 1.0)
        totals = hist.sum(axis=1, keepdims=True)
        profiles.append(hist / np.where(totals > 0, totals, 1.0))
    return profiles


def profile_distances(
    left: list[np.ndarray], right: list[np.ndarray], weights: np.ndarray
) -> np.ndarray:
    """``DIS`` between every profile of ``left`` and every profile of ``right``.

    The weighted mean over quasi-identifiers of the total variation distance
    ``1/2 sum_b |p(b) - q(b)|`` between the two distributions, in [0, 1].

    Args:
        left: per quasi-identifier, an ``a x bins`` matrix of distributions.
        right: per quasi-identifier, a ``b x bins`` matrix of distributions.
        weights: the attribute weights.

    Returns:
        An ``a x b`` matrix of distances.
    """
    total = np.zeros((left[0].shape[0], right[0].shape[0]))
    for w, p, q in zip(weights, left, right, strict=True):
        for i in range(p.shape[0]):
            total[i] += w * 0.5 * np.abs(q - p[i]).sum(axis=1)
    return total / float(np.sum(weights))


def cluster_sensitive_values(
    profiles: list[np.ndarray], weights: np.ndarray, n_clusters: int, max_iterations: int
) -> np.ndarray:
    """Improved k-means of Chai and Feng 2015, section 4.1 over the sensitive values' profiles.

    Args:
        profiles: the reference matrix (:func:`reference_profiles`), ``m`` values.
        weights: the attribute weights.
        n_clusters: ``G``, at most ``m``.
        max_iterations: most rounds of centroid update and reassignment.

    Returns:
        The cluster of each value, ``0..G'-1`` in order of creation
        (``G' <= G`` only if the threshold left no value for the last centres).
    """
    m = profiles[0].shape[0]
    labels = np.full(m, -1, dtype=np.int64)
    if n_clusters <= 1 or m <= 1:
        return np.zeros(m, dtype=np.int64)
    cap = math.ceil(m / n_clusters)
    dist = profile_distances(profiles, profiles, weights)
    upper = np.triu(dist, k=1) - np.tril(np.ones((m, m)))  # only pairs a < b
    first, second = np.unravel_index(int(np.argmax(upper)), upper.shape)

    def fill(centre: int, cluster: int) -> None:
        labels[centre] = cluster
        for _ in range(cap - 1):
            free = np.flatnonzero(labels < 0)
            if free.size == 0:
                return
            labels[int(free[np.argmin(dist[centre, free])])] = cluster

    def centroids(n: int) -> list[np.ndarray]:
        return [
            np.stack([p[labels == c].mean(axis=0) for c in range(n)]) if n else p[:0]
            for p in profiles
        ]

    fill(int(first), 0)
    if (labels < 0).any():
        fill(int(second), 1)
    n = int(labels.max()) + 1
    while n < n_clusters and (labels < 0).any():
        free = np.flatnonzero(labels < 0)
        to_clusters = profile_distances([p[free] for p in profiles], centroids(n), weights)
        fill(int(free[np.argmax(to_clusters.min(axis=1))]), n)
        n += 1
    for _ in range(max_iterations):
        to_centroids = profile_distances(profiles, centroids(n), weights)
        pairs = np.argsort(to_centroids, axis=None, kind="stable")
        new = np.full(m, -1, dtype=np.int64)
        room = np.full(n, cap)
        for flat in pairs:
            v, c = divmod(int(flat), n)
            if new[v] < 0 and room[c] > 0:
                new[v] = c
                room[c] -= 1
        # A cluster emptied by the reassignment keeps its old members (no empty cluster).
        if len(np.unique(new)) < n or np.array_equal(new, labels):
            break
        labels = new
    return labels


# ---------------------------------------------------------------------------
# The classes under construction and reassignment: the shared accumulator + labels
# ---------------------------------------------------------------------------


class _KLClasses:
    """A block's classes as :class:`~sparkanon.algorithms._classes.ClassStats`, with row labels.

    The accumulator holds each class's size, sensitive counts and members (its NCP
    comes from each attribute's range); this keeps which block row is in which class
    and each class's current NCP, for the growth of ``|G| NCP(G)`` (the information
    loss of a class in Chai and Feng 2015's reading, see the module docstring).

    Args:
        block: the block whose rows are labelled.
        labels: class of each block row, ``-1`` for rows in no class.
        n_classes: number of classes.
    """

    def __init__(self, block: Block, labels: np.ndarray, n_classes: int) -> None:
        self.block = block
        self.labels = labels
        self.m = n_classes
        self.stats = ClassStats.from_labels(block, labels, n_classes)
        self.ids = np.arange(n_classes)
        self.ncp = self.stats.ncp(self.ids)

    @property
    def size(self) -> np.ndarray:
        """Rows per class."""
        return self.stats.size[: self.m]

    @property
    def counts(self) -> np.ndarray:
        """Rows per class and sensitive value."""
        return self.stats.sens_counts[: self.m]

    def row(self, rows: Block, i: int) -> list[np.ndarray]:
        """The codes of row ``i`` of ``rows``, one one-element array per attribute."""
        return [codes[i : i + 1] for codes in rows.codes]

    def ncp_without(self, c: int, i: int) -> float:
        """NCP of class ``c`` without block row ``i``."""
        return self.stats.ncp_without(c, [codes[i] for codes in self.block.codes])

    def loss_growth(self, row: list[float]) -> np.ndarray:
        """Growth of ``|G| NCP(G)`` of every class when a row with these codes joins it."""
        return (self.size + 1) * self.stats.ncp(self.ids, row) - self.size * self.ncp

    def best_class(self, row: list[float], allowed: np.ndarray | None = None) -> tuple[int, float]:
        """The class of least loss growth (ties: smaller class, then lower label)."""
        growth = self.loss_growth(row)
        if allowed is not None:
            growth = np.where(allowed, growth, np.inf)
        order = np.lexsort((np.arange(self.m), self.size, np.round(growth / EPS) * EPS))
        c = int(order[0])
        return c, float(growth[c])

    def add(self, c: int, rows: Block, i: int) -> None:
        """Add row ``i`` of ``rows`` to class ``c`` (``rows`` is the block, or another block)."""
        if rows is self.block:
            self.labels[i] = c
        self.stats.add_rows(c, self.row(rows, i), rows.sens[i : i + 1], rows.level[i : i + 1])
        self.ncp[c] = self.stats.ncp(np.array([c]))[0]

    def move(self, i: int, target: int) -> None:
        """Move block row ``i`` from its class to ``target``."""
        source = int(self.labels[i])
        block = self.block
        codes = [codes[i] for codes in block.codes]
        self.stats.remove_row(source, codes, int(block.sens[i]), int(block.level[i]))
        self.add(target, block, i)
        self.ncp[source] = self.stats.ncp(np.array([source]))[0]


# ---------------------------------------------------------------------------
# Step 3: the (K,L) clustering of records
# ---------------------------------------------------------------------------


class _Growing:
    """One class being formed: its members and per-attribute ranges."""

    def __init__(self, block: Block, attrs: list[RangeNcp], anchor: int) -> None:
        self.block = block
        self.attrs = attrs
        self.anchor = anchor
        self.members = [anchor]
        self.anchor_point = [codes[anchor] for codes in block.codes]

    def ncp_with_each(self, candidates: np.ndarray) -> np.ndarray:
        """NCP of the class after adding each candidate row."""
        m = np.asarray(self.members)
        total = np.zeros(len(candidates))
        for attr, codes in zip(self.attrs, self.block.codes, strict=True):
            own = codes[m]
            part = attr.of_range(
                np.minimum(own.min(), codes[candidates]), np.maximum(own.max(), codes[candidates])
            )
            total += attr.kind.weight * part
        return total

    def best(self, candidates: np.ndarray) -> int:
        """The candidate of least NCP growth, then nearest the first row, then lowest.

        Distances are computed for the candidates tied on NCP growth only (each row's
        distance is its own, so the choice is the same as ranking all).
        """
        ncp = np.round(self.ncp_with_each(candidates) / EPS) * EPS
        tied = candidates[ncp == ncp.min()]
        if tied.size == 1:
            return int(tied[0])
        near = self.block.distances_to_point(tied, self.anchor_point)
        return int(tied[np.lexsort((tied, near))[0]])

    def ncp_without_each(self) -> np.ndarray:
        """NCP of the class (of two or more members) without each of its members.

        Without member ``j`` an attribute's lowest code is the second lowest of the
        class if ``j`` holds the lowest, else the lowest (the highest alike); a kind's
        NCP depends only on those two codes (:class:`RangeNcp`).
        """
        m = np.asarray(self.members)
        total = np.zeros(len(m))
        for attr, codes in zip(self.attrs, self.block.codes, strict=True):
            own = codes[m]
            ranked = np.sort(own)
            lo = np.where(own == ranked[0], ranked[1], ranked[0])
            hi = np.where(own == ranked[-1], ranked[-2], ranked[-1])
            total += attr.kind.weight * attr.of_range(lo, hi)
        return total


def _compiled() -> ModuleType | None:
    """The compiled kernel module (:mod:`~sparkanon.algorithms.blocks._kl_kernel`), or ``None``."""
    return compiled_kernel("blocks._kl_kernel")


class KLClusterParams(AlgorithmParams):
    """(K,L) clustering's parameters.

    Attributes:
        max_iterations: most rounds of centroid updates (Chai and Feng 2015, steps 3-13 repeat
            "until the centroids no longer change") and of local reassignment.
    """

    name: Literal["kl_cluster"] = "kl_cluster"
    max_iterations: Annotated[Int, Field(ge=1)] = 10


class KLCluster(BlockAlgorithm):
    """(K,L)-anonymity clustering: cluster the sensitive values, then the records."""

    name = "kl_cluster"
    guarantees = frozenset({"p_sensitive", "k", "distinct_l"})
    Params = KLClusterParams

    def cluster(self, block: Block, rng: np.random.Generator) -> np.ndarray:
        """Cluster one block (steps 1-13 of Chai and Feng 2015; see the module docstring).

        Args:
            block: the block's rows, sorted by row id.
            rng: unused: every choice is deterministic given the rows.

        Returns:
            A class label per row; all ``-1`` when the block cannot host a class.
        """
        labels = np.full(block.n, -1, dtype=np.int64)
        if not block.can_host_class(np.arange(block.n)):
            return labels
        model = block.ctx.model
        k, ell = model.k, model.p
        attrs = [RangeNcp(kind) for kind in block.kinds]
        weights = np.array([kind.weight for kind in block.kinds])
        values, value_index = np.unique(block.sens, return_inverse=True)
        profiles = reference_profiles(block.kinds, block.codes, value_index, len(values))
        value_cluster = cluster_sensitive_values(
            profiles, weights, math.ceil(len(values) / ell), block.ctx.max_iterations
        )
        row_cluster = value_cluster[value_index]
        kernel = _compiled()
        if kernel is not None:
            compiled = kernel.cluster(block, row_cluster, int(value_cluster.max()) + 1, EPS)
            if compiled is not None:
                return compiled
        free = np.ones(block.n, dtype=bool)
        n_classes = 0
        stuck = False
        while not stuck and block.can_host_class(np.flatnonzero(free)):
            for j in range(int(value_cluster.max()) + 1):  # one round: a class per value cluster
                rows = np.flatnonzero(free)
                if not block.can_host_class(rows):
                    break
                pool = rows[row_cluster[rows] == j]
                if pool.size == 0:
                    continue
                members = self._form(block, attrs, rows, pool, free, k, ell)
                if members is None:  # cannot happen (see _form); stop forming classes
                    stuck = True
                    break
                labels[members] = n_classes
                n_classes += 1
        classes = _KLClasses(block, labels, n_classes)
        for i in np.flatnonzero(free):
            # Step 11, kept to the paper's class sizes where the data allows: the
            # classes still below 2K - 1 rows compete; once every class is full,
            # the smallest ones (else one class swallows hundreds of leftover
            # rows that share a few sensitive values).
            room = classes.size < 2 * k - 1
            if not room.any():
                room = classes.size == classes.size.min()
            c, _ = classes.best_class([codes[i] for codes in block.codes], room)
            classes.add(c, block, int(i))
        self._refine(classes, k, ell, block.ctx.max_iterations)
        return classes.labels

    def _form(
        self,
        block: Block,
        attrs: list[RangeNcp],
        rows: np.ndarray,
        pool: np.ndarray,
        free: np.ndarray,
        k: int,
        ell: int,
    ) -> list[int] | None:
        """Form one class from value cluster ``pool`` (steps 2-6 and 8-10).

        Returns:
            The class's rows (cleared in ``free``), or ``None`` with ``free``
            restored if no free row supplies a missing value. That cannot
            happen when the free rows could host a class: they held ``L``
            values, and a value the class lacks keeps all its rows free.
        """
        far = block.distances_to_point(pool, block.centroid_of(rows))
        anchor = int(pool[np.lexsort((pool, -far))[0]])
        grow = _Growing(block, attrs, anchor)
        free[anchor] = False
        while len(grow.members) < k:
            own = pool[free[pool]]
            candidates = own if own.size else np.flatnonzero(free)
            best = grow.best(candidates)
            grow.members.append(best)
            free[best] = False
        while len(np.unique(block.sens[grow.members])) < ell:
            rows_free = np.flatnonzero(free)
            missing = rows_free[~np.isin(block.sens[rows_free], block.sens[grow.members])]
            if missing.size == 0:
                free[grow.members] = True
                return None
            best = grow.best(missing)
            grow.members.append(best)
            free[best] = False
            sens = block.sens[np.asarray(grow.members)]
            _, inverse, counts = np.unique(sens, return_inverse=True, return_counts=True)
            repeated = np.flatnonzero(counts[inverse] >= 2)
            if len(grow.members) > k and repeated.size:
                after = np.round(grow.ncp_without_each()[repeated] / EPS) * EPS
                m = np.asarray(grow.members)[repeated]
                near = block.distances_to_point(m, grow.anchor_point)
                out = int(m[np.lexsort((-m, -near, after))[0]])
                grow.members.remove(out)
                free[out] = True
        return grow.members

    def _refine(self, classes: _KLClasses, k: int, ell: int, rounds: int) -> None:
        """Steps 12-13: move rows between classes while the total loss drops (see module)."""
        block = classes.block
        if classes.m < 2:
            return
        for _ in range(rounds):
            moved = False
            for i in range(block.n):
                source = int(classes.labels[i])
                value = int(block.sens[i])
                if classes.size[source] - 1 < k:
                    continue
                values_left = np.count_nonzero(classes.counts[source]) - (
                    classes.counts[source, value] == 1
                )
                if values_left < ell:
                    continue
                size = classes.size[source]
                shrink = (size - 1) * classes.ncp_without(source, i) - size * classes.ncp[source]
                allowed = classes.size + 1 <= 2 * k - 1
                allowed[source] = False
                if not allowed.any():
                    continue
                target, growth = classes.best_class([codes[i] for codes in block.codes], allowed)
                if shrink + growth < -1e-9:
                    classes.move(i, target)
                    moved = True
            if not moved:
                return

    def place_into(self, job: Leftovers) -> np.ndarray:
        """Rows of another block join, in row order, the class whose loss grows least."""
        block, labels, n_classes, extra, rng = job.parts()
        kernel = _compiled()
        if kernel is not None:
            compiled = kernel.place(block, labels, n_classes, extra, EPS)
            if compiled is not None:
                return compiled
        out = np.empty(extra.n, dtype=np.int64)
        classes = _KLClasses(block, np.asarray(labels, dtype=np.int64).copy(), n_classes)
        for i in range(extra.n):
            c, _ = classes.best_class([codes[i] for codes in extra.codes])
            classes.add(c, extra, i)
            out[i] = c
        return out
