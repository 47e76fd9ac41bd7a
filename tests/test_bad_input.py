"""Bad config or input through the command line, on the local (pandas) engine.

(The empty-input and internal-column checks run on Spark too.)

The contract: a clear error naming the problem (key, column, value) on stderr,
exit code 2, and nothing written to the output path (no leftover
``<out>.__sparkanon_tmp_*`` sibling either). A privacy violation found by
verification exits with 3, again writing nothing. Plus two small successful
runs for the row accounting.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import sparkanon.families.base as family_base
from sparkanon.cli import run_command, validate_command
from sparkanon.errors import EXIT_OK, EXIT_PRIVACY, EXIT_USER
from sparkanon.io import MALFORMED
from tests._inputs import (
    HIERARCHIES,
    adult_header,
    adult_rows,
    attribute,
    leftovers,
    make_config,
    mark_as_output,
    write_adult_csv,
    write_config,
    write_rows,
)

ROUTINE_OFFICE = ("Adm-clerical", "Sales", "Tech-support")
QI = ["age", "education", "marital-status", "native-country", "workclass", "sex", "race"]


def _run(tmp_path: Path, cfg: dict[str, Any], overrides: list[str] | None = None) -> int:
    return run_command(str(write_config(tmp_path, cfg)), overrides or [], engine_name="local")


def _refused(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    cfg: dict[str, Any],
    *needles: str,
    overrides: list[str] | None = None,
) -> str:
    """Run, expect exit 2, every needle in stderr and nothing at the output path."""
    out = Path(cfg["output"]["path"])
    code = _run(tmp_path, cfg, overrides)
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert "internal error" not in err, err
    assert err.startswith("sparkanon: error: "), err
    for needle in needles:
        assert needle in err, f"{needle!r} not in: {err}"
    assert leftovers(out) == [], f"something was written: {leftovers(out)}"
    return err


def _set(index: int, **values: str) -> Callable[[list[dict[str, str]]], None]:
    def edit(rows: list[dict[str, str]]) -> None:
        rows[index].update(values)

    return edit


# ---------------------------------------------------------------- columns


def test_config_column_absent_from_input(tmp_path, capsys) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 50))
    cfg["attributes"].append({"name": "salary", "kind": "keep"})
    _refused(capsys, tmp_path, cfg, "'salary'", "not in the input")


@pytest.mark.parametrize("dropped", ["race", "age", "occupation", "income"])
def test_input_lacks_a_configured_column(tmp_path, capsys, dropped: str) -> None:
    columns = [c for c in adult_header() if c != dropped]
    inp = write_rows(tmp_path, adult_rows(50), columns=columns)
    cfg = make_config(tmp_path, inp)
    _refused(capsys, tmp_path, cfg, f"'{dropped}'", "not in the input")


def test_input_path_does_not_exist(tmp_path, capsys) -> None:
    missing = tmp_path / "nowhere.csv"
    cfg = make_config(tmp_path, missing)
    _refused(capsys, tmp_path, cfg, "input.path", str(missing), "does not exist")


# ---------------------------------------------------------------- values


def test_value_absent_from_hierarchy(tmp_path, capsys) -> None:
    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 60, edit=_set(17, **{"native-country": "Atlantis"}))
    )
    _refused(
        capsys, tmp_path, cfg, "'Atlantis'", "'native-country'", "hierarchy", "native-country.csv"
    )


def test_ordinal_value_not_in_its_order(tmp_path, capsys) -> None:
    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 60, edit=_set(5, education="Kindergarten"))
    )
    _refused(capsys, tmp_path, cfg, "'Kindergarten'", "'education'", "order")


def test_nominal_value_not_in_declared_values(tmp_path, capsys) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 60))
    attribute(cfg, "sex")["values"] = ["Male"]
    _refused(capsys, tmp_path, cfg, "'Female'", "'sex'", "values")


@pytest.mark.parametrize("bad", ["forty", "3O", "12 years"])
def test_non_numeric_value_in_continuous_column(tmp_path, capsys, bad: str) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 60, edit=_set(9, age=bad)))
    _refused(capsys, tmp_path, cfg, f"'{bad}'", "'age'", "continuous")


def test_sensitive_value_in_no_level(tmp_path, capsys) -> None:
    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 60, edit=_set(30, occupation="Astronaut"))
    )
    _refused(capsys, tmp_path, cfg, "'Astronaut'", "'occupation'", "level")


def test_on_missing_error_with_question_marks(tmp_path, capsys) -> None:
    def edit(rows: list[dict[str, str]]) -> None:
        rows[3]["workclass"] = "?"
        rows[7]["occupation"] = "?"

    cfg = make_config(
        tmp_path,
        write_adult_csv(tmp_path, 60, edit=edit),
        sections={"input": {"on_missing": "error"}},
    )
    _refused(capsys, tmp_path, cfg, "'workclass'", "'occupation'", "'?'", "on_missing")


# ---------------------------------------------------------------- empty input


def test_empty_input_header_only(tmp_path, capsys) -> None:
    inp = write_rows(tmp_path, [])
    cfg = make_config(tmp_path, inp)
    _refused(capsys, tmp_path, cfg, str(inp), "empty")


def test_empty_input_zero_bytes(tmp_path, capsys) -> None:
    inp = tmp_path / "input.csv"
    inp.write_bytes(b"")
    cfg = make_config(tmp_path, inp)
    _refused(capsys, tmp_path, cfg, str(inp), "empty")


def _empty_inputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Inputs without a column of their own, and the file each error must name.

    A 0-byte file, alone or in a directory beside a good one, and a gzip file holding
    no text (not 0 bytes, so it is read, and holds no header).
    """
    zero = tmp_path / "zero.csv"
    zero.write_bytes(b"")
    folder = tmp_path / "folder"
    folder.mkdir()
    write_adult_csv(folder, 20, name="a.csv")
    (folder / "b.csv").write_bytes(b"")
    gz = tmp_path / "blank.csv.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(b"")
    return {
        "zero_bytes": (zero, str(zero)),
        "zero_bytes_in_directory": (folder, str(folder / "b.csv")),
        "no_header": (gz, str(gz)),
    }


