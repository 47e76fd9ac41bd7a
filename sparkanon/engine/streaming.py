"""Stateful Structured Streaming: one pure pandas step per key per micro-batch.

The engine part of dynamic condensation (Aggarwal and Yu 2004): records arrive as files
in a source folder; each micro-batch's records are grouped by a key and handed, key by
key, to a pure ``step(key, state, rows) -> (new_state, output_rows)`` that keeps its
state as opaque bytes (for condensation, ``np.savez`` of the groups' sums). The step
knows nothing of Spark; this module runs it with
``groupBy(key).applyInPandasWithState`` (PySpark 4.3), writes the output rows to a
file sink and keeps the state in the checkpoint.

**Record order and record ids.** Spark shuffles the rows to their key, so the order a
step sees them in is not the input order. The engine numbers the rows before the
shuffle and the wrapper sorts each key's rows by ``(file, split, row)`` before calling
the step:

* :data:`FILE_COLUMN` is ``_metadata.file_path`` (the file's URI);
* :data:`SPLIT_COLUMN` is ``_metadata.file_block_start`` (the byte where the read split
  of the file starts; ``0`` for a file read in one split);
* :data:`ROW_COLUMN` is the row's place in its split, counted from 0 by a pandas pass
  over each read partition (``mapInPandas`` right on top of the scan). A split's rows
  are read in file order and consecutively within its partition, so the count is the
  row's position in the split.

``monotonically_increasing_id`` is refused by Spark on a streaming DataFrame, hence the
counting pass. The triple is a stable record id: a micro-batch replayed after a crash
reads the same files (listed in the checkpoint's offset log), split the same way when
the split settings (``spark.sql.files.maxPartitionBytes``, ``openCostInBytes``, the
default parallelism) are the same, so the same record gets the same triple and every
key's rows reach the step in the same order. A file smaller than the split size is read
in one split, and then ``row`` is the record's position among the file's data rows
(the header excluded). Under other split settings the order is still the file order (a
split's start orders the splits of a file), only the ids of a file read in several
splits change.

**Initial state.** ``applyInPandasWithState`` has no initial state (only
``transformWithStateInPandas`` has one). The caller's initial states, a small table of
``(key, state bytes)`` computed from a static batch, travel with the step function: a
key whose Spark state does not exist yet starts from its initial state (``None`` when it
has none). Spark broadcasts a large pickled function rather than ship it with every
task; the table is per-key statistics, never rows. Once a key has Spark state, the
initial table is not read for it again, so a restart with the same checkpoint does not
reapply it.

**Exactly once.** The file sink writes each micro-batch's files and then records them in
``<sink>/_spark_metadata``; the state store commits each batch's state in the
checkpoint; the offset and commit logs tie a batch's input to both. A query killed at
any point and restarted with the same checkpoint replays the uncommitted batch from the
same files: each input record is in the sink once and counted in the state once. A
reader must read the sink through that log (``spark.read`` on the sink folder does;
:func:`read_sink`): files of a killed batch stay in the folder unlisted. Logs, the batch
hook and the progress figures are not exactly once (a replayed batch logs twice).

pyspark is imported only under :mod:`sparkanon.engine`.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.types import StructType

from sparkanon.engine.base import Columns
from sparkanon.engine.expr import Col, Expr
from sparkanon.engine.spark import _column, _conform, _ddl, _empty
from sparkanon.engine.sql import quote_identifier
from sparkanon.errors import ConfigError, PrivacyViolationError

log = logging.getLogger("sparkanon")

FILE_COLUMN = "_stream_file"
"""The record's file (its URI), a column of the rows a step receives."""
SPLIT_COLUMN = "_stream_split"
"""The byte where the record's read split of its file starts."""
ROW_COLUMN = "_stream_row"
"""The record's place in its split, from 0 (its position in the file for a one-split file)."""
KEY_COLUMN = "_stream_key"
"""The state key of the record."""
RECORD_COLUMNS = (FILE_COLUMN, SPLIT_COLUMN, ROW_COLUMN)
"""The record id, and the order a step receives a key's rows in."""

