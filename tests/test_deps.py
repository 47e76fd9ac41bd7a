"""The tests' lock (requirements/test.lock) and the script that writes and checks it.

The lock must cover every package ``.[test]`` installs at versions ``pyproject.toml``
allows, with hashes, and be what the README's test command and ``.ci/run`` install.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement

from scripts import deps
from tests._inputs import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the lock installs tomli there
    import tomli as tomllib


LOCK_TEXT = (ROOT / "requirements" / "test.lock").read_text(encoding="utf-8")
PINS = deps.read_pins(LOCK_TEXT)


def declared_requirements() -> list[Requirement]:
    """The package's dependencies and its ``test`` extra, as pyproject.toml declares them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["test"]
    return [Requirement(text) for text in declared]


def test_every_declared_requirement_is_locked_within_its_range() -> None:
    """For this Python, each requirement has one pin and the pin is inside the range."""
    here = {p.name: p.version for p in PINS if p.marker is None or Marker(p.marker).evaluate()}
    for req in declared_requirements():
        if req.marker is not None and not req.marker.evaluate({"extra": "test"}):
            continue  # not for this Python (tomli below 3.11)
        name = deps.normalized(req.name)
        assert name in here, f"{req.name} is declared but not in requirements/test.lock"
        assert req.specifier.contains(here[name], prereleases=True), (
            f"{req.name}=={here[name]} in the lock is outside pyproject.toml's {req.specifier}: "
            "python -m scripts.deps lock"
        )


def test_every_pin_is_exact_and_hashed() -> None:
    blocks = re.split(r"\n(?=[A-Za-z0-9])", LOCK_TEXT.split("\n", 2)[2])
    packages = [b for b in blocks if deps.read_pins(b.splitlines()[0])]
    assert len(packages) == len(PINS) > 20
    for block in packages:
        head = block.splitlines()[0]
        assert "==" in head, head
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", block), f"no hash: {head}"


def test_readme_and_ci_install_the_tests_from_the_lock() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines() if "python -m pytest" in line)
    assert "--require-hashes -r requirements/test.lock" in command
    assert "--no-deps -e ." in command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert command.strip() in ci, "the README's test command is what .ci/run runs"


def test_read_pins_takes_versions_and_markers_and_skips_hashes() -> None:
    text = (
        "# a comment\n"
        "numpy==2.2.6 ; python_full_version < '3.11' \\\n"
        "    --hash=sha256:" + "0" * 64 + "\n"
        "Typing_Extensions==4.16.0 \\\n"
        "    # via pydantic\n"
        "-e file:///x\n"
    )
    assert deps.read_pins(text) == [
        deps.Pin("numpy", "2.2.6", "python_full_version < '3.11'"),
        deps.Pin("typing-extensions", "4.16.0", None),
    ]


def test_version_moves_lists_changed_added_and_dropped() -> None:
    before = {"numpy": "2.4.6", "pandas": "2.3.3", "six": "1.17.0"}
    after = {"numpy": "2.5.0", "pandas": "2.3.3", "zipp": "4.1.2"}
    assert deps.version_moves(before, after) == [
        ("numpy", "2.4.6", "2.5.0"),
        ("six", "1.17.0", "-"),
        ("zipp", "-", "4.1.2"),
    ]


def test_newest_report_reads_outcomes_from_junit(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_a" name="test_ok"/>'
        '<testcase classname="tests.test_a" name="test_bad"><failure message="x"/></testcase>'
        '<testcase classname="tests.test_b" name="test_err"><error message="y"/></testcase>'
        '<testcase classname="tests.test_b" name="test_skip"><skipped message="z"/></testcase>'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    counts, failing = deps.test_outcomes(junit)
    assert counts == {"passed": 1, "failed": 2, "skipped": 1}
    assert failing == ["tests.test_a::test_bad", "tests.test_b::test_err"]
    report = deps.newest_report([("numpy", "2.4.6", "2.5.0")], counts, failing, "the fast tier")
    assert "| numpy | 2.4.6 | 2.5.0 |" in report
    assert "- `tests.test_a::test_bad`" in report
    assert "1 passed, 2 failed, 1 skipped" in report
