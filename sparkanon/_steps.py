"""Pure pandas functions the pipeline hands to the engine (run on executors).

Each function takes a batch or a group of rows and returns a frame; none
touches Spark. They are built by small factories that close over the schema,
so the same function object runs on the local and the Spark engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sparkanon._blocking import BlockTree, choose_cut
from sparkanon.algorithms import BlockContext, cluster_block, place_rows
from sparkanon.attributes.kinds import ContinuousKind, DiscreteKind, Kind
from sparkanon.attributes.schema import BLOCK, CLASS, LEVEL, RID, SENS, Schema, SensitiveLevels
from sparkanon.attributes.semantic import is_code
from sparkanon.io import MALFORMED
from sparkanon.metrics.entropy import class_level_entropy, sensitive_entropy
from sparkanon.metrics.ncp import class_ncp
from sparkanon.models.base import HPKAnonymity

CLASS_SHIFT = 20
"""A global class id is ``block << CLASS_SHIFT | local class``."""

PROFILE_COLUMNS = [
    ("stat", "string"),
    ("column", "string"),
    ("value", "string"),
    ("n", "long"),
    ("lo", "double"),
    ("hi", "double"),
]
UNKNOWN_EXAMPLES = 5
"""Distinct bad values kept per column and batch, for error messages."""


@dataclass(frozen=True)
class ProfileSpec:
    """What the profiling pass checks.

    Attributes:
        qi: quasi-identifier columns with their kind (``continuous``...).
        known: for discrete columns whose domain is known before profiling,
            the allowed values.
        sensitive: the sensitive column.
        sensitive_values: values that belong to a level.
        missing_tokens: tokens meaning "missing".
        code_lengths: for semantic columns, the digits every code must have.
        drop_invalid: ``input.on_invalid: drop``: rows holding a quasi-identifier
            value that cannot be encoded are suppressed (and left out of the
            ranges and domains) instead of failing the job.
    """

    qi: tuple[tuple[str, str], ...]
    known: dict[str, frozenset[str]]
    sensitive: str
    sensitive_values: frozenset[str]
    missing_tokens: frozenset[str]
    code_lengths: dict[str, int] = field(default_factory=dict)
    drop_invalid: bool = False


def invalid_masks(rows: pd.DataFrame, spec: ProfileSpec) -> dict[str, np.ndarray]:
    """Per quasi-identifier, whether each (non-missing) row's value cannot be encoded.

    A continuous value that is not a finite number, a semantic value that is not
    a code of the column's length, a value of a declared ordinal, categorical or
    nominal domain that is not in it. The profile and the encoder both call this,
    so the rows ``on_invalid: drop`` suppresses are the rows the profile counted.
    """
    out: dict[str, np.ndarray] = {}
    for c, kind in spec.qi:
        text = rows[c].astype("string").str.strip()
        if kind == "continuous":
            numeric = pd.to_numeric(text, errors="coerce").astype("Float64")
            out[c] = ~np.isfinite(numeric.to_numpy(dtype=float, na_value=np.nan))
        elif kind == "semantic":
            out[c] = ~is_code(text, spec.code_lengths[c])
        elif c in spec.known:
            out[c] = ~text.isin(list(spec.known[c])).to_numpy(dtype=bool)
        else:
            out[c] = np.zeros(len(rows), dtype=bool)
    return out


def missing_mask(
    batch: pd.DataFrame, columns: Sequence[str], tokens: frozenset[str]
) -> pd.DataFrame:
    """Per column, whether each row's value is null or a missing token (after trimming)."""
    out = {}
    for c in columns:
        s = batch[c]
        text = s.astype("string").str.strip()
        out[c] = (s.isna() | text.isin(list(tokens))).to_numpy(dtype=bool)
    return pd.DataFrame(out, index=batch.index)


def _stat(
    stat: str, column: str, value: str | None, n: int, lo: float = np.nan, hi: float = np.nan
) -> dict:
    return {"stat": stat, "column": column, "value": value, "n": int(n), "lo": lo, "hi": hi}


