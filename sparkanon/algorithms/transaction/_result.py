"""What APA and PAA return: a group per record and a published generalized set per record.

Gong et al. 2016 (section 3.2) publishes relational-transaction data as two tables joined by
the group id (the lossy decomposition of Xiao and Tao 2006, Gong et al. 2016, definition 5):
the relational table RT holds each record's relational values and its group id; the
transaction table TT holds, per group, each published generalized set and how many of
the group's records carry it. :class:`RTResult` holds both in per-record form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sparkanon.algorithms.transaction.set_partition import partition_sets
from sparkanon.attributes.itemsets import ItemSets, ItemTree

KEPT = 0
"""``suppressed_reason``: the record is published."""
PARTITION = 1
"""``suppressed_reason``: ``partition_sets`` could not place it in a partition of ``k`` records."""
LEFTOVER = 2
"""``suppressed_reason``: Anatomize's residue step found no group free of its TBucket."""
ABOVE_SHARE = 3
"""``suppressed_reason``: its TBucket held more than the share Anatomize can spread over groups."""
MERGE = 4
"""``suppressed_reason``: APA's group merging ran out of groups before reaching ``l``."""

REASONS: dict[int, str] = {
    KEPT: "kept",
    PARTITION: "partition",
    LEFTOVER: "anatomize_leftover",
    ABOVE_SHARE: "bucket_above_share",
    MERGE: "merge_below_l",
}
"""Each ``suppressed_reason`` code by its name in reports."""


