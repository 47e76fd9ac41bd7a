"""The per-block family: clustering and partitioning algorithms, one block at a time.

encode -> partition (the top of a Mondrian-style tree planned on the driver from
per-node counts) -> cluster (the rest of the tree and the algorithm on every block, then
the repair step) -> reconcile (rows a block cannot place go to the nearest block's
classes; under a model that compares classes with the whole table, to a residual class)
-> summarise (per-class published values and metric terms) -> publish (to the staging
location). The per-block step summarises the classes it forms itself
(:func:`~sparkanon.families.blocks.summarise.with_class_values`), so when reconciliation moves no
row, the summary table is a filter of the clustered rows and publishing a map over them:
one shuffle of the rows (to their top block) before they are written. When it moves rows,
the placed rows are grouped by block again and joined with the summaries on class.

Verification groups the published rows by their published quasi-identifiers
and checks every group against every model (:mod:`sparkanon.stages.verify`); the metrics
are the registry's (:mod:`sparkanon.metrics.registry`), one aggregation over the class
summaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from sparkanon.config import JobConfig
from sparkanon.engine.base import Table
from sparkanon.families.base import Anonymized, Family, Run, Verdict, verify_classes
from sparkanon.families.blocks.measure import measure
from sparkanon.families.blocks.rules import block_job_problems
from sparkanon.families.blocks.summarise import (
    carried_columns,
    make_summary_fn,
    summaries_of_heads,
    summarise_classes,
    summary_columns,
    summary_reads,
    with_class_values,
)
from sparkanon.metrics.ncp import fully_lost_mean
from sparkanon.metrics.registry import Metric, RunFacts, default_metrics
from sparkanon.metrics.utility import discernibility
from sparkanon.models import ModelSet, SensitiveDomain
from sparkanon.per_block.cluster import Finish
from sparkanon.per_block.group import group_rows
from sparkanon.per_block.reconcile import Reconciled
from sparkanon.publications import PUBLISHERS
from sparkanon.stages.publish import staged

LARGE_CLASS_FACTOR = 20
"""A run warns when its largest class holds more than this many times ``k`` rows."""


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
    classes = float(measured["classes"])
    return {
        "NCP": fully_lost_mean(
            0.0 if measured["NCP"] is None else measured["NCP"], classes, lost, weight_sum
        ),
        "GCP": fully_lost_mean(measured["GCP"] or 0.0, rows_out, lost, 100.0),
        "NCP_by_attribute": {
            name: fully_lost_mean(value, rows_out, lost, 100.0)
            for name, value in measured["NCP_by_attribute"].items()
        },
    }


@dataclass(frozen=True)
class _State:
    """What verify and measure read: the bound models and what the stages counted."""

    models: ModelSet
    domain: SensitiveDomain
    summaries: Table
    registry: tuple[Metric, ...]
    blocks: dict[str, Any]
    reconciled: Reconciled


class BlockFamily(Family):
    """Per-block clustering and partitioning (MAA-SLIE, GPKC, MAA-SAE, MDAV, (K,L), Mondrian)."""

    name = "blocks"

    def config_problems(self, config: JobConfig) -> list[str]:  # noqa: D102
        return block_job_problems(config)

    def anonymize(self, run: Run) -> Anonymized:  # noqa: D102
        engine, config, timer, schema = run.engine, run.config, run.timer, run.schema
        domain, models = run.bound_models()
        publisher = PUBLISHERS[config.output.publish](schema, run.raw.passthrough_types)
        registry = default_metrics(len(schema.kinds))
        base = config.algorithm.entropy_base
        summarise = make_summary_fn(schema, base, publisher, registry)
        finish = Finish(
            partial(
                with_class_values,
                summarise=summarise,
                reads=summary_reads(schema),
                publisher=publisher,
                metrics=registry,
            ),
            carried_columns(publisher, registry),
        )
        grouped = group_rows(run, models, config.algorithm.name, finish)
        placed, blocks, reconciled = grouped.placed, grouped.blocks, grouped.reconciled
        if grouped.as_clustered:  # the rows carry their class's values: no join
            summaries = summaries_of_heads(engine, grouped.clustered, registry, timer)
            publish_rows = publisher.publish_carried
            rows: Table = grouped.clustered
        else:  # reconciled rows changed classes after the per-block step
            columns = summary_columns(publisher, registry)
            summaries = summarise_classes(engine, placed, summarise, columns, timer)
            publish_rows = partial(publisher.publish, summaries=summaries)
            rows = placed
        cached = [grouped.encoded, grouped.clustered, summaries]
        with timer.stage("publish"):
            publication = staged(
                engine,
                publish_rows(engine, rows, kept=run.raw.kept),
                run.staging(),
                config.output.format,
                run.key,
            )
        state = _State(models, domain, summaries, registry, blocks, reconciled)
        return Anonymized(publication, {"unplaced": reconciled.unplaced}, state, cached)

    def verify(self, run: Run, done: Anonymized) -> Verdict:  # noqa: D102
        s: _State = done.state
        return verify_classes(run, done.publication, s.models, s.domain)

    def measure(self, run: Run, done: Anonymized, verdict: Verdict) -> dict[str, Any]:  # noqa: D102
        s: _State = done.state
        schema, config = run.schema, run.config
        facts = RunFacts(
            rows_out=verdict.rows,
            k=s.models.min_class_size(),
            names=tuple(schema.qi_names),
            weights=tuple(kind.weight for kind in schema.kinds),
            has_levels=schema.sensitive.has_levels,
        )
        measured = measure(run.engine, s.summaries, s.registry, facts)
        rows_in = run.profile.rows_in
        lost = loss_with_suppressed(measured, rows_in, verdict.rows, sum(facts.weights))
        blocks = s.blocks
        metrics: dict[str, Any] = {
            "rows_reconciled": s.reconciled.reconciled,
            "classes": measured.pop("classes"),
            "published_classes": verdict.groups,
            "class_size": measured.pop("class_size"),
            "blocks": int(blocks["blocks"]),
            "block_rows": {"min": blocks["min"], "max": blocks["max"]},
            "infeasible_blocks": int(blocks["infeasible"]),
            "repair_merges": int(blocks["repairs"]),
        }
        if s.reconciled.residual_rows:
            metrics["residual_class"] = {
                "rows_without_class": s.reconciled.residual_rows,
                "classes_absorbed": s.reconciled.residual_absorbed,
            }
        metrics |= measured | {"loss_with_suppressed": lost}
        metrics |= {
            "DM": discernibility(verdict.details["dm"], rows_in, verdict.rows),
            "achieved": verdict.details["achieved"],
            "max_block_rows": config.partitioning.max_block_rows,
            "warnings": class_size_warnings(metrics["class_size"]["max"], facts.k),
        }
        return metrics
