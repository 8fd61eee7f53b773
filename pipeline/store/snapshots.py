"""Raw snapshots: every fetched or read file's bytes, kept content-addressed (sha256), read
back through the loads that used them (`load_snapshots`), and the sweep of those no load
links (left by a killed process).

Layout (`ensure_snapshot_tables`): `raw_snapshot_meta` holds one row per snapshot (sha256,
source, url, params_json, fetched_at_utc, size_bytes, beside_path) and `raw_snapshot_parts` its
bytes in order, `(sha256, part, content)`, parts of `PART_BYTES`; `raw_snapshots` is a view of
the two with each snapshot's bytes whole as `content`, the columns of the table it replaced, so
SQL that reads it (`SELECT content FROM raw_snapshots WHERE ...`) goes on working, then
`beside_path`. A store written before (one `raw_snapshots` table, each snapshot's bytes one
BLOB value) is split into parts when a writer opens it; read-only, it is read as it is.

Big snapshots beside the store (issue 33): the evidence files' bytes above `BESIDE_BYTES`
(16 MiB; a big power log or benchmark file: their callers pass it as `beside_over`; a fetched
answer never goes there, so a store of market data is one file) of a store kept in a file go
into a folder beside it, `<store file>.raw/<sha256[:2]>/<sha256>.zst` (`raw_folder`,
`write_beside`: zstd through pyarrow, one frame per 16 MiB piece, so `zstd -d` reads it;
hashed as written, written under a temporary name, flushed to disk and renamed into place
whole; one file per sha256; a write that fails is a `SnapshotWriteError` naming the file and
the snapshot), and their meta row's `beside_path` names the file (relative to the folder;
NULL: the bytes are in the parts). They have no parts: the view's `content` is NULL for them
(its `beside_path` says where they are), `snapshot_content` reads the file and checks its bytes
against the sha256 and size (`SnapshotFileError`, naming the file and the snapshot and how to
restore it, when it is missing or altered). Keeping the same bytes again writes a missing or
altered file anew (`save_snapshot_chunks`, which decompresses and hashes the file there to
check it); `beside_missing` lets a command that answers "unchanged" without reading a file
check, by a stat, that its file is there (a missing one, not an altered one). The folder moves
with the store's file: copy or move both. The sweep never deletes a complete file no row
names (it may be a store's moved or restored without its folder; the next add of its bytes
reuses it): only the temporaries of writes cut short and, once their deletion is committed,
the files of the rows it deletes. Why beside: DuckDB's zstd of a 383 MB log's parts cost
about 2 s of CPU, pyarrow's 0.8 s (docs/energy.md). A writer adds the column to an older
store's meta table, and to its view; its snapshots stay in their parts.

Why parts, and why small ones (measured on a big power log: docs/energy.md and
docs/performance.md): DuckDB inserting the bytes as one value copies them into a buffer larger
still, and a transaction of fewer rows than a row group (122,880) goes through the WAL and then
again through the checkpoint (the bytes written twice, and held in memory until then). In parts
of 1 KiB, the rows of a snapshot above 120 MiB fill row groups, which DuckDB writes straight
into the file (the WAL only points at them), in less CPU and memory than one value or parts of a
few MB.

Why zstd (`content ... USING COMPRESSION zstd`, issue 33): kept as they came, a big log's bytes
made the store about 7x the size of DuckDB's own table of its rows; zstd keeps them in about a
fifth of the space, for less than half the extra CPU of DuckDB's `auto` choice (which tries
FSST and dictionaries on every segment; figures in docs/performance.md). A column's own
setting, unlike DuckDB's global `force_compression`, lets a log's bytes be kept while its rows
are loaded (with DuckDB's usual compression) by another connection
(`pipeline.store.evidence.snapshot_meanwhile`). A store whose parts table predates this (no
setting, or `uncompressed`) is rewritten so by a writer (`ensure_snapshot_tables`), once. (An
evidence file's bytes above `BESIDE_BYTES` no longer go into the parts: see above.)

- `save_snapshot`: keeps bytes as a snapshot (once per sha256) and gives their sha256.
- `save_snapshot_chunks`: the same from an iterable of bytes (a file read piece by piece,
  never whole), the digest being the caller's.
- `snapshot_kept` says whether a snapshot is kept, `snapshot_content` gives its bytes
  (KeyError when none is kept).
- `latest_load_snapshots`: the snapshots of a source's latest load of a vintage (of its latest
  good one if asked), with or without their bytes.
- `sweep_orphans`: removes the snapshots no load links (and their files beside the store)
  and says how many, then the temporaries of writes cut short.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import duckdb
import numpy as np

from pipeline.store.errors import SnapshotFileError, SnapshotWriteError
from pipeline.store.staging import staged
from pipeline.store.transactions import rollback

if TYPE_CHECKING:
    import pyarrow as pa

META = "raw_snapshot_meta"
PARTS = "raw_snapshot_parts"
VIEW = "raw_snapshots"
#: Bytes per row of `raw_snapshot_parts` (see the module docstring for why so few).
PART_BYTES = 1024
#: Bytes handed to DuckDB at a time (a whole number of parts).
CHUNK_BYTES = 16 << 20
#: Raw bytes above which rewriting an older parts table in zstd is said on stderr.
REWRITE_NOTE_BYTES = 64 << 20
#: An evidence file's bytes larger than this are kept beside the store's file (`raw_folder`),
#: not in it (its callers pass it as `beside_over`; fetched answers stay in the store whatever
#: their size): one 16 MiB piece (`CHUNK_BYTES`) or less costs DuckDB's zstd under 0.1 s of
#: CPU (2 s for 383 MB, docs/energy.md), so small benchmark files stay in the one file.
BESIDE_BYTES = CHUNK_BYTES
#: The folder beside a store's file that holds its big snapshots: `<file name>.raw`.
RAW_SUFFIX = ".raw"
#: zstd level of the files beside the store: 1 (Arrow's default) is the fastest and, on an
#: nvidia-smi log, no larger than 3 (64 MB for 383 MB; docs/energy.md).
ZSTD_LEVEL = 1

_DDL = (
    f"""CREATE TABLE IF NOT EXISTS {META} (
        sha256 VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, url VARCHAR NOT NULL,
        params_json VARCHAR, fetched_at_utc TIMESTAMPTZ NOT NULL, size_bytes BIGINT NOT NULL,
        beside_path VARCHAR)""",
    # no key: parts are written only with their meta row (whose sha256 is the key), in one
    # transaction, after checking none is kept; an index would cost each part an entry
    f"""CREATE TABLE IF NOT EXISTS {PARTS} (
        sha256 VARCHAR NOT NULL, part INTEGER NOT NULL,
        content BLOB USING COMPRESSION zstd NOT NULL)""",
    # a snapshot of one part is that part; more are joined in order (as hex: DuckDB has no
    # BLOB string_agg); `snapshot_content` reads the parts themselves, without the view.
    # `beside_path` last, after the columns of the table the view replaced: a snapshot kept
    # beside the store has no parts (`content` NULL) and says where its file is
    f"""CREATE VIEW IF NOT EXISTS {VIEW} AS
        SELECT m.sha256, m.source, m.url, m.params_json, m.fetched_at_utc, m.size_bytes,
               (SELECT CASE WHEN count(*) = 1 THEN any_value(p.content)
                       ELSE unhex(string_agg(hex(p.content), '' ORDER BY p.part)) END
                FROM {PARTS} p WHERE p.sha256 = m.sha256) AS content,
               m.beside_path
        FROM {META} m""",
)


class Snapshot(NamedTuple):
    """A stored snapshot as read back: its hash, where it came from, and its bytes."""

    sha256: str
    url: str
    params: dict[str, Any]
    content: bytes
    fetched_at: datetime


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ensure_snapshot_tables(con: duckdb.DuckDBPyConnection) -> None:
    """The tables and view of the layout above (one catalogue query finds which layout the
    store has); a store of the older layout is split into parts first (once: it has the view
    afterwards), one whose parts are stored otherwise than in zstd rewritten (once: its DDL
    says so afterwards)."""
    tables = dict(con.execute(  # the view under a name of its own: in the older layout
        # `raw_snapshots` is a base table
        "SELECT table_name, sql FROM duckdb_tables() WHERE table_name IN (?, ?, ?) AND "
        "schema_name = current_schema() AND database_name = current_database() UNION ALL "
        "SELECT 'view ' || view_name, sql FROM duckdb_views() WHERE view_name = ? AND "
        "schema_name = current_schema() AND database_name = current_database()",
        [VIEW, PARTS, META, VIEW]).fetchall())
    if VIEW in tables:
        _split_old_snapshots(con)
        return
    if META in tables and "beside_path" not in tables[META].lower():  # before big files beside
        con.execute(f"ALTER TABLE {META} ADD COLUMN beside_path VARCHAR")
    view = tables.get(f"view {VIEW}")
    if view is not None and "beside_path" not in view.lower():  # (nor in its view)
        con.execute(f"DROP VIEW {VIEW}")
    for ddl in _DDL:
        con.execute(ddl)
    if PARTS in tables and not in_zstd(tables[PARTS]):
        _recompress_parts(con)


def in_zstd(ddl: str) -> bool:
    """Whether a table's DDL, as DuckDB renders it, stores a column in zstd: compared
    without case (DuckDB 2.0 prints `ZSTD` whatever the DDL said; the name is the codec's,
    not a spelling DuckDB promises)."""
    return "using compression zstd" in ddl.lower()


def relation_kind(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    """'BASE TABLE', 'VIEW' or None: what `name` is in the store's schema."""
    rows = con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = ? "
                       "AND table_schema = current_schema() AND table_catalog = "
                       "current_database()", [name]).fetchall()
    return str(rows[0][0]) if rows else None


