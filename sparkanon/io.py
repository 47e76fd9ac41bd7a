"""Input and output files: which files are data, where input and output may live, local reads.

Both engines share these rules, so a job behaves the same on pandas and on Spark:

* **Which files of an input directory are data** (:func:`select_data_files`): files of
  the declared format only (by suffix, or by ``input.glob``), never hidden files
  (a path part starting with ``.`` or ``_``, as Spark's own rule: ``_SUCCESS``,
  ``.crc`` files). Everything else is skipped and named in the log.
* **Where the output may go** (:func:`path_relation`, :func:`path_conflict`): never onto
  the input, around it or inside it, compared after resolving symlinks and relative paths
  (:func:`canonical_location`; a Hadoop URI by its scheme, authority and normalized path);
  otherwise ``output.mode: overwrite`` would delete the input, and an output inside an
  input directory would be read back as input by the next run. The same relation keeps
  every other write of a job off every file it reads (:mod:`sparkanon.safety`).
* **File names made from data** (:func:`safe_file_name`, :func:`file_in`): a column
  name becomes a file name of ``[A-Za-z0-9._-]`` only, never ``.``, ``..`` or empty,
  with a short hash of the original when it had to be changed, and the file is checked
  to lie inside its folder.
* **Malformed CSV records** (:func:`csv_records`): a record whose number of fields
  differs from the header's is flagged (column :data:`MALFORMED`) rather than padded
  or truncated silently; :func:`csv_field_count` finds its line for the error.

The local engine reads Parquet and ORC through pyarrow with *path strings*, never a
Python file object: a pyarrow dataset fragment that wraps a Python file needs the
GIL in its destructor, and when the last reference to it dies on an Arrow thread
during interpreter shutdown the process aborts (``terminate called without an active
exception``, exit 134) after a successful run.
"""

from __future__ import annotations

import bz2
import csv
import fnmatch
import gzip
import hashlib
import io
import logging
import os
import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pandas as pd

from sparkanon.errors import InputError, InternalError

log = logging.getLogger("sparkanon")

MALFORMED = "_malformed"
"""Column flagging (1) input records whose field count differs from the header's."""

INTERNAL_COLUMNS = (MALFORMED,)
"""Columns the readers add to the input's own: never named to the user as input columns."""


def input_columns(schema: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The input's own ``(column, type)`` pairs: the schema without :data:`INTERNAL_COLUMNS`."""
    return [(name, kind) for name, kind in schema if name not in INTERNAL_COLUMNS]


def empty_csv_file(path: str) -> InputError:
    """The error for a CSV input file of 0 bytes (no header to name the columns)."""
    return InputError(f"input {path!r} is empty (0 bytes: no header, no rows)")


DATA_SUFFIXES = {
    "csv": (".csv", ".csv.gz", ".csv.bz2", ".tsv", ".tsv.gz", ".tsv.bz2"),
    "parquet": (".parquet",),
    "orc": (".orc",),
}
"""File name endings read as data in an input directory, per ``input.format``."""


def is_hidden(relative: str) -> bool:
    """Whether a path inside an input directory is hidden (a part starts with ``.`` or ``_``)."""
    return any(part.startswith((".", "_")) for part in relative.split("/") if part)


def select_data_files(
    relative: Iterable[str], fmt: str, glob: str | None = None
) -> tuple[list[str], list[str]]:
    """Split the files of an input directory into data files and skipped files.

    Args:
        relative: file paths relative to the input directory, ``/``-separated.
        fmt: ``input.format``.
        glob: ``input.glob``: a pattern the file *name* must match instead of the
            format's suffixes (e.g. ``*.txt``).

    Returns:
        ``(data, skipped)``, both sorted.
    """
    data, skipped = [], []
    for rel in sorted(relative):
        name = rel.rsplit("/", 1)[-1]
        if is_hidden(rel):
            skipped.append(rel)
        elif glob is not None:
            (data if fnmatch.fnmatchcase(name, glob) else skipped).append(rel)
        elif name.lower().endswith(DATA_SUFFIXES[fmt]):
            data.append(rel)
        else:
            skipped.append(rel)
    return data, skipped


def describe_skipped(skipped: list[str], limit: int = 10) -> str:
    """A short list of skipped file names for the log."""
    shown = ", ".join(skipped[:limit])
    return shown + (f" and {len(skipped) - limit} more" if len(skipped) > limit else "")


def data_files_of(path: str, found: Iterable[str], fmt: str, glob: str | None) -> list[str]:
    """The data files of an input directory; log the skipped ones, fail if none is left.

    Args:
        path: ``input.path`` (for messages).
        found: every file under it, relative and ``/``-separated.
        fmt: ``input.format``.
        glob: ``input.glob``.

    Returns:
        The relative paths of the files to read, sorted.

    Raises:
        InputError: no file of the format (or matching the glob) is there.
    """
    data, skipped = select_data_files(found, fmt, glob)
    if skipped:
        log.warning(
            "input: skipped %d file(s) that are not %s data: %s",
            len(skipped),
            glob or fmt,
            describe_skipped(skipped),
        )
    if not data:
        raise InputError(
            f"input.path: {path!r} holds no files to read ({fmt} files"
            + (f" matching {glob!r}" if glob else "")
            + ")"
            + (f"; skipped: {describe_skipped(skipped)}" if skipped else "")
            + ". Check input.format, or set input.glob to the pattern of the data files"
        )
    return data


def local_path(path: str) -> str | None:
    """The local filesystem path of ``path`` (a plain path or a ``file:`` URI), else ``None``."""
    if path.startswith("file://"):
        return path[len("file://") :]
    if path.startswith("file:"):
        return path[len("file:") :]
    if "://" in path:
        return None
    return path


def canonical_local(path: str) -> str:
    """Absolute path with symlinks resolved (also for a path that does not exist yet)."""
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)(.*)$")


