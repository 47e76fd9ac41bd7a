"""Randomization on Adult: reconstruction L1 and naive Bayes from reconstructions (issue 23, 2-3).

Reproduces docs/experiments.md, "Randomization: reconstruction and naive Bayes".

Aggarwal 2015, section 20.2 (Agrawal and Srikant 2000; Agrawal and Aggarwal 2001). Every
piece is the product's: rows are perturbed by
:func:`sparkanon.algorithms.perturbation.perturb.perturb_frame` (what the job's ``perturb``
stage runs; noise drawn from a run key, a stream and the row id), the scale of a privacy level is
``scale_for_privacy`` over the column's range (min to max over the input, as the job
reads it), the x-bins, z-bins, z-bin counts, noisy histogram and default reconstructions
are those of ``sparkanon reconstruct`` (``evaluation/reconstruct.py``: ``x_edges_for``,
``z_edges_for``, ``make_histogram_fn``, ``noisy_histogram``, ``reconstruct_numeric``),
and the classifier is ``DistributionNaiveBayes.from_reconstructions``. Row ids are the
rows' positions in ``data/adult/adult.csv`` (0-based; every row is usable), streams the
columns' positions in the lists below, and the key a public one derived from ``--seed``
(default 7): SHA-256 of ``exp_randomization seed <seed>``, so the experiment is
reproducible (a job draws a secret key instead; the figures do not depend on which).

**Target 2 (reconstruction).** Columns: ``age`` and ``hours-per-week`` (integers) and
``ln_fnlwgt``, the natural log of ``fnlwgt``: the smooth column of our choice (its 50-bin
histogram is within L1 0.03 of its own 3-bin moving average; raw ``fnlwgt`` is skewed with
a tail to 1.49 million, so 50 equal-width bins over its range put most rows in 10 bins).
All 45,222 rows (``--rows`` keeps the first N). Noise uniform and gaussian at privacy 25,
50, 100 and 200% (the 95% interval's width as a share of the range). Bins: ``equal50``
(the CLI default: 50 equal-width bins over ``[zmin + s, zmax - s]``) and, for the
integer columns, ``integer`` (``--integer-bins``: one bin per integer). Per setting the
L1 distance ``1/2 sum |f - f_hat|`` to the true histogram over the same bins of:

* ``noisy``: the published values binned (out-of-range in the end bins);
* ``bayes`` / ``chi_square``: the product default (midpoint kernel, Pearson statistic of
  successive estimates below 1% of the 5% critical value);
* ``bayes`` / ``change``: the textbook's mean density change below 1e-3;
* ``em`` / ``likelihood``: EM (interval kernel), log-likelihood gain per row below 1e-7;
* ``bayes`` / ``fixed_N`` and ``em`` / ``fixed_N``: the same updates stopped after exactly
  N iterations (N in 10, 50, 200, 1000, 5000), since L1 depends on when the iteration stops.

Every row also carries the iterations and stopping rule, the noise scale, the bins, and
two properties of the truth itself: ``floor_sawtooth``, the L1 distance between the true
histogram and the same distribution with each integer's mass spread uniformly over its
unit interval (what equal-width bins of a non-integer width do to integer data: the
true histogram is saw-toothed, a density estimate is not; 0 with integer bins, blank for
a non-integer column), and ``truth_vs_smooth3``, the L1 distance between the true
histogram and its 3-bin moving average (how spiky the column is at those bins).

**Target 3 (naive Bayes).** Train on the first 30,162 rows (``adult.data``; ``--train-rows``),
test on the rest (``adult.test``) on their ORIGINAL values. The train split is perturbed
(ranges over the train split); per income class each attribute is reconstructed over bins
shared by the classes (those of ``sparkanon reconstruct --by income``). Feature sets:
``numeric`` (age, education-num and hours-per-week at the privacy level: age and hours
alone carry almost nothing for naive Bayes, 0.757 against the majority's 0.754) and
``numeric+categorical`` (plus workclass, marital-status and sex, the categorical columns of
``conf/adult_perturb.yaml``, by k-ary randomized response at a fixed epsilon, ``--epsilon``
2; reconstructed by IBU; education is left out as education-num holds it). Accuracy
of naive Bayes from: the original train values (per-class histograms over the same bins),
the raw perturbed values (per-class noisy histograms / published shares), and the Bayes
and EM reconstructions (product defaults); and the majority class.

Writes, under ``--out-dir`` (default ``docs/bench/``): ``randomization_l1.csv``,
``randomization_nb.csv``, ``randomization.meta.json`` (command, rows, code, machine),
``randomization_l1.png`` and ``randomization_nb.png``.

Usage::

    python -m experiments.exp_randomization                    # about a minute on one core
    python -m experiments.exp_randomization --rows 3000 --train-rows 2000 --out-dir /tmp/x
    python -m experiments.exp_randomization --report [--out-dir DIR]   # Markdown tables
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments import _bench

PRIVACY = (0.25, 0.5, 1.0, 2.0)
NOISES = ("uniform", "gaussian")
L1_COLUMNS = ("age", "hours-per-week", "ln_fnlwgt")
"""Target 2's columns; a column's stream is its position here."""
INTEGER_COLUMNS = ("age", "hours-per-week")
NB_NUMERIC = ("age", "education-num", "hours-per-week")
NB_CATEGORICAL = ("workclass", "marital-status", "sex")
"""Target 3's attributes; streams: numeric 0, 1, 2, categorical 3.. in this order."""
LABEL = "income"
POSITIVE = ">50K"
TRAIN_ROWS = 30_162
BINS = 50
FIXED = (10, 50, 200, 1000, 5000)
L1_FIELDS = [
    "column",
    "noise",
    "privacy",
    "binning",
    "method",
    "stop",
    "l1",
    "iterations",
    "stopped_by",
    "scale",
    "x_bins",
    "z_bins",
    "outside_z",
    "floor_sawtooth",
    "truth_vs_smooth3",
    "mode_value",
    "mode_true",
    "mode_est",
    "rows",
    "seed",
    "code_sha",
]
NB_FIELDS = [
    "noise",
    "privacy",
    "features",
    "binning",
    "acc_original",
    "acc_perturbed",
    "acc_bayes",
    "acc_em",
    "acc_majority",
    "bayes_between",
    "em_between",
    "bayes_iterations_max",
    "em_iterations_max",
    "l1_perturbed",
    "l1_bayes",
    "l1_em",
    "vetoed_bayes",
    "vetoed_em",
    "bayes_stopped_by",
    "em_stopped_by",
    "epsilon",
    "train_rows",
    "test_rows",
    "seed",
    "code_sha",
]


