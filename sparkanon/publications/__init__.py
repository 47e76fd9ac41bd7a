"""Publications: how an algorithm's classes become published tables, and how to check them.

A :class:`~sparkanon.publications.base.Publisher` says what each class publishes
(computed where the class's rows are, in the summarise stage) and how a row becomes a
published row; the result is a :class:`~sparkanon.publications.base.Publication`: named
tables and a way to enumerate its equivalence classes with their sensitive values,
which verification checks against the models.

* :class:`~sparkanon.publications.centroids.CentroidPublisher` (``centroids``):
  micro-aggregation, each quasi-identifier replaced by its class centroid.
* :class:`~sparkanon.publications.generalized.GeneralizedPublisher`
  (``generalized``): local recoding, each quasi-identifier replaced by the class's
  range, taxonomy node or code prefix.

Both publish one table, ``data``; a publication of several tables (anatomy: a
quasi-identifier table and a sensitive table joined by a group id) or of synthetic
rows implements the same two classes.

:mod:`~sparkanon.publications.kept` holds the columns every family publishes unchanged
(``input.keep``): read beside the anonymized ones, never in the algorithms' memory, and
joined back to the published rows.
"""

from sparkanon.publications.base import Publication, Publisher
from sparkanon.publications.centroids import CentroidPublisher
from sparkanon.publications.generalized import GeneralizedPublisher

PUBLISHERS: dict[str, type[Publisher]] = {
    "centroids": CentroidPublisher,
    "generalized": GeneralizedPublisher,
}
"""Every publisher by its name (``output.publish``)."""

__all__ = ["PUBLISHERS", "CentroidPublisher", "GeneralizedPublisher", "Publication", "Publisher"]
