"""``sparkanon/tools/verify_release.py`` on perturbed releases (``algorithm.name: perturb``).

The checker imports nothing else of sparkanon: it re-reads the input the config names, recounts
the usable rows, recomputes each column's noise from the config and tests each published
column's marginal against the input's (the release has no row id to pair rows by). A
committed demo release on an Adult sample passes; each tampered copy fails, naming what
broke.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.cli import run_command
from sparkanon.errors import EXIT_OK
from sparkanon.tools import verify_release as verify
from tests._adult import ROOT, adult_config
from tests._inputs import Row, write_adult_csv, write_config

PERTURB_CONF = ROOT / "conf" / "adult_perturb.yaml"
N_ROWS = 2000


def with_gaps(rows: list[Row]) -> None:
    """Missing values the job drops (a QI, the sensitive column) and one it keeps (keep)."""
    for i in range(0, len(rows), 97):
        rows[i]["age"] = "?"
    for i in range(5, len(rows), 131):
        rows[i]["income"] = ""
    for i in range(7, len(rows), 53):
        rows[i]["education"] = "?"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo perturbation config on an Adult sample with gaps, committed (local engine)."""
    base = tmp_path_factory.mktemp("perturb_release")
    data = write_adult_csv(base, N_ROWS, edit=with_gaps)
    lines = data.read_text(encoding="utf-8").splitlines()
    lines.insert(300, "41,Private,a ragged record")  # malformed, dropped on request
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outs = {}
    for fmt in ("parquet", "csv"):
        cfg = adult_config(base, data, base / f"out_{fmt}", PERTURB_CONF, output={"format": fmt})
        cfg["input"]["on_malformed"] = "drop"
        conf = write_config(base, cfg, f"job_{fmt}.yaml")
        assert run_command(str(conf), [], engine_name="local") == EXIT_OK
        outs[fmt] = base / f"out_{fmt}"
    outs["input"] = data
    return outs


def tampered(release: dict[str, Path], tmp_path: Path) -> Path:
    """A copy of the committed Parquet release to edit."""
    out = tmp_path / "release"
    shutil.copytree(release["parquet"], out)
    return out


