"""Ember (CC BY 4.0): the European wholesale electricity price CSV (monthly, no key), the
all-EU fallback for day-ahead prices, and yearly/monthly carbon intensity from the Ember API
(free key in EMBER_API_KEY, sent as the `api_key` query parameter and never stored).

Pitfalls handled: a body that stops mid-line (a truncated download) is refused; the CSV's
unit sits in its header ("Price (EUR/MWhe)") and is checked, so a unit drift fails loudly;
monthly rows are dated the 1st and the current month is partial (kept, it is what the month
shows so far); Germany and Luxembourg share the DE-LU zone, so Luxembourg's row (the same
price) is skipped with a note; NO, SE, DK, IT carry one national price (zone = the country
code). Ember intensity uses lifecycle emission factors.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from datetime import date

import polars as pl
import requests

from schemas.market import ELECTRICITY_PRICES, GRID_INTENSITY
from sources import http
from sources.decode import load_json_object
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source, cited, single_table

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "ember", "https://files.ember-energy.org", provides=(ELECTRICITY_PRICES, GRID_INTENSITY),
    licence="CC BY 4.0, Ember (ember-energy.org)",
    env_var="EMBER_API_KEY")  # optional: only the intensity API needs it
API_URL = "https://api.ember-energy.org"

WHOLESALE_PATH = ("/public-downloads/price/outputs/"
                  "european_wholesale_electricity_price_data_monthly.csv")
PRICE_COLUMN = "Price (EUR/MWhe)"
MONTHS_KEPT = 36
#: ISO 3166 alpha-3 -> our zone code (bidding zone, or country for national prices).
ZONES = {
    "AUT": "AT", "BEL": "BE", "BGR": "BG", "HRV": "HR", "CZE": "CZ", "DNK": "DK", "EST": "EE",
    "FIN": "FI", "FRA": "FR", "DEU": "DE-LU", "GRC": "GR", "HUN": "HU", "IRL": "IE",
    "ITA": "IT", "LVA": "LV", "LTU": "LT", "NLD": "NL", "NOR": "NO", "POL": "PL", "PRT": "PT",
    "ROU": "RO", "SVK": "SK", "SVN": "SI", "ESP": "ES", "SWE": "SE", "CHE": "CH", "GBR": "GB",
    "SRB": "RS", "MNE": "ME", "MKD": "MK", "ALB": "AL",
}
SHARED = {"LUX": "DE-LU"}  # same zone as another row: skipped with a note
INTENSITY_ENTITIES = ("FRA", "DEU", "ESP", "PRT", "NLD", "BEL", "AUT", "POL", "ITA", "SWE",
                      "IRL", "FIN", "DNK")


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe(WHOLESALE_PATH)  # the keyless CSV host ingest always reads


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """The wholesale CSV; with a key, also yearly intensity from three years back and monthly
    intensity from last January (the API's host is the context's `ember_api` base URL)."""
    yield from ctx.fetch(fetch_wholesale_monthly, session, source=SOURCE, base_url=BASE_URL)
    key = os.environ.get(ENV_VAR or "")
    if key:
        year = int(ctx.vintage[:4])
        for granularity, since in (("yearly", str(year - 3)), ("monthly", f"{year - 1}-01")):
            yield from ctx.fetch(fetch_intensity, session, key, granularity, since,
                                 source="ember_api", base_url=API_URL)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    if "/carbon-intensity/" in raw.url:
        return single_table(GRID_INTENSITY, parse_intensity, raw, ctx, notes)
    return single_table(ELECTRICITY_PRICES, parse_wholesale_monthly, raw, ctx, notes)


def fetch_wholesale_monthly(session: requests.Session, *, base_url: str = BASE_URL,
                            policy: FetchPolicy = DEFAULT_POLICY) -> list[Fetched]:
    return [http.fetch(session, base_url + WHOLESALE_PATH, source=SOURCE, policy=policy)]


def fetch_intensity(session: requests.Session, api_key: str, granularity: str, start: str, *,
                    entities: tuple[str, ...] = INTENSITY_ENTITIES, base_url: str = API_URL,
                    policy: FetchPolicy = DEFAULT_POLICY) -> list[Fetched]:
    """carbon-intensity/{yearly|monthly} from `start` (YYYY or YYYY-MM); key redacted."""
    if granularity not in ("yearly", "monthly"):
        raise ValueError(f"granularity must be yearly or monthly, not {granularity!r}")
    params = {"entity_code": ",".join(entities), "start_date": start,
              "include_all_dates_value_range": "false", "api_key": api_key}
    return [http.fetch(session, f"{base_url}/v1/carbon-intensity/{granularity}",
                       source=SOURCE, params=params, secret_params=("api_key",), policy=policy)]


def _month_floor(vintage: str) -> date:
    year, month = (int(p) for p in vintage.split("-"))
    index = year * 12 + month - 1 - (MONTHS_KEPT - 1)
    return date(index // 12, index % 12 + 1, 1)


def parse_wholesale_monthly(data: bytes, *, url: str, vintage: str, fetched_on: date,
                            notes: list[str] | None = None) -> pl.DataFrame:
    """Monthly national prices up to the vintage month (the last 36 months)."""
    if data and not data.endswith(b"\n"):
        raise ParseError(SOURCE, url, f"byte {len(data)}", "file does not end with a line "
                         "break: truncated download?")
    try:
        table = pl.read_csv(io.BytesIO(data), infer_schema=False)
    except pl.exceptions.PolarsError as error:
        raise ParseError(SOURCE, url, "(file)", f"not a readable CSV: {error}") from None
    if PRICE_COLUMN not in table.columns:
        price_like = [c for c in table.columns if c.lower().startswith("price")]
        raise ParseError(SOURCE, url, "header", f"expected column {PRICE_COLUMN!r}, found "
                         f"{price_like or table.columns}: unit or layout changed")
    for column in ("ISO3 Code", "Date"):
        if column not in table.columns:
            raise ParseError(SOURCE, url, "header", f"missing column {column!r}")
    typed = table.with_row_index("line", offset=2).select(
        "line", pl.col("ISO3 Code").alias("iso3"),
        pl.col("Date").str.to_date("%Y-%m-%d", strict=False).alias("day"),
        pl.col(PRICE_COLUMN).cast(pl.Float64, strict=False).alias("price_eur_per_mwh"),
        pl.col(PRICE_COLUMN).alias("text"),
    )
    bad = typed.filter(pl.col("day").is_null() | (pl.col("price_eur_per_mwh").is_null()
                                                   & pl.col("text").is_not_null()))
    if bad.height:
        row = bad.row(0, named=True)
        raise ParseError(SOURCE, url, f"line {row['line']}", f"unreadable date or price: {row}")
    year, month = (int(p) for p in vintage.split("-"))
    window = typed.filter(pl.col("day").is_between(_month_floor(vintage), date(year, month, 1))
                          & pl.col("price_eur_per_mwh").is_not_null())
    shared = window.filter(pl.col("iso3").is_in(list(SHARED)))
    unknown = window.filter(~pl.col("iso3").is_in(list(ZONES) + list(SHARED)))
    if notes is not None:
        if shared.height:
            notes.append(f"{sorted(set(shared['iso3']))}: share a zone with another country "
                         f"({SHARED}); {shared.height} row(s) skipped")
        if unknown.height:
            notes.append(f"unmapped countries skipped: {sorted(set(unknown['iso3']))}")
    kept = window.filter(pl.col("iso3").is_in(list(ZONES)))
    return kept.select(
        pl.lit(vintage).alias("vintage"),
        pl.col("iso3").replace_strict(ZONES, return_dtype=pl.String()).alias("zone"),
        pl.col("day").cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
        .alias("interval_start_utc"),
        pl.lit("month").alias("resolution"),
        "price_eur_per_mwh",
        pl.lit("day_ahead_average").alias("price_basis"),
        *cited(url, fetched_on, LICENCE),
    ).sort("zone", "interval_start_utc")


def parse_intensity(data: bytes, *, url: str, vintage: str, fetched_on: date,
                    notes: list[str] | None = None) -> pl.DataFrame:
    """Ember API carbon-intensity/{yearly|monthly}: {data: [{entity_code, date,
    emissions_intensity_gco2_per_kwh, ...}]} -> GRID_INTENSITY rows (lifecycle)."""
    body = load_json_object(data, source=SOURCE, url=url, required=("data",))
    resolution = "month" if "/monthly" in url else "year"
    rows = body["data"]
    if not isinstance(rows, list):
        raise ParseError(SOURCE, url, "data", "expected a list")
    needed = ("entity_code", "date", "emissions_intensity_gco2_per_kwh")
    for index, row in enumerate(rows):
        missing = [k for k in needed if not isinstance(row, dict) or k not in row]
        if missing:
            raise ParseError(SOURCE, url, f"data[{index}].{missing[0]}", "missing")
    frame = pl.DataFrame([{"entity": r.get("entity"), **{k: r[k] for k in needed}} for r in rows],
                         schema={"entity": pl.String(), "entity_code": pl.String(),
                                 "date": pl.String(),
                                 "emissions_intensity_gco2_per_kwh": pl.Float64()}, strict=False)
    start = frame["date"].str.slice(0, 7 if resolution == "month" else 4)
    starts = (start + ("-01" if resolution == "month" else "-01-01")).str.to_date(
        "%Y-%m-%d", strict=False)
    if starts.null_count():
        raise ParseError(SOURCE, url, "data[].date", f"unreadable date in {frame['date'][:3]}")
    unknown = frame.filter(~pl.col("entity_code").is_in(list(ZONES)).fill_null(False))
    if unknown.height and notes is not None:
        names = unknown["entity_code"].fill_null(unknown["entity"]).fill_null("?")
        notes.append(f"intensity for unmapped entities skipped: {sorted(set(names))}")
    gaps = frame.filter(pl.col("emissions_intensity_gco2_per_kwh").is_null())
    if gaps.height and notes is not None:
        notes.append(f"{gaps.height} intensity value(s) null, skipped")
    return frame.with_columns(starts.alias("day")).filter(
        pl.col("entity_code").is_in(list(ZONES)).fill_null(False)
        & pl.col("emissions_intensity_gco2_per_kwh").is_not_null()).select(
        pl.lit(vintage).alias("vintage"),
        pl.col("entity_code").replace_strict(ZONES, return_dtype=pl.String()).alias("zone"),
        pl.col("day").cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
        .alias("interval_start_utc"),
        pl.lit(resolution).alias("resolution"),
        pl.col("emissions_intensity_gco2_per_kwh").alias("intensity_gco2e_per_kwh"),
        pl.lit("lifecycle").alias("emission_factor_basis"),
        pl.lit("location_based").alias("accounting"),
        *cited(url, fetched_on, LICENCE),
    ).sort("zone", "interval_start_utc")
