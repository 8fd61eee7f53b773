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
from pipeline.engine.roofline.planning import serving
from pipeline.engine.roofline.serving import (
    batched_prefill_ttft_s,
    kv_transfer_s,
    predict_sweep,
    serving_point,
)


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


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("estimate")(command)
    app.command("noop")(lambda: None)
    return app


def _cli(*args: str) -> dict:
    result = CliRunner().invoke(_app(), ["estimate", *args, "--json"])
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


# --- prefix caching removes prefill work ---------------------------------------------------


def test_a_prefix_cache_removes_prefill_work_so_goodput_rises():
    # seed 004 at C = 32 (8,192-token prompts, 128 output tokens, 2,048-token budget):
    # cold: prefill 8,192 x 2 x 6,525,621,760 linear + 2 x 544,997,376 LM head + 4 x 28 x 28 x
    # 128 x 8,192 x 8,193 / 2 = 1.20388e14 FLOP / 76.6e12 = 1.5716 s, 4 mixed steps of
    # 0.39291 s; decode step (14.1412 + 32 x 0.46976 + 32 x 0.0000573) GB / 505 = 57.773 ms;
    # 4 x 31 = 124 shared: TPOT (124 x 0.39291 + 3 x 0.057773) / 127 = 0.38499 s -> 83.12.
    # Hit rate 0.5: 4,096 tokens cached; the rest: 4,096 x 2 x 6,525,621,760 + 1.09e9 +
    # 4 x 28 x 28 x 128 x (8,192 x 8,193 - 4,096 x 4,097) / 2 = 6.35616e13 FLOP = 0.82979 s
    # in ceil(4,096 / 2,048) = 2 mixed steps of 0.41489 s; 2 x 31 = 62 shared: TPOT
    # (62 x 0.41489 + 65 x 0.057773) / 127 = 0.23212 s -> 137.86 tokens/s (x 1.66)
    inputs = _qwen_a40()
    cold = serving_point(inputs, 32, prompt_tokens=8192, output_tokens=128, budget_tokens=2048)
    warm = serving_point(inputs, 32, prompt_tokens=8192, output_tokens=128, budget_tokens=2048,
                         prefix_hit_rate=0.5)
    assert cold["prefill_s"] == pytest.approx(1.5716, abs=1e-4)
    assert cold["decode_tokens_per_s"] == pytest.approx(83.12, abs=0.01)
    assert warm["prefix_cached_tokens"] == 4096
    assert warm["prefill_s"] == pytest.approx(0.82979, abs=1e-4)
    assert warm["mixed_step_ms"] == pytest.approx(414.89, abs=0.01)
    assert warm["tpot_ms"] == pytest.approx(232.12, abs=0.01)
    assert warm["decode_tokens_per_s"] == pytest.approx(137.86, abs=0.01)
    assert warm["ttft_s"] < cold["ttft_s"]


def test_the_hit_rate_range_gives_the_goodput_range():
    # hit rates 0.3 / 0.5 / 0.7: floor(8,192 x 0.3) = 2,457 cached -> 5,735 computed in 3
    # steps: prefill 1.13719 s, steps of 0.37906 s, 3 x 31 = 93 shared: TPOT (93 x 0.37906 +
    # 34 x 0.057773) / 127 = 0.29305 s -> 109.20; 0.7: 5,734 cached, 2 steps of 0.25425 s:
    # TPOT (62 x 0.25425 + 65 x 0.057773) / 127 = 0.15369 s -> 208.21; the mode 137.86
    served = serving(_qwen_a40(), concurrency=32, prompt_tokens=8192, output_tokens=128,
                     chunk_tokens=2048, serialised=False, prefix_hit_rate=(0.3, 0.5, 0.7))
    band = served["goodput_range"]
    assert band["low"] == pytest.approx(109.20, abs=0.01)
    assert band["mode"] == pytest.approx(137.86, abs=0.01)
    assert band["high"] == pytest.approx(208.21, abs=0.01)
    assert served["goodput_tokens_per_s"] == pytest.approx(137.86, abs=0.01)
    assert served["cold_ttft_s"] > served["ttft_s"]


