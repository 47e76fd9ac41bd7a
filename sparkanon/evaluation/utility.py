"""Utility of a release against its input, by aggregations: distances and a classifier.

Three engine passes, each reducing rows to per-bin counts before the driver sees them:

1. **Domains** (input): per numeric column its smallest and largest value, per
   categorical column (and the label) its distinct values and their counts (at most
   ``max_values``; a column with more is left out, with a warning).
2. **Histograms** (input and release): per column and label, the rows over the
   original bins, a published value spread over the original values it stands for
   (:mod:`sparkanon.metrics.distribution`); pre-summed per batch.
3. **Scoring** (held-out originals): a naive Bayes classifier from the release's
   histograms (and one from the input's, the baseline) predicts each held-out row's
   label, and the majority rule the training label; per batch the correct predictions
   of each are counted. A numeric label (a continuous quasi-identifier, or a numeric
   sensitive attribute) is predicted as its bin: ``bins`` equal-width bins of the
   input's range. A categorical label of more than ``max_values`` distinct values
   cannot be predicted: the classifier is then not computed
   (:class:`~sparkanon.errors.MeasureUnavailableError`).

Results: per column the total variation distance between the input's and the release's
distributions over the same bins (and the ordered earth mover's distance of a numeric
column), and the classifier's accuracy trained on the release and on the input, with
the majority rate.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.attributes.text import distinct_text, row_text
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.errors import MeasureUnavailableError
from sparkanon.metrics.distribution import (
    Binning,
    NaiveBayes,
    categorical_binning,
    histogram_by_label,
    numeric_binning,
    ordered_emd,
    original_bins,
    shares,
    variational,
)
from sparkanon.stages._common import log

_DOMAIN_COLUMNS = [
    ("col", "long"),
    ("value", "string"),
    ("n", "long"),
    ("lo", "double"),
    ("hi", "double"),
]
_HIST_COLUMNS = [("col", "long"), ("label", "long"), ("bin", "long"), ("w", "double")]
_UNREAD, _NULL = -1, -2
_SCORE_COLUMNS = [("model", "long"), ("correct", "long"), ("n", "long")]


@dataclass(frozen=True)
class ColumnSpec:
    """One column the utility compares.

    Attributes:
        name: the column.
        numeric: compared over equal-width bins of the input's range.
        paths: a taxonomy's leaf-to-root chains (categorical with a hierarchy file).
        order: an ordinal column's declared order.
    """

    name: str
    numeric: bool
    paths: tuple[tuple[str, ...], ...] = ()
    order: tuple[str, ...] = ()


def _distinct_text(series: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """Per row the position of its value's trimmed text in ``texts`` (``-1``: null), and ``texts``.

    The text of a value is pandas' ``astype("string")`` text, trimmed (as a published
    value reads; :func:`~sparkanon.attributes.text.distinct_text` unspelled), once per
    distinct value of text, integer and boolean columns; others row by row (a date's text
    depends on its column's type), and so are unhashable values (lists).
    """
    types = pd.api.types
    per_value = types.is_object_dtype(series) or types.is_string_dtype(series)
    if per_value or types.is_integer_dtype(series) or types.is_bool_dtype(series):
        try:
            return distinct_text(series, spelled=False)
        except TypeError:
            pass
    return row_text(series)


def _text_counts(series: pd.Series) -> pd.Series:
    """Rows per trimmed text, nulls left out (``series.astype("string").str.strip()`` counted)."""
    codes, texts = _distinct_text(series)
    counts = np.bincount(codes[codes >= 0], minlength=len(texts))
    summed = pd.Series(counts, index=texts.array).groupby(level=0).sum()
    return summed[summed > 0]


Labels = Mapping[str, int] | Binning
"""A label's codes: each value's code by its text, or (a numeric label) its bins."""


def _n_labels(labels: Labels) -> int:
    """How many label codes there are."""
    return labels.n_bins if isinstance(labels, Binning) else len(labels)


def _label_codes(series: pd.Series, labels: Labels) -> np.ndarray:
    """Each row's label code (``-1``: null, or a label ``labels`` lacks).

    By its trimmed text; a numeric label's code is the bin of its number (a value that
    is not a number, such as a published range, is unknown).
    """
    if isinstance(labels, Binning):
        return original_bins(labels, series)
    codes, texts = _distinct_text(series)
    known = texts.map(labels).fillna(-1).to_numpy(dtype=np.int64)
    return np.append(known, -1)[codes]  # code -1 (null) reads the appended -1


def make_domain_fn(columns: Sequence[ColumnSpec]) -> BatchFn:
    """Per batch: numeric columns' range and row count, categorical columns' value counts."""

    def domain(batch: pd.DataFrame) -> pd.DataFrame:
        parts = []
        for c, spec in enumerate(columns):
            if spec.numeric:
                x = pd.to_numeric(batch[spec.name], errors="coerce").to_numpy(dtype=np.float64)
                x = x[np.isfinite(x)]
                if x.size:
                    parts.append(
                        pd.DataFrame(
                            {
                                "col": [c],
                                "value": [""],
                                "n": [x.size],
                                "lo": [x.min()],
                                "hi": [x.max()],
                            }
                        )
                    )
                continue
            counts = _text_counts(batch[spec.name])
            parts.append(
                pd.DataFrame(
                    {
                        "col": c,
                        "value": counts.index.astype(str),
                        "n": counts.to_numpy(),
                        "lo": np.nan,
                        "hi": np.nan,
                    }
                )
            )
        if not parts:
            return pd.DataFrame({k: pd.Series(dtype=_np(t)) for k, t in _DOMAIN_COLUMNS})
        out = pd.concat(parts, ignore_index=True)
        return out.astype({k: _np(t) for k, t in _DOMAIN_COLUMNS})

    return domain


def _np(ddl: str) -> Any:
    return {"long": "int64", "double": "float64", "string": "object"}[ddl]


def binnings(
    engine: Engine,
    table: Table,
    columns: Sequence[ColumnSpec],
    bins: int,
    max_values: int,
    label: str | ColumnSpec | None = None,
) -> tuple[list[Binning], list[str], Labels]:
    """The bins of each column over ``table`` (the input), and the label's codes.

    One pass over the rows: the label is one more column of it (categorical unless its
    spec says numeric). Returns the bins, warnings for the columns left out, and the
    label's codes: each value's code (sorted; empty without a label), or a numeric
    label's bins.

    Raises:
        MeasureUnavailableError: the label holds no value, or (categorical) more than
            ``max_values`` distinct values; its ``parts`` are ``("classification",)``.
    """
    if isinstance(label, str):
        label = ColumnSpec(label, numeric=False)
    if label is not None:
        columns = [*columns, ColumnSpec(label.name, numeric=label.numeric)]
    per_batch = engine.map_batches(table, make_domain_fn(columns), _DOMAIN_COLUMNS)
    summed = engine.aggregate(
        per_batch, ["col", "value"], {"n": ("sum", "n"), "lo": ("min", "lo"), "hi": ("max", "hi")}
    )
    # Categorical values per column are capped on the engine before the driver sees them.
    counted = engine.aggregate(summed, ["col"], {"values": ("count", "col")})
    sizes = engine.collect_small(counted, len(columns) + 1)
    too_many = {int(r.col) for r in sizes.itertuples() if int(r.values) > max_values}
    small = summed
    for c in sorted(too_many):
        small = engine.where(small, "col", "!=", c)
    rows = engine.collect_small(small, max_values * max(len(columns), 1) + 1)
    out, warnings = [], []
    labels: Labels = {}
    if label is not None:
        labels = _label_domain(label, rows[rows["col"] == len(columns) - 1], too_many, bins)
        columns = columns[:-1]
    for c, spec in enumerate(columns):
        mine = rows[rows["col"] == c]
        if c in too_many:
            warnings.append(
                f"utility: column {spec.name} has more than {max_values} distinct values "
                "compared as categories; its distribution is not compared (a column of "
                "numbers is compared over bins as a continuous quasi-identifier, or as the "
                "sensitive attribute with sensitive.kind: numeric)"
            )
            continue
        if mine.empty:
            warnings.append(f"utility: column {spec.name} holds no value in the input")
            continue
        if spec.numeric:
            out.append(
                numeric_binning(spec.name, float(mine["lo"].min()), float(mine["hi"].max()), bins)
            )
        else:
            leaves = sorted(mine["value"].astype(str))
            if spec.order:
                rank = {v: i for i, v in enumerate(spec.order)}
                leaves.sort(key=lambda v: (rank.get(v, len(rank)), v))
            out.append(categorical_binning(spec.name, leaves, spec.paths, spec.order))
    return out, warnings, labels


def _label_domain(
    label: ColumnSpec, rows: pd.DataFrame, too_many: Collection[int], bins: int
) -> Labels:
    """The label's codes from its domain rows (:func:`binnings`'s last column)."""
    if rows.empty and not too_many:
        raise MeasureUnavailableError(
            f"report.label {label.name!r} holds no value in the input; choose another report.label",
            ("classification",),
        )
    if label.numeric:
        return numeric_binning(label.name, float(rows["lo"].min()), float(rows["hi"].max()), bins)
    if too_many:
        raise MeasureUnavailableError(
            f"report.label {label.name!r} holds more distinct values than the classifier "
            "predicts as classes; choose another report.label (a numeric sensitive "
            "attribute, sensitive.kind: numeric, is predicted as its bins)",
            ("classification",),
        )
    return {v: i for i, v in enumerate(sorted(rows["value"].astype(str)))}


def make_histogram_fn(bins_of: Sequence[Binning], label: str | None, labels: Labels) -> BatchFn:
    """Per batch: per column, label and bin the summed weight of the rows (spread)."""
    n_labels = max(_n_labels(labels), 1)

    def histogram(batch: pd.DataFrame) -> pd.DataFrame:
        if label is None:
            codes = np.zeros(len(batch), dtype=np.int64)
        else:
            codes = _label_codes(batch[label], labels)
        cols, ys, ks, ws = [], [], [], []
        for c, b in enumerate(bins_of):
            if b.column not in batch.columns:
                continue
            counts, unread, nulls = histogram_by_label(b, batch[b.column], codes, n_labels)
            y, k = np.nonzero(counts)
            cols.append(np.full(len(y) + 2, c, dtype=np.int64))
            ys.append(np.append(y, [0, 0]))
            ks.append(np.append(k, [_UNREAD, _NULL]))
            ws.append(np.append(counts[y, k], [float(unread), float(nulls)]))
        arrays = [cols, ys, ks, ws]
        return pd.DataFrame(
            {
                name: np.concatenate(parts).astype(_np(ddl)) if parts else np.array([], _np(ddl))
                for (name, ddl), parts in zip(_HIST_COLUMNS, arrays, strict=True)
            }
        )

    return histogram


@dataclass
class Histograms:
    """Per column, ``(labels, bins)`` weights, and the unread and null rows."""

    counts: dict[str, np.ndarray]
    unread: dict[str, int]
    nulls: dict[str, int]


def histograms(
    engine: Engine,
    table: Table,
    bins_of: Sequence[Binning],
    label: str | None,
    labels: Labels,
) -> Histograms:
    """The histograms of ``table``'s columns over ``bins_of`` (one engine pass)."""
    n_labels = max(_n_labels(labels), 1)
    rows = engine.map_batches(table, make_histogram_fn(bins_of, label, labels), _HIST_COLUMNS)
    summed = engine.aggregate(rows, ["col", "label", "bin"], {"w": ("sum", "w")})
    cap = sum(b.n_bins + 2 for b in bins_of) * n_labels + 1
    got = engine.collect_small(summed, cap)
    out = Histograms({}, {}, {})
    for c, b in enumerate(bins_of):
        mine = got[got["col"] == c]
        counts = np.zeros((n_labels, b.n_bins))
        real = mine[mine["bin"] >= 0]
        np.add.at(
            counts,
            (real["label"].to_numpy(int), real["bin"].to_numpy(int)),
            real["w"].to_numpy(float),
        )
        out.counts[b.column] = counts
        out.unread[b.column] = int(round(mine.loc[mine["bin"] == _UNREAD, "w"].sum()))
        out.nulls[b.column] = int(round(mine.loc[mine["bin"] == _NULL, "w"].sum()))
    return out


