"""Attacks on the equivalence classes of a table: homogeneity, similarity, skewness, linkage.

The classes are the groups of rows with identical quasi-identifier values as the table
holds them (:class:`~sparkanon.risk.view.TableView`; a null is a value of its own). On
each class, with the sensitive attribute ``S`` of the view:

* **homogeneity** (Machanavajjhala et al.; textbook section 20.3.2, table 20.3): a class
  whose rows all carry one sensitive value discloses it to anyone who links a person to
  the class. Reported: the records and classes in such classes.
* **similarity** (Shi, Zhang and Dong 2024, section 1.3 and table 2: a 2-sensitive class
  of ``HIV`` and ``Cancer`` still tells that the person is seriously ill): a class whose
  sensitive values all fall in one *level* discloses the level. With
  ``view.sensitive_levels`` each value's level is the declared one (a value without a
  declared level is a level of its own); without levels every value is its own level, so
  the attack is homogeneity again. For a numeric ``S`` a class is *similar* when the
  range of its values, ``max - min``, is at most ``similarity_share`` of the whole
  table's range (the values are then known to within that share of the domain).
  Homogeneous classes are similar.
* **skewness** (textbook section 20.3.3, the 1:99 HIV example): each class's distance to
  the whole table's distribution of ``S``, the earth mover's distance of
  :class:`~sparkanon.models.t_closeness.TCloseness` (the one implementation of it):
  equal ground distance (= the variational distance) for a nominal ``S``, ordered
  ground distance for an ``S`` with ``view.sensitive_order`` or a numeric ``S`` (its
  distinct values on a line; above ``max_values`` distinct values, ``max_values``
  equal-width bins of the table's range). Reported: the largest distance, the mean over
  records, the share of records whose class is farther than each cut-off, and a
  histogram of the records (and of the classes) over ``bins`` equal bins of ``[0, 1]``.
* **linkage** (prosecutor matching rate; textbook section 20.2, the voter-list join;
  Gong, Yang and Luo 2016, eqs 1-3): an attacker knows the values of a subset ``A`` of
  the quasi-identifiers of a target known to be in the table and picks one of the rows
  that carry them at random. Group the table by its ``A`` values: a target in a group of
  ``f`` rows is re-identified with probability ``1/f``, so the expected matching rate
  over the records is ``groups / rows`` and the records linked with certainty are those
  of groups of one row. On a raw input ``A`` are the exact values; on a release the
  published ones (a generalized range is one value: the prosecutor attacker knows which
  published class holds the target). The known subsets default to all the
  quasi-identifiers and every subset missing one of them.

  Items: a transaction column (a set of items a record) enters as one quasi-identifier
  whose value is the whole set in a canonical text (sorted items; the caller writes it):
  its groups are Gong et al.'s TBuckets and ``1/|TBucket|`` their ``Risk(t_c)`` (eq. 2).
  On an RT/TT release, the TT table with ``count_column="count"`` and the set column as
  the known subset gives the TBuckets of the published sets; grouping TT by ``group_id``
  with the set as the sensitive attribute gives the homogeneity of the anatomized groups.
  An attacker who knows only *some* items of a set (Terrovitis et al.'s ``k^m``) matches
  every record containing them, which equal-value groups cannot count;
  :func:`pattern_match_probability` gives the textbook's bound for that attacker under
  independent items (exercise 14: with ``B`` known items of ``r`` equally likely states,
  another of ``n`` records matches with probability at most ``n / r^B``).

Everything runs as aggregations on the engine: per (class, sensitive value) counts, one
row per class with its packed counts, a per-class batch function, and a final
aggregation to at most ``2 x 2 x bins`` rows; the driver holds the sensitive domain (at
most ``max_values`` codes) and those rows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.engine.expr import Col, Lit, When
from sparkanon.errors import MeasureUnavailableError, StatisticsOverflowError
from sparkanon.models.base import ClassSummaries, SensitiveDomain
from sparkanon.models.t_closeness import TCloseness
from sparkanon.risk.view import TableView

DEFAULT_CUTOFFS = (0.1, 0.2, 0.3, 0.5)
"""Skewness cut-offs: the share of records whose class is farther than each is reported."""
DEFAULT_BINS = 20
"""Bins of ``[0, 1]`` in the skewness histograms."""
DEFAULT_SIMILARITY_SHARE = 0.1
"""Numeric similarity: a class whose range is at most this share of the table's is similar."""
MAX_VALUES = 1000
"""Sensitive codes the skewness attack compares; a numeric attribute with more distinct
values is cut in this many equal-width bins (on a categorical one without a declared
order the sensitive attacks are not computed: :class:`MeasureUnavailableError`)."""
SENSITIVE_ATTACKS = ("homogeneity", "similarity", "skewness")
"""The attacks that read the sensitive values (left out together when they cannot run)."""
MAX_DOMAIN_ROWS = 1_000_000
"""Most distinct sensitive values the driver counts before deciding to bin."""
NULL_TEXT = "\x00null"
"""The text of a null sensitive value in the domain (a value of its own)."""


