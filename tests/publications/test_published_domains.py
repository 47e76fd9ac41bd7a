"""Issue 39, finding 4: nothing in a release describes the input beyond what its data shows.

Two leaks are closed here. A generated hierarchy written beside a release
(``hierarchies/<column>.csv``) listed every exact input value (the 320 ZIP codes of a
Safe-Harbor release that publishes only ``*****``); it now holds only the nodes the
release publishes and their ancestors. A perturbed release's ``noise.json`` stated its
scale and privacy width as a share of the exact input range (36.5 to 73 gave itself
away); the range is now the declared ``bounds`` or the input's rounded outward to a
power-of-ten grid, and the noise is drawn at that published scale, so verification,
the independent verifier and reconstruction still hold.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.algorithms.perturbation._params import PerturbColumn
from sparkanon.algorithms.perturbation.noise import coarse_range
from sparkanon.attributes.builders import build_hierarchy, published_paths
from sparkanon.cli import main
from sparkanon.config.builders import MaskBuilder
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import EXIT_OK, ConfigError
from sparkanon.families import parse_config
from sparkanon.families.perturbation.family import noise_range
from sparkanon.pipeline import run_job
from sparkanon.randomness import RunKey
from tests._inputs import attributes_of, csv_input, write_config, write_csv

VERIFY = ["-m", "sparkanon.tools.verify_release"]
KEY = RunKey(bytes(range(32)), "user", "test")


def release_files(out: Path) -> dict[str, str]:
    """Every text file of a committed release (the data, metadata, hierarchies, report)."""
    return {
        str(p.relative_to(out)): p.read_text(encoding="utf-8", errors="replace")
        for p in out.rglob("*")
        if p.is_file() and not p.name.endswith((".parquet", ".crc"))
    }


def holds_number(text: str, number: str) -> bool:
    """Whether ``number`` appears in ``text`` as a whole number (not inside another)."""
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", text) is not None


# ---------------------------------------------------------------- hierarchies


def patients(n: int = 320, seed: int = 5) -> pd.DataFrame:
    """Admissions with distinct ZIP codes (one patient holding six rows of one) and ages."""
    rng = np.random.default_rng(seed)
    zips = rng.choice(np.arange(10000, 100000), n - 5, replace=False).astype(str).tolist()
    zips += [zips[0]] * 5  # one patient, six admissions
    return pd.DataFrame(
        {
            "zip": zips,
            "age": rng.integers(20, 80, n),
            "sex": rng.choice(["F", "M"], n),
            "diagnosis": rng.choice(["flu", "asthma", "diabetes", "fracture"], n),
        }
    )


def safe_harbor_config(tmp_path: Path, data: Path) -> dict[str, Any]:
    """ZIP codes by a mask builder (exact leaves), ages by interval builders, k = 5."""
    return {
        "input": csv_input(data),
        "attributes": [
            {
                "name": "zip",
                "kind": "categorical",
                "builder": {"type": "mask", "length": 5, "masked": [2, 5]},
            },
            {
                "name": "age",
                "kind": "categorical",
                "builder": {"type": "intervals", "widths": [10, 20]},
            },
            {"name": "sex", "kind": "nominal"},
        ],
        "sensitive": {"name": "diagnosis"},
        "model": {"name": "k", "k": 5},
        "algorithm": {"name": "incognito", "max_suppression": 0.02, "metric": "precision"},
        "output": {"path": str(tmp_path / "out"), "format": "csv", "publish": "generalized"},
        "seed": 0,
    }


@pytest.mark.report
def test_a_safe_harbor_release_writes_no_exact_input_zip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = patients()
    cfg = safe_harbor_config(tmp_path, write_csv(tmp_path, frame, "patients.csv"))
    cfg["report"] = {"enabled": True}
    run_job(LocalEngine(), parse_config(cfg, "job.yaml"), key=KEY)
    out = tmp_path / "out"
    files = release_files(out)
    data = pd.concat([pd.read_csv(f, dtype=str) for f in sorted((out / "data").glob("*.csv"))])
    assert set(data["zip"]) == {"*****"}
    assert {"hierarchies/zip.csv", "hierarchies/age.csv", "report.html"} <= set(files)
    for name, text in files.items():
        for code in set(frame["zip"]):
            assert not holds_number(text, code), f"input ZIP {code} in {name}"
    # Each hierarchy holds the published values and their ancestors, no input value the
    # data does not show.
    for column in ("zip", "age"):
        cells = {
            c for line in files[f"hierarchies/{column}.csv"].splitlines() for c in line.split(";")
        }
        shown = set(data[column])
        assert shown <= cells
        assert not (set(frame[column].astype(str)) - shown) & cells
    assert files["hierarchies/zip.csv"].splitlines() == ["*****"]
    # sparkanon evaluate OUTPUT builds the hierarchies again from the input: its utility
    # is the one the run measured with them.
    capsys.readouterr()
    assert main(["evaluate", str(out), "--engine", "local", "--out", str(tmp_path / "ev")]) == 0
    run = json.loads(files["evaluation.json"])
    again = json.loads((tmp_path / "ev" / "evaluation.json").read_text(encoding="utf-8"))
    assert again["utility"] == run["utility"]


def test_published_paths_keep_published_nodes_and_their_ancestors() -> None:
    cfg = MaskBuilder(type="mask", length=5, masked=[2, 5])
    codes = ["12345", "12399", "12411", "98765"]
    built = build_hierarchy("zip", "attributes.0.builder", cfg, codes, [1, 1, 1, 1])
    assert published_paths(built.taxonomy, {"123**", "*****"}) == [("123**", "*****"), ("*****",)]
    assert published_paths(built.taxonomy, {"124**"}) == [("124**", "*****")]
    # A published exact value keeps its row; a node of another class is kept above it.
    assert published_paths(built.taxonomy, {"12345", "123**"}) == [
        ("12345", "123**", "*****"),
        ("123**", "*****"),
    ]
    assert published_paths(built.taxonomy, set()) == []


# ---------------------------------------------------------------- noise


def odd_people(n: int = 600, seed: int = 2) -> pd.DataFrame:
    """Ages from exactly 36.53 to 73.17, hours from 1.25 to 97.75."""
    rng = np.random.default_rng(seed)
    age = np.round(rng.uniform(36.53, 73.17, n), 2)
    age[:2] = [36.53, 73.17]
    hours = np.round(rng.uniform(1.25, 97.75, n), 2)
    hours[-2:] = [1.25, 97.75]
    return pd.DataFrame(
        {
            "age": age,
            "hours": hours,
            "sex": rng.choice(["F", "M"], n),
            "income": rng.choice(["<=50K", ">50K"], n),
        }
    )


def noise_config(tmp_path: Path, data: Path, **age: Any) -> dict[str, Any]:
    return {
        "input": csv_input(data),
        "attributes": attributes_of({"age": "continuous", "hours": "continuous", "sex": "nominal"}),
        "sensitive": {"name": "income"},
        "algorithm": {
            "name": "perturb",
            "columns": [
                {"name": "age", "noise": "gaussian", "privacy": 0.5} | age,
                {"name": "hours", "noise": "uniform", "scale_share": 0.25},
            ],
        },
        "output": {"path": str(tmp_path / "out"), "format": "csv"},
        "seed": 1,
    }


def numbers(value: Any) -> list[float]:
    """Every number in a JSON value."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in numbers(v)]
    if isinstance(value, list):
        return [x for v in value for x in numbers(v)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    return []


def test_noise_is_declared_on_a_rounded_range_and_still_reconstructs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = odd_people()
    cfg = noise_config(tmp_path, write_csv(tmp_path, frame, "people.csv"))
    path = write_config(tmp_path, cfg)
    result = run_job(LocalEngine(), parse_config(cfg, str(path)), key=KEY)
    assert result.metrics["verified"] is True
    out = tmp_path / "out"
    noise = json.loads((out / "noise.json").read_text(encoding="utf-8"))
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    # The ranges the noise is a share of: [30, 80] and [0, 100], not the input's.
    assert noise["age"]["privacy_width"] / noise["age"]["privacy_share"] == pytest.approx(50.0)
    assert noise["age"]["privacy_width"] == pytest.approx(0.5 * 50.0)
    assert noise["hours"]["scale"] == pytest.approx(0.25 * 100.0)
    exact = (36.53, 73.17, 73.17 - 36.53, 1.25, 97.75, 97.75 - 1.25)
    for name, found in (("noise.json", noise), ("metrics.json", metrics)):
        for x in numbers(found):
            assert all(x != pytest.approx(e, abs=1e-9) for e in exact), (name, x)
    for name in ("noise.json", "metrics.json", "config.yaml"):
        text = (out / name).read_text(encoding="utf-8")
        for e in ("36.53", "73.17", "36.64", "1.25", "97.75", "96.5"):
            assert not holds_number(text, e), (name, e)
    # The noise drawn is the noise declared: the independent verifier recomputes the
    # declaration from the config and the input, and reconstruction reads it.
    check = subprocess.run(
        [sys.executable, *VERIFY, str(out)], capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr
    capsys.readouterr()
    code = main(["reconstruct", str(out), "--engine", "local", "--out", str(tmp_path / "rec")])
    assert code == EXIT_OK


def test_declared_bounds_set_the_range(tmp_path: Path) -> None:
    frame = odd_people()
    data = write_csv(tmp_path, frame, "people.csv")
    cfg = noise_config(tmp_path, data, bounds=[0, 120])
    path = write_config(tmp_path, cfg)
    run_job(LocalEngine(), parse_config(cfg, str(path)), key=KEY)
    noise = json.loads((tmp_path / "out" / "noise.json").read_text(encoding="utf-8"))
    assert noise["age"]["privacy_width"] == pytest.approx(0.5 * 120.0)
    check = subprocess.run(
        [sys.executable, *VERIFY, str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    narrow = PerturbColumn(name="age", noise="gaussian", privacy=0.5, bounds=(40, 120))
    with pytest.raises(ConfigError, match=r"algorithm.columns.0.bounds"):
        noise_range("algorithm.columns.0", narrow, 36.53, 73.17)


@pytest.mark.parametrize(
    ("low", "high", "rounded"),
    [
        (36.53, 73.17, (30.0, 80.0)),
        (17, 90, (10.0, 90.0)),
        (0.31, 0.47, (0.3, 0.5)),
        (-2.5, 1.25, (-3.0, 2.0)),
        (1.25, 97.75, (0.0, 100.0)),
        (5, 5, (5.0, 5.0)),
    ],
)
def test_coarse_range(low: float, high: float, rounded: tuple[float, float]) -> None:
    assert coarse_range(low, high) == rounded
    lo, hi = coarse_range(low, high)
    assert lo <= low and hi >= high and hi - lo <= 3 * (high - low) + 1e-12


def test_bounds_are_a_range_of_additive_noise() -> None:
    with pytest.raises(ValueError, match="bounds"):
        PerturbColumn(name="age", noise="gaussian", privacy=0.5, bounds=(5, 5))
    with pytest.raises(ValueError, match="bounds"):
        PerturbColumn(name="sex", noise="randomized_response", retention=0.8, bounds=(0, 1))
