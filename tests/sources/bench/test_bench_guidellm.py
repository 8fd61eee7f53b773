"""GuideLLM reports: the real v0.8 sample (stripped requests) and our v0.7 / v0.3 fixtures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.evidence.goodput import Slo, run_metrics
from sources.bench.clients import guidellm
from sources.errors import ParseError

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / ".." / "shared" / "samples" / "guidellm" / \
    "guidellm_v0.8.0.dev18_report_v2_llm-d-fixture.json"
FIXTURES = ROOT / "tests" / "fixtures" / "bench"


def test_v08_sample() -> None:
    if not SAMPLE.exists():
        pytest.skip("sample absent")
    data = SAMPLE.read_bytes()
    runs = guidellm.parse(data, path="g.json")
    doc = json.loads(data)
    assert [r.request_rate_per_s for r in runs] == [2.0, 4.0]  # constant strategy, rates 2, 4
    assert all(r.concurrency is None for r in runs)  # max_concurrency 10240 is a cap, not a level
    for run, bench in zip(runs, doc["benchmarks"], strict=True):
        assert run.aggregate_only  # llm-d stripped the request lists
        totals = bench["metrics"]["request_totals"]
        assert (run.reported["completed"], run.reported["failed"], run.reported["incomplete"],
                run.reported["offered"]) == (totals["successful"], totals["errored"],
                                             totals["incomplete"], totals["total"])
        assert run.window_s == pytest.approx(bench["duration"])
        assert run.started_at_utc == datetime.fromtimestamp(bench["start_time"], UTC)
    # TTFT p99 11.686 ms -> s; 16 output tokens / 5.0196 s = 3.187 tokens/s
    assert runs[0].reported["ttft_p99_s"] == pytest.approx(0.011686325073242188)
    assert runs[0].reported["output_tokens_per_s"] == pytest.approx(16 / 5.01964807510376)
    # GuideLLM's own request rate mean 0.3984 req/s = 2 completed / 5.0196 s
    rps = doc["benchmarks"][0]["metrics"]["requests_per_second"]["successful"]["mean"]
    assert runs[0].reported["request_throughput_per_s"] == pytest.approx(rps, rel=1e-3)


def test_v07_fixture_per_request() -> None:
    (run,) = guidellm.parse((FIXTURES / "guidellm_v07_small.json").read_bytes(), path="g")
    assert run.concurrency == 2 and not run.aggregate_only
    m = run_metrics(run, Slo(ttft_ms=300, tpot_ms=120))
    # a: TTFT 0.2, TPOT (0.5-0.2)/3 = 0.1 -> passes, 4 tokens; b: TTFT 0.5 -> fails;
    # c: TTFT 0.2, one token -> passes; d errored; e cancelled (incomplete)
    assert (m["offered"], m["completed"], m["failed"], m["incomplete"], m["passed"]) == (
        5, 3, 1, 1, 2)
    # (4 + 1) tokens / 2 s = 2.5 tokens/s; raw (4 + 3 + 1) / 2 s = 4.0 tokens/s
    assert m["token_goodput_per_s"] == pytest.approx(2.5)
    assert m["output_tokens_per_s"] == pytest.approx(4.0)
    assert run.itl_definition == "request_mean"


def test_v07_fixture_gap_limit_cannot_be_judged() -> None:
    (run,) = guidellm.parse((FIXTURES / "guidellm_v07_small.json").read_bytes(), path="g")
    m = run_metrics(run, Slo(ttft_ms=300, max_itl_ms=50))
    assert m["token_goodput_per_s"] is None and "no gap data" in m["goodput_null_reason"]


def test_v03_fixture() -> None:
    (run,) = guidellm.parse((FIXTURES / "guidellm_v03_small.json").read_bytes(), path="g")
    assert run.concurrency == 1  # synchronous
    m = run_metrics(run, Slo(ttft_ms=300))
    # 1: TTFT 0.1 passes (4 tokens); 2: TTFT 0.2 passes (4 tokens); 3 errored;
    # 8 tokens / (104 - 100) s = 2.0 tokens/s
    assert (m["passed"], m["failed"]) == (2, 1)
    assert m["token_goodput_per_s"] == pytest.approx(2.0)
    # <=0.3 has no p50 in 'percentiles': the median is used -> 150 ms
    assert run.reported["ttft_p50_s"] == pytest.approx(0.150)


def test_sampled_lists_are_aggregate_only() -> None:
    doc = json.loads((FIXTURES / "guidellm_v07_small.json").read_bytes())
    doc["benchmarks"][0]["metrics"]["request_totals"]["successful"] = 30
    (run,) = guidellm.parse(json.dumps(doc).encode(), path="g")
    assert run.aggregate_only and any("sample" in n for n in run.notes)


@pytest.mark.parametrize(("doc", "where"), [
    ({"benchmarks": 3}, "'benchmarks'"),
    ({"benchmarks": []}, "'benchmarks'"),
    ({"benchmarks": [{"config": {}}]}, "benchmarks[0].start_time"),
    ({"benchmarks": [{"start_time": 5.0, "end_time": 1.0}]}, "benchmarks[0].end_time"),
])
def test_bad_reports(doc: dict, where: str) -> None:
    with pytest.raises(ParseError) as err:
        guidellm.parse(json.dumps(doc).encode(), path="bad.json")
    assert where in err.value.where


def test_incomplete_request_never_started_is_not_offered() -> None:
    doc = json.loads((FIXTURES / "guidellm_v07_small.json").read_bytes())
    bench = doc["benchmarks"][0]
    never = json.loads(json.dumps(bench["requests"]["incomplete"][0]))
    never["request_id"] = "f"
    never["info"]["timings"] = {"request_start": None, "first_token_iteration": None,
                                "last_token_iteration": None, "request_end": None}
    bench["requests"]["incomplete"].append(never)
    bench["metrics"]["request_totals"].update(incomplete=2, total=6)
    (run,) = guidellm.parse(json.dumps(doc).encode(), path="g")
    m = run_metrics(run, Slo(ttft_ms=300))
    # the queued-but-never-sent request is not offered: still 5 offered, 1 incomplete
    assert (m["offered"], m["incomplete"]) == (5, 1)
    # a successful request without a start time is an error in the file
    bench["requests"]["successful"][0]["info"]["timings"]["request_start"] = None
    with pytest.raises(ParseError, match="no start time"):
        guidellm.parse(json.dumps(doc).encode(), path="g")
