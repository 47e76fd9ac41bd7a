"""Agreement with ARX: sparkanon.risk.arx beside ARX's own figures on Adult (issue 25, target 1).

Reproduces docs/experiments.md, "Agreement with ARX".

Reads Adult with pandas (every value as text, as ARX reads a CSV), forms the class-size
table of each quasi-identifier set stored in ``tests/data/arx_adult_risk.json``, checks
that it is ARX's table, computes the sample risks and the population uniqueness at each
sampling fraction with :mod:`sparkanon.risk.arx`, and compares every figure with ARX's to
4 significant digits (relative difference below 5e-5; an estimate ARX marks unavailable
must be ``None`` here). Prints one table; exits 1 on any disagreement.

Usage: ``python -m experiments.exp_arx_agreement [--data data/adult/adult.csv]
[--reference tests/data/arx_adult_risk.json]``
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sparkanon.risk import arx

ROOT = Path(__file__).resolve().parents[1]
RELATIVE_TOLERANCE = 5e-5
SAMPLE_FIGURES = (
    ("prosecutor", "highest"),
    ("prosecutor", "average"),
    ("prosecutor", "records_at_risk"),
    ("journalist", "highest"),
    ("journalist", "average"),
    ("journalist", "records_at_risk"),
    ("marketer", "average"),
)
MODELS = ("pitman", "zayatz", "snb", "dankar")


def class_size_table(frame: pd.DataFrame, quasi_identifiers: Sequence[str]) -> dict[int, int]:
    """``{class size: number of classes}`` of the rows grouped on the quasi-identifiers."""
    sizes = frame.groupby(list(quasi_identifiers), dropna=False, sort=False).size()
    counts = sizes.value_counts()
    return {int(size): int(count) for size, count in sorted(counts.items())}


def agrees(ours: float | None, theirs: float, available: bool = True) -> bool:
    """Whether two figures agree to 4 significant digits (None matches unavailable)."""
    if not available:
        return ours is None
    if ours is None:
        return False
    if theirs == 0.0:
        return ours == 0.0
    return abs(ours - theirs) / abs(theirs) < RELATIVE_TOLERANCE


def compare_case(
    name: str, case: Mapping[str, Any], frame: pd.DataFrame, threshold: float
) -> list[dict[str, Any]]:
    """One row per figure of one quasi-identifier set: ARX's value, ours, agreement."""
    table = class_size_table(frame, case["quasi_identifiers"])
    reference_table = {int(k): int(v) for k, v in case["class_sizes"].items()}
    rows = [
        {
            "case": name,
            "figure": "class-size table",
            "arx": f"{sum(reference_table.values())} classes",
            "ours": f"{sum(table.values())} classes",
            "ok": table == reference_table,
        }
    ]
    risks = arx.sample_risks(table, threshold)
    for attacker, key in SAMPLE_FIGURES:
        theirs = case[attacker][key]
        ours = risks[attacker][key]
        rows.append(
            {
                "case": name,
                "figure": f"{attacker} {key}",
                "arx": theirs,
                "ours": ours,
                "ok": agrees(ours, theirs),
            }
        )
    rows.append(
        {
            "case": name,
            "figure": "sample uniques",
            "arx": case["sample_uniques"],
            "ours": risks["sample_uniques"],
            "ok": agrees(risks["sample_uniques"], case["sample_uniques"]),
        }
    )
    for fraction, reference in case["population_uniqueness"].items():
        result = arx.population_uniqueness(table, float(fraction))
        for model in MODELS:
            available = reference["available"][model]
            rows.append(
                {
                    "case": name,
                    "figure": f"{model} @ {fraction}",
                    "arx": reference[model] if available else "n/a",
                    "ours": result[model] if result[model] is not None else "n/a",
                    "ok": agrees(result[model], reference[model], available),
                }
            )
        theirs_model = reference["dankar_model"].lower()
        theirs_model = None if theirs_model == "dankar" else theirs_model
        rows.append(
            {
                "case": name,
                "figure": f"dankar picks @ {fraction}",
                "arx": reference["dankar_model"].lower(),
                "ours": str(result["dankar_model"]).lower(),
                "ok": result["dankar_model"] == theirs_model,
            }
        )
    return rows


def format_value(value: Any) -> str:
    """A figure as printed in the table: floats to 6 significant digits."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def print_table(rows: Sequence[Mapping[str, Any]]) -> None:
    """Print the comparison as a markdown table."""
    print("| QIs | figure | ARX | sparkanon | agree |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {row['case']} | {row['figure']} | {format_value(row['arx'])} | "
            f"{format_value(row['ours'])} | {'yes' if row['ok'] else 'NO'} |"
        )


def run(data: Path, reference: Path) -> list[dict[str, Any]]:
    """Every comparison row for the reference file's cases on the data file."""
    doc = json.loads(reference.read_text(encoding="utf-8"))
    frame = pd.read_csv(data, dtype=str, keep_default_na=False)
    rows: list[dict[str, Any]] = []
    for name, case in doc["cases"].items():
        rows.extend(compare_case(name, case, frame, doc["threshold"]))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "adult" / "adult.csv")
    parser.add_argument(
        "--reference", type=Path, default=ROOT / "tests" / "data" / "arx_adult_risk.json"
    )
    args = parser.parse_args(argv)
    doc = json.loads(args.reference.read_text(encoding="utf-8"))
    print(f"ARX {doc['arx']['commit'][:12]} ({doc['java']}); threshold {doc['threshold']}")
    for name, case in doc["cases"].items():
        print(f"QIs {name}: {', '.join(case['quasi_identifiers'])}")
    rows = run(args.data, args.reference)
    print_table(rows)
    bad = [row for row in rows if not row["ok"]]
    print(f"{len(rows) - len(bad)}/{len(rows)} figures agree to 4 significant digits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
