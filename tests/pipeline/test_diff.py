"""`scorecard diff`: two vintages in a real store, the change of each figure attributed to its
causes by swapping one input group at a time (Shapley values), worked by hand.

The store holds the bundled reference data twice, as vintage 2026-09 with FR's December 2025
day-ahead mean set to 58 EUR/MWh and as 2026-11 with it set to 87 EUR/MWh; nothing else
differs. The proposal (tests/fixtures/reports/diff_proposal.toml) has an FR and a DE on-prem
node costed by TCO at utilisation 1 with electricity at the plain wholesale price, and a
Scaleway cloud candidate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
import typer
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli.diff import diff as diff_command
from pipeline.compare import diff
from pipeline.engine.questions.diff import (
    CAUSES,
    ELECTRICITY,
    EVIDENCE,
    METRICS,
    compose,
    shapley,
)
from pipeline.ingest.bundled import load_bundled
from pipeline.inputs import read_market, resolve
from pipeline.workspace import dumps
from reports.cells import plain_json
from reports.files.outputs import write_outputs
from schemas import proposal as proposal_file
from schemas.result import Diff, DiffFigures, Result, diff_schema
from sources import bundled

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
PROPOSAL = FIXTURES / "diff_proposal.toml"
STAMP = "2026-12-01T09:00:00+00:00"


def files_with_fr_price(price: float) -> dict[str, bundled.RawFile]:
    files = {name: bundled.read(name) for name in bundled.FILES}
    raw = files[bundled.PRICES_FILE]
    text = raw.content.decode()
    original = "FR,2025-12,63.49,"
    assert original in text, "bundled FR price row changed; update this test"
    files[bundled.PRICES_FILE] = bundled.RawFile(
        raw.name, text.replace(original, f"FR,2025-12,{price:g},").encode())
    return files


@pytest.fixture
def two_vintages(db: Path) -> duckdb.DuckDBPyConnection:
    con = store.connect(db)
    load_bundled(con, files_with_fr_price(58), "2026-09")
    load_bundled(con, files_with_fr_price(87), "2026-11")
    return con


def parse(text: str | None = None) -> proposal_file.Proposal:
    return proposal_file.parse(text or PROPOSAL.read_text(encoding="utf-8"), str(PROPOSAL))


def by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in document["candidates"]}


def test_only_fr_electricity_moves_and_all_of_it_is_electricity_price(
        two_vintages: duckdb.DuckDBPyConnection) -> None:
    document = diff(two_vintages, "2026-09", "2026-11", parse(), str(PROPOSAL),
                    generated_at=STAMP, code_version="test", use_stored=False).document()
    assert document["changed_groups"] == [ELECTRICITY]
    fr = by_id(document)["onprem-fr"]["change"]
    # Facility energy: 5600 W / 4000 tokens/s = 1.4 J/token; x 1e6 / 3.6e6 x PUE 1.3
    # = 0.505556 kWh/Mtok. Electricity: x 0.058 EUR/kWh = 0.0293222 EUR/Mtok at A,
    # x 0.087 = 0.0439833 at B: +0.0146611, exactly +50 % (87 / 58 = 1.5).
    elec = fr["electricity_eur_per_mtok"]
    assert elec["a"] == pytest.approx(0.0293222, rel=1e-5)
    assert elec["b"] == pytest.approx(0.0439833, rel=1e-5)
    assert elec["relative"] == pytest.approx(0.5, abs=1e-12)
    assert elec["by_cause"][ELECTRICITY] == pytest.approx(elec["change"], abs=1e-15)
    # At utilisation 1 the TCO's electricity per hour is 5.6 kW x 1.3 x tariff, so CPM moves
    # by the same 0.0146611 EUR/Mtok (5.6 x 1.3 x 0.029 = 0.21112 EUR/h / 14.4 Mtok/h) and
    # all of it is electricity price.
    cpm = fr["cpm_eur_per_mtok"]
    assert cpm["change"] == pytest.approx(0.0146611, rel=1e-4)
    assert cpm["by_cause"][ELECTRICITY] == pytest.approx(cpm["change"], abs=1e-15)
    for metric in ("cpm_eur_per_mtok", "electricity_eur_per_mtok", "carbon_gco2e_per_mtok"):
        for cause in CAUSES:
            if cause != ELECTRICITY:
                assert fr[metric]["by_cause"][cause] == 0.0, (metric, cause)
    assert fr["carbon_gco2e_per_mtok"]["change"] == 0.0  # grid intensity did not change
    # Germany does not move at all.
    for metric, change in by_id(document)["onprem-de"]["change"].items():
        assert change["change"] == 0.0, metric
        assert set(change["by_cause"].values()) == {0.0}, metric
    # Scaleway runs in Paris (zone FR): its electricity breakdown moves by +50 % too
    # (5600 W / 3600 tokens/s / 3.6 x PUE 1.25 = 0.540123 kWh/Mtok x 0.029 EUR/kWh
    # = +0.0156636 EUR/Mtok), all electricity price; its CPM is the offer price and stays.
    scaleway = by_id(document)["scaleway"]["change"]
    assert scaleway["electricity_eur_per_mtok"]["change"] == pytest.approx(0.0156636, rel=1e-5)
    assert scaleway["electricity_eur_per_mtok"]["by_cause"][ELECTRICITY] == pytest.approx(
        0.0156636, rel=1e-5)
    assert scaleway["cpm_eur_per_mtok"]["change"] == 0.0


def test_json_snapshot_and_two_runs_match(two_vintages: duckdb.DuckDBPyConnection) -> None:
    from tests.reports.conftest import check_snapshot

    first = dumps(diff(two_vintages, "2026-09", "2026-11", parse(), str(PROPOSAL),
                       generated_at=STAMP, code_version="test", use_stored=False).document())
    second = dumps(diff(two_vintages, "2026-09", "2026-11", parse(), str(PROPOSAL),
                        generated_at=STAMP, code_version="test", use_stored=False).document())
    assert first == second
    check_snapshot("diff_fr_electricity.json", first)
    # read back, the typed document writes the same JSON
    assert dumps(Diff.model_validate_json(first).document()) == first


def test_the_diff_schema_is_generated_and_the_snapshot_meets_it() -> None:
    import jsonschema

    schema = diff_schema()
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(Diff.model_fields)
    jsonschema.validate(json.loads((FIXTURES / "diff_fr_electricity.json").read_text(
        encoding="utf-8")), schema)
    # a candidate's figures are the attributed metrics, then rank, eligibility, sovereignty
    assert list(DiffFigures.model_fields) == [*METRICS, "pareto_rank", "eligible",
                                              "sovereignty_level"]


def test_the_report_shows_the_diff_without_bidi_or_control_characters(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """write_outputs hands every report a diff whose strings are plain (the page's escaping
    strips them again)."""
    from reports.files import outputs

    text = (FIXTURES / "diff_fr_electricity.json").read_text(encoding="utf-8")
    document = Diff.model_validate_json(text)
    document.notes.append("read \u202eevil\u0007 backwards")
    document.candidates[0].id = "onprem\u2066-fr"
    result = Result.model_validate_json((FIXTURES / "example_scorecard.json").read_text(
        encoding="utf-8"))
    handed: list[Diff | None] = []
    write_html = outputs.write_html

    def spy(result: Result, path: Path, diff: Diff | None = None, **kw: Any) -> None:
        handed.append(diff)
        write_html(result, path, diff, **kw)

    monkeypatch.setattr(outputs, "write_html", spy)
    write_outputs(result, tmp_path, diff=document)
    [plain] = handed
    assert plain is not None and plain_json(dumps(plain.document()))
    assert plain.notes[-1] == "read evil backwards" and plain.candidates[0].id == "onprem-fr"
    page = (tmp_path / "scorecard.html").read_text(encoding="utf-8")
    assert "Note: read evil backwards" in page and "<td>onprem-fr</td>" in page
    assert not any(ch in page for ch in "\u202e\u2066\u0007")
    assert "\u202e" in document.notes[-1]  # the caller's diff is left as it was


def test_stored_baseline_separates_evidence_from_electricity(
        two_vintages: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    """Last month's stored scorecard said 4000 tokens/s for FR; this month's evidence says
    5000. The change from the stored figure splits into evidence and electricity price."""
    card = _stored_run(two_vintages, "2026-09", PROPOSAL.read_text(encoding="utf-8"))
    hourly_a = by_id(card)["onprem-fr"]["cost_eur_per_hour"]
    faster = PROPOSAL.read_text(encoding="utf-8").replace(
        'throughput = { tokens_per_s = 4000, source = "test" }\npower = { watts = 5600, '
        'boundary = "gpu_board", source = "test" }\ncost = { tco = "node" }\n\n'
        '[[candidates]]\nid = "onprem-de"',
        'throughput = { tokens_per_s = 5000, source = "test" }\npower = { watts = 5600, '
        'boundary = "gpu_board", source = "test" }\ncost = { tco = "node" }\n\n'
        '[[candidates]]\nid = "onprem-de"', 1)
    assert faster != PROPOSAL.read_text(encoding="utf-8")
    document = diff(two_vintages, "2026-09", "2026-11", parse(faster), str(PROPOSAL),
                    generated_at=STAMP, code_version="test").document()
    assert document["baseline"] == "stored"
    fr = by_id(document)["onprem-fr"]
    assert fr["changed_inputs"] == ["tokens_per_s: 4,000 -> 5,000"]
    cpm = fr["change"]["cpm_eur_per_mtok"]
    # Evidence: the same hourly cost H over 5000 instead of 4000 tokens/s:
    # H / 18 - H / 14.4 EUR/Mtok (18 = 5000 x 3600 / 1e6 Mtok/h).
    assert cpm["by_cause"][EVIDENCE] == pytest.approx(hourly_a / 18 - hourly_a / 14.4,
                                                      rel=1e-9)
    # Electricity: 5.6 kW x 1.3 x (0.087 - 0.058) EUR/kWh = 0.21112 EUR/h over 18 Mtok/h
    # = 0.0117289 EUR/Mtok.
    assert cpm["by_cause"][ELECTRICITY] == pytest.approx(0.0117289, rel=1e-4)
    assert cpm["change"] == pytest.approx(sum(cpm["by_cause"].values()), abs=1e-12)
    # the run's "last month" lookup finds the stored 2026-09 scorecard, nothing before it
    assert store.previous_vintage(two_vintages, "2026-11", "Diff worked example") == "2026-09"
    assert store.previous_vintage(two_vintages, "2026-09", "Diff worked example") is None


def _stored_run(con: duckdb.DuckDBPyConnection, vintage: str, text: str) -> dict[str, Any]:
    """Store a scorecard the way `scorecard run` does (the out__scorecard row)."""
    from pipeline.engine.scorecard import compute, to_contract

    proposal, market = parse(text), read_market(con, vintage)
    result = to_contract(compute(proposal, resolve(proposal, str(PROPOSAL), market), market),
                         "2026-10-01T09:00:00+00:00", "test")
    store.save_scorecard(con, result, text, dumps(result.document()))
    return result.document()


def test_fx_and_gpu_price_are_separated(two_vintages: duckdb.DuckDBPyConnection) -> None:
    """A USD offer: B's price in USD at A's rate, and A's price at B's rate."""
    a = read_market(two_vintages, "2026-09")
    usd = a.offers.filter(a.offers["currency"] != "EUR")
    if usd.is_empty():
        pytest.skip("no USD offer in the bundled data")
    key = usd.row(0, named=True)
    # B: same USD price, rate 10 % higher (fewer EUR per USD).
    import dataclasses

    import polars as pl

    b = dataclasses.replace(a, vintage="2026-11", offers=a.offers.with_columns(
        pl.when(pl.col("currency") != "EUR").then(pl.col("fx_units_per_eur") * 1.1)
        .otherwise(pl.col("fx_units_per_eur")).alias("fx_units_per_eur"),
        pl.when(pl.col("currency") != "EUR").then(pl.col("price_eur_per_hour") / 1.1)
        .otherwise(pl.col("price_eur_per_hour")).alias("price_eur_per_hour")))
    mixed = compose(a, b, frozenset({"FX"}))
    row = mixed.offers.filter(pl.col("offer_id") == key["offer_id"],
                              pl.col("region") == key["region"],
                              pl.col("pricing_model") == key["pricing_model"]).row(0, named=True)
    # A's USD price over B's rate: price_original / (rate x 1.1)
    assert row["price_eur_per_hour"] == pytest.approx(
        key["price_original_per_hour"] / (key["fx_units_per_eur"] * 1.1), rel=1e-12)
    back = compose(a, b, frozenset({"GPU price"}))  # B's prices (same USD) at A's rate
    row = back.offers.filter(pl.col("offer_id") == key["offer_id"],
                             pl.col("region") == key["region"],
                             pl.col("pricing_model") == key["pricing_model"]).row(0, named=True)
    assert row["price_eur_per_hour"] == pytest.approx(key["price_eur_per_hour"], rel=1e-12)


def test_shapley_splits_an_interaction_evenly_and_adds_up() -> None:
    # worth = price x rate: from (2, 1) to (3, 2): total 6 - 2 = 4. Shapley of price:
    # 1/2 [(3x1 - 2x1) + (3x2 - 2x2)] = 1/2 (1 + 2) = 1.5; of rate: 1/2 [(2x2 - 2x1) +
    # (3x2 - 3x1)] = 1/2 (2 + 3) = 2.5; 1.5 + 2.5 = 4.
    def worth(taken: frozenset[str]) -> float:
        return (3 if "price" in taken else 2) * (2 if "rate" in taken else 1)

    assert shapley(["price", "rate"], worth) == {"price": 1.5, "rate": 2.5}


def test_cli_json_terminal_html_and_errors(two_vintages: duckdb.DuckDBPyConnection,
                                           db: Path, tmp_path: Path) -> None:
    two_vintages.close()
    app = typer.Typer()
    app.command()(diff_command)
    runner = CliRunner()
    args = ["2026-09", "2026-11", str(PROPOSAL), "--db", str(db)]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["changed_groups"] == [ELECTRICITY]
    page = tmp_path / "diff.html"
    result = runner.invoke(app, [*args, "--html", str(page)])
    assert result.exit_code == 0, result.output
    # the terminal table (wrapped at 80 columns by the test runner's console)
    assert "onprem-fr" in result.stdout and "+50.0%" in result.stdout
    assert "electricity" in result.stdout and "(100%)" in result.stdout
    assert '<section id="diff">' in page.read_text(encoding="utf-8")
    assert runner.invoke(app, ["2026-9", "2026-11", "--db", str(db)]).exit_code == 1
    empty = tmp_path / "empty.duckdb"
    result = runner.invoke(app, ["2020-01", "2020-02", str(PROPOSAL), "--db", str(empty)])
    assert result.exit_code == 2 and "no market data" in result.output


def test_workload_profile_prices_and_intensities_swap_separately() -> None:
    """The profile-weighted frame holds a price and an intensity per zone: swapping the
    electricity group takes B's price and keeps A's intensity."""
    import polars as pl

    from pipeline.engine.questions.diff import GRID, _compose_profile

    a = pl.DataFrame({"zone": ["FR"], "wholesale_eur_per_kwh_profile": [0.05],
                      "grid_gco2e_per_kwh_profile": [30.0], "price_intervals": [96],
                      "grid_intervals": [96]})
    b = pl.DataFrame({"zone": ["FR"], "wholesale_eur_per_kwh_profile": [0.08],
                      "grid_gco2e_per_kwh_profile": [40.0], "price_intervals": [100],
                      "grid_intervals": [90]})
    mixed = _compose_profile(a, b, electricity=True, grid=False)
    assert mixed is not None and mixed.columns == a.columns
    assert mixed.row(0) == ("FR", 0.08, 30.0, 100, 96)
    assert _compose_profile(a, b, electricity=False, grid=False) is a
    assert _compose_profile(a, b, electricity=True, grid=True) is b
    assert GRID in CAUSES


def _power_log(path: Path, watts: tuple[float, float]) -> Path:
    """An nvidia-smi CSV (no units) of two GPUs held at constant power for 4 s, 1 s apart."""
    rows = [f"2026/08/16 16:00:0{s}.000, {gpu}, {watts[gpu]:.2f}"
            for s in range(5) for gpu in (0, 1)]
    path.write_text("timestamp, index, power.draw [W]\n" + "\n".join(rows) + "\n",
                    encoding="utf-8")
    return path


def test_a_changed_power_log_is_evidence(two_vintages: duckdb.DuckDBPyConnection,
                                         tmp_path: Path) -> None:
    """FR's power comes from a power log: 300 + 400 W when vintage A was stored, 500 + 700 W
    in the log read today, each scaled to the node's 8 GPUs, x 8/2 of the log's 2 (a proxy).
    The change from the stored figure splits into evidence (the log) and electricity price,
    and the log's figure is listed as the changed input."""
    log = _power_log(tmp_path / "power.csv", (300.0, 400.0))
    declared = 'power = { watts = 5600, boundary = "gpu_board", source = "test" }\ncost = { tco'
    # a log of 2 GPUs for the 8-GPU node: declared a proxy (evidence identity, issue 26)
    measured = (f'power = {{ evidence = "{log}", tz = "UTC", proxy = "two GPUs of the node '
                'for the test" }\ncost = { tco')
    text = "allow_outside = true  # the log is in tmp_path, the proposal in the fixtures\n" + (
        PROPOSAL.read_text(encoding="utf-8").replace(declared, measured, 1))
    assert text != PROPOSAL.read_text(encoding="utf-8")
    stored = by_id(_stored_run(two_vintages, "2026-09", text))["onprem-fr"]
    # a constant 300 W + 400 W over the whole log: 700 W at the boards on 2 GPUs, scaled to
    # the node's 8 (a proxy on fewer GPUs, pipeline/inputs/evidence/power.py): 700 x 8/2
    # = 2,800 W
    assert stored["detail"]["busy_power_w"] == pytest.approx(2800.0)
    _power_log(log, (500.0, 700.0))  # the same file, now 1200 W: 1200 x 8/2 = 4,800 W
    document = diff(two_vintages, "2026-09", "2026-11", parse(text), str(PROPOSAL),
                    generated_at=STAMP, code_version="test").document()
    fr = by_id(document)["onprem-fr"]
    assert fr["changed_inputs"] == ["busy_power_w: 2,800 -> 4,800"]
    cpm = fr["change"]["cpm_eur_per_mtok"]
    # At utilisation 1 only the electricity part of the TCO's hourly cost depends on power:
    # power [kW] x PUE 1.3 x tariff [EUR/kWh] / 14.4 Mtok/h (4000 tokens/s x 3600 / 1e6).
    # Evidence (at A's 0.058 EUR/kWh): (4.8 - 2.8) x 1.3 x 0.058 / 14.4 = 0.1508 / 14.4
    # = 0.01047222 EUR/Mtok.
    assert cpm["by_cause"][EVIDENCE] == pytest.approx(0.01047222, rel=1e-5)
    # Electricity price (at B's 4.8 kW): 4.8 x 1.3 x (0.087 - 0.058) / 14.4 = 0.18096 / 14.4
    # = 0.01256667 EUR/Mtok.
    assert cpm["by_cause"][ELECTRICITY] == pytest.approx(0.01256667, rel=1e-5)
    # nothing is left to method/assumptions, and the shares add up to the change
    # (0.01047222 + 0.01256667 = 0.02303889)
    assert cpm["by_cause"]["method/assumptions"] == 0.0
    assert cpm["change"] == pytest.approx(0.02303889, rel=1e-5)
    # carbon: (4.8 - 2.8) kW x 1.3 / 14.4 Mtok/h x FR's 31 gCO2e/kWh = 5.59722 gCO2e/Mtok,
    # all of it evidence (the grid intensity did not change)
    carbon = fr["change"]["carbon_gco2e_per_mtok"]
    assert carbon["by_cause"][EVIDENCE] == pytest.approx(5.59722, rel=1e-5)
    assert carbon["change"] == pytest.approx(5.59722, rel=1e-5)


