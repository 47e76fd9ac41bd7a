"""Hierarchy builders: a categorical attribute's taxonomy generated from its distinct values.

ARX generates hierarchies from a column's values with its interval-, order- and
redaction-based builders (Prasser et al., "Flexible data anonymization using ARX",
2020); ``attributes[].builder`` (:mod:`sparkanon.config.builders`) does the same here:

* ``intervals`` over numbers or dates: level 0 is the value; level ``j`` its interval of
  the ``j``-th width (aligned at ``origin``), of the ``j``-th quantile split (each
  interval holding about as many rows), or of the declared ``bounds`` (level 1) merged
  ``merge[j-2]`` at a time. Intervals are half-open ``[lo, hi)``; a quantile split's
  last interval is closed at the largest value ``[lo, max]``. Values ``>= top`` are one
  node ``>=top`` at every level below the root, values ``< bottom`` one node ``<bottom``.
  Dates are days since 1970-01-01 and labelled in ISO (``[2020-01-01, 2020-02-01)``).
* ``groups``: level ``j`` groups ``sizes[j-1]`` consecutive values of the declared order,
  labelled ``[first, last]`` with the order's values (a group of one value keeps it).
* ``mask``: level ``j`` replaces the last ``masked[j-1]`` characters by ``char``
  (``12345 -> 1234* -> 123** -> *****``).

The root ``*`` closes the levels unless the last level is one node by construction (a
mask of the whole code, one group of the whole order). With ``from_level: N`` each value
is recoded to its level-``N`` node first: the leaves are the level-``N`` nodes, so several
values share a leaf, as top- and bottom-coded values do. :class:`BuiltHierarchy` holds the
taxonomy and each value's leaf; :func:`arx_text` writes it as an ARX file. A release
writes beside its data only the nodes it publishes and their ancestors
(:func:`published_paths`), never the leaves it does not publish.

The checks that need no data are :func:`builder_problem` (at config load); a value a
builder cannot place is an invalid value (:func:`invalid_values`, at profile).
"""

from __future__ import annotations

import csv
import datetime
import io
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.attributes.dates import TemporalFormat
from sparkanon.attributes.dates import date_label as iso_dates
from sparkanon.attributes.hierarchy import Taxonomy, taxonomy_from_rows
from sparkanon.attributes.intervals import (
    Coding,
    bound_labels,
    interval_label,
    published_number,
    published_range,
    quantile_labels,
    width_labels,
)
from sparkanon.attributes.kinds import SUPPRESSED
from sparkanon.attributes.levels import nesting_problem
from sparkanon.errors import ConfigError, InputError

MAX_BUILT_VALUES = 10_000
"""The most distinct values a builder takes: a categorical kind keeps a ``V x V`` distance
matrix of its leaves (800 MB at 10,000)."""

EPOCH = datetime.date(1970, 1, 1)
"""Day 0 of date values."""

HIERARCHIES = "hierarchies"
"""Folder of the generated hierarchies, beside ``metrics.json``."""


@dataclass(frozen=True)
class BuiltHierarchy:
    """A generated taxonomy and where each value of the column goes in it.

    Attributes:
        taxonomy: the tree; its leaves are the values (or, with ``from_level`` and top or
            bottom coding, the nodes they are recoded to).
        lookup: value (trimmed text, as the encoder sees it) -> leaf code.
    """

    taxonomy: Taxonomy
    lookup: Mapping[str, int]


# ---------------------------------------------------------------- points and values


def _days_of_date(value: datetime.date) -> int:
    """Days since 1970-01-01 of a date (or the date of a datetime)."""
    if isinstance(value, datetime.datetime):
        value = value.date()
    return (value - EPOCH).days


def point_value(cfg: Any, value: Any, key: str) -> float:
    """A builder's number or date (``origin``, ``top``, ``bottom``, a bound) as a number.

    Args:
        cfg: the builder.
        value: the config's value.
        key: its key, for the message.

    Returns:
        The number, or for ``values: date`` the days since 1970-01-01.

    Raises:
        ValueError: a number where a date is expected or the reverse, or a date that is
            not ISO (``2020-01-31``).
    """
    if cfg.values == "number":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if math.isfinite(value):
                return float(value)
        raise ValueError(f"{key}: {value!r} is not a number (the builder's values are numbers)")
    if isinstance(value, datetime.date):
        return float(_days_of_date(value))
    if isinstance(value, str):
        try:
            return float(_days_of_date(datetime.date.fromisoformat(value.strip())))
        except ValueError:
            pass
    elif key.endswith("origin") and isinstance(value, (int, float)):
        return float(value)  # days since 1970-01-01
    raise ValueError(
        f"{key}: {value!r} is not a date; give an ISO date such as 2020-01-31 (values: date)"
    )


