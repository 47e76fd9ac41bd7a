"""Condensation on Adult: covariance compatibility and classification (issue 24, targets 2-3).

Reproduces docs/experiments.md, "Condensation: covariance compatibility and classification".

Aggarwal 2015, section 20.3.1.4 (Aggarwal and Yu 2004). Attributes: Adult's six numeric
columns of ``conf/adult_condense.yaml`` (age, fnlwgt, education-num, capital-gain,
capital-loss, hours-per-week); label ``income``; seed ``--seed`` (default 7, as the config).

**Target 2 (covariance compatibility), static.** The product's job: the config run on the
local engine (``commit=False``, in this process, as ``sparkanon run conf/adult_condense.yaml
--engine local --set model.k=K``) over all 45,222 rows (``--rows`` keeps the first N), for
each k in ``--k`` (default 5, 10, 20, 50). ``product`` is ``covariance_compatibility`` from
its metrics (raw units, the whole table); the script recomputes it from the published
table against the input (``raw``, the same function,
:func:`sparkanon.algorithms.condensation.compatibility.covariance_compatibility`) and fails
if the two differ by more than 1e-9. It also reports:

* ``standardized``: the same measure after dividing every column of both tables by the
  ORIGINAL column's standard deviation (the covariance matrices become ``D^-1 C D^-1``);
* ``offdiag``: the Pearson correlation between the 15 off-diagonal entries of the two
  standardized matrices (the pairwise correlations: the association structure alone);
* ``independent``: the measure for a release that keeps every column's variance and no
  association at all, i.e. the original's covariance against its own diagonal (what an
  independent shuffle of every column has in expectation): the floor a measure must clear
  to say anything about the associations;
* the same readings per income class: the original rows of a class against the synthetic
  records whose drawn income is that class (what a classifier of the release reads).

**Target 2, streaming.** The dynamic algorithm the stream runs, in this process without
Spark: :func:`sparkanon.families.synthesis.condense_stream.initial_state` on the first
``--initial-share`` (default 10%) of the rows in file order, then the rest in
``--batches`` (default 20) equal batches, file order, through
:class:`~sparkanon.families.synthesis.condense_stream.StreamStep` (state as bytes between batches;
``release_pending = k``, ``release_age = 3`` and ``significance = 1e-9``, the stream's
defaults). Two readings: ``released`` = the synthetic records the stream released by its
last batch, against ALL input rows; ``flushed`` = those plus, after the last batch, every
group's pending records drawn as a release would (also where fewer than ``k`` are
pending, which the stream never releases; a measurement, not a release), so every record
is represented once. The synthetic draws use ``SPARKANON_KEY`` if set, else a fresh key.
Also: splits (``(next_id - initial groups) / 2``: each split takes two
new ids), final groups, and their size distribution.

**Target 3 (classification).** Train on the first 30,162 rows (``adult.data``;
``--train-rows``), score on the remaining 15,060 (``adult.test``) on their ORIGINAL values.
Condensation (the config at k) and Mondrian (``conf/adult_mondrian_k.yaml``'s algorithm,
strict, publish generalized, with the condensation config's six attributes, ``income`` as
the sensitive column (published unchanged), the same k and the same blocking, 5,000 rows)
are run on the train split only. Mondrian's generalized values (``[a, b]``, or a single
value) are read as their interval's midpoint. The classifier: logistic regression on the six
attributes standardized by the training set's own means and deviations, fitted by Newton's
method (iteratively reweighted least squares, ridge 1e-6, at most 50 steps, stop when no
coefficient moves by 1e-10): deterministic, no tuning, and a linear model reads the first
and second moments, which is what condensation claims to keep. Condensation's income is
drawn from its group's frequencies (``docs/method.md``): that is the label it learns from.
A variant, ``condensation_per_class``: each income class of the train split condensed on its
own (the job over that class's rows; the synthetic records carry the class), the way a
labelled data set can be condensed so that no label is drawn. Accuracy for: the original
train rows, condensation, condensation per class, Mondrian; and the majority class.

Writes, under ``--out-dir`` (default ``docs/bench/``): ``condensation_compat.csv``,
``condensation_clf.csv``, ``condensation.meta.json`` (command, rows, code, machine) and
``condensation.png``.

Usage::

    python -m experiments.exp_condensation                  # a few minutes on one core
    python -m experiments.exp_condensation --rows 1500 --train-rows 1000 --k 5 --out-dir /tmp/x
    python -m experiments.exp_condensation --report [--out-dir DIR]   # Markdown tables
    python -m experiments.exp_condensation --plot [--out-dir DIR]     # the figure, from the CSVs
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments import _bench

ATTRIBUTES = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
LABEL = "income"
POSITIVE = ">50K"
KS = (5, 10, 20, 50)
TRAIN_ROWS = 30_162
BLOCK_ROWS = 5000
CONDENSE_CONFIG = _bench.REPO_ROOT / "conf" / "adult_condense.yaml"
MONDRIAN_CONFIG = _bench.REPO_ROOT / "conf" / "adult_mondrian_k.yaml"
COMPAT_FIELDS = [
    "mode",
    "k",
    "reading",
    "records",
    "synthetic",
    "product",
    "raw",
    "standardized",
    "offdiag",
    "independent_raw",
    "independent_standardized",
    "groups",
    "splits",
    "size_min",
    "size_median",
    "size_max",
    "size_mean",
    "seconds",
    "rows",
    "seed",
    "code_sha",
]
CLF_FIELDS = [
    "k",
    "acc_original",
    "acc_condensation",
    "acc_condensation_per_class",
    "acc_mondrian",
    "acc_majority",
    "condensation_positive_share",
    "mondrian_positive_share",
    "original_positive_share",
    "condensation_groups",
    "mondrian_classes",
    "train_rows",
    "test_rows",
    "seed",
    "code_sha",
]


def load_config(path: Path) -> dict[str, Any]:
    """A YAML config as a mapping."""
    import yaml

    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def condense_config(k: int, input_path: Path, seed: int) -> dict[str, Any]:
    """``conf/adult_condense.yaml`` at ``k`` over ``input_path``."""
    raw = load_config(CONDENSE_CONFIG)
    raw["input"]["path"] = str(input_path)
    raw["model"]["k"] = k
    raw["partitioning"] = {"max_block_rows": BLOCK_ROWS}
    raw["output"]["path"] = str(Path(tempfile.gettempdir()) / "exp_condensation_unused")
    raw["seed"] = seed
    return raw


def mondrian_config(k: int, input_path: Path) -> dict[str, Any]:
    """``conf/adult_mondrian_k.yaml``'s algorithm over the condensation config's attributes."""
    raw = load_config(MONDRIAN_CONFIG)
    raw["attributes"] = load_config(CONDENSE_CONFIG)["attributes"]
    raw["sensitive"] = {"name": LABEL}
    raw["input"]["path"] = str(input_path)
    raw["model"]["k"] = k
    raw["partitioning"] = {"max_block_rows": BLOCK_ROWS}
    raw["output"]["path"] = str(Path(tempfile.gettempdir()) / "exp_condensation_unused")
    return raw


def run_job(raw: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A config on the local engine, not committed: the published rows and the metrics."""
    from sparkanon.engine.local import LocalEngine
    from sparkanon.families import parse_config
    from sparkanon.pipeline import run_job as run

    result = run(LocalEngine(), parse_config(raw, source="<exp_condensation>"), commit=False)
    if not result.metrics.get("verified"):
        raise RuntimeError("the release was not verified")
    return pd.DataFrame(result.published), dict(result.metrics)


