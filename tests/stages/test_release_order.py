"""A release's row order and ids say nothing of the input's order.

Every family writes its tables through :func:`sparkanon.stages.publish.staged`, which puts
the rows in a keyed pseudorandom order of their values; a relational-transaction release
joins RT and TT on keyed per-release group ids and publishes no row id. The input here
carries ``serial``, a kept column (published unchanged) holding each row's input position,
so the tests can see where every input row went; an attacker has no such column (the
release checks would refuse it: the runs here let it through with
:func:`tests._inputs.traced_rows`, which checks everything else).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.engine.local import LocalEngine
from sparkanon.families import parse_config
from sparkanon.families.transaction.publish import published_group_ids
from sparkanon.per_block.cluster import CLASS_SHIFT
from sparkanon.pipeline import run_job
from sparkanon.randomness import RunKey
from sparkanon.randomness.streams import RELEASE_IDS, RELEASE_ORDER
from tests._adult import adult_config, adult_sample
from tests._inputs import ROOT, rt_config, rt_frame, traced_rows, write_csv

MONDRIAN = ROOT / "conf" / "adult_mondrian_k.yaml"
ROWS = 2000
SERIAL = "serial"
QIS = ["age", "education", "workclass", "marital-status", "race", "sex", "native-country"]
KEY_A = RunKey(bytes(range(32)), "user", "test-a")
KEY_B = RunKey(bytes(range(32, 64)), "user", "test-b")


def spearman(x: Any, y: Any) -> float:
    """Spearman's rank correlation (ties at their mean rank)."""
    ranks_x = pd.Series(np.asarray(x, dtype=float)).rank()
    return float(ranks_x.corr(pd.Series(np.asarray(y, dtype=float)).rank()))


def _serial_sample(tmp_path: Path) -> Path:
    """The first ``ROWS`` Adult rows with ``serial``, each row's position in the file."""
    frame = pd.read_csv(adult_sample(tmp_path, ROWS), dtype=str, keep_default_na=False)
    frame.insert(0, SERIAL, [str(i) for i in range(len(frame))])
    path = tmp_path / "adult_serial.csv"
    frame.to_csv(path, index=False)
    return path


def _mondrian(
    tmp_path: Path,
    data: Path,
    name: str,
    key: RunKey,
    engine: Any = None,
    conf: Path = MONDRIAN,
    **overrides: Any,
) -> pd.DataFrame:
    """A committed release of ``data`` (Mondrian by default), its part files in name order."""
    out = tmp_path / name
    cfg = adult_config(tmp_path, data, out, conf, **overrides)
    cfg["attributes"].append({"name": SERIAL, "kind": "keep"})
    with traced_rows(SERIAL):
        run_job(engine or LocalEngine(), parse_config(cfg), key=key)
    parts = sorted((out / "data").glob("*.parquet"))
    return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)


@pytest.fixture(scope="module")
def adult(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path]:
    """The input (as text) and its CSV."""
    path = _serial_sample(tmp_path_factory.mktemp("adult"))
    return pd.read_csv(path, dtype=str, keep_default_na=False), path


