"""The generated admissions table (data/patients): every family's config, and ``sparkanon init``.

Each ``conf/patients_*.yaml`` runs as shipped on the local engine (report off, as every
in-process run of the suite); the published columns have the type of their kind. ``sparkanon
init`` on the table and on Adult writes configs that run as they are. One Spark test runs a
config from a catalog table and compares it with the local engine's release;
``scripts/check_warehouse.py`` runs the whole matrix (every config, Parquet and catalog
table, both engines).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkanon.cli import main
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import EXIT_USER
from sparkanon.families import load_config
from sparkanon.pipeline import run_job
from sparkanon.randomness import RunKey
from tests._inputs import ROOT

PATIENTS = ROOT / "data" / "patients" / "patients.parquet"
CONFIGS = ("safe_harbor", "mdav", "perturb", "condense", "anatomy")

PUBLISHED_TYPES: dict[str, dict[str, str]] = {
    # output.publish: generalized -> every quasi-identifier is text
    "safe_harbor": {
        "birth_date": "string",
        "admitted_at": "string",
        "zip": "string",
        "age": "string",
        "sex": "string",
        "charge": "decimal128(10, 2)",
    },
    # centroids: a date, an instant, doubles, text; kept columns in their input types
    "mdav": {
        "birth_date": "date32[day]",
        "admitted_at": "timestamp[us, tz=UTC]",
        "age": "double",
        "charge": "double",
        "smoker": "string",
        "zip": "string",
        "visits": "int16",
        "extra_004": "bool",
        "extra_005": "int64",
    },
    "perturb": {
        "birth_date": "date32[day]",
        "admitted_at": "timestamp[us, tz=UTC]",
        "charge": "double",
        "smoker": "string",
        "extra_001": "double",
    },
    "condense": {
        "birth_date": "date32[day]",
        "admitted_at": "timestamp[us, tz=UTC]",
        "charge": "double",
        "visits": "double",
    },
}


SAME_KEY = RunKey(bytes(range(32)), "user", "tests")
"""One key for the runs a test compares: keyed draws (noise, order) are then the same."""


def _run(config: Path, out: Path, *extra: str) -> dict[str, Any]:
    overrides = [f"output.path={out}", "output.mode=error", *extra]
    result = run_job(LocalEngine(), load_config(config, overrides), key=SAME_KEY)
    return result.metrics


@pytest.mark.parametrize("name", CONFIGS)
def test_every_family_runs_its_shipped_config(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    metrics = _run(ROOT / "conf" / f"patients_{name}.yaml", out)
    assert metrics["verified"] is True
    assert metrics["rows_in"] == 2000
    assert metrics["rows_out"] + metrics["rows_suppressed"] == 2000
    unlisted = metrics["unlisted_columns"]
    assert unlisted["count"] == len(unlisted["names"]) > 150
    table = pq.read_table(out / ("rt" if name == "anatomy" else "data"))
    if unlisted["policy"] == "keep":
        assert {f"extra_{i:03d}" for i in range(1, 151)} <= set(table.column_names)
    else:
        assert not any(c.startswith("extra_") for c in table.column_names)
    for column in ("full_name", "email", "phone", "ssn", "notes"):
        assert column not in table.column_names
    types = {f.name: str(f.type) for f in table.schema}
    for column, expected in PUBLISHED_TYPES.get(name, {}).items():
        assert types[column] == expected, (column, types[column])


def test_safe_harbor_publishes_years_zip3_and_top_coded_ages(tmp_path: Path) -> None:
    out = tmp_path / "sh"
    metrics = _run(ROOT / "conf" / "patients_safe_harbor.yaml", out)
    frame = pq.read_table(out / "data").to_pandas()
    # Dates never finer than the year, ZIP codes never finer than three digits, and no
    # age of 90 or more published as itself.
    assert frame["birth_date"].str.fullmatch(r"\d{4}|\d{3}0s|\*").all()
    assert frame["admitted_at"].str.fullmatch(r"\d{4}|\d{3}0s|\*").all()
    assert frame["zip"].str.fullmatch(r"\d{3}\*\*|\*{5}").all()
    ages = frame["age"][frame["age"].str.fullmatch(r"\d+")].astype(int)
    assert (ages < 90).all()
    built = (out / "hierarchies" / "zip.csv").read_text().splitlines()
    assert built and all(line.split(";")[1].endswith("**") for line in built)
    assert metrics["family"] == "full_domain"


def _init(capsys: pytest.CaptureFixture[str], *args: str) -> int:
    code = main(["init", *args, "--engine", "local", "--quiet"])
    capsys.readouterr()
    return code


def test_init_on_the_admissions_and_adult_writes_configs_that_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for source, rows in ((PATIENTS, 2000), (ROOT / "data" / "adult" / "adult.csv", 45222)):
        config = tmp_path / f"{source.stem}.yaml"
        out = tmp_path / f"{source.stem}_out"
        assert _init(capsys, str(source), "--out", str(config), "--output-path", str(out)) == 0
        text = config.read_text()
        metrics = run_job(LocalEngine(), load_config(config)).metrics
        assert metrics["verified"] is True and metrics["rows_in"] == rows
        assert metrics["rows_out"] + metrics["rows_suppressed"] == rows
        assert "# Feasibility on this data:" in text
    patients = (tmp_path / "patients.yaml").read_text()
    for flagged in ("record_id", "full_name", "email", "phone", "ssn"):
        assert f"{{name: {flagged}, kind: identifier}}" in patients
    assert "{name: birth_date, kind: date}" in patients
    assert "{name: admitted_at, kind: timestamp}" in patients
    assert "name: diagnosis" in patients
    adult = (tmp_path / "adult.yaml").read_text()
    assert "name: income" in adult and "{name: age, kind: continuous}" in adult


def test_init_refuses_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["init", str(tmp_path / "nowhere.parquet"), "--engine", "local", "--quiet"])
    assert code == EXIT_USER
    assert "no such file or folder" in capsys.readouterr().err
    code = main(["init", str(PATIENTS), "--engine", "local", "--sensitive", "salary", "--quiet"])
    assert code == EXIT_USER
    assert "'salary' is not in the input" in capsys.readouterr().err


@pytest.mark.spark
def test_a_catalog_table_publishes_what_the_local_engine_publishes(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spark.sql("DROP DATABASE IF EXISTS patients_db CASCADE")
    spark.sql("CREATE DATABASE patients_db")
    spark.read.parquet(str(PATIENTS)).write.format("parquet").saveAsTable("patients_db.admissions")
    config = ROOT / "conf" / "patients_perturb.yaml"  # the cheapest family keeping 153 columns
    local = _run(config, tmp_path / "local")
    from sparkanon.engine.spark import SparkEngine

    overrides = [
        f"output.path={tmp_path / 'spark'}",
        "input.path=null",
        "input.table=patients_db.admissions",
    ]
    remote = run_job(SparkEngine(spark), load_config(config, overrides), key=SAME_KEY).metrics
    assert remote["verified"] and remote["rows_out"] == local["rows_out"] == 2000
    assert remote["unlisted_columns"] == local["unlisted_columns"]

    def table(where: Path) -> pa.Table:
        t = pq.read_table(where / "data")
        return t.sort_by([(c, "ascending") for c in t.column_names])

    a, b = table(tmp_path / "local"), table(tmp_path / "spark")
    assert a.schema.equals(b.schema, check_metadata=False)

    assert a.equals(b)
    assert json.loads((tmp_path / "spark" / "metrics.json").read_text())["verified"] is True
