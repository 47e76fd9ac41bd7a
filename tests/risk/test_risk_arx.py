"""sparkanon.risk.arx: ARX's re-identification risk models, by hand and beside ARX itself.

Reference figures come from three places:
* hand-worked small tables (the arithmetic is in the comments);
* ARX itself (tests/data/arx_adult_risk.json: ARX built from commit aacd487f and run on
  small histograms and on data/adult/adult.csv, see that file's "produced_by");
* ARX's own test suite: TestRiskMetrics.testAverageRisk2 and testDecisionRule2 assert
  figures on ARX's data/adult.csv (30,162 rows, its nine attributes with hierarchies as
  quasi-identifiers); the class-size table of that file is written out below.
"""

from __future__ import annotations

import json
import math

import pytest

from experiments import exp_arx_agreement
from sparkanon.errors import UserError
from sparkanon.risk import arx
from tests._inputs import ROOT

REFERENCE = ROOT / "tests" / "data" / "arx_adult_risk.json"
HAND = {1: 2, 2: 1, 5: 1}  # n = 2*1 + 1*2 + 1*5 = 9 records, 4 classes


def close(ours, theirs, rel=1e-6):
    return ours == pytest.approx(theirs, rel=rel, abs=0.0)


# ----------------------------------------------------------------------- sample risks


def test_prosecutor_by_hand():
    r = arx.sample_risks(HAND, threshold=0.2)
    assert r["rows"] == 9 and r["classes"] == 4
    p = r["prosecutor"]
    assert p["highest"] == 1.0  # 1 / smallest class (1)
    assert p["lowest"] == 0.2  # 1 / largest class (5)
    assert p["average"] == 4 / 9  # classes / records
    # 1/f > 0.2 for f = 1 (2 records) and f = 2 (2 records); f = 5 gives 0.2, not > 0.2
    assert p["records_at_risk"] == 4 / 9
    assert r["sample_uniques"] == 2 / 9  # 2 records in classes of size 1
    # without a population table ARX's population is the sample: journalist = prosecutor
    assert r["journalist"] == p
    assert r["marketer"] == {"average": 4 / 9}
    assert r["population_source"] == "sample"


def test_threshold_is_strict_as_in_arx():
    # at 0.5 only 1/1 = 1 > 0.5; 1/2 = 0.5 is not above it
    assert arx.sample_risks(HAND, threshold=0.5)["prosecutor"]["records_at_risk"] == 2 / 9
    # at 1.0 nothing is above it
    assert arx.sample_risks(HAND, threshold=1.0)["prosecutor"]["records_at_risk"] == 0.0


def test_journalist_and_marketer_with_a_population_table_by_hand():
    # the two uniques sit in population classes of 4 and 1, the pair in one of 10,
    # the class of 5 is the whole population class
    population = {(1, 4): 1, (1, 1): 1, (2, 10): 1, (5, 5): 1}
    r = arx.sample_risks(HAND, threshold=0.2, population=population)
    j = r["journalist"]
    assert j["highest"] == 1.0  # 1 / smallest F (1)
    assert j["lowest"] == 0.1  # 1 / largest F (10)
    # 1/F > 0.2 for F = 4 (0.25) and F = 1: one record each -> 2/9
    assert j["records_at_risk"] == 2 / 9
    # sum f/F = 1/4 + 1/1 + 2/10 + 5/5 = 2.45; classes / sum F = 4 / 20 = 0.2
    # average = max(0.2, 2.45 / 9 = 0.27222)
    assert close(j["average"], 2.45 / 9)
    assert close(r["marketer"]["average"], 2.45 / 9)
    assert r["prosecutor"]["average"] == 4 / 9  # the prosecutor does not use F
    assert r["population_source"] == "table"


