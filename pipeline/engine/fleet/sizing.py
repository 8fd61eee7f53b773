"""Demand sizing and on-prem versus cloud break-even, read off `metrics.evaluate`.

Sizing is not computed here: the metric steps size each candidate's fleet for the declared
demand (`instances`, `billed_instances`, `billed_utilisation`, `monthly_cost_eur`), so the
scorecard's CPM and the sizing table are one evaluation. This module lays that evaluation out
per candidate, with the year's energy and emissions, the two counts the fleet is sized on
(goodput and Little's law, `instances` being the larger) and which one binds, an on-prem
purchase's payback months and the electricity share of each TCO. Break-even:
the daily token volume from which an on-prem candidate's CPM stays at or below the cheapest
eligible cloud candidate's CPM at the demand: with a demand, its fleet sized at each volume as
the scorecard sizes it at the demand (peak, headroom, whole instances, spares: the same steps,
the demand scaled); without one, one instance swept over its utilisation.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from pipeline.engine.metrics import (
    G_PER_TONNE,
    KWH_PER_MWH,
    SECONDS_PER_DAY,
    TOKENS_PER_MTOK,
    evaluate,
)

CURVE_POINTS = 40
DAYS_PER_YEAR = 365.0


def tokens_per_day(utilisation: pl.Expr, tokens_per_s: pl.Expr) -> pl.Expr:
    """The daily volume served at a goodput busy a share `utilisation` of the day."""
    return utilisation * tokens_per_s * SECONDS_PER_DAY


def binding(goodput: pl.Expr, littles: pl.Expr) -> pl.Expr:
    """Which count `instances` takes: "Little's law" when it is the larger, else "goodput"
    (a tie, or no request shape); null without a goodput count."""
    return (pl.when(goodput.is_null()).then(None)
            .when(littles > goodput).then(pl.lit("Little's law")).otherwise(pl.lit("goodput")))


def sizing(evaluated: pl.DataFrame) -> pl.DataFrame:
    """`evaluated`: one row per candidate, the metric steps at the inputs' modes with the
    demand's inputs (the scorecard table, with `deployment` and `eligible`)."""
    mtok_per_year = pl.col("demand_tokens_per_day") * DAYS_PER_YEAR / TOKENS_PER_MTOK
    evaluated = _with_payback(evaluated)
    return evaluated.select(
        pl.col("id").alias("candidate"),
        pl.col("capacity"),
        pl.col("instances").cast(pl.Int64),
        binding(pl.col("goodput_instances"), pl.col("littles_law_instances")).alias("binding"),
        pl.col("billed_instances"),
        pl.col("billed_utilisation").alias("utilisation"),
        "monthly_cost_eur",
        # what the margins cost within it, and a TCO's total over its amortisation
        pl.col("headroom_instances").cast(pl.Int64),
        "monthly_headroom_cost_eur", "monthly_redundancy_cost_eur", "period_cost_eur",
        (pl.col("facility_kwh_per_mtok") * mtok_per_year / KWH_PER_MWH).alias("annual_mwh"),
        (pl.col("carbon_gco2e_per_mtok") * mtok_per_year / G_PER_TONNE).alias("annual_tco2e"),
        # the two counts `instances` is the larger of (Little's law: null without a request
        # shape or an operating concurrency) and the request-level figures behind the second
        pl.col("goodput_instances").cast(pl.Int64),
        pl.col("littles_law_instances").cast(pl.Int64),
        "request_duration_s", "replica_requests_per_s", "request_tpot_s",
        "request_duration_p95_s",
        # what an on-prem purchase repays, and how much of its TCO is electricity
        "payback_months", "payback_reason", "payback_versus",
        pl.when(pl.col("cost_model") == "tco")
        .then(pl.col("electricity_eur_per_hour") / pl.col("cost_eur_per_hour"))
        .alias("electricity_share_of_tco"),
    )


