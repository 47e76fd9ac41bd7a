"""The quasi-identifier kinds of Yang et al. 2014 (section 3.2): formulas worked by hand, then wired in.

* ordinal with weights between consecutive ranks (eq. 4) and the median centroid (eq. 5);
* nominal as vectors (Table 4, eq. 6-7): loss against the class's mean vector;
* semantic codes on the code hierarchy tree (definition 6-7, eq. 8-10), on Yang et al. 2014's
  ZIP example (150001 is nearer to 150002 than to 061110);
* an end-to-end run of the job on an Adult sample with all three, and the input error
  for a code of the wrong length.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms import BlockContext, cluster_block
from sparkanon.algorithms._block import Block
from sparkanon.algorithms._classes import ClassStats
from sparkanon.attributes.kinds import (
    ContinuousKind,
    NominalKind,
    VectorNominalKind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.schema import LEVEL, RID, SENS, Schema, SensitiveLevels, code_column
from sparkanon.attributes.semantic import SemanticKind, prefix_distances
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import InputError
from sparkanon.families import parse_config
from sparkanon.models import HPKAnonymity
from sparkanon.pipeline import run_job
from sparkanon.publications import CentroidPublisher
from sparkanon.stages import encode
from tests._helpers import ClassView
from tests._inputs import adult_rows, demo_config, write_rows

FAST = settings(max_examples=60, deadline=None)

# ---------------------------------------------------------------------------
# Ordinal: eq. 4 (weights between consecutive ranks) and eq. 5 (median)
# ---------------------------------------------------------------------------

# Ranks a < b < c < d with W(1,2) = 1, W(2,3) = 2, W(3,4) = 3; sum_{j=2..4} W = 6.
WEIGHTED = ordinal_kind("grade", 1.0, ("a", "b", "c", "d"), rank_weights=(1.0, 2.0, 3.0))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (0, 0, 0.0),
        (0, 1, 1 / 6),  # W(1,2) / 6
        (1, 2, 2 / 6),  # W(2,3) / 6
        (0, 2, 3 / 6),  # (W(1,2) + W(2,3)) / 6
        (1, 3, 5 / 6),  # (W(2,3) + W(3,4)) / 6
        (2, 3, 3 / 6),
        (0, 3, 1.0),
        (3, 0, 1.0),  # symmetric
    ],
)
def test_weighted_ordinal_distance_eq4(a: int, b: int, expected: float) -> None:
    assert WEIGHTED.matrix[a, b] == pytest.approx(expected, abs=1e-15)
    assert WEIGHTED.distance_to(np.array([a]), b)[0] == pytest.approx(expected, abs=1e-15)


def test_weighted_ordinal_bin_span_uses_the_weighted_distance() -> None:
    assert WEIGHTED.bin_span(0, 1) == pytest.approx(1 / 6)
    assert WEIGHTED.bin_span(1, 3) == pytest.approx(5 / 6)


def test_unit_rank_weights_are_shi2024_eq6_exactly() -> None:
    order = tuple("abcdefg")
    default = ordinal_kind("x", 1.0, order)
    ones = ordinal_kind("x", 1.0, order, rank_weights=(1.0,) * 6)
    ranks = np.arange(7, dtype=float)
    np.testing.assert_array_equal(default.matrix, np.abs(ranks[:, None] - ranks) / 6)
    np.testing.assert_array_equal(ones.matrix, default.matrix)
    assert default.rule == "mean_frequency"


def test_rank_weights_are_checked() -> None:
    with pytest.raises(ValueError, match="3 positive weights"):
        ordinal_kind("x", 1.0, ("a", "b", "c", "d"), rank_weights=(1.0, 2.0))
    with pytest.raises(ValueError, match="centroid"):
        ordinal_kind("x", 1.0, ("a", "b"), centroid="mode")


@pytest.mark.parametrize(
    ("ranks", "expected", "why"),
    [
        ([0, 0, 1, 3, 3], 1, "n=5: the 3rd rank in order"),
        ([0, 3], 0, "n=2: the lower of the two middle ranks"),
        ([1, 1, 2, 2], 1, "n=4: 2nd of 1,1,2,2"),
        ([3, 2, 0, 2, 2, 1], 2, "n=6: 3rd of 0,1,2,2,2,3"),
        ([2], 2, "one row"),
        ([0, 0, 0, 3], 0, "the mean (0.75) would round elsewhere"),
    ],
)
def test_median_centroid_is_the_lower_median(ranks: list[int], expected: int, why: str) -> None:
    kind = ordinal_kind(
        "grade", 1.0, ("a", "b", "c", "d"), rank_weights=(1, 2, 3), centroid="median"
    )
    assert kind.centroid(np.array(ranks)) == expected, why
    # The batch rule agrees with the single-class rule.
    hist = kind.histogram(np.array(ranks))[None, :]
    assert kind.centroids(hist)[0] == expected


def test_median_loss_is_weighted_distance_sum() -> None:
    kind = ordinal_kind(
        "grade", 1.0, ("a", "b", "c", "d"), rank_weights=(1, 2, 3), centroid="median"
    )
    # Ranks 0, 0, 1, 3, 3: median 1; distances 1/6, 1/6, 0, 5/6, 5/6.
    assert kind.loss(np.array([0, 0, 1, 3, 3])) == pytest.approx(12 / 6)


@FAST
@given(st.lists(st.integers(0, 4), min_size=1, max_size=30))
def test_median_minimises_the_summed_weighted_distance(ranks: list[int]) -> None:
    kind = ordinal_kind(
        "x", 1.0, tuple("abcde"), rank_weights=(0.5, 3.0, 1.0, 2.0), centroid="median"
    )
    codes = np.array(ranks)
    best = min(kind.matrix[codes, c].sum() for c in range(5))
    assert kind.loss(codes) == pytest.approx(best, abs=1e-12)


# ---------------------------------------------------------------------------
# Nominal as vectors: Table 4 and eq. 6-7
# ---------------------------------------------------------------------------

JOBS = nominal_kind("job", 1.0, ("teacher", "worker", "reporter"), encoding="vector")


def brute_vector_loss(codes: list[int], size: int) -> float:
    """Sum of squared distances (eq. 6) of the rows' Table 4 vectors to their mean vector."""
    vectors = np.sqrt(0.5) * np.eye(size)[np.asarray(codes)]
    mean = vectors.mean(axis=0)
    return float(((vectors - mean) ** 2).sum())


