"""vLLM `vllm bench serve` / `benchmarks/benchmark_serving.py` result files, every version.

Accepted shapes: one JSON object (raw single line or pretty-printed), `--append-result` files
(several objects one after the other), `vllm bench sweep` `summary.json` (a JSON list of run
objects with the swept parameters beside them) and `run=N.json`. Per-request arrays (`ttfts`,
`itls`, `output_lens`, `errors`, `start_times`, `latencies`) are read when present
(`--save-detailed`, and the mid-Mar to late-Apr 2025 files that kept them by mistake); without
them the run is aggregate-only. Also read: the historical `"request_goodput:"` key (PR #9338,
still in the InferenceX fork), the early-2024 typo `request_inthroughput`, and the fork's
`benchmark_start_time_unix`/`benchmark_end_time_unix`.

Definitions: vLLM "ITL" is the gap between streamed chunks (a chunk can hold several tokens
with speculative decoding), so `itl_definition = "chunk"`; vLLM TPOT per request is
(latency - TTFT) / (output_len - 1), the same as ours. `date` is local wall time taken after
the run (1 s resolution): the window is [date - duration, date] in the timezone given as `tz`,
else no absolute time (said in the notes); a `date` that a DST change skips or repeats in that
zone is an error, never a guess. `start_times` are `perf_counter()` values (not
epoch): they place requests on the run's clock only.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl

from sources.bench.jsondoc import head, integer, json_values, number
from sources.bench.run import ITLS, BenchRun, conform
from sources.errors import ParseError
from sources.timezone import local_to_utc, require_zone

TOOL = "vllm"

_MARKERS = (b'"request_throughput"', b'"request_inthroughput"', b'"request_goodput',
            b'"burstiness"', b'"num_prompts"', b'"output_throughput"')
_METRICS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e"}

# Keys vLLM itself writes; any other scalar key is a swept parameter or --metadata (kept as
# `params`, e.g. vllm bench sweep's `run_number`, `max_num_seqs`).
_KNOWN = {
    "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
    "request_rate", "burstiness", "max_concurrency", "ramp_up_strategy", "ramp_up_start_rps",
    "ramp_up_end_rps", "duration", "completed", "failed", "total_input_tokens",
    "total_output_tokens", "request_throughput", "request_inthroughput", "request_goodput",
    "request_goodput:", "output_throughput", "total_token_throughput", "input_throughput",
    "input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times",
    "generated_texts", "errors", "max_output_tokens_per_s", "max_concurrent_requests", "rtfx",
    "best_of", "use_beam_search", "benchmark_start_time_unix", "benchmark_end_time_unix",
    "total_input_sequences", "input_sequence_throughput",
}


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes).lstrip()
    if not top.startswith((b"{", b"[")):
        return False
    if b'"benchmarks"' in top or b'"aiperf_version"' in top or b'"results_' in top:
        return False
    return (b'"duration"' in top and any(m in top for m in _MARKERS)) or (
        b'"completed"' in top and b'"backend"' in top and b'"date"' in top)


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    values = json_values(data, TOOL, path, settings=("request_rate",))
    runs: list[dict[str, Any]] = []
    for i, value in enumerate(values):
        items = value if isinstance(value, list) else [value]
        for j, item in enumerate(items):
            if not isinstance(item, dict):
                where = f"value {i + 1}" + (f"[{j}]" if isinstance(value, list) else "")
                raise ParseError(TOOL, path, where, "expected a JSON object of run results")
            runs.append(item)
    zone = None if tz is None else require_zone(tz, source=TOOL, path=path, where="--tz")
    return [_run(d, index, path, zone, tz) for index, d in enumerate(runs)]


def _run(d: dict[str, Any], index: int, path: str, zone: ZoneInfo | None,
         tz: str | None) -> BenchRun:
    def where(key: str) -> str:
        return f"run {index}: key {key!r}"

    def num(key: str) -> float | None:
        return number(d.get(key), TOOL, path, where(key))

    for key in ("duration", "completed"):
        if key not in d:
            raise ParseError(TOOL, path, where(key), "missing: not a vLLM benchmark result")
    duration = num("duration")
    if duration is None or duration < 0:
        raise ParseError(TOOL, path, where("duration"), f"bad duration {d.get('duration')!r}")
    completed = integer(d.get("completed"), TOOL, path, where("completed"))
    notes: list[str] = []

    rate_raw = d.get("request_rate")
    rate: float | None
    if isinstance(rate_raw, str) and rate_raw.strip().lower() in ("inf", "infinity"):
        rate = None
        notes.append("request_rate inf: every request sent at once (closed loop when "
                     "max_concurrency is set)")
    else:
        rate = number(rate_raw, TOOL, path, where("request_rate"))
        if rate is not None and math.isinf(rate):
            rate = None

    reported: dict[str, float | int | None] = {
        "completed": completed,
        "failed": integer(d.get("failed"), TOOL, path, where("failed")),
        "offered": integer(d.get("num_prompts"), TOOL, path, where("num_prompts")),
        "duration_s": duration,
        "total_output_tokens": integer(d.get("total_output_tokens"), TOOL, path,
                                       where("total_output_tokens")),
        "total_input_tokens": integer(d.get("total_input_tokens"), TOOL, path,
                                      where("total_input_tokens")),
        "request_throughput_per_s": num("request_throughput")
        if "request_throughput" in d else num("request_inthroughput"),
        "output_tokens_per_s": num("output_throughput"),
        "max_output_tokens_per_s": num("max_output_tokens_per_s"),
    }
    goodput_key = "request_goodput" if "request_goodput" in d else "request_goodput:"
    reported["request_goodput_per_s"] = num(goodput_key)
    if goodput_key == "request_goodput:" and goodput_key in d:
        notes.append('historical key "request_goodput:" (trailing colon) read as request_goodput')
    if reported["request_goodput_per_s"] is not None:
        notes.append("request_goodput is vLLM's own, under the --goodput SLO given at benchmark "
                     "time (not recorded in the file)")
    for key, value in d.items():
        _percentile_key(key, value, reported, path, where)
    if completed == 0:
        for key in [k for k in reported if k.startswith(("ttft_", "tpot_", "itl_", "e2e_"))]:
            reported[key] = None
        notes.append("no request completed: vLLM writes 0.0 for its latency statistics; read as "
                      "null")
    if reported["failed"] is None and reported["offered"] is not None and completed is not None:
        reported["failed"] = reported["offered"] - completed
        notes.append("no 'failed' key (vLLM before mid-2025): failed = num_prompts - completed")

    requests = _requests(d, index, path, notes)
    if requests is None and "output_lens" in d:
        lens = d["output_lens"]
        if isinstance(lens, list) and all(isinstance(x, int) for x in lens):
            reported["sum_output_lens"] = sum(lens)
            notes.append("per-request output_lens present without latencies (e.g. the "
                         "InferenceX fork): latencies are aggregates only")

    window_start: float | None = 0.0
    if requests is not None and requests["sent_s"].null_count() < requests.height:
        window_start = requests["sent_s"].min()  # type: ignore[assignment]
        notes.append("window starts at the first request's start_times value (perf_counter, "
                     "not epoch) and lasts `duration`")
    window_end = None if window_start is None else window_start + duration

    started, ended, uncertainty = _wall_window(d, duration, zone, tz, path, where, notes)
    concurrency = integer(d.get("max_concurrency"), TOOL, path, where("max_concurrency"))
    params = {k: str(v) for k, v in d.items()
              if k not in _KNOWN and not k.endswith("_ms") and not k.startswith(
                  ("probe_", "spec_decode_", "diffusion_", "rps_"))
              and isinstance(v, str | int | float | bool)}
    return BenchRun(
        tool=TOOL, path=path, run_index=index, requests=requests, reported=reported,
        concurrency=concurrency, request_rate_per_s=rate,
        window_start_s=window_start, window_end_s=window_end, duration_s=duration,
        started_at_utc=started, ended_at_utc=ended, clock_uncertainty_s=uncertainty,
        itl_definition="chunk", tpot_definition="last_minus_first_over_n_minus_1",
        label=d.get("label") if isinstance(d.get("label"), str) else None,
        model=d.get("model_id") if isinstance(d.get("model_id"), str) else None,
        params=params, notes=tuple(notes),
    )


def _percentile_key(key: str, value: Any, reported: dict[str, float | int | None], path: str,
                    where: Any) -> None:
    """`p99_ttft_ms` -> reported['ttft_p99_s'] (ms -> s); `median_` -> p50."""
    if not key.endswith("_ms"):
        return
    stat, _, rest = key[:-3].partition("_")
    metric = _METRICS.get(rest)
    if metric is None:
        return
    if stat == "median":
        name = "p50"
    elif stat in ("mean", "std"):
        name = stat
    elif stat.startswith("p"):
        try:
            float(stat[1:])
        except ValueError:
            return
        name = stat
    else:
        return
    ms = number(value, TOOL, path, where(key))
    reported[f"{metric}_{name}_s"] = None if ms is None else ms / 1000.0


def _wall_window(d: dict[str, Any], duration: float, zone: ZoneInfo | None, tz: str | None,
                 path: str, where: Any, notes: list[str]
                 ) -> tuple[datetime | None, datetime | None, float | None]:
    start_unix = number(d.get("benchmark_start_time_unix"), TOOL, path,
                        where("benchmark_start_time_unix"))
    end_unix = number(d.get("benchmark_end_time_unix"), TOOL, path,
                      where("benchmark_end_time_unix"))
    if start_unix is not None and end_unix is not None:
        if end_unix < start_unix:
            raise ParseError(TOOL, path, where("benchmark_end_time_unix"),
                             "ends before benchmark_start_time_unix")
        notes.append("window from benchmark_start_time_unix/benchmark_end_time_unix (epoch s)")
        return (datetime.fromtimestamp(start_unix, UTC), datetime.fromtimestamp(end_unix, UTC),
                0.01)
    date = d.get("date")
    if not isinstance(date, str):
        notes.append("no 'date': the run cannot be placed in wall-clock time")
        return None, None, None
    try:
        naive = datetime.strptime(date, "%Y%m%d-%H%M%S")  # noqa: DTZ007 (tz applied below)
    except ValueError:
        raise ParseError(TOOL, path, where("date"), f"expected YYYYmmdd-HHMMSS, got {date!r}"
                         ) from None
    if zone is None:
        notes.append(f"'date' {date} is naive local time taken after the run: pass --tz to "
                     "place the window in UTC")
        return None, None, None
    end = local_to_utc(naive, zone, source=TOOL, path=path, where=where("date"))
    notes.append(f"window = [date - duration, date], date read as {tz} local time, "
                 "uncertain by about 1 s (date has 1 s resolution)")
    return end - timedelta(seconds=duration), end, 1.0


def _requests(d: dict[str, Any], index: int, path: str, notes: list[str]) -> pl.DataFrame | None:
    core = ("ttfts", "itls", "output_lens")
    if any(d.get(k) is None for k in core):
        return None
    arrays = {k: d[k] for k in ("ttfts", "itls", "output_lens", "input_lens", "errors",
                                "start_times", "latencies") if k in d and d[k] is not None}
    n = len(arrays["ttfts"]) if isinstance(arrays["ttfts"], list) else -1
    for key, value in arrays.items():
        if not isinstance(value, list):
            raise ParseError(TOOL, path, f"run {index}: key {key!r}", "expected a list")
        if len(value) != n:
            raise ParseError(TOOL, path, f"run {index}: key {key!r}",
                             f"has {len(value)} entries, ttfts has {n}")
    names = {"ttfts": "ttft", "itls": "itls", "output_lens": "out", "input_lens": "inp",
             "errors": "err", "start_times": "start", "latencies": "lat"}
    dtypes = {"ttft": pl.Float64(), "itls": pl.List(pl.Float64()), "out": pl.Int64(),
              "inp": pl.Int64(), "err": pl.String(), "start": pl.Float64(), "lat": pl.Float64()}
    try:
        # the nested `itls` (often 1e7+ values) is built non-strict, much faster; a value that
        # is not a number becomes null there, and any null is rejected just below
        raw = pl.DataFrame({names[k]: pl.Series(names[k], v, dtype=dtypes[names[k]],
                                                strict=k != "itls")
                            for k, v in arrays.items()})
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError) as err:
        raise ParseError(TOOL, path, f"run {index}: per-request arrays",
                         f"unexpected value type: {err}") from None
    bad = raw.select(pl.col("itls").is_null() | (pl.col("itls").list.eval(
        pl.element().is_null()).list.any())).to_series()
    if bad.any():
        raise ParseError(TOOL, path, f"run {index}: key 'itls'[{int(bad.arg_true()[0])}]",
                         "expected a list of numbers")
    if "err" in raw.columns:
        ok = pl.col("err").fill_null("") == ""
    else:
        ok = (pl.col("out") > 0) & (pl.col("ttft") > 0)
        notes.append("no 'errors' array: a request counts as successful when it has output "
                     "tokens and a TTFT")
    e2e = pl.col("lat") if "lat" in raw.columns else pl.col("ttft") + pl.col("itls").list.sum()
    sent = pl.col("start") if "start" in raw.columns else pl.lit(None, pl.Float64())
    frame = raw.with_columns(ok=ok).select(
        request_id=pl.int_range(pl.len()).cast(pl.String()),
        sent_s=sent,
        done_s=pl.when(pl.col("ok")).then(sent + e2e),
        ttft_s=pl.when(pl.col("ok")).then(pl.col("ttft")),
        tpot_s=pl.when(pl.col("ok") & (pl.col("out") > 1))
        .then((e2e - pl.col("ttft")) / (pl.col("out") - 1)),
        max_itl_s=pl.when(pl.col("ok")).then(pl.col("itls").list.max()),
        e2e_s=pl.when(pl.col("ok")).then(e2e),
        output_tokens=pl.col("out"),
        input_tokens=pl.col("inp") if "inp" in raw.columns else pl.lit(None, pl.Int64()),
        ok=pl.col("ok"),
        incomplete=pl.lit(False),
        error=pl.when(~pl.col("ok")).then(
            pl.col("err") if "err" in raw.columns else pl.lit("failed")),
        **{ITLS: pl.when(pl.col("ok")).then(pl.col("itls"))},
    )
    return conform(frame)
