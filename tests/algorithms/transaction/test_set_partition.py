"""Partition (He and Naughton 2009) over set-valued data: worked examples and invariants."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms.transaction.set_partition import (
    SetPartition,
    _search,
    information_loss,
    partition_sets,
)
from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.itemsets import ItemSets, ItemTree, even_taxonomy
from tests._inputs import ROOT


def gong2016_tree() -> ItemTree:
    """Gong et al. 2016 figure 1 (b): A{a1, a2}, B{b1, b2}, C{c1, c2} under the root."""
    leaves = ("a1", "a2", "b1", "b2", "c1", "c2")
    paths = tuple((leaf, leaf[0].upper(), "*") for leaf in leaves)
    return ItemTree.of(Taxonomy(leaves=leaves, paths=paths, height=2))


def encode(tree: ItemTree, rows: list[list[str]]) -> ItemSets:
    """Item sets from item labels."""
    code = {label: i for i, label in enumerate(tree.labels)}
    return ItemSets.from_lists([code[x] for x in row] for row in rows)


def decode(tree: ItemTree, sets: ItemSets) -> list[set[str]]:
    """Every set as a set of labels."""
    return [{tree.labels[n] for n in row} for row in sets.keys()]


# --- worked examples -------------------------------------------------------------------


def test_gong2016_table1_reproduces_table4_sets() -> None:
    """Gong et al. 2016 table 1 with k = 2 gives the TT column of its table 4, worked by hand.

    The root splits into {A, B} (Bob, Alice), {C} (Tom, Simon), {B, C} (Jim, Alen), two
    records each. In {A, B} both nodes gain 4 (two items, 2 leaves each, to leaves); the
    tie goes to A, smaller id, whose expansion parts a1 from a2 (one record each, no
    sub-partition of 2): it fails, then B expands to b2 for both. {C}: c1 vs c2 fails.
    {B, C}: B (tie, smaller id) expands to b2 for both, C fails.
    """
    tree = gong2016_tree()
    rows = [["a1", "b2"], ["a2", "b2"], ["c1"], ["c2"], ["b2", "c2"], ["b2", "c1"]]
    sets = encode(tree, rows)
    out = partition_sets(sets, tree, 2)
    assert decode(tree, out.generalized) == [
        {"A", "b2"},
        {"A", "b2"},
        {"C"},
        {"C"},
        {"b2", "C"},
        {"b2", "C"},
    ]
    assert out.partition.tolist() == [0, 0, 1, 1, 2, 2]
    assert not out.suppressed.any()
    # NCP: a1, a2, c1, c2, c2, c1 each at a 2-of-6 node, b2 four times exact: 6 * 1/3 / 10.
    assert information_loss(sets, out.generalized, tree) == pytest.approx(0.2)


def test_he_naughton_style_example_seven_sets() -> None:
    """Seven sets, k = 2, on the even-tree convention (fanout 2 over a1 a2 b1 b2).

    The text of He and Naughton (2009) was not available to us, so this example is built
    on the even taxonomy their experiments use (and Gong et al. 2016, section 4.1): A = L1:0 over
    {a1, a2}, B = L1:1 over {b1, b2}. Worked by hand:

    1. {root} expands: {A} holds t1 t2 t3, {B} t4 t5 t6, {A, B} only t0: the leftover
       {t0} is one short of k. Both big sub-partitions can spare one record; the record
       losing least by staying at the root is one with a single item (gain 2, against 4
       for two items): t3, t4 and t5 tie, input order picks t3. Leftover {t0, t3} keeps
       {root}, which it may not expand again: final.
    2. {A} = t1 t2, both {a1, a2}: exactly k records in one child subset, so it is still
       specialized, to the leaves.
    3. {B} = t4 {b1}, t5 {b1}, t6 {b1, b2}: {b1} has 2, {b1, b2} has 1, and {b1} cannot
       spare a record, so it is merged into the leftover: the expansion leaves {B}.
    """
    tree = ItemTree.of(even_taxonomy(["a1", "a2", "b1", "b2"], 2))
    rows = [
        ["a1", "a2", "b1"],
        ["a1", "a2"],
        ["a1", "a2"],
        ["a1"],
        ["b1"],
        ["b1"],
        ["b1", "b2"],
    ]
    sets = encode(tree, rows)
    out = partition_sets(sets, tree, 2)
    assert decode(tree, out.generalized) == [
        {"*"},
        {"a1", "a2"},
        {"a1", "a2"},
        {"*"},
        {"L1:1"},
        {"L1:1"},
        {"L1:1"},
    ]
    assert out.partition.tolist() == [0, 1, 1, 0, 2, 2, 2]
    # t0: 3 items at the root, t3: 1; t4, t5: 1/2 each, t6: 2 * 1/2; 12 items in all.
    assert information_loss(sets, out.generalized, tree) == pytest.approx(6 / 12)


def test_exactly_k_records_in_one_child_subset_are_specialized() -> None:
    """Regression (off-by-one stop): k records that all reach one child subset go down.

    A stop rule ``len < 2k`` would publish {root} here.
    """
    tree = gong2016_tree()
    out = partition_sets(encode(tree, [["a1", "b1"]] * 3), tree, 3)
    assert decode(tree, out.generalized) == [{"a1", "b1"}] * 3
    assert out.partition.tolist() == [0, 0, 0]


def test_exactly_2k_records_split_in_two() -> None:
    """Regression (off-by-one stop): 2k records falling k and k into two subsets split."""
    tree = gong2016_tree()
    rows = [["a1"], ["c2"], ["a1"], ["c2"]]
    out = partition_sets(encode(tree, rows), tree, 2)
    assert decode(tree, out.generalized) == [{"a1"}, {"c2"}, {"a1"}, {"c2"}]
    assert out.partition.tolist() == [0, 1, 0, 1]


def test_leftover_is_balanced_then_kept_at_the_root() -> None:
    """A leftover one short of k takes the least-gain record, ties by input order.

    Root expands: {A, B} holds t0..t3, {A, C} only t4. All of {A, B} gain 8 (two items,
    6 leaves down to 2 each) and {A, B} can spare two, so t0 (first) joins t4; that
    leftover keeps {root}. In {A, B} = t1 t2 t3, A parts {a1} x2 from {a2} and B parts
    {b1} x2 from {b2}, neither able to keep both sides at k: the set stays {A, B}.
    """
    tree = gong2016_tree()
    rows = [["a1", "b1"], ["a1", "b1"], ["a1", "b2"], ["a2", "b1"], ["a1", "c1"]]
    out = partition_sets(encode(tree, rows), tree, 2)
    assert decode(tree, out.generalized) == [{"*"}, {"A", "B"}, {"A", "B"}, {"A", "B"}, {"*"}]


def test_leftover_is_specialized_on_other_nodes() -> None:
    """The leftover keeps the expanded node but may still expand the others (reading R3).

    Root expands to {A, B} for all five. A (gain 12 > B's 10) parts {a1}: t0 t1,
    {a2}: t2 t3 and {a1, a2}: t4 alone; neither pair can spare a record, so the pair
    with the smaller total gain (a tie, 4 each; the first record decides: t0) is merged
    into the leftover whole. That leftover {t0, t1, t4} keeps A unexpanded but expands
    B, all three holding b1 only.
    """
    tree = gong2016_tree()
    rows = [["a1", "b1"], ["a1", "b1"], ["a2", "b1"], ["a2", "b1"], ["a1", "a2", "b1"]]
    out = partition_sets(encode(tree, rows), tree, 2)
    assert decode(tree, out.generalized) == [
        {"A", "b1"},
        {"A", "b1"},
        {"a2", "b1"},
        {"a2", "b1"},
        {"A", "b1"},
    ]
    assert out.partition.tolist() == [0, 0, 1, 1, 0]


def test_empty_sets_are_their_own_tbucket() -> None:
    """Empty sets stay empty: kept as one TBucket with k of them, suppressed otherwise."""
    tree = gong2016_tree()
    out = partition_sets(encode(tree, [[], ["a1"], [], ["a1"]]), tree, 2)
    assert decode(tree, out.generalized) == [set(), {"a1"}, set(), {"a1"}]
    assert out.partition.tolist() == [0, 1, 0, 1]
    out = partition_sets(encode(tree, [[], ["a1"], ["a2"], ["a1"]]), tree, 2)
    assert out.suppressed.tolist() == [True, False, False, False]
    assert out.partition.tolist() == [-1, 0, 0, 0]
    assert decode(tree, out.generalized) == [set(), {"A"}, {"A"}, {"A"}]


def test_fewer_than_k_nonempty_sets_are_suppressed() -> None:
    """Suppression only when unavoidable: fewer than k records with a non-empty set."""
    tree = gong2016_tree()
    out = partition_sets(encode(tree, [["a1"], ["b1"], [], [], []]), tree, 3)
    assert out.suppressed.tolist() == [True, True, False, False, False]
    assert out.partition.tolist() == [-1, -1, 0, 0, 0]
    assert decode(tree, out.generalized) == [set()] * 5


def test_no_records_and_k_one() -> None:
    """An empty block gives an empty result; k = 1 publishes every set unchanged."""
    tree = gong2016_tree()
    out = partition_sets(ItemSets.from_lists([]), tree, 2)
    assert len(out.generalized) == 0 and out.partition.size == 0
    rows = [["a1", "c2"], ["b1"], ["a1", "a2", "b2"]]
    out = partition_sets(encode(tree, rows), tree, 1)
    assert decode(tree, out.generalized) == [set(r) for r in rows]


def test_flat_and_unary_taxonomies() -> None:
    """A flat taxonomy (root over the leaves) and a chain of one-child nodes."""
    flat = ItemTree.of(even_taxonomy([f"i{j}" for j in range(70)], 70))
    sets = ItemSets.from_lists([[0, 65], [0, 65], [3], [3], [0, 3]])
    out = partition_sets(sets, flat, 2)
    # 70 children > 62: keyed by padded child lists. {i0, i65} x2, {i3} x2, {i0, i3} x1:
    # no pair can spare a record, so the pair of smaller total gain, {i3} (2 * 70 against
    # 4 * 70), joins t4 at the root (70).
    assert [list(r) for r in out.generalized.keys()] == [[0, 65], [0, 65], [70], [70], [70]]
    leaves = ("x", "y")
    paths = (("x", "p", "q", "*"), ("y", "p", "q", "*"))
    chain = ItemTree.of(Taxonomy(leaves=leaves, paths=paths, height=3))
    out = partition_sets(ItemSets.from_lists([[0], [0], [0, 1]]), chain, 2)
    assert decode(chain, out.generalized) == [{"p"}, {"p"}, {"p"}]


def test_rejects_bad_input() -> None:
    """k below 1 and inner nodes in the sets are errors; so are mismatched lengths."""
    tree = gong2016_tree()
    with pytest.raises(ValueError, match="k must be at least 1"):
        partition_sets(encode(tree, [["a1"]]), tree, 0)
    with pytest.raises(ValueError, match="leaf ids"):
        partition_sets(ItemSets.from_lists([[6]]), tree, 1)
    with pytest.raises(ValueError, match="original sets"):
        information_loss(encode(tree, [["a1"]]), ItemSets.from_lists([]), tree)
    with pytest.raises(ValueError, match="nested"):
        information_loss(encode(tree, [["a1"]]), ItemSets.from_lists([[0, 6]]), tree)


def test_information_loss_counts_suppressed_items_as_lost() -> None:
    """An item with no covering node (a suppressed record) has NCP 1."""
    tree = gong2016_tree()
    sets = encode(tree, [["a1", "b1"], ["c1"]])
    gen = ItemSets.from_lists([[0, 7], []])  # a1 exact, b1 under B (2/6), c1 lost
    assert information_loss(sets, gen, tree) == pytest.approx((0 + 1 / 3 + 1) / 3)
    assert information_loss(ItemSets.from_lists([[], []]), gen, tree) == 0.0


# --- invariants on random trees and sets ------------------------------------------------


@st.composite
def taxonomies(draw: st.DrawFn) -> ItemTree:
    """Random trees, all leaves at one depth: consecutive nodes grouped 1..4 per parent."""
    n = draw(st.integers(1, 12))
    height = draw(st.integers(1, 3))
    paths = [[f"i{x}"] for x in range(n)]
    node_of_leaf = list(range(n))
    count = n
    for j in range(1, height):
        sizes = draw(st.lists(st.integers(1, 4), min_size=count, max_size=count))
        parent_of, p, used = [], 0, 0
        for size in sizes:
            take = min(size, count - used)
            parent_of += [p] * take
            used += take
            p += 1
            if used == count:
                break
        node_of_leaf = [parent_of[x] for x in node_of_leaf]
        for leaf in range(n):
            paths[leaf].append(f"L{j}:{node_of_leaf[leaf]}")
        count = p
    for path in paths:
        path.append("*")
    leaves = tuple(f"i{x}" for x in range(n))
    return ItemTree.of(Taxonomy(leaves=leaves, paths=tuple(map(tuple, paths)), height=height))


@st.composite
def cases(draw: st.DrawFn) -> tuple[ItemTree, ItemSets, int]:
    """A tree, sets drawn mostly from a small pool (so equal and near sets recur) and k."""
    tree = draw(taxonomies())
    item = st.integers(0, tree.n_leaves - 1)
    pool = draw(st.lists(st.lists(item, max_size=4), min_size=1, max_size=5))
    fresh = st.lists(item, max_size=5)
    pick = st.sampled_from(pool)
    rows = draw(st.lists(st.one_of(pick, pick, pick, fresh), max_size=40))
    k = draw(st.integers(1, 4))
    return tree, ItemSets.from_lists(rows), k


def check_invariants(sets: ItemSets, tree: ItemTree, k: int, out: SetPartition) -> None:
    """Coverage, k-anonymity, conservation, numbering and minimal suppression."""
    n = len(sets)
    assert len(out.generalized) == n
    assert out.partition.shape == (n,) and out.suppressed.shape == (n,)
    assert out.partition.dtype == np.int64 and out.suppressed.dtype == bool
    sizes = sets.sizes()
    n_empty, n_filled = int((sizes == 0).sum()), int((sizes > 0).sum())
    expected = np.where(sizes == 0, n_empty < k, n_filled < k)
    assert out.suppressed.tolist() == expected.tolist()
    assert ((out.partition < 0) == out.suppressed).all()
    keys = out.generalized.keys()
    for i in range(n):
        items, gen = sets.row(i), np.asarray(keys[i], dtype=np.int64)
        if out.suppressed[i]:
            assert gen.size == 0
            continue
        assert list(gen) == sorted(set(gen.tolist()))
        under = (items[:, None] >= tree.leaf_lo[gen]) & (items[:, None] <= tree.leaf_hi[gen])
        assert (under.sum(axis=1) == 1).all()  # every item: exactly one covering node
        assert (under.sum(axis=0) >= 1).all()  # every node: covers one of its items
    kept = [keys[i] for i in range(n) if not out.suppressed[i]]
    assert all(c >= k for c in Counter(kept).values())
    # One partition number per distinct published set, numbered by first record.
    firsts: dict[tuple[int, ...], int] = {}
    for i in range(n):
        if not out.suppressed[i]:
            firsts.setdefault(keys[i], len(firsts))
            assert out.partition[i] == firsts[keys[i]]


@settings(max_examples=300, deadline=None)
@given(cases())
def test_invariants_on_random_trees(case: tuple[ItemTree, ItemSets, int]) -> None:
    """Every guarantee of :func:`partition_sets` on random trees, sets and k."""
    tree, sets, k = case
    out = partition_sets(sets, tree, k)
    check_invariants(sets, tree, k, out)
    again = partition_sets(sets, tree, k)
    assert again.generalized.keys() == out.generalized.keys()
    assert (again.partition == out.partition).all()
    loss = information_loss(sets, out.generalized, tree)
    assert 0.0 <= loss <= 1.0


# --- the pruned, vectorized search equals a plain one ------------------------------------


def reference(sets: ItemSets, tree: ItemTree, k: int) -> list[tuple[int, ...] | None]:
    """A plain implementation of the module's algorithm, without its pruning or fast path.

    Sub-partitions start with no excluded node; a leftover keeps its parent's excluded
    nodes plus the expanded one (as in the seed authors' implementation); every node is
    retried wherever it is a candidate. ``None`` marks a suppressed record.
    """
    rows = sets.keys()
    weight = [int(tree.leaves_under(x)) if tree.level[x] > 0 else 0 for x in range(tree.n_nodes)]

    def child(node: int, leaf: int) -> int:
        return int(tree.ancestor_at(np.array([leaf]), int(tree.level[node]) - 1)[0])

    def covers(node: int, leaf: int) -> bool:
        return bool(tree.leaf_lo[node] <= leaf <= tree.leaf_hi[node])

    def gain(records: list[int], node: int) -> int:
        return sum(
            weight[node] - weight[child(node, x)]
            for r in records
            for x in rows[r]
            if covers(node, x)
        )

    out: list[tuple[int, ...] | None] = [None] * len(rows)
    empty = [i for i, r in enumerate(rows) if not r]
    filled = [i for i, r in enumerate(rows) if r]
    if len(empty) >= k:
        for i in empty:
            out[i] = ()
    if len(filled) < k:
        return out
    stack = [(filled, (tree.root,), ())]
    while stack:
        records, cut, excluded = stack.pop()
        candidates = [x for x in cut if tree.level[x] > 0 and x not in excluded]
        if not candidates:
            for r in records:
                out[r] = cut
            continue
        node = max(candidates, key=lambda x: (gain(records, x), -x))
        groups: dict[tuple[int, ...], list[int]] = {}
        for r in records:
            key = tuple(sorted({child(node, x) for x in rows[r] if covers(node, x)}))
            groups.setdefault(key, []).append(r)
        big = {key: g for key, g in groups.items() if len(g) >= k}
        left = sorted(r for g in groups.values() if len(g) < k for r in g)
        if left and len(left) < k and big:
            deficit = k - len(left)
            if sum(len(g) - k for g in big.values()) >= deficit:
                ranked = sorted((gain([r], node), r, key) for key, g in big.items() for r in g)
                for _, r, key in ranked:
                    if deficit and len(big[key]) > k:
                        big[key] = [x for x in big[key] if x != r]
                        left.append(r)
                        deficit -= 1
            else:
                worst = min(big, key=lambda key: (gain(big[key], node), big[key][0]))
                left += big.pop(worst)
            left.sort()
        for key, g in big.items():
            stack.append((g, tuple(sorted(set(cut) - {node} | set(key))), ()))
        if left:
            stack.append((left, cut, excluded + (node,)))
    return out


@settings(max_examples=300, deadline=None)
@given(cases())
def test_matches_plain_reference(case: tuple[ItemTree, ItemSets, int]) -> None:
    """The pruning (dead and tried nodes) and the under-2k fast path change no output."""
    tree, sets, k = case
    out = partition_sets(sets, tree, k)
    want = reference(sets, tree, k)
    got = [
        None if s else key for key, s in zip(out.generalized.keys(), out.suppressed, strict=True)
    ]
    assert got == want


def random_block(rng: np.random.Generator) -> tuple[ItemTree, ItemSets, int]:
    """A block of 5..59 records mostly drawn from a few sets, over an even tree, k in 2..5."""
    n_items = int(rng.integers(2, 13))
    tree = ItemTree.of(even_taxonomy([f"i{j}" for j in range(n_items)], int(rng.integers(2, 4))))

    def draw_set() -> np.ndarray:
        return rng.choice(n_items, size=int(rng.integers(0, min(4, n_items) + 1)), replace=False)

    pool = [draw_set() for _ in range(int(rng.integers(2, 7)))]
    rows = [
        pool[int(rng.integers(len(pool)))] if rng.random() < 0.7 else draw_set()
        for _ in range(int(rng.integers(5, 60)))
    ]
    return tree, ItemSets.from_lists(rows), int(rng.integers(2, 6))


def test_matches_reference_on_random_blocks() -> None:
    """Larger random blocks, where leftovers are balanced by moves and by merges.

    Also: the final partitions of the search have pairwise distinct sets (reading R6).
    """
    rng = np.random.default_rng(2024)
    for _ in range(150):
        tree, sets, k = random_block(rng)
        out = partition_sets(sets, tree, k)
        check_invariants(sets, tree, k, out)
        filled = np.flatnonzero(sets.sizes() > 0)
        if len(filled) >= k:
            cuts = [tuple(p.cut.tolist()) for p in _search(sets, tree, filled, k)]
            assert len(cuts) == len(set(cuts))
        got = [
            None if s else key
            for key, s in zip(out.generalized.keys(), out.suppressed, strict=True)
        ]
        assert got == reference(sets, tree, k)


def test_matches_reference_on_a_larger_block() -> None:
    """The same on 150 records over an even tree of 40 items, for several k."""
    rng = np.random.default_rng(7)
    tree = ItemTree.of(even_taxonomy([f"d{j}" for j in range(40)], 3))
    pop = 1.0 / np.arange(1, 41)
    pop /= pop.sum()
    rows = [rng.choice(40, size=int(rng.integers(1, 6)), replace=False, p=pop) for _ in range(150)]
    sets = ItemSets.from_lists(rows)
    for k in (2, 3, 5):
        out = partition_sets(sets, tree, k)
        check_invariants(sets, tree, k, out)
        assert out.generalized.keys() == reference(sets, tree, k)


# --- determinism across hash seeds and a block of realistic size -------------------------

_SCRIPT = """
import numpy as np
from sparkanon.algorithms.transaction.set_partition import partition_sets
from sparkanon.attributes.itemsets import ItemSets, ItemTree, even_taxonomy
rng = np.random.default_rng(3)
tree = ItemTree.of(even_taxonomy([f"d{j}" for j in range(60)], 4))
rows = [rng.choice(60, size=int(rng.integers(0, 8)), replace=False) for _ in range(300)]
out = partition_sets(ItemSets.from_lists(rows), tree, 3)
print(hash(tuple(out.generalized.nodes.tolist())), out.partition.tolist())
"""


def test_same_output_under_any_hash_seed() -> None:
    """Two interpreters with different hash seeds publish the same sets and numbers."""
    outputs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_block_of_two_thousand_records() -> None:
    """A realistic block: 2,000 records, up to 100 items, 1,297 items in an even tree."""
    rng = np.random.default_rng(11)
    tree = ItemTree.of(even_taxonomy([f"d{j}" for j in range(1297)], 5))
    pop = 1.0 / np.arange(1, 1298)
    pop /= pop.sum()
    rows = [
        rng.choice(1297, size=int(rng.integers(1, 101)), replace=False, p=pop) for _ in range(2000)
    ]
    sets = ItemSets.from_lists(rows)
    out = partition_sets(sets, tree, 5)
    check_invariants(sets, tree, 5, out)
    assert 0.0 < information_loss(sets, out.generalized, tree) < 0.5
