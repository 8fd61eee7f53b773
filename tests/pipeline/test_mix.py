"""A mix (own base + burst) against figures worked by hand (issue 31, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from openpyxl import load_workbook
from proposals import candidate, proposal
from test_run import EXAMPLE, run_json, without_plan
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.fleet import mix, plan
from schemas.proposal import ProposalError, parse

runner = CliRunner()

#: 18 hours at weight 1 and a 3x evening peak (16:00-22:00, 6 hours at weight 3): the
#: weights' mean is (18 + 18) / 24 = 1.5, so the hours run at 2/3 and 2 x the day's mean
EVENING = [1.0] * 16 + [3.0] * 6 + [1.0] * 2
#: a day's mean of 3,000 tokens/s: 2,000 tokens/s off-peak, 6,000 at the evening peak
DEMAND = 3000 * 86400  # 259.2e6 tokens/day

#: an own node: 1,250 tokens/s of goodput, 20 % headroom -> 1,000 tokens/s of capacity,
#: 11 EUR/h whatever it serves (a declared price with power and hosting in it)
OWN = {"cost_model": "declared", "capacity": "provisioned", "tokens_per_s": 1250.0,
       "price_eur_per_hour": 11.0, "busy_power_w": 5000.0, "pue": 1.2,
       "grid_gco2e_per_kwh": 50.0, "demand_tokens_per_day": float(DEMAND), "peak_factor": 2.0,
       "headroom": 0.2}
#: an API at 6 EUR per million tokens (billed per token used)
API = {"cost_model": "per_token", "capacity": "elastic", "tokens_per_s": 1000.0,
       "price_eur_per_mtok": 6.0, "headroom": 0.2}

WANTED = ["cpm_eur_per_mtok", "carbon_gco2e_per_mtok"]


def _sizes(own: dict, profile: list[float]) -> mix.Figures:
    return mix.evaluate(own, API, np.arange(mix.max_base_instances(own) + 1), profile, WANTED)


def test_evening_peak_base_covers_the_hours_own_capacity_is_cheaper() -> None:
    figures = _sizes(OWN, EVENING)
    # the pure own fleet: ceil(6,000 / 1,000) = 6 nodes (the peak factor 2 x 3,000)
    assert mix.max_base_instances(OWN) == 6
    assert figures.base_instances[:, 0].tolist() == [0, 1, 2, 3, 4, 5, 6]
    # a node costs 11 x 24 = 264 EUR a day. Nodes 1-2 serve 1,000 tokens/s all day
    # (86.4 Mtok): 264 / 86.4 = 3.06 EUR/Mtok, below the API's 6. Nodes 3-6 serve only the
    # 6 evening hours (1,000 x 6 x 3,600 = 21.6 Mtok): 264 / 21.6 = 12.22 EUR/Mtok, above
    # 6: the best base is 2 nodes.
    best = mix.best_size(figures, 4, 3, None)
    assert best == 2
    # month (730 h = 30.4167 days): base 11 x 2 x 730 = 16,060 EUR, serving 2,000 tokens/s
    # all day = 172.8e6 tokens/day = 5,256 Mtok; burst: 4,000 tokens/s over 6 h = 86.4e6
    # tokens/day = 2,628 Mtok x 6 = 15,768 EUR. Total 31,828 EUR over 7,884 Mtok
    assert figures.base_cost_eur[best, 0] == pytest.approx(16_060.0)
    assert figures.burst_cost_eur[best, 0] == pytest.approx(15_768.0)
    assert figures.base_share[best, 0] == pytest.approx(2 / 3)
    # blended CPM = 31,828 / 7,884 = 4.0370 EUR/Mtok
    assert figures.blended["cpm_eur_per_mtok"][best, 0] == pytest.approx(4.0370, abs=1e-4)
    # beats the pure own fleet (6 nodes: 48,180 EUR / 7,884 = 6.111) and the pure API (6.0)
    pure_own, pure_api = figures.monthly_cost_eur[6, 0], figures.monthly_cost_eur[0, 0]
    assert pure_own == pytest.approx(48_180.0)
    assert pure_api == pytest.approx(47_304.0)
    assert figures.blended["cpm_eur_per_mtok"][6, 0] == pytest.approx(6.1111, abs=1e-4)
    assert figures.blended["cpm_eur_per_mtok"][0, 0] == pytest.approx(6.0)


def test_flat_profile_the_best_mix_is_the_pure_own_fleet() -> None:
    # 3,000 tokens/s every hour: 3 nodes (peak factor 1) each serve 1,000 tokens/s all day at
    # 3.06 EUR/Mtok < 6: every node pays, the burst serves nothing and the mix is the pure
    # own fleet (3 x 11 x 730 = 24,090 EUR / 7,884 Mtok = 3.0556 EUR/Mtok); a smaller base
    # loses: 2 nodes = 16,060 + 2,628 Mtok x 6 = 31,828 EUR
    own = {**OWN, "peak_factor": 1.0}
    figures = _sizes(own, [1.0] * 24)
    best = mix.best_size(figures, 4, 3, None)
    assert best == 3 == mix.max_base_instances(own)
    assert figures.burst_tokens_per_day[best, 0] == 0.0
    assert figures.burst_cost_eur[best, 0] == 0.0
    assert figures.blended["cpm_eur_per_mtok"][best, 0] == pytest.approx(3.0556, abs=1e-4)
    assert figures.monthly_cost_eur[2, 0] == pytest.approx(31_828.0)


def test_policy_share_at_level_raises_the_base() -> None:
    # at least 80 % of the tokens at level >= 4 (the own base's level; the API is level 3):
    # 2 nodes serve 2/3 < 0.8; 3 nodes serve 2,000 off-peak + 3,000 in the evening: 2,000 x
    # 18 + 3,000 x 6 = 54,000 of 72,000 token-hours/s = 0.75 < 0.8; 4 nodes: (36,000 +
    # 24,000) / 72,000 = 0.8333 >= 0.8: the cheapest allowed base is 4 nodes
    figures = _sizes(OWN, EVENING)
    share = mix.share_at_level(figures, 4, 3, 4)[:, 0]
    assert share[3] == pytest.approx(0.75)
    assert share[4] == pytest.approx(60 / 72)
    assert mix.best_size(figures, 4, 3, mix.Policy(level=4, share=0.8)) == 4
    # a level both parts meet allows every size: the cheapest stands
    assert mix.best_size(figures, 4, 3, mix.Policy(level=3, share=1.0)) == 2
    # parts at levels 2 and 1 serve no token at level >= 3: no base size is allowed
    assert mix.best_size(figures, 2, 1, mix.Policy(level=3, share=0.5)) is None


def test_draws_go_through_together() -> None:
    # the same base size over draws of the API's price: 4 and 8 EUR/Mtok -> burst 2,628 x 4
    # = 10,512 and x 8 = 21,024 EUR, beside the base's 16,060
    api = {**API, "price_eur_per_mtok": np.array([[4.0, 8.0]])}
    figures = mix.evaluate(OWN, api, [2], EVENING, WANTED)
    assert figures.monthly_cost_eur.shape == (1, 2)
    assert figures.monthly_cost_eur[0].tolist() == pytest.approx([26_572.0, 37_084.0])


# --- through the proposal, the engine and the CLI ------------------------------------------

PROFILE = "[workload]\nhourly_profile = [" + ", ".join(map(str, EVENING)) + "]\n"
DEMAND_TABLE = ("[demand]\ntokens_per_day = 259_200_000\npeak_factor = 2\nheadroom = 0.2\n"
                "prompt_tokens = 1000\noutput_tokens = 250\n"
                "[uncertainty]\ndraws = 1000\n")
API_BLOCK = candidate(
    "api", label='"an API"', deployment='"api"', provider='"scaleway"',
    throughput='{ tokens_per_s = 1000, source = "assumed" }',
    cost='{ input_eur_per_mtok = 0, output_eur_per_mtok = 6, source = "list price" }')
OWN_BLOCK = candidate("own", throughput='{ tokens_per_s = 1250, source = "bench" }')
MIX_BLOCK = ('[[candidates]]\nid = "hybrid"\nlabel = "own base, API burst"\n'
             'mix = { base = "own", burst = "api" }\n')


def _write(tmp_path: Path, *blocks: str) -> Path:
    path = tmp_path / "p.toml"
    path.write_text(proposal("mix", *blocks), encoding="utf-8")
    return path


def _json(tmp_path: Path, path: Path) -> dict:
    result = runner.invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_mix_is_a_candidate_of_the_scorecard(tmp_path: Path) -> None:
    doc = _json(tmp_path, _write(tmp_path, PROFILE, DEMAND_TABLE, OWN_BLOCK, API_BLOCK,
                                 MIX_BLOCK))
    found = {c["id"]: c for c in doc["candidates"]}
    hybrid = found["hybrid"]
    assert hybrid["deployment"] == "mix"
    # the worked example above: 2 own nodes, 31,828 EUR / 7,884 Mtok = 4.0370 EUR/Mtok,
    # cheaper than the own fleet (6 nodes, 6.111) and the API (6.0)
    assert hybrid["mix"]["base_instances"] == 2
    assert hybrid["mix"]["max_base_instances"] == 6
    assert hybrid["cpm_eur_per_mtok"] == pytest.approx(4.0370, abs=1e-4)
    assert found["own"]["cpm_eur_per_mtok"] == pytest.approx(6.1111, abs=1e-4)
    assert found["api"]["cpm_eur_per_mtok"] == pytest.approx(6.0)
    base, burst = hybrid["mix"]["parts"]
    # tokens 2/3 own (5,256 Mtok), 1/3 API (2,628 Mtok); cost 16,060 and 15,768 EUR
    assert (base["id"], base["tokens_share"], base["monthly_cost_eur"]) == (
        "own", pytest.approx(2 / 3), pytest.approx(16_060.0))
    assert (burst["id"], burst["mtok_per_month"], burst["monthly_cost_eur"]) == (
        "api", pytest.approx(2_628.0), pytest.approx(15_768.0))
    assert base["cost_share"] == pytest.approx(16_060 / 31_828)
    # sovereignty per part, and the mix's level the lowest that serves tokens
    levels = {r["level"]: r["tokens_share"] for r in hybrid["mix"]["tokens_share_by_level"]}
    assert levels[4] == pytest.approx(2 / 3)
    assert hybrid["sovereignty_level"] == burst["sovereignty_level"] < 4
    # one answer everywhere: no input is uncertain, so every draw is the point figure, and the
    # mix is the cheapest in every draw and the recommendation
    assert hybrid["uncertainty"]["cpm_eur_per_mtok"]["p50"] == pytest.approx(
        hybrid["cpm_eur_per_mtok"], rel=1e-12)
    assert doc["recommendation"]["candidate"] == "hybrid"
    assert doc["recommendation"]["p_chosen_cheapest"] == 1.0
    # the per-request figures blend as the per-token ones (both parts serve the same request:
    # 250 tokens on the output basis), so they are the mix's per-token figures at that
    # request: facility kWh/Mtok x 250 / 1e6 x 1,000 Wh, gCO2e/Mtok x 250 / 1e6 (were null)
    for per_request, per_mtok, scale in (
            ("facility_wh_per_request", "facility_kwh_per_mtok", 0.25),
            ("carbon_gco2e_per_request", "carbon_gco2e_per_mtok", 2.5e-4),
            ("carbon_market_gco2e_per_request", "carbon_market_gco2e_per_mtok", 2.5e-4)):
        assert hybrid[per_request] is not None, per_request
        assert hybrid[per_request] == pytest.approx(hybrid[per_mtok] * scale, rel=1e-9)


def test_the_policy_raises_the_base_or_excludes_the_mix(tmp_path: Path) -> None:
    # at least 90 % of the tokens at level 4 (own hardware): 4 nodes serve (2,000 x 18 +
    # 4,000 x 6) / 72,000 token-hours/s = 0.833 < 0.9; 5 nodes (36,000 + 5,000 x 6) / 72,000
    # = 0.917: 5 x 11 x 730 = 40,150 EUR + the API's 1,000 tokens/s over 6 h (21.6e6 a day,
    # 657 Mtok a month x 6 = 3,942 EUR) = 44,092 EUR / 7,884 Mtok = 5.5926 EUR/Mtok
    mixed = MIX_BLOCK.replace('burst = "api" }',
                              'burst = "api", min_share_at_level = { level = 4, share = 0.9 } }')
    doc = _json(tmp_path, _write(tmp_path, PROFILE, DEMAND_TABLE, OWN_BLOCK, API_BLOCK, mixed))
    hybrid = next(c for c in doc["candidates"] if c["id"] == "hybrid")
    assert hybrid["mix"]["base_instances"] == 5
    assert hybrid["mix"]["policy_share_met"] == pytest.approx(66 / 72)
    assert hybrid["cpm_eur_per_mtok"] == pytest.approx(5.5926, abs=1e-4)
    assert hybrid["eligible"]
    # an own base held at level 3 (an override) serves no token at level 4: no base size
    # meets the policy, and the mix is not eligible, saying why
    own = OWN_BLOCK + ('sovereignty_override = { level = 3, justification = "operated by a '
                       'contractor under a foreign parent" }\n')
    doc = _json(tmp_path, _write(tmp_path, PROFILE, DEMAND_TABLE, own, API_BLOCK, mixed))
    hybrid = next(c for c in doc["candidates"] if c["id"] == "hybrid")
    assert not hybrid["eligible"]
    assert hybrid["mix"]["base_instances"] is None and hybrid["mix"]["parts"] == []
    assert "no base size from 0 to 6 instances serves 90% of the tokens at sovereignty " \
        "level >= 4" in hybrid["exclusion_reason"]


def test_a_mix_without_a_base_size_has_no_percentiles(tmp_path: Path) -> None:
    # the policy above that no base size meets, with the API's price uncertain so that the
    # other candidates' percentiles are drawn: the mix is computed in no draw, so each of
    # its percentiles is null, not a number
    mixed = MIX_BLOCK.replace('burst = "api" }',
                              'burst = "api", min_share_at_level = { level = 4, share = 0.9 } }')
    own = OWN_BLOCK + ('sovereignty_override = { level = 3, justification = "operated by a '
                       'contractor under a foreign parent" }\n')
    api = API_BLOCK.replace("output_eur_per_mtok = 6,",
                            "output_eur_per_mtok = { low = 5, mode = 6, high = 8 },")
    assert api != API_BLOCK
    doc = _json(tmp_path, _write(tmp_path, PROFILE, DEMAND_TABLE, own, api, mixed))
    found = {c["id"]: c for c in doc["candidates"]}
    assert found["hybrid"]["mix"]["base_instances"] is None
    assert found["api"]["uncertainty"]["cpm_eur_per_mtok"]["p95"] > 6.0
    assert found["hybrid"]["uncertainty"]
    assert all(v is None for v in found["hybrid"]["uncertainty"].values())


@pytest.mark.parametrize(("mixed", "key", "problem"), [
    ('mix = { base = "nope", burst = "api" }', "candidates[2] (id 'hybrid').mix.base",
     "'nope' names no [[candidates]] entry"),
    ('mix = { base = "api", burst = "api" }', "candidates[2] (id 'hybrid').mix.base",
     "'api' is api: the base of a mix is on_prem"),
    ('mix = { base = "own", burst = "own" }', "candidates[2] (id 'hybrid').mix.burst",
     "'own' is on_prem: the burst of a mix is cloud or api"),
    ('mix = { base = "hybrid", burst = "api" }', "candidates[2] (id 'hybrid').mix.base",
     "'hybrid' is a mix"),
    ('mix = { base = "own", burst = "api", min_share_at_level = { level = 3, share = 1.5 } }',
     "candidates[2] (id 'hybrid').mix.min_share_at_level.share", "less than or equal to 1"),
    ('mix = { base = "own", burst = "api", bursts = "x" }', "candidates[2] (id 'hybrid').mix",
     "unknown key"),
])
def test_a_bad_mix_exits_1_naming_its_key(tmp_path: Path, mixed: str, key: str,
                                          problem: str) -> None:
    block = MIX_BLOCK.replace('mix = { base = "own", burst = "api" }', mixed)
    path = _write(tmp_path, PROFILE, DEMAND_TABLE, OWN_BLOCK, API_BLOCK, block)
    result = runner.invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 1
    assert f"{path}: {key}" in result.output and problem in result.output
    assert not (tmp_path / "s.duckdb").exists()


def test_a_mix_needs_the_day_s_profile(tmp_path: Path) -> None:
    path = _write(tmp_path, DEMAND_TABLE, OWN_BLOCK, API_BLOCK, MIX_BLOCK)
    with pytest.raises(ProposalError, match=r"candidates\[2\] \(id 'hybrid'\)\.mix: .*"
                                            r"\[workload\] hourly_profile"):
        parse(path.read_text(encoding="utf-8"), path)


def test_the_reports_show_the_split_and_the_workbook_the_mix_s_values(tmp_path: Path) -> None:
    path = _write(tmp_path, PROFILE, DEMAND_TABLE, OWN_BLOCK, API_BLOCK, MIX_BLOCK)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "scorecard.html").read_text(encoding="utf-8")
    # the split of the worked example: 2 of up to 6 own instances, 2/3 of the tokens own
    assert "Mix hybrid: own base and burst" in page
    assert "2 of up to 6 own instances" in page
    assert "level 4: 66.7%" in page and "level 2: 33.3%" in page
    assert '<table class="plain" id="mix-1">' in page
    # no plan: the split is the [demand] month's, its columns say a month
    assert "<th>Mtok a month</th>" in page and "horizon's mean" not in page
    # the workbook's Scorecard computes each candidate from Inputs, but a mix has no inputs of
    # its own: its row holds the engine's values (31,828 EUR / 7,884 Mtok), not formulas
    sheet = load_workbook(out / "scorecard.xlsx")["Scorecard"]
    heads = [c.value for c in sheet[1]]
    cpm = heads.index("CPM (EUR/Mtok)")
    rows = {r[0].value: r for r in sheet.iter_rows(min_row=2)}
    assert rows["hybrid"][cpm].value == pytest.approx(4.0370, abs=1e-4)
    assert str(rows["own"][cpm].value).startswith("=")


def test_one_answer_a_mix_that_is_the_own_fleet_draws_as_the_own_fleet(tmp_path: Path) -> None:
    # a flat profile (3,000 tokens/s every hour, peak factor 1) and the own node's price
    # uncertain (10 .. 12 EUR/h): the best mix is the pure own fleet (3 nodes, the API serving
    # nothing: test_flat_profile_the_best_mix_is_the_pure_own_fleet), so in every draw it costs
    # what the own candidate costs, 3 x price x 730 / 7,884 Mtok: the same percentiles, the
    # same key drawn for both
    flat = "[workload]\nhourly_profile = [" + ", ".join(["1"] * 24) + "]\n"
    demand = DEMAND_TABLE.replace("peak_factor = 2", "peak_factor = 1")
    own = candidate("own", throughput='{ tokens_per_s = 1250, source = "bench" }',
                    cost='{ eur_per_hour = { low = 10, mode = 11, high = 12 }, '
                         'source = "quote" }')
    doc = _json(tmp_path, _write(tmp_path, flat, demand, own, API_BLOCK, MIX_BLOCK))
    found = {c["id"]: c for c in doc["candidates"]}
    assert found["hybrid"]["mix"]["base_instances"] == 3
    band_own = found["own"]["uncertainty"]["cpm_eur_per_mtok"]
    band_mix = found["hybrid"]["uncertainty"]["cpm_eur_per_mtok"]
    # 3 x 11 x 730 / 7,884 = 3.0556 at the mode; the draws spread it (10 .. 12 EUR/h: 2.78
    # .. 3.33)
    assert band_own["p5"] < 3.0556 < band_own["p95"]
    assert band_mix == pytest.approx(band_own, rel=1e-12)


# --- under a plan: the mix over the horizon (docs/decision.md "Mixes", "Under a plan") -----

#: two levels: 12 hours at weight 1, 12 at weight 3 (mean 2): the hours run at 0.5 x and
#: 1.5 x the day's mean
TWO_LEVELS = [1.0] * 12 + [3.0] * 12
#: the own node of OWN (1,000 tokens/s of capacity at 11 EUR/h) ordered one month before it
#: serves; the demand starts at a mean of 2,000 tokens/s and doubles every month (growth
#: 2^12 - 1 = 4,095 a year: (1 + g)^((m - 1) / 12) = 2^(m - 1)): 2,000, 4,000 and 8,000
#: tokens/s in months 1, 2 and 3; peak factor 1.5 (the profile's peak over its mean)
GROWING = {**OWN, "demand_tokens_per_day": 2000 * 86400.0, "peak_factor": 1.5,
           "demand_growth_per_year": 4095.0, "lead_time_months": 1.0}
#: 3 months discounted at 12 % a year: 1 % a month, v_m = 1.01^-m
SHORT = plan.Path(months=3, rate_per_year=0.12, rate_source="test")


def test_a_mix_over_a_short_horizon_by_hand() -> None:
    # The sizes go up to the pure own fleet at the largest month: 8,000 x 1.5 / 1,000 = 12.
    # A node costs 11 EUR an hour and serves up to 3.6 Mtok an hour, 21.6 EUR of API: it pays
    # in a month when it is busy more than 11 / 21.6 x 24 = 12.2 hours a day, so a node busy
    # all day pays, one busy only the 12 peak hours (259.2 < 264 EUR a day) does not.
    # Month 1 (2,000 tokens/s: 1,000 off-peak, 3,000 at the peak): the base does not serve
    # yet (its share clip(1 - 1, 0, 1) = 0): the API serves 172.8 Mtok/day x 30.41667 =
    # 5,256 Mtok, 31,536 EUR, whatever the base's size.
    # Month 2 (4,000: 2,000 off-peak, 6,000 at the peak): nodes 1-2 busy all day, 3-6 at the
    # peak only. Month 3 (8,000: 4,000 and 12,000): nodes 1-4 all day, 5-12 at the peak.
    # Node 3 and 4 lose 4.8 EUR a day in month 2 and gain 518.4 - 264 = 254.4 in month 3;
    # node 5 loses in both: the horizon's base is 4 nodes.
    # At 4 nodes: month 2 the base serves 2,000 x 12 h + 4,000 x 12 h = 259.2 Mtok/day
    # (7,884 Mtok), the API 2,000 x 12 h = 86.4 Mtok/day = 2,628 Mtok (15,768 EUR), the
    # nodes 4 x 11 x 730 = 32,120 EUR: 47,888 EUR for 10,512 Mtok. Month 3 the base serves
    # 4,000 all day (10,512 Mtok), the API 8,000 x 12 h = 345.6 Mtok/day = 10,512 Mtok
    # (63,072 EUR): 95,192 EUR for 21,024 Mtok.
    # Discounted: 31,536 / 1.01 + 47,888 / 1.01^2 + 95,192 / 1.01^3 = 170,560.60 EUR over
    # 5,256 / 1.01 + 10,512 / 1.01^2 + 21,024 / 1.01^3 = 35,914.52 Mtok: CPM 4.749071
    # EUR/Mtok; the base serves (7,884 + 10,512) / 36,792 = 0.5 of the horizon's tokens.
    largest = mix.max_base_over(GROWING, SHORT)
    assert largest == 12
    horizon = mix.over_horizon(GROWING, API, np.arange(largest + 1), TWO_LEVELS, WANTED, SHORT)
    best = mix.best_size(horizon, 4, 3, None)
    assert best == 4
    assert horizon.objective[4, 0] == pytest.approx(170_560.60, abs=0.01)
    assert horizon.total(horizon.mtok_pv)[4, 0] == pytest.approx(35_914.52, abs=0.01)
    assert horizon.blended["cpm_eur_per_mtok"][4, 0] == pytest.approx(4.749071, abs=1e-6)
    assert horizon.base_share[4, 0] == pytest.approx(0.5)
    # each part's own: the API at its 6 EUR/Mtok; the nodes 64,240 EUR undiscounted
    assert horizon.part("burst")["cpm_eur_per_mtok"][4, 0] == pytest.approx(6.0)
    assert horizon.cost_eur["base"][4, 0] == pytest.approx(2 * 32_120.0)
    # no base at all: the API's 6 EUR/Mtok every month
    assert horizon.blended["cpm_eur_per_mtok"][0, 0] == pytest.approx(6.0)


def test_under_a_plan_growth_makes_more_own_nodes_pay() -> None:
    # the first month alone (2,000 tokens/s: 1,000 off-peak, 3,000 at the peak) pays for one
    # node (busy all day); nodes 2-3 would serve the peak only and lose 4.8 EUR a day
    month = mix.evaluate(GROWING, API, np.arange(mix.max_base_instances(GROWING) + 1),
                         TWO_LEVELS, WANTED)
    assert mix.best_size(month, 4, 3, None) == 1
    horizon = mix.over_horizon(GROWING, API, np.arange(13), TWO_LEVELS, WANTED, SHORT)
    assert mix.best_size(horizon, 4, 3, None) == 4
    # the policy reads the horizon's share: at least 55 % at level 4 needs 5 nodes, which
    # serve in month 2 2,000 x 12 h + 5,000 x 12 h = 302.4 Mtok/day (9,198 Mtok) and in month
    # 3 4,000 x 12 h + 5,000 x 12 h = 388.8 Mtok/day (11,826 Mtok): 21,024 / 36,792 = 0.5714
    # (4 nodes: 0.5)
    assert horizon.base_share[5, 0] == pytest.approx(21_024 / 36_792)
    assert mix.best_size(horizon, 4, 3, mix.Policy(level=4, share=0.55)) == 5


def test_the_horizon_s_draws_go_through_together() -> None:
    # the API's price drawn at 4 and 8 EUR/Mtok at 4 nodes: the nodes' 2 x 32,120 EUR
    # (months 2 and 3) discounted are 32,120 x (1.01^-2 + 1.01^-3) = 62,662.46 EUR; the API
    # serves 5,256, 2,628 and 10,512 Mtok in months 1-3 (test_a_mix_over_a_short_horizon_by_
    # hand), discounted 5,203.960 + 2,576.218 + 10,202.844 = 17,983.022 Mtok
    api = {**API, "price_eur_per_mtok": np.array([[4.0, 8.0]])}
    horizon = mix.over_horizon(GROWING, api, [4], TWO_LEVELS, WANTED, SHORT)
    assert horizon.objective.shape == (1, 2)
    assert horizon.objective[0].tolist() == pytest.approx(
        [62_662.46 + 4 * 17_983.022, 62_662.46 + 8 * 17_983.022], abs=0.02)


def test_the_horizon_s_months_in_chunks_are_the_months_at_once() -> None:
    # over_horizon evaluates the months together, in chunks of months when sizes x draws x
    # months x 24 hours is large: one month a chunk (chunk_entries=1) must give every figure
    # bit for bit as all three months in one chunk. The lead time drawn at 0.5, 1.5 and 2.5
    # months makes the burst serve alone a share of months 1, 2 and 3 in some draw (the base
    # at 0 evaluated in every chunk), the API's price drawn at 4, 6 and 8 EUR/Mtok.
    own = {**GROWING, "lead_time_months": np.array([[0.5, 1.5, 2.5]])}
    api = {**API, "price_eur_per_mtok": np.array([[4.0, 6.0, 8.0]])}
    whole = mix.over_horizon(own, api, np.arange(13), TWO_LEVELS, WANTED, SHORT)
    chunked = mix.over_horizon(own, api, np.arange(13), TWO_LEVELS, WANTED, SHORT,
                               chunk_entries=1)
    for name in ("cost_pv_eur", "cost_eur", "mtok_pv", "mtok", "cost_by_month",
                 "mtok_by_month"):
        for part in mix.PARTS:
            assert np.array_equal(getattr(chunked, name)[part], getattr(whole, name)[part])
    for part in mix.PARTS:
        for k, v in whole.weighted[part].items():
            assert np.array_equal(chunked.weighted[part][k], v, equal_nan=True)
    # by hand at 4 nodes, lead 1.5 (the middle draw, 6 EUR/Mtok): month 1 the API alone
    # (5,256 Mtok); month 2 the base serves half the month: 0.5 x 7,884 = 3,942 Mtok, the API
    # 0.5 x 2,628 + 0.5 x 10,512 (alone) = 6,570 Mtok; month 3 10,512 Mtok each
    # (test_a_mix_over_a_short_horizon_by_hand): the base 14,454 of 36,792 Mtok = 0.39286,
    # its nodes 0.5 x 32,120 + 32,120 = 48,180 EUR, the API 22,338 x 6 = 134,028 EUR
    assert chunked.mtok_by_month["burst"][4, 1].tolist() == pytest.approx(
        [5_256.0, 6_570.0, 10_512.0])
    assert chunked.base_share[4, 1] == pytest.approx(14_454 / 36_792)
    assert chunked.cost_eur["base"][4, 1] == pytest.approx(48_180.0)
    assert chunked.cost_eur["burst"][4, 1] == pytest.approx(134_028.0)


def test_a_month_the_burst_serves_nothing_adds_nothing_in_every_draw() -> None:
    # Each draw's horizon is its own, whatever the other draws (as plan.horizon's fallback:
    # a month the burst serves nothing adds nothing, even where it lacks the figure). The
    # lead time drawn at 0 and 1 month, the API without a price: in draw 0 the 12 nodes
    # serve every month from the first (12,000 tokens/s at month 3's peak), the burst nothing,
    # so its missing price costs nothing: 12 x 11 EUR x 730 h = 96,360 EUR a month, 289,080
    # over the 3 months for the 36,792 Mtok of test_a_mix_over_a_short_horizon_by_hand. Draw
    # 1 leaves month 1 to the API alone: its cost is unknown (NaN).
    api = {**API, "price_eur_per_mtok": np.nan}
    own = {**GROWING, "lead_time_months": np.array([[0.0, 1.0]])}
    both = mix.over_horizon(own, api, [12], TWO_LEVELS, WANTED, SHORT)
    assert both.total(both.cost_eur)[0].tolist()[0] == pytest.approx(289_080.0)
    assert np.isnan(both.total(both.cost_eur)[0, 1])
    assert both.mtok["base"][0, 0] == pytest.approx(36_792.0)
    alone = mix.over_horizon({**GROWING, "lead_time_months": 0.0}, api, [12], TWO_LEVELS,
                             WANTED, SHORT)
    for name in ("cost_pv_eur", "cost_eur", "mtok_pv", "mtok"):
        for part in mix.PARTS:
            assert getattr(both, name)[part][0, 0] == getattr(alone, name)[part][0, 0]


@pytest.mark.parametrize("profile", [TWO_LEVELS, [1.0] * 16 + [3.0] * 6 + [1.0] * 2,
                                     list(range(1, 25)), [2.0] * 24])
def test_the_day_s_split_is_the_hours_summed_as_numpy_sums_them(profile: list[float]) -> None:
    # split adds the hours without a (..., 24) array of them, each weight's hour computed
    # once: its figures must be numpy's sum, max and mean over the last axis of the hourly
    # array, bit for bit (the order of a sum moves its last bit), for demands and capacities
    # spread over 12 orders of magnitude, each hour below, at or above the capacity
    rng = np.random.default_rng(7)
    day = 10.0 ** rng.uniform(0, 12, (5, 400, 3))
    capacity = 10.0 ** rng.uniform(-2, 7, (5, 400, 3))
    capacity[0, :, 0] = 0.0  # no base: the burst serves the whole day
    hourly = mix.hourly_tokens_per_s(day, profile)
    base = np.minimum(hourly, capacity[..., None])
    burst = hourly - base
    mean = burst.mean(axis=-1)
    peak = np.divide(burst.max(axis=-1), mean, out=np.ones_like(mean), where=mean > 0)
    base_day, burst_day, burst_peak, _ = mix.split(day, profile, capacity)
    assert np.array_equal(base_day, base.sum(axis=-1) * 3600.0)
    assert np.array_equal(burst_day, burst.sum(axis=-1) * 3600.0)
    assert np.array_equal(burst_peak, peak)
    # and any number of hours below numpy's block of 128: numpy's pairwise order
    for n in (1, 7, 8, 23, 24, 31, 127):
        x = 10.0 ** rng.uniform(-3, 9, (n, 50))
        assert np.array_equal(mix.sum_hours(list(x)), np.ascontiguousarray(x.T).sum(axis=-1))


def test_the_example_s_hybrid_is_ranked_under_its_plan(db: Path, tmp_path: Path) -> None:
    # the bundled example plans 48 months (500 Mtok/day growing 30 % a year, the H200 nodes
    # serving after 4 months): the hybrid is computed over the horizon and ranked, no longer
    # excluded as "not computed"
    doc = run_json(db)
    found = {c["id"]: c for c in doc["candidates"]}
    hybrid = found["hybrid-fr-h200-api"]
    assert hybrid["eligible"] and hybrid["exclusion_reason"] is None
    assert hybrid["pareto_rank"] is not None
    split = hybrid["mix"]
    assert split["split_over"] == "horizon"
    # the policy (80 % of the tokens at level 4) holds over the horizon's tokens
    assert split["policy_share_met"] >= 0.8
    assert split["tokens_share_by_level"][0]["level"] == 4
    # the API is 4.5 EUR/Mtok in every month, so its own horizon CPM too
    burst = next(p for p in split["parts"] if p["part"] == "burst")
    assert burst["cpm_eur_per_mtok"] == pytest.approx(4.5)
    # the demand grows: the horizon's base is larger than the [demand] month's 3 nodes
    # (docs/decision.md "Mixes", the bundled example), its first month dearer than its horizon
    assert split["base_instances"] > 3
    assert hybrid["detail"]["first_month_cpm_eur_per_mtok"] > hybrid["cpm_eur_per_mtok"]
    band = hybrid["uncertainty"]["cpm_eur_per_mtok"]
    assert band["p5"] < hybrid["cpm_eur_per_mtok"] < band["p95"]
    assert any("plan over 48 months" in n for n in hybrid["notes"])


def test_without_a_plan_the_split_is_the_month_s(db: Path, tmp_path: Path) -> None:
    hybrid = next(c for c in run_json(db, without_plan(tmp_path))["candidates"]
                  if c["id"] == "hybrid-fr-h200-api")
    assert hybrid["mix"]["split_over"] == "month"
    assert hybrid["mix"]["base_instances"] == 3


def test_what_would_change_it_searches_the_plan_s_horizon(db: Path, tmp_path: Path) -> None:
    # under the example's plan the hybrid is the runner-up, but lowering the H200 capex the
    # first to undercut OVHcloud is FR H200 alone: the capex at which the choice changes is
    # where its horizon CPM (its nodes from month 4, OVHcloud before) meets OVHcloud's
    # 2.074074. The example rerun with that capex (the gpus line lowered by the difference;
    # servers, network and installation 62,000) gives the two the same CPM; the hybrid, at
    # its 5 nodes, is dearer there. The [demand] month's search named the hybrid at 206,392
    # EUR (test_run.py, without the plan): a month's figures, not these.
    doc = run_json(db)
    rec = doc["recommendation"]
    assert rec["runner_up"] == "hybrid-fr-h200-api"
    capex = next(w for w in rec["what_would_change_it"] if w["key"] == "tco.hgx-h200.capex")
    assert capex["text"].startswith("onprem-fr-h200-fp8 becomes the choice if")
    text = EXAMPLE.read_text(encoding="utf-8")
    line = "capex = { gpus = { low = 250_000, mode = 280_000, high = 320_000 }"
    at = text.index("[tco.hgx-h200]")
    start = text.index(line, at)
    moved = (text[:start] + f"capex = {{ gpus = {capex['threshold'] - 62_000:.6f}"
             + text[start + len(line):])
    path = tmp_path / "at-threshold.toml"
    path.write_text(moved, encoding="utf-8")
    found = {c["id"]: c for c in run_json(tmp_path / "again.duckdb", str(path))["candidates"]}
    assert found["onprem-fr-h200-fp8"]["cpm_eur_per_mtok"] == pytest.approx(
        found["ovhcloud-h100x4-fp8"]["cpm_eur_per_mtok"], rel=1e-5)
    assert found["hybrid-fr-h200-api"]["mix"]["base_instances"] == 5
    assert (found["hybrid-fr-h200-api"]["cpm_eur_per_mtok"]
            > found["ovhcloud-h100x4-fp8"]["cpm_eur_per_mtok"])


def test_under_the_example_s_plan_the_split_s_columns_say_the_horizon(tmp_path: Path) -> None:
    # the bundled example plans 48 months: its hybrid's split is the horizon's (split_over),
    # its tokens and cost a month the horizon's mean and its cost shares the discounted cost's
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", "--db", str(tmp_path / "s.duckdb"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    hybrid = next(c for c in doc["candidates"] if c["id"] == "hybrid-fr-h200-api")
    assert hybrid["mix"]["split_over"] == "horizon"
    page = (out / "scorecard.html").read_text(encoding="utf-8")
    assert "<th>Mtok a month (horizon&#x27;s mean)</th>" in page
    assert "<th>Share of discounted cost</th>" in page
    assert "<th>Mtok a month</th>" not in page


def test_a_mix_s_monte_carlo_is_the_same_on_one_thread_or_beside_the_blocks(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the bundled example's mix is drawn on the Monte Carlo's pool, beside the blocks, when
    # it has more than one thread: every figure of the document is the one thread's
    from pipeline.engine import uncertainty

    docs = []
    for threads in (1, 2):
        monkeypatch.setattr(uncertainty, "workers", lambda threads=threads: threads)
        doc = run_json(db)
        doc.pop("generated_at")
        docs.append(doc)
    [mixed] = [c for c in docs[1]["candidates"] if c["deployment"] == "mix"]
    assert mixed["uncertainty"]  # drawn: its percentiles are in the document
    assert docs[0] == docs[1]


def test_a_mix_off_the_shortlist_of_a_large_proposal(tmp_path: Path) -> None:
    # more than SHORTLIST_ABOVE candidates: the Monte Carlo draws the shortlist only. A node
    # as "own" but at 1 EUR/h (CPM 1/11 of own's 6.1111 = 0.5556 EUR/Mtok, level 4) is far
    # below the mix's 4.0370 with the mix's own carbon or better: the mix is off the
    # shortlist. Before, its draws were still asked for, and the run stopped (exit 3,
    # "ValueError: 'hybrid' is not in list")
    from pipeline.engine.ranking.pareto import SHORTLIST_ABOVE

    cheap = candidate("cheap", throughput='{ tokens_per_s = 1250, source = "bench" }',
                      cost='{ eur_per_hour = 1.0, source = "quote" }')
    fillers = [candidate(f"c{i:03d}") for i in range(SHORTLIST_ABOVE)]
    doc = _json(tmp_path, _write(tmp_path, PROFILE, DEMAND_TABLE, OWN_BLOCK, API_BLOCK,
                                 MIX_BLOCK, cheap, *fillers))
    found = {c["id"]: c for c in doc["candidates"]}
    hybrid = found["hybrid"]
    assert len(found) == SHORTLIST_ABOVE + 4
    assert found["cheap"]["shortlisted"] and not hybrid["shortlisted"]
    # its point figures as in the small proposal; no draws, as any candidate off the list
    assert hybrid["cpm_eur_per_mtok"] == pytest.approx(4.0370, abs=1e-4)
    assert hybrid["uncertainty"] == {} and hybrid["p_frontier"] is None
    assert doc["recommendation"]["candidate"] == "cheap"
