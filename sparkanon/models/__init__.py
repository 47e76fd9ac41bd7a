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
``hpk``             (H,p,k)-anonymity (seed 000, def. 7)       ``k``, ``p``, ``h``
``distinct_l``      distinct l-diversity                       ``l`` (integer)
``entropy_l``       entropy l-diversity (def. 20.3.3)          ``l`` (real)
``recursive_cl``    recursive (c,l)-diversity (def. 20.3.4)    ``c``, ``l`` (integer)
``t_closeness``     t-closeness (def. 20.3.5)                  ``t``, ``measure``,
                                                               ``ground``, ``hierarchy``
``kl_diversity``    (k,l)-diversity of relational-transaction  ``k``, ``l`` (integers)
                    data (seed 002, def. 8)
==================  =========================================  =========================
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
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


def _location(loc: tuple[Any, ...], key: str) -> str:
    """``model.1.l``, as ``--set`` spells it, from a pydantic location ``(1, 'entropy_l', 'l')``."""
    out = key
    parts = list(loc)
    if parts and isinstance(parts[0], int):
        out += f".{parts.pop(0)}"
    if parts and parts[0] in MODELS:
        parts.pop(0)  # the union's tag, not a key of the config
    for part in parts:
        out += f".{part}"
    return out


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
        where = key if single else f"{key}.{i}"
        if isinstance(item, PrivacyModel):
            models.append(item)
            continue
        try:
            models.append(_ONE.validate_python(item))
        except ValidationError as exc:
            for err in exc.errors():
                at = _location(err["loc"], where)
                msg = err["msg"].removeprefix("Value error, ")
                if err["type"] == "union_tag_not_found":
                    msg = "the model needs a name: one of " + ", ".join(MODELS)
                elif err["type"] == "union_tag_invalid":
                    at = f"{where}.name"
                    tag = err.get("ctx", {}).get("tag")
                    msg = f"unknown privacy model {tag!r}; use one of " + ", ".join(MODELS)
                    lines.append(f"{at}: {msg}")
                    continue
                elif err["type"] == "extra_forbidden":
                    param = err["loc"][-1]
                    owners = [
                        n
                        for n, cls in MODELS.items()
                        if param in {f.alias or f_name for f_name, f in cls.model_fields.items()}
                    ]
                    msg = "unknown key (check the spelling)"
                    if owners and len(err["loc"]) > 1:
                        msg = (
                            f"unknown key: model {err['loc'][-2]!r} takes no {param!r} (a "
                            f"parameter of {', '.join(owners)}); remove it or change "
                            f"{where}.name"
                        )
                elif err["type"] == "value_error" and re.match(r"[A-Za-z_]\w* = ", msg):
                    lines.append(f"{at}.{msg}")  # "p = 3 > k = 2: ..." -> model.p = 3 > k = 2
                    continue
                elif err["type"] == "value_error":
                    head, sep, rest = msg.partition(": ")
                    if sep and head.isidentifier():  # "ground: ..." -> model.ground: ...
                        at, msg = f"{at}.{head}", rest
                bad = err.get("input")
                shown = "" if err["type"] in ("missing", "value_error") else f" (got {bad!r})"
                lines.append(f"{at}: {msg}{shown}")
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
