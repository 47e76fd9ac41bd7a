"""What every stage shares: stage timing and the collection of small statistics."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from sparkanon.engine.base import Engine, Table

log = logging.getLogger("sparkanon")

MAX_STAT_ROWS = 1_000_000
"""Largest statistics table the driver accepts (per-block or per-value rows)."""


@dataclass
class StageTimer:
    """Seconds per stage, logged and reported in ``metrics.json``.

    A stage that persists a table materialises it inside its own timer
    (:meth:`~sparkanon.engine.base.Engine.persist` with ``materialize``), so the work
    is charged to the stage that does it.
    """

    engine: Engine
    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time, log and label (Spark UI job description) the work done inside."""
        start = time.perf_counter()
        log.info("stage %s: start", name)
        with self.engine.stage(name):
            yield
        elapsed = time.perf_counter() - start
        self.seconds[name] = round(self.seconds.get(name, 0.0) + elapsed, 3)
        log.info("stage %s: %.2fs", name, elapsed)


def one_row(engine: Engine, table: Table, aggs: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """Aggregate a whole table to one row of Python scalars (``None`` for missing)."""
    row = engine.collect_small(engine.aggregate(table, [], aggs), 1).iloc[0]
    return {
        k: (None if pd.isna(v) else v.item() if hasattr(v, "item") else v) for k, v in row.items()
    }
