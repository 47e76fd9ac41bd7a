"""(K,L)-clustering against MDAV: the experiments of Chai and Feng 2015 (its Figures 1 and 2).

Reproduces docs/experiments.md, "Chai and Feng 2015: (K,L)-anonymity clustering against
MDAV".

Chai and Feng (2015, section 5) compares the information loss (Figure 1) and the
running time (Figure 2) of its (K,L)-anonymity clustering with "traditional K-anonymity"
as K grows, on the 45,222 rows of Adult with age and education numeric and workclass,
marital-status, race, sex and native-country categorical, occupation sensitive. The paper
gives neither its K values, nor L, nor the baseline's name; we run:

* ``kl_cluster`` (our reading of the paper, ``docs/method.md``) with
  ``model: {name: p_sensitive, k: K, p: L}`` for L = 2..5 (only L <= K);
* MDAV (Domingo-Ferrer and Mateo-Sanz 2002) with ``model: {name: k, k: K}`` as the
  K-anonymity baseline (it ignores L);

for K = 2, 5, 10, 20, 30, 40, 50 (``--k``; ``--l`` for L), on the attribute setting of
``conf/adult_kl_chai2015.yaml`` (published generalized, blocks of at most 2,000 rows),
which the script loads and modifies in Python; the full data, or its first ``--rows``
rows. Every run is a local-engine job (pandas, one process, ``commit=False``); both
algorithms are deterministic, so ``--repeats`` (default 1) only repeats the timing.

Information loss: GCP (percent of the full generalization, Ghinita et al. 2007), NCP
(mean per class, Xu et al. 2006) and AVG-IL (Yang et al. 2014's per-class loss). Time: the wall
and CPU seconds of ``run_job`` and the wall seconds of its ``cluster`` stage (the
algorithm alone, in blocks).

Writes, under ``--out-dir`` (default ``docs/bench/``):

* ``chai2015_runs.csv``: one row per run;
* ``chai2015.csv``: one row per (K, algorithm, L): the quality (the same in every
  repeat; checked) and the mean and minimum of the times over the repeats;
* ``chai2015_gcp.png``: GCP against K, MDAV and kl_cluster at each L as lines;
* ``chai2015_time.png``: CPU seconds of the job and wall seconds of the cluster stage
  against K;
* ``chai2015.meta.json``: the command, rows, code and machine.

Usage::

    python -m experiments.exp_chai2015 [--k 2 5 10 20 30 40 50] [--l 2 3 4 5] [--repeats 1]
    python -m experiments.exp_chai2015 --rows 1500 --k 5 10 --out-dir /tmp/x   # quick
    python -m experiments.exp_chai2015 --report [--out-dir DIR]   # Markdown tables
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from experiments import _bench

CONFIG = _bench.REPO_ROOT / "conf" / "adult_kl_chai2015.yaml"
K_VALUES = (2, 5, 10, 20, 30, 40, 50)
L_VALUES = (2, 3, 4, 5)
QUALITY = ["rows_out", "classes", "published_classes", "size_min", "size_max", "GCP", "NCP"]
QUALITY += ["AVG_IL", "verified"]
TIMES = ["seconds", "cpu_seconds", "cluster_seconds"]
RUN_FIELDS = ["K", "algorithm", "L", "repeat", "rows_in", "blocks", *QUALITY, *TIMES]
RUN_FIELDS += ["code_sha"]
SUMMARY_FIELDS = ["K", "algorithm", "L", "repeats", "rows_in", "blocks", *QUALITY]
SUMMARY_FIELDS += [f"{t}_{s}" for t in TIMES for s in ("mean", "min")] + ["code_sha"]


def settings(ks: tuple[int, ...], ls: tuple[int, ...]) -> list[tuple[int, str, int | None]]:
    """(K, algorithm, L) of every run: MDAV (L ``None``), then kl_cluster for each L <= K."""
    out: list[tuple[int, str, int | None]] = []
    for k in ks:
        out.append((k, "mdav", None))
        out.extend((k, "kl_cluster", lv) for lv in ls if lv <= k)
    return out


def label(alg: str, lv: int | None) -> str:
    """Legend and table label of one method."""
    return "MDAV" if alg == "mdav" else f"(K,L) L={lv}"


def build_config(
    base: dict, csv_path: Path, out_path: Path, k: int, alg: str, lv: int | None
) -> dict:
    """Chai and Feng 2015 config with the model and algorithm of one run."""
    raw = copy.deepcopy(base)
    raw["input"]["path"] = str(csv_path)
    raw["model"] = {"name": "k", "k": k} if lv is None else {"name": "p_sensitive", "k": k, "p": lv}
    params = raw.get("algorithm", {})
    # Parameters belong to their algorithm: keep the config's only for the same algorithm.
    raw["algorithm"] = {**params, "name": alg} if params.get("name") == alg else {"name": alg}
    raw["output"]["path"] = str(out_path)
    return raw


def run_one(
    base: dict, csv_path: Path, out_path: Path, k: int, alg: str, lv: int | None, repeat: int
) -> dict:
    """One local-engine job (``out_path`` is never written); returns its runs-CSV row."""
    raw = build_config(base, csv_path, out_path, k, alg, lv)
    m = _bench.run_local(raw, source=f"{CONFIG.name} (K={k}, L={lv}, {alg})")
    run = {
        "K": k,
        "algorithm": alg,
        "L": "" if lv is None else lv,
        "repeat": repeat,
        "rows_in": m["rows_in"],
        "blocks": m["blocks"],
        "rows_out": m["rows_out"],
        "classes": m["classes"],
        "published_classes": m["published_classes"],
        "size_min": int(m["class_size"]["min"]),
        "size_max": int(m["class_size"]["max"]),
        "GCP": m["GCP"],
        "NCP": m["NCP"],
        "AVG_IL": m["AVG_IL"],
        "verified": m["verified"],
        "seconds": round(m["wall_seconds"], 3),
        "cpu_seconds": round(m["cpu_seconds"], 3),
        "cluster_seconds": m["seconds"].get("cluster"),
    }
    print(
        f"K={k:>2} {label(alg, lv):<12} repeat={repeat} GCP={run['GCP']:.3f}% "
        f"NCP={run['NCP']:.5f} AVG-IL={run['AVG_IL']:.5f} classes={run['classes']} "
        f"sizes {run['size_min']}..{run['size_max']} verified={run['verified']} "
        f"{run['seconds']:.2f}s (CPU {run['cpu_seconds']:.2f}s, cluster "
        f"{run['cluster_seconds']:.2f}s)",
        flush=True,
    )
    return run


def summarise(runs: list[dict]) -> list[dict]:
    """One row per (K, algorithm, L): the quality, and the mean and min of the times."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["K"], r["algorithm"], r["L"]), []).append(r)
    out = []
    for (k, alg, lv), rs in groups.items():
        first = rs[0]
        for r in rs[1:]:
            changed = [q for q in QUALITY if r[q] != first[q]]
            if changed:
                raise RuntimeError(f"K={k} {alg} L={lv}: {changed} differ between repeats")
        row: dict[str, Any] = {"K": k, "algorithm": alg, "L": lv, "repeats": len(rs)}
        row |= {f: first[f] for f in ("rows_in", "blocks", *QUALITY, "code_sha")}
        for t in TIMES:
            vals = [float(r[t]) for r in rs]
            row[f"{t}_mean"] = statistics.fmean(vals)
            row[f"{t}_min"] = min(vals)
        out.append(row)
    return out


