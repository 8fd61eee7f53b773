"""`out__scorecard`: each rendered scorecard, per vintage and proposal, so next month's run can
be diffed against this month's."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

import duckdb


def save_scorecard(con: duckdb.DuckDBPyConnection, result: dict[str, Any],
                   proposal_text: str, document: str) -> None:
    """Keep `document` (the result's JSON) as the scorecard of its vintage and proposal,
    replacing an earlier one."""
    con.execute(
        "INSERT OR REPLACE INTO out__scorecard (vintage, proposal, proposal_sha256, "
        "generated_at_utc, candidates_json) VALUES (?, ?, ?, ?, ?)",
        [result["vintage"], result["proposal"],
         hashlib.sha256(proposal_text.encode()).hexdigest(),
         datetime.fromisoformat(result["generated_at"]), document],
    )


def stored_scorecard(con: duckdb.DuckDBPyConnection, vintage: str, proposal: str
                     ) -> dict[str, Any] | None:
    """The scorecard stored for `vintage` and `proposal`, parsed, if any."""
    rows = con.execute("SELECT candidates_json FROM out__scorecard WHERE vintage = ? AND "
                       "proposal = ?", [vintage, proposal]).fetchall()
    return json.loads(rows[0][0]) if rows else None


def previous_vintage(con: duckdb.DuckDBPyConnection, vintage: str, proposal: str
                     ) -> str | None:
    """The latest vintage before `vintage` with a stored scorecard of this proposal (what
    `scorecard run` compares with to add the change-since-last-vintage section)."""
    rows = con.execute("SELECT max(vintage) FROM out__scorecard WHERE proposal = ? AND "
                       "vintage < ?", [proposal, vintage]).fetchall()
    found: str | None = rows[0][0]
    return found
