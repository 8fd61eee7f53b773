"""Scaleway GPU instance prices (EUR, ex VAT, per node-hour) from the public Instance API:
GET /instance/v1/zones/{zone}/products/servers?per_page=100&page=N (no key needed).

Pitfalls handled: the product list is paged (X-Total-Count header; pages are fetched until it
is reached, and a short page before it fails the zone); non-GPU server types are not offers
and are left out; GPU names (`gpu_info.gpu_name`) map to hardware ids through an explicit
table, and a GPU that is not in it is skipped and reported; MIG-partitioned types (a slice of
a GPU) are skipped and reported; `monthly_price` is hourly x 730 and is not used.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

import polars as pl
import requests

from schemas.market import GPU_OFFERS
from sources import http
from sources.decode import load_json_object
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source, cited, single_table
from sources.offers import finish_offers, gpu_ids, no_fx

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "scaleway", "https://api.scaleway.com", provides=(GPU_OFFERS,),
    licence="Scaleway public price list (provider terms); figures cited, not redistributed")

PROVIDER_ID = "scaleway"
DEFAULT_ZONES = ("fr-par-1", "fr-par-2", "nl-ams-1", "pl-waw-1")
PER_PAGE = 100
MAX_PAGES = 20
#: Scaleway `gpu_info.gpu_name` -> hardware id (sources/reference/hardware.csv).
GPU_MODELS = {
    "H100-PCIe": "H100-PCIe-80GB",
    "H100-SXM": "H100-SXM-80GB",
    "L4": "L4-24GB",
    "L40S": "L40S-48GB",
    "B300-SXM": "B300-SXM-288GB",
}
_ZONE_IN_URL = re.compile(r"/zones/([a-z]{2}-[a-z]{3}-\d)/")


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe("/instance/v1/zones/fr-par-1/products/servers?per_page=1&page=1")


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """Every page of each zone."""
    return ctx.each_zone(fetch_servers, session, source=SOURCE, base_url=BASE_URL,
                         zones=DEFAULT_ZONES)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    return single_table(GPU_OFFERS, parse_servers, raw, ctx, notes, regions=ctx.regions)


def fetch_servers(session: requests.Session, zone: str, *, base_url: str = BASE_URL,
                  policy: FetchPolicy = DEFAULT_POLICY) -> Iterator[Fetched]:
    """Every page of server types in `zone`."""
    url = f"{base_url}/instance/v1/zones/{zone}/products/servers"
    seen = 0
    for page in range(1, MAX_PAGES + 1):
        fetched = http.fetch(session, url, source=SOURCE,
                             params={"per_page": PER_PAGE, "page": page}, policy=policy)
        yield fetched
        servers = load_json_object(fetched.data, source=SOURCE, url=fetched.url,
                                   required=("servers",))["servers"]
        count = len(servers) if isinstance(servers, dict) else 0
        del servers  # not held while the next page is fetched
        seen += count
        total = fetched.headers.get("x-total-count", "")
        if total.isdigit() and seen >= int(total):
            return
        if count < PER_PAGE:
            if total.isdigit():  # a short page before X-Total-Count is reached
                raise ParseError(SOURCE, fetched.url, f"page {page}",
                                 f"{seen} server type(s) of the {total} X-Total-Count "
                                 "promises: incomplete answer")
            return
    raise ParseError(SOURCE, url, "page", f"still more servers after {MAX_PAGES} pages")


def zone_of(url: str) -> str:
    match = _ZONE_IN_URL.search(url)
    if match is None:
        raise ParseError(SOURCE, url, "(url)", "no /zones/<zone>/ in the URL")
    return match.group(1)


def parse_servers(data: bytes, *, url: str, vintage: str, fetched_on: date,
                  regions: pl.DataFrame, notes: list[str] | None = None) -> pl.DataFrame:
    """One page of /products/servers -> GPU_OFFERS rows (on-demand, EUR)."""
    body = load_json_object(data, source=SOURCE, url=url, required=("servers",))
    servers = body["servers"]
    if not isinstance(servers, dict):
        raise ParseError(SOURCE, url, "servers", "expected an object keyed by server type")
    zone = zone_of(url)
    rows = []
    for name, spec in sorted(servers.items()):
        if not isinstance(spec, dict):
            raise ParseError(SOURCE, url, f"servers.{name}", "expected an object")
        if not spec.get("gpu"):
            continue  # a CPU server type: not a GPU offer
        info = spec.get("gpu_info") or {}
        for key in ("hourly_price", "gpu"):
            if not isinstance(spec.get(key), int | float) or isinstance(spec.get(key), bool):
                raise ParseError(SOURCE, url, f"servers.{name}.{key}",
                                 f"expected a number, got {spec.get(key)!r}")
        if spec.get("mig_profile"):
            if notes is not None:
                notes.append(f"{name}: MIG profile {spec['mig_profile']!r} (a GPU slice) skipped")
            continue
        rows.append({
            "offer_id": name, "model": info.get("gpu_name") or "(none)",
            "gpu_count": int(spec["gpu"]), "price_original_per_hour": float(spec["hourly_price"]),
            "note": "end of service announced" if spec.get("end_of_service") else None,
        })
    schema = {"offer_id": pl.String(), "model": pl.String(), "gpu_count": pl.Int64(),
              "price_original_per_hour": pl.Float64(), "note": pl.String()}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    raw = frame.with_columns(
        pl.lit(PROVIDER_ID).alias("provider_id"),
        pl.lit(zone).alias("region"),
        gpu_ids(pl.col("model"), GPU_MODELS).alias("gpu"),
        pl.lit("on_demand").alias("pricing_model"),
        pl.lit("EUR").alias("currency"),
        *cited(url, fetched_on, LICENCE),
    )
    return finish_offers(raw, source=SOURCE, url=url, vintage=vintage, regions=regions,
                         fx=no_fx(), notes=notes)
