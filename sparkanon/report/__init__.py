"""The HTML report of an evaluation: one self-contained file beside ``metrics.json``.

* :func:`render_html` - the page of an evaluation dict (schema 1 of ``evaluation.json``).
* :func:`write_report` - the page written atomically to a path.

The layout and the privacy rules are in :mod:`sparkanon.report.html`; the plots (inline
SVG, no plotting library) in :mod:`sparkanon.report.svg`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sparkanon.report.html import render_html

__all__ = ["render_html", "write_report"]


def write_report(evaluation: Mapping[str, Any], path: str) -> None:
    """Write the report of ``evaluation`` to ``path`` atomically.

    The page is written to a temporary file in the same directory, flushed to disk, then
    renamed over ``path``: a reader sees the old file or the whole new one, never half.

    Args:
        evaluation: the evaluation dict (schema 1).
        path: the file to write (its directory must exist).

    Raises:
        ValueError: an evaluation :func:`render_html` refuses (nothing written).
        OSError: the directory is missing or not writable (nothing left behind).
    """
    text = render_html(evaluation)
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
