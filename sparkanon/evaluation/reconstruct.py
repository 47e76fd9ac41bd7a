"""Distribution reconstruction of a committed perturbed release, on the engine.

``sparkanon reconstruct OUTPUT_DIR`` reads a release the perturbation family committed
(``data/``, ``config.yaml``, ``noise.json``) and reconstructs, per perturbed column (and
per value of a class label with ``--by``), the distribution of the original values from
the published ones alone (Aggarwal 2015, section 20.2.1). The engine reduces the rows to
bins; the driver holds bins, never rows:

1. **Range pass** (one ``map_batches`` and one ``aggregate``): per numeric column and
   label, the smallest and largest published value, the rows, and how many published
   values are not numbers (a committed release has none: exit 2 if so).
2. **Histogram pass** (``map_batches`` -> ``(column, label, bin, count)`` rows ->
   ``aggregate`` sum -> ``collect_small``): per numeric column the counts of the published
   values over its z-bins (plus the counts below and above them), per categorical column
   the counts of each published value.

Then, on the driver, per column and label (and over all rows):

* numeric: :func:`~sparkanon.algorithms.perturbation.reconstruct.bayes` over the midpoint
  kernel :func:`~sparkanon.algorithms.perturbation.reconstruct.transition_from_pdf` of the
  declared noise's density (Agrawal and Srikant 2000) and
  :func:`~sparkanon.algorithms.perturbation.reconstruct.em` over the interval kernel
  :func:`~sparkanon.algorithms.perturbation.reconstruct.transition_from_intervals`
  (Agrawal and Aggarwal 2001);
* categorical: the iterative Bayesian update
  (:func:`~sparkanon.algorithms.perturbation.reconstruct.categorical_ibu`) and the
  matrix-inversion estimate projected onto the simplex.

**Our readings.**

* *x-bins* (where the original values are reconstructed): ``bins`` (default 50)
  equal-width bins over ``[zmin + s, zmax - s]``, ``zmin`` and ``zmax`` the smallest and
  largest published value, ``s = a`` for uniform noise on ``[-a, a]`` (with many rows
  some row near each end of the original range draws noise near ``-a`` or ``+a``, so
  ``zmin ~ xmin - a`` and ``zmax ~ xmax + a``) and ``s = 2 sigma`` for Gaussian noise (a
  safe shrink: the extreme published values are the extreme originals plus noise of a
  few sigma, so shrinking by 2 sigma rarely cuts the original range). When that interval
  is empty (noise wider than the published spread) the x-bins span ``[zmin, zmax]``.
  The same x-bins serve every label, so per-label distributions are comparable (what a
  naive Bayes classifier needs).
* *integer bins* (``integer_bins``): bins of whole integers, edges at ``k - 0.5``, from
  the integer nearest ``zmin + s`` to the one nearest ``zmax - s`` (nearest, not
  inward: ``zmin + a`` lies a little above the smallest original for uniform noise, as
  no row draws exactly ``-a``). For
  integer-valued originals equal-width bins of a non-integer width hold one integer or
  two in turn, so the true histogram is saw-toothed at width 1 and no smooth estimate
  comes close to it; integer bins avoid that.
* *z-bins* (where the published values are counted): the x edges extended on each side
  by whole bins of the same width until they cover the noise's support, ``[-a, a]``
  (uniform) or ``+-6 sigma`` (Gaussian)
  (:func:`~sparkanon.algorithms.perturbation.reconstruct.covering_z_edges`); a published
  value outside them is counted as ``outside_z_range`` and left out of the update.
* *the noisy histogram* (the baseline a reconstruction should beat): the published
  values themselves binned over the x edges, a value below (above) the x range counted
  in the first (last) bin, normalised: all rows, so its L1 distance to the true
  histogram over the same edges is comparable to the reconstructions'.

A pure module's :class:`ValueError` (a kernel that cannot reach an x-bin, a singular
matrix, ...) becomes a :class:`~sparkanon.errors.UserError` naming the column (exit 2).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.algorithms.perturbation import reconstruct as rc
from sparkanon.algorithms.perturbation.noise import NoiseSpec
from sparkanon.attributes.dates import epoch_of_typed
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.errors import InputError, UserError
from sparkanon.io import file_in
from sparkanon.safety import make_local_dir, modes, write_private_text
from sparkanon.stages._common import log

DEFAULT_BINS = 50
"""x-bins per numeric column when ``--bins`` is not given."""
MAX_BINS = 10_000
"""The most x-bins (or integer bins) a numeric column may get."""
MAX_Z_BINS = 200_000
"""The most z-bins a numeric column may need (noise very wide against the x-bins)."""
MAX_LABELS = 1_000
"""The most distinct values of a ``--by`` column."""
GAUSSIAN_Z_SPAN = 6.0
"""Gaussian z-bins cover ``+- GAUSSIAN_Z_SPAN sigma`` around the x range."""
GAUSSIAN_SHRINK = 2.0
"""Gaussian x-bins span ``[zmin + 2 sigma, zmax - 2 sigma]``."""
ALL = ""
"""The label of the distribution over all rows (in ``distributions.csv``)."""

_BELOW, _ABOVE, _BAD = -1, -3, -2
"""Bin keys: a value below the z range, above it, and one that is not a number / value."""
_RANGE_COLUMNS = [
    ("col", "long"),
    ("label", "string"),
    ("lo", "double"),
    ("hi", "double"),
    ("bad", "long"),
    ("n", "long"),
]
_HIST_COLUMNS = [("col", "long"), ("label", "string"), ("bin", "long"), ("n", "long")]


@dataclass
class ColumnBins:
    """One numeric column's bins and its counts (filled by the histogram pass).

    Attributes:
        name: the column.
        spec: its declared noise.
        x_edges: where its distribution is reconstructed.
        z_edges: where its published values are counted.
        counts: per label, the ``len(z_edges) - 1`` z-bin counts then below and above.
    """

    name: str
    spec: NoiseSpec
    x_edges: np.ndarray
    z_edges: np.ndarray
    counts: dict[str, np.ndarray] = field(default_factory=dict)


def noise_spec(name: str, declared: dict[str, Any]) -> NoiseSpec:
    """A numeric column's :class:`NoiseSpec` from its ``noise.json`` entry.

    Raises:
        UserError: an entry without a valid distribution or scale (naming the column).
    """
    try:
        return NoiseSpec(declared["distribution"], float(declared["scale"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"noise.json: column {name!r}: bad numeric noise ({exc})") from exc


def is_numeric(declared: dict[str, Any]) -> bool:
    """Whether a ``noise.json`` entry is additive noise (else randomized response)."""
    return declared.get("distribution") != "randomized_response"


def x_edges_for(
    name: str, spec: NoiseSpec, zmin: float, zmax: float, bins: int, integer: bool
) -> np.ndarray:
    """The x-bins of a numeric column (the module docstring's reading).

    Args:
        name: the column (for errors).
        spec: its noise.
        zmin: the smallest published value.
        zmax: the largest.
        bins: how many equal-width bins (ignored with ``integer``).
        integer: bins of whole integers.

    Returns:
        The edges.

    Raises:
        UserError: more than :data:`MAX_BINS` integer bins.
    """
    shrink = spec.scale if spec.distribution == "uniform" else GAUSSIAN_SHRINK * spec.scale
    lo, hi = zmin + shrink, zmax - shrink
    if not lo < hi:
        lo, hi = zmin, zmax
    if integer:
        first, last = math.floor(lo + 0.5), math.floor(hi + 0.5)
        if last - first + 1 > MAX_BINS:
            raise UserError(
                f"--integer-bins: column {name!r} spans {last - first + 1} integers (more than "
                f"{MAX_BINS}); use --bins instead"
            )
        return np.arange(first, last + 2, dtype=np.float64) - 0.5
    if not lo < hi:  # every published value equal
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, bins + 1)


def z_edges_for(name: str, spec: NoiseSpec, x_edges: np.ndarray) -> np.ndarray:
    """The z-bins: the x-bins widened over the noise's support (or +-6 sigma).

    Raises:
        UserError: more than :data:`MAX_Z_BINS` z-bins would be needed.
    """
    half = spec.scale if spec.distribution == "uniform" else GAUSSIAN_Z_SPAN * spec.scale
    widths = (x_edges[1] - x_edges[0], x_edges[-1] - x_edges[-2])
    needed = len(x_edges) + 2 * half / min(widths)
    if needed > MAX_Z_BINS:
        raise UserError(
            f"column {name!r}: its noise ({spec.distribution}, scale {spec.scale:.4g}) is "
            f"{half / min(widths):.0f} x-bins wide; use fewer --bins"
        )
    return rc.covering_z_edges(x_edges, -half, half)


def _labels(batch: pd.DataFrame, by: str | None) -> np.ndarray:
    """Each row's class label as text (``""`` for a null), or ``ALL`` without ``by``."""
    if by is None:
        return np.full(len(batch), ALL, dtype=object)
    return batch[by].astype(object).where(batch[by].notna(), "").astype(str).to_numpy()


def _numbers(series: pd.Series) -> np.ndarray:
    """Published values as float64 (text from CSV parsed; unreadable as NaN).

    Dates and timestamps are read in the units their noise was drawn in: epoch days and
    epoch seconds (:func:`sparkanon.attributes.dates.epoch_of_typed`).
    """
    epoch = epoch_of_typed(series)
    if epoch is not None:
        return epoch.astype(np.float64)
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)


