"""Average relative error (ARE) of random count queries on relational-transaction data.

Gong, Yang and Luo (2016), section 4.2, eq. 4-6. A query is

.. code-block:: sql

    SELECT COUNT(*) FROM T WHERE pred1(A_1) AND ... AND pred1(A_qd) AND pred2(A_{d+1})

* ``pred1(A)``: ``A`` is one of ``b`` values ``x_1 .. x_b`` drawn from the attribute's domain;
* ``pred2``: the record's set ``contains (pred3(c_1) OR ... OR pred3(c_b))``, the ``c_j``
  drawn from the sets (transaction combinations) present in ``T``;
* ``pred3(c)``: every item of ``c`` is in the record's set;
* ``b = ceil(|A| s^(1/(qd+1)))`` per attribute (eq. 4), ``s`` the selectivity.

``act`` is the answer on the original table; ``est`` the answer on the published RT / TT
tables computed "as in Anatomy" (Xiao and Tao 2006); ``RE = |act - est| / act`` (eq. 5)
and ``ARE`` the mean RE over ``qt`` queries (eq. 6), reported in percent like the paper.

Decided readings (each documented where it is implemented, and tested):

* **selectivity** ``s`` is a fraction in ``(0, 1]``. The paper's default "s = 2" is 2 %
  (``s = 0.02``): eq. 4 states ``0 <= s <= 100%`` and the authors' evaluation code
  computes ``(s / 100) ** (1 / (qd + 1))``. With ``qd = 5`` each predicate keeps about
  52 % of its domain.
* **``|A|`` of the set attribute** (eq. 4): the number of candidate sets, i.e. the number of
  distinct sets in ``T`` when the driver passes them all (default), or the number of
  items (the authors' code: the taxonomy's leaves), see :func:`set_domain_size`. ``b`` never
  exceeds the number of candidates.
* **pred2 on a published (generalized) set** ``g``, two switches:

  - ``match``: ``"contains"`` (default, the paper's text: every item of ``c`` is in the
    record) or ``"equals"`` (the record's set is exactly ``c``);
  - ``generalized``: how a generalized item ``u`` (an inner node covering several leaves)
    answers for an item ``v`` under it. ``"certain"`` (default): ``u`` covers ``v``, so the
    predicate holds (probability 1); the probability of the estimate is then only
    Anatomy's, ``1 / |G|`` per TT entry, which is literally "the probability as in [18]"
    of the paper. ``"uniform"``: ``u`` stands for each of its leaves with probability
    ``1 / leaves_under(u)`` (the authors' code), items independently, so
    ``P(c in g) = prod_{v in c} 1 / leaves_under(u_v)`` (1 for a leaf ``u_v``) and 0 when
    some ``v`` is not covered. For ``"equals"``, ``"certain"`` needs ``c`` covered by
    ``g`` with every node of ``g`` covering an item of ``c``; ``"uniform"`` reads every node
    as one of its leaves, so it needs each node to cover exactly one item of ``c`` and
    gives ``prod_{u in g} 1 / leaves_under(u)``.

  Only ``"certain"`` reproduces the paper's worked example (section 4.2): on Table 4 the
  query ``Age in {18, 19}, Sex = M, Disease contains (a1, b2)`` finds 2 RT rows of group 1,
  whose TT holds ``<A, b2>, <C>, <b2, C>``; ``"certain"`` gives ``2 * 1 / 3 = 0.67``
  (the paper's 0.66, RE 34 %), ``"uniform"`` gives ``2 * (1/2) / 3 = 0.33``. On Table 2
  (whose disease cells are lost in our copy of the paper; with any (k, k^m)-anonymous
  generalization where Bob's set covers ``a1, b2`` and Tom's does not) ``"certain"``
  gives ``0.4`` as the paper, ``"uniform"`` at most 0.2. Hence ``"certain"`` is the default;
  it is an optimistic reading (a generalized item is taken to match every item it
  covers), ``"uniform"`` the probabilistic one of the authors' code.
* **OR over the ``b`` combinations**: with ``"certain"`` every ``p`` is 0 or 1 and the OR is
  exact. With ``"uniform"`` we sum the probabilities and cap at 1 (the union bound; the
  authors' code sums without a cap). The sum is exact when the combinations' events
  are mutually exclusive (two combinations that need different leaves of one node,
  always so for ``"equals"``), and an overestimate for nested ones; noisy-or
  (``1 - prod(1 - p_j)``) would be exact only for combinations on disjoint nodes, which
  the queries' combinations (about half of all sets of ``T``) rarely are.
* **zero answers** are resampled, not skipped: :func:`draw_queries` is a prefix-stable
  stream (the first ``n`` queries of ``qt = N`` are those of ``qt = n``), so keeping the
  first ``qt`` queries with ``act > 0`` from a longer stream (:func:`resample_zero`,
  :func:`draw_answerable`) is the same as replacing every zero-answer query by the next
  query drawn.
* the set ``()`` is a combination like any other: it is contained in every set and
  equals only the empty set.

Scale: everything is mergeable over batches of rows.

1. Driver: the QI domains (distinct values per column) and the candidate sets (the
   distinct sets of ``T``, or a seeded sample of them with ``set_size`` their number) are
   small aggregates; :func:`draw_queries` then :func:`compile_queries` (broadcast).
2. ``act``: every batch of original rows gives :func:`actual_counts` (a ``qt`` vector);
   the vectors are summed. :func:`draw_answerable` runs this on a growing pool of
   queries until ``qt`` of them have ``act > 0``.
3. ``est``: RT batches give :func:`rt_partial` (per group and query the RT rows matching
   every pred1, plus the group's size), TT batches give :func:`tt_partial` (per group and
   query the TT entries matching pred2, weighted by their count). Both are
   :class:`GroupPartial` and merge by summing per group (:meth:`GroupPartial.merge`); in
   Spark, ``mapInPandas`` emits :meth:`GroupPartial.to_frame` (long rows ``group, query,
   value``, the size under ``query = SIZE_QUERY``), ``groupBy(group, query).sum(value)``
   merges them, and either the driver collects them (:meth:`GroupPartial.from_frame`,
   :func:`combine`) or Spark joins RT and TT on ``(group, query)``, divides by the size
   and sums per query: ``est_q = sum_G rt[G, q] * tt[G, q] / |G|``.
4. :func:`are` on the two vectors.

pred2 with ``"contains"`` and sure answers (``"certain"``, or leaf sets) goes through
:func:`contained_hits`: a subset test of leaf bitmaps per candidate (set, combination)
pair, the matched combinations' query bits ORed, packed. A combination of a basket holds
about a hundred items, which the general path expands pair by pair.
The job's stage is :mod:`sparkanon.families.transaction.are`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np
import pandas as pd

from sparkanon.attributes.itemsets import ItemSets, ItemTree

SetMatch = Literal["contains", "equals"]
"""pred3 on a set: every item of the combination is in it, or it is the combination."""
GeneralizedItem = Literal["certain", "uniform"]
"""How a generalized item answers for a leaf it covers: surely, or with 1 / its leaves."""
SetDomain = Literal["sets", "items"]
"""``|A|`` of the set attribute in eq. 4: distinct sets of ``T`` or items."""

SIZE_QUERY = -1
"""Query index of the group-size rows in :meth:`GroupPartial.to_frame`."""
GROUP_COLUMN = "group_id"
"""Default group column of the RT and TT tables (as published by the ``publish`` stage)."""
COUNT_COLUMN = "count"
"""Default count column of the TT table."""
SET_COLUMN = "set"
"""Default set column of the TT table (node ids: lists, arrays or ``"3 7 12"`` text)."""

_CHUNK_CELLS = 1 << 22  # rows x queries handled at once (about 4 M cells)
_DENSE_SPEEDUP = 16  # a dense product cell costs about 1/16 of a scattered one


# ---------------------------------------------------------------------------
# Queries


@dataclass(frozen=True)
class CountQuery:
    """One count query of Gong et al. 2016, eq. 4-6.

    Attributes:
        qi: ``(column, allowed values)`` pairs, sorted by column: pred1 of each chosen
            quasi-identifier (a row matches when its value is one of the allowed ones).
        combinations: the ``c_j`` of pred2, each a sorted tuple of distinct leaf ids.
    """

    qi: tuple[tuple[str, tuple[Any, ...]], ...]
    combinations: tuple[tuple[int, ...], ...]

    @classmethod
    def of(
        cls, qi: Mapping[str, Iterable[Any]], combinations: Iterable[Iterable[int]]
    ) -> CountQuery:
        """A query from plain mappings and iterables (normalised: sorted, deduplicated).

        Args:
            qi: column -> allowed values.
            combinations: the combinations of pred2, as iterables of leaf ids.

        Returns:
            The query.
        """
        pairs = tuple((str(c), tuple(_canonical(v))) for c, v in sorted(qi.items()))
        combos = tuple(sorted({tuple(sorted({int(v) for v in c})) for c in combinations}))
        return cls(qi=pairs, combinations=combos)

    @property
    def columns(self) -> tuple[str, ...]:
        """The quasi-identifiers the query constrains."""
        return tuple(c for c, _ in self.qi)


def _canonical(values: Iterable[Any]) -> list[Any]:
    """Distinct values in a fixed order (sorted; nulls last), whatever the input order."""
    series = pd.Series(list(values), dtype=object)
    nulls = series.isna()
    uniq = list(pd.unique(series[~nulls]))
    try:
        uniq = sorted(uniq)
    except TypeError:
        uniq = sorted(uniq, key=lambda v: (type(v).__name__, repr(v)))
    if nulls.any():
        uniq.append(series[nulls].iloc[0])
    return uniq


def selection_size(domain_size: int, s: float, qd: int) -> int:
    """``b = ceil(|A| s^(1/(qd+1)))`` of Gong et al. 2016, eq. 4, at most ``|A|``.

    Args:
        domain_size: ``|A|``.
        s: selectivity, a fraction in ``(0, 1]`` (the paper's "2" is ``0.02``).
        qd: number of quasi-identifiers in the query.

    Returns:
        The number of values to draw (0 for an empty domain).
    """
    if domain_size <= 0:
        return 0
    raw = domain_size * s ** (1.0 / (qd + 1))
    return min(domain_size, max(1, math.ceil(raw - 1e-9)))


def set_domain_size(mode: SetDomain, n_distinct_sets: int, n_items: int) -> int:
    """``|A|`` of the set attribute in eq. 4.

    Args:
        mode: ``"sets"`` (default reading: the attribute's values are its sets, and the
            combinations are drawn from the distinct sets of ``T``) or ``"items"`` (the
            authors' evaluation code: the taxonomy's leaves).
        n_distinct_sets: distinct sets in ``T``.
        n_items: items (leaves of the taxonomy).

    Returns:
        The size to pass as ``set_size`` to :func:`draw_queries`.
    """
    if mode == "sets":
        return n_distinct_sets
    if mode == "items":
        return n_items
    raise ValueError(f"set domain must be 'sets' or 'items', got {mode!r}")


def draw_queries(
    qi_domains: Mapping[str, Sequence[Any]],
    set_combinations: Sequence[Iterable[int]],
    qd: int,
    s: float,
    qt: int,
    seed: int,
    set_size: int | None = None,
) -> list[CountQuery]:
    """Draw ``qt`` random count queries (Gong et al. 2016, section 4.2), deterministically.

    Per query, from one seeded numpy ``Generator``: ``qd`` distinct quasi-identifiers,
    then for each ``b`` distinct values of its domain, then ``b`` distinct combinations of
    the candidate sets (``b`` of eq. 4, :func:`selection_size`). Domains and candidates
    are put in a canonical order first, so the result does not depend on the order they
    arrive in (a Spark ``distinct`` has none). The stream is prefix-stable: the first
    ``n`` queries do not depend on ``qt``, which :func:`draw_answerable` relies on.

    Args:
        qi_domains: column -> its distinct values in ``T``.
        set_combinations: the candidate combinations: the distinct sets of ``T`` (leaf
            ids), or a seeded sample of them.
        qd: quasi-identifiers per query; more than there are columns means all of them
            (and eq. 4 uses that number).
        s: selectivity, a fraction in ``(0, 1]``; the paper's default "2" means 2 %, 0.02.
        qt: number of queries.
        seed: seed of the generator.
        set_size: ``|A|`` of the set attribute in eq. 4 (:func:`set_domain_size`);
            ``None``: the number of distinct candidates.

    Returns:
        The queries.

    Raises:
        ValueError: ``s`` outside ``(0, 1]``, negative ``qd`` / ``qt``, an empty domain or
            no candidate combination.
    """
    if not 0 < s <= 1:
        raise ValueError(
            f"selectivity s must be a fraction in (0, 1], got {s}"
            " (the paper's s = 2 means 2%: pass 0.02)"
        )
    if qd < 0 or qt < 0:
        raise ValueError(f"qd and qt must not be negative, got qd={qd}, qt={qt}")
    columns = sorted(qi_domains)
    domains = [_canonical(qi_domains[c]) for c in columns]
    for c, d in zip(columns, domains, strict=True):
        if not d:
            raise ValueError(f"the domain of quasi-identifier {c!r} is empty")
    pool = sorted({tuple(sorted({int(v) for v in c})) for c in set_combinations})
    if not pool:
        raise ValueError("no set combinations to draw pred2 from")
    qd_eff = min(qd, len(columns))
    b_cols = [selection_size(len(d), s, qd_eff) for d in domains]
    size = len(pool) if set_size is None else int(set_size)
    b_set = min(len(pool), selection_size(size, s, qd_eff))
    rng = np.random.default_rng(seed)
    queries: list[CountQuery] = []
    for _ in range(qt):
        chosen = rng.choice(len(columns), size=qd_eff, replace=False)
        qi = []
        for c in chosen.tolist():
            idx = np.sort(rng.choice(len(domains[c]), size=b_cols[c], replace=False))
            dom = domains[c]
            qi.append((columns[c], tuple(dom[i] for i in idx.tolist())))
        qi.sort(key=lambda pair: pair[0])
        idx = np.sort(rng.choice(len(pool), size=b_set, replace=False))
        combos = tuple(map(pool.__getitem__, idx.tolist()))
        queries.append(CountQuery(qi=tuple(qi), combinations=combos))
    return queries


@dataclass(frozen=True, eq=False)
class CompiledQueries:
    """Queries as arrays, built once on the driver and shipped to the executors.

    Attributes:
        n_queries: ``qt``.
        combo_offsets: the distinct combinations of all queries, compressed rows: the
            leaf ids of combination ``j`` are ``combo_items[combo_offsets[j]:...[j + 1]]``.
        combo_items: concatenated leaf ids.
        combo_key: per combination, its key item (its rarest item among all
            combinations; ``-1`` for the empty combination); combinations are sorted by it,
            so those keyed under one taxonomy node are a contiguous slice.
        membership: ``(combinations, qt)`` booleans: combination ``j`` is in query ``q``.
        columns: the constrained quasi-identifiers.
        column_values: per column, the values any query allows (an index).
        column_tables: per column, ``(values + 1, qt)`` booleans: value ``v`` passes
            query ``q``'s pred1; the last row is a value no query names; a query not
            constraining the column passes every value.
    """

    n_queries: int
    combo_offsets: np.ndarray
    combo_items: np.ndarray
    combo_key: np.ndarray
    membership: np.ndarray
    columns: tuple[str, ...]
    column_values: tuple[pd.Index, ...]
    column_tables: tuple[np.ndarray, ...]

    @property
    def n_combinations(self) -> int:
        """Distinct combinations over all queries."""
        return len(self.combo_key)

    @property
    def empty_combination(self) -> int:
        """Index of the empty combination, ``-1`` when no query has it."""
        return 0 if len(self.combo_key) and self.combo_key[0] < 0 else -1


def compile_queries(queries: Sequence[CountQuery]) -> CompiledQueries:
    """Compile queries into arrays (:class:`CompiledQueries`).

    Args:
        queries: the queries.

    Returns:
        Their compiled form.
    """
    qt = len(queries)
    combos, rows = _distinct_combinations(queries)
    per_query = np.fromiter((len(q.combinations) for q in queries), dtype=np.int64, count=qt)
    cols = np.repeat(np.arange(qt, dtype=np.int64), per_query)
    lengths = np.fromiter((len(c) for c in combos), dtype=np.int64, count=len(combos))
    offsets = np.zeros(len(combos) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    items = np.fromiter((v for c in combos for v in c), dtype=np.int64, count=int(offsets[-1]))
    key = _rarest_items(items, lengths)
    order = np.argsort(key, kind="stable")
    new_of_old = np.empty(len(combos), dtype=np.int64)
    new_of_old[order] = np.arange(len(combos))
    sorted_lengths = lengths[order]
    sorted_offsets = np.zeros(len(combos) + 1, dtype=np.int64)
    np.cumsum(sorted_lengths, out=sorted_offsets[1:])
    sorted_items = items[_ranges(offsets[:-1][order], sorted_lengths)]
    membership = np.zeros((len(combos), qt), dtype=bool)
    membership[new_of_old[rows], cols] = True
    names = sorted({c for query in queries for c in query.columns})
    values: list[pd.Index] = []
    tables: list[np.ndarray] = []
    for name in names:
        allowed = [dict(query.qi).get(name) for query in queries]
        named = dict.fromkeys(chain.from_iterable(a for a in allowed if a is not None))
        idx = pd.Index(_canonical(named), dtype=object)
        table = np.zeros((len(idx) + 1, qt), dtype=bool)
        # One lookup of all the queries' allowed values at once (one lookup per query
        # and column would make 5000 index lookups for 1000 queries over 5 columns).
        unconstrained = [q for q, a in enumerate(allowed) if a is None]
        table[:, unconstrained] = True
        listed = [(q, v) for q, a in enumerate(allowed) if a is not None for v in a]
        if listed:
            query_of = np.fromiter((q for q, _ in listed), dtype=np.int64, count=len(listed))
            found = idx.get_indexer(pd.Index([v for _, v in listed], dtype=object))
            table[found, query_of] = True
        values.append(idx)
        tables.append(table)
    return CompiledQueries(
        n_queries=qt,
        combo_offsets=sorted_offsets,
        combo_items=sorted_items,
        combo_key=key[order],
        membership=membership,
        columns=tuple(names),
        column_values=tuple(values),
        column_tables=tuple(tables),
    )


def _distinct_combinations(
    queries: Sequence[CountQuery],
) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """The distinct combinations (first-seen order) and, per query combination, its index.

    Queries drawn together share their combination objects (one pool), so the objects
    are told apart by identity first, cheaply, and only the distinct objects are
    hashed by value (a combination can hold a hundred items).
    """
    flat = list(chain.from_iterable(q.combinations for q in queries))
    if not flat:
        return [], np.zeros(0, dtype=np.int64)
    ids = np.fromiter(map(id, flat), dtype=np.int64, count=len(flat))
    _, first, by_object = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # objects in first-seen order
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    index: dict[tuple[int, ...], int] = {}
    value_of = np.fromiter(
        (index.setdefault(flat[i], len(index)) for i in first[order].tolist()),
        dtype=np.int64,
        count=len(order),
    )
    return list(index), value_of[rank[by_object.reshape(-1)]]


def _as_compiled(queries: Sequence[CountQuery] | CompiledQueries) -> CompiledQueries:
    """Compile unless already compiled."""
    return queries if isinstance(queries, CompiledQueries) else compile_queries(queries)


def _rarest_items(items: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Per combination its least frequent item (ties: the smallest id); -1 when empty."""
    key = np.full(len(lengths), -1, dtype=np.int64)
    if items.size == 0:
        return key
    freq = np.bincount(items)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    order = np.lexsort((items, freq[items], owner))
    first = np.r_[True, owner[order][1:] != owner[order][:-1]]
    key[owner[order][first]] = items[order][first]
    return key


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + c)`` for every start and count."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    shift = np.repeat(np.asarray(starts, dtype=np.int64) - (ends - counts), counts)
    return np.arange(total, dtype=np.int64) + shift