def test_estimate_sizes_on_the_warm_serving_model():
    # the same load through `scorecard estimate` (typed-in rates, efficiency 1 so no error
    # range): goodput 137.86; the sizing's TTFT is the serving model's warm one (not x (1 - h)
    # a second time) and its cold one is the TTFT without the cache
    flags = ["--params", "7615616512", "--layers", "28", "--q-heads", "28", "--kv-heads", "4",
             "--head-dim", "128", "--cache-bytes", "2", "--batch", "32", "--context", "8192",
             "--weights-gb", "15.231233024", "--reserve-gb", "4.8", "--budget-gb", "48",
             "--bandwidth-gbs", "505", "--tflops", "76.6", "--vocab-size", "152064",
             "--hidden-size", "3584", "--lookup-embeddings", "--output-tokens", "128",
             "--chunk-budget", "2048", "--efficiency", "1", "--requests-per-s", "1"]
    data = _cli(*flags, "--prefix-hit-rate", "0.5")
    assert data["serving"]["goodput_tokens_per_s"] == pytest.approx(137.86, abs=0.01)
    assert data["sizing"]["ttft_ms"] == pytest.approx(data["serving"]["ttft_s"] * 1e3)
    assert data["sizing"]["cold_ttft_ms"] == pytest.approx(
        _cli(*flags)["serving"]["ttft_s"] * 1e3)
    band = _cli(*flags, "--prefix-hit-rate", "0.5", "--prefix-hit-range", "0.3,0.7")
    assert band["serving"]["goodput_range"]["low"] == pytest.approx(109.20, abs=0.01)


def test_a_bad_hit_rate_range_is_refused_naming_the_flag():
    result = CliRunner().invoke(_app(), ["estimate", *_SEED_003_FLAGS, "--context", "8192",
                                         "--output-tokens", "100", "--chunk-budget", "2048",
                                         "--prefix-hit-rate", "0.5",
                                         "--prefix-hit-range", "0.6,0.7"])
    assert result.exit_code == 1
    assert "--prefix-hit-range" in result.stderr


@pytest.mark.parametrize(("extra", "named"), [
    # a disaggregated prefill pool on a server running one request at a time: the serving
    # estimate took --serialised and dropped the link without a word
    (["--output-tokens", "100", "--kv-link-gbs", "50", "--serialised"],
     ("--kv-link-gbs", "--serialised")),
    # a hit-rate range and no load: no serving estimate, so the range gave null figures
    (["--prefix-hit-rate", "0.5", "--prefix-hit-range", "0.3,0.7"],
     ("--prefix-hit-range", "--output-tokens")),
])
def test_flags_that_would_be_ignored_are_refused_naming_them(
        extra: list[str], named: tuple[str, ...]) -> None:
    result = CliRunner().invoke(_app(), ["estimate", *_SEED_003_FLAGS, "--context", "8192",
                                         *extra])
    assert result.exit_code == 1, result.stdout
    for flag in named:
        assert flag in result.stderr, result.stderr


# --- TP x replicas at equal total concurrency -------------------------------------------------

_EIGHT_B = ["--params", "8e9", "--layers", "32", "--q-heads", "32", "--kv-heads", "8",
            "--head-dim", "128", "--cache-bytes", "2", "--batch", "1", "--context", "128",
            "--weights-gb", "16", "--reserve-gb", "8", "--budget-gb", "80",
            "--bandwidth-gbs", "3350", "--tflops", "989", "--compare-gpus", "2"]


