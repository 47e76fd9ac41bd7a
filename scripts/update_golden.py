"""Rewrite the golden suite's pins: ``python -m scripts.update_golden``.

Runs every case below on the local engine (``sparkanon run --engine local``) and writes
``tests/golden/configs.json``: per case, the config, the input, the overrides and why,
then the digest of every published table and the headline metrics. ``tests/test_golden.py``
compares a fresh run with that file and never rewrites it, so a deliberate change to a
release is this one rerun plus a reviewed diff of the file (say why in the commit).

A case's ``by_value`` tables (float-derived releases: perturbation, condensation) are
pinned by value: their copies are written to ``tests/golden/tables/``.

Every config of ``conf/`` has a case (the test checks that none is left out); a config
run with other settings too (another algorithm) has further cases.

A case marked ``spark`` is also run on Spark by the Spark test (one per job family),
which must publish the same tables.

Options: ``--only ID`` (repeatable) reruns those cases and keeps the others' pins;
``--dry-run`` prints the runtimes and changes without writing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from scripts.golden import (
    GOLDEN_FILE,
    VALUES_DIR,
    headline,
    mismatches,
    run_case,
    table_mismatches,
    table_pins,
)

OLD: dict[str, dict[str, Any]] = (
    {c["id"]: c for c in json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))["cases"]}
    if GOLDEN_FILE.exists()
    else {}
)
"""The pinned cases as the file holds them before this run."""

ADULT_3000 = {"adult_rows": 3000}
"""The header and the first 3,000 rows of data/adult/adult.csv (written in a temporary folder)."""

BUNDLED = {"bundled": "the config's own input (the whole bundled data)"}

BY_VALUE = ["data"]
"""The tables of a float-derived release, pinned value by value within a tolerance."""

SMALL_BLOCKS = "3,000 rows in blocks of at most 1,000: several blocks, as a full run has"

CASES: list[dict[str, Any]] = [
    {
        "id": "adult_hpk",
        "config": "conf/adult_hpk.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=1000"],
        "why": SMALL_BLOCKS + " (the pins of the former tests/test_golden_adult.py; "
        "their history under ties: docs/method.md, 'Ties and the compiled kernel')",
        "spark": True,
    },
    {
        "id": "adult_hpk_gpkc",
        "config": "conf/adult_hpk.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=1000", "algorithm.name=gpkc"],
        "why": "the GPKC baseline on the same setting (pinned by the former "
        "tests/test_golden_adult.py)",
    },
    {
        "id": "adult_kl_chai2015",
        "config": "conf/adult_kl_chai2015.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=1000"],
        "why": SMALL_BLOCKS,
    },
    {
        "id": "adult_mdav_k",
        "config": "conf/adult_mdav_k.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=1000"],
        "why": SMALL_BLOCKS,
    },
    {
        "id": "adult_mondrian_k",
        "config": "conf/adult_mondrian_k.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=1000"],
        "why": SMALL_BLOCKS,
    },
    {
        "id": "adult_mondrian_ldiv",
        "config": "conf/adult_mondrian_ldiv.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=1000"],
        "why": SMALL_BLOCKS,
    },
    {
        "id": "adult_mondrian_tclose",
        "config": "conf/adult_mondrian_tclose.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=1000"],
        "why": SMALL_BLOCKS,
    },
    {
        "id": "adult_psk_yang2014",
        "config": "conf/adult_psk_yang2014.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=500"],
        "why": "MAA-SAE's cost grows steeply with a block's rows (38 s in blocks of 1,000, "
        "2 s in blocks of 500); the rows whose fnlwgt has other than 6 digits are "
        "suppressed as invalid, as on the whole data",
    },
    {
        "id": "adult_fd_k",
        "config": "conf/adult_fd_k.yaml",
        "input": ADULT_3000,
        "overrides": [],
        "why": "full-domain: one lattice search over the whole sample (no blocks)",
    },
    {
        "id": "adult_fd_distinct_l",
        "config": "conf/adult_fd_distinct_l.yaml",
        "input": ADULT_3000,
        "overrides": [],
        "why": "full-domain: one lattice search over the whole sample (no blocks)",
    },
    {
        "id": "adult_fd_entropy_l",
        "config": "conf/adult_fd_entropy_l.yaml",
        "input": ADULT_3000,
        "overrides": [],
        "why": "full-domain: one lattice search over the whole sample (no blocks)",
    },
    {
        "id": "adult_fd_recursive_cl",
        "config": "conf/adult_fd_recursive_cl.yaml",
        "input": ADULT_3000,
        "overrides": [],
        "why": "full-domain: one lattice search over the whole sample (no blocks)",
    },
    {
        "id": "adult_fd_tcloseness",
        "config": "conf/adult_fd_tcloseness.yaml",
        "input": ADULT_3000,
        "overrides": [],
        "why": "full-domain: one lattice search over the whole sample (no blocks)",
    },
    {
        "id": "adult_fd_combined",
        "config": "conf/adult_fd_combined.yaml",
        "input": ADULT_3000,
        "overrides": [],
        "why": "full-domain, Samarati's search under three models at once (the Spark "
        "check's full-domain case: its search takes a quarter of adult_fd_k's there)",
        "spark": True,
    },
    {
        "id": "completejourney_paa",
        "config": "conf/completejourney_paa.yaml",
        "input": BUNDLED,
        "overrides": [],
        "why": "relational-transaction: the 801 bundled households are small enough whole",
        "spark": True,
    },
    {
        "id": "completejourney_long",
        "config": "conf/completejourney_long.yaml",
        "input": BUNDLED,
        "overrides": [],
        "why": "relational-transaction, items in the long layout: the whole bundled data",
    },
    {
        "id": "adult_perturb",
        "config": "conf/adult_perturb.yaml",
        "input": ADULT_3000,
        "overrides": [],
        "by_value": BY_VALUE,
        "why": "perturbation: every row published, no row id, noise drawn from the golden key",
        "spark": True,
    },
    {
        "id": "adult_condense",
        "config": "conf/adult_condense.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=1000"],
        "by_value": BY_VALUE,
        "why": "condensation: synthetic records from each MDAV group's mean and covariance",
    },
    {
        "id": "adult_condense_mixed",
        "config": "conf/adult_condense_mixed.yaml",
        "input": ADULT_3000,
        "overrides": ["partitioning.max_block_rows=1000"],
        "by_value": BY_VALUE,
        "why": "condensation of mixed data: categories drawn from each group's frequencies",
        "spark": True,
    },
    {
        "id": "patients_safe_harbor",
        "config": "conf/patients_safe_harbor.yaml",
        "input": BUNDLED,
        "overrides": [],
        "why": "full-domain over calendar levels and built hierarchies (masked ZIP, top-coded "
        "ages) of the generated admissions, 154 columns left unlisted",
    },
    {
        "id": "patients_mdav",
        "config": "conf/patients_mdav.yaml",
        "input": BUNDLED,
        "overrides": [],
        "why": "centroids of a date, a timestamp, a tinyint and a decimal; 152 typed columns kept",
    },
    {
        "id": "patients_perturb",
        "config": "conf/patients_perturb.yaml",
        "input": BUNDLED,
        "overrides": [],
        "by_value": BY_VALUE,
        "why": "noise on a date (days), a timestamp (seconds) and a decimal",
    },
    {
        "id": "patients_condense",
        "config": "conf/patients_condense.yaml",
        "input": BUNDLED,
        "overrides": [],
        "by_value": BY_VALUE,
        "why": "synthetic dates and timestamps from each group's mean and covariance",
    },
    {
        "id": "patients_anatomy",
        "config": "conf/patients_anatomy.yaml",
        "input": BUNDLED,
        "overrides": [],
        "why": "relational-transaction with a date and a built hierarchy among the QIs",
    },
]


def pin(case: dict[str, Any], folder: Path | None) -> tuple[dict[str, Any], list[str], float]:
    """A case with its pins, what moved from the file's pins, and its runtime.

    By-value copies are written to ``folder`` (``None``: a throwaway folder, a dry run).
    """
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        metrics, tables, seconds = run_case(case, Path(tmp))
        moved = table_mismatches(OLD[case["id"]]["tables"], tables) if case["id"] in OLD else []
        pins = table_pins(case, tables, folder or Path(tmp) / "values")
    return {**case, "tables": pins, "metrics": headline(metrics)}, moved, seconds


def changes(old: dict[str, Any] | None, new: dict[str, Any], moved: list[str]) -> list[str]:
    """The pinned fields of a case that moved (for the log)."""
    if old is None:
        return ["new case"]
    return list(moved) + mismatches(old["metrics"], new["metrics"], "metrics.")


def main(argv: list[str] | None = None) -> int:
    """Run the cases and rewrite the golden file (or print, with ``--dry-run``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="ID")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    unknown = set(args.only) - {c["id"] for c in CASES}
    if unknown:
        parser.error(f"no case {sorted(unknown)}")
    old = OLD
    pinned = []
    total = 0.0
    for case in CASES:
        if args.only and case["id"] not in args.only:
            pinned.append(old[case["id"]])
            continue
        new, table_moves, seconds = pin(case, None if args.dry_run else VALUES_DIR)
        total += seconds
        moved = changes(old.get(case["id"]), new, table_moves)
        print(f"{case['id']:<24} {seconds:6.1f} s  {', '.join(moved) or 'unchanged'}")
        pinned.append(new)
    print(f"{'total':<24} {total:6.1f} s")
    if not args.dry_run:
        document = {
            "about": "Pins of tests/test_golden.py, written by scripts/update_golden.py "
            "(rerun it for a deliberate change and review the diff). Local engine; tables: "
            "rows and SHA-256 of the published rows sorted as text, floats to 12 "
            "significant digits, or, for a case's by_value tables, rows, the digest of "
            "the exact columns and a kept copy compared value by value within a "
            "tolerance (scripts/golden.py).",
            "cases": pinned,
        }
        GOLDEN_FILE.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN_FILE.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
