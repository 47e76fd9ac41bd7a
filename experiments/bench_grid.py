"""MAA-SLIE against two GPKC baselines on the experiment grid of Shi et al. 2024 (its Figures 2-4).

Reproduces docs/benchmarks.md, section 3 ("MAA-SLIE against GPKC on the paper's grid").

Like the paper (section 4.1): the first 3,000 rows of Adult, the demo config's attributes
and sensitivity levels, one block (no blocking: ``max_block_rows`` above the row count).
Grid: (H=2, k=8), (H=2, k=12), (H=3, k=8); p from 2 (3 when H=3) to 7; MAA-SLIE and the
baselines ``gpkc`` (GreedyPKClustering on Shi et al. 2024's InfoLoss) and ``gpkc_paper``
(GreedyPKClustering as Campan, Truta and Cooper define it: a generalization-based loss,
new sensitive values first); seeds 1, 2, 3 (the config ``seed``, which drives the
algorithms' random choices). Runs on the local engine (pandas, one process,
``commit=False``). ``--qi-weight W`` sets every quasi-identifier's ``weight`` (``inverse``:
``1/|QI|``; Shi et al. 2024's weights are 1) and ``--tag`` suffixes the output files, so a second
grid can sit beside the first.

Writes, under ``docs/bench/``:

* ``grid_runs.csv``: one row per run (EPP, R_IL, AVG_IL, classes, seconds);
* ``grid.csv``: one row per (H, k, p, algorithm): mean, standard deviation, min and max
  over the seeds;
* ``fig_epp.png``, ``fig_ril.png``, ``fig_time.png``: EPP, R_IL and the job's CPU
  seconds against p, one panel per (H, k), the two algorithms as lines (mean over seeds;
  the shaded band spans min..max).

"seconds" is the wall time of ``run_job``, "cpu_seconds" its CPU time (less disturbed
by other processes on the machine); "cluster_seconds" is the wall time of its ``cluster``
stage alone (the algorithm, what the paper's Figure 4 times).

Usage::

    python -m experiments.bench_grid [--rows 3000] [--seeds 1 2 3] [--algorithms ...]
    python -m experiments.bench_grid --qi-weight inverse --tag _w   # grid_w.csv, fig_*_w.png
    python -m experiments.bench_grid --report [--tag _w]  # Markdown tables of grid{tag}.csv
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from experiments import _bench

SETTINGS = [(2, 8), (2, 12), (3, 8)]
P_MAX = 7
ALGORITHMS = ["maa_slie", "gpkc", "gpkc_paper"]
LABELS = {"maa_slie": "MAA-SLIE", "gpkc": "GPKC", "gpkc_paper": "GPKC (paper)"}
BASELINES = ["gpkc", "gpkc_paper"]
METRICS = ["EPP", "R_IL", "AVG_IL", "classes", "seconds", "cpu_seconds", "cluster_seconds"]
RUN_FIELDS = ["H", "k", "p", "algorithm", "seed", "rows_out", "verified", *METRICS, "code_sha"]


def qi_indices(config_path: Path) -> list[int]:
    """Positions in ``attributes`` of the config's quasi-identifiers."""
    import yaml

    from sparkanon.config import QI_KINDS

    raw = yaml.safe_load(config_path.read_text())
    return [i for i, a in enumerate(raw["attributes"]) if a.get("kind") in QI_KINDS]


def run_one(
    config_path: Path,
    csv_path: Path,
    rows: int,
    h: int,
    k: int,
    p: int,
    alg: str,
    seed: int,
    weights: list[str] = (),
) -> dict:
    """One local-engine job on one block; returns its metrics plus wall seconds.

    ``weights`` are extra ``attributes.i.weight=w`` overrides.
    """
    from sparkanon.engine.local import LocalEngine
    from sparkanon.families import load_config
    from sparkanon.pipeline import run_job

    config = load_config(
        str(config_path),
        [
            f"input.path={csv_path}",
            f"partitioning.max_block_rows={10 * rows}",
            "model.name=hpk",
            f"model.h={h}",
            f"model.k={k}",
            f"model.p={p}",
            f"algorithm.name={alg}",
            f"seed={seed}",
            *weights,
        ],
    )
    start, cpu = time.perf_counter(), time.process_time()
    metrics = run_job(LocalEngine(), config, commit=False).metrics
    metrics["wall_seconds"] = time.perf_counter() - start
    metrics["cpu_seconds"] = time.process_time() - cpu
    return metrics


