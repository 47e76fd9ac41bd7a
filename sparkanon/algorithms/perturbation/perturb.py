"""Perturb one batch of rows: additive noise and randomized response from the run key.

The noise of a row depends only on the run's secret key, the column's stream
(:data:`~sparkanon.randomness.streams.PERTURBATION` plus the attribute's position) and the
row's counter (its internal id; :meth:`~sparkanon.randomness.RunKey.uniforms` is
counter-based), so a batch gives the same values however the engine splits or retries it,
and nobody without the key can recompute them. The job's ``seed`` plays no part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sparkanon.algorithms.perturbation.noise import NoiseSpec
from sparkanon.algorithms.perturbation.randomized_response import randomize

if TYPE_CHECKING:
    from sparkanon.randomness import RunKey


@dataclass(frozen=True)
class ColumnNoise:
    """How one column of a batch is perturbed.

    Attributes:
        column: the column of the batch (numeric values, or integer codes).
        stream: the column's stream of the run key (``PERTURBATION`` plus the attribute's
            position).
        additive: the additive noise of a numeric column (``None`` for a categorical one).
        matrix: the transition matrix of a categorical column's codes (row ``i``: the
            distribution of the published code given code ``i``).
    """

    column: str
    stream: int
    additive: NoiseSpec | None = None
    matrix: np.ndarray | None = None


def perturb_frame(
    frame: pd.DataFrame, row_ids: np.ndarray, noises: Sequence[ColumnNoise], key: RunKey
) -> pd.DataFrame:
    """The batch with every column of ``noises`` perturbed (the others unchanged).

    Args:
        frame: the rows.
        row_ids: each row's internal id (int64, the draws' counter), in ``frame``'s order.
        noises: the columns to perturb.
        key: the run's secret key.

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
                key, spec.stream, ids
            )
        else:
            assert spec.matrix is not None
            codes = values.astype(np.int64)
            out[spec.column] = randomize(codes, spec.matrix, key, spec.stream, ids)
    return out
