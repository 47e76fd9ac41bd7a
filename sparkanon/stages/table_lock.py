"""The lock a table run holds on its output table or partition, and when its owner is gone.

A lock is a table of the metastore, ``<db>.__sparkanon_lock_<table>[_<partition hash>]``:
the metastore creates a name once, so of two runs racing for it exactly one gets it. The
lock records its **owner** in a table property (``sparkanon.lock``, JSON): the host name,
the host's boot id, the driver's **pid namespace** (:func:`pid_namespace`), its pid and
that process's start time, a run id, the run's start time and a **fencing token** (an
integer, 1 when the lock is made, one more at each takeover); and a **heartbeat**
(``sparkanon.heartbeat``, seconds since the epoch) that the owner renews while it runs.

An owner is **gone** (:func:`gone_reason`) only when its heartbeat (its start time, before
the first beat) is older than the expiry (``SPARKANON_LOCK_EXPIRY_SECONDS``, default
:data:`DEFAULT_EXPIRY_SECONDS`): a heartbeat younger than that always means alive,
whatever its pid looks like from here. Past the expiry,

* an owner on this host *and* in this pid namespace (the same host name and namespace) is
  gone if the host rebooted since (another boot id), its pid is not running, or that pid
  is now another process (another start time); while that process runs it is alive;
* any other owner (another host, or this host name in another pid namespace: a container
  with host networking, a Kubernetes pod, whose pids mean nothing here) is gone.

``0`` never expires a heartbeat: an owner in this namespace is then judged by its pid
alone, any other is never gone.

A lock whose owner is gone is taken over (:func:`take_over`) by a compare-and-swap on
its fencing token; a lock without an owner record (written by an older sparkanon) is
never taken over. The token with the run id names the holder: a run re-checks both
(:func:`holds`) immediately before and after its commit's metastore updates.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from sparkanon.engine.base import Catalog
from sparkanon.stages._common import log

OWNER_PROPERTY = "sparkanon.lock"
"""The lock table's property holding its owner (JSON)."""
HEARTBEAT_PROPERTY = "sparkanon.heartbeat"
"""The lock table's property holding the owner's last heartbeat (seconds since the epoch)."""
EXPIRY_ENV = "SPARKANON_LOCK_EXPIRY_SECONDS"
"""Environment variable: seconds without a heartbeat after which another host's lock is gone."""
DEFAULT_EXPIRY_SECONDS = 600.0
"""Default expiry of another host's lock (ten minutes, ten heartbeats)."""

Probe = Callable[[int], "str | None"]
"""``pid -> None`` (no such process) or its start time (``""`` when unknown)."""


def expiry_seconds() -> float:
    """The configured expiry (``$SPARKANON_LOCK_EXPIRY_SECONDS``, else the default)."""
    text = os.environ.get(EXPIRY_ENV, "").strip()
    if not text:
        return DEFAULT_EXPIRY_SECONDS
    try:
        value = float(text)
    except ValueError:
        from sparkanon.errors import ConfigError

        raise ConfigError(f"{EXPIRY_ENV}={text!r}: expected a number of seconds") from None
    return max(value, 0.0)


def heartbeat_interval(expiry: float) -> float:
    """Seconds between heartbeats: a tenth of the expiry, between 1 s and 60 s."""
    return 60.0 if expiry <= 0 else min(60.0, max(1.0, expiry / 10))


