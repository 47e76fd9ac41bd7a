"""Attack 1: regenerate a perturbed release's noise and subtract it.

Before issue 38 a perturbed value was ``original + noise(seed, stream, row id)`` with a
public generator (:mod:`tests.attacks.splitmix`), the seed in ``config.yaml`` and
``metrics.json``, the stream the column's place in ``algorithm.columns`` and the row id in
the ``record_id`` column. The attacker tries every published number as the seed and
every whole-number column and the row positions as the row ids; a row is *recovered*
when ``published - noise`` is an input value of that row's column (within ``1e-6``), or,
for randomized response, when only one true value would have published the published
one and it is the row's input value.

Chance: the same attack with row ids that cannot be the right ones (the candidate ids
shifted by ``10**9``): the share of rows that land on an input value by coincidence.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.attacks import splitmix
from tests.attacks.release import Outcome, Release, integer_columns

TOLERANCE = 1e-6
_WRONG = 10**9


def _candidate_ids(table: pd.DataFrame) -> dict[str, np.ndarray]:
    ids = {"row position": np.arange(len(table), dtype=np.int64)}
    for column in integer_columns(table):
        ids[column] = pd.to_numeric(table[column]).to_numpy(dtype=np.int64)
    return ids


def _nearest_gap(values: np.ndarray, known: np.ndarray) -> np.ndarray:
    """The distance of each value to the nearest of the sorted ``known`` values."""
    where = np.clip(np.searchsorted(known, values), 1, max(len(known) - 1, 1))
    below, above = known[where - 1], known[np.minimum(where, len(known) - 1)]
    return np.minimum(np.abs(values - below), np.abs(values - above))


def _recovered(
    table: pd.DataFrame,
    original: pd.DataFrame,
    inputs: dict[str, np.ndarray],
    columns: list[dict],
    declared: dict,
    seed: int,
    ids: np.ndarray,
) -> np.ndarray:
    """Per row: whether some perturbed column of it is given back exactly.

    A numeric column is given back when ``published - noise`` is an input value of the
    column (``inputs``: its sorted distinct values); a randomized one when one true value
    alone is consistent with the regenerated draw and it is the row's (``original``
    aligned with the table by the candidate id).
    """
    hit = np.zeros(len(table), dtype=bool)
    for stream, column in enumerate(columns):
        name = column["name"]
        spec = declared.get(name) or {}
        if name not in table or name not in original:
            continue
        truth = original[name].reindex(range(len(table))).to_numpy()
        if spec.get("distribution") in ("uniform", "gaussian"):
            drawn = splitmix.noise(seed, stream, ids, spec["distribution"], float(spec["scale"]))
            guess = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=float) - drawn
            if name in inputs:
                hit |= _nearest_gap(guess, inputs[name]) < TOLERANCE
        elif "transition_matrix" in spec:
            values = [str(v) for v in spec["values"]]
            matrix = np.asarray(spec["transition_matrix"], dtype=float)
            published = table[name].astype(str).map({v: i for i, v in enumerate(values)})
            u = splitmix.uniforms(seed, stream, ids, 0)
            consistent = (
                np.stack(
                    [
                        splitmix.randomized(np.full(len(u), c), matrix, u)
                        for c in range(len(values))
                    ],
                    axis=1,
                )
                == published.fillna(-1).to_numpy(dtype=np.int64)[:, None]
            )
            pinned = consistent.sum(axis=1) == 1
            guess = np.asarray(values, dtype=object)[consistent.argmax(axis=1)]
            hit |= pinned & (guess == pd.Series(truth).astype(str).to_numpy(dtype=object))
    return hit


def attack(release: Release, original: pd.DataFrame) -> Outcome:
    """The best rate over every seed and id candidate, and its chance level.

    Args:
        release: the perturbed release.
        original: the input rows in input order (to score the attack, not to run it:
            row ``r`` of it is the true record of published row id ``r``).

    Returns:
        The share of published rows with a perturbed value given back exactly.
    """
    table = release.table()
    columns = list((release.config().get("algorithm") or {}).get("columns") or [])
    declared = release.noise()
    inputs = {
        c: np.unique(pd.to_numeric(original[c], errors="coerce").dropna().to_numpy(dtype=float))
        for c in original.columns
        if pd.to_numeric(original[c], errors="coerce").notna().all()
    }
    best, chance = 0.0, 0.0
    for seed in release.seeds():
        for ids in _candidate_ids(table).values():
            in_range = (ids >= 0) & (ids < len(original))
            truth = original.iloc[np.where(in_range, ids, 0)].reset_index(drop=True)
            right = in_range & _recovered(table, truth, inputs, columns, declared, seed, ids)
            wrong = in_range & _recovered(
                table, truth, inputs, columns, declared, seed, ids + _WRONG
            )
            if right.mean() > best:
                best, chance = float(right.mean()), float(wrong.mean())
            chance = max(chance, float(wrong.mean()))
    return Outcome(best, chance, len(table))
