"""Which benchmark format a file is in, and the one entry point that parses any of them.

Readers are tried in `READERS` order; the first whose `detect` accepts the file's head wins.
`--format NAME` skips detection. Every reader has the same shape: `TOOL`, `detect`, `parse`.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from sources.bench.aggregates import inferencex, mlperf, vllm_metrics, vllm_metrics_range
from sources.bench.clients import (
    aiperf,
    aiperf_csv,
    genai_perf,
    guidellm,
    guidellm_csv,
    llmperf,
    sglang,
    trace,
    trtllm_bench,
    vllm,
)
from sources.bench.run import BenchRun
from sources.errors import ParseError, reading

READERS: tuple[ModuleType, ...] = (trace, vllm_metrics_range, guidellm, guidellm_csv, aiperf,
                                   aiperf_csv, genai_perf, llmperf, mlperf, trtllm_bench,
                                   inferencex, sglang, vllm, vllm_metrics)
FORMATS: dict[str, ModuleType] = {m.TOOL: m for m in READERS}


def detect_format(path_or_bytes: str | Path | bytes) -> str | None:
    """The TOOL name of the first reader that recognises the file, or None."""
    for reader in READERS:
        if reader.detect(path_or_bytes):
            return str(reader.TOOL)
    return None


def parse_bench(data: bytes, *, path: str, fmt: str | None = None,
                tz: str | None = None) -> list[BenchRun]:
    """Parse benchmark bytes in format `fmt` (detected when None) into runs."""
    if fmt is None:
        with reading("bench", path):
            fmt = detect_format(data)
        if fmt is None:
            raise ParseError("bench", path, "start of file",
                             "not a benchmark format this project reads (known: "
                             f"{', '.join(sorted(FORMATS))}); force one with format = ... in the "
                             "proposal or --format on the command line")
    reader = FORMATS.get(fmt)
    if reader is None:
        raise ParseError("bench", path, "format",
                         f"unknown format {fmt!r}; known: {', '.join(sorted(FORMATS))}")
    with reading(fmt, path):  # a hostile file's overflow, recursion, ...: a ParseError
        runs: list[BenchRun] = reader.parse(data, path=path, tz=tz)
    return runs
