"""Load the bundled reference data into the store: snapshot -> parse -> validate -> load, the
same path live sources take, as one transaction for the source `bundled`."""

from __future__ import annotations

import duckdb

from pipeline import store
from sources import bundled


def load_bundled(con: duckdb.DuckDBPyConnection,
                 files: dict[str, bundled.RawFile] | None = None,
                 vintage: str = bundled.VINTAGE) -> store.LoadResult:
    """`files` defaults to the packaged CSVs; tests pass altered copies."""
    files = files or {name: bundled.read(name) for name in bundled.FILES}
    digests = {name: store.save_snapshot(con, raw.content, source=bundled.SOURCE, url=raw.url)
               for name, raw in files.items()}
    parsed = bundled.parse_all(files, vintage)
    batches = [store.Batch(table, frame, digests[raw.name], raw.name)
               for table, frame, raw in parsed]
    return store.load(con, bundled.SOURCE, vintage, batches)


def is_loaded(con: duckdb.DuckDBPyConnection, vintage: str = bundled.VINTAGE) -> bool:
    """Whether the latest successful `bundled` load of `vintage` read exactly the packaged
    CSVs (compared by sha256), so a reader that only reads can skip `load_bundled` and open
    the store read-only. A store without the meta tables (never written) is not loaded."""
    wanted = {store.sha256(bundled.read(name).content) for name in bundled.FILES}
    try:
        rows = con.execute(
            "WITH latest AS (SELECT load_id FROM loads WHERE source = ? AND vintage = ? "
            "AND status = 'ok' ORDER BY started_at_utc DESC LIMIT 1) "
            "SELECT l.snapshot_sha256 FROM latest JOIN load_snapshots l USING (load_id)",
            [bundled.SOURCE, vintage]).fetchall()
    except duckdb.CatalogException:
        return False
    return {sha for (sha,) in rows} == wanted
