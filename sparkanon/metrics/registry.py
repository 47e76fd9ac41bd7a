"""The metrics a job reports, each a class: per-class terms, then one finishing step.

A metric is computed in two places that never meet on the driver: the summarise
stage calls :meth:`Metric.class_terms` on every class where the class's rows are (in
a pandas group), and the measure stage aggregates every term column with the
aggregations the metric declares (one Spark aggregation for all metrics) and calls
:meth:`Metric.finish` with the totals and the run's facts. Tests run the same two
steps (:func:`sparkanon.stages.measure.measure` on the local engine), so the job
computes exactly what the tests check.

========  ==========================================================  ======================
name      definition                                                  source
========  ==========================================================  ======================
classes   number of classes; class sizes min / median / max
EPP       mean over classes of the level entropy HEC                  seed 000 eq. 22
R_IL      summed class InfoLoss over the rows                         seed 000 eq. 23
AVG_IL    mean over classes of ``IL(G) / (|G| |QI|)``                 seed 003 eq. 17-18
AVG_Ent   mean over classes of the base-2 sensitive entropy           seed 003 eq. 19
CAVG      ``(rows / classes) / k``                                    seed 003 eq. 20; C_AVG
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

from sparkanon.attributes.kinds import Kind
from sparkanon.attributes.schema import SensitiveLevels
from sparkanon.metrics.entropy import (
    class_level_entropy,
    information_loss_rate,
    normalized_average_class_size,
    sensitive_entropy,
)
from sparkanon.metrics.ncp import class_ncp, global_certainty_penalty

AGGREGATIONS = ("count", "sum", "mean", "min", "max", "median")
"""Aggregations a metric may ask for its terms."""


@dataclass(frozen=True)
class ClassView:
    """One equivalence class's rows, as the metrics and publishers see them.

    Attributes:
        kinds: the quasi-identifier kinds, in schema order.
        codes: the class's codes of each quasi-identifier.
        sens: the class's sensitive value codes.
        levels: the class's sensitivity level of each row.
        sensitive: the sensitive domain and levels.
        entropy_base: logarithm base of the level entropy (seed 000 eq. 1).
    """

    kinds: Sequence[Kind]
    codes: Sequence[np.ndarray]
    sens: np.ndarray
    levels: np.ndarray
    sensitive: SensitiveLevels
    entropy_base: float = 10.0

    @property
    def size(self) -> int:
        """Rows in the class."""
        return len(self.sens)

    @cached_property
    def centroids(self) -> list[float]:
        """Each attribute's centroid code (``kind.centroid``)."""
        return [kind.centroid(c) for kind, c in zip(self.kinds, self.codes, strict=True)]

    @cached_property
    def info_loss(self) -> float:
        """InfoLoss of the class (seed 000 eq. 20): the weighted sum of each attribute's loss.

        Computed once per class however many metrics use it; a kind whose loss is the
        default (summed distance to the centroid, :meth:`Kind.loss`) reuses
        :attr:`centroids`.
        """
        total = 0.0
        for kind, codes, centre in zip(self.kinds, self.codes, self.centroids, strict=True):
            if type(kind).loss is Kind.loss:
                loss = float(kind.distance_to(codes, centre).sum()) if len(codes) else 0.0
            else:
                loss = kind.loss(codes)
            total += kind.weight * loss
        return float(total)

    @cached_property
    def ncp_by_attribute(self) -> list[float]:
        """Each attribute's NCP (``kind.ncp``), unweighted."""
        return [float(kind.ncp(c)) for kind, c in zip(self.kinds, self.codes, strict=True)]


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
    def class_terms(self, c: ClassView) -> dict[str, float]:
        """The per-class terms (one value per term name)."""

    @abstractmethod
    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:
        """The metric's value from its aggregated terms (``totals["term.agg"]``)."""


class ClassSizes(Metric):
    """The number of classes and their sizes."""

    name = "classes"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "size": ("count", "sum", "min", "median", "max")
    }

    def class_terms(self, c: ClassView) -> dict[str, float]:  # noqa: D102
        return {"size": float(c.size)}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return {
            "classes": int(totals["size.count"] or 0),
            "class_size": {
                "min": totals["size.min"],
                "median": totals["size.median"],
                "max": totals["size.max"],
            },
        }


