"""Stage of ``sparkanon init``: a table's profile, by aggregations, and a starter config.

``sparkanon init TABLE_OR_PATH`` reads the input (files or a catalog table), profiles a
seeded sample of at most :data:`SAMPLE_ROWS` rows and counts every row, and writes a
commented YAML config the user edits and runs. The driver holds per-column statistics
only: counts of present values, of values of each shape, of distinct values and of the
most frequent one; no value is collected, logged or written into the config.

The profile (:func:`make_column_stats_fn`, one pandas function per batch, the same on both
engines) emits, per column, rows ``(column, stat, key, n, lo, hi)``; one aggregation sums
them, a second rolls each column's value hashes up to its distinct count and the count of
its most frequent value. :func:`suggest` turns the per-column figures into a kind and a
role for every column (:class:`ColumnPlan`), by rules written out in ``docs/method.md``
("Starter configs"); :func:`render_config` writes the YAML with the reason of every choice
as a comment.
"""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.attributes.builders import MAX_BUILT_VALUES
from sparkanon.config import InputConfig
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.errors import InputError, InternalError
from sparkanon.families import load_config
from sparkanon.io import input_columns
from sparkanon.stages._common import MAX_STAT_ROWS, log

SAMPLE_ROWS = 20_000
"""Rows of the seeded sample the value shapes and distinct counts are measured on."""
SAMPLE_SEED = 20261126
"""Seed of the sample (a fixed seed: the same table gives the same config)."""
MISSING_TOKENS = frozenset({"", "?"})
"""Texts read as missing (the default ``input.missing_values``)."""
NOMINAL_MAX_VALUES = 20
"""A numeric column with at most this many distinct values is suggested as nominal."""
TEXT_NOMINAL_MAX_VALUES = 100
"""A text column with at most this many distinct values is suggested as nominal."""
NEAR_UNIQUE = 0.95
"""Distinct values over present values at or above which a column is near-unique."""
SHAPE_SHARE = 0.9
"""Share of present values of one shape (e-mail, phone...) that decides the shape."""
MAX_QUASI_IDENTIFIERS = 8
"""The most quasi-identifiers a starter config suggests."""
DEFAULT_K = 5
DEFAULT_L = 2

SHAPES: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$"),
    "phone": re.compile(r"^\+?(?=(?:\D*\d){7,15}\D*$)[\d\s().-]+$"),
    "ip": re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$|^[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}$"),
    "national_id": re.compile(r"^\d{3}-\d{2}-\d{4}$"),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "timestamp": re.compile(
        r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$"
    ),
    "code": re.compile(r"^\d+$"),
    "zero_led": re.compile(r"^0\d+$"),
}
"""Value shapes measured on text values (on distinct values, so once per value)."""
IDENTIFIER_SHAPES = ("email", "phone", "ip", "national_id")
"""Shapes that make a column a likely direct identifier."""

IDENTIFIER_NAMES = re.compile(
    r"^(?:id|uuid|guid|name|first|last|surname|fullname|email|mail|phone|mobile|tel|"
    r"telephone|fax|ssn|sin|nino|passport|mrn|account|iban|ip|address|street|license|"
    r"licence|vin|username|login)$"
)
"""Name tokens of likely direct identifiers (a column ``record_id``, ``full_name``...)."""
QUASI_NAMES = re.compile(
    r"^(?:age|sex|gender|race|ethnicity|ethnic|zip|zipcode|postcode|postal|birth|dob|"
    r"born|marital|education|occupation|workclass|job|country|nationality|native|city|"
    r"state|county|region|district|language|religion)$"
)
"""Name tokens of usual quasi-identifiers (Sweeney 2002: ZIP, birth date, sex...)."""
CODE_NAMES = re.compile(r"^(?:zip|zipcode|postcode|postal|code|icd|npi|fips|ndc|cpt)$")
"""Name tokens of columns of codes (digits that are not numbers)."""
SENSITIVE_NAMES = re.compile(
    r"^(?:diagnosis|diagnoses|disease|condition|icd|income|salary|wage|treatment|drug|"
    r"medication|outcome|health|illness|sensitive)$"
)
"""Name tokens of usual sensitive attributes."""

STATS_COLUMNS = [
    ("column", "string"),
    ("stat", "string"),
    ("key", "string"),
    ("n", "long"),
    ("lo", "double"),
    ("hi", "double"),
]
"""Columns of the per-batch statistics."""


