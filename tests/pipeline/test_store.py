"""Loads are transactional and idempotent, per source and vintage, on a real DuckDB."""

from __future__ import annotations

from datetime import date
from pathlib import Path

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
