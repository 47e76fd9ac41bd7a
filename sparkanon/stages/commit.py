"""Stage ``commit``: ``metrics.json``, the resolved config, and the move into place.

The publication was written to ``<output>.__sparkanon_tmp_<id>``; after verification
the metrics and the config the job ran are written beside it and the directory is
renamed to ``output.path`` (an existing output under ``mode: overwrite`` is moved
aside first and deleted last).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import yaml

from sparkanon.config import JobConfig
from sparkanon.engine.base import Engine
from sparkanon.errors import OutputExistsError

RESOLVED_CONFIG = "config.yaml"
"""The config the job ran (overrides applied), written beside ``metrics.json``."""


def resolved_config_yaml(config: JobConfig) -> str:
    """The job's config, overrides applied, as YAML (what ``scripts/verify_output.py`` reads)."""
    return yaml.safe_dump(config.model_dump(mode="json", by_alias=True), sort_keys=False)


def move_into_place(engine: Engine, tmp_path: str, out_path: str, mode: str) -> None:
    """Rename ``tmp_path`` to ``out_path`` (moving an existing output aside under overwrite)."""
    if engine.path_exists(out_path):
        if mode != "overwrite":
            raise OutputExistsError(
                f"output.path: {out_path!r} appeared while the job ran; nothing was written"
            )
        trash = f"{out_path}.__sparkanon_old_{uuid.uuid4().hex[:12]}"
        engine.rename_path(out_path, trash)
        engine.rename_path(tmp_path, out_path)
        engine.delete_path(trash)
    else:
        engine.rename_path(tmp_path, out_path)


def commit(engine: Engine, config: JobConfig, tmp_path: str, metrics: dict[str, Any]) -> None:
    """Write ``metrics.json`` and the resolved config into ``tmp_path``, then move it into place."""
    engine.write_text(f"{tmp_path}/metrics.json", json.dumps(metrics, indent=2, sort_keys=False))
    engine.write_text(f"{tmp_path}/{RESOLVED_CONFIG}", resolved_config_yaml(config))
    move_into_place(engine, tmp_path, config.output.path.rstrip("/"), config.output.mode)
