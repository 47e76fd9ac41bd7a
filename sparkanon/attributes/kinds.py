"""Quasi-identifier kinds: encoding, distances and centroids (Shi et al. 2024, section 1.5).

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

Yang et al. 2014 (section 3.2) adds: ordinal weights between consecutive ranks
(eq. 4) and a median centroid (eq. 5, :class:`OrdinalKind`); nominal values as
vectors (Table 4, eq. 6-7, :class:`VectorNominalKind`); semantic codes on a
code hierarchy tree (definition 6-7, eq. 8-10,
:class:`sparkanon.attributes.semantic.SemanticKind`).

Ties in a centroid rule go to the lowest code, so results are deterministic.

Discrete kinds work on histograms: a class is a vector of counts per code, so the
centroid and information loss of many candidate classes are computed at once
(:meth:`DiscreteKind.centroids`, :meth:`DiscreteKind.losses`). Every kind also
exposes integer *bins* used by the Mondrian-style blocking.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR

import numpy as np
import pandas as pd

from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.intervals import published_number, published_range, round_bound
from sparkanon.attributes.text import trimmed_text

CONTINUOUS_BINS = 1024
"""Continuous values are quantised into this many bins for blocking cuts only."""
SUPPRESSED = "*"
"""Generalized value of a nominal attribute whose class holds several values."""


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
    def code_type(self) -> str:
        """Column type of the codes in encoded and summary tables: ``long`` or ``double``."""
        return "long" if self.discrete else "double"

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

    def bin_distances(self, bins: np.ndarray) -> np.ndarray:
        """Normalised distance between every pair of the given blocking bins (``B x B``)."""
        b = [int(x) for x in bins]
        return np.array([[self.bin_span(min(x, y), max(x, y)) for y in b] for x in b])

    @abstractmethod
    def centroid(self, codes: np.ndarray) -> float:
        """Centroid code of one class."""

    def loss(self, codes: np.ndarray) -> float:
        """Information loss of one class on this attribute: sum of distances to its centroid."""
        if len(codes) == 0:
            return 0.0
        return float(self.distance_to(codes, self.centroid(codes)).sum())

    def losses_of(
        self, groups: list[np.ndarray], extra: float | np.ndarray | None = None
    ) -> np.ndarray:
        """Information loss of many classes, each with the codes ``extra`` added when given.

        The default calls :meth:`loss` per class; kinds with a faster batch
        rule override it.

        Args:
            groups: the codes of each class.
            extra: one code, or an array of codes, added to every class
                (``None``: none).

        Returns:
            One loss per class.
        """
        if extra is None:
            return np.array([self.loss(g) for g in groups], dtype=float)
        return np.array(
            [self.loss(np.concatenate([g, np.atleast_1d(extra).astype(g.dtype)])) for g in groups],
            dtype=float,
        )

    def generalized(self, codes: np.ndarray) -> str:
        """Published generalized value of one class (``output.publish: generalized``).

        Every kind's value depends only on the class's lowest and highest code (a
        range, a lowest common ancestor, a single value or ``*``, a code prefix): the
        publisher generalizes each distinct ``(lo, hi)`` pair of a block once.

        Args:
            codes: the codes of the class's rows (at least one).

        Returns:
            The value that replaces this attribute in every row of the class.
        """
        raise NotImplementedError(
            f"attribute {self.name!r}: kind {type(self).__name__} has no generalized value; "
            "publish centroids (output.publish: centroids)"
        )

    def ncp(self, codes: np.ndarray) -> float:
        """Normalised certainty penalty of one class on this attribute, in [0, 1].

        Xu et al. 2006, "Utility-based anonymization using local recoding":
        the share of the attribute's domain that the class's generalized value covers.

        Args:
            codes: the codes of the class's rows.

        Returns:
            0 when the class publishes one exact value, 1 when it covers the whole domain.
        """
        raise NotImplementedError(
            f"attribute {self.name!r}: kind {type(self).__name__} has no NCP; "
            "the NCP/GCP metrics and kl_cluster need it"
        )


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

    def raw(self, codes: np.ndarray) -> np.ndarray:
        """Raw values of codes, unrounded."""
        return self.low + np.asarray(codes, dtype=float) * self._width

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Raw values of centroid codes, rounded to the nearest at ``decimals`` when set."""
        raw = self.raw(codes)
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

    def losses_of(
        self, groups: list[np.ndarray], extra: float | np.ndarray | None = None
    ) -> np.ndarray:
        """Loss (eq. 20: summed distance to the mean) of many classes in one pass.

        All classes are concatenated and summed per class with ``np.bincount``
        instead of one :meth:`loss` call per class.

        Args:
            groups: the codes of each class.
            extra: one code, or an array of codes, added to every class.

        Returns:
            One loss per class (0 for an empty class).
        """
        m = len(groups)
        if m == 0:
            return np.zeros(0)
        added = np.zeros(0) if extra is None else np.atleast_1d(np.asarray(extra, dtype=float))
        lengths = np.array([len(g) for g in groups], dtype=np.int64)
        codes = np.concatenate([np.asarray(g, dtype=float) for g in groups] + [np.tile(added, m)])
        label = np.concatenate(
            [np.repeat(np.arange(m), lengths), np.repeat(np.arange(m), len(added))]
        )
        sizes = lengths + len(added)
        means = np.bincount(label, weights=codes, minlength=m) / np.maximum(sizes, 1)
        return np.bincount(label, weights=np.abs(codes - means[label]), minlength=m)

    def generalized(self, codes: np.ndarray) -> str:
        """``[lo, hi]`` in raw units, or the single value when both bounds are equal.

        The range is written by :func:`~sparkanon.attributes.intervals.published_range`.
        With ``decimals`` the range is widened to that many decimal places, the
        low bound rounded down and the high bound up, so it still contains every
        value of the class: values 53.68 and 522.32 publish ``[53, 523]`` at
        ``decimals: 0``. A single value that is not on that grid publishes the
        grid interval around it (53.68 publishes ``[53, 54]``).
        """
        c = np.asarray(codes, dtype=float)
        if c.size == 0:
            raise ValueError(f"attribute {self.name!r}: an empty class has no generalized value")
        lo, hi = (float(v) for v in self.raw(np.array([c.min(), c.max()])))
        if self.decimals is not None:
            lo = round_bound(lo, self.decimals, ROUND_FLOOR)
            hi = round_bound(hi, self.decimals, ROUND_CEILING)
        return published_range(published_number(lo), published_number(hi))

    def ncp(self, codes: np.ndarray) -> float:
        """``max - min`` of the codes, already normalised by the whole input's range."""
        c = np.asarray(codes, dtype=float)
        if c.size == 0:
            return 0.0
        return float(min(max(c.max() - c.min(), 0.0), 1.0))

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
        text = trimmed_text(values)
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


