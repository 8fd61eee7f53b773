"""Energy-Charts /price: 15-min and hourly days, DST days, licence flags, unit drift."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest
import requests
from pytest_httpserver import HTTPServer

from schemas.market import ELECTRICITY_PRICES
from sources.errors import ParseError
from sources.http import FetchPolicy
from sources.market import energy_charts as ec

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "energy_charts"
URL = "https://api.energy-charts.info/price?bzn=BE&start=2025-10-26&end=2025-10-26"
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)
HOURS = {"15min": 0.25, "hour": 1.0}


def parse(name: str, bzn: str, notes: list[str] | None = None) -> pl.DataFrame:
    frame = ec.parse_prices((FIXTURES / name).read_bytes(), url=URL, bzn=bzn,
                            vintage="2025-10", fetched_on=date(2025, 10, 27), notes=notes)
    return ELECTRICITY_PRICES.validate(frame, name)


def time_weighted_mean(frame: pl.DataFrame) -> float:
    hours = frame["resolution"].replace_strict(HOURS, return_dtype=pl.Float64)
    return float((frame["price_eur_per_mwh"] * hours).sum() / hours.sum())


def test_autumn_dst_day_has_100_quarter_hours() -> None:
    frame = parse("price_BE_2025-10-26_dst100.json", "BE")
    assert frame.height == 100  # 25 local hours x 4
    assert set(frame["resolution"]) == {"15min"}
    # Brussels 2025-10-26 00:00 CEST = 2025-10-25 22:00 UTC; last slot starts 99 x 15 min later
    assert frame["interval_start_utc"][0] == datetime(2025, 10, 25, 22, 0, tzinfo=UTC)
    assert frame["interval_start_utc"][-1] == datetime(2025, 10, 26, 22, 45, tzinfo=UTC)
    # 50 slots at 100 and 50 at 0 EUR/MWh: (50 x 100 + 50 x 0) / 100 = 50
    assert time_weighted_mean(frame) == pytest.approx(50.0)
    assert frame["licence"][0].startswith("CC BY 4.0")


def test_spring_dst_day_has_92_quarter_hours_and_a_null_is_reported() -> None:
    notes: list[str] = []
    frame = parse("price_FR_2026-03-29_dst92.json", "FR", notes)
    # 23 local hours x 4 = 92 slots, one of them null -> 91 rows, and a note says so
    assert frame.height == 91
    assert notes == ["FR: 1 interval(s) without a price (null) skipped"]


def test_hourly_then_15min_monthly_average_weights_by_duration() -> None:
    notes: list[str] = []
    frame = parse("price_PT_2025-09-30_to_10-01_hourly_then_15min.json", "PT", notes)
    counts = frame.group_by("resolution").len().sort("resolution")
    assert counts.rows() == [("15min", 96), ("hour", 24)]
    # the last hourly slot (2025-09-30 22:00 UTC) is still an hour: the step is taken forward
    last_hour = frame.filter(pl.col("resolution") == "hour")["interval_start_utc"].max()
    assert last_hour == datetime(2025, 9, 30, 22, 0, tzinfo=UTC)
    # 24 h at 80 and 24 h (96 x 0.25 h) at 40: (24 x 80 + 24 x 40) / 48 = 60 EUR/MWh,
    # where a plain mean of the 120 rows would give (24 x 80 + 96 x 40) / 120 = 48
    assert time_weighted_mean(frame) == pytest.approx(60.0)
    assert frame["price_eur_per_mwh"].mean() == pytest.approx(48.0)
    # PT is not CC BY: every row flagged, and the run is told
    assert frame["licence"].str.starts_with(ec.RESTRICTED).all()
    assert "for private and internal use only" in frame["licence"][0]
    assert notes == ["PT: licence is not CC BY; rows flagged RESTRICTED"]
    assert frame["zone"].unique().to_list() == ["PT"]


def mutated(**changes: object) -> bytes:
    body = json.loads((FIXTURES / "price_BE_2025-10-26_dst100.json").read_bytes())
    body.update(changes)
    return json.dumps(body).encode()


@pytest.mark.parametrize("data, where", [
    (mutated(unit="EUR / kWh"), "unit"),
    (mutated(license_info=""), "license_info"),
    (mutated(price=[1.0]), "price"),
    (mutated(unix_seconds=[0, 1000, 2000], price=[1.0, 2.0, 3.0]), "unix_seconds"),
    (b'{"license_info": "CC BY", "unix_seconds": [1, 2', "(body)"),
    (b'{"detail": "No price data available for that bidding zone/time range"}', "key"),
])
def test_faults_are_parse_errors(data: bytes, where: str) -> None:
    with pytest.raises(ParseError) as caught:
        ec.parse_prices(data, url=URL, bzn="BE", vintage="2025-10",
                        fetched_on=date(2025, 10, 27))
    assert caught.value.where.startswith(where)
    assert caught.value.source == "energy_charts" and caught.value.path == URL


def test_renamed_price_field_names_the_key() -> None:
    body = json.loads((FIXTURES / "price_BE_2025-10-26_dst100.json").read_bytes())
    body["prices"] = body.pop("price")
    with pytest.raises(ParseError, match="key 'price'"):
        ec.parse_prices(json.dumps(body).encode(), url=URL, bzn="BE", vintage="2025-10",
                        fetched_on=date(2025, 10, 27))


def test_fetch_sends_zone_and_days(httpserver: HTTPServer) -> None:
    body = (FIXTURES / "price_BE_2025-10-26_dst100.json").read_bytes()
    httpserver.expect_request("/price", query_string={
        "bzn": "BE", "start": "2025-10-26", "end": "2025-10-26"}).respond_with_data(body)
    with requests.Session() as session:
        [got] = ec.fetch_prices(session, "BE", date(2025, 10, 26), date(2025, 10, 26),
                                base_url=httpserver.url_for("").rstrip("/"), policy=FAST)
    assert got.params == {"bzn": "BE", "start": "2025-10-26", "end": "2025-10-26"}
    assert ec.parse_prices(got.data, url=got.url, bzn=got.params["bzn"], vintage="2025-10",
                           fetched_on=got.fetched_at.date()).height == 100
