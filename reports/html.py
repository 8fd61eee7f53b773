"""One self-contained HTML file (no network needed to view it): header with data freshness,
example-data banner, the scorecard, Pareto charts, uncertainty (probabilities, tornado),
break-even, sizing, an optional vintage diff, per-candidate sources and notes, assumptions,
methodology and sources.

A section whose inputs are absent from the result says so instead of vanishing. Every string
from a proposal, evidence or a source goes through `_e` (the escaping of reports/page.py, which
also holds the style sheet) or great-tables (which escapes its cells); the charts are SVG drawn
by vl-convert, which writes text as XML text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reports import charts
from reports.diff_report import diff_section
from reports.frames import (
    BREAK_EVEN_HEADERS,
    HEADERS,
    SIZING_HEADERS,
    assumptions_frame,
    has_p_frontier,
    pairwise_frame,
    recommendation_lines,
    sizing_frame,
    sources_frame,
)
from reports.freshness import freshness
from reports.methodology import CONVERSIONS, DEFINITIONS
from reports.page import CSS
from reports.page import escape as _e
from reports.scorecard_table import NOT_COMPUTED, scorecard_gt, status

_SECTIONS = (
    ("scorecard-section", "Scorecard"), ("pareto", "Pareto charts"),
    ("probabilities", "Probabilities"), ("tornado", "Sensitivity (tornado)"),
    ("break-even", "Break-even"), ("sizing", "Demand sizing"),
    ("diff", "Change since last vintage"),
    ("candidates", "Candidates"), ("assumptions", "Assumptions"),
    ("methodology", "Methodology"), ("sources", "Sources"),
)


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        # thousands separators, no exponents for large figures; 4 significant digits below
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.{digits}g}"
    return _e(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, table_id: str,
          numeric: Sequence[int] = (), row_classes: Sequence[str] = ()) -> str:
    """A plain HTML table; cells are escaped, numbers formatted, numeric columns aligned."""
    out = [f'<table class="plain" id="{_e(table_id)}"><thead><tr>']
    out += [f"<th>{_e(h)}</th>" for h in headers]
    out.append("</tr></thead><tbody>")
    for i, row in enumerate(rows):
        cls = row_classes[i] if i < len(row_classes) and row_classes[i] else ""
        out.append(f'<tr class="{cls}">' if cls else "<tr>")
        for j, cell in enumerate(row):
            if j in numeric:
                out.append(f'<td class="num">{_num(cell)}</td>')
            else:
                out.append(f"<td>{_e(cell)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _absent(what: str) -> str:
    return f'<p class="absent">{_e(what)}: {NOT_COMPUTED}.</p>'


def render_html(result: dict[str, Any], diff: dict[str, Any] | None = None) -> str:
    """The whole page. `diff` (from `pipeline.engine.diff`) adds the change-since-last-vintage
    section; without it the section says no comparison was made."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Scorecard: {_e(result['proposal'])}</title>",
        f"<style>{CSS}</style></head><body>",
        *_header(result),
        *_scorecard(result),
        *_pareto(result),
        *_probabilities(result),
        *_tornado(result),
        *_break_even(result),
        *_sizing(result),
        *_diff(diff),
        *_candidates(result),
        *_assumptions(result),
        *_methodology(result),
        *_sources(result),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_html(result: dict[str, Any], path: Path, diff: dict[str, Any] | None = None) -> None:
    path.write_text(render_html(result, diff), encoding="utf-8")


def _recommendation(result: dict[str, Any]) -> list[str]:
    headline, lines = recommendation_lines(result)
    return ['<section id="recommendation">', f"<h2>{_e(headline)}</h2>",
            "<ul>", *[f"<li>{_e(line)}</li>" for line in lines], "</ul>", "</section>"]


def _header(result: dict[str, Any]) -> list[str]:
    policy = result.get("policy") or {}
    parts = [
        '<header id="header">',
        f"<h1>Scorecard: {_e(result['proposal'])}</h1>",
        '<dl class="meta">',
        f"<dt>Vintage</dt><dd>{_e(result['vintage'])}</dd>",
        f"<dt>Generated at</dt><dd>{_e(result['generated_at'])}</dd>",
        f"<dt>Code version</dt><dd>{_e(result['code_version'])}</dd>",
        f"<dt>SLO</dt><dd>{_e(_slo(result.get('slo') or {}))}</dd>",
        f"<dt>Policy</dt><dd>minimum sovereignty {_e(policy.get('min_sovereignty'))}; "
        f"objectives {_e(', '.join(policy.get('objectives') or []))}</dd>",
        "</dl>",
        *_recommendation(result),
    ]
    if result.get("example_data"):
        parts.append('<div class="banner" id="example-data"><strong>EXAMPLE DATA.</strong> '
                     "Some figures are illustrative declarations from the bundled example "
                     "proposal, not measurements of your hardware. Do not base a decision on "
                     "them.</div>")
    fresh = freshness(result)
    stale = sum(1 for f in fresh if f.stale)
    parts.append('<h2 id="freshness-title">Data freshness</h2>')
    if fresh:
        parts.append(f"<p>{len(fresh)} source figure(s); {stale} stale at vintage "
                     f"{_e(result['vintage'])} (age counted to the end of the vintage month).</p>")
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
    parts.append("<nav><strong>Contents</strong><ol>")
    parts += [f'<li><a href="#{sid}">{_e(title)}</a></li>' for sid, title in _SECTIONS]
    parts += ["</ol></nav>", "</header>"]
    return parts


