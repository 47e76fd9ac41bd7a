"""Normalised certainty penalty (NCP) and global certainty penalty (GCP).

NCP (Xu, Wang, Pei, Wang, Shi, Fu 2006, "Utility-based anonymization using
local recoding", KDD): the NCP of an equivalence class ``G`` on one
quasi-identifier is the share of that attribute's domain its generalized value
covers (each kind's :meth:`~sparkanon.attributes.kinds.Kind.ncp`); the NCP of
``G`` is the weighted sum over the quasi-identifiers,
``NCP(G) = sum_i w_i NCP_i(G)``, in ``[0, sum_i w_i]``.

GCP (Ghinita, Karras, Kalnis, Mamoulis 2007, "Fast data anonymization with low
information loss", VLDB): the size-weighted NCP of the whole table, normalised
by the number of rows and the total weight,
``GCP = sum_G |G| NCP(G) / (N sum_i w_i)``; we report it as a percentage.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sparkanon.attributes.kinds import Kind


def class_ncp(kinds: Sequence[Kind], codes: Sequence[np.ndarray]) -> float:
    """NCP of one class: ``sum_i w_i NCP_i(G)`` (Xu et al. 2006).

    Args:
        kinds: the quasi-identifier kinds, in schema order.
        codes: the class's codes of each quasi-identifier, in the same order.

    Returns:
        The weighted certainty penalty, in ``[0, sum of weights]``.
    """
    return float(
        sum(kind.weight * kind.ncp(np.asarray(c)) for kind, c in zip(kinds, codes, strict=True))
    )


def global_certainty_penalty(total_penalty: float, rows: int, weight_sum: float) -> float:
    """GCP of a table in percent: ``100 sum_G |G| NCP(G) / (N sum_i w_i)`` (Ghinita et al. 2007).

    Args:
        total_penalty: ``sum_G |G| NCP(G)``, the table's total penalty (Xu et al. 2006).
        rows: ``N``, the rows of the classes (the published rows).
        weight_sum: the sum of the quasi-identifier weights.

    Returns:
        0 when every class publishes exact values, 100 when every value is
        generalized to its whole domain; 0 for an empty table.
    """
    if rows <= 0 or weight_sum <= 0:
        return 0.0
    return 100.0 * total_penalty / (rows * weight_sum)


def fully_lost_mean(
    published: float, published_count: float, lost_count: float, full: float
) -> float:
    """A mean loss that counts each suppressed unit as fully lost.

    Published-only losses improve as a model tightens when the units the model
    suppresses are the most generalized ones (item NCP can fall as k and m grow).
    Counting a suppressed unit at the largest loss ``full`` restores the order:
    ``(published * published_count + full * lost_count) / (published_count + lost_count)``.

    Args:
        published: the mean loss over the published units (rows, classes or items).
        published_count: how many units the published mean is over.
        lost_count: how many units were suppressed.
        full: the loss of a unit published as nothing (e.g. 1, 100 percent, or
            the sum of the attribute weights for a weighted NCP).

    Returns:
        The mean over every unit; ``full`` when nothing is published, 0 when there is
        no unit at all.
    """
    total = published_count + lost_count
    if total <= 0:
        return 0.0
    return float((published * published_count + full * lost_count) / total)
