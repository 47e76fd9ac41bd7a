"""Grow the relational-transaction (RT) demo data to any row count, deterministically.

The source is ``data/completejourney/households.csv`` (801 households, written by
``scripts/extract_completejourney.py``): an id, seven categorical quasi-identifiers and
``items``, a set of product categories. The output has the same columns, as CSV (``items``
joined with ``|``, like the source) or Parquet (``items`` as ``list<string>``).

Method (resample whole records, then trade items between the copies):
    1. Every output row starts as a real household drawn uniformly, with replacement. Its
       quasi-identifiers are copied unchanged, so their joint distribution (and therefore
       every marginal and every pairwise table) is the source's, up to sampling noise; so
       is the number of items of each row, and its link to the quasi-identifiers.
    2. The copied sets of one chunk then trade items for ``--rounds`` rounds (default
       30). A round pairs the chunk's rows at random; in a pair ``(r, s)``, a random item
       ``a`` of ``r`` and a random item ``b`` of ``s`` change places if ``s`` lacks ``a``
       and ``r`` lacks ``b`` (up to ``TRIES`` random position pairs are tried; the first
       that works is traded). This is the swap randomization of binary matrices (Gionis
       et al., 2007): every trade keeps both set sizes and how many sets hold each item.

    So the set-size distribution and the item popularities of a chunk are *exactly* those
    of its copied source rows (sampling noise of step 1 only), whatever ``--rounds`` is.
    With the default, about 11% of a set's items (14 of 126 on average) come from other
    households, so the copies of one source household hold different sets and the output
    is not 801 sets repeated. The trades weaken the links that the source has between
    items (co-occurrence) and between items and quasi-identifiers, in proportion to the
    share of items traded; ``--rounds 0`` keeps them fully (plain resampling).

    The source is public, so copying real records raises no privacy concern here; this is
    a demo/benchmark generator, not a privacy-preserving synthesizer.

Limits:
    * No new quasi-identifier combinations: every output row's quasi-identifiers are one of
      the 801 source rows', so equivalence classes on the relational part are large
      (about rows/801 copies each), much larger than in a real population.
    * Set sizes range over the source's (35 to 221 items of 299); no set is empty. No new
      item appears: the items are the 299 of the source.
    * ``household_id`` is the row number, 1..rows; it has no link to the source ids.

Determinism:
    Rows are made in chunks of ``--chunk-rows``. Chunk ``i`` draws from generators seeded
    by ``SeedSequence(seed, spawn_key=(i, stream))``, one stream for the household choice
    and one for the trades, so a chunk depends only on (source, seed, chunk index, chunk
    length, rounds). The same source, ``--seed``, ``--rows``, ``--chunk-rows`` and
    ``--rounds`` give byte-identical files with the same pyarrow version. Memory is
    bounded by one chunk (about 1.5 GB at the default 100,000 rows): a Parquet file gets
    one row group per chunk, a CSV file one write per chunk.

Example:
    python -m scripts.generate_rt --rows 1000000 --out /tmp/rt_1m.parquet --seed 7
    python -m scripts.generate_rt --rows 10000000 --out /tmp/rt_10m.csv --format csv
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from scripts import _args

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO_ROOT / "data" / "completejourney" / "households.csv"

ID_COLUMN = "household_id"
QI_COLUMNS: tuple[str, ...] = (
    "age",
    "income",
    "home_ownership",
    "marital_status",
    "household_size",
    "household_comp",
    "kids_count",
)
ITEMS_COLUMN = "items"
ITEM_SEPARATOR = "|"
COLUMNS: tuple[str, ...] = (ID_COLUMN, *QI_COLUMNS, ITEMS_COLUMN)

PARQUET_SCHEMA = pa.schema(
    [pa.field(ID_COLUMN, pa.int64(), nullable=False)]
    + [pa.field(name, pa.string(), nullable=False) for name in QI_COLUMNS]
    + [pa.field(ITEMS_COLUMN, pa.list_(pa.string()), nullable=False)]
)
CSV_SCHEMA = pa.schema(
    [pa.field(ID_COLUMN, pa.int64()), *(pa.field(c, pa.string()) for c in QI_COLUMNS)]
    + [pa.field(ITEMS_COLUMN, pa.string())]
)

# Independent random streams of one chunk (the spawn_key's second element).
_STREAM_ROWS, _STREAM_TRADES = range(2)

DEFAULT_SEED = 0
DEFAULT_CHUNK_ROWS = 100_000
# A chunk's item strings must fit one Arrow string array (2 GiB): ~126 items of ~15 bytes
# per row allow about 1.1M rows; half of that leaves room for the source's largest sets.
MAX_CHUNK_ROWS = 500_000
DEFAULT_ROUNDS = 30
# Position pairs tried per row pair and round (see perturbed_sets).
TRIES = 8
COMPRESSION = "zstd"
FORMATS = ("csv", "parquet")
_NEEDS_QUOTES = (",", '"', "\n", "\r")


@dataclass(frozen=True)
class Source:
    """The source households, encoded for fast resampling.

    Attributes:
        qis: ``qis[c]``: the values of quasi-identifier ``c``, one per source row.
        item_names: the distinct items, sorted; an item's code is its index.
        offsets: the items of source row ``r`` are ``codes[offsets[r]:offsets[r + 1]]``.
        codes: the concatenated item codes, sorted within each row.
        popularity: ``popularity[code]``: the share of source rows holding the item.
    """

    qis: dict[str, pa.Array]
    item_names: pa.Array
    offsets: npt.NDArray[np.int64]
    codes: npt.NDArray[np.int64]
    popularity: npt.NDArray[np.float64]

    @property
    def num_rows(self) -> int:
        """Number of source rows."""
        return len(self.offsets) - 1


def load_source(path: Path) -> Source:
    """Read the RT demo CSV and encode its item sets.

    Args:
        path: A ``households.csv`` written by ``scripts/extract_completejourney.py``.

    Returns:
        The encoded source.

    Raises:
        ValueError: If the header is not the expected columns, the file has no rows, or a
            set repeats an item.
    """
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = tuple(next(reader, ()))
        if header != COLUMNS:
            raise ValueError(f"{path}: header {header} is not {COLUMNS}")
        rows = list(reader)
    if not rows:
        raise ValueError(f"{path}: no data rows")
    for r, row in enumerate(rows):
        # The CSV writer does not quote (like the source), so no value may need quotes.
        if len(row) != len(COLUMNS) or any(ch in v for v in row for ch in _NEEDS_QUOTES):
            raise ValueError(
                f"{path}: row {r + 2} has {len(row)} fields or a value that needs quotes"
            )
    sets = [row[-1].split(ITEM_SEPARATOR) if row[-1] else [] for row in rows]
    names = sorted({item for items in sets for item in items})
    code_of = {name: code for code, name in enumerate(names)}
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    codes: list[int] = []
    for r, items in enumerate(sets):
        row_codes = sorted(code_of[item] for item in items)
        if len(set(row_codes)) != len(row_codes):
            raise ValueError(f"{path}: row {r + 2} repeats an item")
        codes.extend(row_codes)
        offsets[r + 1] = len(codes)
    code_array = np.asarray(codes, dtype=np.int64)
    popularity = np.bincount(code_array, minlength=len(names)) / len(rows)
    qis = {c: pa.array([row[1 + i] for row in rows], pa.string()) for i, c in enumerate(QI_COLUMNS)}
    return Source(qis, pa.array(names, pa.string()), offsets, code_array, popularity)


def chunk_rng(seed: int, chunk_index: int, stream: int) -> np.random.Generator:
    """Return the random generator of one stream of one chunk.

    Args:
        seed: The run's seed.
        chunk_index: 0-based index of the chunk.
        stream: Which of the chunk's independent streams (``_STREAM_*``).

    Returns:
        A generator that depends only on the three arguments.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(chunk_index, stream)))


