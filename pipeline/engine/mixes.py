"""A proposal's mixes as scorecard rows: each mix's base size chosen at the point
(pipeline/engine/mix.py), its blended figures in the metric columns and its split (`mix`), so
the gates, Pareto ranks, Monte Carlo and recommendation take it as any candidate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from pipeline.engine import mix
from pipeline.engine.metrics import INPUTS
from schemas.proposal import MixCandidate, Proposal

#: the figures a mix blends (the per-token steps candidates are compared on)
BLENDED = ("cpm_eur_per_mtok", "energy_j_per_token", "facility_kwh_per_mtok",
           "electricity_eur_per_mtok", "carbon_gco2e_per_mtok", "carbon_market_gco2e_per_mtok",
           "embodied_gco2e_per_mtok")
#: a month's tokens per day of demand (the steps' 730 h)
DAYS_PER_MONTH = mix.HOURS_PER_MONTH / 24

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
                                                 "tokens_share": pl.Float64()}))})


def given(point: pl.DataFrame, cid: str) -> dict[str, Any]:
    """A candidate's inputs at their modes as `metrics.evaluate_arrays` takes them."""
    row = point.row(by_predicate=pl.col("id") == cid, named=True)
    out: dict[str, Any] = {k: (np.nan if row.get(k) is None else float(row[k]))
                           for k in INPUTS if k in row}
    out["cost_model"], out["capacity"] = row["cost_model"], row["capacity"]
    return out


def rows(table: pl.DataFrame, point: pl.DataFrame, proposal: Proposal
         ) -> tuple[pl.DataFrame, list[mix.Chosen]]:
    """One row per mix in `table`'s columns (and `mix`), after `table`'s candidates were
    gated: a part that is not eligible, or a policy no base size meets, is the mix's
    `gate_exclusion`."""
    assert proposal.workload is not None or not proposal.mixes  # checked by the parser
    profile = tuple(proposal.workload.hourly_profile) if proposal.workload else ()
    by_id = {r["id"]: r for r in table.iter_rows(named=True)}
    out, chosen = [], []
    for m in proposal.mixes:
        row, pick = _row(m, by_id, point, profile)
        out.append(row)
        chosen.append(pick)
    schema = {**table.schema, "mix": SPLIT}
    frame = pl.DataFrame(out, schema=schema) if out else pl.DataFrame(schema=schema)
    return frame.select([*table.columns, "mix"]), chosen


def _row(m: MixCandidate, by_id: Mapping[str, dict[str, Any]], point: pl.DataFrame,
         profile: Sequence[float]) -> tuple[dict[str, Any], mix.Chosen]:
    base, burst = by_id[m.mix.base], by_id[m.mix.burst]
    levels = (base["sovereignty_level"], burst["sovereignty_level"])
    base_in, burst_in = given(point, base["id"]), given(point, burst["id"])
    largest = mix.max_base_instances(base_in)
    rule = m.mix.min_share_at_level
    policy = None if rule is None else mix.Policy(rule.level, rule.share)
    sizes = mix.sizes_to_search(base_in, largest, profile,
                                None if policy is None else policy.share)
    searched = mix.evaluate(base_in, burst_in, sizes, profile, BLENDED)
    at = mix.best_size(searched, *levels, policy)
    best = None if at is None else int(sizes[at])
    # the figures at the chosen size (every size's when none is chosen: not read)
    figures = searched if at is None else searched.take(at)
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
        return {**row, "mix": _split(m, largest, None, figures, levels)}, pick
    served = [lv for lv, day in zip(levels, (figures.base_tokens_per_day[0, 0],
                                              figures.burst_tokens_per_day[0, 0]),
                                    strict=True) if day > 0]
    row["sovereignty_level"] = min(served)
    row["monthly_cost_eur"] = float(figures.monthly_cost_eur[0, 0])
    row.update({name: _finite(figures.blended[name][0, 0]) for name in BLENDED})
    row["notes"] = [_note(m, best, largest, figures, len(sizes))]
    return {**row, "mix": _split(m, largest, best, figures, levels)}, pick


def _boundary(base: Mapping[str, Any], burst: Mapping[str, Any]) -> str | None:
    """The J/token's boundary: the parts' when they share one, else both named."""
    a, b = base["energy_boundary"], burst["energy_boundary"]
    return a if a == b else f"base {a}, burst {b}"


def _finite(value: Any) -> float | None:
    v = float(value)
    return v if np.isfinite(v) else None


def _note(m: MixCandidate, best: int, largest: int, figures: mix.Figures, searched: int
          ) -> str:
    share = float(figures.base_share[0, 0])
    grid = ("" if searched > largest else
            f" (of {searched} sizes tried: where an hour's demand fills whole instances and an "
            f"even grid, not all {largest + 1})")
    return (f"mix: {best} of up to {largest} instances of {m.mix.base} serve {share:.0%} of "
            f"the tokens (each hour up to their capacity), {m.mix.burst} the rest: the base "
            f"size of the lowest month's cost{grid}" + (
                "" if m.mix.min_share_at_level is None else
                f" with at least {m.mix.min_share_at_level.share:.0%} of the tokens at "
                f"sovereignty level >= {m.mix.min_share_at_level.level}"))


def _split(m: MixCandidate, largest: int, best: int | None, figures: mix.Figures,
           levels: tuple[int, int]) -> dict[str, Any]:
    rule = m.mix.min_share_at_level
    split: dict[str, Any] = {
        "base": m.mix.base, "burst": m.mix.burst, "base_instances": best,
        "max_base_instances": largest,
        "policy_level": None if rule is None else rule.level,
        "policy_share": None if rule is None else rule.share,
        "policy_share_met": None, "parts": [], "tokens_share_by_level": []}
    if best is None:
        return split
    days = (figures.base_tokens_per_day[0, 0], figures.burst_tokens_per_day[0, 0])
    costs = (figures.base_cost_eur[0, 0], figures.burst_cost_eur[0, 0])
    total_day, total_cost = sum(days), sum(costs)
    parts = []
    for part, cid, level, day, cost, figs in zip(
            ("base", "burst"), (m.mix.base, m.mix.burst), levels, days, costs,
            (figures.base, figures.burst), strict=True):
        mtok = day * DAYS_PER_MONTH / 1e6
        carbon = figs["carbon_gco2e_per_mtok"][0, 0] if day > 0 else 0.0
        parts.append({
            "part": part, "id": cid, "sovereignty_level": level,
            "instances": best if part == "base" else None,
            "tokens_share": float(day / total_day), "mtok_per_month": float(mtok),
            "monthly_cost_eur": float(cost),
            "cost_share": _finite(cost / total_cost) if total_cost > 0 else None,
            "cpm_eur_per_mtok": _finite(figs["cpm_eur_per_mtok"][0, 0]) if day > 0 else None,
            "energy_j_per_token": (_finite(figs["energy_j_per_token"][0, 0]) if day > 0
                                   else None),
            "carbon_gco2e_per_mtok": _finite(carbon) if day > 0 else None,
            "carbon_kgco2e_per_month": _finite(carbon * mtok / 1000)})
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
            mix.share_at_level(figures, *levels, rule.level)[0, 0])
    return split
