"""The job configuration: one typed, frozen tree, validated when it is loaded.

A job config is a YAML file (see ``conf/adult_hpk.yaml``); :func:`read_config` reads
it, applies ``--set key=value`` overrides and validates each key and section. Any problem
raises :class:`~sparkanon.errors.ConfigError` naming the key, the bad value and a fix.
The rules across sections depend on the family of the algorithm and run in
:func:`sparkanon.families.check_config` (:func:`sparkanon.families.load_config` does
both), so ``sparkanon validate`` reports every check that needs no data.

Modules:

* :mod:`.schema` - the frozen pydantic classes (:class:`JobConfig` and its sections);
* :mod:`.rules` - the checks beyond a key's type: per section, and the rules across
  sections the families compose (columns, models, the rows a block holds);
* :mod:`.overrides` - ``--set`` parsing (:func:`apply_overrides`, :func:`key_types`,
  :func:`override_value`);
* :mod:`.partitions` - ``--partition`` specs (:func:`parse_partition`,
  :func:`partition_text`);
* :mod:`.messages` - the config's unions, for the translator of pydantic's errors into
  lines naming keys (:mod:`sparkanon.validation_errors`);
* :mod:`.loading` - reading the file and validating (:func:`read_config`,
  :func:`validate_config`);
* :mod:`.published` - what of a config a release publishes (``config.yaml``): an
  allow-list of keys, only parsing reader options, URIs without credentials.

Relative paths (input, hierarchies, output) are resolved against the current working
directory of the process that starts the job.
"""

from sparkanon.config.loading import read_config, validate_config
from sparkanon.config.overrides import apply_overrides, key_types, override_value
from sparkanon.config.partitions import parse_partition, partition_text
from sparkanon.config.rules import check_path_or_table, check_table_name
from sparkanon.config.schema import (
    ATTRIBUTE_KINDS,
    QI_KINDS,
    AreConfig,
    AttributeConfig,
    BinsConfig,
    CategoricalAttribute,
    ContinuousAttribute,
    DateAttribute,
    IdentifierAttribute,
    InputConfig,
    IntervalLevelsConfig,
    ItemsetConfig,
    JobConfig,
    KeepAttribute,
    LongItemsConfig,
    MetricsConfig,
    NominalAttribute,
    OrdinalAttribute,
    OutputConfig,
    PartitioningConfig,
    ReportConfig,
    SemanticAttribute,
    SensitiveAttribute,
    SensitiveConfig,
    SensitiveLevel,
    TimestampAttribute,
)

__all__ = [
    "ATTRIBUTE_KINDS",
    "QI_KINDS",
    "AreConfig",
    "AttributeConfig",
    "BinsConfig",
    "CategoricalAttribute",
    "ContinuousAttribute",
    "IdentifierAttribute",
    "InputConfig",
    "IntervalLevelsConfig",
    "ItemsetConfig",
    "JobConfig",
    "KeepAttribute",
    "LongItemsConfig",
    "MetricsConfig",
    "NominalAttribute",
    "OrdinalAttribute",
    "OutputConfig",
    "PartitioningConfig",
    "ReportConfig",
    "SemanticAttribute",
    "DateAttribute",
    "TimestampAttribute",
    "SensitiveAttribute",
    "SensitiveConfig",
    "SensitiveLevel",
    "apply_overrides",
    "check_path_or_table",
    "check_table_name",
    "key_types",
    "read_config",
    "override_value",
    "validate_config",
    "parse_partition",
    "partition_text",
]
