"""The job configuration: one typed, frozen tree, validated when it is loaded.

A job config is a YAML file (see ``conf/adult_hpk.yaml``). :func:`load_config`
reads it, applies ``--set key=value`` overrides and validates it. The parts with
variants are unions told apart by one key, each variant validating its own
parameters: ``attributes[]`` by ``kind`` (one class per kind here), ``model`` by
``name`` (:data:`sparkanon.models.ModelConfig`: one model or a list that must all
hold), ``algorithm`` by ``name`` (each algorithm's ``Params``,
:data:`sparkanon.algorithms.AlgorithmConfig`). The checks across sections are in
:meth:`JobConfig._cross_checks`. Any problem raises
:class:`~sparkanon.errors.ConfigError` naming the key, the bad value and a fix.

Relative paths (input, hierarchies, output) are resolved against the current
working directory of the process that starts the job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from sparkanon.algorithms import (
    ALGORITHMS,
    FULL_DOMAIN_ALGORITHMS,
    RT_ALGORITHMS,
    AlgorithmConfig,
)
from sparkanon.algorithms.maa_slie import MaaSlieParams
from sparkanon.attributes.hierarchy import load_arx_hierarchy
from sparkanon.attributes.itemsets import ItemTree, even_taxonomy, sorted_items
from sparkanon.attributes.kinds import (
    RANGE_SEPARATOR,
    Kind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.semantic import SemanticKind
from sparkanon.errors import ConfigError
from sparkanon.models import MODELS, ModelConfig, ModelSet
from sparkanon.models.base import Float, Int

QI_KINDS = ("continuous", "ordinal", "categorical", "nominal", "semantic")
"""Attribute kinds that are quasi-identifiers (seed 000 section 1.5, seed 003 section 3)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class InputConfig(_Frozen):
    """Where and how to read the input table.

    Attributes:
        format: ``csv``, ``parquet`` or ``orc`` (a ``path`` input).
        path: file or directory to read; or
        table: a Spark SQL catalog table, ``db.name`` or ``name`` (Spark engine only;
            exactly one of ``path`` and ``table``).
        partition: with ``table``: the one partition to anonymize, ``{column: value}``
            for every partition column of the table (``sparkanon run --partition
            ds=2026-11-23`` sets it); the output table gets the same partition.
        options: reader options passed through to the reader (for CSV:
            ``header``, ``sep``...).
        columns: column names for a headerless CSV, in file order.
        missing_values: tokens that mean "missing" (compared after trimming).
        on_missing: ``drop`` removes rows holding a missing quasi-identifier or
            sensitive value (they are counted as suppressed); ``error`` fails.
        on_invalid: ``error`` (default) fails on a quasi-identifier value that
            cannot be encoded (a non-numeric continuous value, a value outside
            its declared order, hierarchy or values, a malformed semantic code),
            naming the column and the value; ``drop`` suppresses those rows
            and counts them (``suppressed_invalid_values``), as seed 003 keeps
            only the 6-digit fnlwgt codes.
        on_malformed: CSV only: ``error`` (default) fails on a record whose
            number of fields differs from the header's, naming the file and the
            line; ``drop`` suppresses such records and counts them
            (``suppressed_malformed_records``).
        glob: for a directory input, the pattern file names must match to be
            read (e.g. ``*.txt``); by default the format's suffixes
            (``.csv``, ``.csv.gz``, ``.tsv``...; ``.parquet``; ``.orc``). Hidden
            files (``.``- or ``_``-prefixed, e.g. ``_SUCCESS``) are never read.
        max_split_bytes: on Spark, the most bytes of input file one read task takes
            (``spark.sql.files.maxPartitionBytes``); default: Spark's (128 MiB), or
            16 MiB for a set-valued sensitive attribute, whose records carry whole
            sets (a 128 MiB Parquet split of baskets is over a million records and
            about 600 MiB once encoded, more than a task can cache in Spark's default
            1 GiB heap).
    """

    format: Literal["csv", "parquet", "orc"] = "csv"
    path: str | None = None
    table: str | None = None
    partition: dict[str, str] | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    columns: tuple[str, ...] | None = None
    missing_values: tuple[str, ...] = ("?", "")
    on_missing: Literal["drop", "error"] = "drop"
    on_invalid: Literal["error", "drop"] = "error"
    on_malformed: Literal["error", "drop"] = "error"
    glob: str | None = None
    max_split_bytes: Annotated[Int, Field(ge=1 << 20)] | None = None

    @field_validator("partition", mode="before")
    @classmethod
    def _partition_values_as_text(cls, raw: Any) -> Any:
        if isinstance(raw, Mapping):  # YAML reads ds=20261123 as a number
            return {str(k): str(v) for k, v in raw.items()}
        return raw

    @model_validator(mode="after")
    def _one_source(self) -> InputConfig:
        check_path_or_table(self.path, self.table, "files")
        if self.partition is not None and self.table is None:
            raise ValueError(
                "partition: a partition is read from a partitioned catalog table; set "
                "input.table (or drop --partition)"
            )
        if self.partition is not None and not self.partition:
            raise ValueError("partition: empty; give column: value pairs")
        return self

    @property
    def source(self) -> str:
        """The input as the messages name it: the path, or ``table db.name [partition]``."""
        if self.table is None:
            return repr(self.path)
        spec = "" if not self.partition else " partition " + partition_text(self.partition)
        return f"table {self.table}{spec}"


def check_path_or_table(path: str | None, table: str | None, files: str) -> None:
    """Exactly one of ``path`` and ``table``, and a table name of plain identifiers.

    Args:
        path: the section's ``path``.
        table: the section's ``table``.
        files: what a path is, for the message (``files``, ``a directory``).

    Raises:
        ValueError: neither or both given, or a malformed table name.
    """
    if path is None and table is None:
        raise ValueError(
            f"path: required key is missing; give path ({files}) or table (a catalog table, "
            "db.name)"
        )
    if path is not None and table is not None:
        raise ValueError(f"table: give path ({files}) or table (a catalog table), not both")
    if table is not None:
        check_table_name(table, "table")


