"""Quasi-identifier kinds (Shi et al. 2024, section 1.5, eq. 3-17) and ARX taxonomy loading.

Every expected number is worked out by hand in the comments, or by an independent
reference written here (exact fractions), never by calling the code under test twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkanon.attributes.checks import (
    BuilderCheck,
    CodeCheck,
    DomainCheck,
    FreeCheck,
    NumberCheck,
    SummaryRow,
    TemporalCheck,
    ValueCheck,
)
from sparkanon.attributes.dates import TemporalFormat
from sparkanon.attributes.hierarchy import Taxonomy, load_arx_hierarchy
from sparkanon.attributes.kinds import (
    CONTINUOUS_BINS,
    CategoricalKind,
    ContinuousKind,
    DiscreteKind,
    Kind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.text import TrimmedText, trimmed_text
from sparkanon.config.builders import GroupsBuilder
from sparkanon.errors import ConfigError
from tests._helpers import FAST
from tests._inputs import ROOT

# ---------------------------------------------------------------------------
# A small education taxonomy in ARX format (leaf;parent;...;root; tests._helpers.EDU_ARX),
# rows deliberately not in depth-first order.
#
#   *
#   +-- Higher
#   |   +-- Undergraduate: Bachelors, Some-college
#   |   +-- Graduate:      Masters, Doctorate
#   +-- Secondary
#       +-- HighSchool:    11th, HS-grad
#       +-- Primary:       5th
#
# Children are ordered by first appearance in the file, so the depth-first leaf
# order (= the codes) is:
#   0 Bachelors, 1 Some-college, 2 Masters, 3 Doctorate, 4 11th, 5 HS-grad, 6 5th
# ---------------------------------------------------------------------------
EDU_LEAVES = ("Bachelors", "Some-college", "Masters", "Doctorate", "11th", "HS-grad", "5th")

# u(a, b): levels from the leaves up to their lowest common ancestor (eq. 14 numerator).
EDU_U = np.array(
    [
        # Ba Sc Ma Do 11 HS 5t
        [0, 1, 2, 2, 3, 3, 3],  # Bachelors
        [1, 0, 2, 2, 3, 3, 3],  # Some-college
        [2, 2, 0, 1, 3, 3, 3],  # Masters
        [2, 2, 1, 0, 3, 3, 3],  # Doctorate
        [3, 3, 3, 3, 0, 1, 2],  # 11th
        [3, 3, 3, 3, 1, 0, 2],  # HS-grad
        [3, 3, 3, 3, 2, 2, 0],  # 5th
    ]
)


@pytest.fixture(scope="module")
def edu_kind(edu_taxonomy: Taxonomy) -> CategoricalKind:
    return categorical_kind("education", 1.0, edu_taxonomy)


# ---------------------------------------------------------------------------
# Independent references (exact arithmetic)
# ---------------------------------------------------------------------------


def ref_ordinal_centre(codes: list[int]) -> int:
    """Definition 3 / eq. 7-13 with exact fractions."""
    mean = Fraction(sum(codes), len(codes))
    below = sum(1 for c in codes if c < mean)
    above = sum(1 for c in codes if c > mean)
    if below < above:
        return math.ceil(mean)
    if below > above:
        return math.floor(mean)
    return math.floor(mean + Fraction(1, 2))


def ref_medoid(codes: list[int], u: np.ndarray) -> int:
    """Eq. 15 with integer costs (u levels): the present value of least summed distance,
    lowest code on ties."""
    present = sorted(set(codes))
    costs = [sum(int(u[c, v]) for c in codes) for v in present]
    return present[costs.index(min(costs))]


def ref_mode(codes: list[int]) -> int:
    counts = {c: codes.count(c) for c in set(codes)}
    best = max(counts.values())
    return min(c for c, n in counts.items() if n == best)


def ref_loss_exact(
    kind_name: str, codes: list, size: int = 0, u: np.ndarray | None = None
) -> float:
    """Brute-force InfoLoss of one class on one attribute (sum of distances to the centroid)."""
    if kind_name == "continuous":
        mean = sum(codes) / len(codes)
        return float(sum(abs(c - mean) for c in codes))
    if kind_name == "ordinal":
        centre = ref_ordinal_centre(codes)
        span = max(size - 1, 1)
        return float(Fraction(sum(abs(c - centre) for c in codes), span))
    if kind_name == "categorical":
        assert u is not None
        centre = ref_medoid(codes, u)
        height = int(u.max())
        return float(Fraction(sum(int(u[c, centre]) for c in codes), height))
    if kind_name == "nominal":
        centre = ref_mode(codes)
        return float(sum(1 for c in codes if c != centre))
    raise AssertionError(kind_name)


# ---------------------------------------------------------------------------
# Continuous (eq. 3-5)
# ---------------------------------------------------------------------------

AGES = [21, 26, 25, 48, 32, 45, 35, 50]  # Shi et al. 2024, Table 1, range 21..50 (width 29)


def test_continuous_normalisation_table1() -> None:
    kind = ContinuousKind(name="age", weight=1.0, low=21.0, high=50.0)
    codes, invalid = kind.encode(pd.Series(AGES))
    # eq. 3: (x - 21) / 29
    expected = np.array([0, 5, 4, 27, 11, 24, 14, 29]) / 29.0
    assert codes == pytest.approx(expected)
    assert not invalid.any()
    assert codes[0] == 0.0 and codes[-1] == 1.0


def test_continuous_distance_centroid_loss_table1() -> None:
    kind = ContinuousKind(name="age", weight=1.0, low=21.0, high=50.0)
    codes, _ = kind.encode(pd.Series(AGES))
    # eq. 4: d(t1, t8) = |0 - 1| = 1 ; d(t2, t3) = |5/29 - 4/29| = 1/29
    assert kind.distance_to(codes[[0]], codes[7]) == pytest.approx([1.0])
    assert kind.distance_to(codes[[1]], codes[2]) == pytest.approx([1 / 29])
    # eq. 5: the centre of {21, 26, 25} is (0 + 5 + 4) / 29 / 3 = 3/29, i.e. age 24
    cls = codes[[0, 1, 2]]
    assert kind.centroid(cls) == pytest.approx(3 / 29)
    assert kind.decode(np.array([kind.centroid(cls)])) == pytest.approx([24.0])
    # InfoLoss of {21, 26, 25}: |0-3| + |5-3| + |4-3| = 6 units of 1/29
    assert kind.loss(cls) == pytest.approx(6 / 29)


def test_continuous_encode_invalid_and_strings() -> None:
    kind = ContinuousKind(name="age", weight=1.0, low=20.0, high=40.0)
    codes, invalid = kind.encode(pd.Series(["30", "abc", None, 25.0], dtype=object))
    assert invalid.tolist() == [False, True, True, False]
    assert codes[0] == pytest.approx(0.5)
    assert codes[3] == pytest.approx(0.25)
    assert not np.isnan(codes).any()


def test_continuous_constant_column_does_not_divide_by_zero() -> None:
    kind = ContinuousKind(name="c", weight=1.0, low=7.0, high=7.0)
    codes, invalid = kind.encode(pd.Series([7.0, 7.0]))
    assert codes.tolist() == [0.0, 0.0]
    assert not invalid.any()
    assert kind.decode(codes) == pytest.approx([7.0, 7.0])


def test_continuous_decode_rounds() -> None:
    kind = ContinuousKind(name="c", weight=1.0, low=0.0, high=1.0, decimals=1)
    assert kind.decode(np.array([1 / 3, 0.66])) == pytest.approx([0.3, 0.7])


def test_continuous_bins() -> None:
    kind = ContinuousKind(name="c", weight=1.0)
    got = kind.bins(np.array([0.0, 0.5, 0.999, 1.0]))
    assert got.tolist() == [0, 512, 1022, CONTINUOUS_BINS - 1]
    assert kind.bin_span(0, 512) == pytest.approx(0.5)


# ---------------------------------------------------------------------------
# Ordinal (eq. 6-13)
# ---------------------------------------------------------------------------

ORDER15 = tuple(f"g{i:02d}" for i in range(15))  # 15 ranks: |B| = 14


def test_ordinal_distance_seed_example() -> None:
    # Seed's example: d = |10 - 3| / |14| = 0.5 on a 15-value order.
    kind = ordinal_kind("grade", 1.0, ORDER15)
    assert kind.matrix[10, 3] == pytest.approx(0.5)
    assert kind.distance_to(np.array([10, 3, 0, 14]), 3) == pytest.approx(
        [0.5, 0.0, 3 / 14, 11 / 14]
    )
    assert kind.matrix[0, 14] == pytest.approx(1.0)


def test_ordinal_distance_uses_declared_span_not_data_span() -> None:
    # Only ranks 2 and 4 occur, but |B| is the declared order's span (14).
    kind = ordinal_kind("grade", 1.0, ORDER15)
    assert kind.loss(np.array([2, 4])) == pytest.approx(2 / 14)  # centre 3: 1/14 + 1/14


def test_ordinal_encode_decode() -> None:
    kind = ordinal_kind("edu", 1.0, ("primary", "middle", "high", "college", "bachelor"))
    codes, invalid = kind.encode(pd.Series(["high", " bachelor ", "phd", "primary"]))
    assert invalid.tolist() == [False, False, True, False]
    assert codes[[0, 1, 3]].tolist() == [2, 4, 0]
    assert kind.decode(np.array([4, 0])).tolist() == ["bachelor", "primary"]


@pytest.mark.parametrize(
    ("codes", "expected", "why"),
    [
        # K = 10/3 = 3.33; below {0}: 1, above {5, 5}: 2 -> fewer below -> ceil = 4
        # (round would give 3).
        ([0, 5, 5], 4, "ceil"),
        # K = 8/3 = 2.67; below {0}: 1, above {4, 4}: 2 -> ceil = 3
        ([0, 4, 4], 3, "ceil"),
        # K = 11/3 = 3.67; below {1, 1}: 2, above {9}: 1 -> more below -> floor = 3
        # (round would give 4).
        ([1, 1, 9], 3, "floor"),
        # K = 2.5; one below, one above -> round(2.5) = floor(3.0) = 3 (half up, eq. 13;
        # numpy's banker's rounding would give 2).
        ([1, 4], 3, "round half up"),
        # K = 1.5 -> 2
        ([1, 2], 2, "round half up"),
        # K = 9/4 = 2.25; below {1, 2, 2}: 3, above {4}: 1 -> floor = 2
        ([1, 2, 2, 4], 2, "floor"),
        # K = 17/5 = 3.4; below {1, 2}: 2, above {4, 4, 6}: 3 -> ceil = 4 (round: 3)
        ([1, 2, 4, 4, 6], 4, "ceil"),
        # all equal: K = 3, nothing on either side -> round(3) = 3
        ([3, 3, 3], 3, "round"),
        # K = 7 exactly, 1 below 1 above -> 7
        ([0, 7, 14], 7, "round"),
    ],
)
def test_ordinal_center_mean_frequency(codes: list[int], expected: int, why: str) -> None:
    kind = ordinal_kind("grade", 1.0, ORDER15)
    assert ref_ordinal_centre(codes) == expected, why  # the reference agrees with the hand value
    assert kind.centroid(np.array(codes)) == expected, why


def test_ordinal_centroids_batch_three_branches() -> None:
    kind = ordinal_kind("grade", 1.0, ORDER15)
    hists = np.stack([kind.histogram(np.array(c)) for c in ([0, 5, 5], [1, 1, 9], [1, 4])])
    assert kind.centroids(hists).tolist() == [4, 3, 3]
    # Loss of [0, 5, 5] around 4: (4 + 1 + 1) / 14
    assert kind.losses(hists)[0] == pytest.approx(6 / 14)


# ---------------------------------------------------------------------------
# Categorical (eq. 14-15) and the ARX taxonomy
# ---------------------------------------------------------------------------


def test_taxonomy_depth_first_order(edu_taxonomy: Taxonomy) -> None:
    assert edu_taxonomy.leaves == EDU_LEAVES
    assert edu_taxonomy.height == 3
    assert edu_taxonomy.size == 7
    assert edu_taxonomy.paths[2] == ("Masters", "Graduate", "Higher", "*")
    assert edu_taxonomy.paths[6] == ("5th", "Primary", "Secondary", "*")


def test_taxonomy_lca_and_distance(edu_taxonomy: Taxonomy) -> None:
    assert edu_taxonomy.lca_levels().tolist() == EDU_U.tolist()
    d = edu_taxonomy.distance_matrix()
    # eq. 14: u / root_c with root_c = 3
    assert d[0, 1] == pytest.approx(1 / 3)  # Bachelors - Some-college: parent Undergraduate
    assert d[0, 2] == pytest.approx(2 / 3)  # Bachelors - Masters: grandparent Higher
    assert d[0, 4] == pytest.approx(1.0)  # Bachelors - 11th: only the root
    assert d[4, 6] == pytest.approx(2 / 3)  # 11th - 5th: Secondary
    assert d[3, 3] == 0.0
    assert np.allclose(d, EDU_U / 3)


@pytest.mark.parametrize(
    ("lo", "hi", "cuts"),
    [
        (0, 6, [3]),  # root: Higher | Secondary
        (0, 3, [1]),  # Higher: Undergraduate | Graduate
        (4, 6, [5]),  # Secondary: HighSchool | Primary
        (0, 1, [0]),  # Undergraduate: Bachelors | Some-college
        (1, 2, [1]),  # common ancestor Higher: cut between its children
        (2, 5, [3]),  # common ancestor root: cut between Higher and Secondary
        (1, 5, [3]),
        (3, 3, []),
    ],
)
def test_subtree_boundaries(edu_taxonomy: Taxonomy, lo: int, hi: int, cuts: list[int]) -> None:
    assert edu_taxonomy.subtree_boundaries(lo, hi) == cuts


def test_subtree_boundaries_many_children(tmp_path: Path) -> None:
    # Root with three children X, Y, Z (first seen in that order); d comes under X.
    path = tmp_path / "h.csv"
    path.write_text("a;X;*\nb;Y;*\nc;Z;*\nd;X;*\n", encoding="utf-8")
    tax = load_arx_hierarchy(path, "h")
    assert tax.leaves == ("a", "d", "b", "c")
    assert tax.subtree_boundaries(0, 3) == [1, 2]
    assert tax.subtree_boundaries(1, 3) == [1, 2]
    assert tax.subtree_boundaries(0, 1) == [0]


def test_categorical_cut_candidates(edu_kind: CategoricalKind) -> None:
    assert edu_kind.cut_candidates(0, 6) == [3]
    assert edu_kind.cut_candidates(0, 3) == [1]


def test_categorical_encode(edu_kind: CategoricalKind) -> None:
    codes, invalid = edu_kind.encode(pd.Series(["5th", "Masters", "Nursery", "Bachelors"]))
    assert invalid.tolist() == [False, False, True, False]
    assert codes[[0, 1, 3]].tolist() == [6, 2, 0]
    assert edu_kind.decode(np.array([3])).tolist() == ["Doctorate"]


def test_categorical_medoid_not_mode(edu_kind: CategoricalKind) -> None:
    # {11th, 11th, Bachelors, Some-college, Masters, Doctorate}, codes [4, 4, 0, 1, 2, 3].
    # Summed distance (units of 1/3) to each present value:
    #   11th:         0 + 0 + 3 + 3 + 3 + 3 = 12
    #   Bachelors:    3 + 3 + 0 + 1 + 2 + 2 = 11
    #   Some-college: 3 + 3 + 1 + 0 + 2 + 2 = 11
    #   Masters:      3 + 3 + 2 + 2 + 0 + 1 = 11
    #   Doctorate:    3 + 3 + 2 + 2 + 1 + 0 = 11
    # The mode is 11th, the medoid (eq. 15) ties four ways -> lowest code: Bachelors (0).
    codes = np.array([4, 4, 0, 1, 2, 3])
    assert edu_kind.centroid(codes) == 0
    assert edu_kind.loss(codes) == pytest.approx(11 / 3)


def test_categorical_medoid_simple(edu_kind: CategoricalKind) -> None:
    # {Masters, Masters, Bachelors}: Masters costs 0 + 0 + 2 = 2, Bachelors 2 + 2 + 0 = 4.
    assert edu_kind.centroid(np.array([2, 2, 0])) == 2
    assert edu_kind.loss(np.array([2, 2, 0])) == pytest.approx(2 / 3)
    # {Bachelors, 11th, 5th}: Bachelors 0+3+3 = 6, 11th 3+0+2 = 5, 5th 3+2+0 = 5 -> 11th (4)
    assert edu_kind.centroid(np.array([0, 4, 6])) == 4
    assert edu_kind.loss(np.array([0, 4, 6])) == pytest.approx(5 / 3)


def test_categorical_medoid_three_way_tie_lowest_code(edu_kind: CategoricalKind) -> None:
    # {Doctorate, 11th x2, HS-grad x2, 5th x3}, codes [3, 4, 4, 5, 5, 6, 6, 6].
    # Summed u levels (units of 1/3) to each present value:
    #   Doctorate: 0 + 3 * 7                     = 21
    #   11th:      3 + 0 * 2 + 1 * 2 + 2 * 3     = 11
    #   HS-grad:   3 + 1 * 2 + 0 * 2 + 2 * 3     = 11
    #   5th:       3 + 2 * 2 + 2 * 2 + 0 * 3     = 11
    # Tie 11th / HS-grad / 5th -> lowest code: 11th (4). Loss 11/3.
    codes = np.array([3, 4, 4, 5, 5, 6, 6, 6])
    assert edu_kind.loss(codes) == pytest.approx(11 / 3)
    assert edu_kind.centroid(codes) == 4
    assert edu_kind.centroids(edu_kind.histogram(codes)[None, :]).tolist() == [4]


# A balanced binary taxonomy of height 3: L0..L7, parents P0..P3, grandparents G0, G1.
BINARY_ARX = "".join(f"L{i};P{i >> 1};G{i >> 2};*\n" for i in range(8))


def test_categorical_medoid_tie_goes_to_lowest_code_despite_float_noise(tmp_path: Path) -> None:
    # Class {L0, L0, L2, L4, L5, L6, L7}. Summed u levels (units of 1/3) to each present value:
    #   L0: 0 + 0 + 2 + 3 + 3 + 3 + 3 = 14
    #   L2: 2 + 2 + 0 + 3 + 3 + 3 + 3 = 16
    #   L4: 3 + 3 + 3 + 0 + 1 + 2 + 2 = 14
    #   L5: 3 + 3 + 3 + 1 + 0 + 2 + 2 = 14
    #   L6: 3 + 3 + 3 + 2 + 2 + 0 + 1 = 14
    #   L7: 3 + 3 + 3 + 2 + 2 + 1 + 0 = 14
    # A five-way tie: the documented rule ("ties go to the lowest code") gives L0.
    # Summing thirds in floating point gives 4.666...67 for L0 but 4.666...66 for L4,
    # so a float argmin picks L4.
    path = tmp_path / "binary.csv"
    path.write_text(BINARY_ARX, encoding="utf-8")
    kind = categorical_kind("b", 1.0, load_arx_hierarchy(path, "b"))
    assert kind.labels == tuple(f"L{i}" for i in range(8))
    codes = np.array([0, 0, 2, 4, 5, 6, 7])
    assert kind.loss(codes) == pytest.approx(14 / 3)
    assert kind.centroid(codes) == 0
    assert kind.centroids(kind.histogram(codes)[None, :]).tolist() == [0]


def test_categorical_medoid_is_a_present_value(edu_kind: CategoricalKind) -> None:
    # {Some-college, Doctorate}: the medoid must be one of them (Bachelors and Masters
    # are absent). Both cost 2 -> the lower code, Some-college (1).
    assert edu_kind.centroid(np.array([3, 1])) == 1


# ---------------------------------------------------------------------------
# Nominal (eq. 16-17)
# ---------------------------------------------------------------------------


def test_nominal_distance_and_mode() -> None:
    kind = nominal_kind("sex", 1.0, ("F", "M", "X"))
    assert kind.distance_to(np.array([0, 1, 2, 1]), 1).tolist() == [1.0, 0.0, 1.0, 0.0]
    assert kind.centroid(np.array([1, 1, 0])) == 1
    assert kind.loss(np.array([1, 1, 0])) == pytest.approx(1.0)
    assert kind.centroid(np.array([2, 0])) == 0  # tie -> lowest code
    assert kind.centroid(np.array([2, 2, 1, 1])) == 1  # tie -> lowest code
    assert kind.centroid(np.array([2, 2, 2, 0, 1])) == 2
    assert kind.loss(np.array([2, 2, 2, 0, 1])) == pytest.approx(2.0)


# ---------------------------------------------------------------------------
# losses_with_each == brute force, every kind (property tests)
# ---------------------------------------------------------------------------


@FAST
@given(
    members=st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=0, max_size=10),
    candidates=st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=6),
)
def test_continuous_losses_with_each_brute_force(
    members: list[float], candidates: list[float]
) -> None:
    kind = ContinuousKind(name="c", weight=1.0)
    got = kind.losses_with_each(np.array(members, dtype=float), np.array(candidates, dtype=float))
    expected = [ref_loss_exact("continuous", [*members, c]) for c in candidates]
    assert got == pytest.approx(expected, abs=1e-9)


def assert_losses_with_each(
    data: st.DataObject, kind: Kind, codes: int, name: str, **reference: Any
) -> None:
    """``losses_with_each`` of random members and candidates (codes below ``codes``) equals
    the brute-force loss of each grown class (``ref_loss_exact(name, ..., **reference)``)."""
    code = st.integers(0, codes - 1)
    members = data.draw(st.lists(code, min_size=0, max_size=10))
    candidates = data.draw(st.lists(code, min_size=1, max_size=6))
    got = kind.losses_with_each(np.array(members, dtype=np.int64), np.array(candidates))
    expected = [ref_loss_exact(name, [*members, c], **reference) for c in candidates]
    assert got == pytest.approx(expected, abs=1e-9)


@FAST
@given(data=st.data(), size=st.integers(2, 15))
def test_ordinal_losses_with_each_brute_force(data: st.DataObject, size: int) -> None:
    kind = ordinal_kind("o", 1.0, tuple(f"v{i}" for i in range(size)))
    assert_losses_with_each(data, kind, size, "ordinal", size=size)


@FAST
@given(data=st.data())
def test_categorical_losses_with_each_brute_force(
    data: st.DataObject, edu_kind: CategoricalKind
) -> None:
    assert_losses_with_each(data, edu_kind, 7, "categorical", u=EDU_U)


@FAST
@given(data=st.data(), size=st.integers(2, 5))
def test_nominal_losses_with_each_brute_force(data: st.DataObject, size: int) -> None:
    kind = nominal_kind("n", 1.0, tuple(f"v{i}" for i in range(size)))
    assert_losses_with_each(data, kind, size, "nominal")


# ---------------------------------------------------------------------------
# DiscreteKind.centroids (batch) == per-row centroid == reference
# ---------------------------------------------------------------------------


def _hists(data: st.DataObject, size: int) -> np.ndarray:
    rows = data.draw(
        st.lists(
            st.lists(st.integers(0, 4), min_size=size, max_size=size).filter(lambda r: sum(r) > 0),
            min_size=1,
            max_size=6,
        )
    )
    return np.array(rows, dtype=float)


def _expand(hist: np.ndarray) -> list[int]:
    return [v for v, n in enumerate(hist.astype(int)) for _ in range(n)]


def _check_batch(kind: DiscreteKind, hists: np.ndarray, ref: Callable[[list[int]], int]) -> None:
    batch = kind.centroids(hists)
    assert batch.shape == (len(hists),)
    for i, hist in enumerate(hists):
        codes = _expand(hist)
        assert batch[i] == kind.centroid(np.array(codes)), f"batch vs per-row, hist {hist}"
        assert batch[i] == ref(codes), f"batch vs reference, hist {hist}"


@FAST
@given(data=st.data(), size=st.integers(2, 8))
def test_ordinal_centroids_batch(data: st.DataObject, size: int) -> None:
    kind = ordinal_kind("o", 1.0, tuple(f"v{i}" for i in range(size)))
    _check_batch(kind, _hists(data, size), ref_ordinal_centre)


@FAST
@given(data=st.data())
def test_categorical_centroids_batch(data: st.DataObject, edu_kind: CategoricalKind) -> None:
    _check_batch(edu_kind, _hists(data, 7), lambda codes: ref_medoid(codes, EDU_U))


@FAST
@given(data=st.data(), size=st.integers(2, 5))
def test_nominal_centroids_batch(data: st.DataObject, size: int) -> None:
    kind = nominal_kind("n", 1.0, tuple(f"v{i}" for i in range(size)))
    _check_batch(kind, _hists(data, size), ref_mode)


# ---------------------------------------------------------------------------
# load_arx_hierarchy errors
# ---------------------------------------------------------------------------


# Each case: the file's text and what the message must name besides the file and the
# attribute: the line (1-based, blank lines counted) and the offending value.
BAD_HIERARCHIES = {
    "ragged": ("a;X;*\nb;Y;Z;*\n", ["line 2", "'b'", "columns"]),
    "empty-cell": ("a;X;*\nb;;*\n", ["line 2", "'b;;*'", "empty cell"]),
    "duplicate-leaf": ("a;X;*\nb;X;*\na;Y;*\n", ["'a'", "twice", "line 3"]),
    "two-parents": ("a;X;P;*\nb;X;Q;*\n", ["'X'", "two parents", "'P'", "'Q'", "line 2"]),
    # A leaf that generalizes other values: b's parent is the leaf a.
    "leaf-is-inner-node": ("a;X;*\nb;a;*\n", ["'a'", "both a leaf", "inner node", "line 2"]),
    # The same, the inner node first: X generalizes a (line 1) and is a leaf (line 3).
    "inner-node-is-leaf": (
        "a;X;*\nb;Y;*\nX;Y;*\n",
        ["'X'", "both a leaf (line 3)", "inner node (line 1)"],
    ),
    # X -> Y on line 1 and Y -> X on line 2: the cycle shows as Y at levels 2 and 1.
    "cycle": ("a;X;Y;*\nb;Y;X;*\n", ["'Y'", "level 1 on line 2", "level 2 on line 1", "cycle"]),
    # A node that is its own parent, within one line.
    "self-parent": ("a;P;*;*\nb;X;X;*\n", ["line 1", "'*'", "cycle"]),
    # X spans levels 1-2 on line 1 (a node generalized to itself) but only level 2 on line 2.
    "chain-at-other-levels": ("a;X;X;*\nb;Y;X;*\n", ["'X'", "level 2 on line 2", "cycle"]),
    "several-roots": ("a;X;*\nb;Y;#\n", ["several roots", "'#'", "line 2"]),
    "blank-lines-counted": ("\na;X;*\n\nb;;*\n", ["line 4", "empty cell"]),
    "empty": ("", ["empty"]),
    "blank": ("\n\n", ["empty"]),
    "one-column": ("a\nb\n", ["one column", "line 1", "'a'"]),
}


@pytest.mark.parametrize(
    ("content", "fragments"), list(BAD_HIERARCHIES.values()), ids=list(BAD_HIERARCHIES)
)
def test_load_arx_hierarchy_errors(tmp_path: Path, content: str, fragments: list[str]) -> None:
    path = tmp_path / "bad_hierarchy.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_arx_hierarchy(path, "education")
    message = str(err.value)
    assert str(path) in message
    assert "education" in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_load_arx_hierarchy_node_has_one_parent_whatever_the_level(tmp_path: Path) -> None:
    # X is a level-1 node under P on line 1 and a level-2 node over Y on line 2.
    path = tmp_path / "h.csv"
    path.write_text("a;X;P;*\nb;Y;X;*\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_arx_hierarchy(path, "h")
    message = str(err.value)
    assert str(path) in message and "'X'" in message and "line 2" in message


def test_load_arx_hierarchy_accepts_every_bundled_hierarchy() -> None:
    bundled = sorted((ROOT / "data/adult/hierarchies").glob("*.csv"))
    assert len(bundled) >= 9
    for path in bundled:
        tax = load_arx_hierarchy(path, path.stem)
        assert tax.size == len(set(tax.leaves)) > 0
        assert len({p[-1] for p in tax.paths}) == 1


def test_load_arx_hierarchy_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.csv"
    with pytest.raises(ConfigError) as err:
        load_arx_hierarchy(path, "education")
    assert str(path) in str(err.value)
    assert "does not exist" in str(err.value)


def test_load_arx_hierarchy_strips_cells(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_text(" a ; X ;*\nb;X; *\n", encoding="utf-8")
    tax = load_arx_hierarchy(path, "h")
    assert tax.leaves == ("a", "b")
    assert tax.distance_matrix()[0, 1] == pytest.approx(0.5)


@pytest.mark.parametrize(
    "values",
    [
        pd.Series([" a", "b ", None, np.nan, "a", " ", "", "\tb\n"]),
        pd.Series([1, 2, 2, 30]),
        pd.Series([1.0, np.nan, 2.5, -0.0, 0.0]),
        pd.Series(["x", pd.NA, " x"], dtype="string"),
        pd.Series([], dtype=object),
        pd.Series([1, "1", " 1", 1.5], dtype=object),
    ],
)
def test_trimmed_text_equals_row_by_row_strip(values: pd.Series) -> None:
    """Text, numbers and mixed values (booleans and decimals: tests/stages/test_wide.py)."""
    expected = values.astype("string").str.strip()
    got = trimmed_text(values)
    assert got.dtype == expected.dtype
    assert got.equals(expected)


@FAST
@given(
    cells=st.lists(
        st.one_of(st.none(), st.sampled_from(["a", " a", "a ", "?", " ? ", "b", "", " ", "NA"])),
        max_size=30,
    ),
    keep=st.lists(st.booleans(), min_size=30, max_size=30),
)
def test_batch_text_per_distinct_value_equals_row_by_row(
    cells: list[str | None], keep: list[bool]
) -> None:
    """TrimmedText's tests, counts and encodings on distinct values are the row-by-row ones."""
    frame = pd.DataFrame({"c": pd.Series(cells, dtype=object)})
    texts = TrimmedText(frame).rows(np.array(keep[: len(cells)], dtype=bool))
    rows = texts["c"]
    tokens = {"?", "NA"}
    assert texts.isin("c", tokens).tolist() == rows.isin(list(tokens)).fillna(False).tolist()
    assert (
        texts.value_counts("c").sort_index().to_dict() == rows.value_counts().sort_index().to_dict()
    )
    kind = nominal_kind("c", 1.0, ("a", "b", "?"))
    got = texts.per_value("c", kind.encode)
    want = kind.encode(rows.reset_index(drop=True))
    assert [a.tolist() for a in got] == [a.tolist() for a in want]


