"""Lattice nodes evaluated on the driver: the frequency set rolled up with numpy only.

When the bottom node's frequency set is small enough to hold on the driver (at most
:data:`DRIVER_ENTRIES` entries: one per combination of base codes, and sensitive code,
present in the table, a per-class statistic), the searches' node evaluations need no
distributed pass. :class:`DriverEvaluator` keeps the frequency set as arrays and, per node:

1. picks the *source*: a kept frequency set of a node at most as general as this one
   (every attribute the node keeps kept, at a level no higher): the smallest direct
   specialization (one level lower in one attribute) kept, else the smallest kept node
   over the same attributes, else the bottom node's. Incognito's rollup: a node's
   frequency set is the sum of any more specific frequency set's counts over the entries
   mapping to each of its keys, since every hierarchy is nested;
2. computes each source entry's key under the node: from a direct specialization by
   rewriting that one attribute's digit of the source's key (a lookup table from its
   level to the next), else by mapping every kept attribute's code to the node's level
   (lookup tables times the digit's place), in mixed radix (the node's level sizes the
   radices, the sensitive code the least significant digit); and sums the counts per
   key: one ``bincount`` when the key space is small, else one stable sort;
3. checks the node's classes with the models (vectorised over
   :class:`~sparkanon.models.ClassSummaries`) and sums a
   :class:`~sparkanon.algorithms.lattice.search.NodeVerdict`.

The rolled-up frequency sets of evaluated nodes smaller than the bottom's are kept,
oldest dropped first, while they hold at most ``budget`` entries together. The verdicts
equal those of the distributed pass (:func:`sparkanon.families.full_domain.lattice.evaluate_nodes`),
which sums the same counts (the weighted NCP up to the order of a float sum).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sparkanon.algorithms.lattice.search import DROPPED, Node, NodeVerdict, height
from sparkanon.attributes.levels import LevelHierarchy
from sparkanon.errors import ConfigError
from sparkanon.models import ClassSummaries, ModelSet

DRIVER_ENTRIES = 1_000_000
"""The largest bottom frequency set evaluated on the driver (beyond it: distributed passes)."""

CACHE_FACTOR = 4
"""The evaluated nodes' frequency sets kept hold at most this many times the bottom's entries."""

CACHE_ENTRIES = 1 << 21
"""... or this many entries, if more."""

DENSE_FACTOR = 4
"""Sum per key with ``bincount`` when the key space is at most this many times the entries."""

MAX_KEY = 1 << 62
"""A packed key (level codes and sensitive code) must stay below this."""


@dataclass(frozen=True, eq=False)
class Entries:
    """One node's frequency set on the driver.

    Attributes:
        node: the node's levels (:data:`DROPPED` for an attribute left out).
        keys: each entry's class key, the node's codes in mixed radix (:func:`unpack`; sorted,
            then by sensitive code), or ``None`` for the bottom node (its key may not fit).
        sens: each entry's sensitive code, or ``None`` when the models read none.
        counts: rows per entry.
        codes: the bottom node's base codes, per attribute (``None`` for another node:
            :func:`unpack` its keys).
    """

    node: Node
    keys: np.ndarray | None
    sens: np.ndarray | None
    counts: np.ndarray
    codes: tuple[np.ndarray, ...] | None = None

    def __len__(self) -> int:
        return len(self.counts)


def bottom_entries(
    codes: Sequence[np.ndarray], sens: np.ndarray | None, counts: np.ndarray
) -> Entries:
    """The bottom node's frequency set (every attribute at level 0) from collected columns."""
    return Entries(
        tuple(0 for _ in codes),
        None,
        None if sens is None else np.asarray(sens, dtype=np.int64),
        np.asarray(counts, dtype=np.int64),
        tuple(np.asarray(c, dtype=np.int64) for c in codes),
    )


def level_map(h: LevelHierarchy, source: int, target: int) -> np.ndarray | None:
    """The code at ``target`` of each code at ``source`` (``None``: the same level).

    Nested levels (checked by :class:`LevelHierarchy`) make the map a function.
    """
    if source == target:
        return None
    if source == 0:
        return np.asarray(h.maps[target], dtype=np.int64)
    out = np.zeros(h.size(source), dtype=np.int64)
    out[h.maps[source]] = h.maps[target]
    return out


