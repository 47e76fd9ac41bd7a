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
SYNTHESIS_AXES = SYNTHESIS
"""Static condensation's coordinates along a group's eigen-axes (counter: the group id)."""
SYNTHESIS_CATEGORIES = SYNTHESIS + 1
"""Static condensation's categorical and sensitive draws (counter: the group id)."""
SYNTHESIS_STREAM_AXES = SYNTHESIS + 2
"""The condensation stream's coordinates along a group's eigen-axes (counter: the group id)."""
SYNTHESIS_ORDER = SYNTHESIS + 3
"""The keyed order of a block's synthetic records (counter: the group id, lane: the record)."""
SYNTHESIS_STREAM_ORDER = SYNTHESIS + 4
"""The keyed order of a stream release's records (counter: the group id, lane: the record)."""
