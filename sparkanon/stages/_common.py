"""What every stage shares: stage timing and the collection of small statistics."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from sparkanon.engine.base import BatchFn, Engine, Table

log = logging.getLogger("sparkanon")

MAX_STAT_ROWS = 1_000_000
"""Largest statistics table the driver accepts (per-block or per-value rows)."""


STAGE_DESCRIPTIONS = {
    "read": "read the input",
    "profile": "profile the columns",
    "encode": "encode the rows",
    "plan_blocks": "plan the blocks",
    "cluster": "cluster blocks",
    "reconcile": "reconcile leftover rows",
    "summarise": "summarise the classes",
    "levels": "build the generalization levels",
    "frequency": "count the frequency set",
    "search": "search the lattice",
    "publish": "publish the tables",
    "verify": "verify the privacy model",
    "metrics": "measure information loss",
    "release_checks": "check the release against the threat model",
    "are": "measure ARE of random count queries",
    "perturb": "perturb the configured attributes",
    "commit": "commit the output",
}
"""How the Spark UI describes a stage's jobs (``sparkanon: ...``); any other stage name
is described by itself (the engine needs no list of stages)."""


PROGRESS_SECONDS = 30.0
"""How often a running stage logs a progress line (``SPARKANON_PROGRESS_SECONDS`` overrides)."""


def _format_counts(counts: dict[str, Any]) -> str:
    return "".join(f" {k}={v}" for k, v in counts.items())


@dataclass
class StageTimer:
    """Seconds per stage, logged and reported in ``metrics.json``.

    Each stage logs one structured line when it ends, ``stage=<name> seconds=<s>`` and
    the counts the stage noted (:meth:`note`: rows, classes, blocks...; counts only,
    never a value of the data), and, while it runs, a progress line every
    :data:`PROGRESS_SECONDS` with the Spark tasks done so far.

    A stage that persists a table materialises it inside its own timer
    (:meth:`~sparkanon.engine.base.Engine.persist` with ``materialize``), so the work
    is charged to the stage that does it.
    """

    engine: Engine
    seconds: dict[str, float] = field(default_factory=dict)
    counts: dict[str, dict[str, Any]] = field(default_factory=dict)
    _current: list[str] = field(default_factory=list)

    def note(self, **counts: Any) -> None:
        """Record counts of the running stage for its closing log line."""
        if self._current:
            self.counts.setdefault(self._current[-1], {}).update(counts)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time, log and label (Spark UI job description) the work done inside."""
        start = time.perf_counter()
        log.info("stage=%s start", name)
        self._current.append(name)
        stop = threading.Event()
        watcher = threading.Thread(
            target=self._progress, args=(name, start, stop), daemon=True, name=f"progress-{name}"
        )
        watcher.start()
        try:
            with self.engine.stage(name, STAGE_DESCRIPTIONS.get(name)):
                yield
        finally:
            stop.set()
            self._current.pop()
        elapsed = time.perf_counter() - start
        self.seconds[name] = round(self.seconds.get(name, 0.0) + elapsed, 3)
        noted = _format_counts(self.counts.get(name, {}))
        log.info("stage=%s seconds=%.2f%s", name, elapsed, noted)

    def _progress(self, name: str, start: float, stop: threading.Event) -> None:
        every = float(os.environ.get("SPARKANON_PROGRESS_SECONDS", PROGRESS_SECONDS))
        while not stop.wait(every):
            tasks = self.engine.progress(name)
            done = "" if tasks is None else f" tasks={tasks[0]}/{tasks[1]}"
            log.info("stage=%s running seconds=%.0f%s", name, time.perf_counter() - start, done)


def one_row(engine: Engine, table: Table, aggs: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """Aggregate a whole table to one row of Python scalars (``None`` for missing)."""
    row = engine.collect_small(engine.aggregate(table, [], aggs), 1).iloc[0]
    return {
        k: (None if pd.isna(v) else v.item() if hasattr(v, "item") else v) for k, v in row.items()
    }


def batch_sums(
    engine: Engine,
    table: Table,
    fn: BatchFn,
    columns: Sequence[tuple[str, str]],
    by: Sequence[str],
) -> Table:
    """The rows ``fn`` emits per batch of ``table``, their other columns summed per ``by``.

    Args:
        engine: the engine.
        table: the rows.
        fn: batch function; its rows have ``columns`` (name, DDL type).
        columns: the schema of ``fn``'s rows.
        by: the columns the sums are grouped by.
    """
    rows = engine.map_batches(table, fn, list(columns))
    return engine.aggregate(rows, list(by), {n: ("sum", n) for n, _ in columns if n not in by})


def with_columns(frame: pd.DataFrame, columns: dict[str, Any]) -> pd.DataFrame:
    """``frame.assign(**columns)`` built in one step.

    ``assign`` copies the frame and inserts the columns one at a time, each insert
    rebuilding pandas' column index; on a top block of tens of thousands of rows and a
    few dozen carried columns that was a fifth of the cluster stage. The result is the
    same frame: ``frame``'s columns (one ``columns`` names replaced in place) then the new
    ones in order, on ``frame``'s index.
    """
    data: dict[Any, Any] = {name: frame[name] for name in frame.columns}
    data.update(columns)
    return pd.DataFrame(data, index=frame.index)
