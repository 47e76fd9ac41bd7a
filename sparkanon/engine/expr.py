"""Column expressions every engine computes natively (no Python UDF).

A small, engine-neutral expression tree for
:meth:`~sparkanon.engine.base.Engine.with_columns`: integer and float arithmetic on
columns, ``floor``, ``clip``, an array lookup (of numbers or of text) and a two-way
``when``. The local engine evaluates it on numpy arrays, the Spark engine turns it into
Spark SQL column expressions (a ``CASE``, ``element_at``...), so a row-wise computation a
family needs (a row's block leaf, its class key under a lattice node) runs in the JVM
without shipping rows to Python (a row's published label under a lattice node is a
:class:`Text` of its level code). The family builds the expression in its own stage
module; the engine only knows these node types.

Types: a :class:`Col` has its column's type; ``+ - *`` give ``long`` when both sides are
``long`` and ``double`` otherwise; ``//``, ``%``, :class:`Floor` and :class:`Lookup` give
``long``; :class:`Text` gives ``string``. An expression over a null is undefined (the
callers' code columns have none); so are a division by zero and a lookup outside the
array.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Union

Expr = Union["Col", "Lit", "Arith", "Floor", "Clip", "Lookup", "Text", "When"]
"""Any expression node."""

ARITH_OPS = ("+", "-", "*", "//", "%")
"""Operators of :class:`Arith` (``//``: floor division of two ``long`` s; ``%``: the
exact remainder of a ``long`` by a positive ``long``, in ``[0, right)``, also for a
``long`` beyond the doubles' exact integers)."""

COMPARISONS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
"""Each comparison's function, the same on pandas Series and Spark Columns."""
COMPARE_OPS = tuple(COMPARISONS)
"""Comparisons of :class:`When`."""


def _check_operator(op: str, known: tuple[str, ...], what: str) -> None:
    """Refuse an operator a node does not know.

    Raises:
        ValueError: ``op`` is not one of ``known`` (the message says ``unknown {what}``).
    """
    if op not in known:
        raise ValueError(f"unknown {what} {op!r}")


@dataclass(frozen=True)
class Col:
    """The value of a column."""

    name: str


@dataclass(frozen=True)
class Lit:
    """A constant (``int``: ``long``, ``float``: ``double``)."""

    value: int | float


@dataclass(frozen=True)
class Arith:
    """``left op right`` with ``op`` in :data:`ARITH_OPS`."""

    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        _check_operator(self.op, ARITH_OPS, "arithmetic operator")


@dataclass(frozen=True)
class Floor:
    """The largest ``long`` not above the value."""

    arg: Expr


@dataclass(frozen=True)
class Clip:
    """The value bounded to ``[low, high]``."""

    arg: Expr
    low: int
    high: int


@dataclass(frozen=True)
class Lookup:
    """``values[index]``: a ``long`` from a constant array, ``index`` counted from 0."""

    values: tuple[int, ...]
    index: Expr


@dataclass(frozen=True)
class Text:
    """``values[index]``: a ``string`` from a constant array, ``index`` counted from 0."""

    values: tuple[str, ...]
    index: Expr


@dataclass(frozen=True)
class When:
    """``then`` where ``left op right`` holds, ``otherwise`` elsewhere.

    Only the chosen branch is computed for a row, so a deep nest of them (a decision
    tree) costs its depth per row, not its size.
    """

    left: Expr
    op: str
    right: Expr
    then: Expr
    otherwise: Expr

    def __post_init__(self) -> None:
        _check_operator(self.op, COMPARE_OPS, "comparison")


def add(*terms: Expr) -> Expr:
    """The sum of ``terms`` (``Lit(0)`` for none)."""
    if not terms:
        return Lit(0)
    total = terms[0]
    for t in terms[1:]:
        total = Arith("+", total, t)
    return total
