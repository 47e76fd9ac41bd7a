"""Fault runs: a worker killed while the cluster stage runs, a driver killed mid-commit.

Each run prints one JSON line and appends it to ``docs/bench/fault_runs.jsonl``;
``docs/operations.md`` reports them.

``worker``: starts the standalone cluster (``scripts/local_cluster.sh``, two one-core
workers), submits the Adult job once undisturbed, then again, and when the second run's
log shows the ``cluster`` stage running it kills one worker (the Worker JVM and its
executor, ``SIGKILL``). The run must finish, verified, with a table equal to the
undisturbed one row for row.

``commit``: runs the Adult job on a sample twice into one output (``mode: overwrite``)
in local mode, the second time with a driver that pauses inside the commit at a given
step, and kills it there (``SIGKILL``). Then it looks at the output: the old table,
whole, or the new one, never a mix; for a path output the next run on it finishes an
overwrite that was cut between its two renames. Steps:
``path-aside`` (the old output moved aside, the new not yet in place), ``path-in`` (the
new in place, the old not yet deleted), ``table-before`` and ``table-after`` (a catalog
table, before and after the metastore update that points it at the new version).

Usage::

    python -m scripts.fault_runs worker
    python -m scripts.fault_runs commit [--step path-aside ...]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from scripts._spark_procs import (
    ROOT,
    cluster_env,
    published_table,
    python_env,
    started,
    submit_command,
)

RUNS = ROOT / "docs" / "bench" / "fault_runs.jsonl"
STEPS = ("path-aside", "path-in", "table-before", "table-after")


def record(entry: dict[str, Any]) -> None:
    entry = {"utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **entry}
    print(json.dumps(entry), flush=True)
    RUNS.parent.mkdir(parents=True, exist_ok=True)
    with RUNS.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def submit(master: str, out: Path, log_path: Path) -> subprocess.Popen:
    """The Adult job submitted to the cluster, its log to ``log_path``."""
    app = str(ROOT / "jobs" / "anonymize.py")
    job = [app, "conf/adult_hpk.yaml", "--set", f"output.path={out}"]
    return subprocess.Popen(
        submit_command(master, job),
        cwd=ROOT,
        env=python_env(),
        stdout=subprocess.PIPE,
        stderr=log_path.open("w", encoding="utf-8"),
        text=True,
    )


def worker_run(work: Path) -> None:
    with started("local_cluster.sh", cluster_env(work / "cluster")) as master:
        t0 = time.time()
        calm = submit(master, work / "calm", work / "calm.log")
        calm_out, _ = calm.communicate()
        calm_seconds = time.time() - t0
        t0 = time.time()
        hit = submit(master, work / "hit", work / "hit.log")
        killed_at = None
        while hit.poll() is None:
            text = (work / "hit.log").read_text(encoding="utf-8", errors="replace")
            if killed_at is None and "stage=cluster start" in text:
                time.sleep(5)  # let the stage's tasks start on both workers
                pid = int((work / "cluster" / "worker2.pid").read_text())
                children = subprocess.run(
                    ["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False
                ).stdout.split()
                for child in [pid, *map(int, children)]:
                    try:
                        os.kill(child, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                killed_at = round(time.time() - t0, 1)
            time.sleep(0.5)
        hit_out, _ = hit.communicate()
        hit_seconds = time.time() - t0
        same = hit.returncode == 0 and published_table(work / "calm").equals(
            published_table(work / "hit")
        )
        metrics = json.loads(hit_out) if hit.returncode == 0 else {}
        record(
            {
                "run": "worker-killed-during-cluster",
                "master": master,
                "undisturbed_exit": calm.returncode,
                "undisturbed_seconds": round(calm_seconds, 1),
                "killed_worker_at_seconds": killed_at,
                "exit": hit.returncode,
                "seconds": round(hit_seconds, 1),
                "verified": metrics.get("verified"),
                "rows_out": metrics.get("rows_out"),
                "identical_to_undisturbed": bool(same),
                "undisturbed_verified": json.loads(calm_out).get("verified") if calm_out else None,
            }
        )


# --------------------------------------------------------------------------- commit

_DRIVER = r"""
import os, sys, time
import sparkanon.stages.commit as commit
from sparkanon.cli import main
step, signal_file = sys.argv[1], sys.argv[2]

def pause():
    open(signal_file, "w").write("paused")
    time.sleep(600)

