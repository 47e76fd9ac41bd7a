"""Synthetic records and their check (sparkanon.algorithms.condensation.synthesize).

Statistical tests use fixed keys, so they are deterministic; negative controls show the
check rejects records whose covariance or mean is off.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms.condensation.group_stats import GroupStats
from sparkanon.algorithms.condensation.synthesize import (
    GroupDraws,
    axis_draws,
    check_group,
    covariance_tolerance,
    eigen_axes,
    keyed_order,
    mean_tolerance,
    synthetic_records,
)
from sparkanon.algorithms.perturbation.noise import counter_uniforms
from sparkanon.randomness import RunKey
from sparkanon.randomness.streams import SYNTHESIS_AXES, SYNTHESIS_STREAM_AXES


def key(n: int) -> RunKey:
    """A fixed test key (public: never a run's)."""
    return RunKey(bytes([n]) * 32, "user", f"test{n}")


KEY = key(7)


def _stats(n: int, d: int, seed: int, loc: float = 0.0) -> GroupStats:
    """The stats of ``n`` correlated random records."""
    rng = np.random.default_rng(seed)
    x = loc + rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    return GroupStats.of(x)


def test_eigen_axes_descending_orthonormal_reconstructing_and_signed():
    c = np.array([[5.0, 3.0, 0.0], [3.0, 5.0, 0.0], [0.0, 0.0, 1.0]])
    values, vectors = eigen_axes(c)
    np.testing.assert_allclose(values, [8.0, 2.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(3), atol=1e-12)
    np.testing.assert_allclose((vectors * values) @ vectors.T, c, atol=1e-12)
    # Sign convention: each column's largest-|.| component (first on a tie) is positive.
    np.testing.assert_allclose(vectors[:, 0], [1 / math.sqrt(2), 1 / math.sqrt(2), 0.0])
    np.testing.assert_allclose(vectors[:, 1], [1 / math.sqrt(2), -1 / math.sqrt(2), 0.0])
    lead = np.argmax(np.abs(vectors), axis=0)
    assert np.all(vectors[lead, np.arange(3)] > 0)


def test_eigen_axes_clips_float_negative_eigenvalues():
    # A negative eigenvalue of float-error size, as eq 20.7 can give on collinear records.
    # A diagonal matrix's eigenvalues are its diagonal on every LAPACK build, so the case
    # holds everywhere.
    cov = np.diag([4.0, -1e-13, 1.0])
    assert np.linalg.eigvalsh(cov).min() == -1e-13
    values, vectors = eigen_axes(cov)
    np.testing.assert_array_equal(values, [4.0, 1.0, 0.0])
    np.testing.assert_array_equal(np.abs(vectors), np.eye(3)[:, [0, 2, 1]])
    # A rank-one covariance from eq 20.7 on collinear records: whichever sign the rounding
    # gives its zero eigenvalues, none comes out negative.
    x = np.outer(np.linspace(0.1, 3.3, 7), [1.0, 1.0 / 3.0, 7.0]) + 0.1
    values, _ = eigen_axes(GroupStats.of(x).covariance())
    assert np.all(values >= 0.0) and np.all(np.diff(values) <= 0.0)
    assert values[1] <= 1e-12 * values[0]
    with pytest.raises(ValueError, match="square"):
        eigen_axes(np.ones((2, 3)))


def test_synthetic_records_reproducible_and_keyed_by_key_group_offset_and_stream():
    g = _stats(9, 3, seed=1)
    a = synthetic_records(g, 9, GroupDraws(KEY, group_id=4))
    np.testing.assert_array_equal(a, synthetic_records(g, 9, GroupDraws(key(7), group_id=4)))
    assert not np.allclose(a, synthetic_records(g, 9, GroupDraws(KEY, group_id=5)))
    assert not np.allclose(a, synthetic_records(g, 9, GroupDraws(key(8), group_id=4)))
    assert not np.allclose(a, synthetic_records(g, 9, GroupDraws(KEY, group_id=4, offset=9)))
    assert not np.allclose(
        a, synthetic_records(g, 9, GroupDraws(KEY, 4, stream=SYNTHESIS_STREAM_AXES))
    )
    # group ids of the spine's size (block << 20 | local) are counters, not lanes
    big = synthetic_records(g, 9, GroupDraws(KEY, group_id=(123456 << 20) | 17))
    assert big.shape == (9, 3) and not np.allclose(big, a)


def test_draws_cannot_be_regenerated_from_the_public_generator():
    """The old attack: regenerate a group's draws from the seed and solve its moments.

    With the public counter generator the draws of a group were known for every seed; the
    keyed records follow none of them: the least-squares fit of the records on any seed's
    regenerated draws leaves a residual of the records' own size.
    """
    g = _stats(12, 2, seed=3, loc=5.0)
    x = synthetic_records(g, 12, GroupDraws(KEY, group_id=6))
    worst = np.inf
    for seed in range(200):
        ids = np.arange(12, dtype=np.int64)[:, None] * 2 + np.arange(2)
        u = counter_uniforms(seed, 6, ids, lane=3)
        design = np.column_stack([np.ones(12), u])
        fit, *_ = np.linalg.lstsq(design, x, rcond=None)
        residual = float(np.abs(design @ fit - x).max())
        worst = min(worst, residual / float(np.abs(x - x.mean(axis=0)).max()))
    assert worst > 0.05


def test_count_zero_gives_nothing_and_alpha_k():
    g = _stats(6, 2, seed=2, loc=50.0)
    one = synthetic_records(g, 1, GroupDraws(KEY, 0))
    assert one.shape == (1, 2) and not np.allclose(one[0], g.mean())
    assert synthetic_records(g, 0, GroupDraws(KEY, 0)).shape == (0, 2)
    big = synthetic_records(g, 3 * 6, GroupDraws(KEY, 0))  # alpha = 3
    assert big.shape == (18, 2)
    assert check_group(g, big, 1e-3).ok


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 12),
    st.integers(1, 4),
    st.integers(1, 30),
    st.integers(0, 255),
    st.floats(-1e6, 1e6),
)
def test_synthetic_mean_is_within_its_bound_and_not_exact(n, d, count, k, loc):
    g = _stats(n, d, seed=k, loc=loc)
    x = synthetic_records(g, count, GroupDraws(key(k), group_id=k % 97))
    check = check_group(g, x, 1e-6)
    assert check.mean_ok, check


