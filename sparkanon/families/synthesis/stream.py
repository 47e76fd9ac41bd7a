"""``sparkanon stream CONFIG``: dynamic condensation over arriving files (Aggarwal and Yu 2004).

The job's ``input`` is the initial static batch: its records form the first groups
(Aggarwal and Yu's static grouping), computed by the engine in one task and handed to
the stream as the state of its one key. Then :func:`sparkanon.engine.streaming.run_stateful_stream`
runs :class:`~sparkanon.families.synthesis.condense_stream.StreamStep` on every micro-batch of the
files arriving in ``stream.source``, keeps the groups in the checkpoint's state store and
writes the released synthetic records to ``output.path`` (the condensed attributes only:
no group or batch id, rows in a keyed order).

Readings chosen (``docs/method.md``, "Condensation over a stream"):

* the stream condenses the ``continuous`` attributes only (the sensitive and categorical
  columns are not published by the stream: a group's categorical frequencies cannot be
  split with it without its records);
* one state key: every record is compared with every group's centroid, as the algorithm
  states; the groups of one key are processed by one task per batch (a keyed layout by
  the initial batch's top blocks is the way to scale it; not built);
* the source files have the initial input's columns (a CSV's columns are read by
  position under the initial input's header names);
* randomness: the synthetic records and their order come from the run key (``key``);
  the job's ``seed`` keeps only the initial static grouping's picks, which protect
  nothing (no group id is published);
* a group releases only once at least ``k`` of its records are pending
  (``stream.release_pending`` below ``k`` counts as ``k``; the age trigger waits for
  ``k`` too), so two releases of a group never differ by fewer than ``k`` records.

Nothing here imports pyspark: the engine does.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.algorithms.condensation._params import CondensationParams
from sparkanon.config import JobConfig
from sparkanon.engine.expr import Lit
from sparkanon.errors import ConfigError, InputError
from sparkanon.families.synthesis.condense_stream import (
    StreamState,
    StreamStep,
    initial_state,
    numeric_values,
    summary,
)
from sparkanon.io import input_columns
from sparkanon.randomness import RunKey
from sparkanon.stages.read import read_table

log = logging.getLogger("sparkanon")

_KEY = "_key"
RID_COLUMN = "_rid"


def stream_problems(config: JobConfig) -> None:
    """Refuse a config ``sparkanon stream`` cannot run (exit 2, naming the key).

    Raises:
        ConfigError: no ``stream`` section, another algorithm than condensation, or a
            quasi-identifier that is not continuous.
    """
    if config.stream is None:
        raise ConfigError(
            "stream: required key is missing; sparkanon stream needs stream.source (the "
            "folder records arrive in) and stream.checkpoint"
        )
    if not isinstance(config.algorithm, CondensationParams):
        raise ConfigError(
            f"algorithm.name: {config.algorithm.name!r}: sparkanon stream runs condensation "
            "(algorithm.name: condensation)"
        )
    if config.output.path is None:
        raise ConfigError(
            "output.path: required for sparkanon stream (the file sink the synthetic "
            "records go to; a catalog table is not a stream sink here)"
        )
    for i, a in enumerate(config.attributes):
        if a.kind not in ("continuous", "keep"):
            raise ConfigError(
                f"attributes.{i}.kind: {a.kind}: a condensation stream condenses continuous "
                f"attributes only ({a.name!r}); drop it or run the static job "
                "(sparkanon run) for mixed data"
            )


def _numeric(config: JobConfig) -> tuple[str, ...]:
    return tuple(a.name for a in config.attributes if a.kind == "continuous")


def _initial_fn(columns: tuple[str, ...], k: int, seed: int):  # noqa: ANN202
    """Group function: the initial batch's rows -> one row, the initial state (base64)."""

    def initial(rows: pd.DataFrame) -> pd.DataFrame:
        if RID_COLUMN in rows.columns:
            rows = rows.sort_values(RID_COLUMN, kind="stable")
        values, bad = numeric_values(rows, columns)
        if int((~bad).sum()) < k:
            raise InputError(
                f"input: the initial batch holds {int((~bad).sum())} records with numbers in "
                f"{list(columns)}, fewer than model.k = {k}: the first groups need k records"
            )
        state = initial_state(values[~bad], k, seed)
        state.seen += int(bad.sum())
        state.suppressed += int(bad.sum())
        text = base64.b64encode(state.to_bytes()).decode("ascii")
        return pd.DataFrame({_KEY: [0], "state": [text]})

    return initial


