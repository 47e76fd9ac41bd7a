"""The kernels' compiled code is cached across archive copies (``--py-files`` zip or wheel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("numba")

from sparkanon.algorithms._jit import archive_member  # noqa: E402

_MODULE = textwrap.dedent(
    """
    from sparkanon.algorithms._jit import compiled

    @compiled()
    def total(x):
        s = 0.0
        for v in x:
            s += v
        return s
    """
)

_PROBE = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import jitprobe
    value = jitprobe.total(np.arange(4.0))
    stats = jitprobe.total.stats
    print(json.dumps({"value": value, "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()), "file": jitprobe.__file__}))
    """
)


def _archive(folder: Path, name: str, source: str) -> Path:
    folder.mkdir(parents=True)
    path = folder / name
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("jitprobe.py", source)
    return path


def _probe(archive: Path, cache: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    env.pop("SPARKANON_NO_JIT", None)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(archive)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_archive_member_finds_the_archive_and_the_path_inside(tmp_path: Path) -> None:
    wheel = _archive(tmp_path / "app", "pkg-1.0-py3-none-any.whl", "x = 1\n")
    inside = wheel / "pkg" / "sub" / "mod.py"
    assert archive_member(str(inside)) == (str(wheel), "pkg/sub/mod.py")
    on_disk = tmp_path / "plain.py"
    on_disk.write_text("x = 1\n")
    assert archive_member(str(on_disk)) is None  # numba's own locators take it
    assert archive_member(str(tmp_path / "missing" / "mod.py")) is None


def test_a_second_copy_of_the_archive_loads_the_cached_code(tmp_path: Path) -> None:
    """Spark copies the archive per application: the second copy must not compile again,
    a wheel as well as a zip; changed source in the same place must compile again."""
    cache = tmp_path / "cache"
    first = _probe(_archive(tmp_path / "app-1", "sparkanon.zip", _MODULE), cache)
    assert (first["value"], first["hits"], first["misses"]) == (6.0, 0, 1)
    assert ".zip" in first["file"]
    second = _probe(_archive(tmp_path / "app-2", "sparkanon-0-py3-none-any.whl", _MODULE), cache)
    assert (second["value"], second["hits"], second["misses"]) == (6.0, 1, 0)
    changed = _MODULE.replace("s = 0.0", "s = 1.0")
    third = _probe(_archive(tmp_path / "app-3", "sparkanon.zip", changed), cache)
    assert (third["value"], third["hits"], third["misses"]) == (7.0, 0, 1)
