"""Keyed additive noise for the randomization family (section 20.2), and its distributions.

**Where the randomness comes from.** Every draw is a function of the run's secret key
(:class:`~sparkanon.randomness.RunKey`), the attribute's stream
(:data:`~sparkanon.randomness.streams.PERTURBATION` plus the attribute's position), a lane
and the row's counter (its internal row id): :meth:`RunKey.uniforms`, AES-256 over one
``(stream, lane, counter)`` block per draw. A row's noise therefore does not depend on how
the rows are split into batches or partitions, nor on their order, and a retried Spark task
computes the same value; but without the key nobody can recompute it, so knowing the code,
the job's ``seed`` and every row's position recovers no original value. The job's ``seed``
plays no part in the noise. A rerun draws another key and publishes other noise, unless the
user passes the same key (``--key-file``).

**Lanes.** :func:`uniform_noise` and :mod:`.randomized_response` use lane 0 of the
attribute's stream, :func:`gaussian_noise` lanes 1 and 2.

**Noise.** The key's uniforms lie in the open interval ``(0, 1)``: ``[2**-53, 1 - 2**-53]``
(:meth:`~sparkanon.randomness.RunKey.uniforms`). Uniform noise on ``[-a, a]`` is
``a * (2u - 1)`` (in fact strictly inside). Gaussian noise is Box and Muller's 1958
transform of two uniforms of the row, ``sigma * sqrt(-2 ln u1) * cos(2 pi u2)`` (the sine
half is not used, so one row needs no other row); since ``u1 >= 2**-53`` a draw is at most
``sqrt(106 ln 2) = 8.57`` sigma from 0, a truncation of probability about ``1e-17``.

**Privacy.** :meth:`NoiseSpec.privacy_width` is Agrawal and Srikant's 2000 measure (SIGMOD,
"Privacy-preserving data mining", Table 1): if the original value can be estimated with
``c`` confidence to lie in an interval of width ``w``, ``w`` is the privacy at that
confidence: ``2a * c`` for uniform noise on ``[-a, a]`` (1.9a at 95%) and
``2 z_{(1+c)/2} sigma`` for Gaussian noise (3.92 sigma at 95%). Privacy "as a share of the
range" (``"50%"``) is ``w / range``; :func:`scale_for_privacy` inverts it. These widths
hold only while the noise is secret: the key is what keeps it so. The range is the
column's declared ``bounds``, or its input range rounded outward (:func:`coarse_range`),
never the exact input minimum and maximum, which the published scale would give away.

**The public generator.** :func:`counter_uniforms` is splitmix64's output function keyed by
an integer seed (Steele, Lea and Flood 2014, with a second keyed round): anyone who knows
the seed recomputes its output, so it protects nothing and the noise above does not use it.
It remains only for condensation's draws until those move to the run key.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from sparkanon.randomness import RunKey

_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_GAMMA_U = np.uint64(_GAMMA)
_M1_U = np.uint64(_M1)
_M2_U = np.uint64(_M2)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S12 = np.uint64(12)
_TWO_M52 = 2.0**-52

DISTRIBUTIONS = ("uniform", "gaussian")
"""The additive noise distributions of :class:`NoiseSpec`."""


def _mix64_int(z: int) -> int:
    """splitmix64's output function on one Python int (modulo ``2**64``).

    Args:
        z: The 64-bit state.

    Returns:
        The mixed 64-bit value, identical to :func:`_mix64` on the same bits.
    """
    z &= _MASK64
    z = ((z ^ (z >> 30)) * _M1) & _MASK64
    z = ((z ^ (z >> 27)) * _M2) & _MASK64
    return z ^ (z >> 31)


def _mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's output function over a uint64 array (wrapping arithmetic).

    Args:
        z: A uint64 array (consumed: the result may share its memory).

    Returns:
        The mixed uint64 array.
    """
    z = z ^ (z >> _S30)
    z *= _M1_U
    z ^= z >> _S27
    z *= _M2_U
    z ^= z >> _S31
    return z


