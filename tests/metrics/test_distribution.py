"""Distributions over the original domain from any published form, and the classifier."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkanon.engine.local import LocalEngine
from sparkanon.errors import MeasureUnavailableError
from sparkanon.evaluation.utility import ColumnSpec, _label_codes, _text_counts, utility
from sparkanon.metrics.distribution import (
    NaiveBayes,
    categorical_binning,
    histogram_by_label,
    numeric_binning,
    ordered_emd,
    original_bins,
    spread_of,
    variational,
)
from tests._helpers import fast

AGE = numeric_binning("age", 0.0, 100.0, 10)  # bins of width 10
EDU_PATHS = (
    ("Bachelors", "Undergraduate", "Higher", "*"),
    ("Masters", "Graduate", "Higher", "*"),
    ("Doctorate", "Graduate", "Higher", "*"),
    ("HS-grad", "Secondary", "Secondary", "*"),
)
EDU = categorical_binning("edu", ["Bachelors", "Doctorate", "HS-grad", "Masters"], EDU_PATHS)
ORDER = ("low", "mid", "high", "top")
GRADE = categorical_binning("grade", list(ORDER), order=ORDER)


def weights(binning, value) -> dict[int, float]:
    s = spread_of(binning, value)
    return {int(b): round(float(w), 6) for b, w in zip(s.bins, s.shares, strict=True)}


def test_a_number_falls_in_its_bin_and_the_ends_hold_the_outside() -> None:
    assert weights(AGE, 37) == {3: 1.0}
    assert weights(AGE, "37.0") == {3: 1.0}
    assert weights(AGE, 100) == {9: 1.0}  # the last edge belongs to the last bin
    assert weights(AGE, -5) == {0: 1.0}
    assert weights(AGE, 250) == {9: 1.0}


def test_a_range_spreads_in_proportion_to_the_overlap() -> None:
    # [25, 45] overlaps [20,30) by 5, [30,40) by 10, [40,50) by 5: shares 1/4, 1/2, 1/4.
    assert weights(AGE, "[25, 45]") == {2: 0.25, 3: 0.5, 4: 0.25}
    # A full-domain band "35-39" is the interval [35, 39]: all in bin 3.
    assert weights(AGE, "35-39") == {3: 1.0}
    # A band crossing the top of the domain: [95, 105] -> 5 inside bin 9, 5 above it
    # counted in the last bin too.
    assert weights(AGE, "95-105") == {9: 1.0}


def test_star_and_unreadable_values_spread_everywhere() -> None:
    star, text = spread_of(AGE, "*"), spread_of(AGE, "forty")
    assert np.allclose(star.shares, 0.1) and not star.unread
    assert np.allclose(text.shares, 0.1) and text.unread


def test_a_taxonomy_node_stands_for_its_leaves_and_an_ordinal_range_for_its_span() -> None:
    assert weights(EDU, "Masters") == {3: 1.0}
    # Graduate covers Masters (3) and Doctorate (1); Higher covers three leaves.
    assert weights(EDU, "Graduate") == {1: 0.5, 3: 0.5}
    assert weights(EDU, "Higher") == {0: 0.333333, 1: 0.333333, 3: 0.333333}
    assert weights(GRADE, "[mid, top]") == {1: 0.333333, 2: 0.333333, 3: 0.333333}
    assert spread_of(GRADE, "[mid, nowhere]").unread


def test_histogram_counts_per_label_and_reports_unread_and_nulls() -> None:
    values = pd.Series(["Masters", "Graduate", None, "???", "HS-grad"])
    labels = np.array([0, 1, 0, 0, -1])  # the last row's label is unknown: left out
    counts, unread, nulls = histogram_by_label(EDU, values, labels, 2)
    assert nulls == 1 and unread == 1
    # label 0: Masters 1 + "???" spread 1/4 on each leaf
    assert np.allclose(counts[0], [0.25, 0.25, 0.25, 1.25])
    assert np.allclose(counts[1], [0.0, 0.5, 0.0, 0.5])


def _histogram_row_by_row(binning, values, labels, n_labels):
    """The reference: every row's value spread on its own (the definition)."""
    counts, unread, nulls = np.zeros((n_labels, binning.n_bins)), 0, 0
    for value, label in zip(values, labels, strict=True):
        if label < 0:
            continue
        if pd.isna(value):
            nulls += 1
            continue
        spread = spread_of(binning, value)
        counts[label, spread.bins] += spread.shares
        unread += int(spread.unread)
    return counts, unread, nulls


