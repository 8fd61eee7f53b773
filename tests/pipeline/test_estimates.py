"""Design-stage candidates: roofline goodput and TDP power, graded `estimated`, gated by
policy.allow_estimates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()

B200 = candidate(
    "b200", label='"Llama 3.1 70B FP8 on 8 x B200 (design stage)"', gpu='"B200-SXM-180GB"',
    throughput='{ estimate = { model = "Llama-3.1-70B", precision = "fp8", batch = 64, '
               'context = 4096, efficiency = { low = 0.3, mode = 0.45, high = 0.6 } } }',
    power="{ estimate = { tdp_fraction = { low = 0.6, mode = 0.75, high = 0.9 } } }",
    cost='{ eur_per_hour = 30.0, source = "quote" }')
H100 = candidate("h100", label='"measured elsewhere"',
                 throughput='{ tokens_per_s = 2800, source = "bench" }')


def run(tmp_path: Path, db: Path, allow: str) -> dict:
    path = tmp_path / "p.toml"
    path.write_text(proposal("estimates", f"[policy]\nallow_estimates = {allow}\n", B200, H100))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return {c["id"]: c for c in json.loads(result.stdout)["candidates"]}


def test_estimated_goodput_and_power(tmp_path: Path, db: Path) -> None:
    b200 = run(tmp_path, db, "true")["b200"]
    # Roofline, per GPU with tensor parallel 8 (B200: 7,700 GB/s):
    #   weights 70.554e9 params x 1 B (fp8) / 8 = 8.819 GB
    #   KV per token 2 x 80 layers x 8 KV heads x 128 x 2 B = 327,680 B; cache 64 x 4096 x
    #   327,680 / 1e9 / 8 = 10.737 GB; new K/V 64 x 327,680 / 8 / 1e9 = 0.0026 GB
    #   the input embedding (128,256 x 8,192 = 1.0507e9 parameters, looked up) is not read
    #   per step (issue 16): weights read (70.554 - 1.051) GB / 8 = 8.688 GB
    #   step = (8.688 + 10.737 + 0.003) GB / 7,700 GB/s = 2.523 ms (memory-bound)
    #   ceiling = 64 / 2.523 ms = 25,366 tokens/s; x efficiency 0.45 = 11,414.5 tokens/s
    assert b200["tokens_per_s_grade"] == "estimated"
    assert b200["tokens_per_s"] == pytest.approx(11_414.5, rel=1e-3)
    # power = 8 x 1,000 W TDP x 0.75 = 6,000 W at the boards -> 6000 / 11,414.5 = 0.5256 J/token
    assert b200["energy_j_per_token"] == pytest.approx(0.5256, rel=1e-3)
    assert b200["energy_boundary"] == "gpu_board"
    band = b200["uncertainty"]["cpm_eur_per_mtok"]
    assert band["p5"] < b200["cpm_eur_per_mtok"] < band["p95"]
    assert any("design-stage estimate" in n for n in b200["notes"])


def test_policy_can_keep_estimates_out_of_the_ranking(tmp_path: Path, db: Path) -> None:
    c = run(tmp_path, db, "false")
    assert c["b200"]["eligible"] is False and c["b200"]["pareto_rank"] is None
    assert "allow_estimates = false" in c["b200"]["exclusion_reason"]
    assert c["b200"]["cpm_eur_per_mtok"] is not None  # still shown
    assert c["h100"]["pareto_rank"] == 1


CALIBRATED = proposal("calibrated", candidate(
    "h100-8b", label='"Llama 3.1 8B on one H100, calibrated on our concurrency-1 run"',
    gpu_count="1", power='{ watts = 700, boundary = "gpu_board", source = "TDP" }',
    cost='{ eur_per_hour = 3.0, source = "quote" }',
    throughput='{ estimate = { model = "Llama-3.1-8B", batch = 16, context = 2048, '
               'efficiency = 1.0, calibration = { tpot_ms = 7.5, context = 512, '
               'source = "our H100 run of 2026-10-02" } } }'))


def test_calibrated_estimate(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(CALIBRATED)
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    (c,) = json.loads(result.stdout)["candidates"]
    # Llama 3.1 8B bf16: weights 8,030,261,248 x 2 B = 16.0605 GB, of which the looked-up
    # input embedding (128,256 x 4,096 x 2 B = 1.0507 GB) is not read per step: 15.0099 GB;
    # KV per token 2 x 32 x 8 x 128 x 2 B = 131,072 B. The run at concurrency 1 read weights
    # + 512 cached tokens + one new token's K/V = 15.0099 + 0.0671 + 0.0001 = 15.0771 GB per
    # 7.5 ms step: 2,010.28 GB/s effective.
    # At batch 16, context 2,048: traffic 15.0099 + 4.2950 + 0.0021 = 19.3069 GB
    # -> 9.6041 ms per step (memory-bound) -> 16 / 9.6041 ms = 1,665.96 tokens/s
    # (the datasheet 3,350 GB/s would give 2,776.2).
    assert c["tokens_per_s"] == pytest.approx(1665.96, rel=1e-4)
    assert "calibrated on our H100 run of 2026-10-02" in c["detail"]["tokens_per_s_source"]


def test_calibration_needs_its_source(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(CALIBRATED.replace(', source = "our H100 run of 2026-10-02"', ""))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1
    assert "calibration" in result.stderr and "name the measured run" in result.stderr
