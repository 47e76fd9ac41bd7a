"""Strict Mondrian on one process: sparkanon's local engine beside Gong's Python Mondrian.

Reproduces docs/benchmarks.md, "Mondrian on one process against a pure-Python Mondrian".

Issue 27 compares ``sparkanon run conf/adult_mondrian_k.yaml --engine local`` with Qiyuan
Gong's pure-Python Mondrian (github.com/qiyuangong/Mondrian, ``python anonymizer.py s a
10``). This script runs both, one after the other, on the same rows and prints one table.

Rows. The rows of ``--rows-file`` (default: the 1M-row file of ``scripts/generate_adult.py``,
``--method model``), the first ``--rows`` of them if given, less every row holding a missing
value (``?``, empty or null in any column): Gong's reader drops every line holding a
``?``, so both tools get exactly the rows written here. They are written twice:

* ``WORK/gong/data/adult.data``, UCI Adult's format (15 comma-separated columns, no
  header), which Gong's ``utils/read_adult_data.py`` reads from ``data/adult.data`` in its
  working directory;
* ``WORK/rows.parquet``, the same rows and columns, read by sparkanon
  (``--set input.path=... input.format=parquet``).

Quasi-identifiers. Gong's reader has a fixed list in its module settings (``QI_INDEX``,
``IS_CAT``): age, workclass, education-num, marital-status, occupation, race, sex,
native-country, with income carried as the sensitive value. The demo's are the same less
occupation (its sensitive attribute). By default (``--gong-qi demo``) the launcher sets
those two settings to the demo's seven before his code reads the file; ``--gong-qi gong``
keeps his eight. Remaining differences, which his code does not let us change: his
categorical values are integer codes in order of first appearance, cut at the median code
(no hierarchies), where the demo cuts workclass, marital-status, race, sex and
native-country between subtrees of the ARX hierarchies; he cuts education-num, the demo
the ordinal education (the same order); age is numeric in both; his NCP and sparkanon's
GCP are the same formula on these different encodings.

Runs. Each tool runs in its own subprocess, its stdout and stderr to files in ``WORK``;
its wall and CPU seconds and peak resident memory are those ``/usr/bin/time`` reports.
Gong's code runs unmodified from ``--gong-dir`` (a checkout; nothing of it is copied
here) through a small launcher: it sets the loader's quasi-identifiers (above), and, as
Python 3.11 rejects the file mode ``'rU'`` his reader opens the data with, drops the
``U`` before calling ``open``. sparkanon runs from a frozen copy of ``sparkanon/``
(``experiments/_bench.py``, ``code_sha``) with ``--engine local`` and the config as it is
(report and verification included) but for the input and output paths.

The table gives, per tool: wall seconds, CPU seconds, peak RSS, the algorithm's own
seconds (Gong: his printed "Running time", the recursion alone; sparkanon: its
``plan_blocks`` and ``cluster`` stages), classes (Gong: distinct generalized rows of his
output) and the loss (Gong's printed NCP, sparkanon's GCP: the same formula, on different
encodings of the categorical attributes). One JSON line per run goes to
``--out-dir/mondrian_local_runs.jsonl``.

Usage::

    python -m experiments.bench_mondrian_local --gong-dir /tmp/gong_mondrian
    python -m experiments.bench_mondrian_local --gong-dir DIR --rows 100000 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from experiments import _bench
from scripts.prepare_adult import COLUMNS

TIME = "/usr/bin/time"
DEFAULT_ROWS = Path("/tmp/sparkanon_bench/adult_1m_model.parquet")
DEFAULT_WORK = Path("/tmp/sparkanon_bench/mondrian_local")
CONFIG = _bench.REPO_ROOT / "conf" / "adult_mondrian_k.yaml"
UCI_COLUMNS = list(COLUMNS)
"""UCI Adult's columns in file order (Gong's ``ATT_NAME``; prepare_adult.py's list)."""

DEMO_QI = {
    "QI_INDEX": [0, 1, 4, 5, 8, 9, 13],
    "IS_CAT": [False, True, False, True, True, True, True],
}
"""Gong's loader settings for the demo's seven quasi-identifiers: his eight less occupation."""

