"""The job through a Spark Connect server (``sparkanon run --remote sc://...``).

``scripts/connect_server.sh`` starts the server that pyspark ships (local mode); the job
runs in a client process that has no JVM, ships the package to the server as an
artifact, and must publish what the local engine publishes. Slow (a server start).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from scripts._spark_procs import free_port, published_table, started
from tests._adult import ROOT, adult_config, adult_sample, write_config

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    pytest.importorskip("grpc", reason="the Spark Connect client: pip install -e '.[connect]'")
    env = os.environ | {
        "SPARKANON_CONNECT_DIR": str(tmp_path / "connect"),
        "SPARKANON_CONNECT_PORT": str(free_port()),
        "PYTHON": sys.executable,
    }
    with started("connect_server.sh", env) as url:
        yield url


def test_job_through_spark_connect_equals_the_local_engine(server: str, tmp_path: Path) -> None:
    sample = adult_sample(tmp_path, 3000)
    raw = adult_config(tmp_path, sample, tmp_path / "remote", partitioning={"max_block_rows": 500})
    config = str(write_config(tmp_path, raw))
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    cli = [sys.executable, "-m", "sparkanon.cli", "run", config]
    local_out = f"output.path={tmp_path / 'local'}"
    for args in (["--remote", server], ["--engine", "local", "--set", local_out]):
        done = subprocess.run([*cli, *args], env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-4000:]
        assert '"verified": true' in done.stdout
    pd.testing.assert_frame_equal(
        published_table(tmp_path / "remote"), published_table(tmp_path / "local")
    )
