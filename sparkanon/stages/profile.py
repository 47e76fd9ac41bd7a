"""Stage ``profile``: one pass of mergeable per-batch statistics over the input.

Every batch yields a small table of statistics (:func:`make_profile_fn`) that an
aggregation merges; the driver receives one row per (statistic, column, value) and
turns it into a typed :class:`Profile`: row counts by fate, continuous ranges,
discrete domains and the sensitive distribution. The first input problem it shows
fails the job with the column and the value (:func:`raise_input_errors`); the schema
(:func:`build_schema`) and the model's feasibility follow from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.attributes.builders import build_hierarchy, invalid_message
from sparkanon.attributes.checks import (
    BuilderCheck,
    CodeCheck,
    DomainCheck,
    FreeCheck,
    NumberCheck,
    TemporalCheck,
    ValueCheck,
)
from sparkanon.attributes.dates import DateKind, TemporalFormat, TimestampKind
from sparkanon.attributes.hierarchy import Taxonomy, load_arx_hierarchy
from sparkanon.attributes.kinds import (
    CategoricalKind,
    ContinuousKind,
    DiscreteKind,
    Kind,
    categorical_kind,
    nominal_kind,
)
from sparkanon.attributes.schema import Schema, SensitiveLevels
from sparkanon.attributes.text import TrimmedText, missing_mask
from sparkanon.config import ItemsetConfig, JobConfig
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.errors import ConfigError, InputError, StatisticsOverflowError
from sparkanon.io import MALFORMED
from sparkanon.models import ModelSet, SensitiveDomain
from sparkanon.stages._common import MAX_STAT_ROWS, StageTimer, log
from sparkanon.stages.items import (
    ItemProfile,
    ItemsSpec,
    item_stats,
    separator_hint,
    set_missing,
)
from sparkanon.stages.read import RawInput

MAX_NOMINAL_VALUES = 10_000
"""An undeclared nominal column with more distinct values is rejected."""


PROFILE_COLUMNS = [
    ("stat", "string"),
    ("column", "string"),
    ("value", "string"),
    ("n", "long"),
    ("lo", "double"),
    ("hi", "double"),
]


UNKNOWN_EXAMPLES = 5
"""Distinct bad values kept per column and batch, for error messages."""


@dataclass(frozen=True)
class ProfileSpec:
    """What the profiling pass checks.

    Attributes:
        checks: each quasi-identifier's value check, in the quasi-identifiers' order
            (:mod:`sparkanon.attributes.checks`): which values are invalid and which
            statistics (range, domain or none) its values add.
        sensitive: the sensitive column.
        sensitive_values: the declared sensitive values (``None``: any value).
        missing_tokens: tokens meaning "missing".
        drop_invalid: ``input.on_invalid: drop``: rows holding a quasi-identifier
            value that cannot be encoded are suppressed (and left out of the
            ranges and domains) instead of failing the job.
        items: for a set-valued sensitive attribute, how to read it
            (:mod:`sparkanon.stages.items`); the column then has item statistics
            instead of a value domain.
    """

    checks: dict[str, ValueCheck]
    sensitive: str
    sensitive_values: frozenset[str] | None
    missing_tokens: frozenset[str]
    drop_invalid: bool = False
    items: ItemsSpec | None = None


def _stat(
    stat: str, column: str, value: str | None, n: int, lo: float = np.nan, hi: float = np.nan
) -> dict:
    return {"stat": stat, "column": column, "value": value, "n": int(n), "lo": lo, "hi": hi}


def make_profile_fn(spec: ProfileSpec) -> BatchFn:
    """Per-batch accumulator of input statistics (merged by an aggregation).

    The rows it emits: ``rows``; ``malformed_records`` (CSV records of the wrong
    width, :data:`sparkanon.io.MALFORMED`; left out of every other statistic);
    ``missing`` per column; ``missing_rows``; per quasi-identifier holding invalid
    values, examples of them (and their row counts) under its check's statistic
    (:attr:`~sparkanon.attributes.checks.ValueCheck.invalid_stat`: ``nonnumeric``,
    ``malformed``, ``unparsed``, ``unknown``) and ``invalid``; ``invalid_rows``; the
    statistics each check's summary adds (``range`` of continuous, date and timestamp
    columns, ``domain`` counts of undeclared nominal and built columns); ``domain``
    counts (and ``unknown`` undeclared values) of the sensitive column, or its item
    statistics.
    """
    items = spec.items
    columns = list(spec.checks) + ([spec.sensitive] if items is None else [])

    def profile(batch: pd.DataFrame) -> pd.DataFrame:
        rows = [_stat("rows", "*", None, len(batch))]
        if MALFORMED in batch.columns:
            bad = batch[MALFORMED].to_numpy() == 1
            rows.append(_stat("malformed_records", "*", None, int(bad.sum())))
            batch = batch[~bad]
        texts = TrimmedText(batch)
        miss = missing_mask(texts, columns, spec.missing_tokens)
        if items is not None:
            miss[items.column] = set_missing(batch[items.column], items)
        any_missing = miss.any(axis=1).to_numpy()
        rows.append(_stat("missing_rows", "*", None, int(any_missing.sum())))
        for c in miss.columns:
            rows.append(_stat("missing", c, None, int(miss[c].sum())))
        valid = texts.rows(~any_missing)
        any_invalid = np.zeros(len(valid.batch), dtype=bool)
        for c, check in spec.checks.items():
            bad = check.invalid(valid, c)
            any_invalid |= bad
            if bad.any():
                shown = check.shown(valid, c)[bad].astype(str)
                examples = shown.value_counts().head(UNKNOWN_EXAMPLES)
                rows += [_stat(check.invalid_stat, c, str(v), n) for v, n in examples.items()]
                rows.append(_stat("invalid", c, None, int(bad.sum())))
        rows.append(_stat("invalid_rows", "*", None, int(any_invalid.sum())))
        if spec.drop_invalid:
            valid = valid.rows(~any_invalid)
        for c, check in spec.checks.items():
            rows += [_stat(r.stat, c, r.value, r.n, r.lo, r.hi) for r in check.summary(valid, c)]
        if items is not None:
            for stat, value, n in item_stats(valid.batch[items.column], items):
                rows.append(_stat(stat, items.column, value, n))
            return pd.DataFrame(rows, columns=[n for n, _ in PROFILE_COLUMNS])
        counts = valid.value_counts(spec.sensitive)
        for v, n in counts.items():
            known = spec.sensitive_values is None or v in spec.sensitive_values
            stat = "domain" if known else "unknown"
            rows.append(_stat(stat, spec.sensitive, str(v), n))
        return pd.DataFrame(rows, columns=[n for n, _ in PROFILE_COLUMNS])

    return profile


IMPLICIT_LEVEL_WEIGHT = 0.5
"""Weight of the one implicit level of a job without ``sensitive.levels``."""


def sensitive_levels(config: JobConfig, prof: pd.DataFrame) -> SensitiveLevels:
    """The sensitive domain: declared values (and levels), else the values the data holds.

    Without ``sensitive.levels`` every value sits in one implicit level
    (:attr:`~sparkanon.attributes.schema.SensitiveLevels.has_levels` false).
    """
    sens = config.sensitive
    if isinstance(sens, ItemsetConfig):  # sets are not coded as values: one placeholder
        return SensitiveLevels(
            name=sens.name,
            values=("*",),
            level_of=np.zeros(1, dtype=np.int64),
            level_names=("all",),
            weights=np.asarray([IMPLICIT_LEVEL_WEIGHT]),
            has_levels=False,
            order=None,
        )
    if sens.levels is not None:
        values = [v for lv in sens.levels for v in lv.values]
        level_of = [i for i, lv in enumerate(sens.levels) for _ in lv.values]
        if sens.values is not None:  # the declared order, levels looked up per value
            lookup = dict(zip(values, level_of, strict=True))
            values, level_of = list(sens.values), [lookup[v] for v in sens.values]
        names = tuple(lv.name for lv in sens.levels)
        weights = [lv.weight for lv in sens.levels]
    else:
        if sens.values is not None:
            values = list(sens.values)
        else:
            domain = prof[(prof["stat"] == "domain") & (prof["column"] == sens.name)]
            values = sorted(str(v) for v in domain["value"].unique())
        level_of, names, weights = [0] * len(values), ("all",), [IMPLICIT_LEVEL_WEIGHT]
    return SensitiveLevels(
        name=sens.name,
        values=tuple(values),
        level_of=np.asarray(level_of, dtype=np.int64),
        level_names=names,
        weights=np.asarray(weights, dtype=float),
        has_levels=sens.levels is not None,
        order=sens.values,
    )


def known_kinds(config: JobConfig) -> dict[str, Kind]:
    """Kinds the config fixes, built before reading data.

    Those are the discrete kinds with a declared domain and the semantic kinds
    (their code hierarchy tree is fixed by the code length).
    """
    kinds: dict[str, Kind] = {}
    for attr in config.quasi_identifiers:
        kind = attr.known_kind()
        if kind is not None:
            kinds[attr.name] = kind
    return kinds


def missing_policies(config: JobConfig) -> dict[str, str]:
    """``drop`` or ``error`` per profiled column: its own ``on_missing``, else the input's.

    The sensitive column (and a set column) follows ``input.on_missing``.
    """
    default = config.input.on_missing
    out = {a.name: a.on_missing or default for a in config.quasi_identifiers}
    out[config.sensitive.name] = default
    return out


def missing_key(config: JobConfig, column: str) -> str:
    """The config key that sets ``column``'s missing-value policy (for messages)."""
    for i, a in enumerate(config.attributes):
        if a.name == column and a.is_quasi_identifier and a.on_missing is not None:
            return f"attributes.{i}.on_missing"
    return "input.on_missing"


