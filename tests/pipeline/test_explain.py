"""`scorecard explain`: the derivation chain matches the scorecard and names its sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.questions.explain import dependencies

runner = CliRunner()


def test_dependencies_come_from_the_step_expressions() -> None:
    # carbon needs facility energy, which needs energy per token and the PUE, ... but never
    # the price: a change to the cost formulas cannot leak into the carbon chain.
    deps = dependencies("carbon_gco2e_per_mtok")
    assert deps[-1] != "carbon_gco2e_per_mtok" and "carbon_gco2e_per_mtok" in deps
    assert {"facility_kwh_per_mtok", "energy_j_per_token", "pue", "grid_gco2e_per_kwh",
            "busy_power_w", "tokens_per_s"} <= set(deps)
    assert "price_eur_per_hour" not in deps and "capex_eur" not in deps


def test_chain_of_a_tco_candidate_matches_the_scorecard(db: Path) -> None:
    run = runner.invoke(app, ["run", "--db", str(db), "--json"])
    candidates = {c["id"]: c for c in json.loads(run.stdout)["candidates"]}
    result = runner.invoke(app, ["explain", "onprem-fr-h200-fp8", "cpm_eur_per_mtok",
                                 "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    chain = json.loads(result.stdout)
    # the example plans 48 months: the chain is the first month's, the scorecard's CPM the
    # horizon's, which the chain gives beside it
    h200 = candidates["onprem-fr-h200-fp8"]
    assert chain["value"] == pytest.approx(h200["detail"]["first_month_cpm_eur_per_mtok"])
    assert chain["horizon"]["value"] == pytest.approx(h200["cpm_eur_per_mtok"], rel=1e-12)
    assert chain["horizon"]["fallback"] == "ovhcloud-h100x4-fp8"
    steps = {s["step"]: s["value"] for s in chain["steps"]}
    # every line of the TCO enters a TCO candidate's cost
    assert {"capital_eur_per_hour", "maintenance_eur_per_hour", "staff_eur_per_hour",
            "hosting_eur_per_hour", "electricity_eur_per_hour"} <= set(steps)
    # hand figures of the TCO at the utilisation its sizing implies (see test_run):
    # 10.1431 + 2.3425 + 1.7123 + 1.5342 + 0.3577
    assert steps["capital_eur_per_hour"] == pytest.approx(10.1431, abs=1e-3)
    assert steps["cost_eur_per_hour"] == pytest.approx(16.0898, abs=1e-3)
    # 4 instances for the peak, 1.44676 of them busy on average
    assert steps["instances"] == 4
    assert steps["billed_utilisation"] == pytest.approx(1.44676 / 4, rel=1e-5)
    inputs = {i["input"]: i for i in chain["inputs"]}
    assert inputs["capex_eur"]["key"] == "tco.hgx-h200.capex"
    assert (inputs["capex_eur"]["low"], inputs["capex_eur"]["high"]) == (312_000, 382_000)
    wholesale = inputs["wholesale_eur_per_kwh"]
    assert wholesale["grade"] == "reference" and "https://" in wholesale["source"]
    assert "sha256" in wholesale["source"]


def test_unknown_candidate_or_metric_exits_1(db: Path) -> None:
    for args in (["explain", "nope"], ["explain", "onprem-fr-h200-fp8", "cpm_per_token"]):
        result = runner.invoke(app, [*args, "--db", str(db)])
        assert result.exit_code == 1
        assert "unknown" in result.stderr
        assert "one of:" in result.stderr or "candidates:" in result.stderr


def test_dependencies_follow_the_cost_model() -> None:
    # a declared price per hour is the cost: none of the TCO lines (capital, maintenance,
    # staff, hosting, electricity per hour) nor what only they read (capex, power, tariff)
    assert dependencies("cost_eur_per_hour", "declared") == ["cost_eur_per_hour",
                                                             "price_eur_per_hour"]
    tco = dependencies("cost_eur_per_hour", "tco")
    assert {"capital_eur_per_hour", "electricity_eur_per_hour", "capex_eur", "busy_power_w",
            "wholesale_eur_per_kwh"} <= set(tco)


def test_chain_of_a_declared_cost_lists_only_the_price(db: Path) -> None:
    result = runner.invoke(app, ["explain", "onprem-fr-h100-fp16", "cost_eur_per_hour",
                                 "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    chain = json.loads(result.stdout)
    assert chain["cost_model"] == "declared"
    # the example declares eur_per_hour = 11.0 for this node: the cost is that figure
    assert chain["value"] == 11.0
    assert [s["step"] for s in chain["steps"]] == ["cost_eur_per_hour"]
    assert [i["input"] for i in chain["inputs"]] == ["price_eur_per_hour"]
    # its CPM chain: the fleet sized for the demand (since issue 26 the larger of the goodput
    # and Little's-law counts, so the request-level steps are in the chain, null here: the
    # example declares no request shape), its utilisation, still no TCO line
    cpm = runner.invoke(app, ["explain", "onprem-fr-h100-fp16", "cpm_eur_per_mtok",
                              "--db", str(db), "--json"])
    chain = json.loads(cpm.stdout)
    steps = [s["step"] for s in chain["steps"]]
    assert steps == ["peak_tokens_per_s", "request_tpot_s", "request_duration_s",
                     "replica_requests_per_s", "littles_law_instances", "goodput_instances",
                     "instances", "busy_instances", "billed_instances", "billed_utilisation",
                     "served_tokens_per_s", "cost_eur_per_hour", "cpm_eur_per_mtok"]
    by_step = {s["step"]: s["value"] for s in chain["steps"]}
    assert by_step["littles_law_instances"] is None
    assert by_step["instances"] == by_step["goodput_instances"]


@pytest.mark.parametrize(("objective", "column"), [
    ("cpm", "cpm_eur_per_mtok"), ("energy", "energy_j_per_token"),
    ("carbon", "carbon_gco2e_per_mtok"), ("electricity", "electricity_eur_per_mtok")])
def test_the_policys_objective_names_are_their_columns(db: Path, objective: str,
                                                       column: str) -> None:
    by_name = runner.invoke(app, ["explain", "onprem-fr-h200-fp8", objective, "--db", str(db),
                                  "--json"])
    assert by_name.exit_code == 0, by_name.output
    by_column = runner.invoke(app, ["explain", "onprem-fr-h200-fp8", column, "--db", str(db),
                                    "--json"])
    assert json.loads(by_name.stdout) == json.loads(by_column.stdout)
    assert json.loads(by_name.stdout)["metric"] == column


def test_sovereignty_is_explained_by_the_rubric(db: Path) -> None:
    result = runner.invoke(app, ["explain", "scaleway-h100x8-fp8", "sovereignty", "--db",
                                 str(db)])
    assert result.exit_code == 0, result.output
    # Scaleway: EU-headquartered, EU region, no qualification covering GPU offers -> level 2
    # (docs/sovereignty.md's worked example)
    assert result.stdout.startswith("scaleway-h100x8-fp8: sovereignty_level = 2 ")
    assert "level 2: EU-headquartered (FR), EU region in FR" in result.stdout
    assert "  > 2  EU-headquartered provider in an EU region" in result.stdout
    chain = json.loads(runner.invoke(app, ["explain", "scaleway-h100x8-fp8", "sovereignty",
                                           "--db", str(db), "--json"]).stdout)
    assert chain["value"] == 2 and [r["level"] for r in chain["rubric"]] == [4, 3, 2, 1, 0]
    # beside it, the framework rubric: an EU provider in an EU region supports SEAL-2 on
    # SOV-1 .. SOV-3; a cloud offer has no site gates
    assert [(r["objective"], r["seal"]) for r in chain["framework"][:4]] == [
        ("SOV-1", 2), ("SOV-2", 2), ("SOV-3", 2), ("SOV-4", None)]
    assert chain["gates"] == []
    assert "  SOV-2  2  EU provider and parent, EU region in FR" in result.stdout
    assert "Regulatory gates\n  none applies" in result.stdout


def test_the_proposal_is_positional_as_in_run_and_diff(db: Path, tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0
    proposal = str(tmp_path / "proposal.toml")
    positional = runner.invoke(app, ["explain", "onprem-fr-h200-fp8", "cpm", proposal,
                                     "--db", str(db), "--json"])
    assert positional.exit_code == 0, positional.output
    older = runner.invoke(app, ["explain", "onprem-fr-h200-fp8", "cpm", "--proposal", proposal,
                                "--db", str(db), "--json"])
    assert json.loads(older.stdout) == json.loads(positional.stdout)
    both = runner.invoke(app, ["explain", "onprem-fr-h200-fp8", "cpm", proposal, "--proposal",
                               str(tmp_path / "other.toml"), "--db", str(db)])
    assert both.exit_code == 1 and both.stderr.startswith("error: give the proposal once")


def _found(document: object, key: str) -> bool:
    """Whether the dotted `key` (with `candidates[i]` indices) names a value or table of the
    proposal `document`."""
    node = document
    for part in key.split("."):
        name, _, index = part.partition("[")
        if not isinstance(node, dict) or name not in node:
            return False
        node = node[name]
        if index:
            position = int(index.rstrip("]"))
            if not isinstance(node, list) or position >= len(node):
                return False
            node = node[position]
    return True


def test_explain_names_keys_as_the_proposal_file_writes_them(db: Path) -> None:
    """Every declared input of every chain is keyed by a path the proposal file has: it named
    `tco.hgx-h200.cost_of_capital_per_year` for the file's `cost_of_capital`, and
    `tco.hgx-h200.hosting` for `hosting.eur_per_kw_month`; a default the file leaves out
    (`demand.redundancy_instances`) is graded `assumed`, not `declared`."""
    import tomllib
    from importlib import resources

    document = tomllib.loads(
        resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8"))
    missing = []
    for candidate in document["candidates"]:
        if "mix" in candidate:  # a mix has no inputs of its own: its parts are explained
            continue
        result = runner.invoke(app, ["explain", candidate["id"], "cpm_eur_per_mtok",
                                     "--db", str(db), "--json"])
        assert result.exit_code == 0, result.output
        missing += [(candidate["id"], i["key"]) for i in json.loads(result.stdout)["inputs"]
                    if i["grade"] == "declared" and not _found(document, i["key"])]
    assert missing == [], missing
