"""Static condensation end to end (Aggarwal and Yu 2004), and its bad input.

Every run checks what the family promises: groups of at least ``k`` records, each
released as synthetic records within the stated bounds of its mean and covariance, no
group id published, no synthetic record equal to an original, and rows in equal to the
records the groups represent plus the suppressed ones; a release off its group statistics
exits 3 and writes nothing; bad settings exit 2 naming the key. Spark publishes the same table:
``tests/test_golden.py``'s Spark check runs the ``adult_condense_mixed`` case.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.errors import EXIT_OK, EXIT_PRIVACY
from tests._inputs import cli_exit_code, correlated_people, csv_input, leftovers, write_csv

N_ROWS = 1500


def people(n: int = N_ROWS, seed: int = 5) -> pd.DataFrame:
    """The job tests' input (:func:`tests._inputs.correlated_people`)."""
    return correlated_people(n, seed)


def condense_config(tmp_path: Path, data: Path, **changes: Any) -> dict[str, Any]:
    """A condensation job over :func:`people`, output under ``tmp_path``."""
    kinds = {"age": "continuous", "income_k": "continuous", "hours": "continuous"}
    kinds |= {"sex": "nominal", "job": "nominal"}
    cfg: dict[str, Any] = {
        "input": csv_input(data),
        "attributes": [{"name": n, "kind": k} for n, k in kinds.items()],
        "sensitive": {"name": "label"},
        "model": {"name": "k", "k": 5},
        "algorithm": {"name": "condensation"},
        "partitioning": {"max_block_rows": 500},
        "output": {"path": str(tmp_path / "out"), "format": "parquet", "mode": "error"},
        "seed": 3,
    }
    for key, value in changes.items():
        cfg[key] = value
    return cfg


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_csv(tmp_path, people(), "people.csv")


