"""Date and timestamp quasi-identifiers: parsing, encoding, calendar levels.

A date is encoded as the days since 1970-01-01, a timestamp as the seconds since the
epoch in UTC; both are then a continuous kind (:class:`DateKind`, :class:`TimestampKind`,
subclasses of :class:`~sparkanon.attributes.kinds.ContinuousKind`): normalised by the
input's range, distance ``|a - b|``, centroid the mean, NCP the normalised span. Only
encoding, decoding (a centroid is published as a date, rounded to the nearest day, or as
a UTC timestamp, rounded to the microsecond) and the generalized value (an ISO 8601
range) differ.

Time-zone rule: all arithmetic is in UTC. Values that carry an offset (tz-aware
datetimes, text with ``Z`` or ``+01:00``, Spark ``TimestampType`` instants) are
converted to UTC; naive values (text without offset, ``TimestampNTZ``, Parquet timestamps
not adjusted to UTC) are wall-clock times in the attribute's ``timezone``. A wall-clock
time that a daylight-saving change repeats is read as standard time; one it skips is
moved forward by the gap.

Calendar levels (full-domain generalization, :func:`calendar_levels`): the finest
configured unit's intervals over the data's range are the base, each coarser unit groups
the nodes of the one before by the unit holding the node's start (an ISO week by its
Thursday, so weeks nest in ISO years and quarters).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from sparkanon.attributes.intervals import published_range
from sparkanon.attributes.kinds import SUPPRESSED, ContinuousKind, Kind

DATE_UNITS = ("day", "week", "month", "quarter", "year", "decade")
"""Calendar units of a date's levels, finest first."""
TIMESTAMP_UNITS = ("hour", *DATE_UNITS)
"""Calendar units of a timestamp's levels, finest first."""
DEFAULT_LEVELS = ("day", "month", "quarter", "year", "decade")
"""The levels of a date or timestamp when ``attributes[].levels`` is not given."""
DEFAULT_DATE_FORMAT = "%Y-%m-%d"
"""The ``format`` of a date's text values when none is given (ISO 8601)."""
SECONDS_PER_DAY = 86_400
_US = 1_000_000
_OFFSET = re.compile(r"[T ]\d{1,2}(?::?\d{2}){0,2}(?:[.,]\d+)?\s*(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$")
"""A text timestamp ending in a UTC offset (``...T10:00Z``, ``... 10:00:00+01:00``)."""
_STRPTIME_CODES = set("aAwdbBmyYHIpMSfzZjUWcxXGuV%")
"""The strptime directives pandas and Python both read."""


# ------------------------------------------------------------------ config checks


def format_problem(fmt: str) -> str | None:
    """Why a strptime ``format`` is unusable, or ``None``.

    A format needs at least one directive, and every ``%`` must start a known one.
    """
    directives = re.findall(r"%(.)", fmt.replace("%%", ""))
    if not directives:
        return f"{fmt!r} holds no strptime directive (e.g. %Y-%m-%d)"
    unknown = sorted({d for d in directives if d not in _STRPTIME_CODES})
    if unknown or fmt.replace("%%", "").endswith("%"):
        bad = ", ".join(f"%{d}" for d in unknown) or "a trailing %"
        return f"{fmt!r}: unknown strptime directive {bad}"
    return None


def zone_problem(zone: str) -> str | None:
    """Why ``zone`` is not an IANA time zone name, or ``None``."""
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return f"{zone!r} is not an IANA time zone name (e.g. UTC, Europe/Paris)"
    return None


def levels_problem(units: Sequence[str], allowed: Sequence[str]) -> str | None:
    """Why a list of calendar units is not usable levels, or ``None``.

    The units must be known, distinct, finest first, and hold at most one of ``week``
    and ``month`` (weeks do not nest in months).
    """
    unknown = [u for u in units if u not in allowed]
    if unknown:
        return f"unknown unit {unknown[0]!r}; choose from {', '.join(allowed)}"
    rank = [allowed.index(u) for u in units]
    if len(set(units)) != len(units) or rank != sorted(rank):
        return f"{list(units)}: give each unit once, finest first ({', '.join(allowed)})"
    if "week" in units and "month" in units:
        return "week and month do not nest (a week may span two months); keep one of them"
    return None


