"""End-to-end runs of the job on Spark (local mode) against samples of Adult.

Few and marked ``spark``: parity with the local engine, a run that forces
cross-block reconciliation, a run that splits the data into many blocks, one
bad input through Spark, and the spark-submit entry point.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sparkanon.cli import run_command
from sparkanon.engine.local import LocalEngine
from sparkanon.families import parse_config
from sparkanon.pipeline import run_job
from tests._adult import ROOT, adult_config, adult_sample, write_config

pytestmark = pytest.mark.spark

VERIFY = ["-m", "sparkanon.tools.verify_release"]


def _independent_check(config_path: Path, out: Path) -> None:
    done = subprocess.run(
        [sys.executable, *VERIFY, str(config_path), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "violations=0" in done.stdout


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    cols = sorted(frame.columns)
    return frame[cols].sort_values(cols).reset_index(drop=True)


def test_spark_matches_local_engine(spark, tmp_path: Path) -> None:
    from sparkanon.engine.spark import SparkEngine

    sample = adult_sample(tmp_path, 3000)
    raw = adult_config(tmp_path, sample, tmp_path / "unused", partitioning={"max_block_rows": 500})
    cfg = parse_config(raw)
    local = run_job(
        LocalEngine(batch_rows=700),
        cfg.model_copy(
            update={"output": cfg.output.model_copy(update={"path": str(tmp_path / "local")})}
        ),
    )
    remote = run_job(
        SparkEngine(spark),
        cfg.model_copy(
            update={"output": cfg.output.model_copy(update={"path": str(tmp_path / "spark")})}
        ),
    )
    for key in (
        "rows_in",
        "rows_out",
        "classes",
        "published_classes",
        "blocks",
        "class_size",
        "violations",
    ):
        assert local.metrics[key] == remote.metrics[key], key
    for key in ("EPP", "R_IL", "AVG_IL", "AVG_Ent", "CAVG"):
        assert local.metrics[key] == pytest.approx(remote.metrics[key], rel=1e-9), key
    assert remote.metrics["verified"] is True
    # Every Spark job is counted under the stage that launched it; the local engine has none.
    jobs = remote.metrics["spark_jobs"]
    assert jobs["total"] == sum(jobs["by_stage"].values()) > 0
    assert set(jobs["by_stage"]) <= set(remote.metrics["seconds"])
    assert jobs["by_stage"]["cluster"] >= 1 and jobs["by_stage"]["verify"] >= 1
    assert "spark_jobs" not in local.metrics
    spark_rows = pd.read_parquet(tmp_path / "spark" / "data")
    local_rows = pd.read_parquet(tmp_path / "local" / "data")
    pd.testing.assert_frame_equal(_sorted(spark_rows), _sorted(local_rows), check_dtype=False)


def test_reconciliation_across_blocks(spark, tmp_path: Path) -> None:
    sample = adult_sample(tmp_path, 3000)
    out = tmp_path / "out"
    raw = adult_config(
        tmp_path,
        sample,
        out,
        model={"h": 3, "p": 5, "k": 8},
        partitioning={"max_block_rows": 60, "infeasible_blocks": "reconcile"},
    )
    path = write_config(tmp_path, raw)
    assert run_command(str(path), [], "spark") == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["infeasible_blocks"] > 0
    assert metrics["rows_reconciled"] > 0
    assert metrics["rows_out"] + metrics["rows_suppressed"] == metrics["rows_in"] == 3000
    assert metrics["verified"] is True
    _independent_check(path, out)


def test_many_blocks_and_rerun_is_deterministic(spark, tmp_path: Path) -> None:
    sample = adult_sample(tmp_path, 8000)
    out = tmp_path / "out"
    # Above sample_rows the top of the tree is planned on Spark's seeded sample and
    # checked on exact counts (rows routed by a native expression): still deterministic.
    partitioning = {"max_block_rows": 250, "task_rows": 1000, "sample_rows": 2000}
    raw = adult_config(tmp_path, sample, out, partitioning=partitioning)
    path = write_config(tmp_path, raw)
    assert run_command(str(path), [], "spark") == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["blocks"] >= 32
    assert metrics["block_rows"]["max"] <= 250
    assert metrics["rows_out"] == 8000
    _independent_check(path, out)
    first = pd.read_parquet(out / "data")
    shutil.rmtree(out)
    assert run_command(str(path), [], "spark") == 0
    pd.testing.assert_frame_equal(_sorted(pd.read_parquet(out / "data")), _sorted(first))


def test_bad_input_on_spark_writes_nothing(spark, tmp_path: Path, capsys) -> None:
    sample = adult_sample(tmp_path, 200)
    out = tmp_path / "out"
    raw = adult_config(tmp_path, sample, out)
    raw["attributes"][0]["name"] = "agee"
    path = write_config(tmp_path, raw)
    assert run_command(str(path), [], "spark") == 2
    assert "agee" in capsys.readouterr().err
    assert not out.exists()
    assert not list(tmp_path.glob("out.__sparkanon_tmp_*"))


def test_ragged_csv_and_non_data_files_on_spark(spark, tmp_path: Path, capsys, caplog) -> None:
    """The local engine's tests (test_data_safety) on Spark: same errors, same counts."""
    data = tmp_path / "data"
    data.mkdir()
    lines = adult_sample(tmp_path, 300).read_text(encoding="utf-8").splitlines()
    width = len(lines[0].split(","))
    lines[11] += ",extra"
    lines[30] = lines[30].rsplit(",", 1)[0]
    (data / "part-0.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (data / "README.txt").write_text("not, rows\n")
    (data / "_SUCCESS").write_text("")
    out = tmp_path / "out"
    raw = adult_config(tmp_path, data, out)
    path = write_config(tmp_path, raw)
    assert run_command(str(path), [], "spark") == 2
    err = capsys.readouterr().err
    assert f"line 12 has {width + 1} fields where the header has {width}" in err, err
    assert "2 malformed" in err
    assert not out.exists()
    with caplog.at_level("WARNING", logger="sparkanon"):
        assert run_command(str(path), ["input.on_malformed=drop"], "spark") == 0
    assert "README.txt" in caplog.text and "_SUCCESS" in caplog.text
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["rows_in"] == 300
    assert metrics["suppressed_malformed_records"] == 2
    assert metrics["rows_out"] + metrics["rows_suppressed"] == 300


def test_output_inside_the_input_is_refused_on_spark(spark, tmp_path: Path, capsys) -> None:
    data = tmp_path / "data"
    data.mkdir()
    adult_sample(data, 100, name="in.csv")
    (tmp_path / "link").symlink_to(data)
    raw = adult_config(tmp_path, tmp_path / "link", data / "out")
    raw["output"]["mode"] = "overwrite"
    before = sorted(p.name for p in data.iterdir())
    assert run_command(str(write_config(tmp_path, raw)), [], "spark") == 2
    err = capsys.readouterr().err
    assert "lies inside the input" in err, err
    assert sorted(p.name for p in data.iterdir()) == before


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of a scheduler: no virtual environment on PATH, no PYSPARK_PYTHON."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(["/usr/bin", "/bin"])
    env.update(extra)
    return env


def test_installed_command_runs_without_an_activated_environment(tmp_path: Path) -> None:
    """Cron or an IDE runs the console script by its path; Spark's workers must still work."""
    sample = adult_sample(tmp_path, 300)
    out = tmp_path / "out"
    path = write_config(tmp_path, adult_config(tmp_path, sample, out))
    script = Path(sys.executable).with_name("sparkanon")
    done = subprocess.run(
        [str(script), "run", str(path), "--master", "local[1]", "--quiet"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_clean_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["rows_out"] == 300


@pytest.mark.skipif(
    subprocess.run(["/usr/bin/python3", "-c", "import numpy"], capture_output=True).returncode == 0,
    reason="needs an interpreter without numpy at /usr/bin/python3",
)
def test_worker_without_numpy_is_a_clear_error(tmp_path: Path) -> None:
    sample = adult_sample(tmp_path, 100)
    path = write_config(tmp_path, adult_config(tmp_path, sample, tmp_path / "out"))
    done = subprocess.run(
        [sys.executable, "-m", "sparkanon.cli", "run", str(path), "--master", "local[1]"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_clean_env(PYSPARK_PYTHON="/usr/bin/python3"),
        check=False,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("sparkanon: error: Spark's Python workers"), last
    assert "'numpy'" in last and "PYSPARK_PYTHON" in last
