"""Micro-aggregation: each quasi-identifier replaced by its class's centroid (``centroids``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from sparkanon.attributes.dates import published_type
from sparkanon.metrics.registry import ClassBatch
from sparkanon.publications.base import Publisher


class CentroidPublisher(Publisher):
    """Publish each class's centroid (Shi et al. 2024, step 29; continuous columns stay numeric).

    The centroid of every kind is ``kind.centroid`` (the mean, the center mean
    frequency or median rank, the taxonomy or code medoid, the mode), decoded to a
    value of the column (continuous centroids rounded to ``output.decimals``).
    """

    name = "centroids"

    def class_columns(self) -> list[tuple[str, str]]:  # noqa: D102
        return [
            (c, k.code_type)
            for c, k in zip(self.schema.code_columns, self.schema.kinds, strict=True)
        ]

    def block_values(self, b: ClassBatch) -> dict[str, Any]:  # noqa: D102
        return dict(zip(self.schema.code_columns, b.centroids, strict=True))

    def columns(self) -> list[tuple[str, str]]:  # noqa: D102
        qi = [(k.name, published_type(k)) for k in self.schema.kinds]
        return qi + self.passthrough_types

    def published_values(self, values: pd.DataFrame) -> dict[str, Any]:  # noqa: D102
        schema = self.schema
        return {
            kind.name: kind.decode(values[c].to_numpy())
            for c, kind in zip(schema.code_columns, schema.kinds, strict=True)
        }
