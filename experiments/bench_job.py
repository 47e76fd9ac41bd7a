"""Wall time, peak memory and seconds per stage of one Spark job, and of the "floor".

Reproduces docs/benchmarks.md, section 1 ("The Spark job: speed, memory and the floor"), and
the job tables of its later sections.

Job mode (default) runs ``sparkanon run CONFIG --quiet --set output.path=... --set ...``
as a subprocess; floor mode (``--floor``) runs, in its own process, a plain PySpark job
that reads the same input (the config's ``input.*`` after the ``--set`` overrides) and
writes it unchanged as Parquet: the least a job that reads and writes that data can cost
on this machine, with the same Spark settings as the job (``local[*]``, Arrow on,
8 shuffle partitions).

While the subprocess runs, the resident memory (RSS) of its whole process tree (driver
Python, the JVM, the Python workers) is sampled every 0.2 s with psutil; the peak of the
sum is reported, with the peaks of each part and of the process started itself (the
driver's Python process: ``peak_rss_root_gib``; the ``driver`` part may also count, for
an instant, a child forked from it before it runs another program). The sum of RSS
counts pages shared between
forked Python workers more than once, so it is an upper bound of the memory used. The
script also records the CPU seconds of the tree and of the whole machine during the run
(``other_cpu_seconds``: CPU used by processes outside the tree, i.e. interference).

One JSON line per run goes to ``docs/bench/job_runs.jsonl`` (wall seconds, rows, rows/s,
``metrics.json``'s seconds per stage, peak memory, exit code and the error on failure),
and a 1-second RSS timeline to ``docs/bench/rss/<label>.csv``.

sparkanon is imported from a frozen copy of ``sparkanon/`` (``experiments/_bench.py``), so a
run is not disturbed by edits to the work tree; ``code_sha`` names that copy.

Usage::

    python -m experiments.bench_job CONFIG --label adult [--set key=value ...]
    python -m experiments.bench_job CONFIG --label adult-floor --floor [--set input.path=...]
    python -m experiments.bench_job --report [--only PREFIX]  # Markdown tables of the latest runs
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from experiments import _bench

RUNS_FILE = _bench.BENCH_DIR / "job_runs.jsonl"
OUT_ROOT = Path("/tmp/sparkanon_bench/out")
SAMPLE_SECONDS = 0.2
STAGES = [
    "read",
    "profile",
    "encode",
    "levels",
    "frequency",
    "search",
    "partition",  # the name of plan_blocks in records before 2026-11-26
    "plan_blocks",
    "cluster",
    "reconcile",
    "condense",  # the synthesis family's stage (condensation)
    "summarise",
    "publish",
    "verify",
    "metrics",
    "commit",
]


# --------------------------------------------------------------------------- sampling


def _part_of(proc: Any) -> str:
    """Which part of the job a process is: ``jvm``, ``worker`` or ``driver``."""
    try:
        name = proc.name()
        cmd = " ".join(proc.cmdline())
    except Exception:  # noqa: BLE001 - the process may be gone
        return "other"
    if "java" in name:
        return "jvm"
    if "pyspark.daemon" in cmd or "pyspark.worker" in cmd or "pyspark/daemon" in cmd:
        return "worker"
    return "driver" if "python" in name or "sparkanon" in cmd else "other"


class TreeSampler(threading.Thread):
    """Samples the RSS and CPU time of a process and all its descendants."""

    def __init__(self, pid: int, interval: float = SAMPLE_SECONDS) -> None:
        super().__init__(daemon=True)
        import psutil

        self.psutil = psutil
        self.root = psutil.Process(pid)
        self.interval = interval
        self.stop_event = threading.Event()
        self.peak_total = 0
        self.peak_root = 0
        self.peak_by_part: dict[str, int] = {}
        self.at_peak_by_part: dict[str, int] = {}
        self.max_processes = 0
        self.samples = 0
        self.timeline: list[tuple[float, int, dict[str, int]]] = []
        self.cpu_by_pid: dict[int, float] = {}
        self.parts: dict[tuple[int, str], str] = {}
        self.start_time = time.perf_counter()

    def sample(self) -> None:
        """Take one sample of the tree."""
        try:
            procs = [self.root, *self.root.children(recursive=True)]
        except self.psutil.NoSuchProcess:
            return
        total = 0
        by_part: dict[str, int] = {}
        alive = 0
        for proc in procs:
            try:
                with proc.oneshot():
                    rss = proc.memory_info().rss
                    cpu = proc.cpu_times()
                    # keyed by name too: a forked child is "python" until it execs java
                    key = (proc.pid, proc.name())
                    if key not in self.parts:
                        self.parts[key] = _part_of(proc)
            except (self.psutil.NoSuchProcess, self.psutil.AccessDenied, self.psutil.ZombieProcess):
                continue
            alive += 1
            if proc.pid == self.root.pid:
                self.peak_root = max(self.peak_root, rss)
            part = self.parts[key]
            total += rss
            by_part[part] = by_part.get(part, 0) + rss
            # own CPU time; children's is counted when they are sampled themselves
            self.cpu_by_pid[proc.pid] = cpu.user + cpu.system
        self.samples += 1
        self.max_processes = max(self.max_processes, alive)
        for part, rss in by_part.items():
            self.peak_by_part[part] = max(self.peak_by_part.get(part, 0), rss)
        if total > self.peak_total:
            self.peak_total = total
            self.at_peak_by_part = dict(by_part)
        t = time.perf_counter() - self.start_time
        if not self.timeline or t - self.timeline[-1][0] >= 1.0:
            self.timeline.append((t, total, by_part))

    def run(self) -> None:  # noqa: D102
        while not self.stop_event.is_set():
            self.sample()
            self.stop_event.wait(self.interval)

    def stop(self) -> None:
        """Stop sampling (after one last sample)."""
        self.stop_event.set()
        self.join()

    @property
    def tree_cpu_seconds(self) -> float:
        """CPU seconds of the sampled processes (up to each one's last sample)."""
        return sum(self.cpu_by_pid.values())


def _machine_busy_seconds() -> float:
    import psutil

    t = psutil.cpu_times()
    return (
        t.user
        + t.nice
        + t.system
        + getattr(t, "irq", 0)
        + getattr(t, "softirq", 0)
        + getattr(t, "steal", 0)
    )


def measure(cmd: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Run ``cmd``, sampling its process tree; return wall time, memory, output."""
    busy0 = _machine_busy_seconds()
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    sampler = TreeSampler(proc.pid)
    sampler.start()
    # Drain the pipes in threads so a chatty child never blocks on a full pipe.
    out_chunks: list[str] = []
    err_chunks: list[str] = []
    readers = [
        threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True),
        threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()), daemon=True),
    ]
    for r in readers:
        r.start()
    returncode = proc.wait()
    wall = time.perf_counter() - start
    sampler.stop()
    for r in readers:
        r.join()
    busy = _machine_busy_seconds() - busy0
    gib = 2**30
    return {
        "returncode": returncode,
        "wall_seconds": round(wall, 3),
        "peak_rss_gib": round(sampler.peak_total / gib, 3),
        "peak_rss_by_part_gib": {k: round(v / gib, 3) for k, v in sampler.peak_by_part.items()},
        "peak_rss_root_gib": round(sampler.peak_root / gib, 3),
        "at_peak_by_part_gib": {k: round(v / gib, 3) for k, v in sampler.at_peak_by_part.items()},
        "max_processes": sampler.max_processes,
        "rss_samples": sampler.samples,
        "tree_cpu_seconds": round(sampler.tree_cpu_seconds, 1),
        "machine_cpu_seconds": round(busy, 1),
        "other_cpu_seconds": round(max(busy - sampler.tree_cpu_seconds, 0.0), 1),
        "stdout": "".join(out_chunks),
        "stderr": "".join(err_chunks),
        "timeline": sampler.timeline,
    }


# --------------------------------------------------------------------------- floor job


def floor_worker(fmt: str, path: str, options: dict[str, Any], out: str) -> int:
    """The plain Spark job: read the input, write it as Parquet (run in its own process)."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.appName("sparkanon-floor")
        .master("local[*]")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", os.environ.get("SPARKANON_SHUFFLE_PARTITIONS", "8"))
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    reader = spark.read
    if fmt == "csv":
        # The job's CSV reader options (sparkanon/engine/spark.py), then the config's.
        opts = {"header": "true", "inferSchema": "false", "ignoreLeadingWhiteSpace": "true"}
        opts.update(
            {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}
        )
        df = reader.options(**opts).csv(path)
    else:
        df = reader.format(fmt).load(path)
    start = time.perf_counter()
    df.write.mode("overwrite").parquet(out)
    print(json.dumps({"write_seconds": round(time.perf_counter() - start, 3)}))
    spark.stop()
    return 0


def _parquet_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(p).metadata.num_rows for p in sorted(path.glob("*.parquet")))


# --------------------------------------------------------------------------- runs


def _run_dir(snapshot: Path) -> Path:
    """The snapshot directory, with ``data`` and ``conf`` linked from the repository.

    Spark starts its Python workers with ``python -m pyspark.daemon`` in the job's working
    directory, and ``-m`` puts that directory first on their import path, ahead of
    ``PYTHONPATH``: run from the repository, the workers would import the work tree's
    ``sparkanon`` while the driver imports the snapshot. Run from the snapshot, both
    import the snapshot; the links keep the configs' relative paths valid.
    """
    for name in ("data", "conf"):
        link = snapshot / name
        if not link.exists():
            link.symlink_to(_bench.REPO_ROOT / name, target_is_directory=True)
    return snapshot


def run(args: argparse.Namespace) -> int:
    """One measured run (job or floor); appends its record to the JSONL file."""
    snapshot, sha = _bench.snapshot_package(args.code)
    sys.path.insert(0, str(snapshot))
    from sparkanon.families import load_config

    out_dir = OUT_ROOT / args.label
    overrides = [*args.set, f"output.path={out_dir}"]
    config = load_config(str(args.config), overrides)  # fails early on a bad override
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [
            str(snapshot),
            str(_bench.REPO_ROOT),
            *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []),
        ]
    )
    if args.floor:
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--floor-worker",
            "--format",
            config.input.format,
            "--path",
            config.input.path,
            "--options",
            json.dumps(dict(config.input.options)),
            "--out",
            str(out_dir),
        ]
    else:
        exe = shutil.which("sparkanon") or "sparkanon"
        cmd = [exe, "run", str(Path(args.config).resolve()), "--quiet"]
        for item in overrides:
            cmd += ["--set", item]
        if args.engine != "spark":
            cmd += ["--engine", args.engine]
    shutil.rmtree(out_dir, ignore_errors=True)
    prov = _bench.provenance(sha)
    print(f"[{args.label}] running: {' '.join(cmd)}", flush=True)
    m = measure(cmd, env, _run_dir(snapshot))
    record: dict[str, Any] = {
        "label": args.label,
        "mode": "floor" if args.floor else "job",
        "bench_command": _bench.command_line(),
        "command": " ".join(cmd),
        "input_format": config.input.format,
        "input_path": config.input.path,
        "input_bytes": _input_bytes(Path(config.input.path)),
        "returncode": m["returncode"],
        "wall_seconds": m["wall_seconds"],
        "peak_rss_gib": m["peak_rss_gib"],
        "peak_rss_by_part_gib": m["peak_rss_by_part_gib"],
        "peak_rss_root_gib": m["peak_rss_root_gib"],
        "at_peak_by_part_gib": m["at_peak_by_part_gib"],
        "max_processes": m["max_processes"],
        "rss_samples": m["rss_samples"],
        "tree_cpu_seconds": m["tree_cpu_seconds"],
        "machine_cpu_seconds": m["machine_cpu_seconds"],
        "other_cpu_seconds": m["other_cpu_seconds"],
        **prov,
    }
    if m["returncode"] != 0:
        record["error"] = m["stderr"][-4000:]
        print(f"[{args.label}] FAILED (exit {m['returncode']}):\n{m['stderr'][-4000:]}")
    elif args.floor:
        record["rows_in"] = _parquet_rows(out_dir)
        record["seconds"] = json.loads(m["stdout"].strip().splitlines()[-1])
    else:
        metrics = json.loads((out_dir / "metrics.json").read_text())
        record["rows_in"] = metrics["rows_in"]
        record["rows_out"] = metrics["rows_out"]
        record["seconds"] = metrics["seconds"]
        record["metrics"] = {
            k: metrics.get(k)
            for k in (
                "rows_suppressed",
                "rows_reconciled",
                "classes",
                "groups",
                "item_ncp",
                "published_classes",
                "class_size",
                "blocks",
                "block_rows",
                "infeasible_blocks",
                "EPP",
                "R_IL",
                "AVG_IL",
                "CAVG",
                "NCP",
                "GCP",
                "spark_jobs",
                "verified",
                "model",
                "max_block_rows",
                "node",
                "height",
                "precision",
                "DM",
                "lattice",
            )
        }
    if "rows_in" in record:
        record["rows_per_second"] = round(record["rows_in"] / m["wall_seconds"], 1)
    _bench.append_jsonl(args.runs_file, record)
    _write_timeline(args.runs_file.parent / "rss" / f"{args.label}.csv", m["timeline"])
    summary = {
        k: record.get(k)
        for k in (
            "label",
            "returncode",
            "rows_in",
            "wall_seconds",
            "rows_per_second",
            "peak_rss_gib",
            "other_cpu_seconds",
        )
    }
    print(json.dumps(summary), flush=True)
    if not args.keep_output:
        shutil.rmtree(out_dir, ignore_errors=True)
    return m["returncode"]


