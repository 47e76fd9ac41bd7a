"""``sparkanon evaluate`` at scale, against the read-and-write floor (issue 25, target 4).

Reproduces docs/benchmarks.md, section 13 ("Evaluate at 10M rows").

Issue 25's speed target: on this machine, Spark ``local[*]``, generated Adult rows,
``sparkanon evaluate`` of 10M rows within 2x the read-and-write floor measured in the
same run, and the driver's memory flat in the row count.

Per row count (``--rows``), in this order and each in its own process (measured with
``experiments/bench_job.py``'s machinery: wall time, peak RSS of the process tree per part,
CPU seconds of the tree and of the rest of the machine):

1. the input: ``scripts/generate_adult.py --rows N --seed S`` as one Parquet file (a file
   of that name already under ``/tmp/sparkanon_bench/*/`` is reused, else it is made in
   ``--data-dir``); the holdout: ``--holdout-rows`` rows with seed ``S + 1``;
2. the floor: a plain PySpark job that reads that file and writes it unchanged as Parquet
   (``bench_job.py --floor``);
3. (a) the input's evaluation: ``sparkanon evaluate CONFIG --set input.path=FILE
   --set input.format=parquet --out DIR`` (default ``conf/adult_mondrian_k.yaml``: class
   sizes, ARX and sdcMicro risk, attacks on the classes; no SUDA2, no holdout) - the
   target (at most 2x the floor);
4. the perturbation release of the same rows: ``sparkanon run PERTURB_CONFIG`` with
   ``report.enabled=false`` (measured and recorded, not part of the evaluation's time);
5. (b) the release's evaluation: ``sparkanon evaluate OUTPUT_DIR --holdout HOLDOUT
   --label income --out DIR`` (risk before and after, attacks, the anonymeter-style
   attacks against the holdout, utility with a classifier, reconstruction). Its ratio to
   the floor is reported; issue 25 states no target for it.

Seconds per evaluation step come from the ``stage=<name> seconds=<s>`` lines the
command logs on stderr (``read``, ``evaluate_risk``, ``evaluate_attacks``, ...).

Results: ``OUT_DIR/evaluate{tag}.csv`` (one row per row count), ``OUT_DIR/evaluate{tag}
.meta.json`` (command, code, machine, seconds per step, the evaluations' headline
figures) and each run's JSON line in ``OUT_DIR/evaluate_runs{tag}.jsonl`` (1-second RSS
timelines in ``OUT_DIR/rss/``). sparkanon runs from one frozen snapshot (``code_sha``).

Usage::

    python -m experiments.bench_evaluate --rows 1000000 10000000
    python -m experiments.bench_evaluate --report          # Markdown tables of evaluate.csv
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from experiments import _bench, bench_job, bench_perturb
from scripts import _args

INPUT_CONFIG = _bench.REPO_ROOT / "conf" / "adult_mondrian_k.yaml"
RELEASE_CONFIG = _bench.REPO_ROOT / "conf" / "adult_perturb.yaml"
BENCH_ROOT = Path("/tmp/sparkanon_bench")
DATA_DIR = BENCH_ROOT / "evaluate"
TARGET = 2.0
"""The input's evaluation may take at most this many floors (issue 25, target 4)."""
STAGE_LINE = re.compile(r"stage=(\w+) seconds=([0-9.]+)")
FIELDS = [
    "rows",
    "floor_s",
    "input_eval_s",
    "input_ratio",
    "release_eval_s",
    "release_ratio",
    "perturb_job_s",
    "floor_cpu_s",
    "input_eval_cpu_s",
    "release_eval_cpu_s",
    "input_cpu_ratio",
    "release_cpu_ratio",
    "input_driver_gib",
    "input_jvm_gib",
    "release_driver_gib",
    "release_jvm_gib",
    "floor_driver_gib",
    "floor_jvm_gib",
    "input_classes",
    "other_cpu_s",
    "code_sha",
]


def input_file(data_dir: Path, rows: int, seed: int) -> Path:
    """The generated Parquet file of ``rows`` rows: reused from a sibling folder, or made."""
    name = f"adult_{rows}_s{seed}.parquet"
    for found in sorted(BENCH_ROOT.glob(f"*/{name}")):
        if found.is_file():
            return found
    data_dir.mkdir(parents=True, exist_ok=True)
    return bench_perturb.input_file(data_dir, rows, seed)


