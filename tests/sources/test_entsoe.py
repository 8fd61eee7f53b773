"""ENTSO-E A44: A03 forward fill, the no-data acknowledgement, the token kept out of sight."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest
import requests
from pytest_httpserver import HTTPServer

from schemas.market import ELECTRICITY_PRICES
from sources.errors import ParseError
from sources.http import FetchError, FetchPolicy
from sources.job import Context, Raw
from sources.market import entsoe

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "entsoe"
URL = "https://web-api.tp.entsoe.eu/api?documentType=A44&securityToken=***"
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)


def parse(data: bytes, notes: list[str] | None = None) -> pl.DataFrame:
    frame = entsoe.parse_prices(data, url=URL, zone="FR", vintage="2026-11",
                                fetched_on=date(2026, 11, 29), notes=notes)
    return ELECTRICITY_PRICES.validate(frame, URL)


def test_a03_positions_are_forward_filled() -> None:
    notes: list[str] = []
    frame = parse((FIXTURES / "A44_FR_2026-11-26_A03_15min.xml").read_bytes(), notes)
    # 2026-11-25T23:00Z .. 2026-11-26T23:00Z at PT15M = 96 slots
    assert frame.height == 96 and set(frame["resolution"]) == {"15min"}
    assert frame["interval_start_utc"][0] == datetime(2026, 11, 25, 23, tzinfo=UTC)
    prices = frame["price_eur_per_mwh"].to_list()
    # positions 2-4 repeat position 1 (55); 5 = 60, 6 = 61.5, 7 = 40 + 7/10 = 40.7
    assert prices[:7] == [55.0, 55.0, 55.0, 55.0, 60.0, 61.5, 40.7]
    # positions 50..96 repeat position 49: 40 + 49/10 = 44.9
    assert prices[49:] == [44.9] * 47
    # 46 points published (1, 5, 6, 7..49), 96 - 46 = 50 filled
    assert notes == ["FR: 50 A03 position(s) forward-filled, 0 gap(s) left"]
    assert frame["licence"][0].startswith("RESTRICTED")


def test_no_data_acknowledgement_with_http_200_is_a_clear_error() -> None:
    with pytest.raises(ParseError, match="No matching data found") as caught:
        parse((FIXTURES / "acknowledgement_no_data.xml").read_bytes())
    assert caught.value.where == "Acknowledgement_MarketDocument"


def test_unit_drift_is_caught() -> None:
    body = (FIXTURES / "A44_FR_2026-11-26_A03_15min.xml").read_bytes().replace(
        b"<price_Measure_Unit.name>MWH", b"<price_Measure_Unit.name>KWH")
    with pytest.raises(ParseError, match="expected EUR per MWH, got EUR per KWH"):
        parse(body)


def test_token_is_sent_but_never_returned(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/api", query_string={
        "securityToken": "entsoe-secret", "documentType": "A44",
        "in_Domain": "10YFR-RTE------C", "out_Domain": "10YFR-RTE------C",
        "periodStart": "202611252300", "periodEnd": "202611262300",
        "contract_MarketAgreement.type": "A01"}).respond_with_data(
        (FIXTURES / "A44_FR_2026-11-26_A03_15min.xml").read_bytes())
    with requests.Session() as session:
        [got] = entsoe.fetch_prices(session, "FR", datetime(2026, 11, 25, 23, tzinfo=UTC),
                                    datetime(2026, 11, 26, 23, tzinfo=UTC), "entsoe-secret",
                                    base_url=httpserver.url_for("").rstrip("/"), policy=FAST)
    assert "entsoe-secret" not in got.url and got.params["securityToken"] == "***"


def test_401_without_a_valid_token(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/api").respond_with_data(
        "<html><body>Unauthorized token entsoe-secret</body></html>", status=401)
    with requests.Session() as session, pytest.raises(FetchError) as caught:
        entsoe.fetch_prices(session, "FR", datetime(2026, 11, 25, 23, tzinfo=UTC),
                            datetime(2026, 11, 26, 23, tzinfo=UTC), "entsoe-secret",
                            base_url=httpserver.url_for("").rstrip("/"), policy=FAST)
    assert "HTTP 401" in str(caught.value) and "entsoe-secret" not in str(caught.value)


def test_whole_market_days_around_the_month_are_kept_to_it_not_refused() -> None:
    """A44 answers hold whole market days overlapping the window asked (found in review: the
    month check refused every complete-month pull). The 31 October market day (from
    2026-10-30 23:00 UTC) and the 1 December one (to 2026-12-01 22:45 UTC) under 2026-11:
    nothing of October, November's last hour only."""
    body = (FIXTURES / "A44_FR_2026-11-26_A03_15min.xml").read_bytes()
    ctx = Context(vintage="2026-11", today=date(2026, 12, 2), regions=pl.DataFrame())
    params = {"in_Domain": entsoe.EIC["FR"]}
    for day_before, day, kept in (("2026-10-30", "2026-10-31", 0), ("2026-11-30", "2026-12-01", 4)):
        moved = body.replace(b"2026-11-25T23:00Z", f"{day_before}T23:00Z".encode()).replace(
            b"2026-11-26T23:00Z", f"{day}T23:00Z".encode())
        [(_, frame)] = entsoe.parse(Raw("0" * 64, "https://x/api", params, moved,
                                        datetime(2026, 12, 2, tzinfo=UTC)), ctx, [])
        assert frame.height == kept  # 23:00, 23:15, 23:30, 23:45 of 30 November
