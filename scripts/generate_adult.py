"""Grow the Adult data set to any row count, deterministically, as one Parquet file.

Two methods (``--method``):

* ``model`` (the default): new rows sampled from a Bayesian network fitted to the source.
  Rows are mostly new combinations, so quasi-identifier classes at scale are about as
  small as a population of that size would give, not copies of the source's classes.
* ``copy``: real rows copied with replacement and three numeric columns jittered (the
  generator's only method before issue 27; the benchmarks recorded before it used it).
  Rows repeat: at 1M rows few rows have a combination of the seven quasi-identifiers of
  ``conf/adult_hpk.yaml`` that no other row has, so k is met by identical rows.

Method ``model``:
    Why a Bayesian network: it is fitted in well under a second with numpy alone, it keeps
    the strong pairwise links of Adult exactly where they matter (education and
    education-num, sex and relationship, marital-status and relationship, education and
    income), and its conditional tables, smoothed with a small Dirichlet prior, give
    unseen but plausible combinations a small probability. A Gaussian copula was the
    alternative; it needs an ordering of every nominal column, which Adult's nominal
    columns (native-country, occupation, race) do not have, and it blurs exact links.

    Fitting, on the source rows:

    1. Variables. Every column but ``education-num`` is one discrete variable. Categorical
       columns are their values. The five other integer columns are cut into bins
       (``NUMERIC_SPECS``): quantile bins of the column, a value that holds more than one
       bin's share of the rows gets a bin of its own (``hours-per-week`` 40 holds 47% of
       Adult), and ``capital-gain``/``capital-loss`` have a bin for 0 (92% and 95% of
       rows), so that they stay mostly zero. Those two are one variable, their observed
       pairs of bins (``PAIRED``): no Adult row has both a gain and a loss, and none made
       has.
    2. Structure. A Chow-Liu tree (the maximum spanning tree of the pairwise mutual
       information, grown from the variable with the largest total) fixes the sampling
       order and each variable's first parent. Each variable then gets a second parent,
       among the variables before it, when that raises the mutual information with its
       parents by more than the BIC penalty of the larger table
       (``(|X|-1) * |P1| * (|P2|-1) * ln(n) / (2n)`` nats).
    3. Tables. ``P(x | parents) = (n(x, parents) + ALPHA * p(x)) / (n(parents) + ALPHA)``,
       with ``p`` the variable's marginal: a Dirichlet prior of total mass ``ALPHA``
       centred on the marginal, so that rare parent combinations borrow from the marginal
       and combinations absent from the source get a small probability.
    4. Values within a bin. ``age`` and ``hours-per-week``: from the bin's histogram of
       source integers plus ``WITHIN_ALPHA`` per integer of the bin (keeps the heaping at
       round hours and the top-code spike at age 90, and lets unseen ages of the bin
       appear). ``fnlwgt`` and the non-zero ``capital-gain``/``capital-loss`` bins: a
       kernel density on the log scale restricted to the bin (a source value of the bin
       times ``exp(h * N(0, 1))``, ``h`` Silverman's bandwidth of the column's logs, kept
       only if it stays in the bin, else the source value), rounded to an integer.
    5. ``education-num`` is education's number in the source (a function of it in Adult;
       a source where it is not is refused).

    Every value lies in the source's range (bins are within it); output columns are the
    source's, in its order, int64 and string.

Method ``copy``:
    Every output row starts as a real Adult row drawn uniformly, with replacement, from the
    source CSV (``data/adult/adult.csv``, 45,222 rows). Resampling whole rows keeps the joint
    distribution of the categorical columns, and so their marginals and correlations
    (education and income, sex and relationship, ...), up to sampling noise. Three numeric
    columns are then perturbed slightly, so that the copies of one source row do not all
    coincide:

    * ``age``: plus an integer step in -2..+2 (most often 0, see ``AGE_JITTER``), clipped to
      [17, 90], the range of the source;
    * ``fnlwgt``: times a lognormal factor ``exp(N(-0.05**2 / 2, 0.05**2))`` (mean 1),
      rounded to an integer;
    * ``hours-per-week``: plus an integer step in -2..+2 (0 for 80% of rows, see
      ``HOURS_JITTER``), clipped to [1, 99].

    ``capital-gain``, ``capital-loss`` and ``education-num`` are kept as sampled, so
    ``education-num`` always matches ``education``. The output has the columns of the source,
    in its order, as int64 and string.

Determinism:
    Rows are made in chunks of ``--chunk-rows``. Chunk ``i`` draws from generators seeded by
    ``SeedSequence(seed, spawn_key=(i, stream))``, one stream per network variable and per
    binned column (``model``), or one for the row choice and one per perturbed column
    (``copy``), so a chunk depends only on (source, method, seed, chunk index, chunk
    length); the model's fit has no randomness. The same source, ``--method``, ``--seed``,
    ``--rows`` and ``--chunk-rows`` give byte-identical files with the same numpy and
    pyarrow versions; with the same seed and ``--chunk-rows``, a smaller ``--rows`` gives a
    prefix of a larger one. Memory is bounded by one chunk: each is written as one row
    group with ``pyarrow.parquet.ParquetWriter``.

Limits:
    * ``model``: the network keeps one- and two-parent dependencies; links of three or more
      columns that the parents do not carry are only approximated (e.g. the joint of
      age, marital-status and relationship). Values within a bin are drawn independently
      of the other columns. The smoothing makes a few implausible rows at about the
      source's rate (a ``Husband`` who is ``Female``: 1 row in 45,222 in Adult, 25 in 1M
      made with seed 0; a ``Wife`` who is ``Male``: 1 in Adult, 54 in 1M). ``fnlwgt`` and capital
      values are continuous draws, so the source's heaped capital values are spread over
      their bins (the top code 99999: 0.51% of Adult, 0.25% of rows made).
    * ``copy``: no new categorical combinations: every output row's categorical part (and
      its capital-gain/capital-loss) is one of the source's, so rare combinations stay rare
      but are repeated about rows/45,222 times. Quasi-identifier classes are therefore much
      larger than in a real population of that size, which makes k-anonymity easier to
      reach than on real data; unique source rows (e.g. the one ``Holand-Netherlands`` row)
      become groups of copies, not unique people. The jitter blurs the heaping of the
      source: the share of rows with exactly 40 hours a week drops from 47% to about 38%,
      and the small spike at the age top-code 90 is spread out. It also slightly loosens
      age's links to the other columns, and clipping piles a little extra mass on the
      bounds (age 17: 1.1% -> about 1.3%). Every row is a lightly perturbed copy of a real
      record.
    * ``fnlwgt`` is a census sampling weight; the generated values are plausible numbers
      but have no survey meaning (they do not sum to a population).
    * Neither method is a privacy-safe synthesizer: this is demo and benchmark data.

Report:
    ``--report FILE ...`` prints, for the source and for each file, the rows, the number of
    distinct combinations of the seven quasi-identifiers (``QI_COLUMNS``), the share of rows
    whose combination appears once, the total variation distance of each column's marginal
    to the source's (integer columns over the source's quantile bins), and the mutual
    information of a few known pairs (``REPORT_PAIRS``).

Example:
    python -m scripts.generate_adult --rows 1000000 --out /tmp/adult_1m.parquet --seed 7
    python -m scripts.generate_adult --rows 1000000 --out /tmp/adult_1m_copy.parquet --method copy
    python -m scripts.generate_adult --report /tmp/adult_1m.parquet /tmp/adult_1m_copy.parquet
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from scripts import _args

# The column list is the one prepare_adult.py writes.
from scripts.prepare_adult import COLUMNS, INT_COLUMNS

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO_ROOT / "data" / "adult" / "adult.csv"

SCHEMA = pa.schema(
    [pa.field(name, pa.int64() if name in INT_COLUMNS else pa.string()) for name in COLUMNS]
)

# Integer steps and their probabilities, symmetric with mean 0. Age's distribution is smooth,
# so it gets more movement (standard deviation ~0.89); hours-per-week is heaped at round
# numbers (47% of the source works exactly 40 hours), so it is moved less often (~0.57) to
# keep most of that heaping.
AGE_JITTER: tuple[tuple[int, ...], tuple[float, ...]] = (
    (-2, -1, 0, 1, 2),
    (0.05, 0.2, 0.5, 0.2, 0.05),
)
HOURS_JITTER: tuple[tuple[int, ...], tuple[float, ...]] = (
    (-2, -1, 0, 1, 2),
    (0.02, 0.08, 0.8, 0.08, 0.02),
)
AGE_RANGE = (17, 90)
HOURS_RANGE = (1, 99)
FNLWGT_SIGMA = 0.05

# Independent random streams of one chunk (the spawn_key's second element).
_STREAM_ROWS, _STREAM_AGE, _STREAM_FNLWGT, _STREAM_HOURS = range(4)

DEFAULT_SEED = 0
DEFAULT_CHUNK_ROWS = 500_000
COMPRESSION = "snappy"


def load_source(path: Path) -> pa.Table:
    """Read the cleaned Adult CSV and check its shape.

    Args:
        path: A CSV written by ``scripts/prepare_adult.py``.

    Returns:
        The source rows, with the columns of ``SCHEMA`` (int64 and string, no nulls).

    Raises:
        ValueError: If the header is not the 15 Adult columns in order, the file has no
            rows, or a value is missing.
    """
    with path.open(encoding="utf-8") as handle:
        header = tuple(handle.readline().rstrip("\r\n").split(","))
    if header != COLUMNS:
        raise ValueError(f"{path}: header {header} is not {COLUMNS}")
    table = pacsv.read_csv(
        path,
        convert_options=pacsv.ConvertOptions(
            column_types=SCHEMA,
            null_values=[],
            strings_can_be_null=False,
        ),
    )
    table = table.select(list(COLUMNS)).cast(SCHEMA)
    if table.num_rows == 0:
        raise ValueError(f"{path}: no data rows")
    if any(column.null_count for column in table.columns):
        raise ValueError(f"{path}: missing values")
    return table.combine_chunks()


def chunk_rng(seed: int, chunk_index: int, stream: int) -> np.random.Generator:
    """Return the random generator of one stream of one chunk.

    Args:
        seed: The run's seed.
        chunk_index: 0-based index of the chunk.
        stream: Which of the chunk's independent streams (``_STREAM_*``).

    Returns:
        A generator that depends only on the three arguments.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(chunk_index, stream)))


