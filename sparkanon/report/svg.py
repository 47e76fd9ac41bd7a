"""Inline SVG plots for the HTML report: bars, histograms, step lines and heatmaps.

Hand-written SVG rather than a plotting library: the report is written by every
``sparkanon run``, so it must be cheap, deterministic (the same numbers give the same
bytes) and self-contained (no fonts, scripts or stylesheets to load). Every text that
reaches the SVG goes through :func:`esc`; callers pass only column names, level names
from the config, the report's own captions and numbers - never data values.

Every plot is an ``<svg class="plot">`` with explicit ``width`` and ``height`` (the
browser check measures them).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

WIDTH = 540
"""Default plot width in pixels."""
HEIGHT = 300
"""Default plot height in pixels."""
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#9c755f")
"""Series colours (Tableau 10, colour-blind friendly enough for two to four series)."""
_MARGIN = {"left": 64, "right": 16, "top": 36, "bottom": 56}


@dataclass(frozen=True)
class ChartFrame:
    """What frames a plot with an x and a y axis: its title, axis labels and size.

    Attributes:
        title: the plot's title.
        xlabel: the x axis label (none when empty).
        ylabel: the y axis label (none when empty).
        width: pixels.
        height: pixels.
    """

    title: str
    xlabel: str = ""
    ylabel: str = ""
    width: int = WIDTH
    height: int = HEIGHT


def esc(text: object) -> str:
    """``text`` escaped for HTML/SVG text and attribute values."""
    return html.escape(str(text), quote=True)


def num(x: float) -> str:
    """A coordinate with two decimals (short, deterministic SVG)."""
    return f"{x:.2f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def tick(x: float) -> str:
    """An axis tick label, never in scientific notation: ``20,000``, ``0.25``, ``0.00002``."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if abs(x) >= 1000:
        return f"{x:,.0f}" if float(x).is_integer() or abs(x) >= 10_000 else f"{x:,.1f}"
    if abs(x) >= 1e-3:
        return f"{x:.4g}"
    return f"{x:.{1 - math.floor(math.log10(abs(x)))}f}".rstrip("0")


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering ``[lo, hi]``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else [0.0]
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks: list[float] = []
    t = first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def _open(title: str, width: int, height: int, label: str) -> list[str]:
    room = max(10, int(width / 7.5))
    title = title if len(title) <= room else title[: room - 3] + "..."
    return [
        f'<svg class="plot" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(label or title)}">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{width / 2:.0f}" y="20" text-anchor="middle" class="plot-title">'
        f"{esc(title)}</text>",
    ]


def _legend(names: Sequence[str], width: int) -> list[str]:
    out: list[str] = []
    x = _MARGIN["left"]
    for i, name in enumerate(names):
        colour = PALETTE[i % len(PALETTE)]
        out.append(f'<rect x="{x}" y="26" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{x + 14}" y="35" class="plot-legend">{esc(name)}</text>')
        x += 24 + 7 * len(str(name))
        if x > width - 60:
            break
    return out


def _y_axis(
    ymax: float, x0: float, x1: float, y0: float, y1: float, label: str, fmt=tick
) -> list[str]:
    """Horizontal grid lines and tick labels for values 0..ymax mapped to y0..y1."""
    out = [f'<line x1="{num(x0)}" y1="{num(y0)}" x2="{num(x0)}" y2="{num(y1)}" class="axis"/>']
    for t in nice_ticks(0.0, ymax):
        y = y0 - (t / ymax) * (y0 - y1) if ymax > 0 else y0
        out.append(
            f'<line x1="{num(x0)}" y1="{num(y)}" x2="{num(x1)}" y2="{num(y)}" class="grid"/>'
        )
        out.append(
            f'<text x="{num(x0 - 4)}" y="{num(y + 4)}" text-anchor="end" class="tick">'
            f"{esc(fmt(t))}</text>"
        )
    if label:
        ym = (y0 + y1) / 2
        out.append(
            f'<text x="14" y="{num(ym)}" text-anchor="middle" class="axis-label" '
            f'transform="rotate(-90 14 {num(ym)})">{esc(label)}</text>'
        )
    return out


def _open_axes(
    frame: ChartFrame,
    names: Sequence[str],
    top: float,
    fmt: Callable[[float], str] = tick,
) -> tuple[list[str], tuple[float, float, float, float]]:
    """The opening of a plot with a y axis: title, legend (of two or more series), y axis.

    Returns:
        The elements so far and the plot area ``(x0, x1, y0, y1)``: x from left to
        right, y from the bottom (the x axis) to the top.
    """
    x0, x1 = _MARGIN["left"], frame.width - _MARGIN["right"]
    y0, y1 = frame.height - _MARGIN["bottom"], _MARGIN["top"] + 8
    out = _open(frame.title, frame.width, frame.height, frame.title)
    out += _legend(names, frame.width) if len(names) > 1 else []
    out += _y_axis(top, x0, x1, y0, y1, frame.ylabel, fmt)
    return out, (x0, x1, y0, y1)


