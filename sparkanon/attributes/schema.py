"""The encoded schema: every quasi-identifier's kind plus the sensitive levels.

The schema is built once on the driver from the config and the input's global
profile (continuous ranges, nominal domains) and shipped to the executors; the
per-block algorithms, the encoder and the publisher all read it.

Encoded tables carry these internal columns (all ``_``-prefixed):
``_rid`` row id, ``_q{i}`` code of quasi-identifier ``i``, ``_s`` sensitive
value code, ``_lvl`` sensitivity level, ``_block`` block id, ``_class`` class id.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sparkanon.attributes.kinds import Kind
from sparkanon.attributes.text import trimmed_text

RID = "_rid"
"""Column: the row id, unique over the input (the key every deterministic order uses)."""
SENS = "_s"
"""Column: the sensitive value's code."""
LEVEL = "_lvl"
"""Column: the sensitive value's sensitivity level."""
BLOCK = "_block"
"""Column: the block a row is clustered in."""
CLASS = "_class"
"""Column: the row's equivalence class (group), ``-1`` while it has none."""


def code_column(i: int) -> str:
    """Name of the encoded column of quasi-identifier ``i``."""
    return f"_q{i}"


@dataclass(frozen=True)
class SensitiveLevels:
    """The sensitive attribute, its values and their levels (Shi et al. 2024, section 1.4).

    A job without ``sensitive.levels`` gets one implicit level holding every value
    (``has_levels`` false): the level-based parts (HEC, PSI, EPP) then see a single
    level, and models that need levels are refused at load.

    Attributes:
        name: the column name.
        values: sensitive values; a value's code is its index.
        level_of: level index of each value code.
        level_names: label of each level, low to high.
        weights: ``w_i`` of each level (eq. 2).
        has_levels: whether the config declared the levels.
        order: a declared low-to-high order of the values (``sensitive.values``), for
            ordered ground distances; ``None`` otherwise.
    """

    name: str
    values: tuple[str, ...]
    level_of: np.ndarray
    level_names: tuple[str, ...]
    weights: np.ndarray
    has_levels: bool = True
    order: tuple[str, ...] | None = None

    @property
    def declared_level_of(self) -> np.ndarray | None:
        """``level_of`` when the config declared levels, else ``None`` (for class summaries)."""
        return self.level_of if self.has_levels else None

    @property
    def n_levels(self) -> int:
        """Number of levels."""
        return len(self.level_names)

    def encode(self, raw: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Encode raw sensitive values.

        Returns:
            ``(codes, levels, invalid)``: value codes, level indices and a mask
            of values that belong to no level.
        """
        lookup = {v: i for i, v in enumerate(self.values)}
        mapped = trimmed_text(raw).map(lookup).astype("Float64")
        invalid = mapped.isna().to_numpy()
        codes = mapped.fillna(0).to_numpy(dtype=np.int64)
        return codes, self.level_of[codes], invalid


@dataclass(frozen=True)
class Schema:
    """Quasi-identifier kinds (in config order) and the sensitive levels."""

    kinds: tuple[Kind, ...]
    sensitive: SensitiveLevels

    @property
    def code_columns(self) -> list[str]:
        """Names of the encoded quasi-identifier columns."""
        return [code_column(i) for i in range(len(self.kinds))]

    @property
    def qi_names(self) -> list[str]:
        """Original quasi-identifier column names."""
        return [k.name for k in self.kinds]