def date_label(days: float) -> str:
    """ISO text of a day number (days since 1970-01-01)."""
    return str(iso_dates(np.array([int(round(days))]))[0])


def _label_of(cfg: Any) -> Callable[[float], str]:
    """How a builder's interval edges are written: numbers, or ISO dates."""
    return date_label if getattr(cfg, "values", "number") == "date" else published_number


def value_numbers(cfg: Any, raw: pd.Series, text: pd.Series) -> np.ndarray:
    """An intervals builder's values as numbers (days for dates), NaN where invalid.

    Text is parsed as a number, or (``values: date``) with ``format``; a date-typed
    column's values are dates already.

    Args:
        cfg: the intervals builder.
        raw: the column as read.
        text: the same values as trimmed text.

    Returns:
        One float per row.
    """
    if cfg.values == "date":
        days, invalid = TemporalFormat(True, cfg.format).parse(raw)
        return np.where(invalid, np.nan, days)
    numbers = pd.to_numeric(text, errors="coerce").astype("Float64")
    out = numbers.to_numpy(dtype=float, na_value=np.nan)
    return np.where(np.isfinite(out), out, np.nan)


def _text_numbers(cfg: Any, values: Sequence[str]) -> np.ndarray:
    """Numbers of value texts the profile accepted (dates: ``format``, else ISO text).

    A date-typed column reaches the profile as ISO text, which need not match ``format``.
    """
    text = pd.Series(list(values), dtype="string")
    numbers = value_numbers(cfg, text, text)
    if cfg.values == "date" and np.isnan(numbers).any():
        days, invalid = TemporalFormat(True, "%Y-%m-%d").parse(text)
        numbers = np.where(np.isnan(numbers), np.where(invalid, np.nan, days), numbers)
    return numbers


def coding_of(cfg: Any, key: str) -> Coding:
    """An intervals builder's ``top``, ``bottom`` and ``bounds`` as numbers (dates as days).

    Raises:
        ValueError: a number or date that does not read, naming its key.
    """
    top = None if cfg.top is None else point_value(cfg, cfg.top, f"{key}.top")
    bottom = None if cfg.bottom is None else point_value(cfg, cfg.bottom, f"{key}.bottom")
    bounds = None
    if cfg.bounds is not None:
        bounds = np.array(
            [
                [point_value(cfg, v, f"{key}.bounds.{i}") for v in pair]
                for i, pair in enumerate(cfg.bounds)
            ],
            dtype=float,
        )
    return Coding(top, bottom, bounds)


# ---------------------------------------------------------------- config checks


def builder_problem(cfg: Any) -> str | None:
    """The first problem of a builder that needs no data, or ``None``.

    Returns:
        A message ``builder.<key>: what is wrong`` (the config's messages prefix the
        attribute's key and add the column).
    """
    if cfg.type == "intervals":
        problem = _intervals_problem(cfg)
    elif cfg.type == "groups":
        problem = _groups_problem(cfg)
    else:
        problem = _mask_problem(cfg)
    if problem is None and cfg.from_level > max_from_level(cfg):
        problem = (
            f"builder.from_level: {cfg.from_level} is beyond the builder's levels; the "
            f"highest level values can be recoded to is {max_from_level(cfg)} (the root "
            "would publish nothing)"
        )
    return problem


def _intervals_problem(cfg: Any) -> str | None:
    """Problems of an intervals builder: one rule, nesting levels, ordered bounds, codes."""
    given = [k for k in ("widths", "quantiles", "bounds") if getattr(cfg, k) is not None]
    if len(given) != 1:
        return (
            "builder: an intervals builder takes exactly one of widths, quantiles and bounds "
            f"(got {', '.join(given) or 'none'})"
        )
    if cfg.merge and cfg.bounds is None:
        return "builder.merge: merge goes with bounds (widths and quantiles give every level)"
    try:
        coding = coding_of(cfg, "builder")
        if cfg.widths is not None:
            point_value(cfg, cfg.origin, "builder.origin")
    except ValueError as exc:
        return str(exc)
    if cfg.widths is not None:
        return nesting_problem("builder.widths", cfg.widths, "width")
    if cfg.quantiles is not None:
        for a, b in zip(cfg.quantiles, cfg.quantiles[1:], strict=False):
            if b >= a or a % b:
                return (
                    f"builder.quantiles: {b} after {a}: each count of intervals must divide "
                    "the one before (and be smaller), so that every interval nests in the "
                    "next level's"
                )
    if coding.top is not None and coding.bottom is not None and coding.bottom >= coding.top:
        label = _label_of(cfg)
        return (
            f"builder.bottom: {label(coding.bottom)} is not below builder.top {label(coding.top)}"
        )
    if coding.bounds is not None:
        return _bounds_problem(cfg, coding)
    return None


