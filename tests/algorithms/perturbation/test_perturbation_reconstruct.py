"""Distribution reconstruction and naive Bayes of the randomization family (Aggarwal 2015, 20.2).

Pure numpy, no Spark. The exercises are the textbook's (section 20.8, exercises 1-3); the
data are simulated here with numpy's ``default_rng`` and fixed seeds, so every bound below
is a statement about one fixed sample (bounds are stated with their slack in comments).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkanon.algorithms.perturbation import reconstruct as rc
from sparkanon.algorithms.perturbation.naive_bayes import BinnedAttribute, DistributionNaiveBayes
from tests._helpers import fast

N = 100_000


def uniform01_interval(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P(lo <= Y < hi) for Y ~ U(0, 1)."""
    return np.clip(np.clip(hi, 0, 1) - np.clip(lo, 0, 1), 0, None)


def uniform01_pdf(y: np.ndarray) -> np.ndarray:
    """The density of U(0, 1), 1 on [0, 1)."""
    return ((y >= 0) & (y < 1)).astype(float)


def gaussian(sigma: float):
    """The density and the interval probability of N(0, sigma^2)."""
    erf = np.vectorize(math.erf)

    def pdf(y):
        return np.exp(-0.5 * (y / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))

    def interval(lo, hi):
        return 0.5 * (erf(hi / (sigma * math.sqrt(2))) - erf(lo / (sigma * math.sqrt(2))))

    return pdf, interval


def triangle_bins(edges: np.ndarray) -> np.ndarray:
    """Bin probabilities of the triangle density on (0, 2) (the law of U(0,1) + U(0,1))."""
    cdf = np.where(edges < 1, edges**2 / 2, 1 - (2 - edges) ** 2 / 2)
    return np.diff(cdf)


@pytest.fixture(scope="module")
def exercise1():
    """X ~ U(0,1), Y ~ U(0,1), Z = X + Y: n = 10^5, z-bins of width 0.05 on [0, 2]."""
    rng = np.random.default_rng(20)
    z = rng.uniform(0, 1, N) + rng.uniform(0, 1, N)
    z_edges = np.linspace(0, 2, 41)
    return z, z_edges, np.histogram(z, z_edges)[0]


# ----------------------------------------------------------------------------- exercise 1


def test_exercise1_perturbed_is_the_triangle(exercise1):
    # 40 bins, n = 10^5: the sampling L1 is about 0.008 (measured 0.009); 0.02 is the bound.
    z, z_edges, counts = exercise1
    assert rc.l1_distance(counts / N, triangle_bins(z_edges)) < 0.02
    # ... and the shape is a triangle, not the uniform: the flat alternative is far off.
    assert rc.l1_distance(counts / N, np.full(40, 1 / 40)) > 0.2


def test_exercise1_reconstructs_the_uniform(exercise1):
    # 20 x-bins on [0, 1]; the z range [0, 2] covers [0, 1] + [0, 1] so no mass is lost.
    _, z_edges, counts = exercise1
    x_edges = np.linspace(0, 1, 21)
    uniform = np.full(20, 1 / 20)
    interval_kernel = rc.transition_from_intervals(x_edges, z_edges, uniform01_interval)
    np.testing.assert_allclose(interval_kernel.sum(axis=0), 1.0)
    pdf_kernel = rc.transition_from_pdf(x_edges, z_edges, uniform01_pdf)
    runs = [
        rc.em(counts, interval_kernel, x_edges),
        rc.bayes(counts, interval_kernel, x_edges),
        rc.bayes(counts, pdf_kernel, x_edges),
        rc.bayes(counts, pdf_kernel, x_edges, stop="change"),
    ]
    for run in runs:
        # Measured 0.003 (Bayes on the interval kernel stops after 4 updates: it starts at
        # the truth) .. 0.056 (the longer runs fit the sample's noise: deconvolving uniform
        # noise is ill-posed); 0.08 is the stated bound.
        assert rc.l1_distance(run.probabilities, uniform) < 0.08, run
        assert run.stopped_by != rc.STOP_MAX
    assert [r.stopped_by for r in runs] == [
        "likelihood_gain_below_tolerance",
        "chi_square",
        "chi_square",
        "change_below_tolerance",
    ]


