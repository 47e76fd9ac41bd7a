"""l-diversity (textbook section 20.3.2; Machanavajjhala et al., TKDD 2007).

Three instantiations of "l well-represented sensitive values" per class:

* distinct l-diversity: at least ``l`` distinct values;
* entropy l-diversity (definition 20.3.3, eq. 20.10): the entropy of the
  class's value shares is at least ``log(l)``;
* recursive (c,l)-diversity (definition 20.3.4, eq. 20.11): with the shares
  sorted in decreasing order, ``p_1 < c * (p_l + ... + p_r)``.

Entropy and recursive diversity both need at least ``l`` distinct values per
class (exercise 7), so every diverse class has at least ``l`` rows.
"""

from __future__ import annotations

import math
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from sparkanon.errors import ConfigError
from sparkanon.models.base import (
    TOLERANCE,
    ClassSummaries,
    Float,
    Int,
    PrivacyModel,
    SensitiveDomain,
    distinct_present,
    fmt_number,
)
from sparkanon.models.k_anonymity import _check_distinct


def class_entropy(s: ClassSummaries) -> np.ndarray:
    """``(m,)`` entropy ``-sum p_i log p_i`` of each class's value shares, in nats.

    Values absent from a class contribute 0 (``0 log 0 = 0``); an empty class has entropy 0.
    """
    p = s.shares()
    safe = np.where(p > 0, p, 1.0)
    return -(p * np.log(safe)).sum(axis=1)


class DistinctLDiversity(PrivacyModel):
    """Distinct l-diversity: at least ``l`` distinct sensitive values per class.

    Attributes:
        l: minimum distinct sensitive values per class, an integer >= 1.
    """

    additive: ClassVar[bool] = True

    _size_param: ClassVar[str | None] = "l"

    name: Literal["distinct_l"] = "distinct_l"
    l: Annotated[Int, Field(ge=1)]  # noqa: E741 (the papers' name)

    def min_class_size(self) -> int:
        """``l``: ``l`` distinct values need ``l`` rows."""
        return self.l

    def min_distinct_values(self) -> int:
        """As many distinct values as the fewest rows: :meth:`min_class_size`."""
        return self.min_class_size()

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """``distinct >= l`` per class."""
        return s.distinct() >= self.l

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """Distinct sensitive values per class."""
        return s.distinct()

    def _worst(self, s: ClassSummaries) -> dict[str, float]:
        return {"min_distinct_values": int(s.distinct().min())}

    def _check_domain(self, domain: SensitiveDomain, key: str) -> None:
        present = distinct_present(domain)
        _check_distinct(domain, key, "l", self.l, self.name, f"lower l to at most {present}")


class EntropyLDiversity(PrivacyModel):
    """Entropy l-diversity (definition 20.3.3, eq. 20.10).

    A class satisfies it when ``-sum_i p_i log p_i >= log(l)``, ``p_i`` the
    shares of its distinct sensitive values. The base of the logarithm cancels
    out; natural logarithms are used and :meth:`measure` reports nats. The
    comparison allows :data:`~sparkanon.models.base.TOLERANCE`, so a class
    of exactly ``l`` equally frequent values passes despite rounding; a class
    must also hold at least ``ceil(l)`` distinct values, which the entropy
    bound implies (the entropy of ``r`` values is at most ``log r``,
    exercise 7) and which keeps the tolerance from admitting fewer.

    Attributes:
        l: a real number >= 1 (the "effective number of values", ``exp(entropy)``).
    """

    _size_param: ClassVar[str | None] = "l"

    name: Literal["entropy_l"] = "entropy_l"
    l: Annotated[Float, Field(ge=1)]  # noqa: E741 (the papers' name)

    def min_class_size(self) -> int:
        """``ceil(l)``: the entropy bound needs at least ``l`` distinct values."""
        return math.ceil(self.l)

    def min_distinct_values(self) -> int:
        """As many distinct values as the fewest rows: :meth:`min_class_size`."""
        return self.min_class_size()

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """``entropy >= log(l) - TOLERANCE`` and ``distinct >= ceil(l)`` per class."""
        return (class_entropy(s) >= math.log(self.l) - TOLERANCE) & (
            s.distinct() >= self.min_class_size()
        )

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """Entropy of each class's sensitive shares, in nats."""
        return class_entropy(s)

    def _worst(self, s: ClassSummaries) -> dict[str, float]:
        h = float(class_entropy(s).min())
        return {"min_entropy": h, "effective_l": math.exp(h)}

    def _check_domain(self, domain: SensitiveDomain, key: str) -> None:
        present = distinct_present(domain)
        l_text = fmt_number(self.l)
        if present < self.min_class_size():
            raise ConfigError(
                f"{key}.l = {l_text}: entropy l-diversity needs at least {self.min_class_size()} "
                "distinct sensitive values in every class (exercise 7), but the data holds "
                f"{present} distinct values of {domain.name!r}; lower l to at most {present}"
            )
        h = float(class_entropy(domain.global_summary())[0])
        if h < math.log(self.l) - TOLERANCE:
            effective = math.exp(h)
            most = math.floor(effective * 100) / 100
            raise ConfigError(
                f"{key}.l = {l_text}: the whole table's entropy of {domain.name!r} is "
                f"log({effective:.4g}) < log({l_text}); a table's entropy is at least the "
                "smallest entropy of its classes (exercise 8), so no partition can give every "
                f"class log({l_text}); lower l to at most {most}"
            )


