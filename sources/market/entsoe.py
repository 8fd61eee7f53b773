"""ENTSO-E Transparency Platform day-ahead prices (document A44), when a token is set in
ENTSOE_API_KEY (sent as the `securityToken` query parameter: redacted from URLs, params,
snapshots and messages).

GET https://web-api.tp.entsoe.eu/api?documentType=A44&in_Domain=EIC&out_Domain=EIC
    &periodStart=yyyyMMddHHmm&periodEnd=yyyyMMddHHmm&contract_MarketAgreement.type=A01

Pitfalls handled: the XML namespace version changes (elements are matched by local name);
"no data" comes back as an Acknowledgement_MarketDocument, possibly with HTTP 200 (a clear
error with its Reason text); curve type A03 omits a position whose price equals the previous
one, so positions are forward-filled within each Period (A01 gaps are reported, not filled);
resolution PT15M or PT60M per Period; currency must be EUR and the unit MWH; DE-LU and AT ask
for the SDAC series (classificationSequence position 1). Day-ahead prices are owned by the
market operators (EPEX SPOT, OMIE, Nord Pool) and are not in ENTSO-E's free re-use list: rows
are flagged RESTRICTED in `licence`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from xml.etree import ElementTree

import polars as pl
import requests

from schemas.market import ELECTRICITY_PRICES
from sources import http
from sources.decode import load_xml
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source, cited

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "entsoe", "https://web-api.tp.entsoe.eu", provides=(ELECTRICITY_PRICES,),
    licence=("RESTRICTED (not CC BY, not for public or commercial reuse): ENTSO-E Transparency "
             "Platform; day-ahead prices are owned by the NEMOs (EPEX SPOT, OMIE, Nord Pool) "
             "and republishing needs their agreement"),
    env_var="ENTSOE_API_KEY", needs_key=True)

#: Our zone -> EIC code of the bidding zone.
EIC = {
    "FR": "10YFR-RTE------C", "DE-LU": "10Y1001A1001A82H", "ES": "10YES-REE------0",
    "PT": "10YPT-REN------W", "BE": "10YBE----------2", "NL": "10YNL----------L",
    "AT": "10YAT-APG------L", "IT-NORTH": "10Y1001A1001A73I", "PL": "10YPL-AREA-----S",
}
SDAC_POSITION_ZONES = ("DE-LU", "AT")
DEFAULT_ZONES = tuple(EIC)
_RESOLUTIONS = {"PT15M": (15, "15min"), "PT60M": (60, "hour")}


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe("/api?documentType=A44&in_Domain=10YFR-RTE------C"
              "&out_Domain=10YFR-RTE------C&periodStart=202501010000"
              "&periodEnd=202501020000", key_param="securityToken")  # one past day of FR


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """Each zone over a UTC window covering the month's local days in every European zone
    (UTC+0..+3)."""
    token = os.environ[ENV_VAR or ""]
    first, last = ctx.month
    start = datetime(first.year, first.month, first.day, tzinfo=UTC) - timedelta(hours=3)
    end = datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1)
    return ctx.each_zone(fetch_prices, session, start, end, token, source=SOURCE, base_url=BASE_URL,
                         zones=DEFAULT_ZONES)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    """The snapshot's zone read back from its EIC code; the request reaches 3 h back for local
    days, the vintage keeps its own (UTC) month, as the monthly price is taken by UTC month."""
    eic = raw.params.get("in_Domain", "")
    zone = next((z for z, code in EIC.items() if code == eic), eic)
    frame = parse_prices(raw.data, url=raw.url, zone=zone, vintage=ctx.vintage,
                         fetched_on=raw.fetched_on, notes=notes)
    # A44 answers hold whole market days overlapping the window asked: the previous month's
    # last one and the next month's first, a day past the window at most
    checked = ctx.check_month(frame, SOURCE, raw.url, margin=timedelta(days=1))
    return [(ELECTRICITY_PRICES, ctx.in_month(checked))]


def fetch_prices(session: requests.Session, zone: str, start: datetime, end: datetime,
                 token: str, *, base_url: str = BASE_URL, policy: FetchPolicy = DEFAULT_POLICY
                 ) -> list[Fetched]:
    """A44 prices of `zone` between two UTC instants (at most a year apart)."""
    if zone not in EIC:
        raise ValueError(f"no EIC code for zone {zone!r}; known: {sorted(EIC)}")
    params = {"securityToken": token, "documentType": "A44", "in_Domain": EIC[zone],
              "out_Domain": EIC[zone], "periodStart": f"{start:%Y%m%d%H%M}",
              "periodEnd": f"{end:%Y%m%d%H%M}", "contract_MarketAgreement.type": "A01"}
    if zone in SDAC_POSITION_ZONES:
        params["classificationSequence_AttributeInstanceComponent.position"] = "1"
    return [http.fetch(session, f"{base_url}/api", source=SOURCE, params=params,
                       secret_params=("securityToken",), policy=policy)]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(element: ElementTree.Element, *path: str) -> ElementTree.Element | None:
    for name in path:
        found = next((c for c in element if _local(c.tag) == name), None)
        if found is None:
            return None
        element = found
    return element


def _text(element: ElementTree.Element, *path: str) -> str | None:
    found = _child(element, *path)
    return None if found is None or found.text is None else found.text.strip()


def _instant(text: str | None, url: str, where: str) -> datetime:
    try:
        return datetime.strptime(text or "", "%Y-%m-%dT%H:%MZ").replace(tzinfo=UTC)
    except ValueError:
        raise ParseError(SOURCE, url, where, f"not yyyy-mm-ddThh:mmZ: {text!r}") from None


def parse_prices(data: bytes, *, url: str, zone: str, vintage: str, fetched_on: date,
                 notes: list[str] | None = None) -> pl.DataFrame:
    """A Publication_MarketDocument (A44) -> ELECTRICITY_PRICES rows (day_ahead)."""
    root = load_xml(data, source=SOURCE, url=url)
    kind = _local(root.tag)
    if kind == "Acknowledgement_MarketDocument":
        reason = _text(root, "Reason", "text") or "no reason given"
        raise ParseError(SOURCE, url, "Acknowledgement_MarketDocument", reason)
    if kind != "Publication_MarketDocument":
        raise ParseError(SOURCE, url, "(root)", f"unexpected document {kind!r}")
    rows: list[tuple[datetime, str, float]] = []
    filled = gaps = repeats = 0
    for number, series in enumerate((c for c in root if _local(c.tag) == "TimeSeries"), 1):
        where = f"TimeSeries[{number}]"
        currency = _text(series, "currency_Unit.name")
        unit = _text(series, "price_Measure_Unit.name")
        if currency != "EUR" or unit != "MWH":
            raise ParseError(SOURCE, url, where, f"expected EUR per MWH, got {currency} per "
                             f"{unit}")
        domain = _text(series, "in_Domain.mRID")
        if domain is not None and zone in EIC and domain != EIC[zone]:
            raise ParseError(SOURCE, url, where + ".in_Domain.mRID",
                             f"the answer is for {domain}, not {zone}'s {EIC[zone]} that was "
                             "asked: refused")
        curve = _text(series, "curveType") or "A01"
        for period in (c for c in series if _local(c.tag) == "Period"):
            start = _instant(_text(period, "timeInterval", "start"), url, where + ".start")
            end = _instant(_text(period, "timeInterval", "end"), url, where + ".end")
            resolution = _text(period, "resolution") or ""
            if resolution not in _RESOLUTIONS:
                raise ParseError(SOURCE, url, where + ".resolution",
                                 f"{resolution!r} not PT15M or PT60M")
            minutes, label = _RESOLUTIONS[resolution]
            slots = int((end - start) / timedelta(minutes=minutes))
            prices: dict[int, float] = {}
            for point in (c for c in period if _local(c.tag) == "Point"):
                try:
                    position = int(_text(point, "position") or "")
                    price = float(_text(point, "price.amount") or "")
                except ValueError:
                    raise ParseError(SOURCE, url, where + ".Point",
                                     "unreadable position or price.amount") from None
                if position in prices:
                    if prices[position] != price:
                        raise ParseError(SOURCE, url, f"{where}.Point.position {position}",
                                         f"given twice, {prices[position]} and {price} "
                                         f"(period start {start:%Y-%m-%d %H:%M} UTC): refused "
                                         "rather than keep one")
                    repeats += 1
                prices[position] = price
            if not prices or min(prices) < 1 or max(prices) > slots:
                raise ParseError(SOURCE, url, where + ".Point.position",
                                 f"positions outside 1..{slots}")
            last: float | None = None
            for position in range(1, slots + 1):
                if position in prices:
                    last = prices[position]
                elif curve == "A03" and last is not None:
                    filled += 1
                else:
                    gaps += 1
                    continue
                assert last is not None
                rows.append((start + (position - 1) * timedelta(minutes=minutes), label, last))
    if notes is not None and (filled or gaps):
        notes.append(f"{zone}: {filled} A03 position(s) forward-filled, {gaps} gap(s) left")
    frame = pl.DataFrame(rows, schema={"interval_start_utc": pl.Datetime("us", "UTC"),
                                       "resolution": pl.String(),
                                       "price_eur_per_mwh": pl.Float64()}, orient="row")
    key = ["interval_start_utc", "resolution"]
    conflicts = frame.group_by(key, maintain_order=True).agg(
        pl.col("price_eur_per_mwh").n_unique().alias("prices")).filter(pl.col("prices") > 1)
    if conflicts.height:
        first = conflicts.row(0, named=True)
        raise ParseError(SOURCE, url, "TimeSeries",
                         f"{conflicts.height} interval(s) priced differently in two "
                         f"TimeSeries, the first {first['interval_start_utc']:%Y-%m-%d %H:%M} "
                         f"UTC ({first['resolution']}): refused rather than keep one")
    unique = frame.unique(key, keep="first", maintain_order=True)
    repeats += frame.height - unique.height
    if notes is not None and repeats:
        notes.append(f"{zone}: {repeats} identical duplicate point(s) dropped")
    return unique.select(
        pl.lit(vintage).alias("vintage"), pl.lit(zone).alias("zone"), "interval_start_utc",
        "resolution", "price_eur_per_mwh", pl.lit("day_ahead").alias("price_basis"),
        *cited(url, fetched_on, LICENCE),
    ).sort("interval_start_utc")