def test_a_changed_tco_parameter_is_method(two_vintages: duckdb.DuckDBPyConnection) -> None:
    """The hourly cost is derived, not compared; the TCO parameter that moved it is listed and
    its share goes to method/assumptions."""
    original = PROPOSAL.read_text(encoding="utf-8")
    _stored_run(two_vintages, "2026-09", original)
    dearer = original.replace("capex = { gpus = 300000 }", "capex = { gpus = 360000 }", 1)
    assert dearer != original
    document = diff(two_vintages, "2026-09", "2026-11", parse(dearer), str(PROPOSAL),
                    generated_at=STAMP, code_version="test").document()
    fr = by_id(document)["onprem-fr"]
    assert fr["changed_inputs"] == ["capex_eur: 300,000 -> 360,000"]
    # No cost of capital, no residual: capital per hour = capex / 48 months x 12 / 8760;
    # +60000 EUR -> +60000 / 48 x 12 / 8760 = +1.712329 EUR/h over 14.4 Mtok/h
    # = +0.1189117 EUR/Mtok, all of it method/assumptions; evidence gets none.
    cpm = fr["change"]["cpm_eur_per_mtok"]
    assert cpm["by_cause"]["method/assumptions"] == pytest.approx(0.1189117, rel=1e-5)
    assert cpm["by_cause"][EVIDENCE] == 0.0


