"""Generalization levels of full-domain generalization, worked by hand.

Every expected map, label and NCP below is computed in the comments from the inputs, not
read back from the code: taxonomy levels from a small ARX file, nominal, continuous (exact
values, widths, breakpoints, finest intervals), ordinal and code-prefix levels, and the
nesting check of :class:`LevelHierarchy`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from sparkanon.attributes.hierarchy import Taxonomy, load_arx_hierarchy
from sparkanon.attributes.intervals import (
    binned_edges,
    published_edges,
    round_bound,
    snap_significant,
    width_edges,
)
from sparkanon.attributes.kinds import SUPPRESSED
from sparkanon.attributes.levels import (
    LevelHierarchy,
    continuous_levels,
    nominal_levels,
    ordinal_levels,
    prefix_levels,
    taxonomy_levels,
)
from sparkanon.errors import ConfigError
from sparkanon.families.full_domain.lattice import BaseRule


def _check(
    h: LevelHierarchy,
    maps: list[list[int]],
    labels: list[tuple[str, ...]],
    ncp: list[list[float]],
) -> None:
    """The hierarchy has exactly these maps, labels and NCP per level."""
    assert h.height == len(maps) - 1
    assert [m.tolist() for m in h.maps] == maps
    assert [tuple(lab) for lab in h.labels] == labels
    assert len(h.ncp) == len(ncp)
    for level, (got, want) in enumerate(zip(h.ncp, ncp, strict=True)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"level {level}")
    for level, lab in enumerate(labels):
        assert h.size(level) == len(lab)


# ---------------------------------------------------------------- taxonomy (ARX)

# Rows interleaved on purpose: leaves are numbered depth-first, children in order of first
# appearance: G2 (line 1) before G1 (line 2); under G2, B (line 1) before C (line 4).
ARX = """\
b1;B;G2;*
a1;A;G1;*
b2;B;G2;*
c1;C;G2;*
b3;B;G2;*
a2;A;G1;*
"""


def test_taxonomy_levels_from_an_arx_file(tmp_path: Path) -> None:
    path = tmp_path / "tax.csv"
    path.write_text(ARX, encoding="utf-8")
    tax = load_arx_hierarchy(path, "t")
    # Depth-first leaf order: G2 -> B -> b1 b2 b3, G2 -> C -> c1, G1 -> A -> a1 a2.
    assert tax.leaves == ("b1", "b2", "b3", "c1", "a1", "a2")
    h = taxonomy_levels("t", tax)
    assert h.name == "t"
    _check(
        h,
        maps=[
            [0, 1, 2, 3, 4, 5],
            # B (b1 b2 b3), C (c1), A (a1 a2): numbered in base order.
            [0, 0, 0, 1, 2, 2],
            # G2 (B and C: four leaves), G1 (A: two leaves).
            [0, 0, 0, 0, 1, 1],
            [0, 0, 0, 0, 0, 0],
        ],
        labels=[
            ("b1", "b2", "b3", "c1", "a1", "a2"),
            ("B", "C", "A"),
            ("G2", "G1"),
            ("*",),
        ],
        ncp=[
            [0, 0, 0, 0, 0, 0],
            # leaves under the node / all 6 leaves; C holds one leaf: 0.
            [3 / 6, 0.0, 2 / 6],
            [4 / 6, 2 / 6],
            [1.0],
        ],
    )


def test_taxonomy_two_levels_and_single_leaf(tmp_path: Path) -> None:
    path = tmp_path / "sex.csv"
    path.write_text("Male;*\nFemale;*\n", encoding="utf-8")
    h = taxonomy_levels("sex", load_arx_hierarchy(path, "sex"))
    _check(
        h,
        maps=[[0, 1], [0, 0]],
        labels=[("Male", "Female"), ("*",)],
        ncp=[[0, 0], [1.0]],
    )
    one = tmp_path / "one.csv"
    one.write_text("only;*\n", encoding="utf-8")
    # The root over a single leaf publishes nothing less than the value: NCP 0.
    _check(
        taxonomy_levels("x", load_arx_hierarchy(one, "x")),
        maps=[[0], [0]],
        labels=[("only",), ("*",)],
        ncp=[[0], [0.0]],
    )


def test_taxonomy_same_label_under_two_parents_stays_two_nodes() -> None:
    # Not loadable from ARX (a node has one parent), but a Taxonomy may hold it: the
    # two "Other" nodes are told apart by their paths.
    tax = Taxonomy(
        leaves=("x", "y", "z"),
        paths=(("x", "Other", "G1", "*"), ("y", "Other", "G2", "*"), ("z", "Z", "G2", "*")),
        height=3,
    )
    _check(
        taxonomy_levels("t", tax),
        maps=[[0, 1, 2], [0, 1, 2], [0, 1, 1], [0, 0, 0]],
        labels=[("x", "y", "z"), ("Other", "Other", "Z"), ("G1", "G2"), ("*",)],
        ncp=[[0, 0, 0], [0, 0, 0], [0, 2 / 3], [1.0]],
    )


# ---------------------------------------------------------------- nominal


def test_nominal_levels() -> None:
    _check(
        nominal_levels("color", ["red", "green", "blue"]),
        maps=[[0, 1, 2], [0, 0, 0]],
        labels=[("red", "green", "blue"), ("*",)],
        ncp=[[0, 0, 0], [1.0]],
    )
    _check(
        nominal_levels("color", ["red"]),
        maps=[[0], [0]],
        labels=[("red",), ("*",)],
        ncp=[[0], [0.0]],
    )


# ---------------------------------------------------------------- continuous


def test_continuous_levels_exact_values_and_widths() -> None:
    values = np.array([20.0, 23.0, 35.0, 41.0])
    edges = width_edges([10, 20], 0.0, 20.0, 41.0)
    h = continuous_levels("age", values, edges, exact=True, low=20.0, high=41.0)
    span = 41 - 20
    _check(
        h,
        maps=[[0, 1, 2, 3], [0, 0, 1, 2], [0, 0, 0, 1], [0, 0, 0, 0]],
        labels=[
            ("20", "23", "35", "41"),
            # the last interval is closed; values equal to an inner edge start the next one
            ("[20, 30)", "[30, 40)", "[40, 50]"),
            ("[20, 40)", "[40, 60]"),
            ("*",),
        ],
        ncp=[
            [0, 0, 0, 0],
            # widths clipped to the data's range [20, 41]: [40, 50] counts 41 - 40 = 1
            [10 / span, 10 / span, 1 / span],
            [20 / span, 1 / span],
            [1.0],
        ],
    )


def test_continuous_levels_with_decimals_round_the_edges() -> None:
    """output.decimals: values to the nearest; the edges on the grid before values are placed."""
    values = np.array([0.25, 1.234, 1.249, 2.5])
    edges = [np.array([0.0, 4 / 3, 8 / 3])]
    plain = continuous_levels("x", values, edges, exact=True, low=0.25, high=2.5)
    assert plain.labels[1] == ("[0, 1.33333333333)", "[1.33333333333, 2.66666666667]")
    rounded = {
        # decimals 1: the cut 1.333 rounds to 1.3, the last edge 2.667 up to 2.7; the values
        # keep their intervals. NCP over the range 2.25: [0, 1.3) clipped to [0.25, 1.3) is
        # 1.05; [1.3, 2.7] clipped to [1.3, 2.5] is 1.2.
        1: (
            [[0, 1, 2, 3], [0, 0, 0, 1], [0, 0, 0, 0]],
            [("0.2", "1.2", "1.2", "2.5"), ("[0, 1.3)", "[1.3, 2.7]"), ("*",)],
            [[0, 0, 0, 0], [1.05 / 2.25, 1.2 / 2.25], [1.0]],
        ),
        # decimals 0: the cut rounds to 1, so 1.234 and 1.249 now lie in [1, 3], the interval
        # whose label holds them (not in [0, 2), which overlapped [1, 3]). NCP: [0, 1) clipped
        # to [0.25, 1) is 0.75; [1, 3] clipped to [1, 2.5] is 1.5.
        0: (
            [[0, 1, 2, 3], [0, 1, 1, 1], [0, 0, 0, 0]],
            [("0", "1", "1", "2"), ("[0, 1)", "[1, 3]"), ("*",)],
            [[0, 0, 0, 0], [0.75 / 2.25, 1.5 / 2.25], [1.0]],
        ),
    }
    for decimals, (maps, labels, ncp) in rounded.items():
        levels = continuous_levels(
            "x", values, edges, exact=True, low=0.25, high=2.5, decimals=decimals
        )
        _check(levels, maps=maps, labels=labels, ncp=ncp)


@pytest.mark.parametrize(
    ("values", "decimals", "labels", "level1"),
    [
        # Four values, one row each, in two quantile bins: the cut is the third value.
        # Edges [50.3, 182.7, 268.2] rounded outwards each published [50, 183) and
        # [182, 269], both holding 182.5; on the grid they are 50, 183 (182.7 to the
        # nearest) and 269, and 182.7 lies in [50, 183).
        ([50.3, 120.0, 182.7, 268.2], 0, ("[50, 183)", "[183, 269]"), [0, 0, 0, 1]),
        # The same at two places: the cut 0.914 rounds to 0.91, where 0.914 now begins.
        ([-1.0153, 0.2, 0.914, 1.695], 2, ("[-1.02, 0.91)", "[0.91, 1.7]"), [0, 0, 1, 1]),
    ],
    ids=["wage", "income"],
)
def test_quantile_labels_with_decimals_do_not_overlap(
    values: list[float], decimals: int, labels: tuple[str, str], level1: list[int]
) -> None:
    x = np.array(values)
    edges = binned_edges(x, np.ones(len(x), dtype=np.int64), "quantile", 2, 2)
    assert [e.tolist() for e in edges] == [[values[0], values[2], values[3]]]
    h = continuous_levels("w", x, edges, True, values[0], values[-1], decimals=decimals)
    assert h.labels[1] == labels
    assert h.maps[1].tolist() == level1
    assert _overlaps(h.labels[1]) == []
    assert _mislabelled(h, x) == []


def test_continuous_levels_breakpoints_decimal_labels_and_clipping() -> None:
    values = np.array([1.0, 2.5, 5.0])
    h = continuous_levels("x", values, [np.array([0.0, 2.5, 5.0])], exact=True, low=1.0, high=5.0)
    _check(
        h,
        maps=[[0, 1, 2], [0, 1, 1], [0, 0, 0]],
        labels=[("1", "2.5", "5"), ("[0, 2.5)", "[2.5, 5]"), ("*",)],
        # [0, 2.5) clipped to [1, 2.5]: 1.5 / 4; [2.5, 5]: 2.5 / 4
        ncp=[[0, 0, 0], [1.5 / 4, 2.5 / 4], [1.0]],
    )


def test_continuous_levels_finest_interval_as_level_zero() -> None:
    # exact: false: the base values are the lower edges of the finest intervals. The top
    # level is a single interval already, so no extra root is added.
    edges = [np.array([0.0, 10.0, 20.0, 30.0]), np.array([0.0, 30.0])]
    h = continuous_levels("x", edges[0][:-1], edges, exact=False, low=3.0, high=27.0)
    _check(
        h,
        maps=[[0, 1, 2], [0, 0, 0]],
        labels=[("[0, 10)", "[10, 20)", "[20, 30]"), ("[0, 30]",)],
        # range [3, 27], span 24: [0,10) -> 10-3 = 7; [10,20) -> 10; [20,30] -> 27-20 = 7
        ncp=[[7 / 24, 10 / 24, 7 / 24], [1.0]],
    )


@pytest.mark.parametrize(("values", "bad"), [([17.0, 25.0, 35.0], "17"), ([25.0, 45.5], "45.5")])
def test_continuous_value_outside_breakpoints_is_a_config_error(
    values: list[float], bad: str
) -> None:
    with pytest.raises(ConfigError) as err:
        continuous_levels(
            "age",
            np.array(values),
            [np.array([20.0, 30.0, 40.0])],
            exact=True,
            low=min(values),
            high=max(values),
        )
    msg = str(err.value)
    assert "'age'" in msg and f"value {bad} " in msg and "[20, 40]" in msg, msg


def test_continuous_value_on_the_last_edge_is_inside() -> None:
    h = continuous_levels(
        "age", np.array([20.0, 40.0]), [np.array([20.0, 30.0, 40.0])], True, 20.0, 40.0
    )
    assert h.labels[1] == ("[20, 30)", "[30, 40]")
    assert h.maps[1].tolist() == [0, 1]


def _holds(label: str, value: float) -> bool:
    """Whether the interval a label names (``[a, b)`` or ``[a, b]``) holds ``value``."""
    lo, hi = (float(x) for x in label[1:-1].split(", "))
    return lo <= value and (value < hi or (label.endswith("]") and value <= hi))


def _mislabelled(h: LevelHierarchy, values: np.ndarray) -> list[tuple[int, float, str]]:
    """``(level, value, label)`` of every value whose interval label does not hold it."""
    out = []
    for level in range(1, h.height + 1):
        for b, v in enumerate(values):
            label = h.labels[level][h.maps[level][b]]
            if label != "*" and not _holds(label, float(v)):
                out.append((level, float(v), label))
    return out


def _bounds(label: str) -> tuple[float, float, bool]:
    """``(lo, hi, closed)`` of an interval label."""
    lo, hi = (float(x) for x in label[1:-1].split(", "))
    return lo, hi, label.endswith("]")


def _overlaps(labels: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs of a level's interval labels that share a value."""
    out = []
    for a, b in itertools.combinations(labels, 2):
        (lo, hi, closed), (next_lo, _, _) = sorted([_bounds(a), _bounds(b)])
        # The first to start shares a value with the other when the other starts before
        # it ends, at its closed end, or at the same number.
        if next_lo < hi or (next_lo == hi and closed) or next_lo == lo:
            out.append((a, b))
    return out


