"""Compute a scorecard from the resolved inputs (`pipeline.inputs.resolve`): evaluate the
metric steps, gate on policy, rank, then the uncertainty, tornado, sizing and break-even
analyses.

The result is one frame (one row per candidate, proposal order) plus analyses; the JSON
contract (DESIGN section 9) and every report are rendered from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from pipeline.engine import uncertainty
from pipeline.engine.fleet import mix, mixes, plan, sizing
from pipeline.engine.metrics import INPUTS, STEPS, eur_per_kwh, evaluate
from pipeline.engine.ranking import pareto, recommend
from pipeline.engine.ranking.pareto import OBJECTIVES, pareto_ranks
from pipeline.engine.resolved import Market, Resolved
from schemas.outputs import CONTRACT_FIGURES, layout
from schemas.proposal import Proposal, Range, TcoCost
from schemas.result import Formula, Result

#: The contract keys of each candidate, in the order reports show them: the figures declared
#: shown in the JSON (schemas/outputs.toml), with the candidate's names, grades and status.
CONTRACT_KEYS = layout(
    CONTRACT_FIGURES, lead=("id", "label", "deployment", "provider", "zone"),
    beside={"tokens_per_s": ("tokens_per_s_grade",), "energy_j_per_token": ("energy_boundary",),
            "sovereignty_level": ("eligible", "exclusion_reason", "pareto_rank",
                                  "dominated_by", "dominated_by_count", "shortlisted")})


@dataclass(frozen=True)
class Scorecard:
    proposal: Proposal
    vintage: str
    table: pl.DataFrame
    resolved: Resolved
    monte_carlo: uncertainty.MonteCarlo
    tornado: pl.DataFrame
    sizing: pl.DataFrame | None
    break_even: list[dict[str, Any]]
    recommendation: dict[str, Any]
    #: other systems' published per-request figures (context for the candidates' own)
    published_per_request: list[dict[str, Any]] = field(default_factory=list)
    #: the plan over the horizon (None without a demand path)
    plan: dict[str, Any] | None = None

    @property
    def sources(self) -> list[dict[str, Any]]:
        return self.resolved.sources

    @property
    def uses_example_data(self) -> bool:
        return bool(self.table["example_data"].any())


@dataclass(frozen=True)
class Figures:
    """Each candidate's figures as the scorecard shows them (`table`: a plan's, gated, the
    mixes appended, Pareto-ranked) and what they are made of: the [demand] month's point
    (`first_month`, the metric steps of every candidate but the mixes), its inputs at their
    modes (`point_inputs`) and the mixes' chosen splits."""

    table: pl.DataFrame
    first_month: pl.DataFrame
    point_inputs: pl.DataFrame
    mixed: list[mix.Chosen]


def figures(proposal: Proposal, resolved: Resolved, mkt: Market) -> Figures:
    """The scorecard's figures before the analyses (Monte Carlo, tornado, sizing): what
    `compute` and `explain` both read, so explain gives the scorecard's figure."""
    point_inputs = uncertainty.point_frame(resolved.static, resolved.inputs)
    point = evaluate(point_inputs)
    table = resolved.static.join(point.drop("cost_model", "capacity"), on="id", how="left",
                                 maintain_order="left")
    path = plan.Path.of(proposal)
    first_month = table
    if path is not None:
        table = _planned(table, point_inputs, {c.id: c.fallback for c in proposal.candidates},
                         path)
    table = _gate(table, proposal)
    table, mixed = _with_mixes(table, point_inputs, proposal, path)
    if path is not None:
        table = _lowest_serving_level(table)
    eligible = table.filter(pl.col("eligible"))
    ranks = pareto_ranks(eligible, list(proposal.policy.objectives)) if eligible.height \
        else pl.DataFrame(schema={"id": pl.String(), "pareto_rank": pl.Int64(),
                                  "dominated_by": pl.List(pl.String()),
                                  "dominated_by_count": pl.Int64()})
    table = table.join(ranks, on="id", how="left", maintain_order="left")
    return Figures(_time_matched(table, point_inputs, mkt), first_month, point_inputs, mixed)


