"""Partition (He and Naughton 2009): k-anonymous set-valued data by top-down local generalization.

Gong et al. 2016 (section 1 (2) and section 3.2) makes the transaction part of its data
k-anonymous (definition 6: every TBucket of the published table, the records sharing
one published set, holds at least ``k`` records) with Partition, the algorithm of He and
Naughton, "Anonymization of set-valued data via top-down, local generalization", PVLDB
2(1), 2009, pp. 934-945 (Gong et al. 2016 reference [27]). Gong et al. 2016 says that it adapted the
algorithm ("optimized the grouping module") without spelling the changes out, so this
module fixes every choice below. The paper's own text was not available to us; the
description follows the outline that Gong et al. 2016 gives, the paper's published outline
(recursive ``Anonymize(partition)``: pick a node, distribute the transactions into the
sub-partitions the expansion induces, balance the small ones, recurse), and the
authors' public Python implementation (github.com/qiyuangong/Partition_for_Transaction,
``partition_for_transaction.py``), which we read to settle the readings marked *R* below
and did not copy.

Model. Items are the leaves of an :class:`~sparkanon.attributes.itemsets.ItemTree`. A
record's generalized set is a set of tree nodes in which each of its items has exactly
one ancestor-or-self and each node covers at least one of its items: the record's items
seen through a *cut* of the taxonomy. The generalization is *local*: different groups of
records may use different cuts. The information loss of a generalized item is its NCP,
0 for a leaf, ``|leaves(node)| / |I|`` otherwise (He and Naughton section 2,
:meth:`ItemTree.item_ncp`); of a dataset, the mean NCP over all original item
occurrences (:func:`information_loss`).

Algorithm. All records with a non-empty set start in one partition, generalized to
``{root}``. A partition's records all share one generalized set ``G``. Repeatedly, with an
explicit stack (deep trees never meet Python's recursion limit):

1. *Pick* (R1). The candidates are the non-leaf nodes of ``G`` not excluded (step 4, R4). The
   chosen node ``N`` has the largest *information gain*, the drop of the partition's total
   NCP if ``N`` were expanded for all its records: the sum over the item occurrences under
   ``N`` of ``NCP(N) - NCP(child of N covering the item)``, computed exactly in integer
   leaf counts; ties go to the smaller node id. With no candidate, the partition is final.
2. *Distribute*. Each record replaces ``N`` by the subset of ``N``'s children that cover its
   items; records are grouped by that exact subset. Only the subsets that occur are
   materialized (a key per record: a bit mask for up to 62 children, else the padded
   sorted child list), never the ``2^fanout`` combinations the paper enumerates.
3. *Balance* (R2). Sub-partitions of fewer than ``k`` records are merged into one
   *leftover*. If the leftover is non-empty but smaller than ``k`` (deficit ``d``), records
   are moved into it from the sub-partitions of at least ``k``: the records whose move
   loses least (smallest per-record gain of expanding ``N``), ties by input order, taking
   from a sub-partition only while it keeps at least ``k`` records (the authors'
   implementation also moves least-gain transactions one at a time from sub-partitions
   larger than ``k``). If all those sub-partitions together cannot spare ``d`` records,
   the one with the smallest total gain (ties: the one whose first record comes first)
   is merged into the leftover whole (the authors' implementation likewise merges
   its least-gain sub-partition).
4. *Leftover* (R3). The leftover keeps the parent's unexpanded set ``G``: the expansion of
   ``N`` is not applied to its records. It is *not* final: like the authors'
   implementation, where the leftover re-enters the recursion with ``N`` added to the
   nodes already tried, it may be specialized further on the *other* nodes of ``G``,
   never again on ``N`` (nor on the nodes earlier leftovers in its chain excluded). That
   implementation makes the leftover final after a whole-sub-partition merge; here it is
   only barred from ``N`` there too, which loses nothing and can only lower the NCP. When
   every record lands in the leftover (no sub-partition reaches ``k``), the expansion of
   ``N`` simply fails for this partition and the next-best node is tried.
5. *Recurse* on every sub-partition (with ``N`` replaced by its record's children, so all
   its records share the new set) and on the leftover.

Exclusions and pruning (R4). The node ``N`` excluded in step 4 is excluded in every
descendant of that partition too, which skips retrying it; this changes no output.
After a failed expansion (no sub-partition reached ``k``), or in a leftover balanced by
moves (each child subset then holds fewer than ``k`` of its records), the child-subset
groups of any subset of its records are subsets of those groups, so ``N`` would fail
again everywhere below. A leftover made by a whole-sub-partition merge holds fewer than
``2k`` records (the others could spare fewer than ``d <= k - 1``, so the merged one held
fewer than ``k + d``, beside the ``k - d`` already in the leftover): it is settled at once
and has no descendants. A partition of fewer than ``2k`` records is settled in one pass:
at most one of its child subsets can reach ``k`` and the others can only be topped up by
emptying it, so every expansion either keeps all its records in one sub-partition or
changes nothing; those expansions commute, and the final set expands every non-excluded
node under which all its records reach the same children. The tests compare the result
with a plain implementation that retries every node, one expansion at a time.

The search stops on "no candidate node", never on a size: a partition of exactly ``k``
records that all fall into one child subset is still specialized (the one sub-partition
keeps ``k`` records), and one of ``2k`` records falling ``k`` and ``k`` into two subsets
splits in two (neither ``len < 2k`` nor ``len <= k`` stops it; the one-pass settlement
below ``2k`` still expands every node its records agree on).

Empty sets and suppression (R5). An empty set is a value of its own that no
generalization changes (:mod:`sparkanon.attributes.itemsets`): the records with an empty
set form one TBucket if there are at least ``k`` of them, and are suppressed otherwise.
The records with a non-empty set are suppressed only when fewer than ``k`` of them exist;
otherwise the algorithm places every one of them (the root generalization is always
available). A suppressed record's published set is empty and its partition ``-1``.

Partition numbers (R6). ``partition`` numbers the distinct published sets (the TBuckets
of Gong et al. 2016, definition 2), ``0 .. P-1`` in the order of their first record. These are
exactly the final partitions: sibling sub-partitions differ in the children of ``N`` they
reach, which later expansions keep, and a leftover keeps ``N``, which none of its
descendants expands (R4); records with equal final sets would share a number anyway.

Input. The sets must hold leaf ids only (items, never inner nodes). Everything is keyed
by integers and sorted arrays; no set or dict iteration order is relied on, so the
output is the same for the same input under any Python hash seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sparkanon.attributes.itemsets import ItemSets, ItemTree, covering_nodes, distinct_ints

_MASK_FANOUT = 62
"""Largest fanout whose child subsets are keyed by an int64 bit mask."""


@dataclass(frozen=True)
class SetPartition:
    """The k-anonymous generalization of a block's sets.

    Attributes:
        generalized: per input record (same order), its published generalized set: the
            node ids of the final cut covering its items; empty for an empty set and for
            a suppressed record.
        partition: int64 per record: the index ``0 .. P-1`` of its published set (its
            TBucket), numbered in the order of each set's first record; ``-1`` if
            suppressed.
        suppressed: bool per record.
    """

    generalized: ItemSets
    partition: np.ndarray
    suppressed: np.ndarray


@dataclass(frozen=True)
class _Tables:
    """Static arrays of one run: per item occurrence and per tree node.

    Attributes:
        leaf: leaf id of every item occurrence (``sets.nodes``).
        record: record of every item occurrence.
        level: per node, its level (0 for a leaf).
        parent: per node, its parent; ``n_nodes`` (one past the last id) for the root.
        ancestor: ``ancestor[j, leaf]``: the leaf's ancestor at level ``j``.
        weight: per node, ``|I| * NCP``: 0 for a leaf, its leaf count otherwise.
        child_offsets: as :attr:`ItemTree.child_offsets`.
        children: as :attr:`ItemTree.children`.
        k: the anonymity parameter.
    """

    leaf: np.ndarray
    record: np.ndarray
    level: np.ndarray
    parent: np.ndarray
    ancestor: np.ndarray
    weight: np.ndarray
    child_offsets: np.ndarray
    children: np.ndarray
    k: int


@dataclass(frozen=True)
class _Part:
    """A partition under refinement: records sharing one generalized set.

    Attributes:
        records: record ids, ascending.
        occs: the item occurrences of those records, grouped by record.
        cut: the shared generalized set, sorted node ids.
        excluded: nodes never to expand in it or its descendants (R4).
    """

    records: np.ndarray
    occs: np.ndarray
    cut: np.ndarray
    excluded: tuple[int, ...]


@dataclass(frozen=True)
class _Step:
    """What one refinement step yields.

    Attributes:
        parts: the partitions to refine next (sub-partitions, then the leftover).
        occs: item occurrences whose generalized node changes.
        nodes: their new generalized node (a child of the expanded node).
    """

    parts: tuple[_Part, ...]
    occs: np.ndarray
    nodes: np.ndarray


def _tables(sets: ItemSets, tree: ItemTree, k: int) -> _Tables:
    """The static arrays of a run over ``sets``."""
    leaves = np.arange(tree.n_leaves, dtype=np.int64)
    height = int(tree.level[tree.root])
    ancestor = np.stack([tree.ancestor_at(leaves, j) for j in range(height + 1)])
    weight = np.where(tree.level > 0, tree.leaf_hi - tree.leaf_lo + 1, 0).astype(np.int64)
    record = np.repeat(np.arange(len(sets), dtype=np.int64), sets.sizes())
    return _Tables(
        leaf=np.asarray(sets.nodes, dtype=np.int64),
        record=record,
        level=np.asarray(tree.level, dtype=np.int64),
        parent=np.where(tree.parent < 0, tree.n_nodes, tree.parent).astype(np.int64),
        ancestor=ancestor,
        weight=weight,
        child_offsets=np.asarray(tree.child_offsets, dtype=np.int64),
        children=np.asarray(tree.children, dtype=np.int64),
        k=k,
    )


def _children_and_gain(
    gen: np.ndarray, leaf: np.ndarray, tables: _Tables
) -> tuple[np.ndarray, np.ndarray]:
    """For each occurrence, the child of its generalized node covering it and the gain.

    Args:
        gen: the generalized node of each occurrence.
        leaf: the item (leaf id) of each occurrence.
        tables: the run's static arrays.

    Returns:
        ``(child, gain)``: the child of ``gen`` on the way to ``leaf`` (``leaf`` itself when
        ``gen`` is a leaf) and ``|I| * (NCP(gen) - NCP(child))``, an integer.
    """
    child_level = np.maximum(tables.level[gen] - 1, 0)
    child = tables.ancestor[child_level, leaf]
    return child, tables.weight[gen] - tables.weight[child]


def _pick_node(
    cut: np.ndarray, excluded: tuple[int, ...], gen: np.ndarray, gain: np.ndarray, tables: _Tables
) -> int | None:
    """The node of ``cut`` to expand: largest total gain, ties to the smaller id (R1).

    Args:
        cut: the partition's generalized set, ascending.
        excluded: nodes not to expand.
        gen: the generalized node of each of the partition's occurrences.
        gain: the gain of each occurrence (:func:`_children_and_gain`).
        tables: the run's static arrays.

    Returns:
        The node id, or ``None`` when no non-leaf, non-excluded node is left.
    """
    candidates = cut[tables.level[cut] > 0]
    if excluded:
        skip = frozenset(excluded)  # membership only, never iterated
        candidates = np.array([c for c in candidates.tolist() if c not in skip], dtype=np.int64)
    if candidates.size == 0:
        return None
    total = np.bincount(gen, weights=gain, minlength=int(candidates[-1]) + 1)
    return int(candidates[np.argmax(total[candidates])])


def _subset_groups(
    rec: np.ndarray, pos: np.ndarray, n_records: int, fanout: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group records by the exact subset of child positions their occurrences reach.

    Args:
        rec: per occurrence under the expanded node, the record's index in the partition.
        pos: per such occurrence, the position of its child among the node's children.
        n_records: records in the partition (each has at least one occurrence).
        fanout: the node's number of children.

    Returns:
        ``(group, positions, start)``: a group label per record (equal labels, equal
        subsets; labels ``0 .. G-1``), every record's distinct child positions ascending,
        concatenated, and the ``n_records + 1`` offsets of each record's run in them.
    """
    pairs = distinct_ints(rec * fanout + pos)
    pair_rec, positions = pairs // fanout, pairs % fanout
    start = np.zeros(n_records + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair_rec, minlength=n_records), out=start[1:])
    if fanout <= _MASK_FANOUT:
        bits = np.left_shift(np.int64(1), positions)
        key = np.add.reduceat(bits, start[:-1])
        group = np.unique(key, return_inverse=True)[1]
    else:
        width = int(np.diff(start).max())
        rows = np.full((n_records, width), -1, dtype=np.int64)
        rows[pair_rec, np.arange(len(pairs)) - start[pair_rec]] = positions
        group = np.unique(rows, axis=0, return_inverse=True)[1]
    return group.reshape(-1).astype(np.int64), positions, start


