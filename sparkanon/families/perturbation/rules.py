"""The perturbation family's config rules: the columns its noise applies to, no model."""

from __future__ import annotations

from sparkanon.config import JobConfig
from sparkanon.config.job_rules import column_problems

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
