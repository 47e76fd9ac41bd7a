"""What a family of methods hands the runner, and what the runner hands it back.

A *family* is one way of turning the profiled input into a release: per-block clustering
and partitioning, full-domain generalization over a lattice, relational-transaction
anatomy, and next perturbation and synthesis. The runner (:mod:`sparkanon.pipeline`)
owns everything the families share: read, profile, the output target, the verify and
metrics stages' timing, the row accounting (rows in = rows out + rows suppressed, by
cause), the release-size check, the report's common keys, the Spark job labels and the
commit. A family supplies four steps through :class:`Family`:

* :meth:`Family.prepare` - the config with the family's defaults of keys left unset;
* :meth:`Family.anonymize` - its own stages, ending with the publication written to the
  staging location (:class:`Anonymized`);
* :meth:`Family.verify` - the publication checked against its guarantee
  (:class:`Verdict`);
* :meth:`Family.measure` - its metrics, in the order ``metrics.json`` shows them.

A new family is one module with a class implementing the protocol, and one line in
:data:`sparkanon.families.FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from sparkanon.attributes.schema import Schema
from sparkanon.config import JobConfig
from sparkanon.engine.base import Engine, Table
from sparkanon.models import ModelSet, SensitiveDomain, describe_models
from sparkanon.publications import Publication
from sparkanon.randomness import RunKey
from sparkanon.stages._common import StageTimer
from sparkanon.stages.commit import OutputTarget
from sparkanon.stages.profile import Profile, sensitive_domain
from sparkanon.stages.read import RawInput
from sparkanon.stages.verify import verify


@dataclass(frozen=True)
class Run:
    """One job's shared state, as the runner hands it to a family.

    Attributes:
        engine: the engine.
        config: the validated config (with the family's defaults).
        timer: the stage timer (times, logs and labels the Spark jobs of each stage).
        target: the output target, or ``None`` when the run does not commit.
        raw: the input as read.
        profile: the input's profile (rows in, suppressed by cause, value statistics).
        schema: the encoded schema.
        key: the run key every protective random draw is made with
            (:mod:`sparkanon.randomness`).
    """

    engine: Engine
    config: JobConfig
    timer: StageTimer
    target: OutputTarget | None
    raw: RawInput
    profile: Profile
    schema: Schema
    key: RunKey

    def staging(self) -> str | None:
        """Where the publication is written before verification (``None``: not written)."""
        return self.target.staging() if self.target is not None else None

    def bound_models(self) -> tuple[SensitiveDomain, ModelSet]:
        """The sensitive attribute over the usable rows, and the models bound to it."""
        domain = sensitive_domain(self.schema, self.profile)
        return domain, self.config.models.bind(domain)


@dataclass
class Anonymized:
    """What a family's anonymization produced.

    Attributes:
        publication: every published table, written to the staging location.
        suppressed: rows the family suppressed, by cause (``metrics.json`` key
            ``suppressed_<cause>``; the profile's causes are counted by the runner).
        state: the family's own values its verify and measure steps read.
        cached: tables to release when the run ends, whatever happens.
    """

    publication: Publication
    suppressed: dict[str, int]
    state: Any = None
    cached: list[Table] = field(default_factory=list)


@dataclass(frozen=True)
class Verdict:
    """A publication checked against its guarantee.

    Attributes:
        violations: the published groups that fail (0: the release may be committed).
        rows: the rows the publication holds.
        groups: the groups verification checked (equivalence classes, RT groups...).
        failure: what failed, for the error message (used when ``violations > 0``).
        details: the family's own verification figures (worst values, counts).
    """

    violations: int
    rows: int
    groups: int
    failure: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class Family(Protocol):
    """A family of methods plugged into the runner (see the module docstring).

    A family subclasses it to inherit the defaults of :meth:`prepare` and
    :meth:`empty_hint`.

    Attributes:
        name: the family's name (``metrics.json`` key ``family``, logs).
        algorithms: the ``algorithm.name`` values the family runs.
    """

    name: str
    algorithms: frozenset[str]

    def prepare(self, config: JobConfig) -> JobConfig:
        """The config with the family's defaults of keys the user left unset (none: as is)."""
        return config

    def anonymize(self, run: Run) -> Anonymized:
        """Encode, anonymize and stage the publication (its own stages, timed)."""
        ...

    def verify(self, run: Run, done: Anonymized) -> Verdict:
        """Check the staged publication against the family's guarantee."""
        ...

    def measure(self, run: Run, done: Anonymized, verdict: Verdict) -> dict[str, Any]:
        """The family's metrics, in ``metrics.json`` order (``warnings`` key optional)."""
        ...

    def empty_hint(self, metrics: dict[str, Any], config: JobConfig) -> str:
        """What the family knows of why a release is empty or small ("" if nothing)."""
        return ""

    glossary: Mapping[str, str] = MappingProxyType({})
    """What the family means by a ``metrics.json`` key where it differs from
    :data:`sparkanon.report.glossary.METRICS` (the lines of ``--format table``)."""


def verify_classes(
    run: Run, publication: Publication, models: ModelSet, domain: SensitiveDomain
) -> Verdict:
    """A one-table publication's equivalence classes checked against every model.

    Grouped by the published quasi-identifiers (:func:`sparkanon.stages.verify.verify`);
    ``details`` holds ``dm`` (the sum of squared group sizes) and ``achieved`` (each
    model's worst value over the groups).
    """
    worst_keys = list(models.worst(domain.global_summary()))
    found = verify(run.engine, publication, run.schema, models, worst_keys, domain)
    return Verdict(
        violations=int(found["violations"]),
        rows=int(found["rows"]),
        groups=int(found["groups"]),
        failure=f"published equivalence classes violate {describe_models(models)}",
        details={"dm": found["dm"], "achieved": {k: found[k] for k in worst_keys}},
    )
