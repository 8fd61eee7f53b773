"""An elastic fleet's min_instances floor billed hour by hour where the day's hours are known
([workload] hourly_profile): each hour bills max(busy instances in that hour, floor), so the
floor held in the quiet hours is paid for even when the day's mean is above it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from proposals import candidate, proposal
from test_run import run_json, without_plan
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine import metrics
from pipeline.engine.fleet import mix
from schemas.steps import HOUR_DEMAND_RATIOS

runner = CliRunner()

#: 18 hours at weight 1 and a 3x evening peak (16:00-22:00): the weights' mean is 1.5, so the
#: hours run at 2/3 and 2 x the day's mean
EVENING = [1.0] * 16 + [3.0] * 6 + [1.0] * 2
PROFILE = "[workload]\nhourly_profile = [" + ", ".join(map(str, EVENING)) + "]\n"
#: a day's mean of 3,000 tokens/s (2,000 off-peak, 6,000 in the evening): 7,884 Mtok a month
DEMAND = ("[demand]\ntokens_per_day = 259_200_000\npeak_factor = 2\nheadroom = 0.2\n"
          "[uncertainty]\ndraws = 200\n")
#: an elastic cloud: 1,000 tokens/s an instance at 10 EUR/h, at least 2 instances held
CLOUD = candidate("cloud", label='"an elastic cloud"', deployment='"cloud"',
                  provider='"ovhcloud"', throughput='{ tokens_per_s = 1000, source = "bench" }',
                  cost='{ eur_per_hour = 10.0, source = "list price" }',
                  capacity='"elastic"', min_instances="2")
#: an own node: 1,250 tokens/s (1,000 with the 20 % headroom) at 6 EUR/h
OWN = candidate("own", throughput='{ tokens_per_s = 1250, source = "bench" }',
                cost='{ eur_per_hour = 6.0, source = "quote" }')
#: the mix must serve a third of the tokens on the own node (level 4): a base of 1 at least
MIX = ('[[candidates]]\nid = "hybrid"\nlabel = "own base, cloud burst"\n'
       'mix = { base = "own", burst = "cloud", '
       'min_share_at_level = { level = 4, share = 0.3 } }\n')


def _run(db: Path, tmp_path: Path, *blocks: str) -> dict:
    path = tmp_path / "p.toml"
    path.write_text(proposal("floor", PROFILE, DEMAND, *blocks), encoding="utf-8")
    return run_json(db, str(path))


def test_the_floor_of_a_mix_s_burst_is_billed_in_its_quiet_hours(db: Path,
                                                                  tmp_path: Path) -> None:
    doc = _run(db, tmp_path, OWN, CLOUD, MIX)
    c = {x["id"]: x for x in doc["candidates"]}
    # the base of 1 node (1,000 tokens/s) leaves the cloud 1,000 tokens/s in the 18 quiet
    # hours (1 instance busy) and 5,000 in the 6 evening ones (5): a mean of 2 busy. Held at
    # least 2 every hour it is billed (18 x 2 + 6 x 5) / 24 = 2.75 instances, not max(2, 2)
    # = 2: 2.75 x 10 x 730 = 20,075 EUR/month (14,600 before), the base 6 x 730 = 4,380:
    # 24,455 EUR over 7,884 Mtok = 3.1019 EUR/Mtok (18,980 and 2.4074 before)
    hybrid = c["hybrid"]
    assert hybrid["mix"]["base_instances"] == 1
    parts = {p["part"]: p for p in hybrid["mix"]["parts"]}
    assert parts["burst"]["monthly_cost_eur"] == pytest.approx(20_075.0)
    assert parts["base"]["monthly_cost_eur"] == pytest.approx(4_380.0)
    assert hybrid["cpm_eur_per_mtok"] == pytest.approx(24_455.0 / 7_884.0)
    # the cloud alone: 2,000 and 6,000 tokens/s, 2 and 6 busy, never below its floor: billed
    # (18 x 2 + 6 x 6) / 24 = 3 = its mean, 3 x 10 x 730 = 21,900 EUR = 2.7778 EUR/Mtok. It
    # is now the cheaper: the recommendation flips from the mix (2.4074 < 2.7778 before)
    assert c["cloud"]["cpm_eur_per_mtok"] == pytest.approx(21_900.0 / 7_884.0)
    assert doc["recommendation"]["candidate"] == "cloud"


def test_a_standalone_floor_above_the_quiet_hours_and_without_them(db: Path,
                                                                  tmp_path: Path) -> None:
    # min_instances = 3: the cloud's 2 busy in the quiet hours are billed 3, the evening's 6
    # as 6: (18 x 3 + 6 x 6) / 24 = 3.75 instances, not max(3, 3) = 3; 3.75 x 10 x 730 =
    # 27,375 EUR over 7,884 Mtok = 3.4722 EUR/Mtok (2.7778 before)
    doc = _run(db, tmp_path, CLOUD.replace("min_instances = 2", "min_instances = 3"))
    cloud = doc["candidates"][0]
    assert cloud["detail"]["billed_instances"] == pytest.approx(3.75)
    assert cloud["cpm_eur_per_mtok"] == pytest.approx(27_375.0 / 7_884.0)
    # explain derives the same figure from the hours
    result = runner.invoke(app, ["explain", "cloud", "billed_instances",
                                 str(tmp_path / "p.toml"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "3.75" in result.output
    assert "hour_16_demand_ratio" in result.output
    # no [workload]: the day's mean, max(3, 3) = 3 instances as before, 2.7778 EUR/Mtok
    flat = tmp_path / "flat.toml"
    flat.write_text(proposal("floor", DEMAND, CLOUD.replace("min_instances = 2",
                                                            "min_instances = 3")),
                    encoding="utf-8")
    cloud = run_json(db, str(flat))["candidates"][0]
    assert cloud["detail"]["billed_instances"] == pytest.approx(3.0)
    assert cloud["cpm_eur_per_mtok"] == pytest.approx(21_900.0 / 7_884.0)


def _example_with(tmp_path: Path, ovh_floor: int, mix_block: str = "") -> str:
    """The bundled example without its plan, OVHcloud's floor at `ovh_floor`, and a mix."""
    path = Path(without_plan(tmp_path))
    text = path.read_text(encoding="utf-8").replace(
        "min_instances = 2 ", f"min_instances = {ovh_floor} ")
    path.write_text(text + mix_block, encoding="utf-8")
    return str(path)