def check_kl(k: int, l: int) -> None:  # noqa: E741 (the paper's name)
    """Fail unless ``k`` and ``l`` are integers of at least 1.

    Raises:
        ValueError: naming the bad parameter and its value.
    """
    for name, value in (("k", k), ("l", l)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an integer of at least 1, got {value!r}")


def dense_groups(group: np.ndarray) -> np.ndarray:
    """Renumber group ids ``0 .. G-1`` in the order of each group's first record.

    Args:
        group: int64 group label per record (any non-negative labels), ``-1`` if suppressed.

    Returns:
        A new int64 array: the group holding the lowest record index is 0, the group
        whose first record comes next is 1, and so on; ``-1`` stays ``-1``.
    """
    group = np.asarray(group, dtype=np.int64)
    out = np.full(group.shape, -1, dtype=np.int64)
    kept = np.flatnonzero(group >= 0)
    if kept.size == 0:
        return out
    labels, first = np.unique(group[kept], return_index=True)
    rank = np.empty(labels.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(labels.size, dtype=np.int64)
    out[kept] = rank[np.searchsorted(labels, group[kept])]
    return out


def set_codes(sets: ItemSets) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """A dense code per record for its set: equal sets share a code (a TBucket, definition 2).

    Args:
        sets: one set per record.

    Returns:
        ``(code, distinct)``: ``code[i]`` indexes ``distinct``, the distinct sets sorted
        as tuples of node ids (so codes do not depend on the records' order).
    """
    keys = sets.keys()
    distinct = sorted(set(keys))
    index = {key: i for i, key in enumerate(distinct)}
    code = np.fromiter((index[key] for key in keys), dtype=np.int64, count=len(keys))
    return code, distinct


def gather_sets(sets: ItemSets, rows: np.ndarray) -> ItemSets:
    """The sets of the records at ``rows``, in that order (vectorised row gather).

    Args:
        sets: one set per record.
        rows: int64 record indices (repeats allowed).

    Returns:
        A new :class:`ItemSets` of ``len(rows)`` sets.
    """
    rows = np.asarray(rows, dtype=np.int64)
    starts = sets.offsets[rows]
    lengths = sets.offsets[rows + 1] - starts
    offsets = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    shift = np.repeat(starts - offsets[:-1], lengths)
    nodes = sets.nodes[shift + np.arange(offsets[-1], dtype=np.int64)]
    return ItemSets(offsets=offsets, nodes=nodes.astype(np.int64))


def overlay_sets(base: ItemSets, rows: np.ndarray, sub: ItemSets) -> ItemSets:
    """``base`` with the set of record ``rows[i]`` replaced by ``sub``'s set ``i``.

    Args:
        base: one set per record.
        rows: int64 indices into ``base``, distinct, as many as ``sub`` holds.
        sub: the replacing sets.

    Returns:
        A new :class:`ItemSets` as long as ``base``.

    Raises:
        ValueError: ``rows`` and ``sub`` differ in length.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size != len(sub):
        raise ValueError(f"{rows.size} rows to replace but {len(sub)} replacing sets")
    n = len(base)
    stacked = ItemSets(
        offsets=np.concatenate((base.offsets[:-1], sub.offsets + base.nodes.size)),
        nodes=np.concatenate((base.nodes, sub.nodes)).astype(np.int64),
    )
    source = np.arange(n, dtype=np.int64)
    source[rows] = n + np.arange(rows.size, dtype=np.int64)
    return gather_sets(stacked, source)


def partition_rows(
    sets: ItemSets, rows: np.ndarray, tree: ItemTree, k: int, reason: np.ndarray
) -> tuple[np.ndarray, ItemSets]:
    """Generalize the sets of the records at ``rows`` to k-anonymity (``partition_sets``).

    The step both APA and PAA take (definition 6): the records Partition suppresses get
    reason :data:`PARTITION` in ``reason`` (updated in place).

    Args:
        sets: the original item sets, one per record of the block.
        rows: int64 indices of the records to generalize, distinct and ascending (all
            of them: the sets are taken as they are, not copied).
        tree: the item taxonomy the sets' node ids refer to.
        k: the smallest TBucket of published sets, at least 1.
        reason: int8 suppression reason per record of the block (updated).

    Returns:
        ``(stay, published)``: the indices (into the block) of the records Partition
        kept, ascending, and their generalized sets in that order.
    """
    chosen = sets if rows.size == len(sets) else gather_sets(sets, rows)
    part = partition_sets(chosen, tree, k)
    dropped = np.asarray(part.suppressed, dtype=bool)
    reason[rows[dropped]] = PARTITION
    return rows[~dropped], gather_sets(part.generalized, np.flatnonzero(~dropped))


def decompose(
    sets: ItemSets,
    group: np.ndarray,
    reason: np.ndarray,
    stay: np.ndarray,
    published: ItemSets,
    final: np.ndarray,
) -> RTResult:
    """The decomposition both APA and PAA end with: dense group ids and published sets.

    Args:
        sets: the original item sets, one per record of the block.
        group: int64 group id per record (any non-negative labels), ``-1`` if suppressed.
        reason: int8 suppression reason per record.
        stay: indices of the records whose generalized sets are ``published``.
        published: the generalized set of each record of ``stay``, in that order.
        final: boolean mask over ``stay`` of the records published in the end.

    Returns:
        Each record's dense group id (groups numbered in the order of their first
        record), its published set (a suppressed record keeps its original set) and
        its reason.
    """
    generalized = overlay_sets(sets, stay[final], gather_sets(published, np.flatnonzero(final)))
    return RTResult(group=dense_groups(group), generalized=generalized, suppressed_reason=reason)


@dataclass(frozen=True)
class RTResult:
    """The output of APA or PAA over one block of records.

    Attributes:
        group: int64 per record: its group id ``0 .. G-1`` (dense, numbered in the order
            of each group's first record), ``-1`` if suppressed.
        generalized: per record (same order) its published generalized set (node ids);
            a suppressed record keeps its original set, which is not published.
        suppressed_reason: int8 per record: :data:`KEPT` (0), :data:`PARTITION` (1),
            :data:`LEFTOVER` (2), :data:`ABOVE_SHARE` (3) or :data:`MERGE` (4).
    """

    group: np.ndarray
    generalized: ItemSets
    suppressed_reason: np.ndarray

    @property
    def n_groups(self) -> int:
        """Number of groups ``G``."""
        return int(self.group.max()) + 1 if (self.group >= 0).any() else 0

    def kept(self) -> np.ndarray:
        """Boolean mask of the published records."""
        return self.group >= 0
