"""Searching the lattice of full-domain generalizations: Samarati, Incognito, exhaustive.

A *node* is a tuple of generalization levels, one per quasi-identifier (Aggarwal 2015,
section 20.3.1: ``<A1, Z2>`` generalizes age to level 1 and the ZIP code to level 2).
Incognito also evaluates nodes over a subset of the attributes: there a dropped
attribute's level is :data:`DROPPED` (the attribute is left out of the class key, as
if generalized beyond its root). The height of a node is the sum of its levels.

The searches are pure: they never see a row. They hand batches of nodes to an
``evaluate`` callback (the engine's frequency-set pass,
:mod:`sparkanon.families.full_domain.lattice`) and receive one :class:`NodeVerdict` per node:
counts of rows and classes and of the rows in classes that fail the privacy models.
A node is *acceptable* when suppressing those rows suppresses at most MaxSup of the
table (:func:`acceptable`).

Pruning (the generalization property and Incognito's subset property) is only sound
when the conjunction of models stays satisfied under generalization *with* the
suppression allowed; ``prune`` says whether it is (see :func:`prunable`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from sparkanon.errors import ConfigError
from sparkanon.metrics.utility import OBJECTIVES, ReleaseCounts

DROPPED = -1
"""The level of an attribute a subset node leaves out."""

MAX_LATTICE_NODES = 2_000_000
"""The largest lattice the searches enumerate (the product of ``height + 1`` over attributes)."""

Node = tuple[int, ...]


@dataclass(frozen=True)
class NodeVerdict:
    """What the driver learns about one node: counts over its equivalence classes.

    Attributes:
        rows: rows of the table.
        classes: equivalence classes of the node.
        bad_rows: rows in classes that fail a model (to suppress).
        bad_classes: classes that fail a model.
        dm_kept: sum of squared sizes of the classes kept (discernibility).
        ncp_kept: sum over the kept rows of their weighted NCP.
    """

    rows: int
    classes: int
    bad_rows: int
    bad_classes: int
    dm_kept: float = 0.0
    ncp_kept: float = 0.0


Evaluate = Callable[[Sequence[Node]], Mapping[Node, NodeVerdict]]
"""Evaluate a batch of nodes (at most ``batch_nodes``) and return every node's verdict."""


def prunable(monotonic: bool, additive: bool, max_suppression: float) -> bool:
    """Whether acceptability is monotonic under generalization, so the searches may prune.

    Without suppression every model here is monotonic (the union of satisfying classes
    satisfies it: Aggarwal 2015, lemmas 20.3.1-20.3.3, exercises 9 and 11). With suppression a
    node is acceptable when its *failing* classes hold at most MaxSup rows; generalizing
    merges classes, and a failing class merged with a satisfying one stays satisfying only
    for models where adding rows never breaks a class (counts of rows, distinct values,
    distinct levels: k-anonymity, p-sensitive, (H,p,k), distinct l-diversity). For entropy
    and recursive l-diversity and t-closeness a merge can fail, dragging the satisfying
    rows into suppression, so a generalization of an acceptable node can be unacceptable
    and neither the generalization property nor the subset property holds.

    Args:
        monotonic: every model is monotonic under union.
        additive: every model stays satisfied when rows are added to a satisfying class.
        max_suppression: MaxSup.

    Returns:
        True when the searches may prune.
    """
    return monotonic and (max_suppression == 0.0 or additive)


def suppression_limit(rows: int, max_suppression: float) -> int:
    """The most rows a node may suppress: ``floor(MaxSup * rows)``."""
    return int(np.floor(max_suppression * rows + 1e-9))


def acceptable(v: NodeVerdict, max_suppression: float) -> bool:
    """Whether suppressing the node's failing classes stays within MaxSup (and keeps a row)."""
    return v.bad_rows <= suppression_limit(v.rows, max_suppression) and v.bad_rows < v.rows


def height(node: Node) -> int:
    """Sum of the levels of the attributes the node keeps."""
    return sum(level for level in node if level != DROPPED)


