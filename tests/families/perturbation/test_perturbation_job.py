"""The perturbation family end to end (Aggarwal 2015, section 20.2), and its bad input.

Every run checks what the family promises: every usable row published once with its
declared noise, the noise declared beside the data (``noise.json``), verification on the
residuals before the commit (a mis-declared or missing perturbation exits 3 and writes
nothing), the same table on every batch split, and bad settings exiting 2 with the key.
Spark publishes the same table: ``tests/test_golden.py``'s Spark check runs the
``adult_perturb`` case.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.cli import run_command
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import EXIT_OK, EXIT_PRIVACY, PrivacyViolationError
from sparkanon.families import parse_config
from sparkanon.pipeline import run_job
from sparkanon.randomness import RunKey
from tests._inputs import ROOT, cli_exit_code, csv_input, leftovers, write_csv

N_ROWS = 4000


def people(n: int = N_ROWS, seed: int = 3) -> pd.DataFrame:
    """A table of two numeric and two categorical columns, a label and a kept column."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(17, 90, n),
            "hours": np.round(rng.normal(40, 10, n).clip(1, 99), 1),
            "job": rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "sex": rng.choice(["F", "M"], n),
            "note": [f"n{i % 7}" for i in range(n)],
            "income": rng.choice(["<=50K", ">50K"], n, p=[0.75, 0.25]),
        }
    )


KINDS = {"age": "continuous", "hours": "continuous", "job": "nominal", "sex": "nominal"}
KINDS |= {"note": "keep"}
"""The attributes of :func:`people` (``income`` is the sensitive column)."""


def perturb_config(tmp_path: Path, data: Path, **algorithm: Any) -> dict[str, Any]:
    """A perturbation job over :func:`people`, output under ``tmp_path``."""
    columns = [
        {"name": "age", "noise": "gaussian", "privacy": 0.5},
        {"name": "hours", "noise": "uniform", "scale": 5.0},
        {"name": "job", "noise": "randomized_response", "retention": 0.7},
    ]
    return {
        "input": csv_input(data),
        "attributes": [{"name": name, "kind": kind} for name, kind in KINDS.items()],
        "sensitive": {"name": "income"},
        "algorithm": {"name": "perturb", "columns": columns} | algorithm,
        "output": {"path": str(tmp_path / "out"), "format": "csv", "mode": "error"},
        "seed": 11,
    }


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_csv(tmp_path, people(), "people.csv")


def published(out: Path) -> pd.DataFrame:
    """The committed table, rows in the order of their values (it has no row id)."""
    files = sorted((out / "data").glob("*.csv"))
    frame = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def same_multiset(a: pd.Series, b: pd.Series) -> bool:
    """Whether two columns hold the same values the same number of times."""
    return a.value_counts().sort_index().equals(b.value_counts().sort_index())


