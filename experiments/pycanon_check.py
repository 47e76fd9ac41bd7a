"""Cross-check sparkanon's published tables with pycanon, an independent implementation.

Reproduces docs/experiments.md, "Cross-check with pycanon".

pycanon (PyPI, IFCA-CSIC) computes the k of k-anonymity, the l of distinct, entropy and
recursive (c,l) l-diversity and the t of t-closeness of a table, given its
quasi-identifiers and sensitive attribute. It pins exact versions of numpy, pandas and
typing_extensions, so it is kept out of sparkanon's dependencies: this script creates
(once, then cached) a virtual environment of its own with ``pip install pycanon`` and runs
pycanon there in a subprocess. It does not import pycanon in this process.

For each sparkanon output directory (``data/``, ``metrics.json``, ``config.yaml``) it reads
the quasi-identifiers (attributes of kind continuous, ordinal, categorical, nominal or
semantic) and the sensitive attribute from ``config.yaml``, hands the published rows to
pycanon and compares pycanon's numbers with sparkanon's: the ``achieved`` values of
``metrics.json`` for the job's models, sparkanon's model code (``sparkanon.models``) run
on the published classes for the other quantities, and ``sparkanon/tools/verify_release.py``'s
verdict. How the quantities map (pycanon 1.3.6, ``pycanon/anonymity/``):

* ``k_anonymity`` (``_k_anonymity.py``): the smallest class, ``min_class_size``. Equal.
* ``l_diversity`` (``_l_diversity.py``): the fewest distinct sensitive values in a class,
  ``min_distinct_values``. Equal.
* ``entropy_l_diversity``: ``int(min over classes of e ** H)``, ``H`` the class entropy
  in nats: the floor of our ``effective_l = exp(min_entropy)``. Equal, except that when
  ``effective_l`` is within ``1e-9`` of an integer ``n`` (classes of ``n`` equally
  frequent values) pycanon may floor the rounded ``e ** log(n)`` to ``n - 1``; both are
  accepted there.
* ``recursive_c_l_diversity``: pycanon takes ``l`` to be the table's distinct l (not a
  parameter) and returns ``c = max over classes of floor(r[0] / sum(r[l-1:]) + 1)`` with
  ``r = np.sort(counts)``, i.e. counts in *increasing* order: ``r[0]`` is the rarest value,
  not the most frequent one of the definition ``r_1 < c (r_l + ... + r_m)`` (counts in
  decreasing order), so its c is 1 or 2 whatever the table. That row is shown, marked
  not comparable (``n/c``), beside the c its increasing-order formula gives on our
  counts. A second row runs the same pycanon function with its ``np.sort`` made
  decreasing and its ``l`` set to the config's ``l``: then it returns the smallest
  integer c the table satisfies, ``floor(max_recursive_ratio) + 1``. Equal.
* ``t_closeness`` (``_t_closeness.py``, ``utils/aux_anonymity.py``): for a string
  sensitive column ``aux_t_closeness_str``, ``max over classes of (1/2) sum |p_i - q_i|``
  (the variational distance, equal to the EMD with equal ground distance), ``q`` the
  distribution of the table passed in (the published one); for a numeric column
  ``aux_t_closeness_num``, the ordered EMD ``(1/(m-1)) sum_i |sum_{j<=i} (p_j - q_j)|``
  over the ``m`` distinct values in numeric order (rank distance, as our ``ordered``
  ground). One row compares pycanon's string t with our variational distance
  (``metrics.json``'s ``max_distance`` when the job's measure is ``variational`` or
  ``emd``/``equal``, else sparkanon.models). For an ``emd``/``ordered`` model pycanon gets
  the sensitive values as numbers (or as their positions when ``sensitive.values``
  declares the order); for ``emd``/``hierarchical``, the per-class variational distances
  of the values generalized to each level of the hierarchy, whose mean is the
  hierarchical EMD (see :class:`Derived`). Both equal ``max_distance`` within ``1e-9``.
  pycanon has no KL: Pinsker's ``KL >= 2 V^2`` gives a lower bound only.
* ``classes``: pycanon's equivalence classes (``aux_anonymity.get_equiv_class``, a pandas
  groupby of the published quasi-identifiers) against ``published_classes``. Equal.
* ``verdict``: whether every config model holds, from pycanon's numbers (``undecided``
  where its integers cannot tell), against ``sparkanon-verify``'s ``violations=N``.

Usage::

    python -m experiments.pycanon_check OUTPUT_DIR [OUTPUT_DIR ...]
    python -m experiments.pycanon_check --job LABEL CONFIG [KEY=VALUE ...] [--job ...]
        [--rows N] [--csv docs/bench/pycanon_check.csv]   (one command line)

``--job`` runs ``sparkanon run CONFIG --engine local --set KEY=VALUE ...`` first (on the
first ``--rows`` rows of its input with ``--rows``) and checks its output. Exit code 0
when every comparable row agrees, 1 on a disagreement, 3 when the pycanon environment
cannot be created (pip could not install pycanon).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
VERIFY_SCRIPT = REPO_ROOT / "sparkanon" / "tools" / "verify_release.py"
PYCANON_SPEC = "pycanon==1.3.6"
QI_KINDS = {"continuous", "ordinal", "categorical", "nominal", "semantic"}
TOL = 1e-9
EXIT_DISAGREE = 1
EXIT_NO_VENV = 3
MARKER = "sparkanon-pycanon.json"
FIELDS = [
    "output",
    "model",
    "quantity",
    "ours",
    "source",
    "pycanon",
    "pycanon_call",
    "rule",
    "agree",
    "note",
]
# pip output that means the package index could not be reached (not a broken package).
UNREACHABLE = re.compile(
    r"from versions: none|Failed to establish a new connection|Max retries exceeded|"
    r"Temporary failure in name resolution|Name or service not known|Network is unreachable|"
    r"Connection refused|ConnectTimeoutError|ReadTimeoutError|NewConnectionError",
    re.IGNORECASE,
)


class VenvError(RuntimeError):
    """The pycanon virtual environment could not be created.

    Attributes:
        unreachable: pip's output says the package index could not be reached.
    """

    def __init__(self, message: str, unreachable: bool) -> None:
        super().__init__(message)
        self.unreachable = unreachable


def default_venv() -> Path:
    """``$SPARKANON_PYCANON_VENV``, else ``$XDG_CACHE_HOME`` (or ``~/.cache``)/sparkanon/..."""
    if os.environ.get("SPARKANON_PYCANON_VENV"):
        return Path(os.environ["SPARKANON_PYCANON_VENV"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "sparkanon" / "pycanon-venv"


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (two test runs must not build one venv together)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_venv(venv: Path, spec: str = PYCANON_SPEC, pip_timeout: int = 30) -> Path:
    """The Python of a virtual environment holding ``spec``, created on first use.

    The environment is reused while its marker file names the same ``spec``; a
    half-built one (no marker) is removed and built again.

    Args:
        venv: where the environment lives.
        spec: the pip requirement to install.
        pip_timeout: pip's socket timeout in seconds.

    Returns:
        The environment's ``python``.

    Raises:
        VenvError: ``venv`` or ``pip install`` failed.
    """
    python = _venv_python(venv)
    marker = venv / MARKER
    with _locked(venv.parent / (venv.name + ".lock")):
        if marker.is_file() and python.exists():
            with contextlib.suppress(ValueError, OSError):
                if json.loads(marker.read_text()).get("spec") == spec:
                    return python
        if venv.exists():
            shutil.rmtree(venv)
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(python), "-m", "pip", "install", "--quiet", "--timeout", str(pip_timeout), spec],
        ]
        for cmd in steps:
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            except OSError as exc:
                raise VenvError(f"{shlex.join(cmd)}: {exc}", unreachable=False) from exc
            if done.returncode != 0:
                out = (done.stdout + done.stderr).strip()
                tail = "\n".join(out.splitlines()[-15:])
                raise VenvError(
                    f"{shlex.join(cmd)} exited {done.returncode}:\n{tail}",
                    unreachable=bool(UNREACHABLE.search(out)),
                )
        marker.write_text(json.dumps({"spec": spec}))
    return python


# Runs in the pycanon environment: argv[1] is a JSON spec, stdout gets one JSON object.
RUNNER = r"""
import importlib.metadata as md
import json
import math
import platform
import sys
import time