def make_range_fn(numeric: Sequence[str], by: str | None) -> BatchFn:
    """Batch function: rows -> per numeric column and label, min, max, non-numbers, rows.

    Column ``-1`` carries each label's row count (also with no numeric column).
    """

    def ranges(batch: pd.DataFrame) -> pd.DataFrame:
        labels = _labels(batch, by)
        out: list[tuple[int, str, float, float, int, int]] = []
        for label in sorted(set(labels)):
            rows = labels == label
            out.append((-1, label, math.inf, -math.inf, 0, int(rows.sum())))
            for c, name in enumerate(numeric):
                v = _numbers(batch.loc[rows, name])
                good = v[np.isfinite(v)]
                lo = float(good.min()) if good.size else math.inf
                hi = float(good.max()) if good.size else -math.inf
                out.append((c, label, lo, hi, int(v.size - good.size), int(v.size)))
        return pd.DataFrame(out, columns=[c for c, _ in _RANGE_COLUMNS]).astype(
            {"col": "int64", "label": object, "lo": "float64", "hi": "float64"}
            | {"bad": "int64", "n": "int64"}
        )

    return ranges


def make_histogram_fn(
    numeric: Sequence[ColumnBins],
    categorical: Sequence[tuple[str, Sequence[str]]],
    by: str | None,
) -> BatchFn:
    """Batch function: rows -> ``(column, label, bin, count)`` over each column's bins.

    Numeric columns are ``0 .. len(numeric) - 1`` (bins: z-bins, ``-1`` below, ``-3``
    above, ``-2`` not a number); categorical ones follow (bins: the declared value's
    index, ``-2`` a value the release does not declare).
    """
    index = [_value_index(values) for _, values in categorical]

    def histogram(batch: pd.DataFrame) -> pd.DataFrame:
        labels = _labels(batch, by)
        frames: list[pd.DataFrame] = []

        def emit(c: int, bins: np.ndarray) -> None:
            part = pd.DataFrame({"label": labels, "bin": bins})
            counted = part.groupby(["label", "bin"], sort=True).size().reset_index(name="n")
            counted.insert(0, "col", c)
            frames.append(counted)

        for c, column in enumerate(numeric):
            v = _numbers(batch[column.name])
            m = len(column.z_edges) - 1
            b = np.searchsorted(column.z_edges, v, side="right") - 1
            b = np.where(v == column.z_edges[-1], m - 1, b)  # the last bin is closed
            b = np.where(b < 0, _BELOW, np.where(b >= m, _ABOVE, b))
            emit(c, np.where(np.isfinite(v), b, _BAD).astype(np.int64))
        for j, ((name, _), lookup) in enumerate(zip(categorical, index, strict=True)):
            emit(len(numeric) + j, _value_codes(batch[name], lookup))
        if not frames:
            return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _pandas_types().items()})
        return pd.concat(frames, ignore_index=True).astype(_pandas_types())

    return histogram


