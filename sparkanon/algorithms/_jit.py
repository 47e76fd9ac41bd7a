"""How the package's numba kernels are compiled, and where their machine code is cached.

:func:`compiled` is the one decorator of every kernel module (``_slie_kernel``, ``_mdav_kernel``,
``_kl_kernel``, ``_sae_kernel``, ``_cuts_kernel``, ``condensation._assign_kernel``): nopython,
cached on disk.

Numba keys its on-disk cache by the directory of the source file. When sparkanon runs from
an archive (``spark-submit --py-files sparkanon.zip`` or a wheel), Spark copies the archive
into a new directory for every application, so numba's own locators either cannot cache
(a wheel: no locator accepts the path) or cache under a path no later application sees
(a zip): with them every application compiles the kernels again, about 20 s per Python
worker before the first block. :class:`ArchiveCacheLocator` keys the cache by the module's path
*inside* the archive instead, in the user's numba cache folder (``NUMBA_CACHE_DIR`` when
set), and stamps it with a hash of the module's source, so a later application (or a
later version of the archive) finds the machine code when, and only when, the source is
the same. Source files on disk keep numba's own locators (``__pycache__`` beside them).
"""

from __future__ import annotations

import functools
import hashlib
import os
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from numba import config, njit
from numba.core import caching
from numba.misc.appdirs import AppDirs

__all__ = ["ArchiveCacheLocator", "archive_member", "compiled"]

CACHE_FOLDER = "sparkanon-archives"
"""The folder, in the numba cache directory, that holds the kernels run from archives."""


def archive_member(py_file: str) -> tuple[str, str] | None:
    """The archive and the path inside it of a module imported from a zip or a wheel.

    Args:
        py_file: the module's file as Python reports it
            (``/work/app-1/sparkanon.zip/sparkanon/algorithms/_jit.py``).

    Returns:
        ``(archive, member)`` (``member`` with ``/`` separators), or ``None`` when the file
        exists on disk or no parent of it is a zip archive.
    """
    path = Path(py_file)
    if path.exists():
        return None
    for i in range(len(path.parts) - 1, 0, -1):
        archive = Path(*path.parts[:i])
        if archive.is_file():
            if not zipfile.is_zipfile(archive):
                return None
            return str(archive), PurePosixPath(*path.parts[i:]).as_posix()
    return None


@functools.cache
def _member_digest(archive: str, member: str, mtime: float, size: int) -> str:
    """SHA-256 of one archive member (memoised per archive version: mtime and size)."""
    with zipfile.ZipFile(archive) as zf, zf.open(member) as f:
        return hashlib.sha256(f.read()).hexdigest()


class ArchiveCacheLocator(caching._CacheLocator):
    """Numba cache locator for modules imported from a zip or wheel (see the module docstring).

    The cache folder is ``<numba cache>/sparkanon-archives/<member's folder>``; the source
    stamp is the member's SHA-256, so an index written for other source is not used.
    """

    def __init__(self, py_func: Callable[..., Any], archive: str, member: str) -> None:
        self._lineno = py_func.__code__.co_firstlineno
        self._archive = archive
        self._member = member
        base = config.CACHE_DIR or AppDirs(appname="numba", appauthor=False).user_cache_dir
        folder = PurePosixPath(member).parent.as_posix().replace("/", "_")
        self._cache_path = os.path.join(base, CACHE_FOLDER, folder)

    def get_cache_path(self) -> str:  # noqa: D102
        return self._cache_path

    def get_source_stamp(self) -> str:  # noqa: D102
        st = os.stat(self._archive)
        return _member_digest(self._archive, self._member, st.st_mtime, st.st_size)

    def get_disambiguator(self) -> str:  # noqa: D102
        return str(self._lineno)

    @classmethod
    def from_function(  # noqa: D102
        cls, py_func: Callable[..., Any], py_file: str
    ) -> ArchiveCacheLocator | None:
        found = archive_member(py_file)
        if found is None:
            return None
        self = cls(py_func, *found)
        try:
            self.ensure_cache_path()
        except OSError:  # no writable cache folder: numba's own locators decide
            return None
        return self


def _register() -> None:
    """Put :class:`ArchiveCacheLocator` first in numba's locators (once per process)."""
    locators = caching.CacheImpl._locator_classes
    if ArchiveCacheLocator not in locators:
        locators.insert(0, ArchiveCacheLocator)


_register()


def compiled(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """The decorator of every kernel function: ``njit`` in nopython mode, cached on disk.

    Args:
        **options: further ``njit`` options (``error_model="numpy"``).
    """
    return njit(cache=True, **options)
