"""`scorecard run` end to end on the bundled example, through the real CLI and a real DuckDB."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.scorecard import CONTRACT_KEYS

runner = CliRunner()
EXAMPLE = Path(__file__).parents[2] / "pipeline" / "example_proposal.toml"


def run_json(db: Path, *args: str) -> dict:
    result = runner.invoke(app, ["run", "--db", str(db), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_contract_on_the_bundled_example(db: Path) -> None:
    doc = run_json(db)
    for key in ("proposal", "vintage", "generated_at", "code_version", "sources", "candidates"):
        assert key in doc
    assert len(doc["candidates"]) >= 7
    for c in doc["candidates"]:
        assert set(CONTRACT_KEYS) <= set(c), c["id"]
        assert "notes" in c
    assert doc["sources"], "market figures must cite their sources"
    for s in doc["sources"]:
        assert s["url"].startswith("http") and s["licence"] and s["snapshot_sha256"]


def without_plan(tmp_path: Path) -> str:
    """The bundled example without its [horizon] (the plan): the first month's figures, as
    the example gave them before the plan (docs/decision.md worked them at the demand)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    start = text.index("[horizon]")
    end = text.index("\n\n", start)
    path = tmp_path / "no-plan.toml"
    path.write_text(text[:start] + text[end + 2:], encoding="utf-8")
    return str(path)


