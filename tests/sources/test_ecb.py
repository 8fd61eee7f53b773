"""ECB reference rates: real sample files and our 90-day excerpt, via a local HTTP server."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest
import requests
import samples
from pytest_httpserver import HTTPServer

from schemas.market import FX_RATES
from sources.errors import ParseError
from sources.http import FetchPolicy
from sources.job import Context, Raw
from sources.market import ecb

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "ecb"
URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)


def sample(name: str) -> bytes:
    return samples.sample(f"ecb/{name}").read_bytes()


def rate(frame, currency: str, day: date) -> float:  # type: ignore[no-untyped-def]
    row = frame.filter((frame["currency"] == currency) & (frame["rate_date"] == day))
    assert row.height == 1
    return float(row["units_per_eur"][0])


def test_daily_xml_sample() -> None:
    frame = ecb.parse_xml(sample("eurofxref-daily_2022-07-08_xpt-nl.xml"), url=URL)
    FX_RATES.validate(frame, "sample")
    assert frame.height == 31  # 31 <Cube currency> lines in the file
    assert rate(frame, "USD", date(2022, 7, 8)) == 1.0163  # as published, USD per EUR
    assert rate(frame, "GBP", date(2022, 7, 8)) == 0.84585


def test_hist_csv_sample_skips_na_and_trailing_comma() -> None:
    frame = ecb.parse_hist_csv(sample("eurofxref-hist_head_h0tbird.csv"), url=URL)
    FX_RATES.validate(frame, "sample")
    # 7 dates x 41 currency columns, of which 11 are N/A every day (CYP EEK LTL LVL MTL ROL
    # SIT SKK HRK RUB TRL) -> 7 x 30 = 210 rates; the empty last column is not a currency
    assert frame.height == 210
    assert set(frame["currency"]) >= {"USD", "JPY", "CHF"} and "CYP" not in set(frame["currency"])
    assert rate(frame, "USD", date(2025, 5, 9)) == 1.1252


def test_xml_keeps_value_of_trailing_zero_rates() -> None:
    frame = ecb.parse_xml((FIXTURES / "eurofxref-hist-90d_excerpt.xml").read_bytes(), url=URL)
    # rate='0.87650' and rate='1.1580' in the XML are the floats 0.8765 and 1.158
    assert rate(frame, "GBP", date(2026, 11, 27)) == 0.8765
    assert rate(frame, "USD", date(2026, 11, 27)) == 1.158
    assert frame.height == 16  # 4 days x 4 currencies


@pytest.mark.parametrize("body, where", [
    (b"<gesmes:Envelope", "XML"),
    (b"<html><body>Service unavailable</body></html>", "Cube[@time]"),
])
def test_broken_xml_is_a_parse_error(body: bytes, where: str) -> None:
    with pytest.raises(ParseError) as caught:
        ecb.parse_xml(body, url="https://ecb/x.xml")
    assert caught.value.source == "ecb" and caught.value.where.startswith(where)


def test_fetch_recent_through_http(httpserver: HTTPServer) -> None:
    body = (FIXTURES / "eurofxref-hist-90d_excerpt.xml").read_bytes()
    httpserver.expect_ordered_request("/stats/eurofxref/eurofxref-hist-90d.xml"
                                      ).respond_with_data("", status=502)
    httpserver.expect_ordered_request("/stats/eurofxref/eurofxref-hist-90d.xml"
                                      ).respond_with_data(body, content_type="text/xml")
    with requests.Session() as session:
        [got] = ecb.fetch_recent(session, base_url=httpserver.url_for("/stats/eurofxref"),
                                 policy=FAST)
    assert got.data == body and got.source == "ecb"
    assert ecb.parse_xml(got.data, url=got.url).height == 16


def zipped(csv: bytes, *, repeat: int = 1) -> bytes:
    """eurofxref-hist.csv inside a zip, its body after the header written `repeat` times."""
    header, body = csv.split(b"\n", 1)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive, \
            archive.open("eurofxref-hist.csv", "w") as member:
        member.write(header + b"\n")
        for _ in range(repeat):
            member.write(body)
    return out.getvalue()


HIST = (b"Date,USD,JPY,\n2026-11-27,1.1590,181.40,\n2026-11-26,1.1580,N/A,\n")


def test_history_zip_through_http_and_a_zip_bomb_stops_at_the_cap(
        httpserver: HTTPServer) -> None:
    # the real archive's shape: one CSV; 3 rates (JPY's N/A skipped)
    httpserver.expect_ordered_request("/eurofxref-hist.zip").respond_with_data(zipped(HIST))
    # the same rows 2.2 million times: ~88 MB of CSV in a zip of a few hundred KB, past the
    # 64 MiB (67,108,864-byte) cap, counted while inflating
    bomb = zipped(HIST, repeat=2_200_000)
    assert len(bomb) < 1_000_000
    httpserver.expect_ordered_request("/eurofxref-hist.zip").respond_with_data(bomb)
    ctx = Context(vintage="2026-11", today=date(2026, 11, 29), regions=pl.DataFrame())
    with requests.Session() as session:
        [good] = ecb.fetch_history(session, base_url=httpserver.url_for(""), policy=FAST)
        [bad] = ecb.fetch_history(session, base_url=httpserver.url_for(""), policy=FAST)
    [(table, rows)] = ecb.parse(Raw("0" * 64, good.url, {}, good.data, datetime.now(UTC)), ctx, [])
    assert table is FX_RATES and rows.height == 3
    with pytest.raises(ParseError, match="inflates past the cap of 67108864 bytes") as caught:
        ecb.parse(Raw("0" * 64, bad.url, {}, bad.data, datetime.now(UTC)), ctx, [])
    assert caught.value.where == "(zip) eurofxref-hist.csv"


def test_a_zip_without_a_csv_or_not_a_zip_is_a_parse_error() -> None:
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("readme.txt", "no rates")
    with pytest.raises(ParseError, match=r"no \.csv file inside the archive"):
        ecb.parse_hist_csv(empty.getvalue(), url="https://ecb/eurofxref-hist.zip")
    with pytest.raises(ParseError, match="not a readable zip"):
        ecb.parse_hist_csv(b"PK\x03\x04broken", url="https://ecb/eurofxref-hist.zip")


def test_a_damaged_deflate_stream_is_a_parse_error_not_a_crash() -> None:
    # zlib.error escaped unzip_first and ended the whole ingest with exit 3 (found in review)
    good = zipped(HIST * 50)
    damaged = bytearray(good)
    start = good.index(b"eurofxref-hist.csv") + len("eurofxref-hist.csv")
    damaged[start:start + 40] = b"\xff" * 40  # the member's deflate data
    with pytest.raises(ParseError, match="not a readable zip"):
        ecb.parse_hist_csv(bytes(damaged), url="https://ecb/eurofxref-hist.zip")
