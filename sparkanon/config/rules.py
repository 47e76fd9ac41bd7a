"""The checks of a job config beyond each key's type: one function per section or concern.

The classes of :mod:`.schema` call these from their validators. A section's rule
(:func:`check_input_source`, :func:`check_interval_levels`...) raises ``ValueError``
with a message ``key: what is wrong`` that :mod:`.messages` prefixes with the section's
location. The rules across sections (:func:`job_problems`) return one line per problem,
each naming its full key (``attributes.0.levels.breakpoints.1``); the job fails with
them all.

Every check that needs no data is here, so ``sparkanon validate`` reports it; the checks
of a run's stages are the ones that need the data (a value outside the declared
breakpoints, a column with too many distinct values).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sparkanon.algorithms import ALGORITHMS, algorithms_of
from sparkanon.attributes.kinds import RANGE_SEPARATOR
from sparkanon.attributes.levels import nesting_problem

if TYPE_CHECKING:
    from sparkanon.config.schema import (
        ContinuousAttribute,
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


def job_problems(config: JobConfig) -> list[str]:
    """Every problem across the sections of a job, each line naming its keys.

    A relational-transaction job (a set-valued sensitive attribute) has its own rules
    (:func:`relational_transaction_problems`); a job with one sensitive value per record
    is checked for its columns, its family's settings, its models against the sensitive
    attribute, and then its algorithm's needs: a block that can hold a class (per-block
    algorithms) or interval levels for the lattice (full-domain algorithms).

    Returns:
        The problems, empty when there are none.
    """
    if config.algorithm.name in algorithms_of("perturbation"):
        return perturbation_problems(config)
    if not config.model:
        return [
            "model: required key is missing; a release of equivalence classes is protected by a "
            "privacy model, e.g. model: {name: k, k: 5} (only algorithm perturb takes none)"
        ]
    if config.is_relational_transaction:
        return relational_transaction_problems(config)
    if config.algorithm.name in algorithms_of("synthesis"):
        return synthesis_problems(config)
    problems = column_problems(config)
    family = single_value_problems(config)
    problems += family
    if not family:
        problems += model_problems(config)
    if config.algorithm.name in algorithms_of("blocks"):
        problems += block_problems(config)
    if config.is_full_domain:
        problems += level_problems(config)
    return problems


def _model_key(config: JobConfig, i: int) -> str:
    """``model`` (one model) or ``model.<i>`` (a list), as ``--set`` spells it."""
    return "model" if len(config.model) == 1 else f"model.{i}"


def _models_where(config: JobConfig, declares: Callable[[Any], bool]) -> list[tuple[str, Any]]:
    """The models that declare a capability, each with its key (:func:`_model_key`)."""
    return [(_model_key(config, i), m) for i, m in enumerate(config.model) if declares(m)]


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


def single_value_problems(config: JobConfig) -> list[str]:
    """Settings of another family in a job with one sensitive value per record.

    A set-valued algorithm, ``publish: anatomy``, ``kl_diversity``; and the full-domain
    family's own (:func:`full_domain_problems`).
    """
    problems: list[str] = []
    if config.algorithm.name in algorithms_of("transaction"):
        problems.append(
            f"algorithm.name: {config.algorithm.name!r} anonymizes a set-valued sensitive "
            "attribute; declare sensitive.kind: itemset, or choose one of "
            + ", ".join(sorted(set(ALGORITHMS) - algorithms_of("transaction")))
        )
        return problems
    if config.output.publish == "anatomy":
        problems.append(
            "output.publish: anatomy publishes a set-valued sensitive attribute "
            "(sensitive.kind: itemset); use centroids or generalized"
        )
    if config.is_full_domain:
        problems += full_domain_problems(config)
    problems += [
        f"{key}: {model.name} protects a set-valued sensitive attribute; declare "
        "sensitive.kind: itemset (with algorithm apa or paa and publish: anatomy)"
        for key, model in _models_where(config, lambda m: m.set_valued)
    ]
    return problems


def full_domain_problems(config: JobConfig) -> list[str]:
    """A full-domain job's suppression and publication (Aggarwal 2015)."""
    problems: list[str] = []
    if config.algorithm.max_suppression > 0:
        problems += [
            f"{key}: {model.name} with algorithm.max_suppression = "
            f"{config.algorithm.max_suppression:g}: suppressing classes changes the "
            "published table's distribution of the sensitive values, which t-closeness "
            "compares every class with, so a node found against the input's distribution "
            "need not hold against the published one; set algorithm.max_suppression: 0"
            for key, model in _models_where(config, lambda m: m.compares_with_table)
        ]
    if config.output.publish != "generalized":
        problems.append(
            f"output.publish: {config.output.publish!r}: algorithm {config.algorithm.name!r} "
            "publishes every quasi-identifier at one level of its hierarchy; use publish: "
            "generalized"
        )
    return problems


