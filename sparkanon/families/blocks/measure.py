"""Stage ``measure``: every metric of the registry, in one aggregation over the class summaries.

Each metric's per-class terms were computed by the summarise stage
(:mod:`sparkanon.metrics.registry`); here one engine aggregation computes every
term's totals and each metric finishes from them. The driver receives one row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sparkanon.engine.base import Engine, Table
from sparkanon.metrics.registry import Metric, RunFacts, aggregation_spec, finish_all
from sparkanon.stages._common import one_row


def measure(
    engine: Engine, summaries: Table, metrics: Sequence[Metric], facts: RunFacts
) -> dict[str, Any]:
    """Every metric's value, from the per-class summary table."""
    aggregated = one_row(engine, summaries, aggregation_spec(metrics))
    return finish_all(metrics, aggregated, facts)