def test_journalist_average_takes_the_class_ratio_when_larger():
    # one class of 2 in a population class of 3 and one unique in a class of 1:
    # classes / sum F = 2 / 4 = 0.5; (1/n) sum f/F = (2/3 + 1) / 3 = 0.5556 -> 0.5556
    r = arx.sample_risks({1: 1, 2: 1}, population={(2, 3): 1, (1, 1): 1})
    assert close(r["journalist"]["average"], (2 / 3 + 1) / 3)
    # two uniques in population classes of 2: 2/4 = 0.5 vs (1/2 + 1/2)/2 = 0.5
    r = arx.sample_risks({1: 2}, population={(1, 2): 2})
    assert r["journalist"]["average"] == 0.5


def test_population_table_must_describe_the_sample():
    with pytest.raises(UserError, match="population"):
        arx.sample_risks(HAND, population={(1, 4): 2, (2, 10): 1})
    with pytest.raises(UserError, match="population"):
        arx.sample_risks({3: 1}, population={(3, 2): 1})  # F < f


def test_empty_table_gives_zeros_as_arx():
    r = arx.sample_risks({})
    assert r["rows"] == 0 and r["prosecutor"]["highest"] == 0.0
    assert r["marketer"]["average"] == 0.0 and r["sample_uniques"] == 0.0


# --------------------------------------------------------------- population uniqueness


def test_population_size_rounds_half_up_as_java():
    assert arx.population_size(9, 0.2) == 45
    assert arx.population_size(1, 0.4) == 3  # 2.5 -> 3 (Math.round), not 2
    assert arx.population_size(45222, 0.01) == 4522200


def test_zayatz_by_hand():
    # {1: 1, 2: 1}: n = 3, fraction 0.5 -> N = 6. h(j) = P(exactly one of a population
    # class of j records is among 3 drawn from 6): h(1) = 3/6 = 0.5,
    # h(2) = 2 * C(4,2) / C(6,3) = 12/20 = 0.6. P(pop. unique | sample unique)
    # = (1/2 * 0.5) / (1/2 * 0.5 + 1/2 * 0.6) = 5/11; uniques = 1 * 5/11 / (3/6) = 10/11;
    # share of the population = (10/11) / 6 = 5/33.
    r = arx.population_uniqueness({1: 1, 2: 1}, 0.5)
    assert r["population_size"] == 6
    assert close(r["zayatz"], 5 / 33, rel=1e-12)
    assert close(r["estimated_uniques"]["zayatz"], 10 / 11, rel=1e-12)


def test_fraction_one_gives_the_sample_uniques():
    # N = n: a sample unique is a population unique; Zayatz = c1 / N = 2/9, and Dankar's
    # rule (fraction > 0.1) takes min(Zayatz, SNB) = Zayatz.
    r = arx.population_uniqueness(HAND, 1.0)
    assert r["zayatz"] == 2 / 9 and r["sample_uniqueness"] == 2 / 9
    assert close(r["snb"], 2 / 9, rel=1e-8)
    assert r["dankar"] == 2 / 9 and r["dankar_model"] == "zayatz"


def test_no_sample_uniques_gives_zero_everywhere():
    r = arx.population_uniqueness({2: 3, 3: 1}, 0.1)
    assert [r[m] for m in ("pitman", "zayatz", "snb", "dankar")] == [0.0] * 4
    assert r["dankar_model"] is None and r["reasons"] == {}


def test_unsolved_snb_is_none_with_a_reason():
    # ARX's solver finds no SNB root for this table at 0.1 (it reports 0, unavailable)
    r = arx.population_uniqueness(HAND, 0.1)
    assert r["snb"] is None and "SNB" in r["reasons"]["snb"]
    assert r["dankar_model"] == "pitman" and r["dankar"] == r["pitman"]


def test_one_record_population_zayatz_is_undefined_as_in_arx():
    # commons-math's hypergeometric gives NaN for N = K = n = 1: ARX marks Zayatz
    # unavailable and Dankar's rule takes SNB (= 1: the one record is unique)
    r = arx.population_uniqueness({1: 1}, 1.0)
    assert r["zayatz"] is None and "zayatz" in r["reasons"]
    assert r["dankar_model"] == "snb" and close(r["dankar"], 1.0)


