"""Stage ``are`` of a relational-transaction job: ARE of random count queries, by aggregations.

The average relative error of Gong, Yang and Luo 2016 (section 4.2, eqs 4-6) over the
verified release, with the pure functions of :mod:`sparkanon.metrics.are` run inside
engine primitives. The driver holds per-column, per-query and per-bucket statistics only:

1. **domains**: the distinct values of every quasi-identifier in the input, in their
   published type (:func:`sparkanon.families.transaction.publish.published_values`: what RT shows),
   computed on the distinct rows of the quasi-identifiers (one native ``aggregate``,
   then one ``map_batches`` and ``aggregate`` over those rows);
2. **candidate sets**: the distinct sets of the input, or a seeded sample of
   ``candidate_sets`` of them (:func:`candidate_sets`): every distinct set gets a key,
   a keyed hash of its bytes and the seed, and the sample is the sets of the smallest
   keys, found by one ``map_batches`` pass that hashes the sets and keeps those below a
   key threshold (set from the number of distinct sets the job counted before
   planning), and one small collect. A uniform sample without replacement, the same
   on every engine;
3. **queries and act**: :func:`sparkanon.metrics.are.draw_queries` on the driver;
   ``act`` of a pool of queries is one ``map_batches`` pass over the input records
   (:func:`sparkanon.metrics.are.actual_counts` per batch, ``qt`` numbers out) and a
   sum per query; :func:`sparkanon.metrics.are.draw_answerable` keeps the first
   ``qt`` queries with ``act > 0``;
4. **est**: pred2 is scored once per distinct published set (a TBucket: one
   ``aggregate``, then :func:`sparkanon.metrics.are.contained_hits` in a
   ``map_batches``, the queries' answers packed 8 a byte); the placed records are
   bucketed by group (``group % buckets``, a native column expression), the scores
   joined to the (bucket, set) pairs present (a small table, no join of the records)
   and one ``cogroup`` per bucket meets its records (shuffled once) with its sets'
   scores and computes the RT partial (records matching every pred1) and
   the TT partial (records whose published set matches pred2) of each of its groups,
   combines them per group (``rt * tt / |G|``) and sums over its groups: one ``qt``
   vector per bucket, never a groups x queries matrix. A placed record is one RT row
   and one count of its group's TT entry (``publish`` derives both tables from these
   records), so this is the estimate on the published tables;
5. the driver sums the buckets' vectors with :func:`math.fsum` (exact, so the order the
   engine returns them in does not matter) and computes ARE.

Deterministic: the queries depend on the domains and candidates (put in canonical
order) and the seed; every sum of a bucket runs over its records sorted by record id.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.attributes.dates import TemporalFormat
from sparkanon.attributes.itemsets import ItemSets, ItemTree
from sparkanon.attributes.schema import CLASS, RID
from sparkanon.config import AreConfig
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.engine.expr import Arith, Col, Expr, Lit
from sparkanon.errors import InternalError
from sparkanon.families.transaction.cluster import GSET, group_partitions
from sparkanon.families.transaction.publish import published_values
from sparkanon.metrics import are as qm
from sparkanon.stages._common import MAX_STAT_ROWS, StageTimer, log, one_row
from sparkanon.stages.items import ITEMS, decode_sets

ARE_STAGE = "are"
"""The stage's name (log lines, ``metrics.json`` ``seconds``, Spark UI)."""
READING = "certain"
"""How a generalized item answers for an item it covers (:mod:`sparkanon.metrics.are`)."""
KEY = "_are_key"
SCORE = "_are_score"
BUCKET = "_are_bucket"
QUERY = "query"
VALUE = "value"
_SAMPLE_MARGIN = 8.0  # standard deviations of the threshold filter's count above the cap


@dataclass(frozen=True)
class AreSetup:
    """What the stage needs beyond the tables.

    Attributes:
        qi: the relational quasi-identifiers with their published types.
        tree: the item taxonomy.
        config: the ``metrics.are`` section.
        seed: the seed of the queries and the sample (the section's, else the job's).
        records: the usable input records (sets the number of buckets).
        readers: how each date and timestamp quasi-identifier's values are read.
        distinct_sets: how many distinct sets the records hold, when already counted
            (``None``: the stage counts them).
    """

    qi: tuple[tuple[str, str], ...]
    tree: ItemTree
    config: AreConfig
    seed: int
    records: int
    readers: Mapping[str, TemporalFormat] = field(default_factory=dict)
    distinct_sets: int | None = None