def test_em_corrects_mass_lost_outside_the_z_range(exercise1):
    # Only z < 1.5 is kept: x-bins above 0.5 lose part of their mass. EM divides by the
    # coverage and still finds the uniform; the uncorrected update would not.
    _, z_edges, counts = exercise1
    x_edges = np.linspace(0, 1, 21)
    kept = z_edges <= 1.5
    short_edges, short_counts = z_edges[kept], counts[: kept.sum() - 1]
    kernel = rc.transition_from_intervals(x_edges, short_edges, uniform01_interval)
    coverage = kernel.sum(axis=0)
    assert coverage[0] == pytest.approx(1.0) and coverage[-1] < 0.6
    run = rc.em(short_counts, kernel, x_edges)
    assert rc.l1_distance(run.probabilities, np.full(20, 1 / 20)) < 0.06  # measured 0.025
    # The textbook's form without the correction (renormalised kernel columns ignored):
    f = np.full(20, 1 / 20)
    for _ in range(run.iterations):
        f = rc.update(f, short_counts.astype(float), kernel, np.ones(20))
    assert rc.l1_distance(f, np.full(20, 1 / 20)) > 0.1  # measured 0.47


# ----------------------------------------------------------------------------- exercise 2


def test_exercise2_point_mass_at_zero():
    # Z ~ U(0,1) observed, Y ~ U(0,1): X + Y in (0, 1) for every Y in (0, 1) forces X = 0,
    # the point mass the textbook derives. On a finite sample the reconstruction can only
    # show it at bin resolution: with 41 x-bins of width 0.05 on [-1.025, 1.025] (one
    # centred on 0) and n = 10^5, both methods put >= 95% of the mass in the central bin
    # and all but 1e-6 within |x| < 0.1 (measured: 0.99985 / 0.991 in the central bin).
    rng = np.random.default_rng(21)
    z = rng.uniform(0, 1, N)
    x_edges = np.linspace(-1.025, 1.025, 42)
    z_edges = rc.covering_z_edges(x_edges, 0.0, 1.0)
    counts = np.histogram(z, z_edges)[0]
    kernel = rc.transition_from_intervals(x_edges, z_edges, uniform01_interval)
    np.testing.assert_allclose(kernel.sum(axis=0), 1.0)
    mid = (x_edges[:-1] + x_edges[1:]) / 2
    for run in (rc.em(counts, kernel, x_edges), rc.bayes(counts, kernel, x_edges)):
        p = run.probabilities
        assert p[np.abs(mid) < 0.03].sum() >= 0.95, run
        assert p[np.abs(mid) < 0.1].sum() >= 1 - 1e-6, run


# ----------------------------------------------------------------------------- exercise 3


def test_exercise3_bayes_beats_the_noisy_histogram():
    # Bimodal X (N(0.3, 0.06) and N(0.7, 0.06), equal weights), Gaussian noise sigma 0.15,
    # n = 10^5, 25 x-bins on [0, 1], z-bins of the same width over [0, 1] +- 6 sigma.
    rng = np.random.default_rng(22)
    x = np.where(rng.uniform(size=N) < 0.5, rng.normal(0.3, 0.06, N), rng.normal(0.7, 0.06, N))
    sigma = 0.15
    z = x + rng.normal(0, sigma, N)
    x_edges = np.linspace(0, 1, 26)
    truth = np.histogram(x, x_edges)[0]
    truth = truth / truth.sum()
    noisy = np.histogram(z, x_edges)[0]
    noisy = noisy / noisy.sum()
    z_edges = rc.covering_z_edges(x_edges, -6 * sigma, 6 * sigma)
    counts = np.histogram(z, z_edges)[0]
    pdf, interval = gaussian(sigma)
    noisy_l1 = rc.l1_distance(noisy, truth)
    assert noisy_l1 > 0.3  # measured 0.39: the noise washes the two modes together
    runs = [
        rc.bayes(counts, rc.transition_from_pdf(x_edges, z_edges, pdf), x_edges),
        rc.bayes(counts, rc.transition_from_pdf(x_edges, z_edges, pdf), x_edges, stop="change"),
        rc.em(counts, rc.transition_from_intervals(x_edges, z_edges, interval), x_edges),
    ]
    for run in runs:
        # measured 0.08 .. 0.11
        assert rc.l1_distance(run.probabilities, truth) < min(0.2, noisy_l1 / 2), run
        assert run.stopped_by != rc.STOP_MAX
        # the two modes come back: the reconstruction dips between them
        p = run.probabilities
        assert p[12] < 0.5 * min(p[:12].max(), p[13:].max())


