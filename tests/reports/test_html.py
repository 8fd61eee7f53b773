"""The HTML report: snapshot, determinism, escaping, absent sections, self-containment, the
summary (first screen) before the appendix, the small defects of issue 15 (degenerate ranges,
None in citations, engine column names in sentences, long hashes), and the real bundled
example rendered end to end."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reports.html.report import render_html
from tests.reports.conftest import check_snapshot, strip_volatile_html, typed, without_optional

pytest.importorskip("vl_convert", reason="charts need vl-convert-python (a project dependency)")

SUMMARY = ("summary", "header", "freshness-line", "recommendation", "excluded",
           "summary-scorecard", "summary-table", "contents")
APPENDIX = ("appendix", "appendix-title", "pareto", "scorecard-section", "scorecard",
            "cost-breakdown", "probabilities", "tornado", "break-even", "configurations",
            "sizing", "diff", "candidates", "assumptions", "data-freshness", "freshness",
            "methodology", "sources")
SECTIONS = SUMMARY + APPENDIX


def ids(page: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page))


def section(page: str, section_id: str) -> str:
    match = re.search(rf'<section id="{section_id}"[^>]*>(.*?)</section>', page,
                      flags=re.DOTALL)
    assert match, section_id
    return match.group(1)


def summary_part(page: str) -> str:
    """The summary block: from its opening to the appendix."""
    start, end = page.index('<div id="summary">'), page.index('<div id="appendix">')
    return page[start:end]


@pytest.fixture(scope="module")
def page(_full: dict[str, Any]) -> str:
    """The full fixture rendered once for the tests that only read the page."""
    return render_html(typed(_full))


def test_snapshot_of_the_full_result(page: str) -> None:
    check_snapshot("result_full.html", strip_volatile_html(page))


def test_two_renders_are_identical_including_svg(page: str, full: dict[str, Any]) -> None:
    assert render_html(typed(full)) == page
    # element ids (the charts' clip paths included) are unique within the page
    every = re.findall(r'\bid="([^"]+)"', page)
    assert len(every) == len(set(every))


def test_every_section_and_chart_is_present_with_svg(page: str, full: dict[str, Any]) -> None:
    assert set(SECTIONS) <= ids(page)
    for chart in ("pareto", "tornado", "break-even"):
        assert "<svg" in section(page, chart), chart
    # The Pareto section names every plotted candidate (ids as point labels).
    pareto = section(page, "pareto")
    for c in full["candidates"]:
        assert c["id"] in pareto
    # p5-p95 ranges in the full scorecard: FR H200 CPM 0.972 (0.856–1.147) in the fixture
    # (0.97222 x 0.88 = 0.8556, x 1.18 = 1.1472); in the summary table the range sits under
    # the figure.
    assert "0.972 (0.856–1.147)" in page
    assert "0.972<small>0.856–1.147</small>" in summary_part(page)
    assert "EXAMPLE DATA" in summary_part(page)
    assert "not computed for this proposal" not in page


def test_the_summary_comes_first_and_answers(page: str, full: dict[str, Any]) -> None:
    """Recommendation, excluded candidates and the compact scorecard are in the summary; the
    freshness table, the full scorecard and the sources are in the appendix after it."""
    head = summary_part(page)
    for key in ("recommendation", "excluded", "summary-table", "freshness-line"):
        assert f'id="{key}"' in head, key
    for key in ("freshness", "scorecard", "sources-table", "assumptions-table"):
        assert f'id="{key}"' not in head, key
    rec = full["recommendation"]
    chosen = section(page, "recommendation")
    assert f'<span id="chosen">{rec["candidate"]}</span>' in chosen
    # 20,294 EUR a month x 12 = 243,528 EUR a year (the fixture's figures); the split
    # 12,000 capex annuity + 8,294 opex = 20,294
    assert "20,294 EUR a month · 243,528 EUR a year" in chosen
    assert "capex annuity 12,000 EUR + opex 8,294 EUR a month" in chosen
    assert f"{rec['p_chosen_cheapest']:.0%} of the Monte Carlo draws" in chosen
    assert rec["runner_up"] in chosen
    for change in rec["what_would_change_it"]:
        assert change["text"].split(" becomes")[0] in chosen
    # engine column names are words in the sentences a committee reads
    assert "cpm_eur_per_mtok" not in chosen and "lowest CPM" in chosen
    # the excluded candidate with its reason, in the summary
    excluded = section(page, "excluded")
    assert "azure-nd-h100-v5-fp8" in excluded
    assert "sovereignty level 1 is below the policy minimum 2" in excluded
    # the four axes for every candidate, units in the headers, the basis stated
    table = re.search(r'<table[^>]*id="summary-table".*?</table>', head, flags=re.DOTALL)
    assert table
    for header in ("CPM (EUR/Mtok)", "Energy (J/token)", "Carbon (gCO2e/Mtok)",
                   "Sovereignty level (0–4)"):
        assert header in table.group(0), header
    assert table.group(0).count("<tr") == len(full["candidates"]) + 1
    # the fleet and its month at the demand, from the result's sizing list (the fixture has
    # no per-candidate sizing): onprem-es-h200-fp8, 2 provisioned instances, 20,294 EUR
    row = re.search(r'<tr class="chosen">.*?</tr>', table.group(0))
    assert row and ('<td class="num">2<small>provisioned</small></td>'
                    '<td class="num">20,294</td>') in row.group(0)
    assert "Per million output tokens" in head
    assert 'class="chosen"' in table.group(0)
    # no grade letters needing a legend: the spelled level, and the legend line
    assert "2 · EU provider" in table.group(0) and "Sovereignty level: 4 own" in head
    # freshness is one line linking to its table in the appendix
    assert 'href="#data-freshness"' in head and 'id="data-freshness"' in page


def test_grades_are_spelled_in_the_full_scorecard(page: str) -> None:
    table = re.search(r'id="scorecard".*?</table>', page, flags=re.DOTALL)
    assert table
    assert "declared / reference / declared" in table.group(0)
    assert "D R D" not in page and "M measured" not in page


def test_degenerate_range_prints_one_value(full: dict[str, Any]) -> None:
    """A p5-p95 range equal at the printed decimals is the single value (issue 15:
    `16.782 (16.782–16.782)`)."""
    c = full["candidates"][0]
    c["cpm_eur_per_mtok"] = 16.7821
    c["uncertainty"]["cpm_eur_per_mtok"] = {"p5": 16.78209, "p50": 16.7821, "p95": 16.78214}
    page = render_html(typed(full))
    assert "16.782 (16.782–16.782)" not in page
    assert "16.782–16.782" not in page
    assert re.search(r"<td[^>]*>16\.782</td>", page)  # the full scorecard's cell
    assert '<td class="num">16.782</td>' in summary_part(page)


def test_missing_citation_parts_print_nothing(full: dict[str, Any]) -> None:
    """An evidence source without a date shows no `None` anywhere (issue 15:
    `file://../evidence/... (None, own data)`)."""
    full["sources"].append({"kind": "evidence", "subject": "evidence/run.json",
                            "url": "file://../evidence/run.json", "date": None,
                            "licence": "own data", "snapshot_sha256": None})
    page = render_html(typed(full))
    assert "None" not in page
    assert "evidence/run.json" in section(page, "sources")


def test_quality_delta_only_when_a_candidate_has_one(full: dict[str, Any],
                                                      page: str) -> None:
    assert "Quality" not in summary_part(page)
    reference = full["candidates"][0]["id"]
    def task(**given: Any) -> dict[str, Any]:
        return {"metric": "acc", "value": None, "reference_value": None, "stderr": None,
                "within_tolerance": None, **given}

    full["candidates"][0]["quality"] = {"reference": reference, "grade": "measured",
                                        "tasks": [task(task="mmlu", drop=0.0)]}
    full["candidates"][1]["quality"] = {
        "reference": reference, "grade": "measured",
        "tasks": [task(task="mmlu", drop=0.004, stderr=0.003, within_tolerance=True),
                  task(task="gsm8k<b>", drop=0.012, stderr=0.001, within_tolerance=False)]}
    head = summary_part(render_html(typed(full)))
    assert "Quality Δ vs reference (largest drop)" in head
    # the largest drop, 0.012 on gsm8k, shown as a delta of -0.012 and flagged beyond the
    # tolerance (0.012 - 0.001 > max_drop, as the engine said); the task name escaped
    assert "gsm8k&lt;b&gt; -0.012 ✗" in head
    assert ('title="mmlu: drop 0.004 ± 0.003; gsm8k&lt;b&gt;: drop 0.012 ± 0.001 (beyond '
            'tolerance)"') in head
    assert "<td>reference</td>" in head
    # a candidate without quality evidence beside them: n/a
    assert head.count("<td>n/a</td>") == len(full["candidates"]) - 2


def test_long_hashes_and_urls_are_shortened_with_the_whole_value_in_a_title(
        page: str, full: dict[str, Any]) -> None:
    sources = section(page, "sources")
    for s in full["sources"]:
        sha = s["snapshot_sha256"]
        assert f'title="{sha}">{sha[:12]}…</span>' in sources
    long = [s["url"] for s in full["sources"] if len(s["url"]) > 60]
    assert long
    for url in long:
        assert f'title="{html.escape(url)}"' in sources


def test_a_title_attribute_is_escaped(full: dict[str, Any]) -> None:
    full["sources"][0]["url"] = "https://example.org/" + "a" * 60 + '"><b onmouseover=x>'
    full["sources"][0]["snapshot_sha256"] = "f" * 60 + '"><i>'
    page = render_html(typed(full))
    assert "<b onmouseover" not in page and '"><i>' not in page


def test_absent_sections_say_so_instead_of_vanishing(full: dict[str, Any]) -> None:
    bare = without_optional(full)
    del bare["recommendation"]
    page = render_html(typed(bare))
    assert set(SECTIONS) <= ids(page)  # every section is still there
    for what in ("P(frontier)", "Pairwise probabilities", "Tornado chart", "Break-even curve",
                 "Demand sizing", "p5–p95 ranges"):
        assert f"{what}: not computed for this proposal" in page, what
    assert "<svg" not in section(page, "tornado")
    assert "<svg" in section(page, "pareto")  # the point figures still plot
    assert "Formulas: not carried by this result" in page  # a result stored before them
    assert "No recommendation in this result" in section(page, "recommendation")


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
    page = render_html(typed(full))
    assert "<script" not in page  # no script at all: the report runs no JavaScript
    assert "<img src=x" not in page
    assert 'href="javascript:' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # in the summary table (the label under the id) and the recommendation's sentences
    table = re.search(r'id="summary-table".*?</table>', page, flags=re.DOTALL)
    assert table and "&lt;script&gt;alert(1)&lt;/script&gt;" in table.group(0)
    full["recommendation"]["reason"] = attack
    full["recommendation"]["what_would_change_it"][0]["text"] = attack
    full["candidates"][-1]["exclusion_reason"] = attack
    assert "<script" not in render_html(typed(full))


def test_self_contained_no_network_reference(page: str) -> None:
    """Nothing is loaded at view time: no src, no stylesheet link, no CSS import or url(); an
    http(s) href is only ever a link a reader may follow (<a>)."""
    assert not re.search(r"""(src|srcset)=["']?https?:""", page)
    assert "@import" not in page and "url(http" not in page
    assert "<link" not in page and "<script" not in page and "<iframe" not in page
    for tag in re.findall(r"""<(\w+)[^>]*\bhref=["']?https?:""", page):
        assert tag == "a", tag


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
    page = render_html(typed(result))
    assert set(SECTIONS) <= ids(page)
    for c in result["candidates"]:
        assert f'id="candidate-{c["id"]}"' in page
    for s in result["sources"]:
        assert s["snapshot_sha256"] in page
    # the cost breakdown: a TCO candidate's components (they add up to its cost per hour,
    # the engine's identity), a cloud offer's price alone
    breakdown = section(page, "cost-breakdown")
    tco = next(c for c in result["candidates"] if c["detail"].get("cost_model") == "tco")
    parts = [tco["detail"][k] for k in ("capital_eur_per_hour", "maintenance_eur_per_hour",
                                        "staff_eur_per_hour", "hosting_eur_per_hour",
                                        "electricity_eur_per_hour")]
    assert abs(sum(parts) - tco["cost_eur_per_hour"]) < 1e-9
    row = re.search(rf"<tr><td>{tco['id']}</td>.*?</tr>", breakdown)
    assert row and f'<td class="num">{parts[0]:.4g}</td>' in row.group(0)
    cloud = next(c for c in result["candidates"] if c["deployment"] == "cloud")
    row = re.search(rf"<tr><td>{cloud['id']}</td><td>[^<]*</td><td class=\"num\">"
                    rf"{cloud['cost_eur_per_hour']:.4g}</td><td class=\"num\">n/a</td>",
                    breakdown)
    assert row, cloud["id"]
    # every source string names something a reader can open, or says it is an example
    # figure and what it assumes (issue 15: "DESIGN.md sample figure", "issue 2 ...")
    assert "DESIGN.md" not in page and "issue 2" not in page
    assert "None" not in page
    # the methodology prints the engine's own formulas, not a copy that could drift: e.g.
    # CPM over served_tokens_per_s (goodput x billed utilisation), energy over average power
    from pipeline.engine.metrics import STEPS

    methodology = re.search(r'<section id="methodology">.*?</section>', page, flags=re.DOTALL)
    assert methodology
    for step in STEPS:
        assert f"<td>{html.escape(step.formula)}</td>" in methodology.group(0), step.name
    assert "average_power_w / served_tokens_per_s" in methodology.group(0)


