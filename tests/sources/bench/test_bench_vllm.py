"""vLLM bench serve results: real samples (skip when absent) and our own fixtures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sources.bench.clients import vllm
from sources.errors import ParseError

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / ".." / "shared" / "samples" / "vllm"
FIXTURES = ROOT / "tests" / "fixtures" / "bench"


def sample(name: str) -> bytes:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"sample {name} absent")
    return path.read_bytes()


def test_v0251_sample_aggregate_only() -> None:
    (run,) = vllm.parse(sample("er0080_bench_serve_v0.25.1.json"), path="s.json")
    assert run.aggregate_only
    assert run.concurrency == 2
    assert run.request_rate_per_s is None  # "inf"
    r = run.reported
    assert (r["completed"], r["failed"], r["offered"]) == (8, 0, 8)
    assert r["total_output_tokens"] == 128
    # p99_ttft_ms 734.4049174101428 -> s; median -> p50
    assert r["ttft_p99_s"] == pytest.approx(0.7344049174101428)
    assert r["tpot_p50_s"] == pytest.approx(0.01120450286665194)
    # the tool's throughput is completed / duration: 8 / 1.5441598830002476 = 5.18081 req/s
    assert r["request_throughput_per_s"] == pytest.approx(8 / r["duration_s"])  # type: ignore
    # 128 tokens / 1.5441598830002476 s = 82.893 tokens/s, as the file says
    assert r["output_tokens_per_s"] == pytest.approx(128 / 1.5441598830002476)
    assert run.started_at_utc is None and any("--tz" in n for n in run.notes)


def test_date_with_tz_gives_utc_window() -> None:
    (run,) = vllm.parse(sample("er0080_bench_serve_v0.25.1.json"), path="s.json",
                        tz="Europe/Paris")
    # date 20260816-160853 in Paris (CEST, UTC+2) = 14:08:53 UTC; start = end - 1.544 s
    assert run.ended_at_utc == datetime(2026, 8, 16, 14, 8, 53, tzinfo=UTC)
    assert (run.ended_at_utc - run.started_at_utc).total_seconds() == pytest.approx(
        1.5441598830002476, abs=1e-6)
    assert run.clock_uncertainty_s == 1.0


def test_all_failed_sample_has_null_latencies() -> None:
    (run,) = vllm.parse(sample("er0080_bench_serve_all_requests_failed_v0.25.1.json"),
                        path="f.json")
    assert (run.reported["completed"], run.reported["failed"]) == (0, 8)
    # vLLM writes 0.0 when nothing completed: that is "no value", not a 0 s latency
    assert run.reported["ttft_p99_s"] is None
    assert run.concurrency is None


def test_sweep_summary_two_runs_with_params() -> None:
    runs = vllm.parse(sample("er0080_sweep_maxseqs4_summary.json"), path="summary.json")
    assert [r.run_index for r in runs] == [0, 1]
    assert runs[0].params == {"run_number": "0", "max_num_seqs": "4"}
    assert runs[1].params["run_number"] == "1"
    # each run keeps its own duration: 1.365 s and 0.642 s
    assert runs[0].duration_s == pytest.approx(1.3653671270003542)
    assert runs[1].duration_s == pytest.approx(0.6420253609976498)
    # e2el percentiles are read too (requested with --percentile-metrics)
    assert runs[0].reported["e2e_p99_s"] == pytest.approx(0.8768009717071254)


def test_sweep_run_file_matches_summary_first_entry() -> None:
    (run,) = vllm.parse(sample("er0080_sweep_maxseqs4_run0.json"), path="run=0.json")
    (first, _) = vllm.parse(sample("er0080_sweep_maxseqs4_summary.json"), path="summary.json")
    assert run.reported == first.reported


def test_inferencex_fork() -> None:
    data = sample("InferenceX_fork_benchmark_serving_atom_mtp_tp4_conc64_isl8192_osl1024.json")
    (run,) = vllm.parse(data, path="x.json")
    raw = json.loads(data)
    assert run.aggregate_only  # output_lens without latencies: no per-request rows invented
    assert run.concurrency == 64
    # "request_goodput:" (trailing colon) is read; it is null in this file
    assert "request_goodput:" in raw and run.reported["request_goodput_per_s"] is None
    # the per-request output_lens add up to the tool's total: 588,102 tokens
    assert run.reported["sum_output_lens"] == raw["total_output_tokens"] == 588102
    # epoch start/end: 1786022594.990249 .. 1786022910.2384567 = 315.248 s, the duration
    assert run.started_at_utc == datetime.fromtimestamp(1786022594.990249, UTC)
    span = (run.ended_at_utc - run.started_at_utc).total_seconds()  # type: ignore[operator]
    assert span == pytest.approx(raw["duration"], abs=0.01)
    assert run.reported["ttft_p90_s"] == pytest.approx(1.2801106976694427)
    assert run.reported["itl_p99.9_s"] == pytest.approx(0.8868740316061303)
    # no 'failed' key: num_prompts 640 - completed 640 = 0
    assert run.reported["failed"] == 0


def test_detailed_fixture_per_request_rows() -> None:
    (run,) = vllm.parse((FIXTURES / "vllm_detailed_small.json").read_bytes(), path="d.json")
    df = run.requests
    assert df is not None and df.height == 5
    assert df["ok"].to_list() == [True, True, True, False, True]
    # request 2: ttft 0.2 + itls 0.01+0.15+0.01 = e2e 0.37; TPOT = 0.17 / (5 - 1) = 0.0425
    row = df.row(2, named=True)
    assert row["e2e_s"] == pytest.approx(0.37)
    assert row["tpot_s"] == pytest.approx(0.0425)
    assert row["max_itl_s"] == pytest.approx(0.15)
    assert row["sent_s"] == 10.2 and row["done_s"] == pytest.approx(10.57)
    # the failed request keeps no latency (vLLM writes ttft 0.0 for it) and its error text
    failed = df.row(3, named=True)
    assert failed["ttft_s"] is None and failed["error"] == "Connection reset by peer"
    # one-token request: no TPOT
    assert df.row(4, named=True)["tpot_s"] is None
    assert run.window_start_s == 10.0 and run.window_end_s == 12.0
    assert run.itl_definition == "chunk"


def test_append_result_jsonl_gives_two_runs() -> None:
    runs = vllm.parse((FIXTURES / "vllm_append_result.jsonl").read_bytes(), path="a.jsonl")
    assert [r.concurrency for r in runs] == [2, 4]
    assert not runs[0].aggregate_only and runs[1].aggregate_only


def test_historical_keys() -> None:
    data = json.dumps({"date": "20240401-120000", "backend": "vllm", "duration": 10.0,
                       "completed": 90, "num_prompts": 100, "request_inthroughput": 9.0,
                       "request_goodput:": 7.5, "request_rate": 4}).encode()
    (run,) = vllm.parse(data, path="old.json")
    assert run.reported["request_throughput_per_s"] == 9.0
    assert run.reported["request_goodput_per_s"] == 7.5
    # no 'failed': 100 offered - 90 completed = 10
    assert run.reported["failed"] == 10
    assert run.request_rate_per_s == 4.0


def test_request_rate_infinity_as_vllm_writes_it_is_all_at_once() -> None:
    # vLLM's json.dump writes float("inf") as the bare constant Infinity: a load setting
    data = (FIXTURES / "vllm_append_result.jsonl").read_bytes()
    runs = vllm.parse(data.replace(b'"request_rate": "inf"', b'"request_rate": Infinity'),
                      path="a.jsonl")
    assert [r.request_rate_per_s for r in runs] == [None, None]
    assert [r.concurrency for r in runs] == [2, 4]


def test_num_prompts_minus_1e308_is_refused_naming_the_key() -> None:
    # an OverflowError (exit 3) in the goodput step before
    data = (FIXTURES / "vllm_append_result.jsonl").read_bytes().replace(
        b'"num_prompts": 5', b'"num_prompts": -1e+308', 1)
    with pytest.raises(ParseError, match="beyond any count or timestamp") as err:
        vllm.parse(data, path="a.jsonl")
    assert "'num_prompts'" in err.value.where


def test_detect() -> None:
    assert vllm.detect(FIXTURES / "vllm_detailed_small.json")
    assert vllm.detect(FIXTURES / "vllm_append_result.jsonl")
    assert not vllm.detect(FIXTURES / "trace_worked_example.jsonl")
    assert not vllm.detect(b"timestamp, index, power.draw [W]\n")


@pytest.mark.parametrize(("data", "where"), [
    (b"", "line 1"),
    (b'{"duration": 1.0, "completed": 3', "line 1 column"),
    (b'{"completed": 3}', "'duration'"),
    (b'{"duration": "soon", "completed": 3}', "'duration'"),
    (b'{"duration": 1.0, "completed": 2.5}', "'completed'"),
    (b"[1, 2]", "value 1[0]"),
    (b'{"duration": 1.0, "completed": 1, "ttfts": [0.1, 0.2], "itls": [[]], '
     b'"output_lens": [1, 1]}', "'itls'"),
    (b'{"duration": 1.0, "completed": 1, "date": "yesterday"}', "'date'"),
])
def test_bad_files_name_the_place(data: bytes, where: str) -> None:
    with pytest.raises(ParseError) as err:
        vllm.parse(data, path="bad.json")
    assert err.value.path == "bad.json" and err.value.source == "vllm"
    assert where in err.value.where


def test_unknown_tz() -> None:
    with pytest.raises(ParseError, match="unknown timezone"):
        vllm.parse((FIXTURES / "vllm_detailed_small.json").read_bytes(), path="d.json",
                   tz="Mars/Olympus")


def _dated(date: str) -> bytes:
    return json.dumps({"date": date, "backend": "vllm", "duration": 10.0, "completed": 1,
                       "num_prompts": 1, "request_throughput": 0.1}).encode()


def test_date_after_spring_forward_is_placed() -> None:
    (run,) = vllm.parse(_dated("20260329-033000"), path="d.json", tz="Europe/Paris")
    # 03:30 CEST (UTC+2, the clocks went 02:00 -> 03:00 that night) = 01:30 UTC
    assert run.ended_at_utc == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)


@pytest.mark.parametrize(("date", "why"), [
    # 02:30 on 2026-03-29 never happened in Paris; replace(tzinfo=) made it 01:30 UTC (+01:00)
    ("20260329-023000", "does not exist"),
    # 02:30 on 2026-10-25 happened twice in Paris (00:30 and 01:30 UTC); it took the first
    ("20261025-023000", "ambiguous"),
])
def test_date_in_a_dst_change_is_refused(date: str, why: str) -> None:
    with pytest.raises(ParseError, match=why) as err:
        vllm.parse(_dated(date), path="d.json", tz="Europe/Paris")
    assert err.value.where == "run 0: key 'date'" and err.value.path == "d.json"


def test_request_rate_infinity_in_a_list_of_runs() -> None:
    # a sweep's summary.json is a list of runs: the same load setting there (found in review)
    data = (FIXTURES / "vllm_append_result.jsonl").read_bytes().split(b"\n")[0].replace(
        b'"request_rate": "inf"', b'"request_rate": Infinity')
    [run] = vllm.parse(b"[" + data + b"]", path="summary.json")
    assert run.request_rate_per_s is None and run.concurrency == 2
