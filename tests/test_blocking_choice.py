"""Which attribute a block is cut on, and where (hand-worked examples)."""

from __future__ import annotations

import pandas as pd
import pytest

from sparkanon._blocking import attribute_spread, choose_cut
from sparkanon.attributes.kinds import ContinuousKind, nominal_kind, ordinal_kind


def test_spread_of_nominal_is_the_share_outside_the_mode() -> None:
    kind = nominal_kind("sex", 1.0, ("F", "M"))
    # 70 rows of F, 30 of M: centroid F, 30 rows at distance 1 -> 30 / 100.
    assert attribute_spread(kind, pd.Series({0: 70, 1: 30})) == pytest.approx(0.3)


def test_spread_of_ordinal_counts_rank_distance() -> None:
    kind = ordinal_kind("edu", 1.0, tuple("abcde"))  # span 4
    # ranks 0 (x2) and 4 (x2): mean 2, two below and two above -> round(2) = 2;
    # every row is 2 ranks away: 2/4 per row.
    assert attribute_spread(kind, pd.Series({0: 2, 4: 2})) == pytest.approx(0.5)


def test_spread_of_continuous_uses_bin_centres_and_weight() -> None:
    kind = ContinuousKind("age", 2.0, 0.0, 1.0)
    # Half the rows in bin 0, half in bin 1023: centres 0.5/1024 and 1023.5/1024,
    # mean 0.5, mean absolute deviation 0.5 - 0.5/1024; weight 2.
    expected = 2.0 * (0.5 - 0.5 / 1024)
    assert attribute_spread(kind, pd.Series({0: 10, 1023: 10})) == pytest.approx(expected)


def test_choose_cut_prefers_the_more_spread_attribute_over_the_wider_range() -> None:
    # Education spans its whole order but almost all rows sit on one rank;
    # sex is split evenly. Classic Mondrian (range) would cut education.
    edu = ordinal_kind("edu", 1.0, tuple("abcdefghijklmnop"))
    sex = nominal_kind("sex", 1.0, ("F", "M"))
    hists = {0: pd.Series({0: 1, 8: 98, 15: 1}), 1: pd.Series({0: 50, 1: 50})}
    assert choose_cut((edu, sex), hists, excluded=set(), min_side=5) == (1, 0)


def test_choose_cut_skips_excluded_and_uncuttable_attributes() -> None:
    edu = ordinal_kind("edu", 1.0, tuple("abcdefghijklmnop"))
    sex = nominal_kind("sex", 1.0, ("F", "M"))
    hists = {0: pd.Series({2: 40, 9: 60}), 1: pd.Series({0: 97, 1: 3})}
    # sex is excluded (a cut on it was undone); education is cut between its two ranks.
    assert choose_cut((edu, sex), hists, excluded={1}, min_side=5) == (0, 2)
    # With min_side 50 no cut leaves 50 rows on both sides of either attribute.
    assert choose_cut((edu, sex), hists, excluded=set(), min_side=50) is None