def _value_index(values: Sequence[str]) -> tuple[pd.Index, np.ndarray]:
    """Declared values (as text) -> their index; a repeated value keeps its last index."""
    last = {str(v): i for i, v in enumerate(values)}
    return pd.Index(list(last), dtype=object), np.asarray(list(last.values()), dtype=np.int64)


def _value_codes(column: pd.Series, lookup: tuple[pd.Index, np.ndarray]) -> np.ndarray:
    """Each published value's declared index (its text, ``str(None)`` for a null), or -2.

    Vectorised (``Index.get_indexer``): no Python call per row.
    """
    keys, positions = lookup
    text = column.astype(object).to_numpy()
    found = keys.get_indexer(pd.Index(text, dtype=object).astype(str))
    return np.where(found >= 0, positions[found], _BAD).astype(np.int64)


def _pandas_types() -> dict[str, Any]:
    return {"col": "int64", "label": object, "bin": "int64", "n": "int64"}


def _as_dict(result: rc.Reconstruction) -> dict[str, Any]:
    """A reconstruction as JSON."""
    return {
        "method": result.method,
        "edges": [float(e) for e in result.edges],
        "probabilities": [float(p) for p in result.probabilities],
        "iterations": int(result.iterations),
        "stopped_by": result.stopped_by,
        "statistic": _finite(result.statistic),
        "log_likelihood": _finite(result.log_likelihood),
        "dropped": int(result.dropped),
    }


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def noisy_histogram(column: ColumnBins, counts: np.ndarray) -> np.ndarray:
    """The published values over the x edges, out-of-range ones in the end bins, normalised."""
    m = len(column.z_edges) - 1
    k = len(column.x_edges) - 1
    z, below, above = counts[:m], counts[m], counts[m + 1]
    off = int(np.flatnonzero(column.z_edges == column.x_edges[0])[0])
    h = z[off : off + k].astype(np.float64)
    h[0] += z[:off].sum() + below
    h[-1] += z[off + k :].sum() + above
    return h / h.sum()


