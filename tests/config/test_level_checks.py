"""Full-domain interval levels checked at load (issue 22): ``sparkanon validate`` refuses them.

Every check of ``attributes[].levels`` that needs no data runs when the config is
loaded, so ``load_config`` and ``sparkanon validate`` exit 2 naming the key, the bad
value and a fix, before any row is read; what needs the data (values outside the
breakpoints) is still the run's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sparkanon.cli import run_command, validate_command
from sparkanon.errors import EXIT_OK, EXIT_USER, ConfigError
from sparkanon.families import family_of, load_config
from tests._inputs import attribute, leftovers, make_config, write_adult_csv, write_config

EDUCATION_STARTS = [["HS-grad", "Bachelors"], ["Bachelors"]]
"""Nested ordinal breakpoints over the demo config's education order."""


def _fd_config(tmp_path: Path, rows: int = 20) -> dict[str, Any]:
    """The demo config as a valid full-domain job: age in widths, education in breakpoints."""
    cfg = make_config(
        tmp_path,
        write_adult_csv(tmp_path, rows),
        sections={
            "model": {"name": "k", "k": 2},
            "algorithm": {"name": "incognito"},
            "output": {"publish": "generalized"},
        },
    )
    attribute(cfg, "age")["levels"] = {"widths": [10, 20]}
    attribute(cfg, "education")["levels"] = {"breakpoints": EDUCATION_STARTS}
    return cfg


def _age(levels: dict[str, Any] | None) -> Callable[[dict[str, Any]], None]:
    def edit(cfg: dict[str, Any]) -> None:
        age = attribute(cfg, "age")
        age.pop("levels")
        if levels is not None:
            age["levels"] = levels

    return edit


def _education(levels: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(cfg: dict[str, Any]) -> None:
        attribute(cfg, "education")["levels"] = levels

    return edit


# case: (edit, the key named, further words of the message: the bad value, the fix)
BAD = {
    "continuous_without_levels": (
        _age(None),
        "attributes.0.levels",
        ["'age'", "needs interval levels", "levels: {widths: [5, 10, 20]}"],
    ),
    "breakpoint_not_a_number": (
        _age({"breakpoints": [[0, "forty", 100]]}),
        "attributes.0.levels.breakpoints.0",
        ["'forty' is not a number", "[0, 18, 65, 120]"],
    ),
    "breakpoint_not_finite": (
        _age({"breakpoints": [[0, float("nan"), 100]]}),
        "attributes.0.levels.breakpoints.0",
        ["nan is not a number", "finite numbers"],
    ),
    "one_edge": (
        _age({"breakpoints": [[0, 50, 100], [50]]}),
        "attributes.0.levels.breakpoints.1",
        ["[50]", "at least two edges"],
    ),
    "edges_not_increasing": (
        _age({"breakpoints": [[0, 50, 40, 100]]}),
        "attributes.0.levels.breakpoints.0",
        ["[0, 50, 40, 100]", "strictly increasing"],
    ),
    "edge_not_in_finer_level": (
        _age({"breakpoints": [[0, 50, 100], [0, 60, 100]]}),
        "attributes.0.levels.breakpoints.1",
        ["edge 60 is not an edge of level 0 ([0, 50, 100])", "so the intervals nest"],
    ),
    "last_edge_differs": (
        _age({"breakpoints": [[0, 50, 100], [0, 50]]}),
        "attributes.0.levels.breakpoints.1",
        ["[0, 50]", "first and last edges differ from level 0's", "same first and last"],
    ),
    "ordinal_width_not_whole": (
        _education({"widths": [1.5, 3]}),
        "attributes.1.levels.widths",
        ["1.5", "count ranks", "whole numbers"],
    ),
    "ordinal_breakpoint_not_in_order": (
        _education({"breakpoints": [["HS-grad", "College"]]}),
        "attributes.1.levels.breakpoints.0",
        ["'College' is not a value of the column's order", "attributes.1.order"],
    ),
    "ordinal_breakpoints_not_nested": (
        _education({"breakpoints": [["HS-grad", "Bachelors"], ["Masters"]]}),
        "attributes.1.levels.breakpoints.1",
        ["'Masters' begins an interval here but not at level 0", "so the intervals nest"],
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_level_error_is_refused_at_load_and_by_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    edit, key, words = BAD[case]
    cfg = _fd_config(tmp_path)
    edit(cfg)
    path = write_config(tmp_path, cfg)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert f"\n  {key}: " in text, text
    for word in words:
        assert word in text, f"{word!r} not in: {text}"
    assert validate_command(str(path), [], engine_name="local") == EXIT_USER
    out, stderr = capsys.readouterr()
    assert out == "", out
    assert stderr.startswith("sparkanon: error: invalid config"), stderr
    assert f"{key}: " in stderr, stderr
    assert leftovers(Path(cfg["output"]["path"])) == []


def test_level_error_through_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A valid config made bad by ``--set`` is refused the same way."""
    path = str(write_config(tmp_path, _fd_config(tmp_path)))
    bad = "attributes.1.levels.breakpoints.1=[Masters]"
    assert validate_command(path, [bad], engine_name="local") == EXIT_USER
    assert "attributes.1.levels.breakpoints.1: 'Masters'" in capsys.readouterr().err
    unset = ["algorithm.name=samarati", "attributes.0.levels=null"]
    assert validate_command(path, unset, engine_name="local") == EXIT_USER
    assert "attributes.0.levels: full-domain generalization needs" in capsys.readouterr().err


def test_valid_levels_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: nested widths and breakpoints load and validate (exit 0)."""
    cfg = _fd_config(tmp_path)
    attribute(cfg, "age")["levels"] = {"breakpoints": [[0, 30, 60, 100], [0, 60, 100]]}
    path = write_config(tmp_path, cfg)
    config = load_config(path)
    assert family_of(config).name == "full_domain"
    assert config.attributes[0].levels.breakpoints == ((0, 30, 60, 100), (0, 60, 100))
    assert validate_command(str(path), [], engine_name="local") == EXIT_OK
    assert '"input_columns"' in capsys.readouterr().out


def test_breakpoints_missing_the_data_are_the_runs_to_find(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Values outside the breakpoints need the data: validate passes, the run exits 2."""
    cfg = _fd_config(tmp_path)
    # The first 20 Adult rows hold ages 23 .. 59, below 30 among them.
    attribute(cfg, "age")["levels"] = {"breakpoints": [[30, 45, 90]]}
    path = str(write_config(tmp_path, cfg))
    assert validate_command(path, [], engine_name="local") == EXIT_OK
    capsys.readouterr()
    assert run_command(path, [], engine_name="local") == EXIT_USER
    err = capsys.readouterr().err
    assert "attributes.0.levels.breakpoints: the data's minimum of 'age'" in err, err
    assert "widen the first and last edges" in err, err
    assert leftovers(Path(cfg["output"]["path"])) == []
