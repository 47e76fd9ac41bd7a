"""The families of methods the runner runs, one registry line each.

* :mod:`~sparkanon.families.blocks.family` - per-block clustering and partitioning (MAA-SLIE,
  GPKC, MAA-SAE, MAA-MINIL, MDAV, (K,L) clustering, Mondrian);
* :mod:`~sparkanon.families.full_domain.family` - full-domain generalization (Samarati,
  Incognito);
* :mod:`~sparkanon.families.transaction.family` - relational-transaction data (PAA, APA);
* :mod:`~sparkanon.families.perturbation.family` - perturbed releases: additive noise and
  randomized response, the noise declared with the data (Aggarwal 2015, section 20.2);
* :mod:`~sparkanon.families.synthesis.family` - synthetic releases by condensation (Aggarwal
  and Yu 2004; Aggarwal 2015, section 20.3.1.4).

:mod:`~sparkanon.families.base` holds the protocol a family implements
(:class:`~sparkanon.families.base.Family`). A family is chosen by the config's
``algorithm.name``.
"""

from __future__ import annotations

from sparkanon.config import JobConfig
from sparkanon.errors import InternalError
from sparkanon.families.base import Anonymized, Family, Run, Verdict
from sparkanon.families.blocks.family import BlockFamily
from sparkanon.families.full_domain.family import FullDomainFamily
from sparkanon.families.perturbation.family import PerturbationFamily
from sparkanon.families.synthesis.family import SynthesisFamily
from sparkanon.families.transaction.family import TransactionFamily

FAMILIES: tuple[Family, ...] = (
    BlockFamily(),
    FullDomainFamily(),
    TransactionFamily(),
    PerturbationFamily(),
    SynthesisFamily(),
)
"""Every family, by the algorithms it runs (no algorithm belongs to two)."""


def family_of(config: JobConfig) -> Family:
    """The family that runs ``config.algorithm.name``.

    Raises:
        InternalError: no family or several run it (the config's algorithm union and
            this registry disagree: a bug).
    """
    name = config.algorithm.name
    found = [f for f in FAMILIES if name in f.algorithms]
    if len(found) != 1:
        raise InternalError(f"algorithm {name!r} is run by {len(found)} families")
    return found[0]


__all__ = ["FAMILIES", "Anonymized", "Family", "Run", "Verdict", "family_of"]
