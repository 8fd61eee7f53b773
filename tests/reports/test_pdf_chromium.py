"""The report in a real headless Chromium: the DOM holds the scorecard, every chart and every
section, no console error is logged, a screenshot is kept in tests/artifacts/; and the PDF.

Skipped with a reason when Chromium is not installed (`apt-get install chromium`, done by
.ci/run); the missing-Chromium error itself is tested without it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from reports.html.pdf import ChromiumMissing, find_chromium, run_chromium, write_pdf

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
needs_chromium = pytest.mark.skipif(
    find_chromium() is None,
    reason="headless Chromium not installed (apt-get install chromium); .ci/run installs it")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("vl_convert", reason="charts need vl-convert-python (a project dependency)")
    import json

    from reports.html.report import write_html
    from tests.reports.conftest import FIXTURES, typed

    result: dict[str, Any] = json.loads((FIXTURES / "result_full.json").read_text("utf-8"))
    path = tmp_path_factory.mktemp("report") / "scorecard.html"
    write_html(typed(result), path)
    return path


@needs_chromium
def test_rendered_dom_has_every_section_and_chart_and_no_console_error(report: Path) -> None:
    done = run_chromium(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
                         "--dump-dom", report.as_uri()])
    dom = done.stdout
    ids = set(re.findall(r'\bid="([^"]+)"', dom))
    for section in ("summary", "header", "recommendation", "excluded", "summary-table",
                    "freshness-line", "appendix", "freshness", "scorecard-section", "pareto",
                    "probabilities", "tornado", "break-even", "configurations", "sizing",
                    "diff", "candidates", "assumptions", "methodology", "sources"):
        assert section in ids, section
    # the great-tables scorecard: its wrapper id, one body row per candidate
    table = re.search(r'id="scorecard".*?</table>', dom, flags=re.DOTALL)
    assert table is not None
    assert len(re.findall(r'<th[^>]*class="gt_row gt_left gt_stub', table.group(0))) == 7
    for chart in ("chart-pareto-carbon", "chart-pareto-energy", "chart-tornado",
                  "chart-break-even"):
        body = re.search(rf'<figure id="{chart}"[^>]*>(.*?)</figure>', dom, flags=re.DOTALL)
        assert body and "<svg" in body.group(1), chart
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console


@needs_chromium
def test_screenshot_saved_as_artifact(report: Path) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    shot.unlink(missing_ok=True)
    run_chromium(["--window-size=1500,4200", f"--screenshot={shot}", report.as_uri()])
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_chromium
def test_pdf_is_printed(report: Path, tmp_path: Path) -> None:
    pdf = tmp_path / "scorecard.pdf"
    write_pdf(report, pdf)
    data = pdf.read_bytes()
    assert data[:5] == b"%PDF-"
    assert len(re.findall(rb"/Type\s*/Page\b", data)) >= 2  # a multi-page report


def test_without_chromium_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setenv("SCORECARD_CHROMIUM", str(tmp_path / "no-such-chromium"))
    with pytest.raises(ChromiumMissing, match="apt-get install chromium"):
        write_pdf(tmp_path / "x.html", tmp_path / "x.pdf")


@needs_chromium
def test_the_console_check_sees_a_console_error(tmp_path: Path) -> None:
    """The DOM test's console check can fail: a page that logs an error is caught."""
    page = tmp_path / "error.html"
    page.write_text('<html><body><script>console.error("boom")</script></body></html>',
                    encoding="utf-8")
    done = run_chromium(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000",
                         "--dump-dom", page.as_uri()])
    assert any("CONSOLE" in line and "boom" in line for line in done.stderr.splitlines())
