"""MAA-SLIE's compiled kernel gives the numpy path's labels, ties included.

The numpy path (``SPARKANON_NO_JIT=1``) is the reference. Parity is checked on every
block of the Adult demo config, on random small blocks of every supported kind, for
cross-block placement, and on hand-made exact ties that floating-point rounding alone
would break the other way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms import Block, BlockContext, cluster_block, place_rows
from sparkanon.algorithms._classes import ClassStats
from sparkanon.algorithms.blocks import _slie_kernel as kernel
from sparkanon.algorithms.blocks.maa_slie import MaaSlie
from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.kinds import (
    ContinuousKind,
    Kind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.schema import LEVEL, RID, SENS, Schema, SensitiveLevels
from sparkanon.metrics.entropy import QUANTUM, best_by_psi, quantise
from sparkanon.models import HPKAnonymity
from tests._adult import ADULT_CONF, KernelParity, adult_blocks
from tests._helpers import both_paths, make_frame

THREE_LEVELS = SensitiveLevels(
    name="s",
    values=tuple(f"s{i}" for i in range(6)),
    level_of=np.array([0, 0, 1, 1, 2, 2]),
    level_names=("low", "mid", "high"),
    weights=np.array([0.1, 0.4, 0.8]),
)


def assert_hpk(frame: pd.DataFrame, labels: np.ndarray, model: HPKAnonymity) -> None:
    df = pd.DataFrame({"c": labels, "s": frame[SENS].to_numpy(), "l": frame[LEVEL].to_numpy()})
    df = df[df.c >= 0]
    g = df.groupby("c")
    summary = pd.DataFrame({"n": g.size(), "v": g["s"].nunique(), "lv": g["l"].nunique()})
    bad = summary[(summary.n < model.k) | (summary.v < model.p) | (summary.lv < model.h)]
    assert bad.empty, f"classes violating {model}:\n{bad}"


# ---------------------------------------------------------------------------
# Adult demo config: every block, both paths
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_blocks(
    tmp_path_factory: pytest.TempPathFactory,
) -> list[tuple[pd.DataFrame, BlockContext, int]]:
    """The blocks the local pipeline clusters for the first 6,000 Adult rows (demo config)."""
    return adult_blocks(tmp_path_factory.mktemp("adult"), ADULT_CONF, 6000, least=3)


def test_adult_blocks_kernel_equals_numpy(demo_blocks, monkeypatch: pytest.MonkeyPatch) -> None:
    parity = KernelParity(monkeypatch, "maa_slie", 42)
    for reference in parity.assert_blocks(demo_blocks, pack=kernel.pack):
        assert (reference >= 0).any()


def test_adult_placement_kernel_equals_numpy(demo_blocks, monkeypatch) -> None:
    # Rows of one block placed into the classes of another (cross-block reconciliation).
    reference = KernelParity(monkeypatch, "maa_slie", 42).assert_placement(demo_blocks, rows=300)
    assert (reference >= 0).all()


# ---------------------------------------------------------------------------
# Random small blocks of every supported kind
# ---------------------------------------------------------------------------


def mixed_kinds(taxonomy: Taxonomy, median: bool) -> tuple[Kind, ...]:
    return (
        ContinuousKind(name="age", weight=1.0),
        ordinal_kind("grade", 0.5, tuple(f"g{i}" for i in range(9)), centroid="mean_frequency"),
        categorical_kind("education", 1.0, taxonomy),
        nominal_kind("sex", 2.0, ("F", "M", "X")),
        ordinal_kind(
            "band",
            1.0,
            ("a", "b", "c", "d", "e"),
            rank_weights=(1.0, 2.0, 0.5, 1.5),
            centroid="median" if median else "mean_frequency",
        ),
    )


@st.composite
def small_blocks(draw: st.DrawFn) -> tuple[pd.DataFrame, HPKAnonymity, bool, tuple[float, float]]:
    """A random block (n in 6..80), coarse codes so that ties happen, and a model it hosts."""
    n = draw(st.integers(6, 80))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_values = draw(st.integers(2, 6))
    codes = [
        rng.integers(0, 6, n) / 5.0,
        rng.integers(0, 9, n),
        rng.integers(0, 7, n),
        rng.integers(0, 3, n),
        rng.integers(0, 5, n),
    ]
    sens = rng.choice(rng.choice(6, size=n_values, replace=False), size=n)
    frame = make_frame(rng.choice(10**6, size=n, replace=False), codes, sens, THREE_LEVELS)
    values, levels = frame[SENS].nunique(), frame[LEVEL].nunique()
    k = draw(st.integers(1, min(n, 10)))
    p = draw(st.integers(1, min(k, values)))
    h = draw(st.integers(1, min(p, levels)))
    w1 = draw(st.sampled_from([0.5, 0.0, 1.0, 0.25]))
    return frame, HPKAnonymity(k=k, p=p, h=h), draw(st.booleans()), (w1, 1.0 - w1)


@settings(max_examples=60, deadline=None)
@given(case=small_blocks(), seed=st.integers(0, 1000))
def test_random_blocks_kernel_equals_numpy_and_hold_hpk(case, seed: int, edu_taxonomy) -> None:
    frame, model, median, weights = case
    schema = Schema(kinds=mixed_kinds(edu_taxonomy, median), sensitive=THREE_LEVELS)
    ctx = BlockContext(schema=schema, model=model, psi_weights=weights)
    with pytest.MonkeyPatch.context() as mp:
        compiled, reference = both_paths(mp, lambda: cluster_block(frame, ctx, "maa_slie", seed, 3))
    assert np.array_equal(compiled, reference)
    assert (compiled >= 0).all()
    assert_hpk(frame, compiled, model)
    # Cross-block placement: the block's own rows, renumbered, placed into its classes.
    extra = frame.assign(**{RID: frame[RID] + 10**7})
    with pytest.MonkeyPatch.context() as mp:
        placed, placed_ref = both_paths(
            mp, lambda: place_rows(frame, reference, extra, ctx, "maa_slie", seed, 3)
        )
    assert np.array_equal(placed, placed_ref)


def test_unsupported_kind_falls_back_to_numpy() -> None:
    frame = make_frame(np.arange(4), [np.array([0, 1, 0, 1])], np.array([0, 2, 4, 1]), THREE_LEVELS)
    model = HPKAnonymity(k=2, p=2, h=1)
    indicator = Schema(kinds=(nominal_kind("sex", 1.0, ("F", "M")),), sensitive=THREE_LEVELS)
    assert kernel.pack(Block(frame, BlockContext(schema=indicator, model=model))) is not None
    # A subclass with its own loss rule (vector nominal) is not packed: numpy path.
    vector = Schema(
        kinds=(nominal_kind("sex", 1.0, ("F", "M"), encoding="vector"),), sensitive=THREE_LEVELS
    )
    block = Block(frame, BlockContext(schema=vector, model=model))
    assert kernel.pack(block) is None
    assert kernel.cluster(block, np.random.default_rng(0)) is None
    labels = MaaSlie().cluster(block, np.random.default_rng(0))
    assert (labels >= 0).all()


# ---------------------------------------------------------------------------
# Exact ties: the lowest row position / class id wins in both paths
# ---------------------------------------------------------------------------


def age_block(
    ages: list[float], sens: list[int], model: HPKAnonymity
) -> tuple[pd.DataFrame, BlockContext]:
    schema = Schema(kinds=(ContinuousKind(name="age", weight=1.0),), sensitive=THREE_LEVELS)
    frame = make_frame(np.arange(len(ages)), [np.array(ages)], np.array(sens), THREE_LEVELS)
    return frame, BlockContext(schema=schema, model=model)


def test_psi_tie_of_leftover_goes_to_the_lowest_class(monkeypatch) -> None:
    # Codes 0.2 0.3 0.4 0.5 0.6, one level, (k, p, h) = (2, 2, 1). Central row 0.4; of
    # the farthest rows 0.2 and 0.6 (a tie) row 0 seeds class 0 = {0.2, 0.3}; class 1 =
    # {0.6, 0.5}. Row 0.4 is left over and ties exactly: either class would have
    # InfoLoss 0.2 and HEC 0. In floating point class 1's loss is a few units in the last
    # place smaller, so the raw argmax of PSI picks class 1; on the quantised grid they
    # tie and class 0 (lowest id) wins.
    frame, ctx = age_block([0.2, 0.3, 0.4, 0.5, 0.6], [0, 1, 0, 1, 0], HPKAnonymity(k=2, p=2, h=1))
    compiled, reference = both_paths(
        monkeypatch, lambda: cluster_block(frame, ctx, "maa_slie", 0, 0)
    )
    assert np.array_equal(compiled, reference)
    assert reference.tolist() == [0, 0, 0, 1, 1]
    # The tie is real only on the grid: the raw losses differ.
    block = Block(frame, ctx)
    classes = ClassStats.from_labels(block, np.array([0, 0, -1, 1, 1]), 2)
    raw = classes.losses(np.arange(2), [np.array([0.4])])
    assert raw[1] < raw[0]
    assert quantise(raw[0]) == quantise(raw[1])


def test_farthest_row_tie_goes_to_the_lowest_row(monkeypatch) -> None:
    # Codes 0.7 0.3 0.5 0.5 0.5 (rows 0-4, one sensitive value), (k, p, h) = (2, 1, 1).
    # The central row is row 2 (0.5, the mean; rows 3 and 4 are equal to it). Rows 0
    # and 1 are equally far from it, but 0.7 - 0.5 < 0.5 - 0.3 in floating point, so the
    # raw argmax is row 1; on the grid they tie and row 0 seeds class 0, joined by row 2
    # (0.5: least loss; rows 2-4 tie, the first wins). Class 1 is {row 1, row 3}. Row 4
    # is left over and ties exactly between the two classes: class 0 wins.
    frame, ctx = age_block([0.7, 0.3, 0.5, 0.5, 0.5], [0] * 5, HPKAnonymity(k=2, p=1, h=1))
    block = Block(frame, ctx)
    assert block.central_row(np.arange(5)) == 2
    raw = block.distances_to_row(np.arange(2), 2)
    assert raw[0] < raw[1] and quantise(raw[0]) == quantise(raw[1])
    compiled, reference = both_paths(
        monkeypatch, lambda: cluster_block(frame, ctx, "maa_slie", 0, 0)
    )
    assert np.array_equal(compiled, reference)
    assert reference.tolist() == [0, 1, 0, 1, 0]


def test_best_by_psi_ties_on_the_grid() -> None:
    # Losses a few units in the last place apart tie; the lowest index wins.
    loss = np.array([0.4, 0.4 * (1 + 4e-16), 0.4 * (1 - 4e-16)])
    assert loss[2] < loss[0] < loss[1]
    assert best_by_psi(np.zeros(3), loss, 0.5, 0.5) == 0
    # Differences of more than a grid step still count.
    assert best_by_psi(np.zeros(2), np.array([0.4, 0.4 - 4 * QUANTUM]), 0.5, 0.5) == 1
    # Zero loss keeps its meaning (<= ZERO_LOSS is infinite PSI), even next to tiny losses.
    assert best_by_psi(np.array([0.9, 0.1]), np.array([1e-11, 1e-13]), 0.5, 0.5) == 1
    assert best_by_psi(np.array([0.1, 0.1]), np.array([1e-11, 2e-10]), 0.5, 0.5) == 0


@pytest.mark.parametrize("n", [0, 1, 5, 7, 8, 9, 16, 17, 127, 128, 129, 300, 1000, 2049])
def test_pairwise_sum_is_numpys_order(n: int) -> None:
    # The kernel repeats numpy's summation order bit for bit; a numpy that changes it
    # fails here first (parity then still holds through the quantised grid).
    a = np.random.default_rng(n).random(n) * 10.0 ** np.random.default_rng(n + 1).integers(-3, 3, n)
    assert kernel._pairwise_sum(a, 0, n) == np.sum(a)
