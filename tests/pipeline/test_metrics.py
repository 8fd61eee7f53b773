"""The metric steps, checked against hand-worked figures (issues 2 and 5)."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine.metrics import INPUTS, STEPS, evaluate
from pipeline.engine.pareto import OBJECTIVES
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


def test_on_demand_cpm_ignores_utilisation_reserved_does_not() -> None:
    out = evaluate(_inputs(cost_model=["on_demand", "on_demand", "reserved", "reserved"],
                           utilisation=[1.0, 0.25, 1.0, 0.25])).rows(named=True)
    # on demand: only busy hours are billed -> 14 / 14.4 = 0.9722 at any utilisation
    assert out[0]["cpm_eur_per_mtok"] == pytest.approx(out[1]["cpm_eur_per_mtok"])
    # reserved: every hour billed -> at u = 0.25 the CPM is 4 x higher: 3.8889
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


def test_pareto_objectives_go_the_declared_better_way() -> None:
    for column, sign in OBJECTIVES.values():
        assert OUTPUTS[column].better == ("higher" if sign > 0 else "lower"), column