def _refused_as_empty(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, case: str
) -> None:
    """``run`` and ``validate`` of an empty input: exit 2 naming the file as empty."""
    inp, named = _empty_inputs(tmp_path)[case]
    cfg = make_config(tmp_path, inp)
    path = str(write_config(tmp_path, cfg))
    for command in (run_command, validate_command):
        assert command(path, [], engine_name=engine) == EXIT_USER, command
        err = capsys.readouterr().err
        assert err.startswith("sparkanon: error: "), err
        assert f"input {named!r} is empty" in err, err
        assert "0 bytes" in err if case.startswith("zero") else "no columns" in err, err
        assert MALFORMED not in err and "not in the input" not in err, err
        assert leftovers(Path(cfg["output"]["path"])) == []


@pytest.mark.parametrize("case", ["zero_bytes", "zero_bytes_in_directory", "no_header"])
def test_empty_input_is_named_as_empty(tmp_path, capsys, case: str) -> None:
    _refused_as_empty(capsys, tmp_path, "local", case)


@pytest.mark.spark
def test_empty_input_is_named_as_empty_on_spark(spark, tmp_path, capsys) -> None:
    for case in ("zero_bytes", "zero_bytes_in_directory", "no_header"):
        (tmp_path / case).mkdir()
        _refused_as_empty(capsys, tmp_path / case, "spark", case)


@pytest.mark.parametrize("engine", ["local", pytest.param("spark", marks=pytest.mark.spark)])
def test_internal_columns_stay_out_of_messages(request, tmp_path, capsys, engine: str) -> None:
    """The reader's own column (flagging malformed CSV records) is not an input column."""
    if engine == "spark":
        request.getfixturevalue("spark")
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 20))
    path = str(write_config(tmp_path, cfg))
    assert validate_command(path, [], engine_name=engine) == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert report["input_columns"] == adult_header()
    assert validate_command(path, ["attributes.0.name=agee"], engine_name=engine) == EXIT_USER
    err = capsys.readouterr().err
    assert "['agee']" in err and f"the input has {adult_header()}" in err, err
    assert MALFORMED not in err


def test_empty_input_directory(tmp_path, capsys) -> None:
    inp = tmp_path / "input_dir"
    inp.mkdir()
    cfg = make_config(tmp_path, inp)
    _refused(capsys, tmp_path, cfg, str(inp), "no files")


