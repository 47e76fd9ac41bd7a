"""Value checks: which values of a quasi-identifier its kind cannot encode.

One small frozen class per kind of check, all with the interface of :class:`ValueCheck`:
which rows of a batch hold an invalid value (:meth:`~ValueCheck.invalid`), the profile
statistic whose rows are examples of those values (:attr:`~ValueCheck.invalid_stat`) and
the text the examples show (:meth:`~ValueCheck.shown`), and the statistics the column's
values add to the profile (:meth:`~ValueCheck.summary`: a range, a domain or none).

The profile stage (:mod:`sparkanon.stages.profile`) holds one check per quasi-identifier
and asks it once per batch; the encode stage (:mod:`sparkanon.stages.encode`) asks the same
checks which rows ``input.on_invalid: drop`` suppresses, so they are the rows the profile
counted. A check reads the batch through :class:`~sparkanon.attributes.text.TrimmedText`,
which converts each column once for both questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd

from sparkanon.attributes.builders import invalid_values
from sparkanon.attributes.dates import TemporalFormat
from sparkanon.attributes.semantic import is_code
from sparkanon.attributes.text import TrimmedText


class SummaryRow(NamedTuple):
    """One statistic a check adds to a batch's profile for its column.

    Attributes:
        stat: ``range`` (``n``, ``lo``, ``hi`` of the valid values) or ``domain`` (one
            distinct value and its row count).
        value: the value (a domain), else ``None``.
        n: the rows counted.
        lo: the smallest value (a range), else NaN.
        hi: the largest value (a range), else NaN.
    """

    stat: str
    value: str | None
    n: int
    lo: float = np.nan
    hi: float = np.nan


def _range(values: np.ndarray) -> list[SummaryRow]:
    """The range row of finite values (none when there are none)."""
    if not values.size:
        return []
    return [SummaryRow("range", None, values.size, float(values.min()), float(values.max()))]


def _domain(texts: TrimmedText, column: str) -> list[SummaryRow]:
    """One domain row per distinct trimmed text, with its row count."""
    return [SummaryRow("domain", str(v), n) for v, n in texts.value_counts(column).items()]


class ValueCheck:
    """What one quasi-identifier's values must be, asked once per batch.

    Every method takes the batch (its rows holding no missing value) and the column.
    """

    invalid_stat: ClassVar[str] = "unknown"
    """The profile statistic whose rows are examples of invalid values, with row counts."""

    def invalid(self, texts: TrimmedText, column: str) -> np.ndarray:
        """Whether each row's value cannot be encoded (a boolean mask)."""
        raise NotImplementedError

    def shown(self, texts: TrimmedText, column: str) -> pd.Series:
        """The values the examples of invalid values show: the trimmed text."""
        return texts[column]

    def summary(self, texts: TrimmedText, column: str) -> list[SummaryRow]:
        """The statistics the column's values add to the profile: none."""
        return []


def _numbers(texts: TrimmedText, column: str) -> np.ndarray:
    """A continuous column's values as floats, NaN where a value is not a number.

    A column read as numbers is used as it is: the text of a number parses back to
    the same float.
    """
    if texts.numeric(column):
        return texts.batch[column].to_numpy(dtype=float, na_value=np.nan)
    numeric = pd.to_numeric(texts[column], errors="coerce").astype("Float64")
    return numeric.to_numpy(dtype=float, na_value=np.nan)


@dataclass(frozen=True)
class NumberCheck(ValueCheck):
    """A continuous value: a finite number.

    The examples of invalid values show them as read; the valid values' range is profiled.
    """

    invalid_stat: ClassVar[str] = "nonnumeric"

    def numbers(self, texts: TrimmedText, column: str) -> np.ndarray:
        """The column as floats (NaN: not a number), read once per batch."""
        return texts.parsed(column, lambda: (_numbers(texts, column),))[0]

    def invalid(self, texts: TrimmedText, column: str) -> np.ndarray:  # noqa: D102
        return ~np.isfinite(self.numbers(texts, column))

    def shown(self, texts: TrimmedText, column: str) -> pd.Series:
        """The values as read (a number column's numbers, not their text)."""
        return texts.batch[column]

    def summary(self, texts: TrimmedText, column: str) -> list[SummaryRow]:
        """The ``range`` of the finite values."""
        x = self.numbers(texts, column)
        return _range(x[np.isfinite(x)])


@dataclass(frozen=True)
class CodeCheck(ValueCheck):
    """A semantic value: a code of exactly ``length`` ASCII digits.

    Attributes:
        length: the digits every code has.
    """

    length: int
    invalid_stat: ClassVar[str] = "malformed"

    def invalid(self, texts: TrimmedText, column: str) -> np.ndarray:  # noqa: D102
        return ~is_code(texts[column], self.length)


@dataclass(frozen=True)
class BuilderCheck(ValueCheck):
    """A value a hierarchy builder must place (:func:`~.builders.invalid_values`).

    The builder generates the hierarchy from the column's domain, which is profiled.

    Attributes:
        builder: the builder's config (``attributes[].builder``).
    """

    builder: Any

    def invalid(self, texts: TrimmedText, column: str) -> np.ndarray:  # noqa: D102
        return invalid_values(self.builder, texts.batch[column], texts[column])

    def summary(self, texts: TrimmedText, column: str) -> list[SummaryRow]:
        """The ``domain``: each distinct value's rows."""
        return _domain(texts, column)


@dataclass(frozen=True)
class TemporalCheck(ValueCheck):
    """A date or timestamp that ``reader`` parses.

    The valid values' range (epoch units) is profiled.

    Attributes:
        reader: how the column's values are read.
    """

    reader: TemporalFormat
    invalid_stat: ClassVar[str] = "unparsed"

    def epoch(self, texts: TrimmedText, column: str) -> tuple[np.ndarray, np.ndarray]:
        """The column in epoch units and its invalid mask, parsed once per batch."""
        epoch, bad = texts.parsed(column, lambda: self.reader.parse(texts.batch[column]))
        return epoch, bad

    def invalid(self, texts: TrimmedText, column: str) -> np.ndarray:  # noqa: D102
        return self.epoch(texts, column)[1]

    def summary(self, texts: TrimmedText, column: str) -> list[SummaryRow]:
        """The ``range`` of the parsed values."""
        epoch, bad = self.epoch(texts, column)
        return _range(epoch[~bad])


@dataclass(frozen=True)
class DomainCheck(ValueCheck):
    """A value of a domain the config declares (an order, a hierarchy's leaves, values).

    Attributes:
        values: the declared values.
    """

    values: frozenset[str]

    def invalid(self, texts: TrimmedText, column: str) -> np.ndarray:  # noqa: D102
        return ~texts.isin(column, self.values)


@dataclass(frozen=True)
class FreeCheck(ValueCheck):
    """A value of an undeclared nominal column: any value is valid; the domain is profiled."""

    def invalid(self, texts: TrimmedText, column: str) -> np.ndarray:  # noqa: D102
        return np.zeros(len(texts.batch), dtype=bool)

    def summary(self, texts: TrimmedText, column: str) -> list[SummaryRow]:
        """The ``domain``: each distinct value's rows."""
        return _domain(texts, column)
