"""Electricity Maps v4 grid carbon intensity (`auth-token` header from ELECTRICITYMAPS_API_KEY;
the token is a secret header: never in a snapshot, a URL, params or a message).

The free tier gives `latest` and the trailing ~24 h of `history`, so a daily run keeps adding
hours: the ingest job re-parses the vintage's earlier snapshots with each new one (newest
value wins per hour). Each row keeps its `emissionFactorType` (lifecycle by default, direct on
request) as `emission_factor_basis`; the two are never mixed.

Pitfalls handled: `disableCallerLookup=true` is always sent (otherwise the caller's IP decides
the zone); estimated hours are kept and counted in a note (`isEstimated`); a null
carbonIntensity is skipped with a note; an error object such as {"error": ..., "message":
...} (401 for an endpoint outside the plan) is a clear error; zone "DE" maps to DE-LU and
"IT-NO" to IT-NORTH (sub-national zones keep their precision: SE-SE3, DK-DK1, ...).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date

import polars as pl
import requests

from schemas.market import GRID_INTENSITY
from sources import http
from sources.decode import load_json_object
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source, cited

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "electricity_maps", "https://api.electricitymaps.com", provides=(GRID_INTENSITY,),
    licence=("Electricity Maps API (free tier: personal use; commercial reuse needs a "
             "contract); attribution: Electricity Maps"),
    # the free tier serves 24 h: each load re-parses the month's earlier ones
    env_var="ELECTRICITYMAPS_API_KEY", needs_key=True, accumulate=True)

TOKEN_HEADER = "auth-token"
DEFAULT_ZONES = ("FR", "DE", "ES", "PT", "NL", "BE", "AT", "PL", "IE", "SE-SE3", "IT-NO",
                 "FI", "DK-DK1")
#: Electricity Maps zone -> our zone, where they differ (same codes as Energy-Charts' zones).
ZONES = {"DE": "DE-LU", "IT-NO": "IT-NORTH"}
_GRANULARITY = {"hourly": "hour", "15_minutes": "15min"}


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe("/v4/carbon-intensity/latest?zone=FR", key_header=TOKEN_HEADER)


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """The trailing 24 hours of each zone."""
    token = os.environ[ENV_VAR or ""]
    return ctx.each_zone(fetch_history, session, token, source=SOURCE, base_url=BASE_URL,
                         zones=DEFAULT_ZONES)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    """The hours of the snapshot that fall in the vintage month."""
    frame = parse_history(raw.data, url=raw.url, vintage=ctx.vintage,
                          fetched_on=raw.fetched_on, notes=notes)
    return [(GRID_INTENSITY, ctx.in_month(frame))]


def _fetch(session: requests.Session, kind: str, zone: str, token: str, basis: str,
           base_url: str, policy: FetchPolicy) -> list[Fetched]:
    if basis not in ("lifecycle", "direct"):
        raise ValueError(f"emission factor basis must be lifecycle or direct, not {basis!r}")
    params = {"zone": zone, "disableCallerLookup": "true", "emissionFactorType": basis}
    return [http.fetch(session, f"{base_url}/v4/carbon-intensity/{kind}",
                       source=SOURCE, params=params, headers={TOKEN_HEADER: token},
                       secret_headers=(TOKEN_HEADER,), policy=policy)]


def fetch_history(session: requests.Session, zone: str, token: str, *,
                  basis: str = "lifecycle", base_url: str = BASE_URL,
                  policy: FetchPolicy = DEFAULT_POLICY) -> list[Fetched]:
    """The trailing 24 hourly values of `zone`."""
    return _fetch(session, "history", zone, token, basis, base_url, policy)


def _rows(records: list[object], url: str, granularity: str, vintage: str, fetched_on: date,
          notes: list[str] | None) -> pl.DataFrame:
    resolution = _GRANULARITY.get(granularity)
    if resolution is None:
        raise ParseError(SOURCE, url, "temporalGranularity",
                         f"{granularity!r} not supported (hourly or 15_minutes)")
    needed = ("zone", "carbonIntensity", "datetime", "emissionFactorType")
    for index, record in enumerate(records):
        missing = [k for k in needed if not isinstance(record, dict) or k not in record]
        if missing:
            raise ParseError(SOURCE, url, f"[{index}].{missing[0]}", "missing")
    frame = pl.DataFrame(
        [{k: r[k] for k in (*needed, "isEstimated")} for r in records if isinstance(r, dict)],
        schema={"zone": pl.String(), "carbonIntensity": pl.Float64(), "datetime": pl.String(),
                "emissionFactorType": pl.String(), "isEstimated": pl.Boolean()}, strict=False)
    starts = frame["datetime"].str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", strict=False,
                                               time_zone="UTC")
    if starts.null_count():
        raise ParseError(SOURCE, url, "datetime", f"not ISO 8601 UTC: {frame['datetime'][0]!r}")
    if notes is not None:
        nulls = frame["carbonIntensity"].null_count()
        if nulls:
            notes.append(f"{url}: {nulls} hour(s) without a value skipped")
        estimated = int(frame["isEstimated"].fill_null(False).sum())
        if estimated:
            notes.append(f"{url}: {estimated} of {frame.height} value(s) are estimates")
    return frame.with_columns(starts.dt.cast_time_unit("us").alias("start")).filter(
        pl.col("carbonIntensity").is_not_null()).select(
        pl.lit(vintage).alias("vintage"),
        pl.col("zone").replace(ZONES).alias("zone"),
        pl.col("start").alias("interval_start_utc"),
        pl.lit(resolution).alias("resolution"),
        pl.col("carbonIntensity").alias("intensity_gco2e_per_kwh"),
        pl.col("emissionFactorType").alias("emission_factor_basis"),
        pl.lit("location_based").alias("accounting"),
        *cited(url, fetched_on, LICENCE),
    ).sort("interval_start_utc")


def parse_history(data: bytes, *, url: str, vintage: str, fetched_on: date,
                  notes: list[str] | None = None) -> pl.DataFrame:
    """{zone, history: [...], temporalGranularity} -> GRID_INTENSITY rows."""
    body = load_json_object(data, source=SOURCE, url=url, required=("history",))
    if not isinstance(body["history"], list):
        raise ParseError(SOURCE, url, "history", "expected a list")
    return _rows(body["history"], url, str(body.get("temporalGranularity", "hourly")),
                 vintage, fetched_on, notes)