def set_key(blob: bytes, seed: int) -> int:
    """A set's sample key: a 63-bit keyed hash of its packed bytes and the seed.

    Args:
        blob: the set, packed (:func:`sparkanon.stages.items.pack_sets`).
        seed: the random seed.

    Returns:
        A non-negative ``long``.
    """
    key = seed.to_bytes(8, "little", signed=True)
    digest = hashlib.blake2b(blob, digest_size=8, key=key).digest()
    return int.from_bytes(digest, "little") >> 1


def make_key_fn(seed: int, threshold: int) -> BatchFn:
    """Records -> their distinct sets whose sample key (:func:`set_key`) is below ``threshold``.

    The filter runs inside the batch function, so only the sample's candidates leave
    Python (not every record's set); each distinct set of a batch is hashed once.
    """

    def keyed(batch: pd.DataFrame) -> pd.DataFrame:
        blobs = dict.fromkeys(
            b"" if v is None else bytes(v) for v in batch[ITEMS].to_numpy(dtype=object)
        )
        kept = [(b, key) for b in blobs if (key := set_key(b, seed)) < threshold]
        return pd.DataFrame(
            {
                ITEMS: pd.Series([b for b, _ in kept], dtype=object),
                KEY: np.fromiter((key for _, key in kept), dtype=np.int64, count=len(kept)),
            }
        )

    return keyed


def sample_threshold(cap: int, distinct: int) -> int:
    """A key threshold that keeps at least ``cap`` of ``distinct`` uniform keys, almost surely.

    The count below ``t`` is binomial ``(distinct, t / 2^63)``; the threshold is set
    :data:`_SAMPLE_MARGIN` standard deviations above ``cap`` (the caller widens it if
    ever too few pass). A threshold of ``2^63`` keeps every key.
    """
    want = cap + _SAMPLE_MARGIN * math.sqrt(cap) + 16
    return min(2**63, int(2**63 * min(1.0, want / max(distinct, 1))))


def candidate_sets(
    engine: Engine, records: Table, cap: int, seed: int, distinct: int | None = None
) -> tuple[list[tuple[int, ...]], int]:
    """The distinct sets of the input, or the ``cap`` of them with the smallest keys.

    The key is a function of the set, so the sets whose key is below a threshold are
    found by filtering the records first (inside the one pass that hashes them) and
    only the survivors are made distinct: the input's sets are never shuffled whole.

    Args:
        engine: the engine.
        records: the input records (column :data:`ITEMS`).
        cap: the most sets to return.
        seed: the seed of the keys.
        distinct: how many distinct sets the records hold, when the caller has counted
            them (the job has, before planning); ``None``: counted here (``nunique``).

    Returns:
        The sets (leaf ids, in key order) and how many distinct sets the input holds.
    """
    sets = engine.select(records, [ITEMS])
    if distinct is None:
        distinct = int(one_row(engine, sets, {"n": ("nunique", ITEMS)})["n"])
    threshold = sample_threshold(cap, distinct)
    while True:
        kept = engine.map_batches(
            sets, make_key_fn(seed, threshold), [(ITEMS, "binary"), (KEY, "long")]
        )
        small = engine.collect_small(
            engine.aggregate(kept, [ITEMS], {KEY: ("min", KEY)}), MAX_STAT_ROWS
        )
        if len(small) >= min(cap, distinct) or threshold >= 2**63:
            break
        threshold = min(2**63, threshold * 2)
    small = small.assign(_blob=[bytes(v) for v in small[ITEMS]])
    small = small.sort_values([KEY, "_blob"], kind="stable").head(cap)
    return decode_sets(small[ITEMS]).keys(), distinct


def qi_frame(
    batch: pd.DataFrame,
    qi: Sequence[tuple[str, str]],
    readers: Mapping[str, TemporalFormat] | None = None,
) -> pd.DataFrame:
    """The quasi-identifiers of a batch of records in their published types.

    ``readers``: how each date and timestamp column's values are read (as RT reads them).
    """
    readers = readers or {}
    return pd.DataFrame(
        {c: published_values(batch[c], dtype, readers.get(c)) for c, dtype in qi},
        index=range(len(batch)),
    )