def reconstruct_numeric(column: ColumnBins, counts: np.ndarray) -> dict[str, Any]:
    """Bayes, EM and the noisy histogram of one numeric column's counts (one label).

    Raises:
        UserError: a pure module's ValueError, naming the column.
    """
    m = len(column.z_edges) - 1
    z = counts[:m].astype(np.float64)
    try:
        pdf_kernel = rc.transition_from_pdf(column.x_edges, column.z_edges, column.spec.pdf)
        interval_kernel = rc.transition_from_intervals(
            column.x_edges, column.z_edges, column.spec.interval_probability
        )
        bayes = rc.bayes(z, pdf_kernel, column.x_edges)
        em = rc.em(z, interval_kernel, column.x_edges)
    except ValueError as exc:
        raise UserError(f"reconstruct: column {column.name!r}: {exc}") from exc
    noisy = noisy_histogram(column, counts)
    return {
        "rows": int(counts.sum()),
        "outside_z_range": int(counts[m] + counts[m + 1]),
        "noisy": {
            "method": "noisy",
            "edges": [float(e) for e in column.x_edges],
            "probabilities": [float(p) for p in noisy],
        },
        "bayes": _as_dict(bayes),
        "em": _as_dict(em),
    }


def reconstruct_categorical(
    name: str, values: Sequence[str], matrix: np.ndarray, counts: np.ndarray
) -> dict[str, Any]:
    """IBU, the projected inversion and the published shares of one categorical column.

    Raises:
        UserError: a pure module's ValueError, naming the column.
    """
    try:
        ibu = rc.categorical_ibu(counts, matrix)
        raw = rc.categorical_inversion(counts, matrix)
        projected = rc.project_to_simplex(raw)
    except ValueError as exc:
        raise UserError(f"reconstruct: column {name!r}: {exc}") from exc
    shares = counts / counts.sum()
    return {
        "rows": int(counts.sum()),
        "values": list(values),
        "noisy": {"method": "noisy", "probabilities": [float(p) for p in shares]},
        "categorical_ibu": _as_dict(ibu) | {"values": list(values)},
        "categorical_inversion": {
            "method": "categorical_inversion",
            "probabilities": [float(p) for p in projected],
            "unprojected": [float(p) for p in raw],
            "iterations": 0,
            "stopped_by": "closed_form",
        },
    }


