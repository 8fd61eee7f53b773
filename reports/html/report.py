"""One self-contained HTML file (no network needed to view it, no JavaScript): a summary
that is the first screen and the first PDF page (reports/html/first_screen.py: the recommendation,
the excluded candidates, a compact scorecard of the four axes, one line on data freshness),
then an appendix: Pareto charts, the full scorecard, probabilities, sensitivity, break-even,
configurations, sizing, an optional vintage diff, per-candidate sources and notes, the
evidence table (each input's grade, files and checks), assumptions, data freshness,
methodology and sources.

A section whose inputs are absent from the result says so instead of vanishing. This module
gathers what each section shows; reports/templates/report.html (and first_screen.html,
diff_section.html) lays it out, escaping every value (reports/page.py). The full scorecard is
great-tables' HTML (which escapes its cells); the charts come from reports/figures/sections.py
(SVG drawn by vl-convert, which writes text as XML text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from markupsafe import Markup

from reports.figures import charts
from reports.figures.sections import chart_sections
from reports.frames import (
    BREAK_EVEN_HEADERS,
    SIZING_HEADERS,
    Frames,
    change_text,
    frames_of,
    has_p_frontier,
    shortlist,
    shortlist_note,
    shortlisted,
    words,
)
from reports.freshness import freshness
from reports.html.diff_report import diff_view
from reports.html.first_screen import (
    FIRST_SCREEN_CHANGES,
    demand_text,
    gap_text,
    nearest_changes,
    node_text,
    paying_text,
    sizing_of,
    slo_text,
    summary,
)
from reports.html.methodology import CONVERSIONS, DEFINITIONS
from reports.html.regulation import regulation_view
from reports.html.scorecard_table import NOT_COMPUTED, scorecard_html, status
from reports.page import num, render
from schemas.outputs import OUTPUTS
from schemas.result import Diff, Result

#: the appendix sections in order: (id, title)
APPENDIX = (
    ("pareto", "Pareto charts"), ("scorecard-section", "Full scorecard"),
    ("cost-breakdown", "Cost breakdown"),
    ("probabilities", "Probabilities"), ("tornado", "Sensitivity (tornado)"),
    ("break-even", "Break-even"), ("configurations", "Configurations"),
    ("sizing", "Demand sizing"), ("diff", "Change since last vintage"),
    ("candidates", "Candidates"), ("regulation", "Regulatory gates and sovereignty rubric"),
    ("evidence", "Evidence"), ("assumptions", "Assumptions"),
    ("data-freshness", "Data freshness"), ("methodology", "Methodology"),
    ("sources", "Sources"),
)


def plan_view(result: Result) -> dict[str, Any] | None:
    """The purchase plan section: per schedule its nodes and gap, each month's figures, and
    from which month own capacity pays (None without a plan)."""
    if result.plan is None:
        return None
    heads = ["Month", "Demand (tokens/day)", "Own nodes serving", "Own share of the month",
             "Own cost (EUR)", "Fallback cost (EUR)", "Unserved (Mtok)"]
    plan = result.plan
    growth = plan.growth_per_year
    path = ("the demand as declared month by month" if growth is None else
            f"the demand growing {growth.mode:.0%} a year ({growth.low:.0%} to "
            f"{growth.high:.0%})" if not isinstance(growth, int | float) else
            f"the demand growing {growth:.0%} a year")
    return {"horizon": f"{plan.months} months, {path}; cost and tokens discounted at "
                       f"{plan.cost_of_capital_per_year:.2%} a year "
                       f"({plan.cost_of_capital_source}).",
            "schedules": [{
        "candidate": s.candidate, "nodes": [node_text(o) for o in s.purchases],
        "gap": gap_text(s), "heads": heads,
        "rows": [[m.month, num(m.demand_tokens_per_day), num(m.serving_instances),
                  num(m.own_share), num(m.own_cost_eur), num(m.fallback_cost_eur),
                  num(m.unserved_mtok)] for m in s.months]}
        for s in plan.schedules],
        "paying": [paying_text(b) for b in plan.break_even]}


def appendix_of(result: Result) -> tuple[tuple[str, str], ...]:
    """The appendix's sections: with a plan, its purchase plan before the break-even."""
    if result.plan is None:
        return APPENDIX
    at = [key for key, _ in APPENDIX].index("break-even")
    return (*APPENDIX[:at], ("plan", "Purchase plan"), *APPENDIX[at:])


