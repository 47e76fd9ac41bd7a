"""Stage ``commit``: where the verified publication goes, and the move that publishes it.

Two kinds of output (``output.path`` or ``output.table``), one protocol
(:class:`OutputTarget`): :meth:`~OutputTarget.check` before any work,
:meth:`~OutputTarget.staging` for the directory the publication is written to and
verified in, :meth:`~OutputTarget.commit` to publish it in one step, and
:meth:`~OutputTarget.discard` when the job fails. A staging directory holds the
published tables (``data``, or ``rt`` and ``tt``), ``metrics.json`` and the resolved
``config.yaml``.

* :class:`PathTarget`: staging is ``<path>.__sparkanon_tmp_<id>``, renamed to ``path``.
  Over an existing output (``mode: overwrite``) the old one is moved aside first
  (``<path>.__sparkanon_old_<id>``) and deleted last. A driver killed between the two
  renames leaves no ``path``; the next run on that output finishes the move
  (:func:`recover_interrupted_commit`): forward when the staged output is complete (it
  has ``metrics.json``, written only after verification), else back.
* :class:`TableTarget`: staging is a *version directory* of the table,
  ``<root>/[<col>=<value>/]v-<id>``; the commit points the table (or the partition) at
  its ``data`` folder by one metastore update and then deletes the version it replaced.
  A run holds a lock on its table or partition (a lock table in the metastore, created
  once), so two runs on the same output partition cannot interleave: the second fails.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import yaml

from sparkanon.config import JobConfig, partition_text
from sparkanon.engine.base import Catalog, Engine, TableInfo
from sparkanon.errors import ConfigError, OutputExistsError
from sparkanon.io import path_conflict
from sparkanon.stages._common import log

RESOLVED_CONFIG = "config.yaml"
"""The config the job ran (overrides applied), written beside ``metrics.json``."""
METRICS = "metrics.json"
"""The metrics file of an output (or of a table's version directory)."""
DATA = "data"
"""The folder of a one-table publication inside an output or a version directory."""
_TMP = ".__sparkanon_tmp_"
_OLD = ".__sparkanon_old_"


def resolved_config_yaml(config: JobConfig) -> str:
    """The job's config, overrides applied, as YAML (what ``scripts/verify_output.py`` reads)."""
    return yaml.safe_dump(config.model_dump(mode="json", by_alias=True), sort_keys=False)


def config_sha256(config: JobConfig) -> str:
    """SHA-256 of the resolved config (recorded in an output table's properties)."""
    return hashlib.sha256(resolved_config_yaml(config).encode("utf-8")).hexdigest()


def write_metadata(engine: Engine, config: JobConfig, staging: str, metrics: dict) -> None:
    """``metrics.json`` and the resolved config, into the staging directory."""
    engine.write_text(f"{staging}/{METRICS}", json.dumps(metrics, indent=2, sort_keys=False))
    engine.write_text(f"{staging}/{RESOLVED_CONFIG}", resolved_config_yaml(config))


class OutputTarget(ABC):
    """Where a job's publication goes (module docstring)."""

    @abstractmethod
    def check(self) -> None:
        """Refuse the output before any work (it exists, it would clobber the input...).

        Raises:
            UserError: the output cannot be written as configured.
        """

    @abstractmethod
    def staging(self) -> str:
        """The directory the publication is written to and verified in (made once)."""

    @abstractmethod
    def commit(
        self, staging: str, metrics: dict[str, Any], schemas: Mapping[str, list[tuple[str, str]]]
    ) -> str:
        """Publish the verified staging directory; return where its tables now are.

        Args:
            staging: the directory of :meth:`staging`.
            metrics: the job's metrics (written beside the tables).
            schemas: the Spark schema of each published table, by table name.

        Returns:
            The directory holding the published tables (``<dir>/<table name>``).
        """

    def acquire(self) -> None:  # noqa: B027 - most targets hold nothing
        """Take what the run must hold while it writes (a table's lock); nothing by default."""

    def recover(self) -> None:  # noqa: B027
        """Finish what a killed run left half done on this output; nothing by default."""

    def release(self) -> None:  # noqa: B027
        """Release what :meth:`acquire` took."""

    @abstractmethod
    def discard(self) -> None:
        """Remove the staging directory of a failed run, if it was made."""


class PathTarget(OutputTarget):
    """``output.path``: a directory, committed by a rename.

    Args:
        engine: the engine (its filesystem).
        config: the job config.
        reads_path: whether the input comes from ``input.path`` (not a given table).
    """

    def __init__(self, engine: Engine, config: JobConfig, reads_path: bool) -> None:
        assert config.output.path is not None
        self.engine = engine
        self.config = config
        self.reads_path = reads_path
        self.out_path = config.output.path.rstrip("/")
        self._staging: str | None = None

    def check(self) -> None:
        """Refuse an output inside or around the input, or an existing one under ``error``.

        Raises:
            ConfigError: the output is, contains or lies inside the input.
            OutputExistsError: the output exists and ``output.mode`` is ``error``.
        """
        config, engine = self.config, self.engine
        if self.reads_path and config.input.path is not None:
            inp = engine.canonical_path(config.input.path)
            out = engine.canonical_path(self.out_path)
            relation = path_conflict(inp, out)
            if relation is not None:
                raise ConfigError(
                    f"output.path: {config.output.path!r} ({out}) {relation} "
                    f"{config.input.path!r} ({inp}); writing there would destroy or pollute "
                    "the input. Choose an output path outside the input"
                )
        if config.output.mode == "error" and engine.path_exists(self.out_path):
            raise OutputExistsError(
                f"output.path: {self.out_path!r} already exists; remove it or set "
                "output.mode: overwrite"
            )

    def recover(self) -> None:
        """Finish an overwrite a killed run left between its two renames."""
        recover_interrupted_commit(self.engine, self.out_path)

    def staging(self) -> str:  # noqa: D102
        if self._staging is None:
            self._staging = f"{self.out_path}{_TMP}{uuid.uuid4().hex[:12]}"
        return self._staging

    def commit(  # noqa: D102
        self, staging: str, metrics: dict[str, Any], schemas: Mapping[str, list[tuple[str, str]]]
    ) -> str:
        write_metadata(self.engine, self.config, staging, metrics)
        move_into_place(self.engine, staging, self.out_path, self.config.output.mode)
        return self.out_path

    def discard(self) -> None:  # noqa: D102
        if self._staging is not None:
            self.engine.delete_path(self._staging)


def move_into_place(engine: Engine, tmp_path: str, out_path: str, mode: str) -> None:
    """Rename ``tmp_path`` to ``out_path`` (moving an existing output aside under overwrite)."""
    if engine.path_exists(out_path):
        if mode != "overwrite":
            raise OutputExistsError(
                f"output.path: {out_path!r} appeared while the job ran; nothing was written"
            )
        trash = f"{out_path}{_OLD}{uuid.uuid4().hex[:12]}"
        engine.rename_path(out_path, trash)
        engine.rename_path(tmp_path, out_path)
        engine.delete_path(trash)
    else:
        engine.rename_path(tmp_path, out_path)


def recover_interrupted_commit(engine: Engine, out_path: str) -> str | None:
    """Finish an overwrite a killed driver left between its two renames.

    Such a run left ``<out>.__sparkanon_old_<id>`` (the previous output, whole) and no
    ``<out>``. If a staged output of that run is complete (it holds ``metrics.json``,
    written only after verification), it is moved into place (forward), else the
    previous output is moved back. A run killed after its second rename left the new
    output in place and the old one aside: the old one is deleted. Only the output's own
    siblings are looked at.

    Returns:
        ``"forward"``, ``"back"``, ``"cleaned"`` (an old output deleted), or ``None``
        when there was nothing to recover.
    """
    parent, slash, _ = out_path.rpartition("/")
    siblings = [f"{parent}{slash}{n}" for n in engine.list_names(parent if slash else ".")]
    old = sorted(p for p in siblings if p.startswith(out_path + _OLD))
    if not old:
        return None
    if engine.path_exists(out_path):
        for path in old:
            engine.delete_path(path)
        log.warning("commit: a previous output a killed run left aside was deleted")
        return "cleaned"
    staged = sorted(
        p
        for p in siblings
        if p.startswith(out_path + _TMP) and engine.path_exists(f"{p}/{METRICS}")
    )
    if len(old) == 1 and len(staged) == 1:
        engine.rename_path(staged[0], out_path)
        engine.delete_path(old[0])
        log.warning("commit: an interrupted overwrite of the output was finished (forward)")
        return "forward"
    engine.rename_path(old[-1], out_path)
    log.warning("commit: an interrupted overwrite of the output was undone (previous output back)")
    return "back"


# --------------------------------------------------------------------------- tables


LOCK_PREFIX = "__sparkanon_lock_"
"""Lock tables are named ``<db>.__sparkanon_lock_<table>[_<partition hash>]``."""
PROPERTY_PREFIX = "sparkanon."
"""Table properties sparkanon records on its output tables."""


def _spark_type(ddl: str) -> str:
    """The Spark SQL type of a published column (``long`` is ``bigint`` in the catalog)."""
    return {"long": "bigint", "int": "int"}.get(ddl, ddl)


class TableTarget(OutputTarget):
    """``output.table``: a catalog table, or one partition of it (module docstring).

    Args:
        engine: the engine (its catalog and filesystem).
        config: the job config.
        partition_columns: the output's partition columns, ``(name, spark type)``: the
            input table's, when one of its partitions is read; else none.
    """

    def __init__(
        self, engine: Engine, config: JobConfig, partition_columns: Sequence[tuple[str, str]]
    ) -> None:
        assert config.output.table is not None
        self.engine = engine
        self.config = config
        self.catalog: Catalog = engine.catalog()
        self.name = self.catalog.qualified(config.output.table)
        self.spec = dict(config.input.partition or {})
        self.partition_columns = list(partition_columns)
        self._staging: str | None = None
        self._locked: str | None = None

    @property
    def where(self) -> str:
        """The output as messages name it."""
        spec = f" partition {partition_text(self.spec)}" if self.spec else ""
        return f"output.table {self.name}{spec}"

    def _existing(self) -> TableInfo | None:
        return self.catalog.table(self.name)

    def check(self) -> None:
        """Refuse an output that is the input, or an existing table the run may not change.

        Raises:
            ConfigError: the output table is the input table, or its partition columns
                differ from the run's.
            OutputExistsError: the table (the partition) exists under ``mode: error``.
        """
        config = self.config
        source = config.input.table
        if source is not None and self.catalog.qualified(source) == self.name:
            raise ConfigError(
                f"output.table: {self.name} is the input table; writing there would destroy "
                "the input. Choose another output table"
            )
        info = self._existing()
        if info is None:
            return
        mine = [c for c, _ in self.partition_columns]
        theirs = [c for c, _ in info.partition_columns]
        if mine != theirs:
            writes = f"partition {partition_text(self.spec)}" if self.spec else "a whole table"
            raise ConfigError(
                f"output.table: {self.name} is partitioned by {theirs or 'nothing'} but this run "
                f"writes {writes}; choose another output table or run with a matching --partition"
            )
        if config.output.mode == "error":
            if not self.spec:
                raise OutputExistsError(
                    f"output.table: {self.name} already exists; drop it or set output.mode: "
                    "overwrite"
                )
            if self.catalog.has_partition(self.name, self.spec):
                raise OutputExistsError(
                    f"{self.where} already exists; set output.mode: overwrite to replace it"
                )

    def root(self) -> str:
        """The folder the table's version directories live under."""
        info = self._existing()
        if info is not None:
            location = info.location.rstrip("/")
            if self.spec:
                return location
            # An unpartitioned table sparkanon made points at <root>/v-<id>/data.
            parts = location.rsplit("/", 2)
            if len(parts) == 3 and parts[2] == DATA and parts[1].startswith("v-"):
                return parts[0]
            return location + "_sparkanon"
        table = self.name.split(".", 1)[1]
        return f"{self.catalog.database_location(self.name).rstrip('/')}/{table}"

    def lock_name(self) -> str:
        """The lock table of this output (table, or table and partition)."""
        db, table = self.name.split(".", 1)
        suffix = ""
        if self.spec:
            digest = hashlib.sha256(partition_text(self.spec).encode("utf-8")).hexdigest()[:12]
            suffix = f"_{digest}"
        return f"{db}.{LOCK_PREFIX}{table}{suffix}"

    def acquire(self) -> None:
        """Take the output's lock.

        Raises:
            OutputExistsError: another run holds it (or a killed run left it).
        """
        lock = self.lock_name()
        holder = {
            "output": self.name,
            "partition": partition_text(self.spec),
            "run": uuid.uuid4().hex[:12],
        }
        if not self.catalog.create_lock(lock, holder):
            raise OutputExistsError(
                f"{self.where} is being written by another sparkanon run (lock table {lock}, "
                f"held by {self.catalog.lock_holder(lock) or 'unknown'}); wait for it to finish. "
                f"If no run is active (a killed run leaves its lock), DROP TABLE {lock}"
            )
        self._locked = lock

    def release(self) -> None:
        """Release the lock, if held."""
        if self._locked is not None:
            self.catalog.drop_lock(self._locked)
            self._locked = None

    def staging(self) -> str:  # noqa: D102
        if self._staging is None:
            folder = self.root()
            if self.spec:
                folder += "/" + "/".join(f"{c}={v}" for c, v in self.spec.items())
            self._staging = f"{folder}/v-{uuid.uuid4().hex[:12]}"
        return self._staging

    def _check_schema(self, info: TableInfo, columns: list[tuple[str, str]]) -> None:
        theirs = [(c, t.lower()) for c, t in info.columns]
        mine = [(c, t.lower()) for c, t in columns]
        if theirs != mine:
            raise ConfigError(
                f"output.table: {self.name} has columns {theirs} but this run publishes "
                f"{mine}; nothing was changed. Choose another output table, or drop that one"
            )

    def properties(self, metrics: dict[str, Any]) -> dict[str, str]:
        """The table properties this run records (model, parameters, config hash, verified)."""
        import sparkanon

        props = {
            "version": sparkanon.__version__,
            "model": json.dumps(metrics.get("model"), sort_keys=True),
            "algorithm": json.dumps(metrics.get("algorithm"), sort_keys=True),
            "publish": str(metrics.get("publish")),
            "config_sha256": config_sha256(self.config),
            "verified": str(bool(metrics.get("verified"))).lower(),
            "seed": str(self.config.seed),
        }
        if self.spec:
            props["last_partition"] = partition_text(self.spec)
        return {PROPERTY_PREFIX + k: v for k, v in props.items()}

    def commit(  # noqa: D102
        self, staging: str, metrics: dict[str, Any], schemas: Mapping[str, list[tuple[str, str]]]
    ) -> str:
        columns = [(c, _spark_type(t)) for c, t in schemas[DATA]]
        info = self._existing()
        if info is not None:
            self._check_schema(info, columns)
        write_metadata(self.engine, self.config, staging, metrics)
        location = f"{staging}/{DATA}"
        props = self.properties(metrics)
        if info is None:
            if self.spec:
                self.catalog.create_table(
                    self.name, columns, self.partition_columns, self.root(), props
                )
            else:
                self.catalog.create_table(self.name, columns, [], location, props)
        old = None
        if self.spec:
            old = self.catalog.point_partition(self.name, self.spec, location)
        elif info is not None:
            old = info.location
            self.catalog.point_table(self.name, location)
        if info is not None:
            self.catalog.set_properties(self.name, props)
        self._delete_replaced(old)
        log.info("commit: %s now points at version %s", self.where, staging.rsplit("/", 1)[-1])
        return staging

    def _delete_replaced(self, old: str | None) -> None:
        """Delete the version directory the commit replaced, if sparkanon made it."""
        if not old:
            return
        parent, _, leaf = old.rstrip("/").rpartition("/")
        if leaf == DATA and parent.rsplit("/", 1)[-1].startswith("v-"):
            self.engine.delete_path(parent)

    def discard(self) -> None:  # noqa: D102
        if self._staging is not None:
            self.engine.delete_path(self._staging)


def output_target(engine: Engine, config: JobConfig, given_table: bool) -> OutputTarget:
    """The target of ``config.output``.

    Args:
        engine: the engine.
        config: the job config.
        given_table: the caller gave the input table (``input`` is not read).
    """
    if config.output.table is None:
        return PathTarget(engine, config, reads_path=not given_table)
    partition_columns: Sequence[tuple[str, str]] = ()
    if config.input.table is not None and config.input.partition and not given_table:
        info = engine.catalog().require(config.input.table, "input.table")
        partition_columns = info.partition_columns
    return TableTarget(engine, config, partition_columns)


@contextmanager
def opened_output(
    engine: Engine, config: JobConfig, given_table: bool, commit: bool
) -> Iterator[OutputTarget | None]:
    """The job's output for the length of the run: checked and held, cleaned up on failure.

    Yields ``None`` when the run does not commit. Otherwise the target's lock is taken
    (a table output), what a killed run left half done finished (a path output's
    interrupted overwrite), the output checked before any work, the staging directory
    removed if the run fails, and the lock released at the end either way.
    """
    if not commit:
        yield None
        return
    target = output_target(engine, config, given_table)
    target.acquire()
    try:
        target.recover()
        target.check()
        yield target
    except BaseException:
        target.discard()
        raise
    finally:
        target.release()
