"""The commit of a path output: an overwrite cut between its two renames is finished next run."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkanon.engine.local import LocalEngine
from sparkanon.stages.commit import recover_interrupted_commit


def _output(folder: Path, k: int, complete: bool = True) -> Path:
    (folder / "data").mkdir(parents=True)
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
