"""Check a published table against its privacy models, independently of sparkanon.

This module imports nothing else of sparkanon (it is in the package so that the wheel
carries it; its checks are its own, not the job's ``verify`` stage): it reads the
published Parquet/CSV files with pandas and the job's YAML config with PyYAML, groups the
rows by their published quasi-identifier values and checks every group against every
model of the config, with its own implementation of each:

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

For a perturbed release (``algorithm.name: perturb``; Aggarwal 2015, section 20.2) it
reads ``data/``, ``noise.json`` and ``metrics.json`` and, from the config, re-reads the
job's input itself (a test tool: the whole input is read on this machine) and checks:

* **columns**: exactly the quasi-identifiers (every attribute but ``keep`` and
  ``identifier``), the sensitive column and the ``keep`` columns; no other column (an
  original value or a row id left in: nothing may tell which input row a published row
  is); ``noise.json`` declares exactly the configured columns, and ``metrics.json``'s
  ``noise`` equals it;
* **rows**: the published count equals the usable input rows, recounted here: CSV records
  read with the Python csv module (``header``, ``sep``/``delimiter``, ``quote``,
  ``encoding``, ``input.columns``, ``.gz``/``.bz2``), records of the wrong width
  (malformed), a quasi-identifier or sensitive value null or, trimmed, in
  ``input.missing_values`` (missing), and under ``on_invalid: drop`` a continuous value
  that is not a finite number or a value outside a declared domain (invalid) left out;
  a cause whose rule is ``error`` must count 0; ``metrics.json``'s ``rows_in``,
  ``rows_out`` and ``suppressed_*`` counts must equal the recount;
* **declared noise**, recomputed from the config and the usable rows: a numeric column's
  distribution, scale (``scale``; ``scale_share * range``; ``privacy``: uniform
  ``a = privacy * range / (2 confidence)``, gaussian ``sigma = privacy * range / (2 z)``,
  ``z`` the normal quantile of ``(1 + confidence) / 2``; range = the declared ``bounds``,
  else max - min over the usable rows rounded outward to a power-of-ten grid), variance,
  privacy width and share; a randomized-response column's values (the declared domain:
  ``order``, ``values`` or the hierarchy's leaves, else the usable rows' distinct values),
  retention (``retention``, or ``e^eps / (e^eps + k - 1)``), transition matrix (``p`` on
  the diagonal, ``(1 - p) / (k - 1)`` elsewhere, rows summing to 1) and its epsilon
  (``ln`` of the largest ratio within a column, equal to the config's ``epsilon``); every
  published value of the column is a declared value;
* **marginals**, at ``algorithm.significance`` per test (default 1e-4), without pairing a
  published row with an input row (the release holds no row link): the unperturbed
  columns (quasi-identifiers not in ``algorithm.columns``, the sensitive and ``keep``
  columns) hold the usable input's values, each as many times (compared as sorted
  columns); per numeric column the published values against the input's convolved with
  the declared noise: a two-sample Kolmogorov-Smirnov test against ten copies of the
  usable input plus noise this module draws itself (``numpy``'s generator seeded from the
  operating system; critical value ``c(alpha) sqrt((n + m) / (n m))``, ``c`` the
  asymptotic Kolmogorov quantile; the copies share the input's values, which only makes
  the test conservative), the mean (``|mean(published) - mean(input)| <= z sqrt(var /
  n)``) and the variance (``s^2(published) - s^2(input)`` within ``var +- z sqrt((mu4 -
  var^2 (n - 3) / (n - 1) + 4 s^2(input) var) / n)``, the last term the spread of the
  values' covariance with independent noise); per categorical column each declared
  value's published count against the input's counts pushed through the declared matrix,
  ``E_j = sum_i n_i P[i, j]``, within ``z' sqrt(sum_i n_i P[i, j] (1 - P[i, j]))`` (exact
  when the matrix keeps every value), ``z'`` the normal quantile of ``1 - alpha / (2 k)``.

For a directory input the files are read in path order, and for a catalog table the
order is the table's; this module reads one file only, so for those the row count, the
input's ranges and domains and the marginals are not checked, a ``NOT CHECKED`` line
says so, and the rest decides the exit code. What is never checked: that each row's
noise is its own (a marginal test cannot see rows swapped among themselves), that the
noise is independent across columns and rows, and that it was drawn from a secret key
(the key is never written; a release that publishes nothing a reader could invert has
nothing to check here).

For a condensation release (``algorithm.name: condensation``; Aggarwal and Yu 2004) it
checks that no group id is published, the row count against ``rows_out`` (or ``alpha``),
the published categories and sensitive values against the input's usable rows,
``rows_out`` against the recount, the whole table's mean of each numeric attribute
(within six of its standard errors: the records keep it in expectation) and that no
synthetic record copies an input record whose quasi-identifier combination fewer than
``k`` input records share (:func:`check_synthetic`).

Usage::

    sparkanon-verify OUTPUT_DIR                       # the config the job ran
    sparkanon-verify CONFIG OUTPUT_DIR [--set key=value ...]
    python -m sparkanon.tools.verify_release OUTPUT_DIR    # the same, without the entry point

With one argument it reads ``OUTPUT_DIR/config.yaml``, the config the job wrote
beside its metrics with every ``--set`` override applied. With a CONFIG it applies
the same ``--set key=value`` overrides the job took (dotted keys, YAML values,
list items by index, e.g. ``--set model.k=4``).

Exit code 0 when every group satisfies every model (a perturbed release: every check
above holds), 1 otherwise; each failure is printed as a ``FAILED`` line with the column,
the statistic and its bound, never a data value.
"""