def raise_input_errors(config: JobConfig, prof: pd.DataFrame, known: dict[str, Kind]) -> None:
    """Raise the first input problem the profile shows, naming column and value."""

    def rows(stat: str) -> pd.DataFrame:
        return prof[prof["stat"] == stat]

    total = int(rows("rows")["n"].sum())
    if total == 0:
        raise InputError(f"input {config.input.source} is empty (0 rows)")
    missing = rows("missing")
    policy = missing_policies(config)
    missing = missing[(missing["n"] > 0) & (missing["column"].map(policy) == "error")]
    if len(missing):
        detail = ", ".join(
            f"{r.column!r} ({missing_key(config, str(r.column))}: error): {int(r.n)} rows"
            for r in missing.sort_values("column").itertuples()
        )
        raise InputError(
            f"missing values ({list(config.input.missing_values)}) in {detail}; "
            "set that key to drop to suppress those rows"
        )
    dropping = config.input.on_invalid == "drop"
    hint = "; or set input.on_invalid: drop to suppress such rows"
    bad = rows("nonnumeric")
    if len(bad) and not dropping:
        r = bad.sort_values(["column", "value"]).iloc[0]
        raise InputError(
            f"column {r.column!r} is continuous but holds the non-numeric value {r.value!r} "
            f"({int(bad[bad.column == r.column].n.sum())} rows); fix the data or declare "
            "the column ordinal, categorical or nominal" + hint
        )
    malformed = rows("malformed")
    if len(malformed) and not dropping:
        r = malformed.sort_values(["column", "value"]).iloc[0]
        attr = next(a for a in config.attributes if a.name == r.column)
        raise InputError(
            f"value {r.value!r} of the semantic column {r.column!r} is not a code of exactly "
            f"{attr.length} digits (attributes[].length: {attr.length}; at least "
            f"{int(malformed[malformed.column == r.column].n.sum())} malformed rows); fix the "
            "data, read the column as text so leading zeros survive" + hint
        )
    unparsed = rows("unparsed")
    if len(unparsed) and not dropping:
        raise InputError(unparsed_message(config, unparsed) + hint)
    sens = config.sensitive
    unknown_items = rows("item_unknown")
    if isinstance(sens, ItemsetConfig) and sens.on_unknown_item == "error" and len(unknown_items):
        raise InputError(unknown_item_message(config, prof))
    unknown = rows("unknown")
    if dropping:
        unknown = unknown[unknown["column"] == config.sensitive.name]
    if len(unknown):
        r = unknown.sort_values(["column", "value"]).iloc[0]
        if r.column == config.sensitive.name:
            where = "sensitive.values" if config.sensitive.values else "one of sensitive.levels"
            raise InputError(
                f"value {r.value!r} of the sensitive column {r.column!r} is not a declared "
                f"sensitive value; add it to {where}"
            )
        i, attr = next((i, a) for i, a in enumerate(config.attributes) if a.name == r.column)
        if getattr(attr, "builder", None) is not None:
            raise InputError(
                f"value {r.value!r} of column {r.column!r} "
                + invalid_message(attr.builder, f"attributes.{i}.builder")
                + hint
            )
        where = {
            "categorical": lambda: f"its hierarchy {attr.hierarchy!r}",
            "ordinal": lambda: "its declared order (attributes[].order)",
            "nominal": lambda: "its declared values (attributes[].values)",
        }[attr.kind]()
        raise InputError(f"value {r.value!r} of column {r.column!r} is absent from {where}" + hint)


