"""Sound numbers: a bad figure in a proposal exits 1 naming its key, an implausible one needs
an override, a candidate none of whose requests meets the SLO is excluded with that reason,
and no output holds NaN or Infinity (every JSON parses with a strict parser)."""

from __future__ import annotations

import json
import math
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXAMPLE = resources.files("pipeline").joinpath("example_proposal.toml").read_text()


def strict(text: str) -> Any:
    """json.loads that refuses NaN, Infinity and -Infinity, as jq and browsers do."""
    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def no_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(no_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(no_non_finite(v) for v in value)
    return True


TOKENS = "tokens_per_s = { low = 2400, mode = 2800, high = 3100 }"
COST = "cost = { eur_per_hour = 11.0,"
THROUGHPUT_KEY = "candidates[0] (id 'onprem-fr-h100-fp16').throughput.tokens_per_s"


@pytest.mark.parametrize(("old", "new", "key", "problem"), [
    (TOKENS, "tokens_per_s = nan", THROUGHPUT_KEY, "finite number"),
    (TOKENS, "tokens_per_s = inf", THROUGHPUT_KEY, "finite number"),
    (TOKENS, "tokens_per_s = 0", THROUGHPUT_KEY, "must be positive, got 0"),
    (TOKENS, "tokens_per_s = -1", THROUGHPUT_KEY, "must be positive, got -1"),
    (COST, "cost = { eur_per_hour = -5.0,",
     "candidates[0] (id 'onprem-fr-h100-fp16').cost.eur_per_hour", "must be positive"),
    ("pue = 1.3\nthroughput", "pue = inf\nthroughput",
     "candidates[0] (id 'onprem-fr-h100-fp16').pue", "finite number"),
    ("tokens_per_day = 500_000_000", "tokens_per_day = 0", "demand.tokens_per_day",
     "must be positive"),
    ("headroom = 0.25 ", "headroom = 1.0 ", "demand.headroom", "must be below 1"),
    # implausible: a PUE of 135, a price of 900 EUR/h over 8 GPUs (112.5 per GPU-hour)
    ("pue = 1.3\nthroughput", "pue = 135\nthroughput",
     "candidates[0] (id 'onprem-fr-h100-fp16').pue",
     "outside the plausible range of a pue, 1 to 3 ratio"),
    (COST, "cost = { eur_per_hour = 900.0,",
     "candidates[0] (id 'onprem-fr-h100-fp16').cost.eur_per_hour",
     "112.5 EUR/h per GPU (8 GPUs) is outside the plausible range"),
    # implausible below (issue 26): cents typed as euros, 0.02 EUR/h / 8 GPUs = 0.0025 per
    # GPU-hour, under 0.01; a goodput of 1e308 tokens/s, over the H100 SXM's ceiling of
    # 1,979e12 FP8 FLOP/s / (2 x 1e9) = 989,500 tokens/s per GPU; 4 tokens/s over 8 GPUs,
    # 0.5 per GPU, under 1; 5.6 W (kW typed as W), 0.7 W per GPU, under 10
    (COST, "cost = { eur_per_hour = 0.02,",
     "candidates[0] (id 'onprem-fr-h100-fp16').cost.eur_per_hour",
     "0.0025 EUR/h per GPU (8 GPUs) is outside the plausible range of a price, 0.01 to 50 "
     "EUR/h per GPU"),
    (TOKENS, "tokens_per_s = 1e308", THROUGHPUT_KEY,
     "1.25e+307 tokens/s per GPU (8 GPUs) is outside the plausible range of a goodput, 1 to "
     "989500 tokens/s per GPU (H100-SXM-80GB's compute ceiling for a 1B-parameter model)"),
    (TOKENS, "tokens_per_s = 4", THROUGHPUT_KEY,
     "0.5 tokens/s per GPU (8 GPUs) is outside the plausible range of a goodput, 1 to"),
    # capex in thousands typed as units: 250/280/320 + 45 + 12 + 5 = 312/342/382 EUR over
    # 8 GPUs, 39 EUR per GPU at the low end, under 100
    ("capex = { gpus = { low = 250_000, mode = 280_000, high = 320_000 }, servers = 45_000, "
     "network = 12_000, installation = 5_000 }",
     "capex = { gpus = { low = 250, mode = 280, high = 320 }, servers = 45, network = 12, "
     "installation = 5 }", "tco.hgx-h200.capex",
     "39 EUR per GPU (8 GPUs) is outside the plausible range of a capex, 100 to 200000 EUR "
     "per GPU"),
    ("power = { watts = 5600,", "power = { watts = 5.6,",
     "candidates[0] (id 'onprem-fr-h100-fp16').power.watts",
     "0.7 W per GPU (8 GPUs) is outside the plausible range of a power, 10 to 2500 W per GPU"),
])
def test_a_bad_number_exits_1_naming_its_key(tmp_path: Path, db: Path, old: str, new: str,
                                             key: str, problem: str) -> None:
    assert old in EXAMPLE
    path = tmp_path / "proposal.toml"
    path.write_text(EXAMPLE.replace(old, new, 1), encoding="utf-8")
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1, result.output
    assert f"{path}: {key}: " in result.stderr and problem in result.stderr, result.stderr


def test_plausibility_override_accepts_the_figure_with_its_reason(tmp_path: Path, db: Path
                                                                 ) -> None:
    text = proposal("override", candidate("hot", pue="3.5", plausibility='"override"',
                                          plausibility_reason='"container site, measured"'))
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    [hot] = strict(result.stdout)["candidates"]
    assert any("plausibility override: container site, measured" in n for n in hot["notes"])
    # 5,600 W / 4,000 tokens/s = 1.4 J/token; x 1e6 / 3.6e6 x 3.5 = 1.3611 kWh/Mtok
    assert hot["facility_kwh_per_mtok"] == pytest.approx(1.3611, abs=1e-4)


def test_plausibility_override_accepts_a_figure_below_its_range(tmp_path: Path, db: Path
                                                                 ) -> None:
    # 0.05 EUR/h for 8 GPUs is 0.00625 per GPU-hour, under 0.01: accepted with the reason;
    # CPM = 0.05 / (4,000 x 3,600 / 1e6) = 0.05 / 14.4 = 0.0034722 EUR/Mtok
    text = proposal("override", candidate(
        "cheap", cost='{ eur_per_hour = 0.05, source = "grant" }',
        plausibility='"override"', plausibility_reason='"research grant pays the node"'))
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    [cheap] = strict(result.stdout)["candidates"]
    assert any("0.00625 EUR/h per GPU (8 GPUs) is outside the plausible range" in n
               and "research grant pays the node" in n for n in cheap["notes"])
    assert cheap["cpm_eur_per_mtok"] == pytest.approx(0.05 / 14.4)


def test_no_request_meeting_the_slo_excludes_and_every_output_is_finite(
        tmp_path: Path, db: Path) -> None:
    # vllm_detailed_small.json: 4 completed requests with TTFT 0.1 to 0.5 s, none within a
    # 50 ms TTFT limit: goodput 0, so no CPM (11 EUR/h over no token), never Infinity
    shutil.copy(FIXTURES / "bench" / "vllm_detailed_small.json", tmp_path / "run.json")
    text = proposal("zero goodput",
                    candidate("slow", throughput='{ evidence = "run.json" }'),
                    candidate("fine"),
                    "[demand]\ntokens_per_day = 100_000_000\n").replace("ttft_ms = 1500",
                                                                        "ttft_ms = 50")
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = strict((out / "scorecard.json").read_text(encoding="utf-8"))
    assert no_non_finite(doc)
    slow, fine = doc["candidates"]
    assert slow["eligible"] is False and slow["cpm_eur_per_mtok"] is None
    assert slow["exclusion_reason"] == (
        "no operating point under the SLO: no request met the SLO at any load level: the limit "
        "failed most is TTFT over 50 ms, in 4 of 4 completed requests")
    assert fine["eligible"] is True
    assert doc["recommendation"]["candidate"] == "fine"
    # the stored row, the CSV and the Parquet: no NaN, no infinity
    con = duckdb.connect(str(db))
    # (an --out run is stored as a run, not published: out__scorecard_run, issue 17)
    [(stored,)] = con.execute("SELECT candidates_json FROM out__scorecard_run").fetchall()
    assert no_non_finite(strict(stored))
    for frame in (pl.read_csv(out / "scorecard.csv"), pl.read_parquet(out / "scorecard.parquet")):
        for name, dtype in frame.schema.items():
            if dtype.is_float():
                assert frame[name].is_finite().fill_null(True).all(), name


def test_evidence_inspect_json_without_a_ttft_limit_is_strict_json() -> None:
    # two or more runs and no --ttft-ms: the limit is "none", printed as null
    result = runner.invoke(app, ["evidence", "inspect", str(FIXTURES / "bench" / "vllm_sweep"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = strict(result.stdout)
    assert report["sweep"]["slo"]["ttft_ms"] is None
    assert no_non_finite(report)


def test_total_token_basis_counts_input_and_output(tmp_path: Path, db: Path) -> None:
    # vllm_detailed_small.json under TTFT 1500 ms: 4 requests pass, 13 output and 4 x 10 = 40
    # input tokens over the 2.0 s window: 6.5 output tokens/s, x (1 + 40 / 13) = 26.5 tokens/s.
    # Declared: 4,000 output + 8,000 input = 12,000 tokens/s -> 11 / (12,000 x 0.0036) = 0.2546.
    # The 4 passing requests are 4 of 5 offered (one failed): 0.8, so the SLO asks 0.8 here
    # (under the default 0.95 the run is not an operating point, docs/evidence.md).
    shutil.copy(FIXTURES / "bench" / "vllm_detailed_small.json", tmp_path / "run.json")
    text = proposal("basis", '[policy]\ntoken_basis = "total"\n',
                    candidate("measured", throughput='{ evidence = "run.json" }'),
                    candidate("declared", throughput='{ tokens_per_s = 4000, '
                              'input_tokens_per_s = 8000, source = "bench" }'),
                    candidate("output-only")).replace("ttft_ms = 1500",
                                                      "ttft_ms = 1500\nattainment = 0.8")
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    doc = strict(result.stdout)
    measured, declared, output_only = doc["candidates"]
    assert doc["token_basis"] == "total" and declared["token_basis"] == "total"
    assert measured["tokens_per_s"] == pytest.approx(26.5)
    assert declared["tokens_per_s"] == pytest.approx(12_000)
    assert declared["cpm_eur_per_mtok"] == pytest.approx(0.25463, abs=1e-5)
    # a declared goodput without its input tokens has no figure on this basis, and says why
    assert output_only["cpm_eur_per_mtok"] is None and not output_only["eligible"]
    assert any("give throughput.input_tokens_per_s" in n for n in output_only["notes"])
