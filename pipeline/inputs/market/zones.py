"""What a candidate's zone gives: its electricity price (the month's day-ahead mean, times a
TCO tariff's retail multiplier plus grid fee; or an all-in tariff: the day-ahead price or a
declared PPA energy price, plus the country's network costs and taxes and levies for its
consumption band), its grid carbon intensity (the year's annual
mean), each from the vintage unless the candidate or its TCO contract states it, and the
market-based carbon inputs: the candidate's carbon contract and its country's residual mix.

A zone may be written as a country's ISO code: prices are a bidding zone's (DE and LU are the
one zone DE-LU), carbon stays national (the country's own grid row when the store has one).
"""

from __future__ import annotations

from typing import Any

from pipeline.engine.metrics import eur_per_kwh
from pipeline.engine.ranking.sovereignty import zone_country
from pipeline.inputs.draft import Draft
from pipeline.inputs.market.currency import in_eur
from pipeline.inputs.records import cite
from schemas.proposal import AllInTariff, ContractTariff, ProposalError, Range, TcoCost

#: ISO codes of countries that share one bidding zone with another: prices by that zone
COUNTRY_PRICE_ZONE: dict[str, str] = {"DE": "DE-LU", "LU": "DE-LU"}
#: countries split into several bidding zones: the code alone names a price only when the
#: store holds a national price for it (Ember's national means do), else the zone is asked for
SPLIT_COUNTRIES: dict[str, tuple[str, ...]] = {
    "DK": ("DK1", "DK2"),
    "IT": ("IT-North", "IT-Centre-North", "IT-Centre-South", "IT-South", "IT-Calabria",
           "IT-Sicily", "IT-Sardinia"),
    "NO": ("NO1", "NO2", "NO3", "NO4", "NO5"),
    "SE": ("SE1", "SE2", "SE3", "SE4"),
}


def bidding_zone(d: Draft, zone: str) -> str:
    """The zone prices are read for: the zone as written when the store knows it, else the
    bidding zone of a country code (DE -> DE-LU, with a note)."""
    if zone in d.mkt.zones or zone not in COUNTRY_PRICE_ZONE:
        return zone
    mapped = COUNTRY_PRICE_ZONE[zone]
    d.notes.append(f"zone {zone} (a country code) is read as bidding zone {mapped} for "
                   "prices; its grid intensity is the country's")
    return mapped


def check_known_zone(d: Draft, zone: str) -> None:
    """Every zone, even one whose price and grid intensity are both overridden: the zone also
    gives the sovereignty's country, so a typo ("FRA") must not pass."""
    if zone in d.mkt.zones:
        return
    if zone in SPLIT_COUNTRIES:
        raise d.error("zone", f"{zone} is a country of several bidding zones "
                              f"({', '.join(SPLIT_COUNTRIES[zone])}) and the store has no "
                              f"national price for it: write the zone the site is in")
    aliases = ", ".join(f"{c} -> {z}" for c, z in COUNTRY_PRICE_ZONE.items())
    raise d.error("zone", f"unknown zone {zone!r}; known zones: {', '.join(d.mkt.zones)} "
                          f"(country codes too: {aliases})")


def grid_zone(d: Draft, zone: str) -> str:
    """The zone grid intensity is read for: national. The zone as the candidate wrote it
    when the store has a row for it, else its country's, else the bidding zone's."""
    written = d.c.zone or zone
    known = set(d.mkt.intensities["zone"].to_list())
    for choice in (written, zone_country(written), zone):
        if choice in known:
            return choice
    return zone


def _zone_row(d: Draft, table: str, zone: str, missing: str) -> dict[str, Any] | None:
    """The zone's row of a market table, or None with a note `missing` ... for the zone."""
    row = d.mkt.row(table, zone=zone)
    if row is None:
        d.notes.append(f"{missing} for {zone} up to {d.mkt.vintage}")
    return row


