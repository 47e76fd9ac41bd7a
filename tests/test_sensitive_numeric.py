"""A numeric sensitive attribute with thousands of distinct values: run, verify, evaluate.

The table is shaped like a wage survey (education, experience, ethnicity and region as
quasi-identifiers, a wage in cents as the sensitive attribute), generated here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from sparkanon.cli import main
from sparkanon.errors import EXIT_OK, EXIT_USER, MeasureUnavailableError
from tests.evaluation.test_evaluate import _close

EDUCATION = ["primary", "lower-secondary", "upper-secondary", "vocational", "bachelor", "master"]
ETHNICITY = ["white", "black", "hispanic", "other"]
REGION = ["north-east", "mid-west", "south", "west"]
MISSING_WAGES = 7
"""Rows whose wage is the missing-value token ``?`` (dropped by the job, kept as read)."""


def survey_frame(rows: int, seed: int) -> pd.DataFrame:
    """Survey-shaped rows: wages in cents, lognormal, rising with education and experience."""
    rng = np.random.default_rng(seed)
    education = rng.integers(0, len(EDUCATION), rows)
    experience = rng.integers(0, 46, rows)
    log_wage = 2.3 + 0.12 * education + 0.02 * experience + rng.normal(0, 0.45, rows)
    wage = np.round(np.exp(log_wage), 2)
    frame = pd.DataFrame(
        {
            "education": np.array(EDUCATION)[education],
            "experience": experience,
            "ethnicity": rng.choice(ETHNICITY, rows, p=[0.7, 0.12, 0.12, 0.06]),
            "region": rng.choice(REGION, rows),
            "wage": [f"{w:.2f}" for w in wage],
        }
    )
    frame.loc[rng.choice(rows, MISSING_WAGES, replace=False), "wage"] = "?"
    return frame


def survey_config(data: Path, out: Path, **sensitive: Any) -> dict[str, Any]:
    """Mondrian k=5 over the four quasi-identifiers, the wage sensitive."""
    return {
        "input": {
            "format": "csv",
            "path": str(data),
            "options": {"header": True},
            "missing_values": ["?", ""],
            "on_missing": "drop",
        },
        "attributes": [
            {"name": "education", "kind": "ordinal", "order": EDUCATION},
            {"name": "experience", "kind": "continuous"},
            {"name": "ethnicity", "kind": "nominal"},
            {"name": "region", "kind": "nominal"},
        ],
        "sensitive": {"name": "wage", **sensitive},
        "model": {"name": "k", "k": 5},
        "algorithm": {"name": "mondrian", "mode": "strict"},
        "output": {"path": str(out), "format": "parquet", "mode": "overwrite"},
        "seed": 1,
    }


def _write(tmp_path: Path, frame: pd.DataFrame, **sensitive: Any) -> tuple[Path, Path]:
    data = tmp_path / "survey.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "out"
    job = tmp_path / "survey.yaml"
    job.write_text(yaml.safe_dump(survey_config(data, out, **sensitive)), encoding="utf-8")
    return job, out


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    frame = survey_frame(3000, seed=5)
    wages = frame.loc[frame["wage"] != "?", "wage"]
    assert wages.nunique() > 1000  # more than the skewness attack compares as codes
    return frame


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _numeric_attacks(evaluation: dict[str, Any], wages: pd.Series) -> None:
    """The attacks read the wage as numbers: binned ordered distance, similarity by range."""
    assert evaluation["view"]["sensitive_kind"] == "numeric"
    assert not [e for e in evaluation["not_computed"] if e["measure"].startswith("attacks")]
    attacks = evaluation["attacks"]
    skew = attacks["skewness"]
    assert skew["distance"] == "emd_ordered" and skew["binned"] is True
    assert skew["values"] == 1000  # the wage's range cut in 1000 bins, no null code
    assert 0 < skew["mean"] <= skew["max"] <= 1
    assert attacks["similarity"]["reading"] == "numeric_range"
    assert attacks["rows"] == len(wages) - MISSING_WAGES
    # k = 5 with thousands of wages: classes of one wage are rare, not the rule.
    assert attacks["homogeneity"]["share"] < 0.5
    assert sum(skew["histogram"]["counts"]) == attacks["rows"]


@pytest.mark.report
def test_a_survey_release_with_a_numeric_wage_runs_verifies_and_commits_its_report(
    tmp_path, capsys, survey
) -> None:
    job, out = _write(tmp_path, survey)
    code, _, err = _run(["run", str(job), "--engine", "local", "--quiet"], capsys)
    assert code == EXIT_OK, err
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["verified"] is True
    assert (out / "report.html").is_file()
    evaluation = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    _numeric_attacks(evaluation, survey["wage"])
    assert evaluation["not_computed"] == []
    assert not any("left out" in w for w in metrics["warnings"])
    # The utility compares the wage over bins of its range, with an ordered distance.
    wage = evaluation["utility"]["distance"]["wage"]
    assert wage["bins"] == 20 and 0 <= wage["emd"] <= wage["tvd"] + 1e-12

    # sparkanon evaluate on the committed output, with the wage as the classifier's label
    # (predicted as its bin) on held-out rows.
    holdout = tmp_path / "holdout.csv"
    survey_frame(500, seed=6).to_csv(holdout, index=False)
    code, stdout, err = _run(
        [
            "evaluate",
            str(out),
            "--engine",
            "local",
            "--label",
            "wage",
            "--holdout",
            str(holdout),
            "--out",
            str(tmp_path / "again"),
        ],
        capsys,
    )
    assert code == EXIT_OK, err
    assert json.loads(stdout)["not_computed"] == []
    again = json.loads((tmp_path / "again" / "evaluation.json").read_text(encoding="utf-8"))
    _numeric_attacks(again, survey["wage"])
    assert again["attacks"] == evaluation["attacks"]
    clf = again["utility"]["classification"]
    assert clf["target"] == "wage" and clf["label_bins"] == 20
    assert clf["test_rows"] == 500 - MISSING_WAGES
    assert 0 < clf["majority"] <= clf["accuracy_original"] + 0.1


@pytest.mark.spark
def test_evaluate_reads_the_numeric_wage_the_same_on_both_engines(tmp_path, capsys, spark) -> None:
    frame = survey_frame(1500, seed=7)
    assert frame.loc[frame["wage"] != "?", "wage"].nunique() > 1000
    job, out = _write(tmp_path, frame)
    code, _, err = _run(["run", str(job), "--engine", "local", "--quiet"], capsys)
    assert code == EXIT_OK, err
    figures = {}
    for engine in ("local", "spark"):
        code, _, err = _run(
            ["evaluate", str(out), "--engine", engine, "--out", str(tmp_path / engine)], capsys
        )
        assert code == EXIT_OK, err
        figures[engine] = json.loads((tmp_path / engine / "evaluation.json").read_text())
    for got in figures.values():
        _numeric_attacks(got, frame["wage"])
        assert got["not_computed"] == [] and "wage" in got["utility"]["distance"]
    assert _close(figures["local"], figures["spark"]) == []


# --------------------------------------------------------------------------- the kind


def _kind(tmp_path: Path, frame: pd.DataFrame, **sensitive: Any) -> str:
    from sparkanon.engine.local import LocalEngine
    from sparkanon.evaluation.evaluate import read_input_rows, sensitive_kind, settings_of
    from sparkanon.families import load_config

    job, _ = _write(tmp_path, frame, **sensitive)
    config = load_config(str(job))
    engine = LocalEngine()
    rows = read_input_rows(engine, config, settings_of(config))
    return sensitive_kind(engine, rows, config, "test")


def test_auto_reads_many_numbers_as_numeric_and_few_codes_as_categories(tmp_path) -> None:
    frame = survey_frame(1500, seed=8)
    assert _kind(tmp_path, frame) == "numeric"
    codes = frame.assign(wage=[str(1 + i % 5) for i in range(len(frame))])
    assert _kind(tmp_path, codes) == "categorical"
    assert _kind(tmp_path, codes, kind="numeric") == "numeric"
    # A text among the numbers: categories under auto.
    texted = frame.copy()
    texted.loc[3, "wage"] = "n/a"
    assert _kind(tmp_path, texted) == "categorical"
    # Declared values keep the declared domain's categories.
    assert _kind(tmp_path, codes, values=["1", "2", "3", "4", "5"]) == "categorical"
    assert _kind(tmp_path, frame, kind="categorical") == "categorical"


def test_auto_reads_a_number_typed_column_as_numeric(tmp_path) -> None:
    from sparkanon.engine.local import LocalEngine
    from sparkanon.evaluation.evaluate import sensitive_kind

    frame = pd.DataFrame({"education": ["a"] * 4, "wage": [1, 2, 2, 3]})
    data, out = tmp_path / "x.csv", tmp_path / "out"
    from sparkanon.families import parse_config

    config = parse_config(survey_config(data, out), "test")
    assert sensitive_kind(LocalEngine(), frame, config, "test") == "numeric"
    frame["wage"] = frame["wage"].astype(str)
    assert sensitive_kind(LocalEngine(), frame, config, "test") == "categorical"


def test_a_declared_numeric_wage_holding_text_is_refused_naming_it(tmp_path, capsys) -> None:
    frame = survey_frame(300, seed=9)
    frame.loc[11, "wage"] = "twelve"
    job, _ = _write(tmp_path, frame, kind="numeric")
    code, _, err = _run(["evaluate", str(job), "--engine", "local"], capsys)
    assert code == EXIT_USER
    assert "'wage'" in err and "'twelve'" in err and "sensitive.kind" in err
    assert "input.missing_values" in err


# --------------------------------------------------------------------------- not computed


@pytest.mark.report
def test_a_measure_that_cannot_be_computed_is_recorded_and_the_run_commits(
    tmp_path, capsys, monkeypatch
) -> None:
    from sparkanon.risk import attacks

    def unavailable(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise MeasureUnavailableError("no can do; set sensitive.kind: numeric", ("skewness",))

    real = attacks.attacks_on_engine

    def attacks_without_skewness(engine, table, view, **kwargs):  # noqa: ANN001, ANN202
        if view.sensitive is not None:
            unavailable()
        return real(engine, table, view, **kwargs)

    monkeypatch.setattr(attacks, "attacks_on_engine", attacks_without_skewness)
    job, out = _write(tmp_path, survey_frame(300, seed=10))
    code, _, err = _run(["run", str(job), "--engine", "local"], capsys)
    assert code == EXIT_OK, err
    assert "attacks.skewness not computed" in err
    evaluation = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["not_computed"] == [
        {"measure": "attacks.skewness", "reason": "no can do; set sensitive.kind: numeric"}
    ]
    assert "skewness" not in evaluation["attacks"]
    assert evaluation["attacks"]["linkage"]  # the attacks that need no sensitive value
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert any("attacks.skewness" in w for w in metrics["warnings"])
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Not computed" in html and "no can do" in html


def test_a_wage_read_as_categories_leaves_the_sensitive_attacks_out_with_the_fix(
    tmp_path, capsys, survey
) -> None:
    job, _ = _write(tmp_path, survey, kind="categorical")
    code, stdout, err = _run(
        ["evaluate", str(job), "--engine", "local", "--out", str(tmp_path / "ev")], capsys
    )
    assert code == EXIT_OK, err
    left = json.loads(stdout)["not_computed"]
    assert [e["measure"] for e in left] == [
        "attacks.homogeneity",
        "attacks.similarity",
        "attacks.skewness",
    ]
    assert all("sensitive.kind: numeric" in e["reason"] for e in left)
    evaluation = json.loads((tmp_path / "ev" / "evaluation.json").read_text())
    assert "skewness" not in evaluation["attacks"] and evaluation["attacks"]["linkage"]
