"""Lattice nodes evaluated on the driver: the frequency set rolled up with numpy only.

When the bottom node's frequency set is small enough to hold on the driver (at most
:data:`DRIVER_ENTRIES` entries: one per combination of base codes, and sensitive code,
present in the table, a per-class statistic), the searches' node evaluations need no
distributed pass. :class:`DriverEvaluator` keeps the frequency set as arrays and, per node:

1. picks the *source*: the evaluated node with the fewest entries among those at most as
   general as the node (every attribute the node keeps kept, at a level no higher), or
   the bottom node's frequency set (Incognito's rollup: a node's frequency set is the
   sum of any more specific frequency set's counts over the entries mapping to each of
   its keys, since every hierarchy is nested);
2. maps each kept attribute's codes from the source's level to the node's with a lookup
   table, packs them in a mixed-radix key (the node's level sizes the radices, the
   sensitive code the least significant digit) and sums the counts per key: one
   ``bincount`` when the key space is small, else one stable sort;
3. checks the node's classes with the models (vectorised) and sums a
   :class:`~sparkanon.algorithms.lattice.search.NodeVerdict`.

The rolled-up frequency sets of evaluated nodes are kept, oldest dropped first, while
they hold at most ``budget`` entries together, so the next nodes roll up from a small
set. The verdicts equal those of the distributed pass
(:func:`sparkanon.stages.lattice.evaluate_nodes`), which sums the same counts.
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

CACHE_FACTOR = 8
"""The evaluated nodes' frequency sets kept hold at most this many times the bottom's entries."""

DENSE_FACTOR = 4
"""Sum per key with ``bincount`` when the key space is at most this many times the entries."""

MAX_KEY = 1 << 62
"""A packed key (level codes and sensitive code) must stay below this."""


@dataclass(frozen=True, eq=False)
class Entries:
    """One node's frequency set on the driver.

    Attributes:
        node: the node's levels (:data:`DROPPED` for an attribute left out).
        keys: each entry's class key, the codes packed by :func:`pack` (sorted).
        codes: per attribute the node keeps (in attribute order), each entry's code at
            the node's level.
        sens: each entry's sensitive code, or ``None`` when the models read none.
        counts: rows per entry.
    """

    node: Node
    keys: np.ndarray
    codes: tuple[np.ndarray, ...]
    sens: np.ndarray | None
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.counts)


def bottom_entries(
    codes: Sequence[np.ndarray], sens: np.ndarray | None, counts: np.ndarray
) -> Entries:
    """The bottom node's frequency set (every attribute at level 0) from collected columns."""
    columns = tuple(np.asarray(c, dtype=np.int64) for c in codes)
    return Entries(
        tuple(0 for _ in codes),
        np.zeros(0, dtype=np.int64),  # never read: the bottom is no node's result
        columns,
        None if sens is None else np.asarray(sens, dtype=np.int64),
        np.asarray(counts, dtype=np.int64),
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


def pack(codes: Sequence[np.ndarray], sizes: Sequence[int], length: int) -> np.ndarray:
    """Mixed-radix keys: the first attribute the least significant digit."""
    key = np.zeros(length, dtype=np.int64)
    stride = 1
    for code, size in zip(codes, sizes, strict=True):
        if stride == 1:
            key += code
        else:
            key += code * stride
        stride *= size
    return key


def unpack(keys: np.ndarray, sizes: Sequence[int]) -> tuple[np.ndarray, ...]:
    """The codes packed by :func:`pack`."""
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
            together (default :data:`CACHE_FACTOR` times the bottom's).
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
        self.budget = CACHE_FACTOR * max(len(bottom), 1) if budget is None else budget
        self._maps: dict[tuple[int, int, int], np.ndarray | None] = {}
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
        entries = self.rollup(node)
        first, s = class_summaries(
            entries.keys,
            entries.sens,
            entries.counts,
            self.n_values,
            self.level_of,
        )
        ok = self.models.satisfied(s)
        ncp = np.zeros(len(first))
        kept = [j for j, level in enumerate(node) if level != DROPPED]
        for j, codes in zip(kept, entries.codes, strict=True):
            ncp += self._ncp_table(j, node[j])[codes[first]]
        self._keep(entries)
        return node_verdict(ok, s.size, ncp)

    def rollup(self, node: Node) -> Entries:
        """The node's frequency set (sorted by key, then sensitive code)."""
        source = self._source(node)
        kept = [j for j, level in enumerate(node) if level != DROPPED]
        src_kept = [j for j, level in enumerate(source.node) if level != DROPPED]
        position = {j: i for i, j in enumerate(src_kept)}
        codes = []
        for j in kept:
            code = source.codes[position[j]]
            lookup = self._map(j, source.node[j], node[j])
            codes.append(code if lookup is None else lookup[code])
        sizes = _radices(self.hierarchies, node)
        space = int(np.prod(sizes, dtype=object)) if sizes else 1
        key = pack(codes, sizes, len(source))
        keys, sens, counts = sum_per_key(key, source.sens, source.counts, space, self.n_values)
        return Entries(node, keys, unpack(keys, sizes), sens, counts)

    def _source(self, node: Node) -> Entries:
        """The smallest kept frequency set at most as general as ``node`` (or the bottom's)."""
        best = self.bottom
        subset = tuple(j for j, level in enumerate(node) if level != DROPPED)
        want = np.array([node[j] for j in subset], dtype=np.int64)
        for other, members in self._by_subset.items():
            if not set(subset) <= set(other) or not members:
                continue
            arr = self._arrays.get(other)
            if arr is None:
                arr = np.array(members, dtype=np.int64).reshape(len(members), -1)
                self._arrays[other] = arr
            fits = np.flatnonzero((arr[:, list(subset)] <= want).all(axis=1))
            for i in fits:
                found = self._kept[members[i]]
                if len(found) < len(best):
                    best = found
        return best

    def _keep(self, entries: Entries) -> None:
        """Keep a node's frequency set for later rollups, dropping the oldest over budget."""
        if len(entries) * 2 > len(self.bottom) or entries.node in self._kept:
            return  # not worth holding: the bottom is hardly larger
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

    def _map(self, j: int, source: int, target: int) -> np.ndarray | None:
        key = (j, source, target)
        if key not in self._maps:
            self._maps[key] = level_map(self.hierarchies[j], source, target)
        return self._maps[key]

    def _ncp_table(self, j: int, level: int) -> np.ndarray:
        key = (j, level)
        if key not in self._ncp:
            self._ncp[key] = (
                np.asarray(self.hierarchies[j].ncp[level], dtype=float) * self.weights[j]
            )
        return self._ncp[key]