def name_tokens(name: str) -> list[str]:
    """A column name's lower-case words (``native-country`` -> ``native``, ``country``)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]


def _value_type(values: pd.Series) -> str:
    """What a batch column holds: boolean, integer, number, decimal, date, timestamp or text."""
    if pd.api.types.is_bool_dtype(values):
        return "boolean"
    if pd.api.types.is_integer_dtype(values):
        return "integer"
    if pd.api.types.is_float_dtype(values):
        present = values.dropna()
        whole = bool(len(present)) and bool(np.all(np.mod(present.to_numpy(), 1) == 0))
        return "integer" if whole else "number"
    if pd.api.types.is_datetime64_any_dtype(values):
        return "timestamp"
    present = values.dropna()
    if len(present) == 0:
        return "empty"
    first = present.iloc[0]
    if isinstance(first, bool | np.bool_):
        return "boolean"
    if isinstance(first, Decimal):
        return "decimal"
    if isinstance(first, dt.datetime | pd.Timestamp):
        return "timestamp"
    if isinstance(first, dt.date):
        return "date"
    return "text"


def _column_stats(name: str, values: pd.Series) -> list[tuple[str, str, str, int, float, float]]:
    """One column's statistics of one batch (see :func:`make_column_stats_fn`)."""
    rows: list[tuple[str, str, str, int, float, float]] = []
    kind = _value_type(values)
    text = values.astype("string").str.strip()
    missing = text.isna() | text.isin(MISSING_TOKENS)
    present = text[~missing]
    rows.append((name, "type", kind, int(len(present)), np.nan, np.nan))
    rows.append((name, "present", "", int(len(present)), np.nan, np.nan))
    if len(present) == 0:
        return rows
    counts = present.value_counts(sort=False)
    hashes = pd.util.hash_array(counts.index.to_numpy(dtype=object)).astype(np.int64)
    rows += [
        (name, "value", str(h), int(c), np.nan, np.nan)
        for h, c in zip(hashes, counts.to_numpy(), strict=True)
    ]
    distinct = pd.Series(counts.index, dtype="string")
    lengths = distinct.str.len().to_numpy(dtype=float)
    weights = counts.to_numpy()
    rows.append(
        (name, "length", "", int(weights.sum()), float(lengths.min()), float(lengths.max()))
    )
    if kind == "text":
        for shape, pattern in SHAPES.items():
            hit = distinct.str.match(pattern).fillna(False).to_numpy(dtype=bool)
            if hit.any():
                lens = lengths[hit]
                rows.append(
                    (
                        name,
                        "shape",
                        shape,
                        int(weights[hit].sum()),
                        float(lens.min()),
                        float(lens.max()),
                    )
                )
        numbers = pd.to_numeric(distinct, errors="coerce").to_numpy(dtype=float)
        finite = np.isfinite(numbers)
        if finite.any():
            whole = finite & (np.mod(np.where(finite, numbers, 0), 1) == 0)
            rows.append(
                (
                    name,
                    "number",
                    "",
                    int(weights[finite].sum()),
                    float(numbers[finite].min()),
                    float(numbers[finite].max()),
                )
            )
            rows.append((name, "whole", "", int(weights[whole].sum()), np.nan, np.nan))
    return rows


def make_column_stats_fn(columns: Sequence[str]) -> BatchFn:
    """The batch function of the profile: per column, counts by type, shape and value.

    Rows ``(column, stat, key, n, lo, hi)``: ``type`` (``key`` the batch's value type,
    ``n`` present values), ``present``, ``value`` (``key`` a 64-bit hash of the trimmed
    text, ``n`` its rows: summed over batches, then counted per column), ``length``
    (text lengths), ``shape`` (``key`` the shape, ``n`` values of it, ``lo``/``hi``
    their lengths), ``number`` and ``whole`` (text that parses as a number, a whole one).
    """

    def stats(batch: pd.DataFrame) -> pd.DataFrame:
        rows: list[tuple[str, str, str, int, float, float]] = [
            ("", "rows", "", len(batch), np.nan, np.nan)
        ]
        for c in columns:
            rows += _column_stats(c, batch[c])
        return pd.DataFrame(rows, columns=[c for c, _ in STATS_COLUMNS])

    return stats


