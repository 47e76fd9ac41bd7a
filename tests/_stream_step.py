"""A simple stream step for the streaming tests: it counts each key's records.

The state is the key's record count (one little-endian int64); the step outputs one row
per record it receives, with the record's ids, its place in the rows the step got and
the key's count before and after the batch. The factory returns a nested function, so
Spark's workers get it by value (``tests`` need not be importable there).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.engine.streaming import FILE_COLUMN, ROW_COLUMN, SPLIT_COLUMN, Step

INPUT_COLUMNS = [("rid", "long"), ("k", "string"), ("x", "double")]
"""The test records: a record id the test assigns, the key, a value."""
OUTPUT_SCHEMA = [
    ("key", "string"),
    ("rid", "long"),
    ("file", "string"),
    ("split", "long"),
    ("row", "long"),
    ("seq", "long"),
    ("count_before", "long"),
    ("count_after", "long"),
]
"""One output row per record."""


def count_state(count: int) -> bytes:
    """A count as the step's state bytes."""
    return np.array([count], dtype="<i8").tobytes()


def state_count(state: bytes) -> int:
    """The count in the step's state bytes."""
    return int(np.frombuffer(state, dtype="<i8")[0])


def counting_step(control: str | None = None) -> Step:
    """The counting step.

    Args:
        control: a folder; when given, the step touches ``running`` there each time it
            runs and, while a file ``slow`` exists there, sleeps 3 s (so a test can kill
            the query while a batch runs).
    """

    def step(key: Any, state: bytes | None, rows: pd.DataFrame) -> tuple[bytes, pd.DataFrame]:
        if control is not None:
            Path(control, "running").touch()
            if os.path.exists(os.path.join(control, "slow")):
                time.sleep(3)
        before = state_count(state) if state is not None else 0
        after = before + len(rows)
        out = pd.DataFrame(
            {
                "key": key,
                "rid": rows["rid"].to_numpy(),
                "file": rows[FILE_COLUMN].to_numpy(),
                "split": rows[SPLIT_COLUMN].to_numpy(),
                "row": rows[ROW_COLUMN].to_numpy(),
                "seq": np.arange(len(rows)),
                "count_before": before,
                "count_after": after,
            }
        )
        return count_state(after), out

    return step


def write_records(folder: Path, name: str, rids: range, keys: str) -> Path:
    """A CSV of records ``rid, k, x`` (keys cycled from ``keys``), written then renamed in.

    The rename makes the file appear whole, as a stream's source expects.
    """
    frame = pd.DataFrame(
        {
            "rid": list(rids),
            "k": [keys[i % len(keys)] for i in range(len(rids))],
            "x": [r * 0.5 for r in rids],
        }
    )
    tmp = folder.parent / f".{name}.tmp"
    frame.to_csv(tmp, index=False)
    os.replace(tmp, folder / name)
    return folder / name