def jitter(
    values: npt.NDArray[np.int64],
    steps: tuple[tuple[int, ...], tuple[float, ...]],
    bounds: tuple[int, int],
    rng: np.random.Generator,
) -> npt.NDArray[np.int64]:
    """Add a random integer step to each value and clip the result.

    Args:
        values: The integers to perturb.
        steps: The possible steps and their probabilities.
        bounds: Inclusive lower and upper bounds of the result.
        rng: The generator to draw the steps from.

    Returns:
        A new int64 array of the same length.
    """
    offsets = rng.choice(np.asarray(steps[0], dtype=np.int64), size=len(values), p=steps[1])
    return np.clip(values + offsets, bounds[0], bounds[1]).astype(np.int64)


def make_chunk(source: pa.Table, n_rows: int, seed: int, chunk_index: int) -> pa.Table:
    """Make one chunk of synthetic rows.

    Args:
        source: The Adult rows to resample, as returned by ``load_source``.
        n_rows: How many rows to make.
        seed: The run's seed.
        chunk_index: 0-based index of the chunk; with ``seed`` it fixes the random draws.

    Returns:
        ``n_rows`` rows with the schema ``SCHEMA``.
    """
    picks = chunk_rng(seed, chunk_index, _STREAM_ROWS).integers(
        0, source.num_rows, size=n_rows, dtype=np.int64
    )
    table = source.take(pa.array(picks))

    age = table.column("age").to_numpy()
    age = jitter(age, AGE_JITTER, AGE_RANGE, chunk_rng(seed, chunk_index, _STREAM_AGE))

    fnlwgt = table.column("fnlwgt").to_numpy()
    # mean=-sigma**2/2 makes E[factor] = 1, so the perturbation does not shift fnlwgt's mean.
    factor = chunk_rng(seed, chunk_index, _STREAM_FNLWGT).lognormal(
        mean=-(FNLWGT_SIGMA**2) / 2, sigma=FNLWGT_SIGMA, size=n_rows
    )
    fnlwgt = np.rint(fnlwgt * factor).astype(np.int64)

    hours = table.column("hours-per-week").to_numpy()
    hours = jitter(hours, HOURS_JITTER, HOURS_RANGE, chunk_rng(seed, chunk_index, _STREAM_HOURS))

    for name, values in (("age", age), ("fnlwgt", fnlwgt), ("hours-per-week", hours)):
        table = table.set_column(
            table.schema.get_field_index(name), SCHEMA.field(name), pa.array(values)
        )
    return table


