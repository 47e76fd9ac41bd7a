"""Parameters of static condensation (``algorithm.name: condensation``).

Aggarwal 2015, section 20.3.1.4; Aggarwal and Yu 2004. The records are grouped per block
by MDAV (groups of ``k`` to ``2k - 1`` records, ``k`` from the model); each group is
released as synthetic records drawn from its mean and covariance.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.models.base import Float


class CondensationParams(AlgorithmParams):
    """Static condensation: synthetic records from per-group first and second order sums.

    Attributes:
        name: ``condensation``.
        alpha: synthetic records per group as a multiple of ``k`` (``round(alpha * k)``,
            at least 1); unset, a group gets as many synthetic records as it has records
            (Aggarwal and Yu 2004's default).
        significance: the chance, per covariance entry of a group, that verification's
            covariance bound fails for a correct release (the bound is
            :func:`~sparkanon.algorithms.condensation.synthesize.covariance_tolerance`);
            a failure fails the release.
        dominance_p: the ``p`` of the p% dominance rule (percent): before condensing, a
            group whose sum or sum of squares of a non-negative attribute has the records
            other than its two largest contribute less than ``p`` percent of the largest
            is merged with its nearest group
            (:mod:`~sparkanon.algorithms.condensation.dominance`).
    """

    name: Literal["condensation"] = "condensation"
    alpha: Annotated[Float, Field(gt=0.0)] | None = None
    significance: Annotated[Float, Field(gt=0.0, lt=0.5)] = 1e-9
    dominance_p: Annotated[Float, Field(gt=0.0, le=100.0)] = 10.0

    def synthetic_count(self, group_rows: int, k: int) -> int:
        """How many synthetic records a group of ``group_rows`` records releases."""
        if self.alpha is None:
            return int(group_rows)
        return max(1, round(self.alpha * k))
