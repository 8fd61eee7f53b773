"""Stored scorecards. `out__scorecard_run`: every run, keyed by vintage and proposal identity
(its name and the sha256 of the parsed proposal), so a what-if variant never overwrites another
run. `out__scorecard`: the published one of each vintage and proposal name, what next month's
run and `scorecard diff` compare with; only a publishing run replaces it (`pipeline.run`
decides which run publishes). Both tables are made, and an older store's upgraded, when the
store is opened (`pipeline.store.db.ensure_tables`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import duckdb

from pipeline.store.transactions import rollback

if TYPE_CHECKING:  # a store opened to add evidence need not build the result's models
    from schemas.result import Result


@dataclass(frozen=True)
class StoredRun:
    """Which stored run a figure comes from: what `diff` and `run` name."""

    vintage: str
    proposal: str
    proposal_sha256: str
    source: str | None  # the proposal file it was run from (None: stored before sources)
    generated_at: str

    def describe(self) -> str:
        source = self.source or ""
        # a source in parentheses says what the proposal was, not a file: "(bundled example
        # example_proposal.toml)" goes inside this sentence's parentheses without its own
        where = (f", {source[1:-1]}" if source.startswith("(") and source.endswith(")")
                 else f" from {source}" if source else "")
        return (f"the scorecard published for {self.vintage} of {self.proposal!r} (proposal "
                f"sha256 {self.proposal_sha256[:12]}{where}, generated {self.generated_at})")


def save_run(con: duckdb.DuckDBPyConnection, result: Result, proposal_sha256: str,
             source: str, document: str, *, publish: bool = False) -> None:
    """Keep `document` (the result's JSON) as the run of its vintage and proposal identity
    (replacing only a run of the same identity), and with `publish` make it the published
    scorecard of its vintage and proposal name, in one transaction.

    The document is stored once: a published row holds no copy (`candidates_json` NULL) and
    reads the run of its identity. A run that replaces that run without publishing first
    gives the published row its own copy, so the published scorecard stays what it was."""
    key = [result.vintage, result.proposal, proposal_sha256]
    generated = datetime.fromisoformat(result.generated_at)
    con.execute("BEGIN TRANSACTION")
    try:
        if not publish:
            con.execute(
                "UPDATE out__scorecard p SET candidates_json = r.candidates_json FROM "
                "out__scorecard_run r WHERE p.candidates_json IS NULL AND r.vintage = "
                "p.vintage AND r.proposal = p.proposal AND r.proposal_sha256 = "
                "p.proposal_sha256 AND p.vintage = ? AND p.proposal = ? AND "
                "p.proposal_sha256 = ?", key)
        con.execute(
            "INSERT OR REPLACE INTO out__scorecard_run (vintage, proposal, proposal_sha256, "
            "proposal_source, generated_at_utc, candidates_json) VALUES (?, ?, ?, ?, ?, ?)",
            [*key, source, generated, document])
        if publish:
            con.execute(
                "INSERT OR REPLACE INTO out__scorecard (vintage, proposal, proposal_sha256, "
                "generated_at_utc, candidates_json) VALUES (?, ?, ?, ?, NULL)",
                [*key, generated])
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def save_scorecard(con: duckdb.DuckDBPyConnection, result: Result,
                   proposal_text: str, document: str, *, proposal_sha256: str | None = None,
                   source: str = "(unknown)") -> None:
    """Store `document` as a run and publish it (identity: `proposal_sha256`, else the
    sha256 of the proposal's text)."""
    sha = proposal_sha256 or hashlib.sha256(proposal_text.encode()).hexdigest()
    save_run(con, result, sha, source, document, publish=True)


def published(con: duckdb.DuckDBPyConnection, vintage: str, proposal: str
              ) -> StoredRun | None:
    """Which run is published for `vintage` and `proposal`, if any."""
    rows = con.execute(
        "SELECT p.proposal_sha256, r.proposal_source, "
        "strftime(p.generated_at_utc AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S+00:00') "
        "FROM out__scorecard p LEFT JOIN out__scorecard_run r USING (vintage, proposal, "
        "proposal_sha256) WHERE p.vintage = ? AND p.proposal = ?", [vintage, proposal]
    ).fetchall()
    if not rows:
        return None
    sha, source, generated = rows[0]
    return StoredRun(vintage, proposal, sha, source, generated)


def stored_scorecard(con: duckdb.DuckDBPyConnection, vintage: str, proposal: str
                     ) -> str | None:
    """The scorecard published for `vintage` and `proposal` (its JSON document, which
    `schemas.result.Result.model_validate_json` reads back), if any."""
    runs = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = "
                       "'out__scorecard_run'").fetchall()[0][0]
    # a store made before runs were kept holds every published document in its own row
    query = ("SELECT coalesce(p.candidates_json, r.candidates_json) FROM out__scorecard p "
             "LEFT JOIN out__scorecard_run r USING (vintage, proposal, proposal_sha256) "
             if runs else "SELECT p.candidates_json FROM out__scorecard p ")
    rows = con.execute(query + "WHERE p.vintage = ? AND p.proposal = ?",
                       [vintage, proposal]).fetchall()
    return None if not rows or rows[0][0] is None else str(rows[0][0])


def stored_runs(con: duckdb.DuckDBPyConnection, vintage: str, proposal: str
                ) -> list[tuple[str, str]]:
    """(proposal sha256, source) of every run stored for `vintage` and `proposal`."""
    return [(r[0], r[1]) for r in con.execute(
        "SELECT proposal_sha256, proposal_source FROM out__scorecard_run WHERE vintage = ? "
        "AND proposal = ? ORDER BY generated_at_utc", [vintage, proposal]).fetchall()]


def previous_vintage(con: duckdb.DuckDBPyConnection, vintage: str, proposal: str
                     ) -> str | None:
    """The latest vintage before `vintage` with a published scorecard of this proposal (what
    `scorecard run` compares with to add the change-since-last-vintage section)."""
    rows = con.execute("SELECT max(vintage) FROM out__scorecard WHERE proposal = ? AND "
                       "vintage < ?", [proposal, vintage]).fetchall()
    found: str | None = rows[0][0]
    return found


def bundled_only(con: duckdb.DuckDBPyConnection, bundled_source: str) -> bool:
    """Whether the store holds no successful load but the bundled reference data's."""
    rows = con.execute("SELECT count(*) FROM loads WHERE status = 'ok' AND source <> ?",
                       [bundled_source]).fetchall()
    return not rows[0][0]
