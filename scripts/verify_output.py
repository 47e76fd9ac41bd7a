"""Check a published table against its privacy models, independently of sparkanon.

This script does not import sparkanon: it reads the published Parquet/CSV files with
pandas and the job's YAML config with PyYAML, groups the rows by their published
quasi-identifier values and checks every group against every model of the config,
with its own implementation of each:

* ``k``: at least ``k`` rows; ``p_sensitive``: and ``p`` distinct sensitive values;
  ``hpk``: and ``h`` distinct sensitivity levels (Shi et al. 2024, definition 7);
* ``distinct_l``: at least ``l`` distinct values; ``entropy_l``: the entropy of the
  group's sensitive distribution is at least ``log(l)``; ``recursive_cl``:
  ``r_1 < c (r_l + ... + r_m)`` with the counts sorted descending (textbook eq. 20.10,
  20.11);
* ``t_closeness``: the distance of the group's distribution to the whole published
  table's is at most ``t`` (equal to the input's when no row was suppressed):
  ``variational`` half the L1 distance, ``kl`` the Kullback-Leibler divergence (natural
  log), ``emd`` the earth mover's distance of Li et al. 2007 with ``equal``, ``ordered``
  (values in ``sensitive.values`` order, else numeric order) or ``hierarchical`` (an
  ARX hierarchy file) ground distance.

For a relational-transaction output (model ``kl_diversity``, Gong et al. 2016, definition 8)
it reads the two published tables ``rt/`` and ``tt/`` instead and checks: every TBucket
(the TT rows of one published set, over all groups) counts at least ``k`` records; in
every group the most frequent published set counts at most ``|G| / l`` records
(``max count * l <= |G|``); every group's RT records number exactly its TT counts' sum,
and no RT record names a group TT lacks; no identifier column is published.

Usage::

    python scripts/verify_output.py OUTPUT_DIR                       # the config the job ran
    python scripts/verify_output.py CONFIG OUTPUT_DIR [--set key=value ...]

With one argument it reads ``OUTPUT_DIR/config.yaml``, the config the job wrote
beside its metrics with every ``--set`` override applied. With a CONFIG it applies
the same ``--set key=value`` overrides the job took (dotted keys, YAML values,
list items by index, e.g. ``--set model.k=4``).

Exit code 0 when every group satisfies every model, 1 otherwise.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

QI_KINDS = {"continuous", "ordinal", "categorical", "nominal", "semantic"}
TOL = 1e-9


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


def read_table_dir(folder: Path) -> pd.DataFrame:
    """All part files of one published table directory as one frame (CSV as text)."""
    parts = sorted(folder.glob("*.parquet"))
    if parts:
        return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    parts = sorted(folder.glob("*.csv"))
    if not parts:
        raise SystemExit(f"no Parquet or CSV part files in {folder}")
    return pd.concat(
        [pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts], ignore_index=True
    )


def check_kl_diversity(cfg: dict, model: dict, output_dir: Path) -> int:
    """(k,l)-diversity of RT and TT (Gong et al. 2016, definition 8); exit code 0 or 1."""
    k, l = int(model["k"]), int(model["l"])  # noqa: E741 (the paper's name)
    rt = read_table_dir(output_dir / "rt")
    tt = read_table_dir(output_dir / "tt")
    set_column = cfg["sensitive"]["name"]
    counts = pd.to_numeric(tt["count"]).astype(np.int64)
    groups_tt = tt["group_id"].astype(str)
    bucket = counts.groupby(tt[set_column].astype(str)).sum()
    size = counts.groupby(groups_tt).sum()
    top = counts.groupby(groups_tt).max()
    rt_size = rt["group_id"].astype(str).value_counts()
    small = int((bucket < k).sum())
    frequent = int((top * l > size).sum())
    joined = pd.concat([size.rename("tt"), rt_size.rename("rt")], axis=1)
    inconsistent = int((joined["tt"] != joined["rt"]).sum())  # NaN on one side counts
    identifiers = [a["name"] for a in cfg["attributes"] if a["kind"] == "identifier"]
    leaked = [c for c in identifiers if c in rt.columns or c in tt.columns]
    violations = small + frequent + inconsistent + len(leaked)
    print(
        f"records={len(rt)} groups={len(size)} tbuckets={len(bucket)} "
        f"min_tbucket={int(bucket.min()) if len(bucket) else 0} "
        f"max_frequency_ratio={float((top / size).max()) if len(size) else 0.0:.4f} "
        f"model=kl_diversity(k={k}, l={l}) small_tbuckets={small} frequent_groups={frequent} "
        f"inconsistent_groups={inconsistent} identifier_columns={len(leaked)} "
        f"violations={violations}"
    )
    return 0 if violations == 0 else 1


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


def tree_emd(p: np.ndarray, q: np.ndarray, paths: list[list[str]]) -> float:
    """Hierarchical EMD: sum over inner nodes of height/H times min(positive, negative extra)."""
    height = len(paths[0]) - 1
    extra = {}  # (level, node) -> signed extra of the subtree
    for i, path in enumerate(paths):
        for level in range(height + 1):
            extra[(level, path[level])] = extra.get((level, path[level]), 0.0) + p[i] - q[i]
    total = 0.0
    for level in range(1, height + 1):
        nodes = {path[level] for path in paths}
        for node in nodes:
            children = {path[level - 1] for path in paths if path[level] == node}
            pos = sum(max(extra[(level - 1, c)], 0.0) for c in children)
            neg = sum(max(-extra[(level - 1, c)], 0.0) for c in children)
            total += level / height * min(pos, neg)
    return total


def distance(model: dict, p: np.ndarray, q: np.ndarray, values: list[str], cfg: dict) -> float:
    """The t-closeness distance of one group's distribution ``p`` to the global ``q``."""
    measure = model.get("measure", "emd")
    ground = model.get("ground", "equal")
    if measure == "variational" or (measure == "emd" and ground == "equal"):
        return 0.5 * float(np.abs(p - q).sum())
    if measure == "kl":
        nz = p > 0
        return float((p[nz] * np.log(p[nz] / q[nz])).sum())
    if ground == "ordered":
        declared = cfg["sensitive"].get("values")
        if declared:
            pos = np.array([declared.index(v) for v in values], dtype=float)
            span = len(declared) - 1
        else:
            numbers = np.array([float(v) for v in values])
            distinct = np.unique(numbers)
            pos = np.searchsorted(distinct, numbers).astype(float)
            span = len(distinct) - 1
        order = np.argsort(pos, kind="stable")
        line = np.zeros(int(span) + 1)
        np.add.at(line, pos[order].astype(int), (p - q)[order])
        return float(np.abs(np.cumsum(line)[:-1]).sum() / span) if span > 0 else 0.0
    with open(model["hierarchy"], newline="", encoding="utf-8-sig") as fh:
        rows = [[c.strip() for c in r] for r in csv.reader(fh, delimiter=";") if r]
    by_leaf = {r[0]: r for r in rows}
    paths = [by_leaf[v] for v in values]
    return tree_emd(p, q, paths)