ORDINAL_CENTROIDS = ("mean_frequency", "median")
"""Centroid rules of ordinal attributes (``attributes[].centroid``)."""


@dataclass(frozen=True)
class OrdinalKind(DiscreteKind):
    """Graded values in a declared order (Shi et al. 2024, eq. 6-13, Yang et al. 2014, eq. 4-5).

    The distance matrix holds Yang et al. 2014's eq. 4 (weights between consecutive
    ranks; all 1 gives Shi et al. 2024's eq. 6), see :func:`ordinal_kind`.

    Attributes:
        rule: the centroid rule, ``mean_frequency`` (Shi et al. 2024) or ``median``
            (Yang et al. 2014).
    """

    rule: str = "mean_frequency"

    def centroids(self, hists: np.ndarray) -> np.ndarray:
        """Centroid rank of each class (a row of counts).

        ``mean_frequency``: the center mean frequency rule (Shi et al. 2024, definition
        3, eq. 7-13). The mean rank ``K`` (eq. 8) is rounded up when fewer rows
        lie below it than above it (eq. 9-12), down when more lie below, and to
        the nearest rank (``floor(K + 1/2)``, eq. 13) when as many lie on either
        side. The rule works on ranks whatever the rank weights.

        ``median``: Yang et al. 2014's "convex median" (eq. 5, garbled in print): the
        lower median of the class's ranks, i.e. the rank of the row at 1-based
        position ``ceil(n / 2)`` in rank order (for an even class the lower of
        the two middle ranks, so results are deterministic). On the weighted
        line of eq. 4 a median minimises the summed distance, so it is also an
        information-loss-optimal centre.
        """
        if self.rule == "median":
            return self._lower_medians(hists)
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

    def generalized(self, codes: np.ndarray) -> str:
        """``[a, b]``, the labels of the lowest and highest rank, or the single label.

        See :func:`~sparkanon.attributes.intervals.published_range`.
        """
        c = np.asarray(codes, dtype=np.int64)
        lo, hi = int(c.min()), int(c.max())
        return self.labels[lo] if lo == hi else published_range(self.labels[lo], self.labels[hi])

    def ncp(self, codes: np.ndarray) -> float:
        """``(max rank - min rank) / (V - 1)``, ``V`` the ranks of the declared order."""
        c = np.asarray(codes, dtype=np.int64)
        if c.size == 0 or self.size < 2:
            return 0.0
        return float(c.max() - c.min()) / (self.size - 1)

    def _lower_medians(self, hists: np.ndarray) -> np.ndarray:
        """Lower median rank of each class: first rank whose cumulative count is ``ceil(n/2)``."""
        cum = np.cumsum(hists, axis=1)
        half = np.ceil(cum[:, -1] / 2.0) if self.size else np.zeros(len(hists))
        reached = cum >= np.maximum(half, 1.0)[:, None]
        return np.argmax(reached, axis=1).astype(np.int64)


