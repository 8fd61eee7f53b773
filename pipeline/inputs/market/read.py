"""The market of a vintage as a run reads it: its tables, read once per run from the store
(`pipeline.store.market`), the provider facts the sovereignty level is computed from, and the
zones' prices and intensities weighted by the workload's hourly profile."""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from pipeline.engine.ranking.sovereignty import ProviderFacts, Qualification
from pipeline.engine.resolved import Market
from pipeline.store import market
from schemas.proposal import Workload


def read_market(con: duckdb.DuckDBPyConnection, vintage: str,
                workload: Workload | None = None) -> Market:
    profile = (market.profile_weighted(con, vintage, workload.hourly_profile,
                                       workload.timezone) if workload else None)
    return Market(vintage, market.offers(con, vintage), market.zone_prices(con, vintage),
                  market.zone_intensities(con, vintage), market.regions(con),
                  market.hardware(con), market.models(con), market.embodied(con),
                  provider_facts(market.providers(con), market.qualifications(con)),
                  market.known_zones(con), profile, market.fx_rates(con, vintage),
                  market.residual_mixes(con, vintage), market.published_per_request(con),
                  tariff_components=market.tariff_components(con, vintage),
                  regulatory_rules=market.regulatory_rules(con),
                  sovereignty_objectives=market.sovereignty_objectives(con),
                  power_defaults=market.power_defaults(con),
                  api_prices=market.api_prices(con, vintage))


def provider_facts(providers: pl.DataFrame, quals: pl.DataFrame) -> dict[str, ProviderFacts]:
    """Each provider's facts (core__providers) with the qualifications it holds
    (core__qualifications), each saying whether it covers the provider's GPU offers."""
    held: dict[str, list[dict[str, Any]]] = {}
    for q in quals.iter_rows(named=True):
        held.setdefault(q["provider_id"], []).append(q)
    facts = {}
    for p in providers.iter_rows(named=True):
        facts[p["provider_id"]] = ProviderFacts(
            provider_id=p["provider_id"], provider_name=p["provider_name"],
            hq_country=p["hq_country"], parent_company=p["parent_company"],
            parent_hq_country=p["parent_hq_country"],
            non_eu_law_exposure=p["non_eu_law_exposure"], exposure_basis=p["exposure_basis"],
            qualifications=tuple(Qualification(
                scheme=q["scheme"], version=q["scheme_version"], scope=q["scope"],
                covers_gpu_offers=q["covers_gpu_offers"],
                qualified_on=None if q["qualified_on"] is None else str(q["qualified_on"]),
                source_url=q["source_url"]) for q in held.get(p["provider_id"], ())),
        )
    return facts
