"""The job: the stages of :mod:`sparkanon.stages`, in order, written once against the engine.

read -> profile -> encode -> partition -> cluster -> reconcile -> summarise -> publish
(to a temporary location) -> verify -> measure -> commit. Each stage is timed and
logged with counts only (never quasi-identifier or sensitive values). The driver holds
per-column, per-node and per-block statistics, never rows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sparkanon.algorithms import ALGORITHMS, BlockContext, native_target
from sparkanon.algorithms.partition import CutPolicy
from sparkanon.attributes.schema import Schema
from sparkanon.config import JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import InternalError, PrivacyViolationError
from sparkanon.metrics.ncp import fully_lost_mean
from sparkanon.metrics.registry import RunFacts, default_metrics
from sparkanon.metrics.utility import discernibility
from sparkanon.models import ClassSummaries, ModelSet
from sparkanon.publications import PUBLISHERS, Publication
from sparkanon.stages._common import StageTimer, log
from sparkanon.stages.cluster import cluster_rows
from sparkanon.stages.commit import OutputTarget, opened_output
from sparkanon.stages.encode import encode_input
from sparkanon.stages.measure import measure
from sparkanon.stages.partition import Partitioning, plan_job_top
from sparkanon.stages.profile import Profile, profile_input, sensitive_domain
from sparkanon.stages.publish import publish
from sparkanon.stages.read import read_input
from sparkanon.stages.reconcile import Reconciled, reconcile_rows
from sparkanon.stages.release import check_release_size
from sparkanon.stages.summarise import summarise_classes
from sparkanon.stages.verify import verify

LARGE_CLASS_FACTOR = 20
"""A run warns when its largest class holds more than this many times ``k`` rows."""


@dataclass
class JobResult:
    """What a job returns.

    Attributes:
        published: the publication's class table (read back from the output when
            committed): the published rows.
        metrics: the metrics written to ``metrics.json``.
        publication: every published table.
    """

    published: Table
    metrics: dict[str, Any]
    publication: Publication | None = None


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


def partitioning(config: JobConfig, schema: Schema, models: ModelSet) -> Partitioning:
    """The cut rule of the job and the models' test on candidate sides."""
    policy = CutPolicy(
        rule=ALGORITHMS[config.algorithm.name].cut_rule,
        min_side=models.min_class_size(),
        stop_rows=config.partitioning.max_block_rows,
        infeasible=config.partitioning.infeasible_blocks,
    )
    level_of = schema.sensitive.declared_level_of
    n_values = len(schema.sensitive.values) if models.uses_sensitive else 1

    def feasible(counts: np.ndarray) -> np.ndarray:
        sizes = counts.sum(axis=1)
        if not models.uses_sensitive:  # the histograms carry sizes only
            return models.satisfied(ClassSummaries(sizes, np.zeros((len(counts), 0), np.int64)))
        return models.satisfied(ClassSummaries(sizes, counts, level_of))

    return Partitioning(policy, feasible, n_values)


def describe_models(models: ModelSet) -> dict[str, Any] | list[dict[str, Any]]:
    """The models for metrics.json: one mapping, or a list when several must hold."""
    described = models.describe()
    return described[0] if len(described) == 1 else described


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
    if config.is_relational_transaction:
        from sparkanon.pipeline_rt import run_rt_job

        return run_rt_job(engine, config, table, commit)
    if config.is_full_domain:
        from sparkanon.pipeline_fd import run_fd_job

        return run_fd_job(engine, config, table, commit)
    timer = StageTimer(engine)
    with opened_output(engine, config, table is not None, commit) as target:
        return _run_job(engine, config, table, target, timer)


def _run_job(
    engine: Engine,
    config: JobConfig,
    table: Table | None,
    target: OutputTarget | None,
    timer: StageTimer,
) -> JobResult:
    """:func:`run_job` for a one-value sensitive attribute, with its output opened."""
    raw = read_input(engine, config, timer, table)
    # The input is scanned twice (profile, then encode). Caching the raw rows in the
    # profile's pass was measured slower: 10M Parquet rows, profile 51 -> 97 s, encode
    # unchanged (docs/benchmarks.md section 5).
    profile, schema = profile_input(engine, config, raw, timer)
    domain = sensitive_domain(schema, profile)
    models = config.models.bind(domain)
    encoded, enc_cols = encode_input(engine, config, raw, schema, timer)
    part = partitioning(config, schema, models)
    tree, infeasible = plan_job_top(engine, config, encoded, schema, part, profile.usable, timer)
    ctx = BlockContext.of(schema, native_target(models), models, config.algorithm)
    name, seed = config.algorithm.name, config.seed
    clustered, blocks = cluster_rows(
        engine, encoded, enc_cols, tree, infeasible, part, ctx, name, seed, timer
    )
    placed, reconciled = reconcile_rows(
        engine, clustered, blocks["unplaced"], ctx, name, seed, timer
    )
    publisher = PUBLISHERS[config.output.publish](schema, raw.passthrough_types)
    registry = default_metrics(len(schema.kinds))
    entropy_base = config.algorithm.entropy_base
    summaries = summarise_classes(engine, placed, schema, entropy_base, publisher, registry, timer)
    try:
        publication = publish(
            engine,
            publisher,
            placed,
            summaries,
            timer,
            target.staging() if target else None,
            config.output.format,
        )
        worst_keys = list(models.worst(domain.global_summary()))
        with timer.stage("verify"):
            verdict = verify(engine, publication, schema, models, worst_keys, domain)
            timer.note(
                rows=int(verdict["rows"] or 0),
                classes=int(verdict["groups"] or 0),
                violations=int(verdict["violations"] or 0),
            )
        rows_out = int(verdict["rows"] or 0)
        with timer.stage("metrics"):
            facts = RunFacts(
                rows_out=rows_out,
                k=models.min_class_size(),
                names=tuple(schema.qi_names),
                weights=tuple(kind.weight for kind in schema.kinds),
                has_levels=schema.sensitive.has_levels,
            )
            measured = measure(engine, summaries, registry, facts)
            measured["loss_with_suppressed"] = loss_with_suppressed(
                measured, profile.rows_in, rows_out, sum(facts.weights)
            )
        metrics = report(
            config,
            engine,
            profile,
            models,
            blocks,
            reconciled,
            verdict,
            worst_keys,
            measured,
            timer,
        )
        if verdict["violations"]:
            raise PrivacyViolationError(
                f"verification failed: {metrics['violations']} published equivalence classes "
                f"violate {describe_models(models)}; nothing was written"
            )
        check_release_size(metrics, config.output.max_suppressed_share)
        publication = commit_verified(engine, target, timer, metrics, publication, config)
    finally:
        for t in (encoded, clustered, summaries):
            engine.unpersist(t)
    return JobResult(published=publication.rows, metrics=metrics, publication=publication)