# ----------------------------------------------------------------------------- properties


@st.composite
def problems(draw):
    """A random kernel (some columns losing mass), counts, and edges."""
    k = draw(st.integers(1, 6))
    m = draw(st.integers(1, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kernel = rng.uniform(size=(m, k)) * (rng.uniform(size=(m, k)) < 0.7)
    kernel[rng.integers(m, size=k), np.arange(k)] += 0.1  # no empty column
    kernel = kernel / kernel.sum(axis=0) * rng.uniform(0.3, 1.0, size=k) ** draw(st.integers(0, 1))
    counts = rng.integers(0, 50, size=m).astype(float)
    counts[np.flatnonzero(kernel.sum(axis=1) > 0)[0]] += 1  # an observation the kernel reaches
    return counts, kernel, np.arange(k + 1, dtype=float)


@given(problems())
@fast(60)
def test_em_never_decreases_the_log_likelihood(problem):
    counts, kernel, edges = problem
    reachable = kernel.sum(axis=1) > 0
    n, K, coverage = counts[reachable], kernel[reachable], kernel.sum(axis=0)
    f = np.full(K.shape[1], 1 / K.shape[1])
    previous = rc.log_likelihood(n, K, f)
    for _ in range(30):
        f = rc.update(f, n, K, coverage)
        current = rc.log_likelihood(n, K, f)
        assert current >= previous - 1e-9 * max(1.0, abs(previous))
        previous = current
    run = rc.em(counts, kernel, edges, max_iterations=200)
    assert run.log_likelihood >= rc.log_likelihood(n, K, np.full(K.shape[1], 1 / K.shape[1])) - 1e-9


@given(problems(), st.sampled_from(["em", "chi_square", "change", "ibu"]))
@fast(60)
def test_results_are_distributions(problem, method):
    counts, kernel, edges = problem
    if method == "em":
        run = rc.em(counts, kernel, edges, max_iterations=300)
    elif method == "ibu":
        k = kernel.shape[1]
        matrix = np.full((k, k), 0.2 / max(k - 1, 1)) + np.eye(k) * (0.8 - 0.2 / max(k - 1, 1))
        if k == 1:
            matrix = np.ones((1, 1))
        run = rc.categorical_ibu(np.resize(counts, k) + 1, matrix, max_iterations=300)
    else:
        run = rc.bayes(counts, kernel, edges, stop=method, max_iterations=300)
    p = run.probabilities
    assert p.shape == (len(edges) - 1,)
    assert np.all(p >= 0)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert 1 <= run.iterations <= 300


# ----------------------------------------------------------------------------- categorical


def retention_matrix(k: int, keep: float) -> np.ndarray:
    """Randomized response: keep the value with probability ``keep``, else uniform on the others."""
    return np.full((k, k), (1 - keep) / (k - 1)) + np.eye(k) * (keep - (1 - keep) / (k - 1))


def test_ibu_recovers_from_exact_expected_counts():
    truth = np.array([0.5, 0.25, 0.15, 0.1])
    matrix = retention_matrix(4, 0.6)
    expected = 10_000 * (truth @ matrix)
    # the truth is a fixed point of the update ...
    np.testing.assert_allclose(
        rc.update(truth, expected, matrix.T, matrix.T.sum(axis=0)), truth, atol=1e-15
    )
    # ... and the iteration from the uniform reaches it
    run = rc.categorical_ibu(expected, matrix)
    assert run.stopped_by == "change_below_tolerance"
    assert rc.l1_distance(run.probabilities, truth) < 1e-6
    np.testing.assert_array_equal(run.edges, np.arange(5))
    np.testing.assert_allclose(rc.categorical_inversion(expected, matrix), truth, atol=1e-12)


def test_ibu_agrees_with_inversion_inside_the_simplex():
    rng = np.random.default_rng(23)
    truth = np.array([0.4, 0.3, 0.2, 0.1])
    matrix = retention_matrix(4, 0.7)
    published = np.array([rng.choice(4, p=matrix[v]) for v in rng.choice(4, 5_000, p=truth)])
    counts = np.bincount(published, minlength=4)
    inverted = rc.categorical_inversion(counts, matrix)
    assert np.all(inverted > 0) and inverted.sum() == pytest.approx(1.0)
    run = rc.categorical_ibu(counts, matrix)
    # both are the maximum-likelihood estimate when the inversion is a distribution
    assert rc.l1_distance(run.probabilities, inverted) < 1e-6
    assert rc.l1_distance(inverted, truth) < 0.05


def test_inversion_outside_the_simplex_and_its_projection():
    matrix = retention_matrix(3, 0.5)  # off-diagonal 0.25
    counts = np.array([60.0, 25.0, 15.0])  # fewer 2s than the noise alone publishes
    inverted = rc.categorical_inversion(counts, matrix)
    assert inverted.min() < 0 and inverted.sum() == pytest.approx(1.0)
    projected = rc.project_to_simplex(inverted)
    assert np.all(projected >= 0) and projected.sum() == pytest.approx(1.0)
    ibu = rc.categorical_ibu(counts, matrix).probabilities
    assert np.all(ibu >= 0) and ibu[2] < 0.01  # IBU stays on the simplex, near the border


def test_project_to_simplex_known_points():
    np.testing.assert_allclose(rc.project_to_simplex(np.array([0.5, 0.5, 0.5])), [1 / 3] * 3)
    np.testing.assert_allclose(rc.project_to_simplex(np.array([2.0, 0.0])), [1.0, 0.0])
    np.testing.assert_allclose(rc.project_to_simplex(np.array([0.6, 0.6, -0.2])), [0.5, 0.5, 0.0])
    inside = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(rc.project_to_simplex(inside), inside)


# ----------------------------------------------------------------------------- pieces


def test_chi_square_quantiles():
    assert rc.chi_square_quantile(0.95, 1) == pytest.approx(3.841459, abs=1e-5)
    assert rc.chi_square_quantile(0.95, 10) == pytest.approx(18.307038, abs=1e-5)
    assert rc.chi_square_quantile(0.99, 3) == pytest.approx(11.344867, abs=1e-5)
    assert rc.chi_square_quantile(0.95, 99) == pytest.approx(123.225221, abs=1e-4)


def test_pdf_and_interval_kernels_agree_for_smooth_noise():
    pdf, interval = gaussian(0.2)
    x_edges = np.linspace(0, 1, 21)
    z_edges = rc.covering_z_edges(x_edges, -1.2, 1.2)
    a = rc.transition_from_pdf(x_edges, z_edges, pdf)
    b = rc.transition_from_intervals(x_edges, z_edges, interval)
    np.testing.assert_allclose(b.sum(axis=0), 1.0, atol=1e-6)
    assert np.all(a.sum(axis=0) <= 1.0 + 1e-12)
    # the midpoint kernel ignores the spread of X in its bin: close, not equal
    assert 0 < np.abs(a - b).sum(axis=0).max() < 0.1


def test_covering_z_edges():
    z = rc.covering_z_edges(np.array([0.0, 0.5, 1.0]), -0.7, 0.2)
    np.testing.assert_allclose(z, [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5])


def test_bad_problems_raise():
    x_edges = np.linspace(0, 1, 3)
    kernel = np.array([[1.0, 0.0], [0.0, 0.0]])  # x-bin 1 never lands in the z range
    with pytest.raises(ValueError, match="x-bin 1"):
        rc.em(np.array([3, 4]), kernel, x_edges)
    with pytest.raises(ValueError, match="counts"):
        rc.bayes(np.array([1, 2, 3]), np.eye(2), x_edges)
    with pytest.raises(ValueError, match="at most 1"):
        rc.bayes(np.array([1, 2]), np.eye(2) * 2, x_edges)
    with pytest.raises(ValueError, match="rows must sum to 1"):
        rc.categorical_ibu(np.array([1, 2]), np.array([[0.5, 0.4], [0.5, 0.5]]))


def test_unreachable_counts_are_dropped_and_reported():
    kernel = np.array([[0.5, 0.0], [0.5, 0.5], [0.0, 0.5], [0.0, 0.0]])
    run = rc.em(np.array([10, 20, 10, 7]), kernel, np.linspace(0, 1, 3))
    assert run.dropped == 7
    np.testing.assert_allclose(run.probabilities, [0.5, 0.5], atol=1e-6)


def test_l1_distance():
    assert rc.l1_distance(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == 1.0
    assert rc.l1_distance(np.array([0.5, 0.5]), np.array([0.25, 0.75])) == 0.25


# ----------------------------------------------------------------------------- naive Bayes


def hand_made_model() -> DistributionNaiveBayes:
    """Two classes; age binned [0, 30), [30, 60), [60, 90]; colour coded 0..2."""
    return DistributionNaiveBayes(
        np.array([0.6, 0.4]),
        {
            "age": BinnedAttribute(
                np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]), np.array([0.0, 30.0, 60.0, 90.0])
            ),
            "colour": BinnedAttribute(np.array([[0.5, 0.5, 0.0], [0.2, 0.2, 0.6]])),
        },
    )


def test_naive_bayes_hand_made():
    model = hand_made_model()
    features = {
        "age": np.array([10.0, 70.0, 45.0, 45.0, 10.0, 95.0, np.nan]),
        "colour": np.array([0, 0, 0, 2, 2, 1, 2]),
    }
    # by hand (scores prior * P(age bin) * P(colour)):
    # row 0: 0.6*0.7*0.5=.21 vs 0.4*0.1*0.2=.008 -> 0
    # row 1: 0.6*0.1*0.5=.03 vs 0.4*0.6*0.2=.048 -> 1
    # row 2: 0.6*0.2*0.5=.06 vs 0.4*0.3*0.2=.024 -> 0
    # row 3: colour 2 has (floored) probability ~1e-4 in class 0 -> 1
    # row 4: 0.6*0.7*~1e-4 vs 0.4*0.1*0.6=.024 -> 1 (the floor keeps class 0 finite)
    # row 5: age 95 is binned into the last bin: 0.6*0.1*0.5=.03 vs 0.4*0.6*0.2=.048 -> 1
    # row 6: age missing: 0.6*~1e-4 vs 0.4*0.6 -> 1
    expected = np.array([0, 1, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(model.predict(features), expected)
    scores = model.log_scores(features)
    assert np.all(np.isfinite(scores))
    assert scores[0, 0] == pytest.approx(
        math.log(0.6) + math.log((0.7 + 1e-4) / (1 + 3e-4)) + math.log((0.5 + 1e-4) / (1 + 3e-4))
    )
    labels = np.array([0, 1, 0, 1, 0, 1, 1])
    assert model.accuracy(features, labels) == pytest.approx(6 / 7)


def test_naive_bayes_from_reconstructions_and_bad_input():
    edges = np.array([0.0, 1.0, 2.0])
    parts = [
        rc.Reconstruction(edges, np.array([0.9, 0.1]), 1, "chi_square", "bayes"),
        rc.Reconstruction(edges, np.array([0.2, 0.8]), 1, "chi_square", "bayes"),
    ]
    model = DistributionNaiveBayes.from_reconstructions(np.array([0.5, 0.5]), numeric={"x": parts})
    np.testing.assert_array_equal(model.predict({"x": np.array([0.5, 1.5])}), [0, 1])
    with pytest.raises(ValueError, match="missing"):
        model.predict({"y": np.array([0.5])})
    with pytest.raises(ValueError, match="code 3"):
        hand_made_model().predict({"age": np.array([1.0]), "colour": np.array([3])})
    with pytest.raises(ValueError, match="sum to 1"):
        DistributionNaiveBayes(np.array([1.0, 1.0]), {"c": BinnedAttribute(np.ones((2, 2)))})