def compute(proposal: Proposal, resolved: Resolved, mkt: Market, draws: int | None = None
            ) -> Scorecard:
    """The scorecard of `proposal`'s candidates as `resolved` against the market `mkt`."""
    shown = figures(proposal, resolved, mkt)
    table, point_inputs, mixed = shown.table, shown.point_inputs, shown.mixed
    first_month = shown.first_month  # the sizing's figures are the first month's
    path = plan.Path.of(proposal)
    fallbacks = {c.id: c.fallback for c in proposal.candidates}
    objectives = list(proposal.policy.objectives)
    eligible = table.filter(pl.col("eligible"))
    rule = recommend.Rule.of(_choose(proposal))
    # many candidates: pairwise probabilities for the chosen, the runner-up and the frontier
    keep = [c for c in recommend.choice(eligible, rule) if c] if eligible.height else []
    table = _shortlisted(table, objectives, keep)
    # a plan's fallbacks go through the Monte Carlo with the candidates that use them
    used = [f for c, f in fallbacks.items() if f is not None and c in set(
        table.filter(pl.col("shortlisted"))["id"].to_list())] if path is not None else []
    short = table.filter(pl.col("shortlisted") | pl.col("id").is_in(used))
    short_ids = short["id"].implode()
    short_inputs = resolved.inputs.filter(pl.col("id").is_in(short_ids))
    # a mix off the shortlist is drawn no more than any other candidate off it
    in_short = set(short["id"].to_list())
    drawn_mixes = [m for m in mixed if m.id in in_short]
    drawn = _with_parts(short_inputs, resolved.inputs, drawn_mixes)
    cloud = eligible.filter(pl.col("deployment") == "cloud").sort("cpm_eur_per_mtok", "id")
    on_prem = eligible.filter(pl.col("deployment") == "on_prem")["id"].to_list()
    mc = uncertainty.run(short.select("id", "cost_model", "capacity", "sovereignty_level"),
                         drawn, short.filter(pl.col("eligible"))["id"].to_list(),
                         objectives, draws or proposal.uncertainty.draws,
                         proposal.uncertainty.seed,
                         pairwise_among=short.filter(pl.col("pareto_rank") == 1)["id"]
                         .to_list(), pairwise_keep=keep, path=path, fallbacks=fallbacks,
                         mixes=drawn_mixes, paying=_paying(path, on_prem, cloud, short,
                                                           drawn, resolved.inputs))
    # the sizing is the first month's (a plan's horizon does not size a fleet) and a mix's
    # fleet is its split (`mix`), not a sizing of its own: the rows before the mixes join,
    # with the gate's eligibility (payback compares with an eligible cloud)
    sized = sizing.sizing(first_month.join(table.select("id", "eligible"), on="id",
                                           how="left", maintain_order="left")
                          ) if proposal.demand else None
    # the curve is the [demand] month's fleet at other volumes: against the cloud's figure
    # of the same month (under a plan the scorecard's CPM is the horizon's)
    versus = cloud["id"][0] if cloud.height else None
    even = sizing.break_even(point_inputs, on_prem, versus, None if versus is None else (
        first_month.filter(pl.col("id") == versus)["cpm_eur_per_mtok"][0]))
    tornado = uncertainty.tornado(resolved.static.filter(pl.col("id").is_in(short_ids)),
                                  short_inputs, path=path, fallbacks=fallbacks,
                                  everyone=(resolved.static, resolved.inputs))
    choice = recommend.recommend(
        table, point_inputs, resolved.inputs, tornado, mc.p_cheapest, rule,
        has_demand=proposal.demand is not None, path=path, fallbacks=fallbacks,
        mixes={m.id: m for m in mixed})
    published = ([] if mkt.published_per_request is None else
                  [{**r, "source_date": str(r["source_date"])}
                   for r in mkt.published_per_request.iter_rows(named=True)])
    planned = None if path is None else _plan(
        proposal, path, table, point_inputs, resolved, fallbacks, choice["candidate"],
        on_prem, cloud["id"][0] if cloud.height else None, draws,
        {m.id: m for m in mixed}, mc.paying_band)
    return Scorecard(proposal, mkt.vintage, table, resolved, mc, tornado, sized, even, choice,
                     published, planned)


