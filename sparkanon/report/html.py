"""The HTML report of an evaluation dict (schema 1 of ``evaluation.json``).

One self-contained file a privacy officer can read: inline CSS, inline SVG plots
(:mod:`sparkanon.report.svg`), no script, no font, no stylesheet or image to load.

**What it shows** (one ``<section>`` each, ids in :data:`SECTIONS`): a summary box, the
re-identification risk before and after, sdcMicro and SUDA2, the attacks, utility, the
family's own figures (reconstructed distributions of a perturbed release, covariance
heatmaps of a condensed one) and a glossary with its sources.

**Generic sub-dicts.** The risk measures (``risk.*.arx``, ``risk.*.sdcmicro``,
``risk.*.suda2``), ``attacks`` and ``anonymeter`` are rendered without knowing their keys:
the keys of :data:`HEADLINES` found in them are shown first, every other scalar in a
key/value table, nested dicts as sub-tables, and ``{"edges": [...], "counts": [...]}``
histograms as plots.

**Privacy.** The dict holds aggregates only; the report adds two defences. Every text is
HTML-escaped. And no categorical value label from the data is printed: the entries under
a key of :data:`REDACTED_KEYS` (``values``, ``by_label``, ...) are counted, not shown;
lists of texts are shown only when every text is a column name or a level name from the
config (:func:`allowed_names`); a reconstructed categorical distribution is labelled by
the values' positions, not the values. Small classes appear as counts of classes and
records, never as rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sparkanon.report import svg
from sparkanon.report.glossary import GLOSSARY, SOURCES
from sparkanon.report.svg import esc

SECTIONS = ("summary", "risk", "sdc", "attacks", "utility", "family", "glossary")
"""The ids of the report's sections, in order (the browser check looks for each)."""

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

Headline = tuple[str, tuple[str, ...], str]
"""``(label, candidate dotted paths, format)``: the first path present is shown; format
``pct`` (a share of 1 as a percentage), ``int`` or ``num``."""

HEADLINES: dict[str, tuple[Headline, ...]] = {
    "arx": (
        ("Highest prosecutor risk", ("prosecutor.highest",), "pct"),
        ("Average prosecutor risk", ("prosecutor.average",), "pct"),
        ("Records at risk (prosecutor)", ("prosecutor.records_at_risk",), "pct"),
        ("Highest journalist risk", ("journalist.highest",), "pct"),
        ("Average journalist risk", ("journalist.average",), "pct"),
        ("Marketer risk", ("marketer.average",), "pct"),
        ("Sample uniques", ("sample_uniques",), "pct"),
        ("Population uniques (Dankar's rule)", ("population_uniqueness.dankar",), "pct"),
    ),
    "sdcmicro": (
        ("Expected re-identifications", ("global.expected_reidentifications",), "num"),
        ("Global risk", ("global.share",), "pct"),
        ("Highest individual risk", ("individual.max",), "pct"),
        ("Mean individual risk", ("individual.mean",), "pct"),
        ("Records above the threshold", ("share_above_threshold",), "pct"),
    ),
    "suda2": (
        ("Records with a minimal sample unique", ("share_with_msu",), "pct"),
        ("Largest SUDA score", ("score.max",), "num"),
        ("Largest DIS-SUDA score", ("dis_score.max",), "num"),
        ("Largest subset searched", ("max_size",), "int"),
    ),
    "attacks": (
        ("Records in homogeneous classes", ("homogeneity.share",), "pct"),
        ("Records in classes of one sensitive level", ("similarity.share",), "pct"),
        ("Largest class distance (skewness)", ("skewness.max",), "num"),
        ("Mean class distance per record (skewness)", ("skewness.mean",), "num"),
    ),
    "anonymeter": (
        ("Singling-out risk (univariate)", ("singling_out_univariate.risk.value",), "pct"),
        ("Singling-out risk (multivariate)", ("singling_out_multivariate.risk.value",), "pct"),
        ("Linkability risk", ("linkability.risk.value",), "pct"),
        ("Inference risk", ("inference.risk.value",), "pct"),
    ),
}
"""Per generic sub-dict, the figures shown prominently when present (the integrator
matches these to the helpers' keys)."""

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
_MAX_DEPTH = 4

