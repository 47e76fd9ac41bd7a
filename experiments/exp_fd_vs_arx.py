"""Full-domain search on Adult: sparkanon's local engine beside ARX's Flash (issue 27).

Reproduces docs/benchmarks.md, section 14 ("Full-domain search on one machine").

For each setting (k, MaxSup) it runs, one after the other:

* **ARX** (3.9.2, a local build; never a dependency of sparkanon) through
  ``experiments/arx/ArxSearchDriver.java``, our measurement driver that calls ARX's public API:
  it loads the config's input CSV, makes the config's quasi-identifiers quasi-identifying
  with their ARX hierarchies (every other column insensitive), sets k-anonymity, the
  suppression limit and the matching loss (``precision`` -> ARX's monotonic precision,
  ``Metric.createPrecisionMetric(true)``: the mean of ``level / height`` over the
  attributes, which is ``1 - Prec`` of sparkanon's ``precision``; ``height`` -> ARX's height
  metric) and times ``ARXAnonymizer.anonymize()`` ``--arx-runs`` times in one JVM (the
  data loaded afresh, untimed, before each). Warm = the median of runs ``--warm-from``..N.
* **sparkanon** ``python -m sparkanon.cli run CONFIG --engine local --quiet --set
  report.enabled=false --set output.path=... --set model.k=K --set
  algorithm.max_suppression=S``, ``--runs`` times, from the repository root with this
  checkout first on ``PYTHONPATH``; ``seconds.search`` and ``node`` are read from
  ``metrics.json``, the wall is the process's.

Prints one JSON line per run, stamped with the start time and the checkout's commit
(``--jsonl`` also appends them to a file), then one Markdown
table with the medians, both nodes and whether they agree, and the ratio of sparkanon's
search to ARX's warm ``anonymize()``. The two spans cover the same work: the driver's
untimed ``Data.getHandle()`` parses the CSV and dictionary-encodes it (sparkanon's ``read``
and ``encode``); ``anonymize()`` maps the hierarchies onto the codes, projects the
quasi-identifiers and searches (sparkanon's ``levels``, ``frequency`` and ``search``; the
records keep every stage's seconds under ``stages``; ``levels`` and ``frequency`` take
about 0.01 s on Adult). ARX's Flash returns the global optimum of its metric;
sparkanon's Incognito the least-loss minimal node (ties to the lower height, then the lower
levels): the nodes can differ where the metric ties or differs.

The ARX classpath is ``<arx-dir>/classes``, ``<arx-dir>/jp`` (if present) and the jars under
``<arx-dir>/lib/ant`` except SWT's. The driver is compiled into ``--driver-dir`` (default
``<arx-dir>/driver``) with ``javac`` when its ``.class`` is missing or older than the source.

Usage: ``python -m experiments.exp_fd_vs_arx [--arx-dir /work/tmp/arx] [--driver-dir DIR]
[--config conf/adult_fd_k.yaml] [--settings 5:0.02,10:0,10:0.02] [--arx-runs 10]
[--warm-from 4] [--runs 3] [--jsonl FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DRIVER_SOURCE = ROOT / "experiments" / "arx" / "ArxSearchDriver.java"
DRIVER_CLASS = "ArxSearchDriver"
ARX_METRICS = {"precision": "precision-monotonic", "height": "height"}


@dataclass(frozen=True)
class Setting:
    """One (k, MaxSup) pair."""

    k: int
    max_suppression: float

    @property
    def label(self) -> str:
        """``k = 10, 2%``."""
        return f"k = {self.k}, {self.max_suppression * 100:g}%"


@dataclass(frozen=True)
class Study:
    """What both tools get from the config: data, quasi-identifiers, hierarchies, metric."""

    csv: Path
    quasi_identifiers: tuple[str, ...]
    hierarchy_dir: Path
    arx_metric: str


def parse_settings(text: str) -> list[Setting]:
    """Parse ``k:maxsup,k:maxsup`` (``5:0.02,10:0``).

    Args:
        text: The argument as typed.

    Returns:
        The settings in order.

    Raises:
        argparse.ArgumentTypeError: If an item is not ``int:float`` with k >= 2 and
            0 <= MaxSup < 1.
    """
    settings = []
    for item in text.split(","):
        k_text, _, sup_text = item.partition(":")
        try:
            setting = Setting(int(k_text), float(sup_text))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not k:maxsup: {item!r}") from None
        if setting.k < 2 or not 0.0 <= setting.max_suppression < 1.0:
            raise argparse.ArgumentTypeError(f"need k >= 2 and 0 <= maxsup < 1: {item!r}")
        settings.append(setting)
    return settings


def read_study(config_path: Path) -> Study:
    """Read the input, quasi-identifiers, hierarchy folder and metric from a full-domain config.

    Args:
        config_path: The sparkanon YAML config (paths in it are relative to the repository root).

    Returns:
        The study.

    Raises:
        SystemExit: If the hierarchies are not ``<one folder>/<attribute>.csv`` (the driver's
            layout) or the metric has no ARX counterpart here.
    """
    config = yaml.safe_load(config_path.read_text())
    hierarchies = {
        a["name"]: Path(a["hierarchy"]) for a in config["attributes"] if a.get("hierarchy")
    }
    folders = {path.parent for path in hierarchies.values()}
    if len(folders) != 1 or any(path.name != f"{name}.csv" for name, path in hierarchies.items()):
        sys.exit(f"{config_path}: hierarchies must be <folder>/<attribute>.csv in one folder")
    metric = config.get("algorithm", {}).get("metric", "precision")
    if metric not in ARX_METRICS:
        sys.exit(f"{config_path}: algorithm.metric {metric!r} has no ARX counterpart here")
    return Study(
        csv=ROOT / config["input"]["path"],
        quasi_identifiers=tuple(hierarchies),
        hierarchy_dir=ROOT / folders.pop(),
        arx_metric=ARX_METRICS[metric],
    )


def arx_classpath(arx_dir: Path, driver_dir: Path) -> str:
    """The classpath of the driver: its folder, ARX's classes and ARX's non-SWT jars."""
    parts = [driver_dir, arx_dir / "classes"]
    if (arx_dir / "jp").is_dir():
        parts.append(arx_dir / "jp")
    parts += sorted(
        p for p in (arx_dir / "lib" / "ant").rglob("*.jar") if "swt" not in p.name.lower()
    )
    return os.pathsep.join(str(p) for p in parts)


def ensure_driver(arx_dir: Path, driver_dir: Path) -> None:
    """Compile the driver into ``driver_dir`` unless an up-to-date ``.class`` is there."""
    compiled = driver_dir / f"{DRIVER_CLASS}.class"
    if compiled.exists() and compiled.stat().st_mtime >= DRIVER_SOURCE.stat().st_mtime:
        return
    driver_dir.mkdir(parents=True, exist_ok=True)
    command = [
        "javac",
        "-cp",
        arx_classpath(arx_dir, driver_dir),
        "-d",
        str(driver_dir),
        str(DRIVER_SOURCE),
    ]
    subprocess.run(command, check=True)


def run_arx(
    arx_dir: Path, driver_dir: Path, study: Study, setting: Setting, runs: int
) -> list[dict[str, Any]]:
    """Run the driver once (``runs`` anonymizations in one JVM); one record per run."""
    command = [
        "java",
        "-cp",
        arx_classpath(arx_dir, driver_dir),
        DRIVER_CLASS,
        str(study.csv),
        str(study.hierarchy_dir),
        ",".join(study.quasi_identifiers),
        str(setting.k),
        repr(setting.max_suppression),
        str(runs),
        study.arx_metric,
    ]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return [{"tool": "arx", "setting": setting.label, **json.loads(line)} for line in lines]


def run_sparkanon(config_path: Path, study: Study, setting: Setting, run: int) -> dict[str, Any]:
    """One local-engine run; its wall, ``seconds.search``, node and suppressed rows."""
    with tempfile.TemporaryDirectory(prefix="fd_vs_arx_") as tmp:
        command = [
            sys.executable,
            "-m",
            "sparkanon.cli",
            "run",
            str(config_path),
            "--engine",
            "local",
            "--quiet",
            "--set",
            "report.enabled=false",
            "--set",
            f"output.path={tmp}/out",
            "--set",
            f"model.k={setting.k}",
            "--set",
            f"algorithm.max_suppression={setting.max_suppression!r}",
        ]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        start = time.perf_counter()
        subprocess.run(command, check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        metrics = json.loads((Path(tmp) / "out" / "metrics.json").read_text())
    return {
        "tool": "sparkanon",
        "setting": setting.label,
        "run": run,
        "wall": wall,
        "search": metrics["seconds"]["search"],
        "stages": metrics["seconds"],
        "node": [metrics["node"][name] for name in study.quasi_identifiers],
        "suppressed": metrics["suppressed_by_node"],
        "evaluated": metrics["lattice"]["evaluated"],
    }


def code_commit() -> str:
    """The checkout's commit (``git rev-parse --short HEAD``; ``+dirty`` if sparkanon/ differs)."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "diff", "--quiet", "HEAD", "--", "sparkanon"], cwd=ROOT
    ).returncode
    return head + ("+dirty" if dirty else "")


