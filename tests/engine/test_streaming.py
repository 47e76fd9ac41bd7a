"""The stateful streaming engine (``sparkanon.engine.streaming``).

Pure checks of the wrapper and the spec; one in-process ``available_now`` run with the
shared session; one kill-and-restart run in subprocesses (exactly once).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparkanon.engine.expr import Arith, Col, Lit
from sparkanon.engine.streaming import (
    FILE_COLUMN,
    RECORD_COLUMNS,
    ROW_COLUMN,
    SPLIT_COLUMN,
    StreamSpec,
    check_spec,
    initial_states,
    keyed_runner,
    read_sink,
    read_state,
    run_stateful_stream,
)
from sparkanon.errors import ConfigError
from tests._inputs import ROOT
from tests._stream_step import (
    INPUT_COLUMNS,
    OUTPUT_SCHEMA,
    count_state,
    counting_step,
    state_count,
    write_records,
)


def _spec(tmp_path: Path, **changes: object) -> StreamSpec:
    fields: dict[str, object] = {
        "source": str(tmp_path / "in"),
        "source_format": "csv",
        "options": {"header": "true"},
        "columns": INPUT_COLUMNS,
        "key": "k",
        "sink": str(tmp_path / "out"),
        "sink_format": "parquet",
        "checkpoint": str(tmp_path / "ck"),
    }
    fields.update(changes)
    return StreamSpec(**fields)  # type: ignore[arg-type]


class _State:
    """A stand-in for Spark's GroupState (the attributes the wrapper uses)."""

    def __init__(self, value: bytes | None) -> None:
        self.exists = value is not None
        self.get = (value,)
        self.updated: tuple | None = None

    def update(self, value: tuple) -> None:
        self.updated = value


def _rows(order: list[tuple[str, int, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rid": range(len(order)),
            "k": "a",
            "x": 0.0,
            FILE_COLUMN: [f for f, _, _ in order],
            SPLIT_COLUMN: [s for _, s, _ in order],
            ROW_COLUMN: [r for _, _, r in order],
        }
    )


def test_runner_sorts_rows_by_record_id_and_threads_state() -> None:
    """The step gets a key's rows in (file, split, row) order, whatever chunks they came in."""
    shuffled = [("f2", 0, 1), ("f1", 100, 0), ("f1", 0, 1), ("f2", 0, 0), ("f1", 0, 0)]
    rows = _rows(shuffled)
    columns = [n for n, _ in INPUT_COLUMNS] + list(RECORD_COLUMNS)
    run = keyed_runner(counting_step(), columns, OUTPUT_SCHEMA, {"a": count_state(7)})
    fresh = _State(None)
    (out,) = run((np.str_("a"),), iter([rows.iloc[:2], rows.iloc[2:]]), fresh)
    got = list(zip(out["file"], out["split"], out["row"], strict=True))
    assert got == sorted(shuffled)
    assert out["seq"].tolist() == [0, 1, 2, 3, 4]
    assert (out["count_before"] == 7).all()  # the initial state, Spark holding none
    assert state_count(fresh.updated[0]) == 12
    held = _State(count_state(3))
    (out,) = run(("a",), iter([rows]), held)
    assert (out["count_before"] == 3).all()  # Spark's state wins over the initial one
    assert state_count(held.updated[0]) == 8


def test_runner_refuses_a_state_that_is_not_bytes() -> None:
    """A step returning anything but bytes as its state fails the batch, nothing stored."""
    columns = [n for n, _ in INPUT_COLUMNS] + list(RECORD_COLUMNS)
    run = keyed_runner(lambda k, s, r: (len(r), r.iloc[:0]), columns, OUTPUT_SCHEMA, {})
    state = _State(None)
    with pytest.raises(TypeError, match="int state"):
        list(run(("a",), iter([_rows([("f", 0, 0)])]), state))
    assert state.updated is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"source_format": "json"}, "source_format 'json'"),
        ({"sink_format": "delta"}, "sink_format 'delta'"),
        ({"trigger": "soon"}, "trigger 'soon'"),
        ({"max_files_per_trigger": 0}, "max_files_per_trigger 0"),
        ({"key": "kk"}, "column 'kk'"),
        ({"columns": [("rid", "long"), (ROW_COLUMN, "long")]}, "names the engine adds"),
        ({"sink": "/same", "checkpoint": "/same"}, "three different folders"),
    ],
)
def test_spec_refused_naming_the_field(tmp_path: Path, change: dict, message: str) -> None:
    """A spec the engine cannot run is a ConfigError naming the field and value."""
    with pytest.raises(ConfigError, match=message):
        check_spec(_spec(tmp_path, **change), OUTPUT_SCHEMA)


