"""RTE éCO2mix via ODRE (Opendatasoft Explore v2.1, no key): France's `taux_co2`, the RTE
estimate of DIRECT CO2 emissions of electricity produced in France (imports excluded), in
g/kWh every 15 minutes. Stored with emission_factor_basis = direct: it is not comparable with
lifecycle, consumption-based figures (Electricity Maps, Ember) and is never mixed with them.

GET /api/explore/v2.1/catalog/datasets/{dataset}/records?select=date_heure,taux_co2&where=...
&order_by=date_heure&limit=100&offset=N&timezone=UTC

Pitfalls handled: a page shorter than `total_count` promises (an empty page mid-month) fails
the fetch rather than cut the month short; `/records` pages are at most 100 rows and offset +
limit may not exceed 10,000 (a month of quarter-hours is ~2,976 rows: 30 pages); rows without
a `taux_co2` (the last quarter-hours of the real-time dataset, or half-hourly production
fields) are skipped with a count; `date_heure` carries its UTC offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import polars as pl
import requests

from schemas.market import GRID_INTENSITY
from sources import http
from sources.decode import load_json_object
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source, cited, single_table

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "odre", "https://odre.opendatasoft.com", provides=(GRID_INTENSITY,),
    licence="Licence Ouverte / Etalab 2.0 (assumed, usual for ODRE; not confirmed), source RTE")

DATASET = "eco2mix-national-tr"
PAGE = 100
MAX_ROWS = 10_000


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe(f"/api/explore/v2.1/catalog/datasets/{DATASET}/records?limit=1")


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """Every page of the vintage month (up to today)."""
    first, last = ctx.month
    return ctx.fetch(fetch_records, session, first, last + timedelta(days=1), source=SOURCE,
                     base_url=BASE_URL)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    return single_table(GRID_INTENSITY, parse_records, raw, ctx, notes)


def fetch_records(session: requests.Session, start: date, end: date, *,
                  dataset: str = DATASET, base_url: str = BASE_URL,
                  policy: FetchPolicy = DEFAULT_POLICY) -> Iterator[Fetched]:
    """Every page of records with start <= date_heure < end (UTC days)."""
    url = f"{base_url}/api/explore/v2.1/catalog/datasets/{dataset}/records"
    where = (f"date_heure >= '{start.isoformat()}T00:00:00Z' and "
             f"date_heure < '{end.isoformat()}T00:00:00Z' and taux_co2 is not null")
    offset = 0
    while offset + PAGE <= MAX_ROWS:
        page = http.fetch(session, url, source=SOURCE, params={
            "select": "date_heure,taux_co2", "where": where, "order_by": "date_heure",
            "limit": PAGE, "offset": offset, "timezone": "UTC"}, policy=policy)
        yield page
        total, count = page_counts(page)
        if offset + count < min(total, offset + PAGE):
            # a short or empty page before total_count is reached: rows are missing
            raise ParseError(SOURCE, page.url, f"offset {offset}",
                             f"page holds {count} record(s) but total_count {total} "
                             f"promises {min(total - offset, PAGE)} here: incomplete answer")
        offset += PAGE
        if offset >= total:
            return
    raise ParseError(SOURCE, url, "offset", f"more than {MAX_ROWS} rows: narrow the period "
                     "or use the exports endpoint")


def page_counts(page: Fetched) -> tuple[int, int]:
    """A /records page's total_count and how many records it holds (its parsed body is not
    kept while the next page is fetched)."""
    body = load_json_object(page.data, source=SOURCE, url=page.url,
                            required=("total_count", "results"))
    total, results = body["total_count"], body["results"]
    if not isinstance(total, int) or isinstance(total, bool) or not isinstance(results, list):
        raise ParseError(SOURCE, page.url, "total_count", "expected a count and a list")
    return total, len(results)


def parse_records(data: bytes, *, url: str, vintage: str, fetched_on: date,
                  notes: list[str] | None = None) -> pl.DataFrame:
    """One /records page -> GRID_INTENSITY rows for FR (15 min, direct, location-based)."""
    body = load_json_object(data, source=SOURCE, url=url, required=("results",))
    results = body["results"]
    if not isinstance(results, list):
        raise ParseError(SOURCE, url, "results", "expected a list")
    for index, record in enumerate(results):
        if not isinstance(record, dict) or "date_heure" not in record:
            raise ParseError(SOURCE, url, f"results[{index}].date_heure", "missing")
        if "taux_co2" not in record:
            raise ParseError(SOURCE, url, f"results[{index}].taux_co2", "missing")
    frame = pl.DataFrame([{"t": r["date_heure"], "co2": r["taux_co2"]} for r in results],
                         schema={"t": pl.String(), "co2": pl.Float64()}, strict=False)
    starts = frame["t"].str.to_datetime("%Y-%m-%dT%H:%M:%S%:z", strict=False,
                                        time_zone="UTC")
    if starts.null_count():
        raise ParseError(SOURCE, url, "date_heure", f"unreadable: {frame['t'][0]!r}")
    gaps = frame["co2"].null_count()
    if gaps and notes is not None:
        notes.append(f"{url}: {gaps} record(s) without taux_co2 skipped")
    return frame.with_columns(starts.dt.cast_time_unit("us").alias("start")).filter(
        pl.col("co2").is_not_null()).select(
        pl.lit(vintage).alias("vintage"),
        pl.lit("FR").alias("zone"),
        pl.col("start").alias("interval_start_utc"),
        pl.lit("15min").alias("resolution"),
        pl.col("co2").alias("intensity_gco2e_per_kwh"),
        pl.lit("direct").alias("emission_factor_basis"),
        pl.lit("location_based").alias("accounting"),
        *cited(url, fetched_on, LICENCE),
    ).sort("interval_start_utc")
