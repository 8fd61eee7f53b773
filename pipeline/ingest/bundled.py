"""Load the bundled reference data into the store: snapshot -> parse -> validate -> load, the
same path live sources take, as one transaction for the source `bundled`; and the check that
spares a command that work when the store already holds exactly what the package ships."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb

import schemas
import sources.offers
import sources.reference_csv
import sources.regulation
from pipeline import store
from pipeline.store import caches
from sources import bundled

#: the code that turns the packaged files into rows: a change in any of it reloads them
_READERS = (Path(bundled.__file__), Path(sources.offers.__file__),
            Path(sources.reference_csv.__file__), Path(sources.regulation.__file__),
            *sorted(Path(schemas.__file__).parent.glob("*.py")),
            *sorted(Path(schemas.__file__).parent.glob("*.toml")))


def reader_digest(files: dict[str, bundled.RawFile]) -> str:
    """sha256 over the packaged files' bytes and the code that reads them."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name].content).digest())
    for path in _READERS:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def packaged() -> dict[str, bundled.RawFile]:
    return {name: bundled.read(name) for name in bundled.FILES}


def load_bundled(con: duckdb.DuckDBPyConnection,
                 files: dict[str, bundled.RawFile] | None = None,
                 vintage: str = bundled.VINTAGE) -> store.LoadResult:
    """`files` defaults to the packaged CSVs; tests pass altered copies."""
    files = files or packaged()
    digests = {name: store.save_snapshot(con, raw.content, source=bundled.SOURCE, url=raw.url)
               for name, raw in files.items()}
    parsed = bundled.parse_all(files, vintage)
    batches = [store.Batch(table, frame, digests[raw.name], raw.name)
               for table, frame, raw in parsed]
    result = store.load(con, bundled.SOURCE, vintage, batches)
    caches.record_bundled_check(con, result.load_id, reader_digest(files))
    return result


def is_loaded(con: duckdb.DuckDBPyConnection, vintage: str = bundled.VINTAGE) -> bool:
    """Whether the latest successful `bundled` load of `vintage` read exactly the packaged
    CSVs (compared by sha256) with the code this install reads them with, so a command can
    skip `load_bundled` (no parse, no validation) and a reader can open the store read-only.
    A store without the meta tables (never written) is not loaded."""
    files = packaged()
    load_id, shas, recorded = caches.latest_bundled_load(con, bundled.SOURCE, vintage)
    return (load_id is not None and recorded == reader_digest(files)
            and shas == {store.sha256(raw.content) for raw in files.values()})
