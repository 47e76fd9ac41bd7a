"""Each attack succeeds against a deliberately weak release built here (negative controls).

An attack that cannot break a release made to be broken would prove nothing when it fails
on a real one. Each weak release repeats one finding of issue 38's review: noise from the
public generator keyed by the published seed and ``record_id``; condensation groups named
in the data; a stream group released again with one new member; two releases in input
order. The same attacks on a release without the weakness stay at their chance level.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.attacks import (
    condensation_groups,
    perturbation_noise,
    release_join,
    release_order,
    splitmix,
)
from tests.attacks.release import Release

ROWS = 2000
SEED = 11
COLUMNS = [
    {"name": "age", "noise": "gaussian", "privacy": 0.5},
    {"name": "hours", "noise": "uniform", "scale": 5.0},
    {"name": "job", "noise": "randomized_response", "retention": 0.7},
]
JOBS = ["a", "b", "c", "d"]


def _people(rows: int = ROWS, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(17, 90, rows),
            "hours": np.round(rng.normal(40, 10, rows).clip(1, 99), 1),
            "job": rng.choice(JOBS, rows),
            "income": rng.choice(["<=50K", ">50K"], rows, p=[0.75, 0.25]),
        }
    )


def _matrix(retention: float, size: int) -> np.ndarray:
    other = (1.0 - retention) / (size - 1)
    return np.full((size, size), other) + np.eye(size) * (retention - other)


def _write_release(folder: Path, table: pd.DataFrame, config: dict, noise: dict) -> Release:
    (folder / "data").mkdir(parents=True)
    table.to_csv(folder / "data" / "part-00000.csv", index=False)
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (folder / "metrics.json").write_text(json.dumps({"seed": config["seed"]}), encoding="utf-8")
    (folder / "noise.json").write_text(json.dumps(noise), encoding="utf-8")
    return Release(folder)


def _perturbed(folder: Path, source: pd.DataFrame, keyed: bool) -> Release:
    """A release perturbed with the old public generator, or with secret draws."""
    ids = np.arange(len(source), dtype=np.int64)
    secret = np.random.default_rng(None)
    sigma, half = 5.0, 5.0
    matrix = _matrix(0.7, len(JOBS))
    if keyed:
        age_noise = secret.normal(0, sigma, len(ids))
        hours_noise = secret.uniform(-half, half, len(ids))
        u = secret.random(len(ids))
    else:
        age_noise = splitmix.noise(SEED, 0, ids, "gaussian", sigma)
        hours_noise = splitmix.noise(SEED, 1, ids, "uniform", half)
        u = splitmix.uniforms(SEED, 2, ids, 0)
    codes = source["job"].map({v: i for i, v in enumerate(JOBS)}).to_numpy()
    table = pd.DataFrame(
        {
            "record_id": ids,
            "age": source["age"] + age_noise,
            "hours": source["hours"] + hours_noise,
            "job": np.asarray(JOBS, dtype=object)[splitmix.randomized(codes, matrix, u)],
            "income": source["income"],
        }
    )
    noise = {
        "age": {"distribution": "gaussian", "scale": sigma},
        "hours": {"distribution": "uniform", "scale": half},
        "job": {"values": JOBS, "transition_matrix": matrix.tolist(), "retention": 0.7},
    }
    config = {"seed": SEED, "algorithm": {"name": "perturb", "columns": COLUMNS}}
    return _write_release(folder, table, config, noise)


def test_rebuilt_generator_is_the_old_public_one() -> None:
    noise = pytest.importorskip("sparkanon.algorithms.perturbation.noise")
    if not hasattr(noise, "counter_uniforms"):
        pytest.skip("the public counter generator is gone from the package")
    ids = np.arange(-5, 500, dtype=np.int64)
    for stream, lane in ((0, 0), (3, 1), (7, 2)):
        assert np.array_equal(
            splitmix.uniforms(SEED, stream, ids, lane),
            noise.counter_uniforms(SEED, stream, ids, lane=lane),
        )


def test_noise_regeneration_breaks_unkeyed_noise(tmp_path: Path) -> None:
    source = _people()
    found = perturbation_noise.attack(_perturbed(tmp_path, source, keyed=False), source)
    # chance is high (about 40%): a wrong draw of randomized response still pins the
    # published value as the true one, which it is for 70% of the rows (the retention)
    assert found.rate > 0.99 and found.rate - found.chance > 0.5, found


def test_noise_regeneration_fails_on_secret_noise(tmp_path: Path) -> None:
    source = _people()
    found = perturbation_noise.attack(_perturbed(tmp_path, source, keyed=True), source)
    assert found.no_better_than_chance(0.02), found


def _condensed(rows: int, k: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Input with a mostly-zero gain, and groups of ``k`` published with their mean exact."""
    gain = np.where(rng.random(rows) < 0.2, rng.integers(1000, 99999, rows), 0).astype(float)
    source = pd.DataFrame({"age": rng.integers(17, 90, rows).astype(float), "gain": gain})
    frames = []
    for group, start in enumerate(range(0, rows - rows % k, k)):
        members = source.iloc[start : start + k].to_numpy()
        spread = rng.normal(0, 1, members.shape)
        spread -= spread.mean(axis=0)
        synthetic = members.mean(axis=0) + spread * members.std(axis=0)
        frames.append(pd.DataFrame(synthetic, columns=["age", "gain"]).assign(group=group))
    return source, pd.concat(frames, ignore_index=True)


