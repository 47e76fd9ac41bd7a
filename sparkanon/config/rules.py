"""The checks of a job config beyond each key's type: one function per section or concern.

The classes of :mod:`.schema` call the rules of one section from their validators: a
rule (:func:`check_input_source`, :func:`check_interval_levels`...) raises
``ValueError`` with a message ``key: what is wrong`` that :mod:`.messages` prefixes with
the section's location. The rules across sections (:func:`column_problems`,
:func:`model_problems`, :func:`block_problems`...) return one line per problem, each
naming its full key (``attributes.0.levels.breakpoints.1``); a family composes them with
its own (:meth:`sparkanon.families.base.Family.config_problems`) and
:func:`sparkanon.families.check_config` fails the job with them all.

Every check that needs no data is here or in a family's rules, so ``sparkanon validate``
reports it; the checks of a run's stages are the ones that need the data (a value outside
the declared breakpoints, a column with too many distinct values).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sparkanon.attributes.kinds import RANGE_SEPARATOR
from sparkanon.attributes.levels import nesting_problem

if TYPE_CHECKING:
    from sparkanon.config.schema import (
        InputConfig,
        IntervalLevelsConfig,
        ItemsetConfig,
        JobConfig,
        OrdinalAttribute,
        OutputConfig,
        SensitiveConfig,
    )


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


def check_input_source(cfg: InputConfig) -> None:
    """``input``: one source; a partition only of a catalog table, and not empty.

    Raises:
        ValueError: naming the key.
    """
    check_path_or_table(cfg.path, cfg.table, "files")
    if cfg.partition is not None and cfg.table is None:
        raise ValueError(
            "partition: a partition is read from a partitioned catalog table; set "
            "input.table (or drop --partition)"
        )
    if cfg.partition is not None and not cfg.partition:
        raise ValueError("partition: empty; give column: value pairs")


def check_output_target(cfg: OutputConfig) -> None:
    """``output``: one target; a catalog table is Parquet.

    Raises:
        ValueError: naming the key.
    """
    check_path_or_table(cfg.path, cfg.table, "a directory")
    if cfg.table is not None and cfg.format != "parquet":
        raise ValueError(
            f"format: {cfg.format!r}: catalog tables are written as Parquet; drop "
            "output.format or use output.path for CSV"
        )


# ---------------------------------------------------------------- attributes


def check_interval_levels(cfg: IntervalLevelsConfig) -> None:
    """``attributes[].levels``: one rule; widths that nest; no empty breakpoint level.

    What depends on the column's kind (numbers, order values) and on the algorithm is
    checked by :func:`level_problems`.

    Raises:
        ValueError: naming the key.
    """
    given = [k for k in ("widths", "breakpoints", "bins") if getattr(cfg, k) is not None]
    if len(given) != 1:
        raise ValueError(
            "levels: give exactly one of widths, breakpoints or bins (got "
            + (", ".join(given) or "none")
            + ")"
        )
    problem = None if cfg.widths is None else nesting_problem("levels.widths", cfg.widths, "width")
    if problem is not None:
        raise ValueError(problem)
    if cfg.breakpoints is not None:
        for i, level in enumerate(cfg.breakpoints):
            if len(level) < 1:
                raise ValueError(f"levels.breakpoints.{i}: an empty level")


def check_order(attr: OrdinalAttribute) -> None:
    """An ordinal attribute: distinct values in ``order``, one rank weight per step.

    Raises:
        ValueError: naming the key.
    """
    if len(set(attr.order)) != len(attr.order):
        raise ValueError("order: repeated values")
    clash = [v for v in attr.order if RANGE_SEPARATOR in v]
    if clash:
        raise ValueError(
            f"order: value {clash[0]!r} contains {RANGE_SEPARATOR!r}, which separates the "
            "bounds of a published range [low, high]; rename it"
        )
    if attr.rank_weights is not None and len(attr.rank_weights) != len(attr.order) - 1:
        raise ValueError(
            f"rank_weights: {len(attr.rank_weights)} weights for {len(attr.order)} ranks; "
            f"give one weight per pair of consecutive ranks ({len(attr.order) - 1})"
        )


# ---------------------------------------------------------------- sensitive attribute


def check_sensitive_levels(cfg: SensitiveConfig) -> None:
    """``sensitive``: each value in one level, distinct level names and values.

    Raises:
        ValueError: naming the key.
    """
    if cfg.levels is not None:
        seen: dict[str, str] = {}
        for level in cfg.levels:
            for value in level.values:
                if value in seen:
                    raise ValueError(
                        f"levels: value {value!r} is in both level {seen[value]!r} "
                        f"and level {level.name!r}"
                    )
                seen[value] = level.name
        names = [lv.name for lv in cfg.levels]
        if len(set(names)) != len(names):
            raise ValueError("levels: level names must be unique")
        if cfg.values is not None and set(cfg.values) != set(seen):
            raise ValueError(
                "values: the declared values and the values of the levels differ; list "
                "the same values in both"
            )
    if cfg.values is not None and len(set(cfg.values)) != len(cfg.values):
        raise ValueError("values: repeated values")


def check_itemset(cfg: ItemsetConfig) -> None:
    """A set-valued ``sensitive``: one taxonomy source; the long table with its layout.

    Raises:
        ValueError: naming the key.
    """
    if (cfg.taxonomy is None) == (cfg.fanout is None):
        raise ValueError(
            "taxonomy: give exactly one of taxonomy (an ARX hierarchy CSV whose leaves are "
            "the items) and fanout (an even taxonomy generated over the items, e.g. 5)"
        )
    if (cfg.layout == "long") != (cfg.long is not None):
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


# ---------------------------------------------------------------- across sections
#
# The rules across sections a family composes into its own
# (:meth:`sparkanon.families.base.Family.config_problems`); each returns one line per
# problem, naming its keys.


def model_key(config: JobConfig, i: int) -> str:
    """``model`` (one model) or ``model.<i>`` (a list), as ``--set`` spells it."""
    return "model" if len(config.model) == 1 else f"model.{i}"


def models_where(config: JobConfig, declares: Callable[[Any], bool]) -> list[tuple[str, Any]]:
    """The models that declare a capability, each with its key (:func:`model_key`)."""
    return [(model_key(config, i), m) for i, m in enumerate(config.model) if declares(m)]


def column_problems(config: JobConfig) -> list[str]:
    """Problems with the columns: repeated, the sensitive one listed, no quasi-identifier."""
    from sparkanon.config.schema import QI_KINDS  # the schema imports this module

    problems: list[str] = []
    names = [a.name for a in config.attributes]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"attributes: column(s) {duplicates} listed more than once")
    if config.sensitive.name in names:
        problems.append(
            f"sensitive.name: {config.sensitive.name!r} is also listed under attributes; "
            "remove it from attributes"
        )
    if not config.quasi_identifiers:
        problems.append("attributes: no quasi-identifier (kinds: " + ", ".join(QI_KINDS) + ")")
    return problems


def single_value_problems(config: JobConfig, family: Sequence[str] = ()) -> list[str]:
    """Settings of a set-valued sensitive attribute in a job with one sensitive value per record.

    ``publish: anatomy`` and the set-valued models (``kl_diversity``); ``family``, the
    family's own problems, are listed between the two.
    """
    problems: list[str] = []
    if config.output.publish == "anatomy":
        problems.append(
            "output.publish: anatomy publishes a set-valued sensitive attribute "
            "(sensitive.kind: itemset); use centroids or generalized"
        )
    problems += family
    problems += [
        f"{key}: {model.name} protects a set-valued sensitive attribute; declare "
        "sensitive.kind: itemset (with algorithm apa or paa and publish: anatomy)"
        for key, model in models_where(config, lambda m: m.set_valued)
    ]
    return problems


def model_problems(config: JobConfig, guarantees: frozenset[str] | None = None) -> list[str]:
    """The models against the sensitive attribute's declared levels and values.

    Args:
        config: the job.
        guarantees: the models the algorithm guarantees, when its classes are repaired
            by merging (then a model that is not monotonic must be one of them);
            ``None``: no repair.
    """
    problems: list[str] = []
    levels = config.sensitive.levels
    declared = config.sensitive.declared_values
    declared_by = "sensitive.levels" if config.sensitive.values is None else "sensitive.values"
    for i, model in enumerate(config.model):
        key = model_key(config, i)
        if model.needs_levels and levels is None:
            problems.append(
                f"{key}: {model.name} needs sensitivity levels; add sensitive.levels "
                "(or use p_sensitive, which needs none)"
            )
        h = model.min_distinct_levels()
        if h > 1 and levels is not None and h > len(levels):
            problems.append(
                f"{key}.h = {h}: {model.name} needs {h} distinct sensitivity levels in every "
                f"class but sensitive.levels defines only {len(levels)} "
                f"level{'s' if len(levels) != 1 else ''}; lower h to at most {len(levels)} "
                "or define more levels"
            )
        p = getattr(model, "p", None)
        if p is not None and declared is not None and p > len(declared):
            problems.append(
                f"{key}.p = {p}: {model.name} needs {p} distinct sensitive values in every "
                f"class but {declared_by} declares only {len(declared)} values; lower p to at "
                f"most {len(declared)}"
            )
        if guarantees is not None and not model.monotonic and model.name not in guarantees:
            problems.append(
                f"{key}: {model.name} is not monotonic, so classes cannot be repaired by "
                f"merging; algorithm {config.algorithm.name!r} does not guarantee it"
            )
    return problems


def block_problems(config: JobConfig) -> list[str]:
    """Problems of a job clustered per block: a block must be able to hold a class."""
    k = config.models.min_class_size()
    i, sizing = next((i, m) for i, m in enumerate(config.model) if m.min_class_size() == k)
    param = type(sizing)._size_param
    key = model_key(config, i)
    why = f"{key}.{param} = {getattr(sizing, param)}" if param else key
    return block_rows_problems(
        config, k, f"hold at least one class, and {why} makes every class at least {k} rows"
    )


def block_rows_problems(config: JobConfig, need: int, what: str) -> list[str]:
    """``partitioning.max_block_rows`` below ``need``, the rows a block must hold (``what``)."""
    rows = config.partitioning.max_block_rows
    if rows >= need:
        return []
    return [
        f"partitioning.max_block_rows = {rows}: a block must {what}; "
        f"raise max_block_rows to at least {need}"
    ]
