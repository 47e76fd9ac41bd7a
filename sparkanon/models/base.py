"""Privacy models as criteria: per-class summaries, the sensitive domain, the model interface.

A privacy model (a *criterion*, as ARX calls them) looks at the published
equivalence classes through :class:`ClassSummaries`: the row count of each
class and how many of its rows hold each sensitive value. Everything is
vectorised over the classes (numpy arrays, no Python loop over classes), so the
same code checks ten classes or a million.

Models that compare a class with the whole table (t-closeness) are *bound* to
the table's :class:`SensitiveDomain` first (:meth:`PrivacyModel.bind`).
:meth:`PrivacyModel.check_feasible` rejects, before any work, parameters that
no anonymization of the data can satisfy. Several models that must all hold
form a :class:`ModelSet`.

Every model here is *monotonic*: when two classes satisfy it, so does their
union. Two consequences the pipeline relies on: classes that publish the same
generalised record may be merged, and if the whole table taken as one class
fails the model, every partition of it has a failing class (the union of
satisfying classes would otherwise satisfy it), which is what
:meth:`PrivacyModel.check_feasible` tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Strict

from sparkanon.errors import ConfigError

Int = Annotated[int, Strict()]
"""An integer parameter: ``true`` is not 1, ``"8"`` and ``8.0`` are not 8."""
Float = Annotated[float, Strict()]
"""A real parameter: an integer such as ``2`` is accepted, ``true`` and ``"0.5"`` are not."""

TOLERANCE = 1e-12
"""Slack of the floating-point comparisons ``entropy >= log(l)`` and ``distance <= t``.

