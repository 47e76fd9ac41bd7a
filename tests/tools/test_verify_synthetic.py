"""``sparkanon/tools/verify_release.py`` on a condensation release, independently of sparkanon.

A committed release of ``conf/adult_condense_mixed.yaml`` on an Adult sample passes; the
same release tampered (records dropped, a group id column added, a synthetic record
replaced by a rare input record, a category the input never holds, a shifted mean) fails
with the matching ``FAILED`` line.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sparkanon.cli import run_command
from sparkanon.errors import EXIT_OK
from sparkanon.tools import verify_release as verify
from tests._adult import ROOT, adult_config
from tests._inputs import write_adult_csv, write_config

CONF = ROOT / "conf" / "adult_condense_mixed.yaml"


def test_verify_release_imports_nothing_else_of_sparkanon() -> None:
    """The check is independent of the job's code: no import of sparkanon in its module."""
    import ast

    tree = ast.parse(Path(verify.__file__).read_text(encoding="utf-8"))
    imported = [
        name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for name in (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        )
    ]
    assert imported and not [n for n in imported if n.split(".")[0] == "sparkanon"]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("condense_release")
    data = write_adult_csv(base, 2000)
    cfg = adult_config(base, data, base / "out", CONF)
    assert run_command(str(write_config(base, cfg)), [], engine_name="local") == EXIT_OK
    return base / "out"


def _edited(release: Path, tmp_path: Path, change: Any) -> Path:
    out = tmp_path / "release"
    shutil.copytree(release, out)
    (part,) = sorted((out / "data").glob("*.parquet"))
    frame = pd.read_parquet(part)
    change(frame, out)
    frame.to_parquet(part, index=False)
    return out


def test_a_committed_condensation_release_passes(
    release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert verify.main([str(release)]) == 0
    out = capsys.readouterr().out
    assert "violations=0" in out and "of a combination fewer than k=10 records share" in out


def _drop_records(frame: pd.DataFrame, out: Path) -> None:
    frame.drop(index=frame.index[:3], inplace=True)


def _add_group_ids(frame: pd.DataFrame, out: Path) -> None:
    frame["group"] = range(len(frame))


def _shift_a_mean(frame: pd.DataFrame, out: Path) -> None:
    frame["age"] = frame["age"] + 3.0


def _copy_a_rare_record(frame: pd.DataFrame, out: Path) -> None:
    cfg = verify.yaml.safe_load((out / "config.yaml").read_text(encoding="utf-8"))
    source = pd.read_csv(cfg["input"]["path"], dtype=str, skipinitialspace=True)
    names = ["age", "education-num", "hours-per-week", "sex", "race", "marital-status"]
    usable = source[~(source[names] == "?").any(axis=1)]
    counts = usable.groupby(names).size()
    rare = counts[counts == 1].index[0]
    for name, value in zip(names, rare, strict=True):
        frame.loc[frame.index[0], name] = (
            float(value) if name in ("age", "education-num", "hours-per-week") else value
        )


def _unknown_category(frame: pd.DataFrame, out: Path) -> None:
    frame.loc[frame.index[0], "race"] = "Martian"


@pytest.mark.parametrize(
    ("change", "failure"),
    [
        (_drop_records, "rows: 1997 synthetic records, metrics.json rows_out=2000"),
        (_add_group_ids, "groups: a group id column is published"),
        (_shift_a_mean, "age: synthetic mean"),
        (_copy_a_rare_record, "copies: 1 synthetic records copy a rare input record"),
        (_unknown_category, "race: 1 published values not in the input"),
    ],
    ids=["dropped_records", "group_ids", "shifted_mean", "rare_copy", "unknown_category"],
)
def test_a_tampered_release_fails(
    release: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Any,
    failure: str,
) -> None:
    out = _edited(release, tmp_path, change)
    assert verify.main([str(out)]) == 1
    assert f"FAILED {failure}" in capsys.readouterr().out
