"""Bundled reference data: the CSV files under sources/reference/, shipped with the package.

They go through the same parse -> validate -> load path as live data: `read()` returns the
raw bytes of each file (the snapshot), `parse_*` turn bytes into canonical frames. Every row
carries its own source URL, date and licence (see sources/reference/README.md).
"""

from __future__ import annotations

import polars as pl

from schemas.architecture import MODEL_ARCHITECTURES
from schemas.fields import FIELDS
from schemas.fx import convert_to_eur
from schemas.market import (
    API_PRICES,
    ELECTRICITY_PRICES,
    EMBODIED,
    FX_RATES,
    GPU_OFFERS,
    GRID_INTENSITY,
    HARDWARE,
    POWER_DEFAULTS,
    PROVIDERS,
    PUBLISHED_PER_REQUEST,
    QUALIFICATIONS,
    REGIONS,
    REGULATORY_RULES,
    RESIDUAL_MIX,
    SOVEREIGNTY_OBJECTIVES,
    TARIFF_COMPONENTS,
)
from schemas.table import Table
from sources.errors import ParseError
from sources.reference_csv import SOURCE as SOURCE
from sources.reference_csv import RawFile as RawFile
from sources.reference_csv import read as read
from sources.reference_csv import read_typed_csv as read_typed_csv
from sources.regulation import stored_objectives, stored_rules

#: The month the bundled market data describes (the latest GPU price observations).
VINTAGE = "2026-10"

#: file name -> the table its rows feed (offers, prices and intensity are derived below).
TABLE_FILES: dict[str, Table] = {
    "providers.csv": PROVIDERS,
    "qualifications.csv": QUALIFICATIONS,
    "hardware.csv": HARDWARE,
    "regions.csv": REGIONS,
    "fx_rates.csv": FX_RATES,
    "models.csv": MODEL_ARCHITECTURES,
    "per_request_published.csv": PUBLISHED_PER_REQUEST,
}
OFFERS_FILE = "gpu_offers.csv"
PRICES_FILE = "electricity_prices_monthly.csv"
INTENSITY_FILE = "grid_intensity_yearly.csv"
EMBODIED_FILE = "embodied.csv"
RESIDUAL_FILE = "residual_mix_yearly.csv"
TARIFF_FILE = "tariff_components_yearly.csv"
#: the regulatory gates' rules and the sovereignty framework's objectives (sources/regulation.py)
RULES_FILE = "regulatory_rules.csv"
OBJECTIVES_FILE = "sovereignty_objectives.csv"
#: the defaults of power figures a proposal leaves out (pipeline/inputs/evidence/power.py)
POWER_DEFAULTS_FILE = "power_defaults.csv"
#: the per-token prices of API offers (a candidate's `cost = { api = "provider:model" }`)
API_PRICES_FILE = "api_prices.csv"


def _dtypes(columns: tuple[str, ...] | list[str]) -> dict[str, pl.DataType]:
    return {c: FIELDS[c].dtype for c in columns}


def parse_table(raw: RawFile, table: Table, names: dict[str, str] | None = None,
                columns: list[str] | None = None) -> pl.DataFrame:
    """The file's rows typed as `table`'s declared fields (those of `columns` when the file
    has not all of them); `names` maps the file's own column names (short ones) to the
    fields'."""
    names = names or {}
    own = {field: column for column, field in names.items()}
    dtypes = {own.get(c, c): FIELDS[c].dtype for c in (columns or table.columns)}
    return read_typed_csv(raw.content, raw.name, dtypes).rename(names)


OFFER_COLUMNS = ("provider_id", "offer_id", "region", "gpu", "gpu_count", "pricing_model",
                 "price_original_per_hour", "currency", "note", "source_url", "source_date",
                 "licence")