def load_adult(rows: int | None) -> pd.DataFrame:
    """``data/adult/adult.csv`` (its first ``rows``), with ``ln_fnlwgt`` added."""
    df = pd.read_csv(_bench.ADULT_CSV, nrows=rows)
    df["ln_fnlwgt"] = np.log(df["fnlwgt"].to_numpy(dtype=np.float64))
    return df


def noise_for(distribution: str, privacy: float, values: np.ndarray) -> Any:
    """The product's noise of a privacy level over the values' range (min to max)."""
    from sparkanon.algorithms.perturbation.noise import NoiseSpec, scale_for_privacy

    span = float(np.max(values) - np.min(values))
    return NoiseSpec(distribution, scale_for_privacy(distribution, privacy, span))


def experiment_key(seed: int) -> Any:
    """The experiment's public key of a seed (SHA-256 of ``exp_randomization seed <seed>``)."""
    from sparkanon.randomness import RunKey

    secret = hashlib.sha256(f"exp_randomization seed {seed}".encode()).digest()
    return RunKey(secret, "user", f"exp_randomization seed {seed}")


def perturbed(frame: pd.DataFrame, noises: list[Any], seed: int) -> pd.DataFrame:
    """The rows perturbed by the job's batch function (row ids: the frame's index)."""
    from sparkanon.algorithms.perturbation.perturb import perturb_frame

    ids = frame.index.to_numpy(dtype=np.int64)
    return perturb_frame(frame, ids, noises, experiment_key(seed))


def column_bins(name: str, spec: Any, published: np.ndarray, integer: bool) -> Any:
    """The bins ``sparkanon reconstruct`` gives a column (``--bins 50`` or ``--integer-bins``)."""
    from sparkanon.evaluation import reconstruct as st

    x = st.x_edges_for(name, spec, float(published.min()), float(published.max()), BINS, integer)
    return st.ColumnBins(name, spec, x, st.z_edges_for(name, spec, x))