SOURCE_FORMATS = ("csv", "parquet")
SINK_FORMATS = ("parquet", "csv", "json", "orc")
AVAILABLE_NOW = "available_now"
_INTERVAL = re.compile(r"^\d+ (millisecond|second|minute|hour)s?$")
_STATE_DDL = "state binary"

Step = Callable[[Any, bytes | None, pd.DataFrame], tuple[bytes, pd.DataFrame]]
"""``step(key, state, rows) -> (new_state, output_rows)``: pure pandas/numpy."""
KeyFn = Callable[[pd.DataFrame], pd.Series]
"""A key computed in pandas from a chunk of input rows (one value per row)."""


@dataclass(frozen=True)
class StreamSpec:
    """What a stateful stream reads, how it keys the rows, where it writes.

    Attributes:
        source: the folder input files arrive in.
        source_format: ``csv`` or ``parquet``.
        options: reader options (for CSV: ``header``, ``sep``, ``mode``...).
        columns: the input rows' ``(name, ddl type)`` in file order (a stream needs an
            explicit schema).
        key: the state key of a row: a column name, an engine expression
            (:mod:`sparkanon.engine.expr`, computed in the JVM), or a pandas function
            of a chunk of rows returning one key per row (computed in the numbering
            pass, no extra Python pass), whose type is ``key_type``.
        sink: the output folder.
        sink_format: ``parquet``, ``csv``, ``json`` or ``orc``.
        checkpoint: the checkpoint folder (offsets, commits, state).
        trigger: ``available_now`` (consume what is there, then stop) or a
            processing-time interval like ``5 seconds``.
        max_files_per_trigger: at most this many new files per micro-batch
            (``None``: all new files).
        key_type: the key's DDL type when ``key`` is a function.
        name: the query name (the Spark UI and the job descriptions show it).
    """

    source: str
    source_format: str
    options: Mapping[str, Any]
    columns: Columns
    key: str | Expr | KeyFn
    sink: str
    sink_format: str
    checkpoint: str
    trigger: str = AVAILABLE_NOW
    max_files_per_trigger: int | None = None
    key_type: str = "long"
    name: str = "sparkanon-stream"


@dataclass(frozen=True)
class BatchProgress:
    """One micro-batch as Spark's progress event reports it.

    Attributes:
        batch_id: Spark's batch id (counted from 0 over the checkpoint's life).
        input_rows: the rows the batch read.
        output_rows: the rows the steps output (an observed count).
        duration_ms: Spark's durations (``addBatch``, ``triggerExecution``...).
    """

    batch_id: int
    input_rows: int
    output_rows: int
    duration_ms: Mapping[str, int]


@dataclass(frozen=True)
class StreamResult:
    """What one run of a stream did (this run's batches only, not the checkpoint's).

    Attributes:
        batches: the batches run, in order.
        stopped: ``True`` when stopped (time up, an external stop), ``False`` when the
            query ended by itself (``available_now``: the source consumed).
    """

    batches: tuple[BatchProgress, ...]
    stopped: bool
    rows_in: int = field(init=False)
    rows_out: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows_in", sum(b.input_rows for b in self.batches))
        object.__setattr__(self, "rows_out", sum(b.output_rows for b in self.batches))


