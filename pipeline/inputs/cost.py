"""A candidate's cost inputs and its zone. A cloud offer of the vintage gives the hourly price
(converted to EUR at the offer's dated ECB rate) and the region; a TCO profile gives an
on-prem instance's capex, running costs and utilisation; or an hourly cost is declared."""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.engine.metrics import tokens_per_day_from_requests
from pipeline.inputs.currency import in_eur
from pipeline.inputs.draft import Draft
from pipeline.inputs.ranges import scaled, spread, sum_numbers
from pipeline.inputs.records import cite
from pipeline.inputs.zone_inputs import bidding_zone
from schemas.proposal import DeclaredCost, Number, OfferCost, TcoCost


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
    else:
        assert isinstance(cost, DeclaredCost)
        d.row["cost_model"] = "on_demand" if cost.pricing == "on_demand" else "declared"
        d.row["cost_grade"] = "declared"
        d.row["cost_source"] = cost.source
        key = f"{d.key}.cost.eur_per_hour"
        price, converted = in_eur(d, cost.eur_per_hour, key)
        d.inputs.add("price_eur_per_hour", price, key, "declared",
                     _with(cost.source, converted))
        d.row["cost_source"] = _with(cost.source, converted)
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
    d.inputs.add("price_eur_per_hour", offer["price_eur_per_hour"],
                 f"market.offer.{cost.offer}.{offer['region']}.{cost.pricing}", "reference",
                 d.row["cost_source"])
    d.prov.cite("gpu_offer", f"{cost.offer}@{offer['region']}", offer)
    zone: str | None = offer["zone"]
    return zone


def _offer(d: Draft, cost: OfferCost) -> dict[str, Any]:
    c, offers = d.c, d.mkt.offers
    mine = offers.filter(pl.col("provider_id") == cost.provider_id,
                         pl.col("offer_id") == cost.offer_id,
                         pl.col("pricing_model") == cost.pricing)
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
    capex = profile.capex
    lines = [in_eur(d, getattr(capex, line), f"{k}.capex.{line}")
             for line in ("gpus", "servers", "network", "installation")]
    total = sum_numbers([eur for eur, _ in lines if eur is not None])
    d.inputs.add("capex_eur", total, f"{k}.capex", "declared",
                 _with(profile.source, "; ".join(words for _, words in lines if words)))
    d.inputs.add("amortisation_months", float(profile.amortisation_months),
                 f"{k}.amortisation_months", "declared", profile.source)
    # each input keyed as the proposal file writes it (the input's own name may differ)
    for name, field in (("cost_of_capital_per_year", "cost_of_capital"),
                        ("residual_eur", "residual_eur"),
                        ("maintenance_share_per_year", "maintenance_share_per_year"),
                        ("staff_eur_per_year", "staff_eur_per_year")):
        eur, converted = in_eur(d, getattr(profile, field), f"{k}.{field}")
        d.inputs.add(name, eur, f"{k}.{field}", "declared", _with(profile.source, converted))
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
    total = d.proposal.policy.token_basis == "total"
    shape = demand.output_tokens is not None and (not total or demand.prompt_tokens is not None)
    per_request = ((demand.output_tokens or 0.0)
                   + ((demand.prompt_tokens or 0.0) if total else 0.0))
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
    out += [("peak_factor", demand.peak_factor, "demand.peak_factor", "proposal [demand]"),
            ("headroom", demand.headroom, "demand.headroom", "proposal [demand]"),
            ("redundancy_instances", float(demand.redundancy_instances),
             "demand.redundancy_instances", "proposal [demand]")]
    return out


def resolve_capacity(d: Draft) -> None:
    """How the instances are held (provisioned or elastic) and the demand they are sized for:
    its inputs are the same keys for every candidate, so they move together in the Monte
    Carlo."""
    d.row["capacity"] = d.c.capacity
    demand = d.proposal.demand
    if demand is not None:
        given = demand.model_fields_set
        for name, value, key, source in _demand_inputs(d):
            if key.removeprefix("demand.") in given:
                d.inputs.add(name, value, key, "declared", source)
            else:  # the model's default, where the proposal would write it
                d.inputs.add(name, value, key, "assumed", "default: not in the proposal")
    if d.c.min_instances is not None:
        d.inputs.add("min_instances", float(d.c.min_instances), f"{d.key}.min_instances",
                     "declared", "proposal")
    if d.c.capacity == "elastic":
        d.notes.append("elastic capacity: only busy instance-hours are billed"
                       + (f", at least {d.c.min_instances} instance(s) held"
                          if d.c.min_instances else "")
                       + "; this assumes the provider has the instances when the load asks"
                       + (f"; [demand] redundancy_instances = {demand.redundancy_instances}"
                          " is not billed (only busy hours are)"
                          if demand is not None and demand.redundancy_instances else ""))