import numpy as np
import pandas as pd
from pycanon import anonymity
from pycanon.anonymity import _l_diversity
from pycanon.anonymity.utils import aux_anonymity


def plain(x):
    if isinstance(x, dict):
        return x
    if isinstance(x, tuple):
        return [plain(v) for v in x]
    if isinstance(x, (np.integer, int)) and not isinstance(x, bool):
        return int(x)
    x = float(x)
    return x if math.isfinite(x) else repr(x)


class Decreasing:
    # numpy, except that sort returns the values in decreasing order
    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def sort(a, *args, **kwargs):
        return -np.sort(-np.asarray(a), *args, **kwargs)


def recursive_at(data, qi, sa, l_value):
    saved = _l_diversity.np, _l_diversity.l_diversity
    _l_diversity.np = Decreasing()
    _l_diversity.l_diversity = lambda *args, **kwargs: l_value
    try:
        return anonymity.recursive_c_l_diversity(data, qi, sa)
    except (OverflowError, ZeroDivisionError):
        return (float("inf"), l_value)  # a class with fewer than l values: empty tail
    finally:
        _l_diversity.np, _l_diversity.l_diversity = saved


spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
qi, sa = spec["qi"], spec["sa"]
text = {c: str for c in qi + [sa] + spec["string_columns"]}
data = pd.read_csv(spec["csv"], dtype=text, keep_default_na=False)
out = {
    "pycanon": md.version("pycanon"),
    "numpy": np.__version__,
    "pandas": pd.__version__,
    "python": platform.python_version(),
    "rows": len(data),
    "string_sensitive": bool(pd.api.types.is_string_dtype(data[sa])),
}
seconds = {}