@dataclass(frozen=True)
class ColumnProfile:
    """What the sample says of one column.

    Attributes:
        name: the column.
        spark_type: its type as the engine reports it.
        value_type: what its values are (``boolean``, ``integer``, ``number``, ``decimal``,
            ``date``, ``timestamp``, ``text``, ``empty``).
        present: non-missing values in the sample.
        distinct: distinct non-missing values in the sample.
        top: rows of the most frequent value in the sample.
        shapes: per shape, the values of it.
        shape_lengths: per shape, the lowest and highest text length of its values.
        numbers: values whose text parses as a number.
        whole: ... as a whole number.
    """

    name: str
    spark_type: str
    value_type: str
    present: int
    distinct: int
    top: int
    shapes: Mapping[str, int] = field(default_factory=dict)
    shape_lengths: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    numbers: int = 0
    whole: int = 0

    def share(self, count: int) -> float:
        """``count`` over the present values (0 when none)."""
        return count / self.present if self.present else 0.0

    @property
    def unique_share(self) -> float:
        """Distinct over present values."""
        return self.share(self.distinct)


def _value_type_of(types: pd.DataFrame, spark_type: str) -> str:
    """The column's value type: the one most of its present values have."""
    if types.empty or int(types["n"].sum()) == 0:
        return "empty"
    ranked = types.sort_values(["n", "key"], ascending=[False, True])
    best = str(ranked["key"].iloc[0])
    if best == "integer" and spark_type.startswith(("double", "float")):
        return "number"
    if best in ("integer", "number") and (types["key"] == "number").any():
        return "number"
    return best


def column_profiles(
    stats: pd.DataFrame, distinct: pd.DataFrame, schema: Sequence[tuple[str, str]]
) -> list[ColumnProfile]:
    """The per-column profiles from the summed statistics (pure).

    Args:
        stats: summed ``(column, stat, key, n, lo, hi)`` rows, ``value`` rows excluded.
        distinct: per column, ``distinct`` and ``top``.
        schema: the input's ``(column, type)`` pairs, in order.
    """
    out = []
    by_column = {c: g for c, g in stats.groupby("column")}
    dist = {str(r.column): (int(r.distinct), int(r.top)) for r in distinct.itertuples()}
    for name, spark_type in schema:
        g = by_column.get(name, stats.iloc[0:0])

        def of(stat: str, g: pd.DataFrame = g) -> pd.DataFrame:
            return g[g["stat"] == stat]

        shapes = of("shape")
        out.append(
            ColumnProfile(
                name=name,
                spark_type=spark_type,
                value_type=_value_type_of(of("type"), spark_type),
                present=int(of("present")["n"].sum()),
                distinct=dist.get(name, (0, 0))[0],
                top=dist.get(name, (0, 0))[1],
                shapes={str(r.key): int(r.n) for r in shapes.itertuples()},
                shape_lengths={str(r.key): (int(r.lo), int(r.hi)) for r in shapes.itertuples()},
                numbers=int(of("number")["n"].sum()),
                whole=int(of("whole")["n"].sum()),
            )
        )
    return out


def profile_table(engine: Engine, table: Table) -> tuple[int, list[ColumnProfile]]:
    """Count the rows and profile a seeded sample of at most :data:`SAMPLE_ROWS` of them.

    Two aggregations over the sample's per-batch statistics; the driver collects one row
    per column and statistic (value hashes are counted per column on the engine).

    Returns:
        The rows of the whole table and the profile of each of its own columns.

    Raises:
        InputError: the table has no column or no row.
    """
    schema = input_columns(engine.schema_of(table))
    if not schema:
        raise InputError("the input has no column")
    names = [c for c, _ in schema]
    table = engine.select(table, names)
    with engine.stage("init", "sparkanon init: count the rows"):
        rows = engine.count(table)
    if rows == 0:
        raise InputError("the input has no row: nothing to profile")
    fraction = min(1.0, SAMPLE_ROWS / rows)
    sample = table if fraction >= 1.0 else engine.sample(table, fraction, SAMPLE_SEED)
    with engine.stage("init", "sparkanon init: per-column statistics of a sample"):
        partial = engine.map_batches(sample, make_column_stats_fn(names), STATS_COLUMNS)
        summed = engine.persist(
            engine.aggregate(
                partial,
                ["column", "stat", "key"],
                {"n": ("sum", "n"), "lo": ("min", "lo"), "hi": ("max", "hi")},
            )
        )
        try:
            stats = engine.collect_small(engine.where(summed, "stat", "!=", "value"), MAX_STAT_ROWS)
            values = engine.where(summed, "stat", "==", "value")
            distinct = engine.collect_small(
                engine.aggregate(
                    values, ["column"], {"distinct": ("count", "n"), "top": ("max", "n")}
                ),
                len(names) + 1,
            )
        finally:
            engine.unpersist(summed)
    log.info(
        "init: %d rows, %d columns, profiled on a sample of %s rows",
        rows,
        len(names),
        int(stats.loc[stats["stat"] == "rows", "n"].sum()),
    )
    return rows, column_profiles(stats, distinct, schema)


