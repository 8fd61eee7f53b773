"""What every GPU-price parser shares.

Provider rows (RAW_OFFER_COLUMNS: the provider's own GPU name in `model`, our hardware id or
null in `gpu`) become GPU_OFFERS rows with a bidding zone and EUR prices (`finish_offers`,
through the one conversion `schemas.fx.convert_to_eur`).

A region missing from the region map, or a GPU model missing from the provider's mapping, is
skipped and described in `notes` (which the ingest summary prints): never silently dropped,
never guessed.
"""

from __future__ import annotations

import csv
import io
from importlib import resources

import polars as pl

from schemas.fx import convert_to_eur
from schemas.market import GPU_OFFERS
from sources.errors import ParseError

#: Columns a provider parser hands over.
RAW_OFFER_COLUMNS = ("provider_id", "offer_id", "region", "model", "gpu", "gpu_count",
                     "pricing_model",
                     "price_original_per_hour", "currency", "note", "source_url",
                     "source_date", "licence")

#: Hours in the month that monthly prices are divided by (365 * 24 / 12).
HOURS_PER_MONTH = 730.0

#: The ECB rates `convert_to_eur` reads (units of `currency` per EUR on `rate_date`).
FX_COLUMNS = {"currency": pl.String(), "rate_date": pl.Date(), "units_per_eur": pl.Float64()}


def no_fx() -> pl.DataFrame:
    """An empty ECB rates frame (enough for providers that price in EUR)."""
    return pl.DataFrame(schema=FX_COLUMNS)


def gpu_ids(models: pl.Expr, mapping: dict[str, str]) -> pl.Expr:
    """Map provider GPU model (or SKU) names to hardware ids; unknown names become null."""
    return models.replace_strict(mapping, default=None, return_dtype=pl.String())


def instance_types(provider: str) -> dict[str, tuple[str, int]]:
    """The provider's instance types (or VM SKUs) -> (hardware id, GPUs per instance), as
    sources/market/instance_types.csv lists them; a type missing there is skipped and
    reported by finish_offers."""
    text = resources.files("sources.market").joinpath("instance_types.csv").read_text(
        encoding="utf-8")
    return {row["instance_type"]: (row["gpu"], int(row["gpus_per_instance"]))
            for row in csv.DictReader(io.StringIO(text)) if row["provider"] == provider}


def instance_columns(name: pl.Expr, types: dict[str, tuple[str, int]]) -> list[pl.Expr]:
    """model, gpu and gpu_count from an instance type (or SKU) `name` and the provider's
    table of name -> (hardware id, GPUs per instance); a name missing from it gets a null
    gpu (so finish_offers skips and reports it) and a count of 1."""
    counts = {key: count for key, (_, count) in types.items()}
    return [name.alias("model"),
            gpu_ids(name, {key: gpu for key, (gpu, _) in types.items()}).alias("gpu"),
            name.replace_strict(counts, default=1, return_dtype=pl.Int64()).alias("gpu_count")]


def skipped_note(rows: pl.DataFrame, what: str, column: str) -> str:
    values = sorted({str(v) for v in rows[column].to_list()})
    offers = sorted({str(v) for v in rows["offer_id"].to_list()})
    return (f"skipped {rows.height} offer(s) with {what} {', '.join(values)} "
            f"({', '.join(offers[:8])}{', ...' if len(offers) > 8 else ''})")


def finish_offers(raw: pl.DataFrame, *, source: str, url: str, vintage: str,
                  regions: pl.DataFrame, fx: pl.DataFrame,
                  notes: list[str] | None) -> pl.DataFrame:
    """Attach zones from `regions` (provider_id, region, zone), convert to EUR with the ECB
    rate of each row's source_date (`fx`: currency, rate_date, units_per_eur)."""
    raw = raw.select(RAW_OFFER_COLUMNS)
    unknown_gpu = raw.filter(pl.col("gpu").is_null())
    if unknown_gpu.height and notes is not None:
        notes.append(skipped_note(unknown_gpu, "unmapped GPU model", "model"))
    known = raw.filter(pl.col("gpu").is_not_null())
    zones = regions.select("provider_id", "region", "zone").unique(["provider_id", "region"])
    unknown_region = known.join(zones, on=["provider_id", "region"], how="anti")
    if unknown_region.height and notes is not None:
        notes.append(skipped_note(unknown_region, "a region missing from regions.csv",
                                  "region"))
    placed = known.join(zones, on=["provider_id", "region"], how="inner")
    foreign = placed.filter(pl.col("currency") != "EUR")
    if foreign.height:
        rated = foreign.join(fx.select("currency").unique(), on="currency", how="semi")
        if rated.height < foreign.height:
            missing = sorted(set(foreign["currency"]) - set(rated["currency"]))
            raise ParseError(source, url, "currency",
                             f"no ECB rate for {missing}: ingest the ecb source first")
    converted = convert_to_eur(placed, fx.select(list(FX_COLUMNS)))
    unrated = converted.filter(pl.col("price_eur_per_hour").is_null())
    if unrated.height:
        row = unrated.row(0, named=True)
        raise ParseError(source, url, f"offer {row['offer_id']!r}",
                         f"no ECB {row['currency']} rate on or before {row['source_date']}")
    return converted.with_columns(pl.lit(vintage).alias("vintage")).select(
        GPU_OFFERS.columns)
