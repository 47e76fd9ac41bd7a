"""Stage ``verify``: every published equivalence class checked against the model.

The published table is grouped by its published quasi-identifier values, not by the
algorithm's classes: two classes that publish the same values form one group, and
that group is what a reader of the table sees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.attributes.schema import LEVEL, Schema, SensitiveLevels
from sparkanon.engine.base import Engine, Table
from sparkanon.models.base import HPKAnonymity
from sparkanon.stages._common import one_row


def make_level_fn(
    sensitive: SensitiveLevels, group_columns: Sequence[str]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Add the sensitivity level of each published row (for verification)."""

    def level(batch: pd.DataFrame) -> pd.DataFrame:
        _, lvl, invalid = sensitive.encode(batch[sensitive.name])
        out = batch[list(group_columns) + [sensitive.name]].copy()
        out[LEVEL] = np.where(invalid, -1, lvl)
        return out

    return level


def make_check_fn(model: HPKAnonymity) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Flag published groups that violate the model."""

    def check(groups: pd.DataFrame) -> pd.DataFrame:
        ok = model.satisfied(
            groups["size"].to_numpy(), groups["n_values"].to_numpy(), groups["n_levels"].to_numpy()
        )
        return pd.DataFrame(
            {"size": groups["size"].to_numpy(dtype=np.int64), "violation": (~ok).astype(np.int64)}
        )

    return check


def verify(engine: Engine, published: Table, schema: Schema, model: HPKAnonymity) -> dict[str, Any]:
    """Group the published table by its published quasi-identifiers and check every group.

    Returns:
        ``violations`` (groups failing the model), ``groups`` and ``rows``.
    """
    qi = schema.qi_names
    with_level = engine.map_batches(
        published,
        make_level_fn(schema.sensitive, qi),
        [(c, t) for c, t in engine.schema_of(published) if c in qi]
        + [(schema.sensitive.name, "string"), (LEVEL, "long")],
    )
    groups = engine.aggregate(
        with_level,
        qi,
        {
            "size": ("count", LEVEL),
            "n_values": ("nunique", schema.sensitive.name),
            "n_levels": ("nunique", LEVEL),
        },
    )
    flagged = engine.map_batches(
        groups, make_check_fn(model), [("size", "long"), ("violation", "long")]
    )
    return one_row(
        engine,
        flagged,
        {"violations": ("sum", "violation"), "groups": ("count", "size"), "rows": ("sum", "size")},
    )