def test_empty_table_population_uniqueness_is_none():
    r = arx.population_uniqueness({}, 0.1)
    assert r["dankar"] is None and r["reasons"]["dankar"] == "the table has no records"


@pytest.mark.parametrize("fraction", [0, -0.1, 1.5, float("nan"), "abc", None])
def test_bad_sampling_fraction_names_it(fraction):
    with pytest.raises(UserError, match="sampling_fraction"):
        arx.population_uniqueness(HAND, fraction)
    with pytest.raises(UserError, match="sampling_fraction"):
        arx.summary(HAND, 0.2, fraction)


@pytest.mark.parametrize("threshold", [0, 1.01, -1, "x"])
def test_bad_threshold_names_it(threshold):
    with pytest.raises(UserError, match="threshold"):
        arx.sample_risks(HAND, threshold)


@pytest.mark.parametrize("table", [{0: 1}, {1: -2}, {1.5: 1}])
def test_bad_class_sizes_name_them(table):
    with pytest.raises(UserError, match="class_sizes"):
        arx.sample_risks(table)


# ------------------------------------------------------------------- beside ARX itself


def _reference():
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def test_small_histograms_match_arx():
    cases = _reference()["histograms"]
    assert len(cases) >= 8
    for case in cases:
        table = {int(k): v for k, v in case["class_sizes"].items()}
        r = arx.population_uniqueness(table, case["sampling_fraction"])
        assert r["population_size"] == case["population_size"]
        for model in ("pitman", "zayatz", "snb", "dankar"):
            if case["available"][model]:
                assert close(r[model], case[model], rel=1e-6), (case, model, r[model])
            else:
                assert r[model] is None, (case, model)
        theirs = case["dankar_model"].lower()
        assert r["dankar_model"] == (None if theirs == "dankar" else theirs)


def test_adult_agrees_with_arx_to_four_significant_digits():
    script = exp_arx_agreement
    rows = script.run(script.ROOT / "data" / "adult" / "adult.csv", REFERENCE)
    assert len(rows) == 58
    bad = [row for row in rows if not row["ok"]]
    assert not bad, bad


def test_agreement_check_can_fail():
    script = exp_arx_agreement
    assert script.agrees(0.12345, 0.12345)
    assert not script.agrees(0.1235, 0.1234)
    assert not script.agrees(0.1, 0.0, available=False)
    assert script.agrees(None, 0.0, available=False)


# ARX's data/adult.csv (the test data of ARX's own suite), classes on its nine attributes
# age, education, marital-status, native-country, occupation, race, salary-class, sex,
# workclass: {class size: number of classes} (computed from that file with pandas).
ARX_TEST_ADULT = {
    1: 15512, 2: 2098, 3: 754, 4: 375, 5: 189, 6: 155, 7: 97, 8: 73, 9: 39, 10: 37,
    11: 29, 12: 18, 13: 23, 14: 14, 15: 15, 16: 9, 17: 11, 18: 10, 19: 10, 20: 5, 21: 3,
    22: 4, 23: 3, 24: 2, 25: 1, 26: 3, 27: 5, 29: 1, 30: 2, 32: 1, 34: 1, 35: 1, 36: 1,
    45: 1,
}  # fmt: skip


def _arx_compare_uniqueness(a, b):
    """TestRiskMetrics.compareUniqueness: equal when truncated to 4 decimals."""
    return int(a * 10000) == int(b * 10000)


def test_arx_test_suite_average_risk():
    # TestRiskMetrics.testAverageRisk2: average risk before anonymization 0.6465751607983555
    r = arx.sample_risks(ARX_TEST_ADULT)
    assert sum(f * c for f, c in ARX_TEST_ADULT.items()) == 30162
    assert r["prosecutor"]["average"] == 0.6465751607983555
    assert r["prosecutor"]["highest"] == 1.0  # testHighestIndividualRisk2


