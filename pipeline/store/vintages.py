"""Which vintage's rows each source gives a vintage: a vintage sees every row loaded for a
vintage up to it, so a source with no good load of its own that month lends an earlier one's
rows (what `scorecard diff` says in words); and how much of its month a vintage's own data
can cover (a December ingested on the 2nd covers 2 of 31 days)."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, date

import duckdb

from pipeline.store.snapshots import relation_kind


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


def failed_without_rows(con: duckdb.DuckDBPyConnection, vintage: str) -> dict[str, str]:
    """Per source whose latest load of `vintage` failed and that has no good load up to it
    (no rows to lend, so `sources_of` does not name it): that load's error."""
    return dict(con.execute(
        "SELECT source, arg_max(error, started_at_utc) FROM loads WHERE vintage = ? "
        "GROUP BY source HAVING arg_max(status, started_at_utc) = 'failed' AND source NOT IN "
        "(SELECT source FROM loads WHERE status = 'ok' AND vintage <= ?) ORDER BY source",
        [vintage, vintage]).fetchall())


@dataclass(frozen=True)
class Coverage:
    """How much of its month a vintage's own market data can cover: its loads fetched up to
    `through` (UTC day), `days` of the month's `days_in_month` (the fetch day counted)."""

    through: date
    days: int
    days_in_month: int

    @property
    def share(self) -> float:
        return self.days / self.days_in_month

    @property
    def partial(self) -> bool:
        return self.days < self.days_in_month


def coverage(con: duckdb.DuckDBPyConnection, vintage: str) -> Coverage | None:
    """The coverage of the vintage's own good loads of market sources (the bundled data
    aside): the latest time one of their responses was fetched (a load recorded before
    `load_fetches` existed counts from its start); None when it has none."""
    fetched = ("(SELECT max(f.fetched_at_utc) FROM load_fetches f WHERE f.load_id = "
               "l.load_id)" if relation_kind(con, "load_fetches") else "NULL")
    row = con.execute(
        f"SELECT max(coalesce({fetched}, l.started_at_utc)) FROM loads l "
        "WHERE l.status = 'ok' AND l.vintage = ? AND l.source <> 'bundled'",
        [vintage]).fetchone()
    latest = None if row is None else row[0]
    if latest is None:
        return None
    year, month = (int(p) for p in vintage.split("-"))
    first, days_in_month = date(year, month, 1), calendar.monthrange(year, month)[1]
    day = latest.astimezone(UTC).date()
    days = min(days_in_month, max(0, (day - first).days + 1))
    return Coverage(day, days, days_in_month)
