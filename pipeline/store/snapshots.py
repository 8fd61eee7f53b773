"""`raw_snapshots`: every fetched or read file's bytes, kept content-addressed (sha256), read
back through the loads that used them (`load_snapshots`), and the sweep of those no load
links (left by a killed process)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any, NamedTuple

import duckdb


class Snapshot(NamedTuple):
    """A stored snapshot as read back: its hash, where it came from, and its bytes."""

    sha256: str
    url: str
    params: dict[str, Any]
    content: bytes
    fetched_at: datetime


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def save_snapshot(con: duckdb.DuckDBPyConnection, content: bytes, *, source: str, url: str,
                  params: dict[str, Any] | None = None,
                  fetched_at: datetime | None = None) -> str:
    """Keep raw bytes content-addressed; `params` must already have secrets redacted."""
    digest = sha256(content)
    # Kept already: nothing to send. (Checked here rather than by ON CONFLICT DO NOTHING,
    # which costs DuckDB 10 s more on the 383 MB of a 36-hour power log.)
    if con.execute("SELECT 1 FROM raw_snapshots WHERE sha256 = ?", [digest]).fetchall():
        return digest
    con.execute(
        "INSERT INTO raw_snapshots (sha256, source, url, params_json, fetched_at_utc, "
        "size_bytes, content) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [digest, source, url, json.dumps(params or {}, sort_keys=True),
         fetched_at or datetime.now(UTC), len(content), content],
    )
    return digest


def snapshot_content(con: duckdb.DuckDBPyConnection, digest: str) -> bytes:
    """The stored bytes of snapshot `digest` (KeyError when none is kept)."""
    rows = con.execute("SELECT content FROM raw_snapshots WHERE sha256 = ?",
                       [digest]).fetchall()
    if not rows:
        raise KeyError(f"no raw snapshot {digest}")
    return bytes(rows[0][0])


def latest_load_snapshots(con: duckdb.DuckDBPyConnection, source: str, vintage: str,
                          good_only: bool = False, *, content: bool = True) -> list[Snapshot]:
    """The raw snapshots of the latest load of `source` for `vintage` that recorded any
    (with `good_only`, of the latest successful load), oldest first. With `content=False`
    each one's `content` is empty: read it with `snapshot_content` when it is needed, so a
    source's snapshots are never all in memory at once."""
    status = "AND status = 'ok' " if good_only else ""
    rows = con.execute(
        "WITH latest AS (SELECT load_id FROM loads WHERE source = ? AND vintage = ? "
        + status + "AND load_id IN (SELECT load_id FROM load_snapshots) "
        "ORDER BY started_at_utc DESC LIMIT 1) "
        "SELECT r.sha256, r.url, r.params_json, r.fetched_at_utc "
        "FROM latest JOIN load_snapshots l USING (load_id) "
        "JOIN raw_snapshots r ON r.sha256 = l.snapshot_sha256 "
        "ORDER BY r.fetched_at_utc, r.url", [source, vintage]).fetchall()
    return [Snapshot(sha, url, json.loads(params or "{}"),
                     snapshot_content(con, sha) if content else b"",
                     fetched.astimezone(UTC)) for sha, url, params, fetched in rows]


def sweep_orphans(con: duckdb.DuckDBPyConnection) -> int:
    """Delete the snapshots no load links (a process killed between saving a file's bytes and
    loading its rows, e.g. during `evidence add`, leaves them); returns how many. Every
    load, failed ones included, links the snapshots it read, so nothing a load or a report
    cites is touched."""
    found = con.execute("SELECT count(*) FROM raw_snapshots WHERE sha256 NOT IN "
                        "(SELECT snapshot_sha256 FROM load_snapshots)").fetchall()[0][0]
    if found:
        con.execute("DELETE FROM raw_snapshots WHERE sha256 NOT IN "
                    "(SELECT snapshot_sha256 FROM load_snapshots)")
    return int(found)
