"""Mondrian-style blocking: a binary tree of median cuts, planned from per-block statistics.

The driver holds only the tree (one entry per cut) and per-block statistics;
rows are routed to their block by :meth:`BlockTree.assign`, a vectorised pure
function the engine runs on each batch. Block ids are heap numbers: the root is
1 and the children of node ``b`` are ``2b`` (bins ``<= cut``) and ``2b + 1``.

One round of planning (see :func:`sparkanon.pipeline.build_blocks`):

1. per-block statistics: rows, distinct sensitive values and levels;
2. the cuts of the previous round are checked: a side that cannot host a class
   (fewer than ``k`` rows, ``p`` values or ``H`` levels) is *infeasible*; with
   ``infeasible_blocks: merge`` the cut is undone (the side merges back with its
   sibling) and the parent will try its next attribute; with
   ``reconcile`` the side is kept and its rows are later sent to the nearest
   feasible block (a cut is still undone when both sides are infeasible);
3. every feasible block with more than ``max_block_rows`` rows is cut on its
   widest quasi-identifier, width measured as normalised spread (mean distance
   to the block's centroid, :func:`attribute_spread`), at the median bin;
   categorical cuts fall only between the child subtrees of the block's common
   ancestor, so taxonomy siblings stay together. Histograms of every attribute
   per block are merged on the cluster and each block's cut is chosen there
   (:func:`choose_cut`), so the driver receives one row per block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sparkanon.attributes.kinds import CONTINUOUS_BINS, ContinuousKind, DiscreteKind, Kind

MAX_DEPTH = 40
"""Deepest allowed block; keeps ``block << 20 | class`` inside int64."""


@dataclass
class BlockTree:
    """The cuts made so far: ``splits[node] = (attribute index, cut bin)``."""

    splits: dict[int, tuple[int, int]] = field(default_factory=dict)

    def split(self, node: int, attribute: int, cut: int) -> None:
        """Cut leaf ``node`` on ``attribute``: bins ``<= cut`` go left."""
        self.splits[node] = (attribute, cut)

    def undo(self, node: int) -> None:
        """Undo the cut of ``node`` (its children must be leaves)."""
        self.splits.pop(node, None)

    def is_leaf(self, node: int) -> bool:
        """Whether ``node`` is a current leaf."""
        if node in self.splits:
            return False
        parent = node // 2
        while parent >= 1:
            if parent not in self.splits:
                return False
            parent //= 2
        return True

    def assign(self, bins: np.ndarray) -> np.ndarray:
        """Leaf of each row.

        Args:
            bins: ``(n_attributes, n_rows)`` blocking bins.

        Returns:
            The block id of each row.
        """
        n = bins.shape[1] if bins.ndim == 2 else 0
        node = np.ones(n, dtype=np.int64)
        if not self.splits or n == 0:
            return node
        keys = np.array(sorted(self.splits), dtype=np.int64)
        attrs = np.array([self.splits[k][0] for k in keys], dtype=np.int64)
        cuts = np.array([self.splits[k][1] for k in keys], dtype=np.int64)
        rows = np.arange(n)
        for _ in range(MAX_DEPTH + 1):
            idx = np.clip(np.searchsorted(keys, node), 0, len(keys) - 1)
            internal = keys[idx] == node
            if not internal.any():
                break
            i = idx[internal]
            right = bins[attrs[i], rows[internal]] > cuts[i]
            node[internal] = 2 * node[internal] + right
        return node


def attribute_spread(kind: Kind, histogram: pd.Series) -> float:
    """How spread out a block is on one attribute: weighted mean distance to its centroid.

    This is the attribute's share of the block's information loss per row
    (eq. 19-20 with the whole block as one class). Blocking cuts the attribute
    of largest spread: a normalised *range* (classic Mondrian) ranks an
    attribute with a few outliers, or a long declared order, as wide as one
    spread over its whole domain.

    Args:
        kind: the attribute's kind.
        histogram: rows per blocking bin (index: bin).

    Returns:
        The spread, 0 for a block with one value.
    """
    bins = histogram.index.to_numpy(dtype=np.int64)
    counts = histogram.to_numpy(dtype=float)
    total = counts.sum()
    if total <= 0:
        return 0.0
    if isinstance(kind, DiscreteKind):
        hist = np.zeros(kind.size)
        hist[bins] = counts
        return kind.weight * float(kind.losses(hist[None, :])[0]) / total
    if not isinstance(kind, ContinuousKind):
        # Any other kind (semantic codes): mean distance to the medoid bin, with
        # the kind's own distance between bins (at most a few thousand bins).
        return kind.weight * float((kind.bin_distances(bins) @ counts).min()) / total
    centres = (bins + 0.5) / CONTINUOUS_BINS
    mean = float((centres * counts).sum() / total)
    return kind.weight * float((np.abs(centres - mean) * counts).sum() / total)


def choose_cut(
    kinds: tuple[Kind, ...], histograms: dict[int, pd.Series], excluded: set[int], min_side: int
) -> tuple[int, int] | None:
    """The attribute and median cut of one block.

    Attributes are tried in decreasing spread (:func:`attribute_spread`); the
    first one with an allowed cut leaving ``min_side`` rows on each side wins.

    Args:
        kinds: the quasi-identifier kinds.
        histograms: rows per bin of each attribute in the block.
        excluded: attributes already tried for this block (a cut on them was undone).
        min_side: rows each side must keep (``k``).

    Returns:
        ``(attribute, cut bin)`` or ``None`` when no attribute can be cut.
    """
    spreads = []
    for a, kind in enumerate(kinds):
        hist = histograms.get(a)
        if a in excluded or hist is None or len(hist) < 2:
            continue
        spread = attribute_spread(kind, hist)
        if spread > 0:
            spreads.append((-spread, a))
    for _, a in sorted(spreads):
        hist = histograms[a]
        lo, hi = int(hist.index.min()), int(hist.index.max())
        cut = median_cut(kinds[a], lo, hi, hist, min_side)
        if cut is not None:
            return a, cut
    return None


def median_cut(kind: Kind, lo: int, hi: int, histogram: pd.Series, min_side: int) -> int | None:
    """The allowed cut closest to the median of a block's histogram.

    Args:
        kind: the attribute's kind (gives the allowed cuts).
        lo: lowest bin in the block.
        hi: highest bin in the block.
        histogram: rows per bin (index: bin).
        min_side: rows each side must keep (``k``).

    Returns:
        The cut bin (left side ``<= cut``), or ``None`` if no allowed cut
        leaves ``min_side`` rows on both sides.
    """
    candidates = kind.cut_candidates(lo, hi)
    cands = np.arange(lo, hi) if candidates is None else np.asarray(candidates, dtype=np.int64)
    if cands.size == 0:
        return None
    bins = histogram.index.to_numpy(dtype=np.int64)
    counts = histogram.to_numpy(dtype=np.int64)
    order = np.argsort(bins)
    bins, counts = bins[order], counts[order]
    cum = np.cumsum(counts)
    total = int(cum[-1]) if cum.size else 0
    left = np.where(
        np.searchsorted(bins, cands, side="right") > 0,
        cum[np.clip(np.searchsorted(bins, cands, side="right") - 1, 0, None)],
        0,
    )
    ok = (left >= min_side) & (total - left >= min_side)
    if not ok.any():
        return None
    score = np.abs(left - total / 2.0)
    score[~ok] = np.inf
    return int(cands[int(np.argmin(score))])