def test_vector_encoding_two_values_are_at_distance_one() -> None:
    # Table 4: sqrt(0.5) on the diagonal; eq. 6 between teacher and worker is 0.5 + 0.5.
    t, w = np.sqrt(0.5) * np.eye(3)[[0, 1]]
    assert ((t - w) ** 2).sum() == pytest.approx(1.0)
    assert JOBS.distance_to(np.array([0, 1, 2]), 0).tolist() == [0.0, 1.0, 1.0]
    assert isinstance(JOBS, VectorNominalKind)
    assert type(nominal_kind("job", 1.0, ("a", "b"))) is NominalKind


def test_vector_loss_by_hand() -> None:
    # 3 teachers, 1 worker: n = 4, S = (3/4)^2 + (1/4)^2 = 10/16, loss = 0.5 * 4 * 6/16.
    codes = np.array([0, 0, 0, 1])
    assert JOBS.loss(codes) == pytest.approx(0.75)
    assert brute_vector_loss([0, 0, 0, 1], 3) == pytest.approx(0.75)
    # The indicator kind's loss against the mode is 1: the two readings differ.
    assert nominal_kind("job", 1.0, ("t", "w", "r")).loss(codes) == pytest.approx(1.0)
    # Published value: the mode (teacher).
    assert JOBS.centroid(codes) == 0
    assert JOBS.centroid(np.array([2, 1, 1, 2])) == 1  # tie to the lowest code
    assert JOBS.loss(np.array([2, 2, 2])) == 0.0


@FAST
@given(st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=25), min_size=1, max_size=6))
def test_vector_losses_equal_brute_force(classes: list[list[int]]) -> None:
    kind = nominal_kind("x", 1.0, tuple("abcde"), encoding="vector")
    hists = np.vstack([kind.histogram(np.array(c)) for c in classes])
    expected = [brute_vector_loss(c, 5) for c in classes]
    np.testing.assert_allclose(kind.losses(hists), expected, atol=1e-12)
    for c, e in zip(classes, expected, strict=True):
        assert kind.loss(np.array(c)) == pytest.approx(e, abs=1e-12)
    # losses_with_each (used by the greedy growth) goes through the vector loss too.
    members = np.array(classes[0])
    grown = kind.losses_with_each(members, np.arange(5))
    np.testing.assert_allclose(
        grown, [brute_vector_loss(classes[0] + [v], 5) for v in range(5)], atol=1e-12
    )


