"""The command line's own text: ``--help`` of every command, the metrics table.

Pure: no job runs, no Spark.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

import pytest

from sparkanon.cli import TABLE_ITEMS, TABLE_KEYS, TABLE_TEXT, _parser, brief, main, metrics_table

MARKUP = re.compile(r"``|:[a-z]+:`|`[^`\s]+`_")
"""reStructuredText a terminal shows as is: literals, roles (:mod:`x`), links."""


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """The command's parser and every subcommand's, by the command line that shows them."""
    parser = _parser()
    parsers = {"sparkanon": parser}
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers here
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, sub in action.choices.items():
                parsers[f"sparkanon {name}"] = sub
    return parsers


COMMANDS = [
    "sparkanon",
    "sparkanon backfill",
    "sparkanon evaluate",
    "sparkanon init",
    "sparkanon key",
    "sparkanon reconstruct",
    "sparkanon run",
    "sparkanon stream",
    "sparkanon validate",
]


def test_every_command_has_help() -> None:
    parsers = _parsers()
    assert sorted(parsers) == COMMANDS
    for command, parser in parsers.items():
        assert parser.format_help().startswith(f"usage: {command} ")
        assert parser.description, f"{command} --help has no description"
        # Every option says what it does (argparse prints nothing for one without help).
        for action in parser._actions:  # noqa: SLF001
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                continue  # each subcommand's line shows its own help
            assert action.help, f"{command}: {action.option_strings or action.dest} has no help"


@pytest.mark.parametrize("command", COMMANDS)
def test_help_is_plain_text(command: str) -> None:
    text = _parsers()[command].format_help()
    assert MARKUP.search(text) is None, f"{command} --help shows markup: {text}"


def test_markup_pattern_finds_markup() -> None:
    """The check above can fail: it finds the markup QA saw."""
    assert MARKUP.search("The ``sparkanon`` command line")
    assert MARKUP.search("see :mod:`sparkanon.io`")
    assert MARKUP.search("see :func:`load_config`")
    assert MARKUP.search("sets input.partition (COL=VALUE)") is None


# ---------------------------------------------------------------- --format table


def _fd_like_metrics() -> dict[str, Any]:
    """Metrics shaped like a full-domain run's: long lists, nested mappings, floats."""
    names = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
    nodes = [[(i + j) % 4 for j in range(7)] for i in range(203)]
    return {
        "rows_in": 45222,
        "rows_out": 44111,
        "precision": 0.7123456789,
        "NCP": 0.000012345678,
        "DM": 123456789.123,
        "verified": True,
        "violations": 0,
        "spark_jobs": None,
        "node": {n: i % 3 for i, n in enumerate(names)},
        "lattice": {
            "nodes": 2160,
            "heights": {n: 4 - i % 3 for i, n in enumerate(names)},
            "candidates": 203,
            "candidate_nodes": nodes,
            "pruned": True,
        },
        "model": [{"name": "k", "k": 5}, {"name": "entropy_l", "l": 2.5}],
        "warnings": [],
        "seconds": {f"stage{i}": 1.23456789 * i for i in range(20)},
    }


def test_metrics_table_shows_counts_and_first_items() -> None:
    metrics = _fd_like_metrics()
    before = json.dumps(metrics)
    table = metrics_table(metrics)
    assert json.dumps(metrics) == before, "the table must not change the metrics"
    lines = table.splitlines()
    assert len(lines) < 60, table
    assert max(len(line) for line in lines) < 250, table
    # No Python repr: no braces, brackets, quotes, True/None (the glossary is prose).
    values = table.split("\n\nWhat they mean:\n")[0]
    assert "NCP       mean normalised certainty penalty" in table
    for needle in ("{", "}", "[", "]", "'", "True", "None", "False"):
        assert needle not in values, f"{needle!r} in: {values}"
    # Numbers rounded for a person; the full figures stay in the JSON.
    assert "0.7123" in table and "0.71234" not in table
    assert "123,456,789" in table and "45,222" in table
    assert "1.2e-05" in table
    assert re.search(r"^verified\s+yes$", table, re.M)
    assert re.search(r"^spark_jobs\s+none$", table, re.M)
    # The 203 candidate nodes: the count and the first TABLE_ITEMS, each node whole.
    row = next(line for line in lines if line.strip().startswith("candidate_nodes"))
    assert "203 items:" in row and "(203 in all)" in row
    assert "(0, 1, 2, 3, 0, 1, 2)" in row and "(1, 2, 3, 0, 1, 2, 3)" in row
    assert row.count("(") == TABLE_ITEMS + 1, row
    # A mapping is a heading over indented key/value lines, nested ones inline.
    assert "lattice" in lines
    assert re.search(r"^  heights\s+age 4, education 3, marital-status 2, ", table, re.M)
    assert re.search(r"^  education\s+1$", table, re.M)
    assert re.search(r"^model\s+\(name k, k 5\); \(name entropy_l, l 2.5\)$", table, re.M)
    assert re.search(r"^warnings\s+none$", table, re.M)
    # A long mapping: its first TABLE_KEYS entries and how many there are.
    assert f"stage{TABLE_KEYS - 1}" in table and f"stage{TABLE_KEYS}" not in table
    assert "... (20 entries in all)" in table
    assert re.search(r"^  stage3\s+3.704$", table, re.M)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "none"),
        (False, "no"),
        (1234567, "1,234,567"),
        (0.0, "0"),
        (12345.678, "12,346"),
        (2.0 / 3.0, "0.6667"),
        ([], "none"),
        ({}, "none"),
        (["a", "b"], "a, b"),
        (list(range(10)), "0, 1, 2, ... (10 in all)"),
        ([[1, 2], [3, 4]], "(1, 2); (3, 4)"),
        ({"a": {"b": [1.0, None]}}, "a (b (1, none))"),
        ("x" * 500, "x" * (TABLE_TEXT - 3) + "..."),
    ],
)
def test_brief(value: Any, shown: str) -> None:
    assert brief(value) == shown


def test_metrics_table_says_which_loss_counts_suppressed_rows() -> None:
    from sparkanon.cli import metrics_table

    text = metrics_table(
        {"rows_in": 10, "NCP": 0.2, "GCP": 3.0, "loss_with_suppressed": {"NCP": 0.4, "GCP": 9.0}}
    )
    assert "published rows only" in text
    assert "each suppressed row (or its items) counted as fully lost" in text
    full_domain = metrics_table({"NCP": 0.2, "NCP_published": 0.1, "family": "full_domain"})
    assert "a row the node suppresses counting 1" in full_domain


def test_key_writes_an_owner_only_key_and_never_overwrites_it(tmp_path, capsys) -> None:
    path = tmp_path / "release.key"
    assert main(["key", str(path)]) == 0
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    digits = path.read_text(encoding="ascii").strip()
    assert len(digits) == 64 and int(digits, 16) >= 0
    assert digits not in capsys.readouterr().err
    assert main(["key", str(path)]) == 2
    assert "never overwritten" in capsys.readouterr().err
    assert path.read_text(encoding="ascii").strip() == digits
