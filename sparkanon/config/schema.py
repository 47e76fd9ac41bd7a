"""The job config's classes: one typed, frozen tree per job (pydantic, ``extra="forbid"``).

The parts with variants are unions told apart by one key, each variant validating its
own parameters: ``attributes[]`` by ``kind`` (one class per kind here), ``sensitive`` by
``kind`` (one value per record, or ``itemset``), ``model`` by ``name``
(:data:`sparkanon.models.ModelConfig`: one model or a list that must all hold),
``algorithm`` by ``name`` (each algorithm's ``Params``,
:func:`sparkanon.algorithms.algorithm_config`). What goes beyond a key's type (one of
path and table, widths that nest) is in :mod:`.rules`; the classes' validators call it.
The checks across sections depend on the family of the algorithm: each family composes
them (:meth:`sparkanon.families.base.Family.config_problems`) and
:func:`sparkanon.families.check_config` runs them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal, Union, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from sparkanon.algorithms import REGISTRY_CHANGED, algorithm_config
from sparkanon.algorithms.blocks.maa_slie import MaaSlieParams
from sparkanon.attributes.builders import builder_problem
from sparkanon.attributes.dates import (
    DATE_UNITS,
    DEFAULT_LEVELS,
    TIMESTAMP_UNITS,
    format_problem,
    levels_problem,
    zone_problem,
)
from sparkanon.attributes.hierarchy import load_arx_hierarchy
from sparkanon.attributes.itemsets import ItemTree, even_taxonomy, sorted_items
from sparkanon.attributes.kinds import (
    Kind,
    categorical_kind,
    nominal_kind,
    ordinal_kind,
)
from sparkanon.attributes.semantic import SemanticKind
from sparkanon.config.builders import BuilderConfig
from sparkanon.config.partitions import partition_text
from sparkanon.config.rules import (
    check_input_source,
    check_interval_levels,
    check_itemset,
    check_order,
    check_output_target,
    check_sensitive_levels,
    model_list,
)
from sparkanon.errors import ConfigError
from sparkanon.models import ModelConfig, ModelSet
from sparkanon.models.base import Float, Int

QI_KINDS = ("continuous", "ordinal", "categorical", "nominal", "semantic", "date", "timestamp")
"""Attribute kinds that are quasi-identifiers (Shi et al. 2024, 1.5; Yang et al. 2014, 3)."""


def _unless(problem: str | None, value: Any) -> Any:
    """``value``, or the validation error ``problem`` says (a key's own check)."""
    if problem is not None:
        raise ValueError(problem)
    return value


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
            sensitive value (they are counted as suppressed); ``error`` fails. A
            quasi-identifier's own ``on_missing`` overrides it for that column.
        unlisted: what becomes of the input columns the config does not name (not in
            ``attributes``, not the sensitive column, not a long item table's key nor a
            catalog table's partition column): ``drop`` (default) leaves them out of the
            release, named in the log and counted in ``metrics.json``
            (``unlisted_columns``); ``keep`` publishes them unchanged, in their input
            type, as ``kind: keep`` columns.
        on_invalid: ``error`` (default) fails on a quasi-identifier value that
            cannot be encoded (a non-numeric continuous value, a value outside
            its declared order, hierarchy or values, a malformed semantic code),
            naming the column and the value; ``drop`` suppresses those rows
            and counts them (``suppressed_invalid_values``), as Yang et al. 2014 keeps
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
    unlisted: Literal["drop", "keep"] = "drop"
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
        check_input_source(self.path, self.table, self.partition)
        return self

    @property
    def source(self) -> str:
        """The input as the messages name it: the path, or ``table db.name [partition]``."""
        if self.table is None:
            return repr(self.path)
        spec = "" if not self.partition else " partition " + partition_text(self.partition)
        return f"table {self.table}{spec}"


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
        check_interval_levels(self.widths, self.breakpoints, self.bins)
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
        weight: weight of this attribute in the tuple distance (Shi et al. 2024 sets all
            weights to 1).
        on_missing: ``drop`` or ``error`` for a row missing this column's value;
            ``None``: ``input.on_missing``.
    """

    is_quasi_identifier: ClassVar[bool] = True

    weight: Annotated[Float, Field(gt=0)] = 1.0
    on_missing: Literal["drop", "error"] | None = None

    def known_kind(self) -> Kind | None:
        """The kind when the config alone fixes it; ``None`` when it needs the data profile."""
        return None


class ContinuousAttribute(_QuasiIdentifier):
    """A numeric quasi-identifier, normalised by the input's range (Shi et al. 2024, eq. 3-5)."""

    kind: Literal["continuous"]
    levels: IntervalLevelsConfig | None = None


class OrdinalAttribute(_QuasiIdentifier):
    """Graded values in a declared order (Shi et al. 2024, eq. 6-13, Yang et al. 2014, eq. 4-5).

    Attributes:
        order: the values from lowest to highest rank.
        rank_weights: the weights ``W(j-1,j)`` between consecutive ranks (Yang et al. 2014
            eq. 4), one fewer than ``order``; all 1 when omitted (then eq. 4 is
            Shi et al. 2024's eq. 6).
        centroid: ``mean_frequency`` (Shi et al. 2024's "center mean frequency" rule,
            eq. 7-13) or ``median`` (the median rank, our reading of Yang et al. 2014's
            eq. 5).
    """

    kind: Literal["ordinal"]
    order: tuple[str, ...] = Field(min_length=1)
    rank_weights: tuple[Annotated[Float, Field(gt=0)], ...] | None = None
    centroid: Literal["mean_frequency", "median"] = "mean_frequency"
    levels: IntervalLevelsConfig | None = None

    @model_validator(mode="after")
    def _order_and_weights(self) -> OrdinalAttribute:
        check_order(self.order, self.rank_weights)
        return self

    def known_kind(self) -> Kind:  # noqa: D102
        return ordinal_kind(
            self.name, self.weight, self.order, self.rank_weights, centroid=self.centroid
        )


class CategoricalAttribute(_QuasiIdentifier):
    """Values that are leaves of a taxonomy tree (Shi et al. 2024, eq. 14-15).

    Give exactly one of:

    Attributes:
        hierarchy: ARX-format hierarchy CSV (one row per leaf, most specific value
            first, root last, ``;``-separated), validated as a tree.
        builder: a hierarchy generated from the column's distinct values
            (:mod:`sparkanon.config.builders`, :mod:`sparkanon.attributes.builders`);
            the kind then needs the data profile.
    """

    kind: Literal["categorical"]
    hierarchy: str | None = None
    builder: BuilderConfig | None = None

    @model_validator(mode="after")
    def _one_source(self) -> CategoricalAttribute:
        if self.hierarchy is None and self.builder is None:
            raise ValueError(
                "hierarchy: required key is missing; a categorical attribute needs hierarchy "
                "(the path of its ARX hierarchy CSV, one line per value: leaf;parent;...;root) "
                "or builder (a hierarchy generated from the column's values, e.g. builder: "
                "{type: intervals, widths: [5, 10]})"
            )
        if self.hierarchy is not None and self.builder is not None:
            raise ValueError(
                "builder: give exactly one of hierarchy (an ARX hierarchy CSV) and builder, "
                "not both"
            )
        problem = None if self.builder is None else builder_problem(self.builder)
        if problem is not None:
            raise ValueError(problem)
        return self

    def known_kind(self) -> Kind | None:  # noqa: D102
        if self.hierarchy is None:
            return None
        return categorical_kind(
            self.name, self.weight, load_arx_hierarchy(self.hierarchy, self.name)
        )


class NominalAttribute(_QuasiIdentifier):
    """Boolean or nominal values (Shi et al. 2024, eq. 16-17; Yang et al. 2014, Table 4 as vectors).

    Attributes:
        values: the domain; discovered from the data when omitted.
        encoding: ``indicator`` (0/1 distance, mode centroid) or ``vector``
            (Yang et al. 2014, eq. 6-7: loss against the class's mean vector, mode published).
    """

    kind: Literal["nominal"]
    values: tuple[str, ...] | None = None
    encoding: Literal["indicator", "vector"] = "indicator"

    def known_kind(self) -> Kind | None:  # noqa: D102
        if self.values is None:
            return None
        return nominal_kind(self.name, self.weight, self.values, self.encoding)


class SemanticAttribute(_QuasiIdentifier):
    """Codes whose prefixes form a code hierarchy tree (Yang et al. 2014, definition 6).

    Attributes:
        length: the number of characters of every code (e.g. 5 for ZIP codes, 6 for
            Adult's fnlwgt); each prefix is a level of the tree.
        beta: level weights ``W(j-1,j) = 1/(j-1)^beta`` (1 in the paper's experiments).
        root_weight: ``W(1,2)``, the weight between the root and the first character
            (0 in the paper's experiments).
    """

    kind: Literal["semantic"]
    length: Annotated[Int, Field(ge=1, le=18)]
    beta: Annotated[Float, Field(ge=0)] = 1.0
    root_weight: Annotated[Float, Field(ge=0)] = 0.0

    def known_kind(self) -> Kind:  # noqa: D102
        return SemanticKind(
            self.name, self.weight, length=self.length, beta=self.beta, root_weight=self.root_weight
        )


class DateAttribute(_QuasiIdentifier):
    """A date quasi-identifier: days since 1970-01-01, continuous (:mod:`..attributes.dates`).

    Attributes:
        format: strptime pattern of text values (``%d/%m/%Y``); date-typed values
            (Parquet, Spark ``DateType``) need none.
        levels: calendar units of full-domain generalization, finest first, from
            ``day, week, month, quarter, year, decade`` (at most one of ``week`` and
            ``month``); the root ``*`` is added.
    """

    kind: Literal["date"]
    format: str = "%Y-%m-%d"
    levels: tuple[str, ...] = Field(default=DEFAULT_LEVELS, min_length=1)

    units: ClassVar[tuple[str, ...]] = DATE_UNITS

    @field_validator("format")
    @classmethod
    def _format(cls, fmt: str | None) -> str | None:
        return fmt if fmt is None else _unless(format_problem(fmt), fmt)

    @field_validator("levels")
    @classmethod
    def _levels(cls, units: tuple[str, ...]) -> tuple[str, ...]:
        return _unless(levels_problem(units, cls.units), units)


class TimestampAttribute(DateAttribute):
    """A timestamp quasi-identifier: seconds since the epoch, UTC (:mod:`..attributes.dates`).

    Attributes:
        format: strptime pattern of text values; ``None`` reads ISO 8601 (an offset
            such as ``Z`` or ``+01:00`` honoured).
        timezone: the IANA zone of values that carry no offset (text without one,
            ``TimestampNTZ``, Parquet timestamps not adjusted to UTC).
        levels: as a date's, with ``hour`` as the finest unit allowed.
    """

    kind: Literal["timestamp"]  # type: ignore[assignment]
    format: str | None = None  # type: ignore[assignment]
    timezone: str = "UTC"

    units: ClassVar[tuple[str, ...]] = TIMESTAMP_UNITS

    @field_validator("timezone")
    @classmethod
    def _zone(cls, zone: str) -> str:
        return _unless(zone_problem(zone), zone)


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
        DateAttribute,
        TimestampAttribute,
        IdentifierAttribute,
        KeepAttribute,
    ],
    Field(discriminator="kind"),
]
"""One ``attributes[]`` entry, validated into the class its ``kind`` selects."""
ATTRIBUTE_KINDS = QI_KINDS + ("identifier", "keep")


