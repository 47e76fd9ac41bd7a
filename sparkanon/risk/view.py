"""Which columns of a table an evaluation reads, and as what."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

ColumnKind = Literal["numeric", "categorical"]


@dataclass(frozen=True)
class TableView:
    """The columns an evaluation reads from one table (raw input or a release).

    The equivalence classes of the table are the groups of rows with identical values of
    ``quasi_identifiers`` as the table holds them (published values for a release: a
    generalized range or a centroid is one value), a null being a value of its own.

    Attributes:
        quasi_identifiers: the quasi-identifier columns, in the config's order.
        kinds: per quasi-identifier, ``numeric`` (a number column) or ``categorical``
            (compared as text).
        sensitive: the sensitive column, or ``None`` (attacks on it are then skipped).
        sensitive_kind: ``numeric`` or ``categorical``; ``None`` with no sensitive column.
        sensitive_levels: for a categorical sensitive attribute with levels (Shi et al.
            2024's sensitive levels), each value's level name; empty otherwise.
        sensitive_order: for an ordered categorical sensitive attribute, its values in
            order (the ground distance of the skewness attack); empty otherwise.
        weight: a column of sampling weights (each row stands for that many people),
            or ``None``.
    """

    quasi_identifiers: tuple[str, ...]
    kinds: Mapping[str, ColumnKind]
    sensitive: str | None = None
    sensitive_kind: ColumnKind | None = None
    sensitive_levels: Mapping[str, str] = field(default_factory=dict)
    sensitive_order: tuple[str, ...] = ()
    weight: str | None = None
