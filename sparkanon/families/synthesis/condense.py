"""Stages ``condense`` and its verification: synthetic records from each group's statistics.

Static condensation (Aggarwal 2015, section 20.3.1.4; Aggarwal and Yu 2004). The groups
are the classes the block stages formed (MDAV per block, leftovers reconciled); a group
never spans blocks, so one ``map_groups`` call per block condenses all its groups:

* numeric attributes (``continuous``) are condensed in the encoded space, each attribute
  scaled to ``[0, 1]`` by its range over the input (``code = (x - low) / (high - low)``):
  per group the first and second order sums (:class:`GroupStats`, eqs 20.6-20.7), its
  covariance's eigen-decomposition, and independent synthetic records drawn uniformly
  along each eigenvector with variance equal to its eigenvalue, around the group mean
  (:func:`synthetic_records`), then mapped back to the attribute's unit. The map is
  affine, so each group's mean and covariance are kept in expectation in the original
  units too (never exactly: no group statistic is published); the eigen-axes are those
  of the range-scaled data, so no attribute dominates the axes by its unit (fnlwgt's
  variance is 10^9 times age's in raw units);
* categorical attributes and the sensitive attribute are drawn, per synthetic record and
  attribute independently, from the group's frequencies (the "one-hot reading": the
  category of a record of the group's mixture component is drawn from its frequencies);
* every draw is a pure function of the run's secret key, the group id and the record's
  index in its group (:class:`~sparkanon.randomness.RunKey`, streams
  :data:`~sparkanon.randomness.streams.SYNTHESIS_AXES` and
  :data:`~sparkanon.randomness.streams.SYNTHESIS_CATEGORIES`): engines and a rerun with the
  same key file publish the same table, a run without one another table, and no one
  without the key can regenerate the draws;
* before condensing, records that dominate their whole block's sums are suppressed and a
  group whose sums fail the p% dominance rule is merged with its nearest group of the
  block (:func:`merge_dominant_groups`,
  :mod:`~sparkanon.algorithms.condensation.dominance`);
* the group ids stay inside the job: the staged release has no group column and its
  records are in a keyed order per block; the verification reads the condensed table
  with its ids (kept until the commit).

A group's rows are taken in row-id order before any sum, so its statistics do not depend
on the order Spark's shuffle delivers them.

Verification (before commit) aggregates the condensed table (with its group ids) and the
grouped originals: every group holds at least ``k`` records and passes the p% rule; per
group the synthetic records' mean lies within :func:`mean_tolerance` of the group's and
their covariance within :func:`covariance_tolerance` of the group's (both in the group's
eigenbasis); the staged release has as many rows as the condensed table and no group
column; no synthetic record equals an original record on every published attribute (a
join on all of them); and the records the groups represent plus the suppressed ones are
the rows in (the runner's accounting).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.algorithms.condensation.compatibility import (
    correlation_compatibility,
    covariance_compatibility,
)
from sparkanon.algorithms.condensation.dominance import (
    contributions,
    dominant_records,
    group_cells,
    merge_dominant,
    sensitive,
)
from sparkanon.algorithms.condensation.group_stats import GroupStats, flat_names, row_terms
from sparkanon.algorithms.condensation.synthesize import (
    GroupDraws,
    Keyed,
    covariance_tolerance,
    eigen_axes,
    keyed_order,
    mean_tolerance,
    synthetic_records,
)
from sparkanon.attributes.dates import TemporalKind, numeric_values, published_type
from sparkanon.attributes.kinds import ContinuousKind, DiscreteKind
from sparkanon.attributes.schema import BLOCK, CLASS, RID, SENS, Schema
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.engine.expr import Col, Lit, When
from sparkanon.publications.base import MAIN, Publication
from sparkanon.randomness import RunKey
from sparkanon.randomness.streams import SYNTHESIS_CATEGORIES, SYNTHESIS_ORDER
from sparkanon.stages._common import StageTimer, batch_sums, log, one_row
from sparkanon.stages.publish import staged

GROUP = "group"
"""Internal column of the condensed table: the id of the group a synthetic record stands
for. Verification reads it; the staged release does not have it."""

MEAN_TOLERANCE = 1e-9
"""Added to every axis of the mean bound (encoded ``[0, 1]`` scale): float rounding of the
sums, which an axis of eigenvalue 0 (records that agree along it) would otherwise fail on."""

COVARIANCE_FLOOR = 1e-12
"""Added to every entry of the covariance bound (encoded scale, where a variance is at
most 0.25): the rounding of covariances computed from sums of values near 0.5, which an
axis of eigenvalue 0 (a group whose records agree along it) would otherwise fail on."""

NULL_EIGENVALUE = 1e-9
"""Eigenvalues below this share of a group's largest are numerically null: the float sums
do not determine their axes (two computations of one group's covariance give other bases
there), so the bound takes them at this share of the largest."""
FLOAT_VARIANCE = 1e-13
"""Eigenvalues below this (encoded scale, where a variance is at most 0.25) are float noise:
a group whose records agree along an axis (identical records, common in coded data) has a
covariance there of 0 plus the rounding of ``E[x x^T] - mean mean^T`` over values near 0.5,
about 1e-16 per summation and a few orders more over a long sum. The synthesis spreads its
records along such an axis by the square root of its own noise (about 1e-8); the check,
which computes the covariance again from other sums, may find 0 there. So the bound takes
every eigenvalue at least at this figure: half-widths of ``sqrt(3e-13)``, 5.5e-7 of an
attribute's range, far below any published difference."""


