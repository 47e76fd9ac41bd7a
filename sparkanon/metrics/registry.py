"""The metrics a job reports, each a class: per-class terms, then one finishing step.

A metric is computed in two places that never meet on the driver: the summarise
stage calls :meth:`Metric.block_terms` on the classes where their rows are (a batch of
classes in a pandas group), and the measure stage aggregates every term column with the
aggregations the metric declares (one Spark aggregation for all metrics) and calls
:meth:`Metric.finish` with the totals and the run's facts. Tests run the same two
steps (:func:`sparkanon.families.blocks.measure.measure` on the local engine), so the job
computes exactly what the tests check.

========  ==========================================================  ======================
name      definition                                                  source
========  ==========================================================  ======================
classes   number of classes; class sizes min / median / max
EPP       mean over classes of the level entropy HEC                  Shi et al. 2024, eq. 22
R_IL      summed class InfoLoss over the rows                         Shi et al. 2024, eq. 23
AVG_IL    mean over classes of ``IL(G) / (|G| |QI|)``                 Yang et al. 2014, eq. 17-18
AVG_Ent   mean over classes of the base-2 sensitive entropy           Yang et al. 2014, eq. 19
CAVG      ``(rows / classes) / k``                                    Yang et al. 2014 eq. 20; C_AVG
                                                                      of LeFevre et al. 2006
NCP       mean over classes of ``NCP(G) = sum_i w_i NCP_i(G)``        Xu et al. 2006
GCP       ``100 sum_G |G| NCP(G) / (N sum_i w_i)``                    Ghinita et al. 2007
NCP_by    per quasi-identifier: ``100 sum_G |G| NCP_i(G) / N``        per-attribute loss
========  ==========================================================  ======================

EPP needs sensitivity levels: without ``sensitive.levels`` it is reported as ``None``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from sparkanon.attributes.dates import continuous_arithmetic
from sparkanon.attributes.kinds import DiscreteKind, Kind
from sparkanon.attributes.ranges import RangeNcp
from sparkanon.attributes.schema import SensitiveLevels
from sparkanon.metrics.entropy import (
    class_level_entropy,
    information_loss_rate,
    normalized_average_class_size,
    sensitive_entropy,
)
from sparkanon.metrics.ncp import global_certainty_penalty

AGGREGATIONS = ("count", "sum", "mean", "min", "max", "median")
"""Aggregations a metric may ask for its terms."""


@dataclass(frozen=True)
class ClassBatch:
    """Many equivalence classes at once (the classes of one block), as arrays.

    The summarise stage publishes and measures a block's classes together: every
    statistic below is computed for all classes with one reduction per attribute
    (histograms, ``reduceat`` sums, minima and maxima) instead of one class at a time.
    Kinds without a batch rule (the semantic codes, user kinds) fall back to their
    per-class methods, so every value equals what the kind's own per-class methods
    give (``kind.centroid``, ``kind.loss``, ``kind.ncp``), up to the order of
    floating-point sums (``tests/metrics/test_metrics.py`` holds the two to each other).

    Build it with :meth:`of_rows`. Rows are sorted by class: class ``j`` holds rows
    ``starts[j] : starts[j] + sizes[j]``.

    Attributes:
        kinds: the quasi-identifier kinds, in schema order.
        codes: the rows' codes of each quasi-identifier, sorted by class.
        label: each row's class, ``0..m-1``, non-decreasing.
        sens: the rows' sensitive value codes.
        levels: the rows' sensitivity levels.
        sensitive: the sensitive domain and levels.
        entropy_base: logarithm base of the level entropy (Shi et al. 2024, eq. 1).
    """

    kinds: Sequence[Kind]
    codes: Sequence[np.ndarray]
    label: np.ndarray
    sens: np.ndarray
    levels: np.ndarray
    sensitive: SensitiveLevels
    entropy_base: float = 10.0

    @classmethod
    def of_rows(
        cls,
        kinds: Sequence[Kind],
        codes: Sequence[np.ndarray],
        classes: np.ndarray,
        sens: np.ndarray,
        levels: np.ndarray,
        sensitive: SensitiveLevels,
        entropy_base: float = 10.0,
    ) -> tuple[np.ndarray, ClassBatch]:
        """The classes of some rows, whatever their order.

        Args:
            kinds: the quasi-identifier kinds.
            codes: the rows' codes of each quasi-identifier.
            classes: each row's class id (any integers).
            sens: the rows' sensitive value codes.
            levels: the rows' sensitivity levels.
            sensitive: the sensitive domain and levels.
            entropy_base: logarithm base of the level entropy.

        Returns:
            ``(ids, batch)``: the class ids in increasing order, and the batch whose
            class ``j`` is ``ids[j]``; within a class rows keep their input order.
        """
        classes = np.asarray(classes, dtype=np.int64)
        order = np.argsort(classes, kind="stable")
        ids, label = np.unique(classes[order], return_inverse=True)
        batch = cls(
            kinds=kinds,
            codes=[np.asarray(c)[order] for c in codes],
            label=label.reshape(-1).astype(np.int64),
            sens=np.asarray(sens, dtype=np.int64)[order],
            levels=np.asarray(levels, dtype=np.int64)[order],
            sensitive=sensitive,
            entropy_base=entropy_base,
        )
        return ids, batch

    @cached_property
    def sizes(self) -> np.ndarray:
        """Rows per class."""
        return np.bincount(self.label)

    @property
    def m(self) -> int:
        """Number of classes."""
        return len(self.sizes)

    @cached_property
    def starts(self) -> np.ndarray:
        """First row of each class."""
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    def members(self, a: int) -> list[np.ndarray]:
        """Attribute ``a``'s codes of each class."""
        return np.split(self.codes[a], self.starts[1:])

    def histograms(self, a: int) -> np.ndarray:
        """Counts per class and code of discrete attribute ``a`` (``m x V``)."""
        kind = self.kinds[a]
        assert isinstance(kind, DiscreteKind)
        flat = self.label * kind.size + np.asarray(self.codes[a], dtype=np.int64)
        counts = np.bincount(flat, minlength=self.m * kind.size)
        return counts.reshape(self.m, kind.size).astype(float)

    def _sums(self, values: np.ndarray) -> np.ndarray:
        """Per-class sums of a per-row array, each bit for bit ``values[class].sum()``.

        Classes of one size are stacked as the rows of a matrix and summed along
        its rows: numpy sums each contiguous row in the same (pairwise) order as
        the class's own array, so centroids (and the published values) equal
        ``kind.centroid`` of the class exactly.
        """
        values = np.asarray(values, dtype=float)
        out = np.empty(self.m)
        for n in np.unique(self.sizes):
            which = np.flatnonzero(self.sizes == n)
            rows = self.starts[which][:, None] + np.arange(n)[None, :]
            out[which] = values[rows].sum(axis=1)
        return out

    @cached_property
    def centroids(self) -> list[np.ndarray]:
        """Each attribute's centroid code per class (``kind.centroid``)."""
        out: list[np.ndarray] = []
        for a, kind in enumerate(self.kinds):
            if isinstance(kind, DiscreteKind):
                out.append(kind.centroids(self.histograms(a)).astype(np.int64))
            elif continuous_arithmetic(kind):
                out.append(self._sums(self.codes[a]) / self.sizes)
            else:
                out.append(np.asarray([kind.centroid(g) for g in self.members(a)]))
        return out

    @cached_property
    def info_loss(self) -> np.ndarray:
        """InfoLoss of each class (Shi et al. 2024, eq. 20): weighted sum of attribute losses."""
        total = np.zeros(self.m)
        for a, (kind, centre) in enumerate(zip(self.kinds, self.centroids, strict=True)):
            if isinstance(kind, DiscreteKind):
                loss = kind.losses(self.histograms(a), centre)
            elif continuous_arithmetic(kind):
                loss = self._sums(np.abs(np.asarray(self.codes[a], float) - centre[self.label]))
            elif type(kind).loss is Kind.loss:
                loss = np.array(
                    [
                        float(kind.distance_to(g, c).sum())
                        for g, c in zip(self.members(a), centre, strict=True)
                    ]
                )
            else:
                loss = kind.losses_of(self.members(a))
            total += kind.weight * loss
        return total

    @cached_property
    def ranges(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each attribute's lowest and highest code per class."""
        return [
            (np.minimum.reduceat(codes, self.starts), np.maximum.reduceat(codes, self.starts))
            for codes in self.codes
        ]

    @cached_property
    def ncp_by_attribute(self) -> list[np.ndarray]:
        """Each attribute's unweighted NCP per class (``kind.ncp`` from the class's code range)."""
        return [
            RangeNcp(kind).of_range(lo, hi)
            for kind, (lo, hi) in zip(self.kinds, self.ranges, strict=True)
        ]

    @cached_property
    def level_counts(self) -> np.ndarray:
        """Rows per class and sensitivity level (``m x L``)."""
        n = self.sensitive.n_levels
        flat = np.bincount(self.label * n + self.levels, minlength=self.m * n)
        return flat.reshape(self.m, n)

    @cached_property
    def value_counts(self) -> np.ndarray:
        """Rows per class and sensitive value (``m x S``)."""
        n = len(self.sensitive.values)
        flat = np.bincount(self.label * n + self.sens, minlength=self.m * n)
        return flat.reshape(self.m, n)


@dataclass(frozen=True)
class RunFacts:
    """What a metric's finishing step may know besides its aggregated terms.

    Attributes:
        rows_out: rows published.
        k: the smallest class the models allow.
        names: the quasi-identifier names, in schema order.
        weights: their weights.
        has_levels: whether the config declared sensitivity levels.
    """

    rows_out: int
    k: int
    names: tuple[str, ...]
    weights: tuple[float, ...]
    has_levels: bool = True


class Metric(ABC):
    """One reported metric.

    Attributes:
        name: the key in ``metrics.json``.
        aggregations: per term, the aggregations the finishing step needs.
    """

    name: ClassVar[str]
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]]

    @abstractmethod
    def block_terms(self, b: ClassBatch) -> dict[str, np.ndarray]:
        """The per-class terms of every class of a batch (one array per term name).

        A metric is written once, over a batch: one class is a batch of one.
        """

    @abstractmethod
    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:
        """The metric's value from its aggregated terms (``totals["term.agg"]``).

        A ``sum`` or ``count`` total is a number (0 over no classes); a ``min``, ``max``,
        ``mean`` or ``median`` one is ``None`` over no classes.
        """