def _numbers(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Numbers in ``[lo, hi]`` at up to 9 decimal places (data, not subnormal floats)."""
    return st.floats(lo, hi).map(lambda x: min(max(round(x, 9), lo), hi))


def _near_duplicates(decimals: int) -> st.SearchStrategy[list[float]]:
    """Sorted edges of up to 13 intervals: random numbers, each with a neighbour close by.

    The neighbour lies less than a grid step away (both may round to one number), half a
    step away (a tie), a hair away (equal once snapped to 12 significant digits), or a
    step or more away.
    """
    step = 10.0**-decimals
    gaps = st.sampled_from([0.0, 1e-13, 1e-9, 0.3 * step, 0.5 * step, step, 7 * step])
    pairs = st.lists(st.tuples(_numbers(-1000, 1000), gaps), min_size=1, max_size=7)
    return pairs.map(lambda ps: sorted(v for x, g in ps for v in (x, x + g)))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), decimals=st.integers(0, 3), exact=st.booleans())
def test_decimal_labels_are_disjoint_and_hold_their_values(
    data: st.DataObject, decimals: int, exact: bool
) -> None:
    """At every level the labels are disjoint, cover the data, and each holds its values.

    Random breakpoints (with near-duplicates that round together) make the finest level,
    every other one of them the next (the same first and last edge, so the levels nest);
    the values are the breakpoints, the rounded cuts and random numbers between them,
    snapped to 12 significant digits as decoded values are. With ``exact`` false the base
    values are the finest intervals, and each value is placed among the finest published
    edges as the lattice places a row (:class:`~sparkanon.families.full_domain.lattice.BaseRule`).
    """
    raw = data.draw(_near_duplicates(decimals), label="breakpoints")
    extra = data.draw(st.lists(_numbers(raw[0], raw[-1]), max_size=20), label="values")
    fine = np.unique(snap_significant(np.array(raw, dtype=float)))
    assume(len(fine) >= 2)
    coarse = fine[::2] if len(fine) % 2 else np.append(fine[::2], fine[-1])
    published = published_edges(fine, decimals)
    cuts = published[(published >= fine[0]) & (published <= fine[-1])]
    values = np.unique(snap_significant(np.array([*fine, *cuts, *extra], dtype=float)))
    low, high = float(values[0]), float(values[-1])
    # The published edges: sorted, distinct, on the grid, covering the data.
    assert np.all(np.diff(published) > 0)
    assert published[0] <= low and published[-1] >= high
    assert all(round_bound(float(e), decimals, ROUND_HALF_EVEN) == e for e in published)
    if exact:
        h = continuous_levels("x", values, [fine, coarse], True, low, high, decimals=decimals)
        codes = np.arange(len(values))
    else:
        base = published[:-1]
        h = continuous_levels("x", base, [fine, coarse], False, low, high, decimals=decimals)
        codes = BaseRule("interval", published).apply(values)
        # Every finest interval is a node: their labels tile the published range.
        spans = [_bounds(label) for label in h.labels[0]]
        assert spans[0][0] == published[0] and spans[-1][1] == published[-1]
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    interval_levels = [
        level
        for level in range(0 if not exact else 1, h.height + 1)
        if h.labels[level] != (SUPPRESSED,)
    ]
    assert interval_levels
    for level in interval_levels:
        labels = h.labels[level]
        assert len(set(labels)) == len(labels), labels
        assert _overlaps(labels) == [], (level, labels)
        for label in labels:
            lo, hi, _ = _bounds(label)
            assert round(lo, decimals) == lo and round(hi, decimals) == hi, label
    # Each value (each row, with exact false) lies in its node's label and in no other.
    for v, b in zip(values, codes, strict=True):
        for level in interval_levels:
            holding = [lab for lab in h.labels[level] if _holds(lab, float(v))]
            assert holding == [h.labels[level][h.maps[level][b]]], (level, float(v), holding)


def test_decimal_widths_label_the_interval_holding_the_value() -> None:
    # widths 0.1 and 0.2 over 0.3 .. 0.9: 0.3 lies in [0.3, 0.4), 0.6 in [0.6, 0.7) and,
    # one level up, in [0.6, 0.8).
    values = np.round(np.arange(3, 10) / 10, 1)
    edges = width_edges([0.1, 0.2], 0.0, 0.3, 0.9)
    h = continuous_levels("x", values, edges, exact=True, low=0.3, high=0.9)
    assert _mislabelled(h, values) == []
    assert h.labels[1][h.maps[1][0]] == "[0.3, 0.4)"
    assert h.labels[1][h.maps[1][3]] == "[0.6, 0.7)"
    assert h.labels[2][h.maps[2][3]] == "[0.6, 0.8)"


@settings(max_examples=150, deadline=None)
@given(
    unit=st.sampled_from([0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.5, 5.0]),
    multiples=st.lists(st.sampled_from([2, 3, 5]), max_size=2),
    origin_units=st.integers(-3, 3),
    ints=st.lists(st.integers(-50, 300), min_size=2, max_size=30, unique=True),
    scale=st.sampled_from([1, 10, 100]),
)
@example(unit=0.1, multiples=[2], origin_units=0, ints=list(range(3, 10)), scale=10)
@example(unit=0.05, multiples=[], origin_units=-3, ints=[0, 1], scale=1)  # -0.15 + 3 * 0.05
def test_width_levels_label_the_interval_holding_each_value(
    unit: float, multiples: list[int], origin_units: int, ints: list[int], scale: int
) -> None:
    """Each value is published as an interval that holds it, at every level.

    The values and widths are decimals as a config and a CSV give them (0.3, widths 0.1).
    """
    values = np.unique(np.array(ints, dtype=float) / scale)
    widths = [unit]
    for m in multiples:
        widths.append(round(widths[-1] * m, 10))
    origin = round(origin_units * unit, 10)
    low, high = float(values[0]), float(values[-1])
    edges = width_edges(widths, origin, low, high)
    h = continuous_levels("x", values, edges, exact=True, low=low, high=high)
    assert _mislabelled(h, values) == []


@settings(max_examples=100, deadline=None)
@given(
    ints=st.lists(st.integers(0, 300), min_size=2, max_size=30, unique=True),
    scale=st.sampled_from([1, 10, 100]),
    bins=st.integers(2, 12),
)
@example(ints=list(range(1, 11)), scale=10, bins=9)  # 0.1 .. 1.0 in bins of 0.1
def test_equal_width_bins_label_the_interval_holding_each_value(
    ints: list[int], scale: int, bins: int
) -> None:
    values = np.unique(np.array(ints, dtype=float) / scale)
    edges = binned_edges(values[[0, -1]], None, "equal_width", bins, 2)
    h = continuous_levels("x", values, edges, True, float(values[0]), float(values[-1]))
    assert _mislabelled(h, values) == []


# ---------------------------------------------------------------- ordinal


def test_ordinal_levels() -> None:
    order = ["low", "mid", "high", "top", "max"]
    # Level 1 starts intervals at ranks 0, 2, 4; level 2 at 0, 2 (a subset: they nest).
    h = ordinal_levels("grade", order, [[0, 2, 4], [2]])
    _check(
        h,
        maps=[[0, 1, 2, 3, 4], [0, 0, 1, 1, 2], [0, 0, 1, 1, 1], [0, 0, 0, 0, 0]],
        labels=[
            tuple(order),
            # published_range: "[a, b]", a single value alone
            ("[low, mid]", "[high, top]", "max"),
            ("[low, mid]", "[high, max]"),
            ("*",),
        ],
        # rank span / (V - 1) = span / 4
        ncp=[[0] * 5, [1 / 4, 1 / 4, 0.0], [1 / 4, 2 / 4], [1.0]],
    )


def test_ordinal_single_interval_is_the_top() -> None:
    h = ordinal_levels("grade", ["a", "b", "c"], [[0]])
    _check(
        h,
        maps=[[0, 1, 2], [0, 0, 0]],
        labels=[("a", "b", "c"), ("[a, c]",)],
        ncp=[[0, 0, 0], [1.0]],
    )


# ---------------------------------------------------------------- prefix


def test_prefix_levels() -> None:
    h = prefix_levels("zip", np.array([47671, 47677, 48001]), 5)
    _check(
        h,
        maps=[[0, 1, 2], [0, 0, 1], [0, 0, 1], [0, 0, 1], [0, 0, 0], [0, 0, 0]],
        labels=[
            ("47671", "47677", "48001"),
            ("4767*", "4800*"),
            ("476**", "480**"),
            ("47***", "48***"),
            ("4****",),
            ("*****",),
        ],
        # 10 ** (h - length) at level h >= 1
        ncp=[[0, 0, 0], [1e-4, 1e-4], [1e-3, 1e-3], [1e-2, 1e-2], [0.1], [1.0]],
    )


def test_prefix_levels_keep_leading_zeros() -> None:
    h = prefix_levels("zip", np.array([123, 129]), 5)
    assert h.labels[0] == ("00123", "00129")
    assert h.labels[1] == ("0012*",)
    assert h.labels[4] == ("0****",)
    assert h.labels[5] == ("*****",)


# ---------------------------------------------------------------- nesting


def test_level_hierarchy_rejects_a_level_that_splits_a_node() -> None:
    maps = (np.arange(4), np.array([0, 0, 1, 1]), np.array([0, 1, 1, 0]))
    labels = (("a", "b", "c", "d"), ("ab", "cd"), ("ad", "bc"))
    ncp = (np.zeros(4), np.full(2, 0.5), np.full(2, 0.5))
    with pytest.raises(ValueError, match="level 2 splits a node of level 1"):
        LevelHierarchy("x", maps, labels, ncp)
    # The same maps with a nesting top level are accepted.
    ok = LevelHierarchy(
        "x",
        maps[:2] + (np.zeros(4, dtype=np.int64),),
        labels[:2] + (("*",),),
        ncp[:2] + (np.ones(1),),
    )
    assert ok.height == 2


def test_level_hierarchy_rejects_mismatched_labels() -> None:
    with pytest.raises(ValueError, match="labels"):
        LevelHierarchy(
            "x",
            (np.arange(3), np.array([0, 1, 2])),
            (("a", "b", "c"), ("ab", "c")),
            (np.zeros(3), np.zeros(2)),
        )
    with pytest.raises(ValueError, match="base codes"):
        LevelHierarchy(
            "x",
            (np.arange(3), np.array([0, 0])),
            (("a", "b", "c"), ("*",)),
            (np.zeros(3), np.ones(1)),
        )


def test_builders_reject_levels_that_do_not_nest() -> None:
    # Ordinal: level 1 is [a, b], [c, e]; level 2 starts at d (not a level-1 start), so
    # [a, c], [d, e] splits [c, e].
    with pytest.raises(ValueError, match="splits a node"):
        ordinal_levels("g", ["a", "b", "c", "d", "e"], [[0, 2], [0, 3]])
    # Continuous: 12 and 18 share [10, 20) but fall on both sides of 15 one level up.
    with pytest.raises(ValueError, match="splits a node"):
        continuous_levels(
            "x",
            np.array([5.0, 12.0, 18.0, 25.0]),
            [np.array([0.0, 10.0, 20.0, 30.0]), np.array([0.0, 15.0, 30.0])],
            exact=True,
            low=5.0,
            high=25.0,
        )


def test_maps_are_read_only() -> None:
    h = nominal_levels("c", ["a", "b"])
    with pytest.raises(ValueError):
        h.maps[1][0] = 1