def _rank_within_group(group: np.ndarray) -> np.ndarray:
    """For a sequence of group labels, each element's rank among the earlier ones of its group."""
    order = np.argsort(group, kind="stable")
    ordered = group[order]
    first = np.searchsorted(ordered, ordered, side="left")
    rank = np.empty(len(group), dtype=np.int64)
    rank[order] = np.arange(len(group)) - first
    return rank


def _balance(group: np.ndarray, rec_gain: np.ndarray, k: int) -> np.ndarray:
    """Which records end in the leftover (R2).

    Args:
        group: the child-subset group of each record (labels ``0 .. G-1``).
        rec_gain: each record's gain from the expansion (its loss if left unexpanded).
        k: the anonymity parameter.

    Returns:
        A bool per record: in the leftover.
    """
    counts = np.bincount(group)
    big = counts >= k
    leftover = ~big[group]
    n_left = int(leftover.sum())
    if n_left == 0 or n_left >= k or not big.any():
        return leftover
    deficit = k - n_left
    spare = np.where(big, counts - k, 0)
    if int(spare.sum()) >= deficit:
        movable = np.flatnonzero(~leftover)
        order = movable[np.lexsort((movable, rec_gain[movable]))]
        rank = _rank_within_group(group[order])
        chosen = order[rank < spare[group[order]]][:deficit]
        leftover[chosen] = True
        return leftover
    total = np.bincount(group, weights=rec_gain, minlength=len(counts))
    first = np.unique(group, return_index=True)[1]
    bigs = np.flatnonzero(big)
    merged = bigs[np.lexsort((first[bigs], total[bigs]))[0]]
    return leftover | (group == merged)


