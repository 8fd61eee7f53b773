"""SGLang `python -m sglang.bench_serving --output-file` results: one JSON object per line
(JSONL, one line per run), aggregates only.

Keys read: `backend` (the server's engine), `request_rate` ("inf" or a number: the load of an
online sweep), `max_concurrency`, `duration` (s: the window), `completed`,
`total_output_tokens`, `output_throughput`, `request_throughput`, and every
`{mean,median,std,pNN}_{ttft,tpot,itl,e2e_latency}_ms` key (ms -> s, median -> p50). The
Dec 2024 schema has only means and medians (so the percentile bound proves at most half the
requests pass); later versions add p99s. SGLang's `itl` is the gap between streamed chunks,
its `tpot` (e2e - TTFT) / (N - 1) per request, as ours. Told from vLLM's files by the keys
vLLM never writes (`mean_e2e_latency_ms`, `total_output_tokens_retokenized`,
`sharegpt_output_len`, `random_input_len`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from sources.bench.jsondoc import head, integer, json_values, number
from sources.bench.run import BenchRun
from sources.bench.summary import summary_run
from sources.errors import ParseError

TOOL = "sglang"
_MARKERS = (b'"mean_e2e_latency_ms"', b'"total_output_tokens_retokenized"',
            b'"sharegpt_output_len"', b'"random_input_len"')
_KEY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2e_latency)_ms$")
_METRIC = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2e_latency": "e2e"}


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes).lstrip()
    return top.startswith(b"{") and b'"duration"' in top and any(m in top for m in _MARKERS)


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    runs = []
    for index, doc in enumerate(json_values(data, TOOL, path, settings=("request_rate",))):
        if not isinstance(doc, dict):
            raise ParseError(TOOL, path, f"line {index + 1}", "expected a JSON object")

        def where(key: str, index: int = index) -> str:
            return f"run {index}: key {key!r}"

        for key in ("duration", "completed"):
            if key not in doc:
                raise ParseError(TOOL, path, where(key), "missing: not an SGLang result")
        duration = number(doc["duration"], TOOL, path, where("duration"))
        if duration is None or duration <= 0:
            raise ParseError(TOOL, path, where("duration"), f"bad duration {doc['duration']!r}")
        reported: dict[str, float | int | None] = {
            "completed": integer(doc["completed"], TOOL, path, where("completed")),
            "duration_s": duration,
            "total_output_tokens": integer(doc.get("total_output_tokens"), TOOL, path,
                                           where("total_output_tokens")),
            "output_tokens_per_s": number(doc.get("output_throughput"), TOOL, path,
                                          where("output_throughput")),
            "request_throughput_per_s": number(doc.get("request_throughput"), TOOL, path,
                                               where("request_throughput")),
        }
        for key, value in doc.items():
            match = _KEY.match(key)
            if match:
                stat = "p50" if match.group(1) == "median" else match.group(1)
                ms = number(value, TOOL, path, where(key))
                reported[f"{_METRIC[match.group(2)]}_{stat}_s"] = None if ms is None else ms / 1e3
        rate_raw = doc.get("request_rate")
        rate = None if isinstance(rate_raw, str) and rate_raw.lower() in ("inf", "infinity") \
            else number(rate_raw, TOOL, path, where("request_rate"))
        if rate is not None and math.isinf(rate):
            rate = None
        backend = doc.get("backend")
        runs.append(summary_run(
            TOOL, path, index, reported,
            concurrency=integer(doc.get("max_concurrency"), TOOL, path,
                                where("max_concurrency")),
            rate=rate, duration=duration,
            model=doc.get("model_id") if isinstance(doc.get("model_id"), str) else None,
            params={"engine": backend} if isinstance(backend, str) else {},
            notes=["SGLang bench_serving: aggregates only; window = duration on the run's own "
                   "clock"], itl="chunk", tpot="last_minus_first_over_n_minus_1"))
    return runs
