"""Raw values as trimmed text: how every encoder and the profile compare values.

A value matches a missing token, a declared domain or a code pattern after its
surrounding whitespace is removed. Trimming row by row costs a Python call per
value; a column of people's attributes holds few distinct values, so
:func:`trimmed_text` trims each distinct value once and spreads the results back.
A batch function holds its batch as :class:`TrimmedText`, each column converted once
and shared by the missing-token test (:func:`missing_mask`), the value checks
(:mod:`sparkanon.attributes.checks`) and the encoders.

Both engines hand a batch function the same values for Spark's native types, and
each reads as the same text: a boolean (``bool``, or an object column of ``True``,
``False`` and nulls) as ``true``/``false``; an integer of any width as its digits,
also when the column holds nulls (a nullable ``Int8`` ... ``Int64`` column); a
decimal (``decimal.Decimal``) as its plain text, never in exponent notation. Text
read from a CSV file is kept as it is (``True`` stays ``True``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd


def value_text(value: Any) -> Any:
    """One distinct value's text before trimming: booleans and decimals spelt as Spark does.

    Args:
        value: a value of a column (not null).

    Returns:
        ``"true"``/``"false"`` for a boolean, the plain text of a decimal (``1E+2`` is
        ``100``), any other value unchanged (converted to text by the caller).
    """
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    return value


def row_text(values: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """The column row by row in :func:`distinct_text`'s form: each row its own text.

    Args:
        values: a column of any type.

    Returns:
        ``(codes, texts)``: ``codes`` is each row's position (``-1`` for a null) and
        ``texts`` (index ``0..``) each row's ``astype("string")`` text, trimmed.
    """
    text = values.astype("string").str.strip().reset_index(drop=True)
    codes = np.where(values.isna().to_numpy(), -1, np.arange(len(values)))
    return codes.astype(np.int64), text


def distinct_text(values: pd.Series, spelled: bool = True) -> tuple[np.ndarray, pd.Series]:
    """The column as codes into its distinct values' trimmed text (:func:`trimmed_text`).

    Args:
        values: a column of any type.
        spelled: booleans and decimals spelt as Spark does (:func:`value_text`), as the
            profile and the encoders read input values; ``False`` keeps pandas' own text of
            every value (``astype("string")``: ``True``), as a published value is read.

    Returns:
        ``(codes, texts)``: per row the position of its value in ``texts`` (``-1`` for a
        null), and a ``string`` series (index ``0..``) of each distinct value's trimmed
        text. Two values may trim to one text (``" a"`` and ``"a"``); a float column
        is taken row by row (``0.0`` and ``-0.0`` are one value to a hash but two texts).

    Raises:
        TypeError: the column holds unhashable values (lists).
    """
    if pd.api.types.is_float_dtype(values):
        return row_text(values)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if spelled and (pd.api.types.is_bool_dtype(values) or uniques.dtype == object):
        uniques = pd.array([value_text(v) for v in uniques], dtype=object)
    return np.asarray(codes, dtype=np.int64), pd.Series(uniques).astype("string").str.strip()


def trimmed_text(values: pd.Series) -> pd.Series:
    """The values as strings without surrounding whitespace; nulls stay null.

    Equal to ``values.astype("string").str.strip()``, computed once per distinct value
    (:func:`distinct_text`), with booleans and decimals spelt by :func:`value_text`.

    Args:
        values: a column of any type.

    Returns:
        A ``string`` series with the same index.
    """
    codes, distinct = distinct_text(values)
    taken = distinct.array.take(codes, allow_fill=True)
    return pd.Series(taken, index=values.index, dtype="string")


class TrimmedText:
    """A batch's columns as trimmed strings, each column converted at most once.

    Profiling and encoding compare values as trimmed text (missing tokens, declared
    domains, codes); converting a column costs about as much as everything else done
    with it, so one batch function converts each column once and reuses it.
    Continuous columns read as numbers are compared as numbers where that gives the
    same answer (:func:`missing_mask`, :mod:`sparkanon.attributes.checks`).

    Args:
        batch: the rows.
    """

    def __init__(self, batch: pd.DataFrame) -> None:
        self.batch = batch
        self._distinct: dict[str, tuple[np.ndarray, pd.Series]] = {}
        self._text: dict[str, pd.Series] = {}
        self._parsed: dict[str, tuple[np.ndarray, ...]] = {}

    def distinct(self, column: str) -> tuple[np.ndarray, pd.Series]:
        """The column as codes into its distinct values' trimmed text (``-1``: null).

        See :func:`distinct_text`; what holds of a value holds of its rows, so a test or
        an encoding of the column runs on its few distinct values (:meth:`isin`,
        :meth:`value_counts`, :meth:`per_value`).
        """
        got = self._distinct.get(column)
        if got is None:
            got = distinct_text(self.batch[column])
            self._distinct[column] = got
        return got

    def __getitem__(self, column: str) -> pd.Series:
        """The column's values as trimmed strings (nulls stay null)."""
        text = self._text.get(column)
        if text is None:
            codes, distinct = self.distinct(column)
            taken = distinct.array.take(codes, allow_fill=True)
            text = pd.Series(taken, index=self.batch.index, dtype="string")
            self._text[column] = text
        return text

    def isin(self, column: str, values: Collection[str]) -> np.ndarray:
        """Whether each row's trimmed text is one of ``values`` (a null never is)."""
        codes, distinct = self.distinct(column)
        hit = np.append(distinct.isin(list(values)).to_numpy(dtype=bool), False)
        return hit[codes]  # code -1 reads the appended False

    def value_counts(self, column: str) -> pd.Series:
        """Rows per trimmed text (nulls left out), as ``Series.value_counts`` counts them."""
        codes, distinct = self.distinct(column)
        counts = np.bincount(codes[codes >= 0], minlength=len(distinct))
        summed = pd.Series(counts, index=distinct.array).groupby(level=0).sum()
        return summed[summed > 0]

    def per_value(
        self, column: str, fn: Callable[[pd.Series], tuple[np.ndarray, ...]]
    ) -> tuple[np.ndarray, ...]:
        """``fn`` of the column's trimmed text, computed once per distinct value.

        ``fn`` must treat each value alone (an encoder); its arrays are spread back to the
        rows. A column holding nulls is passed whole, row by row.
        """
        codes, distinct = self.distinct(column)
        if len(codes) and codes.min() < 0:
            return fn(self[column].reset_index(drop=True))
        return tuple(np.asarray(a)[codes] for a in fn(distinct))

    def numeric(self, column: str) -> bool:
        """Whether the column holds numbers (not text, not booleans)."""
        s = self.batch[column]
        return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)

    def parsed(
        self, column: str, parse: Callable[[], tuple[np.ndarray, ...]]
    ) -> tuple[np.ndarray, ...]:
        """The column's values read by ``parse`` (arrays of one entry per row), read once.

        A column has one reading (its value check's: numbers, epoch units); ``parse`` is
        called the first time only, and its arrays follow :meth:`rows`.
        """
        got = self._parsed.get(column)
        if got is None:
            got = parse()
            self._parsed[column] = got
        return got

    def rows(self, keep: np.ndarray) -> TrimmedText:
        """The rows where ``keep`` holds, with the columns converted so far."""
        out = TrimmedText(self.batch[keep])
        out._distinct = {c: (codes[keep], d) for c, (codes, d) in self._distinct.items()}
        out._text = {c: t[keep] for c, t in self._text.items()}
        out._parsed = {c: tuple(a[keep] for a in got) for c, got in self._parsed.items()}
        return out


def _numeric_tokens(tokens: frozenset[str]) -> bool:
    """Whether a missing token could be a number's text (then numbers are compared as text)."""
    for token in tokens:
        try:
            float(token)
        except ValueError:
            continue
        return True
    return False


def missing_mask(
    texts: TrimmedText, columns: Sequence[str], tokens: frozenset[str]
) -> pd.DataFrame:
    """Per column, whether each row's value is null or a missing token (after trimming).

    A column read as numbers holds no token unless a token is a number's text.
    """
    batch = texts.batch
    numeric_tokens = _numeric_tokens(tokens)
    out = {}
    for c in columns:
        missing = batch[c].isna().to_numpy(dtype=bool)
        if numeric_tokens or not texts.numeric(c):
            missing |= texts.isin(c, tokens)
        out[c] = missing
    return pd.DataFrame(out, index=batch.index)
