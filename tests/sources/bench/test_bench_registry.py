"""Every benchmark reader has the same shape; detection picks the right one; any bytes give
runs or a ParseError naming the file, never another exception."""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sources.bench.registry import FORMATS, READERS, detect_format, parse_bench
from sources.errors import ParseError

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / ".." / "shared" / "samples"
FIXTURES = ROOT / "tests" / "fixtures" / "bench"


def test_readers_are_shaped_alike() -> None:
    assert set(FORMATS) == {"vllm", "guidellm", "aiperf", "llmperf", "mlperf", "trace",
                            "vllm-metrics", "vllm-metrics-range", "sglang", "trtllm-bench",
                            "genai-perf", "inferencex", "aiperf-csv", "guidellm-csv"}
    for reader in READERS:
        assert isinstance(reader.TOOL, str)
        assert list(inspect.signature(reader.detect).parameters) == ["path_or_bytes"]
        params = inspect.signature(reader.parse).parameters
        assert list(params) == ["data", "path", "tz"]
        assert params["path"].kind is inspect.Parameter.KEYWORD_ONLY
        assert params["tz"].default is None


@pytest.mark.parametrize(("name", "tool"), [
    ("vllm/er0080_bench_serve_v0.25.1.json", "vllm"),
    ("vllm/er0080_bench_serve_all_requests_failed_v0.25.1.json", "vllm"),
    ("vllm/er0080_sweep_maxseqs4_summary.json", "vllm"),
    ("vllm/er0080_sweep_maxseqs4_run0.json", "vllm"),
    ("vllm/InferenceX_fork_benchmark_serving_atom_mtp_tp4_conc64_isl8192_osl1024.json", "vllm"),
    ("guidellm/guidellm_v0.8.0.dev18_report_v2_llm-d-fixture.json", "guidellm"),
    ("aiperf/v0.8.0_mock_profile_export_aiperf.json", "aiperf"),
    ("llmperf/leaderboard_groq_70b_individual_responses.json", "llmperf"),
    ("llmperf/leaderboard_groq_70b_summary.json", "llmperf"),
    ("mlperf/v4.1_AMD_8xMI300X_llama2-70b-99_Server_run_1_mlperf_log_summary.txt", "mlperf"),
    ("mlperf/v4.1_AMD_8xMI300X-TURIN_llama2-70b-99_Server_run_1_mlperf_log_detail_EXCERPT.txt",
     "mlperf"),
    # power logs are not benchmark results
    ("aiperf/qwen_concurrency1_gpu_telemetry_export.jsonl", None),
    ("mlperf/v1.0_Krai_rpi4coral_resnet50_offline_ranging_spl_EXCERPT_first33lines.txt", None),
    ("vllm_metrics/er0080_metrics_vllm_0_25_1_loaded.txt", "vllm-metrics"),
    ("codecarbon/tests_emissions_valid_headers_current.csv", None),
])
def test_detect_and_parse_samples(name: str, tool: str | None) -> None:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"sample {name} absent")
    assert detect_format(path) == tool
    assert detect_format(path.read_bytes()) == tool
    if tool == "vllm-metrics":  # a bare scrape has no time: the message says what to add
        with pytest.raises(ParseError, match="scraped_at"):
            parse_bench(path.read_bytes(), path=str(path))
    elif tool is not None:
        runs = parse_bench(path.read_bytes(), path=str(path))
        assert runs and all(r.tool == tool for r in runs)


#: the UTF-8 byte-order mark Notepad and Excel's "CSV UTF-8" put at the start of a file they save
BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("path", sorted(p for folder in (FIXTURES, SAMPLES)
                                        for p in folder.rglob("*") if p.is_file()),
                         ids=lambda p: "/".join(p.parts[-2:]))
def test_a_byte_order_mark_hides_no_format(path: Path, tmp_path: Path) -> None:
    """The readers decode past a leading BOM ("utf-8-sig"), so detection looks past it too:
    a file re-saved with one is the same format (as bytes and as a file), read to the same
    runs; a file no reader knows stays unknown."""
    data = path.read_bytes()
    marked = tmp_path / path.name
    marked.write_bytes(BOM + data)
    tool = detect_format(data)
    assert detect_format(BOM + data) == tool
    assert detect_format(marked) == tool
    if tool is None or tool == "vllm-metrics":  # a bare scrape: no runs without its time
        return
    plain, bommed = parse_bench(data, path="f"), parse_bench(BOM + data, path="f")
    assert [replace(r, requests=None) for r in bommed] == [
        replace(r, requests=None) for r in plain]
    for a, b in zip(bommed, plain, strict=True):
        assert a.requests is None if b.requests is None else b.requests.equals(a.requests)