def z_counts(column: Any, published: np.ndarray, labels: np.ndarray | None) -> dict[str, Any]:
    """Per label (``""`` for all rows) the z-bin counts then below and above, by the CLI's pass."""
    from sparkanon.evaluation import reconstruct as st

    frame = pd.DataFrame({column.name: published})
    by = None
    if labels is not None:
        frame["_label"], by = labels, "_label"
    hist = st.make_histogram_fn([column], [], by)(frame)
    m = len(column.z_edges) - 1
    out: dict[str, np.ndarray] = {}
    for label, b, n in hist[["label", "bin", "n"]].itertuples(index=False):
        vec = out.setdefault(str(label), np.zeros(m + 2, dtype=np.int64))
        if b == -2:
            raise RuntimeError(f"{column.name}: a published value is not a number")
        vec[m if b == -1 else m + 1 if b == -3 else b] += n
    return out


def true_histogram(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The values over the bins, out-of-range ones in the end bins (as the noisy histogram)."""
    bins = np.searchsorted(edges[1:-1], values, side="right")
    h = np.bincount(bins, minlength=len(edges) - 1).astype(np.float64)
    return h / h.sum()


def smeared_histogram(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Integer values with each one's mass spread uniformly over ``[v - 1/2, v + 1/2]``.

    The true distribution as a density (what a reconstruction estimates) rather than point
    masses at the integers; binned like :func:`true_histogram` (outside mass in the end bins).
    """
    ints, counts = np.unique(values, return_counts=True)
    p = counts / counts.sum()
    inner = edges[1:-1]
    cdf = (p[None, :] * np.clip(inner[:, None] - (ints[None, :] - 0.5), 0.0, 1.0)).sum(axis=1)
    cdf = np.concatenate([[0.0], cdf, [1.0]])
    return np.diff(cdf)


def smooth3(p: np.ndarray) -> np.ndarray:
    """The 3-bin moving average (end bins repeated), renormalised."""
    s = np.convolve(np.pad(p, 1, mode="edge"), np.ones(3) / 3.0, mode="valid")
    return s / s.sum()


def _reconstructions(
    column: Any, counts: np.ndarray, fixed: tuple[int, ...]
) -> list[tuple[str, str, Any]]:
    """(method, stop, result) of every reconstruction target 2 reports, on one histogram."""
    from sparkanon.algorithms.perturbation import reconstruct as rc
    from sparkanon.evaluation import reconstruct as st

    m = len(column.z_edges) - 1
    z = counts[:m].astype(np.float64)
    pdf_kernel = rc.transition_from_pdf(column.x_edges, column.z_edges, column.spec.pdf)
    interval_kernel = rc.transition_from_intervals(
        column.x_edges, column.z_edges, column.spec.interval_probability
    )
    default = st.reconstruct_numeric(column, counts)
    out: list[tuple[str, str, Any]] = [
        ("bayes", "chi_square", rc.bayes(z, pdf_kernel, column.x_edges)),
        ("bayes", "change", rc.bayes(z, pdf_kernel, column.x_edges, stop="change")),
        ("em", "likelihood", rc.em(z, interval_kernel, column.x_edges)),
    ]
    # The CLI's own results are these (a check that the experiment measures the product).
    for method, _, result in (out[0], out[2]):
        cli = np.asarray(default[method]["probabilities"])
        if not np.allclose(cli, result.probabilities, atol=1e-12):
            raise RuntimeError(f"{column.name}: {method} differs from sparkanon reconstruct's")
    for n in fixed:
        never = -math.inf  # a threshold no statistic goes below: exactly n updates
        out.append(
            (
                "bayes",
                f"fixed_{n}",
                rc.bayes(z, pdf_kernel, column.x_edges, never, max_iterations=n),
            )
        )
        out.append(("em", f"fixed_{n}", rc.em(z, interval_kernel, column.x_edges, never, n)))
    return out


def l1_settings(privacies: tuple[float, ...]) -> list[tuple[int, str, str, float, str]]:
    """(stream, column, noise, privacy, binning) of every target-2 setting."""
    out = []
    for stream, name in enumerate(L1_COLUMNS):
        binnings = ("equal50", "integer") if name in INTEGER_COLUMNS else ("equal50",)
        for noise in NOISES:
            for privacy in privacies:
                out.extend((stream, name, noise, privacy, b) for b in binnings)
    return out


def run_l1(
    df: pd.DataFrame, privacies: tuple[float, ...], fixed: tuple[int, ...], seed: int, sha: str
) -> list[dict[str, Any]]:
    """Target 2: one CSV row per setting and method."""
    from sparkanon.algorithms.perturbation.perturb import ColumnNoise
    from sparkanon.algorithms.perturbation.reconstruct import l1_distance
    from sparkanon.evaluation import reconstruct as st

    rows: list[dict[str, Any]] = []
    published_cache: dict[tuple[str, str, float], tuple[Any, np.ndarray]] = {}
    for stream, name, noise, privacy, binning in l1_settings(privacies):
        values = df[name].to_numpy(dtype=np.float64)
        key = (name, noise, privacy)
        if key not in published_cache:
            spec = noise_for(noise, privacy, values)
            out = perturbed(df[[name]], [ColumnNoise(name, stream, additive=spec)], seed)
            published_cache[key] = (spec, out[name].to_numpy(dtype=np.float64))
        spec, published = published_cache[key]
        start = time.perf_counter()
        column = column_bins(name, spec, published, binning == "integer")
        counts = z_counts(column, published, None)[""]
        m = len(column.z_edges) - 1
        truth = true_histogram(values, column.x_edges)
        mode = int(np.argmax(truth))
        common = {
            "column": name,
            "noise": noise,
            "privacy": privacy,
            "binning": binning,
            "scale": round(spec.scale, 6),
            "x_bins": len(column.x_edges) - 1,
            "z_bins": m,
            "outside_z": int(counts[m] + counts[m + 1]),
            "floor_sawtooth": (
                round(l1_distance(truth, smeared_histogram(values, column.x_edges)), 6)
                if name in INTEGER_COLUMNS
                else ""
            ),
            "truth_vs_smooth3": round(l1_distance(truth, smooth3(truth)), 6),
            "mode_value": round(float((column.x_edges[mode] + column.x_edges[mode + 1]) / 2), 4),
            "mode_true": round(float(truth[mode]), 6),
            "rows": len(values),
            "seed": seed,
            "code_sha": sha,
        }
        noisy = st.noisy_histogram(column, counts)
        found = [("noisy", "", noisy, 0, "")]
        for method, stop, r in _reconstructions(column, counts, fixed):
            found.append((method, stop, r.probabilities, r.iterations, r.stopped_by))
        for method, stop, p, iterations, stopped_by in found:
            rows.append(
                {
                    **common,
                    "method": method,
                    "stop": stop,
                    "l1": round(l1_distance(truth, p), 6),
                    "iterations": iterations,
                    "stopped_by": stopped_by,
                    "mode_est": round(float(p[mode]), 6),
                }
            )
        got = {(r["method"], r["stop"]): r for r in rows[-len(found) :]}
        print(
            f"{name:<14} {noise:<8} privacy={privacy:<4} {binning:<7} L1 noisy="
            f"{got['noisy', '']['l1']:.4f} bayes={got['bayes', 'chi_square']['l1']:.4f} "
            f"({got['bayes', 'chi_square']['iterations']} it) em="
            f"{got['em', 'likelihood']['l1']:.4f} ({got['em', 'likelihood']['iterations']} it) "
            f"{time.perf_counter() - start:.1f}s",
            flush=True,
        )
    return rows


def _codes(df: pd.DataFrame, name: str) -> tuple[np.ndarray, list[str]]:
    """A categorical column's codes over its sorted values in the whole input."""
    values = sorted(df[name].astype(str).unique())
    lookup = {v: i for i, v in enumerate(values)}
    return df[name].astype(str).map(lookup).to_numpy(dtype=np.int64), values


def run_nb(
    df: pd.DataFrame,
    train_rows: int,
    privacies: tuple[float, ...],
    epsilon: float,
    seed: int,
    sha: str,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Target 3: one CSV row per noise, privacy level, feature set and binning."""
    from sparkanon.algorithms.perturbation import reconstruct as rc
    from sparkanon.algorithms.perturbation.naive_bayes import (
        BinnedAttribute,
        DistributionNaiveBayes,
    )
    from sparkanon.algorithms.perturbation.perturb import ColumnNoise
    from sparkanon.algorithms.perturbation.randomized_response import (
        pram_matrix,
        retention_for_epsilon,
    )
    from sparkanon.evaluation import reconstruct as st

    train, test = df.iloc[:train_rows], df.iloc[train_rows:]
    y_train = (train[LABEL] == POSITIVE).to_numpy(dtype=np.int64)
    y_test = (test[LABEL] == POSITIVE).to_numpy(dtype=np.int64)
    labels = y_train.astype(str)
    priors = np.bincount(y_train, minlength=2) / len(y_train)
    majority = float(np.mean(y_test == int(np.argmax(priors))))
    codes = {c: _codes(df, c) for c in NB_CATEGORICAL}
    coded_train = pd.DataFrame({c: codes[c][0][:train_rows] for c in NB_CATEGORICAL})
    coded_train.index = train.index
    matrices = {
        c: pram_matrix(len(v), retention_for_epsilon(len(v), epsilon))
        for c, (_, v) in codes.items()
    }
    rr = [
        ColumnNoise(c, len(NB_NUMERIC) + j, matrix=matrices[c])
        for j, c in enumerate(NB_CATEGORICAL)
    ]
    published_codes = perturbed(coded_train, rr, seed)
    categorical: dict[str, dict[str, list[np.ndarray]]] = {}
    for c in NB_CATEGORICAL:
        k = len(codes[c][1])
        parts: dict[str, list[np.ndarray]] = {"original": [], "perturbed": [], "ibu": []}
        for cls in (0, 1):
            rows = y_train == cls
            true_n = np.bincount(coded_train[c].to_numpy()[rows], minlength=k)
            seen = np.bincount(published_codes[c].to_numpy()[rows], minlength=k)
            parts["original"].append(true_n / true_n.sum())
            parts["perturbed"].append(seen / seen.sum())
            parts["ibu"].append(rc.categorical_ibu(seen, matrices[c]).probabilities)
        categorical[c] = parts
    test_features = {c: test[c].to_numpy(dtype=np.float64) for c in NB_NUMERIC}
    test_codes = {c: codes[c][0][train_rows:] for c in NB_CATEGORICAL}
    context = categorical_only(categorical, priors, test_codes, y_test)
    print(f"NB categorical attributes alone (epsilon {epsilon}): {context}", flush=True)

    out: list[dict[str, Any]] = []
    for noise in NOISES:
        for privacy in privacies:
            noises = [
                ColumnNoise(c, i, additive=noise_for(noise, privacy, train[c].to_numpy()))
                for i, c in enumerate(NB_NUMERIC)
            ]
            published = perturbed(train[list(NB_NUMERIC)], noises, seed)
            for binning in ("equal50", "integer"):
                tables: dict[str, dict[str, np.ndarray]] = {}
                edges: dict[str, np.ndarray] = {}
                iterations: dict[str, list[int]] = {"bayes": [], "em": []}
                stopped: dict[str, set[str]] = {"bayes": set(), "em": set()}
                for c, spec in zip(NB_NUMERIC, (n.additive for n in noises), strict=True):
                    z = published[c].to_numpy(dtype=np.float64)
                    column = column_bins(c, spec, z, binning == "integer")
                    per_class = z_counts(column, z, labels)
                    values = train[c].to_numpy(dtype=np.float64)
                    t: dict[str, list[np.ndarray]] = {k: [] for k in ("original", "perturbed")}
                    t |= {"bayes": [], "em": []}
                    for cls in (0, 1):
                        counts = per_class[str(cls)]
                        t["original"].append(true_histogram(values[y_train == cls], column.x_edges))
                        t["perturbed"].append(st.noisy_histogram(column, counts))
                        result = st.reconstruct_numeric(column, counts)
                        for method in ("bayes", "em"):
                            t[method].append(np.asarray(result[method]["probabilities"]))
                            iterations[method].append(int(result[method]["iterations"]))
                            stopped[method].add(result[method]["stopped_by"])
                    tables[c] = {k: np.stack(v) for k, v in t.items()}
                    edges[c] = column.x_edges
                for features in ("numeric", "numeric+categorical"):
                    cats = NB_CATEGORICAL if features != "numeric" else ()
                    feats = {**test_features, **{c: test_codes[c] for c in cats}}
                    acc = {}
                    for source in ("original", "perturbed", "bayes", "em"):
                        cat_source = {"bayes": "ibu", "em": "ibu"}.get(source, source)
                        attributes = {
                            c: BinnedAttribute(tables[c][source], edges[c]) for c in NB_NUMERIC
                        }
                        attributes |= {
                            c: BinnedAttribute(np.stack(categorical[c][cat_source]), None)
                            for c in cats
                        }
                        model = DistributionNaiveBayes(priors, attributes)
                        acc[source] = model.accuracy(feats, y_test)
                    lo, hi = sorted((acc["perturbed"], acc["original"]))
                    quality = numeric_quality(tables)
                    row = {
                        "noise": noise,
                        "privacy": privacy,
                        "features": features,
                        "binning": binning,
                        **{f"acc_{k}": round(v, 6) for k, v in acc.items()},
                        "acc_majority": round(majority, 6),
                        "bayes_between": lo <= acc["bayes"] <= hi,
                        "em_between": lo <= acc["em"] <= hi,
                        "bayes_iterations_max": max(iterations["bayes"]),
                        "em_iterations_max": max(iterations["em"]),
                        **quality,
                        "bayes_stopped_by": " ".join(sorted(stopped["bayes"])),
                        "em_stopped_by": " ".join(sorted(stopped["em"])),
                        "epsilon": epsilon if cats else "",
                        "train_rows": len(train),
                        "test_rows": len(test),
                        "seed": seed,
                        "code_sha": sha,
                    }
                    out.append(row)
                    print(
                        f"NB {noise:<8} privacy={privacy:<4} {binning:<7} {features:<19} "
                        f"original={acc['original']:.4f} perturbed={acc['perturbed']:.4f} "
                        f"bayes={acc['bayes']:.4f} em={acc['em']:.4f} majority={majority:.4f}",
                        flush=True,
                    )
    return out, context


def numeric_quality(tables: dict[str, dict[str, np.ndarray]]) -> dict[str, Any]:
    """How far the per-class numeric tables are from the train data's, and their vetoes.

    ``l1_<source>``: the mean over attributes and classes of the L1 distance to the
    original per-class histogram. ``vetoed_<method>``: the (attribute, class, bin) cells
    a reconstruction puts below the classifier's smoothing (1e-4, so a test value there
    all but rules the class out) while at least 0.1% of the class's train rows are there.
    """
    from sparkanon.algorithms.perturbation.naive_bayes import DEFAULT_SMOOTHING
    from sparkanon.algorithms.perturbation.reconstruct import l1_distance

    out: dict[str, Any] = {}
    for source in ("perturbed", "bayes", "em"):
        dists = [
            l1_distance(t["original"][cls], t[source][cls])
            for t in tables.values()
            for cls in range(t["original"].shape[0])
        ]
        out[f"l1_{source}"] = round(float(np.mean(dists)), 6)
    for method in ("bayes", "em"):
        out[f"vetoed_{method}"] = int(
            sum(
                np.sum((t[method] < DEFAULT_SMOOTHING) & (t["original"] >= 1e-3))
                for t in tables.values()
            )
        )
    return out


def categorical_only(
    categorical: dict[str, dict[str, list[np.ndarray]]],
    priors: np.ndarray,
    test_codes: dict[str, np.ndarray],
    y_test: np.ndarray,
) -> dict[str, float]:
    """Accuracy of naive Bayes on the categorical attributes alone (context for the table)."""
    from sparkanon.algorithms.perturbation.naive_bayes import (
        BinnedAttribute,
        DistributionNaiveBayes,
    )

    out = {}
    for source in ("original", "perturbed", "ibu"):
        attributes = {
            c: BinnedAttribute(np.stack(parts[source]), None) for c, parts in categorical.items()
        }
        out[source] = round(
            DistributionNaiveBayes(priors, attributes).accuracy(test_codes, y_test), 6
        )
    return out


def _pct(privacy: float) -> str:
    return f"{round(float(privacy) * 100)}%"


def plot_l1(rows: list[dict[str, Any]], path: Path) -> None:
    """L1 against privacy: a panel per column and noise, lines noisy / Bayes / EM."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = pd.DataFrame(rows)
    df = df[df["stop"].isin(["", "chi_square", "likelihood"])]
    columns = list(dict.fromkeys(df["column"]))
    fig, axes = plt.subplots(
        len(NOISES), len(columns), figsize=(4.4 * len(columns), 7.0), squeeze=False
    )
    styles = {"noisy": ("black", "s", "--"), "bayes": ("tab:blue", "o", "-")}
    styles["em"] = ("tab:orange", "^", "-")
    for i, noise in enumerate(NOISES):
        for j, name in enumerate(columns):
            ax = axes[i][j]
            for binning, alpha in (("equal50", 1.0), ("integer", 0.45)):
                part = df[(df["column"] == name) & (df["noise"] == noise)]
                part = part[part["binning"] == binning]
                if part.empty:
                    continue
                for method, (color, marker, line) in styles.items():
                    pts = part[part["method"] == method].sort_values("privacy")
                    ax.plot(
                        pts["privacy"] * 100,
                        pts["l1"],
                        color=color,
                        marker=marker,
                        linestyle=line,
                        alpha=alpha,
                        label=f"{method} ({binning})",
                    )
            _privacy_axes(ax, f"{name}, {noise} noise", "L1 to the true histogram")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _privacy_axes(ax: Any, title: str, ylabel: str) -> None:
    """A panel against the privacy level (log 2 axis, the four levels as ticks)."""
    ax.set_xscale("log", base=2)
    ax.set_xticks([25, 50, 100, 200], ["25", "50", "100", "200"])
    ax.set_title(title)
    ax.set_xlabel("privacy (% of range)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)


def plot_nb(rows: list[dict[str, Any]], path: Path) -> None:
    """Accuracy against privacy: a panel per noise and feature set (equal-width bins)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = pd.DataFrame(rows)
    df = df[df["binning"] == "equal50"]
    sets = list(dict.fromkeys(df["features"]))
    fig, axes = plt.subplots(len(NOISES), len(sets), figsize=(5.0 * len(sets), 7.0), squeeze=False)
    lines = [
        ("acc_original", "original", "black", "s"),
        ("acc_perturbed", "perturbed", "tab:red", "x"),
        ("acc_bayes", "Bayes", "tab:blue", "o"),
        ("acc_em", "EM", "tab:orange", "^"),
        ("acc_majority", "majority", "grey", ""),
    ]
    for i, noise in enumerate(NOISES):
        for j, features in enumerate(sets):
            ax = axes[i][j]
            part = df[(df["noise"] == noise) & (df["features"] == features)].sort_values("privacy")
            for field, label, color, marker in lines:
                ax.plot(part["privacy"] * 100, part[field], color=color, marker=marker, label=label)
            _privacy_axes(ax, f"{features}, {noise} noise", "accuracy on adult.test")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report(out_dir: Path) -> int:
    """Markdown tables of the two CSVs."""
    l1_path, nb_path = out_dir / "randomization_l1.csv", out_dir / "randomization_nb.csv"
    if not l1_path.is_file() or not nb_path.is_file():
        print(f"no {l1_path} or {nb_path}", file=sys.stderr)
        return 1
    l1 = pd.read_csv(l1_path, keep_default_na=False)
    nb = pd.read_csv(nb_path, keep_default_na=False)
    key = ["column", "noise", "privacy", "binning"]
    print("L1 to the true histogram (iterations in brackets):")
    print()
    print(
        "| column | noise | privacy | bins | noisy | Bayes chi2 | Bayes change | EM | "
        "sawtooth floor | mode: true / noisy / Bayes / EM |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---|")
    for k, part in l1.groupby(key, sort=False):
        by = {(r["method"], r["stop"]): r for r in part.to_dict("records")}
        noisy, b, c, e = (
            by["noisy", ""],
            by["bayes", "chi_square"],
            by["bayes", "change"],
            by["em", "likelihood"],
        )
        mode = f"{b['mode_value']:g}: " + " / ".join(
            f"{float(r['mode_est']):.3f}" for r in (noisy, b, e)
        )
        print(
            f"| {k[0]} | {k[1]} | {_pct(k[2])} | {k[3]} | {noisy['l1']:.4f} | "
            f"{b['l1']:.4f} ({b['iterations']}) | {c['l1']:.4f} ({c['iterations']}) | "
            f"{e['l1']:.4f} ({e['iterations']}) | {b['floor_sawtooth'] or '-'} | "
            f"{float(b['mode_true']):.3f} / {mode.split(': ')[1]} (at {b['mode_value']:g}) |"
        )
    print()
    print("L1 after a fixed number of iterations (Bayes midpoint kernel / EM interval kernel):")
    print()
    fixed = sorted({int(s[6:]) for s in l1["stop"] if str(s).startswith("fixed_")})
    print("| column | noise | privacy | bins | " + " | ".join(f"{n}" for n in fixed) + " |")
    print("|---|---|---:|---|" + "---:|" * len(fixed))
    for k, part in l1.groupby(key, sort=False):
        by = {(r["method"], r["stop"]): r for r in part.to_dict("records")}
        cells = [
            f"{by['bayes', f'fixed_{n}']['l1']:.3f} / {by['em', f'fixed_{n}']['l1']:.3f}"
            for n in fixed
        ]
        print(f"| {k[0]} | {k[1]} | {_pct(k[2])} | {k[3]} | " + " | ".join(cells) + " |")
    print()
    print("Naive Bayes accuracy on the test split (original values):")
    print()
    print(
        "| noise | privacy | features | bins | original | perturbed | Bayes | EM | majority | "
        "between (Bayes, EM) | per-class L1 perturbed / Bayes / EM | vetoed cells Bayes, EM |"
    )
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---|---|---|")
    for r in nb.to_dict("records"):
        print(
            f"| {r['noise']} | {_pct(r['privacy'])} | {r['features']} | {r['binning']} | "
            f"{r['acc_original']:.4f} | {r['acc_perturbed']:.4f} | {r['acc_bayes']:.4f} | "
            f"{r['acc_em']:.4f} | {r['acc_majority']:.4f} | {r['bayes_between']}, "
            f"{r['em_between']} | {r['l1_perturbed']:.3f} / {r['l1_bayes']:.3f} / "
            f"{r['l1_em']:.3f} | {r['vetoed_bayes']}, {r['vetoed_em']} |"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, help="first N rows of data/adult/adult.csv")
    parser.add_argument("--train-rows", type=int, default=TRAIN_ROWS, help="train split rows")
    parser.add_argument("--seed", type=int, default=7, help="the noise seed")
    parser.add_argument(
        "--epsilon", type=float, default=2.0, help="randomized response of the categoricals"
    )
    parser.add_argument("--only", choices=("l1", "nb"), help="run one target only")
    parser.add_argument(
        "--privacy", type=float, nargs="+", default=list(PRIVACY), help="privacy levels (shares)"
    )
    parser.add_argument(
        "--fixed", type=int, nargs="+", default=list(FIXED), help="fixed iteration counts"
    )
    _bench.add_run_arguments(parser)
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir)

    sha, prov = _bench.use_code(args.code, args.in_place)
    df = load_adult(args.rows)
    if not 0 < args.train_rows < len(df):
        parser.error(f"--train-rows {args.train_rows}: need 1 .. {len(df) - 1} (rows {len(df)})")
    start = time.perf_counter()
    wrote = []
    if args.only != "nb":
        l1 = run_l1(df, tuple(args.privacy), tuple(args.fixed), args.seed, sha)
        _bench.write_csv(args.out_dir / "randomization_l1.csv", l1, L1_FIELDS)
        plot_l1(l1, args.out_dir / "randomization_l1.png")
        wrote += ["randomization_l1.csv", "randomization_l1.png"]
    if args.only != "l1":
        nb, context = run_nb(df, args.train_rows, tuple(args.privacy), args.epsilon, args.seed, sha)
        _bench.write_csv(args.out_dir / "randomization_nb.csv", nb, NB_FIELDS)
        plot_nb(nb, args.out_dir / "randomization_nb.png")
        wrote += ["randomization_nb.csv", "randomization_nb.png"]
        meta_nb = {"acc_categorical_only": context, "acc_majority": nb[0]["acc_majority"]}
    else:
        meta_nb = {}
    meta = {
        "command": _bench.command_line(),
        "rows": len(df),
        "train_rows": args.train_rows,
        "seed": args.seed,
        "epsilon": args.epsilon,
        "bins": BINS,
        "privacy": list(args.privacy),
        "fixed_iterations": list(args.fixed),
        "seconds": round(time.perf_counter() - start, 1),
        **meta_nb,
        **prov,
    }
    _bench.write_json(args.out_dir / "randomization.meta.json", meta)
    print(f"wrote {args.out_dir}/" + ", ".join([*wrote, "randomization.meta.json"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
