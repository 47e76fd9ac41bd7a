"""The golden suite's machinery: run a bundled config's case and digest what it publishes.

A case (one entry of ``tests/golden/configs.json``) names a config of ``conf/``, the
input it runs on (a sample of the bundled Adult rows or the config's own bundled data)
and the ``--set`` overrides that keep a run on that input small and meaningful. It runs
through the command line (``sparkanon run``), the interface every job family shares,
so the suite does not depend on how the layer under it is arranged.

What is pinned per case: a digest of every published table (order-independent: the
rows' cells as text, floats to 12 significant digits, sorted, then SHA-256) and the
headline metrics of ``metrics.json`` (:func:`headline`). ``scripts/update_golden.py``
writes the file; the tests only compare.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import math
import numbers
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_FILE = ROOT / "tests" / "golden" / "configs.json"
ADULT_CSV = ROOT / "data" / "adult" / "adult.csv"

HEADLINE_KEYS = (
    "rows_in",
    "rows_out",
    "rows_suppressed",
    "rows_reconciled",
    "classes",
    "published_classes",
    "class_size",
    "groups",
    "synthetic_records",
    "tbuckets",
    "blocks",
    "infeasible_blocks",
    "repair_merges",
    "R_IL",
    "EPP",
    "AVG_IL",
    "AVG_Ent",
    "NCP",
    "NCP_published",
    "GCP",
    "CAVG",
    "DM",
    "precision",
    "item_ncp",
    "loss_with_suppressed",
    "are",
    "achieved",
    "node",
    "height",
    "verified",
    "violations",
)
"""The metrics a case pins (when present), besides every ``suppressed_*`` key."""

_NA = "\x00NA"
"""The text of a missing cell (no real value reads as it)."""


def headline(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The headline metrics of a run: row counts by cause, classes, losses, guarantee.

    Args:
        metrics: the job's ``metrics.json``.

    Returns:
        The keys of :data:`HEADLINE_KEYS` and every ``suppressed_*`` key the run wrote.
    """
    keys = [k for k in HEADLINE_KEYS if k in metrics]
    keys += sorted(k for k in metrics if k.startswith("suppressed_"))
    return {k: metrics[k] for k in keys}


def cell_text(value: Any) -> str:
    """One cell as engine-independent text: floats to 12 significant digits.

    Integers and integral floats read alike (``3`` and ``3.0`` give ``"3"``), so an
    engine's choice of integer or double type does not change a digest.
    """
    if value is None:
        return _NA
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return _NA if math.isnan(number) else format(number, ".12g")
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return "[" + ",".join(cell_text(v) for v in items) + "]"
    if value is pd.NA or value is pd.NaT:
        return _NA
    return str(value)


def read_table(path: Path) -> pd.DataFrame:
    """A published table (a folder of Parquet or CSV part files, or one file)."""
    files = [path] if path.is_file() else sorted(path.iterdir())
    parquet = [f for f in files if f.suffix == ".parquet"]
    if parquet:
        return pd.concat([pd.read_parquet(f) for f in parquet], ignore_index=True)
    csv = [f for f in files if f.suffix == ".csv" or f.name.startswith("part-")]
    frames = [pd.read_csv(f, dtype=str, keep_default_na=False) for f in csv]
    return pd.concat(frames, ignore_index=True)


def table_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of a table's column names and its rows, whatever their order."""
    rows = sorted("\x1f".join(cell_text(v) for v in row) for row in frame.itertuples(index=False))
    text = "\x1f".join(map(str, frame.columns)) + "\n" + "\n".join(rows)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def published_digests(out: Path) -> dict[str, dict[str, Any]]:
    """Rows and digest of every table a job published under ``out`` (by folder name)."""
    tables = sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith("."))
    digests = {}
    for table in tables:
        frame = read_table(table)
        digests[table.name] = {"rows": len(frame), "sha256": table_digest(frame)}
    return digests


def case_input(case: Mapping[str, Any], tmp: Path) -> Path | None:
    """The input file a case runs on (written under ``tmp``), or None for the config's own.

    ``input.adult_rows: N`` is the header and the first N rows of the bundled Adult CSV.
    """
    spec = case["input"]
    if "adult_rows" not in spec:
        return None
    lines = ADULT_CSV.read_text(encoding="utf-8").splitlines()[: spec["adult_rows"] + 1]
    path = tmp / f"adult_{spec['adult_rows']}.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_case(
    case: Mapping[str, Any], tmp: Path, engine: str = "local"
) -> tuple[dict[str, Any], dict[str, Any], float]:
    """Run a case's config through ``sparkanon run`` and read back what it published.

    Runs from the project root (the configs' relative data paths), writing under ``tmp``.
    The sparkanon logger's state is restored afterwards (the command line sets it), and
    the metrics the command prints are not echoed.

    Args:
        case: the case (``config``, ``input``, ``overrides``).
        tmp: a fresh folder for the sample and the output.
        engine: ``local`` or ``spark`` (an active session is reused).

    Returns:
        The run's ``metrics.json``, its published tables' digests, and its wall seconds.
    """
    from sparkanon.cli import main

    tmp.mkdir(parents=True, exist_ok=True)
    out = tmp / "out"
    sample = case_input(case, tmp)
    overrides = [*case["overrides"], f"output.path={out}", "output.mode=error"]
    if sample is not None:
        overrides.append(f"input.path={sample}")
    argv = ["run", str(ROOT / case["config"]), "--engine", engine, "--quiet"]
    argv += [arg for value in overrides for arg in ("--set", value)]
    argv += ["--metrics-out", str(tmp / "metrics.json")]
    logger = logging.getLogger("sparkanon")
    saved = (list(logger.handlers), logger.propagate, logger.level)
    cwd = Path.cwd()
    start = time.perf_counter()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(io.StringIO()):  # the metrics, read below
            code = main(argv)
    finally:
        os.chdir(cwd)
        logger.handlers[:], logger.propagate, logger.level = saved
    seconds = time.perf_counter() - start
    if code != 0:
        raise AssertionError(f"{case['id']}: sparkanon run exited {code}")
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    return metrics, published_digests(out), seconds


def load_golden() -> dict[str, Any]:
    """The pinned cases of ``tests/golden/configs.json``."""
    return json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))
