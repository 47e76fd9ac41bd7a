"""``sparkanon reconstruct``: distributions of a committed perturbed release, on the engine.

One perturbation job (local engine, 20,000 rows) is committed once per module; every
test reconstructs from its output and compares with the original data, which the test
(never the command) knows: the reconstructions must beat the noisy histogram on a smooth
column, the categorical IBU must come close to the truth, ``--by`` must give one
distribution per label, bad inputs must exit 2 and write nothing, and Spark must give
the local engine's reconstruction.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.cli import main
from sparkanon.commands import load_release, reconstruct_release
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import EXIT_OK, EXIT_USER
from sparkanon.families import parse_config
from sparkanon.pipeline import run_job
from tests._inputs import csv_input, write_csv

N_ROWS = 20_000
JOB_VALUES = ["a", "b", "c", "d"]
JOB_SHARES = [0.4, 0.3, 0.2, 0.1]


def people(n: int = N_ROWS, seed: int = 5) -> pd.DataFrame:
    """Age-like normal ages (one decimal), whole hours, a job, and an income that rises with age."""
    rng = np.random.default_rng(seed)
    age = np.round(rng.normal(40, 12, n).clip(17, 90), 1)
    rich = rng.random(n) < np.where(age > 45, 0.5, 0.1)
    return pd.DataFrame(
        {
            "age": age,
            "hours": rng.integers(20, 61, n),
            "job": rng.choice(JOB_VALUES, n, p=JOB_SHARES),
            "income": np.where(rich, ">50K", "<=50K"),
        }
    )


def job_config(tmp_path: Path, data: Path) -> dict[str, Any]:
    """The perturbation job: gaussian age at 50% privacy, uniform hours, RR on job."""
    columns = [
        {"name": "age", "noise": "gaussian", "privacy": 0.5},
        {"name": "hours", "noise": "uniform", "scale": 4.0},
        {"name": "job", "noise": "randomized_response", "retention": 0.7},
    ]
    kinds = {"age": "continuous", "hours": "continuous", "job": "nominal"}
    return {
        "input": csv_input(data),
        "attributes": [{"name": name, "kind": kind} for name, kind in kinds.items()],
        "sensitive": {"name": "income"},
        "algorithm": {"name": "perturb", "columns": columns},
        "output": {"path": str(tmp_path / "out"), "format": "csv", "mode": "error"},
        "seed": 13,
    }


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed perturbed release of :func:`people` (the directory)."""
    tmp = tmp_path_factory.mktemp("release")
    cfg = job_config(tmp, write_csv(tmp, people(), "people.csv"))
    assert run_job(LocalEngine(), parse_config(cfg)).metrics["verified"] is True
    return Path(cfg["output"]["path"])


def _reconstruct(release: Path, out: Path, *args: str) -> dict[str, Any]:
    code = main(["reconstruct", str(release), "--engine", "local", "--out", str(out), *args])
    assert code == EXIT_OK
    return json.loads((out / "reconstruction.json").read_text())


def true_histogram(values: np.ndarray, edges: list[float]) -> np.ndarray:
    """The original values over ``edges``, out-of-range ones in the end bins (as the noisy one)."""
    e = np.asarray(edges)
    index = np.clip(np.searchsorted(e, values, side="right") - 1, 0, len(e) - 2)
    counts = np.bincount(index, minlength=len(e) - 1).astype(float)
    return counts / counts.sum()


def l1(p: Any, q: Any) -> float:
    return float(np.abs(np.asarray(p) - np.asarray(q)).sum())


def test_files_written_and_every_distribution_sums_to_one(release: Path) -> None:
    code = main(["reconstruct", str(release), "--engine", "local", "--quiet"])
    assert code == EXIT_OK
    out = release / "reconstruction"
    assert {"reconstruction.json", "distributions.csv", "age.png", "job.png"} <= {
        p.name for p in out.iterdir()
    }
    result = json.loads((out / "reconstruction.json").read_text())
    assert result["rows"] == N_ROWS and set(result["columns"]) == {"age", "hours", "job"}
    age = result["columns"]["age"]
    assert len(age["x_edges"]) == 51 and age["all"]["outside_z_range"] == 0
    for method in ("bayes", "em"):
        d = age["all"][method]
        assert d["iterations"] >= 1 and d["stopped_by"] != "max_iterations"
        assert d["edges"] == age["x_edges"]
    table = pd.read_csv(out / "distributions.csv", keep_default_na=False)
    sums = table.groupby(["column", "label", "method"])["probability"].sum()
    assert len(sums) == 9 and np.allclose(sums.to_numpy(), 1.0)
    job = result["columns"]["job"]["all"]
    assert job["categorical_inversion"]["stopped_by"] == "closed_form"
    assert np.isclose(sum(job["categorical_inversion"]["unprojected"]), 1.0)


