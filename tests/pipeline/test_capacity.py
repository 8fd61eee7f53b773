"""Capacity planning from requests (issue 16): request-level demand through the one utilisation
model, the Little's-law instance count beside the goodput one, and seed 001's worksheet
(../shared/seeds/001_de3c40b7fd919df5.txt, "Step-by-step worksheet: Llama 70B BF16 on
4xH100 SXM")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.metrics import evaluate, tokens_per_day_from_requests
from schemas.proposal import Demand

runner = CliRunner()

# Seed 001's prefill rate: 4 GPUs x 989 TFLOP/s x efficiency 0.5 / (2 x 70e9 FLOP per token)
# = 1,978e12 / 140e9 = 14,128.57 tokens/s (the seed prints "about 14,000")
PREFILL_TOKENS_PER_S = 4 * 989e12 * 0.5 / (2 * 70e9)


def _worksheet(tpot_s: float) -> dict:
    """Seed 001's worksheet on the metric steps: 200 sustained RPS, 800 prompt and 250 output
    tokens, operational concurrency 40 per TP4 replica, no peak factor, no headroom."""
    frame = pl.DataFrame({
        "tokens_per_s": [40 / tpot_s], "demand_requests_per_s": [200.0],
        "demand_tokens_per_day": [tokens_per_day_from_requests(200.0, 250.0)],
        "request_output_tokens": [250.0], "operating_concurrency": [40.0],
        "operating_ttft_s": [800 / PREFILL_TOKENS_PER_S], "operating_tpot_s": [tpot_s],
        "peak_factor": [1.0], "headroom": [0.0], "price_eur_per_hour": [10.0],
    })
    return evaluate(frame).row(0, named=True)


def test_seed_001_worksheet_bf16() -> None:
    row = _worksheet(0.035)
    # prefill 800 / 14,128.57 tokens/s = 56.62 ms (the seed: 57 ms)
    assert pytest.approx(0.05662, abs=1e-5) == 800 / PREFILL_TOKENS_PER_S
    # duration = TTFT + (N - 1) x TPOT = 0.05662 + 249 x 0.035 = 8.7716 s (the seed: 8.8 s; it
    # counts 250 x 35 ms = 8.75 s of decode, one TPOT more than the first token needs)
    assert row["request_duration_s"] == pytest.approx(8.7716, abs=1e-4)
    assert round(row["request_duration_s"], 1) == 8.8
    # Little's law: 40 / 8.7716 s = 4.560 requests/s per replica (the seed: "roughly 4.5")
    assert row["replica_requests_per_s"] == pytest.approx(4.5602, abs=1e-4)
    # replicas = ceil(200 / 4.5602) = ceil(43.86) = 44 -> 44 x 4 = 176 GPUs. The seed's 45
    # replicas = 180 GPUs divide by its rounded 4.5 (200 / 4.5 = 44.4 -> 45); with its own
    # 250 TPOTs (8.8066 s -> 4.5420 requests/s -> 44.03) it would also be 45.
    assert row["littles_law_instances"] == 44
    assert math.ceil(200 / 4.5) == 45
    assert math.ceil(200 / (40 / (800 / PREFILL_TOKENS_PER_S + 250 * 0.035))) == 45


def test_seed_001_worksheet_fp8() -> None:
    row = _worksheet(0.018)
    # FP8, TPOT 18 ms: 0.05662 + 249 x 0.018 = 4.5386 s (the seed prints 4.7 s, which no
    # reading of 57 ms + 250 x 18 ms = 4.557 s gives); 40 / 4.5386 = 8.813 requests/s (seed
    # ~8.5); ceil(200 / 8.813) = ceil(22.69) = 23 replicas = 92 GPUs. The seed's 24 replicas
    # = 96 GPUs divide by 8.5: 200 / 8.5 = 23.5 -> 24.
    assert row["request_duration_s"] == pytest.approx(4.5386, abs=1e-4)
    assert row["replica_requests_per_s"] == pytest.approx(8.8133, abs=1e-4)
    assert row["littles_law_instances"] == 23
    assert math.ceil(200 / 8.5) == 24


def test_tpot_follows_from_goodput_when_not_given() -> None:
    frame = pl.DataFrame({"tokens_per_s": [1000.0], "operating_concurrency": [20.0],
                          "operating_ttft_s": [0.5], "request_output_tokens": [101.0],
                          "demand_requests_per_s": [30.0], "peak_factor": [2.0],
                          "headroom": [0.25]})
    row = evaluate(frame).row(0, named=True)
    # TPOT = 20 sequences / 1,000 tokens/s = 20 ms; duration = 0.5 + 100 x 0.02 = 2.5 s;
    # 20 / 2.5 = 8 requests/s per instance; ceil(30 x 2 / (8 x 0.75)) = ceil(10) = 10
    assert row["request_tpot_s"] == pytest.approx(0.02)
    assert row["request_duration_s"] == pytest.approx(2.5)
    assert row["replica_requests_per_s"] == pytest.approx(8.0)
    assert row["littles_law_instances"] == 10
    # without a concurrency, no Little's-law count (null, never a guess)
    assert evaluate(frame.drop("operating_concurrency")).row(0, named=True)[
        "littles_law_instances"] is None
    # N+1: the spare the goodput count adds, this one adds too (10 + 1 = 11), so the two
    # counts differ only by their method
    spared = evaluate(frame.with_columns(redundancy_instances=pl.lit(1.0))).row(0, named=True)
    assert spared["littles_law_instances"] == 11


def test_demand_is_one_volume() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Demand(tokens_per_day=1e9, requests_per_s=10, prompt_tokens=1, output_tokens=1)
    with pytest.raises(ValueError, match="exactly one"):
        Demand()
    with pytest.raises(ValueError, match="needs prompt_tokens and output_tokens"):
        Demand(requests_per_s=200, output_tokens=250)
    # a tokens_per_day demand dumps as before (no null keys in the JSON's `demand`)
    assert Demand(tokens_per_day=1e9).model_dump() == {
        "tokens_per_day": 1e9, "peak_factor": 1.0, "headroom": 0.2}


REQUESTS = """
[demand]
requests_per_s = 20
prompt_tokens = 800
output_tokens = 250
peak_factor = 1.5
headroom = 0.2
"""


def _run(tmp_path: Path, db: Path, *blocks: str) -> dict:
    path = tmp_path / "p.toml"
    path.write_text(proposal("requests", *blocks))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("basis, per_request", [("output", 250), ("total", 1050)])
def test_request_demand_sizes_through_the_same_steps(tmp_path: Path, db: Path, basis: str,
                                                     per_request: int) -> None:
    throughput = ('{ tokens_per_s = 4000, source = "bench" }' if basis == "output" else
                  '{ tokens_per_s = 4000, input_tokens_per_s = 12800, source = "bench" }')
    out = _run(tmp_path, db, REQUESTS, f'[policy]\ntoken_basis = "{basis}"\n',
               candidate("own", throughput=throughput))
    (c,) = out["candidates"]
    # output basis: 20 requests/s x 86,400 x 250 = 432e6 tokens/day = 5,000 tokens/s mean;
    # total basis: x 1,050 (800 + 250) = 1,814.4e6 tokens/day = 21,000 tokens/s
    mean = 20 * per_request
    goodput = 4000 if basis == "output" else 16800
    # instances = ceil(mean x 1.5 / (goodput x 0.8)): output ceil(7,500 / 3,200) = 3;
    # total ceil(31,500 / 13,440) = ceil(2.34) = 3
    sizing = c["sizing"]
    assert sizing["instances"] == math.ceil(mean * 1.5 / (goodput * 0.8)) == 3
    # cpm = monthly cost / monthly Mtok: 11 EUR/h x 3 x 730 h / (mean x 86,400 x 365 / 12 / 1e6)
    monthly_mtok = mean * 86_400 * 365 / 12 / 1e6
    assert sizing["monthly_cost_eur"] == pytest.approx(11 * 3 * 730)
    assert c["cpm_eur_per_mtok"] == pytest.approx(11 * 3 * 730 / monthly_mtok, rel=1e-9)
    # a declared goodput has no operating concurrency: no Little's-law count
    assert sizing["littles_law_instances"] is None
    assert out["demand"]["requests_per_s"] == 20


def test_estimated_candidate_gets_the_littles_law_count(tmp_path: Path, db: Path) -> None:
    est = candidate(
        "est", gpu='"H100-SXM-80GB"', gpu_count="8",
        throughput='{ estimate = { model = "Llama-3.1-8B", batch = 16, context = 2048, '
                   'efficiency = 0.5, tensor_parallel = 1 } }')
    (c,) = _run(tmp_path, db, REQUESTS, est)["candidates"]
    s = c["sizing"]
    # 8 replicas of TP1 x batch 16 = 128 sequences in flight per instance; TPOT = 128 / goodput
    # (one token per sequence per step); duration = TTFT bound (800-token prefill) + 249 TPOT
    tpot = 128 / c["tokens_per_s"]
    assert s["request_tpot_s"] == pytest.approx(tpot)
    assert s["request_duration_s"] > 249 * tpot
    rps = 128 / s["request_duration_s"]
    assert s["replica_requests_per_s"] == pytest.approx(rps)
    assert s["littles_law_instances"] == math.ceil(20 * 1.5 / (rps * 0.8))
    assert "x 8 replicas" in c["detail"]["tokens_per_s_source"]


def _estimated(effects: str) -> str:
    return candidate(
        "est", gpu='"H100-SXM-80GB"', gpu_count="8",
        throughput='{ estimate = { model = "Llama-3.1-8B", batch = 16, context = 2048, '
                   f'efficiency = 0.5, tensor_parallel = 1{effects} }} }}')


def test_declared_prefix_cache_and_speculative_decoding(tmp_path: Path, db: Path) -> None:
    (base,) = _run(tmp_path, db, REQUESTS, _estimated(""))["candidates"]
    effects = (', prefix_hit_rate = 0.78, speculative_acceptance = 0.7, '
               'speculative_draft_tokens = 4, effects_source = "our A/B run of 2026-11-20"')
    (warm,) = _run(tmp_path, db, REQUESTS, _estimated(effects))["candidates"]
    # speculative decoding, a free draft: 1 + 0.7 + 0.49 + 0.343 + 0.2401 = 2.7731 tokens per
    # verification pass (seed 003: k = 4, a = 0.7 -> 2.77); the verification of 5 tokens per
    # sequence (issue 28) reads the step's 19.306914 GB plus 16 x 4 more tokens' K/V
    # (64 x 131,072 B = 0.008389 GB) and stays memory-bound (80 tokens' FLOPs take 1.3 ms):
    # 5.765762 ms against the plain 5.763258 ms -> goodput x 2.7731 x 5.763258 / 5.765762
    # = x 2.771896
    assert warm["tokens_per_s"] == pytest.approx(base["tokens_per_s"] * 2.771896, rel=1e-6)
    assert "speculative decoding 2.7719" in warm["detail"]["tokens_per_s_source"]
    # prefix cache: the serving model's prefill without the cached tokens. Llama 3.1 8B
    # (32 layers, 32 q heads x 128, 8 KV heads: 131,072 B/token; 8,030,261,248 params, 2 x
    # 128,256 x 4,096 = 1,050,673,152 of them embeddings) on an H100 (989.5 TFLOP/s, 3,350
    # GB/s), 800-token prompts. Cold: 800 x 2 x 6,979,588,096 + 1,050,673,152 + 4 x 32 x 32
    # x 128 x 800 x 801 / 2 = 1.133637e13 FLOP / 989.5e12 = 11.4567 ms (the read, (16.0605 +
    # 800 x 131,072 / 1e9) / 3,350 = 4.83 ms, is less) / efficiency 0.5 = 22.913 ms. Warm at
    # 0.78: floor(800 x 0.78) = 624 cached, 176 computed: 176 x 2 x 6,979,588,096 +
    # 1,050,673,152 + 524,288 x (800 x 801 - 624 x 625) / 2 = 2.523611e12 FLOP = 2.5504 ms,
    # under the read (16.060523 + 176 x 131,072 / 1e9) / 3,350 = 4.80107 ms: memory-bound,
    # / 0.5 = 9.60214 ms (the linear 0.22 x 22.913 = 5.04 ms ignored the weights' read)
    assert base["detail"]["operating_ttft_s"] == pytest.approx(0.022913, rel=1e-4)
    assert warm["detail"]["operating_ttft_s"] == pytest.approx(0.00960214, rel=1e-5)
    assert any("our A/B run of 2026-11-20" in n for n in warm["notes"])


def test_a_declared_effect_needs_its_source(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(proposal("requests", REQUESTS, _estimated(", prefix_hit_rate = 0.5")))
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1
    assert "effects_source" in result.stderr
