"""MAA-SAE under p-sensitive k-anonymity: the experiments of Yang et al. 2014 (section 5).

Reproduces docs/experiments.md, "Yang et al. 2014: MAA-SAE (Table 5)" and "Yang et al. 2014:
Figures 2-4".

Yang, Wang and Zhang (2014) keeps eight Adult attributes and "only the records of
length 6" of the semantic attribute fnlwgt: this script writes the rows of
``data/adult/adult.csv`` whose fnlwgt has 6 digits (37,290 of the 45,222, in file
order) to a temporary CSV and points ``input.path`` at it (``--rows N`` keeps only the
first N of them, for quick runs). The attributes, kinds and sensitive attribute are
those of ``conf/adult_psk_yang2014.yaml`` (|QI| = 7), which the script loads and modifies
in Python (model, algorithm, seed, attribute subset); it keeps the config's blocking
(``max_block_rows`` 2000; the paper clusters the whole table at once). Every run is a
local-engine job (pandas, one process, ``commit=False``); its ``seed`` drives the
algorithms' random choices (MAA-SAE's first row of each class and leftover order).

Experiments:

* **Table 5**: k in (8, 10, 12) x p in (5, 6, 7), MAA-SAE, ``--runs`` runs each (seeds
  1..runs, default 10: the paper averages 10 runs); our mean AVG-IL and AVG-Ent beside
  the paper's.
* **Figure 2**: MAA-SAE against MAA-MINIL, |QI| = 7, k = 10 and 12, p from 2 to 7.
* **Figure 3**: MAA-SAE against GPKC, |QI| = 7, k = 10 and 12, p from 2 to 7.
* **Figure 4**: MAA-SAE against GPKC, k = 12, |QI| = 3, 5 and 7, p from 2 to 7. The
  paper does not say which attributes make |QI| = 3 and 5; we take the first 3 and 5 of
  its list (age, gender, race, education, native-country, workclass, fnlwgt): age, sex,
  race and then education, native-country. The row subset stays the same (6-digit
  fnlwgt) whether or not fnlwgt is a quasi-identifier.

  Figures run ``--fig-runs`` seeds (default 1); a run shared by several figures (e.g.
  MAA-SAE at |QI| = 7, k = 12) runs once.

``--k`` replaces the k values everywhere (Table 5's, and Figures 2-3's; Figure 4 uses
the largest), ``--p`` the p values everywhere (Table 5: 5 6 7; figures: 2..7), ``--qi``
Figure 4's |QI| values.

Writes, under ``--out-dir`` (default ``docs/bench/``):

* ``yang2014_table5_runs.csv``: one row per Table 5 run;
* ``yang2014_table5.csv``: per (k, p), mean and standard deviation over the runs, and the
  paper's numbers;
* ``yang2014_figs_runs.csv``: one row per figure run;
* ``yang2014_figs.csv``: per (|QI|, k, p, algorithm), mean and standard deviation over
  the seeds, and the figures each setting belongs to;
* ``yang2014_fig2.png``, ``yang2014_fig3.png``, ``yang2014_fig4.png``: AVG-IL (top) and
  AVG-Ent (bottom) against p, one column per panel, the algorithms as lines;
* ``yang2014_table5.meta.json``, ``yang2014_figs.meta.json``: the command, rows, code
  and machine of each.

Every run also records CAVG, NCP, GCP, the classes, the job's wall and CPU seconds and
the wall seconds of its ``cluster`` stage (the algorithm alone).

Usage::

    python -m experiments.exp_yang2014 [--only table5|figs] [--runs 10] [--fig-runs 1]
    python -m experiments.exp_yang2014 --rows 1500 --runs 1 --k 8 --p 5 --out-dir /tmp/x
    python -m experiments.exp_yang2014 --report [--out-dir DIR]   # Markdown tables
"""

from __future__ import annotations

import argparse
import copy
import csv
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from experiments import _bench

