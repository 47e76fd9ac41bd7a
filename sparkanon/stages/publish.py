"""Stage ``publish``: every row's quasi-identifiers replaced by its class's published values."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from sparkanon.attributes.kinds import ContinuousKind
from sparkanon.attributes.schema import CLASS, Schema
from sparkanon.engine.base import Engine, Table
from sparkanon.stages._common import StageTimer
from sparkanon.stages.summarise import generalized_column


def published_columns(
    schema: Schema, passthrough_types: Sequence[tuple[str, str]], generalized: bool = False
) -> list[tuple[str, str]]:
    """Schema of the published table: decoded quasi-identifiers, sensitive value, kept columns.

    With ``generalized`` every quasi-identifier is a string (a range, a
    taxonomy node, ``*``...).
    """
    cols = [
        (k.name, "double" if isinstance(k, ContinuousKind) and not generalized else "string")
        for k in schema.kinds
    ]
    return cols + list(passthrough_types)


def make_publish_fn(
    schema: Schema, passthrough: Sequence[str], generalized: bool = False
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Replace codes by the published values of their class centroid.

    With ``generalized`` the batch holds the class's generalized values
    (``_g{i}``) instead of centroid codes, and those are published.
    """

    def publish(batch: pd.DataFrame) -> pd.DataFrame:
        out = {}
        for i, (c, kind) in enumerate(zip(schema.code_columns, schema.kinds, strict=True)):
            if generalized:
                out[kind.name] = batch[generalized_column(i)].astype(object).to_numpy()
            else:
                out[kind.name] = kind.decode(batch[c].to_numpy())
        frame = pd.DataFrame(out)
        for c in passthrough:
            frame[c] = batch[c].to_numpy()
        return frame

    return publish


def publish(
    engine: Engine,
    placed: Table,
    summaries: Table,
    schema: Schema,
    passthrough: list[str],
    pub_cols: list[tuple[str, str]],
    timer: StageTimer,
    tmp_path: str | None,
    fmt: str,
    generalized: bool = False,
) -> Table:
    """Replace each row's codes by its class centroid; write to ``tmp_path`` if given.

    With ``generalized`` (``output.publish: generalized``) each row gets its
    class's generalized values (ranges, taxonomy nodes, ``*``) instead.
    Two classes that publish the same values form one published group, which
    still satisfies the model because every model here is monotonic.
    """
    with timer.stage("publish"):
        rows_only = engine.select(placed, [CLASS] + passthrough)
        per_class = (
            [generalized_column(i) for i in range(len(schema.kinds))]
            if generalized
            else schema.code_columns
        )
        centroids = engine.select(summaries, [CLASS] + per_class)
        published = engine.map_batches(
            engine.join(rows_only, centroids, [CLASS]),
            make_publish_fn(schema, passthrough, generalized),
            pub_cols,
        )
        if tmp_path is None:
            return engine.persist(published)
        engine.write_table(published, f"{tmp_path}/data", fmt)
        return engine.read_table(f"{tmp_path}/data", fmt)
