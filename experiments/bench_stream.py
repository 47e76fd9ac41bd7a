"""Dynamic condensation over a stream: records per second, batch latency, state size.

Reproduces docs/benchmarks.md, section 11.1 ("The stream").

Issue 24's streaming target: "sustained records per second on this 2-core machine with
micro-batches of a stated size, end-to-end latency per batch, state size per 1M records
seen".

Method (one process, Spark ``local[*]``, sparkanon from a frozen snapshot):

1. The input: generated Adult rows (``scripts/generate_adult.py``, one Parquet file under
   ``--data-dir``, reused when it is there). The config's numeric attributes
   (``conf/adult_condense.yaml``: the six continuous ones) are the stream's records.
   The first ``--initial`` rows are the initial static batch (the job's ``input``; its
   groups are the stream's first state); the rest are cut into Parquet files of
   ``--file-rows`` rows each, in row order, staged outside the source folder.
2. For each checkpoint of ``--seen`` (records seen, initial batch included), the files up
   to it are moved (renamed) into the source folder and
   ``sparkanon.families.synthesis.stream.run_stream``
   runs with ``trigger: available_now`` and ``max_files_per_trigger: 1``: every
   micro-batch is one file of ``--file-rows`` records; the run ends when the source is
   consumed. The next checkpoint restarts the stream on the same checkpoint folder (a
   restart re-reads the initial batch to build the initial state, which Spark then
   ignores: the key's state exists).
3. Per batch (Spark's progress event, through ``run_stream``'s ``batch_hook``): rows in,
   synthetic rows out and ``triggerExecution`` ms (listing the new file, reading it, the
   step, the sink's write and commit, the state store's commit). Per checkpoint: the
   wall time of the run, the committed state's size (the length of the key's state bytes,
   ``sparkanon.engine.streaming.read_state``), the checkpoint folder's size on disk
   (state store versions and logs) and the state's counts (groups, records in groups,
   released, pending), the RSS of this process (the driver's Python) and of the JVM, and
   the CPU seconds used by other processes on the machine during the run (interference).

Reported figures: records/s per batch (``rows / triggerExecution``), sustained records/s
over a checkpoint's batches (their rows over the sum of their ``triggerExecution``, and
over the run's wall time, which adds the query's start and the initial batch's
re-grouping), and the batch processing latency (``triggerExecution``). The end-to-end
latency of a file under a processing-time trigger of interval ``T`` is at most
``T`` (waiting for the next trigger) plus that processing latency; this script measures
the processing part only.

Results: ``OUT_DIR/stream{tag}.csv`` (one row per batch), ``OUT_DIR/stream{tag}_points.csv``
(one row per checkpoint) and ``OUT_DIR/stream{tag}.meta.json`` (command, code, machine,
settings).

Usage::

    python -m experiments.bench_stream --seen 200000 500000 1000000 --file-rows 50000
    python -m experiments.bench_stream --report
    python -m experiments.bench_stream --search 5000 --seen 50000 200000 500000 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from experiments import _bench
from scripts import _args

CONFIG = _bench.REPO_ROOT / "conf" / "adult_condense.yaml"
DATA_DIR = Path("/tmp/sparkanon_bench/perturb")
WORK_DIR = Path("/tmp/sparkanon_bench/stream")
BATCH_FIELDS = ["seen_after", "batch_id", "rows_in", "rows_out", "trigger_ms", "records_per_s"]
POINT_FIELDS = [
    "seen",
    "batches",
    "rows_streamed",
    "run_wall_s",
    "batch_s",
    "sustained_batch_rps",
    "sustained_wall_rps",
    "first_batch_ms",
    "last_batch_ms",
    "groups",
    "records_released",
    "records_pending",
    "state_bytes",
    "state_bytes_per_1m_seen",
    "checkpoint_bytes",
    "checkpoint_state_bytes",
    "sink_bytes",
    "driver_rss_gib",
    "jvm_rss_gib",
    "other_cpu_s",
    "code_sha",
]


def dir_bytes(path: Path) -> int:
    """Bytes of every file under ``path`` (0 when absent)."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def stage_files(source: Path, stage: Path, columns: list[str], initial: int, file_rows: int) -> int:
    """Write the initial batch and the stream's files (Parquet) from ``source``'s rows.

    Returns:
        The number of stream files written to ``stage`` (``part-00000.parquet``...).
    """
    import pyarrow.parquet as pq

    table = pq.read_table(source, columns=columns)
    pq.write_table(table.slice(0, initial), stage / "initial.parquet")
    files = stage / "files"
    files.mkdir()
    n = 0
    for start in range(initial, table.num_rows, file_rows):
        pq.write_table(table.slice(start, file_rows), files / f"part-{n:05d}.parquet")
        n += 1
    return n


