"""Privacy models as criteria that classes must satisfy (after ARX's ``criteria`` package).

A job names one model or a list of models that must all hold, e.g.
``model: {name: entropy_l, l: 3}`` or
``model: [{name: k, k: 5}, {name: t_closeness, t: 0.2, ground: ordered}]``.
:data:`ModelConfig` validates one such mapping (a pydantic union told apart by
``name``), :data:`MODELS` maps each name to its class and
:func:`parse_models` turns a config value into a :class:`ModelSet`.

==================  =========================================  =========================
name                model                                      parameters
==================  =========================================  =========================
``k``               k-anonymity                                ``k``
``p_sensitive``     p-sensitive k-anonymity                    ``k``, ``p``
``hpk``             (H,p,k)-anonymity (Shi et al. 2024, def. 7)       ``k``, ``p``, ``h``
``distinct_l``      distinct l-diversity                       ``l`` (integer)
``entropy_l``       entropy l-diversity (def. 20.3.3)          ``l`` (real)
``recursive_cl``    recursive (c,l)-diversity (def. 20.3.4)    ``c``, ``l`` (integer)
``t_closeness``     t-closeness (def. 20.3.5)                  ``t``, ``measure``,
                                                               ``ground``, ``hierarchy``
``kl_diversity``    (k,l)-diversity of relational-transaction  ``k``, ``l`` (integers)
                    data (Gong et al. 2016, def. 8)
==================  =========================================  =========================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter, ValidationError

from sparkanon.errors import ConfigError
from sparkanon.models.base import (
    TOLERANCE,
    ClassSummaries,
    ModelSet,
    PrivacyModel,
    SensitiveDomain,
    describe_models,
)
from sparkanon.models.k_anonymity import HPKAnonymity, KAnonymity, PSensitiveKAnonymity
from sparkanon.models.kl_diversity import KLDiversity
from sparkanon.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
)
from sparkanon.models.t_closeness import TCloseness
from sparkanon.validation_errors import UnionSection, error_lines

_CLASSES: tuple[type[PrivacyModel], ...] = (
    KAnonymity,
    PSensitiveKAnonymity,
    HPKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
    TCloseness,
    KLDiversity,
)

MODELS: dict[str, type[PrivacyModel]] = {cls.model_fields["name"].default: cls for cls in _CLASSES}
"""Every model class by its config ``name``."""

ModelConfig = Annotated[
    Union[_CLASSES],  # noqa: UP007 (a discriminated union is spelt with Union)
    Field(discriminator="name"),
]
"""One model's config mapping, validated into the model class its ``name`` selects."""

_ONE: TypeAdapter[PrivacyModel] = TypeAdapter(ModelConfig)

_UNIONS = {"model": UnionSection("name", lambda: MODELS)}
"""The one union of a model mapping, for :func:`model_error_lines`."""


def model_error_lines(
    errors: Iterable[Mapping[str, Any]], index: int, single: bool, key: str = "model"
) -> list[str]:
    """The lines of the errors of one model mapping validated alone (:data:`ModelConfig`).

    Args:
        errors: ``ValidationError.errors()`` of the model mapping.
        index: its position in the model list.
        single: the models were given as one mapping, not a list.
        key: the config key holding the models.

    Returns:
        The lines, located as the config's ``model`` section (``model.1.l``).
    """
    located = ({**err, "loc": ("model", index, *err["loc"])} for err in errors)
    lines = error_lines(located, _UNIONS, single)
    return lines if key == "model" else [key + line.removeprefix("model") for line in lines]


def parse_models(raw: Any, key: str = "model") -> ModelSet:
    """Validate a config value (one model mapping or a list of them) into a :class:`ModelSet`.

    Args:
        raw: a mapping such as ``{"name": "entropy_l", "l": 3}``, a list of
            mappings, or already-built models.
        key: the config key holding ``raw``, for messages.

    Returns:
        The models, in order.

    Raises:
        ConfigError: one line per problem, each naming its key (``model.1.l``).
    """
    items = [raw] if isinstance(raw, (Mapping, PrivacyModel)) else raw
    if not isinstance(items, Sequence) or isinstance(items, str) or not items:
        raise ConfigError(
            f"{key}: expected a model mapping such as {{name: k, k: 5}} or a non-empty list of "
            f"them (got {raw!r})"
        )
    models, lines = [], []
    single = isinstance(raw, (Mapping, PrivacyModel))
    for i, item in enumerate(items):
        if isinstance(item, PrivacyModel):
            models.append(item)
            continue
        try:
            models.append(_ONE.validate_python(item))
        except ValidationError as exc:
            lines += model_error_lines(exc.errors(), i, single, key)
    if lines:
        raise ConfigError("invalid privacy model:\n  " + "\n  ".join(lines))
    return ModelSet(models)


__all__ = [
    "describe_models",
    "MODELS",
    "TOLERANCE",
    "ClassSummaries",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "HPKAnonymity",
    "KAnonymity",
    "KLDiversity",
    "ModelConfig",
    "ModelSet",
    "PSensitiveKAnonymity",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "SensitiveDomain",
    "TCloseness",
    "parse_models",
]
