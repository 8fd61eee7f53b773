"""The scorecard's JSON: compact above a size (the indenting encoder is pure Python), always
strict, and stored once in the store (a published scorecard reads its run's document)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.workspace import INDENT_MAX_CHARS, dumps
from schemas.result import Result

runner = CliRunner()
EXAMPLE = resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8")


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_a_big_document_is_written_compact_and_a_small_one_indented() -> None:
    # one string of INDENT_MAX_CHARS characters: compact, the document is that string, its
    # key, the braces, quotes and colon: {"k":"xxx..."} = INDENT_MAX_CHARS + 8 characters,
    # over the limit; with 100 characters fewer it is under and indented ('{\n  "k": ...')
    big = {"k": "x" * INDENT_MAX_CHARS, "a": [1.5, None]}
    text = dumps(big)
    assert "\n" not in text[:-1] and text.endswith("\n")
    assert text.startswith('{"a":[1.5,null],"k":"xxx')  # sorted keys, no spaces
    assert _strict(text) == big
    small = {"k": "x" * (INDENT_MAX_CHARS - 100), "a": [1.5, None]}
    assert dumps(small).startswith('{\n  "a": [\n    1.5,')
    assert _strict(dumps(small)) == small
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps({"k": "x" * INDENT_MAX_CHARS, "nan": float("nan")})


def _documents(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    con = duckdb.connect(str(db))
    try:
        runs = con.execute("SELECT proposal_sha256, candidates_json FROM out__scorecard_run"
                           ).fetchall()
        published = con.execute("SELECT proposal_sha256, candidates_json FROM out__scorecard"
                                ).fetchall()
    finally:
        con.close()
    return runs, published


def _generated_at(db: Path, vintage: str, proposal: str) -> str:
    con = duckdb.connect(str(db))
    try:
        document = store.stored_scorecard(con, vintage, proposal)
    finally:
        con.close()
    assert document is not None
    return Result.model_validate_json(document).generated_at


def test_a_published_run_is_stored_once_and_kept_when_its_run_is_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db, proposal = tmp_path / "s.duckdb", tmp_path / "proposal.toml"
    proposal.write_text(EXAMPLE)
    first = runner.invoke(app, ["run", str(proposal), "--db", str(db)])
    assert first.exit_code == 0, first.output
    [(sha, document)], [(published_sha, copy)] = _documents(db)
    # the published row names the run and holds no second copy of its document
    assert (published_sha, copy) == (sha, None)
    doc = _strict(document)
    assert _generated_at(db, doc["vintage"], doc["proposal"]) == doc["generated_at"]

    # a later run of the same proposal that does not publish (a --json run) replaces the run
    # of that identity, not the published scorecard: the published row now keeps the first
    # document itself (generated later, so the two documents differ)
    later = Result.model_validate_json(document).model_copy(
        update={"generated_at": "2999-01-01T00:00:00+00:00"})
    con = duckdb.connect(str(db))
    store.save_run(con, later, sha, str(proposal), dumps(later.document()))
    con.close()
    [(_, replaced)], [(_, kept)] = _documents(db)
    assert kept == document and replaced != document
    assert _generated_at(db, doc["vintage"], doc["proposal"]) == doc["generated_at"]

    # publishing again stores it once again
    third = runner.invoke(app, ["run", str(proposal), "--db", str(db)])
    assert third.exit_code == 0, third.output
    [(_, latest)], [(_, none)] = _documents(db)
    assert none is None
    assert _generated_at(db, doc["vintage"], doc["proposal"]) == _strict(latest)["generated_at"]


def test_a_store_whose_published_rows_hold_their_document_is_read_and_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a store made before: out__scorecard.candidates_json NOT NULL, a row with its own copy
    monkeypatch.chdir(tmp_path)
    db, proposal = tmp_path / "s.duckdb", tmp_path / "proposal.toml"
    proposal.write_text(EXAMPLE)
    assert runner.invoke(app, ["run", str(proposal), "--db", str(db), "--json"]).exit_code == 0
    con = duckdb.connect(str(db))
    [(sha, document)] = con.execute(
        "SELECT proposal_sha256, candidates_json FROM out__scorecard_run").fetchall()
    doc = _strict(document)
    con.execute("DROP TABLE out__scorecard")
    con.execute("""CREATE TABLE out__scorecard (
        vintage VARCHAR NOT NULL, proposal VARCHAR NOT NULL, proposal_sha256 VARCHAR NOT NULL,
        generated_at_utc TIMESTAMPTZ NOT NULL, candidates_json VARCHAR NOT NULL,
        PRIMARY KEY (vintage, proposal))""")
    con.execute("INSERT INTO out__scorecard VALUES (?, ?, ?, now(), ?)",
                [doc["vintage"], doc["proposal"], sha, document])
    con.close()
    assert _generated_at(db, doc["vintage"], doc["proposal"]) == doc["generated_at"]
    published = runner.invoke(app, ["run", str(proposal), "--db", str(db)])
    assert published.exit_code == 0, published.output
    [(_, latest)], [(_, none)] = _documents(db)
    assert none is None
    assert _generated_at(db, doc["vintage"], doc["proposal"]) == _strict(latest)["generated_at"]


def _queries(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every statement this connection ran since `CALL enable_logging('QueryLog')`, in order
    (DuckDB's own query log)."""
    return [m for (m,) in con.execute("SELECT message FROM duckdb_logs WHERE type = 'QueryLog' "
                                      "ORDER BY timestamp").fetchall()]


