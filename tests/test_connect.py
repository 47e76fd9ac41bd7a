"""The job through a Spark Connect server (``sparkanon run --remote sc://...``).

``scripts/connect_server.sh`` starts the server that pyspark ships (local mode); the job
runs in a client process that has no JVM, ships the package to the server as an
artifact, and must publish what the local engine publishes. Slow (a server start).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests._adult import ROOT, adult_config, adult_sample, write_config

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = ROOT / "scripts" / "connect_server.sh"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> str:
    pytest.importorskip("grpc", reason="the Spark Connect client: pip install -e '.[connect]'")
    env = os.environ | {
        "SPARKANON_CONNECT_DIR": str(tmp_path / "connect"),
        "SPARKANON_CONNECT_PORT": str(_free_port()),
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


def _table(out: Path) -> pd.DataFrame:
    frame = pd.concat(pd.read_parquet(p) for p in sorted((out / "data").glob("*.parquet")))
    cols = sorted(frame.columns)
    return frame[cols].sort_values(cols).reset_index(drop=True)


def test_job_through_spark_connect_equals_the_local_engine(server: str, tmp_path: Path) -> None:
    sample = adult_sample(tmp_path, 3000)
    raw = adult_config(tmp_path, sample, tmp_path / "remote", partitioning={"max_block_rows": 500})
    config = write_config(tmp_path, raw)
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    remote = subprocess.run(
        [sys.executable, "-m", "sparkanon.cli", "run", str(config), "--remote", server],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert remote.returncode == 0, remote.stderr[-4000:]
    assert '"verified": true' in remote.stdout
    local = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparkanon.cli",
            "run",
            str(config),
            "--engine",
            "local",
            "--set",
            f"output.path={tmp_path / 'local'}",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert local.returncode == 0, local.stderr[-4000:]
    pd.testing.assert_frame_equal(_table(tmp_path / "remote"), _table(tmp_path / "local"))
