"""Every family on a generated warehouse table, from Parquet and from a catalog table, both engines.

The table (``scripts/generate_patients.py``) holds a date, a timestamp, a decimal, a
boolean, integers of four widths, a ZIP code, direct identifiers, a set of procedure
codes, free text and ``--passthrough`` further columns. Each config of
``conf/patients_*.yaml`` (one per family: full-domain, blocks, perturbation, synthesis,
relational-transaction), and the config ``sparkanon init`` writes for the table, runs:

* from Parquet on the local engine and on Spark, whose published tables must be equal
  (same columns, same types, same rows);
* from a Hive catalog table (embedded Derby metastore, a warehouse in ``--work``) on Spark.

Every run must be verified (``metrics.json`` ``verified``) with rows in = rows out + rows
suppressed. The script prints a Markdown table (family, source, engine, rows, unlisted
columns, seconds, equal to local) and exits 1 when a check fails.

Usage:
    python -m scripts.check_warehouse --rows 5000 --passthrough 150 --work /tmp/warehouse
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("safe_harbor", "mdav", "perturb", "condense", "anatomy")


def _generator() -> Any:
    from scripts import generate_patients

    return generate_patients


def _sorted_table(path: Path) -> pa.Table:
    """A committed table read back, its rows in a canonical order."""
    table = pq.read_table(path)
    keys = [
        (c, "ascending")
        for c in table.column_names
        if not str(table.schema.field(c).type).startswith("list")
    ]
    return table.sort_by(keys)


def _published(out: Path) -> dict[str, pa.Table]:
    """Every published table of a run (``data``, or anatomy's ``rt`` and ``tt``)."""
    names = [n for n in ("data", "rt", "tt") if (out / n).exists()]
    return {n: _sorted_table(out / n) for n in names}


def _equal(a: dict[str, pa.Table], b: dict[str, pa.Table]) -> str:
    """``yes``, or what differs between two runs' published tables."""
    if a.keys() != b.keys():
        return f"tables {sorted(a)} != {sorted(b)}"
    for name in a:
        x, y = a[name], b[name]
        if x.schema != y.schema:
            diff = [
                f"{f.name}: {f.type} != {y.schema.field(f.name).type}"
                for f in x.schema
                if f.name in y.column_names and f.type != y.schema.field(f.name).type
            ]
            return f"{name} schema differs: {diff[:3] or (x.column_names, y.column_names)}"
        if not x.equals(y):
            return f"{name} rows differ"
    return "yes"


def _attributes(config_text: str) -> list[str]:
    """The ``attributes`` lines of a starter config."""
    lines = config_text.split("attributes:", 1)[1].split("sensitive:", 1)[0]
    return [line for line in lines.splitlines() if line.strip().startswith("- ")]


def run_one(engine: Any, config_path: Path, overrides: list[str]) -> tuple[dict[str, Any], float]:
    """Run a config in this process; its metrics and wall seconds."""
    from sparkanon.families import load_config
    from sparkanon.pipeline import run_job

    config = load_config(config_path, overrides)
    start = time.perf_counter()
    result = run_job(engine, config)
    return result.metrics, time.perf_counter() - start


def main() -> int:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--passthrough", type=int, default=150)
    parser.add_argument("--work", default="/tmp/sparkanon_warehouse")
    parser.add_argument("--no-table", action="store_true", help="skip the catalog-table runs")
    args = parser.parse_args()
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    data = _generator().write_patients(work / "input", args.rows, args.passthrough)
    os.environ["SPARKANON_WAREHOUSE"] = str(work / "catalog")
    from sparkanon.engine.local import LocalEngine
    from sparkanon.engine.session import get_or_create_session
    from sparkanon.engine.spark import SparkEngine
    from sparkanon.starter import starter_config

    spark_session = get_or_create_session(hive=not args.no_table)
    spark_session.sparkContext.setLogLevel("ERROR")
    engines = {"local": LocalEngine(), "spark": SparkEngine(spark_session)}
    init_cfg = work / "patients_init.yaml"
    init_cfg.write_text(
        starter_config(engines["spark"], str(data), output_path=str(work / "unused"))
    )
    configs = {name: ROOT / "conf" / f"patients_{name}.yaml" for name in CONFIGS}
    configs["init"] = init_cfg
    if not args.no_table:
        spark_session.sql("DROP DATABASE IF EXISTS warehouse_check CASCADE")
        spark_session.sql("CREATE DATABASE warehouse_check")
        spark_session.read.parquet(str(data)).write.format("parquet").saveAsTable(
            "warehouse_check.patients"
        )
        # init on the catalog table must suggest what it suggests for the files.
        from_table = starter_config(engines["spark"], "warehouse_check.patients", output_path="x")
        from_files = starter_config(engines["spark"], str(data), output_path="x")
        same = _attributes(from_table) == _attributes(from_files)
        print(f"init on the catalog table suggests the same attributes as on the files: {same}")
        if not same:
            return 1
    rows, failed = [], False
    for name, path in configs.items():
        local_out = None
        runs = [("parquet", "local"), ("parquet", "spark")]
        if not args.no_table:
            runs.append(("table", "spark"))
        for source, engine_name in runs:
            out = work / "out" / f"{name}_{source}_{engine_name}"
            overrides = [f"output.path={out}", "output.mode=overwrite", "report.enabled=false"]
            if source == "parquet":
                overrides += [f"input.path={data}", "input.format=parquet"]
            else:
                overrides += ["input.path=null", "input.table=warehouse_check.patients"]
            try:
                metrics, seconds = run_one(engines[engine_name], path, overrides)
            except Exception as exc:  # noqa: BLE001 - reported in the table
                rows.append((name, source, engine_name, f"FAILED: {exc!r}"[:160], "", "", "", ""))
                failed = True
                continue
            ok = metrics["verified"] and (
                metrics["rows_out"] + metrics["rows_suppressed"] == metrics["rows_in"]
            )
            published = _published(out)
            if engine_name == "local":
                local_out, same = published, "-"
            else:
                same = _equal(local_out, published) if local_out is not None else "no local run"
            failed |= not ok or same not in ("yes", "-")
            unlisted = metrics.get("unlisted_columns", {})
            rows.append(
                (
                    name,
                    source,
                    engine_name,
                    metrics["family"],
                    f"{metrics['rows_in']} / {metrics['rows_out']} / {metrics['rows_suppressed']}",
                    f"{unlisted.get('policy')} {unlisted.get('count')}",
                    "yes" if ok else "NO",
                    f"{seconds:.1f}",
                    same,
                )
            )
    print(
        "| config | source | engine | family | rows in / out / suppressed | unlisted | "
        "verified | seconds | equal to local |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print(json.dumps({"failed": failed, "rows": args.rows, "passthrough": args.passthrough}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
