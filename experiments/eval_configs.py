"""Risk before and after, attacks and utility for every config in ``conf/`` (issue 25, target 3).

Reproduces docs/experiments.md, "Every config evaluated: risk before and after, attacks,
utility".

Each Adult config runs on Adult's training split (the first 30,162 rows of
``data/adult/adult.csv``, ``adult.data``) with the test split (the other 15,060,
``adult.test``) held out: ``report.holdout`` is the test split (the classifier's test rows
and the control set of the singling-out, linkability and inference attacks) and
``report.label`` is ``income``. The Complete Journey configs run on their whole input, with
no holdout. Every run is the product's own job with its report on (``sparkanon run CONFIG
--engine local --set input.path=... --set report...``), so the figures are those of the
``evaluation.json`` each run commits beside ``metrics.json``.

Columns: rows in and out; ARX's highest and average prosecutor risk and the share of
records at risk (risk > 0.2), before (the input) and after (the release); sample uniques;
the attacks on the release's classes (homogeneity: records in classes with one sensitive
value; similarity: records in classes whose sensitive values share one level; skewness: the
largest class distance to the whole table's distribution; linkage: the expected matching
rate of an attacker knowing every quasi-identifier); for perturbed and synthetic releases
the singling-out, linkability and inference risks against the control set; the mean total
variation distance over the quasi-identifiers; the classifier's accuracy trained on the
input and on the release, scored on the test split.

Usage::

    python -m experiments.eval_configs [--configs adult_mondrian_k ...] [--out-dir DIR]

Prints the markdown table (docs/experiments.md, "Evaluation of every config") and writes
``eval_configs.json`` (every evaluation) under ``--out-dir`` (default ``docs/bench``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRAIN_ROWS = 30_162


def split_adult(folder: Path, rows: int | None = None) -> tuple[Path, Path]:
    """Adult's training and test splits as two CSV files (header on each).

    Args:
        folder: Where the two files are written.
        rows: Keep only the first ``rows`` rows of each split (quick runs); all when ``None``.
    """
    lines = (ROOT / "data/adult/adult.csv").read_text(encoding="utf-8").splitlines(True)
    header, body = lines[0], lines[1:]
    train, test = folder / "adult_train.csv", folder / "adult_test.csv"
    train.write_text(header + "".join(body[:TRAIN_ROWS][:rows]), encoding="utf-8")
    test.write_text(header + "".join(body[TRAIN_ROWS:][:rows]), encoding="utf-8")
    return train, test


def _publishes_income(name: str) -> bool:
    """Whether the config publishes ``income`` (a keep or sensitive column): the label."""
    import yaml

    raw = yaml.safe_load((ROOT / "conf" / f"{name}.yaml").read_text(encoding="utf-8"))
    kept = {a["name"] for a in raw["attributes"] if a.get("kind") == "keep"}
    return "income" in kept or raw["sensitive"].get("name") == "income"


def run_config(name: str, out: Path, train: Path, test: Path, engine: str) -> dict[str, Any]:
    """Run one config with its report on; its ``evaluation.json`` and seconds."""
    args = [
        sys.executable,
        "-m",
        "sparkanon.cli",
        "run",
        str(ROOT / "conf" / f"{name}.yaml"),
        "--engine",
        engine,
        "--quiet",
        "--set",
        f"output.path={out}",
        "--set",
        "output.mode=overwrite",
    ]
    if name.startswith("adult"):
        args += ["--set", f"input.path={train}", "--set", f"report.holdout={test}"]
        if _publishes_income(name):
            args += ["--set", "report.label=income"]
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:], "seconds": seconds}
    evaluation = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    return {"evaluation": evaluation, "metrics": metrics, "seconds": seconds}


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * float(x):.1f}"


def _get(d: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def row_of(name: str, result: dict[str, Any]) -> list[str]:
    """One table row: the config and its figures (``-`` where one does not apply)."""
    if "error" in result:
        return [name, "failed: " + " ".join(result["error"])] + [""] * 11
    ev, metrics = result["evaluation"], result["metrics"]
    before, after = ev["risk"]["before"], ev["risk"]["after"]

    def risk(block: dict[str, Any] | None, *path: str) -> Any:
        return _get(block, "arx", *path) if block else None

    def pair(*path: str) -> str:
        return f"{_pct(risk(before, *path))} -> {_pct(risk(after, *path))}"

    attacks, anon = ev.get("attacks") or {}, ev.get("anonymeter") or {}
    distances = [v["tvd"] for v in ev["utility"]["distance"].values()]
    clf = ev["utility"]["classification"] or {}
    anon_text = "-"
    if anon:
        anon_text = " / ".join(
            _pct(_get(anon, a, "risk", "value"))
            for a in ("singling_out_univariate", "linkability", "inference")
        )
    return [
        name,
        f"{metrics['rows_in']:,} / {metrics['rows_out']:,}",
        pair("prosecutor", "highest"),
        pair("prosecutor", "average"),
        pair("prosecutor", "records_at_risk"),
        pair("sample_uniques"),
        _pct(_get(attacks, "homogeneity", "share")),
        _pct(_get(attacks, "similarity", "share")),
        _pct(_get(attacks, "skewness", "max")),
        _pct(_get((attacks.get("linkage") or [{}])[0], "expected_rate")),
        anon_text,
        f"{sum(distances) / len(distances):.3f}" if distances else "-",
        (
            f"{_pct(clf.get('accuracy_original'))} / {_pct(clf.get('accuracy_release'))}"
            if clf
            else "-"
        ),
    ]


HEADER = [
    "config",
    "rows in / out",
    "prosecutor highest % (before -> after)",
    "prosecutor average %",
    "records at risk %",
    "sample uniques %",
    "homogeneity %",
    "similarity %",
    "skewness max %",
    "linkage (all QIs known) %",
    "singling-out / linkability / inference risk %",
    "mean TVD",
    "accuracy % input / release",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="*", default=None, help="config names (default: all)")
    parser.add_argument("--engine", choices=["local", "spark"], default="local")
    parser.add_argument("--out-dir", default=str(ROOT / "docs" / "bench"))
    parser.add_argument("--rows", type=int, help="the first N rows of each split (quick runs)")
    args = parser.parse_args(argv)
    names = args.configs or sorted(p.stem for p in (ROOT / "conf").glob("*.yaml"))
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        train, test = split_adult(folder, args.rows)
        for name in names:
            results[name] = run_config(name, folder / name, train, test, args.engine)
            print(f"{name}: {results[name]['seconds']:.1f} s", file=sys.stderr)
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row_of(n, r)) + " |" for n, r in results.items()]
    print("\n".join(lines))
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval_configs.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0 if all("error" not in r for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