def check(
    model: dict,
    counts: np.ndarray,
    q: np.ndarray,
    values: list[str],
    cfg: dict,
    level_index: np.ndarray | None,
) -> np.ndarray:
    """Whether each group (a row of sensitive value counts) satisfies one model."""
    name = model["name"]
    size = counts.sum(axis=1)
    distinct = (counts > 0).sum(axis=1)
    shares = counts / np.maximum(size, 1)[:, None]
    if name == "k":
        return size >= model["k"]
    if name == "p_sensitive":
        return (size >= model["k"]) & (distinct >= model["p"])
    if name == "hpk":
        levels = np.zeros((len(counts), level_index.max() + 1))
        for v in range(counts.shape[1]):
            levels[:, level_index[v]] += counts[:, v]
        return (size >= model["k"]) & (distinct >= model["p"]) & ((levels > 0).sum(1) >= model["h"])
    if name == "distinct_l":
        return distinct >= model["l"]
    if name == "entropy_l":
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(shares > 0, -shares * np.log(shares), 0.0)
        return terms.sum(axis=1) >= math.log(model["l"]) - TOL
    if name == "recursive_cl":
        ordered = -np.sort(-counts, axis=1)
        tail = ordered[:, model["l"] - 1 :].sum(axis=1)
        return ordered[:, 0] < model["c"] * tail
    if name == "t_closeness":
        dist = np.array([distance(model, row, q, values, cfg) for row in shares])
        return dist <= model["t"] + TOL
    raise SystemExit(f"unknown model {name!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", metavar="[CONFIG] OUTPUT_DIR")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args(argv)
    if len(args.paths) > 2:
        parser.error("expected [CONFIG] OUTPUT_DIR")
    output_dir = Path(args.paths[-1])
    config = Path(args.paths[0]) if len(args.paths) == 2 else output_dir / "config.yaml"
    cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    for item in args.overrides:
        apply_set(cfg, item)
    models = cfg["model"] if isinstance(cfg["model"], list) else [cfg["model"]]
    if models[0]["name"] == "kl_diversity":
        return check_kl_diversity(cfg, models[0], output_dir)
    qi = [a["name"] for a in cfg["attributes"] if a["kind"] in QI_KINDS]
    sensitive = cfg["sensitive"]["name"]
    table = read_published(output_dir)
    levels = cfg["sensitive"].get("levels") or []
    declared = cfg["sensitive"].get("values") or [v for lv in levels for v in lv["values"]]
    values = list(declared) or sorted(table[sensitive].astype(str).unique())
    index = {v: i for i, v in enumerate(values)}
    codes = table[sensitive].astype(str).map(index)
    if codes.isna().any():
        print(f"published sensitive values outside the declared domain: {int(codes.isna().sum())}")
        return 1
    level_of = {v: i for i, lv in enumerate(levels) for v in lv["values"]}
    level_index = np.array([level_of.get(v, 0) for v in values]) if levels else None
    keys = table[qi].astype(str).agg("\x1f".join, axis=1)
    group_id, _ = pd.factorize(keys)
    counts = np.zeros((group_id.max() + 1 if len(group_id) else 0, len(values)), dtype=np.int64)
    np.add.at(counts, (group_id, codes.to_numpy(dtype=np.int64)), 1)
    q = counts.sum(axis=0) / max(counts.sum(), 1)
    ok = np.ones(len(counts), dtype=bool)
    for model in models:
        ok &= check(model, counts, q, values, cfg, level_index)
    size = counts.sum(axis=1)
    min_rows = int(size.min()) if len(size) else 0
    min_values = int((counts > 0).sum(1).min()) if len(size) else 0
    shown = ", ".join(
        f"{m['name']}(" + ", ".join(f"{k}={v}" for k, v in m.items() if k != "name") + ")"
        for m in models
    )
    print(
        f"rows={int(size.sum())} groups={len(counts)} min_rows={min_rows} "
        f"min_values={min_values} models=[{shown}] "
        f"violations={int((~ok).sum())}"
    )
    return 0 if ok.all() else 1


if __name__ == "__main__":
    sys.exit(main())