def release_counts(
    node: Node, v: NodeVerdict, heights: Sequence[int], weights: Sequence[float]
) -> ReleaseCounts:
    """The statistics of the release a node publishes, as the utility losses take them."""
    return ReleaseCounts(
        rows=v.rows,
        suppressed=v.bad_rows,
        sum_of_squares=v.dm_kept,
        ncp_published=v.ncp_kept,
        weights=tuple(weights),
        levels=tuple(node),
        heights=tuple(heights),
    )


def node_loss(
    metric: str, node: Node, v: NodeVerdict, heights: Sequence[int], weights: Sequence[float]
) -> float:
    """The loss a search minimises among acceptable nodes (``algorithm.metric``).

    Args:
        metric: a name of :data:`~sparkanon.metrics.utility.OBJECTIVES` (``height``,
            ``precision``, ``discernibility`` or ``ncp``).
        node: the levels.
        v: the node's verdict.
        heights: each attribute's hierarchy height.
        weights: each attribute's weight (``ncp``).

    Returns:
        The objective over the node's release (:mod:`sparkanon.metrics.utility`).
    """
    return OBJECTIVES[metric](release_counts(node, v, heights, weights))


class SearchTask(NamedTuple):
    """What a lattice search is given.

    Attributes:
        heights: each quasi-identifier's hierarchy height (the lattice).
        evaluate: evaluates a batch of nodes on the data (:data:`Evaluate`).
        max_suppression: MaxSup, the share of the rows a node may suppress.
        metric: the loss the published node minimises, a name of
            :data:`~sparkanon.metrics.utility.OBJECTIVES`.
        weights: each quasi-identifier's weight (the ``ncp`` loss).
        one_height: whether a pass should hold one height only (Incognito): set when a
            pass has no fixed cost (nodes evaluated on the driver), so every node a
            lower height's passing node generalizes is marked before it is evaluated.
    """

    heights: Sequence[int]
    evaluate: Evaluate
    max_suppression: float
    metric: str
    weights: Sequence[float]
    one_height: bool = False


@dataclass
class SearchResult:
    """What a search found.

    Attributes:
        best: the published node: the acceptable node of least loss among ``candidates``
            (ties to the lower height, then the lexicographically lower levels).
        candidates: the nodes the best was chosen among (Samarati: the acceptable nodes
            of the lowest acceptable height; Incognito: the minimal acceptable nodes).
        verdicts: every node evaluated, with its verdict.
        batches: evaluation passes launched.
        evaluated: nodes evaluated (on the data; nodes inferred by pruning excluded).
        inferred: nodes whose verdict was inferred by pruning.
    """

    best: Node
    candidates: list[Node]
    verdicts: dict[Node, NodeVerdict]
    batches: int = 0
    evaluated: int = 0
    inferred: int = 0
    pruned: bool = True
    notes: list[str] = field(default_factory=list)


class _Evaluator:
    """Evaluations with a cache, batched, counted."""

    def __init__(self, evaluate: Evaluate, batch_nodes: int) -> None:
        self.evaluate = evaluate
        self.batch_nodes = batch_nodes
        self.verdicts: dict[Node, NodeVerdict] = {}
        self.batches = 0

    def run(self, nodes: Iterable[Node]) -> dict[Node, NodeVerdict]:
        todo = [n for n in dict.fromkeys(nodes) if n not in self.verdicts]
        for start in range(0, len(todo), self.batch_nodes):
            chunk = todo[start : start + self.batch_nodes]
            got = self.evaluate(chunk)
            self.batches += 1
            for n in chunk:
                self.verdicts[n] = got[n]
        return self.verdicts


def all_nodes(heights: Sequence[int]) -> np.ndarray:
    """Every node of the lattice, one row each, ordered by height then levels.

    Raises:
        ConfigError: the lattice exceeds :data:`MAX_LATTICE_NODES`.
    """
    size = int(np.prod([h + 1 for h in heights], dtype=np.float64))
    if size > MAX_LATTICE_NODES:
        raise ConfigError(
            f"the lattice of generalization levels has {size} nodes (the product of every "
            f"quasi-identifier's levels), above {MAX_LATTICE_NODES}; use fewer levels or fewer "
            "quasi-identifiers"
        )
    grid = np.array(list(itertools.product(*[range(h + 1) for h in heights])), dtype=np.int64)
    grid = grid.reshape(-1, len(heights))
    order = np.lexsort(tuple(grid[:, j] for j in range(grid.shape[1] - 1, -1, -1)) + (grid.sum(1),))
    return grid[order]


