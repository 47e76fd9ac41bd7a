"""The lock protocol of table outputs (issue 39, finding 6), on an in-memory catalog.

No Spark: :class:`FakeCatalog` keeps tables in a dict with the one atomic step the
metastore offers (a table name is created once), and the version directories are local
folders. The races are played step by step:

(a) a live run in another pid namespace on the same host name, fresh heartbeat: alive,
    not taken over, nothing of its deleted;
(b) a stalled run that read the lock long ago cannot take over (or drop) a later run's
    lock: its fencing token is stale;
(c) the commit refuses when the token moves between its check and its metastore update
    (before: nothing committed; after: the replaced version kept).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from sparkanon.engine.base import Catalog, TableInfo
from sparkanon.engine.local import LocalEngine
from sparkanon.errors import EXIT_INTERNAL, LockLostError, OutputExistsError
from sparkanon.stages import commit as commit_stage
from sparkanon.stages import table_lock
from sparkanon.stages.table_lock import (
    HEARTBEAT_PROPERTY,
    OWNER_PROPERTY,
    gone_reason,
    new_owner,
    read_lock,
    take_over,
)
from tests._inputs import dead_pid


class FakeCatalog(Catalog):
    """Tables in a dict: ``create_lock`` creates a name once, as a metastore does."""

    def __init__(self, warehouse: Path) -> None:
        self.warehouse = warehouse
        self.tables: dict[str, dict[str, Any]] = {}
        self._mutex = threading.Lock()

    def qualified(self, name: str) -> str:  # noqa: D102
        return name if "." in name else f"default.{name}"

    def table(self, name: str) -> TableInfo | None:  # noqa: D102
        t = self.tables.get(self.qualified(name))
        if t is None:
            return None
        return TableInfo(
            self.qualified(name),
            tuple(t["columns"]),
            tuple(t["partition_columns"]),
            t["location"],
            dict(t["properties"]),
        )

    def require(self, name: str, key: str) -> TableInfo:  # noqa: D102
        info = self.table(name)
        assert info is not None, key
        return info

    def partitions(self, name: str) -> list[dict[str, str]]:  # noqa: D102
        return [dict(k) for k in self.tables[self.qualified(name)]["partitions"]]

    def has_partition(self, name: str, spec: Mapping[str, str]) -> bool:  # noqa: D102
        return tuple(spec.items()) in self.tables[self.qualified(name)]["partitions"]

    def read(self, info: TableInfo, spec: Mapping[str, str] | None) -> Any:  # noqa: D102
        raise NotImplementedError

    def database_location(self, name: str) -> str:  # noqa: D102
        return str(self.warehouse / f"{self.qualified(name).split('.')[0]}.db")

    def create_table(self, table) -> None:  # noqa: D102
        with self._mutex:
            assert self.qualified(table.name) not in self.tables
            self.tables[self.qualified(table.name)] = {
                "columns": list(table.columns),
                "partition_columns": list(table.partition_columns),
                "location": table.location,
                "properties": dict(table.properties),
                "partitions": {},
            }

    def point_table(self, name: str, location: str) -> None:  # noqa: D102
        self.tables[self.qualified(name)]["location"] = location

    def point_partition(self, name, spec, location) -> str | None:  # noqa: D102
        parts = self.tables[self.qualified(name)]["partitions"]
        old = parts.get(tuple(spec.items()))
        parts[tuple(spec.items())] = location
        return old

    def partition_location(self, name, spec) -> str | None:  # noqa: D102
        return self.tables[self.qualified(name)]["partitions"].get(tuple(spec.items()))

    def set_properties(self, name: str, properties: Mapping[str, str]) -> None:  # noqa: D102
        self.tables[self.qualified(name)]["properties"].update(properties)

    def create_lock(self, lock_name: str, holder: Mapping[str, Any]) -> bool:  # noqa: D102
        with self._mutex:
            if self.qualified(lock_name) in self.tables:
                return False
            self.tables[self.qualified(lock_name)] = {
                "columns": [("holder", "string")],
                "partition_columns": [],
                "location": "",
                "properties": {OWNER_PROPERTY: json.dumps(dict(holder))},
                "partitions": {},
            }
            return True

    def lock_holder(self, lock_name: str) -> str:  # noqa: D102
        info = self.table(lock_name)
        return "" if info is None else info.properties.get(OWNER_PROPERTY, "")

    def drop_lock(self, lock_name: str) -> None:  # noqa: D102
        self.tables.pop(self.qualified(lock_name), None)


class FakeEngine(LocalEngine):
    """The local engine (its filesystem) with the in-memory catalog."""

    def __init__(self, catalog: FakeCatalog) -> None:
        super().__init__()
        self._catalog = catalog

    def catalog(self) -> Catalog:  # noqa: D102
        return self._catalog


LOCK = "db.__sparkanon_lock_out"


def _owner(**changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "run": "r1",
        "epoch": 1,
        "host": "h1",
        "namespace": "pid:111",
        "boot_id": "b1",
        "pid": 1,
        "pid_start": "1000",
        "started": 100.0,
    }
    return {**record, **changes}


def _gone(owner: Mapping[str, Any], heartbeat: float | None, probe: str | None) -> str | None:
    """The judgment of a run on host h1, namespace pid:111, at t = 1000 s, expiry 600 s."""
    return gone_reason(owner, heartbeat, 1000.0, "h1", "b1", 600.0, lambda pid: probe, "pid:111")


# ------------------------------------------------------------------ who is gone


@pytest.mark.parametrize(
    ("owner", "heartbeat", "probe", "gone"),
    [
        # (a) The same host name, another pid namespace (a pod, a container with host
        # networking): "pid 1" here is another process, but the heartbeat is fresh.
        (_owner(namespace="pid:222"), 1000.0, "5", None),
        (_owner(namespace="pid:222"), 1000.0, None, None),
        (_owner(namespace=""), 999.0, None, None),  # an older owner record: no namespace
        # Its heartbeat expired: gone, by the heartbeat (its pid says nothing here).
        (
            _owner(namespace="pid:222"),
            300.0,
            "1000",
            "no heartbeat from host h1 in another pid namespace (pid:222) for 700 s (expiry 600 s)",
        ),
        # This namespace: a fresh heartbeat is alive whatever the pid check says ...
        (_owner(), 999.0, None, None),
        (_owner(), 999.0, "2000", None),
        (_owner(boot_id="b0"), 999.0, None, None),
        # ... and a stale one is judged by the pid.
        (_owner(), 300.0, None, "pid 1 is not running on host h1"),
        (_owner(), 300.0, "2000", "pid 1 on host h1 is now another process"),
        (_owner(), 300.0, "1000", None),
        (_owner(boot_id="b0"), 300.0, "1000", "host h1 rebooted since the run started"),
        # Never a beat: its start time counts.
        (_owner(started=950.0), None, None, None),
        (_owner(), None, None, "pid 1 is not running on host h1"),
        # Another host.
        (_owner(host="h2"), 500.0, None, None),
        (_owner(host="h2"), 300.0, None, "no heartbeat from host h2 for 700 s (expiry 600 s)"),
    ],
)
def test_who_is_gone(
    owner: dict[str, Any], heartbeat: float | None, probe: str | None, gone: str | None
) -> None:
    assert _gone(owner, heartbeat, probe) == gone


def test_expiry_zero_judges_this_namespace_by_pid_and_never_expires_others() -> None:
    def judge(owner: Mapping[str, Any]) -> str | None:
        return gone_reason(owner, 0.0, 1e9, "h1", "b1", 0.0, lambda pid: None, "pid:111")

    assert judge(_owner()) == "pid 1 is not running on host h1"
    assert judge(_owner(namespace="pid:222")) is None
    assert judge(_owner(host="h2")) is None


def test_the_owner_records_its_pid_namespace_and_token_one() -> None:
    import re

    owner = new_owner("db.out", "")
    # Spark's default spark.redaction.regex: SHOW TBLPROPERTIES would hide a match.
    assert not re.search(r"(?i)secret|password|token|access[.]?key", json.dumps(owner))
    assert owner["epoch"] == 1
    assert owner["namespace"] == table_lock.pid_namespace()
    if Path("/proc/self/ns/pid").exists():
        assert owner["namespace"] == f"pid:{Path('/proc/self/ns/pid').stat().st_ino}"


# ------------------------------------------------------------ takeover: the CAS


def _locked_by(catalog: FakeCatalog, owner: Mapping[str, Any], beat: float) -> None:
    assert catalog.create_lock(LOCK, owner)
    catalog.set_properties(LOCK, {HEARTBEAT_PROPERTY: f"{beat:.3f}"})


def _record(catalog: FakeCatalog) -> dict[str, Any]:
    record = read_lock(catalog, LOCK)
    assert record is not None
    return record[0]


def test_a_takeover_moves_the_token_and_keeps_the_lock_table(tmp_path: Path) -> None:
    catalog = FakeCatalog(tmp_path)
    _locked_by(catalog, _owner(run="x"), beat=0.0)
    b = new_owner("db.out", "")
    assert take_over(catalog, LOCK, b, _record(catalog), now=lambda: 5.0)
    assert _record(catalog)["run"] == b["run"] and _record(catalog)["epoch"] == 2
    assert b["epoch"] == 2 and b["fence"] == f"{LOCK}_fence_2_x"
    assert catalog.table(b["fence"]) is not None
    assert read_lock(catalog, LOCK) == (_record(catalog), 5.0)
    # The next takeover (from b) moves it to 3 and drops b's fence.
    c = new_owner("db.out", "")
    assert take_over(catalog, LOCK, c, _record(catalog))
    assert _record(catalog)["epoch"] == 3 and catalog.table(b["fence"]) is None


def test_b_a_stalled_run_cannot_take_over_a_later_runs_lock(tmp_path: Path) -> None:
    """(b) A reads the gone owner x; B takes over first; A's stale takeover fails."""
    catalog = FakeCatalog(tmp_path)
    _locked_by(catalog, _owner(run="x"), beat=0.0)
    seen_by_a = _record(catalog)  # A reads the lock, then stalls
    b = new_owner("db.out", "")
    assert take_over(catalog, LOCK, b, _record(catalog))
    a = new_owner("db.out", "")
    assert not take_over(catalog, LOCK, a, seen_by_a)
    assert _record(catalog)["run"] == b["run"] and _record(catalog)["epoch"] == 2
    assert "fence" not in a and a["epoch"] == 1