def _plan(proposal: Proposal, path: plan.Path, table: pl.DataFrame,
          point_inputs: pl.DataFrame, resolved: Resolved, fallbacks: dict[str, str | None],
          chosen: str | None, on_prem: list[str], cloud: str | None, draws: int | None,
          mixed: dict[str, mix.Chosen],
          band: dict[str, tuple[float | None, float | None]] | None = None
          ) -> dict[str, Any]:
    """The plan of the JSON: the horizon, the purchase plans of the recommended candidate
    (a mix's: its base's nodes and the burst, mixes.schedule) and of the cheapest eligible
    own one, and from which month own capacity pays against the cheapest eligible cloud
    (with the Monte Carlo's band)."""
    assert proposal.horizon is not None
    own = (table.filter(pl.col("id").is_in(on_prem)).sort("cpm_eur_per_mtok", "id")["id"]
           .to_list()[:1])
    shown = list(dict.fromkeys([c for c in (chosen, *own) if c is not None]))
    leased = {c.id for c in proposal.candidates if isinstance(c.cost, TcoCost)
              and proposal.tco[c.cost.tco].lease is not None}
    schedules = []
    for cid in shown:
        row = table.row(by_predicate=pl.col("id") == cid, named=True)
        if cid in mixed:
            base = mixed[cid].base[0]
            base_row = {**point_inputs.row(by_predicate=pl.col("id") == base, named=True),
                        **table.row(by_predicate=pl.col("id") == base, named=True),
                        "leased": base in leased}
            schedules.append({**mixes.schedule(mixed[cid], point_inputs, path, base_row),
                              "cpm_eur_per_mtok": row["cpm_eur_per_mtok"],
                              "first_month_cpm_eur_per_mtok":
                                  row["first_month_cpm_eur_per_mtok"]})
            continue
        inputs_row = point_inputs.row(by_predicate=pl.col("id") == cid, named=True)
        schedules.append({
            **plan.schedule(point_inputs, cid, fallbacks.get(cid), path,
                            {**inputs_row, **row, "leased": cid in leased}),
            "cpm_eur_per_mtok": row["cpm_eur_per_mtok"],
            "first_month_cpm_eur_per_mtok": row["first_month_cpm_eur_per_mtok"],
            **plan.discounted(point_inputs, cid, fallbacks.get(cid), path)})
    even = plan.break_even(point_inputs, on_prem, cloud, path)
    if even and cloud is not None:
        # the Monte Carlo's, when it computed it from its own horizons (_paying)
        band = band or uncertainty.paying_month_band(
            resolved.static, resolved.inputs, on_prem, cloud, path,
            draws or proposal.uncertainty.draws, proposal.uncertainty.seed)
        even = [{**e, "from_month_p5": band[e["candidate"]][0],
                 "from_month_p95": band[e["candidate"]][1]} for e in even]
    growth = proposal.horizon.growth_per_year
    return {"months": path.months, "cost_of_capital_per_year": path.rate_per_year,
            "cost_of_capital_source": path.rate_source,
            "growth_per_year": growth.model_dump() if isinstance(growth, Range) else growth,
            "demand_by_month": None if path.by_month is None else list(path.by_month),
            "schedules": schedules, "break_even": even}


