"""Anonymeter's singling-out, linkability and inference attacks, on both engines.

Giomi et al. 2023, "A unified framework for quantifying privacy risk in synthetic data"
(PETS), as the anonymeter package (github statice/anonymeter) computes them; read there,
written here against the engine interface. Three tables: the ``originals`` the release
was made from, the ``release`` (perturbed or synthetic rows; the attacker holds all of
it), and a ``control`` set of originals *not* used for the release. Each attack runs on
``n_attacks`` targets drawn from the originals (the *main* attack) and on as many drawn
from the control set; a *baseline* attacker guesses at random. With success counts
``s`` of ``n`` attacks:

* rates: the Wilson score estimate ``(s + z^2/2) / (n + z^2)`` and its error
  ``z / (n + z^2) * sqrt(s (n - s) / n + z^2 / 4)``, ``z`` the probit of the confidence
  level (anonymeter's ``success_rate``); each reported as ``{rate, ci}`` bound to
  ``[0, 1]`` (``bind_value``);
* risk: ``(main - control) / (1 - control)`` on the Wilson rates, its error propagated
  (``residual_success``), value and interval bound to ``[0, 1]`` as anonymeter reports
  them; ``residual`` keeps the unbound value (negative when the control set is easier).

The attacks (the release is never paired with the originals by record id, only by the
attacker's matching):

* **inference**: the attacker knows every attack column but the secret (the view's
  sensitive attribute) of a target and takes the secret of the release row nearest on
  the known columns. Success: the same value (categorical; two nulls agree), or
  ``|guess - secret| / guess <= 0.05`` (numeric, anonymeter's ``regression`` reading).
  Baseline: the secret of a random release row.
* **linkability**: the auxiliary columns are split in two; the ``n_neighbors`` release
  rows nearest to a target on each side are found; success when the two sets meet.
  Baseline: two random sets of ``n_neighbors`` release rows.
* **singling out**: predicates built from the release only (univariate: a value held by
  one release row, ``<= min``, ``>= max``, the single null; multivariate: a random
  release row on ``n_cols`` random columns, ``==`` for text, ``>=`` above the release
  median and ``<=`` otherwise for numbers, ``isna`` for a null), kept when they single
  out one row of the (deduplicated) release. Success: the predicate matches exactly one
  row of the deduplicated originals (main) or control. Baseline: random predicates
  (random columns, random release values, random operators), not filtered.
  Anonymeter corrects the control count by a fitted model when the control set is
  smaller than the originals; here the main attack instead runs on a seeded sample of
  the deduplicated originals of the control's size, so both populations are alike.

Distance (anonymeter's Gower-like ``gower_distance``): the sum over the columns of
``|a - b| / range`` for numbers, the range taken over the release and the attacked
targets together (1 when it is 0), and ``0/1`` for text (unequal); a null number
against anything costs 1 (anonymeter: 1 for two nulls), a null text is a value of its
own. Ties go to the lower release row id.

Engine path: targets are the ``n_attacks`` rows of smallest keyed hash of ``(seed, row
id)`` (the driver learns row ids and keys only); the nearest-neighbour search buckets
the release by row id, replicates the targets to every bucket (a join), keeps the ``k``
best per (target, bucket) in a cogroup and the ``k`` best per target in a
``map_groups``; success flags are summed on the engine. Predicates of the singling-out
attack are built on the driver from at most a few thousand release rows (published
values, never originals) and counted on the originals and control by ``map_batches``
and a sum per predicate.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.engine.expr import Arith, Col, Lit
from sparkanon.errors import MeasureUnavailableError
from sparkanon.risk.attacks import value_text
from sparkanon.risk.view import TableView

DEFAULT_N_ATTACKS = 500
"""Targets (and predicates) per attack, anonymeter's default."""
DEFAULT_CONFIDENCE = 0.95
"""Confidence level of the Wilson intervals."""
INFERENCE_TOLERANCE = 0.05
"""Numeric inference: the relative error a guess may have (anonymeter's ``tolerance``)."""
MAX_CANDIDATE_ROWS = 20_000
"""The most release rows (or distinct values) the singling-out attack brings to the driver."""
_RID = "_an_rid"
_KEY = "_an_key"
_ATTACK = "_an_attack"
_BUCKET = "_an_bucket"
_ONE = "_an_one"
_MASK = (1 << 63) - 1


# -------------------------------------------------------------------- statistics (pure)


def probit(confidence: float) -> float:
    """The normal quantile of ``(1 + confidence) / 2``."""
    return NormalDist().inv_cdf(0.5 * (1.0 + confidence))