def _methods(rows: list[dict]) -> list[tuple[str, Any]]:
    """The (algorithm, L) pairs present, MDAV first, then by L."""
    pairs = {(r["algorithm"], r["L"]) for r in rows}
    return sorted(pairs, key=lambda m: (m[0] != "mdav", int(m[1]) if m[1] != "" else 0))


def plot(summary: list[dict], panels: list[tuple[str, str]], title: str, path: Path) -> None:
    """One panel per (metric column, y label): the metric against K, a line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.0), squeeze=False)
    ks = sorted({r["K"] for r in summary})
    for ax, (metric, ylabel) in zip(axes[0], panels, strict=True):
        for alg, lv in _methods(summary):
            pts = sorted(
                (r for r in summary if r["algorithm"] == alg and r["L"] == lv),
                key=lambda r: r["K"],
            )
            style = (
                {"color": "black", "marker": "s", "linestyle": "--"}
                if alg == "mdav"
                else {"marker": "o"}
            )
            ax.plot(
                [r["K"] for r in pts],
                [float(r[metric]) for r in pts],
                label=label(alg, None if lv == "" else lv),
                **style,
            )
        ax.set_xlabel("K")
        ax.set_xticks(ks)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(path: Path) -> int:
    """Markdown tables of ``chai2015.csv``: information loss and time per K and method."""
    import pandas as pd

    if not path.is_file():
        print(f"no {path}", file=sys.stderr)
        return 1
    df = pd.read_csv(path, keep_default_na=False)
    rows = df.to_dict("records")
    methods = _methods(rows)
    by = {(r["K"], r["algorithm"], r["L"]): r for r in rows}
    names = [label(a, None if lv == "" else lv) for a, lv in methods]
    ks = sorted({r["K"] for r in rows})

    def table(title: str, metric: str, fmt: str) -> None:
        print(title)
        print()
        print("| K | " + " | ".join(names) + " |")
        print("|---:|" + "---:|" * len(names))
        for k in ks:
            cells = [by.get((k, a, lv)) for a, lv in methods]
            print(
                f"| {k} | "
                + " | ".join("-" if c is None else format(float(c[metric]), fmt) for c in cells)
                + " |"
            )
        print()

    table("GCP (percent; lower is better):", "GCP", ".2f")
    table("NCP (mean per class):", "NCP", ".4f")
    table("AVG-IL:", "AVG_IL", ".5f")
    table("CPU seconds of the job (local engine, mean over repeats):", "cpu_seconds_mean", ".1f")
    table("Wall seconds of the cluster stage (mean over repeats):", "cluster_seconds_mean", ".1f")
    print(
        f"{len(rows)} settings, rows in {sorted({int(r['rows_in']) for r in rows})}, every run "
        f"verified: {all(str(r['verified']) == 'True' for r in rows)}; class sizes "
        f"{min(int(r['size_min']) for r in rows)}..{max(int(r['size_max']) for r in rows)}."
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=list(K_VALUES), help="K values")
    parser.add_argument("--l", type=int, nargs="+", default=list(L_VALUES), help="L values")
    parser.add_argument("--rows", type=int, help="first N rows of data/adult/adult.csv")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each setting (timing)")
    _bench.add_run_arguments(parser)
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir / "chai2015.csv")
    if any(lv < 2 for lv in args.l) or any(k < 2 for k in args.k):
        parser.error("(K,L)-anonymity needs K >= 2 and L >= 2 (definition 5)")

    sha, prov = _bench.use_code(args.code, args.in_place)
    base = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    runs = []
    with tempfile.TemporaryDirectory(prefix="exp_chai2015_") as tmp:
        if args.rows is None:
            csv_path = _bench.ADULT_CSV
        else:
            csv_path = _bench.head_csv(_bench.ADULT_CSV, args.rows, Path(tmp) / "adult.csv")
        for k, alg, lv in settings(tuple(args.k), tuple(args.l)):
            for repeat in range(1, args.repeats + 1):
                run = run_one(base, csv_path, Path(tmp) / "out", k, alg, lv, repeat)
                runs.append({**run, "code_sha": sha})
    summary = summarise(runs)
    _bench.write_csv(args.out_dir / "chai2015_runs.csv", runs, RUN_FIELDS)
    _bench.write_csv(args.out_dir / "chai2015.csv", summary, SUMMARY_FIELDS)
    rows = runs[0]["rows_in"] if runs else 0
    meta = {"command": _bench.command_line(), "config": "conf/adult_kl_chai2015.yaml"}
    _bench.write_json(args.out_dir / "chai2015.meta.json", {**meta, "rows": rows, **prov})
    n = f"{rows:,} Adult rows"
    plot(
        summary,
        [("GCP", "GCP (%)")],
        f"Information loss vs K ({n})",
        args.out_dir / "chai2015_gcp.png",
    )
    plot(
        summary,
        [
            ("cpu_seconds_mean", "CPU seconds of the job"),
            ("cluster_seconds_mean", "cluster stage, wall s"),
        ],
        f"Time vs K ({n}, local engine)",
        args.out_dir / "chai2015_time.png",
    )
    print(
        f"wrote {args.out_dir}/chai2015_runs.csv, chai2015.csv, chai2015_gcp.png, chai2015_time.png"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