def make_domain_fn(
    qi: Sequence[tuple[str, str]], readers: Mapping[str, TemporalFormat] | None = None
) -> BatchFn:
    """Records -> each quasi-identifier's distinct published values in the batch, as text.

    One row per (column index, value): a ``double`` as its ``repr`` (which reads back as
    the same float), any other value as its text; ``null`` 1 for a missing value.
    """

    def domain(batch: pd.DataFrame) -> pd.DataFrame:
        parts = []
        for j, (values, _) in enumerate(zip(qi_frame(batch, qi, readers).items(), qi, strict=True)):
            uniq = pd.unique(values[1])
            missing = pd.isna(uniq)
            parts.append(
                pd.DataFrame(
                    {
                        "column": np.full(len(uniq), j, dtype=np.int64),
                        "text": [
                            None if m else repr(float(v)) if isinstance(v, float) else str(v)
                            for v, m in zip(uniq, missing, strict=True)
                        ],
                        "null": missing.astype(np.int64),
                    }
                )
            )
        return pd.concat(parts, ignore_index=True)

    return domain


def qi_domains(
    engine: Engine,
    records: Table,
    qi: Sequence[tuple[str, str]],
    readers: Mapping[str, TemporalFormat] | None = None,
) -> dict[str, list[Any]]:
    """Every quasi-identifier's distinct values, in its published type.

    The published type is a function of each value alone, so the batch function runs
    on the distinct rows of the quasi-identifiers (a native aggregate first, a few
    rows per combination of values instead of one per record), unless a column holds
    floating-point numbers: Spark's grouping merges ``-0.0`` with ``0.0`` (and NaNs),
    whose published texts differ, so those columns are read record by record.
    """
    names = [c for c, _ in qi]
    rows = engine.select(records, names)
    types = dict(engine.schema_of(records))
    if names and not any(types.get(c) in ("float", "double") for c in names):
        rows = engine.select(engine.aggregate(rows, names, {"_n": ("count", names[0])}), names)
    rows = engine.map_batches(
        rows,
        make_domain_fn(qi, readers),
        [("column", "long"), ("text", "string"), ("null", "long")],
    )
    values = engine.collect_small(
        engine.aggregate(rows, ["column", "text", "null"], {"n": ("count", "column")}),
        MAX_STAT_ROWS,
    )
    out: dict[str, list[Any]] = {c: [] for c, _ in qi}
    for j, text, null in zip(values["column"], values["text"], values["null"], strict=True):
        name, dtype = qi[int(j)]
        if int(null):
            out[name].append(np.nan if dtype == "double" else None)
        else:
            out[name].append(domain_value(str(text), dtype))
    return out


def distinct_packed(column: pd.Series) -> tuple[ItemSets, np.ndarray]:
    """The distinct sets of a packed column and, per row, the index of its set among them."""
    blobs = pd.Series([b"" if v is None else bytes(v) for v in column], dtype=object)
    inverse, uniques = pd.factorize(blobs)
    return decode_sets(pd.Series(uniques, dtype=object)), inverse.astype(np.int64)


def domain_value(text: str, dtype: str) -> Any:
    """A domain value collected as text, back in its published type."""
    if dtype == "double":
        return float(text)
    if dtype == "date":
        return _dt.date.fromisoformat(text)
    if dtype == "timestamp":
        return pd.Timestamp(text)
    return text


def make_act_fn(
    compiled: qm.CompiledQueries,
    qi: Sequence[tuple[str, str]],
    readers: Mapping[str, TemporalFormat] | None = None,
) -> BatchFn:
    """A batch of input records -> per query, its records the query selects (``qt`` rows)."""

    def act(batch: pd.DataFrame) -> pd.DataFrame:
        distinct, inverse = distinct_packed(batch[ITEMS])
        counts = qm.actual_counts_of_distinct(
            qi_frame(batch, qi, readers), distinct, inverse, compiled
        )
        hit = np.flatnonzero(counts)
        return pd.DataFrame({QUERY: hit.astype(np.int64), VALUE: counts[hit].astype(np.int64)})

    return act


def actual_answers(
    engine: Engine,
    records: Table,
    queries: Sequence[qm.CountQuery],
    qi: Sequence[tuple[str, str]],
    readers: Mapping[str, TemporalFormat] | None = None,
) -> np.ndarray:
    """``act`` of every query: one pass over the input records, summed per query."""
    compiled = qm.compile_queries(queries)
    cols = [c for c, _ in qi]
    parts = engine.map_batches(
        engine.select(records, [*cols, ITEMS]),
        make_act_fn(compiled, qi, readers),
        [(QUERY, "long"), (VALUE, "long")],
    )
    sums = engine.collect_small(
        engine.aggregate(parts, [QUERY], {VALUE: ("sum", VALUE)}), len(queries)
    )
    out = np.zeros(len(queries), dtype=np.int64)
    out[sums[QUERY].to_numpy(dtype=np.int64)] = sums[VALUE].to_numpy(dtype=np.int64)
    return out


