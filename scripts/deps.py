#!/usr/bin/env python3
"""The tests' lock of exact versions, and a check of the newest versions the ranges allow.

    python -m scripts.deps lock [--upgrade | --upgrade-package NAME ...]
    python -m scripts.deps newest [--full] [--report FILE] [--keep]

``pyproject.toml`` keeps the ranges users install from; ``requirements/test.lock`` pins
every package the tests need (``.[test]`` and what it pulls in) to one version, with the
SHA-256 of each file PyPI serves for it, for every Python the package supports (a
package whose newest release drops an older Python gets a line per Python range). The
README's test command and ``.ci/run`` install from it with ``--require-hashes``, so a
release upstream changes nothing until the lock is updated.

``lock`` rewrites the lock with uv's resolver (``uv pip compile --universal
--generate-hashes``; uv is installed at :data:`UV_VERSION` into a throwaway virtual
environment). Without flags it keeps every pin that still satisfies ``pyproject.toml``
and only adds or moves what a changed range requires; ``--upgrade`` moves every package
to the newest version the ranges allow; ``--upgrade-package NAME`` moves one. It prints
the versions that moved; review the diff and run the tests before committing it.

``newest`` is the early warning, not part of CI: it makes a fresh virtual environment,
installs ``.[test]`` at the newest versions the ranges allow (no lock), runs the tests
there (the fast tier, ``-m "not spark and not slow"``; ``--full`` runs the whole suite),
and reports which packages differ from the lock and which tests failed. An upgrade is
then a decision: update the lock (``lock --upgrade``) once the report is clean, or fix
what moved first. Exit 0 when the tests pass, 1 when some fail, 2 when the environment
cannot be built.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "test.lock"
UV_VERSION = "0.13.9"
"""The resolver's version: one tool version writes the same lock from the same inputs."""
LOWEST_PYTHON = "3.10"
"""The lowest Python of ``requires-python``: the lock resolves for it and every later one."""
FAST_TIER = "not spark and not slow"
"""The development tier's marker expression (README, "The two commands")."""

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


class Pin(NamedTuple):
    """One package line of a lock: name, exact version and the marker it applies under."""

    name: str
    version: str
    marker: str | None


