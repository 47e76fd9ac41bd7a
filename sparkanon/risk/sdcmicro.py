"""sdcMicro's individual and global re-identification risk (``measure_risk``).

Our reading of sdcMicro (github sdcTools/sdcMicro, commit ``cf32510``; ``R/indivRisk.R``,
``R/measure_risk.R``, ``R/freqCalc.r``, ``src/Measure_Threshold.h``):

* Every record has a sample frequency ``fk`` (records of the sample sharing its key) and
  an estimated population frequency ``Fk`` (the sum of the sampling weights of those
  records). Without a weight column sparkanon gives every record the weight
  ``1 / sampling_fraction``, so ``Fk = fk / f``; at ``f = 1`` this is sdcMicro's
  unweighted case (``rk = 1 / fk``).
* The individual risk is the Benedetti-Franconi risk in its default ``approx`` form
  (``indivRisk(method = "approx", qual = 1, survey = TRUE)``), with ``pk = fk / Fk``::

      fk == 1:  pk / (1 - pk) * log(1 / pk)
      fk == 2:  pk / (1 - pk) - (pk / (1 - pk))**2 * log(1 / pk)
      fk >= 3:  pk / (fk - (1 - pk))

  and, whatever ``fk``, ``1 / fk`` when ``fk == Fk`` (the sample is the population).
* The global risk is the sum of the individual risks, the expected number of
  re-identifications (``global_risk_ER``); as a share of the records (``global_risk``)
  and in percent (``global_risk_pct``).
* ``global_threshold`` (``measure_threshold``, mu-Argus 4.1 section 2.3.4.1): going down
  the distinct risk levels ``r`` from the highest, the first ``r`` at which the records
  above ``r`` capped at ``r`` plus the records at or below ``r`` sum to less than
  ``max_global_risk * n``; ``0`` when no level does; ``None`` (sdcMicro's ``NA``) when the
  file already is below that expected number.
* Missing key values: sdcMicro's ``freqCalc`` reads a missing value as a wildcard that
  matches every value (a record's ``fk`` counts the records equal to it on the keys both
  have, ``Fk`` sums their weights). That is no group-by; the engine path follows the
  shared design instead (a null is a value of its own, the table's equivalence classes).
  :func:`freq_calc` computes both readings on a small frame, for the tests.

The functions below work on a table of ``(fk, Fk)`` pairs with the number of *records*
having each pair (:data:`PAIR_COLUMNS`), never on rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.engine.base import Engine, Table
from sparkanon.risk.view import TableView

PAIR_COLUMNS = ("fk", "Fk", "records")
"""Columns of a pair table: sample frequency, population frequency, records with them."""

QUANTILES = (0.5, 0.9, 0.95, 0.99)
"""Quantiles of the records' individual risk the summary reports."""

HISTOGRAM_EDGES = tuple(round(i / 20, 2) for i in range(21))
"""Bins of the individual-risk histogram: ``[e_i, e_i+1)``, the last one closed."""

MAX_GLOBAL_RISK = 0.01
"""sdcMicro's default ``max_global_risk`` (the global threshold's target share)."""

MAX_EXACT_PAIRS = 100_000
"""Most distinct ``(fk, Fk)`` pairs the engine path collects; beyond, a risk grid."""

RISK_GRID = 1e-6
"""Width of the risk grid the engine path falls back to (at most ``1 / RISK_GRID`` bins)."""


