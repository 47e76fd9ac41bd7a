"""Set-valued attributes: item taxonomies, encoded and generalized item sets (Gong et al. 2016).

A set-valued attribute holds, per record, a set of items (diagnoses, purchased
products, visited pages). Gong et al. 2016 (section 2) treats it as the sensitive part of
relational-transaction (RT) data and assumes that a record's items do not repeat.

Items are leaves of a taxonomy (:class:`ItemTree`), the same ARX-format hierarchy
files the categorical kinds use (:func:`sparkanon.attributes.hierarchy.load_arx_hierarchy`:
all leaves at one depth, a tree), or an even tree of a given fanout
(:func:`even_taxonomy`, how Gong et al. 2016, section 4.1 and He and Naughton (2009) build one
when none is given: every ``fanout`` consecutive items go up one level).

Every node of the tree has an integer id: the leaves first, in the taxonomy's
depth-first order (ids ``0 .. n_leaves - 1``, so a leaf's id is its code), then the
nodes of level 1, level 2..., the root last. Because the leaves are numbered
depth-first, every node covers the contiguous leaf range ``leaf_lo .. leaf_hi``.

An item set and a generalized set are both a sorted tuple of distinct node ids. A
block's sets are held together as :class:`ItemSets` (compressed rows: ``offsets`` and
``nodes``), so the algorithms index numpy arrays instead of Python sets.

Decided behaviours for the input (documented in ``docs/method.md``, tested):

* duplicate items in one record's set count once (Gong et al. 2016, section 2: the items of a
  transaction do not repeat); the job reports how many duplicates it removed;
* an item missing from the taxonomy is an error naming the column, the item and the
  record's position, unless ``on_unknown_item: drop`` removes it (counted);
* an empty set is a value like any other (the record bought nothing): its TBucket is
  the empty set, which no generalization changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from sparkanon.attributes.hierarchy import Taxonomy


@dataclass(frozen=True)
class ItemTree:
    """A taxonomy of items as arrays over node ids (leaves first, the root last).

    Attributes:
        taxonomy: the taxonomy it was built from.
        level: ``level[node]``: 0 for a leaf, the taxonomy's height for the root.
        parent: ``parent[node]``; ``-1`` for the root.
        leaf_lo: lowest leaf id under the node.
        leaf_hi: highest leaf id under the node.
        child_offsets: the children of ``node`` are
            ``children[child_offsets[node]:child_offsets[node + 1]]``, in leaf order.
        children: concatenated child ids.
        labels: ``labels[node]``: the node's label in the taxonomy.
    """

    taxonomy: Taxonomy
    level: np.ndarray
    parent: np.ndarray
    leaf_lo: np.ndarray
    leaf_hi: np.ndarray
    child_offsets: np.ndarray
    children: np.ndarray
    labels: tuple[str, ...]

    @classmethod
    def of(cls, taxonomy: Taxonomy) -> ItemTree:
        """Number the nodes of ``taxonomy``: leaves by code, then level by level up to the root."""
        n_leaves, height = taxonomy.size, taxonomy.height
        labels: list[str] = list(taxonomy.leaves)
        level = [0] * n_leaves
        lo = list(range(n_leaves))
        hi = list(range(n_leaves))
        # Node ids of the level below, per leaf; lifted one level at a time.
        below = np.arange(n_leaves)
        parent = np.full(n_leaves, -1, dtype=np.int64).tolist()
        for j in range(1, height + 1):
            ids_at_j: dict[str, int] = {}
            node_of_leaf = np.empty(n_leaves, dtype=np.int64)
            for leaf, path in enumerate(taxonomy.paths):
                label = path[j]
                node = ids_at_j.get(label)
                if node is None:
                    node = len(labels)
                    ids_at_j[label] = node
                    labels.append(label)
                    level.append(j)
                    lo.append(leaf)
                    hi.append(leaf)
                    parent.append(-1)
                hi[node] = leaf
                node_of_leaf[leaf] = node
            for leaf in range(n_leaves):
                parent[below[leaf]] = int(node_of_leaf[leaf])
            below = node_of_leaf
        parent_arr = np.asarray(parent, dtype=np.int64)
        n = len(labels)
        order = np.argsort(parent_arr, kind="stable")
        order = order[parent_arr[order] >= 0]
        counts = np.bincount(parent_arr[order], minlength=n)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return cls(
            taxonomy=taxonomy,
            level=np.asarray(level, dtype=np.int64),
            parent=parent_arr,
            leaf_lo=np.asarray(lo, dtype=np.int64),
            leaf_hi=np.asarray(hi, dtype=np.int64),
            child_offsets=offsets,
            children=order.astype(np.int64),
            labels=tuple(labels),
        )

    @property
    def n_leaves(self) -> int:
        """Number of items (leaves)."""
        return self.taxonomy.size

    @property
    def n_nodes(self) -> int:
        """Number of nodes, leaves included."""
        return len(self.labels)

    @property
    def root(self) -> int:
        """The root's node id (the last one)."""
        return self.n_nodes - 1

    def leaves_under(self, node: int | np.ndarray) -> int | np.ndarray:
        """Number of leaves under ``node`` (1 for a leaf)."""
        return self.leaf_hi[node] - self.leaf_lo[node] + 1

    def item_ncp(self, node: int | np.ndarray) -> float | np.ndarray:
        """NCP of a generalized item (He and Naughton 2009, section 2).

        0 for a leaf, else the share of all items under it, ``|leaves(node)| / |I|``.
        """
        under = self.leaves_under(node)
        return np.where(self.level[node] == 0, 0.0, under / self.n_leaves)

    def ancestor_at(self, nodes: np.ndarray, level: int) -> np.ndarray:
        """The ancestor at ``level`` of every node (a node at or above ``level`` is its own)."""
        out = np.asarray(nodes, dtype=np.int64).copy()
        for _ in range(self.taxonomy.height):
            low = self.level[out] < level
            if not low.any():
                break
            out[low] = self.parent[out[low]]
        return out

    def covers(self, node: int, leaves: np.ndarray) -> np.ndarray:
        """Whether each leaf id lies under ``node``."""
        return (leaves >= self.leaf_lo[node]) & (leaves <= self.leaf_hi[node])

    def leaf_codes(self) -> dict[str, int]:
        """Item label -> leaf id."""
        return {label: i for i, label in enumerate(self.taxonomy.leaves)}


