"""The synthesis family: condensation (Aggarwal 2015, section 20.3.1.4; Aggarwal and Yu 2004).

encode -> plan_blocks (the top of a Mondrian-style tree, as the per-block family) ->
cluster (MDAV on every block: groups of ``k`` to ``2k - 1`` records) -> reconcile (rows a
block cannot group join the nearest group of another block) -> condense (per group the
first and second order sums, the eigen-decomposition of its covariance, and synthetic
records drawn along its eigenvectors; categorical attributes drawn from the group's
frequencies: :mod:`sparkanon.stages.condense`) -> publish to the staging location.

Why MDAV and not Aggarwal and Yu's static grouping (a random record and its ``k - 1``
nearest neighbours, repeated): both form groups of nearby records of at least ``k``;
MDAV's are ``k`` to ``2k - 1`` (the sizes the dynamic algorithm keeps), it is
deterministic without a seed, it runs per block on the spine every block family uses (so
10M rows condense block by block), and its distance is the spine's, which handles the
categorical attributes too. The paper's algorithm is in
:func:`sparkanon.algorithms.condensation.group_stats` 's package as ``static_groups``
(exercise 5) and seeds the streaming query's first groups.

Verification before commit: every group holds at least ``k`` records; each group's
synthetic mean equals its own, its synthetic covariance lies within the stated bound; no
synthetic record equals an original record on every attribute. ``rows_out`` counts the
original records the groups represent (so rows out plus suppressed equal rows in);
``synthetic_records`` counts the published rows (equal unless ``algorithm.alpha`` is set).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sparkanon.algorithms import algorithms_of
from sparkanon.algorithms.condensation._params import CondensationParams
from sparkanon.algorithms.condensation.compatibility import (
    correlation_compatibility,
    covariance_compatibility,
)
from sparkanon.families.base import Anonymized, Family, Run, Verdict
from sparkanon.families.blocks import Grouped, group_rows
from sparkanon.models import ModelSet
from sparkanon.stages.condense import CondensePlan, condense_groups, verify_condensed

GROUPING = "mdav"
"""The per-block algorithm that forms the groups."""


@dataclass(frozen=True)
class _State:
    """What verify and measure read."""

    models: ModelSet
    plan: CondensePlan
    grouped: Grouped


class SynthesisFamily(Family):
    """Static condensation: a synthetic release from per-group statistics."""

    name = "synthesis"
    algorithms = algorithms_of("synthesis")

    def anonymize(self, run: Run) -> Anonymized:  # noqa: D102
        engine, config, timer, schema = run.engine, run.config, run.timer, run.schema
        params = config.algorithm
        assert isinstance(params, CondensationParams)
        _, models = run.bound_models()
        k = models.min_class_size()
        grouped = group_rows(run, models, GROUPING)
        plan = CondensePlan.of(schema, k, lambda rows: params.synthetic_count(rows, k), config.seed)
        publication = condense_groups(
            engine,
            grouped.placed,
            schema,
            plan,
            timer,
            run.staging(),
            config.output.format,
            run.key,
        )
        state = _State(models, plan, grouped)
        cached = [grouped.encoded, grouped.clustered]
        return Anonymized(publication, {"unplaced": grouped.reconciled.unplaced}, state, cached)

    def verify(self, run: Run, done: Anonymized) -> Verdict:  # noqa: D102
        s: _State = done.state
        params = run.config.algorithm
        assert isinstance(params, CondensationParams)
        found = verify_condensed(
            run.engine, s.grouped.placed, done.publication, run.schema, s.plan, params.significance
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
        metrics: dict[str, Any] = {
            "synthetic_records": found["synthetic"],
            "groups": found["groups"],
            "group_size": {"min": found["smallest_group"], "k": s.plan.k},
            "rows_reconciled": s.grouped.reconciled.reconciled,
            "blocks": int(s.grouped.blocks["blocks"]),
            "verification": {
                "worst_mean_offset": found["worst_mean_offset"],
                "mean_failures": found["mean_failures"],
                "covariance_failures": found["covariance_failures"],
                "copies": found["copies"],
                "copies_of_shared_combinations": found["copies_of_shared_combinations"],
            },
            "covariance_compatibility": _compatibility(found, covariance_compatibility),
            "correlation_compatibility": _compatibility(found, correlation_compatibility),
            # The matrices the two measures compare, in the attributes' units (the report
            # draws them side by side).
            "covariance": {
                "columns": found["covariance_columns"],
                "original": found["covariance"],
                "synthetic": found["synthetic_covariance"],
            },
        }
        return metrics


def _compatibility(found: dict[str, Any], measure: Any) -> float | None:
    """A compatibility measure over the whole release (original vs synthetic covariance).

    ``covariance_compatibility`` is Aggarwal and Yu 2004's (raw entries);
    ``correlation_compatibility`` reads the associations only (off-diagonal, standardized).
    ``None`` where undefined (too few attributes).
    """
    original, synthetic = found.get("covariance"), found.get("synthetic_covariance")
    if original is None or synthetic is None or np.asarray(original).size < 2:
        return None
    value = float(measure(np.asarray(original), np.asarray(synthetic)))
    return None if np.isnan(value) else value


__all__ = ["SynthesisFamily"]
