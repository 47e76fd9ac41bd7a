"""A release's guarantee holds against what is published (issue 21).

t-closeness compares each class with the distribution of the *published* table: rows
that find no class are not suppressed under it but gathered in a residual class
(:func:`sparkanon.algorithms.repair.residual_absorption`), and verification binds the
model to the published rows, so a release whose suppressions shift the distribution
fails (exit 3) instead of committing ``verified: true``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms.repair import residual_absorption
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import PrivacyViolationError
from sparkanon.families import parse_config
from sparkanon.models import ClassSummaries, KAnonymity, ModelSet, SensitiveDomain, TCloseness
from sparkanon.pipeline import run_job

T = 0.2


def _bound(counts: np.ndarray, *models: Any) -> ModelSet:
    domain = SensitiveDomain(values=tuple(f"v{i}" for i in range(len(counts))), counts=counts)
    return ModelSet(models).bind(domain)


def test_residual_takes_the_class_that_completes_it() -> None:
    # Table: 10 rows of v0, 10 of v1 (q = 1/2, 1/2). Residual: 4 rows of v0 (distance 1/2).
    # Class 1 (0 v0, 6 v1) gives 4/10 v0: distance 0.1 <= 0.2, so it is taken alone.
    classes = np.array([[3, 2], [0, 6], [3, 2]])
    residual = np.array([4, 0])
    models = _bound(classes.sum(axis=0) + residual, TCloseness(t=T, measure="variational"))
    assert residual_absorption(classes, residual, models).tolist() == [1]


def test_residual_moves_towards_the_table_when_no_class_completes_it() -> None:
    # q = (12/24, 12/24); residual 6 v0. No single class brings it within 0.05; the
    # class of most v1 rows (index 2) goes first, then the smallest class that completes it.
    classes = np.array([[2, 1], [2, 3], [1, 5], [1, 3]])
    residual = np.array([6, 0])
    models = _bound(classes.sum(axis=0) + residual, TCloseness(t=0.05, measure="variational"))
    taken = residual_absorption(classes, residual, models)
    assert taken[0] == 2
    merged = residual + classes[taken].sum(axis=0)
    summary = ClassSummaries(merged.sum(keepdims=True), merged[None, :])
    assert bool(models.satisfied(summary)[0])


def test_a_satisfying_residual_absorbs_nothing() -> None:
    classes = np.array([[5, 5]])
    models = _bound(np.array([10, 10]), KAnonymity(k=4), TCloseness(t=T))
    assert residual_absorption(classes, np.array([2, 3]), models).size == 0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 6), min_size=3, max_size=3), min_size=1, max_size=12),
    st.lists(st.integers(0, 8), min_size=3, max_size=3),
    st.sampled_from([0.05, 0.15, 0.3]),
    st.integers(1, 6),
)
def test_residual_always_ends_satisfying_every_model(
    classes: list[list[int]], residual: list[int], t: float, k: int
) -> None:
    counts = np.array(classes)
    r = np.array(residual)
    total = counts.sum(axis=0) + r
    if total.sum() < k or r.sum() == 0:
        return
    models = _bound(total, KAnonymity(k=k), TCloseness(t=t, measure="variational"))
    taken = residual_absorption(counts, r, models)
    assert len(set(taken.tolist())) == taken.size
    merged = r + counts[taken].sum(axis=0)
    assert bool(models.satisfied(ClassSummaries(merged.sum(keepdims=True), merged[None, :]))[0])


# --- the job: a sensitive value concentrated in one region of the quasi-identifier ----------


def _skewed_input(tmp_path: Path) -> Path:
    """3,000 rows; value ``c`` is 90% of the rows with 40 < x < 50 and 5% elsewhere.

    With blocks of at most 60 rows, the blocks of that region cannot be t-close
    (t = 0.2), and many of their rows find no class in the nearest blocks either:
    at ff23eba they were suppressed (399 rows, most of them ``c``), the published
    distribution lost its ``c`` rows and 17 published classes were over t against it.
    """
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 100, 3000).round(1)
    p_c = np.where((x > 40) & (x < 50), 0.9, 0.05)
    s = np.where(rng.uniform(size=x.size) < p_c, "c", rng.choice(["a", "b", "d"], size=x.size))
    path = tmp_path / "skewed.csv"
    pd.DataFrame({"x": x, "s": s}).to_csv(path, index=False)
    return path


def _tcloseness_config(tmp_path: Path, out: str, algorithm: str = "mdav") -> Any:
    return parse_config(
        {
            "input": {"format": "csv", "path": str(_skewed_input(tmp_path))},
            "attributes": [{"name": "x", "kind": "continuous"}],
            "sensitive": {"name": "s"},
            "model": {"name": "t_closeness", "t": T, "measure": "variational"},
            "algorithm": {"name": algorithm},
            "partitioning": {"max_block_rows": 60, "infeasible_blocks": "reconcile"},
            "output": {"path": str(tmp_path / out), "format": "csv", "publish": "centroids"},
            "seed": 1,
        }
    )


def _worst_against_published(out: Path) -> float:
    """Largest variational distance of a published class from the published table (pandas)."""
    rows = pd.concat(pd.read_csv(p) for p in sorted((out / "data").glob("*.csv")))
    q = rows["s"].value_counts(normalize=True)
    worst = 0.0
    for _, group in rows.groupby("x"):
        p = group["s"].value_counts(normalize=True).reindex(q.index, fill_value=0.0)
        worst = max(worst, 0.5 * float((p - q).abs().sum()))
    return worst


@pytest.fixture(params=["local", pytest.param("spark", marks=pytest.mark.spark)])
def engine(request: pytest.FixtureRequest) -> Any:
    """Each test on the local engine and on Spark."""
    if request.param == "local":
        return LocalEngine(batch_rows=700)
    from sparkanon.engine.spark import SparkEngine

    return SparkEngine(request.getfixturevalue("spark"))


def test_tcloseness_holds_against_the_published_table(tmp_path: Path, engine: Any) -> None:
    cfg = _tcloseness_config(tmp_path, "out")
    metrics = run_job(engine, cfg).metrics
    assert metrics["rows_out"] == metrics["rows_in"] == 3000
    assert metrics["rows_suppressed"] == 0
    assert metrics["residual_class"]["rows_without_class"] > 0
    assert metrics["verified"] is True
    assert _worst_against_published(tmp_path / "out") <= T + 1e-9


def test_suppression_that_shifts_the_distribution_fails_verification(
    tmp_path: Path, engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Suppress as ff23eba did: verification must now compare with the published rows.
    monkeypatch.setattr("sparkanon.per_block.reconcile.avoids_suppression", lambda models: False)
    cfg = _tcloseness_config(tmp_path, "out")
    with pytest.raises(PrivacyViolationError, match="violate"):
        run_job(engine, cfg)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("algorithm", ["maa_slie", "kl_cluster"])
def test_every_clustering_algorithm_meets_tcloseness_against_the_published_table(
    tmp_path: Path, algorithm: str
) -> None:
    cfg = _tcloseness_config(tmp_path, "out", algorithm)
    metrics = run_job(LocalEngine(batch_rows=700), cfg).metrics
    assert metrics["verified"] is True and metrics["rows_out"] == 3000
    assert _worst_against_published(tmp_path / "out") <= T + 1e-9


# --- item 2: an empty release, or one above output.max_suppressed_share, fails ---------------


def test_release_size_problem_names_rows_causes_and_limit() -> None:
    from sparkanon.stages.release import release_size_problem, suppression_causes

    metrics = {
        "rows_in": 100,
        "rows_out": 30,
        "suppressed_missing_values": 50,
        "suppressed_unplaced": 20,
        "suppressed_malformed_records": 0,
        "suppressed_classes": 3,
    }
    causes = suppression_causes(metrics)
    assert causes == {"missing_values": 50, "unplaced": 20}
    text = release_size_problem(100, 30, causes, 0.5)
    assert text is not None
    assert "70 of 100 rows (70.0%)" in text and "missing_values 50, unplaced 20" in text
    assert "max_suppressed_share to at least 0.70" in text
    assert release_size_problem(100, 30, causes, 0.7) is None
    assert "publish no row" in str(release_size_problem(100, 0, causes, 1.0))


def test_nested_reasons_are_causes() -> None:
    from sparkanon.stages.release import suppression_causes

    metrics = {"suppressed_unplaced": 7, "suppressed_by_reason": {"a": 5, "b": 2, "c": 0}}
    assert suppression_causes(metrics) == {"a": 5, "b": 2}


def _mostly_missing_job(tmp_path: Path, max_share: float | None = None) -> Any:
    """k = 5 by MDAV on 3,000 skewed rows of which 1,800 (60%) have no ``x``."""
    frame = pd.read_csv(_skewed_input(tmp_path))
    frame.loc[frame.index % 5 < 3, "x"] = np.nan
    path = tmp_path / "missing.csv"
    frame.to_csv(path, index=False)
    output: dict[str, Any] = {"path": str(tmp_path / "out"), "format": "csv"}
    if max_share is not None:
        output["max_suppressed_share"] = max_share
    return parse_config(
        {
            "input": {"format": "csv", "path": str(path), "on_missing": "drop"},
            "attributes": [{"name": "x", "kind": "continuous"}],
            "sensitive": {"name": "s"},
            "model": {"name": "k", "k": 5},
            "algorithm": {"name": "mdav"},
            "output": output,
        }
    )


def test_suppressing_more_than_the_limit_fails_and_writes_nothing(
    tmp_path: Path, engine: Any
) -> None:
    from sparkanon.errors import ReleaseTooSmallError

    with pytest.raises(ReleaseTooSmallError, match=r"1800 of 3000 rows .*missing_values 1800"):
        run_job(engine, _mostly_missing_job(tmp_path))
    assert not (tmp_path / "out").exists()
    metrics = run_job(engine, _mostly_missing_job(tmp_path, 0.6)).metrics
    assert metrics["rows_out"] == 1200 and (tmp_path / "out").exists()


@pytest.mark.parametrize("algorithm", ["paa", "apa"])
def test_rt_run_that_publishes_nothing_fails_naming_the_buckets(
    tmp_path: Path, algorithm: str
) -> None:
    from sparkanon.errors import ReleaseTooSmallError
    from tests._inputs import rt_config, write_csv

    # 120 records whose sets hold one or two items of department A only: 10 distinct sets,
    # none with k = 20 records, all generalizing to {A}: one TBucket, fewer than l = 5.
    rng = np.random.default_rng(3)
    sets = [
        "|".join(rng.choice(["a1", "a2", "a3", "a4"], rng.integers(1, 3), replace=False))
        for _ in range(120)
    ]
    frame = pd.DataFrame(
        {
            "id": np.arange(120),
            "age": rng.integers(18, 80, 120),
            "sex": rng.choice(["M", "F"], 120),
            "zip": rng.integers(10000, 10100, 120),
            "disease": sets,
        }
    )
    cfg = rt_config(
        tmp_path,
        write_csv(tmp_path, frame),
        model={"name": "kl_diversity", "k": 20, "l": 5},
        algorithm={"name": algorithm},
        output={"path": str(tmp_path / "out"), "publish": "anatomy", "max_suppressed_share": 1.0},
    )
    with pytest.raises(ReleaseTooSmallError, match="publish no row") as info:
        run_job(LocalEngine(), parse_config(cfg))
    assert "fewer than 5 distinct sets" in str(info.value)
    assert not (tmp_path / "out").exists()


# --- item 6: losses that count each suppressed record as fully lost --------------------------


def test_fully_lost_mean_by_hand() -> None:
    from sparkanon.metrics.ncp import fully_lost_mean

    # 30 published rows at 20%, 10 suppressed at 100%: (600 + 1000) / 40 = 40%.
    assert fully_lost_mean(20.0, 30, 10, 100.0) == pytest.approx(40.0)
    assert fully_lost_mean(0.3, 7, 0, 1.0) == pytest.approx(0.3)
    assert fully_lost_mean(0.0, 0, 5, 1.0) == 1.0
    assert fully_lost_mean(0.0, 0, 0, 1.0) == 0.0


def test_one_table_losses_with_suppressed_rows(tmp_path: Path) -> None:
    m = run_job(LocalEngine(), _mostly_missing_job(tmp_path, 0.6), commit=False).metrics
    lost = m["loss_with_suppressed"]
    # 1,200 published rows, 1,800 suppressed (60%): GCP = (GCP * 1200 + 100 * 1800) / 3000.
    assert lost["GCP"] == pytest.approx((m["GCP"] * 1200 + 100 * 1800) / 3000)
    assert lost["NCP_by_attribute"]["x"] == pytest.approx(
        (m["NCP_by_attribute"]["x"] * 1200 + 100 * 1800) / 3000
    )
    assert lost["NCP"] == pytest.approx((m["NCP"] * m["classes"] + 1800) / (m["classes"] + 1800))
    assert lost["GCP"] > 60 > m["GCP"]


def test_rt_item_ncp_with_suppressed_does_not_improve_as_privacy_tightens(tmp_path: Path) -> None:
    from tests._inputs import rt_config, rt_frame, write_csv

    data = write_csv(tmp_path, rt_frame(400, seed=5))
    seen = []
    for k, l in [(2, 2), (8, 4)]:  # noqa: E741
        cfg = rt_config(
            tmp_path,
            data,
            model={"name": "kl_diversity", "k": k, "l": l},
            output={"path": str(tmp_path / "out"), "publish": "anatomy", "max_suppressed_share": 1},
        )
        m = run_job(LocalEngine(), parse_config(cfg), commit=False).metrics
        assert m["loss_with_suppressed"]["item_ncp"] >= m["item_ncp"]
        seen.append(m["loss_with_suppressed"]["item_ncp"])
    assert seen[1] >= seen[0]
