"""Stages ``levels``, ``frequency``, ``search`` and ``publish`` of full-domain generalization.

``levels``: every quasi-identifier's :class:`~sparkanon.attributes.levels.LevelHierarchy`,
built from its kind and ``attributes[].levels``; a continuous or semantic column brings
the distinct values present (a per-column statistic, at most
:data:`~sparkanon.attributes.levels.MAX_BASE_VALUES`).

``frequency``: the frequency set of the bottom node, the rows counted per combination of
base codes (and sensitive value when a model reads it), aggregated on the executors and
cached there.

``search``: the lattice searches of :mod:`sparkanon.algorithms.lattice.search` call
:func:`evaluate_nodes` on batches of nodes. One pass rolls the bottom frequency set up to
every node of the batch (Incognito's rollup: a node's frequency set is the sum of the
more specific frequency set's counts over the rows mapping to each generalized key; the
table's rows are never rescanned), groups it into classes, asks the models which classes
fail (vectorised over :class:`~sparkanon.models.ClassSummaries`) and sums per node. The
driver receives one :class:`~sparkanon.algorithms.lattice.search.NodeVerdict` per node.

``publish``: the rows keyed by the chosen node, the rows of failing classes suppressed
(an anti-join with the failing keys), every quasi-identifier replaced by its level's label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.algorithms.lattice.search import DROPPED, Node, NodeVerdict
from sparkanon.attributes.dates import (
    DEFAULT_LEVELS,
    TemporalKind,
    TimestampKind,
    calendar_levels,
)
from sparkanon.attributes.intervals import (
    binned_edges,
    interval_index,
    published_edges,
    published_number,
    quantile_starts,
    snap_significant,
    width_edges,
)
from sparkanon.attributes.kinds import (
    CategoricalKind,
    ContinuousKind,
    Kind,
    NominalKind,
    OrdinalKind,
)
from sparkanon.attributes.levels import (
    MAX_BASE_VALUES,
    LevelHierarchy,
    continuous_levels,
    nominal_levels,
    ordinal_levels,
    prefix_levels,
    taxonomy_levels,
)
from sparkanon.attributes.schema import SENS, Schema
from sparkanon.attributes.semantic import SemanticKind
from sparkanon.config import IntervalLevelsConfig, JobConfig
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.engine.expr import Arith, Col, Expr, Lit, Lookup, Text, add
from sparkanon.errors import ConfigError, InternalError
from sparkanon.families.full_domain import rollup as driver_rollup
from sparkanon.families.full_domain.rollup import Entries, bottom_entries
from sparkanon.models import ClassSummaries, ModelSet
from sparkanon.stages._common import one_row

COUNT = "_n"
"""Rows per frequency-set entry."""

MAX_KEY = 1 << 62
"""The mixed-radix class key of a node must stay below this (``long`` columns)."""

NODE = "_node"
"""Column of a frequency-set entry rolled up for a lattice node: the node's id."""
KEY = "_key"
"""Column of a row keyed for a lattice node: the row's equivalence class under that node."""


@dataclass(frozen=True, eq=False)
class NodeKey:
    """How one lattice node keys a row: ``sum(lookup(code) * stride)`` over its attributes.

    Attributes:
        node: the node's id (the :data:`NODE` value).
        parts: per attribute the node keeps, ``(code column, lookup, stride)``: the
            generalized code is ``lookup[code]`` (``None``: the code itself), its
            place in the mixed-radix key ``stride``.
    """

    node: int
    parts: tuple[tuple[str, Any, int], ...]


def key_expression(node: NodeKey) -> Expr:
    """A row's class key under ``node`` (its :data:`KEY`), computed natively."""
    terms = []
    for column, lookup, stride in node.parts:
        code: Expr = Col(column)
        if lookup is not None:
            code = Lookup(tuple(int(v) for v in np.asarray(lookup, dtype=np.int64)), code)
        terms.append(Arith("*", code, Lit(int(stride))))
    return add(*terms)


def base_column(i: int) -> str:
    """Column of quasi-identifier ``i``'s base code."""
    return f"_b{i}"


