"""``sparkanon evaluate`` and the report a run writes: every family, bad input, both engines."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sparkanon.cli import main
from sparkanon.config import load_config, parse_config
from sparkanon.errors import EXIT_USER
from sparkanon.stages.commit import resolved_config_yaml
from tests._inputs import write_adult_csv

ROOT = Path(__file__).resolve().parents[1]


def test_every_resolved_config_loads_back_as_itself() -> None:
    # evaluate reads an output's config.yaml: it must load (a perturbation job's empty
    # model list used to be written and then refused).
    for path in sorted((ROOT / "conf").glob("*.yaml")):
        config = load_config(path)
        assert parse_config(yaml.safe_load(resolved_config_yaml(config)), str(path)) == config


def _adult_job(tmp_path: Path, conf: str, rows: int, **sets: str) -> tuple[Path, list[str]]:
    data = write_adult_csv(tmp_path, rows, "adult.csv")
    out = tmp_path / "out"
    args = ["--set", f"input.path={data}", "--set", f"output.path={out}", "--engine", "local"]
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    return out, [str(ROOT / "conf" / conf), *args]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_evaluate_refuses_an_output_without_metrics(tmp_path, capsys) -> None:
    (tmp_path / "data").mkdir()
    code, _, err = _run(["evaluate", str(tmp_path), "--engine", "local"], capsys)
    assert code == EXIT_USER
    assert "no metrics.json" in err and str(tmp_path) in err


def test_evaluate_refuses_a_sampling_fraction_outside_0_1(tmp_path, capsys) -> None:
    _, job = _adult_job(tmp_path, "adult_mondrian_k.yaml", 300)
    for bad in ("0", "1.5", "-0.2"):
        code, _, err = _run(["evaluate", job[0], *job[1:], "--sampling-fraction", bad], capsys)
        assert code == EXIT_USER, err
        assert "--sampling-fraction" in err and bad in err


def test_evaluate_refuses_a_quasi_identifier_not_in_the_table(tmp_path, capsys) -> None:
    _, job = _adult_job(tmp_path, "adult_mondrian_k.yaml", 300)
    code, _, err = _run(
        ["evaluate", job[0], *job[1:], "--quasi-identifiers", "age,zipcode"], capsys
    )
    assert code == EXIT_USER
    assert "zipcode" in err and "not a column" in err


def test_evaluate_refuses_a_missing_holdout(tmp_path, capsys) -> None:
    _, job = _adult_job(tmp_path, "adult_mondrian_k.yaml", 300)
    code, _, err = _run(
        ["evaluate", job[0], *job[1:], "--holdout", str(tmp_path / "nope.csv")], capsys
    )
    assert code == EXIT_USER and "nope.csv" in err
