"""RMR: (k, k^m)-anonymity of relational-transaction data (Gong et al. 2016's baseline).

Poulis, Loukides, Gkoulalas-Divanis and Skiadopoulos, "Anonymizing data with
relational and transaction attributes", ECML/PKDD 2013 (Gong et al. 2016 reference [2]).
A record has quasi-identifiers (the relational part) and a set of items (the
transaction part). The published table is *(k, k^m)-anonymous* when its records
fall into clusters of at least ``k`` records that share one generalized value per
quasi-identifier, and within every cluster the generalized sets are k^m-anonymous
(Terrovitis et al. 2008: every combination of at most ``m`` published items held by a
set of the cluster is held by ``k`` of its sets or more). Gong et al. 2016 runs RMR with
``m = 2`` and ``delta = 0.65`` (section 4.1).

RMR has three steps: cluster the records on the relational part into clusters of
``k`` or more; merge clusters while the relational information loss stays within
``delta`` (merging helps the transaction part: a larger cluster needs coarser items
less often, the paper's framework bounds the relational loss and lowers the
transaction loss); anonymize each cluster's sets with Apriori Anonymization
(:mod:`sparkanon.algorithms.transaction._apriori`, one cut per cluster).

Readings (each one fixed here and tested in ``tests/algorithms/transaction/test_rmr.py``):

* **Relational loss.** ``NCP(c)`` of a cluster is the sum over quasi-identifiers of
  the NCP of its lowest and highest code (Xu et al. 2006, the existing
  :class:`~sparkanon.attributes.ranges.RangeNcp`: a range's share of the domain, a
  categorical range's lowest common ancestor, ``*`` for several nominal values). The
  paper's ``Rum(c) = |c| * NCP(c)``; the table's is ``sum_c Rum(c) / (n * d)``, the mean
  NCP per record and quasi-identifier in ``[0, 1]`` (the normalisation of the authors'
  Python, GitHub qiyuangong/ppdpes_core ``algorithm/RT_ANON.py``), which ``delta`` bounds.
* **Step 1, clusters (greedy k-member, Byun et al. 2007, with NCP as the cost).** The
  first reference is record 0 (the paper's and Gong's random record, made
  deterministic). A cluster starts at the free record farthest from the reference (the
  previous cluster's start), the distance of two records being the NCP of their pair;
  it grows one record at a time by the free record that gives it the least NCP, up to
  ``k`` records; it becomes the next reference. When fewer than ``k`` records are free
  each of them, in index order, joins the cluster whose ``Rum`` grows least. Ties go to
  the lowest record or cluster index. (Gong's port instead takes a random record and
  its ``k - 1`` nearest records.)
* **Step 2, merging (the paper's Rmerge_R, Gong et al. 2016's "RMR"; the "R" is how the
  partner is chosen).** The anchor is the cluster of least ``Rum``; its partner is the
  cluster with the most similar relational values, the one whose union with the paper
  has the least ``Rum``. The merge is kept when the table's relational loss after it
  is at most ``delta``; the first merge that would exceed ``delta`` ends the step
  (Gong's port; merging never lowers ``Rum``). The variants that pick the partner by
  its transactions (Rmerge_T, the bit-vector transaction distance) or by both ranks
  (Rmerge_RT) are not RMR. Ties go to the lowest cluster index.
* **Step 3, sets.** Each final cluster's sets are k^m-anonymized by
  :func:`~sparkanon.algorithms.transaction._apriori.apriori_anonymize` with the
  cluster's own cut (global within the cluster, local across clusters). The paper
  re-anonymizes the sets of every merged pair; the merge decisions use the relational
  loss only, so anonymizing the final clusters once gives the same table. A cluster
  with fewer than ``k`` non-empty sets has all its sets suppressed (published empty).
* **Published relational values.** Every record of a cluster publishes the cluster's
  lowest and highest code per quasi-identifier (:attr:`RMRResult.qi_lo`,
  :attr:`RMRResult.qi_hi`); for a categorical quasi-identifier with a taxonomy the
  range ``[lo, hi]`` of leaf codes stands for their lowest common ancestor
  (:meth:`~sparkanon.attributes.hierarchy.Taxonomy.common_ancestor`), as elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from sparkanon.algorithms.transaction._apriori import apriori_anonymize
from sparkanon.algorithms.transaction._result import dense_groups
from sparkanon.attributes.itemsets import ItemSets, ItemTree


class RangeNcpLike(Protocol):
    """NCP of one quasi-identifier from lowest and highest codes (e.g. ``RangeNcp``)."""

    def of_range(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """NCP, in ``[0, 1]``, of sets whose lowest and highest codes are ``lo`` and ``hi``."""
        ...


@dataclass(frozen=True)
class RMRResult:
    """What :func:`rmr` publishes, per record in input order.

    Attributes:
        cluster: int64 cluster id ``0 .. C-1``, numbered in the order of each cluster's
            first record.
        qi_lo: ``(n, d)``, the cluster's lowest code per quasi-identifier (dtype of the
            input codes).
        qi_hi: ``(n, d)``, the cluster's highest code per quasi-identifier.
        generalized: the record's k^m-anonymized set (node ids of the item taxonomy).
    """

    cluster: np.ndarray
    qi_lo: np.ndarray
    qi_hi: np.ndarray
    generalized: ItemSets

    @property
    def n_clusters(self) -> int:
        """Number of clusters ``C``."""
        return int(self.cluster.max()) + 1 if self.cluster.size else 0


def range_ncp(lo: np.ndarray, hi: np.ndarray, qi_ncp: Sequence[RangeNcpLike]) -> np.ndarray:
    """Summed NCP over the quasi-identifiers of each row of ranges.

    Args:
        lo: ``(c, d)`` lowest codes.
        hi: ``(c, d)`` highest codes.
        qi_ncp: one NCP per quasi-identifier (column).

    Returns:
        ``(c,)`` float: ``sum_j NCP_j(lo[:, j], hi[:, j])``.
    """
    total = np.zeros(lo.shape[0], dtype=float)
    for j, ncp in enumerate(qi_ncp):
        total += np.asarray(ncp.of_range(lo[:, j], hi[:, j]), dtype=float)
    return total


def greedy_clusters(codes: np.ndarray, qi_ncp: Sequence[RangeNcpLike], k: int) -> np.ndarray:
    """Step 1: clusters of at least ``k`` records by greedy k-member with NCP (see above).

    Args:
        codes: ``(n, d)`` quasi-identifier codes, ``n >= k``.
        qi_ncp: one NCP per column.
        k: the least cluster size.

    Returns:
        int64 cluster label per record, ``0 .. n // k - 1`` in the order formed.
    """
    n = codes.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    free = np.ones(n, dtype=bool)
    reference = 0
    n_clusters = 0
    while free.sum() >= k:
        rows = np.flatnonzero(free)
        row = codes[reference][None, :]
        far = range_ncp(np.minimum(codes[rows], row), np.maximum(codes[rows], row), qi_ncp)
        start = int(rows[np.argmax(far)])
        lo, hi = codes[start].copy(), codes[start].copy()
        free[start] = False
        labels[start] = n_clusters
        for _ in range(k - 1):
            rows = np.flatnonzero(free)
            new_lo, new_hi = np.minimum(codes[rows], lo), np.maximum(codes[rows], hi)
            best = int(np.argmin(range_ncp(new_lo, new_hi, qi_ncp)))
            lo, hi = new_lo[best], new_hi[best]
            free[rows[best]] = False
            labels[rows[best]] = n_clusters
        reference = start
        n_clusters += 1
    _place_leftovers(codes, qi_ncp, labels, n_clusters)
    return labels


def _place_leftovers(
    codes: np.ndarray, qi_ncp: Sequence[RangeNcpLike], labels: np.ndarray, n_clusters: int
) -> None:
    """Put every unlabelled record, in index order, where the cluster's ``Rum`` grows least."""
    left = np.flatnonzero(labels < 0)
    if left.size == 0:
        return
    lo, hi, size = cluster_ranges(codes, labels, n_clusters)
    for r in left:
        new_lo, new_hi = np.minimum(lo, codes[r]), np.maximum(hi, codes[r])
        growth = (size + 1) * range_ncp(new_lo, new_hi, qi_ncp) - size * range_ncp(lo, hi, qi_ncp)
        c = int(np.argmin(growth))
        lo[c], hi[c] = new_lo[c], new_hi[c]
        size[c] += 1
        labels[r] = c