def _planned(table: pl.DataFrame, point_inputs: pl.DataFrame,
             fallbacks: dict[str, str | None], path: plan.Path) -> pl.DataFrame:
    """Under a plan, the objectives' figures are the horizon's (plan.at_modes), the first
    month's CPM kept beside, and a note on each candidate says so."""
    horizon = plan.at_modes(point_inputs, fallbacks, path)
    replaced = [pl.col(f"{k}_horizon").alias(k) for k in plan.REPLACED]
    note = (f"plan over {path.months} months: CPM is the horizon's cost over its tokens, "
            f"both discounted at {path.rate_per_year:.2%} a year ({path.rate_source}); "
            "energy and carbon per token are the horizon's, weighted by each month's tokens; "
            "the first month's CPM is first_month_cpm_eur_per_mtok")
    levels = dict(zip(table["id"].to_list(), table["sovereignty_level"].to_list(),
                      strict=True))
    table = table.with_columns(
        pl.Series("fallback", [fallbacks.get(c) for c in table["id"].to_list()],
                  dtype=pl.String()),
        pl.Series("fallback_sovereignty_level",
                  [levels.get(f) if (f := fallbacks.get(c)) else None
                   for c in table["id"].to_list()], dtype=pl.Int64()))
    return table.with_columns(pl.col("cpm_eur_per_mtok").alias(
        "first_month_cpm_eur_per_mtok")).join(
        horizon.rename({k: f"{k}_horizon" for k in plan.REPLACED}), on="id", how="left",
        maintain_order="left").with_columns(replaced).drop(
        f"{k}_horizon" for k in plan.REPLACED).with_columns(
        pl.col("notes").list.concat(pl.lit([note])).alias("notes")).with_columns(
        pl.when(pl.col("horizon_fallback_share") > 0).then(pl.col("notes").list.concat(
            pl.concat_list(pl.format(
                "under the plan {} of the horizon's tokens are served by its fallback {} "
                "(sovereignty level {}) before its own nodes serve",
                (pl.col("horizon_fallback_share") * 100).round(1).cast(pl.String) + " %",
                "fallback", "fallback_sovereignty_level"))))
        .otherwise(pl.col("notes")).alias("notes"))


def _lowest_serving_level(table: pl.DataFrame) -> pl.DataFrame:
    """Under a plan a candidate whose fallback serves tokens is at the lowest level of those
    that serve its tokens, its own and its fallback's, as a mix is at its lowest serving
    part's (docs/decision.md "Under a plan"; after the gate, whose reasons name a fallback
    below the minimum, and after the mixes, whose base is at its own level)."""
    lowered = ((pl.col("horizon_fallback_share") > 0)
               & (pl.col("fallback_sovereignty_level") < pl.col("sovereignty_level"))
               ).fill_null(False)
    return table.with_columns(
        pl.when(lowered).then(pl.col("fallback_sovereignty_level"))
        .otherwise(pl.col("sovereignty_level")).alias("sovereignty_level"),
        pl.when(lowered).then(pl.format(
            "{}; under the plan its fallback {} (sovereignty level {}) serves {} of the "
            "horizon's tokens: the lowest level that serves its tokens, as a mix's",
            "sovereignty_reason", "fallback", "fallback_sovereignty_level",
            (pl.col("horizon_fallback_share") * 100).round(1).cast(pl.String) + " %"))
        .otherwise(pl.col("sovereignty_reason")).alias("sovereignty_reason"))


def _with_mixes(table: pl.DataFrame, point_inputs: pl.DataFrame, proposal: Proposal,
                path: plan.Path | None) -> tuple[pl.DataFrame, list[mix.Chosen]]:
    """The proposal's mixes (pipeline/engine/fleet/mixes.py) appended to the gated candidates,
    gated as they are; the `mix` column (their split) only when there are mixes. Under a
    plan a mix's figures are the horizon's, as the others'."""
    if not proposal.mixes:
        return table, []
    # a part's eligibility is its own, without the plan's exclusions of a candidate served
    # by its fallback (inside the mix the burst serves what the base does not)
    rows, chosen = mixes.rows(_gate(table, proposal, planned=False), point_inputs, proposal,
                              path)
    table = table.with_columns(pl.lit(None, dtype=mixes.SPLIT).alias("mix"))
    return pl.concat([table, _gate(rows, proposal)], how="vertical"), chosen