def timed(name, fn):
    start = time.perf_counter()
    out[name] = plain(fn())
    seconds[name] = round(time.perf_counter() - start, 3)


timed("classes", lambda: len(aux_anonymity.get_equiv_class(data, qi)))
timed("k_anonymity", lambda: anonymity.k_anonymity(data, qi))
timed("l_diversity", lambda: anonymity.l_diversity(data, qi, [sa]))
timed("entropy_l_diversity", lambda: anonymity.entropy_l_diversity(data, qi, [sa]))
timed("recursive_c_l_diversity", lambda: anonymity.recursive_c_l_diversity(data, qi, [sa]))
for l_value in spec["recursive_l"]:
    timed(f"recursive_decreasing_l{l_value}", lambda: recursive_at(data, qi, [sa], l_value))
timed("t_closeness", lambda: anonymity.t_closeness(data, qi, [sa]))
for col in spec["string_columns"] + spec["numeric_columns"]:
    timed(f"t_closeness:{col}", lambda: anonymity.t_closeness(data, qi, [col]))


def per_class(columns):
    # pycanon's t of each class against the rest of the table, merged into one class
    per, sizes = {c: [] for c in columns}, []
    for ec in aux_anonymity.get_equiv_class(data, qi):
        inside = np.zeros(len(data), dtype=bool)
        inside[ec] = True
        two = data[columns].copy()
        two["__class"] = np.where(inside, "class", "rest")
        for c in columns:
            per[c].append(plain(anonymity.t_closeness(two, ["__class"], [c])))
        sizes.append(int(len(ec)))
    return {"t": per, "sizes": sizes}


if spec["per_class_columns"]:
    timed("per_class", lambda: per_class(spec["per_class_columns"]))
out["numeric"] = {c: bool(pd.api.types.is_numeric_dtype(data[c])) for c in spec["numeric_columns"]}
out["seconds"] = seconds
print(json.dumps(out))
"""


def run_runner(
    python: Path, code: str, spec: dict[str, Any], timeout: float, name: str
) -> dict[str, Any]:
    """Run the Python source ``code`` with another environment's ``python`` on ``spec``.

    ``spec`` goes through a temporary JSON file whose path is the runner's argument; the
    runner prints its JSON answer as its last line.

    Raises:
        RuntimeError: the runner failed (its exit code and the end of its stderr).
    """
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        done = subprocess.run(
            [str(python), "-c", code, handle.name],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    finally:
        os.unlink(handle.name)
    if done.returncode != 0:
        raise RuntimeError(f"{name} runner exited {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_pycanon(python: Path, spec: dict[str, Any], timeout: float = 1800) -> dict[str, Any]:
    """Run :data:`RUNNER` with ``python`` on ``spec``; its JSON answer.

    Raises:
        RuntimeError: the runner failed.
    """
    return run_runner(python, RUNNER, spec, timeout, "pycanon")


@dataclass
class Output:
    """One sparkanon output directory, read.

    Attributes:
        label: its name in the table.
        path: the directory.
        cfg: its ``config.yaml``.
        metrics: its ``metrics.json``.
        table: the published rows.
        qi: the quasi-identifier columns.
        sensitive: the sensitive column.
        models: the config's model mappings.
    """

    label: str
    path: Path
    cfg: dict[str, Any]
    metrics: dict[str, Any]
    table: pd.DataFrame
    qi: list[str]
    sensitive: str
    models: list[dict[str, Any]] = field(default_factory=list)


def read_output(path: Path, label: str | None = None) -> Output:
    """Read an output directory's config, metrics and published rows (as strings)."""
    cfg = yaml.safe_load((path / "config.yaml").read_text(encoding="utf-8"))
    metrics = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
    parts = sorted((path / "data").glob("*.parquet"))
    if parts:
        table = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    else:
        parts = sorted((path / "data").glob("*.csv"))
        table = pd.concat(
            [pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts], ignore_index=True
        )
    qi = [a["name"] for a in cfg["attributes"] if a["kind"] in QI_KINDS]
    sensitive = cfg["sensitive"]["name"]
    table = table[qi + [sensitive]].astype(str).reset_index(drop=True)
    models = cfg["model"] if isinstance(cfg["model"], list) else [cfg["model"]]
    return Output(label or path.name, path, cfg, metrics, table, qi, sensitive, models)


def declared_values(out: Output) -> list[str]:
    """The sensitive values the config declares (``values``, else its levels'), or []."""
    sens = out.cfg["sensitive"]
    levels = sens.get("levels") or []
    return [str(v) for v in (sens.get("values") or [v for lv in levels for v in lv["values"]])]


