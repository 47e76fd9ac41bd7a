"""SUDA2 special-unique scores (sparkanon.risk.suda).

The fixtures are sdcMicro's ``tests/testthat/test_suda2.R`` (github sdcTools/sdcMicro):
active at commit ed5ae64 ("a few more suda2 tests", 2019-08-01), commented out since
7708b12 (2019-11-20) and still so at cf32510; the ``set.seed(3)`` data are redrawn with
R's generator (tests/_rrng.py).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.engine.local import LocalEngine
from sparkanon.risk.suda import dis_parameters, suda2, suda2_on_engine, suda2_summary
from sparkanon.risk.view import TableView
from tests._rrng import r_generator, runif

ABC = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})


@pytest.mark.parametrize(
    ("order", "expected"),
    [("abc", [50, 37.5, 37.5]), ("acb", [50, 37.5, 37.5]), ("cab", [37.5, 50, 37.5]),
     ("cba", [37.5, 37.5, 50])],
)  # fmt: skip
def test_contribution_fixtures(order: str, expected: list) -> None:
    """test_suda2.R "suda2 simple example contrubtion" 1 to 4."""
    keys = list(order)
    got = suda2_summary(ABC[keys], keys)["attribute_contribution"]
    assert [got[k] for k in keys] == expected


def test_book_example_fixture() -> None:
    """test_suda2.R "suda2 book example": scores of rows 5-8 are 4, 2, 6, 8."""
    tab = pd.DataFrame(
        {
            "age": ["20s"] * 7 + ["60s"],
            "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
            "income": ["50k+"] * 2 + ["50k-"] * 6,
            "education": ["highschool"] * 4
            + ["university", "highschool", "middleschool", "university"],
        }
    )
    assert suda2(tab, list(tab.columns))["score"].tolist()[4:] == [4, 2, 6, 8]


def test_sdc_guideline_fixture() -> None:
    """test_suda2.R "suda2 sdc guideline"."""
    u, f, m = "Urban", "Female", "Male"
    frame = pd.DataFrame(
        {
            "Residence": [u, u, u, u, "Rural", u, u, u, u, u],
            "Gender": [f, f, f, m, f, m, f, m, f, f],
            "Education": ["Secondary incomplete", "Secondary incomplete", "Primary incomplete",
                          "Secondary complete", "Secondary complete", "Secondary complete",
                          "Primary complete", "Post-secondary", "Secondary incomplete",
                          "Secondary incomplete"],
            "Labor": ["Employed", "Employed", "Non-LF", "Employed", "Unemployed", "Employed",
                      "Non-LF", "Unemployed", "Non-LF", "Non-LF"],
        }
    )  # fmt: skip
    assert suda2(frame, list(frame.columns))["score"].tolist() == [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]


def test_sdc_object_fixture() -> None:
    """test_suda2.R "sdc without missing, DisFraction = default" (set.seed(3) data)."""
    gen = r_generator(3)
    runif(gen, 30, 1, 100)
    frame = pd.DataFrame(
        {k: [round(v) for v in runif(gen, 10, 1, hi)] for k, hi in (("Var4", 4), ("Var5", 6),
                                                                   ("Var6", 3))}
    )  # fmt: skip
    got = suda2(frame, ["Var4", "Var5", "Var6"])
    assert got["score"].tolist() == [0, 1, 0, 2, 2, 0, 4, 0, 3, 2]
    assert got["contribution_Var4"].tolist() == pytest.approx(
        [0, 0, 0, 0, 0.5, 0, 0.5, 0, 0.666666666666667, 0.5], rel=1e-14
    )


def test_hand_worked_dis() -> None:
    """Rows: two uniques on a 3-key table, one pair; each unique has one 1-MSU (weight 2)."""
    frame = pd.DataFrame({"a": [1, 2, 3, 3], "b": [0, 0, 0, 0], "c": [5, 5, 5, 5]})
    got = suda2(frame, ["a", "b", "c"])
    assert got["score"].tolist() == [2, 2, 0, 0]
    # U = 2, P = 2, f = 0.01: dis = 0.02 / (0.02 + 1.98) = 0.01; Q = 1.25
    dis, q, spread = dis_parameters(2, 2, 3, 0.01)
    assert dis == pytest.approx(0.01, rel=1e-6) and q == 1.25
    assert spread == pytest.approx(198.0, rel=1e-5)
    adj = 2 * 2**-1.25
    want = 1 / (1 + spread / (2**1.25 * adj))
    assert got["dis_score"].tolist() == pytest.approx([want, want, 0, 0], rel=1e-12)
    assert want == pytest.approx(1 / 100, rel=1e-5)  # 1 / (1 + 198 / 2)


def test_nulls_never_form_an_msu() -> None:
    """A null matches no value and is never part of an MSU (sdcMicro's missing code)."""
    frame = pd.DataFrame({"a": [1, 1, 2], "b": [None, "x", "x"], "c": [0, 0, 0]})
    got = suda2(frame, ["a", "b", "c"])
    # row 0: unique on the full key (null as a value) but its only usable values a=1, c=0
    # are shared with row 1; row 1 is unique on {a, b}; row 2 on {a}.
    assert got["score"].tolist() == [0, 1, 2]


def test_max_size_limits_the_search() -> None:
    """A record unique only on all three keys scores 0 with max_size 2."""
    frame = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "c": [0, 1, 1, 0]})
    frame = pd.concat([frame, frame.assign(c=1 - frame["c"])], ignore_index=True)
    frame = frame.iloc[:5]
    full = suda2(frame, ["a", "b", "c"])
    assert full["msu_3"].sum() >= 1
    limited = suda2(frame, ["a", "b", "c"], max_size=2)
    assert (limited["score"] <= full["score"]).all()
    deep = full["msu_3"] > 0  # an MSU of size 3 weighs (3 - 3)! = 1
    assert limited["score"][deep].tolist() == (full["score"] - full["msu_3"])[deep].tolist()


