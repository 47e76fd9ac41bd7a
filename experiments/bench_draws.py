"""What a protective random draw costs: the run key's AES uniforms against the old generator.

Reproduces docs/benchmarks.md, section 18.1 ("The draws alone").

Issue 38 moved every protective draw from a public counter generator (splitmix64's output
function keyed by the config's seed, :func:`sparkanon.algorithms.perturbation.noise.
counter_uniforms`) to AES-256 of a counter block under a secret run key
(:meth:`sparkanon.randomness.RunKey.uniforms`), and asked that the 10M benchmarks not
regress by more than 10% for it. A whole job also pays for the keyed release order (a
shuffle) and the release checks, so this script times the draws alone, in one process,
as the perturbation stage makes them: one uniform per row and perturbed column, over
batches of ``--batch`` rows (Spark's Arrow batches hold 10,000), for ``--rows`` rows and
``--columns`` columns, and the keyed sort value of each row (one 64-bit word per row),
each the best of ``--repeat`` runs.

Usage::

    python -m experiments.bench_draws --rows 10000000 --columns 5
    python -m experiments.bench_draws --report            # the table of draws.csv
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from experiments import _bench

FIELDS = ["generator", "rows", "columns", "batch", "seconds", "ns_per_draw"]


def _best(fn: Callable[[], None], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _per_batch(rows: int, batch: int, draw: Callable[[np.ndarray], None]) -> Callable[[], None]:
    def run() -> None:
        for start in range(0, rows, batch):
            draw(np.arange(start, min(start + batch, rows), dtype=np.int64))

    return run


def measure(rows: int, columns: int, batch: int, repeat: int) -> list[dict[str, object]]:
    """Seconds for ``rows * columns`` uniforms from each generator, and the order words."""
    from sparkanon.algorithms.perturbation.noise import counter_uniforms
    from sparkanon.randomness import RunKey

    key = RunKey(bytes(range(32)), "user", "bench")

    def splitmix(ids: np.ndarray) -> None:
        for column in range(columns):
            counter_uniforms(7, column, ids)

    def keyed(ids: np.ndarray) -> None:
        for column in range(columns):
            key.uniforms(column, ids)

    def order(ids: np.ndarray) -> None:
        key.words(1, ids)

    out = []
    for name, fn, draws in (
        ("splitmix (before)", splitmix, rows * columns),
        ("AES run key (after)", keyed, rows * columns),
        ("AES order word (after)", order, rows),
    ):
        seconds = _best(_per_batch(rows, batch, fn), repeat)
        out.append(
            {
                "generator": name,
                "rows": rows,
                "columns": columns if draws != rows else 1,
                "batch": batch,
                "seconds": float(f"{seconds:.6g}"),
                "ns_per_draw": float(f"{seconds / draws * 1e9:.4g}"),
            }
        )
        print(f"{name}: {seconds:.2f} s, {seconds / draws * 1e9:.1f} ns per draw", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--columns", type=int, default=5, help="perturbed columns (draws per row)")
    parser.add_argument("--batch", type=int, default=10_000, help="rows per batch")
    parser.add_argument("--repeat", type=int, default=3, help="runs per generator (best kept)")
    parser.add_argument("--out-dir", type=Path, default=_bench.BENCH_DIR)
    parser.add_argument("--report", action="store_true", help="print the table of draws.csv")
    args = parser.parse_args(argv)
    path = args.out_dir / "draws.csv"
    if args.report:
        print(" | ".join(FIELDS))
        print(path.read_text(encoding="utf-8"))
        return 0
    rows = measure(args.rows, args.columns, args.batch, args.repeat)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    _bench.write_csv(path, rows, FIELDS)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
