"""Numeric intervals: how a range is cut into edges and how a published range is written.

Edges: :func:`interval_index` places values between sorted edges (``[edge, next edge)``,
the last interval closed); :func:`width_edges` cuts a range into intervals of given widths
aligned at an origin, on the decimals the config's numbers read as (:func:`decimal_grid`);
:func:`quantile_starts` cuts sorted values into bins of about equal rows;
:func:`binned_edges` generates equal-width or quantile bins and merges them level by
level; :func:`published_edges` puts one level's edges on the grid of the published
decimal places.

Text: a number is published snapped to :data:`SIGNIFICANT_DIGITS` significant digits
(:func:`snap_significant`, :func:`published_number`), a range bound rounded at a number of
decimal places (:func:`round_bound`), a range as ``[lo, hi]`` with its bounds separated
by :data:`RANGE_SEPARATOR` (:func:`published_range`), and an interval of a level as
``[lo, hi)`` (:func:`interval_label`).

Labels: with a column's top and bottom coding and declared intervals (:class:`Coding`),
each number gets its interval's label at every level of a width grid
(:func:`width_labels`), of quantile cuts (:func:`quantile_labels`) or of declared
intervals merged level by level (:func:`bound_labels`); a builder of generalization
hierarchies (:mod:`sparkanon.attributes.builders`) reads these from its config.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

import numpy as np

RANGE_SEPARATOR = ", "
"""Separates the bounds of a published range ``[lo, hi]`` and of an interval ``[lo, hi)``;
the config rejects ordinal labels that hold it, so a bound never contains it."""

SIGNIFICANT_DIGITS = 12
"""Decoded continuous values are snapped to this many significant digits before they are
published, which drops the noise of the normalise/decode round trip."""


def snap_significant(x: np.ndarray) -> np.ndarray:
    """Values rounded to :data:`SIGNIFICANT_DIGITS` significant digits, vectorised.

    Drops the float noise of the normalise/decode round trip (``0.1 * 3`` is
    ``0.30000000000000004``; snapped, ``0.3``). The rounded integer and the power of ten
    are exact, so the result is the double nearest the 12-digit decimal, as
    ``float(f"{v:.12g}")`` gives, without a Python call per value (the two differ only
    where the 13th digit is a decimal tie, rounded here half to even).
    """
    x = np.asarray(x, dtype=float)
    out = x.copy()
    ok = np.isfinite(x) & (x != 0)
    shift = (SIGNIFICANT_DIGITS - 1 - np.floor(np.log10(np.abs(x[ok])))).astype(np.int64)
    vals = x[ok]
    up = shift >= 0
    scale = 10.0 ** np.abs(shift)
    vals = np.where(up, np.round(vals * scale) / scale, np.round(vals / scale) * scale)
    out[ok] = vals
    return out


def published_number(x: float) -> str:
    """The published text of a number: ``25.0`` -> ``25``, ``2.5`` stays ``2.5``.

    The number is snapped to :data:`SIGNIFICANT_DIGITS` significant digits first, and a
    whole number is written without decimals.
    """
    r = float(f"{x:.{SIGNIFICANT_DIGITS}g}")  # drop the noise of the normalise/decode round trip
    if r == round(r) and abs(r) < 1e15:
        return str(int(round(r)))
    return f"{r:.{SIGNIFICANT_DIGITS}g}"


def round_bound(x: float, decimals: int, rounding: str) -> float:
    """Round one number at ``decimals`` places, after snapping off float noise.

    A range bound is rounded outwards (``ROUND_FLOOR`` low, ``ROUND_CEILING`` high); a
    published value to the nearest (``ROUND_HALF_EVEN``).

    The value is first snapped to :data:`SIGNIFICANT_DIGITS` significant digits
    (a code that decodes to ``53.99999999997`` for a true 54 stays 54), then
    rounded in decimal arithmetic, so ``0.3`` floors to ``0.3`` and does not
    become ``0.2`` through ``0.3 * 10 = 2.9999...``.

    Args:
        x: the decoded bound.
        decimals: decimal places to keep (0 for whole numbers).
        rounding: a :mod:`decimal` rounding mode (``ROUND_FLOOR`` for a low bound,
            ``ROUND_CEILING`` for a high one).

    Returns:
        The rounded number.
    """
    snapped = Decimal(f"{x:.{SIGNIFICANT_DIGITS}g}")
    step = Decimal(1).scaleb(-decimals)
    if snapped.as_tuple().exponent >= -decimals:  # already on the grid (large magnitudes too)
        return float(snapped)
    return float(snapped.quantize(step, rounding=rounding))


def published_range(lo: str, hi: str) -> str:
    """The published form of a generalized range: ``[lo, hi]``, or ``lo`` alone when equal.

    Every kind that publishes an interval uses this closed-interval format: the
    bounds are separated by a comma and one space, so neither negative numbers
    (``[-2, -1]``) nor labels holding ``-`` (``[7th-8th, HS-grad]``) are ambiguous.

    Args:
        lo: the formatted lower bound.
        hi: the formatted upper bound.

    Returns:
        ``lo`` when both bounds are the same, else ``[lo, hi]``.
    """
    return lo if lo == hi else f"[{lo}{RANGE_SEPARATOR}{hi}]"


def interval_label(lo: str, hi: str, closed: bool = False) -> str:
    """The published form of one interval of a level: ``[lo, hi)``, or ``[lo, hi]`` closed.

    The intervals of a level are half-open, so a value on an inner edge lies in exactly
    one of them; the last interval of a level may be closed at its highest edge. The
    bounds are separated as in :func:`published_range`, and both are written even when
    they are equal.

    Args:
        lo: the formatted lower edge.
        hi: the formatted upper edge.
        closed: whether the interval holds its upper edge.

    Returns:
        ``[lo, hi)``, or ``[lo, hi]`` when ``closed``.
    """
    return f"[{lo}{RANGE_SEPARATOR}{hi}{']' if closed else ')'}"


def interval_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Interval of each value between sorted ``edges``: ``i`` for ``edges[i] <= v < edges[i+1]``.

    The last interval is closed (``v == edges[-1]`` falls in it). Values outside
    ``[edges[0], edges[-1]]`` get ``-1``.
    """
    idx = np.searchsorted(edges, values, side="right") - 1
    idx = np.where(values == edges[-1], len(edges) - 2, idx)
    return np.where((values < edges[0]) | (values > edges[-1]), -1, idx)


