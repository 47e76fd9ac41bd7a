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


class PrivacyViolationError(SparkanonError):
    """The published table failed verification against its privacy model."""

    exit_code = EXIT_PRIVACY


class InternalError(SparkanonError):
    """An invariant of sparkanon itself broke: this is a bug, please report it."""

    exit_code = EXIT_INTERNAL
