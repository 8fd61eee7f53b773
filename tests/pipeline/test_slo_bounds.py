"""The SLO's p99 bounds (`slo.ttft_p99_ms`, `slo.tpot_p99_ms`) hold every operating point, as
the attainment share does (docs/evidence.md, "The SLO rule"): a single run or the runs at one
level over a bound are not one, and a sweep with no knee because of a bound says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from samples import SAMPLES

from pipeline.evidence.bench import throughput_from_evidence
from pipeline.evidence.goodput import Slo

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bench"

WOULD_HELP = ("not an operating point, the candidate is not sized on it; a lower load level "
              "(concurrency or request rate) would help, or a sweep whose knee is found")


def test_a_single_run_over_a_p99_bound_is_not_an_operating_point() -> None:
    folder = SAMPLES / "llmperf"
    if not folder.exists():
        pytest.skip("sample absent")
    # LLMPerf on Groq, concurrency 5: all 150 requests have TTFT <= 1,000 ms (100 % attained),
    # but their p99 TTFT is 350.0 ms (numpy's linear p99 of the 150 TTFTs, = LLMPerf's own
    # quantile): over a 300 ms p99 bound the run is refused; before the rule it was the
    # operating point at its 441.8 tokens/s
    refused = throughput_from_evidence(folder, Slo(ttft_ms=1000, ttft_p99_ms=300))
    assert refused.tokens_per_s is None
    assert refused.no_goodput_reason == (
        f"the p99 TTFT at concurrency 5 is 350.0 ms, over the 300 ms slo.ttft_p99_ms bound: "
        f"{WOULD_HELP}")
    assert refused.no_goodput_reason in refused.notes
    # recorded as data: the share met, the bound not
    assert refused.checks[:2] == (
        ("SLO attainment", "passed", "150 of 150 offered requests (100.0%) meet the SLO at "
         "concurrency 5, at or above the 95% slo.attainment asks"),
        ("SLO p99 TTFT", "failed", "the p99 TTFT at concurrency 5 is 350.0 ms, over the 300 "
         "ms slo.ttft_p99_ms bound"))
    assert refused.output_tokens_per_s == pytest.approx(441.84737788500206)
    # under a 400 ms bound it is the operating point: all 150 requests' tokens / 50.92 s
    ev = throughput_from_evidence(folder, Slo(ttft_ms=1000, ttft_p99_ms=400))
    assert ev.tokens_per_s == pytest.approx(441.84737788500206)
    assert ev.no_goodput_reason is None


def test_a_run_short_of_the_share_and_over_a_bound_says_both() -> None:
    # the AIPerf fixture's 5 offered requests (TTFT 200, 250, 400 ms, one errored, one
    # cancelled): under TTFT <= 300 ms 2 of 5 pass, 40.0 %; its p99 TTFT, linear between
    # 250 and 400 ms at rank 0.99 x 2 = 1.98, is 250 + 0.98 x 150 = 397.0 ms
    ev = throughput_from_evidence(FIXTURES / "aiperf_run", Slo(ttft_ms=300, ttft_p99_ms=350))
    assert ev.tokens_per_s is None
    assert ev.no_goodput_reason == (
        "2 of 5 offered requests (40.0%) meet the SLO at concurrency 2, under the 95% "
        "slo.attainment asks; the p99 TTFT at concurrency 2 is 397.0 ms, over the 350 ms "
        f"slo.ttft_p99_ms bound: {WOULD_HELP}")


def test_a_sweep_without_a_knee_because_of_a_p99_bound_says_so() -> None:
    # tests/fixtures/bench/vllm_sweep, TTFT <= 1,000 ms: every request passes at concurrency
    # 1, 2 and 4 (attainment 1.0 each); their p99 TTFTs are 100, 200 and 500 ms. A 150 ms p99
    # bound keeps concurrency 1 only: the knee, at 40 tokens/s
    folder = FIXTURES / "vllm_sweep"
    kept = throughput_from_evidence(folder, Slo(ttft_ms=1000, ttft_p99_ms=150))
    assert (kept.tokens_per_s, kept.concurrency) == (pytest.approx(40.0), 1)
    # a 50 ms bound: no level is an operating point, and the reason is the bound, not the
    # attainment share (which every level reaches)
    none = throughput_from_evidence(folder, Slo(ttft_ms=1000, ttft_p99_ms=50))
    assert none.tokens_per_s is None
    assert none.no_goodput_reason == (
        "no load level of the sweep meets the SLO's p99 bounds (slo.ttft_p99_ms 50 ms): 3 "
        "level(s) reach the attainment 0.95 but are over a bound; at the lowest of them, the "
        "p99 TTFT at concurrency 1 is 100.0 ms, over the 50 ms slo.ttft_p99_ms bound: "
        f"{WOULD_HELP}")
    # no operating point: the level it is said at is checked, the run checks are not
    assert [(name, outcome) for name, outcome, _ in none.checks] == [
        ("SLO attainment", "passed"), ("SLO p99 TTFT", "failed"), ("token basis", "not checked"),
        ("Little's law", "not checked")]
    # TTFT <= 150 ms: only concurrency 1 reaches the share (2 and 4: 2 of 4 pass, 50 %), and
    # it is over the bound; the reason names that one level
    one = throughput_from_evidence(folder, Slo(ttft_ms=150, ttft_p99_ms=50))
    assert one.no_goodput_reason is not None
    assert one.no_goodput_reason.startswith(
        "no load level of the sweep meets the SLO's p99 bounds (slo.ttft_p99_ms 50 ms): 1 "
        "level(s) reach the attainment 0.95 but are over a bound; at the lowest of them, the "
        "p99 TTFT at concurrency 1 is 100.0 ms")
