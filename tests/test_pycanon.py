"""sparkanon's published tables agree with pycanon, an independent implementation.

experiments/pycanon_check.py runs pycanon (PyPI) in a virtual environment of its own, cached
in ``~/.cache/sparkanon/pycanon-venv`` (``$SPARKANON_PYCANON_VENV``), because pycanon pins
exact numpy/pandas versions. The first run creates it (about half a minute with the
index reachable); the test is skipped only when pip cannot reach the package index.
"""

from __future__ import annotations

import csv
import importlib
import json
from pathlib import Path
from types import ModuleType

import pytest


def _load() -> ModuleType:
    return importlib.import_module("experiments.pycanon_check")


@pytest.fixture(scope="module")
def check() -> ModuleType:
    """The script as a module, with its pycanon environment ready."""
    module = _load()
    try:
        module.ensure_venv(module.default_venv())
    except module.VenvError as exc:
        if exc.unreachable:
            pytest.skip(f"pip cannot reach the package index to install pycanon: {exc}")
        raise
    return module


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


JOBS = [
    ["--job", "ldiv", "conf/adult_mondrian_ldiv.yaml", "model.l=3"],
    ["--job", "rcl", "conf/adult_mondrian_k.yaml", "model=[{name: recursive_cl, c: 3, l: 2}]"],
    ["--job", "tclose", "conf/adult_mondrian_tclose.yaml", "model.1.t=0.3"],
]


def test_pycanon_agrees_on_adult_sample(check: ModuleType, tmp_path: Path) -> None:
    work, table = tmp_path / "work", tmp_path / "pycanon_check.csv"
    argv = ["--rows", "3000", "--work", str(work), "--csv", str(table)]
    assert check.main(argv + [arg for job in JOBS for arg in job]) == 0

    rows = _rows(table)
    assert rows and not [r for r in rows if r["agree"] == "no"]
    agree = {(r["output"], r["model"], r["source"]) for r in rows if r["agree"] == "yes"}
    # Each job's own model is compared with its metrics.json value, and every output's
    # classes, k, distinct l, entropy l and variational t with pycanon's.
    assert {
        ("ldiv", "entropy_l", "metrics.json"),
        ("rcl", "recursive_cl", "metrics.json"),
        ("tclose", "k", "metrics.json"),
        ("tclose", "t_closeness", "metrics.json"),
    } <= agree
    for label in ("ldiv", "rcl", "tclose"):
        models = {r["model"] for r in rows if r["output"] == label and r["agree"] == "yes"}
        assert {"classes", "k", "distinct_l", "entropy_l", "recursive_cl", "t_closeness"} <= models
    # pycanon's own recursive (c,l) sorts the counts increasing: shown, never compared.
    shipped = [r for r in rows if r["pycanon_call"] == "recursive_c_l_diversity (as shipped)"]
    assert len(shipped) == 3 and {r["agree"] for r in shipped} == {"n/c"}
    # The hierarchical EMD is matched exactly (mean of per-class, per-level pycanon t).
    hier = next(r for r in rows if r["output"] == "tclose" and "hierarchical" in r["quantity"])
    assert hier["rule"].startswith("|diff|") and hier["agree"] == "yes"
    verdicts = {r["output"]: r for r in rows if r["model"] == "verdict"}
    assert verdicts["rcl"]["ours"] == "violations=0" and verdicts["rcl"]["pycanon"] == "holds"
    assert verdicts["tclose"]["agree"] == "yes"
    meta = json.loads(table.with_suffix(".meta.json").read_text())
    assert meta["disagree"] == 0 and meta["outputs"][0]["pycanon_env"]["pycanon"]

    # A wrong achieved value is a disagreement: exit code 1.
    metrics_path = work / "tclose" / "metrics.json"
    metrics = json.loads(metrics_path.read_text())
    metrics["achieved"]["min_class_size"] += 1
    metrics_path.write_text(json.dumps(metrics))
    assert check.main([str(work / "tclose")]) == 1
