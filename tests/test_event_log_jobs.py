"""scripts/event_log_jobs.py: seconds per Spark job and stage from a hand-made event log."""

from __future__ import annotations

import json
from pathlib import Path

from scripts import event_log_jobs


def _log(path: Path) -> Path:
    events = [
        {
            "Event": "SparkListenerJobStart",
            "Job ID": 3,
            "Submission Time": 1000,
            "Stage IDs": [7, 8],
            "Properties": {"spark.job.description": "sparkanon: perturb"},
        },
        {
            "Event": "SparkListenerStageCompleted",
            "Stage Info": {
                "Stage ID": 7,
                "Submission Time": 1000,
                "Completion Time": 3500,
                "Number of Tasks": 2,
                "Stage Name": "parquet at x",
            },
        },
        {
            "Event": "SparkListenerTaskEnd",
            "Stage ID": 7,
            "Task Metrics": {
                "Executor Run Time": 2000,
                "Executor CPU Time": 1_500_000_000,
                "Shuffle Write Metrics": {"Shuffle Bytes Written": 4_000_000},
            },
        },
        {
            "Event": "SparkListenerTaskEnd",
            "Stage ID": 9,
            "Task Metrics": {"Executor Run Time": 999},
        },
        {"Event": "SparkListenerJobEnd", "Job ID": 3, "Completion Time": 5000},
    ]
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8")
    return path


def test_jobs_and_stage_metrics(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    script = event_log_jobs
    log = _log(tmp_path / "events")
    assert script.main([str(log)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["3", "4.0s"]
    assert "sparkanon: perturb" in lines[0] and "2.5s/2t parquet at x" in lines[0]
    assert lines[-1] == "jobs' seconds in all: 4.0"
    assert script.main([str(log), "--stages", "3"]) == 0
    (stage,) = capsys.readouterr().out.splitlines()
    assert stage == "stage 7: run s 2.0, jvm cpu s 1.5, shuffle write MB 4.0"
