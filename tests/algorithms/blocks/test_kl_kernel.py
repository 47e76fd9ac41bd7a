"""(K,L) clustering's compiled kernel gives the numpy path's labels, ties included.

The numpy path (``SPARKANON_NO_JIT=1``) is the reference. Parity is checked on every
block of a small Adult run of ``conf/adult_kl_chai2015.yaml``, on random small blocks
over random subsets of the mixed schema's kinds (coarse codes, so that NCP and distance
ties are common), and for cross-block placement; the kernel's functions must each
compile once (one type per argument).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparkanon.algorithms import Block, BlockContext, cluster_block, place_rows
from sparkanon.algorithms.blocks import _kl_kernel as kernel
from sparkanon.algorithms.blocks.kl_cluster import KLCluster
from sparkanon.attributes.kinds import ContinuousKind, Kind, nominal_kind, ordinal_kind
from sparkanon.attributes.schema import LEVEL, RID, SENS, Schema
from sparkanon.engine.local import LocalEngine
from sparkanon.families import parse_config
from sparkanon.models import HPKAnonymity
from sparkanon.pipeline import run_job
from tests._adult import (
    ROOT,
    KernelParity,
    adult_blocks,
    adult_config,
    adult_sample,
)
from tests._helpers import FIVE_LEVELS, both_paths, make_frame

KL_CONF = ROOT / "conf" / "adult_kl_chai2015.yaml"


def assert_kl(frame: pd.DataFrame, labels: np.ndarray, model: HPKAnonymity) -> None:
    """Every row placed; every class has ``k`` rows and ``p`` values.

    (Levels are not kl_cluster's guarantee: the repair step enforces ``h``; ``h`` only
    decides, as in :meth:`Block.can_host_class`, whether the free rows can host a class.)
    """
    assert (labels >= 0).all()
    df = pd.DataFrame({"c": labels, "s": frame[SENS].to_numpy(), "l": frame[LEVEL].to_numpy()})
    g = df.groupby("c")
    assert g.size().min() >= model.k
    assert g["s"].nunique().min() >= model.p


# ---------------------------------------------------------------------------
# Adult (K = 10, L = 3): every block, both paths
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kl_blocks(tmp_path_factory: pytest.TempPathFactory) -> list:
    """The blocks the local pipeline clusters for the first 2,400 Adult rows (blocks of 600)."""
    tmp = tmp_path_factory.mktemp("adult_kl")
    return adult_blocks(tmp, KL_CONF, 2400, max_block_rows=600, least=3)


def test_adult_blocks_kernel_equals_numpy(kl_blocks, monkeypatch: pytest.MonkeyPatch) -> None:
    parity = KernelParity(monkeypatch, "kl_cluster", 1)
    for reference in parity.assert_blocks(kl_blocks, pack=kernel.pack):
        assert (reference >= 0).all()
    # Rows of one block placed into the classes of another (cross-block reconciliation).
    assert (parity.assert_placement(kl_blocks, rows=200) >= 0).all()


def test_each_kernel_function_compiles_once(kl_blocks) -> None:
    """One type per argument: a literal argument would compile a second version.

    Checked when this process compiled the kernel (a cold numba cache, as on CI); a
    kernel loaded from the on-disk cache holds no signatures of its inner functions.
    """
    frame, ctx, block_id = kl_blocks[0]
    labels = cluster_block(frame, ctx, "kl_cluster", 1, block_id)
    place_rows(frame, labels, kl_blocks[1][0].iloc[:20], ctx, "kl_cluster", 1, block_id)
    if not kernel.cluster_kernel.stats.cache_misses:
        pytest.skip("the kernel was loaded from numba's cache, not compiled here")
    compiled = {
        name: f.signatures
        for name, f in vars(kernel).items()
        if hasattr(f, "signatures") and f.py_func.__module__ == kernel.__name__
    }
    assert {name: len(s) for name, s in compiled.items() if len(s) != 1} == {}


# ---------------------------------------------------------------------------
# Random small blocks over random schemas
# ---------------------------------------------------------------------------


def kinds_pool(mixed_schema: Schema) -> list[Kind]:
    """The mixed schema's four kinds, a median ordinal and a two-value nominal."""
    return [
        *mixed_schema.kinds,
        ordinal_kind("band", 1.0, ("a", "b", "c", "d", "e"), centroid="median"),
        nominal_kind("flag", 1.0, ("n", "y")),
    ]