def _paying(path: plan.Path | None, on_prem: list[str], cloud: pl.DataFrame,
            short: pl.DataFrame, drawn: pl.DataFrame, inputs: pl.DataFrame
            ) -> tuple[list[str], str] | None:
    """What the Monte Carlo is asked to give of the plan's break-even band (own ids, the
    cheapest eligible cloud): under a plan, when all of them go through it and its draws
    are the band's (the same uncertain keys drawn from the same seed), so the months each
    own candidate's horizon computes give the band instead of being computed again."""
    if path is None or not on_prem or cloud.height == 0:
        return None
    versus = cloud["id"][0]
    if not set([*on_prem, versus]) <= set(short["id"].to_list()):
        return None
    if _uncertain_keys(drawn) != _uncertain_keys(inputs):
        return None
    return on_prem, versus


def _uncertain_keys(inputs: pl.DataFrame) -> list[str]:
    """The keys `uncertainty.Draws.sample` draws (one stream, in this order)."""
    return inputs.filter(pl.col("low") < pl.col("high"))["key"].unique().sort().to_list()


def _with_parts(short_inputs: pl.DataFrame, inputs: pl.DataFrame, mixed: list[mix.Chosen]
                ) -> pl.DataFrame:
    """The shortlist's inputs and those of the mixes' parts (drawn with them, so a part and
    its mix move together), whether or not the parts are shortlisted."""
    parts = {p[0] for m in mixed for p in (m.base, m.burst)} - set(short_inputs["id"])
    if not parts:
        return short_inputs
    return pl.concat([short_inputs, inputs.filter(pl.col("id").is_in(list(parts)))])


def _shortlisted(table: pl.DataFrame, objectives: Sequence[str], keep: list[str]
                 ) -> pl.DataFrame:
    """`shortlisted` and `frontier_distance_share` (pareto.py `shortlist`): every candidate
    of a proposal of SHORTLIST_ABOVE candidates or fewer; above, the eligible candidates the
    rule keeps, and the recommendation and the runner-up (`keep`) whatever their distance."""
    eligible = table.filter(pl.col("eligible"))
    short = pareto.shortlist(eligible, objectives)
    every = table.height <= pareto.SHORTLIST_ABOVE
    return table.join(short.rename({"frontier_distance": "frontier_distance_share"}),
                      on="id", how="left", maintain_order="left").with_columns(
        (pl.lit(every) | pl.col("shortlisted").fill_null(False)
         | pl.col("id").is_in(keep)).alias("shortlisted"))


def _choose(proposal: Proposal) -> str | dict[str, Any]:
    choose = proposal.policy.choose
    return choose if isinstance(choose, str) else choose.model_dump()


TIME_MATCHED = ("wholesale_eur_per_kwh_profile", "grid_gco2e_per_kwh_profile",
                "electricity_eur_per_mtok_time_matched", "carbon_gco2e_per_mtok_time_matched")