def perturbed_sets(
    source: Source, picks: npt.NDArray[np.int64], rounds: int, seed: int, chunk_index: int
) -> npt.NDArray[np.bool_]:
    """Copy the picked rows' item sets, then trade items between pairs of copies.

    Each round pairs the rows of the chunk at random (a row sits in one pair per round);
    in each pair, a random item ``a`` of row ``r`` and a random item ``b`` of row ``s``
    change places when ``s`` lacks ``a`` and ``r`` lacks ``b``. A trade keeps both set
    sizes and the number of sets holding each item, so the chunk's set-size distribution
    and item counts stay exactly those of the copied source rows.

    Args:
        source: The encoded source.
        picks: The source row of each output row.
        rounds: How many rounds of trades.
        seed: The run's seed.
        chunk_index: 0-based index of the chunk.

    Returns:
        A ``len(picks) x n_items`` membership matrix; row ``i`` has as many items as the
        source row ``picks[i]``.
    """
    n_rows, n_items = len(picks), len(source.item_names)
    sizes = source.offsets[picks + 1] - source.offsets[picks]
    offsets = np.cumsum(sizes) - sizes
    row_of = np.repeat(np.arange(n_rows, dtype=np.int64), sizes)
    starts = np.repeat(source.offsets[picks] - offsets, sizes)
    codes = source.codes[starts + np.arange(len(row_of), dtype=np.int64)]
    member = np.zeros((n_rows, n_items), dtype=np.bool_)
    member[row_of, codes] = True

    rng = chunk_rng(seed, chunk_index, _STREAM_TRADES)
    half = n_rows // 2
    last = len(codes) - 1
    for _ in range(rounds if half and len(codes) else 0):
        order = rng.permutation(n_rows)
        r, s = order[:half], order[half : 2 * half]
        # TRIES random positions in each row's slice of ``codes``; the pair trades at the
        # first position pair that works. (Clipping only matters for an empty last set,
        # whose tries the size check below rejects anyway.)
        pos_r = offsets[r, None] + (rng.random((half, TRIES)) * sizes[r, None]).astype(np.int64)
        pos_s = offsets[s, None] + (rng.random((half, TRIES)) * sizes[s, None]).astype(np.int64)
        pos_r, pos_s = np.minimum(pos_r, last), np.minimum(pos_s, last)
        a, b = codes[pos_r], codes[pos_s]
        # ``a == b`` fails too, since ``s`` holds ``b``. Rows are distinct within a round.
        ok = ~member[s[:, None], a] & ~member[r[:, None], b]
        ok &= (sizes[r] > 0)[:, None] & (sizes[s] > 0)[:, None]  # an empty set has no item
        first = ok.argmax(axis=1)[:, None]
        traded = ok.any(axis=1)
        r, s = r[traded], s[traded]
        pos_r = np.take_along_axis(pos_r, first, axis=1)[traded, 0]
        pos_s = np.take_along_axis(pos_s, first, axis=1)[traded, 0]
        a, b = codes[pos_r], codes[pos_s]
        member[r, a] = False
        member[s, b] = False
        member[r, b] = True
        member[s, a] = True
        codes[pos_r], codes[pos_s] = b, a
    return member


