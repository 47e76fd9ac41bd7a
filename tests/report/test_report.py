"""The HTML report of an evaluation dict: sections per family shape, privacy, determinism."""

from __future__ import annotations

import html
import json
import re

import pytest

from scripts import check_report
from sparkanon.report import render_html, write_report
from sparkanon.report.html import (
    SECTIONS,
    allowed_names,
    fmt_value,
    is_histogram,
    prosecutor_summary,
    risk_buckets,
    size_buckets,
    verdict,
)
from tests._report import SHAPES, not_computed, one_table, perturbed, raw_input, synthetic


def _section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}"')
    return page[start : page.index("</section>", start)]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_section_present_for_each_shape(shape):
    page = render_html(SHAPES[shape]())
    for name in SECTIONS:
        assert page.count(f'<section id="{name}"') == 1, name
    assert page.startswith("<!DOCTYPE html>")
    assert check_report.remote_references(page) == []
    assert "<script" not in page
    # the two risk plots are always there (class sizes and risk distribution)
    risk = _section(page, "risk")
    assert "Class-size histogram" in risk and "Risk distribution" in risk


def test_one_table_shows_before_and_after_side_by_side():
    page = render_html(one_table())
    risk = _section(page, "risk")
    assert "before (input)" in risk and "after (release)" in risk
    # class sizes {1: 300, 2: 100, 3: 50, 10: 20, 200: 1} -> 1050 rows, 471 classes
    assert "<td>1,050</td>" in risk and "<td>471</td>" in risk
    summary = _section(page, "summary")
    assert 'class="warnings"' in summary and "3 classes of the release" in summary
    # the verdict: smallest class after is 5, highest risk 1/5; before: 300 uniques
    assert "Within the risk threshold" in summary
    assert "shares its quasi-identifiers with at least 4 others" in summary
    assert "highest chance of re-identifying a record is 20%" in summary
    assert "Before anonymization the highest chance was 100% and 300 records" in summary
    attacks = _section(page, "attacks")
    assert "Homogeneity attack" in attacks and "Expected matching rate" in attacks
    assert "15 records (5% of all) in 3 classes" in attacks
    assert "2% of the records in 1 class<" in attacks  # similarity: a share, one class
    utility = _section(page, "utility")
    assert "marital-status" in utility and "Accuracy on held-out originals" in utility
    assert "No family-specific figures for the one table family" in _section(page, "family")


def test_perturbed_release_plots_its_reconstruction():
    page = render_html(perturbed())
    family = _section(page, "family")
    assert "age: reconstructed distribution" in family
    assert "sex: reconstructed distribution" in family
    assert family.count('<svg class="plot"') == 2
    assert "Per-label reconstructions for 2 labels" in family
    assert "stopped by chi square" in family  # how the Bayes iteration stopped
    assert "Singling out (univariate predicates)" in _section(page, "attacks")


def test_synthetic_release_shows_covariance_heatmaps():
    page = render_html(synthetic())
    family = _section(page, "family")
    for title in ("Original covariance", "Synthetic covariance", "Synthetic minus original"):
        assert title in family
    assert family.count('<svg class="plot"') == 3
    assert "hours-per-week" in family


def test_raw_input_has_risk_only():
    page = render_html(raw_input())
    risk = _section(page, "risk")
    assert "evaluated table" in risk and "before (input)" not in risk
    assert 'class="no-warnings"' in _section(page, "summary")
    assert "No distribution distances" in _section(page, "utility")
    assert "No classification measure" in _section(page, "utility")
    assert "No family-specific figures" in _section(page, "family")