def check_spec(spec: StreamSpec, output_schema: Columns) -> None:
    """Refuse a spec the engine cannot run, naming the field (:class:`ConfigError`).

    Args:
        spec: the stream.
        output_schema: the step's output columns.
    """
    if spec.source_format not in SOURCE_FORMATS:
        raise ConfigError(
            f"stream source_format {spec.source_format!r}: not one of {SOURCE_FORMATS}"
        )
    if spec.sink_format not in SINK_FORMATS:
        raise ConfigError(f"stream sink_format {spec.sink_format!r}: not one of {SINK_FORMATS}")
    if spec.trigger != AVAILABLE_NOW and not _INTERVAL.match(spec.trigger):
        raise ConfigError(
            f"stream trigger {spec.trigger!r}: not {AVAILABLE_NOW!r} nor an interval "
            "like '5 seconds'"
        )
    if spec.max_files_per_trigger is not None and spec.max_files_per_trigger < 1:
        raise ConfigError(f"stream max_files_per_trigger {spec.max_files_per_trigger}: not >= 1")
    names = [n for n, _ in spec.columns]
    if not names:
        raise ConfigError("stream columns: none given (a stream needs an explicit schema)")
    reserved = sorted(set(names) & {*RECORD_COLUMNS, KEY_COLUMN})
    if reserved:
        raise ConfigError(f"stream columns: {reserved} are names the engine adds")
    if isinstance(spec.key, str) and spec.key not in names:
        raise ConfigError(f"stream key: column {spec.key!r} is not one of the columns {names}")
    if not output_schema:
        raise ConfigError("stream output schema: no columns")
    if len({spec.source, spec.sink, spec.checkpoint}) != 3:
        raise ConfigError("stream source, sink and checkpoint: must be three different folders")


