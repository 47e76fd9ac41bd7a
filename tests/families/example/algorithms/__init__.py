"""The example family's one algorithm, ``star``, as the algorithm registry holds it."""

from __future__ import annotations

from sparkanon.algorithms import Registered
from tests.families.example.algorithms.star import StarParams, star_columns

ALGORITHMS = {"star": Registered("example_star", StarParams, star_columns)}
"""The family's algorithms by config name (``algorithm.name``)."""