def _best(
    nodes: Sequence[Node],
    verdicts: Mapping[Node, NodeVerdict],
    metric: str,
    heights: Sequence[int],
    weights: Sequence[float],
) -> Node:
    """The node of least loss; ties to the lower height, then the lower levels."""
    return min(
        nodes,
        key=lambda n: (node_loss(metric, n, verdicts[n], heights, weights), height(n), n),
    )


def _minimal(accepted: set[Node]) -> list[Node]:
    """The accepted nodes none of whose direct specializations is accepted, sorted."""
    out = []
    for n in accepted:
        below = (n[:j] + (n[j] - 1,) + n[j + 1 :] for j in range(len(n)) if n[j] > 0)
        if not any(b in accepted for b in below):
            out.append(n)
    return sorted(out, key=lambda n: (height(n), n))


def exhaustive(task: SearchTask, batch_nodes: int = 1 << 30) -> SearchResult:
    """Evaluate every node: the reference the tests hold the searches to.

    Returns:
        The minimal acceptable nodes as ``candidates`` and the best among them.

    Raises:
        ConfigError: no node is acceptable.
    """
    heights, evaluate, max_suppression, metric, weights = task[:5]
    ev = _Evaluator(evaluate, batch_nodes)
    nodes = [tuple(int(x) for x in row) for row in all_nodes(heights)]
    verdicts = ev.run(nodes)
    accepted = {n for n in nodes if acceptable(verdicts[n], max_suppression)}
    if not accepted:
        raise _none_acceptable(max_suppression)
    minimal = _minimal(accepted)
    best = _best(minimal, verdicts, metric, heights, weights)
    return SearchResult(best, minimal, dict(verdicts), ev.batches, len(nodes))


def _none_acceptable(max_suppression: float) -> ConfigError:
    return ConfigError(
        f"no generalization satisfies the privacy model(s) with at most {max_suppression:g} of "
        "the rows suppressed, not even the root of every hierarchy; relax the model or raise "
        "algorithm.max_suppression"
    )


def samarati(task: SearchTask, prune: bool, batch_nodes: int = 1024) -> SearchResult:
    """Samarati's binary search for the lowest height holding an acceptable node.

    Aggarwal 2015, section 20.3.1.1: check height ``h_max / 2``; if some node there is
    acceptable, search the lower half, else the upper half, until the lowest such height.
    Every node of that height is then evaluated and the acceptable one of least loss is
    published (the paper reports all of them; the config's metric picks one).

    With ``prune`` (acceptability monotonic): a node above an acceptable node is
    acceptable and a node below an unacceptable one is not, without evaluation; a height
    is settled as soon as one acceptable node is found. Without it the binary search
    would be unsound, so heights are scanned from the bottom up instead.

    Raises:
        ConfigError: no node is acceptable.
    """
    heights, evaluate, max_suppression, metric, weights = task[:5]
    ev = _Evaluator(evaluate, batch_nodes)
    grid = all_nodes(heights)
    by_height: dict[int, list[Node]] = {}
    for row in grid:
        by_height.setdefault(int(row.sum()), []).append(tuple(int(x) for x in row))
    passed: list[Node] = []
    failed: list[Node] = []
    inferred = 0

    marks: dict[bool, np.ndarray] = {}

    def status(n: Node) -> bool | None:
        if not prune:
            return None
        arr = np.array(n)
        for ok, nodes in ((True, passed), (False, failed)):
            if not nodes:
                continue
            if len(marks.get(ok, ())) != len(nodes):  # the lists only grow
                marks[ok] = np.array(nodes, dtype=np.int64)
            rows = marks[ok]
            if ((arr >= rows) if ok else (arr <= rows)).all(axis=1).any():
                return ok
        return None

    def has_acceptable(h: int) -> bool:
        nonlocal inferred
        nodes = by_height.get(h, [])
        for n in nodes:
            if n in ev.verdicts and acceptable(ev.verdicts[n], max_suppression):
                return True
        unknown = []
        for n in nodes:
            if n in ev.verdicts:
                continue
            s = status(n)
            if s is True:
                inferred += 1
                return True
            if s is None:
                unknown.append(n)
            else:
                inferred += 1
        for start in range(0, len(unknown), batch_nodes):
            chunk = unknown[start : start + batch_nodes]
            verdicts = ev.run(chunk)
            found = False
            for n in chunk:
                ok = acceptable(verdicts[n], max_suppression)
                (passed if ok else failed).append(n)
                found |= ok
            if found:
                return True
        return False

    top = sum(heights)
    if prune:
        if not has_acceptable(top):
            raise _none_acceptable(max_suppression)
        lo, hi = 0, top
        while lo < hi:
            mid = (lo + hi) // 2
            if has_acceptable(mid):
                hi = mid
            else:
                lo = mid + 1
        lowest = lo
    else:
        lowest = next((h for h in range(top + 1) if has_acceptable(h)), None)
        if lowest is None:
            raise _none_acceptable(max_suppression)
    final = by_height[lowest]
    verdicts = ev.run(final)
    accepted = [n for n in final if acceptable(verdicts[n], max_suppression)]
    best = _best(accepted, verdicts, metric, heights, weights)
    return SearchResult(
        best, accepted, dict(ev.verdicts), ev.batches, len(ev.verdicts), inferred, prune
    )


