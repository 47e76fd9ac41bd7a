"""``scripts/verify_output.py`` on perturbed releases (``algorithm.name: perturb``).

The checker does not import sparkanon: it re-reads the input the config names, recounts
the usable rows, recomputes each column's noise from the config and pairs the published
rows with the input rows by ``record_id`` order to test the residuals. A committed demo
release on an Adult sample passes; each tampered copy fails, naming what broke.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.cli import run_command
from sparkanon.errors import EXIT_OK
from tests._adult import ROOT, adult_config
from tests._helpers import load_script
from tests._inputs import Row, write_adult_csv, write_config

PERTURB_CONF = ROOT / "conf" / "adult_perturb.yaml"
N_ROWS = 2000


verify = load_script("verify_output")


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


def originals(release: dict[str, Path], table: pd.DataFrame, column: str) -> pd.Series:
    """The input's values of ``column`` for each published row (local ids are positions)."""
    # The local engine numbers every data record, the ragged one too (pandas pads it).
    source = pd.read_csv(release["input"], dtype=str, keep_default_na=False)
    return source[column].to_numpy()[table["record_id"].to_numpy()]


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
        assert f"{column}: retention rate" in printed
    metrics = json.loads((release[fmt] / "metrics.json").read_text())
    # The gaps and the ragged record were dropped, and the checker recounted them.
    assert metrics["suppressed_missing_values"] > 0
    assert metrics["suppressed_malformed_records"] == 1
    assert metrics["rows_out"] < N_ROWS


def _double_age_residual(release: dict[str, Path]) -> Any:
    def change(t: pd.DataFrame) -> pd.DataFrame:
        original = originals(release, t, "age").astype(float)
        return t.assign(age=original + 2.0 * (t["age"] - original))

    return change


def _sex_unperturbed(release: dict[str, Path]) -> Any:
    return lambda t: t.assign(sex=originals(release, t, "sex"))


def _extra_column(release: dict[str, Path]) -> Any:
    return lambda t: t.assign(occupation=originals(release, t, "occupation"))


TAMPERS = {
    "age residual doubled": (
        _double_age_residual,
        ["age: Kolmogorov-Smirnov", "age: residual variance"],
    ),
    "sex published unperturbed": (_sex_unperturbed, ["sex: retention rate 1 outside 0.9"]),
    "extra original column": (_extra_column, ["columns: ['occupation'] published beyond"]),
    "row dropped": (lambda r: lambda t: t.iloc[1:], ["rows: "]),
    "record ids shifted": (
        lambda r: lambda t: t.assign(record_id=t["record_id"] + 1),
        ["record_id: "],
    ),
    "record ids reversed": (
        lambda r: lambda t: t.assign(record_id=t["record_id"].to_numpy()[::-1]),
        ["income (published as is): ", "education (published as is): ", "sex: retention"],
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


def test_kolmogorov_quantiles_and_the_exact_statistic() -> None:
    """The asymptotic Kolmogorov quantiles (tables: 1.3581 at 5%, 1.6276 at 1%)."""
    assert verify.kolmogorov_critical(0.05) == pytest.approx(1.3581, abs=1e-4)
    assert verify.kolmogorov_critical(0.01) == pytest.approx(1.6276, abs=1e-4)
    assert verify.kolmogorov_sf(verify.kolmogorov_critical(1e-4)) == pytest.approx(1e-4)
    u = (np.arange(1000) + 0.5) / 1000  # a perfect uniform sample: D = 1 / (2n)
    d, crit = verify.ks_test(u, u, 0.05)
    assert d == pytest.approx(0.0005) and crit == pytest.approx(
        1.3581 / (math.sqrt(1000) + 0.1235), rel=1e-3
    )
    rng = np.random.default_rng(0)
    r = np.sort(rng.uniform(-1, 1, 5000))
    assert verify.ks_test(r, verify.noise_cdf("uniform", 1.0, r), 1e-4)[0] < crit
    shifted = verify.ks_test(r, verify.noise_cdf("uniform", 1.2, r), 1e-4)
    assert shifted[0] > shifted[1]
