"""The summary-only readers on real public files (../shared/samples, provenance in its
PROVENANCE.md; the tests skip when absent): SGLang bench_serving JSONL, trtllm-bench reports,
GenAI-Perf exports and InferenceX aggregated rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.evidence.bench import throughput_from_evidence
from pipeline.evidence.goodput import Slo
from sources.bench.aggregates import inferencex
from sources.bench.clients import genai_perf, sglang, trtllm_bench
from sources.bench.registry import detect_format
from sources.errors import ParseError

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} absent")
    return path


def test_sglang_online_sweep() -> None:
    path = need(SAMPLES / "sglang" /
                "sglang_bench_serving_2024-12_llama-3.3-70b_h200_online_request-rate-sweep.jsonl")
    assert detect_format(path.read_bytes()) == "sglang"  # not vllm, whose keys it shares
    runs = sglang.parse(path.read_bytes(), path=str(path))
    assert len(runs) == 7
    first = runs[0]
    # line 1: request_rate 1.0, 300 completed in 298.3676 s, 537.414 tokens/s, median TTFT
    # 85.745 ms
    assert first.request_rate_per_s == 1.0 and first.reported["completed"] == 300
    assert first.window_s == pytest.approx(298.3675805060193)
    assert first.reported["output_tokens_per_s"] == pytest.approx(537.4142851849319)
    assert first.reported["ttft_p50_s"] == pytest.approx(0.08574514742940664)
    assert first.params == {"engine": "sglang"}
    # the Dec 2024 schema has medians only: the bound proves at most 0.5 per limit
    ev = throughput_from_evidence(path, Slo(ttft_ms=1000, tpot_ms=100))
    assert ev.tokens_per_s is None


def test_sglang_offline_runs_read_request_rate_infinity_as_all_at_once() -> None:
    # SGLang writes `"request_rate": Infinity` for an offline run (not JSON, but what the
    # tool writes): a load setting, read as no request rate; the file was refused before
    path = need(SAMPLES / "sglang" /
                "sglang_bench_serving_2024-12_llama-3.3-70b_h200_offline.jsonl")
    runs = sglang.parse(path.read_bytes(), path=str(path))
    assert len(runs) == 7 and all(r.request_rate_per_s is None for r in runs)
    # line 1: 3000 completed in 341.7211 s, 4520.699 tokens/s
    assert runs[0].reported["completed"] == 3000
    assert runs[0].window_s == pytest.approx(341.72106836596504)
    assert runs[0].reported["output_tokens_per_s"] == pytest.approx(4520.698730654741)


LINE = (b'{"backend": "sglang", "dataset_name": "random", "request_rate": Infinity, '
        b'"total_output_tokens": 100, "mean_e2e_latency_ms": 900.0, "median_ttft_ms": 80.0, '
        b'"output_throughput": 10.0, "duration": 10.0, "completed": 5}')


@pytest.mark.parametrize("line, where, message", [
    # Infinity where a figure is measured stays refused, naming the key
    (LINE.replace(b'"median_ttft_ms": 80.0', b'"median_ttft_ms": Infinity'),
     "value 1: key 'median_ttft_ms'", "non-standard JSON constant Infinity"),
    (LINE.replace(b'"output_throughput": 10.0', b'"output_throughput": NaN'),
     "value 1: key 'output_throughput'", "non-standard JSON constant NaN"),
    # a load setting of minus infinity means nothing
    (LINE.replace(b'"request_rate": Infinity', b'"request_rate": -Infinity'),
     "value 1: key 'request_rate'", "non-standard JSON constant -Infinity"),
    # an absurd count is refused where it is read, not as an overflow later (exit 3 before)
    (LINE.replace(b'"completed": 5', b'"completed": -1e+308'),
     "run 0: key 'completed'", "beyond any count or timestamp"),
])
def test_sglang_constants_and_counts_outside_what_a_tool_writes_are_refused(
        line: bytes, where: str, message: str) -> None:
    assert len(sglang.parse(LINE, path="x.jsonl")) == 1  # the line as SGLang writes it
    with pytest.raises(ParseError, match=message) as caught:
        sglang.parse(line, path="x.jsonl")
    assert caught.value.where == where


def test_trtllm_bench_latency_report() -> None:
    path = need(SAMPLES / "trtllm_bench" /
                "trtllm-bench_1.2.0_latency_qwen2.5-0.5b_rtx-pro-6000_bf16_in1024_out40.json")
    assert detect_format(path.read_bytes()) == "trtllm-bench"
    (run,) = trtllm_bench.parse(path.read_bytes(), path=str(path))
    assert run.reported["completed"] == 100
    assert run.window_s == pytest.approx(7.925785918)
    assert run.reported["output_tokens_per_s"] == pytest.approx(504.68181217407437)
    assert run.reported["ttft_p99_s"] == pytest.approx(0.020285061)
    assert run.reported["tpot_p99_s"] == pytest.approx(0.0019884140256410257)
    assert run.concurrency == 1
    assert run.params["engine_version"] == "1.2.0" and run.params["precision"] == "bfloat16"
    assert run.params["tp"] == "1" and run.params["max_num_seqs"] == "1"
    # p99 TTFT 20.3 ms <= 100, p99 TPOT 1.99 ms <= 10, 100 requests: numpy p99 bounds
    # floor(99 x 0.99) + 1 = 99 of 100 -> 0.99 each, 0.98 together: 504.68 x 0.98
    ev = throughput_from_evidence(path, Slo(ttft_ms=100, tpot_ms=10))
    assert ev.tokens_per_s == pytest.approx(504.68181217407437 * 0.98)


def test_trtllm_bench_fp8_is_another_configuration(tmp_path: Path) -> None:
    folder = SAMPLES / "trtllm_bench"
    need(folder / "trtllm-bench_1.2.0_latency_qwen2.5-0.5b_rtx-pro-6000_fp8_in1024_out40.json")
    ev = throughput_from_evidence(folder, Slo(ttft_ms=100, tpot_ms=10))
    labels = {c["label"] for c in ev.configurations}
    assert len(labels) == 2 and any("precision=FP8" in label for label in labels)
    # FP8 572.5 output tokens/s against 504.7 bf16 (the sample's provenance), on one GPU
    assert "precision=FP8" in (ev.configuration_label or "")


def test_genai_perf_both_config_shapes() -> None:
    for name, count, conc in (
            ("genai-perf_profile_export_genai_perf_gpt-oss-20b_conc1_cli-config_2025-09-16.json",
             66, 1),
            ("genai-perf_profile_export_genai_perf_gpt-oss-20b_conc1_yaml-config_dcgm-telemetry"
             "_2025-09-30.json", 35, 1)):
        path = need(SAMPLES / "genai_perf" / name)
        assert detect_format(path.read_bytes()) == "genai-perf"
        (run,) = genai_perf.parse(path.read_bytes(), path=str(path))
        assert run.reported["completed"] == count and run.concurrency == conc
        assert run.model == "openai/gpt-oss-20b"
    # the first: 66 requests at 0.31455 req/s -> window 209.82 s; p99 TTFT 4,323.0 ms
    assert run is not None
    (first,) = genai_perf.parse((SAMPLES / "genai_perf" / (
        "genai-perf_profile_export_genai_perf_gpt-oss-20b_conc1_cli-config_2025-09-16.json")
    ).read_bytes(), path="x")
    assert first.window_s == pytest.approx(66 / 0.31455262548511714)
    assert first.reported["ttft_p99_s"] == pytest.approx(4.3230459058)
    assert first.reported["tpot_p50_s"] == pytest.approx(0.0070842575)


def test_inferencex_rows_are_a_reference_sweep() -> None:
    folder = SAMPLES / "inferencex"
    path = need(folder / ("agg_kimik2.5_8k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_"
                          "conc32_MI355-gbt350-odcdh5-wbb3.json"))
    assert detect_format(path.read_bytes()) == "inferencex"
    (run,) = inferencex.parse(path.read_bytes(), path=str(path))
    # output_tput_per_gpu 17.5706 x tp 8 = 140.565 tokens/s; p99 TTFT 14.49 s
    assert run.reported["output_tokens_per_s"] == pytest.approx(17.57057269511527 * 8)
    assert run.reported["ttft_p99_s"] == pytest.approx(14.490030684259256)
    assert run.concurrency == 32
    assert run.params["engine_version"] == "v0.21.0" and run.params["spec_decoding"] == "mtp"
    # p90 TTFT 2.87 s <= 3 s proves 0.9 (p99 14.5 s is over), p99.9 TPOT 0.2502 s <= 0.3 s
    # proves 0.999: 1 - 0.1 - 0.001 = 0.899 >= 0.85: 140.565 x 0.899, graded reference
    ev = throughput_from_evidence(path, Slo(ttft_ms=3000, tpot_ms=300, attainment=0.85))
    assert ev.grade == "reference"
    assert ev.tokens_per_s == pytest.approx(17.57057269511527 * 8 * 0.899)


def test_aiperf_csv_export() -> None:
    from sources.bench.clients import aiperf_csv

    folder = SAMPLES / "aiperf"
    path = need(folder / ("aiperf_0.8.0_inferencex_kimik2.7-mxfp4_mi355x_tp4_conc1_profile_"
                          "export_aiperf.csv"))
    assert detect_format(path.read_bytes()) == "aiperf-csv"
    server = folder / ("aiperf_0.8.0_inferencex_kimik2.7-mxfp4_mi355x_tp4_conc1_server_metrics_"
                       "export.csv")
    if server.exists():
        assert detect_format(server.read_bytes()) is None  # the server-metrics export is not
    (run,) = aiperf_csv.parse(path.read_bytes(), path=str(path))
    assert run.reported["completed"] == 195
    assert run.window_s == pytest.approx(3542.82)
    assert run.reported["ttft_p99_s"] == pytest.approx(92.946)
    assert run.reported["tpot_p99_s"] == pytest.approx(0.01568)
    assert run.reported["itl_p50_s"] == pytest.approx(0.01398)
    assert run.started_at_utc is not None and run.started_at_utc.year == 2026
    # TTFT p99 92.9 s <= 200 s and TPOT p99 15.68 ms <= 20 ms, 195 requests: numpy p99
    # bounds floor(194 x 0.99) + 1 = 193 of 195 each, so 1 - 2 x 2/195 = 0.97949 >= 0.9:
    # goodput 58.68 x 0.97949 = 57.48 tokens/s
    ev = throughput_from_evidence(path, Slo(ttft_ms=200_000, tpot_ms=20, attainment=0.9))
    assert ev.tokens_per_s == pytest.approx(58.68 * (1 - 2 * 2 / 195))


def test_guidellm_csv_generated_sample() -> None:
    from sources.bench.clients import guidellm_csv

    path = need(SAMPLES / "guidellm" /
                "guidellm_0.8.1_GENERATED_mock-server_concurrent-1-4_benchmarks.csv")
    assert detect_format(path.read_bytes()) == "guidellm-csv"
    low, high = guidellm_csv.parse(path.read_bytes(), path=str(path))
    assert (low.concurrency, high.concurrency) == (1, 4)
    assert low.reported["completed"] == 40 and low.window_s == pytest.approx(23.747691869735718)
    assert low.reported["ttft_p99_s"] == pytest.approx(0.42464613914489746)
    assert low.reported["tpot_p99_s"] == pytest.approx(0.009493551557026212)
    # 40 requests: the numpy p99 bounds floor(39 x 0.99) + 1 = 39 of 40 = 0.975 per limit;
    # TTFT p99 424.6 <= 500 ms and TPOT p99 9.49 <= 20 ms: 0.95 together, passing 0.9 at both
    # levels; the knee is concurrency 4 (never saturated) at 303.0 x 0.95 tokens/s
    ev = throughput_from_evidence(path, Slo(ttft_ms=500, tpot_ms=20, attainment=0.9))
    assert ev.concurrency == 4
    assert ev.tokens_per_s == pytest.approx(high.reported["output_tokens_per_s"] * 0.95)
