"""Privacy models: small frozen classes that check class summaries.

A *class summary* is what verification computes per published equivalence
class: its row count, its number of distinct sensitive values and its number of
distinct sensitivity levels. Each model checks those (vectorised over many
classes) and declares whether it is monotonic: if two classes satisfy it, so
does their union (true for all models here), which is what lets two clusters
that publish the same centroid share a group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HPKAnonymity:
    """(H,p,k)-anonymity (seed 000, definition 7).

    Every class has at least ``k`` rows, at least ``p`` distinct sensitive
    values and at least ``h`` distinct sensitivity levels, ``h <= p <= k``.
    p-sensitive k-anonymity is the case ``h = 1``, k-anonymity ``h = p = 1``.
    """

    k: int
    p: int = 1
    h: int = 1
    name: str = "hpk"

    monotonic = True

    def satisfied(
        self, size: np.ndarray, distinct_values: np.ndarray, distinct_levels: np.ndarray
    ) -> np.ndarray:
        """Whether each class satisfies the model.

        Args:
            size: rows per class.
            distinct_values: distinct sensitive values per class.
            distinct_levels: distinct sensitivity levels per class.

        Returns:
            A boolean array, one entry per class.
        """
        return (
            (np.asarray(size) >= self.k)
            & (np.asarray(distinct_values) >= self.p)
            & (np.asarray(distinct_levels) >= self.h)
        )

    def describe(self) -> dict[str, int | str]:
        """The model and its parameters, as reported in metrics.json."""
        return {"name": self.name, "k": self.k, "p": self.p, "h": self.h}


def model_from_config(name: str, k: int, p: int, h: int) -> HPKAnonymity:
    """Build the model named in the config (``hpk``, ``p_sensitive`` or ``k``)."""
    if name == "hpk":
        return HPKAnonymity(k=k, p=p, h=h, name="hpk")
    if name == "p_sensitive":
        return HPKAnonymity(k=k, p=p, h=1, name="p_sensitive")
    return HPKAnonymity(k=k, p=1, h=1, name="k")
