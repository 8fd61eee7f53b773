"""What the sizing's margins cost (issue 15): the headroom's instances and their monthly cost,
`[demand] redundancy_instances` (N+1) added to the sized and billed fleet, and a TCO fleet's
cost over its amortisation period; null without a demand, 0 for elastic capacity (it bills
busy hours only), through the metric steps, the proposal, the engine's JSON and `explain`."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.metrics import evaluate
from schemas.proposal import ProposalError, parse

runner = CliRunner()

MARGIN_STEPS = ("headroom_instances", "monthly_headroom_cost_eur",
                "monthly_redundancy_cost_eur", "period_cost_eur")


def _row(**inputs: object) -> dict[str, object]:
    """The steps of one candidate: 500 M tokens/day, peak 2, headroom 0.25, 4,000 tokens/s,
    11 EUR/h (provisioned, a declared price) unless overridden."""
    base: dict[str, object] = {
        "tokens_per_s": 4000.0, "demand_tokens_per_day": 500e6, "peak_factor": 2.0,
        "headroom": 0.25, "price_eur_per_hour": 11.0}
    base.update(inputs)
    return evaluate(pl.DataFrame({k: [v] for k, v in base.items()})).row(0, named=True)


def test_the_headroom_s_instances_and_their_cost() -> None:
    row = _row()
    # peak: 500e6 / 86,400 x 2 = 11,574.07 tokens/s; with headroom: ceil(11,574.07 / (4,000 x
    # 0.75)) = ceil(3.858) = 4 instances; the bare peak: ceil(11,574.07 / 4,000) = ceil(2.894)
    # = 3, so the headroom adds 1 instance: 1 x 11 EUR/h x 730 h = 8,030 EUR/month
    assert row["instances"] == 4
    assert row["headroom_instances"] == 1
    assert row["monthly_headroom_cost_eur"] == pytest.approx(8_030.0, rel=1e-12)
    # no redundancy declared: it costs 0, and the fleet is 4 x 11 x 730 = 32,120 EUR/month
    assert row["monthly_redundancy_cost_eur"] == 0.0
    assert row["monthly_cost_eur"] == pytest.approx(32_120.0, rel=1e-12)
    # a price per hour has no amortisation period
    assert row["period_cost_eur"] is None


def test_n_plus_1_adds_an_instance_that_is_billed() -> None:
    row = _row(redundancy_instances=1.0)
    # 4 instances for the peak with headroom + 1 spare = 5, all billed: 5 x 11 x 730 =
    # 40,150 EUR/month, of which the spare 1 x 11 x 730 = 8,030 and the headroom still 8,030
    assert row["instances"] == 5
    assert row["billed_instances"] == 5
    assert row["headroom_instances"] == 1
    assert row["monthly_redundancy_cost_eur"] == pytest.approx(8_030.0, rel=1e-12)
    assert row["monthly_headroom_cost_eur"] == pytest.approx(8_030.0, rel=1e-12)
    assert row["monthly_cost_eur"] == pytest.approx(40_150.0, rel=1e-12)
    # the spare lowers the billed utilisation, so CPM carries it: mean demand 500e6 / 86,400
    # = 5,787.04 tokens/s = 1.4468 busy instances of 5 -> u = 0.28935; CPM = 11 / (4,000 x
    # 0.28935 x 3,600 / 1e6) = 11 / 4.1667 = 2.640 EUR/Mtok = 40,150 EUR / (500 x 365 / 12 =
    # 15,208.33 Mtok a month)
    assert row["billed_utilisation"] == pytest.approx(5787.037 / 4000 / 5, rel=1e-6)
    assert row["cpm_eur_per_mtok"] == pytest.approx(40_150.0 / 15_208.333, rel=1e-6)


def test_elastic_capacity_bills_neither_margin() -> None:
    row = _row(redundancy_instances=1.0, capacity="elastic", min_instances=1.0)
    # elastic: billed = max(busy 1.4468, min 1) = 1.4468 instances, 1.4468 x 11 x 730 =
    # 11,617.9 EUR/month; the headroom's 1 and the spare are not billed: 0 each
    assert row["billed_instances"] == pytest.approx(1.446759, rel=1e-6)
    assert row["monthly_cost_eur"] == pytest.approx(1.446759 * 11 * 730, rel=1e-6)
    assert row["monthly_headroom_cost_eur"] == 0.0
    assert row["monthly_redundancy_cost_eur"] == 0.0


def test_a_tco_fleet_s_cost_over_its_amortisation() -> None:
    # one instance's TCO: capex 480,000 EUR over 48 months at 0 % -> 10,000 EUR/month, i.e.
    # 10,000 x 12 / 8,760 = 13.699 EUR/h; no maintenance, staff, hosting, and a 0 EUR/kWh
    # tariff, so cost per hour = capital; 4 instances x 13.699 x 730 = 40,000 EUR/month;
    # over the 48 months: 40,000 x 48 = 1,920,000 EUR
    row = _row(price_eur_per_hour=None, cost_model="tco", capex_eur=480_000.0,
               amortisation_months=48.0, cost_of_capital_per_year=0.0,
               maintenance_share_per_year=0.0, contract_eur_per_kwh=0.0, busy_power_w=5600.0,
               pue=1.3)
    assert row["cost_eur_per_hour"] == pytest.approx(10_000 * 12 / 8760, rel=1e-12)
    assert row["monthly_cost_eur"] == pytest.approx(40_000.0, rel=1e-12)
    assert row["period_cost_eur"] == pytest.approx(1_920_000.0, rel=1e-12)
    # its headroom: 1 x 13.699 x 730 = 10,000 EUR/month
    assert row["monthly_headroom_cost_eur"] == pytest.approx(10_000.0, rel=1e-12)


def test_without_a_demand_the_margins_are_null() -> None:
    row = _row(demand_tokens_per_day=None, utilisation=0.5, redundancy_instances=1.0)
    for name in (*MARGIN_STEPS, "instances", "monthly_cost_eur"):
        assert row[name] is None, name
    # the CPM is still there, at the declared utilisation: 11 / (4,000 x 0.5 x 0.0036) = 1.528
    assert row["cpm_eur_per_mtok"] == pytest.approx(11 / 7.2, rel=1e-12)


def test_no_headroom_adds_no_instance() -> None:
    # headroom 0: ceil(2.894) = 3 both ways -> 0 instances, 0 EUR
    row = _row(headroom=0.0)
    assert (row["instances"], row["headroom_instances"]) == (3, 0)
    assert row["monthly_headroom_cost_eur"] == 0.0


@pytest.mark.parametrize(("value", "says"), [
    ("-1", "greater than or equal to 0"), ("1.5", "valid integer"), ('"1"', "valid integer"),
    ("true", "valid integer"), ("20000", "less than or equal to 10000")])
def test_a_bad_redundancy_is_an_error_naming_the_key(value: str, says: str) -> None:
    text = proposal("bad", f"[demand]\ntokens_per_day = 5e8\nredundancy_instances = {value}\n",
                    candidate("a"))
    with pytest.raises(ProposalError) as caught:
        parse(text, "p.toml")
    assert str(caught.value).startswith("p.toml: demand.redundancy_instances: ")
    assert says in str(caught.value)


MARGINS = proposal(
    "Margins", """
