"""Build ``data/adult/adult.csv`` from the raw UCI Adult files.

Reads ``adult.data`` (train) and ``adult.test`` (test) from ``--source``, and writes one
CSV with a header row, train rows first, then test rows. Cleaning:

* the space that precedes every value is stripped;
* the trailing period of the test labels is removed (``<=50K.`` -> ``<=50K``);
* blank lines are skipped;
* every row holding a ``?`` (a missing value) is dropped.

On the UCI release this leaves 30,162 + 15,060 = 45,222 rows, the set the
anonymization literature uses. Only the standard library is needed.

Example:
    python -m scripts.prepare_adult --source /work/shared/data/adult --out data/adult/adult.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Iterator
from pathlib import Path

COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
INT_COLUMNS: frozenset[str] = frozenset(
    {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}
)
LABELS: frozenset[str] = frozenset({"<=50K", ">50K"})
MISSING = "?"
SOURCE_FILES: tuple[str, ...] = ("adult.data", "adult.test")


def clean_rows(path: Path) -> Iterator[list[str]]:
    """Yield the cleaned, complete rows of one raw Adult file.

    Args:
        path: A raw UCI file (``adult.data`` or ``adult.test``).

    Yields:
        One list of 15 stripped values per kept row, in file order.

    Raises:
        ValueError: If a non-blank line does not have 15 fields, an integer column does not
            hold an integer, or the label is not ``<=50K``/``>50K`` (after dropping the
            test set's trailing period).
    """
    with path.open(newline="", encoding="ascii") as handle:
        for line_no, raw in enumerate(csv.reader(handle), start=1):
            values = [value.strip() for value in raw]
            if not any(values):
                continue  # blank line (the train file ends with one)
            if len(values) != len(COLUMNS):
                raise ValueError(
                    f"{path}:{line_no}: expected {len(COLUMNS)} fields, got {len(values)}"
                )
            if MISSING in values:
                continue
            values[-1] = values[-1].removesuffix(".")
            if values[-1] not in LABELS:
                raise ValueError(f"{path}:{line_no}: unexpected label {values[-1]!r}")
            for name, value in zip(COLUMNS, values, strict=True):
                if name in INT_COLUMNS and not value.isdigit():
                    raise ValueError(f"{path}:{line_no}: {name}={value!r} is not an integer")
            yield values


def prepare(source: Path, out: Path) -> dict[str, int]:
    """Write the combined, cleaned Adult CSV.

    The file is written next to ``out`` under a temporary name, then renamed, so a failed
    run never leaves a half-written ``out``.

    Args:
        source: Folder holding ``adult.data`` and ``adult.test``.
        out: The CSV to write; its parent folders are created.

    Returns:
        The number of rows kept from each source file, keyed by file name.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    counts: dict[str, int] = {}
    try:
        with tmp.open("w", newline="", encoding="ascii") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(COLUMNS)
            for name in SOURCE_FILES:
                kept = 0
                for row in clean_rows(source / name):
                    writer.writerow(row)
                    kept += 1
                counts[name] = kept
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return counts


def main(argv: list[str] | None = None) -> int:
    """Run the command line interface.

    Args:
        argv: Arguments without the program name; ``sys.argv[1:]`` when None.

    Returns:
        The process exit code.
    """
    parser = argparse.ArgumentParser(
        description="Build the combined, cleaned Adult CSV from the raw UCI files."
    )
    parser.add_argument(
        "--source",
        type=Path,
        required=True,
        help="folder holding the raw UCI files adult.data and adult.test",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("data/adult/adult.csv"), help="CSV to write"
    )
    args = parser.parse_args(argv)
    counts = prepare(args.source, args.out)
    for name, kept in counts.items():
        print(f"{name}: {kept:,} rows kept")
    print(f"wrote {sum(counts.values()):,} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
