"""The commands, each once: run, backfill, validate, evaluate, reconstruct, init, stream.

The command line (:mod:`sparkanon.cli`) parses arguments, formats what a command returns
and calls one function here per command; :func:`sparkanon.anonymize` and
:func:`sparkanon.evaluate` call the same functions. What every command shares is here
once:

* :func:`build_engine` - the only place an engine is built from a command's options;
* :func:`read_table` - the one way an input is read (a catalog table or its partition,
  files, or other files read like the input;
  :func:`sparkanon.stages.read.read_table`);
* :func:`load_release` - the one loader of a committed release (its ``config.yaml``,
  ``metrics.json`` and, for a perturbed release, ``noise.json``);
* :func:`report_failure` - the one failure handler: it prints the error and returns the
  exit code (0 success, 2 invalid config or input, 3 the release failed privacy
  verification, 1 an internal error).

A command function raises; the command line turns what it raises into an exit code with
:func:`report_failure`. Log lines and errors go to stderr (:func:`configure_logging`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from sparkanon.errors import (
    EXIT_INTERNAL,
    EXIT_OK,
    ConfigError,
    InputError,
    SparkanonError,
    UserError,
)

if TYPE_CHECKING:
    from sparkanon.config import InputConfig, JobConfig
    from sparkanon.engine.base import Engine
    from sparkanon.evaluation.evaluate import Target
    from sparkanon.pipeline import JobResult
    from sparkanon.randomness import RunKey

log = logging.getLogger("sparkanon")


# --- where errors and log lines go ---------------------------------------------------------


class _StderrHandler(logging.StreamHandler):
    """A stream handler that looks up the error stream at every record.

    ``sys.stderr`` may be replaced after logging is configured (tests capture it); a
    handler that kept the old object would write to a closed stream.
    """

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102
        self.stream = error_stream()
        super().emit(record)


_jvm_stderr: Any = None
"""Under spark-submit, the JVM's stderr (set by :func:`configure_logging`)."""


def error_stream() -> Any:
    """Where errors and log lines go: ``sys.stderr``, or the JVM's under spark-submit."""
    return _jvm_stderr or sys.stderr


def configure_logging(quiet: bool, level: str | None = None) -> None:
    """Send sparkanon's log lines and errors to stderr, never to stdout.

    sparkanon's logger gets its own handler and does not propagate (the root logger
    may write elsewhere). Under ``spark-submit`` the Python driver's stderr is merged
    into stdout, so the handler writes through the JVM's stderr instead
    (:func:`sparkanon.engine.session.spark_submit_stderr`).

    Args:
        quiet: warnings and errors only.
        level: an explicit level (``DEBUG`` ... ``ERROR``), winning over ``quiet``.
    """
    global _jvm_stderr
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        from sparkanon.engine.session import spark_submit_stderr

        _jvm_stderr = spark_submit_stderr()
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(level or (logging.WARNING if quiet else logging.INFO))


def report_failure(exc: BaseException) -> int:
    """Print a command's failure on the error stream and return its exit code.

    A :class:`~sparkanon.errors.SparkanonError` prints its message and exits with its
    code (2 a config or input error, 3 a privacy violation); a worker environment
    failure (:func:`sparkanon.errors.worker_environment_error`) likewise; anything else is
    an internal error (exit 1), logged with its traceback.
    """
    if isinstance(exc, SparkanonError):
        print(f"sparkanon: error: {exc}", file=error_stream())
        return exc.exit_code
    from sparkanon.errors import worker_environment_error

    env_error = worker_environment_error(exc)
    if env_error is not None:
        print(f"sparkanon: error: {env_error}", file=error_stream())
        return env_error.exit_code
    log.error("internal error", exc_info=exc)
    print(f"sparkanon: internal error (please report): {exc!r}", file=error_stream())
    return EXIT_INTERNAL


# --- what the commands share ---------------------------------------------------------------