def _time_matched(table: pl.DataFrame, point_inputs: pl.DataFrame, mkt: Market
                  ) -> pl.DataFrame:
    """Electricity and carbon per Mtok with the zone's sub-daily prices and intensities
    weighted by the workload profile, beside (never instead of) the flat figures. Figures a
    candidate declared itself keep their declared value."""
    if mkt.profile is None:
        return table.with_columns(pl.lit(None, dtype=pl.Float64()).alias(c)
                                  for c in TIME_MATCHED)
    weighted = point_inputs.join(
        table.select("id", "zone", "electricity_grade", "grid_grade")
        .join(mkt.profile.with_columns(
            eur_per_kwh(pl.col("wholesale_eur_per_mwh_profile"))
            .alias("wholesale_eur_per_kwh_profile")), on="zone", how="left"),
        on="id", how="left", maintain_order="left")

    def swap(name: str, grade: str) -> pl.Expr:
        return (pl.when(pl.col(grade) == "reference").then(pl.col(f"{name}_profile"))
                .otherwise(pl.col(name)).alias(name))

    matched = evaluate(weighted.with_columns(
        swap("wholesale_eur_per_kwh", "electricity_grade"),
        swap("grid_gco2e_per_kwh", "grid_grade"),
    )).select(
        "id", "wholesale_eur_per_kwh_profile", "grid_gco2e_per_kwh_profile",
        pl.col("electricity_eur_per_mtok").alias("electricity_eur_per_mtok_time_matched"),
        pl.col("carbon_gco2e_per_mtok").alias("carbon_gco2e_per_mtok_time_matched"),
    )
    table = table.join(matched, on="id", how="left", maintain_order="left")
    missing = pl.col("carbon_gco2e_per_mtok_time_matched").is_null() & pl.col(
        "carbon_gco2e_per_mtok").is_not_null() & (pl.col("deployment") != "mix")
    return table.with_columns(
        pl.when(missing).then(pl.col("notes").list.concat(pl.lit([
            f"time-matched figures not computed: no hourly or 15-minute data for this zone "
            f"in {mkt.vintage} (run `scorecard ingest` for the month)"])))
        .otherwise(pl.col("notes")).alias("notes"))


#: the objective every eligible candidate has: the recommendation and P(cheapest) are on it
COST = "cpm_eur_per_mtok"