class EntropyPrivacyProtection(Metric):
    """EPP: the mean over classes of the class level entropy HEC (seed 000 eq. 2, 22)."""

    name = "EPP"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {"hec": ("mean",)}

    def class_terms(self, c: ClassView) -> dict[str, float]:  # noqa: D102
        counts = np.bincount(c.levels, minlength=c.sensitive.n_levels)
        return {"hec": float(class_level_entropy(counts, c.sensitive.weights, c.entropy_base))}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return totals["hec.mean"] if facts.has_levels else None


class InformationLossRate(Metric):
    """R_IL: the summed class InfoLoss (eq. 20) over the published rows (seed 000 eq. 23)."""

    name = "R_IL"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {"loss": ("sum",)}

    def class_terms(self, c: ClassView) -> dict[str, float]:  # noqa: D102
        return {"loss": class_info_loss(c)}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return information_loss_rate(totals["loss.sum"] or 0.0, facts.rows_out)


class AverageInformationLoss(Metric):
    """AVG-IL: the mean over classes of ``IL(G) / (|G| |QI|)`` (seed 003 eq. 17-18)."""

    name = "AVG_IL"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {"il": ("mean",)}

    def class_terms(self, c: ClassView) -> dict[str, float]:  # noqa: D102
        return {"il": class_info_loss(c) / (c.size * len(c.kinds))}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return totals["il.mean"]


class AverageSensitiveEntropy(Metric):
    """AVG-Ent: the mean over classes of the base-2 entropy of the sensitive values (eq. 19)."""

    name = "AVG_Ent"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {"ent": ("mean",)}

    def class_terms(self, c: ClassView) -> dict[str, float]:  # noqa: D102
        counts = np.bincount(c.sens, minlength=len(c.sensitive.values))
        return {"ent": float(sensitive_entropy(counts))}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return totals["ent.mean"]


class NormalizedAverageClassSize(Metric):
    """CAVG (C_AVG of LeFevre et al. 2006): ``(rows / classes) / k`` (seed 003 eq. 20)."""

    name = "CAVG"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {"one": ("count",)}

    def class_terms(self, c: ClassView) -> dict[str, float]:  # noqa: D102
        return {"one": 1.0}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        return normalized_average_class_size(facts.rows_out, int(totals["one.count"] or 0), facts.k)


class CertaintyPenalty(Metric):
    """NCP (mean over classes, Xu et al. 2006) and GCP (percent, Ghinita et al. 2007)."""

    name = "NCP"
    aggregations: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "ncp": ("mean",),
        "penalty": ("sum",),
        "rows": ("sum",),
    }

    def class_terms(self, c: ClassView) -> dict[str, float]:  # noqa: D102
        ncp = class_ncp(c.kinds, c.codes)
        return {"ncp": ncp, "penalty": c.size * ncp, "rows": float(c.size)}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        gcp = global_certainty_penalty(
            float(totals["penalty.sum"] or 0.0), int(totals["rows.sum"] or 0), sum(facts.weights)
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

    def class_terms(self, c: ClassView) -> dict[str, float]:  # noqa: D102
        return {f"a{i}": c.size * v for i, v in enumerate(c.ncp_by_attribute)}

    def finish(self, totals: Mapping[str, float | None], facts: RunFacts) -> Any:  # noqa: D102
        rows = max(facts.rows_out, 1)
        return {
            name: 100.0 * float(totals[f"a{i}.sum"] or 0.0) / rows
            for i, name in enumerate(facts.names)
        }


def class_info_loss(c: ClassView) -> float:
    """InfoLoss of one class (seed 000 eq. 20): :attr:`ClassView.info_loss`."""
    return c.info_loss


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


def class_term_row(metrics: Sequence[Metric], c: ClassView) -> dict[str, float]:
    """Every metric's terms of one class, keyed by column."""
    row: dict[str, float] = {}
    for metric in metrics:
        for term, value in metric.class_terms(c).items():
            row[term_column(metric, term)] = float(value)
    return row


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
