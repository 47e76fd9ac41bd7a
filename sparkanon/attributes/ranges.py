"""NCP from a set's lowest and highest code, for many sets at once.

Every kind's NCP (:meth:`~sparkanon.attributes.kinds.Kind.ncp`, Xu et al. 2006)
depends only on the set's extreme codes: a continuous range is ``hi - lo``; an
ordinal range, a taxonomy's lowest common ancestor, a nominal value or ``*``, a
code prefix are all fixed by the lowest and highest code. :class:`RangeNcp`
computes it for arrays of ``(lo, hi)`` pairs; the clustering algorithms keep
ranges per class and the summarise stage computes them per class with one
reduction.
"""

from __future__ import annotations

import numpy as np

from sparkanon.attributes.kinds import CategoricalKind, ContinuousKind, DiscreteKind, Kind
from sparkanon.attributes.semantic import SemanticKind


def pair_ncp_table(kind: DiscreteKind) -> np.ndarray:
    """``kind.ncp`` of every ``(lo, hi)`` code pair, built once per kind object.

    Every class accumulator (each block, each repair and placement) and every
    summarised block asks for it, and building it costs ``V^2 / 2`` calls (35 ms
    of a 62 ms MAA-SLIE block on Adult), so it is kept on the (frozen, immutable)
    kind itself.
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
    """NCP of one attribute from sets' lowest and highest codes, vectorised.

    A discrete kind's NCP of every ``(lo, hi)`` pair is tabulated once
    (:func:`pair_ncp_table`), a continuous kind's is ``hi - lo`` clipped to
    ``[0, 1]``; any other kind calls ``kind.ncp`` on each pair.
    """

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.table: np.ndarray | None = (
            pair_ncp_table(kind) if isinstance(kind, DiscreteKind) else None
        )

    def of_range(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """NCP of sets whose lowest and highest codes are ``lo`` and ``hi``."""
        if self.table is not None:
            return self.table[np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)]
        if isinstance(self.kind, ContinuousKind):
            return np.clip(np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float), 0.0, 1.0)
        lo, hi = np.broadcast_arrays(np.asarray(lo), np.asarray(hi))
        return np.array(
            [self.kind.ncp(np.array([a, b])) for a, b in zip(lo, hi, strict=True)], dtype=float
        )


class RangeHeightLoss:
    """Generalization loss of one attribute from sets' lowest and highest codes (Byun et al.).

    The per-attribute loss of a generalized value in Byun, Kamra, Bertino, Li (2007) and
    Campan, Truta, Cooper (2010): a numeric range's width over the attribute's range in
    the table; a categorical value's generalization as the *height* of the lowest common
    ancestor over the hierarchy's height (where NCP counts the leaves under it). Kinds
    without a taxonomy use the same reading: an ordinal range's rank span over ``V - 1``
    (a height-1 chain per step), a nominal value 0 or 1 (a height-1 tree), a semantic code
    the masked digits over its length (its code tree's height).
    """

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.table: np.ndarray | None = None
        if isinstance(kind, CategoricalKind):
            # eq. 14's matrix: u(a, b) / root_c, the common ancestor's height over the tree's
            self.table = kind.matrix
        elif isinstance(kind, DiscreteKind):
            self.table = pair_ncp_table(kind)

    def of_range(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Loss of sets whose lowest and highest codes are ``lo`` and ``hi``."""
        if self.table is not None:
            return self.table[np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)]
        if isinstance(self.kind, SemanticKind):
            shared = self.kind.common_prefix(lo, hi)
            return (self.kind.length - shared) / float(self.kind.length)
        return np.clip(np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float), 0.0, 1.0)