def test_b_a_stalled_run_cannot_drop_a_lock_made_anew(tmp_path: Path) -> None:
    """A read x; B took over and released (lock and fence dropped); C made the lock anew."""
    catalog = FakeCatalog(tmp_path)
    _locked_by(catalog, _owner(run="x"), beat=0.0)
    seen_by_a = _record(catalog)
    b = new_owner("db.out", "")
    assert take_over(catalog, LOCK, b, _record(catalog))
    catalog.drop_lock(LOCK)
    catalog.drop_lock(b["fence"])
    c = new_owner("db.out", "")
    assert catalog.create_lock(LOCK, c)
    a = new_owner("db.out", "")
    assert not take_over(catalog, LOCK, a, seen_by_a)  # its fence is free, the lock is not
    assert _record(catalog)["run"] == c["run"]
    assert [t for t in catalog.tables if "fence" in t] == []


def test_of_two_runs_taking_over_at_once_one_wins(tmp_path: Path) -> None:
    catalog = FakeCatalog(tmp_path)
    _locked_by(catalog, _owner(run="x"), beat=0.0)
    gone = _record(catalog)
    runs = [new_owner("db.out", "") for _ in range(8)]
    won: list[bool] = [False] * len(runs)

    def take(i: int) -> None:
        won[i] = take_over(catalog, LOCK, runs[i], gone)

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(runs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(won) == 1
    assert _record(catalog)["run"] == runs[won.index(True)]["run"]


# ------------------------------------------------------------ the target


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[FakeEngine, Any]]:
    from sparkanon.families import load_config
    from tests._adult import adult_config, write_config

    raw = adult_config(tmp_path, tmp_path / "unused.csv", tmp_path / "unused_out")
    raw["input"] = {"table": "db.people"}
    raw["output"] = {"table": "db.out", "mode": "overwrite"}
    config = load_config(write_config(tmp_path, raw))
    yield FakeEngine(FakeCatalog(tmp_path / "wh")), config