def test_class_summary_uses_the_vector_loss() -> None:
    sens = SensitiveLevels("s", ("x", "y"), np.array([0, 1]), ("lo", "hi"), np.array([0.1, 0.8]))
    view = ClassView(
        kinds=[JOBS],
        codes=[np.array([0, 0, 0, 1])],
        sens=np.array([0, 1, 0, 1]),
        levels=np.array([0, 1, 0, 1]),
        sensitive=sens,
    )
    assert view.info_loss == pytest.approx(0.75)
    assert view.centroids == [0]


# ---------------------------------------------------------------------------
# Semantic: the code hierarchy tree (definition 6, eq. 8-10)
# ---------------------------------------------------------------------------

# beta = 1, W(1,2) = 0: w_1..w_6 = 0, 1/2, 1/3, 1/4, 1/5, 1/6, sum 29/20.
ZIP = SemanticKind("zip", 1.0, length=6, beta=1.0, root_weight=0.0)


def test_semantic_prefix_table_by_hand() -> None:
    total = Fraction(29, 20)
    expected = [
        total / total,  # c = 0: lowest common ancestor is the root
        total / total,  # c = 1: W(1,2) = 0, so the first digit alone adds nothing
        (Fraction(1, 3) + Fraction(1, 4) + Fraction(1, 5) + Fraction(1, 6)) / total,  # 19/29
        (Fraction(1, 4) + Fraction(1, 5) + Fraction(1, 6)) / total,  # 37/87
        (Fraction(1, 5) + Fraction(1, 6)) / total,  # 22/87
        Fraction(1, 6) / total,  # 10/87
        Fraction(0),
    ]
    np.testing.assert_allclose(ZIP.by_prefix, [float(x) for x in expected], atol=1e-15)


def test_semantic_zip_example_of_the_seed() -> None:
    # 150001 and 150002 meet at node "15000" (level 6): eq. 8 gives
    # dis(P, C) = W(6,7) / sum_{j=2..7} W = (1/6) / (29/20) = 10/87 for each leaf;
    # the pair is 20/87 apart, and eq. 9 with Lmin = 0, Lmax = 2 gives 10/87.
    near = ZIP.distance(np.array([150001]), 150002)[0]
    # 150001 and 061110 meet at the root: each leaf is 1 from it, the pair 2, normalised 1.
    far = ZIP.distance(np.array([150001]), 61110)[0]
    assert near == pytest.approx(10 / 87)
    assert far == pytest.approx(1.0)
    assert near < far
    assert ZIP.distance(np.array([150001]), 150101)[0] == pytest.approx(37 / 87)
    assert ZIP.distance_to(np.array([150001, 150001]), 150001).tolist() == [0.0, 0.0]


def test_semantic_medoid_and_loss_by_hand() -> None:
    codes = np.array([61110, 150101, 150002, 150001])
    # Summed distances: 150001 and 150002: 10/87 + 37/87 + 1; 150101: 74/87 + 1; 061110: 3.
    assert ZIP.centroid(codes) == 150001  # tie with 150002, lowest code wins
    assert ZIP.loss(codes) == pytest.approx(1 + 47 / 87)
    assert ZIP.decode(np.array([ZIP.centroid(codes)])).tolist() == ["150001"]
    assert ZIP.centroid(np.array([150101, 150101, 61110])) == 150101


def test_semantic_all_weights_zero_gives_zero_distances() -> None:
    np.testing.assert_array_equal(prefix_distances(1, 1.0, 0.0), [0.0, 0.0])
    np.testing.assert_allclose(prefix_distances(1, 1.0, 0.5), [1.0, 0.0])
    # beta = 0 and W(1,2) = 1: every level weighs the same.
    np.testing.assert_allclose(prefix_distances(4, 0.0, 1.0), [1.0, 0.75, 0.5, 0.25, 0.0])


