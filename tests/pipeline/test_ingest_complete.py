"""Completeness before replacement: after a good load, an answer that is valid but partial (a
page missing, a zone answering empty, a header-only file next to a good one, a key given twice
with two values) fails the source (exit 2), says what is missing, and leaves the store's
tables byte for byte as they were; an identical duplicate is dropped and counted.

Each case runs against a real local HTTP server and a real DuckDB file, compared before and
after."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
import pytest
import requests
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pipeline import store
from pipeline.ingest.inputs import fx_rates
from pipeline.ingest.pull import SourceResult, exit_code, ingest
from sources.http import FetchPolicy
from sources.job import Context
from sources.registry import SOURCES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FAST = FetchPolicy(retries=1, backoff_s=0.0, sleep=lambda s: None)
REGIONS = pl.DataFrame({
    "provider_id": ["scaleway", "scaleway", "azure", "azure", "aws", "aws"],
    "region": ["nl-ams-1", "fr-par-2", "francecentral", "germanywestcentral", "eu-north-1",
               "eu-west-3"],
    "zone": ["NL", "FR", "FR", "DE-LU", "SE", "FR"]})
ECB_BODY = (FIXTURES / "ecb/eurofxref-hist-90d_excerpt.xml").read_bytes()
TABLES = ("core__gpu_offers", "core__electricity_prices", "core__grid_intensity",
          "core_ecb__fx_rates", "loads")

Handler = Callable[[Request], Response]


def tables(con: duckdb.DuckDBPyConnection) -> dict[str, pl.DataFrame]:
    """Every core table's rows, sorted: what "byte for byte as they were" compares."""
    out = {}
    for name in TABLES[:-1]:
        frame = store.frame(con, f"SELECT * FROM {name}")
        out[name] = frame.sort(frame.columns)
    return out


def context(httpserver: HTTPServer, con: duckdb.DuckDBPyConnection,
            zones: dict[str, tuple[str, ...]] | None = None,
            today: date = date(2026, 11, 29)) -> Context:
    root = httpserver.url_for("").rstrip("/")
    return Context(vintage=today.strftime("%Y-%m"), today=today, regions=REGIONS,
                   fx_rates=lambda: fx_rates(con), policy=FAST,
                   base_urls={name: root for name in (*SOURCES, "ember_api")},
                   zones=zones or {})


def run(httpserver: HTTPServer, con: duckdb.DuckDBPyConnection, handler: Handler,
        names: list[str], zones: dict[str, tuple[str, ...]] | None = None,
        today: date = date(2026, 11, 29)) -> list[SourceResult]:
    httpserver.clear()
    httpserver.expect_request("/eurofxref-hist-90d.xml").respond_with_data(ECB_BODY)
    httpserver.expect_request(re.compile(".*")).respond_with_handler(handler)
    with requests.Session() as session:
        return ingest(con, session, names, context(httpserver, con, zones, today))


def refused(httpserver: HTTPServer, tmp_path: Path, names: list[str], good: Handler,
            partial: Handler, zones: dict[str, tuple[str, ...]] | None = None) -> str:
    """Load `good`, then meet `partial`: assert the last source failed (exit 2) with every
    table unchanged, and return its error line."""
    con = store.connect(tmp_path / "s.duckdb")
    first = run(httpserver, con, good, names, zones)
    assert [r.status for r in first] == ["loaded"] * len(names), [r.error for r in first]
    before = tables(con)
    assert before[{"odre": "core__grid_intensity", "ember": "core__electricity_prices",
                   "entsoe": "core__electricity_prices"}.get(names[-1], "core__gpu_offers")
                  ].height > 0
    *_, result = run(httpserver, con, partial, names[-1:], zones)
    assert result.status == "failed", result.notes
    assert exit_code([result]) == 2
    after = tables(con)
    for name, frame in before.items():
        assert after[name].equals(frame), name
    con.close()
    assert result.error and "\n" not in result.error
    return result.error


def odre(empty_second_page: bool) -> Handler:
    pages = {"0": (FIXTURES / "odre/records_page1.json").read_bytes(),
             "100": (FIXTURES / "odre/records_page2.json").read_bytes()}
    if empty_second_page:  # total_count still 150: the 50 rows of offset 100 are missing
        pages["100"] = b'{"total_count": 150, "results": []}'
    return lambda request: Response(pages[request.args.get("offset", "0")])


