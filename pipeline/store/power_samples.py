"""How `core__power_samples` is stored: a view over two tables, so that a power log's readings
are stored without the text every one of them shares.

Layout (`ensure`): `power_series` holds one row per series of a load and snapshot
(`series_key`, `load_id`, `snapshot_sha256`, `series_id`, `measurement_boundary`) and
`power_readings` the readings (`series_key`, `sample_utc`, `device_id`, `gpu_index`,
`power_w`, `energy_counter_j`, `note`), in the order loaded; `core__power_samples` is a view
joining them, with the columns of the table it replaced (`schemas.power.POWER_SAMPLES` and its
provenance), so a SELECT that reads it goes on working. A view has no `rowid` and takes no
DELETE or UPDATE, and its rows come in no set order: `stored` reads a load in its order, the
loader deletes and inserts through this module. A store written before (one
`core__power_samples` table) is split by a writer that ensures the power tables (`evidence add`
of a power log); read-only, or before that, it is read as it is.

Why: DuckDB's insert of a text column costs time per row even when the column holds one
value throughout, and four do in a power log (series, boundary, load, snapshot); stored once
per series, they are not written with every reading (measured in docs/energy.md, "The
store"). For the same reason a part whose device ids are its GPU indexes written out (an
nvidia-smi log by index) stores `device_id` NULL, and the view gives it back (`DEVICE_ID`).

- `ensure`: creates the tables, the key sequence and the view (splitting an older table
  first).
- `insert`: one part of a load's samples, its rows counted (its series keyed, the key given
  to DuckDB as a constant when the part holds one series).
- `delete_loads`: the samples of a source's loads of a vintage.
- `stored`: a load's samples as a frame, in the order loaded.
- `valueless`: how many of a load's samples have neither power nor energy, by their note.
"""

from __future__ import annotations

import duckdb
import polars as pl

from pipeline.store.snapshots import relation_kind
from pipeline.store.staging import staged
from pipeline.store.transactions import rollback
from schemas.power import POWER_SAMPLES
from schemas.table import PROVENANCE, duckdb_type

VIEW = POWER_SAMPLES.name
SERIES = "power_series"
READINGS = "power_readings"
_KEYS = "power_series_key"
#: What a load's readings share per series, kept once in `power_series`.
SERIES_COLUMNS = ("series_id", "measurement_boundary")
READING_COLUMNS = tuple(c for c in POWER_SAMPLES.columns if c not in SERIES_COLUMNS)

_TABLES = (
    # no NOT NULL on the series' text: an older store's rows come over as they were
    f"CREATE TABLE IF NOT EXISTS {SERIES} (series_key INTEGER NOT NULL, "
    + ", ".join(f"{c} {duckdb_type(c)}" for c in (*PROVENANCE, *SERIES_COLUMNS)) + ")",
    f"CREATE TABLE IF NOT EXISTS {READINGS} (series_key INTEGER NOT NULL, "
    + ", ".join(f"{c} {duckdb_type(c)}" for c in READING_COLUMNS) + ")",
)
#: A reading's device id as the view and `stored` give it: kept NULL when it is the reading's
#: GPU index written out (an nvidia-smi log by index; `device_id` is required, so NULL means
#: only that), which DuckDB then need not store as text row by row (`insert`)
DEVICE_ID = "coalesce(r.device_id, CAST(r.gpu_index AS VARCHAR)) AS device_id"


def _columns(names: tuple[str, ...]) -> str:
    """`names` selected from `power_readings r JOIN power_series s`."""
    return ", ".join(DEVICE_ID if c == "device_id" else
                     f"{'r' if c in READING_COLUMNS else 's'}.{c}" for c in names)


_VIEW = (f"CREATE OR REPLACE VIEW {VIEW} AS SELECT {_columns(POWER_SAMPLES.all_columns)} "
         f"FROM {READINGS} r JOIN {SERIES} s USING (series_key)")


def ensure(con: duckdb.DuckDBPyConnection) -> None:
    """The layout above; a store with the older `core__power_samples` table is split first
    (once: it has the view afterwards), a view from before device ids were kept NULL
    (`DEVICE_ID`) replaced (once)."""
    kind = relation_kind(con, VIEW)
    if kind == "BASE TABLE":
        _split_old_table(con)
        return
    con.execute(f"CREATE SEQUENCE IF NOT EXISTS {_KEYS}")
    for ddl in _TABLES:
        con.execute(ddl)
    if kind is None or not _view_gives_indexes(con):
        con.execute(_VIEW)