def make_chunk(
    source: Source, start: int, n_rows: int, seed: int, chunk_index: int, rounds: int
) -> pa.Table:
    """Make one chunk of synthetic households.

    Args:
        source: The encoded source.
        start: Number of rows written before this chunk (ids continue from ``start + 1``).
        n_rows: How many rows to make.
        seed: The run's seed.
        chunk_index: 0-based index of the chunk; with ``seed`` it fixes the random draws.
        rounds: Rounds of item trades (see the module docstring).

    Returns:
        ``n_rows`` rows with the schema ``PARQUET_SCHEMA``.
    """
    picks = chunk_rng(seed, chunk_index, _STREAM_ROWS).integers(
        0, source.num_rows, size=n_rows, dtype=np.int64
    )
    member = perturbed_sets(source, picks, rounds, seed, chunk_index)
    # Row-major nonzero: rows in order, item codes (alphabetical) ascending within a row.
    rows, codes = np.nonzero(member)
    offsets = np.zeros(n_rows + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=offsets[1:])
    items = pa.ListArray.from_arrays(pa.array(offsets), source.item_names.take(pa.array(codes)))
    take = pa.array(picks)
    columns = [pa.array(np.arange(start + 1, start + n_rows + 1, dtype=np.int64))]
    columns += [source.qis[c].take(take) for c in QI_COLUMNS]
    columns.append(items)
    return pa.Table.from_arrays(columns, schema=PARQUET_SCHEMA)


def to_csv_table(chunk: pa.Table) -> pa.Table:
    """Join each row's items with ``|``, the CSV layout of ``households.csv``.

    Args:
        chunk: A chunk with the schema ``PARQUET_SCHEMA``.

    Returns:
        The chunk with ``items`` as a string column.
    """
    joined = pc.binary_join(chunk.column(ITEMS_COLUMN), ITEM_SEPARATOR)
    index = chunk.schema.get_field_index(ITEMS_COLUMN)
    return chunk.set_column(index, CSV_SCHEMA.field(ITEMS_COLUMN), joined).cast(CSV_SCHEMA)


