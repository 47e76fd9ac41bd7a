"""The perturbation family (Aggarwal 2015, section 20.2): every row published, with noise.

The runner reads and profiles; then encode (the usable rows) -> perturb (one pass: each
configured attribute gets its noise, drawn from the run's secret key
(:class:`~sparkanon.randomness.RunKey`) on the attribute's stream with the row's internal
id as counter; the other columns are published as they are) -> publish to the staging
location, without any row id. The job's ``seed`` plays no part in the noise: without the
key, the code, the config and the rows' positions recompute none of it.

The release declares its noise (``metrics.json`` ``noise``, ``noise.json``
beside the data, the table properties of a catalog output), as the randomization method
requires: whoever mines it reconstructs the distributions from that declaration.

Verification runs the perturbation's batch function again over the encoded rows (its
values are a function of each row and the run key alone), each perturbed value beside the
original code of the same row, before anything is committed and checks, by aggregations
only, that the release holds what it declares
(:mod:`sparkanon.families.perturbation.perturb`): every usable row published
once, no column beyond the declared ones (no row id), per perturbed column the
residuals (published minus original) follow the declared noise (Kolmogorov-Smirnov
statistic, mean, variance) or, for randomized response, the retention rate lies in its
binomial interval, and the staged table's marginals are those of the rows checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sparkanon.algorithms.perturbation._params import PerturbColumn, PerturbParams
from sparkanon.algorithms.perturbation.noise import NoiseSpec, coarse_range, scale_for_privacy
from sparkanon.algorithms.perturbation.perturb import ColumnNoise
from sparkanon.algorithms.perturbation.randomized_response import (
    ldp_epsilon,
    pram_matrix,
    retention_for_epsilon,
)
from sparkanon.attributes.kinds import ContinuousKind, DiscreteKind
from sparkanon.attributes.schema import Schema
from sparkanon.config import JobConfig
from sparkanon.errors import ConfigError
from sparkanon.families.base import Anonymized, Family, Run, Verdict
from sparkanon.families.perturbation.perturb import (
    ColumnCheck,
    check_residuals,
    perturb_rows,
    published_columns,
)
from sparkanon.families.perturbation.rules import perturbation_problems
from sparkanon.randomness.streams import PERTURBATION
from sparkanon.stages.encode import encode_input
from sparkanon.stages.publish import order_lane


@dataclass(frozen=True)
class _State:
    """What verify and measure read: the column plans, the encoded rows, the batch function."""

    plans: tuple[ColumnCheck, ...]
    encoded: Any
    perturb: Any


def column_plan(
    i: int, column: PerturbColumn, schema: Schema, params: PerturbParams
) -> ColumnCheck:
    """The noise of ``algorithm.columns.<i>`` over the profiled data.

    Raises:
        ConfigError: a share of the range of a column holding one value, or randomized
            response over a column of one value (exit 2, naming the key).
    """
    key = f"algorithm.columns.{i}"
    q = schema.qi_names.index(column.name)
    kind, code_column = schema.kinds[q], schema.code_columns[q]
    if column.numeric:
        assert isinstance(kind, ContinuousKind)
        low, high = noise_range(key, column, float(kind.low), float(kind.high))
        span = high - low
        additive = additive_noise(key, column, span, params)
        noise = ColumnNoise(code_column, PERTURBATION + q, additive=additive)
        return ColumnCheck(column.name, code_column, kind, noise, span=span)
    assert isinstance(kind, DiscreteKind)
    if kind.size < 2:
        raise ConfigError(
            f"{key}.name: {column.name!r} holds one value over the input; randomized response "
            "cannot hide a value every row has; remove it from algorithm.columns"
        )
    retention = float(
        column.retention
        if column.retention is not None
        else retention_for_epsilon(kind.size, float(column.epsilon or 0.0))
    )
    noise = ColumnNoise(code_column, PERTURBATION + q, matrix=pram_matrix(kind.size, retention))
    return ColumnCheck(column.name, code_column, kind, noise, retention=retention)


def noise_range(key: str, column: PerturbColumn, low: float, high: float) -> tuple[float, float]:
    """The range a numeric column's noise is a share of, as the release states it.

    The declared ``bounds``, or the input's ``[low, high]`` rounded outward to a
    power-of-ten grid (:func:`coarse_range`): the published scale, privacy width and share
    then give away no exact input minimum or maximum. A column of one value keeps its
    range of 0 (a share of it is refused by :func:`additive_noise`).

    Raises:
        ConfigError: an input value outside the declared bounds (they would understate
            the range, and the noise with it).
    """
    if column.bounds is None:
        return coarse_range(low, high)
    lo, hi = (float(b) for b in column.bounds)
    if low < lo or high > hi:
        raise ConfigError(
            f"{key}.bounds: {column.name!r} holds values outside the declared range "
            f"[{lo:g}, {hi:g}]; declare bounds that hold every value, or leave them out"
        )
    return lo, hi


def additive_noise(
    key: str, column: PerturbColumn, span: float, params: PerturbParams
) -> NoiseSpec:
    """A numeric column's noise: its scale, a share of its range, or its privacy level.

    ``span``: the width of :func:`noise_range`, not of the exact input range.

    Raises:
        ConfigError: a share of the range of a column holding one value.
    """
    if column.scale is not None:
        return NoiseSpec(column.noise, float(column.scale))
    if span <= 0:
        given = "privacy" if column.privacy is not None else "scale_share"
        raise ConfigError(
            f"{key}.{given}: {column.name!r} holds one value over the input (its range "
            f"is 0), so a share of its range is no noise; give {key}.scale instead"
        )
    if column.scale_share is not None:
        return NoiseSpec(column.noise, column.scale_share * span)
    assert column.privacy is not None
    return NoiseSpec(
        column.noise, scale_for_privacy(column.noise, column.privacy, span, params.confidence)
    )


def declared_noise(plans: tuple[ColumnCheck, ...], params: PerturbParams) -> dict[str, Any]:
    """The noise the release declares, per column (``metrics.json`` and ``noise.json``).

    Numeric: the distribution, its scale (``a`` of uniform on ``[-a, a]``, or ``sigma``),
    its variance, and Agrawal and Srikant's privacy width at ``confidence`` with its share
    of the column's range (the declared or rounded range of :func:`noise_range`, which the
    noise was drawn for). Randomized response: the values in code order, the retention,
    the transition matrix (row: the true value, column: the published one) and the local
    differential privacy it gives.
    """
    out: dict[str, Any] = {}
    for plan in plans:
        additive = plan.noise.additive
        if additive is not None:
            width = additive.privacy_width(params.confidence)
            out[plan.name] = {
                "distribution": additive.distribution,
                "scale": additive.scale,
                "variance": additive.variance,
                "privacy_width": width,
                "privacy_share": width / plan.span if plan.span > 0 else None,
                "confidence": params.confidence,
            }
        else:
            assert plan.noise.matrix is not None and isinstance(plan.kind, DiscreteKind)
            out[plan.name] = {
                "distribution": "randomized_response",
                "values": list(plan.kind.labels),
                "retention": plan.retention,
                "transition_matrix": plan.noise.matrix.tolist(),
                "ldp_epsilon": ldp_epsilon(plan.noise.matrix),
            }
    return out


class PerturbationFamily(Family):
    """Additive noise and randomized response over the configured attributes."""

    name = "perturbation"
    protected_by_model = False
    row_level = True

    def config_problems(self, config: JobConfig) -> list[str]:  # noqa: D102
        return perturbation_problems(config)

    def anonymize(self, run: Run) -> Anonymized:  # noqa: D102
        engine, config, timer, schema, raw = run.engine, run.config, run.timer, run.schema, run.raw
        params = config.algorithm
        assert isinstance(params, PerturbParams)
        plans = tuple(column_plan(i, c, schema, params) for i, c in enumerate(params.columns))
        encoded, _ = encode_input(engine, config, raw, schema, timer)
        publication, perturb = perturb_rows(
            engine,
            encoded,
            schema,
            raw.passthrough_types,
            plans,
            run.key,
            order_lane(config),
            timer,
            run.staging(),
            config.output.format,
            raw.kept,
        )
        return Anonymized(publication, {}, _State(plans, encoded, perturb), [encoded])

    def verify(self, run: Run, done: Anonymized) -> Verdict:  # noqa: D102
        s: _State = done.state
        params = run.config.algorithm
        assert isinstance(params, PerturbParams)
        raw = run.raw
        expected = published_columns(run.schema, [*raw.passthrough_types, *raw.kept.columns])
        found = check_residuals(
            run.engine,
            done.publication,
            s.perturb,
            s.encoded,
            s.plans,
            expected,
            params.significance,
        )
        failed = found["failed"]
        return Verdict(
            violations=len(failed),
            rows=int(found["rows"]),
            groups=len(s.plans),
            failure="the release does not hold its declared noise: " + "; ".join(failed),
            details=found,
        )

    def measure(self, run: Run, done: Anonymized, verdict: Verdict) -> dict[str, Any]:  # noqa: D102
        s: _State = done.state
        params = run.config.algorithm
        assert isinstance(params, PerturbParams)
        return {
            "noise": declared_noise(s.plans, params),
            "verification": verdict.details["columns"],
            "significance": params.significance,
        }


__all__ = ["PerturbationFamily", "column_plan", "declared_noise", "noise_range"]