def test_cli_a_broken_evidence_file_is_a_user_error(two_vintages: duckdb.DuckDBPyConnection,
                                                    db: Path, tmp_path: Path) -> None:
    """`scorecard diff` meets a bad evidence file the way `scorecard run` does: exit 1 and one
    `error:` line naming the file, no traceback."""
    two_vintages.close()
    log = tmp_path / "broken_power.csv"
    log.write_text("timestamp, index, power.draw [W]\nyesterday, 0, lots\n", encoding="utf-8")
    declared = 'power = { watts = 5600, boundary = "gpu_board", source = "test" }\ncost = { tco'
    proposal = tmp_path / "proposal.toml"
    proposal.write_text(PROPOSAL.read_text(encoding="utf-8").replace(
        declared, f'power = {{ evidence = "{log}", tz = "UTC" }}\ncost = {{ tco', 1),
        encoding="utf-8")
    app = typer.Typer()
    app.command()(diff_command)
    result = CliRunner().invoke(app, ["2026-09", "2026-11", str(proposal), "--db", str(db),
                                      "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception)
    assert result.exit_code == 1
    assert result.stdout == ""
    # one line: "error: nvidia-smi: <file>: line 2 timestamp: bad timestamp (...)"
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert str(log) in result.stderr and "line 2" in result.stderr
    assert "Traceback" not in result.output


def test_cli_works_offline_on_a_fresh_store(db: Path) -> None:
    """Like `scorecard run`, diff loads the bundled reference data (vintage bundled.VINTAGE)
    first, so a fresh store has market data: the bundled vintage against itself changes
    nothing."""
    app = typer.Typer()
    app.command()(diff_command)
    result = CliRunner().invoke(app, [bundled.VINTAGE, bundled.VINTAGE, str(PROPOSAL),
                                      "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["changed_groups"] == []
    # no stored scorecard in a fresh store: A is recomputed, identical to B
    assert document["baseline"] == "recomputed"
    for candidate in document["candidates"]:
        for metric, change in candidate["change"].items():
            assert change["change"] == 0.0, (candidate["id"], metric)


def test_market_b_given_by_the_caller_is_used(two_vintages: duckdb.DuckDBPyConnection) -> None:
    """`scorecard run` has B's market already; diff takes it instead of reading it again.
    Given A's market relabelled as 2026-11, nothing changed (read from the store, FR's
    electricity would: 58 -> 87 EUR/MWh)."""
    import dataclasses

    same = dataclasses.replace(read_market(two_vintages, "2026-09"), vintage="2026-11")
    document = diff(two_vintages, "2026-09", "2026-11", parse(), str(PROPOSAL),
                    generated_at=STAMP, code_version="test", use_stored=False,
                    market_b=same).document()
    assert document["changed_groups"] == []
    # recomputed as asked (`--recompute`), which the note says rather than "no stored
    # scorecard" (a stored one may well be there)
    assert any(n.startswith("A is recomputed, as asked (--recompute), with today's")
               for n in document["notes"])
    assert not any("no stored scorecard" in n for n in document["notes"])
    # FR electricity stays at 0.0293222 EUR/Mtok (5600 W / 4000 tokens/s x 1e6 / 3.6e6 x 1.3
    # x 0.058 EUR/kWh): a change of 0
    fr = by_id(document)["onprem-fr"]["change"]["electricity_eur_per_mtok"]
    assert fr["b"] == pytest.approx(0.0293222, rel=1e-5) and fr["change"] == 0.0
    with pytest.raises(ValueError, match="market_b is of vintage 2026-09, not 2026-11"):
        diff(two_vintages, "2026-09", "2026-11", parse(), str(PROPOSAL), generated_at=STAMP,
             code_version="test", use_stored=False,
             market_b=read_market(two_vintages, "2026-09"))


def _cli() -> typer.Typer:
    app = typer.Typer()
    app.command()(diff_command)
    return app


def test_cli_refuses_a_month_to_come_and_the_later_month_first(
        two_vintages: duckdb.DuckDBPyConnection, db: Path) -> None:
    """A month to come holds no market data (`run` refuses it: the same check); A after B
    would print every change with its sign flipped under the earlier month's name. Both exit
    1 before anything is computed, saying what to give."""
    two_vintages.close()
    runner = CliRunner()
    future = runner.invoke(_cli(), ["2026-11", "2999-01", str(PROPOSAL), "--db", str(db)])
    assert future.exit_code == 1, future.output
    assert future.stderr.startswith("error: vintage B '2999-01' is after this month (")
    assert future.stdout == ""  # no table
    reversed_ = runner.invoke(_cli(), ["2026-11", "2026-09", str(PROPOSAL), "--db", str(db)])
    assert reversed_.exit_code == 1, reversed_.output
    assert reversed_.stderr == ("error: vintage A 2026-11 is after vintage B 2026-09: give the "
                                "earlier month first (scorecard diff 2026-09 2026-11)\n")


def test_cli_html_to_a_folder_or_into_a_missing_folder_is_one_error_line(
        two_vintages: duckdb.DuckDBPyConnection, db: Path, tmp_path: Path) -> None:
    """Both were an IsADirectoryError / FileNotFoundError escaping as "a bug" (exit 3)."""
    two_vintages.close()
    runner = CliRunner()
    args = ["2026-09", "2026-11", str(PROPOSAL), "--db", str(db), "--html"]
    folder = runner.invoke(_cli(), [*args, str(tmp_path)])
    assert folder.exit_code == 1 and folder.stderr == (
        f"error: --html {tmp_path}: is a folder; give the file to write, e.g. "
        f"{tmp_path / 'diff.html'}\n")
    missing = tmp_path / "missing" / "diff.html"
    refused = runner.invoke(_cli(), [*args, str(missing)])
    assert refused.exit_code == 1 and refused.stderr == (
        f"error: --html {missing}: its folder {missing.parent} does not exist\n")
    assert not missing.parent.exists()


def test_cli_prints_names_as_text_and_only_the_diff_on_stdout(
        two_vintages: duckdb.DuckDBPyConnection, db: Path, tmp_path: Path) -> None:
    """A proposal's name is foreign text: `[/]` made rich raise MarkupError (exit 3) and
    `[draft]` vanished as a style tag. Written to a file (`> diff.txt`), stdout is the diff
    alone: the `wrote` line goes to stderr. A figure that did not move reads UNCHANGED, not
    `0 0 %`."""
    two_vintages.close()
    name = "[/] Inference [draft] platform"
    proposal = tmp_path / "proposal.toml"
    proposal.write_text(PROPOSAL.read_text(encoding="utf-8").replace(
        'name = "Diff worked example"', f'name = "{name}"'), encoding="utf-8")
    page = tmp_path / "diff.html"
    result = CliRunner().invoke(_cli(), ["2026-09", "2026-11", str(proposal), "--db", str(db),
                                         "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert f"{name}: 2026-09 -> 2026-11" in result.stdout
    assert "wrote" not in result.stdout and result.stderr == f"wrote {page}\n"
    assert f"<title>Diff: {name}</title>" in page.read_text(encoding="utf-8")
    # the Scaleway candidate's figures did not move (only FR's wholesale price changed)
    [row] = [line for line in result.stdout.splitlines()
             if "scaleway" in line and "CPM" in line]
    assert "\u2014" in row and "0 %" not in row
