"""Stage ``perturb`` of the perturbation family and its verification, by aggregations.

:func:`perturb_rows` perturbs every encoded (usable) row once: each quasi-identifier (a
perturbed one with its noise, drawn from the run's secret key with the row's internal id
as counter: numeric values plus additive noise, categorical values drawn from their row of
the transition matrix; the others as they are), then the passthrough and kept columns.
The same pass draws each row's release order word from its id
(:func:`~sparkanon.stages.publish.order_words`). The rows keep their internal id
(``_rid``) and word only until they are written in that order; the published table
carries no row id, nor anything else derived from one, so a reader cannot tell which
input row a published row is.

:func:`check_residuals` checks the release against the noise it declares. It runs the
stage's batch function again over the encoded rows (the noise is a function of each row's
id and the run key, so it gives the published values again without keeping them in
memory), and each batch reduces, per perturbed column, to a histogram of the residuals
(published minus the original code of the same encoded row) over the declared noise's
support, their count, sum and sum of squares, or, for randomized response, the count of
values published as themselves; the driver sums those (about a thousand numbers per
column) and runs, at ``algorithm.significance``:

* **Kolmogorov-Smirnov**: the largest gap between the residuals' empirical CDF and the
  declared CDF, taken at the histogram's edges (never above the exact statistic, so a
  failure is never an artefact of the bins), against the Dvoretzky-Kiefer-Wolfowitz
  bound with Massart's constant, ``sqrt(ln(2 / alpha) / (2 n))``, valid at every ``n``;
* **mean**: ``|mean| <= z sqrt(var / n)`` (declared variance, ``z`` the normal quantile
  of ``1 - alpha / 2``);
* **variance**: ``|s^2 - var| <= z sqrt((mu4 - var^2 (n - 3) / (n - 1)) / n)``, the
  variance of the sample variance from the declared fourth moment (``a^4 / 5`` uniform,
  ``3 sigma^4`` gaussian);
* **retention** (randomized response): the share of values published as themselves
  within ``p +- z sqrt(p (1 - p) / n)`` (exactly 1 when ``p = 1``).

The same pass sums each perturbed column's marginal (count, sum and sum of squares of a
numeric column's values, the count of each value of a categorical one). The staged table
(the bytes that will be committed, read back) is then tied to the rows checked: the same
columns as declared, the same row count as the usable input, and per perturbed column the
same marginal as the verified rows.

A release with a row missing or duplicated, a column beyond the declared ones (an
original value or a row id left in), a residual of another distribution or scale, a
retention rate off its interval, or staged values other than the verified ones fails
(exit 3), and nothing is committed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sparkanon.algorithms.perturbation.perturb import ColumnNoise, perturb_frame
from sparkanon.attributes.dates import numeric_values, published_type, raw_of_published
from sparkanon.attributes.kinds import ContinuousKind, DiscreteKind, Kind
from sparkanon.attributes.schema import RID, Schema
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.publications.base import MAIN, Publication
from sparkanon.publications.kept import KeptColumns
from sparkanon.stages._common import StageTimer, batch_sums, log
from sparkanon.stages.publish import ORDER, order_words, ordered_rows, staged

if TYPE_CHECKING:
    from sparkanon.randomness import RunKey

RESIDUAL_BINS = 1000
"""Bins of a residual histogram over the declared noise's support (plus two outside it)."""
GAUSSIAN_SPAN = 6.0
"""A gaussian residual histogram spans ``+- GAUSSIAN_SPAN sigma``."""

_N, _SUM, _SQUARES, _SAME, _OTHER = -1, -2, -3, -4, -5
"""Keys of the per-column totals in the statistics rows (histogram bins and categorical
codes are 0, 1, ...)."""
MARGIN_TOLERANCE = 1e-9
"""Relative gap allowed between the staged and the verified sums of a numeric column (the
order of a floating-point sum differs between passes)."""
_STAT_COLUMNS = [("col", "long"), ("bin", "long"), ("value", "double")]


