"""t-closeness (textbook section 20.3.3; Li, Li and Venkatasubramanian, ICDE 2007).

A class satisfies t-closeness when the distance between its distribution of
sensitive values ``P`` and the whole table's distribution ``Q`` is at most
``t`` (eq. 20.12). Distances (``p_i``, ``q_i`` the shares of value ``i``):

* ``variational``: ``(1/2) sum_i |p_i - q_i|`` (eq. 20.13);
* ``kl``: the Kullback-Leibler divergence ``sum_{p_i > 0} p_i log(p_i / q_i)``
  (eq. 20.14), natural logarithm (nats);
* ``emd``: the earth mover's distance, the least work to turn ``P`` into ``Q``
  when moving a share between values ``i`` and ``j`` costs ``d_ij`` (the
  textbook's linear program), for three ground distances ``d`` of Li et al.:

  - ``equal``: ``d_ij = 1`` for ``i != j``; then
    ``EMD = sum_i max(p_i - q_i, 0)``, which equals the variational distance;
  - ``ordered``: values on a line ``v_1 < ... < v_M``,
    ``d_ij = |i - j| / (M - 1)``; then
    ``EMD = (1 / (M - 1)) sum_i |sum_{j <= i} (p_j - q_j)|``;
  - ``hierarchical``: ``d_ij`` is the height of the lowest common ancestor of
    ``i`` and ``j`` in the value hierarchy divided by its height ``H``; then
    ``EMD = sum_N cost(N)`` over the inner nodes, with
    ``cost(N) = height(N) / H * min(pos_extra(N), neg_extra(N))``,
    ``extra(leaf i) = p_i - q_i``, ``extra(N)`` the sum over its children,
    ``pos_extra(N)`` (``neg_extra(N)``) the sum of the positive (the
    absolute value of the negative) ``extra`` of its children.

Every distance is convex in ``P`` (exercise 11, lemma 20.3.3), so the model is monotonic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field, PrivateAttr, model_validator

from sparkanon.attributes.hierarchy import load_arx_hierarchy
from sparkanon.errors import ConfigError
from sparkanon.metrics.distribution import ordered_emd, variational
from sparkanon.models.base import (
    TOLERANCE,
    ClassSummaries,
    Float,
    PrivacyModel,
    SensitiveDomain,
)


@dataclass(frozen=True, eq=False)
class _Reference:
    """What a bound model holds: the global shares and the ground distance's structure.

    Attributes:
        q: ``(V,)`` the whole table's shares.
        line: ordered ground: ``(V, M)`` one-hot of each value's position on the line.
        group: hierarchical ground: ``group[j]`` is ``(V, n_j)``, one-hot of each
            value's ancestor at level ``j`` (``j = 0 .. H - 1``).
        parent: hierarchical ground: ``parent[j]`` is ``(n_j, n_{j+1})``, one-hot
            of the parent of each level-``j`` node (``j = 0 .. H - 1``).
        height: hierarchical ground: the hierarchy's height ``H``.
    """

    q: np.ndarray
    line: np.ndarray | None = None
    group: tuple[np.ndarray, ...] = ()
    parent: tuple[np.ndarray, ...] = ()
    height: int = 0


def _onehot(index: np.ndarray, width: int) -> np.ndarray:
    """``(len(index), width)`` float matrix with a 1 at ``[i, index[i]]``."""
    out = np.zeros((index.size, width))
    out[np.arange(index.size), index] = 1.0
    return out


class TCloseness(PrivacyModel):
    """t-closeness: every class's sensitive distribution within ``t`` of the whole table's.

    Bind the model to the table (:meth:`bind`) before checking classes.

    Attributes:
        t: the bound on the distance, in ``(0, 1]`` (all three distances lie
            in ``[0, 1]`` except KL, which is unbounded).
        distance: config key ``measure``: ``variational``, ``kl`` or ``emd``
            (the default).
        ground: ground distance of ``emd``: ``equal`` (the default),
            ``ordered`` (values in their declared or numeric order) or
            ``hierarchical`` (along ``hierarchy``). Other measures accept
            only ``equal``.
        hierarchy: ARX hierarchy CSV of the sensitive attribute, required
            by (and only by) ``ground: hierarchical``; every sensitive value
            must be a leaf.
    """

    compares_with_table: ClassVar[bool] = True

    name: Literal["t_closeness"] = "t_closeness"
    t: Annotated[Float, Field(gt=0, le=1)]
    distance: Literal["variational", "kl", "emd"] = Field(default="emd", alias="measure")
    ground: Literal["equal", "ordered", "hierarchical"] = "equal"
    hierarchy: str | None = None

    _ref: _Reference | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _ground_fits_measure(self) -> TCloseness:
        if self.ground != "equal" and self.distance != "emd":
            raise ValueError(
                f"ground: {self.ground} is a ground distance of measure: emd only ({self.distance} "
                "compares the values one by one); set measure: emd or drop ground"
            )
        if self.ground == "hierarchical" and self.hierarchy is None:
            raise ValueError(
                "ground: hierarchical needs hierarchy: the ARX hierarchy CSV of the sensitive "
                "attribute"
            )
        if self.hierarchy is not None and self.ground != "hierarchical":
            raise ValueError(
                f"hierarchy is read only with ground: hierarchical (ground is {self.ground}); "
                "set ground: hierarchical or drop hierarchy"
            )
        return self

    @property
    def bound(self) -> bool:
        """Whether the model holds the table's distribution (see :meth:`bind`)."""
        return self._ref is not None

    def min_class_size(self) -> int:
        """1: a single row can be close to the table; only empty classes fail outright."""
        return 1

    def bind(self, domain: SensitiveDomain) -> TCloseness:
        """A copy of the model holding the table's distribution and ground distance.

        Args:
            domain: the sensitive attribute over the whole table.

        Returns:
            The bound copy.

        Raises:
            ConfigError: the table has no rows; ``ordered`` ground over values
                that are neither declared in order nor numeric; the hierarchy
                cannot be loaded or a sensitive value is not one of its leaves.
        """
        total = domain.rows
        if total == 0:
            raise ConfigError(
                f"t_closeness compares classes with the whole table, but {domain.name!r} "
                "has no rows"
            )
        q = domain.counts / float(total)
        ref = _Reference(q=q)
        if self.distance == "emd" and self.ground == "ordered":
            ref = _Reference(q=q, line=_onehot(domain.ranks(), domain.line_length()))
        elif self.distance == "emd" and self.ground == "hierarchical":
            ref = self._hierarchy_reference(domain, q)
        bound = self.model_copy()
        bound._ref = ref
        return bound

    def _hierarchy_reference(self, domain: SensitiveDomain, q: np.ndarray) -> _Reference:
        """The per-level grouping of the domain's values along the hierarchy."""
        assert self.hierarchy is not None  # the validator guarantees it
        tax = load_arx_hierarchy(self.hierarchy, domain.name)
        leaf = {v: i for i, v in enumerate(tax.leaves)}
        missing = [v for v in domain.values if v not in leaf]
        if missing:
            inner = {node for path in tax.paths for node in path[1:]}
            shown = ", ".join(
                f"{v!r}" + (" (an inner node there)" if v in inner else "") for v in missing[:5]
            )
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ConfigError(
                f"t_closeness hierarchy {self.hierarchy!r}: sensitive value(s) {shown}{more} of "
                f"{domain.name!r} are not leaves of the hierarchy; add a row for each value"
            )
        paths = [tax.paths[leaf[v]] for v in domain.values]
        node_of = []
        for j in range(tax.height + 1):
            _, inverse = np.unique(
                np.array([p[j] for p in paths], dtype=object), return_inverse=True
            )
            node_of.append(inverse.astype(np.int64).ravel())
        widths = [int(n.max()) + 1 if n.size else 0 for n in node_of]
        group, parent = [], []
        for j in range(tax.height):
            group.append(_onehot(node_of[j], widths[j]))
            up = np.zeros(widths[j], dtype=np.int64)
            up[node_of[j]] = node_of[j + 1]
            parent.append(_onehot(up, widths[j + 1]))
        return _Reference(q=q, group=tuple(group), parent=tuple(parent), height=tax.height)

    def _reference(self, s: ClassSummaries) -> _Reference:
        if self._ref is None:
            raise RuntimeError(
                "t_closeness is not bound to the table's distribution; call bind(domain) first"
            )
        if s.n_values != self._ref.q.size:
            raise ValueError(
                f"the class summaries have {s.n_values} sensitive values, the bound table "
                f"{self._ref.q.size}"
            )
        return self._ref

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """``(m,)`` distance of each class's distribution to the table's.

        Raises:
            RuntimeError: the model is not bound (:meth:`bind`).
        """
        ref = self._reference(s)
        p = s.shares()
        diff = p - ref.q
        if self.distance == "variational":
            return variational(p, ref.q)
        if self.distance == "kl":
            with np.errstate(divide="ignore"):
                log_q = np.log(ref.q)
            log_p = np.log(np.where(p > 0, p, 1.0))
            terms = np.where(p > 0, p * (log_p - np.where(p > 0, log_q, 0.0)), 0.0)
            return terms.sum(axis=1)
        if self.ground == "ordered":
            assert ref.line is not None
            return ordered_emd(p @ ref.line, ref.q @ ref.line)
        if self.ground == "hierarchical":
            return self._hierarchical_emd(diff, ref)
        return np.maximum(diff, 0.0).sum(axis=1)

    @staticmethod
    def _hierarchical_emd(diff: np.ndarray, ref: _Reference) -> np.ndarray:
        """Li et al.'s sum over inner nodes of ``height(N) / H * min(pos_extra, neg_extra)``."""
        total = np.zeros(diff.shape[0])
        for j in range(ref.height):
            extra = diff @ ref.group[j]  # extra of each level-j node
            pos = np.maximum(extra, 0.0) @ ref.parent[j]
            neg = np.maximum(-extra, 0.0) @ ref.parent[j]
            total += (j + 1) / ref.height * np.minimum(pos, neg).sum(axis=1)
        return total

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """``distance <= t + TOLERANCE`` for each non-empty class.

        Raises:
            RuntimeError: the model is not bound (:meth:`bind`).
        """
        return (self.measure(s) <= self.t + TOLERANCE) & (s.size >= 1)

    def _worst(self, s: ClassSummaries) -> dict[str, float]:
        return {"max_distance": float(self.measure(s).max())}
