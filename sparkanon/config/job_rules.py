"""The rules across a job config's sections, which the families compose into their own.

Each returns one line per problem, naming its full key (``attributes.0.levels.breakpoints.1``);
a family composes them with its own (:meth:`sparkanon.families.base.Family.config_problems`)
and :func:`sparkanon.families.check_config` fails the job with them all. The rules of one
section, which the schema's validators call, are in :mod:`.rules`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sparkanon.config.schema import QI_KINDS, JobConfig


def model_key(config: JobConfig, i: int) -> str:
    """``model`` (one model) or ``model.<i>`` (a list), as ``--set`` spells it."""
    return "model" if len(config.model) == 1 else f"model.{i}"


def models_where(config: JobConfig, declares: Callable[[Any], bool]) -> list[tuple[str, Any]]:
    """The models that declare a capability, each with its key (:func:`model_key`)."""
    return [(model_key(config, i), m) for i, m in enumerate(config.model) if declares(m)]


def column_problems(config: JobConfig) -> list[str]:
    """Problems with the columns: repeated, the sensitive one listed, no quasi-identifier."""
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