def cluster_ranges(
    codes: np.ndarray, labels: np.ndarray, n_clusters: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lowest and highest code per cluster and column, and the cluster sizes.

    Args:
        codes: ``(n, d)`` codes.
        labels: cluster label per record (``-1``: none, ignored).
        n_clusters: number of clusters.

    Returns:
        ``(lo, hi, size)``: ``(C, d)``, ``(C, d)`` and ``(C,)`` int64.
    """
    kept = labels >= 0
    d = codes.shape[1]
    lo = np.empty((n_clusters, d), dtype=codes.dtype)
    hi = np.empty((n_clusters, d), dtype=codes.dtype)
    size = np.bincount(labels[kept], minlength=n_clusters).astype(np.int64)
    order = np.flatnonzero(kept)[np.argsort(labels[kept], kind="stable")]
    starts = np.concatenate([[0], np.cumsum(size)[:-1]])
    nonempty = size > 0
    if d and order.size:
        lo[nonempty] = np.minimum.reduceat(codes[order], starts[nonempty], axis=0)
        hi[nonempty] = np.maximum.reduceat(codes[order], starts[nonempty], axis=0)
    return lo, hi, size


def merge_clusters(
    codes: np.ndarray, labels: np.ndarray, qi_ncp: Sequence[RangeNcpLike], delta: float
) -> np.ndarray:
    """Step 2 (Rmerge_R): merge least-``Rum`` clusters with their nearest while within ``delta``.

    Args:
        codes: ``(n, d)`` quasi-identifier codes.
        labels: cluster label per record, ``0 .. C-1``.
        qi_ncp: one NCP per column.
        delta: the bound on the table's relational loss ``sum_c Rum(c) / (n * d)``.

    Returns:
        The merged cluster label per record (labels of the surviving clusters).
    """
    n, d = codes.shape
    n_clusters = int(labels.max()) + 1 if n else 0
    lo, hi, size = cluster_ranges(codes, labels, n_clusters)
    rum = size * range_ncp(lo, hi, qi_ncp)
    total = float(rum.sum())
    norm = float(n * d) if d else 1.0
    alive = np.ones(n_clusters, dtype=bool)
    into = np.arange(n_clusters, dtype=np.int64)
    while alive.sum() >= 2:
        ids = np.flatnonzero(alive)
        anchor = int(ids[np.argmin(rum[ids])])
        others = ids[ids != anchor]
        new_lo, new_hi = np.minimum(lo[others], lo[anchor]), np.maximum(hi[others], hi[anchor])
        merged = (size[others] + size[anchor]) * range_ncp(new_lo, new_hi, qi_ncp)
        j = int(np.argmin(merged))
        partner = int(others[j])
        after = total - rum[anchor] - rum[partner] + merged[j]
        if after / norm > delta:
            break
        keep, gone = min(anchor, partner), max(anchor, partner)
        lo[keep], hi[keep] = new_lo[j], new_hi[j]
        size[keep] = size[anchor] + size[partner]
        rum[keep] = merged[j]
        alive[gone] = False
        into[into == gone] = keep
        total = after
    return into[labels]


def rmr(
    qi_codes: np.ndarray,
    qi_ncp: Sequence[RangeNcpLike],
    sets: ItemSets,
    tree: ItemTree,
    k: int,
    m: int = 2,
    delta: float = 0.65,
) -> RMRResult:
    """(k, k^m)-anonymize relational-transaction records with RMR (Poulis et al. 2013).

    Args:
        qi_codes: ``(n, d)`` encoded quasi-identifiers (one column per quasi-identifier).
        qi_ncp: the NCP of each column from lowest and highest codes (e.g.
            ``RangeNcp(kind)`` per kind).
        sets: one set of item (leaf) ids per record.
        tree: the item taxonomy.
        k: least records per cluster and least support of a published item combination.
        m: the largest item combination an attacker knows.
        delta: bound on the relational loss that merging may reach.

    Returns:
        The cluster, published ranges and generalized set of every record.

    Raises:
        ValueError: shapes disagree, ``k`` or ``m`` below 1, or ``0 < n < k``.
    """
    codes = np.asarray(qi_codes)
    if codes.ndim != 2 or codes.shape[1] != len(qi_ncp) or codes.shape[0] != len(sets):
        raise ValueError(
            f"qi_codes {codes.shape} must be (n, d) with d = {len(qi_ncp)} NCPs, n = {len(sets)}"
        )
    if k < 1 or m < 1:
        raise ValueError(f"k and m must be at least 1, got k={k}, m={m}")
    n = codes.shape[0]
    if n == 0:
        return RMRResult(
            cluster=np.zeros(0, dtype=np.int64),
            qi_lo=codes.copy(),
            qi_hi=codes.copy(),
            generalized=sets,
        )
    if n < k:
        raise ValueError(f"{n} records cannot form a cluster of k={k}")
    labels = dense_groups(merge_clusters(codes, greedy_clusters(codes, qi_ncp, k), qi_ncp, delta))
    n_clusters = int(labels.max()) + 1
    lo, hi, _ = cluster_ranges(codes, labels, n_clusters)
    rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * n
    for c in range(n_clusters):
        members = np.flatnonzero(labels == c)
        published = apriori_anonymize(sets.take(members), tree, k, m)
        for i, r in enumerate(members.tolist()):
            rows[r] = published.row(i)
    return RMRResult(
        cluster=labels,
        qi_lo=lo[labels],
        qi_hi=hi[labels],
        generalized=ItemSets.from_lists(rows),
    )
