"""AWS EC2 on-demand Linux prices (USD) for GPU instances in EU locations, from the JSON that
backs the public pricing page (no key, ~50 KB per location):
GET https://b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/
    ec2-ondemand-without-sec-sel/{location}/Linux/index.json
USD is converted to EUR at parse time with the ECB rate of the fetch date.

Pitfalls handled: the location is a display name ("EU (Paris)") mapped to a region code here;
`price` is a decimal string; only "GPU instance" families are offers (others are ignored);
GPU model and count come from an explicit instance-type table, and a GPU instance type missing
from it (g5/A10G, g4dn/T4, ...) is skipped and reported; not every family exists in every
location (p5 is not listed in Paris or Frankfurt, it is in Stockholm).
"""

from __future__ import annotations

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
from sources.offers import finish_offers, instance_columns, instance_types

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "aws", "https://b0.p.awsstatic.com", provides=(GPU_OFFERS,),
    licence="AWS public on-demand price list (USD); figures cited")

PROVIDER_ID = "aws"
PATH = ("/pricing/2.0/meteredUnitMaps/ec2/USD/current/ec2-ondemand-without-sec-sel/"
        "{}/Linux/index.json")
#: Pricing-page location name -> region code.
LOCATIONS = {
    "EU (Paris)": "eu-west-3", "EU (Frankfurt)": "eu-central-1",
    "EU (Stockholm)": "eu-north-1", "EU (Ireland)": "eu-west-1", "EU (Milan)": "eu-south-1",
    "EU (Spain)": "eu-south-2", "US East (N. Virginia)": "us-east-1",
}
DEFAULT_LOCATIONS = ("EU (Paris)", "EU (Frankfurt)", "EU (Stockholm)", "EU (Ireland)")
#: Instance type -> (hardware id, GPUs per instance), from sources/market/instance_types.csv.
INSTANCE_TYPES = instance_types(PROVIDER_ID)
GPU_MODELS = {name: gpu for name, (gpu, _) in INSTANCE_TYPES.items()}


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe(PATH.format("EU%20(Paris)"))


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    """The price map of each location."""
    return ctx.each_zone(fetch_prices, session, source=SOURCE, base_url=BASE_URL,
                         zones=DEFAULT_LOCATIONS)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    return single_table(GPU_OFFERS, parse_prices, raw, ctx, notes, regions=ctx.regions,
                        fx=ctx.fx_rates())


def fetch_prices(session: requests.Session, location: str, *, base_url: str = BASE_URL,
                 policy: FetchPolicy = DEFAULT_POLICY) -> list[Fetched]:
    if location not in LOCATIONS:
        raise ValueError(f"unknown AWS location {location!r}; known: {sorted(LOCATIONS)}")
    return [http.fetch(session, base_url + PATH.format(location.replace(" ", "%20")),
                       source=SOURCE, policy=policy)]


def parse_prices(data: bytes, *, url: str, vintage: str, fetched_on: date,
                 regions: pl.DataFrame, fx: pl.DataFrame,
                 notes: list[str] | None = None) -> pl.DataFrame:
    """One location's on-demand Linux price map -> GPU_OFFERS rows (EUR at ECB)."""
    body = load_json_object(data, source=SOURCE, url=url, required=("manifest", "regions"))
    currency = (body["manifest"] or {}).get("currencyCode")
    if currency != "USD":
        raise ParseError(SOURCE, url, "manifest.currencyCode", f"expected USD, got {currency!r}")
    if not isinstance(body["regions"], dict):
        raise ParseError(SOURCE, url, "regions", "expected an object keyed by location")
    rows = []
    for location, products in body["regions"].items():
        region = LOCATIONS.get(location)
        if region is None:
            raise ParseError(SOURCE, url, f"regions[{location!r}]", "unknown location name")
        for key, product in products.items():
            if not isinstance(product, dict) or "Instance Type" not in product:
                raise ParseError(SOURCE, url, f"regions[{location!r}][{key!r}]",
                                 "no 'Instance Type'")
            if product.get("Instance Family") != "GPU instance":
                continue
            if product.get("Operating System", "Linux") != "Linux":
                continue
            try:
                price = float(product["price"])
            except (KeyError, TypeError, ValueError):
                raise ParseError(SOURCE, url, f"regions[{location!r}][{key!r}].price",
                                 f"not a number: {product.get('price')!r}") from None
            rows.append({"offer_id": product["Instance Type"], "region": region,
                         "price_original_per_hour": price})
    schema = {"offer_id": pl.String(), "region": pl.String(),
              "price_original_per_hour": pl.Float64()}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    raw = frame.select(
        pl.lit(PROVIDER_ID).alias("provider_id"), "offer_id", "region",
        *instance_columns(pl.col("offer_id"), INSTANCE_TYPES),
        pl.lit("on_demand").alias("pricing_model"), "price_original_per_hour",
        pl.lit("USD").alias("currency"), pl.lit(None, pl.String()).alias("note"),
        *cited(url, fetched_on, LICENCE),
    )
    return finish_offers(raw, source=SOURCE, url=url, vintage=vintage, regions=regions, fx=fx,
                         notes=notes)