def _as_word(value: int, name: str) -> int:
    """An integer argument as a 64-bit word (modulo ``2**64``).

    Args:
        value: A Python or numpy integer.
        name: The argument's name, for the error.

    Returns:
        ``value mod 2**64``.

    Raises:
        ValueError: If ``value`` is not an integer (a bool is refused too).
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer, got a bool")
    try:
        return operator.index(value) & _MASK64
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {type(value).__name__}") from None


def _keys(seed: int, stream: int, lane: int) -> tuple[np.uint64, np.uint64]:
    """The two round keys of ``(seed, stream, lane)``.

    Args:
        seed: The job's seed.
        stream: The stream (e.g. one per perturbed attribute).
        lane: The sub-stream of the stream.

    Returns:
        ``(k1, k2)``: the counter key and the second round's key.
    """
    h = 0
    for word in (_as_word(seed, "seed"), _as_word(stream, "stream"), _as_word(lane, "lane")):
        h = _mix64_int(((h ^ word) + _GAMMA) & _MASK64)
    k1 = _mix64_int((h ^ 1) + _GAMMA)
    k2 = _mix64_int((h ^ 2) + _GAMMA)
    return np.uint64(k1), np.uint64(k2)


def _row_words(row_ids: np.ndarray) -> np.ndarray:
    """Row ids as uint64 words (a signed id by its int64 bit pattern).

    Args:
        row_ids: An integer array (any shape).

    Returns:
        A new uint64 array of the same shape.

    Raises:
        ValueError: If ``row_ids`` is not of an integer dtype.
    """
    ids = np.asarray(row_ids)
    if ids.dtype.kind == "u":
        return ids.astype(np.uint64, copy=True)
    if ids.dtype.kind == "i":
        return ids.astype(np.int64).view(np.uint64).copy()
    raise ValueError(f"row_ids must be an integer array, got dtype {ids.dtype}")


def counter_uniforms(seed: int, stream: int, row_ids: np.ndarray, *, lane: int = 0) -> np.ndarray:
    """Public splitmix uniforms on (0, 1): a pure function of seed, stream and row id.

    Not a secret: whoever knows the seed recomputes every value, so no perturbation uses
    it (see the module docstring). ``u = (top52(mix64(mix64(k1 + row_id * GAMMA) ^ k2)) +
    0.5) / 2**52``: splitmix64's output function ``mix64`` (Steele, Lea and Flood 2014;
    Stafford's "Mix13" finalizer) with ``GAMMA = 0x9E3779B97F4A7C15``, and round keys
    ``(k1, k2)`` chained from ``(seed, stream, lane)`` by ``h = mix64((h ^ word) + GAMMA)``.
    Integers wrap modulo ``2**64`` (a signed row id by its int64 bits).

    Args:
        seed: The seed (any integer, taken modulo ``2**64``).
        stream: The stream (any integer, modulo ``2**64``).
        row_ids: Integer row ids (any shape; a signed id by its int64 bits).
        lane: A sub-stream of ``stream`` (default 0).

    Returns:
        A float64 array of the shape of ``row_ids``, every value in (0, 1).

    Raises:
        ValueError: If an argument is not an integer or ``row_ids`` not an integer array.
    """
    k1, k2 = _keys(seed, stream, lane)
    x = _row_words(row_ids)
    x *= _GAMMA_U
    x += k1
    x = _mix64(x)
    x ^= k2
    x = _mix64(x)
    return ((x >> _S12).astype(np.float64) + 0.5) * _TWO_M52


def _check_scale(scale: float, name: str) -> float:
    """A noise scale as a positive finite float.

    Args:
        scale: The value.
        name: Its name, for the error.

    Returns:
        ``float(scale)``.

    Raises:
        ValueError: If it is not a positive finite number.
    """
    value = float(scale)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be a positive finite number, got {scale!r}")
    return value


def uniform_noise(key: RunKey, stream: int, counters: np.ndarray, a: float) -> np.ndarray:
    """Uniform noise on ``[-a, a]``: ``a * (2u - 1)`` with ``u`` the key's uniform on lane 0.

    Args:
        key: The run's secret key.
        stream: The attribute's stream.
        counters: Integer row counters (the rows' internal ids).
        a: The half-width (positive).

    Returns:
        A float64 array of the shape of ``counters`` (values in ``[-a, a]``).

    Raises:
        ValueError: On a non-positive or non-finite ``a``, a bad stream or non-integer
            counters.
    """
    a = _check_scale(a, "a")
    return a * (2.0 * key.uniforms(stream, counters, lane=0) - 1.0)


def gaussian_noise(key: RunKey, stream: int, counters: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian noise N(0, sigma^2) by Box and Muller 1958 from lanes 1 and 2 of the stream.

    ``sigma * sqrt(-2 ln u1) * cos(2 pi u2)`` with ``u1``, ``u2`` the key's uniforms of the
    row on lanes 1 and 2 of ``stream`` (draws are within 8.57 sigma of 0).

    Args:
        key: The run's secret key.
        stream: The attribute's stream.
        counters: Integer row counters (the rows' internal ids).
        sigma: The standard deviation (positive).

    Returns:
        A float64 array of the shape of ``counters``.

    Raises:
        ValueError: On a non-positive or non-finite ``sigma``, a bad stream or non-integer
            counters.
    """
    sigma = _check_scale(sigma, "sigma")
    u1 = key.uniforms(stream, counters, lane=1)
    u2 = key.uniforms(stream, counters, lane=2)
    return sigma * np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


_erfc = np.frompyfunc(math.erfc, 1, 1)


def _std_normal_sf(z: np.ndarray) -> np.ndarray:
    """The standard normal survival function ``P(Z > z) = erfc(z / sqrt 2) / 2``.

    Uses the C library's ``erfc`` element by element (exact to the last bits, also in the
    far tails; about 0.15 s per million values).

    Args:
        z: A float array.

    Returns:
        A float64 array of its shape.
    """
    z = np.asarray(z, dtype=np.float64)
    return 0.5 * np.asarray(_erfc(z / math.sqrt(2.0)), dtype=np.float64)


def _check_confidence(confidence: float) -> float:
    """A confidence level as a float in the open interval (0, 1).

    Args:
        confidence: The value.

    Returns:
        ``float(confidence)``.

    Raises:
        ValueError: If it is not in (0, 1).
    """
    value = float(confidence)
    if not 0.0 < value < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return value


@dataclass(frozen=True)
class NoiseSpec:
    """The published distribution of the additive noise ``Y`` of one attribute.

    Attributes:
        distribution: ``"uniform"`` (on ``[-scale, scale]``) or ``"gaussian"``
            (N(0, scale^2)).
        scale: ``a`` for uniform, ``sigma`` for Gaussian (positive, finite).
    """

    distribution: Literal["uniform", "gaussian"]
    scale: float

    def __post_init__(self) -> None:
        """Validate the fields.

        Raises:
            ValueError: On an unknown distribution or a non-positive scale.
        """
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(
                f"distribution must be one of {', '.join(DISTRIBUTIONS)}, got {self.distribution!r}"
            )
        object.__setattr__(self, "scale", _check_scale(self.scale, "scale"))

    def sample(self, key: RunKey, stream: int, counters: np.ndarray) -> np.ndarray:
        """The noise of each row (:func:`uniform_noise` or :func:`gaussian_noise`).

        Args:
            key: The run's secret key.
            stream: The attribute's stream.
            counters: Integer row counters.

        Returns:
            A float64 array of the shape of ``counters``.
        """
        if self.distribution == "uniform":
            return uniform_noise(key, stream, counters, self.scale)
        return gaussian_noise(key, stream, counters, self.scale)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """``P(Y <= x)`` at each value (float64, the shape of ``x``; NaN stays NaN)."""
        x = np.asarray(x, dtype=np.float64)
        if self.distribution == "uniform":
            a = self.scale
            return np.clip((x + a) / (2.0 * a), 0.0, 1.0)
        return _std_normal_sf(-x / self.scale)

    def pdf(self, x: np.ndarray) -> np.ndarray:
        """The density of ``Y`` at each value (uniform: ``1/(2a)`` on closed ``[-a, a]``)."""
        x = np.asarray(x, dtype=np.float64)
        if self.distribution == "uniform":
            a = self.scale
            inside = np.abs(x) <= a
            return np.where(inside, 1.0 / (2.0 * a), np.where(np.isnan(x), np.nan, 0.0))
        t = x / self.scale
        return np.exp(-0.5 * t * t) / (self.scale * math.sqrt(2.0 * math.pi))

    @property
    def mean(self) -> float:
        """The noise's mean: 0 (both distributions are centred)."""
        return 0.0

    @property
    def variance(self) -> float:
        """The noise's variance: ``a^2 / 3`` (uniform) or ``sigma^2`` (Gaussian)."""
        if self.distribution == "uniform":
            return self.scale * self.scale / 3.0
        return self.scale * self.scale

    def interval_probability(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """``P(lo <= Y < hi)``, vectorized and broadcast; 0 where ``hi <= lo``.

        The distributions are continuous, so the closedness of the ends does not matter.
        For the Gaussian an interval wholly at or above 0 is computed from the survival
        function, ``sf(lo) - sf(hi)``, so tail intervals keep their relative precision
        (``cdf(hi) - cdf(lo)`` would round them to 0). Infinite ends are allowed.

        Args:
            lo: Lower ends.
            hi: Upper ends (broadcast against ``lo``).

        Returns:
            A float64 array of the broadcast shape, every value in [0, 1] (NaN for NaN ends).
        """
        lo, hi = np.broadcast_arrays(
            np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        )
        if self.distribution == "uniform":
            p = self.cdf(hi) - self.cdf(lo)
        else:
            upper = lo >= 0.0
            # Mirror the upper intervals: P(lo <= Y < hi) = P(-hi < Y <= -lo) for symmetric Y.
            a = np.where(upper, -hi, lo) / self.scale
            b = np.where(upper, -lo, hi) / self.scale
            p = _std_normal_sf(-b) - _std_normal_sf(-a)
        return np.where(hi > lo, np.clip(p, 0.0, 1.0), np.where(np.isnan(p), np.nan, 0.0))

    def privacy_width(self, confidence: float = 0.95) -> float:
        """Agrawal and Srikant's 2000 privacy (Table 1): the interval width at a confidence.

        The width of the interval that holds the original value with probability
        ``confidence`` given the perturbed one: ``2a * c`` for uniform noise (1.9a at 95%),
        ``2 z_{(1+c)/2} sigma`` for Gaussian noise (3.92 sigma at 95%).

        Args:
            confidence: ``c`` in (0, 1).

        Returns:
            The width (in the attribute's units).

        Raises:
            ValueError: If ``confidence`` is not in (0, 1).
        """
        c = _check_confidence(confidence)
        if self.distribution == "uniform":
            return 2.0 * self.scale * c
        return 2.0 * NormalDist().inv_cdf((1.0 + c) / 2.0) * self.scale


def coarse_range(low: float, high: float) -> tuple[float, float]:
    """The range ``[low, high]`` rounded outward to a power-of-ten grid.

    The grid step is the largest power of ten not above the range's width
    (``10 ** floor(log10(high - low))``): ``[36.5, 73]`` -> ``[30, 80]``, ``[17, 90]`` ->
    ``[10, 90]``. A noise scale set as a share of the range is a share of this one, so
    ``noise.json`` (the scale, the privacy width and its share) states no exact input
    extreme, only the grid cells they lie in; the coarse range is at most three times
    the exact one wide, so the noise is at most that much larger than asked.
    A width of 0 (one value) is returned as it is.
    """
    low, high = float(low), float(high)
    width = high - low
    if not (math.isfinite(width) and width > 0.0):
        return low, high
    step = 10.0 ** math.floor(math.log10(width))

    def on_grid(cells: float) -> float:
        return float(f"{cells * step:.12g}")

    return on_grid(math.floor(low / step)), on_grid(math.ceil(high / step))


def scale_for_privacy(
    distribution: str, privacy: float, value_range: float, confidence: float = 0.95
) -> float:
    """The ``a`` or ``sigma`` whose :meth:`NoiseSpec.privacy_width` is ``privacy * value_range``.

    Agrawal and Srikant 2000 state privacy as a share of the attribute's range ("50%
    privacy" at 95% confidence: the 95% interval is half the range wide), so uniform noise
    gets ``a = privacy * range / (2c)`` and Gaussian noise
    ``sigma = privacy * range / (2 z_{(1+c)/2})``. Shares above 1 are allowed (the paper
    goes to 200%).

    Args:
        distribution: ``"uniform"`` or ``"gaussian"``.
        privacy: The share of the range (0.5 for "50%"), positive.
        value_range: The attribute's range (max - min), positive.
        confidence: The confidence in (0, 1).

    Returns:
        The scale of the noise.

    Raises:
        ValueError: On an unknown distribution, ``privacy <= 0``, ``value_range <= 0``
            (or either not finite), or a confidence outside (0, 1).
    """
    privacy = float(privacy)
    value_range = float(value_range)
    if not math.isfinite(privacy) or privacy <= 0.0:
        raise ValueError(f"privacy must be a positive share of the range, got {privacy!r}")
    if not math.isfinite(value_range) or value_range <= 0.0:
        raise ValueError(f"value_range must be positive and finite, got {value_range!r}")
    unit = NoiseSpec(distribution, 1.0).privacy_width(confidence)  # type: ignore[arg-type]
    return privacy * value_range / unit