def test_a_live_run_in_another_namespace_keeps_its_lock_and_its_version(
    setup: tuple[FakeEngine, Any],
) -> None:
    """(a) host name ours, pid 1 (here: another process), another namespace, fresh beat."""
    engine, config = setup
    catalog = engine.catalog()
    target = commit_stage.output_target(engine, config, given_table=False)
    assert isinstance(target, commit_stage.TableTarget)
    me = new_owner("db.out", "")
    live = {**me, "run": "liverun00001", "pid": 1, "pid_start": "1", "namespace": "pid:0"}
    assert catalog.create_lock(target.lock_name(), live)
    catalog.set_properties(target.lock_name(), {HEARTBEAT_PROPERTY: f"{time.time():.3f}"})
    staged = Path(target.versions_folder()) / "v-liverun00001"
    (staged / "data").mkdir(parents=True)
    with pytest.raises(OutputExistsError, match="run liverun00001"):
        with commit_stage.opened_output(engine, config, given_table=False, commit=True):
            pytest.fail("the lock of a live run was taken")
    assert _record_of(catalog, target.lock_name())["run"] == "liverun00001"
    assert staged.exists()
    target.recover()  # a target that holds no lock deletes nothing
    assert staged.exists()


def _record_of(catalog: Catalog, lock: str) -> dict[str, Any]:
    record = read_lock(catalog, lock)
    assert record is not None
    return record[0]


