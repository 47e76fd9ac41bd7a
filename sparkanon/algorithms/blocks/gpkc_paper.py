"""GPKC as its authors define it: GreedyPKClustering with a generalization-based loss.

Campan, Truta and Cooper, "P-sensitive k-anonymity with generalization constraints"
(Transactions on Data Privacy 3, 2010), build on the greedy k-member clustering of Byun,
Kamra, Bertino and Li (2007). Where :mod:`sparkanon.algorithms.blocks.gpkc` (``gpkc``) grows
classes by Shi et al. 2024's InfoLoss (eq. 20, the very loss R_IL measures) and admits rows with a
look-ahead rule, this baseline (``gpkc_paper``) follows the paper's own choices. Our
readings, where the text we could work from (the paper's abstract and problem statement,
Byun et al.'s definitions; see ``docs/method.md``, "GPKC as published") leaves room:

* **Loss.** The information loss of a class ``cl`` is
  ``IL(cl) = |cl| * sum_i w_i * GL_i(cl)``, with ``GL_i`` the generalization of
  attribute ``i`` needed to cover the class (:class:`~sparkanon.attributes.ranges.RangeHeightLoss`):
  a numeric range's width over the table's range, the height of a categorical value's
  lowest common ancestor over the hierarchy's height, an ordinal range's rank span over
  ``V - 1``, a nominal 0 or 1, a semantic code's masked digits over its length. With the
  paper's weights of 1, ``w_i = 1`` as in the paper.
* **Distance of a row to a class** (the growth and the leftover rule): the increase of
  ``IL`` when the row joins; between two rows (the anchoring rule) ``IL`` of the pair.
* **Start rows.** The first class starts from the row farthest from the block's central row,
  each later one from the row farthest from the previous anchor (Byun's rule of the farthest
  record from the last anchor; the first anchor, random in Byun's paper, is made deterministic
  as for every algorithm here).
* **Growth, new sensitive values first.** While the class lacks sensitivity levels (``H``
  of (H,p,k); 1 for p-sensitive k-anonymity) it takes, among the rows that bring a new
  level, the one of least ``IL`` increase; then, while it lacks distinct sensitive values
  (``p``), among the rows that bring a new value; then among all rows. It closes at ``k``
  rows (by then it holds ``p`` values and ``H`` levels whenever rows bringing them remain).
  A class that finds no row bringing a missing value or level returns its rows to the pool
  and class formation ends.
* **Leftovers** (fewer rows than one more class needs) join, one at a time in seeded
  random order, the class whose ``IL`` grows least; the classes already satisfy the model,
  so they still do.

Verified like every algorithm: the job checks every published class against its models.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.algorithms._classes import ClassStats
from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.algorithms.blocks._greedy import GreedyAlgorithm
from sparkanon.attributes.ranges import RangeHeightLoss
from sparkanon.metrics.entropy import quantise


class GpkcPaperParams(AlgorithmParams):
    """``gpkc_paper``'s parameters (only the common ones)."""

    name: Literal["gpkc_paper"] = "gpkc_paper"


def _losses(block: Block) -> list[RangeHeightLoss]:
    """One generalization-loss table per attribute (cached on the kinds)."""
    return [RangeHeightLoss(kind) for kind in block.kinds]


def generalization_loss(
    block: Block, losses: list[RangeHeightLoss], lo: list[np.ndarray], hi: list[np.ndarray]
) -> np.ndarray:
    """``sum_i w_i GL_i`` of sets given by their lowest and highest code per attribute."""
    total = np.zeros(np.shape(lo[0]))
    for kind, loss, a_lo, a_hi in zip(block.kinds, losses, lo, hi, strict=True):
        total = total + kind.weight * loss.of_range(a_lo, a_hi)
    return total


class GpkcPaper(GreedyAlgorithm):
    """GreedyPKClustering (Campan, Truta, Cooper 2010): generalization loss, new values first."""

    name = "gpkc_paper"
    guarantees = frozenset({"hpk", "p_sensitive", "k", "distinct_l"})
    Params = GpkcPaperParams

    def anchor_distances(self, block: Block, rows: np.ndarray, reference: int) -> np.ndarray:
        """``IL`` of the pair ``{row, reference}``: twice its generalization loss."""
        losses = _losses(block)
        lo = [np.minimum(c[rows], c[reference]) for c in block.codes]
        hi = [np.maximum(c[rows], c[reference]) for c in block.codes]
        return 2.0 * generalization_loss(block, losses, lo, hi)

    def grow(self, block: Block, members: list[int], free: np.ndarray) -> bool:
        """Add rows bringing missing levels, then missing values, then any, by least ``IL`` rise."""
        model = block.ctx.model
        losses = _losses(block)
        lo = [c[members].min(keepdims=True) for c in block.codes]
        hi = [c[members].max(keepdims=True) for c in block.codes]
        values = set(block.sens[members].tolist())
        levels = set(block.level[members].tolist())
        while len(members) < model.k:
            rows = np.flatnonzero(free)
            if len(levels) < model.h:
                rows = rows[~np.isin(block.level[rows], list(levels))]
            elif len(values) < model.p:
                rows = rows[~np.isin(block.sens[rows], list(values))]
            if rows.size == 0:
                return False
            size = len(members)
            before = size * generalization_loss(block, losses, lo, hi)[0]
            new_lo = [np.minimum(a_lo, c[rows]) for a_lo, c in zip(lo, block.codes, strict=True)]
            new_hi = [np.maximum(a_hi, c[rows]) for a_hi, c in zip(hi, block.codes, strict=True)]
            after = (size + 1) * generalization_loss(block, losses, new_lo, new_hi)
            j = int(np.argmin(quantise(after - before)))
            best = int(rows[j])
            members.append(best)
            free[best] = False
            lo = [a[j : j + 1] for a in new_lo]
            hi = [a[j : j + 1] for a in new_hi]
            values.add(int(block.sens[best]))
            levels.add(int(block.level[best]))
        return True

    def choose_class(
        self, classes: ClassStats, codes: list[np.ndarray], level: int
    ) -> tuple[int, float]:
        """The class whose ``IL = |cl| * GL`` grows least when the row joins."""
        block = classes.block
        losses = _losses(block)
        ids = np.arange(classes.m)
        lo = [classes.lo[a][ids] for a in range(len(block.kinds))]
        hi = [classes.hi[a][ids] for a in range(len(block.kinds))]
        size = classes.size[ids].astype(float)
        before = size * generalization_loss(block, losses, lo, hi)
        grown_lo = [np.minimum(a, c[0]) for a, c in zip(lo, codes, strict=True)]
        grown_hi = [np.maximum(a, c[0]) for a, c in zip(hi, codes, strict=True)]
        after = (size + 1) * generalization_loss(block, losses, grown_lo, grown_hi)
        rise = np.where(classes.alive[ids], after - before, np.inf)
        c = int(np.argmin(quantise(rise)))
        return c, float(after[c])
