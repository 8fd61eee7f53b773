"""Time-matched energy: the vintage's hourly prices and intensities weighted by the
workload's hourly profile, shown beside the flat monthly figures."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.ingest.bundled import load_bundled
from schemas.market import ELECTRICITY_PRICES, GRID_INTENSITY

runner = CliRunner()

PROPOSAL = proposal(
    "time matched",
    "[workload]\nhourly_profile = [" + ", ".join(["0"] * 12 + ["1"] * 12) + "]\n"
    'timezone = "UTC"\n',
    candidate("fr", label='"afternoon-heavy workload in France"'),
    candidate("es", label='"no hourly data for Spain"', zone='"ES"'),
)


def hourly_fr(vintage: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two days of FR hours: 50 EUR/MWh and 20 g/kWh before noon UTC, 100 and 60 after."""
    start = datetime(2026, 11, 1, tzinfo=UTC)
    times = [start + timedelta(hours=h) for h in range(48)]
    afternoon = [t.hour >= 12 for t in times]
    cited = {"source_url": "https://example.org/hourly", "source_date": date(2026, 11, 3),
             "licence": "CC BY 4.0"}
    prices = pl.DataFrame({
        "vintage": vintage, "zone": "FR", "interval_start_utc": times, "resolution": "hour",
        "price_eur_per_mwh": [100.0 if a else 50.0 for a in afternoon],
        "price_basis": "day_ahead", **cited})
    grid = pl.DataFrame({
        "vintage": vintage, "zone": "FR", "interval_start_utc": times, "resolution": "hour",
        "intensity_gco2e_per_kwh": [60.0 if a else 20.0 for a in afternoon],
        "emission_factor_basis": "lifecycle", "accounting": "location_based", **cited})
    return prices, grid


def test_profile_weighted_beside_flat(tmp_path: Path, db: Path) -> None:
    con = store.connect(db)
    load_bundled(con)
    prices, grid = hourly_fr("2026-11")
    sha = store.save_snapshot(con, b"hourly", source="test", url="https://example.org/hourly")
    store.load(con, "test-hourly", "2026-11", [
        store.Batch(ELECTRICITY_PRICES, prices, sha, "hourly"),
        store.Batch(GRID_INTENSITY, grid, sha, "hourly")])
    con.close()
    path = tmp_path / "p.toml"
    path.write_text(PROPOSAL)
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--vintage", "2026-11",
                                 "--json"])
    assert result.exit_code == 0, result.output
    c = {x["id"]: x for x in json.loads(result.stdout)["candidates"]}
    fr = c["fr"]
    # The profile weighs only the afternoon hours: price 100 EUR/MWh = 0.1 EUR/kWh and
    # 60 g/kWh. The flat figures stay: the month's mean price (75 EUR/MWh over its hours) and
    # the annual location-based intensity (FR 2025: 31 g/kWh).
    assert fr["wholesale_eur_per_kwh_profile"] == pytest.approx(0.1)
    assert fr["grid_gco2e_per_kwh_profile"] == pytest.approx(60.0)
    # facility = 5600 / 4000 / 3.6 x 1.3 = 0.505556 kWh/Mtok
    # flat: 0.505556 x 31 = 15.672 g; time-matched: 0.505556 x 60 = 30.333 g
    assert fr["carbon_gco2e_per_mtok"] == pytest.approx(15.6722, rel=1e-4)
    assert fr["carbon_gco2e_per_mtok_time_matched"] == pytest.approx(30.3333, rel=1e-4)
    # electricity: 0.505556 x 0.075 = 0.037917 flat; x 0.1 = 0.050556 time-matched
    assert fr["electricity_eur_per_mtok"] == pytest.approx(0.037917, rel=1e-4)
    assert fr["electricity_eur_per_mtok_time_matched"] == pytest.approx(0.050556, rel=1e-4)
    es = c["es"]
    assert es["carbon_gco2e_per_mtok_time_matched"] is None
    assert any("time-matched figures not computed" in n for n in es["notes"])