def covariance(values: np.ndarray) -> np.ndarray:
    """The population covariance of the rows (columns are attributes)."""
    return np.cov(np.asarray(values, dtype=np.float64), rowvar=False, bias=True)


def compatibilities(original: np.ndarray, synthetic: np.ndarray) -> dict[str, float]:
    """Raw, standardized and off-diagonal readings of the measure, and the independent floor.

    Args:
        original: the original rows (attributes as columns).
        synthetic: the synthetic rows, same columns.
    """
    from sparkanon.algorithms.condensation.compatibility import (
        correlation_compatibility,
        covariance_compatibility,
    )

    co, cs = covariance(original), covariance(synthetic)
    d = np.sqrt(np.diag(co))
    d = np.where(d > 0, d, 1.0)
    so, ss = co / np.outer(d, d), cs / np.outer(d, d)
    return {
        "raw": covariance_compatibility(co, cs),
        "standardized": covariance_compatibility(so, ss),
        "offdiag": correlation_compatibility(co, cs),
        "independent_raw": covariance_compatibility(co, np.diag(np.diag(co))),
        "independent_standardized": covariance_compatibility(so, np.diag(np.diag(so))),
    }


def size_stats(sizes: np.ndarray) -> dict[str, Any]:
    """Min, median, max and mean of the group sizes."""
    return {
        "groups": len(sizes),
        "size_min": int(sizes.min()),
        "size_median": float(np.median(sizes)),
        "size_max": int(sizes.max()),
        "size_mean": round(float(sizes.mean()), 3),
    }


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {key: round(float(v), 6) for key, v in values.items()}


