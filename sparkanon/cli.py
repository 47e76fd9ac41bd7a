"""The ``sparkanon`` command line: ``sparkanon run CONFIG [--set key=value ...]``.

Exit codes: 0 success, 2 invalid config or input (nothing written), 3 the
published table failed privacy verification (nothing written), 1 an internal
error (a bug in sparkanon).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from sparkanon.errors import EXIT_INTERNAL, EXIT_OK, SparkanonError


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
    run.add_argument("--quiet", action="store_true", help="print only the metrics JSON")
    return parser


def run_command(
    config_path: str,
    overrides: Sequence[str],
    engine_name: str = "spark",
    master: str | None = None,
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
        print(f"sparkanon: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - anything else is our bug
        logging.getLogger("sparkanon").exception("internal error")
        print(f"sparkanon: internal error (please report): {exc!r}", file=sys.stderr)
        return EXIT_INTERNAL
    print(json.dumps(result.metrics, indent=2))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sparkanon`` console script."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return run_command(args.config, args.overrides, args.engine, args.master)


if __name__ == "__main__":
    sys.exit(main())
