"""Seconds per Spark job and per stage of one run, from Spark's event log.

How section 18.4 of docs/benchmarks.md found where a job's time goes. Run the job with
the event log on (a ``spark-defaults.conf`` in ``SPARK_CONF_DIR``)::

    mkdir -p /tmp/prof/conf /tmp/prof/events
    echo 'spark.eventLog.enabled true' > /tmp/prof/conf/spark-defaults.conf
    echo 'spark.eventLog.dir file:///tmp/prof/events' >> /tmp/prof/conf/spark-defaults.conf
    SPARK_CONF_DIR=/tmp/prof/conf sparkanon run CONFIG ...
    python -m scripts.event_log_jobs /tmp/prof/events/eventlog_v2_local-*/events_1_*.zstd
    python -m scripts.event_log_jobs LOG --stages 9    # task metrics of job 9's stages

Per job: its wall seconds, its description (sparkanon labels its jobs by step) and per
stage the seconds, task count and the call that started it. With ``--stages JOB``: per
stage of that job the summed task metrics (run time, JVM CPU, spill, shuffle and I/O
bytes). A ``.zstd`` log (Spark 4's default) is read through the ``zstd`` command.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def events(path: Path) -> Iterator[dict[str, Any]]:
    """The log's events, one JSON object per line."""
    if path.suffix == ".zstd":
        text = subprocess.run(
            ["zstd", "-dc", str(path)], check=True, capture_output=True
        ).stdout.decode("utf-8")
    else:
        text = path.read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.strip():
            yield json.loads(line)


def job_table(log: list[dict[str, Any]]) -> list[str]:
    """One line per job: id, seconds, description, and its stages' seconds."""
    jobs: dict[int, dict[str, Any]] = {}
    stages: dict[int, tuple[float, int, str]] = {}
    for e in log:
        kind = e["Event"]
        if kind == "SparkListenerJobStart":
            props = e.get("Properties") or {}
            jobs[e["Job ID"]] = {
                "start": e["Submission Time"],
                "desc": props.get("spark.job.description") or "",
                "stages": e["Stage IDs"],
            }
        elif kind == "SparkListenerJobEnd" and e["Job ID"] in jobs:
            jobs[e["Job ID"]]["end"] = e["Completion Time"]
        elif kind == "SparkListenerStageCompleted":
            info = e["Stage Info"]
            took = (info.get("Completion Time", 0) - info.get("Submission Time", 0)) / 1000
            stages[info["Stage ID"]] = (took, info["Number of Tasks"], info["Stage Name"][:50])
    lines = []
    total = 0.0
    for job, d in sorted(jobs.items()):
        took = (d.get("end", d["start"]) - d["start"]) / 1000
        total += took
        parts = [
            f"{s:.1f}s/{n}t {name}"
            for s, n, name in (stages[i] for i in d["stages"] if i in stages)
            if s > 0
        ]
        lines.append(f"{job:4d} {took:7.1f}s  {d['desc'][:60]:60s} " + "; ".join(parts))
    lines.append(f"jobs' seconds in all: {total:.1f}")
    return lines


METRICS = ["Executor Run Time", "Executor CPU Time", "JVM GC Time"]
SPILL = ["Memory Bytes Spilled", "Disk Bytes Spilled"]


def stage_metrics(log: list[dict[str, Any]], job: int) -> list[str]:
    """Per stage of ``job``: summed task seconds, JVM CPU seconds, spill and I/O MB."""
    wanted: set[int] = set()
    sums: dict[int, Counter[str]] = {}
    for e in log:
        if e["Event"] == "SparkListenerJobStart" and e["Job ID"] == job:
            wanted = set(e["Stage IDs"])
        if e["Event"] != "SparkListenerTaskEnd":
            continue
        m = e.get("Task Metrics") or {}
        c = sums.setdefault(e["Stage ID"], Counter())
        c["run s"] += m.get("Executor Run Time", 0) / 1e3
        c["jvm cpu s"] += m.get("Executor CPU Time", 0) / 1e9
        c["gc s"] += m.get("JVM GC Time", 0) / 1e3
        for name in SPILL:
            c[name.replace(" Bytes", "").lower() + " MB"] += m.get(name, 0) / 1e6
        write = m.get("Shuffle Write Metrics") or {}
        read = m.get("Shuffle Read Metrics") or {}
        c["shuffle write MB"] += write.get("Shuffle Bytes Written", 0) / 1e6
        c["shuffle read MB"] += (
            read.get("Remote Bytes Read", 0) + read.get("Local Bytes Read", 0)
        ) / 1e6
        c["input MB"] += (m.get("Input Metrics") or {}).get("Bytes Read", 0) / 1e6
        c["output MB"] += (m.get("Output Metrics") or {}).get("Bytes Written", 0) / 1e6
    return [
        f"stage {s}: " + ", ".join(f"{k} {v:.1f}" for k, v in sums[s].items() if v)
        for s in sorted(sums)
        if s in wanted
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="an event log file (.zstd or plain JSON lines)")
    parser.add_argument("--stages", type=int, metavar="JOB", help="task metrics of one job")
    args = parser.parse_args(argv)
    log = list(events(args.log))
    lines = stage_metrics(log, args.stages) if args.stages is not None else job_table(log)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