def resolve_electricity(d: Draft, zone: str) -> None:
    c = d.c
    tariff = d.proposal.tco[c.cost.tco].electricity if isinstance(c.cost, TcoCost) else None
    if c.electricity_eur_per_kwh is not None or isinstance(tariff, ContractTariff):
        declared, key = ((c.electricity_eur_per_kwh, f"{d.key}.electricity_eur_per_kwh")
                         if c.electricity_eur_per_kwh is not None else
                         (tariff.eur_per_kwh if isinstance(tariff, ContractTariff) else None,
                          f"tco.{getattr(c.cost, 'tco', '')}.electricity.eur_per_kwh"))
        value, converted = in_eur(d, declared, key)
        what = ("candidate override (electricity_eur_per_kwh)"
                if c.electricity_eur_per_kwh is not None else "contract tariff of the TCO")
        what += f"; {converted}" if converted else ""
        d.inputs.add("contract_eur_per_kwh", value, f"{d.key}.electricity", "declared", what)
        d.row["electricity_grade"] = "declared"
        d.row["electricity_source"] = what
        return
    if isinstance(tariff, AllInTariff):
        _resolve_all_in(d, zone, tariff)
        return
    price = _zone_row(d, "prices", zone,
                      "electricity per token not computed: no day-ahead price")
    if price is None:
        return
    wholesale = eur_per_kwh(float(price["price_eur_per_mwh"]))
    source = (f"day-ahead mean {zone} {price['month']} ({price['price_eur_per_mwh']:.2f} "
              f"EUR/MWh, {price['intervals']} {price['resolution']} value(s)); {cite(price)}")
    d.inputs.add("wholesale_eur_per_kwh", wholesale, f"market.electricity.{zone}", "reference",
                 source)
    if tariff is not None:
        assert isinstance(c.cost, TcoCost)
        k = f"tco.{c.cost.tco}.electricity"
        d.inputs.add("retail_multiplier", tariff.retail_multiplier, f"{k}.retail_multiplier",
                     "declared", "TCO tariff")
        fee, converted = in_eur(d, tariff.grid_fee_eur_per_kwh, f"{k}.grid_fee_eur_per_kwh")
        d.inputs.add("grid_fee_eur_per_kwh", fee, f"{k}.grid_fee_eur_per_kwh", "declared",
                     "TCO tariff" + (f"; {converted}" if converted else ""))
        source += " x retail multiplier + grid fee (TCO tariff)"
    d.row["electricity_grade"] = "reference"
    d.row["electricity_source"] = source
    if price["month"] != d.mkt.vintage:
        d.notes.append(f"electricity price for {zone} is from {price['month']}, the latest "
                       f"month available up to vintage {d.mkt.vintage}")
    d.prov.cite("electricity_price", f"{zone} {price['month']}", price)


def _resolve_all_in(d: Draft, zone: str, tariff: AllInTariff) -> None:
    """An all-in tariff: the energy price (a declared PPA or contract energy price, else the
    zone's day-ahead mean) + the site country's network costs + its taxes and levies excluding
    VAT, for the tariff's consumption band, of the latest year up to the vintage's. Without
    the country's components for that band the tariff cannot be built: an error naming the
    tariff's key and listing what is bundled (never the energy price alone passed off as the
    bill)."""
    assert isinstance(d.c.cost, TcoCost)
    k = f"tco.{d.c.cost.tco}.electricity"
    country = zone_country(d.c.zone or zone)
    parts = (d.mkt.row("tariff_components", country=country, consumption_band=tariff.band)
             if d.mkt.tariff_components is not None else None)
    if parts is None:
        raise ProposalError(d.path, f"{k}.band", _no_components(d, country, tariff.band))
    if tariff.energy_eur_per_kwh is not None:
        energy, converted = in_eur(d, tariff.energy_eur_per_kwh, f"{k}.energy_eur_per_kwh")
        d.inputs.add("energy_eur_per_kwh", energy, f"{k}.energy_eur_per_kwh", "declared",
                     "all-in tariff: declared energy price (PPA or supply contract)"
                     + (f"; {converted}" if converted else ""))
        energy_what = "declared energy price"
        grade = "declared"
    else:
        price = _zone_row(d, "prices", zone,
                          "electricity per token not computed: no day-ahead price")
        if price is None:
            return
        energy_what = (f"day-ahead mean {zone} {price['month']} "
                       f"({price['price_eur_per_mwh']:.2f} EUR/MWh); {cite(price)}")
        d.inputs.add("wholesale_eur_per_kwh", eur_per_kwh(float(price["price_eur_per_mwh"])),
                     f"market.electricity.{zone}", "reference",
                     f"all-in tariff's energy part: {energy_what}")
        grade = "reference"
        if price["month"] != d.mkt.vintage:
            d.notes.append(f"electricity price for {zone} is from {price['month']}, the "
                           f"latest month available up to vintage {d.mkt.vintage}")
        d.prov.cite("electricity_price", f"{zone} {price['month']}", price)
    year = parts["year"]
    cited = (f"Eurostat nrg_pc_205_c {country} {year}, band {tariff.band}; {cite(parts)}")
    d.inputs.add("network_eur_per_kwh", parts["network_eur_per_kwh"],
                 f"market.tariff_components.{country}.{tariff.band}", "reference",
                 f"network costs: {cited}")
    d.inputs.add("taxes_levies_eur_per_kwh", parts["taxes_levies_eur_per_kwh"],
                 f"market.tariff_components.{country}.{tariff.band}", "reference",
                 f"taxes and levies excl. VAT: {cited}")
    d.row["electricity_grade"] = grade
    d.row["electricity_source"] = (
        f"all-in tariff, band {tariff.band}: energy ({energy_what}) + network costs "
        f"{parts['network_eur_per_kwh']:.4f} EUR/kWh + taxes and levies "
        f"{parts['taxes_levies_eur_per_kwh']:.4f} EUR/kWh ({cited}); VAT excluded "
        "(recoverable by a business)")
    d.prov.cite("tariff_components", f"{country} {year} {tariff.band}", parts)