# --- Method "model": a Bayesian network fitted to the source ---------------------------

METHODS = ("model", "copy")
DEFAULT_METHOD = "model"

# The quasi-identifiers of conf/adult_hpk.yaml (occupation is its sensitive attribute).
QI_COLUMNS: tuple[str, ...] = (
    "age",
    "education",
    "marital-status",
    "native-country",
    "workclass",
    "sex",
    "race",
)
# A column that is a function of another in Adult: made from it, not sampled.
DERIVED_COLUMN, DERIVED_FROM = "education-num", "education"
# Two binned columns that are one network variable (their observed pairs of bins): Adult has
# no row with both a capital gain and a capital loss, and two separate variables would make
# such rows (0.6% of them).
PAIRED: tuple[str, str] = ("capital-gain", "capital-loss")
PAIR_NAME = "+".join(PAIRED)

# Prior mass of each conditional table row (Dirichlet, centred on the marginal).
ALPHA = 1.0
# Pseudo count of each integer of a bin when drawing age and hours-per-week within a bin.
WITHIN_ALPHA = 0.5
# Largest number of parents of a network variable.
MAX_PARENTS = 2
# Streams of one chunk: network variable i (in sampling order) uses stream i; the
# within-bin draws of NUMERIC_SPECS[j] use _STREAM_NUMERIC + 2j (uniforms) and
# _STREAM_NUMERIC + 2j + 1 (normals). One stream per kind of draw keeps the first n draws
# of a chunk the same whatever its length, so a smaller --rows is a prefix.
_STREAM_NUMERIC = 64


@dataclass(frozen=True)
class NumericSpec:
    """How one integer column is binned in the network and drawn within a bin.

    Attributes:
        name: The column.
        n_bins: Number of quantile bins (before heaps and empty bins are handled).
        zero_bin: Whether 0 has a bin of its own and the quantiles are of the non-zero values.
        integer_pmf: Draw within a bin from the bin's smoothed histogram of integers (True)
            or from a log-scale kernel density around the bin's source values (False).
    """

    name: str
    n_bins: int
    zero_bin: bool
    integer_pmf: bool


NUMERIC_SPECS: tuple[NumericSpec, ...] = (
    NumericSpec("age", 12, zero_bin=False, integer_pmf=True),
    NumericSpec("fnlwgt", 10, zero_bin=False, integer_pmf=False),
    NumericSpec("capital-gain", 6, zero_bin=True, integer_pmf=False),
    NumericSpec("capital-loss", 6, zero_bin=True, integer_pmf=False),
    NumericSpec("hours-per-week", 10, zero_bin=False, integer_pmf=True),
)


@dataclass(frozen=True)
class Sampler:
    """Draws from several discrete distributions at once (one per row of a table).

    Row ``r`` is the distribution of ``values[starts[r]:starts[r + 1]]`` with cumulative
    probabilities ``cdf[starts[r]:starts[r + 1]] - r`` (the last is exactly 1), so that
    one sorted array serves every row.

    Attributes:
        values: The outcomes of every row, row after row.
        starts: Offsets of the rows in ``values`` (one more than the number of rows).
        cdf: ``row + cumulative probability``, non-decreasing over the whole array.
    """

    values: npt.NDArray[np.int64]
    starts: npt.NDArray[np.int64]
    cdf: npt.NDArray[np.float64]


