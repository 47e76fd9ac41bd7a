"""PAA: partition, then anatomize over the generalized sets (Gong et al. 2016, Algorithm 2).

PAA generalizes the sets first (Partition, k-anonymity on the transaction part), so
the records sharing a published set form the TBuckets, then runs Anatomize with those
TBuckets as its buckets. Every group then holds at most one record of each published
set, and no merging stage is needed (Gong et al. 2016, section 3.2: the two steps "do not
interfere").
"""

from __future__ import annotations

import numpy as np

from sparkanon.algorithms.transaction._result import (
    KEPT,
    PARTITION,
    RTResult,
    check_kl,
    dense_groups,
    gather_sets,
    overlay_sets,
    set_codes,
)
from sparkanon.algorithms.transaction.anatomize import anatomize
from sparkanon.algorithms.transaction.set_partition import partition_sets
from sparkanon.attributes.itemsets import ItemSets, ItemTree


def paa(sets: ItemSets, tree: ItemTree, k: int, l: int) -> RTResult:  # noqa: E741
    """PAA over one block (Gong et al. 2016, Algorithm 2): partition, anatomize, decompose.

    1. ``partition_sets`` generalizes every record's set to k-anonymity (definition 6);
       the records it suppresses get reason 1.
    2. The TBuckets of the published sets (bucket ids in the sorted order of the
       distinct sets) are the buckets of
       :func:`~sparkanon.algorithms.transaction.anatomize.anatomize`, which forms the
       groups. Its share cap (reason 3) cuts a published set to ``c`` records where
       ``c`` is 0 or at least ``k`` (every TBucket holds at least ``k``), so the
       published TBuckets stay at ``k`` or more; its residue step suppresses nothing
       once the cap holds (reason 2 cannot occur).
    3. The decomposition: each kept record's dense group id (groups numbered in the
       order of their first record) and published generalized set.

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
    group = np.full(n, -1, dtype=np.int64)
    reason = np.full(n, KEPT, dtype=np.int8)
    if n == 0:
        return RTResult(group=group, generalized=sets, suppressed_reason=reason)
    part = partition_sets(sets, tree, k)
    dropped = np.asarray(part.suppressed, dtype=bool)
    reason[dropped] = PARTITION
    stay = np.flatnonzero(~dropped)
    published = gather_sets(part.generalized, stay)
    anatomy = anatomize(set_codes(published)[0], l)
    group[stay] = anatomy.group
    reason[stay] = anatomy.reason
    final = anatomy.group >= 0
    generalized = overlay_sets(sets, stay[final], gather_sets(published, np.flatnonzero(final)))
    return RTResult(group=dense_groups(group), generalized=generalized, suppressed_reason=reason)