def _gate(table: pl.DataFrame, proposal: Proposal, planned: bool = True) -> pl.DataFrame:
    """Eligible = sovereignty at or above the policy minimum, no failed regulatory gate
    (pipeline/engine/ranking/gates.py), a computable cost (CPM; the
    recommendation and P(cheapest) compare every candidate on it), (under
    policy.allow_estimates = false) no estimated goodput or power, and (under policy.quality)
    quality held against the reference candidate, or not needed (the reference's precision
    and engine), or waived by the policy (pipeline/inputs/evidence/quality.py). Under a plan
    (and `planned`) a candidate whose fallback serves tokens also needs an eligible fallback,
    and one that serves late without a fallback is out; a mix's parts are judged without
    these (`planned` False: inside a mix its burst, not the base's fallback, covers the
    months before the base serves). Another
    objective that cannot be computed (no grid intensity for the zone, ...) does not exclude:
    the candidate is ranked on the objectives it has (a missing figure neither dominates nor
    is dominated, pareto.py), listed in `compared_without` and noted."""
    minimum = proposal.policy.min_sovereignty
    estimated = (pl.col("tokens_per_s_grade") == "estimated") | (
        pl.col("power_grade") == "estimated")
    others = pl.concat_str([
        pl.when(pl.lit(not proposal.policy.allow_estimates) & estimated.fill_null(False)).then(
            pl.lit("uses estimated figures, which policy.allow_estimates = false keeps out of "
                   "the ranking")),
        pl.when(pl.col("no_goodput_reason").is_not_null()).then(
            pl.format("no operating point under the SLO: {}", "no_goodput_reason")),
        pl.when(pl.col("quality_exclusion").is_not_null()).then(pl.col("quality_exclusion")),
        pl.when(pl.col("gate_exclusion").is_not_null()).then(pl.col("gate_exclusion")),
        pl.when(pl.col(COST).is_null() & pl.col("no_goodput_reason").is_null())
        .then(pl.lit(f"{COST} is not computable (see notes)")),
    ], separator="; ", ignore_nulls=True)
    table = table.with_columns(pl.when(others != "").then(others).alias("_others"))
    reasons = [
        pl.when(pl.col("sovereignty_level") < minimum).then(
            pl.format(f"sovereignty level {{}} is below the policy minimum {minimum}",
                      "sovereignty_level")),
        pl.col("_others"),
    ]
    planned = planned and "fallback_sovereignty_level" in table.columns
    if planned:  # a plan: its fallback's tokens too
        table = table.join(table.select(pl.col("id").alias("fallback"),
                                        pl.col("_others").alias("_fallback_others")),
                           on="fallback", how="left", maintain_order="left")
        serves = pl.col("horizon_fallback_share") > 0
        reasons.append(pl.when(serves & (pl.col("fallback_sovereignty_level") < minimum)).then(
            pl.format(f"under the plan its fallback {{}} (sovereignty level {{}}, below the "
                      f"policy minimum {minimum}) serves the months before its own nodes do",
                      "fallback", "fallback_sovereignty_level")))
        # the fallback's other exclusions (its estimates, its gates, ...) hold for the tokens
        # it serves, as a mix's burst's do (mixes.py)
        reasons.append(pl.when(serves & pl.col("_fallback_others").is_not_null()).then(
            pl.format("under the plan its fallback {} serves {} of the horizon's tokens and is "
                      "not eligible: {}", "fallback",
                      (pl.col("horizon_fallback_share") * 100).round(1).cast(pl.String)
                      + " %", "_fallback_others")))
    if planned and "horizon_unserved_mtok" in table.columns:  # the whole demand, or no rank
        reasons.append(pl.when(pl.col("horizon_unserved_mtok") > 0).then(pl.format(
            "under the plan its own nodes serve late and it declares no fallback: {} Mtok "
            "of the horizon's demand would go unserved, so it cannot claim the demand "
            "(declare a fallback cloud or API candidate)",
            pl.col("horizon_unserved_mtok").round(1))))
    missing = [pl.when(pl.col(OBJECTIVES[o][0]).is_null()).then(pl.lit(OBJECTIVES[o][0]))
               for o in proposal.policy.objectives if OBJECTIVES[o][0] != COST]
    without = (pl.concat_str(missing, separator=", ", ignore_nulls=True) if missing
               else pl.lit(""))
    return table.with_columns(
        pl.concat_str(reasons, separator="; ", ignore_nulls=True).alias("exclusion_reason"),
        pl.when(without != "").then(without).alias("compared_without"),
    ).with_columns(
        pl.when(pl.col("compared_without").is_not_null()).then(pl.col("notes").list.concat(
            pl.concat_list(pl.format(
                "compared without {}: not computable (see the notes above); ranked on the "
                "objectives it has, and on cost in the recommendation and P(cheapest)",
                "compared_without"))))
        .otherwise(pl.col("notes")).alias("notes"),
    ).with_columns(
        pl.when(pl.col("exclusion_reason") == "").then(None)
        .otherwise(pl.col("exclusion_reason")).alias("exclusion_reason"),
    ).with_columns(pl.col("exclusion_reason").is_null().alias("eligible")).drop(
        "_others", "_fallback_others", strict=False)


def _records(frame: pl.DataFrame | None) -> list[dict[str, Any]]:
    return [] if frame is None else frame.to_dicts()


def _settings(pairs: list[dict[str, str]]) -> dict[str, str]:
    """A configuration's settings from the static row's (setting, value) pairs."""
    return {p["setting"]: p["value"] for p in pairs}


def formulas() -> list[Formula]:
    """Every metric step in evaluation order, with the unit and formula text the engine itself
    holds (pipeline/engine/metrics.py STEPS): reports print these, never a copy of their own."""
    return [Formula(name=s.name, unit=s.unit, formula=s.formula) for s in STEPS]


def to_contract(card: Scorecard, generated_at: str, code_version: str) -> Result:
    """The `--json` document of DESIGN section 9, typed (schemas/result.py): built as plain
    data (`contract_data`), validated once."""
    return Result.model_validate(contract_data(card, generated_at, code_version))