def test_tp2_against_two_replicas_crosses_over_with_total_concurrency():
    # 8B (16 GB) on 2 GPUs at context 128, 25 us per all-reduce (seed 003's PCIe figure):
    # TP2 pays 32 layers x 2 x 25 us = 1.6 ms per step. Per token 2 x 8e9 + 4 x 32 x 32 x 128
    # x 128 = 1.60671e10 FLOP; KV 131,072 B/token.
    # C = 2: TP2 x 1: (16 + 2 x 128 x 131,072 / 1e9 + 2 x 131,072 / 1e9) = 16.0338 GB /
    #   6,700 GB/s = 2.3931 ms + 1.6 = 3.9931 ms -> 2 / 3.9931e-3 = 500.9 tokens/s;
    #   TP1 x 2 at 1 each: 16.0169 / 3,350 = 4.7812 ms -> 2 x 1 / 4.7812e-3 = 418.3: TP2 wins.
    # C = 1024: TP2 x 1 compute 1,024 x 1.606711e10 / 1.978e15 = 8.31786 ms (memory 33.314 GB
    #   / 6,700 = 4.972 ms) + 1.6 = 9.91786 ms -> 103,248; TP1 x 2 at 512 each: compute 512 x
    #   1.606711e10 / 989e12 = 8.31786 ms (memory 24.657 / 3,350 = 7.36 ms) -> 1,024 /
    #   8.31786e-3 = 123,109: compute-bound, the replicas win: the crossover.
    data = _cli(*_EIGHT_B, "--compare-concurrency", "2,1024", "--allreduce-us", "25")["crossover"]
    low, high = data["levels"]
    tp1, tp2 = low["topologies"]
    assert (tp2["tpot_ms"], tp2["collective_ms"]) == (pytest.approx(3.9931, abs=1e-4),
                                                       pytest.approx(1.6))
    assert tp2["tokens_per_s_total"] == pytest.approx(500.9, abs=0.1)
    assert tp1["tokens_per_s_total"] == pytest.approx(418.3, abs=0.1)
    assert low["winner"] == "TP2 x 1"
    tp1, tp2 = high["topologies"]
    assert tp2["tokens_per_s_total"] == pytest.approx(103_248, abs=1)
    assert tp1["tokens_per_s_total"] == pytest.approx(123_109, abs=1)
    assert high["winner"] == "TP1 x 2"
    assert data["crossovers"] == [{"concurrency": 1024, "from": "TP2 x 1", "to": "TP1 x 2"}]


def test_the_all_reduce_cost_per_tp_degree():
    # seed 003: 70B TP4 = 80 layers x 2 = 160 collectives per token x ~5 us = 0.8 ms on NVLink,
    # ~4 ms on PCIe (25 us); TP2 given its own 3 us: 160 x 3 us = 0.48 ms. At C = 4 (KV
    # 327,680 B/token): TP2 x 2 at 2 each reads 141.2 + 2 x 512 x 327,680 / 1e9 + 2 x 327,680
    # / 1e9 = 141.5362 GB / 6,700 GB/s = 21.1248 ms + 0.48 = 21.6048 ms -> 4 / 21.6048e-3 =
    # 185.1 tokens/s; TP4 x 1: 141.8724 GB / 13,400 = 10.5875 + 0.8 = 11.3875 ms -> 351.3
    # (TP1 x 4 does not fit: 141.2 GB on one 80 GB GPU)
    flags = ["--params", "70.6e9", "--layers", "80", "--q-heads", "64", "--kv-heads", "8",
             "--head-dim", "128", "--batch", "1", "--context", "512", "--weights-gb", "141.2",
             "--reserve-gb", "8", "--budget-gb", "80", "--bandwidth-gbs", "3350",
             "--tflops", "989", "--compare-gpus", "4", "--compare-concurrency", "4"]
    nvlink = _cli(*flags, "--allreduce-us-by-tp", "2:3,4:5")["crossover"]["levels"][0]
    by_tp = {t["tensor_parallel"]: t for t in nvlink["topologies"]}
    assert by_tp[4]["collective_ms"] == pytest.approx(0.8)
    assert not by_tp[1]["fits"]
    assert by_tp[2]["collective_ms"] == pytest.approx(0.48)
    assert by_tp[2]["tokens_per_s_total"] == pytest.approx(185.1, abs=0.1)
    assert by_tp[4]["tokens_per_s_total"] == pytest.approx(351.3, abs=0.1)
    # the topologies of the same output (batch 1 per replica) charge the same per-degree
    # all-reduces: TP2 160 x 3 us = 0.48 ms, TP4 160 x 5 us = 0.8 ms (they showed 0.00 ms)
    shown = {t["tensor_parallel"]: t for t in _cli(
        *flags, "--allreduce-us-by-tp", "2:3,4:5")["topologies"]}
    assert shown[2]["collective_ms"] == pytest.approx(0.48)
    assert shown[4]["collective_ms"] == pytest.approx(0.8)
    pcie = _cli(*flags, "--allreduce-us", "25")["crossover"]["levels"][0]
    assert pcie["topologies"][2]["collective_ms"] == pytest.approx(4.0)
    assert pcie["winner"] == "TP4 x 1"


