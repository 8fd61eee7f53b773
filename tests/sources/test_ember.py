"""Ember: the real wholesale CSV head, our three-month excerpt, the intensity API format."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest
import requests
from pytest_httpserver import HTTPServer

from schemas.market import ELECTRICITY_PRICES, GRID_INTENSITY
from sources.errors import ParseError
from sources.http import FetchPolicy
from sources.market import ember

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (ROOT / ".." / "shared" / "samples" / "ember" /
          "ember_european_wholesale_price_monthly_head.csv")
FIXTURES = ROOT / "tests" / "fixtures" / "ember"
URL = "https://files.ember-energy.org" + ember.WHOLESALE_PATH
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)


def wholesale(data: bytes, vintage: str, notes: list[str] | None = None) -> pl.DataFrame:
    frame = ember.parse_wholesale_monthly(data, url=URL, vintage=vintage,
                                          fetched_on=date(2026, 11, 29), notes=notes)
    return ELECTRICITY_PRICES.validate(frame, URL)


def test_real_csv_head() -> None:
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} absent")
    notes: list[str] = []
    frame = wholesale(SAMPLE.read_bytes(), "2015-01", notes)
    # 24 countries in January 2015, Luxembourg folded into DE-LU -> 23 rows
    assert frame.height == 23
    fr = frame.filter(pl.col("zone") == "FR").row(0, named=True)
    assert fr["price_eur_per_mwh"] == 40.94 and fr["resolution"] == "month"
    assert fr["interval_start_utc"] == datetime(2015, 1, 1, tzinfo=UTC)
    assert frame.filter(pl.col("zone") == "DE-LU")["price_eur_per_mwh"].to_list() == [29.94]
    assert notes == ["['LUX']: share a zone with another country ({'LUX': 'DE-LU'}); "
                     "1 row(s) skipped"]


def test_vintage_window_stops_at_the_vintage_month() -> None:
    frame = wholesale((FIXTURES / "wholesale_monthly_2026-09_to_11.csv").read_bytes(), "2026-10")
    # September and October 2026 for FR and DE-LU; November is after the vintage
    assert frame.select("zone", "price_eur_per_mwh").rows() == [
        ("DE-LU", 80.25), ("DE-LU", 90.0), ("FR", 60.5), ("FR", 70.0)]


def test_unit_in_header_drift_is_caught() -> None:
    body = (FIXTURES / "wholesale_monthly_2026-09_to_11.csv").read_bytes().replace(
        b"Price (EUR/MWhe)", b"Price (EUR/kWh)")
    with pytest.raises(ParseError, match=r"found \['Price \(EUR/kWh\)'\]"):
        wholesale(body, "2026-10")


def test_truncated_download_is_caught() -> None:
    body = (FIXTURES / "wholesale_monthly_2026-09_to_11.csv").read_bytes()[:-3]
    with pytest.raises(ParseError, match="truncated download"):
        wholesale(body, "2026-10")


def test_intensity_api_rows() -> None:
    url = "https://api.ember-energy.org/v1/carbon-intensity/yearly?entity_code=FRA"
    notes: list[str] = []
    frame = GRID_INTENSITY.validate(ember.parse_intensity(
        (FIXTURES / "carbon-intensity_yearly_2024.json").read_bytes(), url=url,
        vintage="2026-11", fetched_on=date(2026, 11, 29), notes=notes), url)
    assert frame.select("zone", "intensity_gco2e_per_kwh").rows() == [
        ("DE-LU", 342.06), ("ES", 146.15), ("FR", 44.18)]
    assert set(frame["resolution"]) == {"year"}
    assert set(frame["emission_factor_basis"]) == {"lifecycle"}
    assert notes == ["intensity for unmapped entities skipped: ['EU']"]  # the aggregate row


def test_api_key_is_redacted(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/carbon-intensity/yearly").respond_with_data(
        (FIXTURES / "carbon-intensity_yearly_2024.json").read_bytes())
    with requests.Session() as session:
        [got] = ember.fetch_intensity(session, "ember-secret-key", "yearly", "2024",
                                      base_url=httpserver.url_for("").rstrip("/"), policy=FAST)
    assert got.params["api_key"] == "***" and "ember-secret-key" not in got.url
    assert httpserver.log[0][0].args["api_key"] == "ember-secret-key"  # it was sent
