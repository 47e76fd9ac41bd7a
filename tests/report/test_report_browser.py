"""The report in a real headless browser: scripts/check_report.py on fixture reports.

Slow (one Chromium start per page). Skipped only when no Chromium executable can be found
(``/usr/bin/chromium`` or one on ``PATH``); ``.ci/run`` installs Debian's ``chromium``.
"""

from __future__ import annotations

import pytest

from scripts import check_report
from sparkanon.report import write_report
from tests._report import SHAPES

CHROMIUM = check_report.find_chromium()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="no Chromium found (/usr/bin/chromium or chromium on PATH): "
        "apt-get install chromium to run the browser check of the report",
    ),
]


@pytest.mark.parametrize("shape", ["perturbed", "synthetic"])
def test_report_renders_in_chromium(tmp_path, shape, capsys):
    page = tmp_path / "report.html"
    shot = tmp_path / "report.png"
    write_report(SHAPES[shape](), str(page))
    assert check_report.main([str(page), "--screenshot", str(shot)]) == 0, capsys.readouterr()
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 10_000  # a real page, not a blank one


def test_check_fails_on_a_broken_report(tmp_path, capsys):
    page = tmp_path / "report.html"
    write_report(SHAPES["one_table"](), str(page))
    text = page.read_text(encoding="utf-8")
    broken = text.replace('<section id="glossary"', '<section id="elsewhere"').replace(
        '<svg class="plot" width="540" height="300"',
        '<svg class="plot" width="0" height="0"',
        1,
    )
    broken = broken.replace("</main>", '<img src="https://127.0.0.1:9/x.png"></main>')
    page.write_text(broken, encoding="utf-8")
    assert check_report.main([str(page)]) == 1
    out = capsys.readouterr().out
    assert "section #glossary missing" in out
    assert "plot 1 is empty" in out
    assert "network reference" in out
