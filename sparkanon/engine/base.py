"""The engine interface: the primitives the pipeline is written against.

The composite steps of the job (profile, encode, block, cluster, reconcile,
summarise, publish, verify) are written once, in :mod:`sparkanon.pipeline`,
against this interface. Two engines implement it:

* :class:`sparkanon.engine.local.LocalEngine` runs on pandas in one process;
  most tests use it.
* :class:`sparkanon.engine.spark.SparkEngine` runs on Spark (the only module
  that imports pyspark); parity tests check it gives the same result.

Every function handed to a primitive is a pure pandas function, the same one
both engines run. Tables are opaque to the pipeline (a pandas or a Spark
DataFrame). Only :meth:`Engine.collect_small` brings rows to the driver, and the
pipeline only calls it on per-block or per-column statistics, never on rows.

Column types are Spark DDL names: ``long``, ``double``, ``string``,
``boolean``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from sparkanon.engine.expr import Expr

Table = Any
"""An engine's table: a pandas DataFrame (local) or a Spark DataFrame."""

Columns = Sequence[tuple[str, str]]
"""An output schema: ``(name, ddl_type)`` pairs in order."""

BatchFn = Callable[[pd.DataFrame], pd.DataFrame]
"""A function over one batch of rows: a pandas DataFrame in, a pandas DataFrame out (what
:meth:`Engine.map_batches` and :meth:`Engine.map_groups` apply; both engines run it)."""

AGG_FUNCS = ("count", "sum", "min", "max", "mean", "nunique", "median", "collect")
"""Aggregations :meth:`Engine.aggregate` supports (their meaning on no rows and on nulls:
:meth:`Engine.aggregate`)."""


class InputSpec(Protocol):
    """What :meth:`Engine.read` needs to know of the input (``input:`` of the config).

    :class:`sparkanon.config.InputConfig` is one; the engine package does not import the
    config, so any object with these attributes will do.
    """

    @property
    def format(self) -> str:
        """``csv``, ``parquet`` or ``orc``."""

    @property
    def path(self) -> str | None:
        """The file or directory to read."""

    @property
    def options(self) -> Mapping[str, Any]:
        """Reader options (for CSV: ``header``, ``sep``...)."""

    @property
    def columns(self) -> Sequence[str] | None:
        """Column names of a headerless CSV, in file order."""

    @property
    def glob(self) -> str | None:
        """For a directory, the pattern the data files' names match."""

    @property
    def max_split_bytes(self) -> int | None:
        """On Spark, the most input bytes one read task takes."""


@dataclass(frozen=True)
class TableInfo:
    """A catalog table as the job needs it.

    Attributes:
        name: the qualified name ``db.table``.
        columns: the data columns, ``(name, spark type)``, partition columns left out.
        partition_columns: the partition columns, ``(name, spark type)``, in order.
        location: the table's location (a URI).
        properties: the table properties.
    """

    name: str
    columns: tuple[tuple[str, str], ...]
    partition_columns: tuple[tuple[str, str], ...]
    location: str
    properties: Mapping[str, str]


class Catalog(ABC):
    """Catalog tables: the warehouse side of an engine (Spark SQL's catalog)."""

    @abstractmethod
    def qualified(self, name: str) -> str:
        """``db.table``, the current database filled in."""

    @abstractmethod
    def table(self, name: str) -> TableInfo | None:
        """The table, or ``None`` when it does not exist."""

    @abstractmethod
    def require(self, name: str, key: str) -> TableInfo:
        """The table, or a user error naming ``key`` when it does not exist."""

    @abstractmethod
    def partitions(self, name: str) -> list[dict[str, str]]:
        """Every partition of a partitioned table, as ``{column: value}`` specs."""

    @abstractmethod
    def has_partition(self, name: str, spec: Mapping[str, str]) -> bool:
        """Whether the table holds that partition."""

    @abstractmethod
    def read(self, info: TableInfo, spec: Mapping[str, str] | None) -> Table:
        """The rows of the table (of one partition), without the partition columns."""

    @abstractmethod
    def database_location(self, name: str) -> str:
        """The location of the database the table lives (or will live) in."""

    @abstractmethod
    def create_table(self, table: TableInfo) -> None:
        """Create the Parquet table ``table`` describes, at its location."""

    @abstractmethod
    def point_table(self, name: str, location: str) -> None:
        """Point an unpartitioned table at another location (one metastore update)."""

    @abstractmethod
    def point_partition(self, name: str, spec: Mapping[str, str], location: str) -> str | None:
        """Point one partition at ``location`` (adding it when absent); its old location."""

    @abstractmethod
    def partition_location(self, name: str, spec: Mapping[str, str]) -> str | None:
        """The location of one partition, ``None`` when the table lacks it."""

    @abstractmethod
    def set_properties(self, name: str, properties: Mapping[str, str]) -> None:
        """Set table properties."""

    @abstractmethod
    def create_lock(self, lock_name: str, holder: Mapping[str, Any]) -> bool:
        """Create the lock ``lock_name`` atomically; ``False`` when someone holds it."""

    @abstractmethod
    def lock_holder(self, lock_name: str) -> str:
        """Who holds a lock, as its creator recorded it, or ``""``."""

    @abstractmethod
    def drop_lock(self, lock_name: str) -> None:
        """Release a lock."""


