"""The ``sparkanon`` command line: ``run``, ``backfill``, ``validate``, ``evaluate`` and ``init``.

``sparkanon run CONFIG [--set key=value ...] [--partition ds=2026-11-23]``,
``sparkanon backfill CONFIG --from ds=2026-11-01 --to ds=2026-11-23``,
``sparkanon validate CONFIG``, ``sparkanon --version``; and
``sparkanon reconstruct OUTPUT_DIR [--bins K] [--integer-bins] [--by COLUMN] [--out DIR]``,
the distributions of a committed perturbed release reconstructed from its published values;
``sparkanon evaluate OUTPUT_DIR|CONFIG [--sampling-fraction F] [--holdout PATH] ...``, the
re-identification risk, attacks and utility of a release (or an input) with an HTML report;
``sparkanon init TABLE_OR_PATH [--out FILE]``, a commented starter config from a table's
profile.

Exit codes: 0 success, 2 invalid config or input (nothing written), 3 the
published table failed privacy verification (nothing written), 1 an internal
error (a bug in sparkanon).

Streams: log lines and errors go to stderr (under ``spark-submit``, which merges the
Python driver's stderr into its stdout, through the JVM's stderr); the metrics go to
stdout only (as JSON when
stdout is a file or a pipe, so ``sparkanon run CONFIG > metrics.json`` works; as a
readable table when it is a terminal; ``--format`` chooses) and, with
``--metrics-out FILE``, to that file as JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sparkanon._version import __version__
from sparkanon.errors import EXIT_INTERNAL, EXIT_OK, ConfigError, InputError, SparkanonError

log = logging.getLogger("sparkanon")

METRIC_GLOSSARY = {
    "rows_in": "rows read from the input",
    "rows_out": "rows published",
    "rows_suppressed": "rows not published (malformed, missing or invalid values, unplaced)",
    "classes": "equivalence classes the algorithm formed",
    "published_classes": (
        "groups of rows with identical published quasi-identifiers (classes that "
        "publish the same values merge into one group; the model is verified on these)"
    ),
    "EPP": "entropy privacy protection: mean level entropy HEC per class (Shi et al. 2024, eq. 22)",
    "R_IL": "information loss rate: summed class InfoLoss over the rows (Shi et al. 2024, eq. 23)",
    "AVG_IL": "mean over classes of IL / (class size x QIs) (Yang et al. 2014, eq. 17-18)",
    "AVG_Ent": "mean base-2 entropy of the sensitive values per class (Yang et al. 2014, eq. 19)",
    "CAVG": "(rows / classes) / k; 1 is the smallest possible (Yang et al. 2014, eq. 20)",
    "NCP": (
        "mean normalised certainty penalty per class, in [0, weights] (Xu et al. 2006); "
        "published rows only"
    ),
    "GCP": (
        "global certainty penalty in percent of the whole domain (Ghinita et al. 2007); "
        "published rows only"
    ),
    "NCP_published": "weighted mean NCP over the published rows (full-domain)",
    "item_ncp": "NCP of the published item occurrences (He and Naughton 2009); published only",
    "loss_with_suppressed": (
        "the losses above again, each suppressed row (or its items) counted as fully lost"
    ),
    "residual_class": (
        "rows no class could take, kept in one residual class (t-closeness: not suppressed)"
    ),
}
"""One line per headline metric, printed by ``--format table``."""


def _add_job_arguments(cmd: argparse.ArgumentParser) -> None:
    """The arguments every command that loads a job config takes."""
    cmd.add_argument("config", help="YAML job config")
    cmd.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (repeatable), e.g. --set model.k=10; a text key takes "
        "the value as typed (--set sensitive.separator=|), others read it as YAML",
    )
    cmd.add_argument(
        "--engine",
        choices=["spark", "local"],
        default="spark",
        help="spark (default; local mode unless spark-submit set a master) or local "
        "(pandas, one process, for small data)",
    )
    cmd.add_argument(
        "--master",
        default=None,
        help="Spark master when not started by spark-submit (default local[*])",
    )
    cmd.add_argument(
        "--remote",
        default=None,
        metavar="sc://HOST:PORT",
        help="run through a Spark Connect server instead of a local or cluster master",
    )
    _add_key_arguments(cmd)
    _add_logging_arguments(cmd)


def _add_key_arguments(cmd: argparse.ArgumentParser) -> None:
    """``--key-file`` and ``--key-label``: a user key for the run's protective draws."""
    cmd.add_argument(
        "--key-file",
        default=None,
        metavar="FILE",
        help="draw noise, synthetic records and release order with this key (written by "
        "'sparkanon key FILE'), to reproduce a release; default: SPARKANON_KEY if set, else "
        "a fresh key per run that is never written",
    )
    cmd.add_argument(
        "--key-label",
        default=None,
        metavar="TEXT",
        help="the label the release records for a user key (default: the key file's name)",
    )