GONG_LAUNCHER = """
import builtins, json, runpy, sys
gong, settings, args = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
_open = builtins.open
def _open_without_u(file, mode="r", *rest, **kw):
    return _open(file, mode.replace("U", ""), *rest, **kw)
builtins.open = _open_without_u
sys.path.insert(0, gong)
import utils.read_adult_data as loader
for name, value in settings.items():
    setattr(loader, name, value)
sys.argv = [gong + "/anonymizer.py", *args]
runpy.run_path(gong + "/anonymizer.py", run_name="__main__")
"""
"""Runs Gong's ``anonymizer.py`` unmodified: ``open`` accepts his ``'rU'`` mode, and his
loader's module settings (``QI_INDEX``, ``IS_CAT``) are set before it reads."""


def complete_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows without a missing value in any UCI column (null, empty or ``?``).

    Gong's reader skips any line containing ``?``; removing such rows here keeps both
    tools on the same rows.
    """
    frame = frame[UCI_COLUMNS]
    text = frame.astype(str)
    missing = frame.isna().any(axis=1) | text.isin(["", "?"]).any(axis=1)
    missing |= text.apply(lambda c: c.str.contains("?", regex=False)).any(axis=1)
    return frame[~missing].reset_index(drop=True)


def gong_lines(frame: pd.DataFrame) -> list[str]:
    """The rows as UCI ``adult.data`` lines (``, `` separated)."""
    text = frame.astype(str)
    return (text[UCI_COLUMNS[0]].str.cat(text[UCI_COLUMNS[1:]], sep=", ") + "\n").tolist()


def prepare(args: argparse.Namespace) -> dict[str, Any]:
    """Write the same rows for both tools; return their count and paths."""
    frame = pd.read_parquet(args.rows_file)
    read = len(frame) if args.rows is None else min(args.rows, len(frame))
    frame = complete_rows(frame.head(read))
    gong_data = args.work / "gong" / "data" / "adult.data"
    gong_data.parent.mkdir(parents=True, exist_ok=True)
    with gong_data.open("w", encoding="utf-8") as handle:
        handle.writelines(gong_lines(frame))
    parquet = args.work / "rows.parquet"
    frame.to_parquet(parquet, index=False)
    return {"rows_read": read, "rows": len(frame), "gong_data": gong_data, "parquet": parquet}


def measured(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> dict[str, Any]:
    """Run ``cmd`` under ``/usr/bin/time``; its wall and CPU seconds, peak RSS and exit code.

    ``/usr/bin/time`` reports the peak of the command's own process (``%M``); the
    ``ru_maxrss`` this script could read itself would count its own memory, which a
    child shares between ``fork`` and ``exec``.
    """
    usage = log.with_suffix(".time")
    timed = [TIME, "-f", "%e %U %S %M", "-o", str(usage), *cmd]
    with log.with_suffix(".out").open("w") as out, log.with_suffix(".err").open("w") as err:
        code = subprocess.run(timed, cwd=cwd, env=env, stdout=out, stderr=err).returncode
    wall, user, system, rss_kib = usage.read_text().split("\n")[-2].split()
    return {
        "wall_s": round(float(wall), 2),
        "cpu_s": round(float(user) + float(system), 2),
        "peak_rss_mib": round(int(rss_kib) / 1024, 1),
        "exit": code,
    }


def run_gong(args: argparse.Namespace) -> dict[str, Any]:
    """Gong's strict Mondrian (``anonymizer.py s a K``) on ``WORK/gong/data/adult.data``."""
    cwd = args.work / "gong"
    settings = json.dumps(DEMO_QI if args.gong_qi == "demo" else {})
    cmd = [
        args.gong_python,
        "-c",
        GONG_LAUNCHER,
        str(args.gong_dir),
        settings,
        "s",
        "a",
        str(args.k),
    ]
    result = measured(cmd, cwd, dict(os.environ), args.work / "gong_run")
    text = (args.work / "gong_run.out").read_text()
    ncp = re.search(r"NCP ([0-9.]+)%", text)
    rtime = re.search(r"Running time ([0-9.]+) seconds", text)
    result["algorithm_s"] = float(rtime.group(1)) if rtime else None
    result["loss_pct"] = float(ncp.group(1)) if ncp else None
    out = cwd / "data" / "anonymized.data"
    if result["exit"] == 0 and out.is_file():
        with out.open(encoding="utf-8") as handle:
            rows = [line.rsplit(";", 1)[0] for line in handle]
        result["rows_out"] = len(rows)
        result["classes"] = len(set(rows))
    return result


