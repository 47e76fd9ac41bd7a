"""APA: anatomize, partition, merge groups, decompose (Gong et al. 2016, Algorithm 1).

APA first groups the records with Anatomize over the TBuckets of their *original*
sets, then generalizes the sets with Partition (k-anonymity on the transaction part),
which can make a group hold the same published set too often; its group merging stage
merges such groups until every group passes the frequency test, and the result is
published as RT and TT (the lossy decomposition of Xiao and Tao 2006).
"""

from __future__ import annotations

import heapq
from fractions import Fraction

import numpy as np

from sparkanon.algorithms.transaction._result import (
    MERGE,
    RTResult,
    check_kl,
    decompose,
    dense_groups,
    partition_rows,
    set_codes,
)
from sparkanon.algorithms.transaction.anatomize import anatomize, beyond_cap, share_cap
from sparkanon.attributes.itemsets import ItemSets, ItemTree

_HEAVY_CODES = 8
"""At most this many published sets are *heavy*: part of a group's class (see :class:`_Groups`)."""
_CG, _G, _NONE = 0, 1, -1
"""The pools of :class:`_Groups`: failing groups, passing groups, neither (merged or popped)."""


class _Groups:
    """The groups of the merging stage, indexed so a popped group's best partner is found fast.

    A slot is a group id of Anatomize; a merged group keeps the smaller id of the two
    and the other slot points to it (``owner``). Per slot: its size, its published-set
    counts and its most frequent count.

    The live slots of each pool (``CG``, the failing groups, and ``G``, the passing
    ones) are indexed by *class*: slots of one class share their size, their most
    frequent count and their counts of the few *heavy* sets (those most groups hold,
    fixed at the start). For a popped group ``g``, every slot ``h`` of a class has the
    same lower bound on the worst ratio of ``g`` merged with ``h``: its numerator takes
    the two most frequent counts and the heavy sets both hold; only the other (light)
    sets they share can raise it. The search (:meth:`best`) visits the classes by
    lower bound, and each class's slots in ascending id, until no unvisited slot can
    beat the best found: the same partner as a scan of every slot, at a cost of about
    the number of classes plus the slots whose light sets raise their ratio. Each
    class keeps its slots in a min-heap with lazy deletion (an entry is current while
    its slot is still in that pool with that class).
    """

    def __init__(self, group: np.ndarray, code: np.ndarray, l: int) -> None:  # noqa: E741
        n_slots = int(group.max()) + 1
        width = int(code.max()) + 1
        self.l = l
        self.size = np.bincount(group, minlength=n_slots).astype(np.int64).tolist()
        self.maxc = [0] * n_slots
        self.counts: list[dict[int, int]] = [{} for _ in range(n_slots)]
        pairs, tally = np.unique(group * width + code, return_counts=True)
        for pair, count in zip(pairs.tolist(), tally.tolist(), strict=True):
            slot, c = divmod(pair, width)
            self.counts[slot][c] = count
            self.maxc[slot] = max(self.maxc[slot], count)
        self.heavy = heavy_codes(pairs % width, n_slots)
        self.owner = np.arange(n_slots, dtype=np.int64)
        self.pool = [_NONE] * n_slots
        self.key: list[tuple | None] = [None] * n_slots
        self.classes: tuple[dict[tuple, list[int]], ...] = ({}, {})
        self.members: tuple[dict[tuple, int], ...] = ({}, {})

    def passes(self, slot: int) -> bool:
        """The frequency test: the most frequent set is at most ``1/l`` of the group."""
        return self.maxc[slot] * self.l <= self.size[slot]

    def class_of(self, slot: int) -> tuple:
        """The slot's class: ``(size, most frequent count, ((heavy set, count), ...))``."""
        counts = self.counts[slot]
        heavy = tuple((c, counts[c]) for c in self.heavy if c in counts)
        return self.size[slot], self.maxc[slot], heavy

    def add(self, slot: int, pool: int) -> None:
        """Put ``slot`` into ``pool`` (``CG`` or ``G``) under its current class."""
        key = self.class_of(slot)
        self.pool[slot], self.key[slot] = pool, key
        heapq.heappush(self.classes[pool].setdefault(key, []), slot)
        self.members[pool][key] = self.members[pool].get(key, 0) + 1

    def remove(self, slot: int) -> None:
        """Take ``slot`` out of its pool (its heap entry goes stale)."""
        pool, key = self.pool[slot], self.key[slot]
        self.pool[slot] = _NONE
        left = self.members[pool][key] - 1
        if left:
            self.members[pool][key] = left
        else:
            del self.members[pool][key], self.classes[pool][key]

    def merged_max(self, g: int, h: int, bound: int) -> int:
        """The most frequent count of ``g`` merged with ``h``, given a lower bound of it."""
        small, large = sorted((self.counts[g], self.counts[h]), key=len)
        best = bound
        for c, count in small.items():
            other = large.get(c)
            if other is not None and count + other > best:
                best = count + other
        return best

    def best(self, g: int, pool: int) -> tuple[int, int, int] | None:
        """The slot of ``pool`` whose merge with ``g`` has the smallest worst ratio, then id.

        The worst ratio of a group is its most frequent set's count over its size;
        ratios are compared exactly (integer cross products).

        Args:
            g: the popped group (in no pool).
            pool: ``CG`` or ``G``.

        Returns:
            ``(slot, merged most frequent count, merged size)``, or ``None`` for an empty pool.
        """
        size_g, max_g, counts_g = self.size[g], self.maxc[g], self.counts[g]
        bounds = []
        for key in self.members[pool]:
            size, top, heavy = key
            num = max(max_g, top)
            for c, count in heavy:
                if c in counts_g:
                    num = max(num, counts_g[c] + count)
            bounds.append((Fraction(num, size + size_g), num, size + size_g, key))
        bounds.sort(key=lambda b: b[0])
        found: tuple[int, int, int] | None = None  # (num, den, slot)
        for _, num, den, key in bounds:
            if found is not None and num * found[1] > found[0] * den:
                break  # this class and every later one rank behind the best found
            found = self._scan(g, pool, key, num, den, found)
        return None if found is None else (found[2], found[0], found[1])

    def _scan(
        self, g: int, pool: int, key: tuple, num: int, den: int, found: tuple[int, int, int] | None
    ) -> tuple[int, int, int] | None:
        """Visit one class's slots in ascending id until none can beat ``found``; the new best."""
        heap = self.classes[pool][key]
        kept: list[int] = []
        while heap:
            h = heap[0]
            if self.pool[h] != pool or self.key[h] != key:
                heapq.heappop(heap)  # stale entry
                continue
            if found is not None and _ranks_behind(num, den, h, found):
                break  # every slot left here ranks behind: ratio at least num/den, larger id
            kept.append(heapq.heappop(heap))
            exact = self.merged_max(g, h, num)
            if found is None or not _ranks_behind(exact, den, h, found):
                found = (exact, den, h)
            if exact == num:
                break  # the later slots of the class have ratio at least num/den, larger ids
        for h in kept:
            heapq.heappush(heap, h)
        return found

    def merge(self, g: int, h: int) -> int:
        """Merge ``g`` and ``h`` (both out of the pools) into the smaller id; return that id."""
        keep, gone = min(g, h), max(g, h)
        into = self.counts[keep]
        top = self.maxc[keep]
        for c, count in self.counts[gone].items():
            new = into.get(c, 0) + count
            into[c] = new
            top = max(top, new)
        self.maxc[keep] = top
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


