"""The example family's class: its config rules and its steps, against the runner's protocol."""

from __future__ import annotations

from typing import Any

from sparkanon.algorithms import ALGORITHMS
from sparkanon.config import JobConfig
from sparkanon.config.job_rules import column_problems, model_problems
from sparkanon.families.base import Anonymized, Family, Run, Verdict, verify_classes
from sparkanon.publications.base import MAIN, Publication
from sparkanon.stages.publish import staged


class StarFamily(Family):
    """Publishes every usable row with its quasi-identifiers replaced by ``*``."""

    name = "example_star"

    def config_problems(self, config: JobConfig) -> list[str]:  # noqa: D102
        problems = column_problems(config) + model_problems(config)
        if config.output.publish != "generalized":
            problems.append(
                f"output.publish: {config.output.publish!r}: algorithm star publishes "
                "generalized values; use publish: generalized"
            )
        return problems

    def anonymize(self, run: Run) -> Anonymized:  # noqa: D102
        engine, schema = run.engine, run.schema
        starred = ALGORITHMS[run.config.algorithm.name].implementation(schema.qi_names)
        sensitive = run.config.sensitive.name
        rows = engine.select(run.raw.table, [*schema.qi_names, sensitive])
        published = engine.with_columns(rows, starred)
        publication = Publication({MAIN: published}, MAIN, list(schema.qi_names), sensitive)
        fmt = run.config.output.format
        return Anonymized(staged(engine, publication, run.staging(), fmt, run.key), {})

    def verify(self, run: Run, done: Anonymized) -> Verdict:  # noqa: D102
        domain, models = run.bound_models()
        return verify_classes(run, done.publication, models, domain)

    def measure(self, run: Run, done: Anonymized, verdict: Verdict) -> dict[str, Any]:  # noqa: D102
        return {"classes": verdict.groups, "dm": verdict.details["dm"]}
