"""Wide warehouse tables: unlisted columns, kept columns out of the algorithms' memory,
Spark's native types (booleans, integers of every width with nulls, decimals) and the
per-column ``on_missing``.

A generated table of a few typed quasi-identifiers and 150 columns the config does not
name, written as Parquet with its native types; every family that publishes input rows
(blocks, full-domain, perturbation, relational-transaction) runs on the local engine,
and one Spark test compares both engines on it.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkanon.attributes.schema import RID
from sparkanon.attributes.text import trimmed_text
from sparkanon.config import InputConfig
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import ConfigError, InputError
from sparkanon.families import parse_config
from sparkanon.pipeline import run_job
from sparkanon.stages._common import StageTimer
from sparkanon.stages.encode import encode_input, encoded_columns
from sparkanon.stages.profile import profile_input
from sparkanon.stages.read import read_input
from tests._inputs import attributes_of, rt_config, rt_frame

EXTRA = 150
"""Columns the configs do not name (``x000`` is a unique row key)."""
DISEASES = ["flu", "cold", "asthma", "ulcer", "gout", "acne"]


def extra_columns(n: int, rng: np.random.Generator) -> dict[str, pa.Array]:
    """``EXTRA`` typed columns: a unique text key, then ints, doubles, text, booleans, decimals.

    Every fifth value of each typed column is null.
    """
    nulls = np.arange(n) % 5 == 4
    out: dict[str, pa.Array] = {"x000": pa.array([f"r{i:05d}" for i in range(n)])}
    for j in range(1, EXTRA):
        which = j % 5
        if which == 0:
            values, kind = rng.integers(-50, 50, n).tolist(), pa.int32()
        elif which == 1:
            values, kind = np.round(rng.normal(0, 10, n), 3).tolist(), pa.float64()
        elif which == 2:
            values, kind = [f"t{v}" for v in rng.integers(0, 9, n)], pa.string()
        elif which == 3:
            values, kind = rng.random(n).round().astype(bool).tolist(), pa.bool_()
        else:
            values = [Decimal(int(v)).scaleb(-3) for v in rng.integers(0, 10**6, n)]
            kind = pa.decimal128(9, 3)
        values = [None if gone and j > 1 else v for v, gone in zip(values, nulls, strict=True)]
        out[f"x{j:03d}"] = pa.array(values, type=kind)
    return out


def wide_table(n: int = 240, seed: int = 5) -> pa.Table:
    """Typed quasi-identifiers, a sensitive column, and ``EXTRA`` unnamed columns.

    ``age`` tinyint, ``hours`` smallint, ``zone`` int with nulls, ``branch`` bigint with
    nulls, ``amount`` decimal(10,2), ``member`` boolean, ``disease`` text.
    """
    rng = np.random.default_rng(seed)
    zone = [None if i % 17 == 3 else int(v) for i, v in enumerate(rng.integers(1, 4, n))]
    branch = [None if i % 23 == 7 else 10**12 + int(v) for i, v in enumerate(rng.integers(0, 3, n))]
    columns = {
        "age": pa.array(rng.integers(18, 80, n), type=pa.int8()),
        "hours": pa.array(rng.integers(10, 60, n), type=pa.int16()),
        "zone": pa.array(zone, type=pa.int32()),
        "branch": pa.array(branch, type=pa.int64()),
        "amount": pa.array(
            [Decimal(int(v)).scaleb(-2) for v in rng.integers(0, 10**6, n)],
            type=pa.decimal128(10, 2),
        ),
        "member": pa.array(rng.random(n) < 0.4, type=pa.bool_()),
        "disease": pa.array(rng.choice(DISEASES, n).tolist()),
    }
    return pa.table(columns | extra_columns(n, rng))


def write_table(tmp_path: Path, table: pa.Table, name: str = "wide") -> Path:
    """The table as one Parquet file in a folder of its own."""
    folder = tmp_path / name
    folder.mkdir()
    pq.write_table(table, folder / "part-0.parquet")
    return folder


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    return write_table(tmp_path, wide_table())


def block_config(tmp_path: Path, data: Path, unlisted: str, **changes: Any) -> dict[str, Any]:
    """MDAV under k = 4 over the typed quasi-identifiers, ``x001`` listed as ``keep``."""
    cfg: dict[str, Any] = {
        "input": {"format": "parquet", "path": str(data), "unlisted": unlisted},
        "attributes": [
            {"name": "age", "kind": "continuous"},
            {"name": "hours", "kind": "continuous"},
            {"name": "zone", "kind": "nominal"},
            {"name": "branch", "kind": "nominal"},
            {"name": "amount", "kind": "continuous"},
            {"name": "member", "kind": "nominal"},
            {"name": "x001", "kind": "keep"},
        ],
        "sensitive": {"name": "disease"},
        "model": {"name": "k", "k": 4},
        "algorithm": {"name": "mdav"},
        "output": {"path": str(tmp_path / "out"), "format": "parquet"},
    }
    return cfg | changes


def committed(out: Path, name: str = "data") -> pa.Table:
    """The committed table ``name`` of a release."""
    return pa.concat_tables([pq.read_table(f) for f in sorted((out / name).glob("*.parquet"))])


def metrics_of(out: Path) -> dict[str, Any]:
    return json.loads((out / "metrics.json").read_text())


def assert_kept_as_input(got: pa.Table, source: pa.Table, names: list[str], rows: np.ndarray):
    """Kept columns hold the input rows' values (``rows``: each published row's input row)
    in the input's types (a decimal's precision is the local writer's: its scale is kept)."""
    for c in names:
        want, have = source.schema.field(c).type, got.schema.field(c).type
        if pa.types.is_decimal(want):
            assert pa.types.is_decimal(have) and have.scale == want.scale, c
        else:
            assert have == want, c
        expected = source.column(c).take(pa.array(rows)).to_pylist()
        assert got.column(c).to_pylist() == expected, c


