"""A proposal's mixes as scorecard rows: each mix's base size chosen at the point
(pipeline/engine/fleet/mix.py), its blended figures in the metric columns and its split (`mix`), so
the gates, Pareto ranks, Monte Carlo and recommendation take it as any candidate. Under a plan
the base size is the horizon's (`mix.over_horizon`), the plan's figures (plan.REPLACED) and the
split are the horizon's, the other figures the [demand] month's at that size, as for every
candidate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from pipeline.engine.fleet import mix, plan
from pipeline.engine.metrics import DAYS_PER_MONTH, INPUTS, SECONDS_PER_DAY, TOKENS_PER_MTOK
from schemas.proposal import MixCandidate, Proposal

#: the figures a mix blends (the per-token steps candidates are compared on)
BLENDED = ("cpm_eur_per_mtok", "energy_j_per_token", "facility_kwh_per_mtok",
           "electricity_eur_per_mtok", "carbon_gco2e_per_mtok", "carbon_market_gco2e_per_mtok",
           "embodied_gco2e_per_mtok", "facility_wh_per_request", "carbon_gco2e_per_request",
           "carbon_market_gco2e_per_request")

#: the `mix` column: a mix's split (null for any other candidate)
PART = pl.Struct({
    "part": pl.String(), "id": pl.String(), "sovereignty_level": pl.Int64(),
    "instances": pl.Int64(), "tokens_share": pl.Float64(), "mtok_per_month": pl.Float64(),
    "monthly_cost_eur": pl.Float64(), "cost_share": pl.Float64(),
    "cpm_eur_per_mtok": pl.Float64(), "energy_j_per_token": pl.Float64(),
    "carbon_gco2e_per_mtok": pl.Float64(), "carbon_kgco2e_per_month": pl.Float64(),
    "carbon_share": pl.Float64()})
SPLIT = pl.Struct({
    "base": pl.String(), "burst": pl.String(), "base_instances": pl.Int64(),
    "max_base_instances": pl.Int64(), "policy_level": pl.Int64(),
    "policy_share": pl.Float64(), "policy_share_met": pl.Float64(),
    "parts": pl.List(PART),
    "tokens_share_by_level": pl.List(pl.Struct({"level": pl.Int64(),
                                                 "tokens_share": pl.Float64()})),
    "split_over": pl.String()})
#: `split_over`: the [demand] month's split, or (under a plan) the horizon's
MONTH, HORIZON = "month", "horizon"


def given(point: pl.DataFrame, cid: str) -> dict[str, Any]:
    """A candidate's inputs at their modes as `metrics.evaluate_arrays` takes them."""
    row = point.row(by_predicate=pl.col("id") == cid, named=True)
    out: dict[str, Any] = {k: (np.nan if row.get(k) is None else float(row[k]))
                           for k in (*INPUTS, *plan.PLAN_INPUTS) if k in row}
    out["cost_model"], out["capacity"] = row["cost_model"], row["capacity"]
    return out


def rows(table: pl.DataFrame, point: pl.DataFrame, proposal: Proposal,
         path: plan.Path | None = None) -> tuple[pl.DataFrame, list[mix.Chosen]]:
    """One row per mix in `table`'s columns (and `mix`), after `table`'s candidates were
    gated: a part that is not eligible, or a policy no base size meets, is the mix's
    `gate_exclusion`. Under a plan (`path`) its base size and figures are the horizon's."""
    assert proposal.workload is not None or not proposal.mixes  # checked by the parser
    profile = tuple(proposal.workload.hourly_profile) if proposal.workload else ()
    by_id = {r["id"]: r for r in table.iter_rows(named=True)}
    out, chosen = [], []
    for m in proposal.mixes:
        row, pick = _row(m, by_id, point, profile, path)
        out.append(row)
        chosen.append(pick)
    schema = {**table.schema, "mix": SPLIT}
    frame = pl.DataFrame(out, schema=schema) if out else pl.DataFrame(schema=schema)
    return frame.select([*table.columns, "mix"]), chosen


