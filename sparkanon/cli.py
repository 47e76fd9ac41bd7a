"""The ``sparkanon`` command line: ``sparkanon run CONFIG [--set key=value ...]``.

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

from sparkanon.errors import EXIT_INTERNAL, EXIT_OK, SparkanonError

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
    "EPP": "entropy privacy protection: mean level entropy HEC per class (seed 000 eq. 22)",
    "R_IL": "information loss rate: summed class InfoLoss over the rows (seed 000 eq. 23)",
    "AVG_IL": "mean over classes of IL / (class size x QIs) (seed 003 eq. 17-18)",
    "AVG_Ent": "mean base-2 entropy of the sensitive values per class (seed 003 eq. 19)",
    "CAVG": "(rows / classes) / k; 1 is the smallest possible (seed 003 eq. 20)",
    "NCP": "mean normalised certainty penalty per class, in [0, weights] (Xu et al. 2006)",
    "GCP": "global certainty penalty in percent of the whole domain (Ghinita et al. 2007)",
}
"""One line per headline metric, printed by ``--format table``."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sparkanon", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run an anonymization job")
    run.add_argument("config", help="YAML job config")
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (repeatable), e.g. --set model.k=10",
    )
    run.add_argument(
        "--engine",
        choices=["spark", "local"],
        default="spark",
        help="spark (default; local mode unless spark-submit set a master) or local "
        "(pandas, one process, for small data)",
    )
    run.add_argument(
        "--master",
        default=None,
        help="Spark master when not started by spark-submit (default local[*])",
    )
    run.add_argument(
        "--format",
        choices=["auto", "json", "table"],
        default="auto",
        help="how to print the metrics on stdout: json, a readable table, or auto "
        "(table on a terminal, json otherwise)",
    )
    run.add_argument("--metrics-out", default=None, metavar="FILE", help="also write metrics JSON")
    run.add_argument("--quiet", action="store_true", help="log warnings and errors only")
    return parser


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def metrics_table(metrics: dict[str, Any]) -> str:
    """The metrics as a readable table: rounded figures, then what the headline metrics mean.

    Rounding is for display only; ``metrics.json`` keeps full precision.
    """
    lines = []
    width = max(len(k) for k in metrics)
    for key, value in metrics.items():
        if isinstance(value, dict):
            shown = ", ".join(f"{k} {_number(v)}" for k, v in value.items())
        elif isinstance(value, list):
            shown = "; ".join(str(v) for v in value) if value else "none"
        else:
            shown = _number(value)
        lines.append(f"{key:<{width}}  {shown}")
    lines += ["", "What they mean:"]
    lines += [
        f"  {key:<{width}}  {note}" for key, note in METRIC_GLOSSARY.items() if key in metrics
    ]
    return "\n".join(lines)


def run_command(
    config_path: str,
    overrides: Sequence[str],
    engine_name: str = "spark",
    master: str | None = None,
    output_format: str = "json",
    metrics_out: str | None = None,
) -> int:
    """Load the config, run the job and print the metrics; return the exit code."""
    from sparkanon.config import load_config
    from sparkanon.pipeline import run_job

    try:
        config = load_config(config_path, overrides)
        if engine_name == "local":
            from sparkanon.engine.local import LocalEngine

            result = run_job(LocalEngine(), config)
        else:
            from sparkanon.engine.session import get_or_create_session
            from sparkanon.engine.spark import SparkEngine

            spark = get_or_create_session(master=master)
            result = run_job(SparkEngine(spark), config)
    except SparkanonError as exc:
        print(f"sparkanon: error: {exc}", file=_stderr())
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - anything else is our bug, or the environment's
        from sparkanon.errors import worker_environment_error

        env_error = worker_environment_error(exc)
        if env_error is not None:
            print(f"sparkanon: error: {env_error}", file=_stderr())
            return env_error.exit_code
        log.exception("internal error")
        print(f"sparkanon: internal error (please report): {exc!r}", file=_stderr())
        return EXIT_INTERNAL
    text = json.dumps(result.metrics, indent=2)
    if metrics_out:
        Path(metrics_out).write_text(text + "\n", encoding="utf-8")
    print(metrics_table(result.metrics) if output_format == "table" else text)
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


def configure_logging(quiet: bool) -> None:
    """Send sparkanon's log lines and errors to stderr, never to stdout.

    sparkanon's logger gets its own handler and does not propagate (the root logger
    may write elsewhere). Under ``spark-submit`` the Python driver's stderr is merged
    into stdout, so the handler writes through the JVM's stderr instead
    (:func:`sparkanon.engine.session.spark_submit_stderr`).
    """
    global _jvm_stderr
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        from sparkanon.engine.session import spark_submit_stderr

        _jvm_stderr = spark_submit_stderr()
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.WARNING if quiet else logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sparkanon`` console script."""
    args = _parser().parse_args(argv)
    configure_logging(args.quiet)
    output_format = args.format
    if output_format == "auto":
        output_format = "table" if sys.stdout.isatty() else "json"
    return run_command(
        args.config, args.overrides, args.engine, args.master, output_format, args.metrics_out
    )


if __name__ == "__main__":
    sys.exit(main())