class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c,l)-diversity (definition 20.3.4, eq. 20.11).

    With a class's value counts sorted in decreasing order ``r_1 >= ... >= r_r``,
    the class satisfies it when ``r_1 < c * (r_l + r_{l+1} + ... + r_r)``
    (equivalently with shares; counts avoid rounding). The inequality is strict,
    as in the definition. A class with fewer than ``l`` distinct values has an
    empty tail and fails (exercise 7).

    Attributes:
        c: a real number > 0.
        l: an integer >= 1 (``l = 1`` reads ``p_1 < c``).
    """

    _size_param: ClassVar[str | None] = "l"

    name: Literal["recursive_cl"] = "recursive_cl"
    c: Annotated[Float, Field(gt=0)]
    l: Annotated[Int, Field(ge=1)]  # noqa: E741 (the papers' name)

    def min_class_size(self) -> int:
        """``l``: the tail from the l-th most frequent value on must be non-empty."""
        return self.l

    def min_distinct_values(self) -> int:
        """As many distinct values as the fewest rows: :meth:`min_class_size`."""
        return self.min_class_size()

    def _head_tail(self, s: ClassSummaries) -> tuple[np.ndarray, np.ndarray]:
        """``(m,)`` count of the most frequent value and of the tail ``r_l + ... + r_r``."""
        if s.n_values == 0:
            zero = np.zeros(s.m, dtype=np.int64)
            return zero, zero
        ordered = -np.sort(-s.counts, axis=1)
        return ordered[:, 0], ordered[:, self.l - 1 :].sum(axis=1)

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """``r_1 < c * (r_l + ... + r_r)`` per class."""
        head, tail = self._head_tail(s)
        return (head < self.c * tail) & (s.size >= 1)

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """The ratio ``p_1 / (p_l + ... + p_r)`` per class (``inf`` with an empty tail).

        A class satisfies the model exactly when its ratio is below ``c``.
        """
        head, tail = self._head_tail(s)
        out = np.full(s.m, np.inf)
        np.divide(head, tail, out=out, where=tail > 0)
        return out

    def _worst(self, s: ClassSummaries) -> dict[str, float]:
        return {"max_recursive_ratio": float(self.measure(s).max())}

    def _check_domain(self, domain: SensitiveDomain, key: str) -> None:
        present = distinct_present(domain)
        _check_distinct(domain, key, "l", self.l, self.name, f"lower l to at most {present}")
        whole = domain.global_summary()
        if not bool(self.satisfied(whole)[0]):
            head, tail = self._head_tail(whole)
            rows = whole.size[0]
            ratio = head[0] / tail[0]
            raise ConfigError(
                f"{key}.c = {fmt_number(self.c)}: in the whole table the most frequent value of "
                f"{domain.name!r} has share {head[0] / rows:.4g} and the values from the "
                f"{self.l}-th most frequent on have {tail[0] / rows:.4g} together, a ratio of "
                f"{ratio:.4g} >= c; the model is monotonic, so no partition into classes can "
                f"satisfy it; raise c above {ratio:.4g} or lower l"
            )
