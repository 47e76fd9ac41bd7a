"""Helpers to build Adult samples and job configs for the end-to-end tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
ADULT_CSV = ROOT / "data" / "adult" / "adult.csv"
ADULT_CONF = ROOT / "conf" / "adult_hpk.yaml"


def adult_sample(
    tmp: Path, rows: int, name: str = "adult_sample.csv", fnlwgt_digits: int | None = None
) -> Path:
    """The header and the first ``rows`` rows of the bundled Adult CSV.

    With ``fnlwgt_digits``, only rows whose fnlwgt has that many digits count
    (seed 003's setting keeps the 6-digit ones).
    """
    lines = ADULT_CSV.read_text(encoding="utf-8").splitlines()
    if fnlwgt_digits is not None:
        column = lines[0].split(",").index("fnlwgt")
        lines = lines[:1] + [
            line for line in lines[1:] if len(line.split(",")[column]) == fnlwgt_digits
        ]
    lines = lines[: rows + 1]
    path = tmp / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def adult_config(
    tmp: Path, input_path: Path, out: Path, conf: Path = ADULT_CONF, **overrides: Any
) -> dict[str, Any]:
    """A bundled config (the demo by default) with absolute paths.

    ``overrides`` replace whole sections' keys.
    """
    raw = yaml.safe_load(conf.read_text(encoding="utf-8"))
    cfg = copy.deepcopy(raw)
    cfg["input"]["path"] = str(input_path)
    cfg["output"]["path"] = str(out)
    cfg["output"]["mode"] = "error"
    for attr in cfg["attributes"]:
        if "hierarchy" in attr:
            attr["hierarchy"] = str(ROOT / attr["hierarchy"])
    for section, values in overrides.items():
        # A model or algorithm with a name is one variant of a union (its keys depend on
        # the name): it replaces the section; without a name it updates the current one.
        if isinstance(values, dict) and not (
            section in ("model", "algorithm") and "name" in values
        ):
            cfg[section].update(values)
        else:
            cfg[section] = values
    return cfg


def write_config(tmp: Path, cfg: dict[str, Any], name: str = "job.yaml") -> Path:
    """Write a config mapping as YAML."""
    path = tmp / name
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path