def wilson(
    n_total: int, n_success: float, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """Anonymeter's ``success_rate``: Wilson score estimate and error of a Bernoulli rate."""
    if not 0 <= confidence <= 1:
        raise ValueError(f"confidence must lie in [0, 1], got {confidence}")
    z = probit(confidence)
    z2 = z * z
    var = n_success * (n_total - n_success) / n_total if n_total else 0.0
    den = n_total + z2
    return (n_success + 0.5 * z2) / den, (z / den) * math.sqrt(max(var, 0.0) + 0.25 * z2)


def residual(attack: tuple[float, float], control: tuple[float, float]) -> tuple[float, float]:
    """Anonymeter's ``residual_success``: ``(a - c) / (1 - c)`` and its propagated error."""
    a, ea = attack
    c, ec = control
    if c >= 1:
        return math.nan, math.nan
    value = (a - c) / (1.0 - c)
    d_attack = 1 / abs(1 - c)
    d_control = (a - 1) / (1 - c) ** 2
    return value, math.sqrt((ea * d_attack) ** 2 + (ec * d_control) ** 2)


def bound(point: float, error: float) -> dict[str, Any]:
    """Anonymeter's ``bind_value``: the point and ``point -/+ error`` clipped to ``[0, 1]``."""

    def clip(x: float) -> float:
        return min(max(x, 0.0), 1.0)

    return {"value": clip(point), "ci": [clip(point - error), clip(point + error)]}


def evaluation(
    n_attacks: int,
    n_success: float,
    n_baseline: float,
    n_control: float,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Any]:
    """One attack's report from its success counts (anonymeter's ``EvaluationResults``).

    Returns:
        ``{"main": {rate, ci, successes}, "control": {...}, "baseline": {...},
        "risk": {value, ci}, "residual": float, "n_attacks": int}``.
    """

    def rate(successes: float) -> tuple[dict[str, Any], tuple[float, float]]:
        r = wilson(n_attacks, successes, confidence)
        b = bound(*r)
        return {"rate": b["value"], "ci": b["ci"], "successes": successes}, r

    main, r_main = rate(n_success)
    control, r_control = rate(n_control)
    baseline, _ = rate(n_baseline)
    value, error = residual(r_main, r_control)
    risk = bound(value, error) if not math.isnan(value) else {"value": None, "ci": None}
    return {
        "main": main,
        "control": control,
        "baseline": baseline,
        "risk": risk,
        "residual": None if math.isnan(value) else value,
        "n_attacks": int(n_attacks),
    }


# ---------------------------------------------------------------------- distance (pure)


@dataclass(frozen=True)
class Columns:
    """The attack columns and how they compare.

    Attributes:
        numeric: number columns (distance ``|a - b| / range``).
        text: categorical columns (distance 0 or 1).
        ranges: each number column's range (1 where it is 0 or unknown).
    """

    numeric: tuple[str, ...]
    text: tuple[str, ...]
    ranges: tuple[float, ...] = ()

    @property
    def names(self) -> list[str]:
        """All the columns, numbers first."""
        return list(self.numeric) + list(self.text)


def _text_codes(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Consistent integer codes of two text columns (a null is a value of its own)."""
    ta = np.array([value_text(v) if not pd.isna(v) else "\x00null" for v in a], dtype=object)
    tb = np.array([value_text(v) if not pd.isna(v) else "\x00null" for v in b], dtype=object)
    _, inv = np.unique(np.concatenate([ta, tb]).astype(str), return_inverse=True)
    inv = inv.ravel()
    return inv[: len(ta)], inv[len(ta) :]


def gower(targets: pd.DataFrame, candidates: pd.DataFrame, cols: Columns) -> np.ndarray:
    """``(T, C)`` anonymeter's mixed distance between every target and candidate row."""
    out = np.zeros((len(targets), len(candidates)))
    for name, width in zip(cols.numeric, cols.ranges, strict=True):
        a = pd.to_numeric(targets[name], errors="coerce").to_numpy(dtype=float)
        b = pd.to_numeric(candidates[name], errors="coerce").to_numpy(dtype=float)
        d = np.abs(a[:, None] - b[None, :]) / (width if width > 0 else 1.0)
        out += np.where(np.isnan(d), 1.0, d)
    for name in cols.text:
        a, b = _text_codes(targets[name], candidates[name])
        out += a[:, None] != b[None, :]
    return out


def nearest(distance: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per target row, the ``k`` nearest candidates (ties to the lower id): ``(idx, dist)``.

    ``k`` rounds of ``argmin`` over the candidates in id order (``argmin`` keeps the first
    of equal values): linear in the candidates (a sort of every row is not).
    """
    order = np.argsort(ids, kind="stable")
    d = np.array(distance[:, order], dtype=float)
    k = min(k, d.shape[1])
    rows = np.arange(d.shape[0])
    picks = np.empty((d.shape[0], k), dtype=np.int64)
    dist = np.empty((d.shape[0], k))
    for j in range(k):
        p = np.argmin(d, axis=1)
        picks[:, j], dist[:, j] = p, d[rows, p]
        d[rows, p] = np.inf
    return order[picks], dist


NN_CHUNK = 8192
"""Release rows compared with every target at once (bounds a bucket's distance matrix)."""


def nearest_in_chunks(
    targets: pd.DataFrame, rows: pd.DataFrame, ids: np.ndarray, cols: Columns, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest` over :func:`gower` distances, :data:`NN_CHUNK` release rows at a time.

    The running ``k`` best of each target (ties to the lower id) merge with each chunk's,
    so memory is ``targets x NN_CHUNK`` whatever the bucket's size. Returns positions in
    ``rows`` and distances, ``(T, min(k, len(rows)))``.
    """
    best_pos = np.zeros((len(targets), 0), dtype=np.int64)
    best_dist = np.zeros((len(targets), 0))
    for start in range(0, len(rows), NN_CHUNK):
        chunk = rows.iloc[start : start + NN_CHUNK]
        idx, dist = nearest(gower(targets, chunk, cols), ids[start : start + NN_CHUNK], k)
        pos = np.concatenate([best_pos, idx + start], axis=1)
        dst = np.concatenate([best_dist, dist], axis=1)
        keep = np.lexsort((ids[pos], dst), axis=1)[:, : min(k, pos.shape[1])]
        best_pos = np.take_along_axis(pos, keep, axis=1)
        best_dist = np.take_along_axis(dst, keep, axis=1)
    return best_pos, best_dist


def inference_success(
    guess: pd.Series, secret: pd.Series, numeric: bool, tolerance: float = INFERENCE_TOLERANCE
) -> np.ndarray:
    """Anonymeter's ``evaluate_inference_guesses``: exact match, or relative error in tolerance."""
    g_null = guess.isna().to_numpy()
    s_null = secret.isna().to_numpy()
    if numeric:
        g = pd.to_numeric(guess, errors="coerce").to_numpy(dtype=float)
        s = pd.to_numeric(secret, errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            match = np.abs(g - s) / (g + 1e-12) <= tolerance
    else:
        match = (
            np.array(
                [value_text(a) == value_text(b) for a, b in zip(guess, secret, strict=True)],
                dtype=bool,
            )
            & ~g_null
            & ~s_null
        )
    return match | (g_null & s_null)


# --------------------------------------------------------------------------- sampling


def splitmix(values: np.ndarray, seed: int) -> np.ndarray:
    """A keyed 63-bit hash of each id (splitmix64 of ``id + seed * golden``)."""
    with np.errstate(over="ignore"):
        x = values.astype(np.uint64) + np.uint64((seed * 0x9E3779B97F4A7C15) & (2**64 - 1))
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x & np.uint64(_MASK)).astype(np.int64)


def content_ids(batch: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """A 63-bit id of each row from its values' canonical text (the same on both engines)."""
    out = np.empty(len(batch), dtype=np.int64)
    texts = [[None if pd.isna(v) else value_text(v) for v in batch[c]] for c in columns]
    for i, row in enumerate(zip(*texts, strict=True)):
        digest = hashlib.blake2b(repr(row).encode(), digest_size=8).digest()
        out[i] = int.from_bytes(digest, "little") & _MASK
    return out


def _keyed(engine: Engine, table: Table, seed: int, by_content: bool = False) -> Table:
    """The table with a row id and a keyed hash of it.

    ``by_content``: the id is :func:`content_ids` of the row (for a table whose row order
    is the engine's, such as distinct rows, where a row id would differ between engines).
    """
    columns = [c for c, _ in engine.schema_of(table)]
    if by_content:

        def content(batch: pd.DataFrame) -> pd.DataFrame:
            out = batch.copy()
            out[_RID] = content_ids(batch, columns)
            return out

        with_id = engine.map_batches(table, content, engine.schema_of(table) + [(_RID, "long")])
    else:
        with_id = engine.with_row_id(table, _RID)
    schema = engine.schema_of(with_id)

    def key(batch: pd.DataFrame) -> pd.DataFrame:
        out = batch.copy()
        out[_KEY] = splitmix(batch[_RID].to_numpy(dtype=np.int64), seed)
        return out

    return engine.map_batches(with_id, key, list(schema) + [(_KEY, "long")])


def seeded_sample(
    engine: Engine, table: Table, n: int, seed: int, by_content: bool = False
) -> tuple[Table, int]:
    """The ``n`` rows of smallest key, numbered ``0 .. n-1`` in key order (column ``_an_attack``).

    The driver collects row ids and keys of about ``n`` rows only (a threshold on the
    uniform key, doubled until enough rows pass).

    Returns:
        The sample (the table's columns, its row id and the attack number) and its size
        (``min(n, rows)``).
    """
    keyed = engine.persist(_keyed(engine, table, seed, by_content))
    total = engine.count(keyed)
    n = min(n, total)
    if n == 0:
        raise ValueError("no rows to draw attack targets from")
    share = min(1.0, 2.0 * n / total + 32.0 / total)
    while True:
        limit = int(share * _MASK) if share < 1 else _MASK
        picked = engine.where(keyed, _KEY, "<=", limit)
        small = engine.collect_small(engine.select(picked, [_RID, _KEY]), 4 * n + 10_000)
        if len(small) >= n or share >= 1:
            break
        share = min(1.0, share * 2)
    small = small.sort_values([_KEY, _RID]).head(n)
    ids = pd.DataFrame(
        {_RID: small[_RID].to_numpy(dtype=np.int64), _ATTACK: np.arange(n, dtype=np.int64)}
    )
    chosen = engine.join(
        keyed, engine.from_pandas(ids, [(_RID, "long"), (_ATTACK, "long")]), [_RID]
    )
    return chosen, n


# --------------------------------------------------------------------------- neighbours


def _ranges(engine: Engine, tables: Sequence[Table], numeric: Sequence[str]) -> tuple[float, ...]:
    """Each number column's range over the tables together (anonymeter's scaling).

    A column of text (a CSV's) is read as numbers, a text that is not one (a
    missing-value token) left out: per batch its smallest and largest number, then the
    smallest and largest of those.
    """
    if not numeric:
        return ()
    lows, highs = [], []
    schema = [(f"{end}{i}", "double") for i in range(len(numeric)) for end in ("lo", "hi")]

    def extremes(batch: pd.DataFrame) -> pd.DataFrame:
        out = {}
        for i, c in enumerate(numeric):
            x = pd.to_numeric(batch[c], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            x = x[np.isfinite(x)]
            out[f"lo{i}"] = [x.min() if x.size else np.nan]
            out[f"hi{i}"] = [x.max() if x.size else np.nan]
        return pd.DataFrame(out)[[n for n, _ in schema]]

    for t in tables:
        aggs = {}
        for i in range(len(numeric)):
            aggs[f"lo{i}"] = ("min", f"lo{i}")
            aggs[f"hi{i}"] = ("max", f"hi{i}")
        per_batch = engine.map_batches(t, extremes, schema)
        row = engine.collect_small(engine.aggregate(per_batch, [], aggs), 1).iloc[0]
        lows.append([float(row[f"lo{i}"]) for i in range(len(numeric))])
        highs.append([float(row[f"hi{i}"]) for i in range(len(numeric))])
    lo = np.nanmin(np.array(lows), axis=0)
    hi = np.nanmax(np.array(highs), axis=0)
    width = hi - lo
    return tuple(float(w) if np.isfinite(w) and w > 0 else 1.0 for w in width)


def _bucketed(engine: Engine, release: Table, buckets: int) -> Table:
    """The release with a row id and its bucket ``id mod buckets``."""
    with_id = engine.with_row_id(release, _RID)
    rid = Col(_RID)
    bucket = Arith("-", rid, Arith("*", Arith("//", rid, Lit(buckets)), Lit(buckets)))
    return engine.with_columns(with_id, {_BUCKET: bucket})


def _replicated(engine: Engine, targets: Table, buckets: int) -> Table:
    """Every target once per bucket."""
    ones = engine.with_columns(targets, {_ONE: Lit(0)})
    grid = pd.DataFrame({_ONE: np.zeros(buckets, dtype=np.int64), _BUCKET: np.arange(buckets)})
    return engine.join(ones, engine.from_pandas(grid, [(_ONE, "long"), (_BUCKET, "long")]), [_ONE])


_NN_COLS = [(_ATTACK, "long"), ("nn_rid", "long"), ("nn_dist", "double")]


def _make_bucket_fn(
    cols: Columns, k: int, carry: str | None, carry_type: str
) -> Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]:
    """Per bucket: each target's ``k`` nearest release rows there (and their ``carry``)."""
    schema = _NN_COLS + ([("nn_carry", carry_type)] if carry else [])

    def best(targets: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
        if len(targets) == 0 or len(rows) == 0:
            return pd.DataFrame({n: [] for n, _ in schema})
        targets = targets.sort_values(_ATTACK).reset_index(drop=True)
        ids = rows[_RID].to_numpy(dtype=np.int64)
        idx, dist = nearest_in_chunks(targets, rows, ids, cols, k)
        kk = idx.shape[1]
        out = {
            _ATTACK: np.repeat(targets[_ATTACK].to_numpy(dtype=np.int64), kk),
            "nn_rid": ids[idx].ravel(),
            "nn_dist": dist.ravel(),
        }
        if carry:
            out["nn_carry"] = rows[carry].to_numpy(dtype=object)[idx.ravel()]
        return pd.DataFrame(out)

    return best


def _make_top_fn(k: int, schema: list[tuple[str, str]]) -> BatchFn:
    """Per target: the ``k`` nearest over all buckets, ranked ``0 .. k-1``."""

    def top(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.sort_values(["nn_dist", "nn_rid"], kind="stable").head(k)
        return frame.assign(nn_rank=np.arange(len(frame), dtype=np.int64))[[n for n, _ in schema]]

    return top


def knn_on_engine(
    engine: Engine,
    targets: Table,
    release: Table,
    cols: Columns,
    k: int,
    buckets: int,
    carry: str | None = None,
    carry_type: str = "string",
) -> Table:
    """Each target's ``k`` nearest release rows (``nn_rid``, ``nn_dist``, ``nn_rank``...).

    Args:
        engine: the engine.
        targets: the targets (columns ``_an_attack`` and ``cols``).
        release: the release, already bucketed (:func:`_bucketed`).
        cols: the compared columns and number ranges.
        k: neighbours kept.
        buckets: the release's buckets.
        carry: a release column to bring along (the inference guess).
        carry_type: its type.
    """
    keep = [_ATTACK, *cols.names]
    rep = _replicated(engine, engine.select(targets, keep), buckets)
    rel_cols = [_RID, _BUCKET, *cols.names] + ([carry] if carry and carry not in cols.names else [])
    schema = _NN_COLS + ([("nn_carry", carry_type)] if carry else [])
    per_bucket = engine.cogroup(
        rep,
        _BUCKET,
        engine.select(release, rel_cols),
        _BUCKET,
        _make_bucket_fn(cols, k, carry, carry_type),
        schema,
    )
    out_schema = schema + [("nn_rank", "long")]
    return engine.map_groups(per_bucket, _ATTACK, _make_top_fn(k, out_schema), out_schema)


# --------------------------------------------------------------------------- attacks


def _sum(engine: Engine, table: Table, column: str) -> int:
    row = engine.collect_small(engine.aggregate(table, [], {"s": ("sum", column)}), 1)
    return int(row["s"].iloc[0])


def _columns(view: TableView, names: Sequence[str]) -> Columns:
    kinds = dict(view.kinds)
    if view.sensitive is not None and view.sensitive_kind is not None:
        kinds[view.sensitive] = view.sensitive_kind
    return Columns(
        numeric=tuple(c for c in names if kinds.get(c) == "numeric"),
        text=tuple(c for c in names if kinds.get(c) != "numeric"),
    )


def _with_ranges(engine: Engine, cols: Columns, tables: Sequence[Table]) -> Columns:
    return Columns(cols.numeric, cols.text, _ranges(engine, tables, cols.numeric))


def inference_count(
    engine: Engine,
    population: Table,
    release: Table,
    view: TableView,
    n_attacks: int,
    seed: int,
    buckets: int,
) -> tuple[int, int]:
    """Successes of the inference attack on targets drawn from ``population``, and their number."""
    assert view.sensitive is not None
    secret = view.sensitive
    targets, n = seeded_sample(engine, population, n_attacks, seed)
    targets = engine.persist(targets)
    cols = _with_ranges(engine, _columns(view, view.quasi_identifiers), [release, targets])
    rel = _bucketed(engine, release, buckets)
    numeric = view.sensitive_kind == "numeric"
    ctype = "double" if numeric else "string"
    rel = engine.map_batches(
        rel,
        _cast_fn(secret, "_an_secret", numeric),
        engine.schema_of(rel) + [("_an_secret", ctype)],
    )
    nn = knn_on_engine(engine, targets, rel, cols, 1, buckets, "_an_secret", ctype)
    truth = engine.map_batches(
        engine.select(targets, [_ATTACK, secret]),
        _cast_fn(secret, "_an_truth", numeric),
        [(_ATTACK, "long"), ("_an_truth", ctype)],
    )
    joined = engine.join(nn, engine.select(truth, [_ATTACK, "_an_truth"]), [_ATTACK])
    scored = engine.map_batches(
        joined, _make_infer_fn("nn_carry", "_an_truth", numeric), [("ok", "long")]
    )
    successes = _sum(engine, scored, "ok")
    engine.unpersist(targets)
    return successes, n


def _cast_fn(column: str, out: str, numeric: bool) -> BatchFn:
    """Add ``out``: ``column`` as a double (numeric) or canonical text."""

    def cast(batch: pd.DataFrame) -> pd.DataFrame:
        frame = batch.copy()
        if numeric:
            frame[out] = pd.to_numeric(batch[column], errors="coerce").astype(float)
        else:
            frame[out] = [None if pd.isna(v) else value_text(v) for v in batch[column]]
        return frame

    return cast


def _make_infer_fn(guess: str, truth: str, numeric: bool) -> BatchFn:
    def score(batch: pd.DataFrame) -> pd.DataFrame:
        ok = inference_success(batch[guess], batch[truth], numeric)
        return pd.DataFrame({"ok": ok.astype(np.int64)})

    return score


def inference_baseline(
    engine: Engine, population: Table, release: Table, view: TableView, n: int, seed: int
) -> int:
    """Successes of guessing each target's secret as that of a random release row."""
    assert view.sensitive is not None
    secret = view.sensitive
    numeric = view.sensitive_kind == "numeric"
    ctype = "double" if numeric else "string"
    targets, n_t = seeded_sample(engine, population, n, seed)
    guesses, n_g = seeded_sample(engine, release, n, seed + 7919)
    t = engine.map_batches(
        engine.select(targets, [_ATTACK, secret]),
        _cast_fn(secret, "_an_truth", numeric),
        [(_ATTACK, "long"), ("_an_truth", ctype)],
    )
    g = engine.map_batches(
        engine.select(guesses, [_ATTACK, secret]),
        _cast_fn(secret, "_an_guess", numeric),
        [(_ATTACK, "long"), ("_an_guess", ctype)],
    )
    joined = engine.join(
        engine.select(t, [_ATTACK, "_an_truth"]),
        engine.select(g, [_ATTACK, "_an_guess"]),
        [_ATTACK],
    )
    scored = engine.map_batches(
        joined, _make_infer_fn("_an_guess", "_an_truth", numeric), [("ok", "long")]
    )
    return _sum(engine, scored, "ok")


def linkability_count(
    engine: Engine,
    population: Table,
    release: Table,
    view: TableView,
    split: tuple[Sequence[str], Sequence[str]],
    n_attacks: int,
    n_neighbors: int,
    seed: int,
    buckets: int,
) -> tuple[int, int]:
    """Targets whose two halves' ``n_neighbors`` nearest release rows meet, and their number."""
    targets, n = seeded_sample(engine, population, n_attacks, seed)
    targets = engine.persist(targets)
    rel = _bucketed(engine, release, buckets)
    sides = []
    for i, names in enumerate(split):
        cols = _with_ranges(engine, _columns(view, names), [release, targets])
        nn = knn_on_engine(engine, targets, rel, cols, n_neighbors, buckets)
        sides.append(engine.with_columns(engine.select(nn, [_ATTACK, "nn_rid"]), {"side": Lit(i)}))
    both = engine.union(sides[0], sides[1])
    met = engine.map_groups(both, _ATTACK, _meet, [("ok", "long")])
    successes = _sum(engine, met, "ok")
    engine.unpersist(targets)
    return successes, n


def _meet(frame: pd.DataFrame) -> pd.DataFrame:
    """1 when a release row is among both sides' neighbours of the target."""
    a = set(frame.loc[frame["side"] == 0, "nn_rid"].tolist())
    b = set(frame.loc[frame["side"] == 1, "nn_rid"].tolist())
    return pd.DataFrame({"ok": [int(bool(a & b))]})


def linkability_baseline(n_release: int, n_attacks: int, n_neighbors: int, seed: int) -> int:
    """Successes of linking by two random sets of ``n_neighbors`` release rows."""
    rng = np.random.default_rng(seed)
    k = min(n_neighbors, n_release)
    hits = 0
    for _ in range(n_attacks):
        a = rng.choice(n_release, size=k, replace=False)
        b = rng.choice(n_release, size=k, replace=False)
        hits += bool(set(a.tolist()) & set(b.tolist()))
    return hits


# --------------------------------------------------------------------------- singling out

_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda x, v: x == v,
    "!=": lambda x, v: x != v,
    "<": lambda x, v: x < v,
    ">": lambda x, v: x > v,
    "<=": lambda x, v: x <= v,
    ">=": lambda x, v: x >= v,
}

Clause = tuple[str, str, Any]
"""One ``(column, op, value)`` test of a predicate."""

Predicate = tuple[Clause, ...]
"""A conjunction of ``(column, op, value)``; ``op`` in ``== != < > <= >= isna notna``."""


def _column_values(
    frame: pd.DataFrame, col: str, numeric: set[str], cache: dict[str, Any] | None
) -> tuple[np.ndarray, np.ndarray]:
    """A column's null mask and its comparable values (numbers, or canonical texts)."""
    if cache is not None and col in cache:
        return cache[col]
    raw = frame[col]
    null = raw.isna().to_numpy()
    if col in numeric:
        x = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    else:
        x = np.array([value_text(a) if not pd.isna(a) else "" for a in raw], dtype=object)
    if cache is not None:
        cache[col] = (null, x)
    return null, x


def predicate_mask(
    frame: pd.DataFrame,
    predicate: Predicate,
    numeric: set[str],
    cache: dict[str, Any] | None = None,
) -> np.ndarray:
    """Which rows of ``frame`` satisfy the conjunction (a null satisfies only ``isna``).

    ``cache`` (one per frame) keeps each column's converted values across predicates.
    """
    mask = np.ones(len(frame), dtype=bool)
    for col, op, value in predicate:
        null, x = _column_values(frame, col, numeric, cache)
        if op == "isna":
            mask &= null
            continue
        if op == "notna":
            mask &= ~null
            continue
        if col not in numeric and op in ("==", "!="):
            # Text equality through the column's integer codes (object arrays compare
            # string by string: most of the singling-out attack's time).
            codes, lookup = _text_codes_of(x, col, cache)
            code = lookup.get(value_text(value), -1)
            hit = (codes == code) if op == "==" else (codes != code)
        else:
            v = float(value) if col in numeric else value_text(value)
            with np.errstate(invalid="ignore"):
                hit = _COMPARE[op](x, v)
        mask &= np.asarray(hit, dtype=bool) & ~null
    return mask


def _text_codes_of(
    x: np.ndarray, col: str, cache: dict[str, Any] | None
) -> tuple[np.ndarray, dict[str, int]]:
    """A text column's integer codes and the code of each text (cached with the column)."""
    key = ("codes", col)
    if cache is not None and key in cache:
        return cache[key]
    codes, uniques = pd.factorize(x)
    found = (codes.astype(np.int64), {str(u): i for i, u in enumerate(uniques)})
    if cache is not None:
        cache[key] = found
    return found


class _SingleClauseCounter:
    """Rows of one batch matching a one-clause predicate, from per-column tables.

    The univariate attack asks hundreds of ``col == v`` (and a few ``<=``, ``>=``)
    predicates: a column's value counts and its sorted numbers, built once per batch,
    answer each in a look-up instead of a pass over the batch. The same rows as
    :func:`predicate_mask` (a null satisfies only ``isna``).
    """

    def __init__(self, batch: pd.DataFrame, numeric: set[str], cache: dict[str, Any]) -> None:
        self.batch, self.numeric, self.cache = batch, numeric, cache
        self.tables: dict[str, tuple[Any, np.ndarray, int]] = {}

    def _table(self, col: str) -> tuple[Any, np.ndarray, int]:
        if col not in self.tables:
            null, x = _column_values(self.batch, col, self.numeric, self.cache)
            present = x[~null]
            if col in self.numeric:
                present = present[~np.isnan(present)]
            counts = pd.Series(present).value_counts().to_dict()
            ordered = np.sort(present) if col in self.numeric else np.zeros(0)
            self.tables[col] = (counts, ordered, int(null.sum()))
        return self.tables[col]

    def count(self, clause: tuple[str, str, Any]) -> int:
        col, op, value = clause
        counts, ordered, nulls = self._table(col)
        if op == "isna":
            return nulls
        if op == "notna":
            return len(self.batch) - nulls
        if op == "==":
            key = float(value) if col in self.numeric else value_text(value)
            return int(counts.get(key, 0))
        if col in self.numeric and op in ("<", "<=", ">", ">="):
            v = float(value)
            side = "right" if op in ("<=", ">") else "left"
            below = int(np.searchsorted(ordered, v, side=side))
            return below if op in ("<", "<=") else len(ordered) - below
        mask = predicate_mask(self.batch, (clause,), self.numeric, self.cache)
        return int(mask.sum())


def count_predicates(
    engine: Engine, table: Table, predicates: Sequence[Predicate], numeric: set[str]
) -> np.ndarray:
    """Rows of ``table`` matching each predicate (one ``map_batches`` and a sum per predicate)."""
    if not predicates:
        return np.zeros(0, dtype=np.int64)
    preds = list(predicates)

    def count(batch: pd.DataFrame) -> pd.DataFrame:
        cache: dict[str, Any] = {}
        counter = _SingleClauseCounter(batch, numeric, cache)
        n = np.array(
            [
                counter.count(p[0])
                if len(p) == 1
                else predicate_mask(batch, p, numeric, cache).sum()
                for p in preds
            ],
            dtype=np.int64,
        )
        hit = np.flatnonzero(n)
        return pd.DataFrame({"q": hit.astype(np.int64), "n": n[hit]})

    per = engine.map_batches(table, count, [("q", "long"), ("n", "long")])
    sums = engine.collect_small(engine.aggregate(per, ["q"], {"n": ("sum", "n")}), len(preds))
    out = np.zeros(len(preds), dtype=np.int64)
    out[sums["q"].to_numpy(dtype=np.int64)] = sums["n"].to_numpy(dtype=np.int64)
    return out


def distinct_rows(engine: Engine, table: Table, columns: Sequence[str]) -> Table:
    """The distinct rows over ``columns`` (anonymeter's ``drop_duplicates``)."""
    return engine.select(
        engine.aggregate(table, list(columns), {"_an_n": ("count", columns[0])}), list(columns)
    )


def _collect_capped(engine: Engine, table: Table, seed: int) -> pd.DataFrame:
    """A small table of release values; above :data:`MAX_CANDIDATE_ROWS` rows, a seeded sample.

    The sample of a large table is the engine's Bernoulli sample (Spark's and pandas'
    differ), so only tables above the cap may differ between engines.
    """
    total = engine.count(table)
    if total > MAX_CANDIDATE_ROWS:
        table = engine.sample(table, MAX_CANDIDATE_ROWS / (2.0 * total), seed)
    return engine.collect_small(table, MAX_CANDIDATE_ROWS)


def univariate_candidates(
    engine: Engine, release: Table, columns: Sequence[str], numeric: set[str], seed: int
) -> list[Predicate]:
    """Anonymeter's univariate predicates from the release, in a seeded shuffled order."""
    preds: list[Predicate] = []
    nums = [c for c in sorted(columns) if c in numeric]
    extremes = None
    if nums:  # every number column's smallest and largest value in one aggregation
        aggs = {f"{e}{i}": (e, c) for i, c in enumerate(nums) for e in ("min", "max")}
        extremes = engine.collect_small(engine.aggregate(release, [], aggs), 1).iloc[0]
    for col in sorted(columns):
        counts = engine.aggregate(release, [col], {"n": ("count", col)})
        nulls = engine.where(counts, "n", "==", 1)
        rare = _collect_capped(engine, nulls, seed)
        for v in sorted(rare[col].tolist(), key=lambda v: (pd.isna(v), value_text(v))):
            preds.append(((col, "isna", None),) if pd.isna(v) else ((col, "==", v),))
        if col in numeric and extremes is not None:
            i = nums.index(col)
            lo, hi = extremes[f"min{i}"], extremes[f"max{i}"]
            if not pd.isna(lo):
                preds += [((col, "<=", float(lo)),), ((col, ">=", float(hi)),)]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(preds))
    unique: dict[str, Predicate] = {}
    for i in order:
        unique.setdefault(repr(preds[i]), preds[i])
    return list(unique.values())


def _random_predicates(
    rng: np.random.Generator,
    columns: Sequence[str],
    n_cols: int,
    n: int,
    clause: Callable[[int, str], Clause],
) -> list[Predicate]:
    """``n`` predicates, the ``i``-th on ``n_cols`` columns drawn by ``rng`` (in name order).

    ``clause(i, column)`` is the ``i``-th predicate's clause on one of its columns; it is
    called column by column after the draw, so a ``clause`` drawing from ``rng`` too
    takes its numbers in a fixed order.
    """
    cols = list(columns)
    out = []
    for i in range(n):
        chosen = sorted(rng.choice(cols, size=min(n_cols, len(cols)), replace=False).tolist())
        out.append(tuple(clause(i, c) for c in chosen))
    return out


def multivariate_candidates(
    engine: Engine,
    release: Table,
    columns: Sequence[str],
    numeric: set[str],
    n_cols: int,
    n: int,
    seed: int,
) -> list[Predicate]:
    """Predicates from ``n`` seeded release rows on ``n_cols`` random columns each."""
    sample, _ = seeded_sample(engine, release, n, seed, by_content=True)
    rows = engine.collect_small(engine.select(sample, [_ATTACK, *columns]), n).sort_values(_ATTACK)
    medians: dict[str, float] = {}
    if numeric:
        nums = sorted(numeric & set(columns))
        row = engine.collect_small(
            engine.aggregate(release, [], {c: ("median", c) for c in nums}), 1
        ).iloc[0]
        medians = {c: float(row[c]) for c in nums}
    records = [r for _, r in rows.iterrows()]

    def clause(i: int, c: str) -> Clause:
        v = records[i][c]
        if pd.isna(v):
            return (c, "isna", None)
        if c in numeric:
            return (c, ">=" if float(v) > medians[c] else "<=", float(v))
        return (c, "==", v)

    return _random_predicates(
        np.random.default_rng(seed + 1), columns, n_cols, len(records), clause
    )


def release_values(
    engine: Engine, release: Table, columns: Sequence[str], seed: int
) -> dict[str, list[Any]]:
    """Each column's distinct release values, sorted (a seeded sample above the cap).

    The cap is :data:`MAX_CANDIDATE_ROWS` values a column (see :func:`_collect_capped`).
    """
    values: dict[str, list[Any]] = {}
    for c in columns:
        distinct = engine.aggregate(release, [c], {"n": ("count", c)})
        got = _collect_capped(engine, distinct, seed)
        values[c] = sorted(got[c].tolist(), key=lambda v: (pd.isna(v), value_text(v)))
    return values


def random_predicates(
    values: Mapping[str, Sequence[Any]], numeric: set[str], n_cols: int, n: int, seed: int
) -> list[Predicate]:
    """The baseline's predicates: random columns, random release values, random operators.

    Args:
        values: each attack column's release values (:func:`release_values`).
        numeric: the numeric columns (compared with any of ``== != > < >= <=``).
        n_cols: columns a predicate.
        n: predicates.
        seed: the random seed.
    """
    rng = np.random.default_rng(seed + 2)

    def clause(_: int, c: str) -> Clause:
        v = values[c][int(rng.integers(len(values[c])))]
        if pd.isna(v):
            return (c, str(rng.choice(["isna", "notna"])), None)
        if c in numeric:
            return (c, str(rng.choice(["==", "!=", ">", "<", ">=", "<="])), float(v))
        return (c, str(rng.choice(["==", "!="])), v)

    return _random_predicates(rng, list(values), n_cols, n, clause)


def singling_out(
    engine: Engine,
    originals: Table,
    release: Table,
    control: Table,
    view: TableView,
    mode: str,
    n_attacks: int,
    n_cols: int,
    seed: int,
    max_rounds: int = 5,
) -> tuple[int, int, int, int]:
    """``(main, control, baseline successes, predicates)`` of the singling-out attack."""
    columns = list(view.quasi_identifiers) + ([view.sensitive] if view.sensitive else [])
    cols = _columns(view, columns)
    numeric = set(cols.numeric)
    rel = engine.persist(distinct_rows(engine, release, columns))
    ori = distinct_rows(engine, originals, columns)
    ctl = engine.persist(distinct_rows(engine, control, columns))
    n_ori, n_ctl = engine.count(ori), engine.count(ctl)
    if n_ctl < n_ori:  # equal-size populations instead of anonymeter's fitted correction
        ori, _ = seeded_sample(engine, ori, n_ctl, seed + 31, by_content=True)
        ori = engine.select(ori, columns)
    ori = engine.persist(ori)
    kept: list[Predicate] = []
    if mode == "univariate":
        cands = univariate_candidates(engine, rel, columns, numeric, seed)
        counts = count_predicates(engine, rel, cands, numeric)
        kept = [p for p, c in zip(cands, counts, strict=True) if c == 1][:n_attacks]
        n_base_cols = 1
    else:
        seen: set[str] = set()
        for r in range(max_rounds):
            need = n_attacks - len(kept)
            if need <= 0:
                break
            cands = multivariate_candidates(
                engine,
                rel,
                columns,
                numeric,
                n_cols,
                min(4 * need, MAX_CANDIDATE_ROWS),
                seed + 101 * r,
            )
            cands = [p for p in cands if repr(p) not in seen]
            seen |= {repr(p) for p in cands}
            counts = count_predicates(engine, rel, cands, numeric)
            kept += [p for p, c in zip(cands, counts, strict=True) if c == 1][:need]
        n_base_cols = n_cols
    main = int((count_predicates(engine, ori, kept, numeric) == 1).sum())
    ctrl = int((count_predicates(engine, ctl, kept, numeric) == 1).sum())
    values = release_values(engine, rel, columns, seed + 3)
    base = random_predicates(values, numeric, n_base_cols, n_attacks, seed + 3)
    baseline = int((count_predicates(engine, ori, base, numeric) == 1).sum())
    for t in (rel, ctl, ori):
        engine.unpersist(t)
    return main, ctrl, baseline, len(kept)


def anonymeter_on_engine(
    engine: Engine,
    originals: Table,
    release: Table,
    control: Table,
    view: TableView,
    n_attacks: int = DEFAULT_N_ATTACKS,
    seed: int = 0,
    n_neighbors: int = 1,
    n_cols: int = 3,
    link_split: tuple[Sequence[str], Sequence[str]] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    buckets: int | None = None,
) -> dict[str, Any]:
    """The three anonymeter attacks of a release (see the module docstring).

    Args:
        engine: the engine.
        originals: the original rows the release was made from (the view's columns).
        release: the released rows (the same columns).
        control: original rows held out of the release.
        view: the attack columns (quasi-identifiers and the sensitive attribute).
        n_attacks: targets per attack (and predicates of singling out).
        seed: the seed of every draw.
        n_neighbors: linkability's neighbours per side (anonymeter's default 1).
        n_cols: columns of a multivariate singling-out predicate (default 3).
        link_split: linkability's two auxiliary column sets; default the attack
            columns cut in two halves in order (the first holds the extra one).
        confidence: confidence level of the intervals.
        buckets: release buckets of the neighbour search (default the engine's
            parallelism x 4).

    Returns:
        ``{"singling_out_univariate": EVAL, "singling_out_multivariate": EVAL,
        "linkability": EVAL, "inference": EVAL | None, "parameters": {...}}``, each
        EVAL as :func:`evaluation` (``main``, ``control``, ``baseline``, ``risk``,
        ``residual``, ``n_attacks``), singling out's with ``predicates`` (how many
        singled out in the release).

    Raises:
        MeasureUnavailableError: the original rows or the control set are empty.
    """
    buckets = buckets or max(1, engine.parallelism * 4)
    n_attacks = min(n_attacks, engine.count(originals), engine.count(control))
    if n_attacks == 0:
        raise MeasureUnavailableError(
            "the attacks against the control set need rows in the original table and in the "
            "control set (report.holdout), and one of them is empty; point report.holdout "
            "at held-out rows of the same population"
        )
    columns = list(view.quasi_identifiers) + ([view.sensitive] if view.sensitive else [])
    out: dict[str, Any] = {}
    for mode in ("univariate", "multivariate"):
        main, ctrl, base, preds = singling_out(
            engine, originals, release, control, view, mode, n_attacks, n_cols, seed
        )
        out[f"singling_out_{mode}"] = evaluation(n_attacks, main, base, ctrl, confidence) | {
            "predicates": preds
        }
    split = link_split or (columns[: (len(columns) + 1) // 2], columns[(len(columns) + 1) // 2 :])
    if split[0] and split[1]:
        main, n_main = linkability_count(
            engine, originals, release, view, split, n_attacks, n_neighbors, seed, buckets
        )
        ctrl, n_ctrl = linkability_count(
            engine, control, release, view, split, n_attacks, n_neighbors, seed + 1, buckets
        )
        n = min(n_main, n_ctrl)
        base = linkability_baseline(engine.count(release), n, n_neighbors, seed + 2)
        out["linkability"] = evaluation(n, main, base, ctrl, confidence) | {
            "split": [list(split[0]), list(split[1])]
        }
    else:
        out["linkability"] = None
    if view.sensitive is not None:
        main, n_main = inference_count(engine, originals, release, view, n_attacks, seed, buckets)
        ctrl, n_ctrl = inference_count(engine, control, release, view, n_attacks, seed + 1, buckets)
        n = min(n_main, n_ctrl)
        base = inference_baseline(engine, originals, release, view, n, seed + 2)
        out["inference"] = evaluation(n, main, base, ctrl, confidence) | {"secret": view.sensitive}
    else:
        out["inference"] = None
    out["parameters"] = {
        "n_attacks": int(n_attacks),
        "seed": int(seed),
        "n_neighbors": int(n_neighbors),
        "n_cols": int(n_cols),
        "confidence": float(confidence),
    }
    return out
