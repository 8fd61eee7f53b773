"""Readers of the files a benchmark client writes (vLLM bench serve, GuideLLM, AIPerf,
GenAI-Perf, LLMPerf, SGLang bench_serving, trtllm-bench, the canonical trace): one module per
format, each with `TOOL`, `detect` and `parse` (sources/bench/registry.py lists them)."""
