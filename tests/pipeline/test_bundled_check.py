"""A command on a store that already holds the packaged reference data, read by this code,
skips parsing and validating it (checked by sha256 of the files and of the reading code); any
other store (new, loaded by other code, or holding other bytes) is loaded again."""

from __future__ import annotations

from pathlib import Path

from pipeline import store
from pipeline.ingest.bundled import is_loaded, load_bundled, packaged, reader_digest
from pipeline.workspace import opened


def test_an_open_records_what_the_next_open_checks(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    with opened(None, None, db):
        pass
    con = store.connect(db)
    # the next open's decision (pipeline/workspace.py: load only when not is_loaded)
    assert is_loaded(con)
    assert con.execute("SELECT reader_sha256 FROM bundled_checks").fetchall() == [
        (reader_digest(packaged()),)]
    con.close()


def test_a_load_by_other_reading_code_is_not_trusted(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    result = load_bundled(con)
    assert is_loaded(con)
    # as if an older install had loaded it: its recorded digest differs from this code's
    con.execute("UPDATE bundled_checks SET reader_sha256 = 'older' WHERE load_id = ?",
                [result.load_id])
    assert not is_loaded(con)
    load_bundled(con)  # reloading (same rows: 'unchanged') records this code's digest again
    assert is_loaded(con)
    con.close()


def test_the_digest_covers_the_files_bytes() -> None:
    files = packaged()
    name = next(iter(files))
    altered = dict(files)
    altered[name] = type(files[name])(name, files[name].content + b"\n")
    assert reader_digest(altered) != reader_digest(files)


def test_a_store_loaded_before_checks_were_recorded_is_loaded_again(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    load_bundled(con)
    con.execute("DELETE FROM bundled_checks")  # a store file written before this table
    assert not is_loaded(con)
    con.close()
