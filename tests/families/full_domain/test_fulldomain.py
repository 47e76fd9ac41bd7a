"""Full-domain generalization (issue 12, Aggarwal 2015, section 20.3.1): searches, engine, job.

* The lattice searches (Samarati, Incognito, exhaustive) on random small tables, held to
  a brute-force reference computed here: every node's classes grouped with pandas and
  checked with the real privacy models, acceptability, minimality and loss recomputed.
* The engine's rollup of the bottom frequency set (:func:`evaluate_nodes`) against the
  same independent evaluator, subset nodes with dropped attributes included.
* The Adult jobs (``conf/adult_fd_*.yaml``) on the local engine: verified, rows
  conserved, published values among the node's level labels, every published class
  satisfying the model, the loss metrics recomputed from the output, a rerun identical;
  Spark against the local engine on the k-anonymity config.
* Bad config: exit code 2, an error naming the key, nothing written.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sparkanon.algorithms.lattice.search import (
    DROPPED,
    NodeVerdict,
    SearchResult,
    SearchTask,
    exhaustive,
    height,
    incognito,
    prunable,
    samarati,
)
from sparkanon.attributes.levels import LevelHierarchy
from sparkanon.attributes.schema import SENS, Schema, SensitiveLevels
from sparkanon.cli import run_command
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import EXIT_OK, EXIT_USER, ConfigError
from sparkanon.families import load_config, parse_config
from sparkanon.families.full_domain import rollup as driver_rollup
from sparkanon.families.full_domain.lattice import (
    base_column,
    evaluate_nodes,
    frequency_set,
    node_key,
)
from sparkanon.families.full_domain.rollup import DriverEvaluator
from sparkanon.models import ClassSummaries, EntropyLDiversity, KAnonymity, ModelSet
from sparkanon.models.base import SensitiveDomain
from sparkanon.pipeline import run_job
from tests._adult import ADULT_CSV, ROOT, adult_config, adult_sample, write_config
from tests._inputs import csv_input, leftovers, traced_rows

Node = tuple[int, ...]

# ---------------------------------------------------------------- random tables


@dataclass(frozen=True, eq=False)
class Table:
    """A small random table over base codes, with a random hierarchy of levels per column.

    Attributes:
        maps: ``maps[j][h][b]``: node at level ``h`` of base code ``b`` of column ``j``.
        base: ``(n, d)`` base codes of the rows.
        sens: ``(n,)`` sensitive value codes.
        n_values: the sensitive domain's size.
        weights: each column's NCP weight.
    """

    maps: tuple[tuple[np.ndarray, ...], ...]
    base: np.ndarray
    sens: np.ndarray
    n_values: int
    weights: tuple[float, ...]

    @property
    def d(self) -> int:
        return len(self.maps)

    @property
    def rows(self) -> int:
        return len(self.sens)

    @property
    def heights(self) -> list[int]:
        return [len(m) - 1 for m in self.maps]

    def ncp(self, j: int, level: int) -> np.ndarray:
        """NCP of each node of column ``j`` at ``level``: its base codes over all, 0 for one."""
        m = self.maps[j][level]
        members = np.bincount(m, minlength=int(m.max()) + 1)
        return np.where(members > 1, members / len(m), 0.0)

    def hierarchies(self) -> list[LevelHierarchy]:
        return [
            LevelHierarchy(
                f"q{j}",
                tuple(self.maps[j]),
                tuple(
                    tuple(f"q{j}h{h}n{x}" for x in range(int(m.max()) + 1))
                    for h, m in enumerate(self.maps[j])
                ),
                tuple(self.ncp(j, h) for h in range(len(self.maps[j]))),
            )
            for j in range(self.d)
        ]


@st.composite
def tables(draw: st.DrawFn, max_qi: int = 4, max_rows: int = 80) -> Table:
    """2..max_qi columns of 1..5 base values and 1..3 levels above the base, 10..max_rows rows.

    The levels merge the nodes below at random; the top is usually the root.
    """
    d = draw(st.integers(2, max_qi))
    maps = []
    for _ in range(d):
        size = draw(st.integers(1, 5))
        levels = [np.arange(size, dtype=np.int64)]
        above = draw(st.integers(1, 3))
        for step in range(above):
            prev = levels[-1]
            if step == above - 1 and draw(st.integers(0, 4)):
                # Mostly the top is the root (one node), as in ARX hierarchies.
                levels.append(np.zeros(size, dtype=np.int64))
                continue
            n_prev = int(prev.max()) + 1
            parent = np.array(
                draw(st.lists(st.integers(0, n_prev - 1), min_size=n_prev, max_size=n_prev)),
                dtype=np.int64,
            )
            # Parents of the nodes of the level below, renumbered densely in base order.
            raw = parent[prev]
            _, first = np.unique(raw, return_index=True)
            order = {int(raw[i]): rank for rank, i in enumerate(sorted(first))}
            levels.append(np.array([order[int(x)] for x in raw], dtype=np.int64))
        maps.append(tuple(levels))
    n = draw(st.integers(10, max_rows))
    base = np.column_stack(
        [
            np.array(draw(st.lists(st.integers(0, len(m[0]) - 1), min_size=n, max_size=n)))
            for m in maps
        ]
    ).astype(np.int64)
    n_values = draw(st.integers(2, 5))
    sens = np.array(
        draw(st.lists(st.integers(0, n_values - 1), min_size=n, max_size=n)), dtype=np.int64
    )
    weights = tuple(draw(st.sampled_from([0.5, 1.0, 2.0])) for _ in range(d))
    return Table(tuple(maps), base, sens, n_values, weights)


# ---------------------------------------------------------------- independent evaluator


def verdict(table: Table, models: ModelSet, node: Node) -> NodeVerdict:
    """The node's classes grouped with pandas and checked with the models."""
    kept = [j for j, level in enumerate(node) if level != DROPPED]
    assert kept, "a node keeps at least one attribute"
    frame = pd.DataFrame(
        {f"g{j}": table.maps[j][node[j]][table.base[:, j]] for j in kept} | {"s": table.sens}
    )
    keys = [f"g{j}" for j in kept]
    counts = (frame.groupby(keys + ["s"]).size().unstack("s", fill_value=0)).reindex(
        columns=range(table.n_values), fill_value=0
    )
    size = counts.sum(axis=1).to_numpy()
    ok = models.satisfied(ClassSummaries(size, counts.to_numpy()))
    class_ncp = np.zeros(len(counts))
    for j in kept:
        codes = counts.index.get_level_values(f"g{j}").to_numpy()
        class_ncp += table.weights[j] * table.ncp(j, node[j])[codes]
    return NodeVerdict(
        rows=table.rows,
        classes=len(counts),
        bad_rows=int(size[~ok].sum()),
        bad_classes=int((~ok).sum()),
        dm_kept=float((size[ok].astype(float) ** 2).sum()),
        ncp_kept=float((size[ok] * class_ncp[ok]).sum()),
    )


