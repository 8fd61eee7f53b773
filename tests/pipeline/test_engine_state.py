"""vLLM's own KV cache and queue as production evidence (issue 28 item 5): the start-up log's
GPU blocks x block size, and the /metrics gauges and counters (waiting, running, KV-cache
usage, preemptions), shown by `scorecard evidence inspect`. Fixtures: the real /metrics
scrapes of ../shared/samples/vllm_metrics (PROVENANCE.md) and hand-written logs in
tests/fixtures/engine_state (their README says where each line format comes from)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pipeline.cli.evidence import evidence_app
from pipeline.evidence.engine_state import engine_state, metrics_state, startup_log
from sources.errors import ParseError
from tests.samples import sample

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "engine_state"

app = typer.Typer()
app.add_typer(evidence_app, name="evidence")


def test_a_real_metrics_scrape_under_load():
    # vLLM 0.25.1 with 128 requests in flight: cache_config_info num_gpu_blocks 25,028 x
    # block_size 16 = 400,448 tokens (its own kv_cache_size_tokens label says 400,448);
    # num_requests_running 64, num_requests_waiting 64 (max_num_seqs, not the KV cache: usage
    # 0.1122), num_preemptions_total 0
    path = sample("vllm_metrics/er0080_metrics_vllm_0_25_1_loaded.txt")
    got = metrics_state(path.read_bytes(), path=str(path))
    assert (got["gpu_blocks"], got["block_size_tokens"]) == (25_028, 16)
    assert got["kv_capacity_tokens"] == 400_448
    assert (got["requests_running"], got["requests_waiting"]) == (64, 64)
    assert got["kv_cache_usage"] == pytest.approx(0.11223878211531546)
    assert got["preemptions"] == 0
    assert any("not the KV cache" in n for n in got["notes"])


def test_preemptions_over_the_window_of_two_scrapes():
    # num_preemptions_total 3 -> 15 over 5 minutes: 12 preemptions; waiting 0 then 5 (max 5);
    # the pre-0.11 gpu_cache_usage_perc 0.71 then 0.97 (max 0.97: the KV budget binds)
    path = FIXTURES / "metrics_two_scrapes.txt"
    got = metrics_state(path.read_bytes(), path=str(path))
    assert got["scrapes"] == 2
    assert got["preemptions"] == 12
    assert (got["requests_waiting"], got["requests_waiting_max"]) == (5, 5)
    assert got["kv_cache_usage_max"] == pytest.approx(0.97)
    assert got["kv_capacity_tokens"] is None  # no cache_config_info in these scrapes
    assert any("12 preemptions" in n for n in got["notes"])
    assert any("the KV budget binds" in n for n in got["notes"])


TWO_ENGINES = b"""# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="qwen"} 48.0
vllm:num_requests_running{engine="1",model_name="qwen"} 52.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="qwen"} 0.0
vllm:num_requests_waiting{engine="1",model_name="qwen"} 5.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="qwen"} 0.71
vllm:kv_cache_usage_perc{engine="1",model_name="qwen"} 0.97
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="qwen"} 3.0
vllm:num_preemptions_total{engine="1",model_name="qwen"} 15.0
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="qwen"} 100000.0
vllm:generation_tokens_total{engine="1",model_name="qwen"} 90000.0
"""


def test_kv_usage_is_the_fullest_engines_and_the_counts_are_summed():
    # two engines in one scrape: KV usage 0.71 and 0.97 is a share of each engine's own
    # cache, so the state's is the fullest, 0.97 (summed it printed 0.71 + 0.97 = 194 %);
    # running 48 + 52 = 100, waiting 0 + 5 = 5, preemptions since start 3 + 15 = 18
    got = metrics_state(TWO_ENGINES, path="two_engines.txt")
    assert got["kv_cache_usage"] == pytest.approx(0.97)
    assert got["kv_cache_usage_max"] == pytest.approx(0.97)
    assert (got["requests_running"], got["requests_waiting"]) == (100, 5)
    assert got["preemptions"] == 18


def test_a_v0_startup_log_with_its_block_size():
    # "# GPU blocks: 7403" with block_size=32 in the engine arguments: 7,403 x 32 = 236,896
    # tokens; its "Maximum concurrency for 8192 tokens per request: 28.92x" agrees
    # (236,896 / 8,192 = 28.918)
    path = FIXTURES / "v0_startup.log"
    got = startup_log(path.read_bytes(), path=str(path))
    assert (got["gpu_blocks"], got["cpu_blocks"], got["block_size_tokens"]) == (7403, 2048, 32)
    assert got["kv_capacity_tokens"] == 236_896
    assert (got["max_concurrency"], got["max_concurrency_request_tokens"]) == (28.92, 8192)
    assert got["vllm_version"] == "0.6.3"


def test_a_v1_startup_log_gives_the_tokens_itself():
    path = FIXTURES / "v1_startup.log"
    got = startup_log(path.read_bytes(), path=str(path))
    assert got["gpu_blocks"] is None
    assert got["kv_capacity_tokens"] == 400_448


def test_a_block_size_the_concurrency_contradicts_is_refused():
    # 7,403 blocks x the default 16 / 8,192 = 14.46, not the logged 28.92x: refused, naming
    # the line
    path = FIXTURES / "wrong_block_size.log"
    with pytest.raises(ParseError, match=r"line 2.*not 16"):
        startup_log(path.read_bytes(), path=str(path))


def test_inspect_shows_the_engine_state():
    result = CliRunner().invoke(app, ["evidence", "inspect", str(FIXTURES / "v0_startup.log"),
                                      "--json"])
    assert result.exit_code == 0, result.stderr
    (state,) = json.loads(result.stdout)["engine_state"]
    assert state["kv_capacity_tokens"] == 236_896
    text = CliRunner().invoke(app, ["evidence", "inspect", str(FIXTURES / "v0_startup.log")])
    assert "KV capacity 236,896 tokens = 7,403 blocks x 32" in text.stdout
    bad = CliRunner().invoke(app, ["evidence", "inspect",
                                   str(FIXTURES / "wrong_block_size.log")])
    assert bad.exit_code == 1
    assert "wrong_block_size.log" in bad.stderr


def test_inspect_adds_the_state_beside_the_metrics_run():
    path = sample("vllm_metrics/er0080_metrics_vllm_0_25_1_loaded.txt")
    result = CliRunner().invoke(app, ["evidence", "inspect", str(path), "--json",
                                      "--scraped-at", "2026-12-01T00:00:00Z"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["runs"] and report["engine_state"][0]["requests_waiting"] == 64
    assert engine_state([path])[0]["kv_capacity_tokens"] == 400_448


def test_inspect_of_start_up_logs_alone_keeps_the_json_contract(tmp_path: Path):
    # DESIGN section 9: `evidence inspect --json` prints {"runs": [...], "sweep": ... or
    # null}; start-up logs alone hold no run and no sweep (the keys were missing)
    result = CliRunner().invoke(app, ["evidence", "inspect", str(FIXTURES / "v0_startup.log"),
                                      "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["runs"], doc["sweep"]) == ([], None)
    assert doc["engine_state"][0]["kv_capacity_tokens"] == 236_896  # 7,403 x 32


def test_a_start_up_log_in_a_folder_is_not_said_to_be_skipped(tmp_path: Path):
    # a folder with a start-up log and a vLLM bench result: the log is read as the engine
    # state, so the run's notes must not call it "skipped (not a benchmark format ...)"
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "v0_startup.log").write_bytes((FIXTURES / "v0_startup.log").read_bytes())
    bench = Path(__file__).resolve().parents[1] / "fixtures" / "bench" / "vllm_detailed_small.json"
    (folder / "bench.json").write_bytes(bench.read_bytes())
    result = CliRunner().invoke(app, ["evidence", "inspect", str(folder), "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["engine_state"][0]["kv_capacity_tokens"] == 236_896
    assert len(doc["runs"]) == 1
    assert "v0_startup.log: skipped" not in result.stdout
    assert "v0_startup.log: a vLLM start-up log" in result.stdout
