"""The Prometheus HTTP API's `query_range` answer, as both readers of it take it (vLLM counters
and histograms in sources/bench/aggregates/vllm_metrics_range.py, DCGM power in
sources/power/prometheus_range.py): one point of a matrix series, `[unix seconds, "value"]`."""

from __future__ import annotations

import math
from typing import Any

from sources.errors import ParseError
from sources.text import one_line

#: 2100-01-01: a later time is not unix seconds (milliseconds, or noise)
EPOCH_LIMIT_S = 4_102_444_800.0


def point(value: Any, tool: str, path: str, where: str) -> tuple[float, float]:
    """(unix seconds, value) of one `[ts, "v"]` point, or a ParseError naming `where` (the
    file's key) and quoting the point on one safe line."""
    try:
        stamp, number = float(value[0]), float(value[1])
    except (TypeError, ValueError, IndexError, KeyError):
        raise ParseError(tool, path, where, f"expected [unix s, \"value\"], got "
                         f"{one_line(repr(value), 80)}") from None
    if not (math.isfinite(stamp) and math.isfinite(number)):
        raise ParseError(tool, path, where, f"not a finite number: {one_line(repr(value), 80)}")
    if not 0 <= stamp < EPOCH_LIMIT_S:
        raise ParseError(tool, path, where, f"time {one_line(repr(value[0]), 40)} is not unix "
                         "seconds between 1970 and 2100")
    return stamp, number
