"""Lint and docstring style are part of the test suite (ruff, Google convention)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests._adult import ROOT


@pytest.mark.skipif(
    shutil.which("ruff") is None, reason="ruff not installed (pip install -e '.[test]')"
)
def test_ruff_passes() -> None:
    done = subprocess.run(
        ["ruff", "check", "sparkanon", "jobs", "scripts", "experiments", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-5000:]
