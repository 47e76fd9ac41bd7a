"""Quasi-identifier kinds: encoding, distances and centroids (seed 000, section 1.5).

Every quasi-identifier is encoded to one numeric code per row:

* continuous: the value normalised to [0, 1] over the whole input (eq. 3);
  distance ``|a - b|`` (eq. 4); centroid the mean (eq. 5).
* ordinal: the rank in the declared order, 0-based; distance
  ``|a - b| / (V - 1)`` with ``V`` ranks (eq. 6, ``|B|`` is the span of the
  declared order, not of the data); centroid by the "center mean frequency" rule
  (definition 3, eq. 7-13).
* categorical: the leaf's depth-first index in its taxonomy; distance
  ``u(a, b) / root_c`` (eq. 14); centroid the class medoid, the value present in
  the class whose summed distance to all the class's values is least (eq. 15).
* nominal (boolean): an index into the domain; distance 0 if equal else 1
  (eq. 16); centroid the most frequent value (eq. 17).

Ties in a centroid rule go to the lowest code, so results are deterministic.

Discrete kinds work on histograms: a class is a vector of counts per code, so the
centroid and information loss of many candidate classes are computed at once
(:meth:`DiscreteKind.centroids`, :meth:`DiscreteKind.losses`). Every kind also
exposes integer *bins* used by the Mondrian-style blocking.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sparkanon.attributes.hierarchy import Taxonomy

CONTINUOUS_BINS = 1024
"""Continuous values are quantised into this many bins for blocking cuts only."""


@dataclass(frozen=True)
class Kind(ABC):
    """One quasi-identifier: how it is encoded, compared and summarised.

    Attributes:
        name: the column name.
        weight: weight of this attribute in the tuple distance (eq. 18).
    """

    name: str
    weight: float

    @property
    @abstractmethod
    def discrete(self) -> bool:
        """Whether codes are small non-negative integers (histogram-based)."""

    @property
    @abstractmethod
    def n_bins(self) -> int:
        """Number of blocking bins."""

    @abstractmethod
    def encode(self, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Encode raw values.

        Args:
            values: the raw column (strings or numbers).

        Returns:
            ``(codes, invalid)``: the codes and a boolean mask of values that
            cannot be encoded (their codes are meaningless).
        """

    @abstractmethod
    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Published values of centroid codes."""

    @abstractmethod
    def distance_to(self, codes: np.ndarray, centre: float) -> np.ndarray:
        """Unweighted normalised distance of each code to one centre code."""

    @abstractmethod
    def bins(self, codes: np.ndarray) -> np.ndarray:
        """Integer blocking bin of each code, in ``[0, n_bins)``."""

    @abstractmethod
    def bin_span(self, lo: int, hi: int) -> float:
        """Normalised width, in [0, 1], of a block whose bins range over ``[lo, hi]``."""

    def cut_candidates(self, lo: int, hi: int) -> list[int] | None:
        """Allowed cut bins inside ``[lo, hi]``; ``None`` allows any bin."""
        return None

    @abstractmethod
    def centroid(self, codes: np.ndarray) -> float:
        """Centroid code of one class."""

    def loss(self, codes: np.ndarray) -> float:
        """Information loss of one class on this attribute: sum of distances to its centroid."""
        if len(codes) == 0:
            return 0.0
        return float(self.distance_to(codes, self.centroid(codes)).sum())


@dataclass(frozen=True)
class ContinuousKind(Kind):
    """A numeric attribute normalised with the whole input's range (eq. 3-5).

    Attributes:
        low: minimum over the whole input.
        high: maximum over the whole input.
        decimals: rounding of published centroids (``None``: none).
    """

    low: float = 0.0
    high: float = 1.0
    decimals: int | None = None

    @property
    def discrete(self) -> bool:  # noqa: D102
        return False

    @property
    def n_bins(self) -> int:  # noqa: D102
        return CONTINUOUS_BINS

    @property
    def _width(self) -> float:
        return self.high - self.low if self.high > self.low else 1.0

    def encode(self, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:  # noqa: D102
        numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        invalid = np.isnan(numeric)
        codes = (numeric - self.low) / self._width
        return np.where(invalid, 0.0, codes), invalid

    def decode(self, codes: np.ndarray) -> np.ndarray:  # noqa: D102
        raw = self.low + np.asarray(codes, dtype=float) * self._width
        return raw if self.decimals is None else np.round(raw, self.decimals)

    def distance_to(self, codes: np.ndarray, centre: float) -> np.ndarray:  # noqa: D102
        return np.abs(np.asarray(codes, dtype=float) - centre)

    def bins(self, codes: np.ndarray) -> np.ndarray:  # noqa: D102
        b = np.floor(np.asarray(codes, dtype=float) * CONTINUOUS_BINS).astype(np.int64)
        return np.clip(b, 0, CONTINUOUS_BINS - 1)

    def bin_span(self, lo: int, hi: int) -> float:  # noqa: D102
        return (hi - lo) / CONTINUOUS_BINS

    def centroid(self, codes: np.ndarray) -> float:  # noqa: D102
        return float(np.mean(codes))

    def losses_with_each(self, members: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """Information loss of ``members + {c}`` for every candidate ``c``.

        Args:
            members: codes of the current class.
            candidates: codes of the candidate rows.

        Returns:
            One loss per candidate (eq. 20 restricted to this attribute).
        """
        g = len(members)
        means = (members.sum() + candidates) / (g + 1)
        inside = np.abs(members[:, None] - means[None, :]).sum(axis=0) if g else 0.0
        return inside + np.abs(candidates - means)


@dataclass(frozen=True)
class DiscreteKind(Kind):
    """A kind whose codes are ``0..V-1`` and whose distances form a ``V x V`` matrix.

    Attributes:
        labels: the published value of each code.
        matrix: ``matrix[a, b]`` the normalised distance between codes.
    """

    labels: tuple[str, ...] = ()
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)

    @property
    def discrete(self) -> bool:  # noqa: D102
        return True

    @property
    def size(self) -> int:
        """Number of codes ``V``."""
        return len(self.labels)

    @property
    def n_bins(self) -> int:  # noqa: D102
        return max(self.size, 1)

    def encode(self, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:  # noqa: D102
        lookup = {label: i for i, label in enumerate(self.labels)}
        text = values.astype("string").str.strip()
        mapped = text.map(lookup).astype("Float64")
        invalid = mapped.isna().to_numpy()
        codes = mapped.fillna(0).to_numpy(dtype=np.int64)
        return codes, invalid

    def decode(self, codes: np.ndarray) -> np.ndarray:  # noqa: D102
        return np.asarray(self.labels, dtype=object)[np.asarray(codes, dtype=np.int64)]

    def distance_to(self, codes: np.ndarray, centre: float) -> np.ndarray:  # noqa: D102
        return self.matrix[np.asarray(codes, dtype=np.int64), int(centre)]

    def bins(self, codes: np.ndarray) -> np.ndarray:  # noqa: D102
        return np.asarray(codes, dtype=np.int64)

    def bin_span(self, lo: int, hi: int) -> float:  # noqa: D102
        return float(self.matrix[lo, hi]) if self.size else 0.0

    def histogram(self, codes: np.ndarray) -> np.ndarray:
        """Counts per code of one class."""
        return np.bincount(np.asarray(codes, dtype=np.int64), minlength=self.size).astype(float)

    @abstractmethod
    def centroids(self, hists: np.ndarray) -> np.ndarray:
        """Centroid code of each class given as a row of counts (``m x V``)."""

    def losses(self, hists: np.ndarray, centres: np.ndarray | None = None) -> np.ndarray:
        """Information loss of each class (row of counts) against its centroid."""
        if centres is None:
            centres = self.centroids(hists)
        return np.einsum("mv,mv->m", hists, self.matrix[:, centres].T)

    def losses_with_each_value(self, hist: np.ndarray) -> np.ndarray:
        """Loss of the class ``hist`` after adding one row of code ``v``, for every ``v``."""
        return self.losses(hist[None, :] + np.eye(self.size))

    def losses_with_each(self, members: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """Information loss of ``members + {c}`` for every candidate code ``c``."""
        return self.losses_with_each_value(self.histogram(members))[
            np.asarray(candidates, dtype=np.int64)
        ]

    def centroid(self, codes: np.ndarray) -> float:  # noqa: D102
        return float(self.centroids(self.histogram(codes)[None, :])[0])


@dataclass(frozen=True)
class OrdinalKind(DiscreteKind):
    """Graded values in a declared order (eq. 6-13)."""

    def centroids(self, hists: np.ndarray) -> np.ndarray:
        """Center mean frequency rule (definition 3, eq. 7-13).

        The mean rank ``K`` (eq. 8) is rounded up when fewer rows lie below it
        than above it (eq. 9-12), down when more lie below, and to the nearest
        rank (``floor(K + 1/2)``, eq. 13) when as many lie on either side.
        """
        ranks = np.arange(self.size, dtype=float)
        total = hists.sum(axis=1)
        mean = (hists @ ranks) / np.where(total > 0, total, 1)
        below = (hists * (ranks[None, :] < mean[:, None])).sum(axis=1)
        above = (hists * (ranks[None, :] > mean[:, None])).sum(axis=1)
        centre = np.where(
            below < above,
            np.ceil(mean),
            np.where(below > above, np.floor(mean), np.floor(mean + 0.5)),
        )
        return np.clip(centre, 0, self.size - 1).astype(np.int64)


@dataclass(frozen=True)
class CategoricalKind(DiscreteKind):
    """Values that are leaves of a taxonomy tree (eq. 14-15).

    Attributes:
        taxonomy: the tree; codes are its depth-first leaf indices.
    """

    taxonomy: Taxonomy | None = None

    def cut_candidates(self, lo: int, hi: int) -> list[int] | None:
        """Cuts between the child subtrees of the range's common ancestor (keeps siblings)."""
        assert self.taxonomy is not None
        return self.taxonomy.subtree_boundaries(lo, hi)

    def centroids(self, hists: np.ndarray) -> np.ndarray:
        """Medoid: the present value with the least summed distance to the class (eq. 15)."""
        # Costs in whole levels (u(a, b), not u / root_c) are exact integers, so
        # ties go to the lowest code instead of to floating-point noise.
        height = self.taxonomy.height if self.taxonomy is not None else 1
        cost = hists @ np.rint(self.matrix * height)
        cost = np.where(hists > 0, cost, np.inf)
        return np.argmin(cost, axis=1).astype(np.int64)