# ------------------------------------------------------------------ parsing


def _localize(naive: pd.DatetimeIndex, zone: str) -> pd.DatetimeIndex:
    """Naive wall-clock times in ``zone`` as UTC instants (DST: standard time, skip forward)."""
    if zone == "UTC":
        return naive.tz_localize("UTC")
    local = naive.tz_localize(
        zone, ambiguous=np.zeros(len(naive), dtype=bool), nonexistent="shift_forward"
    )
    return local.tz_convert("UTC")


def _to_utc(index: pd.DatetimeIndex, zone: str) -> pd.DatetimeIndex:
    """Instants in UTC: aware values converted, naive ones read in ``zone``."""
    if index.tz is not None:
        return index.tz_convert("UTC")
    return _localize(index, zone)


def _parse_text(text: pd.Series, fmt: str | None, zone: str, date: bool) -> pd.DatetimeIndex:
    """Distinct text values as UTC instants (NaT where a value does not parse).

    A date's text is read with ``fmt`` (default ISO ``%Y-%m-%d``) as a wall-clock day;
    a timestamp's with ``fmt`` (default ISO 8601), offsets honoured, naive values read in
    ``zone``.
    """
    if date:
        fmt = fmt or DEFAULT_DATE_FORMAT
        parsed = pd.DatetimeIndex(pd.to_datetime(text, format=fmt, errors="coerce"))
        if parsed.tz is not None:  # a date format with %z: the day as written
            parsed = parsed.tz_localize(None)
        return parsed.tz_localize("UTC")
    if fmt is not None:
        aware = "%z" in fmt or "%Z" in fmt
        parsed = pd.DatetimeIndex(pd.to_datetime(text, format=fmt, errors="coerce", utc=aware))
        return parsed if aware else _localize(parsed, zone)
    offset = text.str.contains(_OFFSET, regex=True).fillna(False).to_numpy(dtype=bool)
    out = pd.Series(pd.NaT, index=text.index, dtype="datetime64[ns, UTC]")
    if offset.any():
        out[offset] = pd.to_datetime(text[offset], format="ISO8601", errors="coerce", utc=True)
    if (~offset).any():
        naive = pd.DatetimeIndex(pd.to_datetime(text[~offset], format="ISO8601", errors="coerce"))
        out[~offset] = _localize(naive, zone)
    return pd.DatetimeIndex(out)


def _is_text(values: pd.Series) -> bool:
    """Whether a column holds text (or numbers read as text), not date or time objects."""
    if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:
        return True
    if values.dtype != object:
        return not pd.api.types.is_datetime64_any_dtype(values.dtype)
    present = values.dropna()
    return len(present) == 0 or not isinstance(present.iloc[0], (_dt.date, pd.Timestamp))


def utc_instants(values: pd.Series, fmt: str | None, zone: str, date: bool) -> pd.DatetimeIndex:
    """A column's values as UTC instants, NaT where a value is null or does not parse.

    Args:
        values: text (trimmed here), Python or pandas dates and datetimes, or datetime64
            (naive or tz-aware), as pandas, pyarrow or Spark's Arrow transfer deliver them.
        fmt: the strptime format of text values (``None``: ISO).
        zone: the zone of naive values.
        date: the values are dates (text read as a day; naive datetimes as their day).

    Returns:
        One instant per value, aligned with ``values``.
    """
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        index = pd.DatetimeIndex(values)
        return index.tz_localize("UTC") if date and index.tz is None else _to_utc(index, zone)
    if _is_text(values):
        text = values.astype("string").str.strip()
        codes, uniques = pd.factorize(text, use_na_sentinel=True)
        parsed = _parse_text(pd.Series(uniques, dtype="string"), fmt, zone, date)
    else:
        codes, uniques = pd.factorize(values.astype(object), use_na_sentinel=True)
        objects = pd.Series(uniques, dtype=object)
        aware = any(getattr(v, "tzinfo", None) is not None for v in objects)
        index = pd.DatetimeIndex(pd.to_datetime(objects, errors="coerce", utc=aware))
        parsed = index.tz_localize("UTC") if date and index.tz is None else _to_utc(index, zone)
    taken = parsed.take(np.where(codes < 0, 0, codes)) if len(parsed) else parsed
    if len(parsed) == 0:
        return pd.DatetimeIndex([pd.NaT] * len(values), dtype="datetime64[ns, UTC]")
    return taken.where(codes >= 0, pd.NaT)


