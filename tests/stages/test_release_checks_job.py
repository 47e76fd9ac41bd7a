"""The runner's release checks before commit, end to end on the local engine.

A passing release records every check in ``metrics.json`` (``release_checks``), in
``evaluation.json`` (``attacks_run``) and in the report's threat model section; a release
that publishes a kept column numbering the input's rows, or a staged file holding the run
key, exits 3 and writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sparkanon import pipeline
from sparkanon.cli import run_command
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import EXIT_OK, EXIT_PRIVACY, PrivacyViolationError
from sparkanon.families import parse_config
from sparkanon.randomness import RunKey
from tests._adult import ROOT, adult_config, adult_sample
from tests._inputs import write_config

FD = ROOT / "conf" / "adult_fd_k.yaml"


@pytest.mark.report
def test_checks_are_recorded_in_metrics_evaluation_and_report(tmp_path: Path) -> None:
    data = adult_sample(tmp_path, 1500)
    cfg = adult_config(tmp_path, data, tmp_path / "out", FD, report={"enabled": True})
    assert run_command(str(write_config(tmp_path, cfg)), [], engine_name="local") == EXIT_OK
    out = tmp_path / "out"
    checks = json.loads((out / "metrics.json").read_text())["release_checks"]
    attacks = [c["attack"] for c in checks]
    assert any("linked to input rows" in a for a in attacks)
    assert any("rank correlation of integer columns" in a for a in attacks)
    assert attacks[-1] == "the run key searched for in every published file"
    assert all(c["passed"] is not False for c in checks)
    assert json.loads((out / "evaluation.json").read_text())["attacks_run"] == checks
    page = (out / "report.html").read_text()
    section = page[page.index('<section id="threat"') :]
    assert section.count("<tr><td>") == len(checks)


def test_the_run_key_in_a_staged_file_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = RunKey.draw()
    real = pipeline.write_hierarchies

    def leaky(write_text, taxonomies, directory):  # noqa: ANN001, ANN202
        write_text(f"{directory}/hierarchies/leak.csv", key.fingerprints()[1].decode())
        return real(write_text, taxonomies, directory)

    monkeypatch.setattr(pipeline, "write_hierarchies", leaky)
    data = adult_sample(tmp_path, 600)
    cfg = adult_config(tmp_path, data, tmp_path / "out", FD)
    with pytest.raises(PrivacyViolationError, match="leak.csv"):
        pipeline.run_job(LocalEngine(), parse_config(cfg), key=key)
    assert not (tmp_path / "out").exists()


def test_a_kept_input_position_column_exits_3_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = adult_sample(tmp_path, 1500)
    frame = pd.read_csv(data)
    frame.insert(0, "line", range(1, len(frame) + 1))
    frame.to_csv(data, index=False)
    cfg = adult_config(tmp_path, data, tmp_path / "out", FD)
    cfg["attributes"].append({"name": "line", "kind": "keep"})
    code = run_command(str(write_config(tmp_path, cfg)), [], engine_name="local")
    assert code == EXIT_PRIVACY
    assert "the column 'line' numbers the input's rows" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