def test_job_publishes_every_row_with_its_declared_noise(tmp_path: Path, data: Path) -> None:
    cfg = perturb_config(tmp_path, data)
    # A fixed key: the statistical checks below are then the same on every run.
    result = run_job(LocalEngine(), parse_config(cfg), key=RunKey(bytes(range(32)), "user", "t"))
    m = result.metrics
    assert m["family"] == "perturbation" and m["verified"] is True and m["violations"] == 0
    assert m["rows_in"] == m["rows_out"] == N_ROWS and m["rows_suppressed"] == 0
    out = Path(cfg["output"]["path"])
    noise = json.loads((out / "noise.json").read_text())
    assert noise == m["noise"]
    # age: gaussian at 50% privacy: 3.92 sigma = 0.5 * range, the input's 17..89 rounded
    # outward to the power-of-ten grid, [10, 90] (the exact extremes are not published).
    source = people()
    assert (source["age"].min(), source["age"].max()) == (17, 89)
    span = 80.0
    assert noise["age"]["distribution"] == "gaussian"
    assert noise["age"]["privacy_width"] == pytest.approx(0.5 * span)
    assert noise["age"]["scale"] == pytest.approx(0.5 * span / (2 * 1.959963984540054))
    assert noise["hours"] == pytest.approx(noise["hours"]) and noise["hours"]["scale"] == 5.0
    job = noise["job"]
    assert job["values"] == ["a", "b", "c", "d"] and job["retention"] == 0.7
    assert np.allclose(np.sum(job["transition_matrix"], axis=1), 1.0)
    assert job["ldp_epsilon"] == pytest.approx(np.log(0.7 / 0.1))
    table = published(out)
    # No row id: nothing links a published row to its input row.
    assert list(table.columns) == ["age", "hours", "job", "sex", "income", "note"]
    assert len(table) == N_ROWS
    # Unperturbed columns publish the input's values; perturbed ones do not.
    for name in ("sex", "income", "note"):
        assert same_multiset(table[name], source[name])
    assert not same_multiset(table["hours"], source["hours"])
    assert table["hours"].min() >= source["hours"].min() - 5.0 - 1e-9
    assert table["hours"].max() <= source["hours"].max() + 5.0 + 1e-9
    # Uniform noise on [-5, 5] adds 25/3 to the variance, give or take the sample's noise
    # variance and its covariance with the values: 4 standard errors of
    # sqrt(var(n^2) + 4 var(x) var(n) / N), with E n^4 = 5^4 / 5.
    added = table["hours"].var() - source["hours"].var()
    spread = np.sqrt((125.0 - (25.0 / 3.0) ** 2) + 4.0 * source["hours"].var() * 25.0 / 3.0)
    assert added == pytest.approx(25.0 / 3.0, abs=4.0 * spread / np.sqrt(N_ROWS))
    # Randomized response: published frequencies are the input's through the matrix.
    freq = source["job"].value_counts(normalize=True).reindex(job["values"]).to_numpy()
    want = freq @ np.array(job["transition_matrix"])
    got = table["job"].value_counts(normalize=True).reindex(job["values"]).to_numpy()
    assert np.abs(got - want).max() < 4.5 * np.sqrt(0.25 / N_ROWS)
    checks = m["verification"]
    assert checks["age"]["passed"] and checks["hours"]["passed"] and checks["job"]["passed"]


def test_same_table_on_every_batch_split_and_rerun_with_one_key(tmp_path: Path, data: Path) -> None:
    key = RunKey(bytes(range(32)), "user", "test")
    digests = []
    for i, batch_rows in enumerate((10_000, 333, 10_000)):
        cfg = perturb_config(tmp_path / str(i), data)
        run_job(LocalEngine(batch_rows=batch_rows), parse_config(cfg), key=key)
        digests.append(published(Path(cfg["output"]["path"])).to_csv(index=False))
    assert digests[0] == digests[1] == digests[2]
    # Without a key each run draws its own: the same config publishes other noise.
    cfg = perturb_config(tmp_path / "drawn", data)
    run_job(LocalEngine(), parse_config(cfg))
    assert published(Path(cfg["output"]["path"])).to_csv(index=False) != digests[0]


@pytest.mark.parametrize(
    "mutation",
    ["double_the_noise", "no_noise", "no_randomized_response"],
)
def test_a_release_off_its_declared_noise_fails_and_writes_nothing(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch, mutation: str
) -> None:
    """Inject a perturbation other than the declared one: verification must catch it."""
    import sparkanon.families.perturbation.perturb as stage
    from sparkanon.algorithms.perturbation.noise import NoiseSpec

    real = stage.perturb_frame

    def wrong(frame: pd.DataFrame, row_ids: np.ndarray, noises: list, key: Any) -> pd.DataFrame:
        if mutation == "double_the_noise":
            noises = [
                n
                if n.additive is None
                else type(n)(
                    n.column, n.stream, NoiseSpec(n.additive.distribution, 2 * n.additive.scale)
                )
                for n in noises
            ]
        elif mutation == "no_noise":
            noises = [n for n in noises if n.additive is None]
        else:
            noises = [n for n in noises if n.additive is not None]
        return real(frame, row_ids, noises, key)

    monkeypatch.setattr(stage, "perturb_frame", wrong)
    cfg = perturb_config(tmp_path, data)
    assert cli_exit_code(tmp_path, cfg) == EXIT_PRIVACY
    assert leftovers(Path(cfg["output"]["path"])) == []