def parse_offers(raw: RawFile, regions: pl.DataFrame, fx: pl.DataFrame,
                 vintage: str) -> pl.DataFrame:
    """Offers get their zone from the region map and EUR prices at the latest ECB rate on or
    before the day the price was observed (the rate and its date are kept on the row)."""
    offers = read_typed_csv(raw.content, raw.name, _dtypes(OFFER_COLUMNS))
    unknown = offers.join(regions, on=["provider_id", "region"], how="anti")
    if unknown.height:
        row = unknown.row(0, named=True)
        raise ParseError(SOURCE, raw.name, f"region {row['region']!r}",
                         f"{row['provider_id']} region is not in regions.csv")
    return convert_to_eur(
        offers.join(regions.select("provider_id", "region", "zone"),
                    on=["provider_id", "region"], how="left"),
        fx,
    ).with_columns(pl.lit(vintage).alias("vintage"))


PRICE_COLUMNS = ("zone", "month", "price_eur_per_mwh", "source_url", "source_date", "licence")


def parse_monthly_prices(raw: RawFile, vintage: str) -> pl.DataFrame:
    dtypes = _dtypes([c for c in PRICE_COLUMNS if c != "month"]) | {"month": pl.String()}
    frame = read_typed_csv(raw.content, raw.name, dtypes)
    return frame.with_columns(
        _month_start(frame, raw.name).alias("interval_start_utc"),
        pl.lit("month").alias("resolution"),
        pl.lit("day_ahead_average").alias("price_basis"),
        pl.lit(vintage).alias("vintage"),
    ).drop("month")


def _month_start(frame: pl.DataFrame, path: str) -> pl.Series:
    starts = frame["month"].str.to_datetime("%Y-%m", strict=False, time_zone="UTC")
    bad = frame.with_row_index("line", offset=2).filter(starts.is_null())
    if bad.height:
        row = bad.row(0, named=True)
        raise ParseError(SOURCE, path, f"line {row['line']}, column 'month'",
                         f"{row['month']!r} is not YYYY-MM")
    return starts


INTENSITY_COLUMNS = ("zone", "year", "intensity_gco2e_per_kwh", "emission_factor_basis",
                     "source_url", "source_date", "licence")


def parse_yearly_intensity(raw: RawFile, vintage: str) -> pl.DataFrame:
    return _yearly(raw, vintage, INTENSITY_COLUMNS, pl.lit("location_based").alias("accounting"))


def _yearly(raw: RawFile, vintage: str, columns: tuple[str, ...], *more: pl.Expr
            ) -> pl.DataFrame:
    """A table of one figure per calendar `year`: the year as its first instant (UTC), the
    resolution `year`, the vintage, and `more` columns."""
    dtypes = _dtypes([c for c in columns if c != "year"]) | {"year": pl.Int64()}
    frame = read_typed_csv(raw.content, raw.name, dtypes)
    return frame.with_columns(
        pl.datetime(pl.col("year"), 1, 1, time_zone="UTC").alias("interval_start_utc"),
        pl.lit("year").alias("resolution"),
        *more,
        pl.lit(vintage).alias("vintage"),
    ).drop("year")


RESIDUAL_COLUMNS = ("country", "year", "intensity_gco2e_per_kwh", "emission_factor_basis",
                    "source_url", "source_date", "licence")


def parse_residual_mix(raw: RawFile, vintage: str) -> pl.DataFrame:
    """AIB's residual mixes: one figure per country and calendar year."""
    return _yearly(raw, vintage, RESIDUAL_COLUMNS)


TARIFF_COLUMNS = ("country", "year", "consumption_band", "energy_supply_eur_per_kwh",
                  "network_eur_per_kwh", "taxes_levies_eur_per_kwh", "source_url",
                  "source_date", "licence")


def parse_tariff_components(raw: RawFile, vintage: str) -> pl.DataFrame:
    """Eurostat's non-household price components (nrg_pc_205_c, annual): one row per
    country, consumption band and year, VAT already taken out of the taxes."""
    return _yearly(raw, vintage, TARIFF_COLUMNS)


