"""The DuckDB file that is the project's memory: raw snapshots, loads, core tables, scorecards.

A load writes one source's frames for one vintage in a single transaction: it replaces that
source's rows of that vintage, and nothing else. Loading the same snapshots again is a no-op.
Validation happens before the transaction opens, so invalid data never reaches a core table:
`load` validates each batch against its table and records a failure in `loads` with its
readable report, except batches marked `validated=True`, which the caller has validated
already (a reader that checks the same bounds faster, e.g. a 10-million-row power log);
their failures are raised by the caller before `load` is called, and not recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from schemas.architecture import MODEL_ARCHITECTURES
from schemas.market import MARKET_TABLES
from schemas.table import Table, ValidationFailed

DEFAULT_DB = "scorecard.duckdb"

_META_DDL = (
    """CREATE TABLE IF NOT EXISTS raw_snapshots (
        sha256 VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, url VARCHAR NOT NULL,
        params_json VARCHAR, fetched_at_utc TIMESTAMPTZ NOT NULL, size_bytes BIGINT NOT NULL,
        content BLOB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS loads (
        load_id VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, vintage VARCHAR NOT NULL,
        started_at_utc TIMESTAMPTZ NOT NULL, finished_at_utc TIMESTAMPTZ,
        status VARCHAR NOT NULL, row_count BIGINT, snapshots VARCHAR, tables VARCHAR,
        error VARCHAR, fingerprint VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS out__scorecard (
        vintage VARCHAR NOT NULL, proposal VARCHAR NOT NULL, proposal_sha256 VARCHAR NOT NULL,
        generated_at_utc TIMESTAMPTZ NOT NULL, candidates_json VARCHAR NOT NULL,
        PRIMARY KEY (vintage, proposal))""",
)


def db_path(explicit: str | os.PathLike[str] | None) -> Path:
    """--db, else $SCORECARD_DB, else ./scorecard.duckdb."""
    return Path(explicit or os.environ.get("SCORECARD_DB") or DEFAULT_DB)


def connect(path: str | os.PathLike[str],
            tables: Sequence[Table] = (*MARKET_TABLES, MODEL_ARCHITECTURES)
            ) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the store with its meta tables and the given core tables."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    ensure_tables(con, tables)
    return con


def ensure_tables(con: duckdb.DuckDBPyConnection, tables: Sequence[Table]) -> None:
    for ddl in _META_DDL:
        con.execute(ddl)
    for table in tables:
        con.execute(table.ddl())


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
        "INSERT INTO raw_snapshots VALUES (?, ?, ?, ?, ?, ?, ?)",
        [digest, source, url, json.dumps(params or {}, sort_keys=True),
         fetched_at or datetime.now(UTC), len(content), content],
    )
    return digest


class LoadFailed(Exception):
    """The database refused a load; it was rolled back and recorded in `loads`."""


@dataclass(frozen=True)
class Batch:
    """One parsed frame bound for one table, with the snapshot it came from. `validated`: the
    caller has already validated `frame` against `table` (load then only selects the table's
    columns in order: pandera again costs 3.5 s on a 10-million-row power log)."""

    table: Table
    frame: pl.DataFrame
    snapshot_sha256: str
    origin: str
    validated: bool = False


@dataclass(frozen=True)
class LoadResult:
    load_id: str
    status: str  # "loaded" or "unchanged"
    row_count: int


def _now() -> datetime:
    return datetime.now(UTC)


def load(con: duckdb.DuckDBPyConnection, source: str, vintage: str,
         batches: Sequence[Batch]) -> LoadResult:
    """Validate every batch (but those marked validated), then replace `source`'s rows of
    `vintage` in one transaction."""
    snapshots = ",".join(sorted({b.snapshot_sha256 for b in batches}))
    tables = sorted({b.table.name for b in batches})
    load_id = uuid.uuid4().hex
    started = _now()
    try:
        frames = [(b, b.frame.select(b.table.columns) if b.validated
                   else b.table.validate(b.frame, b.origin)) for b in batches]
    except ValidationFailed as failure:
        con.execute(
            "INSERT INTO loads VALUES (?, ?, ?, ?, ?, 'failed', 0, ?, ?, ?, NULL)",
            [load_id, source, vintage, started, _now(), snapshots, ",".join(tables),
             failure.report()],
        )
        raise

    fingerprint = _fingerprint(frames)
    previous = con.execute(
        "SELECT load_id, row_count, fingerprint FROM loads WHERE source = ? AND vintage = ?"
        " AND status = 'ok' ORDER BY finished_at_utc DESC LIMIT 1",
        [source, vintage],
    ).fetchall()
    if previous and previous[0][2] == fingerprint:
        return LoadResult(previous[0][0], "unchanged", previous[0][1])

    rows = 0
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("INSERT INTO loads VALUES (?, ?, ?, ?, NULL, 'running', NULL, ?, ?, NULL, ?)",
                    [load_id, source, vintage, started, snapshots, ",".join(tables),
                     fingerprint])
        for name in tables:
            con.execute(
                f"DELETE FROM {name} WHERE load_id IN "  # table names come from our schemas
                "(SELECT load_id FROM loads WHERE source = ? AND vintage = ?)",
                [source, vintage],
            )
        for batch, frame in frames:
            staged = frame.with_columns(
                pl.lit(load_id).alias("load_id"),
                pl.lit(batch.snapshot_sha256).alias("snapshot_sha256"),
            )
            con.register("staged_frame", staged)
            con.execute(f"INSERT INTO {batch.table.name} BY NAME SELECT * FROM staged_frame")
            con.unregister("staged_frame")
            rows += staged.height
        con.execute(
            "UPDATE loads SET status = 'ok', finished_at_utc = ?, row_count = ? "
            "WHERE load_id = ?", [_now(), rows, load_id])
        con.execute("COMMIT")
    except duckdb.Error as error:
        con.execute("ROLLBACK")
        con.execute(
            "INSERT INTO loads VALUES (?, ?, ?, ?, ?, 'failed', 0, ?, ?, ?, NULL)",
            [load_id, source, vintage, started, _now(), snapshots, ",".join(tables), str(error)],
        )
        raise LoadFailed(f"{source} {vintage}: the database refused the load: {error}"
                         ) from error
    return LoadResult(load_id, "loaded", rows)


def _fingerprint(frames: Sequence[tuple[Batch, pl.DataFrame]]) -> str:
    """What a load would write: table, snapshot and every row's content, order-independent."""
    digest = hashlib.sha256()
    for batch, frame in sorted(frames, key=lambda bf: (bf[0].table.name, bf[0].snapshot_sha256)):
        digest.update(f"{batch.table.name}|{batch.snapshot_sha256}|".encode())
        # the sorted row hashes as bytes (a list's text would cost seconds on 10M rows)
        digest.update(frame.hash_rows(seed=0).sort().to_numpy().tobytes())
    return digest.hexdigest()


def frame(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    """Run a parameterised query and return a polars frame."""
    return con.sql(sql, params=list(params)).pl()
