"""Goodput, percentiles and the knee (DESIGN section 7), on worked examples computed by hand,
on our fixtures against the aggregates written in them, and as properties."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.evidence.goodput import Slo, knee, run_metrics, sweep_metrics
from sources.bench.clients import trace, vllm
from sources.bench.run import BenchRun, conform

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "bench"
SAMPLES = ROOT / ".." / "shared" / "samples"


def trace_run() -> BenchRun:
    (run,) = trace.parse((FIXTURES / "trace_worked_example.jsonl").read_bytes(), path="t")
    return run


def test_issue_worked_example() -> None:
    # Window [0, 2) s, SLO TTFT <= 300 ms and largest gap <= 100 ms:
    # r1 passes with 4 tokens; r2 fails on TTFT 400 ms; r3 fails on a 200 ms gap; r4 passes
    # with 1 token; r5 failed; r6 ends at 2.10, after the window: not passing.
    m = run_metrics(trace_run(), Slo(ttft_ms=300, max_itl_ms=100), window=(0.0, 2.0))
    assert m["offered"] == 6
    assert m["passed"] == 2
    # (r1, r2, r3, r4) completed; r5 failed; r6 incomplete within the window
    assert (m["completed"], m["failed"], m["incomplete"]) == (4, 1, 1)
    # 2 passing requests / 2 s = 1.0 req/s; (4 + 1) tokens / 2 s = 2.5 tokens/s
    assert m["request_goodput_per_s"] == pytest.approx(1.0)
    assert m["token_goodput_per_s"] == pytest.approx(2.5)
    # raw: tokens of completed requests (4 + 2 + 3 + 1 = 10) / 2 s = 5.0 tokens/s
    assert m["output_tokens_per_s"] == pytest.approx(5.0)
    assert m["attainment"] == pytest.approx(2 / 6)
    # TTFTs of completed requests 0.2, 0.4, 0.1, 0.05 -> sorted 0.05 0.1 0.2 0.4;
    # p50 at rank 1.5 = 0.15 s, count 4
    assert m["ttft_p50_s"] == pytest.approx(0.15)
    assert m["ttft_count"] == 4


def test_worked_example_without_gap_limit() -> None:
    # Dropping the gap limit lets r3 pass (TTFT 100 ms): 3 requests, 4 + 3 + 1 = 8 tokens / 2 s
    m = run_metrics(trace_run(), Slo(ttft_ms=300), window=(0.0, 2.0))
    assert m["passed"] == 3
    assert m["token_goodput_per_s"] == pytest.approx(4.0)


def test_worked_example_tpot_limit() -> None:
    # TPOT limit 100 ms: r3's TPOT is (1.35 - 1.10) / 2 = 125 ms -> fails; r1's is 50 ms
    m = run_metrics(trace_run(), Slo(ttft_ms=300, tpot_ms=100), window=(0.0, 2.0))
    assert m["passed"] == 2 and m["token_goodput_per_s"] == pytest.approx(2.5)


def test_ttft_exactly_at_limit_passes() -> None:
    # r1's TTFT is 0.20 - 0.00 = 200 ms: a 200 ms limit passes it (tolerance 1 µs), 199 ms not
    at = run_metrics(trace_run(), Slo(ttft_ms=200), window=(0.0, 0.5))
    below = run_metrics(trace_run(), Slo(ttft_ms=199), window=(0.0, 0.5))
    assert (at["passed"], below["passed"]) == (1, 0)


def test_vllm_detailed_fixture_matches_its_aggregates() -> None:
    (run,) = vllm.parse((FIXTURES / "vllm_detailed_small.json").read_bytes(), path="d")
    m = run_metrics(run, Slo(ttft_ms=300, tpot_ms=50, max_itl_ms=100))
    r = run.reported
    # counts exactly as the tool wrote them
    assert (m["completed"], m["failed"], m["offered"]) == (r["completed"], r["failed"], 5)
    # throughput: 4 completed / 2 s = 2.0 req/s; 13 tokens / 2 s = 6.5 tokens/s
    assert m["request_throughput_per_s"] == pytest.approx(r["request_throughput_per_s"])
    assert m["output_tokens_per_s"] == pytest.approx(r["output_tokens_per_s"])
    # percentiles: TTFT 0.1 0.2 0.25 0.5 -> p50 0.225, p99 0.25 + 0.97 * 0.25 = 0.4925;
    # TPOT 0.02 0.03 0.0425 -> p50 0.03, p99 0.03 + 0.98 * 0.0125 = 0.04225;
    # ITL gaps (8) 0.01 0.01 0.02 0.02 0.02 0.03 0.03 0.15 -> p50 0.02,
    # p99 at rank 6.93 = 0.03 + 0.93 * 0.12 = 0.1416
    for key in ("ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "itl_p50_s",
                "itl_p99_s", "ttft_mean_s", "tpot_mean_s", "itl_mean_s"):
        assert m[key] == pytest.approx(r[key]), key
    assert (m["ttft_count"], m["tpot_count"], m["itl_count"]) == (4, 3, 8)
    # SLO TTFT 300 / TPOT 50 / gap 100 ms: request 0 passes (4 tokens), 1 fails TTFT 500 ms,
    # 2 fails on a 150 ms chunk gap, 3 failed, 4 passes (1 token): 2 / 2 s = 1.0 req/s,
    # 5 tokens / 2 s = 2.5 tokens/s
    assert m["passed"] == 2
    assert m["request_goodput_per_s"] == pytest.approx(1.0)
    assert m["token_goodput_per_s"] == pytest.approx(2.5)


def test_window_on_vllm_start_times() -> None:
    (run,) = vllm.parse((FIXTURES / "vllm_detailed_small.json").read_bytes(), path="d")
    # window [10.0, 10.4): requests sent at 10.0, 10.0, 10.2, 10.3 are offered (10.5 is not);
    # request 1 ends at 10.56 and request 2 at 10.57, after 10.4: incomplete in the window
    m = run_metrics(run, Slo(ttft_ms=300), window=(10.0, 10.4))
    assert (m["offered"], m["completed"], m["failed"], m["incomplete"]) == (4, 1, 1, 2)
    # request 0 passes: 1 / 0.4 s = 2.5 req/s; 4 tokens / 0.4 s = 10 tokens/s
    assert m["request_goodput_per_s"] == pytest.approx(2.5)
    assert m["token_goodput_per_s"] == pytest.approx(10.0)


def test_aggregate_only_uses_tool_figures() -> None:
    path = SAMPLES / "vllm" / "er0080_bench_serve_v0.25.1.json"
    if not path.exists():
        pytest.skip("sample absent")
    (run,) = vllm.parse(path.read_bytes(), path=str(path))
    m = run_metrics(run, Slo(ttft_ms=300))
    assert m["aggregate_only"] and m["passed"] is None
    assert m["token_goodput_per_s"] is None and "aggregate-only" in m["goodput_null_reason"]
    # the tool's own figures: 82.893 tokens/s, p99 TTFT 734.4 ms, 8 completed
    assert m["output_tokens_per_s"] == pytest.approx(82.89297074037474)
    assert m["ttft_p99_s"] == pytest.approx(0.7344049174101428)
    assert m["completed"] == 8


def test_aggregate_only_reports_vllm_goodput_when_present() -> None:
    data = (b'{"backend": "vllm", "duration": 10.0, "completed": 90, "failed": 10, '
            b'"request_throughput": 9.0, "request_goodput": 7.5, "output_throughput": 900.0}')
    (run,) = vllm.parse(data, path="g")
    m = run_metrics(run, Slo(ttft_ms=300))
    assert m["request_goodput_per_s"] == 7.5 and m["token_goodput_per_s"] is None
    assert "tool's own" in m["goodput_null_reason"]
    assert m["offered"] == 100  # 90 completed + 10 failed


def test_max_itl_without_gap_data_gives_null_goodput() -> None:
    data = (b'{"sent_s": 0.0, "first_token_s": 0.1, "last_token_s": 0.5, "output_tokens": 5, '
            b'"done_s": 0.5, "ok": true}\n')
    (run,) = trace.parse(data, path="t")
    m = run_metrics(run, Slo(ttft_ms=300, max_itl_ms=100))
    assert m["token_goodput_per_s"] is None and "no gap data" in m["goodput_null_reason"]
    # without the gap limit: 5 tokens over the default window 0..0.5 s = 10 tokens/s
    m2 = run_metrics(run, Slo(ttft_ms=300))
    assert m2["token_goodput_per_s"] == pytest.approx(10.0)


def test_knee_issue_example() -> None:
    # attainment 1.00, 1.00, 0.97, 0.80 and goodput 100, 190, 350, 300 at concurrency 1..8,
    # target 0.95: concurrency 4 (0.97 >= 0.95) at 350 tokens/s; 8 fails -> saturated
    levels = pl.DataFrame({"load": [1.0, 2.0, 4.0, 8.0],
                           "attainment": [1.0, 1.0, 0.97, 0.80],
                           "token_goodput_per_s": [100.0, 190.0, 350.0, 300.0]})
    k = knee(levels, Slo(ttft_ms=1000, attainment=0.95))
    assert k["knee_load"] == 4.0 and k["knee_tokens_per_s"] == 350.0
    assert k["saturated"] is True


def test_knee_percentile_limit_and_never_saturated() -> None:
    levels = pl.DataFrame({"load": [1.0, 2.0, 4.0], "attainment": [1.0, 1.0, 1.0],
                           "token_goodput_per_s": [100.0, 190.0, 350.0],
                           "ttft_p99_s": [0.2, 0.4, 0.9]})
    # p99 TTFT limit 500 ms excludes concurrency 4 (900 ms): knee 2 at 190 tokens/s
    k = knee(levels, Slo(ttft_ms=1000, ttft_p99_ms=500))
    assert (k["knee_load"], k["knee_tokens_per_s"], k["saturated"]) == (2.0, 190.0, True)
    # without it every level passes: knee 4, the sweep never saturated, and says so
    k2 = knee(levels, Slo(ttft_ms=1000))
    assert (k2["knee_load"], k2["saturated"]) == (4.0, False)
    assert any("never saturated" in n for n in k2["notes"])


def test_knee_none_when_no_level_passes() -> None:
    levels = pl.DataFrame({"load": [1.0, 2.0], "attainment": [0.5, 0.4],
                           "token_goodput_per_s": [10.0, 12.0]})
    k = knee(levels, Slo(ttft_ms=100))
    assert k["knee_load"] is None and k["saturated"] is True


def sweep_runs() -> list[BenchRun]:
    runs: list[BenchRun] = []
    for path in sorted((FIXTURES / "vllm_sweep").glob("*.json")):
        runs.extend(vllm.parse(path.read_bytes(), path=str(path)))
    return runs


def test_sweep_fixture_knee() -> None:
    slo = Slo(ttft_ms=300, tpot_ms=50)
    metrics = [run_metrics(r, slo) for r in sweep_runs()]
    # concurrency 1: 4 x 10 tokens pass in 1 s = 40 tokens/s; 2: 4 x 20 = 80 tokens/s;
    # 4: two of four have TTFT 500 ms -> attainment 0.5, 2 x 20 = 40 tokens/s
    assert [m["token_goodput_per_s"] for m in metrics] == [40.0, 80.0, 40.0]
    s = sweep_metrics(metrics, slo)
    assert s is not None
    assert s["load_variable"] == "concurrency"
    assert (s["knee_concurrency"], s["knee_tokens_per_s"], s["saturated"]) == (2, 80.0, True)
    assert [lv["attainment"] for lv in s["levels"]] == [1.0, 1.0, 0.5]
    # with a 0.5 attainment target concurrency 4 qualifies: knee 4, never saturated
    lax = Slo(ttft_ms=300, tpot_ms=50, attainment=0.5)
    s2 = sweep_metrics([run_metrics(r, lax) for r in sweep_runs()], lax)
    assert s2 is not None and (s2["knee_concurrency"], s2["saturated"]) == (4, False)


def test_sweep_pools_repeated_levels() -> None:
    slo = Slo(ttft_ms=300)
    runs = sweep_runs()
    metrics = [run_metrics(r, slo) for r in [*runs, runs[2]]]
    s = sweep_metrics(metrics, slo)
    assert s is not None
    # level 4 twice: (2 + 2) passed / (4 + 4) offered = 0.5
    level4 = next(lv for lv in s["levels"] if lv["load"] == 4.0)
    assert level4["runs"] == 2 and level4["attainment"] == 0.5


def test_single_run_is_no_sweep() -> None:
    assert sweep_metrics([run_metrics(trace_run(), Slo(ttft_ms=300))], Slo(ttft_ms=300)) is None


def test_slo_validation() -> None:
    with pytest.raises(ValueError, match="ttft_ms"):
        Slo(ttft_ms=0)
    with pytest.raises(ValueError, match="attainment"):
        Slo(ttft_ms=100, attainment=1.5)


# --- properties ------------------------------------------------------------------------------

request = st.tuples(
    st.floats(0, 10),                       # sent
    st.floats(0.001, 2),                    # ttft
    st.lists(st.floats(0.001, 0.5), max_size=6),  # gaps
    st.booleans(),                          # ok
)


def run_of(reqs: list[tuple[float, float, list[float], bool]]) -> BenchRun:
    frame = pl.DataFrame({
        "request_id": [str(i) for i in range(len(reqs))],
        "sent_s": [r[0] for r in reqs],
        "ttft_s": [r[1] if r[3] else None for r in reqs],
        "itls_s": [r[2] if r[3] else None for r in reqs],
        "ok": [r[3] for r in reqs],
        "output_tokens": [len(r[2]) + 1 if r[3] else 0 for r in reqs],
    }, schema_overrides={"ttft_s": pl.Float64(), "itls_s": pl.List(pl.Float64())})
    frame = frame.with_columns(
        done_s=pl.col("sent_s") + pl.col("ttft_s") + pl.col("itls_s").list.sum(),
        tpot_s=pl.when(pl.col("output_tokens") > 1).then(
            pl.col("itls_s").list.sum() / (pl.col("output_tokens") - 1)),
        max_itl_s=pl.col("itls_s").list.max(),
        incomplete=pl.lit(False),
    )
    return BenchRun(tool="trace", path="p", run_index=0, requests=conform(frame), reported={},
                    window_start_s=0.0, window_end_s=12.0, itl_definition="token")


slos = st.builds(Slo, ttft_ms=st.floats(1, 3000), tpot_ms=st.none() | st.floats(1, 600),
                 max_itl_ms=st.none() | st.floats(1, 600))


@settings(max_examples=60, deadline=None)
@given(reqs=st.lists(request, min_size=1, max_size=25), slo=slos)
def test_goodput_never_exceeds_throughput(reqs: list, slo: Slo) -> None:
    m = run_metrics(run_of(reqs), slo)
    assert m["token_goodput_per_s"] <= m["output_tokens_per_s"] + 1e-9
    assert m["request_goodput_per_s"] <= m["request_throughput_per_s"] + 1e-9
    assert m["passed"] <= m["completed"] <= m["offered"]


@settings(max_examples=60, deadline=None)
@given(reqs=st.lists(request, min_size=1, max_size=25), slo=slos,
       extra=st.tuples(st.floats(0, 10), st.floats(0.001, 2), st.lists(st.floats(0.001, 0.5),
                                                                       max_size=6)))
def test_adding_a_failing_request_never_raises_goodput(reqs: list, slo: Slo,
                                                       extra: tuple) -> None:
    before = run_metrics(run_of(reqs), slo)
    after = run_metrics(run_of([*reqs, (*extra, False)]), slo)
    assert after["token_goodput_per_s"] <= before["token_goodput_per_s"] + 1e-9
    assert after["passed"] == before["passed"]


@settings(max_examples=60, deadline=None)
@given(reqs=st.lists(request, min_size=1, max_size=25), slo=slos, factor=st.floats(0.1, 1))
def test_tightening_the_slo_never_raises_goodput(reqs: list, slo: Slo, factor: float) -> None:
    tight = Slo(ttft_ms=slo.ttft_ms * factor,
                tpot_ms=None if slo.tpot_ms is None else slo.tpot_ms * factor,
                max_itl_ms=None if slo.max_itl_ms is None else slo.max_itl_ms * factor)
    run = run_of(reqs)
    assert (run_metrics(run, tight)["token_goodput_per_s"]
            <= run_metrics(run, slo)["token_goodput_per_s"] + 1e-9)


def test_rate_sweep_leaves_out_runs_without_a_rate() -> None:
    # a GuideLLM-style sweep: a synchronous run (concurrency 1, no rate) and three constant
    # rates 1, 2, 4 req/s. The load variable is the rate; the synchronous run is left out.
    from dataclasses import replace

    slo = Slo(ttft_ms=300)
    runs = sweep_runs()
    rated = [replace(r, concurrency=None, request_rate_per_s=rate)
             for r, rate in zip(runs, (1.0, 2.0, 4.0), strict=True)]
    metrics = [run_metrics(r, slo) for r in [runs[0], *rated]]
    s = sweep_metrics(metrics, slo)
    assert s is not None and s["load_variable"] == "request_rate"
    # same figures as the concurrency sweep: 40, 80, 40 tokens/s, attainment 1, 1, 0.5
    assert (s["knee_request_rate"], s["knee_tokens_per_s"], s["knee_concurrency"]) == (
        2.0, 80.0, None)
    assert len(s["levels"]) == 3
    assert any("left out" in n for n in s["notes"])


def test_missing_tpot_does_not_pass_a_tpot_limit() -> None:
    # 5 tokens, first token at 0.1 s but no last-token time: TPOT unknown. Under a TPOT limit
    # the request cannot be shown to pass; without one it passes on TTFT alone.
    data = (b'{"sent_s": 0.0, "first_token_s": 0.1, "output_tokens": 5, "done_s": 0.5, '
            b'"ok": true}\n')
    (run,) = trace.parse(data, path="t")
    assert run_metrics(run, Slo(ttft_ms=300, tpot_ms=100))["passed"] == 0
    assert run_metrics(run, Slo(ttft_ms=300))["passed"] == 1


# --- Little's law on every run (docs/evidence.md) ------------------------------------------


def test_littles_law_on_real_samples() -> None:
    from pipeline.evidence.bench import load_runs
    from pipeline.evidence.goodput import LITTLE_TOLERANCE

    assert LITTLE_TOLERANCE == 0.1
    groq = SAMPLES / "llmperf" / "leaderboard_groq_70b_summary.json"
    csv16 = SAMPLES / "aiperf" / ("aiperf_0.8.0_inferencex_kimik2.7-mxfp4_mi355x_tp4_conc16_"
                                  "lmcache_profile_export_aiperf.csv")
    if not (groq.exists() and csv16.exists()):
        pytest.skip("samples absent")
    # LLMPerf on Groq, 5 concurrent requests: 150 completed / 50.9226 s = 2.9456 req/s x
    # 0.8151 s mean e2e = 2.401 in flight against 5: -52 %, outside 10 %: a note
    (run,) = load_runs([groq], cached=False).runs
    m = run_metrics(run, Slo(ttft_ms=300))
    law = m["littles_law"]
    assert law["in_flight"] == pytest.approx(150 / 50.922560879960656 * 0.8151081097126007)
    assert law["in_flight"] == pytest.approx(2.401, abs=1e-3)
    assert (law["mean_concurrency"], law["basis"], law["within"]) == (
        5.0, "the concurrency setting", False)
    assert any(n.startswith("Little's law: 2.946 requests/s x 0.8151 s mean latency = 2.401 "
                            "requests in flight, against 5 (the concurrency setting): -52%")
               for n in m["notes"])
    # AIPerf CSV conc16: 659 / 3626.66 s = 0.18171 req/s x 127.787 s = 23.22 in flight
    # against its Effective Concurrency 23.14: +0.35 %, within; no note
    (run,) = load_runs([csv16], cached=False).runs
    m = run_metrics(run, Slo(ttft_ms=300))
    law = m["littles_law"]
    assert law["in_flight"] == pytest.approx(659 / 3626.66 * 127.78718)
    assert (law["mean_concurrency"], law["basis"], law["within"]) == (
        23.14, "the tool's mean concurrency", True)
    assert law["off"] == pytest.approx(659 / 3626.66 * 127.78718 / 23.14 - 1)  # +0.0035
    assert not any(n.startswith("Little's law") for n in m["notes"])


def test_littles_law_on_a_summary_without_mean_latency() -> None:
    # the issue's case: 26 req/s at concurrency 24 with mean TTFT 100 ms, mean TPOT 30 ms and
    # 150 output tokens per request: W = 0.1 + 0.030 x 149 = 4.57 s, so 26 x 4.57 = 118.82 in
    # flight against 24: +395 % (24 in flight would mean 0.92 s per request)
    run = BenchRun(tool="vllm", path="s.json", run_index=0, requests=None, concurrency=24,
                   reported={"completed": 2600, "failed": 0, "duration_s": 100.0,
                             "total_output_tokens": 390_000, "output_tokens_per_s": 3900.0,
                             "ttft_mean_s": 0.1, "tpot_mean_s": 0.03},
                   window_start_s=0.0, window_end_s=100.0, duration_s=100.0)
    m = run_metrics(run, Slo(ttft_ms=300))
    law = m["littles_law"]
    assert law["mean_latency_s"] == pytest.approx(4.57)
    assert law["in_flight"] == pytest.approx(118.82)
    assert law["off"] == pytest.approx(118.82 / 24 - 1) and law["within"] is False
    (note,) = [n for n in m["notes"] if n.startswith("Little's law")]
    assert note.startswith("Little's law: 26 requests/s x 4.57 s mean latency (TTFT + TPOT x "
                           "(mean output - 1), from the file's means) = 118.8 requests in "
                           "flight, against 24 (the concurrency setting): +395%, outside the "
                           "10% tolerance")
    # at concurrency 119, 118.82 is -0.15 % off: within, no note
    within = run_metrics(replace(run, concurrency=119), Slo(ttft_ms=300))
    assert within["littles_law"]["within"] is True
    assert not any(n.startswith("Little's law") for n in within["notes"])


def test_littles_law_from_the_requests_in_flight() -> None:
    # the worked trace, no concurrency setting, its window [0, 2.1) s: the six requests are
    # in flight 0.36 + 0.46 + 0.40 + 0.06 + 0.10 (the failed one) + 0.30 = 1.68 s, so 0.8 on
    # average; the 5 completed: 5 / 2.1 = 2.381 req/s x (1.58 / 5 = 0.316 s) = 0.7524 in
    # flight; 0.7524 / 0.8 - 1 = -5.95 % (the failed request's 0.1 s), within 10 %
    (run,) = trace.parse((FIXTURES / "trace_worked_example.jsonl").read_bytes(), path="t")
    m = run_metrics(run, Slo(ttft_ms=300))
    law = m["littles_law"]
    assert law["basis"] == "the mean of requests in flight"
    assert law["mean_concurrency"] == pytest.approx(1.68 / 2.1)
    assert law["mean_latency_s"] == pytest.approx(0.316)
    assert law["in_flight"] == pytest.approx(1.58 / 2.1)
    assert law["off"] == pytest.approx(1.58 / 1.68 - 1) and law["within"] is True


def test_littles_law_does_not_hold_an_open_loop_to_its_concurrency_cap() -> None:
    """With a request rate, vLLM's max_concurrency is a cap, not the load (found in review: a
    consistent run at 2 requests/s x 1 s = 2 in flight was held to its cap of 64, -97 %, and
    graded estimated). A summary alone gives no mean in flight: no check, no note."""
    import json

    from sources.bench.clients import vllm
    doc = {"date": "20261201-100000", "backend": "vllm", "duration": 10.0, "completed": 20,
           "failed": 0, "num_prompts": 20, "request_rate": 2.0, "max_concurrency": 64,
           "total_output_tokens": 2000, "mean_e2el_ms": 1000.0, "median_ttft_ms": 50.0}
    (run,) = vllm.parse(json.dumps(doc).encode(), path="open_loop.json")
    m = run_metrics(run, Slo(ttft_ms=300))
    assert m["littles_law"] is None
    assert not any(n.startswith("Little's law") for n in m["notes"])
