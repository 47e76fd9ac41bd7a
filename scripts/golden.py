"""The golden suite's machinery: run a bundled config's case and digest what it publishes.

A case (one entry of ``tests/golden/configs.json``) names a config of ``conf/``, the
input it runs on (a sample of the bundled Adult rows or the config's own bundled data)
and the ``--set`` overrides that keep a run on that input small and meaningful. It runs
through the command line (``sparkanon run``), the interface every job family shares,
so the suite does not depend on how the layer under it is arranged.

What is pinned per case: every published table and the headline metrics of
``metrics.json`` (:func:`headline`). A table exact by construction (per-block,
full-domain and relational-transaction releases: centroids of exact sums, generalized
labels, counts) is pinned by a digest (order-independent: the rows' cells as text,
floats to 12 significant digits, sorted, then SHA-256). A table whose values come out of
floating-point linear algebra or transcendental functions (condensation's synthetic
records from eigen-decompositions, perturbation's noise), whose last bits differ between
CPUs and BLAS builds, is pinned *by value* (a case's ``by_value`` tables): its row count
and the digest of its exact columns (text, integers, booleans) exactly, and its numeric,
date and timestamp columns value by value within :data:`VALUE_TOLERANCE` of the column's
pinned range (plus one unit of a date's or a timestamp's resolution), against a copy of
the table kept in ``tests/golden/tables/``. ``scripts/update_golden.py`` writes the pins
and ``tests/test_golden.py`` compares a fresh run with them, both with this module.
"""

from __future__ import annotations

import contextlib
import datetime as dt
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

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_FILE = ROOT / "tests" / "golden" / "configs.json"
GOLDEN_KEY = GOLDEN_FILE.parent / "golden.key"
"""The user key every case runs with, so that keyed draws (noise, synthetic records, the
release order) are the same on every run. A test fixture, public on purpose: a real
release's key is drawn per run or kept secret by its user."""
PINS_ROOT = ROOT
"""The checkout whose pins are read (``scripts/golden_at.py`` runs other code against them)."""
VALUES_DIR = GOLDEN_FILE.parent / "tables"
"""The pinned copies of the tables compared by value (``CASE.TABLE.csv.gz``)."""
VALUE_TOLERANCE = 1e-6
"""A by-value column's tolerance, as a share of the column's pinned range.

Float error from another BLAS or SIMD path moves a synthetic value by about 1e-12 of its
range (more where two eigenvalues nearly coincide); any change to what the code draws
moves it by a sizeable share of the range.
"""
_SORT_QUANTUM = 1e-4
"""Rows are aligned by their exact cells, then numeric cells in steps of this share of range."""
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


def published_tables(out: Path) -> dict[str, pd.DataFrame]:
    """Every table a job published under ``out``, by folder name."""
    tables = sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith("."))
    return {table.name: read_table(table) for table in tables}


def table_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of a table's column names and its rows, whatever their order."""
    rows = sorted("\x1f".join(cell_text(v) for v in row) for row in frame.itertuples(index=False))
    text = "\x1f".join(map(str, frame.columns)) + "\n" + "\n".join(rows)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def numeric_columns(frame: pd.DataFrame) -> dict[str, str]:
    """The columns a by-value pin compares within tolerance, with how each reads as numbers.

    ``float`` for floating columns, ``timestamp_us`` for instants (microseconds since the
    epoch), ``date_days`` for dates (days since the epoch); every other column is exact.
    """
    kinds = {}
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_float_dtype(column):
            kinds[name] = "float"
        elif pd.api.types.is_datetime64_any_dtype(column):
            kinds[name] = "timestamp_us"
        elif column.dtype == object and _is_date_column(column):
            kinds[name] = "date_days"
    return kinds


def _is_date_column(column: pd.Series) -> bool:
    """Whether an object column holds ``datetime.date`` values (and nulls) only."""
    values = column.dropna()
    return len(values) > 0 and all(
        isinstance(v, dt.date) and not isinstance(v, dt.datetime) for v in values
    )