def unparsed_message(config: JobConfig, unparsed: pd.DataFrame) -> str:
    """The error for a date or timestamp value that does not parse (or match its format)."""
    r = unparsed.sort_values(["column", "value"]).iloc[0]
    i, attr = next((i, a) for i, a in enumerate(config.attributes) if a.name == r.column)
    fmt = attr.format if attr.format is not None else "ISO 8601"
    count = int(unparsed[unparsed.column == r.column].n.sum())
    return (
        f"value {r.value!r} of the {attr.kind} column {r.column!r} does not match "
        f"attributes.{i}.format ({fmt!r}; at least {count} such rows); fix the data or "
        f"the format"
    )


def unknown_item_message(config: JobConfig, prof: pd.DataFrame) -> str:
    """The error for items of the set column that are not leaves of the taxonomy.

    An item that is an inner node of the taxonomy is named as such (items must be
    leaves) before one that is absent from it; the latter comes with a hint when the
    separator looks wrong (:func:`sparkanon.stages.items.separator_hint`).
    """
    sens = config.sensitive
    assert isinstance(sens, ItemsetConfig) and sens.taxonomy is not None
    spec = items_spec(config)
    assert spec is not None
    stats = prof[prof["column"] == sens.name]
    unknown = stats[stats["stat"] == "item_unknown"]
    values = sorted(str(v) for v in unknown["value"])
    counts = f"{len(values)} unknown item(s) in {int(unknown['n'].sum())} record occurrences"
    taxonomy = load_arx_hierarchy(sens.taxonomy, sens.name, sens.separator)
    level_of = {label: j for path in taxonomy.paths for j, label in enumerate(path) if j}
    inner = [v for v in values if v in level_of]
    drop = "or set sensitive.on_unknown_item: drop to remove such items from their sets"
    if inner:
        item = inner[0]
        return (
            f"item {item!r} of the set column {sens.name!r} is an inner node of the taxonomy "
            f"{sens.taxonomy!r} (level {level_of[item]}), not a leaf ({counts}); items must be "
            f"leaves (the taxonomy's first column): replace it by the leaves it stands for, {drop}"
        )
    any_known = bool((stats["stat"] == "item").any())
    hint = separator_hint(values, spec, any_known)
    return (
        f"item {values[0]!r} of the set column {sens.name!r} is absent from the taxonomy "
        f"{sens.taxonomy!r} ({counts}){hint}; add it to the taxonomy, {drop}"
    )