from __future__ import annotations

import argparse
import bz2
import csv
import gzip
import io
import json
import math
import sys
from pathlib import Path
from statistics import NormalDist

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


# ---------------------------------------------------------------------------
# A perturbed release (algorithm.name: perturb; Aggarwal 2015, section 20.2)
# ---------------------------------------------------------------------------

COPIES = 10
"""Copies of the usable input the two-sample test draws fresh noise for."""
DECLARED_KINDS = {"ordinal", "categorical", "nominal"}
REL_TOL = 1e-9


class Report:
    """What a perturbed or synthetic release's check found: a line per figure, per failure."""

    def __init__(self) -> None:
        """An empty report."""
        self.lines: list[str] = []
        self.failures: list[str] = []
        self.unchecked: list[str] = []

    def fail(self, text: str) -> None:
        """Record a failed promise."""
        self.failures.append(text)

    def expect(self, ok: bool, text: str) -> None:
        """Record ``text`` as a failure unless ``ok``."""
        if not ok:
            self.fail(text)

    def print_all(self) -> None:
        """The figures, then ``NOT CHECKED`` and ``FAILED`` lines (no data values)."""
        for line in self.lines:
            print(line)
        for line in self.unchecked:
            print(f"NOT CHECKED {line}")
        for line in self.failures:
            print(f"FAILED {line}")


def close(a: float, b: float) -> bool:
    """Whether two declared figures agree up to float rounding."""
    return math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=1e-12)


def trimmed(values: pd.Series) -> pd.Series:
    """Values as stripped strings, nulls as ``None``."""
    text = values.astype("string").str.strip()
    return text.astype(object).where(text.notna(), None)


def is_number_text(token: str) -> bool:
    """Whether a missing token reads as a number."""
    try:
        float(token)
    except ValueError:
        return False
    return True


def read_csv_input(path: Path, options: dict, columns: list[str] | None) -> pd.DataFrame:
    """One CSV file with the Python csv module: every non-blank record as text.

    Honours ``header``, ``sep``/``delimiter``, ``quote`` and ``encoding`` (the reader
    options sparkanon documents), ``.gz``/``.bz2`` compression and ``input.columns``.
    Adds ``_position`` (the record's index among the data records, 0-based) and
    ``_malformed`` (a record whose field count differs from the header's; its fields
    are left empty).
    """
    header = str(options.get("header", "true")).lower() == "true"
    sep = str(options.get("sep", options.get("delimiter", ",")))
    quote = str(options.get("quote", '"')) or '"'
    encoding = str(options.get("encoding", options.get("charset", "utf-8")))
    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix.lower())
    raw = opener(path, "rb") if opener else path.open("rb")
    with io.TextIOWrapper(raw, encoding=encoding, newline="") as fh:
        records = [
            r
            for r in csv.reader(fh, delimiter=sep, quotechar=quote, skipinitialspace=True)
            if r and not (len(r) == 1 and not r[0].strip())
        ]
    if not records:
        return pd.DataFrame()
    names = (
        [c.strip() for c in records[0]] if header else [f"_c{i}" for i in range(len(records[0]))]
    )
    if columns:
        names = list(columns)
    body = records[1:] if header else records
    width = len(names)
    malformed = np.array([len(r) != width for r in body], dtype=bool)
    frame = pd.DataFrame(
        [r if len(r) == width else [""] * width for r in body], columns=names, dtype=object
    )
    frame["_malformed"] = malformed
    frame["_position"] = np.arange(len(frame), dtype=np.int64)
    return frame


