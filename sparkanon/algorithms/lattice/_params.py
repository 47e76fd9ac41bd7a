"""Parameters of full-domain generalization (``algorithm.name: samarati | incognito``).

They join the ``algorithm`` union of the job config
(:func:`sparkanon.algorithms.algorithm_config`); the job hands a config naming one of them
to :mod:`sparkanon.families.full_domain.family`, which searches the lattice of generalization levels
instead of clustering blocks.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from sparkanon.metrics.utility import OBJECTIVES
from sparkanon.models.base import Float, Int

LOSS_METRICS = tuple(OBJECTIVES)
"""The loss metrics a full-domain search can minimise (``algorithm.metric``)."""


class FullDomainParams(BaseModel):
    """Parameters both lattice searches take.

    Attributes:
        name: the algorithm.
        max_suppression: MaxSup, the largest share of the rows that may be suppressed
            (whole violating classes, Aggarwal 2015, section 20.3.1.1), in ``[0, 1)``.
        metric: the loss the published node minimises: ``height`` (sum of levels),
            ``precision`` (Sweeney's Prec: mean of level / height per attribute),
            ``discernibility`` (Bayardo and Agrawal's DM, a suppressed row costing the
            table's size) or ``ncp`` (mean normalised certainty penalty, a suppressed row
            costing 1 per attribute).
        batch_nodes: the most lattice nodes evaluated together in one distributed pass
            (each pass has a fixed cost of a few Spark stages; each node a cheap rollup).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    max_suppression: Annotated[Float, Field(ge=0.0, lt=1.0)] = 0.0
    metric: Literal[LOSS_METRICS] = "precision"  # type: ignore[valid-type]
    batch_nodes: Annotated[Int, Field(ge=1)] = 1024


class SamaratiParams(FullDomainParams):
    """Samarati's binary search on the lattice height (Aggarwal 2015, section 20.3.1.1)."""

    name: Literal["samarati"] = "samarati"


class IncognitoParams(FullDomainParams):
    """Incognito's level-wise search over attribute subsets (Aggarwal 2015, section 20.3.1.2)."""

    name: Literal["incognito"] = "incognito"