def run_static(
    input_path: Path,
    original: np.ndarray,
    original_labels: np.ndarray,
    k: int,
    seed: int,
    common: dict[str, Any],
) -> list[dict[str, Any]]:
    """Target 2, static: the product's job at ``k`` and the measure's readings.

    Rows: ``all`` (the whole table, the product's figure beside the script's), then one per
    income class: the original rows of that class against the synthetic records whose
    drawn income is that class.
    """
    start = time.perf_counter()
    published, metrics = run_job(condense_config(k, input_path, seed))
    synthetic = published[list(ATTRIBUTES)].to_numpy(dtype=np.float64)
    found = compatibilities(original, synthetic)
    product = float(metrics["covariance_compatibility"])
    if abs(product - found["raw"]) > 1e-4:  # metrics.json rounds it to 4 decimals
        raise RuntimeError(f"k={k}: metrics.json says {product}, the table gives {found['raw']}")
    seconds = round(time.perf_counter() - start, 1)
    # no group id is published: the sizes are metrics.json's (the smallest, the mean)
    sizes = {
        "groups": metrics["groups"],
        "size_min": metrics["group_size"]["min"],
        "size_median": "",
        "size_max": "",
        "size_mean": round(len(published) / metrics["groups"], 3),
    }
    drawn = labels(published)
    rows = []
    for reading, keep, keep_synthetic in (
        ("all", slice(None), slice(None)),
        ("income<=50K", original_labels == 0, drawn == 0),
        ("income>50K", original_labels == 1, drawn == 1),
    ):
        rows.append(
            {
                **common,
                "mode": "static",
                "k": k,
                "reading": reading,
                "records": len(original[keep]),
                "synthetic": len(synthetic[keep_synthetic]),
                "product": round(product, 6) if reading == "all" else "",
                **_rounded(compatibilities(original[keep], synthetic[keep_synthetic])),
                **sizes,
                "splits": "",
                "seconds": seconds,
            }
        )
    return rows


def run_stream(
    original: np.ndarray,
    k: int,
    seed: int,
    initial_share: float,
    batches: int,
    common: dict[str, Any],
) -> list[dict[str, Any]]:
    """Target 2, streaming: the stream's step in-process; the released and flushed readings."""
    from sparkanon.algorithms.condensation._params import CondensationParams
    from sparkanon.algorithms.condensation.synthesize import GroupDraws, synthetic_records
    from sparkanon.families.synthesis.condense_stream import StreamState, StreamStep, initial_state
    from sparkanon.randomness import RunKey
    from sparkanon.randomness.streams import SYNTHESIS_STREAM_AXES

    start = time.perf_counter()
    significance = CondensationParams(name="condensation").significance
    first = max(k, int(round(initial_share * len(original))))
    state = initial_state(original[:first], k, seed)
    initial_groups = len(state.groups.stats)
    first_id = state.next_id
    key = RunKey.for_run()
    step = StreamStep(ATTRIBUTES, k, key, k, 3, significance)
    data = state.to_bytes()
    released = []
    for chunk in np.array_split(np.arange(first, len(original)), batches):
        rows = pd.DataFrame(original[chunk], columns=list(ATTRIBUTES))
        data, out = step("adult", data, rows)
        released.append(out[list(ATTRIBUTES)].to_numpy(dtype=np.float64))
    final = StreamState.from_bytes(data)
    if not final.accounted() or final.seen != len(original):
        raise RuntimeError(f"k={k}: the stream's accounting broke")
    # The flush is a measurement, never published: every group's pending records drawn as
    # a release would, also where fewer than k are pending (a release refuses those).
    g = final.groups
    flush = [
        synthetic_records(s, s.count - r, GroupDraws(key, i, r, SYNTHESIS_STREAM_AXES))
        for s, r, i in zip(g.stats, g.released, g.ids, strict=True)
        if s.count > r
    ]
    flush = np.concatenate(flush) if flush else np.zeros((0, len(ATTRIBUTES)))
    during = np.concatenate(released) if released else np.zeros((0, len(ATTRIBUTES)))
    flushed = np.concatenate([during, flush])
    if len(flushed) != len(original):
        raise RuntimeError(f"k={k}: {len(flushed)} synthetic records for {len(original)} rows")
    sizes = np.array([s.count for s in final.groups.stats])
    seconds = round(time.perf_counter() - start, 1)
    rows = []
    for reading, synthetic in (("released", during), ("flushed", flushed)):
        rows.append(
            {
                **common,
                "mode": "stream",
                "k": k,
                "reading": reading,
                "records": len(original),
                "synthetic": len(synthetic),
                "product": "",
                **_rounded(compatibilities(original, synthetic)),
                **size_stats(sizes),
                "splits": (final.next_id - first_id) // 2,
                "seconds": seconds,
            }
        )
    print(
        f"stream k={k}: {initial_groups} initial groups on {first} rows, "
        f"{rows[0]['splits']} splits, {len(sizes)} groups, {len(during)} released "
        f"+ {len(flush)} flushed, {seconds}s"
    )
    return rows


