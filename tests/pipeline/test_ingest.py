"""Ingest orchestration against a real local HTTP server and a real DuckDB file: loads,
idempotent re-ingest, failing sources that leave earlier data intact, offline re-parse."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
import pytest
import requests
from pytest_httpserver import HTTPServer

from pipeline import store
from pipeline.ingest.inputs import fx_rates
from pipeline.ingest.pull import exit_code, ingest
from sources.http import FetchPolicy
from sources.job import Context

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FAST = FetchPolicy(retries=2, backoff_s=0.0, sleep=lambda s: None)
REGIONS = pl.DataFrame({"provider_id": ["scaleway", "ovhcloud"], "region": ["nl-ams-1", "GRA"],
                        "zone": ["NL", "FR"]})
ECB_PATH = "/stats/eurofxref/eurofxref-hist-90d.xml"
EC_PATH = "/price"
SCW_PATH = "/instance/v1/zones/nl-ams-1/products/servers"
OVH_PATH = "/1.0/order/catalog/public/cloud"
#: The sources served by serve_all (the others would need more endpoints).
SERVED = ("ecb", "energy_charts", "scaleway", "ovhcloud")


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def shifted(body: bytes, days: int) -> bytes:
    """An Energy-Charts answer with every unix_seconds moved by `days` (the rest as it is)."""
    def move(found: re.Match[bytes]) -> bytes:
        return b",".join(str(int(t) + days * 86_400).encode() for t in found[1].split(b","))
    return re.sub(rb'(?<="unix_seconds":\[)([0-9,]+)(?=\])', move, body)


#: The recorded 26 October 2025 (100 quarter-hours) moved 54 weeks on, into the tests' vintage
#: 2026-11 (2026-11-07 22:00 UTC on): an answer about another month is refused.
EC_BODY = shifted(fixture("energy_charts/price_BE_2025-10-26_dst100.json"), 54 * 7)


def serve_all(httpserver: HTTPServer, **overrides: bytes) -> None:
    """One permanent handler per endpoint (overrides replace a body)."""
    bodies = {
        ECB_PATH: fixture("ecb/eurofxref-hist-90d_excerpt.xml"),
        EC_PATH: EC_BODY,
        SCW_PATH: fixture("scaleway/servers_nl-ams-1_page1.json"),
        OVH_PATH: fixture("ovhcloud/catalog_public_cloud_FR_excerpt.json"),
    }
    bodies.update({k: v for k, v in overrides.items()})
    for path, body in bodies.items():
        httpserver.expect_request(path).respond_with_data(body)


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    connection = store.connect(tmp_path / "store.duckdb")
    yield connection
    connection.close()


def context(httpserver: HTTPServer, con: duckdb.DuckDBPyConnection,
            vintage: str = "2026-11") -> Context:
    root = httpserver.url_for("").rstrip("/")
    return Context(
        vintage=vintage, today=date(2026, 11, 29), regions=REGIONS,
        fx_rates=lambda: fx_rates(con), policy=FAST,
        base_urls={"ecb": root + "/stats/eurofxref", "energy_charts": root,
                   "scaleway": root, "ovhcloud": root},
        zones={"energy_charts": ("BE",), "scaleway": ("nl-ams-1",)},
    )


def run(con, httpserver, sources=SERVED, **kw):  # type: ignore[no-untyped-def]
    with requests.Session() as session:
        return {r.source: r for r in ingest(con, session, list(sources),
                                            context(httpserver, con, kw.pop("vintage", "2026-11")),
                                            **kw)}


def rows(con: duckdb.DuckDBPyConnection, table: str) -> pl.DataFrame:
    """A table's content without load ids (stable across identical loads), sorted."""
    frame = store.frame(con, f"SELECT * EXCLUDE (load_id) FROM {table}")
    return frame.sort(frame.columns)


def test_all_sources_load_then_same_bytes_are_unchanged(
        httpserver: HTTPServer, con: duckdb.DuckDBPyConnection) -> None:
    serve_all(httpserver)
    first = run(con, httpserver)
    assert {s: r.status for s, r in first.items()} == {
        "ecb": "loaded", "energy_charts": "loaded", "scaleway": "loaded", "ovhcloud": "loaded"}
    # ECB: 3 of the 4 days fall in 2026-10-22..2026-11-29 (09-30 is outside), x 4 currencies
    assert first["ecb"].rows == 12
    assert first["energy_charts"].rows == 100  # a 100-quarter-hour day
    assert first["scaleway"].rows == 2  # H100-1-80G and L4-1-24G; the CPU type is no offer
    assert first["ovhcloud"].rows == 4  # 4 offers placed in the one ovhcloud region (GRA)
    assert exit_code(list(first.values())) == 0
    before = {t: rows(con, t) for t in ("core__gpu_offers", "core__electricity_prices",
                                         "core_ecb__fx_rates")}
    second = run(con, httpserver)
    assert {r.status for r in second.values()} == {"unchanged"}
    for table, frame in before.items():
        assert rows(con, table).equals(frame)
    # one snapshot per distinct body: re-fetching identical bytes adds none
    assert con.execute("SELECT count(*) FROM raw_snapshots").fetchall() == [(4,)]


