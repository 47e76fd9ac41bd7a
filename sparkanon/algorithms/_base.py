"""The interface every per-block algorithm implements (pure numpy, no Spark).

An algorithm turns one block's rows into classes (:meth:`BlockAlgorithm.cluster`)
and can take rows from elsewhere into the classes it formed
(:meth:`BlockAlgorithm.place`, used by cross-block reconciliation). The block
runner (:mod:`sparkanon.algorithms`) sorts rows by row id and seeds the
generator from the job seed and the block id, so an algorithm only has to be
deterministic given its inputs.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import ModuleType
from typing import ClassVar

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.models import HPKAnonymity, ModelSet


def compiled_kernel(module: str) -> ModuleType | None:
    """A compiled (numba) kernel module of this package, or ``None`` for the numpy path.

    ``None`` when numba is not installed or ``SPARKANON_NO_JIT=1`` (the module's
    ``enabled()``). Imported on first use, so jobs with other algorithms never load numba.

    Args:
        module: the module's name under :mod:`sparkanon.algorithms` (``blocks._slie_kernel``).
    """
    try:
        kernel = importlib.import_module(f"sparkanon.algorithms.{module}")
    except ImportError:  # numba not installed: the numpy path
        return None
    return kernel if kernel.enabled() else None


@dataclass(frozen=True)
class Leftovers:
    """Rows of another block to place into a block's classes (:meth:`BlockAlgorithm.place_into`).

    Attributes:
        block: the receiving block's rows.
        labels: their class labels ``0..n_classes-1`` (``-1``: no class).
        n_classes: the block's classes.
        extra: the rows to place.
        rng: the block's seeded generator (for rules that take rows in random order).
    """

    block: Block
    labels: np.ndarray
    n_classes: int
    extra: Block
    rng: np.random.Generator

    def parts(self) -> tuple[Block, np.ndarray, int, Block, np.random.Generator]:
        """``(block, labels, n_classes, extra, rng)``."""
        return self.block, self.labels, self.n_classes, self.extra, self.rng


class BlockAlgorithm(ABC):
    """A per-block clustering algorithm.

    Attributes:
        name: the name the config selects it by (``algorithm.name``).
        guarantees: the privacy models (``model.name``) whose every class the
            algorithm forms by construction, from the (H, p, k) target
            :func:`native_target` derives from the job's models. Any other
            monotonic model is enforced by the repair step
            (:mod:`sparkanon.algorithms.repair`).
        cut_rule: how the Mondrian-style partitioning cuts blocks for it
            (:class:`sparkanon.algorithms.cuts.CutPolicy`): ``spread`` for the
            micro-aggregation algorithms.
        Params: the algorithm's parameter model (``algorithm`` section of the config).
    """

    name: ClassVar[str] = ""
    guarantees: ClassVar[frozenset[str]] = frozenset()
    cut_rule: ClassVar[str] = "spread"
    Params: ClassVar[type[AlgorithmParams]] = AlgorithmParams

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
        # The repair step retires the labels of merged classes, so labels may have
        # gaps: an empty class (no centroid) must never receive rows. The algorithm
        # sees its live classes numbered 0..m-1; its choices are mapped back.
        live, dense = np.unique(labels[labels >= 0], return_inverse=True)
        compact = np.full(labels.size, -1, dtype=np.int64)
        compact[labels >= 0] = dense
        return live[self.place_into(Leftovers(block, compact, len(live), extra, rng))]

    @abstractmethod
    def place_into(self, job: Leftovers) -> np.ndarray:
        """The algorithm's rule behind :meth:`place`, for a block with classes and rows to place.

        Returns:
            A class label in ``0..job.n_classes-1`` per row of ``job.extra``.
        """


def native_target(models: ModelSet) -> HPKAnonymity:
    """The (H, p, k) target the clustering algorithms build classes for.

    ``k`` is the largest minimum class size of the models; ``p`` the most distinct
    sensitive values any model asks for (``p`` of p-sensitive and (H,p,k)
    anonymity, ``l`` of distinct l-diversity, ``ceil(l)`` of entropy and recursive
    l-diversity, which need at least that many values); ``h`` the levels of
    (H,p,k)-anonymity. Each model declares both
    (:meth:`~sparkanon.models.PrivacyModel.min_distinct_values`,
    :meth:`~sparkanon.models.PrivacyModel.min_distinct_levels`). Classes that satisfy
    the target satisfy k-anonymity, p-sensitive k-anonymity, (H,p,k)-anonymity and
    distinct l-diversity; entropy and recursive l-diversity and t-closeness are then
    enforced by the repair step.
    """
    k = models.min_class_size()
    p = max(model.min_distinct_values() for model in models)
    h = max(model.min_distinct_levels() for model in models)
    return HPKAnonymity(k=k, p=min(p, k), h=min(h, p, k))
