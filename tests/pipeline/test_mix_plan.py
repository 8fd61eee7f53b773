"""A mix under a plan (issue 31 review: findings 2, 4, 5, 6, 11): its purchase plan, its
parts' eligibility, its fallback's exclusions and sovereignty, against figures by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_mix import API_BLOCK, DEMAND_TABLE, MIX_BLOCK, OWN_BLOCK, PROFILE, _json, _write
from test_plan import WORKED, run_plan
from typer.testing import CliRunner

from pipeline.cli import app

#: a flat 3-month plan at 1 % a month (12 % a year): v_m = 1.01^-m
FLAT = "[horizon]\nmonths = 3\ncost_of_capital = 0.12\ngrowth_per_year = 0\n"


def test_a_mix_recommended_under_a_plan_has_its_purchase_plan(tmp_path: Path) -> None:
    # test_mix.py's worked mix (2 own nodes of 11 EUR/h, an API at 6 EUR/Mtok) over 3 flat
    # months: every month the base costs 11 x 2 x 730 = 16,060 EUR and serves 5,256 Mtok
    # (2/3), the API 2,628 Mtok for 15,768 EUR: 31,828 EUR a month, 4.0370 EUR/Mtok, below
    # the own fleet's 6.111 and the API's 6.0: the mix is recommended. Its plan: 2 nodes
    # ordered at month 0 serving from 0 (no lead time), the burst the rest of each month.
    # Discounted: 31,828 x (1.01^-1 + 1.01^-2 + 1.01^-3) = 31,828 x 2.9409852 = 93,605.68 EUR
    # over 7,884 x 2.9409852 = 23,186.73 Mtok.
    doc = _json(tmp_path, _write(tmp_path, PROFILE, DEMAND_TABLE, FLAT, OWN_BLOCK, API_BLOCK,
                                 MIX_BLOCK))
    assert doc["recommendation"]["candidate"] == "hybrid"
    schedule = doc["plan"]["schedules"][0]
    assert (schedule["candidate"], schedule["fallback"]) == ("hybrid", "api")
    assert schedule["lead_time_months"] == 0.0
    assert schedule["cost_pv_eur"] == pytest.approx(93_605.68, abs=0.01)
    assert schedule["mtok_pv"] == pytest.approx(23_186.73, abs=0.01)
    assert schedule["cpm_eur_per_mtok"] == pytest.approx(4.0370, abs=1e-4)
    # the 2 base nodes, one order at the horizon's start, serving from it (lead time 0)
    assert [(o["count"], o["ordered_at_month"], o["serves_from_month"])
            for o in schedule["purchases"]] == [(2, 0.0, 0.0)]
    for month in schedule["months"]:
        assert month["serving_instances"] == 2.0
        assert month["own_share"] == pytest.approx(2 / 3)
        assert month["own_cost_eur"] == pytest.approx(16_060.0)
        assert month["fallback_cost_eur"] == pytest.approx(15_768.0)
        assert month["unserved_mtok"] == 0.0
        # the own nodes' goodput all day: 2 x 1,250 x 86,400
        assert month["own_capacity_tokens_per_day"] == pytest.approx(216e6)
    # then the cheapest own candidate's plan: the pure own fleet of 6 nodes
    assert doc["plan"]["schedules"][1]["candidate"] == "own"


def test_a_demand_by_month_whose_first_month_is_not_the_demand_is_refused(
        tmp_path: Path) -> None:
    # the sizing, the first month's CPM and the recommendation's month are at [demand]
    # (200 Mtok/day in test_plan.py's WORKED): a first month of 100 Mtok/day would have them
    # at a month that is not on the path, so the proposal is refused, naming the key
    text = WORKED.replace("\nmonths = 36\n", "\n").replace(
        "growth_per_year = 0.5", "demand_by_month = [100e6, 100e6, 400e6, 400e6, 400e6, 400e6]")
    out = tmp_path / "out"
    result = run_plan(tmp_path, text, "--out", str(out))
    assert result.exit_code == 1, result.output
    assert ("horizon.demand_by_month[0] = 1e+08 tokens/day differs from [demand] "
            "tokens_per_day = 2e+08") in result.output
    assert not out.exists()  # nothing written on a refusal


#: test_plan.py's WORKED with a [workload] profile and a mix of its own node and its cloud
HYBRID = WORKED.replace("[horizon]", "[workload]\nhourly_profile = [" + ", ".join(
    ["1"] * 16 + ["3"] * 6 + ["1"] * 2) + "]\n[horizon]") + (
    '[[candidates]]\nid = "hyb"\nlabel = "hybrid"\nmix = { base = "own", burst = "cloud" }\n')


def _found(tmp_path: Path, text: str) -> dict:
    result = run_plan(tmp_path, text, "--json")
    assert result.exit_code == 0, result.output
    return {c["id"]: c for c in json.loads(result.stdout)["candidates"]}


def test_a_mix_s_base_is_judged_without_the_plan_s_exclusions(tmp_path: Path) -> None:
    # the own node (lead time 4 months) without a fallback leaves the months before it serves
    # unserved: alone it cannot claim the demand. As a mix's base it can: the mix's burst
    # (the cloud) serves those months, so the mix is eligible
    found = _found(tmp_path, HYBRID.replace('fallback = "cloud"\n', ""))
    assert not found["own"]["eligible"]
    assert "its own nodes serve late and it declares no fallback" in \
        found["own"]["exclusion_reason"]
    assert found["hyb"]["eligible"] and found["hyb"]["exclusion_reason"] is None


def test_a_fallback_excluded_for_any_reason_keeps_the_candidate_out(tmp_path: Path) -> None:
    # policy.allow_estimates = false and the cloud's power estimated: the cloud is out, and
    # so is the own node it serves 25,616.68 / 420,412.09 = 6.1 % of the horizon's tokens
    # for (test_plan.py's worked example), as a mix whose burst is out is
    text = HYBRID.replace("ttft_ms = 1500", "ttft_ms = 1500\n[policy]\nallow_estimates = false"
                          ).replace(
        'power = { watts = 5000, idle_watts = 1000, boundary = "gpu_board", source = "TDP" }',
        "power = { estimate = { tdp_fraction = 0.75 } }")
    found = _found(tmp_path, text)
    estimated = ("uses estimated figures, which policy.allow_estimates = false keeps out of "
                 "the ranking")
    assert found["cloud"]["exclusion_reason"] == estimated
    assert found["own"]["exclusion_reason"] == (
        "under the plan its fallback cloud serves 6.1 % of the horizon's tokens and is not "
        f"eligible: {estimated}")
    assert found["hyb"]["exclusion_reason"] == f"its burst cloud is not eligible: {estimated}"


def test_a_candidate_whose_fallback_serves_tokens_is_at_the_lowest_serving_level(
        tmp_path: Path) -> None:
    # the own node (provider self: level 4) leaves 6.1 % of the horizon's tokens to its
    # fallback, the cloud (ovhcloud, an EU provider: level 2, as the cloud's own row says):
    # like the mix of the same two parts, it is at the lowest level that serves its tokens, 2
    found = _found(tmp_path, HYBRID)
    assert found["cloud"]["sovereignty_level"] == 2
    assert found["own"]["sovereignty_level"] == 2 == found["hyb"]["sovereignty_level"]
    assert found["own"]["sovereignty_reasons"][0].endswith(
        "under the plan its fallback cloud (sovereignty level 2) serves 6.1 % of the "
        "horizon's tokens: the lowest level that serves its tokens, as a mix's")
    # with no lead time its nodes serve from the start, the fallback serves nothing: level 4
    found = _found(tmp_path, HYBRID.replace("lead_time_months = 4", "lead_time_months = 0"))
    assert found["own"]["detail"]["horizon_fallback_share"] == 0.0
    assert found["own"]["sovereignty_level"] == 4


def test_the_reports_show_a_recommended_mix_s_purchase_plan(tmp_path: Path) -> None:
    # every report renders the mix's plan (it crashed before the JSON was built)
    path = _write(tmp_path, PROFILE, DEMAND_TABLE, FLAT, OWN_BLOCK, API_BLOCK, MIX_BLOCK)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "scorecard.html").read_text(encoding="utf-8")
    plan_section = page[page.index('id="plan"'):]
    assert "hybrid" in plan_section[:plan_section.index("</section>")]
    assert (out / "scorecard.xlsx").exists()
    # the first screen's capex / opex line names the mix's parts and their months' costs
    # (the JSON's), not "declared per hour": the base is own nodes, the burst an API
    data = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    chosen = next(c for c in data["candidates"]
                  if c["id"] == data["recommendation"]["candidate"])
    base, burst = chosen["mix"]["parts"]
    said = (f"not split for a mix: its base {base['id']} {base['monthly_cost_eur']:,.0f} EUR "
            f"+ its burst {burst['id']} {burst['monthly_cost_eur']:,.0f} EUR a month")
    recommendation = page[page.index('id="recommendation"'):]
    recommendation = recommendation[:recommendation.index("</section>")]
    assert said in recommendation
    assert "declared per hour" not in recommendation
