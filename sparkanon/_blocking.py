"""Mondrian-style blocking: a binary tree of median cuts, planned from per-block statistics.

The driver holds only the tree (one entry per cut) and per-block statistics;
rows are routed to their block by :meth:`BlockTree.assign`, a vectorised pure
function the engine runs on each batch. Block ids are heap numbers: the root is
1 and the children of node ``b`` are ``2b`` (bins ``<= cut``) and ``2b + 1``.

One round of planning (see :func:`sparkanon.pipeline.build_blocks`):

1. per-block statistics: rows, distinct sensitive values and levels, and the
   lowest and highest blocking bin of every quasi-identifier;
2. the cuts of the previous round are checked: a side that cannot host a class
   (fewer than ``k`` rows, ``p`` values or ``H`` levels) is *infeasible*; with
   ``infeasible_blocks: merge`` the cut is undone (the side merges back with its
   sibling) and the parent will try its next-widest attribute; with
   ``reconcile`` the side is kept and its rows are later sent to the nearest
   feasible block (a cut is still undone when both sides are infeasible);
3. every feasible block with more than ``max_block_rows`` rows is cut on its
   widest normalised quasi-identifier at the median bin (a histogram of that
   attribute per block); categorical cuts fall only between the child subtrees
   of the block's common ancestor, so taxonomy siblings stay together.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sparkanon.attributes.kinds import Kind

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


def widest_attributes(kinds: tuple[Kind, ...], lows: np.ndarray, highs: np.ndarray) -> list[int]:
    """Attributes that can be cut, widest normalised range first.

    Args:
        kinds: the quasi-identifier kinds.
        lows: lowest bin of each attribute in the block.
        highs: highest bin of each attribute in the block.

    Returns:
        Attribute indices with a positive span and at least one allowed cut.
    """
    spans = []
    for a, kind in enumerate(kinds):
        lo, hi = int(lows[a]), int(highs[a])
        if hi <= lo:
            continue
        candidates = kind.cut_candidates(lo, hi)
        if candidates is not None and not candidates:
            continue
        spans.append((-kind.bin_span(lo, hi), a))
    return [a for _, a in sorted(spans)]


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
