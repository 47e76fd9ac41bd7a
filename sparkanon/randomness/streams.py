"""The streams of the run key: one range per purpose, so no two purposes share draws.

A draw is ``RunKey.uniforms(stream, counter, lane)``; two purposes that used the same
stream and counters would draw the same numbers (a perturbed column's noise would then
tell an attacker another column's). Each purpose takes its stream from here.
"""

PERTURBATION = 1 << 20
"""Additive noise and randomized response: ``PERTURBATION + the attribute's position``."""
SYNTHESIS = 2 << 20
"""Condensation's synthetic records (static and streaming): ``SYNTHESIS + a sub-purpose``."""
RELEASE_ORDER = 3 << 20
"""The keyed order in which a release's rows are written."""
RELEASE_IDS = (3 << 20) + 1
"""Random per-release ids (the groups joining a relational-transaction release's tables)."""