def even_taxonomy(items: Sequence[str], fanout: int) -> Taxonomy:
    """An even taxonomy: every ``fanout`` consecutive items (in the given order) share a parent.

    Gong et al. 2016, section 4.1: with no taxonomy for INFORMS' 1,297 diagnosis codes, the
    space is divided evenly, 5 nodes going up one level, so ``5^4 < 1297 <= 5^5``
    gives 5 levels above the leaves. Inner nodes are labelled ``L{level}:{index}``
    (``index`` among the nodes of that level), the root ``*``.

    Args:
        items: the distinct items, in the order that places neighbours together.
        fanout: children per inner node (at least 2).

    Returns:
        The taxonomy, all leaves at the same depth.

    Raises:
        ValueError: fewer than one item, duplicate items or ``fanout < 2``.
    """
    if fanout < 2:
        raise ValueError(f"fanout must be at least 2, got {fanout}")
    if not items:
        raise ValueError("an even taxonomy needs at least one item")
    if len(set(items)) != len(items):
        raise ValueError("items of an even taxonomy must be distinct")
    n = len(items)
    height = 1
    while fanout**height < n:
        height += 1
    paths = []
    for i, item in enumerate(items):
        path = [item]
        for j in range(1, height):
            path.append(f"L{j}:{i // fanout**j}")
        path.append("*")
        paths.append(tuple(path))
    return Taxonomy(leaves=tuple(items), paths=tuple(paths), height=height)


@dataclass(frozen=True)
class ItemSets:
    """Sets of node ids, one per record, in compressed-row form.

    Attributes:
        offsets: ``len + 1`` row boundaries: record ``i`` holds
            ``nodes[offsets[i]:offsets[i + 1]]``.
        nodes: concatenated node ids, sorted and distinct within each record.
    """

    offsets: np.ndarray
    nodes: np.ndarray

    @classmethod
    def from_lists(cls, sets: Iterable[Iterable[int]]) -> ItemSets:
        """Sets from Python iterables (sorted and deduplicated here)."""
        rows = [np.unique(np.fromiter(s, dtype=np.int64)) for s in sets]
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        nodes = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        return cls(offsets=offsets, nodes=nodes.astype(np.int64))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def row(self, i: int) -> np.ndarray:
        """The node ids of record ``i``."""
        return self.nodes[self.offsets[i] : self.offsets[i + 1]]

    def sizes(self) -> np.ndarray:
        """Items per record."""
        return np.diff(self.offsets)

    def keys(self) -> list[tuple[int, ...]]:
        """Each record's set as a hashable tuple."""
        nodes = self.nodes.tolist()
        off = self.offsets.tolist()
        return [tuple(nodes[off[i] : off[i + 1]]) for i in range(len(self))]

    def take(self, index: np.ndarray) -> ItemSets:
        """The sets of the records at ``index``, in that order."""
        return ItemSets.from_lists(self.row(int(i)) for i in index)


