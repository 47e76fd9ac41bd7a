"""The HTML report of an evaluation dict (schema 1 of ``evaluation.json``).

One self-contained file a privacy officer can read: inline CSS, inline SVG plots
(:mod:`sparkanon.report.svg`), no script, no font, no stylesheet or image to load.

**What it shows** (one ``<section>`` each, ids in :data:`SECTIONS`): a summary that opens
with a verdict in words derived from the figures (:func:`verdict`), the measures not
computed and the warnings; then one table per concept, each figure a row of (human label,
formatted value, one-line meaning): re-identification risk before and after, sdcMicro and
SUDA2, the attacks, the threat model with the attacks run on the release before its commit
(``attacks_run``), utility, the family's own figures (reconstructed distributions of a
perturbed release, covariance heatmaps of a condensed one), the glossary with its sources,
and last the whole evaluation as JSON in a collapsed ``<details>`` block.

**Labels.** Every figure shown has its label and meaning in
:data:`sparkanon.report.glossary.LABELS`; a figure without one is not shown with its key
in the tables, only in the collapsed raw figures. Counts are written with thousands
separators (a fractional expected count with one decimal), shares and probabilities as
percentages, a missing figure as "not computed" with its reason when the evaluation gives
one (``reasons`` beside it, or the top-level ``not_computed`` list).

**Privacy.** The dict holds aggregates only; the report adds two defences. Every text is
HTML-escaped. And no categorical value label from the data is printed, not even in the raw
figures (:func:`redacted`): the entries under a key of :data:`REDACTED_KEYS` (``values``,
``by_label``, ...) are counted, not shown; lists of texts are shown only when every text is
a column name or a level name from the config (:func:`allowed_names`); a reconstructed
categorical distribution is labelled by the values' positions, not the values. Small
classes appear as counts of classes and records, never as rows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from sparkanon.report import svg
from sparkanon.report.glossary import GLOSSARY, LABELS, SOURCES, label_of
from sparkanon.report.svg import esc

SECTIONS = (
    "summary",
    "risk",
    "sdc",
    "attacks",
    "threat",
    "utility",
    "family",
    "glossary",
    "raw",
)
"""The ids of the report's sections, in order (the browser check looks for each)."""

_TITLES = (
    "Summary",
    "Risk",
    "sdcMicro / SUDA2",
    "Attacks",
    "Threat model",
    "Utility",
    "Family",
    "Glossary",
    "All figures",
)

REDACTED_KEYS = frozenset(
    {
        "values",
        "value_counts",
        "top_values",
        "by_label",
        "labels",
        "examples",
        "example",
        "records",
        "rows_sample",
        "sample_rows",
        "secrets",
        "guesses",
        "targets",
        "transition_matrix",
    }
)
"""Keys whose texts, lists and dicts may hold data values: counted in the report, not shown.
(A number under such a key is shown.)"""

RISK_BUCKETS: tuple[float, ...] = (1.0, 0.5, 1 / 3, 0.25, 0.2, 0.1, 0.05, 0.01, 0.0)
"""Prosecutor risk bucket edges, high to low: a record is in ``(lo, hi]`` (the first: = 1)."""

SIZE_BUCKETS: tuple[tuple[int, int | None], ...] = (
    (1, 1),
    (2, 2),
    (3, 3),
    (4, 4),
    (5, 5),
    (6, 10),
    (11, 20),
    (21, 50),
    (51, 100),
    (101, 1000),
    (1001, None),
)
"""Class-size buckets ``(smallest, largest or None)`` of the class-size histogram."""

_MAX_LIST = 12
_MAX_TEXT = 160
NOT_COMPUTED = "not computed"

# --------------------------------------------------------------------------- formatting