def contract_data(card: Scorecard, generated_at: str, code_version: str) -> dict[str, Any]:
    """The `--json` document as plain data (JSON types, dates), before its validation."""
    mc = card.monte_carlo
    ranges: dict[str, dict[str, Any]] = {}
    for r in mc.percentiles.iter_rows(named=True):
        ranges.setdefault(r["id"], {})[r["metric"]] = (
            None if r["p50"] is None else {"p5": r["p5"], "p50": r["p50"], "p95": r["p95"]})
    sized = {r["candidate"]: r for r in _records(card.sizing)}
    # each candidate's inputs, split in one pass over the inputs (not a filter per candidate)
    inputs_of: dict[str, list[dict[str, Any]]] = {}
    for r in card.resolved.inputs.with_columns(pl.col("input").replace_strict(
            {k: v[0] for k, v in INPUTS.items()}, default=None).alias("unit")).to_dicts():
        inputs_of.setdefault(r.pop("id"), []).append(r)
    candidates = []
    rows = card.table.join(mc.p_frontier, on="id", how="left", maintain_order="left")
    for row in rows.iter_rows(named=True):
        item = {k: row[k] for k in CONTRACT_KEYS}
        item["capacity"] = row["capacity"]
        item["token_basis"] = card.proposal.policy.token_basis
        item["notes"] = row["notes"]
        item["uncertainty"] = ranges.get(row["id"], {})
        item["sovereignty_reasons"] = [row["sovereignty_reason"]]
        item["evidence_configurations"] = [
            {**c, "configuration": _settings(c["configuration"])}
            for c in row["evidence_configurations"]]
        item["evidence_configuration"] = (None if row["evidence_configuration"] is None
                                          else _settings(row["evidence_configuration"]))
        item["quality"] = row["quality"]
        item["sovereignty_rubric"] = row["sovereignty_rubric"]
        item["gates"] = row["gates"]
        item["evidence_checks"] = row["evidence_checks"]
        if row["id"] in sized:
            item["sizing"] = {k: v for k, v in sized[row["id"]].items() if k != "candidate"}
        item["inputs"] = inputs_of.get(row["id"], [])
        if row.get("mix") is not None:
            item["mix"] = row["mix"]
        item["detail"] = {k: v for k, v in row.items()
                          if k not in item and k not in ("notes", "mix")}
        candidates.append(item)
    return {
        "proposal": card.proposal.proposal.name,
        "proposal_sha256": card.proposal.sha256(),
        "vintage": card.vintage,
        "generated_at": generated_at,
        "code_version": code_version,
        "sources": card.sources,
        "slo": card.proposal.slo.model_dump(),
        "policy": card.proposal.policy.model_dump(),
        "example_data": card.uses_example_data,
        "uncertainty": {"draws": mc.draws, "seed": mc.seed,
                        "distribution": "triangular(low, mode, high) per stated range"},
        "pairwise": _records(mc.pairwise),
        "pairwise_scope": mc.pairwise_scope,
        "tornado": _records(card.tornado),
        "sizing": _records(card.sizing),
        "demand": card.proposal.demand.model_dump() if card.proposal.demand else None,
        "break_even": card.break_even,
        "recommendation": card.recommendation,
        "token_basis": card.proposal.policy.token_basis,
        "formulas": [f.model_dump() for f in formulas()],
        "published_per_request": card.published_per_request,
        "candidates": candidates,
        "scans": _scans(card),
        **({} if card.plan is None else {"plan": card.plan}),
    }


def _scans(card: Scorecard) -> list[dict[str, Any]]:
    """Each scan's counts, with how many of its generated candidates the policy left
    eligible."""
    eligible = set(card.table.filter(pl.col("eligible"))["id"].to_list())
    return [{**s, "candidates_eligible": len(eligible.intersection(s["generated"]))}
            for s in card.resolved.scans]