def run_sparkanon(args: argparse.Namespace, parquet: Path, snapshot: Path) -> dict[str, Any]:
    """``sparkanon run CONFIG --engine local`` on ``parquet``, from the code snapshot."""
    for name in ("data", "conf"):  # the config's relative paths, from the snapshot folder
        link = snapshot / name
        if not link.exists():
            link.symlink_to(_bench.REPO_ROOT / name, target_is_directory=True)
    metrics_file = args.work / "sparkanon_metrics.json"
    metrics_file.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "sparkanon.cli",
        "run",
        str(args.config),
        "--engine",
        "local",
        "--quiet",
        "--format",
        "json",
        "--metrics-out",
        str(metrics_file),
        "--set",
        f"input.path={parquet}",
        "--set",
        "input.format=parquet",
        "--set",
        "input.options={}",
        "--set",
        f"output.path={args.work / 'sparkanon_out'}",
        "--set",
        f"model.k={args.k}",
    ]
    env = dict(os.environ, PYTHONPATH=str(snapshot))
    result = measured(cmd, snapshot, env, args.work / "sparkanon_run")
    if result["exit"] == 0:
        metrics = json.loads(metrics_file.read_text())
        seconds = metrics["seconds"]
        result["algorithm_s"] = round(seconds["plan_blocks"] + seconds["cluster"], 2)
        result["loss_pct"] = round(metrics["GCP"], 2)
        result["rows_out"] = metrics["rows_out"]
        result["classes"] = metrics["classes"]
        result["stage_seconds"] = seconds
    return result


def table(records: list[dict[str, Any]]) -> str:
    """The runs as one Markdown table."""
    head = (
        "| tool | rows | wall s | CPU s | peak RSS MiB | algorithm s | classes | NCP/GCP % |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )

    def cell(value: Any) -> str:
        return "-" if value is None else f"{value:,}" if isinstance(value, int) else str(value)

    lines = [
        "| "
        + " | ".join(
            [
                r["tool"],
                cell(r["rows"]),
                cell(r["wall_s"]),
                cell(r["cpu_s"]),
                cell(r["peak_rss_mib"]),
                cell(r.get("algorithm_s")),
                cell(r.get("classes")),
                cell(r.get("loss_pct")),
            ]
        )
        + " |"
        for r in records
    ]
    return head + "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gong-dir", type=Path, required=True, help="checkout of Gong's Mondrian")
    parser.add_argument("--gong-python", default=sys.executable, help="Python to run it with")
    parser.add_argument("--rows-file", type=Path, default=DEFAULT_ROWS)
    parser.add_argument("--rows", type=int, help="use the first N rows of --rows-file")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument(
        "--gong-qi",
        choices=["demo", "gong"],
        default="demo",
        help="Gong's quasi-identifiers: the demo's seven (default) or his loader's eight",
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs of each tool")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--out-dir", type=Path, default=_bench.BENCH_DIR)
    parser.add_argument("--code", help="code_sha of an existing snapshot to run (default: now)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.work, args.config = args.work.resolve(), args.config.resolve()
    if not (args.gong_dir / "anonymizer.py").is_file():
        print(f"--gong-dir {args.gong_dir}: no anonymizer.py there", file=sys.stderr)
        return 2
    args.gong_dir = args.gong_dir.resolve()
    snapshot, sha = _bench.snapshot_package(args.code)
    rows = prepare(args)
    print(f"rows: {rows['rows']:,} of {rows['rows_read']:,} read (complete rows only)")
    stamp = _bench.provenance(sha) | {"command": _bench.command_line()}
    records = []
    for repeat in range(args.repeats):
        for tool, run in (
            ("Gong (pure Python)", lambda: run_gong(args)),
            ("sparkanon --engine local", lambda: run_sparkanon(args, rows["parquet"], snapshot)),
        ):
            result = run()
            record = {"tool": tool, "repeat": repeat, "rows": rows["rows"], **result}
            record |= {"k": args.k, "gong_qi": args.gong_qi, **stamp}
            record["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
            _bench.append_jsonl(args.out_dir / "mondrian_local_runs.jsonl", record)
            records.append(record)
            print(f"{tool}: exit {result['exit']}, {result['wall_s']} s", flush=True)
    print(f"code_sha {sha}; load average at start {stamp['loadavg_at_start']}")
    print(table(records))
    return 0 if all(r["exit"] == 0 for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