def test_semantic_encode_decode() -> None:
    raw = pd.Series(
        [" 150001 ", "061110", "15000", "1500011", "15a001", "", None, "１５０００１", "+15000"],
        dtype="string",
    )
    codes, invalid = ZIP.encode(raw)
    assert invalid.tolist() == [False, False, True, True, True, True, True, True, True]
    assert codes[:2].tolist() == [150001, 61110]
    assert codes.dtype == np.int64
    assert ZIP.decode(np.array([61110, 150001, 7])).tolist() == ["061110", "150001", "000007"]
    long = SemanticKind("id", 1.0, length=18)
    c, bad = long.encode(pd.Series(["999999999999999999", "000000000000000001"]))
    assert not bad.any()
    assert long.decode(c).tolist() == ["999999999999999999", "000000000000000001"]


def test_semantic_bins_and_span() -> None:
    assert ZIP.n_bins == 1000
    assert ZIP.bins(np.array([150001, 61110, 999999])).tolist() == [150, 61, 999]
    assert ZIP.bin_span(150, 150) == pytest.approx(37 / 87)  # rows share at least 3 digits
    assert ZIP.bin_span(150, 159) == pytest.approx(19 / 29)  # they share 2
    assert ZIP.bin_span(61, 150) == pytest.approx(1.0)
    assert ZIP.cut_candidates(0, 999) is None
    short = SemanticKind("z", 1.0, length=2)
    assert short.n_bins == 100
    assert short.bins(np.array([7, 42])).tolist() == [7, 42]


def test_semantic_generalized_and_ncp() -> None:
    assert ZIP.generalized(np.array([115001, 115099, 115050])) == "1150**"
    # "1150**" covers 10**2 of the 10**6 leaves.
    assert ZIP.ncp(np.array([115001, 115099, 115050])) == pytest.approx(1e-4)
    assert ZIP.generalized(np.array([61110, 61110])) == "061110"
    assert ZIP.ncp(np.array([61110, 61110])) == 0.0
    assert ZIP.generalized(np.array([61110, 150001])) == "******"
    assert ZIP.ncp(np.array([61110, 150001])) == 1.0


def test_semantic_is_not_a_matrix_kind_and_codes_are_long() -> None:
    assert ZIP.discrete is False
    assert ZIP.code_type == "long"
    schema = Schema(kinds=(ZIP,), sensitive=_SENS)
    assert dict(encode.encoded_columns(schema))[code_column(0)] == "long"
    publisher = CentroidPublisher(schema, [])
    assert dict(publisher.class_columns())[code_column(0)] == "long"
    assert dict(publisher.columns()) == {"zip": "string"}


# Independent references: digits compared as strings, exact fractions.


def _ref_weights(length: int, beta: int, root: Fraction) -> list[Fraction]:
    return [root] + [Fraction(1, i**beta) for i in range(2, length + 1)]


def _ref_distance(a: int, b: int, length: int, beta: int, root: Fraction) -> Fraction:
    sa, sb = str(a).zfill(length), str(b).zfill(length)
    c = 0
    while c < length and sa[c] == sb[c]:
        c += 1
    w = _ref_weights(length, beta, root)
    total = sum(w)
    return sum(w[c:], Fraction(0)) / total if total else Fraction(0)


def _ref_medoid(codes: list[int], length: int, beta: int, root: Fraction) -> tuple[int, Fraction]:
    costs = {
        s: sum((_ref_distance(s, t, length, beta, root) for t in codes), Fraction(0))
        for s in set(codes)
    }
    best = min(costs.values())
    return min(s for s, v in costs.items() if v == best), best


@st.composite
def semantic_cases(draw: st.DrawFn) -> tuple[SemanticKind, int, Fraction, list[int], list[int]]:
    length = draw(st.integers(1, 5))
    beta = draw(st.sampled_from([0, 1]))
    root = draw(st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1)]))
    # Few distinct digits so that codes share prefixes (and summed distances tie).
    digit = st.sampled_from("0139")
    code = st.lists(digit, min_size=length, max_size=length).map(lambda d: int("".join(d)))
    members = draw(st.lists(code, min_size=1, max_size=12))
    candidates = draw(st.lists(code, min_size=1, max_size=8))
    kind = SemanticKind("z", 1.0, length=length, beta=float(beta), root_weight=float(root))
    return kind, beta, root, members, candidates