def read_input(cfg: dict) -> tuple[pd.DataFrame | None, str]:
    """The job's input as it was read, or ``None`` and why it cannot be re-read here.

    Only a single CSV or Parquet file reproduces the job's row order independently
    (see the module docstring); a directory, a catalog table or another format does not.
    """
    source = cfg["input"]
    if source.get("table"):
        return None, f"the input is the catalog table {source['table']!r}"
    path = Path(str(source["path"]))
    if not path.exists():
        raise SystemExit(
            f"input.path {str(path)!r} does not exist here (relative paths are read from the "
            "current directory; give --set input.path=...)"
        )
    if path.is_dir():
        return None, "the input is a directory (Spark orders its files by size, not by name)"
    fmt = source.get("format", "csv")
    if fmt == "csv":
        return read_csv_input(path, source.get("options") or {}, source.get("columns")), ""
    if fmt == "parquet":
        frame = pd.read_parquet(path)
        frame["_malformed"] = False
        frame["_position"] = np.arange(len(frame), dtype=np.int64)
        return frame, ""
    return None, f"the input format {fmt!r} is not re-read by this checker"


def config_domain(attr: dict) -> list[str] | None:
    """A discrete attribute's domain when the config declares it, else ``None``."""
    if attr["kind"] == "ordinal":
        return [str(v) for v in attr["order"]]
    if attr["kind"] == "nominal" and attr.get("values"):
        return [str(v) for v in attr["values"]]
    if attr["kind"] == "categorical":
        with open(attr["hierarchy"], newline="", encoding="utf-8-sig") as fh:
            return [r[0].strip() for r in csv.reader(fh, delimiter=";") if r]
    return None


def usable_rows(cfg: dict, frame: pd.DataFrame, report: Report) -> tuple[pd.DataFrame, dict]:
    """The rows the job publishes: malformed, missing and (``drop``) invalid rows removed.

    Missing: a quasi-identifier or the sensitive value that is null or, trimmed, one of
    ``input.missing_values``. Invalid: a continuous value that is not a finite number, a
    value outside a declared domain, a semantic value that is not a code of its length.
    With an ``error`` rule any such row means the job should have refused the input.

    Returns:
        The usable rows (input order kept) and the counts by cause.
    """
    source = cfg["input"]
    tokens = [str(t) for t in source.get("missing_values", ["?", ""])]
    numeric_tokens = any(is_number_text(t) for t in tokens)
    qi = [a for a in cfg["attributes"] if a["kind"] not in ("keep", "identifier")]
    checked = [a["name"] for a in qi] + [cfg["sensitive"]["name"]]
    malformed = frame["_malformed"].to_numpy(dtype=bool)
    missing = np.zeros(len(frame), dtype=bool)
    for c in checked:
        values = frame[c]
        miss = values.isna().to_numpy(dtype=bool)
        if numeric_tokens or not pd.api.types.is_numeric_dtype(values):
            miss |= trimmed(values).isin(tokens).to_numpy(dtype=bool)
        missing |= miss
    missing &= ~malformed
    invalid = np.zeros(len(frame), dtype=bool)
    for a in qi:
        text = trimmed(frame[a["name"]])
        if a["kind"] == "continuous":
            number = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
            bad = ~np.isfinite(number)
        elif a["kind"] == "semantic":
            bad = ~text.fillna("").str.fullmatch(rf"[0-9]{{{int(a['length'])}}}").to_numpy(bool)
        else:
            domain = config_domain(a)
            bad = ~text.isin(domain).to_numpy(dtype=bool) if domain else np.zeros(len(text), bool)
        invalid |= bad
    invalid &= ~(malformed | missing)
    counts = {
        "malformed": int(malformed.sum()),
        "missing": int(missing.sum()),
        "invalid": int(invalid.sum()),
    }
    rules = {
        "malformed": source.get("on_malformed", "error"),
        "missing": source.get("on_missing", "drop"),
        "invalid": source.get("on_invalid", "error"),
    }
    for cause, rule in rules.items():
        report.expect(
            rule == "drop" or counts[cause] == 0,
            f"input: {counts[cause]} {cause} rows but input.on_{cause} is {rule!r}: "
            "the job should have refused the input",
        )
    keep = ~(malformed | missing | invalid)
    return frame[keep].reset_index(drop=True), counts


