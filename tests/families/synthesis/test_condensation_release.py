"""What a condensation release gives an attacker who holds every file of it.

``conf/adult_condense.yaml`` on 2,000 Adult rows, local engine. The attacker of
``docs/threat-model.md`` holds the data, ``config.yaml``, ``metrics.json``,
``evaluation.json``, ``report.html`` and the source, and tries the review's attacks:

* (a) regenerate each group's uniform draws from the config's seed with the public
  counter generator and solve the group's covariance by least squares: the release has
  no group id, and the draws are keyed by a secret run key, so no seed fits;
* (b) read a record that alone carries a large capital-gain in its group as ``n * mean``:
  no group statistic is published exactly, and no group the job condenses fails the p%
  rule (so even its exact total would not give the record away);
* metrics.json holds counts and rounded compatibility figures, no exact moment.

The stream's differencing attack is in
``tests/algorithms/condensation/test_condensation_stream.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sparkanon.algorithms.condensation.dominance import (
    contributions,
    dominant_records,
    group_cells,
    merge_dominant,
    sensitive,
)
from sparkanon.algorithms.perturbation.noise import counter_uniforms
from sparkanon.cli import run_command
from sparkanon.commands import RunKeySource
from sparkanon.errors import EXIT_OK
from sparkanon.randomness import RunKey, write_key_file
from tests._adult import ROOT, adult_config
from tests._inputs import write_adult_csv, write_config

CONF = ROOT / "conf" / "adult_condense.yaml"
ROWS = 2000
NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def test_p_percent_rule_by_hand() -> None:
    # (total, largest, second): 100 + 5 + 4 -> remainder 4 < 10: sensitive at p = 10
    assert sensitive(np.array([109.0]), np.array([100.0]), np.array([5.0]), 10.0).tolist() == [True]
    # 100 + 7 + 6 + 5 -> remainder 11 >= 10: safe; all zeros: safe; one record: sensitive
    assert not sensitive(np.array([118.0]), np.array([100.0]), np.array([7.0]), 10.0)[0]
    assert not sensitive(np.zeros(1), np.zeros(1), np.zeros(1))[0]
    assert sensitive(np.array([3.0]), np.array([3.0]), np.zeros(1))[0]
    idx = np.array([0, 0, 0, 1, 1, 2])
    total, largest, second = group_cells(idx, np.array([[5.0], [3], [1], [7], [7], [2]]), 3)
    assert total[:, 0].tolist() == [9, 14, 2]
    assert largest[:, 0].tolist() == [5, 7, 2] and second[:, 0].tolist() == [3, 7, 0]
    cells = contributions(np.array([[2.0, 0.0], [3.0, 1.0]]))
    assert cells.tolist() == [[2, 0, 4, 0], [3, 1, 9, 1]]
    with pytest.raises(ValueError, match="non-negative"):
        contributions(np.array([[-1.0]]))


def test_a_dominant_group_merges_with_its_nearest_until_the_rule_holds() -> None:
    # group 10: one capital gain of 100 among zeros; group 20 (near): zeros; 30: 50, 40, 30
    labels = np.repeat([10, 20, 30, 40], 3)
    x = np.array([100, 0, 0, 0, 0, 0, 50, 40, 30, 60, 50, 70], dtype=float)[:, None]
    pos = np.repeat([[0.0], [0.1], [5.0], [9.0]], 3, axis=0)
    merged = merge_dominant(labels, contributions(x), pos, 10.0)
    assert merged.dominant == 0 and merged.merges == 2
    assert set(merged.labels[:9]) == {10} and set(merged.labels[9:]) == {40}
    # p -> 0: the rule refuses only a group with one non-zero record (10); it merges once
    loose = merge_dominant(labels, contributions(x), pos, 1e-9)
    assert loose.merges == 2  # {10, 20} still has one non-zero record: merges on with 30


def test_records_dominating_the_whole_block_are_found_for_suppression() -> None:
    # 99999 among small gains: no merge within these records could dilute it
    x = np.array([99999.0, 0, 0, 300, 200, 0, 100, 0])[:, None]
    drop = dominant_records(contributions(x), 10.0)
    assert drop.tolist() == [True] + [False] * 7
    # 500 + 500 + 10: the second 500 knows its own value and reads the first from the
    # total to within 10 < 50: the first goes; then 500 + 10 + 0 fails, then 10 + 0
    y = np.array([500.0, 500.0, 10.0, 0.0])[:, None]
    assert dominant_records(contributions(y), 10.0).tolist() == [True, True, True, False]
    z = np.array([5.0, 4.0, 3.0, 3.0, 2.0])[:, None]
    assert not dominant_records(contributions(z), 10.0).any()


def _published(out: Path) -> pd.DataFrame:
    files = sorted((out / "data").glob("*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Four runs: two without a key, two with one key file (the report on)."""
    base = tmp_path_factory.mktemp("condense_release")
    data = write_adult_csv(base, ROWS)
    key_file = write_key_file(base / "user.key")
    out: dict[str, Any] = {"data": data, "key": RunKey.from_file(key_file), "base": base}
    captured: dict[str, list] = {}
    import sparkanon.families.synthesis.condense as stage

    real = stage.condense_group

    for name, key in (("a", None), ("b", None), ("c", key_file), ("d", key_file)):
        folder = base / name
        folder.mkdir()
        cfg = adult_config(folder, data, folder / "out", CONF, report={"enabled": name == "c"})
        groups: list = []
        captured[name] = groups

        def capture(rows: Any, group: int, schema: Any, plan: Any, _into: list = groups) -> Any:
            result = real(rows, group, schema, plan)
            _into.append((group, dict(rows), result, schema, plan))
            return result

        stage.condense_group = capture
        try:
            code = run_command(
                str(write_config(folder, cfg)),
                [],
                engine_name="local",
                key_source=RunKeySource(None if key is None else str(key)),
            )
        finally:
            stage.condense_group = real
        assert code == EXIT_OK
        out[name] = folder / "out"
    out["groups"] = captured
    return out


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def test_runs_without_a_key_differ_and_with_one_key_file_agree(runs: dict[str, Any]) -> None:
    a, b = _published(runs["a"]), _published(runs["b"])
    c, d = _published(runs["c"]), _published(runs["d"])
    assert len(a) == len(b) == len(c) == ROWS
    pd.testing.assert_frame_equal(_sorted(c), _sorted(d))
    for first, second in ((a, b), (a, c)):
        assert not np.allclose(_sorted(first)[NUMERIC], _sorted(second)[NUMERIC])
    metrics = json.loads((runs["c"] / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["randomness"] == {"key": "user", "label": "user.key"}


def test_the_key_is_in_no_output_file(runs: dict[str, Any]) -> None:
    key: RunKey = runs["key"]
    files = [f for f in runs["c"].rglob("*") if f.is_file()]
    names = {f.name for f in files}
    assert {"metrics.json", "config.yaml", "evaluation.json", "report.html"} <= names
    assert not any(key.appears_in(f.read_bytes()) for f in files)
    # the check can fail: the key file itself holds it
    assert key.appears_in((runs["base"] / "user.key").read_bytes())


def test_no_group_column_and_no_exact_moment_in_metrics(runs: dict[str, Any]) -> None:
    table = _published(runs["c"])
    assert "group" not in table.columns
    assert list(table.columns) == [*NUMERIC, "income"]
    metrics = json.loads((runs["c"] / "metrics.json").read_text(encoding="utf-8"))
    assert "covariance" not in metrics
    source = pd.read_csv(runs["data"], skipinitialspace=True, na_values=["?"]).dropna()
    values = source[NUMERIC].astype(float)
    exact = np.concatenate(
        [values.mean().to_numpy(), np.cov(values.T.to_numpy(), bias=True).ravel()]
    )
    exact = np.concatenate([exact, np.cov(values.T.to_numpy()).ravel()])
    numbers: list[float] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif isinstance(node, float):
            numbers.append(node)

    walk(metrics)
    for e in exact[np.abs(exact) > 1e-9]:
        assert not any(abs(n - e) <= 1e-6 * abs(e) for n in numbers), e
    assert metrics["dominance"]["dominant_groups"] == 0
    assert metrics["dominance"]["groups_merged"] > 0
    assert 0.9 < metrics["correlation_compatibility"] <= 1.0


def test_old_public_draws_do_not_fit_any_group(runs: dict[str, Any]) -> None:
    """Attack (a), even with the internal group ids: no seed's public draws fit a group."""
    cfg_seed = 7
    for group, _rows, result, schema, plan in runs["groups"]["c"][:20]:
        codes = [schema.code_columns[i] for i in plan.numeric]
        synth = np.column_stack([result[c] for c in codes])
        n, d = synth.shape
        for seed in (cfg_seed, 0, 1):
            ids = np.arange(n, dtype=np.int64)[:, None] * d + np.arange(d)
            u = counter_uniforms(seed, group, ids, lane=3).reshape(n, d)
            design = np.column_stack([np.ones(n), u])
            fit, *_ = np.linalg.lstsq(design, synth, rcond=None)
            spread = np.abs(synth - synth.mean(axis=0)).max()
            if spread > 0:
                assert np.abs(design @ fit - synth).max() > 1e-3 * spread


def test_a_dominant_record_is_not_its_groups_n_times_mean(runs: dict[str, Any]) -> None:
    """Attack (b): a record alone with a non-zero capital-gain in its group.

    Every condensed group passes the p% rule on capital-gain (the remainder after the two
    largest is at least 10% of the largest), so no group holds one record alone with a
    non-zero capital-gain; and its synthetic records' ``n * mean`` is not the exact total
    (unless the group's records all agree: then every one of them holds that value).
    """
    lone_before = 0
    groups = runs["groups"]["c"]
    for group, rows, result, schema, _plan in groups:
        gain = schema.kinds[3]
        raw = np.clip(gain.raw(np.asarray(rows[schema.code_columns[3]], float)), 0, None)
        assert np.count_nonzero(raw) != 1, group
        total, largest, second = group_cells(np.zeros(len(raw), np.int64), raw[:, None], 1)
        assert not sensitive(total, largest, second, 10.0)[0, 0], group
        synth = gain.raw(np.asarray(result[schema.code_columns[3]], float))
        if raw.std() > 0:  # (a group whose records all agree publishes their common value)
            assert abs(len(synth) * synth.mean() - raw.sum()) > 1e-6 * raw.sum()
    source = pd.read_csv(runs["data"], skipinitialspace=True, na_values=["?"]).dropna()
    positive = source["capital-gain"].astype(float).to_numpy() > 0
    lone_before = int(positive.sum())
    assert lone_before > 0
    assert len(groups) < ROWS // 10  # groups were merged (200 MDAV groups of 10 before)