def temporal_kind(attr: Any, low: float, high: float, zones: Mapping[str, str]) -> Kind:
    """The kind of a date or timestamp attribute over the input's range (epoch units).

    Args:
        attr: the ``date`` or ``timestamp`` attribute.
        low: the input's minimum (epoch days or seconds).
        high: the input's maximum.
        zones: the zone of naive values of columns the engine delivers as wall-clock
            instants (:meth:`~sparkanon.engine.base.Engine.instant_zones`); the others
            read naive values in the attribute's ``timezone``.
    """
    if attr.kind == "date":
        return DateKind(attr.name, attr.weight, low, high, None, format=attr.format)
    zone = zones.get(attr.name, attr.timezone)
    return TimestampKind(attr.name, attr.weight, low, high, None, format=attr.format, zone=zone)


def value_range(prof: pd.DataFrame, column: str) -> tuple[float, float]:
    """A numeric, date or timestamp column's range over the input (0, 0 when it has none)."""
    r = prof[(prof["stat"] == "range") & (prof["column"] == column)]
    return (float(r["lo"].min()), float(r["hi"].max())) if len(r) else (0.0, 0.0)


def build_schema(
    config: JobConfig,
    prof: pd.DataFrame,
    known: dict[str, Kind],
    zones: Mapping[str, str] | None = None,
) -> Schema:
    """Kinds of every quasi-identifier from the config and the input profile.

    ``zones``: see :func:`temporal_kind`.
    """
    zones = zones or {}
    kinds: list[Kind] = []
    for attr in config.quasi_identifiers:
        if attr.name in known:
            kinds.append(known[attr.name])
        elif getattr(attr, "builder", None) is not None:
            kinds.append(built_kind(config, prof, attr))
        elif attr.kind == "continuous":
            lo, hi = value_range(prof, attr.name)
            kinds.append(ContinuousKind(attr.name, attr.weight, lo, hi, config.output.decimals))
        elif attr.kind in ("date", "timestamp"):
            kinds.append(temporal_kind(attr, *value_range(prof, attr.name), zones))
        else:
            d = prof[(prof["stat"] == "domain") & (prof["column"] == attr.name)]
            values = tuple(sorted(str(v) for v in d["value"].unique()))
            if len(values) > MAX_NOMINAL_VALUES:
                raise ConfigError(
                    f"attributes ({attr.name}): nominal column has {len(values)} distinct values "
                    f"(more than {MAX_NOMINAL_VALUES}); declare it continuous, categorical with "
                    "a hierarchy, or identifier"
                )
            kinds.append(nominal_kind(attr.name, attr.weight, values, attr.encoding))
    return Schema(kinds=tuple(kinds), sensitive=sensitive_levels(config, prof))


