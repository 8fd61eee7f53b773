"""Demand sizing and on-prem versus cloud break-even, on top of `metrics.evaluate`.

Sizing: the instances a candidate needs for the demand's peak at its goodput, with headroom,
and what that fleet costs and emits at the utilisation it implies. Break-even: the daily token
volume at which one on-prem instance's CPM (which falls as utilisation rises, fixed costs
being spread over more tokens) meets the cheapest eligible cloud candidate's CPM.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from pipeline.engine.metrics import (
    DAYS_PER_MONTH,
    G_PER_TONNE,
    KWH_PER_MWH,
    MONTHS_PER_YEAR,
    SECONDS_PER_DAY,
    TOKENS_PER_MTOK,
    evaluate,
)
from pipeline.engine.proposal import Demand, Number, point

CURVE_POINTS = 40


# The identity between a daily volume and a goodput: tokens per day = utilisation x goodput x
# 86,400 s. Sizing reads it one way (a volume -> its mean rate -> the utilisation of a fleet),
# the break-even the other (a utilisation -> the volume it serves); both directions live here.


def mean_tokens_per_s(tokens_per_day: pl.Expr) -> pl.Expr:
    """A daily volume spread evenly over the day."""
    return tokens_per_day / SECONDS_PER_DAY


def tokens_per_day(utilisation: pl.Expr, tokens_per_s: pl.Expr) -> pl.Expr:
    """The daily volume served at a goodput busy a share `utilisation` of the day."""
    return utilisation * tokens_per_s * SECONDS_PER_DAY


def instances_needed(tokens_per_day: pl.Expr, peak_factor: pl.Expr, headroom: pl.Expr,
                     goodput: pl.Expr) -> pl.Expr:
    """ceil(peak tokens/s / (goodput x (1 - headroom)))."""
    peak = mean_tokens_per_s(tokens_per_day) * peak_factor
    return (peak / (goodput * (1.0 - headroom))).ceil().cast(pl.Int64)


def sizing(point: pl.DataFrame, demand: Demand) -> pl.DataFrame:
    """`point`: one row per candidate with its inputs at their modes (metrics.INPUTS)."""
    per_day = float(point_value(demand.tokens_per_day))
    sized = point.with_columns(
        instances_needed(pl.lit(per_day), pl.lit(point_value(demand.peak_factor)),
                         pl.lit(point_value(demand.headroom)), pl.col("tokens_per_s"))
        .alias("instances"),
    ).with_columns(
        (mean_tokens_per_s(pl.lit(per_day)) / (pl.col("instances") * pl.col("tokens_per_s")))
        .alias("utilisation"),
    )
    out = evaluate(sized)
    mtok_per_month = per_day * DAYS_PER_MONTH / TOKENS_PER_MTOK
    return out.select(
        pl.col("id").alias("candidate"),
        "instances",
        pl.col("utilisation"),
        (pl.col("cpm_eur_per_mtok") * mtok_per_month).alias("monthly_cost_eur"),
        (pl.col("facility_kwh_per_mtok") * mtok_per_month * MONTHS_PER_YEAR / KWH_PER_MWH)
        .alias("annual_mwh"),
        (pl.col("carbon_gco2e_per_mtok") * mtok_per_month * MONTHS_PER_YEAR / G_PER_TONNE)
        .alias("annual_tco2e"),
    )


def point_value(value: Number) -> float:
    result = point(value)
    assert result is not None
    return float(result)


def break_even(point: pl.DataFrame, on_prem: list[str], cloud_id: str | None,
               cloud_cpm: float | None) -> list[dict[str, object]]:
    """For each on-prem candidate: CPM over one instance's utilisation (a curve of daily
    volumes) and the volume where it meets the cloud CPM (None when it never does)."""
    if not on_prem or cloud_id is None or cloud_cpm is None:
        return []
    grid = np.geomspace(0.01, 1.0, CURVE_POINTS)
    rows = point.filter(pl.col("id").is_in(on_prem)).join(
        pl.DataFrame({"u": grid}), how="cross").with_columns(pl.col("u").alias("utilisation"))
    out = evaluate(rows).with_columns(
        tokens_per_day(pl.col("u"), pl.col("tokens_per_s")).alias("tokens_per_day"))
    result = []
    for cid in on_prem:
        curve = out.filter(pl.col("id") == cid).sort("u")
        volume = _crossing(curve["tokens_per_day"].to_numpy(),
                           curve["cpm_eur_per_mtok"].to_numpy(), cloud_cpm)
        result.append({
            "candidate": cid, "versus": cloud_id, "versus_cpm_eur_per_mtok": cloud_cpm,
            "tokens_per_day": volume,
            "curve": [{"tokens_per_day": v, "cpm_eur_per_mtok": c}
                      for v, c in zip(curve["tokens_per_day"], curve["cpm_eur_per_mtok"],
                                      strict=True)],
        })
    return result


def _crossing(volume: np.ndarray, cpm: np.ndarray, target: float) -> float | None:
    """First volume where the falling CPM curve reaches `target` (linear between points)."""
    if len(cpm) == 0 or np.isnan(cpm).any() or cpm[-1] > target:
        return None
    if cpm[0] <= target:
        return float(volume[0])
    i = int(np.argmax(cpm <= target))
    v0, v1, c0, c1 = volume[i - 1], volume[i], cpm[i - 1], cpm[i]
    return float(v0 + (c0 - target) / (c0 - c1) * (v1 - v0))
