"""(k,l)-diversity for relational-transaction data (Gong et al. 2016, definition 8).

The published table has two partitions of its records (Gong et al. 2016, section 2): the
groups (equivalence classes, joined to the relational part by the group id) and the
TBuckets (the records sharing one published transaction set, across the whole
table, definition 2). (k,l)-diversity asks

1. every TBucket to hold at least ``k`` records (k-anonymity on the transaction
   data, definition 6), and
2. in every group ``G``, every published set to occur at most ``|G| / l`` times
   (l-diversity on RT-data, definition 7).

Reading chosen: definition 7 glosses condition 2 as "at least ``l`` distinct sets,
each at most ``|EC| / l`` of the class"; we test the frequency bound
``max_count * l <= |G|`` alone, in integers. It implies the distinct count (a group
whose most frequent set holds at most ``1/l`` of it has at least ``l`` distinct sets).

Both conditions are monotonic. Merging two groups that pass the frequency test gives
a group that passes: a set's count in the union is at most ``m1 + m2 <= (|G1| +
|G2|) / l``. Merging TBuckets (generalizing two sets to the same published set) adds
their sizes, so buckets of at least ``k`` stay so. The frequency test is not
additive: adding records of one set to a group can break it.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from sparkanon.errors import ConfigError
from sparkanon.models.base import ClassSummaries, Int, PrivacyModel, SensitiveDomain


class KLDiversity(PrivacyModel):
    """(k,l)-diversity (Gong et al. 2016, def. 8): TBuckets of ``k``, sets of at most ``|G|/l``.

    :meth:`satisfied` checks the groups (classes over the published-set codes);
    the TBucket condition spans the whole table and is checked with
    :meth:`buckets_satisfied` on the TBucket sizes.

    Attributes:
        k: fewest records sharing one published set (a TBucket), >= 1.
        l: a published set may hold at most ``1/l`` of a group's records, >= 1.
    """

    monotonic: ClassVar[bool] = True
    """Both conditions survive merging (groups for the frequency test, equal sets for
    TBuckets); see the module docstring."""
    additive: ClassVar[bool] = False
    set_valued: ClassVar[bool] = True
    _size_param: ClassVar[str | None] = "l"

    name: Literal["kl_diversity"] = "kl_diversity"
    k: Annotated[Int, Field(ge=1)]
    l: Annotated[Int, Field(ge=1)]  # noqa: E741 (the paper's name)

    def min_class_size(self) -> int:
        """``l``: a non-empty group's most frequent set holds a record, so ``|G| >= l``."""
        return self.l

    def groups_satisfied(self, sizes: np.ndarray, max_counts: np.ndarray) -> np.ndarray:
        """The frequency test per group: ``max_count * l <= size``, in integers.

        Args:
            sizes: records per group.
            max_counts: records of each group's most frequent published set.

        Returns:
            Boolean per group; an empty group fails.
        """
        sizes = np.asarray(sizes, dtype=np.int64)
        max_counts = np.asarray(max_counts, dtype=np.int64)
        return (max_counts * self.l <= sizes) & (sizes > 0)

    def buckets_satisfied(self, sizes: np.ndarray) -> np.ndarray:
        """The TBucket test per published set: ``size >= k``.

        Args:
            sizes: records per TBucket (distinct published set) over the whole table.

        Returns:
            Boolean per TBucket.
        """
        return np.asarray(sizes, dtype=np.int64) >= self.k

    def satisfied(self, s: ClassSummaries) -> np.ndarray:
        """The frequency test per class, the sensitive codes being the published sets."""
        return self.groups_satisfied(s.size, self.measure(s))

    def measure(self, s: ClassSummaries) -> np.ndarray:
        """Records of each class's most frequent published set."""
        if s.n_values == 0:
            return np.zeros(s.m, dtype=np.int64)
        return s.counts.max(axis=1)

    def _worst(self, s: ClassSummaries) -> dict[str, float]:
        top = self.measure(s)
        size = s.size
        share = np.divide(top, size, out=np.zeros(s.m), where=size > 0)
        return {"max_set_share": float(share.max()), "min_class_size": int(size.min())}

    def check_sets_feasible(
        self,
        n_records: int,
        largest_bucket: int,
        key: str = "model",
        n_distinct: int | None = None,
    ) -> None:
        """Fail when no grouping of the records, published whole, satisfies the model.

        Generalization only merges sets, so the largest published TBucket holds at
        least ``largest_bucket`` records; a set may hold at most ``1/l`` of every
        group, hence (summing over groups) of the table. So ``largest_bucket * l``
        must not exceed ``n_records``, and the table must hold ``k`` records.
        APA and PAA would otherwise suppress records (reason 3).

        Args:
            n_records: records of the table (or block) to anonymize.
            largest_bucket: records of its largest TBucket of original sets.
            key: the model's config key, for messages.
            n_distinct: distinct original sets, for a clearer message when below ``l``.

        Raises:
            ConfigError: naming ``k`` or ``l``, its value, the figures and a fix.
        """
        if n_records < self.k:
            raise ConfigError(
                f"{key}.k = {self.k}: every published set needs at least {self.k} records "
                f"(a TBucket) but the table holds only {n_records}; lower k to at most "
                f"{max(n_records, 1)}"
            )
        if n_distinct is not None and n_distinct < self.l:
            raise ConfigError(
                f"{key}.l = {self.l}: every group needs at least {self.l} different published "
                f"sets but the table holds only {n_distinct} distinct sets; lower l to at most "
                f"{max(n_distinct, 1)}"
            )
        if largest_bucket * self.l > n_records:
            raise ConfigError(
                f"{key}.l = {self.l}: one set is held by {largest_bucket} of the {n_records} "
                f"records, more than 1/{self.l} of the table, so it holds more than 1/{self.l} "
                f"of some group whatever the grouping and generalization; lower l to at most "
                f"{max(n_records // max(largest_bucket, 1), 1)}"
            )

    def check_feasible(self, domain: SensitiveDomain, rows: int, key: str) -> None:
        """:meth:`check_sets_feasible` with the figures of ``domain``.

        Args:
            domain: the set-valued attribute as a sensitive domain: one value per
                distinct original set, its count the set's TBucket size.
            rows: records of the table.
            key: the model's config key, for messages.

        Raises:
            ConfigError: see :meth:`check_sets_feasible`.
        """
        counts = domain.counts
        largest = int(counts.max()) if counts.size else 0
        self.check_sets_feasible(rows, largest, key, n_distinct=int((counts > 0).sum()))
