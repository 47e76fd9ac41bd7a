"""Output safety: what a job writes never lands on what it reads, or on what it did not write.

Three rules, shared by every command (``docs/operations.md``, "Output safety"):

* **Reads and writes apart** (:func:`check_reads_and_writes`): every location a command
  writes (``output.path``, ``--metrics-out``, ``init --out``, ``evaluate --out``,
  ``reconstruct --out``) is refused when it is, contains or lies inside a location the
  command reads (the input, the config file, hierarchy and taxonomy files, the long
  item table, the holdout, the population, the key file), compared by
  :func:`sparkanon.io.path_relation` after :func:`sparkanon.io.canonical_location` (or the
  engine's ``canonical_path``): symlinks and ``..`` resolved on local disks, Hadoop URIs
  by scheme, authority and normalized path.
* **Overwrite only sparkanon's own output** (:data:`MARKER`): every output directory
  sparkanon creates holds a small marker file; ``output.mode: overwrite`` replaces an
  existing directory only when it holds one (or is empty).
* **Owner-only files** (:func:`modes`): outputs and their staging directories are made
  ``0700`` (directories) and ``0600`` (files), or ``0750`` and ``0640`` under
  ``output.permissions: group``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparkanon.errors import ConfigError, OutputExistsError
from sparkanon.io import canonical_location, path_relation

MARKER = ".sparkanon-output"
"""The file that marks a directory as written by sparkanon (hidden: never read as data)."""
MARKER_FORMAT = 1
"""The marker's format version."""

PERMISSIONS = {"owner": (0o700, 0o600), "group": (0o750, 0o640)}
"""``output.permissions`` -> (directory mode, file mode)."""


def modes(permissions: str = "owner") -> tuple[int, int]:
    """The (directory, file) modes of ``output.permissions``."""
    return PERMISSIONS[permissions]


def marker_text(kind: str = "output") -> str:
    """The marker's content: who wrote the directory and what it is; nothing secret."""
    return json.dumps({"written_by": "sparkanon", "format": MARKER_FORMAT, "kind": kind}) + "\n"


@dataclass(frozen=True)
class Location:
    """A location a command reads or writes.

    Attributes:
        key: the config key or flag that names it (``input.path``, ``--metrics-out``).
        path: the path as given.
        what: what it is, in words (``the input``), for messages.
        local: read or written by Python on this machine (a config, hierarchy or key
            file, ``--metrics-out``), not through the engine's filesystem.
    """

    key: str
    path: str
    what: str = "a file"
    local: bool = False


def job_reads(config: Any, reads_input: bool = True) -> list[Location]:
    """Every location a job config makes a command read.

    Args:
        config: the :class:`~sparkanon.config.JobConfig`.
        reads_input: whether ``input.path`` is read (not when the caller gives the table).
    """
    found: list[Location] = []
    if reads_input and config.input.path is not None:
        found.append(Location("input.path", config.input.path, "the input"))
    for i, attr in enumerate(config.attributes):
        hierarchy = getattr(attr, "hierarchy", None)
        if hierarchy:
            found.append(
                Location(f"attributes.{i}.hierarchy", hierarchy, "a hierarchy file", local=True)
            )
    sens = config.sensitive
    if getattr(sens, "taxonomy", None):
        found.append(Location("sensitive.taxonomy", sens.taxonomy, "the item taxonomy", local=True))
    long = getattr(sens, "long", None)
    if long is not None:
        found.append(Location("sensitive.long.path", long.path, "the long item table"))
    if config.report.holdout:
        found.append(Location("report.holdout", config.report.holdout, "the holdout"))
    if config.report.population:
        found.append(Location("report.population", config.report.population, "the population"))
    if config.stream is not None:
        found.append(Location("stream.source", config.stream.source, "the stream source"))
    return found


def check_reads_and_writes(
    reads: Iterable[Location],
    writes: Iterable[Location],
    canonical: Callable[[str], str] | None = None,
) -> None:
    """Refuse a write location that is, contains or lies inside a read location.

    Args:
        reads: what the command reads.
        writes: what it writes.
        canonical: how the engine resolves its own paths (``Engine.canonical_path``);
            ``None``: :func:`~sparkanon.io.canonical_location`. Local locations always
            use the latter.

    Raises:
        ConfigError: naming both keys, both paths as given and as resolved, and the fix.
    """
    engine_canonical = canonical or canonical_location
    resolved = {}

    def where(loc: Location) -> str:
        if loc not in resolved:
            resolved[loc] = (canonical_location if loc.local else engine_canonical)(loc.path)
        return resolved[loc]

    reads = list(reads)
    for out in writes:
        for inp in reads:
            relation = path_relation(where(inp), where(out))
            if relation is None:
                continue
            raise ConfigError(
                f"{out.key}: {out.path!r} ({where(out)}) {relation} {inp.what} ({inp.key}: "
                f"{inp.path!r}, {where(inp)}), which this run reads; writing there would "
                f"destroy or pollute it. Set {out.key} to a location outside it"
            )


def check_overwritable(names: list[str], is_directory: bool, path: str, key: str) -> None:
    """Refuse to replace ``path`` unless sparkanon wrote it (its marker) or it is empty.

    Args:
        names: the entries of ``path``.
        is_directory: whether ``path`` is a directory.
        path: the existing output.
        key: the config key naming it (for the message).

    Raises:
        OutputExistsError: a file, or a non-empty directory without :data:`MARKER`.
    """
    if is_directory and (not names or MARKER in names):
        return
    what = "a directory sparkanon did not write" if is_directory else "a file"
    raise OutputExistsError(
        f"{key}: {path!r} exists and is {what} (it has no {MARKER} marker), so output.mode: "
        "overwrite will not replace it: sparkanon only replaces outputs it wrote. Remove it "
        f"yourself if it may go (an output of a sparkanon older than the marker too), or "
        f"choose another {key}"
    )


def write_private_text(path: str, text: str, permissions: str = "owner") -> None:
    """Write a local text file created with the file mode of ``permissions`` (no window).

    An existing file is replaced, and its mode set too.
    """
    mode = modes(permissions)[1]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, mode)


def make_local_dir(path: str, permissions: str = "owner", kind: str = "output") -> bool:
    """Create a local output directory with its mode and its marker; ``False`` if it existed.

    An existing directory is left as it is (its mode and contents).
    """
    folder = Path(path)
    if folder.is_dir():
        return False
    dir_mode, _ = modes(permissions)
    folder.mkdir(parents=True, mode=dir_mode)
    os.chmod(folder, dir_mode)
    write_private_text(str(folder / MARKER), marker_text(kind), permissions)
    return True


def restrict_local_tree(root: str, dir_mode: int, file_mode: int) -> None:
    """Set ``dir_mode`` on every directory and ``file_mode`` on every file under ``root``.

    Symbolic links are neither followed nor changed.
    """
    top = Path(root)
    if top.is_symlink() or not top.exists():
        return
    if top.is_file():
        os.chmod(top, file_mode)
        return
    os.chmod(top, dir_mode)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, dir_mode)
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, file_mode)
