"""Full-domain generalization on Adult: Incognito and Samarati against anjana and the lattice.

Reproduces docs/experiments.md, "Full-domain generalization on Adult beside anjana".

The experiment of issue 12 (Aggarwal 2015, section 20.3.1): on ``data/adult/adult.csv``
(45,222 rows, none with a missing value) with the seven quasi-identifiers of
``conf/adult_fd_k.yaml`` (age, education, marital-status, native-country, race, sex,
workclass: the shipped ARX hierarchies of ``data/adult/hierarchies/``, heights 4, 3, 2,
2, 1, 1, 2, a lattice of 2,160 nodes) and the sensitive attribute ``occupation``, for
k-anonymity with k = 2, 5, 10, 20, 50 and entropy l-diversity with l = 2, 3 (the model
alone, no k), each with MaxSup 0 and 2%, it records the node (level vector), height,
Sweeney's precision Prec, DM, NCP, suppressed rows and seconds of:

* **sparkanon Incognito and Samarati** (``algorithm.metric: precision``): each run is
  what ``python -m sparkanon.cli run CONFIG --engine local --set ...`` does
  (``load_config`` then ``run_job`` on the local engine, output committed), run in this
  process from a frozen copy of the package (``experiments/_bench.py``); the equivalent
  command is recorded per row. ``families.full_domain``: Incognito publishes, among the minimal
  acceptable nodes (all acceptable nodes when pruning is unsound), the one of least
  loss; Samarati the acceptable node of least loss at the lowest height holding one.
  A node is acceptable when its failing classes hold at most ``floor(MaxSup * rows)``
  rows (they are suppressed).
* **the exhaustive lattice** (this script, numpy, no sparkanon code): every node's
  classes rolled up from the bottom frequency set, checked against the model with
  sparkanon's definitions (k: ``|E| >= k``; entropy l: ``H(E) >= log l - 1e-12`` and at
  least ``ceil(l)`` distinct values, natural logs), the same acceptability rule and the
  same losses (``Prec = 1 - mean(level / height)``; DM ``sum |E|^2`` over kept classes
  plus ``rows`` per suppressed row; NCP the mean over rows and attributes of
  ``leaves / all leaves`` of the published node, 0 for a single leaf, 1 per attribute of
  a suppressed row). It gives the reference each search must match (the best Prec over
  all acceptable nodes for Incognito; the best Prec at the lowest acceptable height for
  Samarati; ties to the lower height, then the lower levels, as ``search._best``), the
  counts of acceptable, minimal and lowest-height nodes (Incognito's and Samarati's
  ``candidates``), the monotonicity of acceptability (pruning's premise), and an
  independent recomputation of every published node's suppressed rows, classes, DM and
  NCP against ``metrics.json``.
* **anjana** (PyPI, IFCA-CSIC, the authors of pycanon; 1.2.3), an anchor, never a
  dependency of sparkanon: it pins numpy 2.0.2, pandas 2.3.3 and pycanon 1.3.5, so it
  runs in a virtual environment of its own (``~/.cache/sparkanon/anjana-venv``, or
  ``--anjana-venv`` / ``$SPARKANON_ANJANA_VENV``; created on first use with ``pip install
  anjana==1.2.3``, about 30 s) in a subprocess; this process never imports it. It gets
  the same 45,222 rows (read as strings), the same quasi-identifiers in the config's
  order, the same ARX CSVs as its ``hierarchies`` (``{qi: {level: column of the CSV}}``)
  and ``supp_level = 100 * MaxSup`` (percent). What it computes, read in its installed
  sources (``anjana/anonymity/_k_anonymity.py``, ``_l_diversity.py``,
  ``utils/utils.py``):

  - ``k_anonymity(data, [], qi, k, supp_level, hierarchies)`` (``k_anonymity_inner``)
    starts at the data's levels (``utils.check_gen_level``: level 0 here) and loops: if
    pycanon's k (the smallest class) is at least k, return; else, if some class has at
    least k rows, sum the rows of the classes smaller than k and, when
    ``records_sup * 100 / len(data) <= supp_level``, drop those rows
    (``data.drop(...).reset_index()``) and return; else generalize by one level the
    quasi-identifier with the most distinct values in the current table (``np.argmax``:
    ties to the first in ``qi`` order; one at its top raises ``ValueError`` in
    ``utils.apply_hierarchy`` and leaves the candidates). That is the greedy rule of
    Sweeney's Datafly (most distinct values first): one path up the lattice, stopping at
    the first node on it that meets k after suppressing whole failing classes within the
    limit (the same rule as MaxSup: ``904 * 100 / 45222 <= 2`` is ``904 <= floor(0.02 *
    45222)``). It searches no lattice and minimises no loss.
  - ``entropy_l_diversity(data, [], qi, sens, 1, l, supp_level, hierarchies)`` first
    runs ``l_diversity`` (``_l_diversity_inner``): ``k_anonymity_inner`` with k = 1 (met
    at level 0), then the same greedy walk until pycanon's distinct l (fewest distinct
    sensitive values in a class) is at least l. Its suppression branch is taken only
    when ``l_div > max(ec_sensitivity)``, i.e. when *no* class has l distinct values, and
    then it would drop every class (all rows); with ``supp_level < 100`` it never
    suppresses. The walk then goes on until pycanon's ``entropy_l_diversity``
    (``int(min over classes of e ** H)``, no tolerance) is at least l, with no
    suppression step at all. So MaxSup has no effect on anjana's entropy l results, and
    a class of exactly l equally frequent values (``e ** log l`` rounding below l) fails
    for anjana where sparkanon's tolerance accepts it.
  - Both return the table only (suppressed rows removed). Its node is recovered here:
    a row-number column rides along (not a quasi-identifier, copied unchanged), and for
    each quasi-identifier the level whose labels, applied to the kept rows' original
    values, equal the published column (unique: no label of these hierarchies appears
    at two levels); anjana's own ``utils.get_transformation`` is recorded beside it. Its
    Prec and height come from the levels; its suppressed rows are the rows it dropped;
    its DM, NCP and achieved k / entropy l are computed on its published rows; and the
    exhaustive lattice says whether its node is acceptable under sparkanon's rule. Its
    greedy steps (attribute and new level, in order) are recorded by a pass-through
    wrapper of ``utils.apply_hierarchy`` in the subprocess (the ``note`` column).

"No worse" compares sparkanon's Prec with anjana's (``prec_vs_anjana``: ``>=`` up to
1e-12) and heights (``height_vs_anjana``). Then ``experiments/pycanon_check.py`` checks every
sparkanon output directory with pycanon 1.3.6 (its own cached environment).

Writes, under ``--out-dir`` (default ``docs/bench/``):

* ``fulldomain_adult.csv``: one row per setting and method (incognito, samarati,
  anjana, exhaustive);
* ``fulldomain_adult.meta.json``: the command, code, machine, environments, times;
* ``fulldomain_pycanon.csv`` and ``fulldomain_pycanon.meta.json``: pycanon_check's table.

Usage::

    python -m experiments.exp_fulldomain [--k 2 5 10 20 50] [--l 2 3] [--max-suppression 0 0.02]
    python -m experiments.exp_fulldomain --rows 5000 --k 5 --l 2 --out-dir /tmp/x   # quick
    python -m experiments.exp_fulldomain --report [--out-dir DIR]   # Markdown tables

Exit code 0 when every check holds, 1 otherwise (the failures are listed and kept in the
meta file), 3 when anjana's environment cannot be created. The checks: each search's
Prec equals its exhaustive reference's; its ``metrics.json`` agrees with the independent
recomputation (node height, suppressed rows, limit, classes, Prec, DM, NCP, candidates);
it is no worse than anjana's node, where that node is acceptable under sparkanon's rule,
on the search's own goal (Incognito: Prec; Samarati: height, its first criterion, the
Prec only breaking ties among the lowest nodes); pycanon_check finds no disagreement.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments import _bench, pycanon_check

K_VALUES = (2, 5, 10, 20, 50)
L_VALUES = (2, 3)
MAX_SUPPRESSION = (0.0, 0.02)
ALGORITHMS = ("incognito", "samarati")
CONFIGS = {"k": "conf/adult_fd_k.yaml", "entropy_l": "conf/adult_fd_entropy_l.yaml"}
"""The shipped config of each model; the runs override the model's parameter."""
QI = ("age", "education", "marital-status", "native-country", "race", "sex", "workclass")
"""The quasi-identifiers of both configs, in their order."""
SENSITIVE = "occupation"
HIERARCHY_DIR = Path("data") / "adult" / "hierarchies"
ANJANA_SPEC = "anjana==1.2.3"
ENTROPY_TOL = 1e-12
"""sparkanon's ``models.base.TOLERANCE`` on ``entropy >= log(l)``."""
PREC_TOL = 1e-12
ROW_COL = "__row"
FIELDS = [
    "model",
    "param",
    "max_suppression",
    "method",
    "node",
    "height",
    "precision",
    "DM",
    "NCP",
    "rows_suppressed",
    "max_suppressed_rows",
    "acceptable",
    "published_classes",
    "achieved",
    "seconds",
    "search_seconds",
    "evaluated",
    "passes",
    "candidates",
    "pruned",
    "ref_node",
    "ref_precision",
    "matches_ref",
    "prec_vs_anjana",
    "height_vs_anjana",
    "independent_check",
    "pycanon",
    "lattice_acceptable",
    "lattice_minimal",
    "lattice_lowest_height",
    "lattice_at_lowest_height",
    "monotonicity_violations",
    "note",
    "command",
    "code_sha",
]


