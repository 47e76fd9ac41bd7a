"""The interface every per-block algorithm implements (pure numpy, no Spark).

An algorithm turns one block's rows into classes (:meth:`BlockAlgorithm.cluster`)
and can take rows from elsewhere into the classes it formed
(:meth:`BlockAlgorithm.place`, used by cross-block reconciliation). The block
runner (:mod:`sparkanon.algorithms`) sorts rows by row id and seeds the
generator from the job seed and the block id, so an algorithm only has to be
deterministic given its inputs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from sparkanon.algorithms._block import Block


class BlockAlgorithm(ABC):
    """A per-block clustering algorithm.

    Attributes:
        name: the name the config selects it by (``algorithm.name``).
        models: the privacy models (``model.name``) whose every class the
            algorithm guarantees; the config rejects any other pairing.
        cut_rule: how the Mondrian-style partitioning cuts blocks for it
            (:class:`sparkanon.algorithms.partition.CutPolicy`): ``spread`` for the
            micro-aggregation algorithms.
    """

    name: ClassVar[str] = ""
    models: ClassVar[frozenset[str]] = frozenset()
    cut_rule: ClassVar[str] = "spread"

    @abstractmethod
    def cluster(self, block: Block, rng: np.random.Generator) -> np.ndarray:
        """Cluster one block.

        Args:
            block: the block's rows, sorted by row id.
            rng: generator seeded from the job seed and the block id.

        Returns:
            A class label ``0..m-1`` per row, ``-1`` for rows the block
            could not place (they go to cross-block reconciliation). Every
            class must satisfy ``block.ctx.model``.
        """

    def place(
        self, block: Block, labels: np.ndarray, extra: Block, rng: np.random.Generator
    ) -> np.ndarray:
        """Place the rows of another block into this block's classes (reconciliation).

        Adding rows to a class that satisfies a monotonic model keeps it
        satisfied, so any choice is safe; each algorithm picks the class by its
        own rule (:meth:`place_into`).

        Args:
            block: the rows already clustered.
            labels: their labels ``0..m-1`` (``-1`` rows are ignored).
            extra: the rows to place.
            rng: seeded generator (for algorithms that place in random order).

        Returns:
            A class label per row of ``extra`` (all ``-1`` if ``block`` has no class).
        """
        labels = np.asarray(labels, dtype=np.int64)
        if extra.n == 0 or labels.size == 0 or labels.max() < 0:
            return np.full(extra.n, -1, dtype=np.int64)
        return self.place_into(block, labels, int(labels.max()) + 1, extra, rng)

    @abstractmethod
    def place_into(
        self,
        block: Block,
        labels: np.ndarray,
        n_classes: int,
        extra: Block,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """The algorithm's rule behind :meth:`place`, for a block with classes and rows to place.

        Returns:
            A class label in ``0..n_classes-1`` per row of ``extra``.
        """
