"""`core__power_samples` stored as `power_series` + `power_readings` behind a view
(pipeline/store/power_samples.py): the view has the columns and types of the table it
replaced, a load's parts come back in the order loaded (one series or several per part), a
new load of the source replaces its rows, and a store with the older table is split by a
writer and read as it is by a reader."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from pipeline.store import connect, power_samples
from pipeline.store.loads import Batch, LoadFailed, load, load_parts
from schemas.power import POWER_COLUMNS, POWER_SAMPLES


def samples(series: list[str], seconds: int, *, power: float = 300.0) -> pl.DataFrame:
    """One reading per second of device "0" for each series in turn, power `power` + s."""
    start = datetime(2026, 11, 20, 11, tzinfo=UTC)
    rows = [{"sample_utc": start + timedelta(seconds=s), "device_id": "0", "gpu_index": 0,
             "series_id": name, "measurement_boundary": "gpu_board", "power_w": power + s,
             "energy_counter_j": None, "note": None}
            for name in series for s in range(seconds)]
    return pl.DataFrame(rows, schema=POWER_COLUMNS)


def stored_rows(con: duckdb.DuckDBPyConnection, load_id: str) -> pl.DataFrame:
    return power_samples.stored(con, load_id).cast(pl.Schema(POWER_COLUMNS))


def test_the_view_has_the_columns_and_types_of_the_table_it_replaced(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    old = duckdb.connect()
    old.execute(POWER_SAMPLES.ddl())
    def described(c: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
        return [(name, kind) for name, kind, *_ in
                c.execute(f"DESCRIBE {POWER_SAMPLES.name}").fetchall()]

    assert described(con) == described(old)  # (nullability aside: the series' are NOT NULL)
    assert len(described(con)) == len(POWER_SAMPLES.all_columns) == 10
    assert con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = ?",
                       [POWER_SAMPLES.name]).fetchall() == [("VIEW",)]


def test_parts_come_back_in_order_with_one_series_key_each(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    # part 1 holds series a then b (the joined path), part 2 series b again then c (one of
    # them new): 3 series in the load, 5 + 5 + 5 + 5 readings in the order given
    parts = [samples(["a", "b"], 5), samples(["b", "c"], 5, power=500.0)]
    result = load_parts(con, "power:test", "evidence", POWER_SAMPLES, "f" * 64, parts,
                        fingerprint="one")
    assert result.row_count == 20
    assert_frame_equal(stored_rows(con, result.load_id), pl.concat(parts))
    assert con.execute(f"SELECT series_id, count(*) FROM {power_samples.SERIES} "
                       "GROUP BY ALL ORDER BY 1").fetchall() == [("a", 1), ("b", 1), ("c", 1)]
    # the view gives every row its provenance
    assert con.execute(f"SELECT count(*), any_value(load_id), any_value(snapshot_sha256) "
                       f"FROM {POWER_SAMPLES.name}").fetchall() == [(20, result.load_id,
                                                                     "f" * 64)]


def test_a_frame_goes_to_duckdb_in_row_groups() -> None:
    # 2.5 row groups come in chunks of one: 122,880 + 122,880 + 61,440 rows, not copied
    big = pl.DataFrame({"k": range(307_200)})
    chunked = power_samples._in_row_groups(big)
    assert chunked.n_chunks() == 3 and chunked.equals(big)
    small = big.head(10)
    assert power_samples._in_row_groups(small) is small


def test_a_new_load_of_the_source_replaces_its_rows_and_series(tmp_path: Path) -> None:
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    load_parts(con, "power:x", "evidence", POWER_SAMPLES, "a" * 64, [samples(["a", "b"], 4)],
               fingerprint="first")
    other = load_parts(con, "power:y", "evidence", POWER_SAMPLES, "b" * 64,
                       [samples(["z"], 3)], fingerprint="other")
    again = load_parts(con, "power:x", "evidence", POWER_SAMPLES, "c" * 64,
                       [samples(["c"], 2)], fingerprint="second")
    # power:x now holds its second load's 2 rows (series c) only; power:y's 3 rows stay
    assert con.execute(f"SELECT series_id, count(*) FROM {POWER_SAMPLES.name} "
                       "GROUP BY ALL ORDER BY 1").fetchall() == [("c", 2), ("z", 3)]
    assert con.execute(f"SELECT count(*) FROM {power_samples.SERIES}").fetchall() == [(2,)]
    assert stored_rows(con, again.load_id).height == 2
    assert stored_rows(con, other.load_id).height == 3


def test_each_row_keeps_its_snapshot_in_a_load_of_two(tmp_path: Path) -> None:
    # one load of two batches, the same series from two files: 3 rows from "a", 2 from "b"
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    load(con, "power:two", "evidence", [
        Batch(POWER_SAMPLES, samples(["s"], 3), "a" * 64, "a.csv", validated=True),
        Batch(POWER_SAMPLES, samples(["s"], 2, power=900.0), "b" * 64, "b.csv",
              validated=True)])
    assert con.execute(f"SELECT snapshot_sha256, count(*), min(power_w) FROM "
                       f"{POWER_SAMPLES.name} GROUP BY ALL ORDER BY 1").fetchall() == [
        ("a" * 64, 3, 300.0), ("b" * 64, 2, 900.0)]


def test_a_refused_insert_says_why(tmp_path: Path) -> None:
    # a frame the database cannot take (a time that is not one, past a caller's validation):
    # the load is rolled back and recorded failed with DuckDB's reason, not with the
    # "transaction is aborted" of the clean-up after it (pipeline/store/staging.py)
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    bad = samples(["s"], 2).with_columns(sample_utc=pl.lit("not a time"))
    with pytest.raises(LoadFailed, match="Conversion Error") as refused:
        load(con, "power:bad", "evidence",
             [Batch(POWER_SAMPLES, bad, "a" * 64, "bad.csv", validated=True)])
    assert "aborted" not in str(refused.value)
    assert con.execute("SELECT status, error LIKE '%Conversion Error%' FROM loads"
                       ).fetchall() == [("failed", True)]
    assert con.execute(f"SELECT count(*) FROM {POWER_SAMPLES.name}").fetchall() == [(0,)]


def old_store(path: Path) -> tuple[pl.DataFrame, str]:
    """A store of the layout before the split (one `core__power_samples` table) holding a
    load of two series, written in an order that is not sorted (b before a)."""
    con = connect(path, tables=[])
    con.execute(POWER_SAMPLES.ddl())
    rows = samples(["b", "a"], 3)
    con.execute("INSERT INTO loads (load_id, source, vintage, started_at_utc, status) "
                "VALUES ('L', 'power:old', 'evidence', now(), 'ok')")
    con.register("rows", rows)
    con.execute(f"INSERT INTO {POWER_SAMPLES.name} SELECT *, 'L', 'd' FROM rows")
    con.close()
    return rows, "L"


def test_an_old_store_is_read_as_it_is_by_a_reader(tmp_path: Path) -> None:
    rows, load_id = old_store(tmp_path / "old.duckdb")
    con = duckdb.connect(str(tmp_path / "old.duckdb"), read_only=True)
    assert_frame_equal(stored_rows(con, load_id), rows)


def test_an_old_row_without_its_snapshot_comes_over_as_it_was(tmp_path: Path) -> None:
    # an older table declared no NOT NULL: a row without snapshot_sha256 is split as it is,
    # not refused (which would lock every writer out of the store) nor dropped
    rows, load_id = old_store(tmp_path / "old.duckdb")
    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.execute(f"UPDATE {POWER_SAMPLES.name} SET snapshot_sha256 = NULL WHERE power_w = 300")
    con.close()
    con = connect(tmp_path / "old.duckdb", tables=[POWER_SAMPLES])
    assert_frame_equal(stored_rows(con, load_id), rows)
    assert con.execute(f"SELECT count(*) FROM {POWER_SAMPLES.name} WHERE snapshot_sha256 "
                       "IS NULL").fetchall() == [(2,)]  # 300 W: the first second of b and a


def test_an_old_store_is_split_by_a_writer_once(tmp_path: Path) -> None:
    rows, load_id = old_store(tmp_path / "old.duckdb")
    con = connect(tmp_path / "old.duckdb", tables=[POWER_SAMPLES])
    assert_frame_equal(stored_rows(con, load_id), rows)  # the order kept: b's rows, then a's
    assert con.execute(f"SELECT DISTINCT load_id, snapshot_sha256 FROM {POWER_SAMPLES.name}"
                       ).fetchall() == [("L", "d")]
    assert con.execute(f"SELECT count(*) FROM {power_samples.SERIES}").fetchall() == [(2,)]
    con.close()
    con = connect(tmp_path / "old.duckdb", tables=[POWER_SAMPLES])  # again: nothing to split
    assert stored_rows(con, load_id).height == 6
    new = load_parts(con, "power:new", "evidence", POWER_SAMPLES, "e" * 64, [samples(["n"], 1)],
                     fingerprint="new")  # the key sequence goes on past the split's keys
    assert con.execute(f"SELECT count(DISTINCT series_key) FROM {power_samples.SERIES}"
                       ).fetchall() == [(3,)]
    assert stored_rows(con, new.load_id).height == 1


def test_device_ids_that_are_gpu_indexes_are_stored_null_and_read_back(tmp_path: Path) -> None:
    # samples(): device "0" at gpu_index 0 throughout: the index written out, stored NULL
    # (no text per reading) and given back as "0" by the view and by `stored`. A part of
    # GPU UUIDs, and one whose index is missing on a row, keep their ids as text.
    con = connect(tmp_path / "s.duckdb", tables=[POWER_SAMPLES])
    by_index = samples(["a"], 3)
    uuids = samples(["b"], 2).with_columns(device_id=pl.lit("GPU-8f2c"))
    gap = samples(["c"], 2).with_columns(
        gpu_index=pl.Series([0, None], dtype=pl.Int64), device_id=pl.lit("0"))
    loads = [load_parts(con, f"power:{name}", "evidence", POWER_SAMPLES, name * 64, [part],
                        fingerprint=name)
             for name, part in (("a", by_index), ("b", uuids), ("c", gap))]
    stored_ids = con.execute(
        f"SELECT s.series_id, list(r.device_id ORDER BY r.rowid) FROM {power_samples.READINGS} "
        f"r JOIN {power_samples.SERIES} s USING (series_key) GROUP BY ALL ORDER BY 1"
    ).fetchall()
    assert stored_ids == [("a", [None, None, None]), ("b", ["GPU-8f2c"] * 2), ("c", ["0", "0"])]
    for result, part in zip(loads, (by_index, uuids, gap), strict=True):
        assert_frame_equal(stored_rows(con, result.load_id), part)
    assert con.execute(f"SELECT series_id, list(device_id) FROM {POWER_SAMPLES.name} "
                       "GROUP BY ALL ORDER BY 1").fetchall() == [
        ("a", ["0"] * 3), ("b", ["GPU-8f2c"] * 2), ("c", ["0", "0"])]


def test_a_view_from_before_is_replaced_once(tmp_path: Path) -> None:
    # a store whose view read r.device_id as stored (before NULL ids) gets the view that
    # gives them back; a second opening leaves it as it is
    path = tmp_path / "s.duckdb"
    connect(path, tables=[POWER_SAMPLES]).close()
    con = duckdb.connect(str(path))
    old = power_samples._VIEW.replace(power_samples.DEVICE_ID, "r.device_id")
    con.execute(old)
    con.close()
    con = connect(path, tables=[POWER_SAMPLES])
    assert power_samples._view_gives_indexes(con)
    load_parts(con, "power:a", "evidence", POWER_SAMPLES, "a" * 64, [samples(["a"], 2)],
               fingerprint="a")
    assert con.execute(f"SELECT list(device_id) FROM {POWER_SAMPLES.name}").fetchall() == [
        (["0", "0"],)]
