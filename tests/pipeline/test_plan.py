"""The plan over the horizon (pipeline/engine/fleet/plan.py): the worked example of issue 31 and the
residual-value identity."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from pipeline.cli import app
from pipeline.engine.fleet import plan

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
PATH = plan.Path(months=36, rate_per_year=0.06, rate_source="test")


def _columns(given: dict[str, object]) -> dict[str, object]:
    return {k: (v if isinstance(v, str) else np.array([[v]])) for k, v in given.items()}


def test_the_worked_example_of_a_growing_demand_with_a_late_node() -> None:
    # Demand 200 Mtok/day growing 50 % a year, month m at 200 x 1.5^((m - 1) / 12): q =
    # 1.5^(1/12) = 1.0343661 a month. One node serves 4,000 x 86,400 = 345.6 Mtok/day (peak
    # factor 1, no headroom), so month 17 (200 x 1.5^(16/12) = 343.41) needs 1 node and month
    # 18 (355.22) 2; month 36 (652.57) still 2 (3 from 691.2).
    # Lead time 4 months: node 1, needed from month 5 (the first its nodes serve; months 1-4's
    # need is the cloud's), is ordered at the start and serves from month 5; node 2, needed in
    # month 18, is ordered at the end of month 13 and serves from
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
    # no node in months 1-4 (its nodes serve none of them), one from month 5, two from 18
    assert serving.tolist() == [0.0] * 4 + [1.0] * 13 + [2.0] * 19
    assert month["own_share"][0, 0, :4].tolist() == [0.0] * 4
    nodes = plan.purchases(serving, 4.0, 36)
    assert [(n["needed_month"], n["ordered_at_month"], n["serves_from_month"], n["count"])
            for n in nodes] == [(5, 0.0, 4.0, 1), (18, 13.0, 17.0, 1)]
    # energy: the cloud's 1.25 J/token busy; the node 5 kW over the month's mean tokens/s
    assert out["energy_j_per_token"][0, 0] > 0


def test_a_single_number_growth_with_a_drawn_input_runs() -> None:
    # growth a single number (one column) and capex drawn (three draws, all 240,000 EUR so
    # each draw is the worked example's): each draw's horizon CPM 403,810.83 / 377,084.73 =
    # 1.070876 EUR/Mtok (before: the months' figures (1, 3, 36) forced into (1, 1, 36))
    own = {**_columns(NODE), "capex_eur": np.full((1, 3), 240_000.0)}
    out = plan.horizon(own, _columns(CLOUD), PATH)
    assert out["cpm_eur_per_mtok"].shape == (1, 3)
    assert out["cpm_eur_per_mtok"][0] == pytest.approx([1.070876] * 3, rel=1e-5)


def test_a_need_before_the_nodes_serve_buys_no_node() -> None:
    # 400 Mtok/day in months 1-4 (2 nodes of 345.6), 100 in months 5-6 (1 node), lead 4:
    # months 1-4 go to the cloud (12,166.67 Mtok, 24,333.33 EUR each at 2.0 EUR/Mtok), and
    # months 5-6 need one node (7,757.515 EUR a month), not the two of months 1-4 it never
    # served. With v = 1 / 1.005: a = v + .. + v^4 = 3.950496, b = v^5 + v^6 = 1.945889;
    # cost 24,333.33 a + 7,757.515 b = 111,223.99 EUR over 12,166.67 a + 3,041.667 b =
    # 53,983.11 Mtok: 2.060348 EUR/Mtok (two nodes billed: 2.339977)
    path = plan.Path(months=6, rate_per_year=0.06, rate_source="test",
                     by_month=(400e6,) * 4 + (100e6,) * 2)
    month = plan.months(_columns(NODE), path)
    assert month["serving_instances"][0, 0].tolist() == [0.0] * 4 + [1.0] * 2
    out = plan.horizon(_columns(NODE), _columns(CLOUD), path)
    assert out["cost_pv_eur"][0, 0] == pytest.approx(111_223.99, rel=1e-6)
    assert out["cpm_eur_per_mtok"][0, 0] == pytest.approx(2.060348, rel=1e-6)


def test_a_fallback_serving_nothing_lacking_a_figure_leaves_the_own_figure() -> None:
    # lead 0: the node serves every month (one node months 1-17, two 18-36: 55 node-months),
    # the fallback none, so the cloud's missing grid intensity and price change nothing.
    # A node-month at 5 kW busy and idle, PUE 1.25, 730 h: 4,562.5 kWh x 40 g = 182,500 g;
    # 55 x 182,500 = 10,037,500 g over the horizon's 420,412.09 Mtok = 23.8754 gCO2e/Mtok.
    # The cost: 7,757.515 x ((v - v^18) + 2 (v^18 - v^37)) / (1 - v) = 7,757.515 x 49.48340
    # = 383,868.22 EUR, v = 1 / 1.005 (before: both null, 0 x null in the months 1-36)
    own = _columns({**NODE, "lead_time_months": 0.0})
    cloud = {**_columns(CLOUD), "grid_gco2e_per_kwh": np.array([[np.nan]]),
             "price_eur_per_hour": np.array([[np.nan]])}
    out = plan.horizon(own, cloud, PATH)
    assert out["carbon_gco2e_per_mtok"][0, 0] == pytest.approx(23.8754, rel=1e-5)
    assert out["cost_pv_eur"][0, 0] == pytest.approx(383_868.22, rel=1e-6)


def test_without_a_fallback_the_gap_is_unserved_and_not_priced() -> None:
    # the same node alone: months 1-4's 25,616.68 Mtok unserved, the CPM over the tokens it
    # serves: 353,222.19 EUR / (377,084.73 - 6,083.333 x v x ((qv)^4 - 1) / (qv - 1) =
    # 25,294.32) = 353,222.19 / 351,790.41 = 1.004070 EUR/Mtok
    out = plan.horizon(_columns(NODE), None, PATH)
    assert out["unserved_mtok"][0, 0] == pytest.approx(25_616.68, rel=1e-6)
    assert out["cpm_eur_per_mtok"][0, 0] == pytest.approx(353_222.19 / 351_790.41, rel=1e-6)


@pytest.mark.parametrize("residual", [0.0, 25_000.0])
@pytest.mark.parametrize("served", [1.0, 19.0, 32.0, 36.0, 40.0, 72.0])
def test_buying_and_selling_at_book_value_is_the_annuities_inside_the_horizon(
        residual: float, served: float) -> None:
    # a node bought at its service (time s) for capex and sold at the horizon's end (s +
    # served) at its book value costs, discounted at the annuity's rate, what the annuities
    # of the months it served cost: capex - B v^served = A (1 - v^served) / r (a node past
    # its 36 months is replaced: 40 months are 36 of the first and 4 of the second; at 36
    # months exactly it is worth its residual: capex - residual v^36 = A (1 - v^36) / r is
    # the annuity's definition, where the full capex was written before)
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


WORKED = """
[proposal]
name = "plan"
[slo]
ttft_ms = 1500
[demand]
tokens_per_day = 200_000_000
peak_factor = 1
headroom = 0
[horizon]
months = 36
cost_of_capital = 0.06
growth_per_year = 0.5
[tco.node]
source = "quote"
capex = { gpus = 240_000 }
amortisation_months = 36
cost_of_capital = 0.06
electricity = { basis = "contract", eur_per_kwh = 0.10 }
lead_time_months = 4
[[candidates]]
id = "own"
label = "own node"
deployment = "on_prem"
provider = "self"
zone = "FR"
gpu = "H100-SXM-80GB"
gpu_count = 8
pue = 1.25
throughput = { tokens_per_s = 4000, source = "bench" }
power = { watts = 5000, idle_watts = 5000, boundary = "gpu_board", source = "meter" }
cost = { tco = "node" }
fallback = "cloud"
[[candidates]]
id = "cloud"
label = "cloud"
deployment = "cloud"
provider = "ovhcloud"
zone = "FR"
gpu = "H100-SXM-80GB"
gpu_count = 8
pue = 1.25
throughput = { tokens_per_s = 4000, source = "bench" }
power = { watts = 5000, idle_watts = 1000, boundary = "gpu_board", source = "TDP" }
cost = { eur_per_hour = 28.8, source = "quote" }
capacity = "elastic"
"""


def test_the_worked_example_through_a_proposal(tmp_path: Path) -> None:
    # the worked example above, written as a proposal: the same horizon CPM (1.070876), the
    # first month's own CPM (the node's 7,757.515 EUR over 6,083.333 Mtok = 1.27521), node 1
    # ordered at the start serving from month 5 with 4 annuities left (28,843.62 EUR), node
    # 2 needed in month 18; and the cloud's plan at 2.0 EUR/Mtok in every month
    doc = _run(tmp_path, WORKED)
    own = next(c for c in doc["candidates"] if c["id"] == "own")
    assert own["cpm_eur_per_mtok"] == pytest.approx(1.070876, rel=1e-5)
    assert own["detail"]["first_month_cpm_eur_per_mtok"] == pytest.approx(
        7_757.515 / 6_083.333, rel=1e-5)
    assert own["detail"]["horizon_fallback_share"] == pytest.approx(25_616.68 / 420_412.09,
                                                                    rel=1e-5)
    assert doc["recommendation"]["candidate"] == "own"
    plan_ = doc["plan"]
    assert plan_["cost_of_capital_per_year"] == 0.06
    schedule = plan_["schedules"][0]
    assert schedule["candidate"] == "own" and schedule["fallback"] == "cloud"
    assert schedule["cost_pv_eur"] == pytest.approx(403_810.83, rel=1e-6)
    nodes = schedule["purchases"]
    assert [(n["needed_month"], n["serves_from_month"]) for n in nodes] == [(5, 4.0),
                                                                             (18, 17.0)]
    assert nodes[0]["book_value_per_node_at_horizon_eur"] == pytest.approx(28_843.62, rel=1e-6)
    months = schedule["months"]
    assert months[0]["own_share"] == 0.0 and months[4]["own_share"] == 1.0
    assert months[0]["fallback_cost_eur"] == pytest.approx(2.0 * 6_083.333, rel=1e-6)
    # the node's month would pay against the cloud's from month 1 (1.2752 <= 2.0 EUR/Mtok),
    # but it serves from month 5 (lead 4): it pays from month 5, at 200 x 1.5^(4/12) =
    # 228.94 Mtok/day (7,757.515 / (228.94 x 365 / 12) = 1.1140 <= 2.0); before: month 1
    assert plan_["break_even"] == [{
        "candidate": "own", "versus": "cloud", "from_month": 5,
        "from_tokens_per_day": pytest.approx(228.94e6, rel=1e-4),
        "from_month_p5": 5.0, "from_month_p95": 5.0, "note": None}]


def run_plan(tmp_path: Path, text: str, *args: str) -> Result:
    """`scorecard run` of proposal `text` (written to tmp_path/plan.toml) on a store of
    tmp_path, with `args`."""
    proposal = tmp_path / "plan.toml"
    proposal.write_text(text, encoding="utf-8")
    return CliRunner().invoke(app, ["run", str(proposal), "--db", str(tmp_path / "s.duckdb"),
                                    *args])


def _run(tmp_path: Path, text: str) -> dict:
    result = run_plan(tmp_path, text, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_own_capacity_pays_from_the_month_the_demand_reaches_its_break_even(
        tmp_path: Path) -> None:
    # from 50 Mtok/day: one node's month (7,757.515 EUR) costs no more per token than the
    # cloud's 2.0 EUR/Mtok once the month holds 7,757.515 / 2 = 3,878.76 Mtok, 127.52
    # Mtok/day: 50 x 1.5^((m - 1) / 12) >= 127.52 from (m - 1) / 12 >= ln(2.5504) / ln(1.5)
    # = 2.30911, m - 1 >= 27.71: month 29, at 50 x 1.5^(28 / 12) = 128.78 Mtok/day (one
    # node throughout: below 345.6); growth is a point, so the band is that month
    doc = _run(tmp_path, WORKED.replace("200_000_000", "50_000_000"))
    [even] = doc["plan"]["break_even"]
    assert even["from_month"] == 29
    assert even["from_tokens_per_day"] == pytest.approx(128.78e6, rel=1e-4)
    assert even["from_month_p5"] == even["from_month_p95"] == 29.0
    # growth drawn triangular(0.3, 0.5, 0.8): faster growth pays earlier (p5 before month
    # 29); month 36 pays only from (1 + g)^(35/12) >= 2.5504, g >= 2.5504^(12/35) - 1 =
    # 0.3785, and P(g < 0.3785) = 0.0785^2 / (0.5 x 0.2) = 0.0616 > 5 %: the p95 lies
    # beyond the horizon (null)
    doc = _run(tmp_path, WORKED.replace("200_000_000", "50_000_000").replace(
        "growth_per_year = 0.5", "growth_per_year = { low = 0.3, mode = 0.5, high = 0.8 }"))
    [even] = doc["plan"]["break_even"]
    assert even["from_month"] == 29
    assert even["from_month_p5"] < 29 and even["from_month_p95"] is None


def test_a_late_node_without_a_fallback_is_not_ranked(tmp_path: Path) -> None:
    # without the fallback, months 1-4 (25,616.68 Mtok) are unserved: the candidate is shown
    # with its CPM over the tokens it serves (1.004070) but not ranked
    doc = _run(tmp_path, WORKED.replace('fallback = "cloud"\n', ""))
    own = next(c for c in doc["candidates"] if c["id"] == "own")
    assert not own["eligible"]
    assert "25616.7 Mtok" in own["exclusion_reason"]
    assert own["detail"]["horizon_unserved_mtok"] == pytest.approx(25_616.68, rel=1e-6)
    assert own["cpm_eur_per_mtok"] == pytest.approx(353_222.19 / 351_790.41, rel=1e-6)
    assert doc["recommendation"]["candidate"] == "cloud"


def test_what_would_change_it_speaks_of_the_growth(tmp_path: Path) -> None:
    # from 50 Mtok/day the cloud (2.0 EUR/Mtok) is chosen: the own node's horizon CPM is
    # 2.514. It pays once the node's months 5..36, C = 7,757.515 x (v^5 - v^37) / (1 - v),
    # cost no more than the cloud would for the same tokens, 2.0 x T1 x v x ((qv)^36 -
    # (qv)^4) / (qv - 1), T1 = 50 x 365 / 12 = 1,520.833 Mtok, q = (1 + g)^(1/12) (one node
    # throughout: 50 x 1.71^(35/12) = 239 Mtok/day < 345.6). Solved for g below by
    # bisection on that closed form: g = 0.7092.
    v = 1 / 1.005
    node = 240_000 * 0.005 / (1 - 1.005 ** -36) + 0.625 * 730
    cost = node * (v ** 5 - v ** 37) / (1 - v)

    def cloud(g: float) -> float:
        qv = (1 + g) ** (1 / 12) * v
        return 2.0 * 1_520.833333 * v * (qv ** 36 - qv ** 4) / (qv - 1)

    low, high = 0.1, 2.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if cloud(mid) < cost else (low, mid)
    assert low == pytest.approx(0.7092, abs=1e-4)
    doc = _run(tmp_path, WORKED.replace("200_000_000", "50_000_000"))
    assert doc["recommendation"]["candidate"] == "cloud"
    [growth] = [c for c in doc["recommendation"]["what_would_change_it"]
                if c["input"] == "demand_growth_per_year"]
    assert growth["threshold"] == pytest.approx(low, rel=1e-4)
    assert growth["direction"] == "rises" and growth["unit"] == "1/year"
    assert "own becomes the choice if demand_growth_per_year" in growth["text"]


def test_the_purchases_are_one_order_a_month_however_many_nodes() -> None:
    # a fleet of 3 million nodes from month 1 and 5 million from month 3, lead 2 months:
    # two orders (not 5 million rows): nodes 1 to 3,000,000 needed in month 1, ordered at
    # the start (max(0, 0 - 2)), serving from month 2 (0 + 2), 34 months of 36 served;
    # nodes 3,000,001 to 5,000,000 needed in month 3, ordered at max(0, 2 - 2) = 0
    serving = np.array([3e6, 3e6, 5e6, 5e6])
    assert plan.purchases(serving, 2.0, 36) == [
        {"needed_month": 1, "ordered_at_month": 0.0, "serves_from_month": 2.0,
         "count": 3_000_000, "first_node": 1, "last_node": 3_000_000, "months_served": 34.0},
        {"needed_month": 3, "ordered_at_month": 0.0, "serves_from_month": 2.0,
         "count": 2_000_000, "first_node": 3_000_001, "last_node": 5_000_000,
         "months_served": 34.0}]


def test_a_lead_time_past_the_horizon_buys_no_node_and_says_so(tmp_path: Path) -> None:
    # lead 40 months on the 36-month horizon: share clip(m - 40, 0, 1) = 0 in every month, so
    # no node serves, none is bought (before finding 3's fix: two nodes, both ordered at the
    # start and serving from month 40, months served -4, with a book value), the cloud serves
    # all 420,412.09 Mtok (share 1.0) and the schedule says why
    doc = _run(tmp_path, WORKED.replace("lead_time_months = 4", "lead_time_months = 40"))
    own = next(c for c in doc["candidates"] if c["id"] == "own")
    assert own["detail"]["horizon_fallback_share"] == pytest.approx(1.0, rel=1e-12)
    [schedule] = [s for s in doc["plan"]["schedules"] if s["candidate"] == "own"]
    assert schedule["purchases"] == []
    # nor can it pay from any month (before: from month 1, when it serves no token)
    [even] = doc["plan"]["break_even"]
    assert even["from_month"] is None and even["note"] == schedule["note"]
    assert schedule["note"] == (
        "no own node can serve inside the horizon: its lead time of 40 months is not shorter "
        "than the horizon's 36 months; no node is bought and every month is its fallback's "
        "(or unserved)")


def test_a_leased_node_is_its_payment_a_month(tmp_path: Path) -> None:
    # leasing the node at 7,301.265 EUR a month over 36 months (its annuity at 6 %: 240,000
    # x 0.005 / (1 - 1.005^-36)) costs, month by month, what buying it did: the same horizon
    # CPM, 1.070876 EUR/Mtok; a leased node has no book value
    leased = WORKED.replace("capex = { gpus = 240_000 }\namortisation_months = 36\n"
                            "cost_of_capital = 0.06\n",
                            "lease = { eur_per_month = 7301.264988, term_months = 36 }\n")
    assert "lease" in leased
    doc = _run(tmp_path, leased)
    own = next(c for c in doc["candidates"] if c["id"] == "own")
    assert own["cpm_eur_per_mtok"] == pytest.approx(1.070876, rel=1e-5)
    [schedule] = [s for s in doc["plan"]["schedules"] if s["candidate"] == "own"]
    assert [n["book_value_per_node_at_horizon_eur"]
            for n in schedule["purchases"]] == [None, None]


def test_a_lease_with_capex_terms_is_refused(tmp_path: Path) -> None:
    text = WORKED.replace("capex = { gpus = 240_000 }\n",
                          "lease = { eur_per_month = 7000, term_months = 36 }\n")
    result = run_plan(tmp_path, text, "--json")
    assert result.exit_code == 1
    assert "leased node has no capex: amortisation_months" in result.output


def test_the_first_screen_shows_the_purchase_plan(tmp_path: Path) -> None:
    # the worked example's plan in words on the first screen, and its chart in the appendix
    out = tmp_path / "out"
    result = run_plan(tmp_path, WORKED, "--out", str(out))
    assert result.exit_code == 0, result.output
    page = (out / "scorecard.html").read_text(encoding="utf-8")
    summary = page[:page.index('id="appendix"')]
    # the first screen, short (it fits 800 px): the horizon's CPM, the own nodes, the gap
    assert "CPM over 36 months" in summary and "1.071 EUR per million output tokens" in summary
    assert "own: 1 from month 5, 2 by month 18, months 1-4 on cloud" in summary
    # the appendix's Purchase plan: each node, its book value, the gap
    appendix = page[page.index('<section id="plan">'):]
    assert ("node 1 (needed in month 5) ordered at the start, serving from month 5, worth "
            "28,844 EUR at the horizon&#x27;s end") in appendix
    assert "node 2 (needed in month 18) ordered at the end of month 13, serving from month 18"\
        in appendix
    assert "months 1 to 4 covered by cloud" in appendix
    assert 'href="#plan"' in summary and '<section id="plan">' in page
    assert 'id="chart-plan-1"' in page


def test_the_bundled_example_plans_over_48_months(tmp_path: Path) -> None:
    # The example's [horizon]: 48 months, 500 Mtok/day growing 30 % a year (10 to 60 %),
    # discounted at the TCO profiles' common 5 %. Its own H200 nodes serve after 4 months
    # (3 to 6), OVHcloud covering months 1-4: with month m's demand 500 x 1.3^((m - 1) / 12)
    # the share of the horizon's tokens is (1.3^(4/12) - 1) / (1.3^4 - 1) = 0.091393 /
    # 1.8561 = 0.049239. The first month's CPM is the one worked at the demand (FR H200
    # 3.08924, docs/decision.md); OVHcloud, elastic above its floor in every month, stays at
    # 11.2 / (1,500 x 0.0036) = 2.07407 and is recommended.
    result = CliRunner().invoke(app, ["run", "--db", str(tmp_path / "s.duckdb"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    c = {x["id"]: x for x in doc["candidates"]}
    h200 = c["onprem-fr-h200-fp8"]
    assert h200["detail"]["horizon_fallback_share"] == pytest.approx(0.049239, rel=1e-4)
    assert h200["detail"]["first_month_cpm_eur_per_mtok"] == pytest.approx(3.08924, rel=1e-4)
    assert c["ovhcloud-h100x4-fp8"]["cpm_eur_per_mtok"] == pytest.approx(2.07407, rel=1e-4)
    assert doc["recommendation"]["candidate"] == "ovhcloud-h100x4-fp8"
    plan_ = doc["plan"]
    assert (plan_["months"], plan_["cost_of_capital_per_year"]) == (48, 0.05)
    assert plan_["growth_per_year"] == {"low": 0.1, "mode": 0.3, "high": 0.6}
    assert plan_["schedules"][0]["candidate"] == "ovhcloud-h100x4-fp8"
    for s in plan_["schedules"]:  # one answer: the scorecard's CPM is the plan's
        assert s["cpm_eur_per_mtok"] == pytest.approx(s["cost_pv_eur"] / s["mtok_pv"],
                                                      rel=1e-12)
        assert c[s["candidate"]]["cpm_eur_per_mtok"] == s["cpm_eur_per_mtok"]
        assert len(s["months"]) == 48


def test_a_demand_by_month(tmp_path: Path) -> None:
    # six months declared: 100, 100, 400, 400, 400, 400 Mtok/day. 100 needs one node
    # (345.6 Mtok/day each), 400 two (ceil(400 / 345.6)); lead 4: both nodes are needed from
    # month 5 (the first their fleet serves), one order at the start, serving from month 5.
    # Months 1-2 at the cloud's 2.0 EUR/Mtok: 2 x 3,041.667 Mtok = 6,083.33 EUR each; months
    # 3-4: 12,166.67 Mtok, 24,333.33 EUR each; months 5-6: 2 x 7,757.515 = 15,515.03 EUR.
    # Discounted at v = 1 / 1.005: 6,083.33 (v + v^2) + 24,333.33 (v^3 + v^4) + 15,515.03
    # (v^5 + v^6) = 90,091.19 EUR over 3,041.667 (v + v^2) + 12,166.67 (v^3 + ... + v^6) =
    # 53,625.31 Mtok: 1.680012 EUR/Mtok
    text = WORKED.replace("tokens_per_day = 200_000_000", "tokens_per_day = 100e6").replace(
        "\nmonths = 36\n", "\n").replace(
        "growth_per_year = 0.5", "demand_by_month = [100e6, 100e6, 400e6, 400e6, 400e6, 400e6]")
    doc = _run(tmp_path, text)
    own = next(c for c in doc["candidates"] if c["id"] == "own")
    assert own["cpm_eur_per_mtok"] == pytest.approx(1.680012, rel=1e-6)
    [schedule] = [s for s in doc["plan"]["schedules"] if s["candidate"] == "own"]
    assert [(n["needed_month"], n["ordered_at_month"], n["serves_from_month"], n["count"],
             n["first_node"], n["last_node"])
            for n in schedule["purchases"]] == [(5, 0.0, 4.0, 2, 1, 2)]
    assert doc["plan"]["demand_by_month"] == [1e8, 1e8, 4e8, 4e8, 4e8, 4e8]


def test_the_request_rate_grows_with_the_tokens() -> None:
    # with a request rate (Little's law), month m's rate is the first month's x the tokens'
    # growth: 2 requests/s of 200 tokens at 3 replicas' worth (1 request/s each, no
    # goodput binding) grows to 2 x 1.5^(35/12) = 6.525 requests/s in month 36: 7 instances
    # (no lead time: the nodes serve from month 1)
    given = _columns({**NODE, "lead_time_months": 0.0,
                      "demand_tokens_per_day": 2 * 86_400 * 200.0,
                      "demand_requests_per_s": 2.0, "replica_requests_per_s": 1.0,
                      "operating_concurrency": 10.0, "operating_ttft_s": 0.5,
                      "operating_tpot_s": 0.05, "request_output_tokens": 191.0})
    month = plan.months(given, PATH)
    assert month["serving_instances"][0, 0, 0] == 2.0
    assert month["serving_instances"][0, 0, -1] == 7.0


def test_a_fallback_below_the_sovereignty_minimum_keeps_the_candidate_out(
        tmp_path: Path) -> None:
    # the gap's tokens are the fallback's, sovereignty included: 6.1 % of the horizon's tokens
    # (25,616.68 / 420,412.09) at the cloud's level; under min_sovereignty = 3 the cloud
    # (an EU provider without a qualification: level 2) cannot serve them, so the own node
    # is not ranked either
    doc = _run(tmp_path, WORKED)
    own = next(c for c in doc["candidates"] if c["id"] == "own")
    assert own["detail"]["fallback_sovereignty_level"] == 2
    assert any("6.1 % of the horizon's tokens are served by its fallback cloud "
               "(sovereignty level 2)" in n for n in own["notes"])
    doc = _run(tmp_path, WORKED.replace("ttft_ms = 1500\n",
                                        "ttft_ms = 1500\n[policy]\nmin_sovereignty = 3\n"))
    own = next(c for c in doc["candidates"] if c["id"] == "own")
    assert not own["eligible"]
    assert "its fallback cloud (sovereignty level 2, below the policy minimum 3)" in \
        own["exclusion_reason"]


@pytest.mark.parametrize(("change", "said"), [
    (("\nmonths = 36\n", "\n"), "growth_per_year needs months"),
    (("growth_per_year = 0.5", "growth_per_year = 0.5\ndemand_by_month = [1e8]"),
     "give the demand's path once"),
    (("growth_per_year = 0.5", "demand_by_month = [1e8, 2e8]"),
     "demand_by_month has 2 month(s), months = 36"),
    (('fallback = "cloud"', 'fallback = "own"'), "must be another cloud or api candidate"),
    (('fallback = "cloud"', 'fallback = "nowhere"'), "names no candidate"),
    (("growth_per_year = 0.5", "growth_per_year = 11"), "must be at most 10"),
    (("lead_time_months = 4", "lead_time_months = -1"), "must be at least 0"),
])
def test_a_bad_plan_is_refused_naming_its_key(tmp_path: Path, change: tuple[str, str],
                                             said: str) -> None:
    out = tmp_path / "out"
    result = run_plan(tmp_path, WORKED.replace(*change, 1), "--out", str(out))
    assert result.exit_code == 1, result.output
    assert said in result.output
    assert not out.exists()  # nothing written on a refusal


def test_a_path_without_a_demand_is_refused(tmp_path: Path) -> None:
    text = WORKED.replace("[demand]\ntokens_per_day = 200_000_000\npeak_factor = 1\n"
                          "headroom = 0\n", "")
    result = run_plan(tmp_path, text, "--json")
    assert result.exit_code == 1
    assert "give its level in [demand]" in result.output


def test_the_tornado_of_a_plan_moves_the_horizon_s_figures(tmp_path: Path) -> None:
    # lead time 3 to 6 months (mode 4): at 3 the cloud covers months 1-3, 2.0 x 6,083.333 x v
    # x ((qv)^3 - 1) / (qv - 1) = 37,389.97 EUR, one node months 4-17 7,757.515 x (v^4 -
    # v^18) / (1 - v) = 103,084.84, two nodes as before 257,741.64: 398,216.44 / 377,084.73
    # = 1.056040 EUR/Mtok; at 6 the cloud months 1-6, 78,154.24, one node months 7-17,
    # 80,385.29: 416,281.17 / 377,084.73 = 1.103946 (node 2 still serves from month 18)
    doc = _run(tmp_path, WORKED.replace("lead_time_months = 4",
                                        "lead_time_months = { low = 3, mode = 4, high = 6 }"))
    [row] = [t for t in doc["tornado"] if t["candidate"] == "own"
             and t["metric"] == "cpm_eur_per_mtok" and t["input"] == "lead_time_months"]
    assert row["metric_at_low"] == pytest.approx(1.056040, rel=1e-6)
    assert row["metric_at_high"] == pytest.approx(1.103946, rel=1e-6)


def test_the_monte_carlo_gives_the_break_even_band_as_computed_apart(tmp_path: Path) -> None:
    # The Monte Carlo, asked for it (`paying`), gives the break-even band from the months its
    # own horizons computed (MonteCarlo.paying_band) instead of paying_month_band computing
    # them again: the same draws (seed, keys) must give the same band. At 50 Mtok/day with
    # the growth drawn triangular(0.3, 0.5, 0.8) the own node pays in some draws (p5 before
    # month 29) and in more than 5 % not within the horizon (p95 null), as
    # test_own_capacity_pays_from_the_month_the_demand_reaches_its_break_even works out.
    from pipeline.engine import uncertainty
    from pipeline.run import opened, resolve

    proposal = tmp_path / "plan.toml"
    proposal.write_text(WORKED.replace("200_000_000", "50_000_000").replace(
        "growth_per_year = 0.5", "growth_per_year = { low = 0.3, mode = 0.5, high = 0.8 }"),
        encoding="utf-8")
    with opened(proposal, None, tmp_path / "s.duckdb") as o:
        resolved = resolve(o.proposal, o.name, o.market, o.cache)
        path = plan.Path.of(o.proposal)
    assert path is not None
    static = resolved.static.with_columns(sovereignty_level=4)
    mc = uncertainty.run(static, resolved.inputs, ["own", "cloud"], ["cpm"], 2000, 7,
                         path=path, fallbacks={"own": "cloud"},
                         paying=(["own"], "cloud"))
    apart = uncertainty.paying_month_band(static, resolved.inputs, ["own"], "cloud", path,
                                          2000, 7)
    assert mc.paying_band == apart
    low, high = apart["own"]
    assert low is not None and low < 29 and high is None


def test_a_plan_of_clouds_alone_gives_the_chosen_cloud_s_months(tmp_path: Path) -> None:
    # No candidate has TCO terms (no lead time anywhere) and the chosen one is not the first:
    # the purchase plan's columns had no lead time and the schedule read row 0's default for
    # row 1 (IndexError, exit 3). The elastic cloud at 28.8 EUR an hour for 4,000 tokens/s
    # (14.4 Mtok an hour) is 2.0 EUR/Mtok in every month, the dear one 40 / 14.4 = 2.78: the
    # cloud is chosen; its months cost 2.0 x 200 x 1.5^((m - 1) / 12) x 365 / 12 EUR, paid at
    # each month's end and discounted at 6 % a year (1.005^-m), no node bought.
    head = WORKED[:WORKED.index("[tco.node]")]
    cloud = WORKED[WORKED.index('[[candidates]]\nid = "cloud"'):]
    dear = cloud.replace('id = "cloud"', 'id = "dear"').replace("28.8", "40")
    doc = _run(tmp_path, head + dear + cloud)
    assert doc["recommendation"]["candidate"] == "cloud"
    [schedule] = [s for s in doc["plan"]["schedules"] if s["candidate"] == "cloud"]
    assert schedule["lead_time_months"] == 0.0 and schedule["purchases"] == []
    expected = sum(2.0 * 200 * 1.5 ** ((m - 1) / 12) * 365 / 12 * 1.005 ** -m
                   for m in range(1, 37))
    assert schedule["cost_pv_eur"] == pytest.approx(expected, rel=1e-9)