def _parted(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store has the parts layout (a store of the older one opened read-only
    has not)."""
    return relation_kind(con, PARTS) is not None


def _split_old_snapshots(con: duckdb.DuckDBPyConnection) -> None:
    """The older `raw_snapshots` table (bytes as one value) into meta and parts, one
    snapshot's bytes at a time, then the view in its place; all or nothing."""
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"ALTER TABLE {VIEW} RENAME TO raw_snapshots_before_parts")
        for ddl in _DDL[:2]:
            con.execute(ddl)
        con.execute(f"INSERT INTO {META} (sha256, source, url, params_json, fetched_at_utc, "
                    "size_bytes) SELECT sha256, source, url, params_json, fetched_at_utc, "
                    "size_bytes FROM raw_snapshots_before_parts")
        for (digest,) in con.execute("SELECT sha256 FROM raw_snapshots_before_parts ORDER BY 1"
                                     ).fetchall():
            (content,) = con.execute("SELECT content FROM raw_snapshots_before_parts WHERE "
                                     "sha256 = ?", [digest]).fetchall()[0]
            _insert_parts(con, digest, _slices(memoryview(content)))
            del content
        con.execute("DROP TABLE raw_snapshots_before_parts")
        con.execute(_DDL[2])
    except BaseException:
        rollback(con)
        raise
    con.execute("COMMIT")