@dataclass(frozen=True)
class CondensePlan:
    """What condensation needs of the schema and the config.

    Attributes:
        numeric: positions (in the schema's quasi-identifiers) of the condensed attributes.
        drawn: positions of the categorical ones (drawn from group frequencies).
        k: the model's minimum group size.
        counts: ``group rows -> synthetic records`` of a group.
        key: the run key (:class:`~sparkanon.randomness.RunKey`): every synthetic draw.
        magnitudes: positions (in the schema's quasi-identifiers) of the attributes the
            p% rule checks: continuous, not dates, non-negative over the input.
        p: the p% rule's percentage.
    """

    numeric: tuple[int, ...]
    drawn: tuple[int, ...]
    k: int
    counts: Callable[[int], int]
    key: Keyed
    magnitudes: tuple[int, ...] = ()
    p: float = 10.0

    @classmethod
    def of(
        cls,
        schema: Schema,
        k: int,
        counts: Callable[[int], int],
        key: Keyed,
        p: float = 10.0,
    ) -> CondensePlan:
        """The plan of a schema: continuous attributes condensed, the others drawn."""
        numeric = tuple(
            i for i, kind in enumerate(schema.kinds) if isinstance(kind, ContinuousKind)
        )
        drawn = tuple(i for i in range(len(schema.kinds)) if i not in numeric)
        magnitudes = tuple(
            i
            for i in numeric
            if not isinstance(schema.kinds[i], TemporalKind) and schema.kinds[i].low >= 0.0  # type: ignore[attr-defined]
        )
        return cls(numeric, drawn, k, counts, key, magnitudes, p)


def synthetic_columns(schema: Schema, group: bool = False) -> list[tuple[str, str]]:
    """The release's columns: each attribute (numeric as double), the sensitive one.

    ``group``: the condensed table's internal group id first (verification reads it).
    """
    qi = [(k.name, published_type(k)) for k in schema.kinds]
    return [*([(GROUP, "long")] if group else []), *qi, (schema.sensitive.name, "string")]


REDRAWS = 16
"""Attempts at drawing a record's categories anew while it copies a rare member (below)."""


def draw_categories(
    codes: np.ndarray, size: int, count: int, key: Keyed, group: int, slot: int, slots: int
) -> np.ndarray:
    """``count`` codes drawn from the frequencies of ``codes`` (inverse CDF, keyed uniforms).

    Record ``r``'s uniform is ``key.uniforms(SYNTHESIS_CATEGORIES, group, lane=r * slots +
    slot)``: ``slot`` in ``[0, slots)`` names the attribute and attempt, so no two draws of
    a group share a lane.

    Raises:
        ValueError: a slot out of ``[0, slots)``, or ``count * slots`` at ``2**32`` or more.
    """
    if not 0 <= slot < slots:
        raise ValueError(f"slot must be in [0, {slots}), got {slot}")
    freq = np.bincount(codes, minlength=size).astype(np.float64)
    cdf = np.cumsum(freq) / freq.sum()
    lanes = np.arange(count, dtype=np.int64) * slots + slot
    counters = np.full(count, int(group), dtype=np.int64)
    u = key.uniforms(SYNTHESIS_CATEGORIES, counters, lanes)
    return np.minimum(np.searchsorted(cdf, u, side="right"), size - 1).astype(np.int64)


def _draw_categorical(
    rows: Mapping[str, np.ndarray],
    schema: Schema,
    plan: CondensePlan,
    group: int,
    count: int,
    attempt: int,
) -> list[np.ndarray]:
    """Each drawn attribute's codes, then the sensitive codes, for ``count`` records.

    Attempt ``a`` uses slots ``a * (m + 1) + j`` of ``(REDRAWS + 1) * (m + 1)`` (``m``
    drawn attributes, the sensitive one last), so every attempt's draws are fresh and still
    keyed by the run key, group and record.
    """
    width = len(plan.drawn) + 1
    slots = (REDRAWS + 1) * width
    base = attempt * width
    out = []
    for j, i in enumerate(plan.drawn):
        kind = schema.kinds[i]
        assert isinstance(kind, DiscreteKind)
        codes = np.asarray(rows[schema.code_columns[i]], dtype=np.int64)
        out.append(draw_categories(codes, kind.size, count, plan.key, group, base + j, slots))
    sens = np.asarray(rows[SENS], dtype=np.int64)
    size = len(schema.sensitive.values)
    out.append(draw_categories(sens, size, count, plan.key, group, base + width - 1, slots))
    return out


