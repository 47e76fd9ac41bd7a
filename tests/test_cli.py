"""The command line's own text: ``--help`` of every command, the metrics table.

Pure: no job runs, no Spark.
"""

from __future__ import annotations

import argparse
import re

import pytest

from sparkanon.cli import _parser

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


COMMANDS = ["sparkanon", "sparkanon backfill", "sparkanon run", "sparkanon validate"]


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