def _bounds_problem(cfg: Any, coding: Coding) -> str | None:
    """Bounds that are empty, unordered or overlapping, or outside top and bottom."""
    assert coding.bounds is not None
    label = _label_of(cfg)

    def show(i: int) -> str:
        lo, hi = coding.bounds[i]
        return interval_label(label(lo), label(hi))

    for i, (lo, hi) in enumerate(coding.bounds):
        if hi <= lo:
            return f"builder.bounds: interval {i} {show(i)} is empty; give [lo, hi] with lo < hi"
    for i in range(1, len(coding.bounds)):
        lo, prev_lo, prev_hi = coding.bounds[i][0], coding.bounds[i - 1][0], coding.bounds[i - 1][1]
        if lo < prev_lo:
            return (
                f"builder.bounds: intervals {show(i - 1)} and {show(i)} are not in increasing "
                "order; list the intervals from lowest to highest"
            )
        if lo < prev_hi:
            return (
                f"builder.bounds: intervals {show(i - 1)} and {show(i)} overlap; intervals "
                "are half-open [lo, hi), so one may start where the one before ends"
            )
    if coding.top is not None and coding.bounds[-1][1] > coding.top:
        return (
            f"builder.top: {label(coding.top)} is below the end of the last interval "
            f"{show(len(coding.bounds) - 1)}; values from top up are top-coded"
        )
    if coding.bottom is not None and coding.bounds[0][0] < coding.bottom:
        return (
            f"builder.bottom: {label(coding.bottom)} is above the start of the first "
            f"interval {show(0)}; values below bottom are bottom-coded"
        )
    return None


def _groups_problem(cfg: Any) -> str | None:
    """An empty or repeating order; sizes that do not nest."""
    if not cfg.order:
        return "builder.order: empty; list the column's values in order"
    seen: set[str] = set()
    for value in cfg.order:
        if value in seen:
            return f"builder.order: {value!r} is listed twice"
        seen.add(value)
    return nesting_problem("builder.sizes", cfg.sizes, "size")


def _mask_problem(cfg: Any) -> str | None:
    """Masked counts not increasing or beyond the code's length."""
    previous = 0
    for m in cfg.masked:
        if m <= previous:
            return (
                f"builder.masked: {list(cfg.masked)}: the characters masked per level must increase"
            )
        if m > cfg.length:
            return (
                f"builder.masked: {m} characters masked in a code of builder.length "
                f"{cfg.length}; mask at most {cfg.length}"
            )
        previous = m
    return None


def _levels_count(cfg: Any) -> int:
    """Levels between the values and the root (the root not counted when added)."""
    if cfg.type == "intervals":
        if cfg.bounds is not None:
            return 1 + len(cfg.merge)
        return len(cfg.widths if cfg.widths is not None else cfg.quantiles)
    if cfg.type == "groups":
        return len(cfg.sizes)
    return len(cfg.masked)


def _adds_root(cfg: Any) -> bool:
    """Whether the root ``*`` is added above the last level (not one node already)."""
    if cfg.type == "groups":
        return math.ceil(len(cfg.order) / cfg.sizes[-1]) > 1
    if cfg.type == "mask":
        return cfg.masked[-1] < cfg.length
    return True


def max_from_level(cfg: Any) -> int:
    """The highest ``from_level`` of a builder: its last level below the root."""
    return _levels_count(cfg) if _adds_root(cfg) else _levels_count(cfg) - 1


# ---------------------------------------------------------------- invalid values


def invalid_values(cfg: Any, raw: pd.Series, text: pd.Series) -> np.ndarray:
    """Whether each (non-missing) value is one the builder cannot place.

    An intervals builder: not a number (or a date in ``format``), or, with ``bounds``,
    outside every interval and not top- or bottom-coded. A groups builder: a value absent
    from ``order``. A mask builder: a code of another length.

    Args:
        cfg: the builder.
        raw: the column as read.
        text: the same values as trimmed text.

    Returns:
        A boolean mask, one per row.
    """
    if cfg.type == "groups":
        return ~text.isin(list(cfg.order)).to_numpy(dtype=bool)
    if cfg.type == "mask":
        return (text.str.len() != cfg.length).fillna(True).to_numpy(dtype=bool)
    x = value_numbers(cfg, raw, text)
    bad = np.isnan(x)
    if cfg.bounds is not None:
        coding = coding_of(cfg, "builder")
        over, under = coding.coded(x)
        bad |= ~(over | under) & (coding.bound_index(np.nan_to_num(x)) < 0)
    return bad


