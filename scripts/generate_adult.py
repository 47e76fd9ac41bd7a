"""Grow the Adult data set to any row count, deterministically, as one Parquet file.

Method:
    Every output row starts as a real Adult row drawn uniformly, with replacement, from the
    source CSV (``data/adult/adult.csv``, 45,222 rows). Resampling whole rows keeps the joint
    distribution of the categorical columns, and so their marginals and correlations
    (education and income, sex and relationship, ...), up to sampling noise. Three numeric
    columns are then perturbed slightly, so that the copies of one source row do not all
    coincide:

    * ``age``: plus an integer step in -2..+2 (most often 0, see ``AGE_JITTER``), clipped to
      [17, 90], the range of the source;
    * ``fnlwgt``: times a lognormal factor ``exp(N(-0.05**2 / 2, 0.05**2))`` (mean 1),
      rounded to an integer;
    * ``hours-per-week``: plus an integer step in -2..+2 (0 for 80% of rows, see
      ``HOURS_JITTER``), clipped to [1, 99].

    ``capital-gain``, ``capital-loss`` and ``education-num`` are kept as sampled, so
    ``education-num`` always matches ``education``. The output has the columns of the source,
    in its order, as int64 and string.

Determinism:
    Rows are made in chunks of ``--chunk-rows``. Chunk ``i`` draws from generators seeded by
    ``SeedSequence(seed, spawn_key=(i, stream))``, one stream for the row choice and one per
    perturbed column, so a chunk depends only on (source, seed, chunk index, chunk length).
    The same source, ``--seed``, ``--rows`` and ``--chunk-rows`` give byte-identical files
    with the same pyarrow version; with the same seed and ``--chunk-rows``, a smaller
    ``--rows`` gives a prefix of a larger one.
    Memory is bounded by one chunk: each is written as one row group with
    ``pyarrow.parquet.ParquetWriter``.

Limits:
    * No new categorical combinations: every output row's categorical part (and its
      capital-gain/capital-loss) is one of the source's, so rare combinations stay rare but
      are repeated about rows/45,222 times. Quasi-identifier classes are therefore much
      larger than in a real population of that size, which makes k-anonymity easier to reach
      than on real data; unique source rows (e.g. the one ``Holand-Netherlands`` row) become
      groups of copies, not unique people.
    * The jitter blurs the heaping of the source: the share of rows with exactly 40 hours a
      week drops from 47% to about 38%, and the small spike at the age top-code 90 is
      spread out. It also slightly loosens age's links to the other columns, and clipping
      piles a little extra mass on the bounds (age 17: 1.1% -> about 1.3%).
    * ``fnlwgt`` is a census sampling weight; resampled and perturbed, the values are
      plausible numbers but have no survey meaning (they do not sum to a population).
    * It is a demo/benchmark generator, not a privacy-safe synthesizer: every row is a
      lightly perturbed copy of a real record.

Example:
    python scripts/generate_adult.py --rows 1000000 --out /tmp/adult_1m.parquet --seed 7
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO_ROOT / "data" / "adult" / "adult.csv"

# The column list is the one prepare_adult.py writes (scripts/ is on sys.path when
# this file runs as a script).
import _args  # noqa: E402
from prepare_adult import COLUMNS, INT_COLUMNS  # noqa: E402

SCHEMA = pa.schema(
    [pa.field(name, pa.int64() if name in INT_COLUMNS else pa.string()) for name in COLUMNS]
)

# Integer steps and their probabilities, symmetric with mean 0. Age's distribution is smooth,
# so it gets more movement (standard deviation ~0.89); hours-per-week is heaped at round
# numbers (47% of the source works exactly 40 hours), so it is moved less often (~0.57) to
# keep most of that heaping.
AGE_JITTER: tuple[tuple[int, ...], tuple[float, ...]] = (
    (-2, -1, 0, 1, 2),
    (0.05, 0.2, 0.5, 0.2, 0.05),
)
HOURS_JITTER: tuple[tuple[int, ...], tuple[float, ...]] = (
    (-2, -1, 0, 1, 2),
    (0.02, 0.08, 0.8, 0.08, 0.02),
)
AGE_RANGE = (17, 90)
HOURS_RANGE = (1, 99)
FNLWGT_SIGMA = 0.05

# Independent random streams of one chunk (the spawn_key's second element).
_STREAM_ROWS, _STREAM_AGE, _STREAM_FNLWGT, _STREAM_HOURS = range(4)

DEFAULT_SEED = 0
DEFAULT_CHUNK_ROWS = 500_000
COMPRESSION = "snappy"


def load_source(path: Path) -> pa.Table:
    """Read the cleaned Adult CSV and check its shape.

    Args:
        path: A CSV written by ``scripts/prepare_adult.py``.

    Returns:
        The source rows, with the columns of ``SCHEMA`` (int64 and string, no nulls).

    Raises:
        ValueError: If the header is not the 15 Adult columns in order, the file has no
            rows, or a value is missing.
    """
    with path.open(encoding="utf-8") as handle:
        header = tuple(handle.readline().rstrip("\r\n").split(","))
    if header != COLUMNS:
        raise ValueError(f"{path}: header {header} is not {COLUMNS}")
    table = pacsv.read_csv(
        path,
        convert_options=pacsv.ConvertOptions(
            column_types=SCHEMA,
            null_values=[],
            strings_can_be_null=False,
        ),
    )
    table = table.select(list(COLUMNS)).cast(SCHEMA)
    if table.num_rows == 0:
        raise ValueError(f"{path}: no data rows")
    if any(column.null_count for column in table.columns):
        raise ValueError(f"{path}: missing values")
    return table.combine_chunks()


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


def jitter(
    values: npt.NDArray[np.int64],
    steps: tuple[tuple[int, ...], tuple[float, ...]],
    bounds: tuple[int, int],
    rng: np.random.Generator,
) -> npt.NDArray[np.int64]:
    """Add a random integer step to each value and clip the result.

    Args:
        values: The integers to perturb.
        steps: The possible steps and their probabilities.
        bounds: Inclusive lower and upper bounds of the result.
        rng: The generator to draw the steps from.

    Returns:
        A new int64 array of the same length.
    """
    offsets = rng.choice(np.asarray(steps[0], dtype=np.int64), size=len(values), p=steps[1])
    return np.clip(values + offsets, bounds[0], bounds[1]).astype(np.int64)


def make_chunk(source: pa.Table, n_rows: int, seed: int, chunk_index: int) -> pa.Table:
    """Make one chunk of synthetic rows.

    Args:
        source: The Adult rows to resample, as returned by ``load_source``.
        n_rows: How many rows to make.
        seed: The run's seed.
        chunk_index: 0-based index of the chunk; with ``seed`` it fixes the random draws.

    Returns:
        ``n_rows`` rows with the schema ``SCHEMA``.
    """
    picks = chunk_rng(seed, chunk_index, _STREAM_ROWS).integers(
        0, source.num_rows, size=n_rows, dtype=np.int64
    )
    table = source.take(pa.array(picks))

    age = table.column("age").to_numpy()
    age = jitter(age, AGE_JITTER, AGE_RANGE, chunk_rng(seed, chunk_index, _STREAM_AGE))

    fnlwgt = table.column("fnlwgt").to_numpy()
    # mean=-sigma**2/2 makes E[factor] = 1, so the perturbation does not shift fnlwgt's mean.
    factor = chunk_rng(seed, chunk_index, _STREAM_FNLWGT).lognormal(
        mean=-(FNLWGT_SIGMA**2) / 2, sigma=FNLWGT_SIGMA, size=n_rows
    )
    fnlwgt = np.rint(fnlwgt * factor).astype(np.int64)

    hours = table.column("hours-per-week").to_numpy()
    hours = jitter(hours, HOURS_JITTER, HOURS_RANGE, chunk_rng(seed, chunk_index, _STREAM_HOURS))

    for name, values in (("age", age), ("fnlwgt", fnlwgt), ("hours-per-week", hours)):
        table = table.set_column(
            table.schema.get_field_index(name), SCHEMA.field(name), pa.array(values)
        )
    return table


def generate(
    source_path: Path,
    out: Path,
    rows: int,
    seed: int = DEFAULT_SEED,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
) -> int:
    """Write ``rows`` synthetic Adult rows to one Parquet file.

    The file is written under a temporary name next to ``out`` and renamed when complete,
    so an interrupted run leaves no partial ``out``.

    Args:
        source_path: The cleaned Adult CSV to resample.
        out: The Parquet file to write (replaced if it exists); parent folders are created.
        rows: How many rows to write (at least 1).
        seed: Seed of the random draws.
        chunk_rows: Rows made and written at a time (one Parquet row group each).

    Returns:
        The number of rows written.

    Raises:
        ValueError: If ``rows`` or ``chunk_rows`` is below 1, or ``seed`` is negative.
    """
    if rows < 1:
        raise ValueError(f"rows must be at least 1, got {rows}")
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    source = load_source(source_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    written = 0
    try:
        with pq.ParquetWriter(tmp, SCHEMA, compression=COMPRESSION) as writer:
            for chunk_index, start in enumerate(range(0, rows, chunk_rows)):
                n_rows = min(chunk_rows, rows - start)
                chunk = make_chunk(source, n_rows, seed, chunk_index)
                writer.write_table(chunk, row_group_size=n_rows)
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
        description="Grow the Adult data set to any row count, deterministically, as Parquet."
    )
    parser.add_argument("--rows", type=_args.positive_int, required=True, help="rows to write")
    parser.add_argument("--out", type=Path, required=True, help="Parquet file to write")
    parser.add_argument(
        "--seed",
        type=_args.seed,
        default=DEFAULT_SEED,
        help=f"random seed (default {DEFAULT_SEED})",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help="cleaned Adult CSV to resample (default: data/adult/adult.csv in this repo)",
    )
    parser.add_argument(
        "--chunk-rows",
        type=_args.positive_int,
        default=DEFAULT_CHUNK_ROWS,
        help=f"rows per chunk and row group; part of what fixes the output "
        f"(default {DEFAULT_CHUNK_ROWS})",
    )
    args = parser.parse_args(argv)
    if args.out.is_dir():
        parser.error(f"--out {args.out} is a directory; give a file name")
    started = time.perf_counter()
    written = generate(args.source, args.out, args.rows, args.seed, args.chunk_rows)
    seconds = time.perf_counter() - started
    size_mib = args.out.stat().st_size / 2**20
    print(f"wrote {written:,} rows to {args.out} ({size_mib:.1f} MiB) in {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
