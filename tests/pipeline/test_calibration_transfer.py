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


def _a40_serving(calibration: str) -> str:
    # the review's repro (issue 28): Qwen2.5-7B serving form on one A40, C = 4, 100 + 100 tokens
    return candidate(
        "a40", gpu='"A40-48GB"', gpu_count="1",
        power='{ watts = 300, boundary = "gpu_board", source = "TDP" }',
        throughput=('{ estimate = { model = "Qwen2.5-7B", concurrency = 4, prompt_tokens = 100, '
                    f'output_tokens = 100, calibration = {{ {calibration}, source = "x" }} }} }}'))


@pytest.mark.parametrize(("calibration", "problem"), [
    # Llama-3.1-405B at TP 8 on A40s: 405.85e9 x 2 B = 811.71 GB of weights + 8 x 4.8 GB
    # reserve + 512 x 516,096 B of KV = 850.37 GB over 8 x 48 = 384 GB (it was accepted at
    # "MBU 518.1%")
    ('tpot_ms = 28, context = 512, model = "Llama-3.1-405B", tensor_parallel = 8',
     "model: the measured run's model does not fit its GPUs at batch 1: required 850.37 GB"),
    # the candidate's own A40: (14.14 GB + 512 x 57,344 B + 57,344 B) / 5 ms = 14.1706 / 0.005
    # = 2,834.1 GB/s, 407.2 % of the A40's 696 GB/s
    ("tpot_ms = 5, context = 512",
     "tpot_ms: implies 2,834.1 GB/s per GPU, MBU 407.2% of the 696.0 GB/s peak"),
    # a prefill of 512 tokens (6.736e12 FLOP, seed 004's 6.74e12) in 10 ms: 673.6 TFLOP/s,
    # 450 % of the A40's 149.7
    ("ttft_ms = 10, prompt_tokens = 512",
     "ttft_ms: implies 673.6 TFLOP/s per GPU, MFU 450.0% of the 149.7 TFLOP/s peak"),
])
def test_an_impossible_calibration_is_refused(tmp_path: Path, db: Path, calibration: str,
                                              problem: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(proposal("transfer", _a40_serving(calibration)))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1, result.output
    assert "candidates[0] (id 'a40').throughput.estimate.calibration: " + problem \
        in result.stderr, result.stderr


def test_the_cli_refuses_the_same_and_an_unmeasured_run_gpu() -> None:
    base = ["estimate", "--model", "Qwen2.5-7B", "--gpu", "A40-48GB", "--batch", "4",
            "--context", "512", "--calibration-gpu", "H100-SXM-80GB"]
    # no measurement: the run's GPU was ignored
    result = runner.invoke(app, base)
    assert result.exit_code == 1
    assert "--calibration-gpu: needs the run's measurement" in result.stderr
    # 2 ms on an H100: (14.14 + 0.0294 + 0.0001) GB / 2 ms = 7,085.3 GB/s, 211.5 % of 3,350
    result = runner.invoke(app, [*base, "--calibrate-tpot-ms", "2", "--calibrate-context", "512",
                                 "--calibration-source", "x"])
    assert result.exit_code == 1
    assert "--calibrate-tpot-ms: implies 7,085.3 GB/s per GPU, MBU 211.5%" in result.stderr
