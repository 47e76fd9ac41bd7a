"""The bundled RT demo data (data/completejourney) is consistent, and generate_rt.py behaves.

No Spark: the shipped files are read with the standard library and pyarrow, the
generator runs in-process on small row counts.
"""

from __future__ import annotations

import csv
import importlib
import re
import statistics
from collections import Counter
from pathlib import Path
from types import ModuleType

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkanon.attributes.hierarchy import load_arx_hierarchy
from tests._adult import ROOT

DATA = ROOT / "data" / "completejourney"
HOUSEHOLDS_CSV = DATA / "households.csv"
LONG_CSV = DATA / "households_long.csv"
PARQUET = DATA / "households.parquet"
HIERARCHY = DATA / "items_hierarchy.csv"
README = DATA / "README.md"

QIS = (
    "age",
    "income",
    "home_ownership",
    "marital_status",
    "household_size",
    "household_comp",
    "kids_count",
)
HEADER = ["household_id", *QIS, "items"]


def _load_generator() -> ModuleType:
    return importlib.import_module("scripts.generate_rt")


def _read_csv(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def _sets(rows: list[list[str]]) -> list[list[str]]:
    return [row[-1].split("|") if row[-1] else [] for row in rows]


@pytest.fixture(scope="module")
def households() -> list[list[str]]:
    rows = _read_csv(HOUSEHOLDS_CSV)
    assert rows[0] == HEADER
    return rows[1:]


@pytest.fixture(scope="module")
def readme_counts() -> dict[str, str]:
    """The ``| quantity | value |`` rows of the README's Counts table."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Counts", 1)[1].split("\n## ", 1)[0]
    pairs = re.findall(r"^\| ([a-z -]+) \| ([0-9.,]+) \|$", section, flags=re.MULTILINE)
    return {name: value.replace(",", "") for name, value in pairs}


def test_readme_counts_match_the_files(households, readme_counts) -> None:
    sizes = [len(s) for s in _sets(households)]
    taxonomy = load_arx_hierarchy(HIERARCHY, "items")
    departments = {path[1] for path in taxonomy.paths}
    measured = {
        "households": len(households),
        "household-item pairs": sum(sizes),
        "distinct items": len({i for s in _sets(households) for i in s}),
        "departments": len(departments),
        "set size min": min(sizes),
        "set size median": statistics.median(sizes),
        "set size mean": round(statistics.mean(sizes), 2),
        "set size max": max(sizes),
    }
    assert set(readme_counts) == set(measured)
    for name, value in measured.items():
        assert float(readme_counts[name]) == pytest.approx(value), name
    assert len(households) == 801


def test_hierarchy_loads_and_covers_every_item(households) -> None:
    taxonomy = load_arx_hierarchy(HIERARCHY, "items")
    assert taxonomy.height == 2
    assert {path[-1] for path in taxonomy.paths} == {"*"}
    leaves = set(taxonomy.leaves)
    items = {i for s in _sets(households) for i in s}
    assert items <= leaves
    assert leaves == items  # the taxonomy lists exactly the items that occur


def test_households_csv_is_well_formed(households) -> None:
    ids = [int(row[0]) for row in households]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for row, items in zip(households, _sets(households), strict=True):
        assert len(row) == len(HEADER)
        assert items == sorted(set(items)) and items, row[0]
        assert all(value.strip() == value and value for value in row[1:-1]), row[0]
    missing = Counter(
        qi for row in households for qi, v in zip(QIS, row[1:-1], strict=True) if v == "?"
    )
    assert set(missing) == {"home_ownership", "marital_status"}


def test_long_layout_agrees(households) -> None:
    rows = _read_csv(LONG_CSV)
    assert rows[0] == ["household_id", "item"]
    pairs = zip(households, _sets(households), strict=True)
    expected = [[row[0], item] for row, s in pairs for item in s]
    assert rows[1:] == expected


def test_parquet_agrees(households) -> None:
    table = pq.read_table(PARQUET)
    assert table.column_names == HEADER
    assert table.schema.field("household_id").type == pa.int64()
    assert table.schema.field("items").type == pa.list_(pa.string())
    assert table.column("household_id").to_pylist() == [int(r[0]) for r in households]
    for i, qi in enumerate(QIS, start=1):
        assert table.column(qi).to_pylist() == [r[i] for r in households], qi
    assert table.column("items").to_pylist() == _sets(households)


def test_generator_is_deterministic(tmp_path: Path) -> None:
    gen = _load_generator()
    paths = {}
    for name, seed, fmt in (("a.csv", 3, "csv"), ("b.csv", 3, "csv"), ("c.csv", 4, "csv")):
        paths[name] = tmp_path / name
        gen.generate(gen.DEFAULT_SOURCE, paths[name], 1500, seed=seed, fmt=fmt, chunk_rows=700)
    assert paths["a.csv"].read_bytes() == paths["b.csv"].read_bytes()
    assert paths["a.csv"].read_bytes() != paths["c.csv"].read_bytes()
    for name in ("a.parquet", "b.parquet"):
        paths[name] = tmp_path / name
        gen.generate(gen.DEFAULT_SOURCE, paths[name], 1500, seed=3, fmt="parquet", chunk_rows=700)
    assert paths["a.parquet"].read_bytes() == paths["b.parquet"].read_bytes()
    # Both formats hold the same rows; the CSV has the shipped file's layout.
    rows = _read_csv(paths["a.csv"])
    assert rows[0] == HEADER
    table = pq.read_table(paths["a.parquet"])
    assert pq.ParquetFile(paths["a.parquet"]).metadata.num_row_groups == 3
    assert [int(r[0]) for r in rows[1:]] == list(range(1, 1501))
    assert table.column("household_id").to_pylist() == list(range(1, 1501))
    assert table.column("items").to_pylist() == _sets(rows[1:])
    assert table.column("age").to_pylist() == [r[1] for r in rows[1:]]


def test_generator_keeps_the_distributions(tmp_path: Path, households) -> None:
    gen = _load_generator()
    out = tmp_path / "rt.parquet"
    n = 20_000
    gen.generate(gen.DEFAULT_SOURCE, out, n, seed=0, chunk_rows=10_000)
    table = pq.read_table(out)
    sets = table.column("items").to_pylist()
    assert len(sets) == n
    assert all(s == sorted(set(s)) for s in sets)

    source_sizes = [len(s) for s in _sets(households)]
    sizes = [len(s) for s in sets]
    assert statistics.mean(sizes) == pytest.approx(statistics.mean(source_sizes), rel=0.1)
    assert min(sizes) >= min(source_sizes) and max(sizes) <= max(source_sizes)

    # Item popularity: the share of sets holding each item stays close.
    source_pop = Counter(i for s in _sets(households) for i in s)
    pop = Counter(i for s in sets for i in s)
    assert set(pop) <= set(source_pop)
    for item, count in source_pop.items():
        assert pop[item] / n == pytest.approx(count / len(households), abs=0.02), item

    # Quasi-identifier marginals: total variation distance below 0.03.
    for i, qi in enumerate(QIS, start=1):
        source = Counter(r[i] for r in households)
        made = Counter(table.column(qi).to_pylist())
        tv = 0.5 * sum(abs(made[v] / n - source[v] / len(households)) for v in source | made)
        assert tv < 0.03, qi

    # The trades make the copies of one household differ: nearly all sets are distinct.
    assert len({tuple(s) for s in sets}) > 0.95 * n
