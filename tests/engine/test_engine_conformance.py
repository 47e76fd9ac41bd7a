"""Engine conformance: every primitive of the Engine interface, on every engine, one expectation.

In the manner of PipelineDP's backend tests: each case below runs on the local engine
(one batch, and batches of 2 rows so per-batch functions see several), and on the Spark
engine over the session's ``spark`` fixture, and checks the same expected rows. The
cases cover an empty table, nulls, one row and a skewed key (one key holding most rows).
Expectations of :meth:`Engine.aggregate` come from a plain-Python statement of its
documented meaning (:func:`_reference_aggregate`), not from either engine.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.algorithms.cuts import BinRule, BlockTree
from sparkanon.engine.base import Engine
from sparkanon.engine.expr import Arith, Clip, Col, Floor, Lit, Lookup, Text, When
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import InternalError
from sparkanon.families.full_domain.lattice import KEY, NodeKey, key_expression
from sparkanon.io import MALFORMED
from sparkanon.per_block.plan import bin_expression, leaf_expression
from sparkanon.randomness import RunKey
from sparkanon.randomness.streams import RELEASE_ORDER

ENGINES = [
    pytest.param("local", id="local"),
    pytest.param("local-batches", id="local-batches"),
    pytest.param("spark", id="spark", marks=pytest.mark.spark),
]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Engine:
    """The engine under test (a Spark engine over the session-scoped session)."""
    if request.param == "spark":
        from sparkanon.engine.spark import SparkEngine

        return SparkEngine(request.getfixturevalue("spark"))
    return LocalEngine(batch_rows=2 if request.param == "local-batches" else 10_000)


SCHEMA = [("k", "long"), ("g", "string"), ("x", "double"), ("v", "long")]
NAMES = [n for n, _ in SCHEMA]
DATA: dict[str, list[tuple[Any, ...]]] = {
    "empty": [],
    "one": [(1, "a", 2.5, 3)],
    "nulls": [(1, "a", None, 1), (1, None, 4.0, 2), (2, "b", None, 3), (2, None, None, 4)],
    "skewed": [(1, "a", float(i), i) for i in range(9)] + [(2, "b", 10.0, 10), (3, None, 20.5, 20)],
}
DATA["mixed"] = (
    DATA["nulls"] + [(k + 10, g, x, v) for k, g, x, v in DATA["skewed"]] + [(20, "c", 7.5, 5)]
)
"""The tables the cases run on. ``skewed``: key 1 holds 9 of 11 rows; ``mixed``: the
nulls, the skewed keys (as 11, 12, 13) and a key of one row, in one table, so one Spark
run covers them (the empty table is a case of its own)."""

SINGLE = ["empty", "one", "nulls", "skewed"]
"""The tables one by one (the whole-table aggregate)."""
CASES = ["empty", "mixed"]
"""The tables of the other cases."""


def _table(engine: Engine, name: str) -> Any:
    return engine.from_pandas(pd.DataFrame(DATA[name], columns=NAMES), SCHEMA)


def _value(v: Any) -> Any:
    """One cell, engine-neutral: a missing value ``None``, numbers plain, lists sorted."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return sorted((_value(x) for x in v), key=repr)
    if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and math.isnan(v)):
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return int(v) if float(v).is_integer() else float(v)
    return v


def _rows(engine: Engine, table: Any, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """The table's rows as sorted tuples of ``columns`` (one collect)."""
    frame = engine.collect_small(table, 1000)
    assert set(columns) <= set(frame.columns), (columns, list(frame.columns))
    rows = [tuple(_value(r[c]) for c in columns) for r in frame.to_dict("records")]
    return sorted(rows, key=repr)


def _expected(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(_value(v) for v in r) for r in rows), key=repr)


# --------------------------------------------------------------------------- aggregate