def test_initial_states_refuses_duplicate_keys() -> None:
    """Two initial states for one key are refused (which one would win is undefined)."""
    frame = pd.DataFrame({"key": ["a", "a"], "state": [b"1", b"2"]})
    with pytest.raises(ConfigError, match="more than once"):
        initial_states(frame)
    assert initial_states(pd.DataFrame({"key": [np.int64(3)], "state": [b"x"]})) == {3: b"x"}


@pytest.mark.spark
def test_available_now_batches_state_and_restart(spark: object, tmp_path: Path) -> None:
    """``available_now`` consumes the source in batches; a second run takes only new files.

    Two files, one per batch; key ``a`` starts from an initial state of 100. Every record
    is output once, in file order within its key, with its position in its file as its
    row id; the counts carry over batches and over the restart; the progress figures
    add up; the state data source reads the final counts.
    """
    (tmp_path / "in").mkdir()
    write_records(tmp_path / "in", "p1.csv", range(0, 7), "ab")
    write_records(tmp_path / "in", "p2.csv", range(7, 12), "abc")
    spec = _spec(tmp_path, max_files_per_trigger=1)
    initial = pd.DataFrame({"key": ["a"], "state": [count_state(100)]})
    seen: list[int] = []
    first = run_stateful_stream(
        spark,
        spec,
        counting_step(),
        OUTPUT_SCHEMA,
        initial_state=initial,
        batch_hook=lambda b: seen.append(b.batch_id),
    )
    assert [b.batch_id for b in first.batches] == seen == [0, 1]
    assert [b.input_rows for b in first.batches] == [7, 5]
    assert first.rows_in == first.rows_out == 12
    assert not first.stopped

    write_records(tmp_path / "in", "p3.csv", range(12, 16), "bd")
    second = run_stateful_stream(spark, spec, counting_step(), OUTPUT_SCHEMA, initial_state=initial)
    assert [b.batch_id for b in second.batches] == [2]
    assert second.rows_in == second.rows_out == 4

    out = read_sink(spark, spec, OUTPUT_SCHEMA).toPandas()
    assert sorted(out["rid"]) == list(range(16))
    assert out["file"].str.endswith(".csv").all() and (out["split"] == 0).all()
    # the row id is the record's position among its file's data rows
    starts = {"p1.csv": 0, "p2.csv": 7, "p3.csv": 12}
    for rid, file, row in zip(out["rid"], out["file"], out["row"], strict=True):
        assert rid == starts[file.rsplit("/", 1)[1]] + row
    # within a key and a batch, the step saw the records in file order
    for _, part in out.groupby(["key", "count_before"]):
        assert part.sort_values("seq")["rid"].is_monotonic_increasing
    expected = {"a": 100 + 4 + 2, "b": 3 + 2 + 2, "c": 1, "d": 2}
    finals = out.groupby("key")["count_after"].max().to_dict()
    assert finals == expected
    state = read_state(spark, spec.checkpoint).toPandas()
    assert {
        k: state_count(bytes(s)) for k, s in zip(state["key"], state["state"], strict=True)
    } == expected


