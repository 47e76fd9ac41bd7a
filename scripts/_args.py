"""Command-line argument types shared by the data scripts (generate_adult, generate_rt)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """Parse a command-line integer that must be at least 1.

    Args:
        text: The argument as typed; ``_`` separators are allowed (``1_000_000``).

    Returns:
        The integer.

    Raises:
        argparse.ArgumentTypeError: If ``text`` is not an integer of at least 1.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def seed(text: str) -> int:
    """Parse a command-line seed (a non-negative integer).

    Args:
        text: The argument as typed.

    Returns:
        The seed.

    Raises:
        argparse.ArgumentTypeError: If ``text`` is not a non-negative integer.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be non-negative: {text!r}")
    return value
