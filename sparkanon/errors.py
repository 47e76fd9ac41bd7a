"""Error types: user errors (bad config or input) versus our own bugs.

Every user-facing failure carries a message that names the problem (the key,
the column, the value) and, where there is one, a fix. The command line maps
each class to an exit code.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USER = 2
EXIT_PRIVACY = 3


class SparkanonError(Exception):
    """Base class of every error sparkanon raises on purpose."""

    exit_code = EXIT_INTERNAL


class UserError(SparkanonError):
    """The user's config or data is wrong; the message says what and how to fix it."""

    exit_code = EXIT_USER


class ConfigError(UserError):
    """The job configuration is invalid (unknown key, bad value, impossible parameters)."""


class InputError(UserError):
    """The input data does not match the configuration (missing column, bad value...)."""


class OutputExistsError(UserError):
    """The output path exists and the config does not allow overwriting it."""


class ReleaseTooSmallError(UserError):
    """The run would publish nothing, or suppress more rows than the config allows."""


class PrivacyViolationError(SparkanonError):
    """The published table failed verification against its privacy model."""

    exit_code = EXIT_PRIVACY


class MeasureUnavailableError(SparkanonError):
    """A measure of the evaluation cannot be computed on this data (a limit of its shape).

    The evaluation catches it per measure, records the measure and the reason under
    ``not_computed`` in ``evaluation.json`` and goes on: the report describes the
    release, it does not gate it. The reason names a fix that exists (a config key or a
    command line option).

    Args:
        reason: plain words: why, and what to change.
        parts: the keys of the raiser's result this leaves out (e.g. ``("skewness",)``
            of the attacks); empty: the whole measure.
    """

    exit_code = EXIT_USER

    def __init__(self, reason: str, parts: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.parts = tuple(parts)


class InternalError(SparkanonError):
    """An invariant of sparkanon itself broke: this is a bug, please report it."""

    exit_code = EXIT_INTERNAL


class LockLostError(SparkanonError):
    """The run's lock on its output table moved to another run before or during its commit.

    Not the user's config and not a bug of sparkanon: the run went without a heartbeat
    reaching the metastore for longer than the lock's expiry (a stalled driver, a lost
    metastore connection), and another run took its lock over. Exit 1, as a run that
    could not finish; the message says what was and was not committed.
    """

    exit_code = EXIT_INTERNAL


class StatisticsOverflowError(InternalError):
    """:meth:`~sparkanon.engine.base.Engine.collect_small` met more rows than it may collect.

    A caller that knows which input made the statistics large (a column with very many
    distinct values) catches it and says so as a user error.
    """


class EnvironmentSetupError(UserError):
    """The machine's setup keeps the job from running (a Python worker lacks a module)."""


def worker_environment_error(exc: BaseException) -> EnvironmentSetupError | None:
    """A clear error for a Python worker that cannot import a module, else ``None``.

    Spark reports a worker's ``ModuleNotFoundError`` inside a long Java trace; this
    finds it by the message alone (no pyspark import) and names the module, the
    interpreter Spark started and the fix.

    Args:
        exc: the exception a Spark action raised.

    Returns:
        The error to report (exit 2), or ``None`` when ``exc`` is something else.
    """
    import os
    import re

    text = str(exc)
    found = re.search(r"No module named '([^']+)'", text)
    if found is None or "ModuleNotFoundError" not in text:
        return None
    python = os.environ.get("PYSPARK_PYTHON", "python3")
    return EnvironmentSetupError(
        f"Spark's Python workers (interpreter {python!r}) cannot import {found.group(1)!r}. "
        "Run sparkanon with the Python environment it is installed in, or set PYSPARK_PYTHON "
        "to an interpreter that has sparkanon's dependencies (pyspark, pandas, numpy, pyarrow)"
    )
