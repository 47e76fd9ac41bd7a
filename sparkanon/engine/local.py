"""The local engine: every primitive on pandas, in one process.

It runs the same pure functions as the Spark engine, so tests of the pipeline
run here in milliseconds and parity tests compare the two. The "batches" of
:meth:`LocalEngine.map_batches` are slices of ``batch_rows`` rows, so per-batch
accumulators are exercised as on Spark.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.engine import expr as ex
from sparkanon.engine.base import BatchFn, Columns, Engine, InputSpec
from sparkanon.errors import InputError, InternalError, StatisticsOverflowError
from sparkanon.io import (
    MALFORMED,
    CsvDialect,
    canonical_local,
    csv_records,
    data_files_of,
    empty_csv_file,
    list_local_files,
    local_path,
    read_columnar,
    write_parquet,
)
from sparkanon.safety import restrict_local_tree

_PANDAS_TYPES = {"long": "int64", "double": "float64", "string": "object", "boolean": "bool"}
_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply}
_ORDER = "_sparkanon_order"
"""The column :meth:`LocalEngine.keyed_order` sorts by (dropped after the sort)."""


def _conform(frame: pd.DataFrame, schema: Columns) -> pd.DataFrame:
    names = [n for n, _ in schema]
    missing = [n for n in names if n not in frame.columns]
    if missing:
        raise InternalError(f"a step returned no column(s) {missing}")
    out = frame[names].copy()
    for name, ddl in schema:
        if ddl in ("string", "binary", "date") or ddl.startswith("array<"):
            out[name] = out[name].astype(object).where(out[name].notna(), None)
        elif ddl == "timestamp":  # instants in UTC, at Spark's (and Parquet's) microseconds
            out[name] = pd.to_datetime(out[name], utc=True).dt.as_unit("us")
        else:
            out[name] = out[name].astype(_PANDAS_TYPES[ddl])
    return out.reset_index(drop=True)


def _collect(values: pd.Series) -> list[Any]:
    """The non-null values of a group, as a list."""
    return list(values.dropna())


_GROUP_FUNCS: dict[str, Any] = {"count": "size", "collect": _collect}
"""pandas' names of the aggregations that differ from ours (``count`` counts rows)."""


def _reduce(values: pd.Series, func: str) -> Any:
    """One aggregation of a whole column, as :meth:`Engine.aggregate` defines it."""
    if func == "count":
        return len(values)
    if func == "collect":
        return _collect(values)
    if func in ("min", "max", "mean", "median") and values.notna().sum() == 0:
        return np.nan
    return getattr(values, func)()


