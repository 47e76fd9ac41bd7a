"""Regression tests of the QA pass on data safety, input handling and the command line.

Each test names the defect it guards against: an output that destroys or pollutes its
input, ragged CSV records, non-data files in an input directory, booleans taken for
integers, logs mixed with the metrics on stdout, a verifier blind to ``--set``,
classes far larger than the model needs, a missing test dependency, and Spark's
Python workers started with the wrong interpreter. The Spark side of the same
behaviours is in ``tests/test_spark_e2e.py``.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import re
import subprocess
import sys
from importlib.metadata import packages_distributions, requires
from pathlib import Path

import pandas as pd
import pytest

from sparkanon.cli import main, metrics_table, run_command
from sparkanon.engine.session import _use_driver_python
from sparkanon.errors import EXIT_OK, EXIT_USER, worker_environment_error
from sparkanon.families.blocks.family import LARGE_CLASS_FACTOR, class_size_warnings
from sparkanon.io import CsvDialect, csv_field_count, path_conflict, select_data_files
from tests._inputs import (
    ROOT,
    adult_header,
    adult_rows,
    cli_exit_code,
    leftovers,
    make_config,
    write_adult_csv,
    write_config,
)

VERIFY = ["-m", "sparkanon.tools.verify_release"]


def _tree(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


# ---------------------------------------------------------------- 1. output vs input


def test_path_conflict_relations() -> None:
    assert path_conflict("/d/in.csv", "/d/in.csv") == "is the input"
    assert path_conflict("/d/in", "/d/in/") == "is the input"
    assert path_conflict("/d/in/x.csv", "/d") == "contains the input"
    assert path_conflict("/d/in", "/") == "contains the input"
    assert path_conflict("/d/in", "/d/in/out") == "lies inside the input"
    assert path_conflict("/d/in", "/d/in2") is None
    assert path_conflict("/d/in2", "/d/in") is None
    assert path_conflict("/d/in.csv", "/d/out") is None


def _layouts(tmp_path: Path) -> list[tuple[str, str]]:
    """(input path, output path) pairs that must be refused, as the QA pass found them."""
    data = tmp_path / "data"
    data.mkdir()
    write_adult_csv(data, 60, name="in.csv")
    (tmp_path / "link").symlink_to(data)
    return [
        (str(data / "in.csv"), str(data / "in.csv")),  # the input file
        (str(data), str(data)),  # the input directory
        (str(data / "in.csv"), str(data)),  # a directory containing the input
        (str(data / "in.csv"), str(tmp_path)),  # further up
        (str(data), str(data / "out")),  # inside the input directory
        ("data/in.csv", "./data/../data/in.csv"),  # relative spellings
        (str(tmp_path / "link" / "in.csv"), str(data)),  # through a symlink
        (str(data), str(tmp_path / "link" / "sub" / "out")),  # inside, through a symlink
    ]


@pytest.mark.parametrize("case", range(8))
def test_output_on_around_or_inside_the_input_is_refused(
    tmp_path: Path, capsys, monkeypatch, case: int
) -> None:
    monkeypatch.chdir(tmp_path)
    inp, out = _layouts(tmp_path)[case]
    before = _tree(tmp_path / "data")
    cfg = make_config(tmp_path, inp, sections={"output": {"path": out, "mode": "overwrite"}})
    code = cli_exit_code(tmp_path, cfg)
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert "output.path" in err and repr(out) in err and repr(inp) in err, err
    assert _tree(tmp_path / "data") == before, "the input was touched"
    assert not list(tmp_path.rglob("*.__sparkanon_*"))


def test_output_beside_the_input_directory_is_allowed(tmp_path: Path, capsys) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_adult_csv(data, 60, name="in.csv")
    cfg = make_config(tmp_path, data, sections={"output": {"path": str(tmp_path / "data_out")}})
    assert cli_exit_code(tmp_path, cfg) == EXIT_OK, capsys.readouterr().err
    assert (tmp_path / "data_out" / "metrics.json").exists()


# ---------------------------------------------------------------- 4. ragged CSV records


def _ragged(tmp_path: Path) -> Path:
    """60 Adult rows; line 12 has one field too many, line 31 one too few."""
    path = write_adult_csv(tmp_path, 60)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[11] += ",extra"
    lines[30] = lines[30].rsplit(",", 1)[0]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_ragged_csv_is_an_error_naming_the_line(tmp_path: Path, capsys) -> None:
    cfg = make_config(tmp_path, _ragged(tmp_path))
    code = cli_exit_code(tmp_path, cfg)
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert "internal error" not in err
    width = len(adult_header())
    assert f"line 12 has {width + 1} fields where the header has {width}" in err, err
    assert "2 malformed" in err and "input.on_malformed: drop" in err
    assert leftovers(Path(cfg["output"]["path"])) == []


def test_ragged_csv_rows_dropped_and_counted_on_request(tmp_path: Path, capsys) -> None:
    cfg = make_config(tmp_path, _ragged(tmp_path), sections={"input": {"on_malformed": "drop"}})
    assert cli_exit_code(tmp_path, cfg) == EXIT_OK, capsys.readouterr().err
    metrics = json.loads((Path(cfg["output"]["path"]) / "metrics.json").read_text())
    assert metrics["rows_in"] == 60
    assert metrics["suppressed_malformed_records"] == 2
    assert metrics["rows_out"] + metrics["rows_suppressed"] == 60


def test_csv_field_count_honours_quotes() -> None:
    dialect = CsvDialect()
    assert csv_field_count('a,"b,c",d', dialect) == 3
    assert csv_field_count("a;b", CsvDialect(sep=";")) == 2
    assert csv_field_count("   ", dialect) == 0


# ---------------------------------------------------------------- 5. non-data files


def test_select_data_files_by_format_and_glob() -> None:
    names = [
        "part-0.csv",
        "README.txt",
        "_SUCCESS",
        ".part-0.csv.crc",
        "sub/b.csv.gz",
        "_tmp/c.csv",
    ]
    assert select_data_files(names, "csv") == (
        ["part-0.csv", "sub/b.csv.gz"],
        [".part-0.csv.crc", "README.txt", "_SUCCESS", "_tmp/c.csv"],
    )
    assert select_data_files(names, "csv", "*.txt")[0] == ["README.txt"]
    assert select_data_files(["a.parquet", "b.csv"], "parquet")[0] == ["a.parquet"]


def test_non_data_files_in_the_input_directory_are_skipped_and_named(
    tmp_path: Path, capsys, caplog
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_adult_csv(data, 40, name="part-0.csv")
    (data / "README.txt").write_text("about this data, not rows\n")
    (data / "_SUCCESS").write_text("")
    (data / ".part-0.csv.crc").write_bytes(b"\x00\x01")
    cfg = make_config(tmp_path, data)
    with caplog.at_level(logging.WARNING, logger="sparkanon"):
        assert cli_exit_code(tmp_path, cfg) == EXIT_OK, capsys.readouterr().err
    metrics = json.loads((Path(cfg["output"]["path"]) / "metrics.json").read_text())
    assert metrics["rows_in"] == 40
    assert "README.txt" in caplog.text and "_SUCCESS" in caplog.text


@pytest.mark.report
def test_parquet_output_directory_read_back_as_input(tmp_path: Path, capsys) -> None:
    """A previous run's output (with metrics.json, config.yaml, the report and the hidden
    output marker) reads as parquet data."""
    cfg = make_config(
        tmp_path, write_adult_csv(tmp_path, 80), sections={"report": {"enabled": True}}
    )
    assert cli_exit_code(tmp_path, cfg) == EXIT_OK
    first = Path(cfg["output"]["path"])
    assert {p.name for p in first.iterdir()} == {
        "data",
        "metrics.json",
        "config.yaml",
        "evaluation.json",
        "report.html",
        ".sparkanon-output",
    }
    again = make_config(tmp_path, first, out=tmp_path / "again")
    again["input"].update(format="parquet")
    assert cli_exit_code(tmp_path, again) == EXIT_OK, capsys.readouterr().err
    metrics = json.loads((tmp_path / "again" / "metrics.json").read_text())
    assert metrics["rows_in"] == 80


# ---------------------------------------------------------------- 7. strict numbers


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("model.k=true", "model.k"),
        ("model.k='8'", "model.k"),
        ("model.k=8.0", "model.k"),
        ("seed=false", "seed"),
        ("partitioning.max_block_rows=yes", "partitioning.max_block_rows"),
        ("sensitive.levels.0.weight=true", "sensitive.levels.0.weight"),
    ],
)
def test_booleans_and_strings_are_not_numbers(tmp_path: Path, capsys, override, key) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 20))
    code = cli_exit_code(tmp_path, cfg, [override])
    err = capsys.readouterr().err
    assert code == EXIT_USER, err
    assert f"{key}: expected" in err, err
    assert "p=4 > k=1" not in err


# ---------------------------------------------------------------- 12. stdout and stderr


def test_stdout_is_the_metrics_json_and_logs_go_to_stderr(tmp_path: Path, capsys) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 80))
    path = write_config(tmp_path, cfg)
    code = main(["run", str(path), "--engine", "local", "--format", "json"])
    captured = capsys.readouterr()
    assert code == EXIT_OK, captured.err
    metrics = json.loads(captured.out)
    assert metrics["rows_in"] == 80
    assert "stage=cluster" in captured.err
    assert "stage" not in captured.out


def test_metrics_file_and_readable_table(tmp_path: Path, capsys) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 80))
    path = write_config(tmp_path, cfg)
    side = tmp_path / "m.json"
    code = main(
        ["run", str(path), "--engine", "local", "--format", "table", "--metrics-out", str(side)]
    )
    out = capsys.readouterr().out
    assert code == EXIT_OK
    saved = json.loads(side.read_text())
    committed = json.loads((Path(cfg["output"]["path"]) / "metrics.json").read_text())
    # metrics.json is written inside the commit stage, so it cannot time that stage.
    assert saved.pop("seconds").keys() - committed.pop("seconds").keys() == {"commit"}
    assert saved == committed
    assert "published_classes" in out and "What they mean" in out
    assert "entropy privacy protection" in out and "information loss rate" in out
    table = metrics_table({"R_IL": 0.123456789, "rows_in": 45222})
    assert "0.1235" in table and "45,222" in table


# ---------------------------------------------------------------- 13. the verifier and --set


def _verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *VERIFY, *args], capture_output=True, text=True, check=False
    )


def test_verifier_takes_the_same_overrides_or_the_resolved_config(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 200))
    cfg["model"] = {"name": "k", "k": 10}
    path = write_config(tmp_path, cfg)
    out = Path(cfg["output"]["path"])
    assert run_command(str(path), ["model.k=3"], "local") == 0
    written = (out / "config.yaml").read_text()
    assert "k: 3" in written
    assert _verify(str(out)).returncode == 0
    assert _verify(str(path), str(out), "--set", "model.k=3").returncode == 0
    # Without the override the verifier checks k=10 and must flag the small classes.
    strict = _verify(str(path), str(out))
    assert strict.returncode == 1 and "violations=0" not in strict.stdout


# ---------------------------------------------------------------- 3. oversized classes


def test_class_size_warning_threshold() -> None:
    assert class_size_warnings(LARGE_CLASS_FACTOR * 5, 5) == []
    (warning,) = class_size_warnings(LARGE_CLASS_FACTOR * 5 + 1, 5)
    assert "largest class has 101 rows" in warning and "k=5" in warning


def test_every_run_reports_warnings_and_largest_class(tmp_path: Path, capsys) -> None:
    cfg = make_config(tmp_path, write_adult_csv(tmp_path, 200))
    cfg["model"] = {"name": "k", "k": 2}
    cfg["algorithm"] = {"name": "mdav"}
    assert cli_exit_code(tmp_path, cfg) == EXIT_OK
    metrics = json.loads((Path(cfg["output"]["path"]) / "metrics.json").read_text())
    assert metrics["warnings"] == []
    assert metrics["class_size"]["max"] <= LARGE_CLASS_FACTOR * 2


# ---------------------------------------------------------------- 10. test extras


def _third_party_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    local = {"sparkanon", "tests", "scripts", "experiments"}
    return names - set(sys.stdlib_module_names) - local


def test_every_module_the_tests_import_is_an_install_requirement() -> None:
    """``pip install -e .[test]`` must bring everything the tests and their scripts import."""
    declared = [
        r.split(";")[0]
        for r in requires("sparkanon") or []
        if ";" not in r or 'extra == "test"' in r
    ]
    wanted = {re.split(r"[<>=!~\[ ]", d.strip(), maxsplit=1)[0].lower() for d in declared}
    dists = packages_distributions()
    sources = list((ROOT / "tests").rglob("*.py"))
    # The tools and experiments the tests run in-process or as subprocesses.
    sources += [*(ROOT / "scripts").glob("*.py"), *(ROOT / "experiments").glob("*.py")]
    missing = {}
    for source in sources:
        for module in _third_party_imports(source):
            names = {d.lower() for d in dists.get(module, [module])}
            # Cross-check tools run by their scripts in an environment of their own.
            if not names & wanted and module not in ("pycanon", "anjana", "anonymeter"):
                missing.setdefault(module, []).append(source.name)
    assert missing == {}, f"imported but not in dependencies or the test extra: {missing}"


# ---------------------------------------------------------------- 11. Spark's Python workers


def test_local_workers_use_the_driver_interpreter(monkeypatch) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    _use_driver_python("local[*]")
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/mine/python")
    _use_driver_python("local[2]")
    assert os.environ["PYSPARK_PYTHON"] == "/opt/mine/python"
    monkeypatch.delenv("PYSPARK_PYTHON")
    _use_driver_python("spark://cluster:7077")
    assert "PYSPARK_PYTHON" not in os.environ


def test_worker_import_error_becomes_a_clear_message(monkeypatch) -> None:
    monkeypatch.setenv("PYSPARK_PYTHON", "/usr/bin/python3")
    trace = (
        'An exception was thrown from the Python worker.\n  File "x.py", line 3\n'
        "ModuleNotFoundError: No module named 'numpy'\n\tat org.apache.spark..."
    )
    error = worker_environment_error(RuntimeError(trace))
    assert error is not None and error.exit_code == EXIT_USER
    assert "'numpy'" in str(error) and "/usr/bin/python3" in str(error)
    assert "PYSPARK_PYTHON" in str(error)
    assert worker_environment_error(RuntimeError("division by zero")) is None


def test_csv_reader_matches_pandas_on_the_bundled_data() -> None:
    """The local CSV reader (csv module, malformed records flagged) reads Adult as pandas does."""
    from sparkanon.config import InputConfig
    from sparkanon.engine.local import LocalEngine

    ours = LocalEngine().read(InputConfig(path=str(ROOT / "data" / "adult" / "adult.csv")))
    theirs = pd.read_csv(
        ROOT / "data" / "adult" / "adult.csv",
        dtype=str,
        keep_default_na=False,
        skipinitialspace=True,
    )
    assert (ours.pop("_malformed") == 0).all()
    pd.testing.assert_frame_equal(ours, theirs, check_dtype=False)
    assert adult_rows(1)[0]["age"] == ours.iloc[0]["age"]