def rows_by_key(got: pa.Table, source: pa.Table) -> np.ndarray:
    """Each published row's input row, found by the unique key ``x000``."""
    where = {k: i for i, k in enumerate(source.column("x000").to_pylist())}
    return np.array([where[k] for k in got.column("x000").to_pylist()], dtype=np.int64)


def unlisted_names(config: dict[str, Any], source: pa.Table) -> list[str]:
    named = {a["name"] for a in config["attributes"]} | {config["sensitive"]["name"]}
    return [c for c in source.column_names if c not in named]


# -- input.unlisted --------------------------------------------------------------------------


def test_unlisted_drop_counts_names_and_leaves_them_out(tmp_path: Path, wide: Path) -> None:
    cfg = block_config(tmp_path, wide, "drop")
    run_job(LocalEngine(), parse_config(cfg))
    out, source = tmp_path / "out", wide_table()
    got = committed(out)
    names = unlisted_names(cfg, source)
    assert len(names) == EXTRA - 1  # x001 is listed (keep)
    assert metrics_of(out)["unlisted_columns"] == {
        "policy": "drop",
        "count": EXTRA - 1,
        "names": names,
    }
    assert got.column_names == [
        *("age", "hours", "zone", "branch", "amount", "member"),
        "disease",
        "x001",
    ]
    assert got.schema.field("x001").type == pa.float64()


def test_unlisted_keep_blocks_publishes_every_column_in_its_type(
    tmp_path: Path, wide: Path
) -> None:
    """Centroids: kept columns ride with their own row (the key ``x000`` finds it)."""
    cfg = block_config(tmp_path, wide, "keep")
    result = run_job(LocalEngine(), parse_config(cfg))
    out, source = tmp_path / "out", wide_table()
    got = committed(out)
    kept = ["x001", *unlisted_names(cfg, source)]
    assert got.column_names[-len(kept) :] == kept
    assert metrics_of(out)["unlisted_columns"]["policy"] == "keep"
    assert metrics_of(out)["unlisted_columns"]["count"] == EXTRA - 1
    rows = rows_by_key(got, source)
    assert_kept_as_input(got, source, [*kept, "disease"], rows)
    m = result.metrics
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"] == source.num_rows
    assert m["suppressed_missing_values"] > 0  # zone and branch hold nulls
    # Native types as text: the nominal integer codes carry no ".0", booleans are lower case.
    assert set(got.column("zone").to_pylist()) <= {"1", "2", "3"}
    assert set(got.column("member").to_pylist()) <= {"true", "false"}
    assert got.schema.field("amount").type == pa.float64()


