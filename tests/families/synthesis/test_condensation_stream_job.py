"""``sparkanon stream``: dynamic condensation over arriving files, end to end, and its bad input.

An initial static batch seeds the groups; files arriving in the source folder join them;
due groups release synthetic records to the sink. A second run with the same checkpoint
continues: records counted once (the state's accounting), every group's released count
equal to its synthetic records in the sink. The engine's kill-and-restart test
(``tests/engine/test_streaming.py``) covers a process killed mid-batch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sparkanon.cli import main
from sparkanon.errors import EXIT_OK, EXIT_USER
from sparkanon.randomness import RunKey, write_key_file
from tests._inputs import ROOT, correlated_people, csv_input, write_config

COLUMNS = ["age", "income_k", "hours"]


def records(n: int, seed: int) -> pd.DataFrame:
    """Arriving records (:func:`tests._inputs.correlated_people`)."""
    return correlated_people(n, seed)


def stream_config(tmp_path: Path, **stream: Any) -> dict[str, Any]:
    initial = tmp_path / "initial.csv"
    records(120, 0).to_csv(initial, index=False)
    return {
        "input": csv_input(initial),
        "attributes": [{"name": c, "kind": "continuous"} for c in COLUMNS],
        "sensitive": {"name": "label"},
        "model": {"name": "k", "k": 5},
        "algorithm": {"name": "condensation"},
        "output": {"path": str(tmp_path / "sink"), "format": "parquet"},
        "stream": {"source": str(tmp_path / "in"), "checkpoint": str(tmp_path / "ck")} | stream,
        "seed": 3,
    }


def _stream(
    tmp_path: Path, cfg: dict[str, Any], capsys: pytest.CaptureFixture[str], *args: str
) -> Any:
    code = main(["stream", str(write_config(tmp_path, cfg)), "--quiet", *args])
    out = capsys.readouterr()
    return code, out


@pytest.mark.spark
def test_stream_condenses_arriving_files_and_continues_after_a_restart(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in"
    source.mkdir()
    for i in range(2):
        records(60, 10 + i).to_csv(source / f"part-{i}.csv", index=False)
    cfg = stream_config(tmp_path, max_files_per_trigger=1)
    key_file = str(write_key_file(tmp_path / "stream.key"))
    code, out = _stream(tmp_path, cfg, capsys, "--key-file", key_file)
    assert code == EXIT_OK, out.err
    first = json.loads(out.out)
    state = first["state"]
    assert first["this_run"]["batches"] == 2 and first["this_run"]["rows_in"] == 120
    assert state["records_seen"] == 240 == state["records_in_groups"] + state["records_suppressed"]
    assert state["smallest_group"] >= 5

    records(60, 12).to_csv(source / "part-2.csv", index=False)
    code, out = _stream(tmp_path, cfg, capsys, "--key-file", key_file)
    assert code == EXIT_OK, out.err
    second = json.loads(out.out)
    assert second["this_run"]["batches"] == 1 and second["this_run"]["rows_in"] == 60
    assert second["state"]["records_seen"] == 300  # the restart counted each record once
    assert second["state"]["batches"] == 3

    sink = spark.read.parquet(str(tmp_path / "sink")).toPandas()  # through _spark_metadata
    assert list(sink.columns) == COLUMNS  # no group id, no batch
    assert len(sink) == second["state"]["records_released"]
    assert first["this_run"]["synthetic_records_out"] + second["this_run"][
        "synthetic_records_out"
    ] == len(sink)
    assert first["stream"]["randomness"] == {"key": "user", "label": "stream.key"}
    key = RunKey.from_file(tmp_path / "stream.key")
    assert not any(
        key.appears_in(f.read_bytes())
        for f in tmp_path.rglob("*")
        if f.is_file() and f.name != "stream.key"
    )
    # Synthetic values stay near the data (means within the records' spread).
    original = pd.concat([records(120, 0), *(records(60, 10 + i) for i in range(3))])
    for c in COLUMNS:
        assert abs(sink[c].mean() - original[c].mean()) < original[c].std()


BAD = [
    ("no_checkpoint", {"stream": None}, "stream.checkpoint"),
    ("nominal_attribute", {"attributes": [{"name": "age", "kind": "continuous"},
                                          {"name": "label2", "kind": "nominal"}]},
     "attributes.1.kind"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "key"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_stream_settings_exit_2_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], key: str
) -> None:
    cfg = stream_config(tmp_path)
    if changes.get("stream", 0) is None:
        cfg["stream"] = {"source": str(tmp_path / "in")}
    else:
        cfg |= changes
    code, out = _stream(tmp_path, cfg, capsys)
    assert code == EXIT_USER
    assert key in out.err, out.err
    assert not (tmp_path / "sink").exists()


def _wait_for(done: Any, seconds: float, what: str) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.spark
@pytest.mark.slow
def test_stream_killed_mid_batch_restarts_with_exact_accounting(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sparkanon stream`` killed (SIGKILL, its process group) while a batch runs.

    Two files are streamed and committed by a 1-second processing-time trigger in a
    process of its own; a third, larger file is dropped and the process group killed as
    soon as that batch's offsets are logged (before its commit). The restart, with
    ``available_now`` on the same checkpoint, replays it: every record is counted once in
    the state, and the sink holds exactly the synthetic records the state says were
    released.
    """
    import os
    import signal
    import subprocess
    import sys

    source = tmp_path / "in"
    source.mkdir()
    cfg = stream_config(tmp_path, max_files_per_trigger=1, trigger="1 second")
    config = write_config(tmp_path, cfg)
    records(60, 20).to_csv(source / "part-0.csv", index=False)
    records(60, 21).to_csv(source / "part-1.csv", index=False)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "sparkanon.cli", "stream", str(config), "--quiet",
         "--master", "local[2]"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )  # fmt: skip
    commits = tmp_path / "ck" / "commits"
    offsets = tmp_path / "ck" / "offsets"
    try:
        _wait_for(lambda: (commits / "1").exists(), 120, "the first two batches' commits")
        records(20_000, 22).to_csv(source / "part-2.csv", index=False)
        _wait_for(lambda: (offsets / "2").exists(), 60, "the third batch to start")
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert not (commits / "2").exists()  # killed inside batch 2
    restart = stream_config(tmp_path, max_files_per_trigger=1)
    code, out = _stream(tmp_path, restart, capsys)
    assert code == EXIT_OK, out.err
    report = json.loads(out.out)
    assert report["this_run"]["rows_in"] == 20_000  # the replayed batch only
    state = report["state"]
    assert state["records_seen"] == 120 + 60 + 60 + 20_000  # each record counted once
    assert state["records_in_groups"] + state["records_suppressed"] == state["records_seen"]
    sink = spark.read.parquet(str(tmp_path / "sink")).toPandas()  # committed files only
    assert len(sink) == state["records_released"]
    assert not sink.duplicated().any()
