"""The parsed-evidence cache in the store: a benchmark file's runs as its reader returned them,
keyed by the file's sha256 and the reader key (format forced or detected, timezone, readers'
code), so a file already added is never parsed again.

One row per (sha256, reader_key) in `cache__bench_parsed`: `runs_json` holds every run's
fields but its requests (JSON, times as ISO 8601), `requests` the runs' per-request frames as
one Parquet file with a `__run` column (the position of the run in the file). The table is a
cache of what the files hold (their bytes are the raw snapshots, their rows core__bench_*):
dropping it loses nothing but time.

- `ensure`: creates the tables.
- `get`: a file's cached `runs_json` and its requests' Parquet bytes (None when it had none),
  or None when nothing is cached for that sha256 and reader key.
- `put`: inserts or replaces a file's cached runs.
- `digest_of` and `put_digest`: read and record the file digests seen (`cache__bench_files`)
  by path, size and modification time, so an unchanged file is not read to be hashed.
- `snapshot_meanwhile`: a file's bytes kept as a raw snapshot read piece by piece
  (`pipeline.store.snapshots.save_snapshot_chunks`: never whole in memory, nor one value the
  size of the file; a file above `BESIDE_BYTES`, 16 MiB, compressed into the folder beside the
  store), in a
  thread, in its own transaction on a cursor of its own, while the caller loads the file's
  rows on `con`; refused when the bytes read are not
  `size` long (changed meanwhile); yields the `wait()` to call before recording the load
  that links the snapshot.
- `restore_missing`: a kept snapshot's missing file beside the store written again from the
  file, for an add answered "unchanged" without reading it.
- `bounded_memory`: a context in which DuckDB holds at most `LOAD_MEMORY` (the row groups a
  big load writes stay cached in memory otherwise, growing with the rows).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.store import snapshots
from pipeline.store.snapshots import CHUNK_BYTES, save_snapshot_chunks

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


@contextmanager
def snapshot_meanwhile(con: Any, path: Path, sha256: str, *, source: str, size: int
                       ) -> Iterator[Callable[[], None]]:
    """Keep the file's bytes content-addressed (as `pipeline.store.save_snapshot`, `sha256`
    being the digest the caller took of them; nothing to do when kept already), read in
    pieces of `CHUNK_BYTES`, in a thread, on a cursor of `con` (a transaction of its own),
    while the block loads the file's rows on `con`: a big file's bytes are compressed into
    the folder beside the store (pyarrow's zstd, hashlib and the writes release the GIL), a
    small one's inserted as parts by DuckDB, on one core, so the two keep both cores busy
    (benchmarks/power_log.py).
    Yields `wait()`, which returns once the snapshot is kept (committed) and raises its error
    when it could not be (OSError when the bytes read are not `size` long: the file changed):
    call it before recording a load that links the snapshot. Leaving the block waits too;
    leaving it on an error stops the reading (nothing kept, unless committed already: then
    the next writer's sweep removes it, as no load links it). The cursor is closed only once
    the thread is done, a second Ctrl-C while it finishes included."""
    stop, done = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def keep() -> None:
        try:
            save_snapshot_chunks(cursor, sha256, _chunks(path, stop), source=source,
                                 url=path.resolve().as_uri(), size=size,
                                 beside_over=snapshots.BESIDE_BYTES)
        except BaseException as error:  # raised by wait(), in the caller's thread
            failed.append(error)
        finally:
            done.set()

    def wait() -> None:
        done.wait()
        if failed:
            raise failed[0]

    cursor = con.cursor()
    thread = threading.Thread(target=keep, name="raw-snapshot", daemon=True)
    try:
        thread.start()
        yield wait
        wait()
    finally:
        stop.set()  # on an error: a reading stopped short of `size` is rolled back
        if thread.ident is not None:  # started
            _wait_through_interrupts(done)
        cursor.close()


def _chunks(path: Path, stop: threading.Event | None = None) -> Iterator[bytes]:
    """The file's bytes in pieces of `CHUNK_BYTES` (until `stop` is set)."""
    with path.open("rb") as file:
        while not (stop is not None and stop.is_set()) and (chunk := file.read(CHUNK_BYTES)):
            yield chunk


def restore_missing(con: Any, path: Path, sha256: str, *, source: str, size: int) -> None:
    """For a file answered "unchanged" without being read: when its snapshot is kept beside
    the store and its file is not there (a stat), write it again from the file (hashed as it
    is written: refused, OSError, unless its bytes are still `sha256`), so adding the original
    file again restores a missing one."""
    if snapshots.beside_missing(con, sha256):
        save_snapshot_chunks(con, sha256, _chunks(path), source=source,
                             url=path.resolve().as_uri(), size=size,
                             beside_over=snapshots.BESIDE_BYTES)


def _wait_through_interrupts(done: threading.Event) -> None:
    """`done.wait()` that a Ctrl-C does not cut short (re-raised once `done` is set): closing
    a cursor the snapshot's thread still uses would fail, or abort the process. (An Event, not
    `Thread.join`: on Python 3.11 a join cut short by Ctrl-C can leave `is_alive()` False
    while the thread runs.)"""
    interrupted = False
    while not done.is_set():
        try:
            done.wait()
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        raise KeyboardInterrupt


#: DuckDB's memory limit while a big log's rows are loaded and its snapshot kept
#: (`bounded_memory`): the lowest peak of the limits measured, at no cost in time
#: (docs/energy.md).
LOAD_MEMORY = "200MB"


@contextmanager
def bounded_memory(con: Any) -> Iterator[None]:
    con.execute(f"SET memory_limit = '{LOAD_MEMORY}'")
    try:
        yield
    finally:
        con.execute("RESET memory_limit")
