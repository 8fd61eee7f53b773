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
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

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
