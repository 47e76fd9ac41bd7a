"""Stage ``evaluate``: what an attacker could still do with a table, and what it is worth.

``sparkanon evaluate`` runs it on a raw input (the config's quasi-identifiers and
sensitive attribute) or on a committed release of any family; ``sparkanon run`` runs it
on the verified release before the commit (``report.enabled``), so ``evaluation.json``
and ``report.html`` are committed with ``metrics.json`` in one step. Every figure comes
from engine aggregations; the driver holds class-size frequencies, per-bin counts and
per-attack success counts, never rows:

* **risk** before (the input) and after (the release): the class-size frequency table
  (one aggregation by the quasi-identifiers, a second by class size), from which ARX's
  prosecutor, journalist and marketer risks and population uniqueness estimates
  (:mod:`sparkanon.risk.arx`) and sdcMicro's individual and global risk
  (:mod:`sparkanon.risk.sdcmicro`) follow; SUDA2 (:mod:`sparkanon.risk.suda`) when
  ``suda_max_size`` > 0;
* **attacks** on the release's classes (:mod:`sparkanon.risk.attacks`), and for
  perturbed and synthetic releases singling-out, linkability and inference against the
  held-out control rows (:mod:`sparkanon.risk.anonymeter`);
* **utility** (:mod:`sparkanon.evaluation.utility`): per-attribute distance over the
  original bins, the family's losses from ``metrics.json``, and a classifier trained on
  the release and scored on the held-out rows;
* the family's own view: a perturbed release's reconstructed distributions, a synthetic
  release's covariance beside the original's (as its verification computed them).

**Our readings.** A table's equivalence classes are its rows grouped by the published
quasi-identifier values as they are (a range, a centroid or a taxonomy node is one
value; a null a value of its own). The *input* is every well-formed input row as read,
missing values included (the risk of publishing it as it is). For a perturbed or
synthetic release the classes are mostly single rows, so the class-based risks are
upper bounds that say little; their protection is measured by the attacks against the
control set, and the evaluation says so in its warnings. The sensitive attribute is
compared as numbers or as categories as :func:`sensitive_kind` decides (``sensitive.kind``).

**Measures not computed.** A measure whose limits the data exceeds raises
:class:`~sparkanon.errors.MeasureUnavailableError`; the evaluation leaves it out, lists it
under ``not_computed`` (``{"measure": "attacks.skewness", "reason": "..."}``) and goes
on: the report describes the release, it does not gate it (the verification does).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.config import (
    CategoricalAttribute,
    ContinuousAttribute,
    ItemsetConfig,
    JobConfig,
    OrdinalAttribute,
    ReportConfig,
)
from sparkanon.config.published import strip_uri_secrets
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.errors import ConfigError, InputError, MeasureUnavailableError, UserError
from sparkanon.evaluation.utility import ColumnSpec, utility
from sparkanon.families import named
from sparkanon.io import MALFORMED
from sparkanon.risk.view import TableView
from sparkanon.stages._common import log

EVALUATION = "evaluation.json"
"""The evaluation's figures, beside ``metrics.json``."""
REPORT = "report.html"
"""The self-contained HTML report, beside ``metrics.json``."""
SCHEMA = 1

_FAMILY_LOSSES = (
    "NCP",
    "GCP",
    "DM",
    "CAVG",
    "R_IL",
    "AVG_IL",
    "AVG_Ent",
    "EPP",
    "NCP_published",
    "item_ncp",
    "are",
    "covariance_compatibility",
    "correlation_compatibility",
    "NCP_by_attribute",
)
"""``metrics.json`` keys the report shows as the family's loss metrics, when present."""


@dataclass(frozen=True)
class Settings:
    """How an evaluation runs (``report:`` in a config, or ``sparkanon evaluate`` options).

    Attributes:
        report: the config's ``report`` section (sampling fraction, threshold, SUDA2's
            size, label, holdout, attacks, bins).
        quasi_identifiers: the columns an attacker knows (default: the config's).
    """

    report: ReportConfig = ReportConfig()
    quasi_identifiers: tuple[str, ...] | None = None


def settings_of(config: JobConfig, **options: Any) -> Settings:
    """The config's ``report`` section with ``options`` (not ``None``) over it.

    Raises:
        UserError: an option out of its range, naming it (e.g. a sampling fraction
            outside ``(0, 1]``).
    """
    qis = options.pop("quasi_identifiers", None)
    given = {k: v for k, v in options.items() if v is not None}
    try:
        report = ReportConfig.model_validate(config.report.model_dump() | given)
    except ValueError as exc:
        bad = ", ".join(
            f"--{'-'.join(str(p) for p in e['loc']).replace('_', '-')} {e.get('input')!r}: "
            f"{e['msg']}"
            for e in getattr(exc, "errors", lambda: [])()
        )
        raise ConfigError(f"evaluate: {bad or exc}") from exc
    return Settings(report, tuple(qis) if qis else None)