def _tuples(numeric: np.ndarray, categorical: list[np.ndarray], schema: Schema, plan: CondensePlan):
    """Records as hashable tuples in published form (numeric through ``raw``), for equality."""
    raw = [schema.kinds[i].raw(numeric[:, j]) for j, i in enumerate(plan.numeric)]  # type: ignore[attr-defined]
    return list(zip(*raw, *categorical, strict=True))


def condense_group(
    rows: Mapping[str, np.ndarray], group: int, schema: Schema, plan: CondensePlan
) -> dict[str, np.ndarray]:
    """One group's synthetic records, in codes (numeric: encoded scale; others: codes).

    ``rows`` holds the group's columns (the block's code columns, sensitive code and row
    id) as arrays, in row-id order.

    A synthetic record can equal one of the group's records on every quasi-identifier
    only where the group's records agree on every numeric attribute (an eigenvalue-0
    group: its synthetic numeric values are the common ones). Such a record whose
    quasi-identifier combination fewer than ``k`` of the group's records hold gets its
    categories drawn anew (up to :data:`REDRAWS` times); verification then checks the
    whole release against every original (:func:`count_copies`).
    """
    numeric_codes = [schema.code_columns[i] for i in plan.numeric]
    size = len(rows[SENS])
    # column-major, as pandas hands a frame's float columns out: the sums' BLAS calls
    # then round as they did when groups were pandas frames (same release, bit for bit)
    values = np.empty((size, len(numeric_codes)), dtype=np.float64, order="F")
    for j, c in enumerate(numeric_codes):
        values[:, j] = rows[c]
    count = plan.counts(size)
    synth = synthetic_records(GroupStats.of(values), count, GroupDraws(plan.key, group))
    drawn = _draw_categorical(rows, schema, plan, group, count, 0)
    members = _tuples(
        values,
        [np.asarray(rows[schema.code_columns[i]], np.int64) for i in plan.drawn]
        + [np.asarray(rows[SENS], np.int64)],
        schema,
        plan,
    )
    holders: dict[tuple, int] = {}
    for t in members:
        holders[t] = holders.get(t, 0) + 1
    numeric_members = {t[: len(plan.numeric)] for t in members}
    for attempt in range(1, REDRAWS + 1):
        records = _tuples(synth, drawn[:-1], schema, plan)
        if not any(r[: len(plan.numeric)] in numeric_members for r in records):
            break
        rare = np.array([0 < holders.get(r, 0) < plan.k for r in records])
        if not rare.any():
            break
        fresh = _draw_categorical(rows, schema, plan, group, count, attempt)
        drawn = [np.where(rare, f, d) for f, d in zip(fresh, drawn, strict=True)]
    out: dict[str, np.ndarray] = {
        schema.code_columns[i]: synth[:, j] for j, i in enumerate(plan.numeric)
    }
    for j, i in enumerate(plan.drawn):
        out[schema.code_columns[i]] = drawn[j]
    out[SENS] = drawn[-1]
    out[GROUP] = np.full(count, group, dtype=np.int64)
    return out


def decode_synthetic(coded: dict[str, np.ndarray], schema: Schema) -> dict[str, np.ndarray]:
    """Synthetic codes to published values (numeric in their unit, categories as labels)."""
    out: dict[str, np.ndarray] = {GROUP: coded[GROUP]}
    for kind, code in zip(schema.kinds, schema.code_columns, strict=True):
        values = coded[code]
        if isinstance(kind, ContinuousKind):
            out[kind.name] = numeric_values(kind, kind.raw(values))
        else:
            out[kind.name] = kind.decode(values)
    labels = np.asarray(schema.sensitive.values, dtype=object)
    out[schema.sensitive.name] = labels[coded[SENS]]
    return out


def group_slices(block: pd.DataFrame) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """A block's groups in group order, each as its columns' arrays in row-id order.

    Rows without a group (``CLASS < 0``) are left out. One sort of the block by
    ``(group, row id)``, then slices: no per-group pandas selection.
    """
    label = block[CLASS].to_numpy()
    keep = np.flatnonzero(label >= 0)
    order = keep[np.lexsort((block[RID].to_numpy()[keep], label[keep]))]
    arrays = {c: block[c].to_numpy()[order] for c in block.columns}
    sorted_label = label[order]
    starts = (
        np.flatnonzero(np.r_[True, sorted_label[1:] != sorted_label[:-1]]) if len(order) else []
    )
    ends = [*starts[1:], len(order)]
    for start, end in zip(starts, ends, strict=True):
        yield int(sorted_label[start]), {c: a[start:end] for c, a in arrays.items()}