class SensitiveLevel(_Frozen):
    """One sensitivity level of the sensitive attribute (Shi et al. 2024, section 1.4).

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
        kind: how the evaluation compares its values (the privacy models always treat
            them as categories): ``numeric`` on a line (binned above 1,000 distinct
            values), ``categorical`` as labels, ``auto`` (default) numeric when the
            input column is a number type, or, for a text column, when every value that
            is not missing (``input.missing_values``) reads as a number and it holds
            more than 1,000 distinct values; categorical otherwise, and whenever
            ``levels`` or ``values`` declare the domain.
        levels: optional: the levels from low to high sensitivity (needed by
            (H,p,k)-anonymity and the level entropy metrics); every value that occurs
            in the data must then belong to exactly one level.
        values: optional: the domain, lowest first (an ordered ground distance of
            t-closeness uses this order); every value in the data must be in it.
            Without ``levels`` or ``values`` the domain is what the data holds.
    """

    name: str
    kind: Literal["auto", "categorical", "numeric"] = "auto"
    levels: tuple[SensitiveLevel, ...] | None = Field(default=None, min_length=1)
    values: tuple[str, ...] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _levels_and_values(self) -> SensitiveConfig:
        levels = None if self.levels is None else [(lv.name, lv.values) for lv in self.levels]
        check_sensitive_levels(levels, self.values)
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
    """A set-valued sensitive attribute (Gong et al. 2016's transaction part), e.g. diagnosis codes.

    Attributes:
        name: the column (for ``layout: long``, the name the joined sets take).
        kind: ``itemset``.
        layout: ``delimited`` (a string of items joined by ``separator``; CSV),
            ``array`` (a Parquet/ORC ``array<string>`` column) or ``long`` (a
            separate table, see :class:`LongItemsConfig`).
        separator: the item separator of the ``delimited`` layout.
        taxonomy: ARX-format hierarchy CSV whose leaves are the items.
        fanout: without ``taxonomy``: an even taxonomy over the items the data
            holds (sorted), ``fanout`` children per node (Gong et al. 2016, section 4.1 uses 5).
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
        check_itemset(self.taxonomy, self.fanout, self.layout, self.long)
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
            class, a common code prefix), as Chai and Feng 2015 publishes; ``anatomy`` (a
            set-valued sensitive attribute only) publishes two tables, ``rt`` (record
            id, exact quasi-identifiers, group id) and ``tt`` (group id, generalized
            set, count), as Gong et al. 2016 does.
        max_suppressed_share: the largest share of the input rows a run may suppress,
            all causes together (malformed records, missing or invalid values, rows
            the algorithm could not publish); a run above it, or one that would publish
            no row, fails (exit 2) naming the causes, and nothing is written. ``1``
            allows any suppression but an empty release.
        permissions: who may read what the run writes (the output, its staging
            directory, ``--metrics-out``): ``owner`` (directories ``0700``, files
            ``0600``) or ``group`` (``0750`` and ``0640``).
    """

    path: str | None = None
    table: str | None = None
    format: Literal["parquet", "csv"] = "parquet"
    mode: Literal["error", "overwrite"] = "error"
    decimals: Annotated[Int, Field(ge=0)] | None = None
    publish: Literal["centroids", "generalized", "anatomy"] = "centroids"
    max_suppressed_share: Annotated[Float, Field(ge=0, le=1)] = 0.5
    permissions: Literal["owner", "group"] = "owner"

    @model_validator(mode="after")
    def _one_target(self) -> OutputConfig:
        check_output_target(self.path, self.table, self.format)
        return self

    @property
    def target(self) -> str:
        """The output as the messages name it."""
        return repr(self.path) if self.table is None else f"table {self.table}"


