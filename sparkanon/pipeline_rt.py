"""The relational-transaction job (seed 002): records with a set-valued sensitive attribute.

read (joining a long item table when configured) -> profile (quasi-identifiers and the
items) -> the item taxonomy -> encode (sets as leaf ids) -> partition (Mondrian-style
blocks on the relational quasi-identifiers) -> cluster (APA or PAA per block) ->
reconcile (the suppressed records of every block as one more block) -> publish (RT and
TT, to a temporary location) -> verify ((k,l)-diversity by aggregations) -> measure ->
commit (both tables or neither). Written once against the engine; the driver holds
statistics only (per item, per block, per reason), never records.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sparkanon.algorithms.partition import CutPolicy
from sparkanon.algorithms.transaction._result import REASONS
from sparkanon.attributes.itemsets import ItemTree
from sparkanon.config import ItemsetConfig, JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import ConfigError, InternalError, PrivacyViolationError
from sparkanon.metrics.ncp import fully_lost_mean
from sparkanon.stages._common import StageTimer, log, one_row
from sparkanon.stages.commit import OutputTarget, opened_output
from sparkanon.stages.encode import encode_input
from sparkanon.stages.items import ITEMS
from sparkanon.stages.partition import Partitioning, plan_job_top
from sparkanon.stages.profile import Profile, profile_input
from sparkanon.stages.read import read_input
from sparkanon.stages.release import check_release_size
from sparkanon.stages.rt_cluster import (
    ITEM_LOSS,
    N_ITEMS,
    cluster_rt,
    reconcile_rt,
)
from sparkanon.stages.rt_publish import publish_rt, rt_column_types, verify_rt

RT_SPLIT_BYTES = 16 << 20
"""Default ``input.max_split_bytes`` of a relational-transaction job (16 MiB of input file)."""
RT_TASK_ROWS = 25_000
"""Default ``partitioning.task_rows`` of a relational-transaction job (records per top block)."""


def with_rt_defaults(config: JobConfig) -> JobConfig:
    """The config with the relational-transaction defaults of keys left unset.

    A record carries its whole set (126 items a basket in the Complete Journey data), so
    the defaults sized for one-value rows hold too much in one task:

    * ``input.max_split_bytes``: :data:`RT_SPLIT_BYTES`. Spark's default 128 MiB split of
      Parquet is over a million records, about 600 MiB once encoded: two such tasks
      caching their rows ran out of the default 1 GiB heap on 10M records. 16 MiB splits
      are about 150,000 records, and give every core work from 1M records on.
    * ``partitioning.task_rows``: :data:`RT_TASK_ROWS`. A top block is one pandas group,
      all its records and sets sent to one Python worker and back as one Arrow batch:
      25,000 baskets are about 15 MiB where the default 200,000 are about 130 MiB.
    """
    updates = {}
    if config.input.max_split_bytes is None:
        source = config.input.model_copy(update={"max_split_bytes": RT_SPLIT_BYTES})
        updates["input"] = source
    if "task_rows" not in config.partitioning.model_fields_set:
        blocks = config.partitioning.model_copy(update={"task_rows": RT_TASK_ROWS})
        updates["partitioning"] = blocks
    return config.model_copy(update=updates) if updates else config


def item_tree(sens: ItemsetConfig, profile: Profile) -> ItemTree:
    """The taxonomy: the configured file, or an even tree over the items the data holds."""
    items = profile.items
    assert items is not None
    return sens.load_tree(list(items.records_per_item))


def rt_partitioning(config: JobConfig, k: int, l: int) -> Partitioning:  # noqa: E741
    """Median cuts on the relational quasi-identifiers; a block holds at least ``k * l`` records.

    ``k * l`` is the fewest records that can hold ``l`` TBuckets of ``k`` records each,
    what one group of PAA needs; smaller sides are not cut off.
    """
    need = k * l
    policy = CutPolicy(
        rule="spread",
        min_side=need,
        stop_rows=config.partitioning.max_block_rows,
        infeasible=config.partitioning.infeasible_blocks,
    )

    def feasible(counts: np.ndarray) -> np.ndarray:
        return counts.sum(axis=1) >= need

    return Partitioning(policy, feasible, 1)


def check_rt_feasible(config: JobConfig, usable: int, distinct_sets: int, k: int, l: int) -> None:  # noqa: E741
    """Fail (exit 2) when no (k,l)-diverse publication of the usable records exists.

    Raises:
        ConfigError: fewer than ``k`` records (no TBucket can reach ``k``) or than
            ``k * l``, or fewer distinct sets than ``l`` (no group can hold ``l``).
    """
    if usable < k * l:
        raise ConfigError(
            f"model.k = {k}, model.l = {l}: a (k,l)-diverse publication needs at least l "
            f"TBuckets of k records, {k * l} records, but the input has {usable} usable "
            "records; lower k or l"
        )
    if distinct_sets < l:
        raise ConfigError(
            f"model.l = {l}: every group needs l different sets but the records hold only "
            f"{distinct_sets} distinct set(s); lower l to at most {distinct_sets}"
        )


def run_rt_job(
    engine: Engine, config: JobConfig, table: Table | None = None, commit: bool = True
) -> Any:
    """Run the relational-transaction job (see the module docstring).

    Args:
        engine: the engine to run on.
        config: the validated config (``sensitive.kind: itemset``).
        table: the input table; read from ``config.input`` when ``None``.
        commit: write RT, TT and ``metrics.json`` (after verification).

    Returns:
        A :class:`sparkanon.pipeline.JobResult` whose ``published`` table is RT.

    Raises:
        UserError: bad config or input (exit 2); nothing is written.
        PrivacyViolationError: verification failed (exit 3); nothing is written.
    """
    config = with_rt_defaults(config)
    timer = StageTimer(engine)
    with opened_output(engine, config, table is not None, commit) as target:
        return _run_rt_job(engine, config, table, target, timer)


def _run_rt_job(
    engine: Engine,
    config: JobConfig,
    table: Table | None,
    target: OutputTarget | None,
    timer: StageTimer,
) -> Any:
    """:func:`run_rt_job` with its output opened."""
    from sparkanon.pipeline import JobResult, commit_verified

    sens = config.sensitive
    assert isinstance(sens, ItemsetConfig)
    model = config.model[0]
    k, l = int(model.k), int(model.l)  # noqa: E741
    raw = read_input(engine, config, timer, table)
    profile, schema = profile_input(engine, config, raw, timer)
    tree = item_tree(sens, profile)
    codes = tree.leaf_codes()
    encoded, enc_cols = encode_input(engine, config, raw, schema, timer, codes)
    distinct = one_row(engine, encoded, {"sets": ("nunique", ITEMS)})["sets"] or 0
    check_rt_feasible(config, profile.usable, int(distinct), k, l)
    part = rt_partitioning(config, k, l)
    usable = profile.usable
    blocks_tree, infeasible = plan_job_top(engine, config, encoded, schema, part, usable, timer)
    name = config.algorithm.name
    clustered, blocks = cluster_rt(
        engine,
        encoded,
        enc_cols,
        blocks_tree,
        infeasible,
        part,
        schema,
        tree,
        name,
        k,
        l,
        timer,
        records=usable,
    )
    chunk_rows = config.partitioning.reconcile_rows
    unplaced = int(blocks["unplaced"] or 0)
    rows, suppressed, rounds = reconcile_rt(
        engine, clustered, enc_cols, tree, name, k, l, unplaced, chunk_rows, timer
    )
    blocks = blocks | {"reconciled": unplaced} | rounds
    from sparkanon.attributes.schema import CLASS

    placed = engine.where(rows, CLASS, ">=", 0)
    try:
        kinds = {a.name: a.kind for a in config.quasi_identifiers}
        publication = publish_rt(
            engine,
            placed,
            rt_column_types(raw.passthrough_types, kinds),
            tree,
            sens.name,
            sens.separator,
            timer,
            target.staging() if target else None,
            config.output.format,
        )
        with timer.stage("verify"):
            verdict = verify_rt(engine, publication, sens.name, k, l)
            timer.note(
                rows=int(verdict["rows"] or 0),
                groups=int(verdict["groups"] or 0),
                violations=int(verdict["violations"] or 0),
            )
        with timer.stage("metrics"):
            loss = one_row(engine, placed, {"loss": ("sum", ITEM_LOSS), "items": ("sum", N_ITEMS)})
        metrics = rt_report(
            config, engine, profile, tree, blocks, suppressed, verdict, loss, timer, k, l
        )
        metrics["loss_with_suppressed"] = {
            "item_ncp": item_ncp_with_suppressed(engine, rows, metrics["item_ncp"], loss)
        }
        if verdict["violations"]:
            raise PrivacyViolationError(
                f"verification failed: {verdict['violations']} violations of (k,l)-diversity "
                f"(k={k}, l={l}): {verdict['small_tbuckets']} TBuckets below k, "
                f"{verdict['frequent_groups']} groups with a set above |G|/l, "
                f"{verdict['inconsistent_groups']} groups whose RT and TT sizes differ; "
                "nothing was written"
            )
        check_release_size(metrics, config.output.max_suppressed_share, rt_empty_hint(metrics, l))
        publication = commit_verified(engine, target, timer, metrics, publication, config)
    finally:
        for t in (encoded, clustered, rows):
            engine.unpersist(t)
    return JobResult(published=publication.rows, metrics=metrics, publication=publication)


def item_ncp_with_suppressed(
    engine: Engine, rows: Table, item_ncp: float, loss: dict[str, Any]
) -> float:
    """Item NCP counting every item of a suppressed record as fully lost (NCP 1).

    Over the records that reached the algorithm (placed and suppressed); records dropped
    before it (malformed, missing or invalid values) have no parsed item set to weigh.
    """
    from sparkanon.attributes.schema import CLASS

    lost = one_row(engine, engine.where(rows, CLASS, "<", 0), {"items": ("sum", N_ITEMS)})
    return fully_lost_mean(item_ncp, float(loss["items"] or 0), float(lost["items"] or 0), 1.0)


def rt_empty_hint(metrics: dict[str, Any], l: int) -> str:  # noqa: E741
    """Why a relational-transaction run publishes no record, when the algorithm suppressed all.

    Every group of a (k,l)-diverse release holds at least ``l`` TBuckets (records of one
    generalized item set, at least ``k`` each), so its most frequent set is at most
    ``|G| / l``. Records suppressed for a bucket above that share, or for a group
    that could not reach ``l`` buckets by merging, all of them, mean the records could
    not form ``l`` distinct TBuckets of ``k`` records: their sets generalize to fewer
    than ``l`` distinct sets at that ``k``.
    """
    if metrics["rows_out"]:
        return ""
    reasons = metrics.get("suppressed_by_reason", {})
    if not reasons.get("bucket_above_share") and not reasons.get("merge_below_l"):
        return ""
    return (
        f"The true cause: (k,l)-diversity needs every group to hold at least l = {l} TBuckets "
        f"(distinct generalized item sets of at least k records each), and these records "
        f"could not form {l} of them: their item sets generalize to fewer than {l} distinct "
        "sets at this k (the sets are too alike, or too dense, under the taxonomy). Lower "
        "model.l or model.k, or use a finer taxonomy"
    )


def rt_report(
    config: JobConfig,
    engine: Engine,
    profile: Profile,
    tree: ItemTree,
    blocks: dict[str, Any],
    suppressed: dict[str, int],
    verdict: dict[str, Any],
    loss: dict[str, Any],
    timer: StageTimer,
    k: int,
    l: int,  # noqa: E741
) -> dict[str, Any]:
    """``metrics.json`` of a relational-transaction job.

    Raises:
        InternalError: records out plus records suppressed differ from records in.
    """
    rows_out = int(verdict["rows"] or 0)
    unplaced = sum(suppressed.values())
    items = profile.items
    assert items is not None
    total_items = float(loss["items"] or 0)
    metrics: dict[str, Any] = {
        "rows_in": profile.rows_in,
        "rows_out": rows_out,
        "rows_suppressed": profile.suppressed + unplaced,
        "suppressed_malformed_records": profile.malformed,
        "suppressed_missing_values": profile.missing,
        "suppressed_invalid_values": profile.invalid,
        "suppressed_unknown_items": profile.unknown_items,
        "suppressed_unplaced": unplaced,
        "suppressed_by_reason": suppressed,
        "groups": verdict["groups"],
        "tbuckets": verdict["tbuckets"],
        "min_tbucket": verdict["min_tbucket"],
        "max_frequency_ratio": verdict["max_frequency_ratio"],
        "blocks": int(blocks["blocks"] or 0),
        "block_rows": {"min": blocks["min"], "max": blocks["max"]},
        "infeasible_blocks": int(blocks["infeasible"] or 0),
        "rows_reconciled": int(blocks["reconciled"]),
        "reconcile_chunks": int(blocks["chunks"]),
        "reconcile_last_block_rows": int(blocks["last_block_records"]),
        "items": items.describe() | {"taxonomy_leaves": tree.n_leaves},
        "item_ncp": (float(loss["loss"] or 0.0) / total_items) if total_items else 0.0,
        "model": {"name": "kl_diversity", "k": k, "l": l},
        "algorithm": config.algorithm.model_dump(mode="json"),
        "publish": config.output.publish,
        "max_block_rows": config.partitioning.max_block_rows,
        "seed": config.seed,
        "engine": engine.name,
        "verified": verdict["violations"] == 0,
        "violations": int(verdict["violations"]),
        "verification": {
            key: verdict[key]
            for key in ("small_tbuckets", "frequent_groups", "inconsistent_groups")
        },
        "seconds": timer.seconds,
    }
    assert set(suppressed) == {n for c, n in REASONS.items() if c != 0}
    jobs = engine.jobs_launched()
    if jobs is not None:
        metrics["spark_jobs"] = {"total": sum(jobs.values()), "by_stage": jobs}
    if rows_out + metrics["rows_suppressed"] != profile.rows_in:
        raise InternalError(
            f"row accounting broke: {rows_out} out + {metrics['rows_suppressed']} "
            f"suppressed != {profile.rows_in} in"
        )
    log.info(
        "rt job: %d records in, %d out, %d suppressed, %d groups, %d TBuckets",
        profile.rows_in,
        rows_out,
        metrics["rows_suppressed"],
        verdict["groups"],
        verdict["tbuckets"],
    )
    return metrics