def make_condense_fn(schema: Schema, plan: CondensePlan) -> BatchFn:
    """Batch function over one block's rows: every group of the block condensed (with its id)."""
    columns = [n for n, _ in synthetic_columns(schema, group=True)]

    def condense(block: pd.DataFrame) -> pd.DataFrame:
        parts = [condense_group(rows, group, schema, plan) for group, rows in group_slices(block)]
        if not parts:
            return pd.DataFrame({c: [] for c in columns})
        coded = {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
        order = keyed_order(plan.key, SYNTHESIS_ORDER, coded[GROUP])
        coded = {c: v[order] for c, v in coded.items()}
        return pd.DataFrame(decode_synthetic(coded, schema))[columns]

    return condense


def _magnitudes(block: pd.DataFrame, schema: Schema, plan: CondensePlan) -> np.ndarray:
    """The p% rule's magnitudes of a block's rows: the checked attributes in their unit."""
    cols = [
        schema.kinds[i].raw(block[schema.code_columns[i]].to_numpy(dtype=np.float64))  # type: ignore[attr-defined]
        for i in plan.magnitudes
    ]
    # float rounding of raw(code) may leave -1e-12 where the input had 0
    return np.clip(np.column_stack(cols), 0.0, None) if cols else np.zeros((len(block), 0))


def make_merge_fn(schema: Schema, plan: CondensePlan) -> BatchFn:
    """Batch function over one block's rows: groups failing the p% rule merged (new labels)."""
    positions = [schema.code_columns[i] for i in plan.numeric]

    def merge(block: pd.DataFrame) -> pd.DataFrame:
        label = block[CLASS].to_numpy(dtype=np.int64)
        grouped = np.flatnonzero(label >= 0)
        if not plan.magnitudes or not len(grouped):
            return block
        rows = block.iloc[grouped]
        cells = contributions(_magnitudes(rows, schema, plan))
        drop = dominant_records(cells, plan.p)
        if int((~drop).sum()) < plan.k:
            drop[:] = True
        new = label.copy()
        new[grouped[drop]] = SUPPRESSED
        kept = grouped[~drop]
        if len(kept):
            merged = merge_dominant(
                label[kept],
                cells[~drop],
                rows[positions].to_numpy(dtype=np.float64)[~drop],
                plan.p,
                plan.k,
            )
            new[kept] = merged.labels
        if np.array_equal(new, label):
            return block
        out = block.copy()
        out[CLASS] = new
        return out

    return merge


SUPPRESSED = -1
"""The group label of a record the p% rule suppresses (no group: not condensed)."""


def merge_dominant_groups(
    engine: Engine, placed: Table, schema: Schema, plan: CondensePlan, timer: StageTimer
) -> tuple[Table, int]:
    """The placed rows with every group failing the p% rule merged into its nearest one.

    Per block (a group never spans blocks), over the magnitudes of
    :attr:`CondensePlan.magnitudes` (:mod:`~sparkanon.algorithms.condensation.dominance`):
    first the records that make the block's own sums fail the rule are suppressed
    (:func:`dominant_records`: no merge within the block could protect them; all of a
    block's records when fewer than ``k`` would remain), then every group that fails the
    rule or holds fewer than ``k`` records merges with the group of nearest centroid in
    the encoded numeric attributes (:func:`merge_dominant`) until none does.

    Returns:
        ``(rows, suppressed)``: the rows (suppressed ones with group :data:`SUPPRESSED`),
        persisted, and how many records were suppressed.
    """
    if not plan.magnitudes:
        return placed, 0
    with timer.stage("dominance"):
        merged = engine.persist(
            engine.map_groups(placed, BLOCK, make_merge_fn(schema, plan), engine.schema_of(placed)),
            materialize=True,
        )
        suppressed = int(engine.count(engine.where(merged, CLASS, "<", 0)))
        if suppressed:
            log.info("dominance: %d records suppressed by the p%% rule", suppressed)
    return merged, suppressed


@dataclass(frozen=True)
class Condensed:
    """What :func:`condense_groups` gives.

    Attributes:
        publication: the staged release (no group column).
        table: the condensed table with its group ids (in memory; verification reads it).
    """

    publication: Publication
    table: Table


def condense_groups(
    engine: Engine,
    placed: Table,
    schema: Schema,
    plan: CondensePlan,
    timer: StageTimer,
    tmp_path: str | None,
    fmt: str,
    key: RunKey,
) -> Condensed:
    """Condense every group and write the synthetic table, without group ids, to staging.

    The synthetic rows are written in the keyed order of
    :func:`~sparkanon.stages.publish.staged` (``key``).
    """
    with timer.stage("condense"):
        table = engine.persist(
            engine.map_groups(
                placed,
                BLOCK,
                make_condense_fn(schema, plan),
                synthetic_columns(schema, group=True),
            ),
            materialize=True,
        )
        names = [n for n, _ in synthetic_columns(schema)]
        class_key = [k.name for k in schema.kinds]
        publication = Publication(
            {MAIN: engine.select(table, names)}, MAIN, class_key, schema.sensitive.name
        )
        published = staged(engine, publication, tmp_path, fmt, key)
        log.info("condense: %d numeric attributes condensed", len(plan.numeric))
    return Condensed(published, table)


# ------------------------------------------------------------------------- verification

_N = "_n"


def _origin(d: int) -> np.ndarray:
    """The origin the verification sums are taken about: the middle of the encoded range."""
    return np.full(d, 0.5)


def _flat_columns(prefix: str, d: int) -> list[tuple[str, str]]:
    return [(f"{prefix}{name}", "double") for name in flat_names(d)]


def make_terms_fn(
    codes_of: Callable[[pd.DataFrame], np.ndarray],
    group_of: Callable[[pd.DataFrame], np.ndarray],
    prefix: str,
    d: int,
) -> BatchFn:
    """Batch function: each row's group and its terms (1, x_i, x_i x_j) for the sums."""
    names = [n for n, _ in _flat_columns(prefix, d)]

    def terms(batch: pd.DataFrame) -> pd.DataFrame:
        t = row_terms(codes_of(batch), _origin(d))
        out = pd.DataFrame(t, columns=names)
        out.insert(0, GROUP, group_of(batch).astype(np.int64))
        return out

    return terms


def group_sums(
    engine: Engine,
    table: Table,
    terms: BatchFn,
    prefix: str,
    d: int,
) -> Table:
    """Per group the sums of the row terms: its :class:`GroupStats` in flat form."""
    return batch_sums(engine, table, terms, [(GROUP, "long"), *_flat_columns(prefix, d)], [GROUP])


def rounding_slack(kind: ContinuousKind) -> float:
    """How far, in codes, publishing rounds a value of ``kind``: half its step over its range.

    0 for a number (published unrounded); half a day for a date, half a microsecond for a
    timestamp (:mod:`sparkanon.attributes.dates`).
    """
    if not isinstance(kind, TemporalKind):
        return 0.0
    width = kind.high - kind.low if kind.high > kind.low else 1.0
    return kind.step / 2.0 / width


def make_check_fn(d: int, alpha: float, slack: np.ndarray | None = None) -> BatchFn:
    """Batch function over joined (original, synthetic) group sums -> per-group verdicts.

    ``slack``: per attribute, how far (in codes) the rounding of published values may move
    a group's mean (half a day of a date, half a microsecond of a timestamp; ``None``: 0);
    the mean offset reported is the excess over the mean bound and that slack.
    """
    slack = np.zeros(d) if slack is None else np.asarray(slack, dtype=float)
    orig = [f"o{n}" for n in flat_names(d)]
    synth = [f"s{n}" for n in flat_names(d)]

    def check(batch: pd.DataFrame) -> pd.DataFrame:
        o = batch[orig].to_numpy(dtype=np.float64)
        s = batch[synth].to_numpy(dtype=np.float64)
        counts = np.concatenate([o[:, 0], s[:, 0]])
        if len(batch) and np.all(np.isfinite(counts)) and np.all(counts >= 1):
            return _verdicts(*stacked_check(o, s, d, alpha, slack))
        return _verdicts(*looped_check(o, s, d, alpha, slack))

    return check


def floored_eigenvalues(values: np.ndarray) -> np.ndarray:
    """The eigenvalues the bounds take (each at least :data:`FLOAT_VARIANCE`).

    Every eigenvalue is raised to :data:`NULL_EIGENVALUE` of its group's largest and to
    :data:`FLOAT_VARIANCE`, whichever is larger.

    Args:
        values: ``(groups, d)`` eigenvalues, each row descending.
    """
    return np.maximum(np.maximum(values, NULL_EIGENVALUE * values[:, :1]), FLOAT_VARIANCE)


def looped_check(
    o: np.ndarray, s: np.ndarray, d: int, alpha: float, slack: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group (one at a time): records, mean excess and covariance excess over the bounds.

    The mean: along each axis of the original's eigenbasis, the synthetic mean's offset
    minus :func:`mean_tolerance` of the floored eigenvalues
    (:func:`floored_eigenvalues`) at the synthetic count, minus
    the slack projected on the axis (``sum_i |P_ij| slack_i``), at least 0.

    Args:
        o: the original groups' flat sums (about :func:`_origin`), one row per group.
        s: the synthetic groups' flat sums, same rows.
        d: the condensed attributes.
        alpha: the per-entry significance of the covariance bound.
        slack: see :func:`make_check_fn`.
    """
    slack = np.zeros(d) if slack is None else slack
    n = np.empty(len(o), dtype=np.int64)
    mean_off = np.empty(len(o))
    cov_ratio = np.empty(len(o))
    for r in range(len(o)):
        original = GroupStats.from_flat(o[r], d, _origin(d))
        synthetic = GroupStats.from_flat(s[r], d, _origin(d))
        n[r] = original.count
        values, axes = eigen_axes(original.covariance())
        floored = floored_eigenvalues(values[None, :])[0] if d else values
        shift = np.abs(axes.T @ (synthetic.mean() - original.mean()))
        allowed = mean_tolerance(floored, synthetic.count, alpha) + np.abs(axes).T @ slack
        mean_off[r] = float(np.maximum(shift - allowed, 0.0).max()) if d else 0.0
        gap = np.abs(axes.T @ synthetic.covariance() @ axes - np.diag(values))
        bound = covariance_tolerance(floored, synthetic.count, alpha) + COVARIANCE_FLOOR
        cov_ratio[r] = float(np.max(gap - bound)) if gap.size else 0.0
    return n, mean_off, cov_ratio


def _verdicts(n: np.ndarray, mean_off: np.ndarray, cov_excess: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            _N: n,
            "mean_off": mean_off,
            "cov_excess": cov_excess,
            "mean_bad": (mean_off > MEAN_TOLERANCE).astype(np.int64),
            "cov_bad": (cov_excess > 0).astype(np.int64),
        }
    )


def _stacked_moments(flat: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts, means and covariances of many groups' flat sums (as :class:`GroupStats`).

    The operations of :meth:`GroupStats.mean` and :meth:`GroupStats.covariance`,
    element for element, over a stack of groups (every count at least 1).
    """
    rows, cols = np.triu_indices(d)
    count = flat[:, 0]
    sums = flat[:, 1 : 1 + d]
    products = np.zeros((len(flat), d, d))
    products[:, rows, cols] = flat[:, 1 + d :]
    products[:, cols, rows] = flat[:, 1 + d :]
    mean = _origin(d) + sums / count[:, None]
    m = sums / count[:, None]
    cov = products / count[:, None, None] - m[:, :, None] * m[:, None, :]
    return count, mean, (cov + np.swapaxes(cov, 1, 2)) / 2.0


def stacked_check(
    o: np.ndarray, s: np.ndarray, d: int, alpha: float, slack: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`looped_check`'s figures for a stack of groups at once (every count >= 1).

    The original group's eigen-decomposition (:func:`eigen_axes`: descending, clipped at
    0, each vector's largest component positive) by one stacked ``eigh``, the synthetic
    mean and covariance in that basis, the bounds :func:`mean_tolerance` and
    :func:`covariance_tolerance` of the floored eigenvalues at the synthetic count (the
    latter plus :data:`COVARIANCE_FLOOR`).

    Returns:
        ``(records per group, mean excess, covariance excess)``.
    """
    n_o, mean_o, cov_o = _stacked_moments(o, d)
    n_s, mean_s, cov_s = _stacked_moments(s, d)
    slack = np.zeros(d) if slack is None else slack
    if not d:
        return n_o.astype(np.int64), np.zeros(len(o)), np.zeros(len(o))
    values, vectors = np.linalg.eigh((cov_o + np.swapaxes(cov_o, 1, 2)) / 2.0)
    values = np.clip(values[:, ::-1], 0.0, None)
    vectors = vectors[:, :, ::-1]
    lead = np.argmax(np.abs(vectors), axis=1)
    at_lead = np.take_along_axis(vectors, lead[:, None, :], axis=1)
    axes = vectors * np.where(at_lead < 0.0, -1.0, 1.0)
    in_basis = np.swapaxes(axes, 1, 2) @ cov_s @ axes
    gap = np.abs(in_basis - values[:, :, None] * np.eye(d))
    floored = floored_eigenvalues(values)
    a = np.sqrt(3.0 * floored)
    shift = np.abs(np.einsum("gij,gi->gj", axes, mean_s - mean_o))
    allowed = a * np.sqrt(2.0 * np.log(2.0 / alpha) / n_s[:, None])
    allowed = allowed + np.einsum("gij,i->gj", np.abs(axes), slack)
    mean_off = np.maximum(shift - allowed, 0.0).max(axis=1)
    l_diag, l_off = np.log(4.0 / alpha), np.log(6.0 / alpha)
    n = n_s[:, None, None]
    bound = a[:, :, None] * a[:, None, :] * (np.sqrt(2.0 * l_off / n) + 2.0 * l_off / n)
    diagonal = a * a * (np.sqrt(l_diag / (2.0 * n_s[:, None])) + 2.0 * l_diag / n_s[:, None])
    bound[:, np.arange(d), np.arange(d)] = diagonal
    excess = (gap - (bound + COVARIANCE_FLOOR)).reshape(len(o), -1).max(axis=1)
    return n_o.astype(np.int64), mean_off, excess


def make_dominance_fn(schema: Schema, plan: CondensePlan) -> BatchFn:
    """Batch function over one block's grouped rows: how many of its groups fail the p% rule."""

    def dominance(block: pd.DataFrame) -> pd.DataFrame:
        label = block[CLASS].to_numpy(dtype=np.int64)
        if not len(label) or not plan.magnitudes:
            return pd.DataFrame({"dominant": np.zeros(1, np.int64)})
        _, index = np.unique(label, return_inverse=True)
        cells = contributions(_magnitudes(block, schema, plan))
        total, largest, second = group_cells(index, cells, int(index.max()) + 1)
        failing = int(sensitive(total, largest, second, plan.p).any(axis=1).sum())
        return pd.DataFrame({"dominant": np.array([failing], np.int64)})

    return dominance


def verify_condensed(
    engine: Engine,
    placed: Table,
    condensed: Condensed,
    schema: Schema,
    plan: CondensePlan,
    alpha: float,
) -> dict[str, Any]:
    """The condensed table and its staged release checked against each group's originals.

    ``placed``: the rows with their groups as condensed (after :func:`merge_dominant_groups`).
    The per-group checks read the condensed table (with its group ids); the row count, the
    columns and the copies are those of the staged release.

    Returns:
        ``groups``, ``represented`` (original records the groups hold), ``synthetic``
        (the release's rows), ``smallest_group``, ``mean_failures``, ``covariance_failures``,
        ``worst_mean_offset`` (the largest excess over the mean bound), ``dominant_groups``
        (groups failing the p% rule), ``copies`` (synthetic records equal to an original
        record on every published attribute), ``covariance_compatibility`` and
        ``correlation_compatibility`` (whole table; ``None`` where undefined) and
        ``failed`` (messages; empty when it holds).
    """
    d = len(plan.numeric)
    codes = [schema.code_columns[i] for i in plan.numeric]
    kinds = [schema.kinds[i] for i in plan.numeric]
    grouped = engine.where(placed, CLASS, ">=", 0)
    originals = engine.persist(  # read again for the whole-table covariance
        group_sums(
            engine,
            grouped,
            make_terms_fn(
                lambda b: b[codes].to_numpy(dtype=np.float64), lambda b: b[CLASS].to_numpy(), "o", d
            ),
            "o",
            d,
        )
    )
    release = condensed.publication.tables[MAIN]

    def encoded_synthetic(batch: pd.DataFrame) -> np.ndarray:
        cols = [kind.encode(batch[kind.name])[0] for kind in kinds]
        return np.stack(cols, axis=1) if cols else np.empty((len(batch), 0))

    synthetic = engine.persist(
        group_sums(
            engine,
            condensed.table,
            make_terms_fn(encoded_synthetic, lambda b: pd.to_numeric(b[GROUP]).to_numpy(), "s", d),
            "s",
            d,
        )
    )
    joined = engine.join(originals, synthetic, [GROUP], how="outer")
    verdicts = engine.map_batches(
        joined,
        make_check_fn(d, alpha, np.array([rounding_slack(k) for k in kinds])),
        [
            (_N, "long"),
            ("mean_off", "double"),
            ("cov_excess", "double"),
            ("mean_bad", "long"),
            ("cov_bad", "long"),
        ],
    )
    totals = one_row(
        engine,
        verdicts,
        {
            "groups": ("count", _N),
            "represented": ("sum", _N),
            "smallest_group": ("min", _N),
            "mean_failures": ("sum", "mean_bad"),
            "covariance_failures": ("sum", "cov_bad"),
            "worst_mean_offset": ("max", "mean_off"),
        },
    )
    dominant = one_row(
        engine,
        engine.map_groups(grouped, BLOCK, make_dominance_fn(schema, plan), [("dominant", "long")]),
        {"dominant": ("sum", "dominant")},
    )["dominant"]
    rows = engine.count(release)
    condensed_rows = engine.count(condensed.table)
    leaked = [c for c, _ in engine.schema_of(release) if c == GROUP]
    copies, shared_copies = count_copies(engine, grouped, release, schema, plan.k)
    widths = np.array([k.raw(np.ones(1))[0] - k.raw(np.zeros(1))[0] for k in kinds])
    original_cov, synthetic_cov = (
        _whole_covariance(engine, table, prefix, d) * np.outer(widths, widths)
        for table, prefix in ((originals, "o"), (synthetic, "s"))
    )
    engine.unpersist(originals)
    engine.unpersist(synthetic)
    figures: dict[str, Any] = {
        "groups": int(totals["groups"]),
        "represented": int(totals["represented"]),
        "synthetic": int(rows),
        "smallest_group": None
        if totals["smallest_group"] is None
        else int(totals["smallest_group"]),
        "mean_failures": int(totals["mean_failures"]),
        "covariance_failures": int(totals["covariance_failures"]),
        "worst_mean_offset": totals["worst_mean_offset"],
        "dominant_groups": int(dominant or 0),
        "copies": copies,
        "copies_of_shared_combinations": shared_copies,
        "covariance_compatibility": _compatibility(
            original_cov, synthetic_cov, covariance_compatibility
        ),
        "correlation_compatibility": _compatibility(
            original_cov, synthetic_cov, correlation_compatibility
        ),
    }
    failed: list[str] = []
    if figures["smallest_group"] is not None and figures["smallest_group"] < plan.k:
        failed.append(f"a group holds {figures['smallest_group']} records, fewer than k={plan.k}")
    if figures["dominant_groups"]:
        failed.append(
            f"{figures['dominant_groups']} groups fail the p% rule at p={plan.p:g} (one "
            "record dominates a sum no merge within its block could dilute)"
        )
    if figures["mean_failures"]:
        failed.append(
            f"{figures['mean_failures']} groups' synthetic mean is outside its bound at "
            f"significance {alpha:g} (worst excess {figures['worst_mean_offset']:.3g})"
        )
    if figures["covariance_failures"]:
        failed.append(
            f"{figures['covariance_failures']} groups' synthetic covariance is outside its "
            f"bound at significance {alpha:g}"
        )
    if rows != condensed_rows or leaked:
        failed.append(
            f"the staged release ({rows} rows, columns {leaked or 'without group'}) is not "
            f"the condensed table ({condensed_rows} rows) without its group ids"
        )
    if copies:
        failed.append(
            f"{copies} synthetic records equal an original record on every quasi-identifier, "
            f"a combination fewer than k={plan.k} records share"
        )
    figures["failed"] = failed
    return figures


COMPATIBILITY_DIGITS = 4
"""Decimals of the published compatibility measures: utility figures, not moments."""


def _compatibility(original: np.ndarray, synthetic: np.ndarray, measure: Any) -> float | None:
    """A compatibility measure over the whole table, rounded (``None`` where undefined)."""
    if original.size < 2:
        return None
    value = float(measure(original, synthetic))
    return None if np.isnan(value) else round(value, COMPATIBILITY_DIGITS)


def _whole_covariance(engine: Engine, sums: Table, prefix: str, d: int) -> np.ndarray:
    """The covariance of every record of the groups' sums (the groups merged), encoded scale."""
    names = [f"{prefix}{n}" for n in flat_names(d)]
    total = one_row(engine, sums, {n: ("sum", n) for n in names})
    stats = GroupStats.from_flat(np.array([float(total[n]) for n in names]), d, _origin(d))
    return stats.covariance() if stats.count > 1 else np.zeros((d, d))


def count_copies(
    engine: Engine, grouped: Table, synthetic: Table, schema: Schema, k: int
) -> tuple[int, int]:
    """Synthetic records equal to an original record on every quasi-identifier.

    Both sides in published form (numeric in their unit as doubles, categories as labels),
    joined on all quasi-identifiers. Reading chosen: condensation protects as k-anonymity
    does, so a synthetic record whose quasi-identifier values at least ``k`` original
    records share discloses no one (a group of identical records condenses to itself, as
    integer-valued attributes make common; the sensitive value is drawn from the group,
    as a k-anonymous class publishes its values); one whose combination fewer than ``k``
    originals hold is a copy that fails the release.

    Returns:
        ``(copies of combinations fewer than k records hold, copies of combinations at
        least k records share)``.
    """
    names = [k.name for k in schema.kinds]
    types = [(n, t) for n, t in synthetic_columns(schema) if n in names]

    def decoded(batch: pd.DataFrame) -> pd.DataFrame:
        out: dict[str, Any] = {}
        for kind, code in zip(schema.kinds, schema.code_columns, strict=True):
            values = batch[code].to_numpy()
            out[kind.name] = (
                numeric_values(kind, kind.raw(values))
                if isinstance(kind, ContinuousKind)
                else kind.decode(values)
            )
        return pd.DataFrame(out)

    def typed(batch: pd.DataFrame) -> pd.DataFrame:
        out = batch[names].copy()
        for kind in schema.kinds:
            if isinstance(kind, ContinuousKind) and not isinstance(kind, TemporalKind):
                out[kind.name] = pd.to_numeric(out[kind.name]).astype(np.float64)
        return out

    combos = engine.aggregate(
        engine.map_batches(grouped, decoded, types), names, {"_holders": ("count", names[0])}
    )
    right = engine.map_batches(engine.select(synthetic, names), typed, types)
    holders = Col("_holders")  # null where no original record has the combination
    matched = engine.with_columns(
        engine.join(right, combos, names, how="left"),
        {
            "_rare": When(holders, "<", Lit(k), Lit(1), Lit(0)),
            "_shared": When(holders, ">=", Lit(k), Lit(1), Lit(0)),
        },
    )
    counts = one_row(engine, matched, {"rare": ("sum", "_rare"), "shared": ("sum", "_shared")})
    return int(counts["rare"] or 0), int(counts["shared"] or 0)


__all__ = [
    "GROUP",
    "CondensePlan",
    "Condensed",
    "condense_groups",
    "merge_dominant_groups",
    "synthetic_columns",
    "verify_condensed",
]
