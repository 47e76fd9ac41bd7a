"""The ``sparkanon`` command line: its arguments, how it prints, and which command it calls.

The commands themselves are :mod:`sparkanon.commands` (one function each); this module
parses the arguments, calls the command, prints what it returns and turns what it
raises into the exit code (:func:`sparkanon.commands.report_failure`).

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
import functools
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from sparkanon import commands
from sparkanon._version import __version__
from sparkanon.commands import configure_logging as configure_logging
from sparkanon.commands import log as log
from sparkanon.errors import EXIT_OK


def _add_job_arguments(cmd: argparse.ArgumentParser) -> None:
    """The arguments every command that loads a job config takes."""
    cmd.add_argument("config", help="YAML job config")
    _add_set_argument(
        cmd,
        "override a config key (repeatable), e.g. --set model.k=10; a text key takes "
        "the value as typed (--set sensitive.separator=|), others read it as YAML",
    )
    cmd.add_argument(
        "--engine",
        choices=["spark", "local"],
        default="spark",
        help="spark (default; local mode unless spark-submit set a master) or local "
        "(pandas, one process, for small data)",
    )
    _add_master_argument(cmd, " (default local[*])")
    _option(
        cmd,
        "--remote",
        "sc://HOST:PORT",
        text="run through a Spark Connect server instead of a local or cluster master",
    )
    _add_key_arguments(cmd)
    _add_logging_arguments(cmd)


def _add_set_argument(cmd: argparse.ArgumentParser, text: str) -> None:
    """``--set KEY=VALUE`` (repeatable), the overrides of a config's keys."""
    cmd.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help=text
    )


def _add_master_argument(cmd: argparse.ArgumentParser, default: str = "") -> None:
    """``--master``: the Spark master when spark-submit set none."""
    cmd.add_argument(
        "--master", default=None, help="Spark master when not started by spark-submit" + default
    )


def _option(
    cmd: argparse.ArgumentParser, flag: str, metavar: str, text: str, type: Any = None
) -> None:
    """An option with a value and no default (``None`` when not given)."""
    cmd.add_argument(flag, type=type, default=None, metavar=metavar, help=text)


def _names(text: str | None) -> list[str] | None:
    """A comma-separated list of column names (``None``: not given)."""
    return [q.strip() for q in text.split(",") if q.strip()] if text else None


