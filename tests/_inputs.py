"""Small inputs for the config and bad-input tests: Adult samples and job configs.

Everything is written under a test's ``tmp_path``; the bundled data is only read.
"""

from __future__ import annotations

import copy
import csv
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
ADULT_CSV = ROOT / "data" / "adult" / "adult.csv"
HIERARCHIES = ROOT / "data" / "adult" / "hierarchies"
ADULT_CONF = ROOT / "conf" / "adult_hpk.yaml"

Row = dict[str, str]


@lru_cache(maxsize=1)
def _adult_head(limit: int = 2000) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Header and the first ``limit`` data rows of the bundled Adult CSV."""
    with ADULT_CSV.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = tuple(next(reader))
        rows = []
        for row in reader:
            rows.append(tuple(row))
            if len(rows) >= limit:
                break
    return header, tuple(rows)


def adult_header() -> list[str]:
    """Column names of the bundled Adult CSV."""
    return list(_adult_head()[0])


def adult_rows(n: int) -> list[Row]:
    """The first ``n`` rows of the bundled Adult CSV as dicts (fresh copies)."""
    header, rows = _adult_head()
    if n > len(rows):
        raise ValueError(f"only the first {len(rows)} rows are cached")
    return [dict(zip(header, r, strict=True)) for r in rows[:n]]


def write_rows(
    tmp_path: Path,
    rows: list[Row],
    name: str = "input.csv",
    columns: list[str] | None = None,
) -> Path:
    """Write rows (dicts) as a CSV with a header; ``columns`` defaults to Adult's."""
    columns = columns if columns is not None else adult_header()
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_adult_csv(
    tmp_path: Path,
    n: int,
    name: str = "input.csv",
    edit: Callable[[list[Row]], list[Row] | None] | None = None,
) -> Path:
    """Write the header and the first ``n`` Adult rows; ``edit`` may change the rows first.

    ``edit`` receives the list of row dicts and either mutates it in place
    (returning ``None``) or returns a replacement list.
    """
    rows = adult_rows(n)
    if edit is not None:
        replaced = edit(rows)
        if replaced is not None:
            rows = replaced
    return write_rows(tmp_path, rows, name)


def demo_config() -> dict[str, Any]:
    """``conf/adult_hpk.yaml`` as a raw mapping (relative paths as in the file)."""
    return yaml.safe_load(ADULT_CONF.read_text(encoding="utf-8"))


def make_config(
    tmp_path: Path,
    input_path: Path | str,
    out: Path | None = None,
    sections: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The demo config with absolute hierarchy paths, reading ``input_path``.

    Defaults chosen for small, fast inputs: ``model: {hpk, h=2, p=2, k=4}``,
    ``max_block_rows: 200`` and ``output.mode: error`` with ``output.path``
    ``tmp_path / "out"``. ``sections`` updates whole sections (a mapping
    value is merged into the section, anything else replaces it).
    """
    cfg = copy.deepcopy(demo_config())
    cfg["input"]["path"] = str(input_path)
    for attr in cfg["attributes"]:
        if "hierarchy" in attr:
            attr["hierarchy"] = str(HIERARCHIES / Path(attr["hierarchy"]).name)
    cfg["model"] = {"name": "hpk", "h": 2, "p": 2, "k": 4}
    cfg["partitioning"]["max_block_rows"] = 200
    cfg["output"]["path"] = str(out if out is not None else tmp_path / "out")
    cfg["output"]["mode"] = "error"
    for section, values in (sections or {}).items():
        # A model or algorithm with a name is one variant of a union (its keys depend on
        # the name): it replaces the section; without a name it updates the current one.
        renamed = (
            section in ("model", "algorithm") and isinstance(values, Mapping) and "name" in values
        )
        if isinstance(values, Mapping) and isinstance(cfg.get(section), dict) and not renamed:
            cfg[section].update(values)
        else:
            cfg[section] = values
    return cfg


def write_config(tmp_path: Path, cfg: Mapping[str, Any], name: str = "job.yaml") -> Path:
    """Write a config mapping as YAML and return its path."""
    path = tmp_path / name
    path.write_text(yaml.safe_dump(dict(cfg), sort_keys=False), encoding="utf-8")
    return path


def attribute(cfg: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The ``attributes`` entry of column ``name`` (to edit it in place)."""
    return next(a for a in cfg["attributes"] if a["name"] == name)


def leftovers(out: Path) -> list[Path]:
    """The output path (if it exists) and every ``<out>.__sparkanon_*`` sibling."""
    found = sorted(out.parent.glob(f"{out.name}.__sparkanon_*"))
    return ([out] if out.exists() else []) + found