def generate(
    source_path: Path,
    out: Path,
    rows: int,
    seed: int = DEFAULT_SEED,
    fmt: str = "parquet",
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    rounds: int = DEFAULT_ROUNDS,
) -> int:
    """Write ``rows`` synthetic households to one CSV or Parquet file.

    The file is written under a temporary name next to ``out`` and renamed when complete,
    so an interrupted run leaves no partial ``out``.

    Args:
        source_path: The RT demo CSV to resample.
        out: The file to write (replaced if it exists); parent folders are created.
        rows: How many rows to write (at least 1).
        seed: Seed of the random draws.
        fmt: ``csv`` or ``parquet``.
        chunk_rows: Rows made and written at a time (one Parquet row group each), at most
            ``MAX_CHUNK_ROWS``.
        rounds: Rounds of item trades per chunk (0: plain resampling).

    Returns:
        The number of rows written.

    Raises:
        ValueError: If an argument is out of range or ``fmt`` is unknown.
    """
    if rows < 1:
        raise ValueError(f"rows must be at least 1, got {rows}")
    if not 1 <= chunk_rows <= MAX_CHUNK_ROWS:
        raise ValueError(f"chunk_rows must be in 1..{MAX_CHUNK_ROWS:,}, got {chunk_rows}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    if rounds < 0:
        raise ValueError(f"rounds must be non-negative, got {rounds}")
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    source = load_source(source_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    written = 0
    try:
        if fmt == "parquet":
            writer = pq.ParquetWriter(tmp, PARQUET_SCHEMA, compression=COMPRESSION)
        else:
            # No value needs quotes (checked by load_source): write them bare, like the source.
            options = pacsv.WriteOptions(quoting_style="none", quoting_header="none")
            writer = pacsv.CSVWriter(tmp, CSV_SCHEMA, write_options=options)
        with writer:
            for chunk_index, start in enumerate(range(0, rows, chunk_rows)):
                n_rows = min(chunk_rows, rows - start)
                chunk = make_chunk(source, start, n_rows, seed, chunk_index, rounds)
                if fmt == "parquet":
                    writer.write_table(chunk, row_group_size=n_rows)
                else:
                    writer.write_table(to_csv_table(chunk))
                written += n_rows
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return written


def main(argv: list[str] | None = None) -> int:
    """Run the command line interface.

    Args:
        argv: Arguments without the program name; ``sys.argv[1:]`` when None.

    Returns:
        The process exit code.
    """
    parser = argparse.ArgumentParser(
        description="Grow the RT demo data (households + item sets) to any row count, "
        "deterministically, as CSV or Parquet."
    )
    parser.add_argument("--rows", type=_args.positive_int, required=True, help="rows to write")
    parser.add_argument("--out", type=Path, required=True, help="file to write")
    parser.add_argument(
        "--seed",
        type=_args.seed,
        default=DEFAULT_SEED,
        help=f"random seed (default {DEFAULT_SEED})",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="output format (default: csv if --out ends in .csv, else parquet)",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help="RT demo CSV to resample (default: data/completejourney/households.csv)",
    )
    parser.add_argument(
        "--chunk-rows",
        type=_args.positive_int,
        default=DEFAULT_CHUNK_ROWS,
        help=f"rows per chunk and row group, at most {MAX_CHUNK_ROWS:,}; part of what fixes "
        f"the output (default {DEFAULT_CHUNK_ROWS:,})",
    )
    parser.add_argument(
        "--rounds",
        type=_args.seed,
        default=DEFAULT_ROUNDS,
        help=f"rounds of item trades between copied sets, 0 for plain resampling "
        f"(default {DEFAULT_ROUNDS})",
    )
    args = parser.parse_args(argv)
    if args.out.is_dir():
        parser.error(f"--out {args.out} is a directory; give a file name")
    fmt = args.format or ("csv" if args.out.suffix.lower() == ".csv" else "parquet")
    started = time.perf_counter()
    written = generate(
        args.source, args.out, args.rows, args.seed, fmt, args.chunk_rows, args.rounds
    )
    seconds = time.perf_counter() - started
    size_mib = args.out.stat().st_size / 2**20
    print(f"wrote {written:,} rows to {args.out} ({fmt}, {size_mib:.1f} MiB) in {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