#: the audit's mix: the German own nodes as the base, OVHcloud's elastic fleet as the burst,
#: held to a base of 1 node (it serves 3,000 of the day's 5,787 tokens/s: 52 %)
DE_OVH = ('\n[[candidates]]\nid = "hybrid-de-ovh"\nlabel = "DE base, OVHcloud burst"\n'
          'mix = { base = "onprem-de-h200-fp8", burst = "ovhcloud-h100x4-fp8", '
          'min_share_at_level = { level = 4, share = 0.5 } }\n')


def test_the_example_s_de_ovh_mix_as_the_audit_worked_it(db: Path, tmp_path: Path) -> None:
    doc = run_json(db, _example_with(tmp_path, 2, DE_OVH))
    c = {x["id"]: x for x in doc["candidates"]}
    hybrid = c["hybrid-de-ovh"]
    assert hybrid["mix"]["base_instances"] == 1
    burst = {p["part"]: p for p in hybrid["mix"]["parts"]}["burst"]
    # 500 Mtok/day = 5,787.04 tokens/s on average: 3,858.02 in the 18 quiet hours, 11,574.07
    # in the 6 evening ones. One DE node serves 4,000 x 0.75 = 3,000 of each; OVHcloud
    # (1,500 tokens/s an instance) the rest: 858.02 / 1,500 = 0.572 busy quiet, 8,574.07 /
    # 1,500 = 5.716 in the evening (a mean of 1.858). Held at least 2 every hour it is
    # billed (18 x 2 + 6 x 5.716) / 24 = 2.929 instances (max(1.858, 2) = 2 before), at
    # 11.2 EUR/h x 730 h: 23,948 EUR/month (16,352 before)
    billed = (18 * 2 + 6 * (500e6 / 86_400 * 2 - 3000) / 1500) / 24
    assert billed == pytest.approx(2.929, abs=5e-4)
    assert burst["monthly_cost_eur"] == pytest.approx(billed * 11.2 * 730)
    assert burst["monthly_cost_eur"] == pytest.approx(23_948, abs=1)
    # with the node's 12,322.66 EUR: 36,270 EUR over 15,208.3 Mtok = 2.385 EUR/Mtok, dearer
    # than OVHcloud alone (3.858 busy, never below 2: 2.074): the recommendation flips
    assert hybrid["cpm_eur_per_mtok"] == pytest.approx(2.385, abs=5e-4)
    assert c["ovhcloud-h100x4-fp8"]["cpm_eur_per_mtok"] == pytest.approx(2.074, abs=5e-4)
    assert doc["recommendation"]["candidate"] == "ovhcloud-h100x4-fp8"


def test_the_example_s_ovhcloud_at_a_floor_of_3(db: Path, tmp_path: Path) -> None:
    # OVHcloud alone, min_instances = 3: 3.858 busy on average, 2.572 in the quiet hours (2/3
    # of it) and 7.716 in the evening: (18 x 3 + 6 x 7.716) / 24 = 4.179 instances, not
    # max(3.858, 3): CPM 2.074 x 4.179 / 3.858 = 2.247 EUR/Mtok
    c = {x["id"]: x for x in run_json(db, _example_with(tmp_path, 3))["candidates"]}
    ovh = c["ovhcloud-h100x4-fp8"]
    assert ovh["detail"]["billed_instances"] == pytest.approx(4.179, abs=5e-4)
    assert ovh["cpm_eur_per_mtok"] == pytest.approx(2.247, abs=5e-4)