@dataclass(frozen=True)
class ColumnCheck:
    """One perturbed column: its noise and what verification needs of it.

    Attributes:
        name: the column.
        code_column: its encoded column.
        kind: its kind (continuous: raw values from codes; discrete: labels).
        noise: the noise the perturb stage adds.
        span: the width of the range a numeric column's noise is a share of (declared, or
            the input's rounded outward:
            :func:`sparkanon.families.perturbation.family.noise_range`).
        retention: randomized response: the probability a value stays itself.
    """

    name: str
    code_column: str
    kind: Kind
    noise: ColumnNoise
    span: float = 0.0
    retention: float = 1.0

    def edges(self) -> np.ndarray:
        """The residual histogram's edges over the declared support."""
        additive = self.noise.additive
        assert additive is not None
        if additive.distribution == "uniform":
            half = additive.scale * (1.0 + 1e-9)  # float rounding of (x + y) - x
        else:
            half = GAUSSIAN_SPAN * additive.scale
        return np.linspace(-half, half, RESIDUAL_BINS + 1)


def published_columns(
    schema: Schema, passthrough_types: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The published table's columns: the quasi-identifiers, then the passthrough ones."""
    return [*((k.name, published_type(k)) for k in schema.kinds), *passthrough_types]


def make_perturb_fn(
    schema: Schema,
    passthrough: Sequence[str],
    plans: Sequence[ColumnCheck],
    key: RunKey,
    lane: int,
) -> BatchFn:
    """Batch function: encoded rows -> their internal id, order word and published values."""
    perturbed = {p.code_column: p for p in plans}

    def perturb(batch: pd.DataFrame) -> pd.DataFrame:
        frame = batch[schema.code_columns].copy()
        for code, plan in perturbed.items():
            if isinstance(plan.kind, ContinuousKind):
                frame[code] = plan.kind.raw(frame[code].to_numpy())
        ids = batch[RID].to_numpy(dtype=np.int64)
        noisy = perturb_frame(frame, ids, [p.noise for p in plans], key)
        out: dict[str, Any] = {RID: ids, ORDER: order_words(key, lane, ids)}
        for code, kind in zip(schema.code_columns, schema.kinds, strict=True):
            values = noisy[code].to_numpy()
            if code in perturbed and isinstance(kind, ContinuousKind):
                out[kind.name] = numeric_values(kind, values)  # dates: rounded to the day
            else:
                out[kind.name] = kind.decode(values)
        for c in passthrough:
            out[c] = batch[c].to_numpy()
        return pd.DataFrame(out)

    return perturb


def perturb_rows(
    engine: Engine,
    encoded: Table,
    schema: Schema,
    passthrough_types: Sequence[tuple[str, str]],
    plans: Sequence[ColumnCheck],
    key: RunKey,
    lane: int,
    timer: StageTimer,
    tmp_path: str | None,
    fmt: str,
    kept: KeptColumns | None = None,
) -> tuple[Publication, BatchFn]:
    """Perturb every usable row and write the table, without row ids, to the staging location.

    The rows are written in their keyed release order
    (:func:`~sparkanon.stages.publish.ordered_rows`, ``lane`` from
    :func:`~sparkanon.stages.publish.order_lane`), the kept columns joined to them on
    their id and word after the batch function.

    Returns:
        The staged publication, and the batch function that perturbed the rows (a
        function of each row and the key alone: :func:`check_residuals` runs it again
        over the encoded rows rather than keep its output in memory).
    """
    columns = published_columns(schema, passthrough_types)
    names = [c for c, _ in columns]
    passthrough = [c for c, _ in passthrough_types]
    perturb = make_perturb_fn(schema, passthrough, plans, key, lane)
    with timer.stage("perturb"):
        rows = engine.map_batches(encoded, perturb, [(RID, "long"), (ORDER, "long"), *columns])
        table = ordered_rows(engine, rows, kept or KeptColumns(), names, key, lane)
        sensitive = passthrough[0] if passthrough else schema.qi_names[0]
        publication = Publication({MAIN: table}, MAIN, list(schema.qi_names), sensitive)
        published = staged(engine, publication, tmp_path, fmt, key, ordered=True)
        log.info("perturb: %d columns perturbed", len(plans))
    return published, perturb


def make_residual_fn(plans: Sequence[ColumnCheck]) -> BatchFn:
    """Batch function: published rows joined with their originals -> per-column totals."""

    def residuals(batch: pd.DataFrame) -> pd.DataFrame:
        cols: list[np.ndarray] = []
        bins: list[np.ndarray] = []
        values: list[np.ndarray] = []

        def emit(c: int, keys: Sequence[int], vals: Sequence[float]) -> None:
            cols.append(np.full(len(keys), c, dtype=np.int64))
            bins.append(np.asarray(keys, dtype=np.int64))
            values.append(np.asarray(vals, dtype=np.float64))

        for c, plan in enumerate(plans):
            original = batch[plan.code_column].to_numpy()
            published = batch[plan.name]
            if isinstance(plan.kind, ContinuousKind):
                got = raw_of_published(plan.kind, published)
                r = got - plan.kind.raw(original)
                r = np.where(np.isnan(r), np.inf, r)  # an unreadable value fails the tests
                edges = plan.edges()
                index = np.searchsorted(edges, r, side="right")  # 0: below, B + 1: above
                counts = np.bincount(index, minlength=len(edges) + 1)
                nonzero = np.flatnonzero(counts)
                emit(c, nonzero, counts[nonzero])
                finite = r[np.isfinite(r)]
                emit(c, [_N, _SUM, _SQUARES], [len(r), finite.sum(), (finite**2).sum()])
            else:
                assert isinstance(plan.kind, DiscreteKind)
                labels = plan.kind.decode(np.asarray(original, dtype=np.int64))
                same = published.astype(str).to_numpy() == labels.astype(str)
                emit(c, [_N, _SAME], [len(same), same.sum()])
        if not cols:
            return pd.DataFrame(
                {
                    n: pd.Series(dtype=t)
                    for n, t in (("col", "int64"), ("bin", "int64"), ("value", "float64"))
                }
            )
        return pd.DataFrame(
            {
                "col": np.concatenate(cols),
                "bin": np.concatenate(bins),
                "value": np.concatenate(values),
            }
        )

    return residuals


def make_margin_fn(plans: Sequence[ColumnCheck]) -> BatchFn:
    """Batch function: published rows -> per perturbed column, the totals of its marginal.

    A numeric column: its count, and the sum and sum of squares of its finite values (an
    unreadable value counted apart); a categorical one: the count of each declared value
    (by code) and of any other value.
    """

    def margins(batch: pd.DataFrame) -> pd.DataFrame:
        cols: list[np.ndarray] = []
        bins: list[np.ndarray] = []
        values: list[np.ndarray] = []
        for c, plan in enumerate(plans):
            published = batch[plan.name]
            if isinstance(plan.kind, ContinuousKind):
                got = raw_of_published(plan.kind, published)
                finite = got[np.isfinite(got)]
                keys = [_N, _SUM, _SQUARES, _OTHER]
                vals = [len(got), finite.sum(), (finite**2).sum(), len(got) - len(finite)]
            else:
                assert isinstance(plan.kind, DiscreteKind)
                labels = [str(v) for v in plan.kind.labels]
                codes = pd.Categorical(published.astype(str), categories=labels).codes
                codes = np.where(codes < 0, _OTHER, codes).astype(np.int64)
                keys_arr, counts = np.unique(codes, return_counts=True)
                keys, vals = keys_arr.tolist(), counts.tolist()
            cols.append(np.full(len(keys), c, dtype=np.int64))
            bins.append(np.asarray(keys, dtype=np.int64))
            values.append(np.asarray(vals, dtype=np.float64))
        return pd.DataFrame(
            {
                "col": np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64),
                "bin": np.concatenate(bins) if bins else np.zeros(0, dtype=np.int64),
                "value": np.concatenate(values) if values else np.zeros(0),
            }
        )

    return margins