def _recompress_parts(con: duckdb.DuckDBPyConnection) -> None:
    """A parts table of content stored otherwise rewritten with the column in zstd (DuckDB has
    no ALTER for a column's compression), rows in the same order; all or nothing. A store
    holding a big log's bytes takes seconds (the 383 MB log of benchmarks/power_log.py: about
    5 s at load 7), so it is said once on stderr, without DuckDB's progress bar; the space
    the old parts held is reused by later writes (DuckDB does not shrink the file)."""
    size = con.execute(f"SELECT sum(size_bytes) FROM {META}").fetchall()[0][0]
    if size and size > REWRITE_NOTE_BYTES:
        print(f"keeping the store's {size / 1e6:,.0f} MB of raw snapshots in zstd (once)",
              file=sys.stderr)
    con.execute("SET enable_progress_bar = false")
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(f"ALTER TABLE {PARTS} RENAME TO raw_snapshot_parts_before_zstd")
            con.execute(_DDL[1])
            con.execute(f"INSERT INTO {PARTS} SELECT sha256, part, content FROM "
                        "raw_snapshot_parts_before_zstd")
            con.execute("DROP TABLE raw_snapshot_parts_before_zstd")
        except BaseException:
            rollback(con)
            raise
        con.execute("COMMIT")
    finally:
        con.execute("RESET enable_progress_bar")


