"""Issue 26, item 2 (evidence identity) for quality results: the GPUs lm-evaluation-harness
ran the model on (PyTorch's collect_env in `pretty_env_info`, read when the model ran on that
machine: an in-process backend, or a server at localhost) are compared with the candidate's
`gpu` (pipeline/inputs/evidence/quality.py); a mismatch is refused naming the file, what it
says and what the candidate says, and `proxy = "why"` grades the quality `proxy`. The GPU
count is no identity of an accuracy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from proposals import candidate, proposal
from samples import sample
from typer.testing import CliRunner

from pipeline.cli import app

#: Qwen3-4B-Instruct-2507 scored by lm-eval 0.4.9.2's `hf` backend (in process) on a machine
#: whose collect_env says "GPU 0: NVIDIA GeForce RTX 5090"
QWEN = "lm_eval/lm_eval_0.4.9.2_qwen3-4b-instruct-2507_hf_results_2025-12-15T08-32-44.json"
#: Nemotron-3-Nano-Omni bf16 scored by lm-eval 0.4.11's `local-chat-completions` against a
#: vLLM server at localhost:8000, on a machine whose collect_env says "GPU 0: NVIDIA GB10"
NEMOTRON = "lm_eval/lm_eval_0.4.11_nemotron3-nano-omni-30b-a3b_bf16_gsm8k_results_EXCERPT.json"

GB10 = """
[hardware.GB10]
memory_gb = 128
memory_bandwidth_gb_per_s = 273
bf16_dense_tflops = 100
tdp_w = 140
source = "hand figures for the test"
"""


def _run(tmp_path: Path, db: Path, evidence: Path, quality: str = '{ evidence = "evals" }',
         *, gpu: str = '"H100-SXM-80GB"', gpu_count: str = "8", tables: str = "") -> Any:
    (tmp_path / "evals").mkdir(exist_ok=True)
    shutil.copy(evidence, tmp_path / "evals" / evidence.name)
    path = tmp_path / "p.toml"
    path.write_text(proposal("quality identity", tables, candidate(
        "c", gpu=gpu, gpu_count=gpu_count, quality=quality)), encoding="utf-8")
    return CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])


def test_real_results_scored_on_another_gpu_are_refused(tmp_path: Path, db: Path) -> None:
    result = _run(tmp_path, db, sample(QWEN))
    assert result.exit_code == 1, result.output
    assert ("candidates[0] (id 'c').quality.evidence: evals is not this candidate's evidence: "
            "accelerator: the file says 'NVIDIA GeForce RTX 5090' (a name the alias table does "
            "not know), the candidate H100-SXM-80GB (if it stands in on purpose, declare "
            "quality = { evidence = ..., proxy = \"why\" })") in " ".join(result.stderr.split())


def test_real_results_on_another_gpu_declared_a_proxy_are_graded_proxy(tmp_path: Path,
                                                                        db: Path) -> None:
    result = _run(tmp_path, db, sample(QWEN), '{ evidence = "evals", proxy = "same checkpoint '
                  'and dtype: accuracy does not depend on the GPU" }')
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    assert c["quality"]["grade"] == "proxy"
    assert c["detail"]["quality_identity_check"] == (
        "differs, a declared proxy (same checkpoint and dtype: accuracy does not depend on the "
        "GPU): accelerator: the file says 'NVIDIA GeForce RTX 5090' (a name the alias table "
        "does not know), the candidate H100-SXM-80GB")
    # the same, as data: the identity of the quality evidence, failed (a declared proxy)
    assert [(e["input"], e["check"], e["outcome"]) for e in c["evidence_checks"]] == [
        ("quality", "identity", "failed")]


def test_a_server_at_localhost_ran_on_the_machine_described(tmp_path: Path, db: Path) -> None:
    # the candidate is that GPU (declared: the table lacks it); the count (8 here) is no
    # identity of an accuracy, and is not reported unchecked
    result = _run(tmp_path, db, sample(NEMOTRON), gpu='"GB10"', tables=GB10)
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    assert c["quality"]["grade"] == "measured"
    assert c["detail"]["quality_identity_check"] == (
        "held: accelerator 'NVIDIA GB10' (the candidate's GB10; by its words (not in the "
        "hardware table))")


def test_a_remote_server_is_not_checked(tmp_path: Path, db: Path) -> None:
    """The same file as if lm-eval had called a server elsewhere: its collect_env is the
    client's machine, so the GPU is not read and nothing is compared."""
    doc = json.loads(sample(NEMOTRON).read_text(encoding="utf-8"))
    doc["config"]["model_args"]["base_url"] = "http://vllm-service:80/v1/chat/completions"
    remote = tmp_path / "remote.json"
    remote.write_text(json.dumps(doc), encoding="utf-8")
    result = _run(tmp_path, db, remote)
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["candidates"]
    assert c["quality"]["grade"] == "measured"
    assert c["detail"]["quality_identity_check"] == (
        "not checked: the file records no accelerator or GPU count, and no model or precision "
        "the candidate states")


def test_collect_env_gpu_entries() -> None:
    from sources.bench.lm_eval import _gpus

    # several GPUs start on the next line (`nvidia-smi -L`, UUIDs removed: vLLM's and
    # PyTorch's collect_env), one on its own line; ROCm names the device with its arch
    assert _gpus("GPU models and configuration :\nGPU 0: NVIDIA L40S\nGPU 1: NVIDIA L40S\n\n"
                 "Nvidia driver version : 580.119.02") == ("NVIDIA L40S",)
    assert _gpus("GPU models and configuration: GPU 0: NVIDIA GB10\nNvidia driver version: "
                 "580.142") == ("NVIDIA GB10",)
    assert _gpus("GPU models and configuration: AMD Instinct MI300X (gfx942:sramecc+:xnack-)"
                 "\nNvidia driver version: N/A") == ("AMD Instinct MI300X",)
    assert _gpus("GPU models and configuration: Could not collect\n") == ()
    assert _gpus("GPU models and configuration: \nGPU 0: NVIDIA A100 80GB PCIe\n  MIG 3g.40gb "
                 "Device 0:\nGPU 1: NVIDIA H100 PCIe\nNvidia driver version: 5") == (
        "NVIDIA A100 80GB PCIe", "NVIDIA H100 PCIe")
