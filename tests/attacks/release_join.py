"""Attack 4: join two releases of the same input, by row position and by any id column.

Two releases of one input (a rerun, another k, another algorithm) each hide a record in
a group; an attacker who can pair a row of one with its row in the other intersects the
two groups. The pairing works if the rows are written in the same order (join by
position) or carry a shared id (join on a whole-number column both publish). Scored on
a column both releases publish unchanged (the sensitive value): the share of paired rows
that agree on it.

Chance: the agreement of that column between rows paired at random (``sum_v p(v) q(v)``).
"""

from __future__ import annotations

import pandas as pd

from tests.attacks.release import Outcome, agreement, integer_columns


def attack(first: pd.DataFrame, second: pd.DataFrame, scored: str) -> Outcome:
    """The best pairing's agreement on ``scored`` and its chance level.

    Args:
        first: one release's table, rows in file order.
        second: another release of the same input.
        scored: a column both publish unchanged.
    """
    best = agreement(first[scored], second[scored])
    for column in set(integer_columns(first)) & set(integer_columns(second)):
        if column == scored or not first[column].is_unique or not second[column].is_unique:
            continue
        paired = first[[column, scored]].merge(second[[column, scored]], on=column)
        if len(paired) >= len(first) // 2:
            found = agreement(paired[f"{scored}_x"], paired[f"{scored}_y"])
            best = max(best, found, key=lambda x: x[0] - x[1])
    rate, chance = best
    return Outcome(rate, chance, min(len(first), len(second)))
