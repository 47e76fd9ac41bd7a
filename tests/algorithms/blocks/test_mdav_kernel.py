"""MDAV's compiled kernel gives the numpy path's labels, ties included.

The numpy path (:meth:`Mdav.cluster_reference`, also what ``SPARKANON_NO_JIT=1`` runs) is
the reference. Parity is checked on every block of the Adult MDAV config, on random small
blocks of random schemas of every supported kind (coarse codes, duplicated rows, so that
distances and centroid rules tie exactly), and on the pieces the kernel repeats.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms import Block, BlockContext, cluster_block
from sparkanon.algorithms.blocks import _mdav_kernel as kernel
from sparkanon.algorithms.blocks.mdav import Mdav, smallest
from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    Kind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.schema import RID, Schema
from sparkanon.attributes.semantic import SemanticKind
from sparkanon.models import HPKAnonymity
from tests._adult import ROOT, adult_blocks
from tests._helpers import FIVE_LEVELS, both_paths, make_frame


def kinds_pool(taxonomy: Taxonomy) -> list[tuple[Kind, Callable]]:
    """Every kind the kernel packs, each with a draw of coarse codes ``(rng, n) -> codes``."""
    return [
        (ContinuousKind(name="age", weight=1.0), lambda r, n: r.integers(0, 6, n) / 5.0),
        (ContinuousKind(name="pay", weight=0.3), lambda r, n: r.random(n)),
        (ordinal_kind("grade", 0.5, tuple(f"g{i}" for i in range(9))), lambda r, n: r.integers(0, 9, n)),
        (
            ordinal_kind("band", 1.0, tuple("abcde"), rank_weights=(1.0, 2.0, 0.5, 1.5), centroid="median"),
            lambda r, n: r.integers(0, 5, n),
        ),
        (categorical_kind("education", 1.0, taxonomy), lambda r, n: r.integers(0, 7, n)),
        (nominal_kind("sex", 2.0, ("F", "M", "X")), lambda r, n: r.integers(0, 3, n)),
        (
            nominal_kind("race", 1.0, tuple(f"r{i}" for i in range(5)), encoding="vector"),
            lambda r, n: r.integers(0, 5, n),
        ),
    ]  # fmt: skip


@st.composite
def blocks(draw: st.DrawFn, taxonomy: Taxonomy) -> tuple[Block, int]:
    """A random block (n in 0..90) of a random schema (1..8 kinds of the pool), and a k.

    Rows repeat a few distinct rows (exact ties of distances), or not.
    """
    pool = kinds_pool(taxonomy)
    chosen = draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=8))
    n = draw(st.integers(0, 90))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    distinct = draw(st.integers(1, max(n, 1)))
    pick = rng.integers(0, distinct, n)
    kinds = tuple(pool[i][0] for i in chosen)
    codes = [pool[i][1](rng, distinct)[pick] for i in chosen]
    frame = make_frame(np.arange(n), codes, rng.integers(0, 10, n), FIVE_LEVELS)
    schema = Schema(kinds=tuple(_renamed(kinds)), sensitive=FIVE_LEVELS)
    k = draw(st.integers(1, 12))
    return Block(frame, BlockContext(schema=schema, model=HPKAnonymity(k=k))), k


def _renamed(kinds: tuple[Kind, ...]) -> list[Kind]:
    """The kinds with distinct names (a kind may be drawn twice)."""
    return [replace(kind, name=f"{kind.name}{i}") for i, kind in enumerate(kinds)]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_blocks_kernel_equals_reference(data: st.DataObject, edu_taxonomy) -> None:
    block, k = data.draw(blocks(edu_taxonomy))
    compiled = kernel.cluster(block, k)
    assert compiled is not None
    assert np.array_equal(compiled, Mdav().cluster_reference(block))


@pytest.mark.parametrize("n", [2, 3, 5, 6, 9])
def test_blocks_with_fewer_rows_than_attributes(n: int, edu_taxonomy, monkeypatch) -> None:
    # The kernel's scratch record has one value per attribute, not per row (a block of
    # 2 rows and 7 attributes wrote past a row-sized buffer: heap corruption, an abort
    # later). The kernel's body runs uncompiled here, so numpy checks every index.
    pool = kinds_pool(edu_taxonomy)
    rng = np.random.default_rng(n)
    codes = [draw(rng, n) for _, draw in pool]
    frame = make_frame(np.arange(n), codes, np.zeros(n, dtype=np.int64), FIVE_LEVELS)
    schema = Schema(kinds=tuple(_renamed(tuple(kind for kind, _ in pool))), sensitive=FIVE_LEVELS)
    monkeypatch.setattr(kernel, "mdav_kernel", kernel.mdav_kernel.py_func)
    for k in range(1, n + 1):
        block = Block(frame, BlockContext(schema=schema, model=HPKAnonymity(k=k)))
        assert np.array_equal(kernel.cluster(block, k), Mdav().cluster_reference(block)), k


def test_adult_blocks_kernel_equals_reference(tmp_path) -> None:
    # The blocks of the golden MDAV config (3 kinds: continuous, ordinal, categorical).
    conf = ROOT / "conf" / "adult_mdav_k.yaml"
    seen = adult_blocks(tmp_path, conf, 2000, max_block_rows=800, least=2)
    for frame, ctx, block_id in seen:
        block = Block(frame.sort_values(RID).reset_index(drop=True), ctx)
        compiled = kernel.cluster(block, ctx.model.k)
        assert np.array_equal(compiled, Mdav().cluster_reference(block)), f"block {block_id}"


def test_no_jit_selects_the_reference(monkeypatch: pytest.MonkeyPatch, mixed_schema) -> None:
    rng = np.random.default_rng(5)
    n = 40
    codes = [rng.random(n), rng.integers(0, 15, n), rng.integers(0, 7, n), rng.integers(0, 3, n)]
    frame = make_frame(rng.permutation(10**6)[:n], codes, rng.integers(0, 10, n), FIVE_LEVELS)
    ctx = BlockContext(schema=mixed_schema, model=HPKAnonymity(k=4))
    assert Mdav()._kernel() is not None
    compiled, reference = both_paths(
        monkeypatch, lambda: cluster_block(frame, ctx, "mdav", seed=0, block_id=0)
    )
    assert np.array_equal(compiled, reference)
    monkeypatch.setenv("SPARKANON_NO_JIT", "1")
    assert Mdav()._kernel() is None


def test_unsupported_kind_uses_the_reference() -> None:
    schema = Schema(
        kinds=(SemanticKind(name="zip", weight=1.0, length=3, beta=1.0, root_weight=0.0),),
        sensitive=FIVE_LEVELS,
    )
    frame = make_frame(np.arange(9), [np.array([100, 101, 110, 200, 201, 210, 300, 301, 999])], np.zeros(9, dtype=np.int64), FIVE_LEVELS)  # fmt: skip
    block = Block(frame, BlockContext(schema=schema, model=HPKAnonymity(k=3)))
    assert kernel.cluster(block, 3) is None
    labels = Mdav().cluster(block, np.random.default_rng(0))
    assert np.array_equal(labels, Mdav().cluster_reference(block))
    assert np.bincount(labels).tolist() == [3, 3, 3]


def test_subclass_overriding_a_step_uses_the_reference() -> None:
    class Farthest(Mdav):
        @staticmethod
        def _class_around(block, rows, anchor, k):  # noqa: ANN001, ANN205
            return rows[-k:]

    assert Farthest()._kernel() is None


def test_pairwise_mean_is_numpys() -> None:
    # The continuous centroid: np.mean's pairwise order over the remaining rows' codes.
    rng = np.random.default_rng(1)
    for n in (1, 7, 128, 129, 1000, 4099):
        col = rng.random(n) * 10.0 ** rng.integers(-3, 4, n)
        got = kernel._pairwise_sum(col, np.int64(0), np.int64(n)) / n
        assert got == np.mean(col)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(0, 5), min_size=2, max_size=60),
    anchor=st.integers(0, 59),
    k=st.integers(1, 30),
)
def test_nearest_is_smallest(values: list[int], anchor: int, k: int) -> None:
    # The kernel's selection (quickselect, three-way) takes what smallest() takes.
    d = np.asarray(values, dtype=float) / 4.0
    m = len(d)
    anchor %= m
    k = min(k, m - 1) or 1
    taken = np.zeros(m, dtype=np.bool_)
    kernel._nearest(d.copy(), np.int64(m), np.int64(anchor), np.int64(k), taken, np.empty(m))
    reference = d.copy()
    reference[anchor] = -1.0
    assert np.flatnonzero(taken).tolist() == sorted(smallest(reference, k).tolist())


def test_exact_ties_of_centroid_rules(edu_taxonomy) -> None:
    # Hand-made ties: an ordinal class with as many rows below as above its mean, a
    # categorical medoid tie, a nominal mode tie, duplicated rows.
    kinds = (
        ordinal_kind("grade", 1.0, tuple(f"g{i}" for i in range(5))),
        categorical_kind("education", 1.0, edu_taxonomy),
        nominal_kind("sex", 1.0, ("F", "M")),
    )
    codes = [
        np.array([0, 4, 1, 3, 2, 2, 0, 4, 1, 3, 2, 2]),
        np.array([0, 1, 4, 5, 0, 1, 4, 5, 2, 3, 6, 6]),
        np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]),
    ]
    frame = make_frame(np.arange(12), codes, np.zeros(12, dtype=np.int64), FIVE_LEVELS)
    schema = Schema(kinds=kinds, sensitive=FIVE_LEVELS)
    for k in (1, 2, 3, 4, 5, 6):
        block = Block(frame, BlockContext(schema=schema, model=HPKAnonymity(k=k)))
        assert np.array_equal(kernel.cluster(block, k), Mdav().cluster_reference(block)), k