@dataclass(frozen=True)
class AttackSettings:
    """The parameters of the attacks on the sensitive attribute.

    Attributes:
        cutoffs: skewness distances whose exceedance is reported.
        bins: bins of ``[0, 1]`` of the skewness histograms.
        similarity_share: numeric similarity's share of the table's range.
        max_values: the most sensitive codes the skewness attack compares (see
            :data:`MAX_VALUES`).
    """

    cutoffs: Sequence[float] = DEFAULT_CUTOFFS
    bins: int = DEFAULT_BINS
    similarity_share: float = DEFAULT_SIMILARITY_SHARE
    max_values: int = MAX_VALUES

    def parameters(self) -> dict[str, Any]:
        """The settings as the report's ``parameters`` (JSON-able)."""
        return {
            "cutoffs": [float(c) for c in self.cutoffs],
            "bins": int(self.bins),
            "similarity_share": float(self.similarity_share),
            "max_values": int(self.max_values),
        }


DEFAULT_SETTINGS = AttackSettings()
"""The attacks' defaults."""

_CODE = "_att_code"
_PAIR = "_att_pair"
_N = "_att_n"
_LOW = (1 << 32) - 1
_CELLS = 4_000_000  # classes x codes handled at once by the per-class function


# --------------------------------------------------------------------------- pure functions


def homogeneous(s: ClassSummaries) -> np.ndarray:
    """``(m,)`` whether each class holds exactly one distinct sensitive value."""
    return s.distinct() == 1


def similar_levels(s: ClassSummaries) -> np.ndarray:
    """``(m,)`` whether all of a class's sensitive values share one level.

    Raises:
        ValueError: the summaries carry no levels.
    """
    if s.level_of is None:
        raise ValueError("similarity by levels needs the summaries' level_of")
    return s.distinct_levels() == 1


def similar_range(
    low: np.ndarray, high: np.ndarray, domain_low: float, domain_high: float, share: float
) -> np.ndarray:
    """``(m,)`` whether each class's numeric range is at most ``share`` of the domain's.

    A class of one value (``low == high``) is similar; a class with no numeric value
    (both missing) is not.
    """
    width = max(float(domain_high) - float(domain_low), 0.0)
    low = np.asarray(low, dtype=float)
    high = np.asarray(high, dtype=float)
    with np.errstate(invalid="ignore"):
        return (high - low) <= share * width + 1e-12 * max(width, 1.0)


def skewness_model(domain: SensitiveDomain, ordered: bool) -> TCloseness:
    """The earth mover's distance of t-closeness, bound to the table's distribution."""
    ground = "ordered" if ordered else "equal"
    return TCloseness(t=1.0, measure="emd", ground=ground).bind(domain)


def linkage_summary(known: Sequence[str], groups: int, rows: int, certain: int) -> dict[str, Any]:
    """The prosecutor matching figures of one known subset.

    Args:
        known: the quasi-identifiers the attacker knows.
        groups: distinct value combinations of ``known`` in the table.
        rows: records of the table.
        certain: records alone in their group (linked with certainty).

    Returns:
        ``known``, ``groups``, ``rows``, ``expected_rate`` (``groups / rows``: the mean
        over records of ``1 / group size``), ``certain_records`` and ``certain_share``.
    """
    return {
        "known": list(known),
        "groups": int(groups),
        "rows": int(rows),
        "expected_rate": groups / rows if rows else 0.0,
        "certain_records": int(certain),
        "certain_share": certain / rows if rows else 0.0,
    }


