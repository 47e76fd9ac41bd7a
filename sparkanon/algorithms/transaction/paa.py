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
    RTResult,
    check_kl,
    decompose,
    partition_rows,
    set_codes,
)
from sparkanon.algorithms.transaction.anatomize import anatomize
from sparkanon.attributes.itemsets import ItemSets, ItemTree


def paa(sets: ItemSets, tree: ItemTree, k: int, l: int) -> RTResult:  # noqa: E741
    """PAA over one block (Algorithm 2 of Gong, Yang and Luo 2016): partition, anatomize, decompose.

    Arguments, result and errors as :func:`~sparkanon.algorithms.transaction.apa.apa`.

    1. :func:`~sparkanon.algorithms.transaction._result.partition_rows` generalizes every
       record's set to k-anonymity; the records it suppresses get reason 1.
    2. The TBuckets of the published sets (bucket ids in the sorted order of the
       distinct sets) are the buckets of
       :func:`~sparkanon.algorithms.transaction.anatomize.anatomize`, which forms the
       groups. Its share cap (reason 3) cuts a published set to ``c`` records where
       ``c`` is 0 or at least ``k`` (every TBucket holds at least ``k``), so the
       published TBuckets stay at ``k`` or more; its residue step suppresses nothing
       once the cap holds (reason 2 cannot occur).
    3. :func:`~sparkanon.algorithms.transaction._result.decompose`.
    """
    check_kl(k, l)
    n = len(sets)
    reason = np.full(n, KEPT, dtype=np.int8)
    group = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return RTResult(group=group, generalized=sets, suppressed_reason=reason)
    stay, published = partition_rows(sets, np.arange(n, dtype=np.int64), tree, k, reason)
    anatomy = anatomize(set_codes(published)[0], l)
    group[stay] = anatomy.group
    reason[stay] = anatomy.reason
    return decompose(sets, group, reason, stay, published, anatomy.group >= 0)
