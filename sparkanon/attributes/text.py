"""Raw values as trimmed text: how every encoder and the profile compare values.

A value matches a missing token, a declared domain or a code pattern after its
surrounding whitespace is removed. Trimming row by row costs a Python call per
value; a column of people's attributes holds few distinct values, so
:func:`trimmed_text` trims each distinct value once and spreads the results back.
"""

from __future__ import annotations

import pandas as pd


def trimmed_text(values: pd.Series) -> pd.Series:
    """The values as strings without surrounding whitespace; nulls stay null.

    Equal to ``values.astype("string").str.strip()``, computed once per distinct value
    (floats row by row: ``0.0`` and ``-0.0`` are one value to a hash but two texts).

    Args:
        values: a column of any type.

    Returns:
        A ``string`` series with the same index.
    """
    if pd.api.types.is_float_dtype(values):
        return values.astype("string").str.strip()
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    distinct = pd.Series(uniques).astype("string").str.strip().array
    return pd.Series(distinct.take(codes, allow_fill=True), index=values.index, dtype="string")
