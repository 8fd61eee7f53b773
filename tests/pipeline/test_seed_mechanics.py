"""Issue 28 item 5, the seed mechanics the serving model lacked: paged-KV capacity and the
preemption onset (seed 003), the engine's KV-read factor (seed 004's HF baseline), prefix
caching that removes prefill work, and the rest of the item. Every expected figure is worked
out by hand in its comment from the seeds (../shared/seeds/003_*.txt, 004_*.txt)."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from pipeline.cli.estimate import estimate as command
from pipeline.engine.roofline import RooflineInputError, RooflineInputs, estimate
from pipeline.engine.roofline.kv import paged_capacity, sized_request_tokens


def _llama_8b_h100(**kw) -> RooflineInputs:
    # seed 003's 8B card: Llama-3.1-8B (32 layers, 32 query / 8 KV heads of 128) on an H100
    # (80 GB) with 60 GB free for the KV cache: 80 - 16 GB weights - 4 GB reserve
    base = dict(params=8.03e9, layers=32, q_heads=32, kv_heads=8, head_dim=128,
                cache_bytes=2, batch=1, context=8192, weights_gb=16.0, reserve_gb=4.0,
                budget_gb=80.0, bandwidth_gb_per_s=3350.0, tflops=989.0)
    return RooflineInputs(**{**base, **kw})


def test_seed_003_naive_against_paged_capacity_and_the_preemption_onset():
    # KV per token = 2 x 32 x 8 x 128 x 2 B = 131,072 B; 60e9 / 131,072 = 457,763.7 tokens.
    # Naive: each sequence reserves its 8,192-token window (1.074 GB): 457,763 // 8,192 = 55
    # (the seed: 60 GB / 1.05 GB ~= 57, the GB rounded). Paged in 16-token blocks:
    # floor(457,763.7 / 16) = 28,610 blocks; a sequence using 600 tokens (the length the
    # seed's ~760 implies: 60e9 / 760 / 131,072 = 602) takes ceil(600 / 16) = 38 blocks:
    # 28,610 // 38 = 752 sequences (seed: ~760), 13.7x the naive count; the 753rd preempts.
    got = paged_capacity(_llama_8b_h100(), sequence_tokens=600)
    assert got["naive_sequences"] == 55
    assert got["kv_blocks"] == 28_610
    assert got["blocks_per_sequence"] == 38
    assert got["paged_sequences"] == 752
    assert got["preemption_onset_concurrency"] == 753
    assert got["paged_over_naive"] == pytest.approx(752 / 55)


def test_the_roofline_counts_whole_blocks_when_paged():
    # at a 600-token context: token-granular 457,763 // 600 = 762 sequences; in 16-token
    # blocks 752 (each sequence's partial block, 608 - 600 = 8 tokens, is lost), and the
    # capacity is 28,610 x 16 = 457,760 tokens (not 457,763)
    plain = estimate(_llama_8b_h100(context=600))
    paged = estimate(_llama_8b_h100(context=600, block_size=16))
    assert (plain.max_batch, plain.kv_capacity_tokens) == (762, 457_763)
    assert (paged.max_batch, paged.kv_capacity_tokens) == (752, 457_760)
    assert any("blocks of 16 tokens" in a for a in paged.assumptions)


def test_a_sequence_longer_than_its_reservation_is_refused():
    with pytest.raises(RooflineInputError, match="context"):
        paged_capacity(_llama_8b_h100(context=512), sequence_tokens=600)


def test_the_p95_rule_in_one_place():
    # each length's p95 where given, else its mean; nothing without both means
    assert sized_request_tokens(800, 200, 3000, None) == (3000, 200)
    assert sized_request_tokens(800, 200, None, 900) == (800, 900)
    assert sized_request_tokens(None, 200, 3000, 900) is None


def _qwen_a40(**kw) -> RooflineInputs:
    # seed 004: Qwen2.5-7B on an A40 at its calibrated rates (505 GB/s, 76.6 TFLOP/s)
    base = dict(params=7_615_616_512, layers=28, q_heads=28, kv_heads=4, head_dim=128,
                cache_bytes=2, batch=1, context=8192, weights_gb=15.231233024, reserve_gb=4.8,
                budget_gb=48, bandwidth_gb_per_s=505, tflops=76.6, vocab_size=152_064,
                hidden_size=3584, lookup_embeddings=True)
    return RooflineInputs(**{**base, **kw})


def test_seed_004_hf_pays_the_kv_cache_three_times():
    # weights read 15.2312 x (7,615,616,512 - 152,064 x 3,584) / 7,615,616,512 = 14.141 GB;
    # cache 8,192 x 57,344 B = 0.46976 GB, read 3 times = 1.40929 GB; + one token's K/V
    # written 0.0000573 GB: 15.5506 GB / 505 GB/s = 30.79 ms (seed: "HF: 14.14 GB + 3 x
    # 0.47 GB = 15.55 GB", TPOT 30.8 ms, 1 / 0.0308 = 32.5 tokens/s)
    hf = estimate(_qwen_a40(kv_read_factor=3))
    assert hf.traffic_gb == pytest.approx(15.5506, abs=1e-3)
    assert hf.step_ms == pytest.approx(30.79, abs=0.01)
    assert 1e3 / hf.step_ms == pytest.approx(32.5, abs=0.05)
    # vLLM pays one read: 14.141 + 0.46976 + 0.0000573 = 14.611 GB -> 28.93 ms
    assert estimate(_qwen_a40()).step_ms == pytest.approx(28.93, abs=0.01)
    assert any("3 times per decode" in a for a in hf.assumptions)


def test_a_kv_read_factor_below_one_is_an_error():
    with pytest.raises(RooflineInputError, match="kv_read_factor"):
        _qwen_a40(kv_read_factor=0.5)


# --- `scorecard estimate` shows them --------------------------------------------------------

_SEED_003_FLAGS = ["--params", "8.03e9", "--layers", "32", "--q-heads", "32", "--kv-heads",
                   "8", "--head-dim", "128", "--cache-bytes", "2", "--batch", "1",
                   "--weights-gb", "16", "--reserve-gb", "4", "--budget-gb", "80",
                   "--bandwidth-gbs", "3350", "--tflops", "989"]


def _cli(*args: str) -> dict:
    app = typer.Typer()
    app.command("estimate")(command)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["estimate", *args, "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_estimate_shows_the_paged_cache_and_the_preemption_onset():
    # the seed 003 card with 8,192-token windows and requests of 500 + 100 tokens: as in
    # test_seed_003_...: 55 naive, 752 paged, preemption from 753
    data = _cli(*_SEED_003_FLAGS, "--context", "8192", "--prompt-tokens", "500",
                "--output-tokens", "100", "--block-size", "16")
    kp = data["kv_paging"]
    assert (kp["naive_sequences"], kp["paged_sequences"]) == (55, 752)
    assert kp["preemption_onset_concurrency"] == 753
    assert _cli(*_SEED_003_FLAGS, "--context", "8192")["kv_paging"] is None


def test_estimate_takes_the_kv_read_factor():
    # the seed 003 card at batch 1, context 8,192: weights 16 GB + 3 x 1.0737 GB cache +
    # 131,072 B written = 19.2213 GB / 3,350 GB/s = 5.7377 ms
    data = _cli(*_SEED_003_FLAGS, "--context", "8192", "--kv-read-factor", "3")
    assert data["traffic_gb"] == pytest.approx(19.2213, abs=1e-4)
    assert data["step_ms"] == pytest.approx(5.7377, abs=1e-4)
