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
    httpserver.expect_request("/").respond_with_data("ok")
    monkeypatch.setenv("SCORECARD_ECB_BASE_URL", httpserver.url_for("/"))
    monkeypatch.setenv("SCORECARD_SCALEWAY_BASE_URL", CLOSED)
    db = tmp_path / "s.duckdb"
    result = runner.invoke(app, ["ingest", "ecb", "scaleway", "--check", "--db", str(db)])
    assert result.exit_code == 2, result.output  # scaleway does not answer
    lines = result.stdout.splitlines()
    assert lines[0] == f"ecb: ok: no key needed; {httpserver.url_for('/')}: HTTP 200"
    assert lines[1].startswith(f"scaleway: unreachable: no key needed; {CLOSED}: no answer")
    assert not db.exists()  # nothing opened, nothing loaded
    assert len(httpserver.log) == 1


def test_check_names_a_missing_key(httpserver: HTTPServer,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    httpserver.expect_request("/").respond_with_data("", status=404)  # a host that answers
    monkeypatch.setenv("SCORECARD_ELECTRICITY_MAPS_BASE_URL", httpserver.url_for("/"))
    monkeypatch.delenv("ELECTRICITYMAPS_API_KEY", raising=False)
    result = runner.invoke(app, ["ingest", "electricity_maps", "--check"])
    assert result.exit_code == 2
    assert result.stdout.startswith("electricity_maps: not configured: ELECTRICITYMAPS_API_KEY "
                                    "not set"), result.stdout
    assert "HTTP 404" in result.stdout


def test_off_a_terminal_each_source_prints_a_plain_line_as_it_starts(tmp_path: Path) -> None:
    # CliRunner is not a terminal: one line per source as it starts, then the summary
    result = runner.invoke(app, ["ingest", "ecb", "scaleway", "--offline", "--vintage",
                                 "2026-10", "--db", str(tmp_path / "s.duckdb")])
    lines = result.stderr.splitlines()
    assert lines[:2] == ["ecb: reading stored snapshots ...",
                         "scaleway: reading stored snapshots ..."], lines
    assert "ecb: none: no stored snapshots for vintage 2026-10" in lines
