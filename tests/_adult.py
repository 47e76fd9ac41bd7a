"""Helpers to build Adult samples and job configs for the end-to-end tests, and the blocks
the kernel tests compare on (:func:`adult_blocks`, :class:`KernelParity`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import sparkanon.per_block.cluster as cluster_stage
from sparkanon.algorithms import Block, cluster_block, place_rows
from sparkanon.engine.local import LocalEngine
from sparkanon.families import load_config, parse_config
from sparkanon.pipeline import run_job
from tests._helpers import both_paths
from tests._inputs import ADULT_CONF, ADULT_CSV, ROOT, merge_sections, write_config

__all__ = [
    "ADULT_CONF",
    "ADULT_CSV",
    "ROOT",
    "adult_config",
    "adult_sample",
    "run_adult",
    "write_config",
]


def adult_sample(
    tmp: Path, rows: int, name: str = "adult_sample.csv", fnlwgt_digits: int | None = None
) -> Path:
    """The header and the first ``rows`` rows of the bundled Adult CSV.

    With ``fnlwgt_digits``, only rows whose fnlwgt has that many digits count
    (Yang et al. 2014's setting keeps the 6-digit ones).
    """
    lines = ADULT_CSV.read_text(encoding="utf-8").splitlines()
    if fnlwgt_digits is not None:
        column = lines[0].split(",").index("fnlwgt")
        lines = lines[:1] + [
            line for line in lines[1:] if len(line.split(",")[column]) == fnlwgt_digits
        ]
    lines = lines[: rows + 1]
    path = tmp / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def adult_config(
    tmp: Path, input_path: Path, out: Path, conf: Path = ADULT_CONF, **overrides: Any
) -> dict[str, Any]:
    """A bundled config (the demo by default) with absolute paths, its report off.

    The report (``report.enabled``) adds the evaluation's passes to a run; the tests that
    want it turn it on (``report={"enabled": True}``). ``overrides`` replace whole
    sections' keys (:func:`tests._inputs.merge_sections`).
    """
    raw = yaml.safe_load(conf.read_text(encoding="utf-8"))
    cfg = copy.deepcopy(raw)
    cfg["report"] = {"enabled": False}
    cfg["input"]["path"] = str(input_path)
    cfg["output"]["path"] = str(out)
    cfg["output"]["mode"] = "error"
    for attr in cfg["attributes"]:
        if "hierarchy" in attr:
            attr["hierarchy"] = str(ROOT / attr["hierarchy"])
    return merge_sections(cfg, overrides)


def run_adult(
    tmp: Path, rows: int, conf: Path = ADULT_CONF, **overrides: Any
) -> tuple[dict[str, Any], Any]:
    """A bundled config (the demo by default) on the first ``rows`` Adult rows, not committed.

    Runs on the local engine with :func:`adult_config`'s ``overrides``, writing the sample
    and the output path under ``tmp``.

    Returns:
        The raw config and the job's result.
    """
    raw = adult_config(tmp, adult_sample(tmp, rows), tmp / "out", conf, **overrides)
    return raw, run_job(LocalEngine(), parse_config(raw), commit=False)


def clustered_blocks(conf: Path, overrides: list[str]) -> list[tuple[Any, Any, int]]:
    """Every block the local pipeline clusters for a config: ``(rows, context, block id)``.

    Runs the job on the local engine without committing, from the project root (the
    config's relative hierarchy paths), recording each call of the cluster stage's
    per-block function.

    Args:
        conf: the job config.
        overrides: ``key=value`` overrides (the input and output paths at least).
    """
    seen: list[tuple[Any, Any, int]] = []
    original = cluster_stage.cluster_block_counted

    def record(frame, ctx, algorithm, seed, block_id):  # noqa: ANN001, ANN202
        seen.append((frame.copy(), ctx, int(block_id)))
        return original(frame, ctx, algorithm, seed, block_id)

    mp = pytest.MonkeyPatch()
    mp.setattr(cluster_stage, "cluster_block_counted", record)
    mp.chdir(ROOT)
    try:
        run_job(LocalEngine(), load_config(conf, overrides), commit=False)
    finally:
        mp.undo()
    return seen


Blocks = list[tuple[Any, Any, int]]
"""Blocks as :func:`clustered_blocks` records them: ``(rows, context, block id)``."""


def adult_blocks(
    tmp: Path,
    conf: Path,
    rows: int,
    max_block_rows: int | None = None,
    fnlwgt_digits: int | None = None,
    least: int = 1,
) -> Blocks:
    """:func:`clustered_blocks` of a config on the first ``rows`` Adult rows.

    The sample and the output path are written under ``tmp``; ``max_block_rows``, when
    given, overrides the config's ``partitioning.max_block_rows``; ``fnlwgt_digits`` as
    for :func:`adult_sample`. Asserts that there are at least ``least`` blocks.
    """
    sample = adult_sample(tmp, rows, fnlwgt_digits=fnlwgt_digits)
    overrides = [f"input.path={sample}", f"output.path={tmp / 'out'}"]
    if max_block_rows is not None:
        overrides.append(f"partitioning.max_block_rows={max_block_rows}")
    seen = clustered_blocks(conf, overrides)
    assert len(seen) >= least
    return seen


@dataclass(frozen=True)
class KernelParity:
    """A compiled kernel of ``algorithm`` against its numpy path, on recorded blocks.

    Each side runs through :func:`tests._helpers.both_paths` (the numpy side with
    ``SPARKANON_NO_JIT=1``) with the random seed ``seed``.
    """

    monkeypatch: pytest.MonkeyPatch
    algorithm: str
    seed: int

    def assert_blocks(
        self,
        blocks: Blocks,
        context: Callable[[Any], Any] = lambda ctx: ctx,
        pack: Callable[[Block], Any] | None = None,
    ) -> list[Any]:
        """Each block's labels are the same from the compiled kernel and from numpy.

        ``context`` may change each block's context first; with ``pack`` (the kernel's
        packing function) the first block is asserted to be packed, so that the kernel,
        not its numpy fallback, is what is compared.

        Returns:
            The numpy labels of each block, in the blocks' order.
        """
        if pack is not None:
            assert pack(Block(blocks[0][0], blocks[0][1])) is not None
        references = []
        for frame, ctx, block_id in blocks:
            c = context(ctx)
            compiled, reference = both_paths(
                self.monkeypatch,
                lambda f=frame, c=c, b=block_id: cluster_block(f, c, self.algorithm, self.seed, b),
            )
            assert np.array_equal(compiled, reference), f"block {block_id}"
            references.append(reference)
        return references

    def assert_placement(self, blocks: Blocks, rows: int | None = None) -> Any:
        """Rows of the second block placed into the first block's classes, by both paths.

        The placement of cross-block reconciliation: the first block clustered, then the
        first ``rows`` rows of the second block (all by default) placed with the compiled
        kernel and with numpy; the two placements are asserted equal.

        Returns:
            The numpy labels of the placed rows.
        """
        (own, ctx, block_id), (extra, _, _) = blocks[0], blocks[1]
        labels = cluster_block(own, ctx, self.algorithm, self.seed, block_id)
        placed = extra if rows is None else extra.iloc[:rows]
        compiled, reference = both_paths(
            self.monkeypatch,
            lambda: place_rows(own, labels, placed, ctx, self.algorithm, self.seed, block_id),
        )
        assert np.array_equal(compiled, reference)
        return reference
