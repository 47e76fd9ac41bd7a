"""The per-block family's config rules: its models, and a block that can hold a class."""

from __future__ import annotations

from sparkanon.algorithms import ALGORITHMS
from sparkanon.config import JobConfig
from sparkanon.config.job_rules import (
    block_problems,
    column_problems,
    model_problems,
    single_value_problems,
)


def block_job_problems(config: JobConfig) -> list[str]:
    """Every problem across the sections of a per-block job.

    Its columns, the settings of a set-valued sensitive attribute, its models against
    the sensitive attribute and the algorithm (a model that is not monotonic must be one
    the algorithm guarantees: its classes are repaired by merging), and a block that can
    hold a class.
    """
    problems = column_problems(config)
    family = single_value_problems(config)
    problems += family
    if not family:
        guarantees = ALGORITHMS[config.algorithm.name].implementation.guarantees
        problems += model_problems(config, frozenset(guarantees))
    return problems + block_problems(config)