def test_no_rows_left_after_dropping_missing(tmp_path, capsys) -> None:
    def edit(rows: list[dict[str, str]]) -> None:
        for row in rows:
            row["workclass"] = "?"

    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 20, edit=edit))
    _refused(capsys, tmp_path, cfg, "no rows left", "missing")


# ---------------------------------------------------------------- feasibility


def test_k_larger_than_rows(tmp_path, capsys) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 10), sections={"model": {"k": 20}})
    _refused(capsys, tmp_path, cfg, "model.k = 20:", "holds only 10 usable rows", "at most 10")


def test_k_larger_than_usable_rows_after_drop(tmp_path, capsys) -> None:
    def edit(rows: list[dict[str, str]]) -> None:
        for row in rows[:25]:
            row["age"] = "?"

    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 30, edit=edit), sections={"model": {"k": 8}}
    )
    _refused(capsys, tmp_path, cfg, "model.k = 8:", "only 5 usable rows", "lower k to at most 5")


def test_p_larger_than_distinct_sensitive_values_in_data(tmp_path, capsys) -> None:
    rows = [r for r in adult_rows(2000) if r["occupation"] in ("Adm-clerical", "Exec-managerial")][
        :100
    ]
    cfg = make_config(tmp_path, write_rows(tmp_path, rows), sections={"model": {"p": 3, "k": 4}})
    _refused(
        capsys,
        tmp_path,
        cfg,
        "model.p = 3:",
        "holds 2 distinct values of 'occupation'",
        "lower p to at most 2",
    )


def test_h_larger_than_levels_present_in_data(tmp_path, capsys) -> None:
    rows = [r for r in adult_rows(2000) if r["occupation"] in ROUTINE_OFFICE][:100]
    cfg = make_config(tmp_path, write_rows(tmp_path, rows))
    _refused(
        capsys, tmp_path, cfg, "model.h = 2:", "'occupation'", "1 level(s)", "lower h to at most 1"
    )


def _two_occupations(tmp_path: Path) -> Path:
    rows = [r for r in adult_rows(2000) if r["occupation"] in ("Adm-clerical", "Exec-managerial")]
    return write_rows(tmp_path, rows[:100])


def test_entropy_l_larger_than_distinct_sensitive_values_in_data(tmp_path, capsys) -> None:
    cfg = make_config(
        tmp_path, _two_occupations(tmp_path), sections={"model": {"name": "entropy_l", "l": 3}}
    )
    _refused(
        capsys,
        tmp_path,
        cfg,
        "model.l = 3:",
        "holds 2 distinct values of 'occupation'",
        "lower l to at most 2",
    )


def test_entropy_l_above_the_whole_tables_entropy(tmp_path, capsys) -> None:
    """Enough distinct values, but so skewed that no partition reaches log(l)."""
    rows = [r for r in adult_rows(2000) if r["occupation"] == "Adm-clerical"][:97]
    rows += [r for r in adult_rows(2000) if r["occupation"] == "Sales"][:2]
    rows += [r for r in adult_rows(2000) if r["occupation"] == "Tech-support"][:1]
    cfg = make_config(
        tmp_path,
        write_rows(tmp_path, rows),
        sections={"model": [{"name": "k", "k": 4}, {"name": "entropy_l", "l": 2}]},
    )
    _refused(capsys, tmp_path, cfg, "model.1.l = 2:", "entropy of 'occupation'", "lower l")


def test_entropy_l_in_a_list_names_its_index(tmp_path, capsys) -> None:
    cfg = make_config(
        tmp_path,
        _two_occupations(tmp_path),
        sections={"model": [{"name": "k", "k": 4}, {"name": "entropy_l", "l": 2.5}]},
    )
    _refused(capsys, tmp_path, cfg, "model.1.l = 2.5:", "2 distinct values", "lower l")


def _occupation_hierarchy(tmp_path: Path, missing: str) -> Path:
    """A two-level ARX hierarchy of occupation (``leaf;level;*``) lacking ``missing``."""
    cfg = make_config(tmp_path, tmp_path / "unused.csv")
    lines = [
        f"{value};{level['name']};*"
        for level in cfg["sensitive"]["levels"]
        for value in level["values"]
        if value != missing
    ]
    path = tmp_path / "occupation.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_t_closeness_hierarchy_missing_a_sensitive_value(tmp_path, capsys) -> None:
    hierarchy = _occupation_hierarchy(tmp_path, missing="Sales")
    model = {"name": "t_closeness", "t": 0.3, "ground": "hierarchical", "hierarchy": str(hierarchy)}
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 100), sections={"model": model})
    _refused(
        capsys,
        tmp_path,
        cfg,
        "model:",
        str(hierarchy),
        "'Sales'",
        "'occupation'",
        "not leaves",
        "add a row",
    )