def make_score_fn(compiled: qm.CompiledQueries, tree: ItemTree) -> BatchFn:
    """Distinct published sets -> each one's pred2 of every query, packed 8 a byte.

    Reading ``certain``: a set satisfies a query when the leaves its nodes cover include
    every item of one of the query's combinations (:func:`qm.contained_hits`).
    """

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        distinct, inverse = distinct_packed(batch[GSET])
        qm.check_antichains(distinct, tree)
        packed = np.packbits(qm.contained_hits(distinct, compiled, tree), axis=1, bitorder="little")
        blobs = [packed[i].tobytes() for i in inverse.tolist()]
        return pd.DataFrame({GSET: batch[GSET].to_numpy(dtype=object), SCORE: blobs})

    return score


def unpack_scores(column: pd.Series, qt: int) -> np.ndarray:
    """``(rows, qt)`` booleans from a column of packed scores (:func:`make_score_fn`)."""
    width = (qt + 7) // 8
    raw = np.frombuffer(b"".join(bytes(v) for v in column), dtype=np.uint8)
    return np.unpackbits(raw.reshape(len(column), width), axis=1, count=qt, bitorder="little")


def set_scores_of(records: pd.DataFrame, scores: pd.DataFrame, qt: int) -> np.ndarray:
    """Each record's published set's pred2 (``(rows, qt)`` booleans), looked up by set.

    Args:
        records: rows with :data:`GSET`.
        scores: one row per distinct set of ``records`` at least (:data:`GSET` and its
            packed :data:`SCORE`).
        qt: the number of queries.

    Raises:
        InternalError: a record's set has no score.
    """
    index = pd.Index([bytes(v) for v in scores[GSET]], dtype=object)
    found = index.get_indexer([b"" if v is None else bytes(v) for v in records[GSET]])
    if len(found) and int(found.min()) < 0:
        raise InternalError("are: a published set of a bucket was not scored")
    return unpack_scores(scores[SCORE], qt).astype(bool)[found]


def bucket_estimate(
    batch: pd.DataFrame,
    scores: pd.DataFrame,
    compiled: qm.CompiledQueries,
    qi: Sequence[tuple[str, str]],
    readers: Mapping[str, TemporalFormat] | None = None,
) -> np.ndarray:
    """The Anatomy estimate of every query over the whole groups of one bucket.

    Args:
        batch: every placed record of some groups (columns :data:`RID`, the
            quasi-identifiers, :data:`CLASS` and :data:`GSET`, its published set).
        scores: the pred2 of the bucket's distinct published sets (:func:`set_scores_of`).
        compiled: the queries.
        qi: the quasi-identifiers with their published types.
        readers: how each date and timestamp quasi-identifier's values are read.

    Returns:
        ``sum over the groups G of rt[G, q] * tt[G, q] / |G|`` per query.
    """
    batch = batch.sort_values([CLASS, RID], kind="stable").reset_index(drop=True)
    groups = batch[CLASS].to_numpy(dtype=np.int64)
    rt_hits = qm.qi_match(qi_frame(batch, qi, readers), compiled)
    tt_hits = set_scores_of(batch, scores, compiled.n_queries)
    return qm.sorted_group_estimate(groups, rt_hits, tt_hits)