def _split_by(labels: np.ndarray, values: np.ndarray, keys: np.ndarray) -> list[np.ndarray]:
    """The elements of ``values`` per label in ``keys`` (order kept within each)."""
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    lo = np.searchsorted(ordered, keys, side="left")
    hi = np.searchsorted(ordered, keys, side="right")
    return [values[order[a:b]] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]


def _refine(part: _Part, gen: np.ndarray, tables: _Tables) -> _Step | None:
    """One step of the top-down search on ``part`` (steps 1-5 of the module docstring).

    Args:
        part: the partition.
        gen: the current generalized node of each of ``part.occs``.
        tables: the run's static arrays.

    Returns:
        The partitions it becomes and the generalization changes, or ``None`` when the
        partition is final (no node left to expand).
    """
    leaf = tables.leaf[part.occs]
    child, gain = _children_and_gain(gen, leaf, tables)
    node = _pick_node(part.cut, part.excluded, gen, gain, tables)
    if node is None:
        return None
    n_records = len(part.records)
    under = gen == node
    rec = np.searchsorted(part.records, tables.record[part.occs])
    kids = tables.children[tables.child_offsets[node] : tables.child_offsets[node + 1]]
    pos = np.searchsorted(kids, child[under])
    group, positions, start = _subset_groups(rec[under], pos, n_records, len(kids))
    rec_gain = np.bincount(rec[under], weights=gain[under], minlength=n_records)
    leftover = _balance(group, rec_gain, tables.k)
    excluded = part.excluded + (node,)
    if leftover.all():
        empty = np.zeros(0, dtype=np.int64)
        return _Step((_Part(part.records, part.occs, part.cut, excluded),), empty, empty)
    label = np.where(leftover, -1, group)
    keys = distinct_ints(label[~leftover])
    rest = part.cut[part.cut != node]
    parts = []
    for records, occs in zip(
        _split_by(label, part.records, keys), _split_by(label[rec], part.occs, keys), strict=True
    ):
        first = int(np.searchsorted(part.records, records[0]))
        reached = kids[positions[start[first] : start[first + 1]]]
        parts.append(_Part(records, occs, np.union1d(rest, reached), part.excluded))
    if leftover.any():
        keep = leftover[rec]
        parts.append(_Part(part.records[leftover], part.occs[keep], part.cut, excluded))
    moved = under & ~leftover[rec]
    return _Step(tuple(parts), part.occs[moved], child[moved])


