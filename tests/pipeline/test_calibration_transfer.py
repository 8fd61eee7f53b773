"""Calibration on a measured run of the same engine on another GPU (issue 28, item 2): the
run's MBU and MFU (achieved over its own GPU's datasheet peaks) applied to the candidate's
GPU; the source and notes say `estimated (calibrated on ...)`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()


def _h100(calibration: str) -> str:
    return candidate(
        "h100", gpu='"H100-SXM-80GB"', gpu_count="1",
        power='{ watts = 700, boundary = "gpu_board", source = "TDP" }',
        throughput=('{ estimate = { model = "Qwen2.5-7B", batch = 16, context = 2048, '
                    f'efficiency = 1.0{calibration} }} }}'))


def _run(tmp_path: Path, db: Path, block: str) -> dict:
    path = tmp_path / "p.toml"
    path.write_text(proposal("transfer", block))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    (c,) = json.loads(result.stdout)["candidates"]
    return c


def test_an_a40_run_calibrates_an_h100_estimate(tmp_path: Path, db: Path) -> None:
    plain = _run(tmp_path, db, _h100(""))
    c = _run(tmp_path, db, _h100(
        ', calibration = { gpu = "A40-48GB", tpot_ms = 28, context = 512, ttft_ms = 88, '
        'prompt_tokens = 512, source = "seed 004 chart 1a" }'))
    # Seed 004's A40 run (Qwen2.5-7B, vLLM, concurrency 1): traffic at 512 cached tokens =
    # 14.1398 GB of weights read + 512 x 57,344 B + 57,344 B = 14.1697 GB in 28 ms =
    # 506.09 GB/s of the A40's 696: MBU 72.71 %; prefill 6.736e12 FLOP in 88 ms = 76.55
    # TFLOP/s of 149.7: MFU 51.13 %. On the H100: 0.7271 x 3,350 = 2,435.9 GB/s and
    # 0.5113 x 989.5 = 506.0 TFLOP/s. At batch 16, context 2,048: traffic 16.0212 GB /
    # 2,435.9 GB/s = 6.5770 ms (memory-bound) -> 16 / 6.5770 ms = 2,432.7 tokens/s, against
    # 3,345.6 at the datasheet peak (x 0.7271)
    assert plain["tokens_per_s"] == pytest.approx(3_345.6, rel=1e-4)
    assert c["tokens_per_s"] == pytest.approx(2_432.7, rel=1e-4)
    assert c["tokens_per_s_grade"] == "estimated"
    assert "MBU 72.7%" in c["detail"]["tokens_per_s_source"]
    assert any(n.startswith("estimated (calibrated on seed 004 chart 1a)") and "A40-48GB" in n
               for n in c["notes"])


def test_an_unknown_run_gpu_is_named(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(proposal("transfer", _h100(
        ', calibration = { gpu = "Z9", tpot_ms = 28, context = 512, source = "x" }')))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1
    assert "throughput.estimate.calibration.gpu" in result.stderr and "Z9" in result.stderr


def test_the_cli_transfers_the_same_shares() -> None:
    # the same run and candidate as above: 2,432.7 tokens/s, MBU 72.71 % of the A40's peak
    result = runner.invoke(app, [
        "estimate", "--model", "Qwen2.5-7B", "--gpu", "H100-SXM-80GB", "--batch", "16",
        "--context", "2048", "--calibrate-tpot-ms", "28", "--calibrate-context", "512",
        "--calibrate-ttft-ms", "88", "--calibrate-prompt-tokens", "512",
        "--calibration-source", "seed 004", "--calibration-gpu", "A40-48GB", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tokens_per_s_ceiling"] == pytest.approx(2_432.7, rel=1e-4)
    assert data["calibration"]["mbu"] == pytest.approx(0.7271, abs=1e-4)
    assert "on A40-48GB" in data["inputs"]["calibration_source"]
    bad = runner.invoke(app, ["estimate", "--model", "Qwen2.5-7B", "--gpu", "H100-SXM-80GB",
                              "--batch", "1", "--context", "512", "--calibrate-tpot-ms", "28",
                              "--calibrate-context", "512", "--calibration-source", "x",
                              "--calibration-gpu", "Z9"])
    assert bad.exit_code == 1 and "--calibration-gpu: unknown gpu 'Z9'" in bad.stderr
