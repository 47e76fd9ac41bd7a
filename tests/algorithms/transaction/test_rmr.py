"""RMR (Poulis et al. 2013) and Apriori Anonymization (Terrovitis et al. 2008)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms.transaction._apriori import (
    apriori_anonymize,
    apriori_cut,
    km_anonymous,
)
from sparkanon.algorithms.transaction.rmr import (
    cluster_ranges,
    greedy_clusters,
    range_ncp,
    rmr,
)
from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.itemsets import ItemSets, ItemTree, even_taxonomy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.ranges import RangeNcp


def _tree(paths: list[tuple[str, ...]]) -> ItemTree:
    return ItemTree.of(
        Taxonomy(leaves=tuple(p[0] for p in paths), paths=tuple(paths), height=len(paths[0]) - 1)
    )


def _labels(tree: ItemTree, sets: ItemSets) -> list[set[str]]:
    return [{tree.labels[n] for n in row} for row in sets.keys()]


# --- Apriori Anonymization -------------------------------------------------------------

TERROVITIS = _tree([("a1", "A", "ALL"), ("a2", "A", "ALL"), ("b1", "B", "ALL"), ("b2", "B", "ALL")])


def test_terrovitis_example_generalizes_a1_a2_to_a() -> None:
    # Terrovitis et al. 2008's running example as we recall it: {a1,b1,b2}, {a2,b1},
    # {a2,b1,b2}, {a1,a2,b2}, k = m = 2. Pairs a1b1 and a1a2 are held once; raising
    # a1, a2 to A (5 occurrences x 2/4) is the cheapest cut that repairs both, and the
    # result {A,b1,b2}, {A,b1}, {A,b1,b2}, {A,b2} holds every pair twice or more.
    a1, a2, b1, b2 = 0, 1, 2, 3
    sets = ItemSets.from_lists([[a1, b1, b2], [a2, b1], [a2, b1, b2], [a1, a2, b2]])
    assert not km_anonymous(sets, 2, 2)
    out = apriori_anonymize(sets, TERROVITIS, k=2, m=2)
    assert _labels(TERROVITIS, out) == [
        {"A", "b1", "b2"},
        {"A", "b1"},
        {"A", "b1", "b2"},
        {"A", "b2"},
    ]
    assert km_anonymous(out, 2, 2)
    # m = 1 only needs single items: all are held twice or more already.
    assert apriori_anonymize(sets, TERROVITIS, k=2, m=1).keys() == sets.keys()


def test_km_anonymous_counts_combinations_up_to_m() -> None:
    sets = ItemSets.from_lists([[0, 1], [0, 1], [0, 2], [1, 2]])
    assert km_anonymous(sets, 2, 1)
    assert not km_anonymous(sets, 2, 2)  # {0,2} and {1,2} are held once
    assert km_anonymous(ItemSets.from_lists([[], []]), 5, 3)


def test_fewer_than_k_non_empty_sets_are_suppressed() -> None:
    sets = ItemSets.from_lists([[0], [], []])
    assert apriori_cut(sets, TERROVITIS, 2, 2) is None
    out = apriori_anonymize(sets, TERROVITIS, 2, 2)
    assert out.keys() == [(), (), ()]


def test_k_one_and_bad_input() -> None:
    sets = ItemSets.from_lists([[0, 3], [1]])
    assert apriori_anonymize(sets, TERROVITIS, 1, 2).keys() == sets.keys()
    with pytest.raises(ValueError, match="leaf"):
        apriori_anonymize(ItemSets.from_lists([[4]]), TERROVITIS, 2, 2)
    with pytest.raises(ValueError, match="at least 1"):
        apriori_anonymize(sets, TERROVITIS, 2, 0)


def _check_one_cut(tree: ItemTree, before: ItemSets, after: ItemSets, k: int, m: int) -> None:
    """``after`` is ``before`` under one cut, k^m-anonymous (or all suppressed)."""
    if 0 < int((before.sizes() > 0).sum()) < k:
        assert all(len(row) == 0 for row in after.keys())
        return
    assert km_anonymous(after, k, m)
    publish: dict[int, int] = {}
    for orig, gen in zip(before.keys(), after.keys(), strict=True):
        mapped = set()
        for leaf in orig:
            over = [g for g in gen if tree.leaf_lo[g] <= leaf <= tree.leaf_hi[g]]
            assert len(over) == 1, (orig, gen)  # covered exactly once
            assert publish.setdefault(leaf, over[0]) == over[0]  # one node per leaf
            mapped.add(over[0])
        assert mapped == set(gen)  # nothing published that the record does not hold


ITEMS = ItemTree.of(even_taxonomy([f"i{j}" for j in range(10)], fanout=3))
"""10 items, fanout 3: the last item sits alone under single-child nodes."""


@st.composite
def item_sets(draw: st.DrawFn, n_min: int = 0, n_max: int = 14) -> ItemSets:
    n = draw(st.integers(n_min, n_max))
    rows = [
        draw(st.lists(st.integers(0, ITEMS.n_leaves - 1), max_size=4, unique=True))
        for _ in range(n)
    ]
    return ItemSets.from_lists(rows)


@settings(max_examples=80, deadline=None)
@given(sets=item_sets(), k=st.integers(1, 4), m=st.integers(1, 3))
def test_apriori_is_km_anonymous_by_one_cut(sets: ItemSets, k: int, m: int) -> None:
    out = apriori_anonymize(sets, ITEMS, k, m)
    _check_one_cut(ITEMS, sets, out, k, m)
    assert apriori_anonymize(sets, ITEMS, k, m).keys() == out.keys()


# --- RMR -------------------------------------------------------------------------------

QI_KINDS = [
    ordinal_kind("grade", 1.0, ("a", "b", "c", "d", "e")),
    nominal_kind("sex", 1.0, ("F", "M", "X")),
    categorical_kind(
        "place",
        1.0,
        Taxonomy(
            leaves=("p0", "p1", "p2", "p3", "p4", "p5"),
            paths=tuple(
                (f"p{i}", f"r{i // 2}", "north" if i < 4 else "south", "*") for i in range(6)
            ),
            height=3,
        ),
    ),
]


@st.composite
def rt_data(draw: st.DrawFn) -> tuple[np.ndarray, list[RangeNcp], ItemSets, int]:
    k = draw(st.integers(1, 4))
    sets = draw(item_sets(n_min=k, n_max=18))
    columns = draw(st.lists(st.sampled_from(range(len(QI_KINDS))), min_size=0, max_size=3))
    kinds = [QI_KINDS[c] for c in columns]
    codes = np.array(
        [[draw(st.integers(0, kind.size - 1)) for kind in kinds] for _ in range(len(sets))],
        dtype=np.int64,
    ).reshape(len(sets), len(kinds))
    return codes, [RangeNcp(kind) for kind in kinds], sets, k


def _loss(codes: np.ndarray, labels: np.ndarray, qi_ncp: list[RangeNcp]) -> float:
    n, d = codes.shape
    lo, hi, size = cluster_ranges(codes, labels, int(labels.max()) + 1)
    return float((size * range_ncp(lo, hi, qi_ncp)).sum()) / (n * d) if d else 0.0


@settings(max_examples=80, deadline=None)
@given(
    data=rt_data(),
    m=st.integers(1, 3),
    delta=st.sampled_from([-1.0, 0.0, 0.1, 0.3, 0.65, 1.0]),
)
def test_rmr_is_k_km_anonymous(
    data: tuple[np.ndarray, list[RangeNcp], ItemSets, int], m: int, delta: float
) -> None:
    codes, qi_ncp, sets, k = data
    out = rmr(codes, qi_ncp, sets, ITEMS, k, m=m, delta=delta)
    cluster = out.cluster
    assert cluster.dtype == np.int64 and cluster.shape == (len(sets),)
    first = [int(np.flatnonzero(cluster == c)[0]) for c in range(out.n_clusters)]
    assert first == sorted(first)  # dense ids in order of first record
    for c in range(out.n_clusters):
        members = np.flatnonzero(cluster == c)
        assert members.size >= k
        if codes.shape[1]:
            assert (out.qi_lo[members] == codes[members].min(axis=0)).all()
            assert (out.qi_hi[members] == codes[members].max(axis=0)).all()
        _check_one_cut(ITEMS, sets.take(members), out.generalized.take(members), k, m)
    # Merging stops before the relational loss passes delta (or never starts).
    initial = greedy_clusters(codes, qi_ncp, k)
    if out.n_clusters < int(initial.max()) + 1:
        assert _loss(codes, cluster, qi_ncp) <= delta + 1e-12
    # Deterministic.
    again = rmr(codes, qi_ncp, sets, ITEMS, k, m=m, delta=delta)
    assert (again.cluster == cluster).all()
    assert again.generalized.keys() == out.generalized.keys()


def _table1() -> tuple[np.ndarray, list[RangeNcp], ItemSets, ItemTree]:
    """Gong et al. 2016, Table 1: Bob, Alice, Tom, Simon, Jim, Alen."""
    frame = pd.DataFrame(
        {
            "age": [18, 25, 19, 21, 24, 29],
            "sex": ["M", "F", "M", "M", "M", "F"],
            "zip": [12000, 21000, 14000, 18000, 19000, 22000],
        }
    )
    kinds = [
        ContinuousKind(name="age", weight=1.0, low=18.0, high=29.0),
        nominal_kind("sex", 1.0, ("F", "M")),
        ContinuousKind(name="zip", weight=1.0, low=12000.0, high=22000.0),
    ]
    codes = np.column_stack([kind.encode(frame[kind.name])[0].astype(float) for kind in kinds])
    tree = _tree(
        [(f"{g}{i}", g, "*") for g in "abc" for i in (1, 2)]  # a1 a2 b1 b2 c1 c2
    )
    leaf = tree.leaf_codes()
    diseases = [["a1", "b2"], ["a2", "b2"], ["c1"], ["c2"], ["b2", "c2"], ["b2", "c1"]]
    sets = ItemSets.from_lists([[leaf[x] for x in row] for row in diseases])
    return codes, [RangeNcp(kind) for kind in kinds], sets, tree


def test_gong2016_table1_to_table2() -> None:
    # Greedy k-member (k = 2): reference Bob; farthest is Alen, who takes Alice (same
    # sex, nearest ages and zips); farthest from Alen is Bob, who takes Tom; Jim and
    # Simon remain. Relational loss (mean NCP per record and attribute):
    # (2 * (1/11 + .2) + 2 * (3/11 + .1) + 2 * (4/11 + .1)) / 18 = 0.126. Table 2's
    # equivalence classes are exactly these; within each, every disease is held once,
    # so the only cut giving 2^2-anonymity is the root: every set is published as <*>.
    codes, qi_ncp, sets, tree = _table1()
    out = rmr(codes, qi_ncp, sets, tree, k=2, m=2, delta=0.2)
    assert out.cluster.tolist() == [0, 1, 0, 2, 2, 1]
    assert _loss(codes, out.cluster, qi_ncp) == pytest.approx(
        (2 * (1 / 11 + 0.2) + 2 * (3 / 11 + 0.1) + 2 * (4 / 11 + 0.1)) / 18
    )
    assert _labels(tree, out.generalized) == [{"*"}] * 6
    ages = ContinuousKind(name="age", weight=1.0, low=18.0, high=29.0)
    assert ages.decode(out.qi_lo[:, 0]).tolist() == pytest.approx([18, 25, 18, 21, 21, 25])
    assert ages.decode(out.qi_hi[:, 0]).tolist() == pytest.approx([19, 29, 19, 24, 24, 29])


def test_gong2016_table1_merges_within_delta() -> None:
    # delta = 0.65 (Gong et al. 2016's setting): the least-Rum cluster {Bob, Tom} merges with
    # its relationally nearest {Simon, Jim}: ages 18-24, sex M, zips 12000-19000 give
    # 4 * (6/11 + 0 + .7) with {Alice, Alen}'s 2 * (4/11 + .1): 0.33 <= 0.65. Merging
    # the last two would cover every domain (loss 1 > 0.65), so two clusters remain.
    codes, qi_ncp, sets, tree = _table1()
    out = rmr(codes, qi_ncp, sets, tree, k=2, m=2, delta=0.65)
    assert out.cluster.tolist() == [0, 1, 0, 0, 0, 1]
    assert _loss(codes, out.cluster, qi_ncp) == pytest.approx(
        (4 * (6 / 11 + 0.7) + 2 * (4 / 11 + 0.1)) / 18
    )
    # {a1,b2}, {c1}, {c2}, {b2,c2}: a1 is held once, and so is its parent a: only the
    # root repairs it. {a2,b2}, {b2,c1}: likewise.
    assert _labels(tree, out.generalized) == [{"*"}] * 6


def test_rmr_keeps_specific_items_when_clusters_allow() -> None:
    # Two clusters of identical QIs; in each the items are held by both records, so
    # nothing is generalized.
    tree = TERROVITIS
    codes = np.array([[0], [0], [4], [4]], dtype=np.int64)
    qi_ncp = [RangeNcp(QI_KINDS[0])]
    sets = ItemSets.from_lists([[0, 2], [0, 2], [1, 3], [1, 3]])
    out = rmr(codes, qi_ncp, sets, tree, k=2, m=2, delta=0.0)
    assert out.cluster.tolist() == [0, 0, 1, 1]
    assert out.generalized.keys() == sets.keys()


def test_rmr_rejects_too_few_records_and_bad_shapes() -> None:
    sets = ItemSets.from_lists([[0], [1]])
    qi_ncp = [RangeNcp(QI_KINDS[0])]
    with pytest.raises(ValueError, match="cannot form"):
        rmr(np.zeros((2, 1), dtype=np.int64), qi_ncp, sets, TERROVITIS, k=3)
    with pytest.raises(ValueError, match="must be"):
        rmr(np.zeros((2, 2), dtype=np.int64), qi_ncp, sets, TERROVITIS, k=2)
    empty = rmr(np.zeros((0, 1), dtype=np.int64), qi_ncp, ItemSets.from_lists([]), TERROVITIS, 2)
    assert empty.cluster.size == 0 and empty.n_clusters == 0
