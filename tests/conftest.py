"""Shared fixtures: one session-scoped SparkSession, the mixed schema, the ``refused`` check."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.schema import Schema
from sparkanon.errors import EXIT_USER
from tests._helpers import edu_taxonomy_in, mixed_schema_of
from tests._inputs import cli_exit_code, leftovers, local_session_builder

# The jobs the tests start in processes of their own (the command line, spark-submit) run
# on a few hundred rows: 2 shuffle partitions, as this process's session, not the 8
# sparkanon's sessions default to (half the tasks per shuffle; CI time).
os.environ.setdefault("SPARKANON_SHUFFLE_PARTITIONS", "2")


SPARK_GROUP = "spark"
"""The test process group (pytest-xdist's ``xdist_group``) of every test that runs Spark."""


def runs_spark(item: pytest.Item) -> bool:
    """Whether a test starts or uses Spark: marked ``spark`` or ``slow``, or takes ``spark``."""
    marked = item.get_closest_marker("spark") or item.get_closest_marker("slow")
    return bool(marked) or "spark" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Send every Spark test to one test process, and each other test file to one process.

    With ``-n 2 --dist loadgroup`` (``pyproject.toml``), pytest-xdist runs each group in a
    single process: the Spark tests share that process's one SparkSession and never start
    Spark beside each other, while the pure tests run in the other process on the core
    Spark leaves idle. Without xdist (``-p no:xdist``) the marks change nothing.
    """
    for item in items:
        group = SPARK_GROUP if runs_spark(item) else item.path.name
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One local SparkSession for the whole run: UI off, 2 shuffle partitions.

    With Hive support (the catalog-table tests), its embedded Derby metastore and
    warehouse in a temporary folder of the run, as sparkanon sets them up in local mode.
    """
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    from sparkanon.engine.session import local_warehouse_conf

    builder = local_session_builder("sparkanon-tests").enableHiveSupport()
    for key, value in local_warehouse_conf(str(tmp_path_factory.mktemp("warehouse"))).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def edu_taxonomy(tmp_path_factory: pytest.TempPathFactory) -> Taxonomy:
    """The seven-leaf education taxonomy of ``tests._helpers.EDU_ARX``."""
    return edu_taxonomy_in(tmp_path_factory.mktemp("hier"))


@pytest.fixture(scope="session")
def mixed_schema(edu_taxonomy: Taxonomy) -> Schema:
    """The property tests' schema: all four kinds of quasi-identifier, ``FIVE_LEVELS``."""
    return mixed_schema_of(edu_taxonomy)


@pytest.fixture
def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., str]:
    """A check that a config is refused: ``refused(cfg, *needles)`` returns the run's stderr.

    The config runs as ``sparkanon run`` on the local engine
    (:func:`tests._inputs.cli_exit_code`, written under ``tmp_path``); the check asserts
    exit code 2, every needle in stderr, no internal error and nothing at
    ``cfg["output"]["path"]``.
    """

    def check(cfg: Mapping[str, Any], *needles: str) -> str:
        code = cli_exit_code(tmp_path, cfg)
        err = capsys.readouterr().err
        assert code == EXIT_USER, err
        assert "internal error" not in err, err
        for needle in needles:
            assert needle in err, f"{needle!r} not in: {err}"
        assert leftovers(Path(cfg["output"]["path"])) == []
        return err

    return check


@pytest.fixture(autouse=True)
def _report_only_where_asked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run evaluates its release and writes report.html only in tests marked ``report``.

    The evaluation adds several engine passes to every run (about 10 s on Spark for the
    demo); the suite runs dozens of jobs, so it is off in the others (in this process:
    a job a test starts as a subprocess still writes its report).
    """
    if request.node.get_closest_marker("report") is None:
        monkeypatch.setattr("sparkanon.pipeline.evaluate_run", lambda *args, **kwargs: None)


@pytest.fixture(autouse=True)
def _sparkanon_logger_restored() -> Iterator[None]:
    """Each test starts with the ``sparkanon`` logger as the session found it.

    The command line configures it (a handler on stderr, INFO); a test that calls ``main``
    would otherwise change what every later test's stderr shows.
    """
    logger = logging.getLogger("sparkanon")
    saved = (list(logger.handlers), logger.propagate, logger.level)
    yield
    logger.handlers[:], logger.propagate, logger.level = saved