def fmt_value(value: Any, style: str = "num", reason: str | None = None) -> str:
    """A figure as text, never in scientific notation.

    Args:
        value: the figure.
        style: ``pct`` (a share or probability of 1, as a percentage), ``count`` or
            ``int`` (thousands separators; a fractional count with one decimal), ``num``
            (at most 3 decimals; 1,000 and above as a count) or ``text``.
        reason: why a missing figure is missing (shown after "not computed").

    Returns:
        The text: ``None`` and NaN read "not computed", with the reason when given.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return f"{NOT_COMPUTED} ({reason})" if reason else NOT_COMPUTED
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not _is_number(value):
        return str(value)
    x = float(value)
    if math.isinf(x):
        return "infinite" if x > 0 else "minus infinite"
    if style == "pct":
        return _pct(x)
    if style in ("count", "int"):
        return _count(x)
    if style == "num" and isinstance(value, int):
        return f"{value:,}"
    return _num(x)


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _pct(x: float) -> str:
    """A share of 1 as a percentage: 1 decimal from 10%, 2 from 0.1%, 3 below."""
    p = 100 * x
    if p == 0:
        return "0%"
    if abs(p) >= 10:
        return f"{_trim(f'{p:,.1f}')}%"
    if abs(p) >= 0.1:
        return f"{_trim(f'{p:.2f}')}%"
    if abs(p) >= 0.001:
        return f"{_trim(f'{p:.3f}')}%"
    return "less than 0.001%" if p > 0 else "more than -0.001%"


def _count(x: float) -> str:
    """A count: ``14,670``; a fractional one with one decimal: ``14,670.3``."""
    x = float(x)
    if x.is_integer():
        return f"{int(x):,}"
    return f"{x:,.1f}"


def _num(x: float) -> str:
    """A distance, score or loss: at most 3 decimals; from 1,000 on, a whole number."""
    if abs(x) >= 1000:
        return _count(round(x, 1)) if not x.is_integer() else f"{int(x):,}"
    text = _trim(f"{x:.3f}")
    if text in ("0", "-0") and x != 0:
        return "less than 0.001" if x > 0 else "more than -0.001"
    return text


def _plural(n: float, noun: str) -> str:
    """``1 record``, ``2 records``, ``1 class``, ``6 classes`` (the count formatted)."""
    if n == 1:
        return f"1 {noun}"
    return f"{_count(n)} {noun}es" if noun.endswith("s") else f"{_count(n)} {noun}s"


def _verb(n: float, one: str, many: str) -> str:
    return one if n == 1 else many


def _words(text: Any) -> str:
    """A code name (``naive_bayes``) as words (``naive bayes``)."""
    return str(text).replace("_", " ")


def flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}`` (scalars and lists; histograms kept whole)."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        path = f"{prefix}{k}"
        if isinstance(v, Mapping) and not is_histogram(v):
            out.update(flatten(v, path + "."))
        else:
            out[path] = v
    return out


def is_histogram(v: Any) -> bool:
    """Whether ``v`` is ``{"edges": [k + 1 numbers], "counts": [k numbers], ...}``."""
    if not isinstance(v, Mapping):
        return False
    edges, counts = v.get("edges"), v.get("counts")
    return (
        isinstance(edges, list)
        and isinstance(counts, list)
        and len(counts) >= 1
        and len(edges) == len(counts) + 1
        and all(_is_number(x) for x in edges + counts)
        and all(math.isfinite(float(x)) for x in edges)
    )


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def allowed_names(evaluation: Mapping[str, Any]) -> frozenset[str]:
    """The texts the report may print inside lists: column names and config level names.

    Read from ``view`` (``quasi_identifiers``, ``sensitive``, ``known``, ``level_names``),
    ``utility.distance`` keys and ``utility.classification.target``,
    ``family.covariance.columns`` and ``family.reconstruction.columns`` keys.
    """
    view = _dict(evaluation.get("view"))
    names: set[str] = set(_strs(view.get("quasi_identifiers")))
    if isinstance(view.get("sensitive"), str):
        names.add(view["sensitive"])
    for group in view.get("known") or []:
        names.update(_strs(group))
    names.update(_strs(view.get("level_names")))
    utility = _dict(evaluation.get("utility"))
    names.update(str(k) for k in _dict(utility.get("distance")))
    target = _dict(utility.get("classification")).get("target")
    if isinstance(target, str):
        names.add(target)
    family = _dict(evaluation.get("family"))
    names.update(_strs(_dict(family.get("covariance")).get("columns")))
    names.update(str(k) for k in _dict(_dict(family.get("reconstruction")).get("columns")))
    return frozenset(names)


def _strs(v: Any) -> list[str]:
    return [x for x in v if isinstance(x, str)] if isinstance(v, (list, tuple)) else []


def _dict(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


# --------------------------------------------------------------------------- risk figures


def class_size_table(class_sizes: Mapping[str, Any] | None) -> list[tuple[int, int]]:
    """``{"1": 3, "2": 5}`` -> ``[(1, 3), (2, 5)]`` sorted, empty classes dropped."""
    out = []
    for k, v in _dict(class_sizes).items():
        try:
            size, count = int(k), int(v)
        except (TypeError, ValueError):
            continue
        if size >= 1 and count > 0:
            out.append((size, count))
    return sorted(out)


def prosecutor_summary(class_sizes: Mapping[str, Any] | None, threshold: float) -> dict[str, Any]:
    """Prosecutor risk figures from a class-size frequency table (ARX's definitions).

    Args:
        class_sizes: ``{size: classes of that size}`` (string keys, as in JSON).
        threshold: a record is at risk when its risk ``1 / size`` is above it.

    Returns:
        ``rows``, ``classes``, ``at_risk_records`` (records above the threshold),
        ``highest`` (1 / the smallest size), ``average`` (classes / rows), ``at_risk`` (their
        share), ``uniques`` (records alone in their class) and ``uniques_share``; all
        ``None`` for an empty table.
    """
    table = class_size_table(class_sizes)
    rows = sum(f * n for f, n in table)
    classes = sum(n for _, n in table)
    if rows == 0:
        keys = ("highest", "average", "at_risk", "uniques_share")
        return {"rows": 0, "classes": 0, "uniques": 0, "at_risk_records": 0} | dict.fromkeys(keys)
    uniques = sum(n for f, n in table if f == 1)
    return {
        "rows": rows,
        "classes": classes,
        "at_risk_records": sum(f * n for f, n in table if 1.0 / f > threshold),
        "highest": 1.0 / table[0][0],
        "average": classes / rows,
        "at_risk": sum(f * n for f, n in table if 1.0 / f > threshold) / rows,
        "uniques": uniques,
        "uniques_share": uniques / rows,
    }


def risk_buckets(class_sizes: Mapping[str, Any] | None) -> tuple[list[str], list[float]]:
    """Share of records per prosecutor risk bucket (:data:`RISK_BUCKETS`): labels, shares."""
    table = class_size_table(class_sizes)
    rows = sum(f * n for f, n in table) or 1
    labels, shares = [], []
    for i, hi in enumerate(RISK_BUCKETS[:-1]):
        lo = RISK_BUCKETS[i + 1]
        if i == 0:
            labels.append("100%")
            inside = [(f, n) for f, n in table if f == 1]
        else:
            labels.append(f"{100 * lo:.0f}-{100 * hi:.0f}%" if lo > 0 else f"<={100 * hi:.0f}%")
            inside = [(f, n) for f, n in table if lo < 1.0 / f <= hi and f > 1]
        shares.append(sum(f * n for f, n in inside) / rows)
    return labels, shares


def size_buckets(class_sizes: Mapping[str, Any] | None) -> tuple[list[str], list[int]]:
    """Number of classes per class-size bucket (:data:`SIZE_BUCKETS`): labels, counts."""
    table = class_size_table(class_sizes)
    labels, counts = [], []
    for lo, hi in SIZE_BUCKETS:
        labels.append(str(lo) if lo == hi else f"{lo}-{hi}" if hi else f">{lo - 1}")
        counts.append(sum(n for f, n in table if f >= lo and (hi is None or f <= hi)))
    return labels, counts


# --------------------------------------------------------------------------- figure tables


def _figure(svg_text: str, caption: str = "") -> str:
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure class="plot-box">{svg_text}{cap}</figure>'


def _na(what: str) -> str:
    return f'<p class="na">{esc(what)}</p>'


Row = tuple[str, str, Sequence[str]]
"""``(label, meaning, one formatted value per column)``."""


def _table(titles: Sequence[str], rows: Sequence[Row]) -> str:
    """One table of figures: a row per figure (label, meaning under it), a value column each."""
    if not rows:
        return ""
    head = "".join(f"<th>{esc(t)}</th>" for t in titles)
    body = "".join(
        f'<tr><th>{esc(label)}<div class="meaning">{esc(meaning)}</div></th>'
        + "".join(f"<td>{esc(v)}</td>" for v in values)
        + "</tr>"
        for label, meaning, values in rows
    )
    return (
        f'<table class="figures"><thead><tr><th>Figure</th>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


class _Reasons:
    """Why a figure is missing: ``reasons`` beside it, or the evaluation's ``not_computed``."""

    def __init__(self, ev: Mapping[str, Any]):
        self.listed: list[tuple[str, str]] = []
        for entry in ev.get("not_computed") or []:
            e = _dict(entry)
            if isinstance(e.get("measure"), str):
                reason = e.get("reason")
                self.listed.append((e["measure"], reason if isinstance(reason, str) else ""))

    def of(self, path: str, flat: Mapping[str, Any], rel: str | None = None) -> str | None:
        """Why the figure at ``path`` is missing (``path`` relative: ``arx.prosecutor.highest``).

        Args:
            path: the figure's labelled path.
            flat: the flattened dict the figure is read from (its ``reasons`` beside it).
            rel: the figure's path in ``flat`` (default: ``path``).

        Returns:
            The reason, or ``None`` when the evaluation gives none.
        """
        parent, _, key = (rel or path).rpartition(".")
        beside = flat.get(f"{parent}.reasons.{key}" if parent else f"reasons.{key}")
        if isinstance(beside, str) and beside:
            return beside
        for measure, reason in self.listed:
            tail = measure.removeprefix("risk.before.").removeprefix("risk.after.")
            tail = tail.removeprefix("risk.")
            if reason and (path == tail or path.startswith(tail + ".")):
                return reason
        return None


def _rows(
    paths: Sequence[str],
    columns: Sequence[tuple[str, Mapping[str, Any]]],
    root: str,
    reasons: _Reasons,
) -> list[Row]:
    """The rows of the labelled ``paths`` present in any column (``root``: their prefix)."""
    flat = [flatten(d) for _, d in columns]
    rows = []
    for path in paths:
        rel = path.removeprefix(root)
        if not any(rel in f for f in flat):
            continue
        label, meaning, style = LABELS[path]
        values = [_shown(f.get(rel), style, reasons.of(path, f, rel)) for f in flat]
        rows.append((label, meaning, values))
    return rows


def _shown(value: Any, style: str, reason: str | None) -> str:
    if style == "name" and isinstance(value, str):
        return _words(value)[:_MAX_TEXT]
    if style == "text" and isinstance(value, str):
        return _ESTIMATORS.get(value, value[:_MAX_TEXT])
    if isinstance(value, (Mapping, list, tuple)):
        return "see the raw figures"
    return fmt_value(value, style, reason)


_ESTIMATORS = {"pitman": "Pitman", "zayatz": "Zayatz", "snb": "SNB", "dankar": "Dankar"}


def _paths(prefix: str) -> list[str]:
    """The labelled paths under ``prefix`` that are single figures (not whole measures)."""
    return [p for p, (_, _, style) in LABELS.items() if p.startswith(prefix) and style != "text"]


def _hist(path: str, columns: Sequence[tuple[str, Mapping[str, Any]]], xlabel: str) -> str:
    """The histogram at ``path`` (relative to each column's dict) as one plot, or ""."""
    rel = path.split(".", 1)[1]
    vals = [flatten(d).get(rel) for _, d in columns]
    present = [(t, v) for (t, _), v in zip(columns, vals, strict=True) if is_histogram(v)]
    if not present:
        return ""
    title = LABELS[path][0]
    edges = present[0][1]["edges"]
    if all(list(v["edges"]) == list(edges) for _, v in present):
        series = [(t, v["counts"]) for t, v in present]
        frame = svg.ChartFrame(title, xlabel=xlabel, ylabel="count")
        return _figure(svg.histogram(edges, series, frame))
    return "".join(
        _figure(
            svg.histogram(
                v["edges"],
                [(t, v["counts"])],
                svg.ChartFrame(f"{title} ({t})", xlabel=xlabel, ylabel="count"),
            )
        )
        for t, v in present
    )


# --------------------------------------------------------------------------- the verdict


def _smallest(class_sizes: Any) -> int | None:
    table = class_size_table(class_sizes)
    return table[0][0] if table else None


def verdict(ev: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The report's verdict in words, derived from the figures: a headline and sentences.

    Args:
        ev: the evaluation dict.

    Returns:
        ``(headline, sentences)``: whether any record is above the risk threshold, then how
        far each record hides, the risk before, the expected re-identifications, the
        homogeneity attack, the strongest attack against held-out records, verification.
    """
    table, view, risk = _dict(ev.get("table")), _dict(ev.get("view")), _dict(ev.get("risk"))
    threshold = _threshold(view)
    after, before = _dict(risk.get("after")), _dict(risk.get("before"))
    a = prosecutor_summary(after.get("class_sizes"), threshold)
    release = table.get("kind") == "release"
    noun = "published record" if release else "record"
    out: list[str] = []
    if not a["rows"]:
        headline = "No re-identification figures: the evaluation holds no class sizes."
    elif a["at_risk"] == 0:
        headline = (
            f"Within the risk threshold: no {noun} has a re-identification probability "
            f"above {_pct(threshold)}."
        )
    else:
        headline = (
            f"Above the risk threshold: {_plural(a['at_risk_records'], noun)} "
            f"({_pct(a['at_risk'])}) {_verb(a['at_risk_records'], 'has', 'have')} a "
            "re-identification probability above "
            f"{_pct(threshold)}."
        )
    if a["rows"]:
        smallest = _smallest(after.get("class_sizes")) or 1
        tail = (
            f"the highest chance of re-identifying a record is {_pct(a['highest'])}, "
            f"{_pct(a['average'])} on average."
        )
        if smallest >= 2:
            others = "other" if smallest == 2 else "others"
            out.append(
                f"Every {noun} shares its quasi-identifiers with at least "
                f"{_count(smallest - 1)} {others}; {tail}"
            )
        else:
            out.append(
                f"{_plural(a['uniques'], noun)} ({_pct(a['uniques_share'])}) "
                f"{_verb(a['uniques'], 'is', 'are')} unique on "
                f"their quasi-identifiers: anyone who knows those values finds them; {tail}"
            )
    b = prosecutor_summary(before.get("class_sizes"), threshold)
    if b["rows"]:
        out.append(
            f"Before anonymization the highest chance was {_pct(b['highest'])} and "
            f"{_plural(b['uniques'], 'record')} {_verb(b['uniques'], 'was', 'were')} unique."
        )
    glob = _dict(_dict(after.get("sdcmicro")).get("global"))
    expected = glob.get("expected_reidentifications")
    if _is_number(expected):
        share = glob.get("share")
        of = f" ({_pct(share)} of the records)" if _is_number(share) else ""
        out.append(f"sdcMicro expects {_count(float(expected))} re-identifications{of}.")
    out.extend(_attack_sentences(ev))
    if table.get("row_level"):
        out.insert(
            0,
            "Its records are perturbed or synthetic, so nearly every record is unique as "
            "published and the class-based figures below overstate the risk; the attacks "
            "against held-out records measure it better.",
        )
    verified = table.get("verified")
    if verified is True:
        out.append("The job verified the release against its privacy model before publishing.")
    elif verified is False:
        out.append("The release was NOT verified against its privacy model.")
    return headline, out


def _attack_sentences(ev: Mapping[str, Any]) -> list[str]:
    out = []
    homog = _dict(_dict(ev.get("attacks")).get("homogeneity"))
    records, share = homog.get("records"), homog.get("share")
    if _is_number(records) or _is_number(share):
        if (records or 0) == 0 and (share or 0) == 0:
            out.append("No class discloses its sensitive value outright (homogeneity attack).")
        else:
            size = _plural(records, "record") if _is_number(records) else "Records"
            of = f" ({_pct(share)})" if _is_number(share) else ""
            out.append(
                f"{size}{of} are in classes with a single sensitive value, which an attacker "
                "learns without re-identifying anyone."
            )
    anon = _dict(ev.get("anonymeter"))
    risks = [
        (title, _dict(_dict(anon.get(key)).get("risk")).get("value"))
        for key, title in _ANONYMETER_ATTACKS
    ]
    risks = [(t, v) for t, v in risks if _is_number(v)]
    if risks:
        title, value = max(risks, key=lambda tv: tv[1])
        out.append(
            f"The strongest attack against held-out records ({title.lower()}) has a risk of "
            f"{_pct(value)}."
        )
    return out


# --------------------------------------------------------------------------- sections


def _summary(ev: Mapping[str, Any], reasons: _Reasons) -> str:
    headline, sentences = verdict(ev)
    table, view = _dict(ev.get("table")), _dict(ev.get("view"))
    model = _dict(table.get("model"))
    params = ", ".join(
        f"{_words(k)} = {fmt_value(v)}"
        for k, v in model.items()
        if k != "name" and (_is_number(v) or isinstance(v, (str, bool)))
    )
    name = model.get("name")
    model_text = " ".join(
        x
        for x in (str(name) if isinstance(name, str) else "", f"({params})" if params else "")
        if x
    )
    verified = table.get("verified", ev.get("verified"))
    facts: list[tuple[str, Any, str]] = [
        ("table.source", table.get("source"), "text"),
        ("table.kind", table.get("kind"), "name"),
        ("table.family", table.get("family") or _dict(ev.get("family")).get("name"), "name"),
        ("table.algorithm", table.get("algorithm"), "name"),
        ("table.model", model_text or None, "text"),
        ("table.rows", table.get("rows"), "count"),
        ("table.verified", "not recorded" if verified is None else verified, "text"),
        ("view.quasi_identifiers", ", ".join(_strs(view.get("quasi_identifiers"))) or None, ""),
        ("view.sensitive", view.get("sensitive"), "text"),
        ("view.level_names", ", ".join(_strs(view.get("level_names"))) or None, ""),
        ("view.sampling_fraction", view.get("sampling_fraction"), "pct"),
        ("view.threshold", _threshold(view), "pct"),
    ]
    rows = [
        (
            LABELS[path][0],
            LABELS[path][1],
            ["none" if v is None else v if style == "" else _shown(v, style, None)],
        )
        for path, v, style in facts
        if v is not None or path != "view.level_names"
    ]
    listed = [
        f"<li>Not computed: {esc(_measure_label(m))} &mdash; {esc(r or 'no reason given')}</li>"
        for m, r in reasons.listed
    ]
    missing = f'<div class="not-computed"><ul>{"".join(listed)}</ul></div>' if listed else ""
    warnings = [w for w in ev.get("warnings") or [] if isinstance(w, str)]
    warn = (
        '<div class="warnings" role="alert"><h3>Warnings</h3><ul>'
        + "".join(f"<li>{esc(w[:500])}</li>" for w in warnings)
        + "</ul></div>"
        if warnings
        else '<div class="no-warnings">No warnings.</div>'
    )
    said = "".join(f"<li>{esc(s)}</li>" for s in sentences)
    return (
        '<section id="summary" class="report-section"><h2>Summary</h2>'
        f'<div class="verdict"><p class="verdict-head">{esc(headline)}</p><ul>{said}</ul></div>'
        f"{missing}{warn}<h3>What was evaluated</h3>{_table(['Value'], rows)}</section>"
    )


def _measure_label(measure: str) -> str:
    """The human label of a not-computed measure (never its key)."""
    found = label_of(measure)
    if found is not None:
        return found[0]
    return "a measure without a label in this report (its key is in the raw figures)"


def _threshold(view: Mapping[str, Any]) -> float:
    t = view.get("threshold")
    return float(t) if _is_number(t) and math.isfinite(float(t)) else 0.2


def _risk_columns(ev: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    risk = _dict(ev.get("risk"))
    cols = []
    if isinstance(risk.get("before"), Mapping):
        cols.append(("before (input)", risk["before"]))
    if isinstance(risk.get("after"), Mapping):
        label = "after (release)" if cols else "evaluated table"
        cols.append((label, risk["after"]))
    return cols


_CLASS_FIGURES = (
    ("risk.rows", "rows"),
    ("risk.classes", "classes"),
    ("risk.smallest_class", "smallest"),
    ("risk.uniques", "uniques"),
    ("risk.uniques_share", "uniques_share"),
    ("risk.highest", "highest"),
    ("risk.average", "average"),
    ("risk.at_risk", "at_risk"),
)


def _risk(ev: Mapping[str, Any], reasons: _Reasons) -> str:
    cols = _risk_columns(ev)
    out = ['<section id="risk" class="report-section"><h2>Re-identification risk</h2>']
    if not cols:
        out.append(_na("No risk figures in this evaluation."))
        return "".join(out) + "</section>"
    threshold = _threshold(_dict(ev.get("view")))
    sums = [prosecutor_summary(d.get("class_sizes"), threshold) for _, d in cols]
    for s, (_, d) in zip(sums, cols, strict=True):
        s["smallest"] = _smallest(d.get("class_sizes"))
    rows: list[Row] = []
    for path, key in _CLASS_FIGURES:
        label, meaning, style = LABELS[path]
        if key == "at_risk":
            label = f"{label} ({_pct(threshold)})"
        rows.append((label, meaning, [fmt_value(s[key], style) for s in sums]))
    arx = [(t, _dict(d.get("arx"))) for t, d in cols]
    if any(d for _, d in arx):
        rows += _rows(_paths("arx."), arx, "arx.", reasons)
    out.append(
        "<p>A record in a class of <i>f</i> records is re-identified with probability "
        "1/<i>f</i> by an attacker who knows it is in the table (prosecutor risk); classes "
        "are shown as counts, never as rows. Journalist, marketer risk and population "
        "uniques are ARX's measures.</p>" + _table([t for t, _ in cols], rows)
    )
    labels, _ = size_buckets(None)
    series = [(t, size_buckets(d.get("class_sizes"))[1]) for t, d in cols]
    rlabels, _ = risk_buckets(None)
    rseries = [(t, risk_buckets(d.get("class_sizes"))[1]) for t, d in cols]
    out.append(
        '<div class="plots">'
        + _figure(
            svg.bar_chart(
                labels,
                series,
                svg.ChartFrame(
                    "Class-size histogram",
                    xlabel="class size (records per class)",
                    ylabel="classes",
                ),
            )
        )
        + _figure(
            svg.bar_chart(
                rlabels,
                rseries,
                svg.ChartFrame(
                    "Risk distribution: share of records by prosecutor risk",
                    xlabel="prosecutor risk",
                    ylabel="share of records",
                ),
                percent=True,
            )
        )
        + "</div>"
    )
    return "".join(out) + "</section>"


def _sdc(ev: Mapping[str, Any], reasons: _Reasons) -> str:
    cols = _risk_columns(ev)
    out = ['<section id="sdc" class="report-section"><h2>sdcMicro risk and SUDA2</h2>']
    for key, title, plots in (
        ("sdcmicro", "Individual and global risk (sdcMicro)", (("individual.histogram", "risk"),)),
        ("suda2", "SUDA2", (("score", "SUDA score"), ("dis_score", "DIS-SUDA score"))),
    ):
        sub = [(t, _dict(d.get(key))) for t, d in cols]
        out.append(f"<h3>{esc(title)}</h3>")
        if not any(d for _, d in sub):
            reason = reasons.of(key, {})
            why = f": {reason}" if reason else ""
            out.append(_na(f"{title} was not computed for this evaluation{why}."))
            continue
        method = next((d.get("method") for _, d in sub if isinstance(d.get("method"), str)), None)
        if method:
            out.append(f"<p>Method: {esc(method[:_MAX_TEXT])}.</p>")
        out.append(_table([t for t, _ in sub], _rows(_paths(f"{key}."), sub, f"{key}.", reasons)))
        figs = "".join(_hist(f"{key}.{p}", sub, x) for p, x in plots)
        if figs:
            out.append(f'<div class="plots">{figs}</div>')
    return "".join(out) + "</section>"


def _class_attack(entry: Mapping[str, Any]) -> str:
    """``87 records (0.19%) in 6 classes``, or ``none`` when no record is exposed."""
    records, classes, share = entry.get("records"), entry.get("classes"), entry.get("share")
    if not any(_is_number(x) for x in (records, classes, share)):
        return "see the raw figures"
    if all((x or 0) == 0 for x in (records, classes, share) if _is_number(x)):
        return "none"
    parts = []
    if _is_number(records):
        parts.append(_plural(records, "record"))
    if _is_number(share):
        parts.append(f"({_pct(share)} of all)" if parts else f"{_pct(share)} of the records")
    if _is_number(classes):
        parts.append(f"in {_plural(classes, 'class')}")
    return " ".join(parts)


def _attacks(ev: Mapping[str, Any], reasons: _Reasons) -> str:
    out = ['<section id="attacks" class="report-section"><h2>Attacks</h2>']
    d = _dict(ev.get("attacks"))
    out.append("<h3>Attacks on the classes</h3>")
    rows: list[Row] = []
    cols = [("value", d)]
    for name in ("homogeneity", "similarity", "skewness"):
        path = f"attacks.{name}"
        label, meaning, _ = LABELS[path]
        entry = d.get(name)
        if not isinstance(entry, Mapping):
            if entry is None and (name in d or reasons.of(path, {})):
                rows.append((label, meaning, [fmt_value(None, reason=reasons.of(path, {}))]))
            continue
        if name != "skewness":
            rows.append((label, meaning, [_class_attack(entry)]))
            rng = entry.get("range_share")
            if _is_number(rng):
                rows += _rows([f"{path}.range_share"], cols, "attacks.", reasons)
            continue
        rows += _rows([f"{path}.max", f"{path}.mean"], cols, "attacks.", reasons)
        above = _dict(entry.get("above"))
        for cut, share in sorted(above.items(), key=lambda kv: str(kv[0])):
            if _is_number(share):
                rows.append(
                    (
                        f"Records in classes at distance above {cut}",
                        "Share of records whose class's sensitive distribution is further "
                        "than this from the table's.",
                        [_pct(share)],
                    )
                )
    if rows:
        out.append(_table(["Value"], rows))
    else:
        out.append(_na("No attack on the classes in this evaluation."))
    out.append(_linkage_table(d.get("linkage")))
    figs = "".join(
        _hist(p, cols, "distance of the class")
        for p in ("attacks.skewness.histogram", "attacks.skewness.class_histogram")
    )
    if figs:
        out.append(f'<div class="plots">{figs}</div>')
    out.append("<h3>Attacks against held-out records (anonymeter)</h3>")
    anon = _dict(ev.get("anonymeter"))
    table = _anonymeter_table(anon) if anon else ""
    if table:
        out.append(table)
    else:
        reason = reasons.of("anonymeter", {})
        why = f": {reason}" if reason else ""
        out.append(_na(f"Not computed for this evaluation{why}."))
    return "".join(out) + "</section>"


_ANONYMETER_ATTACKS = (
    ("singling_out_univariate", "Singling out (univariate predicates)"),
    ("singling_out_multivariate", "Singling out (multivariate predicates)"),
    ("linkability", "Linkability"),
    ("inference", "Inference of the sensitive attribute"),
)


_THREAT_TEXT = (
    "This release is meant to hold against an attacker who has every file of every "
    "release of this table (the data, its configuration, its metrics and this report), "
    "the source code of sparkanon, the job's configuration, public knowledge of the "
    "quasi-identifiers, and several releases of the same input. The random draws that "
    "protect the release come from a secret key, and the rows are written in an order "
    "drawn from that key, so no row's place leads back to the input. What each method "
    "promises under this model, and what it does not, is set out in the threat model "
    "of the sparkanon documentation (docs/threat-model.md)."
)
_RESULTS = {True: "withstood", False: "succeeded", None: "not checked"}


def key_sentence(randomness: Any) -> str:
    """What the release says of its run key, in words."""
    record = randomness if isinstance(randomness, Mapping) else {}
    if record.get("key") == "user":
        return (
            f"This run used a key the user holds (labelled {record.get('label', '')!r}): "
            "whoever holds that key can recompute every random draw of this release and "
            "undo its protection, so it must be kept as the input itself is kept."
        )
    if record.get("key"):
        return (
            "This run's key was drawn from the operating system for this run and not kept: "
            "nobody, its operator included, can recompute the release's random draws."
        )
    return "This release does not record where its random draws came from."


def _threat(ev: Mapping[str, Any]) -> str:
    """The threat model in two sentences and the attacks run on the release before commit."""
    out = ['<section id="threat" class="report-section"><h2>Threat model</h2>']
    out.append(f"<p>{esc(_THREAT_TEXT)}</p>")
    out.append(f"<p>{esc(key_sentence(ev.get('randomness')))}</p>")
    runs = [r for r in ev.get("attacks_run") or [] if isinstance(r, Mapping)]
    if not runs:
        out.append(_na("No attack on this release was recorded before its commit."))
        return "".join(out) + "</section>"
    out.append(
        "<h3>Attacks run on this release before its commit</h3>"
        "<p>A release on which an attack succeeds is refused and never written.</p>"
        "<table><thead><tr><th>Attack</th><th>Outcome</th><th>Result</th></tr></thead><tbody>"
    )
    for run in runs:
        passed = run.get("passed")
        result = _RESULTS.get(passed if isinstance(passed, bool) else None, "not checked")
        attack = esc(_trim(str(run.get("attack", ""))))
        said = esc(str(run.get("outcome", ""))[:400])
        out.append(f"<tr><td>{attack}</td><td>{said}</td><td>{result}</td></tr>")
    return "".join(out) + "</tbody></table></section>"


def _rate_ci(entry: Any) -> str:
    """``rate [lo, hi]`` of an attack's success (percentages)."""
    e = _dict(entry)
    rate, ci = e.get("rate", e.get("value")), e.get("ci")
    text = _pct(rate) if _is_number(rate) else "n/a"
    if isinstance(ci, list) and len(ci) == 2 and all(_is_number(c) for c in ci):
        text += f" [{_pct(ci[0])}, {_pct(ci[1])}]"
    return text


def _anonymeter_table(d: Mapping[str, Any]) -> str:
    """One row per attack: success on the targets, on the control set, by chance; the risk."""
    rows = []
    for key, title in _ANONYMETER_ATTACKS:
        e = _dict(d.get(key))
        if not e:
            continue
        rows.append(
            f"<tr><th>{esc(title)}</th><td>{esc(fmt_value(e.get('n_attacks')))}</td>"
            f"<td>{esc(_rate_ci(e.get('main')))}</td><td>{esc(_rate_ci(e.get('control')))}</td>"
            f"<td>{esc(_rate_ci(e.get('baseline')))}</td><td>{esc(_rate_ci(e.get('risk')))}</td>"
            "</tr>"
        )
    if not rows:
        return ""
    return (
        "<h4>Success rates with 95% confidence intervals: on targets that made the release, "
        "on held-out control records, and by random guessing; risk = (main - control) / "
        '(1 - control)</h4><table class="kv"><thead><tr><th>Attack</th><th>Targets</th>'
        "<th>Main</th><th>Control</th><th>Baseline</th><th>Risk</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _linkage_table(entries: Any) -> str:
    """The linkage attack: one row per set of quasi-identifiers the attacker knows."""
    if not isinstance(entries, list) or not entries:
        return ""
    rows = []
    for e in entries:
        e = _dict(e)
        known = ", ".join(str(k) for k in e.get("known") or [])
        rows.append(
            f"<tr><td>{esc(known)}</td><td>{esc(fmt_value(e.get('groups')))}</td>"
            f"<td>{esc(_pct(e['expected_rate']) if _is_number(e.get('expected_rate')) else '-')}"
            f"</td><td>{esc(fmt_value(e.get('certain_records')))}</td>"
            f"<td>{esc(_pct(e['certain_share']) if _is_number(e.get('certain_share')) else '-')}"
            "</td></tr>"
        )
    return (
        "<h4>Linkage: an attacker who knows these quasi-identifiers of a target in the "
        'release</h4><table class="kv"><thead><tr><th>Known</th><th>Groups</th>'
        "<th>Expected matching rate</th><th>Records linked with certainty</th>"
        "<th>Share linked with certainty</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _utility(ev: Mapping[str, Any], reasons: _Reasons) -> str:
    u = _dict(ev.get("utility"))
    out = ['<section id="utility" class="report-section"><h2>Utility</h2>']
    dist = _dict(u.get("distance"))
    out.append("<h3>Per-attribute distribution distance (release vs original)</h3>")
    if dist:
        labels, values, rows = [], [], []
        for col, entry in dist.items():
            e = _dict(entry)
            v = e.get("tvd")
            emd = e.get("emd")
            labels.append(str(col))
            values.append(float(v) if _is_number(v) else math.nan)
            rows.append(
                f"<tr><th>{esc(col)}</th><td>{esc(fmt_value(v))}</td>"
                f"<td>{esc(fmt_value(emd) if _is_number(emd) else '-')}</td>"
                f"<td>{esc(fmt_value(e.get('unread_rows', 0), 'count'))}</td></tr>"
            )
        top = max([1.0, *[v for v in values if math.isfinite(v)]])
        out.append(
            '<div class="plots">'
            + _figure(svg.hbar_chart(labels, values, title="Distance per attribute", xmax=top))
            + '<table class="kv"><thead><tr><th>Attribute</th><th>Total variation distance</th>'
            "<th>Earth mover's distance (ordered)</th><th>Values the domain cannot read</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
            "<p>0: the release keeps the attribute's distribution; 1: nothing of it is left.</p>"
        )
    else:
        reason = reasons.of("utility.distance", {})
        out.append(_na(f"No distribution distances in this evaluation{_why(reason)}."))
    out.append("<h3>The family's loss metrics</h3>")
    losses = _dict(u.get("family_losses"))
    rows_l = _loss_rows(losses, reasons)
    out.append(_table(["Value"], rows_l) if rows_l else _na("None recorded."))
    out.append("<h3>Classification accuracy</h3>")
    cls = _dict(u.get("classification"))
    if cls:
        facts = [
            ("Target", cls.get("target"), "text"),
            ("Model", cls.get("model"), "name"),
            ("Accuracy trained on the original", cls.get("accuracy_original"), "pct"),
            ("Accuracy trained on the release", cls.get("accuracy_release"), "pct"),
            ("Majority class baseline", cls.get("majority"), "pct"),
            ("Held-out test rows", cls.get("test_rows"), "count"),
        ]
        rows = "".join(
            f"<tr><th>{esc(k)}</th><td>{esc(_shown(v, style, None))}</td></tr>"
            for k, v, style in facts
        )
        bars = [cls.get(k) for k in ("accuracy_original", "accuracy_release", "majority")]
        chart = svg.bar_chart(
            ["original", "release", "majority"],
            [("accuracy", [float(b) if _is_number(b) else None for b in bars])],
            svg.ChartFrame(
                "Accuracy on held-out originals",
                xlabel="trained on: the original, the release; majority-class baseline",
                ylabel="accuracy",
                width=460,
            ),
            ymax=1.0,
            percent=True,
        )
        out.append(f'<div class="plots">{_figure(chart)}<table class="kv">{rows}</table></div>')
    else:
        reason = reasons.of("utility.classification", {})
        out.append(_na(f"No classification measure in this evaluation{_why(reason)}."))
    return "".join(out) + "</section>"


def _why(reason: str | None) -> str:
    return f" ({reason})" if reason else ""


def _loss_rows(losses: Mapping[str, Any], reasons: _Reasons) -> list[Row]:
    """The labelled family losses: scalars, labelled sub-figures, per-attribute NCP."""
    rows: list[Row] = []
    root = "utility.family_losses."
    for key, value in losses.items():
        path = root + str(key)
        if path not in LABELS:
            continue
        label, meaning, style = LABELS[path]
        if key == "NCP_by_attribute":
            rows += [
                (label.format(column=col), meaning, [fmt_value(v, style)])
                for col, v in _dict(value).items()
                if _is_number(v) or v is None
            ]
        elif isinstance(value, Mapping):
            rows += _rows(
                [p for p in LABELS if p.startswith(path + ".")],
                [("value", value)],
                path + ".",
                reasons,
            )
        elif value is None or _is_number(value):
            rows.append((label, meaning, [fmt_value(value, style, reasons.of(path, losses))]))
    return rows


def _family(ev: Mapping[str, Any]) -> str:
    fam = _dict(ev.get("family"))
    name = fam.get("name") or _dict(ev.get("table")).get("family")
    out = ['<section id="family" class="report-section"><h2>Family-specific figures</h2>']
    rec, cov = _dict(fam.get("reconstruction")), _dict(fam.get("covariance"))
    if not rec and not cov:
        what = f"the {_words(name)} family" if name else "this table"
        out.append(_na(f"No family-specific figures for {what}."))
    if rec:
        out.append(_reconstruction(rec))
    if cov:
        out.append(_covariance(cov))
    return "".join(out) + "</section>"


_NUMERIC_METHODS = (("noisy", "published (noisy)"), ("bayes", "Bayes"), ("em", "EM"))
_CATEGORICAL_METHODS = (
    ("noisy", "published (noisy)"),
    ("categorical_ibu", "iterative Bayesian update"),
    ("categorical_inversion", "matrix inversion"),
)


def _reconstruction(rec: Mapping[str, Any]) -> str:
    """Reconstructed distributions over all rows, per column (``reconstruction.json``)."""
    out = ["<h3>Reconstructed distributions (perturbed release)</h3>"]
    out.append(
        "<p>What an analyst (or an attacker) can recover of each perturbed attribute's "
        "original distribution from the published values and the declared noise. "
        f"Rows: {esc(fmt_value(rec.get('rows'), 'count'))}.</p>"
    )
    labels = _dict(rec.get("labels"))
    if rec.get("by") is not None and labels:
        out.append(
            f"<p>Per-label reconstructions for {len(labels)} labels are in "
            "reconstruction.json; labels are data values and are not shown here.</p>"
        )
    rows, plots = [], []
    for col, entry in _dict(rec.get("columns")).items():
        e = _dict(entry)
        dists = _dict(e.get("all"))
        noise = _dict(e.get("noise"))
        dist_name = noise.get("distribution") if isinstance(noise.get("distribution"), str) else "?"
        scale = noise.get("scale")
        if e.get("kind") == "numeric" and isinstance(e.get("x_edges"), list):
            edges = e["x_edges"]
            series = [
                (title, _dict(dists.get(m)).get("probabilities") or [])
                for m, title in _NUMERIC_METHODS
                if len(_dict(dists.get(m)).get("probabilities") or []) == len(edges) - 1
            ]
            if series and all(_is_number(x) and math.isfinite(float(x)) for x in edges):
                plots.append(
                    _figure(
                        svg.histogram(
                            edges,
                            series,
                            svg.ChartFrame(
                                f"{col}: reconstructed distribution",
                                xlabel=str(col),
                                ylabel="density",
                            ),
                            density=True,
                        )
                    )
                )
            methods = _NUMERIC_METHODS[1:]
        elif e.get("kind") == "categorical":
            k = max(
                (
                    len(_dict(dists.get(m)).get("probabilities") or [])
                    for m, _ in _CATEGORICAL_METHODS
                ),
                default=0,
            )
            cats = [f"value {i + 1}" for i in range(k)]
            series = [
                (title, [float(p) for p in _dict(dists.get(m)).get("probabilities") or []])
                for m, title in _CATEGORICAL_METHODS
            ]
            if k:
                plots.append(
                    _figure(
                        svg.bar_chart(
                            cats,
                            series,
                            svg.ChartFrame(
                                f"{col}: reconstructed distribution",
                                xlabel="values in the order of noise.json (labels not shown)",
                                ylabel="probability",
                            ),
                        )
                    )
                )
            methods = _CATEGORICAL_METHODS[1:]
        else:
            continue
        stops = "; ".join(_iterations(t, _dict(dists.get(m))) for m, t in methods)
        outside = dists.get("outside_z_range")
        rows.append(
            f"<tr><th>{esc(col)}</th><td>{esc(e.get('kind'))}</td><td>{esc(_words(dist_name))}</td>"
            f"<td>{esc(fmt_value(scale) if _is_number(scale) else 'n/a')}</td>"
            f"<td>{esc(fmt_value(outside) if _is_number(outside) else 'n/a')}</td>"
            f"<td>{esc(stops)}</td></tr>"
        )
    if rows:
        out.append(
            '<table class="kv"><thead><tr><th>Column</th><th>Kind</th><th>Noise</th>'
            "<th>Scale</th><th>Outside z range</th><th>Iterations</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
        out.append(f'<div class="plots">{"".join(plots)}</div>')
    else:
        out.append(_na("The reconstruction holds no column."))
    return "".join(out)


def _iterations(title: str, dist: Mapping[str, Any]) -> str:
    stop = dist.get("stopped_by")
    stop = _words(stop) if isinstance(stop, str) else "not recorded"
    return f"{title}: {fmt_value(dist.get('iterations'), 'count')} iterations, stopped by {stop}"


def _matrix(v: Any) -> list[list[float]] | None:
    if not isinstance(v, list) or not v:
        return None
    rows = []
    for row in v:
        if not isinstance(row, list) or len(row) != len(v) or not all(_is_number(x) for x in row):
            return None
        rows.append([float(x) for x in row])
    return rows


def _covariance(cov: Mapping[str, Any]) -> str:
    """Original vs synthetic covariance heatmaps, on one colour scale, and their difference."""
    out = ["<h3>Covariance: original vs synthetic (condensed release)</h3>"]
    orig, syn = _matrix(cov.get("original")), _matrix(cov.get("synthetic"))
    cols = [str(c) for c in cov.get("columns") or []]
    if orig is None or syn is None or len(orig) != len(syn):
        return "".join(out) + _na("The covariance matrices are missing or not square.")
    cols = cols if len(cols) == len(orig) else [f"column {i + 1}" for i in range(len(orig))]
    vmax = max(
        (abs(x) for m in (orig, syn) for row in m for x in row if math.isfinite(x)), default=1.0
    )
    diff = [[s - o for o, s in zip(ro, rs, strict=True)] for ro, rs in zip(orig, syn, strict=True)]
    dmax = max((abs(x) for row in diff for x in row if math.isfinite(x)), default=0.0)
    out.append(
        '<div class="plots">'
        + _figure(svg.heatmap(orig, cols, title="Original covariance", vmax=vmax or 1.0))
        + _figure(svg.heatmap(syn, cols, title="Synthetic covariance", vmax=vmax or 1.0))
        + _figure(svg.heatmap(diff, cols, title="Synthetic minus original", vmax=dmax or 1.0))
        + "</div><p>Columns are in the order of the rows. The original and synthetic maps "
        "share one colour scale; the difference has its own.</p>"
    )
    return "".join(out)


def _glossary() -> str:
    terms = "".join(f"<dt>{esc(t)}</dt><dd>{esc(d)}</dd>" for t, d in GLOSSARY)
    sources = "".join(f"<li>{esc(s)}</li>" for s in SOURCES)
    return (
        '<section id="glossary" class="report-section"><h2>Glossary</h2>'
        f'<dl class="glossary">{terms}</dl><h3>Sources</h3><ul class="sources">{sources}</ul>'
        "</section>"
    )


def redacted(value: Any, allowed: frozenset[str], key: str = "") -> Any:
    """The evaluation with every possible data value replaced by a count (the raw figures).

    Args:
        value: the evaluation (or a part of it).
        allowed: the texts a list may show (:func:`allowed_names`).
        key: the key ``value`` sits under.

    Returns:
        A copy: under a key of :data:`REDACTED_KEYS` anything but a number becomes
        ``"N entries not shown (data values)"``; a list of texts that are not all allowed
        names becomes ``"N texts not shown"``.
    """
    if key in REDACTED_KEYS and not (_is_number(value) or value is None):
        n = len(value) if isinstance(value, (list, tuple, dict, str)) else 1
        return f"{n} entries not shown (data values)"
    if isinstance(value, Mapping):
        return {str(k): redacted(v, allowed, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        texts = [] if key == "warnings" else [x for x in value if isinstance(x, str)]
        if texts and not all(x in allowed for x in texts):
            return f"{len(value)} texts not shown"
        return [redacted(x, allowed) for x in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _raw(ev: Mapping[str, Any], allowed: frozenset[str]) -> str:
    text = json.dumps(redacted(ev, allowed), indent=2, ensure_ascii=False, default=str)
    return (
        '<section id="raw" class="report-section"><h2>All figures</h2>'
        "<p>Every figure of the evaluation as <code>evaluation.json</code> holds it (data "
        "values left out), for checking a figure above or reading one the report does not "
        "label.</p><details><summary>Show the raw figures (JSON)</summary>"
        f'<pre class="raw">{esc(text)}</pre></details></section>'
    )


_CSS = """
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;color:#1f2328;
background:#f6f8fa;line-height:1.45}
header{background:#24292f;color:#fff;padding:16px 32px}
header h1{margin:0;font-size:22px} header p{margin:4px 0 0;color:#d0d7de;font-size:13px}
nav{padding:8px 32px;background:#eaeef2;font-size:14px} nav a{margin-right:14px;color:#0969da}
main{max-width:1280px;margin:0 auto;padding:8px 32px 48px}
.report-section{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:8px 24px 20px;
margin:18px 0}
h2{border-bottom:1px solid #d0d7de;padding-bottom:6px} h3{margin-top:22px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:14px}
th,td{border:1px solid #d0d7de;padding:4px 10px;text-align:left;vertical-align:top}
thead th{background:#f6f8fa} tbody th{font-weight:600;background:#fbfcfd}
.kv-title{font-weight:600;padding:8px 0 0;color:#57606a}
.summary-box{display:flex;flex-wrap:wrap;gap:24px}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid #d0d7de;border-radius:6px;padding:10px 14px;min-width:170px;
background:#f6f8fa}
.card-label{font-size:12px;color:#57606a} .card-value{font-size:20px;font-weight:600}
.before{color:#57606a} .after{color:#1a7f37}
.warnings{border:2px solid #bf8700;background:#fff8c5;border-radius:6px;padding:4px 16px;
margin-top:16px}
.warnings h3{margin:8px 0 4px;color:#7d4e00}
.no-warnings{margin-top:12px;color:#57606a}
.plots{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
figure.plot-box{display:inline-block;vertical-align:top;margin:8px 8px 8px 0;
border:1px solid #d0d7de;border-radius:4px;background:#fff;padding:4px}
.plot-title{font-size:14px;font-weight:600;fill:#1f2328}
.plot-legend,.tick{font-size:11px;fill:#57606a} .axis-label{font-size:12px;fill:#1f2328}
.cell{font-size:10px;fill:#1f2328}
.axis{stroke:#57606a;stroke-width:1} .grid{stroke:#eaeef2;stroke-width:1}
.redacted{color:#8250df;font-style:italic} .na{color:#57606a;font-style:italic}
.sub{margin-left:16px}
dl.glossary dt{font-weight:600;margin-top:8px} dl.glossary dd{margin:0 0 0 16px}
.sources{font-size:14px}
.verdict{border-left:6px solid #0969da;background:#ddf4ff;border-radius:6px;padding:6px 18px;
margin:12px 0}
.verdict-head{font-size:18px;font-weight:600;margin:8px 0}
.verdict ul{margin:4px 0 10px;padding-left:20px}
.not-computed{border:1px solid #d0d7de;background:#f6f8fa;border-radius:6px;padding:2px 16px;
margin-top:12px}
table.figures th .meaning{font-weight:400;font-size:12px;color:#57606a;max-width:560px}
table.figures td{white-space:nowrap}
details summary{cursor:pointer;color:#0969da}
pre.raw{font-size:12px;background:#f6f8fa;padding:12px;overflow:auto;max-height:600px}
"""


def render_html(evaluation: Mapping[str, Any]) -> str:
    """The report of an evaluation dict as one self-contained HTML page.

    Args:
        evaluation: the evaluation dict (schema 1); every part but ``schema`` is optional
            (a missing part renders as "not computed" or "not available").

    Returns:
        The page (deterministic: the same dict gives the same text).

    Raises:
        ValueError: ``evaluation`` is not a dict or declares a schema other than 1.
    """
    if not isinstance(evaluation, Mapping):
        raise ValueError(f"evaluation: expected a dict, got {type(evaluation).__name__}")
    schema = evaluation.get("schema", 1)
    if schema != 1:
        raise ValueError(f"evaluation: schema {schema!r} is not supported (expected 1)")
    reasons = _Reasons(evaluation)
    table = _dict(evaluation.get("table"))
    source = table.get("source") if isinstance(table.get("source"), str) else "table"
    nav = "".join(f'<a href="#{s}">{esc(t)}</a>' for s, t in zip(SECTIONS, _TITLES, strict=True))
    body = "".join(
        [
            _summary(evaluation, reasons),
            _risk(evaluation, reasons),
            _sdc(evaluation, reasons),
            _attacks(evaluation, reasons),
            _threat(evaluation),
            _utility(evaluation, reasons),
            _family(evaluation),
            _glossary(),
            _raw(evaluation, allowed_names(evaluation)),
        ]
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Privacy evaluation: {esc(source)}</title>"
        f"<style>{_CSS}</style></head><body>"
        f"<header><h1>Privacy evaluation report</h1><p>{esc(source)} - "
        "aggregates only: no row of the table appears in this report</p></header>"
        f"<nav>{nav}</nav><main>{body}</main></body></html>\n"
    )