class AreConfig(_Frozen):
    """ARE of random count queries (Gong, Yang and Luo 2016, section 4.2, eqs 4-6).

    Measured after verification on a relational-transaction job (``sensitive.kind:
    itemset``); how, and the readings, in ``docs/method.md``.

    Attributes:
        enabled: measure it (``metrics.json`` key ``are``).
        queries: ``qt``, the count queries averaged over (1000 in Gong, Yang and Luo
            2016); a query whose answer on the input is 0 is replaced by the next drawn.
        qd: quasi-identifiers per query (5 there); more than the job has means all.
        selectivity: ``s`` of eq. 4, a fraction in ``(0, 1]`` (their "s = 2" is 2 %,
            ``0.02``): each predicate keeps about ``s^(1/(qd+1))`` of its domain.
        seed: the seed of the queries and of the candidate-set sample; ``None``: the
            job's ``seed``.
        candidate_sets: the most distinct sets of the input the set predicate's
            combinations are drawn from; above it, a seeded sample of this many.
    """

    enabled: bool = True
    queries: Annotated[Int, Field(ge=1, le=100_000)] = 1000
    qd: Annotated[Int, Field(ge=1)] = 5
    selectivity: Float = 0.02
    seed: Int | None = None
    candidate_sets: Annotated[Int, Field(ge=1, le=1_000_000)] = 1000

    @field_validator("selectivity")
    @classmethod
    def _fraction(cls, s: float) -> float:
        if not 0 < s <= 1:
            raise ValueError(
                "the selectivity is a fraction in (0, 1]: 2 % is 0.02 (Gong, Yang and Luo "
                "2016 write s = 2 for 2 %)"
            )
        return s