def test_an_old_store_is_upgraded_once_when_opened_and_a_publishing_run_checks_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a store made before published rows read their run (out__scorecard.candidates_json NOT
    # NULL): opening it drops the constraint, once; a current store is only looked at, and
    # saving a published run runs no DDL and no catalogue query
    monkeypatch.chdir(tmp_path)
    db, proposal = tmp_path / "s.duckdb", tmp_path / "proposal.toml"
    proposal.write_text(EXAMPLE)
    assert runner.invoke(app, ["run", str(proposal), "--db", str(db), "--json"]).exit_code == 0
    con = duckdb.connect(str(db))
    [(sha, document)] = con.execute(
        "SELECT proposal_sha256, candidates_json FROM out__scorecard_run").fetchall()
    con.execute("DROP TABLE out__scorecard")
    con.execute("""CREATE TABLE out__scorecard (
        vintage VARCHAR NOT NULL, proposal VARCHAR NOT NULL, proposal_sha256 VARCHAR NOT NULL,
        generated_at_utc TIMESTAMPTZ NOT NULL, candidates_json VARCHAR NOT NULL,
        PRIMARY KEY (vintage, proposal))""")
    con.close()

    def nullable(con: duckdb.DuckDBPyConnection) -> str:
        return str(con.execute("SELECT is_nullable FROM information_schema.columns WHERE "
                               "table_name = 'out__scorecard' AND column_name = "
                               "'candidates_json'").fetchall()[0][0])

    con = duckdb.connect(str(db))
    con.execute("CALL enable_logging('QueryLog')")
    store.ensure_tables(con, ())
    upgraded = _queries(con)
    assert [q for q in upgraded if q.upper().startswith(("ALTER", "DROP"))] == [
        "ALTER TABLE out__scorecard ALTER COLUMN candidates_json DROP NOT NULL"]
    assert nullable(con) == "YES"
    con.close()

    con = duckdb.connect(str(db))  # opened again: current now
    con.execute("CALL enable_logging('QueryLog')")
    store.ensure_tables(con, ())
    assert not [q for q in _queries(con) if q.upper().startswith(("ALTER", "DROP"))]
    before = len(_queries(con))
    result = Result.model_validate_json(document)
    store.save_run(con, result, sha, str(proposal), document, publish=True)
    saved = _queries(con)[before + 1:]  # after the count query itself
    assert [q.split()[0].upper() for q in saved] == ["BEGIN", "INSERT", "INSERT", "COMMIT"]
    assert con.execute("SELECT proposal_sha256, candidates_json FROM out__scorecard"
                       ).fetchall() == [(sha, None)]
    con.close()