def _close(out: list[str], frame: ChartFrame, x0: float, x1: float, y0: float) -> str:
    """The plot's elements, its x axis line and label added, as one ``<svg>`` element."""
    out.append(f'<line x1="{x0}" y1="{num(y0)}" x2="{x1}" y2="{num(y0)}" class="axis"/>')
    if frame.xlabel:
        out.append(
            f'<text x="{(x0 + x1) / 2:.0f}" y="{frame.height - 6}" text-anchor="middle" '
            f'class="axis-label">{esc(frame.xlabel)}</text>'
        )
    return _end(out)


def _end(out: list[str], *last: str) -> str:
    """The plot's elements, ``last`` added after them, as one closed ``<svg>`` element."""
    return "".join([*out, *last, "</svg>"])


def bar_chart(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    frame: ChartFrame,
    *,
    ymax: float | None = None,
    percent: bool = False,
) -> str:
    """Grouped vertical bars: one group per category, one bar per series.

    Args:
        categories: the group labels (column names, bucket names: never data values).
        series: ``(name, values)`` pairs, one value per category (``None`` -> no bar).
        frame: the title, axis labels and size.
        ymax: the top of the y axis (default: the largest value).
        percent: tick labels as percentages of 1.

    Returns:
        The ``<svg>`` element.
    """
    fmt = (lambda t: f"{tick(t * 100)}%") if percent else tick
    values = [v for _, vs in series for v in vs if v is not None and math.isfinite(v)]
    top = ymax if ymax is not None else max(values, default=0.0)
    top = top if top > 0 else 1.0
    out, (x0, x1, y0, y1) = _open_axes(frame, [name for name, _ in series], top, fmt)
    n = max(len(categories), 1)
    group = (x1 - x0) / n
    bar = group * 0.8 / max(len(series), 1)
    rotate = n > 8 or max((len(c) for c in categories), default=0) * 6.5 > group
    for i, cat in enumerate(categories):
        gx = x0 + i * group + group * 0.1
        for s, (name, vals) in enumerate(series):
            v = vals[i] if i < len(vals) else None
            if v is None or not math.isfinite(v):
                continue
            h = max(0.0, min(v, top)) / top * (y0 - y1)
            out.append(
                f'<rect x="{num(gx + s * bar)}" y="{num(y0 - h)}" width="{num(bar)}" '
                f'height="{num(h)}" fill="{PALETTE[s % len(PALETTE)]}">'
                f"<title>{esc(name)} {esc(cat)}: {esc(fmt(v))}</title></rect>"
            )
        cx = x0 + (i + 0.5) * group
        if rotate:
            out.append(
                f'<text x="{num(cx)}" y="{num(y0 + 12)}" text-anchor="end" class="tick" '
                f'transform="rotate(-35 {num(cx)} {num(y0 + 12)})">{esc(cat)}</text>'
            )
        else:
            out.append(
                f'<text x="{num(cx)}" y="{num(y0 + 16)}" text-anchor="middle" class="tick">'
                f"{esc(cat)}</text>"
            )
    return _close(out, frame, x0, x1, y0)


def hbar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    xmax: float = 1.0,
    width: int = WIDTH,
) -> str:
    """Horizontal bars, one per label (e.g. a distance per attribute, 0..xmax)."""
    row = 22
    left = min(220, 16 + 7 * max((len(s) for s in labels), default=4))
    height = _MARGIN["top"] + 24 + row * max(len(labels), 1)
    x0, x1 = left, width - 60
    out = _open(title, width, height, title)
    top = xmax if xmax > 0 else 1.0
    for t in nice_ticks(0.0, top, 4):
        x = x0 + t / top * (x1 - x0)
        out.append(
            f'<line x1="{num(x)}" y1="{_MARGIN["top"]}" x2="{num(x)}" '
            f'y2="{height - 20}" class="grid"/>'
        )
        out.append(
            f'<text x="{num(x)}" y="{height - 6}" text-anchor="middle" class="tick">'
            f"{esc(tick(t))}</text>"
        )
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        y = _MARGIN["top"] + i * row
        ok = v is not None and math.isfinite(v)
        w = max(0.0, min(v, top)) / top * (x1 - x0) if ok else 0.0
        out.append(
            f'<text x="{x0 - 6}" y="{y + 15}" text-anchor="end" class="tick">{esc(label)}</text>'
        )
        out.append(
            f'<rect x="{x0}" y="{y + 4}" width="{num(w)}" height="{row - 8}" fill="{PALETTE[0]}"/>'
        )
        out.append(
            f'<text x="{num(x0 + w + 4)}" y="{y + 15}" class="tick">'
            f"{esc(tick(v) if ok else 'n/a')}</text>"
        )
    return _end(
        out, f'<line x1="{x0}" y1="{_MARGIN["top"]}" x2="{x0}" y2="{height - 20}" class="axis"/>'
    )


