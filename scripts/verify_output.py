"""Check a published table against its privacy model, independently of sparkanon.

This script does not import sparkanon: it reads the published Parquet/CSV files
with pandas and the job's YAML config with PyYAML, groups the rows by their
published quasi-identifier values and checks, for every group, at least ``k``
rows, ``p`` distinct sensitive values and ``H`` distinct sensitivity levels.

Usage::

    python scripts/verify_output.py OUTPUT_DIR                       # the config the job ran
    python scripts/verify_output.py CONFIG OUTPUT_DIR [--set key=value ...]

With one argument it reads ``OUTPUT_DIR/config.yaml``, the config the job wrote
beside its metrics with every ``--set`` override applied. With a CONFIG it applies
the same ``--set key=value`` overrides the job took (dotted keys, YAML values,
list items by index, e.g. ``--set model.k=4``).

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


def apply_set(cfg: dict, item: str) -> None:
    """Apply one ``dotted.key=value`` override (the value parsed as YAML) in place."""
    key, sep, text = item.partition("=")
    if not sep:
        raise SystemExit(f"--set {item!r}: expected key=value")
    node = cfg
    parts = key.strip().split(".")
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = yaml.safe_load(text)
    else:
        node[last] = yaml.safe_load(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", metavar="[CONFIG] OUTPUT_DIR")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args(argv)
    if len(args.paths) > 2:
        parser.error("expected [CONFIG] OUTPUT_DIR")
    args.output_dir = args.paths[-1]
    config = Path(args.paths[0]) if len(args.paths) == 2 else Path(args.output_dir) / "config.yaml"
    cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    for item in args.overrides:
        apply_set(cfg, item)
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
