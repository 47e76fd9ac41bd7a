"""Randomization at scale: perturb + verify + commit, and reconstruction, against the floor.

Reproduces docs/benchmarks.md, section 10 ("Randomization: perturb, verify, commit and
reconstruct at 10M rows").

Issue 23's speed target: on this machine, Spark ``local[*]``, generated Adult rows, the
perturbation job (perturb, verify, commit) within 1.5x the read-and-write floor measured
in the same run, the reconstruction of every perturbed attribute within 2x that floor,
and the driver's memory flat in the row count.

Per row count (``--rows``), in this order and each in its own process (measured with
``experiments/bench_job.py``'s machinery: wall time, peak RSS of the process tree per part,
CPU seconds of the tree and of the rest of the machine):

1. the input: ``scripts/generate_adult.py --rows N`` as one Parquet file under
   ``--data-dir`` (reused when it is there);
2. the floor: a plain PySpark job that reads that file and writes it unchanged as Parquet
   (``bench_job.py --floor``);
3. the job: ``sparkanon run CONFIG`` (default ``conf/adult_perturb.yaml``) with the input
   overridden to the Parquet file (``bench_job.py``; seconds per stage from
   ``metrics.json``);
4. the reconstruction: ``sparkanon reconstruct OUTPUT_DIR --engine spark`` over the
   job's release (every perturbed column ``noise.json`` declares).

Results: ``OUT_DIR/perturb{tag}.csv`` (one row per row count: seconds, ratios to the
floor, peak RSS of the driver's Python process and of the JVM for the three runs, CPU
used outside the tree), ``OUT_DIR/perturb{tag}.meta.json`` (command, code, machine,
seconds per stage, the job's verification figures) and each run's JSON line in
``OUT_DIR/perturb_runs{tag}.jsonl`` (``bench_job.py``'s record; 1-second RSS timelines
in ``OUT_DIR/rss/``). sparkanon runs from one frozen snapshot (``code_sha``) for all.

Usage::

    python -m experiments.bench_perturb --rows 1000000 3000000 10000000
    python -m experiments.bench_perturb --report          # Markdown tables of perturb.csv
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from experiments import _bench, bench_job
from scripts import _args

CONFIG = _bench.REPO_ROOT / "conf" / "adult_perturb.yaml"
DATA_DIR = Path("/tmp/sparkanon_bench/perturb")
JOB_TARGET = 1.5
"""The job's wall time may be at most this many floors (issue 23)."""
RECONSTRUCT_TARGET = 2.0
"""The reconstruction's wall time may be at most this many floors (issue 23)."""
FIELDS = [
    "rows",
    "floor_s",
    "job_s",
    "job_ratio",
    "reconstruct_s",
    "reconstruct_ratio",
    "floor_cpu_s",
    "job_cpu_s",
    "reconstruct_cpu_s",
    "job_cpu_ratio",
    "reconstruct_cpu_ratio",
    "job_driver_gib",
    "job_jvm_gib",
    "job_workers_gib",
    "reconstruct_driver_gib",
    "reconstruct_jvm_gib",
    "floor_driver_gib",
    "floor_jvm_gib",
    "other_cpu_s",
    "verified",
    "code_sha",
]


def input_file(data_dir: Path, rows: int, seed: int) -> Path:
    """The generated Parquet input of ``rows`` rows (``scripts.generate_adult`` if absent)."""
    path = data_dir / f"adult_{rows}_s{seed}.parquet"
    if not path.is_file():
        cmd = [sys.executable, "-m", "scripts.generate_adult", "--rows", str(rows)]
        cmd += ["--out", str(path), "--seed", str(seed)]
        subprocess.run(cmd, check=True, cwd=_bench.REPO_ROOT)
    return path


def _last_record(runs_file: Path, label: str) -> dict[str, Any]:
    """The latest JSON line of ``label`` in ``runs_file``."""
    found: dict[str, Any] | None = None
    for line in runs_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if record["label"] == label:
                found = record
    if found is None:
        raise RuntimeError(f"no run {label!r} in {runs_file}")
    return found


def measured_run(argv: list[str], runs_file: Path, label: str) -> dict[str, Any]:
    """Run ``bench_job.py ARGV --label LABEL`` in process; return its record (exit checked)."""
    code = bench_job.main([*argv, "--label", label, "--runs-file", str(runs_file)])
    record = _last_record(runs_file, label)
    if code != 0:
        raise RuntimeError(f"{label} failed (exit {code}): {record.get('error', '')[-2000:]}")
    return record