def model_problems(config: JobConfig) -> list[str]:
    """The models against the sensitive attribute's declared levels and values and the algorithm."""
    problems: list[str] = []
    levels = config.sensitive.levels
    declared = config.sensitive.declared_values
    declared_by = "sensitive.levels" if config.sensitive.values is None else "sensitive.values"
    for i, model in enumerate(config.model):
        key = _model_key(config, i)
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
        if (
            not model.monotonic
            and config.algorithm.name in algorithms_of("blocks")
            and model.name not in ALGORITHMS[config.algorithm.name].implementation.guarantees
        ):
            problems.append(
                f"{key}: {model.name} is not monotonic, so classes cannot be repaired by "
                f"merging; algorithm {config.algorithm.name!r} does not guarantee it"
            )
    return problems


def block_problems(config: JobConfig) -> list[str]:
    """Problems of a per-block algorithm: a block must be able to hold a class.

    Full-domain generalization has no blocks (it ignores ``partitioning``), and a
    relational-transaction job sizes its blocks in :func:`relational_transaction_problems`.
    """
    k = config.models.min_class_size()
    i, sizing = next((i, m) for i, m in enumerate(config.model) if m.min_class_size() == k)
    param = type(sizing)._size_param
    key = _model_key(config, i)
    why = f"{key}.{param} = {getattr(sizing, param)}" if param else key
    return _block_rows_problems(
        config, k, f"hold at least one class, and {why} makes every class at least {k} rows"
    )


def _block_rows_problems(config: JobConfig, need: int, what: str) -> list[str]:
    """``partitioning.max_block_rows`` below ``need``, the rows a block must hold (``what``)."""
    rows = config.partitioning.max_block_rows
    if rows >= need:
        return []
    return [
        f"partitioning.max_block_rows = {rows}: a block must {what}; "
        f"raise max_block_rows to at least {need}"
    ]


PERTURBABLE_KINDS = {
    "uniform": ("continuous", "date", "timestamp"),
    "gaussian": ("continuous", "date", "timestamp"),
    "randomized_response": ("nominal", "categorical", "ordinal"),
}
"""The attribute kinds each perturbation applies to."""


def perturbation_problems(config: JobConfig) -> list[str]:
    """Problems of a perturbation job (Aggarwal 2015, section 20.2): its columns and model.

    Every perturbed column is an attribute of a kind its noise applies to, listed once,
    not the sensitive column (published as it is, the class label mining reads); the
    release is protected by its noise, so no privacy model is given.
    """
    problems = column_problems(config) if config.quasi_identifiers else []
    if config.model:
        names = ", ".join(m.name for m in config.model)
        problems.append(
            f"model: {names}: a perturbed release publishes every row with its noise "
            "declared, not equivalence classes; remove model (the noise of algorithm.columns "
            "is the protection)"
        )
    kinds = {a.name: a.kind for a in config.attributes}
    seen: set[str] = set()
    for i, column in enumerate(config.algorithm.columns):
        key = f"algorithm.columns.{i}"
        if column.name in seen:
            problems.append(f"{key}.name: {column.name!r} is perturbed twice; keep one entry")
        seen.add(column.name)
        if column.name == config.sensitive.name:
            problems.append(
                f"{key}.name: {column.name!r} is the sensitive column, published as it is "
                "(the label mining reads); perturb quasi-identifiers"
            )
            continue
        kind = kinds.get(column.name)
        allowed = PERTURBABLE_KINDS[column.noise]
        if kind is None:
            problems.append(
                f"{key}.name: no attribute {column.name!r}; list it under attributes (with "
                f"kind: {' or '.join(allowed)}) or fix the name (attributes: "
                + ", ".join(kinds)
                + ")"
            )
        elif kind not in allowed:
            problems.append(
                f"{key}.noise: {column.noise} perturbs an attribute of kind "
                f"{' or '.join(allowed)}, but {column.name!r} is {kind}"
                + (
                    "; privacy and scale_share are shares of a numeric range"
                    if column.numeric
                    else ""
                )
            )
    return problems


