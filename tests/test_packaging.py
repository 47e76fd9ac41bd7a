"""Packaging: a wheel from the standard build frontend, run from the wheel alone.

The wheel is built with ``python -m build --wheel`` and unpacked into a folder that is
the only place sparkanon is imported from (``PYTHONPATH``; the working folder is outside
the source tree). ``--version`` answers, the wheel holds the independent release check
(``sparkanon-verify``) and it passes the release, and ``spark-submit`` runs the job with the
application file the wheel carries (``sparkanon/submit.py``) and the wheel itself in
``--py-files``: ``validate``, then the job, in one application (each ``spark-submit``
costs a JVM and a Spark start). Slow (a build and a Spark run).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import sparkanon
from scripts._spark_procs import spark_submit
from tests._adult import ROOT, adult_config, adult_sample, write_config

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_VALIDATE_THEN_RUN = """
import runpy
import sys
app, config = sys.argv[1:]
# The wheel's application file as spark-submit runs it, once per command, in one session.
for command in (["validate"], []):
    sys.argv = [app, *command, config]
    try:
        runpy.run_path(app, run_name="__main__")
    except SystemExit as done:
        if done.code not in (0, None):
            raise
        print(f"submit.py {command} exited 0")
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build", reason="the build frontend: pip install -e '.[test]'")
    dist = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (found,) = dist.glob("sparkanon-*.whl")
    return found


def test_wheel_holds_the_package_and_its_entry_points(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "sparkanon/submit.py" in names and "sparkanon/cli.py" in names
    # The evaluation and its report, which every run writes by default.
    assert {
        "sparkanon/report/html.py",
        "sparkanon/risk/arx.py",
        "sparkanon/evaluation/evaluate.py",
    } <= set(names)
    # The independent release check, a module of the package with its own command.
    assert "sparkanon/tools/verify_release.py" in names
    shipped_elsewhere = ("tests/", "conf/", "data/", "scripts/", "experiments/")
    assert not [n for n in names if n.startswith(shipped_elsewhere)]
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    entries = zipfile.ZipFile(wheel).read(entry).decode()
    assert "sparkanon = sparkanon.cli:main" in entries
    assert "sparkanon-verify = sparkanon.tools.verify_release:main" in entries
    assert wheel.name.startswith(f"sparkanon-{sparkanon.__version__}-")


def test_spark_submit_runs_from_the_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = os.environ | {"PYTHONPATH": str(site), "PYSPARK_PYTHON": sys.executable}
    where = subprocess.run(
        [sys.executable, "-c", "import sparkanon, sys; print(sparkanon.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(site))
    version = subprocess.run(
        [sys.executable, "-m", "sparkanon.cli", "--version"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.strip() == f"sparkanon {sparkanon.__version__}"
    sample = adult_sample(tmp_path, 1500)
    raw = adult_config(tmp_path, sample, tmp_path / "out", partitioning={"max_block_rows": 500})
    config = write_config(tmp_path, raw)
    driver = tmp_path / "validate_then_run.py"
    driver.write_text(_VALIDATE_THEN_RUN, encoding="utf-8")
    app = site / "sparkanon" / "submit.py"
    done = subprocess.run(
        [spark_submit(), "--master", "local[2]", "--py-files", str(wheel), str(driver)]
        + [str(app), str(config)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    # (Under spark-submit the Python driver's stdout and stderr both go to stdout.)
    assert "submit.py ['validate'] exited 0" in done.stdout
    assert "submit.py [] exited 0" in done.stdout
    assert (tmp_path / "out" / "metrics.json").exists()
    assert '"verified": true' in done.stdout
    # The wheel's own independent check passes the release it published.
    checked = subprocess.run(
        [sys.executable, "-m", "sparkanon.tools.verify_release", str(tmp_path / "out")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    assert "violations=0" in checked.stdout
