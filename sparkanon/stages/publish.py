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

A family that publishes one row per input row and draws per row anyway (perturbation)
may instead hand :func:`staged` rows already in their release order
(:func:`ordered_rows`): each row's word is drawn from its internal row id on the same
stream, in a lane taken from the published config (:func:`order_lane`), so releases of
different settings under one user key still share no order; the word then spreads the
rows and is the key of the kept columns' join, which saves the separate hash, batch pass
and shuffle of :meth:`~sparkanon.engine.base.Engine.keyed_order`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

import numpy as np

from sparkanon.attributes.schema import RID
from sparkanon.config import JobConfig
from sparkanon.config.published import config_sha256
from sparkanon.engine.base import Engine, Table
from sparkanon.publications import Publication
from sparkanon.publications.kept import KeptColumns
from sparkanon.randomness import RunKey
from sparkanon.randomness.streams import RELEASE_ORDER

ORDER = "_release_order"
"""The column holding a row's keyed order word until the rows are staged."""


def release_order(engine: Engine, table: Table, key: RunKey) -> Table:
    """The rows of ``table`` in the order a release writes them (keyed by ``key``)."""
    return engine.keyed_order(table, partial(key.words, RELEASE_ORDER))


def order_lane(config: JobConfig) -> int:
    """The lane of :func:`order_words`: 32 bits of the published config's SHA-256."""
    return int.from_bytes(bytes.fromhex(config_sha256(config))[:4], "little")


def order_words(key: RunKey, lane: int, ids: np.ndarray) -> np.ndarray:
    """Each row's order word (int64): the run key's word of its internal row id."""
    return key.words(RELEASE_ORDER, np.asarray(ids, dtype=np.int64), lane).view(np.int64)


def ordered_rows(
    engine: Engine,
    rows: Table,
    kept: KeptColumns,
    columns: Sequence[str],
    key: RunKey,
    lane: int,
) -> Table:
    """Rows already holding their order word, with their kept columns, in release order.

    Args:
        engine: the engine.
        rows: the published rows with their internal row id (:data:`RID`) and their
            word (:data:`ORDER`, :func:`order_words` of the id).
        kept: the kept columns (their side table gets the same word from the same id).
        columns: the published columns of ``rows``, in order.
        key: the run key.
        lane: :func:`order_lane` of the job's config.

    Returns:
        ``columns`` then the kept columns, spread over partitions by the word and sorted
        by it (:meth:`~sparkanon.engine.base.Engine.in_word_order`), neither the id nor
        the word left. The kept columns' join is on the word and the id (a left join: no
        row is lost), both sides spread by the word, so it needs no shuffle of its own.
    """
    spread = engine.spread_by_word(engine.select(rows, [ORDER, RID, *columns]), ORDER)
    if kept.side is not None:
        side = engine.with_word(kept.side, RID, partial(order_words, key, lane), ORDER)
        side = engine.spread_by_word(engine.select(side, [ORDER, RID, *kept.names]), ORDER)
        spread = engine.join(spread, side, [ORDER, RID], how="left")
    chosen = engine.select(spread, [ORDER, *columns, *kept.names])
    return engine.in_word_order(chosen, ORDER)


def staged(
    engine: Engine,
    publication: Publication,
    tmp_path: str | None,
    fmt: str,
    key: RunKey,
    ordered: bool = False,
) -> Publication:
    """The publication's tables in keyed order, written to ``tmp_path/<name>`` and read back.

    Args:
        engine: the engine.
        publication: the tables to publish.
        tmp_path: the staging location (``None``: the tables are kept in memory).
        fmt: ``parquet`` or ``csv``.
        key: the run key the rows' order is drawn with.
        ordered: the tables are in their release order already (:func:`ordered_rows`).
    """
    tables = {}
    for name, table in publication.tables.items():
        ordered_table = table if ordered else release_order(engine, table, key)
        if tmp_path is None:
            tables[name] = engine.persist(ordered_table)
        else:
            engine.write_table(ordered_table, f"{tmp_path}/{name}", fmt)
            tables[name] = engine.read_table(f"{tmp_path}/{name}", fmt)
    return replace(publication, tables=tables)