def invalid_message(cfg: Any, key: str) -> str:
    """What an invalid value of a builder's column is, naming the builder's key.

    Args:
        cfg: the builder.
        key: the builder's key, ``attributes.<i>.builder``.
    """
    if cfg.type == "groups":
        return f"is absent from {key}.order"
    if cfg.type == "mask":
        return f"is not a code of exactly {cfg.length} characters ({key}.length)"
    what = (
        f"is not a date in the format {cfg.format!r} ({key}.format)"
        if cfg.values == "date"
        else f"is not a number ({key} is an intervals builder over numbers)"
    )
    if cfg.bounds is not None:
        what += f", or lies outside every interval of {key}.bounds and is not top- or bottom-coded"
    return what


# ---------------------------------------------------------------- building


def build_hierarchy(
    column: str, key: str, cfg: Any, values: Sequence[str], counts: Sequence[int]
) -> BuiltHierarchy:
    """The hierarchy a builder generates over a column's distinct values.

    Args:
        column: the column, for messages.
        key: the builder's key (``attributes.<i>.builder``), for messages.
        cfg: the builder.
        values: the distinct values as trimmed text (those the profile accepted).
        counts: rows of each value (quantiles weigh the values by them).

    Returns:
        The taxonomy and each value's leaf.

    Raises:
        ConfigError: more than :data:`MAX_BUILT_VALUES` values, or a generated hierarchy
            that is not a tree (labels clash).
        InputError: a value the builder cannot place.
    """
    if len(values) > MAX_BUILT_VALUES:
        raise ConfigError(
            f"{key}: column {column!r} holds {len(values)} distinct values, more than a "
            f"builder takes ({MAX_BUILT_VALUES}: a categorical kind keeps a distance matrix "
            "of all pairs of its values); declare it continuous (with levels) or semantic"
        )
    values = [str(v) for v in values]
    if cfg.type == "intervals":
        chains = _interval_chains(column, key, cfg, values, np.asarray(counts, dtype=float))
    elif cfg.type == "groups":
        chains = _group_chains(column, key, cfg, values)
    else:
        chains = _mask_chains(column, key, cfg, values)
    chains = [(v, tuple(c[cfg.from_level :])) for v, c in chains]
    rows: dict[tuple[str, ...], None] = {}
    for _, chain in chains:
        rows.setdefault(chain, None)
    where = f"the hierarchy {key} generates for attribute {column!r}"
    taxonomy = taxonomy_from_rows([(i + 1, list(r)) for i, r in enumerate(rows)], where)
    leaf = {label: i for i, label in enumerate(taxonomy.leaves)}
    return BuiltHierarchy(taxonomy, {v: leaf[chain[0]] for v, chain in chains})


def _root(cfg: Any) -> list[str]:
    return [SUPPRESSED] if _adds_root(cfg) else []


def _interval_chains(
    column: str, key: str, cfg: Any, values: list[str], counts: np.ndarray
) -> list[tuple[str, list[str]]]:
    """Each value with its labels from itself to the root (an intervals builder)."""
    x = _text_numbers(cfg, values)
    coding = coding_of(cfg, key)
    label = _label_of(cfg)
    origin = None if cfg.widths is None else point_value(cfg, cfg.origin, f"{key}.origin")
    over, under = coding.coded(x)
    inner = ~(over | under)
    bad = np.isnan(x)
    if coding.bounds is not None:
        bad |= inner & (coding.bound_index(np.nan_to_num(x)) < 0)
    if bad.any():
        value = values[int(np.flatnonzero(bad)[0])]
        raise InputError(
            f"value {value!r} of column {column!r} {invalid_message(cfg, key)}; fix the data, "
            "or set input.on_invalid: drop to suppress such rows"
        )
    if cfg.widths is not None:
        assert origin is not None
        levels = width_labels(cfg.widths, origin, coding, x[inner], label)
    elif cfg.quantiles is not None:
        levels = quantile_labels(cfg.quantiles, coding, x[inner], counts[inner], label)
    else:
        levels = bound_labels(cfg.merge, coding, x[inner], label)
    height = _levels_count(cfg)
    inner_at = np.cumsum(inner) - 1
    out = []
    for i, v in enumerate(values):
        if over[i]:
            chain = [f">={label(coding.top)}"] * (height + 1)
        elif under[i]:
            chain = [f"<{label(coding.bottom)}"] * (height + 1)
        else:
            chain = [v] + [lv[inner_at[i]] for lv in levels]
        out.append((float(x[i]), v, chain + [SUPPRESSED]))
    out.sort(key=lambda t: (t[0], t[1]))
    return [(v, chain) for _, v, chain in out]


