"""NVIDIA AIPerf `profile_export_aiperf.csv` (0.8): aggregates only.

Two blocks: per-record statistics (`Metric,avg,min,max,sum,p1,...,p99,std`, one row per
metric, its unit in the name: "Time to First Token (ms)") and, after a blank line, the run's
figures (`Metric,Value`: "Benchmark Duration (sec)", "Request Count", "Output Token
Throughput (tokens/sec)", "Minimum Request Timestamp (ns)", "Maximum Response Timestamp
(ns)", ...). Read: TTFT, TPOT (AIPerf's "Inter Token Latency" is per request (e2e - TTFT) /
(N - 1), our TPOT), chunk gaps ("Inter Chunk Latency") and request latency percentiles,
"Effective Concurrency" (its mean, the requests in flight averaged over time); the
window from the two epoch-ns timestamps (UTC), else the benchmark duration on the run's own
clock. The CSV records no load setting: concurrency and rate are unknown (the JSON export
beside it has them). Token basis: generated tokens, reasoning included ("Total Output
Sequence Length", else "Total Output Tokens" + "Total Reasoning Tokens"), the basis of its
"Output Token Throughput".
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sources.bench.jsondoc import decode_text, head, number
from sources.bench.run import BenchRun
from sources.errors import ParseError

TOOL = "aiperf-csv"
_METRICS = {"Time to First Token": "ttft", "Inter Token Latency": "tpot",
            "Inter Chunk Latency": "itl", "Request Latency": "e2e"}
_SCALE = {"ms": 1e-3, "sec": 1.0, "s": 1.0, "us": 1e-6, "ns": 1e-9}
_NAME = re.compile(r"^(.*?) \(([^()]*)\)$")


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes)
    return top.startswith(b"Metric,avg,") and (b"Time to First Token" in top
                                              or b"Request Latency (ms)" in top)


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    text = decode_text(data, TOOL, path)
    stats: dict[str, dict[str, str]] = {}
    values: dict[str, str] = {}
    header: list[str] | None = None
    for n, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not any(cell.strip() for cell in row):
            header = None
            continue
        if row[0] == "Metric":
            header = row
            continue
        if header is None:
            raise ParseError(TOOL, path, f"line {n}", "a row before any 'Metric,...' header")
        if header[1:] == ["Value"]:
            values[row[0]] = row[1] if len(row) > 1 else ""
        else:
            stats[row[0]] = dict(zip(header[1:], row[1:], strict=False))

    def value(name: str) -> float | None:
        cell = values.get(name, "").strip()
        return number(cell or None, TOOL, path, f"{name!r}")

    reported: dict[str, float | int | None] = {}
    for name, cells in stats.items():
        match = _NAME.match(name)
        if not match or match.group(1) not in _METRICS or match.group(2) not in _SCALE:
            continue
        metric, scale = _METRICS[match.group(1)], _SCALE[match.group(2)]
        for key, cell in cells.items():
            out = "mean" if key == "avg" else key if re.fullmatch(r"p\d+", key) else None
            if out is None or not cell.strip():
                continue
            figure = number(cell, TOOL, path, f"{name!r} {key}")
            reported[f"{metric}_{out}_s"] = None if figure is None else figure * scale
    count = value("Request Count")
    duration = value("Benchmark Duration (sec)")
    if count is None or duration is None:
        raise ParseError(TOOL, path, "'Metric,Value' block",
                         "no 'Request Count' or 'Benchmark Duration (sec)'")
    effective = stats.get("Effective Concurrency", {}).get("avg", "").strip()
    if effective:  # the time-average of requests in flight, AIPerf's own
        reported["concurrency_mean"] = number(effective, TOOL, path, "'Effective Concurrency' avg")
    reported.update(completed=int(count), duration_s=duration,
                    output_tokens_per_s=value("Output Token Throughput (tokens/sec)"),
                    request_throughput_per_s=value("Request Throughput (requests/sec)"),
                    total_output_tokens=_total_generated(value))
    first, last = (value("Minimum Request Timestamp (ns)"),
                   value("Maximum Response Timestamp (ns)"))
    notes = ["AIPerf CSV export: aggregates only; no load setting recorded (concurrency and "
             "rate are in the JSON export)"]
    started = ended = None
    if first is not None and last is not None and last >= first:
        started = datetime.fromtimestamp(first / 1e9, UTC)
        ended = datetime.fromtimestamp(last / 1e9, UTC)
        notes.append("window first request .. last response (epoch ns, UTC)")
    return [BenchRun(
        tool=TOOL, path=path, run_index=0, requests=None,
        reported={k: v for k, v in reported.items() if v is not None},
        window_start_s=0.0, window_end_s=duration, duration_s=duration,
        started_at_utc=started, ended_at_utc=ended,
        clock_uncertainty_s=0.001 if started else None, itl_definition="chunk",
        tpot_definition="last_minus_first_over_n_minus_1", notes=tuple(notes))]


def _total_generated(value: Callable[[str], float | None]) -> int | None:
    osl = value("Total Output Sequence Length (tokens)")
    if osl is not None:
        return int(osl)
    visible, reasoning = (value("Total Output Tokens (tokens)"),
                          value("Total Reasoning Tokens (tokens)"))
    if visible is None and reasoning is None:
        return None
    return int((visible or 0) + (reasoning or 0))
