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
