"""A group's condensed statistics: count, first- and second-order sums (eqs 20.6/20.7).

Aggarwal 2015, section 20.3.1.4.

A group of ``r`` records of ``d`` numeric attributes is kept as ``r``, ``Sum(i)`` (the sum
of attribute ``i``) and ``Sum(i, j)`` (the sum of the products of attributes ``i`` and
``j``), as in Aggarwal and Yu 2004. All three are plain sums, so the accumulator is
*mergeable* (:meth:`GroupStats.merge` adds them elementwise) and an engine computes them
with one SUM per column of :func:`row_terms` (layout :func:`flat_names`).

**Mean and covariance.** ``Mean(i) = Sum(i) / r`` and the *population* covariance
``Covariance(i, j) = Sum(i, j) / r - Sum(i) Sum(j) / r^2`` (eq 20.7, equal to eq 20.6's
``Sum(i, j) / r - Mean(i) Mean(j)``), symmetrised as ``(C + C^T) / 2``. Float error can make
a (near) singular covariance slightly indefinite; its tiny negative eigenvalues are clipped
where the eigenvalues are used (:func:`~.synthesize.eigen_axes`), not here.

**Cancellation and the origin ``shift``.** Eq 20.7 subtracts two numbers of size
``mean^2`` to get one of size ``std^2``: the relative error of a variance is about
``eps * (|mean| / std)^2`` (``eps = 2.2e-16``). With ``|mean| / std = 1`` (e.g. fnlwgt,
mean and std both ~1e5) that is harmless; with a column near ``1e9`` and std 1 the ratio
squared is ``1e18`` and the covariance is noise. So every statistic here can be taken
about a per-column origin ``shift`` (for example the global mean of each column): the
sums are of ``x - shift``, :meth:`GroupStats.mean` adds ``shift`` back, and the covariance,
which does not depend on the origin, cancels only ``eps * (|mean - shift| / std)^2``. The
shift is carried by the :class:`GroupStats` (default zeros); stats merged together must
share it. It is not part of the flat vector (:meth:`GroupStats.to_flat`): it is one constant
per column, known to whoever computed the row terms, and passed again to
:meth:`GroupStats.from_flat`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _as_matrix(values: np.ndarray, d: int | None = None) -> np.ndarray:
    """Records as a 2-D float64 array.

    Args:
        values: An ``(n, d)`` array-like of finite numbers.
        d: The expected number of columns, or ``None`` for any.

    Returns:
        A float64 ``(n, d)`` array.

    Raises:
        ValueError: If it is not 2-D, has the wrong width or holds a non-finite value.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"values must be a 2-D (records x attributes) array, got shape {x.shape}")
    if d is not None and x.shape[1] != d:
        raise ValueError(f"values must have {d} columns, got {x.shape[1]}")
    if not np.all(np.isfinite(x)):
        raise ValueError("values must be finite (a NaN or an infinity was found)")
    return x


def _as_shift(shift: np.ndarray | None, d: int) -> np.ndarray:
    """A per-column origin as a float64 vector (zeros when ``None``).

    Args:
        shift: ``None`` or a length-``d`` array-like of finite numbers.
        d: The number of attributes.

    Returns:
        A new float64 array of shape ``(d,)``.

    Raises:
        ValueError: If it has the wrong shape or a non-finite entry.
    """
    if shift is None:
        return np.zeros(d)
    s = np.array(shift, dtype=np.float64).reshape(-1)
    if s.shape != (d,):
        raise ValueError(f"shift must have {d} entries, got {s.size}")
    if not np.all(np.isfinite(s)):
        raise ValueError("shift must be finite")
    return s


def flat_names(d: int) -> list[str]:
    """Column names of the flat per-group statistics, in their fixed order.

    ``count``, then ``sum_i`` for ``i = 0..d-1``, then ``prod_i_j`` for the upper triangle
    ``i <= j`` in row-major order (``prod_0_0, prod_0_1, ..., prod_0_{d-1}, prod_1_1, ...``):
    ``1 + d + d (d + 1) / 2`` names.

    Args:
        d: The number of attributes (at least 1).

    Returns:
        The names.

    Raises:
        ValueError: If ``d < 1``.
    """
    if d < 1:
        raise ValueError(f"d must be at least 1, got {d}")
    rows, cols = np.triu_indices(d)
    return (
        ["count"]
        + [f"sum_{i}" for i in range(d)]
        + [f"prod_{i}_{j}" for i, j in zip(rows.tolist(), cols.tolist(), strict=True)]
    )


