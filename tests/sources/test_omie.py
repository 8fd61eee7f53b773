"""OMIE marginalpdbc: the real first line, a 15-min DST day (100 periods), an hourly DST day."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest
import requests
from pytest_httpserver import HTTPServer

from schemas.market import ELECTRICITY_PRICES
from sources.errors import ParseError
from sources.http import FetchPolicy
from sources.market import omie

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = (ROOT / ".." / "shared" / "samples" / "omie" /
          "marginalpdbc_20180101_first_line_excerpt.1")
FIXTURES = ROOT / "tests" / "fixtures" / "omie"
URL = "https://www.omie.es/es/file-download?parents=marginalpdbc&filename=x"
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)


def parse(data: bytes, notes: list[str] | None = None, partial_ok: bool = False
          ) -> pl.DataFrame:
    frame = omie.parse_marginal(data, url=URL, vintage="2025-10", fetched_on=date(2025, 10, 27),
                                notes=notes, partial_ok=partial_ok)
    return ELECTRICITY_PRICES.validate(frame, URL)


def test_real_first_line_column_5_is_portugal() -> None:
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} absent")
    notes: list[str] = []
    frame = parse(SAMPLE.read_bytes(), notes, partial_ok=True)  # a one-line excerpt
    # "2018;01;01;1;28.1;6.74;": PT 28.1, ES 6.74; period 1 = 00:00 Madrid (CET) = 23:00 UTC
    assert frame.select("zone", "interval_start_utc", "price_eur_per_mwh").rows() == [
        ("ES", datetime(2017, 12, 31, 23, tzinfo=UTC), 6.74),
        ("PT", datetime(2017, 12, 31, 23, tzinfo=UTC), 28.1)]
    assert len(notes) == 1 and notes[0].startswith("2018-01-01: 1 of the day's 24 hours")


def test_autumn_dst_day_in_quarter_hours() -> None:
    frame = parse((FIXTURES / "marginalpdbc_20251026.1").read_bytes())
    es = frame.filter(pl.col("zone") == "ES")
    assert es.height == 100 and set(es["resolution"]) == {"15min"}
    # 00:00 CEST = 2025-10-25 22:00 UTC; period 100 starts 99 x 15 min later = 22:45 UTC
    assert es["interval_start_utc"][0] == datetime(2025, 10, 25, 22, tzinfo=UTC)
    assert es["interval_start_utc"][-1] == datetime(2025, 10, 26, 22, 45, tzinfo=UTC)
    # prices cycle 50,51,52,53 (p % 4 with p = 1..100 gives 1,2,3,0): 25 of each -> mean 51.5
    assert es["price_eur_per_mwh"].mean() == pytest.approx(51.5)


def test_spring_dst_day_hourly_and_decimal_comma() -> None:
    frame = parse((FIXTURES / "marginalpdbc_20250330.1").read_bytes())
    pt = frame.filter(pl.col("zone") == "PT")
    es = frame.filter(pl.col("zone") == "ES")
    assert pt.height == 23 and set(pt["resolution"]) == {"hour"}
    # 00:00 CET = 2025-03-29 23:00 UTC; period 23 starts 22 h later = 2025-03-30 21:00 UTC
    assert pt["interval_start_utc"][-1] == datetime(2025, 3, 30, 21, tzinfo=UTC)
    # "1,25" (decimal comma) in the ES column reads 1.25; PT "1.5"
    assert (es["price_eur_per_mwh"][0], pt["price_eur_per_mwh"][0]) == (1.25, 1.5)


@pytest.mark.parametrize("body, where", [
    (b"<html>Not found</html>", "line 1"),
    (b"MARGINALPDBC;\n2025;10;26;1;40.0;\n", "line 2"),
    (b"MARGINALPDBC;\n2025;10;26;1;abc;50.0;\n", "line 2"),
    (b"MARGINALPDBC;\n2025;10;26;60;40.0;50.0;\n", "day 2025-10-26"),
    (b"MARGINALPDBC;\n2025;10;26;1;40.0;5", "byte 33"),  # cut mid-line: 14 + 19 bytes
])
def test_faults(body: bytes, where: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(body)
    assert caught.value.where == where


def test_fetch_follows_redirect(httpserver: HTTPServer) -> None:
    body = (FIXTURES / "marginalpdbc_20251026.1").read_bytes()
    httpserver.expect_request("/es/file-download", query_string={
        "parents": "marginalpdbc", "filename": "marginalpdbc_20251026.1"}).respond_with_data(
        "", status=302, headers={"Location": httpserver.url_for("/files/marginalpdbc_20251026.1")})
    httpserver.expect_request("/files/marginalpdbc_20251026.1").respond_with_data(body)
    with requests.Session() as session:
        [got] = omie.fetch_day(session, date(2025, 10, 26),
                               base_url=httpserver.url_for("").rstrip("/"), policy=FAST)
    assert got.url.endswith("/files/marginalpdbc_20251026.1")
    assert parse(got.data).height == 200


def test_a_dst_day_is_checked_against_its_real_length() -> None:
    # 2025-10-26 lasts 25 hours in Madrid (CEST -> CET): 100 quarter-hours. The fixture
    # without its last 4 periods holds 96, a full count for an ordinary day, but four short
    # of this one: refused naming the day; as an excerpt, noted with the real length.
    lines = (FIXTURES / "marginalpdbc_20251026.1").read_bytes().splitlines(keepends=True)
    body = b"".join(line for line in lines
                    if not line.startswith((b"2025;10;26;97;", b"2025;10;26;98;",
                                            b"2025;10;26;99;", b"2025;10;26;100;")))
    with pytest.raises(ParseError) as caught:
        parse(body)
    assert caught.value.where == "day 2025-10-26"
    assert "96 of the day's 100 quarter-hours (a 25-hour day" in caught.value.reason
    notes: list[str] = []
    assert parse(body, notes, partial_ok=True).height == 2 * 96
    assert notes == ["2025-10-26: 96 of the day's 100 quarter-hours (a 25-hour day in "
                     "Europe/Madrid)"]


def test_day_lengths_in_madrid() -> None:
    # spring forward 2025-03-30 (23 h), fall back 2025-10-26 (25 h), an ordinary day (24 h)
    assert [omie.day_hours(date(2025, 3, 30)), omie.day_hours(date(2025, 10, 26)),
            omie.day_hours(date(2025, 11, 5))] == [23, 25, 24]