def _totals(
    engine: Engine,
    table: Table,
    fn: BatchFn,
    columns: int,
    cap: int,
) -> dict[int, dict[int, float]]:
    """Per column index ``0 .. columns - 1``, the summed statistics rows ``fn`` emits."""
    rows = engine.collect_small(batch_sums(engine, table, fn, _STAT_COLUMNS, ["col", "bin"]), cap)
    totals: dict[int, dict[int, float]] = {c: {} for c in range(columns)}
    for c, b, v in rows[["col", "bin", "value"]].itertuples(index=False):
        totals[int(c)][int(b)] = float(v)
    return totals


def make_verified_fn(plans: Sequence[ColumnCheck], perturb: BatchFn) -> BatchFn:
    """Batch function: encoded rows -> the residual and marginal totals of their perturbation.

    Residual totals in columns ``0 .. P - 1``, the perturbed values' marginal totals in
    ``P .. 2P - 1`` (``P`` the perturbed columns). The rows are perturbed by ``perturb``
    (the stage's own batch function: the same values, drawn from the key and each row's
    id), each published value beside the original code of the same encoded row.
    """
    residuals, margins = make_residual_fn(plans), make_margin_fn(plans)

    def both(batch: pd.DataFrame) -> pd.DataFrame:
        out = perturb(batch)
        for plan in plans:
            out[plan.code_column] = batch[plan.code_column].to_numpy()
        shifted = margins(out)
        shifted["col"] = shifted["col"] + len(plans)
        return pd.concat([residuals(out), shifted], ignore_index=True)

    return both