class Evaluator:
    """The search callback: memoised verdicts, batch sizes checked."""

    def __init__(self, table: Table, models: ModelSet, batch_nodes: int) -> None:
        self.table = table
        self.models = models
        self.batch_nodes = batch_nodes
        self.memo: dict[Node, NodeVerdict] = {}
        self.calls: list[Sequence[Node]] = []

    def __call__(self, nodes: Sequence[Node]) -> dict[Node, NodeVerdict]:
        assert 0 < len(nodes) <= self.batch_nodes
        assert len(set(nodes)) == len(nodes)
        self.calls.append(list(nodes))
        out = {}
        for n in nodes:
            assert len(n) == self.table.d
            assert all(DROPPED <= lv <= h for lv, h in zip(n, self.table.heights, strict=True))
            if n not in self.memo:
                self.memo[n] = verdict(self.table, self.models, n)
            out[n] = self.memo[n]
        return out


def is_acceptable(v: NodeVerdict, max_sup: float) -> bool:
    return v.bad_rows <= max_sup * v.rows + 1e-9 and v.bad_rows < v.rows


def loss(metric: str, node: Node, v: NodeVerdict, table: Table) -> float:
    """The loss of a full node, from the definitions (not from search.node_loss)."""
    if metric == "height":
        return float(sum(node))
    if metric == "precision":
        return float(np.mean([lv / h for lv, h in zip(node, table.heights, strict=True)]))
    if metric == "discernibility":
        return v.dm_kept + v.bad_rows * v.rows
    total_w = sum(table.weights)
    return (v.ncp_kept + v.bad_rows * total_w) / (v.rows * total_w)


@dataclass
class Reference:
    """The whole lattice, brute force."""

    verdicts: dict[Node, NodeVerdict]
    accepted: set[Node]
    minimal: set[Node]
    monotone: bool


def below(a: Node, b: Node) -> bool:
    """``a`` is a strict specialization of ``b``."""
    return a != b and all(x <= y for x, y in zip(a, b, strict=True))


def record(ref: Reference) -> None:
    """Tell Hypothesis's statistics how interesting the example's lattice was."""
    share = len(ref.accepted) / len(ref.verdicts)
    event("acceptable nodes: " + ("none" if share == 0 else "all" if share == 1 else "some"))


def recorded_case(
    table: Table, models: ModelSet, max_sup: float, metric: str, batch: int, one: bool = False
) -> tuple[Reference, SearchTask]:
    """The reference answer of a case (recorded for Hypothesis) and the search task."""
    ref = reference(Evaluator(table, models, 1 << 30), max_sup)
    record(ref)
    task = SearchTask(
        table.heights, Evaluator(table, models, batch), max_sup, metric, table.weights, one
    )
    return ref, task


def assert_samarati_answer(got: SearchResult, ref: Reference, metric: str, table: Table) -> None:
    """Samarati's answer: the acceptable nodes of the lowest acceptable height, the least loss."""
    lowest = min(sum(n) for n in ref.accepted)
    at_lowest = {n for n in ref.accepted if sum(n) == lowest}
    assert sum(got.best) == lowest
    assert set(got.candidates) == at_lowest
    best = min(loss(metric, n, ref.verdicts[n], table) for n in at_lowest)
    assert loss(metric, got.best, ref.verdicts[got.best], table) == pytest.approx(best)


def reference(ev: Evaluator, max_sup: float) -> Reference:
    nodes = list(itertools.product(*[range(h + 1) for h in ev.table.heights]))
    verdicts = ev(nodes) if len(nodes) <= ev.batch_nodes else {n: ev([n])[n] for n in nodes}
    accepted = {n for n in nodes if is_acceptable(verdicts[n], max_sup)}
    minimal = {n for n in accepted if not any(below(m, n) for m in accepted)}
    monotone = all(g in accepted for n in accepted for g in nodes if below(n, g))
    return Reference(verdicts, accepted, minimal, monotone)


# ---------------------------------------------------------------- the searches


SEARCH_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

MAX_SUPS = st.sampled_from([0.02, 0.05, 0.1, 0.2, 0.35])
METRICS = st.sampled_from(["height", "precision", "discernibility", "ncp"])


def _models(kind: str, k: int, l: float) -> ModelSet:  # noqa: E741
    if kind == "k":
        return ModelSet([KAnonymity(k=k)])
    if kind == "entropy":
        return ModelSet([EntropyLDiversity(l=l)])
    return ModelSet([KAnonymity(k=k), EntropyLDiversity(l=l)])


PRUNABLE_CASES = st.one_of(
    st.tuples(st.just("k"), st.just(0.0)),
    st.tuples(st.just("k"), MAX_SUPS),
    st.tuples(st.just("entropy"), st.just(0.0)),
    st.tuples(st.just("k+entropy"), st.just(0.0)),
)

Search = tuple[Table, ModelSet, float, str]


@st.composite
def prunable_searches(draw: st.DrawFn) -> Search:
    """A table, a prunable model set (k, entropy l or both) with its MaxSup, and a metric."""
    table = draw(tables())
    kind, max_sup = draw(PRUNABLE_CASES)
    k, l = draw(st.integers(2, 8)), draw(st.sampled_from([1.2, 1.5, 2.0]))  # noqa: E741
    return table, _models(kind, k, l), max_sup, draw(METRICS)


