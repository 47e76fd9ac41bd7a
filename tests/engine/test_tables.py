"""Catalog tables: Adult samples in a partitioned Hive table (embedded Derby), in and out.

The session fixture has Hive support with a metastore and warehouse of its own. Each
test builds its tables in a database of its own, so the tests do not see each other's.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sparkanon.cli import backfill_command, run_command, validate_command
from sparkanon.errors import EXIT_OK, EXIT_PRIVACY, EXIT_USER
from tests._adult import adult_config, adult_sample, write_config
from tests._inputs import dead_pid

pytestmark = pytest.mark.spark

DAYS = ("2026-11-21", "2026-11-22", "2026-11-23")


def _database(spark: Any, name: str) -> str:
    spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")
    spark.sql(f"CREATE DATABASE {name}")
    return name


def _partitioned_input(spark: Any, tmp_path: Path, db: str, rows: int = 600) -> str:
    """``db.people``: three daily partitions of ``rows`` Adult rows each (different rows)."""
    sample = adult_sample(tmp_path, rows * len(DAYS))
    frame = pd.read_csv(sample, dtype=str, keep_default_na=False)
    parts = [frame.iloc[i * rows : (i + 1) * rows].assign(ds=day) for i, day in enumerate(DAYS)]
    spark.createDataFrame(pd.concat(parts, ignore_index=True)).write.partitionBy("ds").format(
        "parquet"
    ).saveAsTable(f"{db}.people")
    return f"{db}.people"


def _config(tmp_path: Path, source: str, target: str, **changes: Any) -> Path:
    raw = adult_config(tmp_path, tmp_path / "unused.csv", tmp_path / "unused_out")
    raw["input"] = {"table": source}
    raw["output"] = {"table": target, "mode": "overwrite"}
    raw["model"] = {**raw["model"], "k": 4}
    raw["partitioning"] = {"max_block_rows": 300}
    for key, value in changes.items():
        section, _, sub = key.partition("__")
        raw[section] = {**raw[section], sub: value}
    return write_config(tmp_path, raw)


def _rows(spark: Any, table: str, day: str | None = None) -> pd.DataFrame:
    df = spark.table(table)
    if day is not None:
        df = df.where(df.ds == day).drop("ds")
    frame = df.toPandas()
    cols = sorted(frame.columns)
    return frame[cols].sort_values(cols).reset_index(drop=True)


def test_partition_runs_replace_one_partition_idempotently(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _database(spark, "t_part")
    source = _partitioned_input(spark, tmp_path, db)
    cfg = _config(tmp_path, source, f"{db}.people_anon")
    assert run_command(str(cfg), [], "spark", partition="ds=2026-11-23") == EXIT_OK
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["rows_in"] == 600 and metrics["verified"] is True
    first = _rows(spark, f"{db}.people_anon", "2026-11-23")
    assert len(first) == metrics["rows_out"]
    assert run_command(str(cfg), [], "spark", partition="ds=2026-11-22") == EXIT_OK
    assert run_command(str(cfg), [], "spark", partition="ds=2026-11-23") == EXIT_OK
    capsys.readouterr()
    # The rerun publishes the same rows; the other partition is untouched.
    pd.testing.assert_frame_equal(first, _rows(spark, f"{db}.people_anon", "2026-11-23"))
    days = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {db}.people_anon").collect())
    assert days == ["ds=2026-11-22", "ds=2026-11-23"]
    # One version directory per partition: the replaced one was deleted.
    info = spark.sql(f"DESCRIBE TABLE EXTENDED {db}.people_anon PARTITION (ds='2026-11-23')")
    location = next(r["data_type"] for r in info.collect() if r["col_name"] == "Location")
    folder = Path(location.removeprefix("file:")).parent.parent
    assert len([p for p in folder.iterdir() if p.name.startswith("v-")]) == 1
    assert (Path(location.removeprefix("file:")).parent / "metrics.json").exists()
    props = {
        r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {db}.people_anon").collect()
    }
    assert props["sparkanon.verified"] == "true"
    assert json.loads(props["sparkanon.model"])["name"] == "hpk"
    assert len(props["sparkanon.config_sha256"]) == 64
    assert props["sparkanon.last_partition"] == "ds=2026-11-23"


def test_failed_verification_leaves_the_partition_as_it_was(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sparkanon.families.base as family_base

    db = _database(spark, "t_fail")
    source = _partitioned_input(spark, tmp_path, db)
    cfg = _config(tmp_path, source, f"{db}.out")
    assert run_command(str(cfg), [], "spark", partition="ds=2026-11-21") == EXIT_OK
    before = _rows(spark, f"{db}.out", "2026-11-21")
    original = family_base.verify

    def failing(*args: Any, **kwargs: Any) -> dict[str, Any]:
        verdict = original(*args, **kwargs)
        return verdict | {"violations": 1}

    monkeypatch.setattr(family_base, "verify", failing)
    assert run_command(str(cfg), [], "spark", partition="ds=2026-11-21") == EXIT_PRIVACY
    pd.testing.assert_frame_equal(before, _rows(spark, f"{db}.out", "2026-11-21"))
    capsys.readouterr()
    # Nothing staged is left behind, and the lock was released.
    info = spark.sql(f"DESCRIBE TABLE EXTENDED {db}.out PARTITION (ds='2026-11-21')").collect()
    location = next(r["data_type"] for r in info if r["col_name"] == "Location")
    folder = Path(location.removeprefix("file:")).parent.parent
    assert len([p for p in folder.iterdir() if p.name.startswith("v-")]) == 1
    assert not [t for t in spark.catalog.listTables(db) if "lock" in t.name]


def test_unpartitioned_table_in_and_out(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _database(spark, "t_flat")
    frame = pd.read_csv(adult_sample(tmp_path, 800), dtype=str, keep_default_na=False)
    spark.createDataFrame(frame).write.format("parquet").saveAsTable(f"{db}.people")
    cfg = _config(tmp_path, f"{db}.people", f"{db}.people_anon")
    assert run_command(str(cfg), [], "spark") == EXIT_OK
    first = _rows(spark, f"{db}.people_anon")
    assert run_command(str(cfg), [], "spark") == EXIT_OK
    capsys.readouterr()
    pd.testing.assert_frame_equal(first, _rows(spark, f"{db}.people_anon"))
    location = spark.sql(f"DESCRIBE TABLE EXTENDED {db}.people_anon").collect()
    where = next(r["data_type"] for r in location if r["col_name"] == "Location")
    root = Path(where.removeprefix("file:")).parent.parent
    assert len([p for p in root.iterdir() if p.name.startswith("v-")]) == 1


def test_backfill_runs_every_partition_in_the_range(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _database(spark, "t_backfill")
    source = _partitioned_input(spark, tmp_path, db, rows=400)
    cfg = _config(tmp_path, source, f"{db}.out")
    code = backfill_command(str(cfg), [], "ds=2026-11-22", "ds=2026-11-30", "spark")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == EXIT_OK
    assert [line["partition"] for line in lines[:-1]] == ["ds=2026-11-22", "ds=2026-11-23"]
    assert lines[-1] == {"partitions": 2, "run": 2, "committed": 2, "failed": []}
    days = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {db}.out").collect())
    assert days == ["ds=2026-11-22", "ds=2026-11-23"]


@pytest.mark.parametrize(
    ("partition", "needle"),
    [
        ("ds=2026-12-01", "has no partition ds=2026-12-01"),
        ("day=2026-11-23", "'day'] is not a partition column"),
    ],
)
def test_bad_partitions(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], partition: str, needle: str
) -> None:
    db = _database(spark, "t_badpart")
    source = _partitioned_input(spark, tmp_path, db, rows=100)
    cfg = _config(tmp_path, source, f"{db}.out")
    assert run_command(str(cfg), [], "spark", partition=partition) == EXIT_USER
    assert needle in capsys.readouterr().err
    assert not spark.catalog.tableExists(f"{db}.out")


def test_missing_table_and_mismatched_output(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _database(spark, "t_bad")
    cfg = _config(tmp_path, f"{db}.nowhere", f"{db}.out")
    assert run_command(str(cfg), [], "spark") == EXIT_USER
    assert "table 't_bad.nowhere' does not exist" in capsys.readouterr().err
    # An existing output table with another schema: exit 2, left as it was.
    source = _partitioned_input(spark, tmp_path, db, rows=300)
    spark.sql(f"CREATE TABLE {db}.out (x STRING) USING parquet PARTITIONED BY (ds STRING)")
    cfg = _config(tmp_path, source, f"{db}.out")
    assert run_command(str(cfg), [], "spark", partition="ds=2026-11-21") == EXIT_USER
    assert "nothing was changed" in capsys.readouterr().err
    assert [c.name for c in spark.catalog.listColumns(f"{db}.out")] == ["x", "ds"]
    assert spark.sql(f"SHOW PARTITIONS {db}.out").count() == 0


def _partition_target(spark: Any, tmp_path: Path, name: str) -> tuple[str, Path, Any]:
    """A database, a partitioned job's config and its output target for ``ds=2026-11-21``."""
    from sparkanon.engine.spark import SparkEngine
    from sparkanon.families import load_config
    from sparkanon.stages.commit import TableTarget

    db = _database(spark, name)
    source = _partitioned_input(spark, tmp_path, db, rows=300)
    cfg = _config(tmp_path, source, f"{db}.out")
    config = load_config(cfg, ["input.partition={ds: '2026-11-21'}"])
    return db, cfg, TableTarget(SparkEngine(spark), config, f"{db}.out", [("ds", "string")])


