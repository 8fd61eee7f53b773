"""LLMPerf (ray-project/llmperf, results version "2023-08-31"): `*_individual_responses.json`
and `*_summary.json`.

Individual responses: a JSON list of `error_code` (null = success; an HTTP status, -1, or the
leaderboard's -100 "Output too few tokens"), `ttft_s`, `end_to_end_latency_s`,
`number_output_tokens` (re-counted with a Llama tokenizer, not the served model's),
`number_input_tokens`. There are no request timestamps and no token times: the run's window
comes from the summary (duration = completed / (completed per min / 60), ending at its
`timestamp`), so an individual file given alone has no window and no goodput. Our TPOT is
(e2e - TTFT) / (N - 1), taking the end of the response as the last token; LLMPerf's own
`inter_token_latency_s` is e2e / N (it includes the TTFT) and is not used as TPOT.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from sources.bench.jsondoc import head, integer, json_values, number, paired_name
from sources.bench.run import BenchRun, conform
from sources.errors import ParseError

TOOL = "llmperf"

_QUANTILES = ("p50", "p90", "p95", "p99")


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes)
    body = top.lstrip()
    if body.startswith(b"[") and b'"end_to_end_latency_s"' in top and b'"ttft_s"' in top:
        return True
    return body.startswith(b"{") and (b'"results_ttft_s_' in top
                                      or b'"results_num_completed_requests"' in top)


def partner(name: str) -> str | None:
    """X_individual_responses.json <-> X_summary.json."""
    return paired_name(name, ("_individual_responses.json", "_summary.json"))


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    values = json_values(data, TOOL, path)
    if len(values) != 1:
        raise ParseError(TOOL, path, "top level", "expected one JSON value")
    doc = values[0]
    if isinstance(doc, list):
        return [_individual(doc, path)]
    if isinstance(doc, dict):
        return [_summary(doc, path)]
    raise ParseError(TOOL, path, "top level", "expected a list of responses or a summary")


def combine(individual: BenchRun, summary: BenchRun) -> BenchRun:
    """Per-request rows of `individual` in the window and with the aggregates of `summary`."""
    return replace(
        individual, reported=dict(summary.reported), concurrency=summary.concurrency,
        window_start_s=summary.window_start_s, window_end_s=summary.window_end_s,
        duration_s=summary.duration_s, started_at_utc=summary.started_at_utc,
        ended_at_utc=summary.ended_at_utc, clock_uncertainty_s=summary.clock_uncertainty_s,
        model=summary.model,
        notes=(*individual.notes[1:], *summary.notes,
               f"window and aggregates from {summary.path}"),
    )


def _individual(items: list[Any], path: str) -> BenchRun:
    rows = []
    for i, r in enumerate(items):
        where = f"[{i}]"
        if not isinstance(r, dict):
            raise ParseError(TOOL, path, where, "expected a response object")
        if "end_to_end_latency_s" not in r and "error_code" not in r:
            raise ParseError(TOOL, path, where, "not an LLMPerf response (no "
                             "end_to_end_latency_s, no error_code)")
        code = integer(r.get("error_code"), TOOL, path, f"{where}.error_code")
        msg = r.get("error_msg")
        rows.append((
            str(i),
            number(r.get("ttft_s"), TOOL, path, f"{where}.ttft_s"),
            number(r.get("end_to_end_latency_s"), TOOL, path, f"{where}.end_to_end_latency_s"),
            integer(r.get("number_output_tokens"), TOOL, path, f"{where}.number_output_tokens"),
            integer(r.get("number_input_tokens"), TOOL, path, f"{where}.number_input_tokens"),
            code is None,
            None if code is None else f"{code}: {msg}" if msg else str(code),
        ))
    if not rows:
        raise ParseError(TOOL, path, "top level", "empty list of responses")
    raw = pl.DataFrame(rows, orient="row", schema={
        "request_id": pl.String(), "ttft": pl.Float64(), "e2e": pl.Float64(),
        "out": pl.Int64(), "inp": pl.Int64(), "ok": pl.Boolean(), "error": pl.String()})
    ok = pl.col("ok")
    frame = conform(raw.select(
        request_id=pl.col("request_id"),
        ttft_s=pl.when(ok).then(pl.col("ttft")),
        tpot_s=pl.when(ok & (pl.col("out") > 1)).then(
            (pl.col("e2e") - pl.col("ttft")) / (pl.col("out") - 1)),
        e2e_s=pl.when(ok).then(pl.col("e2e")),
        output_tokens=pl.col("out"),
        input_tokens=pl.col("inp"),
        ok=ok,
        incomplete=pl.lit(False),
        error=pl.col("error"),
    ))
    return BenchRun(
        tool=TOOL, path=path, run_index=0, requests=frame, reported={},
        itl_definition="none", tpot_definition="last_minus_first_over_n_minus_1",
        notes=("no request timestamps: the window (and so goodput) needs the *_summary.json",
               "TPOT = (e2e - TTFT) / (N - 1), the end of the response taken as the last token;"
               " N counted by LLMPerf with a Llama tokenizer"),
    )


def _summary(doc: dict[str, Any], path: str) -> BenchRun:
    def num(key: str) -> float | None:
        return number(doc.get(key), TOOL, path, f"key {key!r}")

    completed = num("results_num_completed_requests")
    per_min = num("results_num_completed_requests_per_min")
    if completed is None:
        raise ParseError(TOOL, path, "key 'results_num_completed_requests'",
                         "missing: not an LLMPerf summary")
    notes = [f"LLMPerf results version {doc.get('version')}"]
    duration = completed / (per_min / 60.0) if per_min else None
    reported: dict[str, float | int | None] = {
        "completed": int(completed),
        "offered": integer(doc.get("results_num_requests_started"), TOOL, path,
                           "key 'results_num_requests_started'"),
        "failed": integer(doc.get("results_number_errors"), TOOL, path,
                          "key 'results_number_errors'"),
        "duration_s": duration,
        "output_tokens_per_s": num("results_mean_output_throughput_token_per_s"),
        "request_throughput_per_s": None if per_min is None else per_min / 60.0,
    }
    for name, metric in (("ttft", "ttft_s"), ("e2e", "end_to_end_latency_s")):
        for q in _QUANTILES:
            reported[f"{name}_{q}_s"] = num(f"results_{metric}_quantiles_{q}")
        reported[f"{name}_mean_s"] = num(f"results_{metric}_mean")
    notes.append("LLMPerf's inter_token_latency_s is e2e / N (includes TTFT): not used as TPOT")
    ended = started = None
    timestamp = num("timestamp")
    if timestamp is not None and duration is not None:
        ended = datetime.fromtimestamp(timestamp, UTC)
        started = ended - timedelta(seconds=duration)
        notes.append("window derived: duration = completed / (completed per min / 60), ending "
                     "at the summary's timestamp (set when saved, 1 s resolution)")
    else:
        notes.append("no timestamp or completion rate: the run cannot be placed in time")
    model = doc.get("model")
    return BenchRun(
        tool=TOOL, path=path, run_index=0, requests=None, reported=reported,
        concurrency=integer(doc.get("num_concurrent_requests"), TOOL, path,
                            "key 'num_concurrent_requests'"),
        window_start_s=0.0 if duration is not None else None, window_end_s=duration,
        duration_s=duration, started_at_utc=started, ended_at_utc=ended,
        clock_uncertainty_s=1.0 if started else None, itl_definition="none",
        tpot_definition="e2e_over_n", model=model if isinstance(model, str) else None,
        notes=tuple(notes),
    )