def test_uneven_levels_and_missing_gpus_are_said():
    data = _cli(*_EIGHT_B, "--compare-concurrency", "3")["crossover"]["levels"][0]
    assert data["topologies"][0]["reason"] == "3 sequences do not split evenly over 2 replicas"
    assert data["winner"] == "TP2 x 1"
    without_gpus = _EIGHT_B[:-2]  # the last two: --compare-gpus 2
    result = CliRunner().invoke(_app(), ["estimate", *without_gpus,
                                         "--compare-concurrency", "4"])
    assert result.exit_code == 1 and "--compare-gpus" in result.stderr


# --- disaggregated prefill and its KV transfer -------------------------------------------------


def test_seed_003_kv_transfer_over_nvlink_and_rdma():
    # 70B (80 layers x 8 KV heads x 128 x 2 x 2 B = 327,680 B/token), an 8,192-token prompt:
    # 2.6844 GB; over NVLink at 900 GB/s 2.98 ms (seed: ~3 ms), over 400 Gb/s RDMA = 50 GB/s
    # 53.69 ms (seed: ~52 ms, from 320 kB/token rounded: 2.62 GB / 50)
    seventy = RooflineInputs(params=70.6e9, layers=80, q_heads=64, kv_heads=8, head_dim=128,
                             cache_bytes=2, batch=1, context=8192, weights_gb=141.2,
                             reserve_gb=8, budget_gb=80, bandwidth_gb_per_s=3350, tflops=989,
                             tensor_parallel=4)
    assert kv_transfer_s(seventy, 8192, 900) * 1e3 == pytest.approx(2.983, abs=1e-3)
    assert kv_transfer_s(seventy, 8192, 50) * 1e3 == pytest.approx(53.69, abs=0.01)
    with pytest.raises(RooflineInputError, match="kv_link_gbs"):
        kv_transfer_s(seventy, 8192, 0)


def test_disaggregated_prefill_adds_the_transfer_and_frees_the_decode_steps():
    # seed 004's Qwen2.5-7B on an A40 at C = 32, the KV over 50 GB/s: 8,192 x 57,344 B =
    # 0.46976 GB -> 9.395 ms. The decode replica runs decode-only steps: TPOT = 57.773 ms
    # (as in test_a_prefix_cache_...), goodput 32 / 0.057773 = 553.9 tokens/s (83.12 when
    # the prefill chunks share the steps). At C = 1 TTFT = the prefill 1.5716 s + 0.0094 =
    # 1.5810 s; at C = 32 the prefill pool's queue plus the transfer
    inputs = _qwen_a40()
    one = serving_point(inputs, 1, prompt_tokens=8192, output_tokens=128, budget_tokens=None,
                        kv_link_gb_per_s=50)
    assert one["kv_transfer_ms"] == pytest.approx(9.395, abs=1e-3)
    assert one["ttft_s"] == pytest.approx(1.5810, abs=1e-4)
    many = serving_point(inputs, 32, prompt_tokens=8192, output_tokens=128, budget_tokens=None,
                         kv_link_gb_per_s=50)
    assert many["tpot_ms"] == pytest.approx(57.773, abs=1e-3)
    assert many["decode_tokens_per_s"] == pytest.approx(553.9, abs=0.1)
    assert many["mixed_step_ms"] is None
    queue = batched_prefill_ttft_s(32, 1.5716389, 0.009395 + 127 * 0.057773)
    assert many["ttft_s"] == pytest.approx(queue + 0.009395, abs=1e-4)