def render_html(result: Result, diff: Diff | None = None, *,
                frames: Frames | None = None) -> str:
    """The whole page (reports/templates/report.html). `diff` (`schemas.result.Diff`, from
    `pipeline.compare`) adds the change-since-last-vintage section; without it the section
    says no comparison was made. `frames`: the result's, when the caller has built them
    (`write_outputs` does)."""
    frames = frames_of(result) if frames is None else frames
    listed, note = _listed(result)
    shown = frames if listed is result else frames.only({c.id for c in listed.candidates})
    fresh = freshness(result)
    demand = result.demand
    sizing = shown.sizing
    return render(
        "report.html", result=result, note=note,
        # rendered from reports/templates/first_screen.html, which escapes its values
        first_screen=Markup(summary(result, appendix_of(result))),
        figures=chart_sections(shortlisted(result)), unavailable=charts.unavailable(),
        not_computed=NOT_COMPUTED,
        # great-tables' HTML: it escapes its cells itself (reports/html/scorecard_table.py)
        scorecard=Markup(scorecard_html(listed, shown.scorecard)),
        cost=_cost_breakdown(listed), mixes=_mixes(listed),
        per_request=_per_request(listed),
        p_frontier=[[c.id, c.p_frontier, status(c)] for c in listed.candidates]
        if has_p_frontier(result) else None,
        break_even=[[b.candidate, b.versus,
                     num(b.tokens_per_day) if b.tokens_per_day is not None
                     else "no break-even in the volumes compared"]
                    for b in result.break_even],
        break_even_head=BREAK_EVEN_HEADERS["break_even_tokens_per_day"],
        changes=[] if result.recommendation is None else [
            change_text(c) for c in nearest_changes(result.recommendation)],
        changes_shown=FIRST_SCREEN_CHANGES,
        plan=plan_view(result),
        demand=None if demand is None else demand_text(demand, result.token_basis),
        sizing={"heads": [SIZING_HEADERS[c] for c in sizing.columns], "rows": sizing.rows()}
        if sizing.height else None,
        diff=None if diff is None else diff_view(diff),
        candidates=listed.candidates, words=words, regulation=regulation_view(shown),
        evidence=[["–" if cell is None else cell for cell in row]
                  for row in shown.evidence.rows()],
        assumptions=shown.assumptions.select(
            "id", "input", "value", "low", "high", "unit", "grade", "source").rows(),
        slo=slo_text(result.slo), fresh=fresh, stale=[f for f in fresh if f.stale],
        freshness_rows=[[f.kind, f.subject, f.as_of, f.age_days,
                         "STALE" if f.stale else "no" if f.stale is False else "unknown",
                         f.rule] for f in fresh],
        freshness_classes=["stale" if f.stale else "" for f in fresh],
        formulas=[[s.name, s.formula, s.unit] for s in result.formulas],
        conversions=CONVERSIONS, definitions=DEFINITIONS, sources=_sources(frames.sources))


def write_html(result: Result, path: Path, diff: Diff | None = None, *,
               frames: Frames | None = None) -> None:
    path.write_text(render_html(result, diff, frames=frames), encoding="utf-8")


#: the most candidates the full scorecard lists (great-tables renders row by row, so a page
#: stays quick to make and to read; the CSV, the workbook and the JSON hold every candidate)
SCORECARD_ROWS_MAX = 200


def _listed(result: Result) -> tuple[Result, str | None]:
    """The result with only the candidates the full scorecard lists (`shortlist`), for the
    appendix's per-candidate tables, and the note saying so (None when every one is)."""
    candidates, left_out = shortlist(result, SCORECARD_ROWS_MAX)
    if not left_out:
        return result, None
    ids = {c.id for c in candidates}
    listed = result.model_copy(update={
        "candidates": candidates, "sizing": [r for r in result.sizing if r.candidate in ids]})
    return listed, shortlist_note(len(candidates), left_out, "scorecard.csv, scorecard.xlsx "
                                  "and scorecard.json hold every one")


#: what one instance-hour is made of: a price (declared or an offer) or a TCO's components
#: (electricity counted only in a TCO: a price per hour already includes it)
_TCO_PARTS = ("capital_eur_per_hour", "maintenance_eur_per_hour", "staff_eur_per_hour",
              "hosting_eur_per_hour", "electricity_eur_per_hour")


