"""The checks of a job config beyond each key's type: one function per section or concern.

The classes of :mod:`.schema` call the rules of one section from their validators: a
rule (:func:`check_input_source`, :func:`check_interval_levels`...) raises
``ValueError`` with a message ``key: what is wrong`` that :mod:`.messages` prefixes with
the section's location. The rules across sections, which the families compose, are in
:mod:`.job_rules`.

Every check that needs no data is here or in a family's rules, so ``sparkanon validate``
reports it; the checks of a run's stages are the ones that need the data (a value outside
the declared breakpoints, a column with too many distinct values).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sparkanon.attributes.intervals import RANGE_SEPARATOR
from sparkanon.attributes.levels import nesting_problem

# ---------------------------------------------------------------- input and output


def check_path_or_table(path: str | None, table: str | None, files: str) -> None:
    """Exactly one of ``path`` and ``table``, and a table name of plain identifiers.

    Args:
        path: the section's ``path``.
        table: the section's ``table``.
        files: what a path is, for the message (``files``, ``a directory``).

    Raises:
        ValueError: neither or both given, or a malformed table name.
    """
    if path is None and table is None:
        raise ValueError(
            f"path: required key is missing; give path ({files}) or table (a catalog table, "
            "db.name)"
        )
    if path is not None and table is not None:
        raise ValueError(f"table: give path ({files}) or table (a catalog table), not both")
    if table is not None:
        check_table_name(table, "table")


def check_table_name(name: str, key: str) -> None:
    """A table name must be ``db.name`` or ``name`` of plain identifiers.

    Raises:
        ValueError: naming the key and the bad name.
    """
    parts = name.split(".")
    if len(parts) > 2 or not all(re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", p) for p in parts):
        raise ValueError(
            f"{key}: {name!r} is not db.name or name (letters, digits and _, not starting "
            "with a digit)"
        )


def check_input_source(
    path: str | None, table: str | None, partition: Mapping[str, Any] | None
) -> None:
    """``input``: one source; a partition only of a catalog table, and not empty.

    Args:
        path: ``input.path``.
        table: ``input.table``.
        partition: ``input.partition``.

    Raises:
        ValueError: naming the key.
    """
    check_path_or_table(path, table, "files")
    if partition is not None and table is None:
        raise ValueError(
            "partition: a partition is read from a partitioned catalog table; set "
            "input.table (or drop --partition)"
        )
    if partition is not None and not partition:
        raise ValueError("partition: empty; give column: value pairs")


def check_output_target(path: str | None, table: str | None, file_format: str) -> None:
    """``output``: one target; a catalog table is Parquet.

    Args:
        path: ``output.path``.
        table: ``output.table``.
        file_format: ``output.format``.

    Raises:
        ValueError: naming the key.
    """
    check_path_or_table(path, table, "a directory")
    if table is not None and file_format != "parquet":
        raise ValueError(
            f"format: {file_format!r}: catalog tables are written as Parquet; drop "
            "output.format or use output.path for CSV"
        )


# ---------------------------------------------------------------- attributes


def check_interval_levels(
    widths: Sequence[float] | None, breakpoints: Sequence[Sequence[Any]] | None, bins: Any
) -> None:
    """``attributes[].levels``: one rule; widths that nest; no empty breakpoint level.

    What depends on the column's kind (numbers, order values) and on the algorithm is
    checked when the levels are built.

    Args:
        widths: ``levels.widths``.
        breakpoints: ``levels.breakpoints``.
        bins: ``levels.bins``.

    Raises:
        ValueError: naming the key.
    """
    rules = {"widths": widths, "breakpoints": breakpoints, "bins": bins}
    given = [k for k, v in rules.items() if v is not None]
    if len(given) != 1:
        raise ValueError(
            "levels: give exactly one of widths, breakpoints or bins (got "
            + (", ".join(given) or "none")
            + ")"
        )
    problem = None if widths is None else nesting_problem("levels.widths", widths, "width")
    if problem is not None:
        raise ValueError(problem)
    if breakpoints is not None:
        for i, level in enumerate(breakpoints):
            if len(level) < 1:
                raise ValueError(f"levels.breakpoints.{i}: an empty level")


def check_order(order: Sequence[str], rank_weights: Sequence[float] | None) -> None:
    """An ordinal attribute: distinct values in ``order``, one rank weight per step.

    Args:
        order: the attribute's ``order``.
        rank_weights: its ``rank_weights``.

    Raises:
        ValueError: naming the key.
    """
    if len(set(order)) != len(order):
        raise ValueError("order: repeated values")
    clash = [v for v in order if RANGE_SEPARATOR in v]
    if clash:
        raise ValueError(
            f"order: value {clash[0]!r} contains {RANGE_SEPARATOR!r}, which separates the "
            "bounds of a published range [low, high]; rename it"
        )
    if rank_weights is not None and len(rank_weights) != len(order) - 1:
        raise ValueError(
            f"rank_weights: {len(rank_weights)} weights for {len(order)} ranks; "
            f"give one weight per pair of consecutive ranks ({len(order) - 1})"
        )


# ---------------------------------------------------------------- sensitive attribute


def check_sensitive_levels(
    levels: Sequence[tuple[str, Sequence[str]]] | None, values: Sequence[str] | None
) -> None:
    """``sensitive``: each value in one level, distinct level names and values.

    Args:
        levels: ``sensitive.levels`` as (name, values) pairs.
        values: ``sensitive.values``.

    Raises:
        ValueError: naming the key.
    """
    if levels is not None:
        seen: dict[str, str] = {}
        for name, members in levels:
            for value in members:
                if value in seen:
                    raise ValueError(
                        f"levels: value {value!r} is in both level {seen[value]!r} "
                        f"and level {name!r}"
                    )
                seen[value] = name
        names = [name for name, _ in levels]
        if len(set(names)) != len(names):
            raise ValueError("levels: level names must be unique")
        if values is not None and set(values) != set(seen):
            raise ValueError(
                "values: the declared values and the values of the levels differ; list "
                "the same values in both"
            )
    if values is not None and len(set(values)) != len(values):
        raise ValueError("values: repeated values")


def check_itemset(taxonomy: Any, fanout: int | None, layout: str, long: Any) -> None:
    """A set-valued ``sensitive``: one taxonomy source; the long table with its layout.

    Args:
        taxonomy: ``sensitive.taxonomy``.
        fanout: ``sensitive.fanout``.
        layout: ``sensitive.layout``.
        long: ``sensitive.long``.

    Raises:
        ValueError: naming the key.
    """
    if (taxonomy is None) == (fanout is None):
        raise ValueError(
            "taxonomy: give exactly one of taxonomy (an ARX hierarchy CSV whose leaves are "
            "the items) and fanout (an even taxonomy generated over the items, e.g. 5)"
        )
    if (layout == "long") != (long is not None):
        raise ValueError(
            "long: the long table (format, path, key, item) goes with layout: long, and "
            "only with it"
        )


def model_list(raw: Any) -> Any:
    """``model``: one mapping becomes a list of one; a list stays; an empty list is refused.

    Raises:
        ValueError: an empty list.
    """
    if isinstance(raw, Mapping):
        return [raw]
    if isinstance(raw, (list, tuple)) and not raw:
        raise ValueError(
            "the model list is empty; name at least one model, e.g. model: {name: k, k: 5}"
        )
    return raw
