"""The relational-transaction family (Gong et al. 2016): a set-valued sensitive attribute.

The runner reads (joining a long item table when configured) and profiles (the
quasi-identifiers and the items); then the item taxonomy -> encode (sets as leaf ids) ->
partition (Mondrian-style blocks on the relational quasi-identifiers) -> cluster (APA
or PAA per block) -> reconcile (the suppressed records of every block in chunks, then
as one more block) -> publish (RT and TT, to the staging location). Verification checks
(k,l)-diversity by aggregations; the runner commits both tables or neither. The driver
holds statistics only (per item, per block, per reason), never records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sparkanon.algorithms.cuts import CutPolicy
from sparkanon.algorithms.transaction._result import REASONS
from sparkanon.attributes.dates import TemporalFormat, TemporalKind
from sparkanon.attributes.itemsets import ItemTree
from sparkanon.attributes.schema import CLASS
from sparkanon.config import ItemsetConfig, JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.errors import ConfigError
from sparkanon.families.base import Anonymized, Family, Run, Verdict
from sparkanon.families.transaction.are import AreSetup, measure_are
from sparkanon.families.transaction.cluster import (
    ITEM_LOSS,
    N_ITEMS,
    RTRun,
    cluster_rt,
    reconcile_rt,
)
from sparkanon.families.transaction.publish import publish_rt, rt_column_types, verify_rt
from sparkanon.families.transaction.rules import transaction_problems
from sparkanon.metrics.ncp import fully_lost_mean
from sparkanon.per_block.plan import TreeCuts, plan_job_top
from sparkanon.stages._common import log, one_row
from sparkanon.stages.encode import encode_input
from sparkanon.stages.items import ITEMS
from sparkanon.stages.profile import Profile

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


def rt_tree_cuts(config: JobConfig, k: int, l: int) -> TreeCuts:  # noqa: E741
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

    return TreeCuts(policy, feasible, 1)


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


@dataclass(frozen=True)
class _State:
    """What verify and measure read: the model's parameters, the taxonomy, the records."""

    k: int
    l: int  # noqa: E741
    tree: ItemTree
    blocks: dict[str, Any]
    reasons: dict[str, int]
    records: Table
    rows: Table
    placed: Table
    qi_types: tuple[tuple[str, str], ...]
    readers: dict[str, TemporalFormat]
    distinct_sets: int