def interval_midpoints(column: pd.Series) -> np.ndarray:
    """Mondrian's generalized values read as numbers: ``[a, b]`` -> (a + b) / 2, ``a`` -> a."""
    text = column.astype(str).str.strip()
    pattern = re.compile(r"^\[\s*(-?[\d.eE+-]+)\s*,\s*(-?[\d.eE+-]+)\s*\]$")
    parts = text.str.extract(pattern)
    single = pd.to_numeric(text, errors="coerce")
    lo, hi = pd.to_numeric(parts[0], errors="coerce"), pd.to_numeric(parts[1], errors="coerce")
    out = np.where(lo.notna(), (lo + hi) / 2.0, single)
    if np.isnan(out).any():
        bad = text[np.isnan(out)].iloc[0]
        raise RuntimeError(f"{column.name}: a generalized value is not an interval: {bad!r}")
    return out.astype(np.float64)


def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = 1e-6) -> tuple[np.ndarray, ...]:
    """Logistic regression by Newton's method on standardized features.

    Returns:
        The training means, deviations and the coefficients (intercept first).
    """
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    z = np.column_stack([np.ones(len(x)), (x - mean) / std])
    w = np.zeros(z.shape[1])
    penalty = ridge * np.eye(z.shape[1])
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -35.0, 35.0)))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + penalty + 1e-12 * np.eye(len(w))
        move = np.linalg.solve(hessian, gradient)
        w = w - move
        if np.max(np.abs(move)) < 1e-10:
            break
    return mean, std, w


def accuracy(model: tuple[np.ndarray, ...], x: np.ndarray, y: np.ndarray) -> float:
    """The share of rows whose predicted class (probability >= 1/2) is their class."""
    mean, std, w = model
    score = w[0] + ((x - mean) / std) @ w[1:]
    return float(np.mean((score >= 0) == (y == 1)))


def labels(frame: pd.DataFrame) -> np.ndarray:
    """1 for ``>50K``, 0 otherwise."""
    return (frame[LABEL].astype(str).str.strip() == POSITIVE).to_numpy(dtype=np.float64)


def class_files(train: pd.DataFrame, folder: Path) -> dict[str, Path]:
    """The train split's rows of each income class, one CSV per class (input order kept)."""
    out = {}
    for i, (value, rows) in enumerate(train.groupby(LABEL, sort=True)):
        out[str(value)] = folder / f"train_class{i}.csv"
        rows.to_csv(out[str(value)], index=False)
    return out