# ---------------------------------------------------------------------------
# pred1 and pred2


def qi_match(qi: pd.DataFrame, queries: Sequence[CountQuery] | CompiledQueries) -> np.ndarray:
    """Rows satisfying every pred1 of each query.

    Args:
        qi: the rows' quasi-identifiers (every column some query constrains).
        queries: the queries, or their compiled form.

    Returns:
        ``(rows, qt)`` booleans.

    Raises:
        KeyError: a constrained column is missing.
    """
    compiled = _as_compiled(queries)
    out = np.ones((len(qi), compiled.n_queries), dtype=bool)
    for name, idx, table in zip(
        compiled.columns, compiled.column_values, compiled.column_tables, strict=True
    ):
        if name not in qi.columns:
            raise KeyError(f"quasi-identifier {name!r} of the queries is not among the columns")
        codes = idx.get_indexer(pd.Index(qi[name].to_numpy(dtype=object), dtype=object))
        codes[codes < 0] = len(idx)
        out &= table[codes]
    return out


def set_scores(
    sets: ItemSets,
    queries: Sequence[CountQuery] | CompiledQueries,
    tree: ItemTree | None = None,
    match: SetMatch = "contains",
    generalized: GeneralizedItem = "certain",
) -> np.ndarray:
    """pred2 of every query on every set: 0/1, or a probability for generalized sets.

    Only the (set, combination) pairs that can match are visited: a combination can
    only be in a set whose nodes cover its key item, and the combinations keyed under
    one node are a contiguous slice (:class:`CompiledQueries`).

    Args:
        sets: the sets (node ids; a generalized set must be an antichain of the tree,
            no node with one of its ancestors).
        queries: the queries, or their compiled form.
        tree: the item taxonomy; ``None`` when every set holds leaves only.
        match: ``"contains"`` or ``"equals"`` (module docstring).
        generalized: ``"certain"`` or ``"uniform"`` (module docstring).

    Returns:
        ``(sets, qt)`` floats in ``[0, 1]``.
    """
    compiled = _as_compiled(queries)
    if match not in ("contains", "equals"):
        raise ValueError(f"match must be 'contains' or 'equals', got {match!r}")
    if generalized not in ("certain", "uniform"):
        raise ValueError(f"generalized must be 'certain' or 'uniform', got {generalized!r}")
    n, qt = len(sets), compiled.n_queries
    sizes = sets.sizes()
    if (
        tree is not None
        and compiled.combo_items.size
        and compiled.combo_items.max() >= (tree.n_leaves)
    ):
        raise ValueError("a combination names an item the taxonomy does not have")
    if match == "contains" and (generalized == "certain" or tree is None):
        # Every answer is sure (0 or 1): a subset test of leaf bitmaps.
        return contained_hits(sets, compiled, tree).astype(np.float64)
    ancestors = _ancestor_table(tree)
    out = np.zeros((n, qt), dtype=np.float64)
    step = max(1, min(_CHUNK_CELLS // max(qt, 1), _CHUNK_CELLS // max(compiled.n_combinations, 1)))
    for a in range(0, n, step):
        b = min(n, a + step)
        chunk = ItemSets(
            offsets=sets.offsets[a : b + 1] - sets.offsets[a],
            nodes=sets.nodes[sets.offsets[a] : sets.offsets[b]],
        )
        pair_set, pair_combo, p = _pair_probabilities(
            chunk, compiled, tree, ancestors, match, generalized
        )
        _accumulate(out[a:b], pair_set, pair_combo, p, compiled.membership)
    empty = compiled.empty_combination
    if empty >= 0:
        hit = np.ones(n, dtype=bool) if match == "contains" else sizes == 0
        out[hit] += compiled.membership[empty]
    if generalized == "certain":
        return (out > 0).astype(np.float64)
    return np.minimum(out, 1.0)


def _ancestor_table(tree: ItemTree | None) -> np.ndarray:
    """``table[level, leaf]``: each leaf's ancestor at every level (empty without a tree)."""
    if tree is None:
        return np.zeros((0, 0), dtype=np.int64)
    leaves = np.arange(tree.n_leaves, dtype=np.int64)
    return np.stack([tree.ancestor_at(leaves, lv) for lv in range(tree.taxonomy.height + 1)])


def contained_hits(
    sets: ItemSets,
    queries: Sequence[CountQuery] | CompiledQueries,
    tree: ItemTree | None = None,
) -> np.ndarray:
    """pred2 with ``"contains"``, each generalized item covering its leaves surely.

    A set satisfies a query when the leaves its nodes cover include every item of one of
    the query's combinations: :func:`set_scores` with ``"contains"`` and ``"certain"``,
    as booleans. Candidate (set, combination) pairs come by key item; each is one subset
    test of leaf bitmaps (``combination & ~set == 0`` word by word), and a set's queries
    are the OR of its matched combinations' query bits (packed 8 a byte).

    Args:
        sets: the sets (node ids; antichains of ``tree``, or leaf ids without one).
        queries: the queries, or their compiled form.
        tree: the item taxonomy; ``None`` when every set holds leaves only.

    Returns:
        ``(sets, qt)`` booleans.
    """
    compiled = _as_compiled(queries)
    n, qt = len(sets), compiled.n_queries
    n_leaves = (
        tree.n_leaves
        if tree is not None
        else int(max(sets.nodes.max(initial=-1), compiled.combo_items.max(initial=-1))) + 1
    )
    combo_bits = _combination_bits(compiled, n_leaves)
    member_bits = np.packbits(compiled.membership, axis=1, bitorder="little")
    hits = np.zeros((n, member_bits.shape[1]), dtype=np.uint8)
    step = max(1, _CHUNK_CELLS // max(compiled.n_combinations, 1))
    for a in range(0, n, step):
        b = min(n, a + step)
        chunk = ItemSets(
            offsets=sets.offsets[a : b + 1] - sets.offsets[a],
            nodes=sets.nodes[sets.offsets[a] : sets.offsets[b]],
        )
        bits = _set_bits(chunk, tree, n_leaves)
        pair_set, pair_combo = _covered_pairs(chunk, compiled, tree, combo_bits, bits)
        _or_rows(hits[a:b], pair_set, pair_combo, member_bits)
    empty = compiled.empty_combination
    if empty >= 0:
        hits |= member_bits[empty]
    return np.unpackbits(hits, axis=1, count=qt, bitorder="little").astype(bool)


def _leaf_bitmaps(rows: np.ndarray, leaves: np.ndarray, n_rows: int, n_leaves: int) -> np.ndarray:
    """``(n_rows, words)`` uint64 bitmaps with bit ``leaf`` of row ``row`` set."""
    words = max(1, -(-n_leaves // 64))
    dense = np.zeros((n_rows, words * 64), dtype=bool)
    dense[rows, leaves] = True
    packed = np.packbits(dense, axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64, copy=False)


def _set_bits(sets: ItemSets, tree: ItemTree | None, n_leaves: int) -> np.ndarray:
    """Per set, the bitmap of the leaves its nodes cover."""
    nodes = sets.nodes
    row = np.repeat(np.arange(len(sets), dtype=np.int64), sets.sizes())
    if tree is None:
        return _leaf_bitmaps(row, nodes, len(sets), n_leaves)
    lo, hi = tree.leaf_lo[nodes], tree.leaf_hi[nodes]
    counts = hi - lo + 1
    return _leaf_bitmaps(np.repeat(row, counts), _ranges(lo, counts), len(sets), n_leaves)


def _combination_bits(compiled: CompiledQueries, n_leaves: int) -> np.ndarray:
    """Per combination, the bitmap of its items."""
    lengths = np.diff(compiled.combo_offsets)
    row = np.repeat(np.arange(compiled.n_combinations, dtype=np.int64), lengths)
    return _leaf_bitmaps(row, compiled.combo_items, compiled.n_combinations, n_leaves)


def _covered_pairs(
    sets: ItemSets,
    compiled: CompiledQueries,
    tree: ItemTree | None,
    combo_bits: np.ndarray,
    set_bits: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(set, combination) pairs whose combination's items the set's nodes all cover.

    The candidates are found by key item as in :func:`_pair_probabilities`; each is then
    one subset test of bitmaps, ``combination & ~set == 0`` word by word.
    """
    nodes = sets.nodes
    row_of = np.repeat(np.arange(len(sets), dtype=np.int64), sets.sizes())
    lo, hi = (nodes, nodes) if tree is None else (tree.leaf_lo[nodes], tree.leaf_hi[nodes])
    start = np.searchsorted(compiled.combo_key, lo, side="left")
    counts = np.searchsorted(compiled.combo_key, hi, side="right") - start
    pair_set = np.repeat(row_of, counts)
    pair_combo = _ranges(start, counts)
    ok = np.ones(len(pair_set), dtype=bool)
    step = max(1, _CHUNK_CELLS // combo_bits.shape[1])
    for a in range(0, len(pair_set), step):
        c, r = pair_combo[a : a + step], pair_set[a : a + step]
        ok[a : a + step] = ~np.any(combo_bits[c] & ~set_bits[r], axis=1)
    return pair_set[ok], pair_combo[ok]


def _or_rows(
    hits: np.ndarray, pair_set: np.ndarray, pair_combo: np.ndarray, member_bits: np.ndarray
) -> None:
    """``hits[set] |= member_bits[combination]`` over the pairs (``pair_set`` sorted)."""
    step = max(1, _CHUNK_CELLS // max(member_bits.shape[1], 1))
    for a in range(0, len(pair_set), step):
        rows, combos = pair_set[a : a + step], pair_combo[a : a + step]
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        hits[rows[starts]] |= np.bitwise_or.reduceat(member_bits[combos], starts, axis=0)


def _pair_probabilities(
    sets: ItemSets,
    compiled: CompiledQueries,
    tree: ItemTree | None,
    ancestors: np.ndarray,
    match: SetMatch,
    generalized: GeneralizedItem,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate (set, combination) pairs and the probability that the set matches."""
    nodes = sets.nodes
    sizes = sets.sizes()
    row_of = np.repeat(np.arange(len(sets), dtype=np.int64), sizes)
    if tree is None:
        lo = hi = nodes
        n_nodes = int(max(nodes.max(initial=-1), compiled.combo_items.max(initial=-1))) + 1
    else:
        lo, hi = tree.leaf_lo[nodes], tree.leaf_hi[nodes]
        n_nodes = tree.n_nodes
    keys = compiled.combo_key
    start = np.searchsorted(keys, lo, side="left")
    counts = np.searchsorted(keys, hi, side="right") - start
    pair_set = np.repeat(row_of, counts)
    pair_combo = _ranges(start, counts)
    if pair_set.size == 0:
        return pair_set, pair_combo, np.zeros(0)
    # Expand every pair into the items of its combination; find each item's covering node.
    c_off = compiled.combo_offsets
    c_len = c_off[pair_combo + 1] - c_off[pair_combo]
    item_pair = np.repeat(np.arange(len(pair_set), dtype=np.int64), c_len)
    item = compiled.combo_items[_ranges(c_off[pair_combo], c_len)]
    item_set = pair_set[item_pair]
    set_keys = np.sort(row_of * n_nodes + nodes)
    cover = np.full(item.size, -1, dtype=np.int64)
    levels = [0] if tree is None else np.unique(tree.level[nodes]).tolist()
    for level in levels:
        cand = item if tree is None or level == 0 else ancestors[level, item]
        k = item_set * n_nodes + cand
        pos = np.minimum(np.searchsorted(set_keys, k), max(set_keys.size - 1, 0))
        hit = (set_keys[pos] == k) & (cover < 0)
        cover[hit] = cand[hit]
    starts = np.zeros(len(pair_set), dtype=np.int64)
    np.cumsum(c_len[:-1], out=starts[1:])
    covered = np.minimum.reduceat((cover >= 0).astype(np.int8), starts) > 0
    if generalized == "uniform" and tree is not None:
        under = np.where(cover >= 0, tree.leaves_under(np.maximum(cover, 0)), 1)
        p = np.exp(-np.add.reduceat(np.log(under.astype(np.float64)), starts))
    else:
        p = np.ones(len(pair_set))
    ok = covered
    if match == "equals":
        # Every node of the set must cover an item of the combination ("uniform": exactly one).
        hit_nodes = np.unique(item_pair[cover >= 0] * n_nodes + cover[cover >= 0]) // n_nodes
        distinct = np.bincount(hit_nodes, minlength=len(pair_set))
        ok = ok & (distinct == sizes[pair_set])
        if generalized == "uniform":
            ok = ok & (c_len == sizes[pair_set])
    return pair_set[ok], pair_combo[ok], p[ok]


def _accumulate(
    out: np.ndarray,
    pair_set: np.ndarray,
    pair_combo: np.ndarray,
    p: np.ndarray,
    membership: np.ndarray,
) -> None:
    """``out[set, q] += sum of p over the pairs of the set whose combination is in q``.

    Sparse (a scatter of ``pairs x qt`` cells) when the pairs are few, else a dense
    ``(sets x combinations) @ (combinations x qt)`` product in blocks of combinations,
    which BLAS runs far faster per cell (generalized sets contain many combinations).
    """
    if pair_set.size == 0:
        return
    qt = membership.shape[1]
    combos, local = np.unique(pair_combo, return_inverse=True)
    if pair_set.size * _DENSE_SPEEDUP > out.shape[0] * len(combos):
        block = max(1, _CHUNK_CELLS // max(qt, 1))
        for c0 in range(0, len(combos), block):
            c1 = min(len(combos), c0 + block)
            sel = (local >= c0) & (local < c1)
            dense = np.zeros((out.shape[0], c1 - c0))
            dense[pair_set[sel], local[sel] - c0] = p[sel]
            out += dense @ membership[combos[c0:c1]].astype(np.float64)
        return
    order = np.argsort(pair_set, kind="stable")
    step = max(1, _CHUNK_CELLS // max(qt, 1))
    for a in range(0, len(order), step):
        sl = order[a : a + step]
        contrib = membership[pair_combo[sl]] * p[sl][:, None]
        _add_segments(out, pair_set[sl], contrib)


def _add_segments(out: np.ndarray, rows: np.ndarray, matrix: np.ndarray) -> None:
    """``out[r] += sum of matrix rows with rows == r``; ``rows`` sorted."""
    if rows.size == 0:
        return
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    out[rows[starts]] += np.add.reduceat(matrix.astype(np.float64, copy=False), starts, axis=0)


def _distinct(sets: ItemSets) -> tuple[ItemSets, np.ndarray]:
    """The distinct sets and, per row, the index of its set among them."""
    index: dict[tuple[int, ...], int] = {}
    inverse = np.fromiter(
        (index.setdefault(k, len(index)) for k in sets.keys()), dtype=np.int64, count=len(sets)
    )
    return ItemSets.from_lists(index), inverse


def _row_steps(n: int, qt: int) -> Iterable[tuple[int, int]]:
    """Row ranges of at most about ``_CHUNK_CELLS`` cells of a ``(rows, qt)`` matrix."""
    step = max(1, _CHUNK_CELLS // max(qt, 1))
    return ((a, min(n, a + step)) for a in range(0, n, step))


# ---------------------------------------------------------------------------
# act


def actual_counts(
    qi: pd.DataFrame,
    sets: ItemSets,
    queries: Sequence[CountQuery] | CompiledQueries,
    match: SetMatch = "contains",
) -> np.ndarray:
    """The exact answers of the queries on one batch of original rows.

    Summing the vectors of disjoint batches gives the answers on the whole table.

    Args:
        qi: the batch's quasi-identifiers.
        sets: the batch's sets of leaf ids, aligned with ``qi``.
        queries: the queries, or their compiled form.
        match: ``"contains"`` (default) or ``"equals"``.

    Returns:
        ``qt`` counts (int64).

    Raises:
        ValueError: ``qi`` and ``sets`` differ in length.
    """
    if len(qi) != len(sets):
        raise ValueError(f"{len(qi)} quasi-identifier rows but {len(sets)} sets")
    distinct, inverse = _distinct(sets)
    return actual_counts_of_distinct(qi, distinct, inverse, queries, match)


def actual_counts_of_distinct(
    qi: pd.DataFrame,
    distinct: ItemSets,
    inverse: np.ndarray,
    queries: Sequence[CountQuery] | CompiledQueries,
    match: SetMatch = "contains",
) -> np.ndarray:
    """:func:`actual_counts` with the rows' sets given as distinct sets and indices.

    Args:
        qi: the batch's quasi-identifiers.
        distinct: the distinct sets of leaf ids.
        inverse: per row of ``qi``, the index of its set in ``distinct``.
        queries: the queries, or their compiled form.
        match: ``"contains"`` (default) or ``"equals"``.

    Returns:
        ``qt`` counts (int64).
    """
    compiled = _as_compiled(queries)
    if len(qi) != len(inverse):
        raise ValueError(f"{len(qi)} quasi-identifier rows but {len(inverse)} set indices")
    if match == "contains":
        scores = contained_hits(distinct, compiled)
    else:
        scores = set_scores(distinct, compiled, None, match, "certain") > 0
    counts = np.zeros(compiled.n_queries, dtype=np.int64)
    for a, b in _row_steps(len(qi), compiled.n_queries):
        ok = qi_match(qi.iloc[a:b], compiled)
        ok &= scores[inverse[a:b]]
        counts += np.count_nonzero(ok, axis=0)
    return counts


def resample_zero(
    queries: Sequence[CountQuery], actual: np.ndarray, qt: int
) -> tuple[list[CountQuery], np.ndarray]:
    """The first ``qt`` queries with a non-zero answer, and their answers.

    With a prefix-stable stream (:func:`draw_queries`) this replaces every zero-answer
    query by the next one drawn. Fewer than ``qt`` are returned when the pool runs out
    (:func:`draw_answerable` grows it).

    Args:
        queries: a pool of queries, in drawing order.
        actual: their answers on the original table.
        qt: how many to keep.

    Returns:
        The kept queries and their answers.
    """
    actual = np.asarray(actual)
    if len(actual) != len(queries):
        raise ValueError(f"{len(queries)} queries but {len(actual)} answers")
    keep = np.flatnonzero(actual > 0)[:qt]
    return [queries[i] for i in keep.tolist()], actual[keep]


def draw_answerable(
    draw: Callable[[int], Sequence[CountQuery]],
    count: Callable[[Sequence[CountQuery]], np.ndarray],
    qt: int,
    first_pool: int | None = None,
    max_pool: int | None = None,
) -> tuple[list[CountQuery], np.ndarray, int]:
    """Two-pass workflow: draw a pool, count it, keep the first ``qt`` answerable queries.

    The pool doubles until it holds ``qt`` queries with ``act > 0`` or reaches
    ``max_pool``; only the new queries are counted each round (one pass over the
    original rows per round in the job).

    Args:
        draw: ``n ->`` the first ``n`` queries of a prefix-stable stream (e.g.
            ``lambda n: draw_queries(..., qt=n, seed=seed)``).
        count: queries -> their answers on the original table (summed over batches).
        qt: queries wanted.
        first_pool: size of the first pool (default ``2 qt``).
        max_pool: largest pool (default ``64 qt``).

    Returns:
        ``(queries, answers, drawn)``: at most ``qt`` answerable queries, their answers,
        and how many queries were drawn in all.

    Raises:
        ValueError: no query of the largest pool has a non-zero answer.
    """
    pool = max(1, first_pool if first_pool is not None else 2 * qt)
    limit = max(pool, max_pool if max_pool is not None else 64 * qt)
    queries = list(draw(pool))
    actual = np.asarray(count(queries), dtype=np.int64)
    while int((actual > 0).sum()) < qt and pool < limit:
        pool = min(2 * pool, limit)
        more = list(draw(pool))[len(queries) :]
        queries.extend(more)
        actual = np.concatenate([actual, np.asarray(count(more), dtype=np.int64)])
    if qt > 0 and not (actual > 0).any():
        raise ValueError(f"none of {len(queries)} queries has a non-zero answer on the table")
    kept, answers = resample_zero(queries, actual, qt)
    return kept, answers, len(queries)


# ---------------------------------------------------------------------------
# est


@dataclass(frozen=True, eq=False)
class GroupPartial:
    """Per-group partial sums of the Anatomy estimator, mergeable over batches.

    Attributes:
        groups: the group ids, distinct and sorted.
        values: ``(groups, qt)``: from RT, the rows matching every pred1; from TT, the
            entries matching pred2 weighted by their count (a probability each).
        sizes: per group, its rows (RT) or the sum of its counts (TT); ``|G|`` either way.
    """

    groups: np.ndarray
    values: np.ndarray
    sizes: np.ndarray

    @staticmethod
    def merge(parts: Sequence[GroupPartial]) -> GroupPartial:
        """Sum partials of disjoint batches per group.

        Args:
            parts: at least one partial, all with the same number of queries.

        Returns:
            The merged partial.
        """
        if not parts:
            raise ValueError("nothing to merge")
        groups = np.concatenate([np.asarray(p.groups, dtype=object) for p in parts])
        values = np.concatenate([p.values for p in parts], axis=0)
        sizes = np.concatenate([np.asarray(p.sizes, dtype=np.float64) for p in parts])
        return _group_sum(groups, values, sizes)

    def to_frame(self) -> pd.DataFrame:
        """Long rows ``group, query, value`` for a Spark ``groupBy(group, query).sum()``.

        Returns:
            The non-zero values, and each group's size under ``query = SIZE_QUERY``.
        """
        g, q = np.nonzero(self.values)
        return pd.DataFrame(
            {
                "group": np.concatenate([self.groups[g], self.groups]),
                "query": np.concatenate([q, np.full(len(self.groups), SIZE_QUERY)]),
                "value": np.concatenate([self.values[g, q], self.sizes]).astype(np.float64),
            }
        )

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, n_queries: int) -> GroupPartial:
        """The partial of long rows (:meth:`to_frame`; rows may repeat, they are summed).

        Args:
            frame: columns ``group``, ``query``, ``value``.
            n_queries: ``qt``.

        Returns:
            The partial.
        """
        query = frame["query"].to_numpy(dtype=np.int64)
        value = frame["value"].to_numpy(dtype=np.float64)
        codes, groups = pd.factorize(frame["group"], sort=True)
        values = np.zeros((len(groups), n_queries))
        sizes = np.zeros(len(groups))
        is_size = query == SIZE_QUERY
        np.add.at(sizes, codes[is_size], value[is_size])
        np.add.at(values, (codes[~is_size], query[~is_size]), value[~is_size])
        return cls(groups=pd.Index(list(groups)).to_numpy(), values=values, sizes=sizes)


def _group_sum(groups: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> GroupPartial:
    """Sum rows of ``values`` and ``sizes`` per group id."""
    codes, uniq = pd.factorize(pd.Series(groups, dtype=object), sort=True)
    if (codes < 0).any():
        raise ValueError("a group id is missing (null)")
    order = np.argsort(codes, kind="stable")
    out = np.zeros((len(uniq), values.shape[1]))
    _add_segments(out, codes[order], values[order])
    total = np.bincount(codes, weights=sizes, minlength=len(uniq)).astype(np.float64)
    # Back to a typed array (int64 ids stay int64) from pandas' object uniques.
    return GroupPartial(groups=pd.Index(list(uniq)).to_numpy(), values=out, sizes=total)


def rt_partial(
    rt: pd.DataFrame,
    queries: Sequence[CountQuery] | CompiledQueries,
    group_column: str = GROUP_COLUMN,
) -> GroupPartial:
    """Per group and query, the RT rows of a batch satisfying every pred1.

    Args:
        rt: a batch of the published RT table (exact quasi-identifiers and the group).
        queries: the queries, or their compiled form.
        group_column: the group column.

    Returns:
        The batch's partial; ``sizes`` are its rows per group.
    """
    compiled = _as_compiled(queries)
    groups = rt[group_column].to_numpy(dtype=object)
    partials = []
    for a, b in _row_steps(len(rt), compiled.n_queries):
        values = qi_match(rt.iloc[a:b], compiled).astype(np.float64)
        partials.append(_group_sum(groups[a:b], values, np.ones(b - a)))
    if not partials:
        return _group_sum(groups, np.zeros((0, compiled.n_queries)), np.zeros(0))
    return partials[0] if len(partials) == 1 else GroupPartial.merge(partials)


def sorted_group_estimate(
    groups: np.ndarray, rt_hits: np.ndarray, tt_hits: np.ndarray
) -> np.ndarray:
    """The Anatomy estimate over whole groups whose records are sorted by group.

    Each record is one RT row (``rt_hits``: it satisfies every pred1) and one count of
    its group's TT entry (``tt_hits``: its published set satisfies pred2), so
    ``est_q = sum_G rt[G, q] * tt[G, q] / |G|`` with both counts integer sums over the
    group's records (:func:`combine` of :func:`rt_partial` and :func:`tt_partial`, in
    one pass and in integers).

    Args:
        groups: the records' group ids, sorted (equal ids adjacent).
        rt_hits: ``(records, qt)`` booleans.
        tt_hits: ``(records, qt)`` booleans.

    Returns:
        ``qt`` estimates.
    """
    n, qt = rt_hits.shape
    out = np.zeros(qt)
    if n == 0:
        return out
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    ends = np.r_[starts[1:], n]
    step = max(1, _CHUNK_CELLS // max(qt, 1))
    g = 0
    while g < len(starts):
        # whole groups, about `step` records (at least one group)
        last = max(g + 1, int(np.searchsorted(ends, starts[g] + step, side="right")))
        a, b = int(starts[g]), int(ends[last - 1])
        local = starts[g:last] - a
        rt = np.add.reduceat(rt_hits[a:b].view(np.uint8), local, axis=0, dtype=np.int64)
        tt = np.add.reduceat(tt_hits[a:b].view(np.uint8), local, axis=0, dtype=np.int64)
        size = (ends[g:last] - starts[g:last]).astype(np.float64)
        out += ((rt * tt) / size[:, None]).sum(axis=0)
        g = last
    return out


def tt_sets(column: pd.Series | Sequence[Any]) -> ItemSets:
    """The sets of a TT set column: iterables of node ids, or their text ``"3 7 12"``.

    Args:
        column: one set per TT row.

    Returns:
        The sets.
    """
    return ItemSets.from_lists(
        [int(t) for t in v.split()] if isinstance(v, str) else v for v in column
    )


def check_antichains(sets: ItemSets, tree: ItemTree) -> None:
    """Raise unless every set is an antichain of the tree (no node with an ancestor).

    Args:
        sets: generalized sets (node ids).
        tree: the taxonomy.

    Raises:
        ValueError: a node id outside the tree, or a set holding a node and its ancestor.
    """
    nodes = sets.nodes
    if nodes.size == 0:
        return
    if nodes.min() < 0 or nodes.max() >= tree.n_nodes:
        raise ValueError(f"a set names a node outside the taxonomy (0..{tree.n_nodes - 1})")
    row = np.repeat(np.arange(len(sets)), sets.sizes())
    order = np.lexsort((tree.leaf_lo[nodes], row))
    r, n = row[order], nodes[order]
    bad = (r[1:] == r[:-1]) & (tree.leaf_lo[n[1:]] <= tree.leaf_hi[n[:-1]])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"generalized set {[tree.labels[int(v)] for v in sets.row(int(r[i]))]} holds "
            f"{tree.labels[int(n[i])]!r} and {tree.labels[int(n[i + 1])]!r}, one under the "
            "other; a generalized set must be a cut of the taxonomy"
        )


def tt_partial(
    tt: pd.DataFrame,
    tree: ItemTree,
    queries: Sequence[CountQuery] | CompiledQueries,
    match: SetMatch = "contains",
    generalized: GeneralizedItem = "certain",
    sets: ItemSets | None = None,
    set_column: str = SET_COLUMN,
    count_column: str = COUNT_COLUMN,
    group_column: str = GROUP_COLUMN,
    inverse: np.ndarray | None = None,
) -> GroupPartial:
    """Per group and query, the count-weighted TT entries of a batch satisfying pred2.

    Args:
        tt: a batch of the published TT table (group, generalized set, count; a missing
            count column means 1 per row).
        tree: the item taxonomy.
        queries: the queries, or their compiled form.
        match: ``"contains"`` or ``"equals"`` (module docstring).
        generalized: ``"certain"`` or ``"uniform"`` (module docstring).
        sets: the rows' generalized sets, if not read from ``set_column``.
        set_column: column of node ids (iterables or ``"3 7 12"`` text).
        count_column: the count column.
        group_column: the group column.
        inverse: with ``sets``: ``sets`` are distinct and row ``i`` holds
            ``sets[inverse[i]]`` (saves finding the distinct sets again).

    Returns:
        The batch's partial; ``sizes`` are its counts per group.
    """
    compiled = _as_compiled(queries)
    item_sets = sets if sets is not None else tt_sets(tt[set_column])
    if inverse is not None and sets is not None:
        distinct = sets
        if len(inverse) != len(tt):
            raise ValueError(f"{len(tt)} TT rows but {len(inverse)} set indices")
    else:
        if len(item_sets) != len(tt):
            raise ValueError(f"{len(tt)} TT rows but {len(item_sets)} sets")
        distinct, inverse = _distinct(item_sets)
    check_antichains(distinct, tree)
    scores = set_scores(distinct, compiled, tree, match, generalized)
    weights = (
        tt[count_column].to_numpy(dtype=np.float64)
        if count_column in tt.columns
        else np.ones(len(tt))
    )
    groups = tt[group_column].to_numpy(dtype=object)
    partials = []
    for a, b in _row_steps(len(tt), compiled.n_queries):
        values = scores[inverse[a:b]] * weights[a:b, None]
        partials.append(_group_sum(groups[a:b], values, weights[a:b]))
    if not partials:
        return _group_sum(groups, np.zeros((0, compiled.n_queries)), np.zeros(0))
    return partials[0] if len(partials) == 1 else GroupPartial.merge(partials)


def combine(rt: GroupPartial, tt: GroupPartial) -> np.ndarray:
    """The Anatomy estimate per query: ``sum_G rt[G, q] * tt[G, q] / |G|``.

    ``|G|`` is the RT partial's size (the group's records); a group on one side only
    contributes nothing.

    Args:
        rt: merged RT partial.
        tt: merged TT partial.

    Returns:
        ``qt`` estimates.
    """
    if rt.values.shape[1] != tt.values.shape[1]:
        raise ValueError("the RT and TT partials were computed for different queries")
    pos = pd.Index(np.asarray(rt.groups, dtype=object)).get_indexer(
        np.asarray(tt.groups, dtype=object)
    )
    both = pos >= 0
    r = pos[both]
    sizes = rt.sizes[r]
    nonempty = sizes > 0
    rows = rt.values[r][nonempty] / sizes[nonempty, None]
    return (rows * tt.values[both][nonempty]).sum(axis=0)


def estimated_counts(
    rt: pd.DataFrame,
    tt: pd.DataFrame,
    tree: ItemTree,
    queries: Sequence[CountQuery] | CompiledQueries,
    match: SetMatch = "contains",
    generalized: GeneralizedItem = "certain",
    group_column: str = GROUP_COLUMN,
    set_column: str = SET_COLUMN,
    count_column: str = COUNT_COLUMN,
) -> np.ndarray:
    """The Anatomy estimate of every query on whole RT and TT tables (one process).

    ``est = sum_G (RT rows of G satisfying pred1) * (TT entries of G satisfying pred2,
    weighted by count) / |G|`` (Xiao and Tao 2006, Gong et al. 2016, section 4.2). The job computes
    the same with :func:`rt_partial`, :func:`tt_partial`, merging and :func:`combine`.

    Args:
        rt: the RT table.
        tt: the TT table.
        tree: the item taxonomy.
        queries: the queries, or their compiled form.
        match: ``"contains"`` or ``"equals"``.
        generalized: ``"certain"`` or ``"uniform"``.
        group_column: the group column of both tables.
        set_column: the set column of TT.
        count_column: the count column of TT.

    Returns:
        ``qt`` estimates.
    """
    compiled = _as_compiled(queries)
    r = rt_partial(rt, compiled, group_column)
    t = tt_partial(
        tt,
        tree,
        compiled,
        match,
        generalized,
        set_column=set_column,
        count_column=count_column,
        group_column=group_column,
    )
    return combine(r, t)


# ---------------------------------------------------------------------------
# RE and ARE


def relative_errors(actual: np.ndarray, estimated: np.ndarray) -> np.ndarray:
    """``RE = |act - est| / act`` per query (Gong et al. 2016, eq. 5), as fractions.

    Args:
        actual: the answers on the original table, all positive.
        estimated: the estimates on the published tables.

    Returns:
        The relative errors.

    Raises:
        ValueError: shapes differ, or an answer is not positive (resample it first).
    """
    act = np.asarray(actual, dtype=np.float64)
    est = np.asarray(estimated, dtype=np.float64)
    if act.shape != est.shape:
        raise ValueError(f"{act.shape} answers but {est.shape} estimates")
    if (act <= 0).any():
        raise ValueError(
            "a query has no actual answer (act = 0): resample it (resample_zero) before ARE"
        )
    return np.abs(act - est) / act


def are(actual: np.ndarray, estimated: np.ndarray) -> float:
    """Average relative error in percent (Gong et al. 2016, eq. 6): ``100 * mean(RE)``.

    Args:
        actual: the answers on the original table, all positive.
        estimated: the estimates on the published tables.

    Returns:
        ARE in percent (0 for a perfect estimate; may exceed 100).

    Raises:
        ValueError: no queries, shapes differ or an answer is not positive.
    """
    re = relative_errors(actual, estimated)
    if re.size == 0:
        raise ValueError("ARE needs at least one query")
    return 100.0 * float(re.mean())