@dataclass(frozen=True, eq=False)
class BaseRule:
    """How an encoded code becomes a base code.

    Attributes:
        kind: ``identity`` (discrete codes), ``lookup`` (the position of the code among
            ``values``, the sorted distinct codes) or ``interval`` (the interval of the
            decoded value among ``values``, the finest level's edges, on the
            ``output.decimals`` grid when set: the edges its labels print).
        values: see ``kind``.
        low: the continuous kind's low (to decode a normalised code).
        width: its width.
    """

    kind: str
    values: np.ndarray | None = None
    low: float = 0.0
    width: float = 1.0

    def apply(self, codes: np.ndarray) -> np.ndarray:
        """Base codes of encoded codes."""
        if self.kind == "identity":
            return np.asarray(codes, dtype=np.int64)
        assert self.values is not None
        if self.kind == "lookup":
            pos = np.searchsorted(self.values, codes)
            pos = np.clip(pos, 0, len(self.values) - 1)
            if not np.array_equal(self.values[pos], codes):
                raise InternalError("a code is missing from the column's collected domain")
            return pos.astype(np.int64)
        raw = snap_significant(self.low + np.asarray(codes, dtype=float) * self.width)
        idx = interval_index(raw, self.values)
        if (idx < 0).any():
            raise InternalError("a value lies outside the finest interval level")
        return idx.astype(np.int64)


def _value_counts(
    engine: Engine, table: Table, column: str, name: str, need: bool
) -> pd.DataFrame | None:
    """The distinct codes of a column with their rows, sorted; ``None`` if too many and optional."""
    distinct = int(one_row(engine, table, {"d": ("nunique", column)})["d"])
    if distinct > MAX_BASE_VALUES:
        if not need:
            return None
        raise ConfigError(
            f"attribute {name!r}: {distinct} distinct values, above {MAX_BASE_VALUES} for the "
            "base of the lattice; set levels.exact: false (the finest interval becomes level 0)"
            " with widths, breakpoints or equal_width bins"
        )
    counts = engine.collect_small(
        engine.aggregate(table, [column], {"n": ("count", column)}), MAX_BASE_VALUES
    )
    return counts.sort_values(column, kind="stable").reset_index(drop=True)


def _edges_of(
    name: str,
    key: str,
    cfg: IntervalLevelsConfig,
    low: float,
    high: float,
    hist: pd.DataFrame | None,
    column: str,
) -> list[np.ndarray]:
    """Interval edges of each level of a continuous column, finest first."""
    if cfg.widths is not None:
        return width_edges(cfg.widths, cfg.origin, low, high)
    if cfg.breakpoints is not None:
        # Numbers, increasing and nested: checked at load (sparkanon.families.full_domain.rules).
        out = [np.array([float(v) for v in level], dtype=float) for level in cfg.breakpoints]
        for v, which in ((low, "minimum"), (high, "maximum")):
            if v < out[0][0] or v > out[0][-1]:
                raise ConfigError(
                    f"{key}.levels.breakpoints: the data's {which} of {name!r}, "
                    f"{published_number(v)}, lies outside [{published_number(float(out[0][0]))}, "
                    f"{published_number(float(out[0][-1]))}]; widen the first and last edges"
                )
        return out
    assert cfg.bins is not None
    if cfg.bins.method == "quantile" and hist is None:
        raise ConfigError(
            f"{key}.levels.bins: quantile bins need the column's distinct values, and "
            f"{name!r} has more than {MAX_BASE_VALUES}; use method: equal_width"
        )
    if hist is not None:
        values, counts = hist["raw"].to_numpy(dtype=float), hist["n"].to_numpy(dtype=np.int64)
    else:
        values, counts = np.array([low, high]), None
    if values[-1] == values[0]:
        values = np.array([values[0], values[0] + 1.0])
        counts = None
    return binned_edges(values, counts, cfg.bins.method, cfg.bins.count, cfg.bins.merge)


def _ordinal_starts(
    kind: OrdinalKind, cfg: IntervalLevelsConfig, hist: pd.DataFrame | None
) -> list[list[int]]:
    """The ranks that begin an interval, per level, finest first."""
    n = kind.size
    # Whole widths, breakpoints among the order's values, nested: checked at load
    # (sparkanon.families.full_domain.rules).
    if cfg.widths is not None:
        out = [list(range(0, n, int(w))) for w in cfg.widths]
        return [s for s in out if len(s) > 1] or [[0]]
    if cfg.breakpoints is not None:
        rank = {v: i for i, v in enumerate(kind.labels)}
        return [sorted({0, *(rank[str(v)] for v in level)}) for level in cfg.breakpoints]
    assert cfg.bins is not None
    counts = np.ones(n)
    if cfg.bins.method == "quantile" and hist is not None:
        counts = np.zeros(n)
        counts[hist.iloc[:, 0].to_numpy(dtype=np.int64)] = hist["n"].to_numpy(dtype=float)
    edges = binned_edges(np.arange(n + 1, dtype=float), None, "equal_width", cfg.bins.count, 2)
    if cfg.bins.method == "quantile":
        first = sorted({0, *quantile_starts(np.maximum(counts, 0), cfg.bins.count)})
    else:
        first = sorted({int(np.floor(e)) for e in edges[0][:-1]})
    out = [first]
    while len(out[-1]) > 2:
        out.append(out[-1][:: cfg.bins.merge])
    return out


