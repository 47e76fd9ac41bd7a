"""Generalization levels of a quasi-identifier for full-domain generalization (Aggarwal 2015).

Full-domain generalization replaces every value of a column by its ancestor at one
level of the column's hierarchy, the same level for the whole table. A
:class:`LevelHierarchy` holds, for each level ``h``, which node every *base code*
falls in (``maps[h]``), the node's published label and its normalised certainty
penalty (NCP). Level 0 is the most specific (the base codes themselves), the last
level is the root ``*``; every level's nodes nest in the next level's.

Base codes are small non-negative integers, one per value of the column's domain:

* categorical: the taxonomy's leaves (:func:`taxonomy_levels`, from an ARX file);
* nominal: its values, then ``*`` (:func:`nominal_levels`);
* ordinal: its ranks, grouped into intervals of ranks (:func:`ordinal_levels`);
* continuous: the distinct values present (or, with ``exact: false``, the finest
  interval), grouped into declared or generated intervals (:func:`continuous_levels`);
* semantic codes: the distinct codes present, grouped by prefix
  (:func:`prefix_levels`: ``47677`` -> ``4767*`` -> ... -> ``*****``).

NCP of a node (Xu et al. 2006), as :meth:`sparkanon.attributes.kinds.Kind.ncp`
measures local recoding: 0 for a node holding one base value; a taxonomy node's
leaves over all leaves; an interval's width (clipped to the data's range) over that
range; a code prefix's share of the code space; 1 for the root.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN

import numpy as np

from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.intervals import (
    interval_index,
    interval_label,
    published_edges,
    published_number,
    published_range,
    round_bound,
)
from sparkanon.attributes.kinds import SUPPRESSED
from sparkanon.errors import ConfigError

MAX_BASE_VALUES = 20_000
"""The most distinct values a continuous or semantic column may bring to the lattice's base.

The base codes are looked up in every node's frequency set; a column with more distinct
values should start from its finest interval (``levels.exact: false``)."""


@dataclass(frozen=True, eq=False)
class LevelHierarchy:
    """The levels of one quasi-identifier.

    Attributes:
        name: the column.
        maps: ``maps[h][b]``: the node at level ``h`` of base code ``b``
            (``maps[0]`` is the identity); node ids are ``0..size(h)-1``.
        labels: ``labels[h][node]``: the published value of a node.
        ncp: ``ncp[h][node]``: its normalised certainty penalty, in [0, 1].
    """

    name: str
    maps: tuple[np.ndarray, ...]
    labels: tuple[tuple[str, ...], ...]
    ncp: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        if not self.maps or len(self.maps) != len(self.labels) or len(self.maps) != len(self.ncp):
            raise ValueError(f"{self.name}: maps, labels and ncp need one entry per level")
        base = len(self.maps[0])
        for h, (m, lab, pen) in enumerate(zip(self.maps, self.labels, self.ncp, strict=True)):
            if len(m) != base:
                raise ValueError(f"{self.name}: level {h} maps {len(m)} base codes, not {base}")
            if len(pen) != len(lab) or (len(m) and int(m.max()) >= len(lab)):
                raise ValueError(f"{self.name}: level {h} has {len(lab)} labels for its nodes")
            if h and len(m):
                # Nesting: base codes sharing a node at level h-1 share one at level h.
                prev = self.maps[h - 1]
                parent = np.full(len(self.labels[h - 1]), -1, dtype=np.int64)
                parent[prev] = m
                if not np.array_equal(parent[prev], m):
                    raise ValueError(f"{self.name}: level {h} splits a node of level {h - 1}")
        for m in self.maps:
            m.setflags(write=False)

    @property
    def height(self) -> int:
        """The number of generalization steps from the base to the root."""
        return len(self.maps) - 1

    def size(self, level: int) -> int:
        """Number of nodes at ``level``."""
        return len(self.labels[level])


def _levels_from_keys(
    name: str, keys_per_level: Sequence[Sequence[object]], labels_of, ncp_of
) -> LevelHierarchy:
    """A hierarchy from one identity key per base code and level (equal keys: one node).

    Node ids are numbered in order of first appearance over the base codes, so they follow
    the base order.
    """
    maps, labels, ncps = [], [], []
    for h, keys in enumerate(keys_per_level):
        ids: dict[object, int] = {}
        m = np.empty(len(keys), dtype=np.int64)
        for b, key in enumerate(keys):
            m[b] = ids.setdefault(key, len(ids))
        members = [np.flatnonzero(m == j) for j in range(len(ids))]
        maps.append(m)
        labels.append(tuple(labels_of(h, b_of) for b_of in members))
        ncps.append(np.array([ncp_of(h, b_of) for b_of in members], dtype=float))
    return LevelHierarchy(name, tuple(maps), tuple(labels), tuple(ncps))


def taxonomy_levels(name: str, taxonomy: Taxonomy) -> LevelHierarchy:
    """Levels of an ARX hierarchy: level ``h`` groups the leaves by their ancestor ``h`` up.

    A node is identified by its whole path to the root, so two nodes with the same label
    under different parents stay two nodes (they publish the same text).
    """
    paths = taxonomy.paths
    keys = [[tuple(p[h:]) for p in paths] for h in range(taxonomy.height + 1)]
    n = taxonomy.size

    def label(h: int, members: np.ndarray) -> str:
        return paths[int(members[0])][h]

    def ncp(h: int, members: np.ndarray) -> float:
        return 0.0 if len(members) <= 1 else len(members) / n

    return _levels_from_keys(name, keys, label, ncp)


def nominal_levels(name: str, values: Sequence[str]) -> LevelHierarchy:
    """A nominal column: the value itself, then ``*``."""
    n = len(values)
    maps = (np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.int64))
    ncp = 1.0 if n > 1 else 0.0
    return LevelHierarchy(
        name, maps, (tuple(values), (SUPPRESSED,)), (np.zeros(n), np.array([ncp]))
    )


def _with_root(
    name: str, maps: list[np.ndarray], labels: list[tuple[str, ...]], ncps: list[np.ndarray]
) -> LevelHierarchy:
    """Close the levels with the root ``*`` unless the last level is one node already."""
    if len(labels[-1]) > 1 or len(maps) == 1:
        n = len(maps[0])
        maps.append(np.zeros(n, dtype=np.int64))
        labels.append((SUPPRESSED,))
        ncps.append(np.array([1.0 if n > 1 else 0.0]))
    return LevelHierarchy(name, tuple(maps), tuple(labels), tuple(ncps))


def _dense(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(nodes present in order, node id of each base code)`` for raw interval indices."""
    present, inverse = np.unique(index, return_inverse=True)
    return present, inverse.astype(np.int64).ravel()


