"""Loads are transactional and idempotent, per source and vintage, on a real DuckDB."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipeline import store
from schemas.market import FX_RATES
from schemas.table import Table, ValidationFailed


def fx(rate: float, day: int = 2) -> pl.DataFrame:
    return pl.DataFrame({
        "rate_date": [date(2025, 5, day)], "currency": ["USD"], "units_per_eur": [rate],
        "source_url": ["https://www.ecb.europa.eu/x"], "source_date": [date(2025, 5, day)],
        "licence": ["ECB"],
    })


def rows(con) -> list[tuple]:
    return con.execute("SELECT rate_date, units_per_eur, l.source FROM core_ecb__fx_rates "
                       "JOIN loads l USING (load_id) ORDER BY 1, 3").fetchall()


def test_idempotent_and_replacing_only_its_own_source_and_vintage(db: Path) -> None:
    con = store.connect(db)
    sha = store.save_snapshot(con, b"ecb bytes", source="ecb", url="https://ecb")
    first = store.load(con, "ecb", "2025-05", [store.Batch(FX_RATES, fx(1.13), sha, "a")])
    again = store.load(con, "ecb", "2025-05", [store.Batch(FX_RATES, fx(1.13), sha, "a")])
    assert (first.status, again.status, again.load_id) == ("loaded", "unchanged", first.load_id)
    # Another source's rows for the same vintage are left alone by a reload of "ecb".
    store.load(con, "other", "2025-05", [store.Batch(FX_RATES, fx(1.20, day=5), sha, "b")])
    store.load(con, "ecb", "2025-05", [store.Batch(FX_RATES, fx(1.14), sha, "a")])
    assert rows(con) == [(date(2025, 5, 2), 1.14, "ecb"), (date(2025, 5, 5), 1.20, "other")]
    # Every core row carries its load id and snapshot hash.
    assert con.execute("SELECT DISTINCT snapshot_sha256 FROM core_ecb__fx_rates"
                       ).fetchall() == [(sha,)]


def test_invalid_batch_leaves_previous_good_data(db: Path) -> None:
    con = store.connect(db)
    sha = store.save_snapshot(con, b"x", source="ecb", url="https://ecb")
    store.load(con, "ecb", "2025-05", [store.Batch(FX_RATES, fx(1.13), sha, "good")])
    with pytest.raises(ValidationFailed, match="units_per_eur"):
        store.load(con, "ecb", "2025-05", [store.Batch(FX_RATES, fx(-1.0), sha, "bad.csv")])
    assert rows(con) == [(date(2025, 5, 2), 1.13, "ecb")]


def test_failed_insert_rolls_back_the_whole_load(db: Path) -> None:
    con = store.connect(db)
    sha = store.save_snapshot(con, b"x", source="ecb", url="https://ecb")
    store.load(con, "ecb", "2025-05", [store.Batch(FX_RATES, fx(1.13), sha, "good")])
    # A batch bound for a table that does not exist: its DELETE fails after the first
    # batch's DELETE ran, and the rollback must restore the first load's rows.
    broken = Table("core__missing", "no such table", FX_RATES.columns, FX_RATES.key)
    with pytest.raises(store.LoadFailed, match="core__missing"):
        store.load(con, "ecb", "2025-05", [store.Batch(FX_RATES, fx(1.14), sha, "a"),
                                           store.Batch(broken, fx(1.14), sha, "a")])
    assert rows(con) == [(date(2025, 5, 2), 1.13, "ecb")]
    statuses = con.execute("SELECT status FROM loads ORDER BY started_at_utc").fetchall()
    assert statuses == [("ok",), ("failed",)]


def test_snapshots_are_content_addressed(db: Path) -> None:
    con = store.connect(db)
    a = store.save_snapshot(con, b"same", source="s", url="https://a")
    b = store.save_snapshot(con, b"same", source="s", url="https://a")
    assert a == b == store.sha256(b"same")
    assert con.execute("SELECT count(*), any_value(content) FROM raw_snapshots").fetchall() == [
        (1, b"same")]


def test_a_batch_validated_by_its_caller_is_not_validated_again(db: Path) -> None:
    con = store.connect(db)
    sha = store.save_snapshot(con, b"x", source="ecb", url="https://ecb")
    # -1.0 breaks the units_per_eur > 0 bound: load refuses it when it validates...
    with pytest.raises(ValidationFailed):
        store.load(con, "ecb", "2025-05", [store.Batch(FX_RATES, fx(-1.0), sha, "a")])
    # ...but a batch the caller says is validated goes in as given (the caller answers for
    # it), columns selected in the table's order: reversed, with an extra column dropped
    given = fx(-1.0).with_columns(extra=pl.lit(1))
    given = given.select(reversed(given.columns))
    result = store.load(con, "ecb", "2025-05",
                        [store.Batch(FX_RATES, given, sha, "a", validated=True)])
    assert (result.status, result.row_count) == ("loaded", 1)
    assert rows(con) == [(date(2025, 5, 2), -1.0, "ecb")]


def test_a_load_links_its_snapshots_and_they_read_back_oldest_first(db: Path) -> None:
    con = store.connect(db)
    old = store.save_snapshot(con, b"old", source="ecb", url="https://ecb/1",
                              fetched_at=datetime(2025, 5, 1, tzinfo=UTC))
    new = store.save_snapshot(con, b"new", source="ecb", url="https://ecb/2",
                              params={"day": "2"}, fetched_at=datetime(2025, 5, 2, tzinfo=UTC))
    store.load(con, "ecb", "2025-05", [store.Batch(FX_RATES, fx(1.13), new, "b"),
                                       store.Batch(FX_RATES, fx(1.14, day=3), old, "a")])
    assert [(s.sha256, s.params, s.content) for s in
            store.latest_load_snapshots(con, "ecb", "2025-05")] == [
        (old, {}, b"old"), (new, {"day": "2"}, b"new")]
    # a later failure that read one snapshot is the latest load with snapshots; good_only
    # still finds the successful one
    store.record_failure(con, "ecb", "2025-05", [new, new], "parse error: x")
    assert [s.sha256 for s in store.latest_load_snapshots(con, "ecb", "2025-05")] == [new]
    assert [s.sha256 for s in store.latest_load_snapshots(con, "ecb", "2025-05",
                                                          good_only=True)] == [old, new]
    # a failure with no snapshot (a fetch error) links none and is passed over
    store.record_failure(con, "ecb", "2025-05", [], "HTTP 500")
    assert [s.sha256 for s in store.latest_load_snapshots(con, "ecb", "2025-05")] == [new]
    assert store.latest_load_snapshots(con, "ecb", "2025-06") == []


def test_a_store_with_comma_joined_snapshots_is_migrated_once(db: Path) -> None:
    old = duckdb.connect(str(db))
    old.execute("""CREATE TABLE loads (
        load_id VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, vintage VARCHAR NOT NULL,
        started_at_utc TIMESTAMPTZ NOT NULL, finished_at_utc TIMESTAMPTZ,
        status VARCHAR NOT NULL, row_count BIGINT, snapshots VARCHAR, tables VARCHAR,
        error VARCHAR, fingerprint VARCHAR)""")
    old.execute("INSERT INTO loads VALUES ('l1', 'ecb', '2025-05', now(), now(), 'ok', 1, "
                "'aa,bb', 'core_ecb__fx_rates', NULL, 'f'), ('l2', 'ecb', '2025-05', now(), "
                "now(), 'failed', 0, '', NULL, 'HTTP 500', NULL)")
    old.close()
    con = store.connect(db)
    assert con.execute("SELECT * FROM load_snapshots ORDER BY ALL").fetchall() == [
        ("l1", "aa"), ("l1", "bb")]
    assert "snapshots" not in [c[0] for c in con.execute("DESCRIBE loads").fetchall()]
    assert con.execute("SELECT load_id, status, tables FROM loads ORDER BY 1").fetchall() == [
        ("l1", "ok", "core_ecb__fx_rates"), ("l2", "failed", None)]
    con.close()
    again = store.connect(db)
    assert again.execute("SELECT count(*) FROM load_snapshots").fetchall() == [(2,)]


def test_a_process_killed_between_snapshot_and_load_leaves_no_orphan(tmp_path: Path) -> None:
    # a real process saves a 1 MB snapshot, then is killed (SIGKILL) before its load: the
    # next writer to open the store removes the snapshot no load links, and keeps a linked one
    import subprocess
    import sys

    db = tmp_path / "s.duckdb"
    con = store.connect(db)
    kept = store.save_snapshot(con, b"linked bytes", source="test", url="file:///kept")
    store.record_failure(con, "test", "2026-11", [kept], "a failed load still links it")
    con.close()
    script = ("import os, signal\nfrom pipeline import store\n"
              f"con = store.connect({str(db)!r})\n"
              "store.save_snapshot(con, b'x' * 1_000_000, source='power', url='file:///big')\n"
              "con.execute('CHECKPOINT')\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert done.returncode == -9, done.stderr
    con = duckdb.connect(str(db))
    assert con.execute("SELECT count(*) FROM raw_snapshots").fetchall() == [(2,)]
    con.close()
    con = store.connect(db)
    assert con.execute("SELECT sha256 FROM raw_snapshots").fetchall() == [(kept,)]
    con.close()