def _with_payback(evaluated: pl.DataFrame) -> pl.DataFrame:
    """`payback_months` of each on-prem TCO candidate: the months until its fleet's capex
    (capex per instance x billed instances) is repaid by the monthly saving against the
    cheapest eligible cloud candidate (by CPM, as the break-even) at the demand, the saving
    being that candidate's monthly cost less the on-prem fleet's running cost (its monthly
    cost less the capital repayment): simple payback, no discounting. Null with
    `payback_reason` when it never pays (no saving), there is no eligible cloud candidate
    with a monthly cost or no capex, or the candidate is not an on-prem purchase;
    `payback_versus` names the cloud candidate. A frame without `deployment` (the metric
    steps alone) has no payback."""
    if "deployment" not in evaluated.columns:
        evaluated = evaluated.with_columns(pl.lit(None, dtype=pl.String()).alias("deployment"))
    if "eligible" not in evaluated.columns:
        evaluated = evaluated.with_columns(pl.lit(True).alias("eligible"))
    cloud = (evaluated.filter((pl.col("deployment") == "cloud") & pl.col("eligible")
                              & pl.col("monthly_cost_eur").is_not_null())
             .sort("cpm_eur_per_mtok", "id", nulls_last=True))
    versus = cloud["id"][0] if cloud.height else None
    cloud_monthly = float(cloud["monthly_cost_eur"][0]) if cloud.height else None
    capex = pl.col("capex_eur") * pl.col("billed_instances")
    running = pl.col("monthly_cost_eur") - pl.col("monthly_capital_eur").fill_null(0.0)
    saving = pl.lit(cloud_monthly, dtype=pl.Float64()) - running
    purchase = (pl.col("deployment") == "on_prem") & (pl.col("cost_model") == "tco")
    reason = (
        pl.when(pl.col("deployment").is_null()).then(pl.lit("deployment not known"))
        .when(pl.col("deployment") != "on_prem").then(pl.lit("not an on-prem purchase"))
        .when(~purchase).then(pl.lit("an on-prem candidate priced by the hour: no capex to "
                                     "repay"))
        .when(pl.lit(versus is None)).then(pl.lit("no eligible cloud candidate with a monthly "
                                                 "cost to compare"))
        .when(capex.is_null() | running.is_null()).then(pl.lit("no capex or running cost"))
        .when(saving <= 0).then(pl.format(
            "never pays: running the fleet costs {} EUR/month, the cheapest eligible cloud "
            "candidate {} costs {} EUR/month at the demand",
            running.round(2), pl.lit(versus, dtype=pl.String()),
            pl.lit(cloud_monthly, dtype=pl.Float64()).round(2)))
        .otherwise(None))
    return evaluated.with_columns(
        pl.when(reason.is_null()).then(capex / saving).otherwise(None)
        .cast(pl.Float64()).alias("payback_months"),
        reason.alias("payback_reason"),
        pl.when(purchase).then(pl.lit(versus, dtype=pl.String())).otherwise(None)
        .alias("payback_versus"),
    )


#: with a demand, the volumes as multiples of it: 10^(k/130) for k = -260 .. 130, from a
#: hundredth to ten times the demand (the demand itself, k = 0, among them) in steps of 1.8 %;
#: the curve shows every tenth (CURVE_POINTS of them), the crossing is found on all
FINE_MULTIPLES = 10.0 ** (np.arange(-260, 131) / 130.0)
#: bisection steps locating each added instance between two of FINE_MULTIPLES (1.8 % / 2^20)
EDGE_STEPS = 20


def break_even(point: pl.DataFrame, on_prem: list[str], cloud_id: str | None,
               cloud_cpm: float | None) -> list[dict[str, object]]:
    """For each on-prem candidate: its CPM over a curve of daily volumes and the volume from
    which it stays at or below the cloud CPM (None when it does not by the curve's end).

    With a demand (`demand_tokens_per_day`), each volume is the demand scaled (its request
    rate with it) and the steps size the fleet for it as the scorecard does at the demand
    (basis "sized": the curve passes through the scorecard's CPM at the demand). Such a curve
    is a saw: an added instance raises the CPM, which then falls as the volume fills it. The
    crossing is found on a finer grid of volumes with, between two of them where the fleet
    grows, the volume just past the first instance added there (located by bisection on the
    steps' `instances`): a tooth's top is not missed between two volumes; where one step adds
    several instances (fleets past some 56 instances), the later, lower tops are, which moves
    the crossing by less than one step. Without a demand, one instance swept over its
    utilisation (basis "one_instance")."""
    if not on_prem or cloud_id is None or cloud_cpm is None:
        return []
    own = point.filter(pl.col("id").is_in(on_prem))
    if (own.height and "demand_tokens_per_day" in own.columns
            and own["demand_tokens_per_day"].is_not_null().all()):
        return _sized(own, on_prem, cloud_id, cloud_cpm)
    # one instance swept over its utilisation: the demand's sizing does not apply
    grid = np.geomspace(0.01, 1.0, CURVE_POINTS)
    rows = own.join(pl.DataFrame({"f": grid}), how="cross").with_columns(
        pl.col("f").alias("utilisation"),
        pl.lit(None, dtype=pl.Float64()).alias("demand_tokens_per_day"))
    out = evaluate(rows).with_columns(
        tokens_per_day(pl.col("f"), pl.col("tokens_per_s")).alias("tokens_per_day"))
    curves = out.sort("f").partition_by("id", as_dict=True, maintain_order=True)
    result = []
    for cid in on_prem:
        volume = curves[(cid,)]["tokens_per_day"].to_numpy()
        cpm = curves[(cid,)]["cpm_eur_per_mtok"].to_numpy()
        result.append(_entry(cid, cloud_id, cloud_cpm, _crossing(volume, cpm, cloud_cpm),
                             "one_instance", volume, cpm))
    return result


