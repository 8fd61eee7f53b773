"""A candidate's cost inputs and its zone. A cloud offer of the vintage gives the hourly price
(converted to EUR at the offer's dated ECB rate) and the region; a TCO profile gives an
on-prem instance's capex, running costs and utilisation; or an hourly cost is declared. A
rented price committed for a term is levelled over the proposal's horizon; tokens bought from
an API are priced per million tokens of the proposal's request mix (docs/decision.md,
"Contract terms" and "Tokens bought by API")."""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.engine.metrics import (
    HOURS_PER_MONTH,
    api_eur_per_mtok,
    hour_demand_ratios,
    levelled_commitment_eur_per_hour,
    tokens_per_day_from_requests,
    tokens_per_request,
)
from pipeline.inputs.draft import Draft
from pipeline.inputs.market.currency import in_eur
from pipeline.inputs.market.zones import bidding_zone
from pipeline.inputs.ranges import bounds, scaled, spread, sum_numbers
from pipeline.inputs.records import cite
from schemas.proposal import (
    ApiCost,
    ApiPriceCost,
    DeclaredCost,
    ForeignMoney,
    Lease,
    Number,
    OfferCost,
    Range,
    TcoCost,
    Term,
)
from schemas.steps import HOUR_DEMAND_RATIOS


def resolve_cost(d: Draft) -> str:
    """The cost inputs; returns the candidate's zone (stated, or its offer's or region's)."""
    c, cost = d.c, d.c.cost
    zone = c.zone
    utilisation: Number | None = c.utilisation
    if isinstance(cost, OfferCost):
        offer_zone = _offer_cost(d, cost)
        zone = zone or offer_zone
    elif isinstance(cost, TcoCost):
        _tco_cost(d, cost, utilisation)
    elif isinstance(cost, ApiCost | ApiPriceCost):
        api_zone = _api_cost(d, cost)  # priced whether or not the candidate names a zone
        zone = zone or api_zone
    else:
        assert isinstance(cost, DeclaredCost)
        d.row["cost_model"] = "on_demand" if cost.pricing == "on_demand" else "declared"
        d.row["cost_grade"] = "declared"
        key = f"{d.key}.cost.eur_per_hour"
        price, converted = in_eur(d, cost.eur_per_hour, key)
        assert price is not None
        source = _with(cost.source, converted)
        if cost.term is not None:
            d.row["cost_model"] = "reserved"
            price, source = _committed(d, price, cost.term, source)
        d.inputs.add("price_eur_per_hour", price, key, "declared", source)
        d.row["cost_source"] = source
    if not isinstance(cost, TcoCost):
        _utilisation(d, utilisation, f"{d.key}.utilisation",
                     "proposal" if utilisation is not None else "default 1")
    if zone is None and c.region is not None:
        region = d.mkt.row("regions", provider_id=c.provider, region=c.region)
        zone = region["zone"] if region else None
    if zone is None:
        raise d.error("zone", "no zone: give `zone`, or a `region` or `cost.offer` whose "
                              "region is known")
    return bidding_zone(d, zone)


def _with(source: str, converted: str) -> str:
    """A declared figure's source, with how it was converted to EUR when it was."""
    return f"{source}; {converted}" if converted else source


def _offer_cost(d: Draft, cost: OfferCost) -> str | None:
    """The offer's hourly price; returns the offer's zone."""
    offer = _offer(d, cost)
    d.row["region"] = offer["region"]
    d.row["cost_model"] = "on_demand" if cost.pricing in ("on_demand", "spot") else "reserved"
    d.row["cost_grade"] = "reference"
    fx = (f" = {offer['price_original_per_hour']:g} {offer['currency']}/h at ECB "
          f"{offer['fx_units_per_eur']:g} {offer['currency']}/EUR of {offer['fx_date']}"
          if offer["currency"] != "EUR" else "")
    d.row["cost_source"] = (f"{cost.offer} {cost.pricing} in {offer['region']}: "
                            f"{offer['price_eur_per_hour']:.4g} EUR/h{fx}, observed "
                            f"{offer['source_date']}; {cite(offer)}")
    price: Number = offer["price_eur_per_hour"]
    if cost.term is not None:
        d.row["cost_model"] = "reserved"
        price, d.row["cost_source"] = _committed(d, price, cost.term, d.row["cost_source"])
    d.inputs.add("price_eur_per_hour", price,
                 f"market.offer.{cost.offer}.{offer['region']}.{cost.pricing}", "reference",
                 d.row["cost_source"])
    d.prov.cite("gpu_offer", f"{cost.offer}@{offer['region']}", offer)
    zone: str | None = offer["zone"]
    return zone