def _row(m: MixCandidate, by_id: Mapping[str, dict[str, Any]], point: pl.DataFrame,
         profile: Sequence[float], path: plan.Path | None
         ) -> tuple[dict[str, Any], mix.Chosen]:
    base, burst = by_id[m.mix.base], by_id[m.mix.burst]
    levels = (base["sovereignty_level"], burst["sovereignty_level"])
    base_in, burst_in = given(point, base["id"]), given(point, burst["id"])
    largest = (mix.max_base_instances(base_in) if path is None
               else mix.max_base_over(base_in, path))
    rule = m.mix.min_share_at_level
    policy = None if rule is None else mix.Policy(rule.level, rule.share)
    sizes = mix.sizes_to_search(base_in, largest, profile,
                                None if policy is None else policy.share, path)
    figures = mix.evaluate(base_in, burst_in, sizes, profile, BLENDED)
    # under a plan the size is chosen, and the split stated, over the horizon
    over: mix.Figures | mix.Horizon = figures if path is None else mix.over_horizon(
        base_in, burst_in, sizes, profile, BLENDED, path)
    at = mix.best_size(over, *levels, policy)  # its row among `sizes`
    best = None if at is None else int(sizes[at])
    reasons = [f"its {part} {r['id']} is not eligible: {r['exclusion_reason']}"
               for part, r in (("base", base), ("burst", burst)) if not r["eligible"]]
    if best is None and policy is not None:
        reasons.append(f"no base size from 0 to {largest} instances serves "
                       f"{policy.share:.0%} of the tokens at sovereignty level >= "
                       f"{policy.level} (mix.min_share_at_level)")
    elif best is None:
        reasons.append("no base size has a computable month's cost")
    pick = mix.Chosen(m.id, (base["id"], base["cost_model"], base["capacity"]),
                      (burst["id"], burst["cost_model"], burst["capacity"]), best,
                      tuple(profile))
    row: dict[str, Any] = {
        "id": m.id, "label": m.label, "deployment": "mix",
        "provider": f"{base['provider']} + {burst['provider']}", "zone": base["zone"],
        "region": burst["region"], "gpu": f"{base['gpu']} + {burst['gpu']}",
        "model": base["model"], "precision": base["precision"], "engine": base["engine"],
        "cost_model": "mix", "capacity": None, "example_data": bool(
            base["example_data"] or burst["example_data"]),
        "energy_boundary": _boundary(base, burst),
        "notes": [], "evidence_configurations": [], "sovereignty_rubric": [], "gates": [],
        "evidence_checks": [],
        "gate_exclusion": "; ".join(reasons) or None,
        "sovereignty_level": min(levels), "sovereignty_reason": (
            f"mix: base {base['id']} at level {levels[0]}, burst {burst['id']} at level "
            f"{levels[1]}"),
    }
    if best is None:
        return {**row, "mix": _split(m, largest, None, None, over, levels)}, pick
    assert at is not None
    served = [lv for lv, p in zip(levels, _parts(over, at), strict=True) if p["mtok"] > 0]
    row["sovereignty_level"] = min(served)
    row["monthly_cost_eur"] = float(figures.monthly_cost_eur[at, 0])
    row.update({name: plan.finite_or_none(figures.blended[name][at, 0]) for name in BLENDED})
    row["notes"] = [_note(m, best, at, largest, over, len(sizes))]
    if path is not None:  # the plan's figures are the horizon's, the first month's CPM beside
        row["first_month_cpm_eur_per_mtok"] = row["cpm_eur_per_mtok"]
        horizon = over.blended
        row.update({name: plan.finite_or_none(horizon[name][at, 0]) for name in plan.REPLACED})
        row["notes"].append(
            f"plan over {path.months} months: the base is bought once and serves from its "
            "lead time (the burst serving everything before); CPM is the horizon's cost over "
            f"its tokens, both discounted at {path.rate_per_year:.2%} a year "
            f"({path.rate_source}); energy and carbon per token weighted by each month's "
            "tokens; the first month's CPM is first_month_cpm_eur_per_mtok")
    return {**row, "mix": _split(m, largest, best, at, over, levels)}, pick


