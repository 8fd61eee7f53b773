"""Energy-Charts (Fraunhofer ISE) day-ahead prices per bidding zone: GET /price?bzn=&start=&end=.

Each response carries `license_info`: CC BY 4.0 (SMARD.de) for some zones, "private and
internal use only" for others (ES, PT, most Nordic and Italian zones; the list changes, so it
is never hard-coded). The text is stored on every row; a row whose licence is not CC BY is
flagged by a `RESTRICTED:` prefix in `licence` so public outputs can quarantine it.

Pitfalls handled: `unix_seconds` are UTC starts of each market time unit; the step is 900 s
(15-min products, SDAC from 2025-10-01) or 3600 s, derived per row from the timestamps, so a
day has 92/96/100 quarter-hours (23/24/25 hours) around DST; `price` may hold nulls (dropped
and reported); the unit must read EUR/MWh (a unit drift such as EUR/kWh is an error).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import polars as pl
import requests

from schemas.market import ELECTRICITY_PRICES
from sources import http
from sources.decode import load_json_object
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source, cited, single_table

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "energy_charts", "https://api.energy-charts.info", provides=(ELECTRICITY_PRICES,),
    licence=("per response (license_info): CC BY 4.0 from Bundesnetzagentur | SMARD.de for some "
             "zones, private and internal use only for others; attribution: Energy-Charts.info"))

#: Energy-Charts `bzn` -> our zone code (the zone field's pattern: upper case, '-' separated).
ZONES = {
    "FR": "FR", "DE-LU": "DE-LU", "BE": "BE", "NL": "NL", "AT": "AT", "PL": "PL",
    "CZ": "CZ", "CH": "CH", "SI": "SI", "HU": "HU", "ES": "ES", "PT": "PT",
    "DK1": "DK-DK1", "DK2": "DK-DK2", "SE3": "SE-SE3", "SE4": "SE-SE4", "FI": "FI",
    "NO1": "NO-NO1", "NO2": "NO-NO2", "IT-North": "IT-NORTH",
}
#: Zones fetched when none are named.
DEFAULT_ZONES = ("FR", "DE-LU", "BE", "NL", "AT", "PL", "ES", "PT", "IT-North", "DK1", "SE3",
                 "FI")
RESTRICTED = "RESTRICTED (not CC BY, not for public or commercial reuse): "
_STEPS = {900: "15min", 3600: "hour"}


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe("/price?bzn=DE-LU")  # today's prices of one zone


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """The vintage month of each zone."""
    first, last = ctx.month
    return ctx.each_zone(fetch_prices, session, first, last, source=SOURCE, base_url=BASE_URL,
                         zones=DEFAULT_ZONES)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    """The snapshot's prices, refused when they are about another month than the vintage."""
    [(table, frame)] = single_table(ELECTRICITY_PRICES, parse_prices, raw, ctx, notes,
                                    bzn=raw.params.get("bzn", ""))
    return [(table, ctx.check_month(frame, SOURCE, raw.url))]


def fetch_prices(session: requests.Session, bzn: str, start: date, end: date, *,
                 base_url: str = BASE_URL, policy: FetchPolicy = DEFAULT_POLICY
                 ) -> list[Fetched]:
    """Day-ahead prices of `bzn` for the local days start..end (inclusive)."""
    if bzn not in ZONES:
        raise ValueError(f"unknown Energy-Charts bidding zone {bzn!r}; known: {sorted(ZONES)}")
    params = {"bzn": bzn, "start": start.isoformat(), "end": end.isoformat()}
    return [http.fetch(session, f"{base_url}/price", source=SOURCE, params=params, policy=policy)]


def licence_of(license_info: str) -> str:
    text = " ".join(license_info.split())
    return text if "CC BY" in text.upper() else RESTRICTED + text


def parse_prices(data: bytes, *, url: str, bzn: str, vintage: str, fetched_on: date,
                 notes: list[str] | None = None) -> pl.DataFrame:
    """One /price response -> ELECTRICITY_PRICES rows (price_basis day_ahead)."""
    body = load_json_object(data, source=SOURCE, url=url,
                            required=("license_info", "unix_seconds", "price", "unit"))
    zone = ZONES.get(bzn)
    if zone is None:
        raise ParseError(SOURCE, url, "bzn", f"unknown bidding zone {bzn!r}")
    unit = "".join(str(body["unit"]).split())
    if unit != "EUR/MWh":
        raise ParseError(SOURCE, url, "unit", f"expected EUR / MWh, got {body['unit']!r}")
    info = body["license_info"]
    if not isinstance(info, str) or not info.strip():
        raise ParseError(SOURCE, url, "license_info", "missing or empty licence text")
    seconds, prices = body["unix_seconds"], body["price"]
    if not isinstance(seconds, list) or not isinstance(prices, list):
        raise ParseError(SOURCE, url, "unix_seconds/price", "expected two arrays")
    if len(seconds) != len(prices):
        raise ParseError(SOURCE, url, "price", f"{len(prices)} prices for {len(seconds)} "
                         "timestamps")
    if len(seconds) < 2:
        raise ParseError(SOURCE, url, "unix_seconds", f"{len(seconds)} point(s): too few to "
                         "tell the market time unit")
    try:
        frame = pl.DataFrame({"t": seconds, "price_eur_per_mwh": prices},
                             schema={"t": pl.Int64(), "price_eur_per_mwh": pl.Float64()},
                             strict=False)
    except (TypeError, pl.exceptions.PolarsError) as error:
        raise ParseError(SOURCE, url, "unix_seconds/price", f"not numbers: {error}") from None
    if frame["t"].null_count():
        raise ParseError(SOURCE, url, "unix_seconds", "null or non-integer timestamp")
    step = frame["t"].diff().shift(-1).fill_null(strategy="forward")
    frame = frame.with_columns(step.alias("step"))
    odd = frame.filter(~pl.col("step").is_in(list(_STEPS)))
    if odd.height:
        raise ParseError(SOURCE, url, "unix_seconds",
                         f"step of {odd['step'][0]} s at t={odd['t'][0]}: expected 900 or 3600")
    gaps = frame.filter(pl.col("price_eur_per_mwh").is_null())
    if gaps.height and notes is not None:
        notes.append(f"{zone}: {gaps.height} interval(s) without a price (null) skipped")
    if body.get("deprecated") is True and notes is not None:
        notes.append(f"{url}: endpoint marked deprecated by Energy-Charts")
    licence = licence_of(info)
    if licence.startswith(RESTRICTED) and notes is not None:
        notes.append(f"{zone}: licence is not CC BY; rows flagged RESTRICTED")
    return frame.filter(pl.col("price_eur_per_mwh").is_not_null()).select(
        pl.lit(vintage).alias("vintage"),
        pl.lit(zone).alias("zone"),
        pl.from_epoch("t", time_unit="s").dt.replace_time_zone("UTC")
        .dt.cast_time_unit("us").alias("interval_start_utc"),
        pl.col("step").replace_strict(_STEPS, return_dtype=pl.String()).alias("resolution"),
        "price_eur_per_mwh",
        pl.lit("day_ahead").alias("price_basis"),
        *cited(url, fetched_on, licence),
    ).sort("interval_start_utc")