def test_unlisted_keep_full_domain(tmp_path: Path, wide: Path) -> None:
    cfg = block_config(
        tmp_path,
        wide,
        "keep",
        attributes=[
            {"name": "age", "kind": "continuous", "levels": {"widths": [10, 20, 40]}},
            *attributes_of({"member": "nominal", "zone": "nominal"}),
        ],
        algorithm={"name": "samarati", "max_suppression": 0.05},
    )
    cfg["output"]["publish"] = "generalized"
    result = run_job(LocalEngine(), parse_config(cfg))
    out, source = tmp_path / "out", wide_table()
    got = committed(out)
    kept = unlisted_names(cfg, source)
    assert got.column_names == ["age", "member", "zone", "disease", *kept]
    assert_kept_as_input(got, source, [*kept, "disease"], rows_by_key(got, source))
    m = result.metrics
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"]
    assert m["unlisted_columns"]["count"] == len(kept)


def test_unlisted_keep_perturbation(tmp_path: Path, wide: Path) -> None:
    """The perturbed rows' record ids are input rows; their kept values are those rows'."""
    cfg = block_config(
        tmp_path,
        wide,
        "keep",
        attributes=attributes_of({"age": "continuous", "member": "nominal"}),
        algorithm={
            "name": "perturb",
            "columns": [
                {"name": "age", "noise": "gaussian", "scale": 2.0},
                {"name": "member", "noise": "randomized_response", "retention": 0.8},
            ],
        },
    )
    del cfg["model"]
    result = run_job(LocalEngine(), parse_config(cfg))
    got, source = committed(tmp_path / "out"), wide_table()
    kept = unlisted_names(cfg, source)
    assert got.column_names == ["age", "member", "disease", *kept]  # no row id
    assert_kept_as_input(got, source, [*kept, "disease"], rows_by_key(got, source))
    assert result.metrics["rows_out"] == source.num_rows


def test_unlisted_keep_relational_transaction(tmp_path: Path) -> None:
    frame = rt_frame(300, seed=15)
    rng = np.random.default_rng(1)
    source = pa.Table.from_pandas(frame, preserve_index=False)
    for name, column in extra_columns(len(frame), rng).items():
        source = source.append_column(name, column)
    data = write_table(tmp_path, source)
    cfg = rt_config(tmp_path, data, input={"format": "parquet", "path": str(data)})
    cfg["input"]["unlisted"] = "keep"
    result = run_job(LocalEngine(), parse_config(cfg))
    got = committed(tmp_path / "out", "rt")
    kept = [f"x{j:03d}" for j in range(EXTRA)]
    assert got.column_names == ["age", "sex", "zip", *kept, "group_id"]
    rows = rows_by_key(got, source)  # x000: a kept column unique per input row
    assert_kept_as_input(got, source, kept, rows)
    ages = source.column("age").take(pa.array(rows)).to_numpy().astype(float)
    assert (got.column("age").to_numpy() == ages).all()
    assert result.metrics["unlisted_columns"] == {"policy": "keep", "count": EXTRA, "names": kept}


def test_encoded_table_carries_no_kept_column(tmp_path: Path, wide: Path) -> None:
    """The cached table: row id, codes, sensitive code and level, the sensitive value."""
    config = parse_config(block_config(tmp_path, wide, "keep"))
    engine, timer = LocalEngine(), StageTimer(LocalEngine())
    raw = read_input(engine, config, timer)
    assert [c for c, _ in engine.schema_of(raw.table)] == [
        *("age", "hours", "zone", "branch", "amount", "member", "disease"),
        RID,
    ]
    assert len(raw.kept.names) == EXTRA
    _, schema = profile_input(engine, config, raw, timer)
    encoded, columns = encode_input(engine, config, raw, schema, timer)
    names = [c for c, _ in engine.schema_of(encoded)]
    assert names == [c for c, _ in columns]
    assert names == [*(c for c, _ in encoded_columns(schema)), "disease"]
    assert not set(names) & set(raw.kept.names)


def test_synthesis_refuses_unlisted_keep(tmp_path: Path, wide: Path) -> None:
    cfg = block_config(
        tmp_path,
        wide,
        "keep",
        attributes=[{"name": "age", "kind": "continuous"}],
        algorithm={"name": "condensation"},
    )
    with pytest.raises(ConfigError, match="input.unlisted: keep: a synthetic release"):
        parse_config(cfg)


