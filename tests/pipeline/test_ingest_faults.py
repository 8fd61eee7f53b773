"""Every source, every fault: after a good load, a run that meets 500s, a truncated body, an
error body served with HTTP 200 or rich markup in what the server says fails that source with
a one-line reason naming it, exits 2, and leaves its rows exactly as they were (row count and
content)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest
import requests
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pipeline import store
from pipeline.ingest.inputs import fx_rates
from pipeline.ingest.pull import exit_code, ingest
from sources.http import FetchPolicy
from sources.job import Context
from sources.registry import SOURCES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FAST = FetchPolicy(retries=1, backoff_s=0.0, sleep=lambda s: None)
REGIONS = pl.DataFrame({"provider_id": ["scaleway", "ovhcloud", "azure", "aws"],
                        "region": ["nl-ams-1", "GRA", "francecentral", "eu-north-1"],
                        "zone": ["NL", "FR", "FR", "SE"]})
ECB_BODY = (FIXTURES / "ecb/eurofxref-hist-90d_excerpt.xml").read_bytes()


@dataclass(frozen=True)
class Setup:
    path: str
    fixture: str
    table: str
    today: date = date(2026, 11, 29)
    vintage: str = "2026-11"  # the month the fixture's intervals are in
    zones: tuple[str, ...] | None = None
    env: dict[str, str] = field(default_factory=dict)
    pages: tuple[tuple[str, str], ...] = ()  # (offset, fixture) of further pages


AWS_PATH = ("/pricing/2.0/meteredUnitMaps/ec2/USD/current/ec2-ondemand-without-sec-sel/"
            "EU (Stockholm)/Linux/index.json")
SETUPS = {
    "ecb": Setup("/eurofxref-hist-90d.xml", "ecb/eurofxref-hist-90d_excerpt.xml",
                 "core_ecb__fx_rates"),
    "energy_charts": Setup("/price", "energy_charts/price_BE_2025-10-26_dst100.json",
                           "core__electricity_prices", today=date(2025, 10, 30),
                           vintage="2025-10", zones=("BE",)),
    "scaleway": Setup("/instance/v1/zones/nl-ams-1/products/servers",
                      "scaleway/servers_nl-ams-1_page1.json", "core__gpu_offers",
                      zones=("nl-ams-1",)),
    "ovhcloud": Setup("/1.0/order/catalog/public/cloud",
                      "ovhcloud/catalog_public_cloud_FR_excerpt.json", "core__gpu_offers"),
    "azure": Setup("/api/retail/prices", "azure/retail_prices_francecentral_page2.json",
                   "core__gpu_offers", zones=("francecentral",)),
    "aws": Setup(AWS_PATH, "aws/meteredUnitMaps_eu-stockholm_linux.json", "core__gpu_offers",
                 zones=("EU (Stockholm)",)),
    "ember": Setup("/public-downloads/price/outputs/"
                   "european_wholesale_electricity_price_data_monthly.csv",
                   "ember/wholesale_monthly_2026-09_to_11.csv", "core__electricity_prices"),
    "electricity_maps": Setup("/v4/carbon-intensity/history",
                              "electricity_maps/history_FR_2026-11-27.json",
                              "core__grid_intensity", today=date(2026, 11, 27), zones=("FR",),
                              env={"ELECTRICITYMAPS_API_KEY": "em-token"}),
    "omie": Setup("/es/file-download", "omie/marginalpdbc_20251026.1",
                  "core__electricity_prices", today=date(2025, 10, 1), vintage="2025-10"),
    "entsoe": Setup("/api", "entsoe/A44_FR_2026-11-26_A03_15min.xml",
                    "core__electricity_prices", zones=("FR",),
                    env={"ENTSOE_API_KEY": "entsoe-token"}),
    "odre": Setup("/api/explore/v2.1/catalog/datasets/eco2mix-national-tr/records",
                  "odre/records_page1.json", "core__grid_intensity",
                  pages=(("100", "odre/records_page2.json"),)),
}
FAULTS = {
    "500 every time": (b"Internal Server Error", 500, "HTTP 500: gave up after 2 attempts"),
    "truncated body": (None, 200, "parse error"),
    "error body with HTTP 200": (b'{"error": "quota exceeded", "message": "try later"}', 200,
                                 "parse error"),
    # rich markup and an escape in what the server says: quoted as text, on one line
    "markup in a 404 page": (b"<h1>[/bold] Not found\n\x1b[31m [link=x]here[/link]</h1>", 404,
                             "HTTP 404: NOT FOUND: <h1>[/bold] Not found\\n\\x1b[31m"),
    "markup in an error object with HTTP 200": (b'{"error": "[/red] denied [bold]"}', 200,
                                                "parse error"),
}


def test_every_source_has_a_fault_setup() -> None:
    assert set(SETUPS) == set(SOURCES)


def context(httpserver: HTTPServer, con: duckdb.DuckDBPyConnection, source: str) -> Context:
    setup = SETUPS[source]
    root = httpserver.url_for("").rstrip("/")
    zones = {source: setup.zones} if setup.zones else {}
    return Context(vintage=setup.vintage, today=setup.today, regions=REGIONS,
                   fx_rates=lambda: fx_rates(con), policy=FAST,
                   base_urls={name: root for name in SOURCES}, zones=zones)


def serve(httpserver: HTTPServer, setup: Setup, body: bytes, status: int = 200) -> None:
    httpserver.clear()
    if setup.path != SETUPS["ecb"].path:  # USD sources need rates loaded alongside
        httpserver.expect_request("/eurofxref-hist-90d.xml").respond_with_data(ECB_BODY)
    later = {offset: (FIXTURES / fixture).read_bytes() for offset, fixture in setup.pages}

    def respond(request: Request) -> Response:  # later pages stay good: page 1 is at fault
        offset = request.args.get("offset", "0")
        if offset in later:
            return Response(later[offset])
        return Response(body, status=status)

    httpserver.expect_request(setup.path).respond_with_handler(respond)


def content(con: duckdb.DuckDBPyConnection, table: str) -> pl.DataFrame:
    frame = store.frame(con, f"SELECT * EXCLUDE (load_id) FROM {table}")
    return frame.sort(frame.columns)


#: Well-formed answers holding no rows: the API has nothing for the month (any more).
EMPTY = {
    "odre": b'{"total_count": 0, "results": []}',
    "ember": b"Country,ISO3 Code,Date,Price (EUR/MWhe)\n",
    "scaleway": b'{"servers": {}}',
}


@pytest.mark.parametrize("source", list(EMPTY))
def test_an_empty_answer_fails_and_keeps_the_rows(source: str, httpserver: HTTPServer,
                                                  tmp_path: Path) -> None:
    setup = SETUPS[source]
    con = store.connect(tmp_path / "s.duckdb")
    serve(httpserver, setup, (FIXTURES / setup.fixture).read_bytes())
    with requests.Session() as session:
        ingest(con, session, [source], context(httpserver, con, source))
    before = content(con, setup.table)
    assert before.height > 0
    serve(httpserver, setup, EMPTY[source])
    with requests.Session() as session:
        [result] = ingest(con, session, [source], context(httpserver, con, source))
    assert result.status == "failed" and "nothing to load" in (result.error or "")
    assert content(con, setup.table).equals(before)
    con.close()


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("source", list(SETUPS))
def test_fault_leaves_the_source_intact(source: str, fault: str, httpserver: HTTPServer,
                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = SETUPS[source]
    for name, value in setup.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("EMBER_API_KEY", raising=False)
    good = (FIXTURES / setup.fixture).read_bytes()
    con = store.connect(tmp_path / "s.duckdb")
    wanted = ["ecb", source] if source in ("azure", "aws") else [source]
    serve(httpserver, setup, good)
    with requests.Session() as session:
        first = ingest(con, session, wanted, context(httpserver, con, source))
    assert [r.status for r in first] == ["loaded"] * len(wanted), [r.error for r in first]
    before = content(con, setup.table)
    assert before.height > 0

    body, status, message = FAULTS[fault]
    serve(httpserver, setup, good[: len(good) // 2] if body is None else body, status)
    with requests.Session() as session:
        [result] = ingest(con, session, [source], context(httpserver, con, source))
    assert result.status == "failed"
    assert message in result.error and source in result.error
    assert "\n" not in result.error  # one line
    assert exit_code([result]) == 2
    assert content(con, setup.table).equals(before)
    for secret in setup.env.values():
        assert secret not in result.error
    con.close()


def _energy_charts_a_year_early(body: bytes) -> bytes:
    """The recorded 2025-10-26 answer moved 52 weeks back (2024-10-27, also a 25-hour day)."""
    return re.sub(rb'(?<="unix_seconds":\[)([0-9,]+)(?=\])', lambda found: b",".join(
        str(int(t) - 364 * 86_400).encode() for t in found[1].split(b",")), body)


#: Well-formed answers about what was not asked: (source, the answer, what the error names).
ASKED_OTHERWISE = {
    "energy_charts: October 2024 for 2025-10": (
        "energy_charts", _energy_charts_a_year_early,
        "the answer is about 2024-10-26 22:00 to 2024-10-27 22:45 UTC, not the vintage 2025-10"),
    "omie: 27 October 2024 for 1 October 2025": (
        "omie", lambda body: body.replace(b"2025;10;26;", b"2024;10;27;"),
        "the answer is about 2024-10-26 22:00 to 2024-10-27 22:45 UTC, not the vintage 2025-10"),
    "entsoe: October for 2026-11": (
        "entsoe", lambda body: body.replace(b"2026-11-", b"2026-10-"),
        "the answer is about 2026-10-25 23:00 to 2026-10-26 22:45 UTC, not the vintage 2026-11"),
    "entsoe: DE-LU for FR": (
        "entsoe", lambda body: body.replace(b"10YFR-RTE------C", b"10Y1001A1001A82H"),
        "the answer is for 10Y1001A1001A82H, not FR's 10YFR-RTE------C that was asked"),
}


@pytest.mark.parametrize("case", list(ASKED_OTHERWISE))
def test_an_answer_about_another_month_or_zone_is_refused_and_keeps_the_rows(
        case: str, httpserver: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answers well formed but about another month or bidding zone: the load is
    refused naming what was asked and what came, and the source's rows stay as they were
    (they were replaced by October's, or stored as FR, before)."""
    source, wrong, message = ASKED_OTHERWISE[case]
    setup = SETUPS[source]
    for name, value in setup.env.items():
        monkeypatch.setenv(name, value)
    good = (FIXTURES / setup.fixture).read_bytes()
    con = store.connect(tmp_path / "s.duckdb")
    serve(httpserver, setup, good)
    with requests.Session() as session:
        [first] = ingest(con, session, [source], context(httpserver, con, source))
    assert first.status == "loaded", first.error
    before = content(con, setup.table)
    serve(httpserver, setup, wrong(good))
    with requests.Session() as session:
        [result] = ingest(con, session, [source], context(httpserver, con, source))
    assert result.status == "failed" and exit_code([result]) == 2
    assert message in (result.error or ""), result.error
    assert content(con, setup.table).equals(before)
    con.close()


