"""Benchmark evidence tables: one row per benchmark run and one per request.

Times of requests are seconds on the run's own clock (vLLM `perf_counter`, AIPerf/GuideLLM
epoch); absolute times of a run are tz-aware UTC when the file allows it (null otherwise, with
the reason in `note`). `reported_*` columns are the tool's own aggregates, kept to check ours.
"""

from __future__ import annotations

from schemas.fields import choices
from schemas.table import Table

#: The values the fields declare (schemas/fields.toml): what ITL and TPOT mean.
ITL_DEFINITIONS = choices("itl_definition")
TPOT_DEFINITIONS = choices("tpot_definition")

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
