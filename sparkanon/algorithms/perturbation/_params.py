"""Parameters of the perturbation family (``algorithm.name: perturb``).

Each entry of ``algorithm.columns`` perturbs one attribute of the input (Aggarwal 2015,
section 20.2; Agrawal and Srikant 2000):

* a numeric attribute (``kind: continuous``) gets additive noise, ``noise: uniform`` on
  ``[-a, a]`` or ``noise: gaussian`` with standard deviation ``sigma``, its scale given by
  exactly one of ``scale`` (``a`` or ``sigma`` in the column's unit), ``scale_share`` (a
  share of the column's range over the input) or ``privacy`` (Agrawal and Srikant's
  privacy level: the width of the interval that holds the original value with
  ``confidence``, as a share of the range; ``privacy: 0.5`` is their "50% privacy");
* a categorical attribute (``kind: nominal``, ``categorical`` or ``ordinal``) gets
  randomized response (``noise: randomized_response``, post-randomization over its
  values) with exactly one of ``retention`` (the probability a value is published as
  itself) or ``epsilon`` (the local differential privacy the transition matrix gives).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sparkanon.models.base import Float

NUMERIC_NOISE = ("uniform", "gaussian")
"""The additive noise distributions of a numeric attribute."""
CATEGORICAL_NOISE = ("randomized_response",)
"""The perturbations of a categorical attribute."""

_NUMERIC_SCALES = ("scale", "scale_share", "privacy")
_CATEGORICAL_SCALES = ("retention", "epsilon")


class PerturbColumn(BaseModel):
    """How one attribute is perturbed (one entry of ``algorithm.columns``).

    Attributes:
        name: the attribute (a column listed under ``attributes``).
        noise: ``uniform``, ``gaussian`` or ``randomized_response``.
        scale: the noise's ``a`` (uniform on ``[-a, a]``) or ``sigma`` (gaussian).
        scale_share: the same as a share of the column's range.
        privacy: Agrawal and Srikant's privacy level, as a share of the range.
        bounds: the column's range ``[low, high]`` as declared (e.g. ``[0, 120]`` for
            ages; days since 1970-01-01 for a date, epoch seconds for a timestamp), for
            ``scale_share`` and ``privacy``; unset: the input's range rounded
            outward to a power-of-ten grid (:func:`.noise.coarse_range`), so the published
            scale does not give away the input's exact minimum and maximum.
        retention: randomized response: the probability a value is published as itself.
        epsilon: randomized response: the local differential privacy to give.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    noise: Literal["uniform", "gaussian", "randomized_response"]
    scale: Annotated[Float, Field(gt=0.0)] | None = None
    scale_share: Annotated[Float, Field(gt=0.0)] | None = None
    privacy: Annotated[Float, Field(gt=0.0)] | None = None
    retention: Annotated[Float, Field(gt=0.0, le=1.0)] | None = None
    epsilon: Annotated[Float, Field(gt=0.0)] | None = None
    bounds: tuple[Float, Float] | None = None

    @property
    def numeric(self) -> bool:
        """Whether the column gets additive noise (else randomized response)."""
        return self.noise in NUMERIC_NOISE

    @model_validator(mode="after")
    def _one_scale(self) -> PerturbColumn:
        own, other = (
            (_NUMERIC_SCALES, _CATEGORICAL_SCALES)
            if self.numeric
            else (_CATEGORICAL_SCALES, _NUMERIC_SCALES)
        )
        if self.bounds is not None and not self.numeric:
            raise ValueError(
                f"bounds: not a setting of noise: {self.noise} (the range of additive noise)"
            )
        if self.bounds is not None and not self.bounds[0] < self.bounds[1]:
            raise ValueError(f"bounds: {list(self.bounds)} is not a range [low, high], low < high")
        given = [k for k in own if getattr(self, k) is not None]
        wrong = [k for k in other if getattr(self, k) is not None]
        if wrong:
            raise ValueError(
                f"{', '.join(wrong)}: not a setting of noise: {self.noise}; give one of "
                + ", ".join(own)
            )
        if len(given) != 1:
            raise ValueError(
                f"noise: {self.noise} needs exactly one of {', '.join(own)} (got "
                + (", ".join(given) or "none")
                + ")"
            )
        return self


class PerturbParams(BaseModel):
    """Perturbation: every input row published, the configured attributes perturbed.

    Attributes:
        name: ``perturb``.
        columns: the attributes to perturb and how.
        confidence: the confidence of the privacy level (Agrawal and Srikant use 95%).
        significance: the significance of each test verification runs on the residuals
            (Kolmogorov-Smirnov, mean, variance, retention rate); a test failing at this
            level fails the release.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Literal["perturb"] = "perturb"
    columns: tuple[PerturbColumn, ...] = Field(min_length=1)
    confidence: Annotated[Float, Field(gt=0.0, lt=1.0)] = 0.95
    significance: Annotated[Float, Field(gt=0.0, lt=0.5)] = 1e-4