class MetricsConfig(_Frozen):
    """Optional utility measures of the release.

    Attributes:
        are: average relative error of count queries (relational-transaction jobs).
    """

    are: AreConfig = AreConfig()


class StreamConfig(_Frozen):
    """A condensation stream (``sparkanon stream``; Aggarwal and Yu 2004's dynamic algorithm).

    The initial groups come from the job's ``input`` (a static batch); then records
    arriving as files in ``source`` join the nearest group, a group reaching ``2k``
    splits, and due groups release synthetic records to ``output.path``.

    Attributes:
        source: the folder the record files arrive in.
        format: their format (``csv`` with a header, or ``parquet``).
        options: reader options of a CSV source (``header`` defaults to true).
        checkpoint: the checkpoint folder (state and progress): a restarted stream with
            the same one continues where it stopped, no record counted twice or lost.
        trigger: ``available_now`` (process what has arrived, then stop) or an interval
            (``"10 seconds"``) to run until ``run_seconds`` pass or the process stops.
        run_seconds: how long an interval-triggered stream runs (unset: until stopped).
        max_files_per_trigger: files per micro-batch (unset: all that arrived).
        release_pending: a group releases once this many of its records are pending
            (unset, or under ``k``: ``k``).
        release_age: ... or once its last release is this many batches old (with at
            least ``k`` records pending: no release stands for fewer).
    """

    source: str
    format: Literal["csv", "parquet"] = "csv"
    options: dict[str, Any] = Field(default_factory=dict)
    checkpoint: str
    trigger: str = "available_now"
    run_seconds: Annotated[Float, Field(gt=0)] | None = None
    max_files_per_trigger: Annotated[Int, Field(ge=1)] | None = None
    release_pending: Annotated[Int, Field(ge=1)] | None = None
    release_age: Annotated[Int, Field(ge=0)] = 3