def _view_gives_indexes(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store's view gives a NULL device id back as its GPU index."""
    rows = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = ? AND schema_name = "
                       "current_schema() AND database_name = current_database()",
                       [VIEW]).fetchall()
    return bool(rows) and "coalesce" in str(rows[0][0]).lower()


def _split_old_table(con: duckdb.DuckDBPyConnection) -> None:
    """The older table's rows into series and readings (in their order), then the view in
    its place; all or nothing."""
    old = "power_samples_before_split"
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"ALTER TABLE {VIEW} RENAME TO {old}")
        con.execute(f"CREATE SEQUENCE IF NOT EXISTS {_KEYS}")
        for ddl in _TABLES:
            con.execute(ddl)
        shared = ", ".join((*PROVENANCE, *SERIES_COLUMNS))
        con.execute(f"INSERT INTO {SERIES} SELECT nextval('{_KEYS}'), * FROM "
                    f"(SELECT DISTINCT {shared} FROM {old} ORDER BY ALL)")
        matched = " AND ".join(f"s.{c} IS NOT DISTINCT FROM o.{c}"
                               for c in (*PROVENANCE, *SERIES_COLUMNS))
        con.execute(f"INSERT INTO {READINGS} SELECT s.series_key, "
                    + ", ".join(f"o.{c}" for c in READING_COLUMNS)
                    + f" FROM {old} o JOIN {SERIES} s ON {matched} ORDER BY o.rowid")
        con.execute(f"DROP TABLE {old}")
        con.execute(_VIEW)
    except BaseException:
        rollback(con)
        raise
    con.execute("COMMIT")


#: The series keys a load has given so far: (load_id, snapshot_sha256, series_id,
#: measurement_boundary) -> series_key (`insert`'s `known`).
Known = dict[tuple[str, str, str, str], int]


def insert(con: duckdb.DuckDBPyConnection, frame: pl.DataFrame, load_id: str,
           snapshot_sha256: str, known: Known | None = None) -> int:
    """One part of load `load_id`'s samples (POWER_SAMPLES columns) appended, the series it
    holds added to `power_series` the first time they appear in the load. `known`: the keys
    the load's earlier parts were given (filled here), so that a part whose series all came
    before asks DuckDB nothing (a log's parts mostly repeat its GPUs)."""
    if not frame.height:
        return 0
    series = _series_in(frame)
    keyed = _keys(con, series, load_id, snapshot_sha256, {} if known is None else known)
    by_index = _device_ids_are_indexes(frame)
    handed = [c for c in READING_COLUMNS if not (by_index and c == "device_id")]
    readings = ", ".join("NULL" if c not in handed else c for c in READING_COLUMNS)
    if keyed.height == 1:  # the usual case: the key a constant, no join
        rows, key, params = frame.select(handed), "?::INTEGER", [keyed[0, "series_key"]]
    else:
        rows = frame.join(keyed, on=list(SERIES_COLUMNS), how="left", maintain_order="left"
                          ).select("series_key", *handed)
        key, params = "series_key", []
    # handed over as an Arrow C stream: DuckDB's polars adapter builds a pyarrow table first
    with staged(con, "staged_power_readings", _in_row_groups(rows).__arrow_c_stream__()):
        con.execute(f"INSERT INTO {READINGS} SELECT {key}, {readings} "
                    "FROM staged_power_readings", params)
    return frame.height


def _device_ids_are_indexes(frame: pl.DataFrame) -> bool:
    """Whether every reading's device id is its GPU index written out ("0" for 0), so that
    it is stored NULL (`DEVICE_ID`): about 0.4 s of DuckDB's 1.3 s inserting a 10-million-row
    log went to storing its device ids as text (docs/energy.md). A null index keeps them."""
    same = frame.select((pl.col("device_id") == pl.col("gpu_index").cast(pl.String))
                        .all(ignore_nulls=False)).item()
    return same is True


#: Rows per chunk of a frame handed to DuckDB: its row group, so that its scan of the frame has
#: one batch per thread to take.
ROW_GROUP_ROWS = 122_880


