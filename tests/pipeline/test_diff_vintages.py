"""`scorecard diff` says when a vintage has no data of its own for a source and whose rows it
used, so a failed month never reads as "nothing changed"."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.store.vintages import SourceVintage, sources_of

runner = CliRunner()


def _load(con: duckdb.DuckDBPyConnection, load_id: str, source: str, vintage: str,
          status: str, error: str | None = None) -> None:
    con.execute("INSERT INTO loads (load_id, source, vintage, started_at_utc, status, error) "
                "VALUES (?, ?, ?, now(), ?, ?)", [load_id, source, vintage, status, error])


def test_a_failed_month_says_whose_rows_it_used(db: Path) -> None:
    assert runner.invoke(app, ["run", "--db", str(db), "--json"]).exit_code == 0
    con = duckdb.connect(str(db))
    # ecb loaded for October; its November ingest failed; the bundled data is October's
    _load(con, "ecb-10", "ecb", "2026-10", "ok")
    _load(con, "ecb-11", "ecb", "2026-11", "failed", "HTTP 503 from data-api.ecb.europa.eu")
    assert sources_of(con, "2026-11") == [
        SourceVintage("bundled", "2026-10", None),
        SourceVintage("ecb", "2026-10", "HTTP 503 from data-api.ecb.europa.eu")]
    assert sources_of(con, "2026-10") == [SourceVintage("bundled", "2026-10", None),
                                          SourceVintage("ecb", "2026-10", None)]
    con.close()
    result = runner.invoke(app, ["diff", "2026-10", "2026-11", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    notes = document["notes"]
    assert ("2026-11 has no data of its own from ecb (its 2026-11 load failed: HTTP 503 from "
            "data-api.ecb.europa.eu): its rows are 2026-10's") in notes
    assert "2026-11 has no data of its own from bundled: its rows are 2026-10's" in notes
    assert ("the market data of 2026-10 and 2026-11 are identical for every input group, "
            "because 2026-11 reuses earlier rows for bundled, ecb") in notes
    assert document["rows_used"] == {"2026-10": {"bundled": "2026-10", "ecb": "2026-10"},
                                     "2026-11": {"bundled": "2026-10", "ecb": "2026-10"}}


def test_a_source_that_failed_with_no_earlier_rows_is_named(db: Path) -> None:
    """A source whose first load ever failed lends no rows, so the note above (whose rows a
    month used) cannot name it: the diff still says it failed, with its error."""
    assert runner.invoke(app, ["run", "--db", str(db), "--json"]).exit_code == 0
    con = duckdb.connect(str(db))
    _load(con, "ecb-11", "ecb", "2026-11", "failed", "HTTP 503 from data-api.ecb.europa.eu")
    _load(con, "aws-10", "aws", "2026-10", "failed", "HTTP 500")  # another month's failure
    con.close()
    result = runner.invoke(app, ["diff", "2026-10", "2026-11", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert ("2026-11 has no data from ecb: its 2026-11 load failed (HTTP 503 from "
            "data-api.ecb.europa.eu) and no earlier month has its rows") in notes
    assert ("2026-10 has no data from aws: its 2026-10 load failed (HTTP 500) and no "
            "earlier month has its rows") in notes
    assert not any("2026-11 has no data from aws" in note for note in notes)
