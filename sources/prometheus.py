"""The Prometheus HTTP API's `query_range` answer, as both readers of it take it (vLLM counters
and histograms in sources/bench/aggregates/vllm_metrics_range.py, DCGM power in
sources/power/prometheus_range.py): the answers a file holds (one, a JSON list, or several one
after another as `curl >>` appends them), each answer's series (`series`), and one point of a
series, `[unix seconds, "value"]` (`point`)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import requests

from sources.bench.jsondoc import json_values
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, FetchPolicy, fetch
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


#: a bearer token for a Prometheus behind authentication, read from the environment only (sent
#: as `Authorization: Bearer ...`, redacted from every message, as the market sources' keys)
TOKEN_ENV = "SCORECARD_PROMETHEUS_TOKEN"
#: the range queries `evidence add --prometheus` runs, each answer read by the reader of saved
#: query_range files: vLLM's counters and histogram parts (sources/bench/aggregates/
#: vllm_metrics_range.py), DCGM's power and energy (sources/power/prometheus_range.py)
QUERIES = {
    "vllm": '{__name__=~"vllm:.+_(total|bucket|count|sum)"}',
    "dcgm": '{__name__=~"DCGM_FI_DEV_POWER_USAGE|DCGM_FI_DEV_POWER_USAGE_INSTANT'
            '|DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"}',
}
#: Prometheus refuses a range query of more than 11,000 points per series
MAX_POINTS = 11_000
#: the most bytes one answer may take (a week of vLLM histograms at 15 s is ~100 MB)
MAX_BYTES = 256 * 1024 * 1024


def step_s(start: float, end: float, step: float | None = None) -> float:
    """The query's resolution: `step`, or the finest (1 s at least) within MAX_POINTS; a step
    giving more points than Prometheus takes is a ValueError."""
    if not (math.isfinite(start) and math.isfinite(end) and end > start):
        raise ValueError("the query window's end must be after its start")
    finest = max(1.0, math.ceil((end - start) / (MAX_POINTS - 1)))
    if step is None:
        return finest
    if not (math.isfinite(step) and step > 0) or (end - start) / step > MAX_POINTS - 1:
        raise ValueError(f"a step of {step:g} s gives more than {MAX_POINTS} points over the "
                         f"window: {finest:g} s or more")
    return step


def query_range(base_url: str, name: str, start: float, end: float, step: float, *,
                session: requests.Session | None = None,
                policy: FetchPolicy | None = None) -> bytes:
    """The answer of `QUERIES[name]` over [start, end] (unix s) from the Prometheus at
    `base_url` (its /api/v1/query_range), by sources.http.fetch: bounded (deadline, retries,
    MAX_BYTES), the token of TOKEN_ENV sent and redacted; a FetchError names the URL."""
    chosen = policy or DEFAULT_POLICY
    if chosen.max_bytes > MAX_BYTES:
        chosen = replace(chosen, max_bytes=MAX_BYTES)
    token = os.environ.get(TOKEN_ENV)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    params = {"query": QUERIES[name], "start": f"{start:.3f}", "end": f"{end:.3f}",
              "step": f"{step:g}s"}
    got = fetch(session or requests.Session(), base_url.rstrip("/") + "/api/v1/query_range",
                source="prometheus", params=params, headers=headers,
                secret_headers=("Authorization",), policy=chosen)
    return got.data


def has_series(data: bytes) -> bool:
    """Whether an answer holds any series (an empty matrix: no such metric in the window)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return True  # the reader names what is wrong with it
    body = doc.get("data") if isinstance(doc, dict) else None
    return not (isinstance(body, dict) and body.get("result") == [])