def rss_gib() -> tuple[float, float]:
    """RSS (GiB) of this process and of its JVM child(ren)."""
    import psutil

    me = psutil.Process()
    jvm = sum(
        c.memory_info().rss for c in me.children(recursive=True) if "java" in c.name().lower()
    )
    return round(me.memory_info().rss / 2**30, 3), round(jvm / 2**30, 3)


def tree_cpu_seconds() -> float:
    """CPU seconds of this process and its live descendants (the JVM, Python workers)."""
    import psutil

    total = 0.0
    me = psutil.Process()
    for proc in [me, *me.children(recursive=True)]:
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system
    return total


def machine_busy_seconds() -> float:
    """Busy CPU seconds of the whole machine since boot."""
    import psutil

    t = psutil.cpu_times()
    return t.user + t.nice + t.system + getattr(t, "irq", 0) + getattr(t, "softirq", 0)


def point_row(
    seen: int,
    batches: list[dict[str, Any]],
    wall: float,
    state: dict[str, Any],
    sizes: dict[str, int],
    other_cpu: float,
    sha: str,
) -> dict[str, Any]:
    """One checkpoint's figures (see the module docstring)."""
    rows = sum(b["rows_in"] for b in batches)
    batch_s = sum(b["trigger_ms"] for b in batches) / 1000.0
    driver, jvm = rss_gib()
    return {
        "seen": seen,
        "batches": len(batches),
        "rows_streamed": rows,
        "run_wall_s": round(wall, 2),
        "batch_s": round(batch_s, 2),
        "sustained_batch_rps": round(rows / batch_s, 1) if batch_s else None,
        "sustained_wall_rps": round(rows / wall, 1) if wall else None,
        "first_batch_ms": batches[0]["trigger_ms"] if batches else None,
        "last_batch_ms": batches[-1]["trigger_ms"] if batches else None,
        "groups": state["groups"],
        "records_released": state["records_released"],
        "records_pending": state["records_pending"],
        "state_bytes": sizes["state"],
        "state_bytes_per_1m_seen": round(sizes["state"] * 1_000_000 / seen),
        "checkpoint_bytes": sizes["checkpoint"],
        "checkpoint_state_bytes": sizes["checkpoint_state"],
        "sink_bytes": sizes["sink"],
        "driver_rss_gib": driver,
        "jvm_rss_gib": jvm,
        "other_cpu_s": round(other_cpu, 1),
        "code_sha": sha,
    }


