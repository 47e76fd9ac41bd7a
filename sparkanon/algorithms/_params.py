"""Each algorithm's parameters: a frozen pydantic model the algorithm owns.

The job config's ``algorithm`` section is a union of these, told apart by ``name``
(:func:`sparkanon.algorithms.algorithm_config`); each class validates its own
parameters (scikit-learn's ``_parameter_constraints`` in spirit), so a parameter of
another algorithm is an unknown key.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from sparkanon.models.base import Float


class AlgorithmParams(BaseModel):
    """Parameters every algorithm takes.

    Attributes:
        name: the algorithm (``algorithm.name``).
        entropy_base: logarithm base of the level entropy (Shi et al. 2024, eq. 1; the
            paper's "lg" is base 10), used by MAA-SLIE's PSI and by the EPP metric.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    entropy_base: Annotated[Float, Field(gt=1)] = 10.0
