"""R's default random numbers (Mersenne-Twister, ``set.seed`` scrambling) for test fixtures.

sdcMicro's tests build some fixtures with ``set.seed(3); runif(...)``. R seeds its
Mersenne-Twister with a linear congruential scramble of the seed (``RNG_Init`` in R's
``src/main/RNG.c``) and draws ``unif_rand() = genrand_int32() * 2^-32``; CPython's
``random.Random`` is the same generator, so its state can be set to R's and
``getrandbits(32)`` gives R's 32-bit draws.
"""

from __future__ import annotations

import random


def r_generator(seed: int) -> random.Random:
    """A generator in the state R's ``set.seed(seed)`` leaves the Mersenne-Twister in."""
    s = seed & 0xFFFFFFFF
    for _ in range(50):
        s = (69069 * s + 1) & 0xFFFFFFFF
    words = []
    for _ in range(625):
        s = (69069 * s + 1) & 0xFFFFFFFF
        words.append(s)
    gen = random.Random()
    gen.setstate((3, (*words[1:], 624), None))  # words[0] is R's position word, set to 624
    return gen


def runif(gen: random.Random, n: int, low: float = 0.0, high: float = 1.0) -> list[float]:
    """R's ``runif(n, low, high)``."""
    return [low + (high - low) * (gen.getrandbits(32) * 2.3283064365386963e-10) for _ in range(n)]
