"""The relational-transaction job (Gong et al. 2016) end to end on the local engine, and its bad input.

Small RT tables are generated here (seeded); the taxonomy is Gong et al. 2016's shape: items
``a1..h4`` under ``A..H`` under the root. Every run checks what the job promises: the
RT and TT tables verify as (k,l)-diverse, records out plus records suppressed equal
records in, and bad input exits with 2 writing nothing.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparkanon.cli import run_command
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import EXIT_OK, EXIT_USER, ConfigError, ReleaseTooSmallError
from sparkanon.families import parse_config
from sparkanon.pipeline import run_job
from sparkanon.randomness import RunKey
from tests._inputs import (
    ITEMS,
    ROOT,
    leftovers,
    rt_config,
    rt_frame,
    rt_long_config,
    write_config,
    write_csv,
    write_taxonomy,
)


def run_local(cfg: dict[str, Any], commit: bool = False, key: RunKey | None = None) -> Any:
    return run_job(LocalEngine(), parse_config(cfg), commit=commit, key=key)


def check_publication(result: Any, k: int, l: int) -> None:  # noqa: E741
    """RT and TT agree and are (k,l)-diverse, recomputed here with pandas."""
    rt = result.publication.tables["rt"]
    tt = result.publication.tables["tt"]
    assert set(rt.columns) == {"age", "sex", "zip", "group_id"}
    assert "id" not in rt.columns
    buckets = tt.groupby("disease", dropna=False)["count"].sum()
    assert (buckets >= k).all()
    groups = tt.groupby("group_id")["count"].agg(["sum", "max"])
    assert (groups["max"] * l <= groups["sum"]).all()
    sizes = rt.groupby("group_id").size()
    assert sizes.sort_index().tolist() == groups["sum"].sort_index().tolist()


def test_paa_job_verifies_and_conserves_records(tmp_path: Path) -> None:
    data = write_csv(tmp_path, rt_frame(900, seed=1))
    result = run_local(rt_config(tmp_path, data))
    m = result.metrics
    assert m["verified"] is True and m["violations"] == 0
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"] == 900
    assert m["blocks"] >= 3
    check_publication(result, 4, 3)


def test_apa_job_verifies(tmp_path: Path) -> None:
    data = write_csv(tmp_path, rt_frame(600, seed=2))
    result = run_local(rt_config(tmp_path, data, algorithm={"name": "apa"}))
    assert result.metrics["verified"] is True
    check_publication(result, 4, 3)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(40, 400),
    k=st.integers(1, 5),
    l=st.integers(1, 4),  # noqa: E741
    algorithm=st.sampled_from(["apa", "paa"]),
)
def test_random_rt_tables_verify(
    tmp_path: Path,
    seed: int,
    n: int,
    k: int,
    l: int,  # noqa: E741
    algorithm: str,
) -> None:
    data = write_csv(tmp_path, rt_frame(n, seed))
    cfg = rt_config(
        tmp_path,
        data,
        model={"name": "kl_diversity", "k": k, "l": l},
        algorithm={"name": algorithm},
        partitioning={"max_block_rows": max(k * l, 100)},
        output={"path": str(tmp_path / "out"), "publish": "anatomy", "max_suppressed_share": 1},
    )
    try:
        result = run_local(cfg)
    except ConfigError as exc:  # too few records or distinct sets for k and l
        assert "model." in str(exc)
        return
    except ReleaseTooSmallError as exc:  # every record suppressed: the job refuses (exit 2)
        assert "publish no row" in str(exc)
        return
    m = result.metrics
    assert m["verified"] is True
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"] == n
    check_publication(result, k, l)


def test_same_input_same_output(tmp_path: Path) -> None:
    """Under one key the same tables in the same order; another key: other ids and order."""
    data = write_csv(tmp_path, rt_frame(500, seed=3))
    key = RunKey.draw()
    first = run_local(rt_config(tmp_path, data), key=key).publication
    second = run_local(rt_config(tmp_path, data), key=key).publication
    other = run_local(rt_config(tmp_path, data), key=RunKey.draw()).publication
    for name in ("rt", "tt"):
        pd.testing.assert_frame_equal(first.tables[name], second.tables[name])
        assert not first.tables[name]["group_id"].equals(other.tables[name]["group_id"])

    # The same release but for its ids: the groups hold the same members under either key.
    def members(publication: Any) -> list[tuple[Any, ...]]:
        rows = publication.tables["rt"]
        return sorted(
            tuple(sorted(map(tuple, g[["age", "sex", "zip"]].to_numpy().tolist())))
            for _, g in rows.groupby("group_id")
        )

    assert members(first) == members(other)


def test_commit_writes_both_tables(tmp_path: Path) -> None:
    data = write_csv(tmp_path, rt_frame(300, seed=4))
    cfg = rt_config(tmp_path, data, output__format="csv")
    assert run_command(str(write_config(tmp_path, cfg)), [], engine_name="local") == EXIT_OK
    out = tmp_path / "out"
    names = sorted(p.name for p in out.iterdir())
    assert names == [".sparkanon-output", "config.yaml", "metrics.json", "rt", "tt"]
    metrics = json.loads((out / "metrics.json").read_text())
    rt = pd.concat(pd.read_csv(f) for f in sorted((out / "rt").glob("*.csv")))
    assert len(rt) == metrics["rows_out"]


def test_set_decisions_empty_missing_duplicates(tmp_path: Path) -> None:
    frame = rt_frame(400, seed=5)
    frame.loc[0, "disease"] = "a1|a1|b2"  # a duplicate item
    frame.loc[1, "disease"] = "?"  # a missing set
    frame.loc[2, "disease"] = ""  # the empty set
    frame.loc[3, "disease"] = " c1 || c2 "  # spaces and an empty item
    data = write_csv(tmp_path, frame)
    m = run_local(rt_config(tmp_path, data)).metrics
    assert m["suppressed_missing_values"] == 1
    assert m["items"]["duplicate_items_removed"] == 1
    empties = int((frame["disease"].fillna("") == "").sum())
    assert m["items"]["empty_sets"] == empties
    assert m["verified"] is True


def test_unknown_item_dropped_when_configured(tmp_path: Path) -> None:
    frame = rt_frame(300, seed=6)
    frame.loc[0, "disease"] = "a1|zz9"
    data = write_csv(tmp_path, frame)
    cfg = rt_config(tmp_path, data, sensitive__on_unknown_item="drop")
    m = run_local(cfg).metrics
    assert m["items"]["unknown_item_occurrences_dropped"] == 1
    assert m["verified"] is True


def test_long_layout_equals_delimited(tmp_path: Path) -> None:
    frame = rt_frame(300, seed=7)
    data = write_csv(tmp_path, frame)
    key = RunKey.draw()  # one key: the same group ids, and the same rows in the same order
    wide = run_local(rt_config(tmp_path, data), key=key).publication
    cfg = rt_long_config(tmp_path, frame)
    joined = run_local(cfg, key=key).publication
    for name in ("rt", "tt"):
        left = wide.tables[name].astype(str)
        right = joined.tables[name].astype(str)[list(left.columns)]
        pd.testing.assert_frame_equal(left, right)


def test_array_layout_from_parquet(tmp_path: Path) -> None:
    frame = rt_frame(300, seed=8)
    frame["disease"] = [s.split("|") if s else [] for s in frame["disease"].fillna("")]
    path = tmp_path / "rt.parquet"
    frame.to_parquet(path)
    cfg = rt_config(tmp_path, path, sensitive__layout="array")
    cfg["input"] = {"format": "parquet", "path": str(path)}
    assert run_local(cfg).metrics["verified"] is True


def test_even_taxonomy_from_fanout(tmp_path: Path) -> None:
    data = write_csv(tmp_path, rt_frame(400, seed=9))
    cfg = rt_config(tmp_path, data)
    cfg["sensitive"] = {"name": "disease", "kind": "itemset", "fanout": 5}
    m = run_local(cfg).metrics
    assert m["items"]["taxonomy_leaves"] == len(ITEMS)
    assert m["verified"] is True


# Bad input: exit 2, a message naming the problem, nothing written.


def refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cfg: dict[str, Any], *needles: str
) -> None:
    out = Path(cfg["output"]["path"])
    code = run_command(str(write_config(tmp_path, cfg)), [], engine_name="local")
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert "internal error" not in err, err
    for needle in needles:
        assert needle in err, f"{needle!r} not in: {err}"
    assert leftovers(out) == []


def test_unknown_item_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    frame = rt_frame(200, seed=10)
    frame.loc[5, "disease"] = "b1|zz9"
    refused(
        capsys,
        tmp_path,
        rt_config(tmp_path, write_csv(tmp_path, frame)),
        "'zz9'",
        "disease",
        "on_unknown_item",
    )


def test_set_column_that_is_not_a_set(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    frame = rt_frame(200, seed=11)
    path = tmp_path / "rt.parquet"
    frame.to_parquet(path)
    cfg = rt_config(tmp_path, path, sensitive__layout="array")
    cfg["input"] = {"format": "parquet", "path": str(path)}
    refused(capsys, tmp_path, cfg, "'disease'", "layout: delimited")


def test_l_above_distinct_sets(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    frame = rt_frame(200, seed=12)
    frame["disease"] = np.where(np.arange(200) % 2 == 0, "a1", "b2")
    cfg = rt_config(
        tmp_path, write_csv(tmp_path, frame), model={"name": "kl_diversity", "k": 2, "l": 3}
    )
    refused(capsys, tmp_path, cfg, "model.l = 3", "2 distinct set")


def test_k_above_records(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = rt_config(
        tmp_path,
        write_csv(tmp_path, rt_frame(30, seed=13)),
        model={"name": "kl_diversity", "k": 20, "l": 2},
    )
    refused(capsys, tmp_path, cfg, "model.k = 20", "30 usable records")


def test_taxonomy_leaf_under_two_parents(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = rt_config(tmp_path, write_csv(tmp_path, rt_frame(100, seed=14)))
    bad = tmp_path / "bad_tax.csv"
    bad.write_text("a1;A;*\na2;A;*\nB;A;*\nb1;B;*\n", encoding="utf-8")
    cfg["sensitive"] = {**cfg["sensitive"], "taxonomy": str(bad)}
    refused(capsys, tmp_path, cfg, "bad_tax.csv")


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"algorithm": {"name": "maa_slie"}}, "needs one of apa, paa"),
        ({"model": {"name": "k", "k": 5}}, "kl_diversity"),
        ({"output__publish": "centroids"}, "publish: anatomy"),
        ({"partitioning": {"max_block_rows": 10}}, "k * l = 12"),
    ],
)
def test_config_cross_checks(tmp_path: Path, change: dict[str, Any], needle: str) -> None:
    cfg = rt_config(tmp_path, tmp_path / "rt.csv", **change)
    with pytest.raises(ConfigError, match=None) as info:
        parse_config(cfg)
    assert needle in str(info.value)


def test_taxonomy_and_fanout_exclusive(tmp_path: Path) -> None:
    cfg = rt_config(tmp_path, tmp_path / "rt.csv")
    cfg["sensitive"] = {**cfg["sensitive"], "fanout": 5}
    with pytest.raises(ConfigError, match="exactly one of taxonomy"):
        parse_config(cfg)


def test_kl_diversity_needs_a_set_attribute(tmp_path: Path) -> None:
    cfg = rt_config(tmp_path, tmp_path / "rt.csv")
    cfg["sensitive"] = {"name": "disease"}
    cfg["algorithm"] = {"name": "maa_slie"}
    cfg["output"] = {"path": str(tmp_path / "out")}
    with pytest.raises(ConfigError, match="sensitive.kind: itemset"):
        parse_config(cfg)


@pytest.mark.spark
@pytest.mark.parametrize("layout", ["delimited", "long"])
def test_spark_matches_local_engine(spark, tmp_path: Path, layout: str) -> None:
    """Both engines publish the same RT and TT (the long layout joins on Spark), and ARE."""
    from sparkanon.engine.spark import SparkEngine

    frame = rt_frame(700, seed=15)
    cfg = rt_config(tmp_path, write_csv(tmp_path, frame), algorithm={"name": "apa"})
    if layout == "long":
        cfg = rt_long_config(tmp_path, frame, algorithm={"name": "apa"})
    # ARE with a sampled candidate pool (fewer than the ~450 distinct sets): same on both.
    cfg["metrics"] = {"are": {"queries": 200, "candidate_sets": 100}}
    config = parse_config(cfg)
    key = RunKey.draw()  # one key: the same published group ids on both engines
    local = run_job(LocalEngine(), config, commit=False, key=key)
    remote = run_job(SparkEngine(spark), config, commit=False, key=key)
    assert remote.metrics["verified"] is True
    assert spark.conf.get("spark.sql.files.maxPartitionBytes") == str(16 << 20)
    for key in ("rows_out", "rows_suppressed", "groups", "tbuckets", "item_ncp", "blocks", "are"):
        assert remote.metrics[key] == local.metrics[key], key
    assert local.metrics["are"]["candidate_sets"] == 100 < local.metrics["are"]["distinct_sets"]
    assert remote.metrics["spark_jobs"]["by_stage"]["are"] > 0
    for name, keys in (("rt", ["group_id", "age", "sex", "zip"]), ("tt", ["group_id", "disease"])):
        mine = local.publication.tables[name].sort_values(keys).reset_index(drop=True)
        theirs = remote.publication.tables[name].toPandas().sort_values(keys).reset_index(drop=True)
        pd.testing.assert_frame_equal(mine.astype(str), theirs[list(mine.columns)].astype(str))


@pytest.mark.parametrize("conf", ["completejourney_paa.yaml", "completejourney_long.yaml"])
def test_completejourney_demo_configs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conf: str
) -> None:
    """The shipped RT demo configs run on the bundled data and verify (local engine)."""
    from sparkanon.families import load_config

    monkeypatch.chdir(ROOT)  # the configs' paths are relative to the repository
    config = load_config(ROOT / "conf" / conf, [f"output.path={tmp_path / 'out'}"])
    m = run_job(LocalEngine(), config, commit=False).metrics
    assert m["rows_in"] == 801
    assert m["verified"] is True
    assert m["rows_out"] + m["rows_suppressed"] == 801
    assert m["items"]["distinct_items"] == 299


def test_reconcile_chunks_walk_the_tree_left_to_right() -> None:
    from sparkanon.families.transaction.cluster import block_order_key, reconcile_chunks

    # Leaves of a tree cut at 1 -> (2, 3), 2 -> (4, 5), 5 -> (10, 11): in-order 4, 10, 11, 3.
    assert sorted([3, 4, 10, 11], key=block_order_key) == [4, 10, 11, 3]
    chunks = reconcile_chunks({3: 5, 4: 6, 10: 1, 11: 2}, target=6)
    assert chunks == {4: 1, 10: 2, 11: 2, 3: 2}  # 6 | 1 + 2 + 5 = 8
    assert reconcile_chunks({4: 3, 3: 2}, target=10) == {4: 1, 3: 1}
    # A short last chunk folds into the previous one.
    assert reconcile_chunks({4: 6, 10: 6, 3: 1}, target=6) == {4: 1, 10: 2, 3: 2}


def test_two_reconcile_rounds(tmp_path: Path) -> None:
    """Tiny blocks leave many records over: chunks first, then one last block."""
    data = write_csv(tmp_path, rt_frame(1500, seed=16, max_items=6))
    cfg = rt_config(tmp_path, data, partitioning={"max_block_rows": 12, "reconcile_rows": 120})
    m = run_local(cfg).metrics
    assert m["rows_reconciled"] > 0
    assert m["reconcile_chunks"] >= 2
    assert m["reconcile_last_block_rows"] > 0
    assert m["verified"] is True
    assert m["rows_out"] + m["rows_suppressed"] == 1500


def test_distinct_ints_matches_numpy_unique() -> None:
    from sparkanon.attributes.itemsets import distinct_ints

    rng = np.random.default_rng(17)
    for shape in [(0,), (1,), (500,), (3, 40)]:
        values = rng.integers(-5, 30, size=shape)
        assert distinct_ints(values).tolist() == np.unique(values).tolist()


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 40),
    width=st.integers(1, 400),
    per_record=st.integers(0, 30),
    seed=st.integers(0, 2**16),
)
def test_distinct_pairs_matches_numpy_unique(
    n: int, width: int, per_record: int, seed: int
) -> None:
    """Both paths (presence table for dense pairs, sort for sparse ones) give np.unique's pairs."""
    from sparkanon.attributes.itemsets import distinct_pairs

    rng = np.random.default_rng(seed)
    m = n * per_record
    record = rng.integers(0, max(n, 1), size=m) if n else np.zeros(0, dtype=np.int64)
    ids = rng.integers(0, width, size=m)
    got_record, got_ids = distinct_pairs(record, ids, n)
    keys = np.unique(record * width + ids)
    assert got_record.tolist() == (keys // width).tolist()
    assert got_ids.tolist() == (keys % width).tolist()


def test_item_occurrences_trim_and_drop_empty_and_null_items() -> None:
    """Items are trimmed once per distinct string; empty and null items are no items."""
    from sparkanon.stages.items import ItemsSpec, item_occurrences, item_stats

    spec = ItemsSpec(
        column="x", layout="array", separator="|", known=None, missing_tokens=frozenset()
    )
    values = pd.Series([["a", None, " b", ""], [None], [], [" a", "a "]], dtype=object)
    record, label, labels = item_occurrences(values, spec)
    assert [(int(r), labels[i]) for r, i in zip(record, label, strict=True)] == [
        (0, "a"),
        (0, "b"),
        (3, "a"),
        (3, "a"),
    ]
    stats = {(s, v): n for s, v, n in item_stats(values, spec)}
    assert stats[("item", "a")] == 2 and stats[("item", "b")] == 1
    assert stats[("empty_sets", None)] == 2  # a set of null items is empty
    assert stats[("duplicate_items", None)] == 1
    assert stats[("set_items", None)] == 3


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_independent_verifier_reads_rt_outputs(
    tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """sparkanon/tools/verify_release.py passes a committed RT output and fails a tampered one."""
    from sparkanon.tools import verify_release as verify

    data = write_csv(tmp_path, rt_frame(300, seed=4))
    cfg = rt_config(tmp_path, data, output__format=fmt)
    assert run_command(str(write_config(tmp_path, cfg)), [], engine_name="local") == EXIT_OK
    out = tmp_path / "out"
    assert verify.main([str(out)]) == 0
    assert "violations=0" in capsys.readouterr().out
    # Tamper: one group's first TT row now counts its whole group (a set above |G|/l).
    tt_dir = out / "tt"
    tt = verify.read_table_dir(tt_dir)
    first = tt["group_id"].astype(str) == tt["group_id"].astype(str).iloc[0]
    tt.loc[first.idxmax(), "count"] = int(pd.to_numeric(tt.loc[first, "count"]).sum())
    for part in tt_dir.iterdir():
        part.unlink()
    if fmt == "csv":
        tt.to_csv(tt_dir / "part-0.csv", index=False)
    else:
        tt.to_parquet(tt_dir / "part-0.parquet", index=False)
    assert verify.main([str(out)]) == 1
    printed = capsys.readouterr().out
    assert "frequent_groups=1" in printed and "inconsistent_groups=1" in printed


def test_rt_jobs_read_in_small_splits_unless_configured(tmp_path: Path) -> None:
    """A set-valued job reads 16 MiB splits by default (wide records); a set value wins."""
    from sparkanon.families.transaction.family import RT_SPLIT_BYTES, with_rt_defaults

    data = write_csv(tmp_path, rt_frame(50, seed=1))
    default = with_rt_defaults(parse_config(rt_config(tmp_path, data)))
    assert default.input.max_split_bytes == RT_SPLIT_BYTES == 16 << 20
    chosen = rt_config(
        tmp_path, data, input={**rt_config(tmp_path, data)["input"], "max_split_bytes": 64 << 20}
    )
    assert with_rt_defaults(parse_config(chosen)).input.max_split_bytes == 64 << 20
    too_small = rt_config(
        tmp_path, data, input={**rt_config(tmp_path, data)["input"], "max_split_bytes": 1000}
    )
    with pytest.raises(ConfigError, match="max_split_bytes"):
        parse_config(too_small)


# QA's RT report (issue 21): items dropped as unknown, separators in labels, the empty set
# in CSV, inner-node items and wrong separators, the published types of RT.


def unknown_items_frame(n: int = 300, seed: int = 6) -> pd.DataFrame:
    """``rt_frame`` with one record of unknown items only, one mixed, one empty set."""
    frame = rt_frame(n, seed=seed)
    frame.loc[0, "disease"] = "zz9|zz8"  # every item unknown: suppressed, not published empty
    frame.loc[1, "disease"] = "a1|zz9|a1"  # an unknown item and a duplicate known one
    frame.loc[2, "disease"] = ""  # an empty set in the input: published as such
    return frame


def known_item_counts(frame: pd.DataFrame) -> tuple[int, int]:
    """``(items, empty)``: distinct known items over all sets, and the input's empty sets."""
    sets = [{i for i in s.split("|") if i} for s in frame["disease"].fillna("")]
    return sum(len(s & set(ITEMS)) for s in sets), sum(1 for s in sets if not s)


def test_record_whose_every_item_is_dropped_is_suppressed(tmp_path: Path) -> None:
    """Item 3: not published as the empty set; counted as its own cause; items after the drop."""
    frame = unknown_items_frame()
    cfg = rt_config(tmp_path, write_csv(tmp_path, frame), sensitive__on_unknown_item="drop")
    result = run_local(cfg)
    m = result.metrics
    assert m["suppressed_unknown_items"] == 1
    causes = ("malformed_records", "missing_values", "invalid_values", "unknown_items", "unplaced")
    assert m["rows_suppressed"] == sum(m[f"suppressed_{c}"] for c in causes)
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"] == len(frame)
    items, empty = known_item_counts(frame)
    assert m["items"]["items_in_sets"] == items
    assert m["items"]["empty_sets"] == empty  # the input's empty sets, not the emptied one
    assert m["items"]["duplicate_items_removed"] == 1
    assert m["items"]["unknown_item_occurrences_dropped"] == 3
    # Record 0 (its qi values unique in the input) is not published; every other one is.
    published = result.publication.tables["rt"][["age", "sex", "zip"]]
    rows = frame[["age", "sex", "zip"]].astype({"age": float, "zip": float})
    assert not rows.iloc[1:].eq(rows.iloc[0]).all(axis=1).any()
    assert not published.eq(rows.iloc[0]).all(axis=1).any()
    assert len(published) == m["rows_out"]
    tt = result.publication.tables["tt"]
    assert int(tt.loc[tt["disease"] == "", "count"].sum()) <= empty
    check_publication(result, 4, 3)


def delimited_spec(known: set[str], **changes: Any) -> Any:
    """An ``ItemsSpec`` of a ``|``-delimited column ``x`` with these known items."""
    from sparkanon.stages.items import ItemsSpec

    return ItemsSpec(
        column="x",
        layout="delimited",
        separator="|",
        known=frozenset(known),
        missing_tokens=frozenset(),
        **changes,
    )


def test_item_stats_count_after_the_drop() -> None:
    from sparkanon.stages.items import item_stats

    spec = delimited_spec({"a", "b"}, empty_when_null=True)
    values = pd.Series(["a|zz|a", "zz|yy|zz", "", "b", None], dtype=object)
    stats = {(s, v): n for s, v, n in item_stats(values, spec)}
    assert stats[("item_unknown", "zz")] == 2 and stats[("item_unknown", "yy")] == 1
    assert stats[("empty_sets", None)] == 2  # "" and the null of the delimited layout
    assert stats[("emptied_sets", None)] == 1  # "zz|yy|zz"
    assert stats[("duplicate_items", None)] == 1  # the second "a"; unknown repeats not counted
    assert stats[("set_items", None)] == 2  # a, b


def test_every_record_emptied_by_the_drop_fails_with_a_separator_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A wrong separator with on_unknown_item: drop leaves no record: exit 2, with a hint."""
    rng = np.random.default_rng(21)
    frame = rt_frame(120, seed=21)
    frame["disease"] = [",".join(rng.choice(ITEMS, size=2, replace=False)) for _ in range(120)]
    cfg = rt_config(tmp_path, write_csv(tmp_path, frame), sensitive__on_unknown_item="drop")
    refused(capsys, tmp_path, cfg, "no record is left", "splits at ','", "sensitive.separator")


def separator_taxonomy(tmp_path: Path) -> Path:
    """The test taxonomy with one leaf, on line 3, renamed ``Sci|Fi``."""
    path = write_taxonomy(tmp_path / "sep_tax.csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace("a3", "Sci|Fi")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_taxonomy_label_holding_the_separator_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Item 4: ``Sci|Fi`` would publish as two nodes that do not exist."""
    cfg = rt_config(tmp_path, write_csv(tmp_path, rt_frame(100, seed=22)))
    cfg["sensitive"] = {**cfg["sensitive"], "taxonomy": str(separator_taxonomy(tmp_path))}
    refused(capsys, tmp_path, cfg, "sep_tax.csv", "line 3", "'Sci|Fi'", "sensitive.separator")


def test_separator_in_a_generated_taxonomy_label_is_refused(tmp_path: Path) -> None:
    """An even taxonomy's node labels ``L1:0`` cannot be joined by ``:`` either."""
    from sparkanon.config import ItemsetConfig

    sens = ItemsetConfig(name="disease", kind="itemset", fanout=2, separator=":")
    with pytest.raises(ConfigError, match="'L1:0'"):
        sens.load_tree(["a", "b", "c", "d", "e"])
    assert sens.model_copy(update={"separator": "|"}).load_tree(["a", "b", "c"]).n_leaves == 3


def test_inner_node_item_is_named_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Item 8: an inner node is not 'absent from the taxonomy'; items must be leaves."""
    frame = rt_frame(200, seed=23)
    frame.loc[4, "disease"] = "B|a1"
    cfg = rt_config(tmp_path, write_csv(tmp_path, frame))
    refused(capsys, tmp_path, cfg, "'B'", "inner node", "level 1", "must be leaves")
    assert "absent from" not in capsys.readouterr().err


def test_wrong_separator_gets_a_hint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Item 8: sets joined by ';' read with separator '|' are one unknown item each."""
    frame = rt_frame(200, seed=24)
    frame["disease"] = frame["disease"].str.replace("|", ";")
    cfg = rt_config(tmp_path, write_csv(tmp_path, frame))
    refused(capsys, tmp_path, cfg, "absent from the taxonomy", "splits at ';'", "separator")


def test_separator_hint_when_no_item_is_known() -> None:
    from sparkanon.stages.items import ItemsSpec, separator_hint

    spec = delimited_spec({"a1", "b2"})
    assert "splits at ','" in separator_hint(["a1,b2"], spec, any_known=True)
    assert "no item of the data" in separator_hint(["a1#b2"], spec, any_known=False)
    assert separator_hint(["zz9"], spec, any_known=True) == ""
    array = ItemsSpec(
        column="x", layout="array", separator="|", known=spec.known, missing_tokens=frozenset()
    )
    assert separator_hint(["a1,b2"], array, any_known=False) == ""


def csv_fields(table_dir: Path) -> list[list[str]]:
    """Every record of a committed CSV table's part files, header excluded, as read by csv."""
    import csv

    rows: list[list[str]] = []
    for part in sorted(table_dir.glob("*.csv")):
        with part.open(encoding="utf-8", newline="") as fh:
            rows += list(csv.reader(fh))[1:]
    return rows


def empty_set_lines(table_dir: Path) -> list[str]:
    """The raw lines of a committed TT whose set field is empty."""
    lines = []
    for part in sorted(table_dir.glob("*.csv")):
        lines += [ln for ln in part.read_text(encoding="utf-8").splitlines()[1:] if ",," in ln]
    return lines


def test_empty_set_in_csv_output_is_an_empty_field_read_back_as_empty(tmp_path: Path) -> None:
    """Item 5 (local): the empty set is an empty field, read back as "" (not missing)."""
    frame = rt_frame(300, seed=25)
    data = write_csv(tmp_path, frame)
    cfg = rt_config(tmp_path, data, output__format="csv")
    result = run_job(LocalEngine(), parse_config(cfg), commit=True)
    tt = result.publication.tables["tt"]
    assert (tt["disease"] == "").any() and not tt["disease"].isna().any()
    lines = empty_set_lines(tmp_path / "out" / "tt")
    assert lines and all(ln.count(",") == 2 and '"' not in ln for ln in lines)


def test_rt_types_do_not_depend_on_the_input_format(tmp_path: Path) -> None:
    """Item 10: a continuous QI is a double, a nominal one a string, from CSV and Parquet."""
    frame = rt_frame(300, seed=26)
    csv_cfg = rt_config(tmp_path, write_csv(tmp_path, frame))
    parquet = tmp_path / "rt.parquet"
    frame.to_parquet(parquet)
    pq_cfg = rt_config(tmp_path, parquet)
    pq_cfg["input"] = {"format": "parquet", "path": str(parquet)}
    key = RunKey.draw()  # one key: the same group ids, and the same rows in the same order
    tables = [run_local(c, key=key).publication.tables["rt"] for c in (csv_cfg, pq_cfg)]
    for rt in tables:
        assert rt["age"].dtype == np.float64 and rt["zip"].dtype == np.float64
        assert rt["sex"].map(type).eq(str).all()
    pd.testing.assert_frame_equal(tables[0], tables[1])


def spark_and_local(spark: Any, tmp_path: Path, cfg: dict[str, Any]) -> tuple[Any, Any]:
    """The job committed by both engines, each to its own output directory."""
    from sparkanon.engine.spark import SparkEngine

    runs, key = [], RunKey.draw()  # one key: the same published group ids on both engines
    for name, engine in (("local", LocalEngine()), ("spark", SparkEngine(spark))):
        config = parse_config({**cfg, "output": {**cfg["output"], "path": str(tmp_path / name)}})
        runs.append(run_job(engine, config, commit=True, key=key))
    return runs[0], runs[1]


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_spark_matches_local_on_dropped_items_empty_sets_and_types(
    spark: Any, tmp_path: Path, fmt: str
) -> None:
    """Items 3, 5 and 10 on both engines: counts, CSV empty sets, RT types, equal tables."""
    frame = unknown_items_frame(400, seed=27)
    cfg = rt_config(
        tmp_path,
        write_csv(tmp_path, frame),
        sensitive__on_unknown_item="drop",
        output__format="csv",
    )
    if fmt == "parquet":
        frame.to_parquet(tmp_path / "rt.parquet")
        cfg["input"] = {"format": "parquet", "path": str(tmp_path / "rt.parquet")}
    local, remote = spark_and_local(spark, tmp_path, cfg)
    for key in ("rows_out", "rows_suppressed", "suppressed_unknown_items", "groups", "items"):
        assert remote.metrics[key] == local.metrics[key], key
    assert remote.metrics["suppressed_unknown_items"] == 1
    assert local.metrics["items"]["empty_sets"] == known_item_counts(frame)[1]
    for name, keys in (("rt", ["group_id", "age", "sex", "zip"]), ("tt", ["group_id", "disease"])):
        mine = sorted(csv_fields(tmp_path / "local" / name))
        theirs = sorted(csv_fields(tmp_path / "spark" / name))
        assert mine == theirs, name
        if name == "rt":  # age, sex, zip, group_id: age and zip written as doubles
            # Published ages are input ages (record 0, all items unknown, is suppressed).
            ages = Counter(str(float(a)) for a in frame["age"].to_numpy()[1:])
            published = Counter(row[0] for row in mine)
            assert published <= ages and published.total() == local.metrics["rows_out"]
            assert all(row[2].endswith(".0") for row in mine)
        back = remote.publication.tables[name].toPandas().sort_values(keys)
        here = local.publication.tables[name].sort_values(keys)
        pd.testing.assert_frame_equal(
            here.reset_index(drop=True), back[list(here.columns)].reset_index(drop=True)
        )
    for run in ("local", "spark"):
        lines = empty_set_lines(tmp_path / run / "tt")
        assert lines and all('"' not in ln for ln in lines), run


@pytest.mark.spark
@pytest.mark.parametrize("case", ["separator_label", "inner_node"])
def test_spark_refuses_like_local(spark: Any, tmp_path: Path, case: str) -> None:
    """Items 4 and 8 on both engines: the same error (exit 2), nothing written."""
    from sparkanon.engine.spark import SparkEngine
    from sparkanon.errors import UserError

    frame = rt_frame(100, seed=28)
    cfg = rt_config(tmp_path, write_csv(tmp_path, frame))
    if case == "separator_label":
        cfg["sensitive"] = {**cfg["sensitive"], "taxonomy": str(separator_taxonomy(tmp_path))}
    else:
        frame.loc[4, "disease"] = "B|a1"
        cfg = rt_config(tmp_path, write_csv(tmp_path, frame))
    messages = []
    for engine in (LocalEngine(), SparkEngine(spark)):
        with pytest.raises(UserError) as info:
            run_job(engine, parse_config(cfg), commit=True)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert ("'Sci|Fi'" if case == "separator_label" else "inner node") in messages[0]
    assert leftovers(tmp_path / "out") == []


@pytest.mark.spark
def test_anatomy_into_catalog_tables_by_partition(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``output.table: db.out`` commits ``db.out_rt`` and ``db.out_tt`` per partition.

    A commit cut between its two metastore updates (the ``_tt`` update fails) leaves ``_rt``
    on the new version and ``_tt`` on the old one; the next run finishes the pair forward.
    """
    from sparkanon.engine.catalog import SparkCatalog

    spark.sql("DROP DATABASE IF EXISTS t_rt CASCADE")
    spark.sql("CREATE DATABASE t_rt")
    days = [rt_frame(240, seed=21).assign(ds="d1"), rt_frame(240, seed=22).assign(ds="d2")]
    frame = pd.concat(days, ignore_index=True).astype({"disease": str})
    spark.createDataFrame(frame).write.partitionBy("ds").format("parquet").saveAsTable(
        "t_rt.people"
    )
    cfg = rt_config(tmp_path, tmp_path / "unused.csv")
    cfg["input"] = {"table": "t_rt.people"}
    cfg["output"] = {"table": "t_rt.out", "publish": "anatomy", "mode": "overwrite"}
    path = str(write_config(tmp_path, cfg))
    # One user key for every run: the rerun below publishes the same group ids.
    monkeypatch.setenv("SPARKANON_KEY", bytes(range(32)).hex())
    assert run_command(path, [], "spark", partition="ds=d1") == EXIT_OK
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["verified"] is True

    def table(name: str) -> pd.DataFrame:
        rows = spark.table(f"t_rt.out_{name}").where("ds = 'd1'").drop("ds").toPandas()
        return rows.sort_values(list(rows.columns)).reset_index(drop=True)

    def location(name: str) -> str:
        return SparkCatalog(spark).partition_location(f"t_rt.out_{name}", {"ds": "d1"}) or ""

    first = {name: table(name) for name in ("rt", "tt")}
    assert len(first["rt"]) == metrics["rows_out"]
    check_publication(SimpleNamespace(publication=SimpleNamespace(tables=first)), 4, 3)
    # Both tables carry the properties a one-table output does, the same on both.
    props = {
        name: {
            r["key"]: r["value"]
            for r in spark.sql(f"SHOW TBLPROPERTIES t_rt.out_{name}").collect()
            if r["key"].startswith("sparkanon.")
        }
        for name in ("rt", "tt")
    }
    assert props["rt"] == props["tt"]
    keys = {"version", "model", "algorithm", "publish", "config_sha256", "verified", "seed"}
    assert set(props["rt"]) == {f"sparkanon.{k}" for k in keys | {"last_partition"}}
    assert json.loads(props["rt"]["sparkanon.model"]) == {"name": "kl_diversity", "k": 4, "l": 3}
    assert props["rt"]["sparkanon.verified"] == "true"
    assert props["rt"]["sparkanon.last_partition"] == "ds=d1"
    assert location("rt").rsplit("/", 1)[0] == location("tt").rsplit("/", 1)[0]

    # Rerun d1; the second metastore update fails: _rt moved, _tt did not.
    original = SparkCatalog.point_partition

    def cut(self: Any, name: str, spec: Any, where: str) -> Any:
        if name.endswith("_tt"):
            raise RuntimeError("driver lost")
        return original(self, name, spec, where)

    monkeypatch.setattr(SparkCatalog, "point_partition", cut)
    assert run_command(path, [], "spark", partition="ds=d1") != EXIT_OK
    monkeypatch.setattr(SparkCatalog, "point_partition", original)
    capsys.readouterr()
    torn = location("rt").rsplit("/", 1)[0]
    assert torn != location("tt").rsplit("/", 1)[0]
    assert Path(torn.removeprefix("file:"), "metrics.json").exists()  # not discarded

    # The next run finishes the pair forward first, then commits its own version.
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("sparkanon").addHandler(handler)
    try:
        assert run_command(path, [], "spark", partition="ds=d1") == EXIT_OK
    finally:
        logging.getLogger("sparkanon").removeHandler(handler)
    capsys.readouterr()
    assert any("half committed" in line and "forward" in line for line in lines)
    assert location("rt").rsplit("/", 1)[0] == location("tt").rsplit("/", 1)[0]
    for name in ("rt", "tt"):  # the same input, config and seed: the same rows
        pd.testing.assert_frame_equal(first[name], table(name))
    folder = Path(torn.removeprefix("file:")).parent
    assert len([p for p in folder.iterdir() if p.name.startswith("v-")]) == 1
    assert not [t for t in spark.catalog.listTables("t_rt") if "lock" in t.name]


@pytest.mark.parametrize("engine_name", ["local", pytest.param("spark", marks=pytest.mark.spark)])
def test_verification_counts_each_kind_of_kl_violation(engine_name: str, request: Any) -> None:
    """verify_rt judges RT and TT with the model's own tests, on both engines.

    k = 2, l = 2. TT: group 1 holds sets x (2) and y (2): fine. Group 2 holds x (3) and
    z (1): x is above |G|/l (frequent) and TBucket z has 1 < k record (small). Group 3 is
    in RT (2 records) but holds 1 TT record (inconsistent; and its one set is all of
    it, frequent). Group 4 is in RT only: no size, so it fails the frequency test and
    is inconsistent.
    """
    from sparkanon.families.transaction.publish import GROUP_ID, RT_TABLE, TT_TABLE, verify_rt
    from sparkanon.models.kl_diversity import KLDiversity
    from sparkanon.publications import Publication

    if engine_name == "spark":
        from sparkanon.engine.spark import SparkEngine

        engine: Any = SparkEngine(request.getfixturevalue("spark"))
    else:
        engine = LocalEngine()
    rt_groups = [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4]
    rt = engine.from_pandas(pd.DataFrame({GROUP_ID: rt_groups}), [(GROUP_ID, "long")])
    tt_frame = pd.DataFrame(
        {
            GROUP_ID: [1, 1, 2, 2, 3],
            "items": ["x", "y", "x", "z", "y"],
            "count": [2, 2, 3, 1, 1],
        }
    )
    tt = engine.from_pandas(tt_frame, [(GROUP_ID, "long"), ("items", "string"), ("count", "long")])
    publication = Publication(
        tables={RT_TABLE: rt, TT_TABLE: tt},
        class_table=RT_TABLE,
        class_key=[GROUP_ID],
        sensitive="items",
    )
    found = verify_rt(engine, publication, "items", KLDiversity(k=2, l=2))
    assert found["rows"] == 11 and found["groups"] == 4 and found["tbuckets"] == 3
    assert found["small_tbuckets"] == 1  # z: 1 record
    assert found["frequent_groups"] == 3  # 2 (x: 3 of 4), 3 (y: 1 of 1), 4 (no TT rows)
    assert found["inconsistent_groups"] == 2  # group 3 (2 vs 1), group 4 (1 vs none)
    assert found["violations"] == 6
    # A TT read back from CSV holds its counts as text: read as numbers, the same verdict.
    text = engine.from_pandas(
        tt_frame.astype({"count": str}),
        [(GROUP_ID, "long"), ("items", "string"), ("count", "string")],
    )
    tables = {RT_TABLE: rt, TT_TABLE: text}
    publication = Publication(tables, RT_TABLE, [GROUP_ID], "items")
    assert verify_rt(engine, publication, "items", KLDiversity(k=2, l=2)) == found
