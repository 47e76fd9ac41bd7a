"""Shared fixtures: one session-scoped SparkSession and paths to the bundled data."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ADULT_CSV = ROOT / "data" / "adult" / "adult.csv"
HIERARCHIES = ROOT / "data" / "adult" / "hierarchies"
ADULT_CONF = ROOT / "conf" / "adult_hpk.yaml"


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One local SparkSession for the whole run: UI off, few shuffle partitions.

    With Hive support (the catalog-table tests), its embedded Derby metastore and
    warehouse in a temporary folder of the run, as sparkanon sets them up in local mode.
    """
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    from pyspark.sql import SparkSession

    from sparkanon.engine.session import local_warehouse_conf

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("sparkanon-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.showConsoleProgress", "false")
        .enableHiveSupport()
    )
    for key, value in local_warehouse_conf(str(tmp_path_factory.mktemp("warehouse"))).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