@pytest.mark.parametrize(
    ("fraction", "expected", "model"),
    [
        (0.1, 0.27684993883653597, "pitman"),  # testDecisionRule2 (Pitman branch)
        (0.2, 0.3577099234829125, "zayatz"),
        (0.01, 0.1446083531167384, "pitman"),
        (1.0, 0.5142895033485844, "zayatz"),  # = sample uniqueness at fraction 1
    ],
)
def test_arx_test_suite_decision_rule(fraction, expected, model):
    r = arx.population_uniqueness(ARX_TEST_ADULT, fraction)
    assert _arx_compare_uniqueness(r["dankar"], expected)
    assert close(r["dankar"], expected, rel=1e-6)
    assert r["dankar_model"] == model
    # ARX also asserts population uniqueness <= sample uniqueness (4 decimals)
    assert int(r["dankar"] * 10000) <= int(r["sample_uniqueness"] * 10000)


# --------------------------------------------------------------------------- summary


def test_summary_is_json_and_combines_both():
    s = arx.summary(HAND, threshold=0.2, sampling_fraction=0.1)
    text = json.dumps(s, allow_nan=False)
    back = json.loads(text)
    assert set(back) == {
        "source", "threshold", "sampling_fraction", "rows", "classes", "population_source",
        "prosecutor", "journalist", "marketer", "sample_uniques", "population_uniqueness",
    }  # fmt: skip
    assert back["population_uniqueness"]["population_size"] == 90
    assert back["prosecutor"]["average"] == 4 / 9
    assert math.isclose(back["population_uniqueness"]["sample_uniqueness"], 2 / 9)
    assert set(back["population_uniqueness"]) == {
        "sampling_fraction", "population_size", "sample_uniqueness", "pitman", "zayatz",
        "snb", "dankar", "dankar_model", "estimated_uniques", "reasons",
    }  # fmt: skip


def test_string_keys_from_json_are_accepted():
    assert arx.sample_risks({"1": 2, "2": 1, "5": 1}) == arx.sample_risks(HAND)


def test_agreement_script_exits_1_on_a_disagreement(tmp_path, capsys):
    script = exp_arx_agreement
    assert script.main([]) == 0
    out = capsys.readouterr().out
    assert "58/58 figures agree" in out and "| A | dankar @ 0.01 |" in out
    doc = _reference()
    doc["cases"]["B"]["population_uniqueness"]["0.1"]["pitman"] *= 1.001  # 4th digit off
    bad = tmp_path / "ref.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert script.main(["--reference", str(bad)]) == 1
    assert "| B | pitman @ 0.1 |" in capsys.readouterr().out


@pytest.mark.parametrize("fraction", [0.01, 0.1])
def test_pitman_finite_sum_equations_reach_the_closed_form_root(fraction):
    # ARX falls back to the finite-sum score equations when the closed form fails; none
    # of the reference cases needs it, so check here that from ARX's initial guess both
    # forms reach one root and one estimate (on the table of ARX's own test suite)
    s = arx._Sample(ARX_TEST_ADULT, arx.population_size(30162, fraction))
    start = arx._pitman_start(s)
    closed = arx._newton(arx._pitman_master_closed(s), start, lambda x: x[0] >= 0)
    finite = arx._newton(arx._pitman_master_iterative(s), start, lambda x: x[0] >= 0)
    assert not math.isnan(closed[0]) and not math.isnan(finite[0])
    assert close(closed[0], finite[0], rel=1e-6) and close(closed[1], finite[1], rel=1e-6)
    ours = arx._pitman_result(finite, s.population) / s.population
    assert close(ours, arx.population_uniqueness(ARX_TEST_ADULT, fraction)["pitman"], rel=1e-6)
