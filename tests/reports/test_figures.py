"""The report's figure sections (reports/figures/sections.py) drawn by the real vl-convert and read
back from the SVG text: alt text and captions, the pairwise matrix, one tornado per candidate,
the break-even sentence, the configuration heatmap, escaping, and no Altair."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reports.figures import charts
from reports.figures.sections import SECTIONS, chart_sections
from tests.conftest import Calls
from tests.reports.conftest import fragment as fragment_of
from tests.reports.conftest import typed, without_optional

pytest.importorskip("vl_convert", reason="charts need vl-convert-python (a project dependency)")

ROOT = Path(__file__).resolve().parents[2]
HOSTILE_ID = "<script>alert(1)</script>"
HOSTILE_LABEL = '=HYPERLINK("http://evil.example")'


def figures_in(fragment: str) -> dict[str, str]:
    return dict(re.findall(r'<figure id="([^"]+)"[^>]*>(.*?)</figure>', fragment, re.DOTALL))


def marks(svg: str, role: str) -> list[str]:
    """aria-label of every mark of a kind (`rect mark`, `text mark`) in the SVG."""
    return re.findall(rf'<[a-z]+ aria-label="([^"]*)" role="graphics-symbol" '
                      rf'aria-roledescription="{role}"', svg)


def test_every_section_has_figures_with_alt_text_and_caption(full: dict[str, Any]) -> None:
    sections = chart_sections(typed(full))
    assert list(sections) == list(SECTIONS)
    for key in ("pareto", "pairwise", "tornado", "break_even"):
        found = figures_in(sections[key])
        assert found, key
        for figure_id, body in found.items():
            alt = re.search(r'<svg role="img" aria-label="([^"]+)"', body)
            assert alt and len(alt.group(1)) > 20, figure_id
            caption = re.search(r"<figcaption>(.+?)</figcaption>", body)
            assert caption and len(caption.group(1)) > 20, figure_id
            assert "<h2" not in body and "<section" not in body
    assert sections["configurations"] == ""  # no candidate carries configurations
    # ids the page and its tests look for
    assert {"chart-pareto-carbon", "chart-pareto-energy"} <= set(figures_in(sections["pareto"]))
    assert "chart-tornado" in figures_in(sections["tornado"])
    assert "chart-break-even" in figures_in(sections["break_even"])


def test_two_runs_are_identical_and_clip_ids_unique(full: dict[str, Any]) -> None:
    first, second = chart_sections(typed(full)), chart_sections(typed(full))
    assert first == second
    ids = re.findall(r'\bid="([^"]+)"', "".join(first.values()))
    assert len(ids) == len(set(ids))


def _pairwise_result(n: int) -> dict[str, Any]:
    ids = [f"c{i}" for i in range(n)]
    # c0 cheapest ... by point CPM; P(ci < cj) = 0.9 for i < j, except P(c0 < c1) = 0.25
    pairs = [{"a": a, "b": b, "metric": "cpm_eur_per_mtok",
              "p_a_lower": 0.25 if (a, b) == ("c0", "c1") else 0.9}
             for i, a in enumerate(ids) for b in ids[i + 1:]]
    return {"candidates": [{"id": c, "cpm_eur_per_mtok": 2.0 + i, "pareto_rank": 1 if i < 2
                            else 2, "eligible": True, "sovereignty_level": 3}
                           for i, c in enumerate(ids)],
            "pairwise": pairs, "recommendation": {"candidate": "c0", "runner_up": "c1"}}


def test_pairwise_is_an_n_by_n_matrix_with_the_probability_in_each_cell() -> None:
    fragment = chart_sections(fragment_of(_pairwise_result(4)))["pairwise"]
    [svg] = figures_in(fragment).values()
    cells = marks(svg, "rect mark")
    assert len(cells) == 4 * 4
    # upper triangle from the engine, the mirror 1 - p: P(c1 < c0) = 1 - 0.25 = 75 %
    assert "P(c0 cheaper than c1) = 25%" in cells
    assert "P(c1 cheaper than c0) = 75%" in cells
    assert "P(c3 cheaper than c2) = 10%" in cells
    # a printed probability in each cell (the text marks; the legend's labels are not marks)
    printed = re.findall(r'aria-roledescription="text mark"[^>]*>([^<>]+)</text>', svg)
    assert len(printed) == 16 and printed.count("—") == 4
    assert printed.count("90%") == 5 and printed.count("10%") == 5


def test_many_candidates_narrow_the_matrix_to_the_frontier_and_the_choice() -> None:
    # 12 candidates, frontier c0 and c1 (c0 chosen, c1 runner-up): a 2 x 2 matrix
    fragment = chart_sections(fragment_of(_pairwise_result(12)))["pairwise"]
    [svg] = figures_in(fragment).values()
    assert len(marks(svg, "rect mark")) == 2 * 2
    assert "2 of 12 candidates" in fragment


def _tornado_result() -> dict[str, Any]:
    def rows(cid: str, swing: float) -> list[dict[str, Any]]:
        return [
            {"candidate": cid, "metric": "cpm_eur_per_mtok", "input": "capex_eur",
             "low": 312_000.0, "high": 382_000.0, "metric_at_low": 3.0 - swing,
             "metric_at_high": 3.0 + swing, "swing": 2 * swing},
            {"candidate": cid, "metric": "cpm_eur_per_mtok", "input": "tokens_per_s",
             "low": 3400.0, "high": 4400.0, "metric_at_low": 3.5, "metric_at_high": 2.8,
             "swing": 0.7},
        ]
    ids = ["chosen", "second", "wide", "mid", "narrow", "tiny"]
    inputs = [{"input": "capex_eur", "unit": "EUR"}, {"input": "tokens_per_s",
                                                      "unit": "tokens/s"}]
    return {"candidates": [{"id": c, "cpm_eur_per_mtok": 3.0, "inputs": inputs}
                           for c in ids],
            "tornado": [r for c, s in zip(ids, (0.1, 0.2, 0.9, 0.5, 0.3, 0.05), strict=True)
                        for r in rows(c, s)],
            "recommendation": {"candidate": "chosen", "runner_up": "second"}}


def test_one_tornado_per_candidate_chosen_and_runner_up_first_money_in_kEUR() -> None:
    fragment = chart_sections(fragment_of(_tornado_result()))["tornado"]
    [svg] = figures_in(fragment).values()
    drawn = re.findall(r">([^<>]+)</text>", svg)
    # four panels (the cap): the chosen, the runner-up, then the widest swings (wide 0.9,
    # mid 0.5); narrow and tiny left out and counted in the caption
    titles = [t for t in drawn if t in ("chosen (recommended)", "second (runner-up)", "wide",
                                        "mid", "narrow", "tiny")]
    assert titles == ["chosen (recommended)", "second (runner-up)", "wide", "mid"]
    assert "2 more candidate(s)" in fragment
    assert drawn.count("capex_eur: 312 kEUR to 382 kEUR") == 4
    assert "tokens_per_s: 3400 to 4400 tokens/s" in drawn
    assert "e+05" not in svg and "312000" not in svg


def _break_even(crossing: float | None) -> dict[str, Any]:
    # on-prem CPM 10 / u over utilisation u: at full use 10 EUR/Mtok, never below the cloud's
    # 2 unless the crossing is given
    curve = [{"tokens_per_day": 1e8 * u, "cpm_eur_per_mtok": 10.0 / u}
             for u in (0.1, 0.2, 0.5, 1.0)]
    return {"candidates": [], "break_even": [
        {"candidate": "onprem", "versus": "cloud", "versus_cpm_eur_per_mtok": 2.0,
         "tokens_per_day": crossing, "curve": curve}]}


def test_no_break_even_is_a_sentence_and_no_chart() -> None:
    fragment = chart_sections(fragment_of(_break_even(None)))["break_even"]
    assert "<svg" not in fragment
    # full use: 1e8 tokens/day = 100 M, CPM 10 / 1 = 10 EUR/Mtok
    assert ("onprem never costs less per token than cloud&#x27;s 2 EUR/Mtok: even at full use "
            "of one instance (100 M tokens/day) its CPM is 10 EUR/Mtok.") in fragment


def test_a_sized_fleet_s_break_even_says_so() -> None:
    # the same curve read as a fleet sized for each volume (basis "sized"): it never pays,
    # its lowest point is the last, 10 EUR/Mtok at 100 M tokens/day; crossing, it says the
    # fleet is sized, on the chart's axis too
    result = _break_even(None)
    result["break_even"][0]["basis"] = "sized"
    fragment = chart_sections(fragment_of(result))["break_even"]
    assert ("onprem never costs less per token than cloud&#x27;s 2 EUR/Mtok up to ten times "
            "the demand (100 M tokens/day), its fleet sized for each volume&#x27;s peak: its "
            "lowest CPM is 10 EUR/Mtok (at 100 M tokens/day).") in fragment
    result["break_even"][0]["tokens_per_day"] = 5e7
    fragment = chart_sections(fragment_of(result))["break_even"]
    assert ("from 50 M tokens/day on (its fleet sized for each volume&#x27;s peak, as at the "
            "demand).") in fragment
    [svg] = figures_in(fragment).values()
    assert "the fleet sized for each volume" in svg and "one instance" not in svg


def test_break_even_curves_carry_dash_marker_and_label() -> None:
    result = _break_even(5e7)
    second = {**result["break_even"][0], "candidate": "onprem-b"}
    result["break_even"].append(second)
    fragment = chart_sections(fragment_of(result))["break_even"]
    [svg] = figures_in(fragment).values()
    assert ("costs no more per token than cloud&#x27;s 2 EUR/Mtok from 50 M tokens/day on "
            "(one instance).") in fragment
    drawn = re.findall(r">([^<>]+)</text>", svg)
    assert "onprem" in drawn and "onprem-b" in drawn  # direct labels
    # two line styles: the second curve dashed 8 4
    assert 'stroke-dasharray="8,4"' in svg
    assert "lie on one another" in fragment  # identical curves are said to coincide


def test_many_on_prem_candidates_draw_the_first_to_break_even_and_count_the_rest() -> None:
    # twelve curves crossing at 10, 20, ..., 120 M tokens/day: the eight first are described
    # and drawn (BREAK_EVEN_MAX), the other four counted
    base = _break_even(None)["break_even"][0]
    result = {"candidates": [], "break_even": [
        {**base, "candidate": f"onprem-{i:02d}", "tokens_per_day": 1e7 * i}
        for i in range(12, 0, -1)]}
    fragment = chart_sections(fragment_of(result))["break_even"]
    assert fragment.count("costs no more per token than cloud") == 8
    assert "onprem-01" in fragment and "onprem-08" in fragment
    assert "onprem-09 " not in fragment and "onprem-12" not in fragment
    assert "4 more on-prem candidates" in fragment
    assert "8 of 12 on-prem curves drawn" in fragment


def _configurations(label: str = "tp{tp} batch {b}") -> list[dict[str, Any]]:
    # goodput per GPU = 10 x batch / tp + tp: the best cell that meets the SLO (batch 256
    # fails) is tp 1, batch 128: 10 x 128 / 1 + 1 = 1281 tokens/s per GPU
    # settings are strings in the contract: "64" < "128" < "256" by number, not as text
    return [{"configuration": {"tp": str(tp), "batch": str(b)},
             "label": label.format(tp=tp, b=b),
             "gpus": tp, "goodput_tokens_per_s": (10.0 * b / tp + tp) * tp,
             "goodput_per_gpu_tokens_per_s": 10.0 * b / tp + tp, "knee_concurrency": 8.0,
             "passes": b < 256, "chosen": (tp, b) == (1, 128), "runs": 3}
            for tp in (1, 2, 4) for b in (64, 128, 256)]


def test_a_three_by_three_configuration_grid_is_a_heatmap_with_the_best_cell_marked() -> None:
    result = {"candidates": [{"id": "meas", "evidence_configurations": _configurations()}]}
    fragment = chart_sections(fragment_of(result))["configurations"]
    [svg] = figures_in(fragment).values()
    cells = [c for c in marks(svg, "rect mark") if ":" in c]
    assert len(cells) == 9
    chosen = [c for c in cells if c.endswith(", chosen")]
    assert chosen == ["batch 128, tp 1: 1,281 tokens/s per GPU, chosen"]
    assert svg.count('stroke-width="3"') == 1  # the one outlined cell
    assert len([c for c in cells if "fails the SLO" in c]) == 3  # batch 256
    # the batch axis reads 64, 128, 256 left to right (by number)
    ticks = [(float(x), t) for x, t in re.findall(
        r'transform="translate\(([-\d.]+),\d+\)[^"]*"[^>]*>(64|128|256)</text>', svg)]
    assert [t for _, t in sorted(ticks)] == ["64", "128", "256"]
    # the table beside it: every configuration, the chosen row marked
    assert fragment.count("<tr") == 10 and fragment.count('<tr class="chosen">') == 1
    assert "highest that meets the SLO: batch 128, tp 1 (1,281)" in fragment


def test_one_varying_setting_gives_the_table_without_a_heatmap() -> None:
    configs = [c for c in _configurations() if c["configuration"]["tp"] == "1"]
    fragment = chart_sections(fragment_of({"candidates": [{"id": "m", "evidence_configurations":
                                                           configs}]}))["configurations"]
    assert "<svg" not in fragment and fragment.count("<tr") == 4


def test_hostile_ids_and_labels_stay_text() -> None:
    result = {
        "candidates": [
            {"id": HOSTILE_ID, "label": HOSTILE_LABEL, "eligible": True,
             "sovereignty_level": 3, "pareto_rank": 1, "cpm_eur_per_mtok": 2.0,
             "carbon_gco2e_per_mtok": 10.0, "energy_j_per_token": 1.0,
             "evidence_configurations": _configurations(HOSTILE_LABEL + " {tp} {b}")},
            {"id": HOSTILE_LABEL, "label": "x", "eligible": True, "sovereignty_level": 2,
             "pareto_rank": 1, "cpm_eur_per_mtok": 3.0, "carbon_gco2e_per_mtok": 9.0,
             "energy_j_per_token": 1.5},
        ],
        "pairwise": [{"a": HOSTILE_ID, "b": HOSTILE_LABEL, "metric": "cpm_eur_per_mtok",
                      "p_a_lower": 0.6}],
        "recommendation": {"candidate": HOSTILE_ID},
    }
    sections = chart_sections(fragment_of(result))
    page = "".join(sections.values())
    assert "<script" not in page
    # in the SVG as XML text, in the tables and captions as HTML text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in sections["pareto"]
    assert "&lt;script&gt;" in sections["pairwise"]
    assert "=HYPERLINK(&quot;http://evil.example&quot;) 1 64" in sections["configurations"]
    assert re.search(r'aria-label="[^"]*&lt;script&gt;', sections["pareto"])


def test_the_cache_serves_a_second_report_without_drawing(full: dict[str, Any],
                                                         chart_draws: Calls) -> None:
    cache: dict[str, str] = {}
    with charts.rendering_cache(cache):
        first = chart_sections(typed(full))
        drawn = chart_draws.count
        again = chart_sections(typed(full))
    assert drawn == len(cache) > 0
    assert chart_draws.count == drawn  # the second report drew nothing
    assert again == first


def test_importing_the_figures_does_not_import_altair() -> None:
    code = "import sys, reports.figures; print('altair' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    assert out == "False"


def test_a_single_configuration_shows_nothing() -> None:
    [one] = [c for c in _configurations() if c["chosen"]]
    result = {"candidates": [{"id": "m", "evidence_configurations": [one]}]}
    assert chart_sections(fragment_of(result))["configurations"] == ""


def test_a_result_without_the_optional_keys_has_only_the_pareto_charts(
        full: dict[str, Any]) -> None:
    sections = chart_sections(typed(without_optional(full)))
    assert "<svg" in sections["pareto"]
    assert {k: v for k, v in sections.items() if k != "pareto"} == {
        "pairwise": "", "tornado": "", "break_even": "", "configurations": "", "plan": ""}
    assert chart_sections(fragment_of({"candidates": []})) == dict.fromkeys(SECTIONS, "")