@SEARCH_SETTINGS
@given(search=prunable_searches(), batch=st.sampled_from([1, 3, 7, 1024]), one=st.booleans())
def test_incognito_finds_the_minimal_acceptable_nodes(
    search: Search, batch: int, one: bool
) -> None:
    """Whole heights per pass while they fit, or one height per pass (``one_height``)."""
    table, models, max_sup, metric = search
    assert prunable(models.monotonic, models.additive, max_sup)
    ref, task = recorded_case(table, models, max_sup, metric, batch, one)
    # The pruning is sound because acceptability is monotone here: check the claim.
    assert ref.monotone
    if not ref.accepted:
        with pytest.raises(ConfigError, match="no generalization satisfies"):
            incognito(task, prune=True, batch_nodes=batch)
        with pytest.raises(ConfigError, match="no generalization satisfies"):
            exhaustive(task, batch_nodes=batch)
        return
    inc = incognito(task, prune=True, batch_nodes=batch)
    exh = exhaustive(task, batch_nodes=batch)
    assert set(exh.candidates) == ref.minimal
    assert set(inc.candidates) == ref.minimal
    assert len(inc.candidates) == len(ref.minimal)
    best = min(loss(metric, n, ref.verdicts[n], table) for n in ref.minimal)
    assert inc.best in ref.minimal and exh.best in ref.minimal
    assert loss(metric, inc.best, ref.verdicts[inc.best], table) == pytest.approx(best)
    assert loss(metric, exh.best, ref.verdicts[exh.best], table) == pytest.approx(best)
    # Verdicts the search reports are the evaluator's.
    for n, v in inc.verdicts.items():
        assert v == task.evaluate.memo[n]
    assert inc.pruned
    if one:  # Incognito's passes (exhaustive's come after) hold one height each
        calls = task.evaluate.calls[: inc.batches]
        assert all(len({height(n) for n in call}) == 1 for call in calls)


@SEARCH_SETTINGS
@given(search=prunable_searches(), batch=st.sampled_from([1, 4, 1024]))
def test_samarati_finds_the_lowest_acceptable_height(search: Search, batch: int) -> None:
    table, models, max_sup, metric = search
    prune = prunable(models.monotonic, models.additive, max_sup)
    assert prune
    ref, task = recorded_case(table, models, max_sup, metric, batch)
    if not ref.accepted:
        with pytest.raises(ConfigError, match="no generalization satisfies"):
            samarati(task, prune=prune, batch_nodes=batch)
        return
    assert_samarati_answer(samarati(task, prune=prune, batch_nodes=batch), ref, metric, table)


@SEARCH_SETTINGS
@given(
    table=tables(),
    max_sup=MAX_SUPS,
    l=st.sampled_from([1.2, 1.5, 2.0]),  # noqa: E741
    with_k=st.booleans(),
    k=st.integers(1, 4),
    metric=METRICS,
    batch=st.sampled_from([2, 5, 1024]),
)
def test_searches_without_pruning(
    table: Table,
    max_sup: float,
    l: float,  # noqa: E741
    with_k: bool,
    k: int,
    metric: str,
    batch: int,
) -> None:
    """Entropy l-diversity with suppression: not prunable, every node counts."""
    models = _models("k+entropy" if with_k else "entropy", k, l)
    assert not prunable(models.monotonic, models.additive, max_sup)
    ref, task = recorded_case(table, models, max_sup, metric, batch)
    if not ref.accepted:
        with pytest.raises(ConfigError, match="no generalization satisfies"):
            incognito(task, prune=False, batch_nodes=batch)
        with pytest.raises(ConfigError, match="no generalization satisfies"):
            samarati(task, prune=False, batch_nodes=batch)
        return
    inc = incognito(task, prune=False, batch_nodes=batch)
    assert not inc.pruned
    assert inc.best in ref.accepted
    best = min(loss(metric, n, ref.verdicts[n], table) for n in ref.accepted)
    assert loss(metric, inc.best, ref.verdicts[inc.best], table) == pytest.approx(best)
    assert_samarati_answer(samarati(task, prune=False, batch_nodes=batch), ref, metric, table)


def test_entropy_with_suppression_is_not_monotone() -> None:
    """Why entropy l-diversity with MaxSup > 0 is not prunable: a hand-made counterexample.

    Column a: values 0, 1 under one parent. Value 0 holds 10 rows of sensitive value 0
    (fails l = 2), value 1 holds x, y (passes). At level 0 the 10 rows are suppressed
    (MaxSup 10/12 < 0.9): acceptable. At level 1 all 12 rows form one class whose entropy
    is below log 2: its 12 rows would all be suppressed: unacceptable.
    """
    maps = ((np.array([0, 1]), np.array([0, 0])), (np.array([0]), np.array([0])))
    base = np.array([[0, 0]] * 10 + [[1, 0]] * 2)
    sens = np.array([0] * 10 + [1, 2])
    table = Table(maps, base, sens, 3, (1.0, 1.0))
    models = ModelSet([EntropyLDiversity(l=2.0)])
    assert not prunable(models.monotonic, models.additive, 0.9)
    ref = reference(Evaluator(table, models, 100), 0.9)
    assert (0, 0) in ref.accepted and (1, 0) not in ref.accepted
    assert not ref.monotone
    # The searches that do not prune still find it.
    task = SearchTask(table.heights, Evaluator(table, models, 100), 0.9, "height", table.weights)
    assert incognito(task, prune=False).best == (0, 0)
    assert samarati(task, prune=False).best == (0, 0)


# ---------------------------------------------------------------- the engine's rollup


def _schema(n_values: int) -> Schema:
    sensitive = SensitiveLevels(
        name="s",
        values=tuple(f"v{i}" for i in range(n_values)),
        level_of=np.zeros(n_values, dtype=np.int64),
        level_names=("all",),
        weights=np.ones(1),
        has_levels=False,
    )
    return Schema(kinds=(), sensitive=sensitive)


def _subset_nodes(heights: Sequence[int]) -> list[Node]:
    """Every node over every non-empty subset of the attributes."""
    return [
        n
        for n in itertools.product(*[range(DROPPED, h + 1) for h in heights])
        if any(lv != DROPPED for lv in n)
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=tables(max_qi=3, max_rows=60),
    kind=st.sampled_from(["k", "entropy", "k+entropy"]),
    k=st.integers(1, 5),
    l=st.sampled_from([1.5, 2.0]),  # noqa: E741
    batch_rows=st.integers(3, 25),
    data=st.data(),
)
def test_evaluate_nodes_matches_the_independent_evaluator(
    table: Table,
    kind: str,
    k: int,
    l: float,  # noqa: E741
    batch_rows: int,
    data: st.DataObject,
) -> None:
    models = _models(kind, k, l)
    everything = _subset_nodes(table.heights)
    nodes = data.draw(
        st.lists(st.sampled_from(everything), min_size=1, max_size=40, unique=True),
        label="nodes",
    )
    # Small batches: the partial sums of one class come from several batches.
    engine = LocalEngine(batch_rows=batch_rows)
    based = pd.DataFrame(
        {base_column(j): table.base[:, j] for j in range(table.d)} | {SENS: table.sens}
    )
    fset = frequency_set(engine, based, table.d, models.uses_sensitive)
    assert fset.rows == table.rows
    got = _evaluate(engine, fset, table, nodes, models)
    assert set(got) == set(nodes)
    for n in nodes:
        want = verdict(table, models, n)
        v = got[n]
        assert (v.rows, v.classes, v.bad_rows, v.bad_classes) == (
            want.rows,
            want.classes,
            want.bad_rows,
            want.bad_classes,
        ), n
        assert v.dm_kept == want.dm_kept, n
        assert v.ncp_kept == pytest.approx(want.ncp_kept, abs=1e-9), n


