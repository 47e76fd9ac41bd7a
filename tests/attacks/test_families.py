"""Every family's release withstands the attacks: no better than chance.

Each test runs a job of one family on a small input (committed as a user would; on the
local engine, and the perturbation, condensation and relational-transaction jobs also on
Spark, whose keyed order spreads rows over part files; the blocks family's order on Spark
is checked by ``tests/stages/test_release_order.py``) and runs on its release folder the attacks
that fit the family; the chance level
of each is measured on the same release (see each attack's module). ``SLACK`` is what a
rate may exceed its chance level by through sampling alone on these sizes; the attacks
whose every success gives a record away (group statistics, stream differencing) get none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.cli import run_command
from sparkanon.errors import EXIT_OK
from sparkanon.families import parse_config
from tests._adult import ROOT, adult_config, adult_sample
from tests._inputs import correlated_people, rt_config, rt_frame, write_config, write_csv
from tests.attacks import (
    condensation_groups,
    perturbation_noise,
    release_join,
    release_order,
    stream_differencing,
)
from tests.attacks.release import Release

SLACK = 0.05
"""How far a rate may exceed its chance level (sampling on a few thousand rows)."""
ROWS = 1500


ENGINES = ["local", pytest.param("spark", marks=pytest.mark.spark)]
"""The engines a family's attack runs on: the command on the local engine, the runner on
the tests' shared Spark session."""


def _run(cfg: dict[str, Any], folder: Path, engine: str = "local", request: Any = None) -> Release:
    folder.mkdir(parents=True, exist_ok=True)
    if engine == "spark":
        from sparkanon.engine.spark import SparkEngine
        from sparkanon.pipeline import run_job

        run_job(SparkEngine(request.getfixturevalue("spark")), parse_config(cfg))
    else:
        code = run_command(str(write_config(folder, cfg)), [], engine_name="local")
        assert code == EXIT_OK, f"the job exited {code}"
    return Release(Path(cfg["output"]["path"]))


def _adult(
    tmp_path: Path, conf: str, name: str, engine: str = "local", request: Any = None
) -> tuple[Release, pd.DataFrame]:
    data = adult_sample(tmp_path, ROWS)
    out = tmp_path / name
    cfg = adult_config(tmp_path, data, out, ROOT / "conf" / conf)
    return _run(cfg, tmp_path / f"{name}_job", engine, request), pd.read_csv(data, na_values=["?"])


def _usable(original: pd.DataFrame, cfg_columns: list[str]) -> pd.DataFrame:
    """The input rows a job keeps (the bundled Adult configs drop rows with a missing value)."""
    return original.dropna(subset=cfg_columns).reset_index(drop=True)


@pytest.mark.parametrize(
    ("conf", "engine"),
    [
        # Mondrian's order on Spark, part files included, is checked against each row's
        # true input position by tests/stages/test_release_order.py's Spark test.
        ("adult_mondrian_k.yaml", "local"),
        ("adult_mdav_k.yaml", "local"),
        ("adult_fd_k.yaml", "local"),
    ],
)
def test_generalized_release_order_is_not_the_input_order(
    tmp_path: Path, conf: str, engine: str, request: pytest.FixtureRequest
) -> None:
    release, original = _adult(tmp_path, conf, "out", engine, request)
    table = release.table()
    sensitive = release.config()["sensitive"]["name"]
    names = [a["name"] for a in release.config()["attributes"]] + [sensitive]
    for source in (original, _usable(original, [n for n in names if n in original])):
        found = release_order.attack(table, source, sensitive)
        assert found.no_better_than_chance(SLACK), found
    assert all(abs(r) < 0.2 for r in release_order.rank_correlations(table).values())


def test_two_generalized_releases_of_one_input_do_not_join(tmp_path: Path) -> None:
    first, _ = _adult(tmp_path, "adult_mondrian_k.yaml", "first")
    second, _ = _adult(tmp_path, "adult_mdav_k.yaml", "second")
    sensitive = first.config()["sensitive"]["name"]
    found = release_join.attack(first.table(), second.table(), sensitive)
    assert found.no_better_than_chance(SLACK), found


def _people(rows: int = 2000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(17, 90, rows),
            "hours": np.round(rng.normal(40, 10, rows).clip(1, 99), 1),
            "job": rng.choice(["a", "b", "c", "d"], rows),
            "income": rng.choice(["<=50K", ">50K"], rows, p=[0.75, 0.25]),
        }
    )


def _perturb_config(tmp_path: Path, data: Path, out: str) -> dict[str, Any]:
    kinds = {"age": "continuous", "hours": "continuous", "job": "nominal"}
    return {
        "input": {"format": "csv", "path": str(data), "options": {"header": True}},
        "attributes": [{"name": n, "kind": k} for n, k in kinds.items()],
        "sensitive": {"name": "income"},
        "algorithm": {
            "name": "perturb",
            "columns": [
                {"name": "age", "noise": "gaussian", "privacy": 0.5},
                {"name": "hours", "noise": "uniform", "scale": 5.0},
                {"name": "job", "noise": "randomized_response", "retention": 0.7},
            ],
        },
        "output": {"path": str(tmp_path / out), "format": "csv", "mode": "error"},
        "report": {"enabled": False},
        "seed": 11,
    }


