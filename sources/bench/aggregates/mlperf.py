"""MLPerf Inference loadgen logs: `mlperf_log_summary.txt` and `mlperf_log_detail.txt`.

Both hold aggregates only (per-query timing would need `mlperf_log_trace.json`), so every run
is aggregate-only: goodput under our SLO cannot be recomputed. The summary's `Key : value`
lines give completed samples (queries) and tokens per second, the latency, first-token and
time-to-output-token (= per-query TPOT) percentiles in ns, the scenario, `target_qps` (the
Server scenario's Poisson rate) and the TTFT/TPOT constraints (on the p99, kept as
`constraint_ttft_p99_s`/`constraint_tpot_p99_s`, with `result_valid` 1/0). The detail log's
`:::MLLOG` JSON lines give the same `result_*` figures plus `result_query_count` and `power_begin`/
`power_end` (`MM-DD-YYYY HH:MM:SS.fff`, UTC in current loadgen; `tz` overrides for old logs,
and a time that a DST change skips or repeats there is an error), which bound the run in
time. `result_token_throughput` is ignored (a bogus 6.8e-09 in real logs).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from sources.bench.jsondoc import decode_text, head, number
from sources.bench.run import BenchRun
from sources.errors import ParseError
from sources.timezone import local_to_utc, require_zone

TOOL = "mlperf"

_LINE = re.compile(r"^\s*([\w\s.()/]+?)\s*:\s*(\S.*?)\s*$")
_PCT = re.compile(r"^(\d+(?:\.\d+)?) percentile (latency|first token latency|time to output "
                  r"token) \(ns\)$", re.IGNORECASE)
_DETAIL_PCT = re.compile(r"^result_(first_token_|time_per_output_token_)?(\d+\.\d+)_percentile_"
                         r"(latency_)?ns$")
_NAMES = {"latency": "e2e", "first token latency": "ttft", "time to output token": "tpot",
          "": "e2e", "first_token_": "ttft", "time_per_output_token_": "tpot"}
_QUANTILES = {"50.00": "p50", "90.00": "p90", "95.00": "p95", "97.00": "p97", "99.00": "p99",
              "99.90": "p99.9"}


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes)
    return b"MLPerf Results Summary" in top or top.lstrip().startswith(b":::MLLOG")


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    text = decode_text(data, TOOL, path)
    if text.lstrip().startswith(":::MLLOG"):
        return [_detail(text, path, tz)]
    if "MLPerf Results Summary" not in text:
        raise ParseError(TOOL, path, "line 1", "neither an MLPerf summary nor a detail log")
    return [_summary(text, path)]


def _summary(text: str, path: str) -> BenchRun:
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            values.setdefault(match.group(1).strip(), match.group(2))
    reported: dict[str, float | int | None] = {}

    def num(key: str) -> float | None:
        return number(values.get(key), TOOL, path, f"{key!r}") if key in values else None

    reported["request_throughput_per_s"] = num("Completed samples per second")
    reported["output_tokens_per_s"] = num("Completed tokens per second")
    for key, value in values.items():
        match = _PCT.match(key)
        if match and match.group(1) in _QUANTILES:
            ns = number(value, TOOL, path, f"{key!r}")
            reported[f"{_NAMES[match.group(2).lower()]}_{_QUANTILES[match.group(1)]}_s"] = (
                None if ns is None else ns / 1e9)
    for key, name in (("Mean latency (ns)", "e2e"), ("Mean First Token latency (ns)", "ttft"),
                      ("Mean Time to Output Token (ns)", "tpot")):
        ns = num(key)
        if ns is not None:
            reported[f"{name}_mean_s"] = ns / 1e9
    scenario = values.get("Scenario")
    notes = [f"MLPerf {scenario or 'unknown'} scenario, result {values.get('Result is')}: "
             "aggregates only, no per-query data"]
    for key in ("ttft_latency (ns)", "tpot_latency (ns)"):
        limit = num(key)
        if limit is not None:
            notes.append(f"constraint {key.split(' ')[0]} = {limit / 1e6:g} ms (on a "
                         "percentile, not per request)")
    for key, name in (("ttft_latency (ns)", "constraint_ttft_p99_s"),
                      ("tpot_latency (ns)", "constraint_tpot_p99_s")):
        limit = num(key)
        if limit is not None:
            reported[name] = limit / 1e9
    reported["result_valid"] = _valid(values.get("Result is"))
    rate = num("target_qps") if scenario == "Server" else None
    if not reported["request_throughput_per_s"] and not reported["output_tokens_per_s"] and \
            not any(k.endswith("_s") for k in reported):
        raise ParseError(TOOL, path, "Additional Stats", "no results found")
    return BenchRun(
        tool=TOOL, path=path, run_index=0, requests=None, reported=reported,
        request_rate_per_s=rate, itl_definition="none", tpot_definition="aggregate_only",
        label=values.get("SUT name"), notes=tuple(notes),
        params={"scenario": str(scenario)} if scenario else {},
    )


def _valid(text: object) -> int | None:
    """1 for a VALID result, 0 for INVALID, None when the log does not say."""
    if not isinstance(text, str):
        return None
    return {"VALID": 1, "INVALID": 0}.get(text.strip().upper())


def _detail(text: str, path: str, tz: str | None) -> BenchRun:
    entries: dict[str, Any] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if not line.startswith(":::MLLOG"):
            raise ParseError(TOOL, path, f"line {n}", "expected a ':::MLLOG {json}' line")
        try:
            entry = json.loads(line[len(":::MLLOG"):])
        except json.JSONDecodeError as err:
            raise ParseError(TOOL, path, f"line {n} column {err.colno + 8}",
                             f"invalid JSON: {err.msg}") from None
        if not isinstance(entry, dict) or "key" not in entry:
            raise ParseError(TOOL, path, f"line {n}", "expected an object with 'key'")
        entries.setdefault(str(entry["key"]), entry.get("value"))

    def num(key: str) -> float | None:
        return number(entries.get(key), TOOL, path, f"key {key!r}")

    queries = num("result_query_count")
    reported: dict[str, float | int | None] = {
        "offered": None if queries is None else int(queries),
        "request_throughput_per_s": num("result_completed_samples_per_sec"),
        "output_tokens_per_s": num("result_completed_tokens_per_second"),
    }
    for key in entries:
        match = _DETAIL_PCT.match(key)
        if match and match.group(2) in _QUANTILES:
            ns = num(key)
            name = _NAMES[match.group(1) or ""]
            reported[f"{name}_{_QUANTILES[match.group(2)]}_s"] = None if ns is None else ns / 1e9
    for key, name in (("result_mean_latency_ns", "e2e"),
                      ("result_first_token_mean_latency_ns", "ttft"),
                      ("result_time_to_output_token_mean", "tpot")):
        ns = num(key)
        if ns is not None:
            reported[f"{name}_mean_s"] = ns / 1e9
    for key, name in (("requested_server_ttft_latency", "constraint_ttft_p99_s"),
                      ("requested_server_tpot_latency", "constraint_tpot_p99_s")):
        ns = num(key)
        if ns is not None:
            reported[name] = ns / 1e9
    reported["result_valid"] = _valid(entries.get("result_validity"))
    notes = [f"MLPerf detail log, result {entries.get('result_validity')}: aggregates only"]
    started, ended = _power_window(entries, path, tz, notes)
    duration = None if started is None or ended is None else (ended - started).total_seconds()
    reported["duration_s"] = duration
    scenario = entries.get("effective_scenario")
    return BenchRun(
        tool=TOOL, path=path, run_index=0, requests=None, reported=reported,
        window_start_s=0.0 if duration is not None else None, window_end_s=duration,
        duration_s=duration, started_at_utc=started, ended_at_utc=ended,
        clock_uncertainty_s=0.001 if started else None, itl_definition="none",
        tpot_definition="aggregate_only",
        params={"scenario": str(scenario)} if scenario else {}, notes=tuple(notes),
    )


def _power_window(entries: dict[str, Any], path: str, tz: str | None, notes: list[str]
                  ) -> tuple[datetime | None, datetime | None]:
    begin, end = entries.get("power_begin"), entries.get("power_end")
    if not isinstance(begin, str) or not isinstance(end, str):
        notes.append("no power_begin/power_end: the run cannot be placed in time")
        return None, None
    zone = require_zone(tz or "UTC", source=TOOL, path=path, where="--tz")
    out = []
    for key, value in (("power_begin", begin), ("power_end", end)):
        try:
            naive = datetime.strptime(value, "%m-%d-%Y %H:%M:%S.%f")  # noqa: DTZ007
        except ValueError:
            raise ParseError(TOOL, path, f"key {key!r}",
                             f"expected MM-DD-YYYY HH:MM:SS.fff, got {value!r}") from None
        out.append(local_to_utc(naive, zone, source=TOOL, path=path, where=f"key {key!r}"))
    if out[1] < out[0]:
        raise ParseError(TOOL, path, "key 'power_end'", "before power_begin")
    notes.append(f"window power_begin..power_end read as {tz or 'UTC (current loadgen)'}")
    return out[0], out[1]