def test_t_closeness_full_hierarchy_runs(tmp_path, capsys) -> None:
    """The same hierarchy with every value: the job succeeds (the refusal above is the value)."""
    hierarchy = _occupation_hierarchy(tmp_path, missing="")
    model = {"name": "t_closeness", "t": 0.5, "ground": "hierarchical", "hierarchy": str(hierarchy)}
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 200), sections={"model": model})
    code = _run(tmp_path, cfg)
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    metrics = json.loads((Path(cfg["output"]["path"]) / "metrics.json").read_text("utf-8"))
    assert metrics["verified"] is True
    assert metrics["achieved"]["max_distance"] <= 0.5 + 1e-9


# ---------------------------------------------------------------- config errors through the CLI


CONFIG_ERRORS: list[tuple[str, Callable[[dict[str, Any]], Any], tuple[str, ...]]] = [
    ("unknown key", lambda c: c["model"].update(kk=3), ("model.kk", "unknown key")),
    ("unknown top-level key", lambda c: c.update(modle={"k": 3}), ("modle", "unknown key")),
    ("missing required key", lambda c: c["model"].pop("k"), ("model.k", "required key is missing")),
    ("bad type", lambda c: c["model"].update(k="eight"), ("model.k", "'eight'")),
    (
        "psi weights",
        lambda c: c["algorithm"].update(psi_weights=[0.4, 0.4]),
        ("algorithm.psi_weights", "[0.4, 0.4]"),
    ),
    (
        "value in two levels",
        lambda c: c["sensitive"]["levels"][2]["values"].append("Sales"),
        ("'Sales'", "'routine-office'", "'manual-service'"),
    ),
    (
        "H > levels",
        lambda c: c.update(model={"name": "hpk", "h": 6, "p": 6, "k": 8}),
        ("model.h = 6:", "only 5 levels", "lower h to at most 5"),
    ),
    (
        "p > k",
        lambda c: c.update(model={"name": "hpk", "h": 2, "p": 5, "k": 4}),
        ("model.p = 5 > k = 4:", "lower p or raise k"),
    ),
    (
        "H > p",
        lambda c: c.update(model={"name": "hpk", "h": 3, "p": 2, "k": 4}),
        ("model.h = 3 > p = 2:", "lower h or raise p"),
    ),
    (
        "p > listed values",
        lambda c: c.update(model={"name": "hpk", "h": 2, "p": 15, "k": 20}),
        ("model.p = 15:", "only 14 values", "lower p to at most 14"),
    ),
    (
        "recursive c = 0",
        lambda c: c.update(model={"name": "recursive_cl", "c": 0, "l": 2}),
        ("model.c:", "greater than 0", "(got 0)"),
    ),
    (
        "t = 0",
        lambda c: c.update(model={"name": "t_closeness", "t": 0}),
        ("model.t:", "greater than 0", "(got 0)"),
    ),
    (
        "t = 1.5",
        lambda c: c.update(model={"name": "t_closeness", "t": 1.5}),
        ("model.t:", "less than or equal to 1", "(got 1.5)"),
    ),
    (
        "t in a list",
        lambda c: c.update(model=[{"name": "k", "k": 4}, {"name": "t_closeness", "t": 1.5}]),
        ("model.1.t:", "less than or equal to 1", "(got 1.5)"),
    ),
    (
        "empty model list",
        lambda c: c.update(model=[]),
        ("model: the model list is empty", "name: k"),
    ),
    (
        "hpk without levels",
        lambda c: c["sensitive"].pop("levels"),
        ("model: hpk needs sensitivity levels; add sensitive.levels",),
    ),
    (
        "parameter of another model",
        lambda c: c.update(model={"name": "k", "k": 4, "p": 2}),
        ("model.p: unknown key", "model 'k' takes no 'p'", "(got 2)"),
    ),
]