def built_kind(config: JobConfig, prof: pd.DataFrame, attr: Any) -> Kind:
    """The categorical kind of a column whose hierarchy a builder generates from its domain.

    Raises:
        ConfigError: too many distinct values, or a generated hierarchy that is no tree.
    """
    i = next(i for i, a in enumerate(config.attributes) if a.name == attr.name)
    d = prof[(prof["stat"] == "domain") & (prof["column"] == attr.name)]
    counts = d.groupby(d["value"].astype(str))["n"].sum()
    built = build_hierarchy(
        attr.name,
        f"attributes.{i}.builder",
        attr.builder,
        list(counts.index),
        counts.to_numpy(),
    )
    return categorical_kind(attr.name, attr.weight, built.taxonomy, built.lookup)


def built_taxonomies(config: JobConfig, schema: Schema) -> dict[str, Taxonomy]:
    """The hierarchies the config's builders generated from the data, by column."""
    builders = {a.name for a in config.quasi_identifiers if getattr(a, "builder", None)}
    return {
        kind.name: kind.taxonomy
        for kind in schema.kinds
        if kind.name in builders and isinstance(kind, CategoricalKind) and kind.taxonomy
    }


def every_set_unknown_message(config: JobConfig, prof: pd.DataFrame, spec: ItemsSpec) -> str:
    """The error when every usable record's items were unknown and dropped (no record left)."""
    stats = prof[prof["column"] == spec.column]
    unknown = sorted(str(v) for v in stats.loc[stats["stat"] == "item_unknown", "value"])
    hint = separator_hint(unknown, spec, bool((stats["stat"] == "item").any()))
    return (
        f"input {config.input.source}: no record is left: every item of the set column "
        f"{spec.column!r} is absent from the taxonomy {config.sensitive.taxonomy!r} and was "
        f"dropped (sensitive.on_unknown_item: drop){hint}"
    )


def malformed_error(engine: Engine, config: JobConfig, count: int) -> InputError:
    """The error for malformed CSV records, naming the first one's file and line."""
    where = engine.first_malformed(config.input)
    first = (
        f"file {where[0]!r} line {where[1]} has {where[2]} fields where the header has {where[3]}"
        if where is not None
        else "the first could not be located"
    )
    return InputError(
        f"input {config.input.source}: {count} malformed CSV record(s) (a field count that "
        f"differs from the header's); {first}. Fix the file, or set input.on_malformed: drop "
        "to suppress such records"
    )


def sensitive_domain(schema: Schema, profile: Profile) -> SensitiveDomain:
    """The sensitive attribute over the usable rows, for the models (feasibility, binding)."""
    sens = schema.sensitive
    counts = np.array([profile.sensitive_counts.get(v, 0) for v in sens.values], dtype=np.int64)
    return SensitiveDomain(
        values=sens.values,
        counts=counts,
        level_of=sens.declared_level_of,
        order=sens.order,
        name=sens.name,
    )


