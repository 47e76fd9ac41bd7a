"""Anatomize (Xiao and Tao 2006) over TBuckets, as APA and PAA use it (Gong et al. 2016, 3.2).

Anatomy (Xiao and Tao, "Anatomy: simple and effective privacy preservation", VLDB
2006) publishes a table as a quasi-identifier table and a sensitive table joined by a
group id; its algorithm Anatomize hashes the records into one bucket per sensitive
value, then repeatedly forms a group of ``l`` records taken from the ``l`` largest
buckets, and finally assigns the few residual records to groups that hold no record
of their value. Gong et al. 2016 (section 3.2) runs it with the TBuckets (definition 2: the
records sharing one transaction set) as the buckets, "with an improved handling of
the remaining records", which it does not spell out; :func:`anatomize` fixes every
choice below.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from sparkanon.algorithms.transaction._result import ABOVE_SHARE, KEPT, LEFTOVER


@dataclass(frozen=True)
class AnatomyGroups:
    """The groups Anatomize forms.

    Attributes:
        group: int64 per record: its group id ``0 .. G-1`` in the order the groups were
            formed, ``-1`` if suppressed.
        reason: int8 per record: ``KEPT`` (0), ``LEFTOVER`` (2: no group was free of its
            bucket) or ``ABOVE_SHARE`` (3: its bucket exceeded the share cap).
    """

    group: np.ndarray
    reason: np.ndarray

    @property
    def n_groups(self) -> int:
        """Number of groups ``G``."""
        return int(self.group.max()) + 1 if (self.group >= 0).any() else 0


def _fits(sizes: np.ndarray, l: int, cap: int) -> bool:  # noqa: E741 (the paper's name)
    """Whether buckets cut to ``cap`` records have at most ``1/l`` of the records in each."""
    return l * cap <= int(np.minimum(sizes, cap).sum())


def share_cap(sizes: np.ndarray, l: int) -> int:  # noqa: E741 (the paper's name)
    """The most records a bucket may keep so that every bucket holds at most ``1/l`` of all.

    Xiao and Tao's eligibility condition: Anatomize places every record in an
    ``l``-diverse group if and only if no bucket holds more than ``n / l`` of the ``n``
    records. Cutting every bucket to ``c`` records (keeping the rest) makes the table
    eligible when ``l * c <= sum(min(size, c))``; this returns the largest such ``c``
    (the buckets' largest size when the table is already eligible). The left side
    minus the right is convex in ``c`` and 0 at ``c = 0``, so the admissible ``c`` form
    an interval ``0 .. c*``, found by bisection.

    It is also the cut that suppresses fewest records: keeping at most ``M`` records
    per bucket keeps ``sum(min(size, M))``, which grows with ``M``.

    Consequences: with fewer than ``l`` non-empty buckets the cap is 0 (nothing can be
    published); with at least ``l`` buckets of at least ``k`` records each, the cap is at
    least ``k`` (``c = k`` is admissible), so cutting never leaves a bucket between 1 and
    ``k - 1`` records.

    Args:
        sizes: records per bucket (non-negative integers).
        l: the diversity parameter, at least 1.

    Returns:
        The cap ``c``, between 0 and ``max(sizes)``.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    top = int(sizes.max()) if sizes.size else 0
    if _fits(sizes, l, top):
        return top
    lo, hi = 0, top  # _fits(lo) holds, _fits(hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _fits(sizes, l, mid):
            lo = mid
        else:
            hi = mid
    return lo


def beyond_cap(label: np.ndarray, cap: int) -> np.ndarray:
    """Which records come after the first ``cap`` of their label, in input order.

    Args:
        label: int64 label per record (a bucket or a published-set code).
        cap: records each label keeps.

    Returns:
        Boolean mask: ``True`` for a record preceded by at least ``cap`` records of its label.
    """
    label = np.asarray(label, dtype=np.int64)
    order = np.argsort(label, kind="stable")
    sorted_label = label[order]
    first = np.flatnonzero(np.r_[True, sorted_label[1:] != sorted_label[:-1]])
    runs = np.diff(np.r_[first, label.size])
    rank = np.arange(label.size, dtype=np.int64) - np.repeat(first, runs)
    out = np.zeros(label.size, dtype=bool)
    out[order] = rank >= cap
    return out


def anatomize(bucket: np.ndarray, l: int) -> AnatomyGroups:  # noqa: E741 (the paper's name)
    """Form ``l``-diverse groups over buckets (Anatomize: Xiao and Tao 2006; Gong et al. 2016).

    Every group holds at most one record of each bucket and at least ``l`` records, so
    in every group each bucket's share is at most ``1/l`` (Gong et al. 2016, definition 7).

    The steps, every choice fixed so the result is deterministic:

    1. *Share cap* (our addition, reason 3). Anatomize succeeds only when no bucket
       holds more than ``n / l`` records. Each bucket is cut to :func:`share_cap`
       records, the largest cap that makes the rest eligible (cutting to
       ``floor(n / l)`` is not enough: the cut itself lowers ``n``); a cut bucket keeps
       its first records in input order and its later ones are suppressed with reason
       ``ABOVE_SHARE``. With fewer than ``l`` distinct buckets every record is
       suppressed this way.
    2. *Group creation* (Xiao and Tao's group-creation step). While at least ``l``
       buckets are non-empty, form a new group (ids ``0, 1, ...`` in creation order)
       of one record from each of the ``l`` largest non-empty buckets, ranked by
       remaining records (more first), then bucket id (smaller first). Within a bucket
       records leave in input order.
    3. *Residue assignment* (their residue-assignment step). The buckets still
       non-empty are taken in the same rank order; each of their records, in input
       order, joins the lowest-id group that holds no record of its bucket yet, else it
       is suppressed with reason
       ``LEFTOVER``. After step 1 this never happens: on an eligible table group
       creation leaves at most one record in each bucket, so ``r < l`` residues (Xiao
       and Tao), and each finds a free group (its bucket of ``s <= n / l`` records lies
       in ``s - 1`` of the ``(n - r) / l > n / l - 1`` groups). The tests check it on
       random buckets.

    Gong et al. 2016, section 3.2 only says that the residue handling was improved; the authors'
    code (``half_anatomize.py`` of ``qiyuangong/ppdpes_core``) uses the same
    first-free-group rule, picks records at random and has no share cap.

    Args:
        bucket: int64 bucket id per record (any integers; a TBucket id in APA and PAA).
        l: the diversity parameter, at least 1 (``l = 1`` gives one group per record).

    Returns:
        The group of each record and the reason of each suppression.

    Raises:
        ValueError: ``l < 1`` or ``bucket`` not one-dimensional.
    """
    if l < 1:
        raise ValueError(f"l must be at least 1, got {l}")
    bucket = np.asarray(bucket, dtype=np.int64)
    if bucket.ndim != 1:
        raise ValueError(f"bucket must be one-dimensional, got shape {bucket.shape}")
    n = bucket.size
    group = np.full(n, -1, dtype=np.int64)
    reason = np.full(n, KEPT, dtype=np.int8)
    if n == 0:
        return AnatomyGroups(group=group, reason=reason)

    ids, code = np.unique(bucket, return_inverse=True)
    code = code.ravel()
    order = np.argsort(code, kind="stable")  # records bucket by bucket, input order inside
    sizes = np.bincount(code, minlength=ids.size)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))

    cap = share_cap(sizes, l)
    reason[beyond_cap(code, cap)] = ABOVE_SHARE
    left = np.minimum(sizes, cap)

    # Group creation: a heap keyed by (-remaining, bucket code); codes follow bucket ids.
    taken = np.zeros(ids.size, dtype=np.int64)
    heap = [(-int(s), b) for b, s in enumerate(left.tolist()) if s > 0]
    heapq.heapify(heap)
    members: list[list[int]] = [[] for _ in range(ids.size)]  # groups holding each bucket
    n_groups = 0
    while len(heap) >= l:
        picked = [heapq.heappop(heap) for _ in range(l)]
        for neg, b in picked:
            group[order[starts[b] + taken[b]]] = n_groups
            taken[b] += 1
            members[b].append(n_groups)
            if neg + 1 < 0:
                heapq.heappush(heap, (neg + 1, b))
        n_groups += 1

    # Residue assignment: the lowest-id group free of the record's bucket.
    while heap:
        _, b = heapq.heappop(heap)
        holding = set(members[b])
        g = 0
        for pos in range(starts[b] + taken[b], starts[b] + left[b]):
            while g < n_groups and g in holding:
                g += 1
            record = order[pos]
            if g < n_groups:
                group[record] = g
                g += 1
            else:
                reason[record] = LEFTOVER
    return AnatomyGroups(group=group, reason=reason)