def build_levels(
    engine: Engine, config: JobConfig, schema: Schema, encoded: Table
) -> tuple[list[LevelHierarchy], list[BaseRule]]:
    """Every quasi-identifier's levels and the rule mapping its encoded codes to base codes.

    The levels were checked at load as far as no data is needed
    (:func:`sparkanon.families.full_domain.rules.level_problems`); what is left needs the data.

    Raises:
        ConfigError: breakpoints that do not cover the data's range, a domain too large
            for the base (or for quantile bins).
    """
    attrs = {a.name: (i, a) for i, a in enumerate(config.attributes)}
    hierarchies: list[LevelHierarchy] = []
    rules: list[BaseRule] = []
    for col, kind in zip(schema.code_columns, schema.kinds, strict=True):
        index, attr = attrs[kind.name]
        key = f"attributes.{index}"
        cfg: IntervalLevelsConfig | None = getattr(attr, "levels", None)
        hierarchy, rule = _levels_of(engine, encoded, col, kind, key, cfg)
        hierarchies.append(hierarchy)
        rules.append(rule)
    return hierarchies, rules


def _levels_of(
    engine: Engine, encoded: Table, col: str, kind: Kind, key: str, cfg: IntervalLevelsConfig | None
) -> tuple[LevelHierarchy, BaseRule]:
    """One attribute's levels and base rule (see :func:`build_levels`)."""
    identity = BaseRule("identity")
    if isinstance(kind, CategoricalKind):
        assert kind.taxonomy is not None
        return taxonomy_levels(kind.name, kind.taxonomy), identity
    if isinstance(kind, OrdinalKind):
        if cfg is None:
            return nominal_levels(kind.name, kind.labels), identity
        hist = None
        if cfg.bins is not None and cfg.bins.method == "quantile":
            hist = _value_counts(engine, encoded, col, kind.name, need=True)
        starts = _ordinal_starts(kind, cfg, hist)
        return ordinal_levels(kind.name, kind.labels, starts), identity
    if isinstance(kind, NominalKind):
        return nominal_levels(kind.name, kind.labels), identity
    if isinstance(kind, SemanticKind):
        hist = _value_counts(engine, encoded, col, kind.name, need=True)
        assert hist is not None
        codes = hist[col].to_numpy(dtype=np.int64)
        return prefix_levels(kind.name, codes, kind.length), BaseRule("lookup", codes)
    if isinstance(kind, TemporalKind):  # calendar units (attributes[].levels), checked at load
        return temporal_levels(kind, key, tuple(cfg or DEFAULT_LEVELS))
    if isinstance(kind, ContinuousKind):
        if cfg is None:  # refused at load (sparkanon.families.full_domain.rules.level_problems)
            raise InternalError(f"{key}.levels: a continuous column without levels")
        width = kind.high - kind.low if kind.high > kind.low else 1.0
        need_hist = cfg.exact or (cfg.bins is not None and cfg.bins.method == "quantile")
        hist = _value_counts(engine, encoded, col, kind.name, need=need_hist)
        if hist is not None:
            hist = hist.assign(
                raw=snap_significant(kind.low + hist[col].to_numpy(dtype=float) * width)
            )
        low, high = float(f"{kind.low:.12g}"), float(f"{kind.high:.12g}")
        # With output.decimals the rows are placed between the published (rounded)
        # edges, so that each value lies in the one label that reads as holding it.
        edges = [
            published_edges(e, kind.decimals)
            for e in _edges_of(kind.name, key, cfg, low, high, hist, col)
        ]
        if cfg.exact:
            assert hist is not None
            values = hist["raw"].to_numpy(dtype=float)
            rule = BaseRule("lookup", hist[col].to_numpy(dtype=float))
            levels = continuous_levels(kind.name, values, edges, True, low, high, kind.decimals)
            return levels, rule
        finest = edges[0]
        rule = BaseRule("interval", finest, kind.low, width)
        levels = continuous_levels(kind.name, finest[:-1], edges, False, low, high, kind.decimals)
        return levels, rule
    raise ConfigError(f"{key}: kind {type(kind).__name__} has no generalization levels")


