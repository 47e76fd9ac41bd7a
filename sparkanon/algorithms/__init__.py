"""The anonymization algorithms (pure numpy/pandas, no Spark) and their one registry.

:data:`ALGORITHMS` names every selectable algorithm with the family that runs it.

A per-block algorithm clusters the rows of one block into classes and can place rows
from elsewhere into its classes (cross-block reconciliation). The engine calls
:func:`cluster_block` and :func:`place_rows` inside ``applyInPandas`` (or a
pandas ``groupby`` in the local engine). The full-domain searches live in
:mod:`sparkanon.algorithms.lattice`, the relational-transaction ones in
:mod:`sparkanon.algorithms.transaction`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Union

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from sparkanon.algorithms._base import BlockAlgorithm, native_target
from sparkanon.algorithms._block import Block, BlockContext
from sparkanon.algorithms.blocks.gpkc import Gpkc
from sparkanon.algorithms.blocks.gpkc_paper import GpkcPaper
from sparkanon.algorithms.blocks.kl_cluster import KLCluster
from sparkanon.algorithms.blocks.maa_sae import MaaMinil, MaaSae
from sparkanon.algorithms.blocks.maa_slie import MaaSlie
from sparkanon.algorithms.blocks.mdav import Mdav
from sparkanon.algorithms.blocks.mondrian import Mondrian
from sparkanon.algorithms.condensation._params import CondensationParams
from sparkanon.algorithms.lattice._params import IncognitoParams, SamaratiParams
from sparkanon.algorithms.lattice.search import incognito, samarati
from sparkanon.algorithms.perturbation._params import PerturbParams
from sparkanon.algorithms.perturbation.perturb import perturb_frame
from sparkanon.algorithms.repair import reject_breaking_rows, repair_classes
from sparkanon.algorithms.transaction._params import ApaParams, PaaParams
from sparkanon.algorithms.transaction.apa import apa
from sparkanon.algorithms.transaction.paa import paa
from sparkanon.attributes.schema import RID
from sparkanon.errors import InternalError


@dataclass(frozen=True)
class Registered:
    """One selectable algorithm: the family that runs it, its parameters, its implementation.

    Attributes:
        family: the :attr:`~sparkanon.families.base.Family.name` of the family that runs it.
        params: the pydantic model of the config's ``algorithm`` section for it.
        implementation: what the family calls: a :class:`BlockAlgorithm` subclass (per-block
            family), a per-block function ``(sets, tree, k, l) -> RTResult``
            (relational-transaction family) or a lattice search (full-domain family).
    """

    family: str
    params: type[BaseModel]
    implementation: Any


def _block(cls: type[BlockAlgorithm]) -> Registered:
    return Registered("blocks", cls.Params, cls)


ALGORITHMS: dict[str, Registered] = {
    "maa_slie": _block(MaaSlie),
    "gpkc": _block(Gpkc),
    "gpkc_paper": _block(GpkcPaper),
    "mdav": _block(Mdav),
    "maa_sae": _block(MaaSae),
    "maa_minil": _block(MaaMinil),
    "kl_cluster": _block(KLCluster),
    "mondrian": _block(Mondrian),
    "samarati": Registered("full_domain", SamaratiParams, samarati),
    "incognito": Registered("full_domain", IncognitoParams, incognito),
    "apa": Registered("transaction", ApaParams, apa),
    "paa": Registered("transaction", PaaParams, paa),
    "perturb": Registered("perturbation", PerturbParams, perturb_frame),
    "condensation": Registered("synthesis", CondensationParams, Mdav),
}
"""Every selectable algorithm by its config name (``algorithm.name``): the one registry.

Per-block clustering and partitioning (Shi, Zhang and Dong 2024; Yang, Wang and Zhang
2014; Chai and Feng 2015; MDAV; Mondrian) run through :class:`BlockAlgorithm`;
full-domain generalization (Samarati; Incognito: Aggarwal's textbook, section 20.3.1)
searches the lattice of levels over the whole table; the relational-transaction
algorithms (APA, PAA: Gong, Yang and Luo 2016) run per block on set-valued records."""


def algorithms_of(family: str) -> frozenset[str]:
    """The config names of the algorithms ``family`` runs."""
    return frozenset(name for name, entry in ALGORITHMS.items() if entry.family == family)


def algorithm_config() -> Any:
    """The ``algorithm`` section of a config: one registered algorithm's parameters, by ``name``.

    A pydantic union told apart by ``name`` over the algorithms registered now; the config
    rebuilds its ``algorithm`` key with it when the registry changes
    (:data:`REGISTRY_CHANGED`).
    """
    return Annotated[
        Union[tuple(entry.params for entry in ALGORITHMS.values())],  # noqa: UP007
        Field(discriminator="name"),
    ]


REGISTRY_CHANGED: list[Callable[[], None]] = []
"""What to call after :func:`register` or :func:`unregister` changed :data:`ALGORITHMS`."""


def register(name: str, entry: Registered) -> None:
    """Add an algorithm to :data:`ALGORITHMS` under its config name.

    Raises:
        InternalError: the name is taken, or ``entry.params`` does not select it by
            ``name``.
    """
    if name in ALGORITHMS:
        raise InternalError(f"algorithm {name!r} is registered already")
    if entry.params.model_fields["name"].default != name:
        raise InternalError(f"the parameters of algorithm {name!r} are not selected by its name")
    ALGORITHMS[name] = entry
    for changed in REGISTRY_CHANGED:
        changed()


def unregister(name: str) -> None:
    """Remove an algorithm :func:`register` added (nothing if it is not registered)."""
    if ALGORITHMS.pop(name, None) is not None:
        for changed in REGISTRY_CHANGED:
            changed()


__all__ = [
    "ALGORITHMS",
    "Block",
    "BlockAlgorithm",
    "BlockContext",
    "REGISTRY_CHANGED",
    "Registered",
    "algorithm_config",
    "algorithms_of",
    "cluster_block",
    "cluster_block_counted",
    "get_algorithm",
    "native_target",
    "place_rows",
    "register",
    "unregister",
]


def get_algorithm(name: str) -> BlockAlgorithm:
    """A per-block algorithm registered under ``name``."""
    return ALGORITHMS[name].implementation()


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
