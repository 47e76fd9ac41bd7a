"""The profile's spec: each quasi-identifier's value check is the one of its kind."""

from __future__ import annotations

from pathlib import Path

from sparkanon.attributes.checks import (
    BuilderCheck,
    CodeCheck,
    DomainCheck,
    FreeCheck,
    NumberCheck,
    TemporalCheck,
)
from sparkanon.attributes.dates import TemporalFormat
from sparkanon.families import parse_config
from sparkanon.stages.profile import known_kinds, profile_spec
from tests._inputs import HIERARCHIES


def test_every_kind_has_its_check(tmp_path: Path) -> None:
    groups = {"type": "groups", "order": ["a", "b"], "sizes": [2]}
    config = parse_config(
        {
            "input": {"format": "csv", "path": str(tmp_path / "in.csv"), "on_invalid": "drop"},
            "attributes": [
                {"name": "age", "kind": "continuous"},
                {"name": "zip", "kind": "semantic", "length": 5},
                {"name": "grp", "kind": "categorical", "builder": groups},
                {
                    "name": "edu",
                    "kind": "categorical",
                    "hierarchy": str(HIERARCHIES / "education.csv"),
                },
                {"name": "rank", "kind": "ordinal", "order": ["lo", "hi"]},
                {"name": "sex", "kind": "nominal", "values": ["F", "M"]},
                {"name": "race", "kind": "nominal"},
                {"name": "born", "kind": "date", "format": "%d/%m/%Y"},
                {"name": "seen", "kind": "timestamp", "timezone": "Europe/Paris"},
                {"name": "left", "kind": "timestamp"},
            ],
            "sensitive": {"name": "s"},
            "model": {"name": "k", "k": 2},
            "algorithm": {"name": "mdav"},
            "output": {"path": str(tmp_path / "out"), "format": "csv"},
        }
    )
    # The engine delivers "left" as wall-clock instants in UTC; "seen" keeps its timezone.
    spec = profile_spec(config, zones={"left": "UTC"})
    edu = frozenset(known_kinds(config)["edu"].labels)
    assert list(spec.checks.items()) == [
        ("age", NumberCheck()),
        ("zip", CodeCheck(5)),
        ("grp", BuilderCheck(config.quasi_identifiers[2].builder)),
        ("edu", DomainCheck(edu)),
        ("rank", DomainCheck(frozenset({"lo", "hi"}))),
        ("sex", DomainCheck(frozenset({"F", "M"}))),
        ("race", FreeCheck()),
        ("born", TemporalCheck(TemporalFormat(True, "%d/%m/%Y"))),
        ("seen", TemporalCheck(TemporalFormat(False, None, "Europe/Paris"))),
        ("left", TemporalCheck(TemporalFormat(False, None, "UTC"))),
    ]
    assert "Bachelors" in edu
    assert spec == profile_spec(config, known_kinds(config), {"left": "UTC"})
    assert spec.drop_invalid