def coarse_span(low: float, high: float) -> float:
    """The width of ``[low, high]`` rounded outward to a power-of-ten grid.

    The job states a share-of-range noise against this range, not the exact input one
    (which the published scale would give away): the step is the largest power of ten
    not above ``high - low`` (``[36.5, 73]`` -> ``[30, 80]``, width 50).
    """
    width = high - low
    if not (math.isfinite(width) and width > 0):
        return width
    step = 10.0 ** math.floor(math.log10(width))
    top = float(f"{math.ceil(high / step) * step:.12g}")
    bottom = float(f"{math.floor(low / step) * step:.12g}")
    return top - bottom


def expected_scale(spec: dict, span: float, confidence: float) -> float:
    """A numeric column's noise scale from its config entry and its range.

    ``span``: the declared ``bounds``' width, else the input's range rounded outward
    (:func:`coarse_span`). ``scale`` as given; ``scale_share * range``; ``privacy``: uniform
    ``a = privacy * range / (2 confidence)``, gaussian
    ``sigma = privacy * range / (2 z)``, ``z`` the normal quantile of ``(1 + confidence) / 2``.
    """
    if spec.get("scale") is not None:
        return float(spec["scale"])
    if spec.get("scale_share") is not None:
        return float(spec["scale_share"]) * span
    half_width = float(spec["privacy"]) * span / 2.0
    if spec["noise"] == "uniform":
        return half_width / confidence
    return half_width / NormalDist().inv_cdf((1.0 + confidence) / 2.0)


def check_numeric_declaration(
    name: str, spec: dict, declared: dict, span: float | None, confidence: float, report: Report
) -> None:
    """The declared additive noise against the config (and the input's range, if read)."""
    dist, scale = declared.get("distribution"), float(declared.get("scale", math.nan))
    report.expect(
        dist == spec["noise"], f"{name}: declared noise {dist!r}, config {spec['noise']!r}"
    )
    if span is not None:
        want = expected_scale(spec, span, confidence)
        report.expect(
            close(scale, want), f"{name}: declared scale {scale:.6g}, expected {want:.6g}"
        )
    report.expect(
        scale > 0 and math.isfinite(scale), f"{name}: declared scale {scale} not positive"
    )
    var = scale * scale / 3.0 if dist == "uniform" else scale * scale
    report.expect(
        close(declared.get("variance", math.nan), var),
        f"{name}: declared variance {declared.get('variance')} is not {var:.6g}",
    )
    z = NormalDist().inv_cdf((1.0 + confidence) / 2.0)
    width = 2.0 * scale * (confidence if dist == "uniform" else z)
    report.expect(
        close(declared.get("privacy_width", math.nan), width),
        f"{name}: declared privacy width {declared.get('privacy_width')} is not {width:.6g}",
    )
    report.expect(
        close(declared.get("confidence", math.nan), confidence),
        f"{name}: declared confidence {declared.get('confidence')} is not {confidence}",
    )
    if span:
        share = declared.get("privacy_share")
        report.expect(
            share is not None and close(share, width / span),
            f"{name}: declared privacy share {share} is not {width / span:.6g}",
        )


def check_rr_declaration(
    name: str, spec: dict, declared: dict, domain: list[str] | None, report: Report
) -> None:
    """Randomized response: values, retention, transition matrix and its epsilon."""
    values = [str(v) for v in declared.get("values", [])]
    k = len(values)
    report.expect(
        declared.get("distribution") == "randomized_response",
        f"{name}: declared noise {declared.get('distribution')!r}, config 'randomized_response'",
    )
    report.expect(len(set(values)) == k and k >= 2, f"{name}: {k} declared values (distinct, >= 2)")
    if domain is not None:
        report.expect(
            set(values) == set(domain),
            f"{name}: declared values are not the column's domain "
            f"({len(set(values) - set(domain))} extra, {len(set(domain) - set(values))} missing)",
        )
    if k < 2:
        return
    p = float(declared.get("retention", math.nan))
    if spec.get("retention") is not None:
        want = float(spec["retention"])
    else:
        eps = float(spec["epsilon"])
        want = math.exp(eps) / (math.exp(eps) + k - 1)
    report.expect(close(p, want), f"{name}: declared retention {p:.6g}, expected {want:.6g}")
    matrix = np.asarray(declared.get("transition_matrix", []), dtype=float)
    expected = np.full((k, k), (1.0 - p) / (k - 1))
    np.fill_diagonal(expected, p)
    if matrix.shape != (k, k):
        report.fail(f"{name}: transition matrix of shape {matrix.shape}, expected {(k, k)}")
        return
    report.expect(
        np.allclose(matrix, expected, rtol=REL_TOL, atol=1e-12),
        f"{name}: transition matrix is not p={p:.6g} on the diagonal, (1-p)/(k-1) elsewhere",
    )
    report.expect(
        np.allclose(matrix.sum(axis=1), 1.0, atol=1e-9), f"{name}: transition rows do not sum to 1"
    )
    with np.errstate(divide="ignore"):
        ratios = [
            math.inf if col.min() == 0 else col.max() / col.min()
            for col in matrix.T
            if col.max() > 0
        ]
    eps = math.log(max(ratios))
    got = float(declared.get("ldp_epsilon", math.nan))
    report.expect(
        (math.isinf(eps) and math.isinf(got)) or close(got, eps),
        f"{name}: declared ldp_epsilon {got:.6g}, the matrix gives {eps:.6g}",
    )
    if spec.get("epsilon") is not None:
        report.expect(
            close(eps, float(spec["epsilon"])),
            f"{name}: the matrix's epsilon {eps:.6g} is not the config's {spec['epsilon']}",
        )