def stage_seconds(stderr: str) -> dict[str, float]:
    """Seconds per stage from the ``stage=<name> seconds=<s>`` log lines (summed by name)."""
    out: dict[str, float] = {}
    for name, seconds in STAGE_LINE.findall(stderr):
        out[name] = round(out.get(name, 0.0) + float(seconds), 2)
    return out


def measure_evaluate(
    target: str, extra: list[str], label: str, sha: str, runs_file: Path
) -> dict[str, Any]:
    """Measure ``sparkanon evaluate TARGET EXTRA --out DIR`` and append its record."""
    snapshot, _ = _bench.snapshot_package(sha)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(snapshot), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    )
    out = bench_job.OUT_ROOT / label
    exe = shutil.which("sparkanon") or "sparkanon"
    cmd = [exe, "evaluate", target, *extra, "--out", str(out)]
    shutil.rmtree(out, ignore_errors=True)
    print(f"[{label}] running: {' '.join(cmd)}", flush=True)
    m = bench_job.measure(cmd, env, bench_job._run_dir(snapshot))
    record: dict[str, Any] = {
        "label": label,
        "mode": "evaluate",
        "bench_command": _bench.command_line(),
        "command": " ".join(cmd),
        **{k: v for k, v in m.items() if k not in ("stdout", "stderr", "timeline")},
        **_bench.provenance(sha),
        "seconds": stage_seconds(m["stderr"]),
    }
    if m["returncode"] != 0:
        record["error"] = m["stderr"][-4000:]
    else:
        record["summary"] = _headline(out / "evaluation.json")
        record["rows_in"] = record["summary"]["rows"]
        record["rows_per_second"] = round(record["rows_in"] / m["wall_seconds"], 1)
    _bench.append_jsonl(runs_file, record)
    bench_job._write_timeline(runs_file.parent / "rss" / f"{label}.csv", m["timeline"])
    shutil.rmtree(out, ignore_errors=True)
    if m["returncode"] != 0:
        raise RuntimeError(f"{label} failed (exit {m['returncode']}): {m['stderr'][-2000:]}")
    return record


def _headline(path: Path) -> dict[str, Any]:
    """The figures of an evaluation that say it ran on the whole table (no row values)."""
    ev = json.loads(path.read_text(encoding="utf-8"))
    after = ev["risk"]["after"]
    before = ev["risk"]["before"]
    anon = ev.get("anonymeter") or {}
    clf = (ev.get("utility") or {}).get("classification") or {}
    return {
        "rows": ev["table"]["rows"],
        "kind": ev["table"]["kind"],
        "classes": after["classes"],
        "sample_uniques": after["class_sizes"].get("1", 0),
        "classes_before": before["classes"] if before else None,
        "anonymeter": sorted(anon) if isinstance(anon, dict) else None,
        "accuracy_release": clf.get("accuracy_release"),
        "test_rows": clf.get("test_rows"),
        "reconstructed": sorted((ev.get("family") or {}).get("reconstruction") or {}),
        "warnings": len(ev.get("warnings") or []),
    }


def _part(record: dict[str, Any], part: str) -> float:
    return bench_perturb._part(record, part)


def summary_row(
    rows: int,
    floor: dict[str, Any],
    a: dict[str, Any],
    b: dict[str, Any] | None,
    job: dict[str, Any] | None,
) -> dict[str, Any]:
    """One CSV row: the floor and the evaluations of one row count side by side.

    ``b`` and ``job`` are ``None`` when the release was not evaluated at this row count
    (``--release-rows``); its cells are then empty.
    """
    f = floor["wall_seconds"]
    fcpu = floor["tree_cpu_seconds"]
    row: dict[str, Any] = {
        "rows": rows,
        "floor_s": f,
        "input_eval_s": a["wall_seconds"],
        "input_ratio": round(a["wall_seconds"] / f, 3),
        "floor_cpu_s": fcpu,
        "input_eval_cpu_s": a["tree_cpu_seconds"],
        "input_cpu_ratio": round(a["tree_cpu_seconds"] / fcpu, 3),
        "input_driver_gib": _part(a, "driver"),
        "input_jvm_gib": _part(a, "jvm"),
        "floor_driver_gib": _part(floor, "driver"),
        "floor_jvm_gib": _part(floor, "jvm"),
        "input_classes": a["summary"]["classes"],
        "other_cpu_s": round(
            floor["other_cpu_seconds"]
            + a["other_cpu_seconds"]
            + (b["other_cpu_seconds"] if b else 0.0),
            1,
        ),
        "code_sha": a["code_sha"],
    }
    if b is not None and job is not None:
        row |= {
            "release_eval_s": b["wall_seconds"],
            "release_ratio": round(b["wall_seconds"] / f, 3),
            "perturb_job_s": job["wall_seconds"],
            "release_eval_cpu_s": b["tree_cpu_seconds"],
            "release_cpu_ratio": round(b["tree_cpu_seconds"] / fcpu, 3),
            "release_driver_gib": _part(b, "driver"),
            "release_jvm_gib": _part(b, "jvm"),
        }
    return row