def measure_reconstruct(
    release: Path, label: str, sha: str, runs_file: Path, out: Path
) -> dict[str, Any]:
    """Measure ``sparkanon reconstruct RELEASE --engine spark`` and append its record."""
    snapshot, _ = _bench.snapshot_package(sha)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(snapshot), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    )
    exe = shutil.which("sparkanon") or "sparkanon"
    cmd = [exe, "reconstruct", str(release), "--engine", "spark", "--out", str(out), "--quiet"]
    shutil.rmtree(out, ignore_errors=True)
    print(f"[{label}] running: {' '.join(cmd)}", flush=True)
    m = bench_job.measure(cmd, env, bench_job._run_dir(snapshot))
    record: dict[str, Any] = {
        "label": label,
        "mode": "reconstruct",
        "bench_command": _bench.command_line(),
        "command": " ".join(cmd),
        **{k: v for k, v in m.items() if k not in ("stdout", "stderr", "timeline")},
        **_bench.provenance(sha),
    }
    if m["returncode"] != 0:
        record["error"] = m["stderr"][-4000:]
    else:
        summary = json.loads(m["stdout"])
        record["rows_in"] = summary["rows"]
        record["columns"] = sorted(k for k in summary if k not in ("out", "files", "rows"))
    _bench.append_jsonl(runs_file, record)
    bench_job._write_timeline(runs_file.parent / "rss" / f"{label}.csv", m["timeline"])
    if m["returncode"] != 0:
        raise RuntimeError(f"{label} failed (exit {m['returncode']}): {m['stderr'][-2000:]}")
    return record


def _part(record: dict[str, Any], part: str) -> float:
    """Peak RSS (GiB) of one part of a run: the driver's own Python process, or a part."""
    if part == "driver":
        return float(record["peak_rss_root_gib"])
    return float(record["peak_rss_by_part_gib"].get(part, 0.0))


def summary_row(
    rows: int, floor: dict[str, Any], job: dict[str, Any], rec: dict[str, Any]
) -> dict[str, Any]:
    """One CSV row: the three runs of one row count side by side."""
    f, j, r = floor["wall_seconds"], job["wall_seconds"], rec["wall_seconds"]
    return {
        "rows": rows,
        "floor_s": f,
        "job_s": j,
        "job_ratio": round(j / f, 3),
        "reconstruct_s": r,
        "reconstruct_ratio": round(r / f, 3),
        "floor_cpu_s": floor["tree_cpu_seconds"],
        "job_cpu_s": job["tree_cpu_seconds"],
        "reconstruct_cpu_s": rec["tree_cpu_seconds"],
        "job_cpu_ratio": round(job["tree_cpu_seconds"] / floor["tree_cpu_seconds"], 3),
        "reconstruct_cpu_ratio": round(rec["tree_cpu_seconds"] / floor["tree_cpu_seconds"], 3),
        "job_driver_gib": _part(job, "driver"),
        "job_jvm_gib": _part(job, "jvm"),
        "job_workers_gib": _part(job, "worker"),
        "reconstruct_driver_gib": _part(rec, "driver"),
        "reconstruct_jvm_gib": _part(rec, "jvm"),
        "floor_driver_gib": _part(floor, "driver"),
        "floor_jvm_gib": _part(floor, "jvm"),
        "other_cpu_s": round(
            floor["other_cpu_seconds"] + job["other_cpu_seconds"] + rec["other_cpu_seconds"], 1
        ),
        "verified": (job.get("metrics") or {}).get("verified"),
        "code_sha": job["code_sha"],
    }


def bench_rows(args: argparse.Namespace, rows: int, sha: str, runs_file: Path) -> dict[str, Any]:
    """Floor, job and reconstruction at one row count; returns the CSV row and details."""
    path = input_file(args.data_dir, rows, args.seed)
    name = f"perturb{args.tag}-{rows}"
    sets = ["--set", "input.format=parquet", "--set", f"input.path={path}"]
    common = [str(args.config), *sets, "--code", sha]
    floor = measured_run([*common, "--floor"], runs_file, f"{name}-floor")
    job = measured_run([*common, "--keep-output"], runs_file, name)
    release = bench_job.OUT_ROOT / name
    try:
        rec = measure_reconstruct(
            release, f"{name}-reconstruct", sha, runs_file, bench_job.OUT_ROOT / f"{name}-rec"
        )
        verification = json.loads((release / "metrics.json").read_text()).get("verification")
    finally:
        shutil.rmtree(release, ignore_errors=True)
        shutil.rmtree(bench_job.OUT_ROOT / f"{name}-rec", ignore_errors=True)
    row = summary_row(rows, floor, job, rec)
    print(
        f"[{name}] floor {row['floor_s']:.1f} s, job {row['job_s']:.1f} s "
        f"({row['job_ratio']:.2f}x, target {JOB_TARGET}x), reconstruct "
        f"{row['reconstruct_s']:.1f} s ({row['reconstruct_ratio']:.2f}x, target "
        f"{RECONSTRUCT_TARGET}x); driver RSS job {row['job_driver_gib']:.2f} GiB Python / "
        f"{row['job_jvm_gib']:.2f} GiB JVM; other CPU {row['other_cpu_s']} s",
        flush=True,
    )
    details = {
        "rows": rows,
        "input": str(path),
        "input_bytes": job.get("input_bytes"),
        "job_seconds_per_stage": job.get("seconds"),
        "job_spark_jobs": (job.get("metrics") or {}).get("spark_jobs"),
        "reconstructed_columns": rec.get("columns"),
        "verification": verification,
        "loadavg_at_start": floor.get("loadavg_at_start"),
    }
    return {"row": row, "details": details}