def normalize_uri(uri: str) -> str:
    """A Hadoop URI as scheme, authority and normalized path, for comparing locations.

    The scheme and the authority are lowercased, the path has ``.``, ``..``, repeated
    and trailing slashes removed (``s3a://B/x/../y/`` is ``s3a://b/y``). Pure: nothing
    is looked up (a default port or a relative path is not filled in).
    """
    found = _SCHEME.match(uri)
    if found is None:
        return uri
    scheme, authority, path = found.groups()
    path = posixpath.normpath(path) if path else "/"
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    return f"{scheme.lower()}://{authority.lower()}{'' if path == '/' else path}"


def canonical_location(path: str) -> str:
    """Where ``path`` is, for comparing locations.

    A local path (or ``file:`` URI) absolute with symlinks and ``..`` resolved, any other
    URI by :func:`normalize_uri`.
    """
    local = local_path(path)
    return canonical_local(local) if local is not None else normalize_uri(path)


def path_relation(first: str, second: str) -> str | None:
    """How location ``second`` overlaps location ``first``: the one containment test.

    Both must be canonical (:func:`canonical_location`, or an engine's
    ``canonical_path``). Locations on different filesystems (other schemes or
    authorities) never overlap.

    Returns:
        ``"is"`` (the same location), ``"contains"`` (``second`` is a folder above
        ``first``), ``"lies inside"`` (``second`` is under ``first``), or ``None``.
    """
    a, b = first.rstrip("/") or "/", second.rstrip("/") or "/"
    if a == b:
        return "is"
    if a.startswith(b if b.endswith("/") else b + "/"):
        return "contains"
    if b.startswith(a if a.endswith("/") else a + "/"):
        return "lies inside"
    return None


def path_conflict(input_path: str, output_path: str) -> str | None:
    """How an output location would destroy or pollute the input, or ``None`` if it is safe.

    Both paths must be canonical (absolute, symlinks resolved; for remote
    filesystems, fully qualified URIs).

    Args:
        input_path: the input file or directory.
        output_path: the output directory.

    Returns:
        ``"is the input"``, ``"contains the input"`` or ``"lies inside the input"``
        (an output under an input directory would be read as input by the next run),
        or ``None``.
    """
    relation = path_relation(input_path, output_path)
    return None if relation is None else f"{relation} the input"


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
MAX_NAME_CHARS = 100
"""The longest part of a file name kept from a column name (before the hash suffix)."""


