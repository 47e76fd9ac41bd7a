"""Small inputs for the job tests: Adult samples, job configs and their sections, a run of
a config on the local engine, and the tests' SparkSession builder.

Everything is written under a test's ``tmp_path``; the bundled data is only read.
"""

from __future__ import annotations

import contextlib
import copy
import csv
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ADULT_CSV = ROOT / "data" / "adult" / "adult.csv"
HIERARCHIES = ROOT / "data" / "adult" / "hierarchies"
ADULT_CONF = ROOT / "conf" / "adult_hpk.yaml"

Row = dict[str, str]


@lru_cache(maxsize=1)
def _adult_head(limit: int = 2000) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Header and the first ``limit`` data rows of the bundled Adult CSV."""
    with ADULT_CSV.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = tuple(next(reader))
        rows = []
        for row in reader:
            rows.append(tuple(row))
            if len(rows) >= limit:
                break
    return header, tuple(rows)


def adult_header() -> list[str]:
    """Column names of the bundled Adult CSV."""
    return list(_adult_head()[0])


def adult_rows(n: int) -> list[Row]:
    """The first ``n`` rows of the bundled Adult CSV as dicts (fresh copies)."""
    header, rows = _adult_head()
    if n > len(rows):
        raise ValueError(f"only the first {len(rows)} rows are cached")
    return [dict(zip(header, r, strict=True)) for r in rows[:n]]


def write_rows(
    tmp_path: Path,
    rows: list[Row],
    name: str = "input.csv",
    columns: list[str] | None = None,
) -> Path:
    """Write rows (dicts) as a CSV with a header; ``columns`` defaults to Adult's."""
    columns = columns if columns is not None else adult_header()
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_adult_csv(
    tmp_path: Path,
    n: int,
    name: str = "input.csv",
    edit: Callable[[list[Row]], list[Row] | None] | None = None,
) -> Path:
    """Write the header and the first ``n`` Adult rows; ``edit`` may change the rows first.

    ``edit`` receives the list of row dicts and either mutates it in place
    (returning ``None``) or returns a replacement list.
    """
    rows = adult_rows(n)
    if edit is not None:
        replaced = edit(rows)
        if replaced is not None:
            rows = replaced
    return write_rows(tmp_path, rows, name)


def demo_config() -> dict[str, Any]:
    """``conf/adult_hpk.yaml`` as a raw mapping (relative paths as in the file)."""
    return yaml.safe_load(ADULT_CONF.read_text(encoding="utf-8"))