def test_frontier_dominance_and_exclusions_of_the_example(db: Path, tmp_path: Path) -> None:
    c = {x["id"]: x for x in run_json(db, without_plan(tmp_path))["candidates"]}
    # By hand, at the modes of the example's ranges, with the bundled data (2025 intensity
    # FR 31, ES 136, DE-LU 342 gCO2e/kWh; Dec 2025 day-ahead FR 63.49 EUR/MWh; Scaleway
    # H100-SXM-8-80G 25.3308 EUR/h; OVHcloud h100-1520 11.2 EUR/h), each fleet sized for the
    # demand: 500 Mtok/day = 5,787.04 tokens/s mean, x2 at the peak, 25 % headroom.
    # FR H100, declared 11 EUR/h, provisioned: ceil(11,574.07 / (2800 x 0.75)) = 6 instances,
    #   busy 5,787.04 / 2800 = 2.0668 of them: u = 0.34447, served 964.51 tok/s per instance
    #   CPM = 11 / (964.51 x 0.0036) = 3.1680; power 0.34447 x 5600 + 0.65553 x 800 = 2453.4 W
    #   -> 2453.4 / 964.51 = 2.5437 J/token
    # FR H200, TCO hgx-h200: ceil(11,574.07 / 3000) = 4 instances, u = 1.44676 / 4 = 0.36169
    #   (served 1,446.76 tok/s = 5.2083 Mtok/h):
    #   capex 342,000, r = 0.05/12, n = 48, residual 25,000 / 1.2209 = 20,477:
    #   annuity 321,523 x 0.0230292 = 7,404.4 EUR/month = 10.1431 EUR/h
    #   + maintenance 342,000 x 0.06 / 8760 = 2.3425 + staff 15,000 / 8760 = 1.7123
    #   + colocation 200 x 5.6 kW x 12 / 8760 = 1.5342
    #   + electricity (0.36169 x 5.6 + 0.63831 x 0.8 = 2.5361 kW) x 1.3 x (0.06349 + 0.045)
    #   = 0.3577  -> 16.0898 EUR/h
    #   CPM = 16.0898 / 5.2083 = 3.0892; energy 2536.1 / 1446.76 = 1.7530; carbon
    #   1.7530 / 3.6 x 1.3 x 31 = 19.62. ES and DE: same node, dearer power, dirtier grid.
    # Scaleway, provisioned: 5 instances, u = 1.6075 / 5 = 0.32150:
    #   25.3308 / (3600 x 0.32150 x 0.0036) = 6.0794 EUR/Mtok
    # OVHcloud, elastic (3.858 busy instances, above its floor of 2): only busy hours are
    #   billed: 11.2 / (1500 x 0.0036) = 2.0741, 1400 / 1500 = 0.9333 J/token, level 2.
    assert c["onprem-fr-h100-fp16"]["cpm_eur_per_mtok"] == pytest.approx(3.16800, rel=1e-4)
    assert c["onprem-fr-h100-fp16"]["energy_j_per_token"] == pytest.approx(2.54373, rel=1e-4)
    assert c["onprem-fr-h200-fp8"]["cost_eur_per_hour"] == pytest.approx(16.0898, abs=1e-3)
    assert c["onprem-fr-h200-fp8"]["cpm_eur_per_mtok"] == pytest.approx(3.08924, rel=1e-4)
    assert c["onprem-fr-h200-fp8"]["carbon_gco2e_per_mtok"] == pytest.approx(19.623, rel=1e-3)
    assert c["scaleway-h100x8-fp8"]["cpm_eur_per_mtok"] == pytest.approx(6.07939, rel=1e-4)
    assert c["ovhcloud-h100x4-fp8"]["cpm_eur_per_mtok"] == pytest.approx(2.07407, rel=1e-4)
    assert c["ovhcloud-h100x4-fp8"]["energy_j_per_token"] == pytest.approx(0.93333, rel=1e-4)
    # The 36-month Scaleway commitment (docs/decision.md, "Contract terms"): 25.3308 x 0.65 =
    # 16.46502 EUR/h levelled over the TCO's 48 months at its 5 % with 3 % escalation: factor
    # 1.043981, 17.1892 EUR/h; 5 instances as on demand: 17.1892 x 5 / 20.8333 Mtok an hour =
    # 4.1254 EUR/Mtok. The API (docs/decision.md, "Tokens bought by API"): 0.9 EUR per Mtok in
    # and out, requests of 1,000 + 250 tokens: 0.9 x 1,250 / 250 = 4.5 EUR/Mtok; its serving
    # replica assumed at 4,966 tokens/s and 4,200 W: 4,200 / 4,966 = 0.845751 J/token.
    term = c["scaleway-h100x8-fp8-36m"]
    assert term["cost_eur_per_hour"] == pytest.approx(17.1892, rel=1e-5)
    assert term["cpm_eur_per_mtok"] == pytest.approx(4.12540, rel=1e-5)
    api = c["scaleway-api-llama-70b"]
    assert api["cpm_eur_per_mtok"] == pytest.approx(4.5)
    assert api["energy_j_per_token"] == pytest.approx(0.845751, rel=1e-5)
    # Frontier: FR H200 (level 4, cheapest and cleanest of own hardware), OVHcloud (level 2,
    # cheapest) and the API (level 2, least energy and carbon). FR H100, ES H200 lose to FR
    # H200; Scaleway on demand loses to both those, the API and its own 36-month commitment
    # (cheaper at the same energy); the commitment loses to FR H200 and OVHcloud; DE H200
    # loses to FR and ES H200 (rank 3).
    frontier = {k for k, v in c.items() if v["pareto_rank"] == 1}
    assert frontier == {"onprem-fr-h200-fp8", "ovhcloud-h100x4-fp8", "scaleway-api-llama-70b"}
    assert c["onprem-es-h200-fp8"]["pareto_rank"] == 2
    # dominated_by names the frontier candidates dominating it, dominated_by_count every one
    assert c["onprem-es-h200-fp8"]["dominated_by"] == ["onprem-fr-h200-fp8"]
    assert c["onprem-es-h200-fp8"]["dominated_by_count"] == 1
    assert c["scaleway-h100x8-fp8"]["dominated_by"] == [
        "onprem-fr-h200-fp8", "ovhcloud-h100x4-fp8", "scaleway-api-llama-70b"]
    # and its own commitment, and the hybrid (own FR H200 + the API: 2.8239 EUR/Mtok, 1.5753
    # J/token, 17.63 gCO2e/Mtok, level 2)
    assert c["scaleway-h100x8-fp8"]["dominated_by_count"] == 5
    assert term["dominated_by"] == ["onprem-fr-h200-fp8", "ovhcloud-h100x4-fp8"]
    assert term["dominated_by_count"] == 3  # and the hybrid (2.8239, 1.5753, 17.63, level 2)
    assert c["onprem-de-h200-fp8"]["pareto_rank"] == 3
    assert c["onprem-de-h200-fp8"]["dominated_by"] == ["onprem-fr-h200-fp8"]
    assert c["onprem-de-h200-fp8"]["dominated_by_count"] == 2  # and ES H200 (rank 2)
    # 10 candidates (<= pareto.SHORTLIST_ABOVE): every one shortlisted, every one in the Monte
    # Carlo (the excluded US hyperscaler too, as before the shortlist; the hybrid from its
    # parts' draws)
    assert all(v["shortlisted"] for v in c.values()) and len(c) == 10
    assert all(v["uncertainty"]["cpm_eur_per_mtok"] for v in c.values())
    # The US hyperscaler is shown, not ranked: sovereignty below the policy minimum of 2.
    azure = c["azure-nd-h100-v5-fp8"]
    assert azure["eligible"] is False and azure["pareto_rank"] is None
    # Sweden Central is an EU region, Microsoft is subject to the US CLOUD Act: level 1.
    assert azure["sovereignty_level"] == 1
    assert azure["zone"] == "SE"
    assert "below the policy minimum 2" in azure["exclusion_reason"]
    assert azure["cpm_eur_per_mtok"] is not None  # still computed and shown
    assert azure["p_frontier"] is None


