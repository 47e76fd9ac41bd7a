"""Mondrian beside Qiyuan Gong's public Python Mondrian on Adult (k = 5 to 100).

Reproduces docs/experiments.md, "Mondrian beside Gong's Python Mondrian".

The anchor (the issue's figures, quoted in :data:`GONG_NCP`) is Gong's Mondrian
(github.com/qiyuangong/Mondrian) on the 30,162 complete rows of UCI ``adult.data``
with eight quasi-identifiers: age, workclass, education-num, marital-status,
occupation, race, sex and native-country. This script runs sparkanon's Mondrian on
the same rows and attributes and reports GCP, which with unit weights is the figure
Gong prints as "NCP" (the mean over rows and quasi-identifiers of the per-attribute
normalised width of the row's class).

Data: the first 30,162 data rows of ``data/adult/adult.csv`` (the complete rows of
``adult.data``, in file order; the test part follows them). The script checks the
file's row count and the SHA-256 of those rows (:data:`TRAIN_SHA256`) and writes them
to a temporary CSV; ``--rows N`` keeps the first N of them instead (quick runs, no
check).

Quasi-identifiers (all weights 1; ``income`` is the sensitive attribute, which
k-anonymity ignores), in Gong's order. age and education-num are continuous (NCP:
the class's max - min over the input's range). The six others are encoded one of two
ways (``--hierarchies``):

* ``arx``: categorical, with the ARX hierarchies bundled in
  ``data/adult/hierarchies/`` (NCP: the leaves under the lowest common ancestor over
  all the tree's leaves; cuts only between child subtrees of that ancestor);
* ``gong_order``: ordinal, in the order the values first appear in the rows used,
  which is how Gong's code encodes them (NCP: span of ranks / (values - 1), his
  width; cuts anywhere in that order).

Runs: strict and relaxed Mondrian (``--modes``) at each k (``--k``; default 5 10 20
50 100), each on two blockings: ``partitioning.max_block_rows`` equal to the row
count (one block: the single-machine Mondrian) and the default 2,000
(``--block-rows``). Every run is a local-engine job (pandas, one process,
``commit=False``); Mondrian is deterministic, so ``--repeats`` (default 3) only
repeats the timing (each repeat runs the whole grid once), and the quality must be
the same in every repeat (checked).

Recorded per run: GCP, NCP (mean per class), the per-attribute share of GCP, the
classes and their smallest and largest size, whether the publication verified, a
hash of the published rows (sorted, so that two runs publishing the same rows in
another order compare equal), the wall and CPU seconds of the job and the wall
seconds of its ``partition`` and ``cluster`` stages (the algorithm: Gong's printed
time is his recursion alone), and the 1-minute load average when the run started
(other work on the machine slows the times, not the quality).

Writes, under ``--out-dir`` (default ``docs/bench/``):

* ``mondrian_gong_runs.csv``: one row per run;
* ``mondrian_gong.csv``: one row per (hierarchies, mode, blocking, k): the quality,
  the mean and minimum of the times over the repeats, and Gong's figure;
* ``mondrian_gong.meta.json``: the command, rows, code and machine.

Usage::

    python -m experiments.exp_mondrian [--k 5 10 20 50 100] [--repeats 3]
    python -m experiments.exp_mondrian --rows 2000 --k 10 --repeats 1 --out-dir /tmp/x
    python -m experiments.exp_mondrian --report [--out-dir DIR]   # Markdown tables
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments import _bench

ADULT_ROWS = 45_222
"""Data rows of ``data/adult/adult.csv``: complete rows of adult.data, then of adult.test."""
TRAIN_ROWS = 30_162
"""Complete rows of UCI adult.data, the first rows of ``data/adult/adult.csv``."""
TRAIN_SHA256 = "f17cc4ab40dad5c0d376fda8f020b0b409e8110eb2bd43239ceca4c515e5909d"
"""SHA-256 of those rows' lines (without the header) as stored in ``adult.csv``."""
HIERARCHY_DIR = Path("data") / "adult" / "hierarchies"
QIS: tuple[tuple[str, str], ...] = (
    ("age", "continuous"),
    ("workclass", "categorical"),
    ("education-num", "continuous"),
    ("marital-status", "categorical"),
    ("occupation", "categorical"),
    ("race", "categorical"),
    ("sex", "categorical"),
    ("native-country", "categorical"),
)
"""Gong's quasi-identifiers in his order (his ``QI_INDEX``), with their kind here."""
SENSITIVE = "income"
K_VALUES = (5, 10, 20, 50, 100)
MODES = ("strict", "relaxed")
HIERARCHIES = ("arx", "gong_order")
DEFAULT_BLOCK_ROWS = 2000
GONG_NCP = {
    "strict": {5: 8.30, 10: 11.24, 20: 15.03, 50: 22.16, 100: 30.09},
    "relaxed": {5: 10.64, 10: 15.85, 20: 22.32, 50: 30.07, 100: 38.94},
}
"""Gong's printed NCP (percent) on Adult per mode and k, as quoted in the issue."""
GONG_SECONDS = "0.7-0.9"
"""Gong's printed running time per k (seconds, his machine), as quoted in the issue."""
ATTR_FIELDS = [f"ncp_{name}" for name, _ in QIS]
QUALITY = ["rows_out", "blocks", "classes", "published_classes", "size_min", "size_max"]
QUALITY += ["GCP", "NCP", *ATTR_FIELDS, "verified", "published_sha"]
TIMES = ["seconds", "cpu_seconds", "partition_seconds", "cluster_seconds", "algorithm_seconds"]
KEYS = ["hierarchies", "mode", "blocking", "max_block_rows", "k"]
RUN_FIELDS = [*KEYS, "repeat", "rows_in", *QUALITY, *TIMES, "load_1min", "code_sha"]
SUMMARY_FIELDS = [*KEYS, "repeats", "rows_in", *QUALITY]
SUMMARY_FIELDS += [f"{t}_{s}" for t in TIMES for s in ("mean", "min")]
SUMMARY_FIELDS += ["load_1min_max", "gong_NCP", "ratio_to_gong", "code_sha"]


