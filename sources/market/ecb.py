"""ECB euro foreign exchange reference rates: units of each currency per 1 EUR, as published
(USD -> EUR is amount / rate). Daily XML, the 90-day and full-history XML, the full-history CSV
(inside eurofxref-hist.zip) and the ECB Data Portal SDMX CSV all parse to FX_RATES rows.

Pitfalls handled: XML keeps trailing zeros while CSV does not (both parse to the same float);
the history CSV ends every line with a comma (an empty last column) and writes N/A for
currencies not quoted that day; Data Portal rows with an empty OBS_VALUE (closing days,
OBS_STATUS=H) are not rates and are dropped; weekends have no rate (readers carry the last
TARGET day forward, the rate_date shows which day was used).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import timedelta

import polars as pl
import requests

from schemas.market import FX_RATES
from sources import http
from sources.decode import load_xml, unzip_first
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "ecb", "https://www.ecb.europa.eu/stats/eurofxref", provides=(FX_RATES,),
    licence=("ECB euro reference rates; reuse permitted provided the information appears "
             "accurately and the ECB is cited as the source (informational rates only)"))

LOOKBACK_DAYS = 10  # rates before the month start, so day 1 has a rate to carry forward
RECENT_DAYS = 80  # a month that started this long ago may be past the 90-day file

_NS = "{http://www.ecb.int/vocabulary/2002-08-01/eurofxref}"


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe("/eurofxref-daily.xml")  # the day's rates, 2 KB


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """The 90-day file for a recent vintage, the full history for an older one."""
    first, _ = ctx.month
    recent = (ctx.today - first).days < RECENT_DAYS
    return ctx.fetch(fetch_recent if recent else fetch_history, session, source=SOURCE,
                     base_url=BASE_URL)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    """The vintage month's rates and the LOOKBACK_DAYS before it."""
    first, last = ctx.month
    if raw.url.endswith(".zip") or raw.url.endswith(".csv"):
        frame = parse_hist_csv(raw.data, url=raw.url)
    else:
        frame = parse_xml(raw.data, url=raw.url)
    window = frame.filter(pl.col("rate_date").is_between(
        first - timedelta(days=LOOKBACK_DAYS), last))
    return [(FX_RATES, window)]


def fetch_recent(session: requests.Session, *, base_url: str = BASE_URL,
                 policy: FetchPolicy = DEFAULT_POLICY) -> list[Fetched]:
    """The last 90 days (eurofxref-hist-90d.xml, same format as the daily file)."""
    return [http.fetch(session, f"{base_url}/eurofxref-hist-90d.xml", source=SOURCE, policy=policy)]


def fetch_history(session: requests.Session, *, base_url: str = BASE_URL,
                  policy: FetchPolicy = DEFAULT_POLICY) -> list[Fetched]:
    """Every rate since 1999 (eurofxref-hist.zip holding eurofxref-hist.csv, ~0.6 MB)."""
    return [http.fetch(session, f"{base_url}/eurofxref-hist.zip", source=SOURCE, policy=policy)]


def _cited(frame: pl.DataFrame, url: str) -> pl.DataFrame:
    return frame.with_columns(
        pl.lit(url).alias("source_url"),
        pl.col("rate_date").alias("source_date"),
        pl.lit(LICENCE).alias("licence"),
    ).sort("rate_date", "currency").select(FX_RATES.columns)


def parse_xml(data: bytes, *, url: str) -> pl.DataFrame:
    """eurofxref-daily.xml, -hist-90d.xml or -hist.xml: <Cube time=...><Cube currency rate/>."""
    root = load_xml(data, source=SOURCE, url=url)
    rows: dict[str, list[object]] = {"rate_date": [], "currency": [], "rate": []}
    days = root.iter(f"{_NS}Cube")
    for day in days:
        when = day.get("time")
        if when is None:
            continue
        for cube in day.findall(f"{_NS}Cube"):
            rows["rate_date"].append(when)
            rows["currency"].append(cube.get("currency"))
            rows["rate"].append(cube.get("rate"))
    if not rows["rate_date"]:
        raise ParseError(SOURCE, url, "Cube[@time]", "no dated rates in the document "
                         f"(root element {root.tag!r})")
    frame = pl.DataFrame(rows, schema={k: pl.String() for k in rows})
    return _cited(_typed(frame, url, "Cube"), url)


def _typed(frame: pl.DataFrame, url: str, where: str) -> pl.DataFrame:
    typed = frame.select(
        pl.col("rate_date").str.to_date("%Y-%m-%d", strict=False),
        pl.col("currency").str.strip_chars(),
        pl.col("rate").str.strip_chars().cast(pl.Float64, strict=False).alias("units_per_eur"),
    )
    bad = frame.filter(typed["rate_date"].is_null() | typed["units_per_eur"].is_null()
                       | typed["currency"].is_null())
    if bad.height:
        raise ParseError(SOURCE, url, where, f"unreadable rate or date: {bad.row(0)}")
    return typed


def parse_hist_csv(data: bytes, *, url: str) -> pl.DataFrame:
    """eurofxref-hist.csv (or the .zip holding it): Date,USD,JPY,...,<empty> with N/A gaps."""
    if data[:2] == b"PK":
        data = unzip_first(data, ".csv", source=SOURCE, url=url)
    try:
        wide = pl.read_csv(io.BytesIO(data), infer_schema=False)
    except pl.exceptions.PolarsError as error:
        raise ParseError(SOURCE, url, "(file)", f"not a readable CSV: {error}") from None
    if "Date" not in wide.columns:
        raise ParseError(SOURCE, url, "header", f"no Date column (found {wide.columns[:5]})")
    currencies = [c for c in wide.columns if c != "Date" and c.strip() and
                  not c.startswith("_duplicated")]
    long = wide.unpivot(index="Date", on=currencies, variable_name="currency",
                        value_name="rate").filter(
        pl.col("rate").is_not_null() & ~pl.col("rate").str.strip_chars().is_in(["N/A", ""]))
    return _cited(_typed(long.rename({"Date": "rate_date"}), url, "row"), url)

