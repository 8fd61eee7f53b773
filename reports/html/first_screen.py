"""The report's summary, the first screen (1280 x 800) and the first PDF page: what to choose
and why, its cost at the demand (capex/opex where the result has it, a TCO fleet's total over
its amortisation, what the headroom and the redundancy cost in it), P(it is the cheapest),
how much of its figures is measured, what would change it, the excluded candidates with their
reasons, those whose quality the policy waives, and a compact scorecard of
the four axes (CPM, J/token, gCO2e/Mtok, sovereignty level) for every candidate, with units
and the basis. Data freshness is one line linking to its table in the appendix.

Reads the result (schemas/result.py) only and hands reports/templates/first_screen.html what
it prints; the template escapes every value (reports/page.py).
"""

from __future__ import annotations

import math
from typing import Any

from reports.frames import (
    GLANCE_ROWS,
    METRICS,
    change_text,
    degenerate,
    figure,
    gap_months,
    measured_text,
    ranges,
    shortlist,
    shortlist_note,
    words,
)
from reports.freshness import freshness, partial_sentence
from reports.html.methodology import SOVEREIGNTY_LEGEND, SOVEREIGNTY_WORDS
from reports.html.scorecard_table import better_text
from reports.page import eur, figure_text, num, render, volume
from reports.scans import scan_sentence
from schemas.result import (
    CandidateResult,
    CandidateSizing,
    Change,
    Demand,
    Plan,
    PlanBreakEven,
    PlanPurchase,
    PlanSchedule,
    Recommendation,
    Result,
    Slo,
)

#: the compact scorecard's metric columns (the four axes but sovereignty, shown apart)
AXES = ("cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok")


def summary(result: Result, appendix: tuple[tuple[str, str], ...]) -> str:
    """The summary block (`<div id="summary">`, reports/templates/first_screen.html);
    `appendix` lists (id, title) of the appendix sections for the contents line."""
    fresh = freshness(result)
    stale = [f for f in fresh if f.stale]
    return render("first_screen.html", result=result, slo=slo_text(result.slo),
                  objectives=", ".join(result.policy.objectives) or "none",
                  fresh=fresh, stale=stale, partial=None if result.partial_month is None else
                  partial_sentence(result.vintage, result.partial_month),
                  oldest=max(stale, key=lambda f: f.age_days or 0) if stale else None,
                  recommendation=_recommendation(result), excluded=_excluded(result),
                  fewer_axes=_fewer_axes(result), waived=_waived(result),
                  glance=_scorecard(result), appendix=appendix,
                  scans=[scan_sentence(s) for s in result.scans])


def slo_text(slo: Slo) -> str:
    """The SLO in words: `TTFT <= 1500 ms, TPOT <= 60 ms, met by 95 % of requests`."""
    said = []
    for name, limit in (("TTFT", slo.ttft_ms), ("TPOT", slo.tpot_ms),
                        ("largest gap", slo.max_itl_ms)):
        if limit is not None:
            said.append(f"{name} ≤ {limit:g} ms")
    for key, limit in (("tpot_p99_ms", slo.tpot_p99_ms), ("ttft_p99_ms", slo.ttft_p99_ms)):
        if limit is not None:
            said.append(f"{key} {limit:g}")
    said.append(f"met by {slo.attainment:.0%} of requests")
    return ", ".join(said)


def sizing_of(result: Result, c: CandidateResult) -> CandidateSizing | None:
    """A candidate's sizing at the demand: its own `sizing`, else its row of the result's
    top-level `sizing` list (a result stored before candidates carried it), else None."""
    if c.sizing is not None:
        return c.sizing
    return next((r for r in result.sizing if r.candidate == c.id), None)


def _candidate(result: Result, cid: str | None) -> CandidateResult | None:
    return next((c for c in result.candidates if c.id == cid), None)


def _split_text(rec: Recommendation, chosen: CandidateResult | None) -> str | None:
    split = rec.cost_split
    if split:
        return (f"capex annuity {eur(split.capex_eur_per_month)} + opex "
                f"{eur(split.opex_eur_per_month)} a month")
    if rec.monthly_cost_eur is None:
        return None
    if chosen is not None and chosen.deployment == "cloud":
        return "all opex: rented by the hour, no capex"
    if chosen is not None and chosen.deployment == "api":
        return "all opex: bought per token, no capex"
    if chosen is not None and chosen.mix is not None:
        parts = " + ".join(f"its {p.part} {p.id} {eur(p.monthly_cost_eur)}"
                           for p in chosen.mix.parts)
        return f"not split for a mix: {parts} a month"
    return "not split: the cost is declared per hour"


