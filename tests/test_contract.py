"""The contract every (algorithm, model) pair keeps, tested once for all of them.

For every algorithm and every privacy model (the ones the algorithm builds by
construction and the ones the repair step enforces), on seeded random tables with all
attribute kinds: every published equivalence class satisfies the model (checked by
the job's verification and by the independent ``sparkanon/tools/verify_release.py`` logic),
rows out + rows suppressed = rows in, and the same input and seed give the same
table. The Spark part (marked ``spark``) checks that the Spark engine publishes the
same table as the local engine, one run per algorithm.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparkanon.algorithms import algorithms_of
from sparkanon.engine.local import LocalEngine
from sparkanon.families import parse_config
from sparkanon.pipeline import run_job
from sparkanon.tools import verify_release

VALUES = ["s0", "s1", "s2", "s3", "s4", "s5"]
LEVELS = [
    {"name": "low", "weight": 0.1, "values": ["s0", "s1"]},
    {"name": "mid", "weight": 0.4, "values": ["s2", "s3"]},
    {"name": "high", "weight": 0.8, "values": ["s4", "s5"]},
]
MODELS = {
    "k": {"name": "k", "k": 4},
    "p_sensitive": {"name": "p_sensitive", "k": 4, "p": 2},
    "hpk": {"name": "hpk", "k": 4, "p": 3, "h": 2},
    "distinct_l": {"name": "distinct_l", "l": 3},
    "entropy_l": {"name": "entropy_l", "l": 2.5},
    "recursive_cl": {"name": "recursive_cl", "c": 2.0, "l": 2},
    "t_closeness": {"name": "t_closeness", "t": 0.3, "measure": "emd", "ground": "ordered"},
}
PUBLISH = {"kl_cluster": "generalized", "mondrian": "generalized"}


def table(seed: int, n: int = 300) -> pd.DataFrame:
    """A random table with a continuous, an ordinal, a nominal and a categorical QI."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(n)],
            "age": rng.integers(18, 80, n).astype(str),
            "grade": rng.choice(["a", "b", "c", "d"], n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "city": rng.choice(["x1", "x2", "y1", "y2", "y3"], n),
            "sens": rng.choice(VALUES, n, p=[0.25, 0.2, 0.2, 0.15, 0.1, 0.1]),
        }
    )


