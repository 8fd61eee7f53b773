"""Readers of results that are aggregates by nature: MLPerf Inference logs, InferenceX
published rows and a vLLM server's /metrics scrape (production counters). Same shape as
the client readers: `TOOL`, `detect`, `parse`."""
