"""The largest class level entropy (HEC, Shi et al. 2024, eq. 2) any class can reach, against lb H.

Shi et al. 2024's step 13 (section 3.2) asks the class's sensitivity-level entropy to exceed
``lb H`` (``log2 H``). HEC is ``sum_i w_i (-p_i lg p_i)`` over the levels, ``p_i`` the share
of level ``i`` in the class, ``w_i`` the level weights, ``lg`` the config's
``algorithm.entropy_base`` (10, the seed's). Its maximum over all distributions ``p``
solves ``w_i (-lg p_i - 1 / ln b) = lambda`` with ``sum p_i = 1`` (Lagrange; HEC is
concave), found here by bisection on ``lambda``.

Usage::

    python scripts/hec_bound.py [--config conf/adult_hpk.yaml]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import yaml


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
    return float((weights * -p * np.log(p) / math.log(base)).sum()), p


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("conf/adult_hpk.yaml"))
    args = parser.parse_args(argv)
    raw = yaml.safe_load(args.config.read_text())
    weights = np.array([float(lv["weight"]) for lv in raw["sensitive"]["levels"]])
    base = float(raw.get("algorithm", {}).get("entropy_base", 10.0))
    best, p = max_hec(weights, base)
    print(f"level weights {weights.tolist()}, entropy base {base:g}")
    print(f"largest HEC {best:.4f} at level shares {np.round(p, 4).tolist()}")
    for h in range(2, len(weights) + 1):
        print(f"lb H for H = {h}: {math.log2(h):.4f} (HEC > lb H possible: {best > math.log2(h)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