def temporal_levels(
    kind: TemporalKind, key: str, units: Sequence[str]
) -> tuple[LevelHierarchy, BaseRule]:
    """A date's or timestamp's calendar levels over the data's range, and its base rule.

    The base codes are the finest unit's intervals over the range (at most
    :data:`~sparkanon.attributes.levels.MAX_BASE_VALUES`), a row's found from its decoded
    epoch value (:func:`sparkanon.attributes.dates.calendar_levels`).

    Raises:
        ConfigError: too many intervals of the finest unit, naming ``<key>.levels``.
    """
    try:
        cal = calendar_levels(
            units,
            kind.low,
            kind.high,
            isinstance(kind, TimestampKind),
            MAX_BASE_VALUES,
            f"{key}.levels",
        )
    except ValueError as exc:
        raise ConfigError(f"attribute {kind.name!r}: {exc}") from None
    width = kind.high - kind.low if kind.high > kind.low else 1.0
    hierarchy = LevelHierarchy(kind.name, cal.maps, cal.labels, cal.ncp)
    return hierarchy, BaseRule("interval", cal.edges, kind.low, width)


def make_base_fn(schema: Schema, rules: Sequence[BaseRule], keep: Sequence[str]) -> BatchFn:
    """Encoded rows -> base codes (one column per quasi-identifier) and the ``keep`` columns."""
    columns = schema.code_columns

    def to_base(batch: pd.DataFrame) -> pd.DataFrame:
        out = {
            base_column(i): rule.apply(batch[c].to_numpy())
            for i, (c, rule) in enumerate(zip(columns, rules, strict=True))
        }
        frame = pd.DataFrame(out)
        for c in keep:
            frame[c] = batch[c].to_numpy()
        return frame

    return to_base


@dataclass(frozen=True, eq=False)
class FrequencySet:
    """The bottom node's frequency set, cached on the executors.

    Attributes:
        table: one row per combination of base codes (and sensitive code): the base
            columns, :data:`SENS` when ``sensitive``, :data:`COUNT`.
        sensitive: whether the sensitive code is part of the key.
        rows: rows counted.
        entries: rows of ``table``.
        local: the same entries as arrays on the driver when there are at most
            ``driver_entries`` of them (:func:`frequency_set`), else ``None``.
    """

    table: Table
    sensitive: bool
    rows: int
    entries: int
    local: Entries | None = None


def frequency_set(
    engine: Engine,
    based: Table,
    n_qi: int,
    sensitive: bool,
    driver_entries: int | None = None,
) -> FrequencySet:
    """Count the rows per combination of base codes (and sensitive code); cached.

    Args:
        engine: the engine.
        based: rows with the base code columns (and :data:`SENS`).
        n_qi: the number of quasi-identifiers.
        sensitive: whether the sensitive code is part of the key.
        driver_entries: a frequency set of at most this many entries (one per class of
            the bottom node, and sensitive code) is also collected to the driver, where
            the search evaluates nodes without distributed passes
            (:mod:`sparkanon.families.full_domain.rollup`); default
            :data:`sparkanon.families.full_domain.rollup.DRIVER_ENTRIES`.
    """
    keys = [base_column(i) for i in range(n_qi)] + ([SENS] if sensitive else [])
    table = engine.persist(engine.aggregate(based, keys, {COUNT: ("count", keys[0])}))
    stats = one_row(engine, table, {"rows": ("sum", COUNT), "entries": ("count", COUNT)})
    rows, entries = int(stats["rows"]), int(stats["entries"])
    local = None
    if entries <= (driver_rollup.DRIVER_ENTRIES if driver_entries is None else driver_entries):
        got = engine.collect_small(table, entries)
        local = bottom_entries(
            [got[base_column(i)].to_numpy(dtype=np.int64) for i in range(n_qi)],
            got[SENS].to_numpy(dtype=np.int64) if sensitive else None,
            got[COUNT].to_numpy(dtype=np.int64),
        )
    return FrequencySet(table, sensitive, rows, entries, local)