def config(tmp_path: Path, algorithm: str, model: str, rows: int) -> dict:
    hierarchy = tmp_path / "city.csv"
    hierarchy.write_text("x1;X;*\nx2;X;*\ny1;Y;*\ny2;Y;*\ny3;Y;*\n", encoding="utf-8")
    return {
        "input": {"path": "unused.csv"},
        "attributes": [
            {"name": "age", "kind": "continuous"},
            {"name": "grade", "kind": "ordinal", "order": ["a", "b", "c", "d"]},
            {"name": "colour", "kind": "nominal"},
            {"name": "city", "kind": "categorical", "hierarchy": str(hierarchy)},
            {"name": "id", "kind": "keep"},
        ],
        "sensitive": {"name": "sens", "levels": LEVELS, "values": VALUES},
        "model": MODELS[model],
        "algorithm": {"name": algorithm},
        "partitioning": {"max_block_rows": max(rows // 3, 40), "task_rows": rows // 2},
        "output": {"path": str(tmp_path / "out"), "publish": PUBLISH.get(algorithm, "centroids")},
        "seed": 7,
    }


def independent_check(published: pd.DataFrame, raw: dict) -> None:
    """sparkanon/tools/verify_release.py's own model checks on the published rows."""
    qi = [a["name"] for a in raw["attributes"] if a["kind"] not in ("keep", "identifier")]
    keys = published[qi].astype(str).agg("\x1f".join, axis=1)
    group, _ = pd.factorize(keys)
    index = {v: i for i, v in enumerate(VALUES)}
    counts = np.zeros((group.max() + 1, len(VALUES)), dtype=np.int64)
    np.add.at(counts, (group, published["sens"].map(index).to_numpy()), 1)
    q = counts.sum(axis=0) / counts.sum()
    level_index = np.array([0, 0, 1, 1, 2, 2])
    ok = verify_release.check(raw["model"], counts, q, VALUES, raw, level_index)
    assert ok.all(), f"{int((~ok).sum())} groups fail {raw['model']}"


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("algorithm", sorted(algorithms_of("blocks")))
def test_every_published_class_satisfies_the_model(
    tmp_path: Path, algorithm: str, model: str
) -> None:
    frame = table(seed=len(algorithm) * 31 + len(model))
    raw = config(tmp_path, algorithm, model, len(frame))
    cfg = parse_config(raw)
    first = run_job(LocalEngine(batch_rows=70), cfg, table=frame.copy(), commit=False)
    m = first.metrics
    assert m["verified"] is True and m["violations"] == 0
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"] == len(frame)
    published = first.published
    assert len(published) == m["rows_out"]
    independent_check(published, raw)
    # Deterministic: the same input, config and seed give the same table.
    again = run_job(LocalEngine(batch_rows=70), cfg, table=frame.copy(), commit=False).published
    cols = sorted(published.columns)
    pd.testing.assert_frame_equal(
        published[cols].sort_values("id").reset_index(drop=True),
        again[cols].sort_values("id").reset_index(drop=True),
    )


@pytest.mark.spark
@pytest.mark.parametrize("algorithm", sorted(algorithms_of("blocks")))
def test_spark_publishes_what_the_local_engine_publishes(
    spark, tmp_path: Path, algorithm: str
) -> None:
    from sparkanon.engine.spark import SparkEngine

    model = {"mondrian": "entropy_l", "mdav": "p_sensitive"}.get(algorithm, "hpk")
    frame = table(seed=3, n=400)
    raw = config(tmp_path, algorithm, model, len(frame))
    cfg = parse_config(raw)
    local = run_job(LocalEngine(batch_rows=90), cfg, table=frame.copy(), commit=False)
    remote = run_job(SparkEngine(spark), cfg, table=spark.createDataFrame(frame), commit=False)
    assert remote.metrics["verified"] is True
    for key in ("rows_out", "classes", "published_classes", "blocks", "class_size", "DM"):
        assert local.metrics[key] == remote.metrics[key], key
    theirs = remote.published.toPandas()
    cols = sorted(theirs.columns)
    pd.testing.assert_frame_equal(
        local.published[cols].sort_values("id").reset_index(drop=True),
        theirs[cols].sort_values("id").reset_index(drop=True),
        check_dtype=False,
    )


PROPERTY_LEVELS = [
    {"name": "low", "weight": 0.1, "values": ["s0", "s1"]},
    {"name": "mid", "weight": 0.4, "values": ["s2", "s3"]},
    {"name": "high", "weight": 0.8, "values": ["s4", "s5"]},
]


@st.composite
def jobs(draw: st.DrawFn) -> tuple[pd.DataFrame, dict]:
    n = draw(st.integers(min_value=12, max_value=150))
    seed = draw(st.integers(min_value=0, max_value=2**16))
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(str),
            "grade": rng.choice(["a", "b", "c", "d"], n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "sens": rng.choice([f"s{i}" for i in range(6)], n, p=[0.3, 0.2, 0.2, 0.1, 0.1, 0.1]),
            "note": [f"row{i}" for i in range(n)],
        }
    )
    if draw(st.booleans()):
        holes = rng.choice(n, size=min(3, n // 6), replace=False)
        frame.loc[holes, "colour"] = "?"
    algorithm = draw(st.sampled_from(sorted(algorithms_of("blocks"))))
    k = draw(st.integers(min_value=2, max_value=6))
    p = draw(st.integers(min_value=1, max_value=min(k, 4)))
    h = draw(st.integers(min_value=1, max_value=min(p, 3)))
    cfg = {
        "input": {"path": "unused.csv"},
        "attributes": [
            {"name": "age", "kind": "continuous"},
            {"name": "grade", "kind": "ordinal", "order": ["a", "b", "c", "d"]},
            {"name": "colour", "kind": "nominal"},
            {"name": "note", "kind": "keep"},
        ],
        "sensitive": {"name": "sens", "levels": PROPERTY_LEVELS},
        "model": {"name": "hpk", "k": k, "p": p, "h": h},
        "algorithm": {"name": algorithm},
        "partitioning": {
            "max_block_rows": draw(st.integers(min_value=max(k, 8), max_value=200)),
            "infeasible_blocks": draw(st.sampled_from(["merge", "reconcile"])),
        },
        "output": {"path": "unused", "publish": PUBLISH.get(algorithm, "centroids")},
        "seed": seed,
    }
    return frame, cfg


def _feasible(frame: pd.DataFrame, cfg: dict) -> bool:
    usable = frame[frame["colour"] != "?"]
    level = {v: lv["name"] for lv in PROPERTY_LEVELS for v in lv["values"]}
    m = cfg["model"]
    return (
        len(usable) >= m["k"]
        and usable["sens"].nunique() >= m["p"]
        and usable["sens"].map(level).nunique() >= m["h"]
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs())
def test_random_tables_and_parameters_keep_the_contract(job) -> None:
    """Any algorithm, random (H,p,k), block sizes and infeasible-block handling."""
    frame, raw = job
    if not _feasible(frame, raw):
        return
    cfg = parse_config(raw)
    result = run_job(LocalEngine(batch_rows=37), cfg, table=frame, commit=False)
    m = result.metrics
    assert m["rows_in"] == len(frame)
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"]
    assert m["suppressed_missing_values"] == int((frame["colour"] == "?").sum())
    published = result.published
    assert len(published) == m["rows_out"]
    level = {v: lv["name"] for lv in PROPERTY_LEVELS for v in lv["values"]}
    groups = published.assign(level=published["sens"].map(level)).groupby(
        ["age", "grade", "colour"]
    )
    model = raw["model"]
    assert groups.size().min() >= model["k"]
    assert groups["sens"].nunique().min() >= model["p"]
    assert groups["level"].nunique().min() >= model["h"]
    # Kept columns pass through: every published row's note is an input row's note.
    assert set(published["note"]) <= set(frame["note"])
    assert published["note"].is_unique
    again = run_job(LocalEngine(batch_rows=37), cfg, table=frame, commit=False).published
    cols = list(published.columns)
    pd.testing.assert_frame_equal(
        published.sort_values("note").reset_index(drop=True)[cols],
        again.sort_values("note").reset_index(drop=True)[cols],
    )