_ROWS = st.lists(
    st.tuples(st.integers(0, 2), st.sampled_from(["x", "y", None]), st.integers(0, 3),
              st.integers(0, 1)),
    min_size=1, max_size=40,
)  # fmt: skip
_KEYS = ["a", "b", "c", "d"]
_VIEW = TableView(
    quasi_identifiers=tuple(_KEYS),
    kinds={"a": "numeric", "b": "categorical", "c": "numeric", "d": "numeric"},
)


@settings(max_examples=30, deadline=None)
@given(rows=_ROWS, max_size=st.integers(1, 4))
def test_engine_matches_reference(rows: list, max_size: int) -> None:
    """The engine path (local) equals the reference summary on random small tables."""
    frame = pd.DataFrame(rows, columns=_KEYS)
    got = suda2_on_engine(LocalEngine(), frame, _VIEW, max_size)
    assert got == suda2_summary(frame, _KEYS, max_size)


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(*[st.integers(0, 2)] * 4), min_size=1, max_size=30))
def test_score_positive_iff_sample_unique(rows: list) -> None:
    """Without nulls and with every size searched, score > 0 iff unique on all keys."""
    frame = pd.DataFrame(rows, columns=_KEYS)
    got = suda2(frame, _KEYS)
    fk = frame.groupby(_KEYS)["a"].transform("size")
    assert ((got["score"] > 0) == (fk == 1)).all()
    # a record's contributions: each share in [0, 1], and some key is in every MSU weight
    shares = got[[f"contribution_{k}" for k in _KEYS]]
    assert ((shares >= 0) & (shares <= 1)).all().all()
    assert math.isclose(
        float((got["score"] > 0).sum()),
        float((shares.sum(axis=1) >= 1 - 1e-12).sum()),
    )


@pytest.mark.spark
def test_spark_equals_local(spark) -> None:
    """SparkEngine and LocalEngine give identical SUDA2 (and sdcMicro) summaries."""
    from sparkanon.engine.spark import SparkEngine
    from sparkanon.risk.sdcmicro import sdcmicro_on_engine

    rng = np.random.default_rng(7)
    n = 300
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 6, n).astype(np.int64),
            "b": rng.choice(["x", "y", "z"], n).astype(object),
            "c": rng.integers(0, 5, n).astype(float),
            "d": rng.integers(0, 3, n).astype(np.int64),
        }
    )
    frame.loc[rng.random(n) < 0.05, "b"] = None
    frame.loc[rng.random(n) < 0.05, "c"] = np.nan
    schema = [("a", "long"), ("b", "string"), ("c", "double"), ("d", "long")]
    engine = SparkEngine(spark)
    table = engine.from_pandas(frame, schema)
    local = LocalEngine(batch_rows=64)
    got = suda2_on_engine(engine, table, _VIEW, 3)
    assert got == suda2_on_engine(local, frame, _VIEW, 3)
    assert got == suda2_summary(frame, _KEYS, 3)
    assert got["records_with_msu"] > 0
    assert sdcmicro_on_engine(engine, table, _VIEW, 0.1, 0.05) == sdcmicro_on_engine(
        local, frame, _VIEW, 0.1, 0.05
    )