def _slices(data: memoryview) -> Iterator[memoryview]:
    yield from (data[at:at + CHUNK_BYTES] for at in range(0, len(data), CHUNK_BYTES))


def _insert_parts(con: duckdb.DuckDBPyConnection, digest: str,
                  chunks: Iterable[bytes | memoryview]) -> int:
    """The bytes of `chunks` as parts of `digest`, numbered from 0, in one INSERT fed by an
    Arrow stream (each chunk's parts are slices of it: no copy in Python; a stream, not an
    Arrow table, which DuckDB's scan of it held twice in memory); returns the bytes written.
    An empty snapshot is one empty part, so every snapshot has one."""
    import pyarrow as pa  # here: a `scorecard run` keeps no snapshot and need not load it

    written = 0

    def batches() -> Iterator[pa.RecordBatch]:
        nonlocal written
        first = 0
        for chunk in chunks:
            if not len(chunk) and first:
                continue
            count = max(1, -(-len(chunk) // PART_BYTES))
            ends = np.minimum(np.arange(count + 1, dtype=np.int64) * PART_BYTES, len(chunk))
            content = pa.Array.from_buffers(pa.binary(), count, [
                None, pa.py_buffer(ends.astype(np.int32)), pa.py_buffer(chunk)])
            yield pa.record_batch([pa.array(np.arange(first, first + count, dtype=np.int32)),
                                   content], names=["part", "content"])
            first += count
            written += len(chunk)
        if not first:
            yield pa.record_batch([pa.array([0], pa.int32()), pa.array([b""], pa.binary())],
                                  names=["part", "content"])

    schema = pa.schema([("part", pa.int32()), ("content", pa.binary())])
    with staged(con, "staged_snapshot_parts",
                pa.RecordBatchReader.from_batches(schema, batches())):
        con.execute(f"INSERT INTO {PARTS} SELECT ?, part, content FROM staged_snapshot_parts",
                    [digest])
    return written


def snapshot_kept(con: duckdb.DuckDBPyConnection, digest: str) -> bool:
    table = META if _parted(con) else VIEW
    return bool(con.execute(f"SELECT 1 FROM {table} WHERE sha256 = ?", [digest]).fetchall())


def save_snapshot(con: duckdb.DuckDBPyConnection, content: bytes, *, source: str, url: str,
                  params: dict[str, Any] | None = None,
                  fetched_at: datetime | None = None, beside_over: int | None = None) -> str:
    """Keep raw bytes content-addressed; `params` must already have secrets redacted."""
    digest = sha256(content)
    return save_snapshot_chunks(con, digest, _slices(memoryview(content)), source=source,
                                url=url, params=params, fetched_at=fetched_at,
                                size=len(content), beside_over=beside_over)


def save_snapshot_chunks(con: duckdb.DuckDBPyConnection, digest: str,
                         chunks: Iterable[bytes | memoryview], *, source: str, url: str,
                         params: dict[str, Any] | None = None,
                         fetched_at: datetime | None = None, size: int | None = None,
                         beside_over: int | None = None) -> str:
    """`save_snapshot` of bytes arriving in chunks (whole parts each, but the last), `digest`
    their sha256 as the caller took it; nothing to do when kept already (the chunks are not
    read), but for a snapshot kept beside the store whose file is missing or holds other
    bytes: written again from the chunks (`write_beside`). Meta and parts in one
    transaction, or in the caller's when one is open. With `size`, bytes of another length
    are refused (OSError: the file changed since it was hashed) and nothing is kept.

    Everything goes into the parts unless the caller passes `beside_over` (the evidence
    files' paths pass `BESIDE_BYTES`; a fetched answer never does, so a store of market data
    is one file): then bytes of a known `size` above it, in a store with a file, go beside
    it (`write_beside`: compressed, hashed as they are written, refused unless their sha256
    is `digest`), the meta row naming the file."""
    kept = _kept_where(con, digest)
    if kept is not None:
        folder = raw_folder(con) if kept else None
        if folder is not None:  # reused when it holds the bytes, else written again
            write_beside(folder, digest, chunks, url=url)
        return digest
    beside = beside_over is not None and size is not None and size > beside_over
    folder = raw_folder(con) if beside else None
    own = _begin(con)
    try:
        if folder is None:
            written, name = _insert_parts(con, digest, chunks), None
        else:
            written, name = write_beside(folder, digest, chunks, url=url)
        if size is not None and written != size:
            raise OSError(f"{url}: {written} bytes read where {size} were hashed (changed "
                          "while it was being added); add it again")
        con.execute(
            f"INSERT INTO {META} (sha256, source, url, params_json, fetched_at_utc, "
            "size_bytes, beside_path) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [digest, source, url, json.dumps(params or {}, sort_keys=True),
             fetched_at or datetime.now(UTC), written, name])
        if own:  # the parts' last row group is written at the commit
            con.execute("COMMIT")
    except BaseException:
        if own:
            rollback(con)
        raise
    return digest


def _kept_where(con: duckdb.DuckDBPyConnection, digest: str) -> str | None:
    """Where snapshot `digest` is kept: its file's `beside_path`, "" in the store (parts, or
    a read-only store of the older layout), None when it is not kept."""
    if not _parted(con):
        return "" if snapshot_kept(con, digest) else None
    rows = con.execute(f"SELECT beside_path FROM {META} WHERE sha256 = ?", [digest]).fetchall()
    return (rows[0][0] or "") if rows else None


def beside_missing(con: duckdb.DuckDBPyConnection, digest: str) -> bool:
    """Whether snapshot `digest` is kept beside the store and no file is there under its name
    (a stat, its bytes not read: for a command that answers "unchanged" without reading the
    file, so adding the original file again restores it)."""
    where = _kept_where(con, digest)
    folder = raw_folder(con) if where else None
    return folder is not None and not (folder / str(where)).is_file()


def raw_folder(con: duckdb.DuckDBPyConnection) -> Path | None:
    """The folder beside the store's file that holds its big snapshots (`<file>.raw`, so it
    follows --db and $SCORECARD_DB); None for a store in memory (all kept in it)."""
    rows = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = "
                       "current_database()").fetchall()
    return raw_folder_of(Path(rows[0][0])) if rows and rows[0][0] else None


