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
    together = recommend._solve_all(points, wheres, "a", "b", rule, scale)
    alone = [recommend._solve_all(points, [w], "a", "b", rule, scale)[0] for w in wheres]
    assert together == alone  # exactly: the same floats
    assert together[0] == pytest.approx(4000 * 11 / 14, rel=1e-6)
    assert together[1] is None
    assert together[2] == pytest.approx(11 / 14, rel=1e-6)
    assert together[3] == pytest.approx(11.0, rel=1e-6)


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
    # the hybrid (FR H200 + API). Lowering it, the runner-up (the hybrid) meets the choice's
    # CPM near 170,900 EUR, but the pure FR H200 node, whose CPM falls with it too, is
    # cheaper still there: it, not the hybrid, is the choice at that value.
    example = Path(__file__).resolve().parents[2] / "pipeline" / "example_proposal.toml"
    text = example.read_text("utf-8")
    result = CliRunner().invoke(app, ["run", str(example), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    rec = json.loads(result.stdout)["recommendation"]
    (capex,) = [w for w in rec["what_would_change_it"] if w["key"] == "tco.hgx-h200.capex"]
    assert capex["direction"] == "falls" and 160_000 < capex["threshold"] < 180_000
    assert rec["runner_up"] == "hybrid-fr-h200-api"
    assert "becomes the choice" not in capex["text"]
    # "ties": meets the choice's CPM (the text fits one line of the report's first screen)
    assert capex["text"] == ("hybrid-fr-h200-api ties if capex_eur (tco.hgx-h200.capex) falls "
                             "below 170,900 EUR (now 342,000); onprem-fr-h200-fp8 is chosen "
                             "there"), capex["text"]
    # the check: the example with the capex at 170,000 EUR (GPUs 108,000 + 45,000 + 12,000
    # + 5,000), just below the threshold, chooses FR H200
    ranged = "gpus = { low = 250_000, mode = 280_000, high = 320_000 }"
    assert text.count(ranged) == 2
    cheaper = tmp_path / "capex170.toml"
    cheaper.write_text(text.replace(ranged, "gpus = 108_000")
                       .replace("draws = 10_000", "draws = 500"), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(cheaper), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["recommendation"]["candidate"] == "onprem-fr-h200-fp8"
