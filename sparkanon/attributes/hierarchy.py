"""Taxonomy trees of categorical attributes, loaded from ARX-format hierarchy CSVs.

An ARX hierarchy file has one row per leaf value, ``;``-separated, from the most
specific value to the root, e.g. ``Bachelors;Undergraduate;Higher education;*``.
Every row has the same number of columns (all leaves sit at the same depth),
every node has exactly one parent, a value sits at one level only (never both a
leaf and an inner node, so the parent links cannot cycle) and there is one root:
:func:`load_arx_hierarchy` rejects any other file, naming the line and the value.

The distance of Shi et al. 2024, eq. 14 is ``d_c(a, b) = u(a, b) / root_c`` where
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


def _read_rows(p: Path) -> list[tuple[int, list[str]]]:
    """The non-blank rows of an ARX CSV, cells trimmed, each with its 1-based line number."""
    rows = []
    with p.open(newline="", encoding="utf-8-sig") as fh:  # tolerate a byte-order mark
        reader = csv.reader(fh, delimiter=";")
        for row in reader:
            if row:
                rows.append((reader.line_num, [c.strip() for c in row]))
    return rows


def load_arx_hierarchy(path: str | Path, attribute: str, separator: str | None = None) -> Taxonomy:
    """Load an ARX-format hierarchy CSV and check that it describes a tree.

    The checks, each failing with the file, the line number and the offending
    value: every row has as many columns as the first (all leaves at the same
    depth) and no empty cell; no leaf is listed twice; a value sits at one
    level only, so it is never both a leaf and an inner node and the parent
    links cannot form a cycle (in this format a cycle shows up as a value at
    two levels; a value repeated in consecutive cells of a row, ``95;>=90;>=90;*``,
    is one node generalized to itself, see :func:`taxonomy_from_rows`); every node
    has one parent wherever it appears; the last column holds one root; with
    ``separator``, no label contains it.

    Args:
        path: the CSV file.
        attribute: the attribute it belongs to (for error messages).
        separator: the separator a published set joins its labels with (the item
            taxonomy of a set-valued attribute); a label holding it would read as
            several labels, so it is refused.

    Returns:
        The taxonomy with leaves in depth-first order.

    Raises:
        ConfigError: the file is missing or empty, or is not a tree (see above).
    """
    p = Path(path)
    where = f"hierarchy {str(p)!r} of attribute {attribute!r}"
    if not p.is_file():
        raise ConfigError(f"{where}: file does not exist")
    return taxonomy_from_rows(_read_rows(p), where, separator)


def _runs(row: list[str]) -> list[tuple[str, int, int]]:
    """A row's labels as runs of equal consecutive cells: ``(label, first level, last level)``."""
    runs: list[tuple[str, int, int]] = []
    for level, node in enumerate(row):
        if runs and runs[-1][0] == node:
            runs[-1] = (node, runs[-1][1], level)
        else:
            runs.append((node, level, level))
    return runs