def check_feasible(config: JobConfig, models: ModelSet, domain: SensitiveDomain, rows: int) -> None:
    """Fail (exit 2) when the usable rows cannot satisfy the models at all.

    Each model checks itself (:meth:`sparkanon.models.PrivacyModel.check_feasible`):
    enough rows for its smallest class, and the whole table, taken as one class,
    satisfying it (every model here is monotonic).
    """
    if rows == 0:
        raise InputError(
            f"input {config.input.source}: every row holds a missing value "
            f"({list(config.input.missing_values)}) or, with input.on_invalid: drop, an "
            "invalid value in a quasi-identifier or the sensitive column: no rows left after "
            "dropping them; check input.missing_values and the data"
        )
    if len(models) == 1:
        models[0].check_feasible(domain, rows, "model")
    else:
        models.check_feasible(domain, rows, "model")


@dataclass(frozen=True)
class Profile:
    """What the profiling pass learned about the input (statistics only, no rows).

    Attributes:
        rows_in: rows read.
        malformed: CSV records of the wrong width.
        missing: rows holding a missing quasi-identifier or sensitive value.
        invalid: rows holding a value that cannot be encoded (counted as dropped
            only with ``input.on_invalid: drop``).
        sensitive_counts: rows per sensitive value among the usable rows (the
            global distribution).
        stats: the merged statistics table, one row per (stat, column, value).
        items: the set column's statistics (a set-valued sensitive attribute only); its
            records whose every item is unknown are suppressed (:attr:`unknown_items`).
    """

    rows_in: int
    malformed: int
    missing: int
    invalid: int
    sensitive_counts: dict[str, int] = field(default_factory=dict)
    stats: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    items: ItemProfile | None = None

    @property
    def unknown_items(self) -> int:
        """Records suppressed because every item of their set is unknown (dropped)."""
        return 0 if self.items is None else self.items.emptied_sets

    @property
    def usable(self) -> int:
        """Rows left for anonymization."""
        return self.rows_in - self.suppressed

    @property
    def suppressed(self) -> int:
        """Rows dropped before anonymization."""
        return self.malformed + self.missing + self.invalid + self.unknown_items


def items_spec(config: JobConfig) -> ItemsSpec | None:
    """How to read the set-valued sensitive attribute (``None`` for one value per record)."""
    sens = config.sensitive
    if not isinstance(sens, ItemsetConfig):
        return None
    known = None
    if sens.taxonomy is not None:
        known = frozenset(load_arx_hierarchy(sens.taxonomy, sens.name, sens.separator).leaves)
    tokens = frozenset(t.strip() for t in config.input.missing_values) - {""}
    return ItemsSpec(
        column=sens.name,
        layout="delimited" if sens.layout == "delimited" else "array",
        separator=sens.separator,
        known=known,
        missing_tokens=tokens,
        empty_when_null=sens.layout in ("delimited", "long"),
    )


def value_check(attr: Any, known: Mapping[str, Kind], zones: Mapping[str, str]) -> ValueCheck:
    """The check of one quasi-identifier's values (:mod:`sparkanon.attributes.checks`).

    Args:
        attr: the quasi-identifier's attribute.
        known: the kinds the config fixes (:func:`known_kinds`); a discrete one declares
            the column's domain.
        zones: see :func:`temporal_kind`.
    """
    if attr.kind == "continuous":
        return NumberCheck()
    if attr.kind == "semantic":
        return CodeCheck(attr.length)
    if getattr(attr, "builder", None) is not None:
        return BuilderCheck(attr.builder)
    if attr.kind in ("date", "timestamp"):
        zone = "UTC" if attr.kind == "date" else zones.get(attr.name, attr.timezone)
        return TemporalCheck(TemporalFormat(attr.kind == "date", attr.format, zone))
    kind = known.get(attr.name)
    if isinstance(kind, DiscreteKind):
        return DomainCheck(frozenset(kind.labels))
    return FreeCheck()


