"""Stage ``partition``: the top of the Mondrian-style tree, planned in one task.

The top of the tree (every node larger than ``partitioning.task_rows``) is planned by
:func:`sparkanon.algorithms.cuts.plan_local` in one ``applyInPandas`` group, on
all usable rows when there are at most ``partitioning.sample_rows`` of them (the tree
is then exactly the single-machine tree), otherwise on a seeded Bernoulli sample of
about that many rows. Only the cuts, one row per node, reach the driver. A sampled
plan only proposes: one pass routes every row to its top block natively (a nested
``CASE`` on the bins, no Python UDF: :func:`leaf_expression` through
:meth:`~sparkanon.engine.base.Engine.with_columns`)
and counts rows per block and sensitive value, and
:func:`~sparkanon.algorithms.cuts.settle_leaves` undoes any cut whose side fails
the model on those exact counts. Nodes of at most ``task_rows`` rows are cut further
inside the cluster stage by the same decision function on their own rows.

Earlier versions cut the top level by level, one pass of Python histograms over all
rows per level (about 7 passes at 10M rows); this stage makes one pass over a sample
and, above ``sample_rows``, one native pass for the exact counts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from sparkanon.algorithms.cuts import (
    BinRule,
    BlockTree,
    CutPolicy,
    Feasible,
    bin_rule,
    bins_matrix,
    plan_local,
    settle_leaves,
)
from sparkanon.attributes.schema import BLOCK, RID, SENS, Schema
from sparkanon.config import JobConfig
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.engine.expr import Arith, Clip, Col, Expr, Floor, Lit, When
from sparkanon.stages._common import MAX_STAT_ROWS, StageTimer, log

PLAN_COLUMNS = [
    ("_what", "long"),
    ("node", "long"),
    ("attr", "long"),
    ("cut", "long"),
]
"""One row per cut (``_what = 0``) and per infeasible leaf (``_what = 1``, no attr/cut)."""
_ONE = "_one"


@dataclass(frozen=True)
class TreeCuts:
    """How the tree is cut, shared by this stage and the cluster stage.

    Attributes:
        policy: the cut rule (:class:`~sparkanon.algorithms.cuts.CutPolicy`).
        feasible: the model's test on candidate sides' sensitive counts.
        n_values: sensitive domain size the histograms use (1 when the model does
            not look at the sensitive attribute).
    """

    policy: CutPolicy
    feasible: Feasible
    n_values: int

    def sensitive(self, frame: pd.DataFrame) -> np.ndarray:
        """The rows' sensitive codes as the histograms count them."""
        if self.n_values == 1:
            return np.zeros(len(frame), dtype=np.int64)
        return frame[SENS].to_numpy(dtype=np.int64)

    def bins(self, frame: pd.DataFrame, schema: Schema) -> np.ndarray:
        """Cut bins of every quasi-identifier of the rows, ``(n_attributes, n_rows)``."""
        codes = [frame[c].to_numpy() for c in schema.code_columns]
        return bins_matrix(schema.kinds, codes, self.policy.resolution)


def task_rows_for(configured: int, stop_rows: int, rows: int, parallelism: int) -> int:
    """Largest node handed whole to one task: small enough to give every core work.

    Args:
        configured: ``partitioning.task_rows``.
        stop_rows: the policy's ``stop_rows`` (a node that small is never cut anyway).
        rows: usable rows.
        parallelism: the engine's parallelism.

    Returns:
        ``min(configured, rows / (2 * parallelism))``, at least ``stop_rows``.
    """
    spread = math.ceil(rows / max(2 * parallelism, 1))
    return max(min(configured, spread), stop_rows, 1)


def bin_expression(column: str, rule: BinRule) -> Expr:
    """A :class:`~sparkanon.algorithms.cuts.BinRule` on a code column, as an expression."""
    code = Col(column)
    if rule.op == "scale":
        scaled = Floor(Arith("*", code, Lit(float(rule.factor))))
        return Clip(scaled, 0, rule.factor - 1)
    if rule.op == "divide":
        return Arith("//", code, Lit(int(rule.factor)))
    return Floor(code)


