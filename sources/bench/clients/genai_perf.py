"""NVIDIA GenAI-Perf `profile_export_genai_perf.json` exports: one run, aggregates only.

Each metric is `{"unit": ..., "avg": ..., "p50": ..., "p99": ...}`: `time_to_first_token` and
`inter_token_latency` (GenAI-Perf's ITL is per request (e2e - TTFT) / (N - 1), that is our
TPOT) and `request_latency` in ms; `request_count.avg` the completed requests;
`request_throughput` and `output_token_throughput` their rates, so the window is
request_count / request_throughput (derived, said in the notes). The load is
`input_config.concurrency` / `request_rate` (the flat CLI config) or
`input_config.perf_analyzer.stimulus` (the nested YAML config of later versions); the model
`input_config.model` or `model_names`. `telemetry_stats` (per-GPU DCGM figures) are not read
here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sources.bench.jsondoc import head, integer, number
from sources.bench.run import BenchRun
from sources.bench.summary import one_object, summary_run
from sources.errors import ParseError

TOOL = "genai-perf"
_METRICS = {"time_to_first_token": "ttft", "inter_token_latency": "tpot",
            "request_latency": "e2e"}
_SCALE = {"ms": 1e-3, "s": 1.0, "us": 1e-6, "ns": 1e-9}


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes).lstrip()
    return top.startswith(b"{") and b'"input_config"' in top and (
        b'"time_to_first_token"' in top or b'"request_latency"' in top) and (
        b'"benchmark_duration"' not in top and b'"aiperf_version"' not in top)


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    doc = one_object(data, TOOL, path)

    def stat(metric: str, key: str) -> float | None:
        group = doc.get(metric)
        if group is None:
            return None
        if not isinstance(group, dict):
            raise ParseError(TOOL, path, f"key {metric!r}", "expected an object")
        return number(group.get(key), TOOL, path, f"{metric}.{key}")

    reported: dict[str, float | int | None] = {}
    for metric, name in _METRICS.items():
        group = doc.get(metric)
        if not isinstance(group, dict):
            continue
        unit = group.get("unit", "ms")
        if unit not in _SCALE:
            raise ParseError(TOOL, path, f"{metric}.unit", f"unknown time unit {unit!r}")
        for key in group:
            if key == "avg" or (key.startswith("p") and key[1:].replace(".", "").isdigit()):
                value = stat(metric, key)
                out = "mean" if key == "avg" else key
                reported[f"{name}_{out}_s"] = None if value is None else value * _SCALE[unit]
    count = stat("request_count", "avg")
    rate = stat("request_throughput", "avg")
    if count is None or not rate:
        raise ParseError(TOOL, path, "request_count / request_throughput",
                         "missing: the window cannot be known")
    duration = count / rate
    reported.update(completed=int(count), duration_s=duration, request_throughput_per_s=rate,
                    output_tokens_per_s=stat("output_token_throughput", "avg"))
    config = doc.get("input_config") or {}
    if not isinstance(config, dict):
        raise ParseError(TOOL, path, "key 'input_config'", "expected an object")
    stimulus = ((config.get("perf_analyzer") or {}).get("stimulus") or {}) \
        if isinstance(config.get("perf_analyzer"), dict) else {}
    load: dict[str, Any] = {**stimulus, **{k: config[k] for k in ("concurrency", "request_rate")
                                           if config.get(k) is not None}}
    models = config.get("model") or config.get("model_names") or []
    model = models[0] if isinstance(models, list) and models and isinstance(models[0], str) \
        else None
    return [summary_run(
        TOOL, path, 0, reported,
        concurrency=integer(load.get("concurrency"), TOOL, path, "input_config.concurrency"),
        rate=number(load.get("request_rate"), TOOL, path, "input_config.request_rate"),
        duration=duration, model=model,
        notes=["GenAI-Perf export: aggregates only; window = request_count / "
               "request_throughput (derived); its inter_token_latency is our TPOT"],
        tpot="last_minus_first_over_n_minus_1")]
