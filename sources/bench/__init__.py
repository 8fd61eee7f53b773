"""Readers for LLM-serving benchmark results: one module per format (vllm, guidellm, aiperf,
llmperf, mlperf, trace, vllm_metrics for /metrics scrapes and vllm_metrics_range for
their Prometheus query_range exports), each with `TOOL`,
`detect(path_or_bytes)` and `parse(data, *, path, tz=None) -> list[BenchRun]`; `registry`
picks the reader."""