EMBODIED_COLUMNS = {"item": "hardware_item", "kind": "hardware_kind",
                    "kgco2e": "embodied_kgco2e", "basis": "embodied_basis"}


def parse_embodied(raw: RawFile) -> pl.DataFrame:
    """The CSV's short column names map to the declared fields."""
    return parse_table(raw, EMBODIED, EMBODIED_COLUMNS)


#: power_defaults.csv's columns -> the declared fields (schemas/market.py POWER_DEFAULTS)
POWER_DEFAULT_COLUMNS = {"figure": "default_figure", "site": "default_site",
                         "low": "default_low", "mode": "default_mode", "high": "default_high"}


#: api_prices.csv's columns -> the declared fields (schemas/market.py API_PRICES)
API_PRICE_COLUMNS = {"model": "api_model", "input_price_per_mtok": "input_price_original_per_mtok",
                     "output_price_per_mtok": "output_price_original_per_mtok"}


def parse_api_prices(raw: RawFile, vintage: str) -> pl.DataFrame:
    """The per-token prices as published (converted to EUR by the run, at the ECB rate of the
    day the price was published), each row of the vintage they describe."""
    columns = [c for c in API_PRICES.columns if c != "vintage"]  # the file has no vintage
    return parse_table(raw, API_PRICES, API_PRICE_COLUMNS, columns).select(
        pl.lit(vintage).alias("vintage"), *columns)


def parse_all(files: dict[str, RawFile], vintage: str = VINTAGE
              ) -> list[tuple[Table, pl.DataFrame, RawFile]]:
    """Every bundled table, parsed (not yet validated), with the file each came from."""
    parsed = [(table, parse_table(files[name], table), files[name])
              for name, table in TABLE_FILES.items()]
    frames = {table.name: frame for table, frame, _ in parsed}
    parsed.append((GPU_OFFERS, parse_offers(files[OFFERS_FILE], frames[REGIONS.name],
                                            frames[FX_RATES.name], vintage), files[OFFERS_FILE]))
    parsed.append((ELECTRICITY_PRICES, parse_monthly_prices(files[PRICES_FILE], vintage),
                   files[PRICES_FILE]))
    parsed.append((GRID_INTENSITY, parse_yearly_intensity(files[INTENSITY_FILE], vintage),
                   files[INTENSITY_FILE]))
    parsed.append((EMBODIED, parse_embodied(files[EMBODIED_FILE]), files[EMBODIED_FILE]))
    parsed.append((RESIDUAL_MIX, parse_residual_mix(files[RESIDUAL_FILE], vintage),
                   files[RESIDUAL_FILE]))
    parsed.append((TARIFF_COMPONENTS, parse_tariff_components(files[TARIFF_FILE], vintage),
                   files[TARIFF_FILE]))
    parsed.append((POWER_DEFAULTS, parse_table(files[POWER_DEFAULTS_FILE], POWER_DEFAULTS,
                                               POWER_DEFAULT_COLUMNS),
                   files[POWER_DEFAULTS_FILE]))
    parsed.append((API_PRICES, parse_api_prices(files[API_PRICES_FILE], vintage),
                   files[API_PRICES_FILE]))
    parsed.append((REGULATORY_RULES, stored_rules(files[RULES_FILE]), files[RULES_FILE]))
    parsed.append((SOVEREIGNTY_OBJECTIVES, stored_objectives(files[OBJECTIVES_FILE]),
                   files[OBJECTIVES_FILE]))
    return parsed


FILES = (*TABLE_FILES, OFFERS_FILE, PRICES_FILE, INTENSITY_FILE, EMBODIED_FILE, RESIDUAL_FILE,
         TARIFF_FILE, RULES_FILE, OBJECTIVES_FILE, POWER_DEFAULTS_FILE, API_PRICES_FILE)