def test_group_mean_is_kept_in_expectation_only():
    """Each group's records miss its mean by about ``sqrt(lambda / n)``: never exactly."""
    g = _stats(10, 2, seed=4, loc=20.0)
    values, vectors = eigen_axes(g.covariance())
    offsets = np.array(
        [
            vectors.T @ (synthetic_records(g, 10, GroupDraws(KEY, gid)).mean(axis=0) - g.mean())
            for gid in range(3000)
        ]
    )
    assert np.all(np.abs(offsets[:, 0]) > 1e-9 * math.sqrt(values[0]))
    # unbiased (std of the average of 3000: sqrt(lambda / 10 / 3000)) ...
    assert np.all(np.abs(offsets.mean(axis=0)) < 5 * np.sqrt(values / 10 / 3000))
    # ... with the variance of the mean of 10 uniforms of variance lambda
    np.testing.assert_allclose(offsets.var(axis=0), values / 10, rtol=0.1)
    bound = mean_tolerance(values, 10, 1e-3)
    assert np.mean(np.abs(offsets) > bound) < 1e-3


def test_draws_are_uniform_of_the_eigenvalue_variance():
    lam = 4.0
    z = axis_draws(np.array([lam]), 200_000, GroupDraws(KEY, group_id=1))[:, 0]
    a = math.sqrt(3 * lam)
    assert np.all(np.abs(z) <= a)
    hist, _ = np.histogram(z, bins=10, range=(-a, a))
    expected = z.size / 10
    assert np.all(np.abs(hist - expected) < 5 * math.sqrt(expected))
    assert abs(z.var() - lam) < 0.05
    small = np.array(
        [
            axis_draws(np.array([lam]), 5, GroupDraws(KEY, group_id=g))[:, 0].var()
            for g in range(4000)
        ]
    )
    # E[population var] = lam * 4/5 = 3.2; the std of the mean of 4000 is about 0.03.
    assert abs(small.mean() - lam * 4 / 5) < 0.12


