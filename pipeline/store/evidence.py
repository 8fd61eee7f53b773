"""The parsed-evidence cache in the store: a benchmark file's runs as its reader returned them,
keyed by the file's sha256 and the reader key (format forced or detected, timezone, readers'
code), so a file already added is never parsed again.

One row per (sha256, reader_key) in `cache__bench_parsed`: `runs_json` holds every run's
fields but its requests (JSON, times as ISO 8601), `requests` the runs' per-request frames as
one Parquet file with a `__run` column (the position of the run in the file). The table is a
cache of what the files hold (their bytes are the raw snapshots, their rows core__bench_*):
dropping it loses nothing but time.

- `ensure(con)`: the table.
- `get(con, sha256, reader_key) -> (runs_json, requests parquet bytes | None) | None`
- `put(con, sha256, reader_key, path, runs_json, requests)`: insert or replace.
- `digest_of(con, path, size, mtime_ns) -> sha256 | None` and `put_digest(...)`: the file
  digests seen (`cache__bench_files`), so an unchanged file is not read to be hashed.
- `save_file_snapshot(con, path, sha256, *, source, size)`: a file's bytes into
  `raw_snapshots` read by DuckDB itself (`read_blob`), not passed from Python as a 0.4 GB
  query parameter; refused when the file's size is no longer `size` (changed meanwhile).
  Committed and checkpointed at once, uncompressed: DuckDB's zstd of a 383 MB log costs ~3 s
  of CPU (more than parsing it) for a 5.7x smaller file, and until the checkpoint the
  committed bytes stay in memory.
- `bounded_memory(con)`: a context in which DuckDB holds at most `LOAD_MEMORY` (the row
  groups a big load writes stay cached in memory otherwise, ~0.1 GB per million rows).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.store.snapshots import save_snapshot

TABLE = "cache__bench_parsed"
_DDL = (f"CREATE TABLE IF NOT EXISTS {TABLE} (sha256 VARCHAR NOT NULL, reader_key VARCHAR NOT "
        "NULL, first_path VARCHAR, runs_json VARCHAR NOT NULL, requests BLOB, stored_at_utc "
        "TIMESTAMPTZ NOT NULL, PRIMARY KEY (sha256, reader_key))")


FILES = "cache__bench_files"
_FILES_DDL = (f"CREATE TABLE IF NOT EXISTS {FILES} (path VARCHAR NOT NULL, size_bytes BIGINT "
              "NOT NULL, mtime_ns BIGINT NOT NULL, sha256 VARCHAR NOT NULL, PRIMARY KEY (path))")


def ensure(con: Any) -> None:
    con.execute(_DDL)
    con.execute(_FILES_DDL)


def digest_of(con: Any, path: str, size: int, mtime_ns: int) -> str | None:
    ensure(con)
    row = con.execute(f"SELECT sha256 FROM {FILES} WHERE path = ? AND size_bytes = ? AND "
                      "mtime_ns = ?", [path, size, mtime_ns]).fetchone()
    return None if row is None else str(row[0])


def put_digest(con: Any, path: str, size: int, mtime_ns: int, sha256: str) -> None:
    ensure(con)
    con.execute(f"INSERT OR REPLACE INTO {FILES} VALUES (?, ?, ?, ?)",
                [path, size, mtime_ns, sha256])


def get(con: Any, sha256: str, reader_key: str) -> tuple[str, bytes | None] | None:
    ensure(con)
    row = con.execute(f"SELECT runs_json, requests FROM {TABLE} WHERE sha256 = ? AND "
                      "reader_key = ?", [sha256, reader_key]).fetchone()
    if row is None:
        return None
    return str(row[0]), None if row[1] is None else bytes(row[1])


def put(con: Any, sha256: str, reader_key: str, path: str, runs_json: str,
        requests: bytes | None) -> None:
    ensure(con)
    con.execute(f"INSERT OR REPLACE INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?)",
                [sha256, reader_key, path, runs_json, requests, datetime.now(UTC)])


def save_file_snapshot(con: Any, path: Path, sha256: str, *, source: str, size: int) -> str:
    """Keep the file's bytes content-addressed (as `pipeline.store.save_snapshot`), `sha256`
    being the digest the caller took of them; nothing to do when kept already."""
    if con.execute("SELECT 1 FROM raw_snapshots WHERE sha256 = ?", [sha256]).fetchall():
        return sha256
    if set(str(path)) & set("*?[{"):  # read_blob would take the name for a glob pattern
        if save_snapshot(con, path.read_bytes(), source=source,
                         url=path.resolve().as_uri()) != sha256:
            raise OSError(f"{path}: the file changed while it was being added; add it again")
        return sha256
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            "INSERT INTO raw_snapshots (sha256, source, url, params_json, fetched_at_utc, "
            "size_bytes, content) SELECT ?, ?, ?, ?, ?, size, content FROM read_blob(?)",
            [sha256, source, path.resolve().as_uri(), json.dumps({}), datetime.now(UTC),
             str(path)])
        kept = con.execute("SELECT size_bytes FROM raw_snapshots WHERE sha256 = ?",
                           [sha256]).fetchall()
        if kept != [(size,)]:
            raise OSError(f"{path}: the file changed while it was being added ({size} bytes "
                          f"hashed, {kept[0][0] if kept else 'none'} read); add it again")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("SET force_compression = 'uncompressed'")
    try:
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
    finally:
        con.execute("RESET force_compression")
    return sha256


#: DuckDB's memory limit while a big log's rows are loaded (`bounded_memory`).
LOAD_MEMORY = "400MB"


@contextmanager
def bounded_memory(con: Any) -> Iterator[None]:
    con.execute(f"SET memory_limit = '{LOAD_MEMORY}'")
    try:
        yield
    finally:
        con.execute("RESET memory_limit")
