"""Distributions of a column over the original domain, read from any published form.

The utility of a release is measured against the input on one common footing: each
column's distribution over the *original* domain (its bins). An original value falls in
one bin; a published value is read as the set of original values it stands for and
spread over them uniformly (the reading ARX and Iyengar 2002 use for generalized
values):

* a number (an original, a centroid, a perturbed or synthetic value): its bin;
* a numeric range ``[lo, hi]`` (Mondrian, local recoding) or a hierarchy band ``lo-hi``
  (full-domain levels of a numeric attribute): the bins it overlaps, each in proportion
  to the overlap (a band ``lo-hi`` is read as the interval ``[lo, hi]``);
* a categorical value of the domain: its bin; a taxonomy node (a hierarchy file): the
  leaves under it; an ordinal range ``[a, b]``: the values from ``a`` to ``b`` in the
  declared order;
* ``*`` or any value the domain cannot read: every bin (counted as *unread* when it is
  not ``*``, so a report can say so).

With these histograms :func:`variational` and :func:`ordered_emd` compare input and
release per attribute, and :class:`NaiveBayes` trains a classifier on a release and
scores original rows (Aggarwal 2015, section 20.2.2 uses the same model over
reconstructed distributions).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_BRACKETED = re.compile(rf"^\s*\[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\]\s*$")
_BAND = re.compile(rf"^\s*({_NUMBER})\s*-\s*({_NUMBER})\s*$")
_ORDINAL_RANGE = re.compile(r"^\s*\[(.+),\s*(.+)\]\s*$")
STAR = "*"


@dataclass(frozen=True)
class Binning:
    """How the values of one column map to the bins of its original domain.

    Attributes:
        column: the column.
        numeric: whether the column is a number column (``edges``) or categorical
            (``leaves``).
        edges: a numeric column's bin edges, increasing (``bins + 1`` of them).
        leaves: a categorical column's domain, one bin per value.
        nodes: published labels that stand for several leaves (taxonomy nodes), to
            the bins of those leaves.
        order: an ordered categorical column's values in order (ordinal ranges).
    """

    column: str
    numeric: bool
    edges: np.ndarray = field(default_factory=lambda: np.zeros(0))
    leaves: tuple[str, ...] = ()
    nodes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    order: tuple[str, ...] = ()

    @property
    def n_bins(self) -> int:
        """How many bins the column has."""
        return len(self.edges) - 1 if self.numeric else len(self.leaves)


def numeric_binning(column: str, lo: float, hi: float, bins: int) -> Binning:
    """``bins`` equal-width bins over ``[lo, hi]`` (one bin when ``lo == hi``)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        edges = np.array([lo, lo + 1.0]) if math.isfinite(lo) else np.array([0.0, 1.0])
    else:
        edges = np.linspace(lo, hi, bins + 1)
    return Binning(column, True, edges=edges)


def categorical_binning(
    column: str,
    leaves: Sequence[str],
    paths: Sequence[Sequence[str]] = (),
    order: Sequence[str] = (),
) -> Binning:
    """The bins of a categorical column.

    Args:
        column: the column.
        leaves: the domain (the values the input holds, or a declared order).
        paths: for a taxonomy, each leaf's chain of ancestors (leaf first), in any
            order; the inner nodes then stand for the leaves under them.
        order: an ordinal column's declared order.
    """
    index = {v: i for i, v in enumerate(leaves)}
    under: dict[str, list[int]] = {}
    for path in paths:
        if not path or path[0] not in index:
            continue
        for node in path[1:]:
            under.setdefault(node, []).append(index[path[0]])
    nodes = {n: tuple(sorted(set(b))) for n, b in under.items() if n not in index}
    return Binning(column, False, leaves=tuple(leaves), nodes=nodes, order=tuple(order))


@dataclass(frozen=True)
class Spread:
    """Where one published value's weight goes: bins and the share of each."""

    bins: np.ndarray
    shares: np.ndarray
    unread: bool = False


