"""SUDA2 at scale: the engine path's wall time and driver memory per MSU size limit.

Reproduces docs/benchmarks.md, section 12 ("SUDA2: the engine path per MSU size limit").

Issue 25's SUDA2 size limit: on this machine, Spark ``local[2]``, generated Adult rows
(``scripts/generate_adult.py``), :func:`sparkanon.risk.suda.suda2_on_engine` over the
demo's seven quasi-identifiers for each ``--max-size``, beside a read-and-write floor
(a plain PySpark job reading the same Parquet file and writing it unchanged), each run
in its own process measured with ``experiments/bench_job.py``'s sampler (wall time, peak RSS
of the driver's Python process and of the JVM).

Results: ``OUT_DIR/suda{tag}.csv`` (one row per run) and each run's record in
``OUT_DIR/suda_runs{tag}.jsonl``; sparkanon runs from one frozen snapshot (``code_sha``).

Usage::

    python -m experiments.bench_suda --rows 100000 1000000 --max-size 2 3 4
    python -m experiments.bench_suda --report        # Markdown table of suda.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from experiments import _bench, bench_job, bench_perturb

QIS = ("age", "education", "marital-status", "native-country", "workclass", "sex", "race")
"""The demo's seven quasi-identifiers (conf/adult_hpk.yaml)."""
DATA_DIR = Path("/tmp/sparkanon_bench/perturb")
FIELDS = [
    "rows",
    "max_size",
    "seconds",
    "floor_s",
    "ratio",
    "driver_gib",
    "jvm_gib",
    "floor_driver_gib",
    "floor_jvm_gib",
    "records_with_msu",
    "sample_uniques",
    "msus",
    "other_cpu_s",
    "code_sha",
]


def _session():
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sparkanon-bench-suda")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def worker(path: str, max_size: int, out: str | None) -> int:
    """One measured run: the floor (``max_size == 0``) or SUDA2 (prints a JSON line)."""
    spark = _session()
    frame = spark.read.parquet(path)
    start = time.perf_counter()
    if max_size == 0:
        frame.write.mode("overwrite").parquet(out)
        print(json.dumps({"seconds": round(time.perf_counter() - start, 3)}))
    else:
        from sparkanon.engine.spark import SparkEngine
        from sparkanon.risk.suda import suda2_on_engine
        from sparkanon.risk.view import TableView

        kinds = {q: "numeric" if q == "age" else "categorical" for q in QIS}
        view = TableView(quasi_identifiers=QIS, kinds=kinds)
        result = suda2_on_engine(SparkEngine(spark), frame.select(*QIS), view, max_size)
        result["seconds"] = round(time.perf_counter() - start, 3)
        print(json.dumps(result))
    spark.stop()
    return 0


def measured(path: Path, max_size: int, sha: str, label: str, runs_file: Path) -> dict[str, Any]:
    """Run one worker in its own process from the snapshot; append and return its record."""
    snapshot, _ = _bench.snapshot_package(sha)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [
            str(snapshot),
            str(_bench.REPO_ROOT),
            *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []),
        ]
    )
    out = bench_job.OUT_ROOT / f"{label}-out"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(path)]
    cmd += ["--max-size", str(max_size), "--out", str(out)]
    print(f"[{label}] running", flush=True)
    m = bench_job.measure(cmd, env, bench_job._run_dir(snapshot))
    record = {
        "label": label,
        "command": " ".join(cmd),
        **{k: v for k, v in m.items() if k not in ("stdout", "stderr", "timeline")},
        **_bench.provenance(sha),
    }
    if m["returncode"] != 0:
        record["error"] = m["stderr"][-4000:]
    else:
        record["result"] = json.loads(m["stdout"].strip().splitlines()[-1])
    _bench.append_jsonl(runs_file, record)
    if m["returncode"] != 0:
        raise RuntimeError(f"{label} failed: {m['stderr'][-2000:]}")
    return record


def _gib(record: dict[str, Any], part: str) -> float:
    if part == "driver":
        return float(record["peak_rss_root_gib"])
    return float(record["peak_rss_by_part_gib"].get(part, 0.0))


def report(csv_file: Path) -> int:
    """Print the CSV as a Markdown table."""
    with csv_file.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    cols = ["rows", "max_size", "seconds", "floor_s", "ratio", "driver_gib", "jvm_gib",
            "records_with_msu", "sample_uniques", "msus"]  # fmt: skip
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(r[c] for c in cols) + " |")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--max-size", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out-dir", type=Path, default=_bench.BENCH_DIR)
    parser.add_argument("--tag", default="")
    parser.add_argument("--code", help="reuse this snapshot hash")
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.max_size[0], args.out)
    csv_file = args.out_dir / f"suda{args.tag}.csv"
    if args.report:
        return report(csv_file)
    _, sha = _bench.snapshot_package(args.code)
    runs_file = args.out_dir / f"suda_runs{args.tag}.jsonl"
    args.out_dir.mkdir(parents=True, exist_ok=True)
    table = []
    for rows in args.rows:
        path = bench_perturb.input_file(args.data_dir, rows, args.seed)
        floor = measured(path, 0, sha, f"suda{args.tag}-{rows}-floor", runs_file)
        for size in args.max_size:
            run = measured(path, size, sha, f"suda{args.tag}-{rows}-k{size}", runs_file)
            res = run["result"]
            table.append(
                {
                    "rows": rows,
                    "max_size": size,
                    "seconds": run["wall_seconds"],
                    "floor_s": floor["wall_seconds"],
                    "ratio": round(run["wall_seconds"] / floor["wall_seconds"], 2),
                    "driver_gib": _gib(run, "driver"),
                    "jvm_gib": _gib(run, "jvm"),
                    "floor_driver_gib": _gib(floor, "driver"),
                    "floor_jvm_gib": _gib(floor, "jvm"),
                    "records_with_msu": res["records_with_msu"],
                    "sample_uniques": res["sample_uniques"],
                    "msus": sum(res["msus_by_size"].values()),
                    "other_cpu_s": run["other_cpu_seconds"],
                    "code_sha": sha,
                }
            )
            with csv_file.open("w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=FIELDS)
                writer.writeheader()
                writer.writerows(table)
    return report(csv_file)


if __name__ == "__main__":
    sys.exit(main())