def _subset(node: Node) -> tuple[int, ...]:
    """The attributes a node keeps."""
    return tuple(j for j, level in enumerate(node) if level != DROPPED)


def _candidates(passing: set[Node], d: int) -> set[Node]:
    """Incognito's join and prune: nodes over ``i + 1`` attributes from those over ``i``.

    Join: two passing nodes over subsets that share all but their last attribute, with
    equal levels on the shared ones, give a node over the union. Prune (the subset
    property): a candidate is kept only if every projection dropping one attribute passed.
    """
    by_subset: dict[tuple[int, ...], list[Node]] = {}
    for n in passing:
        by_subset.setdefault(_subset(n), []).append(n)
    subsets = sorted(by_subset)
    out: set[Node] = set()
    for a, b in itertools.combinations(subsets, 2):
        if a[:-1] != b[:-1]:
            continue
        shared, last = a[:-1], b[-1]
        index: dict[tuple[int, ...], list[int]] = {}
        for n in by_subset[b]:
            index.setdefault(tuple([n[j] for j in shared]), []).append(n[last])
        for n1 in by_subset[a]:
            for level in index.get(tuple([n1[j] for j in shared]), ()):
                cand = n1[:last] + (level,) + n1[last + 1 :]
                # Dropping a's or b's last attribute gives n2 or n1, which passed.
                if all(cand[:j] + (DROPPED,) + cand[j + 1 :] in passing for j in shared):
                    out.add(cand)
    return out


def _next_heights(by_h: Mapping[int, list[Node]], batch_nodes: int, one: bool) -> list[Node]:
    """The unresolved nodes of the lowest heights, whole heights while they fit in one batch.

    One pass evaluates one height at least; unless ``one``, the next heights join it
    while the batch has room. A node of a later height may then be evaluated although a
    passing node of an earlier height in the same pass would have marked it: fewer passes
    (each a distributed job with a fixed cost) for a few more node evaluations.

    Args:
        by_h: the unresolved nodes by height.
        batch_nodes: the batch size.
        one: one height per pass.
    """
    out: list[Node] = []
    for h in sorted(by_h):
        if out and (one or len(out) + len(by_h[h]) > batch_nodes):
            break
        out.extend(sorted(by_h[h]))
    return out


