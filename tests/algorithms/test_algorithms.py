"""Per-block algorithms (MAA-SLIE, GPKC), cross-block placement and blocking cuts.

Hand-worked cases use Shi et al. 2024, Table 1 (ages 21..50, Disease with levels low {Flu, Fever},
middle {Diabetes, Hepatitis}, high {HIV, Cancer}); property tests run MAA-SLIE, GPKC and
(for the properties every per-block algorithm shares) MAA-SAE and MAA-MINIL on random small
tables with all four kinds of quasi-identifier and five sensitivity levels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms import BlockContext, cluster_block, place_rows
from sparkanon.algorithms.cuts import BlockTree
from sparkanon.algorithms.cuts import median_cut as _median_cuts
from sparkanon.attributes.hierarchy import Taxonomy, load_arx_hierarchy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    categorical_kind,
    nominal_kind,
)
from sparkanon.attributes.schema import LEVEL, RID, SENS, Schema, SensitiveLevels
from sparkanon.models import HPKAnonymity
from tests._helpers import (
    FAST,
    FIVE_LEVELS,
    assert_model_holds,
    make_frame,
    partition,
    random_codes,
    random_tables,
)

ALGOS = ["maa_slie", "gpkc", "gpkc_paper"]

# ---------------------------------------------------------------------------
# Fixtures and helpers
# ---------------------------------------------------------------------------

# Shi et al. 2024, Table 1
T1_AGES = [21, 26, 25, 48, 32, 45, 35, 50]
T1_ZIPS = ["114235", "114751", "115032", "124151", "115012", "115451", "115313", "113726"]
T1_DISEASE = ["HIV", "HIV", "Flu", "Diabetes", "Cancer", "Fever", "Hepatitis", "Flu"]

DISEASE = SensitiveLevels(
    name="Disease",
    values=("Flu", "Fever", "Diabetes", "Hepatitis", "HIV", "Cancer"),
    level_of=np.array([0, 0, 1, 1, 2, 2]),
    level_names=("low", "middle", "high"),
    weights=np.array([0.1, 0.4, 0.8]),
)


@pytest.fixture(scope="module")
def zip_taxonomy(tmp_path_factory: pytest.TempPathFactory) -> Taxonomy:
    # ZipCode generalised digit by digit: 114235;11423*;1142**;114***;11****;1*****;*
    lines = [
        ";".join([z] + [z[:i] + "*" * (6 - i) for i in range(5, 0, -1)] + ["*"]) for z in T1_ZIPS
    ]
    path = tmp_path_factory.mktemp("hier") / "zip.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_arx_hierarchy(path, "ZipCode")


def table1_frame(schema: Schema) -> pd.DataFrame:
    codes = []
    for i, kind in enumerate(schema.kinds):
        raw = pd.Series(T1_AGES if i == 0 else T1_ZIPS)
        c, invalid = kind.encode(raw)
        assert not invalid.any()
        codes.append(c)
    sens, _, invalid = DISEASE.encode(pd.Series(T1_DISEASE))
    assert not invalid.any()
    return make_frame(np.arange(1, 9), codes, sens, DISEASE)


def can_host(frame: pd.DataFrame, model: HPKAnonymity) -> bool:
    return (
        len(frame) >= model.k
        and frame[SENS].nunique() >= model.p
        and frame[LEVEL].nunique() >= model.h
    )


# ---------------------------------------------------------------------------
# Shi et al. 2024, Table 1, Age only: traced by hand
# ---------------------------------------------------------------------------
#
# Age codes (x - 21) / 29, in units of 1/29:
#   t1 0 HIV(H)  t2 5 HIV(H)  t3 4 Flu(L)  t4 27 Diabetes(M)
#   t5 11 Cancer(H)  t6 24 Fever(L)  t7 14 Hepatitis(M)  t8 29 Flu(L)
# (H,p,k) = (2,2,2). Pair loss = |a - b| (both rows are |a - b| / 2 from the mean).
#
# Common start: the block's mean is 114/8 = 14.25 -> central row t7 (14); farthest from t7
# is t8 (15 away, t1 is 14).
#
# GPKC (least loss among rows that add a new value and a new level, since k = 2):
#   class A from t8 (Flu, L): candidates t1 t2 t4 t5 t7 -> t4 (loss 2).  A = {t8, t4}
#   farthest from t8: t1. class B from t1 (HIV, H): t3 (4), t6 (24), t7 (14) -> t3.
#   B = {t1, t3}. farthest from t1 among t2 t5 t6 t7: t6 (24). class C from t6 (Fever, L):
#   t2 (19), t5 (13), t7 (10) -> t7. C = {t6, t7}. Left: t2, t5, both high -> no 4th class.
#   Leftovers, least loss increase (either order):
#     t2 (5):  A -> +28.67, B {0,4,5} loss 6 -> +2, C -> +9.33        => B
#     t5 (11): A -> +20.67, B -> +8 (or +6 after t2), C {24,14,11} 15.33 -> +5.33 => C
#   GPKC: {t4, t8}, {t1, t2, t3}, {t5, t6, t7}.
#
# MAA-SLIE, PSI = 0.5 HEC + 0.5 / InfoLoss, level weights (0.1, 0.4, 0.8), lg = log10:
#   class A from t8: 1/IL dominates, t4 has IL 2/29 -> A = {t8, t4}.
#   class B from t1: admissible t3 (IL 4/29), t6 (24/29), t7 (14/29) -> t3. B = {t1, t3}.
#   class C from t6: t7: 0.5 * 0.5 * 0.150515 + 0.5 * 29/10 = 1.4876;
#                    t5: 0.5 * 0.9 * 0.150515 + 0.5 * 29/13 = 1.1831;
#                    t2: 0.5 * 0.9 * 0.150515 + 0.5 * 29/19 = 0.8309   -> C = {t6, t7}.
#   Leftovers by largest PSI of the grown class:
#     t2: A + t2: 0.5 * 0.20675 + 0.5 * 29/30.67 = 0.576 ; B + t2: 0.5 * 0.10982 + 0.5 * 29/6
#         = 2.472 ; C + t2: 0.5 * 0.20675 + 0.5 * 29/19.33 = 0.853                  => B
#     t5: B + t5 ({0,4,11} or {0,4,5,11}, loss 12/29): 1.263 or 1.253 ;
#         C + t5: 0.5 * 0.20675 + 0.5 * 29/15.33 = 1.049 ; A + t5: 0.743           => B
#   MAA-SLIE: {t4, t8}, {t1, t2, t3, t5}, {t6, t7}.

# gpkc_paper, IL(cl) = |cl| * (max age - min age) / 29, new levels first while H = 2 is
# missing (every class below is then done at k = 2 rows):
#   reference t7 (35, the central row); seed: the farthest by IL of the pair, t8 (50).
#   A from t8 (Flu, low): rows of another level t1 t2 t4 t5 t7, least rise t4 (48: 2*2/29)
#     -> A = {t8, t4}. Next seed farthest from t8: t1 (21).
#   B from t1 (HIV, high): other levels t3 t6 t7 -> t3 (25: 2*4/29) -> B = {t1, t3}.
#   Seed farthest from t1 among t2 t5 t6 t7: t6 (45). C from t6 (Fever, low): other levels
#     t2 t5 t7 -> t7 (35: 2*10/29) -> C = {t6, t7}.
#   Left t2 (HIV) and t5 (Cancer): both high, the pool cannot host a class (H = 2).
#   Leftovers by least IL rise, in either order: t2 (26) -> B (rise 7/29 against 37 for C
#     and 68 for A); t5 (32) -> C (19/29 against 25 or 29 for B, 50 for A).
#   gpkc_paper: {t4, t8}, {t1, t2, t3}, {t5, t6, t7}, as GPKC.
TABLE1_AGE_ONLY = {
    "gpkc": {frozenset({4, 8}), frozenset({1, 2, 3}), frozenset({5, 6, 7})},
    "gpkc_paper": {frozenset({4, 8}), frozenset({1, 2, 3}), frozenset({5, 6, 7})},
    "maa_slie": {frozenset({4, 8}), frozenset({1, 2, 3, 5}), frozenset({6, 7})},
}


def table1_age_ctx() -> BlockContext:
    schema = Schema(
        kinds=(ContinuousKind(name="Age", weight=1.0, low=21.0, high=50.0),), sensitive=DISEASE
    )
    return BlockContext(schema=schema, model=HPKAnonymity(k=2, p=2, h=2))


@pytest.mark.parametrize("algorithm", ALGOS)
def test_table1_age_only_hand_traced(algorithm: str) -> None:
    ctx = table1_age_ctx()
    frame = table1_frame(ctx.schema)
    labels = cluster_block(frame, ctx, algorithm, seed=7, block_id=1)
    assert_model_holds(frame, labels, ctx.model)
    assert partition(frame, labels) == TABLE1_AGE_ONLY[algorithm]


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_table1_age_only_does_not_depend_on_seed(algorithm: str, seed: int) -> None:
    # The leftovers land in the same classes whatever order they are placed in (see trace).
    ctx = table1_age_ctx()
    frame = table1_frame(ctx.schema)
    assert (
        partition(frame, cluster_block(frame, ctx, algorithm, seed, 3))
        == TABLE1_AGE_ONLY[algorithm]
    )


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("zip_as", ["categorical", "nominal"])
def test_table1_age_and_zip_is_222_anonymous(
    algorithm: str, zip_as: str, zip_taxonomy: Taxonomy
) -> None:
    zip_kind = (
        categorical_kind("ZipCode", 1.0, zip_taxonomy)
        if zip_as == "categorical"
        else nominal_kind("ZipCode", 1.0, tuple(T1_ZIPS))
    )
    schema = Schema(
        kinds=(ContinuousKind(name="Age", weight=1.0, low=21.0, high=50.0), zip_kind),
        sensitive=DISEASE,
    )
    ctx = BlockContext(schema=schema, model=HPKAnonymity(k=2, p=2, h=2))
    frame = table1_frame(schema)
    labels = cluster_block(frame, ctx, algorithm, seed=0, block_id=1)
    # Like Table 3: every row published, every class with >= 2 rows, values and levels.
    assert_model_holds(frame, labels, ctx.model)
    # 8 rows, k = 2: at most 4 classes. No level holds more than 3 rows (H: t1 t2 t5,
    # M: t4 t7, L: t3 t6 t8), so any 4 remaining rows still span 2 levels (hence 2 values)
    # and a pool that can host a class always yields one: at least 3 classes.
    assert 3 <= len(set(labels.tolist())) <= 4


def test_table1_two_clusters_exact() -> None:
    # Two far-apart groups of ages, each diverse enough on its own: both algorithms must
    # find exactly the two groups for (2,3,4)-anonymity.
    ages = [20, 21, 22, 23, 60, 61, 62, 63]
    disease = ["HIV", "Flu", "Diabetes", "Fever", "Cancer", "Fever", "Hepatitis", "HIV"]
    schema = Schema(
        kinds=(ContinuousKind(name="Age", weight=1.0, low=20.0, high=63.0),), sensitive=DISEASE
    )
    ctx = BlockContext(schema=schema, model=HPKAnonymity(k=4, p=3, h=2))
    codes, _ = schema.kinds[0].encode(pd.Series(ages))
    sens, _, _ = DISEASE.encode(pd.Series(disease))
    frame = make_frame(np.arange(10, 18), [codes], sens, DISEASE)
    for algorithm in ALGOS:
        labels = cluster_block(frame, ctx, algorithm, seed=0, block_id=0)
        assert partition(frame, labels) == {frozenset(range(10, 14)), frozenset(range(14, 18))}, (
            algorithm
        )


# ---------------------------------------------------------------------------
# Blocks that cannot host a class
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize(
    ("disease", "model"),
    [
        # 3 rows < k = 4
        (["HIV", "Flu", "Diabetes"], HPKAnonymity(k=4, p=2, h=2)),
        # 4 rows but only 1 distinct value < p = 2
        (["Flu", "Flu", "Flu", "Flu"], HPKAnonymity(k=4, p=2, h=1)),
        # 4 rows, 2 values, but a single (high) level < H = 2
        (["HIV", "Cancer", "HIV", "Cancer"], HPKAnonymity(k=4, p=2, h=2)),
        # 5 rows, but only 2 values < p = 3 and 2 levels < H = 3
        (["Flu", "HIV", "Flu", "HIV", "Flu"], HPKAnonymity(k=3, p=3, h=3)),
    ],
)
def test_infeasible_block_returns_all_minus_one(
    algorithm: str, disease: list[str], model: HPKAnonymity
) -> None:
    schema = Schema(
        kinds=(ContinuousKind(name="Age", weight=1.0, low=0.0, high=100.0),), sensitive=DISEASE
    )
    ctx = BlockContext(schema=schema, model=model)
    sens, _, _ = DISEASE.encode(pd.Series(disease))
    frame = make_frame(np.arange(len(disease)), [np.linspace(0, 1, len(disease))], sens, DISEASE)
    labels = cluster_block(frame, ctx, algorithm, seed=0, block_id=0)
    assert labels.shape == (len(disease),)
    assert (labels == -1).all()


# ---------------------------------------------------------------------------
# Property tests on random tables with all four kinds
# ---------------------------------------------------------------------------


# Each per-block algorithm on the random tables of its models: (H,p,k) for MAA-SLIE and
# GPKC, p-sensitive k-anonymity (H = 1) on smaller tables for MAA-SAE and MAA-MINIL.
TABLES = {
    **{algorithm: random_tables() for algorithm in ALGOS},
    **{
        algorithm: random_tables(rows=(6, 90), max_k=10, levels=False)
        for algorithm in ("maa_sae", "maa_minil")
    },
}


def clustered(
    data: st.DataObject, algorithm: str, schema: Schema, seed: int, block_id: int
) -> tuple[pd.DataFrame, HPKAnonymity, BlockContext, np.ndarray]:
    """A random table for ``algorithm`` (drawn from ``data``), its context and its labels."""
    frame, model = data.draw(TABLES[algorithm])
    ctx = BlockContext(schema=schema, model=model)
    return frame, model, ctx, cluster_block(frame, ctx, algorithm, seed=seed, block_id=block_id)


@pytest.mark.parametrize("algorithm", sorted(TABLES))
@FAST
@given(data=st.data(), seed=st.integers(0, 1000))
def test_every_row_labelled_and_every_class_satisfies_model(
    algorithm: str, data: st.DataObject, seed: int, mixed_schema: Schema
) -> None:
    frame, model, _, labels = clustered(data, algorithm, mixed_schema, seed, block_id=5)
    assert can_host(frame, model)
    assert labels.shape == (len(frame),)
    assert_model_holds(frame, labels, model)
    # Labels are 0..m-1 (place_rows relies on it).
    assert sorted(set(labels.tolist())) == list(range(labels.max() + 1))


@pytest.mark.parametrize("algorithm", sorted(TABLES))
@FAST
@given(data=st.data(), seed=st.integers(0, 1000), shuffle_seed=st.integers(0, 1000))
def test_deterministic_and_independent_of_row_order(
    algorithm: str, data: st.DataObject, seed: int, shuffle_seed: int, mixed_schema: Schema
) -> None:
    frame, _, ctx, first = clustered(data, algorithm, mixed_schema, seed, block_id=2)
    again = cluster_block(frame.copy(), ctx, algorithm, seed=seed, block_id=2)
    assert np.array_equal(first, again)
    perm = np.random.default_rng(shuffle_seed).permutation(len(frame))
    by_rid = dict(zip(frame[RID].tolist(), first.tolist(), strict=True))
    # The rows in another order, with their index or a fresh one: the same labels per row.
    for shuffled in (frame.iloc[perm], frame.iloc[perm].reset_index(drop=True)):
        labels = cluster_block(shuffled, ctx, algorithm, seed=seed, block_id=2)
        assert labels.tolist() == [by_rid[r] for r in shuffled[RID].tolist()]


@pytest.mark.parametrize("algorithm", ALGOS)
@FAST
@given(case=random_tables())
def test_infeasible_random_block_all_minus_one(
    algorithm: str, case: tuple[pd.DataFrame, HPKAnonymity], mixed_schema: Schema
) -> None:
    frame, model = case
    # Ask for one more distinct value (or level) than the table has.
    values, levels = frame[SENS].nunique(), frame[LEVEL].nunique()
    harder = HPKAnonymity(k=max(model.k, values + 1), p=values + 1, h=min(levels, values + 1))
    if len(frame) < harder.k:
        harder = HPKAnonymity(k=len(frame) + 1, p=1, h=1)
    assert not can_host(frame, harder)
    labels = cluster_block(frame, BlockContext(schema=mixed_schema, model=harder), algorithm, 0, 0)
    assert (labels == -1).all()


# ---------------------------------------------------------------------------
# place_rows
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ALGOS)
def test_place_rows_table1_hand(algorithm: str) -> None:
    # Classes of the hand trace above. New rows: age 49 (code 28/29, Fever) and age 22
    # (code 1/29, HIV).
    #   49 joins {t4 27, t8 29}: {27, 28, 29} loses 2 units, the same as before (increase 0,
    #      1/IL = 14.5): the best class for both rules.
    #   22 joins the class of t1 (0) and t3 (4): GPKC {0, 1, 4, 5} loss 8 (+2) vs C > +9;
    #      MAA-SLIE the class {0, 4, 5, 11} + 1 has IL 13/29 vs far larger elsewhere.
    ctx = table1_age_ctx()
    frame = table1_frame(ctx.schema)
    labels = cluster_block(frame, ctx, algorithm, seed=0, block_id=1)
    kind = ctx.schema.kinds[0]
    codes, _ = kind.encode(pd.Series([22, 49]))
    sens, _, _ = DISEASE.encode(pd.Series(["HIV", "Fever"]))
    extra = make_frame(np.array([101, 100]), [codes], sens, DISEASE)
    placed = place_rows(frame, labels, extra, ctx, algorithm, seed=0, block_id=1)
    label_of = dict(zip(frame[RID].tolist(), labels.tolist(), strict=True))
    assert placed.tolist() == [label_of[1], label_of[8]]
    union = pd.concat([frame, extra], ignore_index=True)
    assert_model_holds(union, np.concatenate([labels, placed]), ctx.model)


@pytest.mark.parametrize("algorithm", ALGOS)
def test_place_rows_without_classes_returns_minus_one(algorithm: str) -> None:
    ctx = table1_age_ctx()
    frame = table1_frame(ctx.schema)
    extra = frame.iloc[:3].assign(**{RID: [50, 51, 52]})
    placed = place_rows(frame, np.full(len(frame), -1), extra, ctx, algorithm, seed=0, block_id=1)
    assert placed.tolist() == [-1, -1, -1]


@pytest.mark.parametrize("algorithm", sorted(TABLES))
@settings(max_examples=30, deadline=None)
@given(data=st.data(), n_extra=st.integers(1, 30), seed=st.integers(0, 1000))
def test_place_rows_keeps_model(
    algorithm: str, data: st.DataObject, n_extra: int, seed: int, mixed_schema: Schema
) -> None:
    frame, model, ctx, labels = clustered(data, algorithm, mixed_schema, seed, block_id=4)
    rng = np.random.default_rng(seed)
    extra = make_frame(
        np.arange(10**9, 10**9 + n_extra),
        random_codes(rng, n_extra),
        rng.integers(0, 10, n_extra),
        FIVE_LEVELS,
    )
    extra = extra.iloc[rng.permutation(n_extra)].reset_index(drop=True)
    placed = place_rows(frame, labels, extra, ctx, algorithm, seed=seed, block_id=4)
    n_classes = labels.max() + 1
    assert placed.shape == (n_extra,)
    assert ((placed >= 0) & (placed < n_classes)).all()
    union = pd.concat([frame, extra], ignore_index=True)
    assert_model_holds(union, np.concatenate([labels, placed]), model)
    # Order of ``extra`` does not matter: labels follow _rid.
    again = place_rows(frame, labels, extra.iloc[::-1], ctx, algorithm, seed=seed, block_id=4)
    assert again.tolist() == placed[::-1].tolist()


# ---------------------------------------------------------------------------
# The tree of blocks: BlockTree.assign, median_cut
# ---------------------------------------------------------------------------


def test_block_tree_assign_hand() -> None:
    tree = BlockTree()
    tree.split(1, 0, 5)  # attribute 0: bins <= 5 -> node 2, else node 3
    tree.split(2, 1, 3)  # node 2, attribute 1: bins <= 3 -> 4, else 5
    bins = np.array(
        [
            [2, 7, 5, 6, 0],  # attribute 0
            [1, 9, 4, 0, 3],  # attribute 1
        ]
    )
    # row 0: 2 <= 5 -> 2; 1 <= 3 -> 4 | row 1: 7 > 5 -> 3 | row 2: 5 <= 5 -> 2; 4 > 3 -> 5
    # row 3: 6 > 5 -> 3 | row 4: 0 -> 2; 3 <= 3 -> 4
    assert tree.assign(bins).tolist() == [4, 3, 5, 3, 4]
    tree.split(3, 1, 0)  # node 3 on attribute 1: <= 0 -> 6, else 7
    assert tree.assign(bins).tolist() == [4, 7, 5, 6, 4]
    tree.split(5, 0, 4)  # node 5 on attribute 0: row 2 has bin 5 > 4 -> 11
    assert tree.assign(bins).tolist() == [4, 7, 11, 6, 4]


def test_block_tree_assign_trivial() -> None:
    assert BlockTree().assign(np.array([[1, 2, 3]])).tolist() == [1, 1, 1]
    tree = BlockTree()
    tree.split(1, 0, 0)
    assert tree.assign(np.zeros((1, 0), dtype=np.int64)).tolist() == []


def median_cut(kind, lo: int, hi: int, hist: pd.Series, min_side: int) -> int | None:
    """The allowed cut closest to the median of ``hist`` (bins ``lo..hi``), or ``None``."""
    hist = hist.sort_index()
    assert int(hist.index[0]) == lo and int(hist.index[-1]) == hi
    cuts, _ = _median_cuts(
        kind, hist.index.to_numpy(dtype=np.int64), hist.to_numpy(dtype=np.int64), min_side
    )
    return int(cuts[0]) if cuts.size else None


def test_median_cut_continuous() -> None:
    kind = ContinuousKind(name="c", weight=1.0)
    hist = pd.Series({0: 2, 1: 3, 2: 1, 3: 4})  # 10 rows
    # left counts: cut 0 -> 2, cut 1 -> 5, cut 2 -> 6 ; |left - 5|: 3, 0, 1
    assert median_cut(kind, 0, 3, hist, min_side=2) == 1
    assert median_cut(kind, 0, 3, hist, min_side=5) == 1
    assert median_cut(kind, 0, 3, hist, min_side=6) is None
    # Unsorted index, gaps between bins.
    hist = pd.Series({30: 3, 10: 1, 20: 6})  # 10 rows over bins 10..30
    # cuts 10..29: left 1 (10..19) or 7 (20..29); min_side 2 -> only 20..29 ok (right 3);
    # all have score |7 - 5| = 2 -> the first, 20
    assert median_cut(kind, 10, 30, hist, min_side=2) == 20
    assert median_cut(kind, 10, 30, hist, min_side=4) is None
    # min_side pushes the cut away from the median: {0: 3, 1: 1, 2: 6}, min_side 4
    # cut 0 leaves 3 on the left (too few), cut 1 leaves 4 | 6.
    assert median_cut(kind, 0, 2, pd.Series({0: 3, 1: 1, 2: 6}), min_side=4) == 1


def test_median_cut_categorical_keeps_siblings(edu_taxonomy: Taxonomy) -> None:
    kind = categorical_kind("education", 1.0, edu_taxonomy)
    # Whole tree (codes 0..6): the only allowed cut is 3 (Higher | Secondary), although
    # the unconstrained median cut would be 4 (left 5 | right 5).
    hist = pd.Series({0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 4})
    assert median_cut(kind, 0, 6, hist, min_side=2) == 3
    assert median_cut(kind, 0, 6, hist, min_side=5) is None  # 4 | 6 only
    # Inside Higher (0..3): only 1 (Undergraduate | Graduate); the unconstrained median
    # would be 0 (3 | 3), splitting Bachelors from Some-college.
    hist = pd.Series({0: 3, 1: 1, 2: 1, 3: 1})
    assert median_cut(kind, 0, 3, hist, min_side=1) == 1
    # Inside Secondary (4..6): only 5 (HighSchool | Primary).
    assert median_cut(kind, 4, 6, pd.Series({4: 5, 5: 1, 6: 6}), min_side=1) == 5
    # Every returned cut is a subtree boundary: no parent has leaves on both sides.
    for lo, hi in [(0, 6), (0, 3), (4, 6), (1, 5), (2, 6)]:
        hist = pd.Series({c: 2 for c in range(lo, hi + 1)})
        cut = median_cut(kind, lo, hi, hist, min_side=1)
        assert cut is not None
        left = {edu_taxonomy.paths[c][1] for c in range(lo, cut + 1)}
        right = {edu_taxonomy.paths[c][1] for c in range(cut + 1, hi + 1)}
        assert not left & right, (lo, hi, cut)


def test_gpkc_paper_loss_counts_hierarchy_heights(edu_taxonomy: Taxonomy) -> None:
    # Campan-Truta's categorical loss is the height of the lowest common ancestor over the
    # hierarchy's height, where NCP counts the leaves under it. Bachelors and Masters meet at
    # "Higher", 2 levels up a 3-level tree: 2/3 (NCP: Higher's 4 leaves of 7, 4/7).
    from sparkanon.attributes.ranges import RangeHeightLoss, RangeNcp

    kind = categorical_kind("education", 1.0, edu_taxonomy)
    a, b = kind.labels.index("Bachelors"), kind.labels.index("Masters")
    lo, hi = np.array([min(a, b)]), np.array([max(a, b)])
    assert RangeHeightLoss(kind).of_range(lo, hi)[0] == pytest.approx(2 / 3)
    assert RangeNcp(kind).of_range(lo, hi)[0] == pytest.approx(4 / 7)
    same = np.array([a])
    assert RangeHeightLoss(kind).of_range(same, same)[0] == 0.0
    # A continuous range keeps its normalised width; a nominal value 0 or 1.
    age = ContinuousKind(name="age", weight=1.0, low=0.0, high=1.0)
    assert RangeHeightLoss(age).of_range(np.array([0.25]), np.array([0.75]))[0] == 0.5
    sex = nominal_kind("sex", 1.0, ("F", "M"))
    assert RangeHeightLoss(sex).of_range(np.array([0]), np.array([1]))[0] == 1.0


def test_gpkc_paper_takes_new_values_first() -> None:
    # One attribute, k = 3, p = 3. Reference r3 (0.5, nearest the mean 0.54); first seed the
    # farthest, r0 (0.0; r8 ties at 0.5 and comes later). A from r0 (a) takes the nearest row
    # bringing a new value, r3 (b), though r1 and r2 are nearer, then r4 (c): A = {r0, r3,
    # r4}. The rest hold only a and b: the pool cannot host a class, and the six leftovers
    # join A, the only class.
    ages = np.array([0.0, 0.01, 0.02, 0.5, 0.6, 0.9, 0.91, 0.92, 1.0])
    sens = np.array([0, 0, 0, 1, 2, 0, 0, 0, 1])
    schema = Schema(
        kinds=(ContinuousKind(name="age", weight=1.0, low=0.0, high=1.0),),
        sensitive=SensitiveLevels(
            name="s",
            values=("a", "b", "c"),
            level_of=np.array([0, 0, 0]),
            level_names=("all",),
            weights=np.array([0.5]),
        ),
    )
    frame = make_frame(np.arange(9), [ages], sens, schema.sensitive)
    ctx = BlockContext(schema=schema, model=HPKAnonymity(k=3, p=3, h=1))
    labels = cluster_block(frame, ctx, "gpkc_paper", seed=0, block_id=1)
    assert_model_holds(frame, labels, ctx.model)
    assert partition(frame, labels) == {frozenset(range(9))}
