"""One self-contained HTML file (no network needed to view it, no JavaScript): a summary
that is the first screen and the first PDF page (reports/html/first_screen.py: the recommendation,
the excluded candidates, a compact scorecard of the four axes, one line on data freshness),
then an appendix: Pareto charts, the full scorecard, probabilities, sensitivity, break-even,
configurations, sizing, an optional vintage diff, per-candidate sources and notes,
assumptions, data freshness, methodology and sources.

A section whose inputs are absent from the result says so instead of vanishing. Every string
from a proposal, evidence or a source goes through `_e` (the escaping of reports/html/page.py, which
also holds the style sheet) or great-tables (which escapes its cells); the charts come from
reports/figures/sections.py (SVG drawn by vl-convert, which writes text as XML text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reports.figures import charts
from reports.figures.sections import chart_sections
from reports.frames import (
    BREAK_EVEN_HEADERS,
    SIZING_HEADERS,
    assumptions_frame,
    has_p_frontier,
    shortlist,
    shortlist_note,
    sizing_frame,
    sources_frame,
    words,
)
from reports.freshness import freshness
from reports.html.diff_report import diff_section
from reports.html.first_screen import demand_text, sizing_of, slo_text, summary
from reports.html.methodology import CONVERSIONS, DEFINITIONS
from reports.html.page import CSS, shortened, table
from reports.html.page import escape as _e
from reports.html.page import num as _num
from reports.html.scorecard_table import NOT_COMPUTED, scorecard_html, status
from schemas.outputs import OUTPUTS
from schemas.result import Result

#: the appendix sections in order: (id, title)
APPENDIX = (
    ("pareto", "Pareto charts"), ("scorecard-section", "Full scorecard"),
    ("cost-breakdown", "Cost breakdown"),
    ("probabilities", "Probabilities"), ("tornado", "Sensitivity (tornado)"),
    ("break-even", "Break-even"), ("configurations", "Configurations"),
    ("sizing", "Demand sizing"), ("diff", "Change since last vintage"),
    ("candidates", "Candidates"), ("assumptions", "Assumptions"),
    ("data-freshness", "Data freshness"), ("methodology", "Methodology"),
    ("sources", "Sources"),
)


def _absent(what: str) -> str:
    return f'<p class="absent">{_e(what)}: {NOT_COMPUTED}.</p>'


def render_html(result: Result, diff: dict[str, Any] | None = None) -> str:
    """The whole page. `diff` (from `pipeline.engine.diff`) adds the change-since-last-vintage
    section; without it the section says no comparison was made."""
    # each fragment of reports/figures/sections.py between marker comments (the snapshot
    # tests of this page leave them to that module's own tests)
    figures = {key: f"<!-- figures:{key} -->{body}<!-- /figures:{key} -->"
               for key, body in chart_sections(result).items() if body}
    listed, note = _listed(result)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Scorecard: {_e(result.proposal)}</title>",
        f"<style>{CSS}</style></head><body>",
        *summary(result, APPENDIX),
        '<div id="appendix"><h2 class="appendix-title" id="appendix-title">Appendix</h2>',
        *_pareto(figures),
        *_scorecard(listed, note),
        *_cost_breakdown(listed, note),
        *_probabilities(result, figures, listed, note),
        *_tornado(result, figures),
        *_break_even(result, figures),
        *_configurations(figures),
        *_sizing(listed, note),
        *_diff(diff),
        *_candidates(listed, note),
        *_assumptions(listed, note),
        *_freshness(result),
        *_methodology(result),
        *_sources(result),
        "</div>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_html(result: Result, path: Path, diff: dict[str, Any] | None = None) -> None:
    path.write_text(render_html(result, diff), encoding="utf-8")


def _charts_absent(what: str) -> str:
    """The line a chart section shows when it has no figure: why charts are missing, or that
    its inputs are not in the result."""
    if (why := charts.unavailable()) is not None:
        return f'<p class="absent">{_e(what)}: {_e(why)}.</p>'
    return _absent(what)


def _freshness(result: Result) -> list[str]:
    fresh = freshness(result)
    stale = sum(1 for f in fresh if f.stale)
    parts = ['<section id="data-freshness"><h2 id="freshness-title">Data freshness</h2>']
    if fresh:
        parts.append(f"<p>{len(fresh)} source figure(s); {stale} stale at vintage "
                     f"{_e(result.vintage)} (age counted to the end of the vintage month).</p>")
        parts.append(table(
            ["Kind", "Subject", "As of", "Age (days)", "Stale", "Rule"],
            [[f.kind, f.subject, f.as_of, f.age_days,
              "STALE" if f.stale else "no" if f.stale is False else "unknown", f.rule]
             for f in fresh],
            table_id="freshness", numeric=(3,),
            row_classes=["stale" if f.stale else "" for f in fresh]))
    else:
        parts.append("<p>No market source was used: every figure is declared in the "
                     "proposal.</p>")
    parts.append("</section>")
    return parts


#: the most candidates the full scorecard lists (great-tables takes about 10 ms a row; the
#: CSV, the workbook and the JSON hold every candidate)
SCORECARD_ROWS_MAX = 200


def _listed(result: Result) -> tuple[Result, list[str]]:
    """The result with only the candidates the full scorecard lists (`shortlist`), for the
    appendix's per-candidate tables, and the paragraph saying so (none when every one is)."""
    candidates, left_out = shortlist(result, SCORECARD_ROWS_MAX)
    if not left_out:
        return result, []
    ids = {c.id for c in candidates}
    listed = result.model_copy(update={
        "candidates": candidates, "sizing": [r for r in result.sizing if r.candidate in ids]})
    return listed, ['<p class="listed">' + _e(shortlist_note(
        len(candidates), left_out, "scorecard.csv, scorecard.xlsx and scorecard.json hold "
        "every one")) + "</p>"]


