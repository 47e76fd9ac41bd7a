"""sdcMicro's individual and global risk (sparkanon.risk.sdcmicro).

The fixtures are sdcMicro's own tests (github sdcTools/sdcMicro, commit cf32510):
``tests/testthat/test_indivRisk.R``, ``tests/testthat/test_freqCalc.R`` and
``tests/testthat/test_calcRisks.R``; the ``set.seed(3)`` data of the last are redrawn
with R's generator (tests/_rrng.py).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.engine.local import LocalEngine
from sparkanon.risk.sdcmicro import (
    freq_calc,
    global_threshold,
    individual_risk,
    pairs_from_class_sizes,
    sdcmicro_on_engine,
    sdcmicro_risk,
)
from sparkanon.risk.view import TableView
from tests._rrng import r_generator, runif

WEIGHTS = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51]
NAN = float("nan")


def _abc(values: list[float]) -> pd.DataFrame:
    """An R ``array(values, dim = c(8, 3))`` as columns A, B, C, plus the weights."""
    frame = pd.DataFrame({k: values[i * 8 : (i + 1) * 8] for i, k in enumerate("ABC")})
    return frame.assign(weight=WEIGHTS)


COMPLETE = _abc([2, 3, 2, 2, 3, 3, 1, 2, 3, 3, 3, 3, 3, 3, 4, 3, 1, 3, 1, 2, 1, 1, 1, 1])
MISSING = _abc([2, 3, 2, 2, 3, 3, 1, NAN, 3, 3, 3, 3, 3, 3, 4, 3, 1, 3, NAN, 2, 1, 1, NAN, 1])


def _risk(frame: pd.DataFrame, weight: str | None, missing: str) -> np.ndarray:
    f = freq_calc(frame, ["A", "B", "C"], weight, missing=missing)
    return individual_risk(f["fk"].to_numpy(), f["Fk"].to_numpy())


def test_indiv_risk_weighted_approx_fixture() -> None:
    """test_indivRisk.R "data frame with weight, method = approx, qual = default, survey = TRUE"."""
    expected = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883,
                0.03931625, 0.01369863]  # fmt: skip
    assert np.round(_risk(COMPLETE, "weight", "value"), 8).tolist() == expected


def test_indiv_risk_weighted_approx_missing_fixture() -> None:
    """test_indivRisk.R, "with missing", weighted, approx, qual 1, survey TRUE (wildcards)."""
    expected = [0.013698630, 0.085791288, 0.010554090, 0.032466112, 0.009836066,
                0.009836066, 0.039316254, 0.005973716]  # fmt: skip
    assert np.round(_risk(MISSING, "weight", "wildcard"), 9).tolist() == expected


@pytest.mark.parametrize(
    ("frame", "missing", "expected"),
    [
        (COMPLETE, "value", [0.33333, 1.0, 0.33333, 1.0, 0.5, 0.5, 1.0, 0.33333]),
        (MISSING, "wildcard", [0.33333, 1.0, 0.25, 0.5, 0.33333, 0.33333, 1.0, 0.2]),
    ],
)
def test_indiv_risk_unweighted_fixture(frame: pd.DataFrame, missing: str, expected: list) -> None:
    """test_indivRisk.R, non-weighted (measure_risk without w: 1 / fk), to 5 digits."""
    assert np.round(_risk(frame, None, missing), 5).tolist() == expected


@pytest.mark.parametrize(
    ("values", "keys", "weights", "fk", "big_fk"),
    [
        (COMPLETE, "ABC", True, [3, 1, 3, 1, 2, 2, 1, 3], [108, 45.5, 108, 17, 100, 100, 123.5, 108]),
        (
            _abc([2, 3, 2, 2, 3, 3, 1, 2, 3, 3, 3, 3, 3, 3, 4, 3, 1, 3, NAN, 2, 1, 1, NAN, 1]),
            "ABC", True, [3, 1, 4, 2, 2, 2, 1, 3], [108, 45.5, 125, 56, 100, 100, 123.5, 108],
        ),
        (
            _abc([2, 3, NAN, 2, 3, 3, 1, 2, 3, 3, NAN, 3, 3, 3, 4, 3, *[NAN] * 8]),
            "ABC", True, [4, 4, 8, 4, 4, 4, 2, 4], [125, 184.5, 394, 125, 184.5, 184.5, 162.5, 125],
        ),
        (
            pd.DataFrame({"A": [2, 3, NAN, 2, 1, NAN, 1, 2], "weight": WEIGHTS}),
            "A", True, [5, 3, 8, 5, 4, 8, 4, 5], [133, 92.5, 394, 133, 262.5, 394, 262.5, 133],
        ),
    ],
)  # fmt: skip
def test_freq_calc_fixtures(values, keys, weights, fk, big_fk) -> None:
    """test_freqCalc.R: fk and Fk with missing values as wildcards (weighted cases)."""
    f = freq_calc(values, list(keys), "weight" if weights else None, missing="wildcard")
    assert f["fk"].tolist() == fk
    assert f["Fk"].tolist() == pytest.approx(big_fk)


def test_freq_calc_more_columns_than_rows_fixture() -> None:
    """test_freqCalc.R "df with more columns then rows" (weighted)."""
    flat = [2, 3, NAN, 2, 3, 3, 1, NAN, 3, 3, NAN, 3, 3, 2, 2, 3, NAN, NAN, 1, 2, NAN, NAN, 4, 4]
    frame = pd.DataFrame({k: flat[i * 3 : (i + 1) * 3] for i, k in enumerate("ABCDEFGH")})
    frame["weight"] = [18.0, 45.5, 122]
    f = freq_calc(frame, list("ABCDEFGH"), "weight", missing="wildcard")
    assert f["fk"].tolist() == [1, 2, 2]
    assert f["Fk"].tolist() == [18.0, 167.5, 167.5]


def _rounded(values: list[float]) -> list[float]:
    return [float(round(v)) for v in values]  # R's round(): half to even, as Python's


def _calc_risks_complete() -> pd.DataFrame:
    gen = r_generator(3)
    runif(gen, 30, 1, 100)
    cols = {"Var4": 4, "Var5": 6, "Var6": 3}
    return pd.DataFrame({k: _rounded(runif(gen, 10, 1, hi)) for k, hi in cols.items()})


def _calc_risks_missing() -> pd.DataFrame:
    gen = r_generator(3)
    runif(gen, 20, 1, 100)
    cols = {"Var6": 2, "Var7": 4, "Var8": 6, "Var9": 3, "Var10": 5, "Var11": 2}
    frame = pd.DataFrame({k: _rounded(runif(gen, 4, 1, hi)) for k, hi in cols.items()})
    holes = {"Var6": [0, 2, 3], "Var7": [1, 2], "Var8": [2], "Var9": [0, 2], "Var10": [1, 2],
             "Var11": [2]}  # fmt: skip
    for col, rows in holes.items():
        frame.loc[rows, col] = NAN
    return frame


@pytest.mark.parametrize(
    ("frame", "missing", "risk", "fk", "global_"),
    [
        (_calc_risks_complete(), "value", [0.5, 1, 0.5, 1, 1, 0.5, 1, 0.5, 1, 1],
         [2, 1, 2, 1, 1, 2, 1, 2, 1, 1], (0.8, 8, 80)),
        (_calc_risks_missing(), "wildcard", [0.5, 0.5, 0.25, 0.5], [2, 2, 4, 2],
         (0.4375, 1.75, 43.75)),
    ],
)  # fmt: skip
def test_calc_risks_fixtures(frame, missing, risk, fk, global_) -> None:
    """test_calcRisks.R, both "sdc ... DisFraction = default" cases (no weights)."""
    f = freq_calc(frame, list(frame.columns), None, missing=missing)
    assert f["fk"].tolist() == fk
    assert f["Fk"].tolist() == fk
    assert individual_risk(f["fk"], f["Fk"]).tolist() == risk
    result = sdcmicro_risk(f.assign(records=1), threshold=0.5)
    share, er, pct = global_
    assert result["global"]["share"] == pytest.approx(share, rel=1e-15)
    assert result["global"]["expected_reidentifications"] == pytest.approx(er, rel=1e-15)
    assert result["global"]["percent"] == pytest.approx(pct, rel=1e-15)
    assert result["max_global_risk"] == 0.01
    assert result["global_threshold"] == 0.0


def test_hand_worked_risk() -> None:
    """pk = 1/2: fk 1 -> log 2, fk 2 -> 1 - log 2, fk 3 -> 0.5 / 2.5; fk == Fk -> 1/fk."""
    got = individual_risk(np.array([1, 2, 3, 4]), np.array([2, 4, 6, 4]))
    assert got.tolist() == pytest.approx([math.log(2), 1 - math.log(2), 0.2, 0.25], rel=1e-12)


def test_global_threshold_hand_worked() -> None:
    """Levels 1 (1 record), 0.5 (2), 0.1 (7): ER 2.7 of 10 records."""
    levels, records = np.array([1.0, 0.5, 0.1]), np.array([1, 2, 7])
    # target 2: capping at 0.5 gives 1.7 + 0.5 = 2.2 (not below); at 0.1: 0.7 + 0.3 = 1.0
    assert global_threshold(levels, records, 0.2) == 0.1
    assert global_threshold(levels, records, 0.3) is None  # 2.7 < 3 already
    assert global_threshold(levels, records, 0.01) == 0.0  # never below 0.1


def test_summary_from_class_sizes() -> None:
    """Classes {1: 2, 2: 1, 4: 1} at f = 1: risks 1, 1, 1/2 x2, 1/4 x4: ER 4."""
    pairs = pairs_from_class_sizes({1: 2, 2: 1, 4: 1}, 1.0)
    got = sdcmicro_risk(pairs, threshold=0.4)
    assert got["rows"] == 8
    assert got["global"]["expected_reidentifications"] == 4.0
    assert got["individual"]["max"] == 1.0
    assert got["individual"]["quantiles"]["0.5"] == 0.25  # 4 of 8 records at 1/4
    assert got["individual"]["quantiles"]["0.9"] == 1.0
    assert got["records_above_threshold"] == 4
    assert sum(got["individual"]["histogram"]["counts"]) == 8
    assert got["individual"]["histogram"]["counts"][5] == 4  # [0.25, 0.3)
    assert got["individual"]["histogram"]["counts"][-1] == 2  # [0.95, 1.0]


@settings(max_examples=60, deadline=None)
@given(
    fk=st.integers(1, 50),
    extra=st.floats(0.0, 1e4, allow_nan=False),
)
def test_risk_bounded_by_one_over_fk(fk: int, extra: float) -> None:
    """With Fk >= fk (weights >= 1) the risk lies in (0, 1/fk]."""
    r = float(individual_risk(np.array([fk]), np.array([fk + extra]))[0])
    assert 0.0 < r <= 1.0 / fk + 1e-9


@settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), min_size=1, max_size=40),
    fraction=st.sampled_from([0.01, 0.2, 1.0]),
)
def test_engine_matches_pure(rows: list, fraction: float) -> None:
    """The local engine path equals the pure summary of per-row (fk, Fk)."""
    frame = pd.DataFrame(rows, columns=["a", "b"])
    view = TableView(quasi_identifiers=("a", "b"), kinds={"a": "numeric", "b": "numeric"})
    got = sdcmicro_on_engine(LocalEngine(), frame, view, fraction, threshold=0.2)
    f = freq_calc(frame, ["a", "b"])
    f["Fk"] = f["fk"] / fraction
    want = sdcmicro_risk(f.assign(records=1), threshold=0.2)
    assert {k: got[k] for k in want} == want
    assert got["sampling_fraction"] == fraction and got["risk_grid"] is None
