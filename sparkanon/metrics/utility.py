"""Utility metrics of a partition into equivalence classes (LeFevre et al. 2006).

* Discernibility metric (Bayardo and Agrawal 2005): every published row is charged the
  size of its equivalence class, every suppressed row the size of the whole input:
  ``DM = sum_E |E|^2 + |D| * suppressed``.
* Normalised average class size ``C_AVG = (rows / classes) / k`` is
  :func:`sparkanon.metrics.entropy.normalized_average_class_size` (seed 003 eq. 20
  takes it from LeFevre et al.).
"""

from __future__ import annotations


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
