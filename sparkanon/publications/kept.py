"""Kept columns: published unchanged, never in the algorithms' memory.

A ``kind: keep`` column and, with ``input.unlisted: keep``, every column the config does
not name are published as they are, in their input type. The algorithms never see them:
the encoded (cached) table carries the row id, the codes and the sensitive value only.
Every family's publish map emits the row id of each published row, and
:func:`join_kept` joins the kept columns to it by that id from a narrow side table
(``_rid`` and the kept columns, selected from the input as read), so kept values never
pass through a batch function either and keep their exact type on Spark.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sparkanon.attributes.schema import RID
from sparkanon.config import ItemsetConfig, JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.engine.expr import Col

UNLISTED_EXAMPLES = 20
"""Unlisted column names the log line shows (metrics.json holds them all)."""


@dataclass(frozen=True)
class KeptColumns:
    """The columns published unchanged, and where their values come from.

    Attributes:
        columns: ``(name, input type)``: the ``keep`` columns in config order, then the
            unlisted columns kept (``input.unlisted: keep``) in input order.
        side: the row id and those columns, selected from the input as read (``None``
            when there is no kept column).
    """

    columns: tuple[tuple[str, str], ...] = ()
    side: Table | None = None

    @property
    def names(self) -> list[str]:
        """The kept columns' names."""
        return [c for c, _ in self.columns]


@dataclass(frozen=True)
class Unlisted:
    """The input columns the config does not name, and what becomes of them.

    Attributes:
        policy: ``input.unlisted`` (``drop`` or ``keep``).
        names: the columns, in input order.
    """

    policy: str
    names: tuple[str, ...]

    def metrics(self) -> dict[str, object]:
        """``metrics.json``'s ``unlisted_columns``: the policy, the count and the names."""
        return {"policy": self.policy, "count": len(self.names), "names": list(self.names)}


def named_columns(config: JobConfig, reserved: Sequence[str] = ()) -> set[str]:
    """The input columns the config names: attributes (every kind), sensitive column, keys.

    Args:
        config: the job config.
        reserved: columns that are not data either (a catalog table's partition columns).
    """
    named = {a.name for a in config.attributes} | set(reserved)
    sens = config.sensitive
    if isinstance(sens, ItemsetConfig) and sens.layout == "long":
        assert sens.long is not None
        named.add(sens.long.key)
    else:
        named.add(sens.name)
    return named


def unlisted_columns(
    config: JobConfig, own: Sequence[str], reserved: Sequence[str] = ()
) -> Unlisted:
    """The input's own columns the config does not name (:func:`named_columns`).

    Args:
        config: the job config.
        own: the input's own columns, in input order (no reader-added column).
        reserved: a catalog table's partition columns.
    """
    named = named_columns(config, reserved)
    return Unlisted(config.input.unlisted, tuple(c for c in own if c not in named))


def kept_columns(
    config: JobConfig, unlisted: Unlisted, types: dict[str, str]
) -> list[tuple[str, str]]:
    """``(name, input type)`` of the columns published unchanged.

    The ``keep`` columns in config order, then the unlisted ones when they are kept.
    """
    names = list(config.kept_columns)
    if unlisted.policy == "keep":
        names += list(unlisted.names)
    return [(c, types[c]) for c in names]


def side_table(engine: Engine, table: Table, columns: Sequence[tuple[str, str]]) -> KeptColumns:
    """The kept columns and their side table (row id and kept columns) of the input ``table``."""
    if not columns:
        return KeptColumns()
    return KeptColumns(tuple(columns), engine.select(table, [RID, *[c for c, _ in columns]]))


def join_kept(
    engine: Engine, published: Table, kept: KeptColumns, key: str, columns: Sequence[str]
) -> Table:
    """Published rows with their kept columns, joined by row id: ``columns``, then the kept.

    Args:
        engine: the engine.
        published: the published rows; ``key`` holds each row's input row id.
        kept: the kept columns (none: ``published`` restricted to ``columns``).
        key: the column of ``published`` holding the internal row id (``_rid``).
        columns: the published columns before the kept ones, in order (``key`` is
            published only when it is one of them).

    Returns:
        The published table. A left join: no published row is lost, whatever the side
        table holds (every published row's id is an input row's, so none goes unmatched).
    """
    if kept.side is None:
        return engine.select(published, list(columns))
    side = kept.side
    if key != RID:
        side = engine.select(engine.with_columns(side, {key: Col(RID)}), [key, *kept.names])
    joined = engine.join(published, side, [key], how="left")
    return engine.select(joined, [*columns, *kept.names])