def _add_logging_arguments(cmd: argparse.ArgumentParser) -> None:
    """``--log-level`` and ``--quiet``, as every command that runs Spark takes them."""
    cmd.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        default=None,
        help="sparkanon's log level (default INFO; --quiet is WARNING)",
    )
    cmd.add_argument("--quiet", action="store_true", help="log warnings and errors only")


def _add_output_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--format",
        choices=["auto", "json", "table"],
        default="auto",
        help="how to print the metrics on stdout: json, a readable table, or auto "
        "(table on a terminal, json otherwise)",
    )
    cmd.add_argument("--metrics-out", default=None, metavar="FILE", help="also write metrics JSON")


DESCRIPTION = (
    "Anonymize a table with the job a YAML config describes: run it, backfill it over "
    "partitions, or validate the config and the input's schema. Exit codes: 0 success, "
    "2 invalid config or input (nothing written), 3 the release failed privacy "
    "verification (nothing written), 1 an internal error."
)
"""What ``sparkanon --help`` says: plain text (help is read on a terminal, not rendered)."""


def _subcommand(sub: Any, name: str, text: str) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` starts with the same one line the command list shows."""
    return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sparkanon", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"sparkanon {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = _subcommand(sub, "run", "run an anonymization job")
    _add_job_arguments(run)
    run.add_argument(
        "--partition",
        default=None,
        metavar="COL=VALUE[,COL=VALUE]",
        help="anonymize one partition of the input table into the same partition of the "
        "output table (sets input.partition)",
    )
    _add_output_arguments(run)
    backfill = _subcommand(
        sub, "backfill", "run the job on every input partition in a range, oldest first"
    )
    _add_job_arguments(backfill)
    backfill.add_argument(
        "--from", dest="first", required=True, metavar="COL=VALUE", help="first partition"
    )
    backfill.add_argument(
        "--to", dest="last", required=True, metavar="COL=VALUE", help="last partition"
    )
    backfill.add_argument(
        "--keep-going",
        action="store_true",
        help="run the remaining partitions after one fails (default: stop at the first)",
    )
    validate = _subcommand(
        sub, "validate", "check a config and its input's schema without running the job"
    )
    _add_job_arguments(validate)
    validate.add_argument(
        "--partition",
        default=None,
        metavar="COL=VALUE[,COL=VALUE]",
        help="check that this partition of the input table exists (sets input.partition)",
    )
    key = _subcommand(
        sub,
        "key",
        "write a new random key file (owner-only), for runs that must reproduce a release "
        "(--key-file)",
    )
    key.add_argument("path", metavar="FILE", help="the key file to create (never overwritten)")
    _add_reconstruct_parser(sub)
    _add_evaluate_parser(sub)
    _add_init_parser(sub)
    stream = _subcommand(
        sub,
        "stream",
        "run a condensation stream: the config's input seeds the groups, files arriving in "
        "stream.source join them, and due groups release synthetic records to output.path "
        "(Aggarwal and Yu 2004's dynamic condensation)",
    )
    stream.add_argument("config", metavar="CONFIG", help="the job's YAML config (with stream:)")
    stream.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (dotted path, YAML value), e.g. stream.trigger='10 seconds'",
    )
    stream.add_argument(
        "--master", default=None, help="Spark master when not started by spark-submit"
    )
    _add_key_arguments(stream)
    _add_logging_arguments(stream)
    return parser


def _add_engine_arguments(cmd: argparse.ArgumentParser) -> None:
    """``--engine``, ``--master`` and the logging options of a command over an output."""
    cmd.add_argument(
        "--engine",
        choices=["spark", "local"],
        default="spark",
        help="spark (default) or local (pandas, one process, for small data)",
    )
    cmd.add_argument("--master", default=None, help="Spark master when not started by spark-submit")
    _add_logging_arguments(cmd)


def _add_reconstruct_parser(sub: Any) -> None:
    """``sparkanon reconstruct OUTPUT_DIR ...``."""
    from sparkanon.evaluation.reconstruct import DEFAULT_BINS

    cmd = _subcommand(
        sub,
        "reconstruct",
        "reconstruct the original distributions of a committed perturbed release "
        "(Agrawal and Srikant 2000's Bayes update, EM, and for categorical columns the "
        "iterative Bayesian update and the inversion estimate)",
    )
    cmd.add_argument("output_dir", metavar="OUTPUT_DIR", help="a perturbation job's output.path")
    cmd.add_argument(
        "--bins",
        type=int,
        default=DEFAULT_BINS,
        metavar="K",
        help=f"equal-width x-bins per numeric column (default {DEFAULT_BINS}, at least 2)",
    )
    cmd.add_argument(
        "--integer-bins",
        action="store_true",
        help="bins of whole integers (edges at k - 0.5) for integer-valued numeric columns, "
        "instead of --bins",
    )
    cmd.add_argument(
        "--by",
        default=None,
        metavar="COLUMN",
        help="also one distribution per value of this unperturbed column (e.g. the class label)",
    )
    cmd.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="where to write reconstruction.json, distributions.csv and the plots "
        "(default OUTPUT_DIR/reconstruction)",
    )
    _add_engine_arguments(cmd)


def _add_init_parser(sub: Any) -> None:
    """``sparkanon init TABLE_OR_PATH ...``."""
    cmd = _subcommand(
        sub,
        "init",
        "profile a table (files or a catalog table) and write a commented starter config: "
        "each column's kind, likely direct identifiers, quasi-identifiers, a model and its "
        "feasibility",
    )
    cmd.add_argument(
        "source", metavar="TABLE_OR_PATH", help="a file or folder, or a catalog table db.name"
    )
    cmd.add_argument(
        "--format",
        dest="input_format",
        choices=["csv", "parquet", "orc"],
        default=None,
        help="the files' format (default: from their suffix)",
    )
    cmd.add_argument(
        "--out", default=None, metavar="FILE", help="write the config here (default: stdout)"
    )
    cmd.add_argument(
        "--output-path",
        default=None,
        metavar="DIR",
        help="the config's output.path (default out/<name>_anonymized)",
    )
    cmd.add_argument("--sensitive", default=None, metavar="COLUMN", help="the sensitive attribute")
    cmd.add_argument(
        "--quasi-identifiers",
        default=None,
        metavar="A,B,C",
        help="the quasi-identifiers (default: suggested from names and kinds)",
    )
    _add_engine_arguments(cmd)


def init_command(args: argparse.Namespace) -> int:
    """Profile a table and write a starter config (exit 0, or 2 naming what is wrong).

    ``--out`` may not be, contain or lie inside the files profiled; it is written
    readable by its owner only.
    """
    from sparkanon.safety import Location, check_reads_and_writes, write_private_text
    from sparkanon.starter import is_table_name, starter_config

    qis = args.quasi_identifiers
    try:
        if args.out is not None and not is_table_name(args.source):
            check_reads_and_writes(
                [Location("TABLE_OR_PATH", args.source, "the table init profiles")],
                [Location("--out", args.out, local=True)],
            )
        engine_name = "spark" if is_table_name(args.source) else args.engine
        engine = make_engine(engine_name, None, args.master, hive=is_table_name(args.source))
        text = starter_config(
            engine,
            args.source,
            fmt=args.input_format,
            output_path=args.output_path,
            sensitive=args.sensitive,
            quasi_identifiers=[q.strip() for q in qis.split(",") if q.strip()] if qis else None,
        )
    except Exception as exc:  # noqa: BLE001
        return _report_failure(exc)
    if args.out is None:
        sys.stdout.write(text)
    else:
        try:
            write_private_text(args.out, text)
        except OSError as exc:
            return _report_failure(ConfigError(f"--out {args.out}: cannot be written ({exc})"))
        print(json.dumps({"config": args.out}))
    return EXIT_OK


def _add_evaluate_parser(sub: Any) -> None:
    """``sparkanon evaluate TARGET ...``."""
    cmd = _subcommand(
        sub,
        "evaluate",
        "measure re-identification risk, attacks and utility of a committed release (its "
        "output directory, beside its input) or of a config's raw input, and write "
        "evaluation.json and report.html",
    )
    cmd.add_argument(
        "target", metavar="OUTPUT_DIR|CONFIG", help="a job's output.path, or a YAML config"
    )
    cmd.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a key of a CONFIG target (as sparkanon run --set)",
    )
    cmd.add_argument(
        "--sampling-fraction",
        type=float,
        default=None,
        metavar="F",
        help="the input's share of the population, in (0, 1] (default: "
        "report.sampling_fraction of the config, 1)",
    )
    cmd.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="T",
        help="a record whose risk exceeds T is at risk (default 0.2)",
    )
    cmd.add_argument(
        "--suda-max-size",
        type=int,
        default=None,
        metavar="N",
        help="SUDA2's largest quasi-identifier subset (0: no SUDA2)",
    )
    cmd.add_argument(
        "--label", default=None, metavar="COLUMN", help="the column a classifier predicts (utility)"
    )
    cmd.add_argument(
        "--holdout",
        default=None,
        metavar="PATH",
        help="held-out original rows, read like the input: the classifier's "
        "test rows and the attacks' control set",
    )
    cmd.add_argument(
        "--attacks",
        type=int,
        default=None,
        metavar="N",
        help="targets per singling-out, linkability and inference attack",
    )
    cmd.add_argument(
        "--bins",
        type=int,
        default=None,
        metavar="K",
        help="bins of a numeric column's distribution (utility)",
    )
    cmd.add_argument(
        "--population",
        default=None,
        metavar="PATH",
        help="the population table the input was sampled from, read like the input: the "
        "journalist and marketer risks of the input use its class sizes",
    )
    cmd.add_argument(
        "--weight",
        default=None,
        metavar="COLUMN",
        help="a column of sampling weights for sdcMicro's individual risk (a keep column "
        "of the config)",
    )
    cmd.add_argument(
        "--quasi-identifiers",
        default=None,
        metavar="A,B,...",
        help="the columns the attacker knows (default: the config's)",
    )
    cmd.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="where evaluation.json and report.html go (default: the output "
        "directory; for a config, evaluation/<config name>)",
    )
    _add_engine_arguments(cmd)


TABLE_ITEMS = 3
"""``--format table`` shows at most this many items of a list (and how many there are)."""

TABLE_KEYS = 12
"""... at most this many entries of a mapping, or items of a list inside a list."""

TABLE_TEXT = 200
"""... and at most this many characters of a text value."""


def _number(value: float) -> str:
    """A figure for a person: 4 significant digits, thousands separated, no exponent."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if value != value or value in (float("inf"), float("-inf")):  # NaN, infinities
        return str(value).replace("inf", "infinite").replace("nan", "not a number")
    if value == 0 or abs(value) >= 1e4:
        return f"{value:,.0f}"
    if abs(value) < 1e-4:
        return f"{value:.1e}"
    return f"{value:,.4g}"


def _more(shown: int, total: int) -> str:
    return f", ... ({total} in all)" if total > shown else ""


def brief(value: Any, nested: bool = False) -> str:
    """One value of the metrics on one line, for a person: never a Python repr.

    Numbers are rounded (:func:`_number`), ``True``/``None`` read ``yes``/``none``, a list
    shows its first :data:`TABLE_ITEMS` items (:data:`TABLE_KEYS` inside another list, as
    a lattice node's levels) and its length, a mapping its first :data:`TABLE_KEYS`
    entries as ``key value``; a list or mapping inside another is put in parentheses.

    Args:
        value: a value of ``metrics.json`` (JSON types).
        nested: the value is inside a list or mapping.
    """
    if value is None:
        return "none"
    if isinstance(value, (bool, int, float)):
        return _number(value)
    if isinstance(value, str):
        return value if len(value) <= TABLE_TEXT else value[: TABLE_TEXT - 3] + "..."
    if isinstance(value, dict):
        if not value:
            return "none"
        items = list(value.items())
        shown = ", ".join(f"{k} {brief(v, True)}" for k, v in items[:TABLE_KEYS])
        text = shown + _more(TABLE_KEYS, len(items))
    elif isinstance(value, (list, tuple)):
        if not value:
            return "none"
        limit = TABLE_KEYS if nested else TABLE_ITEMS
        parts = [brief(v, True) for v in value[:limit]]
        sep = "; " if any(", " in p for p in parts) else ", "
        text = sep.join(parts) + _more(limit, len(value))
    else:
        return str(value)
    return f"({text})" if nested else text


def _table_rows(metrics: dict[str, Any], indent: int = 0) -> list[str]:
    """``key  value`` lines; a mapping at the top is a heading over its own indented lines."""
    if not metrics:
        return []
    width = max(len(str(k)) for k in metrics)
    pad = " " * indent
    lines = []
    for key, value in metrics.items():
        if indent == 0 and isinstance(value, dict) and value:
            entries = list(value.items())
            lines.append(f"{pad}{key}")
            lines += _table_rows(dict(entries[:TABLE_KEYS]), indent + 2)
            if len(entries) > TABLE_KEYS:
                lines.append(f"{pad}  ... ({len(entries)} entries in all)")
        elif isinstance(value, (list, tuple)) and len(value) > TABLE_ITEMS:
            lines.append(f"{pad}{key:<{width}}  {len(value)} items: {brief(value)}")
        else:
            lines.append(f"{pad}{key:<{width}}  {brief(value)}")
    return lines


def metrics_table(metrics: dict[str, Any]) -> str:
    """The metrics as a table for a person: rounded figures, counts and first items.

    A nested mapping is shown indented under its key, a list as its length and first
    items (:func:`brief`), then what the headline metrics mean. It is for reading only:
    ``metrics.json`` and ``--format json`` keep every item at full precision.
    """
    lines = _table_rows(metrics)
    from sparkanon.families import metric_notes

    glossary = METRIC_GLOSSARY | metric_notes(metrics.get("family"))
    width = max((len(k) for k in glossary if k in metrics), default=0)
    notes = [f"  {k:<{width}}  {note}" for k, note in glossary.items() if k in metrics]
    if notes:
        lines += ["", "What they mean:", *notes]
    return "\n".join(lines)


def _with_partition(overrides: Sequence[str], partition: str | None) -> list[str]:
    """The overrides, plus ``input.partition`` from ``--partition`` (validated)."""
    if partition is None:
        return list(overrides)
    from sparkanon.config import parse_partition

    spec = parse_partition(partition)
    return [*overrides, "input.partition=" + json.dumps(spec)]


def make_engine(
    engine_name: str,
    config: Any,
    master: str | None = None,
    remote: str | None = None,
    hive: bool = False,
) -> Any:
    """The engine a command runs on (a Spark session is created or reused).

    Args:
        engine_name: ``spark`` or ``local``.
        config: the job config (catalog tables turn Hive support on); ``None``: none.
        master: Spark master when no session exists and spark-submit set none.
        remote: a Spark Connect URL (``sc://host:port``) instead of a master.
        hive: turn the catalog on whatever the config says (``init`` on a table).
    """
    if engine_name == "local":
        from sparkanon.engine.local import LocalEngine

        return LocalEngine()
    from sparkanon.engine.spark import SparkEngine

    uses_tables = hive or (
        config is not None and (config.input.table is not None or config.output.table is not None)
    )
    if remote is not None:
        from sparkanon.engine.session import connect_session

        return SparkEngine(connect_session(remote))
    from sparkanon.engine.session import get_or_create_session

    return SparkEngine(get_or_create_session(master=master, hive=uses_tables))


def _report_failure(exc: BaseException) -> int:
    """Print an error the way the command line does and return its exit code."""
    if isinstance(exc, SparkanonError):
        print(f"sparkanon: error: {exc}", file=_stderr())
        return exc.exit_code
    from sparkanon.errors import worker_environment_error

    env_error = worker_environment_error(exc)
    if env_error is not None:
        print(f"sparkanon: error: {env_error}", file=_stderr())
        return env_error.exit_code
    log.error("internal error", exc_info=exc)
    print(f"sparkanon: internal error (please report): {exc!r}", file=_stderr())
    return EXIT_INTERNAL


def check_command_writes(
    config_path: str, config: Any, key_file: str | None, metrics_out: str | None
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


def _write_metrics_file(path: str, text: str, permissions: str) -> int:
    """Write ``--metrics-out`` with the file mode of ``output.permissions``; the exit code."""
    from sparkanon.safety import write_private_text

    try:
        write_private_text(path, text, permissions)
    except OSError as exc:
        return _report_failure(ConfigError(f"--metrics-out {path}: cannot be written ({exc})"))
    return EXIT_OK


def run_command(
    config_path: str,
    overrides: Sequence[str],
    engine_name: str = "spark",
    master: str | None = None,
    output_format: str = "json",
    metrics_out: str | None = None,
    partition: str | None = None,
    remote: str | None = None,
    key_file: str | None = None,
    key_label: str | None = None,
) -> int:
    """Load the config, run the job and print the metrics; return the exit code."""
    from sparkanon.families import load_config
    from sparkanon.pipeline import run_job
    from sparkanon.randomness import RunKey

    try:
        key = RunKey.for_run(key_file, key_label)
        config = load_config(config_path, _with_partition(overrides, partition))
        check_command_writes(config_path, config, key_file, metrics_out)
        result = run_job(make_engine(engine_name, config, master, remote), config, key=key)
    except Exception as exc:  # noqa: BLE001 - every failure becomes an exit code
        return _report_failure(exc)
    text = json.dumps(result.metrics, indent=2)
    if metrics_out:
        code = _write_metrics_file(metrics_out, text + "\n", config.output.permissions)
        if code != EXIT_OK:
            return code
    print(metrics_table(result.metrics) if output_format == "table" else text)
    return EXIT_OK


def backfill_command(
    config_path: str,
    overrides: Sequence[str],
    first: str,
    last: str,
    engine_name: str = "spark",
    master: str | None = None,
    remote: str | None = None,
    keep_going: bool = False,
    metrics_out: str | None = None,
    key_file: str | None = None,
    key_label: str | None = None,
) -> int:
    """Run the job on every partition of the input table from ``first`` to ``last``.

    Each partition's run draws a key of its own, unless a user key is given (``key_file``
    or ``SPARKANON_KEY``), which every partition then uses.

    The range is over one partition column (``--from ds=2026-11-01 --to
    ds=2026-11-23``), compared as text (ISO dates sort as dates), both ends included;
    the partitions are taken from the input table, oldest first, each run as a
    ``run --partition`` of its own. One JSON line per partition is printed (its
    partition, exit code and row counts) and a summary last.

    Returns:
        0 when every partition committed; else the first failure's exit code.
    """
    from sparkanon.config import parse_partition, partition_text
    from sparkanon.families import load_config
    from sparkanon.pipeline import run_job
    from sparkanon.randomness import RunKey

    results: list[dict[str, Any]] = []
    try:
        RunKey.for_run(key_file, key_label)  # a bad key file fails before any partition
        lo, hi = parse_partition(first), parse_partition(last)
        if len(lo) != 1 or list(lo) != list(hi):
            raise ConfigError(
                f"--from {first!r} --to {last!r}: a backfill ranges over one partition "
                "column, the same in both (e.g. --from ds=2026-11-01 --to ds=2026-11-23)"
            )
        column = next(iter(lo))
        config = load_config(config_path, overrides)
        check_command_writes(config_path, config, key_file, metrics_out)
        if config.input.table is None:
            raise ConfigError("backfill: input.table must name a partitioned catalog table")
        engine = make_engine(engine_name, config, master, remote)
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
    except Exception as exc:  # noqa: BLE001
        return _report_failure(exc)
    worst = EXIT_OK
    for spec in specs:
        text = partition_text(spec)
        line: dict[str, Any] = {"partition": text}
        try:
            job = load_config(config_path, _with_partition(overrides, text))
            metrics = run_job(engine, job, key=RunKey.for_run(key_file, key_label)).metrics
            line |= {
                "exit_code": EXIT_OK,
                "rows_in": metrics["rows_in"],
                "rows_out": metrics["rows_out"],
                "rows_suppressed": metrics["rows_suppressed"],
                "verified": metrics["verified"],
            }
        except Exception as exc:  # noqa: BLE001
            line["exit_code"] = _report_failure(exc)
            worst = worst or line["exit_code"]
        results.append(line)
        print(json.dumps(line))
        log.info("backfill: partition %s exit %d", text, line["exit_code"])
        if line["exit_code"] != EXIT_OK and not keep_going:
            break
    summary = {
        "partitions": len(specs),
        "run": len(results),
        "committed": sum(1 for r in results if r["exit_code"] == EXIT_OK),
        "failed": [r["partition"] for r in results if r["exit_code"] != EXIT_OK],
    }
    if metrics_out:
        text = json.dumps(results, indent=2) + "\n"
        worst = _write_metrics_file(metrics_out, text, config.output.permissions) or worst
    print(json.dumps(summary))
    return worst


def key_command(path: str) -> int:
    """Write a new key file (exit 0), or say why not (exit 2: it exists, or no folder)."""
    from sparkanon.randomness import write_key_file

    try:
        write_key_file(path)
    except OSError as exc:
        return _report_failure(ConfigError(f"key file {path}: cannot be written ({exc.strerror})"))
    except Exception as exc:  # noqa: BLE001
        return _report_failure(exc)
    print(f"wrote a new key to {path} (readable by its owner only); keep it secret", file=_stderr())
    return EXIT_OK


def validate_command(
    config_path: str,
    overrides: Sequence[str],
    engine_name: str = "spark",
    master: str | None = None,
    remote: str | None = None,
    partition: str | None = None,
    key_file: str | None = None,
    key_label: str | None = None,
) -> int:
    """Check a config, its key file and its input's schema without running the job (exit 0 or 2).

    Prints what was checked as JSON.
    """
    from sparkanon.families import load_config
    from sparkanon.randomness import RunKey
    from sparkanon.validate import validate_job

    try:
        RunKey.for_run(key_file, key_label)
        config = load_config(config_path, _with_partition(overrides, partition))
        check_command_writes(config_path, config, key_file, None)
        engine = make_engine(engine_name, config, master, remote)
        report = validate_job(engine, config)
    except Exception as exc:  # noqa: BLE001
        return _report_failure(exc)
    print(json.dumps(report, indent=2))
    return EXIT_OK


def reconstruct_command(
    output_dir: str,
    bins: int,
    integer_bins: bool = False,
    by: str | None = None,
    out: str | None = None,
    engine_name: str = "spark",
    master: str | None = None,
) -> int:
    """Reconstruct a committed perturbed release's distributions (exit 0 or 2).

    Writes ``reconstruction.json``, ``distributions.csv`` and one plot per column to
    ``out`` (default ``OUTPUT_DIR/reconstruction``) and prints a summary as JSON: per
    column and method, the iterations and the stopping rule.
    """
    from sparkanon.evaluation.reconstruct import (
        load_release,
        reconstruct_release,
        write_reconstruction,
    )
    from sparkanon.safety import Location, check_reads_and_writes

    try:
        release = load_release(output_dir)
        target = out or str(Path(output_dir) / "reconstruction")
        check_reads_and_writes(
            [
                Location("OUTPUT_DIR", f"{output_dir}/{name}", "the release", local=True)
                for name in ("data", "noise.json", "config.yaml", "metrics.json")
            ],
            [Location("--out", target, local=True)],
        )
        engine = make_engine(engine_name, None, master)
        result = reconstruct_release(engine, output_dir, bins, integer_bins, by)
        written = write_reconstruction(result, target, release.permissions)
    except Exception as exc:  # noqa: BLE001
        return _report_failure(exc)
    summary: dict[str, Any] = {"out": target, "files": written, "rows": result["rows"]}
    for name, entry in result["columns"].items():
        summary[name] = {
            method: {"iterations": d["iterations"], "stopped_by": d["stopped_by"]}
            for method, d in entry["all"].items()
            if isinstance(d, dict) and "iterations" in d
        }
    print(json.dumps(summary, indent=2))
    return EXIT_OK


def evaluate_command(args: argparse.Namespace) -> int:
    """Evaluate a release or an input (exit 0, or 2 on bad input, naming it).

    Writes ``evaluation.json`` and ``report.html`` and prints a summary as JSON: the
    files, and per table evaluated its rows, classes and ARX's headline risks.
    """
    from sparkanon.evaluation.evaluate import (
        check_evaluation_writes,
        default_out,
        evaluate_target,
        load_target,
        write_evaluation,
    )

    qis = args.quasi_identifiers
    options = {
        "sampling_fraction": args.sampling_fraction,
        "threshold": args.threshold,
        "suda_max_size": args.suda_max_size,
        "label": args.label,
        "holdout": args.holdout,
        "attacks": args.attacks,
        "bins": args.bins,
        "weight": args.weight,
        "population": args.population,
        "quasi_identifiers": [q.strip() for q in qis.split(",") if q.strip()] if qis else None,
    }
    try:
        target = load_target(args.target, args.overrides, **options)  # before Spark starts
        out = args.out or default_out(args.target)
        engine = make_engine(args.engine, target.config, args.master)
        check_evaluation_writes(engine, args.target, target, out)
        result = evaluate_target(engine, target)
        files = write_evaluation(engine, result, out, target.config.output.permissions)
    except Exception as exc:  # noqa: BLE001
        return _report_failure(exc)
    summary: dict[str, Any] = {"files": files, "table": result["table"]}
    for when, block in result["risk"].items():
        if block is not None:
            summary[f"risk_{when}"] = {
                "rows": block["rows"],
                "classes": block["classes"],
                "arx": block["arx"],
            }
    summary["warnings"] = result["warnings"]
    summary["not_computed"] = result["not_computed"]
    print(json.dumps(summary, indent=2))
    return EXIT_OK


def stream_command(
    config_path: str,
    overrides: Sequence[str],
    master: str | None = None,
    key_file: str | None = None,
    key_label: str | None = None,
) -> int:
    """Run a condensation stream (exit 0, 2 on bad input, 3 when a release fails its check).

    The synthetic draws use the user key of ``key_file`` (else ``SPARKANON_KEY``, else a
    key drawn for this run and never written). Prints the report as JSON: the batches
    this run ran and the state's counts.
    """
    from sparkanon.families import load_config
    from sparkanon.families.synthesis.stream import run_stream, stream_problems
    from sparkanon.randomness import RunKey

    try:
        config = load_config(config_path, list(overrides))
        stream_problems(config)  # before a Spark session starts
        check_command_writes(config_path, config, key_file, None)
        key = RunKey.for_run(key_file, key_label)  # a bad key file fails before Spark
        engine = make_engine("spark", config, master)
        report = run_stream(engine, config, key=key)
    except Exception as exc:  # noqa: BLE001
        return _report_failure(exc)
    print(json.dumps(report, indent=2))
    return EXIT_OK


class _StderrHandler(logging.StreamHandler):
    """A stream handler that looks up the error stream at every record.

    ``sys.stderr`` may be replaced after logging is configured (tests capture it); a
    handler that kept the old object would write to a closed stream.
    """

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102
        self.stream = _stderr()
        super().emit(record)


_jvm_stderr: Any = None
"""Under spark-submit, the JVM's stderr (set by :func:`configure_logging`)."""


def _stderr() -> Any:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sparkanon`` console script."""
    args = _parser().parse_args(argv)
    if args.command == "key":
        return key_command(args.path)
    configure_logging(args.quiet, args.log_level)
    if args.command == "stream":
        return stream_command(
            args.config,
            args.overrides,
            master=args.master,
            key_file=args.key_file,
            key_label=args.key_label,
        )
    if args.command == "evaluate":
        return evaluate_command(args)
    if args.command == "init":
        return init_command(args)
    if args.command == "reconstruct":
        return reconstruct_command(
            args.output_dir,
            args.bins,
            integer_bins=args.integer_bins,
            by=args.by,
            out=args.out,
            engine_name=args.engine,
            master=args.master,
        )
    common = {
        "engine_name": args.engine,
        "master": args.master,
        "remote": args.remote,
        "key_file": args.key_file,
        "key_label": args.key_label,
    }
    if args.command == "validate":
        return validate_command(args.config, args.overrides, partition=args.partition, **common)
    if args.command == "backfill":
        return backfill_command(
            args.config,
            args.overrides,
            args.first,
            args.last,
            keep_going=args.keep_going,
            **common,
        )
    output_format = args.format
    if output_format == "auto":
        output_format = "table" if sys.stdout.isatty() else "json"
    return run_command(
        args.config,
        args.overrides,
        output_format=output_format,
        metrics_out=args.metrics_out,
        partition=args.partition,
        **common,
    )


if __name__ == "__main__":
    sys.exit(main())