def raw_folder_of(store: Path) -> Path:
    """The raw folder of the store file `store`: `<file name>.raw` beside it."""
    return store.with_name(store.name + RAW_SUFFIX)


def beside_name(digest: str) -> str:
    """A snapshot's file in the raw folder, as its meta row's `beside_path` says it:
    `<sha256[:2]>/<sha256>.zst` (POSIX separators on every system)."""
    return f"{digest[:2]}/{digest}.zst"


def write_beside(folder: Path, digest: str, chunks: Iterable[bytes | memoryview], *,
                 url: str) -> tuple[int, str]:
    """The bytes of `chunks` into `folder/<sha256[:2]>/<sha256>.zst`, one zstd frame per chunk
    (`zstd -d` reads the file), written under a temporary name, flushed to disk and renamed
    into place once whole, so the name only ever holds bytes whose sha256 is `digest` (bytes
    hashing otherwise are refused: OSError, the file changed since it was hashed). A file
    already there is reused, the chunks not read, when its bytes hash to `digest` (it is
    written again otherwise). Returns the bytes' length and `beside_name`. A write the system
    refuses (a full disk, a folder that refuses writes) is a `SnapshotWriteError` naming the
    file, the snapshot and its URL (the OS's own text names no file); an error of the chunks'
    own (the file being added) is raised as it is. Compressing, hashing and writing release
    the GIL, so a thread writing this runs beside a load (`snapshot_meanwhile`)."""
    import pyarrow as pa  # here: a `scorecard run` keeps no snapshot and need not load it

    name = beside_name(digest)
    final = folder / name
    if final.exists() and (length := _length_if_holds(final, digest)) is not None:
        return length, name
    temporary = final.with_name(f"{final.name}.{os.getpid()}{TEMPORARY}")
    codec, hashed, written = pa.Codec("zstd", ZSTD_LEVEL), hashlib.sha256(), 0
    reading: list[BaseException] = []  # an error of the chunks' own (the file being added)

    def pieces() -> Iterator[bytes | memoryview]:
        iterator = iter(chunks)
        while True:
            try:
                chunk = next(iterator)
            except StopIteration:
                return
            except BaseException as error:
                reading.append(error)
                raise
            yield chunk

    try:
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            with temporary.open("wb") as out:
                for chunk in pieces():
                    hashed.update(chunk)
                    written += len(chunk)
                    out.write(codec.compress(chunk, asbytes=False))
                out.flush()
                os.fsync(out.fileno())
            if hashed.hexdigest() == digest:
                temporary.replace(final)
        except OSError as error:  # the OS's text names no file ("No space left on device")
            if reading:
                raise
            raise SnapshotWriteError(error.errno, f"{final}: cannot write the file of raw "
                                     f"snapshot {digest} ({url}) beside the store: "
                                     f"{error.strerror or error}") from None
        if hashed.hexdigest() != digest:
            raise OSError(f"{url}: its bytes no longer hash to {digest} (changed while it was "
                          "being added); add it again")
    except BaseException:
        # not there, or its folder is no folder (a file named so): the error above says why
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise
    _sync_folder(final.parent)
    return written, name


