"""Per-block time of (K,L) clustering: the numpy path against the compiled kernel.

Reproduces docs/method.md, "(K,L)-anonymity clustering (Chai and Feng 2015)" (the per-block
times).

For each ``--rows`` N, the first N rows of the bundled Adult CSV are encoded as
``conf/adult_kl_chai2015.yaml`` does (K = 10, L = 3) into one block of N rows (the job
runs up to its cluster stage, which is stopped at the first block); that block is then
clustered in process by the numpy path (``SPARKANON_NO_JIT=1``) and by the kernel
(after one untimed call that compiles or loads it), ``--repeat`` times each, best time
kept, and the labels compared. ``--compile`` also times the kernel's cold compile: a
fresh interpreter with an empty ``NUMBA_CACHE_DIR`` clusters a 300-row block.

Run from the repository root::

    python -m experiments.bench_kl_kernel --rows 2000 10000 --compile
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments import _bench

ROOT = _bench.REPO_ROOT
CONF = ROOT / "conf" / "adult_kl_chai2015.yaml"


def adult_block(rows: int, tmp: Path) -> tuple[Any, Any, int]:
    """``(frame, context, block id)`` of the first ``rows`` Adult rows as one (K,L) block."""
    return _bench.first_block(CONF, rows, tmp)


def timed(frame: Any, ctx: Any, block_id: int, jit: bool, repeat: int) -> tuple[float, Any]:
    """Best of ``repeat`` calls of ``cluster_block`` on one path, and its labels.

    ``cluster_block`` is what a job pays per block: the algorithm, then the repair step
    (numpy in both paths).
    """
    from sparkanon.algorithms import cluster_block

    if jit:
        os.environ.pop("SPARKANON_NO_JIT", None)
    else:
        os.environ["SPARKANON_NO_JIT"] = "1"
    best, labels = float("inf"), None
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            labels = cluster_block(frame, ctx, "kl_cluster", 1, block_id)
            best = min(best, time.perf_counter() - t0)
    finally:
        os.environ.pop("SPARKANON_NO_JIT", None)
    return best, labels


def algorithm_only(frame: Any, ctx: Any, jit: bool, repeat: int) -> float:
    """Best of ``repeat`` calls of ``KLCluster.cluster`` alone (no repair step)."""
    import numpy as np

    from sparkanon.algorithms import Block
    from sparkanon.algorithms.blocks.kl_cluster import KLCluster

    block = Block(frame.sort_values("_rid"), ctx)
    if jit:
        os.environ.pop("SPARKANON_NO_JIT", None)
    else:
        os.environ["SPARKANON_NO_JIT"] = "1"
    best = float("inf")
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            KLCluster().cluster(block, np.random.default_rng(0))
            best = min(best, time.perf_counter() - t0)
    finally:
        os.environ.pop("SPARKANON_NO_JIT", None)
    return best


def cold_compile() -> str:
    """Wall and CPU seconds of the kernel's first call in a fresh process, empty cache."""
    code = (
        "import time, tempfile, numpy as np\n"
        "from pathlib import Path\n"
        "from experiments import bench_kl_kernel as b\n"
        "frame, ctx, block_id = b.adult_block(300, Path(tempfile.mkdtemp()))\n"
        "from sparkanon.algorithms import Block\n"
        "from sparkanon.algorithms.blocks import _kl_kernel as kernel\n"
        "block = Block(frame.sort_values('_rid'), ctx)\n"
        "clusters = (block.sens % 3).astype(np.int64)\n"
        "t, c = time.perf_counter(), time.process_time()\n"
        "kernel.cluster(block, clusters, 3, 1e-12)\n"
        "kernel.place(block, np.arange(block.n) % 20, 20, block, 1e-12)\n"
        "print(f'{time.perf_counter() - t:.1f} s wall, {time.process_time() - c:.1f} s CPU')\n"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env["PYTHONPATH"] = str(ROOT)
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
    return done.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    """Print, per block size, the numpy and compiled per-block times and the speed-up."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compile", action="store_true", help="also time a cold compile")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for rows in args.rows:
            frame, ctx, block_id = adult_block(rows, Path(tmp))
            timed(frame, ctx, block_id, True, 1)  # compile or load the kernel
            numpy_s, reference = timed(frame, ctx, block_id, False, args.repeat)
            jit_s, compiled = timed(frame, ctx, block_id, True, args.repeat)
            same = bool((reference == compiled).all())
            alone = [algorithm_only(frame, ctx, jit, args.repeat) for jit in (False, True)]
            print(
                f"{rows} rows: cluster_block numpy {numpy_s:.3f} s, compiled {jit_s:.3f} s, "
                f"speed-up {numpy_s / jit_s:.1f}x, same labels: {same}; "
                f"the algorithm alone {alone[0]:.3f} s and {alone[1]:.3f} s "
                f"({alone[0] / alone[1]:.1f}x)",
                flush=True,
            )
    if args.compile:
        print(f"cold compile (300-row block): {cold_compile()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