def make_profile_fn(spec: ProfileSpec) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per-batch accumulator of input statistics (merged by an aggregation).

    The rows it emits: ``rows``; ``malformed_records`` (CSV records of the wrong
    width, :data:`sparkanon.io.MALFORMED`; left out of every other statistic);
    ``missing`` per column; ``missing_rows``;
    ``range`` (count, min, max) per continuous column; ``nonnumeric`` and
    ``unknown`` examples per column; ``malformed`` examples (and their row
    counts) per semantic column, values that are not codes of the column's
    length; ``domain`` counts of undeclared nominal columns and of the
    sensitive column.
    """
    columns = [c for c, _ in spec.qi] + [spec.sensitive]

    def profile(batch: pd.DataFrame) -> pd.DataFrame:
        rows = [_stat("rows", "*", None, len(batch))]
        if MALFORMED in batch.columns:
            bad = batch[MALFORMED].to_numpy() == 1
            rows.append(_stat("malformed_records", "*", None, int(bad.sum())))
            batch = batch[~bad]
        miss = missing_mask(batch, columns, spec.missing_tokens)
        any_missing = miss.any(axis=1).to_numpy()
        rows.append(_stat("missing_rows", "*", None, int(any_missing.sum())))
        for c in columns:
            rows.append(_stat("missing", c, None, int(miss[c].sum())))
        valid = batch[~any_missing]
        invalid = invalid_masks(valid, spec)
        any_invalid = np.zeros(len(valid), dtype=bool)
        for c, kind in spec.qi:
            bad = invalid[c]
            any_invalid |= bad
            if bad.any():
                stat = {"continuous": "nonnumeric", "semantic": "malformed"}.get(kind, "unknown")
                text = valid[c].astype("string").str.strip() if kind != "continuous" else valid[c]
                examples = text[bad].astype(str).value_counts().head(UNKNOWN_EXAMPLES)
                rows += [_stat(stat, c, str(v), n) for v, n in examples.items()]
                rows.append(_stat("invalid", c, None, int(bad.sum())))
        rows.append(_stat("invalid_rows", "*", None, int(any_invalid.sum())))
        if spec.drop_invalid:
            valid = valid[~any_invalid]
        for c, kind in spec.qi:
            if kind == "continuous":
                text = valid[c].astype("string").str.strip()
                numeric = pd.to_numeric(text, errors="coerce").astype("Float64")
                good = numeric.to_numpy(dtype=float, na_value=np.nan)
                good = good[np.isfinite(good)]
                if good.size:
                    rows.append(
                        _stat("range", c, None, good.size, float(good.min()), float(good.max()))
                    )
            elif kind != "semantic" and c not in spec.known:
                text = valid[c].astype("string").str.strip()
                rows += [_stat("domain", c, str(v), n) for v, n in text.value_counts().items()]
        text = valid[spec.sensitive].astype("string").str.strip()
        counts = text.value_counts()
        for v, n in counts.items():
            stat = "domain" if v in spec.sensitive_values else "unknown"
            rows.append(_stat(stat, spec.sensitive, str(v), n))
        return pd.DataFrame(rows, columns=[n for n, _ in PROFILE_COLUMNS])

    return profile


def encoded_columns(schema: Schema) -> list[tuple[str, str]]:
    """Schema of the encoded table, without the pass-through columns."""
    cols = [(RID, "long")]
    cols += [(c, k.code_type) for c, k in zip(schema.code_columns, schema.kinds, strict=True)]
    cols += [(SENS, "long"), (LEVEL, "long")]
    return cols


def make_encode_fn(
    schema: Schema,
    passthrough: Sequence[str],
    missing_tokens: frozenset[str],
    drop_invalid: ProfileSpec | None = None,
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Encode a batch: drop malformed records and rows with a missing value, add codes.

    Pass-through columns are kept as they are.

    With ``drop_invalid`` (the profile's spec, for ``input.on_invalid: drop``)
    rows holding a value :func:`invalid_masks` rejects are dropped too.
    """
    columns = schema.qi_names + [schema.sensitive.name]

    def encode(batch: pd.DataFrame) -> pd.DataFrame:
        keep = ~missing_mask(batch, columns, missing_tokens).any(axis=1).to_numpy()
        if MALFORMED in batch.columns:
            keep &= batch[MALFORMED].to_numpy() != 1
        if drop_invalid is not None:
            present = np.flatnonzero(keep)
            bad = np.zeros(len(present), dtype=bool)
            for mask in invalid_masks(batch.iloc[present], drop_invalid).values():
                bad |= mask
            keep[present[bad]] = False
        rows = batch[keep].reset_index(drop=True)
        out = {RID: rows[RID].to_numpy(dtype=np.int64)}
        for col, kind in zip(schema.code_columns, schema.kinds, strict=True):
            raw = rows[kind.name]
            numeric = isinstance(kind, ContinuousKind) and pd.api.types.is_numeric_dtype(raw)
            codes, _ = kind.encode(raw if numeric else raw.astype("string").str.strip())
            out[col] = codes
        s, lvl, _ = schema.sensitive.encode(rows[schema.sensitive.name])
        out[SENS] = s
        out[LEVEL] = lvl
        frame = pd.DataFrame(out)
        for c in passthrough:
            frame[c] = rows[c].to_numpy()
        return frame

    return encode