def _scorecard(result: dict[str, Any]) -> list[str]:
    return ['<section id="scorecard-section"><h2>Scorecard</h2>',
            scorecard_gt(result).as_raw_html(), "</section>"]


def _figure(figure_id: str, svg: str | None, caption: str, what: str) -> str:
    if (why := charts.unavailable()) is not None:
        return f'<figure id="{figure_id}"><p class="absent">{_e(what)}: {_e(why)}.</p></figure>'
    if svg is None:
        return f'<figure id="{figure_id}">{_absent(what)}</figure>'
    return (f'<figure id="{figure_id}" class="chart">{svg}'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _pareto(result: dict[str, Any]) -> list[str]:
    parts = ['<section id="pareto"><h2>Pareto charts</h2>', '<div class="charts">']
    for x, y in charts.PARETO_PAIRS:
        short = "carbon" if y.startswith("carbon") else "energy"
        _, missing = charts.pareto_points(result, x, y)
        caption = (f"{HEADERS[x]} against {HEADERS[y]}. Colour: sovereignty level (grey: "
                   "excluded by the policy). Outlined points joined by the dashed line: the "
                   "Pareto frontier over all the policy's objectives, so in this 2-D view a "
                   "frontier point may look dominated. Whiskers: p5-p95 where computed.")
        if missing:
            caption += f" Not plotted (a figure is missing): {', '.join(missing)}."
        svg = None if charts.unavailable() else charts.pareto_svg(result, x, y)
        parts.append(_figure(f"chart-pareto-{short}", svg, caption,
                             f"Pareto chart {HEADERS[x]} vs {HEADERS[y]}"))
    parts += ["</div>", "</section>"]
    return parts


def _probabilities(result: dict[str, Any]) -> list[str]:
    parts = ['<section id="probabilities"><h2>Probabilities</h2>']
    if has_p_frontier(result):
        parts.append("<p>Share of Monte Carlo draws in which each candidate is on the Pareto "
                     "frontier.</p>")
        parts.append(table(["Candidate", "P(frontier)", "Pareto rank (point estimate)"],
                           [[c["id"], c.get("p_frontier"), status(c)]
                            for c in result["candidates"]],
                           table_id="p-frontier", numeric=(1,)))
    else:
        parts.append(_absent("P(frontier)"))
    pairs = pairwise_frame(result)
    if pairs.height:
        parts.append("<p>P(A lower than B): share of draws in which A's metric is lower.</p>")
        parts.append(table(["A", "B", "Metric", "P(A lower)"],
                           [[r["a"], r["b"], HEADERS.get(r["metric"], r["metric"]),
                             r["p_a_lower"]] for r in pairs.iter_rows(named=True)],
                           table_id="pairwise", numeric=(3,)))
    else:
        parts.append(_absent("Pairwise probabilities"))
    parts.append("</section>")
    return parts


def _tornado(result: dict[str, Any]) -> list[str]:
    parts = ['<section id="tornado"><h2>Sensitivity (tornado)</h2>']
    svgs = [] if charts.unavailable() else charts.tornado_svgs(result)
    if not svgs and result.get("tornado") and charts.unavailable():
        parts += [_figure("chart-tornado", None, "", "Tornado chart"), "</section>"]
        return parts
    if not svgs:
        parts += [f'<figure id="chart-tornado">{_absent("Tornado chart")}</figure>',
                  "</section>"]
        return parts
    parts.append('<div class="charts">')
    for i, (metric, svg) in enumerate(svgs):
        figure_id = "chart-tornado" if i == 0 else f"chart-tornado-{i + 1}"
        parts.append(_figure(figure_id, svg,
                             f"{HEADERS.get(metric, metric)}: its change, in % of each "
                             "candidate's point figure, with one input at its low and at its "
                             "high value, the others at their point values; widest swings "
                             "first.", "Tornado chart"))
    parts += ["</div>", "</section>"]
    return parts


def _break_even(result: dict[str, Any]) -> list[str]:
    parts = ['<section id="break-even"><h2>Break-even</h2>']
    svg = None if charts.unavailable() else charts.break_even_svg(result)
    parts.append(_figure("chart-break-even", svg,
                         "CPM against daily volume (log scale): fixed on-prem costs spread "
                         "over fewer tokens raise CPM at low volume; dotted vertical lines "
                         "mark the volumes where an on-prem candidate costs the same per "
                         "token as the cloud one (table below). CPM axis cut at 4 x the "
                         "cloud CPM.",
                         "Break-even curve"))
    rows = [[b["candidate"], b["versus"], b.get("tokens_per_day")]
            for b in result.get("break_even") or []]
    if rows:
        parts.append(table(["Candidate", "Versus",
                            BREAK_EVEN_HEADERS["break_even_tokens_per_day"]], rows,
                           table_id="break-even-table", numeric=(2,)))
    parts.append("</section>")
    return parts


def _sizing(result: dict[str, Any]) -> list[str]:
    parts = ['<section id="sizing"><h2>Demand sizing</h2>']
    frame = sizing_frame(result)
    demand = result.get("demand")
    if demand:
        parts.append("<p>Demand: " + _e(", ".join(f"{k} {_num(v)}" for k, v in
                                                   sorted(demand.items()))) + ".</p>")
    if frame.height:
        parts.append(table([SIZING_HEADERS[c] for c in frame.columns], frame.rows(),
                           table_id="sizing-table", numeric=range(2, len(frame.columns))))
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


def _candidates(result: dict[str, Any]) -> list[str]:
    parts = ['<section id="candidates"><h2>Candidates: sources, sovereignty and notes</h2>']
    for c in result["candidates"]:
        d = c.get("detail") or {}
        items = [
            f"Throughput ({_e(c['tokens_per_s_grade'])}): {_e(d.get('tokens_per_s_source'))}",
            f"Cost ({_e(d.get('cost_grade'))}): {_e(d.get('cost_source'))}",
            f"Power ({_e(d.get('power_grade') or 'none')}): "
            f"{_e(d.get('power_source') or 'not given')}",
            f"Electricity ({_e(d.get('electricity_grade') or 'none')}): "
            f"{_e(d.get('electricity_source') or 'not available')}",
            f"Grid intensity ({_e(d.get('grid_grade') or 'none')}): "
            f"{_e(d.get('grid_source') or 'not available')}",
            f"Sovereignty: {_e(d.get('sovereignty_reason'))}",
        ]
        if c.get("exclusion_reason"):
            items.append(f"<strong>Excluded:</strong> {_e(c['exclusion_reason'])}")
        items += [f"Note: {_e(n)}" for n in c.get("notes") or []]
        parts.append(f'<h3 id="candidate-{_e(c["id"])}">{_e(c["id"])}: {_e(c["label"])}</h3>'
                     "<ul>")
        parts += [f"<li>{i}</li>" for i in items]
        parts.append("</ul>")
    parts.append("</section>")
    return parts


def _assumptions(result: dict[str, Any]) -> list[str]:
    slo = result.get("slo") or {}
    frame = assumptions_frame(result)
    return [
        '<section id="assumptions"><h2>Assumptions</h2>',
        "<p>Every input of every candidate, with its unit, grade and source. SLO: "
        f"{_e(_slo(slo))}.</p>",
        table(["Candidate", "Input", "Value (point)", "Low", "High", "Unit", "Grade", "Source"],
              frame.select("id", "input", "value", "low", "high", "unit", "grade",
                           "source").rows(),
              table_id="assumptions-table", numeric=(2, 3, 4)),
        "</section>",
    ]


def _methodology(result: dict[str, Any]) -> list[str]:
    steps = result.get("formulas") or []
    parts = [
        '<section id="methodology"><h2>Methodology</h2>',
        "<p>Throughput is the shared denominator of every metric. The steps below are the "
        "engine's own formulas (pipeline/engine/metrics.py), carried in the result and evaluated "
        "in this order, each from the inputs (listed under Assumptions) and the steps above it; "
        "docs/methodology.md gives the full text.</p>",
    ]
    if steps:
        parts.append(table(["Step", "Formula", "Unit"],
                           [[s.get("name"), s.get("formula"), s.get("unit")] for s in steps],
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


def _sources(result: dict[str, Any]) -> list[str]:
    frame = sources_frame(result)
    parts = ['<section id="sources"><h2>Sources</h2>']
    if not frame.height:
        parts.append("<p>No market source was used.</p></section>")
        return parts
    parts.append('<table class="plain" id="sources-table"><thead><tr><th>Kind</th>'
                 "<th>Subject</th><th>URL</th><th>Date</th><th>Licence and attribution</th>"
                 "<th>Content sha256</th></tr></thead><tbody>")
    for s in frame.iter_rows(named=True):
        url = s["url"] or ""
        link = (f'<a href="{_e(url)}">{_e(url)}</a>' if url.startswith(("http://", "https://"))
                else _e(url))
        parts.append(f"<tr><td>{_e(s['kind'])}</td><td>{_e(s['subject'])}</td><td>{link}</td>"
                     f"<td>{_e(s['date'])}</td><td>{_e(s['licence'])}</td>"
                     f'<td class="hash">{_e(s["snapshot_sha256"])}</td></tr>')
    parts.append("</tbody></table></section>")
    return parts


def _slo(slo: dict[str, Any]) -> str:
    limits = [f"{k} {v:g}" for k, v in sorted(slo.items()) if isinstance(v, int | float)]
    return ", ".join(limits)