def _fset(engine: Any, table: Table, models: ModelSet, driver_entries: int | None) -> Any:
    """The table's bottom frequency set on ``engine``."""
    based = pd.DataFrame(
        {base_column(j): table.base[:, j] for j in range(table.d)} | {SENS: table.sens}
    )
    if not isinstance(engine, LocalEngine):
        columns = [(base_column(j), "long") for j in range(table.d)] + [(SENS, "long")]
        based = engine.from_pandas(based, columns)
    return frequency_set(engine, based, table.d, models.uses_sensitive, driver_entries)


def _evaluate(engine: Any, fset: Any, table: Table, nodes: list[Node], models: ModelSet) -> Any:
    """:func:`evaluate_nodes` of ``nodes`` on the table's frequency set ``fset``.

    With the table's hierarchies and weights and its sensitive values in one level.
    """
    hierarchies = table.hierarchies()
    schema = _schema(table.n_values)
    return evaluate_nodes(engine, fset, hierarchies, nodes, models, schema, list(table.weights))


def failing_rows(table: Table, models: ModelSet, node: Node) -> np.ndarray:
    """Which rows are in a class of ``node`` (every attribute kept) that fails, by pandas."""
    keys = [f"g{j}" for j in range(table.d)]
    frame = pd.DataFrame(
        {f"g{j}": table.maps[j][node[j]][table.base[:, j]] for j in range(table.d)}
        | {"s": table.sens}
    )
    counts = (frame.groupby(keys + ["s"]).size().unstack("s", fill_value=0)).reindex(
        columns=range(table.n_values), fill_value=0
    )
    ok = models.satisfied(ClassSummaries(counts.sum(axis=1).to_numpy(), counts.to_numpy()))
    return np.asarray(frame.set_index(keys).index.isin(counts.index[~ok]))


def row_keys(table: Table, node: Node) -> np.ndarray:
    """Each row's class key under ``node`` as the publication computes it (:func:`node_key`)."""
    key = np.zeros(table.rows, dtype=np.int64)
    attribute = {base_column(j): j for j in range(table.d)}
    for column, lookup, stride in node_key(table.hierarchies(), node, 0).parts:
        code = table.base[:, attribute[column]]
        key += (code if lookup is None else np.asarray(lookup)[code]) * stride
    return key


def _driver(table: Table, models: ModelSet, budget: int | None) -> DriverEvaluator:
    fset = _fset(LocalEngine(), table, models, None)
    assert fset.local is not None and len(fset.local) == fset.entries
    level_of = np.zeros(table.n_values, dtype=np.int64)
    return DriverEvaluator(
        table.hierarchies(), fset.local, models, table.n_values, level_of, table.weights, budget
    )


def _assert_same_verdict(v: NodeVerdict, want: NodeVerdict, node: Node) -> None:
    assert (v.rows, v.classes, v.bad_rows, v.bad_classes, v.dm_kept) == (
        want.rows,
        want.classes,
        want.bad_rows,
        want.bad_classes,
        want.dm_kept,
    ), node
    assert v.ncp_kept == pytest.approx(want.ncp_kept, abs=1e-9), node


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=tables(max_qi=3, max_rows=60),
    kind=st.sampled_from(["k", "entropy", "k+entropy"]),
    k=st.integers(1, 5),
    budget=st.sampled_from([0, 3, 20, None]),
    data=st.data(),
)
def test_driver_rollup_matches_the_independent_evaluator(
    table: Table, kind: str, k: int, budget: int | None, data: st.DataObject
) -> None:
    """The numpy rollup on the driver against the pandas grouping, on random small lattices.

    Nodes come in random batches and orders, subset nodes included, with budgets that
    keep no rolled-up frequency set, a few, or all: each node rolls up from the bottom, a
    kept node one level below in one attribute, or another kept node below it.
    """
    models = _models(kind, k, 2.0)
    driver = _driver(table, models, budget)
    everything = _subset_nodes(table.heights)
    nodes = data.draw(st.permutations(everything), label="order")
    cut = data.draw(st.integers(0, len(nodes)), label="cut")
    for batch in (nodes[:cut], nodes[cut:]):
        got = driver.evaluate(batch)
        assert set(got) == set(batch)
        for n in batch:
            _assert_same_verdict(got[n], verdict(table, models, n), n)
    # The publication drops the rows whose key is one of the driver's failing keys.
    full = [n for n in everything if DROPPED not in n]
    for n in data.draw(st.lists(st.sampled_from(full), max_size=3), label="published"):
        dropped = np.isin(row_keys(table, n), driver.failing_keys(n))
        assert np.array_equal(dropped, failing_rows(table, models, n)), n


def test_driver_rollup_sources() -> None:
    """By hand: which frequency set each node rolls up from, and what it holds.

    Column a: base 0, 1, 2; level 1 joins 0 and 1; level 2 the root. Column b: base 0, 1;
    level 1 the root. Rows (a, b): (0,0) x2, (1,0), (2,1) x3.
    """
    maps = (
        (np.array([0, 1, 2]), np.array([0, 0, 1]), np.array([0, 0, 0])),
        (np.array([0, 1]), np.array([0, 0])),
    )
    base = np.array([[0, 0], [0, 0], [1, 0], [2, 1], [2, 1], [2, 1]])
    table = Table(maps, base, np.zeros(6, dtype=np.int64), 2, (1.0, 1.0))
    models = ModelSet([KAnonymity(k=3)])
    driver = _driver(table, models, None)
    assert len(driver.bottom) == 3  # (0,0), (1,0), (2,1)
    got = driver.evaluate([(1, 0), (2, 1), (1, DROPPED)])
    # (1, 0): classes {a0|a1, b0}: 3 rows, {a2, b1}: 3 rows; both pass k = 3.
    assert got[(1, 0)] == NodeVerdict(6, 2, 0, 0, 18.0, got[(1, 0)].ncp_kept)
    # The root: one class of 6.
    assert got[(2, 1)].classes == 1 and got[(2, 1)].bad_rows == 0
    assert got[(1, DROPPED)].classes == 2
    # (2, 0) rolls up from the kept (1, 0) by one level of a; (2, 1) was the root.
    source, raised = driver._source((2, 0))
    assert source.node == (1, 0) and raised == 0
    # (0, 1): no kept node below it, the bottom.
    source, raised = driver._source((0, 1))
    assert source is driver.bottom and raised is None
    assert driver.evaluate([(2, 0)])[(2, 0)].classes == 2  # b0: 3 rows, b1: 3 rows
    # A budget of nothing keeps nothing: every node from the bottom, same verdicts.
    bare = _driver(table, models, 0)
    assert bare.evaluate([(1, 0), (2, 1), (1, DROPPED)]) == got


