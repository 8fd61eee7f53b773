"""The metric steps, checked against hand-worked figures (issues 2 and 5)."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine.metrics import FORMULAS, INPUTS, STEPS, evaluate, paired
from pipeline.engine.ranking.pareto import OBJECTIVES
from schemas import steps
from schemas.outputs import OUTPUTS


def _inputs(**columns: list) -> pl.DataFrame:
    base: dict[str, list] = {
        "cost_model": ["declared"], "tokens_per_s": [4000.0], "utilisation": [1.0],
        "price_eur_per_hour": [14.0], "busy_power_w": [5600.0], "pue": [1.3],
        "wholesale_eur_per_kwh": [0.09], "grid_gco2e_per_kwh": [342.0],
    }
    base.update(columns)
    height = max(len(v) for v in base.values())
    return pl.DataFrame({k: v * height if len(v) == 1 else v for k, v in base.items()})


def test_worked_example_of_issue_2() -> None:
    # 8 x H200 on-prem: 4,000 tokens/s, 5,600 W at the boards, PUE 1.3, 14 EUR/h,
    # 0.09 EUR/kWh, 342 gCO2e/kWh.
    row = evaluate(_inputs()).row(0, named=True)
    # CPM = 14 / (4000 x 3600 / 1e6) = 14 / 14.4 = 0.97222 EUR/Mtok
    assert row["cpm_eur_per_mtok"] == pytest.approx(0.972222, rel=1e-5)
    # energy = 5600 W / 4000 tokens/s = 1.4 J/token
    assert row["energy_j_per_token"] == pytest.approx(1.4)
    # facility = 1.4 x 1e6 / 3.6e6 x 1.3 = 0.388889 x 1.3 = 0.505556 kWh/Mtok
    assert row["facility_kwh_per_mtok"] == pytest.approx(0.505556, rel=1e-5)
    # electricity = 0.505556 x 0.09 = 0.0455 EUR/Mtok
    assert row["electricity_eur_per_mtok"] == pytest.approx(0.0455, rel=1e-4)
    # carbon = 0.505556 x 342 = 172.9 gCO2e/Mtok
    assert row["carbon_gco2e_per_mtok"] == pytest.approx(172.9, rel=1e-4)


TCO = {
    "cost_model": ["tco"], "capex_eur": [400_000.0], "amortisation_months": [36.0],
    "cost_of_capital_per_year": [0.05], "residual_eur": [0.0],
    "maintenance_share_per_year": [0.08], "staff_eur_per_year": [20_000.0],
    "busy_power_w": [6000.0], "idle_power_w": [2000.0], "pue": [1.3],
    "contract_eur_per_kwh": [0.12], "tokens_per_s": [4000.0],
}


def test_tco_worked_example_of_issue_5() -> None:
    out = evaluate(_inputs(**TCO, utilisation=[1.0, 0.5])).rows(named=True)
    full, half = out
    # annuity: 400,000 x r / (1 - (1 + r)^-36), r = 0.05/12 -> 11,988.36 EUR/month
    #          = 11,988.36 x 12 / 8,760 = 16.4224 EUR/h
    assert full["capital_eur_per_hour"] == pytest.approx(16.4224, abs=1e-4)
    # maintenance 8 % x 400,000 / 8,760 = 3.6530 EUR/h; staff 20,000 / 8,760 = 2.2831 EUR/h
    assert full["maintenance_eur_per_hour"] == pytest.approx(3.6530, abs=1e-4)
    assert full["staff_eur_per_hour"] == pytest.approx(2.2831, abs=1e-4)
    # u = 1: (22.3585 + 6 kW x 1.3 x 0.12 = 0.936) / 14.4 Mtok/h = 1.6177 EUR/Mtok
    assert full["cpm_eur_per_mtok"] == pytest.approx(1.6177, abs=1e-4)
    # u = 0.5: (22.3585 + (0.5 x 6 + 0.5 x 2) x 1.3 x 0.12 = 0.624) / 7.2 = 3.1920 EUR/Mtok
    assert half["cpm_eur_per_mtok"] == pytest.approx(3.1920, abs=1e-4)
    # energy at u = 0.5: average 4,000 W over 2,000 served tokens/s = 2 J/token
    assert half["energy_j_per_token"] == pytest.approx(2.0)


def test_residual_value_lowers_the_annuity() -> None:
    # 100,000 EUR residual after 36 months is worth 100,000 / 1.0041667^36 = 86,097 today:
    # financed 313,903 x r / (1 - (1 + r)^-36) = 9,408.0 EUR/month = 12.888 EUR/h
    row = evaluate(_inputs(**{**TCO, "residual_eur": [100_000.0]})).row(0, named=True)
    assert row["capital_eur_per_hour"] == pytest.approx(12.888, abs=1e-3)


def test_elastic_cpm_ignores_utilisation_provisioned_does_not() -> None:
    out = evaluate(_inputs(cost_model=["on_demand"] * 4,
                           capacity=["elastic", "elastic", "provisioned", "provisioned"],
                           utilisation=[1.0, 0.25, 1.0, 0.25])).rows(named=True)
    # elastic: only busy hours are billed -> 14 / 14.4 = 0.9722 at any utilisation
    assert out[0]["cpm_eur_per_mtok"] == pytest.approx(14 / 14.4)
    assert out[0]["cpm_eur_per_mtok"] == pytest.approx(out[1]["cpm_eur_per_mtok"])
    # provisioned (the default, at an on-demand price too): every hour billed -> at u = 0.25
    # the CPM is 4 x higher: 3.8889
    assert out[3]["cpm_eur_per_mtok"] == pytest.approx(4 * out[2]["cpm_eur_per_mtok"])


def test_wholesale_tariff_with_multiplier_and_grid_fee() -> None:
    # 0.09 x 1.5 + 0.04 = 0.175 EUR/kWh; electricity = 0.505556 x 0.175 = 0.088472 EUR/Mtok
    row = evaluate(_inputs(retail_multiplier=[1.5], grid_fee_eur_per_kwh=[0.04])).row(
        0, named=True)
    assert row["electricity_eur_per_kwh"] == pytest.approx(0.175)
    assert row["electricity_eur_per_mtok"] == pytest.approx(0.088472, rel=1e-5)


def test_embodied_spread_over_lifetime_tokens() -> None:
    # 8 x 164 + 5,700 = 7,012 kgCO2e over 4 years x 8,760 h x 14.4 Mtok/h = 504,576 Mtok
    # -> 7,012,000 g / 504,576 Mtok = 13.897 gCO2e/Mtok
    row = evaluate(_inputs(embodied_kgco2e=[7012.0], lifetime_years=[4.0])).row(0, named=True)
    assert row["embodied_gco2e_per_mtok"] == pytest.approx(13.897, abs=1e-3)


def test_missing_power_gives_null_energy_not_zero() -> None:
    row = evaluate(_inputs(busy_power_w=[None])).row(0, named=True)
    assert row["cpm_eur_per_mtok"] == pytest.approx(0.972222, rel=1e-5)
    for key in ("energy_j_per_token", "facility_kwh_per_mtok", "electricity_eur_per_mtok",
                "carbon_gco2e_per_mtok"):
        assert row[key] is None, key


positive = st.floats(min_value=1.0, max_value=1e5, allow_nan=False)


@settings(max_examples=50)
@given(tps=positive, more=st.floats(min_value=1.01, max_value=10), cost=positive)
def test_cpm_falls_as_throughput_rises(tps: float, more: float, cost: float) -> None:
    out = evaluate(_inputs(tokens_per_s=[tps, tps * more], price_eur_per_hour=[cost, cost]))
    slow, fast = out["cpm_eur_per_mtok"].to_list()
    assert fast < slow


@settings(max_examples=50)
@given(u=st.floats(min_value=0.05, max_value=0.95))
def test_tco_cpm_falls_as_utilisation_rises(u: float) -> None:
    out = evaluate(_inputs(**TCO, utilisation=[u, min(1.0, u + 0.05)]))
    low, high = out["cpm_eur_per_mtok"].to_list()
    assert high < low


@settings(max_examples=50)
@given(power=positive, tps=positive, pue=st.floats(min_value=1.0, max_value=3.0))
def test_units_round_trip(power: float, tps: float, pue: float) -> None:
    # facility kWh/Mtok back to J/token: x 3.6e6 J/kWh / 1e6 tokens / PUE.
    row = evaluate(_inputs(busy_power_w=[power], tokens_per_s=[tps], pue=[pue])).row(
        0, named=True)
    assert row["facility_kwh_per_mtok"] * 3.6e6 / 1e6 / pue == pytest.approx(
        row["energy_j_per_token"], rel=1e-9)


def test_every_input_and_step_is_a_declared_figure() -> None:
    # units and meanings live in schemas/outputs.py; the formulas read them from there
    assert INPUTS["tokens_per_s"][0] == "tokens/s"
    assert {s.name: s.unit for s in STEPS}["cpm_eur_per_mtok"] == "EUR/Mtok"
    for name, (unit, meaning) in INPUTS.items():
        assert (unit, meaning) == (OUTPUTS[name].unit, OUTPUTS[name].meaning)
    for step in STEPS:
        assert step.unit == OUTPUTS[step.name].unit


def test_every_declared_step_has_its_formula_and_every_formula_its_declaration() -> None:
    # schemas/steps.py declares each step (what the workbook reads); metrics.FORMULAS computes
    # it, paired by name in the declared order
    assert [s.name for s in STEPS] == [s.name for s in steps.STEPS]
    assert [(s.formula, s.models, s.excel) for s in STEPS] == [
        (s.formula, s.models, s.excel) for s in steps.STEPS]
    with pytest.raises(ValueError, match=r"a formula without a declaration: \['toy_step'\]"):
        paired(steps.STEPS, {**FORMULAS, "toy_step": lambda c: c("tokens_per_s")})
    with pytest.raises(ValueError, match=r"without a formula .*\['cpm_eur_per_mtok'\]"):
        paired(steps.STEPS, {k: v for k, v in FORMULAS.items() if k != "cpm_eur_per_mtok"})
    with pytest.raises(ValueError, match=r"declared twice .*\['pue_step'\]"):
        twice = steps.Step("pue_step", "pue")
        paired((*steps.STEPS, twice, twice), {**FORMULAS, "pue_step": lambda c: c("pue")})


def test_pareto_objectives_go_the_declared_better_way() -> None:
    for column, sign in OBJECTIVES.values():
        assert OUTPUTS[column].better == ("higher" if sign > 0 else "lower"), column


SEED = {"tokens_per_s": [2800.0], "busy_power_w": [5600.0], "pue": [1.4],
        "utilisation": [1.0]}


def test_seed_identity_without_demand_is_unchanged() -> None:
    # 8 x H100, 2,800 tokens/s, 5,600 W, PUE 1.4, every paid hour busy:
    # 2,800 x 3600 / 1e6 = 10.08 Mtok/h
    out = evaluate(_inputs(
        **{**SEED, "tokens_per_s": [2800.0, 2800.0, 4200.0]},
        cost_model=["on_demand", "declared", "on_demand"],
        capacity=["elastic", "provisioned", "elastic"],
        price_eur_per_hour=[21.84, 11.0, 21.84],
        grid_gco2e_per_kwh=[40.0, 363.0, 40.0])).rows(named=True)
    cloud, onprem, faster = out
    assert cloud["cpm_eur_per_mtok"] == pytest.approx(2.1667, abs=1e-4)  # 21.84 / 10.08
    assert onprem["cpm_eur_per_mtok"] == pytest.approx(1.0913, abs=1e-4)  # 11 / 10.08
    assert cloud["energy_j_per_token"] == pytest.approx(2.0)  # 5,600 W / 2,800 tokens/s
    # 2 J/token x 1e6 / 3.6e6 x 1.4 = 0.7778 kWh/Mtok; x 40 g/kWh (FR) = 31.11 g/Mtok,
    # x 363 g/kWh (DE) = 282.33 g/Mtok
    assert cloud["facility_kwh_per_mtok"] == pytest.approx(0.7778, abs=1e-4)
    assert cloud["carbon_gco2e_per_mtok"] == pytest.approx(31.11, abs=0.01)
    assert onprem["carbon_gco2e_per_mtok"] == pytest.approx(282.33, abs=0.01)
    # +50 % throughput, 4,200 tokens/s = 15.12 Mtok/h: 21.84 / 15.12 = 1.4444 EUR/Mtok,
    # 5,600 / 4,200 = 1.3333 J/token
    assert faster["cpm_eur_per_mtok"] == pytest.approx(1.4444, abs=1e-4)
    assert faster["energy_j_per_token"] == pytest.approx(1.3333, abs=1e-4)
    # no demand: no fleet, no monthly figure
    assert cloud["instances"] is None and cloud["monthly_cost_eur"] is None


def test_cpm_at_demand_is_monthly_cost_over_monthly_tokens() -> None:
    # 500 Mtok/day, peak x2, headroom 0.25, 2,800 tokens/s per instance:
    # mean 500e6 / 86,400 = 5,787.04 tokens/s, peak 11,574.07; usable 2,800 x 0.75 = 2,100
    # -> ceil(5.5115) = 6 instances; busy instance-hours per hour 5,787.04 / 2,800 = 2.066799
    # Monthly volume: 500 x 365 / 12 = 15,208.33 Mtok.
    demand = {"demand_tokens_per_day": [500e6], "peak_factor": [2.0], "headroom": [0.25],
              "utilisation": [0.6]}  # declared utilisation: not read under a demand
    onprem, cloud, elastic, floor = evaluate(_inputs(
        **{**SEED, **demand}, cost_model=["declared", "on_demand", "on_demand", "on_demand"],
        capacity=["provisioned", "provisioned", "elastic", "elastic"],
        min_instances=[None, None, None, 3.0],
        price_eur_per_hour=[11.0, 21.84, 21.84, 21.84])).rows(named=True)
    mtok_per_month = 500 * 365 / 12
    for row in (onprem, cloud, elastic, floor):
        assert row["instances"] == 6
        assert row["cpm_eur_per_mtok"] == pytest.approx(row["monthly_cost_eur"]
                                                        / mtok_per_month, rel=1e-12)
    # on-prem: 6 x 11 EUR/h x 730 h = 48,180 EUR/month = 3.1680 EUR/Mtok, at utilisation
    # 2.066799 / 6 = 0.34447 (not the declared 0.6)
    assert onprem["billed_utilisation"] == pytest.approx(0.34447, abs=1e-5)
    assert onprem["monthly_cost_eur"] == pytest.approx(48_180.0)
    assert onprem["cpm_eur_per_mtok"] == pytest.approx(3.1680, abs=1e-4)
    # provisioned cloud: 6 x 21.84 x 730 = 95,659.20 EUR/month = 6.2899 EUR/Mtok
    assert cloud["monthly_cost_eur"] == pytest.approx(95_659.20)
    # elastic: 2.066799 x 730 = 1,508.76 busy instance-hours x 21.84 = 32,951.4 EUR/month,
    # = 21.84 / 10.08 = 2.1667 EUR/Mtok, the seed's figure
    assert elastic["monthly_cost_eur"] == pytest.approx(32_951.4, abs=0.1)
    assert elastic["cpm_eur_per_mtok"] == pytest.approx(2.1667, abs=1e-4)
    # cheaper exactly by the idle instance-hours it does not pay:
    # 21.84 x (6 - 2.066799) x 730 = 62,707.8 EUR
    assert cloud["monthly_cost_eur"] - elastic["monthly_cost_eur"] == pytest.approx(
        21.84 * (6 - 500e6 / 86_400 / 2800) * 730)
    assert cloud["monthly_cost_eur"] - elastic["monthly_cost_eur"] == pytest.approx(
        62_707.8, abs=0.1)
    # an elastic floor of 3 instances: max(2.0668, 3) x 21.84 x 730 = 47,829.6 EUR/month
    assert floor["billed_instances"] == 3.0
    assert floor["monthly_cost_eur"] == pytest.approx(47_829.6)


def test_zero_goodput_gives_null_never_infinity() -> None:
    row = evaluate(_inputs(tokens_per_s=[0.0], demand_tokens_per_day=[1e6])).row(0, named=True)
    # 14 EUR/h over 0 tokens would be infinite: every figure that divides by it is null
    for name in ("instances", "busy_instances", "cpm_eur_per_mtok", "energy_j_per_token",
                 "carbon_gco2e_per_mtok", "monthly_cost_eur"):
        assert row[name] is None, name


def test_no_idle_figure_counts_idle_hours_at_busy_power() -> None:
    # u = 0.5, 5,600 W busy, idle unknown: 0.5 x 5,600 + 0.5 x 5,600 = 5,600 W over
    # 0.5 x 4,000 = 2,000 served tokens/s = 2.8 J/token (an upper bound, never a gap)
    row = evaluate(_inputs(utilisation=[0.5])).row(0, named=True)
    assert row["average_power_w"] == pytest.approx(5600.0)
    assert row["energy_j_per_token"] == pytest.approx(2.8)