@dataclass(frozen=True)
class NumericModel:
    """The bins of one integer column and how values are drawn within them.

    Attributes:
        spec: The column's settings.
        edges: Bin ``b`` is ``[edges[b], edges[b + 1])``; ``edges[-1]`` is the maximum + 1.
        within: For ``integer_pmf`` columns, the bins' distributions over their integers.
        centers: For kernel columns, the sorted source values of each bin, bin after bin.
        center_starts: Offsets of the bins in ``centers``.
        bandwidth: The kernel's standard deviation on the log scale.
    """

    spec: NumericSpec
    edges: npt.NDArray[np.int64]
    within: Sampler | None
    centers: npt.NDArray[np.int64]
    center_starts: npt.NDArray[np.int64]
    bandwidth: float


@dataclass(frozen=True)
class Node:
    """One variable of the network.

    Attributes:
        name: The column it stands for.
        size: Number of its values (categories or bins).
        parents: Indices of its parents in ``AdultModel.nodes`` (all earlier).
        table: Its conditional distributions, one row per parent combination (mixed radix,
            first parent most significant).
    """

    name: str
    size: int
    parents: tuple[int, ...]
    table: Sampler


@dataclass(frozen=True)
class AdultModel:
    """A Bayesian network over the source's columns, ready to sample.

    Attributes:
        nodes: The variables in sampling order (parents before children).
        categories: Each categorical column's values, in code order.
        numeric: Each binned integer column's bins and within-bin draws.
        derived: ``education-num`` of each ``education`` code.
        pair_bins: The bins of the ``PAIRED`` columns of each code of their joint variable
            (shape ``(codes, 2)``).
    """

    nodes: tuple[Node, ...]
    categories: dict[str, pa.Array]
    numeric: dict[str, NumericModel]
    derived: npt.NDArray[np.int64]
    pair_bins: npt.NDArray[np.int64]


