"""The Adult job on a real Spark standalone cluster (a master and two one-core workers).

``scripts/local_cluster.sh`` starts the cluster from the pyspark installation; the job is
submitted with ``spark-submit --master spark://127.0.0.1:PORT`` and the package shipped
as a zip in ``--py-files``, as PySpark documents. One submitted job reads a partition of a
Hive table (embedded Derby metastore) and publishes into a partition of another; the
published rows must verify and equal, row for row after sorting, what the job publishes
from the same rows on one machine (the local engine, which must publish what Spark
publishes: ``tests/test_golden.py`` and the engine conformance tests hold Spark's local
mode to it). It runs on the first 2,000 Adult rows in blocks of 500 (several blocks, as
a full run has). Each ``spark-submit`` costs about 30 seconds of CI whatever the data, so
the module submits one application: it writes the input table, then runs
``jobs/anonymize.py`` as spark-submit would, on the same session. A partition rerun's
idempotence is tested in local mode (``tests/engine/test_tables.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from scripts._spark_procs import (
    cluster_env,
    published_table,
    python_env,
    started,
    submit_command,
)
from tests._adult import ROOT
from tests._inputs import write_adult_csv

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One cluster for the module's tests (a start costs about ten seconds)."""
    with started("local_cluster.sh", cluster_env(tmp_path_factory.mktemp("cluster"))) as url:
        yield url


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return done


_MAKE_INPUT_THEN_JOB = """
import runpy
import sys
from pyspark.sql import functions as F
from sparkanon.engine.session import get_or_create_session
spark = get_or_create_session(hive=True)
people = spark.read.option("header", "true").csv(sys.argv[1]).withColumn("ds", F.lit("2026-11-23"))
people.write.partitionBy("ds").format("parquet").saveAsTable("default.people")
# The job's entry point as spark-submit runs it (its sys.exit ends this application).
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


SAMPLE_ROWS = 2000
"""The first Adult rows the cluster jobs run on (the whole file took 5 minutes of CI)."""
BLOCK_ROWS = 500
"""Blocks of at most this many rows: several blocks and a reconciliation, as a full run."""


def test_adult_job_on_the_cluster_into_a_hive_partition_equals_local_mode(
    cluster: str, tmp_path: Path
) -> None:
    assert cluster.startswith("spark://127.0.0.1:")
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    env = python_env({"SPARKANON_WAREHOUSE": str(warehouse)})
    sample = write_adult_csv(tmp_path, SAMPLE_ROWS)
    script = tmp_path / "make_input_then_job.py"
    script.write_text(_MAKE_INPUT_THEN_JOB, encoding="utf-8")
    # No report: its evaluation adds ~25 s here (CI time); the report's commit with the
    # data is the same code for every output (tests/evaluation/test_evaluate.py,
    # test_data_safety.py).
    blocks = ["--set", f"partitioning.max_block_rows={BLOCK_ROWS}", "--set", "report.enabled=false"]
    job = [
        str(ROOT / "jobs" / "anonymize.py"),
        "conf/adult_hpk.yaml",
        "--partition",
        "ds=2026-11-23",
        "--set",
        "input={table: default.people}",
        "--set",
        "output={table: default.people_anon, mode: overwrite}",
        *blocks,
    ]
    done = _run(submit_command(cluster, [str(script), str(sample), *job]), env)
    # Without --quiet the log lines go to stderr: stdout is the metrics JSON alone.
    metrics = json.loads(done.stdout)
    assert metrics["verified"] is True and metrics["rows_out"] == SAMPLE_ROWS
    assert "stage=cluster" in done.stderr
    folder = warehouse / "spark-warehouse" / "people_anon" / "ds=2026-11-23"
    (version,) = [p for p in folder.iterdir() if p.name.startswith("v-")]
    on_cluster = published_table(version)

    local = tmp_path / "local_out"
    alone = [sys.executable, "-m", "sparkanon.cli", "run", "conf/adult_hpk.yaml", *blocks]
    alone += ["--engine", "local"]
    _run([*alone, "--set", f"input.path={sample}", "--set", f"output.path={local}"], env)
    in_local_mode = published_table(local)
    assert list(on_cluster.columns) == list(in_local_mode.columns)
    pd.testing.assert_frame_equal(on_cluster, in_local_mode)
    _run([sys.executable, "-m", "sparkanon.tools.verify_release", str(local)], env)