class ClassSizes(Metric):
    """The number of classes and their sizes."""

    name = "classes"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "size": ("count", "sum", "min", "median", "max")
    }

    def block_terms(self, b: ClassBatch) -> dict[str, np.ndarray]:  # noqa: D102
        return {"size": b.sizes.astype(float)}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return {
            "classes": int(totals["size.count"]),
            "class_size": {
                "min": totals["size.min"],
                "median": totals["size.median"],
                "max": totals["size.max"],
            },
        }


class ClassMean(Metric):
    """A metric that is the mean over classes of one value per class."""

    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {"value": ("mean",)}

    @abstractmethod
    def values(self, b: ClassBatch) -> np.ndarray:
        """The value of every class of the batch."""

    def block_terms(self, b: ClassBatch) -> dict[str, np.ndarray]:  # noqa: D102
        return {"value": self.values(b)}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return totals["value.mean"]


class EntropyPrivacyProtection(ClassMean):
    """EPP: the mean over classes of the class level entropy HEC (Shi et al. 2024, eq. 2, 22)."""

    name = "EPP"

    def values(self, b: ClassBatch) -> np.ndarray:  # noqa: D102
        return class_level_entropy(b.level_counts, b.sensitive.weights, b.entropy_base)

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return super().finish(totals, facts) if facts.has_levels else None