def _reduce(func: str, members: list[tuple[Any, ...]], col: str) -> Any:
    values = [m[NAMES.index(col)] for m in members]
    present = [v for v in values if v is not None]
    if func == "count":
        return len(members)
    if func == "sum":
        return sum(present) if present else 0
    if func == "nunique":
        return len(set(present))
    if func == "collect":
        return present
    if not present:
        return None
    return {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}[func](
        present
    )


def _reference_aggregate(
    rows: list[tuple[Any, ...]], keys: Sequence[str], aggs: dict[str, tuple[str, str]]
) -> list[tuple[Any, ...]]:
    """:meth:`Engine.aggregate` as documented, in plain Python."""
    groups: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {} if keys else {(): []}
    for r in rows:
        groups.setdefault(tuple(r[NAMES.index(k)] for k in keys), []).append(r)
    return [
        (*key, *[_reduce(f, members, c) for f, c in aggs.values()])
        for key, members in groups.items()
    ]


ALL_AGGS = {
    "n": ("count", "x"),
    "sx": ("sum", "x"),
    "sv": ("sum", "v"),
    "lo": ("min", "x"),
    "hi": ("max", "x"),
    "avg": ("mean", "x"),
    "med": ("median", "x"),
    "nu": ("nunique", "x"),
    "xs": ("collect", "x"),
}


@pytest.mark.parametrize(
    ("data", "keys"),
    [(d, []) for d in SINGLE] + [(d, keys) for d in CASES for keys in (["k"], ["g"])],
    ids=[f"{d}-whole" for d in SINGLE] + [f"{d}-by-{k}" for d in CASES for k in "kg"],
)
def test_aggregate(engine: Engine, data: str, keys: list[str]) -> None:
    out = engine.aggregate(_table(engine, data), keys, ALL_AGGS)
    got = _rows(engine, out, [*keys, *ALL_AGGS])
    assert got == _expected(_reference_aggregate(DATA[data], keys, ALL_AGGS))


def test_aggregate_of_no_rows_spelled_out(engine: Engine) -> None:
    """The empty aggregate: counts and sums 0 (``long`` for a ``long``), the rest missing."""
    out = engine.aggregate(_table(engine, "empty"), [], ALL_AGGS)
    row = engine.collect_small(out, 1).iloc[0]
    assert row["n"] == 0 and row["sx"] == 0.0 and row["sv"] == 0 and row["nu"] == 0
    assert isinstance(_value(row["sv"]), int)
    assert all(pd.isna(row[c]) for c in ("lo", "hi", "avg", "med"))
    assert list(row["xs"]) == []


def test_aggregate_of_only_nulls_in_a_group(engine: Engine) -> None:
    """Group ``k = 2`` of ``nulls`` has only null ``x``: sum 0, min missing (as NaN)."""
    out = engine.aggregate(_table(engine, "nulls"), ["k"], {"s": ("sum", "x"), "m": ("min", "x")})
    frame = engine.collect_small(out, 10).sort_values("k").reset_index(drop=True)
    assert frame["s"].tolist() == [4.0, 0.0]
    assert frame["m"].dtype == np.float64 and math.isnan(frame["m"].iloc[1])


# --------------------------------------------------------------------- row-wise primitives


@pytest.mark.parametrize("data", CASES)
def test_map_batches(engine: Engine, data: str) -> None:
    """A row-wise function gives the same table however the rows are batched."""

    def double(batch: pd.DataFrame) -> pd.DataFrame:
        kept = batch[batch["v"] % 2 == 1]
        return pd.DataFrame({"k": kept["k"], "y": kept["x"] * 2, "n": len(batch) > 0})

    out = engine.map_batches(
        _table(engine, data), double, [("k", "long"), ("y", "double"), ("n", "boolean")]
    )
    expected = [(k, None if x is None else 2 * x, True) for k, _, x, v in DATA[data] if v % 2]
    assert _rows(engine, out, ["k", "y", "n"]) == _expected(expected)


