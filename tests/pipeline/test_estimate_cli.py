"""`scorecard estimate` through a real Typer app: flags, reference look-ups, TOML, JSON contract
(DESIGN section 9), error messages naming the flag, calibration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pipeline.cli.estimate import estimate

HARDWARE = Path(__file__).resolve().parents[1] / "fixtures" / "roofline" / "hardware.csv"
EXAMPLE_FLAGS = ["--params", "8e9", "--layers", "32", "--q-heads", "32", "--kv-heads", "8",
                 "--head-dim", "128", "--cache-bytes", "2", "--batch", "16", "--context", "2048",
                 "--weights-gb", "16", "--reserve-gb", "8", "--budget-gb", "80",
                 "--bandwidth-gbs", "3350", "--tflops", "989"]
CONTRACT = ("kv_bytes_per_token", "cache_gb", "required_gb", "headroom_gb", "traffic_gb",
            "memory_ms", "compute_ms", "step_ms", "tokens_per_s_ceiling", "bound")

app = typer.Typer()
app.command("estimate")(estimate)


@app.command("noop")
def _noop() -> None:
    """A second command, so `estimate` is invoked by name as under `scorecard`."""


runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["estimate", *args])
    return result.exit_code, result.stdout, result.stderr


def run_json(*args: str) -> dict:
    code, out, err = run(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_worked_example_json_contract():
    code, out, _ = run(*EXAMPLE_FLAGS, "--json")
    assert code == 0
    data = json.loads(out)  # stdout is only JSON
    assert set(CONTRACT) <= set(data)
    # issue 6: KV 131,072 B; cache 4.294967 GB; required 28.294967; headroom 51.705033;
    # traffic 20.297064 GB; memory 6.058825 ms; compute 0.276218 ms; 2,640.78 tokens/s
    assert data["kv_bytes_per_token"] == 131_072
    assert data["cache_gb"] == pytest.approx(4.294967, abs=1e-6)
    assert data["required_gb"] == pytest.approx(28.294967, abs=1e-6)
    assert data["headroom_gb"] == pytest.approx(51.705033, abs=1e-6)
    assert data["traffic_gb"] == pytest.approx(20.297064, abs=1e-6)
    assert data["memory_ms"] == pytest.approx(6.058825, abs=1e-6)
    assert data["compute_ms"] == pytest.approx(0.276218, abs=1e-6)
    assert data["step_ms"] == data["memory_ms"]
    assert data["tokens_per_s_ceiling"] == pytest.approx(2640.78, abs=0.01)
    assert data["bound"] == "memory"
    assert data["grade"] == "estimated"
    assert data["assumptions"] and all(isinstance(a, str) for a in data["assumptions"])
    # sorted keys, deterministic
    assert out.strip() == json.dumps(data, sort_keys=True, indent=2)
    assert run(*EXAMPLE_FLAGS, "--json")[1] == out


def test_text_report_names_the_binding_bound_and_assumptions():
    code, out, _ = run(*EXAMPLE_FLAGS)
    assert code == 0
    assert "memory-bound" in out
    assert "  ceiling           2,640.8 tok/s   batch / step" in out
    assert "  headroom            51.71 GB" in out
    # (80 - 16 - 8) GB / (2,048 x 131,072 B = 0.268435456 GB) = 208.6 -> 208 sequences
    assert "  max batch             208 seq" in out
    assert "Assumptions" in out and "KV heads, not the 32 query heads" in out


def test_model_and_gpu_from_the_reference_tables():
    data = run_json("--model", "Llama-3.1-8B", "--gpu", "h100-sxm-80gb", "--batch", "16",
                    "--context", "2048", "--hardware-csv", str(HARDWARE))
    # weights 8,030,261,248 x 2 B = 16.060522496 GB; reserve 10% of 80 = 8 GB
    # read per step: less the looked-up input embedding (models.csv lookup_embeddings):
    # 128,256 x 4,096 x 2 B = 1.050673152 GB -> 15.009849344 GB
    # traffic = 15.009849344 + 4.294967296 + 0.002097152 = 19.306913792 GB
    # -> / 3,350 = 5.763258 ms -> 16 / 5.763258 ms = 2,776.21 tokens/s
    assert data["inputs"]["weights_gb"] == pytest.approx(16.060522496)
    assert data["inputs"]["reserve_gb"] == pytest.approx(8.0)
    assert data["weights_read_gb"] == pytest.approx(15.009849344)
    assert data["memory_ms"] == pytest.approx(5.763258, abs=1e-6)
    assert data["tokens_per_s_ceiling"] == pytest.approx(2776.21, abs=0.01)
    assert (data["model"], data["gpu"], data["precision"]) == ("Llama-3.1-8B",
                                                              "H100-SXM-80GB", "bf16")
    urls = {s["table"]: s["source_url"] for s in data["sources"]}
    assert urls["core__model_architectures"].endswith("/Llama-3.1-8B/blob/main/config.json")
    assert urls["core__hardware"].startswith("https://www.nvidia.com/")
    assert any(a.startswith("Weights = 8,030,261,248 parameters x 2 B") for a in
               data["assumptions"])
    # a flag overrides the table: 4 KV heads halve the KV bytes (2 x 32 x 4 x 128 x 2 = 65,536)
    fewer = run_json("--model", "Llama-3.1-8B", "--kv-heads", "4", "--batch", "1",
                     "--context", "1", "--budget-gb", "80", "--bandwidth-gbs", "3350",
                     "--tflops", "989")
    assert fewer["kv_bytes_per_token"] == 65_536


def test_fp8_uses_the_fp8_column_and_one_byte_weights():
    data = run_json("--model", "Llama-3.1-70B", "--gpu", "H100-SXM-80GB", "--precision", "fp8",
                    "--batch", "8", "--context", "4096", "--hardware-csv", str(HARDWARE))
    # 70,553,706,496 x 1 B = 70.553706 GB; compute from fp8_dense_tflops = 1,979
    assert data["inputs"]["weights_gb"] == pytest.approx(70.553706496)
    assert data["inputs"]["tflops"] == 1979
    code, _, err = run("--model", "Llama-3.1-70B", "--gpu", "A100-SXM-80GB", "--precision",
                       "fp8", "--batch", "8", "--context", "4096", "--hardware-csv",
                       str(HARDWARE))
    assert code == 1
    assert "--gpu" in err and "fp8_dense_tflops" in err and "--tflops" in err


def test_over_budget_prints_null_ceiling_with_reason():
    flags = [*EXAMPLE_FLAGS]
    flags[flags.index("--context") + 1] = "131072"
    data = run_json(*flags)
    assert data["tokens_per_s_ceiling"] is None
    assert "exceeds the 80.0 GB memory budget" in data["ceiling_reason"]
    code, out, _ = run(*flags)
    assert code == 0 and "tok/s   none: required 298.88 GB" in out


@pytest.mark.parametrize(("change", "flag"), [
    (("--batch", "0"), "--batch"),
    (("--kv-heads", "64"), "--kv-heads"),
    (("--bandwidth-gbs", "-5"), "--bandwidth-gbs"),
    (("--cache-bytes", "0"), "--cache-bytes"),
])
def test_bad_flag_is_named_and_exits_1(change, flag):
    flags = [*EXAMPLE_FLAGS]
    flags[flags.index(change[0]) + 1] = change[1]
    code, out, err = run(*flags)
    assert code == 1
    assert out == ""
    assert err.startswith(f"error: {flag}:")


def test_missing_inputs_and_unknown_names():
    flags = [*EXAMPLE_FLAGS]
    del flags[flags.index("--bandwidth-gbs"):flags.index("--bandwidth-gbs") + 2]
    code, _, err = run(*flags)
    assert code == 1 and "missing --bandwidth-gbs or --gpu" in err
    code, _, err = run("--model", "GPT-5", "--batch", "1", "--context", "1")
    assert code == 1 and "--model: unknown model 'GPT-5'" in err and "Llama-3.1-8B" in err
    code, _, err = run("--model", "Llama-3.1-8B", "--gpu", "H100-SXM-80GB", "--batch", "1",
                       "--context", "1", "--hardware-csv", "/nonexistent/hardware.csv")
    assert code == 1 and "hardware table /nonexistent/hardware.csv not found" in err


def test_from_toml(tmp_path: Path):
    toml = tmp_path / "estimate.toml"
    toml.write_text(
        "[estimate]\nparams = 8e9\nlayers = 32\nq_heads = 32\nkv_heads = 8\nhead_dim = 128\n"
        "cache_bytes = 2\nbatch = 16\ncontext = 2048\nweights_gb = 16\nreserve_gb = 8\n"
        "budget_gb = 80\nbandwidth_gbs = 3350\ntflops = 989\n", encoding="utf-8")
    from_file = run_json("--from-toml", str(toml))
    from_flags = run_json(*EXAMPLE_FLAGS)
    assert from_file == from_flags
    # a flag wins over the file: batch 32 doubles the cache (2 x 4.294967296 = 8.589934592 GB)
    assert run_json("--from-toml", str(toml), "--batch", "32")["cache_gb"] == \
        pytest.approx(8.589934592)
    bad = tmp_path / "bad.toml"
    bad.write_text(toml.read_text(encoding="utf-8").replace("batch = 16", "batch = 0"),
                   encoding="utf-8")
    code, _, err = run("--from-toml", str(bad))
    assert code == 1 and f"{bad}: key 'batch': must be at least 1" in err
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("[estimate]\nbatchsize = 4\n", encoding="utf-8")
    code, _, err = run("--from-toml", str(unknown))
    assert code == 1 and "unknown key 'batchsize'" in err
    typed = tmp_path / "typed.toml"
    typed.write_text("[estimate]\nlayers = \"32\"\n", encoding="utf-8")
    code, _, err = run("--from-toml", str(typed))
    assert code == 1 and "key 'layers' must be an integer" in err


def test_calibration_flags():
    data = run_json(*EXAMPLE_FLAGS, "--calibrate-tpot-ms", "7.5", "--calibrate-context", "512",
                    "--calibration-source", "bench/h100-c1.json")
    # 16.067239936 GB per step in 7.5 ms -> 2,142.2987 GB/s replaces the 3,350 GB/s peak;
    # ceiling = 16 / (20.297064448 / 2,142.2987 s) = 1,688.76 tokens/s
    assert data["inputs"]["bandwidth_gb_per_s"] == pytest.approx(2142.2987, abs=1e-4)
    assert data["calibration"]["source"] == "bench/h100-c1.json"
    assert data["tokens_per_s_ceiling"] == pytest.approx(1688.76, abs=0.01)
    assert any("Calibrated from bench/h100-c1.json" in a for a in data["assumptions"])
    code, _, err = run(*EXAMPLE_FLAGS, "--calibrate-tpot-ms", "7.5", "--calibrate-context",
                       "512")
    assert code == 1 and "--calibration-source" in err
    code, _, err = run(*EXAMPLE_FLAGS, "--calibrate-tpot-ms", "7.5",
                       "--calibration-source", "x")
    assert code == 1 and "--calibrate-tpot-ms needs --calibrate-context" in err


def test_the_report_is_built_without_the_cli():
    from pipeline.engine.roofline.report import estimate_report, render_json
    from pipeline.inputs.evidence.estimate import resolve

    # options keyed by TOML key, as the command passes them (its float flags as floats)
    options = {"params": 8e9, "layers": 32, "q_heads": 32, "kv_heads": 8, "head_dim": 128,
               "cache_bytes": 2.0, "batch": 16, "context": 2048, "weights_gb": 16.0,
               "reserve_gb": 8.0, "budget_gb": 80.0, "bandwidth_gbs": 3350.0, "tflops": 989.0}
    assert (render_json(estimate_report(*resolve(options)))
            == run(*EXAMPLE_FLAGS, "--json")[1].strip())


def test_importing_the_command_does_not_import_polars():
    code = ("import sys, pipeline.cli.estimate; "
            "sys.exit(1 if 'polars' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_every_bundled_gpu_can_be_looked_up():
    from pipeline.inputs.evidence.estimate import lookup_gpu
    from sources import bundled

    text = bundled.read("hardware.csv").content.decode("utf-8")
    names = [line.split(",", 1)[0] for line in text.splitlines()[1:] if line.strip()]
    assert names
    for name in names:
        gpu = lookup_gpu(name)
        data = run_json("--model", "Llama-3.1-8B", "--gpu", name, "--batch", "1",
                        "--context", "1024")
        # the budget, bandwidth and compute come from that GPU's row
        assert data["inputs"]["budget_gb"] == gpu["memory_gb"]
        assert data["inputs"]["bandwidth_gb_per_s"] == gpu["memory_bandwidth_gb_per_s"]
        assert data["inputs"]["tflops"] == gpu["bf16_dense_tflops"]
        assert data["sources"][1]["key"] == gpu["gpu"]


def test_request_sizing_reproduces_the_seed_001_worksheet():
    # seed 001: Llama 70B BF16 at TP4, 200 RPS of 800 prompt / 250 output tokens at
    # concurrency 40 and TPOT 35 ms (a planning input). TTFT here is the roofline's prefill
    # bound at the datasheet 989.5 TFLOP/s: 1.104e14 FLOP / (4 x 989.5e12) = 27.9 ms (the seed
    # takes efficiency 0.5 and 2 x P FLOP per token: 57 ms). Duration = 0.0279 + 249 x 0.035 =
    # 8.743 s; 40 / 8.743 = 4.575 requests/s; ceil(200 / 4.575) = ceil(43.7) = 44 replicas x 4
    # = 176 GPUs (the seed, rounding to 4.5 requests/s: 45 = 180)
    data = run_json("--model", "Llama-3.1-70B", "--gpu", "H100-SXM-80GB", "--tensor-parallel",
                    "4", "--batch", "40", "--context", "1050", "--prompt-tokens", "800",
                    "--requests-per-s", "200", "--output-tokens", "250", "--tpot-ms", "35")
    s = data["sizing"]
    assert s["ttft_ms"] == pytest.approx(27.88, abs=0.01)
    assert s["request_duration_s"] == pytest.approx(8.743, abs=1e-3)
    assert s["replica_requests_per_s"] == pytest.approx(4.575, abs=1e-3)
    assert (s["littles_law_instances"], s["littles_law_gpus"]) == (44, 176)
    # FP8 at TPOT 18 ms: 0.0279 + 249 x 0.018 = 4.510 s -> 8.869 requests/s -> ceil(22.55) =
    # 23 replicas = 92 GPUs (the seed's 4.7 s and 8.5 requests/s give 24 = 96)
    fp8 = run_json("--model", "Llama-3.1-70B", "--gpu", "H100-SXM-80GB", "--tensor-parallel",
                   "4", "--batch", "40", "--context", "1050", "--prompt-tokens", "800",
                   "--requests-per-s", "200", "--output-tokens", "250", "--tpot-ms", "18")
    assert (fp8["sizing"]["littles_law_instances"], fp8["sizing"]["littles_law_gpus"]) == (23, 92)
    code, out, _ = run("--model", "Llama-3.1-70B", "--gpu", "H100-SXM-80GB",
                       "--tensor-parallel", "4", "--batch", "40", "--context", "1050",
                       "--requests-per-s", "200", "--output-tokens", "250", "--tpot-ms", "35")
    assert code == 0 and "-> 44 instances = 176 GPUs" in out


def test_topologies_compare_tp_and_replicas_on_the_same_gpus():
    # Llama 3.1 8B at batch 32, context 2,048 on 4 H100s, all-reduce 100 us: TP1 x 4 has no
    # collective; TP4 x 1 adds 32 layers x 2 x 100 us = 6.4 ms per step
    data = run_json("--model", "Llama-3.1-8B", "--gpu", "H100-SXM-80GB", "--batch", "32",
                    "--context", "2048", "--allreduce-us", "100", "--compare-gpus", "4")
    rows = {t["tensor_parallel"]: t for t in data["topologies"]}
    assert sorted(rows) == [1, 2, 4] and rows[4]["replicas"] == 1 and rows[1]["replicas"] == 4
    assert rows[1]["collective_ms"] == 0 and rows[4]["collective_ms"] == pytest.approx(6.4)
    # TP1: traffic 15.009849 + 32 x 2,048 x 131,072 / 1e9 (8.589935) + 32 x 131,072 / 1e9
    # (0.004194) = 23.603978 GB / 3,350 = 7.045963 ms; 32 / 7.045963 ms x 4 replicas =
    # 18,166.4 tokens/s = 4,541.6 per GPU
    assert rows[1]["tpot_ms"] == pytest.approx(7.045963, abs=1e-6)
    assert rows[1]["tokens_per_s_per_gpu"] == pytest.approx(4541.6, abs=0.1)
    # TP4: 23.603978 / 13,400 = 1.761491 ms + 6.4 = 8.161491 ms -> 32 / 8.161491 ms = 3,920.9
    # tokens/s for the 4 GPUs = 980.2 per GPU: at 100 us per all-reduce the collective outweighs
    # TP4's faster read, so four replicas win on tokens per GPU and on TPOT alike
    assert rows[4]["tpot_ms"] == pytest.approx(8.161491, abs=1e-6)
    assert rows[4]["tokens_per_s_per_gpu"] == pytest.approx(980.2, abs=0.1)


def test_sweep_against_a_measured_sweep_prints_predicted_vs_measured():
    # seed 004: Qwen2.5-7B on an A40 at its calibrated rates (505 GB/s, 76.6 TFLOP/s typed in:
    # planning inputs), 8,192-token prompts, 128 output tokens, 2,048-token chunks
    args = ("--model", "Qwen2.5-7B", "--budget-gb", "48", "--bandwidth-gbs", "505",
            "--tflops", "76.6", "--batch", "1", "--context", "8192", "--sweep",
            "1,2,4,8,16,32", "--output-tokens", "128", "--chunk-budget", "2048",
            "--measured-tokens-per-s", "32.61,52.78,71.13,81.38,83.08,72.32")
    data = run_json(*args)
    got = {r["concurrency"]: r for r in data["sweep"]["comparison"]}
    # predicted C / TPOT: 34.6, 48.5, 61, 70, 77, 83.1 (seed: 35, 49, 61, 70, 77, 84); error at
    # C = 32: 83.1 / 72.32 - 1 = +15 %
    assert got[32]["predicted_decode_tokens_per_s"] == pytest.approx(83.1, abs=0.1)
    assert got[32]["error_decode_tokens_per_s"] == pytest.approx(0.149, abs=0.005)
    assert any("planning inputs" in a for a in data["assumptions"])
    code, out, _ = run(*args)
    assert code == 0 and "C=32: TPOT" in out and "measured 72.3 tok/s, error +15%" in out
    code, _, err = run(*args[:-1], "32.61,52.78")
    assert code == 1 and "--measured-tokens-per-s" in err and "one figure per level" in err


SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "samples" / "vllm" / \
    "er0080_bench_serve_v0.25.1.json"


@pytest.mark.skipif(not SAMPLE.exists(), reason="shared vLLM sample absent")
def test_sweep_against_measured_benchmark_files(tmp_path: Path):
    # a closed-loop sweep in vLLM's own result format: the real vllm bench serve sample with
    # its concurrency and TPOT set to seed 004's measured levels (C = 1: 28.8 ms, C = 32:
    # 436 ms; its median TTFT 55.68 ms is left as measured)
    base = json.loads(SAMPLE.read_text(encoding="utf-8"))
    for c, tpot in ((1, 28.8), (32, 436.0)):
        (tmp_path / f"c{c}.json").write_text(json.dumps(
            base | {"max_concurrency": c, "median_tpot_ms": tpot, "mean_tpot_ms": tpot}))
    data = run_json("--model", "Qwen2.5-7B", "--budget-gb", "48", "--bandwidth-gbs", "505",
                    "--tflops", "76.6", "--batch", "1", "--context", "8192", "--output-tokens",
                    "128", "--chunk-budget", "2048", "--sweep-evidence", str(tmp_path))
    got = {r["concurrency"]: r for r in data["sweep"]["comparison"]}
    # the levels are the evidence's; measured decode = C / TPOT: 1 / 0.0288 = 34.72 and
    # 32 / 0.436 = 73.39 tokens/s; predicted 34.6 and 83.1 -> errors -0.3 % and +13.2 %
    assert sorted(got) == [1, 32]
    assert got[32]["measured_decode_tokens_per_s"] == pytest.approx(73.394, abs=1e-3)
    assert got[32]["error_decode_tokens_per_s"] == pytest.approx(0.132, abs=0.003)
    assert got[1]["error_decode_tokens_per_s"] == pytest.approx(-0.003, abs=0.003)
    # TPOT 385 ms predicted vs 436 measured; TTFT 1.572 s predicted vs 0.0557 s measured
    assert got[32]["measured_tpot_ms"] == pytest.approx(436.0)
    assert got[32]["measured_ttft_s"] == pytest.approx(0.05568, abs=1e-5)
    assert "sha256" in data["sweep"]["measured_source"]
    code, _, err = run("--model", "Qwen2.5-7B", "--budget-gb", "48", "--bandwidth-gbs", "505",
                       "--tflops", "76.6", "--batch", "1", "--context", "8192",
                       "--output-tokens", "128", "--sweep-evidence", str(tmp_path / "none"))
    assert code == 1 and "--sweep-evidence: no such file" in err


def test_serialised_server_sweep_against_seed_004():
    # seed 004's HF loop (one request at a time, FIFO) at C = 32, from the roofline at the
    # calibrated rates: TTFT 1.572 s, TPOT 28.9 ms -> T_req = 1.572 + 127 x 0.0289 = 5.244 s;
    # TTFT = 31 x 5.244 + 1.572 = 164.1 s (seed: 177 s predicted with HF's 30.8 ms and 1.74 s,
    # 170 s measured: -3.5 %)
    data = run_json("--model", "Qwen2.5-7B", "--budget-gb", "48", "--bandwidth-gbs", "505",
                    "--tflops", "76.6", "--batch", "1", "--context", "8192", "--sweep", "1,32",
                    "--output-tokens", "128", "--serialised")
    rows = {r["concurrency"]: r for r in data["sweep"]["levels"]}
    assert rows[32]["ttft_s"] == pytest.approx(164.1, abs=0.2)
    assert rows[32]["ttft_s"] / 170 - 1 == pytest.approx(-0.035, abs=0.002)
    assert rows[32]["decode_tokens_per_s"] == pytest.approx(rows[1]["decode_tokens_per_s"])
    assert "Serialised server" in data["sweep"]["assumptions"][0]


def test_a_chunk_budget_of_zero_is_refused_naming_the_option() -> None:
    """0 is no chunk budget: it was taken for "none" (decode-only steps, 40 % more goodput)
    while the text said "chunked prefill at 0 tokens per step"."""
    from pipeline.cli import app

    result = CliRunner().invoke(app, [
        "estimate", "--model", "Llama-3.1-70B", "--gpu", "H100-SXM-80GB", "--precision", "fp8",
        "--tensor-parallel", "8", "--batch", "64", "--context", "1000", "--output-tokens",
        "250", "--chunk-budget", "0"])
    assert result.exit_code == 1
    assert "--chunk-budget: must be at least 1, got 0" in result.output
