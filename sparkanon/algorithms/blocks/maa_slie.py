"""MAA-SLIE: micro-aggregation under (H,p,k)-anonymity (Shi et al. 2024, Algorithm 1).

Steps as implemented (numbers are the paper's):

* 2-3: a block without ``k`` rows, ``p`` distinct sensitive values and ``H``
  levels forms no class (its rows go to cross-block reconciliation).
* 4: the central tuple (closest to the block's centroid) is the first
  reference point. The paper writes ``D = D - t_center``; taken literally that
  drops a row from the publication, so the central tuple stays in ``D`` and is
  placed like any other row.
* 5: classes are formed while ``D`` holds at least ``k`` rows, ``p`` distinct
  sensitive values and (our addition, needed for the model) ``H`` levels.
* 6-7: the row farthest from the reference starts a class and becomes the new
  reference.
* 9-15 (diversity loop): while the class has fewer than ``p`` distinct values,
  add the admissible row that maximises PSI (eq. 21) of the grown class. Step
  13 as written requires ``(G + t)[SL] >= H``, which no single row can satisfy
  when ``H > 2`` (``G`` starts with one row). We read it as: while ``G`` has
  fewer than ``H`` levels only rows that add a new level are admissible;
  afterwards any row whose sensitive value is new to ``G``.
* 10-12 and 16-17 (break rule): if no row is admissible, the class's rows
  return to ``D`` and class formation ends (the paper's outer loop would
  otherwise pick the same anchor again forever).
* 18-19: fill the class to ``k`` rows with the row maximising PSI.
* 23-28: the remaining rows, in seeded random order, join the class whose PSI
  after the addition is largest.
* 29: the published centroids are computed after reconciliation by the
  pipeline, from each class's final rows.

PSI with zero InfoLoss is +inf (see :func:`sparkanon.metrics.entropy.privacy_safety_index`).

Every decision (central row, farthest row, row or class of largest PSI) compares
scores on the grid of :func:`sparkanon.metrics.entropy.quantise` and gives ties to
the lowest row position (row-id order) or class id.

Two implementations give the same labels: the numpy methods below (the reference,
used for any kind the kernel does not support) and the compiled kernel of
:mod:`sparkanon.algorithms.blocks._slie_kernel`, which :meth:`MaaSlie.cluster` and
:meth:`MaaSlie.place_into` use when numba is installed, the schema's kinds are
supported and ``SPARKANON_NO_JIT`` is not ``1``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Literal

import numpy as np
from pydantic import field_validator

from sparkanon.algorithms._base import Leftovers, compiled_kernel
from sparkanon.algorithms._block import Block
from sparkanon.algorithms._classes import ClassStats
from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.algorithms.blocks._greedy import GreedyAlgorithm
from sparkanon.metrics.entropy import best_by_psi
from sparkanon.models.base import Float


class MaaSlieParams(AlgorithmParams):
    """MAA-SLIE's parameters.

    Attributes:
        psi_weights: ``(w1, w2)`` of the privacy safety index, eq. 21: two
            non-negative weights with ``w1 + w2 = 1``.
    """

    name: Literal["maa_slie"] = "maa_slie"
    psi_weights: tuple[Float, Float] = (0.5, 0.5)

    @field_validator("psi_weights")
    @classmethod
    def _convex(cls, weights: tuple[float, float]) -> tuple[float, float]:
        w1, w2 = weights
        if w1 < 0 or w2 < 0 or abs(w1 + w2 - 1.0) > 1e-9:
            raise ValueError(
                f"{list(weights)} must be two non-negative weights with w1 + w2 = 1 (eq. 21)"
            )
        return weights


def _compiled() -> ModuleType | None:
    """The compiled kernel module (:mod:`._slie_kernel`), or ``None``."""
    return compiled_kernel("blocks._slie_kernel")


class MaaSlie(GreedyAlgorithm):
    """Greedy clustering that maximises the privacy safety index (Shi et al. 2024)."""

    name = "maa_slie"
    guarantees = frozenset({"hpk", "p_sensitive", "k", "distinct_l"})
    Params = MaaSlieParams

    def cluster_compiled(self, block: Block, rng: np.random.Generator) -> np.ndarray | None:
        """Steps 2-28 by the compiled kernel, ``None`` when it does not apply (numpy then)."""
        kernel = _compiled()
        return None if kernel is None else kernel.cluster(block, rng)

    def place_compiled(self, job: Leftovers) -> np.ndarray | None:
        """Steps 23-28 for rows of another block by the compiled kernel, when it applies."""
        kernel = _compiled()
        return None if kernel is None else kernel.place(*job.parts())

    def grow(self, block: Block, members: list[int], free: np.ndarray) -> bool:
        """Steps 8-20: the diversity loop, then filling to ``k`` by largest PSI."""
        model = block.ctx.model
        w1, w2 = block.ctx.psi_weights
        while len(members) < model.k:
            while len(np.unique(block.sens[members])) < model.p:
                candidates = self._admissible(block, np.asarray(members), free)
                if candidates.size == 0:
                    return False
                best = self._best(block, np.asarray(members), candidates, w1, w2)
                members.append(best)
                free[best] = False
            if len(members) >= model.k:
                break
            best = self._best(block, np.asarray(members), np.flatnonzero(free), w1, w2)
            members.append(best)
            free[best] = False
        return True

    @staticmethod
    def _admissible(block: Block, members: np.ndarray, free: np.ndarray) -> np.ndarray:
        rows = np.flatnonzero(free)
        ok = ~np.isin(block.sens[rows], block.sens[members])
        if len(np.unique(block.level[members])) < block.ctx.model.h:
            ok &= ~np.isin(block.level[rows], block.level[members])
        return rows[ok]

    @staticmethod
    def _best(
        block: Block, members: np.ndarray, candidates: np.ndarray, w1: float, w2: float
    ) -> int:
        losses = block.losses_with_each(members, candidates)
        hec = block.hec_with_each(members, candidates)
        return int(candidates[best_by_psi(hec, losses, w1, w2)])

    def choose_class(
        self, classes: ClassStats, codes: list[np.ndarray], level: int
    ) -> tuple[int, float]:
        """Steps 23-28: the class whose PSI after adding the row is largest."""
        w1, w2 = classes.block.ctx.psi_weights
        ids = np.arange(classes.m)
        losses = classes.losses(ids, codes)
        c = best_by_psi(classes.hec_with_level(ids, level), losses, w1, w2)
        return c, float(losses[c])