def safe_file_name(name: str) -> str:
    """A file name (without suffix) made from a column name or a value.

    Keeps ``A-Z a-z 0-9 . _ -``, replaces any other character by ``_``, never gives
    ``.``, ``..``, an empty name or a hidden one (a leading ``.``), and keeps at most
    :data:`MAX_NAME_CHARS` characters. When the name had to be changed, ``-`` and the
    first 8 hex digits of its SHA-256 are appended, so two columns never share a file
    (``a/b`` and ``a b`` both clean to ``a_b``). A name that is already safe is kept.
    """
    cleaned = _UNSAFE.sub("_", name)
    if cleaned.startswith("."):
        cleaned = "_" + cleaned[1:]
    cleaned = cleaned[:MAX_NAME_CHARS]
    if cleaned == name and cleaned not in ("", ".", ".."):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned}-{digest}" if cleaned else digest


def file_in(folder: str, name: str, suffix: str = "") -> str:
    """``<folder>/<safe name><suffix>``, checked to lie directly inside ``folder``.

    Raises:
        InternalError: the joined path would leave the folder (a bug: the name is
            sanitized by :func:`safe_file_name` first).
    """
    leaf = safe_file_name(name) + suffix
    path = f"{folder.rstrip('/')}/{leaf}"
    parent, _, last = posixpath.normpath(path).rpartition("/")
    if last != leaf or (parent or ".") != posixpath.normpath(folder.rstrip("/") or "/"):
        raise InternalError(f"file name {leaf!r} would leave its folder {folder!r}")
    return path


def list_local_files(root: Path) -> list[str]:
    """Every file under ``root``, relative and ``/``-separated (following directory symlinks)."""
    found = []
    for dirpath, _, names in os.walk(root, followlinks=True):
        base = Path(dirpath).relative_to(root)
        for name in names:
            found.append((base / name).as_posix() if str(base) != "." else name)
    return found


# -- CSV ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CsvDialect:
    """How a CSV input is split into fields (the reader options both engines honour).

    Attributes:
        sep: field separator (``input.options.sep`` or ``delimiter``; default ``,``).
        quote: quote character (``input.options.quote``; default ``"``).
        header: whether the first record holds the column names.
        encoding: text encoding (``input.options.encoding``; default UTF-8).
    """

    sep: str = ","
    quote: str = '"'
    header: bool = True
    encoding: str = "utf-8"

    @classmethod
    def from_options(cls, options: dict[str, object]) -> CsvDialect:
        """The dialect of ``input.options`` (Spark's CSV option names)."""
        header = str(options.get("header", "true")).lower() == "true"
        sep = str(options.get("sep", options.get("delimiter", ",")))
        quote = str(options.get("quote", '"')) or '"'
        encoding = str(options.get("encoding", options.get("charset", "utf-8")))
        return cls(sep=sep, quote=quote, header=header, encoding=encoding)


def open_text(path: Path, encoding: str) -> IO[str]:
    """Open a (possibly gzip or bzip2 compressed) text file for reading."""
    name = path.name.lower()
    if name.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding=encoding, newline="")
    if name.endswith(".bz2"):
        return io.TextIOWrapper(bz2.open(path, "rb"), encoding=encoding, newline="")
    return path.open(encoding=encoding, newline="")


def _records(fh: IO[str], dialect: CsvDialect) -> Iterator[tuple[int, list[str]]]:
    """Non-empty CSV records with the line number on which each starts."""
    reader = csv.reader(fh, delimiter=dialect.sep, quotechar=dialect.quote, skipinitialspace=True)
    line = 1
    for record in reader:
        start, line = line, reader.line_num + 1
        if record and not (len(record) == 1 and record[0].strip() == ""):
            yield start, record


@dataclass(frozen=True)
class CsvTable:
    """One CSV file read by :func:`csv_records`.

    Attributes:
        frame: the records as strings, with :data:`MALFORMED` (1 for a record whose
            field count differs from the header's; its fields are then all null).
        first_malformed: ``(line, fields)`` of the first malformed record, if any.
    """

    frame: pd.DataFrame
    first_malformed: tuple[int, int] | None


