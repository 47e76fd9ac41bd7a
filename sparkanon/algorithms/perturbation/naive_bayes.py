"""Naive Bayes over per-class reconstructed distributions (Aggarwal 2015, section 20.2.2).

The randomization method never sees the original rows, only per-class distributions of
each attribute reconstructed from the perturbed values; a naive Bayes classifier needs
nothing else: ``P(class c | row) ∝ P(c) * prod_a P(bin of row's a | c)``.

Readings:

* Each attribute has one set of bins shared by all classes: numeric attributes the
  ``k + 1`` edges of their reconstruction (a value is binned with ``searchsorted`` on the
  inner edges: below the first edge goes to the first bin, at or above the last edge to the
  last one), categorical attributes the codes ``0 .. k - 1`` (any other code is an error).
  The bin probability stands for the density (the widths are the same for every class, so
  they cancel in the comparison).
* Laplace-style floor: a reconstruction often puts exactly 0 on a bin, which would veto a
  class on one attribute; every per-class vector is smoothed to
  ``(p + smoothing) / (1 + k * smoothing)`` (default ``smoothing = 1e-4``), the Laplace
  estimate's form for distributions known only as probabilities. Priors are used as given
  (a zero prior excludes its class).
* Scores are sums of logs; a missing value (NaN, numeric attributes) adds nothing for its
  attribute. Ties go to the lowest class index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sparkanon.algorithms.perturbation.reconstruct import Reconstruction

DEFAULT_SMOOTHING = 1e-4


@dataclass(frozen=True, eq=False)
class BinnedAttribute:
    """One attribute's per-class distributions over shared bins.

    Attributes:
        probabilities: ``classes x bins``, each row a distribution.
        edges: the ``bins + 1`` edges of a numeric attribute, ``None`` for a categorical
            one (values are the codes ``0 .. bins - 1``).
    """

    probabilities: np.ndarray
    edges: np.ndarray | None = None


def _bin_numeric(values: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bin indices of numeric values (out-of-range to the end bins) and a present mask."""
    present = ~np.isnan(values)
    bins = np.searchsorted(edges[1:-1], np.where(present, values, edges[0]), side="right")
    return bins, present


def _bin_codes(values: np.ndarray, bins: int, name: str) -> np.ndarray:
    """Validated categorical codes."""
    if values.dtype.kind == "f" and np.any(values != np.round(values)):
        raise ValueError(f"feature {name!r}: categorical codes must be integers")
    codes = values.astype(np.int64)
    bad = (codes < 0) | (codes >= bins)
    if np.any(bad):
        raise ValueError(
            f"feature {name!r}: code {int(codes[np.argmax(bad)])} outside 0..{bins - 1}"
        )
    return codes


