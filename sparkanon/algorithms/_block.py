"""Shared machinery of the greedy per-block algorithms (pure numpy).

A :class:`Block` holds one block's encoded rows. Growing one class uses
:meth:`Block.losses_with_each` and :meth:`Block.hec_with_each` to score every
candidate row at once; placing rows into many finished classes uses the per-class
accumulator :class:`sparkanon.algorithms._classes.ClassStats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from sparkanon.algorithms._params import AlgorithmParams
from sparkanon.attributes.schema import LEVEL, SENS, Schema
from sparkanon.metrics.entropy import class_level_entropy, quantise
from sparkanon.models import HPKAnonymity, ModelSet

ApfRule = Literal["gain_then_loss", "literal"]
"""How MAA-SAE ranks its candidates (``algorithm.apf_rule``; see ``maa_sae``)."""


@dataclass(frozen=True)
class BlockContext:
    """Everything a per-block algorithm needs besides the rows.

    Attributes:
        schema: attribute kinds and sensitive levels.
        model: the (H, p, k) target the algorithm builds every class for
            (:func:`sparkanon.algorithms.native_target` of the job's models).
        models: the job's privacy models, all of which every class must satisfy
            (the repair step enforces those the algorithm does not guarantee);
            ``None`` means ``model`` alone.
        psi_weights: ``(w1, w2)`` of eq. 21.
        entropy_base: base of the logarithm of eq. 1.
        max_iterations: most refinement rounds of the iterative algorithms
            (``algorithm.max_iterations``).
        apf_rule: MAA-SAE only (``algorithm.apf_rule``): ``gain_then_loss`` ranks
            the candidates that raise the sensitive entropy by APF and the others,
            below them, by least information loss; ``literal`` ranks all by the
            literal ratio ``EA / ILA``.
        mondrian_mode: Mondrian only (``algorithm.mode``): ``strict`` or ``relaxed``.
    """

    schema: Schema
    model: HPKAnonymity
    psi_weights: tuple[float, float] = (0.5, 0.5)
    entropy_base: float = 10.0
    max_iterations: int = 10
    apf_rule: ApfRule = "gain_then_loss"
    models: ModelSet | None = None
    mondrian_mode: str = "strict"

    @classmethod
    def of(
        cls, schema: Schema, target: HPKAnonymity, models: ModelSet, params: AlgorithmParams
    ) -> BlockContext:
        """The context of a job: its schema, target, models and the algorithm's parameters."""
        return cls(
            schema=schema,
            model=target,
            models=models,
            psi_weights=getattr(params, "psi_weights", (0.5, 0.5)),
            entropy_base=params.entropy_base,
            max_iterations=getattr(params, "max_iterations", 10),
            apf_rule=getattr(params, "apf_rule", "gain_then_loss"),
            mondrian_mode=getattr(params, "mode", "strict"),
        )

    @property
    def all_models(self) -> ModelSet:
        """Every model the classes must satisfy."""
        return self.models if self.models is not None else ModelSet([self.model])


class Block:
    """Encoded rows of one block, with vectorised scoring helpers.

    Args:
        frame: rows with the ``_q{i}``, ``_s`` and ``_lvl`` columns.
        ctx: the algorithm context.
    """

    def __init__(self, frame: pd.DataFrame, ctx: BlockContext) -> None:
        self.ctx = ctx
        self.kinds = ctx.schema.kinds
        self.codes = [
            frame[c].to_numpy(dtype=np.int64 if k.code_type == "long" else float)
            for c, k in zip(ctx.schema.code_columns, self.kinds, strict=True)
        ]
        self.sens = frame[SENS].to_numpy(dtype=np.int64)
        self.level = frame[LEVEL].to_numpy(dtype=np.int64)
        self.n = len(frame)
        self.n_levels = ctx.schema.sensitive.n_levels
        self.weights = ctx.schema.sensitive.weights

    def distances_to_row(self, rows: np.ndarray, ref: int) -> np.ndarray:
        """Tuple distance (eq. 18, weighted) from each of ``rows`` to row ``ref``."""
        total = np.zeros(len(rows))
        for kind, codes in zip(self.kinds, self.codes, strict=True):
            total += kind.weight * kind.distance_to(codes[rows], codes[ref])
        return total

    def distances_to_point(self, rows: np.ndarray, point: list[float] | np.ndarray) -> np.ndarray:
        """Tuple distance (eq. 18, weighted) from each of ``rows`` to a synthetic record.

        Args:
            rows: row indices of this block.
            point: one code per attribute (e.g. from :meth:`centroid_of`).

        Returns:
            One distance per row of ``rows``.
        """
        total = np.zeros(len(rows))
        for kind, codes, centre in zip(self.kinds, self.codes, point, strict=True):
            total += kind.weight * kind.distance_to(codes[rows], centre)
        return total

    def centroid_of(self, rows: np.ndarray) -> list[float]:
        """The centroid of ``rows``: each attribute's ``kind.centroid`` code (synthetic record)."""
        return [
            kind.centroid(codes[rows]) for kind, codes in zip(self.kinds, self.codes, strict=True)
        ]

    def central_row(self, rows: np.ndarray) -> int:
        """The row closest to the centroid of ``rows`` (the "central tuple").

        Distances are compared on the :func:`~sparkanon.metrics.entropy.quantise`
        grid; ties go to the first of ``rows``.
        """
        distances = self.distances_to_point(rows, self.centroid_of(rows))
        return int(rows[np.argmin(quantise(distances))])

    def loss(self, members: np.ndarray) -> float:
        """InfoLoss of the class ``members`` (eq. 20)."""
        return float(
            sum(k.weight * k.loss(c[members]) for k, c in zip(self.kinds, self.codes, strict=True))
        )

    def losses_with_each(self, members: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """InfoLoss of ``members + {c}`` for every candidate row ``c`` (eq. 20)."""
        total = np.zeros(len(candidates))
        for kind, codes in zip(self.kinds, self.codes, strict=True):
            total += kind.weight * kind.losses_with_each(codes[members], codes[candidates])
        return total

    def level_counts(self, members: np.ndarray) -> np.ndarray:
        """Rows per sensitivity level of a class."""
        return np.bincount(self.level[members], minlength=self.n_levels).astype(float)

    def hec_with_each(self, members: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """HEC (eq. 2) of ``members + {c}`` for every candidate row ``c``."""
        counts = self.level_counts(members)
        per_level = class_level_entropy(
            counts[None, :] + np.eye(self.n_levels), self.weights, self.ctx.entropy_base
        )
        return per_level[self.level[candidates]]

    def diversity_of(self, rows: np.ndarray) -> tuple[int, int]:
        """Distinct sensitive values and distinct levels among ``rows``."""
        return len(np.unique(self.sens[rows])), len(np.unique(self.level[rows]))

    def can_host_class(self, rows: np.ndarray) -> bool:
        """Whether ``rows`` hold enough rows, values and levels for one class (steps 2 and 5)."""
        model = self.ctx.model
        if len(rows) < model.k:
            return False
        values, levels = self.diversity_of(rows)
        return values >= model.p and levels >= model.h
