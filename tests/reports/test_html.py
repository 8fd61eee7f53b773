"""The HTML report: snapshot, determinism, escaping, absent sections, self-containment, and
the real bundled example rendered end to end."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reports.html import render_html
from tests.reports.conftest import check_snapshot, strip_volatile_html, without_optional

pytest.importorskip("altair", reason="charts need altair (a project dependency)")
pytest.importorskip("vl_convert", reason="charts need vl-convert-python (a project dependency)")

SECTIONS = ("header", "freshness", "scorecard-section", "scorecard", "pareto",
            "chart-pareto-carbon", "chart-pareto-energy", "probabilities", "tornado",
            "chart-tornado", "break-even", "chart-break-even", "sizing", "diff", "candidates",
            "assumptions", "methodology", "sources")


def ids(page: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page))


def figure(page: str, figure_id: str) -> str:
    match = re.search(rf'<figure id="{figure_id}"[^>]*>(.*?)</figure>', page, flags=re.DOTALL)
    assert match, figure_id
    return match.group(1)


@pytest.fixture(scope="module")
def page(_full: dict[str, Any]) -> str:
    """The full fixture rendered once for the tests that only read the page."""
    return render_html(_full)


def test_snapshot_of_the_full_result(page: str) -> None:
    check_snapshot("result_full.html", strip_volatile_html(page))


def test_two_renders_are_identical_including_svg(page: str, full: dict[str, Any]) -> None:
    assert render_html(full) == page
    # element ids (the charts' clip paths included) are unique within the page
    every = re.findall(r'\bid="([^"]+)"', page)
    assert len(every) == len(set(every))


def test_every_section_and_chart_is_present_with_svg(page: str, full: dict[str, Any]) -> None:
    assert set(SECTIONS) <= ids(page)
    for chart in ("chart-pareto-carbon", "chart-pareto-energy", "chart-tornado",
                  "chart-break-even"):
        assert "<svg" in figure(page, chart), chart
    # The Pareto chart names every plotted candidate (ids as point labels).
    carbon = figure(page, "chart-pareto-carbon")
    for c in full["candidates"]:
        assert c["id"] in carbon
    # p5-p95 ranges in the scorecard: FR H200 CPM 0.972 (0.856–1.147) in the fixture
    # (0.97222 x 0.88 = 0.8556, x 1.18 = 1.1472).
    assert "0.972 (0.856–1.147)" in page
    assert "EXAMPLE DATA" in page
    assert "not computed for this proposal" not in page


def test_absent_sections_say_so_instead_of_vanishing(full: dict[str, Any]) -> None:
    page = render_html(without_optional(full))
    assert set(SECTIONS) <= ids(page)  # every section is still there
    for what in ("P(frontier)", "Pairwise probabilities", "Tornado chart", "Break-even curve",
                 "Demand sizing", "p5–p95 ranges"):
        assert f"{what}: not computed for this proposal" in page, what
    assert "<svg" not in figure(page, "chart-tornado")
    assert "<svg" in figure(page, "chart-pareto-carbon")  # the point figures still plot
    assert "Formulas: not carried by this result" in page  # a result stored before them


def test_strings_from_proposals_and_sources_are_escaped(full: dict[str, Any]) -> None:
    attack = "<script>alert(1)</script>"
    full["proposal"] = f"Plan {attack}"
    c = full["candidates"][0]
    c["label"] = attack
    c["notes"] = [f"note {attack}"]
    c["detail"]["cost_source"] = '"><img src=x onerror=alert(2)>'
    full["sources"][0]["url"] = "javascript:alert(3)"
    full["sources"][0]["licence"] = attack
    full["tornado"][0]["input"] = attack
    page = render_html(full)
    assert "<script" not in page  # no script at all: the report runs no JavaScript
    assert "<img src=x" not in page
    assert 'href="javascript:' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # in the great-tables scorecard too (its own escaping)
    table = re.search(r'id="scorecard".*?</table>', page, flags=re.DOTALL)
    assert table and "&lt;script&gt;alert(1)&lt;/script&gt;" in table.group(0)


def test_self_contained_no_network_reference(page: str) -> None:
    assert not re.search(r"""(src|srcset)=["']?https?:""", page)
    assert "@import" not in page and "url(http" not in page
    assert "<link" not in page


def test_the_real_bundled_example_renders(tmp_path: Path) -> None:
    """`scorecard run`'s own result (whatever the engine adds) renders with every section."""
    from contextlib import redirect_stdout
    from io import StringIO

    from pipeline.run import execute

    out = StringIO()
    with redirect_stdout(out):
        code = execute(None, vintage=None, out=None, db=tmp_path / "s.duckdb", json_out=True,
                       now=datetime(2026, 11, 1, 9, 0, tzinfo=UTC))
    assert code == 0
    result = json.loads(out.getvalue())
    page = render_html(result)
    assert set(SECTIONS) <= ids(page)
    for c in result["candidates"]:
        assert f'id="candidate-{c["id"]}"' in page
    for s in result["sources"]:
        assert s["snapshot_sha256"] in page
    # the methodology prints the engine's own formulas, not a copy that could drift: e.g.
    # CPM over served_tokens_per_s (goodput x billed utilisation), energy over average power
    from pipeline.engine.metrics import STEPS

    methodology = re.search(r'<section id="methodology">.*?</section>', page, flags=re.DOTALL)
    assert methodology
    for step in STEPS:
        assert f"<td>{html.escape(step.formula)}</td>" in methodology.group(0), step.name
    assert "average_power_w / served_tokens_per_s" in methodology.group(0)