def _boundary(base: Mapping[str, Any], burst: Mapping[str, Any]) -> str | None:
    """The J/token's boundary: the parts' when they share one, else both named."""
    a, b = base["energy_boundary"], burst["energy_boundary"]
    return a if a == b else f"base {a}, burst {b}"


def _note(m: MixCandidate, best: int, at: int, largest: int,
          figures: mix.Figures | mix.Horizon, searched: int) -> str:
    """`best` instances, the row `at` of the `searched` sizes tried."""
    share = float(figures.base_share[at, 0])
    over = ("the horizon's tokens", "discounted cost over the horizon") if isinstance(
        figures, mix.Horizon) else ("the tokens", "month's cost")
    grid = ("" if searched > largest else
            f" (of {searched} sizes tried: where an hour's demand fills whole instances, an "
            f"even grid and the policy's least, not all {largest + 1})")
    return (f"mix: {best} of up to {largest} instances of {m.mix.base} serve {share:.0%} of "
            f"{over[0]} (each hour up to their capacity), {m.mix.burst} the rest: the base "
            f"size of the lowest {over[1]}{grid}" + (
                "" if m.mix.min_share_at_level is None else
                f" with at least {m.mix.min_share_at_level.share:.0%} of the tokens at "
                f"sovereignty level >= {m.mix.min_share_at_level.level}"))


def _parts(figures: mix.Figures | mix.Horizon, best: int) -> list[dict[str, float]]:
    """Each part's figures at the row `best` of the sizes tried: a month's tokens (mtok)
    and cost, the cost its cost share is of (`weight`), and its own CPM, J/token and
    gCO2e/Mtok (NaN: it serves none). Under a plan (a Horizon) the month's tokens and cost
    are the horizon's mean month, the cost share of the discounted cost, the per-token
    figures the horizon's."""
    out = []
    if isinstance(figures, mix.Horizon):
        for part in mix.PARTS:
            own = figures.part(part)
            out.append({"mtok": float(figures.mtok[part][best, 0]) / figures.months,
                        "cost": float(figures.cost_eur[part][best, 0]) / figures.months,
                        "weight": float(figures.cost_pv_eur[part][best, 0]),
                        **{k: float(own[k][best, 0]) for k in PER_TOKEN}})
        return out
    for day, bill, figs in ((figures.base_tokens_per_day, figures.base_cost_eur, figures.base),
                            (figures.burst_tokens_per_day, figures.burst_cost_eur,
                             figures.burst)):
        served = day[best, 0] > 0
        out.append({"mtok": float(day[best, 0]) * DAYS_PER_MONTH / TOKENS_PER_MTOK,
                    "cost": float(bill[best, 0]), "weight": float(bill[best, 0]),
                    **{k: float(figs[k][best, 0]) if served else np.nan for k in PER_TOKEN}})
    return out


#: each part's own per-token figures in the split
PER_TOKEN = ("cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok")


