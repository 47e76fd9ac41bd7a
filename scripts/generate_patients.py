"""A generated warehouse-style table of patient admissions (no real person in it).

The table sparkanon is meant for, in the shape a warehouse holds it: direct identifiers
(a record id, a name, an e-mail address, a phone number, a national id), dates and
timestamps (birth date, admission instant), a ZIP-like code, Spark's native types
(booleans, integers of four widths, a decimal), a sensitive diagnosis, a set of
procedure codes (``|``-joined, for relational-transaction jobs), a free-text note and
``--passthrough`` further columns of mixed types that no anonymization needs.

Values are drawn from one seeded generator, so the same ``--rows``, ``--passthrough`` and
``--seed`` give the same file.
The distributions are loosely realistic (ages skewed to the middle, ZIPs clustered in a
few regions, the diagnosis depending on age) so anonymization has something to preserve.

Usage:
    python -m scripts.generate_patients --rows 5000 --passthrough 150 --out data/patients
    python -m scripts.generate_patients --rows 5000 --format csv --out /tmp/patients_csv
"""

from __future__ import annotations

import argparse
import datetime as dt
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

DIAGNOSES = (
    "asthma",
    "bronchitis",
    "diabetes",
    "fracture",
    "hypertension",
    "influenza",
    "migraine",
    "pneumonia",
    "appendicitis",
    "gastritis",
)
"""The sensitive attribute's values."""
ZIP_REGIONS = ("021", "100", "303", "462", "606", "752", "802", "941")
"""Three-digit ZIP prefixes the generated codes cluster in."""
SURNAMES = ("Smith", "Garcia", "Chen", "Okafor", "Novak", "Rossi", "Dubois", "Haddad")
REFERENCE_DAY = dt.date(2026, 1, 1)
"""Ages are counted at this day."""


def _birth_dates(rng: np.random.Generator, n: int) -> np.ndarray:
    """Birth dates as days since 1970-01-01: ages 0-104, most between 20 and 80."""
    age_days = np.clip(rng.normal(48, 19, n), 0, 104.9) * 365.25
    ref = (REFERENCE_DAY - dt.date(1970, 1, 1)).days
    return (ref - age_days).astype(np.int64)


def _procedures(rng: np.random.Generator, n: int) -> list[str]:
    """Each admission's procedure codes ``P01`` ... ``P30``, 1 to 4 of them, joined by ``|``."""
    counts = rng.integers(1, 5, n)
    draws = rng.integers(1, 31, (n, 4))
    return [
        "|".join(f"P{c:02d}" for c in sorted(set(row[:m])))
        for row, m in zip(draws, counts, strict=True)
    ]


