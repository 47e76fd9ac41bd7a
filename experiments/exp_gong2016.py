"""APA, PAA and RMR on relational-transaction data: the experiments of Gong et al. 2016 (section 4).

Reproduces docs/experiments.md, "Gong et al. 2016: APA, PAA and RMR on relational-
transaction data".

Gong, Yang and Luo (2016) anonymizes INFORMS (58,568 people; month and year of
birth, race, years of education and income as relational quasi-identifiers; a set of
diagnosis codes each) to (k,l)-diversity with APA and PAA, and compares them with RMR
((k, k^m)-anonymity, Poulis et al. 2013; m = 2, delta = 0.65): the average relative error
(ARE) of random count queries against k and l (Figure 3), against the query dimension
qd and selectivity s (Figure 4), against the data size (Figure 5), and the running time
against the data size, k and l (Figure 6). Defaults: k = 10, l = 5, qd = 5, s = 2 %
(0.02), qt = 1000 queries.

INFORMS is not available to us. Two datasets, each named in every output row:

* ``informs-like``: a synthetic sparse table of 58,568 records, deterministic
  (``--data-seed``), shaped like the paper's Table 5 (see :func:`informs_like`): month
  of birth (12 values, nominal), year of birth (88, nominal), race (6, nominal), years of
  education (22, ordinal), income (21 ordinal bins of $5,000, the last open: the paper's
  16,532 distinct incomes are binned, our choice) and a set of diagnosis codes of
  1 + Poisson(4.4) codes (mean 5.4) drawn without replacement from 632 codes with Zipf
  popularity (weight 1 / rank), three times as likely in the code's own age band (0-17,
  18-44, 45-64, 65+: a link between the two parts, as diagnoses depend on age). The
  taxonomy is Gong et al. 2016's even tree of fanout 5 over 1,297 leaf codes (``5^4 < 1297 <=
  5^5``: five levels above the leaves); the 632 codes in use are a seeded random subset
  of its leaves, the other 665 are leaves nobody holds, as in the paper's taxonomy of
  1,297 codes over the 632 INFORMS holds. Smaller sizes are the first n records
  (the paper's "5K units, 12 datasets, chosen in order").
* ``completejourney``: the real Complete Journey demo (801 households, about 126 of 299
  product categories each: dense sets) and ``scripts/generate_rt.py`` growths of it
  (``generate``, seed 0) at ``--cj-sizes``; config ``conf/completejourney_paa.yaml``.

APA and PAA run as local-engine jobs (``run_job(LocalEngine(), config, table=...,
commit=False)``), by default with ``max_block_rows`` of the whole table (one block, as
the paper anonymizes the whole table); the ``blocking`` experiment reruns the default
setting with ``--blocks`` rows per block. RMR is not a job algorithm: the script encodes
the quasi-identifiers and calls :func:`sparkanon.algorithms.transaction.rmr.rmr`
directly (it has no l: one curve in the k and size plots, none in the l plot, as in the
seed). A setting the job refuses (``ConfigError``, e.g. l above the distinct sets) is
recorded as infeasible with the job's message.

ARE (:mod:`sparkanon.metrics.are`): queries from :func:`draw_queries` (seeded by
``--seed``, prefix-stable), zero answers resampled (:func:`draw_answerable`), ``act``
from :func:`actual_counts` on the original table, the same queries for every algorithm of
one dataset and size. Readings:

* ``|A|`` of the set attribute in eq. 4: by default the number of items the data holds
  (632 on informs-like, Table 5's figure for the diagnosis codes); the readings table of
  the default setting adds the taxonomy's leaves (1,297, the authors' code) and the
  distinct sets of T (the module's default reading);
* pred2 on a generalized item: ``certain`` (the module default, reproduces the paper's
  worked example) and ``uniform`` (1 / leaves under the node); every run reports both;
* ``match``: ``contains``.

``est`` of APA and PAA is Anatomy's (``est = sum_G rt[G, q] tt[G, q] / |G|``, RT
partials from :func:`rt_partial`, merged by :func:`combine`). The TT partials come from
:func:`pred2_probabilities`, the module's pred2 computed per (distinct published set,
combination) and summed per query over the query's combinations only (a sparse product):
:func:`tt_partial` multiplies by the dense (combinations x queries) membership, which on
informs-like costs minutes per reading and algorithm. The two agree to
rounding; the run checks it on the first ``--check-qt`` queries of the default setting
(``estimator_check`` in the meta JSON) and the ``distinct sets`` reading uses the
module's :func:`estimated_counts` itself on ``--sets-qt`` queries.

``est`` of RMR: RMR publishes, per record, its cluster's range of codes per
quasi-identifier and its k^m-anonymized set (no groups to anatomize). The count is
``sum over records of P(pred1 | ranges) * P(pred2 | set)``, the generalization estimate
of Xiao and Tao (2006): a range stands for each of its values with equal probability,
so pred1's probability is, per constrained attribute, the share of the range's values
the query allows (an ordinal range ``[lo, hi]`` holds ``hi - lo + 1`` ranks; a nominal
attribute publishes one value or ``*``, the whole domain of the values in T); pred2
reads the generalized set as for APA and PAA (a suppressed set, published empty,
contains no combination).

Experiments (``--only`` runs a subset): ``k`` (k in ``--k``, l = 5; Figures 3a, 6a),
``l`` (l in ``--l``, k = 10; 3b, 6b), ``qd`` and ``s`` (the default anonymizations,
queries with qd in ``--qd`` at s = 0.02 and s in ``--s`` at qd = 5; Figure 4), ``size``
(n in ``--sizes``; 5, 6c), ``blocking`` (APA and PAA at ``--blocks`` rows per block;
the default setting), ``readings`` (ARE of the default setting under every reading) and
``cj`` (Complete Journey at ``--cj-sizes``). RMR runs up to ``--rmr-max-n`` records.

Writes, under ``--out-dir`` (default ``docs/bench/``):

* ``gong2016_runs.csv``: one row per (experiment, setting, algorithm); an anonymization
  shared by several experiments runs once, its time repeated in each row;
* ``gong2016.csv``: one row per (experiment, dataset, setting): the three algorithms side
  by side;
* ``gong2016_fig3.png`` .. ``gong2016_fig6.png`` (the paper's figures), ``gong2016_blocking.png``
  and ``gong2016_cj.png``;
* ``gong2016.meta.json``: the command, the data, the grid run, the checks, the machine.

Usage::

    python -m experiments.exp_gong2016                     # everything (about 50 minutes, 2 cores)
    python -m experiments.exp_gong2016 --n 3000 --sizes 1000 3000 --qt 200 --out-dir /tmp/x
    python -m experiments.exp_gong2016 --report [--out-dir DIR]   # Markdown tables
    python -m experiments.exp_gong2016 --plot [--out-dir DIR]     # figures from gong2016_runs.csv
"""

from __future__ import annotations

import argparse
import copy
import csv
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from experiments import _bench

# ---------------------------------------------------------------------------
# Settings