def synthesis_problems(config: JobConfig) -> list[str]:
    """Problems of a condensation job (Aggarwal and Yu 2004): its columns, model and output.

    The groups are MDAV's, which guarantees group sizes only, so every model must be
    one MDAV guarantees (``k``); a synthetic record stands for no input row, so no
    ``keep`` column can ride along (nor can ``input.unlisted: keep``); condensation
    synthesizes numeric attributes, so at least one is ``continuous``; and the synthetic
    values are published unrounded (a rounded value would move its group's mean, which
    verification checks exactly).
    """
    problems = column_problems(config)
    grouping = ALGORITHMS[config.algorithm.name].implementation
    problems += [
        f"{key}: {model.name}: algorithm {config.algorithm.name!r} forms groups by size "
        f"only (MDAV), which guarantees "
        + ", ".join(sorted(grouping.guarantees))
        + "; use model: {name: k, k: ...}"
        for key, model in _models_where(config, lambda m: m.name not in grouping.guarantees)
    ]
    for i, a in enumerate(config.attributes):
        if a.kind == "semantic":
            problems.append(
                f"attributes.{i}.kind: semantic: condensation has no reading for semantic "
                f"codes ({a.name!r}): it condenses continuous attributes and draws nominal, "
                "ordinal and categorical ones from each group's frequencies; declare it as "
                "one of those"
            )
        if a.kind == "keep":
            problems.append(
                f"attributes.{i}.kind: keep: {a.name!r} cannot ride along in a synthetic "
                "release (a synthetic record stands for no input row); drop the attribute "
                "or give it a quasi-identifier kind"
            )
    if config.input.unlisted == "keep":
        problems.append(
            "input.unlisted: keep: a synthetic release has no input row to copy the unlisted "
            "columns from (a synthetic record stands for no input row); set "
            "input.unlisted: drop"
        )
    if config.quasi_identifiers and not any(
        a.kind in ("continuous", "date", "timestamp") for a in config.quasi_identifiers
    ):
        problems.append(
            "attributes: no continuous attribute; condensation synthesizes numeric "
            "attributes from each group's mean and covariance (categorical ones are drawn "
            "from the group's frequencies), so list at least one with kind: continuous"
        )
    if config.output.decimals is not None:
        problems.append(
            f"output.decimals = {config.output.decimals}: a synthetic release publishes "
            "unrounded values (rounding would move each group's mean, which verification "
            "checks); remove output.decimals"
        )
    if not problems:
        problems += block_problems(config)
    return problems


def relational_transaction_problems(config: JobConfig) -> list[str]:
    """Problems of a relational-transaction job (Gong et al. 2016): model, algorithm, output."""
    problems = column_problems(config)
    if config.algorithm.name not in algorithms_of("transaction"):
        problems.append(
            f"algorithm.name: {config.algorithm.name!r} anonymizes one sensitive value per "
            "record; a set-valued sensitive attribute (sensitive.kind: itemset) needs one of "
            + ", ".join(sorted(algorithms_of("transaction")))
        )
    if len(config.model) != 1 or not config.model[0].set_valued:
        names = ", ".join(m.name for m in config.model)
        problems.append(
            f"model: {names}: a set-valued sensitive attribute is published under "
            "(k,l)-diversity alone; use model: {name: kl_diversity, k: 10, l: 5}"
        )
    if config.output.publish != "anatomy":
        problems.append(
            f"output.publish: {config.output.publish!r} publishes one value per record; a "
            "set-valued sensitive attribute is published as two tables (RT and TT): use "
            "publish: anatomy"
        )
    if not problems:
        need = config.model[0].k * config.model[0].l
        what = f"hold at least k * l = {need} records (l sets of k records each)"
        problems += _block_rows_problems(config, need, what)
    return problems


# ---------------------------------------------------------------- full-domain levels