def kolmogorov_sf(x: float) -> float:
    """``P(K > x)`` for the Kolmogorov distribution: ``2 sum (-1)^(j-1) exp(-2 j^2 x^2)``."""
    if x < 0.2:
        return 1.0
    total = sum((-1) ** (j - 1) * math.exp(-2.0 * j * j * x * x) for j in range(1, 101))
    return min(max(2.0 * total, 0.0), 1.0)


def kolmogorov_critical(alpha: float) -> float:
    """The ``x`` with ``P(K > x) = alpha`` (bisection; ``kolmogorov_sf`` decreases)."""
    lo, hi = 0.2, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if kolmogorov_sf(mid) > alpha else (lo, mid)
    return hi


def check_numeric_margin(
    name: str,
    published: np.ndarray,
    original: np.ndarray,
    dist: str,
    scale: float,
    alpha: float,
    report: Report,
) -> None:
    """Published values against the input's plus the declared noise: KS, mean, variance."""
    bad = ~np.isfinite(published)
    report.expect(not bad.any(), f"{name}: {int(bad.sum())} published values are not numbers")
    pub = np.sort(published[~bad])
    orig = original[np.isfinite(original)]
    n = len(pub)
    if n < 2 or len(orig) != len(published):
        report.fail(f"{name}: {n} published values for {len(orig)} input values, cannot test")
        return
    rng = np.random.default_rng()  # fresh entropy: the verifier's own draws
    copies = np.tile(orig, COPIES)
    if dist == "uniform":
        fresh = rng.uniform(-scale, scale, copies.size)
    else:
        fresh = rng.normal(0.0, scale, copies.size)
    reference = np.sort(copies + fresh)
    m = len(reference)
    grid = np.concatenate([pub, reference])
    gap = np.abs(
        np.searchsorted(pub, grid, side="right") / n
        - np.searchsorted(reference, grid, side="right") / m
    )
    d = float(gap.max())
    d_crit = kolmogorov_critical(alpha) * math.sqrt((n + m) / (n * m))
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    var = scale * scale / 3.0 if dist == "uniform" else scale * scale
    mu4 = scale**4 / 5.0 if dist == "uniform" else 3.0 * scale**4
    shift = float(pub.mean() - orig.mean())
    mean_bound = z * math.sqrt(var / n)
    s2_orig = float(orig.var(ddof=1))
    added = float(pub.var(ddof=1)) - s2_orig
    spread = mu4 - var * var * (n - 3) / (n - 1) + 4.0 * s2_orig * var
    var_bound = z * math.sqrt(max(spread, 0.0) / n)
    report.lines.append(
        f"{name}: {dist}({scale:.6g}) n={n} ks={d:.4g} (<= {d_crit:.4g}, {m} reference "
        f"values) mean shift={shift:.4g} (|.| <= {mean_bound:.4g}) added variance="
        f"{added:.6g} ({var:.6g} +- {var_bound:.4g})"
    )
    report.expect(d <= d_crit, f"{name}: Kolmogorov-Smirnov {d:.4g} > {d_crit:.4g}")
    report.expect(
        abs(shift) <= mean_bound, f"{name}: mean shift {shift:.4g} outside +-{mean_bound:.4g}"
    )
    report.expect(
        abs(added - var) <= var_bound,
        f"{name}: added variance {added:.6g} outside {var:.6g} +- {var_bound:.4g}",
    )


