"""TensorRT-LLM `trtllm-bench latency|throughput --report_json` reports (1.x): one run,
aggregates only.

Read: `engine` (model, version, backend, dtype, quantization, kv_cache_dtype),
`world_info` (tp_size, pp_size, ep_size, world_size, max_batch_size, max_num_tokens: the
configuration), `request_info` (num_requests, avg_num_concurrent_requests: the load, rounded
to the concurrency), `performance` (total_latency_ms: the window; request and output
throughput; request latency percentiles in ms), `streaming_metrics` (ttft_percentiles and
tpot_percentiles in ms, p50/p90/p95/p99), when the run streamed; `machine.name` (the GPU
nvidia-smi names, kept as the `accelerator` setting). trtllm-bench's TPOT is
(e2e - TTFT) / (N - 1) per request, as ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sources.bench.jsondoc import head, integer, number
from sources.bench.run import BenchRun
from sources.bench.summary import one_object, summary_run
from sources.errors import ParseError

TOOL = "trtllm-bench"
_PCTS = ("p50", "p90", "p95", "p99")


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes).lstrip()
    return top.startswith(b"{") and b'"world_info"' in top and b'"request_info"' in top


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    doc = one_object(data, TOOL, path)

    def table(key: str) -> dict[str, Any]:
        value = doc.get(key) or {}
        if not isinstance(value, dict):
            raise ParseError(TOOL, path, f"key {key!r}", "expected an object")
        return value

    engine, world, info = table("engine"), table("world_info"), table("request_info")
    perf, stream = table("performance"), table("streaming_metrics")

    def num(group: dict[str, Any], name: str, key: str) -> float | None:
        return number(group.get(key), TOOL, path, f"{name}.{key}")

    total_ms = num(perf, "performance", "total_latency_ms")
    if total_ms is None or total_ms <= 0:
        raise ParseError(TOOL, path, "performance.total_latency_ms", "missing or not positive")
    requests = integer(info.get("num_requests"), TOOL, path, "request_info.num_requests")
    reported: dict[str, float | int | None] = {
        "completed": requests, "offered": requests, "duration_s": total_ms / 1e3,
        "request_throughput_per_s": num(perf, "performance", "request_throughput_req_s"),
        "output_tokens_per_s": num(perf, "performance", "system_output_throughput_tok_s"),
    }
    for group, name, metric in ((stream.get("ttft_percentiles"), "ttft_percentiles", "ttft"),
                                (stream.get("tpot_percentiles"), "tpot_percentiles", "tpot"),
                                (perf.get("request_latency_percentiles_ms"),
                                 "request_latency_percentiles_ms", "e2e")):
        if isinstance(group, dict):
            for q in _PCTS:
                ms = number(group.get(q), TOOL, path, f"{name}.{q}")
                reported[f"{metric}_{q}_s"] = None if ms is None else ms / 1e3
            mean = number(group.get("average"), TOOL, path, f"{name}.average")
            reported[f"{metric}_mean_s"] = None if mean is None else mean / 1e3
    concurrent = num(info, "request_info", "avg_num_concurrent_requests")
    params = {k: str(v) for k, v in {
        "engine": "tensorrt-llm", "engine_version": engine.get("version"),
        "precision": engine.get("quantization") or engine.get("dtype"),
        "tp": world.get("tp_size"), "pp": world.get("pp_size"), "ep": world.get("ep_size"),
        "gpu_count": world.get("world_size"), "max_num_seqs": world.get("max_batch_size"),
        "max_num_batched_tokens": world.get("max_num_tokens"),
        "trtllm_backend": engine.get("backend"), "kv_cache_dtype": engine.get("kv_cache_dtype"),
        "accelerator": table("machine").get("name"),
    }.items() if v is not None}
    notes = [f"trtllm-bench report (TensorRT-LLM {engine.get('version')}, backend "
             f"{engine.get('backend')}): aggregates only; window = total_latency_ms"]
    if concurrent is not None:
        notes.append(f"concurrency {round(concurrent)} from avg_num_concurrent_requests "
                     f"{concurrent:.4g}")
    if not stream:
        notes.append("no streaming_metrics (not streamed): no TTFT or TPOT percentiles")
    model = engine.get("model")
    return [summary_run(
        TOOL, path, 0, reported, concurrency=None if concurrent is None else max(1, round(
            concurrent)), duration=total_ms / 1e3,
        model=model if isinstance(model, str) else None, params=params, notes=notes,
        tpot="last_minus_first_over_n_minus_1")]
