"""Static grouping (exercise 5) and covariance compatibility (sparkanon.algorithms.condensation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sparkanon.algorithms.condensation.compatibility import covariance_compatibility
from sparkanon.algorithms.condensation.group_stats import GroupStats
from sparkanon.algorithms.condensation.static import STATIC_LANE, static_groups
from sparkanon.algorithms.condensation.synthesize import GroupDraws, synthetic_records
from sparkanon.algorithms.perturbation.noise import counter_uniforms
from sparkanon.randomness import RunKey

# Exercise 5 on 7 points in 2-D, k = 3. A = {0: (0,0), 1: (1,0), 2: (0,1)} is a tight
# cluster, B = {4: (10,0), 5: (11,0), 6: (10,1)} another, MID = 3: (4,0) sits between, nearer
# A (distances 4, 3, sqrt 17 = 4.12 to A; 6, 7, sqrt 37 = 6.08 to B).
POINTS = np.array([[0, 0], [1, 0], [0, 1], [4, 0], [10, 0], [11, 0], [10, 1]], dtype=float)
A, B, MID = {0, 1, 2}, {4, 5, 6}, {3}


def _hand_partition(first: int, second: int) -> list[set[int]]:
    """The groups worked by hand from the first two picks (two groups of 3, 1 leftover).

    * first in A: group A. Remaining [3, 4, 5, 6]:
      - second in B: group B; leftover MID: centroid A (1/3, 1/3) is 3.68 away, B's
        (31/3, 1/3) 6.34: MID joins A.
      - second MID: MID with its two nearest of B, (10,0) at 6 and (10,1) at 6.08; leftover
        (11,0): centroid (8, 1/3) at 3.02, A's at 10.67: joins MID's group.
    * first in B: group B. Remaining [0, 1, 2, 3]:
      - second in A: group A, leftover MID joins A (as above).
      - second MID: MID with (1,0) at 3 and (0,0) at 4; leftover (0,1): centroid (5/3, 0) at
        1.94 (B's far away): joins it. Either way {A + MID}, {B}.
    * first MID: MID, (1,0), (0,0). Remaining [2, 4, 5, 6]:
      - second (0,1): with (10,1) at 10 and (10,0) at 10.05; leftover (11,0): centroid
        (20/3, 2/3) at 4.38, (5/3, 0) at 9.33: joins it.
      - second in B: group B; leftover (0,1) joins centroid (5/3, 0) at 1.94.
    """
    if first in A:
        return [A, B | MID] if second == 3 else [A | MID, B]
    if first in B:
        return [B, A | MID]
    if second == 2:
        return [{0, 1, 3}, {2, 4, 5, 6}]
    return [{0, 1, 2, 3}, B]


def _picks(seed: int) -> tuple[int, int]:
    """The first two picked records by the documented rule (floor(u_t * m_t) of the rest)."""
    u = counter_uniforms(seed, 0, np.array([0, 1]), lane=STATIC_LANE)
    first = int(u[0] * 7)
    rest = [i for i in range(7) if i not in _hand_partition_group_of(first)]
    return first, rest[int(u[1] * 4)]


def _hand_partition_group_of(first: int) -> set[int]:
    """The first group formed from the first pick (worked by hand above)."""
    if first in A:
        return A
    if first in B:
        return B
    return {0, 1, 3}


def _partition(labels: np.ndarray) -> list[set[int]]:
    """Labels as a list of sets, in label order."""
    return [set(np.flatnonzero(labels == g).tolist()) for g in range(labels.max() + 1)]


def test_exercise_5_static_groups_by_hand():
    seen = set()
    for seed in range(40):
        first, second = _picks(seed)
        seen.add(("A" if first in A else "B" if first in B else "MID", second))
        assert _partition(static_groups(POINTS, 3, seed)) == _hand_partition(first, second)
    # The seeds reach several branches of the hand-worked table, MID-first included.
    assert len(seen) >= 5
    assert any(kind == "MID" for kind, _ in seen)


def test_scale_changes_the_distance():
    # Dividing x by 0.001 makes the x gap (0.01 -> 10) dominate the y gaps (1): the groups
    # become the two columns x = 0 and x = 0.01.
    x = np.array([[0, 0], [0, 1], [0, 2], [0.01, 0], [0.01, 1], [0.01, 2]])
    raw = static_groups(x, 3, seed=0)
    by_x = static_groups(x, 3, seed=0, scale=np.array([0.001, 1.0]))
    assert _partition(raw) != _partition(by_x)
    assert {frozenset(g) for g in _partition(by_x)} == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}


def test_bad_input():
    with pytest.raises(ValueError, match="cannot form"):
        static_groups(POINTS[:2], 3, seed=0)
    with pytest.raises(ValueError, match="k must"):
        static_groups(POINTS, 0, seed=0)
    assert static_groups(np.zeros((0, 2)), 3, seed=0).shape == (0,)


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 40), st.integers(1, 3)),
        elements=st.floats(-100, 100, allow_nan=False),
    ),
    st.integers(1, 6),
    st.integers(0, 2**40),
)
def test_groups_have_k_to_2k_minus_1_records(x, k, seed):
    if x.shape[0] < k:
        return
    labels = static_groups(x, k, seed)
    sizes = np.bincount(labels)
    assert np.all(labels >= 0)
    assert len(sizes) == x.shape[0] // k
    assert np.all(sizes >= k) and np.all(sizes <= 2 * k - 1)
    np.testing.assert_array_equal(labels, static_groups(x, k, seed))


def test_covariance_compatibility_by_hand_and_properties():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    # Upper triangle (2, 1, 3) vs (4, 2, 6): a linear function, correlation 1.
    assert covariance_compatibility(a, 2 * a) == pytest.approx(1.0)
    # (2, 1, 3) vs (3, 1, 2): centred (0, -1, 1) and (1, -1, 0): 1 / (sqrt 2 sqrt 2) = 0.5.
    b = np.array([[3.0, 1.0], [1.0, 2.0]])
    assert covariance_compatibility(a, b) == pytest.approx(0.5)
    assert covariance_compatibility(a, -a) == pytest.approx(-1.0)
    assert math.isnan(covariance_compatibility(np.eye(1), np.eye(1)))
    with pytest.raises(ValueError, match="square"):
        covariance_compatibility(a, np.eye(3))


def test_condensed_release_keeps_covariance_compatibility_high():
    # Exercise 5 end to end: static groups, synthetic records from their stats, and the
    # covariance compatibility of the release (Aggarwal and Yu 2004 report values near 1).
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 4)) @ rng.normal(size=(4, 4)) + [1, 2, 3, 4]
    labels = static_groups(x, 10, seed=1)
    KEY = RunKey(bytes(range(32)), "user", "test")  # noqa: N806
    parts = [
        synthetic_records(
            GroupStats.of(x[labels == g]), int(np.sum(labels == g)), GroupDraws(KEY, g)
        )
        for g in range(labels.max() + 1)
    ]
    synthetic = np.vstack(parts)
    assert synthetic.shape == x.shape
    mu = covariance_compatibility(np.cov(x.T), np.cov(synthetic.T))
    assert mu > 0.95
    # Negative control: independent columns with the same variances lose the covariances.
    shuffled = np.column_stack([rng.permutation(synthetic[:, j]) for j in range(4)])
    assert covariance_compatibility(np.cov(x.T), np.cov(shuffled.T)) < mu


def test_correlation_compatibility_reads_associations_not_scale() -> None:
    """A dominant variance makes the raw measure ~1 whatever the associations; this one is not."""
    from sparkanon.algorithms.condensation.compatibility import (
        correlation_compatibility,
        covariance_compatibility,
    )

    sd = np.array([1.0, 2.0, 1e5])
    corr = np.array([[1.0, 0.8, -0.3], [0.8, 1.0, 0.1], [-0.3, 0.1, 1.0]])
    original = corr * np.outer(sd, sd)
    swapped = np.array([[1.0, -0.3, 0.8], [-0.3, 1.0, 0.1], [0.8, 0.1, 1.0]])
    wrong = swapped * np.outer(sd, sd)
    assert covariance_compatibility(original, wrong) > 0.999999  # fnlwgt-like floor
    assert correlation_compatibility(original, original) == 1.0
    assert correlation_compatibility(original, wrong) < 0.0  # associations permuted
    assert np.isnan(correlation_compatibility(original[:2, :2], original[:2, :2]))
