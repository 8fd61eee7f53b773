"""Commands that only read (`explain`, `sources`) open the store read-only, so they answer
while another real process holds it open to read; a writer (`run`) meanwhile waits, then
exits 1 on one line. (DuckDB lets no other process open a file a writer holds, read-only
or not: against a writer, readers wait and exit 1 as tests/pipeline/test_cli_errors.py
shows.)"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.ingest.bundled import is_loaded

runner = CliRunner()
CANDIDATE, METRIC = "onprem-fr-h200-fp8", "cpm_eur_per_mtok"


@contextmanager
def held_read_only(db: Path) -> Iterator[None]:
    """Another process (a real one) with the store open read-only until we let it go."""
    code = ("import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
            "print('held', flush=True); sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", code, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def test_explain_and_sources_answer_while_another_process_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "s.duckdb"
    first = runner.invoke(app, ["explain", CANDIDATE, METRIC, "--db", str(db), "--json"])
    assert first.exit_code == 0, first.output  # a new store: opened read-write, bundled loaded
    con = store.connect(db, read_only=True)
    assert is_loaded(con)
    con.close()
    monkeypatch.setenv("SCORECARD_STORE_WAIT_S", "1")
    with held_read_only(db):
        again = runner.invoke(app, ["explain", CANDIDATE, METRIC, "--db", str(db), "--json"])
        listed = runner.invoke(app, ["sources", "--db", str(db)])
        written = runner.invoke(app, ["run", "--db", str(db), "--json"])
    assert again.exit_code == 0, again.output
    # the same chain as the read-write open gave
    assert json.loads(again.stdout)["value"] == json.loads(first.stdout)["value"]
    assert listed.exit_code == 0, listed.output
    assert "bundled: reference data" in listed.stdout
    assert "last good load: never" in listed.stdout.split("bundled:")[0]  # nothing ingested
    # a writer cannot share the file with a reader: it waits 1 s and gives up, exit 1
    assert written.exit_code == 1
    assert "store in use by another scorecard process" in written.output


def test_explain_on_a_store_without_the_bundled_data_loads_it(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    store.connect(db).close()  # the tables, no load
    con = store.connect(db, read_only=True)
    assert not is_loaded(con)
    con.close()
    done = runner.invoke(app, ["explain", CANDIDATE, METRIC, "--db", str(db), "--json"])
    assert done.exit_code == 0, done.output
    con = store.connect(db, read_only=True)
    assert is_loaded(con)  # opened read-write to load it
    con.close()


def test_sources_reads_a_store_no_load_wrote_to(tmp_path: Path) -> None:
    import duckdb
    db = tmp_path / "s.duckdb"
    duckdb.connect(str(db)).close()  # a DuckDB file without our tables
    done = runner.invoke(app, ["sources", "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert "last good load: never" in done.stdout
