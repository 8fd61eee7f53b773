"""The first screen and the one-page summary in a real headless Chromium (issue 15): for the
bundled example and a four-candidate proposal of our own (tests/fixtures/reports/
four_candidates.toml: own 8 x H200 in Germany with TCO, a Scaleway and an OVHcloud offer, AWS
p5 in eu-central-1), the recommendation and the compact scorecard end within the first
1280 x 800 viewport, nothing is wider than the viewport (no horizontal scrolling at 1280 or
1400 px), a 1280 x 800 screenshot is kept in tests/artifacts/, the PDF's first page is the
whole summary with the appendix starting on page 2 (pdftotext per page), and the summary
printed alone is one page (counted in the PDF itself, no poppler needed).

The measurements are taken by the page itself: a copy of the report gets a small script that
writes getBoundingClientRect and scrollWidth into the DOM, which --dump-dom prints (the report
itself runs no JavaScript). Skipped with a reason when Chromium (or, for the PDF pages,
poppler's pdftotext) is not installed.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from contextlib import redirect_stdout
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from reports.html.pdf import find_chromium, run_chromium, write_pdf
from tests.reports.conftest import typed

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
FOUR = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "four_candidates.toml"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="headless Chromium not installed (apt-get install chromium); .ci/run installs it")

MEASURE = """<script>
window.addEventListener("load", () => {
  const bottom = (id) => {
    const e = document.getElementById(id);
    return e ? e.getBoundingClientRect().bottom : null;
  };
  const wide = [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
    .slice(0, 5).map((e) => e.tagName + "#" + e.id + "." + e.className);
  const out = document.createElement("pre");
  out.id = "measurements";
  out.textContent = JSON.stringify({
    scroll_width: document.documentElement.scrollWidth, inner_width: window.innerWidth,
    page_height: document.documentElement.scrollHeight, wider_than_viewport: wide,
    recommendation: bottom("recommendation"), summary_table: bottom("summary-table"),
    summary: bottom("summary")});
  document.body.appendChild(out);
});
</script>"""


def _result(path: Path | None, db: Path) -> dict[str, Any]:
    from pipeline.run import execute

    out = StringIO()
    with redirect_stdout(out):
        assert execute(path, vintage=None, out=None, db=db, json_out=True, now=NOW) == 0
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> the HTML report of the bundled example and of the four-candidate proposal."""
    pytest.importorskip("vl_convert", reason="charts need vl-convert-python")
    from reports.html.report import write_html

    folder = tmp_path_factory.mktemp("first-screen")
    made = {}
    for name, proposal in (("example", None), ("four", FOUR)):
        path = folder / f"{name}.html"
        write_html(typed(_result(proposal, folder / f"{name}.duckdb")), path)
        made[name] = path
    return made


def measure(report: Path, width: int = 1280) -> dict[str, Any]:
    page = report.with_name(f"measure-{width}-{report.name}")
    page.write_text(report.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"),
                    encoding="utf-8")
    done = run_chromium([f"--window-size={width},800", "--virtual-time-budget=5000",
                         "--dump-dom", page.as_uri()])
    found = re.search(r'<pre id="measurements">(.*?)</pre>', done.stdout, flags=re.DOTALL)
    assert found, "the measuring script wrote nothing"
    figures: dict[str, Any] = json.loads(found.group(1))
    return figures


@pytest.mark.parametrize("name", ["example", "four"])
def test_the_answer_is_on_the_first_screen_and_nothing_scrolls_sideways(
        reports: dict[str, Path], name: str) -> None:
    m = measure(reports[name])
    print(name, m)  # the figures, with -s
    assert m["inner_width"] == 1280
    assert m["recommendation"] is not None and m["recommendation"] <= 800, m
    assert m["summary_table"] is not None and m["summary_table"] <= 800, m
    assert m["scroll_width"] <= 1280, m
    assert m["wider_than_viewport"] == [], m


@pytest.mark.parametrize("name", ["example", "four"])
def test_no_horizontal_scrolling_at_1400_px(reports: dict[str, Path], name: str) -> None:
    m = measure(reports[name], 1400)
    assert m["scroll_width"] <= 1400, m


def test_the_measurement_sees_a_page_that_is_too_wide(tmp_path: Path) -> None:
    """The check can fail: a 2,000 px table scrolls sideways and is reported."""
    page = tmp_path / "wide.html"
    page.write_text('<html><body><div id="recommendation">x</div>'
                    '<table style="width:2000px"><tr><td>wide</td></tr></table></body></html>',
                    encoding="utf-8")
    m = measure(page)
    assert m["scroll_width"] > 1280 and m["wider_than_viewport"]
    assert m["recommendation"] <= 800


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize("name", ["example", "four"])
def test_first_screen_screenshot_saved_as_artifact(reports: dict[str, Path], name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"first-screen-{name}.png"
    shot.unlink(missing_ok=True)
    run_chromium(["--window-size=1280,800", f"--screenshot={shot}", reports[name].as_uri()])
    assert png_size(shot) == (1280, 800)


def page_text(pdf: Path, page: int) -> str:
    done = subprocess.run(["pdftotext", "-layout", "-f", str(page), "-l", str(page), str(pdf),
                           "-"], capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.skipif(shutil.which("pdftotext") is None,
                    reason="pdftotext (poppler-utils) not installed: apt-get install "
                           "poppler-utils")
@pytest.mark.parametrize("name", ["example", "four"])
def test_the_pdf_summary_is_one_page_and_the_appendix_starts_page_2(
        reports: dict[str, Path], name: str, tmp_path: Path) -> None:
    pdf = tmp_path / f"{name}.pdf"
    write_pdf(reports[name], pdf)
    first, second = page_text(pdf, 1), page_text(pdf, 2)
    # the summary's first and last printed elements are on page 1 (the appendix links are
    # not printed), the appendix is not
    assert "Recommended:" in first
    assert "What would change it" in first
    assert "Sovereignty level: 4 own" in first
    assert "Appendix" not in first
    # the appendix opens page 2
    assert second.strip().startswith("Appendix"), second[:200]


@pytest.mark.parametrize("name", ["example", "four"])
def test_the_summary_alone_prints_as_one_page(reports: dict[str, Path], name: str,
                                             tmp_path: Path) -> None:
    """Without poppler too: the page with its appendix hidden in print is one PDF page, so
    the summary fits one A4 page (Chromium writes its page objects uncompressed)."""
    page = tmp_path / f"summary-{name}.html"
    page.write_text(reports[name].read_text(encoding="utf-8").replace(
        "</head>", "<style>@media print { #appendix { display: none; } }</style></head>"),
        encoding="utf-8")
    pdf = tmp_path / f"summary-{name}.pdf"
    write_pdf(page, pdf)
    assert len(re.findall(rb"/Type\s*/Page\b", pdf.read_bytes())) == 1
    # and the whole report is longer: the count sees more than one page
    whole = tmp_path / f"{name}.pdf"
    write_pdf(reports[name], whole)
    assert len(re.findall(rb"/Type\s*/Page\b", whole.read_bytes())) > 1