class Ours:
    """sparkanon's model code (``sparkanon.models``) run on an output's published classes.

    The classes are the groups of published rows with equal quasi-identifier values;
    the reference distribution of t-closeness is the published table's.
    """

    def __init__(self, out: Output) -> None:
        from sparkanon.models import ClassSummaries, SensitiveDomain

        values = declared_values(out) or sorted(out.table[out.sensitive].unique())
        index = {v: i for i, v in enumerate(values)}
        codes = out.table[out.sensitive].map(index).to_numpy(dtype=np.int64)
        keys = out.table[out.qi].agg("\x1f".join, axis=1)
        group, _ = pd.factorize(keys)
        n = int(group.max()) + 1 if len(group) else 0
        self.summaries = ClassSummaries.from_codes(group, codes, n, len(values))
        order = out.cfg["sensitive"].get("values")
        self.domain = SensitiveDomain(
            values=tuple(values),
            counts=np.bincount(codes, minlength=len(values)),
            order=tuple(order) if order else None,
            name=out.sensitive,
        )

    def worst(self, model: dict[str, Any]) -> dict[str, float]:
        """``worst`` of one model (a config mapping) over the published classes."""
        from sparkanon.models import parse_models

        return parse_models([model]).bind(self.domain).worst(self.summaries)

    def ascending_c(self, l_value: int) -> float:
        """The c of pycanon as shipped: ``max floor(r[0] / sum(r[l-1:]) + 1)``, r increasing."""
        worst = 0.0
        for row in self.summaries.counts:
            r = np.sort(row[row > 0])
            worst = max(worst, math.floor(r[0] / r[l_value - 1 :].sum() + 1))
        return worst


def achieved(out: Output, index: int, key: str) -> float | None:
    """The model ``index``'s ``key`` in ``metrics.json`` ``achieved`` (maybe prefixed), or None."""
    got = out.metrics.get("achieved", {})
    name = out.models[index]["name"]
    for candidate in (f"model.{index}.{key}", f"{name}.{key}", key):
        if candidate in got:
            return float(got[candidate])
    return None


def fmt(x: Any) -> str:
    """A value for the table: integers as such, reals as their shortest round-trip repr."""
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, (list, tuple)):
        return "(" + ", ".join(fmt(v) for v in x) + ")"
    if isinstance(x, (int, np.integer)) or (isinstance(x, float) and x.is_integer()):
        return str(int(x))
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return repr(float(x))


def _num(x: Any) -> float:
    """A runner value (number, or ``'nan'``/``'inf'`` text) as a float."""
    return float(x)


@dataclass
class Row:
    """One line of the agreement table (see :data:`FIELDS`)."""

    output: str
    model: str
    quantity: str
    ours: str
    source: str
    pycanon: str
    pycanon_call: str
    rule: str
    agree: str
    note: str = ""


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


