"""Attack 2: solve a condensed release's group statistics and read a dominant record off them.

Static condensation publishes, per group of at least ``k`` records, synthetic records whose
mean is the group's. Where a published column names the group, the attacker has each
group's size ``n`` and exact mean, so its exact total ``n * mean``; in a group where one
member alone has a non-zero value of a column (a capital gain), that total *is* that
member's value. A group is *disclosed* when, in some column, its total is not zero and is
exactly (within ``1e-6`` relative) the value of one input record that no other input
record shares: a record singled out by its own value.

Chance: the same attack after the group labels are shuffled across the published records
(sizes kept): totals of records that do not belong together, which match a rare input
value only by coincidence. Without a column that groups the records the attack has no
group to solve and reports 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.attacks.release import Outcome, Release, integer_columns

RELATIVE = 1e-6


def _disclosed(table: pd.DataFrame, labels: np.ndarray, columns: list[str], rare: dict) -> int:
    frame = table[columns].apply(pd.to_numeric, errors="coerce").assign(_g=labels)
    totals = frame.groupby("_g")[columns].sum()
    hit = np.zeros(len(totals), dtype=bool)
    for column in columns:
        known = rare[column]
        if not len(known):
            continue
        values = totals[column].to_numpy(dtype=float)
        where = np.clip(np.searchsorted(known, values), 0, len(known) - 1)
        near = np.minimum(
            np.abs(known[where] - values), np.abs(known[np.maximum(where - 1, 0)] - values)
        )
        hit |= (values != 0) & (near <= RELATIVE * np.maximum(np.abs(values), 1.0))
    return int(hit.sum())


def group_column(table: pd.DataFrame, numeric: list[str]) -> str | None:
    """The published column that groups the records: a whole-number one not condensed."""
    for column in integer_columns(table):
        if column not in numeric and 1 < table[column].nunique() < len(table):
            return column
    return None


def attack(release: Release, original: pd.DataFrame, numeric: list[str]) -> Outcome:
    """The share of published groups that give a record away, and its chance level.

    Args:
        release: the condensed release.
        original: the input rows (to know which values are a single record's).
        numeric: the condensed numeric columns.
    """
    table = release.table()
    rare = {}
    for column in numeric:
        counts = pd.to_numeric(original[column], errors="coerce").value_counts()
        rare[column] = np.sort(counts[(counts == 1) & (counts.index != 0)].index.to_numpy(float))
    key = group_column(table, numeric)
    if key is None:
        return Outcome(0.0, 0.0, 0)
    labels = table[key].to_numpy()
    groups = len(np.unique(labels))
    rate = _disclosed(table, labels, numeric, rare) / groups
    shuffled = np.random.default_rng(0).permutation(labels)
    chance = _disclosed(table, shuffled, numeric, rare) / groups
    return Outcome(rate, chance, groups)
