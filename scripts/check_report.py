#!/usr/bin/env python3
"""Check an evaluation report in a real headless browser (Chromium).

    python -m scripts.check_report REPORT.html [--screenshot out.png] [--chromium PATH]

1. **Network off** (static): the HTML has no ``src``/``href`` (nor CSS ``url()`` or
   ``@import``) pointing at ``http://``, ``https://`` or ``//``: nothing to load.
2. **Rendered** (browser): a copy of the page with a small probe script appended is
   loaded by headless Chromium (``--dump-dom``); the probe writes into the DOM, for each
   section of :data:`sparkanon.report.html.SECTIONS`, whether it is there with a non-zero
   size, and for every ``svg.plot`` its rendered width and height. Every section must be
   present, the page must have as many plots as its HTML declares (at least one), each of
   non-zero size.
3. **Screenshot** (``--screenshot``): the whole page as a PNG (window as tall as the page,
   up to 16,000 pixels).

Chromium runs with networking features off and a fresh profile directory. Exit 0 when
every check passes, 1 when one fails (each failure printed), 2 when Chromium cannot be
found or run.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sparkanon.report.html import SECTIONS

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)
WIDTH = 1400
MAX_HEIGHT = 16_000
PROBE_ID = "__report_check__"
PROBE = """<script>(function(){
var out={sections:{},plots:[],height:0};
var ids=%s;
for(var i=0;i<ids.length;i++){var el=document.getElementById(ids[i]);
 if(!el){out.sections[ids[i]]=null;continue;}
 var r=el.getBoundingClientRect();out.sections[ids[i]]=[r.width,r.height];}
var ps=document.querySelectorAll('svg.plot');
for(var j=0;j<ps.length;j++){var q=ps[j].getBoundingClientRect();
 out.plots.push([q.width,q.height,ps[j].childElementCount]);}
out.height=Math.ceil(document.documentElement.scrollHeight);
var pre=document.createElement('pre');pre.id='%s';pre.textContent=JSON.stringify(out);
document.body.appendChild(pre);})();</script>"""
_REMOTE = re.compile(
    r"""(?:\b(?:src|href|xlink:href|srcset|poster|action|data)\s*=\s*["']?\s*"""
    r"""|url\(\s*["']?\s*|@import\s+["']?)(?:https?:)?//""",
    re.IGNORECASE,
)


def find_chromium(explicit: str | None = None) -> str | None:
    """The Chromium executable: ``explicit``, ``/usr/bin/chromium`` or one on ``PATH``."""
    if explicit:
        return explicit if Path(explicit).is_file() else None
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def remote_references(text: str) -> list[str]:
    """Every place the HTML would load something over the network (with context)."""
    return [text[max(0, m.start() - 20) : m.end() + 40] for m in _REMOTE.finditer(text)]


def declared_plots(text: str) -> int:
    """How many ``<svg class="plot"`` elements the HTML declares."""
    return len(re.findall(r"<svg\s+class=\"plot\"", text))


def run_chromium(chromium: str, args: list[str], profile: str, timeout: float) -> str:
    """Run Chromium with the fixed flags and a fresh profile; its stdout.

    Raises:
        RuntimeError: Chromium failed or timed out.
    """
    cmd = [chromium, *FLAGS, f"--user-data-dir={profile}", *args]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"chromium did not run: {exc}") from exc
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr.strip()[-800:]}")
    return done.stdout


def probe(chromium: str, report: Path, work: Path, timeout: float) -> dict:
    """Load the page with the probe appended; the probe's findings.

    Raises:
        RuntimeError: Chromium failed, or the probe's output is not in the dumped DOM.
    """
    text = report.read_text(encoding="utf-8")
    script = PROBE % (json.dumps(list(SECTIONS)), PROBE_ID)
    probed = work / "probed.html"
    cut = text.rfind("</body>")
    probed.write_text(
        (text[:cut] + script + text[cut:]) if cut >= 0 else text + script, encoding="utf-8"
    )
    dom = run_chromium(
        chromium,
        [f"--window-size={WIDTH},1000", "--dump-dom", probed.as_uri()],
        str(work / "profile-dom"),
        timeout,
    )
    found = re.search(rf'<pre id="{PROBE_ID}">(.*?)</pre>', dom, re.DOTALL)
    if not found:
        raise RuntimeError("the probe's result is not in the dumped DOM (page did not load?)")
    return json.loads(html.unescape(found.group(1)))


def screenshot(chromium: str, report: Path, out: Path, height: int, work: Path, timeout: float):
    """A PNG of the whole page (``height`` pixels tall, capped at :data:`MAX_HEIGHT`)."""
    out = out.resolve()
    run_chromium(
        chromium,
        [
            f"--window-size={WIDTH},{max(600, min(height, MAX_HEIGHT))}",
            f"--screenshot={out}",
            report.resolve().as_uri(),
        ],
        str(work / "profile-shot"),
        timeout,
    )


def check(report: Path, chromium: str, shot: Path | None, timeout: float) -> list[str]:
    """Every failed check, as a message (empty: the report passes)."""
    text = report.read_text(encoding="utf-8")
    problems = [f"network reference: ...{r}..." for r in remote_references(text)]
    expected = declared_plots(text)
    if expected == 0:
        problems.append("the HTML declares no plot (svg.plot)")
    with tempfile.TemporaryDirectory(prefix="check_report_") as tmp:
        work = Path(tmp)
        found = probe(chromium, report, work, timeout)
        for name, box in found["sections"].items():
            if box is None:
                problems.append(f"section #{name} missing")
            elif not (box[0] > 0 and box[1] > 0):
                problems.append(f"section #{name} has no size ({box[0]} x {box[1]})")
        plots = found["plots"]
        if len(plots) != expected:
            problems.append(f"{len(plots)} plots rendered, {expected} declared")
        for i, (w, h, children) in enumerate(plots):
            if not (w > 0 and h > 0 and children > 0):
                problems.append(f"plot {i + 1} is empty ({w} x {h}, {children} elements)")
        if shot is not None:
            screenshot(chromium, report, shot, int(found["height"]), work, timeout)
            if not shot.is_file() or shot.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
                problems.append(f"no PNG screenshot written to {shot}")
        print(
            f"{report}: {len(found['sections'])} sections, {len(plots)} plots, "
            f"page {found['height']} px tall"
        )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="the report HTML file")
    parser.add_argument("--screenshot", type=Path, help="write a PNG of the whole page here")
    parser.add_argument("--chromium", help="the Chromium executable (default: found)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per browser run")
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"{args.report}: no such file", file=sys.stderr)
        return 2
    chromium = find_chromium(args.chromium)
    if chromium is None:
        print("no Chromium found (apt-get install chromium, or --chromium PATH)", file=sys.stderr)
        return 2
    try:
        problems = check(args.report, chromium, args.screenshot, args.timeout)
    except RuntimeError as exc:
        print(f"{args.report}: {exc}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"FAIL {p}")
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