def _scorecard(listed: Result, note: list[str]) -> list[str]:
    return ['<section id="scorecard-section" class="keep"><h2>Full scorecard</h2>',
            "<p>Every figure of every candidate (the summary shows the four axes); the grades "
            "say where goodput, cost and power come from, each input's source is under "
            "Assumptions.</p>", *note,
            '<div class="wide">', scorecard_html(listed),
            "</div>", "</section>"]


#: what one instance-hour is made of: a price (declared or an offer) or a TCO's components
#: (electricity counted only in a TCO: a price per hour already includes it)
_TCO_PARTS = ("capital_eur_per_hour", "maintenance_eur_per_hour", "staff_eur_per_hour",
              "hosting_eur_per_hour", "electricity_eur_per_hour")


def _cost_breakdown(result: Result, note: list[str]) -> list[str]:
    heads = ["Candidate", "Cost model", OUTPUTS["price_eur_per_hour"].label,
             *[OUTPUTS[k].label for k in _TCO_PARTS], OUTPUTS["cost_eur_per_hour"].label,
             SIZING_HEADERS["billed_instances"], OUTPUTS["monthly_cost_eur"].label,
             OUTPUTS["monthly_capital_eur"].label]
    rows = []
    for c in result.candidates:
        d = c.detail
        tco = d.get("cost_model") == "tco"
        sizing = sizing_of(result, c)
        rows.append([c.id, d.get("cost_model"), None if tco else d.get("price_eur_per_hour"),
                     *[d.get(k) if tco else None for k in _TCO_PARTS],
                     c.cost_eur_per_hour, None if sizing is None else sizing.billed_instances,
                     None if sizing is None else sizing.monthly_cost_eur,
                     d.get("monthly_capital_eur")])
    return ['<section id="cost-breakdown"><h2>Cost breakdown</h2>',
            "<p>What one instance-hour costs, and of what: a price per hour (declared, or the "
            "offer's, which includes power) or a TCO's capital annuity, maintenance, staff, "
            "hosting and electricity; then the billed instances at the demand and their month, "
            "with the capex annuity in it (the rest is opex). n/a: not part of this cost "
            "model.</p>", *note,
            '<div class="wide">', table(heads, rows, table_id="cost-breakdown-table",
                                        numeric=range(2, len(heads))), "</div>",
            "</section>"]


def _pareto(figures: dict[str, str]) -> list[str]:
    body = figures.get("pareto") or _charts_absent("Pareto charts")
    return ['<section id="pareto"><h2>Pareto charts</h2>',
            "<p>CPM against carbon and against energy per token, one point per candidate: "
            "the frontier holds the candidates no other beats on every objective.</p>",
            f'<div class="charts">{body}</div>', "</section>"]