def check_table_name(name: str, key: str) -> None:
    """A table name must be ``db.name`` or ``name`` of plain identifiers.

    Raises:
        ValueError: naming the key and the bad name.
    """
    parts = name.split(".")
    if len(parts) > 2 or not all(re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", p) for p in parts):
        raise ValueError(
            f"{key}: {name!r} is not db.name or name (letters, digits and _, not starting "
            "with a digit)"
        )


def partition_text(spec: Mapping[str, str]) -> str:
    """``ds=2026-11-23`` (columns joined by ``,``), as ``--partition`` takes it."""
    return ",".join(f"{k}={v}" for k, v in spec.items())


def parse_partition(text: str) -> dict[str, str]:
    """``ds=2026-11-23[,region=eu]`` as an ordered ``{column: value}`` mapping.

    Raises:
        ConfigError: a part is not ``column=value`` or a column repeats.
    """
    spec: dict[str, str] = {}
    for part in text.split(","):
        col, sep, value = part.partition("=")
        col = col.strip()
        if not sep or not col or not value.strip():
            raise ConfigError(
                f"--partition {text!r}: expected column=value[,column=value], e.g. "
                "--partition ds=2026-11-23"
            )
        if col in spec:
            raise ConfigError(f"--partition {text!r}: column {col!r} given twice")
        spec[col] = value.strip()
    return spec


class BinsConfig(_Frozen):
    """Generated interval levels (``levels.bins``).

    Attributes:
        method: ``equal_width`` bins over the data's range, or ``quantile`` bins
            holding about the same number of rows each.
        count: intervals of the finest level.
        merge: consecutive intervals merged into one at each coarser level.
    """

    method: Literal["equal_width", "quantile"] = "equal_width"
    count: Annotated[Int, Field(ge=2)]
    merge: Annotated[Int, Field(ge=2)] = 2


class IntervalLevelsConfig(_Frozen):
    """Interval generalization levels of a continuous or ordinal column (``attributes[].levels``).

    Full-domain generalization (``algorithm.name: samarati | incognito``) publishes one
    level of every quasi-identifier for the whole table; these are the levels of a numeric
    or graded column, finest first, the root ``*`` added last. Give exactly one of:

    Attributes:
        widths: intervals of these widths (raw units; ranks for an ordinal column), each
            a multiple of the one before so the intervals nest, aligned at ``origin``.
        origin: where the width grid starts (continuous columns).
        breakpoints: per level, finest first, the interval edges: for a continuous
            column the bounds included (values outside the first and last edge are an
            error); for an ordinal column the values that begin an interval. Each
            coarser level's edges are a subset of the finer level's.
        bins: generated levels (:class:`BinsConfig`).
        exact: level 0 publishes the value itself (continuous columns; with ``false``
            the finest interval is level 0, for columns with very many distinct values).
    """

    widths: tuple[Annotated[Float, Field(gt=0)], ...] | None = Field(default=None, min_length=1)
    origin: Float = 0.0
    breakpoints: tuple[tuple[Float | str, ...], ...] | None = Field(default=None, min_length=1)
    bins: BinsConfig | None = None
    exact: bool = True

    @model_validator(mode="after")
    def _one_rule(self) -> IntervalLevelsConfig:
        given = [k for k in ("widths", "breakpoints", "bins") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "levels: give exactly one of widths, breakpoints or bins (got "
                + (", ".join(given) or "none")
                + ")"
            )
        if self.widths is not None:
            for i in range(1, len(self.widths)):
                a, b = self.widths[i - 1], self.widths[i]
                ratio = b / a
                if b <= a or abs(ratio - round(ratio)) > 1e-9:
                    raise ValueError(
                        f"levels.widths: {b:g} after {a:g}: each width must be a larger "
                        "multiple of the one before, so that every interval nests in the next "
                        "level's"
                    )
        if self.breakpoints is not None:
            for i, level in enumerate(self.breakpoints):
                if len(level) < 1:
                    raise ValueError(f"levels.breakpoints.{i}: an empty level")
        return self


class _Attribute(_Frozen):
    """A column of the input and what it is (``attributes[]``).

    Attributes:
        name: column name.
        kind: what the column is; every kind is its own class.
    """

    is_quasi_identifier: ClassVar[bool] = False

    name: str
    kind: str


class _QuasiIdentifier(_Attribute):
    """A quasi-identifier column.

    Attributes:
        weight: weight of this attribute in the tuple distance (seed 000 sets all
            weights to 1).
    """

    is_quasi_identifier: ClassVar[bool] = True

    weight: Annotated[Float, Field(gt=0)] = 1.0

    def known_kind(self) -> Kind | None:
        """The kind when the config alone fixes it; ``None`` when it needs the data profile."""
        return None


class ContinuousAttribute(_QuasiIdentifier):
    """A numeric quasi-identifier, normalised with the whole input's range (seed 000 eq. 3-5)."""

    kind: Literal["continuous"]
    levels: IntervalLevelsConfig | None = None


class OrdinalAttribute(_QuasiIdentifier):
    """Graded values in a declared order (seed 000 eq. 6-13, seed 003 eq. 4-5).

    Attributes:
        order: the values from lowest to highest rank.
        rank_weights: the weights ``W(j-1,j)`` between consecutive ranks (seed 003
            eq. 4), one fewer than ``order``; all 1 when omitted (then eq. 4 is
            seed 000's eq. 6).
        centroid: ``mean_frequency`` (seed 000's "center mean frequency" rule,
            eq. 7-13) or ``median`` (the median rank, our reading of seed 003's
            eq. 5).
    """

    kind: Literal["ordinal"]
    order: tuple[str, ...] = Field(min_length=1)
    rank_weights: tuple[Annotated[Float, Field(gt=0)], ...] | None = None
    centroid: Literal["mean_frequency", "median"] = "mean_frequency"
    levels: IntervalLevelsConfig | None = None

    @model_validator(mode="after")
    def _order_and_weights(self) -> OrdinalAttribute:
        if len(set(self.order)) != len(self.order):
            raise ValueError("order: repeated values")
        clash = [v for v in self.order if RANGE_SEPARATOR in v]
        if clash:
            raise ValueError(
                f"order: value {clash[0]!r} contains {RANGE_SEPARATOR!r}, which separates the "
                "bounds of a published range [low, high]; rename it"
            )
        if self.rank_weights is not None and len(self.rank_weights) != len(self.order) - 1:
            raise ValueError(
                f"rank_weights: {len(self.rank_weights)} weights for {len(self.order)} ranks; "
                f"give one weight per pair of consecutive ranks ({len(self.order) - 1})"
            )
        return self

    def known_kind(self) -> Kind:  # noqa: D102
        return ordinal_kind(
            self.name, self.weight, self.order, self.rank_weights, centroid=self.centroid
        )


class CategoricalAttribute(_QuasiIdentifier):
    """Values that are leaves of a taxonomy tree (seed 000 eq. 14-15).

    Attributes:
        hierarchy: ARX-format hierarchy CSV (one row per leaf, most specific value
            first, root last, ``;``-separated), validated as a tree.
    """

    kind: Literal["categorical"]
    hierarchy: str

    def known_kind(self) -> Kind:  # noqa: D102
        return categorical_kind(
            self.name, self.weight, load_arx_hierarchy(self.hierarchy, self.name)
        )


class NominalAttribute(_QuasiIdentifier):
    """Boolean or nominal values (seed 000 eq. 16-17; seed 003 Table 4 as vectors).

    Attributes:
        values: the domain; discovered from the data when omitted.
        encoding: ``indicator`` (0/1 distance, mode centroid) or ``vector``
            (seed 003 eq. 6-7: loss against the class's mean vector, mode published).
    """

    kind: Literal["nominal"]
    values: tuple[str, ...] | None = None
    encoding: Literal["indicator", "vector"] = "indicator"

    def known_kind(self) -> Kind | None:  # noqa: D102
        if self.values is None:
            return None
        return nominal_kind(self.name, self.weight, self.values, self.encoding)


class SemanticAttribute(_QuasiIdentifier):
    """Codes whose prefixes form a code hierarchy tree (seed 003 definition 6).

    Attributes:
        length: the number of characters of every code (e.g. 5 for ZIP codes, 6 for
            Adult's fnlwgt); each prefix is a level of the tree.
        beta: level weights ``W(j-1,j) = 1/(j-1)^beta`` (1 in the seed's experiments).
        root_weight: ``W(1,2)``, the weight between the root and the first character
            (0 in the seed's experiments).
    """

    kind: Literal["semantic"]
    length: Annotated[Int, Field(ge=1, le=18)]
    beta: Annotated[Float, Field(ge=0)] = 1.0
    root_weight: Annotated[Float, Field(ge=0)] = 0.0

    def known_kind(self) -> Kind:  # noqa: D102
        return SemanticKind(
            self.name, self.weight, length=self.length, beta=self.beta, root_weight=self.root_weight
        )


class IdentifierAttribute(_Attribute):
    """A direct identifier: always dropped."""

    kind: Literal["identifier"]


class KeepAttribute(_Attribute):
    """A column copied to the output unchanged."""

    kind: Literal["keep"]


AttributeConfig = Annotated[
    Union[  # noqa: UP007 (a discriminated union is spelt with Union)
        ContinuousAttribute,
        OrdinalAttribute,
        CategoricalAttribute,
        NominalAttribute,
        SemanticAttribute,
        IdentifierAttribute,
        KeepAttribute,
    ],
    Field(discriminator="kind"),
]
"""One ``attributes[]`` entry, validated into the class its ``kind`` selects."""
ATTRIBUTE_KINDS = QI_KINDS + ("identifier", "keep")


class SensitiveLevel(_Frozen):
    """One sensitivity level of the sensitive attribute (seed 000, section 1.4).

    Attributes:
        name: label of the level (used in logs and metrics only).
        weight: w_i of eq. 2, in (0, 1).
        values: sensitive values of this level.
    """

    name: str
    weight: Annotated[Float, Field(gt=0, lt=1)]
    values: tuple[str, ...]


class SensitiveConfig(_Frozen):
    """The sensitive attribute.

    Attributes:
        name: column name.
        levels: optional: the levels from low to high sensitivity (needed by
            (H,p,k)-anonymity and the level entropy metrics); every value that occurs
            in the data must then belong to exactly one level.
        values: optional: the domain, lowest first (an ordered ground distance of
            t-closeness uses this order); every value in the data must be in it.
            Without ``levels`` or ``values`` the domain is what the data holds.
    """

    name: str
    levels: tuple[SensitiveLevel, ...] | None = Field(default=None, min_length=1)
    values: tuple[str, ...] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _levels_and_values(self) -> SensitiveConfig:
        if self.levels is not None:
            seen: dict[str, str] = {}
            for level in self.levels:
                for value in level.values:
                    if value in seen:
                        raise ValueError(
                            f"levels: value {value!r} is in both level {seen[value]!r} "
                            f"and level {level.name!r}"
                        )
                    seen[value] = level.name
            names = [lv.name for lv in self.levels]
            if len(set(names)) != len(names):
                raise ValueError("levels: level names must be unique")
            if self.values is not None and set(self.values) != set(seen):
                raise ValueError(
                    "values: the declared values and the values of the levels differ; list "
                    "the same values in both"
                )
        if self.values is not None and len(set(self.values)) != len(self.values):
            raise ValueError("values: repeated values")
        return self

    @property
    def declared_values(self) -> tuple[str, ...] | None:
        """The domain the config declares (``values``, else the levels' values), if any."""
        if self.values is not None:
            return self.values
        if self.levels is not None:
            return tuple(v for lv in self.levels for v in lv.values)
        return None


class LongItemsConfig(_Frozen):
    """Items held in a separate long table, one row per (record, item), joined by a key.

    This is how warehouses hold set-valued data (one row per purchased product).

    Attributes:
        format: ``csv``, ``parquet`` or ``orc``.
        path: file or directory of the long table.
        options: reader options (for CSV: ``header``, ``sep``...).
        key: the column joining it to the main input (present in both; list it under
            ``attributes`` as an ``identifier`` so it is never published).
        item: the column holding one item.
    """

    format: Literal["csv", "parquet", "orc"] = "csv"
    path: str
    options: dict[str, Any] = Field(default_factory=dict)
    key: str
    item: str


class ItemsetConfig(_Frozen):
    """A set-valued sensitive attribute (seed 002's transaction part), e.g. diagnosis codes.

    Attributes:
        name: the column (for ``layout: long``, the name the joined sets take).
        kind: ``itemset``.
        layout: ``delimited`` (a string of items joined by ``separator``; CSV),
            ``array`` (a Parquet/ORC ``array<string>`` column) or ``long`` (a
            separate table, see :class:`LongItemsConfig`).
        separator: the item separator of the ``delimited`` layout.
        taxonomy: ARX-format hierarchy CSV whose leaves are the items.
        fanout: without ``taxonomy``: an even taxonomy over the items the data
            holds (sorted), ``fanout`` children per node (seed 002 section 4.1 uses 5).
        on_unknown_item: ``error`` fails on an item absent from the taxonomy,
            naming it; ``drop`` removes such items from their sets (counted).
        long: the long table (``layout: long`` only).
    """

    name: str
    kind: Literal["itemset"]
    layout: Literal["delimited", "array", "long"] = "delimited"
    separator: str = Field(default="|", min_length=1)
    taxonomy: str | None = None
    fanout: Annotated[Int, Field(ge=2)] | None = None
    on_unknown_item: Literal["error", "drop"] = "error"
    long: LongItemsConfig | None = None

    levels: ClassVar[None] = None
    values: ClassVar[None] = None
    declared_values: ClassVar[None] = None

    @model_validator(mode="after")
    def _taxonomy_and_layout(self) -> ItemsetConfig:
        if (self.taxonomy is None) == (self.fanout is None):
            raise ValueError(
                "taxonomy: give exactly one of taxonomy (an ARX hierarchy CSV whose leaves are "
                "the items) and fanout (an even taxonomy generated over the items, e.g. 5)"
            )
        if (self.layout == "long") != (self.long is not None):
            raise ValueError(
                "long: the long table (format, path, key, item) goes with layout: long, and "
                "only with it"
            )
        return self

    def load_tree(self, items: Sequence[str] = ()) -> ItemTree:
        """The item taxonomy: the configured file, or an even tree over ``items`` (sorted).

        Raises:
            ConfigError: the file is not a tree, or a label of the taxonomy (a label of
                the file, an item of the data or a generated node label) contains
                ``separator``: published sets join their labels with it.
        """
        if self.taxonomy is not None:
            return ItemTree.of(load_arx_hierarchy(self.taxonomy, self.name, self.separator))
        assert self.fanout is not None
        tree = ItemTree.of(even_taxonomy(sorted_items(items), self.fanout))
        clash = next((label for label in tree.labels if self.separator in label), None)
        if clash is not None:
            raise ConfigError(
                f"sensitive.separator: {self.separator!r} occurs in the label {clash!r} of the "
                "even taxonomy (an item of the data, or a node label L<level>:<index> it "
                "generates); a published set joins its labels with the separator, so the "
                "label would read as several nodes. Choose another separator"
            )
        return tree


def _sensitive_kind(raw: Any) -> str:
    """The variant of ``sensitive``: ``itemset`` when it says so, else one value per record."""
    kind = raw.get("kind") if isinstance(raw, Mapping) else getattr(raw, "kind", None)
    return "itemset" if kind == "itemset" else "value"


SensitiveAttribute = Annotated[
    Union[  # noqa: UP007 (a discriminated union is spelt with Union)
        Annotated[SensitiveConfig, Tag("value")],
        Annotated[ItemsetConfig, Tag("itemset")],
    ],
    Discriminator(_sensitive_kind),
]
"""The ``sensitive`` section: one value per record, or a set of items (``kind: itemset``)."""


def _model_list(raw: Any) -> Any:
    """One model mapping becomes a list of one; a list stays; an empty list is refused."""
    if isinstance(raw, Mapping):
        return [raw]
    if isinstance(raw, (list, tuple)) and not raw:
        raise ValueError(
            "the model list is empty; name at least one model, e.g. model: {name: k, k: 5}"
        )
    return raw


class PartitioningConfig(_Frozen):
    """Mondrian-style blocking before the per-block algorithm.

    Attributes:
        max_block_rows: blocks are cut until they hold at most this many rows
            (a block is not cut when a cut would leave a side unable to host a
            class).
        task_rows: nodes of the tree larger than this form its top, planned in
            one task; smaller ones are cut by one task each on their own rows with the
            same rule. The job lowers it further so that every core gets at least two
            top blocks.
        sample_rows: the top of the tree is planned on all usable rows when there
            are at most this many; otherwise on a seeded sample of about this many
            rows, whose proposed cuts are then checked (and undone where the model
            fails) on the exact counts of one pass over the data.
        infeasible_blocks: ``merge`` undoes a cut whose side could not host a
            class; ``reconcile`` keeps such a side as a block whose rows are
            sent to the nearest feasible block's classes.
        reconcile_rows: relational-transaction jobs: the records the blocks leave
            over are re-run in chunks of at least this many (neighbouring blocks
            together, one task each) before one last block; larger chunks place more
            records, smaller ones spread the work over more tasks.
    """

    max_block_rows: Annotated[Int, Field(ge=2)] = 2000
    task_rows: Annotated[Int, Field(ge=2)] = 200_000
    sample_rows: Annotated[Int, Field(ge=1000)] = 1_000_000
    infeasible_blocks: Literal["merge", "reconcile"] = "merge"
    reconcile_rows: Annotated[Int, Field(ge=1)] = 100_000


class OutputConfig(_Frozen):
    """Where to publish.

    Attributes:
        path: output directory; the table goes to ``<path>/data`` and the
            metrics to ``<path>/metrics.json``; or
        table: a Spark SQL catalog table (``db.name``; exactly one of ``path`` and
            ``table``), created with the published schema when absent; with a partitioned
            input (``input.partition``) the run replaces that one partition of it.
            ``publish: anatomy`` commits two tables, ``<table>_rt`` and ``<table>_tt``.
        format: ``parquet`` or ``csv``.
        mode: ``error`` fails when the path exists, ``overwrite`` replaces it
            (only after the new table passed verification).
        decimals: decimal places of published continuous values (``None`` keeps
            full precision): centroids and full-domain exact values rounded to the
            nearest, generalized ranges and full-domain intervals outwards.
        publish: ``centroids`` replaces each quasi-identifier by its class
            centroid (micro-aggregation); ``generalized`` by the class's
            generalized value (a numeric range, the taxonomy node covering the
            class, a common code prefix), as seed 001 publishes; ``anatomy`` (a
            set-valued sensitive attribute only) publishes two tables, ``rt`` (record
            id, exact quasi-identifiers, group id) and ``tt`` (group id, generalized
            set, count), as seed 002 does.
        max_suppressed_share: the largest share of the input rows a run may suppress,
            all causes together (malformed records, missing or invalid values, rows
            the algorithm could not publish); a run above it, or one that would publish
            no row, fails (exit 2) naming the causes, and nothing is written. ``1``
            allows any suppression but an empty release.
    """

    path: str | None = None
    table: str | None = None
    format: Literal["parquet", "csv"] = "parquet"
    mode: Literal["error", "overwrite"] = "error"
    decimals: Annotated[Int, Field(ge=0)] | None = None
    publish: Literal["centroids", "generalized", "anatomy"] = "centroids"
    max_suppressed_share: Annotated[Float, Field(ge=0, le=1)] = 0.5

    @model_validator(mode="after")
    def _one_target(self) -> OutputConfig:
        check_path_or_table(self.path, self.table, "a directory")
        if self.table is not None:
            if self.format != "parquet":
                raise ValueError(
                    f"format: {self.format!r}: catalog tables are written as Parquet; drop "
                    "output.format or use output.path for CSV"
                )
        return self

    @property
    def target(self) -> str:
        """The output as the messages name it."""
        return repr(self.path) if self.table is None else f"table {self.table}"


class JobConfig(_Frozen):
    """The whole job configuration."""

    input: InputConfig
    attributes: tuple[AttributeConfig, ...] = Field(min_length=1)
    sensitive: SensitiveAttribute
    model: tuple[ModelConfig, ...]
    algorithm: AlgorithmConfig = MaaSlieParams()
    partitioning: PartitioningConfig = PartitioningConfig()
    output: OutputConfig
    seed: Int = 0

    @field_validator("model", mode="before")
    @classmethod
    def _one_or_many(cls, raw: Any) -> Any:
        return _model_list(raw)

    @property
    def models(self) -> ModelSet:
        """The privacy models every published class must satisfy."""
        return ModelSet(self.model)

    @property
    def quasi_identifiers(self) -> tuple[Any, ...]:
        """The quasi-identifier attributes in config order."""
        return tuple(a for a in self.attributes if a.is_quasi_identifier)

    @property
    def kept_columns(self) -> tuple[str, ...]:
        """Columns copied to the output unchanged."""
        return tuple(a.name for a in self.attributes if a.kind == "keep")

    def _column_checks(self) -> list[str]:
        """Problems with the columns: repeated, the sensitive one listed, no quasi-identifier."""
        problems: list[str] = []
        names = [a.name for a in self.attributes]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            problems.append(f"attributes: column(s) {duplicates} listed more than once")
        if self.sensitive.name in names:
            problems.append(
                f"sensitive.name: {self.sensitive.name!r} is also listed under attributes; "
                "remove it from attributes"
            )
        if not self.quasi_identifiers:
            problems.append("attributes: no quasi-identifier (kinds: " + ", ".join(QI_KINDS) + ")")
        return problems

    def _single_value_checks(self) -> list[str]:
        """Problems of a job with one sensitive value per record (models, levels, algorithm)."""
        problems: list[str] = []
        if self.algorithm.name in RT_ALGORITHMS:
            problems.append(
                f"algorithm.name: {self.algorithm.name!r} anonymizes a set-valued sensitive "
                "attribute; declare sensitive.kind: itemset, or choose one of "
                + ", ".join(ALGORITHMS)
            )
            return problems
        if self.output.publish == "anatomy":
            problems.append(
                "output.publish: anatomy publishes a set-valued sensitive attribute "
                "(sensitive.kind: itemset); use centroids or generalized"
            )
        if self.is_full_domain and self.algorithm.max_suppression > 0:
            for i, model in enumerate(self.model):
                if model.compares_with_table:
                    key = "model" if len(self.model) == 1 else f"model.{i}"
                    problems.append(
                        f"{key}: {model.name} with algorithm.max_suppression = "
                        f"{self.algorithm.max_suppression:g}: suppressing classes changes the "
                        "published table's distribution of the sensitive values, which "
                        "t-closeness compares every class with, so a node found against the "
                        "input's distribution need not hold against the published one; set "
                        "algorithm.max_suppression: 0"
                    )
        if self.is_full_domain and self.output.publish != "generalized":
            problems.append(
                f"output.publish: {self.output.publish!r}: algorithm {self.algorithm.name!r} "
                "publishes every quasi-identifier at one level of its hierarchy; use publish: "
                "generalized"
            )
        for i, model in enumerate(self.model):
            if model.name == "kl_diversity":
                key = "model" if len(self.model) == 1 else f"model.{i}"
                problems.append(
                    f"{key}: kl_diversity protects a set-valued sensitive attribute; declare "
                    "sensitive.kind: itemset (with algorithm apa or paa and publish: anatomy)"
                )
        if problems:
            return problems
        levels = self.sensitive.levels
        declared = self.sensitive.declared_values
        declared_by = "sensitive.levels" if self.sensitive.values is None else "sensitive.values"
        for i, model in enumerate(self.model):
            key = "model" if len(self.model) == 1 else f"model.{i}"
            if model.needs_levels and levels is None:
                problems.append(
                    f"{key}: {model.name} needs sensitivity levels; add sensitive.levels "
                    "(or use p_sensitive, which needs none)"
                )
            h = getattr(model, "h", 1)
            if h > 1 and levels is not None and h > len(levels):
                problems.append(
                    f"{key}.h = {h}: {model.name} needs {h} distinct sensitivity levels in every "
                    f"class but sensitive.levels defines only {len(levels)} "
                    f"level{'s' if len(levels) != 1 else ''}; lower h to at most {len(levels)} "
                    "or define more levels"
                )
            p = getattr(model, "p", None)
            if p is not None and declared is not None and p > len(declared):
                problems.append(
                    f"{key}.p = {p}: {model.name} needs {p} distinct sensitive values in every "
                    f"class but {declared_by} declares only {len(declared)} values; lower p to at "
                    f"most {len(declared)}"
                )
            if (
                not model.monotonic
                and self.algorithm.name in ALGORITHMS
                and model.name not in ALGORITHMS[self.algorithm.name].guarantees
            ):
                problems.append(
                    f"{key}: {model.name} is not monotonic, so classes cannot be repaired by "
                    f"merging; algorithm {self.algorithm.name!r} does not guarantee it"
                )
        return problems

    def _rt_checks(self) -> list[str]:
        """Problems of a relational-transaction job (seed 002): model, algorithm, publication."""
        problems = self._column_checks()
        if self.algorithm.name not in RT_ALGORITHMS:
            problems.append(
                f"algorithm.name: {self.algorithm.name!r} anonymizes one sensitive value per "
                "record; a set-valued sensitive attribute (sensitive.kind: itemset) needs one of "
                + ", ".join(RT_ALGORITHMS)
            )
        if [m.name for m in self.model] != ["kl_diversity"]:
            names = ", ".join(m.name for m in self.model)
            problems.append(
                f"model: {names}: a set-valued sensitive attribute is published under "
                "(k,l)-diversity alone; use model: {name: kl_diversity, k: 10, l: 5}"
            )
        if self.output.publish != "anatomy":
            problems.append(
                f"output.publish: {self.output.publish!r} publishes one value per record; a "
                "set-valued sensitive attribute is published as two tables (RT and TT): use "
                "publish: anatomy"
            )
        if not problems:
            kl = self.model[0]
            need = kl.k * kl.l
            if self.partitioning.max_block_rows < need:
                problems.append(
                    f"partitioning.max_block_rows = {self.partitioning.max_block_rows}: a block "
                    f"must hold at least k * l = {need} records (l sets of k records each); "
                    f"raise max_block_rows to at least {need}"
                )
        return problems

    @property
    def is_full_domain(self) -> bool:
        """Whether the algorithm searches the lattice of full-domain generalizations (seed 004)."""
        return self.algorithm.name in FULL_DOMAIN_ALGORITHMS

    @property
    def is_relational_transaction(self) -> bool:
        """Whether the sensitive attribute is a set of items (seed 002's RT data)."""
        return isinstance(self.sensitive, ItemsetConfig)

    @model_validator(mode="after")
    def _cross_checks(self) -> JobConfig:
        if self.is_relational_transaction:
            problems = self._rt_checks()
            if problems:
                raise ValueError("\n".join(problems))
            return self
        problems = self._column_checks()
        problems += self._single_value_checks()
        if self.algorithm.name in ALGORITHMS:
            problems += self._block_checks()
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def _block_checks(self) -> list[str]:
        """Problems of a per-block algorithm: a block must be able to hold a class.

        Full-domain generalization has no blocks (it ignores ``partitioning``), and a
        relational-transaction job sizes its blocks in :meth:`_rt_checks`.
        """
        problems: list[str] = []
        k = self.models.min_class_size()
        if self.partitioning.max_block_rows < k:
            i, sizing = next((i, m) for i, m in enumerate(self.model) if m.min_class_size() == k)
            param = type(sizing)._size_param
            key = "model" if len(self.model) == 1 else f"model.{i}"
            why = f"{key}.{param} = {getattr(sizing, param)}" if param else key
            problems.append(
                f"partitioning.max_block_rows = {self.partitioning.max_block_rows}: a block must "
                f"hold at least one class, and {why} makes every class at least {k} rows; "
                f"raise max_block_rows to at least {k}"
            )
        return problems


def apply_overrides(raw: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply ``key.sub=value`` overrides to a raw config mapping.

    A value reaching a text key (a name, a path, a separator, a choice such as
    ``output.mode``) is kept exactly as typed: ``sensitive.separator=|``,
    ``attributes.0.name=yes`` and ``input.columns.0=#id`` give the strings ``|``, ``yes``
    and ``#id`` (a value in YAML quotes, ``'"|"'``, is unquoted; ``null`` clears a key that
    may be empty). Any other value is parsed as YAML, so ``model.k=10`` gives an int,
    ``attributes.0.levels.exact=false`` a bool (``1e3`` is the number 1000 on a number key) and
    ``algorithm.psi_weights=[0.3,0.7]`` a list. List items are addressed by index
    (``attributes.0.weight``).

    Args:
        raw: the parsed YAML mapping (not modified).
        overrides: strings ``dotted.key=value``.

    Returns:
        A new mapping with the overrides applied.

    Raises:
        ConfigError: an override is not ``key=value``, its path does not exist, or its
            value is not valid YAML or reads as nothing (``#x``, ``|``) where YAML is parsed.
    """
    result: Any = yaml.safe_load(yaml.safe_dump(raw))
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set {item!r}: expected key=value, e.g. --set model.k=10")
        key, _, text = item.partition("=")
        key = key.strip()
        parts = key.split(".")
        if any(not part for part in parts):
            raise ConfigError(f"--set {item!r}: empty key or key part; expected e.g. model.k=10")
        node = result
        for depth, part in enumerate(parts[:-1]):
            node = _child(node, part, ".".join(parts[: depth + 1]), create=True)
        last = parts[-1]
        value = override_value(key, text, key_types(parts, result))
        if isinstance(node, list):
            if not last.isdigit() or int(last) >= len(node):
                raise ConfigError(f"--set {key}: {last!r} is not an index of that list")
            node[int(last)] = value
        elif isinstance(node, dict):
            node[last] = value
        else:
            raise ConfigError(f"--set {key}: {'.'.join(parts[:-1])!r} is not a mapping")
    return result


_NULLS = ("", "~", "null", "Null", "NULL")
"""What YAML reads as no value."""

_YAML12_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
"""A number as YAML 1.2 spells it (PyYAML, YAML 1.1, reads ``1e3`` as text)."""


def key_types(parts: Sequence[str], raw: Any) -> list[Any]:
    """The types a dotted config key can hold, from the config's own classes.

    A union section (``attributes[]``, ``model``, ``algorithm``, ``sensitive``) is
    narrowed to the variants whose tag (``kind``, ``name``) the raw mapping names.

    Args:
        parts: the key, split at dots (``["sensitive", "separator"]``).
        raw: the raw config mapping the key is looked up in.

    Returns:
        Every type the key may take (``str``, ``Literal['a', 'b']``, ``int``, ``NoneType``...),
        empty when the key is not one of the config's keys.
    """
    return _reachable(JobConfig, list(parts), raw)


def _reachable(annotation: Any, parts: list[str], node: Any) -> list[Any]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _reachable(get_args(annotation)[0], parts, node)
    if origin in (Union, UnionType):
        members = list(get_args(annotation))
        if isinstance(node, Mapping):
            members = [m for m in members if _tags_match(m, node)] or members
        return [t for m in members for t in _reachable(m, parts, node)]
    if not parts:
        return [annotation]
    part, rest = parts[0], parts[1:]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        for name, field in annotation.model_fields.items():
            if part in (name, field.alias):
                child = node.get(part) if isinstance(node, Mapping) else None
                return _reachable(field.annotation, rest, child)
        return []
    args = get_args(annotation)
    if origin in (tuple, list) and args:
        if not part.isdigit():  # a one-model mapping stands for a list of one
            return _reachable(args[0], parts, node)
        index = int(part)
        item = args[0] if origin is list or args[-1] is Ellipsis else None
        if item is None and index < len(args):
            item = args[index]
        child = node[index] if isinstance(node, list) and index < len(node) else None
        return [] if item is None else _reachable(item, rest, child)
    if origin in (dict, Mapping) and len(args) == 2:
        child = node.get(part) if isinstance(node, Mapping) else None
        return _reachable(args[1], rest, child)
    return []


def _tags_match(member: Any, node: Mapping[str, Any]) -> bool:
    """Whether a union member's literal tags (``kind``, ``name``) agree with the raw mapping."""
    while get_origin(member) is Annotated:
        member = get_args(member)[0]
    if not (isinstance(member, type) and issubclass(member, BaseModel)):
        return True
    for name, field in member.model_fields.items():
        if get_origin(field.annotation) is Literal and name in node:
            if node[name] not in get_args(field.annotation):
                return False
    return True


def _plain(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _is_text(annotation: Any) -> bool:
    annotation = _plain(annotation)
    if get_origin(annotation) is Literal:
        return all(isinstance(a, str) for a in get_args(annotation))
    return annotation is str


def _is_number(annotation: Any) -> bool:
    return _plain(annotation) in (int, float)


def override_value(key: str, text: str, types: Sequence[Any]) -> Any:
    """The value of ``--set key=text`` for a key of these types (:func:`key_types`).

    Raises:
        ConfigError: the text is parsed as YAML and is not valid YAML, or reads as no
            value although something was typed (``#x`` is a comment, ``|`` a block marker).
    """
    kinds = [t for t in types if _plain(t) is not type(None)]
    nullable = len(kinds) < len(types)
    if kinds and all(_is_text(t) for t in kinds):
        stripped = text.strip()
        if nullable and stripped in _NULLS:
            return None
        if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
            try:
                quoted = yaml.safe_load(stripped)
            except yaml.YAMLError:
                quoted = None
            if isinstance(quoted, str):
                return quoted
        return text
    quote_it = f"""; to give the text itself, quote it: --set '{key}="{text.strip()}"'"""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        raise ConfigError(
            f"--set {key}: value {text!r} is not valid YAML; close brackets" + quote_it
        ) from None
    if value in (None, "") and text.strip() not in _NULLS:
        raise ConfigError(
            f"--set {key}: value {text!r} reads as YAML as no value (# starts a comment, | and > "
            "a block)" + quote_it
        )
    if (
        isinstance(value, str)
        and kinds
        and all(_is_number(t) for t in kinds)
        and _YAML12_NUMBER.match(value.strip())
    ):
        return float(value)
    return value


def _child(node: Any, part: str, path: str, create: bool) -> Any:
    if isinstance(node, dict):
        if part not in node:
            if not create:
                raise ConfigError(f"--set {path}: no such key")
            node[part] = {}
        return node[part]
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    raise ConfigError(f"--set {path}: cannot descend into {part!r}")


def parse_config(raw: Mapping[str, Any], source: str = "<config>") -> JobConfig:
    """Validate a raw mapping into a :class:`JobConfig`.

    Args:
        raw: the parsed YAML mapping.
        source: where it came from, for error messages.

    Returns:
        The validated, frozen config.

    Raises:
        ConfigError: with one line per problem, each naming its key.
    """
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: the config must be a YAML mapping, got {type(raw).__name__}")
    try:
        return JobConfig.model_validate(dict(raw))
    except ValidationError as exc:
        single_model = isinstance(raw.get("model"), Mapping)
        lines = [_describe_error(err, single_model) for err in exc.errors()]
        raise ConfigError(f"invalid config {source}:\n  " + "\n  ".join(lines)) from None


_TAGS = {
    "attributes": ("kind", ATTRIBUTE_KINDS),
    "model": ("name", tuple(MODELS)),
    "algorithm": ("name", tuple(ALGORITHMS) + tuple(RT_ALGORITHMS) + tuple(FULL_DOMAIN_ALGORITHMS)),
    "sensitive": ("kind", ("value", "itemset")),
}
"""The unions of the config: their section, the key that selects a variant, the variants."""


def _location(loc: tuple[Any, ...], single_model: bool) -> str:
    """A config key (``attributes.1.order``, as ``--set`` spells it) from a pydantic error location.

    E.g. ``('attributes', 1, 'ordinal', 'order')``.
    The variant tag pydantic inserts after a union's position is dropped: it is not a
    key of the config.
    """
    parts = list(loc)
    if not parts:
        return "(top level)"
    section = parts[0]
    if section == "model" and single_model and len(parts) > 1 and parts[1] == 0:
        del parts[1]
    out = str(parts.pop(0))
    tags = _TAGS.get(section, (None, ()))[1]
    for i, part in enumerate(parts):
        if part in tags and (i == 0 or isinstance(parts[i - 1], int) or section == "algorithm"):
            continue
        out += f".{part}"
    return out


_MISSING_HINTS = {
    "order": "its values from lowest to highest, e.g. order: [low, middle, high]",
    "hierarchy": "the path of its ARX hierarchy CSV (one line per value: leaf;parent;...;root)",
    "length": "the number of characters of every code, e.g. length: 5",
}
"""What a variant's required key holds, for the message when it is missing."""


def _variant_keys(section: str) -> dict[str, frozenset[str]]:
    """The keys each variant of a union section takes (by alias), e.g. ``{"ordinal": {...}}``."""
    if section == "model":
        classes: dict[str, Any] = dict(MODELS)
    elif section == "algorithm":
        classes = {name: algorithm.Params for name, algorithm in ALGORITHMS.items()}
        classes |= RT_ALGORITHMS
        classes |= FULL_DOMAIN_ALGORITHMS
    else:
        members = get_args(get_args(AttributeConfig)[0])
        classes = {get_args(c.model_fields["kind"].annotation)[0]: c for c in members}
    return {
        name: frozenset(f.alias or key for key, f in cls.model_fields.items())
        for name, cls in classes.items()
    }


def _describe_error(err: Any, single_model: bool) -> str:
    """One line for one pydantic error: the key, what is wrong and, where useful, the value."""
    loc = _location(err["loc"], single_model)
    msg = err["msg"].removeprefix("Value error, ")
    kind = err["type"]
    raw_loc = err["loc"]
    section = raw_loc[0] if raw_loc else None
    # The variant a union item was validated as: ("attributes", 1, "ordinal", "order").
    in_variant = (
        section in ("attributes", "model") and len(raw_loc) > 2 and isinstance(raw_loc[1], int)
    )
    tag = raw_loc[2] if in_variant else None
    item_key = _location(raw_loc[:3], single_model) if in_variant else loc  # attributes.1
    bad = err.get("input")
    column = ""
    if section == "attributes" and isinstance(bad, Mapping) and isinstance(bad.get("name"), str):
        column = f" (column {bad['name']!r})"
    if kind == "value_error":
        if not raw_loc:  # the cross-section checks name their keys themselves
            return "\n  ".join(msg.split("\n"))
        assigned = re.match(r"([A-Za-z_]\w*) = ", msg)
        if assigned:  # "p = 5 > k = 4: ..." -> model.p = 5 > k = 4: ...
            return f"{loc}.{msg}{column}"
        head, sep, rest = msg.partition(": ")
        if sep and head.isidentifier():  # "order: repeated values" -> attributes.1.order
            loc, msg = f"{loc}.{head}", rest
        return f"{loc}: {msg}{column}"
    if kind == "extra_forbidden" and section == "algorithm" and len(raw_loc) > 2:
        param = raw_loc[-1]
        owners = [n for n, keys in _variant_keys("algorithm").items() if param in keys]
        where = f" (a parameter of {', '.join(owners)})" if owners else ""
        return f"{loc}: algorithm {raw_loc[1]!r} takes no {param!r}{where}; remove it"
    if kind == "extra_forbidden" and in_variant and len(raw_loc) == 4:
        param = raw_loc[-1]
        owners = [n for n, keys in _variant_keys(section).items() if param in keys and n != tag]
        if owners:
            selector = _TAGS[section][0]
            what = f"a {tag} attribute" if section == "attributes" else f"model {tag!r}"
            of = (
                f"a key of {', '.join(owners)} attributes"
                if section == "attributes"
                else f"a parameter of {', '.join(owners)}"
            )
            return (
                f"{loc}: unknown key: {what} takes no {param!r} ({of}); remove it or change "
                f"{item_key}.{selector} (got {bad!r})"
            )
    if kind == "extra_forbidden":
        msg = "unknown key (check the spelling; see docs/configuration.md)"
    elif kind == "missing":
        msg = "required key is missing"
        param = raw_loc[-1] if raw_loc else None
        if section == "attributes" and in_variant and param in _MISSING_HINTS:
            article = "an" if str(tag)[0] in "aeiou" else "a"
            name = f" {bad['name']!r}" if column else ""
            hint = _MISSING_HINTS[str(param)]
            return f"{loc}: {msg}; {article} {tag} attribute{name} needs {param}: {hint}"
        return f"{loc}: {msg}{column}"
    elif kind == "int_type":
        msg = "expected an integer such as 8 (true/false, quoted or decimal numbers are not)"
    elif kind == "float_type":
        msg = "expected a number such as 0.5 (true/false and quoted numbers are not)"
    elif kind in ("union_tag_invalid", "union_tag_not_found") and section in _TAGS:
        key, variants = _TAGS[section]
        tag = err.get("ctx", {}).get("tag")
        what = f"unknown {key} {tag!r}" if tag is not None else f"no {key} given"
        return f"{loc}.{key}: {what}; use one of {', '.join(variants)}"
    shown = "" if kind == "missing" else f" (got {bad!r})"
    return f"{loc}: {msg}{shown}"


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> JobConfig:
    """Read, override and validate a YAML job config.

    Args:
        path: the YAML file.
        overrides: ``key=value`` strings (see :func:`apply_overrides`).

    Returns:
        The validated config.

    Raises:
        ConfigError: the file is missing, is not YAML, or fails validation.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {str(p)!r} does not exist")
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {str(p)!r} is not valid YAML: {exc}") from None
    if overrides:
        raw = apply_overrides(raw or {}, overrides)
    return parse_config(raw, source=str(p))
