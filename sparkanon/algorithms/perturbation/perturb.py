"""Perturb one batch of rows: additive noise and randomized response, keyed by row id.

The noise of a row depends only on the job's seed, the column's stream (its position in
``algorithm.columns``) and the row's id (a counter-based generator,
:func:`~sparkanon.algorithms.perturbation.noise.counter_uniforms`), so a batch gives the
same values however the engine splits or retries it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sparkanon.algorithms.perturbation.noise import NoiseSpec
from sparkanon.algorithms.perturbation.randomized_response import randomize


@dataclass(frozen=True)
class ColumnNoise:
    """How one column of a batch is perturbed.

    Attributes:
        column: the column of the batch (numeric values, or integer codes).
        stream: the column's noise stream (its index in ``algorithm.columns``).
        additive: the additive noise of a numeric column (``None`` for a categorical one).
        matrix: the transition matrix of a categorical column's codes (row ``i``: the
            distribution of the published code given code ``i``).
    """

    column: str
    stream: int
    additive: NoiseSpec | None = None
    matrix: np.ndarray | None = None


def perturb_frame(
    frame: pd.DataFrame, row_ids: np.ndarray, noises: Sequence[ColumnNoise], seed: int
) -> pd.DataFrame:
    """The batch with every column of ``noises`` perturbed (the others unchanged).

    Args:
        frame: the rows.
        row_ids: each row's id (int64), in ``frame``'s order.
        noises: the columns to perturb.
        seed: the job's seed.

    Returns:
        A new frame: numeric columns as float64 plus their noise, categorical codes
        replaced by a draw from their row of the matrix.
    """
    out = frame.copy()
    ids = np.asarray(row_ids, dtype=np.int64)
    for spec in noises:
        values = frame[spec.column].to_numpy()
        if spec.additive is not None:
            out[spec.column] = values.astype(np.float64) + spec.additive.sample(
                seed, spec.stream, ids
            )
        else:
            assert spec.matrix is not None
            codes = values.astype(np.int64)
            out[spec.column] = randomize(codes, spec.matrix, seed, spec.stream, ids)
    return out
