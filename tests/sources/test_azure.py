"""Azure Retail Prices: the real eastus2 sample, USD -> EUR at the ECB rate of the fetch date,
NextPageLink paging through a local server."""

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
from sources.market import azure

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (ROOT / ".." / "shared" / "samples" / "azure_retail_prices" /
          "macrogauge_azure_gpu_prices_eastus2.json")
FIXTURES = ROOT / "tests" / "fixtures" / "azure"
URL = "https://prices.azure.com/api/retail/prices"
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)
REGIONS = pl.DataFrame({"provider_id": ["azure", "azure"], "region": ["eastus2", "francecentral"],
                        "zone": ["US", "FR"]})
# two USD rates around the sample's fetch day (2026-10-07): the earlier one must be used
FX = pl.DataFrame({"currency": ["USD", "USD"], "rate_date": [date(2026, 10, 6), date(2026, 10, 8)],
                   "units_per_eur": [1.15, 1.20]})


def parse(data: bytes, notes: list[str] | None = None, fx: pl.DataFrame = FX) -> pl.DataFrame:
    frame = azure.parse_prices(data, url=URL, vintage="2026-10", fetched_on=date(2026, 10, 7),
                               regions=REGIONS, fx=fx, notes=notes)
    return GPU_OFFERS.validate(frame, URL)


def test_real_eastus2_sample_converts_with_the_rate_of_its_date() -> None:
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} absent")
    notes: list[str] = []
    frame = parse(SAMPLE.read_bytes(), notes)
    h100 = frame.filter(pl.col("offer_id") == "Standard_ND96isr_H100_v5").row(0, named=True)
    # Linux pay-as-you-go $98.32/h; ECB rate of 2026-10-06 (latest on or before 10-07):
    # 98.32 / 1.15 = 85.4957 EUR/h; / 8 GPUs = 10.6870 EUR per GPU-hour
    assert h100["price_original_per_hour"] == 98.32 and h100["currency"] == "USD"
    assert (h100["fx_date"], h100["fx_units_per_eur"]) == (date(2026, 10, 6), 1.15)
    assert h100["price_eur_per_hour"] == pytest.approx(85.4957, abs=1e-4)
    assert h100["price_eur_per_gpu_hour"] == pytest.approx(10.6870, abs=1e-4)
    # 16 meters: 8 Windows, 5 Linux Spot/Low Priority, 3 Linux pay-as-you-go (H100, H200,
    # GB200); GB200 has no hardware id -> 2 offers
    assert sorted(frame["offer_id"]) == ["Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5"]
    assert notes == [
        f"{URL}: dropped 8 Windows and 5 Spot/Low Priority meter(s)",
        "skipped 1 offer(s) with unmapped GPU model Standard_ND128isr_NDR_GB200_v6 "
        "(Standard_ND128isr_NDR_GB200_v6)",
    ]


def test_no_usd_rate_is_a_clear_error() -> None:
    body = (FIXTURES / "retail_prices_francecentral_page1.json").read_bytes()
    with pytest.raises(ParseError, match=r"no ECB rate for \['USD'\]: ingest the ecb source"):
        parse(body, fx=FX.head(0))
    with pytest.raises(ParseError, match="no ECB USD rate on or before 2026-10-07"):
        parse(body, fx=FX.filter(pl.col("rate_date") > date(2026, 10, 7)))


def test_unit_drift_is_caught() -> None:
    body = json.loads((FIXTURES / "retail_prices_francecentral_page1.json").read_bytes())
    body["Items"][0]["unitOfMeasure"] = "1/Month"
    with pytest.raises(ParseError, match="expected '1 Hour', got '1/Month'"):
        parse(json.dumps(body).encode())


def test_paging_follows_next_page_link(httpserver: HTTPServer) -> None:
    page1 = json.loads((FIXTURES / "retail_prices_francecentral_page1.json").read_bytes())
    page1["NextPageLink"] = httpserver.url_for("/api/retail/prices") + "?$skip=100"
    httpserver.expect_ordered_request("/api/retail/prices", query_string={
        "api-version": azure.API_VERSION, "currencyCode": "USD",
        "$filter": azure.price_filter("francecentral", ("Standard_ND96isr_H100_v5",))},
    ).respond_with_data(json.dumps(page1))
    httpserver.expect_ordered_request("/api/retail/prices", query_string="$skip=100"
                                      ).respond_with_data(
        (FIXTURES / "retail_prices_francecentral_page2.json").read_bytes())
    with requests.Session() as session:
        pages = list(azure.fetch_prices(session, "francecentral",
                                        skus=("Standard_ND96isr_H100_v5",),
                                        base_url=httpserver.url_for("").rstrip("/"),
                                        policy=FAST))
    assert len(pages) == 2
    notes: list[str] = []
    first, second = (parse(p.data, notes) for p in pages)
    # page 1: Linux $110 / 1.15 = 95.652 EUR/h (Windows and Spot dropped)
    assert first["price_eur_per_hour"].to_list() == [pytest.approx(95.652, abs=1e-3)]
    # page 2: two NC40ads meters, the later effectiveStartDate ($7.35) wins
    assert second["price_original_per_hour"].to_list() == [7.35]
    assert second["gpu"].to_list() == ["H100-NVL-94GB"]


def test_next_page_link_to_another_host_is_refused(httpserver: HTTPServer) -> None:
    page1 = (FIXTURES / "retail_prices_francecentral_page1.json").read_bytes()
    httpserver.expect_request("/api/retail/prices").respond_with_data(page1)
    with requests.Session() as session, pytest.raises(ParseError, match="another host"):
        list(azure.fetch_prices(session, "francecentral",
                                base_url=httpserver.url_for("").rstrip("/"), policy=FAST))


def _twice(second_price: float) -> bytes:
    """The page-2 fixture with its 2025-06-01 NC40ads meter (7.35 $/h) given a second time at
    `second_price`: two meters for one SKU, region and date."""
    body = json.loads((FIXTURES / "retail_prices_francecentral_page2.json").read_bytes())
    first = body["Items"][0]
    assert (first["effectiveStartDate"], first["retailPrice"]) == ("2025-06-01T00:00:00Z", 7.35)
    body["Items"].append(first | {"retailPrice": second_price, "meterId": "another"})
    return json.dumps(body).encode()


def test_two_meters_for_one_date_priced_differently_are_refused() -> None:
    with pytest.raises(ParseError) as caught:
        parse(_twice(9.99))
    assert caught.value.where == ("Items[armSkuName=Standard_NC40ads_H100_v5, "
                                  "armRegionName=francecentral]")
    assert "2 meters from 2025-06-01T00:00:00Z priced [7.35, 9.99]" in caught.value.reason


def test_two_identical_meters_for_one_date_are_dropped_and_counted() -> None:
    notes: list[str] = []
    frame = parse(_twice(7.35), notes)
    once = parse((FIXTURES / "retail_prices_francecentral_page2.json").read_bytes())
    assert frame.equals(once)
    assert f"{URL}: 1 identical duplicate meter(s) dropped" in notes