def loss_with_suppressed(
    measured: dict[str, Any], rows_in: int, rows_out: int, weight_sum: float
) -> dict[str, Any]:
    """NCP, GCP and NCP per attribute counting every suppressed row as fully lost.

    The published-only figures (``NCP``, ``GCP``, ``NCP_by_attribute``) leave the
    suppressed rows out; here each suppressed row (every cause) counts as a class of
    its own published as the whole domain: NCP ``sum_i w_i`` (NCP is a mean over
    classes), 100 percent for GCP and for each attribute (means over rows).
    """
    lost = rows_in - rows_out
    classes = float(measured["classes"] or 0)
    return {
        "NCP": fully_lost_mean(measured["NCP"] or 0.0, classes, lost, weight_sum),
        "GCP": fully_lost_mean(measured["GCP"] or 0.0, rows_out, lost, 100.0),
        "NCP_by_attribute": {
            name: fully_lost_mean(value, rows_out, lost, 100.0)
            for name, value in measured["NCP_by_attribute"].items()
        },
    }


def commit_verified(
    engine: Engine,
    target: OutputTarget | None,
    timer: StageTimer,
    metrics: dict[str, Any],
    publication: Publication,
    config: JobConfig,
) -> Publication:
    """Commit the verified publication with its metrics and read it back from its place.

    Without a target (the run does not commit) the publication is returned as it is.
    """
    if target is None:
        return publication
    with timer.stage("commit"):
        schemas = {name: engine.schema_of(t) for name, t in publication.tables.items()}
        where = target.commit(target.staging(), metrics, schemas)
    return reread(engine, publication, where, config.output.format)


def reread(engine: Engine, publication: Publication, out_path: str, fmt: str) -> Publication:
    """The committed publication, its tables read back from their final place."""
    tables = {name: engine.read_table(f"{out_path}/{name}", fmt) for name in publication.tables}
    return replace(publication, tables=tables)


def report(
    config: JobConfig,
    engine: Engine,
    profile: Profile,
    models: ModelSet,
    blocks: dict[str, Any],
    reconciled: Reconciled,
    verdict: dict[str, Any],
    worst_keys: list[str],
    measured: dict[str, Any],
    timer: StageTimer,
) -> dict[str, Any]:
    """``metrics.json``: row accounting, structure, metrics, models, verification, timings.

    Raises:
        InternalError: rows out plus rows suppressed differ from rows in.
    """
    rows_out = int(verdict["rows"] or 0)
    k = models.min_class_size()
    metrics: dict[str, Any] = {
        "rows_in": profile.rows_in,
        "rows_out": rows_out,
        "rows_suppressed": profile.suppressed + reconciled.unplaced,
        "suppressed_malformed_records": profile.malformed,
        "suppressed_missing_values": profile.missing,
        "suppressed_invalid_values": profile.invalid,
        "suppressed_unplaced": reconciled.unplaced,
        "rows_reconciled": reconciled.reconciled,
        "classes": measured.pop("classes"),
        "published_classes": int(verdict["groups"] or 0),
        "class_size": measured.pop("class_size"),
        "blocks": int(blocks["blocks"] or 0),
        "block_rows": {"min": blocks["min"], "max": blocks["max"]},
        "infeasible_blocks": int(blocks["infeasible"] or 0),
        "repair_merges": int(blocks["repairs"] or 0),
    }
    if reconciled.residual_rows:
        metrics["residual_class"] = {
            "rows_without_class": reconciled.residual_rows,
            "classes_absorbed": reconciled.residual_absorbed,
        }
    metrics |= measured
    metrics |= {
        "DM": discernibility(verdict["dm"], profile.rows_in, rows_out),
        "model": describe_models(models),
        "achieved": {key: verdict[key] for key in worst_keys},
        "algorithm": config.algorithm.model_dump(mode="json"),
        "publish": config.output.publish,
        "max_block_rows": config.partitioning.max_block_rows,
        "seed": config.seed,
        "engine": engine.name,
        "verified": verdict["violations"] == 0,
        "violations": int(verdict["violations"] or 0),
        "warnings": class_size_warnings(metrics["class_size"]["max"], k),
        "seconds": timer.seconds,
    }
    jobs = engine.jobs_launched()
    if jobs is not None:
        metrics["spark_jobs"] = {"total": sum(jobs.values()), "by_stage": jobs}
    for warning in metrics["warnings"]:
        log.warning("%s", warning)
    if rows_out + metrics["rows_suppressed"] != profile.rows_in:
        raise InternalError(
            f"row accounting broke: {rows_out} out + {metrics['rows_suppressed']} "
            f"suppressed != {profile.rows_in} in"
        )
    return metrics
