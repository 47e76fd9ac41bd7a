"""Numeric intervals worked by hand (:mod:`sparkanon.attributes.intervals`).

The edges of a range (widths, generated bins, edges on the published decimal grid), values
placed between them, and the published text of numbers and ranges.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN

import numpy as np

from sparkanon.attributes.intervals import (
    Coding,
    binned_edges,
    bound_labels,
    decimal_grid,
    interval_index,
    interval_label,
    published_edges,
    published_number,
    published_range,
    quantile_labels,
    quantile_starts,
    round_bound,
    snap_significant,
    width_edges,
    width_labels,
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


def test_binned_edges_equal_width() -> None:
    # [0, 10] in 4 bins of 2.5; merging 2 at a time leaves [0, 5, 10] (two intervals).
    got = binned_edges(np.array([0.0, 10.0]), None, "equal_width", 4, 2)
    assert [e.tolist() for e in got] == [[0, 2.5, 5, 7.5, 10], [0, 5, 10]]
    # 5 bins of 2: merging every other edge keeps the last edge: [0, 4, 8, 10], then [0, 8, 10].
    got = binned_edges(np.array([0.0, 10.0]), None, "equal_width", 5, 2)
    assert [e.tolist() for e in got] == [[0, 2, 4, 6, 8, 10], [0, 4, 8, 10], [0, 8, 10]]
    # Merging 3 at a time: [0, 6, 10].
    got = binned_edges(np.array([0.0, 10.0]), None, "equal_width", 5, 3)
    assert [e.tolist() for e in got] == [[0, 2, 4, 6, 8, 10], [0, 6, 10]]


def test_binned_edges_quantile_skewed_counts() -> None:
    # 10 rows: value 1 holds 5, the others one each. Two quantile bins: the median row
    # is a 1, the cut falls after it; the rows split 5 / 5.
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    counts = np.array([5, 1, 1, 1, 1, 1])
    (edges,) = binned_edges(values, counts, "quantile", 2, 2)
    assert edges[0] == 1.0 and edges[-1] == 6.0
    rows = np.bincount(interval_index(values, edges), weights=counts)
    assert rows.tolist() == [5, 5]


def test_binned_edges_quantile_equal_counts_balanced() -> None:
    # Eight values with one row each, four quantile bins: every bin holds two rows
    # (as pandas.qcut and the ordinal quantile bins of families/full_domain/lattice.py split them).
    values = np.arange(1.0, 9.0)
    counts = np.ones(8, dtype=np.int64)
    got = binned_edges(values, counts, "quantile", 4, 2)
    assert got[0][0] == 1.0 and got[0][-1] == 8.0
    per_bin = np.bincount(interval_index(values, got[0]), minlength=len(got[0]) - 1)
    assert per_bin.tolist() == [2, 2, 2, 2], f"edges {got[0].tolist()}"
    # The next level merges two bins at a time: two bins of four rows.
    per_bin = np.bincount(interval_index(values, got[1]), minlength=len(got[1]) - 1)
    assert per_bin.tolist() == [4, 4], f"edges {got[1].tolist()}"


def test_published_edges_by_hand() -> None:
    e = np.array([-0.04, 0.3, 0.34, 0.36, 0.96, 1.01])
    # None: the edges themselves.
    assert published_edges(e, None) is e
    # 1 place: first down (-0.1), cuts to the nearest (0.3, 0.3, 0.4, 1.0), last up (1.1);
    # the two cuts at 0.3 become one.
    assert published_edges(e, 1).tolist() == [-0.1, 0.3, 0.4, 1.0, 1.1]
    # 0 places: the first down to -1, the cuts to 0, 0, 0, 1 and the last up to 2.
    assert published_edges(e, 0).tolist() == [-1.0, 0.0, 1.0, 2.0]
    # Cuts rounding onto the first or last edge are dropped; halves go to the even.
    assert published_edges(np.array([0.2, 0.4, 2.5, 3.5, 3.8]), 0).tolist() == [0.0, 2.0, 4.0]
    # Edges already on the grid are kept (so a second call changes nothing).
    grid = np.array([50.0, 183.0, 269.0])
    assert published_edges(grid, 0).tolist() == grid.tolist()
    assert published_edges(published_edges(e, 1), 1).tolist() == published_edges(e, 1).tolist()
    # Edges equal at 12 significant digits: one grid step from their number.
    assert published_edges(np.array([2.0, 2.0 + 1e-13]), 1).tolist() == [2.0, 2.1]
    assert published_edges(np.array([-3.0, -3.0 + 1e-14]), 0).tolist() == [-3.0, -2.0]


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


def test_interval_label() -> None:
    # Half-open unless closed; equal bounds are both written (unlike a published range).
    assert interval_label("20", "30") == "[20, 30)"
    assert interval_label("80", "90", closed=True) == "[80, 90]"
    assert interval_label("5", "5", closed=True) == "[5, 5]"
    assert interval_label("2020-01-01", "2020-02-01") == "[2020-01-01, 2020-02-01)"


def _text(v: float) -> str:
    return f"{v:g}"


def test_width_labels_clip_to_the_coding() -> None:
    # Width 10 from origin 0 over [12, 25]: [10, 20) and [20, 30); bottom 15 clips the
    # first interval's start, top 28 the second's end; width 20 gives [0, 20), [20, 40).
    x = np.array([12.0, 25.0])
    coding = Coding(top=28.0, bottom=15.0, bounds=None)
    assert width_labels([20, 10], 0.0, coding, x, _text) == [
        ["[15, 20)", "[20, 28)"],
        ["[15, 20)", "[20, 28)"],
    ]
    free = Coding(top=None, bottom=None, bounds=None)
    assert width_labels([20, 10], 0.0, free, x, _text) == [
        ["[0, 20)", "[20, 40)"],
        ["[10, 20)", "[20, 30)"],
    ]
    assert width_labels([10], 0.0, free, np.array([]), _text) == [[]]


def test_bound_labels_merge_declared_intervals() -> None:
    # Three declared intervals; merging by 2 joins the first two, the third stays alone.
    bounds = np.array([[0.0, 10.0], [10.0, 20.0], [20.0, 30.0]])
    coding = Coding(top=None, bottom=None, bounds=bounds)
    assert coding.bound_index(np.array([5.0, 15.0, 25.0, 30.0, -1.0])).tolist() == [
        0,
        1,
        2,
        -1,
        -1,
    ]
    assert bound_labels([2], coding, np.array([5.0, 15.0, 25.0]), _text) == [
        ["[0, 10)", "[10, 20)", "[20, 30)"],
        ["[0, 20)", "[0, 20)", "[20, 30)"],
    ]


def test_quantile_labels_close_the_last_interval() -> None:
    # Four distinct numbers of one row each in two bins: [1, 3) and the closed [3, 4].
    coding = Coding(top=None, bottom=None, bounds=None)
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert quantile_labels([2], coding, x, np.ones(4), _text) == [
        ["[1, 3)", "[1, 3)", "[3, 4]", "[3, 4]"]
    ]


def test_coding_masks_top_and_bottom() -> None:
    over, under = Coding(top=10.0, bottom=0.0, bounds=None).coded(np.array([-1.0, 0.0, 10.0]))
    assert over.tolist() == [False, False, True]
    assert under.tolist() == [True, False, False]