def make_config(
    tmp_path: Path,
    input_path: Path | str,
    out: Path | None = None,
    sections: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The demo config with absolute hierarchy paths, reading ``input_path``.

    Defaults chosen for small, fast inputs: ``model: {hpk, h=2, p=2, k=4}``,
    ``max_block_rows: 200``, ``output.mode: error`` with ``output.path``
    ``tmp_path / "out"``, and no report (``report.enabled: false``). ``sections`` updates whole sections (a mapping
    value is merged into the section, anything else replaces it).
    """
    cfg = copy.deepcopy(demo_config())
    cfg["input"]["path"] = str(input_path)
    for attr in cfg["attributes"]:
        if "hierarchy" in attr:
            attr["hierarchy"] = str(HIERARCHIES / Path(attr["hierarchy"]).name)
    cfg["model"] = {"name": "hpk", "h": 2, "p": 2, "k": 4}
    cfg["partitioning"]["max_block_rows"] = 200
    cfg["output"]["path"] = str(out if out is not None else tmp_path / "out")
    cfg["output"]["mode"] = "error"
    cfg["report"] = {"enabled": False}  # its own tests turn it on (sections={"report": ...})
    return merge_sections(cfg, sections or {})


def merge_sections(cfg: dict[str, Any], sections: Mapping[str, Any]) -> dict[str, Any]:
    """Update a config mapping's sections in place (and return it).

    A mapping value is merged into its section, anything else replaces it. A model or
    algorithm with a name is one variant of a union (its keys depend on the name): it
    replaces the section; without a name it updates the current one.
    """
    for section, values in sections.items():
        renamed = (
            section in ("model", "algorithm") and isinstance(values, Mapping) and "name" in values
        )
        if isinstance(values, Mapping) and isinstance(cfg.get(section), dict) and not renamed:
            cfg[section].update(values)
        else:
            cfg[section] = values
    return cfg


def csv_input(path: Path | str) -> dict[str, Any]:
    """A config's ``input`` section: the CSV file at ``path``, with a header."""
    return {"format": "csv", "path": str(path), "options": {"header": True}}


def attributes_of(kinds: Mapping[str, str]) -> list[dict[str, Any]]:
    """A config's ``attributes`` section: one entry ``{name, kind}`` per column of ``kinds``."""
    return [{"name": name, "kind": kind} for name, kind in kinds.items()]


def write_config(tmp_path: Path, cfg: Mapping[str, Any], name: str = "job.yaml") -> Path:
    """Write a config mapping as YAML and return its path."""
    path = tmp_path / name
    path.write_text(yaml.safe_dump(dict(cfg), sort_keys=False), encoding="utf-8")
    return path


def cli_exit_code(
    tmp_path: Path,
    cfg: Mapping[str, Any],
    overrides: list[str] | None = None,
    key_file: str | None = None,
) -> int:
    """``sparkanon run`` of a config on the local engine: the exit code.

    The config is written as ``tmp_path / "job.yaml"`` (:func:`write_config`) and run by
    :func:`sparkanon.cli.run_command` with the ``key=value`` ``overrides`` and the run key
    of ``key_file`` (without one, ``SPARKANON_KEY`` or a key drawn for the run).
    """
    from sparkanon.cli import run_command
    from sparkanon.commands import RunKeySource

    path = str(write_config(tmp_path, cfg))
    return run_command(
        path, overrides or [], engine_name="local", key_source=RunKeySource(key_file)
    )


def attribute(cfg: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The ``attributes`` entry of column ``name`` (to edit it in place)."""
    return next(a for a in cfg["attributes"] if a["name"] == name)


def mark_as_output(folder: Path) -> Path:
    """Put sparkanon's output marker in ``folder`` (a fake earlier output it may overwrite)."""
    from sparkanon.safety import MARKER, marker_text

    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text(marker_text(), encoding="utf-8")
    return folder


def file_modes(root: Path) -> set[tuple[str, int]]:
    """The ``(kind, permission bits)`` found in a tree: ``("dir", 0o700)``, ``("file", ...)``."""
    import stat

    found = {("dir", stat.S_IMODE(root.stat().st_mode))}
    for p in root.rglob("*"):
        found.add(("dir" if p.is_dir() else "file", stat.S_IMODE(p.stat().st_mode)))
    return found


def leftovers(out: Path) -> list[Path]:
    """The output path (if it exists) and every ``<out>.__sparkanon_*`` sibling."""
    found = sorted(out.parent.glob(f"{out.name}.__sparkanon_*"))
    return ([out] if out.exists() else []) + found


def local_session_builder(app_name: str) -> Any:
    """The tests' SparkSession builder: ``local[2]``, UI off, 2 shuffle partitions.

    As sparkanon's own sessions (``sparkanon/engine/session.py``) it turns adaptive
    execution off (it would run every shuffle as a job of its own) and Arrow-based pandas
    UDFs on. Used by the session fixture of ``tests/conftest.py`` and by the streaming
    test's child process (``tests/_stream_child.py``).
    """
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.showConsoleProgress", "false")
    )


# ---------------------------------------------------------------------------
# Relational-transaction inputs: records with a set of items
# (tests/families/transaction/test_rt_job.py)
# ---------------------------------------------------------------------------

ITEMS = [f"{c}{i}" for c in "abcdefgh" for i in range(1, 5)]


def write_taxonomy(path: Path) -> Path:
    """Items a1..h4 under A..H under ``*`` (ARX format)."""
    path.write_text("".join(f"{it};{it[0].upper()};*\n" for it in ITEMS), encoding="utf-8")
    return path


def rt_frame(n: int, seed: int, max_items: int = 4) -> pd.DataFrame:
    """``n`` records: id, age, sex, zip and a ``|``-joined set of 0..max_items items."""
    rng = np.random.default_rng(seed)
    sets = [
        "|".join(rng.choice(ITEMS, size=rng.integers(0, max_items + 1), replace=False))
        for _ in range(n)
    ]
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "age": rng.integers(18, 80, n),
            "sex": rng.choice(["M", "F"], n),
            "zip": rng.integers(10000, 10100, n),
            "disease": sets,
        }
    )


