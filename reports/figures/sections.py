"""The report's figures as HTML fragments: each chart an inline SVG in a <figure> with alt text
(role="img", aria-label) and a caption saying what to read from it, with a small table where
that reads better (the Pareto key, the configurations, the break-even sentences).

The pages use one entry point: it builds every spec of the report (reports/figures/charts.py),
draws them in one pass and returns one fragment per section, without heading, "" when nothing
applies. The macros of reports/templates/figures.html lay the fragments out, escaping every
value (ids, labels, settings); inside the SVG vl-convert writes text as XML text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from reports.figures import charts
from reports.figures.charts import Spec
from reports.frames import HEADERS, gap_months, in_sentence
from reports.page import figure_text, macros, quantity, volume
from schemas.outputs import OUTPUTS
from schemas.result import Result

SECTIONS = ("pareto", "pairwise", "tornado", "break_even", "configurations", "plan")


@dataclass
class Chart:
    """A figure waiting for its SVG (all of a report's are drawn in one pass)."""

    figure_id: str
    spec: Spec
    alt: str
    caption: str
    after: Markup = field(default_factory=Markup)  # inside the figure after the SVG (a key)


Part = Markup | Chart


def _figures() -> Any:
    """The macros of reports/templates/figures.html."""
    return macros("figures.html")


def _table(*args: Any, **kwargs: Any) -> Markup:
    """A plain table (reports/templates/parts.html)."""
    return macros("parts.html").table(*args, **kwargs)


def figure(chart: Chart, svg: str) -> Markup:
    """One figure: the SVG with role="img" and its alt text as aria-label on the root
    element, what follows it, and its caption."""
    head, _, tail = svg.partition("<svg")
    # the SVG is drawn by vl-convert (charts.render), which writes its text as XML text
    return _figures().figure(chart.figure_id, Markup(head), Markup(tail), chart.alt,
                             chart.after, chart.caption)


def _unit(column: str) -> str:
    return OUTPUTS[column].unit if column in OUTPUTS else ""


def _short(column: str) -> str:
    return "carbon" if column.startswith("carbon") else "energy" if column.startswith(
        "energy") else column


# ------------------------------------------------------------------------------- sections

def _pareto(result: Result) -> list[Part]:
    parts: list[Part] = []
    for x, y in charts.PARETO_PAIRS:
        layout = charts.pareto_layout(result, x, y)
        if layout is None:
            continue
        xl, yl = in_sentence(x), in_sentence(y)
        low_x = min(layout.points, key=lambda p: (p.x, p.id))
        low_y = min(layout.points, key=lambda p: (p.y, p.id))
        alt = (f"Scatter of {HEADERS[x]} against {HEADERS[y]} for {len(layout.points)} "
               f"candidates; lowest {xl}: {low_x.id} ({quantity(low_x.x, _unit(x))}); "
               f"lowest {yl}: {low_y.id} ({quantity(low_y.y, _unit(y))}).")
        caption = ("Lower left is better on both: outlined points joined by the dashed line "
                   "are the Pareto frontier (over all the policy's objectives, so a frontier "
                   "point may look dominated in this view), the ringed point is the "
                   "recommendation; whiskers p5-p95.")
        for column, axis in ((x, layout.x_axis), (y, layout.y_axis)):
            if axis.log:
                values = [p.x if column == x else p.y for p in layout.points]
                caption += (f" {HEADERS[column]} on a log scale: the figures span "
                            f"{quantity(min(values), None)} to {quantity(max(values), None)} "
                            f"({max(values) / min(values):.0f}x).")
        if layout.missing:
            caption += f" Not plotted (a figure is missing): {', '.join(layout.missing)}."
        after = Markup()
        if layout.numbered:
            shown = {int(n) for lb in layout.labels for n in lb.text.split(", ")}
            caption += f" Points are numbered by {xl}: the table under the chart names them."
            if len(shown) < len(layout.points):
                caption += (f" {len(shown)} of {len(layout.points)} points are numbered (the "
                            "recommendation, the frontier, then the lowest numbers); the "
                            "scorecard lists every candidate.")
            after = _table(
                ["#", "Candidate", HEADERS[x], HEADERS[y]],
                [[p.number, p.id + (" (recommended)" if p.chosen else ""),
                  quantity(p.x, None), quantity(p.y, None)]
                 for p in sorted(layout.points, key=lambda p: p.number) if p.number in shown],
                table_id=f"chart-pareto-{_short(y)}-key", numeric=(0, 2, 3))
        parts.append(Chart(f"chart-pareto-{_short(y)}", charts.pareto_spec(layout), alt,
                           caption, after))
    return parts


def _pairwise(result: Result) -> list[Part]:
    ids, p, narrowed = charts.pairwise_matrix(result)
    if len(ids) < 2:
        return []
    chosen = None if result.recommendation is None else result.recommendation.candidate
    caption = ("Read across a row: the share of Monte Carlo draws in which the row "
               "candidate's CPM is lower than the column's (50 % is a toss-up; below the "
               "diagonal 1 minus the mirror cell, so a tie counts for the row).")
    if narrowed:
        total = len({r.a for r in result.pairwise} | {r.b for r in result.pairwise})
        caption += (f" Limited to the Pareto frontier and the recommendation: {len(ids)} of "
                    f"{total} candidates.")
    sure = [f"{a} over {b}" for a in ids for b in ids
            if a != b and (p.get((a, b)) or 0) >= 0.95]
    alt = (f"Matrix of P(row cheaper than column) for {len(ids)} candidates, cheapest point "
           f"CPM first ({', '.join(ids)})"
           + (f"; at least 95 %: {'; '.join(sure[:6])}" if sure else "") + ".")
    return [Chart("chart-pairwise", charts.pairwise_spec(ids, p, chosen), alt, caption)]


def _tornado(result: Result) -> list[Part]:
    rec = result.recommendation
    metrics = list(dict.fromkeys(r.metric for r in result.tornado))
    # the recommendation's metric first (CPM unless the policy chose another)
    lead = next((m for m in metrics if rec is not None and m in rec.rule), "cpm_eur_per_mtok")
    metrics = sorted(metrics, key=lambda m: m != lead)  # stable: the rest keep their order
    parts: list[Part] = []
    for metric in metrics:
        panels, left_out = charts.tornado_panels(result, metric)
        if not panels:
            continue
        drawn = [cid for cid, _, _ in panels]
        biggest = max(((cid, b) for cid, _, bars in panels for b in bars),
                      key=lambda cb: cb[1].swing)
        alt = (f"Tornado charts of {HEADERS.get(metric, metric)}, one per candidate "
               f"({', '.join(drawn)}); the widest bar: {biggest[0]}, {biggest[1].label}, "
               f"{quantity(biggest[1].at_low, _unit(metric))} to "
               f"{quantity(biggest[1].at_high, _unit(metric))}.")
        caption = (f"The longest bar is the input that moves {in_sentence(metric)} most: each "
                   "bar spans the figure with that input at its low and at its high value, "
                   "the others at their point values; the vertical rule is the point figure.")
        quiet = [cid for cid in ((None, None) if rec is None else (rec.candidate, rec.runner_up))
                 if cid and cid not in drawn]
        if quiet:
            caption += (f" No stated range moves {in_sentence(metric)} of "
                        f"{' or '.join(quiet)}.")
        if left_out:
            caption += f" {left_out} more candidate(s) in the workbook's tornado data."
        figure_id = "chart-tornado" if not parts else f"chart-tornado-{len(parts) + 1}"
        parts.append(Chart(figure_id, charts.tornado_spec(result, metric, panels), alt,
                           caption))
    return parts


def _coinciding(entries: Sequence[charts.BreakEven]) -> list[list[str]]:
    """Groups of curves within 2 % of each other at every volume: drawn on one another."""
    groups: list[list[charts.BreakEven]] = []
    for e in entries:
        for g in groups:
            ref = g[0]
            if len(ref.curve) == len(e.curve) and all(
                    abs(a[1] - b[1]) <= 0.02 * max(a[1], b[1])
                    for a, b in zip(ref.curve, e.curve, strict=True)):
                g.append(e)
                break
        else:
            groups.append([e])
    return [[e.candidate for e in g] for g in groups if len(g) > 1]


#: the most on-prem candidates the break-even section describes and draws
BREAK_EVEN_MAX = 8


def _break_even(result: Result) -> list[Part]:
    entries = charts.break_even_entries(result)
    if not entries:
        return []
    # those that break even first lead; beyond BREAK_EVEN_MAX the rest are counted
    entries = sorted(entries, key=lambda e: (e.crossing is None, e.crossing or 0.0,
                                             min((c for _, c in e.curve), default=0.0),
                                             e.candidate))
    shown = entries[:BREAK_EVEN_MAX]
    parts: list[Part] = [_figures().break_even_sentences([e.sentence() for e in shown],
                                                         len(entries) - len(shown))]
    spec = charts.break_even_spec(shown)
    if spec is None:
        return parts
    crossing = sorted((e for e in shown if e.crossing is not None),
                      key=lambda e: (e.crossing, e.candidate))
    alt = (f"CPM against daily volume ({charts.basis_words(shown)}) for " +
           ", ".join(e.candidate for e in shown if e.curve) +
           f", with {shown[0].versus}'s CPM as a flat line; the first to break even: "
           f"{crossing[0].candidate} at {volume(crossing[0].crossing or 0)}.")
    caption = ("Where a curve falls below the dashed cloud line, that on-prem candidate costs "
               "less per token; the dotted verticals mark the break-even volumes. Both axes "
               "logarithmic.")
    if len(entries) > len(shown):
        caption += (f" {len(shown)} of {len(entries)} on-prem curves drawn: those that break "
                    "even first.")
    for group in _coinciding([e for e in shown if e.curve]):
        caption += f" The curves of {', '.join(group)} lie on one another (within 2 %)."
    parts.insert(0, Chart("chart-break-even", spec, alt, caption))
    return parts


CONFIGURATION_HEADERS = ("Configuration", "GPUs", "Goodput at the knee (tokens/s)",
                         "Goodput per GPU (tokens/s)", "Knee concurrency", "Meets the SLO",
                         "Runs", "Chosen")


def _configurations(result: Result) -> list[Part]:
    parts: list[Part] = []
    for i, c in enumerate(result.candidates, start=1):
        configs = c.evidence_configurations
        if len(configs) < 2:  # one configuration: no surface to read
            continue
        varying = charts.varying_settings(configs)
        rows = [[k.label or ", ".join(f"{s} {v}" for s, v in sorted(k.configuration.items())),
                 *[str(k.configuration.get(s)) for s in varying],
                 "n/a" if k.gpus is None else k.gpus,
                 figure_text(k.goodput_tokens_per_s, ",.0f"),
                 figure_text(k.goodput_per_gpu_tokens_per_s, ",.0f"),
                 figure_text(k.knee_concurrency, ".4g"),
                 "yes" if k.passes else "no", k.runs,
                 "chosen" if k.chosen else ""]
                for k in configs]
        headers = [CONFIGURATION_HEADERS[0], *varying, *CONFIGURATION_HEADERS[1:]]
        n = len(varying)
        table = _table(headers, rows, table_id=f"configurations-{i}",
                       numeric=(n + 1, n + 2, n + 3, n + 4, n + 6),
                       row_classes=["chosen" if k.chosen else "" for k in configs])
        chosen = next((k for k in configs if k.chosen), None)
        parts.append(_figures().configurations(c.id, len(configs), chosen))
        grid = charts.configuration_grid(configs)
        if grid is not None:
            unit = ("tokens/s per GPU" if grid.metric == "goodput_per_gpu_tokens_per_s"
                    else "tokens/s")
            best = max((k for k in grid.cells if k["value"] is not None and k["passes"]),
                       key=lambda k: k["value"], default=None)
            alt = (f"Heatmap of {c.id}'s goodput at the knee ({unit}) over "
                   f"{grid.x_setting} ({', '.join(grid.x_values)}) and {grid.y_setting} "
                   f"({', '.join(grid.y_values)})"
                   + (f"; highest that meets the SLO: {grid.x_setting} {best['x']}, "
                      f"{grid.y_setting} {best['y']} ({best['value']:,.0f})" if best else "")
                   + ".")
            caption = (f"The darker the cell, the more goodput at the knee ({unit}); the "
                       "outlined cell is the chosen configuration, grey cells with ✗ miss "
                       "the SLO.")
            parts.append(Chart(f"chart-configurations-{i}", charts.configuration_spec(grid),
                               alt, caption, table))
        else:
            parts.append(table)
    return parts


def _plan(result: Result) -> list[Part]:
    """The purchase plan of the recommended candidate (the plan's first schedule) and of
    the cheapest own one, each its cost and capacity over the horizon."""
    if result.plan is None:
        return []
    parts: list[Part] = []
    for i, s in enumerate(result.plan.schedules, start=1):
        gap = [m.month for m in gap_months(s)]
        nodes = s.purchases[-1].last_node if s.purchases else 0
        alt = (f"Monthly cost and capacity of {s.candidate} over {len(s.months)} months: "
               f"{nodes} own node(s) added"
               + (f", months {gap[0]} to {gap[-1]} covered by {s.fallback}" if gap and
                  s.fallback else f", months {gap[0]} to {gap[-1]} unserved" if gap else "")
               + ".")
        caption = ("Above, each month's cost (own fleet and fallback stacked); below, the "
                   "demand (dashed) and the own nodes' goodput: a node's step is the month "
                   "it starts serving.")
        parts.append(Chart(f"chart-plan-{i}", charts.plan_spec(s), alt, caption))
    return parts


# ------------------------------------------------------------------------------- assembly

_BUILDERS: dict[str, Callable[[Result], list[Part]]] = {
    "pareto": _pareto, "pairwise": _pairwise, "tornado": _tornado,
    "break_even": _break_even, "configurations": _configurations, "plan": _plan,
}


def chart_sections(result: Result) -> dict[str, Markup]:
    """section key -> HTML fragment (figures with alt text and caption, small tables), ""
    when nothing applies; the keys are SECTIONS. All specs are built first and drawn in one
    pass (inside `charts.rendering_cache`, drawn ones are reused)."""
    built = {key: _BUILDERS[key](result) for key in SECTIONS}
    pending = [p for parts in built.values() for p in parts if isinstance(p, Chart)]
    why = charts.unavailable()
    svgs = {} if why else dict(zip(
        (id(p) for p in pending),
        charts.render([(p.figure_id, p.spec) for p in pending]), strict=True))
    out = {}
    for key, parts in built.items():
        out[key] = Markup().join(
            p if isinstance(p, Markup) else _figures().no_chart(why, p.after) if why
            else figure(p, svgs[id(p)]) for p in parts)
    return out


__all__ = ["SECTIONS", "Chart", "chart_sections", "figure"]
