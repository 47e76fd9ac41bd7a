"""k^m-anonymity of set-valued data by one cut of the item taxonomy: Apriori Anonymization.

Terrovitis, Mamoulis and Kalnis, "Privacy-preserving anonymization of set-valued
data", VLDB 2008 (Gong et al. 2016 reference [26]). An attacker knows up to ``m`` items of
a victim's set; the published sets are *k^m-anonymous* when every combination of at
most ``m`` items is supported by no published set or by at least ``k`` of them. The
items are generalized *globally*: a *cut* of the taxonomy (a set of nodes that covers
every leaf exactly once) replaces every item by the cut node above it, in every set.

Readings (each one fixed here and tested in ``tests/algorithms/transaction/test_rmr.py``):

* **Checking a generalized table.** Under one cut an attacker's items map to cut
  nodes (two items under one node collapse into one), and a published set supports
  them exactly when it holds those nodes. So the table is k^m-anonymous when every
  combination of at most ``m`` distinct nodes found together in some published set is
  held by at least ``k`` sets; :func:`km_anonymous` checks this by brute force. A
  record's published set is the distinct cut nodes of its items.
* **Apriori order (the paper's AA).** For ``i = 1 .. m`` the ``i``-itemsets of the
  current cut are counted, and each one held by fewer than ``k`` sets (a *violator*)
  is repaired by raising the cut. Raising a cut never lowers the support of a
  published itemset (a set holding a finer itemset holds its coarser image), so the
  itemsets of size below ``i`` stay k-anonymous and only size ``i`` is checked at step
  ``i``. The paper's count tree holds the support of every itemset of the expanded
  sets (each item with its ancestors), so the repair can read the support of any
  coarser version of a violator. Here the same numbers come from one holder vector
  per node (the sets holding a leaf under it): the support of a set of nodes is the
  number of sets holding all of them; the ``i``-itemsets of the current cut are
  counted in a hash table instead of a tree.
* **Repairing one violator (the paper's DA step).** The candidates raise each item of
  the violator to an ancestor or itself (at least one strictly); a chosen node under
  another chosen node drops out (it is covered). Among the candidates whose raised
  itemset is held by at least ``k`` sets the cheapest wins: the cost is the rise of
  the table's NCP, every item occurrence counting the NCP of the node that publishes
  it (``|leaves(node)| / |I|``, 0 for a leaf; He and Naughton's and Terrovitis' item
  NCP, :meth:`~sparkanon.attributes.itemsets.ItemTree.item_ncp`). Ties go to the
  lexicographically smallest tuple of raised nodes. Items outside the violator are
  never chosen, but every leaf under a raised node moves with it (it is a cut).
* **Order of repairs.** Violators are repaired in ascending order of their node-id
  tuples (a depth-first walk of a count tree whose items are ordered by id). Before a
  repair the violator is mapped through the cut as updated so far; when that image is
  already held by ``k`` sets it is skipped (the paper backtracks past itemsets that
  earlier repairs generalized). After the pass the ``i``-itemsets are counted again
  (a safety net: by the monotonicity above the second count finds no violator).
* **Only published itemsets are checked.** Gong's Python port (GitHub
  qiyuangong/Apriori_based_Anonymization, ``apriori_based_anon.py``) also repairs
  count-tree leaves made of ancestors above the cut and orders items by leaf count;
  we follow the paper's definition, which protects what is published.
* **Fewer than k non-empty sets.** Then the root itself is held by fewer than ``k``
  sets and no cut makes the table k^m-anonymous; the paper does not say what to do,
  Gong's port suppresses. :func:`apriori_anonymize` publishes every set empty (all
  items suppressed), which is k^m-anonymous.
* ``k <= 1`` needs nothing: the sets come back unchanged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import combinations, product

import numpy as np

from sparkanon.attributes.itemsets import ItemSets, ItemTree


def km_anonymous(sets: ItemSets, k: int, m: int) -> bool:
    """Whether every combination of at most ``m`` nodes found in a set is held by ``k`` sets.

    Brute force over the combinations present, each node an atomic item: the sets must
    come from one cut (no node under another one of the table), as
    :func:`apriori_anonymize` publishes them.

    Args:
        sets: the published (generalized) sets.
        k: the least support of a present combination.
        m: the largest combination an attacker knows.

    Returns:
        ``True`` when no combination of ``1 .. m`` nodes has support in ``1 .. k - 1``.
    """
    rows = sets.keys()
    for size in range(1, m + 1):
        counts = Counter(c for row in rows for c in combinations(row, size))
        if any(count < k for count in counts.values()):
            return False
    return True


def apply_cut(sets: ItemSets, cut: np.ndarray) -> ItemSets:
    """Replace every leaf by its cut node; a set keeps each node once.

    Args:
        sets: sets of leaf ids.
        cut: ``cut[leaf]``: the node that publishes the leaf.

    Returns:
        The generalized sets, each sorted and distinct.
    """
    n = len(sets)
    rows = np.repeat(np.arange(n, dtype=np.int64), sets.sizes())
    gen = np.asarray(cut, dtype=np.int64)[sets.nodes]
    order = np.lexsort((gen, rows))
    rows, gen = rows[order], gen[order]
    keep = np.ones(gen.size, dtype=bool)
    keep[1:] = (rows[1:] != rows[:-1]) | (gen[1:] != gen[:-1])
    rows, gen = rows[keep], gen[keep]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=offsets[1:])
    return ItemSets(offsets=offsets, nodes=gen)


class _Holders:
    """Which sets hold a leaf under a node, cached per node (the count tree's supports)."""

    def __init__(self, sets: ItemSets, tree: ItemTree) -> None:
        self.n = len(sets)
        self.leaves = sets.nodes
        self.rows = np.repeat(np.arange(self.n, dtype=np.int64), sets.sizes())
        self.tree = tree
        self.cache: dict[int, np.ndarray] = {}

    def of(self, node: int) -> np.ndarray:
        """Boolean per set: it holds a leaf under ``node``."""
        held = self.cache.get(node)
        if held is None:
            lo, hi = self.tree.leaf_lo[node], self.tree.leaf_hi[node]
            inside = (self.leaves >= lo) & (self.leaves <= hi)
            held = np.zeros(self.n, dtype=bool)
            held[self.rows[inside]] = True
            self.cache[node] = held
        return held

    def support(self, nodes: Iterable[int]) -> int:
        """Number of sets holding a leaf under every one of ``nodes``."""
        held = np.ones(self.n, dtype=bool)
        for node in nodes:
            held &= self.of(int(node))
        return int(held.sum())


def _chain(tree: ItemTree, node: int) -> list[int]:
    """``node`` and its ancestors up to the root, lowest first."""
    out = [node]
    while tree.parent[out[-1]] >= 0:
        out.append(int(tree.parent[out[-1]]))
    return out


def _maximal(tree: ItemTree, nodes: Iterable[int]) -> tuple[int, ...]:
    """The distinct nodes that lie under no other of ``nodes`` (sorted ids).

    A node with a single child covers the child's leaves: of two nodes with the same
    leaf range the higher one is kept.
    """
    distinct = sorted(set(nodes))
    lo, hi, level = tree.leaf_lo, tree.leaf_hi, tree.level
    return tuple(
        g
        for g in distinct
        if not any(
            h != g and lo[h] <= lo[g] and hi[g] <= hi[h] and level[h] > level[g] for h in distinct
        )
    )


def _raise(cut: np.ndarray, tree: ItemTree, nodes: Iterable[int]) -> np.ndarray:
    """A copy of ``cut`` with every leaf under each of ``nodes`` published as that node.

    Each node must lie at or above the cut nodes of its leaves (true for an ancestor of
    a cut node: a cut node above it would be an ancestor of another cut node).
    """
    out = cut.copy()
    for g in sorted(nodes, key=lambda x: int(tree.level[x])):
        out[tree.leaf_lo[g] : tree.leaf_hi[g] + 1] = g
    return out


def _repair(
    items: tuple[int, ...],
    cut: np.ndarray,
    tree: ItemTree,
    holders: _Holders,
    weights: tuple[np.ndarray, np.ndarray],
    k: int,
) -> np.ndarray:
    """The cheapest raise of ``cut`` that gives the itemset ``items`` support of ``k`` or more.

    Args:
        items: the violator's current cut nodes.
        cut: the current cut, ``cut[leaf] = node``.
        tree: the taxonomy.
        holders: supports of node sets.
        weights: ``(occurrences per leaf, NCP per node)``.
        k: the least support.

    Returns:
        The raised cut.
    """
    occurrences, node_ncp = weights
    best: tuple[float, tuple[int, ...]] | None = None
    seen: set[tuple[int, ...]] = set()
    for chosen in product(*(_chain(tree, g) for g in items)):
        top = _maximal(tree, chosen)
        if top == items or top in seen:
            continue
        seen.add(top)
        if holders.support(top) < k:
            continue
        cost = 0.0
        for g in top:
            lo, hi = int(tree.leaf_lo[g]), int(tree.leaf_hi[g]) + 1
            cost += float(occurrences[lo:hi] @ (node_ncp[g] - node_ncp[cut[lo:hi]]))
        key = (cost, top)
        if best is None or key < best:
            best = key
    if best is None:  # the root alone is held by every non-empty set, at least k of them
        raise AssertionError(f"no generalization of {items} reaches support {k}")
    return _raise(cut, tree, best[1])


def apriori_cut(sets: ItemSets, tree: ItemTree, k: int, m: int) -> np.ndarray | None:
    """The cut Apriori Anonymization chooses for ``sets`` (see the module docstring).

    Args:
        sets: sets of leaf ids.
        tree: the item taxonomy.
        k: the least support of a published combination.
        m: the largest combination an attacker knows.

    Returns:
        ``cut[leaf]``, the node publishing each leaf; ``None`` when fewer than ``k``
        sets are non-empty (no cut helps: the caller suppresses).

    Raises:
        ValueError: ``k`` or ``m`` below 1, or a set holds a node that is not a leaf.
    """
    if k < 1 or m < 1:
        raise ValueError(f"k and m must be at least 1, got k={k}, m={m}")
    if sets.nodes.size and (sets.nodes.min() < 0 or sets.nodes.max() >= tree.n_leaves):
        raise ValueError("apriori_anonymize takes sets of leaf ids (items), not inner nodes")
    cut = np.arange(tree.n_leaves, dtype=np.int64)
    non_empty = int((sets.sizes() > 0).sum())
    if k <= 1 or non_empty == 0:
        return cut
    if non_empty < k:
        return None
    holders = _Holders(sets, tree)
    weights = (
        np.bincount(sets.nodes, minlength=tree.n_leaves).astype(float),
        np.asarray(tree.item_ncp(np.arange(tree.n_nodes)), dtype=float),
    )
    for size in range(1, m + 1):
        while True:
            rows = apply_cut(sets, cut).keys()
            counts = Counter(c for row in rows for c in combinations(row, size))
            violators = sorted(c for c, count in counts.items() if count < k)
            if not violators:
                break
            for items in violators:
                now = _maximal(tree, (int(cut[tree.leaf_lo[g]]) for g in items))
                if now != items and holders.support(now) >= k:
                    continue
                cut = _repair(now, cut, tree, holders, weights, k)
    return cut


def apriori_anonymize(sets: ItemSets, tree: ItemTree, k: int, m: int) -> ItemSets:
    """Generalize ``sets`` by one cut of ``tree`` to k^m-anonymity (Terrovitis et al.'s AA).

    Args:
        sets: one set of leaf ids (items) per record.
        tree: the item taxonomy.
        k: every published combination of at most ``m`` nodes is held by ``k`` sets or more.
        m: the largest combination an attacker knows.

    Returns:
        Per record (same order) the distinct cut nodes of its items; every set empty
        when fewer than ``k`` sets are non-empty (suppressed, see the module docstring).

    Raises:
        ValueError: ``k`` or ``m`` below 1, or a set holds a node that is not a leaf.
    """
    cut = apriori_cut(sets, tree, k, m)
    if cut is None:
        return ItemSets(
            offsets=np.zeros(len(sets) + 1, dtype=np.int64), nodes=np.zeros(0, dtype=np.int64)
        )
    return apply_cut(sets, cut)