def _instances(count: float) -> str:
    return f"{count:,.0f} instance" + ("" if count == 1 else "s")


def _period_text(c: CandidateResult | None) -> str:
    """` · 2,255,148 EUR over the 48-month amortisation` for a TCO fleet (its monthly cost x
    its amortisation months), else nothing."""
    period, months = figure(c, "period_cost_eur"), figure(c, "amortisation_months")
    if period is None or months is None:
        return ""
    return f" · {eur(period)} over the {months:g}-month amortisation"


def margins_text(c: CandidateResult | None) -> str | None:
    """What the sizing's margins cost inside the monthly figure: `headroom costs 8,030 EUR a
    month (1 instance), redundancy 8,030 EUR a month (N+1: 1 instance)`; for elastic capacity,
    that neither is billed. None for a result without them (no demand, or stored before)."""
    headroom = figure(c, "monthly_headroom_cost_eur")
    spare = figure(c, "monthly_redundancy_cost_eur")
    extra = figure(c, "headroom_instances")
    if c is None or headroom is None or spare is None or extra is None:
        return None
    count = figure(c, "redundancy_instances") or 0.0
    if (c.capacity or c.detail.get("capacity")) == "elastic":
        return ("none billed: elastic capacity pays busy hours only (headroom "
                f"{_instances(extra)}" + (f", redundancy N+{count:g}" if count else "") + ")")
    said = (f"N+{count:g}: {_instances(count)}" if count else "none declared")
    return (f"headroom costs {eur(headroom)} a month ({_instances(extra)}), redundancy "
            f"{eur(spare)} a month ({said})")


def _recommendation(result: Result) -> dict[str, Any] | None:
    """The recommendation as the summary prints it: None without one, `candidate` None when
    no candidate is eligible."""
    rec = result.recommendation
    if rec is None:
        return None
    if rec.candidate is None:
        return {"candidate": None, "reason": words(rec.reason)}
    chosen = _candidate(result, rec.candidate)
    runner = _candidate(result, rec.runner_up)
    basis = result.token_basis
    figures: list[tuple[str, str]] = []
    if rec.monthly_cost_eur is not None:
        figures.append(("Cost at the demand",
                        f"{eur(rec.monthly_cost_eur)} a month · "
                        f"{eur(rec.annual_cost_eur)} a year" + _period_text(chosen)))
    elif rec.monthly_cost_reason:
        figures.append(("Cost at the demand", f"not computed: {rec.monthly_cost_reason}"))
    if (split := _split_text(rec, chosen)) is not None:
        figures.append(("Capex / opex", split))
    if (margins := margins_text(chosen)) is not None:
        figures.append(("Of which margins", margins))
    if chosen is not None and chosen.cpm_eur_per_mtok is not None:
        figures.append(("CPM" if result.plan is None else
                        f"CPM over {result.plan.months} months",
                        f"{chosen.cpm_eur_per_mtok:,.3f} EUR per million {basis} tokens"))
    if rec.p_chosen_cheapest is not None:
        figures.append(("P(cheapest eligible)",
                        f"{rec.p_chosen_cheapest:.0%} of the Monte Carlo draws"))
    if runner is not None:
        said = [runner.id]
        if runner.cpm_eur_per_mtok is not None:
            said.append(f"CPM {runner.cpm_eur_per_mtok:,.3f}")
        sizing = sizing_of(result, runner)
        if sizing is not None and sizing.monthly_cost_eur is not None:
            said.append(f"{eur(sizing.monthly_cost_eur)} a month")
        figures.append(("Runner-up", ", ".join(said)))
    if result.plan is not None:
        figures += plan_lines(result.plan)
    return {"candidate": rec.candidate, "label": None if chosen is None else chosen.label,
            "reason": words(rec.reason), "rule": words(rec.rule), "figures": figures,
            "measured": None if chosen is None else measured_text(chosen),
            "changes": [change_text(w) for w in nearest_changes(rec)[:FIRST_SCREEN_CHANGES]],
            "more_changes": max(0, len(rec.what_would_change_it) - FIRST_SCREEN_CHANGES)}


