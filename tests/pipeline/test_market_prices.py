"""Which rows make a zone's monthly price: the finest resolution, open licences first."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from pipeline import store
from pipeline.store.market import zone_prices
from sources.market.energy_charts import RESTRICTED


def _insert(con, zone: str, prices: list[float], resolution: str, licence: str,  # type: ignore[no-untyped-def]
            url: str, day: int = 1) -> None:
    step = timedelta(minutes=15 if resolution == "15min" else 60)
    start = datetime(2026, 11, day, tzinfo=UTC)
    for k, price in enumerate(prices):
        con.execute(
            "INSERT INTO core__electricity_prices (vintage, zone, interval_start_utc, resolution,"
            " price_eur_per_mwh, price_basis, source_url, source_date, licence, load_id,"
            " snapshot_sha256) VALUES ('2026-11', ?, ?, ?, ?, 'day_ahead', ?, ?, ?, 'l', 's')",
            [zone, start + k * step, resolution, price, url, date(2026, 11, 2), licence])


def test_open_rows_are_preferred_to_restricted_ones_of_the_same_month() -> None:
    con = store.connect(":memory:")
    # ES: Energy-Charts 15-min rows (restricted) at 100, OMIE hourly rows (open) at 40 and 60
    _insert(con, "ES", [100.0] * 4, "15min", RESTRICTED + "private and internal use only",
            "https://api.energy-charts.info/price")
    _insert(con, "ES", [40.0, 60.0], "hour", "OMIE", "https://www.omie.es/")
    # PT: only restricted rows, at 80 and 90: used, with their licence shown
    _insert(con, "PT", [80.0, 90.0], "15min", RESTRICTED + "private", "https://api.energy-charts.info/price")
    rows = {r["zone"]: r for r in zone_prices(con, "2026-11").iter_rows(named=True)}
    # ES: the open hourly rows, though coarser: (40 + 60) / 2 = 50; not (4 x 100 + ...)
    assert rows["ES"]["price_eur_per_mwh"] == 50.0 and rows["ES"]["licence"] == "OMIE"
    assert rows["ES"]["resolution"] == "hour"
    # PT: (80 + 90) / 2 = 85, flagged
    assert rows["PT"]["price_eur_per_mwh"] == 85.0
    assert rows["PT"]["licence"].startswith("RESTRICTED")


def test_a_month_from_two_sources_names_each_once_in_sorted_order() -> None:
    con = store.connect(":memory:")
    # hourly rows of the same month from two open sources, the later URL loaded first:
    # 2 rows at 30 and 50 on the 1st, then 1 row at 70 on the 2nd
    _insert(con, "NL", [30.0, 50.0], "hour", "CC BY 4.0", "https://b.example/")
    _insert(con, "NL", [70.0], "hour", "CC BY 4.0", "https://a.example/", day=2)
    (row,) = zone_prices(con, "2026-11").iter_rows(named=True)
    # (30 + 50 + 70) / 3 = 50 over the 3 intervals; each source and licence once, sorted
    assert row["price_eur_per_mwh"] == 50.0 and row["intervals"] == 3
    assert row["source_url"] == "https://a.example/ https://b.example/"
    assert row["licence"] == "CC BY 4.0" and row["snapshot_sha256"] == "s"
