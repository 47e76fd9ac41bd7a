"""The relational-transaction family's config rules (Gong, Yang and Luo 2016)."""

from __future__ import annotations

from sparkanon.algorithms import ALGORITHMS
from sparkanon.config import ItemsetConfig, JobConfig
from sparkanon.config.job_rules import block_rows_problems, column_problems


def transaction_problems(config: JobConfig, algorithms: frozenset[str]) -> list[str]:
    """Problems of a job whose algorithm is one of the family's (``algorithms``).

    With one sensitive value per record, the algorithm is refused (it anonymizes a
    set-valued sensitive attribute); else :func:`relational_transaction_problems`.
    """
    if isinstance(config.sensitive, ItemsetConfig):
        return relational_transaction_problems(config, algorithms)
    return [
        *column_problems(config),
        f"algorithm.name: {config.algorithm.name!r} anonymizes a set-valued sensitive "
        "attribute; declare sensitive.kind: itemset, or choose one of "
        + ", ".join(sorted(set(ALGORITHMS) - algorithms)),
    ]


def relational_transaction_problems(config: JobConfig, algorithms: frozenset[str]) -> list[str]:
    """Problems of a relational-transaction job (Gong et al. 2016): model, algorithm, output.

    ``algorithms``: the family's (the ones a set-valued sensitive attribute needs).
    """
    problems = column_problems(config)
    if config.algorithm.name not in algorithms:
        problems.append(
            f"algorithm.name: {config.algorithm.name!r} anonymizes one sensitive value per "
            "record; a set-valued sensitive attribute (sensitive.kind: itemset) needs one of "
            + ", ".join(sorted(algorithms))
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
        problems += block_rows_problems(config, need, what)
    return problems