def test_failing_source_leaves_previous_rows_while_others_load(
        httpserver: HTTPServer, con: duckdb.DuckDBPyConnection) -> None:
    serve_all(httpserver)
    run(con, httpserver)
    offers_before = rows(con, "core__gpu_offers")
    httpserver.clear()
    changed_ecb = fixture("ecb/eurofxref-hist-90d_excerpt.xml").replace(b"1.1580", b"1.1590")
    httpserver.expect_request(SCW_PATH).respond_with_data("down", status=500)
    serve_all(httpserver, **{ECB_PATH: changed_ecb})
    results = run(con, httpserver, ["ecb", "scaleway"])
    scw = results["scaleway"]
    assert scw.status == "failed"
    assert scw.error.startswith(f"scaleway: {httpserver.url_for(SCW_PATH)}?per_page=100&page=1"
                                ": HTTP 500")
    assert results["ecb"].status == "loaded"  # the other source still ran
    assert rows(con, "core__gpu_offers").equals(offers_before)
    assert exit_code(list(results.values())) == 2
    failed = con.execute("SELECT status, error FROM loads WHERE source = 'scaleway' "
                         "ORDER BY started_at_utc DESC LIMIT 1").fetchall()
    assert failed[0][0] == "failed" and "HTTP 500" in failed[0][1]


@pytest.mark.parametrize("path, body, message", [
    (OVH_PATH, b'{"message": "This service is in maintenance"}', "parse error: ovhcloud"),
    (OVH_PATH, b'{"locale": {"currencyCode": "EUR"}, "addons": [', "not valid JSON"),
    (EC_PATH, EC_BODY.replace(
        b"EUR / MWh", b"EUR / kWh"), "expected EUR / MWh, got 'EUR / kWh'"),
    (EC_PATH, EC_BODY.replace(
        b"100.0,", b"58000.0,", 1), "check less_than_or_equal_to(5000)"),
])
def test_bad_body_fails_that_source_only(httpserver: HTTPServer, con: duckdb.DuckDBPyConnection,
                                         path: str, body: bytes, message: str) -> None:
    serve_all(httpserver)
    run(con, httpserver)
    before = {t: rows(con, t) for t in ("core__gpu_offers", "core__electricity_prices")}
    httpserver.clear()
    serve_all(httpserver, **{path: body})
    results = run(con, httpserver, ["energy_charts", "ovhcloud"])
    bad = "ovhcloud" if path == OVH_PATH else "energy_charts"
    good = "energy_charts" if bad == "ovhcloud" else "ovhcloud"
    assert results[bad].status == "failed" and message in results[bad].error
    assert results[good].status == "unchanged"
    for table, frame in before.items():
        assert rows(con, table).equals(frame)


def test_a_bad_zone_fails_the_whole_load_atomically(
        httpserver: HTTPServer, con: duckdb.DuckDBPyConnection) -> None:
    good = EC_BODY
    httpserver.expect_request(EC_PATH, query_string={"bzn": "BE", "start": "2026-11-01",
                                                     "end": "2026-11-29"}).respond_with_data(good)
    httpserver.expect_request(EC_PATH, query_string={"bzn": "NL", "start": "2026-11-01",
                                                     "end": "2026-11-29"}).respond_with_data(
        good.replace(b'"price":[100.0', b'"price":[-9999.0'))
    with requests.Session() as session:
        ctx = context(httpserver, con)
        ctx.zones["energy_charts"] = ("BE", "NL")
        [result] = ingest(con, session, ["energy_charts"], ctx)
    assert result.status == "failed" and "greater_than_or_equal_to(-1000)" in result.error
    # BE's 100 valid rows were not loaded either: one transaction per source
    assert con.execute("SELECT count(*) FROM core__electricity_prices").fetchall() == [(0,)]