def taxonomy_from_rows(
    numbered: list[tuple[int, list[str]]], where: str, separator: str | None = None
) -> Taxonomy:
    """Check that ARX rows (leaf to root, each with its line number) describe a tree.

    The checks of :func:`load_arx_hierarchy`; the hierarchy builders
    (:mod:`sparkanon.attributes.builders`) call it on the rows they generate, so a
    generated hierarchy obeys the rules of a file.

    A label repeated in *consecutive* cells of a row is one node generalized to itself
    (ARX writes top-coded values so: ``95;>=90;>=90;*``); it must span the same levels,
    under the same parent, on every row holding it. An item taxonomy (``separator``
    given) allows no such repeat: published sets name nodes by their labels alone.

    Args:
        numbered: the rows with their 1-based line numbers, cells trimmed.
        where: the file (or generated hierarchy) and attribute, for messages.
        separator: see :func:`load_arx_hierarchy`.

    Returns:
        The taxonomy with leaves in depth-first order.

    Raises:
        ConfigError: no rows, or not a tree, naming the line and the value.
    """
    if not numbered:
        raise ConfigError(f"{where}: file is empty")
    first_line, first_row = numbered[0]
    width = len(first_row)
    if width < 2:
        raise ConfigError(
            f"{where}: line {first_line} ({first_row[0]!r}) has one column; expected leaf;...;root"
        )
    root = first_row[-1]
    # Every value seen so far: its levels (first, last), its parent (None for the root), line.
    seen: dict[str, tuple[int, int, str | None, int]] = {}
    for lineno, row in numbered:
        _check_row(where, lineno, row, width, first_line)
        if separator is not None:
            _check_separator(where, lineno, row, separator)
        runs = _runs(row) if separator is None else [(n, lv, lv) for lv, n in enumerate(row)]
        for i, (node, start, end) in enumerate(runs):
            parent = runs[i + 1][0] if i + 1 < len(runs) else None
            if node not in seen:
                seen[node] = (start, end, parent, lineno)
                continue
            _check_node(where, lineno, node, (start, end), parent, seen[node])
        if row[-1] != root:
            raise ConfigError(
                f"{where}: line {lineno} ends with root {row[-1]!r}, line {first_line} with "
                f"{root!r}; several roots, the last column must hold one root"
            )
    rows = [row for _, row in numbered]
    # Depth-first order: sort leaves by the first-appearance rank of each ancestor, top down.
    first_seen: dict[str, int] = {}
    for row in rows:
        for node in row:
            first_seen.setdefault(node, len(first_seen))

    def dfs_key(row: list[str]) -> tuple[int, ...]:
        return tuple(first_seen[row[lv]] for lv in range(width - 1, -1, -1))

    ordered = sorted(rows, key=dfs_key)
    return Taxonomy(
        leaves=tuple(r[0] for r in ordered),
        paths=tuple(tuple(r) for r in ordered),
        height=width - 1,
    )


def _check_row(where: str, lineno: int, row: list[str], width: int, first_line: int) -> None:
    """Fail unless ``row`` has ``width`` cells, none empty."""
    if len(row) != width:
        raise ConfigError(
            f"{where}: line {lineno} ({row[0]!r}) has {len(row)} columns, line {first_line} "
            f"has {width}; every leaf must sit at the same depth"
        )
    if "" in row:
        column = row.index("") + 1
        raise ConfigError(
            f"{where}: line {lineno} ({';'.join(row)!r}) has an empty cell in column {column}"
        )


def _check_separator(where: str, lineno: int, row: list[str], separator: str) -> None:
    """Fail if a label of ``row`` contains the set separator (it would read as two labels)."""
    for label in row:
        if separator in label:
            raise ConfigError(
                f"{where}: line {lineno}: label {label!r} contains the set separator "
                f"{separator!r} (sensitive.separator); a published set joins its labels with "
                f"it, so {label!r} would read as several nodes. Rename the label or choose "
                "another separator"
            )


def _check_node(
    where: str,
    lineno: int,
    node: str,
    levels: tuple[int, int],
    parent: str | None,
    before: tuple[int, int, str | None, int],
) -> None:
    """Fail if a value seen before at ``before`` differs in levels or parent (not a tree).

    Args:
        where: the file and attribute, for messages.
        lineno: the line being read.
        node: the value.
        levels: the first and last level it spans on this line (0: the leaf).
        parent: its parent on this line (``None`` at the root level).
        before: ``(first level, last level, parent, line)`` where the value was first seen.
    """
    old_start, old_end, old_parent, old_line = before
    level, old_level = levels[0], old_start
    if level == 0 and old_level == 0:
        raise ConfigError(
            f"{where}: leaf {node!r} appears twice (line {lineno}, first on line {old_line})"
        )
    if levels != (old_start, old_end):
        if 0 in (level, old_level):
            leaf_line, inner_line = (lineno, old_line) if level == 0 else (old_line, lineno)
            raise ConfigError(
                f"{where}: value {node!r} is both a leaf (line {leaf_line}) and an inner node "
                f"(line {inner_line}); a leaf cannot generalize other values"
            )
        if level == old_level:
            level, old_level = levels[1], old_end
        raise ConfigError(
            f"{where}: value {node!r} sits at level {level} on line {lineno} but at level "
            f"{old_level} on line {old_line}; a value at two levels makes a cycle, the "
            "hierarchy must be a tree"
        )
    if parent != old_parent:
        raise ConfigError(
            f"{where}: node {node!r} has two parents, {old_parent!r} (line {old_line}) and "
            f"{parent!r} (line {lineno})"
        )
