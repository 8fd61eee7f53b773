"""`scorecard ingest` / `scorecard sources` through typer's CliRunner (a real DuckDB file, a
real local HTTP server reached through SCORECARD_<SOURCE>_BASE_URL)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from pipeline.cli.ingest import ingest, sources_cmd

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
app = typer.Typer()
app.command("ingest")(ingest)
app.command("sources")(sources_cmd)
runner = CliRunner()


def test_unknown_source_exits_1(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", "nordpool", "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 1
    assert "unknown source(s): nordpool" in result.output


def test_bad_vintage_exits_1(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", "ecb", "--vintage", "2026-13",
                                 "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 1 and "is not a month YYYY-MM" in result.output


def test_offline_with_nothing_stored_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", "scaleway", "--offline", "--vintage", "2026-11",
                                 "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 2
    assert "scaleway: none: no stored snapshots for vintage 2026-11" in result.output
    # and what to do instead, on one line however long (stderr is no terminal here: rich
    # would fold it at 80 columns, a log line cut in the middle of the store's path)
    db = tmp_path / "s.duckdb"
    assert (f"nothing stored for vintage 2026-11 in {db}: run `scorecard ingest` with the "
            "network first (or `scorecard run`, which works offline on the bundled reference "
            "data)") in result.stderr.splitlines()


def test_a_month_to_come_is_refused_before_anything_is_fetched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` refuses it (the same check): fetching it found nothing to load, after the
    network calls, as a parse error."""
    monkeypatch.setenv("SCORECARD_ECB_BASE_URL", "http://127.0.0.1:9")  # never the internet
    db = tmp_path / "s.duckdb"
    result = runner.invoke(app, ["ingest", "ecb", "--vintage", "2999-01", "--db", str(db)])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: --vintage '2999-01' is after this month (")
    assert not db.exists()


def test_ingest_then_sources_lists_the_load(tmp_path: Path, httpserver: HTTPServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    body = (FIXTURES / "ovhcloud" / "catalog_public_cloud_FR_excerpt.json").read_bytes()
    httpserver.expect_request("/1.0/order/catalog/public/cloud").respond_with_data(body)
    monkeypatch.setenv("SCORECARD_OVHCLOUD_BASE_URL", httpserver.url_for("").rstrip("/"))
    db = str(tmp_path / "s.duckdb")
    result = runner.invoke(app, ["ingest", "ovhcloud", "--db", db,
                                 "--record", str(tmp_path / "rec")])
    assert result.exit_code == 0, result.output
    # the response was also recorded, byte for byte, for fixture refreshes
    assert (tmp_path / "rec" / "ovhcloud" / "001_cloud").read_bytes() == body
    assert "ovhcloud: loaded" in result.output
    listing = runner.invoke(app, ["sources", "--db", db])
    assert listing.exit_code == 0
    lines = listing.output.splitlines()
    at = lines.index("ovhcloud: provides core__gpu_offers")
    assert lines[at + 2] == "  key: none needed"
    assert lines[at + 3].startswith("  last good load: 20")
    assert lines[at + 3].endswith(" rows)") and "(vintage " in lines[at + 3]
    assert "scaleway: provides core__gpu_offers" in lines
    assert lines[lines.index("scaleway: provides core__gpu_offers") + 3] == (
        "  last good load: never")


def test_sources_lists_the_bundled_data_once_loaded(tmp_path: Path) -> None:
    from pipeline import store
    from pipeline.ingest.bundled import load_bundled

    db = tmp_path / "s.duckdb"
    fresh = runner.invoke(app, ["sources", "--db", str(db)])
    before = fresh.stdout.splitlines()
    assert before[before.index("  licence: per row (sources/reference/README.md)") + 2] == (
        "  last good load: never")
    # no store there yet (a mistyped --db reads the same): said, on stderr
    assert fresh.stderr == f"no store at {db}: every load below reads never (check --db or " \
                           "$SCORECARD_DB)\n"
    con = store.connect(db)
    loaded = load_bundled(con)
    con.close()
    lines = runner.invoke(app, ["sources", "--db", str(db)]).output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("bundled: "))
    assert lines[at + 3].endswith(f"(vintage 2026-10, {loaded.row_count} rows)")


def test_both_ember_hosts_can_be_pointed_at_a_replay_server(
        tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # The CSV host and the key-gated API host, each through its own variable: the three
    # requests (wholesale CSV, yearly and monthly intensity) all reach the local server.
    csv = (FIXTURES / "ember" / "wholesale_monthly_2026-09_to_11.csv").read_bytes()
    yearly = (FIXTURES / "ember" / "carbon-intensity_yearly_2024.json").read_bytes()
    httpserver.expect_request(
        "/public-downloads/price/outputs/european_wholesale_electricity_price_data_monthly.csv"
    ).respond_with_data(csv)
    httpserver.expect_request("/v1/carbon-intensity/yearly").respond_with_data(yearly)
    httpserver.expect_request("/v1/carbon-intensity/monthly").respond_with_data(
        b'{"data": [], "stats": {}}')
    root = httpserver.url_for("").rstrip("/")
    monkeypatch.setenv("SCORECARD_EMBER_BASE_URL", root)
    monkeypatch.setenv("SCORECARD_EMBER_API_BASE_URL", root)
    monkeypatch.setenv("EMBER_API_KEY", "ember-secret")
    result = runner.invoke(app, ["ingest", "ember", "--vintage", "2026-11",
                                 "--db", str(tmp_path / "s.duckdb")])
    paths = sorted(request.path for request, _ in httpserver.log)
    assert [p.rsplit("/", 1)[-1] for p in paths] == [
        "european_wholesale_electricity_price_data_monthly.csv", "monthly", "yearly"]
    assert "ember-secret" not in result.output


def test_sources_says_skipped_and_failed_without_repeating_the_name(
        tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source `ingest` skips for its missing key records no load: `sources` said `last
    attempt: never` right after `ingest` printed `skipped`. A failure's line said the
    source's name twice (`ecb: failed: ecb: http://...`)."""
    httpserver.expect_request("/eurofxref-hist-90d.xml").respond_with_data("gone", status=404)
    monkeypatch.setenv("SCORECARD_ECB_BASE_URL", httpserver.url_for("").rstrip("/"))
    monkeypatch.delenv("ELECTRICITYMAPS_API_KEY", raising=False)
    db = str(tmp_path / "s.duckdb")
    result = runner.invoke(app, ["ingest", "ecb", "electricity_maps", "--db", db])
    assert result.exit_code == 2, result.output
    url = httpserver.url_for("/eurofxref-hist-90d.xml")
    assert f"ecb: failed: {url}: HTTP 404" in result.stderr
    assert "electricity_maps: skipped" in result.stderr
    lines = runner.invoke(app, ["sources", "--db", db]).stdout.splitlines()
    ecb = lines[lines.index("ecb: provides core_ecb__fx_rates") + 4]
    assert ecb.startswith("  last attempt: 20") and f"): failed: {url}: HTTP 404" in ecb
    maps = lines[lines.index("electricity_maps: provides core__grid_intensity") + 4]
    assert maps == ("  last attempt: never: skipped, no key (ELECTRICITYMAPS_API_KEY not "
                    "set)")