def _no_components(d: Draft, country: str, band: str) -> str:
    """Why an all-in tariff cannot be built for `country` and `band`, and what can."""
    table = d.mkt.tariff_components
    bundled = ("none" if table is None or table.height == 0 else ", ".join(
        f"{r['country']} {r['consumption_band']} ({r['year']})"
        for r in table.sort("country", "consumption_band").iter_rows(named=True)))
    return (f"candidate {d.c.id!r} in {country}: no non-household price components "
            f"(Eurostat nrg_pc_205_c) for {country}, band {band}, in any year up to "
            f"{d.mkt.vintage[:4]}; in this vintage's market (country band (year)): {bundled} "
            "(sources/reference/README.md, tariff_components_yearly.csv). Choose a bundled "
            "band, or price the electricity as a contract (basis = \"contract\")")


def resolve_grid(d: Draft, zone: str) -> None:
    c = d.c
    if c.grid_gco2e_per_kwh is not None:
        d.inputs.add("grid_gco2e_per_kwh", c.grid_gco2e_per_kwh,
                     f"{d.key}.grid_gco2e_per_kwh", "declared", "candidate override")
        d.row["grid_grade"] = "declared"
        d.row["grid_source"] = "candidate override (grid_gco2e_per_kwh)"
        return
    zone = grid_zone(d, zone)
    intensity = _zone_row(d, "intensities", zone, "carbon not computed: no grid intensity")
    if intensity is None:
        return
    source = (f"{zone} {intensity['year']} annual mean "
              f"({intensity['intensity_gco2e_per_kwh']:g} gCO2e/kWh, "
              f"{intensity['emission_factor_basis']}); {cite(intensity)}")
    d.inputs.add("grid_gco2e_per_kwh", intensity["intensity_gco2e_per_kwh"],
                 f"market.grid.{zone}", "reference", source)
    d.row["grid_grade"] = "reference"
    d.row["grid_basis"] = f"{intensity['emission_factor_basis']}, location-based, annual"
    d.row["grid_source"] = source
    d.prov.cite("grid_intensity", f"{zone} {intensity['year']}", intensity)


def resolve_market_grid(d: Draft, zone: str) -> None:
    """Market-based carbon (GHG Protocol Scope 2): the carbon contract's covered share and
    factors, and for the uncovered rest without a supplier's factor the residual mix of an own
    site's country. A cloud candidate has no residual mix of its own (its provider buys the
    instruments): without a declared provider factor its location-based intensity stands in,
    and the notes say so."""
    c = d.c
    name = c.carbon_contract
    contract = d.proposal.carbon_contracts[name] if name is not None else None
    parts: list[str] = []
    if contract is not None:
        k = f"carbon_contracts.{name}"
        what = f"carbon contract {name}: {contract.source}"
        for field in ("covered_share", "covered_gco2e_per_kwh"):
            if field in contract.model_fields_set:
                d.inputs.add(field, getattr(contract, field), f"{k}.{field}", "declared", what)
            else:  # the model's default, where the proposal would write it
                d.inputs.add(field, getattr(contract, field), f"{k}.{field}", "assumed",
                             "default: not in the proposal")
        d.inputs.add("supplier_gco2e_per_kwh", contract.supplier_gco2e_per_kwh,
                     f"{k}.supplier_gco2e_per_kwh", "declared", what)
        parts.append(f"{what} (covered share {_shown(contract.covered_share)} at "
                     f"{_shown(contract.covered_gco2e_per_kwh)} gCO2e/kWh)")
        if contract.supplier_gco2e_per_kwh is not None:
            parts.append(f"uncovered at the supplier's "
                         f"{_shown(contract.supplier_gco2e_per_kwh)} gCO2e/kWh")
            d.row["market_grid_source"] = "; ".join(parts)
            return
    stand_in = "the location-based grid intensity stands in for the uncovered electricity"
    if c.deployment in ("cloud", "api"):  # the provider buys the instruments, not the buyer
        d.notes.append(f"market-based carbon: no market-based factor of {c.provider} is cited "
                       f"(declare one in a [carbon_contracts] table): {stand_in}")
        parts.append(f"no provider factor: {stand_in}")
        d.row["market_grid_source"] = "; ".join(parts)
        return
    country = zone_country(c.zone or zone)
    mix = (d.mkt.row("residual_mixes", country=country)
           if d.mkt.residual_mixes is not None else None)
    if mix is None:
        d.notes.append(f"market-based carbon: no residual mix for {country} up to "
                       f"{d.mkt.vintage}: {stand_in}")
        parts.append(f"no residual mix for {country}: {stand_in}")
        d.row["market_grid_source"] = "; ".join(parts)
        return
    source = (f"{country} {mix['year']} residual mix ({mix['intensity_gco2e_per_kwh']:g} "
              f"gCO2e/kWh, {mix['emission_factor_basis']}); {cite(mix)}")
    d.inputs.add("residual_gco2e_per_kwh", mix["intensity_gco2e_per_kwh"],
                 f"market.residual_mix.{country}", "reference", source)
    parts.append(f"uncovered at the {source}")
    d.row["market_grid_source"] = "; ".join(parts)
    d.prov.cite("residual_mix", f"{country} {mix['year']}", mix)


def _shown(value: Any) -> str:
    """A declared number as a source names it: the number, or a range's low-mode-high."""
    if isinstance(value, Range):
        return f"{value.low:g}-{value.mode:g}-{value.high:g}"
    return f"{value:g}"
