"""Partition specs of a catalog input: ``{column: value}`` and its text ``ds=2026-11-23``.

``sparkanon run --partition ds=2026-11-23`` sets ``input.partition`` (see
:func:`parse_partition`); messages and the output table name a partition as
:func:`partition_text` spells it.
"""

from __future__ import annotations

from collections.abc import Mapping

from sparkanon.errors import ConfigError


def partition_text(spec: Mapping[str, str]) -> str:
    """``ds=2026-11-23`` (columns joined by ``,``), as ``--partition`` takes it."""
    return ",".join(f"{k}={v}" for k, v in spec.items())


def parse_partition(text: str) -> dict[str, str]:
    """``ds=2026-11-23[,region=eu]`` as an ordered ``{column: value}`` mapping.

    Raises:
        ConfigError: a part is not ``column=value`` or a column repeats.
    """
    spec: dict[str, str] = {}
    for part in text.split(","):
        col, sep, value = part.partition("=")
        col = col.strip()
        if not sep or not col or not value.strip():
            raise ConfigError(
                f"--partition {text!r}: expected column=value[,column=value], e.g. "
                "--partition ds=2026-11-23"
            )
        if col in spec:
            raise ConfigError(f"--partition {text!r}: column {col!r} given twice")
        spec[col] = value.strip()
    return spec