#: the input crossings the first screen lists (the nearest: it keeps the summary table on a
#: 1280 x 800 screen); the Sensitivity section lists them all
FIRST_SCREEN_CHANGES = 1


def nearest_changes(rec: Recommendation) -> list[Change]:
    """The recommendation's input crossings, those within the inputs' stated ranges first,
    then by how far each threshold lies from the input's value as the engine measures it
    (|log(threshold / value)|: halving and doubling are as far)."""
    def far(c: Change) -> float:
        ratio = c.threshold / c.current if c.current else 0.0
        return abs(math.log(ratio)) if ratio > 0 else math.inf
    return sorted(rec.what_would_change_it, key=lambda c: (not c.within_stated_range, far(c)))


def _excluded(result: Result) -> list[tuple[str, str]]:
    """(id, reason) of each excluded candidate."""
    return [(c.id, words(str(c.exclusion_reason))) for c in result.candidates
            if not c.eligible]


def _fewer_axes(result: Result) -> list[tuple[str, str]]:
    """(id, the objectives it lacks) of each eligible candidate compared on fewer axes
    (pipeline/engine/scorecard.py `_gate`)."""
    return [(c.id, str(c.detail["compared_without"])) for c in result.candidates
            if c.eligible and c.detail.get("compared_without")]


def _waived(result: Result) -> dict[str, Any] | None:
    """The eligible candidates whose quality is not validated, waived by policy.quality
    (`unvalidated = "allow"`), with the policy's reason; None when none is."""
    quality = result.policy.quality
    ids = [c.id for c in result.candidates
           if c.eligible and c.detail.get("quality_validation") == "waived"]
    if quality is None or not ids:
        return None
    return {"ids": ids, "reference": quality.reference, "reason": quality.unvalidated_reason}


def _result_word(result: Result, c: CandidateResult) -> str:
    rec = result.recommendation
    if rec is not None and c.id == rec.candidate:
        return "chosen"
    if rec is not None and c.id == rec.runner_up:
        return "runner-up"
    if not c.eligible:
        return "excluded"
    return "frontier" if c.pareto_rank == 1 else f"rank {c.pareto_rank}"


def _metric_cell(c: CandidateResult, column: str) -> dict[str, Any] | None:
    """A figure of the compact scorecard: its point, its p5–p95 when it has a spread, the
    power boundary of an energy figure; None when not computed."""
    decimals = METRICS[column].decimals
    point = getattr(c, column)
    if point is None:
        return None
    spread = ranges(c).get(column)
    low, high = (None, None) if spread is None else (spread.p5, spread.p95)
    shown = low is not None and high is not None and not degenerate(low, high, decimals)
    return {"point": f"{point:,.{decimals}f}",
            "spread": f"{low:,.{decimals}f}–{high:,.{decimals}f}" if shown else None,
            "boundary": c.energy_boundary if column == "energy_j_per_token" else None}


def _quality_cell(c: CandidateResult) -> dict[str, Any]:
    """The candidate's quality delta: its largest drop against the reference over the
    declared tasks (negative = worse), flagged when beyond the tolerance; every task's
    figures in the title. `reference` for the reference itself."""
    quality = c.quality
    if quality is None:
        return {"text": "n/a", "title": None}
    if quality.reference == c.id:
        return {"text": "reference", "title": None}
    drops = [(t, t.drop) for t in quality.tasks if t.drop is not None]
    if not drops:
        return {"text": "no reference to compare", "title": None}
    worst, most = max(drops, key=lambda pair: pair[1])
    every = "; ".join(
        f"{t.task}: drop {drop:.4g}"
        + (f" ± {t.stderr:.2g}" if t.stderr is not None else "")
        + (" (beyond tolerance)" if t.within_tolerance is False else "")
        for t, drop in drops)
    flag = " ✗" if worst.within_tolerance is False else ""
    return {"text": f"{worst.task} {-most:+.3g}{flag}", "title": every}