def verify_verdict(out: Output) -> tuple[int | None, str]:
    """``sparkanon/tools/verify_release.py``'s ``violations=N`` on the output, and its line."""
    done = subprocess.run(
        [sys.executable, str(VERIFY_SCRIPT), str(out.path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )
    line = (done.stdout + done.stderr).strip().splitlines()
    text = line[-1] if line else f"exit {done.returncode}"
    hit = re.search(r"violations=(\d+)", text)
    return (int(hit.group(1)) if hit else None), text


def resolve(path: str) -> Path:
    """A config's relative path, from the working directory or else the repository root."""
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return REPO_ROOT / p


def read_hierarchy(path: str) -> dict[str, list[str]]:
    """An ARX hierarchy CSV (``;``-separated): each leaf's chain from itself to the root."""
    with open(resolve(path), newline="", encoding="utf-8-sig") as handle:
        rows = [[c.strip() for c in r] for r in csv.reader(handle, delimiter=";") if r]
    return {r[0]: r for r in rows}


@dataclass
class Derived:
    """Columns derived from the sensitive one so that pycanon's t-closeness sees a ground.

    pycanon's ``t_closeness`` compares values as equal-or-not on a string column and on
    the line of their numeric order on a numeric one. For the ``ordered`` ground we pass
    the values' positions (or the values as numbers). For the ``hierarchical`` ground we
    pass the values generalized to each level ``j = 1 .. H-1``: Li et al.'s hierarchical
    EMD of a class is ``(1/H) sum_{j<H} V_j``, ``V_j`` the variational distance of its
    distribution generalized to level ``j`` (``cost(N) = height(N)/H min(pos, neg)`` summed
    over the level-``j`` nodes is ``j/H (V_{j-1} - V_j)``; the sum telescopes, ``V_H = 0``).
    pycanon returns only the largest ``V_j`` over the classes, so each class is scored
    alone, against the rest of the table merged into one class: pycanon's t of those two
    classes is the class's ``V_j`` when it holds at most half the rows (the rest's
    distance is ``n / (N - n)`` times the class's).

    Attributes:
        index: the t-closeness model (its index in the config's list) served.
        ground: ``ordered`` or ``hierarchical``.
        columns: new column name -> values; hierarchical: level 1 first.
        numeric: whether pycanon must read the columns as numbers.
        height: hierarchical: the hierarchy's height ``H``.
        comparable: ordered: whether pycanon's line is ours.
        how: what the columns hold.
        per_class: hierarchical: the columns to score class by class (levels 0 .. H-1).
    """

    index: int
    ground: str
    columns: dict[str, pd.Series]
    numeric: bool = False
    height: int = 0
    comparable: bool = True
    how: str = ""
    per_class: list[str] = field(default_factory=list)


def derived_columns(out: Output) -> list[Derived]:
    """The :class:`Derived` columns of every ordered or hierarchical EMD model of the job."""
    found = []
    values = out.table[out.sensitive]
    for i, m in enumerate(out.models):
        ground = m.get("ground", "equal")
        if m["name"] != "t_closeness" or m.get("measure", "emd") != "emd" or ground == "equal":
            continue
        if ground == "hierarchical":
            paths = read_hierarchy(m["hierarchy"])
            height = len(next(iter(paths.values()))) - 1
            cols = {
                f"__h{i}_level{j}": values.map({v: p[j] for v, p in paths.items()})
                for j in range(1, height)
            }
            levels = [out.sensitive, *cols]
            found.append(Derived(i, ground, cols, height=height, how="levels", per_class=levels))
            continue
        declared = out.cfg["sensitive"].get("values")
        if declared:
            pos = {str(v): n for n, v in enumerate(declared)}
            present = set(values.unique())
            col = values.map(pos)
            how = "positions in sensitive.values"
            comparable = set(pos) <= present  # pycanon's line holds only published values
        else:
            col = pd.to_numeric(values)
            how = "the values as numbers"
            comparable = True
        found.append(Derived(i, ground, {f"__ordered{i}": col}, True, 0, comparable, how))
    return found


def is_plain(m: dict[str, Any]) -> bool:
    """Whether a t-closeness model's distance is pycanon's: variational, or EMD of equal ground."""
    measure = m.get("measure", "emd")
    return measure == "variational" or (measure == "emd" and m.get("ground", "equal") == "equal")


def t_interval(
    m: dict[str, Any], py: dict[str, Any], derived: Derived | None
) -> tuple[float, float, str]:
    """Where pycanon's numbers put the job's t-closeness distance: ``(low, high, how)``.

    Exact (``low == high``) for the variational distance and the equal, ordered and
    hierarchical EMD (see :class:`Derived`); for KL, Pinsker's inequality ``KL >= 2 V^2``.
    """
    t_py = _num(py["t_closeness"])
    measure, ground = m.get("measure", "emd"), m.get("ground", "equal")
    if is_plain(m):
        return t_py, t_py, "t_closeness (string: equal distance)"
    if measure == "kl":
        return 2 * t_py**2, math.inf, "2 t_closeness^2 (Pinsker)"
    if derived is None:
        return 0.0, t_py, "t_closeness (equal distance): every ground distance is <= 1"
    if ground == "ordered":
        if not derived.comparable:
            return 0.0, t_py, "t_closeness (equal distance): declared values missing"
        (col,) = derived.columns
        t_num = _num(py[f"t_closeness:{col}"])
        return t_num, t_num, f"t_closeness (numeric: {derived.how})"
    per = py["per_class"]
    if max(per["sizes"], default=0) * 2 > py["rows"]:
        return 0.0, t_py, "t_closeness (equal distance): a class holds over half the rows"
    height = derived.height
    scores = np.array([[_num(v) for v in per["t"][c]] for c in derived.per_class])
    best = float(scores.mean(axis=0).max()) if scores.size else 0.0
    whole = ", ".join(fmt(_num(py[f"t_closeness:{c}"])) for c in derived.columns)
    call = f"mean of t_closeness per class at levels 0..{height - 1} (levels >= 1: {whole})"
    return best, best, call


def pycanon_verdict(
    out: Output, py: dict[str, Any], derived: dict[int, Derived]
) -> tuple[str, list[str]]:
    """Whether every config model holds by pycanon's numbers: holds, fails or undecided."""
    states, why = [], []
    k, lv, ent = _num(py["k_anonymity"]), _num(py["l_diversity"]), _num(py["entropy_l_diversity"])
    for i, m in enumerate(out.models):
        name = m["name"]
        state = "undecided"
        if name == "k":
            state = "holds" if k >= m["k"] else "fails"
        elif name == "p_sensitive":
            state = "holds" if k >= m["k"] and lv >= m["p"] else "fails"
        elif name == "hpk":
            state = "fails" if k < m["k"] or lv < m["p"] else "undecided"
            why.append(f"model.{i} hpk: pycanon has no sensitivity levels")
        elif name == "distinct_l":
            state = "holds" if lv >= m["l"] else "fails"
        elif name == "entropy_l":
            # pycanon's integer n says n <= exp(H_min) < n + 1, up to its floor's rounding.
            state = "holds" if ent >= m["l"] else "fails" if ent + 1 < m["l"] else "undecided"
            if state == "undecided":
                why.append(f"model.{i} entropy_l: pycanon's floor {fmt(ent)} cannot tell")
        elif name == "recursive_cl" and m["l"] >= 2:
            c_min = _num(py[f"recursive_decreasing_l{m['l']}"][0])
            state = "holds" if c_min <= m["c"] else "fails" if c_min - 1 >= m["c"] else "undecided"
        elif name == "t_closeness":
            low, high, _ = t_interval(m, py, derived.get(i))
            state = "holds" if high <= m["t"] + TOL else "fails" if low > m["t"] + TOL else state
            if state == "undecided":
                why.append(
                    f"model.{i} t_closeness: pycanon puts the distance in [{fmt(low)}, {fmt(high)}]"
                )
        states.append(state)
    if "fails" in states:
        return "fails", why
    return ("holds" if all(s == "holds" for s in states) else "undecided"), why


def compare(out: Output, py: dict[str, Any], ours: Ours, derived: dict[int, Derived]) -> list[Row]:
    """The agreement rows of one output (see the module docstring for the rules)."""
    rows: list[Row] = []
    suppressed = out.metrics.get("suppressed_unplaced", 0) > 0

    def add(
        model: str,
        quantity: str,
        value: Any,
        source: str,
        theirs: Any,
        call: str,
        rule: str,
        agree: str,
        note: str = "",
    ) -> None:
        rows.append(
            Row(
                out.label, model, quantity, fmt(value), source, fmt(theirs), call, rule, agree, note
            )
        )

    def ours_value(names: tuple[str, ...], key: str, probe: dict[str, Any]) -> tuple[float, str]:
        for i, m in enumerate(out.models):
            got = achieved(out, i, key) if m["name"] in names else None
            if got is not None:
                return got, "metrics.json"
        return float(ours.worst(probe)[key]), "sparkanon.models"

    published = out.metrics.get("published_classes")
    n_py = py["classes"]
    add(
        "classes",
        "published_classes",
        published,
        "metrics.json",
        n_py,
        "utils.aux_anonymity.get_equiv_class",
        "equal",
        _yes(published == n_py),
    )

    got, src = ours_value(("k", "p_sensitive", "hpk"), "min_class_size", {"name": "k", "k": 1})
    k_py = _num(py["k_anonymity"])
    add("k", "min_class_size", got, src, k_py, "k_anonymity", "equal", _yes(k_py == got))

    probe = {"name": "distinct_l", "l": 1}
    got, src = ours_value(("distinct_l", "p_sensitive", "hpk"), "min_distinct_values", probe)
    l_py = _num(py["l_diversity"])
    add(
        "distinct_l",
        "min_distinct_values",
        got,
        src,
        l_py,
        "l_diversity",
        "equal",
        _yes(l_py == got),
    )

    eff, src = ours_value(("entropy_l",), "effective_l", {"name": "entropy_l", "l": 1.0})
    ent_py = _num(py["entropy_l_diversity"])
    nearest = round(eff)
    boundary = abs(eff - nearest) <= TOL * max(1.0, eff)
    ok = ent_py == math.floor(eff) or (boundary and ent_py in (nearest - 1, nearest))
    note = ""
    if boundary and nearest >= 2 and ent_py == nearest - 1:
        note = (
            f"min entropy = log {nearest} up to rounding (classes exactly at the bound); "
            f"pycanon's int(e ** H) floors {nearest} - eps to {nearest - 1}"
        )
    add(
        "entropy_l",
        f"floor(effective_l), effective_l = {fmt(eff)}",
        math.floor(eff),
        src,
        ent_py,
        "entropy_l_diversity",
        "equal (n-1 or n when effective_l = n)",
        _yes(ok),
        note,
    )

    c_asc, l_asc = (_num(v) for v in py["recursive_c_l_diversity"])
    note = "pycanon sorts the counts increasing: c = floor(r_min / (r_l + ... + r_max) + 1)"
    if l_asc < 2:
        note = "pycanon computes no c when the table's distinct l is 1"
    else:
        note += f"; that formula on sparkanon's classes gives {fmt(ours.ascending_c(int(l_asc)))}"
    add(
        "recursive_cl",
        "(c, l), l = the table's distinct l",
        None,
        "-",
        (c_asc, l_asc),
        "recursive_c_l_diversity (as shipped)",
        "-",
        "n/c",
        note,
    )
    configured = [(i, m) for i, m in enumerate(out.models) if m["name"] == "recursive_cl"]
    if not configured and l_py >= 2:
        configured = [(None, {"name": "recursive_cl", "c": 1.0, "l": int(l_py)})]
    for i, m in configured:
        call = f"recursive_c_l_diversity (decreasing sort, l = {m['l']})"
        if m["l"] < 2:
            add(
                "recursive_cl",
                f"l = {m['l']}",
                None,
                "-",
                None,
                call,
                "-",
                "n/c",
                "pycanon computes no c for l = 1",
            )
            continue
        got = achieved(out, i, "max_recursive_ratio") if i is not None else None
        src = "metrics.json"
        if got is None:
            got, src = float(ours.worst(m)["max_recursive_ratio"]), "sparkanon.models"
        c_ours = math.floor(got) + 1 if math.isfinite(got) else math.inf
        c_py = _num(py[f"recursive_decreasing_l{m['l']}"][0])
        quantity = f"floor(max_recursive_ratio) + 1, l = {m['l']}, ratio = {fmt(got)}"
        add("recursive_cl", quantity, c_ours, src, c_py, call, "equal", _yes(c_py == c_ours))

    t_py = _num(py["t_closeness"])
    variational = {"name": "t_closeness", "t": 1.0, "measure": "variational"}
    plain = [i for i, m in enumerate(out.models) if m["name"] == "t_closeness" and is_plain(m)]
    if plain and not suppressed:
        got, src = achieved(out, plain[0], "max_distance"), "metrics.json"
    else:
        got, src = float(ours.worst(variational)["max_distance"]), "sparkanon.models"
    add(
        "t_closeness",
        "max_distance, variational = emd/equal",
        got,
        src,
        t_py,
        "t_closeness (string: equal distance)",
        f"|diff| <= {TOL:g}",
        _yes(abs(t_py - got) <= TOL),
    )
    for i, m in enumerate(out.models):
        if m["name"] != "t_closeness" or i in plain:
            continue
        measure, ground = m.get("measure", "emd"), m.get("ground", "equal")
        low, high, call = t_interval(m, py, derived.get(i))
        got, src = achieved(out, i, "max_distance"), "metrics.json"
        if got is None or suppressed:
            probe = dict(m)
            if probe.get("hierarchy"):
                probe["hierarchy"] = str(resolve(probe["hierarchy"]))
            got, src = float(ours.worst(probe)["max_distance"]), "sparkanon.models"
        quantity = f"max_distance, {measure}" + (f"/{ground}" if measure == "emd" else "")
        if low == high:
            add(
                "t_closeness",
                quantity,
                got,
                src,
                low,
                call,
                f"|diff| <= {TOL:g}",
                _yes(abs(low - got) <= TOL),
            )
        else:
            add(
                "t_closeness",
                quantity,
                got,
                src,
                f"[{fmt(low)}, {fmt(high)}]",
                call,
                "low <= ours <= high",
                _yes(low - TOL <= got <= high + TOL),
            )

    violations, line = verify_verdict(out)
    state, why = pycanon_verdict(out, py, derived)
    if violations is None or state == "undecided":
        agree = "n/c"
    else:
        agree = _yes((violations == 0) == (state == "holds"))
    shown = ", ".join(
        m["name"] + "(" + ", ".join(f"{k}={v}" for k, v in m.items() if k != "name") + ")"
        for m in out.models
    )
    ours_text = f"violations={violations}" if violations is not None else line
    add(
        "verdict",
        f"every model holds: {shown}",
        ours_text,
        "sparkanon-verify",
        state,
        "the pycanon values above",
        "violations=0 iff holds",
        agree,
        "; ".join(why),
    )
    return rows


def check_output(out: Output, python: Path, scratch: Path) -> tuple[list[Row], dict[str, Any]]:
    """Run pycanon on one output; the agreement rows and the run's facts."""
    ours = Ours(out)
    derived = {d.index: d for d in derived_columns(out)}
    table = out.table.copy()
    strings, numbers = [], []
    for d in derived.values():
        for name, col in d.columns.items():
            table[name] = col
            (numbers if d.numeric else strings).append(name)
    csv_path = scratch / f"{out.label}.csv"
    table.to_csv(csv_path, index=False)
    l_values = {int(m["l"]) for m in out.models if m["name"] == "recursive_cl"} - {1}
    if not any(m["name"] == "recursive_cl" for m in out.models):
        distinct = int(ours.summaries.distinct().min()) if ours.summaries.m else 0
        l_values = {distinct} if distinct >= 2 else set()
    spec = {
        "csv": str(csv_path),
        "qi": out.qi,
        "sa": out.sensitive,
        "recursive_l": sorted(l_values),
        "string_columns": strings,
        "numeric_columns": numbers,
        "per_class_columns": sorted({c for d in derived.values() for c in d.per_class}),
    }
    start = time.perf_counter()
    py = run_pycanon(python, spec)
    elapsed = time.perf_counter() - start
    csv_path.unlink()
    if not all(py["numeric"].values()) or not py["string_sensitive"]:
        raise RuntimeError(f"{out.label}: pycanon read a column with the wrong type: {py}")
    rows = compare(out, py, ours, derived)
    info = {
        "output": out.label,
        "path": str(out.path),
        "rows": int(len(out.table)),
        "published_classes": out.metrics.get("published_classes"),
        "pycanon_classes": py["classes"],
        "model": out.models,
        "pycanon_seconds": round(elapsed, 2),
        "pycanon_call_seconds": py["seconds"],
        "pycanon_env": {k: py[k] for k in ("pycanon", "numpy", "pandas", "python")},
    }
    return rows, info


def run_job(label: str, config: str, sets: list[str], work: Path, rows: int | None) -> Path:
    """``sparkanon run CONFIG --engine local`` into ``work/label``; the output directory."""
    out = work / label
    cmd = [sys.executable, "-m", "sparkanon.cli", "run", config, "--engine", "local"]
    cmd += ["--quiet", "--format", "json"]
    overrides = [f"output.path={out}", "output.mode=overwrite", *sets]
    if rows is not None:
        cfg = yaml.safe_load((REPO_ROOT / config).read_text(encoding="utf-8"))
        source = REPO_ROOT / cfg["input"]["path"]
        sample = work / f"{source.stem}_head{rows}.csv"
        if not sample.exists():
            with open(source, encoding="utf-8") as src, open(sample, "w", encoding="utf-8") as dst:
                for n, line in enumerate(src):
                    if n > rows:
                        break
                    dst.write(line)
        overrides.insert(0, f"input.path={sample}")
    for item in overrides:
        cmd += ["--set", item]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO_ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return out


def markdown(rows: list[Row]) -> str:
    """The agreement table as Markdown."""
    cols = ["output", "model", "quantity", "ours", "source", "pycanon", "agree", "note"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [str(getattr(r, c)).replace("|", "\\|") for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def provenance(argv: list[str]) -> dict[str, Any]:
    """The command, time, code hash and machine (via :mod:`experiments._bench`)."""
    from experiments import _bench

    return {
        "command": "python -m experiments.pycanon_check " + shlex.join(argv),
        "utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "code_sha": _bench.code_sha(),
        **_bench.git_state(),
        **_bench.machine(),
    }


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outputs", nargs="*", type=Path, metavar="OUTPUT_DIR")
    parser.add_argument(
        "--job",
        nargs="+",
        action="append",
        default=[],
        metavar="ARG",
        help="LABEL CONFIG [KEY=VALUE ...]: run sparkanon (local engine) and check its output",
    )
    parser.add_argument("--rows", type=int, help="run the jobs on the first ROWS input rows")
    parser.add_argument("--work", type=Path, help="where jobs write (default: a temporary dir)")
    parser.add_argument("--venv", type=Path, default=None, help="pycanon's virtual environment")
    parser.add_argument("--pycanon", default=PYCANON_SPEC, help="pip requirement of pycanon")
    parser.add_argument("--csv", type=Path, help="write the table as CSV (and CSV.meta.json)")
    args = parser.parse_args(argv)
    if not args.outputs and not args.job:
        parser.error("give OUTPUT_DIRs or --job")
    for job in args.job:
        if len(job) < 2:
            parser.error("--job needs LABEL CONFIG [KEY=VALUE ...]")
    venv = args.venv or default_venv()
    start = began_all = time.perf_counter()
    try:
        python = ensure_venv(venv, args.pycanon)
    except VenvError as exc:
        print(f"pycanon environment {venv} could not be created: {exc}", file=sys.stderr)
        return EXIT_NO_VENV
    venv_seconds = time.perf_counter() - start
    rows: list[Row] = []
    infos: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pycanon_check_") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        targets = [(p, None, None) for p in args.outputs]
        for label, config, *sets in args.job:
            began = time.perf_counter()
            path = run_job(label, config, sets, work, args.rows)
            targets.append((path, label, (config, sets, time.perf_counter() - began)))
        for path, label, job in targets:
            out = read_output(path, label)
            got, info = check_output(out, python, Path(tmp))
            if job is not None:
                info["job"] = {"config": job[0], "set": job[1], "seconds": round(job[2], 2)}
                if args.work is None:
                    del info["path"]  # a temporary directory
            rows += got
            infos.append(info)
    print(markdown(rows))
    bad = [r for r in rows if r.agree == "no"]
    print(
        f"\npycanon {infos[0]['pycanon_env']['pycanon'] if infos else '?'} ({venv}): "
        f"{sum(r.agree == 'yes' for r in rows)} agree, {len(bad)} disagree, "
        f"{sum(r.agree == 'n/c' for r in rows)} not comparable"
    )
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with open(args.csv, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(asdict(r) for r in rows)
        meta = provenance(argv) | {
            "pycanon_spec": args.pycanon,
            "venv_seconds": round(venv_seconds, 2),
            "rows_arg": args.rows,
            "seconds": round(time.perf_counter() - began_all, 1),
            "outputs": infos,
            "agree": sum(r.agree == "yes" for r in rows),
            "disagree": len(bad),
            "not_comparable": sum(r.agree == "n/c" for r in rows),
        }
        meta_path = args.csv.with_suffix(".meta.json")
        meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return EXIT_DISAGREE if bad else 0


if __name__ == "__main__":
    sys.exit(main())