def _check_table(
    engine: Engine, table: Table, noise: Mapping[str, Any], data: str, by: str | None
) -> None:
    """Every declared column and the ``--by`` column are in the table.

    Raises:
        UserError: a missing column (naming it and the columns there are).
    """
    names = [c for c, _ in engine.schema_of(table)]
    for name in noise:
        if name not in names:
            raise InputError(f"{data}: noise.json declares column {name!r}, not in the table")
    if by is not None and by not in names:
        raise UserError(f"--by {by!r}: the release has no such column (it has {', '.join(names)})")
    if by is not None and by in noise:
        raise UserError(f"--by {by!r}: a perturbed column; give an unperturbed class label")


def reconstruct_table(
    engine: Engine,
    table: Table,
    noise: Mapping[str, Any],
    source: str,
    bins: int = DEFAULT_BINS,
    integer_bins: bool = False,
    by: str | None = None,
) -> dict[str, Any]:
    """Reconstruct every perturbed column of a perturbed table (the module docstring).

    Args:
        engine: the engine.
        table: the published rows (a committed release's ``data/``, or a run's staged
            table).
        noise: the declared noise per perturbed column (``noise.json``).
        source: the release's directory (its table is ``<source>/data``).
        bins: x-bins per numeric column (at least 2).
        integer_bins: bins of whole integers for the numeric columns instead.
        by: a class label column: one distribution per value too.

    Returns:
        What ``reconstruction.json`` holds: ``release``, ``rows``, ``by``, ``labels``
        (rows per label) and ``columns`` (per column: its noise, bins, and per ``all`` /
        label its distributions by method).

    Raises:
        UserError: bins < 2, an unknown ``--by`` column, values that are not numbers or
            not declared, or a reconstruction the pure modules refuse (exit 2).
    """
    data = f"{source}/data"
    if bins < 2:
        raise UserError(f"--bins {bins}: need at least 2 bins")
    _check_table(engine, table, noise, data, by)
    numeric = [n for n, d in noise.items() if is_numeric(d)]
    categorical = [n for n, d in noise.items() if not is_numeric(d)]
    specs = {n: noise_spec(n, noise[n]) for n in numeric}
    label_column = [] if by is None else [by]
    with engine.stage("reconstruct_ranges"):
        # Only the columns the pass reads go through the batch function; the aggregate
        # (a few rows per label) is cached so that counting it and collecting it scan
        # the release once.
        ranged = engine.persist(
            engine.aggregate(
                engine.map_batches(
                    engine.select(table, [*numeric, *label_column]),
                    make_range_fn(numeric, by),
                    _RANGE_COLUMNS,
                ),
                ["col", "label"],
                {"lo": ("min", "lo"), "hi": ("max", "hi"), "bad": ("sum", "bad")}
                | {"n": ("sum", "n")},
            )
        )
        try:
            size = engine.count(ranged)
            if size > (len(numeric) + 1) * MAX_LABELS:
                raise UserError(
                    f"--by {by!r}: more than {MAX_LABELS} distinct values; give a class label"
                )
            ranges = engine.collect_small(ranged, size)
        finally:
            engine.unpersist(ranged)
    labels = {str(r.label): int(r.n) for r in ranges[ranges["col"] == -1].itertuples(index=False)}
    columns: list[ColumnBins] = []
    for c, name in enumerate(numeric):
        mine = ranges[ranges["col"] == c]
        bad = int(mine["bad"].sum())
        if bad:
            raise InputError(
                f"{data}: column {name!r}: {bad} published values are not numbers "
                "(a perturbed numeric column has a number in every row)"
            )
        zmin, zmax = float(mine["lo"].min()), float(mine["hi"].max())
        if not (math.isfinite(zmin) and math.isfinite(zmax)):
            raise InputError(f"{data}: column {name!r}: no published value")
        x = x_edges_for(name, specs[name], zmin, zmax, bins, integer_bins)
        columns.append(ColumnBins(name, specs[name], x, z_edges_for(name, specs[name], x)))
    values = [(n, [str(v) for v in noise[n]["values"]]) for n in categorical]
    bound = len(labels) * (
        sum(len(c.z_edges) + 3 for c in columns) + sum(len(v) + 1 for _, v in values)
    )
    with engine.stage("reconstruct_histograms"):
        hist = engine.aggregate(
            engine.map_batches(
                engine.select(table, [*numeric, *categorical, *label_column]),
                make_histogram_fn(columns, values, by),
                _HIST_COLUMNS,
            ),
            ["col", "label", "bin"],
            {"n": ("sum", "n")},
        )
        rows = engine.collect_small(hist, max(bound, 1))
    found: dict[int, dict[str, dict[int, int]]] = {}
    for c, label, b, n in rows[["col", "label", "bin", "n"]].itertuples(index=False):
        found.setdefault(int(c), {}).setdefault(str(label), {})[int(b)] = int(n)
    result_columns: dict[str, Any] = {}
    for c, column in enumerate(columns):
        m = len(column.z_edges) - 1
        per_label = {}
        for label in labels:
            got = found.get(c, {}).get(label, {})
            vec = np.zeros(m + 2, dtype=np.int64)
            for b, n in got.items():
                vec[m if b == _BELOW else m + 1 if b == _ABOVE else b] += n
            per_label[label] = vec
        result_columns[column.name] = _numeric_entry(column, per_label, by, noise)
        log.info("reconstruct: column %s, %d x-bins", column.name, len(column.x_edges) - 1)
    for j, (name, vals) in enumerate(values):
        c = len(columns) + j
        matrix = np.asarray(noise[name].get("transition_matrix"), dtype=np.float64)
        per_label = {}
        for label in labels:
            got = found.get(c, {}).get(label, {})
            if got.get(_BAD):
                raise InputError(
                    f"{data}: column {name!r}: {got[_BAD]} published values are not "
                    "among the values noise.json declares"
                )
            per_label[label] = np.array([got.get(i, 0) for i in range(len(vals))], dtype=float)
        result_columns[name] = _categorical_entry(name, vals, matrix, per_label, by, noise)
        log.info("reconstruct: column %s, %d values", name, len(vals))
    return {
        "release": source,
        "rows": int(sum(labels.values())),
        "by": by,
        "labels": dict(sorted(labels.items())) if by is not None else {},
        "bins": None if integer_bins else bins,
        "integer_bins": integer_bins,
        "columns": result_columns,
    }


