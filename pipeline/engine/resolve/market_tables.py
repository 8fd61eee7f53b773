"""The market of a vintage as resolve reads it: its tables, read once per run, and the
lookup of the one row a candidate names in them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb
import polars as pl

from pipeline.engine import market
from schemas.proposal import Workload


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
    #: the rows `row` found, each lookup made once per run (not init: `dataclasses.replace`
    #: of another vintage's tables starts empty)
    _found: dict[tuple[Any, ...], dict[str, Any] | None] = field(
        default_factory=dict, init=False, compare=False, repr=False)

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


    def row(self, table: str, **where: Any) -> dict[str, Any] | None:
        """The first row of the market table `table` (`hardware`, `regions`, `prices`, ...)
        where each column equals its value, or None. Each lookup is made once per run (a
        thousand candidates name the same few GPUs, regions and zones: a polars filter each
        was a second of resolve), each caller given its own copy of the row."""
        key = (table, *sorted(where.items()))
        if key not in self._found:
            rows = getattr(self, table).filter(**where)
            self._found[key] = rows.row(0, named=True) if rows.height else None
        found = self._found[key]
        return None if found is None else dict(found)