_UNIT = {"float": 0.0, "timestamp_us": 1.0, "date_days": 1.0}
"""One step of a column's published resolution, in its numeric reading."""


def as_numbers(column: pd.Series, kind: str) -> np.ndarray:
    """A by-value column as float64 (nulls as NaN), in the reading ``kind`` names."""
    if kind == "float":
        return pd.to_numeric(column, errors="raise").to_numpy(dtype=float, na_value=np.nan)
    if kind == "timestamp_us":
        stamps = pd.to_datetime(column, utc=True)
        micros = (stamps - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(microseconds=1)
        return micros.to_numpy(dtype=float, na_value=np.nan)
    days = pd.to_datetime(column) - pd.Timestamp(0)
    return (days // pd.Timedelta(days=1)).to_numpy(dtype=float, na_value=np.nan)


EXACT_KEY = "\x1fexact"
"""A by-value pin's column holding a digest of each row's exact cells (to align rows by)."""


def canonical_table(frame: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """A table as a by-value pin keeps it: each row's exact cells digested, numbers as float64.

    The exact columns are pinned as a whole by :func:`exact_digest`; per row, a short
    digest of their cells is enough to align the rows of two tables.
    """
    exact = [c for c in frame.columns if c not in kinds]
    rows = frame[exact].itertuples(index=False, name=None)
    out = {EXACT_KEY: [_row_key(row) for row in rows]}
    for name in kinds:
        out[name] = as_numbers(frame[name], kinds[name])
    return pd.DataFrame(out)


def _row_key(row: tuple[Any, ...]) -> str:
    """A short digest of one row's exact cells."""
    text = "\x1f".join(cell_text(v) for v in row)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def aligned(
    table: pd.DataFrame, kinds: Mapping[str, str], scale: Mapping[str, float]
) -> pd.DataFrame:
    """A canonical table's rows in a float-error-proof order.

    Sorted by the digest of the exact cells, then by each numeric cell in steps of
    :data:`_SORT_QUANTUM` of its column's range: an error far below a step leaves the
    order alone.
    """
    keys = pd.DataFrame({EXACT_KEY: table[EXACT_KEY]}, index=table.index)
    for name in kinds:
        steps = np.floor(table[name].to_numpy() / (_SORT_QUANTUM * scale[name]))
        keys[name] = np.nan_to_num(steps, nan=np.inf)
    order = keys.sort_values(list(keys.columns), kind="stable").index
    return table.loc[order].reset_index(drop=True)


def column_scales(table: pd.DataFrame, kinds: Mapping[str, str]) -> dict[str, float]:
    """Each numeric column's range in a canonical table (1 for a constant column)."""
    scales = {}
    for name in kinds:
        values = table[name].to_numpy()
        values = values[~np.isnan(values)]
        spread = float(values.max() - values.min()) if values.size else 0.0
        scales[name] = spread if spread > 0 else 1.0
    return scales


def exact_digest(frame: pd.DataFrame, kinds: Mapping[str, str]) -> str:
    """The digest of a table's exact columns (all of them but ``kinds``' numeric ones)."""
    return table_digest(frame[[c for c in frame.columns if c not in kinds]])


def table_pin(
    case_id: str, name: str, frame: pd.DataFrame, by_value: bool, folder: Path = VALUES_DIR
) -> dict[str, Any]:
    """A published table's pin; a by-value pin also writes the table's copy to ``folder``."""
    if not by_value:
        return {"rows": len(frame), "sha256": table_digest(frame)}
    kinds = numeric_columns(frame)
    path = folder / f"{case_id}.{name}.csv.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    canonical_table(frame, kinds).to_csv(path, index=False, float_format="%.15g")
    kept = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    return {
        "rows": len(frame),
        "exact_sha256": exact_digest(frame, kinds),
        "numeric": kinds,
        "values": kept,
    }


def table_pins(
    case: Mapping[str, Any], tables: Mapping[str, pd.DataFrame], folder: Path = VALUES_DIR
) -> dict[str, Any]:
    """The pins of every table of a case's run (by value where the case says so).

    A by-value table's copy is written to ``folder`` (a throwaway folder for a dry run).
    """
    by_value = set(case.get("by_value", ()))
    return {
        name: table_pin(case["id"], name, f, name in by_value, folder) for name, f in tables.items()
    }


def read_pinned_values(pin: Mapping[str, Any]) -> pd.DataFrame:
    """A by-value pin's kept table, in the canonical form of :func:`canonical_table`."""
    kinds = pin["numeric"]
    frame = pd.read_csv(PINS_ROOT / pin["values"], dtype=str, keep_default_na=False)
    for name in kinds:
        frame[name] = pd.to_numeric(frame[name].replace({"": "nan"}), errors="raise")
    return frame


def value_mismatches(pin: Mapping[str, Any], frame: pd.DataFrame, where: str) -> list[str]:
    """Where a published table departs from its by-value pin (empty when it matches).

    Rows and the exact columns' digest must be equal; each numeric cell must be within
    :data:`VALUE_TOLERANCE` of its column's pinned range plus one unit of resolution of
    the pinned cell, the rows aligned by :func:`aligned`.
    """
    kinds = pin["numeric"]
    found = []
    if len(frame) != pin["rows"]:
        return [f"{where}rows: pinned {pin['rows']}, got {len(frame)}"]
    if numeric_columns(frame) != kinds:
        return [f"{where}numeric columns: pinned {kinds}, got {numeric_columns(frame)}"]
    if exact_digest(frame, kinds) != pin["exact_sha256"]:
        found.append(f"{where}exact columns: digest moved")
    pinned = read_pinned_values(pin)
    scale = column_scales(pinned, kinds)
    want = aligned(pinned, kinds, scale)
    got = aligned(canonical_table(frame, kinds), kinds, scale)
    tolerance = {n: VALUE_TOLERANCE * scale[n] + _UNIT[k] for n, k in kinds.items()}
    off = _deviation(want, got, tolerance)
    if off.size and off.max() > 1.0:
        want, got = _rematched(want, got, tolerance, off > 1.0)
    for name in kinds:
        a, b = want[name].to_numpy(), got[name].to_numpy()
        bad = ~((np.abs(a - b) <= tolerance[name]) | (np.isnan(a) & np.isnan(b)))
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            found.append(
                f"{where}{name}: {int(bad.sum())} of {len(a)} values beyond "
                f"{tolerance[name]:.3g} (first: pinned {a[first]!r}, got {b[first]!r})"
            )
    return found


def _deviation(want: pd.DataFrame, got: pd.DataFrame, tolerance: Mapping[str, float]) -> np.ndarray:
    """Per row, the largest ``|pinned - got| / tolerance`` over the numeric columns.

    A null against a null is no deviation, a null against a number an infinite one; rows
    whose exact cells differ are infinitely apart.
    """
    worst = np.where(want[EXACT_KEY].to_numpy() == got[EXACT_KEY].to_numpy(), 0.0, np.inf)
    for name, tol in tolerance.items():
        a, b = want[name].to_numpy(), got[name].to_numpy()
        gap = np.abs(a - b) / tol
        gap = np.where(np.isnan(a) & np.isnan(b), 0.0, np.nan_to_num(gap, nan=np.inf))
        worst = np.maximum(worst, gap)
    return worst


def _rematched(
    want: pd.DataFrame, got: pd.DataFrame, tolerance: Mapping[str, float], loose: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows the sorted alignment left apart, paired again with their nearest partner.

    Two rows whose numbers lie close to a sorting step can swap places under float
    error; each loose pinned row is paired with the nearest loose published row of the
    same exact cells (greedily, nearest pairs first). Rows left without a partner within
    tolerance stay in their sorted order, to be reported.
    """
    a, b = want[loose].reset_index(drop=True), got[loose].reset_index(drop=True)
    names = list(tolerance)
    scaled_a = a[names].to_numpy() / np.array([tolerance[n] for n in names])
    scaled_b = b[names].to_numpy() / np.array([tolerance[n] for n in names])
    gaps = np.abs(scaled_a[:, None, :] - scaled_b[None, :, :])
    both_null = np.isnan(scaled_a)[:, None, :] & np.isnan(scaled_b)[None, :, :]
    gaps = np.where(both_null, 0.0, np.nan_to_num(gaps, nan=np.inf)).max(axis=2)
    same = a[EXACT_KEY].to_numpy()[:, None] == b[EXACT_KEY].to_numpy()[None, :]
    gaps = np.where(same, gaps, np.inf)
    partner = np.full(len(a), -1)
    taken = np.zeros(len(b), dtype=bool)
    for flat in np.argsort(gaps, axis=None, kind="stable"):
        i, j = divmod(int(flat), len(b))
        if gaps[i, j] > 1.0:
            break
        if partner[i] < 0 and not taken[j]:
            partner[i], taken[j] = j, True
    free_b = iter(np.flatnonzero(~taken))
    order = [int(j) if j >= 0 else next(free_b) for j in partner]
    want_out, got_out = want.copy(), got.copy()
    got_out.loc[np.flatnonzero(loose), :] = b.iloc[order].to_numpy()
    return want_out, got_out


def table_mismatches(
    pins: Mapping[str, Any], tables: Mapping[str, pd.DataFrame], where: str = "tables."
) -> list[str]:
    """Where a run's published tables depart from their pins (digest or by value)."""
    found = [f"{where}{name}: missing" for name in pins if name not in tables]
    found += [f"{where}{name}: not pinned" for name in tables if name not in pins]
    for name in pins.keys() & tables.keys():
        pin, frame = pins[name], tables[name]
        if "sha256" in pin:
            got = {"rows": len(frame), "sha256": table_digest(frame)}
            if got != dict(pin):
                found.append(f"{where}{name}: pinned {dict(pin)}, got {got}")
        else:
            found += value_mismatches(pin, frame, f"{where}{name}.")
    return found


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
        The run's ``metrics.json``, its published tables (by name), and its wall seconds.
    """
    from sparkanon.cli import main

    tmp.mkdir(parents=True, exist_ok=True)
    out = tmp / "out"
    sample = case_input(case, tmp)
    overrides = [*case["overrides"], f"output.path={out}", "output.mode=error"]
    if sample is not None:
        overrides.append(f"input.path={sample}")
    argv = ["run", str(ROOT / case["config"]), "--engine", engine, "--quiet"]
    argv += ["--key-file", str(GOLDEN_KEY), "--key-label", "golden"]
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
    return metrics, published_tables(out), seconds


def mismatches(pinned: Any, actual: Any, where: str = "") -> list[str]:
    """Where ``actual`` differs from ``pinned``: floats to 1e-9 relative, the rest exactly."""
    if isinstance(pinned, dict) and isinstance(actual, dict):
        found = [f"{where}{k}: missing" for k in pinned if k not in actual]
        found += [f"{where}{k}: not pinned" for k in actual if k not in pinned]
        for key in pinned.keys() & actual.keys():
            found += mismatches(pinned[key], actual[key], f"{where}{key}.")
        return found
    if isinstance(pinned, float) and isinstance(actual, (int, float)):
        same = math.isclose(pinned, actual, rel_tol=1e-9, abs_tol=1e-12)
    else:
        same = type(pinned) is type(actual) and pinned == actual
    return [] if same else [f"{where.rstrip('.')}: pinned {pinned!r}, got {actual!r}"]


def load_golden() -> dict[str, Any]:
    """The pinned cases of ``tests/golden/configs.json``."""
    return json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))