def individual_risk(fk: np.ndarray, big_fk: np.ndarray) -> np.ndarray:
    """The default individual risk of sdcMicro for records with these frequencies.

    Args:
        fk: sample frequencies (>= 1).
        big_fk: estimated population frequencies ``Fk`` (sums of weights).

    Returns:
        The Benedetti-Franconi ``approx`` risk per entry; ``1 / fk`` where ``fk == Fk``.
    """
    fk = np.asarray(fk, dtype=np.float64)
    big_fk = np.asarray(big_fk, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        pk = fk / big_fk
        odds = pk / (1.0 - pk)
        log_inv = np.log(1.0 / pk)
        one = odds * log_inv
        two = odds - odds**2 * log_inv
        many = pk / (fk - (1.0 - pk))
    risk = np.where(fk == 1, one, np.where(fk == 2, two, many))
    return np.where(fk == big_fk, 1.0 / fk, risk)


def freq_calc(
    frame: pd.DataFrame, keys: Sequence[str], weight: str | None = None, missing: str = "value"
) -> pd.DataFrame:
    """``fk`` and ``Fk`` of every row of a small frame (reference, quadratic with nulls).

    Args:
        frame: the rows.
        keys: the key (quasi-identifier) columns.
        weight: the weight column; ``None``: weight 1 (``Fk == fk``).
        missing: ``"value"``: a null is a value of its own (sparkanon's classes);
            ``"wildcard"``: a null matches every value (sdcMicro's ``freqCalc`` with its
            default ``alpha = 1``).

    Returns:
        A frame with columns ``fk`` and ``Fk``, one row per row of ``frame``.
    """
    keys = list(keys)
    w = (
        frame[weight].astype(float).to_numpy()
        if weight is not None
        else np.ones(len(frame), dtype=float)
    )
    if missing == "value":
        grouped = frame[keys].assign(_w=w).groupby(keys, dropna=False, sort=False)
        fk = grouped["_w"].transform("size").to_numpy()
        big = grouped["_w"].transform("sum").to_numpy()
        return pd.DataFrame({"fk": fk.astype(float), "Fk": big})
    if missing != "wildcard":
        raise ValueError(f"missing: 'value' or 'wildcard', not {missing!r}")
    values = frame[keys].to_numpy(dtype=object)
    isna = frame[keys].isna().to_numpy()
    n = len(frame)
    fk = np.zeros(n)
    big = np.zeros(n)
    for i in range(n):
        match = np.ones(n, dtype=bool)
        for j in range(len(keys)):
            if isna[i, j]:
                continue
            match &= isna[:, j] | (values[:, j] == values[i, j])
        fk[i] = match.sum()
        big[i] = w[match].sum()
    return pd.DataFrame({"fk": fk, "Fk": big})


def pairs_from_class_sizes(
    class_sizes: Mapping[int, int], sampling_fraction: float
) -> pd.DataFrame:
    """The pair table of an unweighted table: every record weighs ``1 / sampling_fraction``.

    Args:
        class_sizes: ``{class size f: number of classes of that size}``.
        sampling_fraction: the share of the population the table holds, in ``(0, 1]``.

    Returns:
        A pair table (:data:`PAIR_COLUMNS`): ``fk = f``, ``Fk = f / sampling_fraction``,
        ``records = f * classes``.
    """
    _check_fraction(sampling_fraction)
    sizes = sorted(int(f) for f, c in class_sizes.items() if int(c) > 0)
    return pd.DataFrame(
        {
            "fk": [float(f) for f in sizes],
            "Fk": [f / sampling_fraction for f in sizes],
            "records": [f * int(class_sizes[f]) for f in sizes],
        }
    )


def global_threshold(
    levels: np.ndarray, records: np.ndarray, max_global_risk: float
) -> float | None:
    """The ``global_threshold`` of sdcMicro, over distinct risk levels (``measure_threshold``).

    Args:
        levels: the distinct individual-risk values.
        records: how many records have each.
        max_global_risk: the target share of expected re-identifications, in ``(0, 1)``.

    Returns:
        The threshold, ``0.0`` when capping at no level reaches the target, ``None`` when
        the file already is below it (sdcMicro's ``NA``).
    """
    if not 0.0 < max_global_risk < 1.0:
        raise ValueError("max_global_risk must be in (0, 1)")
    order = np.argsort(-np.asarray(levels, dtype=float), kind="stable")
    levels = np.asarray(levels, dtype=float)[order]
    records = np.asarray(records, dtype=np.int64)[order]
    n = int(records.sum())
    if n == 0:
        return None
    expected = max_global_risk * n
    remaining = math.fsum(float(r) * int(c) for r, c in zip(levels, records, strict=True))
    if remaining < expected:
        return None
    above = 0
    for i, (level, count) in enumerate(zip(levels, records, strict=True)):
        if i > 0 and remaining + level * above < expected:
            return float(level)
        above += int(count)
        remaining -= float(level) * int(count)
    return 0.0


def _quantile(levels: np.ndarray, records: np.ndarray, q: float) -> float:
    """The smallest level at which the records' cumulative share reaches ``q``."""
    cum = np.cumsum(records)
    return float(levels[int(np.searchsorted(cum, q * cum[-1], side="left"))])


def _histogram(levels: np.ndarray, records: np.ndarray) -> dict[str, list]:
    """Records per bin of :data:`HISTOGRAM_EDGES` (the last edge widened to the maximum)."""
    edges = list(HISTOGRAM_EDGES)
    if len(levels) and float(levels.max()) > edges[-1]:
        edges[-1] = float(levels.max())
    bins = np.clip(np.searchsorted(edges, levels, side="right") - 1, 0, len(edges) - 2)
    counts = np.bincount(bins, weights=records, minlength=len(edges) - 1)
    return {"edges": edges, "counts": [int(c) for c in counts]}


def sdcmicro_risk(
    pairs: pd.DataFrame,
    threshold: float,
    max_global_risk: float = MAX_GLOBAL_RISK,
) -> dict[str, Any]:
    """The individual and global risk of sdcMicro, from the pair table of a table.

    Args:
        pairs: columns ``fk``, ``Fk``, ``records`` (:data:`PAIR_COLUMNS`); a pair may
            appear on several rows (their records add up).
        threshold: the evaluation's risk threshold: records whose individual risk is
            strictly above it are counted.
        max_global_risk: sdcMicro's ``max_global_risk`` for ``global_threshold``.

    Returns:
        ``RISK["sdcmicro"]``: ``method``, ``rows``, ``individual`` (``max``, ``mean``,
        ``quantiles`` {"0.5": ...}, ``histogram`` {edges, counts}), ``global``
        (``expected_reidentifications``, ``share``, ``percent``), ``threshold``,
        ``records_above_threshold``, ``share_above_threshold``, ``max_global_risk``,
        ``global_threshold`` (``None`` = sdcMicro's NA).
    """
    risk = individual_risk(pairs["fk"].to_numpy(), pairs["Fk"].to_numpy())
    levels = pd.DataFrame({"r": risk, "records": pairs["records"].to_numpy(dtype=np.int64)})
    levels = levels.groupby("r", sort=True)["records"].sum()
    return summarize_levels(levels.index.to_numpy(), levels.to_numpy(), threshold, max_global_risk)


def summarize_levels(
    levels: np.ndarray,
    records: np.ndarray,
    threshold: float,
    max_global_risk: float = MAX_GLOBAL_RISK,
    expected: float | None = None,
    above: int | None = None,
) -> dict[str, Any]:
    """The summary of :func:`sdcmicro_risk` from distinct risk levels and their records.

    Args:
        levels: distinct individual risks, ascending.
        records: records at each level.
        threshold: records strictly above it are counted.
        max_global_risk: for ``global_threshold``.
        expected: the expected re-identifications when known exactly (engine path on a
            risk grid); ``None``: summed from the levels.
        above: records above ``threshold`` when known exactly; ``None``: from the levels.

    Returns:
        The dict :func:`sdcmicro_risk` describes.
    """
    levels = np.asarray(levels, dtype=float)
    records = np.asarray(records, dtype=np.int64)
    keep = records > 0
    levels, records = levels[keep], records[keep]
    n = int(records.sum())
    if expected is None:
        expected = math.fsum(float(r) * int(c) for r, c in zip(levels, records, strict=True))
    if above is None:
        above = int(records[levels > threshold].sum())
    empty = n == 0
    return {
        "method": "Benedetti-Franconi approx (sdcMicro indivRisk default)",
        "rows": n,
        "individual": {
            "max": None if empty else float(levels.max()),
            "mean": None if empty else expected / n,
            "quantiles": {
                str(q): None if empty else _quantile(levels, records, q) for q in QUANTILES
            },
            "histogram": _histogram(levels, records),
        },
        "global": {
            "expected_reidentifications": float(expected),
            "share": 0.0 if empty else expected / n,
            "percent": 0.0 if empty else 100.0 * expected / n,
        },
        "threshold": float(threshold),
        "records_above_threshold": int(above),
        "share_above_threshold": 0.0 if empty else above / n,
        "max_global_risk": float(max_global_risk),
        "global_threshold": None if empty else global_threshold(levels, records, max_global_risk),
    }


def _check_fraction(sampling_fraction: float) -> None:
    if not 0.0 < float(sampling_fraction) <= 1.0:
        raise ValueError(f"sampling fraction must be in (0, 1], not {sampling_fraction}")


# --------------------------------------------------------------------------- engine path


def _risk_fn(threshold: float, grid: bool):
    """Per-batch: a class's risk, records, records x risk and records above threshold."""

    def fn(batch: pd.DataFrame) -> pd.DataFrame:
        risk = individual_risk(batch["fk"].to_numpy(), batch["Fk"].to_numpy())
        records = batch["records"].to_numpy(dtype=np.int64)
        level = np.round(risk / RISK_GRID) * RISK_GRID if grid else risk
        return pd.DataFrame(
            {
                "_r": level.astype(float),
                "records": records,
                "_er": risk * records,
                "_above": np.where(risk > threshold, records, 0).astype(np.int64),
            }
        )

    return fn


def sdcmicro_on_engine(
    engine: Engine,
    table: Table,
    view: TableView,
    sampling_fraction: float,
    threshold: float,
    max_global_risk: float = MAX_GLOBAL_RISK,
) -> dict[str, Any]:
    """:func:`sdcmicro_risk` of a table, by aggregations (the driver holds risk levels only).

    One aggregate per equivalence class (``fk``, and ``Fk`` = sum of ``view.weight``, or
    ``fk / sampling_fraction`` without one), one per ``(fk, Fk)`` pair; the pair table is
    collected when it has at most :data:`MAX_EXACT_PAIRS` rows (always without weights:
    one pair per class size). With more (weights), the risk is computed per pair on the
    engine and the records are counted per level of a :data:`RISK_GRID` grid (quantiles,
    histogram and ``global_threshold`` to that width; the expected re-identifications,
    maximum and records above the threshold stay exact).

    Args:
        engine: the engine.
        table: the rows.
        view: its columns (quasi-identifiers, weight).
        sampling_fraction: share of the population the table holds (ignored with weights).
        threshold: records above it are counted.
        max_global_risk: for ``global_threshold``.

    Returns:
        The dict of :func:`sdcmicro_risk`, plus ``weight`` (column or ``None``),
        ``sampling_fraction`` and ``risk_grid`` (``None`` when exact).
    """
    qis = list(view.quasi_identifiers)
    if view.weight is None:
        _check_fraction(sampling_fraction)
        classes = engine.aggregate(table, qis, {"fk": ("count", qis[0])})
        sizes = engine.aggregate(classes, ["fk"], {"classes": ("count", "fk")})
        small = engine.collect_small(sizes, MAX_EXACT_PAIRS)
        pairs = pairs_from_class_sizes(
            dict(zip(small["fk"].astype(int), small["classes"].astype(int), strict=True)),
            sampling_fraction,
        )
        result = sdcmicro_risk(pairs, threshold, max_global_risk)
        grid = None
    else:
        classes = engine.aggregate(
            table, qis, {"fk": ("count", qis[0]), "Fk": ("sum", view.weight)}
        )
        pair_table = engine.aggregate(classes, ["fk", "Fk"], {"records": ("sum", "fk")})
        pair_table = engine.persist(pair_table)
        try:
            distinct = engine.count(pair_table)
            if distinct <= MAX_EXACT_PAIRS:
                pairs = engine.collect_small(pair_table, MAX_EXACT_PAIRS)
                result = sdcmicro_risk(
                    pairs.astype({"fk": float, "Fk": float}), threshold, max_global_risk
                )
                grid = None
            else:
                grid = RISK_GRID
                schema = [
                    ("_r", "double"),
                    ("records", "long"),
                    ("_er", "double"),
                    ("_above", "long"),
                ]
                per = engine.map_batches(pair_table, _risk_fn(threshold, True), schema)
                totals = engine.collect_small(
                    engine.aggregate(
                        per,
                        [],
                        {"er": ("sum", "_er"), "above": ("sum", "_above"), "top": ("max", "_r")},
                    ),
                    1,
                )
                levels = engine.collect_small(
                    engine.aggregate(per, ["_r"], {"records": ("sum", "records")}),
                    int(round(1 / RISK_GRID)) + 10,
                ).sort_values("_r")
                result = summarize_levels(
                    levels["_r"].to_numpy(),
                    levels["records"].to_numpy(),
                    threshold,
                    max_global_risk,
                    expected=float(totals["er"].iloc[0]),
                    above=int(totals["above"].iloc[0]),
                )
        finally:
            engine.unpersist(pair_table)
    result["weight"] = view.weight
    result["sampling_fraction"] = None if view.weight else float(sampling_fraction)
    result["risk_grid"] = grid
    return result
