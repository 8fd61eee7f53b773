"""What `ingest` does for each source: which requests to make for a vintage, and how each raw
snapshot turns back into canonical frames. Kept apart from the sources (which know one API
each) and from ingest.py (which knows the transaction and failure rules).

The parse side reads only the snapshot (URL, params, bytes, fetch time) and the context, so
`--offline` re-parses stored snapshots exactly as a live run would.
"""

from __future__ import annotations

import calendar
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from types import ModuleType

import polars as pl
import requests

from schemas.table import Table
from sources import (
    aws,
    azure,
    ecb,
    electricity_maps,
    ember,
    energy_charts,
    entsoe,
    odre,
    omie,
    ovhcloud,
    scaleway,
)
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.offers import FX_COLUMNS


@dataclass(frozen=True)
class Raw:
    """A stored raw snapshot, as parse sees it."""

    sha256: str
    url: str
    params: dict[str, str]
    data: bytes
    fetched_at: datetime


@dataclass(frozen=True)
class Context:
    """Everything a job needs besides the session: the vintage, the day of the run, the
    region map, the ECB rates known so far (a callable: the ecb job may just have loaded
    them), fetch policy and per-source base-URL and zone overrides (tests,
    SCORECARD_<SOURCE>_BASE_URL)."""

    vintage: str
    today: date
    regions: pl.DataFrame
    fx_rates: Callable[[], pl.DataFrame] = field(default=lambda: pl.DataFrame(schema=FX_COLUMNS))
    policy: FetchPolicy = DEFAULT_POLICY
    base_urls: dict[str, str] = field(default_factory=dict)
    zones: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def base_url(self, module: ModuleType) -> str:
        return self.base_urls.get(module.SOURCE, module.BASE_URL)

    @property
    def month(self) -> tuple[date, date]:
        """First and last day of the vintage month, the last capped at today."""
        year, month = (int(p) for p in self.vintage.split("-"))
        first = date(year, month, 1)
        last = date(year, month, calendar.monthrange(year, month)[1])
        return first, min(last, max(self.today, first))


Frames = list[tuple[Table, pl.DataFrame]]


@dataclass(frozen=True)
class Job:
    module: ModuleType
    fetch: Callable[[requests.Session, Context], list[Fetched]]
    parse: Callable[[Raw, Context, list[str]], Frames]
    needs_key: bool = False  # skipped (not failed) when module.ENV_VAR is unset
    accumulate: bool = False  # each load re-includes the vintage's earlier snapshots


# --- ecb -----------------------------------------------------------------------------------
ECB_LOOKBACK_DAYS = 10  # rates before the month start, so day 1 has a rate to carry forward


def _ecb_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    first, _ = ctx.month
    base = ctx.base_url(ecb)
    if (ctx.today - first).days < 80:
        return ecb.fetch_recent(session, base_url=base, policy=ctx.policy)
    return ecb.fetch_history(session, base_url=base, policy=ctx.policy)


def _ecb_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    first, last = ctx.month
    if raw.url.endswith(".zip") or raw.url.endswith(".csv"):
        frame = ecb.parse_hist_csv(raw.data, url=raw.url)
    else:
        frame = ecb.parse_xml(raw.data, url=raw.url)
    window = frame.filter(pl.col("rate_date").is_between(
        first - timedelta(days=ECB_LOOKBACK_DAYS), last))
    return [(ecb.FX_RATES, window)]


# --- energy_charts -------------------------------------------------------------------------
def _ec_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    first, last = ctx.month
    out: list[Fetched] = []
    for bzn in ctx.zones.get(energy_charts.SOURCE, energy_charts.DEFAULT_ZONES):
        out += energy_charts.fetch_prices(session, bzn, first, last,
                                          base_url=ctx.base_url(energy_charts),
                                          policy=ctx.policy)
    return out


def _ec_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    frame = energy_charts.parse_prices(raw.data, url=raw.url, bzn=raw.params.get("bzn", ""),
                                       vintage=ctx.vintage, fetched_on=_day(raw), notes=notes)
    return [(energy_charts.ELECTRICITY_PRICES, frame)]


