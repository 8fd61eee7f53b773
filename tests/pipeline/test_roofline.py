"""The roofline capacity model: issue 6's worked examples, hand-checked variants (compute-bound,
MoE, tensor parallelism, prefill), the vectorised frame path, calibration, and properties."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine.roofline import (
    MODEL_FIELDS,
    OUTPUTS,
    RooflineInputError,
    RooflineInputs,
    apply_calibration,
    assumptions,
    calibrate,
    estimate,
    implied_bandwidth_gb_per_s,
    implied_tflops,
    inputs_from_reference,
    roofline,
    with_reference_inputs,
)
from pipeline.inputs.evidence.estimate import read_reference, reference_file
from schemas.architecture import MODEL_ARCHITECTURES
from schemas.market import HARDWARE
from schemas.table import ValidationFailed

# Issue 6's 8B-class decoder on an 80 GB, 3,350 GB/s, 989 TFLOP/s GPU.
EXAMPLE = RooflineInputs(
    params=8e9, layers=32, q_heads=32, kv_heads=8, head_dim=128, cache_bytes=2,
    batch=16, context=2048, weights_gb=16, reserve_gb=8, budget_gb=80,
    bandwidth_gb_per_s=3350, tflops=989,
)


def test_worked_example_8b_memory_bound():
    r = estimate(EXAMPLE)
    # KV = 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B/token
    assert r.kv_bytes_per_token == 131_072
    # cache = 16 x 2,048 x 131,072 / 1e9 = 4.294967296 GB
    assert r.cache_gb == pytest.approx(4.294967, abs=1e-6)
    # required = 16 + 8 + 4.294967 = 28.294967 GB; headroom = 80 - 28.294967 = 51.705033 GB
    assert r.required_gb == pytest.approx(28.294967, abs=1e-6)
    assert r.headroom_gb == pytest.approx(51.705033, abs=1e-6)
    # KV-cache fit: (80 - 16 - 8) GB / (2,048 x 131,072 B = 0.268435456 GB per sequence)
    # = 208.6 -> 208 sequences of 2,048 tokens
    assert r.max_batch == 208
    # traffic = 16 + 4.294967296 + 16 x 131,072 / 1e9 (0.002097152) = 20.297064448 GB
    assert r.traffic_gb == pytest.approx(20.297064, abs=1e-6)
    # memory = 20.297064448 / 3,350 GB/s = 6.058825 ms
    assert r.memory_ms == pytest.approx(6.058825, abs=1e-6)
    # compute = 16 x (2 x 8e9 + 4 x 32 x 32 x 128 x 2,048) / 989e12
    #         = 16 x 17,073,741,824 / 989e12 = 273,179,869,184 / 989e12 = 0.276218 ms
    assert r.compute_ms == pytest.approx(0.276218, abs=1e-6)
    # step = max(6.058825, 0.276218) = 6.058825 ms; ceiling = 16 / 6.058825 ms = 2,640.78 tok/s
    assert r.step_ms == r.memory_ms
    assert r.tokens_per_s_ceiling == pytest.approx(2640.78, abs=0.01)
    assert r.bound == "memory"
    assert r.ceiling_reason is None
    # intensity = 273,179,869,184 FLOP / 20,297,064,448 B = 13.459 FLOP/B;
    # ridge = 989e12 / 3,350e9 = 295.22 FLOP/B: far below the ridge, so memory-bound
    assert r.arithmetic_intensity_flop_per_byte == pytest.approx(13.4591, abs=1e-4)
    assert r.ridge_flop_per_byte == pytest.approx(295.2239, abs=1e-4)


def test_over_budget_gives_no_ceiling_and_says_why():
    long = dataclasses.replace(EXAMPLE, context=131_072)
    r = estimate(long)
    # cache = 16 x 131,072 x 131,072 / 1e9 = 274.877906944 GB; required = 16 + 8 + 274.877907
    # = 298.877907 GB > 80 GB; headroom = 80 - 298.877907 = -218.877907 GB
    assert r.cache_gb == pytest.approx(274.877907, abs=1e-6)
    assert r.headroom_gb == pytest.approx(-218.877907, abs=1e-6)
    assert r.tokens_per_s_ceiling is None
    # 56 GB free / (131,072 x 131,072 B = 17.179869 GB per sequence) = 3.26 -> 3 fit
    assert r.max_batch == 3
    # weights and reserve alone over budget: not even one sequence
    assert estimate(dataclasses.replace(long, budget_gb=20)).max_batch == 0
    assert estimate(dataclasses.replace(long, context=0)).max_batch is None
    assert r.ceiling_reason is not None
    assert "exceeds the 80.0 GB memory budget by 218.88 GB" in r.ceiling_reason
    assert "no token ceiling" in r.ceiling_reason


def test_compute_bound_when_compute_is_slow_and_batch_large():
    slow = dataclasses.replace(EXAMPLE, batch=256, context=128, tflops=100)
    r = estimate(slow)
    # traffic = 16 + 256 x 128 x 131,072 / 1e9 (4.294967296) + 256 x 131,072 / 1e9
    # (0.033554432) = 20.328521728 GB -> 20.328521728 / 3,350 = 6.068215 ms
    assert r.memory_ms == pytest.approx(6.068215, abs=1e-6)
    # compute = 256 x (16e9 + 4 x 32 x 32 x 128 x 128 = 67,108,864) / 100e12
    #         = 4,113,179,869,184 / 1e14 s = 41.131799 ms
    assert r.compute_ms == pytest.approx(41.131799, abs=1e-6)
    assert r.bound == "compute"
    # ceiling = 256 / 41.13179869184 ms = 6,223.90 tokens/s
    assert r.tokens_per_s_ceiling == pytest.approx(6223.895, abs=1e-3)
    assert r.arithmetic_intensity_flop_per_byte > r.ridge_flop_per_byte


def test_prefill_flops_and_ttft_bound_without_vocabulary():
    r = estimate(dataclasses.replace(EXAMPLE, prompt_tokens=1000))
    # 1,000 x 2 x 8e9 = 1.6e13 (LM head and embedding inside params, counted per token)
    # + attention 4 x 32 x 32 x 128 x 1,000 x 1,001 / 2 = 524,288 x 500,500 = 262,406,144,000
    # = 16,262,406,144,000 FLOP
    assert r.prefill_flops == 16_262_406_144_000
    # compute: 16.262406144e12 / 989e12 = 16.443282 ms; weights read and the prompt's KV
    # written: (16 + 1,000 x 131,072 / 1e9) / 3,350 = 16.131072 / 3,350 = 4.815245 ms
    assert r.prefill_compute_ms == pytest.approx(16.443282, abs=1e-6)
    assert r.prefill_memory_ms == pytest.approx(4.815245, abs=1e-6)
    assert r.ttft_lower_bound_ms == r.prefill_compute_ms


def test_prefill_separates_the_lm_head_when_vocabulary_is_known():
    llama8b = dataclasses.replace(EXAMPLE, params=8_030_261_248, vocab_size=128_256,
                                  hidden_size=4096, prompt_tokens=1000)
    r = estimate(llama8b)
    # vocab x hidden = 128,256 x 4,096 = 525,336,576; untied: embedding + LM head = 1,050,673,152
    # linear per token = 8,030,261,248 - 1,050,673,152 = 6,979,588,096
    # 1,000 x 2 x 6,979,588,096 = 13,959,176,192,000
    # + LM head once 2 x 525,336,576 = 1,050,673,152 + attention 262,406,144,000
    # = 14,222,633,009,152 FLOP -> / 989e12 = 14.380822 ms
    assert r.prefill_flops == 14_222_633_009_152
    assert r.ttft_lower_bound_ms == pytest.approx(14.380822, abs=1e-6)
    tied = estimate(dataclasses.replace(llama8b, tied_embeddings=True))
    # tied: only 525,336,576 shared parameters leave the per-token part, so 1,000 x 2 x
    # 525,336,576 = 1,050,673,152,000 FLOP more
    assert tied.prefill_flops - r.prefill_flops == 1_050_673_152_000


def test_short_prompt_ttft_is_bound_by_reading_the_weights():
    r = estimate(dataclasses.replace(EXAMPLE, prompt_tokens=10))
    # compute: 10 x 1.6e10 + 4 x 32 x 32 x 128 x 10 x 11 / 2 (28,835,840) = 160,028,835,840 FLOP
    # -> 0.161809 ms; reading 16 GB (+ 10 x 131,072 B) at 3,350 GB/s = 4.776511 ms binds
    assert r.prefill_compute_ms == pytest.approx(0.161809, abs=1e-6)
    assert r.ttft_lower_bound_ms == pytest.approx(4.776511, abs=1e-6)


def test_moe_compute_uses_active_parameters_traffic_all_weights():
    dense = RooflineInputs(params=46.7e9, layers=32, q_heads=32, kv_heads=8, head_dim=128,
                           cache_bytes=2, batch=1, context=1000, weights_gb=93.4,
                           reserve_gb=8, budget_gb=192, bandwidth_gb_per_s=5300, tflops=1307)
    moe = dataclasses.replace(dense, active_params=12.9e9)
    d, m = estimate(dense), estimate(moe)
    # dense: 2 x 46.7e9 + 4 x 32 x 32 x 128 x 1,000 (524,288,000) = 93,924,288,000 FLOP
    # MoE:   2 x 12.9e9 + 524,288,000 = 26,324,288,000 FLOP
    assert d.decode_flops == pytest.approx(93_924_288_000)
    assert m.decode_flops == pytest.approx(26_324_288_000)
    assert m.traffic_gb == d.traffic_gb
    assert any("Mixture of experts" in a for a in m.assumptions)
    assert not any("Mixture of experts" in a for a in d.assumptions)


def test_tensor_parallel_splits_weights_and_scales_the_group():
    seventy = RooflineInputs(params=70e9, layers=80, q_heads=64, kv_heads=8, head_dim=128,
                             cache_bytes=2, batch=32, context=8192, weights_gb=140,
                             reserve_gb=8, budget_gb=80, bandwidth_gb_per_s=3350, tflops=989)
    # one GPU: required = 140 + 8 + 32 x 8,192 x 327,680 / 1e9 (85.89934592) > 80
    assert estimate(seventy).tokens_per_s_ceiling is None
    r = estimate(dataclasses.replace(seventy, tensor_parallel=4))
    # KV = 2 x 80 x 8 x 128 x 2 = 327,680 B; budget 4 x 80 = 320 GB;
    # required = 140 + 4 x 8 + 85.89934592 = 257.89934592; headroom = 62.10065408 GB
    assert r.memory_budget_gb == 320
    assert r.headroom_gb == pytest.approx(62.100654, abs=1e-6)
    # traffic = 140 + 85.89934592 + 32 x 327,680 / 1e9 (0.01048576) = 225.90983168 GB over
    # 4 x 3,350 GB/s = 16.858943 ms
    assert r.memory_ms == pytest.approx(16.858943, abs=1e-6)
    assert any("Tensor parallel x4" in a and "not free" in a for a in r.assumptions)
    # 16 GPUs for 8 KV heads: each GPU holds a replica, so the cache counts 16 heads:
    # 2 x 80 x 16 x 128 x 2 = 655,360 B/token
    wide = estimate(dataclasses.replace(seventy, tensor_parallel=16))
    assert wide.kv_bytes_per_token == 655_360
    assert any("replicated" in a for a in wide.assumptions)


def test_frame_path_is_vectorised_and_matches_the_scalar_path():
    rows = [EXAMPLE.row(), dataclasses.replace(EXAMPLE, batch=64, context=512).row(),
            dataclasses.replace(EXAMPLE, context=131_072).row()]
    inputs = pl.DataFrame(rows).drop("active_params", "prompt_tokens", "vocab_size",
                                     "hidden_size", "tied_embeddings", "tensor_parallel")
    out = roofline(inputs)
    assert isinstance(out, pl.DataFrame)
    assert set(OUTPUTS) <= set(out.columns)
    for row, got in zip(rows, out.iter_rows(named=True), strict=True):
        want = estimate(RooflineInputs(**row)).to_dict()
        for name in OUTPUTS:
            assert got[name] == pytest.approx(want[name]) if isinstance(want[name], float) \
                else got[name] == want[name]
    assert out["tokens_per_s_ceiling"].null_count() == 1
    lazy = roofline(inputs.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(out)


def test_input_errors_name_the_field():
    with pytest.raises(RooflineInputError) as err:
        dataclasses.replace(EXAMPLE, batch=0)
    assert err.value.field == "batch"
    with pytest.raises(RooflineInputError) as err:
        dataclasses.replace(EXAMPLE, kv_heads=64)
    assert err.value.field == "kv_heads"
    with pytest.raises(RooflineInputError) as err:
        dataclasses.replace(EXAMPLE, active_params=9e9)
    assert err.value.field == "active_params"
    with pytest.raises(RooflineInputError) as err:
        dataclasses.replace(EXAMPLE, bandwidth_gb_per_s=float("nan"))
    assert err.value.field == "bandwidth_gb_per_s"
    draws = pl.DataFrame([EXAMPLE.row(), dataclasses.replace(EXAMPLE, tflops=1).row()])
    with pytest.raises(RooflineInputError) as err:
        roofline(draws.drop("context"))
    assert err.value.field == "context"


def test_calibration_worked_example():
    # 16 GB weights + 512 cached tokens x 131,072 B (0.067108864 GB) + the new token's K/V
    # (0.000131072 GB) = 16.067239936 GB read and written in the measured 7.5 ms TPOT:
    # 16.067239936 / 0.0075 s = 2,142.2987 GB/s (2,142.3 as issue 6 states)
    bandwidth = implied_bandwidth_gb_per_s(EXAMPLE, tpot_ms=7.5, context=512)
    assert round(bandwidth, 1) == 2142.3


def test_calibration_round_trips_and_is_recorded():
    cal = calibrate(EXAMPLE, source="bench/h100-c1.json (2026-11-02)", tpot_ms=7.5,
                    context=512, ttft_ms=40.0, prompt_tokens=2048)
    # prefill of 2,048 tokens: 2,048 x 1.6e10 + 524,288 x 2,048 x 2,049 / 2
    # = 32,768,000,000,000 + 1,100,048,498,688 = 33,868,048,498,688 FLOP in 40 ms
    # -> 846.70 TFLOP/s effective
    assert cal.tflops == pytest.approx(846.7012, abs=1e-4)
    assert cal.tflops == pytest.approx(implied_tflops(EXAMPLE, ttft_ms=40.0, prompt_tokens=2048))
    tuned = apply_calibration(EXAMPLE, cal)
    at_run = estimate(dataclasses.replace(tuned, batch=1, context=512))
    # predicting the calibration point gives back the measured TPOT (memory-bound there)
    assert at_run.step_ms == pytest.approx(7.5)
    assert estimate(dataclasses.replace(tuned, prompt_tokens=2048)).prefill_compute_ms \
        == pytest.approx(40.0)
    text = " ".join(assumptions(tuned))
    assert "bench/h100-c1.json (2026-11-02)" in text
    assert "TPOT 7.5 ms at 512 cached tokens" in text
    # a calibrated ceiling at the example's batch: 16 / (20.297064448 GB / 2,142.2987 GB/s)
    # = 16 / 9.474432 ms = 1,688.75 tokens/s
    assert estimate(tuned).tokens_per_s_ceiling == pytest.approx(1688.75, abs=0.01)
    with pytest.raises(RooflineInputError) as err:
        calibrate(EXAMPLE, source=" ", tpot_ms=7.5, context=512)
    assert err.value.field == "source"
    with pytest.raises(RooflineInputError) as err:
        calibrate(EXAMPLE, source="run", tpot_ms=0, context=512)
    assert err.value.field == "tpot_ms"


def test_inputs_from_reference_rows():
    model = {"model": "Llama-3.1-8B", "params": 8_030_261_248.0,
             "active_params": 8_030_261_248.0, "layers": 32, "q_heads": 32, "kv_heads": 8,
             "head_dim": 128, "vocab_size": 128_256, "hidden_size": 4096,
             "tied_embeddings": False}
    gpu = {"gpu": "H100-SXM-80GB", "memory_gb": 80.0, "memory_bandwidth_gb_per_s": 3350.0,
           "bf16_dense_tflops": 989.0, "fp8_dense_tflops": 1979.0}
    bf16 = inputs_from_reference(model, gpu, precision="bf16", batch=16, context=2048)
    # weights 8,030,261,248 x 2 B = 16.060522 GB; reserve 10% of 80 GB = 8 GB
    assert bf16.weights_gb == pytest.approx(16.060522496)
    assert bf16.reserve_gb == pytest.approx(8.0)
    assert bf16.tflops == 989.0
    fp8 = inputs_from_reference(model, gpu, precision="fp8", batch=16, context=2048,
                                reserve_gb=4.0)
    # 1 B per parameter = 8.030261 GB; the FP8 dense column; the override wins
    assert fp8.weights_gb == pytest.approx(8.030261248)
    assert (fp8.tflops, fp8.reserve_gb) == (1979.0, 4.0)
    with pytest.raises(RooflineInputError) as err:
        inputs_from_reference(model, gpu | {"fp8_dense_tflops": None}, precision="fp8",
                              batch=1, context=1)
    assert err.value.field == "tflops"


def test_reference_rows_are_read_through_the_bundled_reader(tmp_path):
    models = read_reference(reference_file(MODEL_ARCHITECTURES), MODEL_ARCHITECTURES)
    gpus = read_reference(reference_file(HARDWARE), HARDWARE)
    model = models.filter(pl.col("model") == "Llama-3.1-8B").row(0, named=True)
    gpu = gpus.filter(pl.col("gpu") == "H100-SXM-80GB").row(0, named=True)
    # the bundled rows give the same inputs as the hand-written rows above
    bf16 = inputs_from_reference(model, gpu, precision="bf16", batch=16, context=2048)
    assert bf16.weights_gb == pytest.approx(16.060522496)
    assert (bf16.reserve_gb, bf16.bandwidth_gb_per_s) == (pytest.approx(8.0), 3350.0)
    assert bf16.tflops == gpu["bf16_dense_tflops"]
    assert set(MODEL_FIELDS) <= set(models.columns)
    # a file in place of the bundled one is named by its path when it is wrong
    broken = tmp_path / "hardware.csv"
    broken.write_bytes(reference_file(HARDWARE).content.replace(b"H100-SXM-80GB,", b",", 1))
    with pytest.raises(ValidationFailed) as err:
        read_reference(reference_file(HARDWARE, broken), HARDWARE)
    assert str(broken) in err.value.report()


def test_with_reference_inputs_per_row_precision_and_overrides():
    joined = pl.DataFrame({
        "params": [8_030_261_248.0] * 2, "layers": [32, 32], "q_heads": [32, 32],
        "kv_heads": [8, 8], "head_dim": [128, 128], "memory_gb": [80.0, 80.0],
        "memory_bandwidth_gb_per_s": [3350.0, 3350.0], "bf16_dense_tflops": [989.0, 989.0],
        "fp8_dense_tflops": [1979.0, 1979.0], "batch": [16, 16], "context": [2048, 2048],
        "precision": ["bf16", "fp8"], "reserve_gb": [None, 4.0],
    })
    out = roofline(with_reference_inputs(joined))
    # bf16: 8,030,261,248 x 2 B = 16.060522 GB, reserve 10% of 80 = 8 GB, 989 TFLOP/s
    # fp8:  8,030,261,248 x 1 B = 8.030261 GB, the overriding 4 GB reserve, 1,979 TFLOP/s
    assert out["weights_gb"].to_list() == pytest.approx([16.060522496, 8.030261248])
    assert out["reserve_gb"].to_list() == pytest.approx([8.0, 4.0])
    assert out["tflops"].to_list() == [989.0, 1979.0]
    # required: 16.060522 + 8 + 4.294967 = 28.355490; 8.030261 + 4 + 4.294967 = 16.325229 GB
    assert out["required_gb"].to_list() == pytest.approx([28.355490, 16.325229], abs=1e-6)
    with pytest.raises(RooflineInputError) as err:
        with_reference_inputs(joined.drop("precision"))
    assert err.value.field == "precision"


# --- properties -------------------------------------------------------------------------

_sizes = st.fixed_dictionaries({
    "layers": st.integers(1, 128),
    "kv_heads": st.integers(1, 16),
    "group": st.integers(1, 8),
    "head_dim": st.sampled_from([64, 80, 96, 128, 256]),
    "batch": st.integers(1, 512),
    "context": st.integers(0, 200_000),
    "bandwidth": st.floats(100, 20_000),
    "tflops": st.floats(10, 5_000),
    "budget": st.floats(16, 300),
})


def _inputs(d: dict) -> RooflineInputs:
    return RooflineInputs(params=7e9, layers=d["layers"], q_heads=d["kv_heads"] * d["group"],
                          kv_heads=d["kv_heads"], head_dim=d["head_dim"], cache_bytes=2,
                          batch=d["batch"], context=d["context"], weights_gb=14,
                          reserve_gb=2, budget_gb=d["budget"],
                          bandwidth_gb_per_s=d["bandwidth"], tflops=d["tflops"])


@settings(max_examples=40, deadline=None)
@given(_sizes, st.integers(1, 100_000))
def test_ceiling_never_rises_as_context_grows(d, extra):
    short = estimate(_inputs(d))
    longer = estimate(dataclasses.replace(_inputs(d), context=d["context"] + extra))
    assert longer.cache_gb > short.cache_gb
    if short.tokens_per_s_ceiling is None:
        assert longer.tokens_per_s_ceiling is None
    elif longer.tokens_per_s_ceiling is not None:
        assert longer.tokens_per_s_ceiling <= short.tokens_per_s_ceiling


@settings(max_examples=40, deadline=None)
@given(_sizes, st.integers(2, 8))
def test_kv_bytes_follow_kv_heads_not_query_heads(d, factor):
    base = _inputs(d)
    more_queries = dataclasses.replace(base, q_heads=base.q_heads * factor)
    more_kv = dataclasses.replace(base, kv_heads=base.kv_heads * factor,
                                  q_heads=base.q_heads * factor)
    kv = estimate(base).kv_bytes_per_token
    assert kv == 2 * d["layers"] * d["kv_heads"] * d["head_dim"] * 2
    assert estimate(more_queries).kv_bytes_per_token == kv
    assert estimate(more_kv).kv_bytes_per_token == kv * factor


@settings(max_examples=40, deadline=None)
@given(_sizes)
def test_bound_agrees_with_intensity_versus_ridge(d):
    r = estimate(_inputs(d))
    assert r.step_ms == max(r.memory_ms, r.compute_ms)
    if r.bound == "memory":
        assert r.arithmetic_intensity_flop_per_byte <= r.ridge_flop_per_byte * (1 + 1e-9)
    else:
        assert r.arithmetic_intensity_flop_per_byte > r.ridge_flop_per_byte * (1 - 1e-9)
    assert (r.tokens_per_s_ceiling is None) == (r.headroom_gb < 0)


@settings(max_examples=40, deadline=None)
@given(_sizes)
def test_max_batch_is_the_largest_batch_that_fits(d):
    base = _inputs({**d, "context": max(d["context"], 1)})
    n = estimate(base).max_batch
    assert n is not None
    if n >= 1:
        assert estimate(dataclasses.replace(base, batch=n)).headroom_gb >= -1e-9
    assert estimate(dataclasses.replace(base, batch=n + 1)).headroom_gb < 1e-9


# --- issue 16: MoE traffic, parallelism costs, KV capacity, embedding lookup ---------------

MODELS = {r["model"]: r for r in read_reference(
    reference_file(MODEL_ARCHITECTURES), MODEL_ARCHITECTURES).iter_rows(named=True)}
H100 = {"gpu": "H100-SXM-80GB", "memory_gb": 80.0, "memory_bandwidth_gb_per_s": 3350.0,
        "bf16_dense_tflops": 989.0, "fp8_dense_tflops": 1979.0,
        "source_url": "https://www.nvidia.com/en-us/data-center/h100/"}


def test_mixtral_8x22b_reads_its_active_experts_at_batch_1():
    mixtral = MODELS["Mixtral-8x22B-Instruct-v0.1"]
    r = estimate(inputs_from_reference(mixtral, H100, precision="bf16", batch=1, context=1,
                                       tensor_parallel=4, lookup_embeddings=False))
    # top-2 of 8 at batch 1: 8 x (1 - (1 - 2/8)^1) = 2 experts touched per layer
    assert r.experts_touched == pytest.approx(2.0)
    # expert = (140,630,071,296 - 39,161,468,928) / (8 - 2) = 16,911,433,728 parameters;
    # shared = total - 8 experts = 5,338,601,472; read = shared + 2 experts = active
    # = 39,161,468,928 x 2 B = 78.32 GB, 19.58 GB per GPU (the issue: 39e9 x 2 / 4 = 19.5)
    assert r.weights_read_gb == pytest.approx(78.322937856)
    # + one token of KV (229,376 B) over 4 x 3,350 GB/s = 5.8451 ms (the issue: 5.8 ms), not the
    # 21.0 ms of every expert read (281.26 GB / 13,400 GB/s)
    assert r.memory_ms == pytest.approx(5.8451, abs=1e-4)
    # at batch 16 nearly every expert is touched: 8 x (1 - 0.75^16) = 7.920
    wide = estimate(inputs_from_reference(mixtral, H100, precision="bf16", batch=16,
                                          context=1, tensor_parallel=4))
    assert wide.experts_touched == pytest.approx(7.9198, abs=1e-4)
    # weights 281.26 GB = 70.3 GB per GPU at BF16: with the 8 GB reserve only 1.68 GB of each
    # GPU is left for KV: (320 - 281.260142592 - 32) = 6.739857 GB / 229,376 B = 29,383
    # tokens in all, a few short conversations: it does not fit for serving beside KV
    assert r.kv_capacity_tokens == 29_383
    assert any("top-2 of 8 experts" in a for a in r.assumptions)
    # and the assumptions say so: 281.26 / 4 = 70.315 GB of each 80 GB GPU
    assert any(a.startswith("Weights take 70.315 GB of each GPU's 80 GB") and "29,383 tokens"
               in a for a in r.assumptions)


def test_seed_001_tensor_parallel_all_reduce_cost():
    seventy = inputs_from_reference(MODELS["Llama-3.1-70B"], H100, precision="bf16",
                                    batch=1, context=1000, tensor_parallel=4)
    # seed 001: 80 layers x 2 all-reduces x 100 us = 16 ms per decode step at TP4 (NVLink)
    tp4 = estimate(dataclasses.replace(seventy, allreduce_us=100))
    assert tp4.collective_ms == pytest.approx(16.0)
    # 80 x 2 x 60 us = 9.6 ms at TP2; 80 x 2 x 3 ms = 480 ms over PCIe at TP4
    assert estimate(dataclasses.replace(seventy, tensor_parallel=2, allreduce_us=60)
                    ).collective_ms == pytest.approx(9.6)
    assert estimate(dataclasses.replace(seventy, allreduce_us=3000)).collective_ms == \
        pytest.approx(480.0)
    # seed 003: 160 collectives x 5 us = 0.8 ms
    assert estimate(dataclasses.replace(seventy, allreduce_us=5)).collective_ms == \
        pytest.approx(0.8)
    # the collectives add to the step: step = max(memory, compute) + 16 ms
    bare = estimate(seventy)
    assert tp4.step_ms == pytest.approx(bare.step_ms + 16.0)
    assert bare.collective_ms == 0 and any("not counted" in a for a in bare.assumptions)
    # one GPU has no collective whatever the latency
    assert estimate(dataclasses.replace(seventy, tensor_parallel=1, allreduce_us=100)
                    ).collective_ms == 0


def test_seed_003_pipeline_bubble():
    base = dataclasses.replace(EXAMPLE, pipeline_parallel=4, microbatches=16)
    # bubble = (p - 1) / (m + p - 1): 3 / 19 = 15.8 % at m = 16, 3 / 67 = 4.5 % at m = 64
    assert estimate(base).pp_bubble_share == pytest.approx(3 / 19)
    assert round(estimate(base).pp_bubble_share, 3) == 0.158
    assert round(estimate(dataclasses.replace(base, microbatches=64)).pp_bubble_share,
                 3) == 0.045
    # four stages: 4 x the memory budget; the step is the ideal one over 4 x the GPUs divided
    # by (1 - bubble): 6.058825 / 4 / (16 / 19) = 1.798713 ms
    r = estimate(base)
    assert r.memory_budget_gb == 320
    assert r.step_ms == pytest.approx(6.058825 / 4 / (16 / 19), abs=1e-6)
    assert r.gpus == 4
    assert r.tokens_per_s_per_gpu == pytest.approx(r.tokens_per_s_ceiling / 4)


def test_seed_001_kv_capacity_in_tokens():
    # seed 001 worksheet step 1: KV budget 38 GB per GPU x 4 = 152 GB; Llama 70B GQA KV =
    # 2 x 80 x 8 x 128 x 2 B = 327,680 B/token. 152e9 / 327,680 = 463,867 tokens (about
    # 464,000); the seed's 475,000 divides by 320,000 B ("320 KB" read as 1e3 B): we keep
    # 327,680 B (320 KiB)
    worksheet = RooflineInputs(
        params=70e9, layers=80, q_heads=64, kv_heads=8, head_dim=128, cache_bytes=2, batch=1,
        context=1000, weights_gb=140, reserve_gb=7, budget_gb=80, bandwidth_gb_per_s=3350,
        tflops=989, tensor_parallel=4)  # weights 35 GB + 4 GB activations + 3 GB overhead
    r = estimate(worksheet)
    assert r.kv_bytes_per_token == 327_680
    assert r.kv_capacity_tokens == 463_867
    assert 152e9 / 320e3 == 475_000
    # at 1,000 live tokens per request: 463 requests (the seed: about 475)
    assert r.max_batch == 463


def test_qwen_embedding_lookup_leaves_the_table_out_of_the_traffic():
    qwen = MODELS["Qwen2.5-7B"]
    a40 = {"gpu": "A40-48GB", "memory_gb": 48.0, "memory_bandwidth_gb_per_s": 696.0,
           "bf16_dense_tflops": 149.7}
    looked_up = estimate(inputs_from_reference(qwen, a40, precision="bf16", batch=1,
                                               context=0))
    whole = estimate(inputs_from_reference(qwen, a40, precision="bf16", batch=1, context=0,
                                           lookup_embeddings=False))
    # 7,615,616,512 x 2 B = 15.23 GB with the table; less 152,064 x 3,584 = 544,997,376
    # parameters (1.09 GB) = 14.14 GB, seed 004's weight bytes per decode step
    assert whole.weights_read_gb == pytest.approx(15.231233024)
    assert looked_up.weights_read_gb == pytest.approx(14.141238272)
    # decode FLOPs at context 0: 2 x 7,070,619,136 = 1.414e10 (seed 004: 1.4e10 per token)
    assert looked_up.decode_flops == pytest.approx(14_141_238_272)
    assert any("looked up" in a for a in looked_up.assumptions)


def test_rates_are_labelled_datasheet_or_planning_input():
    cited = inputs_from_reference(MODELS["Llama-3.1-8B"], H100, precision="bf16", batch=1,
                                  context=1)
    assert any("peak datasheet figures" in a and "nvidia.com" in a
               for a in assumptions(cited))
    assert any("planning inputs" in a for a in assumptions(EXAMPLE))
    assert not any("datasheet figures" in a for a in assumptions(EXAMPLE))


def test_replicas_multiply_the_total_not_the_per_gpu_rate():
    one = estimate(dataclasses.replace(EXAMPLE, tensor_parallel=2))
    two = estimate(dataclasses.replace(EXAMPLE, tensor_parallel=2, replicas=2))
    assert two.gpus == 4
    assert two.tokens_per_s_total == pytest.approx(2 * one.tokens_per_s_ceiling)
    assert two.tokens_per_s_per_gpu == pytest.approx(one.tokens_per_s_per_gpu)


def test_seed_004_mbu_mfu_and_the_headroom_rule():
    qwen = inputs_from_reference(
        MODELS["Qwen2.5-7B"], {"gpu": "A40-48GB", "memory_gb": 48.0,
                               "memory_bandwidth_gb_per_s": 696.0, "bf16_dense_tflops": 149.7,
                               "source_url": "https://www.nvidia.com/en-us/data-center/a40/"},
        precision="bf16", batch=1, context=512)
    cal = calibrate(qwen, source="seed 004 chart 1a", tpot_ms=28, context=512)
    # traffic at C = 1, 512 cached tokens: 14.141238 + 512 x 57,344 / 1e9 (0.029360) +
    # 57,344 / 1e9 = 14.170656 GB / 28 ms = 506.09 GB/s (seed: 14.14 / 28 ms = 505 GB/s);
    # MBU = 506.09 / 696 = 72.7 % (seed: "about 73 % of peak")
    assert cal.bandwidth_gb_per_s == pytest.approx(506.09, abs=0.01)
    assert cal.mbu == pytest.approx(0.7271, abs=1e-4)
    assert "A40-48GB datasheet" in cal.peaks
    # the headroom rule: at most 1 / 0.727 = 1.38x from a faster kernel (seed 003: 70 % -> 1.4x)
    assert "at most 1.38x" in cal.headroom
    assert "no headroom" in calibrate(qwen, source="s", tpot_ms=20.4, context=512).headroom
    planned = calibrate(EXAMPLE, source="s", tpot_ms=8, context=2048)
    assert planned.peaks.startswith("planning inputs")
    # MFU from TTFT: 512-token prefill FLOPs over TTFT x rate
    ttft = calibrate(qwen, source="s", ttft_ms=88, prompt_tokens=512)
    assert ttft.mfu == pytest.approx(ttft.tflops / 149.7)
