"""Raw snapshots kept in parts (`pipeline.store.snapshots`): bytes read back as saved, through
`snapshot_content` and through the `raw_snapshots` view; a store of the older layout (one
BLOB per snapshot) migrated by a writer and read as it is by a reader; nothing kept when the
bytes are not what was hashed; orphans swept with their parts."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from pipeline import store
from pipeline.store import snapshots
from pipeline.store.snapshots import CHUNK_BYTES, PART_BYTES, save_snapshot_chunks


def parts_of(con: duckdb.DuckDBPyConnection, digest: str) -> list[tuple[int, int]]:
    return con.execute("SELECT part, octet_length(content) FROM raw_snapshot_parts WHERE "
                       "sha256 = ? ORDER BY part", [digest]).fetchall()


@pytest.mark.parametrize("size", [0, 1, PART_BYTES, 3 * PART_BYTES + 500])
def test_bytes_come_back_as_saved_in_parts_of_part_bytes(tmp_path: Path, size: int) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    data = bytes(range(256)) * (size // 256) + b"\x00\xff" * ((size % 256) // 2)
    data = data[:size].ljust(size, b"\n")
    digest = store.save_snapshot(con, data, source="s", url="https://a")
    assert store.snapshot_content(con, digest) == data
    assert con.execute("SELECT content, size_bytes FROM raw_snapshots WHERE sha256 = ?",
                       [digest]).fetchall() == [(data, size)]
    # 3 x 1024 + 500 bytes: parts 0-2 of 1024 and part 3 of 500; an empty file: one empty part
    whole, rest = divmod(size, PART_BYTES)
    expected = [(k, PART_BYTES) for k in range(whole)] + ([(whole, rest)] if rest else [])
    assert parts_of(con, digest) == (expected or [(0, 0)])


def test_a_file_read_in_chunks_is_numbered_across_them(tmp_path: Path) -> None:
    # one chunk of CHUNK_BYTES (16,384 parts) then 10 bytes: parts 0..16383 full, 16384 of 10
    # (kept in the store: its size is not above the threshold asked)
    con = store.connect(tmp_path / "s.duckdb")
    first, last = b"a" * CHUNK_BYTES, b"0123456789"
    digest = hashlib.sha256(first + last).hexdigest()
    save_snapshot_chunks(con, digest, iter([first, last]), source="power", url="file:///x",
                         size=CHUNK_BYTES + 10, beside_over=CHUNK_BYTES + 10)
    found = parts_of(con, digest)
    assert len(found) == CHUNK_BYTES // PART_BYTES + 1 == 16385
    assert found[-1] == (16384, 10) and found[-2] == (16383, PART_BYTES)
    assert store.snapshot_content(con, digest) == first + last


def test_bytes_of_another_length_than_hashed_keep_nothing(tmp_path: Path) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    with pytest.raises(OSError, match="3 bytes read where 4 were hashed"):
        save_snapshot_chunks(con, "ab" * 32, iter([b"abc"]), source="power",
                             url="file:///changed", size=4)
    assert con.execute("SELECT (SELECT count(*) FROM raw_snapshot_meta), "
                       "(SELECT count(*) FROM raw_snapshot_parts)").fetchall() == [(0, 0)]


def test_bytes_that_fail_to_read_say_why_and_keep_nothing(tmp_path: Path) -> None:
    # the chunks fail inside DuckDB's INSERT (its transaction aborted): the error says what
    # failed (the file's own error), not "Current transaction is aborted" from a statement
    # run in that transaction after it
    con = store.connect(tmp_path / "s.duckdb")

    def chunks() -> Iterator[bytes]:
        yield b"x" * PART_BYTES
        raise OSError("disk gone while reading evidence.csv")

    with pytest.raises(duckdb.Error, match="disk gone while reading evidence"):
        save_snapshot_chunks(con, "d" * 64, chunks(), source="power", url="file:///e.csv")
    assert con.execute("SELECT count(*) FROM raw_snapshot_parts").fetchall() == [(0,)]


def content_compression(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The compression of every stored segment of the parts' `content` column."""
    return {str(r[0]) for r in con.execute(
        "SELECT compression FROM pragma_storage_info('raw_snapshot_parts') WHERE column_name "
        "= 'content' AND segment_type = 'BLOB'").fetchall()}


def test_parts_are_stored_in_zstd_without_a_global_setting(tmp_path: Path) -> None:
    # 300,000 bytes of one letter, in 293 parts: DuckDB's `auto` choice stores them as
    # DICT_FSST (so it did before the column's setting), the setting before issue 33 as they
    # came (Uncompressed); the content column's own USING COMPRESSION zstd stores them in
    # zstd once checkpointed, and they read back the same
    con = store.connect(tmp_path / "s.duckdb")
    digest = store.save_snapshot(con, b"a" * 300_000, source="s", url="https://a")
    con.execute("CHECKPOINT")
    assert content_compression(con) == {"ZSTD"}
    assert store.snapshot_content(con, digest) == b"a" * 300_000
    assert con.execute("SELECT current_setting('force_compression')").fetchall() == [("auto",)]


