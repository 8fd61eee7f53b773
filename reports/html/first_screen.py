"""The report's summary, the first screen (1280 x 800) and the first PDF page: what to choose
and why, its cost at the demand (capex/opex where the result has it, a TCO fleet's total over
its amortisation, what the headroom and the redundancy cost in it), P(it is the cheapest),
what would change it, the excluded candidates with their reasons, and a compact scorecard of
the four axes (CPM, J/token, gCO2e/Mtok, sovereignty level) for every candidate, with units
and the basis. Data freshness is one line linking to its table in the appendix.

Reads the result (schemas/result.py) only. Every foreign string goes through `escape`
(reports/html/page.py).
"""

from __future__ import annotations

from reports.frames import (
    GLANCE_ROWS,
    METRICS,
    change_text,
    degenerate,
    eur,
    figure,
    ranges,
    shortlist,
    shortlist_note,
    words,
)
from reports.freshness import freshness
from reports.html.methodology import SOVEREIGNTY_LEGEND, SOVEREIGNTY_WORDS
from reports.html.page import escape as _e
from reports.html.page import num
from reports.html.scorecard_table import better_text
from schemas.result import (
    CandidateResult,
    CandidateSizing,
    Demand,
    Recommendation,
    Result,
    Slo,
)

#: the compact scorecard's metric columns (the four axes but sovereignty, shown apart)
AXES = ("cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok")


def summary(result: Result, appendix: tuple[tuple[str, str], ...]) -> list[str]:
    """The summary block (`<div id="summary">`); `appendix` lists (id, title) of the
    appendix sections for the contents line."""
    return ['<div id="summary">', *_header(result), *_recommendation(result),
            *_excluded(result), *_scorecard(result), *_contents(appendix), "</div>"]


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


def _header(result: Result) -> list[str]:
    policy = result.policy
    objectives = ", ".join(policy.objectives) or "none"
    parts = [
        '<header id="header">',
        f"<h1>Scorecard: {_e(result.proposal)}</h1>",
        f'<p class="meta">Market data vintage <strong>{_e(result.vintage)}</strong> · '
        f"generated {_e(result.generated_at)} · code {_e(result.code_version)} · SLO: "
        f"{_e(slo_text(result.slo))} · policy: minimum sovereignty "
        f"{_e(policy.min_sovereignty)}, objectives {_e(objectives)}</p>",
    ]
    if result.example_data:
        parts.append('<div class="banner slim" id="example-data"><strong>EXAMPLE DATA.</strong>'
                     " Some figures are illustrative declarations from the bundled example "
                     "proposal, not measurements of your hardware. Do not base a decision on "
                     "them.</div>")
    parts += [_freshness_line(result), "</header>"]
    return parts


def _freshness_line(result: Result) -> str:
    fresh = freshness(result)
    if not fresh:
        return ('<p class="fresh" id="freshness-line">Data freshness: no market source was '
                "used; every figure is declared in the proposal.</p>")
    stale = [f for f in fresh if f.stale]
    link = '<a href="#data-freshness">freshness table</a>'
    if not stale:
        return (f'<p class="fresh" id="freshness-line">Data freshness: none of the '
                f"{len(fresh)} source figures is stale at vintage {_e(result.vintage)} "
                f"({link}).</p>")
    oldest = max(stale, key=lambda f: f.age_days or 0)
    return (f'<p class="fresh stale" id="freshness-line">Data freshness: <strong>{len(stale)} '
            f"of {len(fresh)} source figures stale</strong> at vintage "
            f"{_e(result.vintage)}, the oldest {_e(oldest.subject)} ({oldest.age_days} "
            f"days); see the {link}.</p>")


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


def _recommendation(result: Result) -> list[str]:
    rec = result.recommendation
    if rec is None:
        return ['<section id="recommendation"><h2>No recommendation in this result</h2>'
                "<p>The result carries no recommendation (stored before the engine made one);"
                " the scorecard below compares the candidates.</p></section>"]
    if rec.candidate is None:
        return ['<section id="recommendation">',
                f"<h2>No candidate to recommend</h2><p>{_e(words(rec.reason))}</p>",
                "</section>"]
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
        figures.append(("CPM", f"{chosen.cpm_eur_per_mtok:,.3f} EUR per million {basis} "
                               "tokens"))
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
    parts = [
        '<section id="recommendation">',
        f'<h2>Recommended: <span id="chosen">{_e(rec.candidate)}</span> '
        f'<span class="label">{_e(None if chosen is None else chosen.label)}</span></h2>',
        f'<p class="reason">{_e(words(rec.reason))} Rule: '
        f"{_e(words(rec.rule))}.</p>",
        '<dl class="figures">',
        *[f"<div><dt>{_e(t)}</dt><dd>{_e(v)}</dd></div>" for t, v in figures],
        "</dl>",
    ]
    changes = rec.what_would_change_it
    if changes:
        parts += ['<p><strong>What would change it</strong></p><ul class="changes">',
                  *[f"<li>{_e(change_text(w))}</li>" for w in changes], "</ul>"]
    else:
        parts.append("<p><strong>What would change it:</strong> no input crossing found.</p>")
    parts.append("</section>")
    return parts