[policy]
min_sovereignty = 1
[demand]
tokens_per_day = 500_000_000
peak_factor = 2
headroom = 0.25
redundancy_instances = 1
[tco.node]
source = "quote"
capex = { gpus = 400_000, servers = 80_000 }
amortisation_months = 48
cost_of_capital = 0.0
maintenance_share_per_year = 0.0
hosting = { kind = "own_site", eur_per_year = 0 }
electricity = { basis = "contract", eur_per_kwh = 0.10 }
""",
    candidate("declared"),
    candidate("own-tco", cost='{ tco = "node" }'),
    candidate("elastic", deployment='"cloud"', provider='"ovhcloud"', capacity='"elastic"',
              cost='{ eur_per_hour = 11.0, source = "quote" }'),
)


def _run(tmp_path: Path) -> dict[str, dict[str, object]]:
    path = tmp_path / "proposal.toml"
    path.write_text(MARGINS, encoding="utf-8")
    result = runner.invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    return {c["id"]: c for c in json.loads(result.stdout)["candidates"]}


def test_the_engine_s_json_carries_the_margins(tmp_path: Path) -> None:
    found = _run(tmp_path)
    declared = found["declared"]["detail"]
    # 4 for the peak with headroom + 1 spare = 5 x 11 x 730 = 40,150 EUR/month
    assert declared["instances"] == 5
    assert declared["monthly_cost_eur"] == pytest.approx(40_150.0, rel=1e-12)
    assert declared["monthly_headroom_cost_eur"] == pytest.approx(8_030.0, rel=1e-12)
    assert declared["monthly_redundancy_cost_eur"] == pytest.approx(8_030.0, rel=1e-12)
    assert declared["period_cost_eur"] is None
    # the TCO node per instance: capital 480,000 / 48 = 10,000 EUR/month = 13.6986 EUR/h;
    # electricity 5.6 kW (no idle figure: busy power every hour) x PUE 1.3 x 0.10 EUR/kWh =
    # 0.728 EUR/h; no maintenance, staff or hosting: 14.4266 EUR/h x 730 = 10,531.44 EUR/month;
    # 5 instances = 52,657.2 EUR/month; over 48 months 2,527,545.6 EUR; the headroom's and the
    # spare's instance 10,531.44 EUR/month each
    tco = found["own-tco"]["detail"]
    assert tco["monthly_cost_eur"] == pytest.approx(52_657.2, rel=1e-9)
    assert tco["period_cost_eur"] == pytest.approx(2_527_545.6, rel=1e-9)
    assert tco["monthly_headroom_cost_eur"] == pytest.approx(10_531.44, rel=1e-9)
    assert tco["monthly_redundancy_cost_eur"] == pytest.approx(10_531.44, rel=1e-9)
    # elastic: neither billed, and its notes say the redundancy is not
    elastic = found["elastic"]
    assert elastic["detail"]["monthly_redundancy_cost_eur"] == 0.0
    assert elastic["detail"]["monthly_headroom_cost_eur"] == 0.0
    assert any("redundancy_instances = 1 is not billed" in n for n in elastic["notes"])
    # the input is recorded with its key
    (spare,) = [i for i in found["declared"]["inputs"]
                if i["input"] == "redundancy_instances"]
    assert spare["key"] == "demand.redundancy_instances" and spare["mode"] == 1.0


def test_explain_derives_the_margins(tmp_path: Path) -> None:
    path = tmp_path / "proposal.toml"
    path.write_text(MARGINS, encoding="utf-8")
    db = str(tmp_path / "s.duckdb")
    result = runner.invoke(app, ["explain", "own-tco", "period_cost_eur", str(path), "--db", db,
                                 "--json"])
    assert result.exit_code == 0, result.output
    chain = json.loads(result.stdout)
    assert chain["value"] == pytest.approx(2_527_545.6, rel=1e-9)
    steps = {s["step"] for s in chain["steps"]}
    assert {"monthly_cost_eur", "instances", "period_cost_eur"} <= steps
    result = runner.invoke(app, ["explain", "declared", "monthly_redundancy_cost_eur",
                                 str(path), "--db", db])
    assert result.exit_code == 0, result.output
    # 1 spare x 11 EUR/h x 730 h = 8,030 EUR/month, its input named with its key
    assert "monthly_redundancy_cost_eur = 8030 EUR/month" in result.stdout
    assert "redundancy_instances = 1 count  (declared; demand.redundancy_instances)" in (
        result.stdout)