@dataclass(frozen=True)
class NominalKind(DiscreteKind):
    """Boolean or nominal values: 0/1 distance, mode centroid (eq. 16-17)."""

    def centroids(self, hists: np.ndarray) -> np.ndarray:
        """Most frequent value (eq. 17); ties to the lowest code."""
        return np.argmax(hists, axis=1).astype(np.int64)


def ordinal_kind(name: str, weight: float, order: tuple[str, ...]) -> OrdinalKind:
    """Build an ordinal kind from its declared order (lowest rank first)."""
    ranks = np.arange(len(order), dtype=float)
    span = max(len(order) - 1, 1)
    matrix = np.abs(ranks[:, None] - ranks[None, :]) / span
    return OrdinalKind(name=name, weight=weight, labels=tuple(order), matrix=matrix)


def categorical_kind(name: str, weight: float, taxonomy: Taxonomy) -> CategoricalKind:
    """Build a categorical kind from its taxonomy."""
    return CategoricalKind(
        name=name,
        weight=weight,
        labels=taxonomy.leaves,
        matrix=taxonomy.distance_matrix(),
        taxonomy=taxonomy,
    )


def nominal_kind(name: str, weight: float, values: tuple[str, ...]) -> NominalKind:
    """Build a nominal kind over a domain of values."""
    n = len(values)
    matrix = 1.0 - np.eye(n)
    return NominalKind(name=name, weight=weight, labels=tuple(values), matrix=matrix)
