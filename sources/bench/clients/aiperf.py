"""NVIDIA AIPerf: per-request `profile_export.jsonl` and the summary `profile_export_aiperf.json`.

Records (one JSON object per line): `metadata` with epoch-ns `request_start_ns`/
`request_end_ns` (before Oct 2025: `timestamp_ns`, `credit_phase`), `benchmark_phase` (only
"profiling" records are kept; warm-up is dropped), `was_cancelled`; `metrics` as
`{"<tag>": {"value", "unit"}}`: `time_to_first_token` (before 2025-10-10: `ttft`),
`request_latency`, `inter_token_latency` (= our TPOT), `inter_chunk_latency` (a list of
streamed-chunk gaps, like vLLM's `itls`, so `itl_definition = "chunk"`),
`output_sequence_length`, `output_token_count`, `reasoning_token_count`,
`input_sequence_length`; `error` null or
`{code, type, message}`. Cancelled requests (code 499) count as incomplete. Times are kept
as ns integers until they are made relative to the first request, so no precision is lost.

Token basis (`sources.bench.run`): every token generated, reasoning included. AIPerf keeps
reasoning apart: `output_token_count` is the visible tokens only and `output_sequence_length`
= visible + `reasoning_token_count`. Output tokens here are the OSL (else visible + reasoning),
the basis of AIPerf's own `output_token_throughput` (total OSL / duration); the summary's
`total_output_tokens` (visible only) is replaced by `total_osl` (else + `total_reasoning_tokens`).

Summary: flat `"<tag>": {"unit", "avg", "p50", ...}` blocks (before 2025-10-10 under
`records`); `request_count` is the successful requests, errors come from
`error_request_count` or `error_summary`; `goodput` is AIPerf's own (req/s under the SLO given
with `--goodput`); the GPUs' `gpu_name` in `telemetry_data` (schema 1.5, with
`--gpu-telemetry`) is the `accelerator` setting. Units are read from each block's `unit` (ms,
ns, us, sec). When both files
of one run are given (`X.jsonl` and `X_aiperf.json`), `combine` joins them: the per-request
rows with the summary's aggregates and load settings.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from sources.bench.jsondoc import (
    decode_text,
    head,
    integer,
    json_lines,
    json_values,
    number,
    paired_name,
)
from sources.bench.run import ITLS, BenchRun, conform
from sources.errors import ParseError

TOOL = "aiperf"

_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0}
_TTFT_TAGS = ("time_to_first_token", "ttft")


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes).lstrip()
    if not top.startswith(b"{"):
        return False
    first = top.split(b"\n", 1)[0]
    if b'"metadata"' in first and b'"metrics"' in first and (
            b'"request_start_ns"' in first or b'"timestamp_ns"' in first):
        return True
    return b'"aiperf_version"' in top or (
        b'"benchmark_duration"' in top and b'"input_config"' in top)


def partner(name: str) -> str | None:
    """The other file of the same run: X.jsonl <-> X_aiperf.json."""
    return paired_name(name, ("_aiperf.json", ".jsonl"))


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    top = head(data).lstrip()
    if top.startswith(b"{") and b'"metadata"' in top.split(b"\n", 1)[0]:
        return [_records(data, path)]
    values = json_values(data, TOOL, path)
    if len(values) != 1 or not isinstance(values[0], dict):
        raise ParseError(TOOL, path, "top level", "expected one summary JSON object or JSON "
                         "Lines records")
    return [_summary(values[0], path, tz)]


def combine(records: BenchRun, summary: BenchRun) -> BenchRun:
    """Per-request rows of `records` with the aggregates and load settings of `summary`."""
    return replace(
        records, reported=dict(summary.reported), concurrency=summary.concurrency,
        request_rate_per_s=summary.request_rate_per_s, model=summary.model,
        params={**records.params, **summary.params},
        notes=(*records.notes, f"aggregates and load settings from {summary.path}"),
    )


def _seconds(block: Any, path: str, where: str) -> tuple[Any, float] | None:
    """(value, factor to seconds) of a `{"value", "unit"}` metric, or None when absent."""
    if block is None:
        return None
    if not isinstance(block, dict) or "value" not in block:
        raise ParseError(TOOL, path, where, "expected {value, unit}")
    unit = block.get("unit", "ms")
    if not isinstance(unit, str) or unit not in _TIME_UNITS:
        raise ParseError(TOOL, path, where, f"unknown time unit {unit!r}")
    return block["value"], _TIME_UNITS[unit]


def _records(data: bytes, path: str) -> BenchRun:
    text = decode_text(data, TOOL, path)
    rows = []
    dropped = 0
    for n, rec in json_lines(text, TOOL, path, constants=True):
        if not isinstance(rec.get("metadata"), dict):
            raise ParseError(TOOL, path, f"line {n}", "expected a record with 'metadata'")
        meta = rec["metadata"]
        phase = meta.get("benchmark_phase", meta.get("credit_phase", "profiling"))
        if phase not in ("profiling", None):
            dropped += 1
            continue
        rows.append(_record(rec, meta, n, path))
    if not rows:
        raise ParseError(TOOL, path, "line 1", "no profiling records")
    raw = pl.DataFrame(rows, orient="row", schema={
        "request_id": pl.String(), "start_ns": pl.Int64(), "end_ns": pl.Int64(),
        "ttft": pl.Float64(), "lat": pl.Float64(), "tpot": pl.Float64(),
        "itls": pl.List(pl.Float64()), "out": pl.Int64(), "inp": pl.Int64(),
        "ok": pl.Boolean(), "cancelled": pl.Boolean(), "error": pl.String(),
        "reasoning": pl.Int64()})
    t0 = int(raw["start_ns"].min())  # type: ignore[arg-type]
    sent = (pl.col("start_ns") - t0).cast(pl.Float64()) / 1e9
    done = pl.when(pl.col("end_ns").is_not_null()).then(
        (pl.col("end_ns") - t0).cast(pl.Float64()) / 1e9).otherwise(sent + pl.col("lat"))
    ok = pl.col("ok")
    frame = conform(raw.select(
        request_id=pl.col("request_id"),
        sent_s=sent,
        done_s=done,
        ttft_s=pl.when(ok).then(pl.col("ttft")),
        tpot_s=pl.when(ok & (pl.col("out") > 1)).then(pl.col("tpot").fill_null(
            (pl.col("lat") - pl.col("ttft")) / (pl.col("out") - 1))),
        max_itl_s=pl.when(ok).then(pl.col("itls").list.max()),
        e2e_s=pl.when(ok).then(pl.col("lat")),
        output_tokens=pl.col("out"),
        input_tokens=pl.col("inp"),
        ok=ok,
        incomplete=pl.col("cancelled"),
        error=pl.col("error"),
        **{ITLS: pl.when(ok).then(pl.col("itls"))},
    ))
    end = frame["done_s"].max()
    window_end = float(end) if isinstance(end, int | float) else None
    notes = ["window: first request_start_ns to last request_end_ns"]
    if dropped:
        notes.append(f"{dropped} warm-up record(s) dropped")
    reasoning = raw["reasoning"].fill_null(0)
    if reasoning.sum():
        notes.append(f"reasoning tokens: output tokens include {reasoning.sum()} reasoning "
                     f"token(s) of {(reasoning > 0).sum()} request(s) (output_sequence_length, "
                     "the basis of AIPerf's output_token_throughput)")
    if frame["ttft_s"].null_count() == frame.height:
        notes.append("no TTFT in the records (non-streaming run?): no request can pass a TTFT "
                     "limit")
    has_chunks = raw["itls"].null_count() < raw.height
    return BenchRun(
        tool=TOOL, path=path, run_index=0, requests=frame, reported={},
        window_start_s=0.0, window_end_s=window_end, duration_s=window_end,
        started_at_utc=datetime.fromtimestamp(t0 / 1e9, UTC),
        ended_at_utc=None if window_end is None
        else datetime.fromtimestamp(t0 / 1e9 + window_end, UTC),
        clock_uncertainty_s=0.0,
        itl_definition="chunk" if has_chunks else "none",
        tpot_definition="last_minus_first_over_n_minus_1", notes=tuple(notes),
    )


def _record(rec: dict[str, Any], meta: dict[str, Any], n: int, path: str) -> tuple[Any, ...]:
    where = f"line {n}"
    metrics = rec.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise ParseError(TOOL, path, f"{where}: metrics", "expected an object")
    start = integer(meta.get("request_start_ns", meta.get("timestamp_ns")), TOOL, path,
                    f"{where}: request_start_ns")
    if start is None:
        raise ParseError(TOOL, path, f"{where}: request_start_ns", "missing")
    end = integer(meta.get("request_end_ns"), TOOL, path, f"{where}: request_end_ns")
    error = rec.get("error", meta.get("error"))
    cancelled = bool(meta.get("was_cancelled")) or (
        isinstance(error, dict) and error.get("code") == 499)

    def secs(tag: str) -> float | None:
        got = _seconds(metrics.get(tag), path, f"{where}: metrics.{tag}")
        if got is None:
            return None
        value = number(got[0], TOOL, path, f"{where}: metrics.{tag}")
        return None if value is None else value * got[1]

    ttft = next((secs(t) for t in _TTFT_TAGS if t in metrics), None)
    itls = None
    chunk = _seconds(metrics.get("inter_chunk_latency"), path, f"{where}: inter_chunk_latency")
    if chunk is not None:
        if not isinstance(chunk[0], list):
            raise ParseError(TOOL, path, f"{where}: inter_chunk_latency", "expected a list")
        itls = [number(v, TOOL, path, f"{where}: inter_chunk_latency") for v in chunk[0]]
        itls = [None if v is None else v * chunk[1] for v in itls]

    def count(tag: str) -> int | None:
        block = metrics.get(tag)
        return integer(block.get("value") if isinstance(block, dict) else None, TOOL, path,
                       f"{where}: {tag}")

    visible, reasoning = count("output_token_count"), count("reasoning_token_count")
    out = count("output_sequence_length")
    if out is None and (visible is not None or reasoning is not None):
        out = (visible or 0) + (reasoning or 0)
    inp = count("input_sequence_length")
    if inp is None:
        inp = count("error_isl")
    message = None
    if error is not None:
        message = (f"{error.get('code')} {error.get('type')}: {error.get('message')}"
                   if isinstance(error, dict) else str(error))
    rid = meta.get("x_request_id") or meta.get("session_num") or n
    return (str(rid), start, end, ttft, secs("request_latency"), secs("inter_token_latency"),
            itls, out, inp, error is None and not cancelled, cancelled, message, reasoning)


def _summary(doc: dict[str, Any], path: str, tz: str | None) -> BenchRun:
    records = doc.get("records")
    blocks: dict[str, Any] = records if isinstance(records, dict) else doc
    notes = [f"AIPerf summary, schema {doc.get('schema_version', 'before 1.0')}, version "
             f"{doc.get('aiperf_version', 'unknown')}"]

    def avg(tag: str) -> float | None:
        block = blocks.get(tag)
        if not isinstance(block, dict):
            return None
        return number(block.get("avg"), TOOL, path, f"{tag}.avg")

    duration = avg("benchmark_duration")
    if duration is None:
        raise ParseError(TOOL, path, "benchmark_duration", "missing: not an AIPerf summary")
    completed = avg("request_count")
    failed = avg("error_request_count")
    if failed is None and isinstance(doc.get("error_summary"), list):
        failed = sum(number(e.get("count"), TOOL, path, "error_summary[].count") or 0
                     for e in doc["error_summary"] if isinstance(e, dict))
    reported: dict[str, float | int | None] = {
        "completed": None if completed is None else int(completed),
        "failed": None if failed is None else int(failed),
        "duration_s": duration,
        "total_output_tokens": _total_generated(avg),
        "request_throughput_per_s": avg("request_throughput"),
        "output_tokens_per_s": avg("output_token_throughput"),
        "request_goodput_per_s": avg("goodput"),
    }
    if reported["completed"] is not None and reported["failed"] is not None:
        reported["offered"] = reported["completed"] + reported["failed"]  # type: ignore
    for name, tags in (("ttft", _TTFT_TAGS), ("tpot", ("inter_token_latency",)),
                       ("itl", ("inter_chunk_latency",)), ("e2e", ("request_latency",))):
        tag = next((t for t in tags if isinstance(blocks.get(t), dict)), None)
        if tag is None:
            continue
        block = blocks[tag]
        unit = block.get("unit", "ms")
        if not isinstance(unit, str) or unit not in _TIME_UNITS:
            raise ParseError(TOOL, path, f"{tag}.unit", f"unknown time unit {unit!r}")
        for key, out in (("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"),
                         ("avg", "mean")):
            value = number(block.get(key), TOOL, path, f"{tag}.{key}")
            reported[f"{name}_{out}_s"] = None if value is None else value * _TIME_UNITS[unit]
        count = integer(block.get("count"), TOOL, path, f"{tag}.count")
        if count is not None:
            reported[f"{name}_count"] = count
    if "ttft_p50_s" not in reported:
        notes.append("no time_to_first_token block (non-streaming run?)")
    if reported["request_goodput_per_s"] is not None:
        notes.append("goodput is AIPerf's own, under the --goodput SLO it was given")
    raw_config = doc.get("input_config")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    concurrency, rate = _load(config, path)
    started = ended = None
    t_min, t_max = avg("min_request_timestamp"), avg("max_response_timestamp")
    if t_min is not None and t_max is not None:
        started = datetime.fromtimestamp(t_min / 1e9, UTC)
        ended = datetime.fromtimestamp(t_max / 1e9, UTC)
        notes.append("window from min_request_timestamp/max_response_timestamp (epoch ns)")
    else:
        notes.append("no epoch-ns window in the summary; its start_time/end_time have no "
                      "timezone and are not used")
    return BenchRun(
        tool=TOOL, path=path, run_index=0, requests=None, reported=reported,
        concurrency=concurrency, request_rate_per_s=rate, window_start_s=0.0,
        window_end_s=duration, duration_s=duration, started_at_utc=started,
        ended_at_utc=ended, clock_uncertainty_s=0.0 if started else None,
        itl_definition="chunk", tpot_definition="last_minus_first_over_n_minus_1",
        model=_model(config), params=_accelerator(doc.get("telemetry_data"), notes),
        notes=tuple(notes),
    )


def _accelerator(telemetry: Any, notes: list[str]) -> dict[str, str]:
    """The `accelerator` setting from the summary's GPU telemetry (`telemetry_data`, schema
    1.5: per endpoint, per GPU, with `gpu_name`; the nesting is walked, not assumed): the
    one name its GPUs share; several names are noted and not taken."""
    names: dict[str, None] = {}
    stack = [telemetry]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("gpu_name"), str) and item["gpu_name"]:
                names.setdefault(item["gpu_name"], None)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    if len(names) > 1:
        notes.append(f"GPU telemetry names {len(names)} GPU models ({', '.join(names)}): no "
                     "accelerator taken")
    return {"accelerator": next(iter(names))} if len(names) == 1 else {}


def _total_generated(avg: Any) -> int | None:
    """Total output tokens on the generated basis: `total_osl`, else visible + reasoning."""
    osl = avg("total_osl")
    if osl is not None:
        return int(osl)
    visible, reasoning = avg("total_output_tokens"), avg("total_reasoning_tokens")
    if visible is None and reasoning is None:
        return None
    return int((visible or 0) + (reasoning or 0))


def _load(config: dict[str, Any], path: str) -> tuple[int | None, float | None]:
    sources = [config.get("loadgen")]
    phases = config.get("phases")
    if isinstance(phases, list):
        sources += [p for p in phases if isinstance(p, dict) and p.get("name") == "profiling"]
    concurrency = rate = None
    for src in sources:
        if isinstance(src, dict):
            concurrency = concurrency or integer(src.get("concurrency"), TOOL, path,
                                                 "input_config concurrency")
            rate = rate or number(src.get("request_rate"), TOOL, path,
                                  "input_config request_rate")
    return concurrency, rate


def _model(config: dict[str, Any]) -> str | None:
    names = (config.get("endpoint") or {}).get("model_names") if isinstance(
        config.get("endpoint"), dict) else None
    if isinstance(names, list) and names and isinstance(names[0], str):
        return names[0]
    items = (config.get("models") or {}).get("items") if isinstance(
        config.get("models"), dict) else None
    if isinstance(items, list) and items and isinstance(items[0], dict):
        name = items[0].get("name")
        return name if isinstance(name, str) else None
    return None