def test_a_mix_at_base_0_costs_what_its_burst_costs_alone() -> None:
    # the burst alone at 3,000 tokens/s (2,000 and 6,000) with a floor of 3: billed 3.75 (the
    # standalone case above); the mix at base 0 gives its burst the same hours
    hours = mix.hourly_tokens_per_s(259.2e6, EVENING) / 1000.0
    cloud = {"cost_model": "declared", "capacity": "elastic", "tokens_per_s": 1000.0,
             "price_eur_per_hour": 10.0, "min_instances": 3.0,
             **dict(zip(HOUR_DEMAND_RATIOS, hours / hours.mean(), strict=True))}
    own = {"cost_model": "declared", "capacity": "provisioned", "tokens_per_s": 1250.0,
           "price_eur_per_hour": 6.0, "demand_tokens_per_day": 259.2e6, "peak_factor": 2.0,
           "headroom": 0.2}
    figures = mix.evaluate(own, cloud, [0, 1], EVENING, ["billed_instances"])
    assert figures.burst["billed_instances"][0, 0] == pytest.approx(3.75)
    assert figures.burst_cost_eur[0, 0] == pytest.approx(27_375.0)
    # the burst alone, from the profile's ratios as resolve gives them: the same bits
    alone = metrics.evaluate_arrays(
        {**cloud, **dict(zip(HOUR_DEMAND_RATIOS, metrics.hour_demand_ratios(EVENING),
                             strict=True)), "demand_tokens_per_day": 259.2e6},
        ["billed_instances", "monthly_cost_eur"])
    assert figures.burst["billed_instances"][0, 0] == alone["billed_instances"]
    assert figures.burst_cost_eur[0, 0] == alone["monthly_cost_eur"]
    # at base 1: 1 and 5 busy, floor 3: (18 x 3 + 6 x 5) / 24 = 3.5
    assert figures.burst["billed_instances"][1, 0] == pytest.approx(3.5)
    assert np.isfinite(figures.monthly_cost_eur).all()


def test_a_mix_free_to_hold_no_base_ties_its_burst_alone(db: Path, tmp_path: Path) -> None:
    # without the policy the mix's cheapest base is none: the cloud alone, 21,900 EUR (base
    # 1: 24,455; base 2: its burst 0 quiet and 4 in the evening, billed (18 x 2 + 6 x 4) / 24
    # = 2.5: 18,250 + 8,760 = 27,010), the same figure as the cloud's, exactly
    doc = _run(db, tmp_path, OWN, CLOUD, MIX.replace(
        ', min_share_at_level = { level = 4, share = 0.3 }', ''))
    c = {x["id"]: x for x in doc["candidates"]}
    assert c["hybrid"]["mix"]["base_instances"] == 0
    assert c["hybrid"]["cpm_eur_per_mtok"] == c["cloud"]["cpm_eur_per_mtok"]
    assert c["cloud"]["cpm_eur_per_mtok"] == pytest.approx(21_900.0 / 7_884.0)


def test_the_step_hour_by_hour_in_polars_and_numpy() -> None:
    # docs/decision.md's elastic fleet at 500 Mtok/day, 2,800 tokens/s an instance: 2.066799
    # busy on average, 1.377866 in the 18 quiet hours (2/3) and 4.133598 in the 6 evening ones
    # (2x). At least 3 every hour: (18 x 3 + 6 x 4.133598) / 24 = 3.283400 instances, x 21.84
    # EUR/h x 730 h = 52,347.9 EUR/month (max(2.0668, 3) = 3: 47,829.6 on the day's mean)
    ratios = dict(zip(HOUR_DEMAND_RATIOS, metrics.hour_demand_ratios(EVENING).tolist(),
                      strict=True))
    row = {"cost_model": "declared", "capacity": "elastic", "tokens_per_s": 2800.0,
           "price_eur_per_hour": 21.84, "demand_tokens_per_day": 500e6, "peak_factor": 2.0,
           "headroom": 0.25, "min_instances": 3.0, **ratios}
    names = ["billed_instances", "monthly_cost_eur"]
    arrays = metrics.evaluate(pl.DataFrame([row]), names)
    assert arrays.row(0) == pytest.approx((3.283400, 52_347.9), abs=1e-1)
    assert arrays.row(0)[0] == pytest.approx(3.2834, abs=1e-4)
    assert metrics.evaluate_polars(pl.DataFrame([row]), names).row(0) == arrays.row(0)
