"""Generalized values and NCP of every kind, and the NCP/GCP metrics, on hand-worked examples.

The education taxonomy is the fixture of tests/algorithms/test_algorithms.py (depth-first codes):
0 Bachelors, 1 Some-college, 2 Masters, 3 Doctorate, 4 11th, 5 HS-grad, 6 5th;
Higher = {0..3} (Undergraduate {0, 1}, Graduate {2, 3}), Secondary = {4..6}
(HighSchool {4, 5}, Primary {6}), root ``*``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sparkanon.attributes.hierarchy import Taxonomy, load_arx_hierarchy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    Kind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.schema import CLASS, LEVEL, SENS, Schema
from sparkanon.families.blocks.summarise import make_summary_fn, summary_columns
from sparkanon.metrics.ncp import class_ncp, global_certainty_penalty
from sparkanon.metrics.registry import default_metrics, term_column
from sparkanon.publications import CentroidPublisher, GeneralizedPublisher
from tests._helpers import EDU_ARX, FIVE_LEVELS


@pytest.fixture(scope="module")
def edu(tmp_path_factory: pytest.TempPathFactory) -> Taxonomy:
    path = tmp_path_factory.mktemp("hier") / "education.csv"
    path.write_text(EDU_ARX, encoding="utf-8")
    return load_arx_hierarchy(path, "education")


AGE = ContinuousKind(name="age", weight=1.0, low=17.0, high=90.0)
GRADE = ordinal_kind("grade", 1.0, ("a", "b", "c", "d", "e"))
SEX = nominal_kind("sex", 1.0, ("F", "M", "X"))


def age_codes(*ages: float) -> np.ndarray:
    codes, invalid = AGE.encode(pd.Series(list(ages)))
    assert not invalid.any()
    return codes


# ---------------------------------------------------------------------------
# Continuous
# ---------------------------------------------------------------------------


def test_continuous_range_in_raw_units_without_spurious_decimals() -> None:
    assert AGE.generalized(age_codes(25, 34, 29)) == "[25, 34]"
    assert AGE.generalized(age_codes(41, 41)) == "41"
    assert AGE.generalized(age_codes(17, 90)) == "[17, 90]"


def test_continuous_negative_bounds_are_unambiguous() -> None:
    kind = ContinuousKind(name="t", weight=1.0, low=-5.0, high=3.0)
    codes, _ = kind.encode(pd.Series([-2.0, -1.0, -1.5]))
    assert kind.generalized(codes) == "[-2, -1]"  # was "[-2--1]"
    codes, _ = kind.encode(pd.Series([-0.5, 2.25]))
    assert kind.generalized(codes) == "[-0.5, 2.25]"
    codes, _ = kind.encode(pd.Series([-3.0]))
    assert kind.generalized(codes) == "-3"


def test_continuous_keeps_real_decimals_and_widens_to_decimals() -> None:
    kind = ContinuousKind(name="x", weight=1.0, low=0.0, high=10.0)
    codes, _ = kind.encode(pd.Series([2.5, 7.25]))
    assert kind.generalized(codes) == "[2.5, 7.25]"
    rounded = ContinuousKind(name="x", weight=1.0, low=0.0, high=10.0, decimals=1)
    # Bounds round outwards: 7.25 up to 7.3 (to nearest, half to even, gave 7.2).
    assert rounded.generalized(codes) == "[2.5, 7.3]"
    # The centroid, a point, still rounds to the nearest.
    assert rounded.decode(np.array([0.725])) == pytest.approx([7.2])


def test_continuous_decimals_floor_the_low_and_ceil_the_high() -> None:
    # The QA case: true bounds 53.68 and 522.32 published [54-522], excluding both.
    kind = ContinuousKind(name="x", weight=1.0, low=-10.0, high=1000.0, decimals=0)
    codes, _ = kind.encode(pd.Series([53.68, 200.0, 522.32]))
    assert kind.generalized(codes) == "[53, 523]"
    one = ContinuousKind(name="x", weight=1.0, low=-10.0, high=1000.0, decimals=1)
    assert one.generalized(codes) == "[53.6, 522.4]"
    codes, _ = kind.encode(pd.Series([-2.5, -1.5]))
    assert kind.generalized(codes) == "[-3, -1]"
    # A single value off the decimals grid publishes the grid interval around it.
    codes, _ = kind.encode(pd.Series([53.68]))
    assert kind.generalized(codes) == "[53, 54]"


@pytest.mark.parametrize(
    ("code", "decimals", "expected"),
    [
        (0.54 - 3e-13, 0, "54"),  # decodes to 53.99999999997: must not floor to 53
        (0.54 + 3e-13, 0, "54"),  # decodes to 54.00000000003: must not ceil to 55
        (0.017, 1, "1.7"),  # decodes to 1.7000000000000002: must not ceil to 1.8
        (0.0057, 2, "0.57"),  # 0.57 * 100 is 56.99999999999999: must not floor to 0.56
        (0.023, 2, "2.3"),  # 2.3 * 100 is 229.99999999999997
        (0.0057, 0, "[0, 1]"),  # off the grid: the grid interval around it
    ],
)
def test_continuous_outward_rounding_ignores_float_noise(
    code: float, decimals: int, expected: str
) -> None:
    kind = ContinuousKind(name="x", weight=1.0, low=0.0, high=100.0, decimals=decimals)
    assert kind.generalized(np.array([code, code])) == expected


def test_continuous_ncp_is_the_range_over_the_whole_input_range() -> None:
    # (34 - 25) / (90 - 17) = 9 / 73
    assert AGE.ncp(age_codes(25, 34, 29)) == pytest.approx(9 / 73)
    assert AGE.ncp(age_codes(41, 41)) == 0.0
    assert AGE.ncp(age_codes(17, 90)) == pytest.approx(1.0)


def test_continuous_constant_column_has_no_penalty() -> None:
    kind = ContinuousKind(name="x", weight=1.0, low=5.0, high=5.0)
    codes, _ = kind.encode(pd.Series([5, 5]))
    assert kind.ncp(codes) == 0.0
    assert kind.generalized(codes) == "5"


# ---------------------------------------------------------------------------
# Ordinal, categorical, nominal
# ---------------------------------------------------------------------------


def test_ordinal_generalized_and_ncp() -> None:
    assert GRADE.generalized(np.array([1, 3, 2])) == "[b, d]"
    assert GRADE.generalized(np.array([4, 4])) == "e"
    assert GRADE.ncp(np.array([1, 3, 2])) == pytest.approx(2 / 4)  # (3 - 1) / (5 - 1)
    assert GRADE.ncp(np.array([0, 4])) == 1.0
    assert GRADE.ncp(np.array([2])) == 0.0


def test_categorical_generalized_is_the_lowest_common_ancestor(edu: Taxonomy) -> None:
    kind = categorical_kind("education", 1.0, edu)
    assert kind.generalized(np.array([0, 1])) == "Undergraduate"
    assert kind.generalized(np.array([2, 3, 2])) == "Graduate"
    assert kind.generalized(np.array([1, 2])) == "Higher"
    assert kind.generalized(np.array([4, 6])) == "Secondary"
    assert kind.generalized(np.array([3, 4])) == "*"
    assert kind.generalized(np.array([6, 6])) == "5th"


def test_categorical_ncp_is_the_share_of_leaves_under_the_ancestor(edu: Taxonomy) -> None:
    kind = categorical_kind("education", 1.0, edu)
    assert kind.ncp(np.array([0, 1])) == pytest.approx(2 / 7)
    assert kind.ncp(np.array([1, 2])) == pytest.approx(4 / 7)
    assert kind.ncp(np.array([4, 6])) == pytest.approx(3 / 7)
    assert kind.ncp(np.array([0, 6])) == 1.0
    assert kind.ncp(np.array([5, 5])) == 0.0


def test_taxonomy_common_ancestor(edu: Taxonomy) -> None:
    assert edu.common_ancestor(2, 3) == ("Graduate", 2)
    assert edu.common_ancestor(5, 5) == ("HS-grad", 1)
    assert edu.common_ancestor(0, 6) == ("*", 7)
    assert edu.lca_level(4, 5) == 1 and edu.lca_level(4, 6) == 2 and edu.lca_level(3, 3) == 0


def test_nominal_publishes_the_value_or_star() -> None:
    assert SEX.generalized(np.array([1, 1])) == "M"
    assert SEX.generalized(np.array([0, 1])) == "*"
    assert SEX.ncp(np.array([1, 1])) == 0.0
    assert SEX.ncp(np.array([0, 2])) == 1.0


def test_abstract_kind_says_what_is_missing() -> None:
    class Bare(ContinuousKind):
        pass

    bare = Bare(name="b", weight=1.0)
    assert bare.ncp(np.array([0.0, 0.5])) == 0.5  # inherited
    with pytest.raises(NotImplementedError, match="no generalized value"):
        Kind.generalized(bare, np.array([0.0]))
    with pytest.raises(NotImplementedError, match="no NCP"):
        Kind.ncp(bare, np.array([0.0]))


# ---------------------------------------------------------------------------
# NCP and GCP metrics
# ---------------------------------------------------------------------------


def test_class_ncp_is_the_weighted_sum(edu: Taxonomy) -> None:
    kinds = (
        AGE,
        categorical_kind("education", 2.0, edu),
        nominal_kind("sex", 0.5, ("F", "M", "X")),
    )
    codes = [age_codes(25, 34), np.array([0, 1]), np.array([1, 0])]
    # 1 * 9/73 + 2 * 2/7 + 0.5 * 1
    assert class_ncp(kinds, codes) == pytest.approx(9 / 73 + 4 / 7 + 0.5)


def test_gcp_by_hand() -> None:
    # Two classes: 3 rows at NCP 0.6 and 5 rows at NCP 1.5, two attributes of weight 1:
    # (3 * 0.6 + 5 * 1.5) / (8 * 2) = 9.3 / 16 = 58.125 %
    total = 3 * 0.6 + 5 * 1.5
    assert global_certainty_penalty(total, 8, 2.0) == pytest.approx(58.125)
    assert global_certainty_penalty(0.0, 0, 2.0) == 0.0


# ---------------------------------------------------------------------------
# Summary and publish steps
# ---------------------------------------------------------------------------


def test_summary_holds_ncp_and_generalized_labels(edu: Taxonomy) -> None:
    schema = Schema(
        kinds=(AGE, categorical_kind("education", 1.0, edu), SEX), sensitive=FIVE_LEVELS
    )
    frame = pd.DataFrame(
        {
            "_q0": np.concatenate([age_codes(25, 34, 30), age_codes(50, 50)]),
            "_q1": [2, 3, 2, 5, 5],
            "_q2": [0, 0, 1, 2, 2],
            SENS: [0, 1, 2, 3, 4],
            LEVEL: FIVE_LEVELS.level_of[[0, 1, 2, 3, 4]],
            CLASS: [7, 7, 7, 9, 9],
        }
    )
    registry = default_metrics(3)
    generalized = GeneralizedPublisher(schema, [])
    out = make_summary_fn(schema, 10.0, generalized, registry)(frame)
    assert list(out.columns) == [n for n, _ in summary_columns(generalized, registry)]
    first, second = out.iloc[0], out.iloc[1]
    ncp = term_column(registry[5], "ncp")
    assert (first["_g0"], first["_g1"], first["_g2"]) == ("[25, 34]", "Graduate", "*")
    assert first[ncp] == pytest.approx(9 / 73 + 2 / 7 + 1.0)
    assert (second["_g0"], second["_g1"], second["_g2"]) == ("50", "HS-grad", "X")
    assert second[ncp] == 0.0
    plain = make_summary_fn(schema, 10.0, CentroidPublisher(schema, []), registry)(frame)
    assert "_g0" not in plain.columns and ncp in plain.columns
    assert [t for _, t in generalized.columns()] == ["string"] * 3