def check_categorical_margin(
    name: str,
    published: pd.Series,
    original: pd.Series,
    declared: dict,
    alpha: float,
    report: Report,
) -> None:
    """Each declared value's published count against the input's pushed through the matrix."""
    values = [str(v) for v in declared.get("values", [])]
    matrix = np.asarray(declared.get("transition_matrix", []), dtype=float)
    k = len(values)
    if k < 2 or matrix.shape != (k, k):
        report.fail(f"{name}: no declared values and matrix to test the counts against")
        return
    pub = trimmed(published).value_counts().reindex(values, fill_value=0).to_numpy(dtype=float)
    counts = trimmed(original).value_counts().reindex(values, fill_value=0).to_numpy(dtype=float)
    expected = counts @ matrix
    sd = np.sqrt(counts @ (matrix * (1.0 - matrix)))
    z = NormalDist().inv_cdf(1.0 - alpha / (2.0 * k))
    off = np.abs(pub - expected) > np.maximum(z * sd, 1e-9)
    worst = int(np.argmax(np.abs(pub - expected) / np.maximum(sd, 1e-9)))
    report.lines.append(
        f"{name}: published frequencies n={int(pub.sum())} k={k}, largest gap "
        f"{abs(pub[worst] - expected[worst]):.4g} (<= {z * sd[worst]:.4g})"
    )
    report.expect(
        not off.any(),
        f"{name}: published frequencies: {int(off.sum())} of {k} values off the input's "
        "pushed through the declared matrix",
    )


def same_multiset(published: pd.Series, original: pd.Series, numeric: bool) -> int:
    """How many positions of the two sorted columns differ (0: the same values, as often)."""
    if numeric:
        a = np.sort(pd.to_numeric(published, errors="coerce").to_numpy(dtype=float))
        b = np.sort(pd.to_numeric(trimmed(original), errors="coerce").to_numpy(dtype=float))
        return int((~np.isclose(a, b, rtol=REL_TOL, atol=1e-9, equal_nan=True)).sum())
    a = np.sort(trimmed(published).fillna("").to_numpy(dtype=str))
    b = np.sort(trimmed(original).fillna("").to_numpy(dtype=str))
    return int((a != b).sum())


def check_margins(
    cfg: dict,
    table: pd.DataFrame,
    usable: pd.DataFrame,
    noise: dict,
    alpha: float,
    report: Report,
) -> None:
    """The published columns' marginals against the usable input's (no row pairing)."""
    perturbed = {c["name"]: c for c in cfg["algorithm"]["columns"]}
    decimals = (cfg.get("output") or {}).get("decimals")
    qi = [a for a in cfg["attributes"] if a["kind"] not in ("keep", "identifier")]
    for a in qi:
        name = a["name"]
        if name in perturbed:
            continue
        original = usable[name]
        if a["kind"] == "continuous" and decimals is not None:
            x = pd.to_numeric(trimmed(original), errors="coerce").to_numpy(dtype=float)
            original = pd.Series(np.round(x, int(decimals)))
        differ = same_multiset(table[name], original, a["kind"] == "continuous")
        report.expect(
            differ == 0, f"{name} (not perturbed): {differ} values differ from the input's"
        )
    passthrough = [cfg["sensitive"]["name"]] + [
        a["name"] for a in cfg["attributes"] if a["kind"] == "keep"
    ]
    for name in passthrough:
        differ = same_multiset(table[name], usable[name], False)
        report.expect(
            differ == 0, f"{name} (published as is): {differ} values differ from the input's"
        )
    for name, spec in perturbed.items():
        declared = noise.get(name) or {}
        if spec["noise"] == "randomized_response":
            check_categorical_margin(name, table[name], usable[name], declared, alpha, report)
            continue
        orig = pd.to_numeric(trimmed(usable[name]), errors="coerce").to_numpy(dtype=float)
        pub = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=float)
        scale = float(declared.get("scale", math.nan))
        check_numeric_margin(name, pub, orig, spec["noise"], scale, alpha, report)


def published_column_names(cfg: dict) -> list[str]:
    """The columns a perturbed release publishes.

    The quasi-identifiers, the sensitive column and the ``keep`` columns (identifiers and
    row ids never).
    """
    qi = [a["name"] for a in cfg["attributes"] if a["kind"] not in ("keep", "identifier")]
    keep = [a["name"] for a in cfg["attributes"] if a["kind"] == "keep"]
    return [*qi, cfg["sensitive"]["name"], *keep]


