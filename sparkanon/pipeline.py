"""The runner: one job, whatever the family of method, written once against the engine.

read -> profile -> the family's anonymization (its own stages, ending with the
publication at the staging location) -> verify -> measure -> release checks (no published
row or whole-number column leads back to the input's order, the run key in no staged
file: :mod:`sparkanon.stages.release_checks`) -> the release's metrics -> evaluate
(risk, attacks and utility, ``report.html`` beside ``metrics.json``) -> the key scan of
the files written since -> commit. The
runner owns what every family shares: the output target (checked and locked before any
work, cleaned up on failure), the verify and metrics stages (timed, logged with counts
only, their Spark jobs labelled), the row accounting (rows in = rows out + rows
suppressed, by cause), the keys every release's metrics carry, the refusal of a release
that fails its guarantee (exit 3) or publishes nothing or too little (exit 2), and the
commit. A family (:mod:`sparkanon.families`) supplies the rest through a small protocol.
The driver holds per-column, per-node, per-block and per-class statistics, never rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sparkanon.attributes.builders import hierarchy_file, published_paths, rows_text
from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.config import JobConfig
from sparkanon.config.published import published_config_yaml
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import InternalError, PrivacyViolationError, StatisticsOverflowError
from sparkanon.evaluation.evaluate import evaluate_run, not_computed_warning
from sparkanon.families import Anonymized, Family, Run, Verdict, check_config, family_of
from sparkanon.models import describe_models
from sparkanon.publications import Publication
from sparkanon.randomness import RunKey
from sparkanon.stages._common import StageTimer, log
from sparkanon.stages.commit import (
    METRICS,
    RESOLVED_CONFIG,
    OutputTarget,
    opened_output,
)
from sparkanon.stages.profile import Profile, built_taxonomies, profile_input
from sparkanon.stages.read import read_input
from sparkanon.stages.release import check_release_size
from sparkanon.stages.release_checks import key_scan, order_checks, raise_failures


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


def run_job(
    engine: Engine,
    config: JobConfig,
    table: Table | None = None,
    commit: bool = True,
    key: RunKey | None = None,
) -> JobResult:
    """Run the whole anonymization job.

    Args:
        engine: the engine to run on.
        config: the validated job config (checked again by its family's rules,
            :func:`sparkanon.families.check_config`).
        table: the input table; read from ``config.input`` when ``None``.
        commit: write the output and ``metrics.json`` (after verification).
        key: the key of the run's protective draws; ``None``: ``SPARKANON_KEY`` if set,
            else a fresh key that is never kept (:meth:`RunKey.for_run`).

    Returns:
        The published table and the metrics.

    Raises:
        UserError: bad config or input, or a release that would publish nothing or
            suppress too much (exit code 2); nothing is written.
        PrivacyViolationError: verification failed (exit code 3); nothing is written.
    """
    family = family_of(check_config(config))
    config = family.prepare(config)
    timer = StageTimer(engine)
    with opened_output(engine, config, table is not None, commit) as target:
        raw = read_input(engine, config, timer, table)
        profile, schema = profile_input(engine, config, raw, timer)
        run = Run(engine, config, timer, target, raw, profile, schema, key or RunKey.for_run())
        done: Anonymized | None = None
        try:
            done = family.anonymize(run)
            return _release(run, family, done)
        finally:
            for cached in done.cached if done is not None else ():
                engine.unpersist(cached)


def _release(run: Run, family: Family, done: Anonymized) -> JobResult:
    """Verify, measure, write the metrics and commit what the family anonymized."""
    engine, timer = run.engine, run.timer
    with timer.stage("verify"):
        verdict = family.verify(run, done)
        timer.note(rows=verdict.rows, groups=verdict.groups, violations=verdict.violations)
    with timer.stage("metrics"):
        measured = family.measure(run, done, verdict)
    metrics = release_metrics(run, family, done, verdict, measured)
    if verdict.violations:
        raise PrivacyViolationError(
            f"verification failed: {verdict.violations} {verdict.failure}; nothing was written"
        )
    hint = family.empty_hint(metrics, run.config)
    check_release_size(metrics, run.config.output.max_suppressed_share, hint)
    staging = run.staging()
    built = built_taxonomies(run.config, run.schema)
    if staging is not None:
        shown = published_hierarchies(engine, built, done.publication.tables)
        write_hierarchies(engine.write_text, shown, staging)
    with timer.stage("release_checks"):
        checks = order_checks(engine, done.publication.tables, run.raw.original)
        found, scanned = key_scan(engine, run.key, staging)
        metrics["release_checks"] = [*checks, found]
        timer.note(checks=len(metrics["release_checks"]))
    raise_failures(metrics["release_checks"])
    if staging is not None and run.config.report.enabled:
        with timer.stage("evaluate"):
            evaluation = evaluate_run(
                engine,
                run.config,
                run.raw.original,
                done.publication.tables,
                metrics,
                staging,
                {column: taxonomy.paths for column, taxonomy in built.items()},
            )
        left_out = not_computed_warning(evaluation) if evaluation else None
        if left_out is not None:
            metrics.setdefault("warnings", []).append(left_out)
    if staging is not None:
        texts = {METRICS: json.dumps(metrics), RESOLVED_CONFIG: published_config_yaml(run.config)}
        raise_failures([key_scan(engine, run.key, staging, texts, skip=scanned)[0]])
    publication = commit_verified(engine, run.target, timer, metrics, done.publication, run.config)
    return JobResult(published=publication.rows, metrics=metrics, publication=publication)


def published_hierarchies(
    engine: Engine, taxonomies: Mapping[str, Taxonomy], tables: Mapping[str, Table]
) -> dict[str, list[tuple[str, ...]]]:
    """Each generated hierarchy cut to the nodes the release publishes and their ancestors.

    The column's distinct published values come from the staged table that holds it (one
    aggregation per column); :func:`~sparkanon.attributes.builders.published_paths` keeps
    the paths through them. A column no staged table holds, or one holding more distinct
    values than its hierarchy has nodes (they are not its labels), gets no file.
    """
    out: dict[str, list[tuple[str, ...]]] = {}
    for column, taxonomy in taxonomies.items():
        table = next((t for t in tables.values() if column in dict(engine.schema_of(t))), None)
        if table is None:
            continue
        values = engine.aggregate(table, [column], {"n": ("count", column)})
        nodes = len({node for path in taxonomy.paths for node in path})
        try:  # one aggregation: more distinct values than nodes stops the collect
            distinct = engine.collect_small(values, nodes)[column]
        except StatisticsOverflowError:
            log.info("hierarchy of %s not written: its published values are not its nodes", column)
            continue
        published = {str(v) for v in distinct.dropna()}
        rows = published_paths(taxonomy, published)
        if rows:
            out[column] = rows
    return out


def write_hierarchies(
    write_text: Callable[[str, str], None],
    hierarchies: Mapping[str, Sequence[Sequence[str]]],
    directory: str,
) -> list[str]:
    """The published part of the generated hierarchies as files in ``directory/hierarchies``.

    ``hierarchies``: per column, the rows :func:`published_hierarchies` kept.

    Returns:
        The files written (none when no attribute has a builder).
    """
    written = []
    for column, rows in hierarchies.items():
        path = hierarchy_file(directory, column)
        write_text(path, rows_text(rows))
        written.append(path)
    if written:
        log.info("wrote the published nodes of %d generated hierarchies", len(written))
    return written


def accounting(profile: Profile, suppressed: dict[str, int], rows_out: int) -> dict[str, Any]:
    """The rows in, out and suppressed by cause: the profile's causes, then the family's."""
    metrics: dict[str, Any] = {
        "rows_in": profile.rows_in,
        "rows_out": rows_out,
        "rows_suppressed": profile.suppressed + sum(suppressed.values()),
        "suppressed_malformed_records": profile.malformed,
        "suppressed_missing_values": profile.missing,
        "suppressed_invalid_values": profile.invalid,
    }
    if profile.items is not None:
        metrics["suppressed_unknown_items"] = profile.unknown_items
    metrics |= {f"suppressed_{cause}": rows for cause, rows in suppressed.items()}
    return metrics


def release_metrics(
    run: Run, family: Family, done: Anonymized, verdict: Verdict, measured: dict[str, Any]
) -> dict[str, Any]:
    """``metrics.json``: row accounting, the family's metrics, models, verification, timings.

    Raises:
        InternalError: rows out plus rows suppressed differ from rows in.
    """
    config, profile, engine = run.config, run.profile, run.engine
    measured = dict(measured)
    warnings = measured.pop("warnings", [])
    metrics = accounting(profile, done.suppressed, verdict.rows)
    metrics["unlisted_columns"] = run.raw.unlisted.metrics()
    metrics |= measured
    metrics |= {
        "family": family.name,
        "row_level": family.row_level,
        "model": describe_models(config.models),
        "algorithm": config.algorithm.model_dump(mode="json"),
        "publish": measured.get("publish", config.output.publish),
        "seed": config.seed,
        "randomness": run.key.describe(),
        "engine": engine.name,
        "verified": verdict.violations == 0,
        "violations": verdict.violations,
        "warnings": warnings,
        "seconds": run.timer.seconds,
    }
    jobs = engine.jobs_launched()
    if jobs is not None:
        metrics["spark_jobs"] = {"total": sum(jobs.values()), "by_stage": jobs}
    for warning in warnings:
        log.warning("%s", warning)
    if verdict.rows + metrics["rows_suppressed"] != profile.rows_in:
        raise InternalError(
            f"row accounting broke: {verdict.rows} out + {metrics['rows_suppressed']} "
            f"suppressed != {profile.rows_in} in"
        )
    return metrics


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
