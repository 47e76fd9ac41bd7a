"""Raw values as trimmed text: how every encoder and the profile compare values.

A value matches a missing token, a declared domain or a code pattern after its
surrounding whitespace is removed. Trimming row by row costs a Python call per
value; a column of people's attributes holds few distinct values, so
:func:`trimmed_text` trims each distinct value once and spreads the results back.

Both engines hand a batch function the same values for Spark's native types, and
each reads as the same text: a boolean (``bool``, or an object column of ``True``,
``False`` and nulls) as ``true``/``false``; an integer of any width as its digits,
also when the column holds nulls (a nullable ``Int8`` ... ``Int64`` column); a
decimal (``decimal.Decimal``) as its plain text, never in exponent notation. Text
read from a CSV file is kept as it is (``True`` stays ``True``).
"""

from __future__ import annotations

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