@dataclass(frozen=True)
class ColumnPlan:
    """What the starter config does with one column.

    Attributes:
        name: the column.
        role: ``identifier``, ``quasi``, ``sensitive``, ``other`` (left unlisted) or
            ``empty``.
        kind: the attribute kind suggested for it (``identifier``, ``continuous``,
            ``nominal``, ``date``, ``timestamp``, ``categorical``, ``semantic``;
            ``None`` for free text).
        keys: further keys of its ``attributes[]`` entry (``format``, ``builder``...).
        reason: why, in words (written as the entry's comment).
    """

    name: str
    role: str
    kind: str | None
    keys: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""


def _identifier_reason(p: ColumnProfile) -> str | None:
    """Why the column looks like a direct identifier, or ``None``."""
    tokens = name_tokens(p.name)
    if any(IDENTIFIER_NAMES.match(t) for t in tokens) and not any(
        QUASI_NAMES.match(t) for t in tokens
    ):
        return "its name reads as a direct identifier"
    for shape in IDENTIFIER_SHAPES:
        if p.share(p.shapes.get(shape, 0)) >= SHAPE_SHARE:
            what = shape.replace("_", " ")
            return f"{p.share(p.shapes[shape]):.0%} of its values have the shape of {what}s"
    if p.present >= 50 and p.unique_share >= NEAR_UNIQUE and p.value_type in ("text", "integer"):
        return f"near-unique: {p.unique_share:.0%} of its sampled values are distinct"
    return None


def suggest_kind(p: ColumnProfile) -> tuple[str | None, dict[str, Any], str]:
    """The attribute kind for a column (not an identifier), its keys, and why."""
    share = p.share
    if p.value_type == "date" or (
        p.value_type == "text" and share(p.shapes.get("date", 0)) >= 0.95
    ):
        keys = {} if p.value_type == "date" else {"format": "%Y-%m-%d"}
        return "date", keys, "dates"
    if p.value_type == "timestamp" or (
        p.value_type == "text" and share(p.shapes.get("timestamp", 0)) >= 0.95
    ):
        return "timestamp", {}, "timestamps (instants, UTC)"
    if p.value_type == "boolean":
        return "nominal", {}, "booleans"
    code_lengths = p.shape_lengths.get("code")
    is_code = (
        p.value_type == "text"
        and share(p.shapes.get("code", 0)) >= 0.95
        and code_lengths is not None
        and code_lengths[0] == code_lengths[1]
        and 3 <= code_lengths[0] <= 12
        and p.distinct > NOMINAL_MAX_VALUES
        and (
            p.shapes.get("zero_led", 0) > 0 or any(CODE_NAMES.match(t) for t in name_tokens(p.name))
        )
    )
    if is_code:
        length = code_lengths[0]
        if p.distinct <= MAX_BUILT_VALUES:  # a builder's limit; above it a prefix tree
            return (
                "categorical",
                {
                    "builder": {
                        "type": "mask",
                        "length": length,
                        "masked": list(range(1, length + 1)),
                    }
                },
                f"codes of {length} digits, masked right to left",
            )
        return "semantic", {"length": length}, f"codes of {length} digits (prefix tree)"
    numeric = p.value_type in ("integer", "number", "decimal") or (
        p.value_type == "text" and share(p.numbers) >= 0.95
    )
    if numeric:
        if p.distinct <= NOMINAL_MAX_VALUES:
            return "nominal", {}, f"numbers with {p.distinct} distinct values"
        return "continuous", {}, "numbers"
    if p.value_type in ("text", "empty") and p.distinct <= TEXT_NOMINAL_MAX_VALUES:
        return "nominal", {}, f"text with {p.distinct} distinct values"
    return None, {}, f"free text ({p.distinct} distinct values in the sample)"