def test_keyed_order_is_a_keyed_permutation():
    groups = np.repeat(np.arange(20), 7)
    order = keyed_order(KEY, SYNTHESIS_AXES, groups)
    assert sorted(order.tolist()) == list(range(140))
    np.testing.assert_array_equal(order, keyed_order(key(7), SYNTHESIS_AXES, groups))
    assert not np.array_equal(order, keyed_order(key(8), SYNTHESIS_AXES, groups))
    # a group's records are no longer contiguous
    runs = np.count_nonzero(np.diff(groups[order]) != 0) + 1
    assert runs > 100


def test_covariance_tolerance_by_hand_and_shrinking():
    # lambda = (3, 1/3): a = (3, 1). alpha = 0.04, n = 100: L_diag = ln 100, L_off = ln 150.
    tol = covariance_tolerance(np.array([3.0, 1.0 / 3.0]), 100, 0.04)
    ld, lo = math.log(100.0), math.log(150.0)
    assert tol[0, 0] == pytest.approx(9 * (math.sqrt(ld / 200) + 2 * ld / 100))
    assert tol[1, 1] == pytest.approx(1 * (math.sqrt(ld / 200) + 2 * ld / 100))
    assert tol[0, 1] == tol[1, 0] == pytest.approx(3 * (math.sqrt(2 * lo / 100) + 2 * lo / 100))
    lam = np.array([2.0, 1.0, 0.0])
    t = [covariance_tolerance(lam, n, 1e-3) for n in (10, 40, 160, 640, 2560, 10240)]
    assert all(np.all(b[:2, :2] < a[:2, :2]) for a, b in zip(t, t[1:], strict=False))
    # ~ 1 / sqrt(n): sqrt(n) * bound tends to a^2 sqrt(L / 2) (the 2L/n term vanishes).
    limit = 6.0 * math.sqrt(math.log(4e3) / 2)
    assert t[-1][0, 0] * math.sqrt(10240) == pytest.approx(limit, rel=0.1)
    assert np.all(t[0][2, :] == 0.0) and np.all(t[0][:, 2] == 0.0)
    with pytest.raises(ValueError, match="alpha"):
        covariance_tolerance(lam, 10, 1.0)


def test_bound_violation_rate_far_below_alpha_over_many_groups():
    alpha = 1e-3
    violations = 0
    entries = 0
    worst = 0.0
    for gid in range(2000):
        n = 5 + gid % 11
        g = _stats(n, 3, seed=gid, loc=100.0)
        x = synthetic_records(g, n, GroupDraws(KEY, group_id=gid))
        check = check_group(g, x, alpha)
        assert check.mean_ok
        values, vectors = eigen_axes(g.covariance())
        dev = x - x.mean(axis=0)
        s = vectors.T @ (dev.T @ dev / n) @ vectors
        tol = covariance_tolerance(values, n, alpha)
        violations += int(np.sum(np.abs(s - np.diag(values)) > tol + 1e-9))
        entries += 9
        worst = max(worst, check.covariance_ratio)
    assert violations / entries < alpha / 10
    assert worst < 1.0


def test_check_rejects_inflated_covariance_and_moved_mean():
    g = _stats(400, 2, seed=9, loc=10.0)
    x = synthetic_records(g, 400, GroupDraws(KEY, group_id=0))
    assert check_group(g, x, 1e-3).ok
    m = g.mean()
    inflated = m + 1.5 * (x - m)  # variance x 2.25
    bad = check_group(g, inflated, 1e-3)
    assert bad.mean_ok and not bad.covariance_ok and bad.covariance_ratio > 1.0
    values, vectors = eigen_axes(g.covariance())
    moved = x + 2.0 * mean_tolerance(values, 400, 1e-3)[0] * vectors[:, 0]
    assert not check_group(g, moved, 1e-3).mean_ok


def test_large_offset_column_checks_with_a_shift():
    # Values near 1e9 with std ~1: stats about the column means keep the covariance; the
    # records (stored as 1e9 + deviation) pass the check with its float tolerance.
    rng = np.random.default_rng(4)
    raw = np.column_stack([1e9 + rng.normal(size=12), 5.0 + 0.1 * rng.normal(size=12)])
    g = GroupStats.of(raw, shift=np.array([1e9, 5.0]))
    np.testing.assert_allclose(g.covariance(), np.cov(raw.T, bias=True), rtol=1e-8)
    x = synthetic_records(g, 12, GroupDraws(KEY, group_id=3))
    assert check_group(g, x, 1e-3).ok
