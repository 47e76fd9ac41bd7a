"""Attack 5: the published order against the input's order.

If row ``i`` of a release comes from input row ``i`` (or the rows keep the input's
relative order), an attacker who knows the input's order (a register, a shared extract)
links every row. Scored on a column the release publishes unchanged: the share of rows
``i`` whose value equals input row ``i``'s, and Spearman's rank correlation between each
whole-number published column and the row position.

Chance: the agreement of that column between rows paired at random (``sum_v p(v) q(v)``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.attacks.release import Outcome, agreement, integer_columns


def rank_correlations(table: pd.DataFrame) -> dict[str, float]:
    """Spearman's rho of each whole-number column with the row position."""
    position = pd.Series(np.arange(len(table)), dtype=float)
    out = {}
    for column in integer_columns(table):
        values = pd.to_numeric(table[column]).reset_index(drop=True)
        if values.nunique() > 1:
            out[column] = float(values.rank().corr(position.rank()))
    return out


def attack(table: pd.DataFrame, original: pd.DataFrame, scored: str) -> Outcome:
    """The share of rows that agree with the input row at their position on ``scored``.

    Args:
        table: the release's table, rows in file order.
        original: the input rows in input order (what the attacker is assumed to know).
        scored: a column the release publishes unchanged.
    """
    rate, chance = agreement(table[scored], original[scored])
    return Outcome(rate, chance, min(len(table), len(original)))