def node_key(hierarchies: Sequence[LevelHierarchy], node: Node, node_id: int) -> NodeKey:
    """How ``node`` keys a row of base codes: mixed radix over the node's level codes.

    Raises:
        ConfigError: the key would not fit in a ``long``.
    """
    parts = []
    stride = 1
    for i, (h, level) in enumerate(zip(hierarchies, node, strict=True)):
        if level == DROPPED:
            continue
        lookup = None if level == 0 else h.maps[level]
        parts.append((base_column(i), lookup, stride))
        stride *= max(h.size(level), 1)
        if stride >= MAX_KEY:
            raise ConfigError(
                "the quasi-identifiers' base domains are too large together for one class key "
                f"(product above 2^62 at {h.name!r}); coarsen a continuous or semantic column "
                "(levels.exact: false) or use fewer quasi-identifiers"
            )
    return NodeKey(node_id, tuple(parts))


@dataclass(frozen=True, eq=False)
class NodeLoss:
    """What the check of one node's classes needs to weigh NCP: per kept attribute, in key order.

    Attributes:
        sizes: the number of codes at the node's level (the radices).
        ncp: each code's NCP times the attribute's weight.
    """

    sizes: tuple[int, ...]
    ncp: tuple[np.ndarray, ...]

    @classmethod
    def of(
        cls, hierarchies: Sequence[LevelHierarchy], node: Node, weights: Sequence[float]
    ) -> NodeLoss:
        """The node's radices and weighted NCP tables."""
        sizes, ncp = [], []
        for h, level, w in zip(hierarchies, node, weights, strict=True):
            if level == DROPPED:
                continue
            sizes.append(max(h.size(level), 1))
            ncp.append(h.ncp[level] * w)
        return cls(tuple(sizes), tuple(ncp))

    def class_ncp(self, keys: np.ndarray) -> np.ndarray:
        """Weighted NCP of one row of each class (every row of a class shares it)."""
        total = np.zeros(len(keys))
        for codes, table in zip(driver_rollup.unpack(keys, self.sizes), self.ncp, strict=True):
            total += table[codes]
        return total


VERDICT_COLUMNS = [
    (NODE, "long"),
    ("rows", "long"),
    ("classes", "long"),
    ("bad_rows", "long"),
    ("bad_classes", "long"),
    ("dm_kept", "double"),
    ("ncp_kept", "double"),
]

BUCKET = "_bucket"
"""Column spreading the classes of a pass over groups: every row of a class in one group."""


def make_rollup_fn(keys: Sequence[NodeKey], sensitive: bool, buckets: int) -> BatchFn:
    """A batch of the frequency set rolled up to every node: ``BUCKET, NODE, KEY, (SENS), COUNT``.

    Each node's generalized key is computed with array lookups and the batch's entries
    are summed per key (and sensitive code) before they leave the batch, so a coarse
    node sends a few rows where the batch had thousands. ``BUCKET`` depends on the node
    and the key only, so the partial sums of one class from every batch meet in one group.
    """

    def rollup(batch: pd.DataFrame) -> pd.DataFrame:
        counts = batch[COUNT].to_numpy(dtype=np.int64)
        sens = batch[SENS].to_numpy(dtype=np.int64) if sensitive else None
        codes = {c: batch[c].to_numpy(dtype=np.int64) for nk in keys for c, _, _ in nk.parts}
        parts = []
        for nk in keys:
            key = np.zeros(len(batch), dtype=np.int64)
            for column, lookup, stride in nk.parts:
                code = codes[column]
                key += (code if lookup is None else lookup[code]) * stride
            frame = _summed(key, sens, counts)
            frame[NODE] = nk.node
            parts.append(frame)
        if not parts:
            return pd.DataFrame({BUCKET: [], NODE: [], KEY: [], COUNT: []})
        out = pd.concat(parts, ignore_index=True)
        out[BUCKET] = (out[KEY].to_numpy() % buckets + out[NODE].to_numpy() * 7919) % buckets
        return out

    return rollup


