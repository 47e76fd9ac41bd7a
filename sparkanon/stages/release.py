"""The size of a release: a run that would publish nothing, or too little, fails.

Every family calls :func:`check_release_size` on its metrics after verification and
before commit. A release with no row, or one that suppressed more than
``output.max_suppressed_share`` of the input rows (every cause together), fails with
exit 2 and writes nothing; the message names every cause with its count, and the
family adds what it knows of the cause (e.g. a relational-transaction job that could
form fewer than ``l`` TBuckets).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from sparkanon.errors import ReleaseTooSmallError

CAUSE_KEY_PREFIX = "suppressed_"
"""Prefix of the ``metrics.json`` keys that count suppressed rows by cause."""
NOT_ROW_COUNTS = frozenset({"suppressed_classes", "suppressed_unplaced"})
"""``suppressed_*`` keys that are not a cause's rows (classes; the total of the reasons)."""


def suppression_causes(metrics: Mapping[str, Any]) -> dict[str, int]:
    """The causes of suppression with at least one row, by count (largest first).

    Args:
        metrics: a run's metrics (``suppressed_*`` integer keys; a nested
            ``suppressed_by_reason`` mapping is read as causes too).

    Returns:
        ``{cause: rows}`` where ``cause`` is the key without ``suppressed_``.
    """
    causes: dict[str, int] = {}
    for key, value in metrics.items():
        if not key.startswith(CAUSE_KEY_PREFIX) or key in NOT_ROW_COUNTS:
            continue
        name = key[len(CAUSE_KEY_PREFIX) :]
        if isinstance(value, Mapping):
            causes |= {str(k): int(v) for k, v in value.items() if v}
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and value:
            causes[name] = int(value)
    if "suppressed_by_reason" not in metrics and metrics.get("suppressed_unplaced"):
        causes["unplaced"] = int(metrics["suppressed_unplaced"])
    return dict(sorted(causes.items(), key=lambda kv: (-kv[1], kv[0])))


def release_size_problem(
    rows_in: int, rows_out: int, causes: Mapping[str, int], max_share: float
) -> str | None:
    """What is wrong with the size of a release, or ``None`` when it may be published.

    Args:
        rows_in: input rows.
        rows_out: rows the release publishes.
        causes: suppressed rows by cause.
        max_share: ``output.max_suppressed_share``.

    Returns:
        A message naming the rows, the causes and the limit, or ``None``.
    """
    suppressed = rows_in - rows_out
    listed = ", ".join(f"{name} {n}" for name, n in causes.items()) or "none recorded"
    if rows_out == 0:
        return (
            f"the run would publish no row: all {rows_in} input rows are suppressed "
            f"(by cause: {listed})"
        )
    share = suppressed / rows_in if rows_in else 0.0
    if share > max_share:
        return (
            f"the run would suppress {suppressed} of {rows_in} rows ({share:.1%}), above "
            f"output.max_suppressed_share = {max_share:g} (by cause: {listed}); publish "
            f"only {rows_out} rows by raising output.max_suppressed_share to at least "
            f"{_ceil_share(share)}, or relax the model"
        )
    return None


def _ceil_share(share: float) -> str:
    """``share`` rounded up to two decimals, for the suggested limit."""
    return f"{min(1.0, math.ceil(share * 100 - 1e-9) / 100):.2f}"


def check_release_size(metrics: Mapping[str, Any], max_share: float, hint: str = "") -> None:
    """Fail (exit 2, nothing written) when the release is empty or suppresses too much.

    Args:
        metrics: the run's metrics (``rows_in``, ``rows_out``, ``suppressed_*``).
        max_share: ``output.max_suppressed_share``.
        hint: what the family knows of the cause, appended to the message.

    Raises:
        ReleaseTooSmallError: the release is empty or above the limit.
    """
    problem = release_size_problem(
        int(metrics["rows_in"]), int(metrics["rows_out"]), suppression_causes(metrics), max_share
    )
    if problem is None:
        return
    text = f"{problem}. {hint}" if hint else problem
    raise ReleaseTooSmallError(f"{text.rstrip('.')}; nothing was written")
