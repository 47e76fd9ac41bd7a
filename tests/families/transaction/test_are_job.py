"""ARE in the relational-transaction job (stage ``are``, config ``metrics.are``).

The job's value is checked against numbers computed here without the engine: a release
whose estimate is exact (ARE 0, by hand), and a reference that runs the pure functions of
:mod:`sparkanon.metrics.are` on the whole input and on the published RT and TT tables
(pandas, one process). Spark's value is checked against the local engine's in
``tests/families/transaction/test_rt_job.py::test_spark_matches_local_engine``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.engine.local import LocalEngine
from sparkanon.errors import ConfigError
from sparkanon.families import parse_config
from sparkanon.families.transaction.are import candidate_sets
from sparkanon.metrics import are as qm
from sparkanon.pipeline import run_job
from sparkanon.stages.items import ITEMS, pack_item_sets
from tests._inputs import rt_config, rt_frame, write_csv

QT = 60


def run_local(cfg: dict[str, Any]) -> Any:
    return run_job(LocalEngine(), parse_config(cfg), commit=False)


def leaf_lists(column: pd.Series, tree: Any) -> list[list[int]]:
    code = tree.leaf_codes()
    return [[code[v] for v in s.split("|") if v] for s in column.fillna("")]


def test_are_is_zero_when_every_group_answers_exactly(tmp_path: Path) -> None:
    """One value per quasi-identifier and sets that need no generalization: est = act.

    Every query's pred1 then holds for all records or none, so ``rt[G, q]`` is ``|G|``
    or 0 and ``est = sum_G tt[G, q]``: the records whose published set satisfies pred2,
    which are their own sets (each occurs 8 >= k times): exactly ``act``.
    """
    sets = ["a1|b2", "c1", "d3|e1|f2", "", "g4|h1"] * 8
    frame = pd.DataFrame(
        {"id": range(len(sets)), "age": 30, "sex": "M", "zip": 10001, "disease": sets}
    )
    result = run_local(rt_config(tmp_path, write_csv(tmp_path, frame)))
    tt = result.publication.tables["tt"]
    assert sorted(tt.loc[tt["count"] > 0, "disease"].repeat(tt["count"])) == sorted(sets)
    are = result.metrics["are"]
    assert are["percent"] == 0.0
    assert are["queries"] == 1000 and are["candidate_sets"] == are["distinct_sets"] == 5


def reference_are(
    frame: pd.DataFrame, result: Any, taxonomy: str, qd: int, s: float, seed: int
) -> float:
    """ARE from the input frame and the published tables, with the pure functions only."""
    from sparkanon.attributes.hierarchy import load_arx_hierarchy
    from sparkanon.attributes.itemsets import ItemSets, ItemTree

    tree = ItemTree.of(load_arx_hierarchy(taxonomy, "disease"))
    sets = ItemSets.from_lists(leaf_lists(frame["disease"], tree))
    qi = pd.DataFrame(
        {
            "age": frame["age"].astype(float),
            "sex": frame["sex"].astype(str),
            "zip": frame["zip"].astype(float),
        }
    )
    domains = {c: qi[c].unique().tolist() for c in qi.columns}
    distinct = sorted(set(sets.keys()))
    queries, act, _ = qm.draw_answerable(
        lambda n: qm.draw_queries(domains, distinct, qd, s, n, seed),
        lambda qs: qm.actual_counts(qi, sets, qs),
        QT,
        first_pool=QT,
    )
    rt = result.publication.tables["rt"]
    tt = result.publication.tables["tt"]
    node = {label: i for i, label in enumerate(tree.labels)}
    tt = tt.assign(disease=[[node[v] for v in t.split("|") if v] for t in tt["disease"]])
    est = qm.estimated_counts(rt, tt, tree, queries, set_column="disease")
    return qm.are(act, est)


@pytest.mark.parametrize("algorithm", ["paa", "apa"])
def test_are_matches_a_reference_on_the_published_tables(tmp_path: Path, algorithm: str) -> None:
    frame = rt_frame(500, seed=21)
    cfg = rt_config(tmp_path, write_csv(tmp_path, frame), algorithm={"name": algorithm})
    cfg["metrics"] = {"are": {"queries": QT, "qd": 2, "selectivity": 0.1, "seed": 7}}
    result = run_local(cfg)
    are = result.metrics["are"]
    assert are["queries"] == QT and are["qd"] == 2 and are["seed"] == 7
    assert are["candidate_sets"] == are["distinct_sets"]
    expected = reference_are(frame, result, cfg["sensitive"]["taxonomy"], 2, 0.1, 7)
    assert expected > 0
    assert are["percent"] == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_are_section_defaults_qd_cap_seed_and_switch(tmp_path: Path) -> None:
    data = write_csv(tmp_path, rt_frame(300, seed=3))
    cfg = rt_config(tmp_path, data, seed=5)
    assert parse_config(cfg).metrics.are.model_dump() == {
        "enabled": True,
        "queries": 1000,
        "qd": 5,
        "selectivity": 0.02,
        "seed": None,
        "candidate_sets": 1000,
    }
    cfg["metrics"] = {"are": {"queries": 20}}
    are = run_local(cfg).metrics["are"]
    assert are["qd"] == 3  # capped at the job's three quasi-identifiers
    assert are["seed"] == 5  # the job's seed when the section names none
    assert are["selectivity"] == 0.02 and are["reading"] == "certain"
    cfg["metrics"] = {"are": {"enabled": False}}
    result = run_local(cfg)
    assert "are" not in result.metrics and "are" not in result.metrics["seconds"]


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"selectivity": 2}, r"metrics\.are\.selectivity: .*0\.02"),
        ({"selectivity": 0}, r"metrics\.are\.selectivity: the selectivity is a fraction"),
        ({"queries": 0}, r"metrics\.are\.queries"),
        ({"qd": 0}, r"metrics\.are\.qd"),
        ({"candidate_sets": 0}, r"metrics\.are\.candidate_sets"),
        ({"sample": 5}, r"metrics\.are\.sample: unknown key"),
    ],
)
def test_are_section_is_validated_at_load(tmp_path: Path, section: dict, message: str) -> None:
    cfg = rt_config(tmp_path, tmp_path / "rt.csv")
    cfg["metrics"] = {"are": section}
    with pytest.raises(ConfigError, match=message):
        parse_config(cfg)


def sample_key(blob: bytes, seed: int) -> int:
    """The sample key, spelt out here: blake2b keyed by the seed, top bit cleared."""
    digest = hashlib.blake2b(blob, digest_size=8, key=seed.to_bytes(8, "little", signed=True))
    return int.from_bytes(digest.digest(), "little") >> 1


def test_candidate_sets_are_the_capped_sample_of_smallest_keys() -> None:
    from sparkanon.attributes.itemsets import ItemSets

    rng = np.random.default_rng(4)
    lists = [sorted(rng.choice(40, size=rng.integers(0, 5), replace=False)) for _ in range(900)]
    sets = ItemSets.from_lists(lists)
    records = pd.DataFrame({ITEMS: pd.Series(list(pack_item_sets(sets)), dtype=object)})
    distinct = sorted(set(sets.keys()))
    engine = LocalEngine()
    everything, n = candidate_sets(engine, records, 10_000, seed=1)
    assert n == len(distinct) and sorted(everything) == distinct
    for seed in (1, 2):
        sample, n = candidate_sets(engine, records, 50, seed=seed)
        packed = {k: bytes(pack_item_sets(ItemSets.from_lists([k]))[0]) for k in distinct}
        expected = sorted(distinct, key=lambda k: sample_key(packed[k], seed))[:50]
        assert sample == expected and n == len(distinct)
    assert candidate_sets(engine, records, 50, 1)[0] != candidate_sets(engine, records, 50, 2)[0]


def test_candidate_sets_given_the_distinct_count_match_the_counted_ones() -> None:
    """The job passes the distinct sets it counted: same sample, one hashing pass only."""
    from sparkanon.attributes.itemsets import ItemSets
    from sparkanon.families.transaction.are import KEY, make_key_fn

    rng = np.random.default_rng(5)
    lists = [sorted(rng.choice(30, size=rng.integers(0, 4), replace=False)) for _ in range(600)]
    records = pd.DataFrame({ITEMS: pd.Series(list(pack_item_sets(ItemSets.from_lists(lists))))})
    n = len(set(map(tuple, lists)))
    engine = LocalEngine(batch_rows=50)
    assert candidate_sets(engine, records, 40, 3, distinct=n) == candidate_sets(
        engine, records, 40, 3
    )
    assert candidate_sets(engine, records, 40, 3)[1] == n
    # The batch function keeps each distinct set of its batch below the threshold once.
    blobs = [bytes(b) for b in records[ITEMS]]
    threshold = sorted(sample_key(b, 3) for b in set(blobs))[20]
    kept = make_key_fn(3, threshold)(records)
    assert sorted(kept[KEY]) == sorted(
        k for k in {sample_key(b, 3) for b in blobs} if k < threshold
    )
    assert all(sample_key(bytes(b), 3) == k for b, k in zip(kept[ITEMS], kept[KEY], strict=True))


def test_domains_on_distinct_rows_equal_the_per_record_domains() -> None:
    """The published domains computed on the distinct QI rows: every record's value, once."""
    from sparkanon.families.transaction.are import qi_domains

    records = pd.DataFrame(
        {
            "sex": [" M", "M", "F ", None, "F", "M"],
            "zip": ["100", " 100", "200", "200", None, "300"],
            "age": [30.0, 41.5, 30.0, 30.0, np.nan, 41.5],
        }
    )
    engine = LocalEngine(batch_rows=2)
    got = qi_domains(engine, records, [("sex", "string"), ("zip", "double")])
    assert sorted(v for v in got["sex"] if v is not None) == ["F", "M"]
    assert sum(v is None for v in got["sex"]) == 1
    assert sorted(v for v in got["zip"] if not np.isnan(v)) == [100.0, 200.0, 300.0]
    assert sum(np.isnan(v) for v in got["zip"]) == 1
    # A floating-point column is read record by record (grouping would merge -0.0, 0.0).
    got = qi_domains(engine, records, [("sex", "string"), ("age", "double")])
    assert sorted(v for v in got["age"] if not np.isnan(v)) == [30.0, 41.5]
    assert sorted(v for v in got["sex"] if v is not None) == ["F", "M"]