def make_sampler(
    probabilities: list[npt.NDArray[np.float64]], values: list[npt.NDArray[np.int64]]
) -> Sampler:
    """Pack discrete distributions into one ``Sampler``.

    Args:
        probabilities: One non-negative weight vector per row, summing to more than 0.
        values: The outcomes of each row, as long as its weights.

    Returns:
        The packed distributions.
    """
    lengths = np.array([len(p) for p in probabilities], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    parts = []
    for row, weights in enumerate(probabilities):
        cumulative = np.cumsum(weights) / weights.sum()
        cumulative[-1] = 1.0
        parts.append(row + cumulative)
    return Sampler(
        values=np.concatenate(values).astype(np.int64),
        starts=starts,
        cdf=np.concatenate(parts),
    )


def draw(
    sampler: Sampler, rows: npt.NDArray[np.int64], uniforms: npt.NDArray[np.float64]
) -> npt.NDArray[np.int64]:
    """Draw one outcome per entry of ``rows`` by inverting the row's cumulative distribution.

    Args:
        sampler: The distributions.
        rows: Which distribution each draw is from.
        uniforms: One uniform number in [0, 1) per draw.

    Returns:
        The outcomes.
    """
    index = np.searchsorted(sampler.cdf, rows + uniforms, side="right")
    # rows + u can round up to rows + 1 in floating point: stay in the row.
    index = np.clip(index, sampler.starts[rows], sampler.starts[rows + 1] - 1)
    return sampler.values[index]


def bin_edges(values: npt.NDArray[np.int64], spec: NumericSpec) -> npt.NDArray[np.int64]:
    """Cut an integer column into bins: quantiles, heaps alone, no empty bin.

    Args:
        values: The source's values of the column.
        spec: Its settings.

    Returns:
        Increasing edges; bin ``b`` is ``[edges[b], edges[b + 1])``, the last edge is the
        maximum + 1, so every source value is in a bin.
    """
    body = values[values > 0] if spec.zero_bin else values
    lead = [0] if spec.zero_bin else []
    if body.size == 0:
        return np.array([0, 1], dtype=np.int64)
    # Lower quantiles 0, 1/n, ..., (n-1)/n: the maximum gets no bin of its own.
    quantiles = np.quantile(body, np.linspace(0.0, 1.0, spec.n_bins + 1)[:-1], method="lower")
    distinct, counts = np.unique(body, return_counts=True)
    heaps = distinct[counts > body.size / spec.n_bins]
    edges = np.unique(np.concatenate([lead, quantiles, heaps, heaps + 1, [body.max() + 1]]))
    edges = edges.astype(np.int64)
    in_bin = np.bincount(assign_bins(values, edges), minlength=len(edges) - 1)
    # Drop the left edge of an empty bin (merging it into the bin before).
    return edges[np.concatenate([in_bin > 0, [True]])]


def assign_bins(
    values: npt.NDArray[np.int64], edges: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Return the bin of each value (values outside the edges go to the end bins).

    Args:
        values: Integers.
        edges: Bin edges as made by ``bin_edges``.

    Returns:
        0-based bin indices.
    """
    bins = np.searchsorted(edges, values, side="right") - 1
    return np.clip(bins, 0, len(edges) - 2).astype(np.int64)


def log_bandwidth(values: npt.NDArray[np.int64]) -> float:
    """Silverman's rule-of-thumb bandwidth of the logs of the positive values.

    Args:
        values: Integers (zeros are ignored).

    Returns:
        The bandwidth (0 when fewer than two positive values).
    """
    logs = np.log(values[values > 0].astype(np.float64))
    if logs.size < 2:
        return 0.0
    q75, q25 = np.quantile(logs, [0.75, 0.25])
    spread = min(float(logs.std()), float(q75 - q25) / 1.34) or float(logs.std())
    return 0.9 * spread * logs.size ** (-0.2)


def fit_numeric(values: npt.NDArray[np.int64], spec: NumericSpec) -> NumericModel:
    """Bin one integer column and fit its within-bin draws.

    Args:
        values: The source's values.
        spec: The column's settings.

    Returns:
        The column's model.
    """
    edges = bin_edges(values, spec)
    bins = assign_bins(values, edges)
    within = None
    if spec.integer_pmf:
        weights, outcomes = [], []
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            integers = np.arange(lo, hi, dtype=np.int64)
            counts = np.bincount(values[(values >= lo) & (values < hi)] - lo, minlength=hi - lo)
            weights.append(counts + WITHIN_ALPHA)
            outcomes.append(integers)
        within = make_sampler(weights, outcomes)
    order = np.lexsort((values, bins))
    counts = np.bincount(bins, minlength=len(edges) - 1)
    return NumericModel(
        spec=spec,
        edges=edges,
        within=within,
        centers=values[order].astype(np.int64),
        center_starts=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        bandwidth=log_bandwidth(values),
    )


def draw_numeric(
    model: NumericModel,
    bins: npt.NDArray[np.int64],
    uniform_rng: np.random.Generator,
    normal_rng: np.random.Generator,
) -> npt.NDArray[np.int64]:
    """Draw a value within each given bin.

    Args:
        model: The column's model.
        bins: The bin of each row.
        uniform_rng: The column's generator of uniforms in this chunk.
        normal_rng: The column's generator of normals in this chunk (kernel columns).

    Returns:
        One int64 value per row, inside its bin.
    """
    uniforms = uniform_rng.random(len(bins))
    if model.within is not None:
        return draw(model.within, bins, uniforms)
    normals = normal_rng.standard_normal(len(bins))
    sizes = model.center_starts[bins + 1] - model.center_starts[bins]
    picks = model.center_starts[bins] + np.minimum((uniforms * sizes).astype(np.int64), sizes - 1)
    centers = model.centers[picks]
    proposed = np.rint(centers * np.exp(model.bandwidth * normals)).astype(np.int64)
    inside = (proposed >= model.edges[bins]) & (proposed < model.edges[bins + 1])
    return np.where(inside, proposed, centers)


def mutual_information(
    a: npt.NDArray[np.int64], size_a: int, b: npt.NDArray[np.int64], size_b: int
) -> float:
    """Empirical mutual information of two coded variables, in nats.

    Args:
        a: Codes of the first variable, in ``range(size_a)``.
        size_a: Number of its codes.
        b: Codes of the second, as long as ``a``.
        size_b: Number of its codes.

    Returns:
        ``sum p(a, b) ln(p(a, b) / (p(a) p(b)))``.
    """
    joint = np.bincount(a * size_b + b, minlength=size_a * size_b).reshape(size_a, size_b)
    joint = joint / joint.sum()
    expected = np.outer(joint.sum(axis=1), joint.sum(axis=0))
    seen = joint > 0
    return float((joint[seen] * np.log(joint[seen] / expected[seen])).sum())


def chow_liu_order(mi: npt.NDArray[np.float64]) -> list[tuple[int, int | None]]:
    """Grow the maximum spanning tree of a mutual information matrix (Prim).

    Args:
        mi: Symmetric pairwise mutual information of the variables.

    Returns:
        ``(variable, tree parent)`` in the order the tree reached them (the root first,
        with parent None); ties go to the lower index.
    """
    n_vars = len(mi)
    root = int(np.argmax(mi.sum(axis=1)))
    order: list[tuple[int, int | None]] = [(root, None)]
    placed = {root}
    best, best_from = mi[root].copy(), [root] * n_vars
    while len(placed) < n_vars:
        free = [v for v in range(n_vars) if v not in placed]
        chosen = max(free, key=lambda v: (best[v], -v))
        order.append((chosen, best_from[chosen]))
        placed.add(chosen)
        for v in free:
            if mi[chosen, v] > best[v]:
                best[v], best_from[v] = mi[chosen, v], chosen
    return order


def parent_codes(
    codes: list[npt.NDArray[np.int64]], sizes: list[int], parents: tuple[int, ...]
) -> tuple[npt.NDArray[np.int64], int]:
    """Combine parent codes into one configuration index (mixed radix).

    Args:
        codes: Codes of every variable.
        sizes: Number of codes of every variable.
        parents: The parents, most significant first.

    Returns:
        The configuration of each row and the number of configurations.
    """
    config = np.zeros(len(codes[0]), dtype=np.int64)
    n_configs = 1
    for parent in parents:
        config = config * sizes[parent] + codes[parent]
        n_configs *= sizes[parent]
    return config, n_configs


def learn_structure(
    codes: list[npt.NDArray[np.int64]], sizes: list[int]
) -> list[tuple[int, tuple[int, ...]]]:
    """Choose the sampling order and the parents of each variable.

    The Chow-Liu tree gives the order and the first parent; a second parent (among earlier
    variables) is added when its gain in mutual information beats the BIC penalty.

    Args:
        codes: Codes of every variable over the source rows.
        sizes: Number of codes of every variable.

    Returns:
        ``(variable, parents)`` in sampling order.
    """
    n_vars, n_rows = len(codes), len(codes[0])
    mi = np.zeros((n_vars, n_vars))
    for i in range(n_vars):
        for j in range(i + 1, n_vars):
            mi[i, j] = mi[j, i] = mutual_information(codes[i], sizes[i], codes[j], sizes[j])
    structure: list[tuple[int, tuple[int, ...]]] = []
    earlier: list[int] = []
    for variable, tree_parent in chow_liu_order(mi):
        parents: tuple[int, ...] = () if tree_parent is None else (tree_parent,)
        while 0 < len(parents) < MAX_PARENTS:
            base, n_configs = parent_codes(codes, sizes, parents)
            held = mutual_information(codes[variable], sizes[variable], base, n_configs)
            best_gain, best_parent = 0.0, None
            for candidate in earlier:
                if candidate in parents:
                    continue
                config = base * sizes[candidate] + codes[candidate]
                gain = (
                    mutual_information(
                        codes[variable], sizes[variable], config, n_configs * sizes[candidate]
                    )
                    - held
                )
                extra = (sizes[variable] - 1) * n_configs * (sizes[candidate] - 1)
                gain -= extra * math.log(n_rows) / (2 * n_rows)
                if gain > best_gain:
                    best_gain, best_parent = gain, candidate
            if best_parent is None:
                break
            parents = (*parents, best_parent)
        structure.append((variable, parents))
        earlier.append(variable)
    return structure


def fit_table(
    child: npt.NDArray[np.int64], size: int, config: npt.NDArray[np.int64], n_configs: int
) -> Sampler:
    """Fit one variable's conditional tables with the Dirichlet prior.

    Args:
        child: The variable's codes.
        size: Number of its codes.
        config: Parent configuration of each row.
        n_configs: Number of parent configurations.

    Returns:
        One distribution per parent configuration.
    """
    counts = np.bincount(config * size + child, minlength=n_configs * size).reshape(n_configs, size)
    marginal = np.bincount(child, minlength=size) / len(child)
    table = counts + ALPHA * marginal
    outcomes = np.arange(size, dtype=np.int64)
    return make_sampler(list(table.astype(np.float64)), [outcomes] * n_configs)


def fit_model(source: pa.Table) -> AdultModel:
    """Fit the Bayesian network to the source rows.

    Args:
        source: The Adult rows, as returned by ``load_source``.

    Returns:
        The fitted model.

    Raises:
        ValueError: If ``education-num`` is not a function of ``education`` in the source.
    """
    numeric_specs = {spec.name: spec for spec in NUMERIC_SPECS}
    names = [name for name in COLUMNS if name != DERIVED_COLUMN]
    codes: list[npt.NDArray[np.int64]] = []
    sizes: list[int] = []
    categories: dict[str, pa.Array] = {}
    numeric: dict[str, NumericModel] = {}
    for name in names:
        values = source.column(name).to_numpy()
        if name in numeric_specs:
            numeric[name] = fit_numeric(values.astype(np.int64), numeric_specs[name])
            codes.append(assign_bins(values, numeric[name].edges))
            sizes.append(len(numeric[name].edges) - 1)
        else:
            distinct, inverse = np.unique(values.astype(str), return_inverse=True)
            categories[name] = pa.array(distinct.tolist(), pa.string())
            codes.append(inverse.astype(np.int64))
            sizes.append(len(distinct))
    derived = derived_map(
        codes[names.index(DERIVED_FROM)], source.column(DERIVED_COLUMN).to_numpy()
    )
    first, second = (names.index(name) for name in PAIRED)
    pairs, pair_codes = np.unique(
        np.stack([codes[first], codes[second]], axis=1), axis=0, return_inverse=True
    )
    names[first], codes[first], sizes[first] = PAIR_NAME, pair_codes.ravel(), len(pairs)
    del names[second], codes[second], sizes[second]
    nodes = []
    position: dict[int, int] = {}
    for variable, parents in learn_structure(codes, sizes):
        config, n_configs = parent_codes(codes, sizes, parents)
        table = fit_table(codes[variable], sizes[variable], config, n_configs)
        position[variable] = len(nodes)
        nodes.append(
            Node(names[variable], sizes[variable], tuple(position[p] for p in parents), table)
        )
    return AdultModel(tuple(nodes), categories, numeric, derived, pairs.astype(np.int64))


def derived_map(
    from_codes: npt.NDArray[np.int64], derived: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Return the derived column's value for each code of the column it follows.

    Args:
        from_codes: Codes of ``education`` over the source rows.
        derived: ``education-num`` over the source rows.

    Returns:
        ``education-num`` indexed by ``education`` code.

    Raises:
        ValueError: If one code has two derived values.
    """
    mapping = np.zeros(int(from_codes.max()) + 1, dtype=np.int64)
    mapping[from_codes] = derived
    if not np.array_equal(mapping[from_codes], derived):
        raise ValueError(f"{DERIVED_COLUMN} is not a function of {DERIVED_FROM} in the source")
    return mapping


def make_model_chunk(model: AdultModel, n_rows: int, seed: int, chunk_index: int) -> pa.Table:
    """Sample one chunk of rows from the network.

    Args:
        model: The fitted model.
        n_rows: How many rows to make.
        seed: The run's seed.
        chunk_index: 0-based index of the chunk; with ``seed`` it fixes the random draws.

    Returns:
        ``n_rows`` rows with the schema ``SCHEMA``.
    """
    codes: list[npt.NDArray[np.int64]] = []
    for stream, node in enumerate(model.nodes):
        config = np.zeros(n_rows, dtype=np.int64)
        for parent in node.parents:
            config = config * model.nodes[parent].size + codes[parent]
        uniforms = chunk_rng(seed, chunk_index, stream).random(n_rows)
        codes.append(draw(node.table, config, uniforms))
    by_name = {node.name: code for node, code in zip(model.nodes, codes, strict=True)}
    for column, name in enumerate(PAIRED):
        by_name[name] = model.pair_bins[by_name[PAIR_NAME], column]
    columns: dict[str, pa.Array] = {}
    for name, values in model.categories.items():
        columns[name] = values.take(pa.array(by_name[name]))
    for index, spec in enumerate(NUMERIC_SPECS):
        uniform_rng = chunk_rng(seed, chunk_index, _STREAM_NUMERIC + 2 * index)
        normal_rng = chunk_rng(seed, chunk_index, _STREAM_NUMERIC + 2 * index + 1)
        columns[spec.name] = pa.array(
            draw_numeric(model.numeric[spec.name], by_name[spec.name], uniform_rng, normal_rng)
        )
    columns[DERIVED_COLUMN] = pa.array(model.derived[by_name[DERIVED_FROM]])
    return pa.Table.from_arrays([columns[name] for name in COLUMNS], schema=SCHEMA)


def generate(
    source_path: Path,
    out: Path,
    rows: int,
    seed: int = DEFAULT_SEED,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    method: str = DEFAULT_METHOD,
) -> int:
    """Write ``rows`` synthetic Adult rows to one Parquet file.

    The file is written under a temporary name next to ``out`` and renamed when complete,
    so an interrupted run leaves no partial ``out``.

    Args:
        source_path: The cleaned Adult CSV to fit or resample.
        out: The Parquet file to write (replaced if it exists); parent folders are created.
        rows: How many rows to write (at least 1).
        seed: Seed of the random draws.
        chunk_rows: Rows made and written at a time (one Parquet row group each).
        method: ``model`` (sample a Bayesian network fitted to the source) or ``copy``
            (copy source rows and jitter three columns).

    Returns:
        The number of rows written.

    Raises:
        ValueError: If ``rows`` or ``chunk_rows`` is below 1, ``seed`` is negative, or
            ``method`` is unknown.
    """
    if rows < 1:
        raise ValueError(f"rows must be at least 1, got {rows}")
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    source = load_source(source_path)
    if method == "model":
        model = fit_model(source)

        def make(n_rows: int, chunk_index: int) -> pa.Table:
            return make_model_chunk(model, n_rows, seed, chunk_index)
    else:

        def make(n_rows: int, chunk_index: int) -> pa.Table:
            return make_chunk(source, n_rows, seed, chunk_index)

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    written = 0
    try:
        with pq.ParquetWriter(tmp, SCHEMA, compression=COMPRESSION) as writer:
            for chunk_index, start in enumerate(range(0, rows, chunk_rows)):
                n_rows = min(chunk_rows, rows - start)
                writer.write_table(make(n_rows, chunk_index), row_group_size=n_rows)
                written += n_rows
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return written


# --- Report: how distinct the rows are and how close to the source ---------------------

# Pairs whose mutual information the report compares with the source's.
REPORT_PAIRS: tuple[tuple[str, str], ...] = (
    ("education", "education-num"),
    ("sex", "relationship"),
    ("marital-status", "relationship"),
    ("education", "income"),
    ("occupation", "sex"),
    ("age", "marital-status"),
)
# Quantile bins of an integer column when comparing marginals.
REPORT_BINS = 20


@dataclass(frozen=True)
class Profile:
    """Summary statistics of one data file (no row-level data).

    Attributes:
        path: The file.
        rows: Number of rows.
        distinct_qi: Number of distinct combinations of ``QI_COLUMNS``.
        unique_qi: Number of rows whose combination appears once.
        marginals: Per column, the count of each value (integer columns: of each source bin).
        mi: Mutual information, in bits, of each pair of ``REPORT_PAIRS``.
    """

    path: Path
    rows: int
    distinct_qi: int
    unique_qi: int
    marginals: dict[str, dict[object, int]]
    mi: dict[tuple[str, str], float]


def read_columns(path: Path, names: list[str]) -> pa.Table:
    """Read some columns of a data file: the source CSV or a generated Parquet file.

    Args:
        path: ``.csv`` (read as the source) or Parquet.
        names: The columns.

    Returns:
        The columns.
    """
    if path.suffix == ".csv":
        return load_source(path).select(names)
    return pq.read_table(path, columns=names)


def column_codes(column: pa.ChunkedArray) -> tuple[npt.NDArray[np.int64], int]:
    """Code a column as small non-negative integers.

    Args:
        column: A string or integer column.

    Returns:
        The codes and their number (an upper bound for integers: max - min + 1).
    """
    if pa.types.is_integer(column.type):
        values = column.to_numpy().astype(np.int64)
        low = int(values.min())
        return values - low, int(values.max()) - low + 1
    encoded = pc.dictionary_encode(column).combine_chunks()
    return encoded.indices.to_numpy().astype(np.int64), len(encoded.dictionary)


def profile(path: Path, edges: dict[str, npt.NDArray[np.int64]]) -> Profile:
    """Measure one data file, one column at a time (the QI columns together).

    Args:
        path: The file.
        edges: Bin edges of each integer column (the source's, so files compare).

    Returns:
        The file's statistics.
    """
    key = None
    for name in QI_COLUMNS:
        codes, size = column_codes(read_columns(path, [name]).column(0))
        key = codes if key is None else key * size + codes
    _, counts = np.unique(key, return_counts=True)
    rows = int(counts.sum())
    marginals: dict[str, dict[object, int]] = {}
    for name in COLUMNS:
        column = read_columns(path, [name]).column(0)
        if name in edges:
            bins = assign_bins(column.to_numpy().astype(np.int64), edges[name])
            marginals[name] = dict(
                enumerate(np.bincount(bins, minlength=len(edges[name]) - 1).tolist())
            )
        else:
            tally = pc.value_counts(column.combine_chunks())
            marginals[name] = dict(
                zip(
                    tally.field("values").to_pylist(),
                    tally.field("counts").to_pylist(),
                    strict=True,
                )
            )
    mi = {}
    for a, b in REPORT_PAIRS:
        table = read_columns(path, [a, b])
        codes_a, size_a = column_codes(table.column(0))
        codes_b, size_b = column_codes(table.column(1))
        mi[(a, b)] = mutual_information(codes_a, size_a, codes_b, size_b) / math.log(2)
    return Profile(path, rows, len(counts), int((counts == 1).sum()), marginals, mi)


def total_variation(p: dict[object, int], q: dict[object, int]) -> float:
    """Total variation distance of two count tables.

    Args:
        p: Counts per value.
        q: Counts per value.

    Returns:
        Half the L1 distance of the two normalized distributions, in [0, 1].
    """
    p_total, q_total = sum(p.values()), sum(q.values())
    keys = set(p) | set(q)
    return 0.5 * sum(abs(p.get(k, 0) / p_total - q.get(k, 0) / q_total) for k in keys)


def report_edges(source_path: Path) -> dict[str, npt.NDArray[np.int64]]:
    """The source's bins of each integer column, used to compare marginals.

    Args:
        source_path: The cleaned Adult CSV.

    Returns:
        Bin edges per integer column (``REPORT_BINS`` quantile bins, 0 alone for capital).
    """
    source = load_source(source_path)
    return {
        name: bin_edges(
            source.column(name).to_numpy().astype(np.int64),
            NumericSpec(name, REPORT_BINS, zero_bin=name.startswith("capital"), integer_pmf=True),
        )
        for name in COLUMNS
        if name in INT_COLUMNS
    }


def format_report(source: Profile, others: list[Profile]) -> str:
    """Render the report of the source and the generated files.

    Args:
        source: The source's statistics.
        others: Those of each generated file.

    Returns:
        The report text.
    """
    lines = [f"quasi-identifiers: {', '.join(QI_COLUMNS)}"]
    lines.append(
        f"{'file':<48} {'rows':>12} {'distinct QI':>12} {'distinct/rows':>13} "
        f"{'unique-QI rows':>15}"
    )
    for item in [source, *others]:
        lines.append(
            f"{str(item.path):<48} {item.rows:>12,} {item.distinct_qi:>12,} "
            f"{item.distinct_qi / item.rows:>13.2%} {item.unique_qi / item.rows:>15.2%}"
        )
    for item in others:
        lines.append(f"{item.path}: marginal total variation distance to the source")
        tvd = {
            name: total_variation(source.marginals[name], item.marginals[name]) for name in COLUMNS
        }
        lines.extend(f"  {name:<16} {value:.4f}" for name, value in tvd.items())
        lines.append(f"{item.path}: mutual information (bits), source -> file")
        lines.extend(
            f"  {a + ' / ' + b:<34} {source.mi[(a, b)]:.4f} -> {item.mi[(a, b)]:.4f}"
            for a, b in REPORT_PAIRS
        )
    return "\n".join(lines)


def report(source_path: Path, paths: list[Path]) -> str:
    """Measure the source and some generated files and render the comparison.

    Args:
        source_path: The cleaned Adult CSV.
        paths: Generated Parquet files.

    Returns:
        The report text.
    """
    edges = report_edges(source_path)
    return format_report(profile(source_path, edges), [profile(path, edges) for path in paths])


def main(argv: list[str] | None = None) -> int:
    """Run the command line interface.

    Args:
        argv: Arguments without the program name; ``sys.argv[1:]`` when None.

    Returns:
        The process exit code.
    """
    parser = argparse.ArgumentParser(
        description="Grow the Adult data set to any row count, deterministically, as Parquet "
        "(or, with --report, compare generated files with it)."
    )
    parser.add_argument("--rows", type=_args.positive_int, help="rows to write")
    parser.add_argument("--out", type=Path, help="Parquet file to write")
    parser.add_argument(
        "--method",
        choices=METHODS,
        default=DEFAULT_METHOD,
        help=f"model: sample a Bayesian network fitted to the source; copy: copy source rows "
        f"and jitter three columns (default {DEFAULT_METHOD})",
    )
    parser.add_argument(
        "--seed",
        type=_args.seed,
        default=DEFAULT_SEED,
        help=f"random seed (default {DEFAULT_SEED})",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help="cleaned Adult CSV to fit or resample (default: data/adult/adult.csv in this repo)",
    )
    parser.add_argument(
        "--chunk-rows",
        type=_args.positive_int,
        default=DEFAULT_CHUNK_ROWS,
        help=f"rows per chunk and row group; part of what fixes the output "
        f"(default {DEFAULT_CHUNK_ROWS})",
    )
    parser.add_argument(
        "--report",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="instead of generating, compare these Parquet files with the source",
    )
    args = parser.parse_args(argv)
    if args.report:
        if args.rows is not None or args.out is not None:
            parser.error("--report takes no --rows or --out")
        missing = [str(path) for path in args.report if not path.is_file()]
        if missing:
            parser.error(f"--report: no such file: {', '.join(missing)}")
        print(report(args.source, args.report))
        return 0
    if args.rows is None or args.out is None:
        parser.error("--rows and --out are required (or give --report FILE ...)")
    if args.out.is_dir():
        parser.error(f"--out {args.out} is a directory; give a file name")
    started = time.perf_counter()
    written = generate(args.source, args.out, args.rows, args.seed, args.chunk_rows, args.method)
    seconds = time.perf_counter() - started
    size_mib = args.out.stat().st_size / 2**20
    print(
        f"wrote {written:,} rows to {args.out} ({size_mib:.1f} MiB, method {args.method}) "
        f"in {seconds:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