def _entry(cid: str, cloud_id: str, cloud_cpm: float, crossing: float | None, basis: str,
           volume: np.ndarray, cpm: np.ndarray) -> dict[str, object]:
    return {"candidate": cid, "versus": cloud_id, "versus_cpm_eur_per_mtok": cloud_cpm,
            "tokens_per_day": crossing, "basis": basis,
            "curve": [{"tokens_per_day": v, "cpm_eur_per_mtok": None if np.isnan(c) else c}
                      for v, c in zip(volume.tolist(), cpm.tolist(), strict=True)]}


def _scaled(own: pl.DataFrame, at: np.ndarray, multiple: np.ndarray,
            columns: tuple[str, ...] = ("instances", "cpm_eur_per_mtok")) -> pl.DataFrame:
    """The steps `columns` at the rows `at` of `own`, each with its demand (and request rate)
    times `multiple` (`demand_tokens_per_day` beside them); only the steps they need run."""
    rows = own[at.tolist()].with_columns(pl.Series("f", multiple, dtype=pl.Float64()))
    rows = rows.with_columns(pl.col(c) * pl.col("f") for c in (
        "demand_tokens_per_day", "demand_requests_per_s") if c in own.columns)
    return evaluate(rows, list(columns)).with_columns(rows["demand_tokens_per_day"])


def _sized(own: pl.DataFrame, on_prem: list[str], cloud_id: str, cloud_cpm: float
           ) -> list[dict[str, object]]:
    n, fine = own.height, len(FINE_MULTIPLES)
    at = np.repeat(np.arange(n), fine)
    grid = _scaled(own, at, np.tile(FINE_MULTIPLES, n))
    instances = grid["instances"].to_numpy().reshape(n, fine)
    cpm = grid["cpm_eur_per_mtok"].to_numpy().reshape(n, fine)
    # between two fine volumes where the fleet grows: bisect to the volume just past the
    # instance added (the tooth's top), the multiples of each pair narrowed together; only
    # past each curve's last fine volume above the cloud's CPM (a top before it cannot be the
    # last above) and on a curve that ends at or below it (else there is no crossing)
    above = cpm > cloud_cpm
    last_above = np.where(above.any(axis=1), fine - 1 - np.argmax(above[:, ::-1], axis=1), -1)
    ends_below = ~np.isnan(cpm).any(axis=1) & (cpm[:, -1] <= cloud_cpm)
    grows = (np.diff(instances, axis=1) > 0) & ends_below[:, None] & (
        np.arange(fine - 1)[None, :] >= last_above[:, None])
    rows, cols = np.nonzero(grows)
    low, high = FINE_MULTIPLES[cols], FINE_MULTIPLES[cols + 1]
    for _ in range(EDGE_STEPS if len(rows) else 0):
        mid = np.sqrt(low * high)
        grown = (_scaled(own, rows, mid, ("instances",))["instances"].to_numpy()
                 > instances[rows, cols])
        high, low = np.where(grown, mid, high), np.where(grown, low, mid)
    tops = _scaled(own, rows, high) if len(rows) else None
    volume = grid["demand_tokens_per_day"].to_numpy().reshape(n, fine)
    row_of = {cid: i for i, cid in enumerate(own["id"].to_list())}
    # the curve: CURVE_POINTS of the fine volumes, evenly spaced (every tenth)
    shown = np.linspace(0, fine - 1, CURVE_POINTS).round().astype(int)
    result = []
    for cid in on_prem:
        i = row_of[cid]
        v, c = volume[i], cpm[i]
        if tops is not None:
            mine = rows == i
            v = np.concatenate([v, tops["demand_tokens_per_day"].to_numpy()[mine]])
            c = np.concatenate([c, tops["cpm_eur_per_mtok"].to_numpy()[mine]])
            order = np.argsort(v, kind="stable")
            v, c = v[order], c[order]
        result.append(_entry(cid, cloud_id, cloud_cpm, _crossing(v, c, cloud_cpm), "sized",
                             volume[i][shown], cpm[i][shown]))
    return result


def _crossing(volume: np.ndarray, cpm: np.ndarray, target: float) -> float | None:
    """The volume from which the CPM curve stays at or below `target`: after its last point
    above it, where the segment to the next point meets it (linear between points); None when
    the curve ends above it or lacks a point. A sized fleet's curve is a saw (an instance
    added raises the CPM), so the last crossing, not the first."""
    if len(cpm) == 0 or np.isnan(cpm).any() or cpm[-1] > target:
        return None
    above = np.flatnonzero(cpm > target)
    if len(above) == 0:
        return float(volume[0])
    i = int(above[-1])
    v0, v1, c0, c1 = volume[i], volume[i + 1], cpm[i], cpm[i + 1]
    return float(v0 + (c0 - target) / (c0 - c1) * (v1 - v0))
