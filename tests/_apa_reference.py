"""The group merging of APA as it was before issue 27: a plain reference for the parity tests.

Each popped group is compared with every other group of its pool (quadratic in the
groups); :func:`sparkanon.algorithms.transaction.apa.merge_groups` must give exactly the
same groups and suppressions. Test-only code, kept as it was (only the import of the
Anatomize helpers and this docstring are new).
"""

from __future__ import annotations

import heapq
from fractions import Fraction

import numpy as np

from sparkanon.algorithms.transaction.anatomize import beyond_cap, share_cap

_EXACT_FLOAT = 2**26
"""Group sizes below which float quotients order the worst ratios exactly."""


class _Groups:
    """The groups of the merging stage: per slot its size, set counts and most frequent count.

    A slot is a group id of Anatomize; a merged group keeps the smaller id of the two
    and the other slot points to it (``owner``). ``holders`` maps each published-set
    code to the slots holding it and their count, so a merge candidate's merged
    maximum is found without scanning every group.
    """

    def __init__(self, group: np.ndarray, code: np.ndarray, l: int) -> None:  # noqa: E741
        n_slots = int(group.max()) + 1
        width = int(code.max()) + 1
        self.l = l
        self.size = np.bincount(group, minlength=n_slots).astype(np.int64)
        self.maxc = np.zeros(n_slots, dtype=np.int64)
        self.counts: list[dict[int, int]] = [{} for _ in range(n_slots)]
        self.holders: dict[int, dict[int, int]] = {}
        pairs, tally = np.unique(group * width + code, return_counts=True)
        for pair, count in zip(pairs.tolist(), tally.tolist(), strict=True):
            slot, c = divmod(pair, width)
            self.counts[slot][c] = count
            self.holders.setdefault(c, {})[slot] = count
        np.maximum.at(self.maxc, pairs // width, tally)
        self.owner = np.arange(n_slots, dtype=np.int64)

    def passes(self, slot: int) -> bool:
        """The frequency test: the most frequent set is at most ``1/l`` of the group."""
        return int(self.maxc[slot]) * self.l <= int(self.size[slot])

    def merged_max(self, g: int) -> np.ndarray:
        """Per slot, the most frequent set's count if that slot were merged with ``g``."""
        out = np.maximum(self.maxc, self.maxc[g])
        for c, count in self.counts[g].items():
            held = self.holders[c]
            slots = np.fromiter(held.keys(), dtype=np.int64, count=len(held))
            values = np.fromiter(held.values(), dtype=np.int64, count=len(held))
            np.maximum.at(out, slots, values + count)
        return out

    def best(self, g: int, candidates: np.ndarray, merged: np.ndarray) -> int:
        """The candidate whose merge with ``g`` has the smallest worst ratio, then smallest id.

        The worst ratio of a group is its most frequent set's count over its size. Two
        different ratios of sizes below ``2**26`` differ by more than ``2**-52``, so their
        correctly rounded float quotients differ too and keep their order: the float
        comparison is exact. Larger groups are compared as fractions.

        Args:
            g: the popped group.
            candidates: the slots to choose from, ascending.
            merged: per slot, the most frequent count after a merge with ``g``.

        Returns:
            The chosen slot.
        """
        total = self.size[candidates] + self.size[g]
        if int(total.max()) < _EXACT_FLOAT:
            ratio = merged[candidates] / total
            return int(candidates[np.argmin(ratio)])  # argmin: the first, smallest id
        return int(
            min(
                candidates.tolist(),
                key=lambda h: (Fraction(int(merged[h]), int(self.size[h] + self.size[g])), h),
            )
        )

    def merge(self, g: int, h: int) -> int:
        """Merge slots ``g`` and ``h`` into the smaller id; return that id."""
        keep, gone = min(g, h), max(g, h)
        for c, count in self.counts[gone].items():
            held = self.holders[c]
            del held[gone]
            new = self.counts[keep].get(c, 0) + count
            self.counts[keep][c] = new
            held[keep] = new
            if new > self.maxc[keep]:
                self.maxc[keep] = new
        self.counts[gone] = {}
        self.size[keep] += self.size[gone]
        self.size[gone] = 0
        self.maxc[gone] = 0
        self.owner[gone] = keep
        return keep

    def resolve(self) -> np.ndarray:
        """Each slot's final slot (following the merges)."""
        owner = self.owner
        while True:
            nxt = owner[owner]
            if np.array_equal(nxt, owner):
                return owner
            owner = nxt


def reference_merge_groups(
    group: np.ndarray,
    code: np.ndarray,
    l: int,  # noqa: E741
) -> tuple[np.ndarray, np.ndarray]:
    """APA's group merging stage (Gong et al. 2016, Algorithm 1), made deterministic.

    ``G`` holds the groups that pass the frequency test (their most frequent published
    set holds at most ``|group| / l`` records), ``CG`` the others. While ``CG`` is not
    empty, pop from it the group ``g`` of smallest id, then:

    1. if merging ``g`` with some other group of ``CG`` passes the test, merge it with
       the one leaving the smallest worst ratio (most frequent count over size; ties:
       smaller id) and put the result into ``G``;
    2. else, if ``G`` is not empty, merge ``g`` into the group of ``G`` leaving the
       smallest worst ratio (ties: smaller id; the paper says "any group", its authors'
       code picks one at random); the result goes to ``G`` if it passes, else back to
       ``CG``;
    3. else, if ``CG`` holds other groups, merge ``g`` with the one leaving the smallest
       worst ratio and put the result back into ``CG`` (the paper does not say what to
       do when ``G`` is empty; the authors' code suppresses ``g``);
    4. else ``g`` is the only group left: all kept records, and they fail the test, so
       no grouping of them can pass (the test is monotonic under merging). The
       fewest records are suppressed (reason ``MERGE``): every published set is cut to
       :func:`~sparkanon.algorithms.transaction.anatomize.share_cap` records, keeping
       its first records in input order. When the sets come from ``partition_sets``
       (every TBucket at least ``k``) the cap is 0 or at least ``k``, so no TBucket
       drops below ``k``.

    A merged group takes the smaller id of the two. Every merge lowers the number of
    groups, so the loop ends after fewer merges than there are groups.

    Args:
        group: int64 group id per record, ``-1`` for records already suppressed.
        code: int64 published-set code per record (equal sets, equal codes).
        l: the diversity parameter, at least 1.

    Returns:
        ``(group, suppressed)``: the merged group of each record (ids not dense, ``-1``
        for records suppressed before or here) and a mask of the records this stage
        suppressed.
    """
    group = np.asarray(group, dtype=np.int64)
    code = np.asarray(code, dtype=np.int64)
    suppressed = np.zeros(group.size, dtype=bool)
    live = np.flatnonzero(group >= 0)
    if live.size == 0:
        return group.copy(), suppressed
    state = _Groups(group[live], code[live], l)
    alive = state.size > 0
    in_cg = np.zeros(state.size.size, dtype=bool)
    in_g = np.zeros(state.size.size, dtype=bool)
    for slot in np.flatnonzero(alive).tolist():
        (in_g if state.passes(slot) else in_cg)[slot] = True
    heap = np.flatnonzero(in_cg).tolist()  # ascending: already a heap
    while heap:
        g = heapq.heappop(heap)
        if not in_cg[g]:
            continue  # merged away since it was pushed
        in_cg[g] = False
        others = np.flatnonzero(in_cg)
        merged = state.merged_max(g)
        passing = others[merged[others] * l <= state.size[others] + state.size[g]]
        if passing.size:
            pool, to_g = passing, True
        elif in_g.any():
            pool, to_g = np.flatnonzero(in_g), False
        elif others.size:
            pool, to_g = others, False
        else:
            cap = share_cap(np.fromiter(state.counts[g].values(), dtype=np.int64), l)
            suppressed[live[beyond_cap(code[live], cap)]] = True
            break
        h = state.best(g, pool, merged)
        in_cg[h] = in_g[h] = False
        m = state.merge(g, h)
        if to_g or state.passes(m):
            in_g[m] = True
        else:
            in_cg[m] = True
            heapq.heappush(heap, m)
    result = np.full(group.size, -1, dtype=np.int64)
    result[live] = state.resolve()[group[live]]
    result[suppressed] = -1
    return result, suppressed
