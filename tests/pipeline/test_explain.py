"""`scorecard explain`: the derivation chain matches the scorecard and names its sources."""

from __future__ import annotations

import json
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.fleet import plan
from pipeline.engine.questions.explain import ALIASES, dependencies, explain, metric_names, render
from pipeline.engine.scorecard import figures
from pipeline.inputs import resolve
from pipeline.workspace import opened

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
    # the example plans 48 months: the figure is the scorecard's, the horizon's (3.13283:
    # the run table's 3.133), and the chain below it the first month's (3.08924)
    h200 = candidates["onprem-fr-h200-fp8"]
    assert chain["value"] == h200["cpm_eur_per_mtok"]
    assert chain["value"] == pytest.approx(3.13283, abs=1e-5)
    first = h200["detail"]["first_month_cpm_eur_per_mtok"]
    assert chain["horizon"]["first_month_value"] == first == chain["steps"][-1]["value"]
    assert chain["horizon"]["value"] == chain["value"]  # kept where scripts read it before
    assert first == pytest.approx(3.08924, abs=1e-5)
    assert chain["horizon"]["fallback"] == "ovhcloud-h100x4-fp8"
    text = runner.invoke(app, ["explain", "onprem-fr-h200-fp8", "cpm_eur_per_mtok",
                               "--db", str(db)]).stdout
    assert text.startswith("onprem-fr-h200-fp8: cpm_eur_per_mtok = 3.13283 EUR/Mtok")
    assert "its first month: cpm_eur_per_mtok = 3.08924 EUR/Mtok" in text
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
    # a candidate's own key as the file writes it and its errors name it
    assert inputs["busy_power_w"]["key"] == "candidates[1] (id 'onprem-fr-h200-fp8').power.watts"
    wholesale = inputs["wholesale_eur_per_kwh"]
    assert wholesale["grade"] == "reference" and "https://" in wholesale["source"]
    assert "sha256" in wholesale["source"]
    # the notes are the scorecard's, the plan's among them
    assert chain["notes"] == h200["notes"]


def _shown(value: dict[str, Any], metric: str) -> Any:
    """A candidate's figure in the run's JSON: a contract key, or its `detail`."""
    return value[metric] if metric in value else value["detail"][metric]