def _scorecard(result: Result) -> dict[str, Any]:
    """The compact scorecard: its heads, one row per listed candidate, the notes under it."""
    candidates, left_out = shortlist(result, GLANCE_ROWS)
    capital = any(c.detail.get("monthly_capital_eur") is not None for c in candidates)
    quality = any(c.quality is not None for c in candidates)
    sized = any(sizing_of(result, c) for c in candidates)
    heads = ["Candidate"]
    if sized:
        heads += ["Fleet at the demand (instances)", "Cost at the demand (EUR/month)"]
        if capital:
            heads.append("of which capex annuity (EUR/month)")
    heads += [f"{METRICS[m].label} p5–p95" if any(ranges(c).get(m) for c in candidates)
              else METRICS[m].label for m in AXES]
    heads += ["Sovereignty level (0–4)", "Result"]
    if quality:
        heads.append("Quality Δ vs reference (largest drop)")
    rows = []
    for c in candidates:
        word = _result_word(result, c)
        sizing = sizing_of(result, c)
        part = c.detail.get("monthly_capital_eur")
        rows.append({
            "css": word if word in ("chosen", "excluded") else "",
            "where": f"{c.provider} · {c.zone or c.detail.get('region') or ''}",
            "id": c.id, "label": c.label,
            **_fleet(c, sizing),
            "capital": "–" if part is None else f"{part:,.0f}",
            "metrics": [_metric_cell(c, m) for m in AXES],
            "level": c.sovereignty_level,
            "said": SOVEREIGNTY_WORDS.get(c.sovereignty_level, "unknown"),
            "reason": c.detail.get("sovereignty_reason") or "", "word": word,
            "quality": _quality_cell(c)})
    note = shortlist_note(len(candidates), left_out, "the full scorecard lists more, "
                          "scorecard.csv every one") if left_out else None
    basis = basis_text(result)
    if sized and any(c.mix is not None for c in candidates):
        basis += (" A mix's fleet is its base's instances plus the burst, which serves the "
                  "rest of each hour; its cost a month is both parts'.")
    return {"heads": heads, "rows": rows, "sized": sized, "capital": capital,
            "quality": quality, "note": note, "basis": basis,
            "legend": SOVEREIGNTY_LEGEND}


def _fleet(c: CandidateResult, sizing: CandidateSizing | None) -> dict[str, str | None]:
    """A row's fleet, its capacity and its cost a month at the demand: the sizing's, or a
    mix's (no sizing of its own: its base's instances + the burst, its month's cost both
    parts')."""
    if c.mix is not None:
        n = c.mix.base_instances
        return {"fleet": "n/a" if n is None else f"{n:,} + burst",
                "capacity": "base + burst",
                "monthly": figure_text(figure(c, "monthly_cost_eur"), ",.0f")}
    return {"fleet": figure_text(None if sizing is None else sizing.instances, ""),
            "capacity": (sizing.capacity if sizing is not None else None) or c.capacity,
            "monthly": figure_text(None if sizing is None else sizing.monthly_cost_eur,
                                   ",.0f")}


def demand_text(demand: Demand, basis: str) -> str:
    """The declared demand in words: `500,000,000 output tokens a day, peak 2 x the daily
    mean, 25% headroom`; the request shape as `key value`."""
    said = []
    if demand.tokens_per_day is not None:
        said.append(f"{demand.tokens_per_day:,.0f} {basis} tokens a day")
    if demand.requests_per_s is not None:
        said.append(f"{num(demand.requests_per_s)} requests/s")
    said.append(f"peak {demand.peak_factor:g} x the daily mean")
    said.append(f"{demand.headroom:.0%} headroom")
    if demand.redundancy_instances:
        said.append(f"N+{demand.redundancy_instances:g} redundancy")
    shape = (("output_tokens", demand.output_tokens),
             ("output_tokens_p95", demand.output_tokens_p95),
             ("prompt_tokens", demand.prompt_tokens),
             ("prompt_tokens_p95", demand.prompt_tokens_p95))
    said += [f"{k} {num(v)}" for k, v in shape if v is not None]
    return ", ".join(said)


