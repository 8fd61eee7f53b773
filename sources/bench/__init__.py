"""Readers for LLM-serving benchmark results: one module per format, those of the files a
benchmark client writes in `clients` and those of results that are aggregates by nature
(MLPerf, InferenceX, vLLM /metrics scrapes and their Prometheus query_range exports) in
`aggregates`. Each has `TOOL`, `detect` (whether a file's head is its format) and `parse` (a
file's bytes to `BenchRun`s); `registry` picks the reader."""