def _margin_gaps(
    plans: Sequence[ColumnCheck],
    staged_totals: dict[int, dict[int, float]],
    verified: dict[int, dict[int, float]],
) -> list[str]:
    """The perturbed columns whose staged marginal is not the verified rows' one."""
    failed: list[str] = []
    for c, plan in enumerate(plans):
        got, want = staged_totals[c], verified[c]
        if isinstance(plan.kind, ContinuousKind):
            n, sq = want.get(_N, 0.0), want.get(_SQUARES, 0.0)
            slack = {
                _N: 0.0,
                _OTHER: 0.0,
                _SUM: MARGIN_TOLERANCE * max(1.0, math.sqrt(max(n * sq, 0.0))),
                _SQUARES: MARGIN_TOLERANCE * max(1.0, sq),
            }
            same = all(abs(got.get(k, 0.0) - want.get(k, 0.0)) <= t for k, t in slack.items())
        else:
            same = {k: v for k, v in got.items() if v} == {k: v for k, v in want.items() if v}
        if not same:
            failed.append(f"{plan.name}: the staged values are not the verified ones")
    return failed


def _significant(x: float) -> float:
    """``x`` to 12 significant digits (sums of doubles differ in their last bits by engine)."""
    return float(f"{x:.12g}")


def _numeric_verdict(
    plan: ColumnCheck, totals: dict[int, float], alpha: float
) -> tuple[dict[str, Any], list[str]]:
    additive = plan.noise.additive
    assert additive is not None
    n = totals.get(_N, 0.0)
    edges = plan.edges()
    counts = np.array([totals.get(b, 0.0) for b in range(len(edges) + 1)])
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    failed: list[str] = []
    if n <= 0:
        return {"rows": 0}, [f"{plan.name}: no residual to check"]
    empirical = np.cumsum(counts)[:-1] / n  # share of residuals below each edge
    ks = float(np.max(np.abs(empirical - additive.cdf(edges))))
    ks_bound = math.sqrt(math.log(2.0 / alpha) / (2.0 * n))
    mean = totals.get(_SUM, 0.0) / n
    var = additive.variance
    mean_bound = z * math.sqrt(var / n)
    s2 = (totals.get(_SQUARES, 0.0) - n * mean * mean) / (n - 1) if n > 1 else 0.0
    mu4 = var * var * (1.8 if additive.distribution == "uniform" else 3.0)
    var_bound = (
        z * math.sqrt(max(mu4 - var * var * (n - 3) / (n - 1), 0.0) / n) if n > 1 else math.inf
    )
    if ks > ks_bound:
        failed.append(f"{plan.name}: Kolmogorov-Smirnov {ks:.4g} > {ks_bound:.4g}")
    if abs(mean) > mean_bound:
        failed.append(f"{plan.name}: residual mean {mean:.4g} outside +-{mean_bound:.4g}")
    if abs(s2 - var) > var_bound:
        failed.append(
            f"{plan.name}: residual variance {s2:.4g} outside {var:.4g} +- {var_bound:.4g}"
        )
    figures = {
        "rows": int(n),
        "ks": _significant(ks),
        "ks_bound": _significant(ks_bound),
        "mean": _significant(mean),
        "mean_bound": _significant(mean_bound),
        "variance": _significant(s2),
        "declared_variance": _significant(var),
        "variance_bound": _significant(var_bound),
        "passed": not failed,
    }
    return figures, failed