def test_an_empty_odre_page_mid_pagination_keeps_the_month(httpserver: HTTPServer,
                                                           tmp_path: Path) -> None:
    error = refused(httpserver, tmp_path, ["odre"], odre(False), odre(True))
    # page 2 holds 0 records; total_count 150 - offset 100 = 50 were promised there
    assert "offset 100" in error and "0 record(s) but total_count 150 promises 50" in error


EMBER_CSV = (FIXTURES / "ember/wholesale_monthly_2026-09_to_11.csv").read_bytes()
EMBER_INTENSITY = (FIXTURES / "ember/carbon-intensity_yearly_2024.json").read_bytes()


def ember(header_only: bool) -> Handler:
    def respond(request: Request) -> Response:
        if "/carbon-intensity/monthly" in request.path:  # the yearly figures, dated monthly
            return Response(EMBER_INTENSITY.replace(b'"2024"', b'"2026-10-01"'))
        if "/carbon-intensity/" in request.path:
            return Response(EMBER_INTENSITY)
        return Response(EMBER_CSV.split(b"\n", 1)[0] + b"\n" if header_only else EMBER_CSV)
    return respond


def test_a_header_only_ember_csv_next_to_good_intensity_keeps_the_prices(
        httpserver: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the intensity answer still gives rows, so "nothing to load" does not catch this: the
    # price table lost every zone it had
    monkeypatch.setenv("EMBER_API_KEY", "ember-key")
    error = refused(httpserver, tmp_path, ["ember"], ember(False), ember(True))
    assert "incomplete answer" in error and "core__electricity_prices zone FR: none" in error
    assert "ember-key" not in error


SCALEWAY = (FIXTURES / "scaleway/servers_nl-ams-1_page1.json").read_bytes()
AWS = (FIXTURES / "aws/meteredUnitMaps_eu-stockholm_linux.json").read_bytes()
AZURE = (FIXTURES / "azure/retail_prices_francecentral_page2.json").read_bytes()
ENTSOE = (FIXTURES / "entsoe/A44_FR_2026-11-26_A03_15min.xml").read_bytes()


def zoned(source: str, empty_second: bool) -> Handler:
    """Two zones of `source` served from one fixture (the second zone's name written in);
    with `empty_second`, the second zone answers well-formed and empty."""
    def respond(request: Request) -> Response:
        if source == "scaleway":
            second = "/fr-par-2/" in request.path
            body = b'{"servers": {}}' if second and empty_second else SCALEWAY
        elif source == "aws":
            second = "Paris" in request.path
            body = (AWS.replace(b"Stockholm", b"Paris") if second else AWS)
            if second and empty_second:
                body = b'{"manifest": {"currencyCode": "USD"}, "regions": {}}'
        elif source == "azure":
            second = "germanywestcentral" in request.args.get("$filter", "")
            body = AZURE.replace(b"francecentral", b"germanywestcentral") if second else AZURE
            if second and empty_second:
                body = b'{"Items": [], "NextPageLink": null, "Count": 0}'
        else:  # entsoe: the zone is read back from in_Domain
            second = request.args.get("in_Domain") == "10YBE----------2"
            body = ENTSOE.replace(b"10YFR-RTE------C", b"10YBE----------2") if second else ENTSOE
            if second and empty_second:  # a document with no TimeSeries
                body = re.sub(rb"<TimeSeries>.*</TimeSeries>", b"", ENTSOE, flags=re.S)
        return Response(body)
    return respond


ZONES = {"scaleway": ("nl-ams-1", "fr-par-2"), "aws": ("EU (Stockholm)", "EU (Paris)"),
         "azure": ("francecentral", "germanywestcentral"), "entsoe": ("FR", "BE")}
#: What the error names: the second zone's value in the table's zone column.
NAMED = {"scaleway": "region fr-par-2: none", "aws": "region eu-west-3: none",
         "azure": "region germanywestcentral: none", "entsoe": "zone BE: none"}


@pytest.mark.parametrize("source", list(ZONES))
def test_one_zone_answering_empty_keeps_that_zone(source: str, httpserver: HTTPServer,
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENTSOE_API_KEY", "entsoe-token")
    names = ["ecb", source] if source in ("aws", "azure") else [source]
    error = refused(httpserver, tmp_path, names, zoned(source, False), zoned(source, True),
                    zones={source: ZONES[source]})
    assert "incomplete answer" in error and NAMED[source] in error
    assert "entsoe-token" not in error


def entsoe_twice(second_price: bytes) -> Handler:
    """The FR document with its first point repeated at the end of its Period, priced
    `second_price` (55 is the first point's own price)."""
    point = b"<Point>\n\t\t\t\t<position>1</position>\n\t\t\t\t<price.amount>55</price.amount>"
    assert point in ENTSOE
    repeated = point.replace(b">55<", b">" + second_price + b"<") + b"\n\t\t\t</Point>\n\t\t"
    body = ENTSOE.replace(b"</Period>", b"\t" + repeated + b"</Period>", 1)
    return lambda request: Response(body)


def test_a_conflicting_duplicate_is_refused_naming_it(httpserver: HTTPServer, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENTSOE_API_KEY", "entsoe-token")
    error = refused(httpserver, tmp_path, ["entsoe"], zoned("entsoe", False),
                    entsoe_twice(b"99"), zones={"entsoe": ("FR",)})
    # position 1 of the Period starting 2026-11-25T23:00Z, given as 55 then as 99
    assert "position 1" in error and "given twice, 55.0 and 99.0" in error
    assert "2026-11-25 23:00" in error


def test_an_identical_duplicate_is_dropped_and_counted(httpserver: HTTPServer, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENTSOE_API_KEY", "entsoe-token")
    con = store.connect(tmp_path / "s.duckdb")
    [plain] = run(httpserver, con, zoned("entsoe", False), ["entsoe"], {"entsoe": ("FR",)})
    assert plain.status == "loaded", plain.error
    [twice] = run(httpserver, con, entsoe_twice(b"55"), ["entsoe"], {"entsoe": ("FR",)})
    # the same point at the same price: one row dropped, the load's rows as before
    assert twice.status in ("loaded", "unchanged"), twice.error
    assert twice.rows == plain.rows
    assert "FR: 1 identical duplicate point(s) dropped" in twice.notes
    con.close()


OMIE = (FIXTURES / "omie/marginalpdbc_20251026.1").read_bytes()


def omie_days(second: bytes) -> Handler:
    """The 1 October 2025 file is the fixture, the 2 October file `second`: both files hold
    the same day of the vintage 2025-10 (the 26th), so every row's key comes twice across two
    snapshots."""
    return lambda request: Response(
        second if request.args.get("filename", "").endswith("20251002.1") else OMIE)


def test_identical_rows_across_snapshots_are_dropped_and_counted(
        httpserver: HTTPServer, tmp_path: Path) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    # the second file a byte-identical copy but for a trailing line break: another snapshot
    [result] = run(httpserver, con, omie_days(OMIE + b"\n"), ["omie"],
                   today=date(2025, 10, 2))
    assert result.status == "loaded", result.error
    # 100 quarter-hours x 2 zones in each file: 200 rows kept, the copy's 200 dropped
    assert result.rows == 200 and result.snapshots == 2
    assert "core__electricity_prices: 200 identical duplicate row(s) dropped" in result.notes
    con.close()


def test_conflicting_rows_across_snapshots_are_refused_naming_the_first(
        httpserver: HTTPServer, tmp_path: Path) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    period_2 = OMIE.split(b"\n")[2]  # "2025;10;26;2;...": its ES price changed to 1234.5
    assert period_2.startswith(b"2025;10;26;2;")
    fields = period_2.split(b";")
    changed = OMIE.replace(period_2, b";".join([*fields[:5], b"1234.5", *fields[6:]]))
    [result] = run(httpserver, con, omie_days(changed), ["omie"], today=date(2025, 10, 2))
    assert result.status == "failed" and exit_code([result]) == 2
    # period 2 starts 15 min after local midnight (22:00 UTC, CEST): 22:15 UTC
    assert "1 key(s) given twice with different values" in (result.error or "")
    assert "zone=ES, interval_start_utc=2025-10-25 22:15:00+00:00" in (result.error or "")
    assert store.frame(con, "SELECT * FROM core__electricity_prices").height == 0
    con.close()


def test_a_source_over_its_total_byte_cap_fails_naming_it(
        httpserver: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ODRE's two pages are each under the 64 MB response cap; with the source's total capped
    # at 1,000 bytes, the first page alone passes it: the source fails, nothing is loaded
    monkeypatch.setenv("SCORECARD_SOURCE_MAX_BYTES", "1000")
    assert len((FIXTURES / "odre/records_page1.json").read_bytes()) > 1000
    con = store.connect(tmp_path / "s.duckdb")
    [result] = run(httpserver, con, odre(False), ["odre"])
    assert result.status == "failed" and exit_code([result]) == 2
    assert "exceed its cap of 1000 bytes in all" in (result.error or "")
    assert store.frame(con, "SELECT * FROM core__grid_intensity").height == 0
    con.close()