def _probabilities(result: Result, figures: dict[str, str], listed: Result,
                   note: list[str]) -> list[str]:
    parts = ['<section id="probabilities"><h2>Probabilities</h2>']
    if has_p_frontier(result):
        parts.append("<p>Share of Monte Carlo draws in which each candidate is on the Pareto "
                     "frontier.</p>")
        parts += note
        parts.append(table(["Candidate", "P(frontier)", "Pareto rank (point estimate)"],
                           [[c.id, c.p_frontier, status(c)] for c in listed.candidates],
                           table_id="p-frontier", numeric=(1,)))
    else:
        parts.append(_absent("P(frontier)"))
    if figures.get("pairwise"):
        parts += ["<h3>Pairwise: P(A lower than B)</h3>",
                  "<p>Share of draws in which A's figure is lower than B's.</p>",
                  f'<div class="wide">{figures["pairwise"]}</div>']
    elif result.pairwise:
        parts.append(_charts_absent("Pairwise probabilities"))
    else:
        parts.append(_absent("Pairwise probabilities"))
    parts.append("</section>")
    return parts


def _tornado(result: Result, figures: dict[str, str]) -> list[str]:
    body = figures.get("tornado") or (_charts_absent("Tornado chart") if result.tornado
                                      else _absent("Tornado chart"))
    return ['<section id="tornado"><h2>Sensitivity (tornado)</h2>',
            "<p>Each input at its low and at its high value, the others at their point "
            "values: how far the figure moves.</p>",
            f'<div class="charts">{body}</div>', "</section>"]


def _break_even(result: Result, figures: dict[str, str]) -> list[str]:
    parts = ['<section id="break-even"><h2>Break-even</h2>']
    if figures.get("break_even"):
        parts.append(f'<div class="charts">{figures["break_even"]}</div>')
    else:
        parts.append(_charts_absent("Break-even curve") if result.break_even
                     else _absent("Break-even curve"))
    rows = [[b.candidate, b.versus,
             _num(b.tokens_per_day) if b.tokens_per_day is not None
             else "no break-even in the volumes compared"]
            for b in result.break_even]
    if rows:
        parts.append(table(["Candidate", "Versus",
                            BREAK_EVEN_HEADERS["break_even_tokens_per_day"]], rows,
                           table_id="break-even-table"))
    parts.append("</section>")
    return parts


def _configurations(figures: dict[str, str]) -> list[str]:
    body = figures.get("configurations") or (
        _charts_absent("Configuration surface") if charts.unavailable() is not None else
        '<p class="absent">No candidate\'s evidence holds more than one configuration.</p>')
    return ['<section id="configurations"><h2>Configurations</h2>',
            f'<div class="charts">{body}</div>', "</section>"]


def _sizing(result: Result, note: list[str]) -> list[str]:
    parts = ['<section id="sizing"><h2>Demand sizing</h2>']
    frame = sizing_frame(result)
    if result.demand is not None:
        parts.append(f"<p>Demand: {_e(demand_text(result.demand, result.token_basis))}.</p>")
    if frame.height:
        parts += note
        # up to thirteen columns: in a scroll container, as the full scorecard
        parts += ['<div class="wide">',
                  table([SIZING_HEADERS[c] for c in frame.columns], frame.rows(),
                        table_id="sizing-table", numeric=range(2, len(frame.columns))),
                  "</div>"]
    else:
        parts.append(_absent("Demand sizing"))
    parts.append("</section>")
    return parts


def _diff(diff: dict[str, Any] | None) -> list[str]:
    if diff is None:
        return ['<section id="diff"><h2>Change since last vintage</h2>',
                '<p class="absent">No earlier vintage was compared in this run '
                "(`scorecard diff VINTAGE_A VINTAGE_B` makes the comparison).</p>",
                "</section>"]
    return [diff_section(diff)]


def _candidates(result: Result, note: list[str]) -> list[str]:
    parts = ['<section id="candidates"><h2>Candidates: sources, sovereignty and notes</h2>',
             *note]
    for c in result.candidates:
        d = c.detail
        items = [
            f"Throughput ({_e(c.tokens_per_s_grade)}): {_e(d.get('tokens_per_s_source'))}",
            f"Cost ({_e(d.get('cost_grade'))}): {_e(d.get('cost_source'))}",
            f"Power ({_e(d.get('power_grade') or 'none')}): "
            f"{_e(d.get('power_source') or 'not given')}",
            f"Electricity ({_e(d.get('electricity_grade') or 'none')}): "
            f"{_e(d.get('electricity_source') or 'not available')}",
            f"Grid intensity ({_e(d.get('grid_grade') or 'none')}): "
            f"{_e(d.get('grid_source') or 'not available')}",
            f"Sovereignty: {_e(d.get('sovereignty_reason'))}",
        ]
        if c.exclusion_reason:
            items.append(f"<strong>Excluded:</strong> {_e(words(c.exclusion_reason))}")
        items += [f"Note: {_e(n)}" for n in c.notes]
        parts.append(f'<h3 id="candidate-{_e(c.id)}">{_e(c.id)}: {_e(c.label)}</h3>'
                     "<ul>")
        parts += [f"<li>{i}</li>" for i in items]
        parts.append("</ul>")
    parts.append("</section>")
    return parts