if step.startswith("path"):
    from sparkanon.engine.spark import SparkEngine
    renames = []
    original = SparkEngine.rename_path
    def rename(self, src, dst):
        original(self, src, dst)
        renames.append(dst)
        wanted = 1 if step == "path-aside" else 2
        if len(renames) == wanted:
            pause()
    SparkEngine.rename_path = rename
else:
    from sparkanon.engine.catalog import SparkCatalog
    original = SparkCatalog.point_table
    def point(self, name, location):
        if step == "table-before":
            pause()
        original(self, name, location)
        if step == "table-after":
            pause()
    SparkCatalog.point_table = point
sys.exit(main(sys.argv[3:]))
"""


def commit_run(work: Path, step: str) -> None:
    sample = work / "adult_2000.csv"
    lines = (ROOT / "data" / "adult" / "adult.csv").read_text(encoding="utf-8").splitlines()
    sample.write_text("\n".join(lines[:2001]) + "\n", encoding="utf-8")
    common = [
        "--set",
        f"input.path={sample}",
        "--set",
        "output.mode=overwrite",
        "--set",
        "partitioning.max_block_rows=500",
    ]
    if step.startswith("path"):
        where = ["--set", f"output.path={work / 'out'}"]
    else:
        where = ["--set", "output.path=null", "--set", "output.table=default.faults"]
    cmd = ["run", "conf/adult_hpk.yaml", *common, *where]
    # The embedded metastore and warehouse of this run (table steps).
    env = os.environ | {"PYTHONPATH": str(ROOT), "SPARKANON_WAREHOUSE": str(work)}
    first = subprocess.run(
        [sys.executable, "-m", "sparkanon.cli", *cmd, "--set", "model.k=4"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert first.returncode == 0, first.stderr[-3000:]
    signal_file = work / f"paused-{step}"
    driver = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, step, str(signal_file), *cmd, "--set", "model.k=6"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 600
    while not signal_file.exists() and driver.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    driver.send_signal(signal.SIGKILL)
    driver.communicate()
    state = inspect_output(work, step)
    record({"run": f"driver-killed-at-{step}", **state})


def inspect_output(work: Path, step: str) -> dict[str, Any]:
    """What a reader finds after the kill, and after the next run's recovery for paths."""
    if step.startswith("path"):
        out = work / "out"
        before = "present" if out.exists() else "absent"
        k = None
        if out.exists():
            k = json.loads((out / "metrics.json").read_text())["model"]["k"]
        from sparkanon.engine.local import LocalEngine
        from sparkanon.stages.commit import recover_interrupted_commit

        direction = recover_interrupted_commit(LocalEngine(), str(out))
        after_k = json.loads((out / "metrics.json").read_text())["model"]["k"]
        leftovers = sorted(p.name for p in work.iterdir() if p.name.startswith("out."))
        return {
            "output_right_after_kill": before,
            "k_right_after_kill": k,
            "recovery": direction,
            "k_after_recovery": after_k,
            "whole_table_after_recovery": len(published_table(out)) > 0,
            "leftover_siblings": leftovers,
        }
    from pyspark.sql import SparkSession

    from sparkanon.engine.session import local_warehouse_conf

    builder = SparkSession.builder.master("local[1]").enableHiveSupport()
    for key, value in local_warehouse_conf(str(work)).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    props = {r["key"]: r["value"] for r in spark.sql("SHOW TBLPROPERTIES default.faults").collect()}
    rows = spark.table("default.faults").count()
    location = next(
        r["data_type"]
        for r in spark.sql("DESCRIBE TABLE EXTENDED default.faults").collect()
        if r["col_name"] == "Location"
    )
    version = Path(location.removeprefix("file:")).parent
    k = json.loads((version / "metrics.json").read_text())["model"]["k"]
    spark.stop()
    return {
        "table_rows": rows,
        "k_of_the_version_read": k,
        "verified": props.get("sparkanon.verified"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["worker", "commit"])
    parser.add_argument("--step", action="append", choices=STEPS)
    parser.add_argument("--work", default="/tmp/sparkanon_faults")
    args = parser.parse_args()
    work = Path(args.work)
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if args.what == "worker":
        worker_run(work)
        return 0
    for step in args.step or STEPS:
        folder = work / step
        folder.mkdir()
        commit_run(folder, step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
