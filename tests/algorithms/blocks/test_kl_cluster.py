"""(K,L)-anonymity clustering (Chai and Feng 2015): sensitive-value k-means, record clustering, jobs.

Hand-worked cases check the reference matrix, its distances and the improved k-means
on tiny matrices; property tests run ``kl_cluster`` on random small tables with all
four kinds of quasi-identifier; two local-engine jobs on an Adult sample check
generalized publishing and the NCP/GCP metrics.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkanon.algorithms import ALGORITHMS, BlockContext, cluster_block, place_rows
from sparkanon.algorithms._block import Block
from sparkanon.algorithms.blocks.kl_cluster import (
    KLCluster,
    _Growing,
    cluster_sensitive_values,
    profile_distances,
    reference_profiles,
)
from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.ranges import RangeNcp
from sparkanon.attributes.schema import Schema
from sparkanon.engine.local import LocalEngine
from sparkanon.families import parse_config
from sparkanon.metrics.ncp import class_ncp
from sparkanon.models import HPKAnonymity
from sparkanon.pipeline import run_job
from tests._adult import ROOT, adult_config, adult_sample, run_adult
from tests._helpers import FIVE_LEVELS, fast, make_frame

FAST = fast(30)


@pytest.fixture(scope="module")
def edu(edu_taxonomy: Taxonomy) -> Taxonomy:
    return edu_taxonomy


@pytest.fixture(scope="module")
def schema(mixed_schema: Schema) -> Schema:
    return mixed_schema


def test_registered_for_p_sensitive_and_k() -> None:
    assert ALGORITHMS["kl_cluster"].implementation is KLCluster
    assert KLCluster.guarantees == frozenset({"p_sensitive", "k", "distinct_l"})


# ---------------------------------------------------------------------------
# Step 1: reference matrix and distances
# ---------------------------------------------------------------------------


def test_reference_profiles_and_total_variation_distance() -> None:
    grade = ordinal_kind("grade", 1.0, ("a", "b", "c"))
    sex = nominal_kind("sex", 1.0, ("F", "M"))
    # value 0: grades a, a, b and sexes F, F, M; value 1: grades c, c and sexes F, M
    codes = [np.array([0, 0, 1, 2, 2]), np.array([0, 0, 1, 0, 1])]
    value = np.array([0, 0, 0, 1, 1])
    profiles = reference_profiles([grade, sex], codes, value, 2)
    np.testing.assert_allclose(profiles[0], [[2 / 3, 1 / 3, 0], [0, 0, 1]])
    np.testing.assert_allclose(profiles[1], [[2 / 3, 1 / 3], [1 / 2, 1 / 2]])
    # TV: grade 1/2 (2/3 + 1/3 + 1) = 1; sex 1/2 (1/6 + 1/6) = 1/6; mean (1 + 1/6) / 2
    dist = profile_distances(profiles, profiles, np.array([1.0, 1.0]))
    assert dist[0, 1] == pytest.approx(7 / 12)
    assert dist[1, 0] == pytest.approx(7 / 12)
    assert dist[0, 0] == 0.0
    # Weighted mean: grade counts three times as much: (3 * 1 + 1/6) / 4
    weighted = profile_distances(profiles, profiles, np.array([3.0, 1.0]))
    assert weighted[0, 1] == pytest.approx((3 + 1 / 6) / 4)


def test_continuous_profiles_use_coarse_bins() -> None:
    age = ContinuousKind(name="age", weight=1.0, low=0.0, high=1.0)
    codes = [np.array([0.01, 0.02, 0.99])]
    profiles = reference_profiles([age], codes, np.array([0, 0, 1]), 2)
    assert profiles[0].shape == (2, 16)
    assert profiles[0][0, 0] == 1.0 and profiles[0][1, 15] == 1.0


# ---------------------------------------------------------------------------
# Step 2: improved k-means over sensitive values
# ---------------------------------------------------------------------------


def one_attribute(rows: list[list[float]]) -> list[np.ndarray]:
    return [np.array(rows, dtype=float)]


def test_kmeans_pairs_the_similar_values() -> None:
    # Distances (TV): a-b 0.1, c-d 0.1, a-c 1 (the farthest pair, first found), a-d 0.9 ...
    profiles = one_attribute([[1, 0, 0], [0.9, 0.1, 0], [0, 0, 1], [0, 0.1, 0.9]])
    labels = cluster_sensitive_values(profiles, np.array([1.0]), n_clusters=2, max_iterations=10)
    assert labels.tolist() == [0, 0, 1, 1]


def test_kmeans_threshold_caps_clusters_and_third_centre_is_farthest() -> None:
    # Five values, L = 2: G = 3 clusters, threshold ceil(5 / 3) = 2 values each.
    # Farthest pair: v0 = [1,0,0] and v2 = [0,0,1] (TV 1; v0-v4 also 1 but found later).
    # v0 takes its nearest, v1; v2 takes its nearest, v3. The last value v4 = [0,1,0]
    # is the third centre.
    profiles = one_attribute([[1, 0, 0], [0.8, 0.2, 0], [0, 0, 1], [0, 0.2, 0.8], [0, 1, 0]])
    labels = cluster_sensitive_values(profiles, np.array([1.0]), n_clusters=3, max_iterations=10)
    assert labels.tolist() == [0, 0, 1, 1, 2]


def test_kmeans_is_stable_under_reassignment() -> None:
    # Values on a line (two bins): p(bin 0) = 1, 0.95, 0.55, 0.5, 0. Farthest pair v0, v4;
    # threshold ceil(5 / 2) = 3: v0 takes v1 and v2, v4 takes v3. Centroids 0.83 and 0.25:
    # v2 (0.55) is nearer the first (0.28 < 0.30), so reassignment changes nothing.
    profiles = one_attribute([[1, 0], [0.95, 0.05], [0.55, 0.45], [0.5, 0.5], [0, 1]])
    labels = cluster_sensitive_values(profiles, np.array([1.0]), n_clusters=2, max_iterations=10)
    assert labels.tolist() == [0, 0, 0, 1, 1]
    assert cluster_sensitive_values(profiles, np.array([1.0]), 1, 10).tolist() == [0] * 5


# ---------------------------------------------------------------------------
# Step 3: clustering records
# ---------------------------------------------------------------------------


def random_frame(seed: int, n: int, n_values: int) -> tuple:
    rng = np.random.default_rng(seed)
    codes = [
        np.round(rng.random(n), 2),
        rng.integers(0, 15, n),
        rng.integers(0, 7, n),
        rng.integers(0, 3, n),
    ]
    sens = rng.integers(0, n_values, n)
    return make_frame(np.arange(100, 100 + n), codes, sens, FIVE_LEVELS), codes, sens


def check_classes(labels: np.ndarray, sens: np.ndarray, k: int, ell: int) -> None:
    assert (labels >= 0).all()
    for c in np.unique(labels):
        members = labels == c
        assert members.sum() >= k
        assert len(np.unique(sens[members])) >= ell


@FAST
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(2, 90),
    n_values=st.integers(1, 10),
    k=st.integers(2, 8),
    ell=st.integers(1, 5),
)
def test_every_class_has_k_rows_and_l_values(
    schema: Schema, seed: int, n: int, n_values: int, k: int, ell: int
) -> None:
    ell = min(ell, k)
    frame, codes, sens = random_frame(seed, n, n_values)
    model = HPKAnonymity(k=k, p=ell, h=1)
    ctx = BlockContext(schema=schema, model=model, max_iterations=5)
    labels = cluster_block(frame, ctx, "kl_cluster", seed, 0)
    if n < k or len(np.unique(sens)) < ell:
        assert (labels == -1).all()
        return
    check_classes(labels, sens, k, ell)
    # Deterministic, and independent of the order rows arrive in.
    shuffled = np.random.default_rng(seed).permutation(n)
    again = cluster_block(frame.iloc[shuffled], ctx, "kl_cluster", seed + 1, 3)
    same = np.empty(n, dtype=np.int64)
    same[shuffled] = again
    np.testing.assert_array_equal(labels, same)


@FAST
@given(seed=st.integers(0, 2**16), size=st.integers(2, 12))
def test_ncp_without_each_member_is_the_ncp_of_the_others(
    schema: Schema, seed: int, size: int
) -> None:
    """Steps 8-10's swap scores: computed from each attribute's two lowest and highest codes."""
    frame, _, _ = random_frame(seed, 40, 5)
    block = Block(frame, BlockContext(schema=schema, model=HPKAnonymity(k=2)))
    members = np.random.default_rng(seed).choice(40, size, replace=False)
    grow = _Growing(block, [RangeNcp(kind) for kind in block.kinds], int(members[0]))
    grow.members = members.tolist()
    want = [
        class_ncp(block.kinds, [codes[np.delete(members, j)] for codes in block.codes])
        for j in range(size)
    ]
    assert grow.ncp_without_each().tolist() == want


def test_classes_stay_small_and_beat_one_big_class(schema: Schema) -> None:
    frame, codes, sens = random_frame(7, 400, 10)
    model = HPKAnonymity(k=5, p=3, h=1)
    labels = cluster_block(frame, BlockContext(schema=schema, model=model), "kl_cluster", 0, 0)
    check_classes(labels, sens, 5, 3)
    sizes = np.bincount(labels)
    assert sizes.max() <= 2 * 5 - 1
    penalty = sum(
        s * class_ncp(schema.kinds, [c[labels == g] for c in codes]) for g, s in enumerate(sizes)
    )
    whole = len(labels) * class_ncp(schema.kinds, codes)
    assert penalty < 0.6 * whole


def test_place_joins_the_class_of_least_ncp_growth(schema: Schema) -> None:
    # Two classes far apart on age; an extra row near the second joins it.
    codes = [
        np.array([0.1, 0.1, 0.12, 0.9, 0.9, 0.92]),
        np.zeros(6, dtype=np.int64),
        np.zeros(6, dtype=np.int64),
        np.zeros(6, dtype=np.int64),
    ]
    frame = make_frame(np.arange(6), codes, np.array([0, 1, 2, 0, 1, 2]), FIVE_LEVELS)
    labels = np.array([0, 0, 0, 1, 1, 1])
    extra_codes = [np.array([0.95, 0.05]), np.zeros(2, np.int64), np.zeros(2, np.int64)]
    extra_codes.append(np.zeros(2, np.int64))
    extra = make_frame(np.array([50, 51]), extra_codes, np.array([3, 4]), FIVE_LEVELS)
    model = HPKAnonymity(k=3, p=2, h=1)
    ctx = BlockContext(schema=schema, model=model)
    placed = place_rows(frame, labels, extra, ctx, "kl_cluster", 0, 0)
    assert placed.tolist() == [1, 0]
    none = place_rows(frame, np.full(6, -1), extra, ctx, "kl_cluster", 0, 0)
    assert none.tolist() == [-1, -1]


# ---------------------------------------------------------------------------
# Jobs on the local engine
# ---------------------------------------------------------------------------

RANGE_OR_NUMBER = re.compile(r"^(\[\d+, \d+\]|\d+)$")


def test_kl_cluster_job_publishes_generalized_values(tmp_path: Path) -> None:
    raw, result = run_adult(
        tmp_path,
        400,
        model={"name": "p_sensitive", "k": 5, "p": 2},
        algorithm={"name": "kl_cluster", "max_iterations": 5},
        partitioning={"max_block_rows": 200},
        output={"publish": "generalized"},
    )
    m = result.metrics
    assert m["verified"] and m["violations"] == 0
    assert m["rows_out"] + m["rows_suppressed"] == m["rows_in"] == 400
    assert m["publish"] == "generalized"
    assert m["class_size"]["min"] >= 5
    assert 0.0 < m["GCP"] < 100.0 and m["NCP"] > 0.0
    published = result.published
    assert len(published) == m["rows_out"]
    ages = published["age"].astype(str)
    assert ages.map(lambda a: bool(RANGE_OR_NUMBER.match(a))).all()
    assert ages.str.startswith("[").any()
    assert published["sex"].isin(["Male", "Female", "*"]).all()
    # The same groups an independent check would form satisfy (K, L).
    qi = [a["name"] for a in raw["attributes"] if a["kind"] not in ("keep", "identifier")]
    groups = published.groupby(qi)["occupation"]
    assert groups.size().min() >= 5 and groups.nunique().min() >= 2
    again = run_job(LocalEngine(), parse_config(raw), commit=False).published
    cols = list(published.columns)
    assert (
        published.sort_values(cols)
        .reset_index(drop=True)
        .equals(again.sort_values(cols).reset_index(drop=True))
    )


def test_centroid_run_reports_ncp_and_gcp(tmp_path: Path) -> None:
    raw, result = run_adult(
        tmp_path,
        200,
        model={"name": "hpk", "h": 2, "p": 2, "k": 4},
        partitioning={"max_block_rows": 200},
    )
    m = result.metrics
    assert m["verified"] and m["publish"] == "centroids"
    assert 0.0 < m["GCP"] < 100.0
    assert 0.0 < m["NCP"] <= len([a for a in raw["attributes"] if a["kind"] != "keep"])
    assert result.published["age"].dtype.kind == "f"


def test_leftover_rows_keep_classes_below_2k_on_adult(tmp_path: Path) -> None:
    """Step 11 fills classes that have room first: no class swallows the leftovers.

    Without the bound, K=20, L=5 on the first 8,000 Adult rows gave a class of 106 rows.
    """
    sample = adult_sample(tmp_path, 8000)
    raw = adult_config(
        tmp_path, sample, tmp_path / "out", conf=ROOT / "conf" / "adult_kl_chai2015.yaml"
    )
    raw["model"].update({"k": 20, "p": 5})
    metrics = run_job(LocalEngine(), parse_config(raw), commit=False).metrics
    assert metrics["verified"] is True
    assert metrics["class_size"]["min"] >= 20
    assert metrics["class_size"]["max"] <= 2 * 20 - 1
