"""The full-domain generalization job (seed 004 section 20.3.1): Samarati and Incognito.

read -> profile -> encode -> levels (every quasi-identifier's hierarchy of levels) ->
frequency (the bottom node's frequency set, aggregated and cached on the executors) ->
search (the lattice, node verdicts rolled up from the frequency set in batches) ->
publish (each quasi-identifier at the chosen node's level, failing classes suppressed,
to a temporary location) -> verify (grouping by the published values) -> metrics ->
commit. Written once against the engine; the driver holds the lattice and per-node
counts, never rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sparkanon.algorithms.lattice.search import (
    Node,
    NodeVerdict,
    SearchResult,
    height,
    incognito,
    node_loss,
    prunable,
    samarati,
    suppression_limit,
)
from sparkanon.attributes.levels import LevelHierarchy
from sparkanon.attributes.schema import SENS
from sparkanon.config import JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import InternalError, PrivacyViolationError
from sparkanon.metrics.ncp import fully_lost_mean
from sparkanon.models import ModelSet
from sparkanon.pipeline import JobResult, commit_verified, describe_models
from sparkanon.publications.base import MAIN, Publication
from sparkanon.stages._common import StageTimer, log
from sparkanon.stages.commit import OutputTarget, opened_output
from sparkanon.stages.encode import encode_input
from sparkanon.stages.lattice import (
    FrequencySet,
    base_column,
    build_levels,
    evaluate_nodes,
    frequency_set,
    make_base_fn,
    publish_node,
)
from sparkanon.stages.profile import Profile, profile_input, sensitive_domain
from sparkanon.stages.publish import staged
from sparkanon.stages.read import read_input
from sparkanon.stages.release import check_release_size
from sparkanon.stages.verify import verify

SEARCHES = {"samarati": samarati, "incognito": incognito}
"""The lattice searches by ``algorithm.name``."""

MAX_REPORTED_NODES = 50
"""``metrics.json`` lists at most this many candidate nodes."""


def run_fd_job(
    engine: Engine, config: JobConfig, table: Table | None = None, commit: bool = True
) -> JobResult:
    """Run a full-domain generalization job (``algorithm.name: samarati | incognito``).

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
    with opened_output(engine, config, table is not None, commit) as target:
        return _run(engine, config, table, target, timer)