def patients_table(rows: int, passthrough: int = 150, seed: int = 0) -> pa.Table:
    """The generated table.

    Args:
        rows: number of rows.
        passthrough: number of extra columns ``extra_001`` ... of mixed types.
        seed: the seed of every draw.

    Returns:
        An Arrow table (date32, timestamp[us, UTC], decimal128(10, 2), bool, int8/16/32/64,
        string columns).
    """
    rng = np.random.default_rng(seed)
    n = rows
    ids = np.arange(1, n + 1, dtype=np.int64)
    birth = _birth_dates(rng, n)
    ref = (REFERENCE_DAY - dt.date(1970, 1, 1)).days
    age = ((ref - birth) // 365.25).astype(np.int64)
    admitted_s = ((ref - rng.integers(0, 3 * 365, n)) * 86400 + rng.integers(0, 86400, n)).astype(
        np.int64
    )
    region = rng.integers(0, len(ZIP_REGIONS), n)
    zips = np.array(
        [f"{ZIP_REGIONS[r]}{s:02d}" for r, s in zip(region, rng.integers(0, 40, n), strict=True)]
    )
    sex = np.where(rng.random(n) < 0.5, "female", "male")
    smoker = rng.random(n) < 0.22
    visits = rng.poisson(3, n).astype(np.int16)
    stay = (rng.gamma(2.0, 2.5, n) + 1).astype(np.int32)
    risk = np.clip((age - 10) / 90, 0, 1)
    diag_idx = np.where(
        rng.random(n) < risk * 0.6,
        rng.choice([2, 4, 7], n),  # diabetes, hypertension, pneumonia grow with age
        rng.integers(0, len(DIAGNOSES), n),
    )
    charge_cents = (rng.lognormal(7.5, 0.8, n) * 100).astype(np.int64)
    columns: dict[str, pa.Array] = {
        "record_id": pa.array(ids, pa.int64()),
        "full_name": pa.array([f"{SURNAMES[i % len(SURNAMES)]} {i:07d}" for i in ids]),
        "email": pa.array([f"patient{i:07d}@example.org" for i in ids]),
        "phone": pa.array([f"+1-555-{i // 10000 % 1000:03d}-{i % 10000:04d}" for i in ids]),
        "ssn": pa.array([f"{900 + i % 99:03d}-{i // 99 % 100:02d}-{i % 10000:04d}" for i in ids]),
        "birth_date": pa.array(birth.astype("int32"), pa.int32()).cast(pa.date32()),
        "admitted_at": pa.array(admitted_s * 1_000_000, pa.timestamp("us", tz="UTC")),
        "zip": pa.array(zips),
        "sex": pa.array(sex),
        "age": pa.array(age.astype(np.int8), pa.int8()),
        "smoker": pa.array(smoker, pa.bool_()),
        "visits": pa.array(visits, pa.int16()),
        "length_of_stay": pa.array(stay, pa.int32()),
        "charge": pa.array(
            [Decimal(int(c)).scaleb(-2) for c in charge_cents], pa.decimal128(10, 2)
        ),
        "diagnosis": pa.array(np.asarray(DIAGNOSES)[diag_idx]),
        "procedures": pa.array(_procedures(rng, n)),
        "notes": pa.array([f"seen on ward {w}, follow-up advised" for w in rng.integers(1, 30, n)]),
    }
    kinds = (pa.float64(), pa.int32(), pa.string(), pa.bool_(), pa.int64())
    for j in range(passthrough):
        kind = kinds[j % len(kinds)]
        if kind == pa.float64():
            values = pa.array(np.round(rng.normal(0, 1, n), 4))
        elif kind == pa.int32():
            values = pa.array(rng.integers(0, 1000, n).astype(np.int32), pa.int32())
        elif kind == pa.string():
            values = pa.array(np.char.add("v", rng.integers(0, 50, n).astype(str)))
        elif kind == pa.bool_():
            values = pa.array(rng.random(n) < 0.5)
        else:
            values = pa.array(rng.integers(0, 1 << 40, n), pa.int64())
        columns[f"extra_{j + 1:03d}"] = values
    return pa.table(columns)


def write_patients(
    out: str | Path, rows: int, passthrough: int = 150, seed: int = 0, fmt: str = "parquet"
) -> Path:
    """Write the table as one file ``patients.parquet`` (or ``patients.csv``) in ``out``.

    A CSV holds dates as ``YYYY-MM-DD``, timestamps as ``YYYY-MM-DD HH:MM:SS`` (UTC, no
    offset), booleans as ``true``/``false``.

    Returns:
        The file written.
    """
    table = patients_table(rows, passthrough, seed)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        path = folder / "patients.parquet"
        pq.write_table(table, path)
        return path
    admitted = table["admitted_at"].cast(pa.timestamp("us")).cast(pa.string())
    text = table.set_column(
        table.schema.get_field_index("admitted_at"),
        "admitted_at",
        pa.array([s[:19] for s in admitted.to_pylist()]),
    )
    path = folder / "patients.csv"
    pacsv.write_csv(text, path, pacsv.WriteOptions(quoting_style="needed"))
    return path


def main() -> None:
    """Command line: write the generated table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--passthrough", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    parser.add_argument("--out", default="data/patients")
    args = parser.parse_args()
    path = write_patients(args.out, args.rows, args.passthrough, args.seed, args.format)
    print(path)


if __name__ == "__main__":
    main()