def test_a_held_lock_refuses_a_second_run(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, cfg, first = _partition_target(spark, tmp_path, "t_lock")
    first.acquire()  # a run in progress on that partition (this live process owns it)
    try:
        assert run_command(str(cfg), [], "spark", partition="ds=2026-11-21") == EXIT_USER
        err = capsys.readouterr().err
        assert "is being written by another sparkanon run" in err
        assert f"pid {os.getpid()}" in err and f"run {first._owner['run']}" in err
        assert not spark.catalog.tableExists(f"{db}.out")
        # Another partition is not locked.
        assert run_command(str(cfg), [], "spark", partition="ds=2026-11-22") == EXIT_OK
    finally:
        first.release()
    assert run_command(str(cfg), [], "spark", partition="ds=2026-11-21") == EXIT_OK


class _Lines(logging.Handler):
    """The messages of sparkanon's log records, kept for a test to read."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102
        self.lines.append(record.getMessage())


def test_a_killed_runs_lock_is_taken_over_and_its_staged_version_removed(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed with SIGKILL left its lock (a dead pid of this host) and a staged version.

    Its last heartbeat (here: its start, it never beat) is older than the expiry: a younger
    one would mean alive whatever the pid says.
    """
    import time

    from sparkanon.stages.table_lock import new_owner

    db, cfg, target = _partition_target(spark, tmp_path, "t_takeover")
    killed = new_owner(target.name, "ds=2026-11-21") | {
        "pid": dead_pid(),
        "started": time.time() - 3600,
    }
    assert target.catalog.create_lock(target.lock_name(), killed)
    staged = Path(target.staging().removeprefix("file:"))
    (staged / "data").mkdir(parents=True)
    (staged / "data" / "part-0.parquet").write_bytes(b"half written")
    lines = _Lines()
    logging.getLogger("sparkanon").addHandler(lines)
    try:
        assert run_command(str(cfg), [], "spark", partition="ds=2026-11-21") == EXIT_OK
    finally:
        logging.getLogger("sparkanon").removeHandler(lines)
    capsys.readouterr()
    takeover = [line for line in lines.lines if "taken over" in line]
    assert len(takeover) == 1
    assert f"run {killed['run']}" in takeover[0] and "is not running" in takeover[0]
    assert any("removed 1 version directory" in line for line in lines.lines)
    assert not staged.exists()
    assert len([p for p in staged.parent.iterdir() if p.name.startswith("v-")]) == 1
    assert len(_rows(spark, f"{db}.out", "2026-11-21")) > 0
    # The lock and the takeover fence were dropped at the end.
    assert not [t for t in spark.catalog.listTables(db) if "lock" in t.name]


def test_validate(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _database(spark, "t_validate")
    source = _partitioned_input(spark, tmp_path, db, rows=100)
    cfg = _config(tmp_path, source, f"{db}.out")
    assert validate_command(str(cfg), [], "spark", partition="ds=2026-11-21") == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is True and "age" in report["input_columns"]
    assert validate_command(str(cfg), ["attributes.1.name=agee"], "spark") == EXIT_USER
    assert "agee" in capsys.readouterr().err
    assert validate_command(str(cfg), [], "spark", partition="ds=1999-01-01") == EXIT_USER
