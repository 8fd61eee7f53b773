"""The market of a vintage as resolve reads it: its tables, read once per run, and the
lookup of the one row a candidate names in them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl

from pipeline.engine import market
from pipeline.engine.proposal import Workload


@dataclass(frozen=True)
class Market:
    """The market as of a vintage, read once per run."""

    vintage: str
    offers: pl.DataFrame
    prices: pl.DataFrame
    intensities: pl.DataFrame
    regions: pl.DataFrame
    hardware: pl.DataFrame
    models: pl.DataFrame
    embodied: pl.DataFrame
    providers: dict[str, market.ProviderFacts]
    zones: list[str]
    profile: pl.DataFrame | None = None  # per zone, weighted by the workload's hourly profile
    #: ECB rates up to the vintage's last day: declared amounts in other currencies
    fx: pl.DataFrame | None = None

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection, vintage: str,
             workload: Workload | None = None) -> Market:
        profile = (market.profile_weighted(con, vintage, workload.hourly_profile,
                                           workload.timezone) if workload else None)
        return cls(vintage, market.offers(con, vintage), market.zone_prices(con, vintage),
                   market.zone_intensities(con, vintage), market.regions(con),
                   market.hardware(con), market.models(con), market.embodied(con),
                   market.provider_facts(con), market.known_zones(con), profile,
                   market.fx_rates(con, vintage))


def one(frame: pl.DataFrame, **where: Any) -> dict[str, Any] | None:
    """The first row of `frame` where each column equals its value, or None."""
    rows = frame.filter(**where)
    return rows.row(0, named=True) if rows.height else None
