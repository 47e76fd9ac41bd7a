"""The largest class level entropy HEC of the demo's levels, against lb H (docs/method.md).

Shi et al. 2024's step 13 (section 3.2) asks a class's level entropy HEC (eq. 2) to exceed
``lb H`` (``log2 H``). HEC is ``sum_i w_i (-p_i log_b p_i)``, concave in the level shares
``p``; its maximum over the simplex solves ``w_i (-log_b p_i - 1 / ln b) = lambda`` with
``sum p_i = 1`` (Lagrange), found here by bisection on ``lambda``. With the demo's level
weights (``conf/adult_hpk.yaml``: 0.1, 0.2, 0.4, 0.6, 0.8) and base 10 the maximum is
0.3076, below lb 2 = 1: read literally, step 13 admits no row, which is why
``docs/method.md`` (MAA-SLIE, step 13) reads the bound as the level count.
"""

from __future__ import annotations

import math

import numpy as np
import yaml

from sparkanon.metrics.entropy import class_level_entropy
from tests._inputs import ROOT

DEMO = ROOT / "conf" / "adult_hpk.yaml"


def max_hec(weights: np.ndarray, base: float) -> tuple[float, np.ndarray]:
    """The largest HEC over all level distributions, and the distribution reaching it."""

    def shares(lam: float) -> np.ndarray:
        return base ** (-(lam / weights) - 1.0 / math.log(base))

    lo, hi = -50.0, 50.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if shares(mid).sum() > 1 else (lo, mid)
    p = shares((lo + hi) / 2)
    p = p / p.sum()
    return float(class_level_entropy(p, weights, base)), p


def _demo_levels() -> tuple[np.ndarray, float]:
    raw = yaml.safe_load(DEMO.read_text(encoding="utf-8"))
    weights = np.array([float(level["weight"]) for level in raw["sensitive"]["levels"]])
    return weights, float(raw.get("algorithm", {}).get("entropy_base", 10.0))


def test_demo_levels_hec_at_most_0_3076_below_lb_2() -> None:
    weights, base = _demo_levels()
    best, p = max_hec(weights, base)
    assert weights.tolist() == [0.1, 0.2, 0.4, 0.6, 0.8] and base == 10.0
    assert round(best, 4) == 0.3076
    assert best < math.log2(2)
    assert abs(p.sum() - 1) < 1e-12 and (p > 0).all()


def test_no_level_distribution_beats_the_lagrange_maximum() -> None:
    """Random points of the simplex and every vertex stay at or below the bisection's HEC."""
    weights, base = _demo_levels()
    best, p = max_hec(weights, base)
    rng = np.random.default_rng(0)
    draws = rng.dirichlet(np.ones(len(weights)), size=20_000)
    near = np.clip(p + rng.normal(0, 1e-3, size=(2_000, len(weights))), 1e-12, None)
    near /= near.sum(axis=1, keepdims=True)
    values = class_level_entropy(np.vstack([draws, near, np.eye(len(weights))]), weights, base)
    assert values.max() <= best + 1e-12
    assert values.max() > best - 1e-3
