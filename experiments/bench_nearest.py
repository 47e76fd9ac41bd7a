"""Condensation's nearest-group search at two revisions of its compiled kernel.

Reproduces docs/benchmarks.md, section 18.5 ("The nearest-group walk").

The kernel file ``sparkanon/algorithms/condensation/_assign_kernel.py`` is read at each
of two git revisions (``git show REV:path``; ``WORKTREE`` reads the file on disk) and
imported on its own. ``--records`` random records (standard normal, ``--dims``
coordinates) each find their nearest of ``--groups`` random centroids with the kernel's
``nearest``, inside one compiled loop per revision. The two loops run alternately
``--repeat`` times each (after one call that compiles them); the script prints each
revision's minimum and median seconds and whether both found the same group for every
record.

Run from the repository root::

    python -m experiments.bench_nearest --old e66ff15^ --new e66ff15 --records 400000
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from experiments import _bench

KERNEL = "sparkanon/algorithms/condensation/_assign_kernel.py"
WORKTREE = "WORKTREE"


def kernel_source(revision: str) -> str:
    """The kernel file's text at ``revision`` (``WORKTREE``: the file on disk)."""
    if revision == WORKTREE:
        return (_bench.REPO_ROOT / KERNEL).read_text(encoding="utf-8")
    return subprocess.run(
        ["git", "show", f"{revision}:{KERNEL}"],
        cwd=_bench.REPO_ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def load_kernel(source: str, name: str, folder: Path) -> ModuleType:
    """Import one revision's kernel text as a module of its own name."""
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def search_loop(kernel: ModuleType) -> Any:
    """A compiled loop calling the kernel's ``nearest`` once per record."""
    from numba import njit

    nearest = kernel.nearest

    @njit
    def loop(cent, n, key, order, xs, axis):  # noqa: ANN001, ANN202
        out = np.empty(xs.shape[0], dtype=np.int64)
        for r in range(xs.shape[0]):
            out[r] = nearest(cent, n, key, order, xs[r], axis)
        return out

    return loop


def main(argv: list[str] | None = None) -> int:
    """Time both revisions' search; print the figures; 0 when both agree on every record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="HEAD", help="git revision, or WORKTREE")
    parser.add_argument("--new", default=WORKTREE, help="git revision, or WORKTREE")
    parser.add_argument("--groups", type=int, default=20_000)
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--dims", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    cent = rng.standard_normal((args.groups, args.dims))
    order = np.argsort(cent[:, 0], kind="stable").astype(np.int64)
    key = cent[order, 0].copy()
    xs = rng.standard_normal((args.records, args.dims))
    with tempfile.TemporaryDirectory() as tmp:
        loops = {
            label: search_loop(load_kernel(kernel_source(rev), f"kernel_{label}", Path(tmp)))
            for label, rev in (("old", args.old), ("new", args.new))
        }
        for loop in loops.values():
            loop(cent, args.groups, key, order, xs[:2], 0)  # compile, untimed
        seconds: dict[str, list[float]] = {"old": [], "new": []}
        found: dict[str, np.ndarray] = {}
        for rep in range(args.repeat):
            for label in ("old", "new") if rep % 2 == 0 else ("new", "old"):
                start = time.perf_counter()
                found[label] = loops[label](cent, args.groups, key, order, xs, 0)
                seconds[label].append(time.perf_counter() - start)
    same = bool((found["old"] == found["new"]).all())
    print(f"{args.records} records, {args.groups} groups, {args.dims} dims")
    for label, rev in (("old", args.old), ("new", args.new)):
        times = seconds[label]
        print(f"{label} {rev}: min {min(times):.3f} s, median {statistics.median(times):.3f} s")
    print(f"same groups: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