def _committed(d: Draft, price: Number, term: Term, source: str) -> tuple[Number, str]:
    """The price per instance-hour of a commitment: the price less the term's discount,
    escalating by year, with its upfront payment, levelled over the proposal's horizon at its
    cost of capital (metrics.levelled_commitment_eur_per_hour); each bound of a ranged price
    alike (the level price rises with the price). Returns it with its source."""
    horizon = d.proposal.horizon_months()
    assert horizon is not None  # a term gives the proposal a horizon
    rate, rate_source = d.proposal.horizon_cost_of_capital()
    discounted = scaled(price, 1.0 - term.discount)
    low, mode, high = (levelled_commitment_eur_per_hour(
        b, term.months, horizon, term.escalation_per_year, term.upfront_eur, rate)
        for b in bounds(discounted))
    level: Number = Range(low=low, mode=mode, high=high) if low < high else mode
    if term.min_commit_eur_per_month is not None:
        if isinstance(level, Range):
            raise d.error("cost.term.min_commit_eur_per_month", "a minimum commitment goes "
                          "with a price given as a number (its floor in instances follows it)")
        # a level stream of the floor is the floor: it compares with the levelled price as it
        # is (flat, not escalated)
        floor = term.min_commit_eur_per_month / (HOURS_PER_MONTH * level)
        d.inputs.add("min_instances", floor, f"{d.key}.cost.term.min_commit_eur_per_month",
                     "declared", f"{term.source}: minimum commitment "
                     f"{term.min_commit_eur_per_month:g} EUR a month / (730 h x {level:.6g} "
                     f"EUR/h) = {floor:.4g} instances billed at least")
        if d.proposal.demand is None:
            d.notes.append("cost.term.min_commit_eur_per_month is read with a [demand] only "
                           "(it bills a floor under the sized fleet)")
    renewals = -(-horizon // term.months)
    d.notes.append(f"committed for {term.months} months ({term.commitment}): every sized "
                   "instance is billed every hour of the term whatever the demand"
                   + (f"; renewed on the same terms to cover the {horizon}-month horizon "
                      f"({renewals} terms)" if renewals > 1 else ""))
    words = (f"{source}; {term.commitment} for {term.months} months ({term.source}): "
             f"{term.discount:.4g} off -> {spread(discounted)} EUR/h, escalation "
             f"{term.escalation_per_year:.4g} a year, upfront {term.upfront_eur:g} EUR per "
             f"instance and term, levelled over the {horizon}-month horizon at a cost of "
             f"capital of {rate:.4g} a year ({rate_source}): {spread(level)} EUR/h")
    return level, words


def _api_cost(d: Draft, cost: ApiCost | ApiPriceCost) -> str | None:
    """Tokens bought from an API: the price per million tokens of the token basis for the
    proposal's request mix, billed per busy token (elastic): the chain prices an hour of one
    replica of the serving hardware assumed (its `throughput`, the basis of the energy
    estimate) at it, so CPM is the token price in every draw. Returns the zone a bundled price
    is served from."""
    c, demand = d.c, d.proposal.demand
    if demand is None or demand.prompt_tokens is None or demand.output_tokens is None:
        raise d.error("cost", "an API is priced per input and per output token: give the "
                              "request mix as [demand] prompt_tokens and output_tokens (the "
                              "mean tokens of one request)")
    key = f"{d.key}.cost"
    zone: str | None = None
    if isinstance(cost, ApiCost):
        grade, source = "declared", cost.source
        prices = []
        for name in ("input_eur_per_mtok", "output_eur_per_mtok"):
            eur, converted = in_eur(d, getattr(cost, name), f"{key}.{name}")
            assert eur is not None
            prices.append(eur)
            source = _with(source, converted)
        minimum = cost.min_billing_tokens
    else:
        grade, (prices, source, minimum, zone) = "reference", _api_price(d, cost, key)
    total = _total(d)
    both = list(zip(bounds(prices[0]), bounds(prices[1]), strict=True))
    low, mode, high = (api_eur_per_mtok(i, o, demand.prompt_tokens, demand.output_tokens,
                                        total) for i, o in both)
    per_mtok: Number = Range(low=low, mode=mode, high=high) if low < high else mode
    basis = "prompt + output" if total else "output"
    d.row["cost_model"] = "per_token"
    d.row["cost_grade"] = grade
    d.row["cost_source"] = (
        f"{source}: {spread(prices[0])} EUR per million input tokens, {spread(prices[1])} "
        f"per million output tokens; request mix of [demand] {demand.prompt_tokens:g} prompt + "
        f"{demand.output_tokens:g} output tokens -> {spread(per_mtok)} EUR per million "
        f"{basis} tokens")
    d.inputs.add("price_eur_per_mtok", per_mtok, key, grade, d.row["cost_source"])
    d.notes.append(f"API: billed per token used ({spread(per_mtok)} EUR per million {basis} "
                   "tokens, the CPM); energy and carbon are estimated from the serving hardware "
                   f"assumed ({c.gpu_count} x {c.gpu}: its throughput and power)")
    _api_limits(d, cost, minimum)
    return zone


def _api_price(d: Draft, cost: ApiPriceCost, key: str
               ) -> tuple[list[Number], str, float | None, str | None]:
    """The API price row of the vintage (core__api_prices, bundled from
    sources/reference/api_prices.csv): (input and output EUR per Mtok, source, minimum billing
    unit, the zone it is served from); the row is cited with its snapshot."""
    provider, model = cost.api.split(":", 1)
    table = d.mkt.api_prices
    assert table is not None, "read_market reads the API prices"
    rows = d.mkt.once(("api_price", provider, model), lambda: table.filter(
        pl.col("provider_id") == provider, pl.col("api_model") == model))
    if d.c.region is not None:
        rows = rows.filter(pl.col("region") == d.c.region)
    if rows.height == 0:
        listing = ", ".join(table.select(pl.format("{}:{} ({})", "provider_id", "api_model",
                                                   "region")).to_series().to_list())
        raise d.error("cost.api", f"no API price {cost.api!r} in vintage {d.mkt.vintage}"
                      + (f" in region {d.c.region}" if d.c.region else "")
                      + f"; available: {listing}")
    row = rows.sort("region").row(0, named=True)
    if row["zone"] is None and d.c.zone is None:
        raise d.error("zone", f"{cost.api} in {row['region']} states no place of processing "
                      f"(its price row has no zone: {row['source_url']}): give the candidate's "
                      "`zone`, where its inference runs by contract")
    prices: list[Number] = []
    converted = ""
    for name in ("input_price_original_per_mtok", "output_price_original_per_mtok"):
        money = row[name] if row["currency"] == "EUR" else ForeignMoney(
            amount=row[name], currency=row["currency"])
        eur, words = in_eur(d, money, f"{key}.api")
        assert eur is not None
        prices.append(eur)
        converted = converted or words
    d.row["region"] = row["region"]
    d.prov.cite("api_price", f"{cost.api}@{row['region']}", row)
    source = _with(f"{cost.api} in {row['region']}, published {row['source_date']}: "
                   f"{row['source_url']} ({row['note']})", converted)
    return prices, source, row["min_billing_tokens"], row["zone"]


def _api_limits(d: Draft, cost: ApiCost | ApiPriceCost, minimum: float | None) -> None:
    """The minimum billing unit and the rate limit, against the demand, as notes."""
    demand = d.proposal.demand
    assert demand is not None
    if minimum is not None:
        d.notes.append(f"API: billed in units of {minimum:,.0f} tokens per model and token type "
                       "(rounding up a month's volume; not counted in the CPM)")
    limit = cost.rate_limit_tokens_per_min
    tokens_per_day = point_tokens_per_day(d)
    if limit is not None and tokens_per_day is not None:
        # a rate limit counts prompt and output tokens: the basis's daily tokens in requests
        prompt, output = demand.prompt_tokens or 0.0, demand.output_tokens or 1.0
        per_request = tokens_per_request(prompt, output, _total(d))
        peak = (tokens_per_day / per_request * tokens_per_request(prompt, output, True)
                / 1440.0 * bounds(demand.peak_factor)[1])
        if peak > limit:
            d.notes.append(f"API: the demand's peak, {peak:,.0f} prompt + output tokens a "
                           "minute, exceeds the "
                           f"rate limit of {limit:,.0f}: the provider must raise it")
        else:
            d.notes.append(f"API: the demand's peak, {peak:,.0f} prompt + output tokens a "
                           "minute, is within "
                           f"the rate limit of {limit:,.0f}")


def _total(d: Draft) -> bool:
    return d.proposal.policy.token_basis == "total"


def basis_per_output_token(d: Draft) -> float | None:
    """Tokens on the token basis per output token of the proposal's mean request ([demand]
    prompt_tokens and output_tokens): 1 on the output basis, (prompt + output) / output on the
    total basis; None on the total basis without the request's lengths."""
    demand = d.proposal.demand
    if not _total(d):
        return 1.0
    if demand is None or demand.prompt_tokens is None or not demand.output_tokens:
        return None
    return tokens_per_request(demand.prompt_tokens, demand.output_tokens, True) \
        / demand.output_tokens


def point_tokens_per_day(d: Draft) -> float | None:
    """The demand's daily tokens on the token basis, at the point estimate."""
    for name, value, _key, _source in _demand_inputs(d):
        if name == "demand_tokens_per_day":
            return bounds(value)[1]
    return None


def _offer(d: Draft, cost: OfferCost) -> dict[str, Any]:
    c, offers = d.c, d.mkt.offers
    mine = d.mkt.once(("offer", cost.provider_id, cost.offer_id, cost.pricing),
                      lambda: offers.filter(pl.col("provider_id") == cost.provider_id,
                                            pl.col("offer_id") == cost.offer_id,
                                            pl.col("pricing_model") == cost.pricing))
    if c.region is not None:
        mine = mine.filter(pl.col("region") == c.region)
    if mine.height == 0:
        available = offers.filter(pl.col("provider_id") == cost.provider_id).select(
            pl.format("{}:{} ({}, {})", "provider_id", "offer_id", "region",
                      "pricing_model")).to_series().to_list()
        listing = ", ".join(available) if available else "none for this provider"
        region = f", region {c.region}" if c.region else ""
        raise d.error("cost.offer", f"no offer {cost.offer!r} ({cost.pricing}{region}) in "
                                    f"vintage {d.mkt.vintage}; available: {listing}")
    offer = mine.sort("region").row(0, named=True)
    if offer["gpu"] != c.gpu or offer["gpu_count"] != c.gpu_count:
        raise d.error("gpu", f"offer {cost.offer} is {offer['gpu_count']} x {offer['gpu']}, "
                             f"the candidate says {c.gpu_count} x {c.gpu}")
    return offer


def _tco_cost(d: Draft, cost: TcoCost, utilisation: Number | None) -> None:
    """The TCO profile's cost lines, and the utilisation (the candidate's, else the
    profile's)."""
    profile = d.proposal.tco[cost.tco]
    d.row["cost_model"] = "tco"
    d.row["cost_grade"] = "declared"
    d.row["cost_source"] = f"[tco.{cost.tco}]: {profile.source}"
    k = f"tco.{cost.tco}"
    if profile.lease is not None:
        _lease(d, profile.lease, k, profile.source)
    else:
        capex = profile.capex
        assert capex is not None and profile.amortisation_months is not None
        lines = [in_eur(d, getattr(capex, line), f"{k}.capex.{line}")
                 for line in ("gpus", "servers", "network", "installation")]
        total = sum_numbers([eur for eur, _ in lines if eur is not None])
        d.inputs.add("capex_eur", total, f"{k}.capex", "declared",
                     _with(profile.source, "; ".join(words for _, words in lines if words)))
        d.inputs.add("amortisation_months", float(profile.amortisation_months),
                     f"{k}.amortisation_months", "declared", profile.source)
    # each input keyed as the proposal file writes it (the input's own name may differ)
    financed = [] if profile.lease is not None else [
        ("cost_of_capital_per_year", "cost_of_capital")]
    for name, field in (*financed, ("residual_eur", "residual_eur"),
                        ("maintenance_share_per_year", "maintenance_share_per_year"),
                        ("staff_eur_per_year", "staff_eur_per_year")):
        eur, converted = in_eur(d, getattr(profile, field), f"{k}.{field}")
        d.inputs.add(name, eur, f"{k}.{field}", "declared", _with(profile.source, converted))
    if d.proposal.plan and profile.lead_time_months is not None:
        d.inputs.add("lead_time_months", profile.lead_time_months, f"{k}.lead_time_months",
                     "declared", profile.source)
    if profile.hosting is not None:
        if profile.hosting.kind == "own_site":
            eur, converted = in_eur(d, profile.hosting.eur_per_year, f"{k}.hosting.eur_per_year")
            d.inputs.add("hosting_eur_per_year", eur, f"{k}.hosting.eur_per_year", "declared",
                         _with(profile.source, converted))
        else:
            eur, converted = in_eur(d, profile.hosting.eur_per_kw_month,
                                    f"{k}.hosting.eur_per_kw_month")
            d.inputs.add("hosting_eur_per_kw_month", eur, f"{k}.hosting.eur_per_kw_month",
                         "declared", _with(profile.source, converted))
    if utilisation is None:
        explicit = "utilisation" in profile.model_fields_set
        utilisation = profile.utilisation
        ukey = f"{k}.utilisation"
    else:
        explicit = True
        ukey = f"{d.key}.utilisation"
    _utilisation(d, utilisation if explicit or d.proposal.demand is None else None, ukey,
                 "proposal")


def _lease(d: Draft, lease: Lease, k: str, source: str) -> None:
    """A leased node: its monthly payment is the capital line. Written as the steps read a
    bought node, capex = the payments' sum over the term at a cost of capital of 0, whose
    annuity is the payment itself (no financing: the lessor's rate is in the payment)."""
    eur, converted = in_eur(d, lease.eur_per_month, f"{k}.lease.eur_per_month")
    assert eur is not None
    d.inputs.add("capex_eur", scaled(eur, float(lease.term_months)), f"{k}.lease",
                 "declared", _with(f"{source}; leased: {lease.term_months} monthly payments "
                                   "(their sum over the term, repaid at 0 %: the annuity is "
                                   "the payment)", converted))
    d.inputs.add("amortisation_months", float(lease.term_months), f"{k}.lease.term_months",
                 "declared", source)
    d.inputs.add("cost_of_capital_per_year", 0.0, f"{k}.lease", "declared",
                 "a lease: no financing of its own (the lessor's rate is in the payment)")


def _utilisation(d: Draft, utilisation: Number | None, key: str, source: str) -> None:
    """The declared utilisation, read only without a demand: with one, the sizing sets it."""
    if d.proposal.demand is None:
        d.inputs.add("utilisation", 1.0 if utilisation is None else utilisation, key,
                     "declared", source)
    elif utilisation is not None:
        d.notes.append(f"utilisation {spread(utilisation)} ({key}) is not used: the fleet is "
                       "sized for the declared [demand], which sets the utilisation")


def _demand_inputs(d: Draft) -> list[tuple[str, Number, str, str]]:
    """The demand's metric inputs (name, value, key, source): the daily token volume on the
    token basis (declared, or requests/s x 86,400 x the tokens of one request), the request
    rate and output length when the request shape is known, the peak factor, headroom and
    redundancy instances."""
    demand = d.proposal.demand
    assert demand is not None
    total = _total(d)
    shape = demand.output_tokens is not None and (not total or demand.prompt_tokens is not None)
    per_request = tokens_per_request(demand.prompt_tokens or 0.0, demand.output_tokens or 0.0,
                                     total)
    basis = "prompt + output" if total else "output"
    out: list[tuple[str, Number, str, str]] = []
    if demand.requests_per_s is not None:
        out.append(("demand_tokens_per_day",
                    scaled(demand.requests_per_s,
                           tokens_per_day_from_requests(1.0, per_request)),
                    "demand.requests_per_s",
                    f"proposal [demand]: requests_per_s x 86,400 x {per_request:g} {basis} "
                    "tokens per request"))
        out.append(("demand_requests_per_s", demand.requests_per_s, "demand.requests_per_s",
                    "proposal [demand]"))
    else:
        assert demand.tokens_per_day is not None
        out.append(("demand_tokens_per_day", demand.tokens_per_day, "demand.tokens_per_day",
                    "proposal [demand]"))
        if shape:
            out.append(("demand_requests_per_s",
                        scaled(demand.tokens_per_day,
                               1.0 / tokens_per_day_from_requests(1.0, per_request)),
                        "demand.tokens_per_day",
                        f"proposal [demand]: tokens_per_day / 86,400 / {per_request:g} {basis} "
                        "tokens per request"))
    if demand.output_tokens is not None:
        out.append(("request_output_tokens", demand.output_tokens, "demand.output_tokens",
                    "proposal [demand]"))
    if shape:
        out.append(("request_tokens", per_request, "demand",
                    f"proposal [demand]: {per_request:g} {basis} tokens per request"))
    out += [("peak_factor", demand.peak_factor, "demand.peak_factor", "proposal [demand]"),
            ("headroom", demand.headroom, "demand.headroom", "proposal [demand]"),
            ("redundancy_instances", float(demand.redundancy_instances),
             "demand.redundancy_instances", "proposal [demand]")]
    return out


def resolve_capacity(d: Draft) -> None:
    """How the instances are held (provisioned or elastic: an API is billed per token used)
    and the demand they are sized for: its inputs are the same keys for every candidate, so
    they move together in the Monte Carlo."""
    d.row["capacity"] = "elastic" if d.c.deployment == "api" else d.c.capacity
    demand = d.proposal.demand
    if demand is not None:
        given = demand.model_fields_set
        for name, value, key, source in _demand_inputs(d):
            if key.removeprefix("demand.") in given:
                d.inputs.add(name, value, key, "declared", source)
            else:  # the model's default, where the proposal would write it
                d.inputs.add(name, value, key, "assumed", "default: not in the proposal")
        horizon = d.proposal.horizon
        if d.proposal.plan and horizon is not None and horizon.growth_per_year is not None:
            d.inputs.add("demand_growth_per_year", horizon.growth_per_year,
                         "horizon.growth_per_year", "declared", "proposal [horizon]")
    if d.c.min_instances is not None:
        d.inputs.add("min_instances", float(d.c.min_instances), f"{d.key}.min_instances",
                     "declared", "proposal")
    workload = d.proposal.workload
    if d.c.min_instances and demand is not None and workload is not None:
        # the floor is billed hour by hour: held in the quiet hours, below the day's mean
        for hour, (name, ratio) in enumerate(zip(
                HOUR_DEMAND_RATIOS, hour_demand_ratios(workload.hourly_profile), strict=True)):
            d.inputs.add(name, float(ratio), "workload.hourly_profile", "declared",
                         f"proposal [workload] hourly_profile: hour {hour}'s weight over "
                         "the weights' mean")
    if d.c.capacity == "elastic" and d.c.deployment != "api":
        d.notes.append("elastic capacity: only busy instance-hours are billed"
                       + (f", at least {d.c.min_instances} instance(s) held"
                          if d.c.min_instances else "")
                       + "; this assumes the provider has the instances when the load asks"
                       + (f"; [demand] redundancy_instances = {demand.redundancy_instances}"
                          " is not billed (only busy hours are)"
                          if demand is not None and demand.redundancy_instances else ""))