N_FULL = 58_568
"""People in INFORMS (Gong et al. 2016, section 4.1)."""
N_LEAVES = 1_297
N_USED = 632
FANOUT = 5
EXTRA_ITEMS_MEAN = 4.4
"""Set size 1 + Poisson(4.4): mean 5.4 codes per person."""
ZIPF_EXPONENT = 1.0
AGE_BANDS = (18, 45, 65)
BAND_AFFINITY = 3.0
INCOME_BIN = 5_000
INCOME_BINS = 21
K_DEFAULT, L_DEFAULT, QD_DEFAULT, S_DEFAULT = 10, 5, 5, 0.02
K_VALUES = (5, 10, 20, 30, 40, 50)
L_VALUES = (2, 3, 4, 5, 6, 8, 10, 20, 30, 40, 50)
QD_VALUES = (1, 2, 3, 4, 5)
S_VALUES = (0.01, 0.02, 0.04, 0.06, 0.08, 0.1)
SIZES = (5_000, 10_000, 15_000, 20_000, 25_000, 30_000, 35_000, 40_000, 45_000, 50_000)
SIZES += (55_000, N_FULL)
BLOCKS = (0, 10_000, 2_000, 500)
"""Rows per block of the blocking experiment; 0 is the whole table (one block)."""
CJ_SIZES = (801, 2_000, 5_000)
RMR_M, RMR_DELTA = 2, 0.65
EXPERIMENTS = ("k", "l", "qd", "s", "size", "blocking", "readings", "cj")
ALGORITHMS = ("apa", "paa", "rmr")
LABELS = {"apa": "APA", "paa": "PAA", "rmr": "RMR"}
STYLES = {
    "apa": ("tab:blue", "o", "-"),
    "paa": ("tab:orange", "s", "--"),
    "rmr": ("tab:green", "^", ":"),
}
READINGS = ("certain", "uniform")
INFORMS = "informs-like"
CJ = "completejourney"
CJ_CONFIG = _bench.REPO_ROOT / "conf" / "completejourney_paa.yaml"
SET_COLUMN = "diagnoses"
QI_SPEC: tuple[tuple[str, str], ...] = (
    ("month_of_birth", "nominal"),
    ("year_of_birth", "nominal"),
    ("race", "nominal"),
    ("years_of_education", "ordinal"),
    ("income", "ordinal"),
)
RACES = ("White", "Black", "Asian", "AmIndian", "PacIslander", "Multiple")
RACE_SHARES = (0.72, 0.14, 0.06, 0.04, 0.025, 0.015)
EDUCATION = tuple(str(i) for i in range(22))
INCOME = tuple(
    f"{i * INCOME_BIN // 1000}-{(i + 1) * INCOME_BIN // 1000}K" for i in range(INCOME_BINS - 1)
) + (f"{(INCOME_BINS - 1) * INCOME_BIN // 1000}K+",)

RUN_FIELDS = [
    "experiment",
    "dataset",
    "algorithm",
    "k",
    "l",
    "qd",
    "s",
    "n",
    "max_block_rows",
    "status",
    "are_certain",
    "are_uniform",
    "seconds",
    "cluster_seconds",
    "rows_out",
    "suppressed",
    "groups",
    "mean_group_size",
    "tbuckets",
    "blocks",
    "item_ncp",
    "verified",
    "qt",
    "set_domain",
    "pred2_share",
    "pred2_pub_certain",
    "pred2_pub_uniform",
    "act_median",
    "note",
    "code_sha",
]
SUMMARY_KEYS = ["experiment", "dataset", "k", "l", "qd", "s", "n", "max_block_rows"]
SUMMARY_METRICS = ["are_certain", "are_uniform", "seconds", "suppressed", "groups", "status"]


# ---------------------------------------------------------------------------
# Data