def boot_id() -> str:
    """This host's boot id (Linux), ``""`` when the system has none."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""


def process_start(pid: int) -> str | None:
    """A process's start time, ``None`` when it does not run, ``""`` when unknown.

    On Linux the start time is field 22 of ``/proc/<pid>/stat`` (clock ticks since
    boot), which tells a process from a later one that reuses its pid. Elsewhere only
    whether the pid runs is known (``os.kill(pid, 0)``).
    """
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
        # The command name (field 2) is in parentheses and may hold spaces.
        return stat.rsplit(")", 1)[1].split()[19]
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return None
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return ""
    return ""


def pid_namespace() -> str:
    """This process's pid namespace, ``""`` when unknown.

    On Linux ``pid:<inode>`` of ``/proc/self/ns/pid`` (one inode per namespace on a
    host: two containers, or a container and the host, differ). Without it, the
    container id ``/proc/self/cgroup`` names (``container:<64 hex>``), if any.
    """
    try:
        return f"pid:{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        pass
    try:
        with open("/proc/self/cgroup", encoding="ascii", errors="replace") as f:
            found = re.search(r"[0-9a-f]{64}", f.read())
    except OSError:
        return ""
    return f"container:{found.group(0)}" if found else ""


def new_owner(output: str, partition: str) -> dict[str, Any]:
    """The owner record of a run starting now, in this process (fencing token 1)."""
    now = time.time()
    return {
        "output": output,
        "partition": partition,
        "run": uuid.uuid4().hex[:12],
        "epoch": 1,
        "host": socket.gethostname(),
        "namespace": pid_namespace(),
        "boot_id": boot_id(),
        "pid": os.getpid(),
        "pid_start": process_start(os.getpid()) or "",
        "started": now,
        "started_utc": datetime.fromtimestamp(now, timezone.utc).isoformat(timespec="seconds"),
    }


def describe(owner: Mapping[str, Any]) -> str:
    """The owner as messages name it (host, pid namespace, pid, run, start, token)."""
    if not owner.get("run"):
        return "an unknown owner"
    namespace = f" ({owner['namespace']})" if owner.get("namespace") else ""
    token = f", token {owner['epoch']}" if owner.get("epoch") else ""
    return (
        f"run {owner.get('run')} on host {owner.get('host', '?')}{namespace} pid "
        f"{owner.get('pid', '?')}, started {owner.get('started_utc', '?')}{token}"
    )


def gone_reason(
    owner: Mapping[str, Any],
    heartbeat: float | None,
    now: float,
    host: str,
    this_boot: str,
    expiry: float,
    probe: Probe,
    namespace: str = "",
) -> str | None:
    """Why a lock's owner is gone, or ``None`` while it may be alive (module docstring).

    Args:
        owner: the owner record of the lock.
        heartbeat: its last heartbeat (``None``: never beat; its start time counts).
        now: the time now (seconds since the epoch).
        host: this host's name.
        this_boot: this host's boot id (``""`` unknown).
        expiry: seconds without a heartbeat after which an owner may be gone (``0``:
            never; an owner in this pid namespace is then judged by its pid alone).
        probe: ``pid -> start time`` of this host's processes (:func:`process_start`).
        namespace: this process's pid namespace (:func:`pid_namespace`); the owner's pid
            is checked only when its host name and namespace are these.
    """
    if not all(owner.get(key) for key in ("run", "host", "pid")):
        return None
    last = heartbeat if heartbeat is not None else float(owner.get("started") or 0.0)
    age = now - last
    if expiry > 0 and age <= expiry:
        return None  # a fresh heartbeat: alive, whatever the pid looks like from here
    theirs_ns = str(owner.get("namespace") or "")
    if owner["host"] == host and theirs_ns == namespace:
        pid = int(owner["pid"])
        theirs = str(owner.get("boot_id") or "")
        if theirs and this_boot and theirs != this_boot:
            return f"host {host} rebooted since the run started"
        state = probe(pid)
        if state is None:
            return f"pid {pid} is not running on host {host}"
        recorded = str(owner.get("pid_start") or "")
        if recorded and state and state != recorded:
            return f"pid {pid} on host {host} is now another process"
        return None
    if expiry <= 0:
        return None
    where = f"host {owner['host']}"
    if owner["host"] == host:
        where += f" in another pid namespace ({theirs_ns or 'unknown'})"
    return f"no heartbeat from {where} for {age:.0f} s (expiry {expiry:.0f} s)"


def token_of(owner: Mapping[str, Any]) -> int:
    """The owner's fencing token (``0`` for a record without one).

    It is stored under the key ``epoch``: Spark redacts a table property whose value
    holds ``token`` (``spark.redaction.regex``), and a redacted owner record reads as none.
    """
    try:
        return int(owner.get("epoch") or 0)
    except (TypeError, ValueError):
        return 0


def read_lock(catalog: Catalog, lock: str) -> tuple[dict[str, Any], float | None] | None:
    """The lock's owner record and heartbeat, or ``None`` when the lock does not exist."""
    info = catalog.table(lock)
    if info is None:
        return None
    try:
        owner = json.loads(info.properties.get(OWNER_PROPERTY, "") or "{}")
    except json.JSONDecodeError:
        owner = {}
    beat = info.properties.get(HEARTBEAT_PROPERTY)
    try:
        heartbeat = float(beat) if beat else None
    except ValueError:
        heartbeat = None
    return (owner if isinstance(owner, dict) else {}), heartbeat


def owns(catalog: Catalog, lock: str, run: str) -> bool:
    """Whether the lock exists and records ``run`` as its owner."""
    record = read_lock(catalog, lock)
    return record is not None and record[0].get("run") == run