# --- scaleway ------------------------------------------------------------------------------
def _scw_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    out: list[Fetched] = []
    for zone in ctx.zones.get(scaleway.SOURCE, scaleway.DEFAULT_ZONES):
        out += scaleway.fetch_servers(session, zone, base_url=ctx.base_url(scaleway),
                                      policy=ctx.policy)
    return out


def _scw_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    frame = scaleway.parse_servers(raw.data, url=raw.url, vintage=ctx.vintage,
                                   fetched_on=_day(raw), regions=ctx.regions, notes=notes)
    return [(scaleway.GPU_OFFERS, frame)]


# --- ovhcloud ------------------------------------------------------------------------------
def _ovh_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    return ovhcloud.fetch_catalog(session, base_url=ctx.base_url(ovhcloud), policy=ctx.policy)


def _ovh_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    frame = ovhcloud.parse_catalog(raw.data, url=raw.url, vintage=ctx.vintage,
                                   fetched_on=_day(raw), regions=ctx.regions, notes=notes)
    return [(ovhcloud.GPU_OFFERS, frame)]


# --- azure ---------------------------------------------------------------------------------
def _azure_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    out: list[Fetched] = []
    for region in ctx.zones.get(azure.SOURCE, azure.DEFAULT_REGIONS):
        out += azure.fetch_prices(session, region, base_url=ctx.base_url(azure),
                                  policy=ctx.policy)
    return out


def _azure_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    frame = azure.parse_prices(raw.data, url=raw.url, vintage=ctx.vintage, fetched_on=_day(raw),
                               regions=ctx.regions, fx=ctx.fx_rates(), notes=notes)
    return [(azure.GPU_OFFERS, frame)]


# --- aws -----------------------------------------------------------------------------------
def _aws_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    out: list[Fetched] = []
    for location in ctx.zones.get(aws.SOURCE, aws.DEFAULT_LOCATIONS):
        out += aws.fetch_prices(session, location, base_url=ctx.base_url(aws),
                                policy=ctx.policy)
    return out


def _aws_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    frame = aws.parse_prices(raw.data, url=raw.url, vintage=ctx.vintage, fetched_on=_day(raw),
                             regions=ctx.regions, fx=ctx.fx_rates(), notes=notes)
    return [(aws.GPU_OFFERS, frame)]


# --- ember ---------------------------------------------------------------------------------
def _ember_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    out = ember.fetch_wholesale_monthly(session, base_url=ctx.base_url(ember),
                                        policy=ctx.policy)
    key = os.environ.get(ember.ENV_VAR or "")
    if key:
        api = ctx.base_urls.get("ember_api", ember.API_URL)
        year = int(ctx.vintage[:4])
        out += ember.fetch_intensity(session, key, "yearly", str(year - 3), base_url=api,
                                     policy=ctx.policy)
        out += ember.fetch_intensity(session, key, "monthly", f"{year - 1}-01", base_url=api,
                                     policy=ctx.policy)
    return out


def _ember_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    if "/carbon-intensity/" in raw.url:
        return [(ember.GRID_INTENSITY, ember.parse_intensity(
            raw.data, url=raw.url, vintage=ctx.vintage, fetched_on=_day(raw), notes=notes))]
    return [(ember.ELECTRICITY_PRICES, ember.parse_wholesale_monthly(
        raw.data, url=raw.url, vintage=ctx.vintage, fetched_on=_day(raw), notes=notes))]


# --- electricity_maps ----------------------------------------------------------------------
def _em_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    token = os.environ[electricity_maps.ENV_VAR or ""]
    out: list[Fetched] = []
    for zone in ctx.zones.get(electricity_maps.SOURCE, electricity_maps.DEFAULT_ZONES):
        out += electricity_maps.fetch_history(session, zone, token,
                                              base_url=ctx.base_url(electricity_maps),
                                              policy=ctx.policy)
    return out


