"""MAA-SAE's and MAA-MINIL's compiled kernel gives the numpy path's labels, ties included.

The numpy path (``SPARKANON_NO_JIT=1``) is the reference. Parity is checked on every block
of an Adult sample under Yang et al. 2014's attribute setting (continuous age, nominal attributes
as vectors, semantic fnlwgt), for both APF rules and MAA-MINIL, for cross-block placement,
on random small blocks of every supported kind with many exact ties (duplicated rows,
coarse codes), and on the pieces the kernel repeats bit for bit (entropy terms, the
semantic loss rules).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms import Block, BlockContext, block_rng, cluster_block, place_rows
from sparkanon.algorithms._block import ApfRule
from sparkanon.algorithms.blocks import _sae_kernel as kernel
from sparkanon.algorithms.blocks._slie_kernel import SEMANTIC, VECTOR_NOMINAL, pack
from sparkanon.algorithms.blocks.maa_sae import MaaMinil, MaaSae
from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    Kind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.schema import RID, SENS, Schema
from sparkanon.attributes.semantic import SemanticKind
from sparkanon.metrics.entropy import sensitive_entropy
from sparkanon.models import HPKAnonymity
from tests._adult import ROOT, KernelParity, adult_blocks
from tests._helpers import FIVE_LEVELS, assert_model_holds, both_paths, make_frame

YANG2014_CONF = ROOT / "conf" / "adult_psk_yang2014.yaml"
RULES: list[ApfRule] = ["gain_then_loss", "literal"]
# (algorithm name, apf_rule): MAA-MINIL ignores the rule.
VARIANTS: list[tuple[str, ApfRule]] = [
    ("maa_sae", "gain_then_loss"),
    ("maa_sae", "literal"),
    ("maa_minil", "gain_then_loss"),
]


def with_rule(ctx: BlockContext, rule: ApfRule) -> BlockContext:
    return replace(ctx, apf_rule=rule)


# ---------------------------------------------------------------------------
# Adult under Yang et al. 2014's attribute setting: every block, both paths
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def yang2014_blocks(
    tmp_path_factory: pytest.TempPathFactory,
) -> list[tuple[pd.DataFrame, BlockContext, int]]:
    """The blocks the local pipeline clusters for 1,500 Adult rows (conf/adult_psk_yang2014.yaml).

    Blocks of at most 300 rows keep the numpy reference fast.
    """
    tmp = tmp_path_factory.mktemp("adult003")
    return adult_blocks(tmp, YANG2014_CONF, 1500, max_block_rows=300, fnlwgt_digits=6, least=4)


def test_yang2014_blocks_are_packed(yang2014_blocks) -> None:
    frame, ctx, _ = yang2014_blocks[0]
    packed = pack(Block(frame, ctx), extended=True)
    assert packed is not None
    assert VECTOR_NOMINAL in packed.kind.tolist() and SEMANTIC in packed.kind.tolist()
    # MAA-SLIE's kernels do not take these kinds: without ``extended`` the schema is refused.
    assert pack(Block(frame, ctx)) is None


@pytest.mark.parametrize(("algorithm", "rule"), VARIANTS)
def test_yang2014_blocks_kernel_equals_numpy(
    yang2014_blocks, algorithm: str, rule: ApfRule, monkeypatch: pytest.MonkeyPatch
) -> None:
    parity = KernelParity(monkeypatch, algorithm, 7)
    for reference in parity.assert_blocks(yang2014_blocks, lambda ctx: with_rule(ctx, rule)):
        assert (reference >= 0).any()


@pytest.mark.parametrize("algorithm", ["maa_sae", "maa_minil"])
def test_yang2014_placement_kernel_equals_numpy(
    yang2014_blocks, algorithm: str, monkeypatch
) -> None:
    # Rows of one block placed into the classes of another (cross-block reconciliation).
    reference = KernelParity(monkeypatch, algorithm, 7).assert_placement(yang2014_blocks)
    assert (reference >= 0).all()


# ---------------------------------------------------------------------------
# Random small blocks of every supported kind, with many exact ties
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def all_kinds(edu_taxonomy: Taxonomy) -> tuple[Kind, ...]:
    taxonomy = edu_taxonomy
    return (
        ContinuousKind(name="age", weight=1.0),
        nominal_kind("race", 1.0, tuple(f"r{i}" for i in range(5)), encoding="vector"),
        ordinal_kind("grade", 0.5, tuple(f"g{i}" for i in range(9))),
        SemanticKind(name="zip", weight=1.5, length=4, beta=1.0, root_weight=0.0),
        categorical_kind("education", 1.0, taxonomy),
        nominal_kind("sex", 2.0, ("F", "M", "X")),
        ordinal_kind(
            "band", 1.0, tuple("abcde"), rank_weights=(1.0, 2.0, 0.5, 1.5), centroid="median"
        ),
        nominal_kind("work", 0.5, ("a", "b"), encoding="vector"),
    )


@st.composite
def tie_blocks(draw: st.DrawFn) -> tuple[pd.DataFrame, HPKAnonymity]:
    """A random block (n in 4..50) of few distinct rows (duplicates tie exactly), coarse codes.

    Semantic codes come from a few prefixes, so summed distances tie too.
    """
    n = draw(st.integers(4, 50))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    distinct = draw(st.integers(1, n))
    prefixes = rng.integers(0, 100, 3)
    base = [
        rng.integers(0, 6, distinct) / 5.0,
        rng.integers(0, 5, distinct),
        rng.integers(0, 9, distinct),
        rng.choice(prefixes, distinct) * 100 + rng.integers(0, 3, distinct) * 10,
        rng.integers(0, 7, distinct),
        rng.integers(0, 3, distinct),
        rng.integers(0, 5, distinct),
        rng.integers(0, 2, distinct),
    ]
    pick = rng.integers(0, distinct, n)
    values = rng.choice(10, size=draw(st.integers(1, 6)), replace=False)
    frame = make_frame(
        rng.choice(10**6, size=n, replace=False),
        [codes[pick] for codes in base],
        rng.choice(values, size=n),
        FIVE_LEVELS,
    )
    k = draw(st.integers(1, min(n, 8)))
    p = draw(st.integers(1, min(k, frame[SENS].nunique())))
    h = draw(st.integers(1, min(2, p)))
    return frame, HPKAnonymity(k=k, p=p, h=h)


@settings(max_examples=40, deadline=None)
@given(case=tie_blocks(), seed=st.integers(0, 1000))
def test_random_blocks_kernel_equals_numpy(case, seed: int, all_kinds) -> None:
    frame, model = case
    schema = Schema(kinds=all_kinds, sensitive=FIVE_LEVELS)
    for algorithm, rule in VARIANTS:
        ctx = BlockContext(schema=schema, model=model, apf_rule=rule)
        with pytest.MonkeyPatch.context() as mp:
            compiled, reference = both_paths(
                mp, lambda c=ctx, a=algorithm: cluster_block(frame, c, a, seed, 3)
            )
        assert np.array_equal(compiled, reference), (algorithm, rule)
        if model.h == 1:
            assert_model_holds(frame, compiled, model)
        if (reference < 0).all():
            continue
        # Cross-block placement: the block's own rows, renumbered, placed into its classes.
        extra = frame.assign(**{RID: frame[RID] + 10**7})

        def place(c=ctx, a=algorithm, labels=reference, rows=extra):
            return place_rows(frame, labels, rows, c, a, seed, 3)

        with pytest.MonkeyPatch.context() as mp:
            placed, placed_ref = both_paths(mp, place)
        assert np.array_equal(placed, placed_ref), (algorithm, rule)


def test_identical_rows_tie_everywhere(monkeypatch) -> None:
    # Twelve copies of one row with four sensitive values: every candidate and every class
    # ties exactly (no loss, the same entropy gains), so the lowest row and the earliest
    # class decide; both paths agree.
    schema = Schema(kinds=(ContinuousKind(name="age", weight=1.0),), sensitive=FIVE_LEVELS)
    frame = make_frame(np.arange(12), [np.full(12, 0.4)], np.arange(12) % 4, FIVE_LEVELS)
    for algorithm, rule in VARIANTS:
        ctx = BlockContext(schema=schema, model=HPKAnonymity(k=3, p=2, h=1), apf_rule=rule)
        compiled, reference = both_paths(
            monkeypatch, lambda c=ctx, a=algorithm: cluster_block(frame, c, a, 5, 1)
        )
        assert np.array_equal(compiled, reference)
        assert_model_holds(frame, reference, ctx.model)


# ---------------------------------------------------------------------------
# Dispatch: unsupported kinds and overridden rules use the numpy path
# ---------------------------------------------------------------------------


class _OtherContinuous(ContinuousKind):
    """A kind the kernel does not know (exact types only)."""


def test_unsupported_kind_falls_back_to_numpy_without_drawing() -> None:
    schema = Schema(kinds=(_OtherContinuous(name="age", weight=1.0),), sensitive=FIVE_LEVELS)
    frame = make_frame(np.arange(6), [np.linspace(0, 1, 6)], np.arange(6) % 3, FIVE_LEVELS)
    block = Block(frame, BlockContext(schema=schema, model=HPKAnonymity(k=2, p=2, h=1)))
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert kernel.cluster(block, rng, minil=False) is None
    assert kernel.place(block, np.zeros(6, dtype=np.int64), block, rng, minil=False) is None
    assert rng.bit_generator.state == state  # the numpy path then draws the same numbers
    labels = MaaSae().cluster(block, np.random.default_rng(0))
    assert (labels >= 0).all()


def test_subclass_with_its_own_rule_uses_numpy(monkeypatch) -> None:
    class Custom(MaaSae):
        def pick(self, ea, ila, rule):
            return 0

    assert MaaSae()._kernel() is not None and MaaMinil()._kernel() is not None
    assert Custom()._kernel() is None
    monkeypatch.setenv(kernel.NO_JIT_ENV, "1")
    assert MaaSae()._kernel() is None


# ---------------------------------------------------------------------------
# The pieces the kernel repeats bit for bit
# ---------------------------------------------------------------------------


def test_entropy_is_numpys_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    table = kernel._terms()
    buf = np.zeros(14)
    zero = np.zeros(14, dtype=np.int64)
    log2 = float(np.log(2.0))
    for _ in range(300):
        counts = rng.integers(0, 40, 14) * (rng.random(14) < 0.5)
        other = rng.integers(0, 3, 14)
        extra = int(rng.integers(-1, 14))
        grown = counts + other + (np.arange(14) == extra)
        expected = sensitive_entropy(grown.astype(float))
        got = kernel._entropy(counts, other, extra, table, log2, buf)
        assert got == expected
        # Beyond the table, np.log in the kernel: equal up to rounding.
        big = grown * 100
        got_big = kernel._entropy(big, zero, -1, table, log2, buf)
        assert got_big == pytest.approx(sensitive_entropy(big.astype(float)), abs=1e-14)


def test_semantic_losses_are_numpys(monkeypatch) -> None:
    # Classes of semantic codes only, with many shared prefixes: the growth scores
    # (losses_with_each), a class's own loss (the medoid's tolerance) and the union
    # losses (losses_of) must give the same decisions in both paths.
    kind = SemanticKind(name="zip", weight=1.0, length=6, beta=1.0, root_weight=0.0)
    schema = Schema(kinds=(kind,), sensitive=FIVE_LEVELS)
    rng = np.random.default_rng(11)
    codes = rng.choice([115000, 115001, 115010, 117000, 117002, 156000, 156010], 40)
    frame = make_frame(np.arange(40), [codes], rng.integers(0, 10, 40), FIVE_LEVELS)
    for algorithm, rule in VARIANTS:
        ctx = BlockContext(schema=schema, model=HPKAnonymity(k=4, p=3, h=1), apf_rule=rule)
        compiled, reference = both_paths(
            monkeypatch, lambda c=ctx, a=algorithm: cluster_block(frame, c, a, 2, 0)
        )
        assert np.array_equal(compiled, reference)


def test_grow_kernel_uses_the_drawn_start(monkeypatch) -> None:
    # The start rows come from the block's generator in Python, as in the numpy path.
    frame = make_frame(np.arange(8), [np.linspace(0, 1, 8)], np.arange(8) % 4, FIVE_LEVELS)
    schema = Schema(kinds=(ContinuousKind(name="age", weight=1.0),), sensitive=FIVE_LEVELS)
    block = Block(frame, BlockContext(schema=schema, model=HPKAnonymity(k=2, p=2, h=1)))
    monkeypatch.delenv(kernel.NO_JIT_ENV, raising=False)
    compiled = MaaSae().cluster(block, block_rng(0, 9))
    reference = MaaSae()._cluster_numpy(block, block_rng(0, 9))
    assert np.array_equal(compiled, reference)
