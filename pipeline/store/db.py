"""The store's file: where it is, opening it (one writer at a time: a process that finds it in
use waits, then says so), the bookkeeping tables' DDL (and the migration of an older file; the
raw snapshots' tables are `pipeline.store.snapshots`'), and running a query into a polars
frame."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline.store import caches, power_samples
from pipeline.store.errors import StoreError
from pipeline.store.snapshots import ensure_snapshot_tables, raw_folder_of, sweep_orphans
from schemas.architecture import MODEL_ARCHITECTURES
from schemas.market import MARKET_TABLES
from schemas.table import Table

DEFAULT_DB = "scorecard.duckdb"
#: Seconds a process waits for the store another scorecard process holds.
STORE_WAIT_S = 10.0

#: loads: one row per load attempt. load_snapshots: which snapshots a load read (the bytes
#: as fetched, content-addressed: `raw_snapshots`, made by `ensure_snapshot_tables`).
#: load_fetches: each response an ingest load read (URL, parameters, time), so two requests
#: answered with the same bytes stay two (no key: a load writes its fetches once).
#: out__scorecard_run: every run, keyed by vintage and proposal identity (`pipeline.store.
#: scorecards`). out__scorecard: each published scorecard; its document is its run's
#: (`candidates_json` NULL) unless a later run of the same identity replaced that run.
_META_DDL = (
    """CREATE TABLE IF NOT EXISTS loads (
        load_id VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, vintage VARCHAR NOT NULL,
        started_at_utc TIMESTAMPTZ NOT NULL, finished_at_utc TIMESTAMPTZ,
        status VARCHAR NOT NULL, row_count BIGINT, tables VARCHAR,
        error VARCHAR, fingerprint VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS load_snapshots (
        load_id VARCHAR NOT NULL, snapshot_sha256 VARCHAR NOT NULL,
        PRIMARY KEY (load_id, snapshot_sha256))""",
    """CREATE TABLE IF NOT EXISTS load_fetches (
        load_id VARCHAR NOT NULL, snapshot_sha256 VARCHAR NOT NULL, url VARCHAR NOT NULL,
        params_json VARCHAR NOT NULL, fetched_at_utc TIMESTAMPTZ NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS out__scorecard (
        vintage VARCHAR NOT NULL, proposal VARCHAR NOT NULL, proposal_sha256 VARCHAR NOT NULL,
        generated_at_utc TIMESTAMPTZ NOT NULL, candidates_json VARCHAR,
        PRIMARY KEY (vintage, proposal))""",
    """CREATE TABLE IF NOT EXISTS out__scorecard_run (
        vintage VARCHAR NOT NULL, proposal VARCHAR NOT NULL, proposal_sha256 VARCHAR NOT NULL,
        proposal_source VARCHAR NOT NULL, generated_at_utc TIMESTAMPTZ NOT NULL,
        candidates_json VARCHAR NOT NULL, PRIMARY KEY (vintage, proposal, proposal_sha256))""",
)


def db_path(explicit: str | os.PathLike[str] | None) -> Path:
    """--db, else $SCORECARD_DB, else ./scorecard.duckdb."""
    return Path(explicit or os.environ.get("SCORECARD_DB") or DEFAULT_DB)


class StoreBusy(StoreError):
    """Another process holds the store's file."""


def wait_s() -> float:
    """How long to wait for a store another process holds: $SCORECARD_STORE_WAIT_S, else
    STORE_WAIT_S."""
    text = os.environ.get("SCORECARD_STORE_WAIT_S", "")
    try:
        value = float(text) if text else STORE_WAIT_S
    except ValueError:
        value = STORE_WAIT_S
    return value if value >= 0 and value != float("inf") else STORE_WAIT_S


def connect(path: str | os.PathLike[str],
            tables: Sequence[Table] = (*MARKET_TABLES, MODEL_ARCHITECTURES), *,
            read_only: bool = False, wait: float | None = None) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the store with its meta tables and the given core tables;
    with `read_only`, open an existing store to read only (no table is created).

    DuckDB lets one process write a file: when another scorecard process holds it, wait up
    to `wait` seconds (default `wait_s()`), saying so once on stderr, then raise StoreBusy."""
    on_disk = str(path) != ":memory:" and not read_only
    made = new_store(path) if on_disk else None
    if on_disk:
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(f"{path}: cannot make its folder: {error.strerror}") from None
    bound = wait_s() if wait is None else wait
    give_up = time.monotonic() + bound
    said = False
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.IOException as error:
            if "not a valid DuckDB database file" in str(error):
                raise StoreError(f"{path}: not a scorecard store: the file is not a DuckDB "
                                 "database (empty, damaged or another kind of file); move it "
                                 "aside or name another store with --db") from None
            if "lock" not in str(error).lower():
                raise StoreError(f"{path}: cannot open the store: {error}") from None
            if time.monotonic() >= give_up:
                raise StoreBusy(f"{path}: store in use by another scorecard process (waited "
                                f"{bound:g} s; set SCORECARD_STORE_WAIT_S to wait longer)"
                                ) from None
            if not said:
                print(f"{path}: store in use by another scorecard process; waiting up to "
                      f"{bound:g} s", file=sys.stderr)
                said = True
            time.sleep(min(0.25, max(0.0, give_up - time.monotonic())))
    if not read_only:
        try:
            ensure_tables(con, tables)
            if made is None:  # (a new store has nothing to sweep)
                sweep_orphans(con)
        except BaseException:  # nothing of a store it could not set up is left behind
            con.close()
            if made is not None:
                made.remove()
            raise
        if made is not None:
            made.say_raw_found()
    return con


class NewStore:
    """What opening a store that does not exist yet makes: its file, its WAL, the folder of
    raw snapshots beside it (when none was there) and the folders above it that are missing
    (deepest first), so a refused command removes them."""

    def __init__(self, path: Path, folders: list[Path], raw: Path | None = None) -> None:
        self.path, self.folders, self.raw = path, folders, raw

    def say_raw_found(self) -> None:
        """Say on stderr that a raw folder holding files was already beside the new store
        (those of a store moved or restored without them, perhaps): nothing in it is
        deleted (the sweep deletes only temporaries and the files of the rows it deletes), and
        an add of the same bytes reuses its file."""
        raw = raw_folder_of(self.path)
        if self.raw is None and raw.is_dir() and any(raw.iterdir()):
            print(f"{raw}: already beside the new store {self.path}, holding files (another "
                  "store's raw snapshots, moved or restored without them?): nothing in it is "
                  "deleted", file=sys.stderr)

    def remove(self) -> None:
        """Remove the store's file and WAL and its raw folder, then each folder made for it
        that is empty."""
        for made in (self.path, self.path.with_name(self.path.name + ".wal")):
            if made.exists():  # (a read-only file system refuses even to unlink nothing)
                made.unlink()
        if self.raw is not None and self.raw.is_dir():
            shutil.rmtree(self.raw)
        for folder in self.folders:
            try:
                folder.rmdir()
            except OSError:  # not empty (something else was put there) or already gone
                return


def new_store(path: str | os.PathLike[str]) -> NewStore | None:
    """A `NewStore` for `path` when no file is there yet, else None (an existing store is
    never removed)."""
    store = Path(path)
    if store.exists():
        return None
    folders, folder = [], store.parent
    while not folder.exists() and folder != folder.parent:
        folders.append(folder)
        folder = folder.parent
    raw = raw_folder_of(store)
    return NewStore(store, folders, None if raw.exists() else raw)


def ensure_tables(con: duckdb.DuckDBPyConnection, tables: Sequence[Table]) -> None:
    ensure_snapshot_tables(con)
    for ddl in _META_DDL:
        con.execute(ddl)
    caches.ensure(con)
    _link_old_snapshots(con)
    _published_reads_runs(con)
    # one catalogue query rather than a `CREATE TABLE IF NOT EXISTS` (each its own write
    # transaction) per table a store opened before already holds
    held = {name for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = current_schema()").fetchall()}
    for table in tables:
        if table.name == power_samples.VIEW:  # a view over two tables (power_samples.py)
            power_samples.ensure(con)
        elif table.name not in held:
            con.execute(table.ddl())


def _link_old_snapshots(con: duckdb.DuckDBPyConnection) -> None:
    """A store written before load_snapshots kept a load's snapshots as a comma-joined
    `loads.snapshots` string: move them into the link table and drop the column (so this
    runs once per file)."""
    if not con.execute("SELECT 1 FROM duckdb_columns() WHERE table_name = 'loads' AND "
                       "column_name = 'snapshots' AND database_name = current_database() "
                       "AND schema_name = current_schema()").fetchall():
        return
    con.execute("BEGIN TRANSACTION")
    con.execute("INSERT OR IGNORE INTO load_snapshots SELECT DISTINCT load_id, sha FROM "
                "(SELECT load_id, unnest(string_split(snapshots, ',')) AS sha FROM loads "
                "WHERE snapshots <> '') WHERE sha <> ''")
    con.execute("ALTER TABLE loads DROP COLUMN snapshots")
    con.execute("COMMIT")


def _published_reads_runs(con: duckdb.DuckDBPyConnection) -> None:
    """A store written before published rows read their run holds `out__scorecard.
    candidates_json NOT NULL`: drop the constraint (so this runs once per file; a current
    store is only looked at)."""
    if con.execute("SELECT 1 FROM duckdb_columns() WHERE table_name = 'out__scorecard' AND "
                   "column_name = 'candidates_json' AND NOT is_nullable AND database_name = "
                   "current_database() AND schema_name = current_schema()").fetchall():
        con.execute("ALTER TABLE out__scorecard ALTER COLUMN candidates_json DROP NOT NULL")


def frame(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> pl.DataFrame:
    """Run a parameterised query and return a polars frame, handed over through the Arrow
    PyCapsule stream (the same frame as DuckDB's `.pl()`, without building a pyarrow table
    first: a run's reads import no pyarrow, and each costs less)."""
    return pl.DataFrame(con.sql(sql, params=list(params)))