@pytest.mark.parametrize("setting", ["", " USING COMPRESSION uncompressed"])
def test_an_older_parts_table_is_rewritten_in_zstd_by_a_writer(
        tmp_path: Path, setting: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the parts table as it was before its column setting (or with the setting before issue
    # 33, uncompressed), holding two snapshots' parts
    path = tmp_path / "s.duckdb"
    con = store.connect(path)
    big = store.save_snapshot(con, BIG, source="ecb", url="https://ecb/1")
    small = store.save_snapshot(con, SMALL, source="ecb", url="https://ecb/2")
    store.record_failure(con, "ecb", "2025-05", [big, small], "parse error: x")
    con.execute("CREATE TABLE kept AS SELECT * FROM raw_snapshot_parts")
    con.execute("DROP TABLE raw_snapshot_parts")
    con.execute("CREATE TABLE raw_snapshot_parts (sha256 VARCHAR NOT NULL, part INTEGER NOT "
                f"NULL, content BLOB{setting} NOT NULL)")
    con.execute("INSERT INTO raw_snapshot_parts SELECT * FROM kept")
    con.execute("DROP TABLE kept")
    con.close()
    reader = store.connect(path, read_only=True)  # read as it is
    assert store.snapshot_content(reader, big) == BIG
    reader.close()
    capsys.readouterr()
    # the rewrite is said once above the threshold: BIG + SMALL = 5,134 bytes, over 5,000
    monkeypatch.setattr(snapshots, "REWRITE_NOTE_BYTES", 5_000)
    con = store.connect(path)
    assert capsys.readouterr().err == (
        "keeping the store's 0 MB of raw snapshots in zstd (once)\n")
    shown = "SELECT current_setting('enable_progress_bar')"  # DuckDB's default again after
    assert con.execute(shown).fetchall() == duckdb.connect().execute(shown).fetchall()
    (created,) = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = "
                             "'raw_snapshot_parts'").fetchall()[0]
    assert '"content" BLOB USING COMPRESSION ZSTD NOT NULL' in created
    # 5,120 bytes = 5 parts of 1,024; 14 bytes = 1 part: the same parts, the same bytes
    assert [n for n, _ in parts_of(con, big)] == [0, 1, 2, 3, 4]
    assert parts_of(con, small) == [(0, len(SMALL))]
    assert [s.content for s in store.latest_load_snapshots(con, "ecb", "2025-05")] == [
        BIG, SMALL]
    assert con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE "
                       "'raw_snapshot_parts%'").fetchall() == [("raw_snapshot_parts",)]


def test_parts_read_out_of_order_are_put_in_order_and_a_missing_one_is_an_error(
        tmp_path: Path) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    con.execute("INSERT INTO raw_snapshot_meta (sha256, source, url, params_json, "
                "fetched_at_utc, size_bytes) VALUES ('x', 's', 'u', '{}', now(), 6)")
    con.execute("INSERT INTO raw_snapshot_parts VALUES ('x', 2, 'ef'), ('x', 1, 'cd'), "
                "('x', 0, 'ab')")  # stored last part first
    assert store.snapshot_content(con, "x") == b"abcdef"
    assert con.execute("SELECT content FROM raw_snapshots").fetchall() == [(b"abcdef",)]
    con.execute("DELETE FROM raw_snapshot_parts WHERE part = 1")
    with pytest.raises(ValueError, match="raw snapshot x: its parts hold 4 bytes where 6"):
        store.snapshot_content(con, "x")
    with pytest.raises(KeyError):
        store.snapshot_content(con, "y")


def test_a_snapshot_saved_in_a_callers_transaction_goes_with_it(tmp_path: Path) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    con.execute("BEGIN TRANSACTION")
    digest = store.save_snapshot(con, b"x" * 3000, source="s", url="https://a")
    assert store.snapshot_content(con, digest) == b"x" * 3000
    con.execute("ROLLBACK")
    assert con.execute("SELECT count(*) FROM raw_snapshots").fetchall() == [(0,)]
    assert con.execute("SELECT count(*) FROM raw_snapshot_parts").fetchall() == [(0,)]


def test_the_sweep_takes_an_orphans_parts_with_it(tmp_path: Path) -> None:
    con = store.connect(tmp_path / "s.duckdb")
    kept = store.save_snapshot(con, b"k" * 2500, source="s", url="https://kept")
    store.record_failure(con, "s", "2026-11", [kept], "linked by a failed load")
    orphan = store.save_snapshot(con, b"o" * 2500, source="s", url="https://orphan")
    assert snapshots.sweep_orphans(con) == 1
    assert con.execute("SELECT DISTINCT sha256 FROM raw_snapshot_parts").fetchall() == [(kept,)]
    assert len(parts_of(con, kept)) == 3 and parts_of(con, orphan) == []


