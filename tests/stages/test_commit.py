"""The commit of a path output: an overwrite cut between its two renames is finished next run."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkanon.engine.local import LocalEngine
from sparkanon.stages.commit import recover_interrupted_commit
from tests._inputs import mark_as_output


def _output(folder: Path, k: int, complete: bool = True) -> Path:
    """A path output as sparkanon writes it (its marker included)."""
    mark_as_output(folder)
    (folder / "data").mkdir()
    (folder / "data" / "part-0.csv").write_text(f"k\n{k}\n", encoding="utf-8")
    if complete:
        (folder / "metrics.json").write_text(f'{{"k": {k}}}', encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("staged_complete", "direction", "k"), [(True, "forward", 6), (False, "back", 4)]
)
def test_interrupted_overwrite_is_finished(
    tmp_path: Path, staged_complete: bool, direction: str, k: int
) -> None:
    out = tmp_path / "out"
    _output(tmp_path / "out.__sparkanon_old_aaaa", 4)  # the previous output, moved aside
    _output(tmp_path / "out.__sparkanon_tmp_bbbb", 6, complete=staged_complete)
    assert recover_interrupted_commit(LocalEngine(), str(out)) == direction
    assert (out / "data" / "part-0.csv").read_text(encoding="utf-8") == f"k\n{k}\n"
    assert not (tmp_path / "out.__sparkanon_old_aaaa").exists()


def test_nothing_to_recover(tmp_path: Path) -> None:
    _output(tmp_path / "out", 4)
    assert recover_interrupted_commit(LocalEngine(), str(tmp_path / "out")) is None
    assert recover_interrupted_commit(LocalEngine(), str(tmp_path / "missing")) is None


def test_an_old_output_left_aside_after_the_move_is_deleted(tmp_path: Path) -> None:
    _output(tmp_path / "out", 6)  # the new output, in place
    _output(tmp_path / "out.__sparkanon_old_aaaa", 4)  # killed before deleting the old one
    assert recover_interrupted_commit(LocalEngine(), str(tmp_path / "out")) == "cleaned"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_job_finishes_the_interrupted_overwrite_before_its_own(tmp_path: Path) -> None:
    from sparkanon.cli import run_command
    from tests._adult import adult_config, adult_sample, write_config

    raw = adult_config(
        tmp_path, adult_sample(tmp_path, 300), tmp_path / "out", model={"name": "k", "k": 4}
    )
    raw["output"]["mode"] = "overwrite"
    _output(tmp_path / "out.__sparkanon_old_aaaa", 4)
    _output(tmp_path / "out.__sparkanon_tmp_bbbb", 6)
    assert run_command(str(write_config(tmp_path, raw)), [], engine_name="local") == 0
    names = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out"))
    assert names == ["out"]
    assert (tmp_path / "out" / "config.yaml").exists()


# --------------------------------------------------------------- table locks: owner gone?


def _owner(**changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "run": "r1",
        "host": "h1",
        "boot_id": "b1",
        "pid": 4242,
        "pid_start": "1000",
        "started": 100.0,
    }
    return {**record, **changes}


@pytest.mark.parametrize(
    ("owner", "heartbeat", "probe", "gone"),
    [
        (_owner(), None, None, "pid 4242 is not running on host h1"),
        (_owner(), None, "2000", "pid 4242 on host h1 is now another process"),
        (_owner(), None, "1000", None),  # alive: the same process
        (_owner(pid_start=""), None, "2000", None),  # start unknown: a running pid is alive
        (_owner(boot_id="b0"), None, "1000", "host h1 rebooted since the run started"),
        # Another host: only the heartbeat tells (expiry 600 s, now = 1000 s).
        (_owner(host="h2"), 500.0, None, None),
        (_owner(host="h2"), 300.0, None, "no heartbeat from host h2 for 700 s (expiry 600 s)"),
        (_owner(host="h2"), None, None, "no heartbeat from host h2 for 900 s (expiry 600 s)"),
        ({"output": "db.t"}, None, None, None),  # no owner record: never taken over
    ],
)
def test_lock_owner_gone(
    owner: dict[str, object], heartbeat: float | None, probe: str | None, gone: str | None
) -> None:
    from sparkanon.stages.table_lock import gone_reason

    assert gone_reason(owner, heartbeat, 1000.0, "h1", "b1", 600.0, lambda pid: probe) == gone


def test_another_hosts_lock_never_expires_with_expiry_zero() -> None:
    from sparkanon.stages.table_lock import gone_reason

    assert gone_reason(_owner(host="h2"), 0.0, 1e9, "h1", "b1", 0.0, lambda pid: None) is None


def test_process_start_tells_a_live_process_from_a_dead_one() -> None:
    import os
    import subprocess
    import sys

    from sparkanon.stages.table_lock import process_start

    mine = process_start(os.getpid())
    assert mine is not None and mine == process_start(os.getpid())
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert process_start(int(child.stdout)) is None
