"""Stage ``publish``: the publication, in a keyed order, written to a temporary location.

A family's publisher (:mod:`sparkanon.publications`) gives every placed row what its
class publishes; :func:`staged` puts every table's rows in a keyed pseudorandom order
(:meth:`~sparkanon.engine.base.Engine.keyed_order`), writes the tables under
``<output>.__sparkanon_tmp_<id>`` (or keeps them in memory when nothing is committed) and
reads them back, so verification checks exactly the bytes that will be moved into place.

Every family stages its tables here, so no release's row order follows the input's: the
order is a function of the published rows' values and of the run key's
:data:`~sparkanon.randomness.streams.RELEASE_ORDER` stream only. Ordering by the values
rather than by the job's row numbers keeps two releases of the same input under the same
user key (``--key-file``) from sharing an order an attacker could join them by.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from sparkanon.engine.base import Engine, Table
from sparkanon.publications import Publication
from sparkanon.randomness import RunKey
from sparkanon.randomness.streams import RELEASE_ORDER


def release_order(engine: Engine, table: Table, key: RunKey) -> Table:
    """The rows of ``table`` in the order a release writes them (keyed by ``key``)."""
    return engine.keyed_order(table, partial(key.words, RELEASE_ORDER))


def staged(
    engine: Engine, publication: Publication, tmp_path: str | None, fmt: str, key: RunKey
) -> Publication:
    """The publication's tables in keyed order, written to ``tmp_path/<name>`` and read back.

    Args:
        engine: the engine.
        publication: the tables to publish.
        tmp_path: the staging location (``None``: the tables are kept in memory).
        fmt: ``parquet`` or ``csv``.
        key: the run key the rows' order is drawn with.
    """
    tables = {}
    for name, table in publication.tables.items():
        ordered = release_order(engine, table, key)
        if tmp_path is None:
            tables[name] = engine.persist(ordered)
        else:
            engine.write_table(ordered, f"{tmp_path}/{name}", fmt)
            tables[name] = engine.read_table(f"{tmp_path}/{name}", fmt)
    return replace(publication, tables=tables)
