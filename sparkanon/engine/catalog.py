"""Spark SQL catalog tables: what the job reads from and commits to a warehouse.

The catalog is Spark's: Hive support with the user's metastore on a cluster, or the
embedded Derby metastore and a local warehouse folder in local mode
(:mod:`sparkanon.engine.session`). Every statement is plain Spark SQL, so the same code
runs against any Hive-compatible metastore.

A committed output table (or partition) points at one *version directory* written by
one run, ``<root>/[<col>=<value>/]v-<run>/data``; a commit is one metastore update that
points the table or partition at the new version (``CREATE TABLE ... LOCATION``,
``ALTER TABLE ... SET LOCATION``, ``ALTER TABLE ... ADD PARTITION ... LOCATION``), never
a rewrite of files in place, so a reader sees the old or the new version, whole.

Every identifier in a statement is quoted by :func:`~sparkanon.engine.sql.quote_identifier`
and every string literal built by :func:`~sparkanon.engine.sql.sql_string` (table property
values encoded by :func:`~sparkanon.engine.sql.encode_property` first), so no column
name, partition value or property value can change a statement, whatever
``spark.sql.parser.escapedStringLiterals`` is set to (:mod:`sparkanon.engine.sql`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from sparkanon.engine.base import Catalog, TableInfo
from sparkanon.engine.sql import (
    decode_property,
    encode_property,
    quote_identifier,
    sql_string,
    sql_type,
)
from sparkanon.errors import ConfigError, InputError

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def split_name(name: str) -> tuple[str | None, str]:
    """``(database, table)`` of ``db.table`` or ``table``.

    Raises:
        ConfigError: not one or two plain identifiers.
    """
    parts = name.split(".")
    if len(parts) > 2 or not all(_IDENTIFIER.match(p) for p in parts):
        raise ConfigError(
            f"table name {name!r} is not db.table or table (letters, digits and _, "
            "not starting with a digit)"
        )
    return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])


def quote_name(name: str) -> str:
    """``db.table`` as a quoted Spark SQL identifier."""
    db, table = split_name(name)
    return f"{quote_identifier(db)}.{quote_identifier(table)}" if db else quote_identifier(table)


def partition_clause(spec: Mapping[str, str]) -> str:
    """``PARTITION (`col` = 'value', ...)`` of a partition spec.

    Raises:
        ConfigError: a value holds a quote or a backslash (:func:`sql_string`).
    """
    parts = (
        f"{quote_identifier(c)} = {sql_string(v, f'the value of partition column {c!r}')}"
        for c, v in spec.items()
    )
    return "PARTITION (" + ", ".join(parts) + ")"


class SparkCatalog(Catalog):
    """Catalog operations of the Spark engine.

    Args:
        spark: the session (with Hive support for persistent tables).
    """

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def qualified(self, name: str) -> str:
        """``db.table``, the current database filled in."""
        db, table = split_name(name)
        return f"{db or self.spark.catalog.currentDatabase()}.{table}"

    def table(self, name: str) -> TableInfo | None:
        """The table, or ``None`` when it does not exist."""
        qualified = self.qualified(name)
        if not self.spark.catalog.tableExists(qualified):
            return None
        columns = self.spark.catalog.listColumns(qualified)
        data = tuple((c.name, c.dataType) for c in columns if not c.isPartition)
        parts = {c.name: c.dataType for c in columns if c.isPartition}
        rows = self.spark.sql(f"DESCRIBE TABLE EXTENDED {quote_name(qualified)}").collect()
        detail = {r["col_name"]: r["data_type"] for r in rows}
        # The partition columns in declared order: DESCRIBE lists them after this header.
        header = [i for i, r in enumerate(rows) if r["col_name"] == "# Partition Information"]
        ordered = []
        if header:
            for r in rows[header[0] + 2 :]:
                if not r["col_name"] or r["col_name"].startswith("#"):
                    break
                ordered.append(r["col_name"])
        props = {
            r["key"]: decode_property(r["value"])
            for r in self.spark.sql(f"SHOW TBLPROPERTIES {quote_name(qualified)}").collect()
        }
        return TableInfo(
            name=qualified,
            columns=data,
            partition_columns=tuple((c, parts[c]) for c in ordered if c in parts),
            location=str(detail.get("Location", "")),
            properties=props,
        )

    def require(self, name: str, key: str) -> TableInfo:
        """The table, or a user error naming the key when it does not exist."""
        info = self.table(name)
        if info is None:
            db, _ = split_name(self.qualified(name))
            known = [t.name for t in self.spark.catalog.listTables(db)]
            raise InputError(
                f"{key}: table {name!r} does not exist (database {db!r} has "
                f"{sorted(known) if known else 'no tables'})"
            )
        return info

    def partitions(self, name: str) -> list[dict[str, str]]:
        """Every partition of a partitioned table, as ``{column: value}`` specs."""
        rows = self.spark.sql(f"SHOW PARTITIONS {quote_name(self.qualified(name))}").collect()
        specs = []
        for row in rows:
            spec = {}
            for part in str(row[0]).split("/"):
                col, _, value = part.partition("=")
                spec[_unescape_partition_value(col)] = _unescape_partition_value(value)
            specs.append(spec)
        return specs

    def has_partition(self, name: str, spec: Mapping[str, str]) -> bool:
        """Whether the table holds that partition."""
        query = f"SHOW PARTITIONS {quote_name(self.qualified(name))} {partition_clause(spec)}"
        return len(self.spark.sql(query).collect()) > 0

    def read(self, info: TableInfo, spec: Mapping[str, str] | None) -> DataFrame:
        """The rows of the table (of one partition), without the partition columns."""
        from pyspark.sql import functions as F  # noqa: N812

        df = self.spark.table(info.name)
        for col, value in (spec or {}).items():
            df = df.where(F.col(quote_identifier(col)).cast("string") == F.lit(value))
        return df.drop(*[c for c, _ in info.partition_columns])

    def database_location(self, name: str) -> str:
        """The location of the database the table lives (or will live) in."""
        db, _ = split_name(self.qualified(name))
        return str(self.spark.catalog.getDatabase(db).locationUri)

    def create_table(self, table: TableInfo) -> None:
        """Create the Parquet table ``table`` describes (unpartitioned: its data is there)."""
        cols = ", ".join(
            f"{quote_identifier(c)} {sql_type(c, t)}"
            for c, t in [*table.columns, *table.partition_columns]
        )
        parts = ", ".join(quote_identifier(c) for c, _ in table.partition_columns)
        statement = f"CREATE TABLE {quote_name(self.qualified(table.name))} ({cols}) USING parquet"
        if parts:
            statement += f" PARTITIONED BY ({parts})"
        statement += f" LOCATION {sql_string(table.location, 'the table location')}"
        if table.properties:
            statement += f" TBLPROPERTIES ({_properties(table.properties)})"
        self.spark.sql(statement)

    def point_table(self, name: str, location: str) -> None:
        """Point an unpartitioned table at another location (one metastore update)."""
        qualified = quote_name(self.qualified(name))
        at = sql_string(location, "the table location")
        self.spark.sql(f"ALTER TABLE {qualified} SET LOCATION {at}")
        self.spark.sql(f"REFRESH TABLE {qualified}")

    def point_partition(self, name: str, spec: Mapping[str, str], location: str) -> str | None:
        """Point one partition at ``location``, adding it when absent; its old location.

        One metastore update either way (``ADD PARTITION ... LOCATION`` or ``PARTITION ...
        SET LOCATION``).
        """
        qualified = quote_name(self.qualified(name))
        clause = partition_clause(spec)
        at = sql_string(location, "the partition location")
        old = self.partition_location(name, spec)
        if old is not None:
            self.spark.sql(f"ALTER TABLE {qualified} {clause} SET LOCATION {at}")
        else:
            self.spark.sql(f"ALTER TABLE {qualified} ADD {clause} LOCATION {at}")
        self.spark.sql(f"REFRESH TABLE {qualified}")
        return old

    def partition_location(self, name: str, spec: Mapping[str, str]) -> str | None:
        """The location of one partition, ``None`` when the table lacks it."""
        if not self.has_partition(name, spec):
            return None
        qualified = quote_name(self.qualified(name))
        query = f"DESCRIBE TABLE EXTENDED {qualified} {partition_clause(spec)}"
        rows = self.spark.sql(query).collect()
        return next((str(r["data_type"]) for r in rows if r["col_name"] == "Location"), "")

    def set_properties(self, name: str, properties: Mapping[str, str]) -> None:
        """Set table properties."""
        qualified = quote_name(self.qualified(name))
        self.spark.sql(f"ALTER TABLE {qualified} SET TBLPROPERTIES ({_properties(properties)})")

    def create_lock(self, lock_name: str, holder: Mapping[str, Any]) -> bool:
        """Create the lock table ``lock_name``; ``False`` when it exists already.

        The metastore creates a table name once (a unique key of its database), so of
        two jobs racing for one lock exactly one gets it, on any filesystem.
        """
        qualified = quote_name(self.qualified(lock_name))
        try:
            self.spark.sql(
                f"CREATE TABLE {qualified} (holder STRING) USING parquet "
                f"TBLPROPERTIES ({_properties({'sparkanon.lock': json.dumps(dict(holder))})})"
            )
        except Exception as exc:  # noqa: BLE001 - only "already exists" is an answer
            if "already exists" in str(exc).lower() or "TABLE_OR_VIEW_ALREADY_EXISTS" in str(exc):
                return False
            raise
        return True

    def lock_holder(self, lock_name: str) -> str:
        """Who holds a lock (the JSON its creator recorded), or ``""``."""
        info = self.table(lock_name)
        return "" if info is None else info.properties.get("sparkanon.lock", "")

    def drop_lock(self, lock_name: str) -> None:
        """Release a lock."""
        self.spark.sql(f"DROP TABLE IF EXISTS {quote_name(self.qualified(lock_name))}")


def _properties(properties: Mapping[str, str]) -> str:
    """``'key' = 'value', ...``: each value encoded (:func:`encode_property`), then a literal."""
    return ", ".join(
        f"{sql_string(k, 'the table property')} = "
        f"{sql_string(encode_property(v), f'the value of table property {k!r}')}"
        for k, v in properties.items()
    )


def _unescape_partition_value(value: str) -> str:
    """A partition column or value as ``SHOW PARTITIONS`` prints it, unescaped (``%3A``: ``:``)."""
    from urllib.parse import unquote

    return unquote(value)
