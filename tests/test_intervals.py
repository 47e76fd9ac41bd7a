"""Numeric intervals worked by hand (:mod:`sparkanon.attributes.intervals`).

The edges of a range, values placed between them, and the published text of numbers and
ranges.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN

import numpy as np

from sparkanon.attributes.intervals import (
    decimal_grid,
    interval_index,
    published_number,
    published_range,
    quantile_starts,
    round_bound,
    snap_significant,
    width_edges,
)


def test_width_edges_by_hand() -> None:
    # Data range [20, 41], origin 0. Width 10: first edge floor(20/10)*10 = 20, then
    # floor((41-20)/10) + 1 = 3 intervals: 20, 30, 40, 50. Width 20: 20, 40, 60.
    e10, e20 = width_edges([10, 20], 0.0, 20.0, 41.0)
    assert e10.tolist() == [20, 30, 40, 50]
    assert e20.tolist() == [20, 40, 60]
    # Origin 2, width 5 over [17, 30]: first 2 + 3*5 = 17; floor(13/5) + 1 = 3 intervals.
    (e5,) = width_edges([5], 2.0, 17.0, 30.0)
    assert e5.tolist() == [17, 22, 27, 32]


def test_interval_index() -> None:
    edges = np.array([0.0, 10.0, 20.0])
    got = interval_index(np.array([-1.0, 0.0, 9.99, 10.0, 19.0, 20.0, 20.5]), edges)
    assert got.tolist() == [-1, 0, 0, 1, 1, 1, -1]


def test_decimal_grid_reads_the_numbers_as_decimals() -> None:
    # In floats 0.1 * 3 is 0.30000000000000004 and -0.15 + 3 * 0.05 is 2.8e-17.
    assert decimal_grid(0.0, 0.1, range(4)).tolist() == [0.0, 0.1, 0.2, 0.3]
    assert decimal_grid(-0.15, 0.05, range(3, 5)).tolist() == [0.0, 0.05]


def test_quantile_starts() -> None:
    # Rows 5, 1, 1, 1, 1, 1 (10 in all), two bins: the share reaches 1/2 at value 0, so
    # the second bin starts at value 1. Four values of one row each in four bins: 1, 2, 3.
    assert quantile_starts(np.array([5, 1, 1, 1, 1, 1]), 2) == [1]
    assert quantile_starts(np.ones(4), 4) == [1, 2, 3]
    # One value holding every row: every start is clipped to the last value.
    assert quantile_starts(np.array([4]), 3) == [0, 0]


def test_snap_significant_and_published_number() -> None:
    snapped = snap_significant(np.array([0.1 * 3, 53.99999999997, 0.0, np.nan, -2.5]))
    assert snapped[:3].tolist() == [0.3, 54.0, 0.0]
    assert np.isnan(snapped[3]) and snapped[4] == -2.5
    assert [published_number(v) for v in (25.0, 2.5, 0.1 * 3, -7.0, 1e20)] == [
        "25",
        "2.5",
        "0.3",
        "-7",
        "1e+20",
    ]


def test_round_bound_rounds_after_snapping() -> None:
    # 0.3 floors to 0.3 (not 0.2 through 0.3 * 10 = 2.9999...); 53.68 widens to [53, 54].
    assert round_bound(0.1 * 3, 1, ROUND_FLOOR) == 0.3
    assert round_bound(53.68, 0, ROUND_FLOOR) == 53.0
    assert round_bound(53.68, 0, ROUND_CEILING) == 54.0
    assert round_bound(2.25, 1, ROUND_HALF_EVEN) == 2.2
    assert round_bound(1234.0, 0, ROUND_FLOOR) == 1234.0


def test_published_range() -> None:
    assert published_range("-2", "-1") == "[-2, -1]"
    assert published_range("7th-8th", "HS-grad") == "[7th-8th, HS-grad]"
    assert published_range("5", "5") == "5"
