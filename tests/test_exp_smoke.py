"""The experiments without a smoke test of their own run here on tiny settings (seconds).

The Spark-scale benchmarks (bench_stream, bench_suda; bench_evaluate beside bench_perturb
in ``tests/test_exp_scripts.py``) run jobs of minutes; here their measured records go
through the code that turns them into the docs' tables. The others run end to end on a few hundred Adult rows.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from experiments import (
    _bench,
    bench_blocking,
    bench_job,
    bench_kl_kernel,
    bench_mdav_block,
    bench_nearest,
    bench_stream,
    bench_suda,
    eval_configs,
    exp_anonymeter_check,
    exp_fulldomain,
)
from tests._adult import ROOT


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_bench_blocking_tiny(tmp_path: Path, capsys) -> None:
    out = tmp_path / "blocking.csv"
    assert bench_blocking.main(["--rows", "400", "--out", str(out), "--in-place"]) == 0
    rows = _rows(out)
    sizes = [int(r["max_block_rows"]) for r in rows]
    assert sizes[0] == 4000 and len(rows) == 1 + len(bench_blocking.DEFAULT_BLOCK_SIZES)
    assert all(r["verified"] == "True" for r in rows)
    assert float(rows[0]["R_IL_ratio"]) == 1.0
    assert json.loads(out.with_suffix(".meta.json").read_text())["in_place"] is True
    assert bench_blocking.main(["--report", "--out", str(out)]) == 0
    assert "400" in capsys.readouterr().out


def test_bench_job_local_run_and_report(tmp_path: Path, capsys) -> None:
    sample = _bench.head_csv(_bench.ADULT_CSV, 300, tmp_path / "adult_300.csv")
    runs = tmp_path / "runs.jsonl"
    label = f"smoke-{tmp_path.name}"
    argv = [str(ROOT / "conf" / "adult_mondrian_k.yaml"), "--label", label, "--engine", "local"]
    argv += ["--set", f"input.path={sample}", "--set", "report.enabled=false"]
    assert bench_job.main([*argv, "--runs-file", str(runs)]) == 0
    (record,) = [json.loads(line) for line in runs.read_text().splitlines()]
    assert record["label"] == label and record["wall_seconds"] > 0
    assert record["metrics"]["verified"] is True and record["code_sha"] == _bench.code_sha()
    assert bench_job.main(["--report", "--runs-file", str(runs), "--only", "smoke-"]) == 0
    assert label in capsys.readouterr().out


def test_bench_kl_kernel_and_mdav_block_tiny(capsys) -> None:
    assert bench_kl_kernel.main(["--rows", "300", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "300 rows: cluster_block numpy" in out and "same labels: True" in out
    assert bench_mdav_block.main(["--rows", "200", "300", "--reps", "1"]) == 0
    out = capsys.readouterr().out
    assert "rows 200 k 10" in out and "rows 300 k 10" in out
    assert out.count("same labels True") == 2


def test_bench_nearest_compares_two_revisions_of_the_kernel(capsys) -> None:
    assert bench_nearest.main(["--groups", "50", "--records", "500", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "old HEAD: min" in out and "new WORKTREE: min" in out
    assert "same groups: True" in out


def test_bench_stream_point_row_and_report(tmp_path: Path, capsys) -> None:
    batches = [{"rows_in": 500, "trigger_ms": 250}, {"rows_in": 500, "trigger_ms": 750}]
    state = {"groups": 40, "records_released": 900, "records_pending": 100}
    sizes = {"state": 2_000_000, "checkpoint": 3_000_000, "checkpoint_state": 1, "sink": 5}
    point = bench_stream.point_row(1000, batches, 2.0, state, sizes, 0.5, "abc")
    assert point["sustained_batch_rps"] == 1000.0 and point["sustained_wall_rps"] == 500.0
    assert point["state_bytes_per_1m_seen"] == 2_000_000_000
    assert (point["first_batch_ms"], point["last_batch_ms"]) == (250, 750)
    _bench.write_csv(tmp_path / "stream_t_points.csv", [point], list(point))
    batch_rows = [{"batch_id": 0, "rows_in": 500, "trigger_ms": 250, "records_per_s": 2000}]
    _bench.write_csv(tmp_path / "stream_t.csv", batch_rows, list(batch_rows[0]))
    assert bench_stream.report_tables(tmp_path, "_t") == 0
    out = capsys.readouterr().out
    assert "| 1,000 | 2 | 40 | 1,000 | 500 | 750 | 2.0 | 2000.0 | 3.0 |" in out
    assert "| 0 | 500 | 250 | 2000 |" in out


def test_bench_suda_report(tmp_path: Path, capsys) -> None:
    cols = ["rows", "max_size", "seconds", "floor_s", "ratio", "driver_gib", "jvm_gib"]
    cols += ["records_with_msu", "sample_uniques", "msus"]
    row = dict(
        zip(cols, ["1000", "2", "3.0", "1.5", "2.0", "0.1", "0.5", "10", "4", "12"], strict=True)
    )
    _bench.write_csv(tmp_path / "suda.csv", [row], cols)
    assert bench_suda.main(["--report", "--out-dir", str(tmp_path)]) == 0
    assert "| 1000 | 2 | 3.0 | 1.5 | 2.0 | 0.1 | 0.5 | 10 | 4 | 12 |" in capsys.readouterr().out


def test_eval_configs_one_config_tiny(tmp_path: Path, capsys) -> None:
    argv = ["--configs", "adult_mdav_k", "--rows", "600", "--out-dir", str(tmp_path)]
    assert eval_configs.main(argv) == 0
    results = json.loads((tmp_path / "eval_configs.json").read_text(encoding="utf-8"))
    assert list(results) == ["adult_mdav_k"] and "error" not in results["adult_mdav_k"]
    assert results["adult_mdav_k"]["metrics"]["rows_in"] == 600
    out = capsys.readouterr().out
    assert out.startswith("| " + " | ".join(eval_configs.HEADER) + " |")
    assert "| adult_mdav_k |" in out


def test_exp_anonymeter_check_our_step(tmp_path: Path, capsys) -> None:
    assert exp_anonymeter_check.main(["ours", str(tmp_path)]) == 0
    ours = json.loads(capsys.readouterr().out)
    assert {p.name for p in tmp_path.iterdir()} == {"ori.csv", "syn.csv", "ctl.csv", "ours.json"}
    assert set(ours) == {
        "inference_main",
        "inference_control",
        "linkability_main",
        "linkability_control",
        "singling_out_univariate_main",
        "singling_out_univariate_control",
    }
    assert all(isinstance(v, int) and v >= 0 for v in ours.values())
    assert json.loads((tmp_path / "ours.json").read_text()) == ours


def test_exp_fulldomain_lattice_pieces() -> None:
    """The reference sweep's pieces (the anjana side needs its own environment)."""
    hierarchies = [
        exp_fulldomain.read_hierarchy(ROOT / exp_fulldomain.HIERARCHY_DIR / f"{q}.csv", q)
        for q in exp_fulldomain.QI
    ]
    assert len(hierarchies) == len(exp_fulldomain.QI)
    heights = [4, 3, 2, 2, 1, 1, 2]
    assert exp_fulldomain.precision([0] * 7, heights) == 1.0
    assert exp_fulldomain.precision(heights, heights) == 0.0
    assert exp_fulldomain.limit(1000, 0.02) == 20 and exp_fulldomain.limit(1000, 0.0) == 0
    assert exp_fulldomain.fmt_node([1, 0, 2]) == "(1,0,2)" and exp_fulldomain.fmt_node(None) == "-"