def pattern_match_probability(n: int, known: int, states: int = 2) -> dict[str, float]:
    """Chance that another of ``n`` records matches ``known`` independent attributes by luck.

    Textbook exercises 14 and 15 (section 20.8): each of the ``known`` attributes (items
    bought or not, ``states = 2``; ratings, ``states = R``) takes each state with
    probability ``1/states``, independently, so one other record matches the known
    pattern with probability ``p = states^-known``.

    Returns:
        ``exact``: ``1 - (1 - p)^n``, at least one of ``n`` others matches;
        ``bound``: ``min(1, n p)``, the union bound of exercise 14.
    """
    p = float(states) ** (-known)
    return {"exact": -math.expm1(n * math.log1p(-p)) if p < 1 else 1.0, "bound": min(1.0, n * p)}


def default_known_subsets(qi: Sequence[str]) -> list[tuple[str, ...]]:
    """All the quasi-identifiers, then every subset missing one of them (config order)."""
    subsets = [tuple(qi)]
    if len(qi) >= 2:
        subsets += [tuple(c) for c in itertools.combinations(qi, len(qi) - 1)]
    return subsets


def histogram(
    bins: int, bin_of: np.ndarray, weights: np.ndarray | None = None
) -> dict[str, list[Any]]:
    """``{edges, counts}`` of ``bins`` equal bins of ``[0, 1]``, from each item's bin index."""
    counts = np.bincount(bin_of, weights=weights, minlength=bins)[:bins]
    return {
        "edges": [i / bins for i in range(bins + 1)],
        "counts": [int(round(c)) for c in counts],
    }


def bin_index(distance: np.ndarray, bins: int) -> np.ndarray:
    """Bin of each distance in ``bins`` equal bins of ``[0, 1]`` (1 in the last)."""
    return np.clip(np.floor(np.asarray(distance, dtype=float) * bins), 0, bins - 1).astype(np.int64)


def value_text(value: Any) -> str:
    """A categorical value as text, the same on both engines (``5.0`` read as ``5``)."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


def summaries_from_pairs(
    sizes: np.ndarray, pairs: Sequence[Sequence[int]], n_values: int, level_of: np.ndarray | None
) -> ClassSummaries:
    """Class summaries from each class's packed ``(code << 32) | count`` list."""
    counts = np.zeros((len(sizes), n_values), dtype=np.int64)
    lengths = np.array([len(p) for p in pairs], dtype=np.int64)
    if len(pairs):
        flat = np.concatenate([np.asarray(p, dtype=np.int64) for p in pairs] + [np.zeros(0, "i8")])
        rows = np.repeat(np.arange(len(sizes)), lengths)
        np.add.at(counts, (rows, flat >> 32), flat & _LOW)
    return ClassSummaries(np.asarray(sizes, dtype=np.int64), counts, level_of)


# --------------------------------------------------------------------------- the domain


