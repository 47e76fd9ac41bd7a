"""Stage ``read``: the input (files or a catalog table's partition), the columns the job needs."""

from __future__ import annotations

from dataclasses import dataclass, field

from sparkanon.attributes.schema import RID
from sparkanon.config import InputConfig, ItemsetConfig, JobConfig, partition_text
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import ConfigError, InputError
from sparkanon.io import MALFORMED, input_columns
from sparkanon.publications.kept import (
    UNLISTED_EXAMPLES,
    KeptColumns,
    Unlisted,
    kept_columns,
    side_table,
    unlisted_columns,
)
from sparkanon.stages._common import StageTimer, log


@dataclass(frozen=True)
class RawInput:
    """The input restricted to the columns the job uses, with a row id.

    Attributes:
        table: what the algorithms read: the quasi-identifiers, the sensitive column,
            ``_rid`` and, for CSV input, :data:`sparkanon.io.MALFORMED`; never a kept
            column.
        passthrough: columns the encoded table carries and the publication copies as
            they are (the sensitive column; for a set-valued one, the quasi-identifiers).
        passthrough_types: their DDL types.
        original: what the evaluation reads as the input: ``table``'s own columns and,
            when they are kept columns, ``report.label`` and ``report.weight``.
        kept: the columns published unchanged (``keep`` and unlisted-kept ones) and
            their side table, joined to the published rows by row id
            (:mod:`sparkanon.publications.kept`).
        unlisted: the input columns the config does not name, and ``input.unlisted``.
    """

    table: Table
    passthrough: list[str]
    passthrough_types: list[tuple[str, str]]
    original: Table
    kept: KeptColumns = field(default_factory=KeptColumns)
    unlisted: Unlisted = field(default_factory=lambda: Unlisted("drop", ()))


def read_catalog_input(
    engine: Engine, source: InputConfig, key: str = "input.table"
) -> tuple[Table, list[tuple[str, str]]]:
    """The rows of ``input.table`` (of ``input.partition``) and the table's partition columns.

    Raises:
        InputError: the table does not exist (naming ``key``), or the partition does not.
        ConfigError: a partition is asked of an unpartitioned table, names a column that
            is not a partition column, or misses one.
    """
    assert source.table is not None
    catalog = engine.catalog()
    info = catalog.require(source.table, key)
    columns = [c for c, _ in info.partition_columns]
    spec = source.partition
    if spec is not None:
        if not columns:
            raise ConfigError(
                f"input.partition: table {info.name} is not partitioned; drop --partition"
            )
        unknown = [c for c in spec if c not in columns]
        missing = [c for c in columns if c not in spec]
        if unknown or missing:
            raise ConfigError(
                f"input.partition: {partition_text(spec)}: table {info.name} is partitioned "
                f"by {columns}"
                + (f"; {unknown} is not a partition column" if unknown else "")
                + (f"; give a value for {missing}" if missing else "")
            )
        spec = {c: spec[c] for c in columns}  # the table's order
        if not catalog.has_partition(info.name, spec):
            raise InputError(
                f"input.partition: table {info.name} has no partition {partition_text(spec)}"
            )
    return catalog.read(info, spec), list(info.partition_columns) if spec is not None else []


def read_table(
    engine: Engine, source: InputConfig, path: str | None = None, key: str | None = None
) -> tuple[Table, list[tuple[str, str]]]:
    """The rows of an input, or of the files at ``path`` read like it.

    Without ``path``: ``source.table`` (of ``source.partition``,
    :func:`read_catalog_input`) or ``source.path``. With ``path``: the files there, read
    with the input's format and options (a holdout, a population table). A malformed CSV
    record keeps its :data:`sparkanon.io.MALFORMED` flag.

    Args:
        engine: the engine.
        source: the config's ``input`` section.
        path: other files to read like the input (``None``: the input itself).
        key: the config key or flag that named the table or ``path``, for the error
            message (default ``input.table``).

    Returns:
        The rows, and the partition columns the catalog read (``[]`` for files).

    Raises:
        InputError: ``path`` does not exist (naming ``key``), or the table or the
            partition does not.
    """
    key = key or "input.table"
    if path is not None:
        if not engine.path_exists(path):
            raise InputError(f"{key}: {path}: no such file or directory")
        spec = source.model_copy(update={"path": path, "table": None, "partition": None})
        return engine.read(spec), []
    if source.table is not None:
        return read_catalog_input(engine, source, key)
    return engine.read(source), []


def own_schema(engine: Engine, table: Table, source: str) -> list[tuple[str, str]]:
    """The input's own ``(column, type)`` pairs, without the columns the reader adds.

    Args:
        engine: the engine that read ``table``.
        table: the input as read.
        source: the input as messages name it (``config.input.source``).

    Raises:
        InputError: the input has no column of its own (an empty file or table).
    """
    schema = input_columns(engine.schema_of(table))
    if not schema:
        raise InputError(f"input {source} is empty (no columns, no rows)")
    return schema