def _numbering(key: KeyFn | None) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """The pandas pass that gives each row its place in its split (and its key).

    Runs on each read partition in order; a split's rows are consecutive there, so a
    counter per ``(file, split)`` carried over the partition's chunks is the row's place
    in its split.
    """

    def run(chunks: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        seen: dict[tuple[str, int], int] = {}
        for chunk in chunks:
            places = np.empty(len(chunk), dtype="int64")
            splits = zip(chunk[FILE_COLUMN].tolist(), chunk[SPLIT_COLUMN].tolist(), strict=True)
            for i, split in enumerate(splits):
                place = seen.get(split, 0)
                places[i] = place
                seen[split] = place + 1
            chunk = chunk.assign(**{ROW_COLUMN: places})
            if key is not None:
                chunk[KEY_COLUMN] = np.asarray(key(chunk))
            yield chunk

    return run


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value (dict keys must compare with the caller's)."""
    return value.item() if isinstance(value, np.generic) else value


def initial_states(frame: pd.DataFrame | None) -> dict[Any, bytes]:
    """The initial states by key, from a ``(key, state)`` table.

    Args:
        frame: columns ``key`` and ``state`` (bytes), one row per key; or ``None``.

    Returns:
        ``{key: state bytes}``.
    """
    if frame is None:
        return {}
    missing = sorted({"key", "state"} - set(frame.columns))
    if missing:
        raise ConfigError(f"initial_state: column(s) {missing} missing (want key, state)")
    if frame["key"].duplicated().any():
        raise ConfigError("initial_state: a key appears more than once")
    return {_plain(k): bytes(s) for k, s in zip(frame["key"], frame["state"], strict=True)}


def keyed_runner(
    step: Step, columns: list[str], output_schema: Columns, initial: Mapping[Any, bytes]
) -> Callable[[tuple, Iterator[pd.DataFrame], GroupState], Iterator[pd.DataFrame]]:
    """The ``applyInPandasWithState`` function around a step.

    It gathers the key's rows of the batch, sorts them by :data:`RECORD_COLUMNS`, calls
    the step with the key's state (its initial state when Spark holds none), stores the
    new state and yields the output rows conformed to ``output_schema``.

    Args:
        step: the pure step.
        columns: the columns the step receives (input columns, then the record id).
        output_schema: the step's output columns.
        initial: initial state by key.
    """

    def run(
        key: tuple, chunks: Iterator[pd.DataFrame], state: GroupState
    ) -> Iterator[pd.DataFrame]:
        frames = list(chunks)
        rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        rows = rows.sort_values(list(RECORD_COLUMNS), kind="stable", ignore_index=True)
        value = _plain(key[0])
        old = bytes(state.get[0]) if state.exists else initial.get(value)
        new, out = step(value, old, rows[columns])
        if not isinstance(new, (bytes, bytearray)):
            raise TypeError(f"a stream step returned a {type(new).__name__} state, not bytes")
        state.update((bytes(new),))
        yield _conform(out, output_schema) if len(out) else _empty(output_schema)

    return run


def _source(spark: SparkSession, spec: StreamSpec) -> DataFrame:
    """The source folder as a streaming DataFrame with each row's file and split."""
    reader = spark.readStream.format(spec.source_format).schema(_ddl(spec.columns))
    for name, value in spec.options.items():
        reader = reader.option(name, value)
    if spec.max_files_per_trigger is not None:
        reader = reader.option("maxFilesPerTrigger", spec.max_files_per_trigger)
    frame = reader.load(spec.source)
    return frame.select(
        *[F.col(quote_identifier(n)) for n, _ in spec.columns],
        F.col("_metadata.file_path").alias(FILE_COLUMN),
        F.col("_metadata.file_block_start").alias(SPLIT_COLUMN),
    )


def _keyed(frame: DataFrame, spec: StreamSpec) -> DataFrame:
    """The rows numbered in their split, with their key column."""
    fn = spec.key if callable(spec.key) else None
    if isinstance(spec.key, str):
        frame = frame.withColumn(KEY_COLUMN, _column(Col(spec.key)))
    elif fn is None:
        frame = frame.withColumn(KEY_COLUMN, _column(spec.key))  # type: ignore[arg-type]
    schema = StructType(list(frame.schema.fields))  # a copy: add() changes it in place
    schema.add(ROW_COLUMN, "long", nullable=False)
    if fn is not None:
        schema.add(KEY_COLUMN, spec.key_type)
    return frame.mapInPandas(_numbering(fn), schema)


def stateful_frame(
    spark: SparkSession,
    spec: StreamSpec,
    step: Step,
    output_schema: Columns,
    initial_state: pd.DataFrame | None = None,
) -> DataFrame:
    """The streaming DataFrame of the step's output rows (not started).

    Args:
        spark: the session.
        spec: the stream.
        step: the pure step.
        output_schema: the step's output columns.
        initial_state: ``(key, state)`` rows, the keys' states before the stream.
    """
    check_spec(spec, output_schema)
    keyed = _keyed(_source(spark, spec), spec)
    columns = [n for n, _ in spec.columns] + list(RECORD_COLUMNS)
    runner = keyed_runner(step, columns, output_schema, initial_states(initial_state))
    out = keyed.groupBy(KEY_COLUMN).applyInPandasWithState(
        runner, _ddl(output_schema), _STATE_DDL, "append", GroupStateTimeout.NoTimeout
    )
    return out.observe(_observed(spec), F.count(F.lit(1)).alias("rows"))


def _observed(spec: StreamSpec) -> str:
    return f"{spec.name}-output"


def _batch(progress: Any, spec: StreamSpec) -> BatchProgress:
    metrics = progress.observedMetrics.get(_observed(spec))
    return BatchProgress(
        batch_id=int(progress.batchId),
        input_rows=int(progress.numInputRows),
        output_rows=int(metrics["rows"]) if metrics is not None else 0,
        duration_ms=dict(progress.durationMs),
    )


def _new_batches(
    query: Any, spec: StreamSpec, seen: dict[int, BatchProgress]
) -> list[BatchProgress]:
    """The batches of the query's recent progress not seen yet (idle events left out)."""
    fresh = []
    for progress in query.recentProgress:
        if "addBatch" not in progress.durationMs or int(progress.batchId) in seen:
            continue
        batch = _batch(progress, spec)
        seen[batch.batch_id] = batch
        fresh.append(batch)
    return fresh


def _ended(query: Any, spec: StreamSpec, seconds: float) -> bool:
    """Whether the query ended within ``seconds``; a checkpoint of another spec is a ConfigError."""
    try:
        return bool(query.awaitTermination(seconds))
    except StreamingQueryException as exc:
        if "SCHEMA_NOT_COMPATIBLE" in str(exc):
            raise ConfigError(
                f"stream checkpoint {spec.checkpoint}: its state was written by a stream of "
                "another key or state schema; start a new checkpoint and sink"
            ) from exc
        text = str(exc)
        if "PrivacyViolationError" in text:
            # A step refused a release: the batch failed, nothing of it was committed.
            found = re.search(r"PrivacyViolationError: ([^\n]*)", text)
            raise PrivacyViolationError(
                f"stream {spec.name}: " + (found.group(1) if found else "a release failed")
            ) from exc
        raise


def run_stateful_stream(
    spark: SparkSession,
    spec: StreamSpec,
    step: Step,
    output_schema: Columns,
    *,
    initial_state: pd.DataFrame | None = None,
    batch_hook: Callable[[BatchProgress], None] | None = None,
    stop_after_seconds: float | None = None,
    stop: threading.Event | None = None,
    poll_seconds: float = 0.2,
) -> StreamResult:
    """Run the step over the stream, key by key, batch by batch, to the file sink.

    With ``trigger: available_now`` it returns once the files in the source are consumed
    (split into batches of ``max_files_per_trigger``). With a processing-time trigger it
    runs until ``stop_after_seconds`` pass or ``stop`` is set (or the process is
    stopped); the query is then stopped, an unfinished batch left to the next run.

    Args:
        spark: the session.
        spec: the stream.
        step: ``step(key, state, rows) -> (new_state, output_rows)``; ``rows`` are the
            key's rows of the batch, sorted by the record id (:data:`RECORD_COLUMNS`).
        output_schema: the step's output columns.
        initial_state: ``(key, state)`` rows, the keys' states before the stream.
        batch_hook: called on the driver with each finished batch's progress.
        stop_after_seconds: stop a processing-time query after this long.
        stop: stop the query when this is set.
        poll_seconds: how often the driver looks at the query's progress.

    Returns:
        The batches this run ran (ids, rows in and out, durations).

    Raises:
        ConfigError: a spec the engine cannot run, or a checkpoint whose state was
            written under another key or state schema.
        StreamingQueryException: the query failed (a step raised, a bad file...).
    """
    out = stateful_frame(spark, spec, step, output_schema, initial_state)
    writer = (
        out.writeStream.format(spec.sink_format)
        .outputMode("append")
        .option("path", spec.sink)
        .option("checkpointLocation", spec.checkpoint)
        .queryName(f"{spec.name}-{uuid.uuid4().hex[:8]}")
    )
    if spec.trigger == AVAILABLE_NOW:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=spec.trigger)
    query = writer.start()
    log.info(
        "stream %s started (trigger %s, checkpoint %s)", spec.name, spec.trigger, spec.checkpoint
    )
    seen: dict[int, BatchProgress] = {}
    started, stopped = time.monotonic(), False

    def report() -> None:
        for batch in _new_batches(query, spec, seen):
            log.info(
                "stream %s: batch %d, %d rows in, %d rows out, %d ms",
                spec.name,
                batch.batch_id,
                batch.input_rows,
                batch.output_rows,
                batch.duration_ms.get("triggerExecution", 0),
            )
            if batch_hook is not None:
                batch_hook(batch)

    try:
        while not _ended(query, spec, poll_seconds):
            report()
            timed_out = stop_after_seconds is not None and (
                time.monotonic() - started >= stop_after_seconds
            )
            if timed_out or (stop is not None and stop.is_set()):
                stopped = True
                query.stop()
                break
    finally:
        if query.isActive:
            query.stop()
    report()
    result = StreamResult(tuple(seen[b] for b in sorted(seen)), stopped)
    log.info(
        "stream %s %s: %d batches, %d rows in, %d rows out",
        spec.name,
        "stopped" if stopped else "done",
        len(result.batches),
        result.rows_in,
        result.rows_out,
    )
    return result


def read_sink(spark: SparkSession, spec: StreamSpec, output_schema: Columns) -> DataFrame:
    """The sink's committed rows (through ``_spark_metadata``: a killed batch's files are not)."""
    return spark.read.format(spec.sink_format).schema(_ddl(output_schema)).load(spec.sink)


def read_state(spark: SparkSession, checkpoint: str) -> DataFrame:
    """The committed state of every key: columns ``key`` and ``state`` (bytes).

    Spark's state data source over the checkpoint's last committed batch; per-key
    state, never rows.
    """
    frame = spark.read.format("statestore").load(checkpoint)
    return frame.select(
        F.col(f"key.{KEY_COLUMN}").alias("key"),
        F.col("value.groupState.state").alias("state"),
    )
