"""Stage ``partition``: the top of the Mondrian-style tree, cut on the cluster.

Level by level, one pass over the encoded rows builds, for every node still larger
than ``partitioning.task_rows``, the histogram of every quasi-identifier's bins by
sensitive value (a per-batch partial histogram merged by an aggregation); each node's
cut is decided on the cluster by :func:`sparkanon.algorithms.partition.decide` (one
``applyInPandas`` group per node) and only the decisions, one row per node, reach the
driver. A decision already knows its sides' sizes and whether they pass the model, so
a level costs one pass. Nodes of at most ``task_rows`` rows are cut further inside the
cluster stage by the same decision function on their own rows
(:func:`sparkanon.algorithms.partition.plan_local`): the tree is the same wherever a
node is cut.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sparkanon.algorithms.partition import (
    BlockTree,
    CutPolicy,
    Feasible,
    NodeHistogram,
    bins_matrix,
    decide,
)
from sparkanon.attributes.schema import BLOCK, SENS, Schema
from sparkanon.engine.base import Engine, Table
from sparkanon.stages._common import MAX_STAT_ROWS, StageTimer, log

HISTOGRAM_COLUMNS = [
    (BLOCK, "long"),
    ("_attr", "long"),
    ("_bin", "long"),
    ("_sv", "long"),
    ("n", "long"),
]
DECISION_COLUMNS = [
    (BLOCK, "long"),
    ("attr", "long"),
    ("cut", "long"),
    ("left", "long"),
    ("right", "long"),
    ("left_ok", "long"),
    ("right_ok", "long"),
]


@dataclass(frozen=True)
class Partitioning:
    """How the tree is cut, shared by this stage and the cluster stage.

    Attributes:
        policy: the cut rule (:class:`~sparkanon.algorithms.partition.CutPolicy`).
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


def make_histogram_fn(
    schema: Schema, part: Partitioning, tree: BlockTree, nodes: frozenset[int]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Partial histograms ``(_block, _attr, _bin, _sv, n)`` of the nodes being cut.

    Counts are pre-aggregated per batch (a mergeable accumulator), so the engine only
    sums them.
    """
    wanted = np.fromiter(nodes, dtype=np.int64)
    names = [n for n, _ in HISTOGRAM_COLUMNS]

    def histogram(batch: pd.DataFrame) -> pd.DataFrame:
        bins = part.bins(batch, schema)
        node = tree.assign(bins)
        keep = np.isin(node, wanted)
        sens = part.sensitive(batch)[keep]
        parts = []
        for a in range(bins.shape[0]):
            frame = pd.DataFrame({BLOCK: node[keep], "_bin": bins[a, keep], "_sv": sens})
            counts = frame.groupby([BLOCK, "_bin", "_sv"], sort=False).size().reset_index(name="n")
            counts["_attr"] = a
            parts.append(counts)
        if not parts:
            return pd.DataFrame({n: [] for n in names})
        return pd.concat(parts, ignore_index=True)[names]

    return histogram


def histograms_of(frame: pd.DataFrame, n_attributes: int, n_values: int) -> list[NodeHistogram]:
    """One node's merged histogram table ``(_attr, _bin, _sv, n)`` as per-attribute histograms."""
    out = []
    for a in range(n_attributes):
        part = frame[frame["_attr"] == a]
        bins, inverse = np.unique(part["_bin"].to_numpy(dtype=np.int64), return_inverse=True)
        counts = np.zeros((len(bins), n_values), dtype=np.int64)
        np.add.at(counts, (inverse, part["_sv"].to_numpy(dtype=np.int64)), part["n"].to_numpy())
        out.append(NodeHistogram(bins, counts))
    return out


def make_decide_fn(schema: Schema, part: Partitioning) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Decide one node's cut from its merged histograms (``attr = -1``: not cut)."""
    names = [n for n, _ in DECISION_COLUMNS]

    def decide_node(frame: pd.DataFrame) -> pd.DataFrame:
        block = int(frame[BLOCK].iloc[0])
        hists = histograms_of(frame, len(schema.kinds), part.n_values)
        d = decide(schema.kinds, hists, part.policy, part.feasible)
        row = (
            [block, -1, -1, 0, 0, 0, 0]
            if d is None
            else [block, d.attr, d.cut, d.left_size, d.right_size, int(d.left_ok), int(d.right_ok)]
        )
        return pd.DataFrame([row], columns=names)

    return decide_node


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


def plan_top(
    engine: Engine,
    encoded: Table,
    schema: Schema,
    part: Partitioning,
    rows: int,
    task_rows: int,
    timer: StageTimer,
) -> tuple[BlockTree, set[int]]:
    """Cut the tree on the cluster until every node holds at most ``task_rows`` rows.

    Args:
        engine: the engine.
        encoded: the encoded rows.
        schema: the encoded schema.
        part: the cut rule and model test.
        rows: rows of the root.
        task_rows: nodes at most this large are left to the cluster stage.
        timer: the stage timer.

    Returns:
        The top tree and its infeasible leaves (``infeasible: reconcile`` only).
    """
    tree = BlockTree()
    infeasible: set[int] = set()
    pending = {1: rows} if rows > task_rows else {}
    levels = 0
    with timer.stage("partition"):
        while pending:
            levels += 1
            partial = engine.map_batches(
                encoded,
                make_histogram_fn(schema, part, tree, frozenset(pending)),
                HISTOGRAM_COLUMNS,
            )
            merged = engine.aggregate(partial, [BLOCK, "_attr", "_bin", "_sv"], {"n": ("sum", "n")})
            decisions = engine.collect_small(
                engine.map_groups(merged, BLOCK, make_decide_fn(schema, part), DECISION_COLUMNS),
                MAX_STAT_ROWS,
            )
            pending = {}
            for r in decisions.to_dict("records"):
                block = int(r[BLOCK])
                if r["attr"] < 0:
                    continue
                tree.split(block, int(r["attr"]), int(r["cut"]))
                for child, size, ok in (
                    (2 * block, int(r["left"]), r["left_ok"]),
                    (2 * block + 1, int(r["right"]), r["right_ok"]),
                ):
                    if not ok:
                        infeasible.add(child)
                    elif size > task_rows:
                        pending[child] = size
        log.info(
            "partition: %d levels on the cluster, %d cuts, %d top blocks",
            levels,
            len(tree.splits),
            len(tree.splits) + 1,
        )
    return tree, infeasible
