"""Ingest stores each page as a raw snapshot as it arrives and parses the snapshots one at a
time from the store, so a source's memory is about one page, not all of them (29 ODRE pages
of 50 MB once reached 5.4 GB); pages stored before a fetch stopped short are not kept.

Real local HTTP server, real DuckDB file."""

from __future__ import annotations

import json
import re
import tracemalloc
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import requests
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pipeline import store
from pipeline.ingest.pull import ingest
from sources.http import FetchPolicy
from sources.job import Context
from sources.registry import SOURCES

FAST = FetchPolicy(retries=1, backoff_s=0.0, sleep=lambda s: None)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def context(httpserver: HTTPServer) -> Context:
    root = httpserver.url_for("").rstrip("/")
    return Context(vintage="2026-11", today=date(2026, 11, 29), regions=pl.DataFrame(),
                   policy=FAST, base_urls={name: root for name in SOURCES})


def odre_pages(count: int, pad_bytes: int = 0) -> dict[str, bytes]:
    """`count` full ODRE /records pages of 100 quarter-hours each from 2026-11-01 00:00 UTC,
    each record padded with `pad_bytes` of an extra field the reader ignores."""
    start = datetime(2026, 11, 1, tzinfo=UTC)
    pages = {}
    for page in range(count):
        records = [{"date_heure": (start + timedelta(minutes=15 * (page * 100 + i))
                                   ).isoformat(), "taux_co2": 20 + i % 7,
                    "pad": "x" * pad_bytes} for i in range(100)]
        pages[str(page * 100)] = json.dumps({"total_count": count * 100,
                                             "results": records}).encode()
    return pages


def serve(httpserver: HTTPServer, pages: dict[str, bytes], seen: list[str] | None = None
          ) -> None:
    def handler(request: Request) -> Response:
        offset = request.args.get("offset", "0")
        if seen is not None:
            seen.append(offset)
        body = pages[offset]  # sent in slices: the server thread copies no whole page
        return Response((body[i:i + 65536] for i in range(0, len(body), 65536)),
                        headers={"Content-Length": str(len(body))})

    httpserver.clear()
    httpserver.expect_request(re.compile(".*")).respond_with_handler(handler)


def snapshot_shas(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {sha for (sha,) in con.execute("SELECT sha256 FROM raw_snapshots").fetchall()}


def test_each_page_is_stored_before_the_next_is_asked_for(httpserver: HTTPServer,
                                                          tmp_path: Path) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    pages = odre_pages(3)
    stored_when_asked: dict[str, int] = {}
    reader = con.cursor()  # the handler runs in the server's thread while ingest waits

    def handler(request: Request) -> Response:
        offset = request.args.get("offset", "0")
        stored_when_asked[offset] = reader.execute(
            "SELECT count(*) FROM raw_snapshots WHERE source = 'odre'").fetchall()[0][0]
        return Response(pages[offset])

    httpserver.expect_request(re.compile(".*")).respond_with_handler(handler)
    with requests.Session() as session:
        [result] = ingest(con, session, ["odre"], context(httpserver))
    assert result.status == "loaded", result.error
    # 3 pages x 100 quarter-hours, all with a value
    assert (result.rows, result.snapshots) == (300, 3)
    # page n is asked for when the n pages before it are in the store already
    assert stored_when_asked == {"0": 0, "100": 1, "200": 2}


def test_a_source_holds_about_one_page_not_all_of_them(httpserver: HTTPServer,
                                                       tmp_path: Path) -> None:
    # 8 pages of 100 records x 60,000 bytes of padding: about 6 MB a page, 48 MB in all
    pages = odre_pages(8, pad_bytes=60_000)
    page_bytes = len(pages["0"])
    assert 6_000_000 < page_bytes < 6_200_000
    serve(httpserver, pages)
    con = store.connect(tmp_path / "s.duckdb")
    tracemalloc.start()
    try:
        with requests.Session() as session:
            [result] = ingest(con, session, ["odre"], context(httpserver))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "loaded", result.error
    assert (result.rows, result.snapshots) == (800, 8)
    # Holding every page (as ingest did: the fetched list, then each redacted copy) is at
    # least the 8 pages (48 MB) of Python bytes: 66 MB (11 pages) measured then. One page at
    # a time costs a few copies of one page: the page just stored, the next arriving in 64 kB
    # chunks and their join, then on parsing one page's bytes and its parsed JSON strings:
    # about 4-5 pages (28 MB measured). 6 pages lies between.
    assert peak < 6 * page_bytes, (peak, page_bytes)
    con.close()


def test_pages_stored_before_a_fetch_stopped_short_are_not_kept(httpserver: HTTPServer,
                                                                tmp_path: Path) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    serve(httpserver, odre_pages(3))
    with requests.Session() as session:
        [first] = ingest(con, session, ["odre"], context(httpserver))
    assert first.status == "loaded", first.error
    kept = snapshot_shas(con)
    # a later answer: new first two pages (one more gram each), the third short of its 100
    later = odre_pages(3)
    for offset in ("0", "100"):
        later[offset] = later[offset].replace(b'"taux_co2": 20', b'"taux_co2": 99')
    body = json.loads(later["200"])
    body["results"] = body["results"][:40]
    later["200"] = json.dumps(body).encode()
    seen: list[str] = []
    serve(httpserver, later, seen)
    with requests.Session() as session:
        [result] = ingest(con, session, ["odre"], context(httpserver))
    assert seen == ["0", "100", "200"]  # the two new pages were fetched and stored first
    assert result.status == "failed"
    # page 3 holds 40 records; total_count 300 - offset 200 = 100 were promised there
    assert result.error and "40 record(s) but total_count 300 promises 100" in result.error
    # no load links the two new pages, so they are not kept; the good load's are
    assert snapshot_shas(con) == kept
    assert con.execute("SELECT count(*) FROM core__grid_intensity").fetchall() == [(300,)]
    con.close()
