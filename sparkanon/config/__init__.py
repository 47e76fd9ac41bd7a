"""The job configuration: one typed, frozen tree, validated when it is loaded.

A job config is a YAML file (see ``conf/adult_hpk.yaml``); :func:`load_config` reads
it, applies ``--set key=value`` overrides and validates it. Any problem raises
:class:`~sparkanon.errors.ConfigError` naming the key, the bad value and a fix; every
check that needs no data runs here, so ``sparkanon validate`` reports it.

Modules:

* :mod:`.schema` - the frozen pydantic classes (:class:`JobConfig` and its sections);
* :mod:`.rules` - the checks beyond a key's type: per section, and across sections
  per job family (columns, models, blocks, full-domain levels, relational-transaction);
* :mod:`.overrides` - ``--set`` parsing (:func:`apply_overrides`, :func:`key_types`,
  :func:`override_value`);
* :mod:`.partitions` - ``--partition`` specs (:func:`parse_partition`,
  :func:`partition_text`);
* :mod:`.messages` - the one translator of pydantic's errors into lines naming keys
  (also used by :func:`sparkanon.models.parse_models`);
* :mod:`.loading` - reading the file and validating (:func:`load_config`,
  :func:`parse_config`);
* :mod:`.published` - what of a config a release publishes (``config.yaml``): an
  allow-list of keys, only parsing reader options, URIs without credentials.

Relative paths (input, hierarchies, output) are resolved against the current working
directory of the process that starts the job.
"""

from sparkanon.config.loading import load_config, parse_config
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
    "load_config",
    "override_value",
    "parse_config",
    "parse_partition",
    "partition_text",
]
