"""The plan over the horizon (pipeline/engine/plan.py): the worked example of issue 31 and the
residual-value identity."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.engine import plan
from pipeline.engine.plan import Path

# One own node: 4,000 tokens/s, capex 240,000 EUR over 36 months at 6 % a year, no residual,
# maintenance, staff or hosting; 5 kW busy and idle, PUE 1.25, a 0.10 EUR/kWh contract.
NODE = {"cost_model": "tco", "capacity": "provisioned", "tokens_per_s": 4000.0,
        "busy_power_w": 5000.0, "idle_power_w": 5000.0, "pue": 1.25,
        "contract_eur_per_kwh": 0.10, "grid_gco2e_per_kwh": 40.0, "capex_eur": 240_000.0,
        "amortisation_months": 36.0, "cost_of_capital_per_year": 0.06, "residual_eur": 0.0,
        "maintenance_share_per_year": 0.0, "staff_eur_per_year": 0.0,
        "demand_tokens_per_day": 200e6, "peak_factor": 1.0, "headroom": 0.0,
        "demand_growth_per_year": 0.5, "lead_time_months": 4.0}
# The fallback: an elastic cloud at 28.8 EUR/h for 4,000 tokens/s, 2.0 EUR/Mtok at any
# demand; 5 kW busy at PUE 1.25 and 40 g/kWh.
CLOUD = {"cost_model": "price", "capacity": "elastic", "tokens_per_s": 4000.0,
         "busy_power_w": 5000.0, "idle_power_w": 1000.0, "pue": 1.25,
         "grid_gco2e_per_kwh": 40.0, "price_eur_per_hour": 28.8,
         "demand_tokens_per_day": 200e6, "peak_factor": 1.0, "headroom": 0.0,
         "demand_growth_per_year": 0.5}
PATH = Path(months=36, rate_per_year=0.06, rate_source="test")


def _columns(given: dict[str, object]) -> dict[str, object]:
    return {k: (v if isinstance(v, str) else np.array([[v]])) for k, v in given.items()}


def test_the_worked_example_of_a_growing_demand_with_a_late_node() -> None:
    # Demand 200 Mtok/day growing 50 % a year, month m at 200 x 1.5^((m - 1) / 12): q =
    # 1.5^(1/12) = 1.0343661 a month. One node serves 4,000 x 86,400 = 345.6 Mtok/day (peak
    # factor 1, no headroom), so month 17 (200 x 1.5^(16/12) = 343.41) needs 1 node and month
    # 18 (355.22) 2; month 36 (652.57) still 2 (3 from 691.2).
    # Lead time 4 months: node 1, needed in month 1, is ordered at the start and serves from
    # month 5; node 2, needed in month 18, is ordered at the end of month 13 and serves from
    # month 18. Months 1-4 go to the cloud: 200 x 365 / 12 = 6,083.333 Mtok in month 1,
    # 6,083.333 x (q^4 - 1) / (q - 1) = 25,616.68 Mtok in months 1-4.
    # A node's month: annuity 240,000 x 0.005 / (1 - 1.005^-36) = 7,301.265 EUR + electricity
    # 5 kW x 1.25 x 0.10 x 730 h = 456.25 EUR = 7,757.515 EUR.
    # Discounted at 0.5 % a month (v = 1 / 1.005, payments at each month's end):
    #   cloud 2.0 x 6,083.333 x v x ((qv)^4 - 1) / (qv - 1), qv = 1.02922 -> 50,588.64 EUR
    #   one node, months 5..17: 7,757.515 x (v^5 - v^18) / (1 - v)       -> 95,480.55 EUR
    #   two nodes, months 18..36: 2 x 7,757.515 x (v^18 - v^37) / (1 - v) -> 257,741.64 EUR
    #   total 403,810.83 EUR over tokens 6,083.333 x v x (1 - (qv)^36) / (1 - qv) = 377,084.73
    #   discounted Mtok: horizon CPM 403,810.83 / 377,084.73 = 1.070876 EUR/Mtok.
    out = plan.horizon(_columns(NODE), _columns(CLOUD), PATH)
    assert out["cost_pv_eur"][0, 0] == pytest.approx(403_810.83, rel=1e-6)
    assert out["mtok_pv"][0, 0] == pytest.approx(377_084.73, rel=1e-6)
    assert out["cpm_eur_per_mtok"][0, 0] == pytest.approx(1.070876, rel=1e-5)
    assert out["fallback_mtok"][0, 0] == pytest.approx(25_616.68, rel=1e-6)
    assert out["unserved_mtok"][0, 0] == 0.0
    month = plan.months(_columns(NODE), PATH)
    serving = month["serving_instances"][0, 0]
    assert serving[:17].tolist() == [1.0] * 17 and serving[17:].tolist() == [2.0] * 19
    assert month["own_share"][0, 0, :4].tolist() == [0.0] * 4
    nodes = plan.purchases(serving, 4.0, 36)
    assert [(n["needed_month"], n["ordered_at_month"], n["serves_from_month"])
            for n in nodes] == [(1, 0.0, 4.0), (18, 13.0, 17.0)]
    # energy: the cloud's 1.25 J/token busy; the node 5 kW over the month's mean tokens/s
    assert out["energy_j_per_token"][0, 0] > 0


def test_without_a_fallback_the_gap_is_unserved_and_not_priced() -> None:
    # the same node alone: months 1-4's 25,616.68 Mtok unserved, the CPM over the tokens it
    # serves: 353,222.19 EUR / (377,084.73 - 6,083.333 x v x ((qv)^4 - 1) / (qv - 1) =
    # 25,294.32) = 353,222.19 / 351,790.41 = 1.004070 EUR/Mtok
    out = plan.horizon(_columns(NODE), None, PATH)
    assert out["unserved_mtok"][0, 0] == pytest.approx(25_616.68, rel=1e-6)
    assert out["cpm_eur_per_mtok"][0, 0] == pytest.approx(353_222.19 / 351_790.41, rel=1e-6)


@pytest.mark.parametrize("residual", [0.0, 25_000.0])
@pytest.mark.parametrize("served", [1.0, 19.0, 32.0, 40.0])
def test_buying_and_selling_at_book_value_is_the_annuities_inside_the_horizon(
        residual: float, served: float) -> None:
    # a node bought at its service (time s) for capex and sold at the horizon's end (s +
    # served) at its book value costs, discounted at the annuity's rate, what the annuities
    # of the months it served cost: capex - B v^served = A (1 - v^served) / r (a node past
    # its 36 months is replaced: 40 months are 36 of the first and 4 of the second)
    capex, n, rate = 240_000.0, 36.0, 0.06
    r = rate / 12
    v = 1 / (1 + r)
    annuity = (capex - residual * v ** n) * r / (1 - v ** n)
    book = plan.book_value_eur(capex, residual, n, rate, served)
    if served <= n:
        assert capex - book * v ** served == pytest.approx(annuity * (1 - v ** served) / r,
                                                           rel=1e-12)
    else:  # the first node sold at its residual after 36 months, the second at book value
        first = capex - residual * v ** n
        second = (capex - book * v ** (served - n)) * v ** n
        assert first + second == pytest.approx(annuity * (1 - v ** served) / r, rel=1e-12)
    # node 1 of the worked example: 32 months served, 4 annuities of 7,301.265 left:
    # 7,301.265 x (1 - 1.005^-4) / 0.005 = 28,843.62 EUR
    assert plan.book_value_eur(capex, 0.0, n, rate, 32.0) == pytest.approx(28_843.62, rel=1e-6)