class InformationLossRate(Metric):
    """R_IL: the summed class InfoLoss over the rows published (Shi et al. 2024, eq. 23)."""

    name = "R_IL"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {"loss": ("sum",)}

    def block_terms(self, b: ClassBatch) -> dict[str, np.ndarray]:  # noqa: D102
        return {"loss": b.info_loss}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return information_loss_rate(totals["loss.sum"], facts.rows_out)


class AverageInformationLoss(ClassMean):
    """AVG-IL: the mean over classes of ``IL(G) / (|G| |QI|)`` (Yang et al. 2014, eq. 17-18)."""

    name = "AVG_IL"

    def values(self, b: ClassBatch) -> np.ndarray:  # noqa: D102
        return b.info_loss / (b.sizes * len(b.kinds))


class AverageSensitiveEntropy(ClassMean):
    """AVG-Ent: the mean over classes of the base-2 entropy of the sensitive values (eq. 19)."""

    name = "AVG_Ent"

    def values(self, b: ClassBatch) -> np.ndarray:  # noqa: D102
        return sensitive_entropy(b.value_counts)


class NormalizedAverageClassSize(Metric):
    """CAVG (C_AVG of LeFevre et al. 2006): ``(rows / classes) / k`` (Yang et al. 2014, eq. 20)."""

    name = "CAVG"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {"one": ("count",)}

    def block_terms(self, b: ClassBatch) -> dict[str, np.ndarray]:  # noqa: D102
        return {"one": np.ones(b.m)}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return normalized_average_class_size(facts.rows_out, int(totals["one.count"]), facts.k)


