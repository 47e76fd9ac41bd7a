"""Helpers to build Adult samples and job configs for the end-to-end tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
ADULT_CSV = ROOT / "data" / "adult" / "adult.csv"
ADULT_CONF = ROOT / "conf" / "adult_hpk.yaml"


def adult_sample(tmp: Path, rows: int, name: str = "adult_sample.csv") -> Path:
    """The header and the first ``rows`` rows of the bundled Adult CSV."""
    lines = ADULT_CSV.read_text(encoding="utf-8").splitlines()[: rows + 1]
    path = tmp / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def adult_config(tmp: Path, input_path: Path, out: Path, **overrides: Any) -> dict[str, Any]:
    """The demo config with absolute paths; ``overrides`` replace whole sections' keys."""
    raw = yaml.safe_load(ADULT_CONF.read_text(encoding="utf-8"))
    cfg = copy.deepcopy(raw)
    cfg["input"]["path"] = str(input_path)
    cfg["output"]["path"] = str(out)
    cfg["output"]["mode"] = "error"
    for attr in cfg["attributes"]:
        if "hierarchy" in attr:
            attr["hierarchy"] = str(ROOT / attr["hierarchy"])
    for section, values in overrides.items():
        if isinstance(values, dict):
            cfg[section].update(values)
        else:
            cfg[section] = values
    return cfg


def write_config(tmp: Path, cfg: dict[str, Any], name: str = "job.yaml") -> Path:
    """Write a config mapping as YAML."""
    path = tmp / name
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path