def test_bucket_of_is_the_exact_remainder_of_large_group_ids() -> None:
    """Group ids exceed 2^53; the bucket is ``group % buckets`` exactly (both engines' '%')."""
    from sparkanon.attributes.schema import CLASS
    from sparkanon.families.transaction.are import BUCKET, bucket_of

    groups = np.array([0, 5, 2**60 + 1, 2**60 + 7, 2**62 + 3], dtype=np.int64)
    out = LocalEngine().with_columns(pd.DataFrame({CLASS: groups}), {BUCKET: bucket_of(4)})
    assert out[BUCKET].tolist() == [int(g) % 4 for g in groups]


def test_no_answerable_query_reports_no_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """When no query of the largest pool selects a record the job still publishes."""

    def nothing_answers(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("none of 64 queries has a non-zero answer on the table")

    monkeypatch.setattr(qm, "draw_answerable", nothing_answers)
    cfg = rt_config(tmp_path, write_csv(tmp_path, rt_frame(200, seed=5)))
    cfg["metrics"] = {"are": {"queries": 1}}
    with caplog.at_level("WARNING", logger="sparkanon"):
        result = run_local(cfg)
    assert result.metrics["verified"] is True
    assert result.metrics["are"]["percent"] is None and result.metrics["are"]["queries"] == 0
    assert "no ARE" in caplog.text
