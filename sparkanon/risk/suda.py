"""SUDA2 special-unique scores (sdcMicro's ``suda2()``), on a frame and on an engine.

Our reading of sdcMicro (github sdcTools/sdcMicro, commit ``cf32510``; ``R/suda2.R``,
``src/Suda2.h``), after Elliot et al. 2002 and Manning, Haglin and Keane 2008:

* A *minimal sample unique* (MSU) of a record is a set ``S`` of quasi-identifiers on which
  no other record of the table shares the record's values, while on every proper subset
  of ``S`` some other record does. A value that is missing (null) never belongs to an MSU
  and matches no other record's value (sdcMicro's ``missing`` code: its item is skipped).
  Only a record unique on all the quasi-identifiers (a null being a value there) can
  have an MSU; uniqueness only grows with the set, so ``S`` is minimal when it is unique
  and none of its subsets one element smaller is.
* With ``M`` quasi-identifiers (at least 3: sdcMicro pads fewer with constant columns,
  which changes the weights only), an MSU of size ``k`` weighs ``(M - k)!`` (sdcMicro's
  default ``original_scores = TRUE``, Elliot et al.); the SUDA score of a record is the
  sum of the weights of its MSUs. sdcMicro searches MSUs of every size; here only sizes
  up to ``max_size`` are searched (``M`` is still the number of quasi-identifiers), so a
  score is sdcMicro's when ``max_size >= M`` and a lower bound otherwise.
* A record's contribution of quasi-identifier ``v`` (sdcMicro's ``contributionPercent``)
  is the weight of its MSUs containing ``v`` over its score; the attribute contribution
  is ``100 * sum over records of (contribution * score) / sum of scores``.
* The DIS-SUDA score, with ``U`` the records unique on all quasi-identifiers, ``P`` the
  records in classes of exactly two, ``f`` = ``dis_fraction`` (default 0.01)::

      dis = U f / (U f + P (1 - f));   Q = 1 + (8 - M) / 20
      dis_score = 1 / (1 + (U / dis - U) / (score^Q * sum over scored records of score^-Q))

  and 0 for a score of 0; ``dis``, ``Q`` and ``U / dis - U`` in single precision as
  sdcMicro's C++ computes them. sdcMicro's C++ counts as ``U`` only the sample uniques
  alone in their 16-bit hash bucket (its test ``k == g_NbPerHash[i]`` for the others
  never holds); we count every sample unique, the measure's definition.
* sdcMicro's per-level contributions (``attribute_level_contributions``) are left out:
  they would name quasi-identifier values.

:func:`suda2` is the reference over a pandas frame (every subset counted by a group-by);
:func:`suda2_on_engine` computes the summary on an engine without bringing rows to the
driver; both summaries come from :func:`summarize_suda`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.engine.base import Engine, Table
from sparkanon.risk.view import TableView

DIS_FRACTION = 0.01
"""sdcMicro's default ``DisFraction``."""

DEFAULT_MAX_SIZE = 4
"""The largest MSU searched by default (the measured limit: ``docs/benchmarks.md``, SUDA2)."""

DIS_EDGES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1.0)
"""DIS-score bins ``(e_i, e_i+1]`` (sdcMicro's ``print.suda2`` table), zero counted apart."""

SCORE_BINS = 10
"""Equal-width bins ``(e_i, e_i+1]`` of the positive SUDA scores, up to the highest."""

MAX_SCORE_ROWS = 1_000_000
"""Most distinct scores the engine path collects (scores are sums of few factorials)."""

_ROW_ID = "_suda_rid"
_BUCKET = "_suda_b"
_COUNT = "_suda_n"
_SID = "_suda_sid"
_KEY = "_suda_key"


def subsets(n_keys: int, max_size: int) -> list[tuple[int, ...]]:
    """The quasi-identifier subsets searched: sizes 1..max_size, in combination order."""
    top = min(max_size, n_keys)
    return [s for k in range(1, top + 1) for s in itertools.combinations(range(n_keys), k)]


