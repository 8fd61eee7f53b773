"""AIPerf: the real 0.8.0 summary sample and our records + summary fixture."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.evidence.bench import load_runs, throughput_from_evidence
from pipeline.evidence.goodput import Slo, run_metrics
from sources.bench.clients import aiperf
from sources.errors import ParseError

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / ".." / "shared" / "samples" / "aiperf" / "v0.8.0_mock_profile_export_aiperf.json"
RUN_DIR = ROOT / "tests" / "fixtures" / "bench" / "aiperf_run"


def test_summary_sample() -> None:
    if not SAMPLE.exists():
        pytest.skip("sample absent")
    (run,) = aiperf.parse(SAMPLE.read_bytes(), path="s.json")
    r = run.reported
    assert run.aggregate_only and run.concurrency == 4
    assert (r["completed"], r["failed"], r["offered"]) == (64, 0, 64)  # error_summary empty
    assert r["total_output_tokens"] == 35277
    # AIPerf's throughput is total tokens / duration: 35277 / 0.034502655 s = 1,022,443 tok/s
    assert r["output_tokens_per_s"] == pytest.approx(35277 / 0.034502655, rel=1e-6)
    assert r["duration_s"] == pytest.approx(0.034502655)
    # request_latency p99 15.14387014 ms -> s
    assert r["e2e_p99_s"] == pytest.approx(0.01514387014)
    assert "ttft_p50_s" not in r  # non-streaming mock run: no TTFT block
    assert run.model == "mock-model"


def test_records_fixture() -> None:
    (run,) = aiperf.parse((RUN_DIR / "profile_export.jsonl").read_bytes(), path="r.jsonl")
    df = run.requests
    assert df is not None and df.height == 5  # the warm-up record is dropped
    # first request at 1759813207000000000 ns = 2025-10-07 05:00:07 UTC
    assert run.started_at_utc == datetime(2025, 10, 7, 5, 0, 7, tzinfo=UTC)
    assert run.window_end_s == pytest.approx(2.0)  # the cancelled request ends at +2 s
    assert df["incomplete"].to_list() == [False, False, False, False, True]
    # request 2: ICL [250, 250] ms -> max gap 0.25 s; TPOT from inter_token_latency 250 ms
    assert df["max_itl_s"][1] == pytest.approx(0.25) and df["tpot_s"][1] == pytest.approx(0.25)
    m = run_metrics(run, Slo(ttft_ms=300, tpot_ms=200, max_itl_ms=200))
    # req-1 passes (TTFT 200 ms, gaps 100 ms, 4 tokens); req-2 fails TTFT 400 ms;
    # req-3 passes (one token); req-4 errored (500); req-5 cancelled (499) -> incomplete
    assert (m["offered"], m["completed"], m["failed"], m["incomplete"], m["passed"]) == (
        5, 3, 1, 1, 2)
    # 5 tokens / 2 s = 2.5 tokens/s; raw (4 + 3 + 1) / 2 s = 4.0 tokens/s
    assert m["token_goodput_per_s"] == pytest.approx(2.5)
    assert m["output_tokens_per_s"] == pytest.approx(4.0)


def test_records_and_summary_combine_and_agree() -> None:
    loaded = load_runs([RUN_DIR])
    (run,) = loaded.runs
    assert run.concurrency == 2 and not run.aggregate_only
    m = run_metrics(run, Slo(ttft_ms=300))
    r = run.reported
    # counts: AIPerf counts the cancelled request as an error (2), we count it incomplete
    # (cancelled at the benchmark's end is not a failure of the server): 1 failed + 1 incomplete
    assert m["completed"] == r["completed"] == 3
    assert m["failed"] + m["incomplete"] == r["failed"] == 2
    # TTFT 200, 400, 250 ms: p50 250 ms, p99 250 + 0.98 * 150 = 397 ms, as the summary says
    assert m["ttft_p50_s"] == pytest.approx(r["ttft_p50_s"])
    assert m["ttft_p99_s"] == pytest.approx(r["ttft_p99_s"])
    assert m["output_tokens_per_s"] == pytest.approx(r["output_tokens_per_s"])
    assert m["tpot_p50_s"] == pytest.approx(r["tpot_p50_s"])  # (100 + 250) / 2 = 175 ms


def test_old_tag_names() -> None:
    line = {"metadata": {"timestamp_ns": 1_000_000_000_000, "credit_phase": "profiling",
                         "worker_id": "w"},
            "metrics": {"ttft": {"value": 120.0, "unit": "ms"},
                        "request_latency": {"value": 0.5, "unit": "sec"},
                        "output_token_count": {"value": 5, "unit": "tokens"}},
            "error": None}
    (run,) = aiperf.parse(json.dumps(line).encode() + b"\n", path="old.jsonl")
    df = run.requests
    assert df is not None
    # ttft 120 ms; TPOT (0.5 - 0.12) / 4 = 0.095 s; done = start + latency
    assert df["ttft_s"][0] == pytest.approx(0.12)
    assert df["tpot_s"][0] == pytest.approx(0.095)
    assert df["done_s"][0] == pytest.approx(0.5)
    old_summary = {"records": {"ttft": {"unit": "ms", "avg": 10.0, "p50": 9.0, "p99": 20.0},
                               "benchmark_duration": {"unit": "sec", "avg": 3.0},
                               "request_count": {"unit": "requests", "avg": 7.0}},
                   "input_config": {"loadgen": {"concurrency": 8}}}
    (summary,) = aiperf.parse(json.dumps(old_summary).encode(), path="old.json")
    assert summary.reported["ttft_p99_s"] == pytest.approx(0.020)
    assert summary.concurrency == 8 and summary.reported["completed"] == 7


@pytest.mark.parametrize(("data", "where"), [
    (b'{"metadata": {"request_start_ns": 1}, "metrics": {"time_to_first_token": '
     b'{"value": 1, "unit": "fortnights"}}}\n', "time_to_first_token"),
    (b'{"metadata": {"benchmark_phase": "profiling"}, "metrics": {}}\n', "request_start_ns"),
    (b'{"metadata": {"request_start_ns": 1}, "metrics": {}}\n{"metadata": 1', "line 2"),
    (b'{"schema_version": "1.0", "request_count": {"avg": 1}}', "benchmark_duration"),
])
def test_bad_files(data: bytes, where: str) -> None:
    with pytest.raises(ParseError) as err:
        aiperf.parse(data, path="bad")
    assert where in err.value.where


def _record(rid: str, start_s: int, ttft_ms: float, latency_ms: float, visible: int,
            reasoning: int | None) -> dict[str, object]:
    """One AIPerf 0.8 record; `output_sequence_length` = visible + reasoning, as AIPerf
    writes it, and no reasoning tags at all when `reasoning` is None."""
    metrics: dict[str, object] = {
        "time_to_first_token": {"value": ttft_ms, "unit": "ms"},
        "request_latency": {"value": latency_ms, "unit": "ms"},
        "output_token_count": {"value": visible, "unit": "tokens"},
        "output_sequence_length": {"value": visible + (reasoning or 0), "unit": "tokens"}}
    if reasoning is not None:
        metrics["reasoning_token_count"] = {"value": reasoning, "unit": "tokens"}
    start = 1_759_813_200_000_000_000 + start_s * 1_000_000_000
    return {"metadata": {"x_request_id": rid, "request_start_ns": start,
                         "request_end_ns": start + int(latency_ms * 1e6),
                         "benchmark_phase": "profiling"}, "metrics": metrics, "error": None}


def test_reasoning_tokens_are_counted_on_the_generated_basis(tmp_path: Path) -> None:
    # Two requests, 1 s each, sent at 0 and 1 s: window 2 s. Request a: 60 visible + 40
    # reasoning tokens; b: 100 visible, no reasoning. Generated basis: 100 + 100 = 200 tokens
    # / 2 s = 100 tokens/s, AIPerf's own output_token_throughput (total_osl 200 / 2 s). The
    # visible count alone (60 + 100 = 160, 80 tokens/s) was the other basis, 20 % under it.
    lines = [_record("a", 0, 100.0, 1000.0, 60, 40), _record("b", 1, 100.0, 1000.0, 100, None)]
    (tmp_path / "profile_export.jsonl").write_text(
        "\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    summary = {"aiperf_version": "0.8.0", "benchmark_duration": {"unit": "sec", "avg": 2.0},
               "request_count": {"unit": "requests", "avg": 2.0},
               "total_output_tokens": {"unit": "tokens", "avg": 160.0},
               "total_reasoning_tokens": {"unit": "tokens", "avg": 40.0},
               "total_osl": {"unit": "tokens", "avg": 200.0},
               "output_token_throughput": {"unit": "tokens/sec", "avg": 100.0},
               "input_config": {"loadgen": {"concurrency": 1}}}
    (tmp_path / "profile_export_aiperf.json").write_text(json.dumps(summary), encoding="utf-8")
    (run,) = load_runs([tmp_path], cached=False).runs
    assert run.requests is not None
    assert run.requests["output_tokens"].to_list() == [100, 100]
    assert run.reported["total_output_tokens"] == 200  # total_osl, not the visible 160
    assert any(n.startswith("reasoning tokens: output tokens include 40 reasoning token(s) of 1 "
                            "request(s)") for n in run.notes)
    m = run_metrics(run, Slo(ttft_ms=300))
    assert m["output_tokens_per_s"] == pytest.approx(100.0)
    assert not any(n.startswith("token basis: the output throughput") for n in m["notes"])
    # without total_osl, the summary's total is visible + reasoning: 160 + 40 = 200
    del summary["total_osl"]
    (alone,) = aiperf.parse(json.dumps(summary).encode(), path="s.json")
    assert alone.reported["total_output_tokens"] == 200


def test_a_throughput_off_the_files_own_by_over_one_percent_gets_a_note() -> None:
    # the fixture's requests give 8 tokens / 2 s = 4.0 tokens/s, as its summary says (no
    # note); a summary saying 5.0 tokens/s is 20 % over: 4.0 / 5.0 - 1 = -20.0 %, and
    # 4.04 is 1 % off (4.0 / 4.04 - 1 = -0.99 %), within the tolerance
    (run,) = load_runs([RUN_DIR], cached=False).runs

    def notes(reported_tps: float) -> list[str]:
        other = replace(run, reported={**run.reported, "output_tokens_per_s": reported_tps})
        return [n for n in run_metrics(other, Slo(ttft_ms=300))["notes"]
                if n.startswith("token basis: the output throughput")]

    assert notes(4.0) == [] and notes(4.04) == []
    (note,) = notes(5.0)
    assert note.startswith("token basis: the output throughput from the requests, 4.0 tokens/s, "
                           "differs from the file's own 5.0 tokens/s by -20.0%, over the 1% "
                           "tolerance (8 output tokens counted, 8 in the file's summary)")


def test_a_single_run_under_the_attainment_is_not_an_operating_point() -> None:
    # the fixture's 5 offered requests under TTFT <= 300 ms: req-1 (200 ms) and req-3 (250 ms)
    # pass, req-2 (400 ms) fails, req-4 errored, req-5 cancelled: 2 of 5 = 40.0 % < 95 %.
    # Before the rule, the run was taken as the operating point at 5 tokens / 2 s = 2.5/s.
    ev = throughput_from_evidence(RUN_DIR, Slo(ttft_ms=300))
    assert ev.tokens_per_s is None
    assert ev.output_tokens_per_s == pytest.approx(4.0)
    assert ev.no_goodput_reason == (
        "2 of 5 offered requests (40.0%) meet the SLO at concurrency 2, under the 95% "
        "slo.attainment asks: not an operating point, the candidate is not sized on it; a "
        "lower load level (concurrency or request rate) would help, or a sweep whose knee is "
        "found")
    assert ev.no_goodput_reason in ev.notes
    # asked 40 %, the same run is the operating point at 2.5 tokens/s
    assert throughput_from_evidence(RUN_DIR, Slo(ttft_ms=300, attainment=0.4)
                                    ).tokens_per_s == pytest.approx(2.5)


def test_the_real_summary_only_sample_is_refused_by_its_percentile_bound() -> None:
    # conc16 (659 requests): the lowest TTFT percentile reported, p1 = 10,374.49 ms, is over a
    # 1,500 ms limit, so nothing is proven under it: goodput null, as the SLO rule asks
    path = ROOT / ".." / "shared" / "samples" / "aiperf" / (
        "aiperf_0.8.0_inferencex_kimik2.7-mxfp4_mi355x_tp4_conc16_lmcache_profile_export_"
        "aiperf.csv")
    if not path.exists():
        pytest.skip("sample absent")
    ev = throughput_from_evidence(path, Slo(ttft_ms=1500))
    assert ev.tokens_per_s is None
    assert ev.output_tokens_per_s == pytest.approx(158.54)
    assert any("TTFT: the lowest percentile reported, p1 = 1.037e+04 ms, is over 1500 ms" in n
               for n in ev.notes)


def test_the_summarys_gpu_telemetry_names_the_accelerator() -> None:
    """The real summary with schema 1.5's `telemetry_data` added as FORMATS.md section 3.3
    describes it (per endpoint, per GPU, each with `gpu_index`, `gpu_name`, `gpu_uuid`): the
    one GPU name is the run's `accelerator` setting; two names are noted, none taken."""
    if not SAMPLE.exists():
        pytest.skip("sample absent")
    doc = json.loads(SAMPLE.read_text())

    def gpu(i: int, name: str) -> dict[str, object]:
        return {"gpu_index": i, "gpu_name": name, "gpu_uuid": f"GPU-{i}",
                "metrics": {"gpu_power_usage": {"unit": "W", "avg": 400.0}}}

    same = {"endpoints": {"http://localhost:9401/metrics": {
        "gpus": {f"GPU-{i}": gpu(i, "NVIDIA H100 80GB HBM3") for i in range(2)}}}}
    (run,) = aiperf.parse(json.dumps({**doc, "telemetry_data": same}).encode(), path="s.json")
    assert run.params == {"accelerator": "NVIDIA H100 80GB HBM3"}
    mixed = {"endpoints": {"u": {"gpus": {"a": gpu(0, "NVIDIA H100 80GB HBM3"),
                                          "b": gpu(1, "NVIDIA L40S")}}}}
    (run,) = aiperf.parse(json.dumps({**doc, "telemetry_data": mixed}).encode(), path="s.json")
    assert run.params == {}
    assert any("GPU telemetry names 2 GPU models" in n for n in run.notes)
