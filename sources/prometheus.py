"""The Prometheus HTTP API's `query_range` answer, as both readers of it take it (vLLM counters
and histograms in sources/bench/aggregates/vllm_metrics_range.py, DCGM power in
sources/power/prometheus_range.py): the answers a file holds (one, a JSON list, or several one
after another as `curl >>` appends them), each answer's series (`series`), and one point of a
series, `[unix seconds, "value"]` (`point`)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from sources.bench.jsondoc import json_values
from sources.errors import ParseError
from sources.power.frame import EPOCH_LIMIT_S
from sources.text import one_line


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


def series(data: bytes, tool: str, path: str) -> Iterator[tuple[str, Any]]:
    """(where, series) of every series of every answer in the file: `where` names it for an
    error (`document 0 data.result[3]`). An answer Prometheus gave as an error, or one that is
    not a matrix (a `query`, not a `query_range`), is a ParseError naming it."""
    docs: list[Any] = []
    for value in json_values(data, tool, path):
        docs.extend(value if isinstance(value, list) else [value])
    for d, doc in enumerate(docs):
        where = f"document {d}"
        if not isinstance(doc, dict):
            raise ParseError(tool, path, where, "expected a query_range answer (a JSON object)")
        status = doc.get("status")
        if status == "error":
            kind, text = doc.get("errorType"), doc.get("error")
            raise ParseError(tool, path, f"{where} status", "Prometheus answered an error"
                             + (f" ({one_line(str(kind), 60)})" if kind is not None else "")
                             + f": {one_line(str(text))}")
        if status != "success":
            raise ParseError(tool, path, f"{where} status",
                             f"expected \"success\", got {one_line(repr(status), 60)}")
        body = doc.get("data")
        if not isinstance(body, dict) or body.get("resultType") != "matrix":
            got = body.get("resultType") if isinstance(body, dict) else None
            raise ParseError(tool, path, f"{where} data.resultType",
                             f"expected \"matrix\" (a query_range answer), got "
                             f"{one_line(repr(got), 60)}")
        result = body.get("result")
        if not isinstance(result, list):
            raise ParseError(tool, path, f"{where} data.result", "expected a list of series")
        for s, entry in enumerate(result):
            yield f"{where} data.result[{s}]", entry
