"""What the store keeps so a rerun does not redo work whose inputs have not changed: which
bundled load came from exactly the packaged files and the code that read them
(`bundled_checks`), the charts already rendered from a Vega-Lite spec (`cache__chart_svg`) and
the report's great-tables scorecard already rendered from the same inputs
(`cache__table_html`). All are keyed by content (sha256), so a changed input is never answered
from the cache."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping, Sequence

import duckdb

_DDL = (
    """CREATE TABLE IF NOT EXISTS bundled_checks (
        load_id VARCHAR PRIMARY KEY, reader_sha256 VARCHAR NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS cache__chart_svg (
        key VARCHAR PRIMARY KEY, svg VARCHAR NOT NULL, used_at_utc TIMESTAMPTZ NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS cache__table_html (
        key VARCHAR PRIMARY KEY, html VARCHAR NOT NULL, used_at_utc TIMESTAMPTZ NOT NULL)""",
)
#: the rendered charts kept: the most recently used (a report has about ten)
CHARTS_KEPT = 200
#: the rendered scorecard tables kept: the most recently used (a report has one)
TABLES_KEPT = 50


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


class _TextCache(MutableMapping[str, str]):
    """Rendered text by content key in one of the store's cache tables (key, text column,
    used_at_utc). Reading a key marks it used; writing keeps the `kept` most recently used."""

    table = ""
    column = ""
    kept = 0

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def __getitem__(self, key: str) -> str:
        found = self.get_many([key])
        if key not in found:
            raise KeyError(key)
        return found[key]

    def __setitem__(self, key: str, text: str) -> None:
        self.con.execute(f"INSERT OR REPLACE INTO {self.table} VALUES (?, ?, now())",
                         [key, text])
        self.con.execute(
            f"DELETE FROM {self.table} WHERE key NOT IN (SELECT key FROM {self.table} "
            "ORDER BY used_at_utc DESC LIMIT ?)", [self.kept])

    def __delitem__(self, key: str) -> None:
        self.con.execute(f"DELETE FROM {self.table} WHERE key = ?", [key])

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The texts of those `keys` that are kept, each marked used: one query and one
        update for a report's charts instead of two per chart (each an autocommit)."""
        if not keys:
            return {}
        found = {key: str(text) for key, text in self.con.execute(
            f"SELECT key, {self.column} FROM {self.table} WHERE key IN (SELECT unnest(?))",
            [list(keys)]).fetchall()}
        if found:
            self.con.execute(f"UPDATE {self.table} SET used_at_utc = now() "
                             "WHERE key IN (SELECT unnest(?))", [list(found)])
        return found

    def __iter__(self) -> Iterator[str]:
        return iter([key for (key,) in
                     self.con.execute(f"SELECT key FROM {self.table}").fetchall()])

    def __len__(self) -> int:
        return int(self.con.execute(f"SELECT count(*) FROM {self.table}").fetchall()[0][0])


class ChartCache(_TextCache):
    """Rendered SVGs by spec key, in the store: `reports.figures.charts.rendering_cache` reads and
    fills it. Writing keeps the CHARTS_KEPT most recently used."""

    table, column, kept = "cache__chart_svg", "svg", CHARTS_KEPT


class TableCache(_TextCache):
    """The report's scorecard table (HTML) by the key of its inputs, in the store:
    `reports.html.scorecard_table.table_cache` reads and fills it. Writing keeps the
    TABLES_KEPT most recently used."""

    table, column, kept = "cache__table_html", "html", TABLES_KEPT