def _visible_text(page: str) -> str:
    """The page's text as read: no style, no collapsed raw figures, tags as spaces."""
    text = re.sub(r"<style>.*?</style>", " ", page, flags=re.DOTALL)
    text = re.sub(r"<details>.*?</details>", " ", text, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def _keys(ev, parent=""):
    """Every key of the evaluation, and every ``parent.key`` pair of nested keys."""
    if isinstance(ev, dict):
        for k, v in ev.items():
            yield str(k)
            if parent:
                yield f"{parent}.{k}"
            yield from _keys(v, str(k))
    elif isinstance(ev, list):
        for v in ev:
            yield from _keys(v, parent)


def _raw_keys_on(page: str, ev: dict) -> list[str]:
    """Raw keys, scientific-notation numbers and key: value dumps in the page's text."""
    text = _visible_text(page)
    allowed = allowed_names(ev)
    found = []
    for key in sorted(set(_keys(ev)) - allowed):
        if re.fullmatch(r"[\d.]+", key) or not ("_" in key or "." in key):
            continue
        if re.search(rf"(?<![\w.-]){re.escape(key)}(?![\w-])", text):
            found.append(f"raw key {key!r}")
    # a plain-word key as a row or column label (labels are words: "Records", not "records")
    for cell in re.findall(r"<th[^>]*>([^<]*)<", page):
        if cell.strip() in set(_keys(ev)) - allowed:
            found.append(f"raw key {cell.strip()!r} as a label")
    found += [f"scientific {m.group()!r}" for m in re.finditer(r"\d(\.\d+)?e[+-]\d+", text)]
    dumps = re.finditer(r"\b[a-z_]+: -?[\d.,]+%?\s*,?\s*[a-z_]+: -?[\d.,]+", text)
    found += [f"key: value dump {m.group()!r}" for m in dumps]
    return found


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_no_raw_key_or_scientific_count_on_the_page(shape):
    ev = SHAPES[shape]()
    assert _raw_keys_on(render_html(ev), ev) == []


def test_the_scan_finds_what_it_looks_for():
    ev = one_table()
    page = render_html(ev)
    for bad, what in (
        ("population_uniqueness", "raw key 'population_uniqueness'"),
        ("individual.histogram", "raw key 'individual.histogram'"),
        ("<th>pitman</th>", "raw key 'pitman' as a label"),
        ("1.467e+04 expected", "scientific '1.467e+04'"),
        ("records: 0, classes: 0, share: 0", "key: value dump 'records: 0, classes: 0"),
    ):
        spoilt = page.replace("</main>", f"<p>{bad}</p></main>")
        assert any(f.startswith(what) for f in _raw_keys_on(spoilt, ev)), bad
    # inside the collapsed raw figures the keys are expected
    assert "population_uniqueness" in _section(page, "raw")


def test_raw_figures_are_one_click_away():
    ev = one_table()
    raw = _section(render_html(ev), "raw")
    assert raw.count("<details>") == 1 and "<details open" not in raw
    shown = json.loads(html.unescape(raw.split('<pre class="raw">')[1].split("</pre>")[0]))
    assert shown["risk"]["after"]["sdcmicro"] == ev["risk"]["after"]["sdcmicro"]
    assert shown["attacks"]["homogeneity"] == ev["attacks"]["homogeneity"]


def test_not_computed_measures_and_formats():
    ev = not_computed()
    page = render_html(ev)
    summary = _section(page, "summary")
    assert "Not computed: Skewness attack &mdash; the sensitive attribute has one value" in summary
    assert "Not computed: SUDA2 &mdash; SUDA2 is off in the config" in summary
    assert "No class discloses its sensitive value outright" in summary
    attacks = _section(page, "attacks")
    assert "not computed (the sensitive attribute has one value)" in attacks
    assert "<td>none</td>" in attacks  # homogeneity found nothing
    sdc = _section(page, "sdc")
    assert "<td>not computed (SUDA2 is off in the config)</td>" in sdc  # after; before has it
    assert "<td>14,670.3</td>" in sdc and "<td>0.003%</td>" in sdc
    assert "12,345.7" in _section(page, "risk")
    assert "not computed (no root)" in _section(page, "risk")  # SNB, its reason beside it
    utility = _section(page, "utility")
    assert "<td>1,651,158</td>" in utility and "NCP of age" in utility
    assert "unlabelled_loss" not in utility and "unlabelled_loss" in _section(page, "raw")
    # an unknown measure is named by no key
    ev["not_computed"].append({"measure": "attacks.new_attack", "reason": "later"})
    summary = _section(render_html(ev), "summary")
    assert "new_attack" not in summary and "without a label" in summary


def test_verdict_follows_the_figures():
    ev = raw_input()  # 300 uniques of 650 records, threshold 10%
    head, sentences = verdict(ev)
    assert head.startswith("Above the risk threshold: 650 records (100%)")
    assert sentences[0].startswith("300 records (46.2%) are unique")
    ev["risk"]["after"]["class_sizes"] = {"12": 10}
    head, sentences = verdict(ev)
    assert head.startswith("Within the risk threshold")
    assert "at least 11 others" in sentences[0] and "8.33%" in sentences[0]


def test_formats():
    assert fmt_value(14670.3, "count") == "14,670.3"
    assert fmt_value(14670.0, "count") == "14,670"
    assert fmt_value(0.0000321, "pct") == "0.003%"
    assert fmt_value(0.324355, "pct") == "32.4%"
    assert fmt_value(1.0, "pct") == "100%"
    assert fmt_value(1e-9, "pct") == "less than 0.001%"
    assert fmt_value(1651158.0) == "1,651,158"
    assert fmt_value(0.41) == "0.41"
    assert fmt_value(None, "pct", "no root") == "not computed (no root)"


@pytest.mark.parametrize(
    "drop",
    ["table", "view", "risk", "attacks", "anonymeter", "utility", "family", "warnings"],
)
def test_missing_optional_parts_render(drop):
    ev = perturbed()
    del ev[drop]
    page = render_html(ev)
    for name in SECTIONS:
        assert f'<section id="{name}"' in page


def test_nulls_and_empty_parts_render():
    ev = one_table()
    ev["risk"]["before"]["arx"] = None
    ev["risk"]["after"] = {"rows": 0, "classes": 0, "class_sizes": {}}
    ev["utility"] = {"distance": {"age": {"tvd": None, "bins": 20}}, "classification": None}
    ev["family"] = {"name": "synthesis", "covariance": {"original": [[1.0]], "synthetic": "x"}}
    page = render_html(ev)
    assert "not square" in _section(page, "family")
    assert render_html({"schema": 1}).count("<section ") == len(SECTIONS)


def test_unknown_schema_is_refused():
    with pytest.raises(ValueError, match="schema 2"):
        render_html({"schema": 2})
    with pytest.raises(ValueError, match="expected a dict"):
        render_html([1, 2])  # type: ignore[arg-type]


SENTINEL = "SENTINELVALUE"


def _salted() -> dict:
    """Every place a data value could sit in the dict carries a sentinel."""
    ev = perturbed()
    rec = ev["family"]["reconstruction"]
    rec["labels"] = {f"{SENTINEL}_label_a": 600, f"{SENTINEL}_label_b": 400}
    values = [f"{SENTINEL}_v0", f"{SENTINEL}_v1"]
    sex = rec["columns"]["sex"]
    sex["values"] = values
    sex["noise"]["values"] = values
    sex["all"]["values"] = values
    sex["all"]["categorical_ibu"]["values"] = values
    sex["by_label"] = {f"{SENTINEL}_label_a": sex["all"]}
    ev["attacks"]["homogeneity"]["values"] = {f"{SENTINEL}_sens": 3}
    ev["attacks"]["homogeneity"]["examples"] = [f"{SENTINEL}_row"]
    ev["attacks"]["similarity"]["value_counts"] = {f"{SENTINEL}_k": 1}
    ev["attacks"]["skewness"]["top"] = [f"{SENTINEL}_a", f"{SENTINEL}_b"]  # texts, not names
    ev["anonymeter"]["inference"]["guesses"] = [f"{SENTINEL}_g"]
    ev["anonymeter"]["inference"]["targets"] = f"{SENTINEL}_t"
    ev["risk"]["after"]["sdcmicro"]["records"] = [{"age": f"{SENTINEL}_age"}]
    # level names from the config may be printed: a positive control
    ev["view"]["level_names"] = ["LEVELNAME_high", "LEVELNAME_low"]
    ev["attacks"]["similarity"]["levels"] = ["LEVELNAME_high", "LEVELNAME_low"]
    return ev


def test_no_data_value_reaches_the_report():
    page = render_html(_salted())
    assert SENTINEL not in page
    # the redacted entries are announced, not silently dropped
    assert "not shown (data values)" in page
    # positive controls: column names and config level names are printed
    assert "LEVELNAME_high, LEVELNAME_low" in page
    assert '"LEVELNAME_high",' in html.unescape(_section(page, "raw"))
    for name in ("age", "sex", "occupation", "marital-status"):
        assert name in page


def test_text_is_escaped():
    evil = "<script>alert(1)</script>"
    ev = synthetic()
    ev["view"]["quasi_identifiers"] = [evil, "sex"]
    ev["utility"]["distance"][evil] = {"tvd": 0.1, "bins": 2}
    ev["family"]["covariance"]["columns"] = [evil, "b", "c"]
    ev["table"]["source"] = f"out/{evil}"
    ev["warnings"] = [evil]
    ev["attacks"][evil] = {evil: 1.0, "note": evil}
    page = render_html(ev)
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_output_is_deterministic(shape):
    assert render_html(SHAPES[shape]()) == render_html(SHAPES[shape]())


def test_write_report_is_atomic(tmp_path):
    path = tmp_path / "report.html"
    write_report(one_table(), str(path))
    first = path.read_text(encoding="utf-8")
    assert first == render_html(one_table())
    with pytest.raises(ValueError):
        write_report({"schema": 9}, str(path))
    assert path.read_text(encoding="utf-8") == first  # a refused dict leaves the old file
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary left
    with pytest.raises(OSError):
        write_report(one_table(), str(tmp_path / "missing" / "report.html"))


def test_prosecutor_figures_from_class_sizes():
    # 3 classes of 1, 2 of 2, 1 of 5: 12 rows, 6 classes
    s = prosecutor_summary({"1": 3, "2": 2, "5": 1}, threshold=0.2)
    assert s["rows"] == 12 and s["classes"] == 6 and s["uniques"] == 3
    assert s["highest"] == 1.0 and s["average"] == pytest.approx(6 / 12)
    assert s["at_risk"] == pytest.approx(7 / 12)  # risk 1 and 1/2 above 0.2; 1/5 is not
    labels, shares = risk_buckets({"1": 3, "2": 2, "5": 1})
    assert sum(shares) == pytest.approx(1.0)
    assert shares[0] == pytest.approx(3 / 12) and shares[1] == pytest.approx(4 / 12)
    assert shares[labels.index("10-20%")] == pytest.approx(5 / 12)
    labels, counts = size_buckets({"1": 3, "2": 2, "5": 1, "5000": 2})
    assert counts[labels.index("1")] == 3 and counts[labels.index(">1000")] == 2
    assert sum(counts) == 8
    empty = prosecutor_summary({}, 0.2)
    assert empty["rows"] == 0 and empty["highest"] is None


def test_histogram_detection():
    assert is_histogram({"edges": [0, 1, 2], "counts": [3, 4]})
    assert not is_histogram({"edges": [0, 1], "counts": [3, 4]})
    assert not is_histogram({"edges": [0, float("inf")], "counts": [3]})
    assert not is_histogram({"edges": ["a", "b"], "counts": [1]})


def test_network_check_finds_remote_loads():
    for bad in (
        '<img src="https://example.org/x.png">',
        "<link href='//cdn.example.org/a.css'>",
        "<style>body{background:url(http://example.org/b.png)}</style>",
        '<style>@import "https://example.org/c.css";</style>',
    ):
        assert check_report.remote_references(bad), bad
    assert check_report.remote_references('<a href="#risk">risk</a>') == []
    page = render_html(synthetic())
    assert check_report.declared_plots(page) == len(re.findall(r"<svg ", page)) == 10


def test_threat_model_lists_the_attacks_run():
    ev = one_table()
    threat = _section(render_html(ev), "threat")
    assert "every file of every release" in threat and "docs/threat-model.md" in threat
    assert threat.count("<tr><td>") == len(ev["attacks_run"])
    assert "withstood" in threat and "not checked</td>" in threat
    ev["attacks_run"][0]["passed"] = False
    assert "<td>succeeded</td>" in _section(render_html(ev), "threat")
    del ev["attacks_run"]
    assert "No attack on this release was recorded" in _section(render_html(ev), "threat")


def test_threat_model_says_where_the_key_came_from():
    ev = one_table()
    assert "drawn from the operating system for this run and not kept" in _section(
        render_html(ev), "threat"
    )
    ev["randomness"] = {"key": "user", "label": "audit-2026"}
    threat = _section(render_html(ev), "threat")
    assert "labelled &#x27;audit-2026&#x27;" in threat or "labelled 'audit-2026'" in threat
    assert "undo its protection" in threat
    del ev["randomness"]
    assert "does not record where" in _section(render_html(ev), "threat")