def width_edges(
    widths: Sequence[float], origin: float, low: float, high: float
) -> list[np.ndarray]:
    """Edges of intervals of each width, aligned at ``origin``, covering ``[low, high]``."""
    out = []
    for w in widths:
        start = math.floor(float(f"{(low - origin) / w:.12g}"))
        count = max(1, math.floor(float(f"{(high - origin) / w:.12g}")) - start + 1)
        out.append(snap_significant(decimal_grid(origin, w, range(start, start + count + 1))))
    return out


def decimal_grid(origin: float, step: float, multiples: range) -> np.ndarray:
    """``origin + k * step`` for each ``k``, computed on the decimals the numbers read as.

    In binary floating point ``0.1 * 3`` is ``0.30000000000000004`` and ``-0.15 + 3 *
    0.05`` is ``2.8e-17``, not 0: an edge a config means as 0.3 or 0 would then fall just
    beside the value a CSV reads as 0.3 or 0. Computed on the shortest decimal text of
    ``origin`` and ``step`` (their ``repr``), each edge is the float nearest the decimal
    the config means, and every level's edges are the same numbers where they coincide
    (the levels nest).

    Args:
        origin: the grid's origin.
        step: its spacing (a width).
        multiples: the ``k`` to compute.

    Returns:
        The edges, as floats, in the order of ``multiples``.
    """
    o, w = Decimal(repr(float(origin))), Decimal(repr(float(step)))
    return np.array([float(o + w * k) for k in multiples], dtype=float)