class TransactionFamily(Family):
    """Relational-transaction data (Gong et al. 2016): (k,l)-diversity by PAA or APA, RT and TT."""

    name = "transaction"
    set_valued = True

    def config_problems(self, config: JobConfig) -> list[str]:  # noqa: D102
        return transaction_problems(config, self.algorithms)

    def prepare(self, config: JobConfig) -> JobConfig:  # noqa: D102
        return with_rt_defaults(config)

    def anonymize(self, run: Run) -> Anonymized:  # noqa: D102
        engine, config, timer, schema, profile = (
            run.engine,
            run.config,
            run.timer,
            run.schema,
            run.profile,
        )
        sens = config.sensitive
        assert isinstance(sens, ItemsetConfig)
        model = config.model[0]
        k, l = int(model.k), int(model.l)  # noqa: E741
        tree = item_tree(sens, profile)
        codes = tree.leaf_codes()
        encoded, enc_cols = encode_input(engine, config, run.raw, schema, timer, codes)
        distinct = one_row(engine, encoded, {"sets": ("nunique", ITEMS)})["sets"]
        check_rt_feasible(config, profile.usable, int(distinct), k, l)
        part = rt_tree_cuts(config, k, l)
        usable = profile.usable
        plan = plan_job_top(engine, config, encoded, schema, part, usable, timer)
        rt = RTRun(schema, tree, config.algorithm.name, k, l)
        clustered, blocks = cluster_rt(engine, encoded, enc_cols, plan, rt, timer, records=usable)
        chunk_rows = config.partitioning.reconcile_rows
        unplaced = int(blocks["unplaced"])
        rows, reasons, rounds = reconcile_rt(
            engine, clustered, enc_cols, rt, unplaced, chunk_rows, timer
        )
        blocks = blocks | {"reconciled": unplaced} | rounds
        placed = engine.where(rows, CLASS, ">=", 0)
        cached = [encoded, clustered, rows]
        kinds = {a.name: a.kind for a in config.quasi_identifiers}
        published_types = rt_column_types(run.raw.passthrough_types, kinds)
        readers = {k.name: k.reader for k in schema.kinds if isinstance(k, TemporalKind)}
        publication = publish_rt(
            engine,
            placed,
            published_types,
            tree,
            sens.name,
            sens.separator,
            timer,
            run.staging(),
            config.output.format,
            run.key,
            run.raw.kept,
            readers,
        )
        assert set(reasons) == {n for c, n in REASONS.items() if c != 0}
        qi_types = tuple((c, t) for c, t in published_types if c in kinds)
        state = _State(
            k, l, tree, blocks, reasons, encoded, rows, placed, qi_types, readers, int(distinct)
        )
        return Anonymized(publication, {"unplaced": sum(reasons.values())}, state, cached)

    def verify(self, run: Run, done: Anonymized) -> Verdict:  # noqa: D102
        s: _State = done.state
        sens = run.config.sensitive
        found = verify_rt(run.engine, done.publication, sens.name, run.config.model[0])
        return Verdict(
            violations=int(found["violations"]),
            rows=int(found["rows"]),
            groups=int(found["groups"]),
            failure=(
                f"violations of (k,l)-diversity (k={s.k}, l={s.l}): "
                f"{found['small_tbuckets']} TBuckets below k, {found['frequent_groups']} "
                f"groups with a set above |G|/l, {found['inconsistent_groups']} groups whose "
                "RT and TT sizes differ"
            ),
            details=found,
        )

    def measure(self, run: Run, done: Anonymized, verdict: Verdict) -> dict[str, Any]:  # noqa: D102
        s: _State = done.state
        engine, config, profile = run.engine, run.config, run.profile
        found, blocks = verdict.details, s.blocks
        loss = one_row(engine, s.placed, {"loss": ("sum", ITEM_LOSS), "items": ("sum", N_ITEMS)})
        total_items = float(loss["items"])
        item_ncp = (float(loss["loss"]) / total_items) if total_items else 0.0
        items = profile.items
        assert items is not None
        log.info(
            "rt job: %d records in, %d out, %d groups, %d TBuckets",
            profile.rows_in,
            verdict.rows,
            verdict.groups,
            found["tbuckets"],
        )
        measured = {
            "suppressed_by_reason": s.reasons,
            "groups": verdict.groups,
            "tbuckets": found["tbuckets"],
            "min_tbucket": found["min_tbucket"],
            "max_frequency_ratio": found["max_frequency_ratio"],
            "blocks": int(blocks["blocks"]),
            "block_rows": {"min": blocks["min"], "max": blocks["max"]},
            "infeasible_blocks": int(blocks["infeasible"]),
            "rows_reconciled": int(blocks["reconciled"]),
            "reconcile_chunks": int(blocks["chunks"]),
            "reconcile_last_block_rows": int(blocks["last_block_records"]),
            "items": items.describe() | {"taxonomy_leaves": s.tree.n_leaves},
            "item_ncp": item_ncp,
            "loss_with_suppressed": {
                "item_ncp": item_ncp_with_suppressed(engine, s.rows, item_ncp, loss)
            },
            "max_block_rows": config.partitioning.max_block_rows,
            "verification": {
                key: found[key]
                for key in ("small_tbuckets", "frequent_groups", "inconsistent_groups")
            },
        }
        are_cfg = config.metrics.are
        if are_cfg.enabled and verdict.rows > 0:
            seed = config.seed if are_cfg.seed is None else are_cfg.seed
            setup = AreSetup(
                s.qi_types, s.tree, are_cfg, seed, profile.usable, s.readers, s.distinct_sets
            )
            measured["are"] = measure_are(engine, s.records, s.placed, setup, run.timer)
        return measured

    def empty_hint(self, metrics: dict[str, Any], config: JobConfig) -> str:  # noqa: D102
        return rt_empty_hint(metrics, int(config.model[0].l))


def item_ncp_with_suppressed(
    engine: Engine, rows: Table, item_ncp: float, loss: dict[str, Any]
) -> float:
    """Item NCP counting every item of a suppressed record as fully lost (NCP 1).

    Over the records that reached the algorithm (placed and suppressed); records dropped
    before it (malformed, missing or invalid values) have no parsed item set to weigh.
    """
    lost = one_row(engine, engine.where(rows, CLASS, "<", 0), {"items": ("sum", N_ITEMS)})
    return fully_lost_mean(item_ncp, float(loss["items"]), float(lost["items"]), 1.0)


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