class ReportConfig(_Frozen):
    """The evaluation and HTML report written beside ``metrics.json``.

    ``sparkanon evaluate`` takes the same settings as options.

    Attributes:
        enabled: ``sparkanon run`` evaluates the release before the commit and writes
            ``evaluation.json`` and ``report.html`` beside ``metrics.json``.
        sampling_fraction: the share of the population the input is (``(0, 1]``; 1: the
            input is the whole population): the journalist and marketer attackers and
            the population uniqueness estimators read it.
        threshold: a record whose re-identification risk exceeds it is *at risk* (ARX's
            records-at-risk threshold), in ``(0, 1]``.
        suda_max_size: SUDA2's largest quasi-identifier subset searched for minimal
            sample uniques; 0 leaves SUDA2 out (its cost grows with the subsets).
        label: the column a classifier predicts for the utility measure (e.g. Adult's
            ``income``); unset: no classifier.
        holdout: held-out original rows of the same population (not in the input), read
            like the input: the classifier's test rows and the control set of the
            singling-out, linkability and inference attacks; unset: neither runs.
        attacks: targets per singling-out, linkability and inference attack.
        bins: equal-width bins of a numeric column's distribution (utility).
        weight: a column of sampling weights (how many people of the population each
            row stands for), read by sdcMicro's individual risk instead of
            ``1 / sampling_fraction``; unset: none.
        population: a population table the input was sampled from, read like the input:
            the journalist and marketer attackers then use each input class's size in
            it (ARX's population table); unset: the input is its own population.
    """

    enabled: bool = True
    sampling_fraction: Annotated[Float, Field(gt=0, le=1)] = 1.0
    threshold: Annotated[Float, Field(gt=0, le=1)] = 0.2
    suda_max_size: Annotated[Int, Field(ge=0, le=8)] = 0
    label: str | None = None
    holdout: str | None = None
    attacks: Annotated[Int, Field(ge=10, le=100_000)] = 500
    bins: Annotated[Int, Field(ge=2, le=1000)] = 20
    weight: str | None = None
    population: str | None = None


AlgorithmSection = algorithm_config()
"""The ``algorithm`` section as registered when the module is imported (see
:func:`_follow_registry`)."""


class JobConfig(_Frozen):
    """The whole job configuration."""

    input: InputConfig
    attributes: tuple[AttributeConfig, ...] = Field(min_length=1)
    sensitive: SensitiveAttribute
    model: tuple[ModelConfig, ...] = ()
    algorithm: AlgorithmSection = MaaSlieParams()
    partitioning: PartitioningConfig = PartitioningConfig()
    output: OutputConfig
    metrics: MetricsConfig = MetricsConfig()
    stream: StreamConfig | None = None
    report: ReportConfig = ReportConfig()
    seed: Int = 0

    @field_validator("model", mode="before")
    @classmethod
    def _one_or_many(cls, raw: Any) -> Any:
        return model_list(raw)

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


def _follow_registry() -> None:
    """Rebuild :class:`JobConfig`'s ``algorithm`` key over the algorithms registered now.

    Called when :data:`sparkanon.algorithms.ALGORITHMS` changes, so an algorithm
    registered after import is configured like the others, and an unregistered one is
    an unknown name again.
    """
    union = get_args(algorithm_config())[0]
    JobConfig.model_fields["algorithm"].annotation = union
    JobConfig.model_rebuild(force=True)


REGISTRY_CHANGED.append(_follow_registry)