#: The ending of a file being written beside the store (removed by `sweep_orphans`).
TEMPORARY = ".tmp"


def _sync_folder(folder: Path) -> None:
    """The folder's entries (a rename) flushed to disk; nothing where folders cannot be
    opened (Windows)."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _length_if_holds(path: Path, digest: str) -> int | None:
    """The length of the bytes a file beside the store holds when they hash to `digest`
    (decompressed as they stream, never whole), else None (unreadable or other bytes)."""
    import pyarrow as pa

    try:
        found, length = _hashed(path)
    except (OSError, pa.ArrowException):
        return None
    return length if found == digest else None


def _hashed(path: Path, keep: list[bytes] | None = None) -> tuple[str, int]:
    """The sha256 and length of a file's bytes beside the store, decompressed as they stream
    (each piece appended to `keep` when given)."""
    hashed, length = hashlib.sha256(), 0
    for piece in _decompressed(path):
        hashed.update(piece)
        length += len(piece)
        if keep is not None:
            keep.append(piece)
    return hashed.hexdigest(), length


def _decompressed(path: Path) -> Iterator[bytes]:
    import pyarrow as pa

    with pa.CompressedInputStream(pa.OSFile(str(path)), "zstd") as stream:
        while piece := stream.read(CHUNK_BYTES):
            yield piece


def _begin(con: duckdb.DuckDBPyConnection) -> bool:
    """Begin a transaction; False when the caller's is open, which this one then joins. (Two
    statements of one transaction see one id, two in autocommit each their own: a BEGIN that
    fails inside a transaction would abort the caller's.)"""
    ids = [con.execute("SELECT txid_current()").fetchall()[0][0] for _ in range(2)]
    if ids[0] == ids[1]:
        return False
    con.execute("BEGIN TRANSACTION")
    return True


def snapshot_content(con: duckdb.DuckDBPyConnection, digest: str) -> bytes:
    """The stored bytes of snapshot `digest` (KeyError when none is kept; ValueError when its
    parts do not add up to its recorded size; SnapshotFileError when it is kept beside the
    store and its file is missing or holds other bytes)."""
    if not _parted(con):
        rows = con.execute(f"SELECT content FROM {VIEW} WHERE sha256 = ?", [digest]).fetchall()
        if not rows:
            raise KeyError(f"no raw snapshot {digest}")
        return bytes(rows[0][0])
    found = con.execute(f"SELECT * FROM {META} WHERE sha256 = ?", [digest])
    columns = [column[0] for column in found.description or ()]
    rows = found.fetchall()
    if not rows:
        raise KeyError(f"no raw snapshot {digest}")
    row = dict(zip(columns, rows[0], strict=True))
    if row.get("beside_path"):  # (a read-only store from before big files beside has none)
        return _read_beside(con, digest, row)
    numbers: list[np.ndarray] = []
    pieces: list[bytes | memoryview] = []
    query = f"SELECT part, content FROM {PARTS} WHERE sha256 = ?"
    for batch in con.sql(query, params=[digest]).to_arrow_reader(1 << 16):
        numbers.append(batch.column(0).to_numpy())
        pieces.append(_values(batch.column(1)))
    order = np.concatenate(numbers) if numbers else np.zeros(0, np.int32)
    if not np.array_equal(order, np.arange(len(order))):  # not read in order: sort them
        pieces = [bytes(row[1]) for row in con.execute(query + " ORDER BY part",
                                                        [digest]).fetchall()]
    data = b"".join(pieces)
    if len(data) != row["size_bytes"]:
        raise ValueError(f"raw snapshot {digest}: its parts hold {len(data)} bytes where "
                         f"{row['size_bytes']} were kept")
    return data