def test_uncertainty_sizing_and_break_even_in_the_contract(db: Path) -> None:
    doc = run_json(db)
    c = {x["id"]: x for x in doc["candidates"]}
    fr = c["onprem-fr-h200-fp8"]
    band = fr["uncertainty"]["cpm_eur_per_mtok"]
    assert band["p5"] < fr["cpm_eur_per_mtok"] < band["p95"]
    # OVHcloud has the lowest energy and carbon whatever the draw: always on the frontier.
    assert c["ovhcloud-h100x4-fp8"]["p_frontier"] == 1.0
    # Demand 500 Mtok/day, peak x2, headroom 25 %: FR H200 at 4,000 tok/s -> 11,574 / 3,000
    # -> 4 instances; OVHcloud at 1,500 tok/s -> 11,574 / 1,125 = 10.3 -> 11 instances.
    assert fr["sizing"]["instances"] == 4
    assert c["ovhcloud-h100x4-fp8"]["sizing"]["instances"] == 11
    assert fr["sovereignty_reasons"] and fr["embodied_gco2e_per_mtok"] is None  # no H200 figure
    assert any(t["candidate"] == "onprem-fr-h200-fp8" for t in doc["tornado"])
    assert {b["candidate"] for b in doc["break_even"]} == {
        "onprem-fr-h100-fp16", "onprem-fr-h200-fp8", "onprem-de-h200-fp8",
        "onprem-es-h200-fp8"}
    assert doc["break_even"][0]["versus"] == "ovhcloud-h100x4-fp8"  # cheapest eligible cloud