def _cost_breakdown(result: Result) -> dict[str, Any]:
    """The cost breakdown table: heads and one row per candidate."""
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
    return {"heads": heads, "rows": rows}


#: the split of a mix, one row per part
MIX_HEADS = ["Part", "Candidate", "Sovereignty level", "Own instances", "Share of tokens",
             "Mtok a month", "Cost a month (EUR)", "Share of cost", "CPM (EUR/Mtok)",
             "Energy (J/token)", "Carbon (gCO2e/Mtok)", "Carbon a month (kgCO2e)",
             "Share of carbon"]
#: under a plan the split is the horizon's (MixSplit.split_over): its mean month, its
#: discounted cost's shares and each part's own horizon figures
MIX_HORIZON_HEADS = [{"Mtok a month": "Mtok a month (horizon's mean)",
                      "Cost a month (EUR)": "Cost a month (EUR, horizon's mean)",
                      "Share of cost": "Share of discounted cost",
                      "Carbon a month (kgCO2e)": "Carbon a month (kgCO2e, horizon's mean)",
                      }.get(h, h) for h in MIX_HEADS]


def _mixes(result: Result) -> list[dict[str, Any]]:
    """Each mix's split (schemas/result.py MixSplit): its base size, the share of tokens at
    each sovereignty level, and one row per part."""
    out = []
    for c in result.candidates:
        if c.mix is None:
            continue
        m = c.mix
        size = ("no base size meets the policy" if m.base_instances is None else
                f"{m.base_instances} of up to {m.max_base_instances} own instances")
        policy = (None if m.policy_level is None else
                  f"at least {m.policy_share:.0%} of the tokens at sovereignty level >= "
                  f"{m.policy_level}" + ("" if m.policy_share_met is None else
                                         f" (served: {m.policy_share_met:.1%})"))
        levels = ", ".join(f"level {r.level}: {r.tokens_share:.1%}"
                           for r in m.tokens_share_by_level)
        rows = [[p.part, p.id, p.sovereignty_level, p.instances, p.tokens_share,
                 p.mtok_per_month, p.monthly_cost_eur, p.cost_share, p.cpm_eur_per_mtok,
                 p.energy_j_per_token, p.carbon_gco2e_per_mtok, p.carbon_kgco2e_per_month,
                 p.carbon_share] for p in m.parts]
        out.append({"id": c.id, "size": size, "policy": policy, "levels": levels,
                    "rows": rows, "heads": MIX_HORIZON_HEADS if m.split_over == "horizon"
                    else MIX_HEADS})
    return out


def _per_request(result: Result) -> dict[str, Any]:
    """The candidates' figures of one mean request, and other systems' published ones with
    their boundaries (never mixed into the candidates' rows)."""
    names = ("facility_wh_per_request", "carbon_gco2e_per_request",
             "carbon_market_gco2e_per_request")
    ours = [[c.id, *(getattr(c, n) for n in names)] for c in result.candidates
            if c.facility_wh_per_request is not None]
    tokens = next((i.mode for c in result.candidates for i in c.inputs
                   if i.input == "request_tokens"), None)
    return {
        "heads": ["Candidate", *(OUTPUTS[n].label for n in names)],
        "ours": ours,
        "tokens": f"{tokens:g} tokens on the {result.token_basis} basis" if tokens else "",
        "other_heads": ["System", "Request", "Energy (Wh/request)",
                        "Carbon (gCO2e/request)", "Accounting", "Boundary", "Source"],
        "others": [[p.system, p.request_description, p.published_wh_per_request,
                    p.published_gco2e_per_request, p.published_accounting.replace("_", "-"),
                    p.per_request_boundary, f"{p.source_url} ({p.source_date})"]
                   for p in result.published_per_request],
    }


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


def _sources(sources: pl.DataFrame) -> list[dict[str, Any]]:
    """The sources table's rows: each URL shortened for its cell, linked when it is one."""
    rows = []
    for s in sources.iter_rows(named=True):
        url = s["url"] or ""
        rows.append({"kind": s["kind"], "subject": s["subject"], "url": url,
                     "shown": short_url(url), "link": url.startswith(("http://", "https://")),
                     "date": s["date"], "licence": s["licence"], "sha256": s["snapshot_sha256"]})
    return rows
