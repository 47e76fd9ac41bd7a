"""Attacks on the classes of a table (sparkanon.risk.attacks): worked examples, properties, engines."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.engine.local import LocalEngine
from sparkanon.errors import MeasureUnavailableError
from sparkanon.risk.attacks import (
    AttackSettings,
    attacks_on_engine,
    default_known_subsets,
    linkage_on_engine,
    pattern_match_probability,
)
from sparkanon.risk.view import TableView

KINDS = {"age": "numeric", "zip": "categorical"}


def medical() -> pd.DataFrame:
    """Six records, three classes on (age, zip).

    class A (30, a): HIV HIV HIV        -> homogeneous
    class B (40, b): flu HIV             -> 2 values, levels mild + severe
    class C (50, c): flu                 -> homogeneous, alone
    """
    return pd.DataFrame(
        {
            "age": [30, 30, 30, 40, 40, 50],
            "zip": ["a", "a", "a", "b", "b", "c"],
            "dis": ["HIV", "HIV", "HIV", "flu", "HIV", "flu"],
        }
    )


def view(**kw) -> TableView:
    return TableView(("age", "zip"), KINDS, "dis", "categorical", **kw)


def test_worked_example_homogeneity_skewness_linkage() -> None:
    out = attacks_on_engine(
        LocalEngine(), medical(), view(), settings=AttackSettings(bins=4, cutoffs=(0.2, 0.5))
    )
    # homogeneity: classes A (3 records) and C (1 record) -> 4 of 6 records, 2 of 3 classes
    assert out["homogeneity"] == {
        "records": 4,
        "classes": 2,
        "share": 4 / 6,
        "class_share": 2 / 3,
    }
    # global q = (flu 2/6, HIV 4/6); EMD with equal ground = sum max(p - q, 0):
    # A: p = (0, 1) -> 1 - 2/3 = 1/3;  B: p = (1/2, 1/2) -> 1/2 - 1/3 = 1/6;
    # C: p = (1, 0) -> 1 - 1/3 = 2/3.  mean over records = (3/3 + 2/6 + 2/3) / 6 = 1/3
    sk = out["skewness"]
    assert sk["distance"] == "emd_equal"
    assert sk["max"] == pytest.approx(2 / 3)
    assert sk["mean"] == pytest.approx(1 / 3)
    # above 0.2: A (3) and C (1) -> 4/6; above 0.5: C -> 1/6
    assert sk["above"] == {"0.2": pytest.approx(4 / 6), "0.5": pytest.approx(1 / 6)}
    # bins of width 1/4: B (2 records) in [0, .25), A (3) in [.25, .5), C (1) in [.5, .75)
    assert sk["histogram"] == {"edges": [0.0, 0.25, 0.5, 0.75, 1.0], "counts": [2, 3, 1, 0]}
    assert sk["class_histogram"]["counts"] == [1, 1, 1, 0]
    # linkage on (age, zip): 3 groups / 6 rows; only C is alone
    full = out["linkage"][0]
    assert full["known"] == ["age", "zip"]
    assert (full["groups"], full["rows"], full["certain_records"]) == (3, 6, 1)
    assert full["expected_rate"] == 0.5
    assert (out["rows"], out["classes"]) == (6, 3)
    json.dumps(out)  # JSON-able


def test_similarity_by_levels() -> None:
    """HIV and cancer share the level 'severe': class B of (HIV, cancer) is similar."""
    frame = medical()
    frame.loc[3, "dis"] = "cancer"  # class B: cancer HIV
    levels = {"HIV": "severe", "cancer": "severe", "flu": "mild"}
    out = attacks_on_engine(LocalEngine(), frame, view(sensitive_levels=levels))
    # homogeneity: A and C (4 records); similarity: A, B and C (all 6)
    assert out["homogeneity"]["records"] == 4
    assert out["similarity"]["records"] == 6
    assert out["similarity"]["classes"] == 3
    assert out["similarity"]["reading"] == "levels"
    # without levels every value is its own level: similarity = homogeneity
    plain = attacks_on_engine(LocalEngine(), frame, view())
    assert plain["similarity"]["records"] == 4
    assert plain["similarity"]["reading"] == "values"


def test_numeric_similarity_and_ordered_skewness() -> None:
    """Salaries 10..100 (range 90); share 0.1 -> a class spanning <= 9 is similar."""
    frame = pd.DataFrame(
        {
            "age": [1, 1, 2, 2, 3, 3],
            "zip": ["x"] * 6,
            "pay": [10, 15, 10, 100, 90, 95],
        }
    )
    v = TableView(("age", "zip"), KINDS, "pay", "numeric")
    out = attacks_on_engine(LocalEngine(), frame, v, settings=AttackSettings(similarity_share=0.1))
    # class 1: 10..15 (5 <= 9) similar; class 2: 10..100 not; class 3: 90..95 similar
    assert out["similarity"]["records"] == 4
    assert out["similarity"]["reading"] == "numeric_range"
    assert out["homogeneity"]["records"] == 0
    # ordered EMD over the 5 distinct values 10 15 90 95 100 (M = 5, d = |i-j|/4):
    # q = (2, 1, 1, 1, 1)/6. class 1 p = (1/2, 1/2, 0, 0, 0): p - q = (1/6, 1/3, -1/6,
    # -1/6, -1/6), prefix sums 1/6, 1/2, 1/3, 1/6, 0 -> (7/6) / 4 = 7/24
    sk = out["skewness"]
    assert sk["distance"] == "emd_ordered"
    # class 3 is the mirror image far end: p = (0, 0, 1/2, 1/2, 0): p - q = (-1/3, -1/6,
    # 1/3, 1/3, -1/6), prefix sums -1/3, -1/2, -1/6, 1/6, 0 -> (7/6)/4 = 7/24
    # class 2 p = (1/2, 0, 0, 0, 1/2): p - q = (1/6, -1/6, -1/6, -1/6, 1/3), prefix sums
    # 1/6, 0, -1/6, -1/3, 0 -> (2/3)/4 = 1/6
    assert sk["max"] == pytest.approx(7 / 24)
    assert sk["mean"] == pytest.approx((2 * 7 / 24 + 2 * 1 / 6 + 2 * 7 / 24) / 6)


def test_numeric_text_with_a_missing_token_reads_the_token_as_a_null() -> None:
    """The same salaries as text (a CSV), one more row of ``?``: the figures of the numbers
    with the ``?`` a null value of its own (a class of its own here)."""
    numbers = pd.DataFrame(
        {"age": [1, 1, 2, 2, 3, 3], "zip": ["x"] * 6, "pay": [10, 15, 10, 100, 90, 95]}
    )
    text = numbers.astype({"pay": str})
    text.loc[len(text)] = [4, "x", "?"]
    with_null = pd.DataFrame(
        {"age": [*numbers["age"], 4], "zip": ["x"] * 7, "pay": [*numbers["pay"], math.nan]}
    )
    v = TableView(("age", "zip"), KINDS, "pay", "numeric")
    got = attacks_on_engine(LocalEngine(), text, v)
    assert got == attacks_on_engine(LocalEngine(), with_null, v)
    assert got["skewness"]["values"] == 6 and got["homogeneity"]["records"] == 1


def test_numeric_values_above_max_values_are_binned_and_categories_are_left_out() -> None:
    frame = pd.DataFrame({"age": [i % 3 for i in range(40)], "zip": ["x"] * 40})
    frame["pay"] = [f"{1000 + 7.5 * i:.2f}" for i in range(40)]
    numeric = TableView(("age", "zip"), KINDS, "pay", "numeric")
    out = attacks_on_engine(LocalEngine(), frame, numeric, settings=AttackSettings(max_values=8))
    assert out["skewness"]["binned"] and out["skewness"]["values"] == 8
    categorical = TableView(("age", "zip"), KINDS, "pay", "categorical")
    with pytest.raises(MeasureUnavailableError) as caught:
        attacks_on_engine(LocalEngine(), frame, categorical, settings=AttackSettings(max_values=8))
    assert caught.value.parts == ("homogeneity", "similarity", "skewness")
    assert "sensitive.kind: numeric" in caught.value.reason
    order = tuple(frame["pay"])  # a declared order: compared on a line, not capped
    ordered = TableView(("age", "zip"), KINDS, "pay", "categorical", sensitive_order=order)
    assert attacks_on_engine(LocalEngine(), frame, ordered, settings=AttackSettings(max_values=8))[
        "skewness"
    ]


def test_null_is_a_value_of_its_own() -> None:
    frame = pd.DataFrame({"age": [1, 1, None, None], "zip": ["a", "a", "a", "a"]})
    frame["dis"] = ["x", None, None, None]
    out = attacks_on_engine(LocalEngine(), frame, view())
    # classes (1, a): {x, null}; (null, a): {null, null} -> homogeneous
    assert out["classes"] == 2
    assert out["homogeneity"]["records"] == 2


def test_count_column_is_a_multiplicity() -> None:
    """A TT table: group 1 holds set {a} twice and {b} once; group 2 holds {a} four times."""
    tt = pd.DataFrame({"group_id": [1, 1, 2], "items": ["a", "b", "a"], "count": [2, 1, 4]})
    v = TableView(("group_id",), {"group_id": "categorical"}, "items", "categorical")
    out = attacks_on_engine(LocalEngine(), tt, v, known_subsets=[("items",)], count_column="count")
    assert out["rows"] == 7
    assert out["homogeneity"]["records"] == 4  # group 2
    # TBuckets: {a}: 6 records, {b}: 1 record -> 2 groups / 7 records; {b} alone
    link = out["linkage"][0]
    assert (link["groups"], link["rows"], link["certain_records"]) == (2, 7, 1)


def test_no_sensitive_attribute_runs_linkage_only() -> None:
    v = TableView(("age", "zip"), KINDS)
    out = attacks_on_engine(LocalEngine(), medical(), v)
    assert out["homogeneity"] is None and out["skewness"] is None
    assert out["classes"] == 3 and out["rows"] == 6
    assert [x["known"] for x in out["linkage"]] == [["age", "zip"], ["age"], ["zip"]]


def test_default_known_subsets() -> None:
    assert default_known_subsets(["a", "b", "c"]) == [
        ("a", "b", "c"),
        ("a", "b"),
        ("a", "c"),
        ("b", "c"),
    ]
    assert default_known_subsets(["a"]) == [("a",)]


def test_raw_input_vs_generalized_release_linkage() -> None:
    """Generalizing ages into two ranges lowers the matching rate from 1 to 2/6."""
    raw = pd.DataFrame({"age": [21, 22, 23, 31, 32, 33], "zip": ["a"] * 6})
    rel = raw.assign(age=["20-29"] * 3 + ["30-39"] * 3)
    before = linkage_on_engine(LocalEngine(), raw, [("age", "zip")])[0]
    after = linkage_on_engine(LocalEngine(), rel, [("age", "zip")])[0]
    assert (before["expected_rate"], before["certain_share"]) == (1.0, 1.0)
    assert (after["expected_rate"], after["certain_share"]) == (2 / 6, 0.0)


def test_pattern_match_probability_exercise_14() -> None:
    """Exercise 14: n = 10^4 others, B = 20 known items -> at most 10^4 / 2^20 = 0.00954."""
    p = pattern_match_probability(10_000, 20)
    assert p["bound"] == pytest.approx(10_000 / 2**20)
    assert p["exact"] == pytest.approx(1 - (1 - 2**-20) ** 10_000)
    assert p["exact"] <= p["bound"]
    # exercise 15: ratings of R = 5 states, B = 6 known ratings
    assert pattern_match_probability(100, 6, 5)["bound"] == pytest.approx(100 / 5**6)


@st.composite
def diverse_tables(draw):
    """Tables whose every class holds at least two distinct sensitive values."""
    n_classes = draw(st.integers(1, 5))
    rows = []
    for c in range(n_classes):
        values = draw(st.lists(st.sampled_from("abcd"), min_size=2, max_size=6))
        if len(set(values)) < 2:
            values = values + ["e"]
        rows += [(c, "z", v) for v in values]
    return pd.DataFrame(rows, columns=["age", "zip", "dis"])


@settings(max_examples=25, deadline=None)
@given(diverse_tables())
def test_property_no_homogeneity_when_every_class_is_diverse(frame: pd.DataFrame) -> None:
    out = attacks_on_engine(LocalEngine(), frame, view(), known_subsets=[("age",)])
    assert out["homogeneity"]["records"] == 0
    assert out["homogeneity"]["share"] == 0.0
    sk = out["skewness"]
    assert 0.0 <= sk["mean"] <= sk["max"] <= 1.0 + 1e-12
    assert sum(sk["histogram"]["counts"]) == len(frame)
    assert all(0 <= v <= 1 for v in sk["above"].values())


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from("xy"), st.sampled_from("pq")),
        min_size=1,
        max_size=30,
    )
)
def test_property_linkage_rate_bounds(rows) -> None:
    frame = pd.DataFrame(rows, columns=["age", "zip", "dis"])
    out = attacks_on_engine(LocalEngine(), frame, view())
    for link in out["linkage"]:
        # 1/rows <= groups/rows <= 1, certain records never exceed the groups
        assert 1 / len(frame) <= link["expected_rate"] <= 1
        assert link["certain_records"] <= link["groups"]
        assert link["rows"] == len(frame)
    # knowing fewer columns never raises the matching rate
    full = out["linkage"][0]["expected_rate"]
    assert all(x["expected_rate"] <= full for x in out["linkage"][1:])
    assert out["homogeneity"]["records"] <= out["similarity"]["records"]
    assert math.isclose(sum(out["skewness"]["class_histogram"]["counts"]), out["classes"])
