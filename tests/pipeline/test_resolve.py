"""Resolving candidates against the market: a zone is checked whatever the candidate
overrides, since the zone also gives the sovereignty's country."""

from __future__ import annotations

import pytest
from proposals import candidate, proposal

from pipeline.engine.resolved import Market
from pipeline.inputs import resolve
from schemas.proposal import ProposalError, parse

#: one on-prem candidate whose electricity price and grid intensity are both declared
PROPOSAL = proposal("t", candidate("own", electricity_eur_per_kwh="0.15",
                                   grid_gco2e_per_kwh="50"))



def test_zone_with_both_overrides_is_still_checked(market: Market) -> None:
    # Price and grid intensity are both overridden, so no market row is looked up for the
    # zone; "FRA" must still fail rather than pass and take sovereignty from "FR" (= "FRA"[:2]).
    bad = parse(PROPOSAL.replace('zone = "FR"', 'zone = "FRA"'), "p.toml")
    with pytest.raises(ProposalError) as caught:
        resolve(bad, "p.toml", market)
    message = str(caught.value)
    assert message.startswith("p.toml: candidates[0] (id 'own').zone: unknown zone 'FRA'; "
                              "known zones: "), message
    assert "FR" in message.split("known zones: ")[1].split(", ")


def test_known_zone_with_both_overrides_resolves(market: Market) -> None:
    resolved = resolve(parse(PROPOSAL, "p.toml"), "p.toml", market)
    row = resolved.static.row(0, named=True)
    # both figures declared: no market row, no provenance entry for the zone
    assert (row["zone"], row["electricity_grade"], row["grid_grade"]) == \
        ("FR", "declared", "declared")
    assert not [s for s in resolved.sources
                if s["kind"] in ("electricity_price", "grid_intensity")]


def _inputs(resolved: object, cid: str) -> dict[str, float]:
    frame = resolved.inputs  # type: ignore[attr-defined]
    rows = frame.filter(frame["id"] == cid).select("input", "mode").rows()
    return dict(rows)


def test_a_country_code_is_its_bidding_zone_for_prices_and_national_for_carbon(
        market: Market) -> None:
    text = proposal("t", candidate("iso", zone='"DE"'), candidate("zone", zone='"DE-LU"'))
    resolved = resolve(parse(text, "p.toml"), "p.toml", market)
    rows = {r["id"]: r for r in resolved.static.iter_rows(named=True)}
    # DE is read as DE-LU: the same day-ahead price and (the bundled national DE figure is
    # stored under DE-LU) the same grid intensity as the candidate that wrote DE-LU
    assert rows["iso"]["zone"] == "DE-LU"
    iso, zone = _inputs(resolved, "iso"), _inputs(resolved, "zone")
    assert iso["wholesale_eur_per_kwh"] == zone["wholesale_eur_per_kwh"]
    assert iso["grid_gco2e_per_kwh"] == zone["grid_gco2e_per_kwh"]
    assert any("zone DE (a country code) is read as bidding zone DE-LU" in n
               for n in rows["iso"]["notes"])
    assert not any("country code" in n for n in rows["zone"]["notes"])
    assert rows["iso"]["electricity_grade"] == "reference"


def test_a_country_of_several_zones_without_a_national_price_asks_for_the_zone(
        market: Market) -> None:
    assert "NO" not in market.zones
    with pytest.raises(ProposalError) as caught:
        resolve(parse(proposal("t", candidate("n", zone='"NO"')), "p.toml"), "p.toml", market)
    assert "zone: NO is a country of several bidding zones (NO1, NO2, NO3, NO4, NO5)" in \
        str(caught.value)
