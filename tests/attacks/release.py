"""What an attacker reads from a release folder, and what an attack reports."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml


@dataclass(frozen=True)
class Outcome:
    """An attack's result.

    Attributes:
        rate: the share of targets (rows, groups, records) the attack gets right.
        chance: the share the same attack gets right when what it exploits is absent
            (measured on the same release, see each attack).
        targets: how many targets the rates are over.
    """

    rate: float
    chance: float
    targets: int

    def no_better_than_chance(self, slack: float) -> bool:
        """Whether the rate exceeds the chance level by less than ``slack``."""
        return self.rate <= self.chance + slack


@dataclass
class Release:
    """A release folder as an attacker holds it (every file of it)."""

    folder: Path

    def table(self, name: str = "data") -> pd.DataFrame:
        """A published table, its files in path order and its rows in file order."""
        parts = sorted((self.folder / name).glob("*.parquet")) or sorted(
            (self.folder / name).glob("*.csv")
        )
        frames = [pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p) for p in parts]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def config(self) -> dict[str, Any]:
        """``config.yaml`` (the job's settings as run)."""
        return yaml.safe_load((self.folder / "config.yaml").read_text(encoding="utf-8"))

    def metrics(self) -> dict[str, Any]:
        """``metrics.json``."""
        return json.loads((self.folder / "metrics.json").read_text(encoding="utf-8"))

    def noise(self) -> dict[str, Any]:
        """``noise.json`` (a perturbed release's declared noise), else ``metrics["noise"]``."""
        path = self.folder / "noise.json"
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
        return self.metrics().get("noise") or {}

    def seeds(self) -> list[int]:
        """Every seed the release states (config and metrics), the likeliest first."""
        found = [self.config().get("seed"), self.metrics().get("seed")]
        return list(dict.fromkeys(int(s) for s in found if isinstance(s, int)))


def integer_columns(frame: pd.DataFrame) -> list[str]:
    """Columns whose every value is a whole number (candidate ids)."""
    out = []
    for column in frame.columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        if len(values) and values.notna().all():
            array = values.to_numpy(dtype=float)
            if np.all(array == np.round(array)):
                out.append(str(column))
    return out


def agreement(a: pd.Series, b: pd.Series) -> tuple[float, float]:
    """The share of positions where ``a`` and ``b`` agree, and that share by chance.

    Chance is ``sum_v p(v) q(v)``: the agreement of the same two columns paired at random.
    """
    a = a.astype(str).reset_index(drop=True)
    b = b.astype(str).reset_index(drop=True)
    n = min(len(a), len(b))
    if n == 0:
        return 0.0, 0.0
    a, b = a.iloc[:n], b.iloc[:n]
    p = a.value_counts(normalize=True)
    q = b.value_counts(normalize=True)
    return float((a.to_numpy() == b.to_numpy()).mean()), float(
        (p * q.reindex(p.index, fill_value=0.0)).sum()
    )
