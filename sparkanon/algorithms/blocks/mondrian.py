"""Mondrian multidimensional partitioning (LeFevre, DeWitt, Ramakrishnan, ICDE 2006).

Mondrian cuts the data, recursively, into boxes: at each node the quasi-identifier of
widest normalised range is cut near its median, and a cut is allowed only if both sides
satisfy every model of the job (any monotonic model is a stopping rule: textbook
section 20.3.1.3, exercises 4, 10, 13). The leaves are the equivalence classes, and
the publication is generalized (ranges, taxonomy nodes): ``output.publish: generalized``.

Distributed, it is one tree: the partitioning (:mod:`sparkanon.algorithms.cuts`,
``cut_rule = "range"``) cuts the top on the cluster and inside each task down to
blocks of ``max_block_rows``, and this algorithm finishes each block with the same
decision function. In *strict* mode the result is therefore the tree a single machine
would grow on the whole table (``tests/algorithms/blocks/test_mondrian.py`` checks it).

* **strict** (LeFevre's strict multidimensional partitioning): rows go left when their
  bin is at most the cut; rows of equal value never split. The cut is the allowed one
  closest to the median whose both sides satisfy the models (:func:`decide`).
* **relaxed**: rows sorted by (bin, row id) are split by position: the position closest
  to half the rows whose both sides satisfy the models; rows with the median value may
  go to either side, so the sides' ranges can share that value. The blocks above
  ``max_block_rows`` are still cut strictly on the cluster (a relaxed cut needs the rows'
  order, not a histogram): a relaxed run equals single-machine relaxed Mondrian when
  ``max_block_rows`` covers the table and differs from it only in the strict cuts above
  that size otherwise.

Categorical attributes are cut between the child subtrees of the node's lowest common
ancestor (a binary split among the children); continuous attributes on a grid of
:data:`~sparkanon.algorithms.cuts.FINE_BINS` bins over the input's range.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from sparkanon.algorithms._base import BlockAlgorithm, Leftovers
from sparkanon.algorithms._block import Block
from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.algorithms.cuts import (
    FINE_BINS,
    CutPolicy,
    ModelTest,
    bins_matrix,
    normalized_range,
    plan_local,
)
from sparkanon.models import MODELS


class MondrianParams(AlgorithmParams):
    """Mondrian's parameters.

    Attributes:
        mode: ``strict`` (rows of equal value stay together) or ``relaxed`` (the
            median value's rows may be split to balance the sides).
    """

    name: Literal["mondrian"] = "mondrian"
    mode: Literal["strict", "relaxed"] = "strict"


class Mondrian(BlockAlgorithm):
    """Top-down median cuts on the attribute of widest normalised range; leaves are classes."""

    name = "mondrian"
    guarantees = frozenset(MODELS)
    cut_rule = "range"
    Params = MondrianParams

    def cluster(self, block: Block, rng: np.random.Generator) -> np.ndarray:
        """Partition the block's rows; each leaf is a class.

        Args:
            block: the block's rows, sorted by row id.
            rng: unused (Mondrian is deterministic given its rows).

        Returns:
            A class label ``0..m-1`` per row; all ``-1`` when the block itself fails
            the models.
        """
        feasible = self.feasible(block)
        sens = block.sens
        if not bool(feasible(np.bincount(sens, minlength=self.n_values(block))[None, :])[0]):
            return np.full(block.n, -1, dtype=np.int64)
        bins = bins_matrix(block.kinds, block.codes, FINE_BINS)
        k = block.ctx.all_models.min_class_size()
        if block.ctx.mondrian_mode == "relaxed":
            leaf = self._relaxed(block, bins, feasible, k)
        else:
            policy = CutPolicy("range", min_side=k, stop_rows=0)
            leaf, _ = plan_local(block.kinds, bins, sens, self.n_values(block), policy, feasible)
        _, labels = np.unique(leaf, return_inverse=True)
        return labels.astype(np.int64)

    @staticmethod
    def n_values(block: Block) -> int:
        """The sensitive domain size."""
        return len(block.ctx.schema.sensitive.values)

    @staticmethod
    def feasible(block: Block):  # noqa: ANN205 - a Feasible callable
        """The job's models as a test on candidate classes' sensitive counts."""
        return ModelTest(block.ctx.all_models, block.ctx.schema.sensitive.declared_level_of)

    def _relaxed(self, block: Block, bins: np.ndarray, feasible, k: int) -> np.ndarray:  # noqa: ANN001
        """Relaxed partitioning: split each node by position in (bin, row) order."""
        n_values = self.n_values(block)
        leaf = np.ones(block.n, dtype=np.int64)
        stack = [(1, np.arange(block.n))]
        while stack:
            node, idx = stack.pop()
            cut = self._relaxed_cut(block, bins[:, idx], block.sens[idx], n_values, feasible, k)
            if cut is None:
                continue
            attr, position = cut
            order = np.lexsort((idx, bins[attr, idx]))
            left, right = idx[order[:position]], idx[order[position:]]
            leaf[left], leaf[right] = 2 * node, 2 * node + 1
            stack += [(2 * node, left), (2 * node + 1, right)]
        return leaf

    @staticmethod
    def _relaxed_cut(
        block: Block,
        bins: np.ndarray,
        sens: np.ndarray,
        n_values: int,
        feasible,
        k: int,  # noqa: ANN001
    ) -> tuple[int, int] | None:
        """The attribute and the split position (rows left) of one node, or ``None``."""
        n = bins.shape[1]
        if n < 2 * k:
            return None
        ranked = []
        for a, kind in enumerate(block.kinds):
            lo, hi = int(bins[a].min()), int(bins[a].max())
            width = normalized_range(kind, lo, hi, FINE_BINS)
            if width > 0:
                ranked.append((-width, a))
        positions = np.arange(k, n - k + 1)
        if positions.size == 0:
            return None
        by_distance = positions[np.lexsort((positions, np.abs(positions - n / 2.0)))]
        for _, a in sorted(ranked):
            order = np.lexsort((np.arange(n), bins[a]))
            onehot = np.zeros((n, n_values), dtype=np.int64)
            onehot[np.arange(n), sens[order]] = 1
            cum = np.cumsum(onehot, axis=0)
            left = cum[by_distance - 1]
            right = cum[-1][None, :] - left
            ok = feasible(left) & feasible(right)
            if ok.any():
                return a, int(by_distance[int(np.argmax(ok))])
        return None

    def place_into(self, job: Leftovers) -> np.ndarray:
        """Rows of another block join the class whose centroid is nearest (eq. 18 distance)."""
        block, labels, n_classes, extra, rng = job.parts()
        centroids = [block.centroid_of(np.flatnonzero(labels == c)) for c in range(n_classes)]
        dist = np.zeros((extra.n, n_classes))
        for c, centre in enumerate(centroids):
            dist[:, c] = extra.distances_to_point(np.arange(extra.n), centre)
        return np.argmin(dist, axis=1).astype(np.int64)
