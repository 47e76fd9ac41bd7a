"""Reading a job config: the YAML file, its ``--set`` overrides, validation.

:func:`read_config` reads a file and applies overrides; :func:`validate_config` validates
a mapping into a :class:`~sparkanon.config.JobConfig` and turns pydantic's errors into
one :class:`~sparkanon.errors.ConfigError` (:mod:`.messages`). Relative paths in the
config (input, hierarchies, output) are kept as written: they are resolved against the
current working directory of the process that starts the job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from sparkanon.config.messages import error_lines
from sparkanon.config.overrides import apply_overrides
from sparkanon.config.schema import JobConfig
from sparkanon.errors import ConfigError


def validate_config(raw: Mapping[str, Any], source: str = "<config>") -> JobConfig:
    """Validate a raw mapping into a :class:`JobConfig`.

    Args:
        raw: the parsed YAML mapping.
        source: where it came from, for error messages.

    Returns:
        The validated, frozen config.

    Raises:
        ConfigError: with one line per problem, each naming its key.
    """
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: the config must be a YAML mapping, got {type(raw).__name__}")
    try:
        return JobConfig.model_validate(dict(raw))
    except ValidationError as exc:
        single_model = isinstance(raw.get("model"), Mapping)
        lines = error_lines(exc.errors(), single_model)
        raise ConfigError(f"invalid config {source}:\n  " + "\n  ".join(lines)) from None


def read_config(path: str | Path, overrides: Sequence[str] = ()) -> JobConfig:
    """Read, override and validate a YAML job config.

    Args:
        path: the YAML file.
        overrides: ``key=value`` strings (see :func:`apply_overrides`).

    Returns:
        The validated config.

    Raises:
        ConfigError: the file is missing, is not YAML, or fails validation.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {str(p)!r} does not exist")
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {str(p)!r} is not valid YAML: {exc}") from None
    if overrides:
        raw = apply_overrides(raw or {}, overrides)
    return validate_config(raw, source=str(p))
