"""The commands module: the one failure handler, engine builder and release loader.

The commands themselves are tested through the command line (``tests/test_cli.py``,
``tests/engine/test_tables.py``, ``tests/evaluation/test_evaluate.py``...); here is what they share,
and :func:`sparkanon.anonymize`, which calls the same run as ``sparkanon run``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import sparkanon
from sparkanon import commands
from sparkanon.cli import main, metrics_table
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_PRIVACY,
    EXIT_USER,
    InputError,
    PrivacyViolationError,
    UserError,
)
from sparkanon.families import FAMILIES, parse_config
from sparkanon.report.glossary import METRICS
from tests._inputs import adult_rows, make_config, write_config, write_rows


@pytest.mark.parametrize(
    ("error", "code", "printed"),
    [
        (InputError("column 'age' missing"), EXIT_USER, "sparkanon: error: column 'age' missing"),
        (PrivacyViolationError("2 classes"), EXIT_PRIVACY, "sparkanon: error: 2 classes"),
        (ValueError("a bug"), EXIT_INTERNAL, "internal error (please report): ValueError"),
    ],
)
def test_report_failure_prints_the_error_and_returns_its_exit_code(
    error: Exception, code: int, printed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert commands.report_failure(error) == code
    captured = capsys.readouterr()
    assert printed in captured.err
    assert captured.out == ""


def test_build_engine_local_needs_no_spark() -> None:
    assert isinstance(commands.build_engine("local"), LocalEngine)


def _job(tmp_path: Path) -> Path:
    data = write_rows(tmp_path, adult_rows(300))
    return write_config(tmp_path, make_config(tmp_path, data))


def test_anonymize_publishes_what_run_commits(tmp_path: Path) -> None:
    config = _job(tmp_path)
    frame = pd.read_csv(tmp_path / "input.csv", dtype=str, keep_default_na=False)
    published, metrics = sparkanon.anonymize(frame, str(config))
    assert not (tmp_path / "out").exists()  # write=False commits nothing
    _, result = commands.run(str(config), [], engine_name="local")
    committed = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))
    assert len(published) == metrics["rows_out"] == committed["rows_out"] > 0
    assert metrics["rows_in"] == result.metrics["rows_in"] == 300


def test_load_release_reads_a_committed_output_and_refuses_others(tmp_path: Path) -> None:
    config = _job(tmp_path)
    commands.run(str(config), [], engine_name="local")
    release = commands.load_release(str(tmp_path / "out"))
    assert release.table == "data" and release.data == f"{tmp_path / 'out'}/data"
    assert release.metrics["rows_out"] > 0 and release.noise == {}
    written = tmp_path / "out" / "config.yaml"
    assert release.config == parse_config(yaml.safe_load(written.read_text()), str(written))
    with pytest.raises(UserError, match="no noise.json, so not a perturbed release"):
        commands.load_release(str(tmp_path / "out"), perturbed=True)
    bare = tmp_path / "bare"
    shutil.copytree(tmp_path / "out" / "data", bare / "data")
    with pytest.raises(UserError, match="no metrics.json, so not a committed sparkanon output"):
        commands.load_release(str(bare))
    with pytest.raises(UserError, match="no such directory"):
        commands.load_release(str(tmp_path / "nowhere"))


def test_a_family_metric_note_replaces_the_metrics_line() -> None:
    own = {f.name: f.metric_notes for f in FAMILIES if f.metric_notes}
    assert own, "no family declares its own meaning of a metric"
    for name, glossary in own.items():
        for key, meaning in glossary.items():
            text = metrics_table({key: 1.0, "family": name})
            assert meaning in text
            assert key not in METRICS or METRICS[key] not in text
    assert METRICS["NCP"] in metrics_table({"NCP": 1.0, "family": "blocks"})


@pytest.mark.spark
def test_init_reads_a_catalog_table_as_a_run_reads_it(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spark.sql("DROP DATABASE IF EXISTS commands_db CASCADE")
    spark.sql("CREATE DATABASE commands_db")
    frame = pd.read_csv(write_rows(tmp_path, adult_rows(200)), dtype=str, keep_default_na=False)
    spark.createDataFrame(frame).write.format("parquet").saveAsTable("commands_db.people")
    assert main(["init", "commands_db.people", "--quiet"]) == EXIT_OK
    written = yaml.safe_load(capsys.readouterr().out)
    assert written["input"]["table"] == "commands_db.people"
    assert main(["init", "commands_db.nobody", "--quiet"]) == EXIT_USER
    assert "TABLE_OR_PATH: table 'commands_db.nobody' does not exist" in capsys.readouterr().err