def csv_records(path: Path, dialect: CsvDialect, columns: tuple[str, ...] | None) -> CsvTable:
    """Read one CSV file, flagging records of the wrong width.

    Args:
        path: the file.
        dialect: separator, quote, header and encoding.
        columns: names for a headerless file (``input.columns``).

    Returns:
        The records (header removed) and where the first malformed one is.
    """
    with open_text(path, dialect.encoding) as fh:
        records = _records(fh, dialect)
        first = next(records, None)
        if first is None:
            return CsvTable(pd.DataFrame(columns=list(columns or ()) + [MALFORMED]), None)
        if dialect.header:
            names = [c.strip() for c in first[1]]
            body: Iterable[tuple[int, list[str]]] = records
        else:
            names = [f"_c{i}" for i in range(len(first[1]))]
            body = _chain(first, records)
        if columns:
            if not dialect.header and len(columns) != len(names):
                raise InputError(
                    f"input.columns: {len(columns)} names given but {str(path)!r} has "
                    f"{len(names)} columns (line {first[0]})"
                )
            names = list(columns)
        width = len(names)
        rows: list[list[str | None]] = []
        flags: list[int] = []
        first_bad: tuple[int, int] | None = None
        for line, record in body:
            if len(record) == width:
                rows.append(list(record))
                flags.append(0)
            else:
                rows.append([None] * width)
                flags.append(1)
                if first_bad is None:
                    first_bad = (line, len(record))
    frame = pd.DataFrame(rows, columns=names, dtype=object)
    frame[MALFORMED] = pd.Series(flags, dtype="int64")
    return CsvTable(frame, first_bad)


def _chain(
    first: tuple[int, list[str]], rest: Iterator[tuple[int, list[str]]]
) -> Iterator[tuple[int, list[str]]]:
    yield first
    yield from rest


def csv_field_count(line: str, dialect: CsvDialect) -> int:
    """Number of CSV fields on one line (0 for a blank line).

    The engines call this only to name the line of a malformed record they already
    found; a quoted field spanning lines is not supported here.
    """
    if not line.strip():
        return 0
    reader = csv.reader([line], delimiter=dialect.sep, quotechar=dialect.quote)
    return len(next(reader, []))


# -- Parquet and ORC, natively -----------------------------------------------------------


def read_columnar(
    path: Path, fmt: str, decimal_types: dict[str, Any] | None = None
) -> pd.DataFrame:
    """Read one Parquet or ORC file into pandas through pyarrow's own file access.

    An integer column holding nulls becomes a nullable integer column of its width
    (``Int8`` ... ``Int64``), as Spark hands it to a batch function, not ``float64``
    (whose text would be ``1.0`` and whose write-back a ``double``).

    Args:
        path: the file.
        fmt: ``parquet`` or ``orc``.
        decimal_types: when given, the file's decimal columns' Arrow types are recorded
            in it by column name (for :func:`write_parquet`).
    """
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(str(path))
    else:
        import pyarrow.orc as orc

        table = orc.read_table(str(path))
    if decimal_types is not None:
        decimal_types.update(
            {f.name: f.type for f in table.schema if str(f.type).startswith("decimal")}
        )
    return _to_pandas(table)


def _to_pandas(table: Any) -> pd.DataFrame:
    """A pyarrow table as pandas, integer columns with nulls as nullable integers."""
    import pyarrow as pa

    nullable = {
        pa.int8(): pd.Int8Dtype(),
        pa.int16(): pd.Int16Dtype(),
        pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(),
        pa.uint8(): pd.UInt8Dtype(),
        pa.uint16(): pd.UInt16Dtype(),
        pa.uint32(): pd.UInt32Dtype(),
        pa.uint64(): pd.UInt64Dtype(),
    }
    frame = table.to_pandas()
    for i, field in enumerate(table.schema):
        column = table.column(i)
        if field.type in nullable and column.null_count:
            frame[field.name] = column.to_pandas(types_mapper=nullable.get)
    return frame


def write_parquet(
    frame: pd.DataFrame, path: Path, decimal_types: dict[str, Any] | None = None
) -> None:
    """Write a frame as one Parquet file through pyarrow's own file access.

    Args:
        frame: the rows.
        path: the file.
        decimal_types: Arrow decimal types by column name: a column of that name that
            pyarrow reads as decimals is written with that type (the input's precision,
            which Python Decimals do not carry).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    for i, field in enumerate(table.schema):
        wanted = (decimal_types or {}).get(field.name)
        if wanted is not None and pa.types.is_decimal(field.type) and field.type != wanted:
            table = table.set_column(i, field.name, table.column(i).cast(wanted))
    pq.write_table(table, str(path))
