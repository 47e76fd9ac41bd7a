"""The synthesis family's config rules: its columns, model and output."""

from __future__ import annotations

from sparkanon.algorithms import ALGORITHMS
from sparkanon.config import JobConfig
from sparkanon.config.job_rules import block_problems, column_problems, models_where


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
        for key, model in models_where(config, lambda m: m.name not in grouping.guarantees)
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
