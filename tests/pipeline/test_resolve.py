"""Resolving candidates against the market: a zone is checked whatever the candidate
overrides, since the zone also gives the sovereignty's country."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from proposals import candidate, proposal

from pipeline import store
from pipeline.engine.proposal import ProposalError, parse
from pipeline.engine.resolve import Market, resolve
from pipeline.ingest.bundled import load_bundled
from sources import bundled

#: one on-prem candidate whose electricity price and grid intensity are both declared
PROPOSAL = proposal("t", candidate("own", electricity_eur_per_kwh="0.15",
                                   grid_gco2e_per_kwh="50"))


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Market]:
    con = store.connect(Path(tmp_path_factory.mktemp("resolve")) / "store.duckdb")
    load_bundled(con)
    yield Market.read(con, bundled.VINTAGE)
    con.close()


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