def view_of(
    config: JobConfig,
    columns: Sequence[str],
    settings: Settings,
    where: str,
    sensitive_kind: str = "categorical",
) -> TableView:
    """The columns of a table (``columns``) the evaluation reads, from the config.

    ``sensitive_kind``: how the sensitive attribute is compared (:func:`sensitive_kind`).

    Raises:
        InputError: a quasi-identifier (or the label) is not a column of the table.
    """
    kinds = {
        a.name: ("numeric" if isinstance(a, ContinuousAttribute) else "categorical")
        for a in config.quasi_identifiers
    }
    qis = settings.quasi_identifiers or tuple(kinds)
    missing = [q for q in qis if q not in columns]
    if missing:
        raise InputError(
            f"{where}: quasi-identifier {', '.join(missing)} is not a column of the table "
            f"(its columns: {', '.join(c for c in columns if not c.startswith('_'))})"
        )
    for key in ("label", "weight"):
        column = getattr(settings.report, key)
        if column is not None and column not in columns:
            raise InputError(f"{where}: report.{key} {column!r} is not a column of the table")
    sens = config.sensitive
    sensitive = None if isinstance(sens, ItemsetConfig) else sens.name
    if sensitive is not None and sensitive not in columns:
        sensitive = None
    levels = {v: lv.name for lv in (getattr(sens, "levels", None) or ()) for v in lv.values}
    order = tuple(getattr(sens, "values", None) or ())
    return TableView(
        quasi_identifiers=tuple(qis),
        kinds={q: kinds.get(q, "categorical") for q in qis},
        sensitive=sensitive,
        sensitive_kind=sensitive_kind if sensitive is not None else None,
        sensitive_levels=levels,
        sensitive_order=order,
        weight=settings.report.weight,
    )


AUTO_NUMERIC_VALUES = 1000
"""``sensitive.kind: auto`` reads a text column of numbers as numeric above this many
distinct values (the most the skewness attack compares as distinct codes)."""
_NUMERIC_TYPES = ("long", "double")
_KIND_COLUMNS = [("distinct", "long"), ("numbers", "long"), ("texts", "long"), ("bad", "string")]


def make_kind_fn(column: str, missing: Collection[str]) -> BatchFn:
    """Per batch of a column's distinct values: how many there are and how many read as numbers.

    One row per batch: ``distinct`` values that are not missing (null, or a trimmed
    text of ``missing``), ``numbers`` of them that read as a finite number, ``texts``
    of them held as text (not as numbers of a decimal or other number type), and
    ``bad``: the smallest text that is neither missing nor a number (null: none).
    """
    tokens = frozenset(t.strip() for t in missing)

    def number(value: Any) -> bool:
        try:
            return math.isfinite(float(str(value).strip()))
        except ValueError:
            return False

    def kind(batch: pd.DataFrame) -> pd.DataFrame:
        values = [v for v in batch[column] if not pd.isna(v) and str(v).strip() not in tokens]
        bad = [str(v).strip() for v in values if not number(v)]
        return pd.DataFrame(
            {
                "distinct": [len(values)],
                "numbers": [len(values) - len(bad)],
                "texts": [sum(isinstance(v, str) for v in values)],
                "bad": [min(bad) if bad else None],
            }
        ).astype({"distinct": "int64", "numbers": "int64", "texts": "int64", "bad": "object"})

    return kind