def distances(original: Histograms, release: Histograms, bins_of: Sequence[Binning]) -> dict:
    """Per column: total variation distance (and ordered EMD for numbers), input vs release."""
    out: dict[str, Any] = {}
    for b in bins_of:
        if b.column not in release.counts or release.counts[b.column].sum() == 0:
            continue
        p = shares(original.counts[b.column].sum(axis=0))
        q = shares(release.counts[b.column].sum(axis=0))
        entry: dict[str, Any] = {"tvd": float(variational(p, q)), "bins": b.n_bins}
        if b.numeric:
            entry["emd"] = float(ordered_emd(p, q))
        if release.unread.get(b.column):
            entry["unread_rows"] = release.unread[b.column]
        out[b.column] = entry
    return out


@dataclass(frozen=True)
class MajorityRule:
    """The baseline classifier: the training data's most frequent label for every row."""

    label: int

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """``label`` for every row."""
        return np.full(len(frame), self.label, dtype=np.int64)


def make_score_fn(
    models: Sequence[NaiveBayes | MajorityRule], label: str, labels: Labels
) -> BatchFn:
    """Per batch: per model, the held-out rows of a known label and those predicted right."""

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        truth = _label_codes(batch[label], labels)
        known = truth >= 0
        rows = batch[known]
        out = []
        for m, model in enumerate(models):
            correct = int((model.predict(rows) == truth[known]).sum()) if len(rows) else 0
            out.append((m, correct, int(known.sum())))
        return pd.DataFrame(out, columns=[c for c, _ in _SCORE_COLUMNS]).astype("int64")

    return score


