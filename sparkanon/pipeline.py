"""The job, written once against the engine interface.

Stages: check output -> read -> profile -> encode -> block -> cluster ->
reconcile -> summarise -> publish (to a temporary location) -> verify ->
metrics -> commit. Each stage is timed and logged with counts only (never
quasi-identifier or sensitive values). The driver holds per-column and
per-block statistics, never rows.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import yaml

from sparkanon import _steps
from sparkanon._blocking import MAX_DEPTH, BlockTree
from sparkanon.algorithms import BlockContext
from sparkanon.attributes.hierarchy import load_arx_hierarchy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    DiscreteKind,
    Kind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.schema import BLOCK, CLASS, LEVEL, RID, SENS, Schema, SensitiveLevels
from sparkanon.attributes.semantic import SemanticKind
from sparkanon.config import JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import (
    ConfigError,
    InputError,
    InternalError,
    OutputExistsError,
    PrivacyViolationError,
)
from sparkanon.io import MALFORMED, path_conflict
from sparkanon.metrics.entropy import information_loss_rate, normalized_average_class_size
from sparkanon.metrics.ncp import global_certainty_penalty
from sparkanon.models.base import HPKAnonymity, model_from_config

log = logging.getLogger("sparkanon")

MAX_NOMINAL_VALUES = 10_000
"""An undeclared nominal column with more distinct values is rejected."""
MAX_STAT_ROWS = 1_000_000
"""Largest statistics table the driver accepts (per-block or per-value rows)."""


@dataclass
class JobResult:
    """What a job returns.

    Attributes:
        published: the published table (read back from the output when committed).
        metrics: the metrics written to ``metrics.json``.
    """

    published: Table
    metrics: dict[str, Any]


@dataclass
class _Timer:
    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, engine: Engine, name: str) -> Iterator[None]:
        start = time.perf_counter()
        log.info("stage %s: start", name)
        with engine.stage(name):
            yield
        elapsed = time.perf_counter() - start
        self.seconds[name] = round(self.seconds.get(name, 0.0) + elapsed, 3)
        log.info("stage %s: %.2fs", name, elapsed)


def build_model(config: JobConfig) -> HPKAnonymity:
    """The privacy model of the config."""
    m = config.model
    return model_from_config(m.name, m.k, m.p, m.h)


def _sensitive_levels(config: JobConfig) -> SensitiveLevels:
    values, level_of = [], []
    for i, level in enumerate(config.sensitive.levels):
        values += list(level.values)
        level_of += [i] * len(level.values)
    return SensitiveLevels(
        name=config.sensitive.name,
        values=tuple(values),
        level_of=np.asarray(level_of, dtype=np.int64),
        level_names=tuple(lv.name for lv in config.sensitive.levels),
        weights=np.asarray([lv.weight for lv in config.sensitive.levels], dtype=float),
    )


def _known_kinds(config: JobConfig) -> dict[str, Kind]:
    """Kinds the config fixes, built before reading data.

    Those are the discrete kinds with a declared domain and the semantic kinds
    (their code hierarchy tree is fixed by the code length).
    """
    kinds: dict[str, Kind] = {}
    for attr in config.quasi_identifiers:
        if attr.kind == "ordinal":
            assert attr.order is not None
            kinds[attr.name] = ordinal_kind(
                attr.name,
                attr.weight,
                attr.order,
                rank_weights=attr.rank_weights,
                centroid=attr.centroid or "mean_frequency",
            )
        elif attr.kind == "categorical":
            assert attr.hierarchy is not None
            kinds[attr.name] = categorical_kind(
                attr.name, attr.weight, load_arx_hierarchy(attr.hierarchy, attr.name)
            )
        elif attr.kind == "nominal" and attr.values is not None:
            kinds[attr.name] = nominal_kind(
                attr.name, attr.weight, attr.values, attr.encoding or "indicator"
            )
        elif attr.kind == "semantic":
            assert attr.length is not None
            kinds[attr.name] = SemanticKind(
                attr.name,
                attr.weight,
                length=attr.length,
                beta=attr.beta,
                root_weight=attr.root_weight,
            )
    return kinds


LARGE_CLASS_FACTOR = 20
"""A run warns when its largest class holds more than this many times ``k`` rows."""
RESOLVED_CONFIG = "config.yaml"
"""The config the job ran (overrides applied), written beside ``metrics.json``."""


def class_size_warnings(largest: int | None, k: int) -> list[str]:
    """Warnings about classes far larger than the model needs (any algorithm).

    Args:
        largest: rows of the largest class.
        k: the model's minimum class size.

    Returns:
        One message when the largest class exceeds ``LARGE_CLASS_FACTOR * k`` rows
        (information is lost for no privacy gain), else none.
    """
    if largest is None or largest <= LARGE_CLASS_FACTOR * k:
        return []
    return [
        f"largest class has {int(largest)} rows, {largest / k:.0f} times k={k}: the algorithm "
        "merged far more rows than the model needs (see class_size; a smaller "
        "partitioning.max_block_rows or another algorithm may lose less information)"
    ]


def resolved_config_yaml(config: JobConfig) -> str:
    """The job's config, overrides applied, as YAML (what ``scripts/verify_output.py`` reads)."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)