def run(args: argparse.Namespace) -> int:
    """Every row count; writes the CSV and the meta JSON after each (nothing lost)."""
    _, sha = _bench.snapshot_package(args.code)
    runs_file = args.out_dir / f"perturb_runs{args.tag}.jsonl"
    rows_out: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    for rows in args.rows:
        done = bench_rows(args, rows, sha, runs_file)
        rows_out.append(done["row"])
        details.append(done["details"])
        _bench.write_csv(args.out_dir / f"perturb{args.tag}.csv", rows_out, FIELDS)
        meta = {
            "command": _bench.command_line(),
            "config": str(Path(args.config).resolve().relative_to(_bench.REPO_ROOT))
            if Path(args.config).resolve().is_relative_to(_bench.REPO_ROOT)
            else str(args.config),
            "seed": args.seed,
            "targets": {"job_over_floor": JOB_TARGET, "reconstruct_over_floor": RECONSTRUCT_TARGET},
            **_bench.provenance(sha),
            "runs": details,
        }
        _bench.write_json(args.out_dir / f"perturb{args.tag}.meta.json", meta)
    return report(args.out_dir, args.tag)


def report(out_dir: Path, tag: str = "") -> int:
    """Markdown tables of ``perturb{tag}.csv`` and the seconds per stage of the meta JSON."""
    import csv

    with (out_dir / f"perturb{tag}.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    print(
        "| rows | floor s | job s | job/floor | reconstruct s | reconstruct/floor "
        "| job driver RSS GiB (Python / JVM) | reconstruct driver RSS GiB (Python / JVM) "
        "| other CPU s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|---|---:|")
    for r in rows:
        print(
            f"| {int(r['rows']):,} | {float(r['floor_s']):.1f} | {float(r['job_s']):.1f} "
            f"| {float(r['job_ratio']):.2f}x | {float(r['reconstruct_s']):.1f} "
            f"| {float(r['reconstruct_ratio']):.2f}x "
            f"| {float(r['job_driver_gib']):.2f} / {float(r['job_jvm_gib']):.2f} "
            f"| {float(r['reconstruct_driver_gib']):.2f} / {float(r['reconstruct_jvm_gib']):.2f} "
            f"| {r['other_cpu_s']} |"
        )
    meta_path = out_dir / f"perturb{tag}.meta.json"
    if meta_path.is_file():
        runs = json.loads(meta_path.read_text(encoding="utf-8"))["runs"]
        order = [*bench_job.STAGES]
        order.insert(order.index("encode") + 1, "perturb")  # the family's own stage
        stages = [k for k in order if any(k in (d["job_seconds_per_stage"] or {}) for d in runs)]
        stages += sorted({k for d in runs for k in d["job_seconds_per_stage"] or {}} - set(stages))
        print()
        print("| rows | " + " | ".join(stages) + " | sum |")
        print("|---:|" + "---:|" * (len(stages) + 1))
        for d in runs:
            s = d["job_seconds_per_stage"] or {}
            cells = " | ".join(f"{s.get(k, 0):.1f}" for k in stages)
            print(f"| {d['rows']:,} | {cells} | {sum(s.values()):.1f} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=_args.positive_int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000]
    )
    parser.add_argument("--config", type=Path, default=CONFIG, help="the perturbation job")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="generated inputs")
    parser.add_argument("--seed", type=_args.seed, default=0, help="generate_adult.py's seed")
    parser.add_argument("--out-dir", type=Path, default=_bench.BENCH_DIR)
    parser.add_argument("--tag", default="", help="suffix of the output files (e.g. _small)")
    parser.add_argument("--code", help="code_sha of an existing snapshot to run (default: now)")
    parser.add_argument("--report", action="store_true", help="print tables of perturb{tag}.csv")
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir, args.tag)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