def normalized(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(text: str) -> list[Pin]:
    """The pins of a lock or ``pip freeze`` text (hash and comment lines skipped)."""
    pins = []
    for line in text.splitlines():
        match = _PIN.match(line.strip())
        if match:
            name, version, marker = match.groups()
            pins.append(Pin(normalized(name), version, marker.strip() if marker else None))
    return pins


def version_moves(before: dict[str, str], after: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(name, before, after)`` for each package whose version differs (``-``: absent)."""
    names = sorted(before.keys() | after.keys())
    return [
        (n, before.get(n, "-"), after.get(n, "-")) for n in names if before.get(n) != after.get(n)
    ]


def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a command, echoing it to stderr; raise on failure."""
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, text=True, **kwargs)  # noqa: PLW1510


def make_venv(where: Path) -> Path:
    """A fresh virtual environment under ``where``; returns its Python."""
    run([sys.executable, "-m", "venv", str(where)])
    return where / "bin" / "python"


def pins_for(python: Path, pins: list[Pin]) -> dict[str, str]:
    """The lock's version of each package for the interpreter ``python`` (markers evaluated)."""
    program = (
        "import json, sys\n"
        "from packaging.markers import Marker\n"
        "pins = json.load(sys.stdin)\n"
        "print(json.dumps({n: v for n, v, m in pins if m is None or Marker(m).evaluate()}))\n"
    )
    payload = json.dumps([[p.name, p.version, p.marker] for p in pins])
    out = run([str(python), "-c", program], input=payload, capture_output=True)
    return json.loads(out.stdout)


def lock_command(args: argparse.Namespace) -> int:
    """Rewrite ``requirements/test.lock`` with uv; print what moved."""
    before = {p.name: p.version for p in read_pins(LOCK.read_text())} if LOCK.exists() else {}
    with tempfile.TemporaryDirectory(prefix="sparkanon-lock-") as tmp:
        python = make_venv(Path(tmp) / "venv")
        run([str(python), "-m", "pip", "install", "-q", f"uv=={UV_VERSION}"])
        uv = Path(tmp) / "venv" / "bin" / "uv"
        cmd = [str(uv), "pip", "compile", "pyproject.toml", "--extra", "test", "--universal"]
        cmd += ["--generate-hashes", "--python-version", LOWEST_PYTHON, "--quiet"]
        cmd += ["--custom-compile-command", "python -m scripts.deps lock"]
        cmd += ["--output-file", str(LOCK.relative_to(ROOT))]
        if args.upgrade:
            cmd.append("--upgrade")
        for name in args.upgrade_package:
            cmd += ["--upgrade-package", name]
        LOCK.parent.mkdir(exist_ok=True)
        run(cmd, cwd=ROOT)
    after = {p.name: p.version for p in read_pins(LOCK.read_text())}
    moves = version_moves(before, after)
    for name, old, new in moves:
        print(f"{name}: {old} -> {new}")
    print(f"{len(moves)} package(s) moved; {LOCK.relative_to(ROOT)} written")
    return 0


def test_outcomes(junit: Path) -> tuple[dict[str, int], list[str]]:
    """Counts per outcome and the failing test ids of a pytest JUnit XML report."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    failing = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
        counts[outcome] += 1
        if outcome == "failed":
            failing.append(f"{case.get('classname')}::{case.get('name')}")
    return counts, failing


def newest_report(
    moves: list[tuple[str, str, str]], counts: dict[str, int], failing: list[str], tier: str
) -> str:
    """The newest-versions check as Markdown: what moved from the lock, what failed."""
    lines = [f"# Newest versions the ranges allow ({time.strftime('%Y-%m-%d')})", ""]
    lines.append(f"Python {sys.version.split()[0]}; tests: {tier}.")
    lines += ["", "## Packages that differ from requirements/test.lock", ""]
    if moves:
        lines += ["| package | lock | newest |", "|---|---|---|"]
        lines += [f"| {n} | {old} | {new} |" for n, old, new in moves]
    else:
        lines.append("None: the lock is at the newest versions.")
    lines += ["", "## Tests", ""]
    lines.append(", ".join(f"{v} {k}" for k, v in counts.items()))
    if failing:
        lines += ["", "Failing:", ""] + [f"- `{t}`" for t in failing]
    return "\n".join(lines) + "\n"


def newest_command(args: argparse.Namespace) -> int:
    """Install the newest allowed versions in a fresh environment, run the tests, report."""
    tmp = Path(tempfile.mkdtemp(prefix="sparkanon-newest-"))
    try:
        try:
            python = make_venv(tmp / "venv")
            run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"])
            run([str(python), "-m", "pip", "install", "-q", "--upgrade", "-e", ".[test]"], cwd=ROOT)
            frozen = run([str(python), "-m", "pip", "freeze"], capture_output=True).stdout
            locked = pins_for(python, read_pins(LOCK.read_text()))
        except subprocess.CalledProcessError as exc:
            print(f"newest: could not build the environment: {exc}", file=sys.stderr)
            return 2
        installed = {p.name: p.version for p in read_pins(frozen) if p.name != "sparkanon"}
        moves = version_moves(locked, installed)
        junit = tmp / "junit.xml"
        tier = "the whole suite" if args.full else f'the fast tier (-m "{FAST_TIER}")'
        cmd = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
        if not args.full:
            cmd += ["-m", FAST_TIER]
        print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, cwd=ROOT, check=False)
        if not junit.exists():
            print("newest: pytest wrote no report", file=sys.stderr)
            return 2
        counts, failing = test_outcomes(junit)
        report = newest_report(moves, counts, failing, tier)
        print(report)
        if args.report:
            Path(args.report).write_text(report, encoding="utf-8")
        return 1 if failing else 0
    finally:
        if args.keep:
            print(f"newest: environment kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run ``lock`` or ``newest``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lock = sub.add_parser("lock", help="rewrite requirements/test.lock")
    group = lock.add_mutually_exclusive_group()
    group.add_argument("--upgrade", action="store_true", help="move every package to its newest")
    group.add_argument(
        "--upgrade-package", action="append", default=[], metavar="NAME", help="move one package"
    )
    newest = sub.add_parser("newest", help="run the tests on the newest allowed versions")
    newest.add_argument("--full", action="store_true", help="the whole suite, not the fast tier")
    newest.add_argument("--report", metavar="FILE", help="also write the report to FILE")
    newest.add_argument("--keep", action="store_true", help="keep the virtual environment")
    args = parser.parse_args(argv)
    return lock_command(args) if args.command == "lock" else newest_command(args)


if __name__ == "__main__":
    sys.exit(main())