def row_terms(values: np.ndarray, shift: np.ndarray | None = None) -> np.ndarray:
    """Per-row terms whose column sums over a group are its flat statistics.

    Row ``r`` is ``[1, y_0, ..., y_{d-1}, y_i y_j for i <= j]`` with ``y = x_r - shift``
    (layout :func:`flat_names`), so a plain SUM per group of each column gives
    :meth:`GroupStats.to_flat` of the group.

    Args:
        values: ``(n, d)`` records.
        shift: The per-column origin (default zeros; see the module docstring).

    Returns:
        A float64 ``(n, 1 + d + d (d + 1) / 2)`` array.

    Raises:
        ValueError: On a non 2-D or non-finite input or a shift of the wrong length.
    """
    x = _as_matrix(values)
    n, d = x.shape
    y = x - _as_shift(shift, d)
    rows, cols = np.triu_indices(d)
    return np.concatenate([np.ones((n, 1)), y, y[:, rows] * y[:, cols]], axis=1)


@dataclass(frozen=True, eq=False)
class GroupStats:
    """The condensed statistics of one group of records.

    Attributes:
        count: ``r``, the number of records.
        sums: ``Sum(i)`` of ``x - shift``, shape ``(d,)``.
        products: ``Sum(i, j)`` of ``(x - shift)_i (x - shift)_j``, shape ``(d, d)``,
            symmetric.
        shift: The per-column origin the sums are taken about (default zeros).
    """

    count: int
    sums: np.ndarray
    products: np.ndarray
    shift: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        """Normalise the arrays (float64 copies) and check the shapes.

        Raises:
            ValueError: On a negative count or inconsistent shapes.
        """
        count = int(self.count)
        if count < 0:
            raise ValueError(f"count must be non-negative, got {self.count}")
        sums = np.array(self.sums, dtype=np.float64).reshape(-1)
        d = sums.size
        products = np.array(self.products, dtype=np.float64)
        if products.shape != (d, d):
            raise ValueError(f"products must have shape ({d}, {d}), got {products.shape}")
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "sums", sums)
        object.__setattr__(self, "products", products)
        object.__setattr__(self, "shift", _as_shift(self.shift, d))

    @property
    def d(self) -> int:
        """The number of attributes."""
        return int(self.sums.size)

    @classmethod
    def empty(cls, d: int, shift: np.ndarray | None = None) -> GroupStats:
        """The statistics of no records.

        Args:
            d: The number of attributes.
            shift: The per-column origin (default zeros).

        Returns:
            Count 0 and zero sums.
        """
        return cls(0, np.zeros(d), np.zeros((d, d)), _as_shift(shift, d))

    @classmethod
    def of(cls, values: np.ndarray, shift: np.ndarray | None = None) -> GroupStats:
        """The statistics of a set of records.

        Args:
            values: ``(n, d)`` records (finite).
            shift: The per-column origin (default zeros).

        Returns:
            Their count, ``Sum(i)`` and ``Sum(i, j)`` about ``shift``.
        """
        x = _as_matrix(values)
        s = _as_shift(shift, x.shape[1])
        y = x - s
        products = y.T @ y
        return cls(x.shape[0], y.sum(axis=0), (products + products.T) / 2.0, s)

    def _check_compatible(self, other: GroupStats) -> None:
        """Refuse to combine stats of different widths or origins.

        Args:
            other: The other statistics.

        Raises:
            ValueError: If ``d`` or ``shift`` differ.
        """
        if other.d != self.d:
            raise ValueError(f"cannot merge stats of {self.d} and {other.d} attributes")
        if not np.array_equal(other.shift, self.shift):
            raise ValueError("cannot merge stats taken about different shifts")

    def merge(self, other: GroupStats) -> GroupStats:
        """The statistics of the union of two disjoint groups (elementwise sums).

        Args:
            other: Statistics of the same width and shift.

        Returns:
            The merged statistics.

        Raises:
            ValueError: If the widths or shifts differ.
        """
        self._check_compatible(other)
        return GroupStats(
            self.count + other.count,
            self.sums + other.sums,
            self.products + other.products,
            self.shift,
        )

    def add(self, values: np.ndarray) -> GroupStats:
        """The statistics with more records added.

        Args:
            values: ``(n, d)`` records.

        Returns:
            ``self.merge(GroupStats.of(values, self.shift))``.
        """
        return self.merge(GroupStats.of(_as_matrix(values, self.d), self.shift))

    def _require_records(self) -> None:
        """Refuse moments of an empty group.

        Raises:
            ValueError: If the count is 0.
        """
        if self.count == 0:
            raise ValueError("an empty group has no mean or covariance")

    def mean(self) -> np.ndarray:
        """``Mean(i) = shift_i + Sum(i) / r``.

        Returns:
            The ``(d,)`` mean.

        Raises:
            ValueError: If the group is empty.
        """
        self._require_records()
        return self.shift + self.sums / self.count

    def covariance(self) -> np.ndarray:
        """The population covariance ``Sum(i, j) / r - Sum(i) Sum(j) / r^2`` (eq 20.7).

        Computed about the shift (the covariance does not depend on the origin) and
        symmetrised; it may carry tiny negative eigenvalues from float error.

        Returns:
            The ``(d, d)`` covariance.

        Raises:
            ValueError: If the group is empty.
        """
        self._require_records()
        r = float(self.count)
        m = self.sums / r
        cov = self.products / r - np.outer(m, m)
        return (cov + cov.T) / 2.0

    @classmethod
    def from_moments(
        cls,
        count: int,
        mean: np.ndarray,
        covariance: np.ndarray,
        shift: np.ndarray | None = None,
    ) -> GroupStats:
        """The statistics of ``count`` records with a given mean and population covariance.

        The inverse of :meth:`mean` / :meth:`covariance` (eq 20.6 solved for the sums):
        with ``m = mean - shift``, ``Sum(i) = n m_i`` and ``Sum(i, j) = n (C_ij + m_i m_j)``.

        Args:
            count: ``n`` (non-negative).
            mean: The ``(d,)`` mean.
            covariance: The ``(d, d)`` population covariance (symmetrised here).
            shift: The per-column origin of the result (default zeros).

        Returns:
            The statistics.

        Raises:
            ValueError: On inconsistent shapes or a negative count.
        """
        mu = np.array(mean, dtype=np.float64).reshape(-1)
        d = mu.size
        cov = np.array(covariance, dtype=np.float64)
        if cov.shape != (d, d):
            raise ValueError(f"covariance must have shape ({d}, {d}), got {cov.shape}")
        s = _as_shift(shift, d)
        m = mu - s
        n = float(count)
        products = n * ((cov + cov.T) / 2.0 + np.outer(m, m))
        return cls(count, n * m, products, s)

    def to_flat(self) -> np.ndarray:
        """The flat vector in :func:`flat_names` order (count, sums, upper triangle).

        Returns:
            A float64 vector of ``1 + d + d (d + 1) / 2`` entries (the shift is not in it).
        """
        rows, cols = np.triu_indices(self.d)
        return np.concatenate([[float(self.count)], self.sums, self.products[rows, cols]])

    @classmethod
    def from_flat(cls, vector: np.ndarray, d: int, shift: np.ndarray | None = None) -> GroupStats:
        """The statistics from a flat vector (e.g. the SUMs of :func:`row_terms`).

        Args:
            vector: ``1 + d + d (d + 1) / 2`` numbers in :func:`flat_names` order.
            d: The number of attributes.
            shift: The origin the row terms were taken about (default zeros).

        Returns:
            The statistics (products filled symmetrically from the upper triangle).

        Raises:
            ValueError: On a vector of the wrong length or a non-integral count.
        """
        v = np.asarray(vector, dtype=np.float64).reshape(-1)
        width = 1 + d + d * (d + 1) // 2
        if v.size != width:
            raise ValueError(f"a flat vector for d={d} has {width} entries, got {v.size}")
        count = float(v[0])
        if not count.is_integer() or count < 0:
            raise ValueError(f"the count must be a non-negative integer, got {v[0]!r}")
        rows, cols = np.triu_indices(d)
        products = np.zeros((d, d))
        products[rows, cols] = v[1 + d :]
        products[cols, rows] = v[1 + d :]
        return cls(int(count), v[1 : 1 + d], products, shift)