def leaf_expression(splits: Mapping[int, tuple[int, int]], bins: Sequence[Expr]) -> Expr:
    """Each row's leaf of a cut tree, as nested comparisons (:meth:`BlockTree.assign`).

    Args:
        splits: ``node -> (attribute index, cut bin)``; heap node ids, bins ``<= cut``
            go to ``2 * node``, the others to ``2 * node + 1``.
        bins: per attribute, its bin (:func:`bin_expression`).
    """

    def leaf(node: int) -> Expr:
        if node not in splits:
            return Lit(node)
        attr, cut = splits[node]
        return When(bins[attr], "<=", Lit(int(cut)), leaf(2 * node), leaf(2 * node + 1))

    return leaf(1)


def route(engine: Engine, table: Table, schema: Schema, part: TreeCuts, tree: BlockTree) -> Table:
    """Add ``_block``: each row's leaf of ``tree``, natively when every kind's bins allow."""
    rules = [bin_rule(k, part.policy.resolution) for k in schema.kinds]
    if all(r is not None for r in rules):
        bins = [bin_expression(c, r) for c, r in zip(schema.code_columns, rules, strict=True)]
        return engine.with_columns(table, {BLOCK: leaf_expression(tree.splits, bins)})
    columns = engine.schema_of(table)

    def assign(batch: pd.DataFrame) -> pd.DataFrame:
        return batch.assign(**{BLOCK: tree.assign(part.bins(batch, schema))})

    return engine.map_batches(table, assign, list(columns) + [(BLOCK, "long")])


