"""Readers for LLM-serving benchmark results: one module per format (vllm, guidellm, aiperf,
llmperf, mlperf, trace, and vllm_metrics for /metrics scrapes), each with `TOOL`,
`detect(path_or_bytes)` and `parse(data, *, path, tz=None) -> list[BenchRun]`; `registry`
picks the reader."""