def histogram(
    edges: Sequence[float],
    series: Sequence[tuple[str, Sequence[float]]],
    frame: ChartFrame,
    *,
    density: bool = False,
) -> str:
    """Step outlines of one or more histograms over the same ``edges``.

    Args:
        edges: ``k + 1`` increasing finite bin edges.
        series: ``(name, counts)`` with ``k`` counts each.
        frame: the title, axis labels and size.
        density: divide each count by its bin's width (unequal bins stay comparable).

    Returns:
        The ``<svg>`` element.
    """
    e = [float(x) for x in edges]
    heights = []
    for name, counts in series:
        hs = [float(c) for c in counts]
        if density:
            hs = [c / (e[i + 1] - e[i]) if e[i + 1] > e[i] else 0.0 for i, c in enumerate(hs)]
        heights.append((name, hs))
    top = max((h for _, hs in heights for h in hs if math.isfinite(h)), default=0.0)
    top = top if top > 0 else 1.0
    out, (x0, x1, y0, y1) = _open_axes(frame, [n for n, _ in heights], top)
    lo, hi = e[0], e[-1]
    span = hi - lo if hi > lo else 1.0

    def sx(v: float) -> float:
        return x0 + (v - lo) / span * (x1 - x0)

    def sy(v: float) -> float:
        return y0 - max(0.0, v) / top * (y0 - y1)

    for s, (name, hs) in enumerate(heights):
        colour = PALETTE[s % len(PALETTE)]
        pts = [f"{num(sx(e[0]))},{num(sy(0))}"]
        for i, h in enumerate(hs):
            pts.append(f"{num(sx(e[i]))},{num(sy(h))}")
            pts.append(f"{num(sx(e[i + 1]))},{num(sy(h))}")
        pts.append(f"{num(sx(e[-1]))},{num(sy(0))}")
        fill = f'fill="{colour}" fill-opacity="0.25"' if len(heights) == 1 else 'fill="none"'
        out.append(
            f'<polyline points="{" ".join(pts)}" stroke="{colour}" stroke-width="1.8" {fill}>'
            f"<title>{esc(name)}</title></polyline>"
        )
    for t in nice_ticks(lo, hi):
        out.append(
            f'<text x="{num(sx(t))}" y="{num(y0 + 16)}" text-anchor="middle" class="tick">'
            f"{esc(tick(t))}</text>"
        )
    return _close(out, frame, x0, x1, y0)


def _diverging(v: float, vmax: float) -> str:
    """Blue (negative) - white - red (positive) colour of ``v`` in ``[-vmax, vmax]``."""
    t = 0.0 if vmax <= 0 or not math.isfinite(v) else max(-1.0, min(1.0, v / vmax))
    if t >= 0:
        r, g, b = 255, round(255 - 170 * t), round(255 - 190 * t)
    else:
        r, g, b = round(255 + 200 * t), round(255 + 120 * t), 255
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(
    matrix: Sequence[Sequence[float]],
    labels: Sequence[str],
    *,
    title: str,
    vmax: float,
    size: int = 240,
) -> str:
    """A square matrix (e.g. a covariance) as coloured cells, symmetric scale ``+-vmax``.

    Args:
        matrix: ``n x n`` numbers.
        labels: the ``n`` row/column names.
        title: the plot's title.
        vmax: the value mapped to full red (``-vmax`` to full blue).
        size: the matrix area in pixels.

    Returns:
        The ``<svg>`` element.
    """
    n = max(len(matrix), 1)
    left = min(140, 12 + 7 * max((len(s) for s in labels), default=2))
    top = 40
    cell = size / n
    width, height = left + size + 16, top + size + 24
    out = _open(title, width, height, title)
    for i, row in enumerate(matrix):
        label = labels[i] if i < len(labels) else str(i)
        out.append(
            f'<text x="{left - 4}" y="{num(top + (i + 0.5) * cell + 4)}" text-anchor="end" '
            f'class="tick">{esc(label)}</text>'
        )
        for j, v in enumerate(row):
            out.append(
                f'<rect x="{num(left + j * cell)}" y="{num(top + i * cell)}" '
                f'width="{num(cell)}" height="{num(cell)}" fill="{_diverging(float(v), vmax)}" '
                f'stroke="#ffffff" stroke-width="0.5"><title>{esc(label)} x '
                f"{esc(labels[j] if j < len(labels) else j)}: {esc(tick(float(v)))}</title></rect>"
            )
            if n <= 8:
                cx, cy = left + (j + 0.5) * cell, top + (i + 0.5) * cell + 4
                out.append(
                    f'<text x="{num(cx)}" y="{num(cy)}" text-anchor="middle" class="cell">'
                    f"{esc(tick(float(v)))}</text>"
                )
    return _end(
        out,
        f'<text x="{left}" y="{height - 6}" class="tick">blue -{esc(tick(vmax))}, white 0, '
        f"red +{esc(tick(vmax))}</text>",
    )