def _run(
    engine: Engine,
    config: JobConfig,
    table: Table | None,
    target: OutputTarget | None,
    timer: StageTimer,
) -> JobResult:
    raw = read_input(engine, config, timer, table)
    profile, schema = profile_input(engine, config, raw, timer)
    domain = sensitive_domain(schema, profile)
    models = config.models.bind(domain)
    encoded, _ = encode_input(engine, config, raw, schema, timer)
    params = config.algorithm
    weights = [kind.weight for kind in schema.kinds]
    names = [c for c, _ in raw.passthrough_types]
    n_qi = len(schema.kinds)
    fset: FrequencySet | None = None
    try:
        with timer.stage("levels"):
            hierarchies, rules = build_levels(engine, config, schema, encoded)
            heights = [h.height for h in hierarchies]
            timer.note(lattice_nodes=_lattice_size(heights))
        based_cols = [(base_column(i), "long") for i in range(n_qi)] + [(SENS, "long")]
        based_cols += raw.passthrough_types
        based = engine.map_batches(encoded, make_base_fn(schema, rules, [SENS, *names]), based_cols)
        with timer.stage("frequency"):
            fset = frequency_set(engine, based, n_qi, models.uses_sensitive)
            timer.note(rows=fset.rows, entries=fset.entries)
        prune = prunable(models.monotonic, models.additive, params.max_suppression)
        with timer.stage("search"):
            result = _search(engine, params, fset, hierarchies, models, schema, weights, prune)
            timer.note(evaluated=result.evaluated, inferred=result.inferred, batches=result.batches)
        node = result.best
        with timer.stage("publish"):
            published = publish_node(
                engine, based, fset, hierarchies, node, models, schema, raw.passthrough_types
            )
            publication = staged(
                engine,
                Publication({MAIN: published}, MAIN, schema.qi_names, schema.sensitive.name),
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
        metrics = report(
            config,
            engine,
            profile,
            models,
            hierarchies,
            result,
            verdict,
            worst_keys,
            weights,
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
        engine.unpersist(encoded)
        if fset is not None:
            engine.unpersist(fset.table)
    return JobResult(published=publication.rows, metrics=metrics, publication=publication)


def published_ncp(v: NodeVerdict, weights: Sequence[float]) -> float:
    """The weighted mean NCP over the published rows of a node (suppressed rows left out)."""
    kept = v.rows - v.bad_rows
    total_w = float(sum(weights))
    return float(v.ncp_kept / (kept * total_w)) if kept and total_w else 0.0


def _lattice_size(heights: Sequence[int]) -> int:
    size = 1
    for h in heights:
        size *= h + 1
    return size


def _search(
    engine: Engine,
    params: Any,
    fset: FrequencySet,
    hierarchies: Sequence[LevelHierarchy],
    models: ModelSet,
    schema: Any,
    weights: Sequence[float],
    prune: bool,
) -> SearchResult:
    """Run the configured search, each batch of nodes one distributed pass."""
    passes = [0]

    def evaluate(nodes: Sequence[Node]) -> dict[Node, NodeVerdict]:
        passes[0] += 1
        out = evaluate_nodes(engine, fset, hierarchies, nodes, models, schema, weights)
        log.info("search: pass %d evaluated %d nodes", passes[0], len(nodes))
        return out

    heights = [h.height for h in hierarchies]
    search = SEARCHES[params.name]
    return search(
        heights,
        evaluate,
        params.max_suppression,
        params.metric,
        weights,
        prune,
        params.batch_nodes,
    )


def report(
    config: JobConfig,
    engine: Engine,
    profile: Profile,
    models: ModelSet,
    hierarchies: Sequence[LevelHierarchy],
    result: SearchResult,
    verdict: dict[str, Any],
    worst_keys: list[str],
    weights: Sequence[float],
    timer: StageTimer,
) -> dict[str, Any]:
    """``metrics.json`` of a full-domain job: rows, the node and its losses, the search.

    Raises:
        InternalError: rows out plus rows suppressed differ from rows in, or the
            published rows differ from what the search counted for the node.
    """
    node = result.best
    v = result.verdicts[node]
    heights = [h.height for h in hierarchies]
    rows_out = int(verdict["rows"] or 0)
    params = config.algorithm
    metrics: dict[str, Any] = {
        "rows_in": profile.rows_in,
        "rows_out": rows_out,
        "rows_suppressed": profile.suppressed + v.bad_rows,
        "suppressed_malformed_records": profile.malformed,
        "suppressed_missing_values": profile.missing,
        "suppressed_invalid_values": profile.invalid,
        "suppressed_by_node": v.bad_rows,
        "suppressed_classes": v.bad_classes,
        "max_suppressed_rows": suppression_limit(v.rows, params.max_suppression),
        "published_classes": int(verdict["groups"] or 0),
        "node": {h.name: level for h, level in zip(hierarchies, node, strict=True)},
        "node_labels_per_level": {
            h.name: h.size(level) for h, level in zip(hierarchies, node, strict=True)
        },
        "height": height(node),
        "max_height": sum(heights),
        "precision": 1.0 - node_loss("precision", node, v, heights, weights),
        "DM": node_loss("discernibility", node, v, heights, weights),
        "NCP": node_loss("ncp", node, v, heights, weights),
        "NCP_published": published_ncp(v, weights),
        "lattice": {
            "nodes": _lattice_size(heights),
            "heights": {h.name: h.height for h in hierarchies},
            "evaluated": result.evaluated,
            "inferred": result.inferred,
            "passes": result.batches,
            "pruned": result.pruned,
            "candidates": len(result.candidates),
            "candidate_nodes": [list(n) for n in result.candidates[:MAX_REPORTED_NODES]],
        },
        "model": describe_models(models),
        "achieved": {key: verdict[key] for key in worst_keys},
        "algorithm": params.model_dump(mode="json"),
        "publish": "levels",
        "seed": config.seed,
        "engine": engine.name,
        "verified": verdict["violations"] == 0,
        "violations": int(verdict["violations"] or 0),
        "seconds": timer.seconds,
    }
    metrics["loss_with_suppressed"] = {
        "NCP": fully_lost_mean(metrics["NCP_published"], rows_out, profile.rows_in - rows_out, 1.0)
    }
    jobs = engine.jobs_launched()
    if jobs is not None:
        metrics["spark_jobs"] = {"total": sum(jobs.values()), "by_stage": jobs}
    if rows_out != v.rows - v.bad_rows:
        raise InternalError(
            f"the published table holds {rows_out} rows but the search kept {v.rows - v.bad_rows}"
        )
    if rows_out + metrics["rows_suppressed"] != profile.rows_in:
        raise InternalError(
            f"row accounting broke: {rows_out} out + {metrics['rows_suppressed']} "
            f"suppressed != {profile.rows_in} in"
        )
    return metrics