def build_engine(
    engine_name: str = "spark",
    config: JobConfig | None = None,
    master: str | None = None,
    remote: str | None = None,
    hive: bool = False,
    session: Any = None,
) -> Engine:
    """The engine a command runs on (a Spark session is created or reused).

    Args:
        engine_name: ``spark`` or ``local`` (pandas, one process).
        config: the job config (catalog tables turn Hive support on); ``None``: none.
        master: Spark master when no session exists and spark-submit set none.
        remote: a Spark Connect URL (``sc://host:port``) instead of a master.
        hive: turn the catalog on whatever the config says (``init`` on a table).
        session: a Spark session to run on (a DataFrame's), instead of the active or a
            new one.
    """
    if engine_name == "local":
        from sparkanon.engine.local import LocalEngine

        return LocalEngine()
    from sparkanon.engine.spark import SparkEngine

    if session is not None:
        return SparkEngine(session)
    if remote is not None:
        from sparkanon.engine.session import connect_session

        return SparkEngine(connect_session(remote))
    from sparkanon.engine.session import get_or_create_session

    uses_tables = hive or (
        config is not None and (config.input.table is not None or config.output.table is not None)
    )
    return SparkEngine(get_or_create_session(master=master, hive=uses_tables))


def read_table(engine: Engine, source: InputConfig, key: str | None = None) -> Any:
    """An input's rows: a catalog table (of its partition) or files; the one way to read.

    The runner's read stage, the evaluation and ``init`` read the same way
    (:func:`sparkanon.stages.read.read_table`, imported when a command runs, so the
    command line starts without the stages).

    Args:
        engine: the engine.
        source: the ``input`` section (a config's, or one ``init`` makes).
        key: the key or flag that named the table, for the error message.
    """
    from sparkanon.stages.read import read_table as read

    return read(engine, source, key=key)[0]


def with_partition(overrides: Sequence[str], partition: str | None) -> list[str]:
    """The overrides, plus ``input.partition`` from ``--partition`` (validated)."""
    if partition is None:
        return list(overrides)
    from sparkanon.config import parse_partition

    spec = parse_partition(partition)
    return [*overrides, "input.partition=" + json.dumps(spec)]


@dataclass(frozen=True)
class RunKeySource:
    """Where a run's key comes from: a user key file, else ``SPARKANON_KEY``, else a fresh key.

    Attributes:
        file: ``--key-file``, a user key file; ``None``: ``SPARKANON_KEY`` if set, else a
            key drawn for the run and never written.
        label: ``--key-label``, the label the release records for a user key (default: the
            key file's name).
    """

    file: str | None = None
    label: str | None = None

    def load(self) -> RunKey:
        """The run key (:meth:`sparkanon.randomness.RunKey.for_run`).

        Raises:
            ConfigError: a key file or ``SPARKANON_KEY`` that does not hold a key.
        """
        from sparkanon.randomness import RunKey

        return RunKey.for_run(self.file, self.label)


def check_command_writes(
    config_path: str, config: JobConfig, key_file: str | None, metrics_out: str | None
) -> None:
    """Refuse a write of the job on, around or inside what it reads.

    The writes are ``--metrics-out``, ``output.path`` and a stream's checkpoint; the reads
    the config file, the key file and the config's own (input, hierarchy and taxonomy
    files, long table, holdout, population, stream source). ``output.path`` is checked
    against the config's reads again, with the engine's own paths, before any work
    (:class:`sparkanon.stages.commit.PathTarget`).

    Raises:
        ConfigError: naming the write's flag or key, the read's, and both paths.
    """
    from sparkanon.safety import Location, check_reads_and_writes, job_reads

    reads = [*job_reads(config), Location("CONFIG", config_path, "the config file", local=True)]
    if key_file:
        reads.append(Location("--key-file", key_file, "the key file", local=True))
    writes = []
    if metrics_out:
        writes.append(Location("--metrics-out", metrics_out, local=True))
    if config.output.path:
        writes.append(Location("output.path", config.output.path))
    if config.stream is not None:
        writes.append(Location("stream.checkpoint", config.stream.checkpoint))
    check_reads_and_writes(reads, writes)