def continuous_levels(
    name: str,
    values: np.ndarray,
    edges_per_level: Sequence[np.ndarray],
    exact: bool,
    low: float,
    high: float,
    decimals: int | None = None,
) -> LevelHierarchy:
    """Interval levels of a numeric column over its base values.

    With ``decimals`` (``output.decimals``) the labels keep that many decimal places: an
    exact value is rounded to the nearest (as a centroid is), and every level's edges are
    first put on that grid (:func:`~sparkanon.attributes.intervals.published_edges`), so
    the intervals themselves, and not only their text, are the published ones: each value
    lies in exactly one label of a level, the one its node publishes, and the certainty
    penalties are those of the published widths. Exact values whose labels become equal
    publish as one group.

    A caller that places rows in intervals itself (the finest level of ``exact`` false)
    must place them between the same published edges; applying them again here changes
    nothing.

    Args:
        name: the column.
        values: the base values, sorted and distinct (the values present, or with
            ``exact`` false the lowest value of each finest interval).
        edges_per_level: per interval level, finest first, the sorted interval edges
            (each coarser level's edges a subset of the finer one's).
        exact: level 0 publishes the value itself (else the finest intervals are level 0).
        low: the data's minimum (the NCP's range).
        high: the data's maximum.
        decimals: decimal places of the published values and edges (``None``: all).

    Returns:
        The levels, the root ``*`` last.

    Raises:
        ConfigError: a value outside the declared intervals.
    """
    span = high - low if high > low else 1.0
    maps: list[np.ndarray] = []
    labels: list[tuple[str, ...]] = []
    ncps: list[np.ndarray] = []
    if exact:
        maps.append(np.arange(len(values), dtype=np.int64))
        labels.append(tuple(_value_label(float(v), decimals) for v in values))
        ncps.append(np.zeros(len(values)))
    for edges in edges_per_level:
        edges = published_edges(edges, decimals)
        idx = interval_index(values, edges)
        if (idx < 0).any():
            bad = float(values[np.flatnonzero(idx < 0)[0]])
            start, end = published_number(float(edges[0])), published_number(float(edges[-1]))
            raise ConfigError(
                f"attribute {name!r}: value {published_number(bad)} lies outside its interval "
                f"levels [{start}, {end}]; "
                "widen the first and last breakpoints to cover the data's range"
            )
        present, ids = _dense(idx)
        lo, hi = edges[present], edges[present + 1]
        last = present == len(edges) - 2
        labels.append(
            tuple(
                interval_label(published_number(float(a)), published_number(float(b)), bool(c))
                for a, b, c in zip(lo, hi, last, strict=True)
            )
        )
        width = np.minimum(hi, high) - np.maximum(lo, low)
        ncps.append(np.clip(width / span, 0.0, 1.0))
        maps.append(ids)
    return _with_root(name, maps, labels, ncps)


