"""The publication interface (see :mod:`sparkanon.publications`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from sparkanon.attributes.schema import CLASS, RID, Schema
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.engine.expr import Col
from sparkanon.metrics.registry import ClassBatch
from sparkanon.publications.kept import KeptColumns, join_kept

CLASS_VALUE_PREFIX = "_pub_"
"""Prefix of the columns in which a row carries its class's published quasi-identifiers
(:meth:`Publisher.class_value_columns`; the published names may be the row's own columns)."""
MAIN = "data"
"""The name of a one-table publication's table (``<output>/data``)."""


@dataclass(frozen=True)
class Publication:
    """Named published tables and the columns that define their equivalence classes.

    Attributes:
        tables: every table to commit, by name (the directory under the output).
        class_table: the table whose rows carry the published quasi-identifiers and
            the sensitive value.
        class_key: the columns of ``class_table`` that define an equivalence class
            (what a reader of the publication can link a person by).
        sensitive: the sensitive column of ``class_table``.
    """

    tables: dict[str, Table]
    class_table: str
    class_key: list[str]
    sensitive: str

    @property
    def rows(self) -> Table:
        """The table verification groups."""
        return self.tables[self.class_table]


class Publisher(ABC):
    """How classes are published (one class per ``output.publish`` value).

    Attributes:
        name: the ``output.publish`` value.
    """

    name: ClassVar[str]

    def __init__(self, schema: Schema, passthrough_types: Sequence[tuple[str, str]]) -> None:
        self.schema = schema
        self.passthrough_types = list(passthrough_types)

    def carried(self) -> list[str]:
        """Columns the row map copies from the placed rows: the pass-through ones, ``_rid``."""
        return [c for c, _ in self.passthrough_types] + [RID]

    @abstractmethod
    def class_columns(self) -> list[tuple[str, str]]:
        """Columns of the summary table holding what each class publishes."""

    @abstractmethod
    def block_values(self, b: ClassBatch) -> dict[str, Any]:
        """What every class of a batch publishes: one array per :meth:`class_columns` column."""

    @abstractmethod
    def columns(self) -> list[tuple[str, str]]:
        """What the row map publishes: quasi-identifiers, the sensitive value (no kept column)."""

    @abstractmethod
    def published_values(self, values: pd.DataFrame) -> dict[str, Any]:
        """What a row of a class with these :meth:`class_columns` values publishes.

        Args:
            values: one row per class (or per placed row) holding :meth:`class_columns`.

        Returns:
            One array per published quasi-identifier (the first
            ``len(schema.kinds)`` of :meth:`columns`), aligned with ``values``.
        """

    def qi_columns(self) -> list[tuple[str, str]]:
        """The published quasi-identifiers: name and type (the start of :meth:`columns`)."""
        return self.columns()[: len(self.schema.kinds)]

    def make_row_fn(self) -> BatchFn:
        """Batch function: rows joined with their class's values -> published rows.

        The published rows are :meth:`columns` and the :meth:`carried` ones.
        """
        carried = self.carried()

        def publish(batch: pd.DataFrame) -> pd.DataFrame:
            frame = pd.DataFrame(self.published_values(batch))
            for c in carried:
                frame[c] = batch[c].to_numpy()
            return frame

        return publish

    def publish(
        self, engine: Engine, placed: Table, summaries: Table, kept: KeptColumns | None = None
    ) -> Publication:
        """Every placed row, published with its class's values.

        Args:
            engine: the engine.
            placed: the rows with their class (``_class``), row id and pass-through columns.
            summaries: one row per class with :meth:`class_columns`.
            kept: the kept columns, joined to the published rows by row id (an argument,
                not an attribute: batch functions pickle the publisher, never a table).

        Returns:
            A one-table publication grouped by the published quasi-identifiers: the
            :meth:`columns`, then the kept columns joined by row id
            (:func:`~sparkanon.publications.kept.join_kept`).
        """
        rows_only = engine.select(placed, [CLASS, *dict.fromkeys(self.carried())])
        per_class = engine.select(summaries, [CLASS] + [c for c, _ in self.class_columns()])
        joined = engine.join(rows_only, per_class, [CLASS])
        return self._published(engine, joined, self.make_row_fn(), kept)

    def class_value_columns(self) -> list[tuple[str, str]]:
        """The published quasi-identifiers as a row carries them beside its own codes (prefixed)."""
        return [(CLASS_VALUE_PREFIX + c, t) for c, t in self.qi_columns()]

    def publish_carried(
        self, engine: Engine, rows: Table, kept: KeptColumns | None = None
    ) -> Publication:
        """Every row published with the quasi-identifiers it already carries (no join, no map).

        The per-block step can summarise its classes itself and hand each row the values
        its class publishes under the :meth:`class_value_columns` names
        (:func:`sparkanon.families.blocks.summarise.with_class_values`, :meth:`published_values`
        run once per class); the publication is then a renaming of columns, natively,
        the same rows as :meth:`publish` gives from the summary table.

        Args:
            engine: the engine.
            rows: the placed rows with the pass-through columns, ``_rid`` and
                :meth:`class_value_columns`.
            kept: the kept columns, joined by row id.
        """
        qi = [c for c, _ in self.qi_columns()]
        named = engine.with_columns(rows, {c: Col(CLASS_VALUE_PREFIX + c) for c in qi})
        columns = [c for c, _ in self.columns()]
        published = join_kept(
            engine, engine.select(named, [*columns, RID]), kept or KeptColumns(), RID, columns
        )
        return self._publication(published)

    def _published(
        self,
        engine: Engine,
        rows: Table,
        row_fn: BatchFn,
        kept: KeptColumns | None,
    ) -> Publication:
        """The one-table publication: ``row_fn`` over ``rows``, then the kept columns."""
        columns = self.columns()
        mapped = engine.map_batches(rows, row_fn, [*columns, (RID, "long")])
        published = join_kept(engine, mapped, kept or KeptColumns(), RID, [c for c, _ in columns])
        return self._publication(published)

    def _publication(self, published: Table) -> Publication:
        """The one-table publication of ``published``, grouped by the quasi-identifiers."""
        return Publication(
            tables={MAIN: published},
            class_table=MAIN,
            class_key=self.schema.qi_names,
            sensitive=self.schema.sensitive.name,
        )