def basis_text(result: Result) -> str:
    """What the compact scorecard's figures count: the token basis, the demand and capacity
    the fleets are sized and billed at, and the way each figure is better."""
    basis = result.token_basis
    said = [f"Per million {basis} tokens of requests meeting the SLO; J/token at each "
            "candidate's power boundary (hover a figure for it)"]
    demand = result.demand
    billing = ("; provisioned capacity bills every hour of the fleet, elastic only its busy "
               "hours, so CPM is at the utilisation the demand implies")
    if demand is not None:
        said.append(f"each fleet sized for the declared demand ({demand_text(demand, basis)})"
                    + billing)
    elif any(sizing_of(result, c) for c in result.candidates):
        said.append("each fleet sized for the declared demand" + billing)
    else:
        said.append("no demand declared: CPM at each candidate's declared utilisation")
    better = better_text()
    return "; ".join(said) + ". " + better[:1].upper() + better[1:] + "."


def _when(time: float) -> str:
    """A time of the horizon in months (0: its start) as the month it falls in."""
    return "the start" if time <= 0 else f"month {math.floor(time) + 1}" if time % 1 else \
        f"the end of month {time:.0f}"


def _serving(time: float) -> str:
    return f"month {math.floor(time) + 1}"


def node_text(order: PlanPurchase) -> str:
    """One month's order of a purchase plan (nodes bought together) in words."""
    which = (f"node {order.first_node}" if order.count == 1
             else f"nodes {order.first_node} to {order.last_node}")
    text = (f"{which} (needed in month {order.needed_month}) ordered at "
            f"{_when(order.ordered_at_month)}, serving from "
            f"{_serving(order.serves_from_month)}")
    worth = order.book_value_per_node_at_horizon_eur
    if worth is not None:
        text += f", worth {eur(worth * order.count)} at the horizon's end"
    return text


def gap_text(s: PlanSchedule) -> str | None:
    """The months before the own nodes serve, and what covers them; None without a gap."""
    gap = gap_months(s)
    if not gap:
        return None
    months = (f"month {gap[0].month}" if len(gap) == 1
              else f"months {gap[0].month} to {gap[-1].month}")
    note = "" if s.note is None else f" ({s.note})"
    if s.fallback is None:
        unserved = sum(m.unserved_mtok or 0.0 for m in gap)
        return f"{months} unserved ({unserved:,.0f} Mtok): no fallback declared{note}"
    return f"{months} covered by {s.fallback}{note}"


def paying_text(b: PlanBreakEven) -> str:
    """From which month own capacity pays, with its Monte Carlo band."""
    if b.from_month is None:
        return (f"{b.candidate}'s month never costs less per token than {b.versus}'s within "
                "the horizon" + ("" if b.note is None else f" ({b.note})"))
    band = ("" if b.from_month_p5 is None and b.from_month_p95 is None else
            " (5-95 %: " + ("beyond the horizon" if b.from_month_p5 is None
                            else f"month {b.from_month_p5:.0f}") + " to "
            + ("beyond the horizon" if b.from_month_p95 is None
               else f"month {b.from_month_p95:.0f}") + ")")
    demand = "" if b.from_tokens_per_day is None else f", at {volume(b.from_tokens_per_day)}"
    return (f"{b.candidate}'s month costs no more per token than {b.versus}'s from month "
            f"{b.from_month}{demand}{band}")


def plan_lines(plan: Plan) -> list[tuple[str, str]]:
    """What the first screen says of the plan, in one short item (the CPM above is the
    horizon's; the appendix's Purchase plan, linked from the contents, has the nodes, the
    gap, the months and the chart): the first schedule with own nodes, how many serve first
    and how many by its last purchase, and the months its fallback covers; else the
    recommended candidate's discounted cost at the plan's rate."""
    owned = next((x for x in plan.schedules if x.purchases), None)
    if owned is None:
        s = plan.schedules[0] if plan.schedules else None
        return [] if s is None else [
            ("Plan", f"{eur(s.cost_pv_eur)} discounted at "
                     f"{plan.cost_of_capital_per_year:.1%}/yr")]
    first, last = owned.purchases[0], owned.purchases[-1]
    said = (f"{owned.candidate}: {first.count} from {_serving(first.serves_from_month)}, "
            f"{last.last_node} by {_serving(last.serves_from_month)}")
    gap = [m.month for m in gap_months(owned)]
    if gap:
        said += (f", months {gap[0]}-{gap[-1]} " + (f"on {owned.fallback}" if owned.fallback
                                                  else "unserved"))
    return [("Own nodes", said)]