def _value_label(value: float, decimals: int | None) -> str:
    """An exact value's label, rounded to the nearest at ``decimals`` places when set."""
    if decimals is not None:
        value = round_bound(value, decimals, ROUND_HALF_EVEN)
    return published_number(value)


def nesting_problem(key: str, steps: Sequence[float], what: str) -> str | None:
    """A problem when each step is not a larger multiple of the one before, or ``None``.

    Interval widths (``levels.widths``, a builder's ``widths``) and group sizes nest only
    then: every interval or group of a level lies inside one of the next level's.

    Args:
        key: the config key named in the message.
        steps: the widths or sizes, finest first.
        what: ``width`` or ``size``.
    """
    for a, b in zip(steps, steps[1:], strict=False):
        ratio = b / a
        if b <= a or abs(ratio - round(ratio)) > 1e-9:
            return (
                f"{key}: {b:g} after {a:g}: each {what} must be a larger multiple of the one "
                "before, so that every interval nests in the next level's"
            )
    return None


def ordinal_levels(
    name: str, order: Sequence[str], starts_per_level: Sequence[Sequence[int]]
) -> LevelHierarchy:
    """Intervals of ranks of an ordinal column: level ``h`` starts a new interval at given ranks.

    Args:
        name: the column.
        order: its values, lowest rank first (the base codes are the ranks).
        starts_per_level: per level, finest first, the ranks that begin an interval
            (rank 0 always does; each coarser level's starts a subset of the finer one's).

    Returns:
        The levels: the values, the intervals ``[lowest, highest]``, the root ``*``.
    """
    n = len(order)
    ranks = np.arange(n, dtype=np.int64)
    maps = [ranks]
    labels: list[tuple[str, ...]] = [tuple(order)]
    ncps = [np.zeros(n)]
    span = max(n - 1, 1)
    for starts in starts_per_level:
        bounds = np.unique(np.array([0, *starts], dtype=np.int64))
        ids = np.searchsorted(bounds, ranks, side="right") - 1
        ends = np.append(bounds[1:] - 1, n - 1)
        labels.append(
            tuple(published_range(order[a], order[b]) for a, b in zip(bounds, ends, strict=True))
        )
        ncps.append((ends - bounds) / span)
        maps.append(ids.astype(np.int64))
    return _with_root(name, maps, labels, ncps)


def prefix_levels(name: str, codes: np.ndarray, length: int) -> LevelHierarchy:
    """Code-prefix levels of semantic codes: level ``h`` masks the last ``h`` digits with ``*``.

    Args:
        name: the column.
        codes: the distinct codes present, sorted (their integer values).
        length: digits per code.

    Returns:
        ``length + 1`` levels; NCP ``10**(h - length)`` at level ``h >= 1``, as
        :meth:`~sparkanon.attributes.semantic.SemanticKind.ncp` measures a class.
    """
    codes = np.asarray(codes, dtype=np.int64)
    maps, labels, ncps = [], [], []
    for h in range(length + 1):
        prefix = codes // (10**h)
        present, ids = _dense(prefix)
        maps.append(ids)
        width = length - h
        labels.append(tuple((str(int(p)).zfill(width) if width else "") + "*" * h for p in present))
        ncps.append(np.full(len(present), 0.0 if h == 0 else 10.0 ** (h - length)))
    return LevelHierarchy(name, tuple(maps), tuple(labels), tuple(ncps))