def test_map_batches_sees_several_batches(engine: Engine) -> None:
    """Per-batch partial counts add up to the rows; batches of 2 rows give 8."""

    def size(batch: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"rows": [len(batch)]})

    out = engine.map_batches(_table(engine, "mixed"), size, [("rows", "long")])
    sizes = [r[0] for r in _rows(engine, out, ["rows"])]
    assert sum(sizes) == len(DATA["mixed"])
    if isinstance(engine, LocalEngine) and engine.batch_rows == 2:
        assert len(sizes) == 8


@pytest.mark.parametrize("key", ["k", "g"])
@pytest.mark.parametrize("data", CASES)
def test_map_groups(engine: Engine, data: str, key: str) -> None:
    """One call per key value, a null key a group of its own; all of a group's rows at once."""

    def summary(group: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({key: group[key].iloc[:1], "rows": [len(group)], "v": group["v"].sum()})

    schema = [(key, dict(SCHEMA)[key]), ("rows", "long"), ("v", "long")]
    out = engine.map_groups(_table(engine, data), key, summary, schema, partitions=3)
    groups: dict[Any, list[int]] = {}
    for r in DATA[data]:
        groups.setdefault(r[NAMES.index(key)], []).append(r[3])
    expected = [(g, len(vs), sum(vs)) for g, vs in groups.items()]
    assert _rows(engine, out, [key, "rows", "v"]) == _expected(expected)


@pytest.mark.parametrize("data", CASES)
def test_cogroup(engine: Engine, data: str) -> None:
    """``fn(left rows, right rows)`` for each key on the right, left rows possibly none.

    The mixed table's keys are spread over 3 partitions, the empty one's over the default.
    """
    right = engine.from_pandas(
        pd.DataFrame({"key": [1, 1, 11, 9], "w": [1, 2, 3, 4]}), [("key", "long"), ("w", "long")]
    )

    def pair(lrows: pd.DataFrame, rrows: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {"key": rrows["key"].iloc[:1], "left": [len(lrows)], "w": [int(rrows["w"].sum())]}
        )

    schema = [("key", "long"), ("left", "long"), ("w", "long")]
    parts = 3 if data == "mixed" else None
    out = engine.cogroup(_table(engine, data), "k", right, "key", pair, schema, partitions=parts)
    left_rows = [r[0] for r in DATA[data]]
    expected = [(key, left_rows.count(key), w) for key, w in [(1, 3), (11, 3), (9, 4)]]
    assert _rows(engine, out, ["key", "left", "w"]) == _expected(expected)


JOIN_RIGHT = pd.DataFrame({"g": ["a", "b", "z", None], "w": [10, 20, 30, 40]})


def _reference_join(rows: list[tuple[Any, ...]], how: str) -> list[tuple[Any, ...]]:
    """SQL's join on ``g``: a null key matches nothing."""
    right = list(JOIN_RIGHT.itertuples(index=False, name=None))
    right = [(g if isinstance(g, str) else None, w) for g, w in right]
    out, matched = [], set()
    for r in rows:
        hits = [w for g, w in right if r[1] is not None and g == r[1]]
        matched.update(g for g, _ in right if r[1] is not None and g == r[1])
        if how == "left_anti":
            out += [] if hits else [(r[1], r[0], r[3], None)]
        else:
            out += [(r[1], r[0], r[3], w) for w in hits]
            if not hits and how in ("left", "outer"):
                out.append((r[1], r[0], r[3], None))
    if how == "outer":
        out += [(g, None, None, w) for g, w in right if g not in matched or g is None]
    return out


@pytest.mark.parametrize("data", CASES)
def test_join(engine: Engine, data: str) -> None:
    """Every ``how`` (inner, left and outer in one run, tagged; then left_anti)."""
    left = engine.select(_table(engine, data), ["g", "k", "v"])
    right = engine.from_pandas(JOIN_RIGHT, [("g", "string"), ("w", "long")])
    columns = ["g", "k", "v", "w"]
    joined = {how: engine.join(left, right, ["g"], how=how) for how in ("inner", "left", "outer")}
    for how, table in joined.items():
        assert [c for c, _ in engine.schema_of(table)] == columns, how  # on, left, right
    tagged = [engine.with_columns(t, {"how": Lit(i)}) for i, t in enumerate(joined.values())]
    got = _rows(engine, engine.union(engine.union(*tagged[:2]), tagged[2]), ["how", *columns])
    want = [(i, *r) for i, how in enumerate(joined) for r in _reference_join(DATA[data], how)]
    assert got == _expected(want)
    anti = engine.join(left, right, ["g"], how="left_anti")
    assert [c for c, _ in engine.schema_of(anti)] == ["g", "k", "v"]
    got = _rows(engine, anti, ["g", "k", "v"])
    assert got == _expected([r[:3] for r in _reference_join(DATA[data], "left_anti")])


WHERE = [
    ("k", "==", 1, lambda r: r[0] == 1),
    ("k", "!=", 1, lambda r: r[0] != 1),
    ("k", "<", 2, lambda r: r[0] < 2),
    ("k", ">=", 12, lambda r: r[0] >= 12),
    ("x", "<=", 4.0, lambda r: r[2] is not None and r[2] <= 4.0),
    ("g", "!=", "a", lambda r: r[1] is not None and r[1] != "a"),  # a null satisfies none
]


@pytest.mark.parametrize("data", CASES)
def test_union_where_select_count(engine: Engine, data: str) -> None:
    """Each comparison of :meth:`Engine.where`, tagged and unioned into one run."""
    table = _table(engine, data)
    both = engine.union(table, engine.select(table, list(reversed(NAMES))))
    assert engine.count(both) == 2 * len(DATA[data])
    parts = [
        engine.with_columns(engine.where(table, c, op, value), {"op": Lit(i)})
        for i, (c, op, value, _) in enumerate(WHERE)
    ]
    union = parts[0]
    for part in parts[1:]:
        union = engine.union(union, part)
    got = _rows(engine, union, ["op", "k", "v"])
    rows = DATA[data]
    want = [(i, r[0], r[3]) for i, (*_, keep) in enumerate(WHERE) for r in rows if keep(r)]
    assert got == _expected(want)


EXPRESSIONS = {
    "col+lit": (Arith("+", Col("v"), Lit(5)), lambda k, x, v: v + 5),
    "col-col": (Arith("-", Col("v"), Col("k")), lambda k, x, v: v - k),
    "col*double": (Arith("*", Col("v"), Lit(0.5)), lambda k, x, v: v * 0.5),
    "floordiv": (Arith("//", Arith("-", Col("v"), Lit(5)), Lit(3)), lambda k, x, v: (v - 5) // 3),
    "mod": (Arith("%", Arith("-", Col("v"), Lit(5)), Lit(3)), lambda k, x, v: (v - 5) % 3),
    # A long beyond the doubles' exact integers (the RT job's group ids are such longs).
    "mod_big": (
        Arith("%", Arith("+", Col("v"), Lit(2**60 + 1)), Lit(4)),
        lambda k, x, v: (v + 1) % 4,
    ),
    "floordiv_big": (
        Arith("//", Arith("-", Lit(-(2**60) - 1), Col("v")), Lit(7)),
        lambda k, x, v: (-(2**60) - 1 - v) // 7,
    ),
    "floor": (Floor(Arith("*", Col("x"), Lit(-0.5))), lambda k, x, v: math.floor(x * -0.5)),
    "clip": (Clip(Col("v"), 2, 9), lambda k, x, v: min(max(v, 2), 9)),
    "lookup": (Lookup((7, 8, 9, 6), Col("k")), lambda k, x, v: (7, 8, 9, 6)[k]),
    "text": (
        Text(("a", "", "ç", "d"), Lookup((3, 2, 1, 0), Col("k"))),
        lambda k, x, v: ("a", "", "ç", "d")[(3, 2, 1, 0)[k]],
    ),
    "when": (
        When(Col("x"), "<=", Lit(4.0), Lit(1), When(Col("v"), ">", Lit(9), Lit(3), Lit(2))),
        lambda k, x, v: 1 if x <= 4.0 else 3 if v > 9 else 2,
    ),
}


@pytest.mark.parametrize("data", ["empty", "skewed"])
def test_with_columns(engine: Engine, data: str) -> None:
    """Every expression node, natively, on every engine; ``x`` replaced in place."""
    columns = {name: e for name, (e, _) in EXPRESSIONS.items()} | {"x": Lit(1)}
    out = engine.with_columns(_table(engine, data), columns)
    assert [c for c, _ in engine.schema_of(out)] == [*NAMES, *EXPRESSIONS]
    types = dict(engine.schema_of(out))
    assert types["col+lit"] == types["floordiv"] == types["lookup"] == types["x"] == "long"
    assert types["mod"] == types["mod_big"] == types["floordiv_big"] == "long"
    assert types["col*double"] == "double"
    assert types["text"] == "string"
    want = [(k, *[fn(k, x, v) for _, fn in EXPRESSIONS.values()], 1) for k, _, x, v in DATA[data]]
    assert _rows(engine, out, ["k", *EXPRESSIONS, "x"]) == _expected(want)


def test_leaf_expression_is_the_block_tree(engine: Engine) -> None:
    """The partition family's native routing agrees with :meth:`BlockTree.assign`."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {"c0": rng.random(40), "c1": rng.integers(0, 400, 40), "c2": rng.integers(0, 5, 40)}
    )
    rules = [BinRule("scale", 10), BinRule("divide", 100), BinRule("identity")]
    splits = {1: (0, 4), 2: (1, 1), 3: (2, 2), 6: (0, 2), 7: (1, 2)}
    table = engine.from_pandas(frame, [("c0", "double"), ("c1", "long"), ("c2", "long")])
    bins = [bin_expression(f"c{i}", r) for i, r in enumerate(rules)]
    out = engine.with_columns(table, {"leaf": leaf_expression(splits, bins)})
    matrix = np.vstack([r.apply(frame[f"c{i}"].to_numpy()) for i, r in enumerate(rules)])
    leaves = BlockTree(splits).assign(matrix)
    want = list(zip(frame["c1"], frame["c2"], leaves, strict=True))
    assert _rows(engine, out, ["c1", "c2", "leaf"]) == _expected(
        [(a, b, int(c)) for a, b, c in want]
    )


def test_node_key_is_the_mixed_radix_key(engine: Engine) -> None:
    """The lattice family's class key: ``lookup(code) * stride`` summed, natively."""
    frame = pd.DataFrame({"_b0": [0, 1, 2, 3], "_b1": [4, 0, 2, 1], "s": ["p", "q", None, "r"]})
    node = NodeKey(5, (("_b0", np.array([0, 0, 1, 1]), 1), ("_b1", None, 2)))
    table = engine.from_pandas(frame, [("_b0", "long"), ("_b1", "long"), ("s", "string")])
    out = engine.with_columns(table, {KEY: key_expression(node)})
    assert dict(engine.schema_of(out))[KEY] == "long"
    want = [([0, 0, 1, 1][b0] + 2 * b1, s) for b0, b1, s in frame.itertuples(index=False)]
    assert _rows(engine, out, [KEY, "s"]) == _expected(want)


# ------------------------------------------------------------- ids, samples, small tables


@pytest.mark.parametrize("data", CASES)
def test_with_row_id_and_sample(engine: Engine, data: str) -> None:
    """Row ids unique ``long`` s; samples deterministic subsets, 0 and 1 exact."""
    table = engine.persist(engine.with_row_id(_table(engine, data), "rid"))
    assert dict(engine.schema_of(table))["rid"] == "long"
    ids = [r[0] for r in _rows(engine, table, ["rid"])]
    assert len(set(ids)) == len(ids) == len(DATA[data])
    half = _rows(engine, engine.sample(table, 0.5, seed=7), ["rid", "v"])
    assert half == _rows(engine, engine.sample(table, 0.5, seed=7), ["rid", "v"])
    assert set(half) <= set(_rows(engine, table, ["rid", "v"]))
    assert engine.count(engine.sample(table, 0.0, seed=7)) == 0
    assert engine.count(engine.sample(table, 1.0, seed=7)) == len(DATA[data])
    engine.unpersist(table)


def _in_order(engine: Engine, table: Any) -> list[tuple[Any, ...]]:
    """The table's rows in the engine's order (one collect)."""
    frame = engine.collect_small(table, 1000)
    return [tuple(_value(r[c]) for c in NAMES) for r in frame.to_dict("records")]


@pytest.mark.parametrize("data", CASES)
def test_keyed_order(engine: Engine, data: str, tmp_path: Path) -> None:
    """The same rows, in an order fixed by the key and the rows' values alone.

    Reversing the input leaves the order as it is; another key gives another order; and
    written, the parts read in name order keep it (one part per partition on Spark).
    """
    key, other = RunKey(bytes(range(32)), "user"), RunKey(bytes(32), "user")
    draw = partial(key.words, RELEASE_ORDER)
    rows = DATA[data]
    ordered = _in_order(engine, engine.keyed_order(_table(engine, data), draw))
    assert sorted(ordered, key=repr) == _expected(rows)
    reversed_input = engine.from_pandas(pd.DataFrame(rows[::-1], columns=NAMES), SCHEMA)
    assert _in_order(engine, engine.keyed_order(reversed_input, draw)) == ordered
    redrawn = engine.keyed_order(_table(engine, data), partial(other.words, RELEASE_ORDER))
    if len(rows) > 5:
        assert _in_order(engine, redrawn) != ordered
        assert ordered != _expected(rows) and ordered != [_value_row(r) for r in rows]
    path = str(tmp_path / "ordered")
    engine.write_table(engine.keyed_order(_table(engine, data), draw), path, "parquet")
    parts = sorted(Path(path).glob("*.parquet"))
    written = pd.concat([pd.read_parquet(p) for p in parts]) if parts else pd.DataFrame()
    assert [tuple(_value(v) for v in r) for r in written.itertuples(index=False)] == ordered


def test_word_order_and_the_join_in_place(engine: Engine, tmp_path: Path) -> None:
    """Rows worded by their id, spread by the word, joined on it, sorted by it.

    Every row keeps its side values (the join matches on word and id), the word column
    goes, and the rows come out in word order within each written part: on the local
    engine one part in word order, on Spark parts chosen by the word.
    """
    key = RunKey(bytes(range(32)), "user")
    draw = partial(key.words, RELEASE_ORDER)
    ids = np.arange(40, dtype=np.int64)
    rows = engine.from_pandas(
        pd.DataFrame({"id": ids, "a": ids * 10}), [("id", "long"), ("a", "long")]
    )
    side = engine.from_pandas(
        pd.DataFrame({"id": ids[::-1], "b": [f"s{i}" for i in ids[::-1]]}),
        [("id", "long"), ("b", "string")],
    )
    left = engine.spread_by_word(engine.with_word(rows, "id", draw, "w"), "w")
    right = engine.spread_by_word(engine.with_word(side, "id", draw, "w"), "w")
    joined = engine.join(left, right, ["w", "id"], how="left")
    path = str(tmp_path / "worded")
    engine.write_table(engine.in_word_order(joined, "w"), path, "parquet")
    parts = [pd.read_parquet(p) for p in sorted(Path(path).glob("*.parquet"))]
    assert all(list(p.columns) == ["id", "a", "b"] for p in parts)
    written = pd.concat(parts, ignore_index=True)
    assert sorted(written["id"]) == list(ids)
    assert (written["a"] == written["id"] * 10).all()
    assert (written["b"] == "s" + written["id"].astype(str)).all()
    words = draw(ids).view(np.int64)
    for part in parts:
        part_words = words[part["id"].to_numpy()]
        assert (np.diff(part_words) > 0).all()  # in word order within the part
    assert written["id"].tolist() != list(ids)


def _value_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(_value(v) for v in row)


def test_collect_small_and_from_pandas(engine: Engine) -> None:
    """Types round-trip; a ``double`` null is NaN; more rows than allowed is a bug."""
    frame = pd.DataFrame({"a": [1, 2], "b": [0.5, None], "c": ["x", None], "d": [True, False]})
    schema = [("a", "long"), ("b", "double"), ("c", "string"), ("d", "boolean")]
    table = engine.from_pandas(frame, schema)
    assert engine.schema_of(table) == schema
    got = engine.collect_small(table, 2).sort_values("a").reset_index(drop=True)
    assert got["a"].dtype == np.int64 and got["b"].dtype == np.float64
    assert got["b"].isna().tolist() == [False, True] and got["c"].tolist() == ["x", None]
    with pytest.raises(InternalError):
        engine.collect_small(table, 1)
    empty = engine.from_pandas(frame.iloc[:0], schema)
    assert engine.schema_of(empty) == schema and engine.count(empty) == 0
    assert len(engine.collect_small(empty, 0)) == 0


# ---------------------------------------------------------------------------- files


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_write_and_read_table(engine: Engine, tmp_path: Path, fmt: str) -> None:
    """Rows survive a write; in CSV every column is text and a null an empty string."""
    table = engine.select(_table(engine, "nulls"), ["k", "g", "x"])
    path = str(tmp_path / "out")
    engine.write_table(table, path, fmt)
    back = engine.read_table(path, fmt)
    got = _rows(engine, back, ["k", "g", "x"])
    if fmt == "parquet":
        assert got == _expected([r[:3] for r in DATA["nulls"]])
    else:
        text = [(str(k), g or "", "" if x is None else str(x)) for k, g, x, _ in DATA["nulls"]]
        assert got == _expected(text)


def test_file_operations(engine: Engine, tmp_path: Path) -> None:
    base = str(tmp_path / "d")
    assert not engine.path_exists(base) and engine.list_names(base) == []
    engine.write_text(f"{base}/one.txt", "hello")
    engine.write_text(f"{base}/two.txt", "x")
    assert engine.list_names(base) == ["one.txt", "two.txt"]
    engine.rename_path(f"{base}/one.txt", f"{base}/sub/three.txt")
    assert Path(base, "sub", "three.txt").read_text(encoding="utf-8") == "hello"
    assert engine.list_names(base) == ["sub", "two.txt"]
    engine.delete_path(f"{base}/sub")
    engine.delete_path(f"{base}/absent")
    assert engine.list_names(base) == ["two.txt"]
    link = tmp_path / "link"
    link.symlink_to(base)
    assert engine.canonical_path(str(link)) == str(Path(base).resolve())


def test_read_and_first_malformed(engine: Engine, tmp_path: Path) -> None:
    """A CSV reads as text plus the malformed flag; the first bad record is named."""
    path = tmp_path / "in.csv"
    path.write_text("a,b\n1,x\n2,y,extra\n3,z\n", encoding="utf-8")
    cfg = SimpleNamespace(
        format="csv", path=str(path), options={}, columns=None, glob=None, max_split_bytes=None
    )
    table = engine.read(cfg)
    got = _rows(engine, table, ["a", "b", MALFORMED])
    assert got == _expected([("1", "x", 0), (None, None, 1), ("3", "z", 0)])
    if getattr(engine, "connect", False):
        return
    file, line, fields, expected = engine.first_malformed(cfg)
    assert (Path(file.removeprefix("file:")).name, line, fields, expected) == ("in.csv", 3, 3, 2)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_row_ids_are_input_positions_whatever_the_split(
    engine: Engine, tmp_path: Path, fmt: str
) -> None:
    """Ids ``0 .. n - 1`` by file path, then row: what keys a row's noise on both engines.

    Spark reads the files in splits of 1,500 bytes (several per file) and of the
    default size (one per file); both give every row the id the local engine gives it.
    A malformed CSV record is numbered too (it is a row until the job drops it).
    """
    folder = tmp_path / "in"
    folder.mkdir()
    rows = [(f"{i:05d}", f"v{i % 7}") for i in range(1_200)]
    parts = {"b": rows[:700], "a": rows[700:]}  # path order is not writing order
    for name, part in parts.items():
        frame = pd.DataFrame(part, columns=["n", "v"])
        if fmt == "csv":
            text = frame.to_csv(index=False)
            if name == "a":  # one malformed record, the 101st of file a
                lines = text.splitlines()
                lines[101] += ",extra"
                text = "\n".join(lines) + "\n"
            (folder / f"{name}.csv").write_text(text, encoding="utf-8")
        else:
            frame.to_parquet(folder / f"{name}.parquet", row_group_size=100)
    in_path_order = parts["a"] + parts["b"]
    spark = getattr(engine, "spark", None)
    for split in (1_500, None):
        cfg = SimpleNamespace(
            format=fmt, path=str(folder), options={}, columns=None, glob=None,
            max_split_bytes=split,
        )  # fmt: skip
        try:
            table = engine.with_row_id(engine.read(cfg), "rid")
            got = engine.collect_small(engine.select(table, ["rid", "v"]), len(rows))
        finally:
            if spark is not None:
                spark.conf.unset("spark.sql.files.maxPartitionBytes")
        got = got.sort_values("rid").reset_index(drop=True)
        assert got["rid"].tolist() == list(range(len(rows)))
        want = [v for _, v in in_path_order]
        if fmt == "csv":
            want[101 - 1] = None  # the malformed record's fields are null
        assert [None if pd.isna(v) else v for v in got["v"]] == want, split


# --------------------------------------------------------------------- stages, catalog


def test_any_stage_name_is_labelled_and_counted(engine: Engine) -> None:
    """The engine keeps no list of stages; a nested stage gives the outer one back."""
    table = _table(engine, "one")
    with engine.stage("outer-stage"):
        with engine.stage("a-stage-no-list-names", "count one row"):
            assert engine.count(table) == 1
        assert engine.count(table) == 1
    jobs = engine.jobs_launched()
    assert engine.parallelism >= 1
    if isinstance(engine, LocalEngine):
        assert jobs is None and engine.progress("outer-stage") is None
        return
    assert jobs["a-stage-no-list-names"] >= 1 and jobs["outer-stage"] >= 1
    done, total = engine.progress("outer-stage")
    assert 0 < done <= total  # a skipped stage's tasks are never done


def test_catalog_of_the_local_engine_is_refused() -> None:
    from sparkanon.errors import ConfigError

    with pytest.raises(ConfigError, match="need the Spark engine"):
        LocalEngine().catalog()


def test_listing_and_reading_files_in_chunks(engine: Engine, tmp_path: Path) -> None:
    base = tmp_path / "staged"
    assert engine.list_files(str(base)) == []
    (base / "data").mkdir(parents=True)
    payload = bytes(range(256)) * 40 + b"tail"
    (base / "data" / "part-0").write_bytes(payload)
    (base / "metrics.json").write_text("{}", encoding="utf-8")
    found = engine.list_files(str(base))
    assert [p.rsplit("/", 1)[-1] for p in found] == ["part-0", "metrics.json"]
    chunks = list(engine.read_chunks(found[0], 1000))
    assert b"".join(chunks) == payload and max(len(c) for c in chunks) == 1000
    assert list(engine.read_chunks(found[1], 1000)) == [b"{}"]