def test_distributed_and_driver_searches_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An Adult sample's job with the frequency set on the driver and without (local engine)."""
    sample = adult_sample(tmp_path, 800)
    raw = adult_config(tmp_path, sample, tmp_path / "out", conf=_conf("k"))
    raw["attributes"] = [
        a for a in raw["attributes"] if a["name"] in ("age", "sex", "race", "workclass", "income")
    ]
    got = {}
    for limit in (driver_rollup.DRIVER_ENTRIES, 0):
        monkeypatch.setattr(driver_rollup, "DRIVER_ENTRIES", limit)
        got[limit] = run_job(LocalEngine(batch_rows=300), parse_config(raw), commit=False)
    driver, distributed = got[driver_rollup.DRIVER_ENTRIES], got[0]
    assert driver.metrics["verified"] is True
    same = ["node", "rows_out", "suppressed_by_node", "suppressed_classes", "published_classes"]
    assert {k: driver.metrics[k] for k in same} == {k: distributed.metrics[k] for k in same}
    for key in ("DM", "precision", "NCP"):
        assert driver.metrics[key] == pytest.approx(distributed.metrics[key], rel=1e-12)
    # One height per pass on the driver: fewer evaluations, the same minimal nodes.
    a, b = driver.metrics["lattice"], distributed.metrics["lattice"]
    assert a["candidate_nodes"] == b["candidate_nodes"]
    assert a["evaluated"] <= b["evaluated"]


@pytest.mark.spark
def test_spark_rollup_matches_the_driver(spark: Any) -> None:
    """The distributed pass on Spark and the driver's numpy rollup: the same verdicts."""
    from sparkanon.engine.spark import SparkEngine

    rng = np.random.default_rng(7)
    maps = (
        (np.arange(6), np.array([0, 0, 1, 1, 2, 2]), np.zeros(6, dtype=np.int64)),
        (np.arange(3), np.array([0, 0, 1]), np.zeros(3, dtype=np.int64)),
        (np.arange(2), np.zeros(2, dtype=np.int64)),
    )
    base = np.column_stack(
        [rng.integers(0, 6, 200), rng.integers(0, 3, 200), rng.integers(0, 2, 200)]
    )
    table = Table(maps, base, rng.integers(0, 3, 200), 3, (1.0, 2.0, 0.5))
    models = _models("k+entropy", 3, 1.5)
    fset = _fset(SparkEngine(spark), table, models, 0)
    assert fset.local is None
    nodes = _subset_nodes(table.heights)
    got = _evaluate(SparkEngine(spark), fset, table, nodes, models)
    want = _driver(table, models, None).evaluate(nodes)
    for n in nodes:
        _assert_same_verdict(got[n], want[n], n)


# ---------------------------------------------------------------- the Adult jobs

FD_CONFIGS = {
    # Incognito, prunable (k is additive), with suppression: run as configured.
    "k": [],
    # Incognito, not prunable (entropy with suppression): run as configured.
    "entropy_l": [],
    # Samarati, prunable (no suppression beside t-closeness): run as configured.
    "combined": [],
    # Faster variants of the others (each covers another search mode).
    "distinct_l": ["algorithm.name=samarati"],
    "recursive_cl": ["algorithm.max_suppression=0"],
    "tcloseness": [],
}

QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
SENSITIVE = "occupation"


def _conf(name: str) -> Path:
    return ROOT / "conf" / f"adult_fd_{name}.yaml"


@cache
def _arx_rows(path: str) -> tuple[tuple[str, ...], ...]:
    with open(path, newline="", encoding="utf-8") as fh:
        return tuple(tuple(c.strip() for c in row) for row in csv.reader(fh, delimiter=";") if row)


@dataclass
class JobRun:
    """One committed run of a config through the command line."""

    raw: dict[str, Any]
    path: Path
    overrides: list[str]
    out: Path
    code: int
    metrics: dict[str, Any]
    published: pd.DataFrame


def _run_cli(tmp: Path, raw: dict[str, Any], overrides: list[str], engine: str) -> JobRun:
    tmp.mkdir(parents=True, exist_ok=True)
    path = write_config(tmp, raw)
    code = run_command(str(path), overrides, engine_name=engine)
    out = Path(raw["output"]["path"])
    metrics = json.loads((out / "metrics.json").read_text()) if code == EXIT_OK else {}
    published = pd.read_parquet(out / "data") if code == EXIT_OK else pd.DataFrame()
    return JobRun(raw, path, overrides, out, code, metrics, published)


@pytest.fixture(scope="module")
def fd_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], JobRun]]:
    """Each Adult config run once on the local engine (shared by the checks below)."""
    runs: dict[str, JobRun] = {}

    def get(name: str) -> JobRun:
        if name not in runs:
            tmp = tmp_path_factory.mktemp(f"fd_{name}")
            raw = adult_config(tmp, ADULT_CSV, tmp / "out", conf=_conf(name))
            runs[name] = _run_cli(tmp, raw, FD_CONFIGS[name], "local")
        return runs[name]

    yield get


def _input_rows(raw: dict[str, Any]) -> pd.DataFrame:
    """The input rows the job keeps: missing values (``?`` or empty) dropped."""
    frame = pd.read_csv(raw["input"]["path"], dtype=str, keep_default_na=False)
    columns = QIS + [SENSITIVE, "income"]
    frame = frame[columns].apply(lambda s: s.str.strip())
    missing = frame.isin(raw["input"]["missing_values"]).any(axis=1)
    return frame[~missing].reset_index(drop=True)