def published(out: Path) -> pd.DataFrame:
    files = sorted((out / "data").glob("*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def test_groups_are_released_as_synthetic_records_of_their_statistics(
    tmp_path: Path, data: Path
) -> None:
    cfg = condense_config(tmp_path, data)
    assert cli_exit_code(tmp_path, cfg) == EXIT_OK
    out = Path(cfg["output"]["path"])
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    table = published(out)
    assert metrics["verified"] is True and metrics["family"] == "synthesis"
    assert metrics["rows_out"] + metrics["rows_suppressed"] == metrics["rows_in"] == N_ROWS
    assert len(table) == metrics["synthetic_records"] == metrics["rows_out"]
    assert list(table.columns) == ["age", "income_k", "hours", "sex", "job", "label"]
    assert metrics["group_size"]["min"] >= 5
    assert set(table["sex"]) <= {"F", "M"} and set(table["label"]) <= {"no", "yes"}
    original = people()
    # No synthetic record copies an original one; the global means are the originals' in
    # expectation (within six standard errors), not exactly.
    key = ["age", "income_k", "hours", "sex", "job", "label"]
    assert len(table.merge(original.astype({"age": float}), on=key)) == 0
    for c in ("age", "income_k", "hours"):
        error = 6 * original[c].std() / np.sqrt(N_ROWS)
        assert abs(table[c].mean() - original[c].mean()) < error
        assert table[c].mean() != pytest.approx(original[c].mean(), rel=1e-12)
    # The correlation of age and income survives condensation (the groups are local).
    r = np.corrcoef(table["age"], table["income_k"])[0, 1]
    assert r == pytest.approx(np.corrcoef(original["age"], original["income_k"])[0, 1], abs=0.05)
    assert metrics["covariance_compatibility"] > 0.95
    assert metrics["verification"]["copies"] == 0


def test_alpha_sets_the_synthetic_records_per_group(tmp_path: Path, data: Path) -> None:
    cfg = condense_config(tmp_path, data, algorithm={"name": "condensation", "alpha": 2.0})
    assert cli_exit_code(tmp_path, cfg) == EXIT_OK
    out = Path(cfg["output"]["path"])
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    table = published(out)
    assert len(table) == metrics["synthetic_records"] == 10 * metrics["groups"]
    assert metrics["rows_out"] + metrics["rows_suppressed"] == N_ROWS


def test_the_same_table_on_a_rerun_with_the_same_key_file(tmp_path: Path, data: Path) -> None:
    from sparkanon.randomness import write_key_file

    key_file = str(write_key_file(tmp_path / "job.key"))
    tables = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        cfg = condense_config(tmp_path / name, data)
        assert cli_exit_code(tmp_path / name, cfg, key_file=key_file) == EXIT_OK
        frame = published(Path(cfg["output"]["path"]))
        tables.append(frame.sort_values(list(frame.columns)).reset_index(drop=True))
    pd.testing.assert_frame_equal(tables[0], tables[1])


@pytest.mark.parametrize("mutation", ["shifted_mean", "inflated_spread"])
def test_a_release_off_its_group_statistics_fails_and_writes_nothing(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch, mutation: str
) -> None:
    """Inject a synthesis other than the groups' statistics: verification must catch it."""
    import sparkanon.families.synthesis.condense as stage

    real = stage.synthetic_records

    def wrong(stats: Any, count: int, draws: Any) -> np.ndarray:
        records = real(stats, count, draws)
        if mutation == "shifted_mean":
            return records + 1.0  # a whole range (codes are in [0, 1])
        centre = records.mean(axis=0)
        return centre + 3.0 * (records - centre)

    monkeypatch.setattr(stage, "synthetic_records", wrong)
    cfg = condense_config(tmp_path, data, model={"name": "k", "k": 30})
    assert cli_exit_code(tmp_path, cfg) == EXIT_PRIVACY
    assert leftovers(Path(cfg["output"]["path"])) == []


def test_a_synthetic_record_copying_a_rare_original_fails(
    tmp_path: Path, data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first synthetic record of every group replaced by the group's first record."""
    import sparkanon.families.synthesis.condense as stage

    real = stage.condense_group

    def copying(rows: Any, group: int, schema: Any, plan: Any) -> dict[str, np.ndarray]:
        out = real(rows, group, schema, plan)
        at = int(np.argmin(rows["_rid"]))
        first = {c: rows[c][at] for c in [*schema.code_columns, "_s"]}
        for code in schema.code_columns:
            out[code] = out[code].copy()
            out[code][0] = first[code]
        out["_s"] = out["_s"].copy()
        out["_s"][0] = first["_s"]
        return out

    monkeypatch.setattr(stage, "condense_group", copying)
    cfg = condense_config(tmp_path, data)
    assert cli_exit_code(tmp_path, cfg) == EXIT_PRIVACY
    assert "equal an original record on every quasi-identifier" in capsys.readouterr().err
    assert leftovers(Path(cfg["output"]["path"])) == []


BAD = [
    # (id, changes, the key the message must name)
    ("k_larger_than_the_data", {"model": {"name": "k", "k": 5000},
                                "partitioning": {"max_block_rows": 10000}}, "model.k"),
    ("l_diversity", {"model": {"name": "distinct_l", "l": 2}}, "model"),
    ("keep_column", {"attributes": [
        {"name": "age", "kind": "continuous"}, {"name": "job", "kind": "keep"}]},
     "attributes.1.kind"),
    ("semantic_attribute", {"attributes": [
        {"name": "age", "kind": "continuous"}, {"name": "job", "kind": "semantic", "length": 1}]},
     "attributes.1.kind"),
    ("no_numeric_attribute", {"attributes": [{"name": "sex", "kind": "nominal"}]}, "attributes"),
    ("decimals", {"output": {"path": "x", "decimals": 1}}, "output.decimals"),
    ("alpha_zero", {"algorithm": {"name": "condensation", "alpha": 0}}, "algorithm.alpha"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "key"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_condensation_settings_exit_2_naming_the_key(
    tmp_path: Path, data: Path, refused: Callable[..., str], changes: dict[str, Any], key: str
) -> None:
    cfg = condense_config(tmp_path, data, **changes)
    if "output" in changes:
        cfg["output"] = {"path": str(tmp_path / "out"), "format": "parquet"} | {
            k: v for k, v in changes["output"].items() if k != "path"
        }
    refused(cfg, key)
    assert leftovers(tmp_path / "out") == []


def test_stacked_group_check_matches_the_per_group_check() -> None:
    """The verification's stacked check gives the per-group loop's figures and verdicts.

    Groups with a constant attribute (an eigenvalue 0) and groups of one repeated record
    among ordinary ones; a synthetic covariance pushed off its bound in a few groups.
    """
    from sparkanon.algorithms.condensation.group_stats import GroupStats, row_terms
    from sparkanon.algorithms.condensation.synthesize import GroupDraws, synthetic_records
    from sparkanon.families.synthesis.condense import _origin, looped_check, stacked_check
    from sparkanon.randomness import RunKey

    key = RunKey(bytes(range(32)), "user", "test")

    rng = np.random.default_rng(5)
    d, o, s = 4, [], []
    for g in range(300):
        x = rng.random((int(rng.integers(5, 12)), d))
        if g % 7 == 0:
            x[:, 2] = 0.25
        if g % 11 == 0:
            x[:] = x[0]
        y = synthetic_records(GroupStats.of(x), len(x), GroupDraws(key, g))
        if g % 13 == 0:
            y = y + rng.normal(0, 0.2, y.shape)  # off its bound
        if g % 17 == 0:
            y = y + 0.5  # mean off its bound
        o.append(row_terms(x, _origin(d)).sum(axis=0))
        s.append(row_terms(y, _origin(d)).sum(axis=0))
    loop = looped_check(np.array(o), np.array(s), d, 1e-6)
    stack = stacked_check(np.array(o), np.array(s), d, 1e-6)
    assert loop[0].tolist() == stack[0].tolist()
    np.testing.assert_allclose(stack[1], loop[1], rtol=0, atol=1e-12)
    assert ((stack[1] > 1e-9) == (loop[1] > 1e-9)).all() and 0 < (loop[1] > 1e-9).sum() < 300
    np.testing.assert_allclose(stack[2], loop[2], rtol=0, atol=1e-12)
    assert ((stack[2] > 0) == (loop[2] > 0)).all() and 0 < (loop[2] > 0).sum() < 300


def test_verification_takes_float_noise_for_zero_variance() -> None:
    """Groups of one repeated record whose synthesis saw rounding noise as a variance.

    The task's sums about its shift give such a group a covariance of 0 plus about 1e-16
    of rounding, so the records spread along it by about 1e-8; the check, from other sums,
    finds exactly 0 there. At 10M generated rows (many repeated records) 21,938 groups
    failed that way by at most 1.2e-8 before :data:`FLOAT_VARIANCE`; now none does, while a
    mean moved by 1e-5 (far beyond noise) still fails.
    """
    from sparkanon.algorithms.condensation.group_stats import GroupStats, row_terms
    from sparkanon.algorithms.condensation.synthesize import GroupDraws, synthetic_records
    from sparkanon.families.synthesis.condense import FLOAT_VARIANCE, _origin, stacked_check
    from sparkanon.randomness import RunKey

    key = RunKey(bytes(range(32)), "user", "test")
    rng = np.random.default_rng(9)
    d, o, s = 4, [], []
    for g in range(200):
        x = np.repeat(rng.random((1, d)), int(rng.integers(10, 20)), axis=0)
        exact = GroupStats.of(x)
        noise = rng.normal(0.0, 1.0, (d, d))
        noisy = GroupStats(
            exact.count,
            exact.sums,
            exact.products + exact.count * 3e-16 * (noise @ noise.T),
            exact.shift,
        )
        assert np.linalg.eigvalsh(noisy.covariance()).max() < 1e-14 < FLOAT_VARIANCE
        y = synthetic_records(noisy, len(x), GroupDraws(key, g))
        assert np.abs(y - x).max() > 1e-9  # spread by the noise, as the synthesis does
        if g % 10 == 0:
            y = y + 1e-5
        o.append(row_terms(x, _origin(d)).sum(axis=0))
        s.append(row_terms(y, _origin(d)).sum(axis=0))
    _, mean_off, _ = stacked_check(np.array(o), np.array(s), d, 1e-9)
    assert np.flatnonzero(mean_off > 0).tolist() == list(range(0, 200, 10))