class _Domain:
    """The sensitive attribute on the driver: codes, levels, the bound distance.

    Attributes:
        domain: the :class:`SensitiveDomain` (values as text, counts per code).
        ordered: whether the ground distance is ordered.
        numbers: numeric ``S``: the sorted distinct values (``None`` when binned).
        edges: numeric ``S`` cut in bins: the bin edges.
        low, high: numeric ``S``: the table's range.
        codes: categorical ``S``: value text -> code.
    """

    def __init__(self, view: TableView, counts: pd.DataFrame, max_values: int) -> None:
        assert view.sensitive is not None
        name = view.sensitive
        self.numeric = view.sensitive_kind == "numeric"
        self.numbers: np.ndarray | None = None
        self.edges: np.ndarray | None = None
        self.low = math.nan
        self.high = math.nan
        self.codes: dict[str, int] = {}
        values = counts[name]
        n = counts[_N].to_numpy(dtype=np.int64)
        null = values.isna().to_numpy()
        if self.numeric:
            # A value that is not a number is a missing-value token: a null of its own.
            null = ~np.isfinite(_numbers(values))
            raw = _numbers(values[~null])
            numbers, inverse = np.unique(raw, return_inverse=True)
            kept = np.bincount(inverse.ravel(), weights=n[~null], minlength=numbers.size)
            kept = kept.astype(np.int64)
            self.low = float(numbers[0]) if numbers.size else math.nan
            self.high = float(numbers[-1]) if numbers.size else math.nan
            if numbers.size <= max_values:
                self.numbers = numbers
                texts = [repr(float(x)) for x in numbers]
                per_code = kept
            else:
                self.edges = np.linspace(self.low, self.high, max_values + 1)
                idx = np.clip(np.searchsorted(self.edges, numbers, "right") - 1, 0, max_values - 1)
                per_code = np.bincount(idx, weights=kept, minlength=max_values).astype(np.int64)
                texts = [f"bin{i}" for i in range(max_values)]
            self.ordered = True
        else:
            text = np.array([value_text(v) for v in values[~null]], dtype=object)
            uniq, inverse = np.unique(text.astype(str), return_inverse=True)
            texts = [str(t) for t in uniq]
            per_code = np.bincount(inverse.ravel(), weights=n[~null], minlength=len(texts))
            per_code = per_code.astype(np.int64)
            if len(texts) > max_values and not view.sensitive_order:
                raise MeasureUnavailableError(
                    f"the sensitive column {name!r} holds {len(texts)} distinct values compared "
                    f"as categories, more than the skewness attack compares ({max_values}); "
                    "set sensitive.kind: numeric if they are numbers (they are then binned), "
                    "or list them in order in sensitive.values",
                    SENSITIVE_ATTACKS,
                )
            self.ordered = bool(view.sensitive_order)
            self.codes = {t: i for i, t in enumerate(texts)}
        order_texts = list(view.sensitive_order) if view.sensitive_order else None
        if self.numeric:
            order_texts = list(texts)
        if null.any():
            self.null_code = len(texts)
            texts = list(texts) + [NULL_TEXT]
            per_code = np.append(per_code, int(n[null].sum()))
            if order_texts is not None:
                order_texts = order_texts + [NULL_TEXT]  # a null sits past the highest value
        else:
            self.null_code = -1
        level_of = self._levels(view, texts)
        self.has_levels = bool(view.sensitive_levels)
        self.domain = SensitiveDomain(
            values=tuple(texts),
            counts=np.asarray(per_code, dtype=np.int64),
            level_of=level_of,
            order=tuple(order_texts) if order_texts is not None else None,
            name=name,
        )
        self.model = skewness_model(self.domain, self.ordered)

    @staticmethod
    def _levels(view: TableView, texts: Sequence[str]) -> np.ndarray:
        """Each code's level index: the declared level, else a level of its own."""
        names: dict[str, int] = {}
        out = np.empty(len(texts), dtype=np.int64)
        for i, t in enumerate(texts):
            level = view.sensitive_levels.get(t) if view.sensitive_levels else None
            key = f"L:{level}" if level is not None else f"V:{t}"
            out[i] = names.setdefault(key, len(names))
        return out

    @property
    def n_values(self) -> int:
        """Sensitive codes."""
        return len(self.domain.values)

    def encode(self, values: pd.Series) -> np.ndarray:
        """The code of each value of a batch."""
        null = values.isna().to_numpy()
        out = np.full(len(values), self.null_code, dtype=np.int64)
        if self.numeric:
            x = _numbers(values)
            null = ~np.isfinite(x)
            x = x[~null]
            if self.numbers is not None:
                out[~null] = np.searchsorted(self.numbers, x)
            else:
                assert self.edges is not None
                last = len(self.edges) - 2
                out[~null] = np.clip(np.searchsorted(self.edges, x, "right") - 1, 0, last)
        else:
            out[~null] = [self.codes[value_text(v)] for v in values[~null]]
        return out


