"""What blocking costs in quality: blocked versus unblocked runs on the first N Adult rows.

Reproduces docs/benchmarks.md, section 2 ("What blocking costs in quality").

The job cuts its input into Mondrian-style blocks of at most
``partitioning.max_block_rows`` rows and runs the algorithm in each block on its own;
the paper runs it on the whole table. This script runs the demo config
(``conf/adult_hpk.yaml``) on the local engine (pandas, one process, ``commit=False``) on
the first 3,000 and the first 10,000 rows of ``data/adult/adult.csv``:

* unblocked: ``max_block_rows`` larger than the row count (one block, like the paper);
* blocked: ``max_block_rows`` 500, 1000, 2000 (and 250 for 10,000 rows).

It records R_IL, EPP, AVG_IL, blocks, classes and seconds, and the ratios
blocked/unblocked of R_IL and EPP (the target: blocking costs under 5% in R_IL, i.e.
ratio < 1.05). Rows go to ``docs/bench/blocking.csv``; with several ``--seeds`` each seed
is compared with the unblocked run of the same seed.

Usage::

    python -m experiments.bench_blocking [--rows 3000 10000] [--seeds 42]
    python -m experiments.bench_blocking --report      # Markdown table of blocking.csv
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from experiments import _bench

BLOCK_SIZES = {3000: [500, 1000, 2000], 10000: [250, 500, 1000, 2000]}
DEFAULT_BLOCK_SIZES = [500, 1000, 2000]
FIELDS = [
    "rows",
    "seed",
    "max_block_rows",
    "blocked",
    "blocks",
    "classes",
    "R_IL",
    "EPP",
    "AVG_IL",
    "R_IL_ratio",
    "EPP_ratio",
    "AVG_IL_ratio",
    "R_IL_within_5pct",
    "seconds",
    "cpu_seconds",
    "cluster_seconds",
    "rows_out",
    "verified",
    "code_sha",
]


def run_one(config_path: Path, csv_path: Path, max_block_rows: int, seed: int) -> dict:
    """One local-engine job; returns its metrics plus wall seconds."""
    from sparkanon.engine.local import LocalEngine
    from sparkanon.families import load_config
    from sparkanon.pipeline import run_job

    config = load_config(
        str(config_path),
        [
            f"input.path={csv_path}",
            f"partitioning.max_block_rows={max_block_rows}",
            f"seed={seed}",
        ],
    )
    start, cpu = time.perf_counter(), time.process_time()
    metrics = run_job(LocalEngine(), config, commit=False).metrics
    metrics["wall_seconds"] = time.perf_counter() - start
    metrics["cpu_seconds"] = time.process_time() - cpu
    return metrics


def report(path: Path) -> int:
    """Markdown table of ``blocking.csv``: per (rows, max_block_rows), over the seeds."""
    import pandas as pd

    df = pd.read_csv(path)
    seeds = sorted(int(x) for x in df["seed"].unique())
    print(f"Mean over seeds {seeds} (ratio columns: min..max over the seeds).")
    print()
    print(
        "| rows | max_block_rows | blocks | R_IL | R_IL ratio | EPP | EPP ratio | AVG_IL "
        "| AVG_IL ratio | R_IL < +5% | wall s | CPU s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for (rows, size), g in df.groupby(["rows", "max_block_rows"], sort=False):
        name = f"{size:,}" if g["blocked"].iloc[0] else f"{size:,} (unblocked)"

        def span(col: str, g: pd.DataFrame = g) -> str:
            lo, hi = g[col].min(), g[col].max()
            return f"{lo:.3f}" if round(lo, 3) == round(hi, 3) else f"{lo:.3f}..{hi:.3f}"

        blocks = sorted(g["blocks"].unique())
        if not g["blocked"].iloc[0]:
            target = "-"
        else:
            target = "yes" if g["R_IL_within_5pct"].all() else "no"
        print(
            f"| {rows:,} | {name} | {'/'.join(map(str, blocks))} | {g['R_IL'].mean():.4f} "
            f"| {span('R_IL_ratio')} | {g['EPP'].mean():.4f} | {span('EPP_ratio')} "
            f"| {g['AVG_IL'].mean():.4f} | {span('AVG_IL_ratio')} "
            f"| {target} "
            f"| {g['seconds'].mean():.1f} | {g['cpu_seconds'].mean():.1f} |"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[3000, 10000])
    parser.add_argument("--seeds", type=int, nargs="+", default=[42], help="config seed(s)")
    parser.add_argument("--config", type=Path, default=_bench.DEMO_CONFIG)
    parser.add_argument("--out", type=Path, default=_bench.BENCH_DIR / "blocking.csv")
    parser.add_argument("--code", help="code_sha of an existing snapshot to run (default: now)")
    parser.add_argument("--report", action="store_true", help="print a table of --out")
    parser.add_argument(
        "--in-place", action="store_true", help="import sparkanon as found (the smoke test)"
    )
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out)

    _, prov = _bench.use_code(args.code, args.in_place)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_blocking_") as tmp:
        for n in args.rows:
            csv_path = _bench.head_csv(_bench.ADULT_CSV, n, Path(tmp) / f"adult_{n}.csv")
            sizes = BLOCK_SIZES.get(n, DEFAULT_BLOCK_SIZES)
            unblocked_size = 10 * n  # larger than the rows: one block
            for seed in args.seeds:
                base = None
                for size in [unblocked_size, *sizes]:
                    m = run_one(args.config, csv_path, size, seed)
                    row = {
                        "rows": n,
                        "seed": seed,
                        "max_block_rows": size,
                        "blocked": size < n,
                        "blocks": m["blocks"],
                        "classes": m["classes"],
                        "R_IL": m["R_IL"],
                        "EPP": m["EPP"],
                        "AVG_IL": m["AVG_IL"],
                        "seconds": round(m["wall_seconds"], 3),
                        "cpu_seconds": round(m["cpu_seconds"], 3),
                        "cluster_seconds": m["seconds"].get("cluster"),
                        "rows_out": m["rows_out"],
                        "verified": m["verified"],
                        "code_sha": prov["code_sha"],
                    }
                    if base is None:
                        base = row
                    for key in ("R_IL", "EPP", "AVG_IL"):
                        row[f"{key}_ratio"] = round(row[key] / base[key], 4) if base[key] else None
                    row["R_IL_within_5pct"] = row["R_IL_ratio"] is not None and (
                        row["R_IL_ratio"] < 1.05
                    )
                    results.append(row)
                    print(
                        f"rows={n} seed={seed} max_block_rows={size:>6} blocks={row['blocks']:>3} "
                        f"R_IL={row['R_IL']:.4f} ({row['R_IL_ratio']:.3f}x) "
                        f"EPP={row['EPP']:.4f} ({row['EPP_ratio']:.3f}x) "
                        f"AVG_IL={row['AVG_IL']:.4f} {row['seconds']:.1f}s",
                        flush=True,
                    )
    _bench.write_csv(args.out, results, FIELDS)
    _bench.write_json(
        args.out.with_suffix(".meta.json"), {"command": _bench.command_line(), **prov}
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
