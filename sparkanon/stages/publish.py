"""Stage ``publish``: the publication, written to a temporary location and read back.

A family's publisher (:mod:`sparkanon.publications`) gives every placed row what its
class publishes; :func:`staged` writes the tables under ``<output>.__sparkanon_tmp_<id>``
(or keeps them in memory when nothing is committed) and reads them back, so verification
checks exactly the bytes that will be moved into place.
"""

from __future__ import annotations

from dataclasses import replace

from sparkanon.engine.base import Engine
from sparkanon.publications import Publication


def staged(engine: Engine, publication: Publication, tmp_path: str | None, fmt: str) -> Publication:
    """The publication's tables written to ``tmp_path/<name>`` and read back (kept if no path)."""
    if tmp_path is None:
        tables = {name: engine.persist(t) for name, t in publication.tables.items()}
    else:
        tables = {}
        for name, table in publication.tables.items():
            engine.write_table(table, f"{tmp_path}/{name}", fmt)
            tables[name] = engine.read_table(f"{tmp_path}/{name}", fmt)
    return replace(publication, tables=tables)