_PUBLISHED = st.sampled_from(
    ["Masters", " Masters ", "Graduate", "Higher", "*", "???", "HS-grad", None, "Doctorate"]
)


@fast()
@given(st.lists(st.tuples(_PUBLISHED, st.integers(-1, 2)), max_size=60))
def test_histogram_per_distinct_value_equals_row_by_row(rows) -> None:
    values = pd.Series([v for v, _ in rows], dtype=object)
    labels = np.array([y for _, y in rows], dtype=np.int64)
    got = histogram_by_label(EDU, values, labels, 3)
    want = _histogram_row_by_row(EDU, values, labels, 3)
    assert np.allclose(got[0], want[0]) and got[1:] == want[1:]


@fast()
@given(st.lists(st.one_of(st.none(), st.integers(0, 120), st.floats(0, 120)), max_size=40))
def test_numeric_histogram_per_distinct_value_equals_row_by_row(xs) -> None:
    values = pd.Series(xs, dtype=object)
    labels = np.zeros(len(xs), dtype=np.int64)
    got = histogram_by_label(AGE, values, labels, 1)
    want = _histogram_row_by_row(AGE, values, labels, 1)
    assert np.allclose(got[0], want[0]) and got[1:] == want[1:]


def test_dates_spread_as_the_rows_read_them() -> None:
    days = pd.Series(pd.to_datetime(["2020-01-01", "2020-01-02", None, "2020-01-01"]))
    binning = categorical_binning("day", [str(d) for d in days.dropna().unique()])
    got = histogram_by_label(binning, days, np.zeros(4, dtype=np.int64), 1)
    want = _histogram_row_by_row(binning, days, np.zeros(4, dtype=np.int64), 1)
    assert np.allclose(got[0], want[0]) and got[1:] == want[1:] and got[1] == 0


_RAW = st.one_of(
    st.lists(st.sampled_from([" a", "a", "b ", None, "7", " 7"]), max_size=30).map(
        lambda v: pd.Series(v, dtype=object)
    ),
    st.lists(st.one_of(st.none(), st.integers(-3, 3)), max_size=30).map(
        lambda v: pd.Series(v, dtype="Int64")
    ),
    st.lists(st.booleans(), max_size=30).map(pd.Series),
    st.lists(st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5])), max_size=30).map(
        lambda v: pd.Series(v, dtype=float)
    ),
)


@fast()
@given(_RAW)
def test_utility_texts_per_distinct_value_equal_row_by_row(values) -> None:
    text = values.astype("string").str.strip()
    want = text.dropna().value_counts()
    assert _text_counts(values).sort_index().to_dict() == want.sort_index().to_dict()
    labels = {"a": 0, "7": 1, "True": 2, "-0.0": 3, "1": 4}
    assert _label_codes(values, labels).tolist() == (
        text.map(labels).fillna(-1).astype("int64").tolist()
    )