def edit_table(out: Path, change: Any) -> None:
    """Replace the release's data by ``change(table)`` (one Parquet part)."""
    parts = sorted((out / "data").glob("*.parquet"))
    table = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    for p in parts:
        p.unlink()
    change(table).to_parquet(out / "data" / "part-00000.parquet", index=False)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_committed_perturbed_release_passes(
    release: dict[str, Path], fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert verify.main([str(release[fmt])]) == 0
    printed = capsys.readouterr().out
    assert "violations=0" in printed and "FAILED" not in printed and "NOT CHECKED" not in printed
    for column in ("age", "hours-per-week"):
        assert f"{column}: " in printed and "ks=" in printed
    for column in ("workclass", "marital-status", "sex"):
        assert f"{column}: published frequencies" in printed
    metrics = json.loads((release[fmt] / "metrics.json").read_text())
    # The gaps and the ragged record were dropped, and the checker recounted them.
    assert metrics["suppressed_missing_values"] > 0
    assert metrics["suppressed_malformed_records"] == 1
    assert metrics["rows_out"] < N_ROWS


def _more_age_noise(release: dict[str, Path]) -> Any:
    """Age with as much noise again as declared (the variance added doubles)."""
    sigma = json.loads((release["parquet"] / "noise.json").read_text())["age"]["scale"]

    def change(t: pd.DataFrame) -> pd.DataFrame:
        rng = np.random.default_rng(0)
        return t.assign(age=t["age"] + rng.normal(0.0, sigma, len(t)))

    return change


def _sex_flipped(release: dict[str, Path]) -> Any:
    return lambda t: t.assign(sex=t["sex"].map({"Male": "Female", "Female": "Male"}))


TAMPERS = {
    "age noise doubled": (_more_age_noise, ["age: added variance"]),
    "sex flipped": (_sex_flipped, ["sex: published frequencies"]),
    "extra original column": (
        lambda r: lambda t: t.assign(occupation=t["workclass"]),
        ["columns: ['occupation'] published beyond"],
    ),
    "row id published": (
        lambda r: lambda t: t.assign(record_id=np.arange(len(t))),
        ["columns: ['record_id'] published beyond"],
    ),
    "row dropped": (lambda r: lambda t: t.iloc[1:], ["rows: "]),
    "income changed": (
        lambda r: lambda t: t.assign(income=">50K"),
        ["income (published as is): "],
    ),
}


@pytest.mark.parametrize("case", list(TAMPERS))
def test_a_tampered_table_fails(
    release: dict[str, Path], tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    make, expected = TAMPERS[case]
    out = tampered(release, tmp_path)
    edit_table(out, make(release))
    assert verify.main([str(out)]) == 1
    printed = capsys.readouterr().out
    for text in expected:
        assert f"FAILED {text}" in printed, printed


def test_a_misdeclared_noise_fails(
    release: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tampered(release, tmp_path)
    noise = json.loads((out / "noise.json").read_text())
    noise["hours-per-week"]["scale"] *= 2.0
    noise["workclass"]["ldp_epsilon"] = 1.0
    (out / "noise.json").write_text(json.dumps(noise))
    assert verify.main([str(out)]) == 1
    printed = capsys.readouterr().out
    assert "FAILED metrics.json's noise differs from noise.json" in printed
    assert "FAILED hours-per-week: declared scale" in printed
    assert "FAILED hours-per-week: Kolmogorov-Smirnov" in printed
    assert "FAILED workclass: declared ldp_epsilon 1" in printed


def test_a_directory_input_is_checked_without_the_residuals(
    release: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory input's row order is not reproducible: what needs it is named unchecked."""
    folder = tmp_path / "input"
    folder.mkdir()
    shutil.copy(release["input"], folder / "part-0.csv")
    cfg = adult_config(tmp_path, folder, tmp_path / "out", PERTURB_CONF)
    cfg["input"]["on_malformed"] = "drop"
    assert run_command(str(write_config(tmp_path, cfg)), [], engine_name="local") == EXIT_OK
    assert verify.main([str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "NOT CHECKED the input is a directory" in printed and "violations=0" in printed


def test_kolmogorov_quantiles_and_the_two_sample_margin_test(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The asymptotic Kolmogorov quantiles (tables: 1.3581 at 5%, 1.6276 at 1%)."""
    assert verify.kolmogorov_critical(0.05) == pytest.approx(1.3581, abs=1e-4)
    assert verify.kolmogorov_critical(0.01) == pytest.approx(1.6276, abs=1e-4)
    assert verify.kolmogorov_sf(verify.kolmogorov_critical(1e-4)) == pytest.approx(1e-4)
    rng = np.random.default_rng(0)
    original = np.round(rng.normal(50.0, 1.0, 5000))
    published = original + rng.uniform(-3.0, 3.0, original.size)
    report = verify.Report()
    verify.check_numeric_margin("x", published, original, "uniform", 3.0, 1e-4, report)
    assert report.failures == [] and "x: uniform(3) n=5000" in report.lines[0]
    # Declared wider than drawn: every test sees it.
    report = verify.Report()
    verify.check_numeric_margin("x", published, original, "uniform", 6.0, 1e-4, report)
    assert [f.split(" ")[1] for f in report.failures] == ["Kolmogorov-Smirnov", "added"]
    # Randomized response: counts pushed through the matrix, and a count off them.
    declared = {"values": ["a", "b"], "transition_matrix": [[0.8, 0.2], [0.2, 0.8]]}
    truth = pd.Series(["a"] * 3000 + ["b"] * 1000)
    flip = rng.random(truth.size) < 0.2
    out = truth.where(~flip, truth.map({"a": "b", "b": "a"}))
    report = verify.Report()
    verify.check_categorical_margin("c", out, truth, declared, 1e-4, report)
    assert report.failures == []
    verify.check_categorical_margin("c", truth, truth, declared, 1e-4, report)
    assert report.failures == [
        "c: published frequencies: 2 of 2 values off the input's pushed through the declared matrix"
    ]
