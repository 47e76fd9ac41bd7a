"""An independent cross-check of the categorical reconstruction against multi-freq-ldpy.

``multi-freq-ldpy`` (Arcolezi et al. 2022, "Multi-Freq-LDPy: multiple frequency estimation
under local differential privacy in Python", ESORICS) publishes the iterative Bayesian
update as ``estimators.Histogram_estimator.IBU(k, A, obs_freq, nb_iter, tol, err_func)``
and its k-ary randomized response ("GRR") aggregator as
``pure_frequency_oracles.GRR.GRR_Aggregator_IBU(reports, k, epsilon, ...)``. Its update,
``f * A (obs / (A f))``, reads one matrix both ways, so it is the update of
:func:`categorical_ibu` for a symmetric matrix only: the k-ary randomized response matrix
the perturbation family publishes is symmetric, so the cross-check runs on those (and on
another symmetric matrix). It is a test-only dependency (the ``test`` extra). Its ``IBU``
is compiled with numba, whose ``np.dot`` needs scipy; the tests call the same Python
function uncompiled (the dispatcher's ``py_func``), so no scipy is installed for them.

Given the same transition matrix and the same observed counts (the family's own
randomized reports of a seeded column), both implementations agree to 1e-9: after the
same number of updates, and at convergence.
"""

from __future__ import annotations

import numpy as np
import pytest

from sparkanon.algorithms.perturbation.randomized_response import (
    pram_matrix,
    randomize,
    retention_for_epsilon,
)
from sparkanon.algorithms.perturbation.reconstruct import categorical_ibu
from sparkanon.randomness import RunKey

ldpy_estimators = pytest.importorskip("multi_freq_ldpy.estimators.Histogram_estimator")
ldpy_grr = pytest.importorskip("multi_freq_ldpy.pure_frequency_oracles.GRR")

AGREE = 1e-9
THEIR_IBU = ldpy_estimators.IBU.py_func


def _reports(true_probs: list[float], n: int, matrix: np.ndarray, seed: int) -> np.ndarray:
    """Published codes of ``n`` rows whose true codes follow ``true_probs`` (a test key per seed)."""
    counts = np.round(np.asarray(true_probs) * n).astype(int)
    codes = np.repeat(np.arange(len(true_probs)), counts)
    key = RunKey(seed.to_bytes(32, "little"), "user", f"test key {seed}")
    return randomize(codes, matrix, key=key, stream=3, counters=np.arange(codes.size))


def _observed(reports: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(reports, minlength=k).astype(np.float64)


def _their_ibu(matrix: np.ndarray, counts: np.ndarray, iterations: int) -> np.ndarray:
    """multi-freq-ldpy's update, exactly ``iterations`` times (``tol = 0`` never stops it)."""
    freq = counts / counts.sum()
    k = matrix.shape[0]
    return THEIR_IBU(k, matrix, freq, iterations, 0.0, "max_abs")


CASES = {
    # (true distribution, epsilon): skewed, near uniform, a zero category, many values.
    "k3_eps1": ([0.6, 0.3, 0.1], 1.0),
    "k5_eps2": ([0.35, 0.25, 0.2, 0.15, 0.05], 2.0),
    "k4_eps0.5_one_empty": ([0.5, 0.3, 0.2, 0.0], 0.5),
    "k9_eps3": ([0.3, 0.2, 0.1, 0.1, 0.08, 0.07, 0.06, 0.05, 0.04], 3.0),
}


@pytest.mark.parametrize("iterations", [1, 10, 200, 3000])
@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_ibu_agrees_with_multi_freq_ldpy_after_the_same_updates(
    case: tuple[list[float], float], iterations: int
) -> None:
    probs, epsilon = case
    k = len(probs)
    matrix = pram_matrix(k, retention_for_epsilon(k, epsilon))
    counts = _observed(_reports(probs, 20_000, matrix, seed=11), k)
    ours = categorical_ibu(counts, matrix, tolerance=0.0, max_iterations=iterations)
    assert ours.iterations == iterations
    theirs = _their_ibu(matrix, counts, iterations)
    np.testing.assert_allclose(ours.probabilities, theirs, rtol=0, atol=AGREE)


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_ibu_agrees_with_the_grr_aggregator_at_convergence(
    case: tuple[list[float], float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Their aggregator builds the matrix from epsilon and counts the reports itself."""
    monkeypatch.setattr(ldpy_grr, "IBU", THEIR_IBU)
    probs, epsilon = case
    k = len(probs)
    matrix = pram_matrix(k, retention_for_epsilon(k, epsilon))
    reports = _reports(probs, 20_000, matrix, seed=5)
    ours = categorical_ibu(_observed(reports, k), matrix, tolerance=1e-13, max_iterations=200_000)
    theirs = ldpy_grr.GRR_Aggregator_IBU(
        reports.tolist(), k, epsilon, nb_iter=200_000, tol=1e-15, err_func="max_abs"
    )
    # A boundary maximum (a category estimated at 0) is approached sublinearly: both
    # stop near it, within the tolerance the two stopping rules leave.
    assert ours.stopped_by == "change_below_tolerance"
    np.testing.assert_allclose(ours.probabilities, theirs, rtol=0, atol=AGREE)


def test_ibu_agrees_on_a_symmetric_matrix_that_is_not_randomized_response() -> None:
    """A tridiagonal, symmetric, doubly stochastic matrix (neighbouring values swap)."""
    k = 6
    matrix = np.zeros((k, k))
    for i in range(k):
        for j in (i - 1, i + 1):
            if 0 <= j < k:
                matrix[i, j] = 0.15
        matrix[i, i] = 1.0 - matrix[i].sum()
    assert np.allclose(matrix, matrix.T) and np.allclose(matrix.sum(axis=1), 1.0)
    counts = _observed(_reports([0.05, 0.1, 0.4, 0.25, 0.15, 0.05], 30_000, matrix, 2), k)
    for iterations in (5, 500):
        ours = categorical_ibu(counts, matrix, tolerance=0.0, max_iterations=iterations)
        theirs = _their_ibu(matrix, counts, iterations)
        np.testing.assert_allclose(ours.probabilities, theirs, rtol=0, atol=AGREE)


def test_the_cross_check_can_fail() -> None:
    """Negative control: a wrong matrix (another epsilon) gives another estimate."""
    probs, epsilon = CASES["k5_eps2"]
    k = len(probs)
    matrix = pram_matrix(k, retention_for_epsilon(k, epsilon))
    counts = _observed(_reports(probs, 20_000, matrix, seed=11), k)
    ours = categorical_ibu(counts, matrix, tolerance=0.0, max_iterations=200)
    wrong = pram_matrix(k, retention_for_epsilon(k, epsilon * 0.9))
    theirs = _their_ibu(wrong, counts, 200)
    assert np.abs(ours.probabilities - theirs).max() > 1e-3