def test_group_statistics_give_away_a_dominant_record(tmp_path: Path) -> None:
    source, table = _condensed(1000, 5, np.random.default_rng(4))
    release = _write_release(tmp_path / "r", table, {"seed": 1}, {})
    found = condensation_groups.attack(release, source, ["age", "gain"])
    # a group of 5 with exactly one non-zero gain: 5 * 0.2 * 0.8**4 = 41% of the groups
    assert found.rate > 0.3 and found.chance < 0.02, found
    hidden = _write_release(tmp_path / "h", table.drop(columns="group"), {"seed": 1}, {})
    assert condensation_groups.attack(hidden, source, ["age", "gain"]).rate == 0.0


def _stream_releases(rng: np.random.Generator) -> tuple[list[pd.DataFrame], pd.DataFrame]:
    """Groups of 5 released, then each released again with one new member (exact means)."""
    members = {g: rng.normal(50, 10, (5, 2)) for g in range(40)}
    first, second, joined = [], [], []
    for g, values in members.items():
        spread = rng.normal(0, 1, values.shape)
        spread -= spread.mean(axis=0)
        first.append(pd.DataFrame(values.mean(axis=0) + spread, columns=["x", "y"]).assign(g=g))
        new = rng.normal(50, 10, (1, 2))
        joined.append(new)
        mean = np.vstack([values, new]).mean(axis=0)
        second.append(pd.DataFrame(mean[None, :], columns=["x", "y"]).assign(g=g))
    everything = np.vstack([*members.values(), *joined])
    source = pd.DataFrame(everything, columns=["x", "y"])
    return [pd.concat(first, ignore_index=True), pd.concat(second, ignore_index=True)], source


def test_differencing_recovers_a_new_stream_record() -> None:
    from tests.attacks import stream_differencing

    releases, source = _stream_releases(np.random.default_rng(6))
    found = stream_differencing.attack(releases, source, ["x", "y"])
    assert found.rate == 1.0 and found.targets == 40 and found.chance < 0.05, found
    hidden = [r.drop(columns="g") for r in releases]
    assert stream_differencing.attack(hidden, source, ["x", "y"]).targets == 0


def _generalized(source: pd.DataFrame, width: int, order: np.ndarray) -> pd.DataFrame:
    rows = source.iloc[order].reset_index(drop=True)
    return pd.DataFrame({"age": rows["age"] // width * width, "income": rows["income"]})


def test_join_by_position_and_by_id_links_two_releases() -> None:
    source = _people()
    rng = np.random.default_rng(7)
    same = np.arange(ROWS)
    found = release_join.attack(
        _generalized(source, 5, same), _generalized(source, 10, same), "income"
    )
    assert found.rate == 1.0 and found.chance < 0.7, found
    a, b = rng.permutation(ROWS), rng.permutation(ROWS)
    by_id = release_join.attack(
        _generalized(source, 5, a).assign(record_id=a),
        _generalized(source, 10, b).assign(record_id=b),
        "income",
    )
    assert by_id.rate == 1.0, by_id
    shuffled = release_join.attack(
        _generalized(source, 5, a).assign(record_id=rng.permutation(ROWS)),
        _generalized(source, 10, b).assign(record_id=rng.permutation(ROWS)),
        "income",
    )
    assert shuffled.no_better_than_chance(0.05), shuffled


def test_order_attack_reads_the_input_order() -> None:
    source = _people()
    kept = _generalized(source, 5, np.arange(ROWS)).assign(record_id=np.arange(ROWS))
    found = release_order.attack(kept, source, "income")
    assert found.rate == 1.0 and found.chance < 0.7, found
    assert release_order.rank_correlations(kept)["record_id"] == pytest.approx(1.0)
    order = np.random.default_rng(8).permutation(ROWS)
    shuffled = _generalized(source, 5, order)
    assert release_order.attack(shuffled, source, "income").no_better_than_chance(0.05)
