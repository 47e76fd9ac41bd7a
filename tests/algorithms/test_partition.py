"""The Mondrian-style partitioning (sparkanon.algorithms.cuts and the partition stage).

Hand-worked choices of the ``spread`` rule (blocking) and the ``range`` rule (Mondrian),
the two ways a cut whose side fails the model is handled, and the property the
distributed design rests on: the tree does not depend on where a node is cut (the
cluster-side levels of the partition stage, then each top block on its own rows, give
the same leaves as one machine cutting the whole table).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparkanon.algorithms.cuts import (
    FINE_BINS,
    BlockTree,
    CutPolicy,
    ModelTest,
    NodeHistogram,
    NodeHistograms,
    RankedBins,
    _plan_compiled,
    attribute_spread,
    bin_rule,
    decide,
    grid_bins,
    node_histograms,
    normalized_range,
    plan_local,
    settle_leaves,
)
from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.models import parse_models


def always(counts: np.ndarray) -> np.ndarray:
    return np.ones(len(counts), dtype=bool)


def hist(pairs: dict[int, int]) -> NodeHistogram:
    bins = np.array(sorted(pairs), dtype=np.int64)
    return NodeHistogram(bins, np.array([[pairs[b]] for b in bins], dtype=np.int64))


def test_spread_of_nominal_is_the_share_outside_the_mode() -> None:
    kind = nominal_kind("sex", 1.0, ("F", "M"))
    # 70 rows of F, 30 of M: centroid F, 30 rows at distance 1 -> 30 / 100.
    assert attribute_spread(kind, np.array([0, 1]), np.array([70, 30])) == pytest.approx(0.3)


def test_spread_of_ordinal_counts_rank_distance() -> None:
    kind = ordinal_kind("edu", 1.0, tuple("abcde"))  # span 4
    # ranks 0 (x2) and 4 (x2): mean 2, two below and two above -> round(2) = 2;
    # every row is 2 ranks away: 2/4 per row.
    assert attribute_spread(kind, np.array([0, 4]), np.array([2, 2])) == pytest.approx(0.5)


def test_spread_of_continuous_uses_bin_centres_and_weight() -> None:
    kind = ContinuousKind("age", 2.0, 0.0, 1.0)
    # Half the rows in bin 0, half in bin 1023: centres 0.5/1024 and 1023.5/1024,
    # mean 0.5, mean absolute deviation 0.5 - 0.5/1024; weight 2.
    expected = 2.0 * (0.5 - 0.5 / 1024)
    assert attribute_spread(kind, np.array([0, 1023]), np.array([10, 10])) == pytest.approx(
        expected
    )


EDU = ordinal_kind("edu", 1.0, tuple("abcdefghijklmnop"))
SEX = nominal_kind("sex", 1.0, ("F", "M"))


def test_spread_rule_prefers_the_more_spread_attribute_over_the_wider_range() -> None:
    # Education spans its whole order but almost all rows sit on one rank;
    # sex is split evenly. Mondrian's range rule cuts education, blocking cuts sex.
    hists = [hist({0: 1, 8: 98, 15: 1}), hist({0: 50, 1: 50})]
    spread = decide((EDU, SEX), hists, CutPolicy("spread", min_side=5), always)
    assert (spread.attr, spread.cut, spread.left_size, spread.right_size) == (1, 0, 50, 50)
    ranged = decide((EDU, SEX), hists, CutPolicy("range", min_side=1), always)
    assert (ranged.attr, ranged.cut) == (0, 0)  # widest range 15/15; nearest the median: 0 | 8
    assert normalized_range(EDU, 0, 15, 1 << 20) == 1.0


def test_a_cut_failing_the_model_moves_to_the_next_attribute() -> None:
    hists = [hist({2: 40, 9: 60}), hist({0: 97, 1: 3})]
    # No cut leaves 50 rows on both sides of either attribute.
    assert decide((EDU, SEX), hists, CutPolicy("spread", min_side=50), always) is None

    def not_small(counts: np.ndarray) -> np.ndarray:
        return counts.sum(axis=1) >= 45

    # Spread ranks education first (0.21 vs 0.03): its cut leaves 40 | 60 and the
    # 40-row side fails the model. Under merge the next attribute is tried: sex leaves
    # 97 | 3 and its 3-row side fails too, so nothing is cut.
    merge = CutPolicy("spread", min_side=3)
    assert decide((EDU, SEX), hists, merge, not_small) is None
    # Under reconcile the first cut is kept and its failing side marked.
    kept = decide(
        (EDU, SEX), hists, CutPolicy("spread", min_side=3, infeasible="reconcile"), not_small
    )
    assert (kept.attr, kept.cut, kept.left_ok, kept.right_ok) == (0, 2, False, True)


def test_range_rule_takes_the_feasible_cut_nearest_the_median() -> None:
    kind = ContinuousKind("x", 1.0, 0.0, 1.0)
    h = [NodeHistogram(np.array([0, 1, 2, 3]), np.array([[3, 0], [0, 3], [2, 0], [0, 2]]))]

    def two_values(counts: np.ndarray) -> np.ndarray:
        return (counts > 0).sum(axis=1) >= 2

    # Cuts by distance from the median (5 of 10): cut 1 (6 | 4) and cut 0 (3 | 7) fail
    # or pass the 2-value test: cut 1 gives {3,3} | {2,2}: both sides hold 2 values.
    d = decide([kind], h, CutPolicy("range", min_side=2), two_values)
    assert (d.cut, d.left_size, d.right_size) == (1, 6, 4)
    # Requiring 5 rows per side leaves no feasible cut.
    assert decide([kind], h, CutPolicy("range", min_side=5), two_values) is None


@st.composite
def tables(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int, int]:
    n = draw(st.integers(min_value=20, max_value=400))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    bins = np.vstack(
        [rng.integers(0, 16, n), rng.integers(0, 2, n), rng.integers(0, 1024, n) // 64]
    )
    sens = rng.integers(0, 4, n)
    return bins, sens, draw(st.integers(2, 6)), draw(st.integers(8, 120))


KINDS = (
    ordinal_kind("a", 1.0, tuple("abcdefghijklmnop")),
    nominal_kind("b", 1.0, ("x", "y")),
    ordinal_kind("c", 1.0, tuple("ABCDEFGHIJKLMNOP")),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.sampled_from(["spread", "range"]), st.sampled_from(["merge", "reconcile"]))
def test_the_tree_does_not_depend_on_where_a_node_is_cut(table, rule, mode) -> None:
    bins, sens, p, stop = table
    if rule == "range":
        mode = "merge"

    def feasible(counts: np.ndarray) -> np.ndarray:
        return (counts > 0).sum(axis=1) >= min(p, 3)

    policy = CutPolicy(rule, min_side=p, stop_rows=0 if rule == "range" else stop, infeasible=mode)
    whole, whole_bad = plan_local(KINDS, bins, sens, 4, policy, feasible)
    # Cut the root's children by hand (as the cluster-side level would), then each
    # child on its own rows.
    d = decide(KINDS, node_histograms(bins, sens, 4), policy, feasible)
    if d is None:
        assert (whole == 1).all()
        return
    right = bins[d.attr] > d.cut
    for child, rows, ok in ((2, ~right, d.left_ok), (3, right, d.right_ok)):
        if not ok:
            assert (whole[rows] == child).all() and child in whole_bad
            continue
        part, bad = plan_local(KINDS, bins[:, rows], sens[rows], 4, policy, feasible, root=child)
        assert np.array_equal(part, whole[rows])
        assert bad <= whole_bad


def test_identical_rows_are_dealt_into_blocks_by_sensitive_value_then_position() -> None:
    # 10 identical rows (no cut exists), stop_rows 4: m = 3 blocks of 4, 3 and 3 rows.
    kinds = [ContinuousKind("age", 1.0, 0.0, 1.0)]
    bins = np.zeros((1, 10), dtype=np.int64)
    sens = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    policy = CutPolicy(rule="spread", min_side=2, stop_rows=4)
    leaf, bad = plan_local(kinds, bins, sens, 2, policy, always)
    assert not bad
    # sorted by (value, position): 0,2,4,6,8,1,3,5,7,9; dealt round-robin (every third)
    # into node 1's descendants two levels down (4 + j).
    blocks = {int(b): sorted(np.flatnonzero(leaf == b).tolist()) for b in np.unique(leaf)}
    assert blocks == {4: [0, 3, 6, 9], 5: [2, 5, 8], 6: [1, 4, 7]}


def test_identical_rows_are_not_dealt_into_blocks_that_fail_the_model() -> None:
    # Two distinct sensitive values per block are needed; with 3 blocks the value
    # held by 2 rows cannot reach all of them, so m halves to 1: no split.
    kinds = [ContinuousKind("age", 1.0, 0.0, 1.0)]
    bins = np.zeros((1, 9), dtype=np.int64)
    sens = np.array([0, 0, 0, 0, 1, 0, 0, 1, 0])

    def two_values(counts: np.ndarray) -> np.ndarray:
        return (counts > 0).sum(axis=1) >= 2

    leaf, _ = plan_local(kinds, bins, sens, 2, CutPolicy(min_side=2, stop_rows=4), two_values)
    assert set(leaf.tolist()) == {1}
    # Mondrian's range rule never deals rows: its leaves are classes.
    leaf, _ = plan_local(kinds, bins, sens, 2, CutPolicy(rule="range", stop_rows=4), always)
    assert set(leaf.tolist()) == {1}


def _two_values(counts: np.ndarray) -> np.ndarray:
    return (counts > 0).sum(axis=1) >= 2


def test_settle_keeps_cuts_whose_leaves_pass_and_undoes_the_others() -> None:
    # Root cut; its right child cut again. Leaf 7 holds one sensitive value only.
    tree = BlockTree({1: (0, 5), 3: (1, 0)})
    counts = {2: np.array([4, 4]), 6: np.array([3, 2]), 7: np.array([5, 0])}
    policy = CutPolicy("spread", min_side=2)
    settled, bad = settle_leaves(tree, counts, policy, _two_values)
    # 7 fails: its parent's cut (node 3) is undone; node 3 = {8, 2} passes, so the root stays.
    assert settled.splits == {1: (0, 5)} and not bad
    assert tree.splits == {1: (0, 5), 3: (1, 0)}  # the proposal is not modified
    # With reconcile, the failing leaf stays as an infeasible leaf beside a passing sibling.
    reconcile = CutPolicy("spread", min_side=2, infeasible="reconcile")
    settled, bad = settle_leaves(tree, counts, reconcile, _two_values)
    assert settled.splits == tree.splits and bad == {7}
    # A leaf too small for min_side fails too; both children failing undoes the cut
    # even with reconcile, and the check goes on at the parent: node 3 = [1, 1] passes,
    # leaf 2 = [1, 0] does not and stays beside it as an infeasible leaf.
    small = {2: np.array([1, 0]), 6: np.array([1, 0]), 7: np.array([0, 1])}
    settled, bad = settle_leaves(tree, small, reconcile, _two_values)
    assert settled.splits == {1: (0, 5)} and bad == {2}
    settled, bad = settle_leaves(tree, small, policy, _two_values)
    assert settled.splits == {} and not bad
    # Mondrian's range rule never reconciles; a leaf with no rows at all fails.
    settled, _ = settle_leaves(BlockTree({1: (0, 5)}), {2: np.array([3, 3])}, policy, _two_values)
    assert settled.splits == {}


@pytest.mark.parametrize("resolution", [1024, FINE_BINS])
def test_bin_rules_equal_the_bins_the_partitioning_uses(resolution: int) -> None:
    from sparkanon.attributes.semantic import SemanticKind

    rng = np.random.default_rng(3)
    cont = ContinuousKind("age", 1.0, 0.0, 1.0)
    codes = np.concatenate([rng.random(500), [0.0, 1.0, 1 - 1e-12, 0.5]])
    for kind, values in (
        (cont, codes),
        (ordinal_kind("e", 1.0, tuple("abcdef")), rng.integers(0, 6, 100)),
        (nominal_kind("s", 1.0, ("F", "M")), rng.integers(0, 2, 100)),
        (SemanticKind("w", 1.0, length=6), rng.integers(100000, 999999, 100)),
    ):
        rule = bin_rule(kind, resolution)
        assert rule is not None
        assert np.array_equal(rule.apply(values), grid_bins(kind, values, resolution)), kind


@pytest.mark.parametrize("distinct", [3, 50, 5000])
def test_lazy_node_histograms_equal_the_sorted_ones(distinct: int) -> None:
    # Regression (issue 27): plan_local counts a node's histograms from bins ranked once
    # (dense over the node's rank span, or sorted when that span is wide); every node
    # must see exactly the histograms node_histograms gives on its own rows.
    rng = np.random.default_rng(distinct)
    bins = np.vstack([rng.integers(0, distinct, 3000) * 7, rng.integers(0, 4, 3000)])
    sens = rng.integers(0, 5, 3000)
    ranked = RankedBins.of(bins)
    for idx in (np.arange(3000), np.sort(rng.choice(3000, 40, replace=False)), np.array([9])):
        lazy = NodeHistograms(ranked, idx, sens, 5)
        assert lazy.rows == idx.size
        for a, expected in enumerate(node_histograms(bins[:, idx], sens[idx], 5)):
            assert lazy.span(a) == (int(expected.bins[0]), int(expected.bins[-1]))
            np.testing.assert_array_equal(lazy[a].bins, expected.bins)
            np.testing.assert_array_equal(lazy[a].counts, expected.counts)
            assert lazy[a].counts.dtype == expected.counts.dtype == np.int64


# The compiled range-rule loop (issue 27): plan_local on the ``range`` rule with a
# ModelTest of count models runs sparkanon.algorithms._cuts_kernel; it must give
# exactly the numpy path's leaves, infeasible set and cuts.
GROUPS = ("ab", "ab", "cde", "cde", "cde", "f", "gh", "gh")
TAXONOMY = Taxonomy(
    leaves=tuple("abcdefgh"),
    paths=tuple((leaf, group, "*") for leaf, group in zip("abcdefgh", GROUPS, strict=True)),
    height=2,
)
PARITY_KINDS = (
    ContinuousKind(name="x", weight=1.0, low=0.0, high=1.0),
    ordinal_kind("o", 1.0, tuple("abcdefghijklmnop")),
    nominal_kind("n", 1.0, ("x", "y", "z")),
    categorical_kind("c", 1.0, TAXONOMY),
)
PARITY_MODELS = (
    [{"name": "k", "k": 2}],
    [{"name": "k", "k": 5}],
    [{"name": "p_sensitive", "k": 3, "p": 2}],
    [{"name": "hpk", "k": 4, "p": 3, "h": 2}],
    [{"name": "distinct_l", "l": 2}],
    [{"name": "k", "k": 3}, {"name": "distinct_l", "l": 3}],
)


@st.composite
def parity_cases(draw: st.DrawFn) -> dict:
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n = draw(st.integers(1, 300))
    chosen = draw(st.permutations(range(len(PARITY_KINDS))))[: draw(st.integers(1, 4))]
    kinds = [PARITY_KINDS[i] for i in chosen]
    distinct = draw(st.sampled_from([2, 30, 5000]))  # continuous: dense and sparse spans
    resolution = draw(st.sampled_from([FINE_BINS, 1024]))
    rows = []
    for kind in kinds:
        if isinstance(kind, ContinuousKind):
            codes = rng.integers(0, distinct, n) / distinct
            rows.append(grid_bins(kind, codes, resolution))
        else:
            rows.append(rng.integers(0, draw(st.integers(1, kind.size)), n))
    n_values = draw(st.integers(1, 5))
    models = parse_models(draw(st.sampled_from(PARITY_MODELS)))
    level_of = rng.integers(0, draw(st.integers(1, 3)), n_values)
    policy = CutPolicy(
        "range",
        min_side=models.min_class_size(),
        stop_rows=draw(st.sampled_from([0, 0, 7, 60])),
    )
    return {
        "kinds": kinds,
        "bins": np.vstack(rows).astype(np.int64),
        "sens": rng.integers(0, n_values, n),
        "n_values": n_values,
        "policy": replace(policy, infeasible="merge"),
        "test": ModelTest(models, level_of),
        "root": draw(st.sampled_from([1, 6])),
    }


def test_the_compiled_range_loop_is_used_for_count_models_only() -> None:
    kinds = PARITY_KINDS[:2]
    bins = np.array([[0, 5, 9, 9], [1, 2, 3, 4]], dtype=np.int64)
    count = ModelTest(parse_models([{"name": "k", "k": 2}]), None, False)
    assert count.bounds == (2, 0, 0)
    entropy = ModelTest(parse_models({"name": "entropy_l", "l": 2}), np.zeros(2, np.int64))
    assert entropy.bounds is None
    args = (kinds, bins, np.zeros(4, dtype=np.int64), 1, CutPolicy("range", min_side=2))
    assert _plan_compiled(*args, count, 1, None) is not None
    assert _plan_compiled(*args, entropy, 1, None) is None
    # A kind the kernel has no table for (a domain above TABLE_MAX codes).
    wide = (nominal_kind("w", 1.0, tuple(f"v{i}" for i in range(200))),)
    assert _plan_compiled(wide, bins[:1], *args[2:], count, 1, None) is None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parity_cases())
def test_the_compiled_range_loop_gives_the_numpy_paths_leaves(case: dict) -> None:
    # Regression (issue 27): same leaves (same labels in row order), same infeasible set
    # and same cuts as the numpy path, on random blocks, schemas and count models.
    args = (case["kinds"], case["bins"], case["sens"], case["n_values"], case["policy"])
    tree, reference_tree = BlockTree(), BlockTree()
    leaf = _plan_compiled(*args, case["test"], case["root"], tree)
    assert leaf is not None  # the kernel ran
    expected, bad = plan_local(*args, case["test"], case["root"], reference_tree, compiled=False)
    np.testing.assert_array_equal(leaf, expected)
    assert bad == set()
    assert tree.splits == reference_tree.splits
    through, through_bad = plan_local(*args, case["test"], case["root"])
    np.testing.assert_array_equal(through, leaf)
    assert through_bad == set()
