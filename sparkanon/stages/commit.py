"""Stage ``commit``: where the verified publication goes, and the move that publishes it.

Two kinds of output (``output.path`` or ``output.table``), one protocol
(:class:`OutputTarget`): :meth:`~OutputTarget.check` before any work,
:meth:`~OutputTarget.staging` for the directory the publication is written to and
verified in, :meth:`~OutputTarget.commit` to publish it in one step, and
:meth:`~OutputTarget.discard` when the job fails. A staging directory holds the
published tables (``data``, or ``rt`` and ``tt``), ``metrics.json`` and the resolved
``config.yaml`` (as :mod:`sparkanon.config.published` allows: no credentials).

* :class:`PathTarget`: staging is ``<path>.__sparkanon_tmp_<id>``, renamed to ``path``.
  It is made first, with the mode of ``output.permissions`` and the marker
  :data:`~sparkanon.safety.MARKER` inside, and every file and folder in it gets that
  mode before the rename. Over an existing output (``mode: overwrite``) the old one is
  moved aside first (``<path>.__sparkanon_old_<id>``) and deleted last; only a directory
  holding the marker (sparkanon's own output) or an empty one is replaced. A driver
  killed between the two renames leaves no ``path``; the next run on that output
  finishes the move (:func:`recover_interrupted_commit`): forward when the staged output
  is complete (it has ``metrics.json``, written only after verification), else back.
* :class:`TableTarget`: staging is a *version directory* of the table,
  ``<root>/[<col>=<value>/]v-<id>``; the commit points the table (or the partition) at
  its ``data`` folder by one metastore update and then deletes the version it replaced
  (a version directory gets the mode of ``output.permissions``; it carries no marker:
  the table's properties and the ``v-<id>`` names tell sparkanon's versions)
  (``publish: anatomy``: two tables, ``<name>_rt`` and ``<name>_tt``, pointed at the
  ``rt`` and ``tt`` folders of one version by two updates in a row). A run holds a lock
  on its table or partition (a lock table in the metastore, created once,
  :mod:`sparkanon.stages.table_lock`), so two runs on the same output partition cannot
  interleave: the second fails, unless the lock's owner is gone, when it takes the lock
  over. Under the lock a run first finishes a pair commit a killed run left half done and
  deletes version directories no table points at.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sparkanon._version import __version__
from sparkanon.config import JobConfig, partition_text
from sparkanon.config.published import config_sha256, published_config_yaml
from sparkanon.engine.base import Catalog, Engine, TableInfo
from sparkanon.errors import ConfigError, LockLostError, OutputExistsError
from sparkanon.safety import (
    MARKER,
    Location,
    check_overwritable,
    check_reads_and_writes,
    job_reads,
    marker_text,
    modes,
)
from sparkanon.stages import table_lock
from sparkanon.stages._common import log

RESOLVED_CONFIG = "config.yaml"
"""The config the job ran (overrides applied), written beside ``metrics.json``."""
METRICS = "metrics.json"
"""The metrics file of an output (or of a table's version directory)."""
DATA = "data"
"""The folder of a one-table publication inside an output or a version directory."""
_TMP = ".__sparkanon_tmp_"
_OLD = ".__sparkanon_old_"


NOISE = "noise.json"
"""A perturbed release's declared noise (``metrics.json`` key ``noise``), beside the data:
what a reader needs to reconstruct the distributions (Aggarwal 2015, section 20.2)."""


def write_metadata(engine: Engine, config: JobConfig, staging: str, metrics: dict) -> None:
    """``metrics.json``, the resolved config and a perturbed release's ``noise.json``."""
    engine.write_text(f"{staging}/{METRICS}", json.dumps(metrics, indent=2, sort_keys=False))
    engine.write_text(f"{staging}/{RESOLVED_CONFIG}", published_config_yaml(config))
    if "noise" in metrics:
        engine.write_text(f"{staging}/{NOISE}", json.dumps(metrics["noise"], indent=2))


MAX_PROPERTY_CHARS = 3500
"""Longest table property the commit writes (metastores cap a value at about 4,000 chars)."""


def noise_property(noise: dict[str, Any]) -> str:
    """The declared noise as a table property: JSON without the transition matrices.

    A matrix follows from the values and the retention (``pram_matrix``); when even that
    is too long, the property keeps the parameters and points at ``noise.json``.
    """
    compact = {
        name: {k: v for k, v in spec.items() if k != "transition_matrix"}
        for name, spec in noise.items()
    }
    text = json.dumps(compact, sort_keys=True)
    if len(text) <= MAX_PROPERTY_CHARS:
        return text
    short = {
        name: {k: v for k, v in spec.items() if k not in ("transition_matrix", "values")}
        for name, spec in noise.items()
    }
    return json.dumps(short | {"see": NOISE}, sort_keys=True)


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
        """Refuse an output that would overwrite what it should not.

        That is an output on, around or inside anything the job reads, an existing one
        under ``error``, and under ``overwrite`` one sparkanon did not write.

        Raises:
            ConfigError: the output is, contains or lies inside the input, a hierarchy or
                taxonomy file, the long item table, the holdout or the population.
            OutputExistsError: the output exists and ``output.mode`` is ``error``, or it
                is not a sparkanon output (no marker) and not empty.
        """
        config, engine = self.config, self.engine
        check_reads_and_writes(
            job_reads(config, reads_input=self.reads_path),
            [Location("output.path", config.output.path or self.out_path)],
            engine.canonical_path,
        )
        if not engine.path_exists(self.out_path):
            return
        if config.output.mode == "error":
            raise OutputExistsError(
                f"output.path: {self.out_path!r} already exists; remove it or set "
                "output.mode: overwrite"
            )
        check_replaceable(engine, self.out_path)

    def recover(self) -> None:
        """Finish an overwrite a killed run left between its two renames."""
        recover_interrupted_commit(self.engine, self.out_path)

    def staging(self) -> str:
        """The staging directory, made at the first call: its mode, then the marker."""
        if self._staging is None:
            staging = f"{self.out_path}{_TMP}{uuid.uuid4().hex[:12]}"
            self.engine.make_dir(staging, modes(self.config.output.permissions)[0])
            self._staging = staging
            self.engine.write_text(f"{staging}/{MARKER}", marker_text())
        return self._staging

    def commit(  # noqa: D102
        self, staging: str, metrics: dict[str, Any], schemas: Mapping[str, list[tuple[str, str]]]
    ) -> str:
        write_metadata(self.engine, self.config, staging, metrics)
        self.engine.set_permissions(staging, *modes(self.config.output.permissions))
        move_into_place(self.engine, staging, self.out_path, self.config.output.mode)
        return self.out_path

    def discard(self) -> None:  # noqa: D102
        if self._staging is not None:
            self.engine.delete_path(self._staging)


def check_replaceable(engine: Engine, out_path: str) -> None:
    """Refuse to replace an existing ``out_path`` that sparkanon did not write.

    Raises:
        OutputExistsError: it is a file, or a non-empty directory without the marker
            :data:`~sparkanon.safety.MARKER`.
    """
    directory = engine.is_directory(out_path)
    names = engine.list_names(out_path) if directory else []
    check_overwritable(names, directory, out_path, "output.path")


def move_into_place(engine: Engine, tmp_path: str, out_path: str, mode: str) -> None:
    """Rename ``tmp_path`` to ``out_path`` (moving an existing output aside under overwrite).

    An existing output is replaced only if sparkanon wrote it (:func:`check_replaceable`,
    checked again here: it may have appeared or changed while the job ran).
    """
    if engine.path_exists(out_path):
        if mode != "overwrite":
            raise OutputExistsError(
                f"output.path: {out_path!r} appeared while the job ran; nothing was written"
            )
        check_replaceable(engine, out_path)
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


ANATOMY_TABLES = ("rt", "tt")
"""The tables of ``publish: anatomy``, committed as ``<output.table>_rt`` and ``_tt``."""


def member_tables(name: str, publish: str) -> dict[str, str]:
    """The catalog tables of an output table, by published table (``data``, or rt and tt).

    ``publish: anatomy`` publishes two tables, committed together: ``db.name`` gives
    ``db.name_rt`` and ``db.name_tt``; any other publication is ``db.name`` itself.
    """
    if publish == "anatomy":
        return {t: f"{name}_{t}" for t in ANATOMY_TABLES}
    return {DATA: name}


def version_of(location: str | None, leaf: str) -> str | None:
    """The version directory ``.../v-<id>`` a table or partition location points into."""
    if not location:
        return None
    parent, _, last = location.rstrip("/").rpartition("/")
    if last == leaf and parent.rsplit("/", 1)[-1].startswith("v-"):
        return parent
    return None


def _leaf(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


class TableTarget(OutputTarget):
    """``output.table``: a catalog table, or one partition of it (module docstring).

    ``publish: anatomy`` commits two tables, ``<name>_rt`` and ``<name>_tt``
    (:func:`member_tables`), from one version directory holding ``rt/`` and ``tt/``:
    one lock, one version, two metastore updates in a row (the metastore updates one
    table at a time). A driver killed between them leaves ``_rt`` on the new version and
    ``_tt`` on the old one; the next run on that output points ``_tt`` forward before
    anything else (:meth:`recover`).

    Args:
        engine: the engine (its catalog and filesystem).
        config: the job config.
        name: ``output.table`` qualified by the catalog (``db.name``).
        partition_columns: the output's partition columns, ``(name, spark type)``: the
            input table's, when one of its partitions is read; else none.
    """

    def __init__(
        self,
        engine: Engine,
        config: JobConfig,
        name: str,
        partition_columns: Sequence[tuple[str, str]],
    ) -> None:
        self.engine = engine
        self.config = config
        self.catalog: Catalog = engine.catalog()
        self.name = name
        self.members = member_tables(self.name, config.output.publish)
        self.spec = dict(config.input.partition or {})
        self.partition_columns = list(partition_columns)
        self._staging: str | None = None
        self._published = False
        self._locked: str | None = None
        self._owner: dict[str, Any] = {}
        self._heartbeat: table_lock.Heartbeat | None = None

    @property
    def where(self) -> str:
        """The output as messages name it."""
        spec = f" partition {partition_text(self.spec)}" if self.spec else ""
        if len(self.members) > 1:
            return f"output.table {self.name} (tables {', '.join(self.members.values())}){spec}"
        return f"output.table {self.name}{spec}"

    def _infos(self) -> dict[str, TableInfo | None]:
        return {pub: self.catalog.table(member) for pub, member in self.members.items()}

    def check(self) -> None:
        """Refuse an output that is the input, or an existing table the run may not change.

        Raises:
            ConfigError: the output table (one of the pair) is the input table, or its
                partition columns differ from the run's.
            OutputExistsError: the table (the partition) exists under ``mode: error``.
        """
        config = self.config
        source = config.input.table
        if source is not None and self.catalog.qualified(source) in {
            self.name,
            *self.members.values(),
        }:
            raise ConfigError(
                f"output.table: {self.where} would write the input table "
                f"{self.catalog.qualified(source)}; writing there would destroy the input. "
                "Choose another output table"
            )
        for member, info in zip(self.members.values(), self._infos().values(), strict=True):
            if info is None:
                continue
            self._check_partitioning(member, info)
            if config.output.mode == "error":
                if not self.spec:
                    raise OutputExistsError(
                        f"output.table: {member} already exists; drop it or set output.mode: "
                        "overwrite"
                    )
                if self.catalog.has_partition(member, self.spec):
                    raise OutputExistsError(
                        f"{self.where} already exists; set output.mode: overwrite to replace it"
                    )

    def _matches_partitioning(self, info: TableInfo) -> bool:
        return [c for c, _ in self.partition_columns] == [c for c, _ in info.partition_columns]

    def _check_partitioning(self, member: str, info: TableInfo) -> None:
        if not self._matches_partitioning(info):
            theirs = [c for c, _ in info.partition_columns]
            writes = f"partition {partition_text(self.spec)}" if self.spec else "a whole table"
            raise ConfigError(
                f"output.table: {member} is partitioned by {theirs or 'nothing'} but this run "
                f"writes {writes}; choose another output table or run with a matching --partition"
            )

    def root(self) -> str:
        """The folder the output's version directories live under."""
        for pub, info in self._infos().items():
            if info is None:
                continue
            location = info.location.rstrip("/")
            if self.spec:
                # A partitioned pair made by sparkanon is located at <root>/<rt|tt>.
                parent, _, last = location.rpartition("/")
                return parent if len(self.members) > 1 and last == pub else location
            version = version_of(location, pub)
            # An unpartitioned table sparkanon made points at <root>/v-<id>/<pub>.
            return version.rpartition("/")[0] if version else location + "_sparkanon"
        table = self.name.split(".", 1)[1]
        return f"{self.catalog.database_location(self.name).rstrip('/')}/{table}"

    def _table_location(self, root: str, pub: str) -> str:
        """Where a partitioned member table is created (its partitions point elsewhere)."""
        return root if len(self.members) == 1 else f"{root}/{pub}"

    def _create_table(
        self,
        member: str,
        columns: Sequence[tuple[str, str]],
        location: str,
        properties: Mapping[str, str],
    ) -> None:
        """Create a member table, partitioned like the output when a partition is written."""
        partition_columns = tuple(self.partition_columns) if self.spec else ()
        table = TableInfo(member, tuple(columns), partition_columns, location, properties)
        self.catalog.create_table(table)

    def versions_folder(self) -> str:
        """The folder holding this output's (this partition's) version directories."""
        folder = self.root()
        if self.spec:
            folder += "/" + "/".join(f"{c}={v}" for c, v in self.spec.items())
        return folder

    def lock_name(self) -> str:
        """The lock table of this output (table, or table and partition)."""
        db, table = self.name.split(".", 1)
        suffix = ""
        if self.spec:
            digest = hashlib.sha256(partition_text(self.spec).encode("utf-8")).hexdigest()[:12]
            suffix = f"_{digest}"
        return f"{db}.{LOCK_PREFIX}{table}{suffix}"

    def acquire(self) -> None:
        """Take the output's lock, taking it over from a run that is gone.

        Raises:
            OutputExistsError: a run that may be alive holds it (or, for an owner of an
                older sparkanon that recorded none, one that cannot be judged).
        """
        lock = self.lock_name()
        owner = table_lock.new_owner(self.name, partition_text(self.spec))
        expiry = table_lock.expiry_seconds()
        if not self.catalog.create_lock(lock, owner):
            record = table_lock.read_lock(self.catalog, lock)
            if record is None:  # released meanwhile
                if not self.catalog.create_lock(lock, owner):
                    raise self._held(lock, {})
            else:
                held, heartbeat = record
                reason = table_lock.gone_reason(
                    held,
                    heartbeat,
                    time.time(),
                    owner["host"],
                    owner["boot_id"],
                    expiry,
                    table_lock.process_start,
                    owner["namespace"],
                )
                if reason is None or not table_lock.take_over(self.catalog, lock, owner, held):
                    raise self._held(lock, held)
                log.warning(
                    "commit: lock %s taken over from %s: its owner is gone (%s)",
                    lock,
                    table_lock.describe(held),
                    reason,
                )
        self._locked, self._owner = lock, owner
        interval = table_lock.heartbeat_interval(expiry)
        self._heartbeat = table_lock.Heartbeat(self.catalog, lock, owner["run"], interval)
        self._heartbeat.start()

    def _held(self, lock: str, held: Mapping[str, Any]) -> OutputExistsError:
        return OutputExistsError(
            f"{self.where} is being written by another sparkanon run (lock table {lock}, "
            f"held by {table_lock.describe(held)}); wait for it to finish. A lock whose "
            "owner is gone is taken over (docs/operations.md); if you know no run is "
            f"active, DROP TABLE {lock}"
        )

    def release(self) -> None:
        """Release the lock, if held (and still this run's), and the takeover fence."""
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
        if self._locked is None:
            return
        if table_lock.owns(self.catalog, self._locked, self._owner["run"]):
            self.catalog.drop_lock(self._locked)
        else:
            log.warning("commit: lock %s no longer records this run; left as it is", self._locked)
        if self._owner.get("fence"):
            self.catalog.drop_lock(self._owner["fence"])
        self._locked = None

    def _check_lock(self, moment: str, outcome: str = "nothing was committed") -> None:
        """Refuse to go on unless the lock still records this run and its fencing token.

        Args:
            moment: when, as the message says it (``"at its commit"``).
            outcome: what the run did and did not do, as the message ends.

        Raises:
            LockLostError: another run holds the lock now (its owner record named).
        """
        if self._locked is None or table_lock.holds(self.catalog, self._locked, self._owner):
            return
        record = table_lock.read_lock(self.catalog, self._locked)
        holder = "nobody" if record is None else table_lock.describe(record[0])
        raise LockLostError(
            f"{self.where}: this run's lock {self._locked} (token "
            f"{table_lock.token_of(self._owner)}) is no longer this run's {moment} (it is "
            f"held by {holder}): no heartbeat reached the metastore for longer than the "
            f"expiry and another run took it over; {outcome}"
        )

    def recover(self) -> None:
        """Finish a pair commit a killed run left half done; remove stale version directories.

        Runs under the lock, before :meth:`check`, and only while the lock still records
        this run and its fencing token. Nothing is done to tables partitioned otherwise
        than the run (:meth:`check` refuses them next).

        Raises:
            LockLostError: the lock is another run's now.
        """
        self._check_lock("before it recovers the output")
        infos = self._infos()
        if any(i is not None and not self._matches_partitioning(i) for i in infos.values()):
            return
        locations = self._locations(infos)
        if len(self.members) > 1:
            locations = self._finish_pair(infos, locations) or locations
        self._remove_stale_versions(locations)

    def _locations(self, infos: Mapping[str, TableInfo | None]) -> dict[str, str | None]:
        """Where each member table (or its partition) points now."""
        out: dict[str, str | None] = {}
        for pub, member in self.members.items():
            info = infos[pub]
            if info is None:
                out[pub] = None
            elif self.spec:
                out[pub] = self.catalog.partition_location(member, self.spec)
            else:
                out[pub] = info.location
        return out

    def _finish_pair(
        self, infos: Mapping[str, TableInfo | None], locations: Mapping[str, str | None]
    ) -> dict[str, str | None] | None:
        """Point every member at the version the first-committed one points at (forward).

        A pair commit points ``_rt`` first, and only at a verified, complete version
        (``metrics.json`` is written before the first update). Returns the new locations,
        or ``None`` when the pair was consistent.
        """
        versions = {pub: version_of(loc, pub) for pub, loc in locations.items()}
        first = next(iter(self.members))
        target = versions[first]
        if target is None or all(
            v is not None and _leaf(v) == _leaf(target) for v in versions.values()
        ):
            return None
        if not self.engine.path_exists(f"{target}/{METRICS}"):
            return None
        source = infos[first]
        assert source is not None
        props = {k: v for k, v in source.properties.items() if k.startswith(PROPERTY_PREFIX)}
        root = self.root()
        for pub, member in self.members.items():
            if versions[pub] is not None and _leaf(versions[pub]) == _leaf(target):
                continue
            location = f"{target}/{pub}"
            if infos[pub] is None:
                columns = self.engine.schema_of(self.engine.read_table(location, "parquet"))
                typed = [(c, _spark_type(t)) for c, t in columns]
                at = self._table_location(root, pub) if self.spec else location
                self._create_table(member, typed, at, props)
            if self.spec:
                self.catalog.point_partition(member, self.spec, location)
            elif infos[pub] is not None:
                self.catalog.point_table(member, location)
            self.catalog.set_properties(member, props)
        log.warning(
            "commit: %s was left half committed by a killed run; every table now points at "
            "version %s (forward)",
            self.where,
            _leaf(target),
        )
        return {pub: f"{target}/{pub}" for pub in self.members}

    def _remove_stale_versions(self, locations: Mapping[str, str | None]) -> None:
        """Delete version directories no member table points at (staged by killed runs).

        Only this output's (this partition's) folder is looked at, and only while this run
        holds the lock with the current fencing token: a staged version's run is then gone
        (judged so by :func:`~sparkanon.stages.table_lock.gone_reason` when its lock was
        taken over: a heartbeat older than the expiry) or has lost the lock and cannot
        commit. This run's own version (``v-<run id>``) is kept; a run that holds no lock
        deletes nothing.
        """
        if self._locked is None:
            return
        referenced = {_leaf(v) for p, loc in locations.items() if (v := version_of(loc, p))}
        if self._owner.get("run"):
            referenced.add(f"v-{self._owner['run']}")
        folder = self.versions_folder()
        stale = [
            n for n in self.engine.list_names(folder) if n.startswith("v-") and n not in referenced
        ]
        if stale:
            self._check_lock("before it removes version directories")
        for name in stale:
            self.engine.delete_path(f"{folder}/{name}")
        if stale:
            log.warning(
                "commit: removed %d version director%s of %s no table points at (left by a "
                "killed or failed run): %s",
                len(stale),
                "y" if len(stale) == 1 else "ies",
                self.where,
                ", ".join(stale),
            )

    def staging(self) -> str:
        """The run's version directory, ``v-<run id>``, made at the first call.

        The run id is the lock's once acquired; the directory gets the permissions' mode.
        """
        if self._staging is None:
            run = self._owner.get("run") or uuid.uuid4().hex[:12]
            staging = f"{self.versions_folder()}/v-{run}"
            self.engine.make_dir(staging, modes(self.config.output.permissions)[0])
            self._staging = staging
        return self._staging

    def _check_schema(self, member: str, info: TableInfo, columns: list[tuple[str, str]]) -> None:
        theirs = [(c, t.lower()) for c, t in info.columns]
        mine = [(c, t.lower()) for c, t in columns]
        if theirs != mine:
            raise ConfigError(
                f"output.table: {member} has columns {theirs} but this run publishes "
                f"{mine}; nothing was changed. Choose another output table, or drop that one"
            )

    def properties(self, metrics: dict[str, Any]) -> dict[str, str]:
        """The table properties this run records (model, parameters, config hash, verified).

        The same on both tables of a pair.
        """
        props = {
            "version": __version__,
            "model": json.dumps(metrics.get("model"), sort_keys=True),
            "algorithm": json.dumps(metrics.get("algorithm"), sort_keys=True),
            "publish": str(metrics.get("publish")),
            "config_sha256": config_sha256(self.config),
            "verified": str(bool(metrics.get("verified"))).lower(),
            "seed": str(self.config.seed),
        }
        if "noise" in metrics:
            props["noise"] = noise_property(metrics["noise"])
        if self.spec:
            props["last_partition"] = partition_text(self.spec)
        return {PROPERTY_PREFIX + k: v for k, v in props.items()}

    def commit(
        self, staging: str, metrics: dict[str, Any], schemas: Mapping[str, list[tuple[str, str]]]
    ) -> str:
        """Point the table(s) at ``staging``, fenced by the lock's token (module docstring).

        The lock's run and fencing token are checked before anything, again immediately
        before the first metastore update, and once more right after the last one; the
        version the commit replaced is deleted only when that last check passes.

        Raises:
            LockLostError: the lock moved to another run: before the updates, nothing
                was committed; after them, the table points at this run's verified
                version, and the replaced one is kept.
        """
        self._check_lock("at its commit")
        columns = {pub: [(c, _spark_type(t)) for c, t in schemas[pub]] for pub in self.members}
        infos = self._infos()
        for pub, member in self.members.items():
            info = infos[pub]
            if info is not None:
                self._check_schema(member, info, columns[pub])
        write_metadata(self.engine, self.config, staging, metrics)
        self.engine.set_permissions(staging, *modes(self.config.output.permissions))
        props = self.properties(metrics)
        root = self.root()
        self._check_lock("immediately before its metastore update")
        for pub, member in self.members.items():
            if infos[pub] is None and self.spec:
                self._create_table(member, columns[pub], self._table_location(root, pub), props)
        # The pointer updates, one per table, back to back: from the first one on the
        # staging directory is published and must survive a failure (recover() finishes).
        old: list[tuple[str, str | None]] = []
        for pub, member in self.members.items():
            location = f"{staging}/{pub}"
            info = infos[pub]
            if self.spec:
                old.append((pub, self.catalog.point_partition(member, self.spec, location)))
            elif info is None:
                self._create_table(member, columns[pub], location, props)
            else:
                old.append((pub, info.location))
                self.catalog.point_table(member, location)
            self._published = True
        for pub, member in self.members.items():
            if infos[pub] is not None:
                self.catalog.set_properties(member, props)
        self._check_lock_after(staging, old)
        self._delete_replaced(old, staging)
        log.info("commit: %s now points at version %s", self.where, _leaf(staging))
        return staging

    def _check_lock_after(self, staging: str, old: Sequence[tuple[str, str | None]]) -> None:
        """The check right after the updates: the lock moved meanwhile, keep what was replaced.

        Raises:
            LockLostError: the lock records another run or token now.
        """
        kept = sorted({_leaf(v) for p, loc in old if (v := version_of(loc, p))})
        self._check_lock(
            "right after its metastore update",
            f"the update went through: the table now points at this run's verified version "
            f"{_leaf(staging)}, and the version it replaced ({', '.join(kept) or 'none'}) was "
            "kept. The run holding the lock replaces it when it commits; rerun to be sure "
            "which version stays",
        )

    def _delete_replaced(self, old: Sequence[tuple[str, str | None]], staging: str) -> None:
        """Delete the version directories the commit replaced, if sparkanon made them."""
        done = {_leaf(staging)}
        for pub, location in old:
            version = version_of(location, pub)
            if version is not None and _leaf(version) not in done:
                done.add(_leaf(version))
                self.engine.delete_path(version)

    def discard(self) -> None:  # noqa: D102
        if self._staging is not None and not self._published:
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
    catalog = engine.catalog()
    name = catalog.qualified(config.output.table)
    partition_columns: Sequence[tuple[str, str]] = ()
    if config.input.table is not None and config.input.partition and not given_table:
        partition_columns = catalog.require(config.input.table, "input.table").partition_columns
    return TableTarget(engine, config, name, partition_columns)


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