def informs_like(n: int = N_FULL, seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """The synthetic INFORMS-shaped table (module docstring) and the taxonomy's leaf codes.

    Every column but the set is drawn per record from one seeded generator; the first
    ``m`` records of ``informs_like(n)`` are not those of ``informs_like(m)``: take
    prefixes of the full table for the size experiment.

    Returns:
        ``(table, leaves)``: columns ``pid``, the five quasi-identifiers (text) and
        ``diagnoses`` (codes joined by ``|``); the 1,297 leaf codes ``0001 .. 1297``.
    """
    rng = np.random.default_rng(seed)
    leaves = [f"{i:04d}" for i in range(1, N_LEAVES + 1)]
    used = np.sort(rng.choice(N_LEAVES, N_USED, replace=False))
    popularity = 1.0 / (rng.permutation(N_USED) + 1.0) ** ZIPF_EXPONENT
    affinity = rng.integers(0, len(AGE_BANDS) + 1, N_USED)
    age = np.minimum(rng.gamma(2.0, 20.0, n).astype(np.int64), 87)
    band = np.digitize(age, AGE_BANDS)
    sizes = np.minimum(1 + rng.poisson(EXTRA_ITEMS_MEAN, n), N_USED)
    items = np.empty(n, dtype=object)
    for b in range(len(AGE_BANDS) + 1):
        weight = popularity * np.where(affinity == b, BAND_AFFINITY, 1.0)
        log_w = np.log(weight / weight.sum())
        rows = np.flatnonzero(band == b)
        for a in range(0, len(rows), 4096):
            chunk = rows[a : a + 4096]
            # Gumbel top-k: the first sizes[r] keys are a draw without replacement.
            keys = log_w[None, :] + rng.gumbel(size=(len(chunk), N_USED))
            order = np.argsort(-keys, axis=1)
            for r, row in zip(chunk.tolist(), order, strict=True):
                picked = np.sort(used[row[: sizes[r]]])
                items[r] = "|".join(leaves[j] for j in picked.tolist())
    month = rng.integers(1, 13, n)
    race = rng.choice(len(RACES), n, p=RACE_SHARES)
    education = np.clip(np.minimum(age - 5, np.rint(rng.normal(12.5, 3.0, n))), 0, 21)
    dollars = rng.lognormal(10.2, 0.9, n)
    income = np.where(age < 16, 0, np.minimum(dollars // INCOME_BIN, INCOME_BINS - 1))
    table = pd.DataFrame(
        {
            "pid": np.arange(1, n + 1),
            "month_of_birth": month.astype(str),
            "year_of_birth": (2001 - age).astype(str),
            "race": np.asarray(RACES, dtype=object)[race],
            "years_of_education": education.astype(np.int64).astype(str),
            "income": np.asarray(INCOME, dtype=object)[income.astype(np.int64)],
            SET_COLUMN: items,
        }
    )
    return table, leaves


def write_taxonomy(path: Path, leaves: Sequence[str], fanout: int = FANOUT) -> Path:
    """The even taxonomy of Gong et al. 2016 over ``leaves``, as an ARX hierarchy file."""
    from sparkanon.attributes.itemsets import even_taxonomy

    tax = even_taxonomy(list(leaves), fanout)
    path.write_text("".join(";".join(p) + "\n" for p in tax.paths), encoding="utf-8")
    return path


def completejourney(n: int, tmp: Path) -> pd.DataFrame:
    """The Complete Journey demo (n = 801) or a ``generate_rt.py`` growth of it to ``n`` rows."""
    from scripts import generate_rt

    if n == 801:
        path = generate_rt.DEFAULT_SOURCE
    else:
        path = tmp / f"completejourney_{n}.csv"
        if not path.is_file():
            generate_rt.generate(generate_rt.DEFAULT_SOURCE, path, n, seed=0, fmt="csv")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def data_stats(table: pd.DataFrame, set_column: str, qi: Sequence[str]) -> dict[str, Any]:
    """What the meta JSON says about a table: sizes, set sizes, distinct values."""
    sets = table[set_column].str.split("|")
    sizes = sets.map(len)
    items = pd.Series([i for s in sets for i in s])
    return {
        "records": len(table),
        "mean_set_size": round(float(sizes.mean()), 3),
        "max_set_size": int(sizes.max()),
        "distinct_items": int(items.nunique()),
        "distinct_sets": int(table[set_column].nunique()),
        "distinct_qi_values": {c: int(table[c].nunique()) for c in qi},
    }


# ---------------------------------------------------------------------------
# Datasets as the experiments see them


class Dataset:
    """One dataset: the full table, the job's config template and the item taxonomy.

    (Plain classes, not dataclasses: the tests load this script without registering it
    as a module, which dataclasses' string annotations need.)
    """

    def __init__(
        self,
        name: str,
        table: pd.DataFrame,
        base: dict[str, Any],
        set_column: str,
        qi: list[str],
        tree: Any,
        by_size: dict[int, pd.DataFrame] | None = None,
    ) -> None:
        self.name = name
        self.table = table
        self.base = base
        self.set_column = set_column
        self.qi = qi
        self.tree = tree
        self.by_size = by_size or {}

    def rows(self, n: int) -> pd.DataFrame:
        """The first ``n`` records (or the table of that size)."""
        if n in self.by_size:
            return self.by_size[n]
        return self.table.iloc[:n].reset_index(drop=True)


def informs_dataset(n: int, seed: int, tmp: Path) -> Dataset:
    """informs-like: the table, its taxonomy file and the job config template."""
    from sparkanon.attributes.hierarchy import load_arx_hierarchy
    from sparkanon.attributes.itemsets import ItemTree

    table, leaves = informs_like(n, seed)
    tax = write_taxonomy(tmp / "informs_like_taxonomy.csv", leaves)
    attributes: list[dict[str, Any]] = [{"name": "pid", "kind": "identifier"}]
    for name, kind in QI_SPEC:
        attr: dict[str, Any] = {"name": name, "kind": kind}
        if name == "years_of_education":
            attr["order"] = list(EDUCATION)
        elif name == "income":
            attr["order"] = list(INCOME)
        attributes.append(attr)
    base = {
        "input": {"format": "csv", "path": str(tmp / "informs_like.csv"), "options": {}},
        "attributes": attributes,
        "sensitive": {
            "name": SET_COLUMN,
            "kind": "itemset",
            "layout": "delimited",
            "separator": "|",
            "taxonomy": str(tax),
        },
        "model": {"name": "kl_diversity", "k": K_DEFAULT, "l": L_DEFAULT},
        "algorithm": {"name": "paa"},
        "partitioning": {"max_block_rows": 2000},
        "output": {"path": str(tmp / "out"), "format": "parquet", "publish": "anatomy"},
        "seed": 0,
    }
    tree = ItemTree.of(load_arx_hierarchy(tax, SET_COLUMN))
    return Dataset(INFORMS, table, base, SET_COLUMN, [q for q, _ in QI_SPEC], tree)


def cj_dataset(sizes: Sequence[int], tmp: Path) -> Dataset:
    """Complete Journey at each size, with ``conf/completejourney_paa.yaml`` as template."""
    from sparkanon.attributes.hierarchy import load_arx_hierarchy
    from sparkanon.attributes.itemsets import ItemTree

    base = yaml.safe_load(CJ_CONFIG.read_text(encoding="utf-8"))
    sens = base["sensitive"]
    sens["taxonomy"] = str(_bench.REPO_ROOT / sens["taxonomy"])
    base["output"]["path"] = str(tmp / "cj_out")
    qi = [a["name"] for a in base["attributes"] if a["kind"] != "identifier"]
    by_size = {n: completejourney(n, tmp) for n in sizes}
    tree = ItemTree.of(load_arx_hierarchy(sens["taxonomy"], sens["name"]))
    first = by_size[min(sizes)]
    return Dataset(CJ, first, base, sens["name"], qi, tree, by_size)


def leaf_sets(column: pd.Series, tree: Any) -> Any:
    """The sets of a ``|``-joined column as leaf ids (an empty string is the empty set)."""
    from sparkanon.attributes.itemsets import ItemSets

    code = tree.leaf_codes()
    return ItemSets.from_lists([code[i] for i in s.split("|")] if s else [] for s in column)


def node_sets(column: pd.Series, tree: Any) -> Any:
    """The published sets of a TT column (node labels joined by ``|``) as node ids."""
    from sparkanon.attributes.itemsets import ItemSets

    code = {label: i for i, label in enumerate(tree.labels)}
    return ItemSets.from_lists([code[i] for i in s.split("|")] if s else [] for s in column)


# ---------------------------------------------------------------------------
# Queries and the estimators


class Bench:
    """The queries of one (dataset, size, qd, s) and their answers on the original table."""

    def __init__(
        self,
        compiled: Any,
        act: np.ndarray,
        drawn: int,
        set_domain: str,
        pred2_share: float,
        queries: list[Any],
    ) -> None:
        self.compiled = compiled
        self.act = act
        self.qt = len(queries)
        self.drawn = drawn
        self.set_domain = set_domain
        self.pred2_share = pred2_share
        self.queries = queries
        self.scorer: Any = None


def query_bench(
    table: pd.DataFrame,
    ds: Dataset,
    qd: int,
    s: float,
    qt: int,
    seed: int,
    set_domain: str = "held",
) -> Bench:
    """Draw ``qt`` answerable queries and count them on the original table.

    Args:
        table: the original records.
        ds: their dataset (columns, taxonomy).
        qd: quasi-identifiers per query.
        s: selectivity (a fraction).
        qt: queries wanted.
        seed: seed of the queries.
        set_domain: ``|A|`` of the set attribute in eq. 4: ``held`` (items the data
            holds), ``leaves`` (the taxonomy's) or ``sets`` (distinct sets of T).
    """
    from sparkanon.metrics import are as qm

    sets = leaf_sets(table[ds.set_column], ds.tree)
    distinct = sorted(set(sets.keys()))
    held = int(np.unique(sets.nodes).size)
    size = {"held": held, "leaves": ds.tree.n_leaves, "sets": len(distinct)}[set_domain]
    domains = {c: table[c].unique().tolist() for c in ds.qi}
    qi = table[ds.qi]

    def draw(m: int) -> list[Any]:
        return qm.draw_queries(domains, distinct, qd, s, m, seed, set_size=size)

    def count(queries: Sequence[Any]) -> np.ndarray:
        return qm.actual_counts(qi, sets, queries)

    queries, act, drawn = qm.draw_answerable(draw, count, qt, first_pool=qt)
    compiled = qm.compile_queries(queries)
    # Diagnostic: the share of records whose set satisfies pred2 (QIs ignored), on a sample.
    sample = np.random.default_rng(seed).choice(len(table), min(len(table), 1000), replace=False)
    scores = qm.set_scores(sets.take(np.sort(sample)), compiled)
    share = float(scores.mean())
    return Bench(compiled, act, drawn, set_domain, share, queries)


def pred2_probabilities(
    sets: Any, tree: Any, compiled: Any, cells: int = 1 << 21
) -> tuple[np.ndarray, np.ndarray]:
    """pred2 (``contains``) of every query on every generalized set, both readings.

    The same numbers as :func:`sparkanon.metrics.are.set_scores` with ``certain`` and
    ``uniform``: per set, the probability that a combination is in it is the product over
    its items of ``1 / leaves_under(node covering it)`` (0 when no node covers an item);
    per query these are summed over its combinations, ``uniform`` caps the sum at 1 and
    ``certain`` is 1 when the sum is positive (some combination covered). Probabilities
    stay positive in float64 (the least is ``1297^-17``), so one sum serves both. Only the
    query's own combinations are gathered: the cost is sets x (items of the distinct
    combinations + combinations summed over the queries), not the dense product sets x
    combinations x queries of :func:`sparkanon.metrics.are.tt_partial`.

    Returns:
        ``(certain, uniform)``, each ``(len(sets), qt)``.
    """
    from sparkanon.metrics import are as qm

    qm.check_antichains(sets, tree)
    n, qt = len(sets), compiled.n_queries
    offsets, items = compiled.combo_offsets, compiled.combo_items
    lengths = np.diff(offsets)
    nonempty = lengths > 0
    starts = offsets[:-1][nonempty]
    combo, query = np.nonzero(compiled.membership)
    order = np.argsort(query, kind="stable")
    q_combos, q_of = combo[order], query[order]
    per_query = np.bincount(q_of, minlength=qt)
    if (per_query == 0).any():
        raise ValueError("a query has no combination")
    q_starts = np.concatenate([[0], np.cumsum(per_query)[:-1]])
    step = max(1, cells // max(items.size, q_combos.size, tree.n_leaves, 1))
    certain = np.zeros((n, qt))
    uniform = np.zeros((n, qt))
    for a in range(0, n, step):
        b = min(n, a + step)
        part = sets.nodes[sets.offsets[a] : sets.offsets[b]]
        row = np.repeat(np.arange(b - a), np.diff(sets.offsets[a : b + 1]))
        span = tree.leaf_hi[part] - tree.leaf_lo[part] + 1
        leaves = np.repeat(tree.leaf_lo[part] - np.cumsum(span) + span, span)
        leaves += np.arange(int(span.sum()))
        # Leaves x sets (transposed: the gathers below copy whole rows).
        log_leaf = np.full((tree.n_leaves, b - a), -np.inf)
        log_leaf[leaves, np.repeat(row, span)] = np.repeat(-np.log(span.astype(float)), span)
        p = np.ones((len(lengths), b - a))  # the empty combination is in every set
        if starts.size:
            p[nonempty] = np.exp(np.add.reduceat(log_leaf[items], starts, axis=0))
        total = np.add.reduceat(p[q_combos], q_starts, axis=0)
        certain[a:b] = (total > 0).T
        uniform[a:b] = np.minimum(total, 1.0).T
    return certain, uniform


class ScoreCache:
    """pred2 of one query bench on every generalized set seen so far (each computed once).

    The l sweep, APA beside PAA and the blocking runs publish many of the same sets.
    """

    def __init__(self, tree: Any, compiled: Any) -> None:
        self.tree = tree
        self.compiled = compiled
        self.index: dict[tuple[int, ...], int] = {}
        self.certain = np.zeros((0, compiled.n_queries), dtype=bool)
        self.uniform = np.zeros((0, compiled.n_queries))

    def __call__(self, sets: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(certain, uniform)`` rows of ``sets``, computing the new ones."""
        keys = sets.keys()
        missing = sorted({i for i, key in enumerate(keys) if key not in self.index})
        if missing:
            new = sets.take(np.asarray(missing, dtype=np.int64))
            certain, uniform = pred2_probabilities(new, self.tree, self.compiled)
            base = len(self.index)
            for j, i in enumerate(missing):
                self.index[keys[i]] = base + j
            self.certain = np.vstack([self.certain, certain.astype(bool)])
            self.uniform = np.vstack([self.uniform, uniform])
        rows = np.fromiter((self.index[key] for key in keys), dtype=np.int64, count=len(keys))
        return self.certain[rows].astype(np.float64), self.uniform[rows]


def group_partial(
    groups: np.ndarray, set_index: np.ndarray, counts: np.ndarray, scores: np.ndarray
) -> Any:
    """TT partial: per group, ``sum count * score[set]`` over its TT rows, and its size."""
    from sparkanon.metrics.are import GroupPartial

    codes, uniq = pd.factorize(pd.Series(groups), sort=True)
    order = np.argsort(codes, kind="stable")
    codes, set_index, counts = codes[order], set_index[order], counts[order]
    values = np.zeros((len(uniq), scores.shape[1]))
    step = max(1, (1 << 22) // max(scores.shape[1], 1))
    for a in range(0, len(codes), step):
        c = codes[a : a + step]
        first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
        block = scores[set_index[a : a + step]] * counts[a : a + step, None]
        values[c[first]] += np.add.reduceat(block, first, axis=0)
    sizes = np.bincount(codes, weights=counts, minlength=len(uniq)).astype(float)
    return GroupPartial(groups=np.asarray(uniq), values=values, sizes=sizes)


def distinct_sets(sets: Any) -> tuple[Any, np.ndarray]:
    """The distinct sets and the index of each row's set among them."""
    from sparkanon.attributes.itemsets import ItemSets

    index: dict[tuple[int, ...], int] = {}
    inverse = np.fromiter(
        (index.setdefault(key, len(index)) for key in sets.keys()), dtype=np.int64, count=len(sets)
    )
    return ItemSets.from_lists(index), inverse


def anatomy_are(
    rt: pd.DataFrame, tt: pd.DataFrame, ds: Dataset, bench: Bench, scorer: Any = None
) -> dict[str, float]:
    """ARE (percent) of APA's or PAA's RT and TT tables, both readings.

    ``scorer``: sets -> ``(certain, uniform)`` (a :class:`ScoreCache`); default computes.
    """
    from sparkanon.metrics import are as qm

    rt_part = qm.rt_partial(rt, bench.compiled)
    distinct, inverse = distinct_sets(node_sets(tt[ds.set_column], ds.tree))
    scorer = scorer or ScoreCache(ds.tree, bench.compiled)
    scores = scorer(distinct)
    counts = tt["count"].to_numpy(dtype=np.float64)
    groups = tt["group_id"].to_numpy()
    out = {}
    for reading, score in zip(READINGS, scores, strict=True):
        est = qm.combine(rt_part, group_partial(groups, inverse, counts, score))
        out[reading] = qm.are(bench.act, est)
        out[f"pub_{reading}"] = published_share(score, inverse, counts)
    return out


def published_share(score: np.ndarray, inverse: np.ndarray, counts: np.ndarray) -> float:
    """Mean pred2 over the published records and the queries (a diagnostic)."""
    per_set = np.bincount(inverse, weights=counts, minlength=score.shape[0])
    return float(per_set @ score.mean(axis=1) / max(per_set.sum(), 1.0))


def range_shares(lo: np.ndarray, hi: np.ndarray, kinds: Sequence[Any], compiled: Any) -> np.ndarray:
    """``P(pred1)`` of each cluster (ranges ``lo``/``hi`` of codes, one row per cluster).

    Per constrained attribute, the share of the range's values the query allows; the
    product over the attributes (module docstring, RMR's estimate).
    """
    from sparkanon.attributes.kinds import NominalKind

    qt = compiled.n_queries
    out = np.ones((lo.shape[0], qt))
    for j, kind in enumerate(kinds):
        if kind.name not in compiled.columns:
            continue
        c = compiled.columns.index(kind.name)
        index, table = compiled.column_values[c], compiled.column_tables[c]
        rows = index.get_indexer(pd.Index(list(kind.labels), dtype=object))
        rows[rows < 0] = len(index)  # a value no query names
        allowed = table[rows].astype(np.float64)  # (V, qt)
        a, b = lo[:, j].astype(np.int64), hi[:, j].astype(np.int64)
        if isinstance(kind, NominalKind):
            share = np.where(
                (a == b)[:, None], allowed[a], allowed.sum(axis=0)[None, :] / kind.size
            )
        else:
            cum = np.vstack([np.zeros((1, qt)), np.cumsum(allowed, axis=0)])
            share = (cum[b + 1] - cum[a]) / (b - a + 1)[:, None]
        out *= share
    return out


def rmr_are(
    res: Any, ds: Dataset, kinds: Sequence[Any], bench: Bench, scorer: Any = None
) -> dict[str, float]:
    """ARE (percent) of RMR's generalized table, both readings (module docstring)."""
    from sparkanon.metrics import are as qm
    from sparkanon.metrics.are import GroupPartial

    n_clusters = res.n_clusters
    first = np.unique(res.cluster, return_index=True)[1]
    size = np.bincount(res.cluster, minlength=n_clusters).astype(float)
    shares = range_shares(res.qi_lo[first], res.qi_hi[first], kinds, bench.compiled)
    rt_part = GroupPartial(groups=np.arange(n_clusters), values=shares * size[:, None], sizes=size)
    distinct, inverse = distinct_sets(res.generalized)
    scorer = scorer or ScoreCache(ds.tree, bench.compiled)
    scores = scorer(distinct)
    ones = np.ones(len(inverse))
    out = {}
    for reading, score in zip(READINGS, scores, strict=True):
        est = qm.combine(rt_part, group_partial(res.cluster, inverse, ones, score))
        out[reading] = qm.are(bench.act, est)
        out[f"pub_{reading}"] = published_share(score, inverse, ones)
    return out


def generalized_item_ncp(original: Any, generalized: Any, tree: Any) -> float:
    """He and Naughton's NCP per item occurrence; an item of a suppressed set counts 1."""
    n_leaves = tree.n_leaves
    g_row = np.repeat(np.arange(len(generalized)), generalized.sizes())
    g_key = g_row * n_leaves + tree.leaf_lo[generalized.nodes]
    order = np.argsort(g_key)
    g_key, g_nodes = g_key[order], generalized.nodes[order]
    o_row = np.repeat(np.arange(len(original)), original.sizes())
    key = o_row * n_leaves + original.nodes
    pos = np.searchsorted(g_key, key, side="right") - 1
    ok = pos >= 0
    node = g_nodes[np.maximum(pos, 0)]
    ok &= (g_row[order][np.maximum(pos, 0)] == o_row) & (tree.leaf_hi[node] >= original.nodes)
    ncp = np.where(ok, np.asarray(tree.item_ncp(node), dtype=float), 1.0)
    return float(ncp.mean()) if ncp.size else 0.0


# ---------------------------------------------------------------------------
# Runs


class Anon:
    """One anonymization: its status, facts (the runs-CSV columns) and published tables."""

    def __init__(
        self,
        status: str,
        facts: dict[str, Any],
        rt: pd.DataFrame | None = None,
        tt: pd.DataFrame | None = None,
        rmr: Any = None,
        note: str = "",
    ) -> None:
        self.status = status
        self.facts = facts
        self.rt = rt
        self.tt = tt
        self.rmr = rmr
        self.note = note


def job_config(ds: Dataset, alg: str, k: int, l: int, n: int, block_rows: int) -> dict:  # noqa: E741
    """The dataset's job config with the model, algorithm and blocking of one run."""
    raw = copy.deepcopy(ds.base)
    raw["model"] = {"name": "kl_diversity", "k": k, "l": l}
    raw["algorithm"] = {"name": alg}
    raw["partitioning"] = {"max_block_rows": block_rows or max(n, k * l)}
    return raw


def run_anatomy(ds: Dataset, alg: str, k: int, l: int, n: int, block_rows: int) -> Anon:  # noqa: E741
    """APA or PAA as a local-engine job on the first ``n`` records."""
    from sparkanon.engine.local import LocalEngine
    from sparkanon.errors import ConfigError
    from sparkanon.families import parse_config
    from sparkanon.pipeline import run_job

    table = ds.rows(n)
    try:
        config = parse_config(job_config(ds, alg, k, l, n, block_rows), source=ds.name)
        start = time.perf_counter()
        res = run_job(LocalEngine(), config, table=table.copy(), commit=False)
        seconds = time.perf_counter() - start
    except ConfigError as exc:
        return Anon("infeasible", {}, note=str(exc).splitlines()[0])
    m = res.metrics
    rt = res.publication.tables["rt"]
    tt = res.publication.tables["tt"]
    facts = {
        "seconds": round(seconds, 3),
        "cluster_seconds": round(m["seconds"]["cluster"] + m["seconds"]["reconcile"], 3),
        "rows_out": m["rows_out"],
        "suppressed": m["rows_suppressed"],
        "groups": m["groups"],
        "mean_group_size": round(m["rows_out"] / m["groups"], 3) if m["groups"] else "",
        "tbuckets": m["tbuckets"],
        "blocks": m["blocks"],
        "item_ncp": round(m["item_ncp"], 6),
        "verified": m["verified"],
    }
    reasons = {r: c for r, c in m["suppressed_by_reason"].items() if c}
    note = " ".join(f"{r}={c}" for r, c in reasons.items())
    return Anon("ok", facts, rt=rt, tt=tt, note=note)


def rmr_kinds(ds: Dataset, table: pd.DataFrame) -> list[Any]:
    """The quasi-identifiers' kinds (ordinal: declared order; nominal: values in T)."""
    from sparkanon.attributes.kinds import nominal_kind, ordinal_kind

    spec = {a["name"]: a for a in ds.base["attributes"]}
    kinds = []
    for name in ds.qi:
        attr = spec[name]
        if attr["kind"] == "ordinal":
            kinds.append(ordinal_kind(name, 1.0, tuple(str(v) for v in attr["order"])))
        else:
            values = sorted(table[name].unique().tolist(), key=lambda v: (len(v), v))
            kinds.append(nominal_kind(name, 1.0, tuple(values)))
    return kinds


def run_rmr(ds: Dataset, k: int, n: int) -> tuple[Anon, list[Any]]:
    """RMR (m = 2, delta = 0.65) on the first ``n`` records."""
    from sparkanon.algorithms.transaction.rmr import rmr
    from sparkanon.attributes.ranges import RangeNcp

    table = ds.rows(n)
    kinds = rmr_kinds(ds, table)
    codes = np.stack([kd.encode(table[kd.name])[0] for kd in kinds], axis=1)
    sets = leaf_sets(table[ds.set_column], ds.tree)
    start = time.perf_counter()
    res = rmr(codes, [RangeNcp(kd) for kd in kinds], sets, ds.tree, k, m=RMR_M, delta=RMR_DELTA)
    seconds = time.perf_counter() - start
    lost = int(((res.generalized.sizes() == 0) & (sets.sizes() > 0)).sum())
    facts = {
        "seconds": round(seconds, 3),
        "cluster_seconds": round(seconds, 3),
        "rows_out": n,
        "suppressed": lost,
        "groups": res.n_clusters,
        "mean_group_size": round(n / res.n_clusters, 3),
        "tbuckets": "",
        "blocks": 1,
        "item_ncp": round(generalized_item_ncp(sets, res.generalized, ds.tree), 6),
        "verified": "",
    }
    note = f"sets_suppressed={lost}" if lost else ""
    return Anon("ok", facts, rmr=res, note=note), kinds


class Runner:
    """Caches anonymizations and query benches; writes one row per evaluation."""

    def __init__(self, args: argparse.Namespace, sha: str) -> None:
        self.args = args
        self.sha = sha
        self.anons: dict[tuple, tuple[Anon, list[Any] | None]] = {}
        self.benches: dict[tuple, Bench] = {}
        self.rows: list[dict[str, Any]] = []

    def anon(self, ds: Dataset, alg: str, k: int, l: int, n: int, blocks: int) -> Anon:  # noqa: E741
        """The anonymization of one setting, run on first use."""
        key = (ds.name, alg, k, l if alg != "rmr" else None, n, blocks if alg != "rmr" else 0)
        cached = self.anons.get(key)
        if cached is not None and cached[0].status == "ok" and cached[0].facts.get("released"):
            del self.anons[key]  # its tables were released: run it again
        if key not in self.anons:
            if alg == "rmr":
                self.anons[key] = run_rmr(ds, k, n)
            else:
                self.anons[key] = (run_anatomy(ds, alg, k, l, n, blocks), None)
            a = self.anons[key][0]
            extra = f"{a.facts.get('seconds', '')}s {a.note}"
            print(f"  anonymized {key}: {a.status} {extra}", flush=True)
        return self.anons[key][0]

    def bench(self, ds: Dataset, n: int, qd: int, s: float, domain: str = "held") -> Bench:
        """The queries of one size, qd and s, drawn and counted on first use."""
        key = (ds.name, n, qd, s, domain, self.args.qt)
        if key not in self.benches:
            start = time.perf_counter()
            self.benches[key] = query_bench(
                ds.rows(n), ds, qd, s, self.args.qt, self.args.seed, domain
            )
            b = self.benches[key]
            b.scorer = ScoreCache(ds.tree, b.compiled)
            print(
                f"  queries {key}: {b.qt} answerable of {b.drawn} drawn, median act "
                f"{np.median(b.act):.0f}, pred2 share {b.pred2_share:.3f} "
                f"({time.perf_counter() - start:.1f}s)",
                flush=True,
            )
        return self.benches[key]

    def evaluate(
        self,
        experiment: str,
        ds: Dataset,
        alg: str,
        k: int,
        l: int | None,  # noqa: E741
        n: int,
        qd: int = QD_DEFAULT,
        s: float = S_DEFAULT,
        blocks: int = 0,
    ) -> dict[str, Any]:
        """Anonymize (cached), estimate, and record one row."""
        a = self.anon(ds, alg, k, l or 0, n, blocks)
        row: dict[str, Any] = {
            "experiment": experiment,
            "dataset": ds.name,
            "algorithm": alg,
            "k": k,
            "l": "" if alg == "rmr" else l,
            "qd": qd,
            "s": s,
            "n": n,
            "max_block_rows": "" if alg == "rmr" else (blocks or "whole"),
            "status": a.status,
            "note": a.note,
            "code_sha": self.sha,
            **{f: v for f, v in a.facts.items() if f != "released"},
        }
        if a.status == "ok":
            b = self.bench(ds, n, qd, s)
            start = time.perf_counter()
            if alg == "rmr":
                kinds = self.anons[(ds.name, alg, k, None, n, 0)][1]
                ares = rmr_are(a.rmr, ds, kinds, b)  # its sets are its own: not cached
            else:
                assert a.rt is not None and a.tt is not None
                ares = anatomy_are(a.rt, a.tt, ds, b, b.scorer)
            row |= {f"are_{r}": round(ares[r], 4) for r in READINGS}
            row |= {f"pred2_pub_{r}": round(ares[f"pub_{r}"], 4) for r in READINGS}
            row |= {
                "qt": b.qt,
                "set_domain": b.set_domain,
                "pred2_share": round(b.pred2_share, 4),
                "act_median": float(np.median(b.act)),
            }
            print(
                f"{experiment:<8} {ds.name} {LABELS[alg]} k={k} l={row['l']} n={n} qd={qd} "
                f"s={s} blocks={row['max_block_rows']}: ARE certain {ares['certain']:.1f}% "
                f"uniform {ares['uniform']:.1f}%, {a.facts['seconds']}s, groups "
                f"{a.facts['groups']}, suppressed {a.facts['suppressed']} "
                f"(est {time.perf_counter() - start:.1f}s)",
                flush=True,
            )
        else:
            print(f"{experiment:<8} {ds.name} {LABELS[alg]} k={k} l={l} n={n}: {a.note}")
        if a.status == "ok" and (k, l or L_DEFAULT, blocks) != (K_DEFAULT, L_DEFAULT, 0):
            # Only the default setting is evaluated again (qd, s, size, readings).
            a.rt = a.tt = a.rmr = None
            a.facts["released"] = True
        self.rows.append(row)
        return row

    def drop(self, ds: Dataset, n: int) -> None:
        """Forget the anonymizations and queries of size ``n`` (their tables are large)."""
        for key in [key for key in self.anons if key[0] == ds.name and key[4] == n]:
            del self.anons[key]
        self.drop_benches(ds, lambda key: key[1] == n)

    def drop_benches(self, ds: Dataset, which: Any) -> None:
        """Forget the query benches (and their pred2 caches) whose key ``which`` accepts."""
        for key in [key for key in self.benches if key[0] == ds.name and which(key)]:
            del self.benches[key]


# ---------------------------------------------------------------------------
# Experiments


def with_rmr(args: argparse.Namespace, n: int) -> tuple[str, ...]:
    """APA, PAA, and RMR when it is wanted at this size."""
    return ALGORITHMS if (not args.no_rmr and n <= args.rmr_max_n) else ("apa", "paa")


def run_informs(args: argparse.Namespace, run: Runner, ds: Dataset, meta: dict) -> None:
    n = len(ds.table)
    only = set(args.only or EXPERIMENTS)
    k0, l0 = K_DEFAULT, L_DEFAULT
    if "k" in only:
        for k in args.k:
            for alg in with_rmr(args, n):
                run.evaluate("k", ds, alg, k, l0, n)
    if "l" in only:
        for lv in args.l:
            for alg in ("apa", "paa"):
                run.evaluate("l", ds, alg, k0, lv, n)
    if "qd" in only:
        for qd in args.qd:
            for alg in with_rmr(args, n):
                run.evaluate("qd", ds, alg, k0, l0, n, qd=qd)
    if "s" in only:
        for s in args.s:
            for alg in with_rmr(args, n):
                run.evaluate("s", ds, alg, k0, l0, n, s=s)
    run.drop_benches(ds, lambda key: (key[2], key[3]) != (QD_DEFAULT, S_DEFAULT))
    if "blocking" in only:
        for blocks in args.blocks:
            if blocks and blocks >= n:
                continue
            for alg in ("apa", "paa"):
                run.evaluate("blocking", ds, alg, k0, l0, n, blocks=blocks)
    if "readings" in only:
        meta["readings"] = readings(args, run, ds, n)
        meta["estimator_check"] = estimator_check(args, run, ds, n)
    if "size" in only:
        # Largest first: the full size's anonymizations are cached from above.
        for size in sorted({min(v, n) for v in args.sizes}, reverse=True):
            for alg in with_rmr(args, size):
                run.evaluate("size", ds, alg, k0, l0, size)
            if size != n:
                run.drop(ds, size)


def readings(args: argparse.Namespace, run: Runner, ds: Dataset, n: int) -> list[dict]:
    """ARE of the default setting under each ``|A|`` reading and pred2 reading."""
    from sparkanon.metrics import are as qm

    out = []
    for domain in ("held", "leaves", "sets"):
        qt = args.qt if domain != "sets" else min(args.qt, args.sets_qt)
        if qt <= 0:
            continue
        start = time.perf_counter()
        if domain == "held":
            b = run.bench(ds, n, QD_DEFAULT, S_DEFAULT)
        else:
            b = query_bench(ds.rows(n), ds, QD_DEFAULT, S_DEFAULT, qt, args.seed, domain)
            b.scorer = ScoreCache(ds.tree, b.compiled)
        for alg in with_rmr(args, n):
            a = run.anon(ds, alg, K_DEFAULT, L_DEFAULT, n, 0)
            if a.status != "ok":
                continue
            if domain == "sets" and alg != "rmr":
                # The module's own estimator (tt_partial's dense product).
                assert a.rt is not None and a.tt is not None
                sets = node_sets(a.tt[ds.set_column], ds.tree)
                values = {
                    r: qm.are(
                        b.act,
                        qm.estimated_counts(
                            a.rt,
                            a.tt.assign(set=list(sets.keys())),
                            ds.tree,
                            b.compiled,
                            generalized=r,
                        ),
                    )
                    for r in READINGS
                }
                how = "sparkanon.metrics.are.estimated_counts"
            elif domain == "sets":
                continue  # RMR under this reading would need the dense product too
            elif alg == "rmr":
                kinds = run.anons[(ds.name, "rmr", K_DEFAULT, None, n, 0)][1]
                values = rmr_are(a.rmr, ds, kinds, b, b.scorer)
                how = "script (generalization estimate)"
            else:
                assert a.rt is not None and a.tt is not None
                values = anatomy_are(a.rt, a.tt, ds, b, b.scorer)
                how = "script (pred2_probabilities)"
            row = {
                "set_domain": domain,
                "set_domain_size": {"held": "items held", "leaves": "taxonomy leaves"}.get(
                    domain, "distinct sets"
                ),
                "algorithm": alg,
                "qt": b.qt,
                "pred2_share": round(b.pred2_share, 4),
                "act_median": float(np.median(b.act)),
                "are_certain": round(values["certain"], 4),
                "are_uniform": round(values["uniform"], 4),
                # The module's estimator gives no per-set scores: no diagnostic (null).
                "pred2_pub_certain": _rounded(values.get("pub_certain")),
                "pred2_pub_uniform": _rounded(values.get("pub_uniform")),
                "estimator": how,
            }
            print(f"readings {row}", flush=True)
            out.append(row)
        print(f"  reading {domain}: {time.perf_counter() - start:.1f}s", flush=True)
    return out


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def estimator_check(args: argparse.Namespace, run: Runner, ds: Dataset, n: int) -> dict:
    """The script's TT estimate against :func:`estimated_counts` on the first queries."""
    from sparkanon.metrics import are as qm

    qt = min(args.check_qt, args.qt)
    if qt <= 0:
        return {}
    b = run.bench(ds, n, QD_DEFAULT, S_DEFAULT)
    queries = qm.compile_queries(b.queries[:qt])
    result: dict[str, Any] = {"queries": qt, "max_abs_diff": {}}
    for alg in ("apa", "paa"):
        a = run.anon(ds, alg, K_DEFAULT, L_DEFAULT, n, 0)
        if a.status != "ok":
            continue
        assert a.rt is not None and a.tt is not None
        sets = node_sets(a.tt[ds.set_column], ds.tree)
        distinct, inverse = distinct_sets(sets)
        scores = pred2_probabilities(distinct, ds.tree, queries)
        rt_part = qm.rt_partial(a.rt, queries)
        tt = a.tt.assign(set=list(sets.keys()))
        for reading, score in zip(READINGS, scores, strict=True):
            ours = qm.combine(
                rt_part,
                group_partial(
                    a.tt["group_id"].to_numpy(), inverse, a.tt["count"].to_numpy(float), score
                ),
            )
            theirs = qm.estimated_counts(a.rt, tt, ds.tree, queries, generalized=reading)
            diff = float(np.abs(ours - theirs).max())
            result["max_abs_diff"][f"{alg}/{reading}"] = diff
            if diff > 1e-6 * max(1.0, float(np.abs(theirs).max())):
                raise RuntimeError(f"estimator check failed: {alg} {reading} differs by {diff}")
    print(f"estimator check {result}", flush=True)
    return result


def run_cj(args: argparse.Namespace, run: Runner, ds: Dataset) -> None:
    for n in args.cj_sizes:
        for alg in ("apa", "paa", "rmr") if n <= args.cj_rmr_max_n else ("apa", "paa"):
            run.evaluate("cj", ds, alg, K_DEFAULT, L_DEFAULT, n)
        run.drop(ds, n)


# ---------------------------------------------------------------------------
# Outputs


def summarise(rows: list[dict]) -> list[dict]:
    """One row per (experiment, dataset, setting): the algorithms side by side."""
    out: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        if r["algorithm"] == "rmr":
            # RMR has no l and no blocking: it joins every row of its (k, n, qd, s).
            continue
        key = tuple(r.get(f, "") for f in SUMMARY_KEYS)
        row = out.setdefault(key, dict(zip(SUMMARY_KEYS, key, strict=True)))
        for m in SUMMARY_METRICS:
            row[f"{r['algorithm']}_{m}"] = r.get(m, "")
    for r in rows:
        if r["algorithm"] != "rmr":
            continue
        for row in out.values():
            same = all(
                str(row[f]) == str(r[f]) for f in ("experiment", "dataset", "k", "qd", "s", "n")
            )
            if same:
                for m in SUMMARY_METRICS:
                    row[f"rmr_{m}"] = r.get(m, "")
    return list(out.values())


def summary_fields() -> list[str]:
    return SUMMARY_KEYS + [f"{a}_{m}" for a in ALGORITHMS for m in SUMMARY_METRICS]


def _series(rows: list[dict], experiment: str, alg: str, x: str, y: str) -> tuple[list, list]:
    pts = [
        r
        for r in rows
        if r["experiment"] == experiment
        and r["algorithm"] == alg
        and r["status"] == "ok"
        and r.get(y, "") != ""
    ]
    # The whole table as one block is a block of n rows.
    xs = [float(r["n"] if r[x] == "whole" else r[x]) for r in pts]
    order = np.argsort(xs, kind="stable")
    return [xs[i] for i in order], [float(pts[i][y]) for i in order]


def _panel(ax: Any, rows: list[dict], experiment: str, x: str, y: str, algs: Sequence[str]) -> None:
    ys_all: list[float] = []
    for alg in algs:
        xs, ys = _series(rows, experiment, alg, x, y)
        if not xs:
            continue
        color, marker, line = STYLES[alg]
        ax.plot(xs, ys, color=color, marker=marker, linestyle=line, label=LABELS[alg])
        ys_all += ys
    positive = [v for v in ys_all if v > 0]
    if positive and max(positive) / min(positive) > 30:
        ax.set_yscale("log")
    elif ys_all:
        # At least 10 % of the largest value on the axis, so noise does not fill the panel.
        lo, hi = min(ys_all), max(ys_all)
        span = 0.1 * max(abs(lo), abs(hi))
        if hi - lo < span:
            mid = (lo + hi) / 2
            ax.set_ylim(mid - span / 2, mid + span / 2)
    ax.grid(True, alpha=0.3)
    if ys_all:
        ax.legend()


def plot_grid(rows: list[dict], panels: list[list[tuple]], title: str, path: Path) -> None:
    """A grid of panels, each ``(experiment, x, y, algorithms, title, xlabel, ylabel)``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nr, nc = len(panels), max(len(p) for p in panels)
    fig, axes = plt.subplots(nr, nc, figsize=(4.6 * nc, 3.7 * nr), squeeze=False)
    for i, line in enumerate(panels):
        for j in range(nc):
            ax = axes[i][j]
            if j >= len(line):
                ax.axis("off")
                continue
            experiment, x, y, algs, sub, xlabel, ylabel = line[j]
            _panel(ax, rows, experiment, x, y, algs)
            if experiment == "blocking":
                ax.set_xscale("log")
            ax.set_title(sub, fontsize=10)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_all(rows: list[dict], out_dir: Path) -> list[str]:
    """The paper's Figures 3-6 and ours (blocking, Complete Journey); returns the files."""
    inf = [r for r in rows if r["dataset"] == INFORMS]
    all3, two = ALGORITHMS, ("apa", "paa")
    n = max((int(r["n"]) for r in inf), default=0)
    written = []

    def are_rows(exp: str, x: str, algs: Sequence[str], what: str, xlabel: str) -> list[list]:
        return [[(exp, x, f"are_{r}", algs, f"{what}, {r}", xlabel, "ARE (%)")] for r in READINGS]

    figs = {
        "gong2016_fig3.png": (
            [
                [
                    ("k", "k", f"are_{r}", all3, f"(a) k, l = 5, {r}", "k", "ARE (%)"),
                    ("l", "l", f"are_{r}", two, f"(b) l, k = 10, {r}", "l", "ARE (%)"),
                ]
                for r in READINGS
            ],
            f"Gong et al. 2016, Figure 3: ARE against k and l (informs-like, n = {n:,})",
        ),
        "gong2016_fig4.png": (
            [
                [
                    ("qd", "qd", f"are_{r}", all3, f"(a) qd, s = 0.02, {r}", "qd", "ARE (%)"),
                    ("s", "s", f"are_{r}", all3, f"(b) s, qd = 5, {r}", "s", "ARE (%)"),
                ]
                for r in READINGS
            ],
            f"Gong et al. 2016, Figure 4: ARE against qd and s "
            f"(informs-like, n = {n:,}, k = 10, l = 5)",
        ),
        "gong2016_fig5.png": (
            [
                [
                    ("size", "n", "are_certain", all3, "certain", "records", "ARE (%)"),
                    ("size", "n", "are_uniform", all3, "uniform", "records", "ARE (%)"),
                ]
            ],
            "Gong et al. 2016, Figure 5: ARE against the data size (informs-like, k = 10, l = 5)",
        ),
        "gong2016_fig6.png": (
            [
                [
                    ("size", "n", "seconds", all3, "(a) size, k = 10, l = 5", "records", "s"),
                    ("k", "k", "seconds", all3, f"(b) k, l = 5, n = {n:,}", "k", "s"),
                    ("l", "l", "seconds", two, f"(c) l, k = 10, n = {n:,}", "l", "s"),
                ]
            ],
            "Gong et al. 2016, Figure 6: running time (APA, PAA: the job; RMR: rmr())",
        ),
        "gong2016_blocking.png": (
            [
                [
                    (
                        "blocking",
                        "max_block_rows",
                        "are_certain",
                        two,
                        "ARE, certain",
                        "max_block_rows (whole table at the right)",
                        "ARE (%)",
                    ),
                    (
                        "blocking",
                        "max_block_rows",
                        "are_uniform",
                        two,
                        "ARE, uniform",
                        "max_block_rows (whole table at the right)",
                        "ARE (%)",
                    ),
                    (
                        "blocking",
                        "max_block_rows",
                        "seconds",
                        two,
                        "time",
                        "max_block_rows (whole table at the right)",
                        "s",
                    ),
                ]
            ],
            f"What blocking costs (informs-like, n = {n:,}, k = 10, l = 5)",
        ),
        "gong2016_cj.png": (
            [
                [
                    (
                        "cj",
                        "n",
                        "published_share",
                        all3,
                        "records published (share)",
                        "households",
                        "share",
                    ),
                    ("cj", "n", "are_certain", all3, "ARE, certain", "households", "ARE (%)"),
                    ("cj", "n", "are_uniform", all3, "ARE, uniform", "households", "ARE (%)"),
                ]
            ],
            "Complete Journey (dense baskets), k = 10, l = 5",
        ),
    }
    for r in rows:
        if r["status"] == "ok" and r.get("rows_out", "") != "":
            r["published_share"] = (
                int(r["rows_out"]) - (int(r["suppressed"]) if r["algorithm"] == "rmr" else 0)
            ) / int(r["n"])
    for name, (panels, title) in figs.items():
        exps = {p[0] for line in panels for p in line}
        if any(r["experiment"] in exps and r["status"] == "ok" for r in rows):
            plot_grid(rows, panels, title, out_dir / name)
            written.append(name)
    return written


def report(out_dir: Path) -> int:
    """Markdown tables of ``gong2016.csv`` and the meta JSON's readings."""
    import json

    path = out_dir / "gong2016.csv"
    if not path.is_file():
        print(f"no gong2016.csv in {out_dir}", file=sys.stderr)
        return 1
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    heads = {
        "k": "k",
        "l": "l",
        "qd": "qd",
        "s": "s",
        "size": "n",
        "blocking": "max_block_rows",
        "cj": "n",
    }

    def cell(r: pd.Series, alg: str, m: str, fmt: str) -> str:
        v = r.get(f"{alg}_{m}", "")
        if r.get(f"{alg}_status", "") == "infeasible":
            return "infeasible"
        return format(float(v), fmt) if v not in ("", None) else "-"

    for exp, x in heads.items():
        sel = df[df["experiment"] == exp]
        if sel.empty:
            continue
        sel = sel.assign(_x=sel[x].replace("whole", "inf").astype(float)).sort_values("_x")
        print(
            f"Experiment `{exp}` ({sel['dataset'].iloc[0]}): ARE % certain / uniform, seconds, "
            "groups, suppressed."
        )
        print()
        print(
            f"| {x} | APA ARE | PAA ARE | RMR ARE | APA s | PAA s | RMR s "
            "| APA groups | PAA groups | RMR clusters | APA supp. | PAA supp. | RMR supp. |"
        )
        print("|---:" * 13 + "|")
        for _, r in sel.iterrows():
            ares = [
                f"{cell(r, a, 'are_certain', '.1f')} / {cell(r, a, 'are_uniform', '.1f')}"
                if r.get(f"{a}_status", "") == "ok"
                else cell(r, a, "are_certain", ".1f")
                for a in ALGORITHMS
            ]
            secs = [cell(r, a, "seconds", ".2f") for a in ALGORITHMS]
            groups = [cell(r, a, "groups", ".0f") for a in ALGORITHMS]
            supp = [cell(r, a, "suppressed", ".0f") for a in ALGORITHMS]
            print(f"| {r[x]} | " + " | ".join(ares + secs + groups + supp) + " |")
        print()
    meta_path = out_dir / "gong2016.meta.json"
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("readings"):
            print("Readings of the default setting (k = 10, l = 5, qd = 5, s = 0.02):")
            print()
            print(
                "| \\|A\\| of the sets | algorithm | qt | pred2 share in T | median act "
                "| pred2 share in T*, certain / uniform | ARE certain | ARE uniform | estimator |"
            )
            print("|---|---|---:|---:|---:|---:|---:|---:|---|")
            for r in meta["readings"]:
                pub = (
                    f"{r['pred2_pub_certain']:.3f} / {r['pred2_pub_uniform']:.4f}"
                    if r.get("pred2_pub_certain") is not None
                    else "-"
                )
                print(
                    f"| {r['set_domain_size']} | {LABELS[r['algorithm']]} | {r['qt']} "
                    f"| {r['pred2_share']:.3f} | {r['act_median']:.0f} | {pub} "
                    f"| {r['are_certain']:.1f} | {r['are_uniform']:.1f} | {r['estimator']} |"
                )
            print()
    return 0


# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=EXPERIMENTS, help="experiments to run")
    parser.add_argument("--n", type=int, default=N_FULL, help="informs-like records")
    parser.add_argument("--data-seed", type=int, default=0, help="seed of informs-like")
    parser.add_argument("--seed", type=int, default=0, help="seed of the queries")
    parser.add_argument("--qt", type=int, default=1000, help="queries per ARE")
    parser.add_argument("--k", type=int, nargs="+", default=list(K_VALUES))
    parser.add_argument("--l", type=int, nargs="+", default=list(L_VALUES))
    parser.add_argument("--qd", type=int, nargs="+", default=list(QD_VALUES))
    parser.add_argument("--s", type=float, nargs="+", default=list(S_VALUES))
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument(
        "--blocks",
        type=int,
        nargs="+",
        default=list(BLOCKS),
        help="max_block_rows of the blocking experiment (0: whole table)",
    )
    parser.add_argument("--cj-sizes", type=int, nargs="+", default=list(CJ_SIZES))
    parser.add_argument("--rmr-max-n", type=int, default=N_FULL, help="largest n RMR runs on")
    parser.add_argument(
        "--cj-rmr-max-n", type=int, default=5_000, help="largest Complete Journey size RMR runs on"
    )
    parser.add_argument("--no-rmr", action="store_true", help="skip RMR")
    parser.add_argument(
        "--sets-qt",
        type=int,
        default=200,
        help="queries of the 'distinct sets' reading (module estimator; 0: skip)",
    )
    parser.add_argument(
        "--check-qt", type=int, default=100, help="queries of the estimator cross-check (0: skip)"
    )
    _bench.add_run_arguments(parser)
    parser.add_argument(
        "--plot", action="store_true", help="redraw the figures from gong2016_runs.csv and exit"
    )
    args = parser.parse_args(argv)
    if args.report:
        return report(args.out_dir)
    if args.plot:
        with (args.out_dir / "gong2016_runs.csv").open(encoding="utf-8", newline="") as fh:
            print("wrote", ", ".join(plot_all(list(csv.DictReader(fh)), args.out_dir)))
        return 0

    started = time.perf_counter()
    sha, prov = _bench.use_code(args.code, args.in_place)
    meta: dict[str, Any] = {"command": _bench.command_line(), **prov}
    run = Runner(args, sha)
    only = set(args.only or EXPERIMENTS)
    with tempfile.TemporaryDirectory(prefix="exp_gong2016_") as tmp_dir:
        tmp = Path(tmp_dir)
        if only - {"cj"}:
            ds = informs_dataset(args.n, args.data_seed, tmp)
            meta["informs_like"] = data_stats(ds.table, ds.set_column, ds.qi) | {
                "taxonomy_leaves": ds.tree.n_leaves,
                "taxonomy_height": ds.tree.taxonomy.height,
                "data_seed": args.data_seed,
            }
            print(f"informs-like: {meta['informs_like']}", flush=True)
            run_informs(args, run, ds, meta)
            run.anons.clear()
        if "cj" in only:
            cj = cj_dataset(args.cj_sizes, tmp)
            meta["completejourney"] = {
                str(n): data_stats(t, cj.set_column, cj.qi) for n, t in cj.by_size.items()
            }
            run_cj(args, run, cj)
    out = args.out_dir
    _bench.write_csv(out / "gong2016_runs.csv", run.rows, RUN_FIELDS)
    _bench.write_csv(out / "gong2016.csv", summarise(run.rows), summary_fields())
    meta["figures"] = plot_all(run.rows, out)
    meta["grid"] = {
        "k": args.k,
        "l": args.l,
        "qd": args.qd,
        "s": args.s,
        "sizes": args.sizes,
        "blocks": args.blocks,
        "cj_sizes": args.cj_sizes,
        "qt": args.qt,
        "seed": args.seed,
        "rmr_max_n": 0 if args.no_rmr else args.rmr_max_n,
        "cj_rmr_max_n": args.cj_rmr_max_n,
        "experiments": sorted(only),
    }
    meta["infeasible"] = [
        {f: r[f] for f in ("experiment", "dataset", "algorithm", "k", "l", "n", "note")}
        for r in run.rows
        if r["status"] != "ok"
    ]
    meta["total_seconds"] = round(time.perf_counter() - started, 1)
    _bench.write_json(out / "gong2016.meta.json", meta)
    print(
        f"wrote {out}/gong2016_runs.csv, gong2016.csv, gong2016.meta.json, "
        f"{', '.join(meta['figures'])} in {meta['total_seconds']}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