def test_engine_column_names_become_words_but_key_paths_stay() -> None:
    from reports.frames import words

    # declared columns (schemas/outputs.toml titles: CPM, Demand, Goodput) in words; a key
    # path a reader can find in the proposal, and an undeclared name, as written
    assert words("the lowest cpm_eur_per_mtok (cpm_eur_per_mtok 2.074); a's tokens_per_s; "
                 "demand_tokens_per_day (demand.tokens_per_day, candidates[1].tokens_per_s) "
                 "not_a_column") == (
        "the lowest CPM (CPM 2.074); a's goodput; demand (demand.tokens_per_day, "
        "candidates[1].tokens_per_s) not_a_column")


def test_no_eligible_candidate_says_so_on_the_first_screen(full: dict[str, Any]) -> None:
    for c in full["candidates"]:
        c["eligible"], c["pareto_rank"] = False, None
        c["exclusion_reason"] = "sovereignty level 1 is below the policy minimum 4"
    full["recommendation"] = {**full["recommendation"], "candidate": None,
                              "reason": "no candidate is eligible", "runner_up": None,
                              "excluded": [], "what_would_change_it": []}
    page = render_html(typed(full))
    rec = section(page, "recommendation")
    assert "No candidate to recommend" in rec and "no candidate is eligible" in rec
    excluded = section(page, "excluded")
    assert f"Excluded ({len(full['candidates'])}):" in excluded
    table = re.search(r'id="summary-table".*?</table>', page, flags=re.DOTALL)
    assert table and table.group(0).count('<tr class="excluded">') == len(full["candidates"])


