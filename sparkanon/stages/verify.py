"""Stage ``verify``: every published equivalence class checked against the models.

The published table is grouped by its published quasi-identifier values, not by the
algorithm's classes: two classes that publish the same values form one group, and that
group is what a reader of the table sees. The rows are counted per group and published
sensitive value natively first; only those counts go through Python, where the value gets
its code. Per group, the counts of each value are packed (``(value code << 32) | count``)
into one long and collected, so one aggregation carries the whole distribution); a batch
function turns each batch of groups into :class:`~sparkanon.models.ClassSummaries` and
asks the models (vectorised) which groups fail and how close each comes to its bound. The
driver receives one row: violations, groups, rows, the discernibility metric and the worst
value of every model's bound.

A model that compares each class with the whole table (t-closeness,
:attr:`~sparkanon.models.PrivacyModel.compares_with_table`) is bound here to the
distribution of the *published* rows (one aggregation: a count per sensitive value),
not to the input's: suppressed rows change that distribution, and a reader of the
release can only compute the published one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.attributes.schema import SENS, Schema, SensitiveLevels
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.errors import InternalError
from sparkanon.models import ClassSummaries, ModelSet, SensitiveDomain
from sparkanon.publications import Publication
from sparkanon.stages._common import one_row

PAIR = "_pair"
"""Column packing a sensitive value code and its row count: ``code << 32 | count``."""
_LOW = (1 << 32) - 1


def worst_direction(key: str) -> str:
    """Whether a model's worst value over groups is their minimum or their maximum."""
    return "max" if key.startswith("max_") or ".max_" in key else "min"


def make_code_fn(sensitive: SensitiveLevels, group_columns: Sequence[str]) -> BatchFn:
    """Per published (class, sensitive value) count: the class, the value's code and ``n``.

    It runs on the counts, not on the rows: the published rows are first counted per
    class and sensitive value natively, so Python sees one row per pair, not per row;
    two values that encode alike give two pairs of the same code, which
    :func:`group_summaries` adds up.
    """

    def code(batch: pd.DataFrame) -> pd.DataFrame:
        codes, _, invalid = sensitive.encode(batch[sensitive.name])
        if invalid.any():
            raise InternalError("a published sensitive value is outside the sensitive domain")
        out = batch[list(group_columns)].copy()
        out[SENS] = codes
        out["n"] = batch["n"].to_numpy(dtype=np.int64)
        return out

    return code


def make_pack_fn(group_columns: Sequence[str]) -> BatchFn:
    """Pack ``(value code, count)`` of each group and value into one long."""

    def pack(batch: pd.DataFrame) -> pd.DataFrame:
        out = batch[list(group_columns)].copy()
        n = batch["n"].to_numpy(dtype=np.int64)
        out[PAIR] = (batch[SENS].to_numpy(dtype=np.int64) << 32) | n
        out["n"] = n
        return out

    return pack


def group_summaries(
    sizes: np.ndarray, pairs: Sequence[Sequence[int]], sensitive: SensitiveLevels
) -> ClassSummaries:
    """Class summaries of groups from their packed ``(code, count)`` lists."""
    n_values = len(sensitive.values)
    counts = np.zeros((len(sizes), n_values), dtype=np.int64)
    lengths = np.array([len(p) for p in pairs], dtype=np.int64)
    flat = np.concatenate([np.asarray(p, dtype=np.int64) for p in pairs]) if len(pairs) else []
    flat = np.asarray(flat, dtype=np.int64)
    rows = np.repeat(np.arange(len(sizes)), lengths)
    np.add.at(counts, (rows, flat >> 32), flat & _LOW)
    return ClassSummaries(np.asarray(sizes, dtype=np.int64), counts, sensitive.declared_level_of)