@pytest.mark.spark
def test_key_as_engine_expression(spark: object, tmp_path: Path) -> None:
    """A key given as an engine expression is computed per row (here ``rid // 5``).

    Restarting its checkpoint with a key of another type is a ConfigError.
    """
    (tmp_path / "in").mkdir()
    write_records(tmp_path / "in", "p1.csv", range(0, 12), "ab")
    key = Arith("//", Col("rid"), Lit(5))
    schema = [("key", "long")] + [c for c in OUTPUT_SCHEMA if c[0] != "key"]
    spec = _spec(tmp_path, key=key)
    result = run_stateful_stream(spark, spec, counting_step(), schema)
    assert result.rows_out == 12
    out = read_sink(spark, spec, schema).toPandas()
    assert (out["key"] == out["rid"] // 5).all()
    assert out.groupby("key")["count_after"].max().to_dict() == {0: 5, 1: 5, 2: 2}
    # the checkpoint holds long keys: a restart keyed by a string column is refused
    write_records(tmp_path / "in", "p2.csv", range(12, 14), "ab")
    with pytest.raises(ConfigError, match="another key or state schema"):
        run_stateful_stream(spark, _spec(tmp_path), counting_step(), OUTPUT_SCHEMA)


def _child(folder: Path, trigger: str) -> subprocess.Popen:
    """The stream in a process group of its own (so a kill takes its JVM and workers too)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "_stream_child.py"), str(folder), trigger],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        start_new_session=True,
    )


def _wait_for(done: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class _Lines:
    """The lines a child prints, read in a thread (a pipe read must not block the test)."""

    def __init__(self, child: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(child,), daemon=True)
        self._thread.start()

    def _read(self, child: subprocess.Popen) -> None:
        for line in child.stdout:  # type: ignore[union-attr]
            self.lines.append(line.strip())

    def batches(self) -> list[int]:
        return [int(line.split()[1]) for line in self.lines if line.startswith("batch ")]


@pytest.mark.spark
@pytest.mark.slow
def test_exactly_once_over_a_kill_mid_batch_and_a_restart(spark: object, tmp_path: Path) -> None:
    """SIGKILL while a batch runs, restart on the same checkpoint: nothing lost or doubled.

    Round 1: two files, streamed with a 1-second processing-time trigger (one file a
    batch) in a subprocess until both batches are committed. Round 2: a third file with
    the step made slow; the whole process group (driver, JVM, Python workers) is killed
    with SIGKILL while the step runs. Restart with ``available_now`` in this process after
    a fourth file is dropped: the killed batch is replayed and the fourth file streamed. Every record is in the
    sink exactly once, each key's final state count is its record count (plus the
    initial 100 of key ``a``), read both from the output rows and from the state store.
    """
    folder = tmp_path
    for name in ("in", "ctl"):
        (folder / name).mkdir()
    write_records(folder / "in", "r1.csv", range(0, 9), "abc")
    write_records(folder / "in", "r2.csv", range(9, 15), "ab")
    child = _child(folder, "1 second")
    try:
        lines = _Lines(child)
        _wait_for(lambda: len(lines.batches()) >= 2, 90, "round 1's two batches")
        (folder / "ctl" / "slow").touch()
        (folder / "ctl" / "running").unlink()
        write_records(folder / "in", "r3.csv", range(15, 22), "bcd")
        _wait_for((folder / "ctl" / "running").exists, 30, "the step of round 2 to run")
        time.sleep(0.5)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert lines.batches() == [0, 1]  # the batch of r3 never ended
    # killed inside batch 2: its offsets were logged, its commit was not
    assert (folder / "ck" / "offsets" / "2").exists()
    assert not (folder / "ck" / "commits" / "2").exists()
    (folder / "ctl" / "slow").unlink()
    write_records(folder / "in", "r4.csv", range(22, 26), "ad")
    # the restart, in this process's session set to 4 shuffle partitions: the checkpoint keeps 2
    spec = _spec(folder, max_files_per_trigger=1)
    initial = pd.DataFrame({"key": ["a"], "state": [count_state(100)]})
    step = counting_step(str(folder / "ctl"))
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "4")
    try:
        again = run_stateful_stream(spark, spec, step, OUTPUT_SCHEMA, initial_state=initial)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    assert [b.batch_id for b in again.batches] == [2, 3]
    assert again.rows_in == again.rows_out == 7 + 4

    sink = read_sink(spark, spec, OUTPUT_SCHEMA).toPandas()
    assert sorted(sink["rid"]) == list(range(26))  # each record once: none lost, none doubled
    records = pd.concat([pd.read_csv(folder / "in" / f"r{i}.csv") for i in range(1, 5)])
    expected = records.groupby("k").size().to_dict()
    expected["a"] += 100
    assert sink.groupby("key")["count_after"].max().to_dict() == expected
    state = read_state(spark, spec.checkpoint).toPandas()
    counts = {k: state_count(bytes(s)) for k, s in zip(state["key"], state["state"], strict=True)}
    assert counts == expected