def coarse_codes(kind: Kind, rng: np.random.Generator, n: int) -> np.ndarray:
    """Few distinct codes, so that NCP growths and distances tie often."""
    if isinstance(kind, ContinuousKind):
        return rng.integers(0, 6, n) / 5.0
    return rng.integers(0, min(kind.size, 6), n)


@st.composite
def small_blocks(draw: st.DrawFn, pool: list[Kind]) -> tuple[pd.DataFrame, Schema, HPKAnonymity]:
    """A random block (6..70 rows) over a random non-empty subset of ``pool``, and a model."""
    chosen = draw(st.lists(st.sampled_from(range(len(pool))), min_size=1, max_size=5, unique=True))
    weights = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=5, max_size=5))
    kinds = tuple(
        dataclasses.replace(pool[i], weight=w) for i, w in zip(chosen, weights, strict=False)
    )
    n = draw(st.integers(6, 70))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_values = draw(st.integers(1, 8))
    sens = rng.choice(rng.choice(10, size=n_values, replace=False), size=n)
    codes = [coarse_codes(kind, rng, n) for kind in kinds]
    frame = make_frame(rng.choice(10**6, size=n, replace=False), codes, sens, FIVE_LEVELS)
    values, levels = frame[SENS].nunique(), frame[LEVEL].nunique()
    k = draw(st.integers(1, min(n, 8)))
    p = draw(st.integers(1, min(k, values)))
    h = draw(st.integers(1, min(p, levels)))
    return frame, Schema(kinds=kinds, sensitive=FIVE_LEVELS), HPKAnonymity(k=k, p=p, h=h)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), rounds=st.sampled_from([1, 3, 10]))
def test_random_blocks_kernel_equals_numpy(data, rounds: int, mixed_schema: Schema) -> None:
    frame, schema, model = data.draw(small_blocks(kinds_pool(mixed_schema)))
    ctx = BlockContext(schema=schema, model=model, max_iterations=rounds)
    with pytest.MonkeyPatch.context() as mp:
        compiled, reference = both_paths(mp, lambda: cluster_block(frame, ctx, "kl_cluster", 0, 3))
    assert np.array_equal(compiled, reference)
    assert_kl(frame, compiled, model)
    # Cross-block placement: the block's own rows, renumbered, placed into its classes.
    extra = frame.assign(**{RID: frame[RID] + 10**7})
    with pytest.MonkeyPatch.context() as mp:
        placed, placed_ref = both_paths(
            mp, lambda: place_rows(frame, reference, extra, ctx, "kl_cluster", 0, 3)
        )
    assert np.array_equal(placed, placed_ref)


def test_unsupported_kind_falls_back_to_numpy() -> None:
    frame = make_frame(np.arange(6), [np.array([0, 1, 0, 1, 0, 1])], np.arange(6), FIVE_LEVELS)
    model = HPKAnonymity(k=2, p=2, h=1)
    vector = Schema(
        kinds=(nominal_kind("sex", 1.0, ("F", "M"), encoding="vector"),), sensitive=FIVE_LEVELS
    )
    block = Block(frame, BlockContext(schema=vector, model=model))
    assert kernel.pack(block) is None
    assert kernel.cluster(block, np.zeros(6, dtype=np.int64), 1, 1e-12) is None
    labels = KLCluster().cluster(block, np.random.default_rng(0))
    assert_kl(frame, labels, model)


@pytest.mark.spark
def test_spark_publishes_the_local_engines_table(spark, tmp_path: Path) -> None:
    """The kernel runs in Spark's Python workers too: both engines publish the same rows."""
    from sparkanon.engine.spark import SparkEngine

    sample = adult_sample(tmp_path, 600)
    raw = adult_config(
        tmp_path, sample, tmp_path / "unused", conf=KL_CONF, partitioning={"max_block_rows": 300}
    )
    cfg = parse_config(raw)
    published = []
    for name, engine in (("local", LocalEngine()), ("spark", SparkEngine(spark))):
        out = cfg.output.model_copy(update={"path": str(tmp_path / name)})
        assert run_job(engine, cfg.model_copy(update={"output": out})).metrics["verified"]
        frame = pd.read_parquet(tmp_path / name / "data")
        published.append(frame.sort_values(sorted(frame.columns)).reset_index(drop=True))
    pd.testing.assert_frame_equal(published[0], published[1], check_dtype=False)
