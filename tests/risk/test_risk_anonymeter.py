"""Anonymeter's attacks (sparkanon.risk.anonymeter): statistics, distance, worked cases, engines."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.engine.local import LocalEngine
from sparkanon.risk.anonymeter import (
    Columns,
    anonymeter_on_engine,
    bound,
    count_predicates,
    evaluation,
    gower,
    inference_count,
    inference_success,
    linkability_count,
    nearest,
    probit,
    residual,
    seeded_sample,
    wilson,
)
from sparkanon.risk.view import TableView
from tests._helpers import fast


def test_statistics_match_anonymeters_own_fixtures() -> None:
    """The cases of anonymeter's tests/test_confidence.py (rounded as there)."""
    assert round(probit(0.95), 2) == 1.96
    for s, rate, err in [(850, 0.849, 0.022), (0, 0.002, 0.002), (1000, 0.998, 0.002)]:
        r, e = wilson(1000, s, 0.95)
        assert (round(r, 3), round(e, 3)) == (rate, err)
    assert tuple(round(x, 3) for x in residual((0.9, 0.0), (0.8, 0.0))) == (0.5, 0.0)
    assert tuple(round(x, 3) for x in residual((0.9, 0.02), (0.85, 0.02))) == (0.333, 0.16)
    for point, error, expected in [
        (0.1, 0.3, (0.1, 0.0, 0.4)),
        (1.1, 0.5, (1.0, 0.6, 1.0)),
        (-0.1, 0.2, (0.0, 0.0, 0.1)),
    ]:
        b = bound(point, error)
        np.testing.assert_almost_equal([b["value"], *b["ci"]], expected)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 500), st.data())
def test_property_risk_bounds(n, data) -> None:
    main = data.draw(st.integers(0, n))
    ctrl = data.draw(st.integers(0, n))
    base = data.draw(st.integers(0, n))
    ev = evaluation(n, main, base, ctrl)
    # anonymeter bounds the reported risk to [0, 1]; the residual is at most 1 and
    # negative when the control set is easier to attack
    assert 0.0 <= ev["risk"]["value"] <= 1.0
    lo, hi = ev["risk"]["ci"]
    assert 0.0 <= lo <= ev["risk"]["value"] <= hi <= 1.0
    assert ev["residual"] <= 1.0
    # the Wilson rate grows with the successes: the residual has the sign of main - control
    assert np.sign(ev["residual"]) == np.sign(main - ctrl) or abs(ev["residual"]) < 1e-12
    for part in ("main", "control", "baseline"):
        assert 0.0 <= ev[part]["ci"][0] <= ev[part]["rate"] <= ev[part]["ci"][1] <= 1.0


def test_gower_distance_worked() -> None:
    """Numbers scaled by their range, text 0/1, a null number costs 1.

    target (age 20, city a) vs rows (30, a), (40, b), (null, a); age range 20:
    |20-30|/20 + 0 = 0.5; |20-40|/20 + 1 = 2; 1 + 0 = 1.
    """
    cols = Columns(("age",), ("city",), (20.0,))
    t = pd.DataFrame({"age": [20.0], "city": ["a"]})
    c = pd.DataFrame({"age": [30.0, 40.0, None], "city": ["a", "b", "a"]})
    np.testing.assert_allclose(gower(t, c, cols), [[0.5, 2.0, 1.0]])
    idx, dist = nearest(np.array([[1.0, 0.5, 0.5]]), np.array([7, 5, 9]), 2)
    assert idx.tolist() == [[1, 2]]  # a tie at 0.5: the lower id (5) first
    assert dist.tolist() == [[0.5, 0.5]]


def test_inference_success_readings() -> None:
    g = pd.Series([100.0, 100.0, None])
    s = pd.Series([104.0, 106.0, None])
    # |100-104|/100 = 0.04 <= 0.05; 0.06 > 0.05; two nulls agree
    assert inference_success(g, s, True).tolist() == [True, False, True]
    assert inference_success(pd.Series(["a", "b"]), pd.Series(["a", "c"]), False).tolist() == [
        True,
        False,
    ]


KINDS = {"age": "numeric", "city": "categorical"}
VIEW = TableView(("age", "city"), KINDS, "dis", "categorical")


def originals() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [20.0, 40.0, 60.0, 80.0],
            "city": ["a", "b", "c", "d"],
            "dis": ["x", "y", "x", "y"],
        }
    )


def test_inference_worked_example() -> None:
    """Release = originals with ages shifted by +1: each target's nearest row is its own.

    Distances from target (20, a): own row |20-21|/61 + 0 -> nearest, so the guess is
    its own secret: 4 successes of 4. Against a release with the secrets flipped: 0.
    """
    ori = originals()
    rel = ori.assign(age=ori["age"] + 1)
    eng = LocalEngine()
    assert inference_count(eng, ori, rel, VIEW, 4, seed=1, buckets=3) == (4, 4)
    flipped = rel.assign(dis=["y", "x", "y", "x"])
    assert inference_count(eng, ori, flipped, VIEW, 4, seed=1, buckets=3) == (0, 4)