def test_parsed_reads_a_column_once_and_follows_rows() -> None:
    texts = TrimmedText(pd.DataFrame({"c": ["1", "2", "3"]}))
    calls = []

    def parse() -> tuple[np.ndarray, ...]:
        calls.append(1)
        return (np.array([1.0, 2.0, 3.0]),)

    assert texts.parsed("c", parse)[0].tolist() == [1.0, 2.0, 3.0]
    kept = texts.rows(np.array([True, False, True]))
    assert kept.parsed("c", parse)[0].tolist() == [1.0, 3.0]
    assert len(calls) == 1


# ---------------------------------------------------------------------------
# Value checks (sparkanon.attributes.checks): one hand-worked batch each. ``invalid`` is
# asked of the batch (rows holding no missing value), ``summary`` of the rows kept.


def _check(check: ValueCheck, values: list[Any]) -> tuple[list[bool], list[str], TrimmedText]:
    """The check's invalid mask, the examples it shows, and the batch as trimmed text."""
    texts = TrimmedText(pd.DataFrame({"c": pd.Series(values, dtype=object)}))
    bad = check.invalid(texts, "c")
    return bad.tolist(), check.shown(texts, "c")[bad].astype(str).tolist(), texts


def test_number_check() -> None:
    # "abc" is no number, "inf" no finite one; " 1.5 " trims to 1.5; the examples show the
    # values as read (untrimmed). Range of 3, 1.5, 2: n=3, lo=1.5, hi=3.
    bad, shown, texts = _check(NumberCheck(), ["3", " 1.5 ", "abc", "inf", 2])
    assert bad == [False, False, True, True, False]
    assert shown == ["abc", "inf"]
    assert NumberCheck.invalid_stat == "nonnumeric"
    assert NumberCheck().summary(texts, "c") == [SummaryRow("range", None, 3, 1.5, 3.0)]