@pytest.mark.parametrize("name", list(FD_CONFIGS))
def test_adult_fd_job(fd_runs: Callable[[str], JobRun], name: str) -> None:
    run = fd_runs(name)
    assert run.code == EXIT_OK
    m, pub = run.metrics, run.published
    config = load_config(run.path, run.overrides)
    assert m["verified"] is True and m["violations"] == 0
    kept = _input_rows(run.raw)
    assert m["rows_in"] == len(kept) == 45222
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"]
    assert m["rows_out"] == len(pub)
    assert list(pub.columns) == QIS + [SENSITIVE, "income"]
    node = m["node"]
    assert list(node) == QIS
    assert m["height"] == sum(node.values())

    # Suppression within MaxSup; the published rows' sensitive values are the kept ones'.
    max_sup = config.algorithm.max_suppression
    assert m["suppressed_by_node"] == m["rows_suppressed"]
    assert m["suppressed_by_node"] <= math.floor(max_sup * len(kept) + 1e-9)
    if max_sup == 0:
        assert m["rows_suppressed"] == 0
    by_value = kept[SENSITIVE].value_counts()
    assert (pub[SENSITIVE].value_counts().reindex(by_value.index, fill_value=0) <= by_value).all()
    assert set(pub[SENSITIVE]) <= set(by_value.index)

    # Every published value is a label of the node's level (the ARX file's column),
    # and its NCP is the leaves under it over all leaves (0 for one leaf).
    heights = {}
    ncp_sum = np.zeros(len(pub))
    for attr in run.raw["attributes"]:
        if attr["name"] not in QIS:
            continue
        rows = _arx_rows(attr["hierarchy"])
        heights[attr["name"]] = len(rows[0]) - 1
        level = node[attr["name"]]
        leaves = pd.Series([r[level] for r in rows]).value_counts()
        published = set(pub[attr["name"]].unique())
        assert published <= set(leaves.index), (attr["name"], published - set(leaves.index))
        # Each label holds at most the kept rows whose value generalizes to it (all of
        # them when nothing is suppressed).
        up = {r[0]: r[level] for r in rows}
        expected = kept[attr["name"]].map(up).value_counts().reindex(leaves.index, fill_value=0)
        got = pub[attr["name"]].value_counts().reindex(leaves.index, fill_value=0)
        assert (got <= expected).all()
        if m["rows_suppressed"] == 0:
            assert (got == expected).all()
        share = (leaves / len(rows)).where(leaves > 1, 0.0)
        ncp_sum += pub[attr["name"]].map(share).to_numpy()
    assert m["lattice"]["heights"] == heights
    assert m["max_height"] == sum(heights.values())
    precision = 1 - np.mean([node[q] / heights[q] for q in QIS])
    assert m["precision"] == pytest.approx(precision)

    # Every published class (grouped by the QI columns) satisfies the model, checked with
    # the models bound to the kept rows' sensitive distribution.
    values = sorted(kept[SENSITIVE].unique())
    domain = SensitiveDomain(
        values=tuple(values),
        counts=kept[SENSITIVE].value_counts().reindex(values).to_numpy(),
        name=SENSITIVE,
    )
    models = config.models.bind(domain)
    counts = (pub.groupby(QIS + [SENSITIVE]).size().unstack(SENSITIVE, fill_value=0)).reindex(
        columns=values, fill_value=0
    )
    summaries = ClassSummaries(counts.sum(axis=1).to_numpy(), counts.to_numpy())
    assert models.satisfied(summaries).all()
    assert m["published_classes"] == len(counts)

    # DM and NCP from the published table and the suppressed rows.
    sizes = counts.sum(axis=1).to_numpy(dtype=float)
    suppressed = m["suppressed_by_node"]
    assert m["DM"] == pytest.approx(float((sizes**2).sum() + suppressed * len(kept)))
    ncp = (ncp_sum.sum() + suppressed * len(QIS)) / (len(kept) * len(QIS))
    assert m["NCP"] == pytest.approx(ncp)


