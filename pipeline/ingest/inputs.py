"""Reference inputs an ingest run needs from the store or the bundled files: the region map
(cloud region -> bidding zone) and the ECB rates already loaded."""

from __future__ import annotations

import duckdb
import polars as pl

from schemas.market import FX_RATES, REGIONS
from sources import bundled
from sources.offers import FX_COLUMNS

REGION_COLUMNS = {"provider_id": pl.String(), "region": pl.String(), "zone": pl.String()}


def regions(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The bundled regions.csv when shipped, else whatever core__regions holds."""
    try:
        raw = bundled.read("regions.csv")
    except FileNotFoundError:
        stored = con.sql(f"SELECT provider_id, region, zone FROM {REGIONS.name}").pl()
        return stored.cast(REGION_COLUMNS)  # type: ignore[arg-type]
    return bundled.parse_table(raw, REGIONS).select(list(REGION_COLUMNS))


def fx_rates(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every ECB rate in the store (currency, rate_date, units_per_eur)."""
    frame = con.sql(f"SELECT DISTINCT currency, rate_date, units_per_eur FROM {FX_RATES.name}"
                    ).pl()
    return frame.cast(FX_COLUMNS)  # type: ignore[arg-type]
