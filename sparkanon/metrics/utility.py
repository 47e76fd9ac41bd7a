"""Whole-release utility losses: each defined once, reported by the families, minimised by searches.

* Discernibility metric (Bayardo and Agrawal 2005): every published row is charged the
  size of its equivalence class, every suppressed row the size of the whole input:
  ``DM = sum_E |E|^2 + |D| * suppressed``.
* Precision loss ``1 - Prec``, Sweeney's precision of a full-domain generalization
  (Sweeney 2002): ``Prec = 1 - mean_i(level_i / height_i)``.
* NCP with suppression: the weighted mean normalised certainty penalty (Xu et al. 2006)
  over rows and attributes, a suppressed row counting 1 on every attribute.
* Height: the sum of the generalization levels (Samarati's lattice height).
* Normalised average class size ``C_AVG = (rows / classes) / k`` is
  :func:`sparkanon.metrics.entropy.normalized_average_class_size` (Yang, Wang and Zhang
  2014, eq. 20, take it from LeFevre et al. 2006).

:data:`OBJECTIVES` maps the names a search accepts (``algorithm.metric`` of the
full-domain searches) to these losses over a :class:`ReleaseCounts`, the statistics of
one candidate release the driver holds (counts and sums, never rows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def discernibility(sum_of_squares: float, rows_in: int, rows_out: int) -> float:
    """DM of a publication from the sum of its squared class sizes.

    Args:
        sum_of_squares: ``sum_E |E|^2`` over the published equivalence classes.
        rows_in: rows of the input (``|D|``).
        rows_out: rows published; the others are suppressed.

    Returns:
        ``sum_E |E|^2 + |D| (|D| - rows_out)``.
    """
    return float(sum_of_squares) + float(rows_in) * float(rows_in - rows_out)


@dataclass(frozen=True)
class ReleaseCounts:
    """The statistics of one candidate release that its losses are computed from.

    Attributes:
        rows: the rows the release is judged over (``|D|``).
        suppressed: rows of ``D`` the release suppresses.
        sum_of_squares: ``sum_E |E|^2`` over the published classes.
        ncp_published: the sum over the published rows of their weighted NCP.
        weights: each quasi-identifier's weight.
        levels: the generalization level of each quasi-identifier (full-domain releases).
        heights: the height of each quasi-identifier's hierarchy, in the order of ``levels``.
    """

    rows: int
    suppressed: int
    sum_of_squares: float
    ncp_published: float
    weights: tuple[float, ...]
    levels: tuple[int, ...] = ()
    heights: tuple[int, ...] = ()


def height_loss(c: ReleaseCounts) -> float:
    """The sum of the levels of the quasi-identifiers the release keeps (a dropped one is -1)."""
    return float(sum(level for level in c.levels if level >= 0))


def precision_loss(c: ReleaseCounts) -> float:
    """``1 - Prec``: the mean of ``level / height`` (an attribute of height 0 adds 0)."""
    shares = [lv / h if h else 0.0 for lv, h in zip(c.levels, c.heights, strict=True)]
    return float(np.mean(shares))


def discernibility_loss(c: ReleaseCounts) -> float:
    """DM of the release (:func:`discernibility`), a suppressed row costing ``|D|``."""
    return discernibility(c.sum_of_squares, c.rows, c.rows - c.suppressed)


def ncp_loss(c: ReleaseCounts) -> float:
    """The weighted mean NCP over rows and attributes, a suppressed row costing 1 each."""
    total_w = float(sum(c.weights))
    return float((c.ncp_published + c.suppressed * total_w) / max(c.rows * total_w, 1e-300))


def published_ncp(c: ReleaseCounts) -> float:
    """The weighted mean NCP over the published rows only (0 when none is published)."""
    kept = c.rows - c.suppressed
    total_w = float(sum(c.weights))
    return float(c.ncp_published / (kept * total_w)) if kept and total_w else 0.0


OBJECTIVES: dict[str, Callable[[ReleaseCounts], float]] = {
    "height": height_loss,
    "precision": precision_loss,
    "discernibility": discernibility_loss,
    "ncp": ncp_loss,
}
"""The losses a search can minimise, by the name ``algorithm.metric`` gives."""
