"""``sparkanon init``: the table's profile, the suggested kinds and roles, the starter config."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pytest

from sparkanon.engine.local import LocalEngine
from sparkanon.errors import InputError
from sparkanon.starter import (
    ColumnProfile,
    feasibility_lines,
    name_tokens,
    profile_table,
    suggest,
    suggest_kind,
)


def _profile(name: str, value_type: str = "text", **kw) -> ColumnProfile:
    base = {"present": 100, "distinct": 10, "top": 20}
    base.update(kw)
    return ColumnProfile(name=name, spark_type="string", value_type=value_type, **base)


def test_name_tokens_split_case_and_punctuation() -> None:
    assert name_tokens("native-country") == ["native", "country"]
    assert name_tokens("birthDate") == ["birth", "date"]
    assert name_tokens("record_ID") == ["record", "id"]


@pytest.mark.parametrize(
    ("profile", "kind", "keys"),
    [
        (_profile("d", "date"), "date", {}),
        (_profile("d", shapes={"date": 99}), "date", {"format": "%Y-%m-%d"}),
        (_profile("t", "timestamp"), "timestamp", {}),
        (_profile("b", "boolean", distinct=2), "nominal", {}),
        # a fixed-length code led by a zero, more values than a nominal takes
        (
            _profile(
                "code5",
                distinct=300,
                shapes={"code": 100, "zero_led": 5},
                shape_lengths={"code": (5, 5)},
                numbers=100,
                whole=100,
            ),
            "categorical",
            {"builder": {"type": "mask", "length": 5, "masked": [1, 2, 3, 4, 5]}},
        ),
        # the same digits without a leading zero or a code's name are numbers
        (
            _profile(
                "amount",
                distinct=300,
                shapes={"code": 100},
                shape_lengths={"code": (5, 5)},
                numbers=100,
                whole=100,
            ),
            "continuous",
            {},
        ),
        (
            _profile("zip", distinct=20_000, shapes={"code": 100}, shape_lengths={"code": (5, 5)}),
            "semantic",
            {"length": 5},
        ),
        (_profile("n", "integer", distinct=12), "nominal", {}),
        (_profile("n", "decimal", distinct=90), "continuous", {}),
        (_profile("age", distinct=70, numbers=100, whole=100), "continuous", {}),
        (_profile("note", distinct=900), None, {}),
    ],
)
def test_suggested_kind(profile: ColumnProfile, kind: str | None, keys: dict) -> None:
    got, got_keys, _ = suggest_kind(profile)
    assert (got, got_keys) == (kind, keys)


def test_identifiers_by_name_shape_and_uniqueness_not_amounts() -> None:
    profiles = [
        _profile("record_id", "integer", distinct=100),
        _profile("contact", shapes={"email": 97}, distinct=97),
        _profile("serial", "integer", distinct=99),
        _profile("charge", "decimal", distinct=100),  # amounts are often unique: not flagged
        _profile(
            "zip_code",
            distinct=30,
            shapes={"code": 100, "zero_led": 3},
            shape_lengths={"code": (5, 5)},
        ),
        _profile("diagnosis", distinct=8),
    ]
    s = suggest(profiles, 100, {"format": "parquet", "path": "x"})
    roles = {p.name: p.role for p in s.columns}
    assert roles == {
        "record_id": "identifier",
        "contact": "identifier",
        "serial": "identifier",
        "charge": "other",
        "zip_code": "quasi",
        "diagnosis": "sensitive",
    }
    assert s.sensitive == "diagnosis"


def test_no_sensitive_column_asks_for_one_and_unknown_names_are_named() -> None:
    profiles = [_profile("age", "integer", distinct=60), _profile("colour", distinct=4)]
    with pytest.raises(InputError, match="--sensitive"):
        suggest(profiles, 100, {})
    with pytest.raises(InputError, match="'income' is not in the input"):
        suggest(profiles, 100, {}, sensitive="income")
    s = suggest(profiles, 100, {}, sensitive="colour")
    assert [p.name for p in s.columns if p.role == "quasi"] == ["age"]


def test_feasibility_by_hand() -> None:
    # 1000 rows; the most frequent of 3 values holds 60 of 100 sampled rows: every class of
    # a 2-diverse release needs one row of another value, and 400 such rows exist.
    sens = _profile("s", distinct=3, top=60)
    k_line, l_line = feasibility_lines(1000, sens, 5, 2)
    assert "k=5: feasible" in k_line and "at most 200 classes" in k_line
    assert "distinct l=2: feasible" in l_line and "about 400 classes" in l_line
    assert "NOT feasible" in feasibility_lines(3, sens, 5, 2)[0]


def test_profile_of_native_values_on_the_local_engine() -> None:
    n = 60
    frame = pd.DataFrame(
        {
            "person_id": range(n),
            "born": [dt.date(1950 + i % 40, 1 + i % 12, 1) for i in range(n)],
            "smoker": [i % 3 == 0 for i in range(n)],
            "charge": [Decimal(i) / 4 for i in range(n)],
            "zip": [f"0{2100 + i % 25}" for i in range(n)],
            "mail": [f"p{i}@example.org" for i in range(n)],
            "illness": ["flu", "cold", "asthma"] * (n // 3),
        }
    )
    rows, profiles = profile_table(LocalEngine(), frame)
    by = {p.name: p for p in profiles}
    assert rows == n
    assert by["born"].value_type == "date"
    assert by["smoker"].value_type == "boolean" and by["smoker"].distinct == 2
    assert by["charge"].value_type == "decimal" and by["charge"].distinct == n
    assert by["zip"].distinct == 25 and by["zip"].shape_lengths["code"] == (5, 5)
    assert by["mail"].shapes["email"] == n
    assert by["illness"].top == n // 3
    s = suggest(profiles, rows, {"format": "parquet", "path": "x"})
    roles = {p.name: (p.role, p.kind) for p in s.columns}
    assert roles["person_id"] == ("identifier", "identifier")
    assert roles["mail"] == ("identifier", "identifier")
    assert roles["born"] == ("quasi", "date")
    assert roles["zip"] == ("quasi", "categorical")
    assert s.sensitive == "illness"
