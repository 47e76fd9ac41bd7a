"""The Spark engine: the only module of sparkanon that imports pyspark.

Batch and group functions run in pandas UDFs (``mapInPandas``,
``applyInPandas``, cogrouped ``applyInPandas``); aggregations are Spark
aggregations, so partial results combine before the shuffle. File moves go
through the Hadoop FileSystem API, so commit-by-rename works on any filesystem
Spark can write to.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.types import StringType, StructField, StructType

from sparkanon.engine import expr as ex
from sparkanon.engine.base import BatchFn, Catalog, Columns, Engine, InputSpec
from sparkanon.engine.sql import quote_identifier
from sparkanon.errors import ConfigError, InputError, InternalError, StatisticsOverflowError
from sparkanon.io import (
    MALFORMED,
    CsvDialect,
    canonical_local,
    csv_field_count,
    data_files_of,
    empty_csv_file,
    list_local_files,
    local_path,
)
from sparkanon.safety import restrict_local_tree

_CORRUPT = "_sparkanon_corrupt_record"

_SPARK_TO_DDL = {
    "bigint": "long",
    "int": "long",
    "smallint": "long",
    "tinyint": "long",
    "double": "double",
    "float": "double",
    "boolean": "boolean",
    "date": "date",
    "timestamp": "timestamp",
}


def _ddl_of(spark_type: str) -> str:
    """Our DDL name of a Spark type.

    ``long``, ``double``, ``boolean``, ``date``, ``timestamp`` (an instant); an array type
    as it is (``array<string>``); anything else ``string``.
    """
    if spark_type.startswith("array<"):
        return spark_type
    return _SPARK_TO_DDL.get(spark_type, "string")


def _ddl(schema: Columns) -> str:
    return ", ".join(f"{quote_identifier(n)} {t}" for n, t in schema)


def _conform(frame: pd.DataFrame, schema: Columns) -> pd.DataFrame:
    names = [n for n, _ in schema]
    out = frame[names].copy()
    for name, ddl in schema:
        if ddl == "long":
            out[name] = out[name].astype("int64")
        elif ddl == "double":
            out[name] = out[name].astype("float64")
        elif ddl == "string":
            out[name] = out[name].astype(object).where(out[name].notna(), None)
        elif ddl == "timestamp":  # instants, handed to Arrow in UTC
            out[name] = pd.to_datetime(out[name], utc=True)
    return out


def _empty(schema: Columns) -> pd.DataFrame:
    dtypes = {
        "long": "int64",
        "double": "float64",
        "boolean": "bool",
        "string": "object",
        "date": "object",
        "timestamp": "datetime64[us, UTC]",
    }
    return pd.DataFrame({n: pd.Series(dtype=dtypes[t]) for n, t in schema})


_AGGREGATIONS: dict[str, Callable[[Any], Any]] = {
    "count": lambda c: F.count(F.lit(1)),
    "sum": lambda c: F.coalesce(F.sum(c), F.lit(0)),  # 0, not null, for no values
    "min": F.min,
    "max": F.max,
    "mean": F.avg,
    "nunique": F.countDistinct,
    "median": F.median,
    "collect": F.collect_list,
}
"""Each aggregation of :data:`~sparkanon.engine.base.AGG_FUNCS` as a Spark one."""


def _aggregation(func: str, column: str) -> Any:
    """The Spark aggregation ``func`` of a column (:meth:`Engine.aggregate` semantics)."""
    return _AGGREGATIONS[func](F.col(quote_identifier(column)))


def _column(expr: ex.Expr) -> Any:
    """An engine expression (:mod:`sparkanon.engine.expr`) as a Spark column."""
    if isinstance(expr, ex.Col):
        return F.col(quote_identifier(expr.name))
    if isinstance(expr, ex.Lit):
        integral = isinstance(expr.value, (int, np.integer))
        return F.lit(int(expr.value)).cast("long") if integral else F.lit(float(expr.value))
    if isinstance(expr, ex.Arith):
        left, right = _column(expr.left), _column(expr.right)
        if expr.op == "//":  # integral and exact for any long, rounded down as Python's
            a, b = left.cast("long"), right.cast("long")
            quotient = F.call_function("div", a, b)  # rounds toward zero
            down = (a % b != 0) & ((a < 0) != (b < 0))
            return F.when(down, quotient - 1).otherwise(quotient)
        if expr.op == "%":  # integral, exact for any long (no detour through a double)
            return F.pmod(left.cast("long"), right.cast("long"))
        return {"+": left + right, "-": left - right, "*": left * right}[expr.op]
    if isinstance(expr, ex.Floor):
        return F.floor(_column(expr.arg)).cast("long")
    if isinstance(expr, ex.Clip):
        return F.least(F.greatest(_column(expr.arg), F.lit(expr.low)), F.lit(expr.high))
    if isinstance(expr, ex.Lookup):
        values = F.array(*[F.lit(int(v)) for v in expr.values])
        return F.element_at(values, _column(expr.index).cast("int") + F.lit(1)).cast("long")
    if isinstance(expr, ex.Text):
        texts = F.array(*[F.lit(str(v)) for v in expr.values]).cast("array<string>")
        return F.element_at(texts, _column(expr.index).cast("int") + F.lit(1))
    if isinstance(expr, ex.When):
        holds = ex.COMPARISONS[expr.op](_column(expr.left), _column(expr.right))
        return F.when(holds, _column(expr.then)).otherwise(_column(expr.otherwise))
    raise InternalError(f"not an expression: {expr!r}")


def _batch_runner(
    fn: BatchFn, schema: Columns
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            yield _conform(fn(batch), schema)

    return run


class SparkEngine(Engine):
    """Spark implementation of :class:`~sparkanon.engine.base.Engine`.

    Args:
        spark: the session to run on.
    """

    name = "spark"

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self._run = uuid.uuid4().hex[:12]
        self._jobs: dict[str, int] = {}
        # A Spark Connect session has no SparkContext and no JVM gateway in this process.
        self.connect = type(spark).__module__.startswith("pyspark.sql.connect")

    @contextmanager
    def stage(self, name: str, description: str | None = None) -> Iterator[None]:
        """Label the Spark jobs started inside with the stage's description and count them.

        The jobs run in a job group of their own (``sparkanon-<run>-<name>``) described
        as ``sparkanon: <description>`` (the name when none is given), so the Spark UI
        shows which step runs, and Spark's status tracker tells how many jobs the stage
        launched; any name will do. A stage inside another one gives the outer stage its
        group back when it ends. Under Spark Connect the jobs carry the group as a tag
        instead (the server's UI lists it) and are not counted.
        """
        group = f"sparkanon-{self._run}-{name}"
        if self.connect:
            self.spark.addTag(group)
            try:
                yield
            finally:
                self.spark.removeTag(group)
            return
        sc = self.spark.sparkContext
        outer_group = sc.getLocalProperty("spark.jobGroup.id")
        outer_description = sc.getLocalProperty("spark.job.description")
        sc.setJobGroup(group, f"sparkanon: {description or name}")
        try:
            yield
        finally:
            launched = len(sc.statusTracker().getJobIdsForGroup(group))
            self._jobs[name] = launched
            sc.setLocalProperty("spark.jobGroup.id", outer_group)  # type: ignore[arg-type]
            sc.setJobDescription(outer_description)  # type: ignore[arg-type]

    def progress(self, name: str) -> tuple[int, int] | None:
        """``(tasks done, tasks in all)`` of the stage's running jobs so far, if known."""
        if self.connect:
            return None
        tracker = self.spark.sparkContext.statusTracker()
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(f"sparkanon-{self._run}-{name}"):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else ():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
        return done, total

    def jobs_launched(self) -> dict[str, int] | None:  # noqa: D102
        return None if self.connect else dict(self._jobs)

    def catalog(self) -> Catalog:  # noqa: D102
        from sparkanon.engine.catalog import SparkCatalog

        return SparkCatalog(self.spark)

    def read(self, cfg: InputSpec) -> DataFrame:  # noqa: D102
        files, root = self._input_files(cfg)
        if cfg.format == "csv":
            self._refuse_empty_files(cfg, files, root)
        # A session setting (Spark has no per-read option for it), read when a scan is
        # planned; sparkanon's own job session keeps it for the job's later scans.
        if cfg.max_split_bytes is not None:
            self.spark.conf.set("spark.sql.files.maxPartitionBytes", str(cfg.max_split_bytes))
        reader = self.spark.read
        if root is not None:
            reader = reader.option("basePath", root)
        if cfg.format != "csv":
            opts = {k: str(v) for k, v in cfg.options.items()}
            return reader.options(**opts).format(cfg.format).load(files)
        options = {"header": "true", "inferSchema": "false", "ignoreLeadingWhiteSpace": "true"}
        options.update(
            {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in cfg.options.items()}
        )
        header = self.spark.read.options(**options).csv(files)
        if cfg.columns:
            if len(cfg.columns) != len(header.columns):
                raise InputError(
                    f"input.columns: {len(cfg.columns)} names given but the file has "
                    f"{len(header.columns)} columns"
                )
            names = list(cfg.columns)
        else:
            names = header.columns
        schema = StructType(
            [StructField(n, StringType()) for n in names] + [StructField(_CORRUPT, StringType())]
        )
        options.update({"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT})
        # With column pruning the CSV parser tokenises only the selected columns and
        # does not see that a record has too many or too few fields.
        self.spark.conf.set("spark.sql.csv.parser.columnPruning.enabled", "false")
        df = reader.options(**options).schema(schema).csv(files)
        # Spark refuses a query on a raw CSV file that reads only the corrupt-record
        # column (counting the rows where ``_malformed == 0``): the flag also reads the first
        # column, in a test that always holds, so every query reading it reads a data column.
        flag = F.col(_CORRUPT).isNotNull()
        if names:  # an empty file has no column (and is refused by the profile)
            flag = flag & (F.length(F.coalesce(F.col(quote_identifier(names[0])), F.lit(""))) >= 0)
        # A malformed record's fields are null, as the local engine reads them.
        fields = [F.when(~flag, F.col(quote_identifier(n))).alias(n) for n in names]
        return df.select(*fields, flag.cast("long").alias(MALFORMED))

    def _input_files(self, cfg: InputSpec) -> tuple[list[str], str | None]:
        """The data files to read and, for a directory, its qualified path (Spark's basePath)."""
        fs, jpath = self._fs(cfg.path)
        if not fs.exists(jpath):
            raise InputError(f"input.path: {cfg.path!r} does not exist")
        if not fs.getFileStatus(jpath).isDirectory():
            return [cfg.path], None
        root = str(fs.makeQualified(jpath).toString()).rstrip("/")
        found, it = [], fs.listFiles(jpath, True)
        while it.hasNext():
            name = str(it.next().getPath().toString())
            found.append(name[len(root) + 1 :] if name.startswith(root + "/") else name)
        data = data_files_of(cfg.path, found, cfg.format, cfg.glob)
        return [f"{root}/{rel}" for rel in data], root

    def _refuse_empty_files(self, cfg: InputSpec, files: list[str], root: str | None) -> None:
        """A CSV file of 0 bytes has no header: name it, as the local engine does.

        Spark would read it as a table without columns (only the reader's own), and the
        job would then report every configured column missing instead.
        """
        for f in files:
            fs, jpath = self._fs(f)
            if fs.getFileStatus(jpath).getLen() == 0:
                shown = cfg.path if root is None else cfg.path.rstrip("/") + f[len(root) :]
                raise empty_csv_file(shown)

    def first_malformed(self, cfg: InputSpec) -> tuple[str, int, int, int] | None:  # noqa: D102
        if self.connect:  # reading lines by index needs the RDD API
            return None
        dialect = CsvDialect.from_options(cfg.options)
        width = len(self.read(cfg).columns) - 1
        files, _ = self._input_files(cfg)
        sc = self.spark.sparkContext

        def bad_lines(part: Iterator[tuple[str, int]]) -> Iterator[tuple[int, int]]:
            for line, index in part:
                fields = csv_field_count(line, dialect)
                if fields not in (0, width):
                    yield index, fields

        for f in files:
            hits = sc.textFile(f).zipWithIndex().mapPartitions(bad_lines).takeOrdered(1)
            if hits:
                index, fields = hits[0]
                return f, index + 1, fields, width
        return None

    def canonical_path(self, path: str) -> str:  # noqa: D102
        if self.connect:
            local = local_path(path)
            return canonical_local(local) if local is not None else path.rstrip("/")
        fs, jpath = self._fs(path)
        qualified = str(fs.makeQualified(jpath).toString())
        local = local_path(qualified) if qualified.startswith("file:") else None
        return canonical_local(local) if local is not None else qualified.rstrip("/")

    def schema_of(self, table: DataFrame) -> list[tuple[str, str]]:  # noqa: D102
        return [(f.name, _ddl_of(f.dataType.simpleString())) for f in table.schema.fields]

    def instant_zones(self, table: DataFrame) -> dict[str, str]:
        """``TimestampType`` columns: Arrow hands them to batches as session-zone wall clock."""
        zone = self.spark.conf.get("spark.sql.session.timeZone", "UTC") or "UTC"
        return {
            f.name: zone for f in table.schema.fields if f.dataType.simpleString() == "timestamp"
        }

    def with_row_id(self, table: DataFrame, column: str) -> DataFrame:
        """Row ids ``0 .. n - 1`` in the input's order, whatever Spark's split of it.

        Spark's own ``monotonically_increasing_id`` puts the partition index in the high
        bits, so its values change with the split (file sizes, ``maxPartitionBytes``,
        the core count), and with them everything keyed by a row id (the noise of a
        perturbed release). For a table read from files (``_metadata`` resolves) the id
        is the row's position in the input as the local engine numbers it: files in path
        order, rows in file order. One small aggregation counts the rows of each split
        (file, block start) and the driver turns the counts into offsets; a split's
        rows are consecutive in its partition, so a row's id is its split's offset plus
        its place in the split. A table not read from files (an in-memory frame, a view)
        keeps Spark's id: unique and in partition order, but split-dependent.
        """
        try:
            meta = table.metadataColumn("_metadata")
        except Exception:  # noqa: BLE001 - not a file scan: AnalysisException, or Connect's
            return table.withColumn(column, F.monotonically_increasing_id())
        place, file, block, shift = (f"_sparkanon_{n}" for n in ("place", "file", "block", "shift"))
        located = table.select(
            "*",
            meta.getField("file_path").alias(file),
            meta.getField("file_block_start").alias(block),
            F.monotonically_increasing_id().alias(place),
        )
        # One Spark job of the caller's stage (``read``): per-split counts, never rows.
        splits = (
            located.groupBy(file, block)
            .agg(F.count(F.lit(1)).alias("rows"), F.min(place).alias("first"))
            .collect()
        )
        offsets, seen = [], 0
        for split in sorted(splits, key=lambda r: (r[file], r[block])):
            offsets.append((split[file], split[block], seen - split["first"]))
            seen += split["rows"]
        schema = ", ".join(
            f"{quote_identifier(n)} {t}"
            for n, t in ((file, "string"), (block, "long"), (shift, "long"))
        )
        shifts = self.spark.createDataFrame(offsets, schema)
        return (
            located.join(F.broadcast(shifts), [file, block])
            .withColumn(column, F.col(place) + F.col(shift))
            .drop(file, block, place, shift)
        )

    def keyed_order(self, table: DataFrame, draw: Callable[[np.ndarray], np.ndarray]) -> DataFrame:
        """Rows sorted by ``draw`` of their ``xxhash64``, spread over partitions by it.

        The hash is Spark's own (native, deterministic: a task retried computes the
        same values), and only that one column goes through Python, to ``draw``. One
        shuffle: hash partitioning by the keyed value (the shuffle partitions), then a
        sort within each partition; no sampling job as a global sort would need. Part
        files then hold rows chosen by the keyed value, in its order.
        """
        column, hashed = "_sparkanon_order", "_sparkanon_row_hash"
        row_hash = F.xxhash64(*[F.col(quote_identifier(c)) for c in table.columns])
        words = self.with_word(table.withColumn(hashed, row_hash), hashed, draw, column)
        return self.in_word_order(self.spread_by_word(words.drop(hashed), column), column)

    def with_word(  # noqa: D102
        self, table: DataFrame, source: str, draw: Callable[[np.ndarray], np.ndarray], column: str
    ) -> DataFrame:
        def keyed(values: pd.Series) -> pd.Series:
            words = np.asarray(draw(values.to_numpy(dtype=np.int64)))
            return pd.Series(words.view(np.int64))

        # Marked nondeterministic (it is not: a retried task draws the same words) so the
        # optimizer computes it once: a filter it infers on a join key built from it
        # (``isnotnull``) would otherwise be pushed below the projection as a second call.
        keyed_udf = F.pandas_udf(keyed, "long").asNondeterministic()
        return table.withColumn(column, keyed_udf(F.col(quote_identifier(source))))

    def spread_by_word(self, table: DataFrame, column: str) -> DataFrame:  # noqa: D102
        partitions = int(self.spark.conf.get("spark.sql.shuffle.partitions") or 200)
        return table.repartition(partitions, F.col(quote_identifier(column)))

    def in_word_order(self, table: DataFrame, column: str) -> DataFrame:  # noqa: D102
        word = F.col(quote_identifier(column))
        return table.sortWithinPartitions(word).drop(word)

    def map_batches(self, table: DataFrame, fn: BatchFn, schema: Columns) -> DataFrame:  # noqa: D102
        return table.mapInPandas(_batch_runner(fn, schema), _ddl(schema))

    def map_groups(  # noqa: D102
        self,
        table: DataFrame,
        key: str,
        fn: BatchFn,
        schema: Columns,
        partitions: int | None = None,
    ) -> DataFrame:
        def run(frame: pd.DataFrame) -> pd.DataFrame:
            return _conform(fn(frame), schema)

        if partitions is not None:  # the grouping reuses this hash partitioning: one shuffle
            table = table.repartition(partitions, key)
        return table.groupBy(key).applyInPandas(run, _ddl(schema))

    def cogroup(  # noqa: D102
        self,
        left: DataFrame,
        left_key: str,
        right: DataFrame,
        right_key: str,
        fn: Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame],
        schema: Columns,
        partitions: int | None = None,
    ) -> DataFrame:
        key = "_cogroup_key"

        def run(lrows: pd.DataFrame, rrows: pd.DataFrame) -> pd.DataFrame:
            if len(rrows) == 0:
                return _empty(schema)
            lrows = lrows.rename(columns={key: left_key})
            rrows = rrows.rename(columns={key: right_key})
            return _conform(fn(lrows, rrows), schema)

        left, right = left.withColumnRenamed(left_key, key), right.withColumnRenamed(right_key, key)
        if partitions is not None:  # the grouping reuses this hash partitioning: one shuffle
            left, right = left.repartition(partitions, key), right.repartition(partitions, key)
        lgroups, rgroups = left.groupBy(key), right.groupBy(key)
        return lgroups.cogroup(rgroups).applyInPandas(run, _ddl(schema))

    def join(
        self, left: DataFrame, right: DataFrame, on: Sequence[str], how: str = "inner"
    ) -> DataFrame:  # noqa: D102
        return left.join(right, on=list(on), how=how)

    def union(self, first: DataFrame, second: DataFrame) -> DataFrame:  # noqa: D102
        return first.unionByName(second)

    def where(self, table: DataFrame, column: str, op: str, value: Any) -> DataFrame:  # noqa: D102
        return table.where(ex.COMPARISONS[op](F.col(quote_identifier(column)), F.lit(value)))

    def select(self, table: DataFrame, columns: Sequence[str]) -> DataFrame:  # noqa: D102
        return table.select(*[F.col(quote_identifier(c)) for c in columns])

    def aggregate(  # noqa: D102
        self, table: DataFrame, keys: Sequence[str], aggs: Mapping[str, tuple[str, str]]
    ) -> DataFrame:
        exprs = [_aggregation(func, column).alias(out) for out, (func, column) in aggs.items()]
        if keys:
            return table.groupBy(*[F.col(quote_identifier(k)) for k in keys]).agg(*exprs)
        return table.agg(*exprs)

    def sample(self, table: DataFrame, fraction: float, seed: int) -> DataFrame:  # noqa: D102
        return table.sample(withReplacement=False, fraction=fraction, seed=seed)

    def with_columns(  # noqa: D102
        self, table: DataFrame, columns: Mapping[str, ex.Expr]
    ) -> DataFrame:
        return table.withColumns({name: _column(expr) for name, expr in columns.items()})

    def count(self, table: DataFrame) -> int:  # noqa: D102
        return table.count()

    def collect_small(self, table: DataFrame, max_rows: int) -> pd.DataFrame:  # noqa: D102
        rows = table.limit(max_rows + 1).collect()
        if len(rows) > max_rows:
            raise StatisticsOverflowError(
                f"refusing to collect more than {max_rows} rows of statistics"
            )
        frame = pd.DataFrame([r.asDict() for r in rows], columns=table.columns)
        for name, ddl in self.schema_of(table):
            if ddl == "double":  # a null as NaN, as a float column holds it locally
                frame[name] = frame[name].astype("float64")
        return frame

    def from_pandas(self, frame: pd.DataFrame, schema: Columns) -> DataFrame:  # noqa: D102
        conformed = _conform(frame, schema)
        return self.spark.createDataFrame(conformed, schema=_ddl(schema))

    def persist(  # noqa: D102
        self, table: DataFrame, materialize: bool = False, disk: bool = False
    ) -> DataFrame:
        from pyspark import StorageLevel

        table = table.persist(StorageLevel.DISK_ONLY) if disk else table.persist()
        if materialize:
            table.count()
        return table

    @property
    def parallelism(self) -> int:  # noqa: D102
        if self.connect:
            configured = self.spark.conf.get("spark.default.parallelism", None)
            return int(configured) if configured else 2
        return int(self.spark.sparkContext.defaultParallelism)

    def unpersist(self, table: DataFrame) -> None:  # noqa: D102
        table.unpersist()

    def write_table(self, table: DataFrame, path: str, fmt: str) -> None:
        """Write ``table`` to ``path`` (a new directory).

        Parquet timestamps are written as INT64 microseconds adjusted to UTC, the type
        the local engine writes, whatever session the engine was given (Spark's default,
        INT96, reads back as a zone-less nanosecond timestamp): a session setting, as
        Spark has no writer option for it.
        """
        writer = table.write.mode("error")
        if fmt == "parquet":
            self.spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
            writer.parquet(path)
        else:  # an empty string is an empty field, as a null is (Spark's default is "")
            writer.option("header", "true").option("emptyValue", "").csv(path)

    def read_table(self, path: str, fmt: str) -> DataFrame:  # noqa: D102
        if fmt == "parquet":
            return self.spark.read.parquet(path)
        # Every column is text; an empty field reads as "" (Spark's reader gives a null).
        return self.spark.read.option("header", "true").csv(path).na.fill("")

    def _fs(self, path: str) -> tuple[Any, Any]:
        """The Hadoop FileSystem of ``path`` and the path, through the JVM gateway.

        Under Spark Connect there is no gateway in this process: the file steps run on
        this machine's filesystem (:class:`_ClientFiles`), so the paths must be local
        ones that the server sees too (the same machine or a shared mount).
        """
        if self.connect:
            local = local_path(path)
            if local is None:
                raise ConfigError(
                    f"{path!r}: under Spark Connect, sparkanon moves and lists files from the "
                    "client, which reaches local paths only; use a local or mounted path, or "
                    "run the job with spark-submit"
                )
            return _ClientFiles(), _ClientPath(local)
        jvm = self.spark._jvm  # noqa: SLF001
        jpath = jvm.org.apache.hadoop.fs.Path(path)
        conf = self.spark._jsc.hadoopConfiguration()  # noqa: SLF001
        return jpath.getFileSystem(conf), jpath

    def path_exists(self, path: str) -> bool:  # noqa: D102
        fs, jpath = self._fs(path)
        return bool(fs.exists(jpath))

    def delete_path(self, path: str) -> None:  # noqa: D102
        fs, jpath = self._fs(path)
        if fs.exists(jpath):
            fs.delete(jpath, True)

    def rename_path(self, src: str, dst: str) -> None:  # noqa: D102
        fs, jsrc = self._fs(src)
        _, jdst = self._fs(dst)
        parent = jdst.getParent()
        if parent is not None and not fs.exists(parent):
            fs.mkdirs(parent)
        if not fs.rename(jsrc, jdst):
            raise InternalError(f"could not move {src!r} to {dst!r}")

    def list_names(self, directory: str) -> list[str]:  # noqa: D102
        fs, jpath = self._fs(directory)
        if not fs.exists(jpath):
            return []
        return sorted(str(st.getPath().getName()) for st in fs.listStatus(jpath))

    def write_text(self, path: str, text: str) -> None:  # noqa: D102
        fs, jpath = self._fs(path)
        stream = fs.create(jpath, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def _local_of(self, path: str) -> str | None:
        """The local path of ``path`` when it is on this machine's disk (else ``None``)."""
        if self.connect:
            return local_path(path)
        fs, jpath = self._fs(path)
        qualified = str(fs.makeQualified(jpath).toString())
        return local_path(qualified) if qualified.startswith("file:") else None

    def is_directory(self, path: str) -> bool:  # noqa: D102
        fs, jpath = self._fs(path)
        return bool(fs.exists(jpath)) and bool(fs.getFileStatus(jpath).isDirectory())

    def _permission(self, mode: int) -> Any:
        jvm = self.spark._jvm  # noqa: SLF001
        return jvm.org.apache.hadoop.fs.permission.FsPermission(f"{mode:o}")

    def make_dir(self, path: str, mode: int) -> None:
        """Create ``path`` with ``mode``.

        By ``os`` on a local disk, else by Hadoop's ``mkdirs`` and ``setPermission`` (a
        no-op on object stores).
        """
        local = self._local_of(path)
        if local is not None:
            os.makedirs(local, mode=mode, exist_ok=True)
            os.chmod(local, mode)
            return
        fs, jpath = self._fs(path)
        fs.mkdirs(jpath)
        fs.setPermission(jpath, self._permission(mode))

    def set_permissions(self, path: str, dir_mode: int, file_mode: int) -> None:
        """Set the modes of a tree.

        By ``os`` on a local disk (Spark's ``.crc`` files included, which Hadoop's local
        listing hides), else by Hadoop's ``setPermission``.
        """
        local = self._local_of(path)
        if local is not None:
            restrict_local_tree(local, dir_mode, file_mode)
            return
        fs, jpath = self._fs(path)
        if not fs.exists(jpath):
            return
        dirs, files = self._permission(dir_mode), self._permission(file_mode)
        pending = [fs.getFileStatus(jpath)]
        while pending:
            status = pending.pop()
            if status.isDirectory():
                fs.setPermission(status.getPath(), dirs)
                pending.extend(fs.listStatus(status.getPath()))
            elif not status.isSymlink():
                fs.setPermission(status.getPath(), files)

    def list_files(self, directory: str) -> list[str]:  # noqa: D102
        fs, jpath = self._fs(directory)
        if not fs.exists(jpath):
            return []
        found = fs.listFiles(jpath, True)
        paths = []
        while found.hasNext():
            paths.append(str(found.next().getPath().toString()))
        return sorted(paths)

    def read_chunks(self, path: str, chunk_bytes: int) -> Iterator[bytes]:
        """The file's bytes in chunks: read by Python when the file is on this machine.

        A file of the local filesystem (under Spark Connect, or Hadoop's ``file`` scheme)
        is read directly, not copied through the JVM gateway (``docs/benchmarks.md``
        section 18.4 measures the copy at most of the 10M perturbation job's release
        checks); any other file through its Hadoop stream.
        """
        fs, jpath = self._fs(path)
        if self.connect or str(fs.getScheme()) == "file":
            local = _text(jpath) if self.connect else str(fs.makeQualified(jpath).toUri().getPath())
            with open(local, "rb") as handle:
                while chunk := handle.read(chunk_bytes):
                    yield chunk
            return
        left = int(fs.getFileStatus(jpath).getLen())
        copy = self.spark._jvm.org.apache.commons.io.IOUtils.toByteArray  # noqa: SLF001
        stream = fs.open(jpath)
        try:
            while left > 0:
                size = min(chunk_bytes, left)
                yield bytes(copy(stream, size))
                left -= size
        finally:
            stream.close()


class _ClientFiles:
    """The Hadoop FileSystem calls the engine makes, on this machine's filesystem.

    Used under Spark Connect (no JVM in the client). Paths are local path strings.
    """

    def exists(self, path: Any) -> bool:
        path = _text(path)
        return os.path.exists(path)

    def delete(self, path: Any, recursive: bool) -> bool:
        path = _text(path)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
        return True

    def rename(self, src: Any, dst: Any) -> bool:
        src, dst = _text(src), _text(dst)
        if os.path.exists(dst):
            return False
        os.rename(src, dst)
        return True

    def mkdirs(self, path: Any) -> bool:
        path = _text(path)
        os.makedirs(path, exist_ok=True)
        return True

    def getFileStatus(self, path: Any) -> Any:  # noqa: N802 - Hadoop's name
        path = _text(path)
        return _ClientStatus(path)

    def makeQualified(self, path: Any) -> Any:  # noqa: N802
        path = _text(path)
        return _ClientPath(canonical_local(path))

    def listStatus(self, path: Any) -> list[Any]:  # noqa: N802
        path = _text(path)
        return [_ClientStatus(os.path.join(path, n)) for n in sorted(os.listdir(path))]

    def listFiles(self, path: Any, recursive: bool) -> Any:  # noqa: N802
        path = _text(path)
        files = [os.path.join(path, rel) for rel in list_local_files(Path(path))]
        return _ClientIterator([_ClientStatus(f) for f in files])

    def create(self, path: Any, overwrite: bool) -> Any:
        path = _text(path)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return open(path, "wb")  # noqa: SIM115 - closed by the caller


class _ClientPath:
    def __init__(self, path: str) -> None:
        self.path = path

    def toString(self) -> str:  # noqa: N802
        return self.path

    def getName(self) -> str:  # noqa: N802
        return os.path.basename(self.path.rstrip("/"))

    def getParent(self) -> _ClientPath:  # noqa: N802
        return _ClientPath(os.path.dirname(self.path.rstrip("/")))


class _ClientStatus:
    def __init__(self, path: str) -> None:
        self.path = path

    def isDirectory(self) -> bool:  # noqa: N802
        return os.path.isdir(self.path)

    def getLen(self) -> int:  # noqa: N802
        return 0 if os.path.isdir(self.path) else os.path.getsize(self.path)

    def getPath(self) -> _ClientPath:  # noqa: N802
        return _ClientPath(self.path)


class _ClientIterator:
    def __init__(self, items: list[Any]) -> None:
        self.items = list(items)

    def hasNext(self) -> bool:  # noqa: N802
        return bool(self.items)

    def next(self) -> Any:
        return self.items.pop(0)


def _text(path: Any) -> str:
    """A client path as text (a :class:`_ClientPath` or a string)."""
    return path.path if isinstance(path, _ClientPath) else str(path)
