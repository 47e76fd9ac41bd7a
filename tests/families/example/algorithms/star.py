"""``star``: every quasi-identifier replaced by the constant ``*`` (full suppression of values).

Every published row then falls in one equivalence class, so the release is k-anonymous
for any ``k`` up to the number of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.engine.expr import Expr, Lit, Text

STAR = "*"
"""What every published quasi-identifier holds."""


class StarParams(AlgorithmParams):
    """The parameters of ``star``: its name only."""

    name: Literal["star"] = "star"


def star_columns(quasi_identifiers: Sequence[str]) -> dict[str, Expr]:
    """Each quasi-identifier's published value: the constant :data:`STAR`."""
    return {name: Text((STAR,), Lit(0)) for name in quasi_identifiers}