# --------------------------------------------------------------------------- formatting


def fmt_value(value: Any, style: str = "num") -> str:
    """A figure as text: ``pct`` (share of 1), ``int`` or ``num`` (4 significant digits)."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if style != "pct" else _pct(float(value))
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        if math.isinf(value):
            return "infinite" if value > 0 else "-infinite"
        if style == "pct":
            return _pct(value)
        if style == "int" and value.is_integer():
            return f"{int(value):,}"
        return f"{value:.4g}"
    return str(value)


def _pct(x: float) -> str:
    if x == 0:
        return "0%"
    p = 100 * x
    return f"{p:.3g}%" if abs(p) >= 0.01 else f"{p:.2e}%"


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
        ``rows``, ``classes``, ``highest`` (1 / the smallest size), ``average`` (classes /
        rows), ``at_risk`` (share of records above the threshold), ``uniques`` (records
        alone in their class) and ``uniques_share``; all ``None`` for an empty table.
    """
    table = class_size_table(class_sizes)
    rows = sum(f * n for f, n in table)
    classes = sum(n for _, n in table)
    if rows == 0:
        keys = ("highest", "average", "at_risk", "uniques_share")
        return {"rows": 0, "classes": 0, "uniques": 0} | dict.fromkeys(keys)
    uniques = sum(n for f, n in table if f == 1)
    return {
        "rows": rows,
        "classes": classes,
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


# --------------------------------------------------------------------------- generic dicts


class _Renderer:
    """Renders generic sub-dicts (one or two columns: after, or before and after)."""

    def __init__(self, allowed: frozenset[str]):
        self.allowed = allowed

    def cell(self, key: str, value: Any) -> str:
        """One value as escaped HTML (redacted, summarised or shown)."""
        if value is None or _is_number(value) or isinstance(value, bool):
            return esc(fmt_value(value))
        if key in REDACTED_KEYS:
            n = len(value) if isinstance(value, (list, dict, str)) else 1
            what = "characters" if isinstance(value, str) else "entries"
            return f'<span class="redacted">{n} {what} not shown (data values)</span>'
        if isinstance(value, str):
            text = value if len(value) <= _MAX_TEXT else value[:_MAX_TEXT] + "..."
            return esc(text)
        if isinstance(value, (list, tuple)):
            return self.list_cell(list(value))
        if isinstance(value, Mapping):
            return esc(f"{len(value)} entries")
        return esc(type(value).__name__)

    def list_cell(self, items: list[Any]) -> str:
        """A list: numbers (short lists whole, long ones summarised) or allowed names."""
        if not items:
            return "(none)"
        if all(_is_number(x) for x in items):
            if len(items) <= _MAX_LIST:
                return esc(", ".join(fmt_value(x) for x in items))
            finite = [float(x) for x in items if math.isfinite(float(x))]
            lo, hi = (min(finite), max(finite)) if finite else (math.nan, math.nan)
            return esc(f"{len(items)} numbers from {fmt_value(lo)} to {fmt_value(hi)}")
        if all(isinstance(x, str) for x in items):
            if all(x in self.allowed for x in items):
                return esc(", ".join(items))
            return f'<span class="redacted">{len(items)} texts not shown</span>'
        if all(isinstance(x, (list, tuple)) for x in items):
            parts = [self.list_cell(list(x)) for x in items[:_MAX_LIST]]
            more = f" and {len(items) - _MAX_LIST} more" if len(items) > _MAX_LIST else ""
            return "; ".join(f"[{p}]" for p in parts) + esc(more)
        return esc(f"{len(items)} entries")

    def headlines(
        self, kind: str, columns: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> tuple[str, frozenset[str]]:
        """The :data:`HEADLINES` of ``kind`` found in any column: a small table, paths used."""
        flat = [(title, flatten(d)) for title, d in columns]
        rows, used = [], set()
        for label, paths, style in HEADLINES.get(kind, ()):
            hit = [next((p for p in paths if p in f), None) for _, f in flat]
            if all(p is None for p in hit):
                continue
            used.update(p for p in hit if p is not None)
            cells = "".join(
                f"<td>{esc('n/a' if p is None else _headline(f[p], style))}</td>"
                for p, (_, f) in zip(hit, flat, strict=True)
            )
            rows.append(f"<tr><th>{esc(label)}</th>{cells}</tr>")
        if not rows:
            return "", frozenset()
        head = "".join(f"<th>{esc(t)}</th>" for t, _ in columns)
        return (
            f'<table class="headline"><thead><tr><th>Headline</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>",
            frozenset(used),
        )

    def tables(
        self,
        columns: Sequence[tuple[str, Mapping[str, Any]]],
        caption: str,
        skip: frozenset[str] = frozenset(),
        prefix: str = "",
        depth: int = 0,
    ) -> str:
        """Key/value table of the scalars, sub-tables for nested dicts, plots for histograms.

        Args:
            columns: ``(title, dict)`` per value column (one, or before and after).
            caption: the title above the table (sub-tables: their dotted path).
            skip: dotted paths already shown (as headlines): left out.
            prefix: the dotted path of these dicts (recursion).
            depth: the nesting depth (recursion); deeper dicts are flattened.

        Returns:
            The HTML ("" when nothing is left to show).
        """
        keys = [k for k in _union_keys(d for _, d in columns) if prefix + k not in skip]
        scalars, nested, hists = [], [], []
        for k in keys:
            vals = [d.get(k, _MISSING) for _, d in columns]
            present = [v for v in vals if v is not _MISSING]
            if k not in REDACTED_KEYS and all(is_histogram(v) for v in present):
                hists.append((k, vals))
            elif k not in REDACTED_KEYS and all(isinstance(v, Mapping) for v in present):
                nested.append((k, vals))
            else:
                scalars.append((k, vals))
        out = []
        if scalars:
            head = "".join(f"<th>{esc(t)}</th>" for t, _ in columns) if len(columns) > 1 else ""
            body = "".join(
                f"<tr><th>{esc(k)}</th>"
                + "".join(f"<td>{'' if v is _MISSING else self.cell(str(k), v)}</td>" for v in vals)
                + "</tr>"
                for k, vals in scalars
            )
            thead = f"<thead><tr><th></th>{head}</tr></thead>" if head else ""
            out.append(
                f'<div class="kv-title">{esc(caption)}</div><table class="kv">{thead}'
                f"<tbody>{body}</tbody></table>"
            )
        for k, vals in hists:
            out.append(self.histogram_plot(f"{prefix}{k}", columns, vals))
        for k, vals in nested:
            sub = [
                (t, v if isinstance(v, Mapping) else {})
                for (t, _), v in zip(columns, vals, strict=True)
            ]
            if depth + 1 >= _MAX_DEPTH:
                sub = [(t, flatten(v)) for t, v in sub]
            inner = self.tables(sub, f"{prefix}{k}", skip, f"{prefix}{k}.", depth + 1)
            if inner:
                out.append(f'<div class="sub">{inner}</div>')
        return "".join(out)

    def histogram_plot(
        self, title: str, columns: Sequence[tuple[str, Any]], vals: Sequence[Any]
    ) -> str:
        """One plot when the columns share edges, else one per column."""
        present = [(t, v) for (t, _), v in zip(columns, vals, strict=True) if is_histogram(v)]
        if not present:
            return ""
        same = all(list(v["edges"]) == list(present[0][1]["edges"]) for _, v in present)
        if same:
            series = [(t, v["counts"]) for t, v in present]
            return _figure(svg.histogram(present[0][1]["edges"], series, title=title))
        return "".join(
            _figure(svg.histogram(v["edges"], [(t, v["counts"])], title=f"{title} ({t})"))
            for t, v in present
        )


class _Missing:
    def __repr__(self) -> str:
        return "missing"


_MISSING = _Missing()


def _headline(v: Any, style: str) -> str:
    if isinstance(v, Mapping):
        return f"{len(v)} entries"
    if isinstance(v, (list, tuple)):
        return f"{len(v)} entries"
    if isinstance(v, str):
        return v[:_MAX_TEXT]
    return fmt_value(v, style)


def _union_keys(dicts: Iterable[Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for d in dicts:
        for k in d:
            seen.setdefault(str(k), None)
    return list(seen)


def _figure(svg_text: str, caption: str = "") -> str:
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure class="plot-box">{svg_text}{cap}</figure>'


def _na(what: str) -> str:
    return f'<p class="na">{esc(what)}</p>'


# --------------------------------------------------------------------------- sections


def _summary(ev: Mapping[str, Any]) -> str:
    table = _dict(ev.get("table"))
    view = _dict(ev.get("view"))
    risk = _dict(ev.get("risk"))
    threshold = _threshold(view)
    before, after = _dict(risk.get("before")), _dict(risk.get("after"))
    verified = table.get("verified", ev.get("verified"))
    model = _dict(table.get("model"))
    model_text = ", ".join(
        f"{k}={fmt_value(v)}"
        for k, v in model.items()
        if v is None or _is_number(v) or isinstance(v, (str, bool))
    )
    facts = [
        ("Table", table.get("source")),
        ("Kind", table.get("kind")),
        ("Family", table.get("family") or _dict(ev.get("family")).get("name")),
        ("Algorithm", table.get("algorithm")),
        ("Privacy model", model_text or None),
        ("Rows", table.get("rows")),
        ("Verified against its guarantee", "not recorded" if verified is None else verified),
        ("Quasi-identifiers", ", ".join(_strs(view.get("quasi_identifiers"))) or None),
        ("Sensitive attribute", view.get("sensitive")),
        ("Sampling fraction", view.get("sampling_fraction")),
        ("Risk threshold", threshold),
    ]
    rows = "".join(
        f"<tr><th>{esc(k)}</th><td>{esc(fmt_value(v) if v is not None else 'n/a')}</td></tr>"
        for k, v in facts
    )
    a = prosecutor_summary(after.get("class_sizes"), threshold)
    b = prosecutor_summary(before.get("class_sizes"), threshold) if before else None
    head = [
        ("Highest prosecutor risk", "highest", "pct"),
        ("Average prosecutor risk", "average", "pct"),
        (f"Records at risk (risk > {_pct(threshold)})", "at_risk", "pct"),
        ("Sample uniques (records)", "uniques", "int"),
    ]
    hl = []
    for label, key, style in head:
        after_text = fmt_value(a[key], style)
        if b is not None:
            text = (
                f'<span class="before">{esc(fmt_value(b[key], style))}</span> &rarr; '
                f'<span class="after">{esc(after_text)}</span>'
            )
        else:
            text = f'<span class="after">{esc(after_text)}</span>'
        hl.append(
            f'<div class="card"><div class="card-label">{esc(label)}</div>'
            f'<div class="card-value">{text}</div></div>'
        )
    caption = "before (input) &rarr; after (release)" if b is not None else "of the evaluated table"
    warnings = [w for w in ev.get("warnings") or [] if isinstance(w, str)]
    warn = (
        '<div class="warnings" role="alert"><h3>Warnings</h3><ul>'
        + "".join(f"<li>{esc(w[:500])}</li>" for w in warnings)
        + "</ul></div>"
        if warnings
        else '<div class="no-warnings">No warnings.</div>'
    )
    left = [_dict(e) for e in ev.get("not_computed") or []]
    if left:
        warn += (
            '<div class="warnings"><h3>Not computed</h3><ul>'
            + "".join(
                f"<li>{esc(str(e.get('measure', ''))[:100])} &mdash; "
                f"{esc(str(e.get('reason', ''))[:500])}</li>"
                for e in left
            )
            + "</ul></div>"
        )
    return (
        '<section id="summary" class="report-section"><h2>Summary</h2>'
        f'<div class="summary-box"><table class="facts">{rows}</table>'
        f'<div class="headline-risk"><h3>Headline risk, {caption}</h3>'
        f'<div class="cards">{"".join(hl)}</div></div></div>{warn}</section>'
    )


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


def _risk(ev: Mapping[str, Any], r: _Renderer) -> str:
    cols = _risk_columns(ev)
    out = ['<section id="risk" class="report-section"><h2>Re-identification risk</h2>']
    if not cols:
        out.append(_na("No risk figures in this evaluation."))
        return "".join(out) + "</section>"
    threshold = _threshold(_dict(ev.get("view")))
    sums = [(t, prosecutor_summary(d.get("class_sizes"), threshold)) for t, d in cols]
    measures = [
        ("Rows", "rows", "int"),
        ("Equivalence classes", "classes", "int"),
        ("Sample uniques (records)", "uniques", "int"),
        ("Sample uniques (share of records)", "uniques_share", "pct"),
        ("Highest prosecutor risk", "highest", "pct"),
        ("Average prosecutor risk", "average", "pct"),
        (f"Records at risk (prosecutor risk > {_pct(threshold)})", "at_risk", "pct"),
    ]
    head = "".join(f"<th>{esc(t)}</th>" for t, _ in cols)
    body = "".join(
        f"<tr><th>{esc(label)}</th>"
        + "".join(f"<td>{esc(fmt_value(s[key], style))}</td>" for _, s in sums)
        + "</tr>"
        for label, key, style in measures
    )
    out.append(
        "<p>Computed from the class-size frequency table: a record in a class of <i>f</i> "
        "records has prosecutor risk 1/<i>f</i>. Classes are shown as counts, never as rows.</p>"
        f'<table class="compare"><thead><tr><th>Measure</th>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )
    labels, _ = size_buckets(None)
    series = [(t, size_buckets(d.get("class_sizes"))[1]) for t, d in cols]
    out.append(
        '<div class="plots">'
        + _figure(
            svg.bar_chart(
                labels,
                series,
                title="Class-size histogram",
                xlabel="class size (records per class)",
                ylabel="classes",
            )
        )
    )
    rlabels, _ = risk_buckets(None)
    rseries = [(t, risk_buckets(d.get("class_sizes"))[1]) for t, d in cols]
    out.append(
        _figure(
            svg.bar_chart(
                rlabels,
                rseries,
                title="Risk distribution: share of records by prosecutor risk",
                xlabel="prosecutor risk",
                ylabel="share of records",
                percent=True,
            )
        )
        + "</div>"
    )
    arx = [(t, _dict(d.get("arx"))) for t, d in cols]
    out.append("<h3>Prosecutor, journalist and marketer risk; population uniqueness (ARX)</h3>")
    if any(d for _, d in arx):
        table, used = r.headlines("arx", arx)
        out.append(table + r.tables(arx, "Other ARX figures", used))
    else:
        out.append(_na("No ARX measures in this evaluation."))
    return "".join(out) + "</section>"


def _sdc(ev: Mapping[str, Any], r: _Renderer) -> str:
    cols = _risk_columns(ev)
    out = ['<section id="sdc" class="report-section"><h2>sdcMicro risk and SUDA2</h2>']
    for key, title in (("sdcmicro", "Individual and global risk (sdcMicro)"), ("suda2", "SUDA2")):
        sub = [(t, _dict(d.get(key))) for t, d in cols]
        out.append(f"<h3>{esc(title)}</h3>")
        if any(d for _, d in sub):
            table, used = r.headlines(key, sub)
            out.append(table + r.tables(sub, "Other figures", used))
        else:
            out.append(_na(f"No {title} figures in this evaluation."))
    return "".join(out) + "</section>"


def _attacks(ev: Mapping[str, Any], r: _Renderer) -> str:
    out = ['<section id="attacks" class="report-section"><h2>Attacks</h2>']
    for key, title in (("attacks", "Attacks on the classes"), ("anonymeter", "Anonymeter attacks")):
        d = _dict(ev.get(key))
        out.append(f"<h3>{esc(title)}</h3>")
        if not d:
            out.append(_na(f"No {title.lower()} in this evaluation."))
            continue
        table, used = r.headlines(key, [("figure", d)])
        if key == "anonymeter":
            attacks = {name for name, _ in _ANONYMETER_ATTACKS}
            rest = {k: v for k, v in d.items() if k not in attacks}
            details = r.tables([("figure", rest)], "Parameters", used)
            out.append(table + _anonymeter_table(d) + details)
            continue
        overview, shown = _attack_table(d, r)
        linkage = _linkage_table(d.get("linkage"))
        rest = {k: v for k, v in d.items() if k != "linkage" or not linkage}
        details = r.tables([("figure", rest)], "Other figures", used | shown)
        out.append(table + overview + linkage + details)
    return "".join(out) + "</section>"


_ANONYMETER_ATTACKS = (
    ("singling_out_univariate", "Singling out (univariate predicates)"),
    ("singling_out_multivariate", "Singling out (multivariate predicates)"),
    ("linkability", "Linkability"),
    ("inference", "Inference of the sensitive attribute"),
)


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


def _attack_table(d: Mapping[str, Any], r: _Renderer) -> tuple[str, frozenset[str]]:
    """One row per attack with its top-level scalar figures; the dotted paths shown."""
    rows, shown = [], set()
    for name, entry in d.items():
        if not isinstance(entry, Mapping):
            continue
        figures = []
        for k, v in entry.items():
            if v is None or _is_number(v) or isinstance(v, bool):
                figures.append(f"{esc(k)}: {r.cell(str(k), v)}")
                shown.add(f"{name}.{k}")
        rows.append(
            f"<tr><th>{esc(name)}</th><td>{'<br>'.join(figures) or 'see details'}</td></tr>"
        )
    if not rows:
        return "", frozenset()
    return (
        '<table class="attack-table"><thead><tr><th>Attack</th><th>Figures</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>",
        frozenset(shown),
    )


def _utility(ev: Mapping[str, Any], r: _Renderer) -> str:
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
                f"<td>{esc(fmt_value(e.get('unread_rows', 0)))}</td></tr>"
            )
        top = max([1.0, *[v for v in values if math.isfinite(v)]])
        out.append(
            '<div class="plots">'
            + _figure(svg.hbar_chart(labels, values, title="Distance per attribute", xmax=top))
            + '<table class="kv"><thead><tr><th>Attribute</th><th>Total variation</th>'
            "<th>Ordered EMD</th><th>Unread rows</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        )
    else:
        out.append(_na("No distribution distances in this evaluation."))
    out.append("<h3>The family's loss metrics</h3>")
    losses = _dict(u.get("family_losses"))
    out.append(r.tables([("value", losses)], "Family losses") if losses else _na("None recorded."))
    out.append("<h3>Classification accuracy</h3>")
    cls = _dict(u.get("classification"))
    if cls:
        facts = [
            ("Target", cls.get("target")),
            ("Model", cls.get("model")),
            ("Accuracy trained on the original", cls.get("accuracy_original")),
            ("Accuracy trained on the release", cls.get("accuracy_release")),
            ("Majority class baseline", cls.get("majority")),
            ("Held-out test rows", cls.get("test_rows")),
        ]
        rows = "".join(
            f"<tr><th>{esc(k)}</th><td>{esc(fmt_value(v) if v is not None else 'n/a')}</td></tr>"
            for k, v in facts
        )
        bars = [cls.get(k) for k in ("accuracy_original", "accuracy_release", "majority")]
        chart = svg.bar_chart(
            ["original", "release", "majority"],
            [("accuracy", [float(b) if _is_number(b) else None for b in bars])],
            title="Accuracy on held-out originals",
            xlabel="trained on: the original, the release; majority-class baseline",
            ylabel="accuracy",
            ymax=1.0,
            percent=True,
            width=460,
        )
        out.append(f'<div class="plots">{_figure(chart)}<table class="kv">{rows}</table></div>')
    else:
        out.append(_na("No classification measure in this evaluation."))
    return "".join(out) + "</section>"


def _family(ev: Mapping[str, Any], r: _Renderer) -> str:
    fam = _dict(ev.get("family"))
    name = fam.get("name") or _dict(ev.get("table")).get("family")
    out = ['<section id="family" class="report-section"><h2>Family-specific figures</h2>']
    rec, cov = _dict(fam.get("reconstruction")), _dict(fam.get("covariance"))
    if not rec and not cov:
        what = f"the {name} family" if name else "this table"
        out.append(_na(f"No family-specific figures for {what}."))
    if rec:
        out.append(_reconstruction(rec, r))
    if cov:
        out.append(_covariance(cov))
    return "".join(out) + "</section>"


_NUMERIC_METHODS = (("noisy", "published (noisy)"), ("bayes", "Bayes"), ("em", "EM"))
_CATEGORICAL_METHODS = (
    ("noisy", "published (noisy)"),
    ("categorical_ibu", "iterative Bayesian update"),
    ("categorical_inversion", "matrix inversion"),
)


def _reconstruction(rec: Mapping[str, Any], r: _Renderer) -> str:
    """Reconstructed distributions over all rows, per column (``reconstruction.json``)."""
    out = ["<h3>Reconstructed distributions (perturbed release)</h3>"]
    out.append(
        "<p>What an analyst (or an attacker) can recover of each perturbed attribute's "
        "original distribution from the published values and the declared noise. "
        f"Rows: {esc(fmt_value(rec.get('rows')))}.</p>"
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
                            title=f"{col}: reconstructed distribution",
                            xlabel=str(col),
                            ylabel="density",
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
                            title=f"{col}: reconstructed distribution",
                            ylabel="probability",
                            xlabel="values in the order of noise.json (labels not shown)",
                        )
                    )
                )
            methods = _CATEGORICAL_METHODS[1:]
        else:
            continue
        stops = "; ".join(_iterations(t, _dict(dists.get(m))) for m, t in methods)
        outside = dists.get("outside_z_range")
        rows.append(
            f"<tr><th>{esc(col)}</th><td>{esc(e.get('kind'))}</td><td>{esc(dist_name)}</td>"
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
    stop = stop if isinstance(stop, str) else "n/a"
    return f"{title}: {fmt_value(dist.get('iterations'))} iterations, {stop}"


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
"""


def render_html(evaluation: Mapping[str, Any]) -> str:
    """The report of an evaluation dict as one self-contained HTML page.

    Args:
        evaluation: the evaluation dict (schema 1); every part but ``schema`` is optional
            (a missing part renders as "not available").

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
    r = _Renderer(allowed_names(evaluation))
    table = _dict(evaluation.get("table"))
    source = table.get("source") if isinstance(table.get("source"), str) else "table"
    nav = "".join(
        f'<a href="#{s}">{esc(t)}</a>'
        for s, t in zip(
            SECTIONS,
            ("Summary", "Risk", "sdcMicro / SUDA2", "Attacks", "Utility", "Family", "Glossary"),
            strict=True,
        )
    )
    body = "".join(
        [
            _summary(evaluation),
            _risk(evaluation, r),
            _sdc(evaluation, r),
            _attacks(evaluation, r),
            _utility(evaluation, r),
            _family(evaluation, r),
            _glossary(),
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
