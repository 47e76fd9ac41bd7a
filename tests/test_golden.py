"""Golden suite: every bundled config's release and headline metrics, pinned per case.

Table-driven (as ARX's AbstractAnonymizationTest pins loss and node per case): each case
of ``tests/golden/configs.json`` runs a config of ``conf/`` through ``sparkanon run`` on
the local engine, on the input and with the overrides the case states, and must publish
tables of the pinned digests and write the pinned headline metrics. The file is written by
``scripts/update_golden.py`` only: a deliberate change to a release is that rerun plus a
reviewed diff, with the reason in the commit. One Spark test checks that a case of each
job family (per-block, full-domain, relational-transaction, perturbation) publishes the same tables on
Spark.
"""

from __future__ import annotations

import datetime as dt
import importlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from scripts.golden import (
    GOLDEN_FILE,
    ROOT,
    VALUE_TOLERANCE,
    headline,
    load_golden,
    mismatches,
    run_case,
    table_mismatches,
    table_pin,
)

GOLDEN = load_golden()["cases"]
SPEC_KEYS = ("id", "config", "input", "overrides", "why", "by_value")


def family(config: str) -> str:
    """The family that runs a bundled config (the runner's registry decides)."""
    from sparkanon.families import family_of, load_config

    return family_of(load_config(ROOT / config)).name


def update_script() -> Any:
    return importlib.import_module("scripts.update_golden")


def test_every_bundled_config_has_a_case() -> None:
    configs = {f"conf/{p.name}" for p in (ROOT / "conf").glob("*.yaml")}
    assert configs == {case["config"] for case in GOLDEN}


def test_golden_file_holds_the_update_scripts_cases() -> None:
    """The file's case specs are the script's: nobody edited one without the other."""
    cases = update_script().CASES
    assert [case["id"] for case in GOLDEN] == [case["id"] for case in cases]
    for pinned, case in zip(GOLDEN, cases, strict=True):
        assert {k: pinned.get(k) for k in SPEC_KEYS} == {k: case.get(k) for k in SPEC_KEYS}
        assert pinned.get("spark", False) == case.get("spark", False)
        assert pinned["tables"] and pinned["metrics"]["verified"] is True


def test_mismatches_sees_a_moved_value() -> None:
    """The comparison fails on what the suite must catch (and not on float noise)."""
    pinned = {"R_IL": 0.25, "node": {"age": 2}, "verified": True, "rows_out": 3}
    assert mismatches(pinned, dict(pinned, R_IL=0.25 * (1 + 1e-12))) == []
    assert mismatches(pinned, dict(pinned, R_IL=0.2501)) != []
    assert mismatches(pinned, dict(pinned, node={"age": 3})) == ["node.age: pinned 2, got 3"]
    assert mismatches(pinned, dict(pinned, verified=1)) != []
    assert mismatches(pinned, {k: v for k, v in pinned.items() if k != "rows_out"}) != []


FLOAT_DERIVED_FAMILIES = ("perturbation", "synthesis")
"""Families whose published values come out of float draws and linear algebra."""


def test_float_derived_releases_are_pinned_by_value_the_others_by_digest() -> None:
    for case in GOLDEN:
        by_value = family(case["config"]) in FLOAT_DERIVED_FAMILIES
        for name, pin in case["tables"].items():
            assert ("sha256" not in pin) == by_value, (case["id"], name)
            assert (name in case.get("by_value", ())) == by_value, (case["id"], name)


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 60
    return pd.DataFrame(
        {
            "group": np.repeat(np.arange(6), 10),
            "x": rng.normal(50.0, 10.0, n),
            "y": rng.normal(0.0, 1e4, n),
            "at": pd.Timestamp("2023-06-01", tz="UTC")
            + pd.to_timedelta(rng.uniform(0, 1e7, n).round(6), unit="s"),
            "born": [
                dt.date(1950, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 2e4, n)
            ],
            "sex": rng.choice(["F", "M", None], n),
        }
    )


