"""A proposal of more than pareto.SHORTLIST_ABOVE candidates: the first pass on point figures
shortlists the frontier and its neighbourhood for the Monte Carlo, the tables and the charts;
the JSON, the CSV and the Parquet keep every candidate's point figures and say which were
shortlisted (issue 30 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.ranking.pareto import SHORTLIST_ABOVE, SHORTLIST_MARGIN

runner = CliRunner()
COUNT = 120


def test_a_large_proposal_shortlists_the_frontier_s_neighbourhood(tmp_path: Path) -> None:
    # 120 copies of the plain own node (same energy, carbon, sovereignty) at 11.0, 11.2,
    # 11.4, ... EUR/h: c000 is the frontier alone (cheapest, the rest equal), and c_i's
    # distance to it is its CPM's excess, 0.2 i / 11 (CPM is proportional to the price at the
    # same goodput): <= 0.05 for i <= 2.75, so c000, c001 and c002 are shortlisted
    assert COUNT > SHORTLIST_ABOVE and SHORTLIST_MARGIN == 0.05
    blocks = [candidate(f"c{i:03d}", cost=f'{{ eur_per_hour = {11.0 + 0.2 * i:.1f}, '
                                          'source = "quote" }')
              for i in range(COUNT)]
    path = tmp_path / "many.toml"
    path.write_text(proposal("many", *blocks))
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "scorecard.json").read_text())
    c = {x["id"]: x for x in doc["candidates"]}
    assert len(c) == COUNT
    shortlisted = sorted(k for k, v in c.items() if v["shortlisted"])
    assert shortlisted == ["c000", "c001", "c002"]
    # every candidate keeps its point figures; the Monte Carlo ran on the shortlist only
    assert all(v["cpm_eur_per_mtok"] is not None and v["carbon_gco2e_per_mtok"] is not None
               for v in c.values())
    assert c["c003"]["detail"]["frontier_distance_share"] == pytest.approx(0.6 / 11.0)
    assert all(c[k]["uncertainty"] for k in shortlisted)
    assert not any(v["uncertainty"] for k, v in c.items() if k not in shortlisted)
    assert c["c100"]["p_frontier"] is None and c["c000"]["p_frontier"] == 1.0
    # ranks on point figures for every candidate: c_i dominated by c000..c_(i-1)
    assert c["c100"]["pareto_rank"] == 101 and c["c100"]["dominated_by_count"] == 100
    assert c["c100"]["dominated_by"] == ["c000"]
    for table in (pl.read_csv(out / "scorecard.csv"), pl.read_parquet(out / "scorecard.parquet")):
        assert table.height == COUNT
        assert table.filter(pl.col("shortlisted"))["id"].sort().to_list() == shortlisted
        assert table["cpm_eur_per_mtok"].null_count() == 0
    # the report's full scorecard lists the shortlist, and says where the rest are
    page = (out / "scorecard.html").read_text()
    assert f"3 of {COUNT} candidates are listed" in page


def test_more_than_1000_candidates_run_and_the_monte_carlo_is_capped(tmp_path: Path) -> None:
    # 1,001 copies of one own node (before: refused, "at most 1,000"): all equal, so none
    # dominates another and every one is on the frontier at distance 0; the shortlist keeps
    # SHORTLIST_MAX = 1,000 of them, nearest first and then by id: c0000..c0999, not c1000
    from pipeline.engine.ranking.pareto import SHORTLIST_MAX

    assert SHORTLIST_MAX == 1000
    path = tmp_path / "many.toml"
    path.write_text(proposal("many", "[uncertainty]\ndraws = 100\n",
                             *(candidate(f"c{i:04d}") for i in range(1001))))
    result = runner.invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    c = {x["id"]: x for x in json.loads(result.stdout)["candidates"]}
    assert len(c) == 1001 and all(v["pareto_rank"] == 1 for v in c.values())
    assert sum(v["shortlisted"] for v in c.values()) == 1000
    assert c["c1000"]["shortlisted"] is False and c["c1000"]["uncertainty"] == {}
    assert c["c1000"]["cpm_eur_per_mtok"] == c["c0000"]["cpm_eur_per_mtok"]