def test_number_check_of_a_number_column() -> None:
    texts = TrimmedText(pd.DataFrame({"c": [2.5, np.inf, -1.0]}))
    check = NumberCheck()
    bad = check.invalid(texts, "c")
    assert bad.tolist() == [False, True, False]
    assert check.shown(texts, "c")[bad].astype(str).tolist() == ["inf"]
    assert check.summary(texts.rows(~bad), "c") == [SummaryRow("range", None, 2, -1.0, 2.5)]
    assert check.summary(texts.rows(np.zeros(3, dtype=bool)), "c") == []


def test_code_check() -> None:
    # Codes of exactly 3 digits, after trimming: "12" is short, "abcd" no digits, "0123" long.
    bad, shown, texts = _check(CodeCheck(3), ["012", " 345 ", "12", "abcd", "0123"])
    assert bad == [False, False, True, True, True]
    assert shown == ["12", "abcd", "0123"]
    assert CodeCheck.invalid_stat == "malformed"
    assert CodeCheck(3).summary(texts, "c") == []


def test_builder_check() -> None:
    # A groups builder places the values of its order only: "c" is invalid; the domain of
    # the rows kept is profiled (the builder generates the hierarchy from it).
    check = BuilderCheck(GroupsBuilder(type="groups", order=("a", "b"), sizes=(2,)))
    bad, shown, texts = _check(check, ["a", " b", "c", "a"])
    assert bad == [False, False, True, False]
    assert shown == ["c"]
    assert check.invalid_stat == "unknown"
    kept = texts.rows(~np.array(bad))
    assert sorted(check.summary(kept, "c")) == [
        SummaryRow("domain", "a", 2),
        SummaryRow("domain", "b", 1),
    ]