def _numeric_entry(
    column: ColumnBins, per_label: dict[str, np.ndarray], by: str | None, noise: Mapping[str, Any]
) -> dict[str, Any]:
    total = np.sum(list(per_label.values()), axis=0)
    entry: dict[str, Any] = {
        "kind": "numeric",
        "noise": noise[column.name],
        "x_edges": [float(e) for e in column.x_edges],
        "z_edges": [float(e) for e in column.z_edges],
        "all": reconstruct_numeric(column, total),
    }
    if by is not None:
        entry["by_label"] = {
            label: reconstruct_numeric(column, counts)
            for label, counts in sorted(per_label.items())
        }
    return entry


def _categorical_entry(
    name: str,
    values: Sequence[str],
    matrix: np.ndarray,
    per_label: dict[str, np.ndarray],
    by: str | None,
    noise: Mapping[str, Any],
) -> dict[str, Any]:
    total = np.sum(list(per_label.values()), axis=0)
    entry: dict[str, Any] = {
        "kind": "categorical",
        "noise": noise[name],
        "values": list(values),
        "all": reconstruct_categorical(name, values, matrix, total),
    }
    if by is not None:
        entry["by_label"] = {
            label: reconstruct_categorical(name, values, matrix, counts)
            for label, counts in sorted(per_label.items())
            if counts.sum() > 0
        }
    return entry


