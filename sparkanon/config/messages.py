"""The unions of a job config, for the translator of pydantic's validation errors.

:func:`~sparkanon.config.validate_config` describes a job config's errors with
:func:`error_lines`: :func:`sparkanon.validation_errors.error_lines` told the config's
union sections (``attributes`` by ``kind``, ``model`` and ``algorithm`` by ``name``,
``sensitive`` by ``kind``). The algorithms are read from the live registry
(:data:`sparkanon.algorithms.ALGORITHMS`), so a family registered after import is
described like the others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, get_args

from pydantic import BaseModel

from sparkanon import validation_errors
from sparkanon.algorithms import ALGORITHMS
from sparkanon.config.schema import AttributeConfig, ItemsetConfig, SensitiveConfig
from sparkanon.models import MODELS


def _attribute_kinds() -> dict[str, type[BaseModel]]:
    """Each attribute class by its ``kind``, in the union's order."""
    members = get_args(get_args(AttributeConfig)[0])
    return {get_args(c.model_fields["kind"].annotation)[0]: c for c in members}


UNIONS: validation_errors.Unions = {
    "attributes": validation_errors.UnionSection("kind", _attribute_kinds),
    "model": validation_errors.UnionSection("name", lambda: MODELS),
    "algorithm": validation_errors.UnionSection(
        "name", lambda: {name: entry.params for name, entry in ALGORITHMS.items()}
    ),
    "sensitive": validation_errors.UnionSection(
        "kind", lambda: {"value": SensitiveConfig, "itemset": ItemsetConfig}
    ),
}
"""The union sections of a job config: the key that selects a variant, the variants."""


def error_lines(errors: Iterable[Mapping[str, Any]], single_model: bool) -> list[str]:
    """One line per pydantic error of a job config.

    Args:
        errors: ``ValidationError.errors()`` of :class:`~sparkanon.config.JobConfig`.
        single_model: the raw config gave ``model`` as one mapping (not a list), so its
            keys are ``model.k``, not ``model.0.k``.

    Returns:
        The lines, in the errors' order.
    """
    return validation_errors.error_lines(errors, UNIONS, single_model)