def node_text(node: Sequence[int]) -> str:
    """``(4,2,1,1,0,0,0)``."""
    return "(" + ",".join(str(level) for level in node) + ")"


def one_node(records: Sequence[dict[str, Any]]) -> str:
    """The node all records chose, or every distinct one joined by `` / ``."""
    nodes = dict.fromkeys(node_text(r["node"]) for r in records)
    return " / ".join(nodes)


def table_row(
    setting: Setting,
    arx: Sequence[dict[str, Any]],
    ours: Sequence[dict[str, Any]],
    warm_from: int,
    load: str,
) -> str:
    """One Markdown row of the summary table."""
    warm = [r["seconds"] for r in arx if r["run"] >= warm_from]
    arx_s = statistics.median(warm)
    search = statistics.median(r["search"] for r in ours)
    wall = statistics.median(r["wall"] for r in ours)
    arx_node, our_node = one_node(arx), one_node(ours)
    agree = "yes" if arx_node == our_node else "no"
    cells = [
        setting.label,
        f"{arx_s:.3f} ({min(warm):.3f}-{max(warm):.3f})",
        f"{arx_node} {arx[-1]['suppressed']} supp., {arx[-1]['checked']} checked",
        f"{search:.3f} ({min(r['search'] for r in ours):.3f}-{max(r['search'] for r in ours):.3f})",
        f"{wall:.2f}",
        f"{our_node} {ours[-1]['suppressed']} supp., {ours[-1]['evaluated']} evaluated",
        agree,
        f"{search / arx_s:.1f}",
        load,
    ]
    return "| " + " | ".join(cells) + " |"


