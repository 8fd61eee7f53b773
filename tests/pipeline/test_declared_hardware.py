"""`[hardware.NAME]` in a proposal: an accelerator the reference table lacks, declared with its
figures and source; a candidate names it as its `gpu`, the roofline and the TDP power estimate
read it like a reference row, and the run cites it as declared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()

HARDWARE = """
[hardware.Accel-X]
memory_gb = 100
memory_bandwidth_gb_per_s = 4000
bf16_dense_tflops = 1000
tdp_w = 800
source = "Accel-X datasheet rev 2 (hand figures for the test)"
"""

ON_ACCEL_X = candidate(
    "accel-x-8b", label='"Llama 3.1 8B on one declared Accel-X"', gpu='"Accel-X"',
    gpu_count="1",
    throughput='{ estimate = { model = "Llama-3.1-8B", batch = 16, context = 2048, '
               'efficiency = 1.0 } }',
    power="{ estimate = { tdp_fraction = 0.5 } }",
    cost='{ eur_per_hour = 3.0, source = "quote" }')


def _run(tmp_path: Path, db: Path, text: str) -> tuple[int, str, str]:
    path = tmp_path / "p.toml"
    path.write_text(text)
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    return result.exit_code, result.stdout, result.stderr


def test_an_estimate_on_a_declared_gpu(tmp_path: Path, db: Path) -> None:
    code, out, err = _run(tmp_path, db, proposal(
        "declared", "[policy]\nallow_estimates = true\n", HARDWARE, ON_ACCEL_X))
    assert code == 0, err
    document = json.loads(out)
    (c,) = document["candidates"]
    # Llama 3.1 8B bf16 (as in test_estimates' calibrated case): weights 8,030,261,248 x 2 B
    # = 16.0605 GB, less the looked-up input embedding (128,256 x 4,096 x 2 B = 1.0507 GB):
    # 15.0099 GB read per step; KV per token 2 x 32 layers x 8 heads x 128 x 2 B = 131,072 B,
    # cache 16 x 2,048 x 131,072 B = 4.2950 GB, new K/V 16 x 131,072 B = 0.0021 GB.
    # Step = 19.3069 GB / 4,000 GB/s (the declared bandwidth) = 4.8267 ms; compute
    # 2 x 8.03e9 x 16 / 1,000e12 = 0.257 ms, so memory-bound: 16 / 4.8267 ms = 3,314.9 tok/s
    assert c["tokens_per_s_grade"] == "estimated"
    assert c["tokens_per_s"] == pytest.approx(3314.9, rel=1e-4)
    # power: 1 x 800 W declared TDP x 0.5 = 400 W -> 400 / 3,314.9 = 0.12067 J/token
    assert c["energy_j_per_token"] == pytest.approx(0.12067, rel=1e-3)
    cited = [s for s in document["sources"] if s["kind"] == "hardware"]
    assert cited == [{"kind": "hardware", "subject": "Accel-X", "url": None, "date": None,
                      "licence": "declared in the proposal", "snapshot_sha256": None,
                      "source": "Accel-X datasheet rev 2 (hand figures for the test)"}]


def test_an_unknown_gpu_says_it_can_be_declared(tmp_path: Path, db: Path) -> None:
    code, _, err = _run(tmp_path, db, proposal(
        "unknown", HARDWARE, ON_ACCEL_X.replace('"Accel-X"', '"Accel-Y"')))
    assert code == 1
    assert "candidates[0] (id 'accel-x-8b').gpu: unknown accelerator 'Accel-Y'" in err
    assert "declared: Accel-X" in err


def test_a_declared_name_the_reference_table_has_is_refused(tmp_path: Path, db: Path) -> None:
    code, _, err = _run(tmp_path, db, proposal(
        "clash", HARDWARE.replace("Accel-X]", "H100-SXM-80GB]"), candidate("h100")))
    assert code == 1
    assert "hardware.H100-SXM-80GB: this accelerator is in the reference hardware table" in err


def test_a_declared_gpu_needs_its_source_and_positive_figures(tmp_path: Path, db: Path) -> None:
    text = proposal("bad", HARDWARE.replace('source = "Accel-X datasheet rev 2 (hand figures '
                                            'for the test)"\n', "").replace("tdp_w = 800",
                                                                            "tdp_w = 0"),
                    ON_ACCEL_X)
    code, _, err = _run(tmp_path, db, text)
    assert code == 1
    assert "hardware.Accel-X.source: missing" in err
    assert "hardware.Accel-X.tdp_w:" in err


def test_a_declared_gpu_without_peak_flops_has_no_goodput_ceiling(tmp_path: Path, db: Path
                                                                   ) -> None:
    # found in review: the goodput ceiling took float(None) of a GPU declared without any
    # dense TFLOPS (both optional) and exited 3; with no peak there is no ceiling to hold to
    no_flops = HARDWARE.replace("bf16_dense_tflops = 1000\n", "")
    declared = candidate("accel-x-8b", gpu='"Accel-X"', gpu_count="1",
                         throughput='{ tokens_per_s = 2000, source = "quote" }',
                         power='{ watts = 500, boundary = "gpu_board", source = "quote" }',
                         cost='{ eur_per_hour = 3.0, source = "quote" }')
    code, out, err = _run(tmp_path, db, proposal("declared", no_flops, declared))
    assert code == 0, err
    (c,) = json.loads(out)["candidates"]
    assert c["tokens_per_s"] == 2000.0


def test_an_estimate_above_the_gpus_ceiling_is_refused(tmp_path: Path, db: Path) -> None:
    # The plausibility check holds an estimated goodput too (issue 28 review). Accel-X declared
    # with an FP8 rate of 5 TFLOP/s (the check's ceiling takes FP8 first): 5e12 / (2 x 1e9) =
    # 2,500 tokens/s per GPU for a 1B-parameter model, below the 3,314.9 tokens/s the roofline
    # estimates on its BF16 rate (test above): exit 1 naming the estimate's key
    weak_fp8 = HARDWARE.replace("tdp_w = 800", "fp8_dense_tflops = 5\ntdp_w = 800")
    text = proposal("declared", "[policy]\nallow_estimates = true\n", weak_fp8, ON_ACCEL_X)
    code, _, err = _run(tmp_path, db, text)
    assert code == 1
    assert ("candidates[0] (id 'accel-x-8b').throughput.estimate: the estimated 3314.87 tokens/s "
            "per GPU (1 GPUs) is outside the plausible range of a goodput, 0 to 2500 tokens/s "
            "per GPU (Accel-X's compute ceiling for a 1B-parameter model)") in err, err
    # an override accepts it, noted with its reason
    code, out, err = _run(tmp_path, db, text.replace(
        'gpu = "Accel-X"', 'gpu = "Accel-X"\nplausibility = "override"\n'
        'plausibility_reason = "FP8 is emulated on Accel-X"'))
    assert code == 0, err
    (c,) = json.loads(out)["candidates"]
    assert c["tokens_per_s"] == pytest.approx(3314.9, rel=1e-4)
    assert any("accepted by plausibility override: FP8 is emulated" in n for n in c["notes"])