def long_pairs(frame: pd.DataFrame) -> list[tuple[int, str]]:
    """The warehouse layout of ``frame``'s sets: one (id, item) pair per item."""
    return [
        (rid, item)
        for rid, s in zip(frame["id"], frame["disease"].fillna(""), strict=True)
        for item in s.split("|")
        if item
    ]


def rt_config(tmp_path: Path, data: Path, **changes: Any) -> dict[str, Any]:
    """A PAA job on ``data`` (CSV) with k = 4, l = 3, blocks of at most 300 records."""
    cfg: dict[str, Any] = {
        "input": csv_input(data),
        "attributes": [
            {"name": "id", "kind": "identifier"},
            {"name": "age", "kind": "continuous"},
            {"name": "sex", "kind": "nominal"},
            {"name": "zip", "kind": "continuous"},
        ],
        "sensitive": {
            "name": "disease",
            "kind": "itemset",
            "taxonomy": str(write_taxonomy(tmp_path / "tax.csv")),
        },
        "model": {"name": "kl_diversity", "k": 4, "l": 3},
        "algorithm": {"name": "paa"},
        "partitioning": {"max_block_rows": 300},
        "output": {"path": str(tmp_path / "out"), "publish": "anatomy"},
    }
    for key, value in changes.items():
        section, _, sub = key.partition("__")
        if sub:
            cfg[section] = {**cfg[section], sub: value}
        else:
            cfg[section] = value
    return cfg


def write_csv(tmp_path: Path, frame: pd.DataFrame, name: str = "rt.csv") -> Path:
    """Write a frame as a CSV with a header (no index)."""
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def rt_long_config(tmp_path: Path, frame: pd.DataFrame, **changes: Any) -> dict[str, Any]:
    """:func:`rt_config` on ``frame`` with its sets in the long layout (a second CSV).

    The records go to ``main.csv`` without the set column, the (id, item) pairs to
    ``items.csv``, joined by ``id``; ``changes`` as for :func:`rt_config`.
    """
    pairs = pd.DataFrame(long_pairs(frame), columns=["id", "item"])
    long = write_csv(tmp_path, pairs, "items.csv")
    return rt_config(
        tmp_path,
        write_csv(tmp_path, frame.drop(columns="disease"), "main.csv"),
        sensitive__layout="long",
        sensitive__long={
            "format": "csv",
            "path": str(long),
            "options": {"header": True},
            "key": "id",
            "item": "item",
        },
        **changes,
    )


def correlated_people(n: int, seed: int) -> pd.DataFrame:
    """Records with correlated numeric attributes (age and income), hours, two categories
    and a label: the condensation tests' data (a group's covariance has an axis to keep)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    return pd.DataFrame(
        {
            "age": age,
            "income_k": np.round(20 + 0.8 * age + rng.normal(0, 8, n), 2),
            "hours": np.round(rng.normal(40, 8, n).clip(1, 99), 1),
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]),
            "label": rng.choice(["no", "yes"], n, p=[0.7, 0.3]),
        }
    )


@contextlib.contextmanager
def traced_rows(column: str) -> Iterator[None]:
    """Runs inside may publish ``column``, a number of the input's rows, kept to trace them.

    A test that compares each published row with its own input row keeps such a column;
    the release checks rightly refuse it (it links every row to the input). Inside this
    block the runner's order checks (:func:`sparkanon.stages.release_checks.order_checks`)
    see the published tables without ``column``: every other column, the published row
    order and the key scan are still checked and still gate the commit.
    """
    from sparkanon import pipeline

    real = pipeline.order_checks

    def without_the_trace(engine: Any, tables: Mapping[str, Any], original: Any) -> Any:
        kept = {
            name: engine.select(table, [c for c, _ in engine.schema_of(table) if c != column])
            for name, table in tables.items()
        }
        return real(engine, kept, original)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline, "order_checks", without_the_trace)
        yield


def dead_pid() -> int:
    """The pid of a process of this host that has exited (a killed run's, for the lock tests)."""
    import subprocess
    import sys

    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(child.stdout)
