"""AWS meteredUnitMaps: the real us-east-1 sample and our Stockholm excerpt."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest
import requests
from pytest_httpserver import HTTPServer

from schemas.market import GPU_OFFERS
from sources.errors import ParseError
from sources.http import FetchPolicy
from sources.market import aws

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (ROOT / ".." / "shared" / "samples" / "aws_pricing" /
          "macrogauge_aws_meteredUnitMaps_useast1_gpu.json")
FIXTURE = ROOT / "tests" / "fixtures" / "aws" / "meteredUnitMaps_eu-stockholm_linux.json"
URL = "https://b0.p.awsstatic.com/pricing/2.0/x/index.json"
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)
REGIONS = pl.DataFrame({"provider_id": ["aws", "aws"], "region": ["us-east-1", "eu-north-1"],
                        "zone": ["US", "SE"]})
FX = pl.DataFrame({"currency": ["USD"], "rate_date": [date(2026, 10, 6)],
                   "units_per_eur": [1.16]})


def parse(data: bytes, notes: list[str] | None = None) -> pl.DataFrame:
    frame = aws.parse_prices(data, url=URL, vintage="2026-10", fetched_on=date(2026, 10, 7),
                             regions=REGIONS, fx=FX, notes=notes)
    return GPU_OFFERS.validate(frame, URL)


def test_real_us_east_sample() -> None:
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} absent")
    notes: list[str] = []
    frame = parse(SAMPLE.read_bytes(), notes)
    # 8 products, one of them a c6a (not a GPU instance) -> 7 offers, all mapped
    assert frame.height == 7 and notes == []
    p5 = frame.filter(pl.col("offer_id") == "p5.48xlarge").row(0, named=True)
    # $55.04/h / 1.16 USD per EUR = 47.4483 EUR/h; / 8 H100 = 5.9310 EUR per GPU-hour
    assert p5["price_eur_per_hour"] == pytest.approx(47.4483, abs=1e-4)
    assert p5["price_eur_per_gpu_hour"] == pytest.approx(5.9310, abs=1e-4)
    assert (p5["gpu"], p5["fx_date"]) == ("H100-SXM-80GB", date(2026, 10, 6))


def test_stockholm_fixture_reports_unmapped_gpu_instances() -> None:
    notes: list[str] = []
    frame = parse(FIXTURE.read_bytes(), notes)
    assert sorted(frame["offer_id"]) == ["g6e.xlarge", "p5.48xlarge"]
    assert set(frame["zone"]) == {"SE"}
    assert notes == ["skipped 1 offer(s) with unmapped GPU model g5.xlarge (g5.xlarge)"]


def test_currency_drift_is_caught() -> None:
    body = FIXTURE.read_bytes().replace(b'"currencyCode": "USD"', b'"currencyCode": "EUR"')
    with pytest.raises(ParseError, match="expected USD, got 'EUR'"):
        parse(body)


def test_fetch_encodes_the_location(httpserver: HTTPServer) -> None:
    path = ("/pricing/2.0/meteredUnitMaps/ec2/USD/current/ec2-ondemand-without-sec-sel/"
            "EU (Stockholm)/Linux/index.json")
    httpserver.expect_ordered_request(path).respond_with_data("", status=429,
                                                              headers={"Retry-After": "1"})
    httpserver.expect_ordered_request(path).respond_with_data(FIXTURE.read_bytes())
    with requests.Session() as session:
        [got] = aws.fetch_prices(session, "EU (Stockholm)",
                                 base_url=httpserver.url_for("").rstrip("/"), policy=FAST)
    assert "EU%20(Stockholm)" in got.url
    assert parse(got.data).height == 2