#: `raw_snapshots` as it was before parts: each snapshot's bytes one BLOB value.
OLD_TABLE = """CREATE TABLE raw_snapshots (
    sha256 VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, url VARCHAR NOT NULL,
    params_json VARCHAR, fetched_at_utc TIMESTAMPTZ NOT NULL, size_bytes BIGINT NOT NULL,
    content BLOB NOT NULL)"""
BIG = bytes(range(256)) * 20  # 5,120 bytes: 5 parts once split
SMALL = b'{"rate": 1.13}'


def old_store(path: Path) -> tuple[str, str]:
    """A store of the layout before parts, holding BIG and SMALL, both read by a load."""
    con = store.connect(path)
    big, small = (store.save_snapshot(con, data, source="ecb", url=f"https://ecb/{day}",
                                      params={"day": "2"},
                                      fetched_at=datetime(2025, 5, day, tzinfo=UTC))
                  for data, day in ((BIG, 1), (SMALL, 2)))
    store.record_failure(con, "ecb", "2025-05", [big, small], "parse error: x")
    con.execute("CREATE TABLE whole AS SELECT * EXCLUDE (beside_path) FROM raw_snapshots"
                )  # the view's whole bytes, in the older table's columns
    for drop in ("VIEW raw_snapshots", "TABLE raw_snapshot_parts", "TABLE raw_snapshot_meta"):
        con.execute(f"DROP {drop}")
    con.execute(OLD_TABLE)
    con.execute("INSERT INTO raw_snapshots SELECT * FROM whole")
    con.execute("DROP TABLE whole")
    con.close()
    return big, small


def test_an_old_store_is_read_as_it_is_by_a_reader(tmp_path: Path) -> None:
    big, small = old_store(tmp_path / "old.duckdb")
    con = store.connect(tmp_path / "old.duckdb", read_only=True)
    assert store.snapshot_content(con, big) == BIG
    assert [(s.sha256, s.url, s.params, s.content) for s in
            store.latest_load_snapshots(con, "ecb", "2025-05")] == [
        (big, "https://ecb/1", {"day": "2"}, BIG), (small, "https://ecb/2", {"day": "2"}, SMALL)]
    assert snapshots.snapshot_kept(con, small) and not snapshots.snapshot_kept(con, "z")


def test_an_old_store_is_split_into_parts_by_a_writer_once(tmp_path: Path) -> None:
    big, small = old_store(tmp_path / "old.duckdb")
    con = store.connect(tmp_path / "old.duckdb")
    kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                             "WHERE table_name LIKE 'raw%' ORDER BY 1").fetchall())
    assert kinds == {"raw_snapshot_meta": "BASE TABLE", "raw_snapshot_parts": "BASE TABLE",
                     "raw_snapshots": "VIEW"}
    # 5,120 bytes = 5 parts of 1,024; 14 bytes = 1 part; nothing else changed
    assert [n for n, _ in parts_of(con, big)] == [0, 1, 2, 3, 4]
    assert parts_of(con, small) == [(0, len(SMALL))]
    assert con.execute("SELECT sha256, source, url, params_json, fetched_at_utc, size_bytes, "
                       "content FROM raw_snapshots ORDER BY fetched_at_utc").fetchall() == [
        (big, "ecb", "https://ecb/1", '{"day": "2"}', datetime(2025, 5, 1, tzinfo=UTC),
         len(BIG), BIG),
        (small, "ecb", "https://ecb/2", '{"day": "2"}', datetime(2025, 5, 2, tzinfo=UTC),
         len(SMALL), SMALL)]
    assert [s.content for s in store.latest_load_snapshots(con, "ecb", "2025-05")] == [
        BIG, SMALL]
    assert snapshots.sweep_orphans(con) == 0  # both linked by l1
    con.close()
    again = store.connect(tmp_path / "old.duckdb")
    assert again.execute("SELECT count(*) FROM raw_snapshot_parts").fetchall() == [(6,)]
    assert store.snapshot_content(again, big) == BIG


def test_the_zstd_check_reads_the_rendered_ddl_without_case() -> None:
    # DuckDB 2.0 renders the parts table as "... USING COMPRESSION ZSTD ..." (read back
    # from a real store here); a rendering in lower case is the same codec, not a table to
    # rewrite (the check compared "ZSTD" with case, so a lower-case rendering was rewritten at
    # every open); a table without the clause is one to rewrite
    con = duckdb.connect()
    snapshots.ensure_snapshot_tables(con)
    (ddl,) = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = ?",
                         [snapshots.PARTS]).fetchone() or (None,)
    con.close()
    assert snapshots.in_zstd(ddl)
    assert snapshots.in_zstd(ddl.replace("ZSTD", "zstd"))
    assert not snapshots.in_zstd(ddl.replace(" USING COMPRESSION ZSTD", ""))
