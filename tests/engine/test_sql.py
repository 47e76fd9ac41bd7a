"""Identifiers and literals of the Spark SQL sparkanon builds (sparkanon.engine.sql).

The pure tests read the text back with the two lexer rules of Spark's grammar
(``SqlBaseLexer.g4``) that matter here: ``BACKQUOTED_IDENTIFIER: '`' (~'`' | '``')* '`'``
and ``STRING_LITERAL: '\\'' (~('\\''|'\\\\') | ('\\\\' .))* '\\''``, the latter unescaped
as ``spark.sql.parser.escapedStringLiterals`` false and true would. The Spark test writes
a catalog table whose columns have hostile names and checks where it lands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparkanon.engine.base import TableInfo
from sparkanon.engine.sql import (
    PROPERTY_ESCAPE,
    decode_property,
    encode_property,
    quote_identifier,
    sql_string,
    sql_type,
)
from sparkanon.errors import EXIT_USER, ConfigError

HOSTILE_NAMES = [
    "plain",
    "first name",
    "order-id",
    "a.b",
    "`",
    "``",
    "a`b",
    "x` LOCATION '/tmp/x' --",
    "x` STRING) USING parquet LOCATION '/tmp/sparkanon-i39-evil' --",
    "it's",
    'say "hi"',
    "back\\slash",
    "trailing\\",
    "new\nline",
    "tab\there",
    "/* comment */",
    "ünïcødé 名前 🙂",
]

SAFE_VALUES = [
    "/warehouse/db.db/out/ds=2026-11-23/v-0123456789ab/data",
    "file:/tmp/a b/c-d",
    'json {"a": [1, 2]}',
    "new\nline -- not a comment /* nor this */",
    "ünïcødé 名前",
    "",
]


def _backquoted(text: str, start: int = 0) -> tuple[str, int]:
    """The name a backquoted identifier at ``text[start]`` stands for, and where it ends."""
    assert text[start] == "`"
    out, i = [], start + 1
    while True:
        if text[i] == "`":
            if i + 1 < len(text) and text[i + 1] == "`":
                out.append("`")
                i += 2
                continue
            return "".join(out), i + 1
        out.append(text[i])
        i += 1


def _string_literal(text: str, escaped: bool) -> tuple[str, int]:
    """The value of the string literal starting ``text``, as Spark reads it, and its end."""
    assert text[0] == "'"
    raw, i = [], 1
    while text[i] != "'":
        if text[i] == "\\":
            raw.append(text[i : i + 2])
            i += 2
        else:
            raw.append(text[i])
            i += 1
    body = "".join(raw)
    if escaped:  # spark.sql.parser.escapedStringLiterals=true: as written
        return body, i + 1
    value, j = [], 0
    while j < len(body):  # the default: a backslash escapes the next character
        if body[j] == "\\":
            value.append({"n": "\n", "t": "\t", "0": "\0"}.get(body[j + 1], body[j + 1]))
            j += 2
        else:
            value.append(body[j])
            j += 1
    return "".join(value), i + 1


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_quoted_identifier_is_one_token_naming_exactly_the_name(name: str) -> None:
    quoted = quote_identifier(name)
    statement = f"CREATE TABLE t ({quoted} STRING) USING parquet"
    start = statement.index("`")
    read, end = _backquoted(statement, start)
    assert read == name
    assert statement[end:] == " STRING) USING parquet"


def test_quote_identifier_doubles_backticks() -> None:
    assert quote_identifier("a`b") == "`a``b`"
    assert quote_identifier("x` LOCATION '/tmp/x' --") == "`x`` LOCATION '/tmp/x' --`"


@pytest.mark.parametrize("value", SAFE_VALUES)
@pytest.mark.parametrize("escaped", [False, True])
def test_a_string_literal_reads_the_same_under_both_parser_settings(
    value: str, escaped: bool
) -> None:
    literal = sql_string(value, "the table location")
    read, end = _string_literal(literal + " TBLPROPERTIES", escaped)
    assert read == value
    assert end == len(literal)


@pytest.mark.parametrize("value", ["it's", "back\\slash", "trailing\\", "'; DROP TABLE x; --"])
def test_a_literal_with_a_quote_or_a_backslash_is_refused_naming_it(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        sql_string(value, "the table location")
    assert info.value.exit_code == EXIT_USER
    assert "the table location" in str(info.value) and repr(value) in str(info.value)


@pytest.mark.parametrize(
    "value",
    [
        *HOSTILE_NAMES,
        json.dumps({"sex": {"values": ["O'Brien", 'a "b"', "c\\d", "100%"]}}),
        PROPERTY_ESCAPE + "looks encoded",
        "%27 stays %27",
    ],
)
@pytest.mark.parametrize("escaped", [False, True])
def test_a_property_value_round_trips_through_a_literal(value: str, escaped: bool) -> None:
    stored = encode_property(value)
    assert "'" not in stored and "\\" not in stored
    read, _ = _string_literal(sql_string(stored, "the property"), escaped)
    assert decode_property(read) == value


def test_a_plain_property_value_is_stored_as_it_is() -> None:
    for value in ('{"name": "k_anonymity", "k": 5}', "ds=2026-11-23", "100%", "1764370000.123"):
        assert encode_property(value) == value
        assert decode_property(value) == value
    assert encode_property("O'Brien") == PROPERTY_ESCAPE + "O%27Brien"


def test_partition_clause_quotes_the_column_and_refuses_a_quoted_value() -> None:
    from sparkanon.engine.catalog import partition_clause

    clause = partition_clause({"x` = 'a') LOCATION '/tmp/x' --": "2026-11-23"})
    read, end = _backquoted(clause, clause.index("`"))
    assert read == "x` = 'a') LOCATION '/tmp/x' --"
    assert clause[end:] == " = '2026-11-23')"
    with pytest.raises(ConfigError, match="partition column 'ds'"):
        partition_clause({"ds": "2026'11"})


def test_properties_are_encoded_literals() -> None:
    from sparkanon.engine.catalog import _properties

    text = _properties({"sparkanon.noise": json.dumps({"v": ["O'Brien", "a\\b"]})})
    key, end = _string_literal(text, escaped=False)
    assert key == "sparkanon.noise" and text[end:].startswith(" = '")
    value, _ = _string_literal(text[end + 3 :], escaped=True)
    assert json.loads(decode_property(value)) == {"v": ["O'Brien", "a\\b"]}


def test_quote_name_quotes_both_parts() -> None:
    from sparkanon.engine.catalog import quote_name

    assert quote_name("db.t") == "`db`.`t`"
    with pytest.raises(ConfigError):
        quote_name("db.t` LOCATION")


def test_the_spark_engines_ddl_schema_quotes_every_name() -> None:
    from sparkanon.engine.spark import _ddl

    text = _ddl([("x` string, evil", "string"), ("n", "long")])
    read, end = _backquoted(text)
    assert read == "x` string, evil" and text[end:] == " string, `n` long"


@pytest.mark.parametrize("ok", ["string", "bigint", "decimal(10, 2)", "array<string>"])
def test_sql_type_takes_a_type(ok: str) -> None:
    assert sql_type("c", ok) == ok


@pytest.mark.parametrize("bad", ["string) LOCATION '/tmp/x' --", "struct<`a`:int>", "int\n"])
def test_sql_type_refuses_anything_else(bad: str) -> None:
    with pytest.raises(ConfigError, match="column 'c'"):
        sql_type("c", bad)


# ----------------------------------------------------------------------------- Spark


@pytest.mark.spark
def test_a_table_with_hostile_column_names_lands_where_it_should(
    spark: Any, tmp_path: Path
) -> None:
    """CREATE TABLE with hostile names and values: the exact names, the given location."""
    from sparkanon.engine.catalog import SparkCatalog

    names = list(HOSTILE_NAMES)
    spark.sql("DROP DATABASE IF EXISTS t_sql CASCADE")
    spark.sql("CREATE DATABASE t_sql")
    catalog = SparkCatalog(spark)
    key = "escapedStringLiterals"
    conf = f"spark.sql.parser.{key}"
    saved = spark.conf.get(conf, "false")
    try:
        for escaped in ("false", "true"):
            spark.conf.set(conf, escaped)
            table = f"t_sql.hostile_{escaped}"
            at = tmp_path / f"data_{escaped}"
            frame = spark.createDataFrame([tuple(f"v{i}" for i in range(len(names)))], names)
            frame.write.parquet(str(at))
            props = {"sparkanon.noise": json.dumps({"v": ["O'Brien", "a\\b"]})}
            columns = tuple((n, "string") for n in names)
            catalog.create_table(TableInfo(table, columns, (), str(at), props))
            info = catalog.table(table)
            assert info is not None
            assert [c for c, _ in info.columns] == names
            assert info.location.rstrip("/").endswith(f"data_{escaped}")
            assert json.loads(info.properties["sparkanon.noise"]) == {"v": ["O'Brien", "a\\b"]}
            assert not Path("/tmp/sparkanon-i39-evil").exists()
            row = spark.table(table).collect()[0]
            assert list(row) == [f"v{i}" for i in range(len(names))]
            catalog.set_properties(table, {"sparkanon.seed": "it's \\ 7"})
            assert catalog.table(table).properties["sparkanon.seed"] == "it's \\ 7"
            # A partitioned table: a hostile partition column, one partition pointed at.
            part, value = "ds` = 'x') LOCATION '/tmp/x' --", "2026-11-23"
            parted = f"t_sql.parted_{escaped}"
            root = tmp_path / f"parted_{escaped}"
            where = root / "v-1" / "data"
            spark.createDataFrame([("a",)], ["first name"]).write.parquet(str(where))
            catalog.create_table(
                TableInfo(parted, (("first name", "string"),), ((part, "string"),), str(root), {})
            )
            assert catalog.point_partition(parted, {part: value}, str(where)) is None
            assert catalog.partitions(parted) == [{part: value}]
            assert str(catalog.partition_location(parted, {part: value})).endswith("v-1/data")
            assert [tuple(r) for r in spark.table(parted).collect()] == [("a", value)]
    finally:
        spark.conf.set(conf, saved)
        spark.sql("DROP DATABASE IF EXISTS t_sql CASCADE")
