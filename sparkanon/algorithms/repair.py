"""The repair step: classes that fail a model the algorithm does not guarantee are merged.

An algorithm forms classes for its (H, p, k) target (:func:`native_target`); a job may
ask for more (entropy or recursive l-diversity, t-closeness, or a model the algorithm
does not know, as k-anonymity's MDAV under p-sensitivity). Every such model here is
monotonic: the union of two satisfying classes satisfies it, and a block satisfies it
as a whole (the partitioning only keeps feasible blocks). So merging each failing class
into its nearest class, until none fails, ends with every class satisfying the models;
at worst the block becomes one class.

Rules, deterministic:

* the failing class of the lowest label goes first;
* it merges into the class whose centroid is nearest to its centroid (Shi et al. 2024, eq. 18,
  the tuple distance every algorithm here uses; ties to the lowest label);
* the merged class keeps the receiving class's label and is checked again.

If a single class is left and it still fails (possible only when the algorithm left
rows out of every class), its rows are left unplaced (``-1``) for reconciliation.

Rows added to a class by reconciliation keep a *count* model (k-anonymity, p-sensitive,
(H,p,k), distinct l-diversity) satisfied, but may break entropy or recursive
l-diversity or t-closeness; :func:`reject_breaking_rows` then leaves the rows that
would break their class unplaced (suppressed and counted).
"""

from __future__ import annotations

import numpy as np

from sparkanon.algorithms._block import Block
from sparkanon.algorithms._classes import ClassStats
from sparkanon.models import ClassSummaries, ModelSet


def label_summaries(block: Block, compact: np.ndarray, m: int) -> ClassSummaries:
    """The models' view of classes ``0..m-1`` of a labelled block, by counting alone.

    Args:
        block: the block's rows.
        compact: each row's class in ``0..m-1`` (``-1``: in none).
        m: the number of classes.

    Returns:
        Each class's size and sensitive value counts (what :meth:`ClassStats.summaries`
        gives, without building the classes' members, histograms and losses).
    """
    placed = compact >= 0
    cls = compact[placed]
    size = np.bincount(cls, minlength=m)
    n_values = len(block.ctx.schema.sensitive.values)
    keys = cls * n_values + block.sens[placed].astype(np.int64)
    counts = np.bincount(keys, minlength=m * n_values)[: m * n_values].reshape(m, n_values)
    return ClassSummaries(size, counts, block.ctx.schema.sensitive.declared_level_of)


def repair_classes(block: Block, labels: np.ndarray, models: ModelSet) -> tuple[np.ndarray, int]:
    """Merge failing classes into their nearest classes until every class satisfies ``models``.

    Args:
        block: the block's rows.
        labels: class of each row (``-1``: unplaced).
        models: the models every class must satisfy (monotonic).

    Returns:
        The repaired labels and the number of merges.
    """
    labels = np.asarray(labels, dtype=np.int64).copy()
    placed = labels >= 0
    if not placed.any():
        return labels, 0
    ids = np.unique(labels[placed])
    compact = np.full(block.n, -1, dtype=np.int64)
    compact[placed] = np.searchsorted(ids, labels[placed])
    ok = models.satisfied(label_summaries(block, compact, len(ids)))
    if ok.all():  # the usual case: no class statistics beyond the counts
        return labels, 0
    stats = ClassStats.from_labels(block, compact, len(ids))
    centroids = [_centroid(stats, c) for c in range(len(ids))]
    merges = 0
    while True:
        failing = np.flatnonzero(stats.alive[: stats.m] & ~ok)
        if failing.size == 0:
            break
        c = int(failing[0])
        others = stats.ids()
        others = others[others != c]
        if others.size == 0:
            labels[compact == c] = -1
            break
        t = int(others[np.argmin(_centroid_distances(block, centroids, c, others))])
        stats.merge(t, c)
        compact[compact == c] = t
        labels[compact == t] = ids[t]
        centroids[t] = _centroid(stats, t)
        ok[t] = bool(models.satisfied(stats.summaries(np.array([t])))[0])
        merges += 1
    return labels, merges


def _centroid(stats: ClassStats, c: int) -> list[float]:
    """Each attribute's centroid code of class ``c`` (``kind.centroid`` of its members)."""
    return [kind.centroid(stats.members[a][c]) for a, kind in enumerate(stats.kinds)]


