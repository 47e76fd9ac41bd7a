"""The lock a table run holds on its output table or partition, and when its owner is gone.

A lock is a table of the metastore, ``<db>.__sparkanon_lock_<table>[_<partition hash>]``:
the metastore creates a name once, so of two runs racing for it exactly one gets it. The
lock records its **owner** in a table property (``sparkanon.lock``, JSON): the host name,
the host's boot id, the driver's pid and that process's start time, a run id and the
run's start time; and a **heartbeat** (``sparkanon.heartbeat``, seconds since the epoch)
that the owner renews while it runs.

An owner is **gone** (:func:`gone_reason`) when

* it ran on this host (same host name) and the host rebooted since (another boot id), or
  its pid is not running, or that pid is now another process (another start time); or
* it ran on another host and its heartbeat is older than the expiry
  (``SPARKANON_LOCK_EXPIRY_SECONDS``, default :data:`DEFAULT_EXPIRY_SECONDS`; ``0``
  never expires a lock of another host).

A lock whose owner is gone is taken over (:func:`take_over`); a lock without an owner
record (written by an older sparkanon) is never taken over.
"""

from __future__ import annotations

import json
import os
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


def new_owner(output: str, partition: str) -> dict[str, Any]:
    """The owner record of a run starting now, in this process."""
    now = time.time()
    return {
        "output": output,
        "partition": partition,
        "run": uuid.uuid4().hex[:12],
        "host": socket.gethostname(),
        "boot_id": boot_id(),
        "pid": os.getpid(),
        "pid_start": process_start(os.getpid()) or "",
        "started": now,
        "started_utc": datetime.fromtimestamp(now, timezone.utc).isoformat(timespec="seconds"),
    }


def describe(owner: Mapping[str, Any]) -> str:
    """The owner as messages name it (host, pid, run, start)."""
    if not owner.get("run"):
        return "an unknown owner"
    return (
        f"run {owner.get('run')} on host {owner.get('host', '?')} pid {owner.get('pid', '?')}, "
        f"started {owner.get('started_utc', '?')}"
    )


def gone_reason(
    owner: Mapping[str, Any],
    heartbeat: float | None,
    now: float,
    host: str,
    this_boot: str,
    expiry: float,
    probe: Probe,
) -> str | None:
    """Why a lock's owner is gone, or ``None`` while it may be alive (module docstring).

    Args:
        owner: the owner record of the lock.
        heartbeat: its last heartbeat (``None``: never beat; its start time counts).
        now: the time now (seconds since the epoch).
        host: this host's name.
        this_boot: this host's boot id (``""`` unknown).
        expiry: seconds without a heartbeat after which another host's owner is gone
            (``0``: never).
        probe: ``pid -> start time`` of this host's processes (:func:`process_start`).
    """
    if not all(owner.get(key) for key in ("run", "host", "pid")):
        return None
    pid = int(owner["pid"])
    if owner["host"] == host:
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
    last = heartbeat if heartbeat is not None else float(owner.get("started") or 0.0)
    if now - last > expiry:
        return (
            f"no heartbeat from host {owner['host']} for {now - last:.0f} s (expiry {expiry:.0f} s)"
        )
    return None


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


def take_over(catalog: Catalog, lock: str, owner: dict[str, Any], gone: Mapping[str, Any]) -> bool:
    """Replace the lock of a gone owner by this run's; ``False`` if another run got there.

    The metastore has no compare-and-swap, so two runs must not both drop the gone
    owner's lock and make their own: each first creates the *takeover marker*
    ``<lock>_takeover_<gone run id>`` (created once, like the lock), and only the run
    that made it drops the gone lock and creates its own, recording the marker (its
    owner drops it at release; a later takeover of this lock drops it too).
    """
    marker = f"{lock}_takeover_{gone['run']}"
    if not catalog.create_lock(marker, owner):
        return False
    catalog.drop_lock(lock)
    if gone.get("marker"):
        catalog.drop_lock(str(gone["marker"]))
    owner["marker"] = marker
    if catalog.create_lock(lock, owner):
        return True
    owner.pop("marker")
    catalog.drop_lock(marker)
    return False