def _retention_verdict(
    plan: ColumnCheck, totals: dict[int, float], alpha: float
) -> tuple[dict[str, Any], list[str]]:
    n = totals.get(_N, 0.0)
    if n <= 0:
        return {"rows": 0}, [f"{plan.name}: no value to check"]
    rate = totals.get(_SAME, 0.0) / n
    p = plan.retention
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    bound = z * math.sqrt(p * (1.0 - p) / n)
    ok = rate == 1.0 if p == 1.0 else abs(rate - p) <= bound
    figures = {
        "rows": int(n),
        "retention_rate": _significant(rate),
        "retention": p,
        "retention_bound": _significant(bound),
        "passed": ok,
    }
    failed = (
        [] if ok else [f"{plan.name}: retention rate {rate:.4g} outside {p:.4g} +- {bound:.4g}"]
    )
    return figures, failed


def check_residuals(
    engine: Engine,
    publication: Publication,
    perturb: BatchFn,
    encoded: Table,
    plans: Sequence[ColumnCheck],
    expected: Sequence[tuple[str, str]],
    alpha: float,
) -> dict[str, Any]:
    """Check the release against its declared noise (the module docstring's tests).

    Args:
        engine: the engine.
        publication: the staged publication (no row id).
        perturb: the batch function that perturbed the rows (:func:`perturb_rows`).
        encoded: the encoded rows.
        plans: the perturbed columns.
        expected: the declared published columns.
        alpha: the significance of each test.

    Returns:
        ``rows`` (published), ``failed`` (one line per failed check) and ``columns``
        (per perturbed column, its figures).
    """
    published = publication.tables[MAIN]
    failed: list[str] = []
    names = [c for c, _ in engine.schema_of(published)]
    wanted = [c for c, _ in expected]
    if sorted(names) != sorted(wanted):
        extra = sorted(set(names) - set(wanted))
        missing = sorted(set(wanted) - set(names))
        failed.append(f"columns: published {extra} beyond the declared ones, missing {missing}")
    rows = engine.count(published)
    usable = engine.count(encoded)
    if rows != usable:
        failed.append(f"rows: {rows} published, {usable} usable rows in")
    margin_cap = sum(p.kind.size + 1 if isinstance(p.kind, DiscreteKind) else 4 for p in plans)
    cap = len(plans) * (RESIDUAL_BINS + 8) + margin_cap
    both = _totals(engine, encoded, make_verified_fn(plans, perturb), 2 * len(plans), cap)
    totals = {c: both[c] for c in range(len(plans))}
    verified = {c: both[c + len(plans)] for c in range(len(plans))}
    figures: dict[str, Any] = {}
    for c, plan in enumerate(plans):
        judge = _numeric_verdict if plan.noise.additive is not None else _retention_verdict
        figures[plan.name], bad = judge(plan, totals[c], alpha)
        if figures[plan.name].get("rows", 0) != usable:
            bad.append(f"{plan.name}: {figures[plan.name].get('rows', 0)} rows checked of {usable}")
        failed += bad
    if {p.name for p in plans} <= set(names):
        failed += _margin_gaps(
            plans,
            _totals(engine, published, make_margin_fn(plans), len(plans), margin_cap),
            verified,
        )
    return {"rows": rows, "failed": failed, "columns": figures}
