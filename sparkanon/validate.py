"""``sparkanon validate``: check a job config and its input without running the job.

What a run would refuse at its start is refused here, with the same error and exit
code 2: the config itself (checked at load), the hierarchy and taxonomy files it names,
the output (it exists under ``mode: error``, it would clobber the input, an output
table partitioned otherwise), and the input's schema: the file or table exists, the
partition exists, every configured column is present, a set column holds sets in its
declared layout. No row is read beyond what the reader needs to learn the schema (a
CSV header); the values themselves are checked by a run's profile stage.
"""

from __future__ import annotations

from typing import Any

from sparkanon.config import ItemsetConfig, JobConfig, partition_text
from sparkanon.engine.base import Engine
from sparkanon.stages.commit import output_target
from sparkanon.stages.read import (
    check_columns,
    check_set_column,
    own_schema,
    read_catalog_input,
)


def validate_job(engine: Engine, config: JobConfig) -> dict[str, Any]:
    """Check everything a run checks before it reads a row.

    Args:
        engine: the engine the job would run on.
        config: the loaded (so already validated) config.

    Returns:
        What was checked: the input, its columns, the output, the files loaded.

    Raises:
        UserError: the first problem found (exit code 2).
    """
    loaded = []
    for attribute in config.quasi_identifiers:
        if getattr(attribute, "hierarchy", None):
            attribute.known_kind()
            loaded.append(attribute.hierarchy)
    sens = config.sensitive
    if isinstance(sens, ItemsetConfig) and sens.taxonomy is not None:
        sens.load_tree()
        loaded.append(sens.taxonomy)
    target = output_target(engine, config, given_table=False)
    target.check()
    if config.input.table is not None:
        table, _ = read_catalog_input(engine, config)
    else:
        table = engine.read(config.input)
    schema = own_schema(engine, table, config.input.source)
    names = [n for n, _ in schema]
    check_columns(config, names)
    if isinstance(sens, ItemsetConfig):
        check_set_column(sens, dict(schema))
    return {
        "valid": True,
        "input": config.input.source,
        "partition": partition_text(config.input.partition) if config.input.partition else None,
        "input_columns": names,
        "output": config.output.target,
        "output_mode": config.output.mode,
        "files_loaded": loaded,
    }
