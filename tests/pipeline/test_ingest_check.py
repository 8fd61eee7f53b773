"""`scorecard ingest --check` (configured and reachable, nothing loaded) and the plain line per
source an ingest prints when not on a terminal. A real local HTTP server, no network."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there


def test_check_says_which_sources_answer_and_loads_nothing(
        httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    httpserver.expect_request("/eurofxref-daily.xml").respond_with_data("<xml/>")
    monkeypatch.setenv("SCORECARD_ECB_BASE_URL", httpserver.url_for(""))
    monkeypatch.setenv("SCORECARD_SCALEWAY_BASE_URL", CLOSED)
    db = tmp_path / "s.duckdb"
    result = runner.invoke(app, ["ingest", "ecb", "scaleway", "--check", "--db", str(db)])
    assert result.exit_code == 2, result.output  # scaleway does not answer
    lines = result.stdout.splitlines()
    assert lines[0] == (f"ecb: ok: no key needed; {httpserver.url_for('/eurofxref-daily.xml')}"
                        ": HTTP 200")
    assert lines[1].startswith(f"scaleway: unreachable: no key needed; {CLOSED}/instance/v1/"
                               "zones/fr-par-1/products/servers?per_page=1&page=1: no answer")
    assert not db.exists()  # nothing opened, nothing loaded
    assert len(httpserver.log) == 1


def test_check_names_a_missing_key(httpserver: HTTPServer,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    httpserver.expect_request("/v4/carbon-intensity/latest").respond_with_data("", status=401)
    monkeypatch.setenv("SCORECARD_ELECTRICITY_MAPS_BASE_URL", httpserver.url_for(""))
    monkeypatch.delenv("ELECTRICITYMAPS_API_KEY", raising=False)
    result = runner.invoke(app, ["ingest", "electricity_maps", "--check"])
    assert result.exit_code == 2
    assert result.stdout.startswith("electricity_maps: not configured: ELECTRICITYMAPS_API_KEY "
                                    "not set"), result.stdout
    assert "HTTP 401" in result.stdout


def test_check_fails_on_any_non_2xx_answer_of_the_probe(
        httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The base URL is not what is asked (a healthy API may answer 404 there): each source's
    probe is, and only a 2xx passes. Before, any status counted: a host answering 500 was
    "ok"."""
    httpserver.expect_request("/").respond_with_data("", status=404)  # never asked
    httpserver.expect_request("/eurofxref-daily.xml").respond_with_data("busy", status=500)
    httpserver.expect_request("/price", query_string="bzn=DE-LU").respond_with_json([])
    httpserver.expect_request("/es/file-download").respond_with_data(
        "", status=302, headers={"Location": "/moved/marginalpdbc_20250101.1"})
    httpserver.expect_request("/moved/marginalpdbc_20250101.1").respond_with_data(
        "", status=404)
    for name in ("ECB", "ENERGY_CHARTS", "OMIE"):
        monkeypatch.setenv(f"SCORECARD_{name}_BASE_URL", httpserver.url_for(""))
    result = runner.invoke(app, ["ingest", "ecb", "energy_charts", "omie", "--check"])
    assert result.exit_code == 2, result.output
    ecb, charts, omie = result.stdout.splitlines()
    assert ecb == (f"ecb: failing: no key needed; {httpserver.url_for('/eurofxref-daily.xml')}"
                   ": HTTP 500 (the service is failing)")
    assert charts == (f"energy_charts: ok: no key needed; "
                      f"{httpserver.url_for('/price')}?bzn=DE-LU: HTTP 200")
    # the redirect is followed: its target's 404 is the answer
    assert omie.startswith("omie: failing: no key needed; ") and omie.endswith(
        ": HTTP 404 (the service is failing)"), omie
    assert [entry.path for entry, _ in httpserver.log].count("/") == 0


def test_a_keyless_probe_answered_401_is_failing_not_a_refused_key(
        httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """ECB takes no key and none was sent: a 401 or 403 is the service refusing the request
    (it said `key refused: no key needed` before)."""
    httpserver.expect_request("/eurofxref-daily.xml").respond_with_data("", status=401)
    monkeypatch.setenv("SCORECARD_ECB_BASE_URL", httpserver.url_for(""))
    result = runner.invoke(app, ["ingest", "ecb", "--check"])
    assert result.exit_code == 2, result.output
    assert result.stdout == (f"ecb: failing: no key needed; "
                             f"{httpserver.url_for('/eurofxref-daily.xml')}: HTTP 401 (the "
                             "service refuses the request)\n")


def test_check_sends_the_key_and_says_when_it_is_refused(
        httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Electricity Maps' key goes in the auth-token header, ENTSO-E's in securityToken: a
    401/403 says the key is refused, and the key is in no line."""
    key = "s3cr3t-token-value"
    httpserver.expect_request("/v4/carbon-intensity/latest", query_string="zone=FR",
                              headers={"auth-token": key}).respond_with_data("", status=403)
    httpserver.expect_request("/api", query_string={
        "documentType": "A44", "in_Domain": "10YFR-RTE------C",
        "out_Domain": "10YFR-RTE------C", "periodStart": "202501010000",
        "periodEnd": "202501020000", "securityToken": key}).respond_with_data("<ok/>")
    for name in ("ELECTRICITY_MAPS", "ENTSOE"):
        monkeypatch.setenv(f"SCORECARD_{name}_BASE_URL", httpserver.url_for(""))
    monkeypatch.setenv("ELECTRICITYMAPS_API_KEY", key)
    monkeypatch.setenv("ENTSOE_API_KEY", key)
    result = runner.invoke(app, ["ingest", "electricity_maps", "entsoe", "--check"])
    assert result.exit_code == 2, result.output
    maps, entsoe = result.stdout.splitlines()
    assert maps == ("electricity_maps: key refused: ELECTRICITYMAPS_API_KEY set; "
                    f"{httpserver.url_for('/v4/carbon-intensity/latest')}?zone=FR: HTTP 403 "
                    "(the key is refused)")
    assert entsoe.startswith("entsoe: ok: ENTSOE_API_KEY set; ") and entsoe.endswith(
        "&securityToken=***: HTTP 200"), entsoe
    assert key not in result.output


def test_off_a_terminal_each_source_prints_a_plain_line_as_it_starts(tmp_path: Path) -> None:
    # CliRunner is not a terminal: one line per source as it starts, then the summary
    result = runner.invoke(app, ["ingest", "ecb", "scaleway", "--offline", "--vintage",
                                 "2026-10", "--db", str(tmp_path / "s.duckdb")])
    lines = result.stderr.splitlines()
    assert lines[:2] == ["ecb: reading stored snapshots ...",
                         "scaleway: reading stored snapshots ..."], lines
    assert "ecb: none: no stored snapshots for vintage 2026-10" in lines
