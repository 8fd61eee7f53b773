"""Turn proposal candidates into metric inputs, each with its grade and source.

Declared figures come from the proposal; a cloud candidate's hourly cost comes from the
vintage's GPU offers; a zone's electricity price and grid intensity come from the vintage
unless the candidate overrides them. A figure that cannot be found is null, with a note saying
why, so the metric that needs it is null too rather than quietly zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline import market
from pipeline.metrics import eur_per_kwh
from pipeline.proposal import Candidate, OfferCost, Proposal, ProposalError, point
from pipeline.sovereignty import level_for, zone_country


@dataclass
class Provenance:
    """The sources behind the figures of one run, keyed so each is listed once."""

    items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def add(self, kind: str, subject: str, **facts: Any) -> str:
        self.items[(kind, subject)] = {"kind": kind, "subject": subject, **facts}
        return f"{kind}:{subject}"

    def as_list(self) -> list[dict[str, Any]]:
        return [self.items[k] for k in sorted(self.items)]


@dataclass(frozen=True)
class Market:
    """The market as of a vintage, read once per run."""

    vintage: str
    offers: pl.DataFrame
    prices: pl.DataFrame
    intensities: pl.DataFrame
    regions: pl.DataFrame
    hardware: pl.DataFrame
    providers: dict[str, market.ProviderFacts]
    zones: list[str]

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection, vintage: str) -> Market:
        return cls(vintage, market.offers(con, vintage), market.zone_prices(con, vintage),
                   market.zone_intensities(con, vintage), market.regions(con),
                   market.hardware(con), market.provider_facts(con), market.known_zones(con))


def _one(frame: pl.DataFrame, **where: Any) -> dict[str, Any] | None:
    rows = frame.filter(**where)
    return rows.row(0, named=True) if rows.height else None


def resolve(proposal: Proposal, path: Path | str, mkt: Market
            ) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """One row of metric inputs per candidate (in proposal order) and the provenance list."""
    prov = Provenance()
    rows = [_resolve_one(i, c, proposal, str(path), mkt, prov)
            for i, c in enumerate(proposal.candidates)]
    return pl.DataFrame(rows, schema=INPUT_SCHEMA), prov.as_list()


INPUT_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(), "label": pl.String(), "deployment": pl.String(),
    "provider": pl.String(), "zone": pl.String(), "region": pl.String(),
    "gpu": pl.String(), "gpu_count": pl.Int64(), "model": pl.String(),
    "precision": pl.String(), "engine": pl.String(),
    "tokens_per_s": pl.Float64(), "tokens_per_s_grade": pl.String(),
    "tokens_per_s_source": pl.String(),
    "cost_eur_per_hour": pl.Float64(), "cost_grade": pl.String(), "cost_source": pl.String(),
    "power_w": pl.Float64(), "power_grade": pl.String(), "energy_boundary": pl.String(),
    "power_source": pl.String(),
    "pue": pl.Float64(), "pue_source": pl.String(),
    "electricity_eur_per_kwh": pl.Float64(), "electricity_grade": pl.String(),
    "electricity_source": pl.String(),
    "grid_gco2e_per_kwh": pl.Float64(), "grid_grade": pl.String(),
    "grid_basis": pl.String(), "grid_source": pl.String(),
    "sovereignty_level": pl.Int64(), "sovereignty_reason": pl.String(),
    "example_data": pl.Boolean(), "notes": pl.List(pl.String()),
}


def _resolve_one(index: int, c: Candidate, proposal: Proposal, path: str, mkt: Market,
                 prov: Provenance) -> dict[str, Any]:
    key = f"candidates[{index}] (id {c.id!r})"
    notes: list[str] = []
    row: dict[str, Any] = {
        "id": c.id, "label": c.label, "deployment": c.deployment, "provider": c.provider,
        "region": c.region, "gpu": c.gpu, "gpu_count": c.gpu_count, "model": c.model,
        "precision": c.precision, "engine": c.engine, "example_data": c.example_data,
    }
    known_gpus = mkt.hardware["gpu"].to_list()
    if c.gpu not in known_gpus:
        raise ProposalError(path, f"{key}.gpu", f"unknown accelerator {c.gpu!r}; known: "
                                                f"{', '.join(known_gpus)}")

    row["tokens_per_s"] = point(c.throughput.tokens_per_s)
    row["tokens_per_s_grade"] = "declared"
    row["tokens_per_s_source"] = c.throughput.source

    zone = c.zone
    if isinstance(c.cost, OfferCost):
        offer = _offer(c, c.cost, key, path, mkt)
        zone = zone or offer["zone"]
        row["region"] = offer["region"]
        row["cost_eur_per_hour"] = offer["price_eur_per_hour"]
        row["cost_grade"] = "reference"
        fx = (f" = {offer['price_original_per_hour']:g} {offer['currency']}/h at ECB "
              f"{offer['fx_units_per_eur']:g} {offer['currency']}/EUR of {offer['fx_date']}"
              if offer["currency"] != "EUR" else "")
        row["cost_source"] = (f"{c.cost.offer} {c.cost.pricing} in {offer['region']}: "
                              f"{offer['price_eur_per_hour']:.4g} EUR/h{fx}, observed "
                              f"{offer['source_date']}")
        prov.add("gpu_offer", f"{c.cost.offer}@{offer['region']}",
                 url=offer["source_url"], date=str(offer["source_date"]),
                 licence=offer["licence"], snapshot_sha256=offer["snapshot_sha256"])
    else:
        row["cost_eur_per_hour"] = point(c.cost.eur_per_hour)
        row["cost_grade"] = "declared"
        row["cost_source"] = c.cost.source
    if zone is None and c.region is not None:
        region = _one(mkt.regions, provider_id=c.provider, region=c.region)
        zone = region["zone"] if region else None
    if zone is None:
        raise ProposalError(path, f"{key}.zone", "no zone: give `zone`, or a `region` or "
                                                 "`cost.offer` whose region is known")
    row["zone"] = zone

    if c.power is not None:
        row["power_w"] = point(c.power.watts)
        row["power_grade"] = "declared"
        row["energy_boundary"] = c.power.boundary
        row["power_source"] = c.power.source
    else:
        notes.append("energy, electricity and carbon per token not computed: no power figure "
                     "(declare power = { watts, boundary, source })")

    pue = c.pue if c.pue is not None else proposal.defaults.pue
    row["pue"] = point(pue)
    row["pue_source"] = ("candidate" if c.pue is not None else
                         "defaults.pue" if pue is not None else None)
    if pue is None and c.power is not None:
        notes.append("facility energy, electricity and carbon not computed: no PUE "
                     "(set `pue` on the candidate or in [defaults])")

    _electricity(row, c, zone, key, path, mkt, prov, notes)
    _grid(row, c, zone, key, path, mkt, prov, notes)

    facts = mkt.providers.get(c.provider)
    if c.deployment == "cloud" and facts is None:
        notes.append(f"provider {c.provider!r} has no facts in the reference data")
    computed = level_for(c.deployment, zone_country(zone), facts)
    if c.sovereignty_override is not None:
        o = c.sovereignty_override
        row["sovereignty_level"] = o.level
        row["sovereignty_reason"] = (f"level {o.level} by override (computed: "
                                     f"{computed.reason}); justification: {o.justification}")
    else:
        row["sovereignty_level"] = computed.level
        row["sovereignty_reason"] = computed.reason
    row["notes"] = notes
    return row


def _offer(c: Candidate, cost: OfferCost, key: str, path: str, mkt: Market) -> dict[str, Any]:
    mine = mkt.offers.filter(pl.col("provider_id") == cost.provider_id,
                             pl.col("offer_id") == cost.offer_id,
                             pl.col("pricing_model") == cost.pricing)
    if c.region is not None:
        mine = mine.filter(pl.col("region") == c.region)
    if mine.height == 0:
        available = mkt.offers.filter(pl.col("provider_id") == cost.provider_id).select(
            pl.format("{}:{} ({}, {})", "provider_id", "offer_id", "region", "pricing_model")
        ).to_series().to_list()
        listing = ", ".join(available) if available else "none for this provider"
        raise ProposalError(path, f"{key}.cost.offer",
                            f"no offer {cost.offer!r} ({cost.pricing}"
                            f"{', region ' + c.region if c.region else ''}) in vintage "
                            f"{mkt.vintage}; available: {listing}")
    offer = mine.sort("region").row(0, named=True)
    if offer["gpu"] != c.gpu or offer["gpu_count"] != c.gpu_count:
        raise ProposalError(path, f"{key}.gpu", f"offer {cost.offer} is {offer['gpu_count']} x "
                            f"{offer['gpu']}, the candidate says {c.gpu_count} x {c.gpu}")
    return offer


def _electricity(row: dict[str, Any], c: Candidate, zone: str, key: str, path: str,
                 mkt: Market, prov: Provenance, notes: list[str]) -> None:
    if c.electricity_eur_per_kwh is not None:
        row["electricity_eur_per_kwh"] = point(c.electricity_eur_per_kwh)
        row["electricity_grade"] = "declared"
        row["electricity_source"] = "candidate override (electricity_eur_per_kwh)"
        return
    price = _one(mkt.prices, zone=zone)
    if price is None:
        if zone not in mkt.zones:
            raise ProposalError(path, f"{key}.zone", f"unknown zone {zone!r}; known zones: "
                                                     f"{', '.join(mkt.zones)}")
        row["electricity_eur_per_kwh"] = None
        notes.append(f"electricity per token not computed: no day-ahead price for {zone} "
                     f"up to {mkt.vintage}")
        return
    row["electricity_eur_per_kwh"] = pl.select(eur_per_kwh(pl.lit(price["price_eur_per_mwh"]))
                                               ).item()
    row["electricity_grade"] = "reference"
    row["electricity_source"] = (f"day-ahead mean {zone} {price['month']} "
                                 f"({price['price_eur_per_mwh']:.2f} EUR/MWh, "
                                 f"{price['intervals']} {price['resolution']} value(s))")
    if price["month"] != mkt.vintage:
        notes.append(f"electricity price for {zone} is from {price['month']}, the latest month "
                     f"available up to vintage {mkt.vintage}")
    prov.add("electricity_price", f"{zone} {price['month']}", url=price["source_url"],
             date=str(price["source_date"]), licence=price["licence"],
             snapshot_sha256=price["snapshot_sha256"])


def _grid(row: dict[str, Any], c: Candidate, zone: str, key: str, path: str, mkt: Market,
          prov: Provenance, notes: list[str]) -> None:
    if c.grid_gco2e_per_kwh is not None:
        row["grid_gco2e_per_kwh"] = point(c.grid_gco2e_per_kwh)
        row["grid_grade"] = "declared"
        row["grid_basis"] = None
        row["grid_source"] = "candidate override (grid_gco2e_per_kwh)"
        return
    intensity = _one(mkt.intensities, zone=zone)
    if intensity is None:
        if zone not in mkt.zones:
            raise ProposalError(path, f"{key}.zone", f"unknown zone {zone!r}; known zones: "
                                                     f"{', '.join(mkt.zones)}")
        row["grid_gco2e_per_kwh"] = None
        notes.append(f"carbon not computed: no grid intensity for {zone} up to {mkt.vintage}")
        return
    row["grid_gco2e_per_kwh"] = intensity["intensity_gco2e_per_kwh"]
    row["grid_grade"] = "reference"
    row["grid_basis"] = f"{intensity['emission_factor_basis']}, location-based, annual"
    row["grid_source"] = (f"{zone} {intensity['year']} annual mean "
                          f"({intensity['intensity_gco2e_per_kwh']:g} gCO2e/kWh, "
                          f"{intensity['emission_factor_basis']})")
    prov.add("grid_intensity", f"{zone} {intensity['year']}", url=intensity["source_url"],
             date=str(intensity["source_date"]), licence=intensity["licence"],
             snapshot_sha256=intensity["snapshot_sha256"])