def check_perturbed(cfg: dict, output_dir: Path) -> int:
    """Check a perturbed release (the module docstring's list); exit code 0 or 1."""
    report = Report()
    algorithm = cfg["algorithm"]
    alpha = float(algorithm.get("significance") or 1e-4)
    confidence = float(algorithm.get("confidence") or 0.95)
    specs = {c["name"]: c for c in algorithm["columns"]}
    attrs = {a["name"]: a for a in cfg["attributes"]}
    table = read_published(output_dir)
    noise_path = output_dir / "noise.json"
    if not noise_path.exists():
        print(f"FAILED noise.json: missing in {output_dir}")
        return 1
    noise = json.loads(noise_path.read_text(encoding="utf-8"))
    metrics_path = output_dir / "metrics.json"
    metrics = json.loads(metrics_path.read_text(encoding="utf-8")) if metrics_path.exists() else {}
    if "noise" in metrics:
        report.expect(metrics["noise"] == noise, "metrics.json's noise differs from noise.json")

    wanted = published_column_names(cfg)
    extra = sorted(set(table.columns) - set(wanted))
    missing = sorted(set(wanted) - set(table.columns))
    report.expect(not extra, f"columns: {extra} published beyond the expected ones")
    report.expect(not missing, f"columns: {missing} expected but not published")
    report.expect(
        sorted(noise) == sorted(specs),
        f"noise.json declares {sorted(noise)}, the config perturbs {sorted(specs)}",
    )
    frame, why = read_input(cfg)
    usable, counts = (None, {}) if frame is None else usable_rows(cfg, frame, report)
    if frame is None:
        report.unchecked.append(
            f"{why}: the row count, the input's ranges and domains, and the marginals"
        )
    else:
        report.expect(
            len(table) == len(usable),
            f"rows: {len(table)} published, {len(usable)} usable rows in the input",
        )
        expected_metrics = {
            "rows_in": len(frame),
            "rows_out": len(usable),
            "suppressed_malformed_records": counts["malformed"],
            "suppressed_missing_values": counts["missing"],
            "suppressed_invalid_values": counts["invalid"],
        }
        for key, value in expected_metrics.items():
            if key in metrics:
                report.expect(
                    metrics[key] == value, f"metrics.json {key}={metrics[key]}, recounted {value}"
                )

    for name, spec in specs.items():
        declared = noise.get(name)
        if declared is None:
            report.fail(f"{name}: no declared noise")
            continue
        if spec["noise"] == "randomized_response":
            domain = config_domain(attrs[name])
            if domain is None and usable is not None:
                domain = sorted(set(trimmed(usable[name]).dropna()))
            check_rr_declaration(name, spec, declared, domain, report)
            if name in table:
                values = set(str(v) for v in declared.get("values", []))
                outside = int((~trimmed(table[name]).isin(values)).sum())
                report.expect(outside == 0, f"{name}: {outside} published values not declared")
        else:
            span = None
            if spec.get("bounds") is not None:
                span = float(spec["bounds"][1]) - float(spec["bounds"][0])
            elif usable is not None:
                x = pd.to_numeric(trimmed(usable[name]), errors="coerce").to_numpy(dtype=float)
                span = coarse_span(float(x.min()), float(x.max())) if len(x) else 0.0
            check_numeric_declaration(name, spec, declared, span, confidence, report)

    if usable is not None and not missing and len(table) == len(usable):
        check_margins(cfg, table, usable, noise, alpha, report)
    elif usable is not None:
        report.unchecked.append(
            "the marginals: the published columns or rows are not the input's usable ones"
        )
    report.print_all()
    print(
        f"rows={len(table)} perturbed_columns={len(specs)} significance={alpha:g} "
        f"violations={len(report.failures)}"
    )
    return 0 if not report.failures else 1