@FAST
@given(semantic_cases())
def test_semantic_medoid_equals_exact_brute_force(case) -> None:
    kind, beta, root, members, _ = case
    medoid, cost = _ref_medoid(members, kind.length, beta, root)
    assert kind.centroid(np.array(members)) == medoid
    assert kind.loss(np.array(members)) == pytest.approx(float(cost), abs=1e-12)
    pairwise = [
        [float(_ref_distance(a, b, kind.length, beta, root)) for b in members] for a in members
    ]
    np.testing.assert_allclose(
        kind.distance(np.array(members)[:, None], np.array(members)[None, :]), pairwise, atol=1e-15
    )


@FAST
@given(semantic_cases())
def test_semantic_losses_with_each_equal_brute_force(case) -> None:
    kind, beta, root, members, candidates = case
    got = kind.losses_with_each(np.array(members), np.array(candidates))
    expected = [float(_ref_medoid(members + [c], kind.length, beta, root)[1]) for c in candidates]
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert kind.losses_with_each(np.array([], dtype=np.int64), np.array(candidates)).tolist() == [
        0.0
    ] * len(candidates)


# ---------------------------------------------------------------------------
# The kinds inside the per-block algorithms
# ---------------------------------------------------------------------------

_SENS = SensitiveLevels(
    name="s",
    values=("s0", "s1", "s2", "s3"),
    level_of=np.array([0, 0, 1, 1]),
    level_names=("low", "high"),
    weights=np.array([0.2, 0.6]),
)


def _block_frame(n: int, seed: int) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    kinds = (
        ZIP,
        nominal_kind("sex", 1.0, ("F", "M"), encoding="vector"),
        ordinal_kind("edu", 1.0, tuple("abcd"), rank_weights=(1, 2, 3), centroid="median"),
    )
    sens = rng.integers(0, 4, n)
    frame = pd.DataFrame(
        {
            RID: np.arange(n, dtype=np.int64),
            code_column(0): rng.choice([150001, 150002, 150101, 61110, 61999, 999999], n),
            code_column(1): rng.integers(0, 2, n),
            code_column(2): rng.integers(0, 4, n),
            SENS: sens,
            LEVEL: _SENS.level_of[sens],
        }
    )
    return frame, Schema(kinds=kinds, sensitive=_SENS)


def test_class_stats_score_semantic_classes_like_block_loss() -> None:
    frame, schema = _block_frame(40, 3)
    ctx = BlockContext(schema=schema, model=HPKAnonymity(k=4, p=2, h=1))
    block = Block(frame, ctx)
    assert block.codes[0].dtype == np.int64
    labels = np.where(np.arange(40) < 32, np.arange(40) % 8, -1)
    stats = ClassStats.from_labels(block, labels, 8)
    for c in range(8):
        assert stats.loss[c] == pytest.approx(block.loss(np.flatnonzero(labels == c)))
    row = [codes[35:36] for codes in block.codes]
    grown = stats.losses(np.arange(8), row)
    for c in range(8):
        members = np.append(np.flatnonzero(labels == c), 35)
        assert grown[c] == pytest.approx(block.loss(members))
    stats.add_rows(2, row, block.sens[35:36], block.level[35:36])
    assert stats.members[0][2].dtype == np.int64


@pytest.mark.parametrize("algorithm", ["maa_slie", "gpkc"])
def test_algorithms_run_on_yang2014_kinds(algorithm: str) -> None:
    frame, schema = _block_frame(60, 5)
    ctx = BlockContext(schema=schema, model=HPKAnonymity(k=4, p=2, h=2))
    labels = cluster_block(frame, ctx, algorithm, seed=1, block_id=0)
    assert (labels >= 0).all()
    sizes = np.bincount(labels)
    assert sizes.min() >= 4


# ---------------------------------------------------------------------------
# End to end on the local engine
# ---------------------------------------------------------------------------

EDUCATION_WEIGHTS = [1, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1]


def _six_digit_rows(n: int) -> list[dict[str, str]]:
    rows = [r for r in adult_rows(2000) if len(r["fnlwgt"]) == 6]
    assert len(rows) >= n
    return rows[:n]


