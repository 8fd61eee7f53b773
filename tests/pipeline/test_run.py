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
from pipeline.scorecard import CONTRACT_KEYS

runner = CliRunner()


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


def test_frontier_dominance_and_exclusions_of_the_example(db: Path) -> None:
    c = {x["id"]: x for x in run_json(db)["candidates"]}
    # By hand, from the example's declarations and the bundled data (FR 31, ES 136, DE-LU 342
    # gCO2e/kWh for 2025; Scaleway H100-SXM-8-80G 25.3308 EUR/h; OVHcloud h100-1520 11.2 EUR/h):
    #   id                    CPM = EUR/h / (tok/s x 0.0036)   J/token     gCO2e/Mtok   sov
    #   onprem-fr-h100-fp16   11 / 10.08    = 1.0913           5600/2800=2.0   22.4     4
    #   onprem-fr-h200-fp8    14 / 14.4     = 0.9722           1.4             15.7     4
    #   onprem-de-h200-fp8    14.8 / 14.4   = 1.0278           1.4            186.2     4
    #   onprem-es-h200-fp8    13.9 / 14.4   = 0.9653           1.4             71.4     4
    #   scaleway-h100x8-fp8   25.3308/12.96 = 1.9545           5600/3600=1.556 16.7     2
    #   ovhcloud-h100x4-fp8   11.2 / 5.4    = 2.0741           1400/1500=0.933 10.4     2
    # (carbon = J/token / 3.6 x PUE x intensity, e.g. FR H200: 1.4/3.6 x 1.3 x 31 = 15.7)
    assert c["onprem-fr-h200-fp8"]["cpm_eur_per_mtok"] == pytest.approx(0.97222, rel=1e-4)
    assert c["onprem-es-h200-fp8"]["carbon_gco2e_per_mtok"] == pytest.approx(71.4, rel=1e-3)
    assert c["scaleway-h100x8-fp8"]["cpm_eur_per_mtok"] == pytest.approx(1.95454, rel=1e-4)
    # Frontier: FR H200 (clean and cheap), ES H200 (cheapest), OVHcloud (least energy and
    # carbon). DE H200 loses to FR H200 and ES H200 on cost and carbon at equal energy and
    # sovereignty; FR H100 loses to FR H200 everywhere; Scaleway loses to FR H200 everywhere.
    frontier = {k for k, v in c.items() if v["pareto_rank"] == 1}
    assert frontier == {"onprem-fr-h200-fp8", "onprem-es-h200-fp8", "ovhcloud-h100x4-fp8"}
    assert c["onprem-de-h200-fp8"]["dominated_by"] == ["onprem-es-h200-fp8",
                                                      "onprem-fr-h200-fp8"]
    assert c["onprem-fr-h100-fp16"]["dominated_by"] == ["onprem-fr-h200-fp8"]
    assert c["scaleway-h100x8-fp8"]["dominated_by"] == ["onprem-fr-h200-fp8"]
    # The US hyperscaler is shown, not ranked: sovereignty below the policy minimum of 2.
    azure = c["azure-nd-h100-v5-fp8"]
    assert azure["eligible"] is False and azure["pareto_rank"] is None
    # Sweden Central is an EU region, Microsoft is subject to the US CLOUD Act: level 1.
    assert azure["sovereignty_level"] == 1
    assert azure["zone"] == "SE"
    assert "below the policy minimum 2" in azure["exclusion_reason"]
    assert azure["cpm_eur_per_mtok"] is not None  # still computed and shown


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
    doc = run_json(db)
    con = duckdb.connect(str(db))
    rows = con.execute("SELECT vintage, proposal, candidates_json FROM out__scorecard").fetchall()
    assert [(r[0], r[1]) for r in rows] == [(doc["vintage"], doc["proposal"])]
    assert json.loads(rows[0][2])["candidates"] == doc["candidates"]


def test_help_is_fast_and_lazy() -> None:
    # --help must not import the heavy stack (polars, duckdb, great_tables, pandera).
    code = ("import sys, time; t = time.perf_counter(); from pipeline.cli import app\n"
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
    assert doc["proposal"] == "Sovereign 70B inference platform (example)"
    again = runner.invoke(app, ["init", str(tmp_path / "mine")])
    assert again.exit_code == 1 and "exists" in again.output
