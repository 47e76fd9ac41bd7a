"""Parameters of the relational-transaction algorithms (``algorithm.name: apa | paa``).

They join the ``algorithm`` union of the job config
(:func:`sparkanon.algorithms.algorithm_config`) beside the micro-aggregation and
partitioning algorithms; the job's cross-checks make them go with a set-valued
sensitive attribute (``sensitive.kind: itemset``) and the ``kl_diversity`` model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class RTParams(BaseModel):
    """Parameters every relational-transaction algorithm takes.

    Attributes:
        name: the algorithm (``algorithm.name``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str


class ApaParams(RTParams):
    """APA: anatomize, partition, merge groups, decompose (Gong et al. 2016, Algorithm 1)."""

    name: Literal["apa"] = "apa"


class PaaParams(RTParams):
    """PAA: partition, then anatomize over the generalized sets (Gong et al. 2016, Algorithm 2)."""

    name: Literal["paa"] = "paa"
