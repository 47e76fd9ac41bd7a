"""Hierarchy builders (``attributes[].builder``): hand-worked hierarchies, checks, two local runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import TypeAdapter

from sparkanon.attributes.builders import (
    MAX_BUILT_VALUES,
    arx_text,
    build_hierarchy,
    invalid_values,
    write_arx,
)
from sparkanon.attributes.hierarchy import load_arx_hierarchy
from sparkanon.attributes.kinds import categorical_kind
from sparkanon.config.builders import BuilderConfig
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import ConfigError, InputError
from sparkanon.families import parse_config
from sparkanon.pipeline import run_job

_BUILDER = TypeAdapter(BuilderConfig)


def _builder(**raw: Any) -> Any:
    return _BUILDER.validate_python(raw)


def _rows(texts: list[str], counts: list[int] | None = None, **raw: Any) -> list[str]:
    """The ARX rows the builder generates over the values ``texts``."""
    built = build_hierarchy(
        "c", "attributes.0.builder", _builder(**raw), texts, counts or [1] * len(texts)
    )
    return arx_text(built.taxonomy).splitlines()


# ---------------------------------------------------------------- hand-worked hierarchies


def test_ages_widths_5_10_with_top_coding_at_90() -> None:
    # 4 -> [0, 5) -> [0, 10); 90 and 95 are top-coded: one leaf >=90 up to the root.
    rows = _rows(["23", "27", "31", "90", "95", "4"], type="intervals", widths=[5, 10], top=90)
    assert rows == [
        "4;[0, 5);[0, 10);*",
        "23;[20, 25);[20, 30);*",
        "27;[25, 30);[20, 30);*",
        "31;[30, 35);[30, 40);*",
        ">=90;>=90;>=90;*",
    ]


def test_top_coded_values_share_a_leaf_and_encode_to_it() -> None:
    cfg = _builder(type="intervals", widths=[5, 10], top=90, bottom=18)
    built = build_hierarchy("age", "k", cfg, ["17", "15", "20", "90", "97"], [1] * 5)
    assert built.taxonomy.leaves == ("<18", "20", ">=90")
    kind = categorical_kind("age", 1.0, built.taxonomy, built.lookup)
    codes, invalid = kind.encode(pd.Series(["15", " 17", "20", "97", "90", "33"]))
    assert codes[:5].tolist() == [0, 0, 1, 2, 2]
    assert invalid.tolist() == [False] * 5 + [True]
    # 20's interval [20, 25) is clipped at neither end; bottom-coded values are one node.
    assert built.taxonomy.paths[1] == ("20", "[20, 25)", "[20, 30)", "*")
    assert built.taxonomy.paths[0] == ("<18", "<18", "<18", "*")


def test_bounds_with_merge() -> None:
    rows = _rows(
        ["5", "17", "18", "64", "65", "89"],
        type="intervals",
        bounds=[[0, 18], [18, 65], [65, 90]],
        merge=[2],
    )
    assert rows == [
        "5;[0, 18);[0, 65);*",
        "17;[0, 18);[0, 65);*",
        "18;[18, 65);[0, 65);*",
        "64;[18, 65);[0, 65);*",
        "65;[65, 90);[65, 90);*",
        "89;[65, 90);[65, 90);*",
    ]


def test_quantiles_on_a_skewed_list() -> None:
    # 10 rows: six 1s, then 2, 3, 4, 10. Cumulated shares .6 .7 .8 .9 1.
    # 4 intervals: the quarter (.25) and the half (.5) are reached at 1, so 2 opens the
    # second interval; .75 is reached at 3, so 4 opens the third: [1, 2) [2, 4) [4, 10].
    # 2 intervals: the half is reached at 1: [1, 2) [2, 10].
    rows = _rows(["1", "2", "3", "4", "10"], [6, 1, 1, 1, 1], type="intervals", quantiles=[4, 2])
    assert rows == [
        "1;[1, 2);[1, 2);*",
        "2;[2, 4);[2, 10];*",
        "3;[2, 4);[2, 10];*",
        "4;[4, 10];[2, 10];*",
        "10;[4, 10];[2, 10];*",
    ]


def test_groups_of_an_order() -> None:
    rows = _rows(["e", "d", "c", "a"], type="groups", order=list("abcde"), sizes=[2, 4])
    # e is alone in its group of 2 and of 4 (the order has 5 values): it stays e.
    assert rows == ["a;[a, b];[a, d];*", "c;[c, d];[a, d];*", "d;[c, d];[a, d];*", "e;e;e;*"]


def test_zip_masking() -> None:
    rows = _rows(["12345", "12399", "13000"], type="mask", length=5, masked=[1, 2, 5])
    assert rows == [
        "12345;1234*;123**;*****",
        "12399;1239*;123**;*****",
        "13000;1300*;130**;*****",
    ]
    # Without masking the whole code, the root * closes the levels.
    assert _rows(["12345"], type="mask", length=5, masked=[2]) == ["12345;123**;*"]


def test_from_level_recodes_values_to_their_node() -> None:
    cfg = _builder(type="intervals", widths=[5, 10], top=90, from_level=1)
    built = build_hierarchy("age", "k", cfg, ["23", "24", "27", "95"], [1] * 4)
    assert arx_text(built.taxonomy).splitlines() == [
        "[20, 25);[20, 30);*",
        "[25, 30);[20, 30);*",
        ">=90;>=90;*",
    ]
    assert dict(built.lookup) == {"23": 0, "24": 0, "27": 1, "95": 2}
    zips = _builder(type="mask", length=5, masked=[2, 5], from_level=1)
    built = build_hierarchy("zip", "k", zips, ["12345", "12399", "13000"], [1] * 3)
    assert built.taxonomy.leaves == ("123**", "130**")


def test_dates_in_a_format_with_iso_labels() -> None:
    rows = _rows(
        ["03/01/2020", "10/01/2020", "05/02/2020"],
        type="intervals",
        values="date",
        format="%d/%m/%Y",
        widths=[7],
        origin="2020-01-06",
        top="2020-02-01",
    )
    assert rows == [
        "03/01/2020;[2019-12-30, 2020-01-06);*",
        "10/01/2020;[2020-01-06, 2020-01-13);*",
        ">=2020-02-01;>=2020-02-01;*",
    ]


def test_the_arx_file_is_exact_and_loads(tmp_path: Path) -> None:
    cfg = _builder(type="intervals", widths=[5, 10], top=90)
    built = build_hierarchy("age", "k", cfg, ["23", "95"], [1, 1])
    path = tmp_path / "age.csv"
    write_arx(built.taxonomy, path)
    assert path.read_text(encoding="utf-8") == "23;[20, 25);[20, 30);*\n>=90;>=90;>=90;*\n"
    assert load_arx_hierarchy(path, "age") == built.taxonomy


# ---------------------------------------------------------------- invalid values


def test_invalid_values_per_builder() -> None:
    bounds = _builder(type="intervals", bounds=[[0, 18], [20, 65]], top=90)
    text = pd.Series(["5", "19", "70", "95", "x", "65"], dtype="string")
    assert invalid_values(bounds, text, text).tolist() == [False, True, True, False, True, True]
    masks = _builder(type="mask", length=5, masked=[1])
    codes = pd.Series(["12345", "1234", "123456"], dtype="string")
    assert invalid_values(masks, codes, codes).tolist() == [False, True, True]
    dates = _builder(type="intervals", values="date", format="%d/%m/%Y", widths=[7])
    days = pd.Series(["03/01/2020", "2020-01-03", "31/02/2020"], dtype="string")
    assert invalid_values(dates, days, days).tolist() == [False, True, True]


def test_a_value_outside_the_bounds_fails_the_build_naming_it() -> None:
    cfg = _builder(type="intervals", bounds=[[0, 18], [20, 65]])
    with pytest.raises(InputError) as err:
        build_hierarchy("age", "attributes.2.builder", cfg, ["5", "19"], [1, 1])
    for fragment in ("'19'", "'age'", "attributes.2.builder.bounds"):
        assert fragment in str(err.value)


def test_too_many_values() -> None:
    cfg = _builder(type="mask", length=5, masked=[1])
    values = [f"{i:05d}" for i in range(MAX_BUILT_VALUES + 1)]
    with pytest.raises(ConfigError, match="more than a builder takes.*continuous"):
        build_hierarchy("zip", "attributes.0.builder", cfg, values, [1] * len(values))


# ---------------------------------------------------------------- config checks


def _config(tmp_path: Path, builder: dict[str, Any], **changes: Any) -> dict[str, Any]:
    raw = {
        "input": {"format": "csv", "path": str(tmp_path / "in.csv"), "options": {"header": True}},
        "attributes": [
            {"name": "rid", "kind": "identifier"},  # it numbers the rows: never published
            {"name": "age", "kind": "categorical", "builder": builder},
            {
                "name": "zip",
                "kind": "categorical",
                "builder": {"type": "mask", "length": 5, "masked": [1, 2, 5]},
            },
        ],
        "sensitive": {"name": "disease"},
        "model": {"name": "k", "k": 3},
        "algorithm": {"name": "mondrian"},
        "output": {"path": str(tmp_path / "out"), "format": "csv", "publish": "generalized"},
        "report": {"enabled": False},
    }
    raw.update(changes)
    return raw


@pytest.mark.parametrize(
    ("builder", "fragments"),
    [
        (
            {"type": "intervals", "bounds": [[0, 20], [18, 65]]},
            ["attributes.1.builder.bounds", "'age'", "[0, 20)", "[18, 65)", "overlap"],
        ),
        (
            {"type": "intervals", "bounds": [[18, 65], [0, 18]]},
            ["attributes.1.builder.bounds", "increasing order"],
        ),
        ({"type": "intervals", "widths": [5, 12]}, ["attributes.1.builder.widths", "12 after 5"]),
        ({"type": "intervals", "quantiles": [8, 3]}, ["attributes.1.builder.quantiles", "divide"]),
        ({"type": "intervals", "widths": [5], "quantiles": [4]}, ["exactly one of widths"]),
        ({"type": "groups", "order": [], "sizes": [2]}, ["attributes.1.builder.order", "empty"]),
        ({"type": "mask", "length": 5, "masked": [2, 1]}, ["builder.masked", "increase"]),
        ({"type": "mask", "length": 5, "masked": [6]}, ["builder.masked", "at most 5"]),
        (
            {"type": "mask", "length": 5, "masked": [1, 5], "from_level": 2},
            ["attributes.1.builder.from_level", "highest level", "is 1"],
        ),
        (
            {"type": "intervals", "widths": [7], "values": "date", "top": 5},
            ["builder.top", "not a date"],
        ),
    ],
)
def test_builder_config_errors(
    tmp_path: Path, builder: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(_config(tmp_path, builder))
    for fragment in fragments:
        assert fragment in str(err.value), (fragment, str(err.value))


def test_hierarchy_or_builder(tmp_path: Path) -> None:
    raw = _config(tmp_path, {"type": "intervals", "widths": [5]})
    raw["attributes"][1]["hierarchy"] = "x.csv"
    with pytest.raises(ConfigError, match="builder: give exactly one of hierarchy"):
        parse_config(raw)


# ---------------------------------------------------------------- local runs


def _people(tmp_path: Path, n: int = 60) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "rid": range(n),
            "age": [(17 + 7 * i) % 97 for i in range(n)],
            "zip": [f"{12300 + (i * 37) % 400:05d}" for i in range(n)],
            "disease": [("flu", "cold", "hiv")[i % 3] for i in range(n)],
        }
    )
    frame.loc[0, "zip"] = "123"  # a code of the wrong length: an invalid value
    frame.to_csv(tmp_path / "in.csv", index=False)
    return frame


AGES = {"type": "intervals", "widths": [10, 20, 40], "top": 90}


def _written(out: Path, column: str, inputs: pd.Series) -> list[list[str]]:
    """A release's ``hierarchies/<column>.csv`` rows, checked against its data.

    It holds the published values of the column and their ancestors only (issue 39):
    every published value is in it, every row starts at a published value, and no input
    value the data does not show is in it.
    """
    rows = [
        line.split(";")
        for line in (out / "hierarchies" / f"{column}.csv").read_text(encoding="utf-8").splitlines()
    ]
    published = set(pd.read_csv(out / "data" / "part-00000.csv", dtype=str)[column])
    cells = {cell for row in rows for cell in row}
    assert published <= cells
    assert {row[0] for row in rows} <= published
    assert not (set(inputs.astype(str)) - published) & cells
    return rows


def _check_release(out: Path, metrics: dict[str, Any], people: pd.DataFrame) -> None:
    assert metrics["verified"] is True
    assert metrics["suppressed_invalid_values"] == 1
    for column in ("age", "zip"):
        rows = _written(out, column, people[column])
        if len({len(row) for row in rows}) == 1 < len(rows[0]):  # one level below the root
            load_arx_hierarchy(out / "hierarchies" / f"{column}.csv", column)


def test_full_domain_run_with_builders(tmp_path: Path) -> None:
    people = _people(tmp_path)
    raw = _config(
        tmp_path,
        AGES,
        algorithm={"name": "samarati", "max_suppression": 0.0, "metric": "height"},
        input={
            "format": "csv",
            "path": str(tmp_path / "in.csv"),
            "options": {"header": True},
            "on_invalid": "drop",
        },
    )
    result = run_job(LocalEngine(), parse_config(raw))
    out = tmp_path / "out"
    metrics = json.loads((out / "metrics.json").read_text())
    _check_release(out, metrics, people)
    assert result.metrics["rows_out"] == 59


@pytest.mark.report
def test_mondrian_run_with_builders_and_an_invalid_value(tmp_path: Path) -> None:
    people = _people(tmp_path)
    raw = _config(tmp_path, AGES)
    with pytest.raises(InputError) as err:
        run_job(LocalEngine(), parse_config(raw))
    for fragment in ("'123'", "'zip'", "attributes.2.builder.length"):
        assert fragment in str(err.value)
    assert not (tmp_path / "out").exists()
    raw["input"]["on_invalid"] = "drop"
    raw["report"] = {"enabled": True}
    run_job(LocalEngine(), parse_config(raw))
    out = tmp_path / "out"
    _check_release(out, json.loads((out / "metrics.json").read_text()), people)
    # The evaluation read the generated hierarchy: a published age interval spreads over
    # the input's ages under it; only the top-coded rows (their leaf >=90 is no input
    # value) are unread.
    evaluation = json.loads((out / "evaluation.json").read_text())
    top_coded = int((people["age"].iloc[1:] >= 90).sum())
    assert top_coded > 0
    assert evaluation["utility"]["distance"]["age"]["unread_rows"] == top_coded


@pytest.mark.parametrize(
    ("algorithm", "publish"),
    [
        ({"name": "maa_slie"}, "centroids"),
        ({"name": "mdav"}, "generalized"),
        (
            {
                "name": "perturb",
                "columns": [{"name": "age", "noise": "randomized_response", "retention": 0.8}],
            },
            "generalized",
        ),
        ({"name": "condensation"}, "centroids"),
    ],
    ids=["blocks", "mdav", "perturbation", "synthesis"],
)
def test_every_family_accepts_a_built_hierarchy(
    tmp_path: Path, algorithm: dict[str, Any], publish: str
) -> None:
    people = _people(tmp_path)
    people["w"] = range(len(people))
    people.to_csv(tmp_path / "in.csv", index=False)
    raw = _config(tmp_path, AGES, algorithm=algorithm)
    raw["input"]["on_invalid"] = "drop"
    raw["output"]["publish"] = publish
    if algorithm["name"] == "perturb":
        raw.pop("model")
    if algorithm["name"] == "condensation":  # synthesizes at least one continuous column
        raw["attributes"][0] = {"name": "w", "kind": "continuous"}
    result = run_job(LocalEngine(), parse_config(raw))
    out = tmp_path / "out"
    assert result.metrics["verified"] is True
    assert result.metrics["rows_out"] == 59
    _written(out, "age", people["age"])


def test_a_date_not_in_the_format_fails_naming_column_value_and_key(tmp_path: Path) -> None:
    pd.DataFrame(
        {
            "rid": range(4),
            "visit": ["03/01/2020", "10/01/2020", "2020-01-11", "05/02/2020"],
            "zip": ["12345"] * 4,
            "disease": ["flu", "cold", "flu", "cold"],
        }
    ).to_csv(tmp_path / "in.csv", index=False)
    days = {"type": "intervals", "values": "date", "format": "%d/%m/%Y", "widths": [7]}
    raw = _config(tmp_path, days)
    raw["attributes"][1]["name"] = "visit"
    with pytest.raises(InputError) as err:
        run_job(LocalEngine(), parse_config(raw))
    for fragment in ("'2020-01-11'", "'visit'", "attributes.1.builder.format", "'%d/%m/%Y'"):
        assert fragment in str(err.value), (fragment, str(err.value))
    assert not (tmp_path / "out").exists()
