"""Keyed noise and randomized response (sparkanon.algorithms.perturbation).

The noise and randomized response draw from a run key (fixed public test keys here), the
public splitmix generator is tested as the function condensation still uses. Statistical
tests use fixed keys and seeds, so they are deterministic; their thresholds are at small
significance levels, and negative controls show the same statistics do reject dependent or
non-uniform samples.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms.perturbation import noise, randomized_response
from sparkanon.algorithms.perturbation.noise import (
    NoiseSpec,
    counter_uniforms,
    gaussian_noise,
    scale_for_privacy,
    uniform_noise,
)
from sparkanon.algorithms.perturbation.randomized_response import (
    ldp_epsilon,
    pram_matrix,
    randomize,
    retention_for_epsilon,
)
from sparkanon.randomness import RunKey
from tests.attacks.splitmix import GAMMA, MASK, mix64

N = 10**6
KEY = RunKey(bytes(range(32)), "user", "test key")
OTHER_KEY = RunKey(bytes(range(1, 33)), "user", "another test key")


# ------------------------- helpers (independent of sparkanon: splitmix64 from tests/attacks)


def _ref_uniform(seed: int, stream: int, lane: int, row_id: int) -> float:
    """The documented construction, scalar and exact, for cross-checking the numpy one."""
    h = 0
    for word in (seed & MASK, stream & MASK, lane & MASK):
        h = mix64((h ^ word) + GAMMA)
    k1 = mix64((h ^ 1) + GAMMA)
    k2 = mix64((h ^ 2) + GAMMA)
    x = mix64(k1 + (row_id & MASK) * GAMMA)
    x = mix64(x ^ k2)
    return ((x >> 12) + 0.5) / 2.0**52


def _wilson_hilferty(df: int, z: float) -> float:
    """The chi-square quantile with standard-normal quantile z (Wilson and Hilferty 1931)."""
    return df * (1.0 - 2.0 / (9.0 * df) + z * math.sqrt(2.0 / (9.0 * df))) ** 3


def _chi2_uniform_1d(u: np.ndarray, bins: int) -> float:
    counts = np.bincount((u * bins).astype(np.int64), minlength=bins)
    expected = u.size / bins
    return float(((counts - expected) ** 2 / expected).sum())


def _chi2_uniform_2d(u: np.ndarray, v: np.ndarray, bins: int) -> float:
    cell = (u * bins).astype(np.int64) * bins + (v * bins).astype(np.int64)
    counts = np.bincount(cell, minlength=bins * bins)
    expected = u.size / (bins * bins)
    return float(((counts - expected) ** 2 / expected).sum())


def _ks_statistic(sample: np.ndarray, cdf) -> float:
    x = np.sort(sample)
    f = cdf(x)
    n = x.size
    i = np.arange(1, n + 1)
    return float(max((i / n - f).max(), (f - (i - 1) / n).max()))


KS_CRIT_001 = 1.6276 / math.sqrt(N)  # Kolmogorov distribution, alpha = 0.01 (asymptotic)
Z_999 = 3.090232306167813  # standard normal 0.999 quantile


# ----------------------------------------------------------------- the generator


def test_mix_matches_splitmix64_reference_outputs():
    # splitmix64 (Steele, Lea and Flood 2014) from state 0: first output 0xE220A8397B1DCDAF;
    # from 1234567 its published first outputs.
    assert noise._mix64_int(GAMMA) == 0xE220A8397B1DCDAF
    states = np.array([(1234567 + i * GAMMA) & MASK for i in (1, 2, 3)], dtype=np.uint64)
    assert noise._mix64(states).tolist() == [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
    ]


def test_counter_uniforms_match_the_documented_construction():
    ids = np.array([0, 1, 2, 17, 2**40 + 3, 2**63 - 1, -1, -(2**63)], dtype=np.int64)
    for seed, stream, lane in [(0, 0, 0), (42, 3, 0), (-5, 2**70 + 1, 2), (2**64 - 1, -1, 1)]:
        got = counter_uniforms(seed, stream, ids, lane=lane)
        want = [_ref_uniform(seed, stream, lane, int(r)) for r in ids]
        assert got.tolist() == want


def test_counter_uniforms_are_uniform_at_one_million():
    u = counter_uniforms(20230, 0, np.arange(N))
    assert u.dtype == np.float64 and u.shape == (N,)
    assert 0.0 < u.min() and u.max() < 1.0
    assert _ks_statistic(u, lambda x: x) < KS_CRIT_001
    assert _chi2_uniform_1d(u, 1000) < _wilson_hilferty(999, Z_999)
    # Another seed, non-contiguous and huge ids.
    ids = np.arange(N, dtype=np.int64) * 7919 + 2**50
    v = counter_uniforms(1, 9, ids)
    assert _ks_statistic(v, lambda x: x) < KS_CRIT_001
    assert _chi2_uniform_1d(v, 1000) < _wilson_hilferty(999, Z_999)


def test_uniformity_statistics_reject_a_non_uniform_sample():
    # Negative control: a slight tilt (u ** 1.05, density 0.95 to 1.1 over most of the
    # interval) is caught by both statistics.
    u = counter_uniforms(20230, 0, np.arange(N))
    tilted = u**1.05
    assert _ks_statistic(tilted, lambda x: x) > KS_CRIT_001
    assert _chi2_uniform_1d(tilted, 1000) > _wilson_hilferty(999, Z_999)


@pytest.mark.parametrize(
    "first, second",
    [
        ((7, 0, 0), (7, 1, 0)),  # adjacent streams
        ((7, 0, 0), (8, 0, 0)),  # adjacent seeds
        ((7, 0, 0), (7, 0, 1)),  # lanes of one stream
        ((0, 0, 0), (0, 0, 2)),
    ],
)
def test_streams_seeds_and_lanes_are_independent(first, second):
    ids = np.arange(N)
    u = counter_uniforms(first[0], first[1], ids, lane=first[2])
    v = counter_uniforms(second[0], second[1], ids, lane=second[2])
    assert abs(np.corrcoef(u, v)[0, 1]) < 4.5 / math.sqrt(N)
    assert _chi2_uniform_2d(u, v, 20) < _wilson_hilferty(399, Z_999)


def test_adjacent_row_ids_are_independent():
    u = counter_uniforms(3, 4, np.arange(N + 1))
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 4.5 / math.sqrt(N)
    assert _chi2_uniform_2d(u[:-1], u[1:], 20) < _wilson_hilferty(399, Z_999)


def test_independence_statistic_rejects_dependent_streams():
    # Negative control: a stream against a slightly perturbed copy of itself.
    u = counter_uniforms(7, 0, np.arange(N))
    v = (u + 0.3 * counter_uniforms(7, 1, np.arange(N))) % 1.0
    assert _chi2_uniform_2d(u, v, 20) > _wilson_hilferty(399, Z_999)


def test_counter_uniforms_do_not_depend_on_batches_or_order():
    rng = np.random.default_rng(0)
    ids = rng.permutation(200_000).astype(np.int64) * 3 + 11
    whole = counter_uniforms(99, 5, ids)
    cuts = np.sort(rng.choice(np.arange(1, ids.size), size=17, replace=False))
    batched = np.concatenate([counter_uniforms(99, 5, part) for part in np.split(ids, cuts)])
    assert np.array_equal(whole, batched)
    order = rng.permutation(ids.size)
    assert np.array_equal(counter_uniforms(99, 5, ids[order]), whole[order])
    # Same id, same value: repeated ids and a 2-D shape.
    assert np.array_equal(counter_uniforms(99, 5, ids[:6].reshape(2, 3)), whole[:6].reshape(2, 3))


def test_counter_uniforms_are_deterministic_and_dtype_independent():
    ids = np.arange(1000)
    first = counter_uniforms(5, 6, ids)
    assert np.array_equal(first, counter_uniforms(5, 6, ids.copy()))
    for dtype in (np.int32, np.uint32, np.int64, np.uint64, np.uint16):
        assert np.array_equal(first, counter_uniforms(5, 6, ids.astype(dtype)))
    assert np.array_equal(first, counter_uniforms(np.int64(5), np.uint8(6), ids))
    assert not np.array_equal(first, counter_uniforms(5, 7, ids))
    assert not np.array_equal(first, counter_uniforms(6, 6, ids))


def test_counter_uniforms_refuse_non_integers():
    with pytest.raises(ValueError, match="row_ids"):
        counter_uniforms(1, 0, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="seed"):
        counter_uniforms(1.5, 0, np.arange(3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stream"):
        counter_uniforms(1, True, np.arange(3))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(min_value=-(2**80), max_value=2**80),
    stream=st.integers(min_value=-(2**70), max_value=2**70),
    ids=st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=1, max_size=50),
)
def test_property_uniforms_in_open_interval(seed, stream, ids):
    row_ids = np.array(ids, dtype=np.int64)
    u = counter_uniforms(seed, stream, row_ids)
    assert np.all((u > 0.0) & (u < 1.0))
    # Pure function of the row id: each id alone gives its value in the batch.
    assert counter_uniforms(seed, stream, row_ids[-1:])[0] == u[-1]


def test_extreme_words_map_strictly_inside_the_unit_interval(monkeypatch):
    # Force the hash to its extreme outputs: the conversion must stay in the open interval.
    extremes = np.array([0, 2**12 - 1, 2**64 - 1, 2**64 - 2**12], dtype=np.uint64)
    monkeypatch.setattr(noise, "_mix64", lambda z: extremes.copy())
    u = counter_uniforms(0, 0, np.arange(4))
    assert u.tolist() == [2.0**-53, 2.0**-53, 1.0 - 2.0**-53, 1.0 - 2.0**-53]
    assert np.all(np.isfinite(np.log(u))) and np.all(np.log1p(-u) < 0.0)


# ----------------------------------------------------------------- noise


def test_noise_is_the_documented_function_of_the_key_uniforms():
    # Uniform: a (2u - 1) with u on lane 0; Gaussian: Box-Muller of lanes 1 and 2.
    ids = np.array([0, 1, 2, 17, 2**40 + 3, 2**63 - 1, -1], dtype=np.int64)
    stream = 2**20 + 3
    u0 = KEY.uniforms(stream, ids, lane=0)
    assert np.array_equal(uniform_noise(KEY, stream, ids, 2.5), 2.5 * (2.0 * u0 - 1.0))
    u1 = KEY.uniforms(stream, ids, lane=1)
    u2 = KEY.uniforms(stream, ids, lane=2)
    want = 0.7 * np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    assert np.array_equal(gaussian_noise(KEY, stream, ids, 0.7), want)


def test_same_key_stream_and_counter_give_the_same_draw():
    rng = np.random.default_rng(0)
    ids = rng.permutation(200_000).astype(np.int64) * 3 + 11
    for fn in (uniform_noise, gaussian_noise):
        whole = fn(KEY, 5, ids, 1.0)
        assert np.array_equal(whole, fn(KEY, 5, ids.copy(), 1.0))
        cuts = np.sort(rng.choice(np.arange(1, ids.size), size=17, replace=False))
        batched = np.concatenate([fn(KEY, 5, part, 1.0) for part in np.split(ids, cuts)])
        assert np.array_equal(whole, batched)
        order = rng.permutation(ids.size)
        assert np.array_equal(fn(KEY, 5, ids[order], 1.0), whole[order])
        # The same key read again (a user's key file) draws the same; another key does not.
        again = RunKey(bytes(range(32)), "user", "the same bytes")
        assert np.array_equal(fn(again, 5, ids, 1.0), whole)
        other = fn(OTHER_KEY, 5, ids, 1.0)
        assert np.count_nonzero(other == whole) < 10
        assert not np.array_equal(fn(KEY, 6, ids, 1.0), whole)


@pytest.mark.parametrize(
    "first, second",
    [
        ((KEY, 2**20, 0), (KEY, 2**20 + 1, 0)),  # adjacent attributes' streams
        ((KEY, 2**20, 0), (OTHER_KEY, 2**20, 0)),  # two keys
        ((KEY, 2**20, 0), (KEY, 2**20, 1)),  # the uniform lane and a Gaussian one
    ],
)
def test_key_streams_and_keys_are_independent(first, second):
    ids = np.arange(N)
    u = first[0].uniforms(first[1], ids, lane=first[2])
    v = second[0].uniforms(second[1], ids, lane=second[2])
    assert abs(np.corrcoef(u, v)[0, 1]) < 4.5 / math.sqrt(N)
    assert _chi2_uniform_2d(u, v, 20) < _wilson_hilferty(399, Z_999)


def test_noise_does_not_depend_on_the_public_generator():
    # The review's attack: the public splitmix noise of any seed is unrelated to the draws.
    ids = np.arange(N)
    y = uniform_noise(KEY, 2**20, ids, 1.0)
    for seed in (0, 7, 42):
        public = 2.0 * counter_uniforms(seed, 0, ids) - 1.0
        assert abs(np.corrcoef(y, public)[0, 1]) < 4.5 / math.sqrt(N)
        assert np.count_nonzero(np.abs(y - public) < 1e-9) == 0


@settings(max_examples=60, deadline=None)
@given(
    stream=st.integers(min_value=0, max_value=2**32 - 1),
    ids=st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=1, max_size=50),
    a=st.floats(min_value=1e-6, max_value=1e6),
)
def test_property_noise_in_bounds(stream, ids, a):
    row_ids = np.array(ids, dtype=np.int64)
    y = uniform_noise(KEY, stream, row_ids, a)
    assert np.all(np.abs(y) <= a)  # closed: the key's u reaches 1.0
    g = gaussian_noise(KEY, stream, row_ids, a)
    assert np.all(np.isfinite(g)) and np.all(np.abs(g) <= 8.66 * a)
    assert uniform_noise(KEY, stream, row_ids[-1:], a)[0] == y[-1]


def test_gaussian_bound_at_the_extreme_uniforms(monkeypatch):
    # The key's uniforms lie in [2**-53, 1 - 2**-53]: the largest draw is sqrt(106 ln 2).
    extremes = np.array([2.0**-53, 2.0**-53, 1.0 - 2.0**-53])
    lanes = {1: extremes, 2: np.array([0.0 + 2.0**-53, 0.5, 0.5])}
    monkeypatch.setattr(RunKey, "uniforms", lambda self, s, c, lane=0: lanes[lane].copy())
    g = gaussian_noise(KEY, 0, np.arange(3), 1.0)
    bound = math.sqrt(106.0 * math.log(2.0))
    assert g[0] == pytest.approx(bound, rel=1e-12) and g[1] == pytest.approx(-bound, rel=1e-12)
    assert 8.57 < bound < 8.58
    assert abs(g[2]) < 1e-7


def test_uniform_noise_distribution():
    y = uniform_noise(KEY, 2, np.arange(N), 3.0)
    assert np.all(np.abs(y) < 3.0)
    assert _ks_statistic(y, NoiseSpec("uniform", 3.0).cdf) < KS_CRIT_001
    assert abs(y.mean()) < 4.5 * math.sqrt(3.0 / N)
    assert y.var() == pytest.approx(3.0, rel=0.01)


def test_gaussian_noise_distribution():
    g = gaussian_noise(KEY, 2, np.arange(N), 2.0)
    assert _ks_statistic(g, NoiseSpec("gaussian", 2.0).cdf) < KS_CRIT_001
    assert abs(g.mean()) < 4.5 * 2.0 / math.sqrt(N)
    assert g.var() == pytest.approx(4.0, rel=0.01)
    # Independent of the uniform noise of the same stream (lane 0 vs lanes 1, 2).
    y = uniform_noise(KEY, 2, np.arange(N), 1.0)
    assert abs(np.corrcoef(g, y)[0, 1]) < 4.5 / math.sqrt(N)


def test_gaussian_ks_rejects_a_wrong_sigma():
    # Negative control: sigma 2 sampled, sigma 2.02 tested.
    g = gaussian_noise(KEY, 2, np.arange(N), 2.0)
    assert _ks_statistic(g, NoiseSpec("gaussian", 2.02).cdf) > KS_CRIT_001


def test_noise_spec_sample_dispatches_and_is_batch_independent():
    ids = np.arange(10_000, dtype=np.int64)
    for dist, fn in (("uniform", uniform_noise), ("gaussian", gaussian_noise)):
        spec = NoiseSpec(dist, 1.5)
        whole = spec.sample(KEY, 8, ids)
        assert np.array_equal(whole, fn(KEY, 8, ids, 1.5))
        parts = np.concatenate([spec.sample(KEY, 8, p) for p in np.array_split(ids[::-1], 7)])
        assert np.array_equal(parts, whole[::-1])


def test_uniform_spec_hand_values():
    spec = NoiseSpec("uniform", 2.0)
    assert spec.cdf(np.array([-3.0, -2.0, 0.0, 1.0, 2.0, 5.0])).tolist() == [
        0.0,
        0.0,
        0.5,
        0.75,
        1.0,
        1.0,
    ]
    assert spec.pdf(np.array([-2.0, 0.0, 2.0, 2.01, -7.0])).tolist() == [
        0.25,
        0.25,
        0.25,
        0.0,
        0.0,
    ]
    p = spec.interval_probability(
        np.array([-1.0, 1.0, -5.0, 1.0, 3.0]), np.array([1.0, 10.0, 5.0, 0.0, 4.0])
    )
    assert p.tolist() == [0.5, 0.25, 1.0, 0.0, 0.0]
    assert spec.mean == 0.0 and spec.variance == pytest.approx(4.0 / 3.0)


def test_gaussian_spec_hand_values():
    spec = NoiseSpec("gaussian", 2.0)
    x = np.array([0.0, 2.0, -2.0, 3.919927969080108])
    assert spec.cdf(x) == pytest.approx(
        [0.5, 0.8413447460685429, 0.15865525393145707, 0.975], rel=1e-12
    )
    ref = NormalDist(0.0, 2.0)
    grid = np.linspace(-9.0, 9.0, 37)
    # statistics.NormalDist computes 1 + erf, which loses digits in the lower tail: 1e-10.
    assert spec.cdf(grid) == pytest.approx([ref.cdf(v) for v in grid], rel=1e-10, abs=1e-300)
    # Phi(-4.5) and 1 - Phi(4.5) to 50 digits (continued fraction of erfc in decimal).
    assert spec.cdf(np.array([-9.0])) == pytest.approx([3.3976731247300604e-06], rel=1e-14, abs=0)
    assert 1.0 - spec.cdf(np.array([9.0])) == pytest.approx(
        [3.3976731247300604e-06], rel=1e-10, abs=0
    )
    assert spec.pdf(np.array([0.0, 2.0])) == pytest.approx(
        [1.0 / (2.0 * math.sqrt(2.0 * math.pi)), math.exp(-0.5) / (2.0 * math.sqrt(2.0 * math.pi))],
        rel=1e-14,
    )
    z = 1.959963984540054
    p = spec.interval_probability(
        np.array([-z * 2.0, 0.0, -math.inf]), np.array([z * 2.0, math.inf, 0.0])
    )
    assert p == pytest.approx([0.95, 0.5, 0.5], rel=1e-12)
    assert spec.mean == 0.0 and spec.variance == 4.0


def test_gaussian_tail_intervals_keep_relative_precision():
    # P(10 <= Z < 11) = Q(10) - Q(11) to 50 digits (continued fraction of erfc in decimal).
    want = 7.6196619582030762e-24
    spec = NoiseSpec("gaussian", 1.0)
    p = spec.interval_probability(np.array([10.0, -11.0]), np.array([11.0, -10.0]))
    assert p == pytest.approx([want, want], rel=1e-13, abs=0)


def test_interval_probabilities_of_a_partition_sum_to_one():
    edges = np.concatenate([[-np.inf], np.linspace(-5.0, 5.0, 101), [np.inf]])
    for spec in (NoiseSpec("uniform", 1.7), NoiseSpec("gaussian", 1.3)):
        p = spec.interval_probability(edges[:-1], edges[1:])
        assert np.all(p >= 0.0)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        # Broadcasting: the same probabilities from a column of lows against a row of highs.
        grid = spec.interval_probability(edges[:-1, None], edges[None, 1:])
        assert np.allclose(np.diag(grid), p)


def test_privacy_width_agrawal_srikant_table_1():
    assert NoiseSpec("uniform", 1.0).privacy_width() == pytest.approx(1.9, abs=1e-15)
    assert NoiseSpec("uniform", 1.0).privacy_width(0.5) == pytest.approx(1.0)
    assert NoiseSpec("uniform", 3.0).privacy_width(0.999) == pytest.approx(5.994)
    assert NoiseSpec("gaussian", 1.0).privacy_width() == pytest.approx(1.959964 * 2, abs=1e-6)
    assert NoiseSpec("gaussian", 1.0).privacy_width() == pytest.approx(3.92, abs=5e-3)
    assert NoiseSpec("gaussian", 1.0).privacy_width(0.5) == pytest.approx(1.34, abs=1e-2)
    assert NoiseSpec("gaussian", 2.5).privacy_width() == pytest.approx(2.5 * 3.919927969080108)
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="confidence"):
            NoiseSpec("gaussian", 1.0).privacy_width(bad)


def test_privacy_width_holds_the_value_with_its_confidence():
    # The defining property: the centred interval of that width holds the noise with c.
    for spec in (NoiseSpec("uniform", 1.3), NoiseSpec("gaussian", 0.7)):
        for c in (0.5, 0.9, 0.95):
            half = spec.privacy_width(c) / 2.0
            got = spec.interval_probability(np.array([-half]), np.array([half]))[0]
            assert got == pytest.approx(c, rel=1e-12)


def test_scale_for_privacy():
    assert scale_for_privacy("uniform", 0.5, 100.0) == pytest.approx(50.0 / 1.9)
    assert scale_for_privacy("gaussian", 0.5, 100.0) == pytest.approx(50.0 / 3.919927969080108)
    assert scale_for_privacy("gaussian", 1.0, 2.0, confidence=0.5) == pytest.approx(
        2.0 / (2 * 0.6744897501960817)
    )
    for dist in ("uniform", "gaussian"):
        for privacy in (0.25, 1.0, 2.0):
            scale = scale_for_privacy(dist, privacy, 37.0, 0.9)
            assert NoiseSpec(dist, scale).privacy_width(0.9) == pytest.approx(privacy * 37.0)


@pytest.mark.parametrize(
    "args, match",
    [
        (("gaussian", 0.0, 10.0), "privacy"),
        (("gaussian", -0.5, 10.0), "privacy"),
        (("uniform", math.nan, 10.0), "privacy"),
        (("uniform", 0.5, 0.0), "value_range"),
        (("uniform", 0.5, -3.0), "value_range"),
        (("laplace", 0.5, 1.0), "distribution"),
    ],
)
def test_scale_for_privacy_refuses_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        scale_for_privacy(*args)


def test_noise_spec_and_noise_refuse_bad_scales():
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="scale"):
            NoiseSpec("uniform", bad)
        with pytest.raises(ValueError, match="a must"):
            uniform_noise(KEY, 0, np.arange(3), bad)
        with pytest.raises(ValueError, match="sigma"):
            gaussian_noise(KEY, 0, np.arange(3), bad)
    with pytest.raises(ValueError, match="distribution"):
        NoiseSpec("laplace", 1.0)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        NoiseSpec("uniform", 1.0).scale = 2.0  # type: ignore[misc]


# ----------------------------------------------------------------- randomized response


def test_pram_matrix_hand_values():
    m = pram_matrix(3, 0.7)
    assert np.allclose(
        m, [[0.7, 0.15, 0.15], [0.15, 0.7, 0.15], [0.15, 0.15, 0.7]], rtol=1e-15, atol=0
    )
    assert pram_matrix(2, 0.75).tolist() == [[0.75, 0.25], [0.25, 0.75]]  # Warner 1965, p = 3/4
    assert np.array_equal(pram_matrix(4, 1.0), np.eye(4))
    assert np.allclose(pram_matrix(17, 0.3).sum(axis=1), 1.0)


@pytest.mark.parametrize(
    "k, retention",
    [(1, 0.5), (0, 0.5), (2.5, 0.5), (True, 0.5), (3, 0.0), (3, -0.1), (3, 1.01), (3, math.nan)],
)
def test_pram_matrix_refuses_bad_input(k, retention):
    with pytest.raises(ValueError, match="k must|retention"):
        pram_matrix(k, retention)


def test_retention_for_epsilon_hand_values():
    assert retention_for_epsilon(2, math.log(3.0)) == pytest.approx(0.75, rel=1e-15)
    assert retention_for_epsilon(5, 0.0) == pytest.approx(0.2, rel=1e-15)
    assert retention_for_epsilon(4, 1.0) == pytest.approx(math.e / (math.e + 3.0), rel=1e-15)
    assert retention_for_epsilon(3, math.inf) == 1.0
    assert retention_for_epsilon(3, 800.0) == 1.0
    for bad in (-0.1, math.nan):
        with pytest.raises(ValueError, match="epsilon"):
            retention_for_epsilon(3, bad)
    with pytest.raises(ValueError, match="k must"):
        retention_for_epsilon(1, 1.0)


@pytest.mark.parametrize("k", [2, 3, 7, 100])
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0])
def test_ldp_epsilon_inverts_retention_for_epsilon(k, epsilon):
    got = ldp_epsilon(pram_matrix(k, retention_for_epsilon(k, epsilon)))
    # Equal up to the rounding of the retention (a float near 1 when epsilon is large).
    assert got == pytest.approx(epsilon, rel=1e-12, abs=1e-15)


def test_ldp_epsilon_hand_values():
    assert ldp_epsilon(np.array([[0.5, 0.5], [0.25, 0.75]])) == pytest.approx(math.log(2.0))
    assert ldp_epsilon(np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]])) == pytest.approx(
        math.log(2.0)
    )
    assert ldp_epsilon(np.eye(3)) == math.inf
    assert ldp_epsilon(np.array([[0.5, 0.5], [0.0, 1.0]])) == math.inf
    assert ldp_epsilon(np.full((3, 3), 1.0 / 3.0)) == 0.0
    # Retention below 1/k: the off-diagonal entries are the larger ones.
    assert ldp_epsilon(pram_matrix(3, 0.1)) == pytest.approx(math.log(0.45 / 0.1))
    # Not square: 2 true values published over 3 codes.
    assert ldp_epsilon(np.array([[0.6, 0.3, 0.1], [0.2, 0.3, 0.5]])) == pytest.approx(math.log(5.0))


@pytest.mark.parametrize(
    "matrix, match",
    [
        (np.array([[0.5, 0.6], [0.5, 0.5]]), "row 0 sums"),
        (np.array([[1.2, -0.2], [0.5, 0.5]]), r"entry \[0, 1\]"),
        (np.array([[np.nan, 1.0], [0.5, 0.5]]), r"entry \[0, 0\]"),
        (np.array([0.5, 0.5]), "2-D"),
    ],
)
def test_ldp_epsilon_refuses_bad_matrices(matrix, match):
    with pytest.raises(ValueError, match=match):
        ldp_epsilon(matrix)


def test_randomize_transition_frequencies_at_one_million():
    matrix = np.array(
        [
            [0.55, 0.25, 0.20, 0.00],
            [0.10, 0.60, 0.10, 0.20],
            [0.05, 0.05, 0.85, 0.05],
            [0.30, 0.30, 0.30, 0.10],
        ]
    )
    ids = np.arange(N, dtype=np.int64)
    codes = (KEY.uniforms(100, ids) * 4).astype(np.int64)  # an independent stream
    out = randomize(codes, matrix, KEY, 3, ids)
    counts = np.zeros((4, 4))
    np.add.at(counts, (codes, out), 1.0)
    n_i = counts.sum(axis=1, keepdims=True)
    expected = n_i * matrix
    sd = np.sqrt(n_i * matrix * (1.0 - matrix))
    assert np.all(np.abs(counts - expected) <= 5.0 * sd)  # 16 cells, 5 sd each
    assert counts[0, 3] == 0.0  # a zero entry is never drawn


def test_randomize_frequency_check_rejects_a_wrong_matrix():
    # Negative control: draws from retention 0.60 are not within the intervals of 0.61.
    ids = np.arange(N, dtype=np.int64)
    codes = ids % 3
    out = randomize(codes, pram_matrix(3, 0.60), KEY, 0, ids)
    kept = np.count_nonzero(out == codes)
    n = codes.size
    assert abs(kept - n * 0.60) <= 5.0 * math.sqrt(n * 0.6 * 0.4)
    assert abs(kept - n * 0.61) > 5.0 * math.sqrt(n * 0.61 * 0.39)


def test_randomize_retention_one_keeps_every_code():
    ids = np.arange(N, dtype=np.int64)
    codes = ids % 7
    assert np.array_equal(randomize(codes, pram_matrix(7, 1.0), KEY, 2, ids), codes)


def test_randomize_is_deterministic_and_batch_independent():
    rng = np.random.default_rng(3)
    ids = rng.permutation(100_000).astype(np.int64) + 10**12
    codes = rng.integers(0, 5, size=ids.size)
    matrix = pram_matrix(5, retention_for_epsilon(5, 1.0))
    whole = randomize(codes, matrix, KEY, 1, ids)
    assert np.array_equal(whole, randomize(codes, matrix, KEY, 1, ids))
    cuts = [1, 10, 5000, 70_000, 99_999]
    batched = np.concatenate(
        [
            randomize(c, matrix, KEY, 1, i)
            for c, i in zip(np.split(codes, cuts), np.split(ids, cuts), strict=True)
        ]
    )
    assert np.array_equal(batched, whole)
    order = rng.permutation(ids.size)
    assert np.array_equal(randomize(codes[order], matrix, KEY, 1, ids[order]), whole[order])
    assert not np.array_equal(whole, randomize(codes, matrix, KEY, 2, ids))
    assert not np.array_equal(whole, randomize(codes, matrix, OTHER_KEY, 1, ids))
    # Shape kept, int64 out.
    two_d = randomize(codes[:6].reshape(2, 3), matrix, KEY, 1, ids[:6].reshape(2, 3))
    assert two_d.dtype == np.int64 and np.array_equal(two_d.ravel(), whole[:6])


def test_randomize_refuses_bad_input():
    m = pram_matrix(3, 0.5)
    ids = np.arange(3)
    with pytest.raises(ValueError, match="outside"):
        randomize(np.array([0, 3, 1]), m, KEY, 0, ids)
    with pytest.raises(ValueError, match="outside"):
        randomize(np.array([0, -1, 1]), m, KEY, 0, ids)
    with pytest.raises(ValueError, match="integer"):
        randomize(np.array([0.0, 1.0, 1.0]), m, KEY, 0, ids)
    with pytest.raises(ValueError, match="shape"):
        randomize(np.array([0, 1]), m, KEY, 0, ids)
    with pytest.raises(ValueError, match="sums"):
        randomize(np.array([0, 1, 2]), m * 0.9, KEY, 0, ids)
    assert (
        randomize(np.array([], dtype=np.int64), m, KEY, 0, np.array([], dtype=np.int64)).size == 0
    )


@st.composite
def _matrices(draw):
    rows = draw(st.integers(min_value=1, max_value=6))
    cols = draw(st.integers(min_value=1, max_value=6))
    weights = draw(
        st.lists(
            st.lists(
                st.sampled_from([0.0, 0.0, 1e-9, 0.1, 0.5, 1.0, 3.0]), min_size=cols, max_size=cols
            ).filter(lambda r: sum(r) > 0),
            min_size=rows,
            max_size=rows,
        )
    )
    w = np.array(weights)
    return w / w.sum(axis=1, keepdims=True)


@settings(max_examples=60, deadline=None)
@given(
    matrix=_matrices(),
    stream=st.integers(min_value=0, max_value=2**32 - 1),
    n=st.integers(min_value=0, max_value=300),
    data=st.data(),
)
def test_property_randomize_stays_in_range_and_off_zero_entries(matrix, stream, n, data):
    codes = np.array(
        data.draw(st.lists(st.integers(0, matrix.shape[0] - 1), min_size=n, max_size=n)),
        dtype=np.int64,
    )
    ids = np.arange(n, dtype=np.int64) * 13
    out = randomize(codes, matrix, KEY, stream, ids)
    assert out.shape == codes.shape
    assert np.all((out >= 0) & (out < matrix.shape[1]))
    assert np.all(matrix[codes, out] > 0.0)


def test_randomize_uses_lane_zero_of_the_key_stream():
    # Documented: one key uniform per row, inverse CDF over the row's cumulative sum.
    ids = np.arange(1000, dtype=np.int64)
    codes = ids % 4
    matrix = np.array([[0.1, 0.2, 0.3, 0.4]] * 4)
    u = KEY.uniforms(9, ids, lane=0)
    want = np.searchsorted(np.array([0.1, 0.3, 0.6, 1.0]), u, side="right")
    assert np.array_equal(randomize(codes, matrix, KEY, 9, ids), want)


def test_randomize_edges_of_the_inverse_cdf(monkeypatch):
    # A row whose sequential cumulative sum ends below its (pairwise) sum: without pinning
    # the tail to 1, u near 1 would fall past the last column; u = 1 must not either.
    rng = np.random.default_rng(1)
    for _ in range(10_000):
        row = rng.random(21)
        row[-3:] = 0.0
        row /= row.sum()
        if np.cumsum(row)[-1] / row.sum() < 1.0:
            break
    else:
        pytest.fail("no row with a short cumulative sum found")
    matrix = np.vstack(
        [row, np.r_[0.0, 0.0, 0.5, 0.5, np.zeros(17)], np.r_[0.5, 0.5, np.zeros(19)]]
    )
    # The key's extremes, 2**-53 and 1 - 2**-53, and 1.0 itself (kept below 1).
    u = np.array([1.0, 2.0**-53, 1.0 - 2.0**-53, 2.0**-53, 0.5, np.nextafter(0.5, 0.0)])
    codes = np.array([0, 0, 1, 1, 2, 2])
    monkeypatch.setattr(RunKey, "uniforms", lambda self, *a, **k: u.copy())
    out = randomize(codes, matrix, KEY, 0, np.arange(6))
    # Last and first non-zero columns; u equal to C[0] = 0.5 goes to the next column.
    assert out.tolist() == [17, 0, 3, 2, 1, 0]


def test_package_modules_are_importable_by_name():
    assert randomized_response.randomize is randomize
    assert noise.NoiseSpec is NoiseSpec