def score_weights(n_keys: int, max_size: int) -> list[int]:
    """Weight of an MSU of size 1..max_size: ``(M - k)!``, ``M = max(n_keys, 3)``."""
    m = max(n_keys, 3)
    return [math.factorial(m - k) for k in range(1, min(max_size, n_keys) + 1)]


def _check(n_keys: int, max_size: int, dis_fraction: float) -> None:
    if n_keys < 1:
        raise ValueError("SUDA2 needs at least one quasi-identifier")
    if max_size < 1:
        raise ValueError(f"max_size must be at least 1, not {max_size}")
    if not 0.0 < dis_fraction < 1.0:
        raise ValueError(f"dis_fraction must be in (0, 1), not {dis_fraction}")


def _msus(unique: np.ndarray, subs: list[tuple[int, ...]]) -> np.ndarray:
    """Which unique subsets are minimal: ``unique`` and no one-smaller subset unique."""
    index = {s: i for i, s in enumerate(subs)}
    msu = unique.copy()
    for i, s in enumerate(subs):
        if len(s) > 1:
            for drop in range(len(s)):
                msu[:, i] &= ~unique[:, index[s[:drop] + s[drop + 1 :]]]
    return msu


def _per_record(msu: np.ndarray, subs: list[tuple[int, ...]], n_keys: int, max_size: int):
    """Score, MSUs per size and weighted contribution per key of each record (integers)."""
    weights = score_weights(n_keys, max_size)
    w = np.array([weights[len(s) - 1] for s in subs], dtype=np.int64)
    m = msu.astype(np.int64)
    score = m @ w
    top = min(max_size, n_keys)
    sizes = np.array([len(s) for s in subs])
    by_size = np.stack([m[:, sizes == k].sum(axis=1) for k in range(1, top + 1)], axis=1)
    member = np.array([[v in s for s in subs] for v in range(n_keys)], dtype=np.int64)
    contrib = m @ (member * w).T
    return score, by_size, contrib


