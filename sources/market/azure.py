"""Azure Retail Prices API (no key): GPU VM pay-as-you-go prices per region, in USD, converted
to EUR at parse time with the ECB rate of the fetch date (rate and date kept on each row).

GET https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&$filter=...
with an OData filter on serviceName, armRegionName, priceType and the GPU SKUs we map.

Pitfalls handled: results are paged through `NextPageLink` (followed only on the same host);
filter values are case-sensitive; Windows meters (productName ends in "Windows"), Spot and
Low Priority meters are dropped (reported by count); the unit must be "1 Hour"; a SKU listed
twice for a region keeps its latest effectiveStartDate; USD is Microsoft's retail currency
(other currencies are "for reference"), so we ask for USD and convert with the ECB.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from urllib.parse import urlsplit

import polars as pl
import requests

from schemas.market import GPU_OFFERS
from sources import http
from sources.decode import load_json_object
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source, cited, single_table
from sources.offers import finish_offers, instance_columns, instance_types

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "azure", "https://prices.azure.com", provides=(GPU_OFFERS,),
    licence="Azure Retail Prices API (Microsoft retail list prices, USD); figures cited")

PROVIDER_ID = "azure"
API_VERSION = "2023-01-01-preview"
DEFAULT_REGIONS = ("francecentral", "germanywestcentral", "swedencentral", "westeurope",
                   "northeurope", "italynorth", "polandcentral", "spaincentral")
MAX_PAGES = 50
#: armSkuName -> (hardware id, GPUs per VM), from sources/market/instance_types.csv.
SKUS = instance_types(PROVIDER_ID)
GPU_MODELS = {sku: gpu for sku, (gpu, _) in SKUS.items()}


def price_filter(region: str, skus: tuple[str, ...]) -> str:
    wanted = " or ".join(f"armSkuName eq '{sku}'" for sku in skus)
    return (f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and "
            f"priceType eq 'Consumption' and ({wanted})")


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe(f"/api/retail/prices?api-version={API_VERSION}&currencyCode=USD"
              "&$filter=armRegionName eq 'francecentral' and armSkuName eq "
              "'Standard_NC40ads_H100_v5'")


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """Every page of each region."""
    return ctx.each_zone(fetch_prices, session, source=SOURCE, base_url=BASE_URL,
                         zones=DEFAULT_REGIONS)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    return single_table(GPU_OFFERS, parse_prices, raw, ctx, notes, regions=ctx.regions,
                        fx=ctx.fx_rates())


def fetch_prices(session: requests.Session, region: str, *, base_url: str = BASE_URL,
                 skus: tuple[str, ...] = tuple(SKUS), policy: FetchPolicy = DEFAULT_POLICY
                 ) -> Iterator[Fetched]:
    """Every page of retail prices for the GPU SKUs in `region`."""
    url = f"{base_url}/api/retail/prices"
    params: dict[str, str] | None = {"api-version": API_VERSION, "currencyCode": "USD",
                                     "$filter": price_filter(region, skus)}
    host = urlsplit(base_url).netloc
    for _ in range(MAX_PAGES):
        page = http.fetch(session, url, source=SOURCE, params=params, policy=policy)
        yield page
        following = load_json_object(page.data, source=SOURCE, url=page.url,
                                     required=("Items",)).get("NextPageLink")
        if not following:
            return
        if urlsplit(following).netloc != host:
            raise ParseError(SOURCE, page.url, "NextPageLink",
                             f"points to another host ({urlsplit(following).netloc}); not "
                             "followed")
        url, params = following, None
    raise ParseError(SOURCE, url, "NextPageLink", f"still more pages after {MAX_PAGES}")


def parse_prices(data: bytes, *, url: str, vintage: str, fetched_on: date,
                 regions: pl.DataFrame, fx: pl.DataFrame,
                 notes: list[str] | None = None) -> pl.DataFrame:
    """One page of retail prices -> GPU_OFFERS rows (Linux, pay-as-you-go, EUR at ECB)."""
    body = load_json_object(data, source=SOURCE, url=url, required=("Items",))
    items = body["Items"]
    if not isinstance(items, list):
        raise ParseError(SOURCE, url, "Items", "expected a list")
    needed = ("armSkuName", "armRegionName", "retailPrice", "currencyCode", "unitOfMeasure",
              "productName", "skuName", "type", "effectiveStartDate")
    for index, item in enumerate(items):
        missing = [k for k in needed if not isinstance(item, dict) or k not in item]
        if missing:
            raise ParseError(SOURCE, url, f"Items[{index}].{missing[0]}", "missing")
    schema = {k: pl.String() for k in needed if k != "retailPrice"} | {
        "retailPrice": pl.Float64()}
    try:
        frame = pl.DataFrame([{k: item[k] for k in needed} for item in items], schema=schema)
    except (TypeError, pl.exceptions.PolarsError) as error:
        raise ParseError(SOURCE, url, "Items", f"unexpected value type: {error}") from None
    consumption = frame.filter(pl.col("type") == "Consumption")
    windows = consumption["productName"].str.contains(r"(?i)\bwindows\b")
    discounted = consumption["skuName"].str.contains(r"(?i)\b(spot|low priority)\b")
    if notes is not None and (windows.sum() or discounted.sum()):
        notes.append(f"{url}: dropped {windows.sum()} Windows and "
                     f"{(discounted & ~windows).sum()} Spot/Low Priority meter(s)")
    linux = consumption.filter(~windows & ~discounted)
    wrong_unit = linux.filter(pl.col("unitOfMeasure") != "1 Hour")
    if wrong_unit.height:
        raise ParseError(SOURCE, url, "unitOfMeasure",
                         f"expected '1 Hour', got {wrong_unit['unitOfMeasure'][0]!r} "
                         f"for {wrong_unit['armSkuName'][0]}")
    meter = ["armSkuName", "armRegionName"]
    newest = linux.filter(pl.col("effectiveStartDate")
                          == pl.col("effectiveStartDate").max().over(meter))
    conflicts = newest.group_by([*meter, "effectiveStartDate"], maintain_order=True).agg(
        pl.col("retailPrice").n_unique().alias("prices"), pl.col("retailPrice")
    ).filter(pl.col("prices") > 1)
    if conflicts.height:
        sku, region, start, _, prices = conflicts.row(0)
        raise ParseError(SOURCE, url, f"Items[armSkuName={sku}, armRegionName={region}]",
                         f"{len(prices)} meters from {start} priced {sorted(prices)}: refused "
                         "rather than keep one")
    latest = newest.unique(meter, keep="first", maintain_order=True)
    if notes is not None and newest.height > latest.height:
        notes.append(f"{url}: {newest.height - latest.height} identical duplicate meter(s) "
                     "dropped")
    if notes is not None and linux.height > newest.height:
        notes.append(f"{url}: {linux.height - newest.height} older duplicate meter(s) "
                     "superseded by a later effectiveStartDate")
    raw = latest.select(
        pl.lit(PROVIDER_ID).alias("provider_id"),
        pl.col("armSkuName").alias("offer_id"),
        pl.col("armRegionName").alias("region"),
        *instance_columns(pl.col("armSkuName"), SKUS),
        pl.lit("on_demand").alias("pricing_model"),
        pl.col("retailPrice").alias("price_original_per_hour"),
        pl.col("currencyCode").alias("currency"),
        pl.lit(None, pl.String()).alias("note"),
        *cited(url, fetched_on, LICENCE),
    )
    return finish_offers(raw, source=SOURCE, url=url, vintage=vintage, regions=regions, fx=fx,
                         notes=notes)
