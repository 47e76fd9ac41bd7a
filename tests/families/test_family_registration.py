"""A family from outside the package registers itself and runs end to end.

The example family (``tests/families/example``: its family class, its algorithms'
folder and one registry call) is configured by name, checked by its own config rules
and run by :func:`sparkanon.pipeline.run_job` on the local engine, committing a release
the runner verified; nothing in the package names it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from sparkanon import algorithms, families
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import ConfigError
from sparkanon.families import family_of, parse_config
from sparkanon.pipeline import run_job
from tests._inputs import ROOT
from tests.families import example
from tests.families.example.algorithms.star import STAR

PACKAGE = ROOT / "sparkanon"


@pytest.fixture
def registered() -> Iterator[None]:
    """The example family registered for one test, and unregistered after it."""
    example.register()
    try:
        yield
    finally:
        example.unregister()


def _config(tmp_path: Path, rows: int = 24, **algorithm: object) -> dict:
    """A config of the example family over a small clean table of ``rows`` rows."""
    frame = pd.DataFrame(
        {
            "age": [20 + (7 * i) % 45 for i in range(rows)],
            "zip": [f"130{i % 6}" for i in range(rows)],
            "disease": [("flu", "cold", "asthma")[i % 3] for i in range(rows)],
        }
    )
    source = tmp_path / "people.csv"
    frame.to_csv(source, index=False)
    return {
        "input": {"path": str(source), "format": "csv"},
        "attributes": [{"name": "age", "kind": "continuous"}, {"name": "zip", "kind": "nominal"}],
        "sensitive": {"name": "disease"},
        "model": {"name": "k", "k": 5},
        "algorithm": {"name": "star", **algorithm},
        "output": {"path": str(tmp_path / "out"), "format": "csv", "publish": "generalized"},
        "report": {"enabled": False},
    }


def test_unregistered_name_is_unknown(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"algorithm\.name: unknown name 'star'; use one of"):
        parse_config(_config(tmp_path))


def test_registered_family_runs_and_commits(registered: None, tmp_path: Path) -> None:
    config = parse_config(_config(tmp_path))
    assert family_of(config) is example.FAMILY
    result = run_job(LocalEngine(), config)
    m = result.metrics
    assert m["family"] == "example_star" and m["row_level"] is False
    assert m["rows_in"] == 24 and m["rows_in"] == m["rows_out"] + m["rows_suppressed"]
    assert m["verified"] is True and m["violations"] == 0 and "verify" in m["seconds"]
    assert m["classes"] == 1 and m["dm"] == 24 * 24
    out = tmp_path / "out"
    assert (out / "metrics.json").is_file()
    published = pd.read_csv(next((out / "data").glob("*.csv")), dtype=str)
    assert len(published) == 24
    assert set(published["age"]) == {STAR} and set(published["zip"]) == {STAR}
    assert sorted(published["disease"]) == sorted(
        ("flu", "cold", "asthma")[i % 3] for i in range(24)
    )


def test_registered_family_rules_and_parameters(registered: None, tmp_path: Path) -> None:
    raw = _config(tmp_path)
    raw["output"]["publish"] = "centroids"
    with pytest.raises(ConfigError, match="algorithm star publishes generalized values"):
        parse_config(raw)
    with pytest.raises(ConfigError, match="algorithm 'star' takes no 'rounds'"):
        parse_config(_config(tmp_path, rounds=3))


def test_unregister_removes_the_family_and_its_algorithm(tmp_path: Path) -> None:
    example.register()
    example.unregister()
    assert "star" not in algorithms.ALGORITHMS
    assert example.FAMILY not in families.FAMILIES
    with pytest.raises(ConfigError, match="unknown name 'star'"):
        parse_config(_config(tmp_path))


def test_package_does_not_name_the_example_family() -> None:
    named = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "example_star" in path.read_text(encoding="utf-8")
        or "tests.families" in path.read_text(encoding="utf-8")
    ]
    assert named == []


def test_register_refuses_a_taken_algorithm_name() -> None:
    from sparkanon.algorithms import Registered
    from sparkanon.errors import InternalError
    from tests.families.example.family import StarFamily

    class Copy(StarFamily):
        name = "copy"

    mdav = algorithms.ALGORITHMS["mdav"]
    with pytest.raises(InternalError, match=r"algorithms \['mdav'\] are registered already"):
        families.register(Copy(), {"mdav": Registered("copy", mdav.params, None)})
    assert algorithms.ALGORITHMS["mdav"] is mdav
    assert all(f.name != "copy" for f in families.FAMILIES)