def run_stream(
    engine: Any,
    config: JobConfig,
    stop_after: float | None = None,
    batch_hook: Callable[[Any], None] | None = None,
    key: RunKey | None = None,
) -> dict[str, Any]:
    """Run the condensation stream the config describes (module docstring).

    Args:
        engine: the Spark engine.
        config: the job config (with its ``stream`` section).
        key: the run key of the synthetic draws (default :meth:`RunKey.for_run`: the
            ``SPARKANON_KEY`` variable, else a key drawn for this run and never written).
            A stream restarted from its checkpoint replays an unfinished batch: pass the
            same key file to every run of one checkpoint so the replay draws the records
            the failed attempt would have.
        stop_after: stop an interval-triggered stream after this many seconds
            (default: ``stream.run_seconds``).
        batch_hook: called on the driver with each finished batch's
            :class:`~sparkanon.engine.streaming.BatchProgress` (rows in and out, Spark's
            durations); the benchmark (``experiments/bench_stream.py``) reads them.

    Returns:
        The report: the stream's settings, the batches this run ran (rows in and out),
        and the counts of the state after it (records seen, in groups, released,
        pending, suppressed; groups and the smallest one).
    """
    from sparkanon.engine.streaming import StreamSpec, read_state, run_stateful_stream

    stream_problems(config)
    key = key if key is not None else RunKey.for_run()
    stream = config.stream
    assert stream is not None and isinstance(config.algorithm, CondensationParams)
    k = config.models.min_class_size()
    columns = _numeric(config)
    seed = config.seed
    raw, _ = read_table(engine, config.input)
    schema = input_columns(engine.schema_of(raw))
    names = [n for n, _ in schema]
    missing = [c for c in columns if c not in names]
    if missing:
        raise InputError(f"attributes: column(s) {missing} are not in the input; it has {names}")
    with engine.stage("stream_initial", "condensation stream: the initial groups"):
        keyed = engine.with_columns(
            engine.with_row_id(engine.select(raw, list(columns)), RID_COLUMN), {_KEY: Lit(0)}
        )
        states = engine.collect_small(
            engine.map_groups(
                keyed, _KEY, _initial_fn(columns, k, seed), [(_KEY, "long"), ("state", "string")]
            ),
            1,
        )
    first = StreamState.from_bytes(base64.b64decode(states["state"].iloc[0]))
    log.info("stream: %d initial groups from %d records", len(first.groups.stats), first.seen)
    initial = pd.DataFrame({"key": [0], "state": [base64.b64decode(states["state"].iloc[0])]})
    options = {k_: str(v) for k_, v in stream.options.items()}
    if stream.format == "csv":
        options = {"header": "true"} | options
    spec = StreamSpec(
        source=stream.source,
        source_format=stream.format,
        options=options,
        columns=schema,
        key=lambda b: pd.Series(np.zeros(len(b), dtype=np.int64), index=b.index),
        sink=config.output.path,
        sink_format=config.output.format,
        checkpoint=stream.checkpoint,
        trigger=stream.trigger,
        max_files_per_trigger=stream.max_files_per_trigger,
        name="sparkanon-condense",
    )
    step = StreamStep(
        columns=columns,
        k=k,
        key=key,
        release_pending=max(stream.release_pending or k, k),
        release_age=stream.release_age,
        alpha=config.algorithm.significance,
    )
    output = [(c, "double") for c in columns]
    result = run_stateful_stream(
        engine.spark,
        spec,
        step,
        output,
        initial_state=initial,
        batch_hook=batch_hook,
        stop_after_seconds=stop_after if stop_after is not None else stream.run_seconds,
    )
    committed = read_state(engine.spark, stream.checkpoint).toPandas()
    state = StreamState.from_bytes(bytes(committed["state"].iloc[0])) if len(committed) else first
    return {
        "stream": {
            "source": stream.source,
            "checkpoint": stream.checkpoint,
            "sink": config.output.path,
            "trigger": stream.trigger,
            "k": k,
            "attributes": list(columns),
            "randomness": key.describe(),
        },
        "this_run": {
            "batches": len(result.batches),
            "rows_in": result.rows_in,
            "synthetic_records_out": result.rows_out,
            "stopped": result.stopped,
        },
        "state": summary(state),
    }


__all__ = ["run_stream", "stream_problems"]