@dataclass(frozen=True)
class Suggestion:
    """A starter config in words and values.

    Attributes:
        source: how the config's ``input`` reads the table (``path``/``format`` or
            ``table``).
        rows: rows of the input.
        columns: one plan per input column, in input order.
        sensitive: the sensitive attribute's column.
        k: the suggested ``k``.
        ell: the suggested ``l`` of distinct l-diversity (``None``: not suggested).
        feasibility: lines saying whether the model can hold on this data, and why.
    """

    source: Mapping[str, Any]
    rows: int
    columns: tuple[ColumnPlan, ...]
    sensitive: str
    k: int
    ell: int | None
    feasibility: tuple[str, ...]


def suggest(
    profiles: Sequence[ColumnProfile],
    rows: int,
    source: Mapping[str, Any],
    sensitive: str | None = None,
    quasi_identifiers: Sequence[str] | None = None,
) -> Suggestion:
    """Kinds, roles, a sensitive attribute and a model for a profiled table (pure).

    Rules (docs/method.md, "Starter configs"): a column is a likely direct identifier by
    its name, by the shape of its values (e-mail, phone, IP, national id) or by being
    near-unique; the sensitive attribute is ``sensitive`` or the first column whose name
    reads as one (diagnosis, income...) holding 2 to 1000 values; the quasi-identifiers
    are ``quasi_identifiers`` or the columns whose names read as one (age, sex, ZIP,
    birth...) plus every date and timestamp column, at most
    :data:`MAX_QUASI_IDENTIFIERS`; every other column is left unlisted.

    Raises:
        InputError: a named column is absent, or no column can be the sensitive attribute.
    """
    by_name = {p.name: p for p in profiles}
    for name in [sensitive] + list(quasi_identifiers or []):
        if name is not None and name not in by_name:
            raise InputError(f"column {name!r} is not in the input; it has {list(by_name)}")
    kinds = {p.name: suggest_kind(p) for p in profiles}
    identifiers = {
        p.name: why
        for p in profiles
        if (why := _identifier_reason(p)) is not None
        and p.name != sensitive
        and p.name not in (quasi_identifiers or [])
    }
    if sensitive is None:
        sensitive = next(
            (
                p.name
                for p in profiles
                if p.name not in identifiers
                and any(SENSITIVE_NAMES.match(t) for t in name_tokens(p.name))
                and 2 <= p.distinct <= 1000
            ),
            None,
        )
    if sensitive is None:
        raise InputError(
            "no column reads as a sensitive attribute (a diagnosis, an income...): name it "
            "with --sensitive COLUMN"
        )
    if quasi_identifiers is None:
        chosen = [
            p.name
            for p in profiles
            if p.name not in identifiers
            and p.name != sensitive
            and kinds[p.name][0] is not None
            and p.present > 0
            and (
                any(QUASI_NAMES.match(t) for t in name_tokens(p.name))
                or kinds[p.name][0] in ("date", "timestamp")
            )
        ][:MAX_QUASI_IDENTIFIERS]
    else:
        chosen = list(quasi_identifiers)
    if not chosen:
        raise InputError(
            "no column reads as a quasi-identifier (age, sex, ZIP, a date...): name them "
            "with --quasi-identifiers A,B,C"
        )
    plans = []
    for p in profiles:
        kind, keys, why = kinds[p.name]
        if p.name == sensitive:
            plans.append(ColumnPlan(p.name, "sensitive", None, {}, f"{p.distinct} distinct values"))
        elif p.name in chosen:
            if kind is None:
                kind, keys, why = "nominal", {}, why + "; named a quasi-identifier"
            plans.append(ColumnPlan(p.name, "quasi", kind, keys, why))
        elif p.name in identifiers:
            plans.append(ColumnPlan(p.name, "identifier", "identifier", {}, identifiers[p.name]))
        elif p.present == 0:
            plans.append(ColumnPlan(p.name, "empty", None, {}, "no value in the sample"))
        else:
            plans.append(ColumnPlan(p.name, "other", kind, keys, why))
    sens = by_name[sensitive]
    k = DEFAULT_K
    ell = DEFAULT_L if sens.distinct >= DEFAULT_L else None
    feasibility = feasibility_lines(rows, sens, k, ell)
    return Suggestion(source, rows, tuple(plans), sensitive, k, ell, feasibility)