@pytest.mark.parametrize("engine", ENGINES)
def test_perturbation_noise_cannot_be_regenerated(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    source = _people()
    data = write_csv(tmp_path, source, "people.csv")
    release = _run(_perturb_config(tmp_path, data, "out"), tmp_path / "job", engine, request)
    found = perturbation_noise.attack(release, source)
    assert found.no_better_than_chance(SLACK), found


def test_two_perturbed_releases_of_one_input_do_not_join(tmp_path: Path) -> None:
    source = _people()
    data = write_csv(tmp_path, source, "people.csv")
    first = _run(_perturb_config(tmp_path, data, "a"), tmp_path / "job_a")
    second = _run(_perturb_config(tmp_path, data, "b"), tmp_path / "job_b")
    found = release_join.attack(first.table(), second.table(), "income")
    assert found.no_better_than_chance(SLACK), found
    assert release_order.attack(first.table(), source, "income").no_better_than_chance(SLACK)


def _gains(rows: int, seed: int) -> pd.DataFrame:
    """Correlated people with a capital gain that most have none of (a dominance column)."""
    frame = correlated_people(rows, seed)
    rng = np.random.default_rng(seed + 1)
    frame["gain"] = np.where(rng.random(rows) < 0.1, rng.integers(1000, 99999, rows), 0)
    return frame


@pytest.mark.parametrize("engine", ENGINES)
def test_condensed_groups_give_no_record_away(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    source = _gains(ROWS, 5)
    data = write_csv(tmp_path, source, "people.csv")
    numeric = ["age", "income_k", "hours", "gain"]
    cfg = {
        "input": {"format": "csv", "path": str(data), "options": {"header": True}},
        "attributes": [{"name": n, "kind": "continuous"} for n in numeric],
        "sensitive": {"name": "label"},
        "model": {"name": "k", "k": 5},
        "algorithm": {"name": "condensation"},
        "partitioning": {"max_block_rows": 500},
        "output": {"path": str(tmp_path / "out"), "format": "parquet", "mode": "error"},
        "report": {"enabled": False},
        "seed": 3,
    }
    release = _run(cfg, tmp_path / "job", engine, request)
    found = condensation_groups.attack(release, source, numeric)
    # every disclosed group gives one record away: no slack beyond the shuffled labels'
    assert found.no_better_than_chance(0.0), found
    assert release_order.attack(release.table(), source, "label").no_better_than_chance(SLACK)


def _stream_releases(batches: int, k: int) -> tuple[list[pd.DataFrame], pd.DataFrame]:
    """A stream's successive outputs, its step driven batch by batch without Spark."""
    from sparkanon.families.synthesis.condense_stream import (
        StreamStep,
        initial_state,
        numeric_values,
    )
    from sparkanon.randomness import RunKey

    columns = ("age", "income_k", "hours")
    initial = correlated_people(120, 0)
    values, _ = numeric_values(initial, columns)
    state = initial_state(values, k, 3).to_bytes()
    step = StreamStep(columns, k, RunKey.draw(), release_pending=1, release_age=1, alpha=0.05)
    outputs, seen = [], [initial]
    for b in range(batches):
        rows = correlated_people(20, 10 + b)
        seen.append(rows)
        state, out = step("key", state, rows[list(columns)])
        outputs.append(out)
    return outputs, pd.concat(seen, ignore_index=True)


def test_stream_releases_do_not_difference_to_records() -> None:
    releases, source = _stream_releases(6, 5)
    found = stream_differencing.attack(releases, source, ["age", "income_k", "hours"])
    # every differenced record that is an input record is a record given away: no slack
    assert found.no_better_than_chance(0.0), found


def _rt(
    tmp_path: Path, name: str, k: int, engine: str = "local", request: Any = None
) -> tuple[Release, pd.DataFrame]:
    source = rt_frame(600, 4)
    data = write_csv(tmp_path, source, "rt.csv")
    cfg = rt_config(tmp_path, data, model={"name": "kl_diversity", "k": k, "l": 3})
    cfg["output"] = cfg["output"] | {"path": str(tmp_path / name), "format": "csv"}
    cfg["report"] = {"enabled": False}
    return _run(cfg, tmp_path / f"{name}_job", engine, request), source


@pytest.mark.parametrize("engine", ENGINES)
def test_relational_transaction_releases_do_not_lead_back_or_join(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    first, source = _rt(tmp_path, "a", 4, engine, request)
    second, _ = _rt(tmp_path, "b", 5)
    rt_a, rt_b = first.table("rt"), second.table("rt")
    assert release_order.attack(rt_a, source, "zip").no_better_than_chance(SLACK)
    assert release_join.attack(rt_a, rt_b, "zip").no_better_than_chance(SLACK)
    assert all(abs(r) < 0.2 for r in release_order.rank_correlations(rt_a).values())