def summarise(runs: list[dict]) -> list[dict]:
    """Mean, standard deviation, min and max of each metric per (H, k, p, algorithm)."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["H"], r["k"], r["p"], r["algorithm"]), []).append(r)
    out = []
    for (h, k, p, alg), rs in groups.items():
        row = {"H": h, "k": k, "p": p, "algorithm": alg, "seeds": len(rs)}
        for m in METRICS:
            vals = [float(r[m]) for r in rs]
            row[f"{m}_mean"] = statistics.fmean(vals)
            row[f"{m}_std"] = statistics.stdev(vals) if len(vals) > 1 else 0.0
            row[f"{m}_min"] = min(vals)
            row[f"{m}_max"] = max(vals)
        row["all_verified"] = all(r["verified"] for r in rs)
        out.append(row)
    return out


def plot(
    summary: list[dict], metric: str, ylabel: str, title: str, path: Path, algorithms: list[str]
) -> None:
    """One figure: a panel per (H, k), p on x, the algorithms as lines with min..max bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(SETTINGS), figsize=(4.2 * len(SETTINGS), 3.8))
    styles = {
        "maa_slie": ("tab:blue", "o", "-"),
        "gpkc": ("tab:orange", "s", "--"),
        "gpkc_paper": ("tab:green", "^", ":"),
    }
    for ax, (h, k), letter in zip(axes, SETTINGS, "abc", strict=False):
        for alg in algorithms:
            rows = sorted(
                (r for r in summary if r["H"] == h and r["k"] == k and r["algorithm"] == alg),
                key=lambda r: r["p"],
            )
            if not rows:
                continue
            ps = [r["p"] for r in rows]
            mean = [r[f"{metric}_mean"] for r in rows]
            color, marker, line = styles[alg]
            ax.plot(ps, mean, color=color, marker=marker, linestyle=line, label=LABELS[alg])
            ax.fill_between(
                ps,
                [r[f"{metric}_min"] for r in rows],
                [r[f"{metric}_max"] for r in rows],
                color=color,
                alpha=0.18,
                linewidth=0,
            )
        ax.set_title(f"({letter}) H={h}, k={k}")
        ax.set_xlabel("p")
        ax.set_xticks(range(2, P_MAX + 1))
        ax.grid(True, alpha=0.3)
        ax.legend()
    axes[0].set_ylabel(ylabel)
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(path: Path) -> int:
    """Markdown tables of ``grid.csv``: MAA-SLIE beside each baseline per (H, k, p)."""
    import pandas as pd

    df = pd.read_csv(path)
    m = df[df["algorithm"] == "maa_slie"].set_index(["H", "k", "p"])
    for base in [b for b in BASELINES if b in set(df["algorithm"])]:
        g = df[df["algorithm"] == base].set_index(["H", "k", "p"])
        name = LABELS[base]
        print(f"MAA-SLIE (M) against {name} (G):")
        print()
        print(
            "| H | k | p | EPP M | EPP G | EPP M/G | R_IL M | R_IL G "
            "| R_IL M/G | classes M / G | CPU s M / G | verified |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|")
        for key in m.index:
            a, b = m.loc[key], g.loc[key]
            print(
                f"| {key[0]} | {key[1]} | {key[2]} | {a['EPP_mean']:.4f} | {b['EPP_mean']:.4f} "
                f"| {a['EPP_mean'] / b['EPP_mean']:.3f} | {a['R_IL_mean']:.4f} "
                f"| {b['R_IL_mean']:.4f} | {a['R_IL_mean'] / b['R_IL_mean']:.3f} "
                f"| {a['classes_mean']:.0f} / {b['classes_mean']:.0f} "
                f"| {a['cpu_seconds_mean']:.2f} / {b['cpu_seconds_mean']:.2f} "
                f"| {bool(a['all_verified']) and bool(b['all_verified'])} |"
            )
        epp, ril = m["EPP_mean"] / g["EPP_mean"], m["R_IL_mean"] / g["R_IL_mean"]
        cpu = m["cpu_seconds_mean"] / g["cpu_seconds_mean"]
        wins_epp = int((m["EPP_mean"] > g["EPP_mean"]).sum())
        wins_ril = int((m["R_IL_mean"] < g["R_IL_mean"]).sum())
        spread = df[df["algorithm"].isin(["maa_slie", base])]
        print()
        print(
            f"MAA-SLIE has the higher EPP in {wins_epp} of {len(m)} settings and the lower R_IL "
            f"in {wins_ril} of {len(m)} against {name}; largest spread over seeds: EPP std "
            f"{spread['EPP_std'].max():.2g}, R_IL std {spread['R_IL_std'].max():.2g}."
        )
        print(
            f"MAA-SLIE/{name} ratios over the {len(m)} settings: EPP "
            f"{epp.min():.3f}..{epp.max():.3f} (median {epp.median():.3f}), R_IL "
            f"{ril.min():.3f}..{ril.max():.3f} (median {ril.median():.3f}), CPU seconds "
            f"{cpu.min():.2f}..{cpu.max():.2f} (median {cpu.median():.2f}; MAA-SLIE slower in "
            f"{int((cpu > 1).sum())})."
        )
        print()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--config", type=Path, default=_bench.DEMO_CONFIG)
    parser.add_argument("--out-dir", type=Path, default=_bench.BENCH_DIR)
    parser.add_argument("--code", help="code_sha of an existing snapshot to run (default: now)")
    parser.add_argument("--algorithms", nargs="+", default=ALGORITHMS, choices=ALGORITHMS)
    parser.add_argument(
        "--qi-weight",
        help="every quasi-identifier's weight: a number, or 'inverse' for 1/|QI| (default: "
        "the config's, 1 in the seed)",
    )
    parser.add_argument("--tag", default="", help="suffix of the output files (e.g. _w)")
    parser.add_argument(
        "--settings",
        nargs="+",
        default=[f"{h},{k}" for h, k in SETTINGS],
        help="the (H,k) pairs, as H,k (default: Shi et al. 2024's three)",
    )
    parser.add_argument("--p-max", type=int, default=P_MAX)
    parser.add_argument(
        "--in-place", action="store_true", help="import sparkanon as installed (no snapshot)"
    )
    parser.add_argument("--report", action="store_true", help="print tables of grid{tag}.csv")
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir / f"grid{args.tag}.csv")

    _, prov = _bench.use_code(args.code, args.in_place)
    settings = [tuple(int(x) for x in hk.split(",")) for hk in args.settings]
    runs = []
    weights: list[str] = []
    if args.qi_weight is not None:
        qis = qi_indices(args.config)
        w = 1.0 / len(qis) if args.qi_weight == "inverse" else float(args.qi_weight)
        weights = [f"attributes.{i}.weight={w!r}" for i in qis]
    with tempfile.TemporaryDirectory(prefix="bench_grid_") as tmp:
        csv_path = _bench.head_csv(_bench.ADULT_CSV, args.rows, Path(tmp) / "adult.csv")
        for h, k in settings:
            for p in range(max(2, h), args.p_max + 1):
                for alg in args.algorithms:
                    for seed in args.seeds:
                        m = run_one(args.config, csv_path, args.rows, h, k, p, alg, seed, weights)
                        if m["blocks"] != 1:
                            raise RuntimeError(f"expected one block, got {m['blocks']}")
                        run = {
                            "H": h,
                            "k": k,
                            "p": p,
                            "algorithm": alg,
                            "seed": seed,
                            "rows_out": m["rows_out"],
                            "verified": m["verified"],
                            "EPP": m["EPP"],
                            "R_IL": m["R_IL"],
                            "AVG_IL": m["AVG_IL"],
                            "classes": m["classes"],
                            "seconds": round(m["wall_seconds"], 3),
                            "cpu_seconds": round(m["cpu_seconds"], 3),
                            "cluster_seconds": m["seconds"].get("cluster"),
                            "code_sha": prov["code_sha"],
                        }
                        runs.append(run)
                        print(
                            f"H={h} k={k:>2} p={p} {alg:<10} seed={seed} EPP={run['EPP']:.4f} "
                            f"R_IL={run['R_IL']:.4f} classes={run['classes']} "
                            f"{run['seconds']:.2f}s",
                            flush=True,
                        )
    summary = summarise(runs)
    t = args.tag
    _bench.write_csv(args.out_dir / f"grid_runs{t}.csv", runs, RUN_FIELDS)
    sum_fields = ["H", "k", "p", "algorithm", "seeds", "all_verified"] + [
        f"{m}_{s}" for m in METRICS for s in ("mean", "std", "min", "max")
    ]
    _bench.write_csv(args.out_dir / f"grid{t}.csv", summary, sum_fields)
    _bench.write_json(
        args.out_dir / f"grid{t}.meta.json",
        {"command": _bench.command_line(), "weights": weights, **prov},
    )
    n = f"first {args.rows:,} Adult rows, one block, mean of seeds {args.seeds}"
    if weights:
        n += f", QI weights {args.qi_weight}"
    algs = args.algorithms
    figures = [
        ("EPP", "EPP (mean HEC per class)", "EPP vs p", "fig_epp"),
        ("R_IL", "R_IL (InfoLoss per row)", "R_IL vs p", "fig_ril"),
        ("cpu_seconds", "CPU seconds of the job (local engine)", "Time vs p", "fig_time"),
    ]
    for metric, ylabel, title, stem in figures:
        plot(summary, metric, ylabel, f"{title} ({n})", args.out_dir / f"{stem}{t}.png", algs)
    print(f"wrote {args.out_dir}/grid{t}.csv, grid_runs{t}.csv, fig_*{t}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
