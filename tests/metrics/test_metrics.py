"""Hand-worked examples for the entropies, PSI and quality metrics (Shi et al. 2024, eq. 1-2, 21-23;
Yang et al. 2014, eq. 14, 17-20).

Constants used below (worked out by hand):

* ``lg 2 = 0.30102999566``, so ``-0.5 lg 0.5 = 0.15051499783`` and
  ``-0.25 lg 0.25 = 0.25 * 2 lg 2 = 0.15051499783`` (the same number).
* ``-(1/3) lg(1/3) = lg(3) / 3 = 0.47712125472 / 3 = 0.15904041824``.
* ``-(2/3) lg(2/3) = (2/3) lg 1.5 = (2/3) * 0.17609125906 = 0.11739417271``.
* base 2: ``-0.5 log2 0.5 = 0.5``, ``-0.25 log2 0.25 = 0.5``, ``-0.125 log2 0.125 = 0.375``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sparkanon.attributes.hierarchy import Taxonomy
from sparkanon.attributes.kinds import ContinuousKind, categorical_kind, nominal_kind, ordinal_kind
from sparkanon.attributes.schema import CLASS, LEVEL, SENS, Schema, SensitiveLevels
from sparkanon.attributes.semantic import SemanticKind
from sparkanon.engine.local import LocalEngine
from sparkanon.families.blocks.measure import measure
from sparkanon.families.blocks.summarise import (
    HEAD,
    carried_columns,
    make_summary_fn,
    summary_reads,
    with_class_values,
)
from sparkanon.metrics.entropy import (
    ZERO_LOSS,
    best_by_psi,
    class_level_entropy,
    information_loss_rate,
    normalized_average_class_size,
    privacy_safety_index,
    sensitive_entropy,
    sensitive_level_entropy,
)
from sparkanon.metrics.ncp import class_ncp
from sparkanon.metrics.registry import ClassBatch, RunFacts, default_metrics
from sparkanon.publications import CentroidPublisher, GeneralizedPublisher
from sparkanon.publications.base import CLASS_VALUE_PREFIX
from sparkanon.publications.generalized import generalized_column
from tests._helpers import ClassView

H_HALF = 0.15051499783  # -0.5 lg 0.5
H_THIRD = 0.15904041824  # -(1/3) lg(1/3)
H_TWO_THIRDS = 0.11739417271  # -(2/3) lg(2/3)

# Levels low, middle, high of the seed's Disease example (section 1.4) with weights.
W_LMH = np.array([0.1, 0.4, 0.8])
# The Disease example's values by level: low {Flu, Fever}, middle {Hepatitis, Diabetes},
# high {HIV, Cancer}.
DISEASE = SensitiveLevels(
    "disease",
    ("Flu", "Fever", "Hepatitis", "Diabetes", "HIV", "Cancer"),
    np.array([0, 0, 1, 1, 2, 2]),
    ("low", "middle", "high"),
    W_LMH,
)


def job_metrics(classes: list[list[str]], x: list[list[float]] | None = None, k: int = 2) -> dict:
    """The job's metrics (summarise + measure stages, local engine) of hand-made classes.

    Args:
        classes: each class's sensitive values.
        x: each class's values of one continuous attribute on [0, 1] (zeros if omitted).
        k: the model's smallest class.
    """
    kind = ContinuousKind("x", 1.0, 0.0, 1.0)
    schema = Schema(kinds=(kind,), sensitive=DISEASE)
    index = {v: i for i, v in enumerate(DISEASE.values)}
    x = x or [[0.0] * len(c) for c in classes]
    frame = pd.DataFrame(
        {
            "_q0": [v for c in x for v in c],
            SENS: [index[v] for c in classes for v in c],
            CLASS: [i for i, c in enumerate(classes) for _ in c],
        }
    )
    frame[LEVEL] = DISEASE.level_of[frame[SENS]]
    frame["_block"] = 1
    publisher = CentroidPublisher(schema, [])
    registry = default_metrics(1)
    summaries = make_summary_fn(schema, 10.0, publisher, registry)(frame)
    facts = RunFacts(rows_out=len(frame), k=k, names=("x",), weights=(1.0,))
    return measure(LocalEngine(), summaries, registry, facts)


# ---------------------------------------------------------------------------
# eq. 1: level entropy
# ---------------------------------------------------------------------------


def test_level_entropy_base10_hand_values() -> None:
    got = sensitive_level_entropy(np.array([0.5, 0.25, 1 / 3, 2 / 3, 1.0]))
    assert got == pytest.approx([H_HALF, H_HALF, H_THIRD, H_TWO_THIRDS, 0.0], abs=1e-10)


def test_level_entropy_default_base_is_10() -> None:
    # The seed writes "lg": log base 10. 0.1 -> -0.1 * lg 0.1 = 0.1.
    assert float(sensitive_level_entropy(0.1)) == pytest.approx(0.1, abs=1e-12)


def test_level_entropy_base2_hand_values() -> None:
    got = sensitive_level_entropy(np.array([0.5, 0.25, 0.125, 1.0]), base=2.0)
    assert got == pytest.approx([0.5, 0.5, 0.375, 0.0], abs=1e-12)


def test_level_entropy_zero_share_is_zero_not_nan() -> None:
    with np.errstate(all="raise"):
        got = sensitive_level_entropy(np.array([0.0, 0.5]))
    assert not np.isnan(got).any()
    assert got[0] == 0.0
    assert got[1] == pytest.approx(H_HALF)


# ---------------------------------------------------------------------------
# eq. 2: HEC
# ---------------------------------------------------------------------------


def test_hec_table3_classes_base10() -> None:
    # Table 3, levels (low, middle, high) with weights (0.1, 0.4, 0.8):
    #   EC1 {HIV, Flu}        -> high 1, low 1  -> (0.8 + 0.1) * 0.150515 = 0.13546350
    #   EC2 {HIV, Hepatitis}  -> high 1, mid 1  -> (0.8 + 0.4) * 0.150515 = 0.18061800
    #   EC3 {Cancer, Fever}   -> high 1, low 1  -> 0.13546350
    #   EC4 {Diabetes, Flu}   -> mid 1, low 1   -> (0.4 + 0.1) * 0.150515 = 0.07525750
    counts = np.array([[1, 0, 1], [0, 1, 1], [1, 0, 1], [1, 1, 0]])
    got = class_level_entropy(counts, W_LMH)
    assert got.shape == (4,)
    assert got == pytest.approx([0.9 * H_HALF, 1.2 * H_HALF, 0.9 * H_HALF, 0.5 * H_HALF], abs=1e-10)
    assert got == pytest.approx([0.135463498, 0.180617997, 0.135463498, 0.075257499], abs=1e-8)
    # EPP (eq. 22) of Table 3: (0.9 + 1.2 + 0.9 + 0.5) / 4 * 0.150515 = 0.875 * 0.150515,
    # as the job computes it (per-class HEC in the summarise stage, the mean in measure).
    table3 = [["HIV", "Flu"], ["HIV", "Hepatitis"], ["Cancer", "Fever"], ["Diabetes", "Flu"]]
    assert job_metrics(table3)["EPP"] == pytest.approx(0.131700623, abs=1e-8)


def test_hec_single_class_scalar() -> None:
    # Counts (low 2, mid 1, high 1): shares 0.5, 0.25, 0.25 -> each term 0.150515;
    # HEC = (0.1 + 0.4 + 0.8) * 0.150515 = 1.3 * 0.150515 = 0.19566950.
    got = class_level_entropy(np.array([2, 1, 1]), W_LMH)
    assert np.ndim(got) == 0
    assert float(got) == pytest.approx(0.195669497, abs=1e-8)


def test_hec_three_levels_uneven() -> None:
    # Counts (low 1, mid 0, high 2): shares 1/3, 0, 2/3.
    # HEC = 0.1 * 0.159040 + 0.8 * 0.117394 = 0.0159040 + 0.0939153 = 0.1098194.
    got = float(class_level_entropy(np.array([1, 0, 2]), W_LMH))
    assert got == pytest.approx(0.1 * H_THIRD + 0.8 * H_TWO_THIRDS, abs=1e-10)
    assert got == pytest.approx(0.109819380, abs=1e-8)


def test_hec_five_levels_weights_01_to_08() -> None:
    # Five levels weighted 0.1, 0.2, 0.4, 0.6, 0.8; a class of 4 rows, one in each of
    # the first four levels: every share is 0.25, every term 0.150515, so
    # HEC = (0.1 + 0.2 + 0.4 + 0.6) * 0.150515 = 1.3 * 0.150515 = 0.1956695.
    w = np.array([0.1, 0.2, 0.4, 0.6, 0.8])
    assert float(class_level_entropy(np.array([1, 1, 1, 1, 0]), w)) == pytest.approx(
        0.195669497, abs=1e-8
    )
    # Base 2: every term is 0.5, HEC = 1.3 * 0.5 = 0.65.
    assert float(class_level_entropy(np.array([1, 1, 1, 1, 0]), w, base=2.0)) == pytest.approx(0.65)


def test_hec_base2() -> None:
    # {HIV, Flu}: (0.8 + 0.1) * 0.5 = 0.45.
    assert float(class_level_entropy(np.array([1, 0, 1]), W_LMH, base=2.0)) == pytest.approx(0.45)


def test_hec_homogeneous_and_empty_class_are_zero() -> None:
    got = class_level_entropy(np.array([[0, 0, 5], [0, 0, 0]]), W_LMH)
    assert got == pytest.approx([0.0, 0.0])
    assert not np.isnan(got).any()


def test_hec_scales_with_counts_not_totals() -> None:
    # Only shares matter: (2, 0, 2) has the same HEC as (1, 0, 1).
    a = float(class_level_entropy(np.array([2, 0, 2]), W_LMH))
    b = float(class_level_entropy(np.array([1, 0, 1]), W_LMH))
    assert a == pytest.approx(b)


# ---------------------------------------------------------------------------
# eq. 21: PSI and the choice of the best candidate
# ---------------------------------------------------------------------------


def test_psi_hand_values() -> None:
    # 0.3 * 0.13546350 + 0.7 / 2 = 0.04063905 + 0.35 = 0.39063905
    got = privacy_safety_index(np.array([0.9 * H_HALF]), np.array([2.0]), 0.3, 0.7)
    assert got == pytest.approx([0.390639050], abs=1e-8)
    # 0.5 * 0.2 + 0.5 / 0.5 = 1.1 ; 0.5 * 0.4 + 0.5 / 4 = 0.325
    got = privacy_safety_index(np.array([0.2, 0.4]), np.array([0.5, 4.0]), 0.5, 0.5)
    assert got == pytest.approx([1.1, 0.325])


def test_psi_zero_loss_is_infinite() -> None:
    got = privacy_safety_index(np.array([0.2, 0.3]), np.array([0.5, 0.0]), 0.5, 0.5)
    assert got[0] == pytest.approx(1.1)
    assert math.isinf(got[1]) and got[1] > 0


def test_psi_w2_zero_drops_loss_term() -> None:
    # With w2 = 0, PSI = w1 * HEC, even where InfoLoss = 0 (no inf, no nan).
    got = privacy_safety_index(np.array([0.2, 0.3]), np.array([0.0, 7.0]), 1.0, 0.0)
    assert np.isfinite(got).all()
    assert got == pytest.approx([0.2, 0.3])


def test_best_by_psi_plain_argmax() -> None:
    # PSI = 0.5 HEC + 0.5 / IL: [0.05 + 0.5, 0.1 + 0.25, 0.05 + 1.0] = [0.55, 0.35, 1.05]
    assert best_by_psi(np.array([0.1, 0.2, 0.1]), np.array([1.0, 2.0, 0.5]), 0.5, 0.5) == 2


def test_best_by_psi_entropy_can_win() -> None:
    # w1 = 0.9: [0.9 * 1.0 + 0.1 / 1, 0.9 * 0.1 + 0.1 / 0.5] = [1.0, 0.29]
    assert best_by_psi(np.array([1.0, 0.1]), np.array([1.0, 0.5]), 0.9, 0.1) == 0


def test_best_by_psi_zero_loss_wins_then_largest_hec() -> None:
    # Candidates 0 and 2 lose nothing (PSI = inf); of those 2 has the larger HEC.
    # Candidate 1 has the largest HEC overall but a positive loss.
    assert best_by_psi(np.array([0.1, 0.9, 0.3]), np.array([0.0, 1.0, 0.0]), 0.5, 0.5) == 2


def test_best_by_psi_zero_loss_tie_lowest_index() -> None:
    assert best_by_psi(np.array([0.5, 0.2, 0.2]), np.array([1.0, 0.0, 0.0]), 0.5, 0.5) == 1


def test_best_by_psi_near_zero_loss_counts_as_zero() -> None:
    # A loss at or below ZERO_LOSS is floating-point noise: treated as zero, and among
    # zero-loss candidates the larger HEC wins (a literal 1 / 1e-13 would win otherwise).
    il = np.array([ZERO_LOSS / 10, 0.0])
    assert best_by_psi(np.array([0.05, 0.1]), il, 0.5, 0.5) == 1


def test_best_by_psi_w2_zero_ignores_zero_loss_rule() -> None:
    # w2 = 0: PSI = w1 * HEC; the zero-loss candidate 0 has the lower HEC.
    assert best_by_psi(np.array([0.1, 0.2]), np.array([0.0, 1.0]), 1.0, 0.0) == 1


def test_best_by_psi_plain_tie_lowest_index() -> None:
    assert best_by_psi(np.array([0.2, 0.2, 0.2]), np.array([1.0, 1.0, 1.0]), 0.5, 0.5) == 0


# ---------------------------------------------------------------------------
# eq. 22-23: EPP and R_IL
# ---------------------------------------------------------------------------


def test_epp_is_none_without_declared_levels() -> None:
    # With levels: {HIV, Flu} is one high and one low row, HEC = (0.8 + 0.1) * 0.150515.
    assert job_metrics([["HIV", "Flu"]])["EPP"] == pytest.approx(0.9 * H_HALF, abs=1e-10)
    # Without declared levels every value sits in one implicit level: EPP is not reported.
    kind = ContinuousKind("x", 1.0, 0.0, 1.0)
    flat = SensitiveLevels("d", ("a", "b"), np.array([0, 0]), ("all",), np.array([0.5]), False)
    schema = Schema(kinds=(kind,), sensitive=flat)
    frame = pd.DataFrame({"_q0": [0.0, 1.0], SENS: [0, 1], LEVEL: [0, 0], CLASS: [0, 0]})
    registry = default_metrics(1)
    summaries = make_summary_fn(schema, 10.0, CentroidPublisher(schema, []), registry)(frame)
    facts = RunFacts(rows_out=2, k=2, names=("x",), weights=(1.0,), has_levels=False)
    assert measure(LocalEngine(), summaries, registry, facts)["EPP"] is None


def test_information_loss_rate() -> None:
    assert information_loss_rate(3.0, 6) == pytest.approx(0.5)
    assert information_loss_rate(2.5, 10) == pytest.approx(0.25)
    assert information_loss_rate(1.0, 0) == 0.0


# ---------------------------------------------------------------------------
# Yang et al. 2014, eq. 14, 17-20
# ---------------------------------------------------------------------------


def test_sensitive_entropy_base2() -> None:
    # {a, b}: 1 bit; {a, b, c, d}: 2 bits; {a, a, b, c}: 0.5 + 0.5 + 0.5 = 1.5; {a, a, a}: 0.
    got = sensitive_entropy(np.array([[1, 1, 0, 0], [1, 1, 1, 1], [2, 1, 1, 0], [3, 0, 0, 0]]))
    assert got == pytest.approx([1.0, 2.0, 1.5, 0.0])
    assert float(sensitive_entropy(np.array([1, 1, 1, 1, 1, 1, 1, 1]))) == pytest.approx(3.0)


def test_sensitive_entropy_uneven() -> None:
    # (1, 3): -(1/4) log2(1/4) - (3/4) log2(3/4) = 0.5 + 0.75 * 0.4150375 = 0.8112781
    assert float(sensitive_entropy(np.array([1, 3]))) == pytest.approx(0.811278124, abs=1e-8)


def test_average_information_loss_and_r_il() -> None:
    # One continuous attribute (|QI| = 1). Class A: x = 0, 0.5 (mean 0.25): IL = 0.5;
    # class B: x = 0, 0, 0.9 (mean 0.3): IL = 0.3 + 0.3 + 0.6 = 1.2.
    # AVG-IL = mean(0.5 / 2, 1.2 / 3) = (0.25 + 0.4) / 2 = 0.325; R_IL = 1.7 / 5 = 0.34.
    got = job_metrics([["Flu", "HIV"], ["Flu", "Fever", "HIV"]], x=[[0, 0.5], [0, 0, 0.9]])
    assert got["AVG_IL"] == pytest.approx(0.325)
    assert got["R_IL"] == pytest.approx(0.34)
    # NCP of A 0.5, of B 0.9: mean 0.7; GCP = (2 * 0.5 + 3 * 0.9) / (5 * 1) = 74 %.
    assert got["NCP"] == pytest.approx(0.7)
    assert got["GCP"] == pytest.approx(74.0)
    assert got["NCP_by_attribute"] == {"x": pytest.approx(74.0)}
    assert got["classes"] == 2 and got["class_size"] == {"min": 2, "median": 2.5, "max": 3}


def test_average_sensitive_entropy() -> None:
    # {Flu, HIV}: 1 bit; {Flu, Flu, Fever, HIV}: 0.5 + 0.5 + 0.5 = 1.5 bits; mean 1.25.
    got = job_metrics([["Flu", "HIV"], ["Flu", "Flu", "Fever", "HIV"]])
    assert got["AVG_Ent"] == pytest.approx(1.25)
    # CAVG = (6 rows / 2 classes) / k = 3 / 2.
    assert got["CAVG"] == pytest.approx(1.5)


def test_normalized_average_class_size() -> None:
    # Table 3: 8 rows, 4 classes, k = 2 -> (8 / 4) / 2 = 1.0
    assert normalized_average_class_size(8, 4, 2) == pytest.approx(1.0)
    # (10 / 3) / 2 = 1.6667
    assert normalized_average_class_size(10, 3, 2) == pytest.approx(5 / 3)
    assert normalized_average_class_size(10, 0, 2) == 0.0


# -- the summarise stage's batch of classes equals one view per class -------------------


@pytest.fixture(scope="module")
def every_kind_schema() -> Schema:
    """One quasi-identifier of every kind, with sensitivity levels."""
    paths = (
        ("a1", "A", "*"),
        ("a2", "A", "*"),
        ("b1", "B", "*"),
        ("b2", "B", "*"),
        ("c", "C", "*"),
    )
    taxonomy = Taxonomy(leaves=tuple(p[0] for p in paths), paths=paths, height=2)
    kinds = (
        ContinuousKind(name="age", weight=1.0, low=0.0, high=1.0),
        ordinal_kind("grade", 0.5, tuple(f"g{i}" for i in range(7)), centroid="median"),
        ordinal_kind("rank", 1.0, ("lo", "mid", "hi")),
        categorical_kind("place", 2.0, taxonomy),
        nominal_kind("sex", 1.0, ("F", "M", "X")),
        nominal_kind("race", 1.0, ("r0", "r1", "r2", "r3"), encoding="vector"),
        SemanticKind("zip", 1.0, length=4, beta=1.0, root_weight=0.0),
    )
    return Schema(kinds=kinds, sensitive=DISEASE)  # Shi et al. 2024, Table 1: 6 values, 3 levels


def _reference_terms(c: ClassView) -> dict[str, dict[str, float]]:
    """Every default metric's terms for one class, from the class's own rows (the oracle)."""
    hec = class_level_entropy(
        np.bincount(c.levels, minlength=c.sensitive.n_levels), c.sensitive.weights, 10.0
    )
    ncp = class_ncp(c.kinds, c.codes)
    return {
        "classes": {"size": float(c.size)},
        "EPP": {"value": float(hec)},
        "R_IL": {"loss": c.info_loss},
        "AVG_IL": {"value": c.info_loss / (c.size * len(c.kinds))},
        "AVG_Ent": {
            "value": float(
                sensitive_entropy(np.bincount(c.sens, minlength=len(c.sensitive.values)))
            )
        },
        "NCP": {"ncp": ncp, "penalty": c.size * ncp, "rows": float(c.size)},
        "CAVG": {"one": 1.0},
        "NCP_by_attribute": {f"a{i}": c.size * v for i, v in enumerate(c.ncp_by_attribute)},
    }


@pytest.mark.parametrize("seed", range(5))
def test_class_batch_equals_class_views(every_kind_schema: Schema, seed: int) -> None:
    schema = every_kind_schema
    rng = np.random.default_rng(seed)
    n = 400
    codes = [
        rng.random(n).round(2),  # repeated values: ties in ranges and centroids
        rng.integers(0, 7, n),
        rng.integers(0, 3, n),
        rng.integers(0, 5, n),
        rng.integers(0, 3, n),
        rng.integers(0, 4, n),
        rng.choice([1100, 1105, 1150, 2000, 2001, 9999], n),
    ]
    sens = rng.integers(0, 6, n)
    levels = schema.sensitive.level_of[sens]
    classes = rng.integers(0, 40, n) * 7 + 3  # sparse class ids, shuffled rows, sizes 1..
    ids, batch = ClassBatch.of_rows(
        schema.kinds, codes, classes, sens, levels, schema.sensitive, entropy_base=10.0
    )
    assert list(ids) == sorted(set(classes.tolist()))
    metrics = default_metrics(len(schema.kinds))
    centroids, generalized = CentroidPublisher(schema, []), GeneralizedPublisher(schema, [])
    batch_values = {**centroids.block_values(batch), **generalized.block_values(batch)}
    batch_terms = {m.name: m.block_terms(batch) for m in metrics}
    for j, class_id in enumerate(ids):
        rows = np.flatnonzero(classes == class_id)  # input order within the class
        view = ClassView(
            kinds=schema.kinds,
            codes=[c[rows] for c in codes],
            sens=sens[rows],
            levels=levels[rows],
            sensitive=schema.sensitive,
            entropy_base=10.0,
        )
        published = dict(zip(schema.code_columns, view.centroids, strict=True))
        published |= {
            generalized_column(i): kind.generalized(member_codes)
            for i, (kind, member_codes) in enumerate(zip(view.kinds, view.codes, strict=True))
        }
        for name, value in published.items():
            assert batch_values[name][j] == value, (name, class_id)  # published: exact
        for name, terms in _reference_terms(view).items():
            for term, value in terms.items():
                assert batch_terms[name][term][j] == pytest.approx(value, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("publisher_class", [CentroidPublisher, GeneralizedPublisher])
def test_rows_carrying_class_values_give_the_summary_table_and_the_join(publisher_class) -> None:
    """The per-block step's own summaries (with_class_values): the head rows are the summary
    table, every placed row carries its class's published values (what the join on class
    gave), and classless rows are neither heads nor summed."""
    kind = ContinuousKind("x", 1.0, 0.0, 1.0)
    schema = Schema(kinds=(kind,), sensitive=DISEASE)
    # Classes 7 and 3 interleaved, with two classless rows among them.
    frame = pd.DataFrame(
        {
            "_q0": [0.1, 0.9, 0.2, 0.5, 0.8, 0.3, 0.7],
            SENS: [0, 4, 1, 2, 5, 3, 4],
            CLASS: [7, 3, -1, 7, 3, 7, -1],
            "_rid": [10, 11, 12, 13, 14, 15, 16],
        }
    )
    frame[LEVEL] = DISEASE.level_of[frame[SENS]]
    frame["_block"] = 1
    publisher = publisher_class(schema, [])
    registry = default_metrics(1)
    summarise = make_summary_fn(schema, 10.0, publisher, registry)
    carried = with_class_values(
        frame.drop(columns=CLASS),
        {CLASS: frame[CLASS].to_numpy()},
        summarise,
        summary_reads(schema),
        publisher,
        registry,
    )
    expected = summarise(frame[frame[CLASS] >= 0]).set_index(CLASS).sort_index()
    heads = carried[carried[HEAD] == 1].set_index(CLASS).sort_index()
    assert heads.index.tolist() == [3, 7]
    terms = [c for c in expected.columns if c.startswith("m_")]
    pd.testing.assert_frame_equal(heads[terms], expected[terms])
    assert carried[HEAD].tolist() == [1, 1, 0, 0, 0, 0, 0]
    placed = carried[carried[CLASS] >= 0]
    joined = placed[[CLASS, "_rid"]].merge(expected.reset_index(), on=CLASS, how="left")
    want = publisher.make_row_fn()(joined)  # the join path's published rows
    assert len(want) == 5
    for name, _ in publisher.qi_columns():
        assert placed[CLASS_VALUE_PREFIX + name].tolist() == want[name].tolist()
    assert [c for c, _ in carried_columns(publisher, registry)] == list(
        carried.columns[len(frame.columns) :]
    )