def _check_output_path(engine: Engine, config: JobConfig) -> None:
    """Refuse an output on, around or inside the input, before any work."""
    inp = engine.canonical_path(config.input.path)
    out = engine.canonical_path(config.output.path)
    relation = path_conflict(inp, out)
    if relation is not None:
        raise ConfigError(
            f"output.path: {config.output.path!r} ({out}) {relation} "
            f"{config.input.path!r} ({inp}); writing there would destroy or pollute the input. "
            "Choose an output path outside the input"
        )


def _malformed_error(engine: Engine, config: JobConfig, count: int) -> InputError:
    where = engine.first_malformed(config.input)
    first = (
        f"file {where[0]!r} line {where[1]} has {where[2]} fields where the header has {where[3]}"
        if where is not None
        else "the first could not be located"
    )
    return InputError(
        f"input {config.input.path!r}: {count} malformed CSV record(s) (a field count that "
        f"differs from the header's); {first}. Fix the file, or set input.on_malformed: drop "
        "to suppress such records"
    )


def _check_columns(config: JobConfig, present: list[str]) -> None:
    wanted = [a.name for a in config.attributes] + [config.sensitive.name]
    missing = [c for c in wanted if c not in present]
    if missing:
        raise InputError(
            f"column(s) {missing} named in the config are not in the input; the input has {present}"
        )