def _read_beside(con: duckdb.DuckDBPyConnection, digest: str, row: dict[str, Any]) -> bytes:
    """A snapshot's bytes from its file beside the store, decompressed and checked against
    its sha256 and size; SnapshotFileError naming the file and the snapshot otherwise."""
    import pyarrow as pa

    folder = raw_folder(con)
    what = f"raw snapshot {digest} (source {row['source']}, {row['url']})"
    if folder is None:  # (a store's rows copied into memory: its folder is not known)
        raise SnapshotFileError(f"{row['beside_path']}: the file of {what} is kept beside "
                                "the store's file, and this store has none")
    path = folder / row["beside_path"]
    if not path.is_file():
        raise SnapshotFileError(f"{path}: missing: the file of {what}; to restore it, "
                                f"{_restore(folder, row['url'])}")
    pieces: list[bytes] = []
    try:
        found, _ = _hashed(path, pieces)
    except (OSError, pa.ArrowException) as error:
        raise SnapshotFileError(f"{path}: unreadable as zstd ({error}): the file of {what}; "
                                f"to restore it, delete it, then "
                                f"{_restore(folder, row['url'])}") from None
    data = b"".join(pieces)
    del pieces
    if len(data) != row["size_bytes"] or found != digest:
        raise SnapshotFileError(f"{path}: altered: the file of {what} holds {len(data)} "
                                f"bytes of sha256 {found}, not the "
                                f"{row['size_bytes']} bytes kept; to restore it, delete it, "
                                f"then {_restore(folder, row['url'])}")
    return data


def _restore(folder: Path, url: str) -> str:
    """How a snapshot's file beside the store is put back: from a copy of the folder taken
    with the store, or by adding the original file again (`save_snapshot_chunks` writes a
    kept snapshot's missing or altered file anew; `evidence add`'s "unchanged" answer checks
    the file is there first)."""
    from urllib.parse import urlsplit
    from urllib.request import url2pathname  # here: 20 ms of imports, for an error's text

    parts = urlsplit(url)
    again = (f"add the original file again (`scorecard evidence add "
             f"{url2pathname(parts.path)}`, with the options it was added with)"
             if parts.scheme == "file" else f"add its source ({url}) again")
    return f"{again}, or put back the folder {folder} from a copy taken with the store"


def _values(column: pa.Array) -> memoryview:
    """The bytes of a binary Arrow array's values, end to end, without copying them."""
    import pyarrow as pa

    _, offsets, data = column.buffers()
    width = np.int64 if pa.types.is_large_binary(column.type) else np.int32
    ends = np.frombuffer(offsets, dtype=width)[column.offset:column.offset + len(column) + 1]
    return memoryview(data)[int(ends[0]):int(ends[-1])] if data is not None else memoryview(b"")


