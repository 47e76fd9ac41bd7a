"""The synthesis family: condensation (Aggarwal 2015, section 20.3.1.4; Aggarwal and Yu 2004).

encode -> plan_blocks (the top of a Mondrian-style tree, as the per-block family) ->
cluster (MDAV on every block: groups of ``k`` to ``2k - 1`` records) -> reconcile (rows a
block cannot group join the nearest group of another block) -> dominance (a record that
dominates its whole block's sums is suppressed, counted as ``suppressed_dominant``; a
group whose sums fail the p% rule merges with its nearest group) -> condense (per group the
first and second order sums, the eigen-decomposition of its covariance, and synthetic
records drawn along its eigenvectors with the run's secret key; categorical attributes
drawn from the group's frequencies: :mod:`sparkanon.families.synthesis.condense`) -> publish to the
staging location, without the group ids.

**Randomness.** Every synthetic draw comes from the run key (``run.key``); the job's
``seed`` keeps only what protects nothing here: MDAV is deterministic and the blocks'
plan does not draw.

Why MDAV and not Aggarwal and Yu's static grouping (a random record and its ``k - 1``
nearest neighbours, repeated): both form groups of nearby records of at least ``k``;
MDAV's are ``k`` to ``2k - 1`` (the sizes the dynamic algorithm keeps), it is
deterministic without a seed, it runs per block on the spine every block family uses (so
10M rows condense block by block), and its distance is the spine's, which handles the
categorical attributes too. The paper's algorithm is in
:func:`sparkanon.algorithms.condensation.group_stats` 's package as ``static_groups``
(exercise 5) and seeds the streaming query's first groups.

Verification before commit: every group holds at least ``k`` records and passes the p%
rule; each group's synthetic mean and covariance lie within their stated bounds; the
release has no group column; no synthetic record equals an original record on every
attribute. ``metrics.json`` holds counts and rounded whole-table compatibility measures,
no covariance matrix and no mean. ``rows_out`` counts the
original records the groups represent (so rows out plus suppressed equal rows in);
``synthetic_records`` counts the published rows (equal unless ``algorithm.alpha`` is set).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sparkanon.algorithms.condensation._params import CondensationParams
from sparkanon.attributes.schema import CLASS
from sparkanon.config import JobConfig
from sparkanon.engine.base import Table
from sparkanon.families.base import Anonymized, Family, Run, Verdict
from sparkanon.families.synthesis.condense import (
    Condensed,
    CondensePlan,
    condense_groups,
    merge_dominant_groups,
    verify_condensed,
)
from sparkanon.families.synthesis.rules import synthesis_problems
from sparkanon.models import ModelSet
from sparkanon.per_block.group import Grouped, group_rows

GROUPING = "mdav"
"""The per-block algorithm that forms the groups."""


@dataclass(frozen=True)
class _State:
    """What verify and measure read."""

    models: ModelSet
    plan: CondensePlan
    grouped: Grouped
    merged: Table
    condensed: Condensed
    dominant: int


class SynthesisFamily(Family):
    """Static condensation: a synthetic release from per-group statistics."""

    name = "synthesis"
    row_level = True

    def config_problems(self, config: JobConfig) -> list[str]:  # noqa: D102
        return synthesis_problems(config)

    def anonymize(self, run: Run) -> Anonymized:  # noqa: D102
        engine, config, timer, schema = run.engine, run.config, run.timer, run.schema
        params = config.algorithm
        assert isinstance(params, CondensationParams)
        _, models = run.bound_models()
        k = models.min_class_size()
        grouped = group_rows(run, models, GROUPING)
        plan = CondensePlan.of(
            schema, k, lambda rows: params.synthetic_count(rows, k), run.key, params.dominance_p
        )
        merged, dominant = merge_dominant_groups(engine, grouped.placed, schema, plan, timer)
        condensed = condense_groups(
            engine, merged, schema, plan, timer, run.staging(), config.output.format, run.key
        )
        state = _State(models, plan, grouped, merged, condensed, dominant)
        cached = [grouped.encoded, grouped.clustered, condensed.table]
        suppressed = {"unplaced": grouped.reconciled.unplaced, "dominant": dominant}
        return Anonymized(condensed.publication, suppressed, state, cached + [merged])

    def verify(self, run: Run, done: Anonymized) -> Verdict:  # noqa: D102
        s: _State = done.state
        params = run.config.algorithm
        assert isinstance(params, CondensationParams)
        found = verify_condensed(
            run.engine, s.merged, s.condensed, run.schema, s.plan, params.significance
        )
        failed = found["failed"]
        return Verdict(
            violations=len(failed),
            rows=found["represented"],
            groups=found["groups"],
            failure="the synthetic release does not hold its guarantee: " + "; ".join(failed),
            details=found,
        )

    def measure(self, run: Run, done: Anonymized, verdict: Verdict) -> dict[str, Any]:  # noqa: D102
        s: _State = done.state
        found = verdict.details
        engine = run.engine
        before = engine.count(
            engine.aggregate(
                engine.where(s.grouped.placed, CLASS, ">=", 0), [CLASS], {"n": ("count", CLASS)}
            )
        )
        metrics: dict[str, Any] = {
            "synthetic_records": found["synthetic"],
            "groups": found["groups"],
            "group_size": {"min": found["smallest_group"], "k": s.plan.k},
            "rows_reconciled": s.grouped.reconciled.reconciled,
            "blocks": int(s.grouped.blocks["blocks"]),
            "dominance": {
                "rule": "p%",
                "p": s.plan.p,
                "attributes": [run.schema.kinds[i].name for i in s.plan.magnitudes],
                "groups_merged": int(before) - found["groups"],
                "records_suppressed": int(s.dominant),
                "dominant_groups": found["dominant_groups"],
            },
            "verification": {
                "worst_mean_excess": found["worst_mean_offset"],
                "mean_failures": found["mean_failures"],
                "covariance_failures": found["covariance_failures"],
                "copies": found["copies"],
                "copies_of_shared_combinations": found["copies_of_shared_combinations"],
            },
            # Whole-table utility, rounded: Aggarwal and Yu's measure (raw covariance
            # entries) and the associations only (off-diagonal, standardized). No matrix
            # and no mean is published: they are exact moments of the input.
            "covariance_compatibility": found["covariance_compatibility"],
            "correlation_compatibility": found["correlation_compatibility"],
        }
        return metrics


__all__ = ["SynthesisFamily"]
