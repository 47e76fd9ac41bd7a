"""What of a job config a release publishes: ``config.yaml`` beside the data.

A release's ``config.yaml`` tells its reader how the data was made (the attributes and
their kinds, levels and builders, the model, the algorithm, the output format) and lets
``sparkanon/tools/verify_release.py``, ``sparkanon evaluate OUTPUT`` and ``sparkanon
reconstruct`` re-read it as a config. It is written from an allow-list
(:data:`PUBLISHED_KEYS`), never from the config as given, because the config is also
where a user may have put what must not be published:

* **Reader and writer options** (``input.options``, ``sensitive.long.options``,
  ``stream.options``) are free-form maps passed to Spark, where a credential fits as
  well as a CSV separator (``fs.s3a.secret.key``, a JDBC ``password``). Only the options
  named in :data:`HARMLESS_OPTIONS` (how a file is parsed) are written, and of those
  none whose name or value looks like a secret (:func:`looks_secret`).
* **Paths** of any section (input, output, hierarchies, holdout...) are written without
  the user information and the query of a URI (``s3a://AKIA...:secret@bucket/x`` ->
  ``s3a://bucket/x``; an ``?sig=...`` token): :func:`strip_uri_secrets`.
* A key the schema gains is withheld until it is added to :data:`PUBLISHED_KEYS`.

Credentials belong in Spark's or Hadoop's configuration (``spark-submit --conf
spark.hadoop.fs.s3a...``, the environment, an instance profile), never in the job config
(``docs/operations.md``, "Credentials").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import yaml

from sparkanon.config.schema import JobConfig

HARMLESS_OPTIONS = frozenset(
    name.lower()
    for name in (
        "header",
        "sep",
        "delimiter",
        "quote",
        "escape",
        "comment",
        "encoding",
        "charset",
        "lineSep",
        "dateFormat",
        "timestampFormat",
        "nullValue",
        "emptyValue",
        "nanValue",
        "inferSchema",
        "mergeSchema",
        "multiLine",
        "compression",
        "ignoreLeadingWhiteSpace",
        "ignoreTrailingWhiteSpace",
    )
)
"""Reader and writer options a release's ``config.yaml`` keeps (compared case-insensitively,
as Spark does): how a file is parsed, nothing about where or as whom it is read. Any other
option (``fs.s3a.*``, ``user``, ``password``, ``url``...) is left out."""

SECRET_WORDS = ("password", "passwd", "secret", "token", "credential", "key", "signature")
"""An option whose name or value contains one of these (any case) is never written. Only
free-form maps are tested: typed config keys (a ``long.key`` column, ``algorithm`` names)
are not options and keep their names."""

ALL = None
"""A section published whole: typed values only (names, kinds, numbers, labels, paths)."""

PUBLISHED_KEYS: Mapping[str, tuple[str, ...] | None] = {
    "input": (
        "format",
        "path",
        "table",
        "partition",
        "options",
        "columns",
        "missing_values",
        "on_missing",
        "unlisted",
        "on_invalid",
        "on_malformed",
        "glob",
        "max_split_bytes",
    ),
    "attributes": ALL,
    "sensitive": ALL,
    "model": ALL,
    "algorithm": ALL,
    "partitioning": ALL,
    "output": ("path", "table", "format", "mode", "decimals", "publish", "max_suppressed_share"),
    "metrics": ALL,
    "stream": (
        "source",
        "format",
        "options",
        "checkpoint",
        "trigger",
        "run_seconds",
        "max_files_per_trigger",
        "release_pending",
        "release_age",
    ),
    "report": ALL,
    "seed": ALL,
}
"""The config keys a release's ``config.yaml`` holds, per top-level section (:data:`ALL`:
the whole section). Within them free-form ``options`` maps are filtered and every URI is
stripped of its secrets (module docstring)."""

_CONTAINER_SCHEMES = frozenset({"abfs", "abfss", "wasb", "wasbs"})
"""Schemes whose user information is a container name, not a user."""
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^?#]*)")


def looks_secret(text: Any) -> bool:
    """Whether an option name or value contains a :data:`SECRET_WORDS` word (any case)."""
    lowered = str(text).lower()
    return any(word in lowered for word in SECRET_WORDS)


def strip_uri_secrets(path: str) -> str:
    """A path without a URI's user information, query and fragment (local paths unchanged).

    ``s3a://AKIA:secret@bucket/x?sig=1`` -> ``s3a://bucket/x``. A password holding ``/``
    (as AWS secret keys may) still ends at the ``@`` that follows ``user:``; a ``host:port``
    authority (``hdfs://nn:8020/a@b``) is left alone, and so is the container of an Azure
    URI (``abfss://container@account.dfs.core.windows.net/``), which holds no ``:``.
    """
    m = _URI.match(path)
    if m is None:
        return path
    scheme, rest = m.groups()
    at, slash = rest.find("@"), rest.find("/")
    if at != -1 and (slash == -1 or at < slash):
        container = scheme.lower().rstrip(":/") in _CONTAINER_SCHEMES and ":" not in rest[:at]
        rest = rest if container else rest[at + 1 :]
    elif at != -1:
        colon = rest.find(":")
        if -1 < colon < slash and not rest[colon + 1 : slash].isdigit():
            rest = rest[at + 1 :]
    return scheme + rest


def harmless_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of :data:`HARMLESS_OPTIONS` whose name and value look like no secret."""
    return {
        name: value
        for name, value in options.items()
        if str(name).lower() in HARMLESS_OPTIONS
        and not looks_secret(name)
        and not looks_secret(value)
    }


def _cleaned(value: Any) -> Any:
    """``value`` with every ``options`` map filtered and every URI stripped, recursively."""
    if isinstance(value, str):
        return strip_uri_secrets(value)
    if isinstance(value, list):
        return [_cleaned(v) for v in value]
    if isinstance(value, Mapping):
        return {
            k: harmless_options(v) if k == "options" and isinstance(v, Mapping) else _cleaned(v)
            for k, v in value.items()
        }
    return value


def published_config(config: JobConfig) -> dict[str, Any]:
    """The config a release publishes (module docstring), as plain data.

    It loads back as a config (``sparkanon evaluate`` and the verifier read it): an empty
    model list (a perturbation job has no class model) is left out, as the user wrote it.
    """
    dumped = config.model_dump(mode="json", by_alias=True)
    out: dict[str, Any] = {}
    for section, value in dumped.items():
        if section not in PUBLISHED_KEYS or value is None:
            continue
        keys = PUBLISHED_KEYS[section]
        if keys is not ALL and isinstance(value, Mapping):
            value = {k: v for k, v in value.items() if k in keys}
        out[section] = _cleaned(value)
    if not out.get("model"):
        out.pop("model", None)
    return out


def published_config_yaml(config: JobConfig) -> str:
    """:func:`published_config` as YAML (``config.yaml`` of a release).

    It loads back as a config (``sparkanon/tools/verify_release.py`` and ``sparkanon evaluate``
    read it).
    """
    return yaml.safe_dump(published_config(config), sort_keys=False)


def config_sha256(config: JobConfig) -> str:
    """SHA-256 (hex) of :func:`published_config_yaml` (an output table's property).

    Of the text ``config.yaml`` holds, so no option left out of it (a password) can be
    tested against the hash.
    """
    return hashlib.sha256(published_config_yaml(config).encode("utf-8")).hexdigest()


__all__ = [
    "HARMLESS_OPTIONS",
    "PUBLISHED_KEYS",
    "SECRET_WORDS",
    "config_sha256",
    "harmless_options",
    "looks_secret",
    "published_config",
    "published_config_yaml",
    "strip_uri_secrets",
]
