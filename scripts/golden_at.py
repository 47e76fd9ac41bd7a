"""Run the golden cases on another commit and compare: ``python -m scripts.golden_at REV``.

For a refactor that must not change any release: checks the code of ``REV`` out in a
temporary git worktree, runs every case of ``tests/golden/configs.json`` (this checkout's
cases and pins, and its :mod:`scripts.golden` machinery) with that code on the local
engine, and prints per case whether the
published tables have the same digests and which headline metrics differ, split into
*changed* (the pin and ``REV`` disagree) and *added* (``REV`` does not report the key).
Exit 0 when no table and no metric changed, 1 otherwise.

``--only ID`` (repeatable) runs those cases only. The worktree is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_RUNNER = """
import json, sys, tempfile
from pathlib import Path
import golden_now as g
g.ROOT = Path(sys.argv[1])
g.ADULT_CSV = g.ROOT / "data" / "adult" / "adult.csv"
case = json.loads(sys.argv[2])
g.PINS_ROOT = Path(sys.argv[3])
with tempfile.TemporaryDirectory() as tmp:
    metrics, tables, _ = g.run_case(case, Path(tmp) / case["id"])
    moved = g.table_mismatches(case["tables"], tables)
print(json.dumps({"tables": moved, "metrics": g.headline(metrics)}, default=str))
"""


def compare(case: dict, got: dict) -> tuple[bool, list[str], list[str]]:
    """Whether the tables match, the metrics that changed, the metrics ``REV`` lacks."""
    pinned, seen = case["metrics"], got["metrics"]
    changed = [k for k, v in pinned.items() if k in seen and seen[k] != v]
    added = [k for k in pinned if k not in seen]
    return not got["tables"], changed, added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the commit to run the cases on")
    parser.add_argument("--only", action="append", default=[], help="a case id (repeatable)")
    args = parser.parse_args(argv)
    cases = json.loads((ROOT / "tests" / "golden" / "configs.json").read_text())["cases"]
    cases = [c for c in cases if not args.only or c["id"] in args.only]
    worst = 0
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), args.rev],
            check=True,
        )
        try:
            (tree / "golden_now.py").write_text((ROOT / "scripts" / "golden.py").read_text())
            env = {**os.environ, "PYTHONPATH": str(tree)}
            for case in cases:
                run = subprocess.run(
                    [sys.executable, "-c", _RUNNER, str(tree), json.dumps(case), str(ROOT)],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=tree,
                )
                if run.returncode != 0:
                    last = run.stderr.strip().splitlines()[-1:]
                    print(f"{case['id']}: failed at {args.rev}: {last}")
                    worst = 1
                    continue
                same, changed, added = compare(
                    case, json.loads(run.stdout.strip().splitlines()[-1])
                )
                worst = worst or int(not same or bool(changed))
                print(
                    f"{case['id']}: tables {'same' if same else 'DIFFER'}; "
                    f"changed: {', '.join(changed) or '-'}; added since: {', '.join(added) or '-'}"
                )
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
            )
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