class _Candidates:
    """One Incognito iteration's candidates: per attribute subset, levels, heights, marks."""

    def __init__(self, cands: set[Node]) -> None:
        members: dict[tuple[int, ...], list[Node]] = {}
        for n in sorted(cands):
            members.setdefault(_subset(n), []).append(n)
        self.members = members
        self.index = {n: i for ns in members.values() for i, n in enumerate(ns)}
        self.arrays = {s: np.array(ns, dtype=np.int64) for s, ns in members.items()}
        self.heights = {s: np.where(a == DROPPED, 0, a).sum(axis=1) for s, a in self.arrays.items()}
        self.passing = {s: np.zeros(len(ns), dtype=bool) for s, ns in members.items()}
        self.unresolved = {s: np.ones(len(ns), dtype=bool) for s, ns in members.items()}

    def by_height(self) -> dict[int, list[Node]]:
        """The unresolved nodes by height."""
        out: dict[int, list[Node]] = {}
        for s, open_ in self.unresolved.items():
            ns, hs = self.members[s], self.heights[s]
            for i in np.flatnonzero(open_):
                out.setdefault(int(hs[i]), []).append(ns[i])
        return out

    def resolve(self, nodes: Iterable[Node]) -> None:
        """Mark evaluated nodes resolved."""
        for n in nodes:
            self.unresolved[_subset(n)][self.index[n]] = False

    def pass_up(self, n: Node) -> int:
        """Mark ``n`` and every candidate generalizing it passing; the unresolved ones marked."""
        s = _subset(n)
        above = (self.arrays[s] >= np.array(n)).all(axis=1)
        marked = int((above & self.unresolved[s]).sum())
        self.passing[s] |= above
        self.unresolved[s] &= ~above
        return marked

    def passed(self) -> set[Node]:
        """The candidates passing."""
        return {
            self.members[s][i] for s, mask in self.passing.items() for i in np.flatnonzero(mask)
        }


def incognito(task: SearchTask, prune: bool, batch_nodes: int = 1024) -> SearchResult:
    """Incognito (LeFevre, DeWitt, Ramakrishnan 2005; Aggarwal 2015, section 20.3.1.2).

    Iteration ``i`` holds candidate nodes over ``i``-attribute subsets: single attributes
    first, then the join of the passing nodes of iteration ``i - 1`` pruned by the subset
    property (:func:`_candidates`). Each iteration's candidates are checked breadth-first
    by height, every subset at once (one batch per height): a node that passes marks all
    its generalizations among the candidates as passing without evaluation (the
    generalization property). A pass takes whole heights while they fit in
    ``batch_nodes`` (:func:`_next_heights`). The passing nodes over all ``d`` attributes are the
    acceptable nodes; the minimal ones are returned and the one of least loss is published.

    The frequency set of each node is rolled up by the ``evaluate`` callback from the
    bottom node's (one pass over the table for all iterations).

    Without ``prune`` neither property holds (:func:`prunable`): every node of the whole
    lattice is evaluated, and the published node is the acceptable one of least loss among
    all of them (the minimal ones are still reported).

    Raises:
        ConfigError: no node is acceptable.
    """
    heights, evaluate, max_suppression, metric, weights = task[:5]
    d = len(heights)
    ev = _Evaluator(evaluate, batch_nodes)
    inferred = 0
    if not prune:
        nodes = [tuple(int(x) for x in row) for row in all_nodes(heights)]
        by_h: dict[int, list[Node]] = {}
        for n in nodes:
            by_h.setdefault(height(n), []).append(n)
        for h in sorted(by_h):
            ev.run(by_h[h])
        accepted = {n for n in nodes if acceptable(ev.verdicts[n], max_suppression)}
        if not accepted:
            raise _none_acceptable(max_suppression)
        best = _best(sorted(accepted), ev.verdicts, metric, heights, weights)
        return SearchResult(
            best, _minimal(accepted), dict(ev.verdicts), ev.batches, len(ev.verdicts), 0, False
        )
    passing: set[Node] = set()
    for i in range(1, d + 1):
        if i == 1:
            cands = {
                tuple(level if j == q else DROPPED for j in range(d))
                for q in range(d)
                for level in range(heights[q] + 1)
            }
        else:
            cands = _candidates(passing, d)
        passing = set()
        if not cands:
            break
        level = _Candidates(cands)
        while by_h := level.by_height():
            todo = _next_heights(by_h, batch_nodes, task.one_height)
            verdicts = ev.run(todo)
            level.resolve(todo)
            for n in todo:
                if acceptable(verdicts[n], max_suppression):
                    inferred += level.pass_up(n)
        passing = level.passed()
    full = {n for n in passing if DROPPED not in n}
    if not full:
        raise _none_acceptable(max_suppression)
    minimal = _minimal(full)
    best = _best(minimal, ev.verdicts, metric, heights, weights)
    return SearchResult(best, minimal, dict(ev.verdicts), ev.batches, len(ev.verdicts), inferred)
