"""Local recoding: each quasi-identifier replaced by its class's generalized value."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sparkanon.metrics.registry import ClassBatch
from sparkanon.publications.base import Publisher


def generalized_column(i: int) -> str:
    """Name of the summary column holding quasi-identifier ``i``'s generalized value."""
    return f"_g{i}"


class GeneralizedPublisher(Publisher):
    """Publish each class's generalized values (``generalized``: Chai and Feng 2015, Mondrian).

    Per kind (:meth:`sparkanon.attributes.kinds.Kind.generalized`): a continuous or
    ordinal range ``[lo, hi]`` (outward-rounded with ``output.decimals``), the lowest
    common ancestor in a taxonomy, a nominal value or ``*``, a code prefix and ``*``.
    Every published quasi-identifier is a string.
    """

    name = "generalized"

    def class_columns(self) -> list[tuple[str, str]]:  # noqa: D102
        return [(generalized_column(i), "string") for i in range(len(self.schema.kinds))]

    def block_values(self, b: ClassBatch) -> dict[str, Any]:
        """Every class's generalized values, one ``kind.generalized`` call per distinct range.

        A generalized value depends only on the class's lowest and highest code
        (:meth:`~sparkanon.attributes.kinds.Kind.generalized`), and many classes of a
        block share a range, so each distinct ``(lo, hi)`` pair is generalized once.
        """
        out: dict[str, Any] = {}
        for i, (kind, (lo, hi)) in enumerate(zip(b.kinds, b.ranges, strict=True)):
            pairs, which = np.unique(np.stack([lo, hi], axis=1), axis=0, return_inverse=True)
            values = np.array([kind.generalized(pair) for pair in pairs], dtype=object)
            out[generalized_column(i)] = values[which.reshape(-1)]
        return out

    def columns(self) -> list[tuple[str, str]]:  # noqa: D102
        return [(k.name, "string") for k in self.schema.kinds] + self.passthrough_types

    def published_values(self, values: pd.DataFrame) -> dict[str, Any]:  # noqa: D102
        return {
            kind.name: values[generalized_column(i)].astype(object).to_numpy()
            for i, kind in enumerate(self.schema.kinds)
        }
