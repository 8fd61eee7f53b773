"""vLLM /metrics scrapes (production grade): the real idle + loaded scrapes of one server."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.evidence.bench import throughput_from_evidence
from pipeline.evidence.goodput import Slo
from sources.bench.aggregates import vllm_metrics
from sources.errors import ParseError

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / ".." / "shared" / "samples" / "vllm_metrics"


def scrapes(first: str, second: str) -> bytes:
    idle = SAMPLES / "er0080_metrics_vllm_0_25_1_idle.txt"
    loaded = SAMPLES / "er0080_metrics_vllm_0_25_1_loaded.txt"
    if not (idle.exists() and loaded.exists()):
        pytest.skip("samples absent")
    texts = {"idle": idle.read_text(), "loaded": loaded.read_text()}
    return (f"# scraped_at: 2026-08-17T10:00:00Z\n{texts[first]}"
            f"# scraped_at: 2026-08-17T10:01:40Z\n{texts[second]}").encode()


def test_idle_then_loaded() -> None:
    (run,) = vllm_metrics.parse(scrapes("idle", "loaded"), path="s.txt")
    r = run.reported
    assert run.aggregate_only and run.tool == "vllm-metrics"
    # request_success_total{finished_reason="length"} 0 -> 600; generation tokens 0 -> 165,293
    assert (r["completed"], r["failed"], r["incomplete"]) == (600, 0, 0)
    assert r["total_output_tokens"] == 165293
    # window 10:00:00 .. 10:01:40 = 100 s: 1,652.93 tokens/s, 6 req/s
    assert r["output_tokens_per_s"] == pytest.approx(1652.93)
    assert run.started_at_utc == datetime(2026, 8, 17, 10, 0, tzinfo=UTC)
    # TTFT histogram: 664 observations; 166 <= 0.1 s, 593 <= 0.25 s. p50 at rank 332 lies in
    # (0.1, 0.25]: 0.1 + 0.15 * (332 - 166) / (593 - 166) = 0.15831 s
    assert r["ttft_count"] == 664
    assert r["ttft_p50_s"] == pytest.approx(0.1 + 0.15 * 166 / 427)
    assert any("estimates" in n for n in run.notes)


def test_restart_between_scrapes_is_an_error() -> None:
    with pytest.raises(ParseError, match="went down"):
        vllm_metrics.parse(scrapes("loaded", "idle"), path="s.txt")


def test_production_grade(tmp_path: Path) -> None:
    path = tmp_path / "scrapes.txt"
    path.write_bytes(scrapes("idle", "loaded"))
    ev = throughput_from_evidence(path, Slo(ttft_ms=300))
    assert ev.grade == "production"
    assert ev.tokens_per_s is None  # histograms are marginal: no goodput
    assert ev.output_tokens_per_s == pytest.approx(1652.93)


def test_bucket_quantile_by_hand() -> None:
    text = b"""# scraped_at: 1000
vllm:generation_tokens_total{engine="0"} 0
# scraped_at: 1010
vllm:generation_tokens_total{engine="0"} 50
vllm:generation_tokens_total{engine="1"} 30
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1"} 2
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.5"} 6
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf"} 8
vllm:time_to_first_token_seconds_count{engine="0"} 8
vllm:time_to_first_token_seconds_sum{engine="0"} 2.4
"""
    (run,) = vllm_metrics.parse(text, path="t.txt")
    r = run.reported
    # two engines summed: 80 tokens in 10 s = 8 tokens/s
    assert r["output_tokens_per_s"] == pytest.approx(8.0)
    # p50: rank 4 in (0.1, 0.5] holding 4: 0.1 + 0.4 * (4 - 2) / 4 = 0.3 s
    assert r["ttft_p50_s"] == pytest.approx(0.3)
    # p99: rank 7.92 falls in +Inf: the highest finite bound, 0.5 s (as Prometheus does)
    assert r["ttft_p99_s"] == pytest.approx(0.5)
    assert r["ttft_mean_s"] == pytest.approx(0.3)  # 2.4 / 8


@pytest.mark.parametrize(("text", "where"), [
    (b"vllm:generation_tokens_total 5\n", "scrape 1"),
    (b"# scraped_at: yesterday\nvllm:generation_tokens_total 5\n", "line 1"),
    (b"# scraped_at: 2026-08-17T10:00:00\nvllm:generation_tokens_total 5\n", "line 1"),
    (b"# scraped_at: 5\nvllm:generation_tokens_total 5\n# scraped_at: 4\n"
     b"vllm:generation_tokens_total 6\n", "scrape 2"),
    (b"# scraped_at: 5\nthis is not prometheus\n", "line 2"),
    (b"# scraped_at: 5\nprocess_start_time_seconds 1\n", "vllm:generation_tokens_total"),
])
def test_bad_scrapes(text: bytes, where: str) -> None:
    with pytest.raises(ParseError) as err:
        vllm_metrics.parse(text, path="bad.txt")
    assert where in err.value.where


@pytest.mark.parametrize("label", ["scraped_at", "scrape_utc", "scrape_time"])
def test_each_scrape_time_spelling(label: str) -> None:
    # the dcgm-exporter spellings too: one scrape log may hold both exporters' scrapes
    text = (f"# {label}: 2026-08-17T10:00:00Z\nvllm:generation_tokens_total 0\n"
            f"# {label}: 2026-08-17T10:00:20+00:00\nvllm:generation_tokens_total 100\n").encode()
    (run,) = vllm_metrics.parse(text, path="t.txt")
    # 100 tokens over 10:00:00 .. 10:00:20 = 20 s: 5 tokens/s
    assert run.started_at_utc == datetime(2026, 8, 17, 10, 0, tzinfo=UTC)
    assert run.reported["output_tokens_per_s"] == pytest.approx(5.0)


def test_label_values_are_unescaped_as_prometheus_reads_them() -> None:
    """The exposition escapes a quote and a backslash in a label value (`\\"`, `\\\\`):
    prometheus_client's parser gives the value Prometheus stores, `my "big" model\\v2` (the
    regexes it replaced kept the escapes, so a model named so was reported escaped). Two
    scrapes 10 s apart, 50 then 250 tokens: 200 tokens."""
    text = ('# scraped_at: 1000\nvllm:generation_tokens_total{model_name="my \\"big\\" '
            'model\\\\v2"} 50\n# scraped_at: 1010\nvllm:generation_tokens_total{model_name='
            '"my \\"big\\" model\\\\v2"} 250\n')
    (run,) = vllm_metrics.parse(text.encode(), path="escaped.txt")
    assert run.model == 'my "big" model\\v2'
    assert run.reported["total_output_tokens"] == 200
