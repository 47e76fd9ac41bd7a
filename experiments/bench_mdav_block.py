"""MDAV on one block: CPU time of the compiled kernel against the numpy reference.

Reproduces docs/method.md, "MDAV" (the kernel's CPU times).

Encodes the first ``max(--rows)`` rows of ``data/adult/adult.csv`` with
``conf/adult_mdav_k.yaml`` (``k = 10``; the local engine, one block, nothing committed),
then clusters the first N rows of that block (row-id order) for each N of ``--rows``
with :meth:`Mdav.cluster` (the compiled kernel) and :meth:`Mdav.cluster_reference` (the
numpy path), after one untimed call each (numba compiles or loads the kernel). Prints
the best CPU time of ``--reps`` calls and whether the labels are the same.

Usage::

    python -m experiments.bench_mdav_block [--rows 2000 10000] [--reps 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from experiments import _bench
from sparkanon.algorithms import Block
from sparkanon.algorithms.blocks.mdav import Mdav
from sparkanon.attributes.schema import RID

CONF = _bench.REPO_ROOT / "conf" / "adult_mdav_k.yaml"


def best_cpu(run: Callable[[], np.ndarray], reps: int) -> tuple[float, np.ndarray]:
    """The least CPU seconds of ``reps`` calls (after one untimed call) and the result."""
    labels = run()
    best = float("inf")
    for _ in range(reps):
        start = time.process_time()
        labels = run()
        best = min(best, time.process_time() - start)
    return best, labels


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, build the block, time both paths."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        frame, ctx, _ = _bench.first_block(CONF, max(args.rows), Path(tmp))
    frame = frame.sort_values(RID).reset_index(drop=True)
    for n in args.rows:
        block = Block(frame.iloc[:n], ctx)
        compiled, labels = best_cpu(lambda b=block: Mdav().cluster(b, None), args.reps)
        reference, expected = best_cpu(lambda b=block: Mdav().cluster_reference(b), args.reps)
        print(
            f"rows {n} k {ctx.model.k}: compiled {compiled * 1e3:.1f} ms, "
            f"reference {reference * 1e3:.1f} ms, x{reference / compiled:.1f}, "
            f"same labels {np.array_equal(labels, expected)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
