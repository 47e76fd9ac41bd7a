"""The job configuration: one typed, frozen tree, validated when it is loaded.

A job config is a YAML file (see ``conf/adult_hpk.yaml``). :func:`load_config`
reads it, applies ``--set key=value`` overrides, validates every field and then
runs the cross-field checks in :meth:`JobConfig._cross_checks` (the only place
where fields are checked against each other). Any problem raises
:class:`~sparkanon.errors.ConfigError` naming the key, the bad value and a fix.

Relative paths (input, hierarchies, output) are resolved against the current
working directory of the process that starts the job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    field_validator,
    model_validator,
)

from sparkanon.attributes.kinds import RANGE_SEPARATOR
from sparkanon.errors import ConfigError

QI_KINDS = ("continuous", "ordinal", "categorical", "nominal", "semantic")
"""Attribute kinds that are quasi-identifiers (seed 000 section 1.5, seed 003 section 3)."""


Int = Annotated[int, Strict()]
"""An integer key: YAML's ``true`` is not 1, ``"8"`` and ``8.0`` are not 8."""
Float = Annotated[float, Strict()]
"""A real-valued key: an integer such as ``1`` is accepted, ``true`` and ``"0.5"`` are not."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class InputConfig(_Frozen):
    """Where and how to read the input table.

    Attributes:
        format: ``csv``, ``parquet`` or ``orc``.
        path: file or directory to read.
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
    """

    format: Literal["csv", "parquet", "orc"] = "csv"
    path: str
    options: dict[str, Any] = Field(default_factory=dict)
    columns: tuple[str, ...] | None = None
    missing_values: tuple[str, ...] = ("?", "")
    on_missing: Literal["drop", "error"] = "drop"
    on_invalid: Literal["error", "drop"] = "error"
    on_malformed: Literal["error", "drop"] = "error"
    glob: str | None = None


class AttributeConfig(_Frozen):
    """One column of the input and what it is.

    Attributes:
        name: column name.
        kind: ``continuous``, ``ordinal``, ``categorical`` (taxonomy tree) and
            ``nominal`` (boolean/nominal) are quasi-identifiers;
            ``identifier`` columns are always dropped; ``keep`` columns are
            copied to the output unchanged. Columns not listed are dropped.
        weight: weight of this attribute in the tuple distance (seed 000 sets
            all weights to 1).
        order: ordinal only: the values from lowest to highest rank.
        hierarchy: categorical only: ARX-format hierarchy CSV (one row per
            leaf, most specific value first, root last, ``;``-separated).
        values: nominal only, optional: the domain; discovered from the data
            when omitted.
        rank_weights: ordinal only, optional: the weights ``W(j-1,j)`` between
            consecutive ranks (seed 003 eq. 4), one fewer than ``order``;
            all 1 when omitted (then eq. 4 is seed 000's eq. 6).
        centroid: ordinal only: ``mean_frequency`` (seed 000's "center mean
            frequency" rule, eq. 7-13; the default) or ``median`` (the
            median rank, our reading of seed 003's eq. 5).
        encoding: nominal only: ``indicator`` (0/1 distance, mode centroid,
            seed 000 eq. 16-17; the default) or ``vector`` (seed 003 Table 4 and
            eq. 6-7: loss against the class's mean vector, mode published).
        length: semantic only: the number of characters of every code (e.g. 5
            for ZIP codes, 6 for Adult's fnlwgt); each prefix is a level of the
            code hierarchy tree (seed 003 definition 6).
        beta: semantic only: level weights ``W(j-1,j) = 1/(j-1)^beta``
            (seed 003, section 3.2; 1 in the seed's experiments).
        root_weight: semantic only: ``W(1,2)``, the weight between the root and
            the first character (0 in the seed's experiments).
    """

    name: str
    kind: Literal[
        "continuous", "ordinal", "categorical", "nominal", "semantic", "identifier", "keep"
    ]
    weight: Annotated[Float, Field(gt=0)] = 1.0
    order: tuple[str, ...] | None = None
    hierarchy: str | None = None
    values: tuple[str, ...] | None = None
    rank_weights: tuple[Annotated[Float, Field(gt=0)], ...] | None = None
    centroid: Literal["mean_frequency", "median"] | None = None
    encoding: Literal["indicator", "vector"] | None = None
    length: Annotated[Int, Field(ge=1, le=18)] | None = None
    beta: Annotated[Float, Field(ge=0)] = 1.0
    root_weight: Annotated[Float, Field(ge=0)] = 0.0

    @property
    def is_quasi_identifier(self) -> bool:
        """Whether this column is a quasi-identifier."""
        return self.kind in QI_KINDS


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
    """The sensitive attribute and its levels.

    Attributes:
        name: column name.
        levels: the levels from low to high sensitivity; every value that
            occurs in the data must belong to exactly one level.
    """

    name: str
    levels: tuple[SensitiveLevel, ...] = Field(min_length=1)


class ModelConfig(_Frozen):
    """The privacy model the published table must satisfy.

    Attributes:
        name: ``hpk`` ((H,p,k)-anonymity, seed 000 definition 7),
            ``p_sensitive`` (p-sensitive k-anonymity) or ``k`` (k-anonymity).
        k: minimum rows per equivalence class.
        p: minimum distinct sensitive values per class.
        h: minimum distinct sensitivity levels per class.
    """

    name: Literal["hpk", "p_sensitive", "k"] = "hpk"
    k: Annotated[Int, Field(ge=1)]
    p: Annotated[Int, Field(ge=1)] = 1
    h: Annotated[Int, Field(ge=1)] = 1


class AlgorithmConfig(_Frozen):
    """The per-block algorithm and its parameters.

    Attributes:
        name: ``maa_slie`` (seed 000 Algorithm 1), ``gpkc``
            (GreedyPKClustering, seed 000's baseline), ``maa_sae`` and
            ``maa_minil`` (seed 003 Algorithm 1 and its baseline), ``mdav``
            (Domingo-Ferrer and Mateo-Sanz 2002) or ``kl_cluster`` ((K,L)-anonymity
            clustering, seed 001); ``sparkanon.algorithms.ALGORITHMS`` lists them.
        psi_weights: (w1, w2) of the privacy safety index, eq. 21; w1 + w2 = 1.
        entropy_base: logarithm base of the level entropy, eq. 1 (the seed's
            "lg" is base 10).
        max_iterations: ``kl_cluster`` only: most rounds of centroid updates
            (seed 001 steps 3-13 repeat "until the centroids no longer change").
        apf_rule: ``maa_sae`` only: how candidates are ranked by the anonymous
            protection factor ``APF = EA / ILA`` (seed 003 eq. 16).
            ``gain_then_loss`` (default): candidates that raise the sensitive
            entropy (``EA > 0``) by largest APF, ranked above the others, which
            go by least ``ILA``. ``seed``: every candidate by the literal ratio;
            once a class's entropy cannot rise (few sensitive values) a negative
            ratio favours the candidate of *largest* loss and classes merge into
            one per block (``docs/method.md``).
    """

    name: str = "maa_slie"
    psi_weights: tuple[Float, Float] = (0.5, 0.5)
    entropy_base: Annotated[Float, Field(gt=1)] = 10.0
    max_iterations: Annotated[Int, Field(ge=1)] = 10
    apf_rule: Literal["gain_then_loss", "seed"] = "gain_then_loss"

    @field_validator("name")
    @classmethod
    def _known_algorithm(cls, name: str) -> str:
        from sparkanon.algorithms import ALGORITHMS

        if name not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {name!r}; choose one of {sorted(ALGORITHMS)}")
        return name


class PartitioningConfig(_Frozen):
    """Mondrian-style blocking before the per-block algorithm.

    Attributes:
        max_block_rows: blocks are cut until they hold at most this many rows
            (a block is not cut when a cut would leave a side unable to host a
            class).
        task_rows: nodes of the tree larger than this are cut on the cluster,
            level by level; smaller ones are cut by one task on its own rows with
            the same rule (the tree does not depend on it; it trades passes over the
            data for memory per task). The job lowers it further so that every core
            gets at least two top blocks.
        infeasible_blocks: ``merge`` undoes a cut whose side could not host a
            class; ``reconcile`` keeps such a side as a block whose rows are
            sent to the nearest feasible block's classes.
    """

    max_block_rows: Annotated[Int, Field(ge=2)] = 2000
    task_rows: Annotated[Int, Field(ge=2)] = 200_000
    infeasible_blocks: Literal["merge", "reconcile"] = "merge"


class OutputConfig(_Frozen):
    """Where to publish.

    Attributes:
        path: output directory; the table goes to ``<path>/data`` and the
            metrics to ``<path>/metrics.json``.
        format: ``parquet`` or ``csv``.
        mode: ``error`` fails when the path exists, ``overwrite`` replaces it
            (only after the new table passed verification).
        decimals: rounding of published continuous centroids (``None`` keeps
            full precision).
        publish: ``centroids`` replaces each quasi-identifier by its class
            centroid (micro-aggregation); ``generalized`` by the class's
            generalized value (a numeric range, the taxonomy node covering the
            class, a common code prefix), as seed 001 publishes.
    """

    path: str
    format: Literal["parquet", "csv"] = "parquet"
    mode: Literal["error", "overwrite"] = "error"
    decimals: Annotated[Int, Field(ge=0)] | None = None
    publish: Literal["centroids", "generalized"] = "centroids"


class JobConfig(_Frozen):
    """The whole job configuration."""

    input: InputConfig
    attributes: tuple[AttributeConfig, ...] = Field(min_length=1)
    sensitive: SensitiveConfig
    model: ModelConfig
    algorithm: AlgorithmConfig = AlgorithmConfig()
    partitioning: PartitioningConfig = PartitioningConfig()
    output: OutputConfig
    seed: Int = 0

    @property
    def quasi_identifiers(self) -> tuple[AttributeConfig, ...]:
        """The quasi-identifier attributes in config order."""
        return tuple(a for a in self.attributes if a.is_quasi_identifier)

    @property
    def kept_columns(self) -> tuple[str, ...]:
        """Columns copied to the output unchanged."""
        return tuple(a.name for a in self.attributes if a.kind == "keep")

    @model_validator(mode="after")
    def _cross_checks(self) -> JobConfig:
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
        for i, attr in enumerate(self.attributes):
            key = f"attributes[{i}] ({attr.name})"
            if attr.kind == "ordinal":
                if not attr.order:
                    problems.append(f"{key}: ordinal attributes need 'order' (lowest to highest)")
                elif len(set(attr.order)) != len(attr.order):
                    problems.append(f"{key}.order: repeated values")
                else:
                    clash = [v for v in attr.order if RANGE_SEPARATOR in v]
                    if clash:
                        problems.append(
                            f"{key}.order: value {clash[0]!r} contains {RANGE_SEPARATOR!r}, which "
                            "separates the bounds of a published range [low, high]; rename it"
                        )
            elif attr.order is not None:
                problems.append(f"{key}.order: only ordinal attributes take 'order'")
            if attr.kind == "categorical" and not attr.hierarchy:
                problems.append(f"{key}: categorical attributes need 'hierarchy' (ARX CSV path)")
            elif attr.kind != "categorical" and attr.hierarchy is not None:
                problems.append(f"{key}.hierarchy: only categorical attributes take 'hierarchy'")
            if attr.values is not None and attr.kind != "nominal":
                problems.append(f"{key}.values: only nominal attributes take 'values'")
            if attr.encoding is not None and attr.kind != "nominal":
                problems.append(f"{key}.encoding: only nominal attributes take 'encoding'")
            for option in ("rank_weights", "centroid"):
                if getattr(attr, option) is not None and attr.kind != "ordinal":
                    problems.append(f"{key}.{option}: only ordinal attributes take {option!r}")
            if attr.kind == "ordinal" and attr.rank_weights is not None and attr.order:
                if len(attr.rank_weights) != len(attr.order) - 1:
                    problems.append(
                        f"{key}.rank_weights: {len(attr.rank_weights)} weights for "
                        f"{len(attr.order)} ranks; give one weight per pair of consecutive "
                        f"ranks ({len(attr.order) - 1})"
                    )
            if attr.kind == "semantic" and attr.length is None:
                problems.append(
                    f"{key}: semantic attributes need 'length' (characters per code, e.g. 6)"
                )
            elif attr.kind != "semantic":
                if attr.length is not None:
                    problems.append(f"{key}.length: only semantic attributes take 'length'")
                for option, default in (("beta", 1.0), ("root_weight", 0.0)):
                    if getattr(attr, option) != default:
                        problems.append(f"{key}.{option}: only semantic attributes take {option!r}")
        seen: dict[str, str] = {}
        for level in self.sensitive.levels:
            for value in level.values:
                if value in seen:
                    problems.append(
                        f"sensitive.levels: value {value!r} is in both level {seen[value]!r} "
                        f"and level {level.name!r}"
                    )
                seen[value] = level.name
        level_names = [lv.name for lv in self.sensitive.levels]
        if len(set(level_names)) != len(level_names):
            problems.append("sensitive.levels: level names must be unique")
        m = self.model
        if m.name in ("hpk", "p_sensitive") and m.p > m.k:
            problems.append(
                f"model.p: p={m.p} > k={m.k}; no class can hold more distinct sensitive "
                "values than rows. Use p <= k"
            )
        if m.name == "hpk" and m.h > m.p:
            problems.append(
                f"model.h: H={m.h} > p={m.p}; each level needs at least one distinct value. "
                "Use H <= p"
            )
        if m.name == "hpk" and m.h > len(self.sensitive.levels):
            problems.append(
                f"model.h: H={m.h} but sensitive.levels defines only "
                f"{len(self.sensitive.levels)} levels"
            )
        if m.name in ("hpk", "p_sensitive") and m.p > len(seen):
            problems.append(
                f"model.p: p={m.p} but sensitive.levels lists only {len(seen)} distinct values"
            )
        from sparkanon.algorithms import ALGORITHMS

        algorithm = ALGORITHMS.get(self.algorithm.name)
        if algorithm is not None and m.name not in algorithm.models:
            problems.append(
                f"model.name: algorithm {self.algorithm.name!r} does not guarantee the model "
                f"{m.name!r}; use one of {sorted(algorithm.models)} or another algorithm"
            )
        w1, w2 = self.algorithm.psi_weights
        if w1 < 0 or w2 < 0 or abs(w1 + w2 - 1.0) > 1e-9:
            problems.append(
                f"algorithm.psi_weights: {list(self.algorithm.psi_weights)} must be two "
                "non-negative weights with w1 + w2 = 1 (eq. 21)"
            )
        if self.partitioning.max_block_rows < m.k:
            problems.append(
                f"partitioning.max_block_rows: {self.partitioning.max_block_rows} < k={m.k}; "
                "a block must be able to hold a class"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def effective_hpk(self) -> tuple[int, int, int]:
        """The (H, p, k) the chosen model enforces (1 for the parts it ignores)."""
        m = self.model
        if m.name == "hpk":
            return m.h, m.p, m.k
        if m.name == "p_sensitive":
            return 1, m.p, m.k
        return 1, 1, m.k


def apply_overrides(raw: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply ``key.sub=value`` overrides to a raw config mapping.

    Args:
        raw: the parsed YAML mapping (not modified).
        overrides: strings ``dotted.key=value``; the value is parsed as YAML,
            so ``model.k=10`` gives an int and ``algorithm.psi_weights=[0.3,0.7]``
            a list. List items are addressed by index (``attributes.0.weight``).

    Returns:
        A new mapping with the overrides applied.

    Raises:
        ConfigError: an override is not ``key=value`` or its path does not exist.
    """
    result: Any = yaml.safe_load(yaml.safe_dump(raw))
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set {item!r}: expected key=value, e.g. --set model.k=10")
        key, _, text = item.partition("=")
        parts = key.strip().split(".")
        if any(not part for part in parts):
            raise ConfigError(f"--set {item!r}: empty key or key part; expected e.g. model.k=10")
        node = result
        for depth, part in enumerate(parts[:-1]):
            node = _child(node, part, ".".join(parts[: depth + 1]), create=True)
        last = parts[-1]
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            raise ConfigError(
                f"--set {key}: value {text!r} is not valid YAML; quote strings and close brackets"
            ) from None
        if isinstance(node, list):
            if not last.isdigit() or int(last) >= len(node):
                raise ConfigError(f"--set {key}: {last!r} is not an index of that list")
            node[int(last)] = value
        elif isinstance(node, dict):
            node[last] = value
        else:
            raise ConfigError(f"--set {key}: {'.'.join(parts[:-1])!r} is not a mapping")
    return result


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
        lines = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown key (check the spelling; see docs/configuration.md)"
            elif err["type"] == "missing":
                msg = "required key is missing"
            elif err["type"] == "int_type":
                msg = (
                    "expected an integer such as 8 (true/false, quoted or decimal numbers are not)"
                )
            elif err["type"] == "float_type":
                msg = "expected a number such as 0.5 (true/false and quoted numbers are not)"
            bad = err.get("input")
            shown = "" if err["type"] in ("missing", "value_error") else f" (got {bad!r})"
            lines.append(f"{loc}: {msg}{shown}")
        raise ConfigError(f"invalid config {source}:\n  " + "\n  ".join(lines)) from None


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