def _epoch_us(instants: pd.DatetimeIndex) -> tuple[np.ndarray, np.ndarray]:
    """Microseconds since the epoch (0 where NaT) and the NaT mask."""
    invalid = np.asarray(instants.isna(), dtype=bool)
    us = instants.as_unit("us").asi8.copy()
    us[invalid] = 0
    return us, invalid


@dataclass(frozen=True)
class TemporalFormat:
    """How one date or timestamp column's values are read.

    Attributes:
        date: a date (epoch days) rather than a timestamp (epoch seconds).
        format: the strptime format of text values (``None``: ISO).
        zone: the zone of naive values (a date has none: ``UTC``).
    """

    date: bool
    format: str | None = None
    zone: str = "UTC"

    def parse(self, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Epoch days (dates) or seconds (timestamps) as floats, and the invalid mask.

        Nulls and values that do not parse (or do not match ``format``) are invalid
        (their epoch value is 0).
        """
        us, invalid = _epoch_us(utc_instants(values, self.format, self.zone, self.date))
        if self.date:
            epoch = np.floor_divide(us, SECONDS_PER_DAY * _US).astype(float)
        else:
            epoch = us / _US
        return np.where(invalid, 0.0, epoch), invalid


# ------------------------------------------------------------------ published values


def date_values(days: np.ndarray) -> np.ndarray:
    """Epoch days, rounded to the nearest day, as ``datetime.date`` objects."""
    whole = np.round(np.asarray(days, dtype=float)).astype(np.int64)
    return whole.astype("datetime64[D]").astype(object)


def timestamp_values(seconds: np.ndarray) -> pd.DatetimeIndex:
    """Epoch seconds, rounded to the microsecond, as UTC instants."""
    us = np.round(np.asarray(seconds, dtype=float) * _US).astype(np.int64)
    return pd.DatetimeIndex(us.astype("datetime64[us]")).tz_localize("UTC")


def date_label(days: np.ndarray) -> np.ndarray:
    """ISO dates (``2020-03-05``) of whole epoch days."""
    return np.datetime_as_string(np.asarray(days, dtype=np.int64).astype("datetime64[D]"))


def timestamp_label(seconds: np.ndarray) -> np.ndarray:
    """ISO 8601 UTC timestamps (``2020-03-05T14:30:00Z``) of epoch seconds (whole seconds)."""
    whole = np.asarray(seconds, dtype=np.int64).astype("datetime64[s]")
    return np.char.add(np.datetime_as_string(whole, unit="s").astype(str), "Z")


@dataclass(frozen=True)
class TemporalKind(ContinuousKind):
    """A date or timestamp quasi-identifier: a continuous kind over epoch units.

    ``low`` and ``high`` are the input's range in epoch units; ``decimals`` is unused.

    Attributes:
        format: the strptime format of text values (``None``: ISO).
        zone: the zone of naive values.
    """

    format: str | None = None
    zone: str = "UTC"

    is_date: ClassVar[bool] = False
    published_type: ClassVar[str] = "double"
    step: ClassVar[float] = 0.0
    """The published values' resolution in epoch units (a day; a microsecond)."""

    @property
    def reader(self) -> TemporalFormat:
        """How this column's values are parsed."""
        return TemporalFormat(self.is_date, self.format, self.zone)

    def encode(self, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:  # noqa: D102
        epoch, invalid = self.reader.parse(values)
        codes = (epoch - self.low) / self._width
        return np.where(invalid, 0.0, codes), invalid

    def values(self, epoch: np.ndarray) -> Any:
        """Published values (dates or UTC timestamps) of epoch units."""
        raise NotImplementedError

    def decode(self, codes: np.ndarray) -> Any:
        """Published values of centroid codes (see :meth:`values`)."""
        return self.values(self.raw(codes))

    def epoch_of(self, published: pd.Series) -> np.ndarray:
        """Epoch units of published values (NaN where a value is missing)."""
        epoch, invalid = self.reader.parse(published)
        return np.where(invalid, np.nan, epoch)

    def bound_labels(self, lo: float, hi: float) -> tuple[str, str]:
        """ISO labels of a class's lowest and highest value."""
        raise NotImplementedError

    def generalized(self, codes: np.ndarray) -> str:
        """``[first, last]`` as ISO dates or timestamps, or the single value."""
        c = np.asarray(codes, dtype=float)
        if c.size == 0:
            raise ValueError(f"attribute {self.name!r}: an empty class has no generalized value")
        lo, hi = (float(v) for v in self.raw(np.array([c.min(), c.max()])))
        return published_range(*self.bound_labels(lo, hi))


@dataclass(frozen=True)
class DateKind(TemporalKind):
    """A date: days since 1970-01-01; published as a date (DateType)."""

    is_date: ClassVar[bool] = True
    published_type: ClassVar[str] = "date"
    step: ClassVar[float] = 1.0

    def values(self, epoch: np.ndarray) -> np.ndarray:  # noqa: D102
        return date_values(epoch)

    def bound_labels(self, lo: float, hi: float) -> tuple[str, str]:  # noqa: D102
        days = np.round(np.array([lo, hi]))
        a, b = date_label(days)
        return str(a), str(b)


@dataclass(frozen=True)
class TimestampKind(TemporalKind):
    """A timestamp: seconds since the epoch, UTC; published as an instant (TimestampType)."""

    published_type: ClassVar[str] = "timestamp"
    step: ClassVar[float] = 1e-6

    def values(self, epoch: np.ndarray) -> pd.DatetimeIndex:  # noqa: D102
        return timestamp_values(epoch)

    def bound_labels(self, lo: float, hi: float) -> tuple[str, str]:
        """Whole seconds, the low bound rounded down and the high one up (the range holds all)."""
        snapped = np.round(np.array([lo, hi]) * _US) / _US
        a, b = timestamp_label(np.array([np.floor(snapped[0]), np.ceil(snapped[1])]))
        return str(a), str(b)


def continuous_arithmetic(kind: Kind) -> bool:
    """Whether ``kind`` computes as :class:`ContinuousKind` does (mean centroid, ``|a - b|``).

    The fast paths (the metrics registry's class batches, the compiled kernels) know kinds
    by exact type, so that a subclass with a rule of its own falls back to the kind's
    methods; dates and timestamps only change how values are read and published.
    """
    return type(kind) in (ContinuousKind, DateKind, TimestampKind)


def published_type(kind: Kind) -> str:
    """The published column type of a centroid or synthetic value of ``kind``.

    ``double`` for a continuous kind, ``date`` / ``timestamp`` for a date / timestamp,
    ``string`` for every other kind.
    """
    if isinstance(kind, TemporalKind):
        return kind.published_type
    return "double" if isinstance(kind, ContinuousKind) else "string"


def numeric_values(kind: ContinuousKind, raw: np.ndarray) -> Any:
    """Published values of raw numbers (epoch units for a date or timestamp)."""
    if isinstance(kind, TemporalKind):
        return kind.values(raw)
    return np.asarray(raw, dtype=np.float64)


def epoch_of_typed(values: pd.Series) -> np.ndarray | None:
    """Epoch days of a column of dates, epoch seconds of one of instants; ``None`` otherwise.

    For readers of a published table that know no kind (the reconstruction of a perturbed
    release): a date column (Python dates) gives days, a timestamp column (datetime64, or
    Python datetimes) seconds, the units the date and timestamp kinds encode in; naive
    timestamps are read as UTC. NaN where a value is null.
    """
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        date = False
    elif values.dtype == object:
        present = values.dropna()
        if len(present) == 0 or not isinstance(present.iloc[0], (_dt.date, pd.Timestamp)):
            return None
        date = not isinstance(present.iloc[0], (_dt.datetime, pd.Timestamp))
    else:
        return None
    epoch, invalid = TemporalFormat(date).parse(values)
    return np.where(invalid, np.nan, epoch)


def raw_of_published(kind: ContinuousKind, published: pd.Series) -> np.ndarray:
    """Raw numbers (epoch units for a date or timestamp) of published values; NaN if unreadable."""
    if isinstance(kind, TemporalKind):
        return kind.epoch_of(published)
    return pd.to_numeric(published, errors="coerce").to_numpy(dtype=float)


# ------------------------------------------------------------------ calendar levels


def _months(days: np.ndarray) -> np.ndarray:
    """Months since 1970-01 of epoch days."""
    return days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)


def _days_of_months(months: np.ndarray) -> np.ndarray:
    return np.asarray(months, dtype=np.int64).astype("datetime64[M]").astype("datetime64[D]")


def unit_start(unit: str, days: np.ndarray) -> np.ndarray:
    """Epoch day on which the calendar ``unit`` holding each epoch day begins (not ``hour``)."""
    d = np.asarray(days, dtype=np.int64)
    if unit == "day":
        return d
    if unit == "week":  # ISO weeks begin on Monday; 1970-01-01 was a Thursday
        return d - np.mod(d + 3, 7)
    months = _months(d)
    if unit == "month":
        start = months
    elif unit == "quarter":
        start = months - np.mod(months, 3)
    else:
        years = np.floor_divide(months, 12)
        if unit == "decade":
            years = np.floor_divide(years + 1970, 10) * 10 - 1970
        start = years * 12
    return _days_of_months(start).astype(np.int64)


def unit_end(unit: str, start: np.ndarray) -> np.ndarray:
    """Epoch day after the last day of the unit beginning on ``start`` (an exclusive end)."""
    s = np.asarray(start, dtype=np.int64)
    if unit == "day":
        return s + 1
    if unit == "week":
        return s + 7
    step = {"month": 1, "quarter": 3, "year": 12, "decade": 120}[unit]
    return _days_of_months(_months(s) + step).astype(np.int64)


def unit_label(unit: str, start: np.ndarray, seconds: bool = False) -> list[str]:
    """Labels of units beginning at ``start`` (epoch days; epoch seconds for ``hour``).

    ``2020-03-05T14:00Z`` (hour), ``2020-03-05``, ``2020-W10`` (ISO week), ``2020-03``,
    ``2020-Q1``, ``2020``, ``2020s``.
    """
    s = np.asarray(start, dtype=np.int64)
    if unit == "hour":
        text = np.datetime_as_string(s.astype("datetime64[s]"), unit="m")
        return [f"{t}Z" for t in text]
    if unit == "day":
        return [str(t) for t in date_label(s)]
    if unit == "week":
        thursday = s + 3
        year = np.floor_divide(_months(thursday), 12)
        week = (thursday - _days_of_months(year * 12).astype(np.int64)) // 7 + 1
        return [f"{y + 1970}-W{w:02d}" for y, w in zip(year, week, strict=True)]
    months = _months(s)
    year = np.floor_divide(months, 12) + 1970
    if unit == "month":
        return [f"{y}-{m + 1:02d}" for y, m in zip(year, np.mod(months, 12), strict=True)]
    if unit == "quarter":
        return [f"{y}-Q{m // 3 + 1}" for y, m in zip(year, np.mod(months, 12), strict=True)]
    if unit == "year":
        return [str(y) for y in year]
    return [f"{y}s" for y in year]


def _representative(unit: str, start: np.ndarray) -> np.ndarray:
    """The day that places a unit in the next coarser one: its start, a week's Thursday."""
    return start + 3 if unit == "week" else start


def _in_days(epoch: np.ndarray, seconds: bool) -> np.ndarray:
    e = np.asarray(epoch, dtype=float)
    return np.floor(e / SECONDS_PER_DAY if seconds else e).astype(np.int64)


def finest_edges(unit: str, low: float, high: float, seconds: bool) -> np.ndarray:
    """Edges (in the kind's epoch unit) of the finest unit's intervals covering ``[low, high]``.

    Every value ``v`` of the range lies in ``[edges[i], edges[i + 1])`` for one ``i``; the
    last edge lies above ``high``.
    """
    if unit == "hour":
        first = np.floor(low / 3600) * 3600
        return np.arange(first, np.floor(high / 3600) * 3600 + 3601, 3600, dtype=float)
    lo_day, hi_day = _in_days(np.array([low, high]), seconds)
    starts = [int(unit_start(unit, np.array([lo_day]))[0])]
    last = int(unit_start(unit, np.array([hi_day]))[0])
    if unit in ("day", "week"):
        step = 1 if unit == "day" else 7
        starts = list(range(starts[0], last + step, step))
    else:
        while starts[-1] < last:
            starts.append(int(unit_end(unit, np.array([starts[-1]]))[0]))
    edges = np.array([*starts, int(unit_end(unit, np.array([last]))[0])], dtype=float)
    return edges * SECONDS_PER_DAY if seconds else edges


@dataclass(frozen=True)
class CalendarLevels:
    """The calendar levels of one date or timestamp column (full-domain generalization).

    Attributes:
        edges: the finest unit's interval edges in epoch units (the base codes are the
            intervals ``[edges[i], edges[i + 1])``).
        maps: per level, the node of each base interval (level 0: the identity).
        labels: per level, each node's label.
        ncp: per level, each node's span (clipped to the data's range) over the range.
    """

    edges: np.ndarray
    maps: tuple[np.ndarray, ...]
    labels: tuple[tuple[str, ...], ...]
    ncp: tuple[np.ndarray, ...]


def calendar_levels(
    units: Sequence[str], low: float, high: float, seconds: bool, max_base: int, key: str
) -> CalendarLevels:
    """Calendar levels over the data's range ``[low, high]`` (epoch units), the root ``*`` last.

    Level 0 is the finest unit's intervals over the range; level ``h`` groups the nodes of
    level ``h - 1`` by the unit ``units[h]`` holding each node's representative day (its
    first day; a week's Thursday, so weeks fall in their ISO year). A node's NCP is the
    span of its days (or seconds) that lie in the data's range over the range: a single
    day of a date column spans 0, a month of it 30 or so days.

    Args:
        units: the levels' units, finest first (checked at load).
        low: the data's minimum (epoch days, or seconds when ``seconds``).
        high: the data's maximum.
        seconds: a timestamp (epoch seconds) rather than a date (epoch days).
        max_base: the most intervals the finest level may have over the range.
        key: the config key named in errors (``attributes.<i>.levels``).

    Raises:
        ValueError: more than ``max_base`` intervals of the finest unit (the message
            names ``key``; the caller raises it as a ``ConfigError``).
    """
    width = high - low if high > low else 1.0
    edges = finest_edges(units[0], low, high, seconds)
    if len(edges) - 1 > max_base:
        raise ValueError(
            f"{key}: {len(edges) - 1} {units[0]}s over the data's range, above {max_base} "
            f"for the base of the lattice; start the levels at a coarser unit"
        )
    base_start, base_end = edges[:-1], edges[1:]
    inclusive = 0.0 if seconds else 1.0  # a date's last day is end - 1
    maps, labels, ncps = [], [], []
    rep_days = np.zeros(0, dtype=np.int64)
    for h, unit in enumerate(units):
        if h == 0:
            start = base_start.astype(np.int64)
        else:
            start_days = unit_start(unit, rep_days)
            start = start_days * SECONDS_PER_DAY if seconds else start_days
        present, node = np.unique(start, return_inverse=True)
        node = node.astype(np.int64).ravel()
        lo = np.full(len(present), np.inf)
        hi = np.full(len(present), -np.inf)
        np.minimum.at(lo, node, base_start)
        np.maximum.at(hi, node, base_end - inclusive)
        span = np.minimum(hi, high) - np.maximum(lo, low)
        ncps.append(np.clip(span / width, 0.0, 1.0) if high > low else np.zeros(len(present)))
        day_starts = np.floor_divide(present, SECONDS_PER_DAY) if seconds else present
        labels.append(tuple(unit_label(unit, present if unit == "hour" else day_starts)))
        maps.append(node)
        # each base interval's representative day, which places its node in the next unit
        own = np.floor_divide(start, SECONDS_PER_DAY) if seconds else start
        rep_days = _representative(unit, own)
    n = len(base_start)
    if len(labels[-1]) > 1 or len(maps) == 1:
        maps.append(np.zeros(n, dtype=np.int64))
        labels.append((SUPPRESSED,))
        ncps.append(np.array([1.0 if n > 1 else 0.0]))
    return CalendarLevels(edges, tuple(maps), tuple(labels), tuple(ncps))