def profile_spec(
    config: JobConfig,
    known: Mapping[str, Kind] | None = None,
    zones: Mapping[str, str] | None = None,
) -> ProfileSpec:
    """What the profiling pass checks, from the config and the kinds it fixes.

    The encode stage drops, with ``input.on_invalid: drop``, the rows this spec's checks
    reject, so it builds the spec here as well.

    Args:
        config: the job's config.
        known: the kinds the config fixes (default: :func:`known_kinds` of ``config``).
        zones: see :func:`temporal_kind`.
    """
    known = known_kinds(config) if known is None else known
    return ProfileSpec(
        checks={a.name: value_check(a, known, zones or {}) for a in config.quasi_identifiers},
        sensitive=config.sensitive.name,
        sensitive_values=(
            None
            if config.sensitive.declared_values is None
            else frozenset(config.sensitive.declared_values)
        ),
        missing_tokens=frozenset(t.strip() for t in config.input.missing_values),
        drop_invalid=config.input.on_invalid == "drop",
        items=items_spec(config),
    )


def too_many_values(engine: Engine, summed: Table) -> ConfigError:
    """The error of a profile whose statistics are too many to collect, naming the columns.

    Only a column's distinct values (a nominal, built or sensitive domain) can grow with
    the data; one more aggregation counts them per column (this path runs only when the
    profile overflowed), and the message names the columns holding the most.
    """
    sizes = engine.collect_small(
        engine.aggregate(summed, ["stat", "column"], {"values": ("count", "n")}), MAX_STAT_ROWS
    )
    domains = sizes[sizes["stat"] == "domain"].sort_values("values", ascending=False)
    named = ", ".join(
        f"{r.column!r} ({int(r.values)} values)" for r in domains.head(3).itertuples()
    )
    return ConfigError(
        f"the input's columns hold more distinct values than a profile collects "
        f"({MAX_STAT_ROWS} in all): {named or 'no single column'}; a column with this many "
        "values is an identifier or a continuous attribute, not a nominal or built one "
        "(declare its kind in attributes), and a sensitive attribute this varied has no "
        "class to hide in"
    )


def profile_input(
    engine: Engine, config: JobConfig, raw: RawInput, timer: StageTimer
) -> tuple[Profile, Schema]:
    """Profile the input, fail on the first problem, build the schema, check feasibility.

    Returns:
        The profile and the encoded schema.

    Raises:
        InputError: malformed records (``on_malformed: error``), missing or invalid
            values the config does not drop, an empty input.
        ConfigError: a model no anonymization of this data can satisfy.
    """
    known = known_kinds(config)
    zones = engine.instant_zones(raw.table)
    spec = profile_spec(config, known, zones)
    with timer.stage("profile"):
        partial = engine.map_batches(raw.table, make_profile_fn(spec), PROFILE_COLUMNS)
        summed = engine.aggregate(
            partial,
            ["stat", "column", "value"],
            {"n": ("sum", "n"), "lo": ("min", "lo"), "hi": ("max", "hi")},
        )
        try:
            prof = engine.collect_small(summed, MAX_STAT_ROWS)
        except StatisticsOverflowError:
            raise too_many_values(engine, summed) from None

        def total(stat: str) -> int:
            return int(prof.loc[prof["stat"] == stat, "n"].sum())

        malformed = total("malformed_records")
        if malformed and config.input.on_malformed == "error":
            raise malformed_error(engine, config, malformed)
        raise_input_errors(config, prof, known)
        sens = prof[(prof["stat"] == "domain") & (prof["column"] == config.sensitive.name)]
        profile = Profile(
            rows_in=total("rows"),
            malformed=malformed,
            missing=total("missing_rows"),
            invalid=total("invalid_rows") if spec.drop_invalid else 0,
            sensitive_counts={str(r.value): int(r.n) for r in sens.itertuples()},
            stats=prof,
            items=None if spec.items is None else ItemProfile.of(prof, spec.items.column),
        )
        schema = build_schema(config, prof, known, zones)
        if spec.items is None:
            check_feasible(config, config.models, sensitive_domain(schema, profile), profile.usable)
        elif profile.usable == 0:
            if profile.unknown_items:
                raise InputError(every_set_unknown_message(config, prof, spec.items))
            check_feasible(config, config.models, sensitive_domain(schema, profile), 0)
        timer.note(rows=profile.rows_in, usable=profile.usable)
        log.info(
            "profile: %d rows in; dropped %d malformed, %d with missing values, %d with "
            "invalid values, %d whose every item is unknown",
            profile.rows_in,
            profile.malformed,
            profile.missing,
            profile.invalid,
            profile.unknown_items,
        )
    return profile, schema
