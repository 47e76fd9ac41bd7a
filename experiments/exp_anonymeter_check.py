"""Cross-check of sparkanon.risk.anonymeter against anonymeter itself (issue 25).

Reproduces docs/method.md, "Risk: attacks" (the agreement with anonymeter).

Anonymeter 1.1.0 requires ``numpy<1.27``, which this project's numpy 2 excludes, so the
two cannot share one environment. The check runs in two steps over a directory:

1. ``python -m experiments.exp_anonymeter_check ours DIR`` (project venv) writes three small
   deterministic tables (``ori.csv``, ``syn.csv``, ``ctl.csv``: a continuous column so
   that no two distances tie) and ``ours.json``: our success counts of the inference
   attack, the linkability attack (``n_neighbors = 1``) and the univariate singling-out
   attack, each with ``n_attacks`` = every row, so the draw of targets cannot change the
   count (every row is attacked, and every singling-out candidate kept);
2. ``python -m experiments.exp_anonymeter_check theirs DIR`` (a venv with ``pip install
   anonymeter``, no sparkanon import) runs anonymeter's evaluators on the same files,
   writes ``theirs.json`` and prints both side by side, exiting 1 when a count differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

N = 120
COLUMNS = ["age", "city", "inc", "dis"]
SPLIT = (["age", "city"], ["inc", "dis"])


def tables(seed: int = 11) -> dict[str, pd.DataFrame]:
    """Originals, a noisy copy (the release) and an independent control set."""
    rng = np.random.default_rng(seed)

    def draw(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.uniform(18, 90, n).round(3),
                "city": rng.choice(list("abcdef"), n),
                "inc": rng.normal(50, 10, n).round(3),
                "dis": rng.choice(["x", "y", "z"], n),
            }
        )

    ori, ctl = draw(N), draw(N)
    syn = ori.assign(
        age=(ori["age"] + rng.normal(0, 2, N)).round(3),
        inc=(ori["inc"] + rng.normal(0, 2, N)).round(3),
    )
    return {"ori": ori, "syn": syn, "ctl": ctl}


def ours(out: Path) -> dict[str, int]:
    """Our counts (local engine)."""
    from sparkanon.engine.local import LocalEngine
    from sparkanon.risk.anonymeter import inference_count, linkability_count, singling_out
    from sparkanon.risk.view import TableView

    data = tables()
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in data.items():
        frame.to_csv(out / f"{name}.csv", index=False)
    kinds = {"age": "numeric", "city": "categorical", "inc": "numeric"}
    view = TableView(("age", "city", "inc"), kinds, "dis", "categorical")
    eng = LocalEngine()
    ori, syn, ctl = data["ori"], data["syn"], data["ctl"]
    counts = {
        "inference_main": inference_count(eng, ori, syn, view, N, 0, 4)[0],
        "inference_control": inference_count(eng, ctl, syn, view, N, 1, 4)[0],
        "linkability_main": linkability_count(eng, ori, syn, view, SPLIT, N, 1, 0, 4)[0],
        "linkability_control": linkability_count(eng, ctl, syn, view, SPLIT, N, 1, 1, 4)[0],
    }
    main, ctrl, _, _ = singling_out(eng, ori, syn, ctl, view, "univariate", 10 * N, 1, 0)
    counts |= {"singling_out_univariate_main": main, "singling_out_univariate_control": ctrl}
    (out / "ours.json").write_text(json.dumps(counts, indent=1))
    return counts


def theirs(out: Path) -> int:
    """Anonymeter's counts on the same files; 0 when they equal ours."""
    from anonymeter.evaluators import (
        InferenceEvaluator,
        LinkabilityEvaluator,
        SinglingOutEvaluator,
    )

    ori, syn, ctl = (pd.read_csv(out / f"{n}.csv") for n in ("ori", "syn", "ctl"))
    aux = ["age", "city", "inc"]
    counts = {}
    inf = InferenceEvaluator(ori, syn, aux, "dis", n_attacks=N, control=ctl).evaluate(n_jobs=1)
    counts["inference_main"] = int(inf._n_success)
    counts["inference_control"] = int(inf._n_control)
    link = LinkabilityEvaluator(ori, syn, SPLIT, n_attacks=N, n_neighbors=1, control=ctl)
    res = link.evaluate(n_jobs=1).results()
    counts["linkability_main"] = int(res.n_success)
    counts["linkability_control"] = int(res.n_control)
    so = SinglingOutEvaluator(ori, syn, n_attacks=10 * N, control=ctl).evaluate("univariate")
    counts["singling_out_univariate_main"] = int(so._n_success)
    counts["singling_out_univariate_control"] = int(round(so._n_control))
    (out / "theirs.json").write_text(json.dumps(counts, indent=1))
    mine = json.loads((out / "ours.json").read_text())
    bad = 0
    for key in counts:
        flag = "" if counts[key] == mine[key] else "  DIFFERENT"
        bad += bool(flag)
        print(f"{key:34s} ours {mine[key]:5d} anonymeter {counts[key]:5d}{flag}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    """Run one step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["ours", "theirs"])
    parser.add_argument("directory", type=Path)
    args = parser.parse_args(argv)
    if args.step == "ours":
        print(json.dumps(ours(args.directory), indent=1))
        return 0
    return theirs(args.directory)


if __name__ == "__main__":
    sys.exit(main())
