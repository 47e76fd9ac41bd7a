"""The full-domain family's config rules: suppression, publication and interval levels."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sparkanon.config import ContinuousAttribute, JobConfig, OrdinalAttribute
from sparkanon.config.job_rules import (
    column_problems,
    model_problems,
    models_where,
    single_value_problems,
)


def full_domain_job_problems(config: JobConfig) -> list[str]:
    """Every problem across the sections of a full-domain job (Aggarwal 2015)."""
    problems = column_problems(config)
    family = single_value_problems(config, full_domain_problems(config))
    problems += family
    if not family:
        problems += model_problems(config)
    return problems + level_problems(config)


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
            for key, model in models_where(config, lambda m: m.compares_with_table)
        ]
    if config.output.publish != "generalized":
        problems.append(
            f"output.publish: {config.output.publish!r}: algorithm {config.algorithm.name!r} "
            "publishes every quasi-identifier at one level of its hierarchy; use publish: "
            "generalized"
        )
    return problems


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