def test_bayes_and_em_beat_the_noisy_histogram_on_a_smooth_column(
    release: Path, tmp_path: Path
) -> None:
    result = _reconstruct(release, tmp_path / "r")
    age = result["columns"]["age"]
    truth = true_histogram(people()["age"].to_numpy(), age["x_edges"])
    noisy = l1(age["all"]["noisy"]["probabilities"], truth)
    em = l1(age["all"]["em"]["probabilities"], truth)
    bayes = l1(age["all"]["bayes"]["probabilities"], truth)
    assert em < noisy and bayes < noisy, (em, bayes, noisy)
    assert noisy > 0.2  # gaussian noise at 50% privacy smears the histogram a lot


def test_categorical_ibu_is_within_0_05_l1_of_the_truth(release: Path, tmp_path: Path) -> None:
    result = _reconstruct(release, tmp_path / "r")
    job = result["columns"]["job"]
    assert job["values"] == JOB_VALUES
    truth = people()["job"].value_counts(normalize=True).reindex(JOB_VALUES).to_numpy()
    ibu = job["all"]["categorical_ibu"]["probabilities"]
    assert l1(ibu, truth) < 0.05
    assert l1(job["all"]["noisy"]["probabilities"], truth) > 0.1  # the noise is visible


def test_integer_bins_are_whole_integers(release: Path, tmp_path: Path) -> None:
    result = _reconstruct(release, tmp_path / "r", "--integer-bins")
    hours = result["columns"]["hours"]
    edges = np.asarray(hours["x_edges"])
    assert np.allclose(np.diff(edges), 1.0) and np.allclose(edges % 1.0, 0.5)
    # uniform noise on [-4, 4]: x-bins over [zmin + 4, zmax - 4], the integers 20 .. 60
    assert edges[0] == 19.5 and edges[-1] == 60.5
    mids = edges[:-1] + 0.5
    true_mean = people()["hours"].mean()
    for method in ("bayes", "em"):
        p = np.asarray(hours["all"][method]["probabilities"])
        assert np.isclose(p.sum(), 1.0) and abs(mids @ p - true_mean) < 0.5, method


def test_by_income_gives_one_distribution_per_label(release: Path, tmp_path: Path) -> None:
    result = _reconstruct(release, tmp_path / "r", "--by", "income")
    source = people()
    assert result["by"] == "income"
    assert result["labels"] == source["income"].value_counts().sort_index().to_dict()
    for name in ("age", "hours", "job"):
        per = result["columns"][name]["by_label"]
        assert set(per) == {"<=50K", ">50K"}
        for dists in per.values():
            for method, d in dists.items():
                if isinstance(d, dict) and "probabilities" in d:
                    assert np.isclose(sum(d["probabilities"]), 1.0), (name, method)
    age = result["columns"]["age"]
    mids = np.convolve(age["x_edges"], [0.5, 0.5], "valid")
    means = {k: float(mids @ v["em"]["probabilities"]) for k, v in age["by_label"].items()}
    truth = source.groupby("income")["age"].mean()
    assert means[">50K"] - means["<=50K"] > 0.5 * (truth[">50K"] - truth["<=50K"])
    table = pd.read_csv(tmp_path / "r" / "distributions.csv", keep_default_na=False)
    assert set(table["label"]) == {"", "<=50K", ">50K"}


def _not_a_release(release: Path, tmp_path: Path) -> list[str]:
    plain = tmp_path / "plain"
    shutil.copytree(release / "data", plain / "data")
    shutil.copy(release / "config.yaml", plain / "config.yaml")
    return [str(plain)]


BAD = [
    ("no_noise_json", _not_a_release, "no noise.json"),
    ("by_unknown_column", lambda r, t: [str(r), "--by", "salary"], "--by 'salary'"),
    ("one_bin", lambda r, t: [str(r), "--bins", "1"], "--bins 1"),
    ("by_perturbed_column", lambda r, t: [str(r), "--by", "job"], "a perturbed column"),
]


@pytest.mark.parametrize(("make", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_inputs_exit_2_and_write_nothing(
    release: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Any,
    message: str,
) -> None:
    out = tmp_path / "rec"
    args = make(release, tmp_path)
    assert main(["reconstruct", *args, "--engine", "local", "--out", str(out)]) == EXIT_USER
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.spark
def test_spark_gives_the_local_reconstruction(release: Path, spark: Any) -> None:
    from sparkanon.engine.spark import SparkEngine

    loaded = load_release(str(release), perturbed=True)
    local = reconstruct_release(LocalEngine(), loaded, 20, by="income")
    remote = reconstruct_release(SparkEngine(spark), loaded, 20, by="income")
    _assert_close(local, remote)


def _assert_close(a: Any, b: Any, path: str = "") -> None:
    """Equal JSON values, numbers to 1e-9."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), path
        for key in a:
            _assert_close(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(a, bool):
        assert b == pytest.approx(a, rel=1e-9, abs=1e-9), path
    else:
        assert a == b, path