def make_est_fn(
    compiled: qm.CompiledQueries,
    qi: Sequence[tuple[str, str]],
    readers: Mapping[str, TemporalFormat] | None = None,
) -> Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]:
    """A bucket's records and its sets' scores -> its non-zero estimates, one row per query."""

    def est(batch: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
        values = bucket_estimate(batch, scores, compiled, qi, readers)
        hit = np.flatnonzero(values)
        bucket = int(scores[BUCKET].iloc[0]) if len(scores) else 0
        return pd.DataFrame(
            {
                BUCKET: np.full(len(hit), bucket, dtype=np.int64),
                QUERY: hit.astype(np.int64),
                VALUE: values[hit].astype(np.float64),
            }
        )

    return est


def bucket_of(buckets: int) -> Expr:
    """A placed record's bucket, ``group % buckets``, as a native (exact) expression."""
    return Arith("%", Col(CLASS), Lit(buckets))


def estimated_answers(
    engine: Engine,
    placed: Table,
    queries: Sequence[qm.CountQuery],
    setup: AreSetup,
) -> tuple[np.ndarray, int]:
    """``est`` of every query on the release: per-bucket vectors, summed exactly.

    pred2 is scored once per distinct published set (a TBucket), on the executors; the
    scores go to the buckets that hold the set (a small table: at most one row per
    bucket and TBucket), and one cogroup per bucket meets them with its records, which
    are shuffled once (no join of the records on their sets).

    Returns:
        The estimates and the number of buckets.
    """
    compiled = qm.compile_queries(queries)
    cols = [c for c, _ in setup.qi]
    buckets = group_partitions(setup.records)
    bucketed = engine.with_columns(
        engine.select(placed, [RID, *cols, CLASS, GSET]), {BUCKET: bucket_of(buckets)}
    )
    present = engine.aggregate(bucketed, [BUCKET, GSET], {"n": ("count", GSET)})
    # The TBuckets from the small (bucket, set) table: the records are read once here.
    tbuckets = engine.aggregate(engine.select(present, [GSET]), [GSET], {"n": ("count", GSET)})
    scored = engine.map_batches(
        engine.select(tbuckets, [GSET]),
        make_score_fn(compiled, setup.tree),
        [(GSET, "binary"), (SCORE, "binary")],
    )
    # The scores on the left: with the pairs on the left Spark finds the set column of
    # the joined table ambiguous (both sides descend from the placed records).
    bucket_scores = engine.select(
        engine.join(scored, engine.select(present, [BUCKET, GSET]), [GSET]),
        [BUCKET, GSET, SCORE],
    )
    parts = engine.cogroup(
        bucketed,
        BUCKET,
        bucket_scores,
        BUCKET,
        make_est_fn(compiled, setup.qi, setup.readers),
        [(BUCKET, "long"), (QUERY, "long"), (VALUE, "double")],
        partitions=buckets,
    )
    rows = engine.collect_small(parts, buckets * len(queries))
    out = np.zeros(len(queries))
    for q, values in rows.groupby(QUERY)[VALUE]:
        out[int(q)] = math.fsum(values.tolist())
    return out, buckets


def measure_are(
    engine: Engine, records: Table, placed: Table, setup: AreSetup, timer: StageTimer
) -> dict[str, Any]:
    """ARE of the release, in its own timed stage (:data:`ARE_STAGE`).

    Args:
        engine: the engine.
        records: the usable input records (the original table ``T``: quasi-identifiers
            and :data:`ITEMS`), placed or suppressed.
        placed: the published records (group :data:`CLASS` and published set :data:`GSET`).
        setup: parameters.
        timer: the stage timer.

    Returns:
        The ``metrics.json`` section ``are``.
    """
    cfg = setup.config
    with timer.stage(ARE_STAGE):
        clock = time.perf_counter()
        domains = qi_domains(engine, records, setup.qi, setup.readers)
        candidates, n_distinct = candidate_sets(
            engine, records, cfg.candidate_sets, setup.seed, setup.distinct_sets
        )
        qd = min(cfg.qd, len(setup.qi))
        setup_s = time.perf_counter() - clock

        def draw(n: int) -> list[qm.CountQuery]:
            return qm.draw_queries(domains, candidates, qd, cfg.selectivity, n, setup.seed)

        def count(queries: Sequence[qm.CountQuery]) -> np.ndarray:
            return actual_answers(engine, records, queries, setup.qi, setup.readers)

        try:
            queries, act, drawn = qm.draw_answerable(draw, count, cfg.queries)
        except ValueError:  # no query of the largest pool selects a record
            queries, drawn = [], 64 * cfg.queries
        act_s = time.perf_counter() - clock - setup_s
        percent: float | None = None
        if queries:
            est, _ = estimated_answers(engine, placed, queries, setup)
            percent = qm.are(act, est)
        est_s = time.perf_counter() - clock - setup_s - act_s
        timer.note(
            queries=len(queries),
            drawn=drawn,
            candidates=len(candidates),
            setup_seconds=round(setup_s, 1),
            act_seconds=round(act_s, 1),
            est_seconds=round(est_s, 1),
        )
    if percent is None:
        log.warning("are: none of %d queries drawn selects an input record: no ARE", drawn)
    else:
        log.info("are: %.4f %% over %d queries (seed %d)", percent, len(queries), setup.seed)
    return {
        "percent": percent,
        "queries": len(queries),
        "queries_drawn": drawn,
        "qd": qd,
        "selectivity": cfg.selectivity,
        "seed": setup.seed,
        "candidate_sets": len(candidates),
        "distinct_sets": n_distinct,
        "reading": READING,
    }
