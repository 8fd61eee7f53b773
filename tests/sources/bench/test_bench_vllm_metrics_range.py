"""vLLM /metrics as a Prometheus query_range export (production grade): the written fixture
worked by hand, a counter reset, an error answer, and agreement with the text-scrape reader on
the real idle + loaded scrapes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from pipeline.cli.evidence import evidence_app
from pipeline.evidence.bench import throughput_from_evidence
from pipeline.evidence.goodput import Slo
from sources.bench.aggregates import vllm_metrics, vllm_metrics_range
from sources.bench.registry import detect_format, parse_bench
from sources.errors import ParseError

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "bench" / "vllm_query_range.json"
SAMPLES = ROOT / ".." / "shared" / "samples" / "vllm_metrics"
T0 = 1786929000  # 2026-08-17T01:10:00Z


def matrix(*series: tuple[str, dict[str, str], Sequence[tuple[float, float]]]) -> dict[str, Any]:
    return {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": name, **labels}, "values": [[t, str(v)] for t, v in points]}
        for name, labels, points in series]}}


def test_fixture_by_hand() -> None:
    assert detect_format(FIXTURE) == "vllm-metrics-range"
    (run,) = parse_bench(FIXTURE.read_bytes(), path=str(FIXTURE))
    r = run.reported
    assert run.tool == "vllm-metrics" and run.aggregate_only  # the same run as text scrapes
    assert run.model == "opt-125m-tp2"
    # window 01:10:00 .. 01:20:00 = 600 s (first to last sample)
    assert run.started_at_utc == datetime(2026, 8, 17, 1, 10, tzinfo=UTC)
    assert r["duration_s"] == 600
    # generation tokens 1,000 -> 31,000: 30,000 over 600 s = 50 tokens/s
    assert r["total_output_tokens"] == 30000
    assert r["output_tokens_per_s"] == pytest.approx(50.0)
    # finished_reason length 10 -> 110 = 100 completed (1/6 req/s); error 0 -> 1; abort 0 -> 2
    assert (r["completed"], r["failed"], r["incomplete"], r["offered"]) == (100, 1, 2, 103)
    assert r["request_throughput_per_s"] == pytest.approx(100 / 600)
    # TTFT bucket increases: <=0.04: 10, <=0.06: 20, <=0.08: 38, <=0.1: 52, <=0.25: 90,
    # <=0.5: 98, +Inf: 100. p50 at rank 50 in (0.08, 0.1]: 0.08 + 0.02 * (50 - 38) / 14
    assert r["ttft_count"] == 100
    assert r["ttft_p50_s"] == pytest.approx(0.08 + 0.02 * 12 / 14)
    # p90 at rank 90 reaches <=0.25 exactly: 0.1 + 0.15 * (90 - 52) / 38 = 0.25
    assert r["ttft_p90_s"] == pytest.approx(0.25)
    # p95 at rank 95 in (0.25, 0.5]: 0.25 + 0.25 * (95 - 90) / 8 = 0.40625
    assert r["ttft_p95_s"] == pytest.approx(0.40625)
    # p99 at rank 99 in +Inf: the highest finite bound, 0.5 s
    assert r["ttft_p99_s"] == pytest.approx(0.5)
    assert r["ttft_mean_s"] == pytest.approx(0.12)  # sum 1 -> 13 = 12 s over 100
    # ITL: 30,000 gaps, 20,000 <= 0.01 s: p50 rank 15,000 = 0.01 * 15,000 / 20,000
    assert r["itl_p50_s"] == pytest.approx(0.0075)
    # e2e: 100, 20 <= 1.0 s, 100 <= 2.5 s: p50 rank 50 = 1.0 + 1.5 * (50 - 20) / 80
    assert r["e2e_p50_s"] == pytest.approx(1.5625)
    # TPOT: 100, 40 <= 0.01 s, 90 <= 0.025 s: p50 rank 50 = 0.01 + 0.015 * (50 - 40) / 50;
    # sum 0 -> 1.5 s over 100 = 0.015 s (its _created series, a timestamp, is not counted)
    assert r["tpot_p50_s"] == pytest.approx(0.013)
    assert r["tpot_mean_s"] == pytest.approx(0.015)
    assert any("query_range" in n for n in run.notes)
    assert any("estimates" in n for n in run.notes)


def test_production_grade() -> None:
    ev = throughput_from_evidence(FIXTURE, Slo(ttft_ms=300))
    assert ev.grade == "production"
    assert ev.tokens_per_s is None  # histograms are marginal: no goodput, as for text scrapes
    assert ev.output_tokens_per_s == pytest.approx(50.0)


def test_counter_reset_counted_as_increase_does() -> None:
    # generation tokens 1,000, 16,000, restart, 500, 15,500 at 0, 200, 400, 600 s:
    # rises 15,000 + 500 (the value after the fall) + 15,000 = 30,500 over 600 s
    labels = {"instance": "a:8000", "model_name": "m"}
    points = [(T0, 1000), (T0 + 200, 16000), (T0 + 400, 500), (T0 + 600, 15500)]
    doc = matrix(("vllm:generation_tokens_total", labels, points))
    (run,) = vllm_metrics_range.parse(json.dumps(doc).encode(), path="r.json")
    assert run.reported["total_output_tokens"] == 30500
    assert run.reported["output_tokens_per_s"] == pytest.approx(30500 / 600)
    assert any("counter resets" in n and "generation_tokens_total" in n for n in run.notes)


def test_itl_under_its_name_before_vllm_0_11() -> None:
    # vllm:time_per_output_token_seconds was the gap histogram's name before 0.11:
    # 10 gaps, 6 <= 0.02 s: p50 rank 5 = 0.02 * 5 / 6
    series: list[tuple[str, dict[str, str], list[tuple[float, float]]]] = [
        ("vllm:generation_tokens_total", {}, [(T0, 0), (T0 + 10, 20)]),
        ("vllm:time_per_output_token_seconds_count", {}, [(T0, 0), (T0 + 10, 10)])]
    series += [("vllm:time_per_output_token_seconds_bucket", {"le": le},
                [(T0, 0), (T0 + 10, n)]) for le, n in (("0.02", 6), ("0.04", 10), ("+Inf", 10))]
    (run,) = vllm_metrics_range.parse(json.dumps(matrix(*series)).encode(), path="old.json")
    assert run.reported["itl_p50_s"] == pytest.approx(0.02 * 5 / 6)


def test_error_answer_quoted_safely() -> None:
    body = {"status": "error", "errorType": "bad_data",
            "error": "1:3: parse error: unexpected \x1b[31mred\u202e"}
    data = json.dumps([matrix(("vllm:generation_tokens_total", {}, [(T0, 1)])), body]).encode()
    assert detect_format(data) == "vllm-metrics-range"
    with pytest.raises(ParseError) as err:
        parse_bench(data, path="err.json")
    assert err.value.path == "err.json" and err.value.where == "document 1 status"
    assert "bad_data" in str(err.value) and "parse error" in str(err.value)
    # the escape and the bidi override are shown escaped, never sent to the terminal
    assert "\x1b" not in str(err.value) and "\u202e" not in str(err.value)
    assert "\\x1b[31mred\\u202e" in str(err.value)


def test_servers_apart_and_overlapping_queries_merged() -> None:
    # two servers: one run each; the first server's series saved by two overlapping queries
    a, b = {"instance": "a:8000", "model_name": "m"}, {"instance": "b:8000", "model_name": "m"}
    first = matrix(("vllm:generation_tokens_total", a, [(T0, 0), (T0 + 10, 100)]),
                   ("vllm:generation_tokens_total", b, [(T0, 0), (T0 + 20, 60)]))
    second = matrix(("vllm:generation_tokens_total", a, [(T0 + 10, 100), (T0 + 20, 300)]))
    data = (json.dumps(first) + "\n" + json.dumps(second)).encode()  # as `curl >>` leaves them
    runs = vllm_metrics_range.parse(data, path="two.json")
    # a: 0 -> 100 -> 300 over 20 s = 15 tokens/s; b: 60 over 20 s = 3 tokens/s
    assert [r.run_index for r in runs] == [0, 1]
    assert [r.reported["output_tokens_per_s"] for r in runs] == pytest.approx([15.0, 3.0])


def test_agrees_with_the_text_scrapes() -> None:
    idle = SAMPLES / "er0080_metrics_vllm_0_25_1_idle.txt"
    loaded = SAMPLES / "er0080_metrics_vllm_0_25_1_loaded.txt"
    if not (idle.exists() and loaded.exists()):
        pytest.skip("samples absent")
    text = (f"# scraped_at: {T0}\n{idle.read_text()}"
            f"# scraped_at: {T0 + 100}\n{loaded.read_text()}").encode()
    (scraped,) = vllm_metrics.parse(text, path="s.txt")
    # the same two scrapes as a query_range answer of every series, two points each
    # (a series missing from the idle scrape starts at 0, as the text reader counts it)
    before = dict(vllm_metrics.read_scrapes(idle.read_text(), "idle")[0][1])
    after = vllm_metrics.read_scrapes(loaded.read_text(), "loaded")[0][1]
    doc = matrix(*((name, dict(labels), [(T0, before.get((name, labels), 0.0)),
                                         (T0 + 100, value)])
                   for (name, labels), value in after.items()))
    (ranged,) = vllm_metrics_range.parse(json.dumps(doc).encode(), path="r.json")
    assert ranged.reported.keys() == scraped.reported.keys()
    for key, value in scraped.reported.items():
        assert ranged.reported[key] == pytest.approx(value), key
    assert ranged.reported["output_tokens_per_s"] == pytest.approx(1652.93)  # 165,293 / 100 s
    assert (ranged.started_at_utc, ranged.model) == (scraped.started_at_utc, scraped.model)


@pytest.mark.parametrize(("doc", "where"), [
    (matrix(("vllm:generation_tokens_total", {}, [(T0, float("nan")), (T0 + 1, 1)])),
     "data.result[0] (vllm:generation_tokens_total) values[0]"),
    (matrix(("vllm:generation_tokens_total", {}, [(T0 + 1, 1), (T0, 2)])),
     "data.result[0] (vllm:generation_tokens_total) values[1]"),
    ({"status": "success", "data": {"resultType": "vector", "result": []}},
     "document 0 data.resultType"),
    ({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"instance": "a"}, "values": [[T0, "1"]]}]}}, "data.result[0].metric"),
    (matrix(("vllm:prompt_tokens_total", {}, [(T0, 1), (T0 + 5, 2)])), "data.result"),
    (matrix(("vllm:generation_tokens_total", {}, [(T0, 1)])), "data.result"),
])
def test_bad_answers_name_the_key(doc: dict[str, Any], where: str) -> None:
    with pytest.raises(ParseError) as err:
        vllm_metrics_range.parse(json.dumps(doc).encode(), path="bad.json")
    assert err.value.path == "bad.json" and where in err.value.where


def test_not_detected_as_other_formats() -> None:
    # a DCGM power export is a power log; a text scrape is the text reader's
    dcgm = matrix(("DCGM_FI_DEV_POWER_USAGE", {"gpu": "0"}, [(T0, 300)]))
    assert detect_format(json.dumps(dcgm).encode()) is None
    assert detect_format(b"# TYPE vllm:generation_tokens_total counter\n"
                         b"vllm:generation_tokens_total 5\n") == "vllm-metrics"


def test_through_the_cli(tmp_path: Path) -> None:
    app = typer.Typer()
    app.add_typer(evidence_app, name="evidence")
    runner = CliRunner()
    done = runner.invoke(app, ["evidence", "inspect", str(FIXTURE)])
    assert done.exit_code == 0, done.stderr
    assert "vllm-metrics" in done.stdout and "50.0" in done.stdout  # 30,000 tokens / 600 s
    bad = tmp_path / "answer.json"
    bad.write_text(json.dumps({"status": "error", "errorType": "timeout",
                               "error": "query timed out in expression evaluation"}))
    failed = runner.invoke(app, ["evidence", "inspect", str(bad), "--format",
                                 "vllm-metrics-range"])
    assert failed.exit_code == 1
    assert "answer.json" in failed.stderr and "timed out" in failed.stderr