def _input_bytes(path: Path) -> int | None:
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return None


def _write_timeline(path: Path, timeline: list) -> None:
    parts = sorted({p for _, _, by in timeline for p in by})
    rows = []
    for t, total, by in timeline:
        row = {"t_seconds": round(t, 1), "total_gib": round(total / 2**30, 3)}
        row.update({f"{p}_gib": round(by.get(p, 0) / 2**30, 3) for p in parts})
        rows.append(row)
    _bench.write_csv(path, rows, ["t_seconds", "total_gib", *[f"{p}_gib" for p in parts]])


# --------------------------------------------------------------------------- report


def _latest(runs_file: Path, prefixes: list[str]) -> dict[str, dict]:
    """The latest run of each label, restricted to labels starting with one of ``prefixes``."""
    latest: dict[str, dict] = {}
    for line in runs_file.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            if not prefixes or any(r["label"].startswith(p) for p in prefixes):
                latest[r["label"]] = r
    return latest


def _rss(r: dict) -> str:
    parts = r["peak_rss_by_part_gib"]
    return (
        f"{r['peak_rss_gib']:.2f} ({parts.get('driver', 0):.2f} / "
        f"{parts.get('jvm', 0):.2f} / {parts.get('worker', 0):.2f})"
    )


def report(runs_file: Path, prefixes: list[str] | None = None) -> int:
    """Markdown tables of the latest run of each label (failures included).

    Args:
        runs_file: the JSON lines of the runs.
        prefixes: only labels starting with one of these (all when empty).
    """
    latest = _latest(runs_file, prefixes or [])
    jobs = [r for r in latest.values() if r["mode"] == "job"]
    floors = {r["label"]: r for r in latest.values() if r["mode"] == "floor"}
    print(
        "| run | rows in | wall s | CPU s | rows/s | peak RSS GiB (driver / JVM / workers) "
        "| floor wall s | floor CPU s | job/floor wall | job/floor CPU | Spark jobs "
        "| other CPU s | code |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for r in jobs:
        f = floors.get(f"{r['label']}-floor")
        if r["returncode"] != 0:
            print(
                f"| {r['label']} | | FAILED exit {r['returncode']} after {r['wall_seconds']} s "
                + "| " * 10
                + "|"
            )
            continue
        cpu = r.get("tree_cpu_seconds")
        cells = [
            r["label"],
            f"{r['rows_in']:,}",
            f"{r['wall_seconds']:.1f}",
            f"{cpu:.1f}" if cpu is not None else "",
            f"{r['rows_per_second']:,.0f}",
            _rss(r),
        ]
        if f and f["returncode"] == 0:
            fcpu = f.get("tree_cpu_seconds")
            cells += [
                f"{f['wall_seconds']:.1f}",
                f"{fcpu:.1f}" if fcpu is not None else "",
                f"{r['wall_seconds'] / f['wall_seconds']:.1f}x",
                f"{cpu / fcpu:.1f}x" if cpu and fcpu else "",
            ]
        else:
            cells += ["", "", "", ""]
        jobs_total = ((r.get("metrics") or {}).get("spark_jobs") or {}).get("total")
        cells += ["" if jobs_total is None else str(jobs_total)]
        cells += [str(r["other_cpu_seconds"]), r["code_sha"]]
        print("| " + " | ".join(cells) + " |")
    stages = [k for k in STAGES if any(k in (r.get("seconds") or {}) for r in jobs)]
    stages += sorted({k for r in jobs for k in r.get("seconds") or {}} - set(stages))
    print()
    print("Seconds per stage (metrics.json):")
    print()
    print("| run | " + " | ".join(stages) + " | sum |")
    print("|---|" + "---:|" * (len(stages) + 1))
    for r in jobs:
        if r["returncode"] != 0:
            continue
        s = r["seconds"]
        print(
            f"| {r['label']} | "
            + " | ".join(f"{s.get(k, 0):.1f}" for k in stages)
            + f" | {sum(s.values()):.1f} |"
        )
    print()
    print("Floors:")
    print()
    print(
        "| run | rows | wall s | CPU s | rows/s | write s | peak RSS GiB (driver / JVM / workers) |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in floors.values():
        if r["returncode"] != 0:
            print(f"| {r['label']} | | FAILED exit {r['returncode']} | | | | |")
            continue
        print(
            f"| {r['label']} | {r['rows_in']:,} | {r['wall_seconds']:.1f} "
            f"| {r.get('tree_cpu_seconds', 0):.1f} "
            f"| {r['rows_per_second']:,.0f} | {r['seconds']['write_seconds']:.1f} | {_rss(r)} |"
        )
    print()
    print("Quality of the job runs:")
    print()
    print("| run | blocks | classes | EPP | R_IL | AVG_IL | GCP % | suppressed | verified |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in jobs:
        if r["returncode"] != 0:
            continue
        q = r["metrics"]

        def num(key: str, digits: int, q: dict = q) -> str:
            value = q.get(key)
            return "" if value is None else f"{value:.{digits}f}"

        # A relational-transaction run has groups, not classes (and no EPP or R_IL).
        classes = q.get("classes") if q.get("classes") is not None else q.get("groups")
        shown = "" if classes is None else f"{classes:,}"
        # A full-domain run has no blocks (its classes are the chosen node's).
        blocks = "" if q.get("blocks") is None else f"{q['blocks']:,}"
        print(
            f"| {r['label']} | {blocks} | {shown} | {num('EPP', 4)} "
            f"| {num('R_IL', 4)} | {num('AVG_IL', 4)} | {num('GCP', 2)} "
            f"| {q['rows_suppressed']:,} | {q['verified']} |"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", type=Path, help="job config (YAML)")
    parser.add_argument("--label", help="name of the run in the results")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--floor", action="store_true", help="measure the plain read+write job")
    parser.add_argument("--engine", default="spark", choices=["spark", "local"])
    parser.add_argument("--keep-output", action="store_true", help="keep the job's output")
    parser.add_argument("--runs-file", type=Path, default=RUNS_FILE)
    parser.add_argument("--report", action="store_true", help="print tables of the runs")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PREFIX",
        help="with --report: only labels starting with PREFIX (repeatable)",
    )
    parser.add_argument("--code", help="code_sha of an existing snapshot to run (default: now)")
    # internal: the floor job itself, in its own process
    parser.add_argument("--floor-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--format", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--options", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.floor_worker:
        return floor_worker(args.format, args.path, json.loads(args.options), args.out)
    if args.report:
        return report(args.runs_file, args.only)
    if not args.config or not args.label:
        parser.error("CONFIG and --label are required for a run")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
