"""The per-block spine: encode, plan the blocks, cluster every block, reconcile.

Three families share it: the per-block family (:mod:`sparkanon.families.blocks`) and the
synthesis family's groups (:mod:`sparkanon.families.synthesis`) through
:func:`group_rows`; the relational-transaction family
(:mod:`sparkanon.families.transaction`) plans its blocks with
:func:`~sparkanon.per_block.plan.plan_job_top` and forms its clusters with its own step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sparkanon.algorithms import ALGORITHMS, BlockContext, native_target
from sparkanon.algorithms.cuts import CutPolicy, ModelTest
from sparkanon.attributes.schema import Schema
from sparkanon.config import JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.models import ModelSet
from sparkanon.per_block.cluster import BlockRun, Finish, cluster_rows
from sparkanon.per_block.plan import TreeCuts, plan_job_top
from sparkanon.per_block.reconcile import Reconciled, reconcile_rows
from sparkanon.stages._common import StageTimer
from sparkanon.stages.encode import encode_input
from sparkanon.stages.profile import Profile
from sparkanon.stages.read import RawInput


class RunInputs(Protocol):
    """What the spine reads of a run (a family's :class:`~sparkanon.families.base.Run`)."""

    engine: Engine
    config: JobConfig
    timer: StageTimer
    schema: Schema
    raw: RawInput
    profile: Profile


def tree_cuts(config: JobConfig, schema: Schema, models: ModelSet) -> TreeCuts:
    """The cut rule of the job and the models' test on candidate sides."""
    policy = CutPolicy(
        rule=ALGORITHMS[config.algorithm.name].implementation.cut_rule,
        min_side=models.min_class_size(),
        stop_rows=config.partitioning.max_block_rows,
        infeasible=config.partitioning.infeasible_blocks,
    )
    n_values = len(schema.sensitive.values) if models.uses_sensitive else 1
    # Without the sensitive attribute the histograms carry sizes only.
    feasible = ModelTest(models, schema.sensitive.declared_level_of, models.uses_sensitive)
    return TreeCuts(policy, feasible, n_values)


@dataclass(frozen=True)
class Grouped:
    """The rows in classes, block by block: what :func:`group_rows` returns.

    Attributes:
        encoded: the encoded usable rows (cached).
        clustered: the rows with their block and class (cached).
        placed: the rows after reconciliation (class ``-1``: unplaced, suppressed).
        blocks: the block statistics of the cluster stage.
        reconciled: what reconciliation did.
    """

    encoded: Table
    clustered: Table
    placed: Table
    blocks: dict[str, Any]
    reconciled: Reconciled

    @property
    def as_clustered(self) -> bool:
        """Whether every class is as the per-block step formed it (nothing reconciled)."""
        return self.reconciled == Reconciled()


def group_rows(
    run: RunInputs, models: ModelSet, algorithm: str, finish: Finish | None = None
) -> Grouped:
    """Encode -> plan_blocks -> cluster (``algorithm`` on every block) -> reconcile.

    The spine every per-block family shares (the clustering families, and the synthesis
    family's groups). ``finish`` is what the per-block step adds to its rows
    (:class:`~sparkanon.per_block.cluster.Finish`); reconciliation sees the rows without it.
    """
    engine, config, timer, schema = run.engine, run.config, run.timer, run.schema
    # The input is scanned twice (profile, then encode): caching the raw rows in the
    # profile's pass is slower at 10M rows (docs/benchmarks.md section 5 measures it).
    encoded, _ = encode_input(engine, config, run.raw, schema, timer)
    part = tree_cuts(config, schema, models)
    plan = plan_job_top(engine, config, encoded, schema, part, run.profile.usable, timer)
    ctx = BlockContext.of(schema, native_target(models), models, config.algorithm)
    block_run = BlockRun(ctx, algorithm, config.seed)
    clustered, blocks = cluster_rows(engine, encoded, plan, block_run, timer, finish)
    added = {c for c, _ in finish.columns} if finish else set()
    rows = engine.select(clustered, [c for c, _ in engine.schema_of(clustered) if c not in added])
    placed, reconciled = reconcile_rows(engine, rows, blocks["unplaced"], block_run, timer)
    return Grouped(encoded, clustered, placed, blocks, reconciled)