def quantile_starts(counts: np.ndarray, bins: int) -> list[int]:
    """Where each of ``bins`` quantile bins after the first begins, by the rows of each value.

    A bin ends after the value where the cumulated share of rows reaches ``q = j / bins``;
    the next value opens the next bin (intervals are ``[edge, next edge)``). Positions past
    the last value are clipped to it.
    """
    cum = np.cumsum(counts) / float(np.sum(counts))
    last = len(counts) - 1
    return [
        min(int(np.searchsorted(cum, q - 1e-12, side="left")) + 1, last)
        for q in np.arange(1, bins) / bins
    ]


def binned_edges(
    values: np.ndarray, counts: np.ndarray | None, method: str, bins: int, merge: int
) -> list[np.ndarray]:
    """Generated interval levels: ``bins`` equal-width or quantile bins, then ``merge`` at a time.

    Args:
        values: the sorted distinct values (or the data's ``[low, high]`` for equal width).
        counts: rows of each value (quantile bins), or ``None``.
        method: ``equal_width`` or ``quantile``.
        bins: intervals of the finest level.
        merge: consecutive intervals merged into one at each next level (>= 2).

    Returns:
        The edges of each level, finest first, down to two intervals.
    """
    low, high = float(values[0]), float(values[-1])
    if method == "equal_width" or counts is None:
        edges = snap_significant(np.linspace(low, high, bins + 1))
    else:
        cuts = [float(values[i]) for i in quantile_starts(counts, bins)]
        edges = np.unique(np.array([low, *cuts, high], dtype=float))
        if len(edges) < 2:
            edges = np.array([low, high if high > low else low + 1.0])
    out = [edges]
    while len(out[-1]) > 3:
        coarser = out[-1][::merge]
        if coarser[-1] != out[-1][-1]:
            coarser = np.append(coarser, out[-1][-1])
        out.append(coarser)
    return out


def published_edges(edges: np.ndarray, decimals: int | None) -> np.ndarray:
    """One level's interval edges on the grid of ``decimals`` places, as they are published.

    The inner edges (the cuts between intervals) are rounded to the nearest, half to
    even as a published value is; the first edge is rounded down and the last up, so the
    level still covers every value the unrounded edges did. Cuts that round onto the same
    number, or onto the first or last edge, become one edge, and the intervals between
    them (narrower than one grid step) are gone. Rounding is monotone, so the edges stay
    sorted, and a coarser level's cuts, a subset of the finer level's, round to a subset
    of the finer level's rounded cuts: the levels still nest. Values placed between the
    rounded edges lie in exactly one label: ``[50, 182.7)`` and ``[182.7, 268.2]`` become
    ``[50, 183)`` and ``[183, 269]`` at ``decimals: 0``, 182.7 in the first (widening
    each label outwards instead would publish ``[50, 183)`` and ``[182, 269]``, which
    overlap).

    Each edge is first snapped to 12 significant digits (:func:`round_bound`), as the
    values placed between the edges are; a level whose edges snap to one number becomes
    one grid step from it.

    Args:
        edges: the sorted edges of one level (at least two).
        decimals: decimal places kept (``None``: the edges unchanged).

    Returns:
        The sorted, distinct rounded edges (at least two); ``edges`` itself when
        ``decimals`` is ``None``.
    """
    if decimals is None:
        return edges
    e = np.asarray(edges, dtype=float)
    first = round_bound(float(e[0]), decimals, ROUND_FLOOR)
    last = round_bound(float(e[-1]), decimals, ROUND_CEILING)
    cuts = [round_bound(float(v), decimals, ROUND_HALF_EVEN) for v in e[1:-1]]
    out = np.unique(np.array([first, *cuts, last], dtype=float))
    if len(out) < 2:  # a level narrower than the snapping: one grid step
        out = np.array([first, float(Decimal(f"{first!r}") + Decimal(1).scaleb(-decimals))])
    return out