def test_offline_reparses_stored_snapshots(httpserver: HTTPServer,
                                           con: duckdb.DuckDBPyConnection) -> None:
    serve_all(httpserver)
    run(con, httpserver)
    served = len(httpserver.log)
    ctx = context(httpserver, con)
    offline = {r.source: r for r in ingest(con, None, list(SERVED), ctx, offline=True)}
    assert {r.status for r in offline.values()} == {"unchanged"}
    assert offline["energy_charts"].rows == 100
    assert len(httpserver.log) == served  # no request made
    other = ingest(con, None, ["scaleway"], context(httpserver, con, "2026-10"), offline=True)
    assert other[0].status == "none"
    assert other[0].error == "no stored snapshots for vintage 2026-10"
    assert exit_code(other) == 2


def test_fetched_answers_above_the_threshold_stay_in_the_store(
        httpserver: HTTPServer, con: duckdb.DuckDBPyConnection, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # only evidence files go beside the store (issue 33): a fetched answer above the
    # threshold (1,000 bytes here; 16 MiB in use) stays in the parts, so a store of market
    # data is one file; the offline re-parse reads it back from them
    from pipeline.store import snapshots

    monkeypatch.setattr(snapshots, "BESIDE_BYTES", 1000)
    serve_all(httpserver)
    run(con, httpserver)
    kept = dict(con.execute("SELECT source, beside_path FROM raw_snapshot_meta WHERE source IN "
                            "('energy_charts', 'scaleway')").fetchall())
    assert len(EC_BODY) > 1000 and kept == {"energy_charts": None, "scaleway": None}
    assert con.execute("SELECT count(*) FROM raw_snapshot_meta WHERE beside_path IS NOT NULL"
                       ).fetchall() == [(0,)]
    assert not (tmp_path / "store.duckdb.raw").exists()
    ctx = context(httpserver, con)
    offline = {r.source: r for r in ingest(con, None, ["energy_charts", "scaleway"], ctx,
                                           offline=True)}
    assert {r.status for r in offline.values()} == {"unchanged"}, offline
    assert offline["energy_charts"].rows == 100


def test_offline_reparses_two_zones_that_answered_the_same_bytes(
        httpserver: HTTPServer, con: duckdb.DuckDBPyConnection) -> None:
    """BE and NL answered byte for byte the same: one snapshot, two fetches. The offline
    re-parse reads both (it read the snapshot once, under one zone, and failed the coverage
    check for the other)."""
    serve_all(httpserver)
    ctx = dataclasses.replace(context(httpserver, con), zones={"energy_charts": ("BE", "NL")})
    with requests.Session() as session:
        [live] = ingest(con, session, ["energy_charts"], ctx)
    assert live.status == "loaded" and live.rows == 200  # 100 quarter-hours x 2 zones
    assert con.execute("SELECT count(*) FROM raw_snapshots").fetchall() == [(1,)]
    [offline] = ingest(con, None, ["energy_charts"], ctx, offline=True)
    assert offline.status == "unchanged", offline.error
    assert offline.rows == 200 and offline.snapshots == 2
    zones = con.execute("SELECT zone, count(*) FROM core__electricity_prices GROUP BY zone "
                        "ORDER BY zone").fetchall()
    assert zones == [("BE", 100), ("NL", 100)]


def test_offline_after_a_parse_failure_reparses_the_failed_snapshot(
        httpserver: HTTPServer, con: duckdb.DuckDBPyConnection) -> None:
    serve_all(httpserver, **{OVH_PATH: b'{"message": "maintenance"}'})
    run(con, httpserver, ["ovhcloud"])
    [again] = ingest(con, None, ["ovhcloud"], context(httpserver, con), offline=True)
    assert again.status == "failed" and "key 'locale'" in again.error


def test_unknown_source_is_refused(con: duckdb.DuckDBPyConnection,
                                   httpserver: HTTPServer) -> None:
    with pytest.raises(ValueError, match="unknown source"):
        ingest(con, None, ["nordpool"], context(httpserver, con))


def test_snapshot_params_are_stored(httpserver: HTTPServer,
                                    con: duckdb.DuckDBPyConnection) -> None:
    serve_all(httpserver)
    run(con, httpserver, ["energy_charts"])
    [(params,)] = con.execute("SELECT params_json FROM raw_snapshots").fetchall()
    assert json.loads(params) == {"bzn": "BE", "end": "2026-11-29", "start": "2026-11-01"}


EM_PATH = "/v4/carbon-intensity/history"
AZURE_PATH = "/api/retail/prices"


def em_context(httpserver: HTTPServer, con: duckdb.DuckDBPyConnection, today: date) -> Context:
    root = httpserver.url_for("").rstrip("/")
    return Context(vintage="2026-11", today=today, regions=REGIONS, policy=FAST,
                   base_urls={"electricity_maps": root}, zones={"electricity_maps": ("FR",)})


def test_key_not_set_is_a_skip_not_a_failure(httpserver: HTTPServer,
                                             con: duckdb.DuckDBPyConnection,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELECTRICITYMAPS_API_KEY", raising=False)
    with requests.Session() as session:
        [result] = ingest(con, session, ["electricity_maps"],
                          em_context(httpserver, con, date(2026, 11, 27)))
    assert result.status == "skipped"
    # the status line prints "skipped: " before it: the reason does not say it again
    assert result.error == "ELECTRICITYMAPS_API_KEY is not set (set it to ingest this source)"
    assert len(httpserver.log) == 0
    assert exit_code([result]) == 2  # nothing usable came of the run


def test_daily_history_accumulates_and_the_token_is_never_stored(
        httpserver: HTTPServer, con: duckdb.DuckDBPyConnection,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELECTRICITYMAPS_API_KEY", "em-secret-token")
    for day in (27, 28):
        httpserver.clear()
        httpserver.expect_request(EM_PATH, headers={"auth-token": "em-secret-token"}
                                  ).respond_with_data(
            fixture(f"electricity_maps/history_FR_2026-11-{day}.json"))
        with requests.Session() as session:
            [result] = ingest(con, session, ["electricity_maps"],
                              em_context(httpserver, con, date(2026, 11, day)))
        assert result.status == "loaded"
    # day 1: 24 hours from 11-26 09:00; day 2: 24 hours from 11-27 09:00, overlapping nothing
    # -> 48 distinct hours, each kept once (day 2's values win where both report an hour)
    assert result.rows == 48
    frame = rows(con, "core__grid_intensity").sort("interval_start_utc")
    assert frame["intensity_gco2e_per_kwh"][0] == 30.0 and frame["intensity_gco2e_per_kwh"][
        -1] == 123.0
    stored = con.execute("SELECT url, params_json, content FROM raw_snapshots").fetchall()
    assert len(stored) == 2
    for url, params, content in stored:
        assert "em-secret-token" not in url + params
        assert b"em-secret-token" not in bytes(content)
    errors = con.execute("SELECT coalesce(string_agg(error, ' '), '') FROM loads").fetchall()
    assert "em-secret-token" not in errors[0][0]


def test_overlapping_history_keeps_the_newest_value(
        httpserver: HTTPServer, con: duckdb.DuckDBPyConnection,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELECTRICITYMAPS_API_KEY", "em-secret-token")
    first = fixture("electricity_maps/history_FR_2026-11-27.json")
    body = json.loads(first)
    for point in body["history"]:
        point["carbonIntensity"] += 5  # a re-published day: every hour +5
    for data, day in ((first, 27), (json.dumps(body).encode(), 28)):
        httpserver.clear()
        httpserver.expect_request(EM_PATH).respond_with_data(data)
        with requests.Session() as session:
            [result] = ingest(con, session, ["electricity_maps"],
                              em_context(httpserver, con, date(2026, 11, day)))
    # same 24 hours twice: 24 rows, the second fetch's values (30 + 5 = 35 for the first hour)
    assert result.rows == 24
    assert rows(con, "core__grid_intensity").sort("interval_start_utc")[
        "intensity_gco2e_per_kwh"][0] == 35.0


def test_usd_offers_use_the_ecb_rates_loaded_in_the_same_run(
        httpserver: HTTPServer, con: duckdb.DuckDBPyConnection) -> None:
    serve_all(httpserver)
    httpserver.expect_request(AZURE_PATH).respond_with_data(
        fixture("azure/retail_prices_francecentral_page2.json"))
    ctx = context(httpserver, con)
    ctx.base_urls["azure"] = httpserver.url_for("").rstrip("/")
    ctx.zones["azure"] = ("francecentral",)
    regions = pl.concat([REGIONS, pl.DataFrame({"provider_id": ["azure"],
                                                "region": ["francecentral"], "zone": ["FR"]})])
    ctx = Context(**{**ctx.__dict__, "regions": regions})
    with requests.Session() as session:
        results = {r.source: r for r in ingest(con, session, ["azure", "ecb"], ctx)}
    assert results["azure"].status == "loaded", results["azure"].error
    [(price, fx_date, rate, eur)] = con.execute(
        "SELECT price_original_per_hour, fx_date, fx_units_per_eur, price_eur_per_hour "
        "FROM core__gpu_offers WHERE provider_id = 'azure'").fetchall()
    # fetched today (2026-11-29, a Sunday): latest ECB USD rate is 2026-11-27, 1.1580;
    # $7.35 / 1.158 = 6.3472 EUR/h
    assert (price, fx_date, rate) == (7.35, date(2026, 11, 27), 1.158)
    assert eur == pytest.approx(6.3472, abs=1e-4)
