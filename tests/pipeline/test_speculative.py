"""Speculative decoding with its costs (issue 28, item 4): k draft steps and a verification
pass over k + 1 tokens per sequence (a prefill-like step), so goodput never passes the dense
compute ceiling of the target GPU; a draft model's own step; an acceptance range."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.roofline import RooflineInputs, estimate
from pipeline.engine.roofline.reference import with_model
from pipeline.engine.roofline.serving import draft_step_ms, speculative
from pipeline.inputs.evidence.estimate import lookup_model, resolve

runner = CliRunner()


def _llama8b_h100(batch: int, context: int = 512):
    inputs, _ = resolve({"model": "Llama-3.1-8B", "gpu": "H100-SXM-80GB", "batch": batch,
                         "context": context})
    return inputs


def test_never_above_the_dense_compute_ceiling() -> None:
    base = _llama8b_h100(1)
    for batch in range(1, 513):
        _below_the_ceilings(dataclasses.replace(base, batch=batch))


def _below_the_ceilings(inputs: RooflineInputs) -> None:
    # Llama-3.1-8B BF16 on one H100 (989.5 TFLOP/s dense), context 512, k = 4, a = 0.7, a
    # free draft. Per token 2 x (8.03e9 - 0.525e9 looked-up embedding) + 4 x 32 x 32 x 128 x
    # 512 = 1.528e10 FLOP: the dense compute ceiling is 989.5e12 / 1.528e10 = 64,765 tokens/s
    # at any batch. The old factor (the warm ceiling x 2.7731) gave 34,695 x 2.7731 = 96,212
    # tokens/s at batch 512, 1.49x the ceiling.
    batch = inputs.batch
    r = estimate(inputs)
    ceiling = batch / r.compute_ms * 1e3
    assert ceiling == pytest.approx(64_765, rel=1e-3)
    spec = speculative(inputs, acceptance=0.7, draft_tokens=4, draft_step_ms=0.0)
    assert spec["tokens_per_s"] < ceiling, batch
    # nor above the bandwidth ceiling of the verification: the KV read once per pass, so
    # batch x tokens per pass / (the pass's bytes / bandwidth)
    assert spec["tokens_per_s"] <= batch * spec["tokens_per_pass"] / spec["verification_ms"] \
        * 1e3 * (1 + 1e-12)


def test_verification_turns_compute_bound_at_a_large_batch() -> None:
    # batch 1: verifying 5 tokens reads the same 15.0 GB as one decode step (memory-bound):
    # factor ~ 2.7731 (1 + 0.7 + 0.49 + 0.343 + 0.2401 tokens per pass, seed 003)
    small = speculative(_llama8b_h100(1), acceptance=0.7, draft_tokens=4, draft_step_ms=0.0)
    assert small["factor"] == pytest.approx(2.7731, rel=1e-3)
    # batch 512: 2,560 tokens x 1.528e10 FLOP / 989.5e12 = 39.53 ms of compute against the
    # plain step's 14.76 ms: 512 x 2.7731 / 39.53 ms = 35,920 tokens/s, a factor of 1.035
    big = speculative(_llama8b_h100(512), acceptance=0.7, draft_tokens=4, draft_step_ms=0.0)
    assert big["verification_ms"] == pytest.approx(39.53, abs=0.01)
    assert big["tokens_per_s"] == pytest.approx(35_920, rel=1e-3)
    assert big["factor"] == pytest.approx(1.035, abs=0.001)


def test_a_draft_model_costs_its_own_step() -> None:
    # Llama-3.1-70B on 4 H100s (TP4) drafted by Llama-3.1-8B on the same GPUs at batch 8:
    # the draft's step is its own roofline step (8B weights over 4 GPUs), each of k = 4
    # draft steps delays the verification, so the factor is below the free draft's
    target, _ = resolve({"model": "Llama-3.1-70B", "gpu": "H100-SXM-80GB", "batch": 8,
                         "context": 2048, "tensor_parallel": 4})
    draft = with_model(target, lookup_model("Llama-3.1-8B"), precision="bf16")
    step = draft_step_ms(draft)
    # 8B: (16.06 - 1.05 embedding) GB + 8 x 2,048 x 131,072 B = 17.16 GB / (4 x 3,350 GB/s)
    assert step == pytest.approx(1.28, abs=0.01)
    free = speculative(target, acceptance=0.7, draft_tokens=4, draft_step_ms=0.0)
    paid = speculative(target, acceptance=0.7, draft_tokens=4, draft_step_ms=step)
    assert paid["factor"] < free["factor"]
    assert paid["tpot_ms"] == pytest.approx(free["tpot_ms"] + 4 * step / 2.7731, rel=1e-6)


B512 = candidate(
    "b512", gpu='"H100-SXM-80GB"', gpu_count="1",
    power='{ watts = 700, boundary = "gpu_board", source = "TDP" }',
    throughput=('{ estimate = { model = "Llama-3.1-8B", batch = 512, context = 512, '
                'efficiency = 1.0, speculative_acceptance = { low = 0.5, mode = 0.7, '
                'high = 0.8 }, speculative_draft_tokens = 4, '
                'effects_source = "our A/B run" } }'))


def test_in_a_proposal_with_an_acceptance_range(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(proposal("spec", B512))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    (c,) = json.loads(result.stdout)["candidates"]
    # the mode: 35,920 tokens/s (above), below the 64,765 compute ceiling; at acceptance 0.8
    # 1 + 0.8 + 0.64 + 0.512 + 0.4096 = 3.3616 tokens per pass: 512 x 3.3616 / 39.53 ms =
    # 43,543 tokens/s, still below it
    assert c["tokens_per_s"] == pytest.approx(35_920, rel=1e-3)
    assert c["tokens_per_s"] < 64_765
    assert "speculative decoding" in c["detail"]["tokens_per_s_source"]
    assert any("verification of 5 tokens per sequence" in n for n in c["notes"])
    assert any("declared free" in n for n in c["notes"])


def test_cli_counts_the_verification_and_the_draft_model() -> None:
    args = ["estimate", "--model", "Llama-3.1-8B", "--gpu", "H100-SXM-80GB", "--batch", "512",
            "--context", "512", "--requests-per-s", "10", "--output-tokens", "100",
            "--spec-acceptance", "0.7", "--efficiency", "1", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    s = json.loads(result.stdout)["sizing"]
    # The serving model at vLLM's default 8,192-token budget: each 512-token prompt is one
    # mixed step of max(decode step 14.76 ms, chunk 7.29 ms) = the decode step, so TPOT stays
    # the step (efficiency 1, not the measured error's mode).
    # TPOT 14.76 ms plain -> 512 / 35,920 tokens/s = 14.25 ms with speculation
    assert s["tpot_ms"] == pytest.approx(512 / 35_920 * 1e3, rel=1e-3)
    result = runner.invoke(app, [*args, "--spec-draft-model", "Llama-3.1-8B"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sizing"]["tpot_ms"] > s["tpot_ms"]
    bad = runner.invoke(app, [*args, "--spec-draft-model", "nope"])
    assert bad.exit_code == 1
    assert "--spec-draft-model: unknown model 'nope'" in bad.stderr


def test_draft_inputs_keep_the_target_gpus() -> None:
    target = _llama8b_h100(16)
    draft = with_model(target, lookup_model("Qwen2.5-7B"), precision="fp8")
    assert draft.layers == 28 and draft.weights_gb == pytest.approx(7.6156, rel=1e-3)
    assert dataclasses.replace(draft, layers=32).bandwidth_gb_per_s == target.bandwidth_gb_per_s