def _steal(catalog: Catalog, lock: str) -> None:
    """Another run takes the lock over (its record, the token one more)."""
    held = _record_of(catalog, lock)
    thief = {**held, "run": "thief0000001", "epoch": int(held["epoch"]) + 1}
    catalog.set_properties(lock, {OWNER_PROPERTY: json.dumps(thief)})


def _publication(staging: str) -> dict[str, list[tuple[str, str]]]:
    (Path(staging) / "data").mkdir(parents=True, exist_ok=True)
    return {"data": [("age", "long")]}


def test_a_commit_publishes_under_its_token(setup: tuple[FakeEngine, Any]) -> None:
    engine, config = setup
    with commit_stage.opened_output(engine, config, given_table=False, commit=True) as target:
        assert isinstance(target, commit_stage.TableTarget)
        staging = target.staging()
        assert staging.endswith(f"/v-{target._owner['run']}")
        target.commit(staging, {"verified": True}, _publication(staging))
    info = engine.catalog().table("db.out")
    assert info is not None and info.location == f"{staging}/data"
    assert engine.catalog().table(LOCK) is None


def test_c_a_commit_refuses_when_the_token_moved_before_its_update(
    setup: tuple[FakeEngine, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """(c) the token moves after the commit's first check, before its metastore update."""
    engine, config = setup
    catalog = engine.catalog()
    written = commit_stage.write_metadata

    def write_then_lose_the_lock(*args: Any, **kwargs: Any) -> None:
        written(*args, **kwargs)
        _steal(catalog, LOCK)

    monkeypatch.setattr(commit_stage, "write_metadata", write_then_lose_the_lock)
    with pytest.raises(LockLostError) as info:
        with commit_stage.opened_output(engine, config, given_table=False, commit=True) as t:
            assert isinstance(t, commit_stage.TableTarget)
            t.commit(t.staging(), {"verified": True}, _publication(t.staging()))
    assert info.value.exit_code == EXIT_INTERNAL
    message = str(info.value)
    assert "immediately before its metastore update" in message
    assert "thief0000001" in message and "nothing was committed" in message
    assert catalog.table("db.out") is None
    assert _record_of(catalog, LOCK)["run"] == "thief0000001"  # the thief's lock is left


def test_c_a_commit_refuses_when_the_token_moved_during_its_update(
    setup: tuple[FakeEngine, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """(c) the token moves while the metastore update runs: the replaced version is kept."""
    engine, config = setup
    catalog = engine.catalog()
    with commit_stage.opened_output(engine, config, False, True) as first:
        assert isinstance(first, commit_stage.TableTarget)
        old = first.staging()
        first.commit(old, {"verified": True}, _publication(old))
    pointed = catalog.point_table

    def point_and_lose_the_lock(name: str, location: str) -> None:
        _steal(catalog, LOCK)
        pointed(name, location)

    monkeypatch.setattr(catalog, "point_table", point_and_lose_the_lock)
    with pytest.raises(LockLostError) as info:
        with commit_stage.opened_output(engine, config, False, True) as second:
            assert isinstance(second, commit_stage.TableTarget)
            new = second.staging()
            second.commit(new, {"verified": True}, _publication(new))
    message = str(info.value)
    assert "right after its metastore update" in message and "was kept" in message
    table = catalog.table("db.out")
    assert table is not None and table.location == f"{new}/data"
    assert Path(old).exists() and Path(new).exists()  # neither version deleted


def test_a_killed_runs_expired_lock_is_taken_over_and_its_version_removed(
    setup: tuple[FakeEngine, Any],
) -> None:
    """This host and namespace, a dead pid, a heartbeat an hour old: gone, taken over."""
    engine, config = setup
    catalog = engine.catalog()
    killed = new_owner("db.out", "") | {"run": "killedrun001", "pid": dead_pid()}
    assert catalog.create_lock(LOCK, killed)
    catalog.set_properties(LOCK, {HEARTBEAT_PROPERTY: f"{time.time() - 3600:.3f}"})
    target = commit_stage.output_target(engine, config, given_table=False)
    assert isinstance(target, commit_stage.TableTarget)
    staged = Path(target.versions_folder()) / "v-killedrun001"
    (staged / "data").mkdir(parents=True)
    with commit_stage.opened_output(engine, config, False, True) as mine:
        assert isinstance(mine, commit_stage.TableTarget)
        held = _record_of(catalog, LOCK)
        assert held["run"] == mine._owner["run"] and held["epoch"] == 2
        assert catalog.table(f"{LOCK}_fence_2_killedrun001") is not None
        assert not staged.exists()
    assert catalog.table(LOCK) is None
    assert [t for t in catalog.tables if "fence" in t] == []


def test_a_run_that_lost_its_lock_removes_no_version(setup: tuple[FakeEngine, Any]) -> None:
    engine, config = setup
    target = commit_stage.output_target(engine, config, given_table=False)
    assert isinstance(target, commit_stage.TableTarget)
    target.acquire()
    try:
        staged = Path(target.versions_folder()) / "v-otherrun0001"
        (staged / "data").mkdir(parents=True)
        _steal(engine.catalog(), LOCK)
        with pytest.raises(LockLostError, match="before it recovers the output"):
            target.recover()
        assert staged.exists()
    finally:
        target.release()
    assert _record_of(engine.catalog(), LOCK)["run"] == "thief0000001"