@pytest.fixture(scope="module")
def releases(
    adult: tuple[pd.DataFrame, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, pd.DataFrame]:
    """Mondrian k=10 strict under two keys, and k=12 relaxed, of the same input."""
    tmp = tmp_path_factory.mktemp("releases")
    _, data = adult
    relaxed = {"model": {"k": 12}, "algorithm": {"mode": "relaxed"}}
    return {
        "strict_a": _mondrian(tmp, data, "strict_a", KEY_A),
        "strict_a_again": _mondrian(tmp, data, "strict_a_again", KEY_A),
        "strict_b": _mondrian(tmp, data, "strict_b", KEY_B),
        "relaxed_a": _mondrian(tmp, data, "relaxed_a", KEY_A, **relaxed),
        "relaxed_b": _mondrian(tmp, data, "relaxed_b", KEY_B, **relaxed),
    }


def _assert_order_is_not_the_input(release: pd.DataFrame, source: pd.DataFrame) -> None:
    """Published position against input position: no rank correlation, chance matches only."""
    serials = release[SERIAL].astype(np.int64).to_numpy()
    assert len(release) > 0.9 * ROWS and len(np.unique(serials)) == len(release)
    rho = spearman(np.arange(len(serials)), serials)
    assert abs(rho) < 0.1, rho
    # The i-th published row against the i-th usable input row (the published ones, in order).
    usable = source.set_index(source[SERIAL].astype(np.int64)).loc[np.sort(serials)]
    same = int((release["occupation"].to_numpy() == usable["occupation"].to_numpy()).sum())
    counts = release["occupation"].value_counts().to_numpy(dtype=float)
    chance = float((counts**2).sum() / len(release))  # a random order's expected matches
    assert same <= chance + 4 * np.sqrt(chance), (same, chance)


def test_mondrian_release_order_follows_no_input_order(
    adult: tuple[pd.DataFrame, Path], releases: dict[str, pd.DataFrame]
) -> None:
    source, _ = adult
    for name in ("strict_a", "relaxed_b"):
        _assert_order_is_not_the_input(releases[name], source)


def test_mdav_release_order_follows_no_input_order(
    adult: tuple[pd.DataFrame, Path], tmp_path: Path
) -> None:
    source, data = adult
    release = _mondrian(tmp_path, data, "mdav", KEY_A, conf=ROOT / "conf" / "adult_mdav_k.yaml")
    _assert_order_is_not_the_input(release, source)


def test_order_is_the_keys(releases: dict[str, pd.DataFrame]) -> None:
    """One key: the same rows in the same order; another key: the same rows in another."""
    a, again, b = releases["strict_a"], releases["strict_a_again"], releases["strict_b"]
    pd.testing.assert_frame_equal(a, again)
    assert sorted(a[SERIAL]) == sorted(b[SERIAL])
    rho = spearman(a[SERIAL].astype(int), b[SERIAL].astype(int))
    assert abs(rho) < 0.1 and (a[SERIAL].to_numpy() == b[SERIAL].to_numpy()).sum() <= 5


def _linkage(first: pd.DataFrame, second: pd.DataFrame) -> tuple[int, int, int]:
    """The review's join of two releases by position: ``(same person, unique, certain)``.

    Row ``i`` of one is paired with row ``i`` of the other. ``unique``: pairs whose two
    published quasi-identifier tuples occur together once; ``certain``: pairs whose every
    such co-occurring pair shows one occupation (in both releases).
    """
    n = min(len(first), len(second))
    a, b = first.iloc[:n].reset_index(drop=True), second.iloc[:n].reset_index(drop=True)
    same = int((a[SERIAL].to_numpy() == b[SERIAL].to_numpy()).sum())
    pairs = pd.DataFrame(
        {
            "key": a[QIS].astype(str).agg("|".join, axis=1)
            + "#"
            + b[QIS].astype(str).agg("|".join, axis=1),
            "occ_a": a["occupation"].to_numpy(),
            "occ_b": b["occupation"].to_numpy(),
        }
    )
    sizes = pairs.groupby("key")["key"].transform("size")
    values = pd.concat(
        [
            pairs[["key", "occ_a"]].set_axis(["key", "occ"], axis=1),
            pairs[["key", "occ_b"]].set_axis(["key", "occ"], axis=1),
        ]
    )
    distinct = pairs["key"].map(values.groupby("key")["occ"].nunique())
    return same, int((sizes == 1).sum()), int((distinct == 1).sum())


@pytest.mark.parametrize("keys", ["two keys", "one user key"])
def test_linking_two_releases_by_position_is_a_random_join(
    releases: dict[str, pd.DataFrame], keys: str
) -> None:
    """Strict k=10 joined by position with relaxed k=12 (same input): no better than chance.

    The baseline joins the two releases after independent random permutations of each.
    """
    strict = releases["strict_a"]
    relaxed = releases["relaxed_b" if keys == "two keys" else "relaxed_a"]
    same, unique, certain = _linkage(strict, relaxed)
    rng = np.random.default_rng(2)
    baseline = np.array(
        [
            _linkage(
                strict.sample(frac=1, random_state=rng), relaxed.sample(frac=1, random_state=rng)
            )
            for _ in range(20)
        ]
    )
    assert same <= 5, same  # a random pairing matches about one person
    mean, sd = baseline.mean(axis=0), baseline.std(axis=0)
    assert unique <= mean[1] + 4 * sd[1] + 5, (unique, mean[1])
    assert certain <= mean[2] + 4 * sd[2] + 5, (certain, mean[2])


def test_positional_linkage_measure_sees_an_input_ordered_release(
    releases: dict[str, pd.DataFrame],
) -> None:
    """The measure above catches the old layout: both releases in input order link all."""
    strict = releases["strict_a"].sort_values(SERIAL, key=lambda s: s.astype(int))
    relaxed = releases["relaxed_b"].sort_values(SERIAL, key=lambda s: s.astype(int))
    same, _, certain = _linkage(strict, relaxed)
    assert same == len(strict) == len(relaxed)
    assert certain > 200


def test_rt_publishes_no_row_id_and_keyed_group_ids(tmp_path: Path) -> None:
    """RT has no ``record_id``; group ids are keyed, rows are in no input order."""
    frame = rt_frame(600, seed=31)
    cfg = rt_config(tmp_path, write_csv(tmp_path, frame))
    result = run_job(LocalEngine(), parse_config(cfg), commit=False, key=KEY_A)
    rt, tt = result.publication.tables["rt"], result.publication.tables["tt"]
    assert list(rt.columns) == ["age", "sex", "zip", "group_id"]
    ids = np.sort(rt["group_id"].unique())
    assert set(ids) == set(tt["group_id"])
    groups = len(ids)
    assert groups >= 10
    assert np.abs(ids).min() > 2**40  # spread over the 64-bit integers, not small numbers
    # The ids are the keyed permutation of the job's group numbers (``block << 20 |
    # group in block``; most groups are in the first blocks; the reconciled ones' blocks
    # come later), and not in their order.
    numbers = (np.arange(64)[:, None] << CLASS_SHIFT | np.arange(256)[None, :]).ravel()
    mapped = published_group_ids(KEY_A, numbers)
    found = mapped[np.isin(mapped, ids)]
    assert len(found) >= 0.9 * groups
    assert not (np.diff(found) > 0).all()
    assert set(ids).isdisjoint(published_group_ids(KEY_B, numbers))
    # RT rows found in the input by their (unique) quasi-identifiers: published position
    # and input position are unrelated, and so are a group's id and its first member.
    key_columns = ["age", "sex", "zip"]
    source = frame[key_columns].astype({"age": float, "zip": float}).assign(pos=np.arange(600))
    unique = source.drop_duplicates(key_columns, keep=False)
    located = rt.reset_index(names="published").merge(unique, on=key_columns)
    assert len(located) > 300
    assert abs(spearman(located["published"], located["pos"])) < 0.15
    first = located.groupby("group_id")["pos"].min()
    assert abs(spearman(first.index, first.to_numpy())) < 0.5


def test_permute_is_a_keyed_bijection() -> None:
    values = np.concatenate([np.arange(-1000, 50_000), [2**62, -(2**63), 2**63 - 1]])
    first = KEY_A.permute(RELEASE_IDS, values)
    assert first.dtype == np.int64 and len(np.unique(first)) == len(values)
    assert np.array_equal(first, KEY_A.permute(RELEASE_IDS, values))
    assert not np.array_equal(first, KEY_B.permute(RELEASE_IDS, values))
    assert not np.array_equal(first, KEY_A.permute(RELEASE_ORDER, values))
    assert abs(spearman(values, first)) < 0.02
    assert (np.diff(first) > 0).mean() == pytest.approx(0.5, abs=0.02)


@pytest.mark.spark
def test_spark_release_order_and_part_files_follow_no_input_order(
    spark: Any, adult: tuple[pd.DataFrame, Path], tmp_path: Path
) -> None:
    """On Spark: the part files in name order, and each part, are in no input order."""
    from sparkanon.engine.spark import SparkEngine

    source, data = adult
    engine = SparkEngine(spark)
    release = _mondrian(tmp_path, data, "spark", KEY_A, engine=engine)
    _assert_order_is_not_the_input(release, source)
    parts = sorted((tmp_path / "spark" / "data").glob("*.parquet"))
    assert len(parts) > 1
    for part in parts:
        serials = pd.read_parquet(part)[SERIAL].astype(int).to_numpy()
        if len(serials) >= 50:
            assert abs(spearman(np.arange(len(serials)), serials)) < 0.3
    # Part membership is keyed too: each part's rows span the whole input.
    means = [pd.read_parquet(p)[SERIAL].astype(int).mean() for p in parts]
    assert all(0.3 * ROWS < m < 0.7 * ROWS for m in means), means
    again = _mondrian(tmp_path, data, "spark_again", KEY_A, engine=engine)
    pd.testing.assert_frame_equal(release, again)


def test_local_keyed_order_is_the_sort_by_draws() -> None:
    """The local engine: a sort by the draws of the rows' hashes, whatever the input order."""
    frame = pd.DataFrame({"x": np.arange(300), "y": [f"v{i % 7}" for i in range(300)]})
    draw = partial(KEY_A.words, RELEASE_ORDER)
    engine = LocalEngine()
    ordered = engine.keyed_order(frame, draw)
    shuffled = engine.keyed_order(frame.sample(frac=1, random_state=3), draw)
    pd.testing.assert_frame_equal(ordered, shuffled)
    assert sorted(ordered["x"]) == list(range(300))
    assert abs(spearman(np.arange(300), ordered["x"])) < 0.2


@pytest.mark.spark
def test_spark_ordered_rows_join_the_kept_columns_without_a_shuffle_of_their_own(
    spark: Any,
) -> None:
    """Rows worded by id: one shuffle per side (by the word); the join and sort add none.

    The side table's words are drawn by one Python call per row, not a second one for a
    filter the optimizer infers on the join key.

    The kept values reach their own rows, every row once, and each partition is in word
    order, with a sort-merge join as at scale (broadcasts off here).
    """
    from sparkanon.attributes.schema import RID
    from sparkanon.engine.spark import SparkEngine
    from sparkanon.publications.kept import KeptColumns
    from sparkanon.stages.publish import ORDER, order_words, ordered_rows

    engine = SparkEngine(spark)
    ids = np.arange(500, dtype=np.int64)
    rows = engine.from_pandas(
        pd.DataFrame({RID: ids, ORDER: order_words(KEY_A, 5, ids), "x": ids * 2}),
        [(RID, "long"), (ORDER, "long"), ("x", "long")],
    )
    side = engine.from_pandas(
        pd.DataFrame({RID: ids[::-1], "k": [f"k{i}" for i in ids[::-1]]}),
        [(RID, "long"), ("k", "string")],
    )
    kept = KeptColumns((("k", "string"),), side)
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        out = ordered_rows(engine, rows, kept, ["x"], KEY_A, 5)
        plan = out._jdf.queryExecution().executedPlan().toString()  # noqa: SLF001
        got = out.toPandas()
        partitions = out.rdd.glom().map(len).collect()
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)
    assert "SortMergeJoin" in plan
    assert plan.count("Exchange") == 2, plan
    assert plan.count(f"Exchange hashpartitioning({ORDER}") == 2, plan
    assert plan.count("ArrowEvalPython") == 1, plan  # the side's words drawn once
    assert list(got.columns) == ["x", "k"]
    assert sorted(got["x"]) == list(ids * 2)
    assert (got["k"] == "k" + (got["x"] // 2).astype(str)).all()
    words = order_words(KEY_A, 5, got["x"].to_numpy() // 2)
    start = 0
    for size in partitions:
        assert (np.diff(words[start : start + size]) > 0).all()
        start += size
    assert len([s for s in partitions if s]) > 1