def _numbers(values: pd.Series) -> np.ndarray:
    """The values as floats; a text that is not a number (a missing-value token) is NaN."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=float, na_value=np.nan)
    text = values.map(lambda v: v.strip() if isinstance(v, str) else v)
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


# --------------------------------------------------------------------------- engine passes


def _make_pack_fn(qi: Sequence[str], sensitive: str, dom: _Domain) -> BatchFn:
    """Per (class, value) rows -> the class columns, the packed pair, the count."""

    def pack(batch: pd.DataFrame) -> pd.DataFrame:
        out = batch[list(qi)].copy()
        n = batch[_N].to_numpy(dtype=np.int64)
        out[_PAIR] = (dom.encode(batch[sensitive]) << 32) | n
        out[_N] = n
        out["_att_lo"] = _numbers(batch[sensitive]) if dom.numeric else 0.0
        out["_att_hi"] = out["_att_lo"]
        return out

    return pack


def _class_columns(cutoffs: Sequence[float]) -> list[tuple[str, str]]:
    cols = [
        ("homogeneous", "long"),
        ("similar", "long"),
        ("bin", "long"),
        ("size", "long"),
        ("distance", "double"),
        ("weighted", "double"),
    ]
    return cols + [(f"above{i}", "long") for i in range(len(cutoffs))]


def _make_class_fn(dom: _Domain, cutoffs: Sequence[float], bins: int, share: float) -> BatchFn:
    """Per batch of classes: the attack flags, the distance, its bin, records above cut-offs."""
    columns = _class_columns(cutoffs)

    def per_class(groups: pd.DataFrame) -> pd.DataFrame:
        parts = []
        step = max(1, _CELLS // max(dom.n_values, 1))
        for start in range(0, len(groups), step):
            chunk = groups.iloc[start : start + step]
            sizes = chunk["size"].to_numpy(dtype=np.int64)
            s = summaries_from_pairs(sizes, list(chunk["pairs"]), dom.n_values, dom.domain.level_of)
            distance = dom.model.measure(s)
            if dom.numeric:
                lo = pd.to_numeric(chunk["lo"]).to_numpy(dtype=float)
                hi = pd.to_numeric(chunk["hi"]).to_numpy(dtype=float)
                similar = similar_range(lo, hi, dom.low, dom.high, share) | homogeneous(s)
            else:
                similar = similar_levels(s)
            part = {
                "homogeneous": homogeneous(s).astype(np.int64),
                "similar": similar.astype(np.int64),
                "bin": bin_index(distance, bins),
                "size": sizes,
                "distance": distance,
                "weighted": distance * sizes,
            }
            for i, c in enumerate(cutoffs):
                part[f"above{i}"] = np.where(distance > c, sizes, 0)
            parts.append(pd.DataFrame(part))
        if not parts:
            return pd.DataFrame({n: pd.Series([], dtype="float64") for n, _ in columns})
        return pd.concat(parts, ignore_index=True)

    return per_class


def _domain_counts(engine: Engine, table: Table, sensitive: str, weight: str | None) -> Table:
    """Rows (or the multiplicity column's sum) per sensitive value."""
    agg = ("sum", weight) if weight else ("count", sensitive)
    return engine.aggregate(table, [sensitive], {_N: agg})


def sensitive_attacks_on_engine(
    engine: Engine,
    table: Table,
    view: TableView,
    settings: AttackSettings,
    count_column: str | None,
    grouped: bool,
) -> dict[str, Any]:
    """Homogeneity, similarity and skewness of the table's classes (see the module doc).

    Args:
        engine: the engine.
        table: the rows (the view's columns, and ``count_column`` when given).
        view: the quasi-identifiers and the sensitive attribute (required).
        settings: the cut-offs, bins, similarity share and most codes compared.
        count_column: a column of how many records each row stands for (TT's
            ``count``); ``None``: one record per row.
        grouped: ``table`` holds one row per (quasi-identifiers, sensitive value)
            already, ``count_column`` its records (a persisted class table, e.g. the
            evaluation's): it is read as it is, not aggregated and persisted again.

    Returns:
        ``rows``, ``classes``, ``homogeneity``, ``similarity``, ``skewness`` (see
        :func:`attacks_on_engine`).

    Raises:
        MeasureUnavailableError: the sensitive values cannot be compared (a categorical
            attribute of more than ``max_values`` distinct values without a declared
            order, or more distinct values than the driver counts); its ``parts`` are
            :data:`SENSITIVE_ATTACKS`.
    """
    cutoffs, bins = settings.cutoffs, settings.bins
    if view.sensitive is None:
        raise ValueError("the sensitive attacks need view.sensitive")
    if grouped and count_column is None:
        raise ValueError("a grouped table needs its count_column")
    qi, sens = list(view.quasi_identifiers), view.sensitive
    if grouped:
        assert count_column is not None
        per_value = engine.select(
            engine.with_columns(table, {_N: Col(count_column)}), qi + [sens, _N]
        )
    else:
        per_value = engine.persist(
            engine.aggregate(
                table,
                qi + [sens],
                {_N: ("sum", count_column) if count_column else ("count", sens)},
            )
        )
    try:
        try:
            counts = engine.collect_small(
                engine.aggregate(per_value, [sens], {_N: ("sum", _N)}), MAX_DOMAIN_ROWS
            )
        except StatisticsOverflowError:
            raise MeasureUnavailableError(
                f"the sensitive column {sens!r} holds more than {MAX_DOMAIN_ROWS} distinct "
                "values, more than the attacks on the classes count",
                SENSITIVE_ATTACKS,
            ) from None
        dom = _Domain(view, counts, settings.max_values)
        types = dict(engine.schema_of(per_value))
        packed = engine.map_batches(
            per_value,
            _make_pack_fn(qi, sens, dom),
            [(c, types[c]) for c in qi]
            + [(_PAIR, "long"), (_N, "long"), ("_att_lo", "double"), ("_att_hi", "double")],
        )
        groups = engine.aggregate(
            packed,
            qi,
            {
                "size": ("sum", _N),
                "pairs": ("collect", _PAIR),
                "lo": ("min", "_att_lo"),
                "hi": ("max", "_att_hi"),
            },
        )
        per_class = engine.map_batches(
            groups,
            _make_class_fn(dom, cutoffs, bins, settings.similarity_share),
            _class_columns(cutoffs),
        )
        aggs = {
            "classes": ("count", "size"),
            "records": ("sum", "size"),
            "weighted": ("sum", "weighted"),
            "max": ("max", "distance"),
        }
        aggs |= {f"above{i}": ("sum", f"above{i}") for i in range(len(cutoffs))}
        rows = engine.collect_small(
            engine.aggregate(per_class, ["homogeneous", "similar", "bin"], aggs), 4 * bins
        )
    finally:
        if not grouped:
            engine.unpersist(per_value)
    return _sensitive_report(rows, dom, cutoffs, bins, settings.similarity_share)


def _sensitive_report(
    rows: pd.DataFrame, dom: _Domain, cutoffs: Sequence[float], bins: int, share: float
) -> dict[str, Any]:
    """The driver's figures from the per (homogeneous, similar, bin) sums."""
    records = int(rows["records"].sum())
    classes = int(rows["classes"].sum())

    def part(flag: str) -> dict[str, Any]:
        hit = rows[rows[flag] == 1]
        r, c = int(hit["records"].sum()), int(hit["classes"].sum())
        return {
            "records": r,
            "classes": c,
            "share": r / records if records else 0.0,
            "class_share": c / classes if classes else 0.0,
        }

    similarity = part("similar")
    if dom.numeric:
        similarity |= {"reading": "numeric_range", "range_share": share}
    else:
        levels = dom.has_levels
        similarity |= {"reading": "levels" if levels else "values", "range_share": None}
    b = rows["bin"].to_numpy(dtype=np.int64)
    maximum = rows["max"].max() if len(rows) else math.nan
    top = float(maximum) if not pd.isna(maximum) else 0.0
    # the mean of distances is at most their maximum; the summed products may round above
    mean = min(float(rows["weighted"].sum()) / records, top) if records else 0.0
    skewness = {
        "distance": "emd_ordered" if dom.ordered else "emd_equal",
        "values": dom.n_values,
        "binned": dom.edges is not None,
        "max": top,
        "mean": mean,
        "above": {
            _cut_key(c): (int(rows[f"above{i}"].sum()) / records if records else 0.0)
            for i, c in enumerate(cutoffs)
        },
        "histogram": histogram(bins, b, rows["records"].to_numpy(dtype=float)),
        "class_histogram": histogram(bins, b, rows["classes"].to_numpy(dtype=float)),
    }
    return {
        "rows": records,
        "classes": classes,
        "homogeneity": part("homogeneous"),
        "similarity": similarity,
        "skewness": skewness,
    }


def _cut_key(c: float) -> str:
    """A cut-off as a JSON key (``"0.1"``)."""
    return repr(float(c))


def linkage_on_engine(
    engine: Engine,
    table: Table,
    known_subsets: Sequence[Sequence[str]],
    count_column: str | None = None,
) -> list[dict[str, Any]]:
    """The prosecutor matching rate of each known subset: two aggregations each.

    The subsets' one-row totals are stacked and collected together (one Spark job for
    all subsets, not one per subset).

    Args:
        engine: the engine.
        table: the rows.
        known_subsets: the column sets the attacker knows (each non-empty).
        count_column: a column of how many records each row stands for, or ``None``.

    Returns:
        One :func:`linkage_summary` per subset, in order.
    """
    totals = []
    for i, known in enumerate(known_subsets):
        if not known:
            raise ValueError("a known subset of quasi-identifiers is empty")
        first = known[0]
        size = ("sum", count_column) if count_column else ("count", first)
        groups = engine.aggregate(table, list(known), {"_att_size": size})
        groups = engine.with_columns(
            groups, {"_att_one": When(Col("_att_size"), "==", Lit(1), Lit(1), Lit(0))}
        )
        one = engine.aggregate(
            groups,
            [],
            {
                "groups": ("count", "_att_size"),
                "rows": ("sum", "_att_size"),
                "certain": ("sum", "_att_one"),
            },
        )
        totals.append(engine.with_columns(one, {"_att_subset": Lit(i)}))
    if not totals:
        return []
    # The subsets' one-row totals in one table: one collect (one Spark job), not one each.
    stacked = totals[0]
    for other in totals[1:]:
        stacked = engine.union(stacked, other)
    got = engine.collect_small(stacked, len(totals)).set_index("_att_subset")
    out = []
    for i, known in enumerate(known_subsets):
        row = got.loc[i]
        out.append(
            linkage_summary(known, int(row["groups"]), int(row["rows"]), int(row["certain"]))
        )
    return out


def attacks_on_engine(
    engine: Engine,
    table: Table,
    view: TableView,
    known_subsets: Sequence[Sequence[str]] | None = None,
    settings: AttackSettings = DEFAULT_SETTINGS,
    count_column: str | None = None,
    grouped: bool = False,
) -> dict[str, Any]:
    """Every attack of this module on one table (a raw input or a release).

    Args:
        engine: the engine.
        table: the rows.
        view: the quasi-identifiers and the sensitive attribute; with no sensitive
            attribute only the linkage attack runs.
        known_subsets: the column sets the attacker knows; ``None``:
            :func:`default_known_subsets` of the quasi-identifiers.
        settings: the cut-offs, bins, similarity share and most codes compared.
        count_column: a column of how many records each row stands for (TT's
            ``count``), or ``None``.
        grouped: ``table`` has one row per (quasi-identifiers, sensitive value) with
            ``count_column`` its records (see :func:`sensitive_attacks_on_engine`).

    Returns:
        A JSON-able dict::

            {"rows": int, "classes": int,
             "homogeneity": {"records", "classes", "share", "class_share"} | None,
             "similarity": {... same ..., "reading": "levels"|"values"|"numeric_range",
                            "range_share": float|None} | None,
             "skewness": {"distance": "emd_equal"|"emd_ordered", "values": int,
                          "binned": bool, "max": float, "mean": float,
                          "above": {"0.1": share, ...},
                          "histogram": {"edges", "counts"},        # records
                          "class_histogram": {"edges", "counts"}} | None,
             "linkage": [{"known", "groups", "rows", "expected_rate",
                          "certain_records", "certain_share"}, ...],
             "parameters": {"cutoffs", "bins", "similarity_share", "max_values"}}
    """
    if not view.quasi_identifiers:
        raise ValueError("the attacks need at least one quasi-identifier")
    subsets = (
        [tuple(s) for s in known_subsets]
        if known_subsets is not None
        else default_known_subsets(view.quasi_identifiers)
    )
    linkage = linkage_on_engine(engine, table, subsets, count_column)
    out: dict[str, Any] = {"homogeneity": None, "similarity": None, "skewness": None}
    if view.sensitive is not None:
        out |= sensitive_attacks_on_engine(engine, table, view, settings, count_column, grouped)
    else:
        full = linkage_on_engine(engine, table, [view.quasi_identifiers], count_column)[0]
        out |= {"rows": full["rows"], "classes": full["groups"]}
    out["linkage"] = linkage
    out["parameters"] = settings.parameters()
    return out