def _em_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    frame = electricity_maps.parse_history(raw.data, url=raw.url, vintage=ctx.vintage,
                                           fetched_on=_day(raw), notes=notes)
    return [(electricity_maps.GRID_INTENSITY, _in_month(frame, ctx))]


# --- entsoe --------------------------------------------------------------------------------
def _entsoe_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    token = os.environ[entsoe.ENV_VAR or ""]
    first, last = ctx.month
    # UTC window covering the month's local days in every European zone (UTC+0..+3)
    start = datetime(first.year, first.month, first.day, tzinfo=UTC) - timedelta(hours=3)
    end = datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1)
    out: list[Fetched] = []
    for zone in ctx.zones.get(entsoe.SOURCE, entsoe.DEFAULT_ZONES):
        out += entsoe.fetch_prices(session, zone, start, end, token,
                                   base_url=ctx.base_url(entsoe), policy=ctx.policy)
    return out


def _entsoe_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    eic = raw.params.get("in_Domain", "")
    zone = next((z for z, code in entsoe.EIC.items() if code == eic), eic)
    frame = entsoe.parse_prices(raw.data, url=raw.url, zone=zone, vintage=ctx.vintage,
                                fetched_on=_day(raw), notes=notes)
    # the request reaches 3 h back for local days; the vintage keeps its own (UTC) month, as
    # the monthly price is taken by UTC month
    return [(entsoe.ELECTRICITY_PRICES, _in_month(frame, ctx))]


# --- omie ----------------------------------------------------------------------------------
def _omie_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    first, last = ctx.month
    out: list[Fetched] = []
    for offset in range((last - first).days + 1):
        out += omie.fetch_day(session, first + timedelta(days=offset),
                              base_url=ctx.base_url(omie), policy=ctx.policy)
    return out


def _omie_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    return [(omie.ELECTRICITY_PRICES, omie.parse_marginal(
        raw.data, url=raw.url, vintage=ctx.vintage, fetched_on=_day(raw), notes=notes))]


# --- odre ----------------------------------------------------------------------------------
def _odre_fetch(session: requests.Session, ctx: Context) -> list[Fetched]:
    first, last = ctx.month
    return odre.fetch_records(session, first, last + timedelta(days=1),
                              base_url=ctx.base_url(odre), policy=ctx.policy)


def _odre_parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    return [(odre.GRID_INTENSITY, odre.parse_records(
        raw.data, url=raw.url, vintage=ctx.vintage, fetched_on=_day(raw), notes=notes))]


def _in_month(frame: pl.DataFrame, ctx: Context) -> pl.DataFrame:
    """The rows whose interval starts in the vintage's month (UTC)."""
    return frame.filter(pl.col("interval_start_utc").dt.strftime("%Y-%m") == ctx.vintage)


def _day(raw: Raw) -> date:
    return raw.fetched_at.astimezone(UTC).date()


#: Every source, in the order they run (ecb first: USD prices need its rates).
JOBS: dict[str, Job] = {
    ecb.SOURCE: Job(ecb, _ecb_fetch, _ecb_parse),
    energy_charts.SOURCE: Job(energy_charts, _ec_fetch, _ec_parse),
    scaleway.SOURCE: Job(scaleway, _scw_fetch, _scw_parse),
    ovhcloud.SOURCE: Job(ovhcloud, _ovh_fetch, _ovh_parse),
    azure.SOURCE: Job(azure, _azure_fetch, _azure_parse),
    aws.SOURCE: Job(aws, _aws_fetch, _aws_parse),
    ember.SOURCE: Job(ember, _ember_fetch, _ember_parse),
    electricity_maps.SOURCE: Job(electricity_maps, _em_fetch, _em_parse, needs_key=True,
                                 accumulate=True),
    omie.SOURCE: Job(omie, _omie_fetch, _omie_parse),
    entsoe.SOURCE: Job(entsoe, _entsoe_fetch, _entsoe_parse, needs_key=True),
    odre.SOURCE: Job(odre, _odre_fetch, _odre_parse),
}