def level_problems(config: JobConfig) -> list[str]:
    """The interval levels of a full-domain job (``attributes[].levels``) that need no data.

    A continuous quasi-identifier needs levels; a continuous column's breakpoints are
    numbers, at least two per level, strictly increasing, each level's edges among the
    level before's with the same first and last edge; an ordinal column's widths are
    whole numbers of ranks, its breakpoints values of its ``order``, each level's
    starting values among the level before's. Whether the data lies inside the
    breakpoints is checked when the levels are built
    (:mod:`sparkanon.families.full_domain.lattice`).

    Returns:
        At most one problem per attribute (the first found), naming its key.
    """
    problems: list[str] = []
    for i, attr in enumerate(config.attributes):
        key = f"attributes.{i}"
        if attr.kind == "continuous":
            problem = _continuous_level_problem(key, attr)
        elif attr.kind == "ordinal" and attr.levels is not None:
            problem = _ordinal_level_problem(key, attr)
        else:
            problem = None
        if problem is not None:
            problems.append(problem)
    return problems


def _number(value: float) -> str:
    """A breakpoint as the config would give it: ``40``, ``0.5``."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _numbers(values: Sequence[float]) -> str:
    return "[" + ", ".join(_number(v) for v in values) + "]"


def _as_number(value: float | str) -> float | None:
    """A breakpoint as a finite number, or ``None`` when it is none."""
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _continuous_level_problem(key: str, attr: ContinuousAttribute) -> str | None:
    """The first problem of a continuous column's levels in a full-domain job, if any."""
    cfg = attr.levels
    if cfg is None:
        return (
            f"{key}.levels: full-domain generalization needs interval levels for the "
            f"continuous column {attr.name!r}; add e.g. levels: {{widths: [5, 10, 20]}}"
        )
    if cfg.breakpoints is None:
        return None
    previous: list[float] | None = None
    for i, level in enumerate(cfg.breakpoints):
        at = f"{key}.levels.breakpoints.{i}"
        edges = [_as_number(v) for v in level]
        bad = next((v for v, e in zip(level, edges, strict=True) if e is None), None)
        if bad is not None:
            return (
                f"{at}: {bad!r} is not a number; a continuous column's breakpoints are "
                "the interval edges, finite numbers such as [0, 18, 65, 120]"
            )
        numbers = [e for e in edges if e is not None]
        if len(numbers) < 2 or any(b <= a for a, b in zip(numbers, numbers[1:], strict=False)):
            return (
                f"{at}: {_numbers(numbers)}: give at least two edges, strictly increasing "
                "(the interval edges of the level)"
            )
        if previous is not None:
            stray = [e for e in numbers if e not in previous]
            ends = numbers[0] == previous[0] and numbers[-1] == previous[-1]
            if stray or not ends:
                what = (
                    f"edge {_number(stray[0])} is not an edge of level {i - 1}"
                    if stray
                    else f"the first and last edges differ from level {i - 1}'s"
                )
                return (
                    f"{at}: {_numbers(numbers)}: {what} ({_numbers(previous)}); every edge "
                    "of a level must be an edge of the level before, with the same first and "
                    "last edge, so the intervals nest"
                )
        previous = numbers
    return None


def _ordinal_level_problem(key: str, attr: OrdinalAttribute) -> str | None:
    """The first problem of an ordinal column's levels in a full-domain job, if any."""
    cfg = attr.levels
    assert cfg is not None
    if cfg.widths is not None:
        bad = next((w for w in cfg.widths if float(w) != int(w)), None)
        if bad is not None:
            return (
                f"{key}.levels.widths: {bad:g}: an ordinal column's widths count ranks; give "
                "whole numbers, e.g. widths: [2, 4]"
            )
    if cfg.breakpoints is None:
        return None
    rank = {v: r for r, v in enumerate(attr.order)}
    previous: set[int] | None = None
    for i, level in enumerate(cfg.breakpoints):
        at = f"{key}.levels.breakpoints.{i}"
        bad = next((v for v in level if str(v) not in rank), None)
        if bad is not None:
            return (
                f"{at}: {bad!r} is not a value of the column's order; an ordinal column's "
                f"breakpoints are values of {key}.order that begin an interval (quote a "
                "number that is a value: '5')"
            )
        starts = {0, *(rank[str(v)] for v in level)}
        if previous is not None and not starts <= previous:
            first = attr.order[min(starts - previous)]
            return (
                f"{at}: {first!r} begins an interval here but not at level {i - 1}; every "
                "value beginning an interval must begin one at the level before, so the "
                "intervals nest"
            )
        previous = starts
    return None