def _radices(hierarchies: Sequence[LevelHierarchy], node: Node) -> list[int]:
    """The level sizes of the attributes the node keeps (the key's radices).

    Raises:
        ConfigError: the key would not fit in a ``long`` (as the distributed key).
    """
    sizes, total = [], 1
    for h, level in zip(hierarchies, node, strict=True):
        if level == DROPPED:
            continue
        sizes.append(max(h.size(level), 1))
        total *= sizes[-1]
        if total >= MAX_KEY:
            raise ConfigError(
                "the quasi-identifiers' base domains are too large together for one class key "
                f"(product above 2^62 at {h.name!r}); coarsen a continuous or semantic column "
                "(levels.exact: false) or use fewer quasi-identifiers"
            )
    return sizes


def unpack(keys: np.ndarray, sizes: Sequence[int]) -> tuple[np.ndarray, ...]:
    """The codes packed in mixed-radix keys (the first attribute the least significant digit)."""
    out = []
    rest = keys
    for size in sizes:
        out.append(rest % size)
        rest = rest // size
    return tuple(out)


def sum_per_key(
    key: np.ndarray, sens: np.ndarray | None, counts: np.ndarray, space: int, n_values: int
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Counts summed per key (and sensitive code), sorted by key then sensitive code.

    Args:
        key: each entry's key, in ``[0, space)``.
        sens: each entry's sensitive code in ``[0, n_values)``, or ``None``.
        counts: each entry's rows.
        space: the number of possible keys.
        n_values: the sensitive domain's size.

    Returns:
        ``(keys, sens, counts)`` of the distinct keys (and sensitive codes).
    """
    full, total = key, space
    if sens is not None:
        if space * max(n_values, 1) >= MAX_KEY:
            return _sum_sorted_pairs(key, sens, counts)
        full, total = key * n_values + sens, space * n_values
    if total <= DENSE_FACTOR * len(full) + 1024:
        dense = np.bincount(full, weights=counts, minlength=total)
        hit = np.flatnonzero(dense)
        summed = dense[hit].astype(np.int64)
    else:
        order = np.argsort(full, kind="stable")
        ordered = full[order]
        new = np.empty(len(ordered), dtype=bool)
        new[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        hit = ordered[starts]
        summed = np.add.reduceat(counts[order], starts) if len(starts) else counts[:0]
    if sens is None:
        return hit, None, summed
    return hit // n_values, hit % n_values, summed


def _sum_sorted_pairs(
    key: np.ndarray, sens: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`sum_per_key` for keys too large to pack with the sensitive code."""
    order = np.lexsort((sens, key))
    k, s = key[order], sens[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (k[1:] != k[:-1]) | (s[1:] != s[:-1])
    starts = np.flatnonzero(new)
    summed = np.add.reduceat(counts[order], starts) if len(starts) else counts[:0]
    return k[starts], s[starts], summed


def class_summaries(
    keys: np.ndarray,
    sens: np.ndarray | None,
    counts: np.ndarray,
    n_values: int,
    level_of: np.ndarray | None,
) -> tuple[np.ndarray, ClassSummaries]:
    """Classes from entries summed per key (sorted): the first entry of each, summaries.

    Returns:
        ``(first, summaries)``: the index of each class's first entry, and the classes.
    """
    if sens is None:
        first = np.arange(len(keys))
        return first, ClassSummaries(counts, np.zeros((len(keys), 0), dtype=np.int64))
    new = np.ones(len(keys), dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    first = np.flatnonzero(new)
    cls = np.cumsum(new) - 1
    size = np.add.reduceat(counts, first) if len(first) else counts[:0]
    table = np.zeros((len(first), n_values), dtype=np.int64)
    table[cls, sens] = counts
    return first, ClassSummaries(size, table, level_of)


def node_verdict(ok: np.ndarray, size: np.ndarray, ncp: np.ndarray) -> NodeVerdict:
    """The verdict of a node from its classes: which satisfy the models, sizes, weighted NCP."""
    sizes = size.astype(float)
    return NodeVerdict(
        rows=int(size.sum()),
        classes=len(size),
        bad_rows=int(size[~ok].sum()),
        bad_classes=int((~ok).sum()),
        dm_kept=float((sizes[ok] ** 2).sum()),
        ncp_kept=float((sizes[ok] * ncp[ok]).sum()),
    )


class DriverEvaluator:
    """Node verdicts from a frequency set held on the driver (see the module docstring).

    Args:
        hierarchies: every quasi-identifier's levels.
        bottom: the bottom node's frequency set.
        models: the bound models.
        n_values: the sensitive domain's size.
        level_of: the sensitivity level of each value code, or ``None``.
        weights: each quasi-identifier's NCP weight.
        budget: the most entries the kept frequency sets of evaluated nodes hold
            together (default: :data:`CACHE_FACTOR` times the bottom's, at least
            :data:`CACHE_ENTRIES`).
    """

    def __init__(
        self,
        hierarchies: Sequence[LevelHierarchy],
        bottom: Entries,
        models: ModelSet,
        n_values: int,
        level_of: np.ndarray | None,
        weights: Sequence[float],
        budget: int | None = None,
    ) -> None:
        self.hierarchies = list(hierarchies)
        self.bottom = bottom
        self.models = models
        self.n_values = n_values
        self.level_of = level_of
        self.weights = list(weights)
        if budget is None:
            budget = max(CACHE_FACTOR * len(bottom), CACHE_ENTRIES)
        self.budget = budget
        self._maps: dict[tuple[int, int, int], np.ndarray | None] = {}
        self._strided: dict[tuple[int, int, int, int], np.ndarray | None] = {}
        self._ncp: dict[tuple[int, int], np.ndarray] = {}
        self._kept: OrderedDict[Node, Entries] = OrderedDict()
        self._held = 0
        self._by_subset: dict[tuple[int, ...], list[Node]] = {}
        self._arrays: dict[tuple[int, ...], np.ndarray] = {}

    def evaluate(self, nodes: Sequence[Node]) -> dict[Node, NodeVerdict]:
        """Every node's verdict; the lower nodes first, so the higher roll up from them."""
        out = {}
        for node in sorted(dict.fromkeys(nodes), key=lambda n: (height(n), n)):
            out[node] = self.verdict(node)
        return out

    def verdict(self, node: Node) -> NodeVerdict:
        """One node's verdict, its frequency set rolled up from the smallest source."""
        sizes, entries, keys, s, ok = self._classes(node)
        ncp = np.zeros(len(keys))
        kept = [j for j, level in enumerate(node) if level != DROPPED]
        for j, codes in zip(kept, unpack(keys, sizes), strict=True):
            ncp += self._ncp_table(j, node[j])[codes]
        self._keep(entries)
        return node_verdict(ok, s.size, ncp)

    def failing_keys(self, node: Node) -> np.ndarray:
        """The keys of the node's classes that fail a model (the classes to suppress).

        Keys in the mixed radix of :func:`sparkanon.families.full_domain.lattice.node_key`, so the
        publication drops the rows whose native key is one of them.
        """
        _, _, keys, _, ok = self._classes(node)
        return keys[~ok]

    def _classes(
        self, node: Node
    ) -> tuple[list[int], Entries, np.ndarray, ClassSummaries, np.ndarray]:
        """The node's radices, frequency set, class keys, class summaries and model verdicts."""
        sizes = _radices(self.hierarchies, node)
        entries = self.rollup(node, sizes)
        assert entries.keys is not None
        first, s = class_summaries(
            entries.keys, entries.sens, entries.counts, self.n_values, self.level_of
        )
        return sizes, entries, entries.keys[first], s, self.models.satisfied(s)

    def rollup(self, node: Node, sizes: Sequence[int]) -> Entries:
        """The node's frequency set (sorted by key, then sensitive code).

        Args:
            node: the node.
            sizes: its radices (:func:`_radices`).
        """
        source, raised = self._source(node)
        if raised is not None:
            key = self._raise_one(source, node, raised, sizes)
        else:
            key = self._generalize(source, node, sizes)
        space = int(np.prod(sizes, dtype=object)) if sizes else 1
        keys, sens, counts = sum_per_key(key, source.sens, source.counts, space, self.n_values)
        return Entries(node, keys, sens, counts)

    def _generalize(self, source: Entries, node: Node, sizes: Sequence[int]) -> np.ndarray:
        """The node's keys of the source's entries, every code mapped to the node's level."""
        src_kept = [j for j, level in enumerate(source.node) if level != DROPPED]
        if source.codes is not None:
            src_codes = source.codes
        else:
            assert source.keys is not None
            src_codes = unpack(source.keys, _radices(self.hierarchies, source.node))
        position = {j: i for i, j in enumerate(src_kept)}
        key = np.zeros(len(source), dtype=np.int64)
        stride, p = 1, 0
        for j, level in enumerate(node):
            if level == DROPPED:
                continue
            code = src_codes[position[j]]
            weighted = self._weighted(j, source.node[j], level, stride)
            key += code if weighted is None else weighted[code]
            stride *= sizes[p]
            p += 1
        return key

    def _raise_one(self, source: Entries, node: Node, j: int, sizes: Sequence[int]) -> np.ndarray:
        """The node's keys of the source's entries when the two differ by one level of ``j``.

        Only attribute ``j``'s digit changes (and its radix): the digits below it keep
        their place, those above move by the ratio of the radices.
        """
        assert source.keys is not None
        p = sum(1 for i in range(j) if node[i] != DROPPED)
        below = int(np.prod(sizes[:p], dtype=object)) if p else 1
        radix = max(self.hierarchies[j].size(source.node[j]), 1)
        lookup = self._map(j, source.node[j], node[j])
        assert lookup is not None
        keys = source.keys
        if below == 1:
            rest, low = keys, None
        else:
            rest, low = np.divmod(keys, below)
        higher, digit = np.divmod(rest, radix)
        key = lookup[digit]
        if below != 1:
            key *= below
            key += low
        if p + 1 < len(sizes):
            key += higher * (below * sizes[p])
        return key

    def _source(self, node: Node) -> tuple[Entries, int | None]:
        """The smallest kept frequency set at most as general as ``node`` (or the bottom's).

        A direct specialization of ``node`` if one is kept, else the smallest kept node
        over the same attributes at levels no higher, else the bottom node.

        Returns:
            ``(source, raised)``: ``raised`` the attribute one level higher in ``node``
            when the source is a direct specialization (all else equal), else ``None``.
        """
        best: Entries | None = None
        raised = None
        for j, level in enumerate(node):
            if level > 0:
                found = self._kept.get(node[:j] + (level - 1,) + node[j + 1 :])
                if found is not None and (best is None or len(found) < len(best)):
                    best, raised = found, j
        if best is not None:
            return best, raised
        best = self.bottom
        subset = tuple(j for j, level in enumerate(node) if level != DROPPED)
        members = self._by_subset.get(subset)
        if members:
            arr = self._arrays.get(subset)
            if arr is None:
                arr = np.array(members, dtype=np.int64)
                self._arrays[subset] = arr
            for i in np.flatnonzero((arr <= np.array(node)).all(axis=1)):
                found = self._kept[members[i]]
                if len(found) < len(best):
                    best = found
        return best, None

    def _keep(self, entries: Entries) -> None:
        """Keep a node's frequency set for later rollups, dropping the oldest over budget."""
        if len(entries) >= len(self.bottom) or entries.node in self._kept:
            return  # no smaller than the bottom: no better source
        self._kept[entries.node] = entries
        self._held += len(entries)
        subset = tuple(j for j, level in enumerate(entries.node) if level != DROPPED)
        self._by_subset.setdefault(subset, []).append(entries.node)
        self._arrays.pop(subset, None)
        while self._held > self.budget and self._kept:
            old, dropped = self._kept.popitem(last=False)
            self._held -= len(dropped)
            old_subset = tuple(j for j, lv in enumerate(old) if lv != DROPPED)
            self._by_subset[old_subset].remove(old)
            self._arrays.pop(old_subset, None)

    def _weighted(self, j: int, source: int, target: int, stride: int) -> np.ndarray | None:
        """Each code at ``source``: its code at ``target`` times ``stride`` (``None``: itself)."""
        key = (j, source, target, stride)
        if key not in self._strided:
            lookup = self._map(j, source, target)
            if lookup is None and stride != 1:
                lookup = np.arange(max(self.hierarchies[j].size(source), 1), dtype=np.int64)
            self._strided[key] = None if lookup is None else lookup * stride
        return self._strided[key]

    def _map(self, j: int, source: int, target: int) -> np.ndarray | None:
        key = (j, source, target)
        if key not in self._maps:
            self._maps[key] = level_map(self.hierarchies[j], source, target)
        return self._maps[key]

    def _ncp_table(self, j: int, level: int) -> np.ndarray:
        key = (j, level)
        if key not in self._ncp:
            weighted = np.asarray(self.hierarchies[j].ncp[level], dtype=float) * self.weights[j]
            self._ncp[key] = weighted
        return self._ncp[key]
