"""An example family: every row published with its quasi-identifiers replaced by ``*``.

Its folder is what a new family adds: the family class (:mod:`.family`) and its
algorithms' folder (:mod:`.algorithms`); :func:`register` is its one registry line.
"""

from __future__ import annotations

from sparkanon import families
from tests.families.example.algorithms import ALGORITHMS
from tests.families.example.family import StarFamily

FAMILY = StarFamily()
"""The family, as registered."""


def register() -> None:
    """Add the family and its algorithm to the registries."""
    families.register(FAMILY, ALGORITHMS)


def unregister() -> None:
    """Remove them again."""
    families.unregister(FAMILY)