CONFIG = _bench.REPO_ROOT / "conf" / "adult_psk_yang2014.yaml"
QI_ORDER = ["age", "sex", "race", "education", "native-country", "workclass", "fnlwgt"]
"""The paper's attribute list (section 5.1), in its order; |QI| = n takes the first n."""
FNLWGT_DIGITS = 6
TABLE5_K = (8, 10, 12)
TABLE5_P = (5, 6, 7)
FIG_K = (10, 12)
FIG_P = (2, 3, 4, 5, 6, 7)
FIG4_QI = (3, 5, 7)
PAPER_TABLE5 = {
    (8, 5): (0.14831, 3.01804),
    (8, 6): (0.15413, 3.03963),
    (8, 7): (0.16455, 3.05008),
    (10, 5): (0.19341, 3.23690),
    (10, 6): (0.19403, 3.28224),
    (10, 7): (0.19521, 3.31970),
    (12, 5): (0.21557, 3.34189),
    (12, 6): (0.21878, 3.40647),
    (12, 7): (0.21946, 3.47562),
}
"""Yang et al. 2014, Table 5: (k, p) -> (AVG-IL, AVG-Ent), each the mean of 10 runs."""
LABELS = {"maa_sae": "MAA-SAE", "maa_minil": "MAA-MINIL", "gpkc": "GPKC"}
STYLES = {
    "maa_sae": ("tab:blue", "o", "-"),
    "maa_minil": ("tab:green", "^", ":"),
    "gpkc": ("tab:orange", "s", "--"),
}
METRICS = [
    "AVG_IL",
    "AVG_Ent",
    "CAVG",
    "NCP",
    "GCP",
    "classes",
    "seconds",
    "cpu_seconds",
    "cluster_seconds",
]
RUN_FIELDS = [
    "qi",
    "k",
    "p",
    "algorithm",
    "seed",
    "rows_in",
    "rows_out",
    "blocks",
    "verified",
    *METRICS,
    "code_sha",
]
STATS = ("mean", "std")


def figures(fig_k: tuple[int, ...], fig4_qi: tuple[int, ...]) -> dict[str, dict[str, Any]]:
    """Each figure's panels ((|QI|, k) pairs) and the two algorithms it compares."""
    return {
        "fig2": {"panels": [(7, k) for k in fig_k], "algorithms": ["maa_sae", "maa_minil"]},
        "fig3": {"panels": [(7, k) for k in fig_k], "algorithms": ["maa_sae", "gpkc"]},
        "fig4": {"panels": [(q, max(fig_k)) for q in fig4_qi], "algorithms": ["maa_sae", "gpkc"]},
    }


def fnlwgt_subset(source: Path, out: Path, rows: int | None = None) -> int:
    """Write the header and the rows whose fnlwgt has 6 digits (the first ``rows`` of them).

    Lines are copied unchanged, in file order.

    Returns:
        The number of data rows written.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with source.open(encoding="utf-8", newline="") as src, out.open("w", encoding="utf-8") as dst:
        header = src.readline()
        col = next(csv.reader([header])).index("fnlwgt")
        dst.write(header)
        for line in src:
            if rows is not None and written >= rows:
                break
            value = next(csv.reader([line]))[col].strip()
            if len(value) == FNLWGT_DIGITS and value.isascii() and value.isdigit():
                dst.write(line)
                written += 1
    return written


def build_config(
    base: dict, csv_path: Path, out_path: Path, qi: int, k: int, p: int, alg: str, seed: int
) -> dict:
    """Yang et al. 2014 config with the first ``qi`` attributes, the model, algorithm and seed."""
    names = [a["name"] for a in base["attributes"]]
    if names != QI_ORDER:
        raise RuntimeError(f"{CONFIG} lists {names}, expected the paper's order {QI_ORDER}")
    raw = copy.deepcopy(base)
    raw["input"]["path"] = str(csv_path)
    raw["attributes"] = raw["attributes"][:qi]
    raw["model"] = {"name": "p_sensitive", "k": k, "p": p}
    raw["algorithm"] = {**raw.get("algorithm", {}), "name": alg}
    raw["output"]["path"] = str(out_path)
    raw["seed"] = seed
    return raw


def run_one(base: dict, csv_path: Path, qi: int, k: int, p: int, alg: str, seed: int) -> dict:
    """One local-engine job; returns its row of the runs CSV."""
    raw = build_config(base, csv_path, csv_path.parent / "out", qi, k, p, alg, seed)
    m = _bench.run_local(raw, source=f"{CONFIG.name} (|QI|={qi}, k={k}, p={p}, {alg})")
    run = {
        "qi": qi,
        "k": k,
        "p": p,
        "algorithm": alg,
        "seed": seed,
        "rows_in": m["rows_in"],
        "rows_out": m["rows_out"],
        "blocks": m["blocks"],
        "verified": m["verified"],
        "AVG_IL": m["AVG_IL"],
        "AVG_Ent": m["AVG_Ent"],
        "CAVG": m["CAVG"],
        "NCP": m["NCP"],
        "GCP": m["GCP"],
        "classes": m["classes"],
        "seconds": round(m["wall_seconds"], 3),
        "cpu_seconds": round(m["cpu_seconds"], 3),
        "cluster_seconds": m["seconds"].get("cluster"),
    }
    print(
        f"|QI|={qi} k={k:>2} p={p} {alg:<9} seed={seed:>2} AVG-IL={run['AVG_IL']:.5f} "
        f"AVG-Ent={run['AVG_Ent']:.5f} CAVG={run['CAVG']:.3f} classes={run['classes']} "
        f"verified={run['verified']} {run['seconds']:.2f}s (CPU {run['cpu_seconds']:.2f}s)",
        flush=True,
    )
    return run


def summarise(runs: list[dict], keys: tuple[str, ...]) -> list[dict]:
    """Mean and standard deviation of each metric per value of ``keys`` (first-seen order)."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault(tuple(r[key] for key in keys), []).append(r)
    out = []
    for key, rs in groups.items():
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row["runs"] = len(rs)
        row["all_verified"] = all(bool(r["verified"]) for r in rs)
        for m in METRICS:
            vals = [float(r[m]) for r in rs]
            row[f"{m}_mean"] = statistics.fmean(vals)
            row[f"{m}_std"] = statistics.stdev(vals) if len(vals) > 1 else 0.0
        out.append(row)
    return out