@dataclass(frozen=True)
class CategoricalKind(DiscreteKind):
    """Values that are leaves of a taxonomy tree (eq. 14-15).

    Attributes:
        taxonomy: the tree; codes are its depth-first leaf indices.
    """

    taxonomy: Taxonomy | None = None
    lookup: Mapping[str, int] | None = field(default=None, repr=False)

    def encode(self, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Leaf codes of values: their labels, or with ``lookup`` (a built hierarchy) its map.

        A hierarchy builder may recode several values to one leaf (top coding,
        ``from_level``), so its values are looked up apart from the leaves' labels.
        """
        if self.lookup is None:
            return super().encode(values)
        mapped = trimmed_text(values).map(self.lookup).astype("Float64")
        invalid = mapped.isna().to_numpy()
        return mapped.fillna(0).to_numpy(dtype=np.int64), invalid

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

    def generalized(self, codes: np.ndarray) -> str:
        """Label of the lowest common ancestor of the class's values (a leaf's own label)."""
        assert self.taxonomy is not None
        c = np.asarray(codes, dtype=np.int64)
        return self.taxonomy.common_ancestor(int(c.min()), int(c.max()))[0]

    def ncp(self, codes: np.ndarray) -> float:
        """Leaves under the lowest common ancestor / all leaves; 0 for one value."""
        assert self.taxonomy is not None
        c = np.asarray(codes, dtype=np.int64)
        if c.size == 0 or c.min() == c.max():
            return 0.0
        _, leaves = self.taxonomy.common_ancestor(int(c.min()), int(c.max()))
        return leaves / self.taxonomy.size


@dataclass(frozen=True)
class NominalKind(DiscreteKind):
    """Boolean or nominal values: 0/1 distance, mode centroid (eq. 16-17)."""

    def centroids(self, hists: np.ndarray) -> np.ndarray:
        """Most frequent value (eq. 17); ties to the lowest code."""
        return np.argmax(hists, axis=1).astype(np.int64)

    def generalized(self, codes: np.ndarray) -> str:
        """The single value, or ``*`` (suppressed: the whole domain) for several values."""
        c = np.asarray(codes, dtype=np.int64)
        return self.labels[int(c.min())] if c.min() == c.max() else SUPPRESSED

    def ncp(self, codes: np.ndarray) -> float:
        """0 for one value, else 1 (a nominal domain has no hierarchy: ``*`` covers it all)."""
        c = np.asarray(codes, dtype=np.int64)
        return 0.0 if c.size == 0 or c.min() == c.max() else 1.0


@dataclass(frozen=True)
class VectorNominalKind(NominalKind):
    """Nominal values as vectors (Yang et al. 2014, Table 4, eq. 6-7; ``encoding: vector``).

    Value ``v`` of a domain of ``V`` values is the one-hot vector scaled by
    ``sqrt(0.5)`` (Table 4), and eq. 6 is the sum of squared differences, so
    two different values are at distance ``0.5 + 0.5 = 1`` and equal values at
    0: :meth:`distance_to` keeps the 0/1 matrix, used where a row is compared
    with a single row or centre (a class's start row, nearest row, nearest block).

    A class's information loss is measured against the class's *mean* vector:
    we read eq. 7's sum as a mean (a sum of ``m`` unit vectors lies ever further
    from every member, so the loss would grow with the class size). With
    ``n_v`` rows of value ``v`` in a class of ``n`` rows, ``p_v = n_v / n`` and
    ``S = sum_v p_v^2``, the mean is ``sqrt(0.5) p`` and a row of value ``v``
    lies at ``0.5 * ||e_v - p||^2 = 0.5 * (1 - 2 p_v + S)``; summed over the
    class::

        IL = 0.5 * sum_v n_v (1 - 2 p_v + S) = 0.5 * (n - 2 n S + n S)
           = 0.5 * n * (1 - S) = 0.5 * (n - sum_v n_v^2 / n).

    The mean vector is not a value, so the *published* value is the class's
    most frequent category (eq. 17's mode, ties to the lowest code).
    """

    def losses(self, hists: np.ndarray, centres: np.ndarray | None = None) -> np.ndarray:
        """Loss of each class (row of counts) against its mean vector: ``0.5 n (1 - S)``.

        Args:
            hists: counts per code, one row per class (``m x V``).
            centres: ignored (the loss does not depend on the published value).

        Returns:
            One loss per class, 0 for an empty class.
        """
        hists = np.asarray(hists, dtype=float)
        n = hists.sum(axis=1)
        squares = np.einsum("mv,mv->m", hists, hists)
        return 0.5 * (n - squares / np.where(n > 0, n, 1.0))

    def loss(self, codes: np.ndarray) -> float:
        """Loss of one class against its mean vector (eq. 6-7, see the class docstring)."""
        if len(codes) == 0:
            return 0.0
        return float(self.losses(self.histogram(codes)[None, :])[0])


def ordinal_kind(
    name: str,
    weight: float,
    order: tuple[str, ...],
    rank_weights: tuple[float, ...] | None = None,
    centroid: str = "mean_frequency",
) -> OrdinalKind:
    """Build an ordinal kind from its declared order (lowest rank first).

    The distance is Yang et al. 2014's eq. 4: for ranks ``a <= b`` (1-based, as in
    the paper), ``sum_{j=a+1..b} W(j-1,j) / sum_{j=2..V} W(j-1,j)``; with every
    weight 1 it is Shi et al. 2024's ``|a - b| / (V - 1)`` (eq. 6).

    Args:
        name: the column name.
        weight: the attribute's weight in the tuple distance.
        order: the values, lowest rank first.
        rank_weights: ``W(j-1,j)``, ``j = 2..V`` (``V - 1`` positive weights);
            ``None`` for all 1.
        centroid: ``mean_frequency`` or ``median`` (:meth:`OrdinalKind.centroids`).

    Returns:
        The kind.

    Raises:
        ValueError: wrong number of weights, a weight not positive, or an unknown rule.
    """
    if centroid not in ORDINAL_CENTROIDS:
        raise ValueError(f"ordinal centroid {centroid!r}: choose one of {ORDINAL_CENTROIDS}")
    if rank_weights is None:
        ranks = np.arange(len(order), dtype=float)
        span = max(len(order) - 1, 1)
        matrix = np.abs(ranks[:, None] - ranks[None, :]) / span
    else:
        w = np.asarray(rank_weights, dtype=float)
        if len(w) != max(len(order) - 1, 0) or (w <= 0).any():
            raise ValueError(
                f"{name}: rank_weights needs {max(len(order) - 1, 0)} positive weights, got "
                f"{list(rank_weights)}"
            )
        # Position of each rank on the weighted line; eq. 4 is a difference of positions.
        position = np.concatenate([[0.0], np.cumsum(w)])
        span = float(position[-1]) if len(w) else 1.0
        matrix = np.abs(position[:, None] - position[None, :]) / span
    return OrdinalKind(name=name, weight=weight, labels=tuple(order), matrix=matrix, rule=centroid)


def categorical_kind(
    name: str, weight: float, taxonomy: Taxonomy, lookup: Mapping[str, int] | None = None
) -> CategoricalKind:
    """Build a categorical kind from its taxonomy (and, for a built one, value -> leaf)."""
    return CategoricalKind(
        name=name,
        weight=weight,
        labels=taxonomy.leaves,
        matrix=taxonomy.distance_matrix(),
        taxonomy=taxonomy,
        lookup=lookup,
    )


def nominal_kind(
    name: str, weight: float, values: tuple[str, ...], encoding: str = "indicator"
) -> NominalKind:
    """Build a nominal kind over a domain of values.

    Args:
        name: the column name.
        weight: the attribute's weight in the tuple distance.
        values: the domain.
        encoding: ``indicator`` (Shi et al. 2024, eq. 16-17, :class:`NominalKind`) or
            ``vector`` (Yang et al. 2014, Table 4 and eq. 6-7, :class:`VectorNominalKind`).

    Returns:
        The kind.
    """
    n = len(values)
    matrix = 1.0 - np.eye(n)
    cls = {"indicator": NominalKind, "vector": VectorNominalKind}.get(encoding)
    if cls is None:
        raise ValueError(f"nominal encoding {encoding!r}: choose 'indicator' or 'vector'")
    return cls(name=name, weight=weight, labels=tuple(values), matrix=matrix)
