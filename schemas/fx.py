"""The one conversion of a price to EUR: at the ECB rate of its date, for the live parsers, the
bundled reader, a declared amount in another currency and the diff of a vintage alike."""

from __future__ import annotations

import polars as pl


def convert_to_eur(offers: pl.DataFrame, fx: pl.DataFrame) -> pl.DataFrame:
    """Add fx_date, fx_units_per_eur, price_eur_per_hour and price_eur_per_gpu_hour.

    EUR prices pass through with null FX fields; other currencies use the ECB rate of the
    latest TARGET day on or before `source_date` (units per EUR, so EUR = amount / rate)."""
    rates = fx.select(
        pl.col("currency").alias("_fx_currency"), pl.col("rate_date").alias("fx_date"),
        pl.col("units_per_eur").alias("fx_units_per_eur"),
    ).sort("fx_date")
    priced = offers.sort("source_date").join_asof(
        rates, left_on="source_date", right_on="fx_date", by_left="currency",
        by_right="_fx_currency", strategy="backward", check_sortedness=False,
    )
    is_eur = pl.col("currency") == "EUR"
    priced = priced.with_columns(
        pl.when(is_eur).then(None).otherwise(pl.col("fx_date")).alias("fx_date"),
        pl.when(is_eur).then(None).otherwise(pl.col("fx_units_per_eur")).alias(
            "fx_units_per_eur"),
    ).with_columns(
        pl.when(is_eur).then(pl.col("price_original_per_hour"))
        .otherwise(pl.col("price_original_per_hour") / pl.col("fx_units_per_eur"))
        .alias("price_eur_per_hour"),
    ).with_columns(
        (pl.col("price_eur_per_hour") / pl.col("gpu_count")).alias("price_eur_per_gpu_hour"),
    )
    return priced.sort("provider_id", "offer_id", "region", "pricing_model")