def test_an_original_value_column_left_in_fails(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stage publishes a column the verifier does not expect (as an original left in)."""
    import sparkanon.families.perturbation.family as family

    real = family.published_columns

    def fewer(schema: Any, passthrough: Any) -> list[tuple[str, str]]:
        return real(schema, passthrough)[:-1]

    monkeypatch.setattr(family, "published_columns", fewer)
    cfg = perturb_config(tmp_path, data)
    assert cli_exit_code(tmp_path, cfg) == EXIT_PRIVACY
    assert leftovers(Path(cfg["output"]["path"])) == []


@pytest.mark.parametrize("column", ["hours", "job"])
def test_staged_values_other_than_the_verified_ones_fail(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch, column: str
) -> None:
    """The residuals pass on the perturbed rows, but other values reach the staging area."""
    from dataclasses import replace

    import sparkanon.families.perturbation.perturb as stage
    from sparkanon.publications.base import MAIN

    real = stage.staged

    def change(batch: pd.DataFrame) -> pd.DataFrame:
        if column == "hours":
            return batch.assign(hours=batch["hours"].round())
        return batch.assign(job=batch["job"].replace({"a": "b", "b": "a"}))

    def tampered(engine: Any, publication: Any, tmp: Any, fmt: str, key: Any, **how: Any) -> Any:
        t = publication.tables[MAIN]
        changed = engine.map_batches(t, change, engine.schema_of(t))
        return real(engine, replace(publication, tables={MAIN: changed}), tmp, fmt, key, **how)

    monkeypatch.setattr(stage, "staged", tampered)
    cfg = perturb_config(tmp_path, data)
    with pytest.raises(PrivacyViolationError, match=f"{column}: the staged values"):
        run_job(LocalEngine(), parse_config(cfg))
    assert leftovers(Path(cfg["output"]["path"])) == []


BAD = [
    # (case, the column's entry, the key the message names)
    ("negative_noise", {"name": "hours", "noise": "uniform", "scale": -1.0}, "0.scale"),
    ("retention_zero", {"name": "job", "noise": "randomized_response", "retention": 0.0}, "0.retention"),
    ("retention_above_one", {"name": "job", "noise": "randomized_response", "retention": 1.5}, "0.retention"),
    ("no_such_column", {"name": "salary", "noise": "gaussian", "scale": 1.0}, "0.name"),
    ("privacy_without_range", {"name": "job", "noise": "uniform", "privacy": 0.5}, "0.noise"),
    ("two_scales", {"name": "age", "noise": "gaussian", "scale": 1.0, "privacy": 0.5}, "0"),
    ("epsilon_on_numeric", {"name": "age", "noise": "gaussian", "epsilon": 1.0}, "0"),
]  # fmt: skip


@pytest.mark.parametrize(("column", "key"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_perturbation_settings_exit_2_naming_the_key(
    tmp_path: Path, data: Path, refused: Callable[..., str], column: dict[str, Any], key: str
) -> None:
    refused(perturb_config(tmp_path, data, columns=[column]), f"algorithm.columns.{key}")


def test_one_valued_columns_exit_2_after_profiling(
    tmp_path: Path, refused: Callable[..., str]
) -> None:
    frame = people().assign(job="a", hours=40.0)
    data = write_csv(tmp_path, frame, "flat.csv")
    for column, key in (
        (
            {"name": "job", "noise": "randomized_response", "retention": 0.5},
            "algorithm.columns.0.name",
        ),
        ({"name": "hours", "noise": "uniform", "privacy": 0.5}, "algorithm.columns.0.privacy"),
    ):
        refused(perturb_config(tmp_path, data, columns=[column]), key)


def test_a_model_is_refused_and_other_families_still_need_one(tmp_path: Path, data: Path) -> None:
    from sparkanon.errors import ConfigError

    cfg = perturb_config(tmp_path, data) | {"model": {"name": "k", "k": 5}}
    with pytest.raises(ConfigError, match="model: k: a perturbed release"):
        parse_config(cfg)
    other = perturb_config(tmp_path, data) | {"algorithm": {"name": "mdav"}}
    with pytest.raises(ConfigError, match="model: required key is missing"):
        parse_config(other)


def test_cli_runs_the_shipped_adult_config(tmp_path: Path) -> None:
    code = run_command(
        str(ROOT / "conf" / "adult_perturb.yaml"),
        [f"output.path={tmp_path / 'out'}", "output.format=csv"],
        engine_name="local",
    )
    assert code == EXIT_OK
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert (
        metrics["verified"] is True
        and metrics["rows_out"] == metrics["rows_in"] - metrics["rows_suppressed"]
    )
