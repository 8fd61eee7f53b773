"""Scaleway instance products: the real fr-par-2 page, our two-page nl-ams-1 fixture, paging."""

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
from sources.market import scaleway

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (ROOT / ".." / "shared" / "samples" / "scaleway" /
          "gpu-index_instance_v1_fr-par-2_products_servers_page1.json")
FIXTURES = ROOT / "tests" / "fixtures" / "scaleway"
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)
REGIONS = pl.DataFrame({"provider_id": ["scaleway"] * 2, "region": ["fr-par-2", "nl-ams-1"],
                        "zone": ["FR", "NL"]})
PAR2 = "https://api.scaleway.com/instance/v1/zones/fr-par-2/products/servers?page=1"
AMS1 = "https://api.scaleway.com/instance/v1/zones/nl-ams-1/products/servers?page=1"


def parse(data: bytes, url: str, notes: list[str] | None = None) -> pl.DataFrame:
    frame = scaleway.parse_servers(data, url=url, vintage="2026-08",
                                   fetched_on=date(2026, 8, 22), regions=REGIONS, notes=notes)
    return GPU_OFFERS.validate(frame, url)


def test_real_fr_par_2_page() -> None:
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} absent")
    notes: list[str] = []
    frame = parse(SAMPLE.read_bytes(), PAR2, notes)
    # 18 server types, 2 of them CPU-only -> 16 GPU offers
    assert frame.height == 16
    h100 = frame.filter(pl.col("offer_id") == "H100-1-80G").row(0, named=True)
    assert (h100["gpu"], h100["gpu_count"], h100["zone"], h100["region"]) == (
        "H100-PCIe-80GB", 1, "FR", "fr-par-2")
    # EUR price passes through: 2.8665 EUR/h, no FX
    assert h100["price_eur_per_hour"] == 2.8665 and h100["fx_date"] is None
    sxm8 = frame.filter(pl.col("offer_id") == "H100-SXM-8-80G").row(0, named=True)
    # 25.3308 EUR/h for 8 GPUs = 3.16635 EUR per GPU-hour
    assert sxm8["price_eur_per_gpu_hour"] == pytest.approx(3.16635)
    b300 = frame.filter(pl.col("offer_id") == "B300-SXM-8-288G").row(0, named=True)
    # 60 EUR/h for 8 GPUs = 7.50 EUR per GPU-hour
    assert (b300["gpu"], b300["price_eur_per_gpu_hour"]) == ("B300-SXM-288GB", 7.5)
    assert notes == []


def test_region_missing_from_map_is_skipped_and_reported() -> None:
    notes: list[str] = []
    url = AMS1.replace("nl-ams-1", "pl-waw-3")
    frame = parse((FIXTURES / "servers_nl-ams-1_page1.json").read_bytes(), url, notes)
    assert frame.height == 0
    assert notes == ["skipped 2 offer(s) with a region missing from regions.csv pl-waw-3 "
                     "(H100-1-80G, L4-1-24G)"]


@pytest.mark.parametrize("body, where", [
    (b'{"servers": {"H100-1-80G": {"gpu": 1, "hourly_price": "2.8"}}}', "servers.H100-1-80G"),
    (b'{"message": "rate limited", "type": "too_many_requests"}', "key 'servers'"),
    (b'{"servers": [', "(body)"),
])
def test_faults(body: bytes, where: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(body, AMS1)
    assert caught.value.where.startswith(where)


def test_paging_follows_total_count(httpserver: HTTPServer, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(scaleway, "PER_PAGE", 3)  # pages of 3 server types
    path = "/instance/v1/zones/nl-ams-1/products/servers"
    for page in (1, 2):
        body = (FIXTURES / f"servers_nl-ams-1_page{page}.json").read_bytes()
        httpserver.expect_ordered_request(path, query_string={"per_page": "3", "page": str(page)}
                                          ).respond_with_data(body,
                                                              headers={"X-Total-Count": "5"})
    with requests.Session() as session:
        pages = list(scaleway.fetch_servers(session, "nl-ams-1",
                                            base_url=httpserver.url_for("").rstrip("/"),
                                            policy=FAST))
    assert len(pages) == 2  # 3 + 2 = 5 = X-Total-Count
    notes: list[str] = []
    frames = [parse(p.data, p.url, notes) for p in pages]
    # page 1: H100 + L4 (the POP2 CPU type is not an offer); page 2: L40S (+ P100 skipped)
    assert [f["offer_id"].to_list() for f in frames] == [["H100-1-80G", "L4-1-24G"],
                                                         ["L40S-1-48G"]]
    assert notes == ["skipped 1 offer(s) with unmapped GPU model P100 (RENDER-S)"]


def test_mig_profile_is_reported() -> None:
    body = json.loads((FIXTURES / "servers_nl-ams-1_page1.json").read_bytes())
    body["servers"]["H100-1-80G"]["mig_profile"] = "1g.10gb"
    notes: list[str] = []
    frame = parse(json.dumps(body).encode(), AMS1, notes)
    assert frame["offer_id"].to_list() == ["L4-1-24G"]
    assert notes == ["H100-1-80G: MIG profile '1g.10gb' (a GPU slice) skipped"]
