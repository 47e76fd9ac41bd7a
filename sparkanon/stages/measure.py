"""Stage ``measure``: the metrics, by aggregations over the per-class summaries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from sparkanon.engine.base import Engine, Table
from sparkanon.metrics.ncp import global_certainty_penalty
from sparkanon.stages._common import one_row

NCP_TERM_COLUMNS = [("size", "long"), ("ncp", "double"), ("penalty", "double")]
"""Per-class terms of the NCP and GCP metrics."""


def make_ncp_term_fn() -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per-class NCP and ``|G| NCP(G)`` (the GCP numerator's term; Ghinita et al. 2007)."""

    def term(batch: pd.DataFrame) -> pd.DataFrame:
        size = batch["size"].to_numpy(dtype=np.int64)
        ncp = batch["ncp"].to_numpy(dtype=float)
        return pd.DataFrame({"size": size, "ncp": ncp, "penalty": size * ncp})

    return term


def make_avg_il_fn(n_qi: int) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per-class AVG-IL term ``IL(G) / (|G| |QI|)`` (seed 003 eq. 17)."""

    def term(batch: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "size": batch["size"].to_numpy(dtype=np.int64),
                "hec": batch["hec"].to_numpy(dtype=float),
                "ent": batch["ent"].to_numpy(dtype=float),
                "loss": batch["loss"].to_numpy(dtype=float),
                "avg_il": batch["loss"].to_numpy(dtype=float)
                / (batch["size"].to_numpy(dtype=float) * n_qi),
            }
        )

    return term


def class_metrics(
    engine: Engine, summaries: Table, n_qi: int, weight_sum: float = 0.0
) -> dict[str, Any]:
    """Aggregate the per-class summaries: counts, sizes, loss, EPP, AVG-Ent, AVG-IL, NCP, GCP.

    ``ncp`` is the mean over classes of the class NCP (Xu et al. 2006; in
    ``[0, weight_sum]``), ``gcp`` the global certainty penalty in percent
    (Ghinita et al. 2007, :func:`sparkanon.metrics.ncp.global_certainty_penalty`)
    over the rows of the classes.
    """
    ncp_terms = engine.map_batches(summaries, make_ncp_term_fn(), NCP_TERM_COLUMNS)
    ncp_stats = one_row(
        engine,
        ncp_terms,
        {"ncp": ("mean", "ncp"), "penalty": ("sum", "penalty"), "rows": ("sum", "size")},
    )
    certainty = {
        "ncp": ncp_stats["ncp"],
        "gcp": global_certainty_penalty(
            float(ncp_stats["penalty"] or 0.0), int(ncp_stats["rows"] or 0), weight_sum
        ),
    }
    terms = engine.map_batches(
        summaries,
        make_avg_il_fn(n_qi),
        [
            ("size", "long"),
            ("hec", "double"),
            ("ent", "double"),
            ("loss", "double"),
            ("avg_il", "double"),
        ],
    )
    return certainty | one_row(
        engine,
        terms,
        {
            "classes": ("count", "size"),
            "rows": ("sum", "size"),
            "loss": ("sum", "loss"),
            "epp": ("mean", "hec"),
            "avg_ent": ("mean", "ent"),
            "avg_il": ("mean", "avg_il"),
            "min": ("min", "size"),
            "median": ("median", "size"),
            "max": ("max", "size"),
        },
    )