def default_anjana_venv() -> Path:
    """``$SPARKANON_ANJANA_VENV``, else ``$XDG_CACHE_HOME`` (or ``~/.cache``)/sparkanon/..."""
    if os.environ.get("SPARKANON_ANJANA_VENV"):
        return Path(os.environ["SPARKANON_ANJANA_VENV"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "sparkanon" / "anjana-venv"


# --------------------------------------------------------------------------- the lattice


@dataclass(frozen=True)
class Hierarchy:
    """One ARX hierarchy file read as levels, independently of sparkanon.

    Attributes:
        name: the attribute.
        leaf_of: each leaf value's row in the file.
        labels: ``labels[level][row]``: the label of the row's ancestor at ``level``.
        ids: ``ids[level][row]``: that ancestor's node id (a node is its whole path to
            the root, as in sparkanon's ``taxonomy_levels``).
        ncp: ``ncp[level][id]``: the node's leaves over all leaves, 0 for one leaf.
    """

    name: str
    leaf_of: dict[str, int]
    labels: tuple[np.ndarray, ...]
    ids: tuple[np.ndarray, ...]
    ncp: tuple[np.ndarray, ...]

    @property
    def height(self) -> int:
        """The top level."""
        return len(self.ids) - 1

    def size(self, level: int) -> int:
        """Nodes at ``level``."""
        return int(self.ids[level].max()) + 1


def read_hierarchy(path: Path, name: str) -> Hierarchy:
    """Read an ARX hierarchy CSV (``;``-separated, leaf first, root last).

    Raises:
        ValueError: rows of different lengths or a repeated leaf.
    """
    rows = [line.split(";") for line in path.read_text(encoding="utf-8").splitlines() if line]
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ValueError(f"{path}: rows of different lengths")
    leaf_of = {r[0]: i for i, r in enumerate(rows)}
    if len(leaf_of) != len(rows):
        raise ValueError(f"{path}: a leaf value is repeated")
    n = len(rows)
    labels, ids, ncp = [], [], []
    for level in range(width):
        seen: dict[tuple[str, ...], int] = {}
        m = np.array([seen.setdefault(tuple(r[level:]), len(seen)) for r in rows], dtype=np.int64)
        members = np.bincount(m)
        labels.append(np.array([r[level] for r in rows], dtype=object))
        ids.append(m)
        ncp.append(np.where(members > 1, members / n, 0.0))
    return Hierarchy(name, leaf_of, tuple(labels), tuple(ids), tuple(ncp))


def precision(node: Sequence[int], heights: Sequence[int]) -> float:
    """Sweeney's Prec, computed as sparkanon's ``1 - node_loss('precision', ...)``."""
    return 1.0 - float(np.mean([lv / h if h else 0.0 for lv, h in zip(node, heights, strict=True)]))


@dataclass(frozen=True)
class Classes:
    """The equivalence classes of one node: sizes, entropies, distinct values, NCP."""

    size: np.ndarray
    entropy: np.ndarray
    distinct: np.ndarray
    ncp: np.ndarray

    def ok(self, model: str, param: int) -> np.ndarray:
        """Which classes satisfy the model (sparkanon's definitions)."""
        if model == "k":
            return self.size >= param
        return (self.entropy >= math.log(param) - ENTROPY_TOL) & (self.distinct >= math.ceil(param))

    def achieved(self, model: str) -> float:
        """The model's value over all classes: smallest class, or ``exp(min entropy)``."""
        if not len(self.size):
            return float("nan")
        if model == "k":
            return float(self.size.min())
        return float(math.exp(self.entropy.min()))


class Lattice:
    """Every node's classes, rolled up from the bottom frequency set (numpy only)."""

    def __init__(self, frame: pd.DataFrame, hierarchies: Sequence[Hierarchy]) -> None:
        self.hierarchies = list(hierarchies)
        self.heights = [h.height for h in hierarchies]
        codes = []
        for h in hierarchies:
            missing = set(frame[h.name]) - set(h.leaf_of)
            if missing:
                raise ValueError(f"{h.name}: values missing from the hierarchy: {sorted(missing)}")
            codes.append(frame[h.name].map(h.leaf_of).to_numpy(dtype=np.int64))
        _, sens = np.unique(frame[SENSITIVE].to_numpy(dtype=str), return_inverse=True)
        self.n_sens = int(sens.max()) + 1 if len(sens) else 1
        stacked = np.column_stack([*codes, sens.ravel()])
        base, counts = np.unique(stacked, axis=0, return_counts=True)
        self.base = base[:, :-1]
        self.sens = base[:, -1]
        self.count = counts.astype(np.int64)
        self.rows = int(counts.sum())
        self.entries = len(counts)

    def nodes(self) -> list[tuple[int, ...]]:
        """Every node, by height then levels."""
        grid = np.array(np.meshgrid(*[range(h + 1) for h in self.heights], indexing="ij"))
        nodes = [tuple(int(x) for x in row) for row in grid.reshape(len(self.heights), -1).T]
        return sorted(nodes, key=lambda n: (sum(n), n))

    def classes(self, node: Sequence[int], with_ncp: bool = False) -> Classes:
        """The classes of ``node``."""
        key = np.zeros(self.entries, dtype=np.int64)
        stride = 1
        for q, (h, level) in enumerate(zip(self.hierarchies, node, strict=True)):
            key += h.ids[level][self.base[:, q]] * stride
            stride *= h.size(level)
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
        inv = inv.ravel()
        m = len(first)
        size = np.bincount(inv, weights=self.count, minlength=m).astype(np.int64)
        pair, pinv = np.unique(inv * self.n_sens + self.sens, return_inverse=True)
        c = np.bincount(pinv.ravel(), weights=self.count).astype(float)
        cls = pair // self.n_sens
        entropy = np.log(size) - np.bincount(cls, weights=c * np.log(c), minlength=m) / size
        distinct = np.bincount(cls, minlength=m)
        ncp = np.zeros(m)
        if with_ncp:
            for q, (h, level) in enumerate(zip(self.hierarchies, node, strict=True)):
                ncp += h.ncp[level][h.ids[level][self.base[first, q]]]
        return Classes(size, entropy, distinct, ncp)


def limit(rows: int, max_suppression: float) -> int:
    """``floor(MaxSup * rows)``, as sparkanon's ``suppression_limit``."""
    return int(np.floor(max_suppression * rows + 1e-9))


def node_quality(
    lattice: Lattice, node: Sequence[int], model: str, param: int, sup: float
) -> dict[str, Any]:
    """One node under sparkanon's rule: failing classes suppressed; losses, acceptability."""
    cls = lattice.classes(node, with_ncp=True)
    ok = cls.ok(model, param)
    bad = int(cls.size[~ok].sum())
    n, w = lattice.rows, len(lattice.heights)
    kept = Classes(cls.size[ok], cls.entropy[ok], cls.distinct[ok], cls.ncp[ok])
    return {
        "node": tuple(node),
        "height": int(sum(node)),
        "precision": precision(node, lattice.heights),
        "DM": float((kept.size.astype(float) ** 2).sum() + bad * n),
        "NCP": float(((kept.size * kept.ncp).sum() + bad * w) / (n * w)),
        "rows_suppressed": bad,
        "max_suppressed_rows": limit(n, sup),
        "acceptable": bad <= limit(n, sup) and bad < n,
        "published_classes": int(ok.sum()),
        "achieved": kept.achieved(model),
    }


@dataclass
class Sweep:
    """Every node's failing rows per model (one pass over the lattice)."""

    nodes: list[tuple[int, ...]]
    bad: dict[tuple[str, int], np.ndarray]
    prec: np.ndarray
    seconds: float


def sweep(lattice: Lattice, models: Sequence[tuple[str, int]]) -> Sweep:
    """Roll every node up once and count its failing rows under every model."""
    start = time.perf_counter()
    nodes = lattice.nodes()
    bad = {m: np.zeros(len(nodes), dtype=np.int64) for m in models}
    for i, node in enumerate(nodes):
        cls = lattice.classes(node)
        for model, param in models:
            bad[(model, param)][i] = int(cls.size[~cls.ok(model, param)].sum())
    prec = np.array([precision(n, lattice.heights) for n in nodes])
    return Sweep(nodes, bad, prec, time.perf_counter() - start)


def reference(sw: Sweep, lattice: Lattice, model: str, param: int, sup: float) -> dict[str, Any]:
    """The exhaustive answer of one setting: best nodes, counts, monotonicity."""
    bad = sw.bad[(model, param)]
    ok = (bad <= limit(lattice.rows, sup)) & (bad < lattice.rows)
    index = {n: i for i, n in enumerate(sw.nodes)}
    accepted = [n for n, a in zip(sw.nodes, ok, strict=True) if a]
    if not accepted:
        return {"acceptable": 0}

    def key(n: tuple[int, ...]) -> tuple[float, int, tuple[int, ...]]:
        return (1.0 - sw.prec[index[n]], sum(n), n)

    def below(n: tuple[int, ...]) -> list[tuple[int, ...]]:
        return [n[:j] + (n[j] - 1,) + n[j + 1 :] for j in range(len(n)) if n[j] > 0]

    def above(n: tuple[int, ...]) -> list[tuple[int, ...]]:
        hs = lattice.heights
        return [n[:j] + (n[j] + 1,) + n[j + 1 :] for j in range(len(n)) if n[j] < hs[j]]

    minimal = [n for n in accepted if not any(ok[index[b]] for b in below(n))]
    lowest = min(sum(n) for n in accepted)
    at_lowest = [n for n in accepted if sum(n) == lowest]
    violations = sum(1 for n in accepted for g in above(n) if not ok[index[g]])
    return {
        "acceptable": len(accepted),
        "minimal": len(minimal),
        "best": min(accepted, key=key),
        "lowest_height": lowest,
        "at_lowest": len(at_lowest),
        "best_at_lowest": min(at_lowest, key=key),
        "violations": violations,
    }


# --------------------------------------------------------------------------- sparkanon


def overrides_of(model: str, param: int, algo: str, sup: float, out: Path) -> list[str]:
    """The ``--set`` overrides of one sparkanon run (the input path is added for --rows)."""
    return [
        f"model.{'k' if model == 'k' else 'l'}={param}",
        f"algorithm.name={algo}",
        f"algorithm.max_suppression={sup:g}",
        "algorithm.metric=precision",
        f"output.path={out}",
    ]


def run_sparkanon(config: str, overrides: list[str]) -> tuple[dict[str, Any], float]:
    """``load_config`` + ``run_job`` on the local engine (what the CLI's ``run`` does).

    Returns:
        ``metrics.json``'s content and the wall seconds of ``run_job``.
    """
    from sparkanon.engine.local import LocalEngine
    from sparkanon.families import load_config
    from sparkanon.pipeline import run_job

    cfg = load_config(config, overrides)
    start = time.perf_counter()
    metrics = dict(run_job(LocalEngine(), cfg).metrics)
    return metrics, time.perf_counter() - start


def independent_check(
    metrics: dict[str, Any], mine: dict[str, Any], expected_candidates: int
) -> str:
    """``yes``, or the quantities of ``metrics.json`` the recomputation disagrees with."""
    diffs = []
    pairs = [
        ("height", metrics["height"], mine["height"]),
        ("rows_suppressed", metrics["suppressed_by_node"], mine["rows_suppressed"]),
        ("max_suppressed_rows", metrics["max_suppressed_rows"], mine["max_suppressed_rows"]),
        ("published_classes", metrics["published_classes"], mine["published_classes"]),
        ("candidates", metrics["lattice"]["candidates"], expected_candidates),
    ]
    for name, ours, theirs in pairs:
        if int(ours) != int(theirs):
            diffs.append(f"{name} {ours} vs {theirs}")
    for name in ("precision", "DM", "NCP"):
        a, b = float(metrics[name]), float(mine[name])
        if abs(a - b) > 1e-9 * max(1.0, abs(b)):
            diffs.append(f"{name} {a!r} vs {b!r}")
    if not mine["acceptable"]:
        diffs.append("node not acceptable")
    return "yes" if not diffs else "no: " + "; ".join(diffs)


# --------------------------------------------------------------------------- anjana

# Runs in anjana's environment: argv[1] is a JSON spec, stdout gets one JSON object.
ANJANA_RUNNER = r"""
import contextlib
import csv
import importlib.metadata as md
import json
import platform
import sys
import time

import numpy as np
import pandas as pd
from anjana.anonymity import entropy_l_diversity, k_anonymity
from anjana.anonymity.utils import utils

spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
qi, sa, row = spec["qi"], spec["sa"], spec["row"]
data = pd.read_csv(spec["csv"], dtype=str, keep_default_na=False)[qi + [sa]]
data[row] = np.arange(len(data))


def hierarchies():
    out = {}
    for q in qi:
        h = pd.read_csv(
            spec["hierarchies"][q], sep=";", header=None, dtype=str,
            keep_default_na=False, quoting=csv.QUOTE_NONE,
        )
        out[q] = {level: h[level].tolist() for level in range(h.shape[1])}
    return out


# Record anjana's generalization steps: a pass-through wrapper of the function its
# greedy loops call as utils.apply_hierarchy (looked up at call time).
apply_hierarchy, steps, names = utils.apply_hierarchy, [], {}


def recorded(values, hierarchy, level):
    out = apply_hierarchy(values, hierarchy, level)
    steps.append(f"{names[id(hierarchy)]}{level}")
    return out


utils.apply_hierarchy = recorded
results = []
for job in spec["jobs"]:
    hier = hierarchies()
    names.clear()
    names.update({id(h): q for q, h in hier.items()})
    steps.clear()
    start = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # anjana prints its progress
        if job["model"] == "k":
            out = k_anonymity(data.copy(), [], qi, job["param"], job["supp_level"], hier)
        else:
            out = entropy_l_diversity(
                data.copy(), [], qi, sa, 1, job["param"], job["supp_level"], hier
            )
    seconds = time.perf_counter() - start
    rec = {"label": job["label"], "seconds": round(seconds, 3), "rows": int(len(out))}
    rec["steps"] = list(steps)
    if len(out):
        rec["transformation"] = [int(x) for x in utils.get_transformation(out, qi, hierarchies())]
        out[qi + [row]].to_csv(job["out"], index=False)
    results.append(rec)
print(json.dumps({
    "anjana": md.version("anjana"),
    "pycanon": md.version("pycanon"),
    "numpy": np.__version__,
    "pandas": pd.__version__,
    "python": platform.python_version(),
    "results": results,
}))
"""


def run_anjana(python: Path, spec: dict[str, Any], timeout: float = 3600) -> dict[str, Any]:
    """Run :data:`ANJANA_RUNNER` with anjana's ``python`` on ``spec``; its JSON answer.

    Raises:
        RuntimeError: the runner failed.
    """
    return pycanon_check.run_runner(python, ANJANA_RUNNER, spec, timeout, "anjana")


def anjana_node(
    frame: pd.DataFrame, published: pd.DataFrame, hierarchies: Sequence[Hierarchy]
) -> tuple[tuple[int, ...] | None, str]:
    """The level per quasi-identifier whose labels reproduce anjana's published column.

    Returns:
        The node (``None`` if some column matches no level) and a note on ambiguity.
    """
    rows = published[ROW_COL].to_numpy(dtype=np.int64)
    node, notes = [], []
    for h in hierarchies:
        leaves = frame[h.name].map(h.leaf_of).to_numpy(dtype=np.int64)[rows]
        got = published[h.name].astype(str).to_numpy(dtype=object)
        levels = [lv for lv in range(h.height + 1) if (h.labels[lv][leaves] == got).all()]
        if not levels:
            return None, f"{h.name}: no level reproduces anjana's column"
        if len(levels) > 1:
            notes.append(f"{h.name}: levels {levels} publish the same column")
        node.append(levels[0])
    return tuple(node), "; ".join(notes)


def anjana_quality(
    frame: pd.DataFrame,
    published: pd.DataFrame,
    node: tuple[int, ...],
    hierarchies: Sequence[Hierarchy],
    model: str,
) -> dict[str, Any]:
    """Losses of anjana's actual publication: its classes, its suppressed rows."""
    kept = frame.iloc[published[ROW_COL].to_numpy(dtype=np.int64)]
    sub = Lattice(kept, hierarchies)
    cls = sub.classes(node, with_ncp=True)
    n, w = len(frame), len(node)
    dropped = n - len(kept)
    return {
        "DM": float((cls.size.astype(float) ** 2).sum() + dropped * n),
        "NCP": float(((cls.size * cls.ncp).sum() + dropped * w) / (n * w)),
        "rows_suppressed": dropped,
        "published_classes": len(cls.size),
        "achieved": cls.achieved(model),
    }


# --------------------------------------------------------------------------- pycanon


def run_pycanon_check(
    outputs: list[Path], csv_path: Path, env: dict[str, str]
) -> tuple[int, dict[str, str], str]:
    """``experiments/pycanon_check.py OUTPUT_DIR ... --csv CSV``; exit code and per-output tally.

    The script runs by path with ``env``'s ``PYTHONPATH`` (the snapshot first) and the
    repository root after it, so that it imports sparkanon from the snapshot and
    :mod:`experiments._bench` from the repository.
    """
    env = {
        **env,
        "PYTHONPATH": os.pathsep.join(
            [*filter(None, [env.get("PYTHONPATH")]), str(_bench.REPO_ROOT)]
        ),
    }
    cmd = [sys.executable, str(_bench.REPO_ROOT / "experiments" / "pycanon_check.py")]
    cmd += [str(p) for p in outputs] + ["--csv", str(csv_path)]
    done = subprocess.run(
        cmd, capture_output=True, text=True, check=False, cwd=_bench.REPO_ROOT, env=env
    )
    tally: dict[str, dict[str, int]] = {}
    if csv_path.is_file():
        with csv_path.open(encoding="utf-8", newline="") as handle:
            for r in csv.DictReader(handle):
                t = tally.setdefault(r["output"], {"yes": 0, "no": 0, "n/c": 0})
                t[r["agree"]] = t.get(r["agree"], 0) + 1
    text = {
        label: f"{t['yes']} agree, {t['no']} disagree, {t['n/c']} n/c" for label, t in tally.items()
    }
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    return done.returncode, text, summary


# --------------------------------------------------------------------------- report


def fmt_node(node: Sequence[int] | None) -> str:
    """``(4,1,0,1,0,0,1)``."""
    return "-" if node is None else "(" + ",".join(str(int(x)) for x in node) + ")"


def _f(value: Any, spec: str) -> str:
    if value in ("", None):
        return "-"
    try:
        return format(float(value), spec)
    except ValueError:
        return str(value)


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _name(r: dict[str, str]) -> str:
    model = f"k = {r['param']}" if r["model"] == "k" else f"entropy l = {r['param']}"
    return f"{model} | {100 * float(r['max_suppression']):g}%"


def _by_setting(rows: list[dict[str, str]]) -> dict[str, dict[str, dict[str, str]]]:
    out: dict[str, dict[str, dict[str, str]]] = {}
    for r in rows:
        out.setdefault(_name(r), {})[r["method"]] = r
    return out


def report(path: Path) -> int:
    """Markdown tables of ``fulldomain_adult.csv``."""
    if not path.is_file():
        print(f"no {path}", file=sys.stderr)
        return 1
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    settings = _by_setting(rows)
    methods = [m for m in (*ALGORITHMS, "anjana") if any(r["method"] == m for r in rows)]
    print(
        f"Nodes list the levels of {', '.join(QI)} (heights 4, 3, 2, 2, 1, 1, 2); h the "
        "height, Prec Sweeney's precision, sup. the suppressed rows, s the seconds of the "
        "job (sparkanon) or of the library call (anjana)."
    )
    print()
    print(
        "| model | MaxSup | "
        + " | ".join(f"{m} node | Prec | h | sup. | s" for m in methods)
        + " |"
    )
    print("|---|---:|" + "---|---:|---:|---:|---:|" * len(methods))
    for name, got in settings.items():
        cells = []
        for m in methods:
            r = got.get(m)
            if r is None:
                cells += ["-"] * 5
                continue
            sup = r["rows_suppressed"] + (" (over MaxSup)" if r["acceptable"] == "False" else "")
            cells += [r["node"], _f(r["precision"], ".4f"), r["height"], sup]
            cells.append(_f(r["seconds"], ".1f"))
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    for algo in ALGORITHMS:
        mine = [r for r in rows if r["method"] == algo]
        if not mine:
            continue
        tally = {
            key: ", ".join(
                f"{v} {n}" for v, n in sorted(_count(r[key] or "-" for r in mine).items())
            )
            for key in ("prec_vs_anjana", "height_vs_anjana", "matches_ref", "independent_check")
        }
        print(
            f"{algo}: {len(mine)} settings; Prec against anjana: {tally['prec_vs_anjana']}; "
            f"height against anjana: {tally['height_vs_anjana']}; node of the exhaustive "
            f"reference: {tally['matches_ref']}; independent recomputation: "
            f"{tally['independent_check']}."
        )
    anjana = [r for r in rows if r["method"] == "anjana"]
    if anjana:
        ok = _count(r["acceptable"] for r in anjana)
        print(f"anjana's nodes acceptable under sparkanon's rule: {ok}.")
    meta_path = path.with_name("fulldomain_adult.meta.json")
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        print(f"pycanon_check: {meta.get('pycanon_check')}.")
        print(
            f"Times: {meta.get('stage_seconds')}, {meta.get('seconds')} s in all; load average "
            f"at the start {meta.get('loadavg_at_start')}; code {meta.get('code_sha')} "
            f"(git {meta.get('git_head')}, sparkanon dirty: {meta.get('sparkanon_dirty')})."
        )
    print()
    print("Losses of the published nodes (DM in millions; NCP as a share).")
    print()
    print("| model | MaxSup | " + " | ".join(f"{m} DM | NCP" for m in methods) + " |")
    print("|---|---:|" + "---:|---:|" * len(methods))
    for name, got in settings.items():
        cells = []
        for m in methods:
            r = got.get(m)
            dm = float(r["DM"]) / 1e6 if r and r["DM"] else ""
            cells += [_f(dm, ".1f"), _f(r["NCP"], ".4f") if r else "-"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print(
        "The searches (evaluated: node evaluations, Incognito's subset nodes included; "
        "passes: evaluation batches) and the whole lattice (acceptable nodes, minimal ones, "
        "the lowest acceptable height and its acceptable nodes, acceptable nodes with an "
        "unacceptable direct generalization)."
    )
    print()
    print(
        "| model | MaxSup | pruned | Incognito evaluated | passes | candidates | search s "
        "| Samarati evaluated | passes | candidates | search s | acceptable | minimal "
        "| lowest height | nodes there | non-monotone |"
    )
    print("|---|---:|---|" + "---:|" * 13)
    for name, got in settings.items():
        cells = []
        first = next(iter(got.values()))
        pruned = [got[a]["pruned"] for a in ALGORITHMS if a in got]
        cells.append(pruned[0] if pruned else "-")
        for algo in ALGORITHMS:
            r = got.get(algo)
            if r is None:
                cells += ["-"] * 4
                continue
            cells += [r["evaluated"], r["passes"], r["candidates"], _f(r["search_seconds"], ".2f")]
        cells += [
            first["lattice_acceptable"],
            first["lattice_minimal"],
            first["lattice_lowest_height"],
            first["lattice_at_lowest_height"],
            first["monotonicity_violations"],
        ]
        print(f"| {name} | " + " | ".join(str(c) for c in cells) + " |")
    return 0


# --------------------------------------------------------------------------- main

Setting = tuple[str, int, float]
"""(model, parameter, MaxSup)."""


def label_of(setting: Setting) -> str:
    """``k5_sup0.02``."""
    model, param, sup = setting
    return f"{model}{param}_sup{sup:g}"


def anjana_call(model: str, param: int, sup: float) -> str:
    """The anjana call of one setting, as text."""
    if model == "k":
        return f"anjana.anonymity.k_anonymity(data, [], qi, {param}, {100 * sup:g}, hierarchies)"
    return (
        f"anjana.anonymity.entropy_l_diversity(data, [], qi, '{SENSITIVE}', 1, {param}, "
        f"{100 * sup:g}, hierarchies)"
    )


def achieved_of(metrics: dict[str, Any]) -> float:
    """``metrics.json``'s achieved smallest class or effective l."""
    got = metrics["achieved"]
    return float(got.get("min_class_size", got.get("effective_l", float("nan"))))


def compare(ours: dict[str, Any], anjana: dict[str, Any] | None) -> tuple[str, str]:
    """Prec and height of a sparkanon node against anjana's: ``better``/``equal``/``WORSE``."""
    if anjana is None or anjana.get("node") is None:
        return "", ""
    dp = ours["precision"] - anjana["precision"]
    prec = "equal" if abs(dp) <= PREC_TOL else ("better" if dp > 0 else "WORSE")
    dh = ours["height"] - anjana["height"]
    hgt = "equal" if dh == 0 else ("better" if dh < 0 else "WORSE")
    return prec, hgt


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def anjana_records(
    python: Path,
    settings: Sequence[Setting],
    source: Path,
    frame: pd.DataFrame,
    lattice: Lattice,
    tmp: Path,
) -> tuple[dict[Setting, dict[str, Any]], dict[str, Any]]:
    """Run anjana on every setting (one subprocess) and evaluate its nodes.

    Returns:
        Per setting: its node, losses, suppressed rows, acceptability under sparkanon's
        rule, seconds and a note; and the environment's versions.
    """
    jobs = [
        {
            "label": label_of(s),
            "model": s[0],
            "param": s[1],
            "supp_level": 100.0 * s[2],
            "out": str(tmp / f"anjana_{label_of(s)}.csv"),
        }
        for s in settings
    ]
    spec = {
        "csv": str(source),
        "qi": list(QI),
        "sa": SENSITIVE,
        "row": ROW_COL,
        "hierarchies": {q: str(_bench.REPO_ROOT / HIERARCHY_DIR / f"{q}.csv") for q in QI},
        "jobs": jobs,
    }
    answer = run_anjana(python, spec)
    records: dict[Setting, dict[str, Any]] = {}
    for setting, job, res in zip(settings, jobs, answer["results"], strict=True):
        model, param, sup = setting
        rec: dict[str, Any] = {"seconds": res["seconds"], "node": None, "note": ""}
        rec["path"] = "greedy steps: " + (" ".join(res["steps"]) or "none")
        node, published = None, pd.DataFrame()
        if res["rows"] == 0:
            rec["note"] = "anjana returned an empty table (model not reached)"
        else:
            published = pd.read_csv(job["out"], dtype=str, keep_default_na=False)
            node, rec["note"] = anjana_node(frame, published, lattice.hierarchies)
        if node is not None:
            own = tuple(res["transformation"])
            if own != node:
                rec["note"] = _join(rec["note"], f"get_transformation says {fmt_node(own)}")
            at = node_quality(lattice, node, model, param, sup)
            actual = anjana_quality(frame, published, node, lattice.hierarchies, model)
            rec |= {
                "node": node,
                "height": sum(node),
                "precision": precision(node, lattice.heights),
                **actual,
                "max_suppressed_rows": limit(lattice.rows, sup),
                "acceptable": at["acceptable"],
            }
            if at["rows_suppressed"] != actual["rows_suppressed"]:
                rec["note"] = _join(
                    rec["note"],
                    f"sparkanon's rule at this node suppresses {at['rows_suppressed']} rows",
                )
        records[setting] = rec
        print(
            f"{'anjana':<10}{model:<9} {param:>2} MaxSup {sup:<4g} node {fmt_node(rec['node'])} "
            f"Prec {_f(rec.get('precision'), '.4f')} height {rec.get('height')} "
            f"suppressed {rec.get('rows_suppressed')} {rec['seconds']:.2f}s {rec['note']}",
            flush=True,
        )
    versions = {k: answer[k] for k in ("anjana", "pycanon", "numpy", "pandas", "python")}
    return records, versions


def sparkanon_row(
    setting: Setting,
    algo: str,
    out: Path,
    input_path: Path | None,
    lattice: Lattice,
    ref: dict[str, Any],
    anjana: dict[str, Any],
) -> tuple[dict[str, Any], list[str]]:
    """Run one sparkanon search, check it; its result row and the failed checks."""
    model, param, sup = setting
    config = CONFIGS[model]
    sets = overrides_of(model, param, algo, sup, out)
    if input_path is not None:
        sets.insert(0, f"input.path={input_path}")
    command = " ".join(
        ["python -m sparkanon.cli run", config, "--engine local"] + [f"--set {s}" for s in sets]
    )
    metrics, wall = run_sparkanon(config, sets)
    node = tuple(metrics["node"][q] for q in QI)
    mine = node_quality(lattice, node, model, param, sup)
    if algo == "incognito":
        ref_node, expected = ref["best"], ref["minimal"]
    else:
        ref_node, expected = ref["best_at_lowest"], ref["at_lowest"]
    ref_prec = precision(ref_node, lattice.heights)
    check = independent_check(metrics, mine, expected)
    lat = metrics["lattice"]
    row = {
        "method": algo,
        "node": fmt_node(node),
        "height": metrics["height"],
        "precision": metrics["precision"],
        "DM": metrics["DM"],
        "NCP": metrics["NCP"],
        "rows_suppressed": metrics["rows_suppressed"],
        "max_suppressed_rows": metrics["max_suppressed_rows"],
        "acceptable": mine["acceptable"],
        "published_classes": metrics["published_classes"],
        "achieved": achieved_of(metrics),
        "seconds": round(wall, 3),
        "search_seconds": metrics["seconds"].get("search"),
        "evaluated": lat["evaluated"],
        "passes": lat["passes"],
        "candidates": lat["candidates"],
        "pruned": lat["pruned"],
        "ref_node": fmt_node(ref_node),
        "ref_precision": ref_prec,
        "matches_ref": "yes" if node == ref_node else "no",
        "independent_check": check,
        "command": command,
    }
    row["prec_vs_anjana"], row["height_vs_anjana"] = compare(row, anjana)
    failed = []
    if abs(row["precision"] - ref_prec) > PREC_TOL:
        failed.append(f"{out.name}: Prec {row['precision']} != reference {ref_prec}")
    if check != "yes":
        failed.append(f"{out.name}: independent check: {check}")
    # Incognito maximises Prec over the acceptable nodes, Samarati minimises the height
    # first: each must be no worse than anjana's node, when acceptable, on its own goal.
    goal = "prec_vs_anjana" if algo == "incognito" else "height_vs_anjana"
    if row[goal] == "WORSE" and anjana.get("acceptable"):
        failed.append(f"{out.name}: {goal} WORSE at anjana's acceptable node")
    print(
        f"{algo:<10}{model:<9} {param:>2} MaxSup {sup:<4g} node {row['node']} "
        f"Prec {row['precision']:.4f} height {row['height']} suppressed "
        f"{row['rows_suppressed']} {wall:.2f}s (search {row['search_seconds']}s, "
        f"{lat['evaluated']} nodes) reference {row['ref_node']}, vs anjana: Prec "
        f"{row['prec_vs_anjana']}, height {row['height_vs_anjana']}; check {check}",
        flush=True,
    )
    return row, failed


def anjana_row(setting: Setting, rec: dict[str, Any], ref: dict[str, Any]) -> dict[str, Any]:
    """The result row of anjana's run."""
    keys = ["height", "precision", "DM", "NCP", "rows_suppressed", "max_suppressed_rows"]
    keys += ["acceptable", "published_classes", "achieved"]
    row = {k: rec.get(k, "") for k in keys}
    best = ref.get("best")
    return row | {
        "method": "anjana",
        "node": fmt_node(rec["node"]),
        "seconds": rec["seconds"],
        "ref_node": fmt_node(best),
        "matches_ref": "yes" if rec["node"] == best else "no",
        "note": _join(rec["note"], rec["path"]),
        "command": anjana_call(*setting),
    }


def exhaustive_row(
    setting: Setting, lattice: Lattice, ref: dict[str, Any], seconds: float
) -> dict[str, Any]:
    """The result row of the exhaustive lattice's best node."""
    best = node_quality(lattice, ref["best"], *setting)
    return best | {
        "method": "exhaustive",
        "node": fmt_node(ref["best"]),
        "seconds": round(seconds, 3),
        "ref_node": fmt_node(ref["best"]),
        "ref_precision": best["precision"],
        "matches_ref": "yes",
        "note": f"the best node at the lowest acceptable height ({ref['lowest_height']}) is "
        f"{fmt_node(ref['best_at_lowest'])}",
        "command": "this script's lattice sweep (seconds: the sweep of all settings)",
    }


def lattice_columns(ref: dict[str, Any]) -> dict[str, Any]:
    """The setting's counts over the whole lattice."""
    return {
        "lattice_acceptable": ref.get("acceptable", 0),
        "lattice_minimal": ref.get("minimal", ""),
        "lattice_lowest_height": ref.get("lowest_height", ""),
        "lattice_at_lowest_height": ref.get("at_lowest", ""),
        "monotonicity_violations": ref.get("violations", ""),
    }


def read_input(source: Path) -> pd.DataFrame:
    """The quasi-identifiers and the sensitive column of ``source``, as strings.

    Raises:
        RuntimeError: a missing value (``?`` or empty), which the configs' ``on_missing:
            drop`` would drop and anjana would not.
    """
    frame = pd.read_csv(source, dtype=str, keep_default_na=False)[[*QI, SENSITIVE]]
    missing = int(frame.isin(["?", ""]).to_numpy().sum())
    if missing:
        raise RuntimeError(f"{source}: {missing} missing values; this script assumes none")
    return frame.reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="*", default=list(K_VALUES), help="k values")
    parser.add_argument("--l", type=int, nargs="*", default=list(L_VALUES), help="entropy l")
    parser.add_argument(
        "--max-suppression", type=float, nargs="+", default=list(MAX_SUPPRESSION), help="MaxSup"
    )
    parser.add_argument("--algorithms", nargs="+", choices=ALGORITHMS, default=list(ALGORITHMS))
    parser.add_argument("--rows", type=int, help="the first N rows of adult.csv only")
    parser.add_argument("--work", type=Path, help="keep the sparkanon outputs here")
    parser.add_argument("--anjana-venv", type=Path, default=None, help="anjana's environment")
    parser.add_argument("--anjana", default=ANJANA_SPEC, help="pip requirement of anjana")
    parser.add_argument("--no-pycanon", action="store_true", help="skip pycanon_check")
    _bench.add_run_arguments(parser)
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir / "fulldomain_adult.csv")
    if any(k < 2 for k in args.k) or any(v < 2 for v in args.l):
        parser.error("k and l must be at least 2")
    if not args.k and not args.l:
        parser.error("give some --k or --l")
    if any(not 0 <= s < 1 for s in args.max_suppression):
        parser.error("--max-suppression must be in [0, 1)")
    if args.rows is not None and args.rows < 2:
        parser.error("--rows must be at least 2")
    args.out_dir = args.out_dir.resolve()
    os.chdir(_bench.REPO_ROOT)  # the configs' relative paths
    began = time.perf_counter()
    sha, prov = _bench.use_code(args.code, args.in_place)
    env = dict(os.environ)
    if not args.in_place:  # pycanon_check imports the same snapshot
        snap = str(_bench.SNAPSHOT_ROOT / sha)
        env["PYTHONPATH"] = os.pathsep.join([snap, *filter(None, [env.get("PYTHONPATH")])])

    venv = args.anjana_venv or default_anjana_venv()
    start = time.perf_counter()
    try:
        anjana_python = pycanon_check.ensure_venv(venv, args.anjana)
    except pycanon_check.VenvError as exc:
        print(f"anjana environment {venv} could not be created: {exc}", file=sys.stderr)
        return pycanon_check.EXIT_NO_VENV
    venv_seconds = time.perf_counter() - start

    models = [("k", k) for k in args.k] + [("entropy_l", v) for v in args.l]
    settings: list[Setting] = [(m, p, s) for m, p in models for s in args.max_suppression]
    hierarchies = [read_hierarchy(HIERARCHY_DIR / f"{q}.csv", q) for q in QI]
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="exp_fulldomain_") as tmp_name:
        tmp = Path(tmp_name)
        work = args.work.resolve() if args.work else tmp / "out"
        work.mkdir(parents=True, exist_ok=True)
        source, input_path = _bench.ADULT_CSV, None
        if args.rows is not None:
            source = input_path = _bench.head_csv(source, args.rows, tmp / "adult_head.csv")
        frame = read_input(source)
        print(f"{len(frame):,} rows of {source.name}, no missing value", flush=True)

        lattice = Lattice(frame, hierarchies)
        sw = sweep(lattice, models)
        times["sweep"] = sw.seconds
        print(
            f"exhaustive lattice: {len(sw.nodes)} nodes x {len(models)} models from "
            f"{lattice.entries:,} frequency-set entries in {sw.seconds:.1f} s",
            flush=True,
        )
        refs = {s: reference(sw, lattice, *s) for s in settings}

        start = time.perf_counter()
        anjana, anjana_env = anjana_records(anjana_python, settings, source, frame, lattice, tmp)
        times["anjana_subprocess"] = time.perf_counter() - start

        start = time.perf_counter()
        outputs: dict[str, Path] = {}
        for setting in settings:
            ref = refs[setting]
            if "best" not in ref:  # only on a few --rows: the searches would fail (exit 2)
                failures.append(f"{label_of(setting)}: no acceptable node; not run")
                continue
            base = {"model": setting[0], "param": setting[1], "max_suppression": setting[2]}
            group = []
            for algo in args.algorithms:
                out = work / f"{label_of(setting)}_{algo}"
                row, failed = sparkanon_row(
                    setting, algo, out, input_path, lattice, ref, anjana[setting]
                )
                outputs[out.name] = out
                failures += failed
                group.append(row)
            group.append(anjana_row(setting, anjana[setting], ref))
            if "best" in ref:
                group.append(exhaustive_row(setting, lattice, ref, sw.seconds))
            rows += [base | r | lattice_columns(ref) | {"code_sha": sha} for r in group]
        times["sparkanon"] = time.perf_counter() - start

        pycanon_rc, pycanon_summary = None, ""
        if not args.no_pycanon:
            start = time.perf_counter()
            print(f"pycanon_check on {len(outputs)} outputs ...", flush=True)
            pycanon_rc, tally, pycanon_summary = run_pycanon_check(
                list(outputs.values()), args.out_dir / "fulldomain_pycanon.csv", env
            )
            times["pycanon_check"] = time.perf_counter() - start
            print(f"{pycanon_summary} ({times['pycanon_check']:.0f} s)", flush=True)
            for r in rows:
                if r["method"] in ALGORITHMS:
                    label = f"{r['model']}{r['param']}_sup{r['max_suppression']:g}_{r['method']}"
                    r["pycanon"] = tally.get(label, "missing")
            if pycanon_rc != 0:
                failures.append(f"pycanon_check exited {pycanon_rc}: {pycanon_summary}")

    _bench.write_csv(args.out_dir / "fulldomain_adult.csv", rows, FIELDS)
    meta = {
        "command": _bench.command_line(),
        "rows": len(frame),
        "input": "data/adult/adult.csv"
        if args.rows is None
        else f"first {args.rows} rows of data/adult/adult.csv",
        "qi": list(QI),
        "sensitive": SENSITIVE,
        "heights": dict(zip(QI, lattice.heights, strict=True)),
        "lattice_nodes": len(sw.nodes),
        "frequency_set_entries": lattice.entries,
        "anjana_spec": args.anjana,
        "anjana_env": anjana_env,
        "anjana_venv": str(venv),
        "anjana_venv_seconds": round(venv_seconds, 2),
        "pycanon_check": pycanon_summary,
        "pycanon_exit": pycanon_rc,
        "failures": failures,
        "stage_seconds": {k: round(v, 2) for k, v in times.items()},
        "seconds": round(time.perf_counter() - began, 1),
        **prov,
    }
    _bench.write_json(args.out_dir / "fulldomain_adult.meta.json", meta)
    print(f"wrote {args.out_dir}/fulldomain_adult.csv and .meta.json in {meta['seconds']} s")
    for f in failures:
        print(f"FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
