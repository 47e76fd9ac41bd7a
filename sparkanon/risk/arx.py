"""Re-identification risk exactly as the ARX anonymization tool defines it.

Pure functions over a class-size frequency table ``{class size f: number of classes}``
(the equivalence classes of a table on its quasi-identifiers). They follow ARX's
``org.deidentifier.arx.risk`` package (github ``arx-deidentifier/arx``, read at commit
``aacd487fb77b3af7970d5d6fa1b2f6cca1182b64``, 2025-09-12) and its Newton-Raphson solver
(github ``prasser/newtonraphson`` 0.0.1, the jar ARX ships), re-implemented here:

* :func:`sample_risks` - ``RiskModelSampleSummary`` (El Emam's prosecutor, journalist and
  marketer attackers: highest risk, average risk, share of records above a threshold)
  and ``RiskModelSampleUniqueness`` (share of records in classes of size 1).
* :func:`population_uniqueness` - ``RiskModelPopulationUniqueness``: the share of the
  population that is unique on the quasi-identifiers, estimated from the sample by
  Pitman's model (Pitman 1996, fitted as in Hoshino 2001), Zayatz's model (Zayatz 1991),
  the SNB model (Chen and Keller-McNulty 1998) and Dankar et al. (2012)'s decision rule.
* :func:`summary` - both, as one JSON-able dict (``RISK["arx"]`` of an evaluation).

ARX's numerical choices are kept where they change figures: its own digamma/trigamma
approximations (``risk/Gamma.java``, including that its trigamma adds no asymptotic term
to an argument that lands in [8, 12)), the deterministic solver settings of
``ARXSolverConfiguration`` (accuracy 1e-6, 1000 iterations per try, 16 prepared start
values), the population size ``round(n / sampling fraction)``, and its decision rule.
One difference: ARX's solver also stops on wall-clock limits (100 ms a try, 1 s in
all); a Python port cannot reproduce timings, so this one stops on the iteration limits
only. Where ARX reports an estimate as 0 because its solver found none (its
``isAvailableEstimate...`` is then false), this module reports ``None`` and a reason.

References:
    El Emam, K. (2013). Guide to the De-Identification of Personal Health Information.
    Pitman, J. (1996). Some developments of the Blackwell-MacQueen urn scheme.
    Hoshino, N. (2001). Applying Pitman's sampling formula to microdata disclosure risk
    assessment. Journal of Official Statistics 17(4).
    Zayatz, L. (1991). Estimation of the percent of unique population elements on a
    microdata file using the sample. US Census Bureau SRD Report RR-91/08.
    Chen, G. and Keller-McNulty, S. (1998). Estimation of identification disclosure risk
    in microdata. Journal of Official Statistics 14(1).
    Dankar, F. K., El Emam, K., Neisa, A. and Roffey, T. (2012). Estimating the
    re-identification risk of clinical data sets. BMC Medical Informatics and Decision
    Making 12:66.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from sparkanon.errors import UserError

ARX_COMMIT = "aacd487fb77b3af7970d5d6fa1b2f6cca1182b64"
DEFAULT_THRESHOLD = 0.2

# ARXSolverConfiguration's deterministic defaults.
SOLVER_ACCURACY = 1e-6
SOLVER_ITERATIONS_PER_TRY = 1000

_INT_MAX = 2**31 - 1
_EULER = 0.57721566490153286060651209008240243104215933593992
_TRIGAMMA_1 = math.pi * math.pi / 6.0
_TETRAGAMMA_1 = -2.0 * 1.202056903159594285399738161511449990764986292

Vec = tuple[float, float]
Mat = tuple[float, float, float, float]  # rows (x1, x2), (y1, y2)


# --------------------------------------------------------------------------- validation


def _checked_table(class_sizes: Mapping[int, int]) -> dict[int, int]:
    """Return the table with int keys, sorted by size, classes of count 0 dropped.

    Raises:
        UserError: a size below 1 or a negative or non-integer count (naming the entry).
    """
    table: dict[int, int] = {}
    for size, count in class_sizes.items():
        try:
            f, c = int(size), int(count)
        except (TypeError, ValueError):
            raise UserError(
                f"class_sizes: entry {size!r}: {count!r} is not an integer pair"
            ) from None
        if f != size and str(f) != str(size):
            raise UserError(f"class_sizes: class size {size!r} is not an integer")
        if f < 1 or c < 0 or c != count:
            raise UserError(
                f"class_sizes: entry {size!r}: {count!r} needs a size >= 1 and a count >= 0"
            )
        if c:
            table[f] = table.get(f, 0) + c
    return dict(sorted(table.items()))


def _checked_unit(value: float, name: str, meaning: str) -> float:
    """Return ``value`` as a float in (0, 1].

    Args:
        value: the argument as given.
        name: the argument's name, which the messages name.
        meaning: what the argument is, said when it is outside (0, 1].

    Raises:
        UserError: the value is not a number in (0, 1].
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UserError(f"{name}: {value!r} is not a number in (0, 1]") from None
    if not (0.0 < number <= 1.0):
        raise UserError(f"{name}: {value!r} is outside (0, 1]: {meaning}")
    return number