def _yang2014_config(tmp_path: Path, input_path: Path) -> dict:
    demo = demo_config()
    education = next(a for a in demo["attributes"] if a["name"] == "education")
    return {
        "input": {"path": str(input_path), "options": {"header": True}},
        "attributes": [
            {"name": "age", "kind": "continuous"},
            {
                "name": "education",
                "kind": "ordinal",
                "order": education["order"],
                "rank_weights": EDUCATION_WEIGHTS,
                "centroid": "median",
            },
            {"name": "sex", "kind": "nominal", "encoding": "vector"},
            {"name": "race", "kind": "nominal", "encoding": "vector"},
            {"name": "fnlwgt", "kind": "semantic", "length": 6, "beta": 1.0, "root_weight": 0.0},
            {"name": "income", "kind": "keep"},
        ],
        "sensitive": demo["sensitive"],
        "model": {"name": "hpk", "h": 2, "p": 2, "k": 4},
        "partitioning": {"max_block_rows": 150},
        "output": {"path": str(tmp_path / "out")},
        "seed": 7,
    }


def test_end_to_end_with_yang2014_kinds(tmp_path: Path) -> None:
    rows = _six_digit_rows(400)
    cfg = parse_config(_yang2014_config(tmp_path, write_rows(tmp_path, rows)))
    result = run_job(LocalEngine(batch_rows=120), cfg, commit=False)
    m = result.metrics
    assert m["verified"] is True
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"] == 400
    assert m["blocks"] > 1
    published = result.published
    inputs = {r["fnlwgt"] for r in rows}
    # Medoids are members: every published fnlwgt is a 6-digit code of the input.
    assert set(published["fnlwgt"]) <= inputs
    assert published["fnlwgt"].str.fullmatch(r"[0-9]{6}").all()
    edu = set(cfg.attributes[1].order or ())
    assert set(published["education"]) <= edu
    assert set(published["sex"]) <= {"Male", "Female"}
    assert 0 < m["R_IL"] < len(cfg.quasi_identifiers)
    again = run_job(LocalEngine(batch_rows=77), cfg, commit=False)
    pd.testing.assert_frame_equal(
        published.sort_values(list(published.columns)).reset_index(drop=True),
        again.published.sort_values(list(published.columns)).reset_index(drop=True),
    )


def test_semantic_code_of_the_wrong_length_is_an_input_error(tmp_path: Path) -> None:
    rows = _six_digit_rows(60)
    rows[17]["fnlwgt"] = "12345"
    cfg = parse_config(_yang2014_config(tmp_path, write_rows(tmp_path, rows)))
    with pytest.raises(InputError) as err:
        run_job(LocalEngine(), cfg, commit=False)
    text = str(err.value)
    assert "'fnlwgt'" in text
    assert "'12345'" in text
    assert "6 digits" in text


@FAST
@given(semantic_cases(), st.integers(0, 4), st.booleans())
def test_semantic_batch_losses_of_classes_equal_per_class_loss(case, cut: int, add: bool) -> None:
    kind, _, _, members, candidates = case
    groups = [np.array(members[:cut], dtype=np.int64), np.array(members[cut:], dtype=np.int64)]
    groups.append(np.array(candidates, dtype=np.int64))
    extra = candidates[0] if add else None
    expected = [
        kind.loss(g if extra is None else np.append(g, extra).astype(np.int64)) for g in groups
    ]
    np.testing.assert_allclose(kind.losses_of(groups, extra), expected, atol=1e-12)


@FAST
@given(
    st.lists(st.lists(st.integers(0, 999_999), min_size=0, max_size=6), min_size=1, max_size=5),
    st.lists(st.integers(0, 999_999), min_size=0, max_size=4),
)
def test_batch_losses_with_a_set_of_added_codes_equal_per_class_loss(
    groups: list[list[int]], added: list[int]
) -> None:
    """``losses_of(groups, codes)`` (used by MAA-SAE to score merging a class) is exact."""
    semantic = SemanticKind("fnlwgt", 1.0, length=6)
    continuous = ContinuousKind("age", 1.0, low=0.0, high=1.0)
    for kind, scale in ((semantic, 1), (continuous, 1e-6)):
        parts = [np.asarray(g, dtype=np.int64) * scale for g in groups]
        extra = np.asarray(added, dtype=np.int64) * scale
        expected = [kind.loss(np.concatenate([g, extra])) for g in parts]
        assert kind.losses_of(parts, extra) == pytest.approx(expected, abs=1e-9)
        assert kind.losses_of(parts) == pytest.approx([kind.loss(g) for g in parts], abs=1e-9)
