"""The metric identities of DESIGN section 1, in one place, as polars expressions.

Throughput is the shared denominator. Every function here works on whole columns, so the same
code serves one row per candidate and one row per Monte Carlo draw. A null input gives a null
output; the caller records why.
"""

from __future__ import annotations

import polars as pl

SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MTOK = 1e6
J_PER_KWH = 3.6e6


def cpm_eur_per_mtok(cost_eur_per_hour: pl.Expr, tokens_per_s: pl.Expr) -> pl.Expr:
    """EUR per 1e6 tokens = EUR/h / (tokens/s x 3600 s/h / 1e6)."""
    return cost_eur_per_hour / (tokens_per_s * SECONDS_PER_HOUR / TOKENS_PER_MTOK)


def energy_j_per_token(power_w: pl.Expr, tokens_per_s: pl.Expr) -> pl.Expr:
    """J per token = W (J/s) / (tokens/s), at the power figure's own boundary."""
    return power_w / tokens_per_s


def facility_kwh_per_mtok(energy_j_per_token: pl.Expr, pue: pl.Expr) -> pl.Expr:
    """kWh per 1e6 tokens at the facility meter = J/token x 1e6 / 3.6e6 J/kWh x PUE."""
    return energy_j_per_token * TOKENS_PER_MTOK / J_PER_KWH * pue


def electricity_eur_per_mtok(facility_kwh_per_mtok: pl.Expr,
                             electricity_eur_per_kwh: pl.Expr) -> pl.Expr:
    return facility_kwh_per_mtok * electricity_eur_per_kwh


def carbon_gco2e_per_mtok(facility_kwh_per_mtok: pl.Expr,
                          grid_gco2e_per_kwh: pl.Expr) -> pl.Expr:
    return facility_kwh_per_mtok * grid_gco2e_per_kwh


def eur_per_kwh(price_eur_per_mwh: pl.Expr) -> pl.Expr:
    return price_eur_per_mwh / 1000.0


def add_metrics(inputs: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Inputs: tokens_per_s, cost_eur_per_hour, power_w, pue, electricity_eur_per_kwh,
    grid_gco2e_per_kwh. Returns them with every metric column added."""
    c = pl.col
    return (
        inputs.lazy()
        .with_columns(
            cpm_eur_per_mtok(c("cost_eur_per_hour"), c("tokens_per_s")).alias("cpm_eur_per_mtok"),
            energy_j_per_token(c("power_w"), c("tokens_per_s")).alias("energy_j_per_token"),
        )
        .with_columns(
            facility_kwh_per_mtok(c("energy_j_per_token"), c("pue")).alias(
                "facility_kwh_per_mtok"),
        )
        .with_columns(
            electricity_eur_per_mtok(c("facility_kwh_per_mtok"),
                                     c("electricity_eur_per_kwh")).alias(
                "electricity_eur_per_mtok"),
            carbon_gco2e_per_mtok(c("facility_kwh_per_mtok"), c("grid_gco2e_per_kwh")).alias(
                "carbon_gco2e_per_mtok"),
        )
        .collect()
    )
