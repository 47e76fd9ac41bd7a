"""GroupStats: the condensation accumulator (sparkanon.algorithms.condensation.group_stats)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sparkanon.algorithms.condensation.group_stats import GroupStats, flat_names, row_terms


def _records(n: int, d: int, seed: int = 0, loc: float = 0.0, spread: float = 1.0):
    """Correlated test records."""
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(d, d))
    return loc + spread * rng.normal(size=(n, d)) @ mix


def _close(a: GroupStats, b: GroupStats, rtol: float = 1e-9) -> bool:
    """Two stats equal up to float tolerance relative to their magnitude."""
    scale = 1.0 + np.max(np.abs(a.products))
    return (
        a.count == b.count
        and np.allclose(a.sums, b.sums, rtol=rtol, atol=rtol * scale)
        and np.allclose(a.products, b.products, rtol=rtol, atol=rtol * scale)
    )


def test_mean_and_covariance_match_numpy_population_covariance():
    x = _records(25, 3, loc=4.0)
    g = GroupStats.of(x)
    assert g.count == 25
    np.testing.assert_allclose(g.mean(), x.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(g.covariance(), np.cov(x.T, bias=True), rtol=1e-10, atol=1e-12)
    assert np.array_equal(g.covariance(), g.covariance().T)


def test_eq_20_7_by_hand():
    # Records (1, 2), (3, 6): Sum = (4, 8), Sum(i, j) = [[1+9, 2+18], [2+18, 4+36]] = [[10, 20],
    # [20, 40]]; r = 2: Cov(0,0) = 10/2 - 16/4 = 1, Cov(0,1) = 20/2 - 32/4 = 2, Cov(1,1) = 40/2
    # - 64/4 = 4.
    g = GroupStats.of(np.array([[1.0, 2.0], [3.0, 6.0]]))
    np.testing.assert_array_equal(g.sums, [4.0, 8.0])
    np.testing.assert_array_equal(g.products, [[10.0, 20.0], [20.0, 40.0]])
    np.testing.assert_array_equal(g.covariance(), [[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_array_equal(g.mean(), [2.0, 4.0])


def test_flat_layout_names_and_row_terms_sum_to_to_flat():
    assert flat_names(2) == ["count", "sum_0", "sum_1", "prod_0_0", "prod_0_1", "prod_1_1"]
    assert len(flat_names(4)) == 1 + 4 + 10
    x = _records(13, 4, seed=3)
    labels = np.arange(13) % 3
    shift = np.array([1.0, -2.0, 0.5, 3.0])
    terms = row_terms(x, shift)
    assert terms.shape == (13, len(flat_names(4)))
    for g in range(3):
        flat = terms[labels == g].sum(axis=0)
        direct = GroupStats.of(x[labels == g], shift)
        np.testing.assert_allclose(flat, direct.to_flat(), rtol=1e-12, atol=1e-12)
        back = GroupStats.from_flat(flat, 4, shift)
        assert _close(back, direct, 1e-12)
        np.testing.assert_array_equal(back.shift, shift)


def test_empty_and_bad_input():
    e = GroupStats.empty(3)
    assert e.count == 0 and e.sums.shape == (3,) and e.products.shape == (3, 3)
    with pytest.raises(ValueError, match="empty group"):
        e.mean()
    x = _records(5, 3)
    assert _close(e.merge(GroupStats.of(x)), GroupStats.of(x), 0)
    with pytest.raises(ValueError, match="finite"):
        GroupStats.of(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="different shifts"):
        GroupStats.of(x).merge(GroupStats.of(x, np.ones(3)))
    with pytest.raises(ValueError, match="3 columns"):
        GroupStats.of(x).add(np.ones((2, 2)))
    with pytest.raises(ValueError, match="entries"):
        GroupStats.from_flat(np.ones(5), 2)
    with pytest.raises(ValueError, match="integer"):
        GroupStats.from_flat(np.array([1.5, 0, 0, 0, 0, 0]), 2)


def test_add_equals_of_the_union():
    x = _records(20, 3, seed=5)
    g = GroupStats.of(x[:7]).add(x[7:])
    assert _close(g, GroupStats.of(x), 1e-12)


def test_cancellation_without_shift_and_exact_with_global_mean_shift():
    # A column near 1e9 with std 1: eq 20.7 subtracts two numbers of ~1e18 to get ~1, so
    # without a shift the variance is lost (float64 carries ~16 digits); about the global
    # mean the same rows give it to ~1e-12.
    rng = np.random.default_rng(11)
    x = np.column_stack([1e9 + rng.normal(size=200), rng.normal(size=200)])
    truth = np.cov(x.T, bias=True)  # numpy centres first (two-pass): accurate.
    raw = GroupStats.of(x).covariance()
    assert abs(raw[0, 0] - truth[0, 0]) > 0.1  # the defect the shift exists for
    shift = x.mean(axis=0)
    labels = np.arange(200) % 4
    flat = np.array([row_terms(x[labels == g], shift).sum(axis=0) for g in range(4)])
    merged = GroupStats.empty(2, shift)
    for g in range(4):
        merged = merged.merge(GroupStats.from_flat(flat[g], 2, shift))
    np.testing.assert_allclose(merged.covariance(), truth, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(merged.mean(), x.mean(axis=0), rtol=1e-15)
    per_group = GroupStats.from_flat(flat[1], 2, shift)
    np.testing.assert_allclose(
        per_group.covariance(), np.cov(x[labels == 1].T, bias=True), rtol=1e-9, atol=1e-12
    )


def test_from_moments_by_hand():
    # n = 4, mean (1, 2), cov [[2, 1], [1, 3]]: sums 4 (1, 2) = (4, 8); products
    # 4 ([[2, 1], [1, 3]] + [[1, 2], [2, 4]]) = [[12, 12], [12, 28]].
    g = GroupStats.from_moments(4, [1.0, 2.0], [[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_array_equal(g.sums, [4.0, 8.0])
    np.testing.assert_array_equal(g.products, [[12.0, 12.0], [12.0, 28.0]])


_finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 6), st.just(3)), elements=_finite),
    arrays(np.float64, st.tuples(st.integers(0, 6), st.just(3)), elements=_finite),
    arrays(np.float64, st.tuples(st.integers(0, 6), st.just(3)), elements=_finite),
)
def test_merge_is_associative_and_commutative(a, b, c):
    ga, gb, gc = GroupStats.of(a), GroupStats.of(b), GroupStats.of(c)
    assert _close(ga.merge(gb), gb.merge(ga))
    assert _close(ga.merge(gb).merge(gc), ga.merge(gb.merge(gc)))
    assert _close(ga.merge(gb).merge(gc), GroupStats.of(np.vstack([a, b, c])))


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 4)), elements=_finite),
    st.booleans(),
)
def test_from_moments_inverts_mean_and_covariance(x, shifted):
    shift = x[0] if shifted else None
    g = GroupStats.of(x, shift)
    back = GroupStats.from_moments(g.count, g.mean(), g.covariance(), shift)
    assert _close(back, g, 1e-9)
    np.testing.assert_allclose(back.mean(), g.mean(), rtol=1e-12, atol=1e-9)