def bins_matrix(frame: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Blocking bins of every quasi-identifier, shape ``(n_attributes, n_rows)``."""
    if len(frame) == 0:
        return np.zeros((len(schema.kinds), 0), dtype=np.int64)
    return np.vstack(
        [
            k.bins(frame[c].to_numpy())
            for c, k in zip(schema.code_columns, schema.kinds, strict=True)
        ]
    )


def make_block_stats_fn(schema: Schema, tree: BlockTree) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Route rows to their block and emit ``_block``, ``_s`` and ``_lvl``."""

    def stats(batch: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {
                BLOCK: tree.assign(bins_matrix(batch, schema)),
                SENS: batch[SENS].to_numpy(),
                LEVEL: batch[LEVEL].to_numpy(),
            }
        )

    return stats


HISTOGRAM_COLUMNS = [(BLOCK, "long"), ("_attr", "long"), ("_bin", "long"), ("n", "long")]


def make_histogram_fn(
    schema: Schema, tree: BlockTree, blocks: frozenset[int]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Partial histograms ``(_block, _attr, _bin, n)`` of every attribute of the blocks being cut.

    Counts are pre-aggregated per batch (a mergeable accumulator), so the
    engine only sums them.
    """
    wanted = np.fromiter(blocks, dtype=np.int64)

    def histogram(batch: pd.DataFrame) -> pd.DataFrame:
        bins = bins_matrix(batch, schema)
        block = tree.assign(bins)
        keep = np.isin(block, wanted)
        parts = []
        for a in range(bins.shape[0]):
            frame = pd.DataFrame({BLOCK: block[keep], "_bin": bins[a, keep]})
            counts = frame.groupby([BLOCK, "_bin"], sort=False).size().reset_index(name="n")
            counts["_attr"] = a
            parts.append(counts)
        if not parts:
            return pd.DataFrame({n: [] for n, _ in HISTOGRAM_COLUMNS})
        return pd.concat(parts, ignore_index=True)[[n for n, _ in HISTOGRAM_COLUMNS]]

    return histogram


def make_cut_fn(
    schema: Schema, excluded: dict[int, set[int]], min_side: int
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Choose one block's cut from its merged histograms ``(_block, _attr, _bin, n)``.

    Args:
        schema: the encoded schema.
        excluded: per block, attributes whose cut was undone before.
        min_side: rows each side must keep.

    Returns:
        A function emitting ``(_block, attr, cut, ok)``; ``ok`` is 0 when no
        attribute can be cut.
    """

    def choose(hist: pd.DataFrame) -> pd.DataFrame:
        block = int(hist[BLOCK].iloc[0])
        per_attr = {
            int(a): g.groupby("_bin")["n"].sum() for a, g in hist.groupby("_attr", sort=True)
        }
        chosen = choose_cut(schema.kinds, per_attr, excluded.get(block, set()), min_side)
        attr, cut = chosen if chosen is not None else (-1, -1)
        return pd.DataFrame(
            {BLOCK: [block], "attr": [attr], "cut": [cut], "ok": [int(chosen is not None)]}
        )

    return choose


def make_assign_fn(
    schema: Schema, tree: BlockTree, columns: Sequence[str]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Add the ``_block`` column to encoded rows."""

    def assign(batch: pd.DataFrame) -> pd.DataFrame:
        out = batch[list(columns)].copy()
        out[BLOCK] = tree.assign(bins_matrix(batch, schema))
        return out

    return assign


def global_class(block: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Global class id of local labels (``-1`` stays ``-1``)."""
    return np.where(local >= 0, (block.astype(np.int64) << CLASS_SHIFT) | local, -1)


def make_cluster_fn(
    ctx: BlockContext, algorithm: str, seed: int
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Cluster one block; add ``_class`` (``-1`` for rows the block cannot place)."""

    def cluster(block: pd.DataFrame) -> pd.DataFrame:
        block_id = int(block[BLOCK].iloc[0])
        local = cluster_block(block, ctx, algorithm, seed, block_id)
        return block.assign(**{CLASS: global_class(block[BLOCK].to_numpy(), local)})

    return cluster


def make_centre_fn(schema: Schema) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Centroid codes of one block's placed rows: the block's centre for reconciliation."""

    def centre(block: pd.DataFrame) -> pd.DataFrame:
        out = {BLOCK: [int(block[BLOCK].iloc[0])]}
        for c, kind in zip(schema.code_columns, schema.kinds, strict=True):
            out[c] = [kind.centroid(block[c].to_numpy())]
        return pd.DataFrame(out)

    return centre


def make_nearest_block_fn(
    schema: Schema, centres: pd.DataFrame, columns: Sequence[str]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Add ``_target``: the feasible block whose centre is nearest (eq. 18 distance)."""
    blocks = centres[BLOCK].to_numpy(dtype=np.int64)
    order = np.argsort(blocks)
    blocks = blocks[order]
    centre_codes = [centres[c].to_numpy()[order] for c in schema.code_columns]

    def nearest(batch: pd.DataFrame) -> pd.DataFrame:
        dist = np.zeros((len(batch), len(blocks)))
        for c, kind, cc in zip(schema.code_columns, schema.kinds, centre_codes, strict=True):
            codes = batch[c].to_numpy()
            for j, centre in enumerate(cc):
                dist[:, j] += kind.weight * kind.distance_to(codes, centre)
        out = batch[list(columns)].copy()
        out["_target"] = blocks[np.argmin(dist, axis=1)] if len(blocks) else -1
        return out

    return nearest


def make_reconcile_fn(
    ctx: BlockContext, algorithm: str, seed: int, columns: Sequence[str]
) -> Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]:
    """Place rows sent to a block into that block's classes (its leftover rule)."""

    def reconcile(placed: pd.DataFrame, incoming: pd.DataFrame) -> pd.DataFrame:
        target = int(incoming["_target"].iloc[0])
        out = incoming[list(columns)].copy()
        if len(placed) == 0:
            out[CLASS] = -1
            return out
        local_of = placed[CLASS].to_numpy() & ((1 << CLASS_SHIFT) - 1)
        labels = place_rows(placed, local_of, incoming, ctx, algorithm, seed, target)
        out[BLOCK] = target
        out[CLASS] = global_class(np.full(len(out), target), labels)
        return out

    return reconcile


def generalized_column(i: int) -> str:
    """Name of the summary column holding quasi-identifier ``i``'s generalized value."""
    return f"_g{i}"


def summary_columns(schema: Schema, generalized: bool = False) -> list[tuple[str, str]]:
    """Schema of the per-class summary table.

    Args:
        schema: the encoded schema.
        generalized: also hold each class's generalized values (``_g{i}``,
            strings) for ``output.publish: generalized``.
    """
    cols = [(CLASS, "long"), ("size", "long"), ("n_values", "long"), ("n_levels", "long")]
    cols += [("hec", "double"), ("ent", "double"), ("loss", "double")]
    cols += [(c, k.code_type) for c, k in zip(schema.code_columns, schema.kinds, strict=True)]
    cols += [("ncp", "double")]
    if generalized:
        cols += [(generalized_column(i), "string") for i in range(len(schema.kinds))]
    return cols


def class_summary(
    codes: list[np.ndarray],
    kinds: Sequence[Kind],
    sens: np.ndarray,
    levels: np.ndarray,
    sensitive: SensitiveLevels,
    base: float,
) -> dict:
    """Centroid, InfoLoss (eq. 20), HEC (eq. 2) and Ent (seed 003 eq. 14) of one class.

    Each attribute's loss is ``kind.loss`` (the distance of the rows to the
    centroid for most kinds, the distance to the class's mean vector for
    vector nominal attributes, seed 003 eq. 6-7).
    """
    row: dict = {"size": len(sens)}
    row["n_values"] = len(np.unique(sens))
    row["n_levels"] = len(np.unique(levels))
    row["hec"] = float(
        class_level_entropy(
            np.bincount(levels, minlength=sensitive.n_levels), sensitive.weights, base
        )
    )
    row["ent"] = float(sensitive_entropy(np.bincount(sens, minlength=len(sensitive.values))))
    loss = 0.0
    centroids = []
    for kind, c in zip(kinds, codes, strict=True):
        centroids.append(kind.centroid(c))
        loss += kind.weight * kind.loss(c)
    row["loss"] = loss
    row["centroids"] = centroids
    return row


def make_summary_fn(
    schema: Schema, base: float, generalized: bool = False
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Summarise every class of one block: size, diversity, HEC, Ent, InfoLoss, centroid codes.

    Also the class's NCP (Xu et al. 2006, :func:`sparkanon.metrics.ncp.class_ncp`)
    and, when ``generalized``, its generalized value of every quasi-identifier
    (:meth:`~sparkanon.attributes.kinds.Kind.generalized`).

    Classes never span blocks (reconciled rows join their target block), so
    grouping by block keeps each class whole with far fewer UDF calls than
    grouping by class.
    """

    def summarise(block: pd.DataFrame) -> pd.DataFrame:
        rows = []
        codes = [block[c].to_numpy() for c in schema.code_columns]
        sens = block[SENS].to_numpy(dtype=np.int64)
        levels = block[LEVEL].to_numpy(dtype=np.int64)
        classes = block[CLASS].to_numpy(dtype=np.int64)
        order = np.argsort(classes, kind="stable")
        bounds = np.flatnonzero(np.diff(classes[order])) + 1
        for idx in np.split(order, bounds):
            if idx.size == 0:
                continue
            class_codes = [c[idx] for c in codes]
            s = class_summary(
                class_codes,
                schema.kinds,
                sens[idx],
                levels[idx],
                schema.sensitive,
                base,
            )
            row = {CLASS: int(classes[idx[0]])}
            row.update({k: v for k, v in s.items() if k != "centroids"})
            for c, centre in zip(schema.code_columns, s["centroids"], strict=True):
                row[c] = centre
            row["ncp"] = class_ncp(schema.kinds, class_codes)
            if generalized:
                for i, (kind, c) in enumerate(zip(schema.kinds, class_codes, strict=True)):
                    row[generalized_column(i)] = kind.generalized(c)
            rows.append(row)
        return pd.DataFrame(rows, columns=[n for n, _ in summary_columns(schema, generalized)])

    return summarise


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


def make_level_fn(
    sensitive: SensitiveLevels, group_columns: Sequence[str]
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Add the sensitivity level of each published row (for verification)."""

    def level(batch: pd.DataFrame) -> pd.DataFrame:
        _, lvl, invalid = sensitive.encode(batch[sensitive.name])
        out = batch[list(group_columns) + [sensitive.name]].copy()
        out[LEVEL] = np.where(invalid, -1, lvl)
        return out

    return level


def make_check_fn(model: HPKAnonymity) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Flag published groups that violate the model."""

    def check(groups: pd.DataFrame) -> pd.DataFrame:
        ok = model.satisfied(
            groups["size"].to_numpy(), groups["n_values"].to_numpy(), groups["n_levels"].to_numpy()
        )
        return pd.DataFrame(
            {"size": groups["size"].to_numpy(dtype=np.int64), "violation": (~ok).astype(np.int64)}
        )

    return check


NCP_TERM_COLUMNS = [("size", "long"), ("ncp", "double"), ("penalty", "double")]
"""Per-class terms of the NCP and GCP metrics."""


def make_ncp_term_fn() -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per-class NCP and ``|G| NCP(G)`` (the GCP numerator's term; Ghinita et al. 2007)."""

    def term(batch: pd.DataFrame) -> pd.DataFrame:
        size = batch["size"].to_numpy(dtype=np.int64)
        ncp = batch["ncp"].to_numpy(dtype=float)
        return pd.DataFrame({"size": size, "ncp": ncp, "penalty": size * ncp})

    return term


def make_avg_il_fn(n_qi: int) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per-class AVG-IL term ``IL(G) / (|G| |QI|)`` (seed 003 eq. 17)."""

    def term(batch: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "size": batch["size"].to_numpy(dtype=np.int64),
                "hec": batch["hec"].to_numpy(dtype=float),
                "ent": batch["ent"].to_numpy(dtype=float),
                "loss": batch["loss"].to_numpy(dtype=float),
                "avg_il": batch["loss"].to_numpy(dtype=float)
                / (batch["size"].to_numpy(dtype=float) * n_qi),
            }
        )

    return term


def is_discrete(kind: Kind) -> bool:
    """Whether a kind is histogram-based."""
    return isinstance(kind, DiscreteKind)