def _centroid_distances(
    block: Block, centroids: list[list[float]], c: int, others: np.ndarray
) -> np.ndarray:
    """Weighted tuple distance (eq. 18) from class ``c``'s centroid to each other centroid."""
    total = np.zeros(len(others))
    for a, kind in enumerate(block.kinds):
        codes = np.array([centroids[o][a] for o in others])
        total += kind.weight * kind.distance_to(codes, centroids[c][a])
    return total


def reject_breaking_rows(
    block: Block, labels: np.ndarray, extra: Block, placed: np.ndarray, models: ModelSet
) -> np.ndarray:
    """Unplace the rows reconciliation put into a class they make fail.

    Args:
        block: the receiving block's rows.
        labels: their classes.
        extra: the rows placed from other blocks.
        placed: the class each extra row joined.
        models: the models every class must satisfy.

    Returns:
        ``placed`` with ``-1`` for the rows of every class that now fails.
    """
    placed = np.asarray(placed, dtype=np.int64).copy()
    if models.additive or not (placed >= 0).any():
        return placed
    sensitive = block.ctx.schema.sensitive
    ids = np.unique(np.concatenate([labels[labels >= 0], placed[placed >= 0]]))
    both = np.concatenate([labels, placed])
    sens = np.concatenate([block.sens, extra.sens])
    keep = both >= 0
    summaries = ClassSummaries.from_codes(
        np.searchsorted(ids, both[keep]),
        sens[keep],
        len(ids),
        len(sensitive.values),
        sensitive.declared_level_of,
    )
    bad = ids[~models.satisfied(summaries)]
    placed[np.isin(placed, bad)] = -1
    return placed


def residual_absorption(
    class_counts: np.ndarray,
    residual: np.ndarray,
    models: ModelSet,
    level_of: np.ndarray | None = None,
) -> np.ndarray:
    """The classes a residual class must absorb to satisfy ``models``: no row is suppressed.

    Under a model that compares each class with the whole published table
    (t-closeness), suppressing the rows no class could take changes the table's
    distribution, and classes that were within ``t`` of the input's distribution may
    not be within ``t`` of the published one. So such rows are not suppressed: they
    form one *residual* class, which takes whole classes until it satisfies every
    model. Nothing is suppressed, so the published distribution is the input's, the
    one every class was built against; classes that are absorbed keep satisfying the
    models they satisfied (they leave the table, not their rows' distribution).

    Greedy and deterministic, one class per step: a class whose union with the
    residual satisfies every model when there is one (the smallest such class; ties
    to the lowest index), else the class that brings the residual's sensitive
    distribution nearest (variational distance) to the whole table's (ties to the
    lowest index). It ends: the whole table satisfies every monotonic model (the
    profile's feasibility check), so at worst the residual takes every class.
    Each step costs ``O(m V)`` for ``m`` classes and ``V`` sensitive values.

    Args:
        class_counts: ``(m, V)`` rows of each sensitive value code in each class.
        residual: ``(V,)`` rows of each value among the rows no class took.
        models: the models bound to the whole table (placed rows and residual).
        level_of: ``(V,)`` sensitivity level of each value code, or ``None``.

    Returns:
        Indices into ``class_counts`` of the absorbed classes, in the order taken.

    Raises:
        ValueError: the residual still fails after absorbing every class (the whole
            table fails the models: the profile's feasibility check rules it out).
    """
    counts = np.asarray(class_counts, dtype=np.int64)
    r = np.asarray(residual, dtype=np.int64).copy()
    total = counts.sum(axis=0) + r
    q = total / max(int(total.sum()), 1)
    alive = np.ones(counts.shape[0], dtype=bool)
    taken: list[int] = []

    def ok(rows: np.ndarray) -> np.ndarray:
        return models.satisfied(ClassSummaries(rows.sum(axis=1), rows, level_of))

    while not bool(ok(r[None, :])[0]):
        idx = np.flatnonzero(alive)
        if idx.size == 0:
            raise ValueError("the residual class fails the models after absorbing every class")
        merged = counts[idx] + r
        sizes = merged.sum(axis=1)
        good = ok(merged)
        if good.any():
            j = int(np.flatnonzero(good)[np.argmin(sizes[good])])
        else:
            shares = merged / np.maximum(sizes, 1)[:, None]
            j = int(np.argmin(0.5 * np.abs(shares - q).sum(axis=1)))
        taken.append(int(idx[j]))
        alive[idx[j]] = False
        r = merged[j]
    return np.asarray(taken, dtype=np.int64)