def test_by_value_pin_passes_float_error_and_row_order(tmp_path: Path) -> None:
    frame = _table()
    pin = table_pin("case", "data", frame, by_value=True, folder=tmp_path)
    assert pin["numeric"] == {"x": "float", "y": "float", "at": "timestamp_us", "born": "date_days"}
    drifted = frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    drifted["x"] *= 1 + 1e-12
    drifted["y"] += 1e-9
    drifted["at"] += pd.Timedelta(microseconds=1)
    assert table_mismatches({"data": pin}, {"data": drifted}) == []


def test_by_value_pin_sees_a_moved_value_row_or_label(tmp_path: Path) -> None:
    frame = _table()
    pins = {"data": table_pin("case", "data", frame, by_value=True, folder=tmp_path)}
    moved = frame.copy()
    moved.loc[7, "x"] += 10 * VALUE_TOLERANCE * (frame["x"].max() - frame["x"].min())
    found = table_mismatches(pins, {"data": moved})
    assert len(found) == 1 and found[0].startswith("tables.data.x: 1 of 60 values beyond")
    relabelled = frame.copy()
    relabelled.loc[3, "sex"] = "X"
    assert "tables.data.exact columns: digest moved" in table_mismatches(pins, {"data": relabelled})
    shifted = frame.copy()
    shifted.loc[5, "born"] += dt.timedelta(days=2)
    assert table_mismatches(pins, {"data": shifted})[0].startswith("tables.data.born: 1 of 60")
    assert table_mismatches(pins, {"data": frame.iloc[1:]}) == [
        "tables.data.rows: pinned 60, got 59"
    ]
    assert table_mismatches(pins, {}) == ["tables.data: missing"]


@pytest.mark.parametrize("case", GOLDEN, ids=[case["id"] for case in GOLDEN])
def test_config_release_is_pinned(case: dict[str, Any], tmp_path: Path) -> None:
    metrics, tables, _ = run_case(case, tmp_path)
    assert metrics["rows_out"] + metrics["rows_suppressed"] == metrics["rows_in"]
    found = table_mismatches(case["tables"], tables)
    found += mismatches(case["metrics"], headline(metrics), "metrics.")
    assert not found, (
        f"{case['id']} moved from {GOLDEN_FILE.name} (if deliberate: "
        f"python -m scripts.update_golden --only {case['id']}):\n" + "\n".join(found)
    )


@pytest.mark.spark
def test_spark_publishes_the_pinned_tables(spark: object, tmp_path: Path) -> None:
    """One case of every family, on Spark."""
    from sparkanon.families import FAMILIES

    cases = [case for case in GOLDEN if case.get("spark")]
    assert sorted(family(case["config"]) for case in cases) == sorted(f.name for f in FAMILIES)
    found = []
    for case in cases:
        metrics, tables, _ = run_case(case, tmp_path / case["id"], engine="spark")
        assert metrics["engine"] == "spark"
        counts = {
            k: v for k, v in case["metrics"].items() if k.startswith(("rows_", "suppressed_"))
        }
        found += table_mismatches(case["tables"], tables, f"{case['id']}.tables.")
        found += mismatches(counts, {k: metrics[k] for k in counts}, f"{case['id']}.metrics.")
    assert not found, "\n".join(found)


def test_by_value_pin_pairs_rows_that_float_error_swaps_across_a_sort_step(tmp_path: Path) -> None:
    # x in [0, 100]: rows sort in steps of 0.01 of x, then by y. B sits just below the step
    # at 50 in the pinned run and just above it in the new one: the two rows swap places.
    frame = pd.DataFrame(
        {"x": [0.0, 50.00000001, 49.99999999, 100.0], "y": [5.0, 0.0, 1000.0, 5.0], "s": ["a"] * 4}
    )
    pins = {"data": table_pin("case", "data", frame, by_value=True, folder=tmp_path)}
    drifted = frame.copy()
    drifted.loc[2, "x"] = 50.00000002
    assert table_mismatches(pins, {"data": drifted}) == []
    moved = drifted.copy()
    moved.loc[2, "y"] = 990.0
    assert table_mismatches(pins, {"data": moved})[0].startswith("tables.data.y: 1 of 4 values")