# -- native types ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "text"),
    [
        (pd.Series([True, False]), ["true", "false"]),
        (pd.Series([True, None, False], dtype=object), ["true", None, "false"]),
        (pd.Series([pd.NA, False], dtype="boolean"), [None, "false"]),
        (pd.Series(["True", " TRUE"]), ["True", "TRUE"]),  # CSV text stays as it is
        (pd.Series([7, None, -3], dtype="Int8"), ["7", None, "-3"]),
        (pd.Series([10**15, None], dtype="Int64"), ["1000000000000000", None]),
        (
            pd.Series([Decimal("1.50"), None, Decimal("1E+2"), Decimal("1E-7")], dtype=object),
            ["1.50", None, "100", "0.0000001"],
        ),
    ],
)
def test_native_values_read_as_spark_spells_them(values: pd.Series, text: list) -> None:
    got = trimmed_text(values)
    assert [None if v is pd.NA else v for v in got.tolist()] == text


def test_local_parquet_integers_with_nulls_stay_integers(tmp_path: Path) -> None:
    """pyarrow would hand pandas float64 (text ``7.0``); the local engine keeps the width."""
    table = pa.table({"a": pa.array([7, None], pa.int8()), "b": pa.array([None, 2], pa.int64())})
    path = write_table(tmp_path, table)
    frame = LocalEngine().read(InputConfig(format="parquet", path=str(path)))
    assert str(frame["a"].dtype) == "Int8" and str(frame["b"].dtype) == "Int64"
    assert trimmed_text(frame["a"]).tolist()[0] == "7"


# -- on_missing per column -------------------------------------------------------------------


def test_on_missing_per_column(tmp_path: Path, wide: Path) -> None:
    """``zone`` holds nulls: its own ``error`` fails naming the key; its ``drop`` overrides
    ``input.on_missing: error`` (``branch``'s nulls then fail under the input's policy)."""
    cfg = block_config(tmp_path, wide, "drop")
    cfg["attributes"][2]["on_missing"] = "error"
    with pytest.raises(InputError, match=r"'zone' \(attributes.2.on_missing: error\)") as err:
        run_job(LocalEngine(), parse_config(cfg), commit=False)
    assert "branch" not in str(err.value)
    cfg = block_config(tmp_path, wide, "drop")
    cfg["input"]["on_missing"] = "error"
    cfg["attributes"][2]["on_missing"] = "drop"
    cfg["attributes"][3]["on_missing"] = "drop"
    result = run_job(LocalEngine(), parse_config(cfg), commit=False)
    assert result.metrics["suppressed_missing_values"] > 0
    cfg["attributes"][3]["on_missing"] = None
    with pytest.raises(InputError, match=r"'branch' \(input.on_missing: error\)"):
        run_job(LocalEngine(), parse_config(cfg), commit=False)


# -- both engines ----------------------------------------------------------------------------


@pytest.mark.spark
def test_spark_matches_local_on_a_wide_native_table(spark, tmp_path: Path, wide: Path) -> None:
    """150 unnamed columns kept; booleans, decimals, ints of every width with nulls."""
    from sparkanon.engine.spark import SparkEngine

    config = parse_config(block_config(tmp_path, wide, "keep"))
    local = run_job(LocalEngine(), config, commit=False)
    remote = run_job(SparkEngine(spark), config, commit=False)
    for key in ("rows_out", "rows_suppressed", "suppressed_missing_values", "unlisted_columns"):
        assert remote.metrics[key] == local.metrics[key], key
    frame = remote.publication.tables["data"]
    types = dict(frame.dtypes)
    source = dict(spark.read.parquet(str(wide)).dtypes)
    kept = [c for c in source if c.startswith("x")]
    assert {c: types[c] for c in kept} == {c: source[c] for c in kept}
    assert types["amount"] == types["age"] == "double"
    assert types["zone"] == types["member"] == "string"
    # Compared through Arrow: toPandas would turn Spark's integers with nulls into floats.
    mine = pa.Table.from_pandas(local.publication.tables["data"], preserve_index=False)
    mine, theirs = mine.sort_by("x000"), frame.toArrow().sort_by("x000")
    assert theirs.column_names == mine.column_names
    for c in mine.column_names:
        assert theirs.column(c).to_pylist() == mine.column(c).to_pylist(), c
