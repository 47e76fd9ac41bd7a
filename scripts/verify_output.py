"""Check a published table against its privacy model, independently of sparkanon.

This script does not import sparkanon: it reads the published Parquet/CSV files
with pandas and the job's YAML config with PyYAML, groups the rows by their
published quasi-identifier values and checks, for every group, at least ``k``
rows, ``p`` distinct sensitive values and ``H`` distinct sensitivity levels.

Usage::

    python scripts/verify_output.py CONFIG OUTPUT_DIR

Exit code 0 when every group satisfies the model, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml

QI_KINDS = {"continuous", "ordinal", "categorical", "nominal", "semantic"}


def read_published(output_dir: Path) -> pd.DataFrame:
    """All part files of ``OUTPUT_DIR/data`` as one frame."""
    data = output_dir / "data"
    parts = sorted(data.glob("*.parquet"))
    if parts:
        return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    parts = sorted(data.glob("*.csv"))
    return pd.concat(
        [pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts], ignore_index=True
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("output_dir")
    args = parser.parse_args(argv)
    cfg = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
    qi = [a["name"] for a in cfg["attributes"] if a["kind"] in QI_KINDS]
    sensitive = cfg["sensitive"]["name"]
    level_of = {v: lv["name"] for lv in cfg["sensitive"]["levels"] for v in lv["values"]}
    model = cfg["model"]
    k, p, h = model["k"], model.get("p", 1), model.get("h", 1)
    if model.get("name", "hpk") == "p_sensitive":
        h = 1
    elif model.get("name", "hpk") == "k":
        p = h = 1
    table = read_published(Path(args.output_dir))
    table["_level"] = table[sensitive].astype(str).map(level_of)
    groups = table.groupby(qi, dropna=False).agg(
        rows=(sensitive, "size"), values=(sensitive, "nunique"), levels=("_level", "nunique")
    )
    bad = groups[(groups["rows"] < k) | (groups["values"] < p) | (groups["levels"] < h)]
    print(
        f"rows={len(table)} groups={len(groups)} min_rows={groups['rows'].min()} "
        f"min_values={groups['values'].min()} min_levels={groups['levels'].min()} "
        f"model=(H={h}, p={p}, k={k}) violations={len(bad)}"
    )
    return 0 if bad.empty else 1


if __name__ == "__main__":
    sys.exit(main())
