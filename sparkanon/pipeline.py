"""The job: the stages of :mod:`sparkanon.stages`, in order, written once against the engine.

read -> profile -> encode -> partition -> cluster -> reconcile -> summarise -> publish
(to a temporary location) -> verify -> measure -> commit. Each stage is timed and
logged with counts only (never quasi-identifier or sensitive values). The driver holds
per-column, per-node and per-block statistics, never rows.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np

from sparkanon.algorithms import ALGORITHMS, BlockContext
from sparkanon.algorithms.partition import CutPolicy
from sparkanon.attributes.schema import Schema
from sparkanon.config import JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import InternalError, PrivacyViolationError
from sparkanon.metrics.entropy import information_loss_rate, normalized_average_class_size
from sparkanon.models.base import HPKAnonymity, model_from_config
from sparkanon.stages._common import StageTimer, log
from sparkanon.stages.cluster import cluster_rows
from sparkanon.stages.commit import commit as commit_output
from sparkanon.stages.encode import encode_input
from sparkanon.stages.measure import class_metrics
from sparkanon.stages.partition import Partitioning, plan_top, task_rows_for
from sparkanon.stages.profile import profile_input
from sparkanon.stages.publish import publish, published_columns
from sparkanon.stages.read import check_output, read_input
from sparkanon.stages.reconcile import reconcile_rows
from sparkanon.stages.summarise import summarise_classes
from sparkanon.stages.verify import verify

LARGE_CLASS_FACTOR = 20
"""A run warns when its largest class holds more than this many times ``k`` rows."""


@dataclass
class JobResult:
    """What a job returns.

    Attributes:
        published: the published table (read back from the output when committed).
        metrics: the metrics written to ``metrics.json``.
    """

    published: Table
    metrics: dict[str, Any]


def build_model(config: JobConfig) -> HPKAnonymity:
    """The privacy model of the config."""
    m = config.model
    return model_from_config(m.name, m.k, m.p, m.h)


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


def partitioning(config: JobConfig, schema: Schema, model: HPKAnonymity) -> Partitioning:
    """The cut rule of the job and the model's test on candidate sides."""
    policy = CutPolicy(
        rule=ALGORITHMS[config.algorithm.name].cut_rule,
        min_side=model.k,
        stop_rows=config.partitioning.max_block_rows,
        infeasible=config.partitioning.infeasible_blocks,
    )
    level_of = schema.sensitive.level_of
    n_levels = schema.sensitive.n_levels

    def feasible(counts: np.ndarray) -> np.ndarray:
        present = counts > 0
        levels = np.zeros((len(counts), n_levels), dtype=bool)
        for v in range(counts.shape[1]):
            levels[:, level_of[v]] |= present[:, v]
        return model.satisfied(counts.sum(axis=1), present.sum(axis=1), levels.sum(axis=1))

    return Partitioning(policy, feasible, len(schema.sensitive.values))


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
    timer = StageTimer(engine)
    if commit:
        check_output(engine, config, reads_path=table is None)
    model = build_model(config)
    raw = read_input(engine, config, timer, table)
    profile, schema = profile_input(engine, config, raw, timer)
    encoded, enc_cols = encode_input(engine, config, raw, schema, timer)
    part = partitioning(config, schema, model)
    task_rows = task_rows_for(
        config.partitioning.task_rows, part.policy.stop_rows, profile.usable, engine.parallelism
    )
    tree, infeasible = plan_top(engine, encoded, schema, part, profile.usable, task_rows, timer)
    ctx = BlockContext(
        schema=schema,
        model=model,
        psi_weights=config.algorithm.psi_weights,
        entropy_base=config.algorithm.entropy_base,
        max_iterations=config.algorithm.max_iterations,
        apf_rule=config.algorithm.apf_rule,
    )
    name, seed = config.algorithm.name, config.seed
    clustered, blocks = cluster_rows(
        engine, encoded, enc_cols, tree, infeasible, part, ctx, name, seed, timer
    )
    placed, reconciled, unplaced = reconcile_rows(
        engine, clustered, blocks["unplaced"], ctx, name, seed, timer
    )
    generalized = config.output.publish == "generalized"
    summaries = summarise_classes(
        engine, placed, schema, config.algorithm.entropy_base, generalized, timer
    )
    out_path = config.output.path.rstrip("/")
    tmp_path = f"{out_path}.__sparkanon_tmp_{uuid.uuid4().hex[:12]}"
    try:
        published = publish(
            engine,
            placed,
            summaries,
            schema,
            raw.passthrough,
            published_columns(schema, raw.passthrough_types, generalized),
            timer,
            tmp_path if commit else None,
            config.output.format,
            generalized,
        )
        with timer.stage("verify"):
            verdict = verify(engine, published, schema, model)
        with timer.stage("metrics"):
            summary = class_metrics(
                engine, summaries, len(schema.kinds), sum(k.weight for k in schema.kinds)
            )
        rows_out = int(verdict["rows"] or 0)
        metrics = {
            "rows_in": profile.rows_in,
            "rows_out": rows_out,
            "rows_suppressed": profile.suppressed + unplaced,
            "suppressed_malformed_records": profile.malformed,
            "suppressed_missing_values": profile.missing,
            "suppressed_invalid_values": profile.invalid,
            "suppressed_unplaced": unplaced,
            "rows_reconciled": reconciled,
            "classes": int(summary["classes"] or 0),
            "published_classes": int(verdict["groups"] or 0),
            "class_size": {
                "min": summary["min"],
                "median": summary["median"],
                "max": summary["max"],
            },
            "blocks": int(blocks["blocks"] or 0),
            "block_rows": {"min": blocks["min"], "max": blocks["max"]},
            "infeasible_blocks": int(blocks["infeasible"] or 0),
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
        if rows_out + metrics["rows_suppressed"] != profile.rows_in:
            raise InternalError(
                f"row accounting broke: {rows_out} out + {metrics['rows_suppressed']} "
                f"suppressed != {profile.rows_in} in"
            )
        if verdict["violations"]:
            raise PrivacyViolationError(
                f"verification failed: {metrics['violations']} published equivalence classes "
                f"violate {model.describe()}; nothing was written"
            )
        if commit:
            with timer.stage("commit"):
                commit_output(engine, config, tmp_path, metrics)
            published = engine.read_table(f"{out_path}/data", config.output.format)
    except BaseException:
        if commit:
            engine.delete_path(tmp_path)
        raise
    finally:
        for t in (encoded, clustered, summaries):
            engine.unpersist(t)
    return JobResult(published=published, metrics=metrics)