def test_the_demand_is_said_in_words(full: dict[str, Any]) -> None:
    full["demand"] = {"tokens_per_day": 500_000_000.0, "peak_factor": 2.0, "headroom": 0.25}
    sizing = section(render_html(typed(full)), "sizing")
    assert ("Demand: 500,000,000 output tokens a day, peak 2 x the daily mean, 25% headroom."
            in sizing)


def test_the_sources_table_has_one_row_per_source(full: dict[str, Any]) -> None:
    """One row per source file and URL, its subjects joined: the result lists one entry per
    subject (10 in this result), the table one per source (4: the four zones' prices come
    from one Ember file and URL, the four zones' grid intensities from one co2.js file; two
    GPU offers from two URLs stay two)."""
    page = render_html(typed(full))
    rows = re.findall(r"<tr>.*?</tr>", section(page, "sources").split("<tbody>")[1], re.S)
    assert len(full["sources"]) == 10 and len(rows) == 4
    prices = [r for r in rows if "electricity_price" in r]
    assert len(prices) == 1 and "DE-LU 2025-12, ES 2025-12, FR 2025-12, SE 2025-12" in prices[0]


def test_a_mix_s_fleet_and_month_on_the_first_screen() -> None:
    """The compact scorecard shows a mix's fleet and its cost a month, as the workbook's
    Scorecard and the JSON (`detail.monthly_cost_eur`) hold them, not n/a: the bundled
    example's hybrid-fr-h200-api holds 5 own FR H200 nodes (its `mix.base_instances`) and
    sends the rest of each hour to Scaleway's API (the burst, billed per token: no
    instances); its month at the demand is 58,549.07 EUR (the JSON's), printed 58,549."""
    from reports.html.first_screen import summary
    from tests.reports.conftest import FIXTURES

    example = json.loads((FIXTURES / "example_scorecard.json").read_text("utf-8"))
    mix = next(c for c in example["candidates"] if c["id"] == "hybrid-fr-h200-api")
    assert mix["mix"]["base_instances"] == 5
    assert round(mix["detail"]["monthly_cost_eur"]) == 58_549
    head = summary(typed(example), ())
    row = re.search(r"<tr[^>]*><td[^>]*><strong>hybrid-fr-h200-api</strong>.*?</tr>", head,
                    flags=re.DOTALL)
    assert row and ('<td class="num">5 + burst<small>base + burst</small></td>'
                    '<td class="num">58,549</td>') in row.group(0)
    assert "A mix's fleet is its base's instances plus the burst" in html.unescape(head)


