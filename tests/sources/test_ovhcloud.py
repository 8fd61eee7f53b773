"""OVHcloud public cloud catalog: 1e-8 integer prices, hourly vs monthly plans, filters."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl
import pytest
import requests
from pytest_httpserver import HTTPServer

from schemas.market import GPU_OFFERS
from sources.errors import ParseError
from sources.http import FetchPolicy
from sources.market import ovhcloud

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "ovhcloud" / "catalog_public_cloud_FR_excerpt.json"
URL = "https://eu.api.ovh.com/1.0/order/catalog/public/cloud?ovhSubsidiary=FR"
REGIONS = pl.DataFrame({"provider_id": ["ovhcloud", "ovhcloud", "scaleway"],
                        "region": ["GRA", "SBG", "fr-par-2"], "zone": ["FR", "FR", "FR"]})
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)


def parse(data: bytes, notes: list[str] | None = None) -> pl.DataFrame:
    frame = ovhcloud.parse_catalog(data, url=URL, vintage="2026-11",
                                   fetched_on=date(2026, 11, 29), regions=REGIONS, notes=notes)
    return GPU_OFFERS.validate(frame, URL)


def test_catalog_excerpt() -> None:
    notes: list[str] = []
    frame = parse(FIXTURE.read_bytes(), notes)
    gra = frame.filter(pl.col("region") == "GRA").sort("offer_id", "pricing_model")
    assert gra.select("offer_id", "pricing_model", "gpu", "gpu_count").rows() == [
        ("h100-380", "on_demand", "H100-PCIe-80GB", 1),
        ("h100-380", "reserved", "H100-PCIe-80GB", 1),
        ("h100-760", "on_demand", "H100-PCIe-80GB", 2),
        ("l4-90", "on_demand", "L4-24GB", 1),
    ]
    hourly = gra.row(0, named=True)
    # 280000000 x 1e-8 = 2.80 EUR/h
    assert hourly["price_eur_per_hour"] == pytest.approx(2.80)
    monthly = gra.row(1, named=True)
    # 153300000000 x 1e-8 = 1533.00 EUR/month; / 730 h = 2.10 EUR/h
    assert monthly["price_eur_per_hour"] == pytest.approx(2.10)
    assert monthly["note"].startswith("monthly plan 1533.00/month")
    # 560000000 x 1e-8 = 5.60 EUR/h for 2 GPUs = 2.80 EUR per GPU-hour
    assert gra.row(2, named=True)["price_eur_per_gpu_hour"] == pytest.approx(2.80)
    # the same 4 offers are placed in both ovhcloud regions of the map
    assert frame.height == 8
    # the AI Deploy addon (brick ai-serving, per minute) and the CPU flavour are not offers;
    # Windows and an unmapped GPU are skipped with a note each
    assert notes == [
        "win-l4-90.consumption: Windows licence included; skipped (Linux prices only)",
        "skipped 2 offer(s) with unmapped GPU model Quadro-RTX5000 16 (rtx5000-28)",
    ]


def body_with(change) -> bytes:  # type: ignore[no-untyped-def]
    body = json.loads(FIXTURE.read_bytes())
    change(body)
    return json.dumps(body).encode()


def test_price_scale_drift_is_caught() -> None:
    def rescale(body):  # type: ignore[no-untyped-def]
        body["addons"][0]["pricings"][0]["price"] = 280  # 2.80 written in cents
    with pytest.raises(ParseError, match="disagrees with formattedPrice"):
        parse(body_with(rescale))


def test_renamed_brick_field_is_caught() -> None:
    def rename(body):  # type: ignore[no-untyped-def]
        for addon in body["addons"]:
            addon["blobs"]["commercial"]["family"] = addon["blobs"]["commercial"].pop("brick")
    with pytest.raises(ParseError, match="no GPU addons"):
        parse(body_with(rename))


def test_error_body_with_http_200_is_caught() -> None:
    with pytest.raises(ParseError, match="key 'locale'"):
        parse(b'{"class": "Client::BadRequest", "message": "Invalid subsidiary"}')


def test_fetch_through_http_with_retry(httpserver: HTTPServer) -> None:
    path = "/1.0/order/catalog/public/cloud"
    httpserver.expect_ordered_request(path).respond_with_data("", status=503)
    httpserver.expect_ordered_request(path, query_string={"ovhSubsidiary": "FR"}
                                      ).respond_with_data(FIXTURE.read_bytes())
    with requests.Session() as session:
        [got] = ovhcloud.fetch_catalog(session, base_url=httpserver.url_for("").rstrip("/"),
                                       policy=FAST)
    assert parse(got.data).height == 8
