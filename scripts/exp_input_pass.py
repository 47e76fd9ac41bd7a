"""What a pass over the input costs on Spark: cached as read, encoded natively, encoded in pandas.

Issue 27 asks whether the two Python passes over the input (profile, then encode) can be
made cheaper. This experiment bounds what a rewrite could gain: it times three ways of
turning the rows of a Parquet file into cached integer codes of the seven
quasi-identifiers and the sensitive attribute of ``conf/adult_fd_k.yaml``, each in a fresh
local session:

* ``cache``: the columns read and cached as they are (no encoding): the cost of the
  pass itself;
* ``native``: each value trimmed and looked up in a literal map (``create_map``) of its
  column's distinct values: an encoding with no Python worker;
* ``pandas``: ``mapInPandas`` with a minimal encoder (each batch's distinct values looked
  up once, spread back to the rows): what any Python encoder pays for the Arrow round
  trip.

The distinct values come from the first 200,000 rows (pyarrow, untimed); rows whose value
is not among them get a null code (none, on the generated files). Each mode runs
``--repeats`` times, each in its own process; the table gives wall seconds of the timed
part (encode, persist, count).

Usage::

    python scripts/exp_input_pass.py --path /tmp/sparkanon_bench/adult_10m_model.parquet
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from itertools import chain
from pathlib import Path

import yaml

CONFIG = Path(__file__).resolve().parents[1] / "conf" / "adult_fd_k.yaml"


def config_columns(config: Path = CONFIG) -> list[str]:
    """The config's quasi-identifiers (its attributes but ``keep`` ones), then its sensitive one."""
    loaded = yaml.safe_load(config.read_text(encoding="utf-8"))
    names = [a["name"] for a in loaded["attributes"] if a.get("kind") != "keep"]
    return [*names, loaded["sensitive"]["name"]]


COLUMNS = config_columns()
MODES = ("cache", "native", "pandas")


def domains(path: str) -> dict[str, list[str]]:
    """Each column's distinct trimmed texts in the file's first 200,000 rows, sorted."""
    import pyarrow.parquet as pq

    head = pq.read_table(path, columns=COLUMNS).slice(0, 200_000).to_pandas()
    return {c: sorted(set(head[c].astype(str).str.strip())) for c in COLUMNS}


def run_mode(path: str, mode: str) -> dict:
    """One mode in this process: seconds to encode, persist and count the rows."""
    import numpy as np
    import pandas as pd
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as sf

    spark = (
        SparkSession.builder.master("local[*]")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    doms = domains(path)
    rows = spark.read.parquet(path).select(*[sf.col(f"`{c}`") for c in COLUMNS])
    rows = rows.withColumn("_rid", sf.monotonically_increasing_id())
    start = time.perf_counter()
    if mode == "cache":
        out = rows
    elif mode == "native":
        coded = [sf.col("_rid")]
        for c in COLUMNS:
            pairs = chain.from_iterable((sf.lit(v), sf.lit(i)) for i, v in enumerate(doms[c]))
            text = sf.trim(sf.col(f"`{c}`").cast("string"))
            coded.append(sf.create_map(*pairs)[text].alias(c))
        out = rows.select(*coded)
    else:
        lookups = {c: {v: i for i, v in enumerate(doms[c])} for c in COLUMNS}

        def encode(batches):
            for batch in batches:
                cols = {"_rid": batch["_rid"].to_numpy()}
                for c in COLUMNS:
                    codes, uniques = pd.factorize(batch[c])
                    known = [lookups[c].get(str(v).strip(), -1) for v in uniques]
                    cols[c] = np.asarray(known, dtype=np.int64)[codes]
                yield pd.DataFrame(cols)

        schema = "_rid long, " + ", ".join(f"`{c}` long" for c in COLUMNS)
        out = rows.mapInPandas(encode, schema)
    n = out.persist().count()
    seconds = time.perf_counter() - start
    spark.stop()
    return {"mode": mode, "rows": n, "seconds": round(seconds, 2)}


def main() -> None:
    """Run every mode ``--repeats`` times, each in a child process, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", required=True, help="a Parquet file of generate_adult.py")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # a child's run
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(run_mode(args.path, args.mode)))
        return
    results: dict[str, list[float]] = {m: [] for m in MODES}
    rows = 0
    for _ in range(args.repeats):
        for mode in MODES:
            child = [sys.executable, __file__, "--path", args.path, "--mode", mode]
            done = subprocess.run(child, capture_output=True, text=True, check=True)
            got = json.loads(done.stdout.strip().splitlines()[-1])
            results[mode].append(got["seconds"])
            rows = got["rows"]
    print(f"{rows:,} rows of {args.path}")
    print("| mode | seconds (each run) |")
    print("|---|---|")
    for mode in MODES:
        print(f"| {mode} | {', '.join(f'{s:.1f}' for s in results[mode])} |")


if __name__ == "__main__":
    main()
