"""Stage ``encode``: one code per quasi-identifier and the sensitive value, cached once.

Rows dropped here are exactly those the profile counted: malformed records, rows
holding a missing value, with ``input.on_invalid: drop``, rows holding a value
that cannot be encoded (the quasi-identifiers' checks of the profile's spec,
:func:`sparkanon.stages.profile.profile_spec`) and, for a set-valued attribute,
records whose every item is unknown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from sparkanon.attributes.checks import ValueCheck
from sparkanon.attributes.dates import TemporalKind, TimestampKind
from sparkanon.attributes.kinds import ContinuousKind
from sparkanon.attributes.schema import LEVEL, RID, SENS, Schema
from sparkanon.attributes.text import TrimmedText, missing_mask
from sparkanon.config import JobConfig
from sparkanon.engine.base import BatchFn, Engine, Table
from sparkanon.io import MALFORMED
from sparkanon.stages._common import StageTimer
from sparkanon.stages.items import ITEMS, ItemsSpec, make_set_encoder, set_missing
from sparkanon.stages.profile import profile_spec
from sparkanon.stages.read import RawInput


def encoded_columns(schema: Schema, sets: bool = False) -> list[tuple[str, str]]:
    """Schema of the encoded table, without the pass-through columns.

    Args:
        schema: the encoded schema.
        sets: the sensitive attribute is a set of items (encoded in :data:`ITEMS`
            instead of a value code and a level).
    """
    cols = [(RID, "long")]
    cols += [(c, k.code_type) for c, k in zip(schema.code_columns, schema.kinds, strict=True)]
    cols += [(ITEMS, "binary")] if sets else [(SENS, "long"), (LEVEL, "long")]
    return cols


def make_encode_fn(
    schema: Schema,
    passthrough: Sequence[str],
    missing_tokens: frozenset[str],
    checks: Mapping[str, ValueCheck] | None = None,
    items: tuple[ItemsSpec, Mapping[str, int]] | None = None,
) -> BatchFn:
    """Encode a batch: drop malformed records and rows with a missing value, add codes.

    Pass-through columns are kept as they are.

    With ``checks`` (each quasi-identifier's value check, for ``input.on_invalid:
    drop``) rows holding a value its column's check rejects are dropped too. With
    ``items`` (the set column's spec and item -> leaf id) the sensitive column is
    a set, encoded into :data:`~sparkanon.stages.items.ITEMS`; a record whose every
    item is unknown (dropped with ``on_unknown_item: drop``) is dropped as well
    (:func:`~sparkanon.stages.items.emptied_records`, counted by the profile).
    """
    columns = schema.qi_names + ([schema.sensitive.name] if items is None else [])
    encode_sets = None if items is None else make_set_encoder(items[1], items[0])

    def encode(batch: pd.DataFrame) -> pd.DataFrame:
        texts = TrimmedText(batch)
        keep = ~missing_mask(texts, columns, missing_tokens).any(axis=1).to_numpy()
        if items is not None:
            keep &= ~set_missing(batch[items[0].column], items[0])
        if MALFORMED in batch.columns:
            keep &= batch[MALFORMED].to_numpy() != 1
        texts = texts.rows(keep)
        if checks is not None:
            bad = np.zeros(len(texts.batch), dtype=bool)
            for c, check in checks.items():
                bad |= check.invalid(texts, c)
            texts = texts.rows(~bad)
        rows = texts.batch.reset_index(drop=True)
        out = {RID: rows[RID].to_numpy(dtype=np.int64)}
        for col, kind in zip(schema.code_columns, schema.kinds, strict=True):
            numeric = isinstance(kind, TemporalKind) or (  # dates parse their own values
                isinstance(kind, ContinuousKind) and texts.numeric(kind.name)
            )
            if numeric:
                codes, _ = kind.encode(rows[kind.name])
            else:  # an encoder takes each value alone: once per distinct text
                codes, _ = texts.per_value(kind.name, kind.encode)
            out[col] = codes
        emptied = None
        if encode_sets is not None:
            out[ITEMS], emptied = encode_sets(rows[items[0].column])
        else:
            out[SENS], out[LEVEL], _ = texts.per_value(
                schema.sensitive.name, schema.sensitive.encode
            )
        frame = pd.DataFrame(out)
        for c in passthrough:
            frame[c] = rows[c].to_numpy()
        if emptied is not None and emptied.any():  # every item unknown: suppressed
            frame = frame[~emptied].reset_index(drop=True)
        return frame

    return encode


def encode_input(
    engine: Engine,
    config: JobConfig,
    raw: RawInput,
    schema: Schema,
    timer: StageTimer,
    item_codes: Mapping[str, int] | None = None,
) -> tuple[Table, list[tuple[str, str]]]:
    """Encode the usable rows and cache them (materialised inside the stage's timer).

    Args:
        engine: the engine.
        config: the job config.
        raw: the input.
        schema: the encoded schema.
        timer: the stage timer.
        item_codes: item -> leaf id, for a set-valued sensitive attribute.

    Returns:
        The encoded table and its schema.
    """
    zones = {k.name: k.zone for k in schema.kinds if isinstance(k, TimestampKind)}
    spec = profile_spec(config, zones=zones)
    sets = spec.items is not None
    columns = encoded_columns(schema, sets) + raw.passthrough_types
    with timer.stage("encode"):
        fn = make_encode_fn(
            schema,
            raw.passthrough,
            spec.missing_tokens,
            spec.checks if spec.drop_invalid else None,
            None if spec.items is None else (spec.items, item_codes or {}),
        )
        # Rows that carry whole item sets go to disk: a partition of them can outgrow the
        # memory a task may cache in (10M baskets ran Spark's default heap out of it).
        encoded = engine.persist(
            engine.map_batches(raw.table, fn, columns), materialize=True, disk=sets
        )
    return encoded, columns