def test_explain_gives_the_runs_figure_for_every_candidate_and_metric(db: Path) -> None:
    """One answer: for every candidate (the mix too) and every metric explain accepts, its
    figure is the one `run --json` reports, and every key it names is the file's."""
    run = runner.invoke(app, ["run", "--db", str(db), "--json"])
    assert run.exit_code == 0, run.output
    reported = {c["id"]: c for c in json.loads(run.stdout)["candidates"]}
    document = tomllib.loads(
        resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8"))
    with opened(None, None, db, read_only=True) as o:
        resolved = resolve(o.proposal, o.name, o.market, o.cache)
        shown = figures(o.proposal, resolved, o.market)
        path = plan.Path.of(o.proposal)
    differ, keys, checked = [], [], 0
    for cid, value in reported.items():
        for name in metric_names():
            chain = explain(shown, resolved, cid, name, path)
            column = ALIASES.get(name, "sovereignty_level" if name == "sovereignty" else name)
            if chain["value"] != _shown(value, column):
                differ.append((cid, name, chain["value"], _shown(value, column)))
            keys += [(cid, i["key"]) for i in chain["inputs"] if i["grade"] == "declared"
                     and not _written(document, i["key"])]
            render(chain)  # every chain renders
            checked += 1
    assert differ == [] and keys == [], (differ, keys)
    assert checked == len(reported) * len(metric_names())
    # the three the reviewer read: the horizon's CPM, the level after the plan's fallback,
    # and the mix
    assert explain(shown, resolved, "onprem-fr-h200-fp8", "cpm", path)["value"] == (
        reported["onprem-fr-h200-fp8"]["cpm_eur_per_mtok"])
    assert explain(shown, resolved, "onprem-fr-h200-fp8", "sovereignty", path)["value"] == 2
    assert explain(shown, resolved, "hybrid-fr-h200-api", "cpm", path)["value"] == (
        reported["hybrid-fr-h200-api"]["cpm_eur_per_mtok"])


def test_sovereignty_under_a_plan_is_the_scorecards_level(db: Path) -> None:
    """The own French node is level 4 alone, but under the plan its fallback OVHcloud (level
    2) serves 4.9 % of the horizon's tokens: the scorecard's level is the lowest that serves
    them, min(4, 2) = 2, and explain says so and why."""
    text = runner.invoke(app, ["explain", "onprem-fr-h200-fp8", "sovereignty", "--db",
                               str(db)])
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith("onprem-fr-h200-fp8: sovereignty_level = 2 ")
    assert "under the plan its fallback ovhcloud-h100x4-fp8 (sovereignty level 2) serves " \
        "4.9 % of the horizon's tokens" in text.stdout
    assert "  onprem-fr-h200-fp8 (its own nodes): level 4, 95.1 % of the tokens" in text.stdout
    assert "  ovhcloud-h100x4-fp8 (its fallback): level 2, 4.9 % of the tokens" in text.stdout
    chain = json.loads(runner.invoke(app, ["explain", "onprem-fr-h200-fp8", "sovereignty",
                                           "--db", str(db), "--json"]).stdout)
    assert chain["value"] == 2
    assert [(s["id"], s["level"]) for s in chain["serving"]] == [
        ("onprem-fr-h200-fp8", 4), ("ovhcloud-h100x4-fp8", 2)]
    assert sum(s["tokens_share"] for s in chain["serving"]) == pytest.approx(1.0)
    # the rubric marks its own verdict, level 4 (own hardware), not the scorecard's 2
    assert chain["rubric_level"] == 4
    marked = [line for line in text.stdout.splitlines() if line.startswith("  > ")]
    assert [line.split()[1] for line in marked] == ["4"]


def test_a_mix_s_sovereignty_names_its_parts_once(db: Path) -> None:
    # the hybrid's level is its parts' (4 and 2): the pointer to each part's explanation is
    # printed once, under the gates, and no rubric line is marked as its own
    text = runner.invoke(app, ["explain", "hybrid-fr-h200-api", "sovereignty", "--db",
                               str(db)]).stdout
    lines = text.splitlines()
    for part in ("onprem-fr-h200-fp8", "scaleway-api-llama-70b"):
        assert lines.count(f"  its parts': scorecard explain {part} sovereignty") == 1
    assert not any(line.startswith("  > ") for line in lines)


def test_a_mix_explains_its_own_figure_and_points_to_its_parts(db: Path) -> None:
    """The hybrid (docs/decision.md "Under a plan": 5 H200 nodes serve 80.9 % of the horizon's
    tokens, the API the rest, 2.9072 EUR/Mtok) gives its figure, its split, each part's figure
    in the mix and the weighting that makes the first from the others."""
    run = runner.invoke(app, ["run", "--db", str(db), "--json"])
    hybrid = next(c for c in json.loads(run.stdout)["candidates"]
                  if c["id"] == "hybrid-fr-h200-api")
    result = runner.invoke(app, ["explain", "hybrid-fr-h200-api", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    chain = json.loads(result.stdout)
    assert chain["value"] == hybrid["cpm_eur_per_mtok"]
    assert chain["value"] == pytest.approx(2.9072, abs=1e-4)
    split = chain["mix"]
    assert (split["base"], split["burst"], split["base_instances"], split["split_over"]) == (
        "onprem-fr-h200-fp8", "scaleway-api-llama-70b", 5, "horizon")
    base, burst = split["parts"]
    assert base["tokens_share"] == pytest.approx(0.809, abs=1e-3)
    assert burst["value"] == pytest.approx(4.5)  # the API's price per Mtok
    # the horizon's discounted cost over its discounted tokens: each part's share of the
    # cost over its CPM is its share of the discounted tokens
    assert 1 / (base["cost_share"] / base["value"] + burst["cost_share"] / burst["value"]) \
        == pytest.approx(chain["value"], rel=1e-12)
    assert split["explain_parts"] == [
        "scorecard explain onprem-fr-h200-fp8 cpm_eur_per_mtok",
        "scorecard explain scaleway-api-llama-70b cpm_eur_per_mtok"]
    # J/token: the parts' weighted by the horizon's tokens each serves
    energy = json.loads(runner.invoke(app, ["explain", "hybrid-fr-h200-api", "energy", "--db",
                                            str(db), "--json"]).stdout)
    assert sum(p["tokens_share"] * p["value"] for p in energy["mix"]["parts"]) == \
        pytest.approx(energy["value"], rel=1e-12)
    text = runner.invoke(app, ["explain", "hybrid-fr-h200-api", "--db", str(db)]).stdout
    assert text.startswith("hybrid-fr-h200-api: cpm_eur_per_mtok = 2.90723 EUR/Mtok (a mix")
    assert "  = 1 / (" in text and "scorecard explain scaleway-api-llama-70b" in text
    # a figure a mix has no own of: null, as the run's, with its parts named
    hourly = json.loads(runner.invoke(app, ["explain", "hybrid-fr-h200-api",
                                            "cost_eur_per_hour", "--db", str(db),
                                            "--json"]).stdout)
    assert hourly["value"] is None and hybrid["cost_eur_per_hour"] is None


def test_a_mistyped_id_suggests_the_closest_and_lists_the_mixes(db: Path) -> None:
    result = runner.invoke(app, ["explain", "onprem-fr-h200", "--db", str(db)])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith(
        "error: unknown candidate 'onprem-fr-h200' (did you mean 'onprem-fr-h200-fp8'?); "
        "candidates: onprem-fr-h100-fp16, ")
    assert result.stderr.rstrip().endswith(
        "azure-nd-h100-v5-fp8; mixes: hybrid-fr-h200-api")


def _mix_first(text: str) -> str:
    """The example proposal with its mix (its last entry) written first."""
    at = text.index('[[candidates]]\nid = "hybrid-fr-h200-api"')
    first = text.index("[[candidates]]")
    return text[:first] + text[at:].rstrip() + "\n\n" + text[first:at]


def test_keys_name_the_files_entry_when_a_mix_comes_first(db: Path, tmp_path: Path) -> None:
    """The parser keeps a mix apart from the candidates: with the mix written first, the own
    French H200 node is the file's third entry, candidates[2], not the parsed list's [1]."""
    text = _mix_first(resources.files("pipeline").joinpath("example_proposal.toml")
                      .read_text("utf-8"))
    path = tmp_path / "proposal.toml"
    path.write_text(text, encoding="utf-8")
    chain = json.loads(runner.invoke(app, ["explain", "onprem-fr-h200-fp8", "energy",
                                           str(path), "--db", str(db), "--json"]).stdout)
    keys = {i["input"]: i["key"] for i in chain["inputs"]}
    assert keys["busy_power_w"] == "candidates[2] (id 'onprem-fr-h200-fp8').power.watts"
    assert _written(tomllib.loads(text), keys["busy_power_w"])
    # the run's own input keys name the same entry
    doc = json.loads(runner.invoke(app, ["run", str(path), "--db", str(db), "--json"]).stdout)
    own = next(c for c in doc["candidates"] if c["id"] == "onprem-fr-h200-fp8")
    assert {i["key"] for i in own["inputs"]} >= {"candidates[2].power.watts"}


def test_errors_name_the_files_entry_when_a_mix_comes_first(db: Path, tmp_path: Path) -> None:
    """With the mix written first, an error in the own French H200 node (the file's third
    entry) names candidates[2] and its id: the parser's error of an unknown key, and the
    inputs' error of an evidence folder that is not there. Before, both named the parsed
    list's place, candidates[1], and the parser's the id of the entry written there."""
    text = _mix_first(resources.files("pipeline").joinpath("example_proposal.toml")
                      .read_text("utf-8"))
    entry = text.index('id = "onprem-fr-h200-fp8"')
    path = tmp_path / "proposal.toml"
    path.write_text(text[:entry] + "bogus_key = 1\n" + text[entry:], encoding="utf-8")
    typo = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert typo.exit_code == 1
    assert "candidates[2] (id 'onprem-fr-h200-fp8').bogus_key: unknown key" in typo.stderr
    entry_text = text[entry:text.index("[[candidates]]", entry)]
    measured = entry_text.split("\n")[11]
    assert measured.startswith("throughput = { tokens_per_s")
    moved = entry_text.replace(measured, 'throughput = { evidence = "nowhere/" }')
    assert moved != entry_text
    path.write_text(text.replace(entry_text, moved), encoding="utf-8")
    missing = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert missing.exit_code == 1, missing.stdout
    assert ("candidates[2] (id 'onprem-fr-h200-fp8').throughput.evidence: no such file"
            in missing.stderr)


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


def _written(document: dict[str, Any], key: str) -> bool:
    """Whether the dotted `key` names a value or table of the proposal `document`, each
    `candidates[i] (id 'x')` the file's i-th entry, whose id is x."""
    node: Any = document
    for part in re.split(r"\.(?![^(]*\))", key):
        found = re.fullmatch(r"(.+?)(?:\[(\d+)\](?: \(id '(.+)'\))?)?", part)
        assert found is not None
        name, index, ident = found.groups()
        if not isinstance(node, dict) or name not in node:
            return False
        node = node[name]
        if index is not None:
            if not isinstance(node, list) or int(index) >= len(node):
                return False
            node = node[int(index)]
            if ident is not None and node.get("id") != ident:
                return False
    return True


def test_explain_names_keys_as_the_proposal_file_writes_them(db: Path) -> None:
    """Every declared input of every chain is keyed by a path the proposal file has: it named
    `tco.hgx-h200.cost_of_capital_per_year` for the file's `cost_of_capital`, and
    `tco.hgx-h200.hosting` for `hosting.eur_per_kw_month`; a default the file leaves out
    (`demand.redundancy_instances`) is graded `assumed`, not `declared`."""
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
                    if i["grade"] == "declared" and not _written(document, i["key"])]
    assert missing == [], missing


def test_a_proposal_in_the_metrics_place_is_the_proposal(db: Path, tmp_path: Path) -> None:
    # `explain CANDIDATE PROPOSAL.toml`: the metric left out, the default's (CPM) figure of
    # that file, the same as `explain CANDIDATE cpm_eur_per_mtok PROPOSAL.toml`
    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0
    proposal = str(tmp_path / "proposal.toml")
    short = runner.invoke(app, ["explain", "onprem-fr-h100-fp16", proposal, "--db", str(db),
                                "--json"])
    assert short.exit_code == 0, short.output
    full = runner.invoke(app, ["explain", "onprem-fr-h100-fp16", "cpm_eur_per_mtok", proposal,
                               "--db", str(db), "--json"])
    assert json.loads(short.stdout) == json.loads(full.stdout)
    # a .toml that is not there is named as the missing file, not as an unknown metric
    missing = runner.invoke(app, ["explain", "onprem-fr-h100-fp16",
                                  str(tmp_path / "nope.toml"), "--db", str(db)])
    assert missing.exit_code == 1
    assert missing.stderr.startswith(f"error: {tmp_path / 'nope.toml'}: cannot read")