def latest_load_snapshots(con: duckdb.DuckDBPyConnection, source: str, vintage: str,
                          good_only: bool = False, *, content: bool = True) -> list[Snapshot]:
    """The raw snapshots of the latest load of `source` for `vintage` that recorded any
    (with `good_only`, of the latest successful load), oldest first: one per response the
    load read (`load_fetches`: two zones answered with the same bytes are two), or, for a
    load recorded before fetches were, one per snapshot. With `content=False` each one's
    `content` is empty: read it with `snapshot_content` when it is needed, so a source's
    snapshots are never all in memory at once."""
    status = "AND status = 'ok' " if good_only else ""
    latest = con.execute(
        "SELECT load_id FROM loads WHERE source = ? AND vintage = ? " + status
        + "AND load_id IN (SELECT load_id FROM load_snapshots) "
        "ORDER BY started_at_utc DESC LIMIT 1", [source, vintage]).fetchall()
    if not latest:
        return []
    rows = con.execute(
        "SELECT snapshot_sha256, url, params_json, fetched_at_utc FROM load_fetches "
        "WHERE load_id = ? ORDER BY fetched_at_utc, url, params_json", [latest[0][0]]
    ).fetchall() if relation_kind(con, "load_fetches") else []
    rows = rows or con.execute(
        "SELECT r.sha256, r.url, r.params_json, r.fetched_at_utc FROM load_snapshots l "
        f"JOIN {META if _parted(con) else VIEW} r ON r.sha256 = l.snapshot_sha256 "
        "WHERE l.load_id = ? ORDER BY r.fetched_at_utc, r.url", [latest[0][0]]).fetchall()
    return [Snapshot(sha, url, json.loads(params or "{}"),
                     snapshot_content(con, sha) if content else b"",
                     fetched.astimezone(UTC)) for sha, url, params, fetched in rows]


def sweep_orphans(con: duckdb.DuckDBPyConnection) -> int:
    """Delete the snapshots no load links (a process killed between saving a file's bytes and
    loading its rows, e.g. during `evidence add`, leaves them); returns how many. Every
    load, failed ones included, links the snapshots it read, so nothing a load or a report
    cites is touched. The file beside the store of a snapshot deleted is deleted by its name
    once the deletion is committed (in a transaction of the sweep's own; within a caller's,
    which may still roll back, files are left alone: a complete file no row names is reused
    by the next add of its bytes). Then the temporaries of writes cut short in the raw folder
    (no other process writes there while this one holds the store: DuckDB lets one process
    write a file) and its emptied subfolders; never a complete file no row names: it may be
    a store's moved or restored without its folder. Writers only: the store has the parts
    layout (`ensure_snapshot_tables`), so no catalogue query on the way (every `connect()`
    sweeps)."""
    unlinked = f"SELECT sha256 FROM {META} WHERE sha256 NOT IN " \
               "(SELECT snapshot_sha256 FROM load_snapshots)"
    files: list[str] = []
    found = con.execute(f"SELECT count(*) FROM ({unlinked})").fetchall()[0][0]
    if found:
        own = _begin(con)
        try:
            named = con.execute(f"SELECT beside_path FROM {META} WHERE sha256 IN ({unlinked}) "
                                "AND beside_path IS NOT NULL").fetchall()
            con.execute(f"DELETE FROM {PARTS} WHERE sha256 IN ({unlinked})")
            con.execute(f"DELETE FROM {META} WHERE sha256 IN ({unlinked})")
        except BaseException:
            if own:
                rollback(con)
            raise
        if own:
            con.execute("COMMIT")
            files = [name for (name,) in named]
    folder = raw_folder(con)
    if folder is not None and folder.is_dir():
        for name in files:  # (a process killed before this leaves them, complete, reusable)
            (folder / name).unlink(missing_ok=True)
        _sweep_temporaries(folder)
    return int(found)


#: The name of a write's temporary (`write_beside`): `<sha256>.zst.<pid>.tmp`.
_TEMPORARY_NAME = re.compile(r"[0-9a-f]{64}\.zst\.[0-9]+" + re.escape(TEMPORARY))


def _sweep_temporaries(folder: Path) -> None:
    """Remove the raw folder's temporaries of writes cut short (a process killed mid-write)
    and its empty subfolders; nothing else."""
    for sub in folder.iterdir():
        if not sub.is_dir():
            continue
        for file in sub.iterdir():
            if _TEMPORARY_NAME.fullmatch(file.name) and file.is_file():
                file.unlink(missing_ok=True)
        if not any(sub.iterdir()):
            sub.rmdir()
