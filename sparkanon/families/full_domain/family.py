"""The full-domain family (textbook section 20.3.1): Samarati and Incognito.

encode -> levels (every quasi-identifier's hierarchy of levels) -> frequency (the bottom
node's frequency set, aggregated and cached on the executors, from the rows' base codes: a
native projection of the encoded rows, or one Python pass cached in their place) -> search
(the lattice, node verdicts rolled up from the frequency set in batches) -> publish (each
quasi-identifier at the chosen node's level, failing classes suppressed, to the staging
location; native expressions and, when the driver holds the frequency set, an anti-join
with the failing classes' keys it computed). Verification groups by the published values,
as for every one-table release. The driver holds the lattice and per-node counts, never
rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from sparkanon.algorithms import ALGORITHMS, algorithms_of
from sparkanon.algorithms.lattice.search import (
    Node,
    NodeVerdict,
    SearchResult,
    SearchTask,
    height,
    prunable,
    release_counts,
    suppression_limit,
)
from sparkanon.attributes.levels import LevelHierarchy
from sparkanon.attributes.schema import RID, SENS
from sparkanon.engine.base import Engine, Table
from sparkanon.engine.expr import Col
from sparkanon.errors import InternalError
from sparkanon.families.base import Anonymized, Family, Run, Verdict, verify_classes
from sparkanon.families.full_domain.lattice import (
    BaseRule,
    FrequencySet,
    base_column,
    build_levels,
    evaluate_nodes,
    frequency_set,
    make_base_fn,
    publish_node,
)
from sparkanon.families.full_domain.rollup import DriverEvaluator
from sparkanon.metrics.ncp import fully_lost_mean
from sparkanon.metrics.utility import discernibility_loss, ncp_loss, precision_loss, published_ncp
from sparkanon.models import ModelSet, SensitiveDomain
from sparkanon.publications.base import MAIN, Publication
from sparkanon.stages._common import log
from sparkanon.stages.encode import encode_input
from sparkanon.stages.kept import join_kept
from sparkanon.stages.publish import staged

MAX_REPORTED_NODES = 50
"""``metrics.json`` lists at most this many candidate nodes."""


@dataclass(frozen=True)
class _State:
    """What verify and measure read: the bound models, the lattice and the chosen node."""

    models: ModelSet
    domain: SensitiveDomain
    hierarchies: Sequence[LevelHierarchy]
    result: SearchResult
    weights: Sequence[float]


class FullDomainFamily(Family):
    """Full-domain generalization: one level of every hierarchy for the whole table."""

    name = "full_domain"
    algorithms = algorithms_of("full_domain")
    glossary = MappingProxyType(
        {
            "NCP": (
                "weighted mean NCP over the usable rows, a row the node suppresses counting 1 "
                "(the search's objective)"
            ),
        }
    )

    def anonymize(self, run: Run) -> Anonymized:  # noqa: D102
        engine, config, timer, schema, raw = run.engine, run.config, run.timer, run.schema, run.raw
        domain, models = run.bound_models()
        encoded, _ = encode_input(engine, config, raw, schema, timer)
        params = config.algorithm
        weights = [kind.weight for kind in schema.kinds]
        # The row id rides along to the publish map, where the kept columns join by it.
        carried = [*raw.passthrough_types, (RID, "long")]
        names = [c for c, _ in carried]
        n_qi = len(schema.kinds)
        cached = [encoded]
        with timer.stage("levels"):
            hierarchies, rules = build_levels(engine, config, schema, encoded)
            heights = [h.height for h in hierarchies]
            timer.note(lattice_nodes=_lattice_size(heights))
        with timer.stage("frequency"):
            keep = [SENS, *names]
            based, cached_anew = _base_codes(engine, encoded, schema, rules, keep, carried)
            if cached_anew:
                cached.append(based)
                engine.unpersist(encoded)
            fset = frequency_set(engine, based, n_qi, models.uses_sensitive)
            cached.append(fset.table)
            timer.note(rows=fset.rows, entries=fset.entries, on_driver=fset.local is not None)
        prune = prunable(models.monotonic, models.additive, params.max_suppression)
        with timer.stage("search"):
            result, driver = _search(
                engine, params, fset, hierarchies, models, schema, weights, prune
            )
            timer.note(evaluated=result.evaluated, inferred=result.inferred, batches=result.batches)
        node = result.best
        with timer.stage("publish"):
            failing = None if driver is None else driver.failing_keys(node)
            labelled = publish_node(
                engine, based, fset, hierarchies, node, models, schema, carried, failing
            )
            columns = [h.name for h in hierarchies] + [c for c, _ in raw.passthrough_types]
            published = join_kept(engine, labelled, raw.kept, RID, columns)
            publication = staged(
                engine,
                Publication({MAIN: published}, MAIN, schema.qi_names, schema.sensitive.name),
                run.staging(),
                config.output.format,
                run.key,
            )
        suppressed = {"by_node": result.verdicts[node].bad_rows}
        state = _State(models, domain, hierarchies, result, weights)
        return Anonymized(publication, suppressed, state, cached)

    def verify(self, run: Run, done: Anonymized) -> Verdict:  # noqa: D102
        s: _State = done.state
        return verify_classes(run, done.publication, s.models, s.domain)

    def measure(self, run: Run, done: Anonymized, verdict: Verdict) -> dict[str, Any]:
        """The node, its losses and the search (``metrics.json``).

        Raises:
            InternalError: the published rows differ from what the search counted for
                the node.
        """
        s: _State = done.state
        node = s.result.best
        v = s.result.verdicts[node]
        hierarchies, weights, result = s.hierarchies, s.weights, s.result
        heights = [h.height for h in hierarchies]
        rows_out = verdict.rows
        if rows_out != v.rows - v.bad_rows:
            raise InternalError(
                f"the published table holds {rows_out} rows but the search kept "
                f"{v.rows - v.bad_rows}"
            )
        counts = release_counts(node, v, heights, weights)
        ncp_published = published_ncp(counts)
        return {
            "suppressed_classes": v.bad_classes,
            "max_suppressed_rows": suppression_limit(v.rows, run.config.algorithm.max_suppression),
            "published_classes": verdict.groups,
            "node": {h.name: level for h, level in zip(hierarchies, node, strict=True)},
            "node_labels_per_level": {
                h.name: h.size(level) for h, level in zip(hierarchies, node, strict=True)
            },
            "height": height(node),
            "max_height": sum(heights),
            "precision": 1.0 - precision_loss(counts),
            "DM": discernibility_loss(counts),
            "NCP": ncp_loss(counts),
            "NCP_published": ncp_published,
            "loss_with_suppressed": {
                "NCP": fully_lost_mean(ncp_published, rows_out, run.profile.rows_in - rows_out, 1.0)
            },
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
            "achieved": verdict.details["achieved"],
            "publish": "levels",
        }


def _base_codes(
    engine: Engine,
    encoded: Table,
    schema: Any,
    rules: Sequence[BaseRule],
    keep: Sequence[str],
    carried: Sequence[tuple[str, str]],
) -> tuple[Table, bool]:
    """The rows' base codes (one column per quasi-identifier) and the ``keep`` columns.

    When every quasi-identifier's base code is its encoded code (``identity`` rules: the
    discrete kinds), a native projection of the cached encoded rows. Otherwise one Python
    pass (a continuous value's interval, a code's position), cached in place of the
    encoded rows, which the caller then releases: the frequency set and the publication
    both read it.

    Returns:
        The table, and whether it was cached here (then the encoded rows are not needed).
    """
    n_qi = len(rules)
    native = zip(rules, schema.kinds, strict=True)
    if all(rule.kind == "identity" and kind.code_type == "long" for rule, kind in native):
        renamed = engine.with_columns(
            encoded, {base_column(i): Col(c) for i, c in enumerate(schema.code_columns)}
        )
        return engine.select(renamed, [base_column(i) for i in range(n_qi)] + list(keep)), False
    columns = [(base_column(i), "long") for i in range(n_qi)] + [(SENS, "long"), *carried]
    to_base = make_base_fn(schema, rules, keep)
    return engine.persist(engine.map_batches(encoded, to_base, columns), materialize=True), True


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
) -> tuple[SearchResult, DriverEvaluator | None]:
    """Run the configured search, each batch of nodes one pass.

    A pass is on the driver
    (:class:`~sparkanon.families.full_domain.rollup.DriverEvaluator`) when the frequency set
    was collected there, else distributed (:func:`evaluate_nodes`).

    Returns:
        The search's result, and the driver's evaluator when the search ran there (the
        publication asks it for the chosen node's failing classes).
    """
    passes = [0]
    driver = None
    if fset.local is not None:
        driver = DriverEvaluator(
            hierarchies,
            fset.local,
            models,
            len(schema.sensitive.values),
            schema.sensitive.declared_level_of,
            weights,
        )

    def evaluate(nodes: Sequence[Node]) -> dict[Node, NodeVerdict]:
        passes[0] += 1
        if driver is not None:
            out = driver.evaluate(nodes)
        else:
            out = evaluate_nodes(engine, fset, hierarchies, nodes, models, schema, weights)
        log.info("search: pass %d evaluated %d nodes", passes[0], len(nodes))
        return out

    heights = [h.height for h in hierarchies]
    search = ALGORITHMS[params.name].implementation
    task = SearchTask(
        heights, evaluate, params.max_suppression, params.metric, weights, driver is not None
    )
    return search(task, prune, params.batch_nodes), driver