def _assumptions(result: Result, note: list[str]) -> list[str]:
    frame = assumptions_frame(result)
    return [
        '<section id="assumptions"><h2>Assumptions</h2>',
        "<p>Every input of every candidate, with its unit, grade and source. SLO: "
        f"{_e(slo_text(result.slo))}.</p>", *note,
        table(["Candidate", "Input", "Value (point)", "Low", "High", "Unit", "Grade", "Source"],
              frame.select("id", "input", "value", "low", "high", "unit", "grade",
                           "source").rows(),
              table_id="assumptions-table", numeric=(2, 3, 4), css="plain long"),
        "</section>",
    ]


def _methodology(result: Result) -> list[str]:
    steps = result.formulas
    parts = [
        '<section id="methodology"><h2>Methodology</h2>',
        "<p>Throughput is the shared denominator of every metric. The steps below are the "
        "engine's own formulas (pipeline/engine/metrics.py), carried in the result and evaluated "
        "in this order, each from the inputs (listed under Assumptions) and the steps above it; "
        "docs/methodology.md gives the full text.</p>",
    ]
    if steps:
        parts.append(table(["Step", "Formula", "Unit"],
                           [[s.name, s.formula, s.unit] for s in steps],
                           table_id="formulas"))
    else:
        parts.append('<p class="absent">Formulas: not carried by this result (stored before '
                     "results recorded them); docs/methodology.md gives them.</p>")
    parts += [
        "<p>Conversions applied to the inputs before these steps:</p>",
        table(["Conversion", "Formula", "Unit", "Computed in"], CONVERSIONS,
              table_id="conversions"),
        "<dl>",
        *[f"<dt><strong>{_e(t)}</strong></dt><dd>{_e(d)}</dd>" for t, d in DEFINITIONS],
        "</dl>",
        "</section>",
    ]
    return parts


def short_url(url: str, limit: int = 60) -> str:
    """A URL a table cell can hold: itself when short, else its host and last path segment
    (`github.com/…/yearly_2025.json`); the page puts the whole URL in the title."""
    if len(url) <= limit:
        return url
    _, _, rest = url.partition("://")
    host, _, path = rest.partition("/")
    tail = path.rstrip("/").rsplit("/", 1)[-1]
    if host and tail and len(host) + len(tail) < limit:
        return f"{host}/…/{tail}"
    return f"{url[:limit // 2]}…{url[-(limit // 2):]}"


def _sources(result: Result) -> list[str]:
    frame = sources_frame(result)
    parts = ['<section id="sources"><h2>Sources</h2>']
    if not frame.height:
        parts.append("<p>No market source was used.</p></section>")
        return parts
    parts.append("<p>Hover a shortened URL or hash for the whole value.</p>"
                 '<table class="plain long" id="sources-table"><thead><tr><th>Kind</th>'
                 "<th>Subject</th><th>URL</th><th>Date</th><th>Licence and attribution</th>"
                 "<th>Content sha256</th></tr></thead><tbody>")
    for s in frame.iter_rows(named=True):
        url = s["url"] or ""
        shown = short_url(url)
        title = f' title="{_e(url)}"' if shown != url else ""
        link = (f'<a href="{_e(url)}"{title}>{_e(shown)}</a>'
                if url.startswith(("http://", "https://"))
                else f"<span{title}>{_e(shown)}</span>")
        parts.append(f"<tr><td>{_e(s['kind'])}</td><td>{_e(s['subject'])}</td><td>{link}</td>"
                     f"<td>{_e(s['date'])}</td><td>{_e(s['licence'])}</td>"
                     f'<td class="hash">{shortened(s["snapshot_sha256"])}</td></tr>')
    parts.append("</tbody></table></section>")
    return parts