NUMERIC_METHODS = ("noisy", "bayes", "em")
CATEGORICAL_METHODS = ("noisy", "categorical_ibu", "categorical_inversion")


def distribution_rows(result: dict[str, Any]) -> pd.DataFrame:
    """``distributions.csv``: one row per column, label, method and bin.

    Columns: ``column``, ``label`` (empty: all rows), ``method``, ``lo``, ``hi`` (a bin's
    edges; a categorical value's code and code + 1), ``value`` (a categorical value;
    empty for a numeric bin) and ``probability``.
    """
    rows: list[tuple[Any, ...]] = []
    for name, entry in result["columns"].items():
        groups = [(ALL, entry["all"]), *entry.get("by_label", {}).items()]
        for label, dists in groups:
            if entry["kind"] == "numeric":
                edges = entry["x_edges"]
                for method in NUMERIC_METHODS:
                    for i, p in enumerate(dists[method]["probabilities"]):
                        rows.append((name, label, method, edges[i], edges[i + 1], "", p))
            else:
                for method in CATEGORICAL_METHODS:
                    for i, p in enumerate(dists[method]["probabilities"]):
                        rows.append((name, label, method, i, i + 1, entry["values"][i], p))
    return pd.DataFrame(
        rows, columns=["column", "label", "method", "lo", "hi", "value", "probability"]
    )


def plot_column(name: str, entry: dict[str, Any], path: Path) -> None:
    """``<column>.png``: the noisy histogram and the reconstructions over all rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    dists = entry["all"]
    if entry["kind"] == "numeric":
        edges = np.asarray(entry["x_edges"])
        for method in NUMERIC_METHODS:
            p = np.asarray(dists[method]["probabilities"])
            ax.stairs(p / np.diff(edges), edges, label=method)
        ax.set_ylabel("density")
    else:
        pos = np.arange(len(entry["values"]))
        width = 0.8 / len(CATEGORICAL_METHODS)
        for i, method in enumerate(CATEGORICAL_METHODS):
            ax.bar(pos + i * width, dists[method]["probabilities"], width, label=method)
        ax.set_xticks(pos + width, entry["values"], rotation=45, ha="right")
        ax.set_ylabel("probability")
    ax.set_title(f"{name}: reconstructed distribution")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def write_reconstruction(
    result: dict[str, Any], out_dir: str, permissions: str = "owner"
) -> list[str]:
    """Write ``reconstruction.json``, ``distributions.csv`` and the plots; the files written.

    A folder made here gets the directory mode of ``permissions`` and the output marker;
    every file written gets the file mode. A plot is named after its column made safe
    (:func:`sparkanon.io.file_in`). Plots are skipped (with a log line) when matplotlib
    cannot be imported.
    """
    out = Path(out_dir)
    make_local_dir(out_dir, permissions, kind="reconstruction")
    write_private_text(
        str(out / "reconstruction.json"), json.dumps(result, indent=2) + "\n", permissions
    )
    write_private_text(
        str(out / "distributions.csv"), distribution_rows(result).to_csv(index=False), permissions
    )
    written = ["reconstruction.json", "distributions.csv"]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        log.info("reconstruct: matplotlib is not installed; no plots written")
        return written
    for name, entry in result["columns"].items():
        path = file_in(str(out), name, ".png")
        plot_column(name, entry, Path(path))
        os.chmod(path, modes(permissions)[1])
        written.append(Path(path).name)
    return written