def write_metrics_file(path: str, text: str, permissions: str) -> None:
    """Write ``--metrics-out`` with the file mode of ``output.permissions``.

    Raises:
        ConfigError: the file cannot be written.
    """
    from sparkanon.safety import write_private_text

    try:
        write_private_text(path, text, permissions)
    except OSError as exc:
        raise ConfigError(f"--metrics-out {path}: cannot be written ({exc})") from exc


@dataclass(frozen=True)
class Release:
    """A committed release, as ``evaluate`` and ``reconstruct`` read it.

    Attributes:
        path: the output directory (a job's ``output.path``).
        config: its ``config.yaml``, loaded.
        metrics: its ``metrics.json``.
        table: the folder of its class table (``data``, or ``rt`` for an anatomy).
        noise: its ``noise.json`` (a perturbed release's declared noise; else empty).
    """

    path: str
    config: JobConfig
    metrics: Mapping[str, Any]
    table: str = "data"
    noise: Mapping[str, Any] = field(default_factory=dict)

    @property
    def data(self) -> str:
        """The class table's directory."""
        return f"{self.path}/{self.table}"


def load_release(output_dir: str, perturbed: bool = False) -> Release:
    """The committed release in ``output_dir``.

    Args:
        output_dir: a job's ``output.path``.
        perturbed: the release must declare its noise (``noise.json``, what
            ``reconstruct`` reads).

    Raises:
        UserError: not a committed release (no directory, no ``metrics.json``,
            ``config.yaml`` or ``data/``; with ``perturbed`` no ``noise.json`` or one
            without columns), or unreadable files.
    """
    from sparkanon.families import parse_config

    root = Path(output_dir)
    asked = "a perturbation job's output.path" if perturbed else "a job's output.path or a config"
    if not root.is_dir():
        raise UserError(f"{output_dir}: no such directory (give {asked})")
    names = ["config.yaml", "metrics.json"]
    if perturbed:
        noise_file = root / "noise.json"
        if not noise_file.is_file():
            raise UserError(
                f"{output_dir}: no noise.json, so not a perturbed release (reconstruction "
                "needs the noise a perturbation job declares beside its data)"
            )
        if not (root / "config.yaml").is_file() or not (root / "data").is_dir():
            raise UserError(f"{output_dir}: config.yaml or data/ missing (not a committed release)")
        names.append("noise.json")
    elif not (root / "metrics.json").is_file():
        raise UserError(
            f"{output_dir}: no metrics.json, so not a committed sparkanon output (evaluate "
            "reads a job's output.path, or a config to evaluate its input)"
        )
    elif not (root / "config.yaml").is_file():
        raise UserError(f"{output_dir}: no config.yaml beside metrics.json")
    texts = {}
    try:
        for name in names:
            if (root / name).is_file():
                text = (root / name).read_text(encoding="utf-8")
                texts[name] = yaml.safe_load(text) if name.endswith(".yaml") else json.loads(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise UserError(f"{output_dir}: unreadable {' or '.join(names)}: {exc}") from exc
    noise = texts.get("noise.json") or {}
    if perturbed and (not isinstance(noise, dict) or not noise):
        raise UserError(f"{root / 'noise.json'}: declares no perturbed column")
    config = parse_config(texts["config.yaml"], str(root / "config.yaml"))
    table = "rt" if (root / "rt").is_dir() else "data"
    return Release(str(root), config, texts.get("metrics.json") or {}, table, noise)


# --- the commands --------------------------------------------------------------------------


def load_job(
    config_path: str,
    overrides: Sequence[str] = (),
    partition: str | None = None,
    key_source: RunKeySource = RunKeySource(),
    metrics_out: str | None = None,
) -> tuple[JobConfig, RunKey]:
    """A job's config and key, checked before an engine starts.

    The key file is read first (a bad one fails before anything else), then the config
    with the overrides and ``--partition``, then the writes against the reads
    (:func:`check_command_writes`).

    Args:
        config_path: the YAML config.
        overrides: ``--set`` overrides.
        partition: ``--partition`` (``COL=VALUE[,COL=VALUE]``), or ``None``.
        key_source: where the run key comes from (default: ``SPARKANON_KEY``, else a
            fresh key).
        metrics_out: ``--metrics-out``, checked against the job's reads.

    Raises:
        UserError: a bad key file, config or partition, or an unsafe write.
    """
    from sparkanon.families import load_config

    key = key_source.load()
    config = load_config(config_path, with_partition(overrides, partition))
    check_command_writes(config_path, config, key_source.file, metrics_out)
    return config, key


def run(
    config_path: str, overrides: Sequence[str] = (), **options: Any
) -> tuple[JobConfig, JobResult]:
    """``sparkanon run``: load the job, run it and commit its release.

    Args:
        config_path: the YAML config.
        overrides: ``--set`` overrides.
        **options: :func:`load_job`'s (``partition``, ``key_source``, ``metrics_out``) and
            :func:`build_engine`'s (``engine_name``, ``master``, ``remote``).

    Returns:
        The loaded config and the job's result (its metrics).
    """
    from sparkanon.pipeline import run_job

    job, engine = _split(options)
    config, key = load_job(config_path, overrides, **job)
    return config, run_job(build_engine(config=config, **engine), config, key=key)


def _split(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A command's options: :func:`load_job`'s, and :func:`build_engine`'s."""
    engine = {k: v for k, v in options.items() if k in ("engine_name", "master", "remote")}
    return {k: v for k, v in options.items() if k not in engine}, engine


def anonymize(df: Any, config: JobConfig | str, write: bool = False) -> JobResult:
    """:func:`sparkanon.anonymize`: run a job on a DataFrame (its ``input`` ignored)."""
    import pandas as pd

    from sparkanon.families import load_config
    from sparkanon.pipeline import run_job

    cfg = load_config(config) if isinstance(config, str) else config
    if isinstance(df, pd.DataFrame):
        engine = build_engine("local")
    else:
        engine = build_engine("spark", session=df.sparkSession)
    return run_job(engine, cfg, table=df, commit=write)


def backfill_partitions(engine: Engine, config: JobConfig, first: str, last: str) -> list[dict]:
    """The input table's partitions from ``first`` to ``last``, oldest first.

    The range is over one partition column (``ds=2026-11-01`` to ``ds=2026-11-23``),
    compared as text (ISO dates sort as dates), both ends included.

    Raises:
        ConfigError: the ends name other or several columns, no ``input.table``, or a
            table partitioned by another column.
        InputError: no partition in the range.
    """
    from sparkanon.config import parse_partition

    lo, hi = parse_partition(first), parse_partition(last)
    if len(lo) != 1 or list(lo) != list(hi):
        raise ConfigError(
            f"--from {first!r} --to {last!r}: a backfill ranges over one partition "
            "column, the same in both (e.g. --from ds=2026-11-01 --to ds=2026-11-23)"
        )
    column = next(iter(lo))
    if config.input.table is None:
        raise ConfigError("backfill: input.table must name a partitioned catalog table")
    catalog = engine.catalog()
    info = catalog.require(config.input.table, "input.table")
    if [c for c, _ in info.partition_columns] != [column]:
        raise ConfigError(
            f"--from/--to: table {info.name} is partitioned by "
            f"{[c for c, _ in info.partition_columns] or 'nothing'}; a backfill ranges over "
            "its one partition column"
        )
    specs = sorted(
        (p for p in catalog.partitions(info.name) if lo[column] <= p[column] <= hi[column]),
        key=lambda p: p[column],
    )
    if not specs:
        raise InputError(
            f"--from {first} --to {last}: table {info.name} has no partition in that range"
        )
    return specs


@dataclass
class Backfill:
    """A backfill's outcome.

    Attributes:
        config: the config as loaded (without a partition).
        partitions: the partitions in the range.
        runs: one entry per partition run: its ``partition``, ``exit_code`` and, when
            committed, its row counts and ``verified``.
    """

    config: JobConfig
    partitions: list[dict]
    runs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The first failed partition's exit code (0: every partition run committed)."""
        return next((r["exit_code"] for r in self.runs if r["exit_code"] != EXIT_OK), EXIT_OK)

    def summary(self) -> dict[str, Any]:
        """Partitions in the range, run, committed, and the failed ones."""
        return {
            "partitions": len(self.partitions),
            "run": len(self.runs),
            "committed": sum(1 for r in self.runs if r["exit_code"] == EXIT_OK),
            "failed": [r["partition"] for r in self.runs if r["exit_code"] != EXIT_OK],
        }


def backfill(
    config_path: str,
    overrides: Sequence[str],
    first: str,
    last: str,
    keep_going: bool = False,
    on_run: Callable[[dict[str, Any]], None] = lambda entry: None,
    **options: Any,
) -> Backfill:
    """``sparkanon backfill``: the job on every input partition from ``first`` to ``last``.

    Each partition is a ``run --partition`` of its own, oldest first
    (:func:`backfill_partitions`), with a key of its own unless a user key is given
    (a key file or ``SPARKANON_KEY``), which every partition then uses. A partition's
    failure is reported (:func:`report_failure`) and ends the backfill unless
    ``keep_going``.

    Args:
        config_path: the YAML config.
        overrides: ``--set`` overrides.
        first: the first partition, ``COL=VALUE``.
        last: the last partition, ``COL=VALUE``.
        keep_going: run the remaining partitions after one fails.
        on_run: called with each partition's entry as soon as it ran.
        **options: as :func:`run` (no ``partition``).

    Raises:
        UserError: a bad key file, config or range, before any partition runs.
    """
    from sparkanon.config import partition_text
    from sparkanon.pipeline import run_job

    job, engine_options = _split(options)
    config, _ = load_job(config_path, overrides, **job)
    engine = build_engine(config=config, **engine_options)
    done = Backfill(config, backfill_partitions(engine, config, first, last))
    key_source = job.get("key_source", RunKeySource())
    for spec in done.partitions:
        text = partition_text(spec)
        entry: dict[str, Any] = {"partition": text}
        try:
            partition, key = load_job(config_path, overrides, text, key_source)
            metrics = run_job(engine, partition, key=key).metrics
            entry |= {
                "exit_code": EXIT_OK,
                "rows_in": metrics["rows_in"],
                "rows_out": metrics["rows_out"],
                "rows_suppressed": metrics["rows_suppressed"],
                "verified": metrics["verified"],
            }
        except Exception as exc:  # noqa: BLE001 - a partition's failure is its exit code
            entry["exit_code"] = report_failure(exc)
        done.runs.append(entry)
        on_run(entry)
        log.info("backfill: partition %s exit %d", text, entry["exit_code"])
        if entry["exit_code"] != EXIT_OK and not keep_going:
            break
    return done


def validate_job(engine: Engine, config: JobConfig) -> dict[str, Any]:
    """Check everything a run checks before it reads a row.

    What a run would refuse at its start is refused here, with the same error: the
    config itself (checked at load), the hierarchy and taxonomy files it names, the
    output (it exists under ``mode: error``, it would clobber the input, an output
    table partitioned otherwise), and the input's schema: the file or table exists, the
    partition exists, every configured column is present, a set column holds sets in
    its declared layout. No row is read beyond what the reader needs to learn the
    schema (a CSV header); the values themselves are checked by a run's profile stage.

    Args:
        engine: the engine the job would run on.
        config: the loaded (so already validated) config.

    Returns:
        What was checked: the input, its columns, the output, the files loaded.

    Raises:
        UserError: the first problem found (exit code 2).
    """
    from sparkanon.config import ItemsetConfig, partition_text
    from sparkanon.stages.commit import output_target
    from sparkanon.stages.read import check_columns, check_set_column, own_schema

    loaded = []
    for attribute in config.quasi_identifiers:
        if getattr(attribute, "hierarchy", None):
            attribute.known_kind()
            loaded.append(attribute.hierarchy)
    sens = config.sensitive
    if isinstance(sens, ItemsetConfig) and sens.taxonomy is not None:
        sens.load_tree()
        loaded.append(sens.taxonomy)
    output_target(engine, config, given_table=False).check()
    table = read_table(engine, config.input)
    schema = own_schema(engine, table, config.input.source)
    names = [n for n, _ in schema]
    check_columns(config, names)
    if isinstance(sens, ItemsetConfig):
        check_set_column(sens, dict(schema))
    return {
        "valid": True,
        "input": config.input.source,
        "partition": partition_text(config.input.partition) if config.input.partition else None,
        "input_columns": names,
        "output": config.output.target,
        "output_mode": config.output.mode,
        "files_loaded": loaded,
    }


def validate(config_path: str, overrides: Sequence[str] = (), **options: Any) -> dict[str, Any]:
    """``sparkanon validate``: a config, its key file and its input (:func:`validate_job`).

    Args:
        config_path: the YAML config.
        overrides: ``--set`` overrides.
        **options: as :func:`run` (``metrics_out`` aside).
    """
    job, engine = _split(options)
    config, _ = load_job(config_path, overrides, **job)
    return validate_job(build_engine(config=config, **engine), config)


def load_target(target: str, overrides: Sequence[str] = (), **options: Any) -> Target:
    """What ``evaluate`` reads: a committed release (a directory), or a YAML config's input.

    Args:
        target: a job's ``output.path``, or a ``.yaml`` / ``.yml`` config.
        overrides: ``key=value`` changes to a config target (as ``--set``).
        **options: the evaluation's options (:func:`sparkanon.evaluation.evaluate.settings_of`).

    Raises:
        UserError: not a release or a config, or an option out of its range (naming it).
    """
    from sparkanon.evaluation.evaluate import Target, settings_of
    from sparkanon.families import load_config

    if Path(target).is_file() and target.endswith((".yaml", ".yml")):
        config = load_config(target, list(overrides))
        return Target(config, settings_of(config, **options))
    release = load_release(target)
    settings = settings_of(release.config, **options)
    return Target(release.config, settings, target, release.metrics, release.table)


def evaluate(
    target: str,
    overrides: Sequence[str] = (),
    engine_name: str = "spark",
    master: str | None = None,
    out: str | None = None,
    write: bool = True,
    **options: Any,
) -> tuple[dict[str, Any], list[str]]:
    """``sparkanon evaluate``: the risk, attacks and utility of a release or an input.

    The target and the options are checked before an engine starts; the files written
    may not be, hold or lie inside what the evaluation reads.

    Args:
        target: a job's ``output.path``, or a YAML config (its input alone).
        overrides: ``key=value`` changes to a config target (as ``--set``).
        engine_name: ``spark`` or ``local``.
        master: Spark master when no session exists.
        out: where ``evaluation.json`` and ``report.html`` go (default: the output
            directory; for a config, ``evaluation/<config name>``).
        write: write the two files; otherwise only return the evaluation.
        **options: the evaluation's options (:func:`load_target`).

    Returns:
        The evaluation (what ``evaluation.json`` holds) and the files written.
    """
    from sparkanon.evaluation.evaluate import (
        check_evaluation_writes,
        default_out,
        evaluate_target,
        write_evaluation,
    )

    loaded = load_target(target, overrides, **options)  # before Spark starts
    folder = out or default_out(target)
    engine = build_engine(engine_name, loaded.config, master)
    if write:
        check_evaluation_writes(engine, target, loaded, folder)
    result = evaluate_target(engine, loaded)
    files = []
    if write:
        files = write_evaluation(engine, result, folder, loaded.config.output.permissions)
    return result, files


def reconstruct_release(
    engine: Engine,
    release: Release,
    bins: int,
    integer_bins: bool = False,
    by: str | None = None,
) -> dict[str, Any]:
    """A perturbed release's table, read and reconstructed.

    :func:`sparkanon.evaluation.reconstruct.reconstruct_table` over its ``data/``.
    """
    from sparkanon.evaluation.reconstruct import reconstruct_table

    table = engine.read_table(release.data, release.config.output.format)
    return reconstruct_table(engine, table, release.noise, release.path, bins, integer_bins, by)


def reconstruct(
    output_dir: str,
    bins: int,
    integer_bins: bool = False,
    by: str | None = None,
    out: str | None = None,
    engine_name: str = "spark",
    master: str | None = None,
) -> tuple[dict[str, Any], str, list[str]]:
    """``sparkanon reconstruct``: a committed perturbed release's distributions.

    Writes ``reconstruction.json``, ``distributions.csv`` and one plot per column to
    ``out`` (default ``OUTPUT_DIR/reconstruction``), which may not be, hold or lie inside
    the release.

    Returns:
        The reconstruction, the folder written and the files written there.
    """
    from sparkanon.evaluation.reconstruct import write_reconstruction
    from sparkanon.safety import Location, check_reads_and_writes

    release = load_release(output_dir, perturbed=True)
    target = out or str(Path(output_dir) / "reconstruction")
    check_reads_and_writes(
        [
            Location("OUTPUT_DIR", f"{output_dir}/{name}", "the release", local=True)
            for name in ("data", "noise.json", "config.yaml", "metrics.json")
        ],
        [Location("--out", target, local=True)],
    )
    engine = build_engine(engine_name, None, master)
    result = reconstruct_release(engine, release, bins, integer_bins, by)
    permissions = release.config.output.permissions
    return result, target, write_reconstruction(result, target, permissions)


def init(
    source: str,
    out: str | None = None,
    input_format: str | None = None,
    output_path: str | None = None,
    sensitive: str | None = None,
    quasi_identifiers: Sequence[str] | None = None,
    engine_name: str = "spark",
    master: str | None = None,
) -> str:
    """``sparkanon init``: profile a table and write (or return) a starter config.

    ``out`` may not be, contain or lie inside the files profiled; it is written readable
    by its owner only. A catalog table runs on Spark whatever ``engine_name`` says.

    Returns:
        The config's YAML text (also written to ``out`` when given).

    Raises:
        ConfigError: ``out`` is unsafe or cannot be written.
        UserError: the table cannot be read or profiled.
    """
    from sparkanon.safety import Location, check_reads_and_writes, write_private_text
    from sparkanon.starter import is_table_name, starter_config

    table = is_table_name(source)
    if out is not None and not table:
        check_reads_and_writes(
            [Location("TABLE_OR_PATH", source, "the table init profiles")],
            [Location("--out", out, local=True)],
        )
    engine = build_engine("spark" if table else engine_name, None, master, hive=table)
    text = starter_config(
        engine,
        source,
        fmt=input_format,
        output_path=output_path,
        sensitive=sensitive,
        quasi_identifiers=quasi_identifiers,
    )
    if out is not None:
        try:
            write_private_text(out, text)
        except OSError as exc:
            raise ConfigError(f"--out {out}: cannot be written ({exc})") from exc
    return text


def stream(
    config_path: str,
    overrides: Sequence[str] = (),
    master: str | None = None,
    key_source: RunKeySource = RunKeySource(),
) -> dict[str, Any]:
    """``sparkanon stream``: run a condensation stream; its report.

    The key file, the config and the stream's own settings are checked before a Spark
    session starts (:func:`load_job`, then the stream's rules).
    """
    from sparkanon.families.synthesis.stream import run_stream, stream_problems

    config, key = load_job(config_path, overrides, key_source=key_source)
    stream_problems(config)
    return run_stream(build_engine("spark", config, master), config, key=key)


def key(path: str) -> None:
    """``sparkanon key``: write a new key file, never over an existing one.

    Raises:
        ConfigError: the file exists or its folder does not (naming why).
    """
    from sparkanon.randomness import write_key_file

    try:
        write_key_file(path)
    except OSError as exc:
        raise ConfigError(f"key file {path}: cannot be written ({exc.strerror})") from exc