def condensed_per_class(paths: dict[str, Path], k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every class condensed on its own (the job per class file); its rows carry the class."""
    xs, ys = [], []
    for value, path in paths.items():
        published, _ = run_job(condense_config(k, path, seed))
        xs.append(published[list(ATTRIBUTES)].to_numpy(dtype=np.float64))
        ys.append(np.full(len(published), float(value == POSITIVE)))
    return np.concatenate(xs), np.concatenate(ys)


def run_clf(
    train_path: Path,
    class_paths: dict[str, Path],
    train: pd.DataFrame,
    test: pd.DataFrame,
    k: int,
    seed: int,
    common: dict,
) -> dict[str, Any]:
    """Target 3 at ``k``: accuracy on the test split of the four training sets."""
    start = time.perf_counter()
    cols = list(ATTRIBUTES)
    x_test, y_test = test[cols].to_numpy(dtype=np.float64), labels(test)
    x_orig, y_orig = train[cols].to_numpy(dtype=np.float64), labels(train)
    condensed, cmetrics = run_job(condense_config(k, train_path, seed))
    mondrian, _ = run_job(mondrian_config(k, train_path))
    if len(mondrian) != len(train) or len(condensed) != len(train):
        raise RuntimeError(f"k={k}: a release does not hold one row per train row")
    x_mond = np.column_stack([interval_midpoints(mondrian[c]) for c in cols])
    found = {
        "original": (x_orig, y_orig),
        "condensation": (condensed[cols].to_numpy(dtype=np.float64), labels(condensed)),
        "mondrian": (x_mond, labels(mondrian)),
        "condensation_per_class": condensed_per_class(class_paths, k, seed),
    }
    acc = {name: accuracy(fit_logistic(x, y), x_test, y_test) for name, (x, y) in found.items()}
    majority = max(float(y_test.mean()), 1 - float(y_test.mean()))
    row = {
        **common,
        "k": k,
        **{f"acc_{name}": round(a, 6) for name, a in acc.items()},
        "acc_majority": round(majority, 6),
        **{
            f"{n}_positive_share": round(float(y.mean()), 6)
            for n, (_, y) in found.items()
            if n != "condensation_per_class"  # the original's, by construction
        },
        "condensation_groups": cmetrics["groups"],
        "mondrian_classes": mondrian.groupby(cols).ngroups,
        "train_rows": len(train),
        "test_rows": len(test),
    }
    print(
        f"clf k={k}: original {acc['original']:.4f} condensation {acc['condensation']:.4f} "
        f"per class {acc['condensation_per_class']:.4f} mondrian {acc['mondrian']:.4f} "
        f"majority {majority:.4f} "
        f"{time.perf_counter() - start:.1f}s"
    )
    return row


def plot(compat: list[dict[str, Any]], clf: list[dict[str, Any]], path: Path) -> None:
    """Compatibility against k (static and stream, three readings) and accuracy against k."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    styles = {"raw": "-", "standardized": "--", "offdiag": ":"}
    for mode, reading, marker in (
        ("static", "all", "o"),
        ("static", "income<=50K", "^"),
        ("stream", "flushed", "s"),
    ):
        rows = [r for r in compat if r["mode"] == mode and r["reading"] == reading]
        for field, style in styles.items():
            left.plot(
                [int(r["k"]) for r in rows],
                [float(r[field]) for r in rows],
                style,
                marker=marker,
                label=f"{mode} {reading} {field}",
            )
    left.axhline(0.95, color="grey", lw=0.8)
    left.set_xlabel("k (group size)")
    left.set_ylabel("covariance compatibility")
    left.set_title("Adult, 6 numeric attributes")
    left.legend(fontsize=7)
    for field in (
        "acc_original",
        "acc_condensation",
        "acc_condensation_per_class",
        "acc_mondrian",
        "acc_majority",
    ):
        right.plot(
            [int(r["k"]) for r in clf],
            [float(r[field]) for r in clf],
            marker="o",
            label=field[4:],
        )
    right.set_xlabel("k")
    right.set_ylabel("test accuracy (logistic regression)")
    right.set_title("train on adult.data's release, test on adult.test")
    right.legend(fontsize=7)
    ks = sorted({int(r["k"]) for r in compat} | {int(r["k"]) for r in clf})
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _rows(path: Path) -> list[dict[str, str]]:
    return pd.read_csv(path, dtype=str, keep_default_na=False).to_dict("records")


def report(out_dir: Path) -> int:
    """Print the two Markdown tables from the CSVs."""
    compat = _rows(out_dir / "condensation_compat.csv")
    print(
        "| mode | k | reading | synthetic | product (raw) | raw | standardized | off-diagonal "
        "| independent raw / std | groups | splits | size min / median / max |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---|")
    for r in compat:
        print(
            f"| {r['mode']} | {r['k']} | {r['reading']} | {int(r['synthetic']):,} | "
            f"{r['product'] or '-'} | {r['raw']} | {r['standardized']} | {r['offdiag']} | "
            f"{r['independent_raw']} / {r['independent_standardized']} | {r['groups']} | "
            f"{r['splits'] or '-'} | {r['size_min']} / {r['size_median']} / {r['size_max']} |"
        )
    print()
    print(
        "| k | original | condensation | condensation per class | Mondrian | majority "
        "| condensation groups | Mondrian classes |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in _rows(out_dir / "condensation_clf.csv"):
        print(
            f"| {r['k']} | {float(r['acc_original']):.4f} | {float(r['acc_condensation']):.4f} "
            f"| {float(r['acc_condensation_per_class']):.4f} "
            f"| {float(r['acc_mondrian']):.4f} | {float(r['acc_majority']):.4f} "
            f"| {r['condensation_groups']} | {r['mondrian_classes']} |"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, help="first N rows of data/adult/adult.csv")
    parser.add_argument("--train-rows", type=int, default=TRAIN_ROWS, help="train split rows")
    parser.add_argument("--k", type=int, nargs="+", default=list(KS), help="group sizes")
    parser.add_argument("--seed", type=int, default=7, help="the job seed")
    parser.add_argument("--initial-share", type=float, default=0.1, help="stream's first batch")
    parser.add_argument("--batches", type=int, default=20, help="stream batches after it")
    parser.add_argument("--only", choices=("compat", "clf"), help="run one target only")
    parser.add_argument("--plot", action="store_true", help="redraw the figure from the CSVs")
    _bench.add_run_arguments(parser)
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir)
    if args.plot:
        compat = _rows(args.out_dir / "condensation_compat.csv")
        plot(
            compat, _rows(args.out_dir / "condensation_clf.csv"), args.out_dir / "condensation.png"
        )
        return 0

    sha, prov = _bench.use_code(args.code, args.in_place)
    df = pd.read_csv(_bench.ADULT_CSV, nrows=args.rows)
    if not 0 < args.train_rows < len(df):
        parser.error(f"--train-rows {args.train_rows}: need 1 .. {len(df) - 1} (rows {len(df)})")
    common = {"rows": len(df), "seed": args.seed, "code_sha": sha}
    start = time.perf_counter()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    compat: list[dict[str, Any]] = []
    clf: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="exp_condensation_") as tmp:
        whole = (
            _bench.ADULT_CSV
            if args.rows is None
            else _bench.head_csv(_bench.ADULT_CSV, len(df), Path(tmp) / "adult_head.csv")
        )
        train_path = _bench.head_csv(_bench.ADULT_CSV, args.train_rows, Path(tmp) / "train.csv")
        original = df[list(ATTRIBUTES)].to_numpy(dtype=np.float64)
        train, test = df.iloc[: args.train_rows], df.iloc[args.train_rows :]
        class_paths = class_files(train, Path(tmp)) if args.only != "compat" else {}
        for k in args.k:
            if args.only != "clf":
                rows = run_static(whole, original, labels(df), k, args.seed, common)
                for row in rows:
                    print(
                        f"static k={k} {row['reading']}: product {row['product']} "
                        f"raw {row['raw']} standardized {row['standardized']} "
                        f"offdiag {row['offdiag']} {row['seconds']}s"
                    )
                compat.extend(rows)
                compat.extend(
                    run_stream(original, k, args.seed, args.initial_share, args.batches, common)
                )
            if args.only != "compat":
                clf.append(run_clf(train_path, class_paths, train, test, k, args.seed, common))
    wrote = []
    if compat:
        _bench.write_csv(args.out_dir / "condensation_compat.csv", compat, COMPAT_FIELDS)
        wrote.append("condensation_compat.csv")
    if clf:
        _bench.write_csv(args.out_dir / "condensation_clf.csv", clf, CLF_FIELDS)
        wrote.append("condensation_clf.csv")
    if compat and clf:
        plot(compat, clf, args.out_dir / "condensation.png")
        wrote.append("condensation.png")
    meta = {
        "command": _bench.command_line(),
        "rows": len(df),
        "train_rows": args.train_rows,
        "k": list(args.k),
        "seed": args.seed,
        "attributes": list(ATTRIBUTES),
        "stream": {"initial_share": args.initial_share, "batches": args.batches},
        "max_block_rows": BLOCK_ROWS,
        "seconds": round(time.perf_counter() - start, 1),
        **prov,
    }
    _bench.write_json(args.out_dir / "condensation.meta.json", meta)
    print(f"wrote {args.out_dir}/" + ", ".join([*wrote, "condensation.meta.json"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