def train_subset(source: Path, out: Path, rows: int | None = None) -> tuple[int, str]:
    """Write the header and the first data rows of ``source`` (the adult.data part).

    Args:
        source: ``data/adult/adult.csv``.
        out: the CSV to write.
        rows: how many rows; ``None`` takes the 30,162 rows of adult.data and checks
            the file's row count and their hash.

    Returns:
        The rows written and the SHA-256 of their lines.

    Raises:
        RuntimeError: the file is not the bundled Adult data this comparison assumes.
    """
    lines = source.read_bytes().splitlines(keepends=True)
    header, data = lines[0], lines[1:]
    take = TRAIN_ROWS if rows is None else min(rows, TRAIN_ROWS)
    digest = hashlib.sha256(b"".join(data[:take])).hexdigest()
    if rows is None and (len(data) != ADULT_ROWS or digest != TRAIN_SHA256):
        raise RuntimeError(
            f"{source}: {len(data)} data rows (expected {ADULT_ROWS}) and first "
            f"{TRAIN_ROWS} rows hashing to {digest} (expected {TRAIN_SHA256})"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(header + b"".join(data[:take]))
    return take, digest


def first_appearance(csv_path: Path, column: str) -> list[str]:
    """The values of one column in the order they first appear (Gong's encoding)."""
    seen: dict[str, None] = {}
    with csv_path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            seen.setdefault(row[column].strip(), None)
    return list(seen)


def attributes(hierarchies: str, orders: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The quasi-identifiers of the config for one encoding of the categorical ones."""
    out: list[dict[str, Any]] = []
    for name, kind in QIS:
        if kind == "continuous":
            out.append({"name": name, "kind": "continuous", "weight": 1.0})
        elif hierarchies == "arx":
            path = _bench.REPO_ROOT / HIERARCHY_DIR / f"{name}.csv"
            out.append({"name": name, "kind": "categorical", "hierarchy": str(path), "weight": 1.0})
        else:
            out.append({"name": name, "kind": "ordinal", "order": orders[name], "weight": 1.0})
    return out


def build_config(
    csv_path: Path,
    out_path: Path,
    hierarchies: str,
    orders: dict[str, list[str]],
    mode: str,
    k: int,
    max_block_rows: int,
) -> dict[str, Any]:
    """The job config of one run."""
    return {
        "input": {
            "format": "csv",
            "path": str(csv_path),
            "options": {"header": True},
            "missing_values": ["?", ""],
            "on_missing": "drop",
        },
        "attributes": attributes(hierarchies, orders),
        "sensitive": {"name": SENSITIVE},
        "model": {"name": "k", "k": k},
        "algorithm": {"name": "mondrian", "mode": mode},
        "partitioning": {"max_block_rows": max_block_rows},
        "output": {
            "path": str(out_path),
            "format": "parquet",
            "mode": "overwrite",
            "publish": "generalized",
        },
        "seed": 1,
    }


def published_hash(table: Any) -> str:
    """Short SHA-256 of the published rows, sorted (independent of the row order)."""
    cols = sorted(table.columns)
    lines = sorted("\x1f".join(map(str, row)) for row in table[cols].itertuples(index=False))
    return hashlib.sha256(("\x1e".join(cols) + "\n" + "\n".join(lines)).encode()).hexdigest()[:16]


def run_job_timed(raw: dict[str, Any], source: str) -> tuple[dict[str, Any], str]:
    """Run one config on the local engine without committing.

    Returns:
        The job's metrics plus ``wall_seconds`` and ``cpu_seconds`` of ``run_job``,
        and :func:`published_hash` of its published rows.
    """
    import time

    from sparkanon.engine.local import LocalEngine
    from sparkanon.families import parse_config
    from sparkanon.pipeline import run_job

    config = parse_config(raw, source=source)
    start, cpu = time.perf_counter(), time.process_time()
    result = run_job(LocalEngine(), config, commit=False)
    metrics = dict(result.metrics)
    metrics["wall_seconds"] = time.perf_counter() - start
    metrics["cpu_seconds"] = time.process_time() - cpu
    return metrics, published_hash(result.published)


def run_one(
    csv_path: Path,
    out_path: Path,
    setting: tuple[str, str, str, int, int],
    orders: dict[str, list[str]],
    repeat: int,
) -> dict[str, Any]:
    """One run: ``setting`` is (hierarchies, mode, blocking, max_block_rows, k)."""
    hierarchies, mode, blocking, max_block_rows, k = setting
    raw = build_config(csv_path, out_path, hierarchies, orders, mode, k, max_block_rows)
    load = round(os.getloadavg()[0], 2)
    m, sha = run_job_timed(raw, f"exp_mondrian ({hierarchies}, {mode}, {blocking}, k={k})")
    stages = m["seconds"]
    run = dict(zip(KEYS, setting, strict=True))
    run |= {
        "repeat": repeat,
        "rows_in": m["rows_in"],
        "rows_out": m["rows_out"],
        "blocks": m["blocks"],
        "classes": m["classes"],
        "published_classes": m["published_classes"],
        "size_min": int(m["class_size"]["min"]),
        "size_max": int(m["class_size"]["max"]),
        "GCP": m["GCP"],
        "NCP": m["NCP"],
        "verified": m["verified"],
        "published_sha": sha,
        "seconds": round(m["wall_seconds"], 3),
        "cpu_seconds": round(m["cpu_seconds"], 3),
        "partition_seconds": stages.get("plan_blocks", 0.0),
        "cluster_seconds": stages.get("cluster", 0.0),
        "load_1min": load,
    }
    run["algorithm_seconds"] = round(run["partition_seconds"] + run["cluster_seconds"], 3)
    # NCP_by_attribute is each attribute's share in percent; GCP is their mean (unit weights).
    for name, _ in QIS:
        run[f"ncp_{name}"] = m["NCP_by_attribute"][name]
    print(
        f"{hierarchies:<10} {mode:<7} {blocking:<5} k={k:>3} repeat={repeat} "
        f"GCP={run['GCP']:.3f}% classes={run['classes']} sizes {run['size_min']}.."
        f"{run['size_max']} blocks={run['blocks']} verified={run['verified']} "
        f"{run['seconds']:.2f}s (CPU {run['cpu_seconds']:.2f}s, algorithm "
        f"{run['algorithm_seconds']:.2f}s)",
        flush=True,
    )
    return run


def summarise(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per setting: the quality (the same in every repeat) and the times' mean, min."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in runs:
        groups.setdefault(tuple(r[key] for key in KEYS), []).append(r)
    out = []
    for key, rs in groups.items():
        first = rs[0]
        for r in rs[1:]:
            changed = [q for q in QUALITY if r[q] != first[q]]
            if changed:
                raise RuntimeError(f"{key}: {changed} differ between repeats")
        row: dict[str, Any] = dict(zip(KEYS, key, strict=True))
        row |= {"repeats": len(rs), "rows_in": first["rows_in"], "code_sha": first["code_sha"]}
        row |= {q: first[q] for q in QUALITY}
        for t in TIMES:
            vals = [float(r[t]) for r in rs]
            row[f"{t}_mean"] = round(statistics.fmean(vals), 3)
            row[f"{t}_min"] = min(vals)
        row["load_1min_max"] = max(float(r["load_1min"]) for r in rs)
        gong = GONG_NCP[row["mode"]].get(row["k"]) if row["rows_in"] == TRAIN_ROWS else None
        row["gong_NCP"] = "" if gong is None else gong
        row["ratio_to_gong"] = "" if gong is None else round(float(row["GCP"]) / gong, 4)
        out.append(row)
    return out


def settings(
    hierarchies: Sequence[str],
    modes: Sequence[str],
    ks: Sequence[int],
    rows: int,
    block_rows: int,
) -> list[tuple[str, str, str, int, int]]:
    """Every (hierarchies, mode, blocking, max_block_rows, k) to run."""
    blockings = [("one", max(rows, 2)), (str(block_rows), block_rows)]
    return [
        (h, mode, name, mbr, k)
        for h in hierarchies
        for mode in modes
        for name, mbr in blockings
        for k in ks
    ]


def script_changed() -> bool | None:
    """Whether this script differs from the commit (untracked or modified); ``None``: no git."""
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain", "--", "experiments/exp_mondrian.py"],
            capture_output=True,
            text=True,
            check=True,
            cwd=_bench.REPO_ROOT,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return bool(done.stdout.strip())


def _fmt(value: Any, spec: str) -> str:
    if value == "" or value is None:
        return "-"
    try:
        if value != value:  # NaN
            return "-"
    except TypeError:
        pass
    return format(float(value), spec)


def report(path: Path) -> int:
    """Markdown tables of ``mondrian_gong.csv``: ours beside Gong, times, per-attribute loss."""
    if not path.is_file():
        print(f"no {path}", file=sys.stderr)
        return 1
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    by = {(r["hierarchies"], r["mode"], r["blocking"], int(r["k"])): r for r in rows}
    ks = sorted({int(r["k"]) for r in rows})
    blocked = sorted({r["blocking"] for r in rows} - {"one"})
    other = blocked[0] if blocked else None
    n = sorted({int(r["rows_in"]) for r in rows})
    print(f"Rows: {', '.join(f'{x:,}' for x in n)}. GCP in percent (lower is better).")
    print()
    for mode in MODES:
        if not any(r["mode"] == mode for r in rows):
            continue
        print(
            f"{mode.capitalize()} Mondrian: GCP of ours beside Gong's NCP "
            f"(one block = single-machine Mondrian; '{other}' = blocks of "
            f"max_block_rows, the rows between blocks cut on the engine)."
        )
        print()
        print(
            "| k | Gong | ARX, one block | ARX / Gong | ARX, blocks | same rows "
            "| Gong's order, one block | order / Gong | Gong's order, blocks | same rows |"
        )
        print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
        for k in ks:
            cells = []
            for h in HIERARCHIES:
                one, blocks = by.get((h, mode, "one", k)), by.get((h, mode, other, k))
                if not cells:
                    cells.append(_fmt(one["gong_NCP"], ".2f") if one else "-")
                cells.append(_fmt(one["GCP"], ".2f") if one else "-")
                cells.append(_fmt(one["ratio_to_gong"], ".3f") if one else "-")
                cells.append(_fmt(blocks["GCP"], ".2f") if blocks else "-")
                same = one and blocks and one["published_sha"] == blocks["published_sha"]
                cells.append("-" if not (one and blocks) else ("yes" if same else "no"))
            print(f"| {k} | " + " | ".join(cells) + " |")
        print()
    print(
        "Every run: classes, class sizes, verification and seconds (min over the repeats; "
        f"Gong's printed time is {GONG_SECONDS} s per k on his machine, his recursion alone)."
    )
    print()
    print(
        "| hierarchies | mode | blocking | k | blocks | classes | sizes | verified "
        "| algorithm s | job s | CPU s |"
    )
    print("|---|---|---|---:|---:|---:|---|---|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['hierarchies']} | {r['mode']} | {r['blocking']} | {r['k']} | {r['blocks']} "
            f"| {r['classes']} | {r['size_min']}..{r['size_max']} | {r['verified']} "
            f"| {_fmt(r['algorithm_seconds_min'], '.2f')} | {_fmt(r['seconds_min'], '.2f')} "
            f"| {_fmt(r['cpu_seconds_min'], '.2f')} |"
        )
    print()
    names = [name for name, _ in QIS]
    for h in HIERARCHIES:
        sel = [
            r for r in rows if (r["hierarchies"], r["mode"], r["blocking"]) == (h, "strict", "one")
        ]
        if not sel:
            continue
        print(f"Strict, {h}, one block: each attribute's NCP share in percent (GCP is their mean).")
        print()
        print("| k | " + " | ".join(names) + " | GCP |")
        print("|---:|" + "---:|" * (len(names) + 1))
        for r in sorted(sel, key=lambda r: int(r["k"])):
            cells = [_fmt(r[f"ncp_{name}"], ".1f") for name in names]
            print(f"| {r['k']} | " + " | ".join(cells) + f" | {_fmt(r['GCP'], '.2f')} |")
        print()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=list(K_VALUES), help="k values")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--hierarchies", nargs="+", choices=HIERARCHIES, default=list(HIERARCHIES))
    parser.add_argument("--rows", type=int, help="first N rows of adult.data's 30,162")
    parser.add_argument(
        "--block-rows",
        type=int,
        default=DEFAULT_BLOCK_ROWS,
        help="max_block_rows of the blocked runs",
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs of each setting (timing)")
    _bench.add_run_arguments(parser)
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir / "mondrian_gong.csv")
    if any(k < 2 for k in args.k):
        parser.error("k must be at least 2")
    if args.rows is not None and not 2 <= args.rows <= TRAIN_ROWS:
        parser.error(f"--rows must be in 2..{TRAIN_ROWS}")
    if args.block_rows < max(args.k):
        parser.error("--block-rows must be at least the largest k")

    sha, prov = _bench.use_code(args.code, args.in_place)
    runs = []
    with tempfile.TemporaryDirectory(prefix="exp_mondrian_") as tmp:
        csv_path = Path(tmp) / "adult_train.csv"
        rows, rows_sha = train_subset(_bench.ADULT_CSV, csv_path, args.rows)
        print(f"{rows:,} rows of adult.data in {csv_path} (sha256 {rows_sha[:16]})", flush=True)
        orders = {
            name: first_appearance(csv_path, name) for name, kind in QIS if kind != "continuous"
        }
        todo = settings(args.hierarchies, args.modes, args.k, rows, args.block_rows)
        # Repeats go round the whole grid, so a burst of other work on the machine slows one
        # repeat of several settings rather than every repeat of one.
        for repeat in range(1, args.repeats + 1):
            for setting in todo:
                run = run_one(csv_path, Path(tmp) / "out", setting, orders, repeat)
                runs.append({**run, "code_sha": sha})
    summary = summarise(runs)
    _bench.write_csv(args.out_dir / "mondrian_gong_runs.csv", runs, RUN_FIELDS)
    _bench.write_csv(args.out_dir / "mondrian_gong.csv", summary, SUMMARY_FIELDS)
    script_dirty = script_changed()
    meta = {
        "command": _bench.command_line(),
        "rows": rows,
        "rows_sha256": rows_sha,
        "hierarchies": {
            "arx": str(HIERARCHY_DIR),
            "gong_order": {n: o for n, o in orders.items()},
        },
        "gong_NCP": GONG_NCP,
        "gong_seconds": GONG_SECONDS,
        "script_dirty": script_dirty,
        **prov,
    }
    _bench.write_json(args.out_dir / "mondrian_gong.meta.json", meta)
    print(
        f"wrote {args.out_dir}/mondrian_gong_runs.csv, mondrian_gong.csv, mondrian_gong.meta.json"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
