"""Per-block anonymization algorithms: pure numpy/pandas, no Spark.

Each algorithm clusters the rows of one block into classes and can place rows
from elsewhere into its classes (cross-block reconciliation). The engine calls
:func:`cluster_block` and :func:`place_rows` inside ``applyInPandas`` (or a
pandas ``groupby`` in the local engine).
"""

from __future__ import annotations

from typing import Annotated, Union

import numpy as np
import pandas as pd
from pydantic import Field

from sparkanon.algorithms._base import BlockAlgorithm, native_target
from sparkanon.algorithms._block import Block, BlockContext
from sparkanon.algorithms.gpkc import Gpkc
from sparkanon.algorithms.gpkc_paper import GpkcPaper
from sparkanon.algorithms.kl_cluster import KLCluster
from sparkanon.algorithms.lattice._params import FullDomainParams, IncognitoParams, SamaratiParams
from sparkanon.algorithms.maa_sae import MaaMinil, MaaSae
from sparkanon.algorithms.maa_slie import MaaSlie
from sparkanon.algorithms.mdav import Mdav
from sparkanon.algorithms.mondrian import Mondrian
from sparkanon.algorithms.repair import reject_breaking_rows, repair_classes
from sparkanon.algorithms.transaction._params import ApaParams, PaaParams, RTParams
from sparkanon.attributes.schema import RID

ALGORITHMS: dict[str, type[BlockAlgorithm]] = {"maa_slie": MaaSlie, "gpkc": Gpkc, "mdav": Mdav}
ALGORITHMS |= {"gpkc_paper": GpkcPaper}
"""Every selectable algorithm by its config name (``algorithm.name``)."""
ALGORITHMS |= {"maa_sae": MaaSae, "maa_minil": MaaMinil}
ALGORITHMS |= {"kl_cluster": KLCluster}
ALGORITHMS |= {"mondrian": Mondrian}

RT_ALGORITHMS: dict[str, type[RTParams]] = {"apa": ApaParams, "paa": PaaParams}
"""The relational-transaction algorithms (seed 002) by config name, with their parameters.

They run per block on a set-valued sensitive attribute (:mod:`sparkanon.algorithms.transaction`),
not through :class:`BlockAlgorithm`."""

FULL_DOMAIN_ALGORITHMS: dict[str, type[FullDomainParams]] = {
    "samarati": SamaratiParams,
    "incognito": IncognitoParams,
}
"""Full-domain generalization (seed 004 section 20.3.1) by config name, with their parameters.

They search the lattice of generalization levels over the whole table
(:mod:`sparkanon.algorithms.lattice`, :mod:`sparkanon.families.full_domain`), not per block."""

AlgorithmConfig = Annotated[
    Union[  # noqa: UP007
        tuple(cls.Params for cls in ALGORITHMS.values())
        + tuple(RT_ALGORITHMS.values())
        + tuple(FULL_DOMAIN_ALGORITHMS.values())
    ],
    Field(discriminator="name"),
]
"""The ``algorithm`` section of a config: one algorithm's parameters, chosen by ``name``."""

__all__ = [
    "ALGORITHMS",
    "FULL_DOMAIN_ALGORITHMS",
    "RT_ALGORITHMS",
    "Block",
    "BlockAlgorithm",
    "BlockContext",
    "cluster_block",
    "cluster_block_counted",
    "get_algorithm",
    "native_target",
    "place_rows",
]


def get_algorithm(name: str) -> BlockAlgorithm:
    """The algorithm registered under ``name``."""
    return ALGORITHMS[name]()


def block_rng(seed: int, block_id: int, salt: int = 0) -> np.random.Generator:
    """A generator that depends only on the job seed and the block (deterministic)."""
    return np.random.default_rng(np.random.SeedSequence([seed, block_id, salt]))


def cluster_block_counted(
    frame: pd.DataFrame, ctx: BlockContext, algorithm: str, seed: int, block_id: int
) -> tuple[np.ndarray, int]:
    """Cluster one block, then repair the classes that fail a model of the job.

    Args:
        frame: the block's encoded rows, in any order.
        ctx: the algorithm context.
        algorithm: registered algorithm name.
        seed: the job seed.
        block_id: the block's id (mixed into the seed).

    Returns:
        A local class label per row of ``frame`` (in ``frame``'s order), ``-1``
        for rows the block could not place, and the number of repair merges
        (:mod:`sparkanon.algorithms.repair`).
    """
    order = np.argsort(frame[RID].to_numpy(), kind="stable")
    block = Block(frame.iloc[order], ctx)
    labels = get_algorithm(algorithm).cluster(block, block_rng(seed, block_id))
    merges = 0
    if ctx.models is not None:
        labels, merges = repair_classes(block, labels, ctx.models)
    out = np.empty_like(labels)
    out[order] = labels
    return out, merges


def cluster_block(
    frame: pd.DataFrame, ctx: BlockContext, algorithm: str, seed: int, block_id: int
) -> np.ndarray:
    """The labels of :func:`cluster_block_counted`."""
    return cluster_block_counted(frame, ctx, algorithm, seed, block_id)[0]


def place_rows(
    clustered: pd.DataFrame,
    labels: np.ndarray,
    extra: pd.DataFrame,
    ctx: BlockContext,
    algorithm: str,
    seed: int,
    block_id: int,
) -> np.ndarray:
    """Place rows from other blocks into the classes of one block.

    Args:
        clustered: the block's encoded rows.
        labels: their local class labels.
        extra: encoded rows to place.
        ctx: the algorithm context.
        algorithm: registered algorithm name (its leftover rule is used).
        seed: the job seed.
        block_id: the receiving block's id.

    Returns:
        A local class label per row of ``extra`` (in ``extra``'s order).
    """
    order = np.argsort(clustered[RID].to_numpy(), kind="stable")
    extra_order = np.argsort(extra[RID].to_numpy(), kind="stable")
    block = Block(clustered.iloc[order], ctx)
    incoming = Block(extra.iloc[extra_order], ctx)
    own = np.asarray(labels)[order]
    placed = get_algorithm(algorithm).place(block, own, incoming, block_rng(seed, block_id, salt=1))
    if ctx.models is not None:
        placed = reject_breaking_rows(block, own, incoming, placed, ctx.models)
    out = np.empty_like(placed)
    out[extra_order] = placed
    return out