def _ranks_behind(num: int, den: int, slot: int, found: tuple[int, int, int]) -> bool:
    """Whether ratio ``num/den`` at ``slot`` ranks after ``found`` (greater; equal, larger id)."""
    left, right = num * found[1], found[0] * den
    return left > right or (left == right and slot > found[2])


def heavy_codes(held: np.ndarray, n_slots: int) -> tuple[int, ...]:
    """The published sets held by the most groups (at most :data:`_HEAVY_CODES`), the heavy sets.

    A set is heavy if more than ``sqrt(groups)`` groups hold it; the choice affects
    only the speed of the merging stage, never its result.

    Args:
        held: the set code of each (group, set) pair, one entry per pair.
        n_slots: the number of group slots.

    Returns:
        The heavy codes, most widely held first (ties: smaller code).
    """
    if held.size == 0:
        return ()
    codes, holders = np.unique(held, return_counts=True)
    order = np.lexsort((codes, -holders))[:_HEAVY_CODES]
    chosen = order[holders[order] > np.sqrt(n_slots)]
    return tuple(int(c) for c in codes[chosen])


def merge_groups(group: np.ndarray, code: np.ndarray, l: int) -> tuple[np.ndarray, np.ndarray]:  # noqa: E741
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
    failing = []
    for slot in np.flatnonzero(np.bincount(group[live]) > 0).tolist():
        passes = state.passes(slot)
        state.add(slot, _G if passes else _CG)
        if not passes:
            failing.append(slot)
    heap = failing  # ascending: already a heap
    while heap:
        g = heapq.heappop(heap)
        if state.pool[g] != _CG:
            continue  # merged away since it was pushed
        state.remove(g)
        choice = state.best(g, _CG)
        if choice is not None and choice[1] * l <= choice[2]:
            h, to_g = choice[0], True  # 1. the best failing partner makes it pass
        elif state.members[_G]:
            h, to_g = state.best(g, _G)[0], False  # 2. into the best passing group
        elif choice is not None:
            h, to_g = choice[0], False  # 3. no passing group: the best failing one
        else:
            cap = share_cap(np.fromiter(state.counts[g].values(), dtype=np.int64), l)
            suppressed[live[beyond_cap(code[live], cap)]] = True
            break
        state.remove(h)
        m = state.merge(g, h)
        if to_g or state.passes(m):
            state.add(m, _G)
        else:
            state.add(m, _CG)
            heapq.heappush(heap, m)
    result = np.full(group.size, -1, dtype=np.int64)
    result[live] = state.resolve()[group[live]]
    result[suppressed] = -1
    return result, suppressed


