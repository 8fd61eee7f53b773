"""What the store keeps so a rerun does not redo work whose inputs have not changed: which
bundled load came from exactly the packaged files and the code that read them
(`bundled_checks`), and the charts already rendered from a Vega-Lite spec (`cache__chart_svg`).
Both are keyed by content (sha256), so a changed input is never answered from the cache."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

import duckdb

_DDL = (
    """CREATE TABLE IF NOT EXISTS bundled_checks (
        load_id VARCHAR PRIMARY KEY, reader_sha256 VARCHAR NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS cache__chart_svg (
        key VARCHAR PRIMARY KEY, svg VARCHAR NOT NULL, used_at_utc TIMESTAMPTZ NOT NULL)""",
)
#: the rendered charts kept: the most recently used (a report has about ten)
CHARTS_KEPT = 200


def ensure(con: duckdb.DuckDBPyConnection) -> None:
    for ddl in _DDL:
        con.execute(ddl)


def latest_bundled_load(con: duckdb.DuckDBPyConnection, source: str, vintage: str
                        ) -> tuple[str | None, set[str], str | None]:
    """The latest successful load of `source` for `vintage`: its id, the sha256 of each
    snapshot it read, and the reader digest recorded with it (None when not recorded). A store
    without the meta tables (never written) has none."""
    try:
        rows = con.execute(
            "WITH latest AS (SELECT load_id FROM loads WHERE source = ? AND vintage = ? "
            "AND status = 'ok' ORDER BY started_at_utc DESC LIMIT 1) "
            "SELECT latest.load_id, l.snapshot_sha256, c.reader_sha256 FROM latest "
            "JOIN load_snapshots l USING (load_id) "
            "LEFT JOIN bundled_checks c USING (load_id)", [source, vintage]).fetchall()
    except duckdb.CatalogException:
        return None, set(), None
    if not rows:
        return None, set(), None
    return rows[0][0], {sha for _, sha, _ in rows}, rows[0][2]


def record_bundled_check(con: duckdb.DuckDBPyConnection, load_id: str, reader_sha256: str
                         ) -> None:
    con.execute("INSERT OR REPLACE INTO bundled_checks VALUES (?, ?)", [load_id, reader_sha256])


class ChartCache(MutableMapping[str, str]):
    """Rendered SVGs by spec key, in the store: `reports.figures.charts.rendering_cache` reads and
    fills it. Writing keeps the CHARTS_KEPT most recently used."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def __getitem__(self, key: str) -> str:
        rows = self.con.execute("SELECT svg FROM cache__chart_svg WHERE key = ?",
                                [key]).fetchall()
        if not rows:
            raise KeyError(key)
        self.con.execute("UPDATE cache__chart_svg SET used_at_utc = now() WHERE key = ?",
                         [key])
        return str(rows[0][0])

    def __setitem__(self, key: str, svg: str) -> None:
        self.con.execute("INSERT OR REPLACE INTO cache__chart_svg VALUES (?, ?, now())",
                         [key, svg])
        self.con.execute(
            "DELETE FROM cache__chart_svg WHERE key NOT IN (SELECT key FROM cache__chart_svg "
            "ORDER BY used_at_utc DESC LIMIT ?)", [CHARTS_KEPT])

    def __delitem__(self, key: str) -> None:
        self.con.execute("DELETE FROM cache__chart_svg WHERE key = ?", [key])

    def __iter__(self) -> Iterator[str]:
        return iter([key for (key,) in
                     self.con.execute("SELECT key FROM cache__chart_svg").fetchall()])

    def __len__(self) -> int:
        return int(self.con.execute("SELECT count(*) FROM cache__chart_svg").fetchall()[0][0])
