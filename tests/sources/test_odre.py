"""ODRE éCO2mix taux_co2: the real record excerpt, paging, direct basis."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import requests
from pytest_httpserver import HTTPServer

from schemas.market import GRID_INTENSITY
from sources.errors import ParseError
from sources.http import FetchPolicy
from sources.market import odre

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (ROOT / ".." / "shared" / "samples" / "odre_eco2mix" /
          "eco2mix-national-tr_record_excerpt.json")
FIXTURES = ROOT / "tests" / "fixtures" / "odre"
URL = "https://odre.opendatasoft.com/api/explore/v2.1/catalog/datasets/eco2mix-national-tr/records"
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)


def test_real_record_is_direct_emissions() -> None:
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} absent")
    frame = GRID_INTENSITY.validate(odre.parse_records(
        SAMPLE.read_bytes(), url=URL, vintage="2026-06", fetched_on=date(2026, 6, 14)), URL)
    assert frame.select("zone", "interval_start_utc", "intensity_gco2e_per_kwh",
                        "emission_factor_basis").rows() == [
        ("FR", datetime(2026, 6, 14, 19, tzinfo=UTC), 15.0, "direct")]


def test_renamed_field_is_caught() -> None:
    body = (FIXTURES / "records_page1.json").read_bytes().replace(b'"taux_co2"', b'"co2_rate"')
    with pytest.raises(ParseError, match=r"results\[0\]\.taux_co2"):
        odre.parse_records(body, url=URL, vintage="2026-11", fetched_on=date(2026, 11, 29))


def test_paging_until_total_count(httpserver: HTTPServer) -> None:
    path = "/api/explore/v2.1/catalog/datasets/eco2mix-national-tr/records"
    for offset, name in ((0, "records_page1.json"), (100, "records_page2.json")):
        httpserver.expect_ordered_request(path, query_string={
            "select": "date_heure,taux_co2", "order_by": "date_heure", "limit": "100",
            "offset": str(offset), "timezone": "UTC",
            "where": "date_heure >= '2026-11-01T00:00:00Z' and date_heure < "
                     "'2026-11-03T00:00:00Z' and taux_co2 is not null"},
        ).respond_with_data((FIXTURES / name).read_bytes())
    with requests.Session() as session:
        pages = list(odre.fetch_records(session, date(2026, 11, 1), date(2026, 11, 3),
                                        base_url=httpserver.url_for("").rstrip("/"),
                                        policy=FAST))
    assert len(pages) == 2  # total_count 150 = 100 + 50
    notes: list[str] = []
    frames = [odre.parse_records(p.data, url=p.url, vintage="2026-11",
                                 fetched_on=date(2026, 11, 29), notes=notes) for p in pages]
    # 100 + 50 records, the last without taux_co2 -> 149 rows
    assert sum(f.height for f in frames) == 149
    assert len(notes) == 1 and notes[0].endswith("1 record(s) without taux_co2 skipped")