def test_linkability_worked_example() -> None:
    """Split (age) | (city, dis): both halves of every target point at its own release row.

    Side 0: nearest age is the own row (shift 1 of ranges 61). Side 1: city is unique, so
    its own row at distance 0 (dis equal). All 4 targets link. If the release's cities
    are rotated, side 1 points at another row: no link.
    """
    ori = originals()
    rel = ori.assign(age=ori["age"] + 1)
    eng = LocalEngine()
    split = (["age"], ["city", "dis"])
    assert linkability_count(eng, ori, rel, VIEW, split, 4, 1, 0, 2) == (4, 4)
    rotated = rel.assign(city=["b", "c", "d", "a"], dis=["y", "x", "y", "x"])
    assert linkability_count(eng, ori, rotated, VIEW, split, 4, 1, 0, 2) == (0, 4)


def test_seeded_sample_is_deterministic_and_without_replacement() -> None:
    eng = LocalEngine()
    frame = pd.DataFrame({"v": range(50)})
    a, n = seeded_sample(eng, frame, 10, 5)
    b, _ = seeded_sample(eng, frame, 10, 5)
    c, _ = seeded_sample(eng, frame, 10, 6)
    assert n == 10 and a["v"].nunique() == 10
    assert a.sort_values("_an_attack")["v"].tolist() == b.sort_values("_an_attack")["v"].tolist()
    assert set(a["v"]) != set(c["v"])


def test_predicate_counts() -> None:
    frame = pd.DataFrame({"age": [1.0, 2.0, None], "city": ["a", "b", "a"]})
    preds = [
        (("age", "<=", 1.0),),
        (("age", "isna", None), ("city", "==", "a")),
        (("city", "!=", "a"),),
        (("age", ">", 0.0),),
    ]
    # 1 row (age 1); 1 row (null, a); 1 row (b); 2 rows (the null age matches no comparison)
    got = count_predicates(LocalEngine(), frame, preds, {"age"})
    assert got.tolist() == [1, 1, 1, 2]


def mixed(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "city": rng.choice(list("abcdef"), n),
            "inc": rng.normal(50.0, 10.0, n),
            "dis": rng.choice(["x", "y", "z"], n),
        }
    )


VIEW3 = TableView(("age", "city", "inc"), KINDS | {"inc": "numeric"}, "dis", "categorical")


def test_copy_release_is_riskier_than_independent_release() -> None:
    """A release that copies the originals leaks; one drawn independently does not."""
    ori, ctl, fresh = mixed(1, 200), mixed(2, 200), mixed(3, 200)
    eng = LocalEngine()
    copy = anonymeter_on_engine(eng, ori, ori, ctl, VIEW3, n_attacks=60, seed=4)
    indep = anonymeter_on_engine(eng, ori, fresh, ctl, VIEW3, n_attacks=60, seed=4)
    json.dumps(copy)
    for attack in ("singling_out_multivariate", "linkability", "inference"):
        assert copy[attack]["risk"]["value"] > indep[attack]["risk"]["value"], attack
    assert copy["inference"]["main"]["successes"] == 60  # the own row is at distance 0
    assert set(copy["inference"]) >= {"main", "control", "baseline", "risk", "n_attacks"}


@fast()
@given(st.integers(1, 40), st.integers(1, 60), st.integers(1, 4), st.integers(0, 10_000))
def test_chunked_nearest_equals_a_full_sort(targets, rows, k, seed) -> None:
    """Chunks of 7 rows give what sorting every row of the whole matrix gives (ties included)."""
    import sparkanon.risk.anonymeter as an

    rng = np.random.default_rng(seed)
    cols = an.Columns(numeric=("x",), text=("c",), ranges=(3.0,))

    def frame(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {"x": rng.integers(0, 4, n).astype(float), "c": rng.choice(["a", "b"], n)}
        )

    t, r = frame(targets), frame(rows)
    ids = rng.permutation(10 * rows)[:rows].astype(np.int64)
    full = an.gower(t, r, cols)
    order = np.lexsort((np.broadcast_to(ids, full.shape), full), axis=1)[:, :k]
    saved, an.NN_CHUNK = an.NN_CHUNK, 7
    try:
        pos, dist = an.nearest_in_chunks(t, r, ids, cols, k)
    finally:
        an.NN_CHUNK = saved
    assert np.array_equal(ids[pos], ids[order])
    assert np.allclose(dist, np.take_along_axis(full, order, axis=1))


@fast()
@given(st.integers(0, 10_000), st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "isna", "notna"]))
def test_one_clause_counts_equal_the_row_masks(seed, op) -> None:
    """The per-column look-ups count what a pass over the rows counts (nulls included)."""
    from sparkanon.risk.anonymeter import _SingleClauseCounter, predicate_mask

    rng = np.random.default_rng(seed)
    n = 50
    x = rng.integers(0, 5, n).astype(float)
    x[rng.random(n) < 0.2] = np.nan
    c = pd.Series(rng.choice(["a", "b", "c"], n), dtype=object)
    c[rng.random(n) < 0.2] = None
    batch = pd.DataFrame({"x": x, "c": c})
    counter = _SingleClauseCounter(batch, {"x"}, {})
    for col, value in (("x", float(rng.integers(0, 5))), ("c", "b")):
        if col == "c" and op not in ("==", "!=", "isna", "notna"):
            continue
        clause = (col, op, value)
        assert counter.count(clause) == predicate_mask(batch, (clause,), {"x"}).sum(), clause