class Engine(ABC):
    """Backend primitives (PipelineDP's backend pattern)."""

    name = "engine"

    @abstractmethod
    def read(self, cfg: InputSpec) -> Table:
        """Read the input table as configured.

        A directory is read file by file: only the files
        :func:`sparkanon.io.select_data_files` keeps, the skipped ones named in
        the log. CSV columns come as strings, plus the column
        :data:`sparkanon.io.MALFORMED` (1 for a record whose field count differs
        from the header's; its fields are null).
        """

    @abstractmethod
    def first_malformed(self, cfg: InputSpec) -> tuple[str, int, int, int] | None:
        """Where the first malformed CSV record is: ``(file, line, fields, expected fields)``.

        Only called to word an error, after the profile counted malformed records.
        """

    @abstractmethod
    def canonical_path(self, path: str) -> str:
        """``path`` absolute, with symlinks resolved (a qualified URI off the local disk)."""

    @abstractmethod
    def schema_of(self, table: Table) -> list[tuple[str, str]]:
        """``(name, ddl_type)`` of every column."""

    def instant_zones(self, table: Table) -> dict[str, str]:
        """Columns holding instants that batches receive as naive wall-clock times, by zone.

        The local engine hands instants over tz-aware (none listed); Spark hands a
        ``TimestampType`` column over as naive times in its session time zone.
        """
        return {}

    @abstractmethod
    def with_row_id(self, table: Table, column: str) -> Table:
        """Add a unique, deterministic ``long`` row id column."""

    @abstractmethod
    def keyed_order(self, table: Table, draw: Callable[[np.ndarray], np.ndarray]) -> Table:
        """The rows of ``table`` in a keyed pseudorandom order: how a release is written.

        Each row's sort value is ``draw(h)``, ``h`` a 64-bit hash of the row's values
        (int64; the engine's own hash): the order depends on the rows' values and the
        function only, never on the rows' order in ``table``, nor on how they are split.
        Rows of equal values are equal, so their order among themselves tells nothing.
        On Spark the rows are spread over the shuffle partitions (so over the written
        part files) by their sort value and sorted by it within each partition: which
        part a row lands in is as keyed as its place in the part.

        Args:
            table: the rows.
            draw: a keyed pseudorandom function of int64 counters (one uint64 or int64
                per counter); it runs in the engine's tasks, so it must pickle.
        """

    @abstractmethod
    def with_word(
        self, table: Table, source: str, draw: Callable[[np.ndarray], np.ndarray], column: str
    ) -> Table:
        """``table`` with ``column``: ``draw`` of the int64 column ``source``, as int64.

        Args:
            table: the rows.
            source: an int64 column (a row id).
            draw: a keyed pseudorandom function of int64 counters (one uint64 or int64
                per counter); it runs in the engine's tasks, so it must pickle.
            column: the new column.
        """

    @abstractmethod
    def spread_by_word(self, table: Table, column: str) -> Table:
        """``table`` spread over partitions by the keyed word ``column``.

        On Spark a hash repartitioning by ``column`` over the session's shuffle
        partitions: which partition (part file) a row lands in is then as keyed as the
        word. Two tables spread this way and joined on ``column`` (with other keys or
        not) are joined in place, the join's output spread the same way. The local
        engine holds one partition: the table as it is.
        """

    @abstractmethod
    def in_word_order(self, table: Table, column: str) -> Table:
        """The rows sorted by the keyed word ``column`` within each partition, ``column`` dropped.

        ``table`` must be spread by ``column`` (:meth:`spread_by_word`, or a join of two
        tables spread by it): the result is then in a keyed order on every engine, which
        part file a row lands in included.
        """

    @abstractmethod
    def map_batches(self, table: Table, fn: BatchFn, schema: Columns) -> Table:
        """Apply ``fn`` to batches of rows; each batch's result is part of the output."""

    @abstractmethod
    def map_groups(
        self,
        table: Table,
        key: str,
        fn: BatchFn,
        schema: Columns,
        partitions: int | None = None,
    ) -> Table:
        """Apply ``fn`` to all rows of each value of ``key`` at once.

        Args:
            table: the rows.
            key: the group column.
            fn: the group function.
            schema: its output schema.
            partitions: how many partitions the groups are spread over (and the result
                has); ``None``: the engine's default (Spark's shuffle partitions).
        """

    @abstractmethod
    def cogroup(
        self,
        left: Table,
        left_key: str,
        right: Table,
        right_key: str,
        fn: Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame],
        schema: Columns,
        partitions: int | None = None,
    ) -> Table:
        """Apply ``fn(left rows, right rows)`` to each key present on the right.

        ``partitions``: how many partitions the keys are spread over (as in
        :meth:`map_groups`); ``None``: the engine's default.
        """

    @abstractmethod
    def join(self, left: Table, right: Table, on: Sequence[str], how: str = "inner") -> Table:
        """Join two tables on equal key columns.

        ``how``: ``inner``, ``left``, ``outer``, or ``left_anti`` (the left rows that
        match no right row).
        """

    @abstractmethod
    def union(self, first: Table, second: Table) -> Table:
        """Rows of both tables (same columns)."""

    @abstractmethod
    def where(self, table: Table, column: str, op: str, value: Any) -> Table:
        """Rows where ``column op value`` holds (``op`` in ``== != < <= > >=``).

        A null ``column`` satisfies no comparison (as in SQL), ``!=`` included.
        """

    @abstractmethod
    def select(self, table: Table, columns: Sequence[str]) -> Table:
        """Only these columns, in this order."""

    @abstractmethod
    def aggregate(
        self, table: Table, keys: Sequence[str], aggs: Mapping[str, tuple[str, str]]
    ) -> Table:
        """Group by ``keys`` and compute ``{out: (func, column)}`` per group.

        One output row per distinct combination of ``keys`` values present (a null is a
        key value of its own, as in SQL's ``GROUP BY``), in no particular order; with no
        ``keys``, exactly one row, also for an empty table. Each ``func`` of
        :data:`AGG_FUNCS` means the same on every engine, on no rows as on many:

        * ``count``: the group's rows, nulls included (SQL ``COUNT(*)``; ``column`` is
          not read); ``0`` for no rows.
        * ``sum``: the sum of the non-null values; ``0`` when there are none (no rows,
          or only nulls), where SQL gives null. ``long`` for a ``long`` column.
        * ``nunique``: how many distinct non-null values; ``0`` when there are none.
        * ``min``, ``max``, ``mean``, ``median``: over the non-null values; null when
          there are none (on the driver, after :meth:`collect_small`, a missing value:
          ``pd.isna`` holds; NaN in a ``double`` column). ``mean`` and ``median`` are
          ``double``; ``median`` of an even count is the mean of the middle two.
        * ``collect``: the list of the non-null values, in no particular order; empty
          when there are none.

        So a caller reads a ``count``, ``sum`` or ``nunique`` as a number without
        guarding it, and tests a ``min``... for missing.
        """

    @abstractmethod
    def sample(self, table: Table, fraction: float, seed: int) -> Table:
        """A deterministic Bernoulli sample of about ``fraction`` of the rows."""

    @abstractmethod
    def with_columns(self, table: Table, columns: Mapping[str, Expr]) -> Table:
        """Add (or replace) columns computed row by row, natively (no Python UDF).

        Args:
            table: the rows.
            columns: ``{name: expression}`` (:mod:`sparkanon.engine.expr`), each over the
                columns of ``table`` (not over one another), in this order after them.
        """

    @abstractmethod
    def count(self, table: Table) -> int:
        """Number of rows."""

    @abstractmethod
    def collect_small(self, table: Table, max_rows: int) -> pd.DataFrame:
        """Bring a small table of statistics to the driver.

        A ``long`` column without nulls comes as ``int64``, a ``double`` column as
        ``float64`` (a null as NaN); a null elsewhere is a missing value (``pd.isna``).

        Raises:
            InternalError: the table has more than ``max_rows`` rows (a bug:
                the pipeline only collects per-block or per-column statistics).
        """

    @abstractmethod
    def from_pandas(self, frame: pd.DataFrame, schema: Columns) -> Table:
        """A table from a small driver-side frame."""

    @abstractmethod
    def persist(self, table: Table, materialize: bool = False, disk: bool = False) -> Table:
        """Keep a table materialised for reuse.

        Args:
            table: the table.
            materialize: compute it now (inside the caller's stage timer) rather
                than at its first use.
            disk: keep it on local disk only, streamed there as it is computed, never
                held in memory whole: for tables of wide rows (whole item sets), whose
                partitions can exceed the memory a task may cache in.
        """

    @property
    def parallelism(self) -> int:
        """How many tasks run at once (the local engine runs one)."""
        return 1

    @abstractmethod
    def unpersist(self, table: Table) -> None:
        """Release a persisted table."""

    @abstractmethod
    def write_table(self, table: Table, path: str, fmt: str) -> None:
        """Write a table as Parquet or CSV (with header) into directory ``path``.

        In CSV an empty string is an empty field, as a null is: one representation on
        both engines (a relational-transaction job's empty set is the empty string).
        """

    @abstractmethod
    def read_table(self, path: str, fmt: str) -> Table:
        """Read back a table written by :meth:`write_table`.

        CSV reads every column as text, an empty field as the empty string.
        """

    @abstractmethod
    def path_exists(self, path: str) -> bool:
        """Whether a file or directory exists."""

    @abstractmethod
    def delete_path(self, path: str) -> None:
        """Delete a file or directory tree if it exists."""

    @abstractmethod
    def rename_path(self, src: str, dst: str) -> None:
        """Move ``src`` to ``dst`` (``dst`` must not exist)."""

    @abstractmethod
    def list_names(self, directory: str) -> list[str]:
        """The names of the entries of a directory (``[]`` when it does not exist)."""

    @abstractmethod
    def write_text(self, path: str, text: str) -> None:
        """Write a small text file."""

    @abstractmethod
    def is_directory(self, path: str) -> bool:
        """Whether ``path`` exists and is a directory."""

    @abstractmethod
    def make_dir(self, path: str, mode: int) -> None:
        """Create directory ``path`` (and missing parents) and give it ``mode``.

        Made before anything is written into it, so what the engine writes there later
        (with the process's umask) is out of others' reach from the start.
        """

    @abstractmethod
    def set_permissions(self, path: str, dir_mode: int, file_mode: int) -> None:
        """Give every directory under ``path`` (itself included) ``dir_mode``.

        Every file gets ``file_mode``; symbolic links are not followed. Where the
        filesystem keeps no permissions (an object store), nothing changes.
        """

    @abstractmethod
    def list_files(self, directory: str) -> list[str]:
        """The paths of every file under ``directory``, recursively, sorted (``[]``: none)."""

    @abstractmethod
    def read_chunks(self, path: str, chunk_bytes: int) -> Iterator[bytes]:
        """A file's bytes in consecutive chunks of at most ``chunk_bytes``, on the driver.

        The file is never held whole: a caller scanning for a pattern keeps the tail of
        the previous chunk.
        """

    def catalog(self) -> Catalog:
        """The catalog of persistent tables (``input.table``, ``output.table``).

        Raises:
            ConfigError: the engine has none (the local engine reads and writes files).
        """
        from sparkanon.errors import ConfigError

        raise ConfigError(
            f"input.table / output.table: catalog tables need the Spark engine; the {self.name} "
            "engine reads and writes files (drop --engine local, or use input.path / output.path)"
        )

    @contextmanager
    def stage(self, name: str, description: str | None = None) -> Iterator[None]:
        """Label the work done inside and count its distributed jobs under ``name``.

        Any name will do (the engine keeps no list of stages). The Spark UI shows the
        jobs described as ``sparkanon: <description>`` (``name`` when none is given).
        """
        yield

    def progress(self, name: str) -> tuple[int, int] | None:
        """``(tasks done, tasks in all)`` of a running stage's jobs, when the engine knows."""
        return None

    def jobs_launched(self) -> dict[str, int] | None:
        """Distributed jobs launched so far, per stage name (``None``: the engine has none)."""
        return None