def bench_rows(args: argparse.Namespace, rows: int, sha: str, runs_file: Path) -> dict[str, Any]:
    """Floor, the input's evaluation, the release and its evaluation at one row count."""
    path = input_file(args.data_dir, rows, args.seed)
    name = f"evaluate{args.tag}-{rows}"
    sets = ["--set", "input.format=parquet", "--set", f"input.path={path}"]
    floor = bench_perturb.measured_run(
        [str(args.config), *sets, "--code", sha, "--floor"], runs_file, f"{name}-floor"
    )
    a = measure_evaluate(str(Path(args.config).resolve()), sets, f"{name}-input", sha, runs_file)
    b = job = None
    holdout = None
    if args.release_rows is None or rows in args.release_rows:
        holdout = input_file(args.data_dir, args.holdout_rows, args.seed + 1)
        release = bench_job.OUT_ROOT / f"{name}-perturb"
        job = bench_perturb.measured_run(
            [str(args.release_config), *sets, "--set", "report.enabled=false", "--code", sha]
            + ["--keep-output"],
            runs_file,
            f"{name}-perturb",
        )
        try:
            extra = ["--holdout", str(holdout), "--label", args.label]
            b = measure_evaluate(str(release), extra, f"{name}-release", sha, runs_file)
        finally:
            shutil.rmtree(release, ignore_errors=True)
    row = summary_row(rows, floor, a, b, job)
    said = (
        f"release evaluation {row['release_eval_s']:.1f} s ({row['release_ratio']:.2f}x), "
        f"driver RSS {row['release_driver_gib']:.2f} GiB Python / "
        f"{row['release_jvm_gib']:.2f} GiB JVM"
        if b
        else "release not evaluated"
    )
    print(
        f"[{name}] floor {row['floor_s']:.1f} s; input evaluation {row['input_eval_s']:.1f} s "
        f"({row['input_ratio']:.2f}x, target {TARGET}x), driver RSS "
        f"{row['input_driver_gib']:.2f} GiB Python / {row['input_jvm_gib']:.2f} GiB JVM; "
        f"{said}; other CPU {row['other_cpu_s']} s",
        flush=True,
    )
    details = {
        "rows": rows,
        "input": str(path),
        "input_bytes": path.stat().st_size,
        "holdout": str(holdout) if holdout else None,
        "holdout_rows": args.holdout_rows if holdout else None,
        "input_seconds_per_stage": a["seconds"],
        "release_seconds_per_stage": b["seconds"] if b else None,
        "perturb_job_seconds_per_stage": job.get("seconds") if job else None,
        "input_evaluation": a["summary"],
        "release_evaluation": b["summary"] if b else None,
        "other_cpu_seconds": {
            "floor": floor["other_cpu_seconds"],
            "input": a["other_cpu_seconds"],
            "release": b["other_cpu_seconds"] if b else None,
        },
        "loadavg_at_start": floor.get("loadavg_at_start"),
    }
    return {"row": row, "details": details}


def _rel(path: Path) -> str:
    resolved = Path(path).resolve()
    if resolved.is_relative_to(_bench.REPO_ROOT):
        return str(resolved.relative_to(_bench.REPO_ROOT))
    return str(path)