def check_columns(config: JobConfig, present: list[str]) -> None:
    """Every column the config names must be in the input (a long item table's set aside)."""
    wanted = [a.name for a in config.attributes]
    if not (isinstance(config.sensitive, ItemsetConfig) and config.sensitive.layout == "long"):
        wanted.append(config.sensitive.name)
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
    sets = isinstance(config.sensitive, ItemsetConfig)
    qi_names = [a.name for a in config.quasi_identifiers]
    # The set is encoded; the exact quasi-identifiers are published (RT table).
    passthrough = list(qi_names) if sets else [config.sensitive.name]
    with timer.stage("read"):
        reserved: list[str] = []
        if table is not None:
            raw = table
        else:
            raw, partitions = read_table(engine, config.input)
            reserved = [c for c, _ in partitions]
        types = dict(engine.schema_of(raw))
        own = [n for n, _ in own_schema(engine, raw, config.input.source)]
        check_columns(config, own)
        if sets:
            check_set_column(config.sensitive, types)
        unlisted = unlisted_columns(config, own, reserved)
        kept = kept_columns(config, unlisted, types)
        log_unlisted(unlisted)
        long = sets and config.sensitive.layout == "long"
        own_sens = [] if long else [config.sensitive.name]
        key = [config.sensitive.long.key] if long else []
        needed = list(dict.fromkeys(qi_names + own_sens + passthrough + key))
        if MALFORMED in types:
            needed.append(MALFORMED)
        # Row ids come from the input's own order, before any join moves rows around.
        full = engine.with_row_id(engine.select(raw, needed + [c for c, _ in kept]), RID)
        algorithms = engine.select(full, [*needed, RID])
        report = [c for c in (config.report.label, config.report.weight) if c in dict(kept)]
        original = engine.select(full, [*needed, RID, *report]) if report else algorithms
        if long:
            algorithms = join_long_items(engine, config.sensitive, algorithms)
    return RawInput(
        table=algorithms,
        passthrough=passthrough,
        passthrough_types=[(c, types[c]) for c in passthrough],
        kept=side_table(engine, full, kept),
        unlisted=unlisted,
        original=original,
    )


def log_unlisted(unlisted: Unlisted) -> None:
    """Log the unlisted columns by name (names only; values are never logged)."""
    if not unlisted.names:
        return
    shown = ", ".join(unlisted.names[:UNLISTED_EXAMPLES])
    more = len(unlisted.names) - UNLISTED_EXAMPLES
    log.info(
        "read: %d column(s) not named in the config %s (input.unlisted: %s): %s%s",
        len(unlisted.names),
        "dropped" if unlisted.policy == "drop" else "kept unchanged",
        unlisted.policy,
        shown,
        f" and {more} more (all in metrics.json unlisted_columns)" if more > 0 else "",
    )


def join_long_items(engine: Engine, sens: ItemsetConfig, main: Table) -> Table:
    """The main input with each record's items from the long table, as an array column.

    The long table holds one row per (record, item); its items are collected per key
    and joined to the main input by the key (a left join: a record with no item row
    holds the empty set).

    Raises:
        InputError: the long table lacks the key or the item column.
    """
    long = sens.long
    assert long is not None
    cfg = InputConfig(format=long.format, path=long.path, options=long.options)
    items = engine.read(cfg)
    present = [n for n, _ in input_columns(engine.schema_of(items))]
    missing = [c for c in (long.key, long.item) if c not in present]
    if missing:
        raise InputError(
            f"sensitive.long: column(s) {missing} are not in the long item table "
            f"{long.path!r}; it has {present}"
        )
    collected = engine.aggregate(items, [long.key], {sens.name: ("collect", long.item)})
    return engine.join(main, collected, [long.key], how="left")


def check_set_column(sens: ItemsetConfig, types: dict[str, str]) -> None:
    """The set column must hold sets in its declared layout.

    Raises:
        InputError: an ``array`` layout whose column is not an array (or a ``delimited``
            one whose column is), naming the column, its type and the fix.
    """
    if sens.layout == "long":
        return
    kind = types.get(sens.name, "")
    is_array = kind.startswith("array")
    if sens.layout == "array" and not is_array:
        raise InputError(
            f"column {sens.name!r} is declared a set of items (sensitive.layout: array) but "
            f"holds {kind!r} values, not arrays; for items joined in a string set "
            "sensitive.layout: delimited (and sensitive.separator)"
        )
    if sens.layout == "delimited" and is_array:
        raise InputError(
            f"column {sens.name!r} holds arrays ({kind!r}) but sensitive.layout is delimited; "
            "set sensitive.layout: array"
        )