@pytest.mark.parametrize("name", ["distinct_l"])
def test_adult_fd_rerun_is_identical(
    fd_runs: Callable[[str], JobRun], tmp_path: Path, name: str
) -> None:
    """Samarati with suppression (distinct l-diversity, prunable): the same table twice.

    The same rows: each run draws its own key, so they come in another order (and the
    release checks, which read the rows in their published order, word their closest
    figures from other rows).
    """
    first = fd_runs(name)
    raw = dict(first.raw)
    raw["output"] = {**raw["output"], "path": str(tmp_path / "again")}
    again = _run_cli(tmp_path, raw, first.overrides, "local")
    assert again.code == EXIT_OK

    def rows(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.sort_values(list(frame.columns)).reset_index(drop=True)

    pd.testing.assert_frame_equal(rows(again.published), rows(first.published))
    drop = {"seconds", "release_checks"}
    assert [c["passed"] for c in again.metrics["release_checks"]] == [
        c["passed"] for c in first.metrics["release_checks"]
    ]
    assert {k: v for k, v in again.metrics.items() if k not in drop} == {
        k: v for k, v in first.metrics.items() if k not in drop
    }


def test_samarati_and_incognito_agree_on_the_lowest_height(tmp_path: Path) -> None:
    """On an Adult sample with k-anonymity and no suppression, both searches are exact."""
    sample = adult_sample(tmp_path, 1500)
    heights = {}
    for search in ("samarati", "incognito"):
        raw = adult_config(tmp_path, sample, tmp_path / search, conf=_conf("k"))
        raw["attributes"] = [
            a
            for a in raw["attributes"]
            if a["name"] in ("age", "sex", "race", "marital-status", "income")
        ]
        raw["algorithm"] = {"name": search, "max_suppression": 0.0, "metric": "height"}
        result = run_job(LocalEngine(batch_rows=400), parse_config(raw), commit=False)
        assert result.metrics["verified"] is True
        heights[search] = result.metrics["height"]
    # Incognito minimises the height among the minimal nodes, Samarati finds the lowest.
    assert heights["samarati"] == heights["incognito"]


def _interval_holds(label: str, value: float) -> bool:
    lo, hi = (float(x) for x in label[1:-1].split(", "))
    return lo <= value and (value < hi or (label.endswith("]") and value <= hi))


@pytest.mark.parametrize(
    ("levels", "n", "k", "sizes"),
    [
        # 0.00 .. 0.99 in widths of 0.2: 0.6 belongs to [0.6, 0.8), not to [0.4, 0.6).
        ({"widths": [0.2]}, 100, 10, [20] * 5),
        # 0.00 .. 0.90 in 9 equal-width bins of 0.1: 0.3 belongs to [0.3, 0.4).
        ({"bins": {"method": "equal_width", "count": 9}}, 91, 5, [10] * 8 + [11]),
    ],
    ids=["widths", "equal_width_bins"],
)
def test_published_interval_holds_the_original_decimal_value(
    tmp_path: Path, levels: dict[str, Any], n: int, k: int, sizes: list[int]
) -> None:
    """A continuous column of two-decimal values: every published interval holds the value."""
    source = pd.DataFrame(
        {
            "rid": range(n),
            "score": [round(i / 100, 2) for i in range(n)],
            "disease": [("a", "b", "c")[i % 3] for i in range(n)],
        }
    )
    raw = _traced_samarati(tmp_path, source, {"score": levels}, k, format="csv")
    out = tmp_path / "out"
    data = raw["input"]["path"]
    with traced_rows("rid"):
        code = run_command(str(write_config(tmp_path, raw)), [], engine_name="local")
    assert code == EXIT_OK
    metrics = json.loads((out / "metrics.json").read_text())
    pub = pd.concat(pd.read_csv(f) for f in sorted((out / "data").glob("*.csv")))
    joined = pd.read_csv(data).merge(pub, on="rid", suffixes=("", "_published"))
    assert len(joined) == n
    wrong = [
        (v, lab)
        for v, lab in zip(joined["score"], joined["score_published"], strict=True)
        if not _interval_holds(lab, v)
    ]
    assert wrong == []
    # Exact values are unique (k fails); the first interval level holds k rows or more.
    assert metrics["node"] == {"score": 1}
    assert pub["score"].value_counts().sort_index().tolist() == sizes


# ---------------------------------------------------------------- bad input


@pytest.fixture(scope="module")
def small_adult(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return adult_sample(tmp_path_factory.mktemp("fd_bad"), 300)


def _age_continuous(levels: Mapping[str, Any] | None) -> Callable[[dict[str, Any]], None]:
    def edit(cfg: dict[str, Any]) -> None:
        attr = next(a for a in cfg["attributes"] if a["name"] == "age")
        attr.clear()
        attr.update({"name": "age", "kind": "continuous"})
        if levels is not None:
            attr["levels"] = dict(levels)

    return edit


def _ragged_sex(cfg: dict[str, Any]) -> None:
    path = Path(cfg["output"]["path"]).parent / "sex_ragged.csv"
    path.write_text("Male;*\nFemale;Person;*\n", encoding="utf-8")
    next(a for a in cfg["attributes"] if a["name"] == "sex")["hierarchy"] = str(path)


def _algorithm(**values: Any) -> Callable[[dict[str, Any]], None]:
    def edit(cfg: dict[str, Any]) -> None:
        cfg["algorithm"].update(values)

    return edit


def _publish_centroids(cfg: dict[str, Any]) -> None:
    cfg["output"]["publish"] = "centroids"


# The level errors that need no data (a continuous column without levels, breakpoints
# that are not numbers, not increasing or not nested...) are refused at load:
# tests/config/test_level_checks.py.
BAD = {
    "ragged_hierarchy": (_ragged_sex, ["sex_ragged.csv", "'sex'", "line 2", "same depth"]),
    "breakpoints_miss_the_data": (
        _age_continuous({"breakpoints": [[20, 30, 40]]}),
        ["attributes.0.levels.breakpoints", "'age'", "17", "[20, 40]"],
    ),
    "max_suppression_one": (_algorithm(max_suppression=1.0), ["algorithm.max_suppression"]),
    "max_suppression_negative": (
        _algorithm(max_suppression=-0.1),
        ["algorithm.max_suppression"],
    ),
    "unknown_metric": (_algorithm(metric="nosuchmetric"), ["algorithm.metric", "nosuchmetric"]),
    "widths_not_multiples": (
        _age_continuous({"widths": [5, 7]}),
        ["attributes.0.levels", "levels.widths", "multiple"],
    ),
    "publish_centroids": (
        _publish_centroids,
        ["output.publish", "'centroids'", "'incognito'", "generalized"],
    ),
    # Suppression changes the published distribution t-closeness compares classes with.
    "t_closeness_with_suppression": (
        lambda cfg: cfg.update(model={"name": "t_closeness", "t": 0.3, "measure": "variational"}),
        ["model: t_closeness", "max_suppression = 0.02", "published", "max_suppression: 0"],
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_full_domain_config(
    case: str, small_adult: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, needles = BAD[case]
    out = tmp_path / "out"
    raw = adult_config(tmp_path, small_adult, out, conf=_conf("k"))
    edit(raw)
    code = run_command(str(write_config(tmp_path, raw)), [], engine_name="local")
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert any(line.startswith("sparkanon: error: ") for line in err.splitlines()), err
    assert "internal error" not in err
    for needle in needles:
        assert needle in err, f"{needle!r} not in: {err}"
    assert leftovers(out) == [], leftovers(out)


def test_bad_max_suppression_through_set(
    small_adult: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    raw = adult_config(tmp_path, small_adult, out, conf=_conf("k"))
    code = run_command(
        str(write_config(tmp_path, raw)), ["algorithm.max_suppression=1.0"], engine_name="local"
    )
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert "algorithm.max_suppression" in err
    assert leftovers(out) == []


def test_good_continuous_levels_run(small_adult: Path, tmp_path: Path) -> None:
    """The control of the bad cases above: age with interval levels that cover the data."""
    out = tmp_path / "out"
    raw = adult_config(tmp_path, small_adult, out, conf=_conf("k"))
    _age_continuous({"widths": [5, 10, 20]})(raw)
    raw["attributes"] = [a for a in raw["attributes"] if a["name"] in ("age", "sex", "income")]
    assert run_command(str(write_config(tmp_path, raw)), [], engine_name="local") == EXIT_OK
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["verified"] is True
    # exact values, widths 5, 10, 20, the root
    assert metrics["lattice"]["heights"] == {"age": 4, "sex": 1}
    level = metrics["node"]["age"]
    # On 300 rows with sex, k = 5 holds with age in intervals (not exact, not the root).
    assert 1 <= level <= 3, metrics["node"]
    width = [5, 10, 20][level - 1]
    labels = set(pd.read_parquet(out / "data")["age"])
    for lab in labels:
        assert lab[0] == "[" and lab[-1] in ")]", lab
        lo, hi = (float(x) for x in lab[1:-1].split(", "))
        assert hi - lo == width and lo % width == 0, lab


# ---------------------------------------------------------------- output.decimals


def _traced_samarati(
    tmp_path: Path,
    source: pd.DataFrame,
    levels: dict[str, dict[str, Any]],
    k: int,
    **output: Any,
) -> dict[str, Any]:
    """A Samarati job over ``source`` (written to ``tmp_path``), its rows traced by ``rid``.

    ``rid`` is kept, each column of ``levels`` is continuous with those levels, the last
    column is sensitive; k-anonymity with ``k``, no suppression, the height metric; the
    generalized table published under ``tmp_path / "out"`` with the ``output`` keys added.
    """
    data = tmp_path / "input.csv"
    source.to_csv(data, index=False)
    return {
        "input": csv_input(data),
        "attributes": [
            {"name": "rid", "kind": "keep"},
            *({"name": c, "kind": "continuous", "levels": lv} for c, lv in levels.items()),
        ],
        "sensitive": {"name": source.columns[-1]},
        "model": {"name": "k", "k": k},
        "algorithm": {"name": "samarati", "max_suppression": 0.0, "metric": "height"},
        "output": {
            "path": str(tmp_path / "out"),
            "publish": "generalized",
            "mode": "error",
            **output,
        },
    }


def _decimals_case(
    tmp_path: Path, decimals: int | None, engine: str
) -> tuple[JobRun, pd.DataFrame]:
    """Two continuous columns of many digits: ``a`` (4 values, published exact), ``b``
    (distinct, published in its finest of 3 equal-width bins, edges of many digits)."""
    n = 60
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = pd.DataFrame(
        {
            "rid": range(n),
            "a": [(1.234, 1.249, 2.567, 3.891)[i % 4] for i in range(n)],
            "b": [i / 7 for i in range(n)],
            "s": [("x", "y")[i % 2] for i in range(n)],
        }
    )
    levels = {"a": {"widths": [1]}, "b": {"bins": {"method": "equal_width", "count": 3}}}
    decimal_places = {} if decimals is None else {"decimals": decimals}
    raw = _traced_samarati(tmp_path, source, levels, 3, **decimal_places)
    with traced_rows("rid"):
        run = _run_cli(tmp_path, raw, [], engine)
    assert run.code == EXIT_OK
    published = run.published.astype({"rid": int})  # a CSV column is read as text
    return run, source.merge(published, on="rid", suffixes=("", "_published"))


def test_decimals_round_full_domain_labels(tmp_path: Path) -> None:
    """output.decimals: exact values to the nearest, interval edges on the grid (disjoint)."""
    plain, joined = _decimals_case(tmp_path / "plain", None, "local")
    assert plain.metrics["node"] == {"a": 0, "b": 1}
    assert set(joined["a_published"]) == {"1.234", "1.249", "2.567", "3.891"}
    assert "[0, 2.80952380952)" in set(joined["b_published"])
    run, joined = _decimals_case(tmp_path / "one", 1, "local")
    assert run.metrics["node"] == {"a": 0, "b": 1}
    assert run.metrics["verified"] is True
    # 1.234 and 1.249 both publish 1.2: their classes merge into one published group.
    assert set(joined["a_published"]) == {"1.2", "2.6", "3.9"}
    assert run.metrics["published_classes"] == 9 < plain.metrics["published_classes"] == 12
    # Edges 0, 59/21 = 2.81, 118/21 = 5.62, 59/7 = 8.43: the cuts to the nearest, the last
    # edge up. No row changes interval (19/7 = 2.71 < 2.8 <= 20/7; 39/7 < 5.6 <= 40/7).
    assert set(joined["b_published"]) == {"[0, 2.8)", "[2.8, 5.6)", "[5.6, 8.5]"}
    assert joined["b_published"].value_counts().tolist() == [20, 20, 20]
    for value, label in zip(joined["b"], joined["b_published"], strict=True):
        assert _interval_holds(label, value), (value, label)
    assert len(joined) == 60


def test_decimals_quantile_intervals_are_disjoint(tmp_path: Path) -> None:
    """Quantile bins at ``decimals: 0``: each row in the one published label that holds it.

    Wages 50.3 .. 268.2, 12 rows, the finest level of 2 quantile bins (``exact: false``):
    the cut is the 7th row's 182.7. Rounded outwards the labels were ``[50, 183)`` and
    ``[182, 269]``, both holding 182.5; the cut is now 183, the rows of 182.5 and 182.7
    fall in ``[50, 183)`` with the six below, and the rest in ``[183, 269]``.
    """
    wages = [50.3, 61.0, 88.8, 120.0, 150.2, 182.5, 182.7, 183.0, 190.4, 221.9, 250.0, 268.2]
    source = pd.DataFrame({"rid": range(12), "wage": wages, "s": ["x", "y"] * 6})
    levels = {"exact": False, "bins": {"method": "quantile", "count": 2}}
    raw = _traced_samarati(tmp_path, source, {"wage": levels}, 2, decimals=0)
    with traced_rows("rid"):
        run = _run_cli(tmp_path, raw, [], "local")
    assert run.code == EXIT_OK
    assert run.metrics["node"] == {"wage": 0} and run.metrics["verified"] is True
    joined = source.merge(run.published.astype({"rid": int}), on="rid", suffixes=("", "_pub"))
    assert len(joined) == 12
    labels = dict(zip(joined["wage"], joined["wage_pub"], strict=True))
    assert set(labels.values()) == {"[50, 183)", "[183, 269]"}
    for value, label in labels.items():
        assert [lab for lab in set(labels.values()) if _interval_holds(lab, value)] == [label]
    assert [v for v, lab in labels.items() if lab == "[50, 183)"] == wages[:7]


@pytest.mark.spark
def test_decimals_round_full_domain_labels_on_spark(spark, tmp_path: Path) -> None:
    local, _ = _decimals_case(tmp_path / "local", 1, "local")
    remote, _ = _decimals_case(tmp_path / "spark", 1, "spark")
    assert remote.metrics["node"] == local.metrics["node"]
    cols = list(local.published.columns)
    pd.testing.assert_frame_equal(
        remote.published[cols].sort_values("rid").reset_index(drop=True),
        local.published.sort_values("rid").reset_index(drop=True),
        check_dtype=False,
    )
