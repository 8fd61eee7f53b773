"""`loads` and `load_snapshots`: loading one source's frames for one vintage, and what the
store answers about its loads.

A load writes one source's frames for one vintage in a single transaction: it replaces that
source's rows of that vintage, and nothing else. Loading the same snapshots again is a no-op.
Validation happens before the transaction opens, so invalid data never reaches a core table:
`load` validates each batch against its table and records a failure in `loads` with its
readable report, except batches marked `validated=True`, which the caller has validated
already (a reader that checks the same bounds faster, e.g. a 10-million-row power log);
their failures are raised by the caller before `load` is called, and not recorded. Each
load's snapshots are linked to it in `load_snapshots`, and each response an ingest read in
`load_fetches` (its URL and parameters: two requests answered with the same bytes are one
snapshot but two fetches, and an offline re-parse needs both). `load_parts` loads one table's rows
arriving in parts (a big power log, never held whole), in the same kind of transaction.
`export_parquet` writes every core table as Parquet in the Hive layout
`folder/<table>/vintage=<vintage>/source=<source>/`, the partitions taken from each row's load.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import polars as pl

from pipeline.store import power_samples
from pipeline.store.staging import staged
from pipeline.store.transactions import rollback
from schemas.fields import VINTAGE_PATTERN
from schemas.table import Table, ValidationFailed


class LoadFailed(Exception):
    """The database refused a load; it was rolled back and recorded in `loads`."""


@dataclass(frozen=True)
class Batch:
    """One parsed frame bound for one table, with the snapshot it came from. `validated`: the
    caller has already validated `frame` against `table` (load then only selects the table's
    columns in order: a big power log is not validated a second time)."""

    table: Table
    frame: pl.DataFrame
    snapshot_sha256: str
    origin: str
    validated: bool = False


class Fetch(NamedTuple):
    """One response a load read: its snapshot, the URL and parameters (secrets redacted) it
    answered, and when."""

    snapshot_sha256: str
    url: str
    params: dict[str, Any]
    fetched_at: datetime


@dataclass(frozen=True)
class LoadResult:
    load_id: str
    status: str  # "loaded" or "unchanged"
    row_count: int


def _now() -> datetime:
    return datetime.now(UTC)


def _insert_load(con: duckdb.DuckDBPyConnection, load_id: str, source: str, vintage: str, *,
                 started: datetime, finished: datetime | None, status: str,
                 row_count: int | None, snapshots: Iterable[str], tables: str | None,
                 error: str | None = None, fingerprint: str | None = None,
                 fetches: Sequence[Fetch] = ()) -> None:
    """The one INSERT into `loads`, with the load's snapshots linked in `load_snapshots` and
    its fetches in `load_fetches`."""
    con.execute(
        "INSERT INTO loads (load_id, source, vintage, started_at_utc, finished_at_utc, status, "
        "row_count, tables, error, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [load_id, source, vintage, started, finished, status, row_count, tables, error,
         fingerprint])
    shas = sorted(set(snapshots))
    if shas:
        con.execute("INSERT INTO load_snapshots SELECT ?, unnest(?)", [load_id, shas])
    if fetches:
        con.executemany("INSERT INTO load_fetches VALUES (?, ?, ?, ?, ?)", [
            [load_id, f.snapshot_sha256, f.url, json.dumps(f.params, sort_keys=True),
             f.fetched_at] for f in fetches])


def record_failure(con: duckdb.DuckDBPyConnection, source: str, vintage: str,
                   snapshots: Iterable[str], error: str, *, fetches: Sequence[Fetch] = ()
                   ) -> None:
    """A failure met before any load began (fetch, parse): a failed load with its reason,
    the snapshots it had read and, from an ingest, the responses they came from."""
    now = _now()
    _insert_load(con, uuid.uuid4().hex, source, vintage, started=now, finished=now,
                 status="failed", row_count=0, snapshots=snapshots, tables=None, error=error,
                 fetches=fetches)


def _as_is(text: str) -> str:
    return text


def load(con: duckdb.DuckDBPyConnection, source: str, vintage: str,
         batches: Sequence[Batch], clean: Callable[[str], str] = _as_is, *,
         fingerprint: str | None = None, fetches: Sequence[Fetch] = ()) -> LoadResult:
    """Validate every batch (but those marked validated), then replace `source`'s rows of
    `vintage` in one transaction. `clean` is applied to a failure's text before it is
    recorded (ingest redacts its secrets there). `fingerprint`: the caller's digest of what
    decides the rows (a file's sha256 and its reader's settings), instead of hashing them.
    `fetches`: the responses the batches were parsed from, recorded with the load."""
    snapshots = {b.snapshot_sha256 for b in batches}
    tables = sorted({b.table.name for b in batches})
    load_id = uuid.uuid4().hex
    started = _now()
    try:
        frames = [(b, b.frame.select(b.table.columns) if b.validated
                   else b.table.validate(b.frame, b.origin)) for b in batches]
    except ValidationFailed as failure:
        _insert_load(con, load_id, source, vintage, started=started, finished=_now(),
                     status="failed", row_count=0, snapshots=snapshots,
                     tables=",".join(tables), error=clean(failure.report()), fetches=fetches)
        raise
    return _write(con, source, vintage, load_id, started,
                  [(b.table.name, frame, b.snapshot_sha256) for b, frame in frames],
                  fingerprint or _fingerprint(frames), snapshots, tables, clean,
                  fetches=fetches)


def load_parts(con: duckdb.DuckDBPyConnection, source: str, vintage: str, table: Table,
               snapshot_sha256: str, parts: Iterable[pl.DataFrame], *, fingerprint: str,
               snapshot_kept: Callable[[], None] | None = None) -> LoadResult:
    """`load` of one table's rows arriving part by part (a 10-million-row power log read in
    parts, never whole), each part validated by whoever yields it; `fingerprint` (required:
    the rows are not all at hand to be hashed) decides `unchanged` before any part is read.
    A part that fails to read rolls the load back; its error propagates, not recorded (as
    when a caller's own validation fails before `load`). `snapshot_kept`, for a snapshot
    being kept meanwhile (`pipeline.store.evidence.snapshot_meanwhile`), is called before
    the load is recorded, loaded or refused: it returns once the snapshot the load links is
    kept, or raises why it is not (then nothing is recorded)."""
    return _write(con, source, vintage, uuid.uuid4().hex, _now(),
                  ((table.name, part.select(table.columns), snapshot_sha256) for part in parts),
                  fingerprint, {snapshot_sha256}, [table.name], _as_is,
                  snapshot_kept or (lambda: None))


def previous_fingerprint(con: duckdb.DuckDBPyConnection, source: str, vintage: str
                         ) -> tuple[str, int, str | None] | None:
    """(load_id, rows, fingerprint) of `source`'s last good load of `vintage`, or None."""
    rows = con.execute(
        "SELECT load_id, row_count, fingerprint FROM loads WHERE source = ? AND vintage = ?"
        " AND status = 'ok' ORDER BY finished_at_utc DESC LIMIT 1", [source, vintage]
    ).fetchall()
    return (str(rows[0][0]), int(rows[0][1]), rows[0][2]) if rows else None


def _write(con: duckdb.DuckDBPyConnection, source: str, vintage: str, load_id: str,
           started: datetime, frames: Iterable[tuple[str, pl.DataFrame, str]],
           fingerprint: str, snapshots: set[str], tables: list[str],
           clean: Callable[[str], str], snapshots_kept: Callable[[], None] = lambda: None,
           fetches: Sequence[Fetch] = ()) -> LoadResult:
    """The transaction of `load` and `load_parts`: `unchanged` when the source's last good
    load of `vintage` had this fingerprint, else its rows replaced by `frames`."""
    previous = previous_fingerprint(con, source, vintage)
    if previous and previous[2] == fingerprint:
        return LoadResult(previous[0], "unchanged", previous[1])

    rows = 0
    con.execute("BEGIN TRANSACTION")
    try:
        _insert_load(con, load_id, source, vintage, started=started, finished=None,
                     status="running", row_count=None, snapshots=snapshots,
                     tables=",".join(tables), fingerprint=fingerprint, fetches=fetches)
        for name in tables:
            if name == power_samples.VIEW:  # stored as two tables (power_samples.py)
                power_samples.delete_loads(con, source, vintage)
                continue
            con.execute(
                f"DELETE FROM {name} WHERE load_id IN "  # table names come from our schemas
                "(SELECT load_id FROM loads WHERE source = ? AND vintage = ?)",
                [source, vintage],
            )
        known: power_samples.Known = {}  # the series keys of the load's parts so far
        for name, frame, snapshot in frames:
            if name == power_samples.VIEW:
                rows += power_samples.insert(con, frame, load_id, snapshot, known)
            else:
                rows += _insert(con, name, frame,
                                {"load_id": load_id, "snapshot_sha256": snapshot})
        snapshots_kept()
        con.execute(
            "UPDATE loads SET status = 'ok', finished_at_utc = ?, row_count = ? "
            "WHERE load_id = ?", [_now(), rows, load_id])
        con.execute("COMMIT")
    except duckdb.Error as error:
        rollback(con)
        if interrupted(error):  # a Ctrl-C, not the database refusing: nothing recorded
            raise KeyboardInterrupt from error
        snapshots_kept()  # raises again when it was what failed: nothing to record then
        _insert_load(con, load_id, source, vintage, started=started, finished=_now(),
                     status="failed", row_count=0, snapshots=snapshots,
                     tables=",".join(tables), error=clean(str(error)), fetches=fetches)
        raise LoadFailed(f"{source} {vintage}: the database refused the load: {error}"
                         ) from error
    except BaseException:  # a part that failed to read, an interrupt: nothing is kept
        rollback(con)
        raise
    return LoadResult(load_id, "loaded", rows)


def interrupted(error: BaseException) -> bool:
    """Whether a DuckDB error is an interrupt, not a failure: DuckDB's own (a Ctrl-C seen
    while it ran a statement, `RuntimeError: Query interrupted`, or `con.interrupt()`), or a
    KeyboardInterrupt raised in the Python code of an Arrow stream it was reading, which
    DuckDB reports as an error naming it."""
    return (isinstance(error, duckdb.InterruptException)
            or (isinstance(error, RuntimeError) and str(error) == "Query interrupted")
            or (isinstance(error, duckdb.Error) and "KeyboardInterrupt" in str(error)))


_MANY_ROWS = 100_000


def _insert(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame,
            constants: dict[str, str]) -> int:
    """INSERT the frame's rows with `constants` (load_id, snapshot) added in SQL: a column of
    millions of copies of one string built in polars takes memory, a SQL constant none.
    In frames of `_MANY_ROWS` or more, columns all null are left to the table's NULL default
    and a string column holding one value throughout goes as that value, for the same reason
    (smaller frames as they are: a frame of one row is all constants)."""
    if not frame.height:
        return 0
    names, values = [], []
    for name, value in constants.items():
        names.append(f"? AS {name}")
        values.append(value)
    kept = []
    for name in frame.columns:
        column = frame[name]
        if frame.height < _MANY_ROWS:
            kept.append(name)
        elif column.null_count() == frame.height:
            continue
        elif column.dtype == pl.String and column.null_count() == 0 and \
                (column == column[0]).all():
            names.append(f'?::VARCHAR AS "{name}"')
            values.append(column[0])
        else:
            kept.append(name)
    names[:0] = [f'"{name}"' for name in kept]
    with staged(con, "staged_frame", frame.select(kept)):
        con.execute(f"INSERT INTO {table} BY NAME SELECT {', '.join(names)} FROM staged_frame",
                    values)
    return frame.height


def _fingerprint(frames: Sequence[tuple[Batch, pl.DataFrame]]) -> str:
    """What a load would write: table, snapshot and every row's content, order-independent."""
    digest = hashlib.sha256()
    for batch, frame in sorted(frames, key=lambda bf: (bf[0].table.name, bf[0].snapshot_sha256)):
        digest.update(f"{batch.table.name}|{batch.snapshot_sha256}|".encode())
        # the sorted row hashes as bytes (a list's text would cost seconds on 10M rows)
        digest.update(frame.hash_rows(seed=0).sort().to_numpy().tobytes())
    return digest.hexdigest()


def latest_vintage(con: duckdb.DuckDBPyConnection) -> str | None:
    """The latest month any source loaded successfully: loads of evidence files (vintage
    `evidence`, no month) are not market data, so never "the latest vintage"."""
    found: str | None = con.execute(
        "SELECT max(vintage) FROM loads WHERE status = 'ok' AND regexp_full_match(vintage, ?)",
        [VINTAGE_PATTERN]).fetchall()[0][0]
    return found


def has_loads_up_to(con: duckdb.DuckDBPyConnection, vintage: str) -> bool:
    """Whether any source loaded successfully for a vintage <= `vintage`."""
    rows = con.execute("SELECT count(*) FROM loads WHERE status = 'ok' AND vintage <= ?",
                       [vintage]).fetchall()
    return bool(rows[0][0])


@dataclass(frozen=True)
class LastLoad:
    finished_at: datetime
    row_count: int
    vintage: str


def last_good_loads(con: duckdb.DuckDBPyConnection) -> dict[str, LastLoad]:
    """Per source, its latest successful load (finished time in UTC, rows, vintage)."""
    rows = con.execute(
        "SELECT source, max(finished_at_utc), arg_max(row_count, finished_at_utc), "
        "arg_max(vintage, finished_at_utc) FROM loads WHERE status = 'ok' "
        "GROUP BY source").fetchall()
    return {source: LastLoad(finished.astimezone(UTC), count, vintage)
            for source, finished, count, vintage in rows}


@dataclass(frozen=True)
class Attempt:
    started_at: datetime
    vintage: str
    status: str  # "ok", "failed", ...
    error: str | None


def last_attempts(con: duckdb.DuckDBPyConnection) -> dict[str, Attempt]:
    """Per source, its latest load whatever came of it (start time in UTC, vintage, status,
    error): a failure after the last good load shows here."""
    rows = con.execute(
        "SELECT source, started_at_utc, vintage, status, error FROM loads QUALIFY "
        "row_number() OVER (PARTITION BY source ORDER BY started_at_utc DESC) = 1"
    ).fetchall()
    return {source: Attempt(started.astimezone(UTC), vintage, status, error)
            for source, started, vintage, status, error in rows}


def coverage(con: duckdb.DuckDBPyConnection, source: str, vintage: str, table: str,
             zone: str, counted: str) -> dict[str, int]:
    """Per `zone` value, how many distinct `counted` values (intervals, rate days, offers)
    `source`'s rows of `vintage` in `table` hold now: what its last good load left (a load
    replaces all its earlier rows of that vintage)."""
    rows = con.execute(
        f"SELECT {zone}, count(DISTINCT {counted}) FROM {table} "  # names from our schemas
        "WHERE load_id IN (SELECT load_id FROM loads WHERE source = ? AND vintage = ? "
        "AND status = 'ok') GROUP BY ALL", [source, vintage]).fetchall()
    return {str(value): int(count) for value, count in rows}


def export_parquet(con: duckdb.DuckDBPyConnection, folder: Path) -> list[tuple[str, int]]:
    """Every `core__*` table (or view) of the store as Parquet partitioned by its rows' load's
    vintage and source (Hive layout, DuckDB `COPY ... PARTITION_BY`), replacing what `folder`
    held for each table; (table, rows) per table written. Read back with
    `read_parquet('folder/<table>/**/*.parquet', hive_partitioning = true)`."""
    tables = [str(r[0]) for r in con.execute(  # views too: core__power_samples is one
        "SELECT name FROM (SELECT table_name AS name, database_name FROM duckdb_tables() "
        "UNION ALL SELECT view_name, database_name FROM duckdb_views() WHERE NOT internal) "
        "WHERE name LIKE 'core\\_\\_%' ESCAPE '\\' AND database_name = current_database() "
        "ORDER BY name").fetchall()]
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for table in tables:  # names from the store's catalogue, all core__<word>
        target = folder / table
        rows = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        if target.exists():
            shutil.rmtree(target)
        if rows:
            con.execute(
                f"COPY (SELECT t.*, l.vintage, l.source FROM {table} t "
                "JOIN loads l ON l.load_id = t.load_id) "
                "TO ? (FORMAT parquet, PARTITION_BY (vintage, source))", [str(target)])
        written.append((table, int(rows)))
    return written