def make_check_fn(
    models: ModelSet, sensitive: SensitiveLevels, worst_keys: Sequence[str]
) -> BatchFn:
    """Per batch of groups: violations, groups, rows, ``sum size^2`` and the worst values."""

    def check(groups: pd.DataFrame) -> pd.DataFrame:
        sizes = groups["size"].to_numpy(dtype=np.int64)
        s = group_summaries(sizes, list(groups["pairs"]), sensitive)
        ok = models.satisfied(s)
        row: dict[str, Any] = {
            "violations": int((~ok).sum()),
            "groups": len(sizes),
            "rows": int(sizes.sum()),
            "dm": float((sizes.astype(float) ** 2).sum()),
        }
        worst = models.worst(s) if len(sizes) else {}
        for key in worst_keys:
            row[key] = float(worst.get(key, np.nan))
        return pd.DataFrame([row])

    return check


def published_domain(engine: Engine, per_value: Table, domain: SensitiveDomain) -> SensitiveDomain:
    """The sensitive attribute over the published rows (a count per value code).

    Args:
        engine: the engine.
        per_value: published rows counted per class key and value code (``n``).
        domain: the input's sensitive domain (values, levels, order, name).

    Returns:
        ``domain`` with the published rows' counts.
    """
    totals = engine.collect_small(
        engine.aggregate(per_value, [SENS], {"n": ("sum", "n")}), len(domain.values) + 1
    )
    counts = np.zeros(len(domain.values), dtype=np.int64)
    if len(totals):
        codes = totals[SENS].to_numpy(dtype=np.int64)
        counts[codes] = totals["n"].to_numpy(dtype=np.int64)
    return replace(domain, counts=counts)


def verify(
    engine: Engine,
    publication: Publication,
    schema: Schema,
    models: ModelSet,
    worst_keys: Sequence[str],
    domain: SensitiveDomain | None = None,
) -> dict[str, Any]:
    """Group the published rows by their equivalence-class key and check every group.

    Args:
        engine: the engine.
        publication: the publication (its class table and class key).
        schema: the encoded schema (the sensitive domain).
        models: the bound models.
        worst_keys: the names of the models' worst values to report.
        domain: the input's sensitive domain; required when a model compares
            classes with the whole table, which is then bound again to the
            published rows' distribution (see the module docstring).

    Returns:
        ``violations`` (groups failing a model), ``groups``, ``rows``, ``dm`` (the
        sum of squared group sizes) and the worst value of each key.
    """
    published = publication.rows
    qi = list(publication.class_key)
    types = dict(engine.schema_of(published))
    group_cols = [(c, types[c]) for c in qi]
    sens = schema.sensitive.name
    per_raw = engine.aggregate(published, qi + [sens], {"n": ("count", sens)})
    per_value = engine.map_batches(
        per_raw, make_code_fn(schema.sensitive, qi), group_cols + [(SENS, "long"), ("n", "long")]
    )
    if models.compares_with_table:
        if domain is None:
            raise InternalError("verify needs the sensitive domain to bind t-closeness")
        per_value = engine.persist(per_value)
        reference = published_domain(engine, per_value, domain)
        if reference.rows:
            models = models.bind(reference)
    packed = engine.map_batches(
        per_value, make_pack_fn(qi), group_cols + [(PAIR, "long"), ("n", "long")]
    )
    groups = engine.aggregate(packed, qi, {"size": ("sum", "n"), "pairs": ("collect", PAIR)})
    columns = [("violations", "long"), ("groups", "long"), ("rows", "long"), ("dm", "double")]
    columns += [(k, "double") for k in worst_keys]
    checked = engine.map_batches(
        groups, make_check_fn(models, schema.sensitive, worst_keys), columns
    )
    aggs: dict[str, tuple[str, str]] = {
        "violations": ("sum", "violations"),
        "groups": ("sum", "groups"),
        "rows": ("sum", "rows"),
        "dm": ("sum", "dm"),
    }
    aggs |= {k: (worst_direction(k), k) for k in worst_keys}
    verdict = one_row(engine, checked, aggs)
    if models.compares_with_table:
        engine.unpersist(per_value)
    return verdict