It lets a class that meets a bound exactly (``l`` equally frequent values, a
distance equal to ``t``) pass despite rounding in the last bit.
"""


def _int_array(values: Any, what: str, ndim: int) -> np.ndarray:
    """``values`` as a fresh int64 array of ``ndim`` dimensions, every entry >= 0."""
    arr = np.array(values, dtype=np.int64, copy=True)
    if arr.ndim != ndim:
        raise ValueError(f"{what} must have {ndim} dimension(s), got shape {arr.shape}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"{what} holds a negative entry ({int(arr.min())})")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class ClassSummaries:
    """Per-class statistics of ``m`` classes over a sensitive domain of ``V`` value codes.

    The arrays are copied, converted to int64 and made read-only. ``V`` may be
    0 when the job has no sensitive attribute (plain k-anonymity); otherwise
    every class's counts sum to its size.

    Attributes:
        size: ``(m,)`` rows per class.
        counts: ``(m, V)`` rows of each sensitive value code per class.
        level_of: ``(V,)`` the sensitivity level index of each value code, or
            ``None`` when the job has no levels.
    """

    size: np.ndarray
    counts: np.ndarray
    level_of: np.ndarray | None = None

    def __post_init__(self) -> None:
        size = _int_array(self.size, "size", 1)
        counts = _int_array(self.counts, "counts", 2)
        if counts.shape[0] != size.shape[0]:
            raise ValueError(
                f"counts has {counts.shape[0]} rows but size has {size.shape[0]} classes"
            )
        if counts.shape[1] and not np.array_equal(counts.sum(axis=1), size):
            bad = int(np.flatnonzero(counts.sum(axis=1) != size)[0])
            raise ValueError(
                f"class {bad}: its counts sum to {int(counts[bad].sum())} but its size is "
                f"{int(size[bad])}"
            )
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "counts", counts)
        if self.level_of is not None:
            level_of = _int_array(self.level_of, "level_of", 1)
            if level_of.shape[0] != counts.shape[1]:
                raise ValueError(
                    f"level_of has {level_of.shape[0]} entries for {counts.shape[1]} value codes"
                )
            object.__setattr__(self, "level_of", level_of)

    @property
    def m(self) -> int:
        """Number of classes."""
        return int(self.size.shape[0])

    @property
    def n_values(self) -> int:
        """Number of sensitive value codes ``V``."""
        return int(self.counts.shape[1])

    def distinct(self) -> np.ndarray:
        """``(m,)`` number of sensitive values with at least one row in each class."""
        return (self.counts > 0).sum(axis=1)

    def shares(self) -> np.ndarray:
        """``(m, V)`` share of each value in each class (``counts / size``; zeros for size 0)."""
        size = self.size[:, None].astype(float)
        out = np.zeros(self.counts.shape, dtype=float)
        np.divide(self.counts, size, out=out, where=size > 0)
        return out

    def level_counts(self) -> np.ndarray:
        """``(m, L)`` rows of each sensitivity level per class, ``L = max(level_of) + 1``.

        Raises:
            ValueError: the summaries carry no levels (``level_of`` is ``None``).
        """
        if self.level_of is None:
            raise ValueError("these class summaries carry no sensitivity levels (level_of)")
        n_levels = int(self.level_of.max()) + 1 if self.level_of.size else 0
        onehot = np.zeros((self.n_values, n_levels), dtype=np.int64)
        onehot[np.arange(self.n_values), self.level_of] = 1
        return self.counts @ onehot

    def distinct_levels(self) -> np.ndarray:
        """``(m,)`` number of sensitivity levels with at least one row in each class."""
        return (self.level_counts() > 0).sum(axis=1)

    def union(self) -> ClassSummaries:
        """All the classes merged into one (their counts summed)."""
        return ClassSummaries(
            size=self.size.sum(keepdims=True),
            counts=self.counts.sum(axis=0, keepdims=True),
            level_of=self.level_of,
        )

    @classmethod
    def from_codes(
        cls,
        class_index: np.ndarray,
        sens_codes: np.ndarray,
        n_classes: int,
        n_values: int,
        level_of: np.ndarray | None = None,
    ) -> ClassSummaries:
        """Summaries from one class index and one sensitive value code per row.

        Args:
            class_index: ``(n,)`` class of each row, in ``[0, n_classes)``.
            sens_codes: ``(n,)`` sensitive value code of each row, in
                ``[0, n_values)``; ignored (may be empty) when ``n_values`` is 0.
            n_classes: number of classes ``m`` (classes without rows get size 0).
            n_values: size ``V`` of the sensitive domain.
            level_of: ``(V,)`` level index of each value code, or ``None``.

        Returns:
            The summaries of the ``n_classes`` classes.

        Raises:
            ValueError: an index or code out of range, or arrays of different lengths.
        """
        idx = np.asarray(class_index, dtype=np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= n_classes):
            raise ValueError(
                f"class_index must lie in [0, {n_classes}), got {idx.min()}..{idx.max()}"
            )
        size = np.bincount(idx, minlength=n_classes)
        if n_values == 0:
            return cls(
                size=size, counts=np.zeros((n_classes, 0), dtype=np.int64), level_of=level_of
            )
        codes = np.asarray(sens_codes, dtype=np.int64).ravel()
        if codes.shape != idx.shape:
            raise ValueError(f"{idx.size} class indices but {codes.size} sensitive codes")
        if codes.size and (codes.min() < 0 or codes.max() >= n_values):
            raise ValueError(
                f"sensitive codes must lie in [0, {n_values}), got {codes.min()}..{codes.max()}"
            )
        flat = np.bincount(idx * n_values + codes, minlength=n_classes * n_values)
        return cls(size=size, counts=flat.reshape(n_classes, n_values), level_of=level_of)

    @classmethod
    def single(
        cls, sens_codes: np.ndarray, n_values: int, level_of: np.ndarray | None = None
    ) -> ClassSummaries:
        """Summaries of one class holding every row of ``sens_codes``."""
        codes = np.asarray(sens_codes, dtype=np.int64).ravel()
        return cls.from_codes(np.zeros(codes.size, dtype=np.int64), codes, 1, n_values, level_of)

    @classmethod
    def stack(cls, parts: Sequence[ClassSummaries]) -> ClassSummaries:
        """The classes of several summaries, in order, as one summaries object.

        Raises:
            ValueError: no parts, or parts over different domains or levels.
        """
        if not parts:
            raise ValueError("stack needs at least one ClassSummaries")
        first = parts[0]
        for part in parts[1:]:
            if part.n_values != first.n_values:
                raise ValueError(
                    f"cannot stack summaries over {first.n_values} and {part.n_values} values"
                )
            same_levels = (part.level_of is None and first.level_of is None) or (
                part.level_of is not None
                and first.level_of is not None
                and np.array_equal(part.level_of, first.level_of)
            )
            if not same_levels:
                raise ValueError("cannot stack summaries with different sensitivity levels")
        return cls(
            size=np.concatenate([p.size for p in parts]),
            counts=np.concatenate([p.counts for p in parts], axis=0),
            level_of=first.level_of,
        )


@dataclass(frozen=True, eq=False)
class SensitiveDomain:
    """The sensitive attribute over the whole table.

    Attributes:
        values: the sensitive values, in code order (code ``i`` is ``values[i]``).
        counts: ``(V,)`` the whole table's rows of each value (the global distribution).
        level_of: ``(V,)`` sensitivity level index of each value code, or ``None``.
        order: the values declared from lowest to highest (for the ordered
            ground distance of t-closeness), or ``None``.
        name: the sensitive attribute's column name, for messages and for
            loading its hierarchy.
    """

    values: tuple[str, ...]
    counts: np.ndarray
    level_of: np.ndarray | None = None
    order: tuple[str, ...] | None = None
    name: str = field(default="sensitive")

    def __post_init__(self) -> None:
        values = tuple(str(v) for v in self.values)
        if len(set(values)) != len(values):
            raise ValueError(f"sensitive values of {self.name!r} repeat: {values}")
        counts = _int_array(self.counts, "counts", 1)
        if counts.shape[0] != len(values):
            raise ValueError(f"{counts.shape[0]} counts for {len(values)} values")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "counts", counts)
        if self.level_of is not None:
            level_of = _int_array(self.level_of, "level_of", 1)
            if level_of.shape[0] != len(values):
                raise ValueError(
                    f"level_of has {level_of.shape[0]} entries for {len(values)} values"
                )
            object.__setattr__(self, "level_of", level_of)
        if self.order is not None:
            object.__setattr__(self, "order", tuple(str(v) for v in self.order))

    @property
    def rows(self) -> int:
        """Rows of the whole table."""
        return int(self.counts.sum())

    def present(self) -> np.ndarray:
        """``(V,)`` whether each value has at least one row."""
        return self.counts > 0

    def global_summary(self) -> ClassSummaries:
        """The whole table as one class."""
        return ClassSummaries(
            size=self.counts.sum(keepdims=True),
            counts=self.counts[None, :],
            level_of=self.level_of,
        )

    def ranks(self) -> np.ndarray:
        """``(V,)`` position of each value code on the ordered line (0 = lowest).

        The line is the declared ``order`` when given (positions in it, so
        declared values absent from the data keep their place), otherwise the
        distinct numeric values sorted (values that parse to the same number
        share a position). The line's length is :meth:`line_length`.

        Raises:
            ConfigError: a value missing from the declared order, a value
                declared twice, or non-numeric values without a declared order.
        """
        if self.order is not None:
            pos: dict[str, int] = {}
            for i, v in enumerate(self.order):
                if v in pos:
                    raise ConfigError(
                        f"sensitive value {v!r} of {self.name!r} is declared twice in its order"
                    )
                pos[v] = i
            missing = [v for v in self.values if v not in pos]
            if missing:
                shown = ", ".join(repr(v) for v in missing[:5])
                raise ConfigError(
                    f"sensitive value(s) {shown} of {self.name!r} are not in the declared order "
                    f"{list(self.order)}; add them to sensitive.values, from lowest to highest"
                )
            return np.array([pos[v] for v in self.values], dtype=np.int64)
        numbers = []
        for v in self.values:
            try:
                x = float(v)
            except ValueError:
                x = math.nan
            if not math.isfinite(x):
                raise ConfigError(
                    f"the ordered ground distance needs the values of {self.name!r} in order: "
                    f"{v!r} is not a number; declare sensitive.values from lowest to highest, "
                    "or use ground: equal or hierarchical"
                )
            numbers.append(x)
        _, inverse = np.unique(np.array(numbers, dtype=float), return_inverse=True)
        return inverse.astype(np.int64).ravel()

    def line_length(self) -> int:
        """Number of positions on the ordered line of :meth:`ranks`."""
        if self.order is not None:
            return len(self.order)
        return int(self.ranks().max()) + 1 if self.values else 0


class PrivacyModel(BaseModel):
    """A privacy model: which equivalence classes may be published.

    Subclasses are frozen pydantic models whose fields are the parameters
    (validated on construction, ``extra="forbid"``, strict numbers) and whose
    ``name`` literal is the discriminator of :data:`sparkanon.models.ModelConfig`.

    Every class must have at least :meth:`min_class_size` rows; this holds for
    every model here (an empty class never satisfies a model).

    Attributes:
        monotonic: whether the union of two classes that satisfy the model
            satisfies it. True for every model here: counts of rows, distinct
            values and distinct levels only grow under union; the entropy is
            concave, so the union's entropy is at least the smaller of the two
            (textbook exercises 8, 9(a) and 12); recursive (c,l)-diversity is
            monotonic too (exercise 9(b), lemma 20.3.2); the variational
            distance, the KL divergence (exercise 11) and the earth mover's
            distance (lemma 20.3.3, eq. 20.15) are convex in the class's
            distribution, and the union's distribution is a convex
            combination of the two, so its distance is at most the larger
            (exercise 12).
        additive: whether adding *any* rows to a satisfying class keeps it
            satisfying (true for the count models: k-anonymity, p-sensitive,
            (H,p,k), distinct l-diversity; false for entropy and recursive
            l-diversity and t-closeness, where a few rows of one value can break a
            class). Cross-block reconciliation relies on it, and so does the pruning of
            the full-domain searches when rows may be suppressed
            (:func:`sparkanon.algorithms.lattice.search.prunable`).
        needs_levels: the model reads sensitivity levels (``level_of``).
        uses_sensitive: the model reads the sensitive attribute at all.
        compares_with_table: a class's verdict depends on the whole published table
            (t-closeness compares each class with the table's distribution). Such a
            model must be bound to the distribution of the rows that are *published*:
            suppressing rows changes it, so the job verifies against the published
            rows and the algorithms avoid suppression under it
            (:func:`sparkanon.per_block.reconcile.absorb_unplaced`).
        set_valued: the model protects a set-valued sensitive attribute (item sets
            published as anatomy's RT and TT tables) rather than one value per row.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    monotonic: ClassVar[bool] = True
    additive: ClassVar[bool] = False
    needs_levels: ClassVar[bool] = False
    uses_sensitive: ClassVar[bool] = True
    compares_with_table: ClassVar[bool] = False
    set_valued: ClassVar[bool] = False
    _size_param: ClassVar[str | None] = None
    """The parameter that sets :meth:`min_class_size` (named when the table is too small)."""

    name: str

    def min_class_size(self) -> int:
        """The fewest rows a class that satisfies the model can have."""
        return 1

    def min_distinct_values(self) -> int:
        """The fewest distinct sensitive values a class that satisfies the model holds."""
        return 1

    def min_distinct_levels(self) -> int:
        """The fewest distinct sensitivity levels a class that satisfies the model holds."""
        return 1

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """``(m,)`` whether each class satisfies the model (vectorised)."""
        raise NotImplementedError

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """``(m,)`` the per-class quantity the model bounds."""
        raise NotImplementedError

    def worst(self, s: ClassSummaries) -> dict[str, float]:
        """The worst value over the classes of each quantity the model bounds, named.

        Args:
            s: the class summaries.

        Returns:
            E.g. ``{"min_class_size": 8}``; empty when ``s`` has no class.
        """
        if s.m == 0:
            return {}
        return self._worst(s)

    def _worst(self, s: ClassSummaries) -> dict[str, float]:
        raise NotImplementedError

    def bind(self, domain: SensitiveDomain) -> PrivacyModel:
        """The model ready to check classes of this table (``self`` unless it needs the table)."""
        return self

    def describe(self) -> dict[str, Any]:
        """The model's name and parameters, JSON-serialisable (for metrics.json)."""
        return self.model_dump(mode="json", by_alias=True)

    def check_feasible(self, domain: SensitiveDomain, rows: int, key: str) -> None:
        """Fail when no anonymization of the table can satisfy the model.

        The table must hold at least :meth:`min_class_size` rows, and, the
        model being monotonic, the whole table taken as one class must satisfy
        it: if it failed, every partition of the table would have a failing
        class. Models add checks with clearer messages for the usual causes
        (``l`` above the number of distinct values present...). The reasoning
        assumes every row is published; suppressing rows changes the table.

        Args:
            domain: the sensitive attribute over the whole table.
            rows: rows of the table to anonymize.
            key: the model's config key (e.g. ``model.1``), for messages.

        Raises:
            ConfigError: naming ``key`` and the parameter, its value, what the
                data has and a fix.
        """
        need = self.min_class_size()
        if rows < need:
            param = self._size_param
            if param is None:
                raise ConfigError(f"{key}: the table holds no rows; {self.name} needs at least one")
            value = fmt_number(getattr(self, param))
            raise ConfigError(
                f"{key}.{param} = {value}: every class needs at least {need} rows but the table "
                f"holds only {rows} usable rows (after dropping rows with missing or invalid "
                f"values); lower {param} to at most {rows}"
            )
        if not self.uses_sensitive:
            return
        try:
            bound = self.bind(domain)
        except ConfigError as exc:
            raise ConfigError(f"{key}: {exc}") from exc
        self._check_domain(domain, key)
        whole = domain.global_summary()
        if self.monotonic and not bool(bound.satisfied(whole)[0]):
            achieved = ", ".join(f"{k} = {fmt_number(v)}" for k, v in bound.worst(whole).items())
            raise ConfigError(
                f"{key}: the whole table taken as one class fails {self.name} ({achieved}), so "
                "no partition into classes can satisfy it (the model is monotonic); relax "
                "its parameters"
            )

    def _check_domain(self, domain: SensitiveDomain, key: str) -> None:
        """Model-specific feasibility checks with precise messages (none by default)."""


def fmt_number(x: float) -> str:
    """A number for messages: integers as such, reals with 4 significant digits."""
    if isinstance(x, (int, np.integer)) or (math.isfinite(x) and float(x).is_integer()):
        return str(int(x))
    return f"{x:.4g}"


def distinct_present(domain: SensitiveDomain) -> int:
    """Number of sensitive values with at least one row in the table."""
    return int(domain.present().sum())


def _every_model(flag: str, doc: str) -> property:
    """A :class:`ModelSet` property: whether the boolean ``flag`` of every model holds."""
    return property(lambda self: all(getattr(m, flag) for m in self.models), doc=doc)


def _any_model(flag: str, doc: str) -> property:
    """A :class:`ModelSet` property: whether the boolean ``flag`` of any model holds."""
    return property(lambda self: any(getattr(m, flag) for m in self.models), doc=doc)


class ModelSet:
    """Several privacy models that must all hold (ARX combines criteria the same way).

    Args:
        models: the models; none for a release no class model protects (a perturbed
            one: its noise is its protection), which every check then passes vacuously.
    """

    def __init__(self, models: Iterable[PrivacyModel]) -> None:
        self.models: tuple[PrivacyModel, ...] = tuple(models)

    def __iter__(self) -> Iterator[PrivacyModel]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def __getitem__(self, i: int) -> PrivacyModel:
        return self.models[i]

    def __repr__(self) -> str:
        return f"ModelSet({list(self.models)!r})"

    monotonic = _every_model(
        "monotonic", "Whether every model is monotonic (then so is their conjunction)."
    )
    additive = _every_model(
        "additive", "Whether adding rows to satisfying classes keeps every model satisfied."
    )
    needs_levels = _any_model("needs_levels", "Whether any model reads sensitivity levels.")
    uses_sensitive = _any_model(
        "uses_sensitive", "Whether any model reads the sensitive attribute."
    )
    compares_with_table = _any_model(
        "compares_with_table",
        "Whether any model compares a class with the whole published table.",
    )

    def min_class_size(self) -> int:
        """The largest of the models' minimum class sizes."""
        return max(m.min_class_size() for m in self.models)

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """``(m,)`` whether each class satisfies every model."""
        ok = np.ones(s.m, dtype=bool)
        for model in self.models:
            ok &= model.satisfied(s)
        return ok

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """``(m, len(self))``: column ``i`` is the quantity model ``i`` bounds."""
        return np.column_stack([np.asarray(m.measure(s), dtype=float) for m in self.models])

    def worst(self, s: ClassSummaries) -> dict[str, float]:
        """The models' worst values merged into one dict.

        A key reported by several models with the same value (e.g.
        ``min_class_size`` of ``k`` and ``p_sensitive``) appears once; with
        different values (two t-closeness models) each is prefixed by its
        model's name (``t_closeness.max_distance``), or by ``model.i`` when
        that name repeats.
        """
        parts = [m.worst(s) for m in self.models]
        names = [m.name for m in self.models]
        seen: dict[str, list[tuple[int, float]]] = {}
        for i, part in enumerate(parts):
            for k, v in part.items():
                seen.setdefault(k, []).append((i, v))
        out: dict[str, float] = {}
        for k, hits in seen.items():
            values = {v for _, v in hits}
            if len(hits) == 1 or len(values) == 1:
                out[k] = hits[0][1]
                continue
            for i, v in hits:
                unique_name = sum(names[j] == names[i] for j, _ in hits) == 1
                prefix = names[i] if unique_name else f"model.{i}"
                out[f"{prefix}.{k}"] = v
        return out

    def bind(self, domain: SensitiveDomain) -> ModelSet:
        """Every model bound to the table."""
        return ModelSet(m.bind(domain) for m in self.models)

    def check_feasible(self, domain: SensitiveDomain, rows: int, key: str = "model") -> None:
        """Run every model's feasibility check, model ``i`` under key ``{key}.{i}``."""
        for i, model in enumerate(self.models):
            model.check_feasible(domain, rows, f"{key}.{i}")

    def describe(self) -> list[dict[str, Any]]:
        """Every model's :meth:`PrivacyModel.describe`, in order."""
        return [m.describe() for m in self.models]


def describe_models(models: ModelSet) -> dict[str, Any] | list[dict[str, Any]]:
    """The models for ``metrics.json``: one mapping, or a list when several must hold."""
    described = models.describe()
    return described[0] if len(described) == 1 else described
