"""Market-based carbon beside location-based (GHG Protocol Scope 2), and the figures of one
mean request: the formulas by hand, the residual mixes through parse -> validate -> load, the
contracts and the policy's carbon basis through a real run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.engine.metrics import evaluate
from pipeline.engine.questions.diff import ELECTRICITY, GRID, changed_groups, compose
from pipeline.engine.resolved import Market
from pipeline.ingest.bundled import load_bundled
from schemas.proposal import parse
from schemas.table import ValidationFailed
from sources import bundled
from sources.errors import ParseError

runner = CliRunner()

#: 5,000 W at 1,000 tokens/s, fully busy, PUE 1.2: 5 J/token, and
#: facility = 5 x 1e6 / 3.6e6 x 1.2 = 1.666667 kWh/Mtok
BASE = {"tokens_per_s": [1000.0], "utilisation": [1.0], "busy_power_w": [5000.0],
        "pue": [1.2], "grid_gco2e_per_kwh": [50.0], "request_tokens": [500.0]}


def _figures(**inputs: list[float | None]) -> dict[str, float | None]:
    frame = pl.DataFrame({**BASE, **inputs}, schema_overrides={
        k: pl.Float64() for k in (*BASE, *inputs)})
    return evaluate(frame).row(0, named=True)


def test_market_factor_blends_the_covered_share_with_the_residual_mix() -> None:
    row = _figures(covered_share=[0.6], covered_gco2e_per_kwh=[0.0],
                   residual_gco2e_per_kwh=[700.0])
    # 60 % under guarantees of origin at 0 g, the other 40 % at the residual mix:
    # 0.6 x 0 + 0.4 x 700 = 280 gCO2e/kWh
    assert row["market_gco2e_per_kwh"] == pytest.approx(280.0)
    # market-based: 1.666667 x 280 = 466.667 g/Mtok; location-based unchanged: x 50 = 83.333
    assert row["carbon_market_gco2e_per_mtok"] == pytest.approx(466.6667, rel=1e-6)
    assert row["carbon_gco2e_per_mtok"] == pytest.approx(83.3333, rel=1e-6)
    # one request of 500 tokens: 1.666667 kWh/Mtok x 500 / 1e6 x 1000 = 0.833333 Wh;
    # 83.3333 x 500 / 1e6 = 0.0416667 g (location), 466.667 x 500 / 1e6 = 0.233333 g (market)
    assert row["facility_wh_per_request"] == pytest.approx(0.833333, rel=1e-6)
    assert row["carbon_gco2e_per_request"] == pytest.approx(0.0416667, rel=1e-5)
    assert row["carbon_market_gco2e_per_request"] == pytest.approx(0.233333, rel=1e-5)


def test_a_supplier_factor_replaces_the_residual_mix_for_the_uncovered_share() -> None:
    row = _figures(covered_share=[0.6], covered_gco2e_per_kwh=[10.0],
                   supplier_gco2e_per_kwh=[100.0], residual_gco2e_per_kwh=[700.0])
    # 0.6 x 10 + 0.4 x 100 = 6 + 40 = 46 gCO2e/kWh (the residual mix is not read)
    assert row["market_gco2e_per_kwh"] == pytest.approx(46.0)


def test_without_contract_or_residual_mix_the_location_figure_stands_in() -> None:
    row = _figures()
    # nothing covered, no supplier factor, no residual mix: the grid's 50 g/kWh
    assert row["market_gco2e_per_kwh"] == pytest.approx(50.0)
    assert row["carbon_market_gco2e_per_mtok"] == row["carbon_gco2e_per_mtok"]
    # without a request shape no per-request figure
    assert _figures(request_tokens=[None])["facility_wh_per_request"] is None


CONTRACTS = """
[carbon_contracts.half-green]
source = "supply contract 2027: half the volume under hydro guarantees of origin"
covered_share = 0.5
[carbon_contracts.provider]
source = "the provider's carbon export for our account, 2026"
supplier_gco2e_per_kwh = 12
"""

DEMAND = """
[demand]
tokens_per_day = 100_000_000
prompt_tokens = 1500
output_tokens = 400
"""


def _run(tmp_path: Path, db: Path, text: str) -> dict[str, dict]:
    path = tmp_path / "p.toml"
    path.write_text(text)
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return {c["id"]: c for c in json.loads(result.stdout)["candidates"]}


def _candidates() -> list[str]:
    return [
        candidate("de", zone='"DE-LU"'),
        candidate("de-green", zone='"DE-LU"', carbon_contract='"half-green"'),
        candidate("cloud", deployment='"cloud"', provider='"scaleway"', zone='"FR"',
                  cost='{ eur_per_hour = 11.0, source = "quote", pricing = "on_demand" }'),
        candidate("cloud-declared", deployment='"cloud"', provider='"scaleway"', zone='"FR"',
                  cost='{ eur_per_hour = 11.0, source = "quote", pricing = "on_demand" }',
                  carbon_contract='"provider"'),
    ]


def test_both_carbon_figures_side_by_side(tmp_path: Path, db: Path) -> None:
    c = _run(tmp_path, db, proposal("carbon both ways", CONTRACTS, DEMAND, *_candidates()))
    # every candidate has the same facility energy per Mtok (same power, goodput, PUE and
    # demand), so the figures compare through their factors; the location-based intensity
    # is the row's own input
    de, green = c["de"], c["de-green"]
    grid = next(i["mode"] for i in de["inputs"] if i["input"] == "grid_gco2e_per_kwh")
    residual = next(i["mode"] for i in de["inputs"] if i["input"] == "residual_gco2e_per_kwh")
    # AIB 2024 residual mix of Germany (sources/reference/residual_mix_yearly.csv)
    assert residual == 724.56
    # no contract: market = residual; ratio market / location = 724.56 / grid
    assert de["carbon_market_gco2e_per_mtok"] / de["carbon_gco2e_per_mtok"] == pytest.approx(
        724.56 / grid)
    # half covered at 0 g: 0.5 x 724.56 = 362.28 g/kWh, half the uncontracted figure
    assert green["carbon_market_gco2e_per_mtok"] == pytest.approx(
        de["carbon_market_gco2e_per_mtok"] / 2)
    assert green["carbon_gco2e_per_mtok"] == de["carbon_gco2e_per_mtok"]  # never mixed
    # a cloud candidate without a cited provider factor: location-based, with a note
    cloud = c["cloud"]
    assert cloud["carbon_market_gco2e_per_mtok"] == cloud["carbon_gco2e_per_mtok"]
    assert any("no market-based factor of scaleway" in n for n in cloud["notes"])
    # the provider's declared factor: 12 g/kWh over the facility energy
    declared = c["cloud-declared"]
    assert declared["carbon_market_gco2e_per_mtok"] == pytest.approx(
        declared["facility_kwh_per_mtok"] * 12.0)
    # per request, output basis: 400 tokens; Wh = kWh/Mtok x 400 / 1e6 x 1000
    assert de["facility_wh_per_request"] == pytest.approx(de["facility_kwh_per_mtok"] * 0.4)
    assert de["carbon_gco2e_per_request"] == pytest.approx(
        de["carbon_gco2e_per_mtok"] * 400 / 1e6)


def test_policy_carbon_basis_market_ranks_on_the_market_figure(tmp_path: Path,
                                                                db: Path) -> None:
    # Two own sites alike but for the zone: FR on its grid, DE with all its electricity under
    # guarantees of origin. Location-based FR is the cleaner; market-based DE is (0 g/kWh).
    green = ('[carbon_contracts.all-green]\nsource = "100 % wind guarantees of origin"\n'
             "covered_share = 1\n")
    sites = [candidate("fr"), candidate("de", zone='"DE-LU"', carbon_contract='"all-green"')]
    location = _run(tmp_path, db, proposal(
        "location basis", '[policy]\nobjectives = ["carbon"]\n', green, *sites))
    assert location["fr"]["pareto_rank"] == 1 and location["de"]["pareto_rank"] == 2
    text = proposal("market basis",
                    '[policy]\nobjectives = ["carbon"]\ncarbon_basis = "market"\n', green,
                    *sites)
    assert parse(text, "p.toml").policy.objectives == ["carbon_market"]
    market = _run(tmp_path, db, text)
    # market: FR 0.505556 kWh/Mtok x 23.52 = 11.891 g (residual mix, no contract); DE 1 x 0
    assert market["fr"]["carbon_market_gco2e_per_mtok"] == pytest.approx(0.505556 * 23.52,
                                                                          rel=1e-5)
    assert market["de"]["carbon_market_gco2e_per_mtok"] == 0.0
    assert market["de"]["pareto_rank"] == 1 and market["fr"]["pareto_rank"] == 2
    # the location-based figures are the same under either basis
    assert market["fr"]["carbon_gco2e_per_mtok"] == location["fr"]["carbon_gco2e_per_mtok"]


def test_location_basis_leaves_the_proposal_identity_as_it_was() -> None:
    plain = proposal("identity", candidate("a"))
    explicit = proposal("identity", '[policy]\ncarbon_basis = "location"\n', candidate("a"))
    assert parse(plain, "p.toml").sha256() == parse(explicit, "p.toml").sha256()
    market = proposal("identity", '[policy]\ncarbon_basis = "market"\n', candidate("a"))
    assert parse(market, "p.toml").sha256() != parse(plain, "p.toml").sha256()


def test_a_candidate_naming_no_contract_is_refused(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(proposal("bad", candidate("a", carbon_contract='"nope"')))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1
    # at the key that names it, as the file writes it (not at the proposal's top level)
    assert ("candidates[0] (id 'a').carbon_contract: 'nope' names no [carbon_contracts.nope]"
            in result.stderr)


def _altered(old: str, new: str) -> dict[str, bundled.RawFile]:
    files = {n: bundled.read(n) for n in bundled.FILES}
    name = bundled.RESIDUAL_FILE
    text = files[name].content.decode()
    assert old in text
    files[name] = bundled.RawFile(name, text.replace(old, new, 1).encode())
    return files


def test_residual_mixes_load_and_bad_rows_are_refused(db: Path) -> None:
    con = store.connect(db)
    load_bundled(con)
    rows = con.execute("SELECT country, intensity_gco2e_per_kwh, emission_factor_basis "
                       "FROM core__residual_mix WHERE country IN ('DE', 'FR') "
                       "ORDER BY country").fetchall()
    assert rows == [("DE", 724.56, "direct"), ("FR", 23.52, "direct")]
    # 72,456 g/kWh: a unit slip the intensity bound (2,000) catches; nothing is loaded
    with pytest.raises(ValidationFailed) as caught:
        load_bundled(con, _altered("DE,2024,724.56", "DE,2024,72456"))
    assert "core__residual_mix" in caught.value.report()
    assert con.execute("SELECT max(intensity_gco2e_per_kwh) FROM core__residual_mix"
                       ).fetchone() == (808.3,)
    with pytest.raises(ParseError, match=r"residual_mix_yearly.csv: line 3, column "
                                         r"'intensity_gco2e_per_kwh': 'n/a'"):
        load_bundled(con, _altered("DE,2024,724.56", "DE,2024,n/a"))


def test_per_request_figures_stand_beside_other_systems_published_ones(
        tmp_path: Path, db: Path) -> None:
    text = proposal("per request", DEMAND, candidate("fr"))
    path = tmp_path / "p.toml"
    path.write_text(text)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "scorecard.json").read_text())
    (fr,) = document["candidates"]
    # utilisation at the demand: busy = 1e8 / 86,400 / 4,000 = 0.28935 of the one instance
    # sized (ceil(1157.4 / (4000 x 0.8)) = 1); no idle figure, so 5,600 W throughout:
    # 5600 / 1157.4 = 4.8384 J/token; x 1e6 / 3.6e6 x 1.3 = 1.74720 kWh/Mtok;
    # 400 output tokens: 1.74720 x 400 / 1e6 x 1000 = 0.69888 Wh per request
    assert fr["facility_wh_per_request"] == pytest.approx(0.69888, rel=1e-4)
    # FR 2025 grid 31 g/kWh: 1.74720 x 31 = 54.163 g/Mtok, x 400 / 1e6 = 0.021665 g
    assert fr["carbon_gco2e_per_request"] == pytest.approx(0.021665, rel=1e-4)
    published = {p["system"]: p for p in document["published_per_request"]}
    google = published["Google Gemini Apps"]
    assert (google["published_wh_per_request"], google["published_gco2e_per_request"],
            google["published_accounting"]) == (0.24, 0.03, "market_based")
    mistral = published["Mistral Le Chat (Mistral Large 2)"]
    # Mistral publishes no energy per response: null, never 0
    assert mistral["published_wh_per_request"] is None
    assert mistral["published_gco2e_per_request"] == 1.14
    html = (out / "scorecard.html").read_text()
    section = html[html.index('id="per-request"'):html.index('id="probabilities"')]
    assert "other systems&#39; figures" in section or "other systems' figures" in section
    assert "0.6989" in section and "Google Gemini Apps" in section
    assert "arxiv.org/abs/2508.15734" in section
    # the others' table is apart from the candidates' rows
    ours = section[section.index('id="per-request-ours"'):section.index('id="per-request-others"')]
    assert "Google" not in ours and "fr" in ours


def test_a_new_residual_mix_is_a_grid_change_in_the_diff(market: Market) -> None:
    assert market.residual_mixes is not None
    newer = dataclasses.replace(market, residual_mixes=market.residual_mixes.with_columns(
        pl.when(pl.col("country") == "DE").then(700.0)
        .otherwise(pl.col("intensity_gco2e_per_kwh")).alias("intensity_gco2e_per_kwh")))
    # only the residual mix moved: the grid group, not method/assumptions
    assert changed_groups(market, newer) == [GRID]
    swapped = compose(market, newer, frozenset({GRID}))
    assert swapped.residual_mixes is not None
    assert swapped.residual_mixes.filter(country="DE")["intensity_gco2e_per_kwh"][0] == 700.0
    kept = compose(market, newer, frozenset({ELECTRICITY}))
    assert kept.residual_mixes is not None
    assert kept.residual_mixes.filter(country="DE")["intensity_gco2e_per_kwh"][0] == 724.56


def test_a_covered_share_above_one_is_refused_naming_its_key(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(proposal("bad share", '[carbon_contracts.x]\nsource = "ppa"\n'
                             "covered_share = 1.5\n", candidate("a", carbon_contract='"x"')))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1 and result.stdout == ""
    assert "carbon_contracts.x.covered_share" in result.stderr
    assert "must be at most 1" in result.stderr


def test_a_market_s_lookup_cache_is_no_change_in_the_diff(market: Market) -> None:
    """Market.row caches its lookups (`_found`, not a figure): two markets with the same
    tables are the same to the diff whatever either has looked up (the A and B of a real diff
    have each been computed, so their caches differ; a cache once counted as a
    method/assumptions change, and this file's residual-mix test failed whenever an earlier
    test had looked a row up in the shared market)."""
    fresh = dataclasses.replace(market)  # same tables, an empty cache
    assert market.row("hardware", gpu="H100-SXM-80GB") is not None  # fills market's cache
    assert changed_groups(market, fresh) == []
