"""Mondrian (LeFevre et al. 2006): hand-worked cuts, relaxed ties, and the distributed tree.

The distributed job cuts the top of the tree on the engine, then blocks of
``max_block_rows`` inside tasks, then finishes each block with the algorithm; in
strict mode it must publish exactly what one machine partitioning the whole table
publishes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparkanon.algorithms import BlockContext, cluster_block
from sparkanon.attributes.kinds import ContinuousKind, ordinal_kind
from sparkanon.attributes.schema import LEVEL, RID, SENS, Schema, SensitiveLevels
from sparkanon.engine.local import LocalEngine
from sparkanon.families import parse_config
from sparkanon.models import HPKAnonymity, KAnonymity, ModelSet
from sparkanon.pipeline import run_job
from tests._adult import ROOT, adult_config, adult_sample

FLAT = SensitiveLevels("s", ("a", "b"), np.array([0, 0]), ("all",), np.array([0.5]), False)


def block(x: list[float], y: list[int] | None = None, sens: list[int] | None = None):
    kinds = [ContinuousKind("x", 1.0, 0.0, 100.0)]
    frame = {RID: np.arange(len(x)), "_q0": np.asarray(x) / 100.0}
    if y is not None:
        kinds.append(ordinal_kind("y", 1.0, tuple("abcdefgh")))
        frame["_q1"] = y
    frame[SENS] = sens if sens is not None else [0] * len(x)
    frame = pd.DataFrame(frame)
    frame[LEVEL] = 0
    return frame, Schema(kinds=tuple(kinds), sensitive=FLAT)


def classes(frame: pd.DataFrame, labels: np.ndarray) -> list[list[int]]:
    groups: dict[int, list[int]] = {}
    for rid, label in zip(frame[RID], labels, strict=True):
        groups.setdefault(int(label), []).append(int(rid))
    return sorted(groups.values())


def run(frame: pd.DataFrame, schema: Schema, k: int, mode: str = "strict") -> list[list[int]]:
    models = ModelSet([KAnonymity(k=k)])
    ctx = BlockContext(schema, HPKAnonymity(k=k), models=models, mondrian_mode=mode)
    return classes(frame, cluster_block(frame, ctx, "mondrian", 0, 1))


def test_median_cuts_on_one_attribute() -> None:
    # Eight ages, k = 2: median cut 20..23 | 24..27, then each half at its median.
    frame, schema = block([20, 21, 22, 23, 24, 25, 26, 27])
    assert run(frame, schema, 2) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    # k = 3: one cut (4 | 4); neither half can be cut into two sides of 3.
    assert run(frame, schema, 3) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_the_widest_normalised_range_is_cut_first() -> None:
    # x spans 10..20 (0.10 of its 0..100 domain); y spans ranks a..h (1.0 of its
    # domain): y is cut first, at its median between ranks b and g.
    frame, schema = block([10, 20, 11, 19], y=[0, 0, 7, 7])
    assert run(frame, schema, 2) == [[0, 1], [2, 3]]


def test_relaxed_splits_rows_of_equal_value() -> None:
    # Six ages of 30 and four of 31, k = 2. Strict: the only cut is 30 | 31 (6 | 4), and
    # neither side can be cut (one value each).
    frame, schema = block([30] * 6 + [31] * 4)
    assert run(frame, schema, 2) == [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9]]
    # Relaxed: rows in (value, row) order split at the middle position, 5 | 5, so one 30
    # joins the 31s; that side (30, 31, 31, 31, 31) splits at position 2 (2.5 is as far
    # from 2 as from 3: the lower wins): {30, 31} | {31, 31, 31}. A side of one value has
    # no width left to cut.
    assert run(frame, schema, 2, mode="relaxed") == [[0, 1, 2, 3, 4], [5, 6], [7, 8, 9]]


def _job(tmp_path: Path, sample: Path, name: str, **partitioning: int) -> pd.DataFrame:
    raw = adult_config(
        tmp_path,
        sample,
        tmp_path / name,
        conf=ROOT / "conf" / "adult_mondrian_ldiv.yaml",
        partitioning=partitioning,
    )
    raw["attributes"].append({"name": "fnlwgt", "kind": "keep"})
    result = run_job(LocalEngine(batch_rows=500), parse_config(raw), commit=False)
    assert result.metrics["verified"] is True
    return result.published


def test_distributed_tree_equals_one_machine(tmp_path: Path) -> None:
    """Cut on the engine (task_rows), in tasks (max_block_rows) and in blocks: one tree."""
    sample = adult_sample(tmp_path, 4000)
    whole = _job(tmp_path, sample, "whole", max_block_rows=4000, task_rows=4000)
    split = _job(tmp_path, sample, "split", max_block_rows=120, task_rows=700)
    cols = sorted(whole.columns)
    key = ["fnlwgt", "age", "occupation", "income"]
    pd.testing.assert_frame_equal(
        whole[cols].sort_values(key + cols).reset_index(drop=True),
        split[cols].sort_values(key + cols).reset_index(drop=True),
    )


@pytest.mark.parametrize(
    "config", ["adult_mondrian_k", "adult_mondrian_ldiv", "adult_mondrian_tclose"]
)
def test_bundled_configs_verify_on_a_sample(tmp_path: Path, config: str) -> None:
    sample = adult_sample(tmp_path, 2500)
    raw = adult_config(tmp_path, sample, tmp_path / "out", conf=ROOT / "conf" / f"{config}.yaml")
    for mode in ("strict", "relaxed"):
        raw["algorithm"]["mode"] = mode
        m = run_job(LocalEngine(), parse_config(raw), commit=False).metrics
        assert m["verified"] is True and m["rows_out"] == 2500, (config, mode)
        assert m["publish"] == "generalized"


def test_a_sampled_top_is_checked_on_exact_counts(tmp_path: Path) -> None:
    """Above ``sample_rows`` the top is planned on a sample; every class still passes.

    4,000 rows, a 1,000-row sample planning the top down to nodes of 250 sampled rows
    (task_rows 1,000 x 1/4): the published classes need not be the single-machine ones
    (the sample's medians are not the table's), but the job verifies them (entropy
    4-diversity), publishes every row, and a rerun gives the same table.
    """
    sample = adult_sample(tmp_path, 4000)
    sampled = _job(tmp_path, sample, "s1", max_block_rows=300, task_rows=1000, sample_rows=1000)
    again = _job(tmp_path, sample, "s2", max_block_rows=300, task_rows=1000, sample_rows=1000)
    assert len(sampled) == 4000
    cols = sorted(sampled.columns)
    key = ["fnlwgt", "age", "occupation", "income"]
    pd.testing.assert_frame_equal(
        sampled[cols].sort_values(key + cols).reset_index(drop=True),
        again[cols].sort_values(key + cols).reset_index(drop=True),
    )