def test_distances_by_hand() -> None:
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])
    assert variational(p, q) == pytest.approx(0.5)
    # Moving 0.5 two steps on a line of 3 bins: 0.5 * 2 / (3 - 1) = 0.5.
    assert ordered_emd(p, q) == pytest.approx(0.5)
    assert ordered_emd(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(1.0)


@fast()
@given(
    st.lists(st.floats(0, 10), min_size=3, max_size=3),
    st.lists(st.floats(0, 10), min_size=3, max_size=3),
)
def test_distances_are_in_the_unit_interval_and_zero_on_equal_inputs(a, b) -> None:
    p, q = np.array(a) + 1e-9, np.array(b) + 1e-9
    p, q = p / p.sum(), q / q.sum()
    for d in (variational, ordered_emd):
        assert -1e-12 <= d(p, q) <= 1 + 1e-12
        assert d(p, p) == pytest.approx(0.0, abs=1e-12)


def test_naive_bayes_by_hand() -> None:
    # One feature with 2 bins; label 0 always in bin 0, label 1 always in bin 1.
    binning = categorical_binning("x", ["a", "b"])
    counts = np.array([[9.0, 0.0], [0.0, 1.0]])
    model = NaiveBayes((binning,), (counts,), np.array([0.9, 0.1]), alpha=1.0)
    # P(b|0) = (0+1)/(9+2) = 1/11 and P(b|1) = (1+1)/(1+2) = 2/3, so for 'b':
    # 0.9 * 1/11 = 0.0818 > 0.1 * 2/3 = 0.0667: the prior wins, label 0.
    assert list(model.predict(pd.DataFrame({"x": ["a", "b"]}))) == [0, 0]
    model = NaiveBayes((binning,), (counts,), np.array([0.5, 0.5]), alpha=1.0)
    assert list(model.predict(pd.DataFrame({"x": ["a", "b", "zzz"]}))) == [0, 1, 0]
    assert list(original_bins(binning, pd.Series(["b", None, "zzz"]))) == [1, -1, -1]


def _people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    edu = rng.choice(["Bachelors", "Doctorate", "HS-grad", "Masters"], n)
    label = np.where((age > 45) | (edu == "Doctorate"), ">50K", "<=50K")
    return pd.DataFrame({"age": age.astype(str), "edu": edu, "income": label})


def test_utility_of_an_identical_release_is_zero_distance_and_equal_accuracy() -> None:
    engine = LocalEngine()
    train, test = _people(600, 1), _people(300, 2)
    columns = [ColumnSpec("age", True), ColumnSpec("edu", False, paths=EDU_PATHS)]
    got, warnings = utility(engine, train, train, columns, label="income", holdout=test)
    assert warnings == []
    assert all(v["tvd"] == pytest.approx(0.0) for v in got["distance"].values())
    c = got["classification"]
    assert c["accuracy_original"] == c["accuracy_release"] and c["test_rows"] == 300
    assert c["accuracy_original"] > c["majority"]


def test_a_numeric_label_is_predicted_as_its_bin() -> None:
    engine = LocalEngine()
    train, test = _people(600, 1), _people(300, 2)
    columns = [ColumnSpec("age", True), ColumnSpec("edu", False, paths=EDU_PATHS)]
    got, _ = utility(engine, train, train, columns, bins=4, label="age", holdout=test)
    c = got["classification"]
    assert c["target"] == "age" and c["label_bins"] == 4 and c["features"] == ["edu"]
    assert c["test_rows"] == 300 and 0 < c["majority"] < 1


def test_a_label_of_too_many_categories_is_not_computed_and_the_distances_are() -> None:
    engine = LocalEngine()
    train, test = _people(600, 1), _people(300, 2)
    columns = [ColumnSpec("edu", False, paths=EDU_PATHS)]  # the label age: categories
    with pytest.raises(MeasureUnavailableError) as caught:
        utility(engine, train, train, columns, label="age", holdout=test, max_values=10)
    assert caught.value.parts == ("classification",) and "report.label" in caught.value.reason
    # Without a holdout there is no classifier to leave out: the distances alone.
    got, _ = utility(engine, train, train, columns, label="age", max_values=10)
    assert got["classification"] is None and set(got["distance"]) == {"edu"}


def test_utility_of_a_generalized_release_loses_distance_and_reads_its_values() -> None:
    engine = LocalEngine()
    train, test = _people(600, 1), _people(300, 2)
    release = train.assign(
        age=np.where(train["age"].astype(int) < 50, "[18, 49]", "[50, 79]"),
        edu=np.where(train["edu"].isin(["Masters", "Doctorate"]), "Graduate", "*"),
    )
    columns = [ColumnSpec("age", True), ColumnSpec("edu", False, paths=EDU_PATHS)]
    got, _ = utility(engine, train, release, columns, label="income", holdout=test)
    assert 0 < got["distance"]["age"]["tvd"] < 0.2  # uniform within the two halves
    assert "unread_rows" not in got["distance"]["edu"]
    # The release still separates the labels better than the majority rate.
    assert got["classification"]["accuracy_release"] > got["classification"]["majority"]
