"""Placeholder: not yet implemented."""

from __future__ import annotations

from pathlib import Path

from sources.bench.run import BenchRun
from sources.errors import ParseError

TOOL = "llmperf"


def detect(path_or_bytes: str | Path | bytes) -> bool:
    return False


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    raise ParseError(TOOL, path, "file", "this format is not implemented yet")
