"""The dynamic split, eqs 20.8/20.9 (sparkanon.algorithms.condensation.split)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms.condensation.group_stats import GroupStats
from sparkanon.algorithms.condensation.split import split_group


def test_exercise_6_split_means_by_hand():
    # mu = (10, 20), covariance [[5, 3], [3, 5]]: eigenvalues 8 and 2, principal eigenvector
    # V = (1, 1) / sqrt(2). R = sqrt(12 * 8) = sqrt(96); R / 4 = sqrt(6) = sqrt(3 * 8) / 2,
    # so the offset is sqrt(6) (1, 1) / sqrt(2) = sqrt(3) (1, 1) = (1.7320508, 1.7320508):
    # children at (11.7320508, 21.7320508) and (8.2679492, 18.2679492). The eigenvalue 8
    # becomes 2, so Sigma = diag(2, 2) and C = P Sigma P^T = 2 I.
    parent = GroupStats.from_moments(6, [10.0, 20.0], [[5.0, 3.0], [3.0, 5.0]])
    plus, minus = split_group(parent)
    r3 = math.sqrt(3.0)
    np.testing.assert_allclose(plus.mean(), [10 + r3, 20 + r3], rtol=1e-12)
    np.testing.assert_allclose(minus.mean(), [10 - r3, 20 - r3], rtol=1e-12)
    np.testing.assert_allclose(plus.covariance(), 2 * np.eye(2), atol=1e-10)
    np.testing.assert_allclose(minus.covariance(), 2 * np.eye(2), atol=1e-10)
    assert (plus.count, minus.count) == (3, 3)


def test_children_keep_the_other_eigen_axes_and_the_parent_shift():
    rng = np.random.default_rng(1)
    x = 1e6 + rng.normal(size=(8, 3)) @ rng.normal(size=(3, 3))
    shift = np.full(3, 1e6)
    parent = GroupStats.of(x, shift)
    plus, minus = split_group(parent)
    np.testing.assert_array_equal(plus.shift, shift)
    pv, pvec = np.linalg.eigh(parent.covariance())
    cv, cvec = np.linalg.eigh(plus.covariance())
    expected = np.sort(np.concatenate([pv[:2], [pv[2] / 4]]))
    np.testing.assert_allclose(np.sort(cv), expected, rtol=1e-9)
    # The eigenvectors of the second and third eigenvalues are kept (up to sign).
    for j in range(2):
        match = np.max(np.abs(cvec.T @ pvec[:, j]))
        if not np.isclose(expected[j], expected[j + 1]):
            assert match == pytest.approx(1.0, abs=1e-9)


def test_odd_count_and_too_small():
    plus, minus = split_group(GroupStats.from_moments(7, [0.0], [[12.0]]))
    # R = sqrt(144) = 12, R / 4 = 3; counts 3 and 4.
    assert (plus.count, minus.count) == (3, 4)
    np.testing.assert_allclose([plus.mean()[0], minus.mean()[0]], [3.0, -3.0])
    with pytest.raises(ValueError, match="at least 2"):
        split_group(GroupStats.from_moments(1, [0.0], [[0.0]]))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10), st.integers(1, 4), st.integers(0, 10**6))
def test_split_keeps_count_pooled_mean_and_pooled_covariance(half, d, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2 * half, d)) @ rng.normal(size=(d, d)) + rng.normal(size=d) * 10
    parent = GroupStats.of(x)
    plus, minus = split_group(parent)
    pooled = plus.merge(minus)
    assert pooled.count == parent.count
    scale = 1.0 + np.max(np.abs(parent.mean()))
    np.testing.assert_allclose(pooled.mean(), parent.mean(), atol=1e-9 * scale)
    var = np.max(np.linalg.eigvalsh(parent.covariance()))
    np.testing.assert_allclose(
        pooled.covariance(), parent.covariance(), atol=1e-8 * (var + scale**2)
    )