def test_files_written_and_two_runs_identical_but_for_the_stamp(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    outputs = []
    for n in (1, 2):
        out = tmp_path / f"out{n}"
        result = runner.invoke(app, ["run", "--db", str(db), "--out", str(out)])
        assert result.exit_code == 0, result.output
        html = (out / "scorecard.html").read_text()
        doc = (out / "scorecard.json").read_text()
        assert "scorecard" in html and "EXAMPLE DATA" in html
        stamp = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00")
        outputs.append((stamp.sub("STAMP", html), stamp.sub("STAMP", doc)))
    assert outputs[0] == outputs[1]


def test_scorecard_is_stored_per_vintage_and_proposal(db: Path) -> None:
    # a --json run is stored as a run (keyed by vintage, name and sha256) and not published;
    # tests/pipeline/test_baseline.py has who publishes
    doc = run_json(db)
    con = duckdb.connect(str(db))
    rows = con.execute("SELECT vintage, proposal, candidates_json FROM out__scorecard_run"
                       ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [(doc["vintage"], doc["proposal"])]
    assert json.loads(rows[0][2])["candidates"] == doc["candidates"]
    assert con.execute("SELECT count(*) FROM out__scorecard").fetchall() == [(0,)]


def test_help_is_fast_and_lazy() -> None:
    # --help must not import the heavy stack (polars, duckdb, great_tables, pandera).
    code = ("import sys; from pipeline.cli import app\n"
            "heavy = [m for m in ('polars', 'duckdb', 'great_tables', 'pandera') "
            "if m in sys.modules]\nprint(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0 and "run" in result.output and "init" in result.output


def test_init_writes_the_example_and_it_runs(tmp_path: Path, db: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "mine")])
    assert result.exit_code == 0, result.output
    proposal = tmp_path / "mine" / "proposal.toml"
    doc = run_json(db, str(proposal))
    assert doc["proposal"] == "mine (from the example)"  # named for its folder
    again = runner.invoke(app, ["init", str(tmp_path / "mine")])
    assert again.exit_code == 1 and "exists" in again.output


def test_one_answer_at_the_demand(db: Path, tmp_path: Path) -> None:
    """The scorecard, the sizing and the recommendation describe one fleet per candidate."""
    doc = run_json(db, without_plan(tmp_path))
    c = {x["id"]: x for x in doc["candidates"]}
    mtok_per_month = 500 * 365 / 12  # [demand] tokens_per_day = 500e6
    for cand in c.values():
        if cand["eligible"]:
            # a mix's month is its parts' (its split), any other candidate's its sizing's
            monthly = (sum(p["monthly_cost_eur"] for p in cand["mix"]["parts"])
                       if "mix" in cand else cand["sizing"]["monthly_cost_eur"])
            assert cand["cpm_eur_per_mtok"] == pytest.approx(
                monthly / mtok_per_month, rel=1e-12), cand["id"]
    rec = doc["recommendation"]
    chosen = c[rec["candidate"]]
    assert chosen["eligible"] and chosen["pareto_rank"] == 1
    # the default rule: the cheapest frontier candidate (OVHcloud elastic, 2.0741 EUR/Mtok,
    # see test_frontier_dominance_and_exclusions_of_the_example); runner-up the next cheapest
    # eligible one (the hybrid of FR H200 nodes and the API, 2.8239)
    assert rec["candidate"] == "ovhcloud-h100x4-fp8"
    assert rec["runner_up"] == "hybrid-fr-h200-api"
    assert rec["monthly_cost_eur"] == chosen["sizing"]["monthly_cost_eur"]
    assert rec["annual_cost_eur"] == pytest.approx(12 * rec["monthly_cost_eur"])
    assert [x["id"] for x in rec["excluded"]] == ["azure-nd-h100-v5-fp8"]
    assert 0 <= rec["p_chosen_cheapest"] <= 1
    assert doc["token_basis"] == "output" and chosen["capacity"] == "elastic"
    # The hybrid moves with its parts' inputs at its 3 own nodes: OVHcloud costs 2.074074 x
    # 15,208.33 Mtok = 31,543.21 EUR a month, the hybrid 42,946.18: 11,402.97 more. A EUR of
    # H200 capex costs a node a month its annuity r / (1 - (1 + r)^-48) = 0.0230293 (r = 0.05 /
    # 12) and its maintenance 0.06 / 12 = 0.005: 0.0280293, x 3 nodes = 0.0840879; the hybrid
    # is the choice when the capex falls by 11,402.97 / 0.0840879 = 135,608 EUR: from 342,000
    # to 206,392 EUR
    capex = next(w for w in rec["what_would_change_it"] if w["input"] == "capex_eur")
    assert capex["direction"] == "falls" and capex["key"] == "tco.hgx-h200.capex"
    assert capex["threshold"] == pytest.approx(206_392, rel=1e-5)
    assert capex["text"].startswith("hybrid-fr-h200-api becomes the choice if")
    # the hybrid moves with its base's capex: it shares the key with the two H200 nodes
    assert capex["candidates"] == ["hybrid-fr-h200-api", "onprem-es-h200-fp8",
                                   "onprem-fr-h200-fp8"]


def test_what_would_change_it_speaks_of_the_demand_without_the_mix(db: Path,
                                                                   tmp_path: Path) -> None:
    # the example without its hybrid (and its plan): the runner-up is FR H200 (3.0892
    # EUR/Mtok)
    path = Path(without_plan(tmp_path))
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:text.index("# --- a hybrid")], encoding="utf-8")
    rec = run_json(db, str(path))["recommendation"]
    assert rec["runner_up"] == "onprem-fr-h200-fp8"
    # The choice changes first by FR H100, not by the runner-up (FR H200 would undercut
    # OVHcloud below 129.6 Mtok/day, when the peak fits one of its instances). Below 181.44
    # Mtok/day (2,100 tokens/s on average, 4,200 at the peak) FR H100 (2,800 tokens/s,
    # 2,100 usable) needs 2 instances instead of 3: 2 x 11 x 730 = 16,060 EUR a month, while
    # OVHcloud keeps 2,100 / 1,500 = 1.4 instances busy and pays its floor of 2: 2 x 11.2 x
    # 730 = 16,352 EUR a month.
    demand = next(w for w in rec["what_would_change_it"] if w["input"] == "demand_tokens_per_day")
    assert demand["direction"] == "falls"
    assert demand["threshold"] == pytest.approx(181.44e6, rel=1e-6)
    assert demand["text"].startswith("onprem-fr-h100-fp16 becomes the choice if")
    # the check: rerun just below and just above it
    for tokens, chosen in (("181_000_000", "onprem-fr-h100-fp16"),
                           ("182_000_000", "ovhcloud-h100x4-fp8")):
        moved = tmp_path / f"demand-{tokens}.toml"
        moved.write_text(path.read_text(encoding="utf-8").replace(
            "tokens_per_day = 500_000_000", f"tokens_per_day = {tokens}", 1).replace(
            "draws = 10_000", "draws = 500"), encoding="utf-8")
        assert run_json(db, str(moved))["recommendation"]["candidate"] == chosen, tokens


