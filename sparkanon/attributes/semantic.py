"""Semantic attributes: codes whose prefixes form a code hierarchy tree (Yang et al. 2014, 3.2).

A semantic value (definition 6) is a code of exactly ``length`` decimal digits,
such as a ZIP code or Adult's 6-digit ``fnlwgt``. Every prefix of a code is a
node of the *code hierarchy tree*: the root (the empty prefix) is level 1, the
first digit level 2, ..., and the codes themselves are the leaves at level
``h = length + 1``.

Edge weights (section 3.2, second form of ref. [21]): ``W(j-1, j) = 1/(j-1)^beta``
for ``j >= 3`` and ``W(1, 2) = root_weight`` (0 in the paper's experiments,
``beta = 1``). The distance of a node ``P`` to an ancestor ``C`` is eq. 8,
``sum_{j=level(C)+1..level(P)} W(j-1,j) / sum_{j=2..h} W(j-1,j)``; two leaves
are ``dis(P1, C) + dis(P2, C)`` apart through their lowest common ancestor
``C``; eq. 9 normalises with ``Lmin = 0`` and ``Lmax`` the largest distance
between two leaves of the *full* tree (2 when some weight is positive): fixed
by the tree, not by the data, so distances agree across blocks. Both leaves sit
at level ``h``, so the normalised distance only depends on the length ``c`` of
the common prefix: ``by_prefix[c] = sum_{i=c+1..length} w_i / sum_{i=1..length} w_i``
with ``w_i = W(i, i+1)``, and ``by_prefix[length] = 0``. When every weight is 0
(``length = 1`` and ``root_weight = 0``) all distances are 0.

The centroid is the medoid (definition 7, eq. 10): the class member with the
least summed distance to the class (ties to the lowest code). Summed distances
are computed from per-prefix counts, never from a pairwise matrix: with
``P_s[i]`` the number of class rows sharing the first ``i`` digits of ``s``,
``sum_t d(s, t) = sum_{i=1..length} w_i (n - P_s[i]) / sum_i w_i``, which is
``O(n * length * log n)`` for a whole class.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sparkanon.attributes.kinds import Kind
from sparkanon.attributes.text import trimmed_text

MAX_BIN_DIGITS = 3
"""Blocking bins are the first ``min(length, 3)`` digits of a code."""
TIE_TOLERANCE = 1e-9
"""Relative tolerance under which two summed distances count as a tie (ties to the lowest code)."""


def is_code(text: pd.Series, length: int) -> np.ndarray:
    """Whether each (already trimmed) string is a code of exactly ``length`` ASCII digits.

    Args:
        text: the values as a pandas ``string`` series.
        length: the required number of digits.

    Returns:
        A boolean mask (missing values are not codes).
    """
    matched = text.astype("string").str.fullmatch(f"[0-9]{{{length}}}")
    return matched.fillna(False).to_numpy(dtype=bool)


def level_weights(length: int, beta: float, root_weight: float) -> np.ndarray:
    """Edge weights ``w_i = W(i, i+1)`` of the code hierarchy tree, ``i = 1..length``.

    ``W(1, 2) = root_weight`` (root to first digit) and ``W(j-1, j) = 1/(j-1)^beta``
    for ``j >= 3`` (Yang et al. 2014, section 3.2).

    Args:
        length: digits per code (the tree has ``length + 1`` levels).
        beta: the exponent of the level weights.
        root_weight: the weight between the root and the first digit.

    Returns:
        ``length`` weights, root edge first.
    """
    i = np.arange(1, length + 1, dtype=float)
    weights = 1.0 / i**beta
    weights[0] = root_weight
    return weights


def prefix_distances(length: int, beta: float, root_weight: float) -> np.ndarray:
    """Normalised leaf distance (eq. 8-9) by common prefix length, ``c = 0..length``.

    Args:
        length: digits per code.
        beta: the exponent of the level weights.
        root_weight: the weight between the root and the first digit.

    Returns:
        ``by_prefix`` with ``length + 1`` entries, non-increasing, ``by_prefix[length] = 0``.
    """
    w = level_weights(length, beta, root_weight)
    total = float(w.sum())
    # suffix[c] = sum_{i=c+1..length} w_i: the eq. 8 numerator from a leaf up to
    # its ancestor at level c + 1. A leaf pair is twice that (both leaves at level
    # h); eq. 9 divides by Lmax = 2 (a pair under the root), so the 2s cancel.
    suffix = np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]])
    if total <= 0:
        return np.zeros(length + 1)
    return suffix / total


@dataclass(frozen=True)
class SemanticKind(Kind):
    """Codes of ``length`` digits compared on the code hierarchy tree (Yang et al. 2014, eq. 8-10).

    Codes are the codes' integer values (``int64``; up to 18 digits), so the
    domain (28,000 distinct ``fnlwgt`` values on Adult) never becomes a
    ``V x V`` matrix.

    Attributes:
        length: digits per code.
        beta: exponent of the level weights ``W(j-1, j) = 1/(j-1)^beta``.
        root_weight: ``W(1, 2)``, root to first digit.
    """

    length: int = 1
    beta: float = 1.0
    root_weight: float = 0.0
    by_prefix: np.ndarray = field(init=False, repr=False, compare=False)
    _powers: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:  # noqa: D105
        if not 1 <= self.length <= 18:
            raise ValueError(f"semantic code length {self.length} outside 1..18 (int64 codes)")
        object.__setattr__(
            self, "by_prefix", prefix_distances(self.length, self.beta, self.root_weight)
        )
        # _powers[i] = 10**(length - i): code // _powers[i] is the first i digits.
        powers = 10 ** np.arange(self.length, -1, -1, dtype=np.int64)
        object.__setattr__(self, "_powers", powers)

    @property
    def discrete(self) -> bool:  # noqa: D102
        return False

    @property
    def code_type(self) -> str:
        """Codes are exact integers (``long``), not normalised doubles."""
        return "long"

    @property
    def _bin_digits(self) -> int:
        return min(self.length, MAX_BIN_DIGITS)

    @property
    def n_bins(self) -> int:  # noqa: D102
        return 10**self._bin_digits

    @property
    def bin_divisor(self) -> int:
        """:meth:`bins` is ``code // bin_divisor`` (engines compute it natively)."""
        return int(self._powers[self._bin_digits])

    @property
    def _weights(self) -> np.ndarray:
        """``w_i`` normalised by their sum (all 0 when every weight is 0)."""
        w = level_weights(self.length, self.beta, self.root_weight)
        total = float(w.sum())
        return w / total if total > 0 else np.zeros_like(w)

    def encode(self, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Integer value of each code; values that are not ``length`` digits are invalid."""
        text = trimmed_text(values)
        ok = is_code(text, self.length)
        codes = np.zeros(len(text), dtype=np.int64)
        if ok.any():
            codes[ok] = text[ok].astype("int64").to_numpy(dtype=np.int64)
        return codes, ~ok

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """The zero-padded code strings."""
        ints = np.asarray(codes).astype(np.int64)
        return np.asarray([str(int(c)).zfill(self.length) for c in ints], dtype=object)

    def common_prefix(self, a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
        """Length of the common prefix of codes ``a`` and ``b`` (broadcast), ``0..length``."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        shape = np.broadcast_shapes(a.shape, b.shape)
        c = np.zeros(shape, dtype=np.int64)
        # Sharing the first i digits implies sharing the first i - 1: count the i that match.
        for p in self._powers[1:]:
            c += (a // p) == (b // p)
        return c

    def distance(self, a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
        """Normalised distance (eq. 9) between codes ``a`` and ``b`` (broadcast)."""
        return self.by_prefix[self.common_prefix(a, b)]

    def distance_to(self, codes: np.ndarray, centre: float) -> np.ndarray:  # noqa: D102
        return self.distance(np.asarray(codes, dtype=np.int64), int(centre))

    def bins(self, codes: np.ndarray) -> np.ndarray:
        """The first ``min(length, 3)`` digits of each code, as an integer."""
        return np.asarray(codes, dtype=np.int64) // self._powers[self._bin_digits]

    def bin_distances(self, bins: np.ndarray) -> np.ndarray:
        """Distances between bins: those of their first codes (vectorised :meth:`bin_span`)."""
        b = np.asarray(bins, dtype=np.int64)
        first = b * self._powers[self._bin_digits]
        d = self.distance(first[:, None], first[None, :])
        return np.where(b[:, None] == b[None, :], self.by_prefix[self._bin_digits], d)

    def bin_span(self, lo: int, hi: int) -> float:
        """Normalised distance implied by the common prefix of bins ``lo`` and ``hi``."""
        digits = self._bin_digits
        c = 0
        for i in range(1, digits + 1):
            p = 10 ** (digits - i)
            if lo // p != hi // p:
                break
            c = i
        return float(self.by_prefix[c])

    def summed_distances(self, members: np.ndarray, queries: np.ndarray) -> np.ndarray:
        """Summed normalised distance of each query code to all ``members`` (eq. 10's ``D_i``).

        Uses per-prefix counts: ``sum_t d(q, t) = sum_i w_i (n - P_q[i])`` with
        ``P_q[i]`` the members sharing the first ``i`` digits of ``q`` and the
        ``w_i`` normalised to sum 1. Cost ``O((n + m) * length * log n)``.

        Args:
            members: codes of the class (a multiset).
            queries: codes to score (members or not).

        Returns:
            One sum per query.
        """
        members = np.asarray(members, dtype=np.int64)
        queries = np.asarray(queries, dtype=np.int64)
        n = len(members)
        total = np.zeros(len(queries))
        if n == 0 or len(queries) == 0:
            return total
        ordered = np.sort(members)
        for w, p in zip(self._weights, self._powers[1:], strict=True):
            keys = ordered // p
            q = queries // p
            sharing = np.searchsorted(keys, q, side="right") - np.searchsorted(keys, q, side="left")
            total += w * (n - sharing)
        return total

    def _medoid(self, codes: np.ndarray) -> tuple[int, float]:
        """The medoid (eq. 10) and its summed distance; ties to the lowest code."""
        values = np.unique(np.asarray(codes, dtype=np.int64))
        cost = self.summed_distances(codes, values)
        best = float(cost.min())
        # Equal sums reached through different prefix counts may differ in the
        # last bits; a relative tolerance makes them a tie, won by the lowest code.
        i = int(np.flatnonzero(cost <= best + TIE_TOLERANCE * max(best, 1.0))[0])
        return int(values[i]), float(cost[i])

    def centroid(self, codes: np.ndarray) -> float:
        """Medoid of the class (definition 7, eq. 10); ties to the lowest code.

        Returned as a Python ``int`` (exact for every code length).
        """
        if len(codes) == 0:
            return 0
        return self._medoid(codes)[0]

    def loss(self, codes: np.ndarray) -> float:
        """Sum of the distances of the class's codes to its medoid (eq. 12)."""
        if len(codes) == 0:
            return 0.0
        return self._medoid(codes)[1]

    def losses_with_each(self, members: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """Information loss of ``members + {c}`` for every candidate code ``c`` (eq. 12-13).

        The loss is the least summed distance over the grown class's values.
        For the candidate itself that is :meth:`summed_distances`; for a member
        value ``s`` it is ``M_s + d(s, c)`` with ``M_s`` its summed distance to
        the members. Since ``d(s, c) = by_prefix[common prefix]`` and
        ``by_prefix`` is non-increasing, ``min_s (M_s + d(s, c))`` equals
        ``min_i (min {M_s : s shares the first i digits of c} + by_prefix[i])``
        over ``i = 0..length``, so each candidate costs ``O(length * log n)``
        instead of ``O(n)``.

        Args:
            members: codes of the current class.
            candidates: codes of the candidate rows.

        Returns:
            One loss per candidate.
        """
        members = np.asarray(members, dtype=np.int64)
        candidates = np.asarray(candidates, dtype=np.int64)
        if len(members) == 0:
            return np.zeros(len(candidates))
        best = self.summed_distances(members, candidates)
        values = np.unique(members)
        inside = self.summed_distances(members, values)
        for i, p in enumerate(self._powers):
            # Values are sorted, so each prefix group is a contiguous run.
            keys = values // p
            starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
            group_keys = keys[starts]
            group_min = np.minimum.reduceat(inside, starts)
            q = candidates // p
            at = np.clip(np.searchsorted(group_keys, q), 0, len(group_keys) - 1)
            found = group_keys[at] == q
            term = np.where(found, group_min[at] + self.by_prefix[i], np.inf)
            best = np.minimum(best, term)
        return best

    def losses_of(
        self, groups: list[np.ndarray], extra: float | np.ndarray | None = None
    ) -> np.ndarray:
        """Loss (eq. 12, medoid centroid) of many classes at once, each with ``extra`` added.

        All classes are sorted together by ``(class, code)``; for each prefix
        length the rows sharing a class and a prefix form contiguous runs whose
        lengths are the ``P_s[i]`` of :meth:`summed_distances`. Cost
        ``O(N * length)`` after one sort of the ``N`` codes, instead of one
        :meth:`loss` call per class.

        Args:
            groups: the codes of each class.
            extra: one code, or an array of codes, added to every class
                (``None``: none).

        Returns:
            One loss per class (0 for an empty class).
        """
        m = len(groups)
        out = np.zeros(m)
        added = (
            np.zeros(0, dtype=np.int64)
            if extra is None
            else np.atleast_1d(np.asarray(extra)).astype(np.int64)
        )
        sizes = np.array([len(g) for g in groups], dtype=np.int64) + len(added)
        if m == 0 or not sizes.any():
            return out
        parts = [np.asarray(g, dtype=np.int64) for g in groups]
        label = np.repeat(np.arange(m), [len(g) for g in parts])
        codes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        if len(added):
            codes = np.concatenate([codes, np.tile(added, m)])
            label = np.concatenate([label, np.repeat(np.arange(m), len(added))])
        order = np.lexsort((codes, label))
        codes, label = codes[order], label[order]
        n = sizes[label]
        cost = np.zeros(len(codes))
        new_class = np.concatenate([[True], label[1:] != label[:-1]])
        for w, p in zip(self._weights, self._powers[1:], strict=True):
            keys = codes // p
            starts = np.flatnonzero(new_class | np.concatenate([[True], keys[1:] != keys[:-1]]))
            run = np.diff(np.append(starts, len(codes)))
            cost += w * (n - np.repeat(run, run))
        present = np.flatnonzero(sizes > 0)
        out[present] = np.minimum.reduceat(cost, np.flatnonzero(new_class))
        return out

    def generalized(self, codes: np.ndarray) -> str:
        """The class's common prefix followed by ``*`` for the other digits (e.g. ``1150**``).

        A class with one distinct code publishes that code.
        """
        values = np.asarray(codes, dtype=np.int64)
        if len(values) == 0:
            return "*" * self.length
        lo, hi = int(values.min()), int(values.max())
        c = int(self.common_prefix(lo, hi))
        return str(lo).zfill(self.length)[:c] + "*" * (self.length - c)

    def ncp(self, codes: np.ndarray) -> float:
        """Normalised certainty penalty: share of all leaves under the class's common ancestor.

        With ``c`` the length of the class's common prefix that is
        ``10**(length - c) / 10**length = 10**-c``; 0 for a class with one
        distinct code.
        """
        values = np.asarray(codes, dtype=np.int64)
        if len(values) == 0:
            return 0.0
        lo, hi = int(values.min()), int(values.max())
        if lo == hi:
            return 0.0
        c = int(self.common_prefix(lo, hi))
        return float(10.0 ** (-c))