def feasibility_lines(rows: int, sens: ColumnProfile, k: int, ell: int | None) -> tuple[str, ...]:
    """Whether ``k``-anonymity and distinct ``l``-diversity can hold on this data, in words.

    k-anonymity needs ``k`` usable rows; distinct l-diversity needs ``l`` distinct
    sensitive values in the whole table, and then holds for at most
    ``(rows - top) / (l - 1)`` classes by the pigeonhole rule (each class needs ``l - 1``
    rows outside the most frequent value); both read on the sample, scaled to the rows.
    """
    lines = [
        f"k={k}: {'feasible' if rows >= k else 'NOT feasible'} ({rows} rows; every class "
        f"needs {k}; at most {rows // k if k else rows} classes)"
    ]
    if ell is None:
        lines.append(
            f"l-diversity: not suggested, the sensitive column {sens.name!r} holds "
            f"{sens.distinct} distinct value(s)"
        )
        return tuple(lines)
    top_share = sens.share(sens.top)
    classes = int(rows * (1 - top_share) / (ell - 1)) if top_share < 1 else 0
    lines.append(
        f"distinct l={ell}: {'feasible' if sens.distinct >= ell else 'NOT feasible'} "
        f"({sens.distinct} sensitive values; the most frequent holds {top_share:.0%} of the "
        f"sampled rows, so at most about {classes} classes can hold {ell} values)"
    )
    return tuple(lines)


def _yaml_scalar(value: Any) -> str:
    """A YAML scalar: numbers and booleans bare, text quoted when it needs it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    if re.fullmatch(r"[A-Za-z_./][A-Za-z0-9_./-]*", text) and text.lower() not in (
        "yes",
        "no",
        "on",
        "off",
        "true",
        "false",
        "null",
        "y",
        "n",
    ):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _flow_value(value: Any) -> str:
    """A YAML flow value: a mapping, a list or a scalar."""
    if isinstance(value, Mapping):
        return _flow(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow_value(v) for v in value) + "]"
    return _yaml_scalar(value)


def _flow(mapping: Mapping[str, Any]) -> str:
    """A flow mapping ``{a: 1, b: {c: [1, 2]}}``."""
    return "{" + ", ".join(f"{k}: {_flow_value(v)}" for k, v in mapping.items()) + "}"


def _wrapped(prefix: str, names: Sequence[str], width: int = 92) -> list[str]:
    """``names`` as comment lines of at most ``width`` characters."""
    lines, line = [], prefix
    for name in names:
        piece = name + ", "
        if len(line) + len(piece) > width:
            lines.append(line.rstrip())
            line = "#   "
        line += piece
    lines.append(line.rstrip().rstrip(","))
    return lines


def render_config(s: Suggestion, output_path: str) -> str:
    """The starter config as commented YAML (loads with :func:`sparkanon.families.load_config`)."""
    out = [
        "# Starter config written by `sparkanon init` from the table's profile (a seeded",
        f"# sample of at most {SAMPLE_ROWS} rows; {s.rows} rows in all). Read every line, edit,",
        "# then run: sparkanon run THIS_FILE",
        "# The kinds and roles below are suggestions from column names, value shapes and",
        "# counts; sparkanon cannot know what is public knowledge about your population.",
        "input:",
    ]
    for key, value in s.source.items():
        out.append(
            f"  {key}: {_flow(value) if isinstance(value, Mapping) else _yaml_scalar(value)}"
        )
    out += [
        '  missing_values: ["?", ""]',
        "  on_missing: drop",
        "  # Columns not listed under attributes are dropped (named and counted in",
        "  # metrics.json); `keep` would publish them unchanged.",
        "  unlisted: drop",
        "",
        "attributes:",
    ]
    for role, title in (
        ("quasi", "Quasi-identifiers (what an attacker may know about a person):"),
        ("identifier", "Likely direct identifiers, dropped (check none is a quasi-identifier):"),
    ):
        plans = [p for p in s.columns if p.role == role]
        if not plans:
            continue
        out.append(f"  # {title}")
        for p in plans:
            entry = {"name": p.name, "kind": p.kind, **p.keys}
            out.append(f"  - {_flow(entry)}  # {p.reason}")
    others = [p for p in s.columns if p.role in ("other", "empty")]
    if others:
        out.append("  # Left unlisted (dropped by `unlisted: drop`); list one as `kind: keep` to")
        out.append("  # publish it unchanged, or with a kind to make it a quasi-identifier:")
        out += ["  " + line for line in _wrapped("#   ", [p.name for p in others])]
    out += [
        "",
        "sensitive:",
        f"  name: {_yaml_scalar(s.sensitive)}",
        "",
        "# Feasibility on this data:",
        *[f"#   {line}" for line in s.feasibility],
        "model:",
        f"  - {{name: k, k: {s.k}}}",
    ]
    if s.ell is not None:
        out.append(f"  - {{name: distinct_l, l: {s.ell}}}")
    out += [
        "",
        "# Mondrian (LeFevre et al. 2006) publishes generalized values: ranges, taxonomy",
        "# nodes, masked codes. Other algorithms: docs/configuration.md.",
        "algorithm:",
        "  name: mondrian",
        "",
        "output:",
        f"  path: {_yaml_scalar(output_path)}",
        "  format: parquet",
        "  mode: error",
        "  publish: generalized",
        "",
        "seed: 0",
        "",
    ]
    return "\n".join(out)


def source_of(target: str, fmt: str | None) -> dict[str, Any]:
    """The config's ``input`` keys that read the files ``target``."""
    chosen = fmt or format_of_path(target)
    source: dict[str, Any] = {"format": chosen, "path": target}
    if chosen == "csv":
        source["options"] = {"header": True}
    return source


