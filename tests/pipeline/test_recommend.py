"""The recommendation's rules and its solved thresholds, on hand-checkable cases."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine import uncertainty
from pipeline.engine.metrics import evaluate
from pipeline.engine.ranking import recommend
from pipeline.engine.ranking.pareto import pareto_ranks

TRADE_OFF = pl.DataFrame({
    "id": ["a", "b", "c"], "cpm_eur_per_mtok": [1.0, 2.0, 1.5],
    "carbon_gco2e_per_mtok": [100.0, 20.0, 50.0], "pareto_rank": [1, 1, 1],
})


def test_each_rule_orders_the_eligible_candidates() -> None:
    assert recommend.order(TRADE_OFF, recommend.Rule.of("cpm")) == ["a", "c", "b"]
    assert recommend.order(TRADE_OFF, recommend.Rule.of("carbon")) == ["b", "c", "a"]
    # weights 1:1 (normalised to 0.5 each), each objective scaled 0 (best) .. 1 (worst):
    # cpm a 0, b 1, c 0.5; carbon (20 best, 100 worst) a 1, b 0, c 30 / 80 = 0.375
    # -> scores a 0.5, b 0.5, c 0.4375: c first, then a and b tied (id order)
    rule = recommend.Rule.of({"weights": {"cpm": 1.0, "carbon": 1.0}})
    assert rule.weights == {"cpm": 0.5, "carbon": 0.5}
    assert recommend.order(TRADE_OFF, rule) == ["c", "a", "b"]


def _two_nodes() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """a: 11 EUR/h, b: 14 EUR/h, both 4,000 tokens/s (a's range 3,000 .. 5,000), every hour
    busy: (table, point, inputs, tornado) as the scorecard hands them to `recommend`."""
    static = pl.DataFrame({"id": ["a", "b"], "cost_model": ["declared"] * 2,
                           "capacity": ["provisioned"] * 2})
    rows = []
    for cid, price, tps in (("a", 11.0, (3000.0, 4000.0, 5000.0)),
                            ("b", 14.0, (4000.0, 4000.0, 4000.0))):
        rows += [(cid, "tokens_per_s", f"{cid}.tps", *tps),
                 (cid, "price_eur_per_hour", f"{cid}.price", price * 0.9, price, price * 1.1),
                 (cid, "utilisation", f"{cid}.u", 1.0, 1.0, 1.0)]
    inputs = pl.DataFrame([(*r, "declared", "test") for r in rows],
                          schema=["id", "input", "key", "low", "mode", "high", "grade",
                                  "source"], orient="row")
    point = uncertainty.point_frame(static, inputs)
    table = static.join(evaluate(point).drop("cost_model", "capacity"), on="id").with_columns(
        eligible=pl.lit(True), exclusion_reason=pl.lit(None, pl.String()))
    table = table.join(pareto_ranks(table, ["cpm"]), on="id")
    return table, point, inputs, uncertainty.tornado(static, inputs)


def test_the_threshold_is_where_the_two_cpms_meet() -> None:
    # a: 11 EUR/h, b: 14 EUR/h, both 4,000 tokens/s, every hour busy: CPM 0.7639 and 0.9722.
    # b becomes the choice when a's goodput falls below 4,000 x 11 / 14 = 3,142.86 tokens/s
    # (a's range 3,000 .. 5,000 holds it); b's price would have to fall below 11 EUR/h.
    table, point, inputs, tornado = _two_nodes()
    result = recommend.recommend(table, point, inputs, tornado, {"a": 0.9, "b": 0.1},
                                 recommend.Rule.of("cpm"), has_demand=False)
    assert (result["candidate"], result["runner_up"]) == ("a", "b")
    assert result["monthly_cost_eur"] is None and "no [demand]" in result["monthly_cost_reason"]
    assert result["p_chosen_cheapest"] == 0.9
    change = {w["key"]: w for w in result["what_would_change_it"]}
    assert change["a.tps"]["threshold"] == pytest.approx(4000 * 11 / 14, rel=1e-6)
    assert change["a.tps"]["direction"] == "falls" and change["a.tps"]["within_stated_range"]
    assert change["b.price"]["threshold"] == pytest.approx(11.0, rel=1e-6)
    assert change["b.price"]["within_stated_range"] is False  # 12.6 .. 15.4 EUR/h
    assert change["a.tps"]["text"] == ("b becomes the choice if a's tokens_per_s falls below "
                                       "3143 tokens/s (now 4000)")




def test_keys_solved_together_give_each_keys_threshold_alone() -> None:
    # The crossing search evaluates every key's trials in one frame per pass: a key's
    # threshold must not depend on which other keys share the frame. b.u (utilisation 1.0, a
    # share: searched 0.01 .. 1) has no crossing: b's CPM 14 / (4,000 x u x 3,600) x 1e6 only
    # rises as u falls below 1, so b (already dearer) never becomes the choice; it drops out
    # in the first pass while the others go on. a.tps crosses at 4,000 x 11 / 14 = 3,142.86,
    # a.u at 11 / 14 = 0.7857 (a's CPM 11 / (4,000 x u x 3,600) x 1e6 meets b's 0.9722),
    # b.price at 11 EUR/h.
    table, point, inputs, _ = _two_nodes()
    rule = recommend.Rule.of("cpm")
    scale = recommend.Scale.over(table, rule)
    points = recommend.points_of(point, ("a", "b"))
    keys = ["a.tps", "b.u", "a.u", "b.price"]
    wheres = [inputs.filter(pl.col("key") == k) for k in keys]
    together = recommend._solve_all(points, wheres, "a", ["b"], rule, scale)
    alone = [recommend._solve_all(points, [w], "a", ["b"], rule, scale)[0] for w in wheres]
    assert together == alone  # exactly: the same floats
    assert together[0] == (pytest.approx(4000 * 11 / 14, rel=1e-6), "b")
    assert together[1] is None
    assert together[2] == (pytest.approx(11 / 14, rel=1e-6), "b")
    assert together[3] == (pytest.approx(11.0, rel=1e-6), "b")


def test_a_weighted_rule_with_sovereignty_solves_on_the_fixed_level() -> None:
    # a (11 EUR/h, level 2) and b (14 EUR/h, level 4), weights cpm 0.6, sovereignty 0.4, each
    # scaled 0 (best eligible) .. 1 (worst): a 0.6 x 0 + 0.4 x 1 = 0.4, b 0.6 x 1 + 0.4 x 0 =
    # 0.6, so a is chosen. The level is no metric step: each candidate keeps its own while
    # b's price moves (the scale fixed): b's score meets a's 0.4 when b's CPM is a's plus 2/3
    # of the CPM gap, i.e. (CPM proportional to price, same goodput, every hour busy) at
    # 11 + 2/3 x (14 - 11) = 13 EUR/h. (The sovereignty column is not among the inputs the
    # steps read: this rule failed with a missing column before.)
    table, point, inputs, tornado = _two_nodes()
    table = table.drop("pareto_rank").with_columns(
        sovereignty_level=pl.Series([2, 4], dtype=pl.Int64))
    table = table.join(pareto_ranks(table, ["cpm", "sovereignty"]), on="id")
    rule = recommend.Rule.of({"weights": {"cpm": 0.6, "sovereignty": 0.4}})
    result = recommend.recommend(table, point, inputs, tornado, {"a": 1.0}, rule,
                                 has_demand=False)
    assert (result["candidate"], result["runner_up"]) == ("a", "b")
    change = {w["key"]: w for w in result["what_would_change_it"]}
    assert change["b.price"]["threshold"] == pytest.approx(13.0, rel=1e-6)
    assert change["b.price"]["direction"] == "falls"


def test_a_rule_on_a_metric_some_candidates_lack_ranks_them_last() -> None:
    # carbon is not among the objectives: a candidate without it (no power figure) is
    # eligible but scores worst under choose = "carbon"
    frame = TRADE_OFF.with_columns(pl.Series("carbon_gco2e_per_mtok", [None, 20.0, 50.0]))
    assert recommend.order(frame, recommend.Rule.of("carbon")) == ["b", "c", "a"]


def test_many_candidates_give_pairs_of_the_choice_and_the_frontier(db: Path, tmp_path: Path
                                                                    ) -> None:
    # 45 eligible candidates (more than PAIRWISE_MAX = 40), the same node at 4,000 to 4,044
    # tokens/s: c44 is the fastest at the same price, so the cheapest; its range overlaps the
    # others'. The chosen candidate and the runner-up are always among the pairs given, and
    # pairwise_scope lists exactly the candidates of the pairs (n x (n - 1) / 2 of them).
    blocks = [candidate(f"c{i:02d}", throughput=(
        f"{{ tokens_per_s = {{ low = {3600 + i}, mode = {4000 + i}, high = {4200 + i} }}, "
        'source = "bench" }')) for i in range(45)]
    path = tmp_path / "many.toml"
    path.write_text(proposal("many", *blocks), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    scope, pairs, rec = doc["pairwise_scope"], doc["pairwise"], doc["recommendation"]
    assert rec["candidate"] == "c44"
    assert {rec["candidate"], rec["runner_up"]} <= set(scope["candidates"])
    assert len(scope["candidates"]) <= 40 and "runner-up" in scope["rule"]
    frontier = {c["id"] for c in doc["candidates"] if c["pareto_rank"] == 1}
    assert frontier <= set(scope["candidates"])  # a frontier this small is given whole
    named = {p["a"] for p in pairs} | {p["b"] for p in pairs}
    assert named == set(scope["candidates"])
    assert len(pairs) == scope["pairs"] == len(named) * (len(named) - 1) // 2


def test_a_shared_key_names_who_is_chosen_at_its_threshold(db: Path, tmp_path: Path) -> None:
    # the bundled example: the H200 TCO profile's capex (342,000 EUR: GPUs 280,000 + servers
    # 45,000 + network 12,000 + installation 5,000) is shared by the two own H200 nodes and
    # the hybrid (FR H200 + API). Lowering it, the runner-up (the hybrid) would meet the
    # choice's CPM near 170,900 EUR, but the pure FR H200 node, whose horizon CPM falls with
    # it too, meets OVHcloud's 2.074074 first, near 195,100 EUR: the choice changes there,
    # to FR H200.
    example = Path(__file__).resolve().parents[2] / "pipeline" / "example_proposal.toml"
    text = example.read_text("utf-8")
    result = CliRunner().invoke(app, ["run", str(example), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    rec = json.loads(result.stdout)["recommendation"]
    (capex,) = [w for w in rec["what_would_change_it"] if w["key"] == "tco.hgx-h200.capex"]
    assert capex["direction"] == "falls" and 194_000 < capex["threshold"] < 196_000
    assert rec["runner_up"] == "hybrid-fr-h200-api"
    assert capex["text"] == ("onprem-fr-h200-fp8 becomes the choice if capex_eur "
                             "(tco.hgx-h200.capex, shared by 3 candidates) falls below "
                             "195,100 EUR (now 342,000)"), capex["text"]
    # the check: the example rerun with the capex 200 EUR either side of the threshold
    # (the GPUs line lowered, servers, network and installation 62,000): FR H200 below it,
    # OVHcloud still above it
    ranged = "gpus = { low = 250_000, mode = 280_000, high = 320_000 }"
    assert text.count(ranged) == 2
    for offset, chosen in ((-200, "onprem-fr-h200-fp8"), (200, "ovhcloud-h100x4-fp8")):
        moved = tmp_path / f"capex{offset}.toml"
        moved.write_text(text.replace(ranged, f"gpus = {capex['threshold'] - 62_000 + offset:.0f}",
                                      1).replace("draws = 10_000", "draws = 500"),
                         encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(moved), "--db", str(db), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["recommendation"]["candidate"] == chosen, offset


def test_the_nearest_change_is_named_whoever_overtakes(db: Path, tmp_path: Path) -> None:
    # a: 50 EUR/h declared, 4,000 tokens/s = 14.4 Mtok/h: CPM 50 / 14.4 = 3.4722 EUR/Mtok.
    # b and c share the TCO profile t: capex C over 12 months, no interest, nothing else but
    # the electricity at 0.5 EUR/kWh (PUE 1): capital C / 12 a month = C / 8,760 EUR/h
    # (100 EUR/h at 876,000). b: 4,000 tokens/s, 20 kW (10 EUR/h): (100 + 10) / 14.4 =
    # 7.6389; c: 3,600 tokens/s = 12.96 Mtok/h, 2 kW (1 EUR/h): 101 / 12.96 = 7.7932. So a is
    # chosen, b is the runner-up. Lowering C, b meets a when C / 8,760 + 10 = 50, C = 350,400;
    # c meets a first, when C / 8,760 + 1 = 3.4722 x 12.96 = 45, C = 385,440 (b then
    # (44 + 10) / 14.4 = 3.75, still dearer than a): c becomes the choice there.
    tco = ('[tco.t]\nsource = "quote"\ncapex = { gpus = { low = 800_000, mode = 876_000, '
           'high = 950_000 } }\namortisation_months = 12\n'
           'electricity = { basis = "contract", eur_per_kwh = 0.5 }\n')
    blocks = [candidate("a", pue="1.0", cost='{ eur_per_hour = 50.0, source = "quote" }'),
              candidate("b", pue="1.0", cost='{ tco = "t" }',
                        power='{ watts = 20000, boundary = "gpu_board", source = "TDP" }'),
              candidate("c", pue="1.0", cost='{ tco = "t" }',
                        throughput='{ tokens_per_s = 3600, source = "bench" }',
                        power='{ watts = 2000, boundary = "gpu_board", source = "TDP" }')]
    path = tmp_path / "three.toml"
    path.write_text(proposal("three", tco, *blocks), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    cpm = {c["id"]: c["cpm_eur_per_mtok"] for c in doc["candidates"]}
    assert cpm == pytest.approx({"a": 50 / 14.4, "b": 110 / 14.4, "c": 101 / 12.96})
    rec = doc["recommendation"]
    assert (rec["candidate"], rec["runner_up"]) == ("a", "b")
    (capex,) = [w for w in rec["what_would_change_it"] if w["key"] == "tco.t.capex"]
    assert capex["threshold"] == pytest.approx(385_440, rel=1e-6)
    assert capex["text"] == ("c becomes the choice if capex_eur (tco.t.capex, shared by 2 "
                             "candidates) falls below 385,400 EUR (now 876,000)")


def test_a_mix_without_nodes_shares_p_cheapest_with_its_burst(db: Path, tmp_path: Path
                                                               ) -> None:
    # own: 200 EUR/h for 4,000 tokens/s, 13.9 EUR/Mtok even when always busy; the API 6
    # EUR/Mtok of output (5 .. 7): the mix of the two keeps no node (no hour pays one) and
    # is the API itself, draw by draw. "api" is chosen (equal score and rank: the id), and
    # each of the two is the cheapest in half of each draw: P = 0.5, not 1 for the first
    # id; pairwise neither is lower.
    api = candidate("api", label='"an API"', deployment='"api"', provider='"scaleway"',
                    throughput='{ tokens_per_s = 1000, source = "assumed" }',
                    cost='{ input_eur_per_mtok = 0, output_eur_per_mtok = { low = 5, '
                         'mode = 6, high = 7 }, source = "list price" }')
    own = candidate("own", cost='{ eur_per_hour = 200.0, source = "quote" }')
    hybrid = ('[[candidates]]\nid = "hybrid"\nlabel = "own base, API burst"\n'
              'mix = { base = "own", burst = "api" }\n')
    demand = ("[demand]\ntokens_per_day = 259_200_000\npeak_factor = 2\nheadroom = 0.2\n"
              "prompt_tokens = 1000\noutput_tokens = 250\n[uncertainty]\ndraws = 200\n"
              "[workload]\nhourly_profile = [" + ", ".join(["1"] * 24) + "]\n")
    path = tmp_path / "twin.toml"
    path.write_text(proposal("twin", demand, own, api, hybrid), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    found = {c["id"]: c for c in doc["candidates"]}
    assert found["hybrid"]["mix"]["base_instances"] == 0
    assert found["hybrid"]["cpm_eur_per_mtok"] == found["api"]["cpm_eur_per_mtok"]
    rec = doc["recommendation"]
    assert rec["candidate"] == "api"
    assert rec["p_chosen_cheapest"] == pytest.approx(0.5)
    pair = {(p["a"], p["b"]): p["p_a_lower"] for p in doc["pairwise"]}
    assert pair[("api", "hybrid")] == 0.0
    # the equal twin never overtakes: no entry names it
    assert not any(w["text"].startswith("hybrid ") for w in rec["what_would_change_it"])
