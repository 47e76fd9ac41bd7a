"""GPKC: greedy p-sensitive k-anonymity clustering, the baseline of Shi et al. 2024.

After Campan, Truta et al., "A clustering approach for achieving data privacy"
(GreedyPKClustering), on the same distances and publishing as MAA-SLIE:

* the first class starts from the row farthest from the block's central row;
  each later class starts from the row farthest from the previous class's anchor;
* a class grows by the row that least increases its InfoLoss (eq. 20) among
  the rows that keep it able to reach ``p`` distinct sensitive values and ``H``
  levels within ``k`` rows: after adding the row, the free slots
  ``k - |G|`` must cover both the missing values and the missing levels
  (each row adds at most one of each);
* a class closes at ``k`` rows; if no row is admissible its rows return to the
  pool and class formation ends;
* classes are formed while the pool can host one (``k`` rows, ``p`` values,
  ``H`` levels); the remaining rows, in seeded random order, join the class
  whose InfoLoss grows least.

With ``H = 1`` this is the (p, k) variant the paper compares against.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.algorithms._classes import ClassStats
from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.algorithms.blocks._greedy import GreedyAlgorithm


class GpkcParams(AlgorithmParams):
    """GPKC's parameters (only the common ones)."""

    name: Literal["gpkc"] = "gpkc"


class Gpkc(GreedyAlgorithm):
    """Greedy clustering that minimises information loss under diversity constraints."""

    name = "gpkc"
    guarantees = frozenset({"hpk", "p_sensitive", "k", "distinct_l"})
    Params = GpkcParams

    def grow(self, block: Block, members: list[int], free: np.ndarray) -> bool:
        """Add the admissible row of least InfoLoss growth until the class has ``k`` rows."""
        model = block.ctx.model
        while len(members) < model.k:
            rows = np.flatnonzero(free)
            m = np.asarray(members)
            slots = model.k - (len(members) + 1)
            values = len(np.unique(block.sens[m])) + ~np.isin(block.sens[rows], block.sens[m])
            levels = len(np.unique(block.level[m])) + ~np.isin(block.level[rows], block.level[m])
            candidates = rows[(model.p - values <= slots) & (model.h - levels <= slots)]
            if candidates.size == 0:
                return False
            best = int(candidates[np.argmin(block.losses_with_each(m, candidates))])
            members.append(best)
            free[best] = False
        return True

    def choose_class(
        self, classes: ClassStats, codes: list[np.ndarray], level: int
    ) -> tuple[int, float]:
        """The class whose InfoLoss grows least when the row joins."""
        losses = classes.losses(np.arange(classes.m), codes)
        c = int(np.argmin(losses - classes.loss[: classes.m]))
        return c, float(losses[c])
