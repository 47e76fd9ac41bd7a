"""Taxonomy trees of categorical attributes, loaded from ARX-format hierarchy CSVs.

An ARX hierarchy file has one row per leaf value, ``;``-separated, from the most
specific value to the root, e.g. ``Bachelors;Undergraduate;Higher education;*``.
Every row has the same number of columns (all leaves sit at the same depth) and
every node has exactly one parent.

The distance of seed 000 eq. 14 is ``d_c(a, b) = u(a, b) / root_c`` where
``u`` is the number of levels from the leaves up to their lowest common
ancestor and ``root_c`` the number of levels from a leaf to the root.

Leaves are numbered in depth-first order of the tree (children in order of first
appearance in the file), so every subtree covers a contiguous range of leaf
codes. Blocking relies on this: the lowest common ancestor of all the leaves in
a code range ``[lo, hi]`` is the lowest common ancestor of ``lo`` and ``hi``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sparkanon.errors import ConfigError


@dataclass(frozen=True)
class Taxonomy:
    """A generalization hierarchy with all leaves at the same depth.

    Attributes:
        leaves: leaf values in depth-first order; the code of a leaf is its index.
        paths: ``paths[i]`` is the chain of ancestors of leaf ``i``, from the
            leaf itself (level 0) to the root (level ``height``).
        height: levels from a leaf to the root (``root_c`` of eq. 14).
    """

    leaves: tuple[str, ...]
    paths: tuple[tuple[str, ...], ...]
    height: int

    @property
    def size(self) -> int:
        """Number of leaves."""
        return len(self.leaves)

    def lca_levels(self) -> np.ndarray:
        """Matrix of ``u(a, b)``: levels from leaves ``a``, ``b`` up to their common ancestor."""
        n = self.size
        levels = np.zeros((n, n), dtype=np.int64)
        anc = np.array(self.paths, dtype=object)  # n x (height + 1)
        for j in range(self.height, -1, -1):
            same = anc[:, j][:, None] == anc[:, j][None, :]
            levels[same] = j
        return levels

    def distance_matrix(self) -> np.ndarray:
        """Matrix of eq. 14 distances ``u(a, b) / root_c`` between all leaf codes."""
        if self.height == 0:
            return np.zeros((self.size, self.size))
        return self.lca_levels() / float(self.height)

    def lca_level(self, lo: int, hi: int) -> int:
        """Level of the lowest common ancestor of the leaf codes ``lo..hi`` (0 when ``lo == hi``).

        Leaves are numbered depth-first, so the common ancestor of every leaf
        in ``[lo, hi]`` is the common ancestor of ``lo`` and ``hi``.
        """
        for j in range(self.height + 1):
            if self.paths[lo][j] == self.paths[hi][j]:
                return j
        return self.height

    def common_ancestor(self, lo: int, hi: int) -> tuple[str, int]:
        """Label of the lowest common ancestor of the leaf codes ``lo..hi`` and its leaf count.

        Args:
            lo: lowest leaf code of the range.
            hi: highest leaf code of the range.

        Returns:
            ``(label, leaves)``: the node's label (the leaf's own label when
            ``lo == hi``) and the number of leaves under it.
        """
        level = self.lca_level(lo, hi)
        node = self.paths[lo][level]
        leaves = sum(1 for path in self.paths if path[level] == node)
        return node, leaves

    def subtree_boundaries(self, lo: int, hi: int) -> list[int]:
        """Cut points that keep the siblings under the range's common ancestor together.

        Args:
            lo: lowest leaf code of the range.
            hi: highest leaf code of the range (``lo < hi``).

        Returns:
            Codes ``c`` (``lo <= c < hi``) such that cutting into ``<= c`` and
            ``> c`` separates the children subtrees of the lowest common
            ancestor of ``lo`` and ``hi``; empty when ``lo == hi``.
        """
        if lo >= hi:
            return []
        u = self.height
        for j in range(self.height + 1):
            if self.paths[lo][j] == self.paths[hi][j]:
                u = j
                break
        child_level = u - 1
        cuts = []
        for code in range(lo, hi):
            if self.paths[code][child_level] != self.paths[code + 1][child_level]:
                cuts.append(code)
        return cuts


def load_arx_hierarchy(path: str | Path, attribute: str) -> Taxonomy:
    """Load and check an ARX-format hierarchy CSV.

    Args:
        path: the CSV file.
        attribute: the attribute it belongs to (for error messages).

    Returns:
        The taxonomy with leaves in depth-first order.

    Raises:
        ConfigError: the file is missing, empty, ragged, has empty cells,
            repeats a leaf, gives a node two parents or has several roots.
    """
    p = Path(path)
    where = f"hierarchy {str(p)!r} of attribute {attribute!r}"
    if not p.is_file():
        raise ConfigError(f"{where}: file does not exist")
    with p.open(newline="", encoding="utf-8-sig") as fh:  # tolerate a byte-order mark
        rows = [[c.strip() for c in r] for r in csv.reader(fh, delimiter=";") if r]
    if not rows:
        raise ConfigError(f"{where}: file is empty")
    width = len(rows[0])
    if width < 2:
        raise ConfigError(f"{where}: line 1 has one column; expected leaf;...;root")
    parent: dict[tuple[int, str], str] = {}
    leaves_seen: set[str] = set()
    for lineno, row in enumerate(rows, start=1):
        if len(row) != width:
            raise ConfigError(
                f"{where}: line {lineno} has {len(row)} columns, line 1 has {width}; "
                "every leaf must sit at the same depth"
            )
        if any(c == "" for c in row):
            raise ConfigError(f"{where}: line {lineno} has an empty cell")
        if row[0] in leaves_seen:
            raise ConfigError(f"{where}: leaf {row[0]!r} appears twice (line {lineno})")
        leaves_seen.add(row[0])
        for level in range(width - 1):
            key = (level, row[level])
            if key in parent and parent[key] != row[level + 1]:
                raise ConfigError(
                    f"{where}: node {row[level]!r} has two parents, {parent[key]!r} and "
                    f"{row[level + 1]!r} (line {lineno})"
                )
            parent[key] = row[level + 1]
    roots = {r[-1] for r in rows}
    if len(roots) != 1:
        raise ConfigError(f"{where}: several roots {sorted(roots)}; the last column must agree")
    # Depth-first order: sort leaves by the first-appearance rank of each ancestor, top down.
    first_seen: dict[tuple[int, str], int] = {}
    for row in rows:
        for level, node in enumerate(row):
            first_seen.setdefault((level, node), len(first_seen))

    def dfs_key(row: list[str]) -> tuple[int, ...]:
        return tuple(first_seen[(lv, row[lv])] for lv in range(width - 1, -1, -1))

    ordered = sorted(rows, key=dfs_key)
    return Taxonomy(
        leaves=tuple(r[0] for r in ordered),
        paths=tuple(tuple(r) for r in ordered),
        height=width - 1,
    )
