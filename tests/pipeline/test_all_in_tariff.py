"""The all-in electricity tariff (issue 29 item 2): an energy price (the zone's day-ahead mean,
or a declared PPA/contract energy price) + the site country's non-household network costs +
taxes and levies excl. VAT for a consumption band. The formula by hand; the components through
parse -> validate -> load into a real DuckDB and back out of the store; a proposal on the new
basis resolved and scored against that store.

The component rows here are TEST FIGURES (round numbers at an example.org URL), not Eurostat's:
the bundled table holds only cited rows (sources/reference/README.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.engine.metrics import evaluate
from pipeline.engine.questions.diff import ELECTRICITY, METHOD, changed_groups
from pipeline.engine.resolved import Market
from pipeline.engine.scorecard import compute
from pipeline.ingest.bundled import load_bundled
from pipeline.inputs import resolve
from pipeline.inputs.market.read import read_market
from schemas.proposal import ProposalError, parse
from schemas.table import ValidationFailed
from sources import bundled
from sources.errors import ParseError

#: 5,000 W at 1,000 tokens/s, fully busy, PUE 1.2: facility = 5 x 1e6 / 3.6e6 x 1.2
#: = 1.666667 kWh/Mtok
BASE = {"tokens_per_s": [1000.0], "utilisation": [1.0], "busy_power_w": [5000.0],
        "pue": [1.2]}


def _figures(**inputs: list[float | None]) -> dict[str, Any]:
    frame = pl.DataFrame({**BASE, **inputs}, schema_overrides={
        k: pl.Float64() for k in (*BASE, *inputs)})
    return evaluate(frame).row(0, named=True)


def test_energy_plus_network_plus_taxes_is_the_tariff() -> None:
    row = _figures(wholesale_eur_per_kwh=[0.065], network_eur_per_kwh=[0.020],
                   taxes_levies_eur_per_kwh=[0.015])
    # 0.065 (day-ahead) + 0.020 (network) + 0.015 (taxes and levies) = 0.100 EUR/kWh
    assert row["electricity_eur_per_kwh"] == pytest.approx(0.100)
    # 1.666667 kWh/Mtok x 0.100 = 0.166667 EUR/Mtok, against 1.666667 x 0.065 = 0.108333
    # on the day-ahead price alone: the electricity part moves by 1.666667 x 0.035 = 0.058333
    assert row["electricity_eur_per_mtok"] == pytest.approx(0.166667, rel=1e-5)
    alone = _figures(wholesale_eur_per_kwh=[0.065])
    assert row["electricity_eur_per_mtok"] - alone["electricity_eur_per_mtok"] == (
        pytest.approx(0.058333, rel=1e-4))


def test_a_declared_energy_price_replaces_the_day_ahead_and_a_contract_overrides() -> None:
    parts = {"wholesale_eur_per_kwh": [0.065], "network_eur_per_kwh": [0.020],
             "taxes_levies_eur_per_kwh": [0.015]}
    # a PPA at 0.050: 0.050 + 0.020 + 0.015 = 0.085 (the day-ahead price is not read)
    assert _figures(**parts, energy_eur_per_kwh=[0.050])["electricity_eur_per_kwh"] == (
        pytest.approx(0.085))
    # an all-in contract price stands as declared: 0.120, nothing added
    assert _figures(**parts, contract_eur_per_kwh=[0.120])["electricity_eur_per_kwh"] == (
        pytest.approx(0.120))
    # no energy price at all: no tariff (null), never the network and taxes alone
    assert _figures(network_eur_per_kwh=[0.020], taxes_levies_eur_per_kwh=[0.015])[
        "electricity_eur_per_kwh"] is None


HEADER = ("country,year,consumption_band,energy_supply_eur_per_kwh,network_eur_per_kwh,"
          "taxes_levies_eur_per_kwh,source_url,source_date,licence\n")
URL = "https://example.org/test-figures,2026-12-02,test figures (not Eurostat's)"
#: FR band ID: 2023 and 2024 (the vintage 2026-10 takes 2024, the latest year <= 2026) and
#: a 2027 row no 2026 vintage may see; nothing for DE
ROWS = (f"FR,2023,ID,0.0900,0.0300,0.0250,{URL}\n"
        f"FR,2024,ID,0.0800,0.0200,0.0150,{URL}\n"
        f"FR,2027,ID,0.0700,0.0999,0.0999,{URL}\n"
        f"FR,2024,IC,,0.0260,0.0180,{URL}\n")


def _files(rows: str) -> dict[str, bundled.RawFile]:
    files = {n: bundled.read(n) for n in bundled.FILES}
    files[bundled.TARIFF_FILE] = bundled.RawFile(bundled.TARIFF_FILE, (HEADER + rows).encode())
    return files


@pytest.fixture
def tariff_market(db: Path) -> Iterator[Market]:
    con = store.connect(db)
    load_bundled(con, _files(ROWS))
    yield read_market(con, bundled.VINTAGE)
    con.close()


def test_components_load_and_the_latest_year_of_the_vintage_is_read(db: Path) -> None:
    con = store.connect(db)
    load_bundled(con, _files(ROWS))
    assert con.execute("SELECT count(*) FROM core__tariff_components").fetchall() == [(4,)]
    mkt = read_market(con, bundled.VINTAGE)
    assert mkt.tariff_components is not None
    got = mkt.tariff_components.select(
        "country", "consumption_band", "year", "network_eur_per_kwh",
        "taxes_levies_eur_per_kwh", "energy_supply_eur_per_kwh").rows()
    # the 2027 row is after the vintage's year; 2024 is the latest <= 2026; an empty
    # energy-and-supply figure stays null (never 0)
    assert got == [("FR", "IC", 2024, 0.026, 0.018, None), ("FR", "ID", 2024, 0.02, 0.015, 0.08)]
    con.close()


def test_bad_component_rows_are_refused_and_nothing_is_loaded(db: Path) -> None:
    con = store.connect(db)
    load_bundled(con, _files(ROWS))
    # band IZ is no Eurostat band; 2.0 EUR/kWh of network costs is a unit slip (bound 1)
    for bad in (ROWS.replace("FR,2024,ID", "FR,2024,IZ"),
                ROWS.replace("0.0800,0.0200", "0.0800,2.0")):
        with pytest.raises(ValidationFailed) as caught:
            load_bundled(con, _files(bad))
        assert "core__tariff_components" in caught.value.report()
    assert con.execute("SELECT max(network_eur_per_kwh) FROM core__tariff_components"
                       ).fetchall() == [(0.0999,)]
    with pytest.raises(ParseError, match=r"tariff_components_yearly.csv: line 3, column "
                                         r"'network_eur_per_kwh': 'n/a'"):
        load_bundled(con, _files(ROWS.replace("0.0800,0.0200", "0.0800,n/a")))
    con.close()


TCO = """
[tco.site]
source = "test quote"
amortisation_months = 48
electricity = {tariff}
[tco.site.capex]
gpus = 240000
"""
OWN = candidate("own", cost='{ tco = "site" }')


def _score(mkt: Market, tariff: str, *blocks: str) -> dict[str, dict[str, Any]]:
    text = proposal("all-in", TCO.format(tariff=tariff), *(blocks or (OWN,)))
    p = parse(text, "p.toml")
    card = compute(p, resolve(p, "p.toml", mkt), mkt, draws=50)
    return {r["id"]: r for r in card.table.iter_rows(named=True)}


def _inputs(mkt: Market, tariff: str, *blocks: str) -> dict[str, dict[str, Any]]:
    text = proposal("all-in", TCO.format(tariff=tariff), *(blocks or (OWN,)))
    p = parse(text, "p.toml")
    frame = resolve(p, "p.toml", mkt).inputs
    return {r["input"]: r for r in frame.filter(pl.col("id") == p.candidates[0].id)
            .iter_rows(named=True)}


def test_an_own_site_on_the_all_in_basis(tariff_market: Market) -> None:
    mkt = tariff_market
    plain = _score(mkt, '{ basis = "wholesale" }')["own"]
    all_in = _score(mkt, '{ basis = "all_in", band = "ID" }')["own"]
    inputs = _inputs(mkt, '{ basis = "all_in", band = "ID" }')
    day_ahead = inputs["wholesale_eur_per_kwh"]["mode"]
    # each part is an input with its source: FR band ID, 2024 (the latest year <= 2026)
    assert inputs["network_eur_per_kwh"]["mode"] == 0.0200
    assert inputs["taxes_levies_eur_per_kwh"]["mode"] == 0.0150
    assert "band ID" in inputs["network_eur_per_kwh"]["source"]
    assert "FR 2024" in inputs["taxes_levies_eur_per_kwh"]["source"]
    # the tariff: the vintage's FR day-ahead + 0.0200 + 0.0150
    assert all_in["electricity_eur_per_kwh"] == pytest.approx(day_ahead + 0.035)
    assert plain["electricity_eur_per_kwh"] == pytest.approx(day_ahead)
    # 5,600 W at 4,000 tokens/s, PUE 1.3: 1.4 J/token, 1.4 x 1e6 / 3.6e6 x 1.3
    # = 0.505556 kWh/Mtok; the electricity part moves by 0.505556 x 0.035 = 0.0176944 EUR/Mtok
    moved = all_in["electricity_eur_per_mtok"] - plain["electricity_eur_per_mtok"]
    assert moved == pytest.approx(0.0176944, rel=1e-4)
    # and the cost per Mtok by the same (fully busy, the rest of the TCO unchanged)
    assert all_in["cpm_eur_per_mtok"] - plain["cpm_eur_per_mtok"] == pytest.approx(
        0.0176944, rel=1e-4)
    # the report's electricity source spells the parts out, VAT excluded
    source = all_in["electricity_source"]
    assert "network costs 0.0200 EUR/kWh + taxes and levies 0.0150 EUR/kWh" in source
    assert "VAT excluded" in source


def test_a_ppa_energy_price_and_a_declared_override(tariff_market: Market) -> None:
    mkt = tariff_market
    ppa = _score(mkt, '{ basis = "all_in", band = "ID", energy_eur_per_kwh = 0.060 }')["own"]
    # 0.060 + 0.020 + 0.015 = 0.095 EUR/kWh; x 0.505556 kWh/Mtok = 0.0480278 EUR/Mtok
    assert ppa["electricity_eur_per_kwh"] == pytest.approx(0.095)
    assert ppa["electricity_eur_per_mtok"] == pytest.approx(0.0480278, rel=1e-5)
    assert ppa["electricity_grade"] == "declared"
    # a candidate's declared price still overrides the whole tariff: 0.2, nothing added
    override = candidate("own", cost='{ tco = "site" }', electricity_eur_per_kwh="0.2")
    inputs = _inputs(mkt, '{ basis = "all_in", band = "ID" }', override)
    assert inputs["contract_eur_per_kwh"]["mode"] == 0.2
    assert "network_eur_per_kwh" not in inputs and "taxes_levies_eur_per_kwh" not in inputs


def test_no_components_for_the_country_is_an_error_listing_what_is_bundled(
        tariff_market: Market) -> None:
    de = candidate("de", zone='"DE-LU"', cost='{ tco = "site" }')
    # the day-ahead price alone is not the bill: an error naming the tariff's key and listing
    # the bundled country/band/year (FR IC and ID, 2024: the 2027 row is after the vintage)
    with pytest.raises(ProposalError) as caught:
        _score(tariff_market, '{ basis = "all_in", band = "ID" }', de)
    assert caught.value.key == "tco.site.electricity.band"
    assert ("candidate 'de' in DE: no non-household price components (Eurostat "
            "nrg_pc_205_c) for DE, band ID, in any year up to 2026; in this vintage's market "
            "(country band (year)): FR IC (2024), FR ID (2024)") in str(caught.value)


def test_a_band_bundled_only_for_a_later_year_is_an_error(db: Path) -> None:
    # NL band IE only for 2027: a 2026-10 vintage cannot read it, and nothing else is bundled;
    # NL IE is bundled (for 2027), so the list is of this vintage's market, which holds none
    # (it said "bundled ...: none" of a band the package does bundle)
    con = store.connect(db)
    load_bundled(con, _files(f"NL,2027,IE,0.0700,0.0300,0.0200,{URL}\n"))
    mkt = read_market(con, bundled.VINTAGE)
    con.close()
    nl = candidate("nl", zone='"NL"', cost='{ tco = "site" }')
    with pytest.raises(ProposalError, match=r"tco\.site\.electricity\.band: candidate 'nl' "
                                            r"in NL: .* band IE, in any year up to 2026; "
                                            r"in this vintage's market \(country band "
                                            r"\(year\)\): none"):
        _score(mkt, '{ basis = "all_in", band = "IE" }', nl)


def test_the_cli_refuses_a_tariff_without_components(tmp_path: Path, db: Path) -> None:
    text = proposal("all-in", TCO.format(tariff='{ basis = "all_in", band = "ID" }'),
                    candidate("es", zone='"ES"', cost='{ tco = "site" }'))
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--out", str(out)])
    # Spain has no bundled components (sources/reference/README.md): exit 1, the file and
    # the key named, the bundled bands listed, nothing written
    assert result.exit_code == 1
    assert "tco.site.electricity.band" in result.output
    assert "for ES, band ID" in result.output and "DE IC (2023)" in result.output
    assert not out.exists()


def test_the_band_must_be_one_of_eurostats() -> None:
    with pytest.raises(ProposalError, match="band"):
        parse(proposal("t", TCO.format(tariff='{ basis = "all_in", band = "IH" }'), OWN),
              "p.toml")


def test_the_bundled_components_price_a_german_own_site(market: Market) -> None:
    # the packaged rows (sources/reference/tariff_components_yearly.csv): Eurostat
    # nrg_pc_205_c 2023, band IC, DE network 0.0548 and taxes 0.0151 + 0.0205 = 0.0356 (VAT
    # left out); FR 0.0252 and 0.0018 + 0.0006 = 0.0024
    # IT 0.0214 and 0.0412 + 0.0110 = 0.0522; PL 0.0420 and 0.0209 + 0.0538 = 0.0747; SE
    # 0.0266 and 0.0002 + 0.0005 = 0.0007 (the same extract, its `policy` + `tax_env`)
    assert market.tariff_components is not None
    assert market.tariff_components.select(
        "country", "consumption_band", "year", "network_eur_per_kwh",
        "taxes_levies_eur_per_kwh").rows() == [("DE", "IC", 2023, 0.0548, 0.0356),
                                               ("FR", "IC", 2023, 0.0252, 0.0024),
                                               ("IT", "IC", 2023, 0.0214, 0.0522),
                                               ("PL", "IC", 2023, 0.0420, 0.0747),
                                               ("SE", "IC", 2023, 0.0266, 0.0007)]
    de = candidate("de", zone='"DE-LU"', cost='{ tco = "site" }')
    tariff = '{ basis = "all_in", band = "IC" }'
    row = _score(market, tariff, de)["de"]
    day_ahead = _inputs(market, tariff, de)["wholesale_eur_per_kwh"]["mode"]
    # DE-LU's day-ahead mean of the vintage + 0.0548 + 0.0356 = + 0.0904 EUR/kWh
    assert row["electricity_eur_per_kwh"] == pytest.approx(day_ahead + 0.0904)
    assert "Eurostat nrg_pc_205_c DE 2023, band IC" in row["electricity_source"]
    # an Italian own site: IT's day-ahead mean + 0.0214 + 0.0522 = + 0.0736 EUR/kWh
    it = candidate("it", zone='"IT"', cost='{ tco = "site" }')
    day_ahead_it = _inputs(market, tariff, it)["wholesale_eur_per_kwh"]["mode"]
    assert _score(market, tariff, it)["it"]["electricity_eur_per_kwh"] == pytest.approx(
        day_ahead_it + 0.0736)
    # Spain has no bundled components: an error naming the key and what is bundled
    es = candidate("es", zone='"ES"', cost='{ tco = "site" }')
    with pytest.raises(ProposalError, match=r"for ES, band IC, .* DE IC \(2023\), FR IC "
                                            r"\(2023\), IT IC \(2023\), PL IC \(2023\), "
                                            r"SE IC \(2023\)"):
        _score(market, tariff, es)


def test_the_example_report_shows_the_german_tariff_in_its_parts(tmp_path: Path,
                                                                 db: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "pipeline" / "example_proposal.toml"
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(example), "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = (out / "scorecard.html").read_text(encoding="utf-8")
    # the own German node (band IC): the parts and the VAT treatment, as the report prints them
    assert "all-in tariff, band IC: energy (day-ahead mean DE-LU" in html
    assert "network costs 0.0548 EUR/kWh + taxes and levies 0.0356 EUR/kWh" in html
    assert "VAT excluded (recoverable by a business)" in html
    # the workbook's Assumptions sheet lists each part as an input of its own
    sheet = openpyxl.load_workbook(out / "scorecard.xlsx")["Assumptions"]
    parts = {(r[0], r[1]): r[3] for r in sheet.iter_rows(values_only=True)
             if r and r[1] in ("network_eur_per_kwh", "taxes_levies_eur_per_kwh")}
    assert parts == {("onprem-de-h200-fp8", "network_eur_per_kwh"): 0.0548,
                     ("onprem-de-h200-fp8", "taxes_levies_eur_per_kwh"): 0.0356}


def test_a_change_of_components_is_an_electricity_price_change(market: Market) -> None:
    # a fresh copy of the shared market (its row-lookup cache empty, as a diff's markets are)
    before = dataclasses.replace(market)
    assert before.tariff_components is not None
    # Germany's network costs 0.0548 -> 0.0600: a month-on-month diff attributes it to the
    # electricity price group (the tariff's parts), not to a change of method
    later = dataclasses.replace(before, tariff_components=before.tariff_components.with_columns(
        pl.when(pl.col("country") == "DE").then(0.0600)
        .otherwise(pl.col("network_eur_per_kwh")).alias("network_eur_per_kwh")))
    groups = changed_groups(before, later)
    assert ELECTRICITY in groups and METHOD not in groups
    assert changed_groups(before, dataclasses.replace(before)) == []
