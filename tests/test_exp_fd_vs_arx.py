"""experiments/exp_fd_vs_arx.py: its settings, what it reads from the config and its table row.

The script's runs need ARX and Java (docs/benchmarks.md, section 14); these tests cover
the pure parts it builds its commands and table from.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from types import ModuleType

import pytest

from tests._adult import ROOT


def _load() -> ModuleType:
    return importlib.import_module("experiments.exp_fd_vs_arx")


EXP = _load()


def test_parse_settings_reads_k_and_maxsup() -> None:
    settings = EXP.parse_settings("5:0.02,10:0")
    assert settings == [EXP.Setting(5, 0.02), EXP.Setting(10, 0.0)]
    assert [s.label for s in settings] == ["k = 5, 2%", "k = 10, 0%"]


@pytest.mark.parametrize("text", ["5", "x:0.02", "1:0.02", "5:1.0", "5:-0.1"])
def test_parse_settings_rejects_bad_items(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=repr(text)):
        EXP.parse_settings(text)


def test_read_study_takes_the_config_quasi_identifiers_and_metric() -> None:
    study = EXP.read_study(ROOT / "conf" / "adult_fd_k.yaml")
    assert study.quasi_identifiers == (
        "age",
        "education",
        "marital-status",
        "native-country",
        "race",
        "sex",
        "workclass",
    )
    assert study.hierarchy_dir == ROOT / "data" / "adult" / "hierarchies"
    assert study.csv == ROOT / "data" / "adult" / "adult.csv"
    assert study.arx_metric == "precision-monotonic"


def test_read_study_refuses_a_metric_without_arx_counterpart(tmp_path: Path) -> None:
    text = (ROOT / "conf" / "adult_fd_k.yaml").read_text()
    config = tmp_path / "ncp.yaml"
    config.write_text(text.replace("metric: precision", "metric: ncp"))
    with pytest.raises(SystemExit, match="'ncp' has no ARX counterpart"):
        EXP.read_study(config)


def test_classpath_leaves_out_swt(tmp_path: Path) -> None:
    for jar in ("ant/hppc/hppc-0.6.0.jar", "ant/eclipse/org.eclipse.swt_3.1.jar"):
        (tmp_path / "lib" / jar).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "lib" / jar).touch()
    parts = EXP.arx_classpath(tmp_path, tmp_path / "driver").split(":")
    assert parts[:2] == [str(tmp_path / "driver"), str(tmp_path / "classes")]
    assert parts[2:] == [str(tmp_path / "lib" / "ant" / "hppc" / "hppc-0.6.0.jar")]


def _arx(run: int, seconds: float, node: list[int]) -> dict:
    return {"run": run, "seconds": seconds, "node": node, "suppressed": 3, "checked": 7}


def _ours(search: float, wall: float, node: list[int]) -> dict:
    return {"search": search, "wall": wall, "node": node, "suppressed": 3, "evaluated": 9}


def test_table_row_medians_warm_runs_and_compares_nodes() -> None:
    setting = EXP.Setting(10, 0.02)
    # Runs 1-3 (cold) are left out of the warm median: 0.2, 0.4, 0.6 -> 0.4.
    arx = [
        _arx(r, s, [1, 0]) for r, s in [(1, 9.0), (2, 5.0), (3, 3.0), (4, 0.2), (5, 0.6), (6, 0.4)]
    ]
    ours = [_ours(0.8, 3.0, [1, 0]), _ours(1.2, 4.0, [1, 0]), _ours(1.0, 5.0, [1, 0])]
    cells = [
        c.strip() for c in EXP.table_row(setting, arx, ours, 4, "1.0-2.0").strip("|").split("|")
    ]
    assert cells == [
        "k = 10, 2%",
        "0.400 (0.200-0.600)",
        "(1,0) 3 supp., 7 checked",
        "1.000 (0.800-1.200)",
        "4.00",
        "(1,0) 3 supp., 9 evaluated",
        "yes",
        "2.5",
        "1.0-2.0",
    ]
    ours[1]["node"] = [0, 1]
    cells = EXP.table_row(setting, arx, ours, 4, "x").split("|")
    assert cells[6].strip() == "(1,0) / (0,1) 3 supp., 9 evaluated"
    assert cells[7].strip() == "no"