@pytest.mark.parametrize(
    ("mutate", "needles"), [c[1:] for c in CONFIG_ERRORS], ids=[c[0] for c in CONFIG_ERRORS]
)
def test_config_error(tmp_path, capsys, mutate, needles: tuple[str, ...]) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 50))
    mutate(cfg)
    _refused(capsys, tmp_path, cfg, *needles)


def test_config_file_missing(tmp_path, capsys) -> None:
    path = tmp_path / "nope.yaml"
    code = run_command(str(path), [], engine_name="local")
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert str(path) in err


@pytest.mark.parametrize(
    ("overrides", "needles"),
    [
        (["model.k"], ("'model.k'", "key=value")),
        (["attributes.99.weight=2"], ("attributes.99",)),
        (["model.k.x=1"], ("model.k.x",)),
        (["model.k=eight"], ("model.k", "'eight'")),
        (["model.p=9"], ("model.p = 9 > k = 4:",)),
        (["model.k=[1,"], ("model.k",)),
    ],
    ids=["no-equals", "bad-index", "not-a-mapping", "bad-type", "p-gt-k", "bad-yaml-value"],
)
def test_bad_override(tmp_path, capsys, overrides: list[str], needles: tuple[str, ...]) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 50))
    _refused(capsys, tmp_path, cfg, *needles, overrides=overrides)


# ---------------------------------------------------------------- hierarchy files


def _workclass_hierarchy(tmp_path: Path, text: str | None = None, extra: str = "") -> Path:
    path = tmp_path / "workclass.csv"
    base = (HIERARCHIES / "workclass.csv").read_text(encoding="utf-8") if text is None else text
    path.write_text(base.rstrip("\n") + "\n" + extra if extra else base, encoding="utf-8")
    return path


MALFORMED_HIERARCHIES: list[tuple[str, dict[str, str], tuple[str, ...]]] = [
    ("ragged line", {"extra": "Odd-job;Non-Government\n"}, ("columns",)),
    ("empty cell", {"extra": "Odd-job;;*\n"}, ("empty cell",)),
    ("leaf twice", {"extra": "Private;Non-Government;*\n"}, ("'Private'", "twice")),
    ("two parents", {"extra": "Odd-job;Government;Other\n"}, ("two parents",)),
    ("several roots", {"extra": "Odd-job;Odd;ROOT\n"}, ("roots",)),
    ("one column", {"text": "Private\nLocal-gov\n"}, ("one column",)),
    ("empty file", {"text": ""}, ("empty",)),
]


@pytest.mark.parametrize(
    ("kwargs", "needles"),
    [m[1:] for m in MALFORMED_HIERARCHIES],
    ids=[m[0] for m in MALFORMED_HIERARCHIES],
)
def test_malformed_hierarchy(
    tmp_path, capsys, kwargs: dict[str, str], needles: tuple[str, ...]
) -> None:
    hier = _workclass_hierarchy(tmp_path, **kwargs)
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 50))
    attribute(cfg, "workclass")["hierarchy"] = str(hier)
    _refused(capsys, tmp_path, cfg, str(hier), "'workclass'", *needles)


def test_hierarchy_file_missing(tmp_path, capsys) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 50))
    missing = tmp_path / "no-such-hierarchy.csv"
    attribute(cfg, "workclass")["hierarchy"] = str(missing)
    _refused(capsys, tmp_path, cfg, str(missing), "'workclass'", "does not exist")


# ---------------------------------------------------------------- output path


def _existing_output(out: Path) -> dict[str, str]:
    """A previous output of sparkanon (its marker included: overwrite may replace it)."""
    mark_as_output(out)
    (out / "data").mkdir()
    (out / "data" / "part-00000.csv").write_text("old,table\n", encoding="utf-8")
    (out / "metrics.json").write_text('{"old": true}', encoding="utf-8")
    return _snapshot(out)


def _snapshot(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): p.read_text(encoding="utf-8")
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def _siblings(out: Path) -> list[Path]:
    return [p for p in leftovers(out) if p != out]


def test_output_exists_without_overwrite(tmp_path, capsys) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 50))
    out = Path(cfg["output"]["path"])
    before = _existing_output(out)
    code = _run(tmp_path, cfg)
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert "output.path" in err
    assert str(out) in err
    assert "exists" in err
    assert _snapshot(out) == before, "the existing output was touched"
    assert _siblings(out) == []