class CertaintyPenalty(Metric):
    """NCP (mean over classes, Xu et al. 2006) and GCP (percent, Ghinita et al. 2007)."""

    name = "NCP"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "ncp": ("mean",),
        "penalty": ("sum",),
        "rows": ("sum",),
    }

    def block_terms(self, b: ClassBatch) -> dict[str, np.ndarray]:  # noqa: D102
        ncp = np.zeros(b.m)
        for kind, part in zip(b.kinds, b.ncp_by_attribute, strict=True):
            ncp += kind.weight * part
        size = b.sizes.astype(float)
        return {"ncp": ncp, "penalty": size * ncp, "rows": size}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        gcp = global_certainty_penalty(
            float(totals["penalty.sum"]), int(totals["rows.sum"]), sum(facts.weights)
        )
        return {"NCP": totals["ncp.mean"], "GCP": gcp}


class AttributeCertaintyPenalty(Metric):
    """Per quasi-identifier: ``100 sum_G |G| NCP_i(G) / N``, the share of its domain lost."""

    name = "NCP_by_attribute"

    def __init__(self, n_attributes: int) -> None:
        self.n = n_attributes

    @property
    def aggregations(self) -> Mapping[str, tuple[str, ...]]:  # type: ignore[override]
        """One summed term per attribute."""
        return {f"a{i}": ("sum",) for i in range(self.n)}

    def block_terms(self, b: ClassBatch) -> dict[str, np.ndarray]:  # noqa: D102
        return {f"a{i}": b.sizes * v for i, v in enumerate(b.ncp_by_attribute)}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        rows = max(facts.rows_out, 1)
        return {
            name: 100.0 * float(totals[f"a{i}.sum"]) / rows for i, name in enumerate(facts.names)
        }


def default_metrics(n_attributes: int) -> tuple[Metric, ...]:
    """Every metric a job reports, in the order of ``metrics.json``."""
    return (
        ClassSizes(),
        EntropyPrivacyProtection(),
        InformationLossRate(),
        AverageInformationLoss(),
        AverageSensitiveEntropy(),
        CertaintyPenalty(),
        NormalizedAverageClassSize(),
        AttributeCertaintyPenalty(n_attributes),
    )


def term_column(metric: Metric, term: str) -> str:
    """The summary-table column holding one metric's term."""
    return f"m_{metric.name}_{term}"


def block_term_columns(metrics: Sequence[Metric], b: ClassBatch) -> dict[str, np.ndarray]:
    """Every metric's terms of every class of a batch, keyed by column."""
    out: dict[str, np.ndarray] = {}
    for metric in metrics:
        for term, values in metric.block_terms(b).items():
            out[term_column(metric, term)] = np.asarray(values, dtype=float)
    return out


def term_columns(metrics: Sequence[Metric]) -> list[tuple[str, str]]:
    """The summary-table columns of every metric's terms (all ``double``)."""
    return [(term_column(m, t), "double") for m in metrics for t in m.aggregations]


def aggregation_spec(metrics: Sequence[Metric]) -> dict[str, tuple[str, str]]:
    """One engine aggregation for every metric: ``{out: (func, column)}``."""
    spec = {}
    for m in metrics:
        for term, aggs in m.aggregations.items():
            for agg in aggs:
                spec[f"{term_column(m, term)}.{agg}"] = (agg, term_column(m, term))
    return spec


def finish_all(
    metrics: Sequence[Metric], aggregated: Mapping[str, Any], facts: RunFacts
) -> dict[str, Any]:
    """Every metric's value from one aggregated row, merged into one mapping."""
    out: dict[str, Any] = {}
    for m in metrics:
        prefix = term_column(m, "")
        totals = {k[len(prefix) :]: v for k, v in aggregated.items() if k.startswith(prefix)}
        value = m.finish(totals, facts)
        if isinstance(value, dict) and m.name in ("classes", "NCP"):
            out.update(value)
        else:
            out[m.name] = value
    return out