def _evaluate(expr: ex.Expr, table: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """An expression's values on the rows at positions ``rows`` of ``table``.

    A :class:`~sparkanon.engine.expr.When` evaluates each branch on the rows that take it only.
    """
    if isinstance(expr, ex.Col):
        column = table[expr.name]
        if isinstance(column.dtype, pd.DatetimeTZDtype):  # keep the unit and the zone
            return column.array.take(rows)
        return column.to_numpy()[rows]
    if isinstance(expr, ex.Lit):
        dtype = np.int64 if isinstance(expr.value, (int, np.integer)) else np.float64
        return np.full(len(rows), expr.value, dtype=dtype)
    if isinstance(expr, ex.Arith):
        left = _evaluate(expr.left, table, rows)
        right = _evaluate(expr.right, table, rows)
        if expr.op == "//":
            return np.floor_divide(left, right).astype(np.int64)
        if expr.op == "%":
            return np.mod(left, right).astype(np.int64)
        return _ARITH[expr.op](left, right)
    if isinstance(expr, ex.Floor):
        arg = _evaluate(expr.arg, table, rows)
        return arg.astype(np.int64) if arg.dtype.kind in "iu" else np.floor(arg).astype(np.int64)
    if isinstance(expr, ex.Clip):
        return np.clip(_evaluate(expr.arg, table, rows), expr.low, expr.high)
    if isinstance(expr, ex.Lookup):
        index = _evaluate(expr.index, table, rows).astype(np.int64)
        return np.asarray(expr.values, dtype=np.int64)[index]
    if isinstance(expr, ex.Text):
        index = _evaluate(expr.index, table, rows).astype(np.int64)
        return np.asarray(expr.values, dtype=object)[index]
    if isinstance(expr, ex.When):
        holds = np.asarray(
            ex.COMPARISONS[expr.op](
                _evaluate(expr.left, table, rows), _evaluate(expr.right, table, rows)
            ),
            dtype=bool,
        )
        then = _evaluate(expr.then, table, rows[holds])
        otherwise = _evaluate(expr.otherwise, table, rows[~holds])
        out = np.empty(len(rows), dtype=np.result_type(then, otherwise))
        out[holds] = then
        out[~holds] = otherwise
        return out
    raise InternalError(f"not an expression: {expr!r}")


def _holds_arrays(column: pd.Series) -> bool:
    """Whether an object column holds lists or arrays (judged by its first non-null value)."""
    if column.dtype != object:
        return False
    head = column.iloc[:64]  # most columns hold a value early: no scan of the whole column
    present = head.dropna()
    if len(present) == 0 and len(column) > len(head):
        present = column.dropna()
    return len(present) > 0 and isinstance(present.iloc[0], (list, tuple, np.ndarray))


def _row_hashes(table: pd.DataFrame) -> np.ndarray:
    """A 64-bit hash of each row's values (int64), whatever the row's position.

    pandas' hash of every column, combined per row; a column pandas cannot hash as it is
    (lists, or objects of mixed types) is hashed as the text of its values.
    """
    columns = {}
    for name in table.columns:
        column = table[name]
        try:
            columns[name] = pd.util.hash_pandas_object(column, index=False).to_numpy()
        except TypeError:
            columns[name] = pd.util.hash_pandas_object(column.astype(str), index=False).to_numpy()
    hashed = pd.util.hash_pandas_object(pd.DataFrame(columns), index=False)
    return hashed.to_numpy(dtype=np.uint64).view(np.int64)


def _ddl_of(dtype: Any) -> str:
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "long"
    if pd.api.types.is_float_dtype(dtype):
        return "double"
    return "string"


class LocalEngine(Engine):
    """pandas implementation of :class:`~sparkanon.engine.base.Engine`.

    Args:
        batch_rows: rows per batch in :meth:`map_batches`.
    """

    name = "local"

    def __init__(self, batch_rows: int = 10_000) -> None:
        self.batch_rows = batch_rows
        # Decimal columns of the files read, by name: pandas holds their values as Python
        # Decimals, which carry no precision, so a kept decimal column is written back with
        # the input's type (as Spark keeps it) rather than the one its values suggest.
        self._decimal_types: dict[str, Any] = {}

    def read(self, cfg: InputSpec) -> pd.DataFrame:  # noqa: D102
        frames = []
        for f in self._input_files(cfg):
            if cfg.format == "csv":
                if f.stat().st_size == 0:
                    raise empty_csv_file(str(f))
                frames.append(
                    csv_records(f, CsvDialect.from_options(cfg.options), cfg.columns).frame
                )
            else:
                frames.append(read_columnar(f, cfg.format, self._decimal_types))
        frame = pd.concat(frames, ignore_index=True)
        if cfg.format == "csv":
            frame[MALFORMED] = frame[MALFORMED].fillna(0).astype("int64")
        return frame

    def _input_files(self, cfg: InputSpec) -> list[Path]:
        path = Path(cfg.path)
        if not path.exists():
            raise InputError(f"input.path: {cfg.path!r} does not exist")
        if not path.is_dir():
            return [path]
        data = data_files_of(cfg.path, list_local_files(path), cfg.format, cfg.glob)
        return [path / rel for rel in data]

    def first_malformed(self, cfg: InputSpec) -> tuple[str, int, int, int] | None:  # noqa: D102
        dialect = CsvDialect.from_options(cfg.options)
        for f in self._input_files(cfg):
            table = csv_records(f, dialect, cfg.columns)
            if table.first_malformed is not None:
                line, fields = table.first_malformed
                return str(f), line, fields, table.frame.shape[1] - 1
        return None

    def canonical_path(self, path: str) -> str:  # noqa: D102
        local = local_path(path)
        if local is None:
            raise InputError(f"the local engine reads and writes local files only, not {path!r}")
        return canonical_local(local)

    def schema_of(self, table: pd.DataFrame) -> list[tuple[str, str]]:  # noqa: D102
        return [
            (str(c), "array<string>" if _holds_arrays(table[c]) else _ddl_of(t))
            for c, t in table.dtypes.items()
        ]

    def with_row_id(self, table: pd.DataFrame, column: str) -> pd.DataFrame:  # noqa: D102
        return table.assign(**{column: np.arange(len(table), dtype=np.int64)})

    def keyed_order(  # noqa: D102
        self, table: pd.DataFrame, draw: Callable[[np.ndarray], np.ndarray]
    ) -> pd.DataFrame:
        if len(table) == 0:
            return table.reset_index(drop=True)
        words = np.asarray(draw(_row_hashes(table))).view(np.int64)
        return self.in_word_order(table.assign(**{_ORDER: words}), _ORDER)

    def with_word(  # noqa: D102
        self,
        table: pd.DataFrame,
        source: str,
        draw: Callable[[np.ndarray], np.ndarray],
        column: str,
    ) -> pd.DataFrame:
        words = np.asarray(draw(table[source].to_numpy(dtype=np.int64)))
        return table.assign(**{column: words.view(np.int64)})

    def spread_by_word(self, table: pd.DataFrame, column: str) -> pd.DataFrame:  # noqa: D102
        return table

    def in_word_order(self, table: pd.DataFrame, column: str) -> pd.DataFrame:  # noqa: D102
        order = np.argsort(table[column].to_numpy(dtype=np.int64), kind="stable")
        return table.iloc[order].drop(columns=[column]).reset_index(drop=True)

    def map_batches(self, table: pd.DataFrame, fn: BatchFn, schema: Columns) -> pd.DataFrame:
        """Apply ``fn`` batch by batch (an empty table still gets one call)."""
        if len(table) == 0:
            return _conform(fn(table.copy()), schema)
        parts = [
            fn(table.iloc[i : i + self.batch_rows].reset_index(drop=True))
            for i in range(0, len(table), self.batch_rows)
        ]
        return _conform(pd.concat(parts, ignore_index=True), schema)

    def map_groups(  # noqa: D102
        self,
        table: pd.DataFrame,
        key: str,
        fn: BatchFn,
        schema: Columns,
        partitions: int | None = None,
    ) -> pd.DataFrame:
        groups = table.groupby(key, sort=True, dropna=False)
        parts = [fn(g.reset_index(drop=True)) for _, g in groups]
        if not parts:
            return _conform(pd.DataFrame({n: [] for n, _ in schema}), schema)
        return _conform(pd.concat(parts, ignore_index=True), schema)

    def cogroup(  # noqa: D102
        self,
        left: pd.DataFrame,
        left_key: str,
        right: pd.DataFrame,
        right_key: str,
        fn: Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame],
        schema: Columns,
        partitions: int | None = None,
    ) -> pd.DataFrame:
        parts = []
        for key, r in right.groupby(right_key, sort=True, dropna=False):
            same = left[left_key].isna() if pd.isna(key) else left[left_key] == key
            parts.append(fn(left[same].reset_index(drop=True), r.reset_index(drop=True)))
        if not parts:
            return _conform(pd.DataFrame({n: [] for n, _ in schema}), schema)
        return _conform(pd.concat(parts, ignore_index=True), schema)

    def join(
        self, left: pd.DataFrame, right: pd.DataFrame, on: Sequence[str], how: str = "inner"
    ) -> pd.DataFrame:
        """Join as Spark does: a null key matches nothing; ``on``, left, right columns."""
        on = list(on)
        right_keyed = right[right[on].notna().all(axis=1)]
        if how == "left_anti":  # the left rows without a match (Spark's left_anti)
            keys = right_keyed[on].drop_duplicates()
            marked = left.merge(keys, on=on, how="left", indicator="_match")
            return (
                marked[marked["_match"] == "left_only"]
                .drop(columns="_match")
                .reset_index(drop=True)
            )
        left_keyed = left[on].notna().all(axis=1)
        parts = [left[left_keyed].merge(right_keyed, on=on, how=how)]
        if how in ("left", "outer"):
            parts.append(left[~left_keyed])
        if how == "outer":
            parts.append(right[right[on].isna().any(axis=1)])
        rest = [c for c in left.columns if c not in on]
        rest += [c for c in right.columns if c not in on]
        parts = [p for p in parts if len(p)] or parts[:1]
        return pd.concat(parts, ignore_index=True).reindex(columns=on + rest)

    def union(self, first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:  # noqa: D102
        return pd.concat([first, second[list(first.columns)]], ignore_index=True)

    def where(self, table: pd.DataFrame, column: str, op: str, value: Any) -> pd.DataFrame:  # noqa: D102
        values = table[column]
        return table[ex.COMPARISONS[op](values, value) & values.notna()].reset_index(drop=True)

    def select(self, table: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:  # noqa: D102
        return table[list(columns)]

    def aggregate(  # noqa: D102
        self, table: pd.DataFrame, keys: Sequence[str], aggs: Mapping[str, tuple[str, str]]
    ) -> pd.DataFrame:
        if not keys:
            row = {out: _reduce(table[col], func) for out, (func, col) in aggs.items()}
            return pd.DataFrame([row])
        spec = {out: (col, _GROUP_FUNCS.get(func, func)) for out, (func, col) in aggs.items()}
        return table.groupby(list(keys), sort=True, dropna=False).agg(**spec).reset_index()

    def sample(self, table: pd.DataFrame, fraction: float, seed: int) -> pd.DataFrame:  # noqa: D102
        keep = np.random.default_rng(seed).random(len(table)) < fraction
        return table[keep].reset_index(drop=True)

    def with_columns(  # noqa: D102
        self, table: pd.DataFrame, columns: Mapping[str, ex.Expr]
    ) -> pd.DataFrame:
        rows = np.arange(len(table))
        values = {name: _evaluate(expr, table, rows) for name, expr in columns.items()}
        return table.assign(**values)

    def count(self, table: pd.DataFrame) -> int:  # noqa: D102
        return len(table)

    def collect_small(self, table: pd.DataFrame, max_rows: int) -> pd.DataFrame:  # noqa: D102
        if len(table) > max_rows:
            raise StatisticsOverflowError(
                f"refusing to collect {len(table)} rows (limit {max_rows})"
            )
        return table.reset_index(drop=True)

    def from_pandas(self, frame: pd.DataFrame, schema: Columns) -> pd.DataFrame:  # noqa: D102
        return _conform(frame, schema)

    def persist(  # noqa: D102
        self, table: pd.DataFrame, materialize: bool = False, disk: bool = False
    ) -> pd.DataFrame:
        return table

    def unpersist(self, table: pd.DataFrame) -> None:  # noqa: D102
        return None

    def write_table(self, table: pd.DataFrame, path: str, fmt: str) -> None:  # noqa: D102
        Path(path).mkdir(parents=True, exist_ok=True)
        if fmt == "parquet":
            write_parquet(table, Path(path) / "part-00000.parquet", self._decimal_types)
        else:
            table.to_csv(Path(path) / "part-00000.csv", index=False)

    def read_table(self, path: str, fmt: str) -> pd.DataFrame:  # noqa: D102
        files = sorted(Path(path).glob(f"*.{fmt}"))
        if fmt == "parquet":
            return pd.concat([read_columnar(f, "parquet") for f in files], ignore_index=True)
        return pd.concat(
            [pd.read_csv(f, dtype=str, keep_default_na=False) for f in files], ignore_index=True
        )

    def path_exists(self, path: str) -> bool:  # noqa: D102
        return Path(path).exists()

    def delete_path(self, path: str) -> None:  # noqa: D102
        p = Path(path)
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()

    def rename_path(self, src: str, dst: str) -> None:  # noqa: D102
        Path(dst).parent.mkdir(parents=True, exist_ok=True)
        Path(src).rename(dst)

    def list_names(self, directory: str) -> list[str]:  # noqa: D102
        p = Path(directory)
        return sorted(c.name for c in p.iterdir()) if p.is_dir() else []

    def write_text(self, path: str, text: str) -> None:  # noqa: D102
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")

    def is_directory(self, path: str) -> bool:  # noqa: D102
        return Path(path).is_dir()

    def make_dir(self, path: str, mode: int) -> None:  # noqa: D102
        Path(path).mkdir(parents=True, exist_ok=True, mode=mode)
        os.chmod(path, mode)

    def set_permissions(self, path: str, dir_mode: int, file_mode: int) -> None:  # noqa: D102
        restrict_local_tree(path, dir_mode, file_mode)

    def list_files(self, directory: str) -> list[str]:  # noqa: D102
        root = Path(directory)
        return sorted(str(p) for p in root.rglob("*") if p.is_file()) if root.is_dir() else []

    def read_chunks(self, path: str, chunk_bytes: int) -> Iterator[bytes]:  # noqa: D102
        with Path(path).open("rb") as handle:
            while chunk := handle.read(chunk_bytes):
                yield chunk
