"""Attack 3: difference two successive releases of a streamed group.

Dynamic condensation releases, each time a group is due, as many synthetic records as it
has new members, with the group's mean over all its members so far. Where the records
carry their group, the attacker has after releases 1 and 2 of a group its sizes
``n1 = r1`` and ``n2 = r1 + r2`` (``r`` the records released each time) and its means
``m1``, ``m2``; ``n2 m2 - n1 m1`` is the sum of the new members, a member itself when one
joined. A derived record is *recovered* when it equals an input record in every
condensed column (within ``1e-6`` relative).

Chance: the same differencing after the group labels are shuffled within each release.
Without a column that groups the records there is nothing to difference: 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tests.attacks.condensation_groups import group_column
from tests.attacks.release import Outcome

RELATIVE = 1e-6


def _derived(releases: Sequence[pd.DataFrame], key: str, columns: list[str]) -> np.ndarray:
    """``n2 m2 - n1 m1`` of every group released again with one new record."""
    seen: dict[object, tuple[int, np.ndarray]] = {}
    out = []
    for frame in releases:
        means = frame.groupby(key)[columns].mean()
        sizes = frame.groupby(key).size()
        for group, count in sizes.items():
            mean = means.loc[group].to_numpy(dtype=float)
            n1, mean1 = seen.get(group, (0, np.zeros(len(columns))))
            n2 = n1 + int(count)
            if n1 and n2 - n1 == 1:
                out.append(n2 * mean - n1 * mean1)
            seen[group] = (n2, mean)
    return np.array(out).reshape(-1, len(columns))


def _recovered(derived: np.ndarray, original: np.ndarray) -> int:
    if not len(derived):
        return 0
    hits = 0
    for row in derived:
        close = np.abs(original - row) <= RELATIVE * np.maximum(np.abs(row), 1.0)
        hits += bool(close.all(axis=1).any())
    return hits


def attack(releases: Sequence[pd.DataFrame], original: pd.DataFrame, columns: list[str]) -> Outcome:
    """The share of differenced records that are input records, and its chance level.

    Args:
        releases: the stream's successive outputs, in order.
        original: every input record (to score the attack).
        columns: the condensed numeric columns.
    """
    key = next((group_column(r, columns) for r in releases if len(r)), None)
    if key is None:
        return Outcome(0.0, 0.0, 0)
    values = original[columns].to_numpy(dtype=float)
    derived = _derived(releases, key, columns)
    rng = np.random.default_rng(0)
    shuffled = [r.assign(**{key: rng.permutation(r[key].to_numpy())}) for r in releases]
    wrong = _derived(shuffled, key, columns)
    rate = _recovered(derived, values) / max(len(derived), 1)
    chance = _recovered(wrong, values) / max(len(wrong), 1)
    return Outcome(rate, chance, len(derived))
