"""Many short local-engine runs in a loop: every one must exit 0 (no abort at shutdown).

A successful job once aborted at interpreter shutdown in about 1 run in 25
(``terminate called without an active exception``, exit 134): a pyarrow dataset
fragment wrapping a Python file object was released on an Arrow thread after the
interpreter had begun to finalise (``docs/method.md``, "Reading files"). This script
runs the command line many times, alternating configs and input formats (CSV and
Parquet input, Parquet and CSV output, MAA-SLIE and MAA-SAE), and counts the exit codes.

Usage::

    python -m scripts.stress_exit [--runs 200] [--rows 2000] [--work DIR]

Prints one line per run with a non-zero exit and a summary; exits 1 if any run
failed.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "data" / "adult" / "adult.csv"


def inputs(work: Path, rows: int) -> dict[str, Path]:
    """The first ``rows`` Adult rows as CSV and as Parquet."""
    frame = pd.read_csv(ADULT, dtype=str, keep_default_na=False, nrows=rows)
    csv_path = work / "adult.csv"
    frame.to_csv(csv_path, index=False)
    parquet_dir = work / "adult_parquet"
    parquet_dir.mkdir(exist_ok=True)
    frame.to_parquet(parquet_dir / "part-0.parquet", index=False)
    return {"csv": csv_path, "parquet": parquet_dir}


def commands(work: Path, data: dict[str, Path]) -> list[list[str]]:
    """The run variants the loop cycles through."""
    exe = [sys.executable, "-m", "sparkanon.cli", "run"]
    variants = [
        ("conf/adult_hpk.yaml", "csv", "parquet"),
        ("conf/adult_hpk.yaml", "parquet", "csv"),
        ("conf/adult_psk_yang2014.yaml", "csv", "parquet"),
        ("conf/adult_psk_yang2014.yaml", "parquet", "parquet"),
    ]
    out = []
    for i, (config, fmt, out_fmt) in enumerate(variants):
        out.append(
            exe
            + [
                config,
                "--engine",
                "local",
                "--quiet",
                "--set",
                f"input.path={data[fmt]}",
                "--set",
                f"input.format={fmt}",
                "--set",
                f"output.path={work / f'out{i}'}",
                "--set",
                "output.mode=overwrite",
                "--set",
                f"output.format={out_fmt}",
            ]
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="sparkanon-stress-"))
    work.mkdir(parents=True, exist_ok=True)
    cmds = commands(work, inputs(work, args.rows))
    codes: collections.Counter[int] = collections.Counter()
    start = time.perf_counter()
    for run in range(args.runs):
        cmd = cmds[run % len(cmds)]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        codes[done.returncode] += 1
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1:] or [""]
            print(f"run {run}: exit {done.returncode} ({cmd[4]}): {tail[0]}", flush=True)
    failed = args.runs - codes[0]
    print(
        f"runs={args.runs} exit_codes={dict(sorted(codes.items()))} failed={failed} "
        f"seconds={time.perf_counter() - start:.0f}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