def test_estimate_shows_the_transfer_and_sizes_on_both_pools():
    flags = ["--params", "7615616512", "--layers", "28", "--q-heads", "28", "--kv-heads", "4",
             "--head-dim", "128", "--cache-bytes", "2", "--batch", "32", "--context", "8192",
             "--weights-gb", "15.231233024", "--reserve-gb", "4.8", "--budget-gb", "48",
             "--bandwidth-gbs", "505", "--tflops", "76.6", "--vocab-size", "152064",
             "--hidden-size", "3584", "--lookup-embeddings", "--output-tokens", "128",
             "--efficiency", "1", "--requests-per-s", "1", "--kv-link-gbs", "50"]
    data = _cli(*flags)
    assert data["serving"]["disaggregated"] is True
    assert data["serving"]["chunk_tokens"] is None
    assert data["serving"]["kv_transfer_ms"] == pytest.approx(9.395, abs=1e-3)
    assert data["serving"]["goodput_tokens_per_s"] == pytest.approx(553.9, abs=0.1)
    # one decode GPU and its prefill pool's GPU per instance
    assert data["sizing"]["gpus_per_instance"] == 2


def test_seed_004_serialised_hf_server_with_its_kv_read_factor():
    # HF under a FIFO lock with 3 KV reads per step: TPOT 30.793 ms (test_seed_004_hf_...),
    # T_req = 1.5716 + 127 x 0.030793 = 5.4823 s; TTFT at C = 32 = 31 x 5.4823 + 1.5716 =
    # 171.52 s against 170 s measured (+0.9 %; one KV read gives 164.1 s, -3.5 %)
    (row,) = predict_sweep(_qwen_a40(kv_read_factor=3), [32], prompt_tokens=8192,
                           output_tokens=128, budget_tokens=None, serialised=True)
    assert row["tpot_ms"] == pytest.approx(30.793, abs=1e-3)
    assert row["ttft_s"] == pytest.approx(171.52, abs=0.01)


def test_the_warm_ttft_of_the_sizing_is_the_prefill_without_the_cached_tokens():
    # 8B (16 GB, 131,072 B/token of KV) at context 2,048, requests of 800 + 250 tokens: no
    # chunk budget and the context not the prompt, so the sizing's TTFT is the prefill bound
    # (the warm-decode form). Cold: 800 x 2 x 8e9 + 4 x 32 x 32 x 128 x 800 x 801 / 2 =
    # 1.296798e13 FLOP / 989e12 = 13.1122 ms. At a hit rate 0.78, floor(800 x 0.78) = 624
    # cached, 176 computed: 176 x 2 x 8e9 + 524,288 x (800 x 801 - 624 x 625) / 2 = 2.92e12
    # FLOP = 2.95 ms, under the weights' read (16 + 176 x 131,072 / 1e9) / 3,350 = 4.78301 ms:
    # 4.78301 ms, as the serving model's prefill has it (the linear 0.22 x 13.1122 = 2.8847 ms
    # had the weights read in a fifth of the time)
    flags = ["--params", "8e9", "--layers", "32", "--q-heads", "32", "--kv-heads", "8",
             "--head-dim", "128", "--cache-bytes", "2", "--batch", "1", "--context", "2048",
             "--prompt-tokens", "800", "--weights-gb", "16", "--reserve-gb", "8",
             "--budget-gb", "80", "--bandwidth-gbs", "3350", "--tflops", "989",
             "--requests-per-s", "1", "--output-tokens", "250"]
    sizing = _cli(*flags, "--prefix-hit-rate", "0.78")["sizing"]
    assert sizing["cold_ttft_ms"] == pytest.approx(13.1122, abs=1e-4)
    assert sizing["ttft_ms"] == pytest.approx(4.78301, abs=1e-5)