def holds(catalog: Catalog, lock: str, owner: Mapping[str, Any]) -> bool:
    """Whether the lock still records this owner's run *and* fencing token."""
    record = read_lock(catalog, lock)
    return (
        record is not None
        and record[0].get("run") == owner.get("run")
        and token_of(record[0]) == token_of(owner)
    )


class Heartbeat:
    """Renews a lock's heartbeat from a daemon thread while the run holds it.

    Args:
        catalog: the catalog holding the lock.
        lock: the lock table.
        run: the run id the lock must record (a beat stops when it records another).
        interval: seconds between beats.
    """

    def __init__(self, catalog: Catalog, lock: str, run: str, interval: float) -> None:
        self.catalog, self.lock, self.run, self.interval = catalog, lock, run, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="sparkanon-lock", daemon=True)

    def start(self) -> None:
        """Beat once now, then every ``interval`` seconds."""
        self.catalog.set_properties(self.lock, {HEARTBEAT_PROPERTY: f"{time.time():.3f}"})
        self._thread.start()

    def stop(self) -> None:
        """Stop beating (waits for a beat in progress)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                if not owns(self.catalog, self.lock, self.run):
                    log.warning("lock %s no longer records this run; heartbeat stopped", self.lock)
                    return
                self.catalog.set_properties(self.lock, {HEARTBEAT_PROPERTY: f"{time.time():.3f}"})
            except Exception as exc:  # noqa: BLE001 - a missed beat is retried next time
                log.warning("lock %s: heartbeat failed (%s)", self.lock, type(exc).__name__)


def fence_name(lock: str, gone: Mapping[str, Any]) -> str:
    """The table whose creation moves the lock's token past ``gone``'s (:func:`take_over`)."""
    return f"{lock}_fence_{token_of(gone) + 1}_{gone.get('run')}"


def take_over(
    catalog: Catalog,
    lock: str,
    owner: dict[str, Any],
    gone: Mapping[str, Any],
    now: Callable[[], float] = time.time,
) -> bool:
    """Replace a gone owner's record in the lock by this run's; ``False`` if that failed.

    A compare-and-swap on the lock's fencing token, built on the one atomic step the
    metastore offers (a table name is created once):

    1. create the *fence* ``<lock>_fence_<token + 1>_<gone run>`` (:func:`fence_name`):
       of all runs that read the same gone owner, exactly one makes it;
    2. re-read the lock: only if it still records the gone owner's run and token (no
       other run took it over, released it or made it anew since ``gone`` was read) is
       it replaced; else the fence is dropped and ``False`` returned;
    3. write this run's record, token ``+ 1``, and a heartbeat into the lock (the lock
       table stays; its property changes), then read it back.

    A run that read the lock long ago (a stalled driver) thus cannot drop or overwrite a
    later run's lock: its fence names a token that is not current any more, or the
    re-read shows another run. The winner records its fence in its owner record and drops
    it at release; it drops the gone owner's fence (or the takeover marker of an older
    sparkanon) at once.

    Args:
        catalog: the catalog holding the lock.
        lock: the lock table.
        owner: this run's owner record (:func:`new_owner`); on success its ``token`` and
            ``fence`` are set.
        gone: the owner record read from the lock and judged gone.
        now: the clock (seconds since the epoch) of the heartbeat written.
    """
    fence = fence_name(lock, gone)
    if not catalog.create_lock(fence, owner):
        return False
    current = read_lock(catalog, lock)
    if (
        current is None
        or current[0].get("run") != gone.get("run")
        or token_of(current[0]) != token_of(gone)
    ):
        catalog.drop_lock(fence)
        return False
    mine = {**owner, "epoch": token_of(gone) + 1, "fence": fence}
    mine.pop("marker", None)
    try:
        catalog.set_properties(
            lock, {OWNER_PROPERTY: json.dumps(mine), HEARTBEAT_PROPERTY: f"{now():.3f}"}
        )
    except Exception:
        if read_lock(catalog, lock) is not None:
            raise
        catalog.drop_lock(fence)  # the lock was dropped meanwhile: nothing to take over
        return False
    if not holds(catalog, lock, mine):
        catalog.drop_lock(fence)
        return False
    owner.update(epoch=mine["epoch"], fence=fence)
    for left in (gone.get("fence"), gone.get("marker")):
        if left:
            catalog.drop_lock(str(left))
    return True
