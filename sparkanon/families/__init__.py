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
``algorithm.name``. A family outside the package joins with :func:`register` (its
algorithms join :data:`sparkanon.algorithms.ALGORITHMS`, so configs can name them).

A config is loaded in two steps: :func:`sparkanon.config.read_config` validates each key
and section, and :func:`check_config` runs the rules across sections, which depend on the
family (:meth:`~sparkanon.families.base.Family.config_problems`). :func:`load_config` and
:func:`parse_config` here do both; every command loads its config through them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sparkanon import algorithms, config
from sparkanon.algorithms import Registered
from sparkanon.config import ItemsetConfig, JobConfig
from sparkanon.errors import ConfigError, InternalError
from sparkanon.families.base import Anonymized, Family, Run, Verdict
from sparkanon.families.blocks.family import BlockFamily
from sparkanon.families.full_domain.family import FullDomainFamily
from sparkanon.families.perturbation.family import PerturbationFamily
from sparkanon.families.synthesis.family import SynthesisFamily
from sparkanon.families.transaction.family import TransactionFamily

FAMILIES: list[Family] = [
    BlockFamily(),
    FullDomainFamily(),
    TransactionFamily(),
    PerturbationFamily(),
    SynthesisFamily(),
]
"""Every family, by the algorithms it runs (no algorithm belongs to two)."""


def family_of(job: JobConfig) -> Family:
    """The family that runs ``job.algorithm.name``.

    Raises:
        InternalError: no family or several run it (the algorithm registry and this
            registry disagree: a bug).
    """
    name = job.algorithm.name
    found = [f for f in FAMILIES if name in f.algorithms]
    if len(found) != 1:
        raise InternalError(f"algorithm {name!r} is run by {len(found)} families")
    return found[0]


def named(name: str | None) -> Family | None:
    """The registered family called ``name`` (``metrics.json`` key ``family``), if any."""
    return next((f for f in FAMILIES if f.name == name), None)


def metric_notes(name: str | None) -> Mapping[str, str]:
    """The notes on ``metrics.json`` keys of the family called ``name`` (none if unknown)."""
    found = named(name)
    return found.metric_notes if found is not None else {}


def register(family: Family, entries: Mapping[str, Registered]) -> None:
    """Add a family to :data:`FAMILIES` and its algorithms to the algorithm registry.

    Args:
        family: the family.
        entries: its algorithms by config name (``algorithm.name``), each registered
            with :func:`sparkanon.algorithms.register` (``Registered.family`` is
            ``family.name``).

    Raises:
        InternalError: an entry names another family, or a name is taken.
    """
    strays = sorted(name for name, entry in entries.items() if entry.family != family.name)
    if strays:
        raise InternalError(f"algorithms {strays} are not registered to family {family.name!r}")
    if any(f.name == family.name for f in FAMILIES):
        raise InternalError(f"family {family.name!r} is registered already")
    taken = sorted(set(entries) & set(algorithms.ALGORITHMS))
    if taken:
        raise InternalError(f"algorithms {taken} are registered already")
    for name, entry in entries.items():
        algorithms.register(name, entry)
    FAMILIES.append(family)


def unregister(family: Family) -> None:
    """Remove a family :func:`register` added, and its algorithms."""
    for name in family.algorithms:
        algorithms.unregister(name)
    FAMILIES[:] = [f for f in FAMILIES if f is not family]


def config_problems(job: JobConfig) -> list[str]:
    """Every problem across the sections of a job, each line naming its keys.

    The rules of the algorithm's family; a release a privacy model protects needs one;
    a set-valued sensitive attribute under an algorithm of a family that does not
    anonymize one is checked by the rules of the family that does (they say what fits).

    Returns:
        The problems, empty when there are none.
    """
    family = family_of(job)
    if not family.protected_by_model:
        return family.config_problems(job)
    if not job.model:
        free = sorted(a for f in FAMILIES if not f.protected_by_model for a in f.algorithms)
        which = (
            f"algorithm {free[0]} takes" if len(free) == 1 else f"algorithms {', '.join(free)} take"
        )
        return [
            "model: required key is missing; a release of equivalence classes is protected by a "
            f"privacy model, e.g. model: {{name: k, k: 5}} (only {which} none)"
        ]
    if isinstance(job.sensitive, ItemsetConfig) and not family.set_valued:
        family = next((f for f in FAMILIES if f.set_valued), family)
    return family.config_problems(job)


def check_config(job: JobConfig, source: str = "<config>") -> JobConfig:
    """``job`` if its family's rules find no problem.

    Args:
        job: a config validated key by key (:func:`sparkanon.config.validate_config`).
        source: where it came from, for the message.

    Raises:
        ConfigError: one line per problem (:func:`config_problems`), each naming its keys.
    """
    problems = config_problems(job)
    if problems:
        raise ConfigError(f"invalid config {source}:\n  " + "\n  ".join(problems))
    return job


def parse_config(raw: Mapping[str, Any], source: str = "<config>") -> JobConfig:
    """A raw mapping validated into a :class:`JobConfig` and checked by its family's rules.

    Raises:
        ConfigError: with one line per problem, each naming its key.
    """
    return check_config(config.validate_config(raw, source), source)


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> JobConfig:
    """A YAML job config read, overridden, validated and checked by its family's rules.

    Raises:
        ConfigError: the file is missing, is not YAML, or fails validation.
    """
    return check_config(config.read_config(path, overrides), str(Path(path)))


__all__ = [
    "FAMILIES",
    "Anonymized",
    "Family",
    "Run",
    "Verdict",
    "check_config",
    "config_problems",
    "family_of",
    "load_config",
    "metric_notes",
    "named",
    "parse_config",
    "register",
    "unregister",
]