def test_bad_input_leaves_existing_output_alone_under_overwrite(tmp_path, capsys) -> None:
    inp = write_adult_csv(tmp_path, 60, edit=_set(17, **{"native-country": "Atlantis"}))
    cfg = make_config(tmp_path, inp, sections={"output": {"mode": "overwrite"}})
    out = Path(cfg["output"]["path"])
    before = _existing_output(out)
    code = _run(tmp_path, cfg)
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert "'Atlantis'" in err
    assert _snapshot(out) == before
    assert _siblings(out) == []


def test_output_appearing_while_the_job_runs(tmp_path, capsys, monkeypatch) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 200))
    out = Path(cfg["output"]["path"])
    real = family_base.verify
    before: dict[str, str] = {}

    def verify(*args: Any, **kwargs: Any) -> dict[str, Any]:
        before.update(_existing_output(out))  # someone else writes the output meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(family_base, "verify", verify)
    code = _run(tmp_path, cfg)
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert "output.path" in err
    assert str(out) in err
    assert before and _snapshot(out) == before
    assert _siblings(out) == []


# ---------------------------------------------------------------- privacy violation (exit 3)


def _failing_verify(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Make verification report one violating class (keeping the real row count)."""
    real = family_base.verify
    seen: list[dict[str, Any]] = []

    def verify(*args: Any, **kwargs: Any) -> dict[str, Any]:
        verdict = dict(real(*args, **kwargs))
        verdict["violations"] = 1
        seen.append(verdict)
        return verdict

    monkeypatch.setattr(family_base, "verify", verify)
    return seen


def test_privacy_violation_exits_3_and_writes_nothing(tmp_path, capsys, monkeypatch) -> None:
    seen = _failing_verify(monkeypatch)
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 200))
    out = Path(cfg["output"]["path"])
    code = _run(tmp_path, cfg)
    err = capsys.readouterr().err
    assert seen, "verification did not run"
    assert code == EXIT_PRIVACY, err
    assert "verification failed" in err
    assert "internal error" not in err
    assert leftovers(out) == []


def test_privacy_violation_keeps_existing_output_under_overwrite(
    tmp_path, capsys, monkeypatch
) -> None:
    _failing_verify(monkeypatch)
    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 200), sections={"output": {"mode": "overwrite"}}
    )
    out = Path(cfg["output"]["path"])
    before = _existing_output(out)
    code = _run(tmp_path, cfg)
    err = capsys.readouterr().err
    assert code == EXIT_PRIVACY, err
    assert _snapshot(out) == before
    assert _siblings(out) == []


# ---------------------------------------------------------------- successful runs


def _check_published(out: Path, metrics: dict[str, Any], k: int, p: int) -> None:
    frame = pd.read_parquet(out / "data")
    assert len(frame) == metrics["rows_out"]
    assert "fnlwgt" not in frame.columns
    groups = frame.groupby(QI, dropna=False)["occupation"].agg(["size", "nunique"])
    assert (groups["size"] >= k).all()
    assert (groups["nunique"] >= p).all()


def test_success_small_run(tmp_path, capsys) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 400), sections={"model": {"k": 8}})
    out = Path(cfg["output"]["path"])
    code = _run(tmp_path, cfg, overrides=["model.k=4", "model.p=2", "model.h=2"])
    captured = capsys.readouterr()
    assert code == EXIT_OK, captured.err
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert json.loads(captured.out)["rows_in"] == 400
    assert metrics["rows_in"] == 400
    assert metrics["rows_out"] + metrics["rows_suppressed"] == metrics["rows_in"]
    assert metrics["verified"] is True
    assert metrics["violations"] == 0
    assert metrics["suppressed_missing_values"] == 0
    _check_published(out, metrics, k=4, p=2)
    assert _siblings(out) == []


def test_success_drops_rows_with_question_marks(tmp_path, capsys) -> None:
    used = QI + ["occupation"]
    marks = {
        3: ["workclass"],
        10: ["occupation"],
        20: ["age"],
        30: ["native-country", "workclass"],
        77: ["education"],
    }

    def edit(rows: list[dict[str, str]]) -> None:
        for i, cols in marks.items():
            for c in cols:
                rows[i][c] = "?"
        rows[50]["relationship"] = "?"  # not a configured column: the row is kept

    inp = write_adult_csv(tmp_path, 400, edit=edit)
    cfg = make_config(tmp_path, inp, sections={"input": {"on_missing": "drop"}})
    out = Path(cfg["output"]["path"])
    code = _run(tmp_path, cfg)
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    frame = pd.read_csv(inp, dtype=str, keep_default_na=False)
    holding = int((frame[used] == "?").any(axis=1).sum())
    assert holding == len(marks)
    assert metrics["rows_in"] == 400
    assert metrics["suppressed_missing_values"] == holding
    assert metrics["rows_out"] + metrics["rows_suppressed"] == metrics["rows_in"]
    assert metrics["rows_suppressed"] >= holding
    assert metrics["verified"] is True
    published = pd.read_parquet(out / "data")
    assert not (published.astype(str) == "?").to_numpy().any()
    _check_published(out, metrics, k=4, p=2)


# ---------------------------------------------------------------- on_invalid: drop


def test_invalid_values_fail_with_a_hint_to_drop(tmp_path, capsys) -> None:
    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 60, edit=_set(5, education="Kindergarten"))
    )
    _refused(capsys, tmp_path, cfg, "'Kindergarten'", "input.on_invalid: drop")


def test_on_invalid_drop_suppresses_and_counts_the_rows(tmp_path, capsys) -> None:
    bad = {4: {"education": "Kindergarten"}, 9: {"age": "forty"}, 17: {"native-country": "X"}}

    def edit(rows: list[dict[str, str]]) -> None:
        for i, values in bad.items():
            rows[i].update(values)
        rows[30]["workclass"] = "?"  # missing, counted apart
        rows[17]["sex"] = "?"  # missing and invalid: counted once, as missing

    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 400, edit=edit), sections={"model": {"k": 4}}
    )
    cfg["input"]["on_invalid"] = "drop"
    out = Path(cfg["output"]["path"])
    code = _run(tmp_path, cfg, overrides=["model.p=2", "model.h=2"])
    captured = capsys.readouterr()
    assert code == EXIT_OK, captured.err
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["suppressed_missing_values"] == 2
    assert metrics["suppressed_invalid_values"] == 2
    assert metrics["rows_out"] + metrics["rows_suppressed"] == metrics["rows_in"] == 400
    assert metrics["verified"] is True
    published = pd.read_parquet(out / "data")
    assert "Kindergarten" not in set(published["education"])
    assert "forty" not in set(published["age"].astype(str))


def test_on_invalid_drop_still_refuses_an_unknown_sensitive_value(tmp_path, capsys) -> None:
    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 60, edit=_set(30, occupation="Astronaut"))
    )
    cfg["input"]["on_invalid"] = "drop"
    _refused(capsys, tmp_path, cfg, "'Astronaut'", "'occupation'", "level")


def test_a_column_of_too_many_values_is_named_not_an_internal_error(monkeypatch, tmp_path) -> None:
    """An identifier declared nominal overflows the profile's statistics: exit 2 naming it."""
    import pandas as pd

    import sparkanon.stages.profile as profile_stage
    from sparkanon.engine.local import LocalEngine
    from sparkanon.errors import ConfigError
    from sparkanon.families import parse_config
    from sparkanon.pipeline import run_job

    monkeypatch.setattr(profile_stage, "MAX_STAT_ROWS", 500)
    n = 600
    frame = pd.DataFrame(
        {
            "uid": [f"u{i}" for i in range(n)],
            "sex": ["m", "f"] * (n // 2),
            "d": ["a", "b", "c"] * (n // 3),
        }
    )
    config = parse_config(
        {
            "input": {"format": "csv", "path": str(tmp_path / "unused.csv")},
            "attributes": [{"name": "uid", "kind": "nominal"}, {"name": "sex", "kind": "nominal"}],
            "sensitive": {"name": "d"},
            "model": {"name": "k", "k": 2},
            "algorithm": {"name": "mondrian"},
            "output": {"path": str(tmp_path / "out"), "publish": "generalized"},
            "report": {"enabled": False},
        }
    )
    with pytest.raises(ConfigError, match=r"'uid' \(600 values\)"):
        run_job(LocalEngine(), config, frame, commit=False)