def _settle(part: _Part, tables: _Tables) -> _Part:
    """The final partition of a partition of fewer than ``2k`` records, in one pass.

    With fewer than ``2k`` records, an expansion can only leave the records together:
    at most one child subset holds ``k`` of them, and the others (fewer than ``k``) can
    only be topped up by emptying it below ``k``, so it is merged whole. An expansion
    therefore changes the partition only when all its records reach the same child
    subset, and those expansions commute: the final set expands, from ``part.cut`` down,
    every non-excluded node under which no child is reached by some records but not all.

    Args:
        part: a partition of fewer than ``2k`` records.
        tables: the run's static arrays.

    Returns:
        The partition with its final generalized set.
    """
    n_nodes = len(tables.level)
    leaf = tables.leaf[part.occs]
    rec = np.searchsorted(part.records, tables.record[part.occs])
    pairs = distinct_ints(rec * n_nodes + tables.ancestor[:, leaf])
    count = np.bincount(pairs % n_nodes, minlength=n_nodes)
    full = count == len(part.records)
    split = np.zeros(n_nodes + 1, dtype=bool)
    split[tables.parent[(count > 0) & ~full]] = True
    expand = ~split[:n_nodes] & (tables.level > 0)
    expand[np.asarray(part.excluded, dtype=np.int64)] = False
    frontier, final = part.cut, []
    while frontier.size:
        grow = expand[frontier]
        final.append(frontier[~grow])
        grown = np.zeros(n_nodes + 1, dtype=bool)
        grown[frontier[grow]] = True
        frontier = np.flatnonzero(full & grown[tables.parent])
    cut = np.sort(np.concatenate(final))
    return _Part(part.records, part.occs, cut, part.excluded)