def _checked_fraction(sampling_fraction: float) -> float:
    """Return the sampling fraction as a float in (0, 1] (see :func:`_checked_unit`)."""
    return _checked_unit(
        sampling_fraction,
        "sampling_fraction",
        "it is the share of the population the table holds (1 = the table is the population)",
    )


def _checked_threshold(threshold: float) -> float:
    """Return the risk threshold as a float in (0, 1] (see :func:`_checked_unit`)."""
    return _checked_unit(
        threshold,
        "threshold",
        "it is the highest acceptable probability of re-identification of one record",
    )


def _checked_population(population: Mapping[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    """Return the (sample size, population size) table, checked and without zero counts.

    Raises:
        UserError: a pair that is not ``1 <= f <= F`` or a negative count (naming it).
    """
    table: dict[tuple[int, int], int] = {}
    for pair, count in population.items():
        try:
            f, big_f = (int(v) for v in pair)
            c = int(count)
        except (TypeError, ValueError):
            raise UserError(
                f"population: entry {pair!r}: {count!r} is not ((f, F), count) in integers"
            ) from None
        if not (1 <= f <= big_f) or c < 0:
            raise UserError(
                f"population: entry {pair!r}: {count!r} needs 1 <= sample class size f "
                "<= population class size F and a count >= 0"
            )
        if c:
            table[(f, big_f)] = table.get((f, big_f), 0) + c
    return table


# ------------------------------------------------------------------ sample-based risks


def _attacker(pairs: dict[tuple[int, int], int], threshold: float) -> dict[str, Any]:
    """The journalist figures of ``RiskModelSampleSummary`` over (f, F) -> count.

    With ``F == f`` for every class (no population table) these are the prosecutor
    figures: ARX computes both with one formula, the population being the sample then.
    """
    n = sum(f * c for (f, _), c in pairs.items())
    classes = sum(pairs.values())
    at_risk = sum(f * c for (f, big_f), c in pairs.items() if 1.0 / big_f > threshold)
    sum_big_f = sum(big_f * c for (_, big_f), c in pairs.items())
    ratio = sum(c * (f / big_f) for (f, big_f), c in pairs.items())
    smallest = min(big_f for (_, big_f) in pairs)
    largest = max(big_f for (_, big_f) in pairs)
    return {
        "highest": 1.0 / smallest,
        "average": max(classes / sum_big_f, ratio / n),
        "lowest": 1.0 / largest,
        "records_at_risk": at_risk / n,
    }


def sample_risks(
    class_sizes: Mapping[int, int],
    threshold: float = DEFAULT_THRESHOLD,
    population: Mapping[tuple[int, int], int] | None = None,
) -> dict[str, Any]:
    """Prosecutor, journalist and marketer risk and sample uniques, as ARX reports them.

    For a class of ``f`` sample records the prosecutor (who knows the target is in the
    table) re-identifies one record with probability ``1/f``; the journalist (who does not)
    with ``1/F``, ``F`` the size of that class in the population (El Emam 2013):

    * highest risk ``1 / min f`` (``1 / min F``); lowest ``1 / max f`` (``1 / max F``);
    * records at risk: the share of records whose risk exceeds the threshold, ARX's strict
      comparison ``1/f > threshold`` (``1/F > threshold``) in double precision, so a
      class of exactly ``1/threshold`` records is not at risk;
    * average risk: prosecutor ``classes / n``; journalist
      ``max(classes / sum F, (1/n) sum f/F)`` (both sums over the sample's classes);
      marketer ``(1/n) sum f/F`` (``classes / n`` without a population table);
    * sample uniques: ``(classes of size 1) / n`` (``RiskModelSampleUniqueness``).

    How ARX obtains ``F``: only through a research subset, i.e. the table analysed is a
    subset of a larger table it knows (``DataHandle.getSuperset``); a sampling fraction
    (``ARXPopulationModel``) never enters ``RiskModelSampleSummary``. Without a
    population table ARX sets the population to the sample (``F = f``), so journalist
    risk equals prosecutor risk and marketer risk equals the prosecutor average. This
    function does the same: with ``population=None`` the sampling fraction is irrelevant
    here (it is used by :func:`population_uniqueness`), and ``population_source`` says
    ``"sample"``.

    Args:
        class_sizes: ``{f: number of classes of size f}`` of the sample.
        threshold: the highest acceptable re-identification probability of one record,
            in (0, 1] (ARX's GUI default 0.2).
        population: optional ``{(f, F): number of sample classes with f sample records
            in a population class of F records}``; its ``f`` histogram must equal
            ``class_sizes``.

    Returns:
        ``{"threshold", "rows", "classes", "population_source": "sample"|"table",
        "prosecutor": {"highest", "average", "lowest", "records_at_risk"},
        "journalist": {same keys}, "marketer": {"average"}, "sample_uniques"}``.
        All figures are 0.0 for an empty table, as in ARX.

    Raises:
        UserError: bad threshold, class sizes or population table (naming it).
    """
    t = _checked_threshold(threshold)
    table = _checked_table(class_sizes)
    rows = sum(f * c for f, c in table.items())
    classes = sum(table.values())
    pairs_sample = {(f, f): c for f, c in table.items()}
    if population is None:
        pairs, source = pairs_sample, "sample"
    else:
        pairs, source = _checked_population(population), "table"
        marginal: dict[int, int] = {}
        for (f, _), c in pairs.items():
            marginal[f] = marginal.get(f, 0) + c
        if dict(sorted(marginal.items())) != table:
            raise UserError(
                "population: its sample class sizes (f of each (f, F) pair) do not match "
                "class_sizes: both must describe the same sample classes"
            )
    zero = {"highest": 0.0, "average": 0.0, "lowest": 0.0, "records_at_risk": 0.0}
    if rows == 0:
        prosecutor, journalist, marketer = dict(zero), dict(zero), 0.0
    else:
        prosecutor = _attacker(pairs_sample, t)
        prosecutor["average"] = classes / rows
        journalist = _attacker(pairs, t)
        marketer = sum(c * (f / big_f) for (f, big_f), c in pairs.items()) / rows
    return {
        "threshold": t,
        "rows": rows,
        "classes": classes,
        "population_source": source,
        "prosecutor": prosecutor,
        "journalist": journalist,
        "marketer": {"average": marketer},
        "sample_uniques": (table.get(1, 0) / rows) if rows else 0.0,
    }


# ------------------------------------------------ ARX's digamma and trigamma (Gamma.java)


def _by_region(
    x: np.ndarray,
    reflect: Callable[[np.ndarray], np.ndarray],
    small_limit: float,
    small: Callable[[np.ndarray], np.ndarray],
    large: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """A polygamma function evaluated region by region, as ARX's ``Gamma`` does.

    NaN for NaN or infinite arguments, minus infinity at 0, ``reflect`` for x < 0,
    ``small`` for 0 < x <= ``small_limit`` and ``large`` above it.
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.full(x.shape, np.nan)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x)
        out[finite & (x == 0.0)] = -np.inf
        neg = finite & (x < 0.0)
        if neg.any():
            out[neg] = reflect(x[neg])
        near_zero = finite & (x > 0.0) & (x <= small_limit)
        out[near_zero] = small(x[near_zero])
        big = finite & (x > small_limit)
        if big.any():
            out[big] = large(x[big].copy())
    return out


def _digamma(x: np.ndarray) -> np.ndarray:
    """Digamma as ARX's ``Gamma.digamma`` computes it (Minka's Lightspeed port).

    Reflection for x < 0, a Taylor term for 0 < x <= 1e-6, otherwise the recurrence up
    to 12 and de Moivre's asymptotic series. NaN for NaN or infinite arguments.
    """

    def large(v: np.ndarray) -> np.ndarray:
        res = np.zeros_like(v)
        low = v < 12.0
        while low.any():
            res[low] -= 1.0 / v[low]
            v[low] += 1.0
            low = v < 12.0
        r = 1.0 / v
        res += np.log(v) - 0.5 * r
        r = r * r
        res -= r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))
        return res

    return _by_region(
        x,
        lambda xn: _digamma(1.0 - xn) + np.pi / np.tan(-np.pi * xn),
        1e-6,
        lambda xs: (-_EULER - 1.0 / xs) + _TRIGAMMA_1 * xs,
        large,
    )


def _trigamma(x: np.ndarray) -> np.ndarray:
    """Trigamma as ARX's ``Gamma.trigamma`` computes it, quirk included.

    The recurrence runs while the argument is below 8, but the asymptotic series is
    added only when it is at least 12: an argument that ends in [8, 12) gets the
    recurrence sum alone (e.g. trigamma(9) = 0). ARX uses this only in the Jacobian of
    Pitman's closed-form likelihood equations, so it steers Newton's steps, not the
    root; it is kept so that the solver takes ARX's path.
    """

    def reflect(xn: np.ndarray) -> np.ndarray:
        r = np.pi / np.sin(-np.pi * xn)
        return -_trigamma(1.0 - xn) + r * r

    def large(v: np.ndarray) -> np.ndarray:
        res = np.zeros_like(v)
        low = v < 8.0
        while low.any():
            res[low] += 1.0 / (v[low] * v[low])
            v[low] += 1.0
            low = v < 8.0
        tail = v >= 12.0
        vt = v[tail]
        r = 1.0 / (vt * vt)
        b2, b4, b6, b8, b10 = 1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66
        res[tail] += 0.5 * r + (1.0 + r * (b2 + r * (b4 + r * (b6 + r * (b8 + r * b10))))) / vt
        return res

    return _by_region(
        x, reflect, 1e-4, lambda xs: 1.0 / (xs * xs) + _TRIGAMMA_1 + _TETRAGAMMA_1 * xs, large
    )


def _dg(x: float) -> float:
    return float(_digamma(np.array([x]))[0])


def _tg(x: float) -> float:
    return float(_trigamma(np.array([x]))[0])


def _log_gamma(x: float) -> float:
    """Log-gamma as commons-math's ``Gamma.logGamma``: NaN for x <= 0 or NaN."""
    if not x > 0.0 or math.isinf(x):
        return math.inf if x == math.inf else math.nan
    return math.lgamma(x)


def _gamma(x: float) -> float:
    """Gamma with IEEE results instead of Python exceptions (inf on overflow)."""
    if math.isnan(x):
        return math.nan
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


# --------------------------------------------------- Newton-Raphson (prasser/newtonraphson)


def _start_values() -> list[Vec]:
    """ARXSolverConfiguration's 16 prepared start values: {0, .33, .66, .99}^2."""
    values: list[float] = []
    d = 0.0
    while d < 1.0:
        values.append(d)
        d += 0.33
    return [(a, b) for a in values for b in values]


def _newton(
    master: Callable[[Vec], tuple[Vec, Mat]],
    start: Vec,
    constraint: Callable[[Vec], bool] | None = None,
) -> Vec:
    """Solve F(x) = 0 in two unknowns the way ``NewtonRaphson2D`` (ARX's settings) does.

    The first try starts at ``start``, each further try at the next prepared start
    value; a try ends when the step leaves the constraint, gives NaN or runs 1000
    iterations; the solve ends on convergence (both components of F within 1e-6 in
    absolute value) or once the last prepared start value has been taken (that try gets
    one step, as in the library). Returns (NaN, NaN) when nothing converged.
    """
    starts = _start_values()
    iterations_total = (len(starts) + 1) * SOLVER_ITERATIONS_PER_TRY
    total, offset = 0, 0
    x: Vec | None = None
    with np.errstate(all="ignore"):
        while total <= iterations_total:
            iterations = 0
            if x is None:
                x = start
            else:
                x = starts[offset]
                offset += 1
            while True:
                total += 1
                (o1, o2), (x1, x2, y1, y2) = master(x)
                if abs(o1) <= SOLVER_ACCURACY and abs(o2) <= SOLVER_ACCURACY:
                    return x
                det = np.float64(x1) * y2 - np.float64(x2) * y1
                scalar = np.float64(1.0) / det
                i1, i2, j1, j2 = y2 * scalar, -x2 * scalar, -y1 * scalar, x1 * scalar
                step = (i1 * o1 + i2 * o2, j1 * o1 + j2 * o2)
                x = (float(x[0] - step[0]), float(x[1] - step[1]))
                if offset == len(starts):
                    return (math.nan, math.nan)
                if constraint is not None and not constraint(x):
                    break
                if math.isnan(x[0]) or math.isnan(x[1]):
                    break
                if iterations >= SOLVER_ITERATIONS_PER_TRY:
                    break
                iterations += 1
    return (math.nan, math.nan)


# ------------------------------------------------------------------ population models


class _Sample:
    """The quantities every population model reads from the table (RiskModelPopulation)."""

    def __init__(self, table: dict[int, int], population_size: int) -> None:
        self.sizes = np.array(list(table), dtype=np.float64)
        self.counts = np.array(list(table.values()), dtype=np.float64)
        self.table = table
        self.n = float(sum(f * c for f, c in table.items()))
        self.u = float(sum(table.values()))
        self.c1 = float(table.get(1, 0))
        self.c2 = float(table.get(2, 0))
        self.population = float(population_size)
        self.fraction = self.n / self.population


def _hypergeometric_one(population: int, successes: int, draws: int) -> float:
    """P(X = 1) for X ~ Hypergeometric(population N, successes K, draws n)."""
    if successes < 1 or draws < 1 or draws - 1 > population - successes:
        return 0.0
    if successes == population and draws == 1:
        # commons-math's saddle-point form (ARX's HypergeometricDistribution) evaluates
        # 0 * log(0) here: NaN. Only a one-record table at a fraction > 2/3 gets here.
        return math.nan
    log_p = (
        math.log(successes)
        + _log_binomial(population - successes, draws - 1)
        - _log_binomial(population, draws)
    )
    return math.exp(log_p)


def _log_binomial(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _zayatz(s: _Sample) -> float:
    """Population uniques by Zayatz (1991), as ``ModelZayatz``.

    The share of sample uniques that are population uniques is estimated as
    ``P(unique | unique in sample) = (c1/u * h(1)) / sum_j (c_j/u * h(j))`` with ``h(j)``
    the hypergeometric probability that a population class of ``j`` records leaves
    exactly one record in a sample of ``n`` out of ``N`` (ARX uses the sample class sizes
    ``j`` in place of the unknown population ones); the number of population uniques is
    ``c1 * P / (n/N)``. ``N`` and ``n`` are capped at 2^31 - 1 as in ARX.
    """
    big_n = min(int(s.population), _INT_MAX)
    n = min(int(s.n), _INT_MAX)
    denominator = 0.0
    for size, count in s.table.items():
        denominator += (count / s.u) * _hypergeometric_one(big_n, size, n)
    conditional = ((s.c1 / s.u) * _hypergeometric_one(big_n, 1, n)) / denominator
    return s.c1 * conditional / s.fraction


def _pitman_master_closed(s: _Sample) -> Callable[[Vec], tuple[Vec, Mat]]:
    """Pitman's likelihood equations and Jacobian in closed form (digamma/trigamma)."""
    keys = s.sizes[s.sizes != 1.0]
    vals = s.counts[s.sizes != 1.0]
    u, n = s.u, s.n

    def master(x: Vec) -> tuple[Vec, Mat]:
        t, a = np.float64(x[0]), np.float64(x[1])
        v0 = u - 1.0
        v1 = _dg(v0 + t / a + 1.0)
        v2 = _tg((a + t + a * v0) / a)
        v3 = _tg(t / a + 1.0)
        v4 = _dg(t / a + 1.0)
        v5 = a * a
        d1 = (v3 - v2) / v5
        d5 = ((a * v1 + t * v2) - a * v4 - t * v3) / (v5 * a)
        d3 = ((v5 * v0 - t * t * v2 + t * t * v3) - 2.0 * a * t * v1 + 2.0 * a * t * v4) / (v5 * v5)
        o1 = (v1 - v4) / a
        o3 = (-t * v1 + a * v0 + t * v4) / (a * a)
        o2 = _dg(n + t) - _dg(t + 1.0)
        d2 = _tg(t + 1.0) - _tg(n + t)
        d4 = float(np.sum(vals * (_tg(1.0 - a) - _trigamma(keys - a))))
        o4 = float(np.sum(vals * (_digamma(keys - a) - _dg(1.0 - a))))
        return (o1 - o2, o3 - o4), (d2 - d1, -d5, -d5, -d3 - d4)

    return master


CHUNK = 1 << 20
"""Terms per numpy array of the finite sums (bounds the driver's memory: the sums run to
the number of rows, 80 MB per array at 10M rows if built whole)."""


def _chunks(first: int, stop: int) -> Iterator[np.ndarray]:
    """``first, first + 1, ..., stop - 1`` as float arrays of at most :data:`CHUNK` terms."""
    for lo in range(first, stop, CHUNK):
        yield np.arange(lo, min(lo + CHUNK, stop), dtype=np.float64)


def _pitman_sums(s: _Sample) -> Callable[[], Iterator[tuple[np.ndarray, np.ndarray]]]:
    """The index j of the iterative form with its weight w_j, in chunks.

    ``sum_classes count * sum_{j < size} g(j)`` equals ``sum_j w_j g(j)`` with ``w_j`` the
    number of classes larger than ``j`` (classes of size 1 add nothing). The weights of a
    chunk come from the sizes sorted once (the classes of size at most j by a binary
    search), so no array is longer than the distinct sizes or :data:`CHUNK`.
    """
    order = np.argsort(s.sizes, kind="stable")
    sizes, counts = s.sizes[order], s.counts[order]
    at_most = np.concatenate([[0.0], np.cumsum(counts)])  # classes of size <= sizes[i - 1]
    total = float(counts.sum())
    top = int(sizes.max()) if sizes.size else 1

    def chunks() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for j in _chunks(1, top):
            yield j, total - at_most[np.searchsorted(sizes, j, side="right")]

    return chunks


def _pitman_master_iterative(s: _Sample) -> Callable[[Vec], tuple[Vec, Mat]]:
    """Pitman's likelihood equations and Jacobian as finite sums (``ModelPitman``).

    The sums over i = 1..u-1, i = 1..n-1 and the weighted j run chunk by chunk
    (:func:`_chunks`): the driver's memory stays flat in the rows.
    """
    weighted = _pitman_sums(s)
    u_stop, n_stop = math.ceil(s.u), math.ceil(s.n)

    def master(x: Vec) -> tuple[Vec, Mat]:
        t, a = x
        d1 = d5 = d3 = o1 = o3 = d4 = o4 = d2 = o2 = 0.0
        with np.errstate(all="ignore"):
            for iu in _chunks(1, u_stop):
                v0 = t + iu * a
                d1 += float(np.sum(1.0 / (v0 * v0)))
                d5 += float(np.sum(iu / (v0 * v0)))
                d3 += float(np.sum(iu * iu / (v0 * v0)))
                o1 += float(np.sum(1.0 / v0))
                o3 += float(np.sum(iu / v0))
            for j, w in weighted():
                v3 = j - a
                d4 += float(np.sum(w / (v3 * v3)))
                o4 += float(np.sum(w / v3))
            for i_n in _chunks(1, n_stop):
                vn = t + i_n
                d2 += float(np.sum(1.0 / (vn * vn)))
                o2 += float(np.sum(1.0 / vn))
        return (o1 - o2, o3 - o4), (d2 - d1, -d5, -d5, -d3 - d4)

    return master


def _pitman_result(x: Vec, population: float) -> float:
    """Number of population uniques from Pitman's (theta, alpha): Gamma ratio * N^alpha.

    ``Gamma(theta + 1) / Gamma(theta + alpha) * N^alpha`` (Hoshino 2001, eq. for the
    expected number of population uniques), computed as ARX does both through log-gamma
    and through gamma, each kept only within [0, N], the larger one returned.
    """
    t, a = x
    if math.isnan(t) or math.isnan(a) or a == 0:
        return math.nan
    with np.errstate(all="ignore"):
        power = float(np.power(np.float64(population), np.float64(a)))
        val1 = float(np.exp(np.float64(_log_gamma(t + 1.0) - _log_gamma(t + a)))) * power
        val2 = float(np.float64(_gamma(t + 1.0)) / np.float64(_gamma(t + a))) * power
    val1 = val1 if 0.0 <= val1 <= population else math.nan
    val2 = val2 if 0.0 <= val2 <= population else math.nan
    if math.isnan(val1) and math.isnan(val2):
        return math.nan
    if math.isnan(val1):
        return val2
    if math.isnan(val2):
        return val1
    return max(val1, val2)


def _pitman_start(s: _Sample) -> Vec:
    """ARX's initial guess of Pitman's (theta, alpha) from c1, c2 (c2 = 0 read as 1)."""
    c1, u, n = s.c1, s.u, s.n
    c2 = s.c2 if s.c2 != 0 else 1.0
    with np.errstate(all="ignore"):
        c = np.float64(c1 * (c1 - 1)) / c2
        t = float(((n * u * c) - (c1 * (n - 1) * (2 * u + c))) / ((2 * c1 * u + c1 * c) - n * c))
        a = float(((t * (c1 - n)) + ((n - 1) * c1)) / (n * u))

    return (t, a)


def _pitman(s: _Sample) -> float:
    """Population uniques by Pitman's sampling formula (Pitman 1996; Hoshino 2001).

    Fits (theta, alpha) by maximum likelihood (Newton-Raphson on the two score
    equations, theta >= 0) from ARX's moment-style initial guess, first with the
    closed-form (polygamma) equations, then - if that gives NaN or its root does not
    satisfy the finite-sum equations within 1e-6 - with the finite-sum equations.
    """
    t, a = _pitman_start(s)

    def theta_nonnegative(x: Vec) -> bool:
        return x[0] >= 0

    iterative = _pitman_master_iterative(s)
    result = _newton(_pitman_master_closed(s), (t, a), theta_nonnegative)
    if math.isnan(result[0]) or math.isnan(result[1]):
        result = _newton(iterative, (t, a), theta_nonnegative)
    else:
        (e1, e2), _ = iterative(result)
        if (
            math.isnan(e1)
            or math.isnan(e2)
            or abs(e1) > SOLVER_ACCURACY
            or abs(e2) > SOLVER_ACCURACY
        ):
            result = _newton(iterative, (t, a), theta_nonnegative)
    return _pitman_result(result, s.population)


def _snb_classes(s: _Sample) -> float:
    """ARX's estimate of the number K of non-empty population classes (Shlosser/Haas).

    Computed term by term as ``ModelSNB.estimateNonEmptyEquivalenceClasses``, where the
    ``- 1`` of the second sum is subtracted once per class size (as ARX's code does).
    """
    f = s.fraction
    f2 = f * f
    v1 = v2 = v3 = v4 = 0.0
    with np.errstate(all="ignore"):
        for size, count in s.table.items():
            j, c = float(size), float(count)
            p = float(np.power(1 - f, j)) * c
            v1 += j * f2 * float(np.power(1 - f2, j - 1)) * c
            v2 += p * float(np.power(1 + f, j)) - 1
            v3 += p
            v4 += j * f * float(np.power(1 - f, j - 1)) * c
        ratio = np.float64(v3) / np.float64(v4)
        return float(s.u + s.c1 * (np.float64(v1) / np.float64(v2)) * ratio * ratio)


def _snb_master(k: float, f: float, c1: float, c2: float) -> Callable[[Vec], tuple[Vec, Mat]]:
    """The SNB moment equations in (alpha, beta) and their Jacobian (``ModelSNB``).

    ``E[c1] = K f (b / (1 - d))^a (a d / (1 - d) + 1)`` and
    ``E[c2] = K a b^a f^2 (1 - b) / 2 (1 - d)^(a + 2) (2 - (1 - a) d)`` with
    ``d = (1 - f)(1 - b)``, solved for the observed ``c1``, ``c2`` (Chen and
    Keller-McNulty 1998, as written in ARX).
    """
    k, f = np.float64(k), np.float64(f)

    def master(x: Vec) -> tuple[Vec, Mat]:
        a, b = np.float64(x[0]), np.float64(x[1])
        d = (1 - f) * (1 - b)
        r1 = k * f * np.power(b / (1 - d), a) * (((a * d) / (1 - d)) + 1) - c1
        r2 = (
            k
            * a
            * np.power(b, a)
            * (f * f)
            * (1 - b)
            / 2
            * np.power(1 - d, a + 2)
            * (2 - (1 - a) * d)
            - c2
        )
        val0 = (b - 1.0) * (f - 1.0)
        val1 = val0 - 1.0
        val2 = 1.0 - val0
        val3 = a * val0 / val1 - 1.0
        val4 = np.power(-b / val1, a)
        val6 = np.power(f, 2.0)
        val7 = np.power(b, a)
        val8 = val7 * val6 * k
        val9 = a * val8
        val10 = 2.0 * np.power(val2, a + 2.0)
        val11 = np.power(val1, 2.0)
        val13 = f * k
        val14 = f - 1.0
        val15 = a - 1.0
        val16 = b - 1.0
        val17 = val15 * val0
        val18 = val6 * k
        val19 = val17 + 2.0
        val20 = val18 * val19
        m_x1 = -val13 * np.log(-b / val1) * val3 * val4 - (val13 * val4 * val0) / val1
        m_x2 = a * val13 * (1.0 / val1 - (b * val14) / val11) * val3 * np.power(
            -b / val1, val15
        ) - val13 * val4 * ((a * val14) / val1 - (a * val16 * np.power(val14, 2.0)) / val11)
        m_y1 = (
            (val9 * np.log(val2) * val19 * val16) / val10
            - (val9 * np.power(val16, 2.0) * val14) / val10
            - (val7 * val20 * val16) / val10
            - (a * val7 * val18 * np.log(b) * val19 * val16) / val10
        )
        m_y2 = (
            -(val9 * val19) / val10
            - (np.power(a, 2.0) * np.power(b, val15) * val20 * val16) / val10
            - (a * val7 * val18 * val17) / val10
            - (a * val7 * val20 * (a + 2.0) * val0) / (2.0 * np.power(val2, a + 3.0))
        )
        return (float(r1), float(r2)), (float(m_x1), float(m_x2), float(m_y1), float(m_y2))

    return master


def _snb(s: _Sample) -> float:
    """Population uniques by the SNB model (Chen and Keller-McNulty 1998): ``K b^a``.

    Newton-Raphson from (alpha, beta) = (1, 1) with ARX's prepared restarts.
    """
    k = _snb_classes(s)
    with np.errstate(all="ignore"):
        a, b = _newton(_snb_master(k, s.fraction, s.c1, s.c2), (1.0, 1.0))
        return float(np.float64(k) * np.power(np.float64(b), np.float64(a)))


def _valid(value: float) -> bool:
    return not math.isnan(value) and value != 0.0


def population_size(rows: int, sampling_fraction: float) -> int:
    """ARX's population size for a sampling fraction: ``round(n / fraction)`` (half up).

    Args:
        rows: the number of records in the sample.
        sampling_fraction: the share of the population the sample holds, in (0, 1].

    Returns:
        ``Math.round(n / fraction)`` as ``ARXPopulationModel.create(n, fraction)``.
    """
    return int(math.floor(rows / _checked_fraction(sampling_fraction) + 0.5))


_NO_SOLUTION = {
    "pitman": "Pitman's likelihood equations had no admissible solution within ARX's "
    "solver limits (ARX reports 0 and marks the estimate unavailable)",
    "snb": "the SNB equations had no solution within ARX's solver limits (ARX reports 0 "
    "and marks the estimate unavailable)",
    "zayatz": "Zayatz's estimate is 0 or undefined (ARX reports 0 and marks it unavailable)",
}


def population_uniqueness(
    class_sizes: Mapping[int, int], sampling_fraction: float
) -> dict[str, Any]:
    """Share of the population unique on the quasi-identifiers, by ARX's four estimators.

    The population has ``N = round(n / sampling_fraction)`` records (``ARXPopulationModel``)
    and the models read the effective fraction ``n / N``. Each estimator gives a number
    of population uniques; ARX reports it divided by ``N`` (the share of the population's
    records, not of the sample's), and so does this function. Dankar et al. (2012)'s
    decision rule: at a fraction <= 0.1 Pitman's estimate (Zayatz's when Pitman's has no
    solution); above, the smaller of Zayatz's and SNB's (Zayatz's when SNB's has none).

    Edge cases, as ARX: no sample uniques -> every estimate 0.0 (there is nothing to
    extrapolate) and ``dankar_model`` ``None``; an estimate the solver could not find (ARX
    reports 0 with ``isAvailableEstimate`` false) -> ``None`` and a reason in ``reasons``;
    an empty table -> ``None`` everywhere (ARX would divide 0 by 0).

    Args:
        class_sizes: ``{f: number of classes of size f}`` of the sample.
        sampling_fraction: the share of the population the sample holds, in (0, 1]
            (1 = the table is the population: every estimate then equals the sample
            uniques share, up to the solvers' accuracy).

    Returns:
        ``{"sampling_fraction", "population_size", "sample_uniqueness" (share of sample
        records in classes of size 1), "pitman", "zayatz", "snb", "dankar" (shares of the
        population, or None), "dankar_model" ("pitman"|"zayatz"|"snb"|None),
        "estimated_uniques": {"pitman", "zayatz", "snb", "dankar"} (numbers of population
        records, or None), "reasons": {model: why it is None}}``.

    Raises:
        UserError: bad sampling fraction or class sizes (naming it).
    """
    fraction = _checked_fraction(sampling_fraction)
    table = _checked_table(class_sizes)
    rows = sum(f * c for f, c in table.items())
    big_n = population_size(rows, fraction)
    models = ("pitman", "zayatz", "snb", "dankar")
    result: dict[str, Any] = {
        "sampling_fraction": fraction,
        "population_size": big_n,
        "sample_uniqueness": (table.get(1, 0) / rows) if rows else 0.0,
        "dankar_model": None,
        "reasons": {},
    }
    if rows == 0 or big_n == 0:
        result.update(dict.fromkeys(models))
        result["estimated_uniques"] = dict.fromkeys(models)
        result["reasons"] = dict.fromkeys(models, "the table has no records")
        return result
    if table.get(1, 0) == 0:
        result.update(dict.fromkeys(models, 0.0))
        result["estimated_uniques"] = dict.fromkeys(models, 0.0)
        return result
    sample = _Sample(table, big_n)
    counts: dict[str, float] = {}
    counts["zayatz"] = _zayatz(sample)
    if sample.fraction <= 0.1:
        counts["pitman"] = _pitman(sample)
        counts["snb"] = _snb(sample)
        if _valid(counts["pitman"]):
            choice = "pitman"
        else:
            choice = "zayatz"
    else:
        counts["snb"] = _snb(sample)
        counts["pitman"] = _pitman(sample)
        if _valid(counts["snb"]):
            choice = "zayatz" if counts["zayatz"] < counts["snb"] else "snb"
        else:
            choice = "zayatz"
    counts["dankar"] = counts[choice]
    uniques: dict[str, float | None] = {}
    for model in models:
        value = counts[model]
        if _valid(value):
            uniques[model] = value
        else:
            uniques[model] = None
            key = choice if model == "dankar" else model
            result["reasons"][model] = _NO_SOLUTION[key]
    result["estimated_uniques"] = uniques
    for model in models:
        value = uniques[model]
        result[model] = None if value is None else value / big_n
    result["dankar_model"] = choice if uniques["dankar"] is not None else None
    return result


def summary(
    class_sizes: Mapping[int, int],
    threshold: float = DEFAULT_THRESHOLD,
    sampling_fraction: float = 1.0,
    population: Mapping[tuple[int, int], int] | None = None,
) -> dict[str, Any]:
    """ARX's risk figures of one table, JSON-able: what an evaluation stores as ``arx``.

    Args:
        class_sizes: ``{f: number of classes of size f}``.
        threshold: risk threshold of ``records_at_risk``, in (0, 1].
        sampling_fraction: the share of the population the table holds, in (0, 1].
        population: optional ``{(f, F): count}`` population table for the journalist
            and marketer (see :func:`sample_risks`).

    Returns:
        ``{"source": "ARX <commit>", "threshold", "sampling_fraction", "rows",
        "classes", "population_source", "prosecutor", "journalist", "marketer",
        "sample_uniques", "population_uniqueness": <population_uniqueness dict>}``.

    Raises:
        UserError: a bad argument (naming it).
    """
    risks = sample_risks(class_sizes, threshold, population)
    pop = population_uniqueness(class_sizes, sampling_fraction)
    return {
        "source": f"ARX risk models (arx-deidentifier/arx {ARX_COMMIT[:12]})",
        "threshold": risks["threshold"],
        "sampling_fraction": pop["sampling_fraction"],
        "rows": risks["rows"],
        "classes": risks["classes"],
        "population_source": risks["population_source"],
        "prosecutor": risks["prosecutor"],
        "journalist": risks["journalist"],
        "marketer": risks["marketer"],
        "sample_uniques": risks["sample_uniques"],
        "population_uniqueness": pop,
    }
