"""The skeleton both greedy algorithms share: form classes, then place leftovers.

:class:`GreedyAlgorithm` fixes the order of work on one block (form classes
from farthest start rows, then place the remaining rows one at a time, in a seeded
random order, into the best existing class) and leaves to each algorithm how a
class grows and what "best" means.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from sparkanon.algorithms._base import BlockAlgorithm, Leftovers
from sparkanon.algorithms._block import Block
from sparkanon.algorithms._classes import ClassStats
from sparkanon.metrics.entropy import quantise


class GreedyAlgorithm(BlockAlgorithm):
    """A greedy per-block clustering algorithm with a leftover-placement rule."""

    @abstractmethod
    def grow(self, block: Block, members: list[int], free: np.ndarray) -> bool:
        """Grow a class started from ``members[0]`` to ``k`` rows.

        Adds row indices to ``members`` and clears them in ``free``.

        Returns:
            ``False`` when no admissible row is left (the break rule): the
            caller returns the class's rows to the pool and stops forming classes.
        """

    def anchor_distances(self, block: Block, rows: np.ndarray, reference: int) -> np.ndarray:
        """How far each of ``rows`` lies from the reference row, to pick the next anchor.

        The tuple distance (eq. 18) by default.
        """
        return block.distances_to_row(rows, reference)

    def form_classes(self, block: Block) -> tuple[np.ndarray, int]:
        """Form classes from farthest anchors while the pool can host one.

        The first reference point is the block's central row; each class
        starts from the free row farthest from the reference and becomes the
        next reference (Shi et al. 2024, steps 4-7; the GPKC anchoring rule too). Distances
        are compared on the :func:`~sparkanon.metrics.entropy.quantise` grid; ties
        go to the lowest row position.

        Returns:
            ``(labels, n_classes)``: a class label per row, ``-1`` for rows
            left over, and the number of classes formed.
        """
        labels = np.full(block.n, -1, dtype=np.int64)
        free = np.ones(block.n, dtype=bool)
        n_classes = 0
        if not block.can_host_class(np.arange(block.n)):
            return labels, 0
        reference = block.central_row(np.arange(block.n))
        while block.can_host_class(np.flatnonzero(free)):
            rows = np.flatnonzero(free)
            start = int(rows[np.argmax(quantise(self.anchor_distances(block, rows, reference)))])
            reference = start
            members = [start]
            free[start] = False
            if not self.grow(block, members, free):
                free[members] = True
                break
            labels[members] = n_classes
            n_classes += 1
        return labels, n_classes

    @abstractmethod
    def choose_class(
        self, classes: ClassStats, codes: list[np.ndarray], level: int
    ) -> tuple[int, float]:
        """Pick the class a leftover row joins.

        Args:
            classes: the block's classes (:attr:`ClassStats.loss` holds their InfoLoss).
            codes: the row's code of each attribute, as one-element arrays.
            level: the row's sensitivity level.

        Returns:
            ``(class index, the class's InfoLoss after adding the row)``.
        """

    def cluster_compiled(self, block: Block, rng: np.random.Generator) -> np.ndarray | None:
        """The labels of :meth:`cluster` from a compiled kernel, or ``None`` for numpy.

        An algorithm with a compiled kernel that gives the numpy path's labels overrides
        this; ``None`` (the default, or a kernel that does not apply) leaves ``rng``
        untouched and :meth:`cluster` runs the numpy methods.
        """
        return None

    def place_compiled(self, job: Leftovers) -> np.ndarray | None:
        """The result of :meth:`place_into` from a compiled kernel, or ``None`` for numpy."""
        return None

    def cluster(self, block: Block, rng: np.random.Generator) -> np.ndarray:
        """Form classes, then place the leftovers into them (or leave them at ``-1``).

        A compiled kernel when :meth:`cluster_compiled` gives labels, else numpy.

        Args:
            block: the block's rows.
            rng: seeded generator for the order in which leftovers are placed.

        Returns:
            A class label per row; ``-1`` only when the block formed no class.
        """
        compiled = self.cluster_compiled(block, rng)
        if compiled is not None:
            return compiled
        labels, n_classes = self.form_classes(block)
        leftovers = np.flatnonzero(labels < 0)
        if n_classes == 0 or leftovers.size == 0:
            return labels
        classes = ClassStats.from_labels(block, labels, n_classes)
        order = rng.permutation(leftovers)
        labels[order] = self._place(classes, block, order)
        return labels

    def place_into(self, job: Leftovers) -> np.ndarray:
        """Rows of another block, in seeded random order, join the class ``choose_class`` picks.

        A compiled kernel when :meth:`place_compiled` gives labels, else numpy.
        """
        compiled = self.place_compiled(job)
        if compiled is not None:
            return compiled
        block, labels, n_classes, extra, rng = job.parts()
        out = np.empty(extra.n, dtype=np.int64)
        classes = ClassStats.from_labels(block, labels, n_classes)
        order = rng.permutation(extra.n)
        out[order] = self._place(classes, extra, order)
        return out

    def _place(self, classes: ClassStats, rows: Block, order: np.ndarray) -> np.ndarray:
        """Each row of ``order`` (indices into ``rows``) joins the class ``choose_class`` picks."""
        chosen = np.empty(len(order), dtype=np.int64)
        for j, i in enumerate(order):
            one = slice(int(i), int(i) + 1)
            codes = [c[one] for c in rows.codes]
            c, new_loss = self.choose_class(classes, codes, int(rows.level[i]))
            classes.add_rows(c, codes, rows.sens[one], rows.level[one])
            classes.loss[c] = new_loss
            chosen[j] = c
        return chosen
