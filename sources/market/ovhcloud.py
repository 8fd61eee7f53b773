"""OVHcloud Public Cloud GPU prices (EUR, ex VAT) from the public order catalog:
GET /1.0/order/catalog/public/cloud?ovhSubsidiary=FR (no key; ~8 MB).

Pitfalls handled: GPU flavours are `addons` with `blobs.commercial.brick == "gpu"` (AI Deploy
`ai-*` addons carry GPU blobs too but are priced per minute: excluded by the brick);
`pricings[0].price` is an integer in 1e-8 currency units (280000000 = 2.80 EUR/h) and is
cross-checked against `formattedPrice`; the billing mode comes from the planCode suffix
(`.consumption` = hourly on-demand, `.monthly.postpaid` = monthly plan, divided by 730 h and
stored as `reserved`), never from intervalUnit; Windows-licensed flavours (`win-*`, os family
windows) are skipped and reported; the book's currency and subsidiary are checked. The
catalog is per subsidiary, not per region: offers are placed in every region that
regions.csv lists for ovhcloud, with a note saying availability is not checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from typing import Any

import polars as pl
import requests

from schemas.market import GPU_OFFERS
from sources import http
from sources.decode import load_json_object
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.job import Context, Frames, Probe, Raw, Source, cited, single_table
from sources.offers import HOURS_PER_MONTH, finish_offers, gpu_ids, no_fx

SOURCE, BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY, ACCUMULATE = Source(
    "ovhcloud", "https://eu.api.ovh.com", provides=(GPU_OFFERS,),
    licence="OVHcloud public price catalog (provider terms); figures cited, not redistributed")

PROVIDER_ID = "ovhcloud"
SUBSIDIARY = "FR"
PRICE_SCALE = 1e8  # pricings[].price is in 1e-8 currency units
#: OVHcloud `blobs.technical.gpu.model` (+ memory GB) -> hardware id.
GPU_MODELS = {
    "H100 80": "H100-PCIe-80GB",
    "H200 141": "H200-SXM-141GB",
    "A100 80": "A100-SXM-80GB",
    "L40S 48": "L40S-48GB",
    "L4 24": "L4-24GB",
}
_SUFFIXES = {".consumption": "on_demand", ".monthly.postpaid": "reserved"}
_SHOWN = re.compile(r"([0-9]+(?:[.,][0-9]{1,2})?)")


#: What `scorecard ingest --check` asks: a cheap request answering 2xx when healthy.
PROBE = Probe(f"/1.0/order/catalog/public/cloud?ovhSubsidiary={SUBSIDIARY}")


def fetch(session: requests.Session, ctx: Context) -> Iterator[Fetched]:
    return ctx.fetch(fetch_catalog, session, source=SOURCE, base_url=BASE_URL)


def parse(raw: Raw, ctx: Context, notes: list[str]) -> Frames:
    return single_table(GPU_OFFERS, parse_catalog, raw, ctx, notes, regions=ctx.regions)


def fetch_catalog(session: requests.Session, *, subsidiary: str = SUBSIDIARY,
                  base_url: str = BASE_URL, policy: FetchPolicy = DEFAULT_POLICY
                  ) -> list[Fetched]:
    return [http.fetch(session, f"{base_url}/1.0/order/catalog/public/cloud",
                       source=SOURCE, params={"ovhSubsidiary": subsidiary}, policy=policy)]


def _gpu_rows(addon: dict[str, Any], url: str, notes: list[str] | None) -> dict[str, Any] | None:
    code = str(addon.get("planCode") or "")
    technical = (addon.get("blobs") or {}).get("technical") or {}
    gpu = technical.get("gpu") or {}
    family = str((technical.get("os") or {}).get("family") or "")
    if code.startswith("win-") or family.startswith("win"):
        if notes is not None:
            notes.append(f"{code}: Windows licence included; skipped (Linux prices only)")
        return None
    suffix = next((s for s in _SUFFIXES if code.endswith(s)), None)
    if suffix is None:
        if notes is not None:
            notes.append(f"{code}: unknown billing-mode suffix; skipped")
        return None
    pricings = addon.get("pricings")
    if not isinstance(pricings, list) or not pricings or not isinstance(pricings[0], dict):
        raise ParseError(SOURCE, url, f"addons[{code}].pricings", "missing")
    price = pricings[0].get("price")
    if not isinstance(price, int) or isinstance(price, bool) or price <= 0:
        raise ParseError(SOURCE, url, f"addons[{code}].pricings[0].price",
                         f"expected a positive integer of 1e-8 units, got {price!r}")
    amount = price / PRICE_SCALE
    shown = _SHOWN.search(str(pricings[0].get("formattedPrice") or ""))
    if shown is not None and abs(float(shown.group(1).replace(",", ".")) - amount) > 0.006:
        raise ParseError(SOURCE, url, f"addons[{code}].pricings[0]",
                         f"price {price} (= {amount:g}) disagrees with formattedPrice "
                         f"{pricings[0].get('formattedPrice')!r}: scale changed?")
    number = gpu.get("number")
    if not isinstance(number, int) or number < 1:
        raise ParseError(SOURCE, url, f"addons[{code}].blobs.technical.gpu.number",
                         f"expected a whole count >= 1, got {number!r}")
    memory = (gpu.get("memory") or {}).get("size")
    model = f"{gpu.get('model')} {memory}"
    monthly = suffix == ".monthly.postpaid"
    return {
        "offer_id": code[: -len(suffix)], "model": model, "gpu_count": number,
        "pricing_model": _SUFFIXES[suffix],
        "price_original_per_hour": amount / HOURS_PER_MONTH if monthly else amount,
        "note": (f"monthly plan {amount:.2f}/month divided by {HOURS_PER_MONTH:g} h; "
                 if monthly else "") + "catalog price, availability per region not checked",
    }


def parse_catalog(data: bytes, *, url: str, vintage: str, fetched_on: date,
                  regions: pl.DataFrame, notes: list[str] | None = None) -> pl.DataFrame:
    """The public cloud catalog -> GPU_OFFERS rows for every ovhcloud region in `regions`."""
    body = load_json_object(data, source=SOURCE, url=url, required=("locale", "addons"))
    locale = body["locale"] if isinstance(body["locale"], dict) else {}
    currency = locale.get("currencyCode")
    if not isinstance(currency, str) or not re.fullmatch(r"[A-Z]{3}", currency):
        raise ParseError(SOURCE, url, "locale.currencyCode", f"unreadable: {currency!r}")
    if not isinstance(body["addons"], list):
        raise ParseError(SOURCE, url, "addons", "expected a list")
    gpu_addons = [a for a in body["addons"] if isinstance(a, dict) and
                  ((a.get("blobs") or {}).get("commercial") or {}).get("brick") == "gpu"]
    if not gpu_addons:
        raise ParseError(SOURCE, url, "addons[].blobs.commercial.brick",
                         f"no GPU addons among {len(body['addons'])}: catalog reshaped?")
    rows = [row for a in sorted(gpu_addons, key=lambda a: str(a.get("planCode")))
            if (row := _gpu_rows(a, url, notes)) is not None]
    schema = {"offer_id": pl.String(), "model": pl.String(), "gpu_count": pl.Int64(),
              "pricing_model": pl.String(), "price_original_per_hour": pl.Float64(),
              "note": pl.String()}
    offers = pl.DataFrame(rows, schema=schema, orient="row")
    placed = offers.join(
        regions.filter(pl.col("provider_id") == PROVIDER_ID).select("region").unique(),
        how="cross")
    if placed.height == 0 and offers.height and notes is not None:
        notes.append("no ovhcloud region in regions.csv: offers cannot be placed")
    raw = placed.with_columns(
        pl.lit(PROVIDER_ID).alias("provider_id"),
        gpu_ids(pl.col("model"), GPU_MODELS).alias("gpu"),
        pl.lit(currency).alias("currency"),
        *cited(url, fetched_on, LICENCE),
    )
    return finish_offers(raw, source=SOURCE, url=url, vintage=vintage, regions=regions,
                         fx=no_fx(), notes=notes)
