"""Benchmark evidence tables: one row per benchmark run and one per request.

Times of requests are seconds on the run's own clock (vLLM `perf_counter`, AIPerf/GuideLLM
epoch); absolute times of a run are tz-aware UTC when the file allows it (null otherwise, with
the reason in `note`). `reported_*` columns are the tool's own aggregates, kept to check ours.
"""

from __future__ import annotations

import polars as pl

from schemas.fields import UTC_TIME, declare
from schemas.table import Table

BENCH_TOOLS = ("vllm", "guidellm", "aiperf", "llmperf", "mlperf", "trace", "vllm-metrics")
ITL_DEFINITIONS = ("token", "chunk", "request_mean", "none")
TPOT_DEFINITIONS = ("last_minus_first_over_n_minus_1", "e2e_over_n", "aggregate_only", "none")

# --- runs ------------------------------------------------------------------------------------
declare("bench_tool", pl.String(), "Benchmark tool (format) the run was read from.",
        isin=BENCH_TOOLS)
declare("bench_file", pl.String(), "Path of the benchmark file as it was given.")
declare("run_index", pl.Int64(), "Position of the run in its file (0 for one-run files).",
        ge=0)
declare("run_label", pl.String(), "The tool's label for the run, if any.")
declare("served_model", pl.String(), "Model id as the benchmark tool recorded it (may hold "
        "an organisation prefix or a local path).")
declare("concurrency", pl.Int64(), "Maximum requests in flight the client allowed (null: "
        "unbounded or not stated).", unit="requests", ge=1, le=1_000_000)
declare("request_rate_per_s", pl.Float64(), "Target request arrival rate (null: all at once, "
        "or not stated).", unit="requests/s", gt=0, le=1_000_000)
declare("window_start_s", pl.Float64(), "Start of the benchmark window on the requests' "
        "clock.", unit="s")
declare("window_end_s", pl.Float64(), "End of the benchmark window on the requests' clock.",
        unit="s")
declare("window_s", pl.Float64(), "Length of the observation window goodput is divided by.",
        unit="s", ge=0, le=31_536_000)
declare("started_at_utc", UTC_TIME, "Wall-clock start of the benchmark window (UTC).")
declare("ended_at_utc", UTC_TIME, "Wall-clock end of the benchmark window (UTC).")
declare("clock_uncertainty_s", pl.Float64(), "How far the UTC window may be off (e.g. 1 s "
        "for vLLM's `date`).", unit="s", ge=0, le=86_400)
declare("aggregate_only", pl.Boolean(), "The file holds aggregates only: no per-request rows, "
        "goodput only where the tool reported it.")
declare("itl_definition", pl.String(), "What the source's gaps are: token gaps, streamed-chunk "
        "gaps, a per-request mean only, or none.", isin=ITL_DEFINITIONS)
declare("tpot_definition", pl.String(), "How the source defines time per output token.",
        isin=TPOT_DEFINITIONS)
declare("reported_offered", pl.Int64(), "Requests the tool says it sent.", unit="requests",
        ge=0)
declare("reported_completed", pl.Int64(), "Requests the tool says completed.",
        unit="requests", ge=0)
declare("reported_failed", pl.Int64(), "Requests the tool says failed.", unit="requests", ge=0)
declare("reported_duration_s", pl.Float64(), "Benchmark duration the tool measured.", unit="s",
        ge=0, le=31_536_000)
declare("reported_total_output_tokens", pl.Int64(), "Output tokens the tool counted.",
        unit="tokens", ge=0)
declare("reported_request_throughput_per_s", pl.Float64(), "Completed requests per second, "
        "as the tool reported.", unit="requests/s", ge=0, le=10_000_000)
declare("reported_output_tokens_per_s", pl.Float64(), "Output tokens per second, as the tool "
        "reported.", unit="tokens/s", ge=0, le=1e9)
declare("reported_request_goodput_per_s", pl.Float64(), "The tool's own request goodput, under "
        "the SLO it was given.", unit="requests/s", ge=0, le=10_000_000)
for _metric, _limit in (("ttft", 3_600), ("tpot", 60)):
    for _q in ("p50", "p99"):
        declare(f"reported_{_metric}_{_q}_s", pl.Float64(), f"The tool's own {_metric.upper()} "
                f"{_q}.", unit="s", ge=0, le=_limit)

# --- requests --------------------------------------------------------------------------------
declare("request_id", pl.String(), "Request id as the tool wrote it (else its position).")
declare("sent_s", pl.Float64(), "When the request was sent, on the run's clock.", unit="s")
declare("done_s", pl.Float64(), "When the last byte of the response arrived, on the run's "
        "clock.", unit="s")
declare("ttft_s", pl.Float64(), "Time to first token: first token received - request sent.",
        unit="s", ge=0, le=3_600)
declare("tpot_s", pl.Float64(), "Time per output token: (last - first token) / (N - 1); null "
        "for N = 1.", unit="s", ge=0, le=60)
declare("max_itl_s", pl.Float64(), "Largest gap between successive output tokens (or chunks, "
        "see itl_definition).", unit="s", ge=0, le=3_600)
declare("e2e_s", pl.Float64(), "End-to-end latency: response done - request sent.", unit="s",
        ge=0, le=86_400)
declare("output_tokens", pl.Int64(), "Output tokens of the request.", unit="tokens", ge=0,
        le=100_000_000)
declare("input_tokens", pl.Int64(), "Prompt tokens of the request.", unit="tokens", ge=0,
        le=100_000_000)
declare("ok", pl.Boolean(), "The request completed successfully.")
declare("incomplete", pl.Boolean(), "The request was cancelled or still running when the "
        "benchmark ended.")
declare("error", pl.String(), "The tool's error message for a failed request.")

BENCH_RUNS = Table(
    "core__bench_runs",
    "Benchmark runs: load level, window, definitions used and the tool's own aggregates.",
    ("bench_tool", "bench_file", "run_index", "run_label", "served_model", "concurrency",
     "request_rate_per_s", "window_start_s", "window_end_s", "window_s", "started_at_utc",
     "ended_at_utc", "clock_uncertainty_s", "aggregate_only", "itl_definition",
     "tpot_definition", "reported_offered", "reported_completed", "reported_failed",
     "reported_duration_s", "reported_total_output_tokens",
     "reported_request_throughput_per_s", "reported_output_tokens_per_s",
     "reported_request_goodput_per_s", "reported_ttft_p50_s", "reported_ttft_p99_s",
     "reported_tpot_p50_s", "reported_tpot_p99_s", "note"),
    key=("bench_file", "run_index"),
    required=("bench_tool", "aggregate_only", "itl_definition", "tpot_definition"),
)

BENCH_REQUESTS = Table(
    "core__bench_requests",
    "One row per benchmark request, in our definitions and units.",
    ("bench_file", "run_index", "request_id", "sent_s", "done_s", "ttft_s", "tpot_s",
     "max_itl_s", "e2e_s", "output_tokens", "input_tokens", "ok", "incomplete", "error"),
    key=("bench_file", "run_index", "request_id"),
    required=("ok", "incomplete"),
)

EVIDENCE_TABLES = (BENCH_RUNS, BENCH_REQUESTS)