def _search(sets: ItemSets, tree: ItemTree, records: np.ndarray, k: int) -> list[_Part]:
    """Run the top-down search over the non-empty ``records``; the final partitions."""
    tables = _tables(sets, tree, k)
    gen = np.full(len(tables.leaf), tree.root, dtype=np.int64)
    occs = np.flatnonzero(np.isin(tables.record, records))  # every occurrence: empties have none
    root = np.array([tree.root], dtype=np.int64)
    stack = [_Part(records, occs, root, ())]
    finals: list[_Part] = []
    while stack:
        part = stack.pop()
        if len(part.records) < 2 * k:
            finals.append(_settle(part, tables))
            continue
        step = _refine(part, gen[part.occs], tables)
        if step is None:
            finals.append(part)
            continue
        gen[step.occs] = step.nodes
        stack.extend(reversed(step.parts))
    return finals


def _check(sets: ItemSets, tree: ItemTree, k: int) -> None:
    """Reject a ``k`` below 1 and sets holding anything but leaf ids."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    nodes = np.asarray(sets.nodes)
    if nodes.size and (nodes.min() < 0 or nodes.max() >= tree.n_leaves):
        raise ValueError(
            f"item sets must hold leaf ids 0..{tree.n_leaves - 1} of the taxonomy, "
            f"found node ids {int(nodes.min())}..{int(nodes.max())}"
        )


def _assemble(n: int, groups: list[tuple[np.ndarray, np.ndarray]]) -> SetPartition:
    """The result from the final (records, generalized set) groups; others suppressed.

    Groups with equal sets share one partition number (R6); numbers follow the first
    record of each distinct set.
    """
    by_set: dict[tuple[int, ...], list[np.ndarray]] = {}
    for records, cut in groups:
        by_set.setdefault(tuple(cut.tolist()), []).append(records)
    distinct = sorted(by_set, key=lambda s: min(int(r.min()) for r in by_set[s]))
    partition = np.full(n, -1, dtype=np.int64)
    for index, key in enumerate(distinct):
        for records in by_set[key]:
            partition[records] = index
    cut_nodes = [np.asarray(key, dtype=np.int64) for key in distinct]
    cut_len = np.array([len(c) for c in cut_nodes] + [0], dtype=np.int64)
    cut_off = np.zeros(len(cut_len) + 1, dtype=np.int64)
    np.cumsum(cut_len, out=cut_off[1:])
    flat = np.concatenate(cut_nodes) if cut_nodes else np.zeros(0, dtype=np.int64)
    lengths = cut_len[partition]  # -1 picks the trailing 0: suppressed rows are empty
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    starts = cut_off[np.where(partition < 0, len(cut_nodes), partition)]
    index = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    generalized = ItemSets(offsets=offsets, nodes=flat[index].astype(np.int64))
    return SetPartition(generalized=generalized, partition=partition, suppressed=partition < 0)


def partition_sets(sets: ItemSets, tree: ItemTree, k: int) -> SetPartition:
    """Generalize every record's set so that each published set is shared by ``k`` records.

    He and Naughton's Partition (2009) as Gong et al. 2016 uses it; the module docstring gives
    the algorithm and the readings R1-R6 it fixes.

    Args:
        sets: one item set per record (leaf ids of ``tree``).
        tree: the item taxonomy.
        k: the anonymity parameter (at least 1).

    Returns:
        The generalized set, partition number and suppression flag of every record, in
        input order. Every non-suppressed record's generalized set covers each of its
        items by exactly one node, each node covering at least one; every distinct set
        among the non-suppressed records is held by at least ``k`` of them.

    Raises:
        ValueError: ``k < 1`` or a set holds a node id that is not a leaf of ``tree``.
    """
    _check(sets, tree, k)
    n = len(sets)
    sizes = sets.sizes()
    groups: list[tuple[np.ndarray, np.ndarray]] = []
    empty = np.flatnonzero(sizes == 0)
    if len(empty) >= k:
        groups.append((empty, np.zeros(0, dtype=np.int64)))
    filled = np.flatnonzero(sizes > 0)
    if len(filled) >= k:
        groups += [(p.records, p.cut) for p in _search(sets, tree, filled, k)]
    return _assemble(n, groups)


def information_loss(sets: ItemSets, generalized: ItemSets, tree: ItemTree) -> float:
    """He and Naughton's NCP of a generalized dataset: the mean NCP over all item occurrences.

    He and Naughton (2009, section 2): the NCP of a generalized item is 0 for a leaf and
    ``|leaves(node)| / |I|`` otherwise; a generalized transaction's NCP weighs each
    generalized item by the number of original items it covers, and the dataset's NCP
    weighs each transaction by its size, so the whole is the sum, over every original
    item occurrence, of the NCP of the generalized item covering it, divided by the total
    number of item occurrences. An item that no node of its record's generalized set
    covers (a suppressed record) counts as fully lost, NCP 1.

    Args:
        sets: the original sets (leaf ids).
        generalized: the generalized set of every record, same order.
        tree: the item taxonomy.

    Returns:
        The NCP in ``[0, 1]``; 0.0 when there is no item at all.

    Raises:
        ValueError: the two have different lengths, or a record's generalized set holds
            nested nodes (one covering another).
    """
    if len(sets) != len(generalized):
        raise ValueError(f"{len(sets)} original sets but {len(generalized)} generalized sets")
    total = int(sets.offsets[-1] - sets.offsets[0]) if len(sets) else 0
    if total == 0:
        return 0.0
    covering = covering_nodes(sets, generalized, tree)
    safe = np.maximum(covering, 0)
    ncp = np.where(covering >= 0, tree.item_ncp(safe), 1.0)
    return float(ncp.sum() / total)