def _summed(key: np.ndarray, sens: np.ndarray | None, counts: np.ndarray) -> pd.DataFrame:
    """``counts`` summed per key (and sensitive code): ``KEY, (SENS), COUNT``, sorted."""
    order = np.lexsort((sens, key)) if sens is not None else np.argsort(key, kind="stable")
    k_sorted = key[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = k_sorted[1:] != k_sorted[:-1]
    if sens is not None:
        s_sorted = sens[order]
        new[1:] |= s_sorted[1:] != s_sorted[:-1]
    starts = np.flatnonzero(new)
    frame = {KEY: k_sorted[starts]}
    if sens is not None:
        frame[SENS] = s_sorted[starts]
    frame[COUNT] = np.add.reduceat(counts[order], starts) if len(starts) else counts[:0]
    return pd.DataFrame(frame)


def node_classes(
    group: pd.DataFrame, sensitive: bool, n_values: int, level_of: np.ndarray | None
) -> tuple[np.ndarray, ClassSummaries]:
    """The classes of one node in a group of partial sums: their keys and summaries.

    Args:
        group: rows ``KEY, (SENS), COUNT`` of one node, partial sums from any batches.
        sensitive: whether the rows carry the sensitive code.
        n_values: the sensitive domain's size.
        level_of: the sensitivity level of each value code, or ``None``.

    Returns:
        ``(keys, summaries)``, one entry per class.
    """
    key = group[KEY].to_numpy(dtype=np.int64)
    sens = group[SENS].to_numpy(dtype=np.int64) if sensitive else None
    summed = _summed(key, sens, group[COUNT].to_numpy(dtype=np.int64))
    keys, cls = np.unique(summed[KEY].to_numpy(), return_inverse=True)
    n = summed[COUNT].to_numpy(dtype=np.int64)
    size = np.bincount(cls.ravel(), weights=n, minlength=len(keys)).astype(np.int64)
    if not sensitive:
        return keys, ClassSummaries(size, np.zeros((len(keys), 0), dtype=np.int64))
    counts = np.zeros((len(keys), n_values), dtype=np.int64)
    counts[cls.ravel(), summed[SENS].to_numpy(dtype=np.int64)] = n
    return keys, ClassSummaries(size, counts, level_of)


def make_node_check_fn(
    models: ModelSet, schema: Schema, sensitive: bool, losses: Mapping[int, NodeLoss]
) -> BatchFn:
    """Per group of partial sums (of any nodes): per node, the counts of a :class:`NodeVerdict`."""
    n_values = len(schema.sensitive.values)
    level_of = schema.sensitive.declared_level_of

    def check(group: pd.DataFrame) -> pd.DataFrame:
        rows = []
        for node, part in group.groupby(NODE, sort=True):
            keys, s = node_classes(part, sensitive, n_values, level_of)
            ok = models.satisfied(s)
            sizes = s.size.astype(float)
            ncp = losses[int(node)].class_ncp(keys)
            rows.append(
                {
                    NODE: int(node),
                    "rows": int(s.size.sum()),
                    "classes": len(keys),
                    "bad_rows": int(s.size[~ok].sum()),
                    "bad_classes": int((~ok).sum()),
                    "dm_kept": float((sizes[ok] ** 2).sum()),
                    "ncp_kept": float((sizes[ok] * ncp[ok]).sum()),
                }
            )
        return pd.DataFrame(rows, columns=[c for c, _ in VERDICT_COLUMNS])

    return check


def _rolled_up(engine: Engine, fset: FrequencySet, keys: Sequence[NodeKey]) -> tuple[Table, int]:
    """The frequency set rolled up to the nodes, partial sums with their group column."""
    buckets = max(4 * engine.parallelism, 1)
    columns = [(BUCKET, "long"), (NODE, "long"), (KEY, "long")]
    columns += [(SENS, "long")] if fset.sensitive else []
    rolled = engine.map_batches(
        fset.table, make_rollup_fn(keys, fset.sensitive, buckets), columns + [(COUNT, "long")]
    )
    return rolled, buckets


def evaluate_nodes(
    engine: Engine,
    fset: FrequencySet,
    hierarchies: Sequence[LevelHierarchy],
    nodes: Sequence[Node],
    models: ModelSet,
    schema: Schema,
    weights: Sequence[float],
) -> dict[Node, NodeVerdict]:
    """One distributed pass: every node's classes rolled up from the frequency set and checked.

    Returns:
        The verdict of every node (a node without rows gets an empty verdict).
    """
    keys = [node_key(hierarchies, n, i) for i, n in enumerate(nodes)]
    losses = {i: NodeLoss.of(hierarchies, n, weights) for i, n in enumerate(nodes)}
    rolled, buckets = _rolled_up(engine, fset, keys)
    checked = engine.map_groups(
        rolled,
        BUCKET,
        make_node_check_fn(models, schema, fset.sensitive, losses),
        VERDICT_COLUMNS,
        partitions=buckets,
    )
    sums = {c: ("sum", c) for c, _ in VERDICT_COLUMNS[1:]}
    per_node = engine.collect_small(engine.aggregate(checked, [NODE], sums), len(nodes))
    out = {n: NodeVerdict(fset.rows, 0, 0, 0) for n in nodes}
    for r in per_node.to_dict("records"):
        node = nodes[int(r[NODE])]
        out[node] = NodeVerdict(
            rows=int(r["rows"]),
            classes=int(r["classes"]),
            bad_rows=int(r["bad_rows"]),
            bad_classes=int(r["bad_classes"]),
            dm_kept=float(r["dm_kept"]),
            ncp_kept=float(r["ncp_kept"]),
        )
    return out


def make_failing_fn(models: ModelSet, schema: Schema, sensitive: bool) -> BatchFn:
    """Per group of one node's partial sums: the keys of the classes that fail a model."""
    n_values = len(schema.sensitive.values)
    level_of = schema.sensitive.declared_level_of

    def failing(group: pd.DataFrame) -> pd.DataFrame:
        keys, s = node_classes(group, sensitive, n_values, level_of)
        return pd.DataFrame({KEY: keys[~models.satisfied(s)]})

    return failing


def label_expressions(hierarchies: Sequence[LevelHierarchy], node: Node) -> dict[str, Expr]:
    """Each quasi-identifier's published label under ``node``, from its base code, natively.

    The label of base code ``b`` at level ``l`` is ``labels[l][maps[l][b]]`` (level 0:
    ``labels[0][b]``): one text lookup of a number lookup per attribute, so the rows
    never go through Python to be published.
    """
    out: dict[str, Expr] = {}
    for i, (h, level) in enumerate(zip(hierarchies, node, strict=True)):
        code: Expr = Col(base_column(i))
        if level != 0:
            code = Lookup(tuple(int(v) for v in np.asarray(h.maps[level], dtype=np.int64)), code)
        out[h.name] = Text(tuple(str(v) for v in h.labels[level]), code)
    return out


def publish_node(
    engine: Engine,
    based: Table,
    fset: FrequencySet,
    hierarchies: Sequence[LevelHierarchy],
    node: Node,
    models: ModelSet,
    schema: Schema,
    passthrough: Sequence[tuple[str, str]],
    failing_keys: np.ndarray | None = None,
) -> Table:
    """The published rows of ``node``: the rows of its failing classes suppressed, labels out.

    Every row step is native (the class key, the labels: :func:`label_expressions`); the
    failing classes' keys come from the driver when it holds the frequency set
    (``failing_keys``, a small table the engine broadcasts to the anti-join; none: no
    join at all), else from one distributed pass over the frequency set.

    Args:
        engine: the engine.
        based: the rows with base codes, :data:`SENS` and the pass-through columns.
        fset: the frequency set.
        hierarchies: the levels.
        node: the published node.
        models: the bound models.
        schema: the encoded schema.
        passthrough: ``(name, type)`` of the columns copied unchanged (the sensitive
            column first).
        failing_keys: the node's failing classes' keys (:func:`node_key`'s), computed
            on the driver; ``None``: computed here from ``fset``.

    Returns:
        The published table: quasi-identifiers as strings, then the pass-through columns.
    """
    nk = node_key(hierarchies, node, 0)
    names = [c for c, _ in passthrough]
    kept = engine.with_columns(based, {KEY: key_expression(nk)})
    if failing_keys is None:
        rolled, buckets = _rolled_up(engine, fset, [nk])
        failing = engine.map_groups(
            rolled,
            BUCKET,
            make_failing_fn(models, schema, fset.sensitive),
            [(KEY, "long")],
            partitions=buckets,
        )
        kept = engine.join(kept, failing, [KEY], how="left_anti")
    elif len(failing_keys):
        failing = engine.from_pandas(
            pd.DataFrame({KEY: np.asarray(failing_keys, dtype=np.int64)}), [(KEY, "long")]
        )
        kept = engine.join(kept, failing, [KEY], how="left_anti")
    labelled = engine.with_columns(kept, label_expressions(hierarchies, node))
    return engine.select(labelled, [h.name for h in hierarchies] + names)
