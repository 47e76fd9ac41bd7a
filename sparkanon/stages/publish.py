"""Stage ``publish``: the publication, written to a temporary location and read back.

The publisher (:mod:`sparkanon.publications`) joins every placed row with what its
class publishes; the tables are written under ``<output>.__sparkanon_tmp_<id>`` (or kept
in memory when nothing is committed) and read back, so verification checks exactly the
bytes that will be moved into place.
"""

from __future__ import annotations

from dataclasses import replace

from sparkanon.engine.base import Engine, Table
from sparkanon.publications import Publication, Publisher
from sparkanon.stages._common import StageTimer
from sparkanon.stages.kept import KeptColumns


def publish(
    engine: Engine,
    publisher: Publisher,
    placed: Table,
    summaries: Table,
    timer: StageTimer,
    tmp_path: str | None,
    fmt: str,
    kept: KeptColumns | None = None,
) -> Publication:
    """Publish the placed rows (and the kept columns); write every table to ``tmp_path/<name>``."""
    with timer.stage("publish"):
        return staged(engine, publisher.publish(engine, placed, summaries, kept), tmp_path, fmt)


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