def test_the_first_screen_shows_the_nearest_change_and_sensitivity_all(
        full: dict[str, Any]) -> None:
    """Three input crossings: the first screen shows one (keeping the summary table on a
    1280 x 800 screen: tests/reports/test_first_screen.py), the one within its stated range
    before those outside it, then the nearest; the Sensitivity section lists all three in
    that order. Distances as the engine measures them, |ln(threshold / value)|: capex
    |ln(195,124 / 342,000)| = 0.561 (outside), demand |ln(84.4e6 / 500e6)| = 1.779
    (outside), a goodput rise 4,000 -> 6,379 |ln(1.595)| = 0.467 (outside), a goodput fall
    4,000 -> 3,971.2 = 0.0072 (within): goodput fall, goodput rise, capex, demand (a fall of
    43 % is farther than a rise of 59 %)."""
    given = full["recommendation"]["what_would_change_it"][0]

    def change(key: str, current: float, threshold: float, within: bool) -> dict[str, Any]:
        return {**given, "key": key, "current": current, "threshold": threshold,
                "within_stated_range": within, "text": f"X becomes the choice if {key} moves"}

    result = json.loads(json.dumps(full))
    result["recommendation"]["what_would_change_it"] = [
        change("demand", 500e6, 84.4e6, False), change("capex", 342_000.0, 195_124.0, False),
        change("rise", 4000.0, 6379.0, False), change("fall", 4000.0, 3971.2, True)]
    page = html.unescape(render_html(typed(result)))
    chosen = section(page, "recommendation")
    assert "What would change it (the nearest of 4: every one under Sensitivity)" in (
        re.sub(r"<[^>]+>", "", chosen))
    assert "fall moves" in chosen
    assert all(f"{key} moves" not in chosen for key in ("rise", "capex", "demand"))
    listed = section(page, "tornado")
    at = [listed.index(f"{key} moves") for key in ("fall", "rise", "capex", "demand")]
    assert at == sorted(at)