def sensitive_kind(engine: Engine, table: Table, config: JobConfig, where: str) -> str:
    """How the evaluation compares the sensitive attribute: ``numeric`` or ``categorical``.

    ``sensitive.kind`` decides when it says ``numeric`` or ``categorical``. Under ``auto``
    a column of a number type is numeric; a column of text (CSV) is numeric when every
    value that is not missing (``input.missing_values``) reads as a finite number and it
    holds more than :data:`AUTO_NUMERIC_VALUES` distinct values (codes ``1 .. 5`` stay
    categories); declared ``levels`` or ``values`` keep it categorical. The text test is
    one aggregation of the column's distinct values and one row per batch of them.

    Args:
        engine: the engine.
        table: the input rows (the column's type is the input's).
        config: the job config.
        where: what is evaluated, for the message.

    Raises:
        InputError: ``sensitive.kind: numeric`` and a value that is not a number, naming
            the column and the value.
    """
    sens = config.sensitive
    declared = getattr(sens, "kind", "auto")
    if declared == "categorical" or isinstance(sens, ItemsetConfig):
        return "categorical"
    if declared == "auto" and sens.declared_values is not None:
        return "categorical"
    name = sens.name
    if dict(engine.schema_of(table)).get(name) in _NUMERIC_TYPES:
        return "numeric"
    values = engine.aggregate(table, [name], {"_n": ("count", name)})
    per_batch = engine.map_batches(
        values, make_kind_fn(name, config.input.missing_values), _KIND_COLUMNS
    )
    got = engine.collect_small(
        engine.aggregate(
            per_batch,
            [],
            {
                "distinct": ("sum", "distinct"),
                "numbers": ("sum", "numbers"),
                "texts": ("sum", "texts"),
                "bad": ("min", "bad"),
            },
        ),
        1,
    ).iloc[0]
    distinct, numbers, texts = int(got["distinct"]), int(got["numbers"]), int(got["texts"])
    if numbers < distinct:
        if declared == "numeric":
            raise InputError(
                f"{where}: sensitive.kind: numeric, but the sensitive column {name!r} holds "
                f"{got['bad']!r}, which is not a number; add it to input.missing_values if "
                "it means a missing value, or set sensitive.kind: categorical"
            )
        return "categorical"
    if declared == "numeric" or (distinct and texts == 0):
        return "numeric"  # declared, or a number type read as objects (a decimal)
    return "numeric" if distinct > AUTO_NUMERIC_VALUES else "categorical"


@contextmanager
def _timed(engine: Engine, name: str, description: str) -> Iterator[None]:
    """``engine.stage`` that also logs ``stage=<name> seconds=<s>`` when it ends.

    The line has the form of :class:`~sparkanon.stages._common.StageTimer`'s, so a
    benchmark (``experiments/bench_evaluate.py``) reads the seconds per evaluation step
    from the log.
    """
    start = time.perf_counter()
    with engine.stage(name, description):
        yield
    log.info("stage=%s seconds=%.2f", name, time.perf_counter() - start)


RECORDS = "_records"
"""The column of a pre-aggregated class table holding how many records a row stands for."""


def fine_classes(engine: Engine, table: Table, view: TableView) -> Table:
    """The rows grouped by the quasi-identifiers and the sensitive value, with their count.

    One aggregation over the rows (Spark combines per partition before the shuffle);
    every class-based figure (class sizes, the attacks on the classes) then rolls up
    from this table, which is at most as long as the table and usually much shorter. It
    is persisted: the caller unpersists it.
    """
    sensitive = [view.sensitive] if view.sensitive is not None else []
    keys = list(dict.fromkeys([*view.quasi_identifiers, *sensitive]))
    counted = engine.aggregate(table, keys, {RECORDS: ("count", keys[0])})
    return engine.persist(counted)


def class_sizes(
    engine: Engine, table: Table, keys: Sequence[str], records: str | None = None
) -> dict[int, int]:
    """``{class size: classes of that size}`` of ``table`` grouped by ``keys``.

    Two aggregations; the driver gets one row per distinct class size. ``records``: a
    column of how many records each row stands for (a :func:`fine_classes` table).
    """
    size = ("sum", records) if records is not None else ("count", keys[0])
    classes = engine.aggregate(table, list(keys), {"f": size})
    sizes = engine.aggregate(classes, ["f"], {"classes": ("count", "f")})
    got = engine.collect_small(sizes, 1_000_000)
    return {int(r.f): int(r.classes) for r in got.itertuples()}


_KEY = "_class_key"
_NULL_TEXT = "\x00"


def make_key_fn(keys: Sequence[str], size: str) -> BatchFn:
    """Per batch of classes: one text key of the quasi-identifier values, and the size.

    A null is a value of its own (a text no value has), so classes join the same way on
    both engines (an SQL join never matches nulls, a pandas merge does).
    """
    from sparkanon.risk.attacks import value_text

    def key(batch: pd.DataFrame) -> pd.DataFrame:
        parts = [batch[k].map(lambda v: _NULL_TEXT if pd.isna(v) else value_text(v)) for k in keys]
        joined = parts[0].str.cat(parts[1:], sep="\x1f") if len(parts) > 1 else parts[0]
        return pd.DataFrame({_KEY: joined.astype(str), size: batch[size].astype("int64")})

    return key