def table5_summary(runs: list[dict]) -> list[dict]:
    """Per (k, p): our means beside the paper's Table 5 (blank where the paper has none)."""
    out = []
    for row in summarise(runs, ("k", "p")):
        paper = PAPER_TABLE5.get((row["k"], row["p"]))
        row["paper_AVG_IL"] = paper[0] if paper else ""
        row["paper_AVG_Ent"] = paper[1] if paper else ""
        row["AVG_IL_ratio"] = row["AVG_IL_mean"] / paper[0] if paper else ""
        row["AVG_Ent_diff"] = row["AVG_Ent_mean"] - paper[1] if paper else ""
        out.append(row)
    return out


def plot_figure(summary: list[dict], name: str, fig: dict, title: str, path: Path) -> None:
    """AVG-IL (top row) and AVG-Ent (bottom row) against p, one column per panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = fig["panels"]
    figure, axes = plt.subplots(
        2, len(panels), figsize=(4.2 * len(panels), 6.6), squeeze=False, sharex=True
    )
    for col, (qi, k) in enumerate(panels):
        for row, (metric, ylabel) in enumerate([("AVG_IL", "AVG-IL"), ("AVG_Ent", "AVG-Ent")]):
            ax = axes[row][col]
            for alg in fig["algorithms"]:
                pts = sorted(
                    (r for r in summary if (r["qi"], r["k"], r["algorithm"]) == (qi, k, alg)),
                    key=lambda r: r["p"],
                )
                if not pts:
                    continue
                color, marker, line = STYLES[alg]
                ps = [r["p"] for r in pts]
                mean = [r[f"{metric}_mean"] for r in pts]
                std = [r[f"{metric}_std"] for r in pts]
                ax.plot(ps, mean, color=color, marker=marker, linestyle=line, label=LABELS[alg])
                if any(std):
                    ax.fill_between(
                        ps,
                        [m - s for m, s in zip(mean, std, strict=True)],
                        [m + s for m, s in zip(mean, std, strict=True)],
                        color=color,
                        alpha=0.18,
                        linewidth=0,
                    )
            ax.set_title(f"{ylabel}, |QI|={qi}, k={k}")
            ax.grid(True, alpha=0.3)
            if col == 0:
                ax.set_ylabel(ylabel)
            if row == 1:
                ax.set_xlabel("p")
            ax.legend()
    figure.suptitle(f"Yang et al. 2014 {name}: {title}")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run_table5(args: argparse.Namespace, base: dict, csv_path: Path, meta: dict) -> None:
    sha = meta["code_sha"]
    ks = tuple(args.k) if args.k else TABLE5_K
    ps = tuple(args.p) if args.p else TABLE5_P
    runs = []
    for k in ks:
        for p in ps:
            for seed in range(1, args.runs + 1):
                run = run_one(base, csv_path, len(QI_ORDER), k, p, "maa_sae", seed)
                runs.append({**run, "code_sha": sha})
    fields = ["k", "p", "runs", "all_verified"]
    fields += [f"{m}_{s}" for m in METRICS for s in STATS]
    fields += ["paper_AVG_IL", "paper_AVG_Ent", "AVG_IL_ratio", "AVG_Ent_diff"]
    _bench.write_csv(args.out_dir / "yang2014_table5_runs.csv", runs, RUN_FIELDS)
    _bench.write_csv(args.out_dir / "yang2014_table5.csv", table5_summary(runs), fields)
    _bench.write_json(args.out_dir / "yang2014_table5.meta.json", meta)
    print(f"wrote {args.out_dir}/yang2014_table5_runs.csv, yang2014_table5.csv")


def run_figures(args: argparse.Namespace, base: dict, csv_path: Path, meta: dict) -> None:
    sha, rows = meta["code_sha"], meta["rows"]
    figs = figures(tuple(args.k) if args.k else FIG_K, tuple(args.qi))
    ps = tuple(args.p) if args.p else FIG_P
    settings: dict[tuple[int, int, str], list[str]] = {}
    for name, fig in figs.items():
        for qi, k in fig["panels"]:
            for alg in fig["algorithms"]:
                settings.setdefault((qi, k, alg), []).append(name)
    runs = []
    for (qi, k, alg), _names in settings.items():
        for p in ps:
            for seed in range(1, args.fig_runs + 1):
                runs.append({**run_one(base, csv_path, qi, k, p, alg, seed), "code_sha": sha})
    summary = summarise(runs, ("qi", "k", "p", "algorithm"))
    for row in summary:
        row["figures"] = " ".join(settings[(row["qi"], row["k"], row["algorithm"])])
    fields = ["qi", "k", "p", "algorithm", "figures", "runs", "all_verified"]
    fields += [f"{m}_{s}" for m in METRICS for s in STATS]
    _bench.write_csv(args.out_dir / "yang2014_figs_runs.csv", runs, RUN_FIELDS)
    _bench.write_csv(args.out_dir / "yang2014_figs.csv", summary, fields)
    n = f"{rows:,} rows, mean of {args.fig_runs} seed(s)"
    titles = {
        "fig2": f"MAA-SAE vs MAA-MINIL ({n})",
        "fig3": f"MAA-SAE vs GPKC ({n})",
        "fig4": f"MAA-SAE vs GPKC by |QI| ({n})",
    }
    for name, fig in figs.items():
        plot_figure(summary, name, fig, titles[name], args.out_dir / f"yang2014_{name}.png")
    _bench.write_json(args.out_dir / "yang2014_figs.meta.json", meta)
    print(f"wrote {args.out_dir}/yang2014_figs_runs.csv, yang2014_figs.csv, yang2014_fig2-4.png")


def report(out_dir: Path) -> int:
    """Markdown tables of ``yang2014_table5.csv`` and ``yang2014_figs.csv`` (those present)."""
    import pandas as pd

    t5_path, figs_path = out_dir / "yang2014_table5.csv", out_dir / "yang2014_figs.csv"
    if not t5_path.is_file() and not figs_path.is_file():
        print(f"no yang2014_table5.csv or yang2014_figs.csv in {out_dir}", file=sys.stderr)
        return 1
    if t5_path.is_file():
        df = pd.read_csv(t5_path)
        print("Table 5 (MAA-SAE, |QI| = 7): ours (mean ± std over the runs) beside the paper's.")
        print()
        print(
            "| k | p | runs | AVG-IL ours | AVG-IL paper | ours/paper | AVG-Ent ours "
            "| AVG-Ent paper | ours-paper | CAVG | classes | CPU s | verified |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for _, r in df.iterrows():
            has_paper = pd.notna(r["paper_AVG_IL"])
            paper_il = f"{r['paper_AVG_IL']:.5f}" if has_paper else "-"
            paper_ent = f"{r['paper_AVG_Ent']:.5f}" if has_paper else "-"
            ratio = f"{r['AVG_IL_ratio']:.3f}" if has_paper else "-"
            diff = f"{r['AVG_Ent_diff']:+.3f}" if has_paper else "-"
            print(
                f"| {r['k']} | {r['p']} | {r['runs']} "
                f"| {r['AVG_IL_mean']:.5f} ± {r['AVG_IL_std']:.5f} | {paper_il} | {ratio} "
                f"| {r['AVG_Ent_mean']:.5f} ± {r['AVG_Ent_std']:.5f} | {paper_ent} | {diff} "
                f"| {r['CAVG_mean']:.3f} | {r['classes_mean']:.0f} "
                f"| {r['cpu_seconds_mean']:.1f} | {bool(r['all_verified'])} |"
            )
        print()
    if figs_path.is_file():
        df = pd.read_csv(figs_path)
        ks = sorted({int(k) for k in df.loc[df["qi"] == len(QI_ORDER), "k"]}) or list(FIG_K)
        qis = sorted({int(q) for q in df["qi"]})
        for name, fig in figures(tuple(ks), tuple(qis)).items():
            a, b = fig["algorithms"]
            la, lb = LABELS[a], LABELS[b]
            print(f"Figure {name[-1]}: {la} (A) against {lb} (B), mean over the seeds.")
            print()
            print(
                "| \\|QI\\| | k | p | AVG-IL A | AVG-IL B | AVG-Ent A | AVG-Ent B "
                "| CAVG A | CAVG B | CPU s A / B | verified |"
            )
            print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
            for qi, k in fig["panels"]:
                sel = df[(df["qi"] == qi) & (df["k"] == k)]
                ra = sel[sel["algorithm"] == a].set_index("p")
                rb = sel[sel["algorithm"] == b].set_index("p")
                for p in sorted(set(ra.index) & set(rb.index)):
                    x, y = ra.loc[p], rb.loc[p]
                    print(
                        f"| {qi} | {k} | {p} | {x['AVG_IL_mean']:.5f} | {y['AVG_IL_mean']:.5f} "
                        f"| {x['AVG_Ent_mean']:.5f} | {y['AVG_Ent_mean']:.5f} "
                        f"| {x['CAVG_mean']:.3f} | {y['CAVG_mean']:.3f} "
                        f"| {x['cpu_seconds_mean']:.1f} / {y['cpu_seconds_mean']:.1f} "
                        f"| {bool(x['all_verified']) and bool(y['all_verified'])} |"
                    )
            print()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["table5", "figs"], help="run one experiment only")
    parser.add_argument("--rows", type=int, help="first N rows of the 6-digit-fnlwgt subset")
    parser.add_argument("--runs", type=int, default=10, help="Table 5 runs (seeds 1..N)")
    parser.add_argument("--fig-runs", type=int, default=1, help="figure runs (seeds 1..N)")
    parser.add_argument("--k", type=int, nargs="+", help="k values (default: the paper's)")
    parser.add_argument("--p", type=int, nargs="+", help="p values (default: the paper's)")
    parser.add_argument("--qi", type=int, nargs="+", default=list(FIG4_QI), help="Figure 4 |QI|")
    _bench.add_run_arguments(parser)
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir)
    if any(not 1 <= q <= len(QI_ORDER) for q in args.qi):
        parser.error(f"--qi values must be in 1..{len(QI_ORDER)}")

    _sha, prov = _bench.use_code(args.code, args.in_place)
    base = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="exp_yang2014_") as tmp:
        csv_path = Path(tmp) / "adult_fnlwgt6.csv"
        rows = fnlwgt_subset(_bench.ADULT_CSV, csv_path, args.rows)
        print(f"{rows:,} rows with a 6-digit fnlwgt in {csv_path}", flush=True)
        meta = {
            "command": _bench.command_line(),
            "config": str(CONFIG.relative_to(_bench.REPO_ROOT)),
            "rows": rows,
            **prov,
        }
        if args.only in (None, "table5"):
            run_table5(args, base, csv_path, meta)
        if args.only in (None, "figs"):
            run_figures(args, base, csv_path, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