def test_fixtures_detected() -> None:
    expected = {"trace_worked_example.jsonl": "trace", "vllm_detailed_small.json": "vllm",
                "vllm_append_result.jsonl": "vllm", "guidellm_v07_small.json": "guidellm",
                "guidellm_v03_small.json": "guidellm",
                "aiperf_run/profile_export.jsonl": "aiperf",
                "aiperf_run/profile_export_aiperf.json": "aiperf"}
    for name, tool in expected.items():
        assert detect_format(FIXTURES / name) == tool, name


def test_detect_fixtures() -> None:
    assert detect_format(FIXTURES / "trace_worked_example.jsonl") == "trace"
    assert detect_format(FIXTURES / "vllm_detailed_small.json") == "vllm"
    assert detect_format(b"hello") is None


def test_unknown_format_message() -> None:
    # the advice fits both places a format is forced
    with pytest.raises(ParseError, match=r"format = \.\.\. in the proposal or --format"):
        parse_bench(b"hello", path="x.txt")
    with pytest.raises(ParseError, match="unknown format"):
        parse_bench(b"{}", path="x.json", fmt="nope")


@settings(max_examples=150, deadline=None)
@given(data=st.one_of(
    st.binary(max_size=300),
    st.text(alphabet='{}[]",:0123456789.e-truefalsnl \n\tabcdurionsmp_', max_size=300).map(
        str.encode),
), fmt=st.sampled_from(sorted(FORMATS)))
def test_any_bytes_give_runs_or_parse_error(data: bytes, fmt: str) -> None:
    try:
        runs = parse_bench(data, path="fuzz.bin", fmt=fmt)
    except ParseError as err:
        assert err.path == "fuzz.bin" and err.where
    else:
        assert isinstance(runs, list)


KEYS = st.sampled_from([
    "duration", "completed", "failed", "ttfts", "itls", "output_lens", "errors", "start_times",
    "date", "request_rate", "max_concurrency", "benchmarks", "start_time", "end_time",
    "config", "strategy", "type_", "requests", "successful", "metrics", "request_totals",
    "metadata", "request_start_ns", "request_end_ns", "value", "unit", "time_to_first_token",
    "benchmark_duration", "request_count", "records", "input_config", "ttft_s",
    "end_to_end_latency_s", "error_code", "results_num_completed_requests", "sent_s", "ok",
    "token_times_s", "done_s", "percentiles", "count", "p50", "avg", "info", "timings",
])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(-1e3, 1e10)
    | st.sampled_from(["inf", "", "ms", "sec", "concurrent", "profiling", "20260816-160853"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children,
                                                                      max_size=6),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None)
@given(value=json_values, fmt=st.sampled_from(sorted(FORMATS)), lines=st.booleans())
def test_any_json_gives_runs_or_parse_error(value: object, fmt: str, lines: bool) -> None:
    import json

    text = json.dumps(value)
    data = (text + "\n" + text).encode() if lines else text.encode()
    try:
        runs = parse_bench(data, path="fuzz.json", fmt=fmt)
    except ParseError as err:
        assert err.path == "fuzz.json" and err.where
    else:
        assert isinstance(runs, list)


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            out += _paths(v, (*prefix, i))
    return out


def _mutated(doc: object, path: tuple, new: object) -> object:
    if not path:
        return new
    head, *rest = path
    if isinstance(doc, dict):
        return {**doc, head: _mutated(doc[head], tuple(rest), new)}
    assert isinstance(doc, list)
    return [_mutated(v, tuple(rest), new) if i == head else v for i, v in enumerate(doc)]


MUTATED = ["vllm_detailed_small.json", "guidellm_v07_small.json", "guidellm_v03_small.json",
           "aiperf_run/profile_export_aiperf.json", "aiperf_run/profile_export.jsonl",
           "trace_worked_example.jsonl"]


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(MUTATED), pick=st.integers(0, 10**6), new=json_values)
def test_one_changed_value_gives_runs_or_parse_error(name: str, pick: int, new: object) -> None:
    """Real-shaped files with one value replaced by any JSON value (a wrong type, a missing
    list, null): a ParseError naming the file and place, or runs; never another exception."""
    import json

    text = (FIXTURES / name).read_text()
    lines = name.endswith(".jsonl")
    doc = [json.loads(x) for x in text.splitlines()] if lines else json.loads(text)
    paths = _paths(doc)[1:] if lines else _paths(doc)  # keep one object per line
    changed = _mutated(doc, paths[pick % len(paths)], new)
    data = ("\n".join(json.dumps(x) for x in changed) if lines  # type: ignore[attr-defined]
            else json.dumps(changed)).encode()
    try:
        runs = parse_bench(data, path="mutant.json")
    except ParseError as err:
        assert err.path == "mutant.json" and err.where
    else:
        assert isinstance(runs, list)