def population_pairs(
    engine: Engine, fine: Table, population: Table, view: TableView, where: str
) -> dict[tuple[int, int], int]:
    """``{(f, F): sample classes}``: each input class's size and its population's.

    Two aggregations (the population's classes, the sample's), a join of the two class
    tables on their keys, and one aggregation of the pairs; the driver gets the pairs.
    (Column names differ by more than case: Spark's are case-insensitive.)

    Raises:
        InputError: an input class the population does not hold (the input must be a
            sample of it), or a population class smaller than the input's.
    """
    qis = list(view.quasi_identifiers)
    pop = engine.aggregate(population, qis, {"pop_n": ("count", qis[0])})
    sample = engine.aggregate(fine, qis, {"sample_n": ("sum", RECORDS)})
    keyed_pop = engine.map_batches(
        pop, make_key_fn(qis, "pop_n"), [(_KEY, "string"), ("pop_n", "long")]
    )
    keyed = engine.map_batches(
        sample, make_key_fn(qis, "sample_n"), [(_KEY, "string"), ("sample_n", "long")]
    )
    joined = engine.join(keyed, keyed_pop, [_KEY], how="left")
    pairs = engine.collect_small(
        engine.aggregate(joined, ["sample_n", "pop_n"], {"n": ("count", "sample_n")}), 1_000_000
    )
    missing = pairs[pairs["pop_n"].isna()]
    if len(missing):
        raise InputError(
            f"{where}: report.population: {int(missing['n'].sum())} classes of the input are "
            "not in the population table (the input must be a sample of it, with the same "
            "quasi-identifier values)"
        )
    out = {(int(r.sample_n), int(r.pop_n)): int(r.n) for r in pairs.itertuples()}
    if any(big < f for f, big in out):
        raise InputError(
            f"{where}: report.population: a class of the input has more records than the "
            "same class in the population table (the input must be a sample of it)"
        )
    return out


def risk_of(
    engine: Engine,
    table: Table,
    view: TableView,
    settings: Settings,
    fine: Table,
    population: Mapping[tuple[int, int], int] | None = None,
) -> dict[str, Any]:
    """One table's re-identification risk (the evaluation's ``RISK`` block).

    Args:
        engine: the engine.
        table: the rows (SUDA2 and a weighted sdcMicro risk read them).
        view: the columns.
        settings: the evaluation's settings.
        fine: ``table``'s :func:`fine_classes`.
        population: the journalist's population table as ``{(f, F): classes}``
            (:func:`population_pairs`), or ``None``.
    """
    from sparkanon.risk import arx, sdcmicro

    report = settings.report
    sizes = class_sizes(engine, fine, view.quasi_identifiers, RECORDS)
    rows = sum(f * c for f, c in sizes.items())
    block: dict[str, Any] = {
        "rows": rows,
        "classes": sum(sizes.values()),
        "class_sizes": {str(f): c for f, c in sorted(sizes.items())},
        "arx": arx.summary(sizes, report.threshold, report.sampling_fraction, population),
        "sdcmicro": (
            sdcmicro.sdcmicro_on_engine(
                engine, table, view, report.sampling_fraction, report.threshold
            )
            if view.weight is not None
            else sdcmicro.sdcmicro_risk(
                sdcmicro.pairs_from_class_sizes(sizes, report.sampling_fraction),
                report.threshold,
            )
        ),
        "suda2": None,
    }
    if report.suda_max_size > 0:
        from sparkanon.risk import suda

        block["suda2"] = suda.suda2_on_engine(engine, table, view, report.suda_max_size)
    return block


def utility_columns(
    config: JobConfig, view: TableView, built: Mapping[str, Sequence[Sequence[str]]] | None = None
) -> list[ColumnSpec]:
    """The quasi-identifiers (and the sensitive column) as the utility compares them.

    A categorical column's taxonomy is its hierarchy file or, for a builder, the root-to-
    leaf paths of the hierarchy it generated (``built``: a run's own, or a committed
    output's built again from its input, :func:`built_hierarchies`); without one the
    column is compared as plain categories.
    """
    from sparkanon.attributes.hierarchy import load_arx_hierarchy

    built = built or {}
    by_name = {a.name: a for a in config.attributes}
    out = []
    for name in view.quasi_identifiers:
        attr = by_name.get(name)
        if isinstance(attr, ContinuousAttribute):
            out.append(ColumnSpec(name, numeric=True))
        elif isinstance(attr, CategoricalAttribute):
            if attr.hierarchy is not None:
                paths = tuple(load_arx_hierarchy(attr.hierarchy, name).paths)
            else:
                paths = tuple(tuple(p) for p in built.get(name, ()))
            out.append(ColumnSpec(name, numeric=False, paths=paths))
        elif isinstance(attr, OrdinalAttribute):
            out.append(ColumnSpec(name, numeric=False, order=tuple(attr.order)))
        else:
            out.append(ColumnSpec(name, numeric=False))
    if view.sensitive is not None and view.sensitive not in view.quasi_identifiers:
        numeric = view.sensitive_kind == "numeric"
        order = () if numeric else view.sensitive_order
        out.append(ColumnSpec(view.sensitive, numeric=numeric, order=order))
    return out