def _add_key_arguments(cmd: argparse.ArgumentParser) -> None:
    """``--key-file`` and ``--key-label``: a user key for the run's protective draws."""
    _option(
        cmd,
        "--key-file",
        "FILE",
        text="draw noise, synthetic records and release order with this key (written by "
        "'sparkanon key FILE'), to reproduce a release; default: SPARKANON_KEY if set, else "
        "a fresh key per run that is never written",
    )
    _option(
        cmd,
        "--key-label",
        "TEXT",
        text="the label the release records for a user key (default: the key file's name)",
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
    _option(
        run,
        "--partition",
        "COL=VALUE[,COL=VALUE]",
        text="anonymize one partition of the input table into the same partition of the "
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
    _option(
        validate,
        "--partition",
        "COL=VALUE[,COL=VALUE]",
        text="check that this partition of the input table exists (sets input.partition)",
    )
    key = _subcommand(
        sub,
        "key",
        "write a new random key file (owner-only), for runs that must reproduce a release "
        "(--key-file)",
    )
    key.add_argument("path", metavar="FILE", help="the key file to create (never overwritten)")
    _add_engine_subcommand(
        sub,
        "reconstruct",
        "reconstruct the original distributions of a committed perturbed release "
        "(Agrawal and Srikant 2000's Bayes update, EM, and for categorical columns the "
        "iterative Bayesian update and the inversion estimate)",
        _add_reconstruct_arguments,
    )
    _add_engine_subcommand(
        sub,
        "evaluate",
        "measure re-identification risk, attacks and utility of a committed release (its "
        "output directory, beside its input) or of a config's raw input, and write "
        "evaluation.json and report.html",
        _add_evaluate_arguments,
    )
    _add_engine_subcommand(
        sub,
        "init",
        "profile a table (files or a catalog table) and write a commented starter config: "
        "each column's kind, likely direct identifiers, quasi-identifiers, a model and its "
        "feasibility",
        _add_init_arguments,
    )
    stream = _subcommand(
        sub,
        "stream",
        "run a condensation stream: the config's input seeds the groups, files arriving in "
        "stream.source join them, and due groups release synthetic records to output.path "
        "(Aggarwal and Yu 2004's dynamic condensation)",
    )
    stream.add_argument("config", metavar="CONFIG", help="the job's YAML config (with stream:)")
    _add_set_argument(
        stream,
        "override a config key (dotted path, YAML value), e.g. stream.trigger='10 seconds'",
    )
    _add_master_argument(stream)
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
    _add_master_argument(cmd)
    _add_logging_arguments(cmd)


def _add_engine_subcommand(
    sub: Any, name: str, text: str, add_arguments: Callable[[argparse.ArgumentParser], None]
) -> None:
    """A subcommand over a release or a table: its own arguments, then the engine's.

    Args:
        sub: The subparsers the command joins.
        name: The command's name.
        text: Its one-line help (see :func:`_subcommand`).
        add_arguments: Adds the command's own arguments to its parser.
    """
    cmd = _subcommand(sub, name, text)
    add_arguments(cmd)
    _add_engine_arguments(cmd)


def _add_reconstruct_arguments(cmd: argparse.ArgumentParser) -> None:
    """The arguments of ``sparkanon reconstruct OUTPUT_DIR ...``."""
    from sparkanon.evaluation.reconstruct import DEFAULT_BINS

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
    _option(
        cmd,
        "--by",
        "COLUMN",
        text="also one distribution per value of this unperturbed column (e.g. the class label)",
    )
    _option(
        cmd,
        "--out",
        "DIR",
        text="where to write reconstruction.json, distributions.csv and the plots "
        "(default OUTPUT_DIR/reconstruction)",
    )


def _add_init_arguments(cmd: argparse.ArgumentParser) -> None:
    """The arguments of ``sparkanon init TABLE_OR_PATH ...``."""
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
    _option(
        cmd, "--output-path", "DIR", text="the config's output.path (default out/<name>_anonymized)"
    )
    cmd.add_argument("--sensitive", default=None, metavar="COLUMN", help="the sensitive attribute")
    _option(
        cmd,
        "--quasi-identifiers",
        "A,B,C",
        type=_names,
        text="the quasi-identifiers (default: suggested from names and kinds)",
    )


class _Setting(NamedTuple):
    """An option of ``evaluate`` that sets one of the evaluation's settings."""

    flag: str
    metavar: str
    text: str
    type: Callable[[str], Any] | None = None

    @property
    def dest(self) -> str:
        """The setting's name (:func:`sparkanon.evaluation.evaluate.settings_of`)."""
        return self.flag[2:].replace("-", "_")


EVALUATION_SETTINGS = (
    _Setting(
        "--sampling-fraction",
        "F",
        "the input's share of the population, in (0, 1] (default: "
        "report.sampling_fraction of the config, 1)",
        float,
    ),
    _Setting("--threshold", "T", "a record whose risk exceeds T is at risk (default 0.2)", float),
    _Setting("--suda-max-size", "N", "SUDA2's largest quasi-identifier subset (0: no SUDA2)", int),
    _Setting("--label", "COLUMN", "the column a classifier predicts (utility)"),
    _Setting(
        "--holdout",
        "PATH",
        "held-out original rows, read like the input: the classifier's test rows and the "
        "attacks' control set",
    ),
    _Setting("--attacks", "N", "targets per singling-out, linkability and inference attack", int),
    _Setting("--bins", "K", "bins of a numeric column's distribution (utility)", int),
    _Setting(
        "--population",
        "PATH",
        "the population table the input was sampled from, read like the input: the "
        "journalist and marketer risks of the input use its class sizes",
    ),
    _Setting(
        "--weight",
        "COLUMN",
        "a column of sampling weights for sdcMicro's individual risk (a keep column of the config)",
    ),
    _Setting(
        "--quasi-identifiers",
        "A,B,...",
        "the columns the attacker knows (default: the config's)",
        _names,
    ),
)
"""The options of ``evaluate`` that set the evaluation's settings, in the order ``--help``
shows them; each is passed on under its :attr:`_Setting.dest`."""


def _add_evaluate_arguments(cmd: argparse.ArgumentParser) -> None:
    """The arguments of ``sparkanon evaluate TARGET ...``."""
    cmd.add_argument(
        "target", metavar="OUTPUT_DIR|CONFIG", help="a job's output.path, or a YAML config"
    )
    _add_set_argument(cmd, "override a key of a CONFIG target (as sparkanon run --set)")
    for setting in EVALUATION_SETTINGS:
        _option(cmd, setting.flag, setting.metavar, setting.text, setting.type)
    _option(
        cmd,
        "--out",
        "DIR",
        text="where evaluation.json and report.html go (default: the output "
        "directory; for a config, evaluation/<config name>)",
    )


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
    items (:func:`brief`), then what the headline metrics mean
    (:data:`sparkanon.report.glossary.METRICS`, a line the run's family means otherwise
    replaced by the family's ``metric_notes``). It is for reading only:
    ``metrics.json`` and ``--format json`` keep every item at full precision.
    """
    from sparkanon.families import metric_notes
    from sparkanon.report.glossary import METRICS

    lines = _table_rows(metrics)
    glossary = METRICS | metric_notes(metrics.get("family"))
    width = max((len(k) for k in glossary if k in metrics), default=0)
    notes = [f"  {k:<{width}}  {note}" for k, note in glossary.items() if k in metrics]
    if notes:
        lines += ["", "What they mean:", *notes]
    return "\n".join(lines)


def _exit_code(command: Callable[..., int]) -> Callable[..., int]:
    """``command`` with whatever it raises printed and turned into its exit code.

    The one place the command line catches a failure
    (:func:`sparkanon.commands.report_failure`).
    """

    @functools.wraps(command)
    def call(*args: Any, **kwargs: Any) -> int:
        try:
            return command(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every failure becomes an exit code
            return commands.report_failure(exc)

    return call


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2))


@_exit_code
def run_command(
    config_path: str,
    overrides: Sequence[str],
    engine_name: str = "spark",
    output_format: str = "json",
    metrics_out: str | None = None,
    **options: Any,
) -> int:
    """Run the job and print its metrics; the exit code.

    Args:
        config_path: the YAML config.
        overrides: ``--set`` overrides.
        engine_name: ``spark`` or ``local``.
        output_format: ``json`` or ``table`` (:func:`metrics_table`).
        metrics_out: also write the metrics as JSON to this file.
        **options: :func:`sparkanon.commands.run`'s (``master``, ``remote``,
            ``partition``, ``key_source``).
    """
    config, result = commands.run(
        config_path, overrides, engine_name=engine_name, metrics_out=metrics_out, **options
    )
    text = json.dumps(result.metrics, indent=2)
    if metrics_out:
        commands.write_metrics_file(metrics_out, text + "\n", config.output.permissions)
    print(metrics_table(result.metrics) if output_format == "table" else text)
    return EXIT_OK


@_exit_code
def backfill_command(
    config_path: str,
    overrides: Sequence[str],
    first: str,
    last: str,
    engine_name: str = "spark",
    metrics_out: str | None = None,
    **options: Any,
) -> int:
    """Run the job on every partition in a range (:func:`sparkanon.commands.backfill`).

    One JSON line per partition is printed as it ends (its partition, exit code and row
    counts) and a summary last; ``metrics_out`` gets the partitions' lines as JSON.

    Returns:
        0 when every partition committed; else the first failure's exit code.
    """
    done = commands.backfill(
        config_path,
        overrides,
        first,
        last,
        engine_name=engine_name,
        metrics_out=metrics_out,
        on_run=lambda entry: print(json.dumps(entry)),
        **options,
    )
    worst = done.exit_code
    if metrics_out:
        text = json.dumps(done.runs, indent=2) + "\n"
        try:
            commands.write_metrics_file(metrics_out, text, done.config.output.permissions)
        except Exception as exc:  # noqa: BLE001 - reported, and the summary still printed
            worst = commands.report_failure(exc) or worst
    print(json.dumps(done.summary()))
    return worst


@_exit_code
def key_command(path: str) -> int:
    """Write a new key file (exit 0), or say why not (exit 2: it exists, or no folder)."""
    commands.key(path)
    print(
        f"wrote a new key to {path} (readable by its owner only); keep it secret",
        file=commands.error_stream(),
    )
    return EXIT_OK


@_exit_code
def validate_command(
    config_path: str, overrides: Sequence[str], engine_name: str = "spark", **options: Any
) -> int:
    """Check a config, its key file and its input's schema without running the job (exit 0 or 2).

    Prints what was checked as JSON (:func:`sparkanon.commands.validate`, whose options
    ``options`` are).
    """
    _print_json(commands.validate(config_path, overrides, engine_name=engine_name, **options))
    return EXIT_OK


@_exit_code
def reconstruct_command(output_dir: str, bins: int, **options: Any) -> int:
    """Reconstruct a committed perturbed release's distributions (exit 0 or 2).

    Prints a summary as JSON: the folder and files written, the rows, and per column
    and method the iterations and the stopping rule. ``options`` are
    :func:`sparkanon.commands.reconstruct`'s.
    """
    result, target, written = commands.reconstruct(output_dir, bins, **options)
    summary: dict[str, Any] = {"out": target, "files": written, "rows": result["rows"]}
    for name, entry in result["columns"].items():
        summary[name] = {
            method: {"iterations": d["iterations"], "stopped_by": d["stopped_by"]}
            for method, d in entry["all"].items()
            if isinstance(d, dict) and "iterations" in d
        }
    _print_json(summary)
    return EXIT_OK


@_exit_code
def evaluate_command(args: argparse.Namespace) -> int:
    """Evaluate a release or an input (exit 0, or 2 on bad input, naming it).

    Writes ``evaluation.json`` and ``report.html`` and prints a summary as JSON: the
    files, and per table evaluated its rows, classes and ARX's headline risks.
    """
    result, files = commands.evaluate(
        args.target,
        args.overrides,
        out=args.out,
        **_engine_options(args),
        **{setting.dest: getattr(args, setting.dest) for setting in EVALUATION_SETTINGS},
    )
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
    _print_json(summary)
    return EXIT_OK


@_exit_code
def init_command(args: argparse.Namespace) -> int:
    """Profile a table and write a starter config (exit 0, or 2 naming what is wrong).

    Without ``--out`` the config goes to stdout; with it, its path is printed as JSON.
    """
    text = commands.init(
        args.source,
        out=args.out,
        input_format=args.input_format,
        output_path=args.output_path,
        sensitive=args.sensitive,
        quasi_identifiers=args.quasi_identifiers,
        **_engine_options(args),
    )
    if args.out is None:
        sys.stdout.write(text)
    else:
        print(json.dumps({"config": args.out}))
    return EXIT_OK


@_exit_code
def stream_command(config_path: str, overrides: Sequence[str], **options: Any) -> int:
    """Run a condensation stream (exit 0, 2 on bad input, 3 when a release fails its check).

    The synthetic draws use the key ``key_source`` names (a user key file, else
    ``SPARKANON_KEY``, else a key drawn for this run and never written). Prints the report
    as JSON: the batches this run ran and the state's counts. ``options`` are
    :func:`sparkanon.commands.stream`'s.
    """
    _print_json(commands.stream(config_path, overrides, **options))
    return EXIT_OK


def _engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--engine`` and ``--master``, as :func:`sparkanon.commands.build_engine` names them."""
    return {"engine_name": args.engine, "master": args.master}


def _key_source(args: argparse.Namespace) -> commands.RunKeySource:
    """Where the run key comes from: ``--key-file`` and ``--key-label``."""
    return commands.RunKeySource(args.key_file, args.key_label)


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
            key_source=_key_source(args),
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
            **_engine_options(args),
        )
    common = {
        **_engine_options(args),
        "remote": args.remote,
        "key_source": _key_source(args),
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