@dataclass(frozen=True)
class Coding:
    """Top and bottom coding and declared intervals of a numeric column (``None``: absent).

    Attributes:
        top: values from ``top`` up are top-coded (``>=top``).
        bottom: values below ``bottom`` are bottom-coded (``<bottom``).
        bounds: declared half-open intervals ``[lo, hi)``, one row each (n x 2), sorted.
    """

    top: float | None
    bottom: float | None
    bounds: np.ndarray | None  # n x 2

    def coded(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(top-coded, bottom-coded)`` masks of numbers."""
        over = np.zeros(len(x), bool) if self.top is None else x >= self.top
        under = np.zeros(len(x), bool) if self.bottom is None else x < self.bottom
        return over, under & ~over

    def bound_index(self, x: np.ndarray) -> np.ndarray:
        """The bound ``[lo, hi)`` holding each number, ``-1`` for none."""
        assert self.bounds is not None
        i = np.searchsorted(self.bounds[:, 0], x, side="right") - 1
        inside = (i >= 0) & (x < self.bounds[np.maximum(i, 0), 1])
        return np.where(inside, i, -1)


def clipped_label(lo: float, hi: float, coding: Coding, label: Callable[[float], str]) -> str:
    """``[lo, hi)``, clipped to ``[bottom, top)`` when they are set."""
    if coding.bottom is not None:
        lo = max(lo, coding.bottom)
    if coding.top is not None:
        hi = min(hi, coding.top)
    return interval_label(label(lo), label(hi))


def width_labels(
    widths: Sequence[float],
    origin: float,
    coding: Coding,
    x: np.ndarray,
    label: Callable[[float], str],
) -> list[list[str]]:
    """Per width, each number's interval label on the grid aligned at ``origin``.

    The grid is :func:`width_edges`; each interval is clipped to the coding
    (:func:`clipped_label`).
    """
    if x.size == 0:
        return [[] for _ in widths]
    out = []
    for edges in width_edges(widths, origin, float(x.min()), float(x.max())):
        idx = interval_index(x, edges)
        out.append([clipped_label(edges[i], edges[i + 1], coding, label) for i in idx])
    return out


def quantile_labels(
    quantiles: Sequence[int],
    coding: Coding,
    x: np.ndarray,
    counts: np.ndarray,
    label: Callable[[float], str],
) -> list[list[str]]:
    """Per count of intervals, each number's quantile interval.

    The cuts are :func:`quantile_starts`, computed on the
    distinct numbers weighted by their rows; each level's starts are among the finer
    level's, as each count divides the one before.
    """
    if x.size == 0:
        return [[] for _ in quantiles]
    distinct, inverse = np.unique(x, return_inverse=True)
    rows = np.bincount(inverse.ravel(), weights=counts, minlength=len(distinct))
    out = []
    for bins in quantiles:
        starts = np.unique(np.array([0, *quantile_starts(rows, bins)], dtype=np.int64))
        interval = np.searchsorted(starts, np.arange(len(distinct)), side="right") - 1
        names = []
        for i, s in enumerate(starts):
            lo = distinct[s] if i or coding.bottom is None else coding.bottom
            if i + 1 < len(starts):
                names.append(interval_label(label(lo), label(distinct[starts[i + 1]])))
            elif coding.top is not None:
                names.append(interval_label(label(lo), label(coding.top)))
            else:
                names.append(interval_label(label(lo), label(distinct[-1]), closed=True))
        out.append([names[interval[j]] for j in inverse.ravel()])
    return out


def bound_labels(
    merges: Sequence[int], coding: Coding, x: np.ndarray, label: Callable[[float], str]
) -> list[list[str]]:
    """Each number's declared interval, then the merged intervals of each coarser level.

    Level ``j`` merges each run of ``merges[0] * ... * merges[j - 1]`` declared intervals.
    """
    bounds = coding.bounds
    assert bounds is not None
    idx = coding.bound_index(x)
    out = []
    step = 1
    for merge in (1, *merges):
        step *= merge
        first = (idx // step) * step
        last = np.minimum(first + step, len(bounds)) - 1
        out.append(
            [
                interval_label(label(bounds[a, 0]), label(bounds[b, 1]))
                for a, b in zip(first, last, strict=True)
            ]
        )
    return out
