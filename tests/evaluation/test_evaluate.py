"""``sparkanon evaluate`` and the report a run writes: every family, bad input, both engines."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

import sparkanon
from sparkanon.cli import main
from sparkanon.config.published import published_config_yaml
from sparkanon.errors import EXIT_OK, EXIT_USER
from sparkanon.families import load_config, parse_config
from tests._inputs import ROOT, adult_rows, write_adult_csv, write_rows


def test_every_resolved_config_loads_back_as_itself() -> None:
    # evaluate reads an output's config.yaml: it must load (a perturbation job's empty
    # model list used to be written and then refused).
    for path in sorted((ROOT / "conf").glob("*.yaml")):
        config = load_config(path)
        assert parse_config(yaml.safe_load(published_config_yaml(config)), str(path)) == config


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


SENTINEL_QI = "Zq-Sentinel-Country"
SENTINEL_SENS = "Zq-Sentinel-Job"


def _split_adult(
    tmp_path: Path, train: int, test: int, sentinel: bool = False
) -> tuple[Path, Path]:
    """Adult's first ``train`` rows (the first one carrying sentinel values if asked) and
    the next ``test`` as held-out rows."""
    rows = adult_rows(train + test)
    if sentinel:
        rows[0]["native-country"] = SENTINEL_QI
        rows[0]["occupation"] = SENTINEL_SENS
    return (
        write_rows(tmp_path, rows[:train], "train.csv"),
        write_rows(tmp_path, rows[train:], "test.csv"),
    )


def _hierarchy_with_sentinel(tmp_path: Path) -> Path:
    text = (ROOT / "data/adult/hierarchies/native-country.csv").read_text(encoding="utf-8")
    path = tmp_path / "native-country.csv"
    path.write_text(text.rstrip("\n") + f"\n{SENTINEL_QI};North America;*\n", encoding="utf-8")
    return path


@pytest.mark.report
def test_run_writes_the_report_beside_metrics_with_no_row_value(tmp_path, capsys) -> None:
    train, test = _split_adult(tmp_path, 600, 300, sentinel=True)
    out = tmp_path / "out"
    args = [
        "run",
        str(ROOT / "conf/adult_mondrian_k.yaml"),
        "--engine",
        "local",
        "--quiet",
        "--set",
        f"input.path={train}",
        "--set",
        f"output.path={out}",
        "--set",
        f"report.holdout={test}",
        "--set",
        "report.label=income",
        "--set",
        "report.suda_max_size=3",
        "--set",
        f"attributes.6.hierarchy={_hierarchy_with_sentinel(tmp_path)}",
    ]
    code, _, err = _run(args, capsys)
    assert code == EXIT_OK, err
    assert {p.name for p in out.iterdir()} >= {
        "data",
        "metrics.json",
        "evaluation.json",
        "report.html",
    }
    evaluation = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    before, after = evaluation["risk"]["before"], evaluation["risk"]["after"]
    assert before["rows"] == after["rows"] == 600
    # The input has sample uniques; the k=10 release has none and no class under 10.
    assert before["arx"]["sample_uniques"] > 0 and after["arx"]["sample_uniques"] == 0
    assert after["arx"]["prosecutor"]["highest"] <= 0.1
    assert after["suda2"]["records_with_msu"] == 0 < before["suda2"]["records_with_msu"]
    clf = evaluation["utility"]["classification"]
    assert clf["test_rows"] == 300 and 0.5 < clf["accuracy_release"] <= 1
    assert set(evaluation["utility"]["distance"]) >= {"age", "education", "native-country"}
    html = (out / "report.html").read_text(encoding="utf-8")
    text = (out / "evaluation.json").read_text(encoding="utf-8")
    for sentinel in (SENTINEL_QI, SENTINEL_SENS):
        assert sentinel not in html and sentinel not in text
    assert "http://" not in html and "https://" not in html


@pytest.mark.report
def test_report_enabled_false_writes_no_report(tmp_path, capsys) -> None:
    out, job = _adult_job(tmp_path, "adult_mondrian_k.yaml", 300, **{"report.enabled": "false"})
    code, _, err = _run(["run", *job, "--quiet"], capsys)
    assert code == EXIT_OK, err
    assert not (out / "report.html").exists() and not (out / "evaluation.json").exists()


FAMILIES = [
    ("adult_mondrian_k.yaml", "blocks", 400),
    ("adult_fd_k.yaml", "full_domain", 400),
    ("adult_perturb.yaml", "perturbation", 400),
    ("adult_condense.yaml", "synthesis", 400),
]


@pytest.mark.parametrize(("conf", "family", "rows"), FAMILIES, ids=[f for _, f, _ in FAMILIES])
def test_evaluate_a_committed_release_of_every_one_table_family(
    tmp_path, capsys, conf, family, rows
) -> None:
    train, test = _split_adult(tmp_path, rows, 200)
    out = tmp_path / "out"
    run = [
        "run",
        str(ROOT / "conf" / conf),
        "--engine",
        "local",
        "--quiet",
        "--set",
        f"input.path={train}",
        "--set",
        f"output.path={out}",
    ]
    if conf == "adult_fd_k.yaml":
        run += ["--set", "output.max_suppressed_share=0.5"]
    code, _, err = _run(run, capsys)
    assert code == EXIT_OK, err
    assert not (out / "report.html").exists()  # the runner's report is off in this test
    code, printed, err = _run(
        [
            "evaluate",
            str(out),
            "--engine",
            "local",
            "--holdout",
            str(test),
            "--label",
            "income",
            "--attacks",
            "50",
        ],
        capsys,
    )
    assert code == EXIT_OK, err
    summary = json.loads(printed)
    assert summary["table"]["family"] == family
    evaluation = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["risk"]["before"]["rows"] >= evaluation["risk"]["after"]["rows"] > 0
    assert evaluation["utility"]["classification"]["test_rows"] == 200
    if family in ("perturbation", "synthesis"):
        anon = evaluation["anonymeter"]
        for attack in ("singling_out_univariate", "linkability", "inference"):
            assert 0 <= anon[attack]["risk"]["value"] <= 1
    else:
        assert evaluation["anonymeter"] is None
        assert (
            evaluation["attacks"]["linkage"][0]["known"] == evaluation["view"]["quasi_identifiers"]
        )
    if family == "perturbation":
        assert set(evaluation["family"]["reconstruction"]["columns"]) >= {"age", "sex"}
    if family == "synthesis":
        # metrics.json publishes no covariance matrix (an exact moment of the input)
        assert evaluation["family"]["covariance"] is None
    assert "<html" in (out / "report.html").read_text(encoding="utf-8").lower()


def test_evaluate_a_relational_transaction_release(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    code, _, err = _run(
        [
            "run",
            str(ROOT / "conf/completejourney_paa.yaml"),
            "--engine",
            "local",
            "--quiet",
            "--set",
            f"output.path={out}",
        ],
        capsys,
    )
    assert code == EXIT_OK, err
    code, printed, err = _run(["evaluate", str(out), "--engine", "local"], capsys)
    assert code == EXIT_OK, err
    evaluation = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["table"]["family"] == "transaction"
    assert evaluation["risk"]["after"]["rows"] > 0


def test_evaluate_a_raw_input_from_its_config_and_the_python_api(tmp_path, capsys) -> None:

    _, job = _adult_job(tmp_path, "adult_mondrian_k.yaml", 300)
    code, printed, err = _run(["evaluate", *job, "--out", str(tmp_path / "ev")], capsys)
    assert code == EXIT_OK, err
    evaluation = json.loads((tmp_path / "ev" / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["table"]["kind"] == "input" and evaluation["risk"]["before"] is None
    assert evaluation["risk"]["after"]["rows"] == 300
    # The Python API gives the same figures without writing.
    api = sparkanon.evaluate(job[0], engine="local", write=False, overrides=[job[2]])
    assert api["risk"] == evaluation["risk"] and api["attacks"] == evaluation["attacks"]


def _close(a, b, path: str = "") -> list[str]:
    """Where two evaluations differ (floats to 1e-9 relative)."""
    if isinstance(a, dict) and isinstance(b, dict):
        diffs = [f"{path}: keys {sorted(set(a) ^ set(b))}"] if set(a) != set(b) else []
        return diffs + [d for k in a if k in b for d in _close(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: lengths {len(a)} != {len(b)}"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _close(x, y, f"{path}[{i}]")
        ]
    if isinstance(a, float) or isinstance(b, float):
        ok = a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
        return [] if ok else [f"{path}: {a} != {b}"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


@pytest.mark.spark
@pytest.mark.parametrize("conf", ["adult_perturb.yaml"])
def test_evaluate_gives_the_same_figures_on_both_engines(spark, tmp_path, capsys, conf) -> None:
    """A perturbed release runs every step: risk before and after (ARX with a population
    table, sdcMicro, SUDA2), the attacks, the anonymeter-style attacks, the utility and the
    reconstruction; the same evaluation on both engines, to 1e-9."""
    train, test = _split_adult(tmp_path, 200, 100)
    out = tmp_path / "out"
    code, _, err = _run(
        [
            "run",
            str(ROOT / "conf" / conf),
            "--engine",
            "local",
            "--quiet",
            "--set",
            f"input.path={train}",
            "--set",
            f"output.path={out}",
        ],
        capsys,
    )
    assert code == EXIT_OK, err
    options = [
        "--holdout",
        str(test),
        "--label",
        "income",
        "--attacks",
        "20",
        "--suda-max-size",
        "2",
    ]
    # The input's journalist risk over a population table (a join of class tables).
    population = write_rows(tmp_path, adult_rows(300), "population.csv")
    options += ["--population", str(population)]
    figures = {}
    for engine in ("local", "spark"):
        code, _, err = _run(
            ["evaluate", str(out), "--engine", engine, *options, "--out", str(tmp_path / engine)],
            capsys,
        )
        assert code == EXIT_OK, err
        figures[engine] = json.loads((tmp_path / engine / "evaluation.json").read_text())
    assert _close(figures["local"], figures["spark"]) == []


def test_a_weight_column_gives_sdcmicros_weighted_individual_risk() -> None:
    from sparkanon.engine.local import LocalEngine
    from sparkanon.evaluation.evaluate import Subject, evaluate, settings_of
    from sparkanon.risk.sdcmicro import individual_risk

    config = load_config(ROOT / "conf/adult_mondrian_k.yaml")
    frame = pd.DataFrame(adult_rows(40))
    frame["w"] = [10.0] * 20 + [30.0] * 20
    settings = settings_of(config, weight="w", quasi_identifiers=["sex"])
    got = evaluate(LocalEngine(), Subject(config, frame, None, {}, "t"), settings)
    sdc = got["risk"]["after"]["sdcmicro"]
    assert sdc["weight"] == "w"
    # Each sex's class: fk rows, Fk the sum of their weights; the mean over records.
    fk = frame.groupby("sex").size()
    big = frame.groupby("sex")["w"].sum()
    risk = individual_risk(fk.to_numpy(float), big.to_numpy(float))
    expected = float((risk * fk.to_numpy()).sum() / fk.sum())
    assert sdc["individual"]["mean"] == pytest.approx(expected)
    with pytest.raises(Exception, match="report.weight"):
        evaluate(LocalEngine(), Subject(config, frame.drop(columns="w"), None, {}, "t"), settings)


def test_a_population_table_gives_the_journalist_the_population_class_sizes(tmp_path, capsys):
    rows = adult_rows(900)
    sample = write_rows(tmp_path, rows[:300], "sample.csv")
    population = write_rows(tmp_path, rows[:900], "population.csv")
    config = str(ROOT / "conf/adult_mondrian_k.yaml")
    args = [
        "evaluate",
        config,
        "--set",
        f"input.path={sample}",
        "--engine",
        "local",
        "--quasi-identifiers",
        "age,sex",
        "--out",
        str(tmp_path / "ev"),
    ]
    code, _, err = _run([*args, "--population", str(population)], capsys)
    assert code == EXIT_OK, err
    arx = json.loads((tmp_path / "ev" / "evaluation.json").read_text())["risk"]["after"]["arx"]
    frame = pd.DataFrame(rows)
    f = frame[:300].groupby(["age", "sex"]).size()
    big = frame.groupby(["age", "sex"]).size().reindex(f.index)
    assert arx["population_source"] == "table"
    assert arx["journalist"]["highest"] == pytest.approx(1 / big.min())
    assert arx["prosecutor"]["highest"] == pytest.approx(1 / f.min())
    assert arx["marketer"]["average"] == pytest.approx(float((f / big).sum() / 300))
    # A "population" that lacks classes of the input is refused, naming the key.
    other = write_rows(tmp_path, rows[300:900], "other.csv")
    code, _, err = _run([*args, "--population", str(other)], capsys)
    assert code == EXIT_USER and "report.population" in err and "not in the population" in err


def test_a_release_without_the_row_level_key_is_read_by_its_family() -> None:
    from sparkanon.evaluation.evaluate import _row_level

    assert _row_level("perturbation") and _row_level("synthesis")
    assert not _row_level("blocks") and not _row_level("full_domain")
    assert not _row_level(None) and not _row_level("no_such_family")
