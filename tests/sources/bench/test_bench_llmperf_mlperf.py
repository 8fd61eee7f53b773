"""LLMPerf (individual + summary) and MLPerf (summary, detail) on the real samples."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.evidence.bench import load_runs
from pipeline.evidence.goodput import Slo, run_metrics
from sources.bench.aggregates import mlperf
from sources.bench.clients import llmperf
from sources.errors import ParseError

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / ".." / "shared" / "samples"
LLMPERF = SAMPLES / "llmperf"
MLPERF = SAMPLES / "mlperf"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path.name} absent")
    return path


def test_llmperf_individual_alone_has_no_window() -> None:
    path = need(LLMPERF / "leaderboard_groq_70b_individual_responses.json")
    (run,) = llmperf.parse(path.read_bytes(), path=str(path))
    assert run.requests is not None and run.requests.height == 150
    m = run_metrics(run, Slo(ttft_ms=300))
    assert m["token_goodput_per_s"] is None and "window" in m["goodput_null_reason"]
    assert m["completed"] == 150


def test_llmperf_pair_agrees_with_its_summary() -> None:
    need(LLMPERF / "leaderboard_groq_70b_summary.json")
    (run,) = load_runs([LLMPERF]).runs
    summary = json.loads((LLMPERF / "leaderboard_groq_70b_summary.json").read_bytes())
    m = run_metrics(run, Slo(ttft_ms=300))
    # counts exactly: 150 started, 150 completed, 0 errors
    assert (m["offered"], m["completed"], m["failed"]) == (150, 150, 0)
    # window = 150 / (176.739 / 60) = 50.92 s; 150 x 150 tokens / 50.92 s = 441.85 tokens/s,
    # LLMPerf's results_mean_output_throughput_token_per_s
    assert m["window_s"] == pytest.approx(150 / (176.73895115400083 / 60))
    assert m["output_tokens_per_s"] == pytest.approx(
        summary["results_mean_output_throughput_token_per_s"], rel=1e-9)
    # percentiles: LLMPerf uses linear interpolation too
    for q in ("p50", "p90", "p95", "p99"):
        assert m[f"ttft_{q}_s"] == pytest.approx(summary[f"results_ttft_s_quantiles_{q}"])
    # the window ends at the summary's timestamp 1704851704 = 2024-01-10 01:55:04 UTC
    assert run.ended_at_utc == datetime(2024, 1, 10, 1, 55, 4, tzinfo=UTC)
    assert run.concurrency == 5
    # goodput never above throughput; TTFT <= 300 ms leaves 139 of 150 requests (counted
    # from the file: 11 requests have ttft_s > 0.3)
    responses = json.loads(
        (LLMPERF / "leaderboard_groq_70b_individual_responses.json").read_bytes())
    passing = [r for r in responses if r["ttft_s"] <= 0.3]
    assert m["passed"] == len(passing) == 139
    assert m["token_goodput_per_s"] == pytest.approx(
        sum(r["number_output_tokens"] for r in passing) / m["window_s"])


def test_mlperf_summary() -> None:
    path = need(MLPERF / "v4.1_AMD_8xMI300X_llama2-70b-99_Server_run_1_mlperf_log_summary.txt")
    (run,) = mlperf.parse(path.read_bytes(), path=str(path))
    r = run.reported
    assert run.aggregate_only and run.request_rate_per_s == 73.5  # Server target_qps
    assert r["output_tokens_per_s"] == 21028.23 and r["request_throughput_per_s"] == 71.74
    # 99.00 percentile first token latency 1604171041 ns = 1.604 s; TPOT p99 197.87 ms
    assert r["ttft_p99_s"] == pytest.approx(1.604171041)
    assert r["tpot_p99_s"] == pytest.approx(0.197873909)
    assert r["ttft_p50_s"] == pytest.approx(0.990199455)
    assert any("2000 ms" in n for n in run.notes)


def test_mlperf_detail_excerpt() -> None:
    path = need(MLPERF /
                "v4.1_AMD_8xMI300X-TURIN_llama2-70b-99_Server_run_1_mlperf_log_detail_EXCERPT.txt")
    (run,) = mlperf.parse(path.read_bytes(), path=str(path))
    # power_begin 07-26-2024 17:09:33.653 .. power_end 17:21:08.611 UTC = 694.958 s
    assert run.started_at_utc == datetime(2024, 7, 26, 17, 9, 33, 653000, tzinfo=UTC)
    assert run.duration_s == pytest.approx(694.958)
    assert run.reported["offered"] == 49152
    assert run.reported["output_tokens_per_s"] == 22020.9  # not the bogus 6.8e-09
    assert run.reported["ttft_p99_s"] == pytest.approx(1.660370476)


def test_mlperf_bad_lines() -> None:
    with pytest.raises(ParseError, match="line 2"):
        mlperf.parse(b':::MLLOG {"key": "a", "value": 1}\nhello\n', path="d.txt")
    with pytest.raises(ParseError, match="power_begin"):
        mlperf.parse(b':::MLLOG {"key": "power_begin", "value": "yesterday"}\n'
                     b':::MLLOG {"key": "power_end", "value": "today"}\n', path="d.txt")


def _power_log(begin: str, end: str) -> bytes:
    return (f':::MLLOG {{"key": "power_begin", "value": "{begin}"}}\n'
            f':::MLLOG {{"key": "power_end", "value": "{end}"}}\n').encode()


def test_mlperf_power_window_in_a_stated_zone() -> None:
    (run,) = mlperf.parse(_power_log("10-25-2026 01:00:00.000", "10-25-2026 01:10:00.500"),
                          path="d.txt", tz="Europe/Paris")
    # 01:00 CEST (UTC+2, the clocks go back at 03:00) = 23:00 UTC the day before; 600.5 s
    assert run.started_at_utc == datetime(2026, 10, 24, 23, 0, tzinfo=UTC)
    assert run.duration_s == pytest.approx(600.5)


def test_mlperf_power_window_in_a_dst_change_is_refused() -> None:
    # 02:30 on 2026-10-25 happens twice in Paris (00:30 and 01:30 UTC): no guess
    with pytest.raises(ParseError, match="ambiguous") as err:
        mlperf.parse(_power_log("10-25-2026 02:30:00.000", "10-25-2026 03:30:00.000"),
                     path="d.txt", tz="Europe/Paris")
    assert err.value.where == "key 'power_begin'"