def set_key(nodes: Iterable[int]) -> str:
    """A set's text form in published tables and keys: sorted ids joined by spaces."""
    return " ".join(str(int(n)) for n in nodes)


def sorted_items(items: Iterable[str]) -> list[str]:
    """Distinct items in the order an even taxonomy places them side by side.

    Numerically when every item is a number (diagnosis codes such as ``250`` and
    ``1001`` sort as numbers), else as text.
    """
    distinct = set(items)

    def number(item: str) -> float | None:
        try:
            return float(item)
        except ValueError:
            return None

    numbers = {item: number(item) for item in distinct}
    if distinct and all(v is not None for v in numbers.values()):
        return sorted(distinct, key=lambda item: (numbers[item], item))
    return sorted(distinct)


def distinct_ints(values: np.ndarray) -> np.ndarray:
    """The distinct values of an integer array (flattened), ascending, as ``np.unique`` gives.

    A sort and a comparison of neighbours: numpy 2.3+ answers a bare ``np.unique`` on
    integers with a hash-based path that is about ten times slower on the million-entry
    arrays of a block's item occurrences.
    """
    ordered = np.sort(np.asarray(values).ravel(), kind="stable")
    if ordered.size == 0:
        return ordered
    keep = np.empty(ordered.size, dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


_BITMAP_CELLS = 1 << 25
"""Largest ``records x width`` presence table :func:`distinct_pairs` builds (32 MiB of bools)."""


def distinct_pairs(record: np.ndarray, ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``(record, id)`` pairs, ordered by record, then id.

    What ``np.unique(record * width + ids)`` gives, split back into its two parts. Dense
    pairs (many per record, few distinct ids: a basket of 126 of 299 categories) are
    marked in an ``n x width`` table of booleans and read back with ``nonzero``, which
    costs one pass instead of a sort of every occurrence; sparse ones are sorted
    (:func:`distinct_ints`).

    Args:
        record: the record of each pair, ``0 .. n - 1``, any order.
        ids: the id of each pair, non-negative integers.
        n: the number of records.

    Returns:
        ``(record, ids)`` as int64 arrays of the distinct pairs.
    """
    record = np.asarray(record, dtype=np.int64)
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    width = int(ids.max()) + 1
    cells = n * width
    if cells <= _BITMAP_CELLS and cells <= 64 * ids.size:
        present = np.zeros((n, width), dtype=bool)
        present[record, ids] = True
        rows, cols = np.nonzero(present)
        return rows.astype(np.int64), cols.astype(np.int64)
    keys = distinct_ints(record * width + ids)
    return keys // width, keys % width


def covering_nodes(sets: ItemSets, generalized: ItemSets, tree: ItemTree) -> np.ndarray:
    """For every item occurrence, the node of its record's generalized set covering it.

    A record's generalized nodes are disjoint subtrees (never nested), each covering the
    contiguous leaf range ``leaf_lo .. leaf_hi``; so one search of ``(record, leaf)``
    among the ``(record, leaf_lo)`` of all generalized nodes finds the only candidate.

    Args:
        sets: the original sets (leaf ids).
        generalized: the generalized set of every record, same order (non-nested nodes).
        tree: the taxonomy.

    Returns:
        int64 per occurrence of ``sets.nodes``: the covering node, ``-1`` when none covers
        the item (a record published with an empty set).

    Raises:
        ValueError: a record's generalized set holds nested nodes (one covering another).
    """
    items = np.asarray(sets.nodes, dtype=np.int64)
    gen_nodes = np.asarray(generalized.nodes, dtype=np.int64)
    if items.size == 0 or gen_nodes.size == 0:
        return np.full(items.size, -1, dtype=np.int64)
    span = np.int64(tree.n_leaves + 1)
    gen_rec = np.repeat(np.arange(len(generalized), dtype=np.int64), generalized.sizes())
    lo, hi = tree.leaf_lo[gen_nodes], tree.leaf_hi[gen_nodes]
    order = np.argsort(gen_rec * span + lo, kind="stable")
    gen_rec, gen_nodes, lo, hi = gen_rec[order], gen_nodes[order], lo[order], hi[order]
    same = gen_rec[1:] == gen_rec[:-1]
    if np.any(same & (lo[1:] <= hi[:-1])):
        raise ValueError("a generalized set holds nested nodes")
    item_rec = np.repeat(np.arange(len(sets), dtype=np.int64), sets.sizes())
    at = np.searchsorted(gen_rec * span + lo, item_rec * span + items, side="right") - 1
    safe = np.maximum(at, 0)
    covered = (at >= 0) & (gen_rec[safe] == item_rec) & (hi[safe] >= items)
    return np.where(covered, gen_nodes[safe], -1)