def _group_chains(
    column: str, key: str, cfg: Any, values: list[str]
) -> list[tuple[str, list[str]]]:
    """Each value with its groups of the declared order, in that order."""
    rank = {v: r for r, v in enumerate(cfg.order)}
    unknown = [v for v in values if v not in rank]
    if unknown:
        raise InputError(
            f"value {unknown[0]!r} of column {column!r} {invalid_message(cfg, key)}; add it "
            "there, or set input.on_invalid: drop to suppress such rows"
        )
    n = len(cfg.order)
    out = []
    for v in sorted(values, key=rank.__getitem__):
        chain = [v]
        for size in cfg.sizes:
            start = rank[v] // size * size
            chain.append(published_range(cfg.order[start], cfg.order[min(start + size, n) - 1]))
        out.append((v, chain + _root(cfg)))
    return out


def _mask_chains(column: str, key: str, cfg: Any, values: list[str]) -> list[tuple[str, list[str]]]:
    """Each code with its masked forms, codes in text order."""
    bad = [v for v in values if len(v) != cfg.length]
    if bad:
        raise InputError(
            f"value {bad[0]!r} of column {column!r} {invalid_message(cfg, key)}; fix the "
            "data, or set input.on_invalid: drop to suppress such rows"
        )
    out = []
    for v in sorted(values):
        chain = [v] + [v[: cfg.length - m] + cfg.char * m for m in cfg.masked]
        out.append((v, chain + _root(cfg)))
    return out


# ---------------------------------------------------------------- ARX files


def arx_text(taxonomy: Taxonomy) -> str:
    """The taxonomy as an ARX hierarchy file: one ``;``-separated row per leaf, leaf first."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=";", lineterminator="\n")
    for path in taxonomy.paths:
        writer.writerow(path)
    return buffer.getvalue()


def published_paths(taxonomy: Taxonomy, published: Collection[str]) -> list[tuple[str, ...]]:
    """The part of a generated hierarchy a release may publish: its published nodes and above.

    For each root-to-leaf path of the taxonomy, the path from its lowest node the release
    publishes (``published``: the column's distinct published values) up to the root;
    paths holding no published node are left out, and equal rows are written once. So no
    leaf (an exact input value) and no node the release does not show (the prefix of a
    suppressed row's code, a value range no published row falls in) is written: the file
    describes the published labels and how they generalize, not the input's domain.
    When every published node is on one level (full-domain generalization) the rows are
    of equal length and form an ARX hierarchy whose leaves are the published labels.
    """
    rows: dict[tuple[str, ...], None] = {}
    for path in taxonomy.paths:
        low = next((j for j, node in enumerate(path) if node in published), None)
        if low is not None:
            rows.setdefault(tuple(path[low:]), None)
    return list(rows)


def rows_text(rows: Sequence[Sequence[str]]) -> str:
    """Hierarchy rows (most specific first, root last) as ``;``-separated CSV text."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=";", lineterminator="\n")
    writer.writerows(rows)
    return buffer.getvalue()


def write_arx(taxonomy: Taxonomy, path: str | Path) -> None:
    """Write the taxonomy as an ARX hierarchy file (:func:`arx_text`)."""
    Path(path).write_text(arx_text(taxonomy), encoding="utf-8")


def hierarchy_file(directory: str, column: str) -> str:
    """Where a column's generated hierarchy goes: ``<directory>/hierarchies/<name>.csv``.

    ``<name>`` is the column's name made safe (:func:`sparkanon.io.safe_file_name`: a
    name such as ``../../t`` cannot leave the folder, and a changed name carries a hash
    of the original so two columns never share a file); whatever reads the hierarchies
    back calls this too. A release writes there only the published part of the
    hierarchy (:func:`published_paths`).
    """
    from sparkanon.io import file_in

    return file_in(f"{directory}/{HIERARCHIES}", column, ".csv")
