"""Shared helpers of the experiments and benchmarks (``experiments/*.py``).

Not part of the sparkanon package: the benchmarks only call its public entry points
(``sparkanon run``, ``load_config``/``run_job``/``LocalEngine``). The package is edited
(and mutation-tested in place) while benchmarks run, so each benchmark imports it from a
frozen copy (:func:`snapshot_package`) and stamps every result with ``code_sha``, a hash
of that copy's sources, and with the machine (:func:`provenance`): two results are
comparable when their ``code_sha`` matches.
"""

from __future__ import annotations

import csv
import datetime as _dt
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO_ROOT / "docs" / "bench"
ADULT_CSV = REPO_ROOT / "data" / "adult" / "adult.csv"
DEMO_CONFIG = REPO_ROOT / "conf" / "adult_hpk.yaml"


def _run(cmd: Sequence[str]) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO_ROOT)
    except OSError as exc:
        return f"unavailable ({exc})"
    return (done.stdout + done.stderr).strip()


def code_sha(root: Path = REPO_ROOT) -> str:
    """Short SHA-256 of every ``ROOT/sparkanon/**/*.py`` (relative path and content)."""
    digest = hashlib.sha256()
    for path in sorted((root / "sparkanon").rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


SNAPSHOT_ROOT = Path(tempfile.gettempdir()) / "sparkanon_bench_snapshots"


def snapshot_package(sha: str | None = None) -> tuple[Path, str]:
    """Copy ``sparkanon/`` (sources only) to a directory named by its hash.

    The work tree is edited (and mutation-tested in place) while benchmarks run; a
    benchmark imports sparkanon from this frozen copy instead (``sys.path[0]`` in
    process, ``PYTHONPATH`` for subprocesses and the Spark Python workers they start),
    so one run sees one version of the code, the one ``code_sha`` names.

    Args:
        sha: reuse the snapshot of this hash (made by an earlier run; ``--code SHA``),
            so that several benchmarks run the same code; ``None`` snapshots the tree.

    Returns:
        The directory to put first on the import path, and the code hash.
    """
    if sha is not None:
        dest = SNAPSHOT_ROOT / sha
        if not (dest / "sparkanon").is_dir() or code_sha(dest) != sha:
            raise RuntimeError(f"no intact snapshot {dest}; run once without --code to make one")
        return dest, sha
    for _ in range(5):
        sha = code_sha()
        dest = SNAPSHOT_ROOT / sha
        if (dest / "sparkanon").is_dir() and code_sha(dest) == sha:
            return dest, sha
        tmp = SNAPSHOT_ROOT / f".{sha}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(
            REPO_ROOT / "sparkanon",
            tmp / "sparkanon",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        if code_sha(tmp) == sha:  # the tree did not change while it was copied
            state = git_state()
            if code_sha() == sha:  # nor while git was asked about it
                (tmp / "snapshot.json").write_text(json.dumps(state) + "\n", encoding="utf-8")
                shutil.rmtree(dest, ignore_errors=True)
                tmp.rename(dest)
                return dest, sha
        shutil.rmtree(tmp, ignore_errors=True)
    raise RuntimeError("sparkanon/ kept changing while it was copied; try again")


def use_snapshot(sha: str | None = None) -> str:
    """Import sparkanon from a snapshot in this process; return its code hash."""
    if "sparkanon" in sys.modules:
        raise RuntimeError("sparkanon was imported before the snapshot was put on sys.path")
    dest, sha = snapshot_package(sha)
    sys.path.insert(0, str(dest))
    import sparkanon

    if Path(sparkanon.__file__).resolve().parent != (dest / "sparkanon").resolve():
        raise RuntimeError(f"sparkanon imported from {sparkanon.__file__}, not the snapshot")
    return sha


def git_state() -> dict[str, Any]:
    """Commit of the work tree and whether ``sparkanon/`` has uncommitted changes."""
    head = _run(["git", "rev-parse", "--short", "HEAD"])
    dirty = bool(_run(["git", "status", "--porcelain", "--", "sparkanon"]))
    return {"git_head": head, "sparkanon_dirty": dirty}


def machine() -> dict[str, Any]:
    """The machine facts the docs quote (each from a command or the standard library)."""
    try:
        import pyspark

        pyspark_version = pyspark.__version__
    except ImportError:
        pyspark_version = "not installed"
    mem_kib = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    except OSError:
        pass
    java = _run(["java", "-version"]).splitlines()
    return {
        "nproc": os.cpu_count(),
        "mem_total_gib": round(mem_kib / 2**20, 1),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "pyspark": pyspark_version,
        "java": java[0] if java else "unavailable",
        "platform": platform.platform(),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def provenance(sha: str) -> dict[str, Any]:
    """Time stamp, code (``sha`` from :func:`snapshot_package`) and machine of a run.

    ``git_head`` and ``sparkanon_dirty`` describe the work tree when the snapshot was
    taken: with ``sparkanon_dirty`` false, the code is that commit's ``sparkanon/``.
    """
    state_file = SNAPSHOT_ROOT / sha / "snapshot.json"
    state = json.loads(state_file.read_text()) if state_file.is_file() else {}
    return {
        "utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "code_sha": sha,
        "git_head": state.get("git_head"),
        "sparkanon_dirty": state.get("sparkanon_dirty"),
        **machine(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def command_line() -> str:
    """How this script was started, as one shell line (for the docs)."""
    script = Path(sys.argv[0])
    try:
        script = script.resolve().relative_to(REPO_ROOT)
    except ValueError:
        pass
    return " ".join(["python", str(script), *sys.argv[1:]])


def head_csv(source: Path, rows: int, out: Path) -> Path:
    """Write the header and the first ``rows`` data rows of ``source`` to ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with source.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i > rows:
                break
            dst.write(line)
    return out


def write_csv(path: Path, rows: Iterable[Mapping[str, Any]], fields: Sequence[str]) -> None:
    """Write ``rows`` (dicts) to ``path`` with the columns ``fields``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def append_jsonl(path: Path, record: Mapping[str, Any]) -> None:
    """Append one JSON object as a line to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=False) + "\n")


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")


def add_run_arguments(parser: Any) -> None:
    """The options every experiment script shares: output folder, code snapshot, report."""
    parser.add_argument("--out-dir", type=Path, default=BENCH_DIR)
    parser.add_argument("--code", help="code_sha of an existing snapshot to run (default: now)")
    parser.add_argument(
        "--in-place", action="store_true", help="import sparkanon as installed (no snapshot)"
    )
    parser.add_argument("--report", action="store_true", help="print Markdown tables and exit")


def use_code(code: str | None = None, in_place: bool = False) -> tuple[str, dict[str, Any]]:
    """Choose the sparkanon a local-engine experiment imports; return its hash and provenance.

    Args:
        code: ``code_sha`` of an existing snapshot to run (``--code``); ``None``
            snapshots the work tree now (:func:`use_snapshot`).
        in_place: import sparkanon from wherever Python finds it (the tests, which have
            imported it already); ``code_sha`` is then that of the work tree, and the
            provenance says ``in_place: true`` (not tied to a frozen copy).

    Returns:
        The code hash and :func:`provenance` (plus ``in_place``).
    """
    if in_place:
        sha = code_sha()
        return sha, {**provenance(sha), **git_state(), "in_place": True}
    sha = use_snapshot(code)
    return sha, {**provenance(sha), "in_place": False}


def run_local(raw: Mapping[str, Any], source: str = "<experiment>") -> dict[str, Any]:
    """Validate a config mapping and run it on the local engine without committing.

    Args:
        raw: the config as a mapping (a YAML file's content, modified in Python).
        source: where it came from, for error messages.

    Returns:
        The job's metrics plus ``wall_seconds`` and ``cpu_seconds`` (of ``run_job``, in
        this process: the local engine runs in it).
    """
    import time

    from sparkanon.engine.local import LocalEngine
    from sparkanon.families import parse_config
    from sparkanon.pipeline import run_job

    config = parse_config(raw, source=source)
    start, cpu = time.perf_counter(), time.process_time()
    metrics = dict(run_job(LocalEngine(), config, commit=False).metrics)
    metrics["wall_seconds"] = time.perf_counter() - start
    metrics["cpu_seconds"] = time.process_time() - cpu
    return metrics


class _FirstBlockError(Exception):
    """Raised by the recording cluster stage once it holds the first block."""


def first_block(conf: Path, rows: int, tmp: Path) -> tuple[Any, Any, int]:
    """``(frame, context, block id)`` of the first ``rows`` Adult rows as one block.

    Runs the job of ``conf`` on the local engine (nothing committed, from the repository
    root for the config's relative hierarchy paths) on the first ``rows`` rows of
    :data:`ADULT_CSV`, with ``max_block_rows`` equal to ``rows``, up to its cluster stage,
    and stops it at the first block, which is the encoded input whole.

    Args:
        conf: The job config (its input and output paths are overridden).
        rows: How many Adult rows the block holds.
        tmp: A folder for the sample CSV and the output path.
    """
    import sparkanon.per_block.cluster as cluster_stage
    from sparkanon.engine.local import LocalEngine
    from sparkanon.families import load_config
    from sparkanon.pipeline import run_job

    lines = ADULT_CSV.read_text(encoding="utf-8").splitlines()[: rows + 1]
    sample = tmp / f"adult_{rows}.csv"
    sample.write_text("\n".join(lines) + "\n", encoding="utf-8")
    seen: list[tuple[Any, Any, int]] = []
    original = cluster_stage.cluster_block_counted

    def record(frame, ctx, algorithm, seed, block_id):  # noqa: ANN001, ANN202
        seen.append((frame.copy(), ctx, int(block_id)))
        raise _FirstBlockError

    overrides = [
        f"input.path={sample}",
        f"output.path={tmp / 'out'}",
        f"partitioning.max_block_rows={rows}",
    ]
    cluster_stage.cluster_block_counted = record
    here = Path.cwd()
    os.chdir(REPO_ROOT)
    try:
        run_job(LocalEngine(), load_config(conf, overrides), commit=False)
    except _FirstBlockError:
        pass
    finally:
        os.chdir(here)
        cluster_stage.cluster_block_counted = original
    return seen[0]
