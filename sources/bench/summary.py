"""What the summary-only readers (SGLang, trtllm-bench, GenAI-Perf, InferenceX) share: a
run built from a mapping of aggregates already in our names and units.

`summary_run` builds an aggregate-only `BenchRun` whose window is [0, duration) on its own
clock (no wall-clock time); the reported aggregates that are None are dropped.
`one_object` gives a file's single JSON object (ParseError otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sources.bench.jsondoc import json_values
from sources.bench.run import BenchRun
from sources.errors import ParseError


def one_object(data: bytes, tool: str, path: str) -> dict[str, Any]:
    values = json_values(data, tool, path)
    doc = values[0]
    if len(values) != 1 or not isinstance(doc, dict):
        raise ParseError(tool, path, "top level", "expected one JSON object")
    return doc


def summary_run(tool: str, path: str, index: int, reported: Mapping[str, float | int | None], *,
                concurrency: int | None = None, rate: float | None = None,
                duration: float | None = None, model: str | None = None,
                params: Mapping[str, str] | None = None, notes: Sequence[str] = (),
                itl: str = "none", tpot: str = "aggregate_only") -> BenchRun:
    return BenchRun(
        tool=tool, path=path, run_index=index, requests=None,
        reported={k: v for k, v in reported.items() if v is not None},
        concurrency=concurrency, request_rate_per_s=rate,
        window_start_s=0.0 if duration is not None else None, window_end_s=duration,
        duration_s=duration, itl_definition=itl, tpot_definition=tpot, model=model,
        params=dict(params or {}), notes=tuple(notes),
    )