def check_synthetic(cfg: dict, output_dir: Path) -> int:
    """Check a condensation release (``algorithm.name: condensation``); exit code 0 or 1.

    Independently of sparkanon (Aggarwal and Yu 2004; the family's readings in
    ``docs/method.md``): the columns are the attributes and the sensitive column (no
    group id: the groups are checked inside the job, where their ids exist); the table
    has ``rows_out`` rows (``round(alpha k)`` per group of ``metrics.json``'s ``groups``
    when ``algorithm.alpha`` is set); every published category and sensitive value occurs
    in the input's usable rows; ``rows_out`` equals the usable rows recounted from the
    input minus its ``suppressed_unplaced``; without ``alpha`` and unplaced rows, the
    synthetic table's mean of each numeric attribute is within ``6 sigma / sqrt(n)`` of
    the usable rows' (``sigma`` the input's standard deviation: each group's records
    keep its mean in expectation, off it by independent draws whose variance sums to at
    most ``n sigma^2``); no synthetic record equals a usable input record on every
    quasi-identifier unless at least ``k`` input records share that combination.
    """
    report = Report()
    table = read_published(output_dir)
    metrics_path = output_dir / "metrics.json"
    metrics = json.loads(metrics_path.read_text(encoding="utf-8")) if metrics_path.exists() else {}
    models = cfg["model"] if isinstance(cfg["model"], list) else [cfg["model"]]
    k = max(int(m.get("k", 1)) for m in models)
    alpha = (cfg.get("algorithm") or {}).get("alpha")
    qi = [a for a in cfg["attributes"] if a["kind"] in QI_KINDS]
    names = [a["name"] for a in qi]
    numeric = [a["name"] for a in qi if a["kind"] == "continuous"]
    sensitive = cfg["sensitive"]["name"]
    wanted = [*names, sensitive]
    report.expect(
        sorted(table.columns) == sorted(wanted),
        f"columns: published {sorted(table.columns)}, expected {sorted(wanted)}",
    )
    report.expect("group" not in table.columns, "groups: a group id column is published")
    report.unchecked.append("the group sizes (no group id is published)")
    if alpha is not None and "groups" in metrics:
        want = max(1, round(float(alpha) * k)) * int(metrics["groups"])
        report.expect(len(table) == want, f"rows: {len(table)} synthetic records, not {want}")
    elif "rows_out" in metrics:
        report.expect(
            len(table) == metrics["rows_out"],
            f"rows: {len(table)} synthetic records, metrics.json rows_out={metrics['rows_out']}",
        )
    frame, why = read_input(cfg)
    if frame is None:
        report.unchecked.append(f"{why}: the row count, the values, the means and the copies")
    else:
        usable, _ = usable_rows(cfg, frame, report)
        unplaced = int(metrics.get("suppressed_unplaced", 0))
        if "rows_out" in metrics:
            report.expect(
                metrics["rows_out"] == len(usable) - unplaced,
                f"metrics.json rows_out={metrics['rows_out']}, recounted "
                f"{len(usable) - unplaced} (usable minus unplaced)",
            )
        for name in [n for n in names if n not in numeric] + [sensitive]:
            seen = set(trimmed(usable[name]).dropna())
            outside = int((~trimmed(table[name]).isin(seen)).sum())
            report.expect(outside == 0, f"{name}: {outside} published values not in the input")
        values = {
            n: pd.to_numeric(trimmed(usable[n]), errors="coerce").astype(float) for n in numeric
        }
        if alpha is None and unplaced == 0 and len(table) == len(usable):
            for n in numeric:
                got = float(pd.to_numeric(table[n]).mean())
                want_mean = float(values[n].mean())
                scale = float(values[n].max() - values[n].min()) or 1.0
                error = 6.0 * float(values[n].std(ddof=0)) / max(len(values[n]), 1) ** 0.5
                report.expect(
                    abs(got - want_mean) <= error + 1e-9 * scale,
                    f"{n}: synthetic mean {got:.12g}, input mean {want_mean:.12g} "
                    f"(bound {error:.3g})",
                )
        else:
            report.unchecked.append("the means (alpha set or rows unplaced)")
        original = pd.DataFrame(
            {n: values[n] if n in numeric else trimmed(usable[n]) for n in names}
        )
        holders = original.groupby(names, dropna=False).size().rename("_holders").reset_index()
        published = pd.DataFrame(
            {
                n: pd.to_numeric(table[n]).astype(float) if n in numeric else trimmed(table[n])
                for n in names
            }
        )
        matched = published.merge(holders, on=names, how="inner")
        rare = int((matched["_holders"] < k).sum())
        report.lines.append(
            f"copies: {len(matched)} synthetic records equal an input record on every "
            f"quasi-identifier, {rare} of a combination fewer than k={k} records share"
        )
        report.expect(rare == 0, f"copies: {rare} synthetic records copy a rare input record")
    report.print_all()
    groups = metrics.get("groups", "?")
    print(f"rows={len(table)} groups={groups} k={k} violations={len(report.failures)}")
    return 0 if not report.failures else 1


def main(argv: list[str] | None = None) -> int:
    """Check the release of ``[CONFIG] OUTPUT_DIR``; 0 when every check holds, else 1.

    Args:
        argv: The command line after the program name (``sys.argv[1:]`` when ``None``).
    """
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
    if (cfg.get("algorithm") or {}).get("name") == "perturb":
        return check_perturbed(cfg, output_dir)
    if (cfg.get("algorithm") or {}).get("name") == "condensation":
        return check_synthetic(cfg, output_dir)
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
