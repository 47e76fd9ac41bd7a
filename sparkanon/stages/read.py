"""Stage ``read``: the output location's safety, the input table, the columns the job needs."""

from __future__ import annotations

from dataclasses import dataclass

from sparkanon.attributes.schema import RID
from sparkanon.config import JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import ConfigError, InputError, OutputExistsError
from sparkanon.io import MALFORMED, path_conflict
from sparkanon.stages._common import StageTimer


@dataclass(frozen=True)
class RawInput:
    """The input restricted to the columns the job uses, with a row id.

    Attributes:
        table: quasi-identifiers, the sensitive column, ``keep`` columns, ``_rid``
            and, for CSV input, :data:`sparkanon.io.MALFORMED`.
        passthrough: columns copied to the output as they are (the sensitive
            column first, then the ``keep`` columns).
        passthrough_types: their DDL types.
    """

    table: Table
    passthrough: list[str]
    passthrough_types: list[tuple[str, str]]


def check_output(engine: Engine, config: JobConfig, reads_path: bool) -> None:
    """Refuse an output that would destroy or pollute the input, or that exists, before any work.

    Args:
        engine: the engine (its filesystem resolves the paths).
        config: the job config.
        reads_path: whether the input comes from ``input.path`` (not a given table).

    Raises:
        ConfigError: the output is, contains or lies inside the input.
        OutputExistsError: the output exists and ``output.mode`` is ``error``.
    """
    out_path = config.output.path.rstrip("/")
    if reads_path:
        inp = engine.canonical_path(config.input.path)
        out = engine.canonical_path(config.output.path)
        relation = path_conflict(inp, out)
        if relation is not None:
            raise ConfigError(
                f"output.path: {config.output.path!r} ({out}) {relation} "
                f"{config.input.path!r} ({inp}); writing there would destroy or pollute the "
                "input. Choose an output path outside the input"
            )
    if config.output.mode == "error" and engine.path_exists(out_path):
        raise OutputExistsError(
            f"output.path: {out_path!r} already exists; remove it or set output.mode: overwrite"
        )


def check_columns(config: JobConfig, present: list[str]) -> None:
    """Every column the config names must be in the input."""
    wanted = [a.name for a in config.attributes] + [config.sensitive.name]
    missing = [c for c in wanted if c not in present]
    if missing:
        raise InputError(
            f"column(s) {missing} named in the config are not in the input; the input has {present}"
        )


def read_input(
    engine: Engine, config: JobConfig, timer: StageTimer, table: Table | None = None
) -> RawInput:
    """Read the input (or take ``table``), check its columns, keep those the job uses.

    Args:
        engine: the engine.
        config: the job config.
        timer: the stage timer.
        table: an input table given by the caller (``input`` is then not read).

    Returns:
        The restricted input with a row id.
    """
    passthrough = [config.sensitive.name] + list(config.kept_columns)
    with timer.stage("read"):
        raw = engine.read(config.input) if table is None else table
        raw_schema = engine.schema_of(raw)
        if not raw_schema:
            raise InputError(f"input {config.input.path!r} is empty (no columns, no rows)")
        check_columns(config, [n for n, _ in raw_schema])
        types = dict(raw_schema)
        needed = [a.name for a in config.quasi_identifiers] + passthrough
        if MALFORMED in types:
            needed.append(MALFORMED)
        raw = engine.with_row_id(engine.select(raw, needed), RID)
    return RawInput(raw, passthrough, [(c, types[c]) for c in passthrough])