def _in_row_groups(frame: pl.DataFrame) -> pl.DataFrame:
    """The same rows in chunks of `ROW_GROUP_ROWS` (slices: no copy)."""
    if frame.height <= ROW_GROUP_ROWS:
        return frame
    return pl.concat([frame.slice(at, ROW_GROUP_ROWS)
                      for at in range(0, frame.height, ROW_GROUP_ROWS)], rechunk=False)


def _series_in(frame: pl.DataFrame) -> pl.DataFrame:
    """The distinct (series_id, measurement_boundary) of a part, first seen first (both are
    required: never null); one row, without a pass to find them, when both are constant."""
    first = frame.head(1).select(SERIES_COLUMNS)
    if all((frame[c] == first[0, c]).all() for c in SERIES_COLUMNS):
        return first
    return frame.select(SERIES_COLUMNS).unique(maintain_order=True)


def _keys(con: duckdb.DuckDBPyConnection, series: pl.DataFrame, load_id: str,
          snapshot_sha256: str, known: Known) -> pl.DataFrame:
    """`series` with the `series_key` each has in load `load_id` from snapshot
    `snapshot_sha256` (a load of several snapshots keeps each row's), new ones added; those
    in `known` are not asked of DuckDB, the others are added to it."""
    pairs = [(load_id, snapshot_sha256, *row) for row in series.iter_rows()]
    new = series.filter(pl.Series([pair not in known for pair in pairs]))
    if new.height:
        theirs = f"(SELECT * FROM {SERIES} WHERE load_id = ? AND snapshot_sha256 = ?) k"
        with staged(con, "staged_power_series", new):
            con.execute(
                f"INSERT INTO {SERIES} SELECT nextval('{_KEYS}'), ?, ?, n.* FROM staged_power_"
                f"series n ANTI JOIN {theirs} USING (series_id, measurement_boundary)",
                [load_id, snapshot_sha256] * 2)
            for *row, key in con.execute(
                    f"SELECT n.*, k.series_key FROM staged_power_series n JOIN {theirs} "
                    "USING (series_id, measurement_boundary)", [load_id, snapshot_sha256]
            ).fetchall():
                known[(load_id, snapshot_sha256, *row)] = key
    return series.with_columns(series_key=pl.Series([known[pair] for pair in pairs],
                                                     dtype=pl.Int32))


def delete_loads(con: duckdb.DuckDBPyConnection, source: str, vintage: str) -> None:
    """The samples of every load of `source` for `vintage` (in the caller's transaction)."""
    loads = "SELECT load_id FROM loads WHERE source = ? AND vintage = ?"
    con.execute(f"DELETE FROM {READINGS} WHERE series_key IN "
                f"(SELECT series_key FROM {SERIES} WHERE load_id IN ({loads}))",
                [source, vintage])
    con.execute(f"DELETE FROM {SERIES} WHERE load_id IN ({loads})", [source, vintage])


def stored(con: duckdb.DuckDBPyConnection, load_id: str) -> pl.DataFrame:
    """Load `load_id`'s samples (POWER_SAMPLES columns), in the order they were loaded; from
    the older table as it is in a store opened read-only before its split."""
    if relation_kind(con, READINGS) is None:
        sql = (f"SELECT {', '.join(POWER_SAMPLES.columns)} FROM {VIEW} WHERE load_id = ? "
               "ORDER BY rowid")
    else:
        sql = (f"SELECT {_columns(POWER_SAMPLES.columns)} FROM {READINGS} r JOIN {SERIES} s "
               "USING (series_key) WHERE s.load_id = ? ORDER BY r.rowid")
    return pl.DataFrame(con.sql(sql, params=[load_id]))  # (no pyarrow table on the way)


def valueless(con: duckdb.DuckDBPyConnection, load_id: str) -> dict[str | None, int]:
    """Load `load_id`'s samples with neither power nor energy (kept, flagged by their note;
    the energy skips them), counted by note; none in a store without the power tables."""
    if relation_kind(con, READINGS) is None:
        return {}
    rows = con.execute(f"SELECT r.note, count(*) FROM {READINGS} r JOIN {SERIES} s USING "
                       "(series_key) WHERE s.load_id = ? AND r.power_w IS NULL AND "
                       "r.energy_counter_j IS NULL GROUP BY r.note", [load_id]).fetchall()
    return {note: int(n) for note, n in rows}