COLUMNS = (
    "setting",
    "ARX warm `anonymize()` s, median (range)",
    "ARX node",
    "sparkanon `search` s, median (range)",
    "sparkanon wall s, median",
    "sparkanon node",
    "nodes agree",
    "ratio search/ARX",
    "load avg (1 min, before-after)",
)
HEADER = "| " + " | ".join(COLUMNS) + " |\n|---|---|---|---|---:|---|---|---:|---|"


def main(argv: Sequence[str] | None = None) -> int:
    """Run both tools on every setting and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arx-dir", type=Path, default=Path("/work/tmp/arx"))
    parser.add_argument("--driver-dir", type=Path, default=None, help="default: <arx-dir>/driver")
    parser.add_argument("--config", type=Path, default=ROOT / "conf" / "adult_fd_k.yaml")
    parser.add_argument(
        "--settings", type=parse_settings, default=parse_settings("5:0.02,10:0,10:0.02")
    )
    parser.add_argument("--arx-runs", type=int, default=10)
    parser.add_argument(
        "--warm-from", type=int, default=4, help="first ARX run counted as warm (1-based)"
    )
    parser.add_argument("--runs", type=int, default=3, help="sparkanon runs per setting")
    parser.add_argument(
        "--jsonl", type=Path, default=None, help="also append the per-run records here"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.warm_from <= args.arx_runs or args.runs < 1:
        parser.error("need 1 <= --warm-from <= --arx-runs and --runs >= 1")
    driver_dir = args.driver_dir or args.arx_dir / "driver"
    config_path = args.config.resolve()
    study = read_study(config_path)
    ensure_driver(args.arx_dir, driver_dir)

    stamp = {"started": time.strftime("%Y-%m-%dT%H:%M:%S"), "code": code_commit()}
    rows = []
    for setting in args.settings:
        before = os.getloadavg()[0]
        arx = run_arx(args.arx_dir, driver_dir, study, setting, args.arx_runs)
        ours = [run_sparkanon(config_path, study, setting, run) for run in range(1, args.runs + 1)]
        load = f"{before:.1f}-{os.getloadavg()[0]:.1f}"
        for record in arx + ours:
            line = json.dumps({**stamp, **record})
            print(line, flush=True)
            if args.jsonl:
                with args.jsonl.open("a") as handle:
                    handle.write(line + "\n")
        rows.append(table_row(setting, arx, ours, args.warm_from, load))
    print()
    print(HEADER)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
