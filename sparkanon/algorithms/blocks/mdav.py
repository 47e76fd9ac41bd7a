"""MDAV: fixed-size micro-aggregation (maximum distance to average vector).

After Domingo-Ferrer and Mateo-Sanz, "Practical data-oriented microaggregation
for statistical disclosure control", IEEE TKDE 14(1), 2002, on the spine's
heterogeneous distances: the tuple distance is each kind's ``distance_to``
weighted by ``kind.weight`` (eq. 18, as :meth:`Block.distances_to_row`), and
the centroid of a set of rows is the synthetic record of every attribute's
``kind.centroid`` code (mean, center mean frequency, medoid, mode).

Per block, with ``R`` the rows not yet in a class:

* while ``|R| >= 3k``: ``c`` the centroid of ``R``; ``r`` the row of ``R``
  farthest from ``c``; a class of ``r`` and its ``k - 1`` nearest rows of
  ``R``; ``s`` the remaining row farthest from ``r``; a class of ``s`` and its
  ``k - 1`` nearest remaining rows;
* if ``2k <= |R| < 3k``: ``c``, ``r`` and ``r``'s class as above; the other
  ``k .. 2k-1`` rows form the last class;
* if ``k <= |R| < 2k``: ``R`` forms one class;
* a block with fewer than ``k`` rows forms no class (all ``-1``; the pipeline
  reconciles its rows across blocks).

Every class therefore has between ``k`` and ``2k - 1`` rows. MDAV guarantees
row counts only, so it is offered for k-anonymity alone. Ties between equal
distances go to the lowest row index (rows are sorted by row id), so results
are deterministic and the seeded generator is not used.

:meth:`Mdav.cluster` runs the compiled kernel of :mod:`sparkanon.algorithms.blocks._mdav_kernel`
(one call for the whole block, the same labels) when numba is installed and the schema's
kinds are supported; otherwise, and with ``SPARKANON_NO_JIT=1``, the numpy path
:meth:`Mdav.cluster_reference`, which states the steps above one to one and is the
reference the kernel is tested against.
"""

from __future__ import annotations

from types import ModuleType
from typing import Literal

import numpy as np

from sparkanon.algorithms._base import BlockAlgorithm, Leftovers, compiled_kernel
from sparkanon.algorithms._block import Block
from sparkanon.algorithms._params import AlgorithmParams


def smallest(distances: np.ndarray, m: int) -> np.ndarray:
    """Positions of the ``m`` smallest distances, ties to the lowest position.

    Linear time (``np.partition``), no sort of the whole array.

    Args:
        distances: one distance per candidate.
        m: how many to take.

    Returns:
        The chosen positions, in no particular order.
    """
    if m >= len(distances):
        return np.arange(len(distances))
    if m <= 0:
        return np.empty(0, dtype=np.int64)
    threshold = np.partition(distances, m - 1)[m - 1]
    below = np.flatnonzero(distances < threshold)
    tied = np.flatnonzero(distances == threshold)[: m - len(below)]
    return np.concatenate([below, tied])


class MdavParams(AlgorithmParams):
    """MDAV's parameters (only the common ones; ``k`` comes from the model)."""

    name: Literal["mdav"] = "mdav"


class Mdav(BlockAlgorithm):
    """Fixed-size micro-aggregation: classes of ``k`` rows around extreme rows."""

    name = "mdav"
    guarantees = frozenset({"k"})
    Params = MdavParams

    def _kernel(self) -> ModuleType | None:
        """The compiled kernel (:mod:`~sparkanon.algorithms.blocks._mdav_kernel`) when it applies.

        ``None`` with ``SPARKANON_NO_JIT=1``, without numba, or for a subclass that
        overrides a step of the numpy path (the kernel would not follow it).
        """
        own = type(self)
        if own.cluster_reference is not Mdav.cluster_reference:
            return None
        if own._class_around is not Mdav._class_around:
            return None
        return compiled_kernel("blocks._mdav_kernel")

    @staticmethod
    def _class_around(block: Block, rows: np.ndarray, anchor: int, k: int) -> np.ndarray:
        """``anchor`` and its ``k - 1`` nearest rows among ``rows`` (ties to the lowest index)."""
        d = block.distances_to_row(rows, anchor)
        d[rows == anchor] = -1.0  # the anchor is always in its own class, even among duplicates
        return rows[smallest(d, k)]

    def cluster(self, block: Block, rng: np.random.Generator) -> np.ndarray:
        """Partition the block into classes of ``k`` to ``2k - 1`` rows (module docstring).

        The compiled kernel when it applies, else :meth:`cluster_reference` (same labels).

        Args:
            block: the block's rows, sorted by row id.
            rng: unused: MDAV is deterministic (ties go to the lowest row index).

        Returns:
            A class label ``0..m-1`` per row, or all ``-1`` when the block has
            fewer than ``k`` rows.
        """
        kernel = self._kernel()
        if kernel is not None:
            labels = kernel.cluster(block, block.ctx.model.k)
            if labels is not None:
                return labels
        return self.cluster_reference(block)

    def cluster_reference(self, block: Block) -> np.ndarray:
        """The numpy path of :meth:`cluster`: the module docstring's steps, one numpy pass each.

        Args:
            block: the block's rows, sorted by row id.

        Returns:
            A class label ``0..m-1`` per row, or all ``-1`` when the block has
            fewer than ``k`` rows.
        """
        k = block.ctx.model.k
        labels = np.full(block.n, -1, dtype=np.int64)
        if block.n < k:
            return labels
        free = np.ones(block.n, dtype=bool)
        n_classes = 0

        def close(members: np.ndarray) -> None:
            nonlocal n_classes
            labels[members] = n_classes
            free[members] = False
            n_classes += 1

        while True:
            rows = np.flatnonzero(free)
            if len(rows) < 2 * k:
                close(rows)
                break
            centre = block.centroid_of(rows)
            r = int(rows[np.argmax(block.distances_to_point(rows, centre))])
            close(self._class_around(block, rows, r, k))
            rows = np.flatnonzero(free)
            if len(rows) < 2 * k:  # the block had 2k..3k-1 rows: the rest is the last class
                close(rows)
                break
            s = int(rows[np.argmax(block.distances_to_row(rows, r))])
            close(self._class_around(block, rows, s, k))
        return labels

    def place_into(self, job: Leftovers) -> np.ndarray:
        """Each row of ``extra`` joins the class whose centroid is nearest (eq. 18).

        The centroids are those of the classes as clustered (placed rows do not
        move them), so the result does not depend on the order of ``extra``;
        ties go to the lowest class label; ``rng`` is unused.
        """
        block, labels, n_classes, extra, rng = job.parts()
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(n_classes + 1))
        everyone = np.arange(extra.n)
        distances = np.stack(
            [
                extra.distances_to_point(everyone, block.centroid_of(order[lo:hi]))
                for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
            ],
            axis=1,
        )
        return np.argmin(distances, axis=1).astype(np.int64)