def _profile_errors(config: JobConfig, prof: pd.DataFrame, known: dict[str, Kind]) -> None:
    """Raise the first input problem the profile shows, naming column and value."""

    def rows(stat: str) -> pd.DataFrame:
        return prof[prof["stat"] == stat]

    total = int(rows("rows")["n"].sum())
    if total == 0:
        raise InputError(f"input {config.input.path!r} is empty (0 rows)")
    missing = rows("missing")
    missing = missing[missing["n"] > 0]
    if config.input.on_missing == "error" and len(missing):
        detail = ", ".join(f"{r.column!r}: {int(r.n)} rows" for r in missing.itertuples())
        raise InputError(
            f"missing values ({list(config.input.missing_values)}) in {detail}; "
            "set input.on_missing: drop to suppress those rows"
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
    unknown = rows("unknown")
    if dropping:
        unknown = unknown[unknown["column"] == config.sensitive.name]
    if len(unknown):
        r = unknown.sort_values(["column", "value"]).iloc[0]
        if r.column == config.sensitive.name:
            raise InputError(
                f"value {r.value!r} of the sensitive column {r.column!r} belongs to no level; "
                "add it to one of sensitive.levels"
            )
        attr = next(a for a in config.attributes if a.name == r.column)
        where = {
            "categorical": f"its hierarchy {attr.hierarchy!r}",
            "ordinal": "its declared order (attributes[].order)",
            "nominal": "its declared values (attributes[].values)",
        }[attr.kind]
        raise InputError(f"value {r.value!r} of column {r.column!r} is absent from {where}" + hint)


def build_schema(config: JobConfig, prof: pd.DataFrame, known: dict[str, Kind]) -> Schema:
    """Kinds of every quasi-identifier from the config and the input profile."""
    kinds: list[Kind] = []
    for attr in config.quasi_identifiers:
        if attr.name in known:
            kinds.append(known[attr.name])
        elif attr.kind == "continuous":
            r = prof[(prof["stat"] == "range") & (prof["column"] == attr.name)]
            lo = float(r["lo"].min()) if len(r) else 0.0
            hi = float(r["hi"].max()) if len(r) else 0.0
            kinds.append(ContinuousKind(attr.name, attr.weight, lo, hi, config.output.decimals))
        else:
            d = prof[(prof["stat"] == "domain") & (prof["column"] == attr.name)]
            values = tuple(sorted(str(v) for v in d["value"].unique()))
            if len(values) > MAX_NOMINAL_VALUES:
                raise ConfigError(
                    f"attributes ({attr.name}): nominal column has {len(values)} distinct values "
                    f"(more than {MAX_NOMINAL_VALUES}); declare it continuous, categorical with "
                    "a hierarchy, or identifier"
                )
            kinds.append(nominal_kind(attr.name, attr.weight, values, attr.encoding or "indicator"))
    return Schema(kinds=tuple(kinds), sensitive=_sensitive_levels(config))


def _check_feasible(config: JobConfig, schema: Schema, prof: pd.DataFrame, rows: int) -> None:
    h, p, k = config.effective_hpk()
    if rows == 0:
        raise InputError(
            f"input {config.input.path!r}: every row holds a missing value "
            f"({list(config.input.missing_values)}) or, with input.on_invalid: drop, an "
            "invalid value in a quasi-identifier or the sensitive column: no rows left after "
            "dropping them; check input.missing_values and the data"
        )
    if k > rows:
        raise ConfigError(f"model.k: k={k} but the input has only {rows} usable rows; lower k")
    dom = prof[(prof["stat"] == "domain") & (prof["column"] == config.sensitive.name)]
    present = {str(v) for v in dom["value"]}
    if p > len(present):
        raise ConfigError(
            f"model.p: p={p} but column {config.sensitive.name!r} holds only {len(present)} "
            "distinct values; lower p"
        )
    lookup = dict(zip(schema.sensitive.values, schema.sensitive.level_of, strict=True))
    levels = {int(lookup[v]) for v in present}
    if h > len(levels):
        raise ConfigError(
            f"model.h: H={h} but the data holds values of only {len(levels)} sensitivity levels; "
            "lower H"
        )


BLOCK_STATS = {
    "n": ("count", SENS),
    "n_values": ("nunique", SENS),
    "n_levels": ("nunique", LEVEL),
}
"""Per-block statistics of a blocking round."""


def build_blocks(
    engine: Engine, encoded: Table, schema: Schema, config: JobConfig, model: HPKAnonymity
) -> tuple[BlockTree, set[int]]:
    """Plan the Mondrian-style block tree from per-block statistics (:mod:`sparkanon._blocking`).

    Each round costs two passes over the encoded table: per-block statistics
    (rows, distinct values, distinct levels), then per-block histograms of
    every attribute for the blocks larger than ``max_block_rows``, merged and
    turned into one cut per block on the cluster. The driver sees one row per
    block.

    Returns:
        The tree and the set of leaves that cannot host a class (kept only
        with ``infeasible_blocks: reconcile``).
    """
    tree = BlockTree()
    final: set[int] = set()
    infeasible: set[int] = set()
    tried: dict[int, set[int]] = {}
    fresh: dict[int, int] = {}
    max_rows = config.partitioning.max_block_rows
    stat_cols = [(BLOCK, "long"), (SENS, "long"), (LEVEL, "long")]
    for _ in range(MAX_DEPTH * (len(schema.kinds) + 1)):
        routed = engine.map_batches(encoded, _steps.make_block_stats_fn(schema, tree), stat_cols)
        stats = engine.collect_small(engine.aggregate(routed, [BLOCK], BLOCK_STATS), MAX_STAT_ROWS)
        rows_of = {int(r[BLOCK]): int(r["n"]) for _, r in stats.iterrows()}
        ok_of = {
            int(r[BLOCK]): bool(model.satisfied(r["n"], r["n_values"], r["n_levels"]))
            for _, r in stats.iterrows()
        }
        for parent, attribute in fresh.items():
            left, right = ok_of.get(2 * parent, False), ok_of.get(2 * parent + 1, False)
            if left and right:
                continue
            if config.partitioning.infeasible_blocks == "merge" or not (left or right):
                # Merge the infeasible side back with its sibling; the parent
                # will try another attribute.
                tree.undo(parent)
                tried.setdefault(parent, set()).add(attribute)
                rows_of[parent] = rows_of.get(2 * parent, 0) + rows_of.get(2 * parent + 1, 0)
            else:
                for child, ok in ((2 * parent, left), (2 * parent + 1, right)):
                    if not ok:
                        final.add(child)
                        infeasible.add(child)
        fresh = {}
        oversized = frozenset(
            b
            for b, n in rows_of.items()
            if n > max_rows and b not in final and tree.is_leaf(b) and b < (1 << (MAX_DEPTH - 1))
        )
        if not oversized:
            break
        partial = engine.map_batches(
            encoded, _steps.make_histogram_fn(schema, tree, oversized), _steps.HISTOGRAM_COLUMNS
        )
        merged = engine.aggregate(partial, [BLOCK, "_attr", "_bin"], {"n": ("sum", "n")})
        cuts = engine.collect_small(
            engine.map_groups(
                merged,
                BLOCK,
                _steps.make_cut_fn(schema, {b: tried[b] for b in oversized if b in tried}, model.k),
                [(BLOCK, "long"), ("attr", "long"), ("cut", "long"), ("ok", "long")],
            ),
            MAX_STAT_ROWS,
        )
        for _, r in cuts.iterrows():
            b = int(r[BLOCK])
            if r["ok"]:
                tree.split(b, int(r["attr"]), int(r["cut"]))
                fresh[b] = int(r["attr"])
            else:
                final.add(b)
    return tree, infeasible


def _round_stats(
    engine: Engine, table: Table, keys: list[str], aggs: dict[str, tuple[str, str]]
) -> dict[str, Any]:
    row = engine.collect_small(engine.aggregate(table, keys, aggs), 1).iloc[0]
    return {
        k: (None if pd.isna(v) else v.item() if hasattr(v, "item") else v) for k, v in row.items()
    }


def run_job(
    engine: Engine, config: JobConfig, table: Table | None = None, commit: bool = True
) -> JobResult:
    """Run the whole anonymization job.

    Args:
        engine: the engine to run on.
        config: the validated job config.
        table: the input table; read from ``config.input`` when ``None``.
        commit: write the output and ``metrics.json`` (after verification).

    Returns:
        The published table and the metrics.

    Raises:
        UserError: bad config or input (exit code 2); nothing is written.
        PrivacyViolationError: verification failed (exit code 3); nothing is written.
    """
    timer = _Timer()
    out_path = config.output.path.rstrip("/")
    if commit and table is None:
        _check_output_path(engine, config)
    if commit and config.output.mode == "error" and engine.path_exists(out_path):
        raise OutputExistsError(
            f"output.path: {out_path!r} already exists; remove it or set output.mode: overwrite"
        )
    model = build_model(config)
    known = _known_kinds(config)
    passthrough = [config.sensitive.name] + list(config.kept_columns)

    with timer.stage(engine, "read"):
        raw = engine.read(config.input) if table is None else table
        raw_schema = engine.schema_of(raw)
        if not raw_schema:
            raise InputError(f"input {config.input.path!r} is empty (no columns, no rows)")
        _check_columns(config, [n for n, _ in raw_schema])
        needed = [a.name for a in config.quasi_identifiers] + passthrough
        if MALFORMED in dict(raw_schema):
            needed.append(MALFORMED)
        raw = engine.with_row_id(engine.select(raw, needed), RID)
        types = dict(raw_schema)
        pass_types = [(c, types[c]) for c in passthrough]

    with timer.stage(engine, "profile"):
        spec = _steps.ProfileSpec(
            qi=tuple((a.name, a.kind) for a in config.quasi_identifiers),
            known={n: frozenset(k.labels) for n, k in known.items() if isinstance(k, DiscreteKind)},
            code_lengths={
                a.name: a.length for a in config.quasi_identifiers if a.length is not None
            },
            sensitive=config.sensitive.name,
            sensitive_values=frozenset(v for lv in config.sensitive.levels for v in lv.values),
            missing_tokens=frozenset(t.strip() for t in config.input.missing_values),
            drop_invalid=config.input.on_invalid == "drop",
        )
        partial = engine.map_batches(raw, _steps.make_profile_fn(spec), _steps.PROFILE_COLUMNS)
        prof = engine.collect_small(
            engine.aggregate(
                partial,
                ["stat", "column", "value"],
                {"n": ("sum", "n"), "lo": ("min", "lo"), "hi": ("max", "hi")},
            ),
            MAX_STAT_ROWS,
        )
        malformed = int(prof.loc[prof["stat"] == "malformed_records", "n"].sum())
        if malformed and config.input.on_malformed == "error":
            raise _malformed_error(engine, config, malformed)
        _profile_errors(config, prof, known)
        rows_in = int(prof.loc[prof["stat"] == "rows", "n"].sum())
        dropped = int(prof.loc[prof["stat"] == "missing_rows", "n"].sum())
        invalid = (
            int(prof.loc[prof["stat"] == "invalid_rows", "n"].sum()) if spec.drop_invalid else 0
        )
        usable = rows_in - malformed - dropped - invalid
        schema = build_schema(config, prof, known)
        _check_feasible(config, schema, prof, usable)
        log.info(
            "profile: %d rows in; dropped %d malformed, %d with missing values, %d with "
            "invalid values",
            rows_in,
            malformed,
            dropped,
            invalid,
        )

    enc_cols = _steps.encoded_columns(schema) + pass_types
    with timer.stage(engine, "encode"):
        encoded = engine.persist(
            engine.map_batches(
                raw,
                _steps.make_encode_fn(
                    schema, passthrough, spec.missing_tokens, spec if spec.drop_invalid else None
                ),
                enc_cols,
            )
        )

    with timer.stage(engine, "block"):
        tree, infeasible = build_blocks(engine, encoded, schema, config, model)
        log.info("block: %d cuts, %d infeasible blocks", len(tree.splits), len(infeasible))

    ctx = BlockContext(
        schema=schema,
        model=model,
        psi_weights=config.algorithm.psi_weights,
        entropy_base=config.algorithm.entropy_base,
        max_iterations=config.algorithm.max_iterations,
        apf_rule=config.algorithm.apf_rule,
    )
    col_names = [n for n, _ in enc_cols]
    blocked_cols = enc_cols + [(BLOCK, "long")]
    clustered_cols = blocked_cols + [(CLASS, "long")]
    with timer.stage(engine, "cluster"):
        blocked = engine.map_batches(
            encoded, _steps.make_assign_fn(schema, tree, col_names), blocked_cols
        )
        clustered = engine.persist(
            engine.map_groups(
                blocked,
                BLOCK,
                _steps.make_cluster_fn(ctx, config.algorithm.name, config.seed),
                clustered_cols,
            )
        )
        block_stats = _round_stats(
            engine,
            engine.aggregate(clustered, [BLOCK], {"n": ("count", BLOCK)}),
            [],
            {"blocks": ("count", "n"), "min": ("min", "n"), "max": ("max", "n")},
        )
        unplaced = engine.count(engine.where(clustered, CLASS, "<", 0))
        log.info(
            "cluster: %d blocks, %d rows left for reconciliation", block_stats["blocks"], unplaced
        )

    placed = engine.where(clustered, CLASS, ">=", 0)
    reconciled_rows = suppressed_unplaced = 0
    with timer.stage(engine, "reconcile"):
        if unplaced:
            placed, suppressed_unplaced = _reconcile(engine, clustered, placed, schema, ctx, config)
            reconciled_rows = unplaced - suppressed_unplaced
            log.info(
                "reconcile: %d rows placed in other blocks, %d suppressed",
                reconciled_rows,
                suppressed_unplaced,
            )

    generalized = config.output.publish == "generalized"
    with timer.stage(engine, "summarise"):
        summaries = engine.persist(
            engine.map_groups(
                placed,
                BLOCK,
                _steps.make_summary_fn(schema, config.algorithm.entropy_base, generalized),
                _steps.summary_columns(schema, generalized),
            )
        )

    pub_cols = _steps.published_columns(schema, pass_types, generalized)
    tmp_path = f"{out_path}.__sparkanon_tmp_{uuid.uuid4().hex[:12]}"
    try:
        published = _publish(
            engine,
            placed,
            summaries,
            schema,
            passthrough,
            pub_cols,
            timer,
            tmp_path if commit else None,
            config.output.format,
            generalized,
        )
        with timer.stage(engine, "verify"):
            verdict = verify(engine, published, schema, model)
        with timer.stage(engine, "metrics"):
            summary = _class_metrics(
                engine, summaries, len(schema.kinds), sum(k.weight for k in schema.kinds)
            )
        rows_out = int(verdict["rows"] or 0)
        metrics = {
            "rows_in": rows_in,
            "rows_out": rows_out,
            "rows_suppressed": malformed + dropped + invalid + suppressed_unplaced,
            "suppressed_malformed_records": malformed,
            "suppressed_missing_values": dropped,
            "suppressed_invalid_values": invalid,
            "suppressed_unplaced": suppressed_unplaced,
            "rows_reconciled": reconciled_rows,
            "classes": int(summary["classes"] or 0),
            "published_classes": int(verdict["groups"] or 0),
            "class_size": {
                "min": summary["min"],
                "median": summary["median"],
                "max": summary["max"],
            },
            "blocks": int(block_stats["blocks"] or 0),
            "block_rows": {"min": block_stats["min"], "max": block_stats["max"]},
            "infeasible_blocks": len(infeasible),
            "EPP": summary["epp"],
            "R_IL": information_loss_rate(summary["loss"] or 0.0, rows_out),
            "AVG_IL": summary["avg_il"],
            "AVG_Ent": summary["avg_ent"],
            "NCP": summary["ncp"],
            "GCP": summary["gcp"],
            "CAVG": normalized_average_class_size(
                rows_out, int(summary["classes"] or 0), config.model.k
            ),
            "model": model.describe(),
            "algorithm": config.algorithm.model_dump(mode="json"),
            "publish": config.output.publish,
            "max_block_rows": config.partitioning.max_block_rows,
            "seed": config.seed,
            "engine": engine.name,
            "verified": verdict["violations"] == 0,
            "violations": int(verdict["violations"] or 0),
            "warnings": class_size_warnings(summary["max"], config.model.k),
            "seconds": timer.seconds,
        }
        for warning in metrics["warnings"]:
            log.warning("%s", warning)
        if rows_out + metrics["rows_suppressed"] != rows_in:
            raise InternalError(
                f"row accounting broke: {rows_out} out + {metrics['rows_suppressed']} "
                f"suppressed != {rows_in} in"
            )
        if verdict["violations"]:
            raise PrivacyViolationError(
                f"verification failed: {metrics['violations']} published equivalence classes "
                f"violate {model.describe()}; nothing was written"
            )
        if commit:
            with timer.stage(engine, "commit"):
                engine.write_text(
                    f"{tmp_path}/metrics.json", json.dumps(metrics, indent=2, sort_keys=False)
                )
                engine.write_text(f"{tmp_path}/{RESOLVED_CONFIG}", resolved_config_yaml(config))
                _commit(engine, tmp_path, out_path, config.output.mode)
            published = engine.read_table(f"{out_path}/data", config.output.format)
    except BaseException:
        if commit:
            engine.delete_path(tmp_path)
        raise
    finally:
        for t in (encoded, clustered, summaries):
            engine.unpersist(t)
    return JobResult(published=published, metrics=metrics)


def _reconcile(
    engine: Engine,
    clustered: Table,
    placed: Table,
    schema: Schema,
    ctx: BlockContext,
    config: JobConfig,
) -> tuple[Table, int]:
    """Send rows no block could place to the nearest feasible block's classes.

    The block centres (one row per block) come to the driver; the rows do not:
    each waiting row picks its nearest centre in a batch function, then a
    cogroup hands every receiving block its own rows and the rows sent to it.

    Returns:
        The placed rows including the reconciled ones, and the number of rows
        that still have no class (suppressed).
    """
    clustered_cols = engine.schema_of(clustered)
    enc_cols = [(c, t) for c, t in clustered_cols if c not in (BLOCK, CLASS)]
    col_names = [c for c, _ in enc_cols]
    code_cols = [(c, t) for c, t in enc_cols if c in schema.code_columns]
    centres = engine.collect_small(
        engine.map_groups(
            placed, BLOCK, _steps.make_centre_fn(schema), [(BLOCK, "long")] + code_cols
        ),
        MAX_STAT_ROWS,
    )
    if len(centres) == 0:
        raise InternalError("no block could form a class although the input is feasible")
    waiting = engine.map_batches(
        engine.where(clustered, CLASS, "<", 0),
        _steps.make_nearest_block_fn(schema, centres, col_names),
        enc_cols + [("_target", "long")],
    )
    moved = engine.persist(
        engine.cogroup(
            placed,
            BLOCK,
            waiting,
            "_target",
            _steps.make_reconcile_fn(ctx, config.algorithm.name, config.seed, col_names),
            clustered_cols,
        )
    )
    still = engine.count(engine.where(moved, CLASS, "<", 0))
    return engine.union(placed, engine.where(moved, CLASS, ">=", 0)), still


def _publish(
    engine: Engine,
    placed: Table,
    summaries: Table,
    schema: Schema,
    passthrough: list[str],
    pub_cols: list[tuple[str, str]],
    timer: _Timer,
    tmp_path: str | None,
    fmt: str,
    generalized: bool = False,
) -> Table:
    """Replace each row's codes by its class centroid; write to ``tmp_path`` if given.

    With ``generalized`` (``output.publish: generalized``) each row gets its
    class's generalized values (ranges, taxonomy nodes, ``*``) instead.
    Two classes that publish the same values form one published group, which
    still satisfies the model because every model here is monotonic.
    """
    with timer.stage(engine, "publish"):
        rows_only = engine.select(placed, [CLASS] + passthrough)
        per_class = (
            [_steps.generalized_column(i) for i in range(len(schema.kinds))]
            if generalized
            else schema.code_columns
        )
        centroids = engine.select(summaries, [CLASS] + per_class)
        published = engine.map_batches(
            engine.join(rows_only, centroids, [CLASS]),
            _steps.make_publish_fn(schema, passthrough, generalized),
            pub_cols,
        )
        if tmp_path is None:
            return engine.persist(published)
        engine.write_table(published, f"{tmp_path}/data", fmt)
        return engine.read_table(f"{tmp_path}/data", fmt)


def _class_metrics(
    engine: Engine, summaries: Table, n_qi: int, weight_sum: float = 0.0
) -> dict[str, Any]:
    """Aggregate the per-class summaries: counts, sizes, loss, EPP, AVG-Ent, AVG-IL, NCP, GCP.

    ``ncp`` is the mean over classes of the class NCP (Xu et al. 2006; in
    ``[0, weight_sum]``), ``gcp`` the global certainty penalty in percent
    (Ghinita et al. 2007, :func:`sparkanon.metrics.ncp.global_certainty_penalty`)
    over the rows of the classes.
    """
    ncp_terms = engine.map_batches(summaries, _steps.make_ncp_term_fn(), _steps.NCP_TERM_COLUMNS)
    ncp_stats = _round_stats(
        engine,
        ncp_terms,
        [],
        {"ncp": ("mean", "ncp"), "penalty": ("sum", "penalty"), "rows": ("sum", "size")},
    )
    certainty = {
        "ncp": ncp_stats["ncp"],
        "gcp": global_certainty_penalty(
            float(ncp_stats["penalty"] or 0.0), int(ncp_stats["rows"] or 0), weight_sum
        ),
    }
    terms = engine.map_batches(
        summaries,
        _steps.make_avg_il_fn(n_qi),
        [
            ("size", "long"),
            ("hec", "double"),
            ("ent", "double"),
            ("loss", "double"),
            ("avg_il", "double"),
        ],
    )
    return certainty | _round_stats(
        engine,
        terms,
        [],
        {
            "classes": ("count", "size"),
            "rows": ("sum", "size"),
            "loss": ("sum", "loss"),
            "epp": ("mean", "hec"),
            "avg_ent": ("mean", "ent"),
            "avg_il": ("mean", "avg_il"),
            "min": ("min", "size"),
            "median": ("median", "size"),
            "max": ("max", "size"),
        },
    )


def verify(engine: Engine, published: Table, schema: Schema, model: HPKAnonymity) -> dict[str, Any]:
    """Group the published table by its published quasi-identifiers and check every group.

    Returns:
        ``violations`` (groups failing the model), ``groups`` and ``rows``.
    """
    qi = schema.qi_names
    with_level = engine.map_batches(
        published,
        _steps.make_level_fn(schema.sensitive, qi),
        [(c, t) for c, t in engine.schema_of(published) if c in qi]
        + [(schema.sensitive.name, "string"), (LEVEL, "long")],
    )
    groups = engine.aggregate(
        with_level,
        qi,
        {
            "size": ("count", LEVEL),
            "n_values": ("nunique", schema.sensitive.name),
            "n_levels": ("nunique", LEVEL),
        },
    )
    flagged = engine.map_batches(
        groups, _steps.make_check_fn(model), [("size", "long"), ("violation", "long")]
    )
    return _round_stats(
        engine,
        flagged,
        [],
        {"violations": ("sum", "violation"), "groups": ("count", "size"), "rows": ("sum", "size")},
    )


def _commit(engine: Engine, tmp_path: str, out_path: str, mode: str) -> None:
    if engine.path_exists(out_path):
        if mode != "overwrite":
            raise OutputExistsError(
                f"output.path: {out_path!r} appeared while the job ran; nothing was written"
            )
        trash = f"{out_path}.__sparkanon_old_{uuid.uuid4().hex[:12]}"
        engine.rename_path(out_path, trash)
        engine.rename_path(tmp_path, out_path)
        engine.delete_path(trash)
    else:
        engine.rename_path(tmp_path, out_path)
