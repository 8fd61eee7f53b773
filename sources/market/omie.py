"""OMIE (Iberian market operator) day-ahead marginal prices for Spain and Portugal, one file a
day: GET https://www.omie.es/es/file-download?parents=marginalpdbc&filename=
marginalpdbc_YYYYMMDD.1 (a 302 to the file; no key).

A body that stops mid-line (a truncated download) is refused, and so is a day whose period
count is not its real length (a 25-hour DST day with 96 quarter-hours is missing four).
Format: header `MARGINALPDBC;`, rows `YYYY;MM;DD;period;price_PT;price_ES;` (column 5 is
Portugal, 6 Spain), a final `*` line; latin-1; EUR/MWh. Periods are hours (23/24/25 a day) to
2025-09-30 and quarter-hours (92/96/100) from 2025-10-01; period 1 starts at 00:00 Spanish
peninsular time, so interval starts are that local midnight in UTC plus (period - 1) steps
(which is right across a DST change, where local clock hours repeat or vanish).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import polars as pl
import requests

from schemas.market import ELECTRICITY_PRICES
from sources import http
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source, cited, single_table

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "omie", "https://www.omie.es", provides=(ELECTRICITY_PRICES,),
    licence=("OMIE public information, free of charge: reuse allowed if the original content "
             "is respected and OMIE is cited as the source"))

TIMEZONE = "Europe/Madrid"
HOURLY_DAY = (23, 24, 25)
QUARTER_DAY = (92, 96, 100)


def day_hours(day: date) -> int:
    """How long `day` is in Madrid, in hours: 23 on the spring DST change, 25 in autumn."""
    zone = ZoneInfo(TIMEZONE)
    start = datetime.combine(day, time(), zone)
    end = datetime.combine(day + timedelta(days=1), time(), zone)
    return round((end.astimezone(UTC) - start.astimezone(UTC)).total_seconds() / 3600)


def file_name(day: date) -> str:
    return f"marginalpdbc_{day:%Y%m%d}.1"


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe("/es/file-download?parents=marginalpdbc&filename=marginalpdbc_20250101.1")


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """One file for each day of the vintage month (up to today)."""
    first, last = ctx.month
    for offset in range((last - first).days + 1):
        yield from ctx.fetch(fetch_day, session, first + timedelta(days=offset), source=SOURCE,
                             base_url=BASE_URL)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    """The day's prices, refused when they are about another month than the vintage."""
    [(table, frame)] = single_table(ELECTRICITY_PRICES, parse_marginal, raw, ctx, notes)
    return [(table, ctx.check_month(frame, SOURCE, raw.url))]


def fetch_day(session: requests.Session, day: date, *, base_url: str = BASE_URL,
              policy: FetchPolicy = DEFAULT_POLICY) -> list[Fetched]:
    params = {"parents": "marginalpdbc", "filename": file_name(day)}
    return [http.fetch(session, f"{base_url}/es/file-download", source=SOURCE,
                       params=params, policy=policy)]


def parse_marginal(data: bytes, *, url: str, vintage: str, fetched_on: date,
                   notes: list[str] | None = None, partial_ok: bool = False) -> pl.DataFrame:
    """One marginalpdbc file -> ELECTRICITY_PRICES rows for PT and ES. A day with fewer or
    more periods than its real length (23, 24 or 25 hours in Madrid, times 4 in quarter-hours)
    is refused, or with `partial_ok` (an excerpt) noted."""
    text = data.decode("latin-1")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines or not lines[0].upper().startswith("MARGINALPDBC"):
        raise ParseError(SOURCE, url, "line 1", f"expected MARGINALPDBC header, got "
                         f"{lines[0][:40] if lines else 'an empty file'!r}")
    if not data.rstrip(b" ").endswith((b"\n", b"*")):
        raise ParseError(SOURCE, url, f"byte {len(data)}", "file does not end with a line "
                         "break or the * terminator: truncated download?")
    records = []
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith("*"):
            break
        fields = line.rstrip(";").split(";")
        if len(fields) < 6:
            raise ParseError(SOURCE, url, f"line {number}", f"expected 6 fields: {line!r}")
        try:
            day = date(int(fields[0]), int(fields[1]), int(fields[2]))
            period = int(fields[3])
            pt, es = (float(f.replace(",", ".")) for f in fields[4:6])
        except ValueError as error:
            raise ParseError(SOURCE, url, f"line {number}", f"{error}: {line!r}") from None
        records.append((day, period, pt, es))
    if not records:
        raise ParseError(SOURCE, url, "line 2", "no price rows")
    frame = pl.DataFrame(records, schema={"day": pl.Date(), "period": pl.Int64(),
                                          "PT": pl.Float64(), "ES": pl.Float64()},
                         orient="row")
    per_day = frame.group_by("day").agg(pl.col("period").max().alias("periods"),
                                        pl.len().alias("rows"))
    for day, periods, count in per_day.sort("day").iter_rows():
        if periods > max(QUARTER_DAY) or (max(HOURLY_DAY) < periods < min(QUARTER_DAY)):
            raise ParseError(SOURCE, url, f"day {day}", f"period {periods} fits neither "
                             "hours nor quarter-hours")
        hours = day_hours(day)
        expected = hours * 4 if periods > max(HOURLY_DAY) else hours
        if count != expected:
            unit = "quarter-hours" if periods > max(HOURLY_DAY) else "hours"
            what = (f"{count} of the day's {expected} {unit} (a {hours}-hour day in "
                    f"{TIMEZONE})")
            if not partial_ok:
                raise ParseError(SOURCE, url, f"day {day}", f"{what}: incomplete file")
            if notes is not None:
                notes.append(f"{day}: {what}")
    frame = frame.join(per_day.select("day", "periods"), on="day").with_columns(
        pl.when(pl.col("periods") > max(HOURLY_DAY)).then(15).otherwise(60).alias("minutes"))
    midnight = (pl.col("day").cast(pl.Datetime("us")).dt.replace_time_zone(TIMEZONE)
                .dt.convert_time_zone("UTC"))
    start = midnight + pl.duration(minutes=(pl.col("period") - 1) * pl.col("minutes"))
    long = frame.with_columns(start.alias("interval_start_utc")).unpivot(
        index=["interval_start_utc", "minutes"], on=["PT", "ES"], variable_name="zone",
        value_name="price_eur_per_mwh")
    return long.select(
        pl.lit(vintage).alias("vintage"), "zone", "interval_start_utc",
        pl.when(pl.col("minutes") == 15).then(pl.lit("15min")).otherwise(pl.lit("hour"))
        .alias("resolution"),
        "price_eur_per_mwh",
        pl.lit("day_ahead").alias("price_basis"),
        *cited(url, fetched_on, LICENCE),
    ).sort("zone", "interval_start_utc")