def dis_parameters(uniques: int, pair_records: int, n_keys: int, dis_fraction: float):
    """The ``Dis``, ``Q`` and ``U / Dis - U`` (single precision, as its C++).

    Returns:
        ``(dis, q, spread)``; ``dis`` is NaN when there are no uniques and no pairs.
    """
    f32 = np.float32
    f = f32(dis_fraction)
    u = f32(uniques)
    m = max(n_keys, 3)
    q = float(f32(1.0) + (f32(8.0) - f32(m)) / f32(20.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        dis = f32(u * f) / f32(f32(u * f) + f32(f32(pair_records) * f32(f32(1.0) - f)))
        spread = f32(f32(u / dis) - u)
    return float(dis), q, float(spread)


def dis_scores(
    scores: np.ndarray,
    records: np.ndarray,
    uniques: int,
    pair_records: int,
    n_keys: int,
    dis_fraction: float,
) -> np.ndarray:
    """DIS-SUDA score of each distinct positive score (``records`` of each)."""
    scores = np.asarray(scores, dtype=float)
    if len(scores) == 0:
        return np.zeros(0)
    _, q, spread = dis_parameters(uniques, pair_records, n_keys, dis_fraction)
    powered = scores**q
    adj = math.fsum(float(c) / p for p, c in zip(powered, records, strict=True))
    return 1.0 / (1.0 + spread / (powered * adj))


def suda2(
    frame: pd.DataFrame,
    keys: Sequence[str],
    max_size: int | None = None,
    dis_fraction: float = DIS_FRACTION,
) -> pd.DataFrame:
    """SUDA2 of every row of a small frame (the reference: each subset counted directly).

    Args:
        frame: the rows.
        keys: the quasi-identifier columns.
        max_size: largest MSU searched; ``None``: all of ``keys`` (sdcMicro).
        dis_fraction: sdcMicro's ``DisFraction``.

    Returns:
        One row per row of ``frame`` (same index): ``score``, ``dis_score``,
        ``msu_1``.. ``msu_<max_size>`` (MSUs of each size), and per key
        ``contribution_<key>`` (sdcMicro's ``contributionPercent``, a share; 0 for a
        score of 0).
    """
    keys = list(keys)
    n_keys = len(keys)
    max_size = n_keys if max_size is None else max_size
    _check(n_keys, max_size, dis_fraction)
    subs = subsets(n_keys, max_size)
    data = frame[keys].reset_index(drop=True)
    unique = np.zeros((len(data), len(subs)), dtype=bool)
    for i, s in enumerate(subs):
        cols = [keys[j] for j in s]
        ok = data[cols].notna().all(axis=1).to_numpy()
        if ok.any():
            part = data.loc[ok, cols]
            count = part.groupby(cols, sort=False)[cols[0]].transform("size").to_numpy()
            unique[np.flatnonzero(ok), i] = count == 1
    score, by_size, contrib = _per_record(_msus(unique, subs), subs, n_keys, max_size)
    sizes = data.groupby(keys, dropna=False, sort=False)[keys[0]].transform("size")
    sizes = sizes.to_numpy() if n_keys else np.zeros(0)
    uniques, pairs = int((sizes == 1).sum()), int((sizes == 2).sum())
    levels, counts = np.unique(score[score > 0], return_counts=True)
    dis_of = dict(
        zip(levels, dis_scores(levels, counts, uniques, pairs, n_keys, dis_fraction), strict=True)
    )
    out = {
        "score": score.astype(float),
        "dis_score": np.array([dis_of.get(s, 0.0) for s in score], dtype=float),
    }
    for k in range(by_size.shape[1]):
        out[f"msu_{k + 1}"] = by_size[:, k]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(score[:, None] > 0, contrib / score[:, None], 0.0)
    for j, key in enumerate(keys):
        out[f"contribution_{key}"] = share[:, j]
    return pd.DataFrame(out, index=frame.index)


def score_table(
    score: np.ndarray, by_size: np.ndarray, contrib: np.ndarray, n_keys: int
) -> pd.DataFrame:
    """Records with a positive score grouped by score: ``score``, ``records``, sums.

    Columns ``msu_<k>`` (MSUs of size k) and ``wc_<j>`` (weight of the MSUs holding key
    number j), all integers.
    """
    frame = pd.DataFrame({"score": np.asarray(score, dtype=np.int64)})
    frame["records"] = 1
    for k in range(by_size.shape[1]):
        frame[f"msu_{k + 1}"] = by_size[:, k].astype(np.int64)
    for j in range(n_keys):
        frame[f"wc_{j}"] = contrib[:, j].astype(np.int64)
    frame = frame[frame["score"] > 0]
    return frame.groupby("score", sort=True).sum().reset_index()


def _bins(values: np.ndarray, counts: np.ndarray, edges: Sequence[float]) -> list[int]:
    """Records per bin ``(e_i, e_i+1]`` (values above the last edge in the last bin)."""
    if len(values) == 0:
        return [0] * (len(edges) - 1)
    idx = np.clip(np.searchsorted(edges, values, side="left") - 1, 0, len(edges) - 2)
    return [int(c) for c in np.bincount(idx, weights=counts, minlength=len(edges) - 1)]


def summarize_suda(
    table: pd.DataFrame,
    rows: int,
    uniques: int,
    pair_records: int,
    keys: Sequence[str],
    max_size: int,
    dis_fraction: float,
) -> dict[str, Any]:
    """``RISK["suda2"]`` from the score table (:func:`score_table`) and class counts.

    Args:
        table: per distinct positive score, ``records`` and the ``msu_<k>`` and
            ``wc_<j>`` sums.
        rows: records of the table.
        uniques: records unique on all quasi-identifiers.
        pair_records: records in classes of exactly two.
        keys: the quasi-identifiers.
        max_size: the largest MSU searched (as given; capped at ``len(keys)``).
        dis_fraction: sdcMicro's ``DisFraction``.

    Returns:
        ``quasi_identifiers``, ``max_size``, ``dis_fraction``, ``rows``,
        ``sample_uniques``, ``pair_records``, ``records_with_msu``, ``share_with_msu``,
        ``msus_by_size`` {"1": n, ...}, ``score_weights`` {"1": (M-1)!, ...},
        ``score`` {max, mean, zero, edges, counts}, ``dis`` {value, q},
        ``dis_score`` {max, mean, zero, edges, counts}, ``attribute_contribution``
        {key: percent}.
    """
    keys = list(keys)
    n_keys = len(keys)
    top = min(max_size, n_keys)
    table = table.sort_values("score")
    scores = table["score"].to_numpy(dtype=np.int64)
    records = table["records"].to_numpy(dtype=np.int64)
    scored = int(records.sum())
    total = int((scores * records).sum())
    dis = dis_scores(scores, records, uniques, pair_records, n_keys, dis_fraction)
    dis_value, q, _ = dis_parameters(uniques, pair_records, n_keys, dis_fraction)
    high = int(scores.max()) if len(scores) else 0
    score_edges = [high * i / SCORE_BINS for i in range(SCORE_BINS + 1)] if high else [0.0, 1.0]
    dis_sum = math.fsum(float(d) * int(c) for d, c in zip(dis, records, strict=True))
    contribution = {
        key: (100.0 * int(table[f"wc_{j}"].sum()) / total if total else 0.0)
        for j, key in enumerate(keys)
    }
    return {
        "quasi_identifiers": keys,
        "max_size": top,
        "dis_fraction": float(dis_fraction),
        "rows": int(rows),
        "sample_uniques": int(uniques),
        "pair_records": int(pair_records),
        "records_with_msu": scored,
        "share_with_msu": scored / rows if rows else 0.0,
        "msus_by_size": {str(k): int(table[f"msu_{k}"].sum()) for k in range(1, top + 1)},
        "score_weights": {
            str(k): w for k, w in enumerate(score_weights(n_keys, max_size), start=1)
        },
        "score": {
            "max": float(high),
            "mean": total / rows if rows else 0.0,
            "zero": int(rows - scored),
            "edges": score_edges,
            "counts": _bins(scores.astype(float), records, score_edges),
        },
        "dis": {"value": None if math.isnan(dis_value) else dis_value, "q": q},
        "dis_score": {
            "max": float(dis.max()) if len(dis) else 0.0,
            "mean": dis_sum / rows if rows else 0.0,
            "zero": int(rows - scored),
            "edges": list(DIS_EDGES),
            "counts": _bins(dis, records, DIS_EDGES),
        },
        "attribute_contribution": contribution,
    }


def suda2_summary(
    frame: pd.DataFrame,
    keys: Sequence[str],
    max_size: int | None = None,
    dis_fraction: float = DIS_FRACTION,
) -> dict[str, Any]:
    """The summary of :func:`suda2` on a small frame (what the engine path returns)."""
    keys = list(keys)
    max_size = len(keys) if max_size is None else max_size
    per = suda2(frame, keys, max_size, dis_fraction)
    top = min(max_size, len(keys))
    by_size = per[[f"msu_{k}" for k in range(1, top + 1)]].to_numpy()
    score = per["score"].to_numpy().astype(np.int64)
    contrib = np.rint(per[[f"contribution_{k}" for k in keys]].to_numpy() * score[:, None]).astype(
        np.int64
    )
    table = score_table(score, by_size, contrib, len(keys))
    sizes = frame.groupby(keys, dropna=False, sort=False)[keys[0]].transform("size")
    return summarize_suda(
        table,
        len(frame),
        int((sizes == 1).sum()),
        int((sizes == 2).sum()),
        keys,
        max_size,
        dis_fraction,
    )


# --------------------------------------------------------------------------- engine path


def _texts(column: pd.Series) -> np.ndarray:
    """Each value as unambiguous text (``len:text``), ``None`` for a null.

    Numbers are written canonically (an integral float as an integer) so that a column
    read as ``long`` in one batch and ``double`` in another gives the same text.
    """
    notnull = column.notna().to_numpy()
    out = np.empty(len(column), dtype=object)
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        values = column.to_numpy(dtype=float, na_value=np.nan)
        texts = [
            (str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(float(v))) if ok else None
            for v, ok in zip(values, notnull, strict=True)
        ]
    else:
        texts = [str(v) if ok else None for v, ok in zip(column.tolist(), notnull, strict=True)]
    for i, t in enumerate(texts):
        out[i] = None if t is None else f"{len(t)}:{t}"
    return out


def _combination_keys(batch: pd.DataFrame, keys: list[str], subs: list[tuple[int, ...]]):
    """Per subset: the rows with no null on it and their combination key text."""
    texts = [_texts(batch[k]) for k in keys]
    present = [np.array([t is not None for t in col], dtype=bool) for col in texts]
    for sid, s in enumerate(subs):
        ok = np.logical_and.reduce([present[j] for j in s])
        rows = np.flatnonzero(ok)
        if len(rows) == 0:
            continue
        combined = texts[s[0]][rows]
        for j in s[1:]:
            combined = combined + "|" + texts[j][rows]
        yield sid, rows, combined


def _emit_all_fn(keys: list[str], subs: list[tuple[int, ...]]):
    """Per batch of classes: ``(subset, combination key, class size)`` per subset."""

    def fn(batch: pd.DataFrame) -> pd.DataFrame:
        sids, combos, counts = [], [], []
        n = batch[_COUNT].to_numpy(dtype=np.int64)
        for sid, rows, combined in _combination_keys(batch, keys, subs):
            sids.append(np.full(len(rows), sid, dtype=np.int64))
            combos.append(combined)
            counts.append(n[rows])
        if not sids:
            return pd.DataFrame({_SID: [], _KEY: [], _COUNT: []})
        return pd.DataFrame(
            {
                _SID: np.concatenate(sids),
                _KEY: np.concatenate(combos),
                _COUNT: np.concatenate(counts),
            }
        )

    return fn


def _emit_unique_fn(keys: list[str], subs: list[tuple[int, ...]], buckets: int):
    """Per batch of unique classes: ``(record id, bucket, subset, combination key)``."""

    def fn(batch: pd.DataFrame) -> pd.DataFrame:
        rid = batch[_ROW_ID].to_numpy(dtype=np.int64)
        parts = [
            pd.DataFrame({_ROW_ID: rid[rows], _SID: sid, _KEY: combined})
            for sid, rows, combined in _combination_keys(batch, keys, subs)
        ]
        if not parts:
            return pd.DataFrame({_ROW_ID: [], _BUCKET: [], _SID: [], _KEY: []})
        out = pd.concat(parts, ignore_index=True)
        out[_BUCKET] = out[_ROW_ID] % buckets
        return out[[_ROW_ID, _BUCKET, _SID, _KEY]]

    return fn


def _bucket_fn(n_keys: int, max_size: int, subs: list[tuple[int, ...]]):
    """Per bucket of (record, unique subset) rows: the score table of its records."""
    top = min(max_size, n_keys)

    def fn(rows: pd.DataFrame) -> pd.DataFrame:
        rid_codes, _ = pd.factorize(rows[_ROW_ID].to_numpy(), sort=True)
        unique = np.zeros((int(rid_codes.max()) + 1 if len(rows) else 0, len(subs)), dtype=bool)
        unique[rid_codes, rows[_SID].to_numpy(dtype=np.int64)] = True
        score, by_size, contrib = _per_record(_msus(unique, subs), subs, n_keys, max_size)
        table = score_table(score, by_size.reshape(len(score), top), contrib, n_keys)
        return table

    return fn


def suda2_on_engine(
    engine: Engine,
    table: Table,
    view: TableView,
    max_size: int = DEFAULT_MAX_SIZE,
    dis_fraction: float = DIS_FRACTION,
) -> dict[str, Any]:
    """SUDA2 summary of a table on an engine (the driver holds per-score statistics only).

    1. one aggregate: the equivalence classes and their sizes (nulls as values); the
       class-size table gives the rows, the sample uniques ``U`` and pair records ``P``;
    2. one ``map_batches`` over the classes emits ``(subset, combination key, size)`` for
       every subset of at most ``max_size`` quasi-identifiers with no null, one aggregate
       sums the sizes per combination: the combinations held by one record;
    3. the classes of size 1 (sample uniques; only they can have an MSU) get a record id
       and emit ``(record, subset, combination key)``, joined to the single-record
       combinations: the subsets each unique record is unique on;
    4. one ``map_groups`` per bucket of records (``record % buckets``) finds each record's
       MSUs (unique subsets none of whose one-smaller subsets is unique), its score,
       MSUs by size and contribution weights, and sums them per score; one aggregate per
       score gives the score table, collected (integers: exact on every engine);
    5. :func:`summarize_suda` on the driver.

    Args:
        engine: the engine.
        table: the rows.
        view: its quasi-identifiers.
        max_size: the largest MSU searched.
        dis_fraction: sdcMicro's ``DisFraction``.

    Returns:
        The dict of :func:`summarize_suda`.
    """
    keys = list(view.quasi_identifiers)
    n_keys = len(keys)
    _check(n_keys, max_size, dis_fraction)
    subs = subsets(n_keys, max_size)
    top = min(max_size, n_keys)
    buckets = max(8, 4 * engine.parallelism)
    classes = engine.persist(engine.aggregate(table, keys, {_COUNT: ("count", keys[0])}))
    try:
        sizes = engine.collect_small(
            engine.aggregate(classes, [_COUNT], {"classes": ("count", _COUNT)}), MAX_SCORE_ROWS
        )
        per_size = dict(zip(sizes[_COUNT].astype(int), sizes["classes"].astype(int), strict=True))
        rows = sum(f * c for f, c in per_size.items())
        emitted = engine.map_batches(
            classes, _emit_all_fn(keys, subs), [(_SID, "long"), (_KEY, "string"), (_COUNT, "long")]
        )
        counts = engine.aggregate(emitted, [_SID, _KEY], {"_suda_cnt": ("sum", _COUNT)})
        single = engine.select(engine.where(counts, "_suda_cnt", "==", 1), [_SID, _KEY])
        uniques = engine.with_row_id(engine.where(classes, _COUNT, "==", 1), _ROW_ID)
        mine = engine.map_batches(
            uniques,
            _emit_unique_fn(keys, subs, buckets),
            [(_ROW_ID, "long"), (_BUCKET, "long"), (_SID, "long"), (_KEY, "string")],
        )
        hits = engine.select(engine.join(mine, single, [_SID, _KEY]), [_BUCKET, _ROW_ID, _SID])
        schema = [
            ("score", "long"),
            ("records", "long"),
            *[(f"msu_{k}", "long") for k in range(1, top + 1)],
            *[(f"wc_{j}", "long") for j in range(n_keys)],
        ]
        parts = engine.map_groups(
            hits, _BUCKET, _bucket_fn(n_keys, max_size, subs), schema, partitions=buckets
        )
        sums = {c: ("sum", c) for c, _ in schema if c != "score"}
        table_ = engine.collect_small(engine.aggregate(parts, ["score"], sums), MAX_SCORE_ROWS)
    finally:
        engine.unpersist(classes)
    return summarize_suda(
        table_.astype(np.int64),
        rows,
        per_size.get(1, 0),
        2 * per_size.get(2, 0),
        keys,
        max_size,
        dis_fraction,
    )