def test_under_a_plan_the_break_even_compares_the_same_month(db: Path, tmp_path: Path) -> None:
    """The break-even's curve is the [demand] month's fleet at other volumes, so the cloud it
    is compared with is taken at that month too, not at its horizon CPM (the scorecard's
    under a plan). The example with OVHcloud provisioned (no elastic floor): a rented fleet
    sized for a growing demand costs another CPM over the horizon than in its first month,
    and the cheapest cloud's two figures differ."""
    text = EXAMPLE.read_text(encoding="utf-8")
    for line in ('capacity = "elastic"       # billed per busy instance-hour, assuming '
                 "OVHcloud has them when asked\n",
                 "min_instances = 2          # always held, busy or not\n"):
        assert text.count(line) == 1
        text = text.replace(line, "")
    path = tmp_path / "provisioned.toml"
    path.write_text(text, encoding="utf-8")
    doc = run_json(db, str(path))
    by_id = {c["id"]: c for c in doc["candidates"]}
    for even in doc["break_even"]:
        cloud = by_id[even["versus"]]
        first = cloud["detail"]["first_month_cpm_eur_per_mtok"]
        assert cloud["cpm_eur_per_mtok"] != pytest.approx(first, rel=1e-3)  # they differ
        assert even["versus_cpm_eur_per_mtok"] == pytest.approx(first, rel=1e-12)
        # and the own candidate's curve passes through its own first month at the demand
        own = by_id[even["candidate"]]["detail"]["first_month_cpm_eur_per_mtok"]
        [at_demand] = [p for p in even["curve"]
                       if p["tokens_per_day"] == doc["demand"]["tokens_per_day"]]
        assert at_demand["cpm_eur_per_mtok"] == pytest.approx(own, rel=1e-12)