def format_of_path(path: str) -> str:
    """``csv``, ``orc`` or ``parquet`` from a file's (or a folder's first file's) suffix."""
    p = Path(path)
    names = (
        [p.name]
        if not p.is_dir()
        else sorted(
            f.name for f in p.rglob("*") if f.is_file() and not f.name.startswith((".", "_"))
        )
    )
    for name in names:
        lower = name.lower()
        if lower.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
            return "csv"
        if lower.endswith(".orc"):
            return "orc"
        if lower.endswith(".parquet"):
            return "parquet"
    return "parquet"


TABLE_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?$")
"""A catalog table name, ``name`` or ``db.name``."""


def is_table_name(target: str) -> bool:
    """Whether ``init``'s target is a catalog table: a table name that is no local path."""
    return "://" not in target and not Path(target).exists() and bool(TABLE_NAME.match(target))


def read_target(engine: Engine, target: str, fmt: str | None) -> tuple[Table, dict[str, Any]]:
    """The table ``init`` profiles, and the config's ``input`` keys that read it.

    Raises:
        InputError: a local path that does not exist, or a table the catalog lacks.
    """
    from sparkanon.stages.read import read_table

    if is_table_name(target):
        source: dict[str, Any] = {"table": target}
    elif "://" not in target and not Path(target).exists():
        raise InputError(f"TABLE_OR_PATH {target!r}: no such file or folder, and not a table name")
    else:
        source = source_of(target, fmt)
    table, _ = read_table(engine, InputConfig(**source), key="TABLE_OR_PATH")
    return table, source


def starter_config(
    engine: Engine,
    target: str,
    fmt: str | None = None,
    output_path: str | None = None,
    sensitive: str | None = None,
    quasi_identifiers: Sequence[str] | None = None,
) -> str:
    """Profile ``target`` and write its starter config (``sparkanon init``).

    The config is loaded back before it is returned, so a config that would not load is
    an internal error here rather than the user's first run's.

    Args:
        engine: the engine (a catalog table needs Spark with the catalog).
        target: a file or folder, or a catalog table ``db.name``.
        fmt: the files' format (default: from their suffix).
        output_path: the config's ``output.path`` (default ``out/<name>_anonymized``).
        sensitive: the sensitive attribute (default: suggested).
        quasi_identifiers: the quasi-identifiers (default: suggested).

    Returns:
        The YAML text.
    """
    table, source = read_target(engine, target, fmt)
    rows, profiles = profile_table(engine, table)
    plan = suggest(profiles, rows, source, sensitive, quasi_identifiers)
    stem = re.sub(r"\W+", "_", Path(target.rstrip("/")).stem.split(".")[-1]) or "table"
    text = render_config(plan, output_path or f"out/{stem}_anonymized")
    with tempfile.TemporaryDirectory() as folder:
        written = Path(folder) / "starter.yaml"
        written.write_text(text, encoding="utf-8")
        try:
            load_config(written)
        except Exception as exc:
            raise InternalError(f"the starter config does not load: {exc}") from exc
    log.info(
        "init: %d quasi-identifiers, %d likely identifiers, %d columns left unlisted",
        sum(p.role == "quasi" for p in plan.columns),
        sum(p.role == "identifier" for p in plan.columns),
        sum(p.role in ("other", "empty") for p in plan.columns),
    )
    return text