class DistributionNaiveBayes:
    """A naive Bayes classifier from class priors and per-class binned distributions."""

    def __init__(
        self,
        class_priors: np.ndarray,
        attributes: Mapping[str, BinnedAttribute],
        smoothing: float = DEFAULT_SMOOTHING,
    ) -> None:
        """Validate the model and precompute the log tables.

        Args:
            class_priors: ``P(class)`` per class (non-negative; normalised to sum 1).
            attributes: per attribute name, its :class:`BinnedAttribute`.
            smoothing: the Laplace-style floor (> 0), see the module docstring.

        Raises:
            ValueError: shapes disagree, a vector is not a distribution, or a bad parameter.
        """
        priors = np.asarray(class_priors, dtype=np.float64)
        if priors.ndim != 1 or priors.size < 1:
            raise ValueError("class_priors must be a non-empty vector")
        if not np.all(np.isfinite(priors)) or np.any(priors < 0) or priors.sum() <= 0:
            raise ValueError("class_priors must be finite, non-negative and not all 0")
        if not smoothing > 0:
            raise ValueError(f"smoothing must be > 0, got {smoothing}")
        if not attributes:
            raise ValueError("need at least one attribute")
        self.classes = priors.size
        self.smoothing = float(smoothing)
        with np.errstate(divide="ignore"):
            self._log_priors = np.log(priors / priors.sum())
        self._edges: dict[str, np.ndarray | None] = {}
        self._log_tables: dict[str, np.ndarray] = {}
        for name, attribute in attributes.items():
            table = np.asarray(attribute.probabilities, dtype=np.float64)
            if table.ndim != 2 or table.shape[0] != self.classes:
                raise ValueError(
                    f"attribute {name!r}: probabilities must be {self.classes} x bins, "
                    f"got shape {table.shape}"
                )
            if not np.all(np.isfinite(table)) or np.any(table < 0):
                raise ValueError(f"attribute {name!r}: probabilities must be non-negative")
            if not np.allclose(table.sum(axis=1), 1.0, atol=1e-6):
                raise ValueError(f"attribute {name!r}: every class's probabilities must sum to 1")
            bins = table.shape[1]
            if attribute.edges is not None:
                edges = np.asarray(attribute.edges, dtype=np.float64)
                if edges.shape != (bins + 1,) or np.any(np.diff(edges) <= 0):
                    raise ValueError(
                        f"attribute {name!r}: need {bins + 1} strictly increasing edges"
                    )
                self._edges[name] = edges
            else:
                self._edges[name] = None
            smoothed = (table + smoothing) / (1.0 + bins * smoothing)
            self._log_tables[name] = np.log(smoothed)

    @classmethod
    def from_reconstructions(
        cls,
        class_priors: np.ndarray,
        numeric: Mapping[str, Sequence[Reconstruction]] | None = None,
        categorical: Mapping[str, Sequence[Reconstruction]] | None = None,
        smoothing: float = DEFAULT_SMOOTHING,
    ) -> DistributionNaiveBayes:
        """The classifier of one reconstruction per class and attribute.

        Args:
            class_priors: ``P(class)`` per class.
            numeric: per numeric attribute, one reconstruction per class (same edges).
            categorical: per categorical attribute, one reconstruction per class.
            smoothing: the Laplace-style floor.

        Returns:
            The classifier.
        """
        attributes: dict[str, BinnedAttribute] = {}
        for name, parts in (numeric or {}).items():
            edges = parts[0].edges
            if any(not np.array_equal(p.edges, edges) for p in parts):
                raise ValueError(f"attribute {name!r}: classes were reconstructed on other bins")
            attributes[name] = BinnedAttribute(np.stack([p.probabilities for p in parts]), edges)
        for name, parts in (categorical or {}).items():
            if name in attributes:
                raise ValueError(f"attribute {name!r} is both numeric and categorical")
            attributes[name] = BinnedAttribute(np.stack([p.probabilities for p in parts]), None)
        return cls(class_priors, attributes, smoothing)

    def log_scores(self, features: Mapping[str, np.ndarray]) -> np.ndarray:
        """Unnormalised log posteriors, ``rows x classes``.

        Args:
            features: per attribute of the model, one value per row (no other keys).

        Returns:
            ``log P(c) + sum_a log P(bin_a | c)`` per row and class.
        """
        missing = set(self._log_tables) - set(features)
        extra = set(features) - set(self._log_tables)
        if missing or extra:
            raise ValueError(
                f"features: missing {sorted(missing)}, unknown {sorted(extra)} attributes"
            )
        lengths = {len(np.asarray(v)) for v in features.values()}
        if len(lengths) != 1:
            raise ValueError(f"features have different lengths: {sorted(lengths)}")
        rows = lengths.pop()
        scores = np.tile(self._log_priors, (rows, 1))
        for name, table in self._log_tables.items():
            values = np.asarray(features[name])
            edges = self._edges[name]
            if edges is None:
                scores += table[:, _bin_codes(values, table.shape[1], name)].T
            else:
                bins, present = _bin_numeric(values.astype(np.float64), edges)
                scores += np.where(present[:, None], table[:, bins].T, 0.0)
        return scores

    def predict(self, features: Mapping[str, np.ndarray]) -> np.ndarray:
        """The most probable class index per row (ties to the lowest index).

        Args:
            features: per attribute of the model, one value per row.

        Returns:
            The class indices.
        """
        return np.argmax(self.log_scores(features), axis=1)

    def accuracy(self, features: Mapping[str, np.ndarray], labels: np.ndarray) -> float:
        """The share of rows whose predicted class is ``labels``.

        Args:
            features: per attribute of the model, one value per row.
            labels: the true class indices.

        Returns:
            The accuracy in ``[0, 1]``.
        """
        predicted = self.predict(features)
        truth = np.asarray(labels)
        if truth.shape != predicted.shape:
            raise ValueError(f"labels: need {predicted.shape[0]} labels, got {truth.shape}")
        if truth.size == 0:
            raise ValueError("accuracy of no rows is undefined")
        return float(np.mean(predicted == truth))
