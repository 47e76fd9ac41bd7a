"""Logs: one structured line per stage, labelled Spark jobs, and no data values at any level.

The Adult job runs on Spark with sparkanon's logger at DEBUG and Spark's own log output
captured at the file-descriptor level; no quasi-identifier or sensitive value of the
input may appear anywhere in it.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sparkanon.cli import configure_logging, log, run_command
from sparkanon.errors import EXIT_OK
from tests._adult import adult_config, adult_sample, write_config

pytestmark = pytest.mark.spark


def _data_values(sample: Path, columns: list[str]) -> set[str]:
    """The distinct textual values of the columns (numbers left out: they collide with timings)."""
    frame = pd.read_csv(sample, dtype=str, keep_default_na=False)
    values = set()
    for column in columns:
        for value in frame[column].str.strip().unique():
            if re.search(r"[A-Za-z]", value) and len(value) >= 3:
                values.add(value)
    return values


def test_debug_logs_hold_no_data_values(
    spark: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    sample = adult_sample(tmp_path, 2000)
    raw = adult_config(tmp_path, sample, tmp_path / "out", partitioning={"max_block_rows": 400})
    columns = [a["name"] for a in raw["attributes"] if a["kind"] != "identifier"]
    columns.append(raw["sensitive"]["name"])
    values = _data_values(sample, columns)
    assert len(values) > 40  # workclass, education, occupation... really are in the sample
    configure_logging(quiet=False, level="DEBUG")
    try:
        assert run_command(str(write_config(tmp_path, raw)), [], "spark") == EXIT_OK
    finally:
        configure_logging(quiet=False)
    captured = capfd.readouterr()
    logs = captured.err
    leaked = sorted(v for v in values if v in logs)
    assert not leaked, f"data values in the logs: {leaked[:10]}"
    # One structured line per stage, with its seconds and counts.
    stages = re.findall(r"stage=(\w+) seconds=[0-9.]+", logs)
    assert stages[:4] == ["read", "profile", "encode", "plan_blocks"]
    assert {"cluster", "verify", "commit"} <= set(stages)
    assert re.search(r"stage=profile seconds=[0-9.]+ rows=2000 usable=\d+", logs)
    assert re.search(r"stage=verify seconds=[0-9.]+ rows=\d+ groups=\d+ violations=0", logs)


def test_spark_jobs_are_described_by_their_step(spark: Any) -> None:
    from sparkanon.engine.spark import SparkEngine
    from sparkanon.stages._common import StageTimer

    seen: list[str] = []
    engine = SparkEngine(spark)
    timer = StageTimer(engine)
    with timer.stage("cluster"):
        seen.append(spark.sparkContext.getLocalProperty("spark.job.description"))
        spark.range(10).count()
    assert seen == ["sparkanon: cluster blocks"]
    assert engine.jobs_launched()["cluster"] >= 1


def test_progress_lines_while_a_stage_runs(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import time

    from sparkanon.engine.local import LocalEngine
    from sparkanon.stages._common import StageTimer

    monkeypatch.setenv("SPARKANON_PROGRESS_SECONDS", "0.05")
    timer = StageTimer(LocalEngine())
    log.propagate = True
    try:
        with caplog.at_level(logging.INFO, logger="sparkanon"), timer.stage("cluster"):
            timer.note(blocks=3)
            time.sleep(0.3)
    finally:
        log.propagate = False
    lines = [r.getMessage() for r in caplog.records]
    assert any(re.match(r"stage=cluster running seconds=\d+", line) for line in lines)
    assert lines[-1].startswith("stage=cluster seconds=") and lines[-1].endswith("blocks=3")