def run(args: argparse.Namespace) -> int:
    """Every row count; writes the CSV and the meta JSON after each (nothing lost)."""
    _, sha = _bench.snapshot_package(args.code)
    runs_file = args.out_dir / f"evaluate_runs{args.tag}.jsonl"
    rows_out: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    for rows in args.rows:
        done = bench_rows(args, rows, sha, runs_file)
        rows_out.append(done["row"])
        details.append(done["details"])
        _bench.write_csv(args.out_dir / f"evaluate{args.tag}.csv", rows_out, FIELDS)
        meta = {
            "command": _bench.command_line(),
            "config": _rel(args.config),
            "release_config": _rel(args.release_config),
            "seed": args.seed,
            "holdout_seed": args.seed + 1,
            "label": args.label,
            "target": {"input_evaluation_over_floor": TARGET},
            **_bench.provenance(sha),
            "runs": details,
        }
        _bench.write_json(args.out_dir / f"evaluate{args.tag}.meta.json", meta)
    return report(args.out_dir, args.tag)


def report(out_dir: Path, tag: str = "") -> int:
    """Markdown tables of ``evaluate{tag}.csv`` and the seconds per step of the meta JSON."""
    import csv

    with (out_dir / f"evaluate{tag}.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    print(
        "| rows | floor s | (a) input evaluate s | (a)/floor | (a) CPU/floor CPU "
        "| (b) release evaluate s | (b)/floor | (b) CPU/floor CPU "
        "| driver RSS GiB (Python / JVM): floor, (a), (b) | other CPU s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in rows:
        b = bool(r["release_eval_s"])
        print(
            f"| {int(r['rows']):,} | {float(r['floor_s']):.1f} "
            f"| {float(r['input_eval_s']):.1f} | {float(r['input_ratio']):.2f}x "
            f"| {float(r['input_cpu_ratio']):.2f}x "
            + (
                f"| {float(r['release_eval_s']):.1f} | {float(r['release_ratio']):.2f}x "
                f"| {float(r['release_cpu_ratio']):.2f}x "
                if b
                else "| not run | | "
            )
            + f"| {float(r['floor_driver_gib']):.2f} / {float(r['floor_jvm_gib']):.2f}, "
            f"{float(r['input_driver_gib']):.2f} / {float(r['input_jvm_gib']):.2f}, "
            + (
                f"{float(r['release_driver_gib']):.2f} / {float(r['release_jvm_gib']):.2f} "
                if b
                else "- "
            )
            + f"| {r['other_cpu_s']} |"
        )
    meta_path = out_dir / f"evaluate{tag}.meta.json"
    if meta_path.is_file():
        runs = json.loads(meta_path.read_text(encoding="utf-8"))["runs"]
        for which in ("input", "release"):
            key = f"{which}_seconds_per_stage"
            stages: list[str] = []
            runs_with = [d for d in runs if d[key]]
            if not runs_with:
                continue
            for d in runs_with:
                stages += [k for k in d[key] if k not in stages]
            print()
            print(f"Seconds per step, ({'a' if which == 'input' else 'b'}) {which} evaluation:")
            print()
            print("| rows | " + " | ".join(stages) + " | sum |")
            print("|---:|" + "---:|" * (len(stages) + 1))
            for d in runs_with:
                s = d[key]
                cells = " | ".join(f"{s.get(k, 0):.1f}" for k in stages)
                print(f"| {d['rows']:,} | {cells} | {sum(s.values()):.1f} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=_args.positive_int, nargs="+", default=[1_000_000, 10_000_000]
    )
    parser.add_argument("--config", type=Path, default=INPUT_CONFIG, help="(a): its input")
    parser.add_argument(
        "--release-config", type=Path, default=RELEASE_CONFIG, help="(b): the release's job"
    )
    parser.add_argument(
        "--release-rows",
        type=_args.positive_int,
        nargs="*",
        default=None,
        help="(b) only at these row counts (default: every --rows)",
    )
    parser.add_argument("--holdout-rows", type=_args.positive_int, default=100_000)
    parser.add_argument("--label", default="income", help="(b): the classifier's target")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="generated inputs")
    parser.add_argument("--seed", type=_args.seed, default=0, help="generate_adult.py's seed")
    parser.add_argument("--out-dir", type=Path, default=_bench.BENCH_DIR)
    parser.add_argument("--tag", default="", help="suffix of the output files (e.g. _small)")
    parser.add_argument("--code", help="code_sha of an existing snapshot to run (default: now)")
    parser.add_argument("--report", action="store_true", help="print tables of evaluate{tag}.csv")
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir, args.tag)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
