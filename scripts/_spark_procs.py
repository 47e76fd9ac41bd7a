"""Helpers of the scripts and slow tests that start Spark processes of their own.

A free port, the pyspark installation's ``spark-submit``, a ``spark-submit`` command line
that ships sparkanon to a cluster (``--py-files`` with the package zipped, the workers on
this interpreter), the local cluster and Connect server scripts as context managers, and
a published one-table output read back sorted, for comparing two runs row for row.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
"""The source tree."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spark_submit() -> str:
    """The ``spark-submit`` of the pyspark this interpreter imports."""
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-submit")


def submit_command(master: str, args: Sequence[str]) -> list[str]:
    """``spark-submit`` to ``master`` with sparkanon zipped in ``--py-files`` and ``args``.

    The package is zipped by :func:`sparkanon.engine.session.package_zip`; the executors'
    Python workers run this interpreter (``spark.pyspark.python``).
    """
    from sparkanon.engine.session import package_zip

    return [
        spark_submit(),
        "--master",
        master,
        "--py-files",
        package_zip(),
        "--conf",
        f"spark.pyspark.python={sys.executable}",
        "--conf",
        "spark.executor.memory=1g",
        *args,
    ]


def python_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with the driver and workers on this interpreter."""
    return os.environ | {
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        **(extra or {}),
    }


@contextmanager
def started(script: str, env: Mapping[str, str]) -> Iterator[str]:
    """Run ``scripts/<script> start``, yield the URL it prints, ``stop`` at the end."""
    path = ROOT / "scripts" / script
    done = subprocess.run(
        ["bash", str(path), "start"], env=dict(env), capture_output=True, text=True, check=False
    )
    try:
        if done.returncode != 0:
            raise RuntimeError(f"{script} start failed:\n{done.stdout}\n{done.stderr}")
        yield done.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run(["bash", str(path), "stop"], env=dict(env), capture_output=True, check=False)


def cluster_env(folder: Path) -> dict[str, str]:
    """The environment of ``scripts/local_cluster.sh`` with its state in ``folder``."""
    return os.environ | {
        "SPARKANON_CLUSTER_DIR": str(folder),
        "SPARKANON_MASTER_PORT": str(free_port()),
        "SPARKANON_WORKER_MEMORY": "1500m",
        "PYTHON": sys.executable,
    }


def published_table(folder: Path) -> pd.DataFrame:
    """The Parquet files of ``folder/data``, columns and rows sorted (for equality)."""
    frame = pd.concat(pd.read_parquet(p) for p in sorted((folder / "data").glob("*.parquet")))
    cols = sorted(frame.columns)
    return frame[cols].sort_values(cols).reset_index(drop=True)