def run(args: argparse.Namespace) -> int:
    """Stage the files, then stream them checkpoint by checkpoint (module docstring)."""
    sha = _bench.use_snapshot(args.code)
    snapshot = _bench.SNAPSHOT_ROOT / sha
    # Spark's Python workers import from their working directory first (bench_job.py's
    # _run_dir): run from the snapshot, with PYTHONPATH naming it, so they import it too.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(snapshot), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])]
    )
    from experiments import bench_perturb
    from sparkanon.commands import build_engine
    from sparkanon.engine.streaming import read_state
    from sparkanon.families import load_config
    from sparkanon.families.synthesis.condense_stream import StreamState, summary
    from sparkanon.families.synthesis.stream import run_stream

    seen_points = sorted(args.seen)
    source_rows = bench_perturb.input_file(args.data_dir, seen_points[-1], args.seed)
    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    stage, src, sink, checkpoint = (work / n for n in ("stage", "source", "sink", "checkpoint"))
    for folder in (stage, src):
        folder.mkdir(parents=True)
    overrides = [
        "input.format=parquet",
        f"input.path={stage / 'initial.parquet'}",
        f"output.path={sink}",
        f"stream.source={src}",
        f"stream.checkpoint={checkpoint}",
        "stream.format=parquet",
        "stream.trigger=available_now",
        "stream.max_files_per_trigger=1",
        *args.set,
    ]
    config = load_config(str(args.config), overrides)
    columns = [a.name for a in config.attributes if a.kind == "continuous"]
    n_files = stage_files(source_rows, stage, columns, args.initial, args.file_rows)
    print(f"staged {n_files} files of {args.file_rows} rows, initial {args.initial}", flush=True)
    os.chdir(snapshot)
    for name in ("data", "conf"):
        link = snapshot / name
        if not link.exists():
            link.symlink_to(_bench.REPO_ROOT / name, target_is_directory=True)
    engine = build_engine("spark", config, args.master)
    engine.spark.sparkContext.setLogLevel("ERROR")
    meta = {
        "command": _bench.command_line(),
        "config": str(Path(args.config).resolve()),
        "overrides": overrides,
        "source_rows": str(source_rows),
        "initial": args.initial,
        "file_rows": args.file_rows,
        "k": config.models.min_class_size(),
        "attributes": columns,
        **_bench.provenance(sha),
        "points": [],
    }
    all_batches: list[dict[str, Any]] = []
    points: list[dict[str, Any]] = []
    moved = 0
    for seen in seen_points:
        want = min(n_files, -(-(seen - args.initial) // args.file_rows))
        for i in range(moved, want):
            name = f"part-{i:05d}.parquet"
            (stage / "files" / name).rename(src / name)
        moved = want
        batches: list[dict[str, Any]] = []

        def hook(batch: Any, into: list[dict[str, Any]] = batches, at: int = seen) -> None:
            ms = int(batch.duration_ms.get("triggerExecution", 0))
            into.append(
                {
                    "seen_after": at,
                    "batch_id": batch.batch_id,
                    "rows_in": batch.input_rows,
                    "rows_out": batch.output_rows,
                    "trigger_ms": ms,
                    "records_per_s": round(batch.input_rows * 1000 / ms, 1) if ms else None,
                }
            )
            print(f"  batch {batch.batch_id}: {batch.input_rows} rows, {ms} ms", flush=True)

        busy0, cpu0, t0 = machine_busy_seconds(), tree_cpu_seconds(), time.perf_counter()
        report = run_stream(engine, config, batch_hook=hook)
        wall = time.perf_counter() - t0
        other = (machine_busy_seconds() - busy0) - (tree_cpu_seconds() - cpu0)
        committed = read_state(engine.spark, str(checkpoint)).toPandas()
        blob = bytes(committed["state"].iloc[0])
        state = summary(StreamState.from_bytes(blob))
        sizes = {
            "state": len(blob),
            "checkpoint": dir_bytes(checkpoint),
            "checkpoint_state": dir_bytes(checkpoint / "state"),
            "sink": dir_bytes(sink),
        }
        row = point_row(state["records_seen"], batches, wall, state, sizes, other, sha)
        points.append(row)
        all_batches.extend(batches)
        meta["points"].append({"seen_target": seen, "report": report, "state": state})
        print(json.dumps(row), flush=True)
        _bench.write_csv(args.out_dir / f"stream{args.tag}.csv", all_batches, BATCH_FIELDS)
        _bench.write_csv(args.out_dir / f"stream{args.tag}_points.csv", points, POINT_FIELDS)
        _bench.write_json(args.out_dir / f"stream{args.tag}.meta.json", meta)
    engine.spark.stop()
    return report_tables(args.out_dir, args.tag)


SEARCH_FIELDS = ["seen", "groups", "records", "numpy_us_per_record", "jit_us_per_record", "same"]


def search(args: argparse.Namespace) -> int:
    """The nearest-centroid search alone: numpy path against the compiled one, in process.

    The stream's first ``--initial`` records seed the groups (as ``run_stream`` does),
    then the records up to each ``--seen`` point join them (compiled path); at each point
    the next ``--search`` records are assigned by both paths from the same groups
    (``SPARKANON_NO_JIT=1``, then unset), timed, and their group ids compared. A call
    includes ``assign_records``' per-call work (the groups' arrays built and returned).
    Writes ``OUT_DIR/stream_search{tag}.csv``.
    """
    sha = _bench.use_snapshot(args.code)
    import numpy as np
    import pyarrow.parquet as pq

    from experiments import bench_perturb
    from sparkanon.algorithms.condensation.stream import assign_records
    from sparkanon.families import load_config
    from sparkanon.families.synthesis.condense_stream import initial_state

    config = load_config(str(args.config), ["output.path=/tmp/unused"])
    k = config.models.min_class_size()
    columns = [a.name for a in config.attributes if a.kind == "continuous"]
    points = sorted(args.seen)
    path = bench_perturb.input_file(args.data_dir, points[-1] + args.search, args.seed)
    x = pq.read_table(path, columns=columns).to_pandas().to_numpy(dtype=np.float64)
    state = initial_state(x[: args.initial], k, config.seed)
    groups, next_id, at = state.groups, state.next_id, args.initial
    rows = []
    for seen in points:
        os.environ.pop("SPARKANON_NO_JIT", None)
        groups, _, next_id, _ = assign_records(groups, x[at:seen], k, state.scale, next_id)
        at = seen
        chunk = x[at : at + args.search]
        timed = {}
        for name, env in (("numpy", "1"), ("jit", "0")):
            os.environ["SPARKANON_NO_JIT"] = env
            t0 = time.perf_counter()
            timed[name] = assign_records(groups, chunk, k, state.scale, next_id)
            timed[name + "_s"] = time.perf_counter() - t0
        os.environ.pop("SPARKANON_NO_JIT", None)
        row = {
            "seen": seen,
            "groups": len(groups.stats),
            "records": len(chunk),
            "numpy_us_per_record": round(timed["numpy_s"] / len(chunk) * 1e6, 1),
            "jit_us_per_record": round(timed["jit_s"] / len(chunk) * 1e6, 1),
            "same": bool(np.array_equal(timed["numpy"][1], timed["jit"][1])),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    _bench.write_csv(args.out_dir / f"stream_search{args.tag}.csv", rows, SEARCH_FIELDS)
    meta = {"command": _bench.command_line(), "input": str(path), **_bench.provenance(sha)}
    _bench.write_json(args.out_dir / f"stream_search{args.tag}.meta.json", meta)
    return 0


def report_tables(out_dir: Path, tag: str = "") -> int:
    """Markdown tables of the checkpoints and of the batches' latency."""
    import csv

    with (out_dir / f"stream{tag}_points.csv").open(encoding="utf-8", newline="") as handle:
        points = list(csv.DictReader(handle))
    print(
        "| records seen | batches | groups | sustained rec/s (batches) | rec/s (run wall) "
        "| last batch ms | state MB | state MB per 1M seen | checkpoint MB "
        "| driver / JVM RSS GiB | other CPU s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    mb = 1e6
    for p in points:
        print(
            f"| {int(p['seen']):,} | {p['batches']} | {int(p['groups']):,} "
            f"| {float(p['sustained_batch_rps']):,.0f} | {float(p['sustained_wall_rps']):,.0f} "
            f"| {p['last_batch_ms']} | {int(p['state_bytes']) / mb:.1f} "
            f"| {int(p['state_bytes_per_1m_seen']) / mb:.1f} "
            f"| {int(p['checkpoint_bytes']) / mb:.1f} "
            f"| {p['driver_rss_gib']} / {p['jvm_rss_gib']} | {p['other_cpu_s']} |"
        )
    with (out_dir / f"stream{tag}.csv").open(encoding="utf-8", newline="") as handle:
        batches = list(csv.DictReader(handle))
    print()
    print("| batch | rows | trigger ms | rec/s |")
    print("|---:|---:|---:|---:|")
    for b in batches:
        print(f"| {b['batch_id']} | {b['rows_in']} | {b['trigger_ms']} | {b['records_per_s']} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seen", type=_args.positive_int, nargs="+", default=[200_000, 500_000, 1_000_000]
    )
    parser.add_argument("--file-rows", type=_args.positive_int, default=50_000)
    parser.add_argument("--initial", type=_args.positive_int, default=10_000)
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="generated inputs")
    parser.add_argument("--work-dir", type=Path, default=WORK_DIR, help="source, sink, ...")
    parser.add_argument("--seed", type=_args.seed, default=0, help="generate_adult.py's seed")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--out-dir", type=Path, default=_bench.BENCH_DIR)
    parser.add_argument("--tag", default="", help="suffix of the output files")
    parser.add_argument("--code", help="code_sha of an existing snapshot to run (default: now)")
    parser.add_argument("--report", action="store_true")
    parser.add_argument(
        "--search",
        type=_args.positive_int,
        metavar="RECORDS",
        help="time the nearest-centroid search alone (numpy and compiled) on RECORDS records",
    )
    args = parser.parse_args(argv)
    if args.report:
        return report_tables(args.out_dir, args.tag)
    if args.search:
        return search(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