def test_temporal_check_of_dates() -> None:
    # Epoch days: 1970-01-02 is 1, 1970-01-11 is 10; "31/12/1970" does not match the format.
    check = TemporalCheck(TemporalFormat(True, "%Y-%m-%d"))
    bad, shown, texts = _check(check, ["1970-01-02", " 1970-01-11", "31/12/1970"])
    assert bad == [False, False, True]
    assert shown == ["31/12/1970"]
    assert check.invalid_stat == "unparsed"
    assert check.summary(texts, "c") == [SummaryRow("range", None, 2, 1.0, 10.0)]


def test_temporal_check_of_timestamps() -> None:
    # Naive values are Paris wall-clock time (UTC+1 in January): 01:00 there is epoch 0;
    # "00:01Z" carries its offset: 60 seconds.
    check = TemporalCheck(TemporalFormat(False, None, "Europe/Paris"))
    bad, shown, texts = _check(check, ["1970-01-01T01:00:00", "1970-01-01T00:01:00Z", "noon"])
    assert bad == [False, False, True]
    assert shown == ["noon"]
    assert check.summary(texts, "c") == [SummaryRow("range", None, 2, 0.0, 60.0)]


def test_domain_check() -> None:
    # The declared values, compared as trimmed text and by case: "c" and "A" are not in it.
    check = DomainCheck(frozenset({"a", "b"}))
    bad, shown, texts = _check(check, ["a", " b ", "c", "A"])
    assert bad == [False, False, True, True]
    assert shown == ["c", "A"]
    assert check.invalid_stat == "unknown"
    assert check.summary(texts, "c") == []


def test_free_check() -> None:
    # Any value is valid; the domain is profiled with " x" trimmed to "x".
    bad, shown, texts = _check(FreeCheck(), ["x", " x", "y"])
    assert bad == [False, False, False]
    assert shown == []
    assert sorted(FreeCheck().summary(texts, "c")) == [
        SummaryRow("domain", "x", 2),
        SummaryRow("domain", "y", 1),
    ]
