"""The generator perturbation used before the run key, rebuilt from its public description.

The module docstring of ``sparkanon/algorithms/perturbation/noise.py`` before issue 38
specified every draw: round keys from ``(seed, stream, lane)`` chained with splitmix64's
output function, ``u = (top52(mix64(mix64(k1 + row_id * GAMMA) ^ k2)) + 0.5) / 2**52``,
uniform noise ``a (2u - 1)`` on lane 0, Gaussian noise by Box-Muller from lanes 1 and 2,
randomized response as the smallest ``j`` with ``u < cumsum(P[code])[j]`` on lane 0. An
attacker needs nothing else; this is that rebuild (no sparkanon import).
"""

from __future__ import annotations

import numpy as np

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix64(z: int) -> int:
    """splitmix64's output function in plain Python ints."""
    z &= MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _mix_array(z: np.ndarray) -> np.ndarray:
    z = z ^ (z >> np.uint64(30))
    z = z * np.uint64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> np.uint64(27))
    z = z * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniforms(seed: int, stream: int, ids: np.ndarray, lane: int = 0) -> np.ndarray:
    """The counter uniform of each row id."""
    h = 0
    for word in (seed & MASK, stream & MASK, lane & MASK):
        h = mix64(((h ^ word) + GAMMA) & MASK)
    k1, k2 = mix64((h ^ 1) + GAMMA), mix64((h ^ 2) + GAMMA)
    x = np.asarray(ids, dtype=np.int64).view(np.uint64).copy()
    with np.errstate(over="ignore"):
        x = x * np.uint64(GAMMA) + np.uint64(k1)
        x = _mix_array(_mix_array(x) ^ np.uint64(k2))
    return ((x >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0**-52


def noise(seed: int, stream: int, ids: np.ndarray, distribution: str, scale: float) -> np.ndarray:
    """The additive noise of each row id (``uniform``: half-width; ``gaussian``: sigma)."""
    if distribution == "uniform":
        return scale * (2.0 * uniforms(seed, stream, ids, 0) - 1.0)
    u1, u2 = uniforms(seed, stream, ids, 1), uniforms(seed, stream, ids, 2)
    return scale * np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def randomized(codes: np.ndarray, matrix: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The published code of each true code under the row's uniform ``u``."""
    cumulative = np.cumsum(np.asarray(matrix, dtype=float), axis=1)
    picked = (u[:, None] >= cumulative[np.asarray(codes, dtype=np.int64)]).sum(axis=1)
    return np.minimum(picked, cumulative.shape[1] - 1)
