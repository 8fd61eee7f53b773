"""`scorecard ingest` says what happened briefly: notes folded by kind with a count (each one,
URL included, with --verbose), a "nothing to load" failure naming each answer's zone, fetch day
and URL, and `scorecard sources` showing the last attempt and its error beside the last good
load. The CLI, a real store and a real local HTTP server serving a recorded Electricity Maps
answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.ingest.notes import fold
from sources.market.electricity_maps import DEFAULT_ZONES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
runner = CliRunner()
MARKED = 3  # hours of each answer marked estimated below


def _serve_every_zone(httpserver: HTTPServer) -> None:
    """The recorded FR history (24 hours from 2026-11-26 09:00 UTC), answered for each of the
    13 default zones under its own zone code. Its last 2 hours are estimated as recorded; the
    first 3 are marked estimated too, so each answer has 5 estimates of 24."""
    recorded = json.loads((FIXTURES / "electricity_maps" / "history_FR_2026-11-27.json")
                          .read_text(encoding="utf-8"))
    assert [h["isEstimated"] for h in recorded["history"]] == [False] * 22 + [True] * 2
    for zone in DEFAULT_ZONES:
        body = json.loads(json.dumps(recorded).replace('"FR"', json.dumps(zone)))
        for hour in body["history"][:MARKED]:
            hour["isEstimated"] = True
        httpserver.expect_request("/v4/carbon-intensity/history", query_string={
            "zone": zone, "disableCallerLookup": "true", "emissionFactorType": "lifecycle",
        }).respond_with_json(body)


@pytest.fixture
def maps(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    _serve_every_zone(httpserver)
    monkeypatch.setenv("SCORECARD_ELECTRICITY_MAPS_BASE_URL",
                       httpserver.url_for("").rstrip("/"))
    monkeypatch.setenv("ELECTRICITYMAPS_API_KEY", "test-key")
    return tmp_path / "s.duckdb"


def test_notes_are_folded_by_kind_and_listed_with_verbose(maps: Path) -> None:
    args = ["ingest", "electricity_maps", "--vintage", "2026-11", "--db", str(maps)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "electricity_maps: loaded, 312 rows from 13 snapshot(s)" in result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("    note:")]
    # 13 answers x 5 estimated of 24 hours: 65 of 312, one line instead of 13 with URLs
    assert notes == ["    note: 65 of 312 value(s) are estimates (13 responses)"], notes
    verbose = runner.invoke(app, [*args, "--verbose"])  # the same bytes: unchanged
    assert verbose.exit_code == 0, verbose.output
    listed = [line for line in verbose.stderr.splitlines() if line.startswith("    note:")]
    assert len(listed) == 13 and all("/v4/carbon-intensity/history?zone=" in line and
                                     line.endswith(": 5 of 24 value(s) are estimates")
                                     for line in listed), listed


def test_nothing_to_load_names_zone_day_and_url_and_sources_shows_the_attempt(
        maps: Path, httpserver: HTTPServer) -> None:
    """The same answers for December hold no December hour: the failure names the answers
    (it said "(all snapshots): (rows): nothing to load"); `sources` shows that attempt and its
    error beside November's good load."""
    good = runner.invoke(app, ["ingest", "electricity_maps", "--vintage", "2026-11", "--db",
                               str(maps)])
    assert good.exit_code == 0, good.output
    result = runner.invoke(app, ["ingest", "electricity_maps", "--vintage", "2026-12",
                                 "--db", str(maps)])
    assert result.exit_code == 2, result.output
    failed = next(line for line in result.stderr.splitlines()
                  if line.startswith("electricity_maps: failed"))
    url = httpserver.url_for("/v4/carbon-intensity/history")
    when = r"fetched \d{4}-\d\d-\d\d \d\d:\d\d UTC from "
    assert re.fullmatch(
        r"electricity_maps: failed: parse error: 13 answer\(s\): vintage "
        r"2026-12: nothing to load: none holds a row of 2026-12 \("
        + "; ".join(f"zone {zone}, {when}{re.escape(url)}\\?zone={zone}&disableCallerLookup="
                    "true&emissionFactorType=lifecycle" for zone in DEFAULT_ZONES[:3])
        + r"; and 10 more\)", failed), failed
    listing = runner.invoke(app, ["sources", "--db", str(maps)])
    assert listing.exit_code == 0, listing.output
    lines = listing.stdout.splitlines()
    at = lines.index("electricity_maps: provides core__grid_intensity")
    assert re.fullmatch(r"  last good load: .* UTC \(vintage 2026-11, 312 rows\)", lines[at + 3])
    # the source named once: the line's own name, not the error's again
    assert re.fullmatch(r"  last attempt: .* UTC \(vintage 2026-12\): failed: parse error: "
                        r"13 answer\(s\): vintage 2026-12: nothing to load: "
                        r"none holds a row of 2026-12 \(zone FR, .*; and 10 more\)",
                        lines[at + 4]), lines[at + 4]
    ecb = lines.index("ecb: provides core_ecb__fx_rates")
    assert lines[ecb + 3:ecb + 5] == ["  last good load: never", "  last attempt: never"]


def test_a_parse_failure_names_the_zone_the_url_and_the_fetch_time(
        httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """ES answers with its `datetime` field renamed: the failure names ES's URL (its zone)
    and when that answer was fetched."""
    httpserver.expect_request("/v4/carbon-intensity/history", query_string={
        "zone": "ES", "disableCallerLookup": "true", "emissionFactorType": "lifecycle",
    }).respond_with_json({"zone": "ES", "history": [{
        "zone": "ES", "carbonIntensity": 120, "time": "2026-11-26T09:00:00.000Z",
        "emissionFactorType": "lifecycle"}]})
    _serve_every_zone(httpserver)
    monkeypatch.setenv("SCORECARD_ELECTRICITY_MAPS_BASE_URL",
                       httpserver.url_for("").rstrip("/"))
    monkeypatch.setenv("ELECTRICITYMAPS_API_KEY", "test-key")
    result = runner.invoke(app, ["ingest", "electricity_maps", "--vintage", "2026-11",
                                 "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 2, result.output
    failed = next(line for line in result.stderr.splitlines()
                  if line.startswith("electricity_maps: failed"))
    url = httpserver.url_for("/v4/carbon-intensity/history")
    assert re.fullmatch(
        r"electricity_maps: failed: parse error: " + re.escape(url)
        + r"\?zone=ES&disableCallerLookup=true&emissionFactorType=lifecycle: \[0\]\.datetime: "
        r"missing \(answer fetched \d{4}-\d\d-\d\d \d\d:\d\d UTC\)", failed), failed


def test_fold_sums_numbers_of_one_kind_and_keeps_other_kinds_apart() -> None:
    notes = ["https://a/x?zone=FR: 3 of 24 value(s) are estimates",
             "https://a/x?zone=DE: 1 of 23 value(s) are estimates",
             "FR: 2 interval(s) without a price (null) skipped",
             "DE-LU: 5 interval(s) without a price (null) skipped",
             "H100-1-80G: MIG profile '1g.10gb' (a GPU slice) skipped",
             "unmapped countries skipped: ['XKX']"]
    assert fold(notes) == [
        "4 of 47 value(s) are estimates (2 responses)",  # 3 + 1 of 24 + 23
        "7 interval(s) without a price (null) skipped (FR, DE-LU)",  # 2 + 5
        "H100-1-80G: MIG profile '1g.10gb' (a GPU slice) skipped",
        "unmapped countries skipped: ['XKX']"]