def _excluded(result: Result) -> list[str]:
    out = [c for c in result.candidates if not c.eligible]
    if not out:
        return ['<section id="excluded"><h3>Excluded:</h3> none; every candidate meets the '
                "policy.</section>"]
    return ['<section id="excluded">', f"<h3>Excluded ({len(out)}):</h3> <ul>",
            *[f"<li><strong>{_e(c.id)}</strong>: {_e(words(str(c.exclusion_reason)))}"
              "</li>" for c in out],
            "</ul></section>"]


def _result_word(result: Result, c: CandidateResult) -> str:
    rec = result.recommendation
    if rec is not None and c.id == rec.candidate:
        return "chosen"
    if rec is not None and c.id == rec.runner_up:
        return "runner-up"
    if not c.eligible:
        return "excluded"
    return "frontier" if c.pareto_rank == 1 else f"rank {c.pareto_rank}"


def _metric_cell(c: CandidateResult, column: str) -> str:
    metric = METRICS[column]
    point = getattr(c, column)
    if point is None:
        return '<td class="num">n/a</td>'
    spread = ranges(c).get(column)
    low, high = (None, None) if spread is None else (spread.p5, spread.p95)
    cell = f"{point:,.{metric.decimals}f}"
    if low is not None and high is not None and not degenerate(low, high, metric.decimals):
        cell += f"<small>{low:,.{metric.decimals}f}–{high:,.{metric.decimals}f}</small>"
    title = ""
    if column == "energy_j_per_token" and c.energy_boundary:
        title = f' title="at the {_e(c.energy_boundary)} boundary"'
    return f'<td class="num"{title}>{cell}</td>'


def _quality_cell(c: CandidateResult) -> str:
    """The candidate's quality delta: its largest drop against the reference over the
    declared tasks (negative = worse), flagged when beyond the tolerance; every task's
    figures in the title. `reference` for the reference itself."""
    quality = c.quality
    if quality is None:
        return "<td>n/a</td>"
    if quality.reference == c.id:
        return "<td>reference</td>"
    drops = [(t, t.drop) for t in quality.tasks if t.drop is not None]
    if not drops:
        return "<td>no reference to compare</td>"
    worst, most = max(drops, key=lambda pair: pair[1])
    every = "; ".join(
        f"{t.task}: drop {drop:.4g}"
        + (f" ± {t.stderr:.2g}" if t.stderr is not None else "")
        + (" (beyond tolerance)" if t.within_tolerance is False else "")
        for t, drop in drops)
    flag = " ✗" if worst.within_tolerance is False else ""
    return (f'<td class="num" title="{_e(every)}">{_e(worst.task)} '
            f"{-most:+.3g}{flag}</td>")


def _scorecard(result: Result) -> list[str]:
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
        cls = "chosen" if word == "chosen" else "excluded" if word == "excluded" else ""
        zone = c.zone or c.detail.get("region") or ""
        where = f"{c.provider} · {zone}"
        cells = [f'<td title="{_e(where)}"><strong>{_e(c.id)}</strong>'
                 f"<small>{_e(c.label)}</small></td>"]
        if sized:
            sizing = sizing_of(result, c)
            fleet = None if sizing is None else sizing.instances
            capacity = (sizing.capacity if sizing is not None else None) or c.capacity
            cells.append(f'<td class="num">{"n/a" if fleet is None else fleet}'
                         f"<small>{_e(capacity)}</small></td>")
            monthly = None if sizing is None else sizing.monthly_cost_eur
            cells.append(f'<td class="num">{"n/a" if monthly is None else f"{monthly:,.0f}"}'
                         "</td>")
            if capital:
                part = c.detail.get("monthly_capital_eur")
                cells.append(f'<td class="num">{"–" if part is None else f"{part:,.0f}"}</td>')
        cells += [_metric_cell(c, m) for m in AXES]
        level = c.sovereignty_level
        reason = c.detail.get("sovereignty_reason") or ""
        said = SOVEREIGNTY_WORDS.get(level, "unknown")
        cells.append(f'<td class="level" title="{_e(reason)}">{_e(level)} · {_e(said)}</td>')
        cells.append(f'<td class="result">{_e(word)}</td>')
        if quality:
            cells.append(_quality_cell(c))
        rows.append(f'<tr class="{cls}">' + "".join(cells) + "</tr>" if cls
                    else "<tr>" + "".join(cells) + "</tr>")
    return ['<section id="summary-scorecard">',
            '<table class="plain compact" id="summary-table"><thead><tr>',
            *[f"<th>{_e(h)}</th>" for h in heads], "</tr></thead><tbody>", *rows,
            "</tbody></table>",
            *(['<p class="basis">' + _e(shortlist_note(
                len(candidates), left_out, "the full scorecard lists more, scorecard.csv every "
                "one")) + "</p>"] if left_out else []),
            f'<p class="basis" id="basis">{_e(basis_text(result))}</p>',
            f'<p class="basis">{_e(SOVEREIGNTY_LEGEND)}</p>', "</section>"]


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


def _contents(appendix: tuple[tuple[str, str], ...]) -> list[str]:
    links = " · ".join(f'<a href="#{_e(sid)}">{_e(title)}</a>' for sid, title in appendix)
    return [f'<nav id="contents"><strong>Appendix:</strong> {links}</nav>']