def _split(m: MixCandidate, largest: int, best: int | None, at: int | None,
           figures: mix.Figures | mix.Horizon, levels: tuple[int, int]) -> dict[str, Any]:
    """The split at `best` instances, the row `at` of the sizes tried (None: none chosen)."""
    rule = m.mix.min_share_at_level
    split: dict[str, Any] = {
        "base": m.mix.base, "burst": m.mix.burst, "base_instances": best,
        "max_base_instances": largest,
        "policy_level": None if rule is None else rule.level,
        "policy_share": None if rule is None else rule.share,
        "policy_share_met": None, "parts": [], "tokens_share_by_level": [],
        "split_over": HORIZON if isinstance(figures, mix.Horizon) else MONTH}
    if best is None or at is None:
        return split
    figs = _parts(figures, at)
    total_mtok = sum(p["mtok"] for p in figs)
    total_weight = sum(p["weight"] for p in figs)
    parts: list[dict[str, Any]] = []
    for part, cid, level, f in zip(mix.PARTS, (m.mix.base, m.mix.burst), levels, figs,
                                   strict=True):
        served = f["mtok"] > 0
        carbon = f["carbon_gco2e_per_mtok"] if served else 0.0
        parts.append({
            "part": part, "id": cid, "sovereignty_level": level,
            "instances": best if part == "base" else None,
            "tokens_share": f["mtok"] / total_mtok, "mtok_per_month": f["mtok"],
            "monthly_cost_eur": f["cost"],
            "cost_share": (plan.finite_or_none(f["weight"] / total_weight) if total_weight > 0
                           else None),
            **{k: plan.finite_or_none(f[k]) if served else None for k in PER_TOKEN},
            "carbon_kgco2e_per_month": plan.finite_or_none(carbon * f["mtok"] / 1000)})
    carbons = [p["carbon_kgco2e_per_month"] for p in parts]
    carbon_total = None if None in carbons else sum(carbons)
    for p in parts:
        p["carbon_share"] = (None if carbon_total is None or carbon_total <= 0
                             else p["carbon_kgco2e_per_month"] / carbon_total)
    by_level: dict[int, float] = {}
    for p in parts:
        by_level[p["sovereignty_level"]] = by_level.get(p["sovereignty_level"], 0.0) + \
            p["tokens_share"]
    split["parts"] = parts
    split["tokens_share_by_level"] = [{"level": lv, "tokens_share": s}
                                      for lv, s in sorted(by_level.items(), reverse=True)]
    if rule is not None:
        split["policy_share_met"] = float(
            mix.share_at_level(figures, *levels, rule.level)[at, 0])
    return split


def schedule(m: mix.Chosen, point: pl.DataFrame, path: plan.Path,
             base_row: Mapping[str, Any]) -> dict[str, Any]:
    """A mix's purchase plan at the inputs' modes (as plan.schedule's): its base's
    `m.base_instances` nodes ordered at the horizon's start and serving from the base's lead
    time (plan.purchases of a fleet that never grows: one order), the burst serving the rest of each
    month (`mix.over_horizon` at that size): each month's base and burst cost, the share of
    the month's tokens the base serves, nothing unserved. `base_row` is the base's inputs
    and table row (its capex and amortisation give the nodes' book values)."""
    assert m.base_instances is not None  # a mix without a base size is not eligible
    base_in, burst_in = given(point, m.base[0]), given(point, m.burst[0])
    over = mix.over_horizon(base_in, burst_in, [float(m.base_instances)], m.profile,
                            BLENDED, path)
    n = m.base_instances
    lead = float(np.nan_to_num(base_in.get("lead_time_months", 0.0)))
    demand = np.asarray(path.demand(base_in.get("demand_tokens_per_day", np.nan),
                                    base_in.get("demand_growth_per_year", 0.0))).ravel()
    goodput = base_row.get("tokens_per_s")
    shares = path.served(lead)  # of each month, the base's
    series = []
    for i in range(path.months):
        served = float(shares[i])
        base_mtok = float(over.mtok_by_month["base"][0, 0, i])
        total = base_mtok + float(over.mtok_by_month["burst"][0, 0, i])
        series.append({
            "month": i + 1,
            "demand_tokens_per_day": plan.finite_or_none(demand[i]),
            "serving_instances": float(n) if served > 0 else 0.0,
            "own_share": plan.finite_or_none(base_mtok / total) if total > 0 else None,
            "own_cost_eur": plan.finite_or_none(over.cost_by_month["base"][0, 0, i]),
            "fallback_cost_eur": plan.finite_or_none(over.cost_by_month["burst"][0, 0, i]),
            "unserved_mtok": 0.0,
            "own_capacity_tokens_per_day": (
                None if goodput is None else float(n * served * goodput * SECONDS_PER_DAY)),
        })
    # the base serves from the month its lead time ends (plan.months' rule): its order
    serving = np.where(shares > 0, float(n), 0.0)
    orders = plan.node_book_values(plan.purchases(serving, lead, path.months), base_row)
    return {"candidate": m.id, "fallback": m.burst[0], "lead_time_months": lead,
            "purchases": orders, "months": series, "note": plan.late_note(lead, path.months),
            "cost_pv_eur": plan.finite_or_none(over.total(over.cost_pv_eur)[0, 0]),
            "mtok_pv": plan.finite_or_none(over.total(over.mtok_pv)[0, 0])}