def accuracies(
    engine: Engine,
    holdout: Table,
    models: Sequence[NaiveBayes | MajorityRule],
    label: str,
    labels: Labels,
) -> tuple[list[float], int]:
    """Each model's accuracy on the held-out rows (of a label the training knew)."""
    scored = engine.map_batches(holdout, make_score_fn(models, label, labels), _SCORE_COLUMNS)
    summed = engine.collect_small(
        engine.aggregate(scored, ["model"], {"correct": ("sum", "correct"), "n": ("sum", "n")}),
        len(models) + 1,
    ).sort_values("model")
    n = int(summed["n"].iloc[0]) if len(summed) else 0
    return [float(r.correct) / n if n else float("nan") for r in summed.itertuples()], n


def utility(
    engine: Engine,
    original: Table,
    release: Table,
    columns: Sequence[ColumnSpec],
    *,
    bins: int = 20,
    max_values: int = 10_000,
    label: str | None = None,
    holdout: Table | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Distances per column, and the classifier's accuracy when a label and holdout are given.

    The label is compared as its spec in ``columns`` says (a numeric label is predicted
    as its bin), else as categories.

    Returns:
        ``({"distance": {...}, "classification": {...} | None}, warnings)``.

    Raises:
        MeasureUnavailableError: with a holdout, a label the classifier cannot predict (see
            :func:`binnings`); without one, such a label is left out of the pass.
    """
    features = [c for c in columns if c.name != label]
    spec = next((c for c in columns if c.name == label), ColumnSpec(label or "", numeric=False))
    try:
        bins_of, warnings, labels = binnings(
            engine, original, features, bins, max_values, spec if label is not None else None
        )
    except MeasureUnavailableError:
        if holdout is not None:
            raise
        label = None  # no classifier to train: the distances alone
        bins_of, warnings, labels = binnings(engine, original, features, bins, max_values)
    before = histograms(engine, original, bins_of, label, labels)
    after = histograms(engine, release, bins_of, label, labels)
    result: dict[str, Any] = {"distance": distances(before, after, bins_of), "classification": None}
    if label is None or holdout is None:
        return result, warnings
    n_labels = _n_labels(labels)
    models = []
    for hist in (before, after):
        priors = shares(next(iter(hist.counts.values())).sum(axis=1)) if hist.counts else None
        if priors is None or priors.sum() == 0:
            priors = np.full(n_labels, 1.0 / n_labels)
        models.append(
            NaiveBayes(tuple(bins_of), tuple(hist.counts[b.column] for b in bins_of), priors)
        )
    majority_rule = MajorityRule(int(np.argmax(models[0].priors)))
    (acc_original, acc_release, majority), n = accuracies(
        engine, holdout, [*models, majority_rule], label, labels
    )
    result["classification"] = {
        "target": label,
        "model": "naive Bayes over the original bins (published values spread)",
        "features": [b.column for b in bins_of],
        "label_bins": labels.n_bins if isinstance(labels, Binning) else None,
        "accuracy_original": acc_original,
        "accuracy_release": acc_release,
        "majority": majority,
        "test_rows": n,
    }
    log.info(
        "utility: classifier on %d held-out rows: %.4f (input) %.4f (release)",
        n,
        acc_original,
        acc_release,
    )
    return result, warnings