def family_losses(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The family's loss metrics from ``metrics.json`` (those present)."""
    return {k: metrics[k] for k in _FAMILY_LOSSES if k in metrics}


@dataclass(frozen=True)
class Subject:
    """What is evaluated: the release (or the input alone) and where it came from.

    Attributes:
        config: the job config.
        release: the table evaluated (the input itself for a raw input).
        original: the input rows the release was made from; ``None`` for a raw input.
        metrics: the release's ``metrics.json`` (empty for a raw input).
        source: a path or table name, for the report.
        built: the hierarchies the config's builders generated, as root-to-leaf paths
            per column (:func:`utility_columns`); empty: none.
    """

    config: JobConfig
    release: Table
    original: Table | None
    metrics: Mapping[str, Any]
    source: str
    built: Mapping[str, Sequence[Sequence[str]]] = field(default_factory=dict)


def evaluate(
    engine: Engine, subject: Subject, settings: Settings, holdout: Table | None = None
) -> dict[str, Any]:
    """The evaluation dict (schema 1) of a release or a raw input."""
    config, metrics = subject.config, subject.metrics
    if not _several_passes(subject, settings):
        return _evaluate(engine, subject, settings, holdout)
    # Several passes read the rows (classes, utility, attacks): each table is read once.
    cached = [engine.persist(t) for t in (subject.release, subject.original) if t is not None]
    subject = Subject(
        config,
        cached[0],
        cached[1] if len(cached) > 1 else None,
        metrics,
        subject.source,
        subject.built,
    )
    try:
        return _evaluate(engine, subject, settings, holdout)
    finally:
        for table in cached:
            engine.unpersist(table)


def _several_passes(subject: Subject, settings: Settings) -> bool:
    """Whether more than one pass reads the rows (then they are persisted, read once).

    A raw input's evaluation reads its rows once (:func:`fine_classes`; everything else
    rolls up from that) unless SUDA2 or a weighted sdcMicro risk reads them again:
    persisting them would only cost the engine's memory.
    """
    report = settings.report
    return subject.original is not None or report.suda_max_size > 0 or report.weight is not None


def _evaluate(
    engine: Engine, subject: Subject, settings: Settings, holdout: Table | None
) -> dict[str, Any]:
    config, metrics = subject.config, subject.metrics
    report = settings.report
    columns = [c for c, _ in engine.schema_of(subject.release)]
    view = view_of(config, columns, settings, subject.source)
    if view.sensitive is not None:
        rows = subject.original if subject.original is not None else subject.release
        kind = sensitive_kind(engine, rows, config, subject.source)
        view = replace(view, sensitive_kind=kind)
    family = metrics.get("family")
    row_level = bool(metrics.get("row_level", _row_level(family)))
    warnings: list[str] = []
    not_computed: list[dict[str, str]] = []
    with _timed(engine, "evaluate_risk", "evaluate: re-identification risk"):
        fine = fine_classes(engine, subject.release, view)
        before = None
        if subject.original is not None:
            fine_before = fine_classes(engine, subject.original, view)
            pairs = _population(engine, subject, view, settings, fine_before)
            before = risk_of(engine, subject.original, view, settings, fine_before, pairs)
            engine.unpersist(fine_before)
            after = risk_of(engine, subject.release, view, settings, fine)
        else:  # a raw input: the population table is about this very table
            pairs = _population(engine, subject, view, settings, fine)
            after = risk_of(engine, subject.release, view, settings, fine, pairs)
    if row_level:
        warnings.append(
            "the class-based risks of a perturbed or synthetic release count identical "
            "published rows, which are rare, so they are upper bounds; the protection of "
            "such a release is measured by the singling-out, linkability and inference "
            "attacks against the control set"
        )
    with _timed(engine, "evaluate_attacks", "evaluate: attacks on the classes"):
        try:
            attacks = _attacks(engine, fine, view)
        except MeasureUnavailableError as exc:
            _left_out(not_computed, "attacks", exc)
            # The attacks that need no sensitive value still run.
            attacks = _attacks(engine, fine, replace(view, sensitive=None, sensitive_kind=None))
            for part in exc.parts:
                attacks.pop(part, None)
    engine.unpersist(fine)
    anonymeter = None
    if row_level and subject.original is not None:
        if holdout is None:
            warnings.append(
                "no report.holdout: the singling-out, linkability and inference attacks "
                "need held-out original rows as their control set, and did not run"
            )
        else:
            with _timed(engine, "evaluate_anonymeter", "evaluate: attacks against a control set"):
                try:
                    anonymeter = _anonymeter(engine, subject, view, holdout, settings)
                except MeasureUnavailableError as exc:
                    _left_out(not_computed, "anonymeter", exc)
    utility_block: dict[str, Any] = {
        "distance": {},
        "family_losses": family_losses(metrics),
        "classification": None,
    }
    if subject.original is not None:
        with _timed(engine, "evaluate_utility", "evaluate: utility"):
            columns_compared = utility_columns(config, view, subject.built)
            left: tuple[str, ...] = ()
            compare = partial(
                utility,
                engine,
                subject.original,
                subject.release,
                columns_compared,
                bins=report.bins,
            )
            try:
                measured, notes = compare(label=report.label, holdout=holdout)
            except MeasureUnavailableError as exc:
                _left_out(not_computed, "utility", exc)
                # The distances do not need the classifier's label.
                measured, notes = compare()
                left = exc.parts
        utility_block |= measured
        for part in left:
            utility_block.pop(part, None)
        warnings += notes
    return {
        "schema": SCHEMA,
        "table": {
            "kind": "input" if subject.original is None else "release",
            "family": family,
            "row_level": row_level,
            "algorithm": (metrics.get("algorithm") or {}).get("name"),
            "model": metrics.get("model"),
            "rows": after["rows"],
            "source": subject.source,
            "verified": metrics.get("verified"),
        },
        "view": {
            "quasi_identifiers": list(view.quasi_identifiers),
            "sensitive": view.sensitive,
            "sensitive_kind": view.sensitive_kind,
            "sampling_fraction": report.sampling_fraction,
            "threshold": report.threshold,
            "level_names": sorted(set(view.sensitive_levels.values())),
        },
        "risk": {"before": before, "after": after},
        "attacks": attacks,
        "anonymeter": anonymeter,
        "utility": utility_block,
        "family": _family_view(engine, subject, family, row_level),
        "attacks_run": list(metrics.get("release_checks") or []),
        "randomness": dict(metrics.get("randomness") or {}),
        "warnings": warnings,
        "not_computed": not_computed,
    }


def _row_level(family: str | None) -> bool:
    """Whether the registered family called ``family`` publishes row-level records.

    For a release whose ``metrics.json`` has no ``row_level`` key.
    """
    found = named(family)
    return found is not None and found.row_level


def _left_out(not_computed: list[dict[str, str]], block: str, exc: MeasureUnavailableError) -> None:
    """Record the measures ``exc`` leaves out of ``block`` (``attacks.skewness``...), and warn."""
    for measure in [f"{block}.{part}" for part in exc.parts] or [block]:
        not_computed.append({"measure": measure, "reason": exc.reason})
        log.warning("evaluate: %s not computed: %s", measure, exc.reason)


def _population(
    engine: Engine, subject: Subject, view: TableView, settings: Settings, fine: Table
) -> dict[tuple[int, int], int] | None:
    """The population pairs of the input's classes, when ``report.population`` is set."""
    path = settings.report.population
    if path is None:
        return None
    table = read_like_input(engine, subject.config, path, "report.population")
    assert table is not None
    return population_pairs(engine, fine, table, view, subject.source)


def _attacks(engine: Engine, fine: Table, view: TableView) -> dict:
    """The attacks on the classes, from the :func:`fine_classes` table.

    The attacks' own defaults: the attacker knows every quasi-identifier, or all but one.
    """
    from sparkanon.risk import attacks

    return attacks.attacks_on_engine(engine, fine, view, count_column=RECORDS, grouped=True)


def _anonymeter(
    engine: Engine, subject: Subject, view: TableView, holdout: Table, settings: Settings
) -> dict:
    from sparkanon.risk import anonymeter

    assert subject.original is not None
    return anonymeter.anonymeter_on_engine(
        engine,
        subject.original,
        subject.release,
        holdout,
        view,
        n_attacks=settings.report.attacks,
        seed=subject.config.seed,
    )


def _family_view(
    engine: Engine, subject: Subject, family: str | None, row_level: bool
) -> dict[str, Any]:
    """The reconstructions of a release that declares its noise; a row-level release's covariances.

    ``metrics.json`` keys ``noise`` (the noise a perturbed release was drawn with) and
    ``covariance`` (both matrices, computed by the family's verification).
    """
    out: dict[str, Any] = {"name": family, "reconstruction": None, "covariance": None}
    noise = subject.metrics.get("noise")
    if noise:
        from sparkanon.evaluation.reconstruct import reconstruct_table

        where = f"{subject.source}/data"
        with _timed(engine, "evaluate_reconstruct", "evaluate: reconstruct the distributions"):
            out["reconstruction"] = reconstruct_table(engine, subject.release, noise, where)
    declared = subject.metrics.get("covariance")
    if row_level and declared and len(declared.get("columns") or ()) >= 2:
        out["covariance"] = dict(declared)
    return out


# --- reading what is evaluated ------------------------------------------------------------


def read_input_rows(engine: Engine, config: JobConfig, settings: Settings) -> Table:
    """The config's input as the job reads it, malformed CSV records left out.

    The quasi-identifiers and the sensitive column, and the label and weight columns of
    ``settings`` when the job keeps them (:attr:`sparkanon.stages.read.RawInput.original`).
    """
    from sparkanon.stages._common import StageTimer
    from sparkanon.stages.read import read_input

    reading = config.model_copy(update={"report": settings.report})
    raw = read_input(engine, reading, StageTimer(engine)).original
    if MALFORMED in dict(engine.schema_of(raw)):
        raw = engine.where(raw, MALFORMED, "==", 0)
    return raw


def read_holdout(engine: Engine, config: JobConfig, path: str | None) -> Table | None:
    """Held-out original rows, read with the input's format and options (``None``: none)."""
    return read_like_input(engine, config, path, "report.holdout")


def read_like_input(engine: Engine, config: JobConfig, path: str | None, key: str) -> Table | None:
    """Rows at ``path``, read with the input's format and options (``None``: none).

    Malformed CSV records are left out
    (:func:`sparkanon.stages.read.read_table` reads them).

    Raises:
        InputError: no such file or directory (naming ``key``).
    """
    from sparkanon.stages.read import read_table

    if path is None:
        return None
    table, _ = read_table(engine, config.input, path, key)
    if MALFORMED in dict(engine.schema_of(table)):
        table = engine.where(table, MALFORMED, "==", 0)
    return table


@dataclass(frozen=True)
class Target:
    """What ``evaluate`` was pointed at, loaded and checked before any engine starts.

    Attributes:
        config: the job config (a config target's, or the output's ``config.yaml``).
        settings: the evaluation's settings (the config's ``report`` and the options).
        output: the committed output directory; ``None`` for a config's raw input.
        metrics: the output's ``metrics.json`` (empty for a raw input).
        table: the output's class table folder (``data`` or ``rt``).
    """

    config: JobConfig
    settings: Settings
    output: str | None = None
    metrics: Mapping[str, Any] = field(default_factory=dict)
    table: str = "data"


def check_evaluation_writes(engine: Engine, given: str, target: Target, out: str) -> None:
    """Refuse ``evaluate --out`` files on, around or inside what the evaluation reads.

    The reads: the config (the file given, or the output's ``config.yaml``), the
    config's own (the input, hierarchy files, holdout, population...), the release's
    table and the holdout and population options.

    Raises:
        ConfigError: naming ``--out``, the read's key or flag and both paths.
    """
    from sparkanon.safety import Location, check_reads_and_writes, job_reads

    reads = job_reads(target.config)
    if target.output is None:
        reads.append(Location("CONFIG", given, "the config file", local=True))
    else:
        reads.append(Location("OUTPUT_DIR", f"{target.output}/config.yaml", "the release"))
        reads.append(Location("OUTPUT_DIR", f"{target.output}/{target.table}", "the release"))
    report = target.settings.report
    for key, path in (("--holdout", report.holdout), ("--population", report.population)):
        if path:
            reads.append(Location(key, path, f"the {key[2:]}"))
    writes = [Location("--out", f"{out}/{name}") for name in (EVALUATION, REPORT)]
    check_reads_and_writes(reads, writes, engine.canonical_path)


def evaluate_target(engine: Engine, target: Target) -> dict[str, Any]:
    """Evaluate a committed output (beside its input) or a config's raw input."""
    config, settings = target.config, target.settings
    holdout = read_holdout(engine, config, settings.report.holdout)
    if target.output is None:
        rows = read_input_rows(engine, config, settings)
        path = config.input.path
        source = config.input.source if path is None else repr(strip_uri_secrets(path))
        subject = Subject(config, rows, None, {}, source)
        return evaluate(engine, subject, settings, holdout)
    release = engine.read_table(f"{target.output}/{target.table}", config.output.format)
    original = read_input_rows(engine, config, settings)
    built = built_hierarchies(engine, config)
    subject = Subject(config, release, original, target.metrics, target.output, built)
    return evaluate(engine, subject, settings, holdout)


def built_hierarchies(engine: Engine, config: JobConfig) -> dict[str, list[list[str]]]:
    """The hierarchies a committed output's builders generated, built again from its input.

    A release publishes only the nodes it uses (``<output>/hierarchies/<column>.csv``,
    :func:`~sparkanon.attributes.builders.published_paths`), not the input values under
    them, so the evaluation, which reads the input anyway, profiles it as the run did
    and gets the same hierarchies. An input that no longer profiles (changed, unreadable)
    leaves the builders' columns compared as plain categories.
    """
    from sparkanon.stages._common import StageTimer
    from sparkanon.stages.profile import built_taxonomies, profile_input
    from sparkanon.stages.read import read_input

    if not any(getattr(a, "builder", None) is not None for a in config.quasi_identifiers):
        return {}
    timer = StageTimer(engine)
    try:
        raw = read_input(engine, config, timer)
        _, schema = profile_input(engine, config, raw, timer)
    except UserError as exc:
        log.warning("evaluate: the builders' hierarchies could not be built again (%s)", exc)
        return {}
    return {
        column: [list(p) for p in taxonomy.paths]
        for column, taxonomy in built_taxonomies(config, schema).items()
    }


def not_computed_warning(evaluation: Mapping[str, Any]) -> str | None:
    """The ``metrics.json`` warning of an evaluation that left measures out (``None``: none)."""
    left = [e["measure"] for e in evaluation.get("not_computed") or ()]
    if not left:
        return None
    return (
        f"the evaluation left out {len(left)} measure(s) it could not compute on this data "
        f"({', '.join(left)}); {EVALUATION} and {REPORT} say why under not_computed"
    )


def evaluate_run(
    engine: Engine,
    config: JobConfig,
    original: Table,
    tables: Mapping[str, Table],
    metrics: Mapping[str, Any],
    staging: str,
    built: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> dict[str, Any]:
    """Evaluate a run's verified release and write the report into its staging directory.

    The runner calls it before the commit (``report.enabled``), so ``evaluation.json``
    and ``report.html`` are published with the data in one step.

    Args:
        engine: the engine.
        config: the job config.
        original: the input rows as read (with the row id; malformed records flagged).
        tables: the staged published tables by name.
        metrics: the release's metrics (what ``metrics.json`` will hold).
        staging: the staging directory.
        built: the hierarchies the run's builders generated (root-to-leaf paths per
            column), from its schema.
    """
    settings = settings_of(config)
    qis = [a.name for a in config.quasi_identifiers]
    release = next(
        (t for t in tables.values() if set(qis) <= {c for c, _ in engine.schema_of(t)}),
        next(iter(tables.values())),
    )
    if MALFORMED in dict(engine.schema_of(original)):
        original = engine.where(original, MALFORMED, "==", 0)
    holdout = read_holdout(engine, config, settings.report.holdout)
    source = strip_uri_secrets(config.output.path or config.output.table or "")
    evaluation = evaluate(
        engine, Subject(config, release, original, metrics, source, built or {}), settings, holdout
    )
    write_evaluation(engine, evaluation, staging)
    return evaluation


def default_out(target: str) -> str:
    """Where ``evaluate`` writes by default: the output directory, or ``evaluation/NAME``."""
    if Path(target).is_file():
        return str(Path("evaluation") / Path(target).stem)
    return target


def write_evaluation(
    engine: Engine,
    evaluation: Mapping[str, Any],
    directory: str,
    permissions: str | None = None,
) -> list[str]:
    """``evaluation.json`` and ``report.html`` in ``directory``; returns their paths.

    Args:
        engine: the engine (its filesystem).
        evaluation: what :func:`evaluate` returned.
        directory: where to write.
        permissions: ``output.permissions`` (``sparkanon evaluate``): a folder made here
            gets its directory mode and the output marker, the files its file mode.
            ``None``: the run's staging directory, whose modes the commit sets.
    """
    from sparkanon.report import render_html
    from sparkanon.safety import MARKER, marker_text, modes

    text = json.dumps(_jsonable(evaluation), indent=2, allow_nan=False)
    html = render_html(json.loads(text))
    paths = [f"{directory}/{EVALUATION}", f"{directory}/{REPORT}"]
    made = permissions is not None and not engine.path_exists(directory)
    if made:
        engine.make_dir(directory, modes(permissions)[0])
        engine.write_text(f"{directory}/{MARKER}", marker_text("evaluation"))
    engine.write_text(paths[0], text)
    engine.write_text(paths[1], html)
    if permissions is not None:
        for path in paths + ([f"{directory}/{MARKER}"] if made else []):
            engine.set_permissions(path, *modes(permissions))
    log.info("evaluate: wrote %s and %s", EVALUATION, REPORT)
    return paths


def _jsonable(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers and non-finite floats as ``None``."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if np.isfinite(f) else None
    return value


__all__ = [
    "EVALUATION",
    "REPORT",
    "Settings",
    "Subject",
    "evaluate",
    "not_computed_warning",
    "evaluate_target",
    "settings_of",
    "write_evaluation",
]