def make_plan_fn(schema: Schema, part: TreeCuts, policy: CutPolicy, feasible: Feasible) -> BatchFn:
    """Plan the top of the tree on the rows of the one group (all rows, or a sample)."""
    names = [n for n, _ in PLAN_COLUMNS]

    def plan(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.sort_values(RID).reset_index(drop=True)  # arrival order varies
        tree = BlockTree()
        _, infeasible = plan_local(
            schema.kinds,
            part.bins(frame, schema),
            part.sensitive(frame),
            part.n_values,
            policy,
            feasible,
            tree=tree,
            deal=False,
        )
        rows = [[0, node, a, c] for node, (a, c) in sorted(tree.splits.items())]
        rows += [[1, node, -1, -1] for node in sorted(infeasible)]
        return pd.DataFrame(rows, columns=names)

    return plan


def plan_top(
    engine: Engine,
    encoded: Table,
    schema: Schema,
    part: TreeCuts,
    rows: int,
    task_rows: int,
    timer: StageTimer,
    sample_rows: int = 1_000_000,
    seed: int = 0,
) -> tuple[BlockTree, set[int]]:
    """Plan the tree down to nodes of at most ``task_rows`` rows.

    Args:
        engine: the engine.
        encoded: the encoded rows.
        schema: the encoded schema.
        part: the cut rule and model test.
        rows: usable rows (the root's).
        task_rows: nodes at most this large are left to the cluster stage.
        timer: the stage timer.
        sample_rows: plan on all rows up to this many, else on a sample of about as many.
        seed: the job seed (the sample).

    Returns:
        The top tree and its infeasible leaves (``infeasible: reconcile`` only).
    """
    if rows <= task_rows:
        return BlockTree(), set()
    fraction = min(1.0, sample_rows / rows)
    exact = fraction >= 1.0
    policy, feasible = part.policy, part.feasible
    if not exact:
        # On a sample, sizes scale with the fraction and the model cannot be judged:
        # the exact counts below decide.
        policy = replace(
            policy,
            stop_rows=max(1, int(task_rows * fraction)),
            min_side=max(1, math.ceil(policy.min_side * fraction)),
        )

        def feasible(counts: np.ndarray) -> np.ndarray:
            return np.ones(len(counts), dtype=bool)

    with timer.stage("plan_blocks"):
        source = encoded if exact else engine.sample(encoded, fraction, seed)
        # The histograms split rows by sensitive value only when the model looks at it.
        sens = [SENS] if part.n_values > 1 else []
        needed = [RID, *schema.code_columns, *sens]
        types = dict(engine.schema_of(source))
        keyed = engine.map_batches(
            engine.select(source, needed),
            lambda b: b.assign(**{_ONE: np.zeros(len(b), dtype=np.int64)}),
            [(n, types[n]) for n in needed] + [(_ONE, "long")],
        )
        plan = engine.collect_small(
            engine.map_groups(
                keyed, _ONE, make_plan_fn(schema, part, policy, feasible), PLAN_COLUMNS
            ),
            MAX_STAT_ROWS,
        )
        what = plan["_what"].to_numpy(dtype=np.int64)
        nodes = plan["node"].to_numpy(dtype=np.int64)
        attrs, cuts = plan["attr"].to_numpy(dtype=np.int64), plan["cut"].to_numpy(dtype=np.int64)
        splits = np.flatnonzero(what == 0)
        tree = BlockTree({int(nodes[i]): (int(attrs[i]), int(cuts[i])) for i in splits})
        infeasible = {int(n) for n in nodes[what == 1]}
        if not exact and tree.splits:
            counted = engine.aggregate(
                route(
                    engine,
                    engine.select(encoded, list(schema.code_columns) + sens),
                    schema,
                    part,
                    tree,
                ),
                [BLOCK, *sens],
                {"n": ("count", BLOCK)},
            )
            exact_counts = engine.collect_small(counted, MAX_STAT_ROWS)
            if not sens:
                exact_counts = exact_counts.assign(**{SENS: 0})
            counts: dict[int, np.ndarray] = {}
            for block, value, n in exact_counts[[BLOCK, SENS, "n"]].itertuples(index=False):
                vec = counts.setdefault(int(block), np.zeros(part.n_values, dtype=np.int64))
                vec[int(value) if part.n_values > 1 else 0] += int(n)
            proposed = len(tree.splits)
            tree, infeasible = settle_leaves(tree, counts, part.policy, part.feasible)
            log.info(
                "plan_blocks: %d cuts proposed on a %.1f%% sample, %d kept on exact counts",
                proposed,
                100 * fraction,
                len(tree.splits),
            )
        timer.note(top_blocks=len(tree.splits) + 1)
        log.info(
            "plan_blocks: top planned on %s rows, %d cuts, %d top blocks",
            "all" if exact else "sampled",
            len(tree.splits),
            len(tree.splits) + 1,
        )
    return tree, infeasible


class TopPlan(NamedTuple):
    """The top blocks of a job: the cut tree, its infeasible leaves, the cut rule it follows."""

    tree: BlockTree
    infeasible: set[int]
    part: TreeCuts


def plan_job_top(
    engine: Engine,
    config: JobConfig,
    encoded: Table,
    schema: Schema,
    part: TreeCuts,
    rows: int,
    timer: StageTimer,
) -> TopPlan:
    """:func:`plan_top` with the job's ``partitioning`` settings and parallelism.

    Args:
        engine: the engine.
        config: the job config (``partitioning.task_rows``, ``sample_rows``, ``seed``).
        encoded: the encoded rows.
        schema: the encoded schema.
        part: the cut rule.
        rows: usable rows.
        timer: the stage timer.
    """
    task_rows = task_rows_for(
        config.partitioning.task_rows, part.policy.stop_rows, rows, engine.parallelism
    )
    tree, infeasible = plan_top(
        engine,
        encoded,
        schema,
        part,
        rows,
        task_rows,
        timer,
        sample_rows=config.partitioning.sample_rows,
        seed=config.seed,
    )
    return TopPlan(tree, infeasible, part)
