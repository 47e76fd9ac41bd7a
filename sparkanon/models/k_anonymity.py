"""Counting models: k-anonymity, p-sensitive k-anonymity and (H,p,k)-anonymity.

Each bounds counts that can only grow when classes are merged (rows, distinct
sensitive values, distinct sensitivity levels), hence each is monotonic.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from sparkanon.errors import ConfigError
from sparkanon.models.base import (
    ClassSummaries,
    Int,
    PrivacyModel,
    SensitiveDomain,
    distinct_present,
)


class KAnonymity(PrivacyModel):
    """k-anonymity (textbook definition 20.3.1): every class has at least ``k`` rows.

    Attributes:
        k: minimum rows per class, >= 1.
    """

    additive: ClassVar[bool] = True

    uses_sensitive: ClassVar[bool] = False
    _size_param: ClassVar[str | None] = "k"

    name: Literal["k"] = "k"
    k: Annotated[Int, Field(ge=1)]

    def min_class_size(self) -> int:
        """``k``."""
        return self.k

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """``size >= k`` per class."""
        return s.size >= self.k

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """The class sizes."""
        return s.size.copy()

    def _worst(self, s: ClassSummaries) -> dict[str, float]:
        return {"min_class_size": int(s.size.min())}


def _check_distinct(
    domain: SensitiveDomain, key: str, param: str, value: int, model: str, fix: str
) -> None:
    """Fail when fewer distinct sensitive values are present than ``value``."""
    present = distinct_present(domain)
    if present < value:
        raise ConfigError(
            f"{key}.{param} = {value}: {model} needs at least {value} distinct sensitive values "
            f"in every class, but the data holds {present} distinct values of {domain.name!r}; "
            f"{fix}"
        )


def _check_p_at_most_k(p: int, k: int) -> None:
    """Refuse more distinct sensitive values a class than rows.

    Raises:
        ValueError: ``p > k``.
    """
    if p > k:
        raise ValueError(
            f"p = {p} > k = {k}: no class can hold more distinct sensitive values "
            "than rows; lower p or raise k"
        )


def _k_and_p_hold(s: ClassSummaries, k: int, p: int) -> np.ndarray:
    """``(m,)`` whether each class has at least ``k`` rows and ``p`` distinct sensitive values."""
    return (s.size >= k) & (s.distinct() >= p)


def _k_and_p_worst(s: ClassSummaries) -> dict[str, float]:
    """The smallest class size and the fewest distinct sensitive values of any class."""
    return {
        "min_class_size": int(s.size.min()),
        "min_distinct_values": int(s.distinct().min()),
    }


class PSensitiveKAnonymity(PrivacyModel):
    """p-sensitive k-anonymity: at least ``k`` rows and ``p`` distinct sensitive values per class.

    Attributes:
        k: minimum rows per class, >= 1.
        p: minimum distinct sensitive values per class, ``1 <= p <= k``.
    """

    additive: ClassVar[bool] = True

    _size_param: ClassVar[str | None] = "k"

    name: Literal["p_sensitive"] = "p_sensitive"
    k: Annotated[Int, Field(ge=1)]
    p: Annotated[Int, Field(ge=1)]

    @model_validator(mode="after")
    def _p_at_most_k(self) -> PSensitiveKAnonymity:
        _check_p_at_most_k(self.p, self.k)
        return self

    def min_class_size(self) -> int:
        """``k``."""
        return self.k

    def min_distinct_values(self) -> int:
        """``p``."""
        return self.p

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """``size >= k`` and ``distinct >= p`` per class."""
        return _k_and_p_hold(s, self.k, self.p)

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """Distinct sensitive values per class."""
        return s.distinct()

    def _worst(self, s: ClassSummaries) -> dict[str, float]:
        return _k_and_p_worst(s)

    def _check_domain(self, domain: SensitiveDomain, key: str) -> None:
        present = distinct_present(domain)
        _check_distinct(domain, key, "p", self.p, self.name, f"lower p to at most {present}")


class HPKAnonymity(PrivacyModel):
    """(H,p,k)-anonymity (Shi et al. 2024, definition 7).

    Every class has at least ``k`` rows, at least ``p`` distinct sensitive
    values and at least ``h`` distinct sensitivity levels, ``h <= p <= k``
    (each level present contributes at least one distinct value).

    Attributes:
        k: minimum rows per class, >= 1.
        p: minimum distinct sensitive values per class.
        h: minimum distinct sensitivity levels per class.
    """

    additive: ClassVar[bool] = True

    needs_levels: ClassVar[bool] = True
    _size_param: ClassVar[str | None] = "k"

    name: Literal["hpk"] = "hpk"
    k: Annotated[Int, Field(ge=1)]
    p: Annotated[Int, Field(ge=1)] = 1
    h: Annotated[Int, Field(ge=1)] = 1

    @model_validator(mode="after")
    def _h_p_k_ordered(self) -> HPKAnonymity:
        _check_p_at_most_k(self.p, self.k)
        if self.h > self.p:
            raise ValueError(
                f"h = {self.h} > p = {self.p}: (H,p,k)-anonymity needs h <= p <= k "
                "(Shi et al. 2024, "
                "definition 7); lower h or raise p"
            )
        return self

    def min_class_size(self) -> int:
        """``k``."""
        return self.k

    def min_distinct_values(self) -> int:
        """``p``."""
        return self.p

    def min_distinct_levels(self) -> int:
        """``h``."""
        return self.h

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """``size >= k``, ``distinct >= p`` and ``distinct levels >= h`` per class."""
        return _k_and_p_hold(s, self.k, self.p) & (s.distinct_levels() >= self.h)

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """Distinct sensitivity levels per class."""
        return s.distinct_levels()

    def _worst(self, s: ClassSummaries) -> dict[str, float]:
        return {**_k_and_p_worst(s), "min_distinct_levels": int(s.distinct_levels().min())}

    def _check_domain(self, domain: SensitiveDomain, key: str) -> None:
        if domain.level_of is None:
            raise ConfigError(
                f"{key}: hpk counts sensitivity levels but {domain.name!r} has none; declare "
                "sensitive.levels, or use p_sensitive"
            )
        present = distinct_present(domain)
        _check_distinct(domain, key, "p", self.p, self.name, f"lower p to at most {present}")
        levels = int(np.unique(domain.level_of[domain.present()]).size)
        if levels < self.h:
            raise ConfigError(
                f"{key}.h = {self.h}: hpk needs at least {self.h} distinct sensitivity levels in "
                f"every class, but the values of {domain.name!r} in the data fall in {levels} "
                f"level(s); lower h to at most {levels}"
            )

    def bind(self, domain: SensitiveDomain) -> HPKAnonymity:
        """``self``; fails early when the table has no sensitivity levels."""
        if domain.level_of is None:
            raise ConfigError(
                f"hpk counts sensitivity levels but {domain.name!r} has none; declare "
                "sensitive.levels, or use p_sensitive"
            )
        return self
