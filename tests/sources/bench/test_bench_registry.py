"""Every benchmark reader has the same shape; detection picks the right one; any bytes give
runs or a ParseError naming the file, never another exception."""

from __future__ import annotations

import inspect
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
    assert set(FORMATS) == {"vllm", "guidellm", "aiperf", "llmperf", "mlperf", "trace"}
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
])
def test_detect_samples(name: str, tool: str) -> None:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"sample {name} absent")
    assert detect_format(path) == tool
    assert detect_format(path.read_bytes()) == tool


def test_detect_fixtures() -> None:
    assert detect_format(FIXTURES / "trace_worked_example.jsonl") == "trace"
    assert detect_format(FIXTURES / "vllm_detailed_small.json") == "vllm"
    assert detect_format(b"hello") is None


def test_unknown_format_message() -> None:
    with pytest.raises(ParseError, match="--format"):
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