def apa(sets: ItemSets, tree: ItemTree, k: int, l: int) -> RTResult:  # noqa: E741
    """APA over one block (Algorithm 1 of Gong, Yang and Luo 2016): anatomize, partition, merge.

    1. TBuckets of the original sets (definition 2; bucket ids in the sorted order of
       the distinct sets) and :func:`~sparkanon.algorithms.transaction.anatomize.anatomize`
       over them form the groups (reasons 2 and 3 for the records it suppresses).
    2. :func:`~sparkanon.algorithms.transaction._result.partition_rows` generalizes the
       sets of the records Anatomize kept to k-anonymity (definition 6); records it
       suppresses leave their group (reason 1).
    3. :func:`merge_groups` merges groups until each passes the frequency test on the
       generalized sets (reason 4 if even all records together fail it).
    4. :func:`~sparkanon.algorithms.transaction._result.decompose`: each kept record's
       dense group id and published generalized set.

    Args:
        sets: the original item sets, one per record.
        tree: the item taxonomy the sets' node ids refer to.
        k: the smallest TBucket of published sets, at least 1.
        l: the frequency bound (a set at most ``1/l`` of its group), at least 1.

    Returns:
        The groups, published sets and suppression reasons.

    Raises:
        ValueError: ``k < 1`` or ``l < 1``.
    """
    check_kl(k, l)
    n = len(sets)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return RTResult(group=empty, generalized=sets, suppressed_reason=empty.astype(np.int8))
    original, _ = set_codes(sets)
    anatomy = anatomize(original, l)
    reason = anatomy.reason.copy()
    kept = np.flatnonzero(anatomy.group >= 0)
    group = np.full(n, -1, dtype=np.int64)
    if kept.size == 0:
        return RTResult(group=dense_groups(group), generalized=sets, suppressed_reason=reason)
    stay, published = partition_rows(sets, kept, tree, k, reason)
    group[stay] = anatomy.group[stay]
    code = np.full(n, -1, dtype=np.int64)
    code[stay] = set_codes(published)[0]
    group, merged_out = merge_groups(group, code, l)
    reason[merged_out] = MERGE
    return decompose(sets, group, reason, stay, published, ~merged_out[stay])
