"""The Adult job on a real Spark standalone cluster (a master and two one-core workers).

``scripts/local_cluster.sh`` starts the cluster from the pyspark installation; the job is
submitted with ``spark-submit --master spark://127.0.0.1:PORT`` and the package shipped
as a zip in ``--py-files``, as PySpark documents. The published table must equal the
local-mode table row for row (after sorting) and verify; and the job run twice on the
cluster into one partition of a Hive table (embedded Derby metastore) must publish the
same rows both times. Slow (about four minutes).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests._adult import ROOT

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = ROOT / "scripts" / "local_cluster.sh"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spark_submit() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-submit")


def package_zip(folder: Path) -> Path:
    """``sparkanon/`` as a zip for ``--py-files`` (the package directory at its root)."""
    archive = shutil.make_archive(str(folder / "sparkanon"), "zip", ROOT, "sparkanon")
    return Path(archive)


def _table(out: Path) -> pd.DataFrame:
    frame = pd.concat(pd.read_parquet(p) for p in sorted((out / "data").glob("*.parquet")))
    cols = sorted(frame.columns)
    return frame[cols].sort_values(cols).reset_index(drop=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One cluster for the module's tests (a start costs about ten seconds)."""
    tmp_path = tmp_path_factory.mktemp("cluster")
    env = os.environ | {
        "SPARKANON_CLUSTER_DIR": str(tmp_path / "cluster"),
        "SPARKANON_MASTER_PORT": str(_free_port()),
        "SPARKANON_WORKER_MEMORY": "1500m",
        "PYTHON": sys.executable,
    }
    started = subprocess.run(
        ["bash", str(SCRIPT), "start"], env=env, capture_output=True, text=True, check=False
    )
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop"], env=env, capture_output=True, check=False)


def _submit(master: str, args: list[str], tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            _spark_submit(),
            "--master",
            master,
            "--py-files",
            str(package_zip(tmp_path)),
            "--conf",
            f"spark.pyspark.python={sys.executable}",
            "--conf",
            "spark.executor.memory=1g",
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


_MAKE_INPUT = """
import sys
from pyspark.sql import functions as F
from sparkanon.engine.session import get_or_create_session
spark = get_or_create_session(hive=True)
people = spark.read.option("header", "true").csv(sys.argv[1]).withColumn("ds", F.lit("2026-11-23"))
people.write.partitionBy("ds").format("parquet").saveAsTable("default.people")
"""


def test_adult_job_twice_into_a_partitioned_hive_table_on_the_cluster(cluster: str, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    env = os.environ | {
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARKANON_WAREHOUSE": str(warehouse),
    }
    script = tmp_path / "make_input.py"
    script.write_text(_MAKE_INPUT, encoding="utf-8")
    made = _submit(cluster, [str(script), str(ROOT / "data" / "adult" / "adult.csv")], tmp_path, env)
    assert made.returncode == 0, made.stderr[-4000:]
    job = [
        str(ROOT / "jobs" / "anonymize.py"),
        "conf/adult_hpk.yaml",
        "--partition",
        "ds=2026-11-23",
        "--set",
        "input={table: default.people}",
        "--set",
        "output={table: default.people_anon, mode: overwrite}",
    ]
    published = []
    for _ in range(2):
        done = _submit(cluster, job, tmp_path, env)
        assert done.returncode == 0, done.stderr[-4000:]
        assert '"verified": true' in done.stdout
        folder = warehouse / "spark-warehouse" / "people_anon" / "ds=2026-11-23"
        (version,) = [p for p in folder.iterdir() if p.name.startswith("v-")]
        published.append(_table(version))
    assert len(published[0]) == 45222
    pd.testing.assert_frame_equal(published[0], published[1])


def test_adult_job_on_the_standalone_cluster_equals_local_mode(cluster: str, tmp_path: Path) -> None:
    assert cluster.startswith("spark://127.0.0.1:")
    env = os.environ | {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    on_cluster = tmp_path / "cluster_out"
    submitted = subprocess.run(
        [
            _spark_submit(),
            "--master",
            cluster,
            "--py-files",
            str(package_zip(tmp_path)),
            "--conf",
            f"spark.pyspark.python={sys.executable}",
            "--conf",
            "spark.executor.memory=1g",
            str(ROOT / "jobs" / "anonymize.py"),
            "conf/adult_hpk.yaml",
            "--set",
            f"output.path={on_cluster}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert submitted.returncode == 0, submitted.stderr[-4000:]
    assert '"verified": true' in submitted.stdout
    local = tmp_path / "local_out"
    alone = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparkanon.cli",
            "run",
            "conf/adult_hpk.yaml",
            "--set",
            f"output.path={local}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert alone.returncode == 0, alone.stderr[-4000:]
    pd.testing.assert_frame_equal(_table(on_cluster), _table(local))
    verify = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "verify_output.py"), str(on_cluster)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout
