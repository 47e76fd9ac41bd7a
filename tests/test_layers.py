"""The package's layers hold: imports go down, no file imports itself back through others.

``docs/architecture.md`` draws the layers; :data:`LAYERS` is that drawing as data. Every
import of a ``sparkanon`` module is read from the source (at module level or inside a
function, as :func:`imports_of` finds them) and resolved to the file it loads. Run
``python -m pytest tests/test_layers.py -q -s`` to print the folders' imports of each other.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from tests._adult import ROOT

PACKAGE = ROOT / "sparkanon"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("_version", "errors", "validation_errors"),
    ("io", "randomness", "report"),
    ("safety",),
    ("attributes",),
    ("metrics",),
    ("models",),
    ("engine",),
    ("algorithms",),
    ("risk",),
    ("config",),
    ("publications",),
    ("stages",),
    ("per_block",),
    ("families",),
    ("evaluation",),
    ("pipeline",),
    ("commands", "starter", "validate", "tools"),
    ("cli",),
    ("submit", "sparkanon"),
)
"""The folders (and top-level modules) of ``sparkanon/``, from the bottom up. A file may
import from its own folder, from a folder of its own layer, and from the layers below."""

RUNS_UP: dict[tuple[str, str], str] = {}
"""The imports allowed to run up, ``(importing folder, imported folder)``: the reason each is
there. At most two (docs/architecture.md)."""


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, modules: dict[str, Path]) -> set[str]:
    """The package's modules ``module`` imports (``from pkg import submodule``: the submodule)."""
    tree = ast.parse(modules[module].read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("sparkanon")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not node.module.startswith("sparkanon"):
                continue
            names = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                for a in node.names
            ]
        else:
            continue
        found |= {t for t in (_resolve(n, modules) for n in names) if t and t != module}
    return found


def folder_of(module: str) -> str:
    """The top folder (or top-level module) of ``sparkanon/`` a module lives in."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(folder: str) -> int:
    """The layer of a folder, from 0 at the bottom."""
    for level, names in enumerate(LAYERS):
        if folder in names:
            return level
    raise AssertionError(f"sparkanon/{folder} is in no layer: add it to LAYERS")


def import_graph() -> dict[str, set[str]]:
    """Each module's imports of the package's modules."""
    modules = module_files()
    return {m: imports_of(m, modules) for m in modules}


def folder_imports(graph: dict[str, set[str]]) -> Counter[tuple[str, str]]:
    """How many module imports run from each folder to each other folder."""
    counts: Counter[tuple[str, str]] = Counter()
    for source, targets in graph.items():
        for target in targets:
            pair = (folder_of(source), folder_of(target))
            if pair[0] != pair[1]:
                counts[pair] += 1
    return counts


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan 1972), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_folder_has_a_layer() -> None:
    for module in module_files():
        layer_of(folder_of(module))


def test_no_import_runs_up_beyond_the_allowed() -> None:
    counts = folder_imports(import_graph())
    up = {pair for pair in counts if layer_of(pair[0]) < layer_of(pair[1])}
    print("\n".join(f"{a:>14} -> {b:<14} {n}" for (a, b), n in sorted(counts.items())))
    assert up <= set(RUNS_UP), f"imports running up: {sorted(up - set(RUNS_UP))}"
    assert set(RUNS_UP) <= up, f"allowed but gone, drop them: {sorted(set(RUNS_UP) - up)}"
    assert len(RUNS_UP) <= 2


def test_no_import_circles() -> None:
    assert circles(import_graph()) == []


def test_the_checks_see_a_circle_and_an_upward_import() -> None:
    graph = {"sparkanon.a": {"sparkanon.b"}, "sparkanon.b": {"sparkanon.a"}, "sparkanon.c": set()}
    assert circles(graph) == [["sparkanon.a", "sparkanon.b"]]
    up = folder_imports({"sparkanon.errors": {"sparkanon.cli"}})
    assert [layer_of(a) < layer_of(b) for a, b in up] == [True]