def _interval_spread(edges: np.ndarray, lo: float, hi: float) -> Spread:
    if hi < lo:
        lo, hi = hi, lo
    n = len(edges) - 1
    if hi == lo:
        return Spread(np.array([_bin_of(edges, np.array([lo]))[0]]), np.ones(1))
    left = np.clip(np.maximum(edges[:-1], lo), None, hi)
    right = np.clip(np.minimum(edges[1:], hi), lo, None)
    overlap = np.maximum(right - left, 0.0)
    # Parts of the interval outside the domain go to the end bins.
    overlap[0] += max(min(hi, edges[0]) - lo, 0.0)
    overlap[-1] += max(hi - max(lo, edges[-1]), 0.0)
    keep = np.flatnonzero(overlap > 0)
    if keep.size == 0:
        return Spread(np.arange(n), np.full(n, 1.0 / n))
    return Spread(keep, overlap[keep] / overlap[keep].sum())


def _bin_of(edges: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The bin of each number: below the first edge in bin 0, above the last in the last."""
    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)


def _everywhere(n: int, unread: bool) -> Spread:
    return Spread(np.arange(n), np.full(n, 1.0 / max(n, 1)), unread)


def spread_of(binning: Binning, value: object) -> Spread:
    """Where one published (or original) value's weight goes in ``binning``'s bins."""
    n = binning.n_bins
    text = str(value).strip()
    if text == STAR:
        return _everywhere(n, False)
    if binning.numeric:
        try:
            x = float(text)
        except ValueError:
            found = _BRACKETED.match(text) or _BAND.match(text)
            if found is None:
                return _everywhere(n, True)
            return _interval_spread(binning.edges, float(found.group(1)), float(found.group(2)))
        if not math.isfinite(x):
            return _everywhere(n, True)
        return Spread(_bin_of(binning.edges, np.array([x])), np.ones(1))
    index = _leaf_index(binning)
    if text in index:
        return Spread(np.array([index[text]]), np.ones(1))
    if text in binning.nodes:
        bins = np.asarray(binning.nodes[text], dtype=np.int64)
        return Spread(bins, np.full(bins.size, 1.0 / bins.size))
    found = _ORDINAL_RANGE.match(text)
    if found is not None and binning.order:
        position = {v: i for i, v in enumerate(binning.order)}
        a, b = found.group(1).strip(), found.group(2).strip()
        if a in position and b in position:
            between = binning.order[position[a] : position[b] + 1]
            bins = np.array([index[v] for v in between if v in index], dtype=np.int64)
            if bins.size:
                return Spread(bins, np.full(bins.size, 1.0 / bins.size))
    return _everywhere(n, True)


def _leaf_index(binning: Binning) -> dict[str, int]:
    cached = binning.__dict__.get("_index")
    if cached is None:
        cached = {v: i for i, v in enumerate(binning.leaves)}
        object.__setattr__(binning, "_index", cached)  # a cache on a frozen object
    return cached


def histogram_by_label(
    binning: Binning, values: pd.Series, labels: np.ndarray, n_labels: int
) -> tuple[np.ndarray, int, int]:
    """Counts of ``values`` over the bins, per label: one row per label.

    Args:
        binning: the column's bins.
        values: the column's values (published or original), one per row.
        labels: each row's label code in ``[0, n_labels)``; ``-1`` (an unknown label)
            rows are left out.
        n_labels: how many labels.

    Returns:
        ``(counts (n_labels, n_bins), unread rows, null rows)``.
    """
    n_bins = binning.n_bins
    keep = labels >= 0
    # As a Series: its distinct values read as its rows do (a datetime as a Timestamp).
    codes, uniques = pd.factorize(pd.Series(values.to_numpy()[keep]), use_na_sentinel=True)
    present = codes >= 0
    nulls = int((~present).sum())
    # Rows per (distinct value, label), then each value's rows spread over its bins.
    per_value = np.bincount(
        codes[present] * n_labels + labels[keep][present], minlength=len(uniques) * n_labels
    ).reshape(len(uniques), n_labels)
    spreads = [spread_of(binning, value) for value in uniques]
    if not spreads:
        return np.zeros((n_labels, n_bins)), 0, nulls
    owner = np.repeat(np.arange(len(spreads)), [s.bins.size for s in spreads])
    bins = np.concatenate([s.bins for s in spreads]).astype(np.int64)
    weights = per_value[owner] * np.concatenate([s.shares for s in spreads])[:, None]
    cells = np.arange(n_labels)[None, :] * n_bins + bins[:, None]
    counts = np.bincount(cells.ravel(), weights=weights.ravel(), minlength=n_labels * n_bins)
    unread = int(per_value[[s.unread for s in spreads]].sum())
    return counts.reshape(n_labels, n_bins), unread, nulls


def variational(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Total variation distance ``(1/2) sum_i |p_i - q_i|`` over the last axis (in [0, 1]).

    ``p`` and ``q`` are distributions (each sums to 1 over the last axis); the
    textbook's eq. 20.13 (Aggarwal 2015), also t-closeness's variational distance.
    """
    return 0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum(axis=-1)


def ordered_emd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Earth mover's distance on a line of ``M`` ordered bins, ground distance ``|i-j|/(M-1)``.

    ``(1 / (M - 1)) sum_i |sum_{j <= i} (p_j - q_j)|`` over the last axis (Li, Li and
    Venkatasubramanian 2007), in [0, 1]; 0 for a single bin.
    """
    diff = np.asarray(p) - np.asarray(q)
    m = diff.shape[-1]
    if m < 2:
        return np.zeros(diff.shape[:-1])
    return np.abs(np.cumsum(diff, axis=-1)).sum(axis=-1) / (m - 1)


def shares(counts: np.ndarray) -> np.ndarray:
    """Counts normalised to sum 1 over the last axis (all zeros stay zeros)."""
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum(axis=-1, keepdims=True)
    return np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)


@dataclass(frozen=True)
class NaiveBayes:
    """A naive Bayes classifier from per-label bin counts of each feature.

    ``P(y | x) ~ P(y) prod_c P(bin_c(x) | y)``, with ``P(b | y) = (n_{y,b} + alpha) /
    (n_y + alpha B_c)`` (Laplace smoothing ``alpha``). Trained on a release, the counts
    are the published values spread over the original bins (:func:`histogram_by_label`),
    so it scores original rows.

    Attributes:
        binnings: each feature's bins.
        counts: per feature, ``(labels, bins)`` counts.
        priors: per label, its share of the training rows.
        alpha: the smoothing count.
    """

    binnings: tuple[Binning, ...]
    counts: tuple[np.ndarray, ...]
    priors: np.ndarray
    alpha: float = 1.0

    def log_likelihoods(self) -> list[np.ndarray]:
        """Per feature, ``log P(bin | label)`` as ``(labels, bins)``."""
        out = []
        for c in self.counts:
            smoothed = c + self.alpha
            out.append(np.log(smoothed / smoothed.sum(axis=1, keepdims=True)))
        return out

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """The most probable label code of each row of original values.

        A missing or unreadable value leaves its feature out of that row's sum.
        """
        with np.errstate(divide="ignore"):
            score = np.tile(np.log(self.priors), (len(frame), 1))
        for binning, table in zip(self.binnings, self.log_likelihoods(), strict=True):
            bins = original_bins(binning, frame[binning.column])
            ok = bins >= 0
            score[ok] += table[:, bins[ok]].T
        return np.argmax(score, axis=1)


def original_bins(binning: Binning, values: pd.Series) -> np.ndarray:
    """Each original value's bin; ``-1`` for a missing value or one outside the domain."""
    if binning.numeric:
        x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
        out = np.full(x.shape, -1, dtype=np.int64)
        ok = np.isfinite(x)
        out[ok] = _bin_of(binning.edges, x[ok])
        return out
    index = _leaf_index(binning)
    text = values.astype("string").str.strip()
    return text.map(index).fillna(-1).to_numpy(dtype=np.int64)
