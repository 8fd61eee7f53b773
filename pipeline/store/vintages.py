"""Which vintage's rows each source gives a vintage: a vintage sees every row loaded for a
vintage up to it, so a source with no good load of its own that month lends an earlier one's
rows (what `scorecard diff` says in words)."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb


@dataclass(frozen=True)
class SourceVintage:
    source: str
    used: str  # the vintage whose rows the source gives (its latest good load up to it)
    failed: str | None  # the error of the source's last failed load of the vintage itself


def sources_of(con: duckdb.DuckDBPyConnection, vintage: str) -> list[SourceVintage]:
    """Per source with a good load up to `vintage`: the latest such vintage, and why the
    vintage itself has none when a load of it failed."""
    rows = con.execute(
        "SELECT source, max(vintage) FROM loads WHERE status = 'ok' AND vintage <= ? "
        "GROUP BY source ORDER BY source", [vintage]).fetchall()
    failed = dict(con.execute(
        "SELECT source, arg_max(error, started_at_utc) FROM loads WHERE status = 'failed' "
        "AND vintage = ? GROUP BY source", [vintage]).fetchall())
    return [SourceVintage(source, used, failed.get(source) if used != vintage else None)
            for source, used in rows]