@pytest.mark.parametrize("source", list(SETUPS))
def test_429_then_success_loads(source: str, httpserver: HTTPServer, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    setup = SETUPS[source]
    for name, value in setup.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("EMBER_API_KEY", raising=False)
    good = (FIXTURES / setup.fixture).read_bytes()
    later = {offset: (FIXTURES / fixture).read_bytes() for offset, fixture in setup.pages}
    calls: list[str] = []

    def respond(request: Request) -> Response:
        calls.append(request.path)
        if len(calls) == 1:  # the very first request is rate limited
            return Response("slow down", status=429, headers={"Retry-After": "1"})
        return Response(later.get(request.args.get("offset", "0"), good))

    httpserver.expect_request(setup.path).respond_with_handler(respond)
    httpserver.expect_request("/eurofxref-hist-90d.xml").respond_with_data(ECB_BODY)
    con = store.connect(tmp_path / "s.duckdb")
    wanted = ["ecb", source] if source in ("azure", "aws") else [source]
    with requests.Session() as session:
        results = ingest(con, session, wanted, context(httpserver, con, source))
    assert [r.status for r in results] == ["loaded"] * len(wanted), [r.error for r in results]
    assert calls.count(setup.path) >= 2  # retried after the 429
    con.close()


def test_entsoe_keeps_the_rows_of_the_vintage_month(httpserver: HTTPServer, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The request reaches 3 h back to cover local days: a day published for 1 November
    # (Paris) starts at 2026-10-31 23:00 UTC. Its first hour is October's, not the vintage's.
    setup = SETUPS["entsoe"]
    monkeypatch.setenv("ENTSOE_API_KEY", "entsoe-token")
    body = (FIXTURES / setup.fixture).read_bytes().replace(
        b"2026-11-26T23:00Z", b"2026-11-01T23:00Z").replace(
        b"2026-11-25T23:00Z", b"2026-10-31T23:00Z")
    con = store.connect(tmp_path / "s.duckdb")
    serve(httpserver, setup, body)
    with requests.Session() as session:
        [result] = ingest(con, session, ["entsoe"], context(httpserver, con, "entsoe"))
    assert result.status == "loaded", result.error
    (first, months), = con.execute(
        "SELECT min(interval_start_utc), count(DISTINCT strftime(interval_start_utc AT TIME "
        "ZONE 'UTC', '%Y-%m')) FROM core__electricity_prices").fetchall()
    assert first.astimezone(UTC) == datetime(2026, 11, 1, tzinfo=UTC) and months == 1
    con.close()
